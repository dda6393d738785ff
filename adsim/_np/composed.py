"""NumPy functions written with other NumPy functions on active arrays:
each calls NumPy's public API, which dispatches back to adsim, so its
derivative is that of the composition (exact, every mode) and it needs no
rule of its own: average, cross, ediff1d, heaviside,
fmax, fmin, take_along_axis, meshgrid, logspace, geomspace, linspace, arange,
isclose, allclose."""
import warnings

import numpy as np

from ..errors import UnsupportedOperation
from .._active import Active
from .core import (active_leaves, as_active, normalize_axis, reject_kwargs, shape_of,
                   tape_of)
from . import layout
from .recorded_arrays import BoolArray


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    if weights is None:
        avg = np.mean(a, axis=axis, keepdims=keepdims)
        count = np.size(a) / max(np.size(avg), 1)
        return (avg, np.full(np.shape(avg), count)) if returned else avg
    w = weights
    if shape_of(w) != shape_of(a):
        if axis is None or len(shape_of(w)) != 1 or isinstance(axis, tuple):
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        shape = [1] * len(shape_of(a))
        shape[axis] = shape_of(w)[0]
        w = np.reshape(w, shape)
    total = np.sum(w * np.ones(shape_of(a)), axis=axis, keepdims=keepdims)
    avg = np.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=3)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    a2 = a[..., 2] if na == 3 else 0.0 * a0
    b2 = b[..., 2] if nb == 3 else 0.0 * b0
    c = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return np.moveaxis(layout.in_order(c, "C"), -1, axisc)      # NumPy's is made in C order


def ediff1d(ary, to_end=None, to_begin=None):
    d = np.diff(np.ravel(ary))
    pieces = [np.ravel(p) for p in (to_begin,) if p is not None] + [d] + \
        [np.ravel(p) for p in (to_end,) if p is not None]
    return np.concatenate(pieces) if len(pieces) > 1 else d


def heaviside(x1, x2, out=None):
    """0 for x1 < 0, x2 at 0, 1 above (a recorded side, derivative 0 in x1)."""
    reject_kwargs("heaviside", out=out)
    return np.where(x1 < 0, 0.0, np.where(x1 > 0, 1.0, x2))


def fmax(x1, x2, out=None):
    """The larger, ignoring NaN (NaN only where both are NaN)."""
    reject_kwargs("fmax", out=out)
    return np.where(np.isnan(x2), x1, np.where(np.isnan(x1), x2, np.maximum(x1, x2)))


def fmin(x1, x2, out=None):
    reject_kwargs("fmin", out=out)
    return np.where(np.isnan(x2), x1, np.where(np.isnan(x1), x2, np.minimum(x1, x2)))


