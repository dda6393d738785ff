"""Orderings of active values: sort, argsort, lexsort, partition, argpartition,
searchsorted, digitize, interp, nonzero, trim_zeros, and the quantiles (median,
quantile, percentile and their NaN-skipping forms).

Which permutation sorts x, or which interval of a table holds x, is
piecewise constant in x, so it is a guarded plain array (adsim/_np/integers.py
explains guards): a sort records that its result is non-decreasing, a search
records the interval each value lies in. A replay where either differs
raises BranchChanged.
"""
import warnings

import numpy as np

from .._opcodes import CompareKind
from .._active import Active
from ..errors import UnsupportedOperation
from .core import as_active, axes_of, compare, constant, gather, normalize_axis, \
    record_compare, shape_of, size_of, tape_of
from . import recorded_data
from .recorded_indexing import take_rows
from .elementwise import where
from .integers import _up, current, guard, plain_if_constant, plain_value
from .views import getitem, reshape, transpose
from . import layout


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
        if np.isnan(current(out)).any():
            # NaN compares False with everything, so the neighbours' outcomes
            # alone pass a replay whose NaN sit elsewhere: which are NaN too
            record_compare(tape_of(a), CompareKind.CMP_NE, out.slot, out.slot, out.shape)
        # neighbours out of position order stay strictly apart: tied, a stable sort (NumPy's
        # argsort, kind="stable") would put them back in position order
        positions = np.moveaxis(order, axis, -1)
        swapped = positions[..., :-1] > positions[..., 1:]
        if swapped.any():
            at = np.moveaxis(np.arange(out.size).reshape(out.shape), axis, -1)
            flat = reshape(out, (-1,))
            compare(CompareKind.CMP_LT, gather(flat, at[..., :-1][swapped]),
                    gather(flat, at[..., 1:][swapped]))
    return out, order


def _flat_if_none(a, axis):
    return (reshape(a, (-1,)), 0) if axis is None else (a, axis)


def sort(a, axis=-1, kind=None, order=None, stable=None):
    if order is not None:
        raise UnsupportedOperation("adsim: np.sort with order= (structured arrays) is not supported")
    a, axis = _flat_if_none(a, axis)
    return layout.elementwise(_sorted_along(a, axis, kind)[0], a)      # a's layout, as NumPy's


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    a, axis = _flat_if_none(a, axis)
    return _sorted_along(a, axis, kind)[1]


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's own partition indices at the recorded values, guarded by the
    sorted order of the whole axis: introselect only compares elements, so
    while their order stays, so do its indices."""
    if order is not None:
        raise UnsupportedOperation("adsim: np.partition with order= (structured arrays) is not "
                                   "supported")
    a, axis = _flat_if_none(a, axis)
    _sorted_along(a, axis, kind)
    return np.argpartition(current(a), kth, axis=axis, kind=kind)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis = _flat_if_none(a, axis)
    order = argpartition(a, kth, axis=axis, kind=kind, order=order)
    moved = np.take_along_axis(np.arange(a.size).reshape(a.shape), order,
                               axis=normalize_axis(axis, a.ndim))
    return layout.elementwise(gather(a, moved), a)        # a's layout, as NumPy's


def nonzero(a):
    """Indices of the nonzero elements: those of a recorded comparison."""
    return np.nonzero(compare(CompareKind.CMP_NE, a, 0.0))


def count_nonzero(a, axis=None, *, keepdims=False):
    return np.count_nonzero(compare(CompareKind.CMP_NE, a, 0.0), axis=axis, keepdims=keepdims)


def _truth_test(reduction, mask):
    """NumPy's ``all``/``any`` of an active array: the reduction of the
    comparisons ``a != 0`` (NaN is true, as in NumPy) as boolean data that
    replays compute again; elements outside ``where`` count as true for
    ``all`` and false for ``any`` (``mask``: how they are combined with
    ``where``), as NumPy's reductions start from those values. The
    derivative is zero wherever it is defined."""
    def test(a, axis=None, out=None, keepdims=False, *, where=True):
        if out is not None:
            raise UnsupportedOperation(
                f"adsim: numpy.{reduction.__name__}(..., out=...) of an active array: the "
                f"result is boolean data of the recording; assign it instead of passing out")
        nonzero_ = recorded_data.compare(CompareKind.CMP_NE, a, 0.0)
        if where is not True:
            nonzero_ = mask(nonzero_, where)
        return reduction(nonzero_, axis=axis, keepdims=keepdims)
    test.__name__ = reduction.__name__
    return test


all_ = _truth_test(np.all, lambda nonzero_, where: np.logical_or(nonzero_, np.logical_not(where)))
any_ = _truth_test(np.any, lambda nonzero_, where: np.logical_and(nonzero_, where))


def argwhere(a):
    return np.argwhere(compare(CompareKind.CMP_NE, a, 0.0))


def flatnonzero(a):
    return np.flatnonzero(compare(CompareKind.CMP_NE, a, 0.0))


def trim_zeros(filt, trim="fb", axis=None):
    """The slice (a view) without leading and/or trailing zeros, found by
    recorded comparisons; along every axis (``axis=None``) or the given ones."""
    trim = trim.lower()
    if any(c not in "fb" for c in trim):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    nonzero_ = np.asarray(compare(CompareKind.CMP_NE, filt, 0.0))
    axes = range(filt.ndim) if axis is None else \
        [normalize_axis(ax, filt.ndim) for ax in np.atleast_1d(axis)]
    key = [slice(None)] * filt.ndim
    for ax in axes:
        hits = np.flatnonzero(np.any(nonzero_, axis=tuple(i for i in range(filt.ndim) if i != ax)))
        if hits.size == 0:                 # all zeros: empty along the trimmed axes
            key = [slice(0, 0) if i in axes else k for i, k in enumerate(key)]
            break
        key[ax] = slice(hits[0] if "f" in trim else 0,
                        hits[-1] + 1 if "b" in trim else filt.shape[ax])
    return getitem(filt, tuple(key))


def searchsorted(a, v, side="left", sorter=None):
    """Positions of values ``v`` in a sorted array ``a``, either of them active."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    a = plain_if_constant(a)
    if sorter is not None:
        order = np.asarray(plain_value(sorter, "the sorter of np.searchsorted"))
        a = getitem(a, order) if isinstance(a, Active) else np.asarray(a)[order]
    if isinstance(a, Active):
        return _search_active_table(a, v, side)
    table = np.asarray(a, dtype=float)
    if not isinstance(v, Active):           # both were constants of the recording
        return np.searchsorted(table, v, side=side)
    if table.ndim == 1:
        recorded = recorded_data.search(table, v, side)
        if recorded is not None:
            return recorded
    values = current(v)
    idx = np.searchsorted(table, values, side=side)
    below = np.concatenate([[-np.inf], table])[idx]
    above = np.concatenate([table, [np.inf]])[idx]
    if side == "left":              # table[i-1] < v <= table[i]
        guard(v, _up(below), _up(above))
    else:                           # table[i-1] <= v < table[i]
        guard(v, below, above)
    return idx


