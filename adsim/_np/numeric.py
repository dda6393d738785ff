"""Statistics and calculus on active arrays, composed of recorded ops:
var, std, ptp, cov, corrcoef, cumprod, diff (with prepend/append),
gradient, trapezoid, polyval, polyadd, polysub, polymul, vander, convolve,
correlate."""
import warnings

import numpy as np

from .._active import Active
from .core import (as_active, axes_of, float64_only, normalize_axis, reject_kwargs, shape_of,
                   tape_of)
from .integers import plain_value
from .joins import sequence_function
from .reductions import amax, amin, mean as reduce_mean, sum as reduce_sum
from .views import getitem
from . import layout

_concatenate = sequence_function(np.concatenate)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    reject_kwargs("var", out=out, where=where)
    float64_only("var", dtype)
    ddof = ddof if correction is None else correction
    a = as_active(tape_of(a, mean), a)
    m = reduce_mean(a, axis=axis, keepdims=True) if mean is None else mean
    d = a - m
    count = np.prod([a.shape[i] for i in _axes(axis, a.ndim)], dtype=float)
    return reduce_sum(d * d, axis=axis, keepdims=keepdims) / max(count - ddof, 0.0)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    v = var(a, axis=axis, out=out, ddof=ddof, keepdims=keepdims, where=where, mean=mean,
            correction=correction)
    count = np.prod([np.shape(a)[i] for i in _axes(axis, np.ndim(a))], dtype=float)
    if count == 1 and mean is None and (ddof if correction is None else correction) == 0:
        return v        # one value: identically 0, and so is its derivative (sqrt would say inf)
    return np.sqrt(v)


