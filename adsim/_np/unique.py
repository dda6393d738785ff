"""``np.unique`` of active values, and NumPy 2's ``unique_values``,
``unique_counts``, ``unique_inverse`` and ``unique_all``.

The unique values are a gather of the input at NumPy's ``return_index``:
the first occurrence of each value (of each subarray along ``axis``). So
``np.unique(x)`` is differentiated as ``x[np.unique(x, return_index=True)[1]]``:
where elements tie, the whole derivative goes to the first of them, as the
ties of ``max`` and ``min`` go to the element the value is taken from
(docs/numpy.md), in every mode. The indices, the inverse and the counts are
piecewise constant in the values: plain integer arrays, NumPy's own, fixed by
guards. The guards are the comparisons that decide NumPy's answer, between
neighbours in the sorted order (each pair equal, or the first strictly
below: lexicographically along ``axis``, equal up to the first entry that is
below), and which elements are NaN; a replay where one of them changes
raises BranchChanged (the functional API records again there).
"""
import numpy as np

from .._opcodes import CompareKind
from ..errors import UnsupportedOperation
from .core import compare, gather, normalize_axis
from .integers import current
from .views import getitem, reshape


def _rows(a, axis):
    """(values, positions) of ``a`` as rows (one element each when ``axis``
    is None, else the subarrays along ``axis``): positions are flat indices
    of ``a``'s elements, in C order of its shape."""
    values = current(a)
    positions = np.arange(values.size).reshape(values.shape)
    if axis is None:
        return values.reshape(-1, 1), positions.reshape(-1, 1)
    shape = (values.shape[axis], int(np.prod(np.delete(values.shape, axis))))
    return (np.moveaxis(values, axis, 0).reshape(shape),
            np.moveaxis(positions, axis, 0).reshape(shape))


def _guard_structure(a, axis):
    """Record the comparisons NumPy's unique of ``a`` depends on: which
    elements are NaN, and for each pair of neighbouring rows in sorted order,
    equal entries up to the first that is strictly below (all equal for a
    repeated row)."""
    rows, positions = _rows(a, axis)
    flat = reshape(a, (-1,))
    nan = np.isnan(rows)
    if nan.any():
        if axis is not None:
            raise UnsupportedOperation(
                "adsim: np.unique along an axis of an active array holding NaN: NumPy orders "
                "such subarrays by comparisons NaN fails, which adsim does not record; "
                "replace the NaN first (np.nan_to_num, np.where)")
        compare(CompareKind.CMP_NE, flat, flat)        # which elements are NaN
    if rows.shape[0] < 2 or rows.shape[1] == 0:
        return
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] > 1 else \
        np.argsort(rows[:, 0], kind="stable")
    left, right = rows[order[:-1]], rows[order[1:]]
    at_left, at_right = positions[order[:-1]], positions[order[1:]]
    usable = ~(np.isnan(left).any(axis=1) | np.isnan(right).any(axis=1))
    differs = left != right
    first = np.where(differs.any(axis=1), np.argmax(differs, axis=1), rows.shape[1])
    columns = np.arange(rows.shape[1])
    equal = usable[:, None] & (columns < first[:, None])
    below = usable[:, None] & (columns == first[:, None])
    for kind, mask in ((CompareKind.CMP_EQ, equal), (CompareKind.CMP_LT, below)):
        if mask.any():
            compare(kind, gather(flat, at_left[mask]), gather(flat, at_right[mask]))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """NumPy's ``np.unique``; the values sorted also for ``sorted=False``
    (which NumPy allows: it does not promise another order)."""
    if axis is not None:
        axis = normalize_axis(axis, ar.ndim)
    _guard_structure(ar, axis)
    values, index, *rest = np.unique(current(ar), return_index=True,
                                     return_inverse=return_inverse,
                                     return_counts=return_counts, axis=axis,
                                     equal_nan=equal_nan)
    if axis is None:
        out = gather(reshape(ar, (-1,)), index)
    else:
        out = getitem(ar, (slice(None),) * axis + (index,))
    results = (out,) + ((index,) if return_index else ()) + tuple(rest)
    return results[0] if len(results) == 1 else results


def unique_values(x):
    return unique(x, equal_nan=False, sorted=False)


def _result(name, *fields):
    """NumPy's named tuple ``name`` (NumPy >= 2.0, where the functions are)."""
    from numpy.lib import _arraysetops_impl
    return getattr(_arraysetops_impl, name)(*fields)


def unique_counts(x):
    values, counts = unique(x, return_counts=True, equal_nan=False, sorted=False)
    return _result("UniqueCountsResult", values, counts)


def unique_inverse(x):
    values, inverse = unique(x, return_inverse=True, equal_nan=False, sorted=False)
    return _result("UniqueInverseResult", values, inverse.reshape(np.shape(x)))


def unique_all(x):
    values, index, inverse, counts = unique(x, return_index=True, return_inverse=True,
                                            return_counts=True, equal_nan=False, sorted=False)
    return _result("UniqueAllResult", values, index, inverse.reshape(np.shape(x)), counts)


def functions():
    """{NumPy's function: rule} for the ones this NumPy has."""
    made = {np.unique: unique}
    for f in (unique_values, unique_counts, unique_inverse, unique_all):
        if hasattr(np, f.__name__):
            made[getattr(np, f.__name__)] = f
    return made
