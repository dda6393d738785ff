"""Polynomials of active values: np.polyfit, NumPy's algorithm written
with the functions adsim records (a Vandermonde matrix, column scaling,
np.linalg.lstsq), so its values are NumPy's and its derivatives, in y, in x
and in the weights, are those of the least-squares solution (adsim's lstsq
rule; a rank-deficient fit has none and raises UndefinedDerivative); and
np.roots, one primitive whose rules are the implicit function theorem."""
import warnings

import numpy as np

from ..errors import UndefinedDerivative
from ..primitives import primitive
from . import complex as complex_
from .core import shape_of


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    order = int(deg) + 1
    # np.polyfit takes sequences too (this runs when one of x, y, w is active)
    x, y = (np.stack(v) if isinstance(v, (list, tuple)) else v for v in (x, y))
    x, y = x + 0.0, y + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(shape_of(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(shape_of(y)) not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = shape_of(x)[0] * np.finfo(np.float64).eps
    lhs, rhs = np.vander(x, order), y
    if w is not None:
        w = (np.stack(w) if isinstance(w, (list, tuple)) else w) + 0.0
        if len(shape_of(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if len(shape_of(rhs)) == 2 else w)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=3)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = np.linalg.inv(np.dot(lhs.T, lhs)) / np.outer(scale, scale)
    if cov == "unscaled":
        fac = 1.0
    else:
        if shape_of(x)[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (shape_of(x)[0] - order)
    return c, (base * fac if len(shape_of(y)) == 1 else base[:, :, None] * fac)


# ---- roots -----------------------------------------------------------------------
#
# The roots r_j of p(z) = sum_k p_k z^(n-1-k) move with the coefficients as
# the implicit function theorem says, dr_j = -(sum_k dp_k r_j^(n-1-k)) / p'(r_j),
# wherever r_j is a simple root. The rules are written in real arithmetic on
# the pairs (Re r, Im r) with functions adsim records, so second-order sweeps
# differentiate them again.

_CLOSE = 1e-7       # roots closer than this (relative) count as repeated


def _powers(re, im, n):
    """(Re, Im) of r_j^m for m = 0 .. n-1, shaped (roots, n)."""
    cols_re, cols_im = [re * 0.0 + 1.0], [im * 0.0]
    for _ in range(n - 1):
        a, b = cols_re[-1], cols_im[-1]
        cols_re.append(a * re - b * im)
        cols_im.append(a * im + b * re)
    return np.stack(cols_re, axis=1), np.stack(cols_im, axis=1)


def _inverse_slopes(p, re, im):
    """(Re, Im) of -1 / p'(r_j), and the powers of the roots."""
    n = shape_of(p)[0]
    vr, vi = _powers(re, im, n)
    ascending = p[::-1]
    slope = ascending[1:] * np.arange(1.0, n)          # p'(z) = sum_m m a_m z^(m-1)
    dr, di = vr[:, :n - 1] @ slope, vi[:, :n - 1] @ slope
    size = dr * dr + di * di
    return -dr / size, di / size, vr, vi


def _roots_value(p):
    r = np.roots(p)
    m = r.size
    if m > 1:
        gaps = np.abs(r[:, None] - r[None, :])
        np.fill_diagonal(gaps, np.inf)
        if np.min(gaps) <= _CLOSE * max(1.0, float(np.max(np.abs(r)))):
            raise UndefinedDerivative(
                f"adsim: np.roots at a repeated root ({r[np.argmin(np.min(gaps, axis=1))]:.6g}): "
                f"the roots are not differentiable in the coefficients there (they move as "
                f"a square root, or faster); move the coefficients, or differentiate a "
                f"symmetric function of the roots (their sum is -p[1]/p[0])")
    return np.concatenate([r.real, r.imag]).astype(float)


def _roots_jvp(args, out, tangents):
    p, dp = args[0], tangents[0]
    m = shape_of(out)[0] // 2
    qr, qi, vr, vi = _inverse_slopes(p, out[:m], out[m:])
    da = dp[::-1]
    nr, ni = vr @ da, vi @ da
    return np.concatenate([qr * nr - qi * ni, qr * ni + qi * nr])


def _roots_vjp(args, out, w):
    p = args[0]
    m = shape_of(out)[0] // 2
    qr, qi, vr, vi = _inverse_slopes(p, out[:m], out[m:])
    wr, wi = w[:m], w[m:]
    abar = (wr * qr + wi * qi) @ vr + (wi * qr - wr * qi) @ vi
    return (abar[::-1],)


_roots = primitive(_roots_value, jvp=_roots_jvp, vjp=_roots_vjp, name="numpy.roots")


def roots(p):
    """np.roots of active coefficients: NumPy's roots (of the companion
    matrix), in NumPy's order, real where NumPy's are real; whether each root
    is real is a recorded comparison, and so is which coefficients are 0."""
    p = np.atleast_1d(p)
    if len(shape_of(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    zero = np.asarray(p == 0.0)                 # recorded: replays check it
    if zero.all():
        return np.array([])
    if zero[0]:
        raise UndefinedDerivative(
            "adsim: np.roots of active coefficients whose leading coefficient is 0: the "
            "number of roots changes with it, so the roots have no derivative; drop the "
            "leading zeros (p[1:]) when they are zero by construction")
    if shape_of(p)[0] < 2:
        return np.zeros(0)
    out = _roots(p)
    m = shape_of(out)[0] // 2
    re, im = out[:m], out[m:]
    if np.asarray(im != 0.0).any():             # recorded per root
        return complex_.make(re, im, (m,))
    return re

