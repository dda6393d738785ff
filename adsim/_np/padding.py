"""np.pad's modes whose padded values are computed rather than copied: the
statistics of the edge regions (maximum, minimum, mean, median), linear
ramps and odd reflections. They follow NumPy's own algorithm
(numpy/lib/_arraypad_impl.py): the axes are padded one after another, each
from the array the previous axes' padding made (so corners are statistics
of padded values), and an odd reflection wider than the array is laid
down chunk by chunk, each reflected about the edge the previous one made.
The modes that only copy elements (edge, wrap, even reflections) are
views.py's index maps."""
import numpy as np

from .._active import Active
from ..errors import UnsupportedOperation

_STATISTICS = {"maximum": np.max, "minimum": np.min, "mean": np.mean, "median": np.median}
COMPUTED = tuple(_STATISTICS) + ("linear_ramp",)


def computes(mode, kwargs):
    """Whether np.pad in ``mode`` computes its padded values (this module's)."""
    return mode in COMPUTED or (mode in ("reflect", "symmetric")
                                and kwargs.get("reflect_type") == "odd")


def pad(array, pad_width, mode, kwargs):
    for key, value in kwargs.items():
        if isinstance(value, Active) or any(isinstance(v, Active) for v in np.ravel(
                np.asarray(value, dtype=object))):
            raise UnsupportedOperation(f"adsim: np.pad(..., mode={mode!r}) with an active "
                                       f"{key}: pass plain numbers")
    ndim = array.ndim
    np.pad(np.zeros(array.shape), pad_width, mode=mode, **kwargs)   # NumPy's checks and errors
    widths = _pairs(pad_width, ndim).astype(int)
    for axis in range(ndim):
        before, after = (int(w) for w in widths[axis])
        if not before and not after:
            continue
        if mode in _STATISTICS:
            lengths = _pairs(kwargs.get("stat_length"), ndim)[axis]
            array = _statistic(array, axis, before, after, lengths, _STATISTICS[mode])
        elif mode == "linear_ramp":
            ends = _pairs(kwargs.get("end_values", 0), ndim).astype(float)[axis]
            array = _ramps(array, axis, before, after, ends)
        else:
            array = _odd_reflection(array, axis, before, after, mode == "symmetric")
    return array


def _pairs(value, ndim):
    """NumPy's (before, after) pair per axis from a scalar, a pair or one
    pair per axis."""
    return np.broadcast_to(np.asarray(value, dtype=object if value is None else None),
                           (ndim, 2))


def _take(a, axis, indices):
    return np.take(a, np.asarray(indices, dtype=np.intp), axis=axis)


def _statistic(a, axis, before, after, lengths, statistic):
    n = a.shape[axis]
    left_length, right_length = (n if s is None else min(int(s), n) for s in lengths)
    left = statistic(_take(a, axis, range(left_length)), axis=axis, keepdims=True)
    right = left if left_length == right_length == n else statistic(
        _take(a, axis, range(n - right_length, n)), axis=axis, keepdims=True)
    return np.concatenate([np.repeat(left, before, axis=axis), a,
                           np.repeat(right, after, axis=axis)], axis=axis)


def _ramp_positions(count, axis, ndim):
    shape = [1] * ndim
    shape[axis] = count
    return np.arange(count, dtype=float).reshape(shape)


def _ramps(a, axis, before, after, ends):
    """np.linspace(end, edge, width, endpoint=False) on the left, reversed
    on the right, as NumPy computes it: end + k * ((edge - end) / width)."""
    n = a.shape[axis]
    pieces = [a]
    if before:
        k = _ramp_positions(before, axis, a.ndim)
        pieces.insert(0, k * ((_take(a, axis, [0]) - ends[0]) / before) + ends[0])
    if after:
        k = _ramp_positions(after, axis, a.ndim)[(slice(None),) * axis + (slice(None, None, -1),)]
        pieces.append(k * ((_take(a, axis, [n - 1]) - ends[1]) / after) + ends[1])
    return np.concatenate(pieces, axis=axis)


def _odd_reflection(a, axis, before, after, include_edge):
    """NumPy's _set_reflect_both with method 'odd', in its loop."""
    period = a.shape[axis]
    if period == 1:                     # NumPy extends a single value as 'edge' does
        return np.concatenate([_take(a, axis, [0] * before), a, _take(a, axis, [0] * after)],
                              axis=axis)
    while before > 0 or after > 0:
        n = a.shape[axis]
        if include_edge:
            filled, offset = n // period * period, 1
        else:
            filled, offset = (n - 1) // (period - 1) * (period - 1), 0
        pieces = [a]
        if before > 0:
            chunk = min(filled, before)
            reflected = _take(a, axis, range(chunk - offset, -offset, -1))
            pieces.insert(0, 2 * _take(a, axis, [0]) - reflected)
            before -= chunk
        if after > 0:
            chunk = min(filled, after)
            start = n - 2 + offset
            reflected = _take(a, axis, range(start, start - chunk, -1))
            pieces.append(2 * _take(a, axis, [n - 1]) - reflected)
            after -= chunk
        a = np.concatenate(pieces, axis=axis)
    return a