def take_along_axis(arr, indices, axis=-1):
    if axis is None:
        arr, axis = np.ravel(arr), 0
    ndim = len(shape_of(arr))
    axis = normalize_axis(axis, ndim)             # NumPy's AxisError, not a wrapped axis
    idx = np.asarray(indices)
    if idx.ndim != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    key = []
    for d in range(ndim):
        if d == axis:
            key.append(idx)
        else:
            shape = [1] * ndim
            shape[d] = shape_of(arr)[d]
            key.append(np.arange(shape_of(arr)[d]).reshape(shape))
    return arr[tuple(key)]


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    grids = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        grids.append(np.reshape(x, shape))
    if indexing == "xy" and ndim > 1:
        for i, g in enumerate(grids):
            grids[i] = np.swapaxes(g, 0, 1) if np.ndim(g) > 1 else g
    if sparse:
        return tuple(grids)
    full = np.broadcast_shapes(*[shape_of(g) for g in grids])
    return tuple(np.broadcast_to(g, full) * 1.0 for g in grids)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop): scalar endpoints or base, each may be active."""
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise UnsupportedOperation("adsim: numpy.logspace with a dtype other than float64 is "
                                   "not supported on active values")
    return np.power(base, linspace(start, stop, num, endpoint, axis=axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """NumPy's construction on scalar endpoints, each may be active: both
    divided by the sign of ``start``, a logspace of their base-10
    logarithms, the endpoints themselves at the ends, times the sign again
    (endpoints of opposite signs give NaN inside, as NumPy's)."""
    if np.ndim(start) or np.ndim(stop):
        raise UnsupportedOperation("adsim: numpy.geomspace with active array endpoints is not "
                                   "supported; use scalar endpoints")
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise UnsupportedOperation("adsim: numpy.geomspace with a dtype other than float64 is "
                                   "not supported on active values")
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    sign = np.sign(start)
    first, last = start / sign, stop / sign
    with np.errstate(invalid="ignore"):                 # opposite signs: NaN inside
        y = logspace(np.log10(first), np.log10(last), num, endpoint, axis=axis)
    num = int(num)
    if num > 0:                         # the endpoints exactly, as NumPy's
        inner = y[1:-1] if endpoint and num > 1 else y[1:]
        ends = [np.reshape(last * 1.0, (1,))] if endpoint and num > 1 else []
        y = np.concatenate([np.reshape(first * 1.0, (1,)), inner] + ends)
    return y * sign


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    if np.ndim(start) or np.ndim(stop):
        raise UnsupportedOperation("adsim: numpy.linspace with active array endpoints is not "
                                   "supported; use scalar endpoints, or start + (stop - start) "
                                   "* np.linspace(0, 1, num)[:, None]")
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    unit = np.arange(num, dtype=float)
    span = stop - start
    step = span / div if div > 0 else span * np.nan
    y = start + unit * step if div > 0 else start + unit * span
    if endpoint and num > 1:            # the last sample is stop exactly, as NumPy's
        y = np.concatenate([y[:-1], np.reshape(stop * 1.0, (1,))])
    if dtype is not None and np.dtype(dtype) != np.float64:
        y = y.astype(dtype)
    return (y, step) if retstep else y


def arange(start, stop=None, step=None, dtype=None, **kwargs):
    """Values start, start + step, ... below stop, with active endpoints or
    step: the count is a guarded integer (a replay where it differs records
    again), the values follow the endpoints."""
    if stop is None:
        start, stop = 0.0, start
    step = 1.0 if step is None else step
    count = np.ceil((stop - start) / step)
    n = max(int(count), 0)
    y = start + step * np.arange(n, dtype=float)
    if dtype is not None and np.dtype(dtype) != np.float64:
        y = y.astype(dtype)
    return y


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's test, on recorded comparisons (plain booleans, checked on replay)."""
    close = (np.abs(a - b) <= atol + rtol * np.abs(b)) | (a == b)
    if equal_nan:
        close = close | (np.isnan(a) & np.isnan(b))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """NumPy's test: the same shape and equal elements, on recorded
    comparisons (a plain bool, checked on replay)."""
    if shape_of(a1) != shape_of(a2):
        return False
    equal = a1 == a2
    if equal_nan:
        equal = equal | (np.isnan(a1) & np.isnan(a2))
    return bool(np.all(equal))


def array_equiv(a1, a2):
    """NumPy's test: shapes that broadcast together and equal elements."""
    try:
        np.broadcast_shapes(shape_of(a1), shape_of(a2))
    except ValueError:
        return False
    return bool(np.all(a1 == a2))


def piecewise(x, condlist, funclist, *args, **kw):
    """NumPy's piecewise: zeros, then for each condition (plain booleans,
    e.g. recorded comparisons) the function of the selected elements, or a
    value, written there; a missing last condition is "none of the others"."""
    n_functions = len(funclist)
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray, BoolArray))
                                 and len(shape_of(x)) != 0):
        condlist = [condlist]
    condlist = np.asarray(condlist, dtype=bool)
    n = len(condlist)
    if n == n_functions - 1:
        condlist = np.concatenate([condlist, ~np.any(condlist, axis=0, keepdims=True)], axis=0)
    elif n != n_functions:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    written = []
    for cond, func in zip(condlist, funclist):
        if not callable(func):
            written.append((cond, func))
        else:
            vals = x[cond]
            if np.size(vals) > 0:
                written.append((cond, func(vals, *args, **kw)))
    y = np.zeros_like(x)
    actives = active_leaves([v for _, v in written])
    if actives and not isinstance(y, Active):       # a plain x, functions of active values
        y = as_active(tape_of(*actives), np.asarray(y, dtype=float))
    for cond, value in written:
        y[cond] = value
    return y
