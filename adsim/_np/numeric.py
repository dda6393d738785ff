"""Statistics and calculus on active arrays, composed of recorded ops:
var, std, cumprod, diff (with prepend/append), gradient, trapezoid, polyval."""
import numpy as np

from .._tape import Active
from ..errors import UnsupportedOperation
from .core import as_active, float64_only, normalize_axis, reject_kwargs, tape_of
from .joins import sequence_function
from .reductions import mean as reduce_mean, sum as reduce_sum
from .views import getitem

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
    return np.sqrt(var(a, axis=axis, out=out, ddof=ddof, keepdims=keepdims, where=where,
                       mean=mean, correction=correction))


def _axes(axis, ndim):
    if axis is None:
        return range(ndim)
    return [normalize_axis(ax, ndim) for ax in np.atleast_1d(axis)]


def _along(a, axis, index):
    key = [slice(None)] * a.ndim
    key[axis] = index
    return getitem(a, tuple(key))


def cumprod(a, axis=None, dtype=None, out=None):
    """Running products along an axis, one multiplication per position
    (exact derivatives at zeros, unlike exp(cumsum(log)))."""
    reject_kwargs("cumprod", out=out)
    float64_only("cumprod", dtype)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis(axis, a.ndim)
    if a.shape[axis] == 0:
        return a * 1.0
    acc = [_along(a, axis, 0)]
    for k in range(1, a.shape[axis]):
        acc.append(acc[-1] * _along(a, axis, k))
    return np.stack(acc, axis=axis)


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
    """Horner's scheme; p and x may each be active."""
    if isinstance(p, np.poly1d):
        p = p.coeffs
    coeffs = [p[i] for i in range(len(p))] if isinstance(p, Active) else list(np.asarray(p))
    if not coeffs:
        return x * 0.0
    y = coeffs[0] + x * 0.0
    for c in coeffs[1:]:
        y = y * x + c
    return y


def gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient for uniform spacings (scalars): second-order central
    differences inside, first- or second-order one-sided at the edges."""
    axes = list(range(f.ndim)) if axis is None else [normalize_axis(ax, f.ndim) for ax in
                                                      np.atleast_1d(axis)]
    spacing = list(varargs) if varargs else [1.0]
    if len(spacing) == 1:
        spacing = spacing * len(axes)
    if len(spacing) != len(axes) or any(np.ndim(h) != 0 for h in spacing):
        raise UnsupportedOperation("adsim: np.gradient with coordinate arrays is not supported; "
                                   "pass one scalar spacing per axis")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    out = [_gradient_along(f, ax, float(h), edge_order) for ax, h in zip(axes, spacing)]
    return out[0] if len(out) == 1 else tuple(out)


def _gradient_along(f, axis, h, edge_order):
    m = f.shape[axis]
    if m < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "(edge_order + 1) elements are required.")

    def at(k):
        return _along(f, axis, slice(k, k + 1) if k >= 0 else slice(m + k, m + k + 1))
    inner = (_along(f, axis, slice(2, m)) - _along(f, axis, slice(0, m - 2))) / (2.0 * h)
    if edge_order == 1:
        first = (at(1) - at(0)) / h
        last = (at(-1) - at(-2)) / h
    else:
        first = (-1.5 * at(0) + 2.0 * at(1) - 0.5 * at(2)) / h
        last = (0.5 * at(-3) - 2.0 * at(-2) + 1.5 * at(-1)) / h
    return _concatenate([first, inner, last], axis=axis)



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
