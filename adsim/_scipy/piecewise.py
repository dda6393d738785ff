"""Piecewise polynomials with active coefficients or at active points,
written with recorded NumPy operations: the evaluation every interpolator
of interpolate.py comes to.

A piecewise polynomial is SciPy's ``PPoly`` layout: breaks ``x`` (m + 1,
increasing, plain) and coefficients ``c`` (k + 1, m, *trailing), the
polynomial on piece i being sum_j c[j, i] (t - x[i]) ** (k - j). Values
are linear in ``c``; at a point t the derivative in t is the derivative
of the piece t lies in.

The piece of a point is chosen as SciPy does (recorded, so a replay at a
point in another piece raises BranchChanged and the functional API records
again): ``side="right"`` is PPoly's and BSpline's rule, pieces [x[i],
x[i+1]) with the last one closed, so at an inner break the derivative is
that of the piece on the right; ``side="left"`` is ``interp1d``'s linear
rule, pieces (x[i], x[i+1]] with the first one closed, the piece on the
left. Points outside [x[0], x[-1]] use the end pieces (extrapolation) or
give NaN, as asked.
"""
import numpy as np
import scipy.interpolate as si
from scipy.special import poch

from .._active import Active
from ..errors import UnsupportedOperation


def piece(breaks, t, side="right"):
    """Index of the piece of each point of ``t`` (recorded integer data for
    an active ``t``)."""
    m = len(breaks) - 1
    return np.clip(np.searchsorted(breaks, t, side=side) - 1, 0, m - 1)


def derivative_coefficients(c, nu):
    """Coefficients of the ``nu``-th derivative (degree k - nu; a zero
    constant once nu > k)."""
    if nu == 0:
        return c
    order = c.shape[0]
    if nu >= order:
        return 0.0 * c[:1]
    factor = poch(np.arange(order - nu, 0, -1), nu)
    return c[:order - nu] * factor.reshape((-1,) + (1,) * (np.ndim(c) - 1))


def antiderivative_coefficients(c, breaks, nu=1):
    """Coefficients of the ``nu``-th antiderivative that is 0 at breaks[0]
    and continuous at every break (SciPy's PPoly.antiderivative)."""
    for _ in range(nu):
        order = c.shape[0]
        trailing = (1,) * (np.ndim(c) - 2)
        raised = c / np.arange(order, 0, -1).reshape((-1, 1) + trailing)
        h = np.diff(breaks).reshape((-1,) + trailing)
        powers = h[None] ** np.arange(order, 0, -1).reshape((-1, 1) + trailing)
        piece_integrals = np.sum(raised * powers, axis=0)
        start = np.cumsum(piece_integrals, axis=0)[:-1]
        constant = np.concatenate([0.0 * piece_integrals[:1], start], axis=0)
        c = np.concatenate([raised, constant[None]], axis=0)
    return c


def evaluate(c, breaks, t, nu=0, extrapolate=True, side="right", bounds=None):
    """Values (or the ``nu``-th derivative; an antiderivative for nu < 0) at
    the points ``t``, shaped t.shape + c.shape[2:]. ``extrapolate``: True,
    False (NaN outside ``bounds``, default the first and last break) or
    "periodic" (t mapped into the bounds first)."""
    breaks = np.asarray(breaks, dtype=float)
    lo, hi = bounds if bounds is not None else (breaks[0], breaks[-1])
    if extrapolate == "periodic":
        t = lo + np.mod(t - lo, hi - lo)
        extrapolate = False
    c = derivative_coefficients(c, nu) if nu >= 0 else \
        antiderivative_coefficients(c, breaks, -nu)
    shape = np.shape(t)
    flat = np.reshape(t, (-1,))
    i = piece(breaks, flat, side)
    trailing = (1,) * (np.ndim(c) - 2)
    offset = np.reshape(flat - breaks[i], (-1,) + trailing)
    ci = c[:, i]
    out = ci[0]
    for j in range(1, c.shape[0]):
        out = out * offset + ci[j]
    if not extrapolate:
        inside = np.reshape((flat >= lo) & (flat <= hi), (-1,) + trailing)
        out = np.where(inside, out, np.nan)
    return np.reshape(out, shape + tuple(np.shape(c)[2:]))


def to_axis(out, x_ndim, axis):
    """Values shaped x.shape + trailing, with x's axes moved to ``axis`` (as
    PPoly and BSpline return them)."""
    if axis == 0:
        return out
    order = list(range(np.ndim(out)))
    order = order[x_ndim:x_ndim + axis] + order[:x_ndim] + order[x_ndim + axis:]
    return np.transpose(out, order)


def integral(c, breaks, a, b, extrapolate=True):
    """int_a^b of the piecewise polynomial (SciPy's PPoly.integrate rule:
    without extrapolation, NaN when a bound is outside the breaks)."""
    if extrapolate == "periodic":
        raise UnsupportedOperation("adsim: PPoly.integrate with periodic extrapolation and "
                                   "active coefficients or bounds is not supported; integrate "
                                   "over whole periods plus a remainder by hand")
    anti = antiderivative_coefficients(c, breaks, 1)
    return (evaluate(anti, breaks, b, extrapolate=extrapolate)
            - evaluate(anti, breaks, a, extrapolate=extrapolate))


def bspline_basis(t, k, n_coefficients):
    """The PPoly coefficients (k + 1, len(t) - 1, n) of the n B-splines of
    knots ``t``, each alone (dense: for the small bases of grids)."""
    columns = [si.PPoly.from_spline(si.BSpline(t, unit, k)).c for unit in np.eye(n_coefficients)]
    return np.stack(columns, axis=-1)


def bspline_pieces(t, k, c):
    """(breaks, PPoly coefficients (k + 1, pieces, *trailing)) of the
    B-spline (t, c, k) on its base interval t[k] .. t[n], where BSpline
    evaluates (and extrapolates from the end pieces): SciPy's
    ``PPoly.from_spline`` for plain c; for active c the same linear map,
    recorded. On base piece i only the B-splines i - k .. i are nonzero,
    one of each residue mod k + 1, so k + 1 conversions of the sums of the
    B-splines of one residue give every piece's map (O(n), not a dense
    n-column basis)."""
    t = np.asarray(t, dtype=float)
    n = t.size - k - 1                 # (c may be longer: FITPACK pads it to len(t))
    base = slice(k, n)
    if not isinstance(c, Active):
        flat = np.reshape(np.asarray(c, dtype=float), (np.shape(c)[0], -1))
        pp = [si.PPoly.from_spline(si.BSpline(t, flat[:, j], k)).c[:, base]
              for j in range(flat.shape[1])]
        return t[k:n + 1], np.reshape(np.stack(pp, axis=-1), pp[0].shape + np.shape(c)[1:])
    pieces = np.arange(k, n)
    trailing = (1,) * (np.ndim(c) - 1)
    total = 0.0
    for r in range(k + 1):
        residue = (np.arange(n) % (k + 1) == r).astype(float)
        local = si.PPoly.from_spline(si.BSpline(t, residue, k)).c[:, base]
        j = pieces - ((pieces - r) % (k + 1))          # the B-spline of residue r on piece i
        total = total + local.reshape(local.shape + trailing) * c[j][None]
    return t[k:n + 1], total