def _search_active_table(table, v, side):
    """np.searchsorted in an active table (a cumulative sum of weights, say):
    NumPy's positions at the recorded values, guarded by the table staying
    sorted (on an unsorted table NumPy's answer depends on its bisection)
    and by each value staying between its neighbours in the table."""
    if table.ndim != 1:
        raise ValueError("object too deep for desired array")    # NumPy's message
    t = current(table)
    if np.isnan(t).any() or np.any(t[:-1] > t[1:]):
        raise UnsupportedOperation(
            "adsim: np.searchsorted of an active array `a` that is not sorted (or holds NaN): "
            "NumPy's positions then depend on its bisection, which adsim does not record; "
            "sort `a` first (np.sort) or pass sorter=")
    n = t.size
    if n > 1:
        compare(CompareKind.CMP_LE, gather(table, np.arange(n - 1)), gather(table, np.arange(1, n)))
    idx = np.searchsorted(t, current(v) if isinstance(v, Active) else v, side=side)
    at = np.reshape(idx, -1)
    values = reshape(v, (-1,)) if isinstance(v, Active) else np.reshape(np.asarray(v, float), -1)
    below, above = (CompareKind.CMP_LT, CompareKind.CMP_LE) if side == "left" else \
        (CompareKind.CMP_LE, CompareKind.CMP_LT)
    for kind, has, offset in ((below, at > 0, -1), (above, at < n, 0)):
        if has.any():                   # table[i-1] (<|<=) v, v (<=|<) table[i]
            pick = np.flatnonzero(has)
            ends = gather(table, at[pick] + offset)
            vals = gather(values, pick) if isinstance(values, Active) else values[pick]
            compare(kind, ends, vals) if offset else compare(kind, vals, ends)
    return idx


