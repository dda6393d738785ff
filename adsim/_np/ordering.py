"""Orderings of active values: sort, argsort, searchsorted, digitize, interp.

Which permutation sorts x, or which interval of a table holds x, is
piecewise constant in x, so it is a guarded plain array (adsim/_np/integers.py
explains guards): a sort records that its result is non-decreasing, a search
records the interval each value lies in. A replay where either differs
raises BranchChanged.
"""
import numpy as np

from .._tape import Active, CompareKind
from ..errors import UnsupportedOperation
from .core import as_active, constant, gather, normalize_axis, record_compare, tape_of
from .integers import _up, current, guard
from .views import getitem


def _sorted_along(a, axis, kind):
    """(sorted values, permutation indices along axis), with the guard that
    neighbours stay in order."""
    axis = normalize_axis(axis, a.ndim)
    order = np.argsort(current(a), axis=axis, kind="stable")
    positions = np.take_along_axis(np.arange(a.size).reshape(a.shape), order, axis=axis)
    out = gather(a, positions)
    m = a.shape[axis]
    if m > 1:
        lo = [slice(None)] * a.ndim
        hi = [slice(None)] * a.ndim
        lo[axis], hi[axis] = slice(0, m - 1), slice(1, m)
        left, right = getitem(out, tuple(lo)), getitem(out, tuple(hi))
        record_compare(tape_of(a), CompareKind.CMP_LE, left.slot, right.slot, left.shape)
    return out, order


def sort(a, axis=-1, kind=None, order=None, stable=None):
    if order is not None:
        raise UnsupportedOperation("adsim: np.sort with order= (structured arrays) is not supported")
    if axis is None:
        a, axis = a.reshape(-1), 0
    return _sorted_along(a, axis, kind)[0]


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    if axis is None:
        a, axis = a.reshape(-1), 0
    return _sorted_along(a, axis, kind)[1]


def searchsorted(a, v, side="left", sorter=None):
    """Positions of active values ``v`` in a plain sorted array ``a``."""
    if isinstance(a, Active) or sorter is not None:
        raise UnsupportedOperation("adsim: np.searchsorted needs a plain sorted array (no sorter); "
                                   "the values searched for may be active")
    table = np.asarray(a, dtype=float)
    values = current(v)
    idx = np.searchsorted(table, values, side=side)
    below = np.concatenate([[-np.inf], table])[idx]
    above = np.concatenate([table, [np.inf]])[idx]
    if side == "left":              # table[i-1] < v <= table[i]
        guard(v, _up(below), _up(above))
    else:                           # table[i-1] <= v < table[i]
        guard(v, below, above)
    return idx


def digitize(x, bins, right=False):
    bins = np.asarray(bins, dtype=float)
    if bins.size > 1 and bins[0] > bins[-1]:
        raise UnsupportedOperation("adsim: np.digitize with decreasing bins is not supported; "
                                   "reverse them")
    return searchsorted(bins, x, side="left" if right else "right")


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation at active points ``x`` in a plain table
    ``xp`` (increasing) of plain or active values ``fp``."""
    if isinstance(xp, Active) or period is not None:
        raise UnsupportedOperation("adsim: np.interp needs plain, increasing xp (no period); x "
                                   "and fp may be active")
    xp = np.asarray(xp, dtype=float)
    tape = tape_of(x, fp, left, right)
    x = as_active(tape, x)
    fp = fp if isinstance(fp, Active) else constant(fp)
    n = xp.size
    cell = np.clip(searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
    f0 = getitem(fp, cell) if isinstance(fp, Active) else fp[cell]
    f1 = getitem(fp, np.minimum(cell + 1, n - 1)) if isinstance(fp, Active) \
        else fp[np.minimum(cell + 1, n - 1)]
    width = np.where(n > 1, xp[np.minimum(cell + 1, n - 1)] - xp[cell], 1.0)
    width = np.where(width == 0, 1.0, width)
    inside = f0 + (x - xp[cell]) / width * (f1 - f0)
    first = fp[0] if left is None else left
    last = fp[n - 1] if right is None else right
    low, high = x < xp[0], x > xp[-1]            # recorded comparisons
    return np.where(low, first, np.where(high, last, inside))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """Quantiles by NumPy's default (linear) method: the sorted values at
    (n - 1) q, interpolated; which values those are is a guarded order."""
    if method != "linear" or out is not None:
        raise UnsupportedOperation("adsim: np.quantile/np.percentile are recorded with "
                                   "method='linear' and no out=")
    qs = np.asarray(q, dtype=float)
    if np.any(qs < 0) or np.any(qs > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if axis is None:
        s, ax = sort(a.reshape(-1)), 0
    else:
        ax = normalize_axis(axis, a.ndim)
        s = sort(a, axis=ax)
    n = s.shape[ax]
    h = (n - 1) * qs
    lo = np.floor(h).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    frac = h - lo

    def take(k):
        key = [slice(None)] * s.ndim
        key[ax] = k
        return getitem(s, tuple(key))
    pieces = [take(int(l)) + fr * (take(int(u)) - take(int(l)))
              for l, u, fr in zip(lo.reshape(-1), hi.reshape(-1), frac.reshape(-1))]
    out = np.stack(pieces) if qs.ndim else pieces[0]
    if qs.ndim:
        out = out.reshape(qs.shape + pieces[0].shape)
    if keepdims:
        shape = list(a.shape) if axis is not None else [1] * a.ndim
        if axis is not None:
            shape[ax] = 1
        out = out.reshape(qs.shape + tuple(1 if axis is None else d for d in shape))
    return out


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False):
    return quantile(a, np.asarray(q, dtype=float) / 100.0, axis=axis, out=out, method=method,
                    keepdims=keepdims)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)