def ptp(a, axis=None, out=None, keepdims=False):
    reject_kwargs("ptp", out=out)
    return amax(a, axis=axis, keepdims=keepdims) - amin(a, axis=axis, keepdims=keepdims)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """NumPy's covariance estimate (weights, ddof, bias, rowvar), written with
    np.average and a product; observation weights may be active."""
    float64_only("cov", dtype)
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    X = _observations(m, rowvar)
    if y is not None:
        X = np.concatenate([X, _observations(y, rowvar)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        fw = np.asarray(plain_value(fweights, "fweights of np.cov"))
        if not np.all(fw == np.around(fw)):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1 or fw.shape[0] != X.shape[1] or np.any(fw < 0):
            raise ValueError("fweights must be a 1-d array of non-negative integers, one per "
                             "observation")
        w = fw.astype(float)
    if aweights is not None:
        if len(shape_of(aweights)) > 1 or shape_of(aweights)[0] != X.shape[1]:
            raise ValueError("aweights must be a 1-d array, one weight per observation")
        w = aweights if w is None else w * aweights
    avg, w_sum = np.average(X, axis=1, weights=w, returned=True)
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum[0]
    elif aweights is None:
        fact = w_sum[0] - ddof
    else:
        fact = w_sum[0] - ddof * np.sum(w * aweights) / w_sum[0]
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0.0
    X = X - avg[:, None]
    c = X @ (X if w is None else X * w).T
    return np.squeeze(c * np.true_divide(1.0, fact))


def _observations(m, rowvar):
    """np.cov's variables as rows."""
    if len(shape_of(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    X = np.atleast_2d(m)
    return X.T if not rowvar and shape_of(X)[0] != 1 else X


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        return c / c
    s = np.sqrt(np.diag(c))
    r = c / s[:, None] / s[None, :]
    # NumPy clips to [-1, 1]; the diagonal is 1 (NaN for a constant
    # variable) up to rounding, so a recorded clip there would sit on its
    # bound and a replay could take the other side: it is 1, derivative 0
    diagonal = np.eye(shape_of(r)[0], dtype=bool)
    return np.where(diagonal, np.where(r != r, r, 1.0),
                    np.clip(np.where(diagonal, 0.0, r), -1.0, 1.0))


def _axes(axis, ndim):
    return axes_of(tuple(np.atleast_1d(axis).tolist()) if axis is not None else None, ndim)


def _along(a, axis, index):
    key = [slice(None)] * a.ndim
    key[axis] = index
    return getitem(a, tuple(key))


def cumprod(a, axis=None, dtype=None, out=None):
    """Running products along an axis, one multiplication per position
    (exact derivatives at zeros, unlike exp(cumsum(log)))."""
    reject_kwargs("cumprod", out=out)
    float64_only("cumprod", dtype)
    if axis is None or a.ndim == 0:          # a 0-d array runs along its one value
        a, axis = a.reshape(-1), 0 if axis is None else axis
    axis = normalize_axis(axis, a.ndim)
    if a.shape[axis] == 0:
        return a * 1.0
    acc = [_along(a, axis, 0)]
    for k in range(1, a.shape[axis]):
        acc.append(acc[-1] * _along(a, axis, k))
    return layout.elementwise(np.stack(acc, axis=axis), a)       # a's layout, as NumPy's


def cumulative(running, identity):
    """NumPy 2's cumulative_sum / cumulative_prod: ``running`` (cumsum,
    cumprod) along an axis that must be given for n-d arrays, optionally
    starting from the identity."""
    def call(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        reject_kwargs("cumulative", out=out)
        float64_only("cumulative", dtype)
        ndim = len(shape_of(x))
        if axis is None:
            if ndim > 1:
                raise ValueError("axis must be specified for multi-dimensional arrays.")
            axis = 0
        y = running(x, axis=axis)
        if not include_initial:
            return y
        shape = list(shape_of(y))
        shape[normalize_axis(axis, ndim)] = 1
        return _concatenate([np.full(shape, identity), y], axis=axis)
    return call


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """n-th differences along ``axis`` (NumPy's, with prepend/append)."""
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    a = as_active(tape_of(a, *(v for v in (prepend, append) if isinstance(v, Active))), a) \
        if not isinstance(a, Active) else a
    axis = normalize_axis(axis, a.ndim)
    pieces = []
    for extra in (prepend,):
        if extra is not np._NoValue:
            pieces.append(_edge(extra, a, axis))
    pieces.append(a)
    if append is not np._NoValue:
        pieces.append(_edge(append, a, axis))
    if len(pieces) > 1:
        a = _concatenate(pieces, axis=axis)
    for _ in range(n):
        m = a.shape[axis]
        a = _along(a, axis, slice(1, max(m, 1))) - _along(a, axis, slice(0, max(m - 1, 0)))
    return a


def _edge(v, a, axis):
    """A prepend/append value broadcast to one slice of ``a`` along ``axis``."""
    shape = list(a.shape)
    shape[axis] = 1
    if np.ndim(v) == 0 and not isinstance(v, Active):
        return np.full(shape, float(v))
    if isinstance(v, Active) and v.ndim == 0:
        return np.broadcast_to(v, tuple(shape)) * 1.0
    return v


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = as_active(tape_of(*(v for v in (y, x) if isinstance(v, Active))), y)
    axis = normalize_axis(axis, y.ndim)
    if x is None:
        d = dx
    else:
        along = -1 if np.ndim(x) == 1 else axis
        d = diff(x, axis=along) if isinstance(x, Active) else np.diff(np.asarray(x, float), axis=along)
        if np.ndim(d) == 1 and y.ndim > 1:
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
    m = y.shape[axis]
    mid = (_along(y, axis, slice(1, m)) + _along(y, axis, slice(0, max(m - 1, 0)))) * 0.5
    return reduce_sum(d * mid, axis=axis)


def polyval(p, x):
    """Horner's scheme; p (an array, or a list of numbers and active
    scalars) and x may each be active."""
    if isinstance(p, np.poly1d):
        p = p.coeffs
    if isinstance(p, Active):
        coeffs = [p[i] for i in range(len(p))]
    elif isinstance(p, (list, tuple)):
        coeffs = [c if isinstance(c, Active) else float(c) for c in p]
    else:
        coeffs = list(np.asarray(p))
    if not coeffs:
        return x * 0.0
    y = coeffs[0] + x * 0.0
    for c in coeffs[1:]:
        y = y * x + c
    return y


def _poly_sum(a1, a2, sign):
    """NumPy's polyadd/polysub: the shorter coefficient array padded with
    leading zeros; a poly1d among the arguments gives a poly1d."""
    poly = isinstance(a1, np.poly1d) or isinstance(a2, np.poly1d)
    a1, a2 = (np.atleast_1d(a.coeffs if isinstance(a, np.poly1d) else a) + 0.0 for a in (a1, a2))
    n1, n2 = shape_of(a1)[0], shape_of(a2)[0]
    a1 = np.pad(a1, (max(n2 - n1, 0), 0))
    a2 = np.pad(a2, (max(n1 - n2, 0), 0))
    out = a1 + a2 if sign > 0 else a1 - a2
    return np.poly1d(out) if poly else out


def polyadd(a1, a2):
    return _poly_sum(a1, a2, 1)


def polysub(a1, a2):
    return _poly_sum(a1, a2, -1)


def polymul(a1, a2):
    """NumPy's polymul: the convolution of the coefficients (leading zeros
    trimmed first, as np.poly1d trims them); a poly1d among the arguments
    gives a poly1d."""
    poly = isinstance(a1, np.poly1d) or isinstance(a2, np.poly1d)
    out = convolve(np.poly1d(a1).coeffs + 0.0, np.poly1d(a2).coeffs + 0.0)
    return np.poly1d(out) if poly else out


def _near_zero(c):
    """NumPy's ``allclose(c, 0, rtol=1e-14)`` of a scalar, |c| <= 1e-8, as a
    recorded comparison of the magnitude (a sign record would fail on
    replay where the cancelled coefficient's rounding changes sign)."""
    if not isinstance(c, Active):
        return bool(np.abs(c) <= 1e-8)
    return bool(np.maximum(c, -c) <= 1e-8)


def polydiv(u, v):
    """NumPy's polydiv: long division, each quotient coefficient the scaled
    leading remainder coefficient, ``r[k:k + n + 1] -= d * v``; then the
    remainder's leading coefficients NumPy finds close to zero
    (``allclose(r[0], 0, rtol=1e-14)``: the m - n + 1 the division cancels,
    and any other, a recorded comparison) dropped. A poly1d among the
    arguments gives poly1ds."""
    poly = isinstance(u, np.poly1d) or isinstance(v, np.poly1d)
    u = np.atleast_1d(u.coeffs if isinstance(u, np.poly1d) else u) + 0.0
    v = np.atleast_1d(v.coeffs if isinstance(v, np.poly1d) else v) + 0.0
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = 1.0 / v[0]
    tape = tape_of(u, v)
    r = as_active(tape, u) * 1.0                # a copy NumPy's steps write into
    pieces = []
    for k in range(m - n + 1):
        d = scale * r[k]
        pieces.append(d)
        r[k:k + n + 1] -= d * v
    q = np.stack(pieces) if pieces else np.zeros(1)
    while _near_zero(r[0]) and shape_of(r)[-1] > 1:
        r = r[1:]
    return (np.poly1d(q), np.poly1d(r)) if poly else (q, r)


def polyder(p, m=1):
    """Coefficients of the m-th derivative, NumPy's: ``p[:-1] * powers``
    once per order (a poly1d's coefficients give a poly1d)."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    if isinstance(p, np.poly1d):
        return np.poly1d(polyder(p.coeffs, m))
    p = p + 0.0
    for _ in range(m):
        p = p[:-1] * np.arange(shape_of(p)[0] - 1, 0, -1.0)   # a constant's: empty, as NumPy's
    return p


def polyint(p, m=1, k=None):
    """Coefficients of the m-th antiderivative with integration constants
    ``k`` (0 by default), NumPy's (a poly1d's coefficients give a poly1d)."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if isinstance(p, np.poly1d):
        return np.poly1d(polyint(p.coeffs, m, k))
    constants = [0.0] * m if k is None else list(np.atleast_1d(k)) if np.ndim(k) else [k] * m
    if len(constants) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = p + 0.0
    for c in constants[:m]:
        n = shape_of(p)[0]
        p = np.concatenate([p / np.arange(n, 0, -1.0), np.reshape(c + p[:1] * 0.0, (1,))])
    return p


def vander(x, N=None, increasing=False):
    """Columns x**0, x**1, ... by repeated multiplication, as NumPy makes
    them (exact derivatives at 0)."""
    if len(shape_of(x)) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0]
    N = n if N is None else int(N)
    columns = [np.ones(n)] if N > 0 else []
    for _ in range(1, N):
        columns.append(x * 1.0 if len(columns) == 1 else columns[-1] * x)
    if not columns:
        return np.zeros((n, 0))
    return np.stack(columns if increasing else columns[::-1], axis=1)


def logaddexp_reduce(a, axis=0, keepdims=False, base_e=True):
    """np.logaddexp.reduce (logaddexp2 with ``base_e`` False): the log of the
    sum of exponentials, shifted by the recorded maximum (NumPy's pairwise
    values to rounding); its derivative is the softmax of ``a``."""
    if 0 in shape_of(a):        # NumPy's identity, -inf, where nothing is summed
        reduce = np.logaddexp.reduce if base_e else np.logaddexp2.reduce
        return reduce(np.zeros(shape_of(a)), axis=axis, keepdims=keepdims)
    scale = 1.0 if base_e else np.log(2.0)
    top = amax(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)      # all -inf (or an inf): NumPy's -inf, inf
    out = top + np.log(reduce_sum(np.exp((a - top) * scale), axis=axis, keepdims=True)) / scale
    if keepdims:
        return out
    return np.squeeze(out, axis=axis) if axis is not None else np.reshape(out, ())


def gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient: second-order central differences inside, first- or
    second-order one-sided at the edges; per axis a scalar spacing or the
    coordinates of the points (NumPy's formulas for uneven steps, its
    scalar one where plain coordinates are evenly spaced; active
    coordinates always take the formula for uneven steps)."""
    axes = list(range(np.ndim(f))) if axis is None else [
        normalize_axis(ax, np.ndim(f)) for ax in np.atleast_1d(axis)]
    spacing = list(varargs) if varargs else [1.0]
    if len(spacing) == 1:
        spacing = spacing * len(axes)
    if len(spacing) != len(axes):
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if not isinstance(f, Active):
        f = as_active(tape_of(*[h for h in spacing if isinstance(h, Active)]), f)
    out = [_gradient_along(f, ax, _steps(h, shape_of(f)[ax]), edge_order)
           for ax, h in zip(axes, spacing)]
    return out[0] if len(out) == 1 else tuple(out)


def _steps(h, m):
    """A scalar spacing, or the steps between the coordinates ``h`` (a
    scalar when plain coordinates are evenly spaced, as NumPy takes them)."""
    if np.ndim(h) == 0:
        return h if isinstance(h, Active) else float(h)
    if np.ndim(h) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if shape_of(h)[0] != m:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if isinstance(h, Active):
        return np.diff(h)
    dx = np.diff(np.asarray(h, dtype=float))
    return float(dx[0]) if np.all(dx == dx[0]) else dx


def _gradient_along(f, axis, h, edge_order):
    m = f.shape[axis]
    if m < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "(edge_order + 1) elements are required.")

    def at(k):
        return _along(f, axis, slice(k, k + 1) if k >= 0 else slice(m + k, m + k + 1))
    if np.ndim(h) == 0:
        inner = (_along(f, axis, slice(2, m)) - _along(f, axis, slice(0, m - 2))) / (2.0 * h)
        if edge_order == 1:
            first = (at(1) - at(0)) / h
            last = (at(-1) - at(-2)) / h
        else:
            first = (-1.5 * at(0) + 2.0 * at(1) - 0.5 * at(2)) / h
            last = (0.5 * at(-3) - 2.0 * at(-2) + 1.5 * at(-1)) / h
    else:
        inner, first, last = _uneven(f, axis, h, at, edge_order)
    # laid out as f, as NumPy's (np.empty_like(f) filled in)
    return layout.elementwise(_concatenate([first, inner, last], axis=axis), f)


def _uneven(f, axis, dx, at, edge_order):
    """NumPy's second-order differences for uneven steps ``dx``: inside,
    a f[i-1] + b f[i] + c f[i+1] with steps hs before and hd after."""
    m = f.shape[axis]
    shape = [1] * f.ndim
    shape[axis] = -1

    def along(c):
        return np.reshape(c, shape)
    hs, hd = dx[:-1], dx[1:]
    a = -hd / (hs * (hd + hs))
    b = (hd - hs) / (hd * hs)
    c = hs / (hd * (hd + hs))
    inner = (along(a) * _along(f, axis, slice(0, m - 2)) + along(b) *
             _along(f, axis, slice(1, m - 1)) + along(c) * _along(f, axis, slice(2, m)))
    if edge_order == 1:
        return inner, (at(1) - at(0)) / dx[0], (at(-1) - at(-2)) / dx[-1]
    h1, h2 = dx[0], dx[1]
    first = (-(2.0 * h1 + h2) / (h1 * (h1 + h2)) * at(0) + (h1 + h2) / (h1 * h2) * at(1)
             - h1 / (h2 * (h1 + h2)) * at(2))
    h1, h2 = dx[-2], dx[-1]
    last = (h2 / (h1 * (h1 + h2)) * at(-3) - (h2 + h1) / (h1 * h2) * at(-2)
            + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * at(-1))
    return inner, first, last



def convolve(a, v, mode="full"):
    """1-d discrete convolution, as a sum over the shorter operand of scaled,
    shifted copies of the longer one (either may be active)."""
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        raise ValueError("object too deep for desired array (np.convolve takes 1-d arrays)")
    n, m = np.shape(a)[0], np.shape(v)[0]
    if n == 0 or m == 0:
        raise ValueError("v cannot be empty" if m == 0 else "a cannot be empty")
    if m > n:
        a, v, n, m = v, a, m, n
    tape = tape_of(a, v)
    a = as_active(tape, a)
    full = None
    for j in range(m):
        term = np.pad(a, (j, m - 1 - j)) * v[j]
        full = term if full is None else full + term
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    if mode == "valid":
        return full[m - 1:n]
    raise ValueError(f"mode must be one of 'valid', 'same' or 'full' (got {mode!r})")


def correlate(a, v, mode="valid"):
    """np.correlate of real arrays: the convolution with ``v`` reversed."""
    if np.shape(v)[0] > np.shape(a)[0]:       # NumPy reverses the output then
        return correlate(v, a, mode)[::-1]
    return convolve(a, v[::-1], mode)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """NumPy's unwrap, step by step: a jump between neighbours of at least
    ``discont`` is brought within half a period by whole periods. The
    corrections are piecewise constant (a remainder, whose derivative in the
    jump is 1, minus the jump), so the derivative passes through unchanged;
    which jumps are corrected is boolean data that replays compute again."""
    ndim = len(shape_of(p))
    axis = normalize_axis(axis, ndim)
    if discont is None:
        discont = period / 2
    high = period / 2
    dd = np.diff(p, axis=axis)
    ddmod = np.mod(dd + high, period) - high
    ddmod = np.where((ddmod == -high) & (dd > 0), high, ddmod)   # NumPy's choice at the boundary
    correction = np.where(np.abs(dd) < discont, 0.0, ddmod - dd)
    first, rest = [slice(None)] * ndim, [slice(None)] * ndim
    first[axis], rest[axis] = slice(0, 1), slice(1, None)
    return np.concatenate([p[tuple(first)], p[tuple(rest)] + np.cumsum(correction, axis=axis)],
                          axis=axis)