def digitize(x, bins, right=False):
    bins = np.asarray(plain_value(bins, "the bins of np.digitize"), dtype=float)
    if bins.size > 1 and bins[0] > bins[-1]:
        raise UnsupportedOperation("adsim: np.digitize with decreasing bins is not supported; "
                                   "reverse them")
    return searchsorted(bins, x, side="left" if right else "right")


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation at points ``x`` in a table ``xp``
    (increasing, or any order with a plain ``xp`` and ``period``) of values
    ``fp``, each plain or active; which cell each point falls in is integer
    data replays compute again, so an active ``xp`` (knots fitted as
    parameters) is differentiated inside its cells."""
    if period is not None or not isinstance(xp, Active):
        xp = np.asarray(plain_value(xp, "the table xp of np.interp with period"), dtype=float)
    tape = tape_of(x, xp, fp, left, right)
    fp = fp if isinstance(fp, Active) else constant(fp)
    if period is not None:          # NumPy's periodic form: one period, padded at both ends
        period = abs(float(plain_value(period, "the period of np.interp")))
        if period == 0:
            raise ValueError("period must be a non-zero value")
        x = x % period
        order = np.argsort(xp % period, kind="stable")
        xp = (xp % period)[order]
        xp = np.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = fp[order]
        fp = np.concatenate([fp[-1:], fp, fp[:1]])
        left = right = None
    elif not isinstance(xp, Active) and np.any(xp[1:] < xp[:-1]):
        raise UnsupportedOperation("adsim: np.interp with a table xp that is not increasing "
                                   "(NumPy's results are then, in its words, nonsense); sort "
                                   "xp and fp together (np.argsort(xp))")
    x = as_active(tape, x)
    n = shape_of(xp)[0]
    # the number of knots at or below each point (searchsorted's side="right"), a count of
    # recorded comparisons where the knots are active
    below = np.sum(xp <= x[..., None], axis=-1) if isinstance(xp, Active) else \
        searchsorted(xp, x, side="right")
    cell = np.clip(below - 1, 0, max(n - 2, 0))
    upper = np.minimum(cell + 1, n - 1)
    f0 = take_rows(fp, cell)
    f1 = take_rows(fp, upper)
    x0 = take_rows(xp, cell)
    width = np.where(n > 1, take_rows(xp, upper) - x0, 1.0)
    width = np.where(width == 0, 1.0, width)
    inside = f0 + (x - x0) / width * (f1 - f0)
    undefined = np.isnan(inside)            # recorded: a replay that meets NaN leaves the path
    if np.any(undefined):
        inside = np.where(undefined, _at_non_finite(x, x0, take_rows(xp, upper), f0, f1), inside)
    first = fp[0] if left is None else left
    last = fp[n - 1] if right is None else right
    low, high = x < xp[0], x > xp[-1]            # recorded comparisons
    return np.where(low, first, np.where(high, last, inside))


def _at_non_finite(x, x0, x1, f0, f1):
    """NumPy's interpolated value where the formula gives NaN (infinite or
    NaN table values): the table value at a knot, else the line through the
    other end of the cell, else the cell's value if both ends are equal."""
    other = (f1 - f0) / (x1 - x0) * (x - x1) + f1
    other = np.where(np.isnan(other) & (f0 == f1), f0, other)
    return np.where(x == x0, f0, np.where(x == x1, f1, other))


# ---- quantiles ---------------------------------------------------------------

def _rows(a, axis):
    """``a`` as (rows, m): the reduced axes moved last and merged; with the
    shape of the kept axes and the reduced axes."""
    axes = axes_of(axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in axes]
    moved = transpose(a, kept + list(axes)) if kept + list(axes) != list(range(a.ndim)) else a
    kept_shape = tuple(a.shape[i] for i in kept)
    return reshape(moved, (size_of(kept_shape), size_of([a.shape[i] for i in axes]))), \
        kept_shape, axes


