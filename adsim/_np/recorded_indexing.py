"""Indexing with integer data (``IntegerArray``, see ``recorded_arrays``):
``a[i]``, ``np.take(a, i)`` and adsim's own table lookups are one GATHER_AT
op, ``a[i] = v`` and ``np.add.at(a, i, v)`` one SCATTER_AT, which every
replay computes with the indices of that replay. Keys of other forms
convert the integer data to plain values (guarded)."""
import numpy as np

from .._active import Active, mark_written
from .._opcodes import Opcode as Op
from .core import as_active, broadcast_to, constant, gather, new, reshaped, size_of, tape_of
from .recorded_arrays import IntegerArray, current_values, floats, plain_operands
from .integers import current
from .writes import check_writeable, write_positions


def check_bounds(indices, m, axis):
    """NumPy's IndexError for indices outside an axis of ``m`` elements."""
    v = current(indices.values)
    bad = (v < -m) | (v >= m)
    if np.any(bad):
        raise IndexError(f"index {int(v[bad].flat[0])} is out of bounds for axis {axis} "
                         f"with size {m}")


def gather_at(a, index_values, axis):
    """``np.take(a, i, axis)`` for the index values of integer data (an
    Active): one GATHER_AT, which every replay computes with the indices of
    that replay. A plain ``a`` (a table adsim itself indexes, as in
    np.interp) becomes a constant of the tape."""
    if isinstance(a, Active):
        tape = tape_of(a, index_values)
        ref = a.slot
    else:
        tape = tape_of(index_values)
        a = np.asarray(a, dtype=np.float64)
        ref = tape.const_ref(a)
    shape = tuple(a.shape)
    outer, inner = size_of(shape[:axis]), size_of(shape[axis + 1:])
    out_shape = shape[:axis] + tuple(index_values.shape) + shape[axis + 1:]
    return new(tape, Op.GATHER_AT, out_shape,
               [ref, index_values.slot, outer, shape[axis], inner])


def take(a, indices, axis=None, out=None, mode="raise"):
    """np.take of an active array with integer data as the indices: a
    recorded GATHER_AT. (NumPy does not dispatch np.take on its indices: a
    plain array indexed by integer data takes the guarded fallback.)"""
    if not isinstance(a, Active) or not isinstance(indices, IntegerArray) or out is not None \
            or mode != "raise":
        return NotImplemented
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    if not -len(a.shape) <= axis < len(a.shape):
        raise np.exceptions.AxisError(axis, len(a.shape))
    axis %= len(a.shape)
    check_bounds(indices, a.shape[axis], axis)
    return gather_at(a, indices.values, axis)


def take_rows(table, indices):
    """``table[i]`` along the first axis, for an active or plain ``table``
    (adsim's own lookups: a plain table is a constant of the tape); plain
    indices index as NumPy does."""
    if not isinstance(indices, IntegerArray):
        return table[indices]
    check_bounds(indices, np.shape(table)[0], 0)
    return gather_at(table, indices.values, 0)


def plain_key(key):
    """``key`` with its integer data as plain (guarded) values."""
    return plain_operands(key)


def _integer_part(key):
    """(parts, n): the key as a tuple and the place of its one integer-data
    part, when the other parts are slices, integers, None or Ellipsis (the
    keys recorded here); else None."""
    parts = key if isinstance(key, tuple) else (key,)
    at = [n for n, p in enumerate(parts) if isinstance(p, IntegerArray)]
    simple = all(p is None or p is Ellipsis or isinstance(p, slice) or
                 (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)))
                 for n, p in enumerate(parts) if n not in at)
    return (parts, at[0]) if len(at) == 1 and simple else None


def _axis_of(parts, n, ndim):
    """The axis of ``a[parts[:n] + (slice(None),) + ...]`` that part n indexes."""
    consumed = sum(1 for p in parts if p is not None and p is not Ellipsis
                   and not isinstance(p, IntegerArray)) + 1
    axis = 0
    for p in parts[:n]:
        if p is Ellipsis:
            axis += ndim - consumed
        elif p is None or isinstance(p, slice):
            axis += 1
    return axis


class _Placement:
    """Where ``a[key]`` takes its elements when part n of the key is integer
    data: the positions P of a[key with that part a full slice], the axis of
    P it indexes, and NumPy's result shape (its errors included)."""

    def __init__(self, a, parts, n):
        self.idx = idx = parts[n]
        positions = a._positions()
        self.want = positions[parts[:n] + (current_values(idx),) + parts[n + 1:]].shape
        self.kept = parts[:n] + (slice(None),) + parts[n + 1:]
        self.P = positions[self.kept]
        self.axis = _axis_of(parts, n, a.ndim)
        check_bounds(idx, self.P.shape[self.axis], self.axis)
        ax, k = self.axis, idx.ndim
        self.taken = self.P.shape[:ax] + idx.shape + self.P.shape[ax + 1:]
        # integers and the index apart: NumPy puts the index's axes first
        self.moved = self.taken != self.want
        self.to_numpy = (list(range(ax, ax + k)), list(range(k)))

    def layout(self):
        outer, inner = size_of(self.P.shape[:self.axis]), size_of(self.P.shape[self.axis + 1:])
        return [outer, self.P.shape[self.axis], inner]


def getitem(a, key):
    """``a[key]`` of an active array where ``key`` holds integer data: one
    integer-data part among slices, integers, None and Ellipsis is recorded
    (NumPy's placement of its axes included); other keys convert the integer
    data to plain values (guarded)."""
    found = _integer_part(key)
    if found is None:
        return a[plain_key(key)]
    at = _Placement(a, *found)
    out = gather_at(a[at.kept], at.idx.values, at.axis)
    if at.moved:
        out = np.moveaxis(out, *at.to_numpy)
    if out.shape != at.want:
        raise AssertionError(f"adsim: internal: indexing gave {out.shape}, NumPy {at.want}")
    return out


def setitem(a, key, value, add=False):
    """``a[key] = value`` (or ``np.add.at(a, key, value)`` when ``add``)
    where ``key`` holds integer data as ``getitem`` records it: one
    SCATTER_AT writing the positions the replay reads; False for other keys
    (the caller converts them to plain values)."""
    found = _integer_part(key)
    if found is None:
        return False
    check_writeable(a)
    at = _Placement(a, *found)
    tape = tape_of(a)
    v = floats(value)
    v = v if isinstance(v, Active) else as_active(tape, np.asarray(constant(v)))
    v = broadcast_to(v, at.want)
    if at.moved:
        v = np.moveaxis(v, *reversed(at.to_numpy))
    root = a._root()
    whole = at.P.size == root.size and np.array_equal(at.P.reshape(-1), np.arange(root.size))
    base = root if whole else gather(root, at.P)
    written = new(tape, Op.SCATTER_AT, at.P.shape,
                  [base.slot, v.slot, at.idx.values.slot] + at.layout() + [int(add)])
    if whole:
        root._adopt(reshaped(written, root.shape) if written.shape != root.shape else written)
        mark_written(root)
    else:
        write_positions(root, at.P, written)
    return True