def _quantile(a, q, axis, keepdims, method, skip_nan, name, middle=False):
    """Quantiles by NumPy's linear method along ``axis`` (an int, a tuple or
    None): the sorted values at (n - 1) q, interpolated as NumPy's lerp does.
    A slice with NaN gives NaN (``skip_nan``: its NaNs are left out, an
    all-NaN slice gives NaN and NumPy's warning). ``middle`` (q = 0.5):
    NumPy's median, the middle value or the mean of the two middle ones (the
    lerp would give NaN for [0, 0, inf], inf - 0 times 0)."""
    if method != "linear":
        raise UnsupportedOperation(f"adsim: np.{name} is recorded with method='linear'")
    qs = np.asarray(plain_value(q, f"q of np.{name}"), dtype=float)
    if np.any(qs < 0) or np.any(qs > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    rows, kept_shape, axes = _rows(a, axis)
    m = rows.shape[1]
    if m == 0:
        raise UnsupportedOperation(f"adsim: np.{name} of an empty slice (NumPy returns NaN with "
                                   f"a warning); take it of a non-empty array")
    s = sort(rows, axis=1)
    missing = compare(CompareKind.CMP_NE, rows, rows)          # NaN (a recorded test)
    n_nan = np.sum(np.reshape(missing, rows.shape), axis=1)
    count = m - n_nan if skip_nan else np.full(rows.shape[0], m)
    h = (np.maximum(count, 1) - 1.0)[:, None] * qs.reshape(1, -1)
    lo = np.floor(h).astype(int)
    hi = np.minimum(lo + 1, np.maximum(count, 1)[:, None] - 1)
    t = h - lo
    r = np.arange(rows.shape[0])[:, None]
    below, above = getitem(s, (r, lo)), getitem(s, (r, hi))
    if middle:
        out = where(t == 0.0, below, (below + above) * 0.5)
    else:
        upper = t >= 0.5              # NumPy's lerp: from the nearer end
        out = where(upper, above, below) + (above - below) * np.where(upper, t - 1.0, t)
    bad = (count == 0) if skip_nan else (n_nan > 0)
    if np.any(bad):
        if skip_nan:
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
        out = where(bad[:, None], np.nan, out)
    out = transpose(out) if qs.ndim else reshape(out, (-1,))
    shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape)) if keepdims \
        else kept_shape
    return reshape(out, qs.shape + shape)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None, interpolation=None):
    _no_out("quantile", out, weights)
    return _quantile(a, q, axis, keepdims, method, False, "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    _no_out("percentile", out, weights)
    return _quantile(a, _percent(q, "percentile"), axis, keepdims, method, False, "percentile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _no_out("median", out, None)
    return _quantile(a, 0.5, axis, keepdims, "linear", False, "median", middle=True)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    _no_out("nanquantile", out, weights)
    return _quantile(a, q, axis, keepdims, method, True, "nanquantile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    _no_out("nanpercentile", out, weights)
    return _quantile(a, _percent(q, "nanpercentile"), axis, keepdims, method, True,
                     "nanpercentile")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _no_out("nanmedian", out, None)
    return _quantile(a, 0.5, axis, keepdims, "linear", True, "nanmedian", middle=True)


def _percent(q, name):
    return np.asarray(plain_value(q, f"q of np.{name}"), dtype=float) / 100.0


def _no_out(name, out, weights):
    if out is not None or weights is not None:
        raise UnsupportedOperation(f"adsim: np.{name} is recorded without out= and weights=")


def lexsort(keys, axis=-1):
    """NumPy's lexsort order (the last key primary, ties kept in position
    order) of keys some of which are active: a plain index array, guarded
    as a sort is. Of each pair of neighbours in the order, the comparisons
    that decide it are recorded (left <= right in each key down to the one
    that separates them; equal in all, position order decides), and which
    elements are NaN (NumPy sorts NaN last, NaNs as equals)."""
    keys = [getitem(keys, i) for i in range(keys.shape[0])] if isinstance(keys, Active) \
        else list(keys)
    plain = [current(k) if isinstance(k, Active) else np.asarray(k) for k in keys]
    order = np.lexsort(plain, axis=axis)
    if order.ndim == 0 or order.shape[axis] < 2:
        return order
    positions = np.take_along_axis(np.arange(order.size).reshape(order.shape), order, axis=axis)
    positions = np.moveaxis(positions, axis, -1)
    left, right = positions[..., :-1].ravel(), positions[..., 1:].ravel()
    undecided = np.ones(left.size, dtype=bool)
    for key, values in reversed(list(zip(keys, plain))):     # the most significant first
        values = np.broadcast_to(values, order.shape).ravel()
        lv, rv = values[left], values[right]
        nan = np.isnan(values) if values.dtype.kind in "fc" else np.zeros(values.size, bool)
        less = undecided & (lv < rv)
        equal = undecided & ((lv == rv) | (nan[left] & nan[right]))     # NaNs sort as equals
        if isinstance(key, Active):
            flat = reshape(key, (-1,))
            # a pair this key separates stays separated (left < right); a pair equal here
            # stays in order while left <= right (less significant keys, guarded next,
            # decide while it is equal); NaNs are kept by staying NaN
            for kind, pairs in ((CompareKind.CMP_LT, less), (CompareKind.CMP_LE, undecided &
                                                              (lv == rv))):
                if pairs.any():
                    compare(kind, gather(flat, left[pairs]), gather(flat, right[pairs]))
            if nan.any():
                compare(CompareKind.CMP_EQ, flat, flat)
        undecided = equal
    return order
