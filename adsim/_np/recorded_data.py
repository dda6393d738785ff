"""The rules of integer and boolean data of a recording (``IntegerArray``,
``BoolArray``; see ``recorded_arrays``): what is recorded, and the guarded
plain fallback.

NumPy decides every result type: a ufunc is tried on empty arrays of the
operands' dtypes. An int64 result of an integer-preserving ufunc is
recorded as integer data, a bool result of a comparison or logical ufunc as
boolean data, a float64 result as an active float array; any other (bitwise
ops on integers, int ** int, ...) takes the plain fallback.
"""
import warnings

import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .._active import Active, mark_written, record_unary
from .core import (as_active, binary, broadcast_to, constant, copy as copy_active, gather, new,
                   operand, record_compare, reshaped, size_of, tape_of)
from . import layout
from .recorded_arrays import BoolArray, IntegerArray, RecordedArray
from .integers import current, frozen, guard

# floats hold every integer of magnitude below 2**53 exactly; integer data
# are guarded to stay there (NaN and infinities fail the guard too)
EXACT = 2.0 ** 53

_PRESERVING = {np.add: Op.ADD, np.subtract: Op.SUB, np.multiply: Op.MUL,
               np.floor_divide: Op.FLOOR_DIVIDE, np.remainder: Op.REMAINDER,
               np.maximum: Op.MAXIMUM, np.minimum: Op.MINIMUM}
_GROWING = (np.add, np.subtract, np.multiply)        # can leave the exact range
_UNARY = {np.negative: Op.NEG, np.absolute: Op.ABS, np.sign: Op.SIGN}


def exact_integers(values):
    """Integer data holding ``values`` (integral floats without derivative),
    guarded to stay in the exactly representable range."""
    guard(values, -EXACT, EXACT)
    return IntegerArray(values)


def from_active(x):
    """``x.astype(np.int64)`` of an active array, recorded (truncation), or
    None when its values now are outside the exact range (NaN included):
    the caller then converts under a guard, with NumPy's own warnings."""
    v = current(x)
    if v.size and not np.all(np.abs(v) < EXACT):
        return None
    return exact_integers(record_unary(x, int(Op.TRUNC)))


def _typed(values, dtype):
    """Float values held by recorded data as NumPy's values of ``dtype``."""
    return np.asarray(values != 0.0) if dtype == np.bool_ else values.astype(dtype)


def current_values(a):
    """The values ``a`` holds now (no guard: for display only)."""
    return _typed(current(a.values), a.dtype)



def plain(a):
    """``a`` as a plain array of its dtype, guarded to stay exactly that."""
    return _typed(frozen(a.values, ""), a.dtype)


def truth(a):
    """``bool(a)`` of one element: a recorded test (the replay checks it)."""
    if a.size != 1:
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")
    tape = tape_of(a.values)
    outcome = record_compare(tape, CompareKind.CMP_NE, a.values.slot, tape.const_ref(0.0),
                             a.shape)
    return bool(outcome.reshape(()))


def astype(a, dtype):
    if dtype == a.dtype:
        return a
    if dtype == np.float64:
        return copy_active(a.values)
    if dtype == np.int64:
        return IntegerArray(a.values)              # booleans: 0 and 1
    if dtype == np.bool_:
        return _as_bool(a)
    return plain(a).astype(dtype)


# ---- operands ------------------------------------------------------------------

def _dtype_probe(v):
    """What stands for ``v`` when NumPy is asked for a result type."""
    if isinstance(v, RecordedArray):
        return np.empty(0, dtype=v.dtype)
    if isinstance(v, Active):
        return np.empty(0, dtype=np.float64)
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return v
    return np.empty(0, dtype=np.asarray(v).dtype)


def _result_dtype(uf, inputs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = uf(*[_dtype_probe(v) for v in inputs])
        except TypeError:
            return None
    return out[0].dtype if isinstance(out, tuple) else np.asarray(out).dtype


def _floats(v):
    """An operand of a recorded op: recorded data as their float values,
    plain booleans as 0.0 and 1.0."""
    if isinstance(v, RecordedArray):
        return v.values
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == np.bool_):
        return np.asarray(v, dtype=np.float64)
    return v


def _as_bool(v):
    """``v != 0`` as boolean data (booleans as they are)."""
    if isinstance(v, BoolArray):
        return v
    return BoolArray(binary(Op.NOT_EQUAL, _floats(v), 0.0))


def _plain_operands(obj, depth=0):
    if isinstance(obj, RecordedArray):
        return plain(obj)
    if isinstance(obj, (list, tuple)) and depth < 8:
        return type(obj)(_plain_operands(o, depth + 1) for o in obj)
    if isinstance(obj, dict) and depth < 8:
        return {k: _plain_operands(o, depth + 1) for k, o in obj.items()}
    return obj


def holds_recorded(args, kwargs):
    """Is recorded data among the arguments (NumPy dispatches functions on
    some arguments only: np.take not on its indices)?"""
    return any(isinstance(v, RecordedArray) for v in (*args, *kwargs.values()))


def _nonzero_plain_integers(v):
    return not isinstance(v, (IntegerArray, Active)) and np.asarray(v).dtype.kind in "iub" \
        and np.all(np.asarray(v) != 0)


# ---- ufuncs --------------------------------------------------------------------

def ufunc(uf, method, inputs, kwargs):
    if method == "at" and uf in (np.add, np.subtract) and len(inputs) == 3 and not kwargs \
            and isinstance(inputs[0], Active) and isinstance(inputs[1], IntegerArray):
        b = inputs[2] if uf is np.add else -_floats(inputs[2])
        setitem(inputs[0], inputs[1], b, add=True)
        return None
    if method == "__call__" and not kwargs:
        dtype = _result_dtype(uf, inputs)
        if dtype == np.int64 and uf in _UNARY:
            values = record_unary(inputs[0].values, int(_UNARY[uf]))
            return IntegerArray(values)
        if dtype == np.int64 and uf in _PRESERVING and len(inputs) == 2:
            if uf in (np.floor_divide, np.remainder) and not _nonzero_plain_integers(inputs[1]):
                return _fallback(uf, inputs, kwargs)      # x // 0 and x % 0 are NumPy's own
            values = binary(_PRESERVING[uf], _floats(inputs[0]), _floats(inputs[1]),
                            sides=False)
            return exact_integers(values) if uf in _GROWING else IntegerArray(values)
        if dtype == np.bool_:
            recorded = _boolean(uf, inputs)
            if recorded is not None:
                return recorded
        if dtype == np.float64:
            return uf(*[_floats(v) for v in inputs])
    return _fallback(uf, inputs, kwargs, method)


_COMPARISONS = {np.less: Op.LESS, np.less_equal: Op.LESS_EQUAL, np.greater: Op.GREATER,
                np.greater_equal: Op.GREATER_EQUAL, np.equal: Op.EQUAL,
                np.not_equal: Op.NOT_EQUAL}
_KIND_UFUNC = {CompareKind.CMP_LT: np.less, CompareKind.CMP_LE: np.less_equal,
               CompareKind.CMP_GT: np.greater, CompareKind.CMP_GE: np.greater_equal,
               CompareKind.CMP_EQ: np.equal, CompareKind.CMP_NE: np.not_equal}


def compare(kind, a, b):
    """``a <kind> b`` with an active operand: boolean data (complex operands
    and other types take NumPy's own path)."""
    return ufunc(_KIND_UFUNC[kind], "__call__", (a, b), {})


def _boolean(uf, inputs):
    """Comparisons and logic with a bool result, on values; None for other
    ufuncs with a bool result (the plain fallback)."""
    if uf in _COMPARISONS:
        return BoolArray(binary(_COMPARISONS[uf], _floats(inputs[0]), _floats(inputs[1]),
                                sides=False))
    if uf in (np.logical_not, np.invert):
        return BoolArray(1.0 - _as_bool(inputs[0]).values)
    if uf is np.isnan:
        v = _floats(inputs[0])
        return BoolArray(binary(Op.NOT_EQUAL, v, v, sides=False))
    if uf is np.isfinite:
        v = _floats(inputs[0])
        return BoolArray(binary(Op.EQUAL, v - v, 0.0, sides=False))
    if uf is np.isinf:
        return BoolArray(binary(Op.EQUAL, record_unary(as_active(tape_of(_floats(inputs[0])),
                                                                 _floats(inputs[0])),
                                                       int(Op.ABS)), np.inf, sides=False))
    if len(inputs) != 2:
        return None
    a, b = (_as_bool(v).values if isinstance(v, (RecordedArray, Active)) else
            np.asarray(v, dtype=bool).astype(np.float64) for v in inputs)
    if uf in (np.logical_and, np.bitwise_and, np.multiply, np.minimum):
        return BoolArray(binary(Op.MUL, a, b))
    if uf in (np.logical_or, np.bitwise_or, np.add, np.maximum):
        return BoolArray(binary(Op.MAXIMUM, a, b, sides=False))
    if uf in (np.logical_xor, np.bitwise_xor):
        return BoolArray(binary(Op.NOT_EQUAL, a, b, sides=False))
    return None


def _fallback(uf, inputs, kwargs, method="__call__"):
    f = uf if method == "__call__" else getattr(uf, method)
    return f(*_plain_operands(inputs), **_plain_operands(kwargs))


# ---- functions -----------------------------------------------------------------

def array_function(func, args, kwargs):
    rule = FUNCTIONS.get(func)
    if rule is not None:
        out = rule(*args, **kwargs)
        if out is not NotImplemented:
            return out
    return func(*_plain_operands(args), **_plain_operands(kwargs))


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


def search(table, v, side):
    """np.searchsorted(table, v, side) of active values ``v`` in a plain
    table sorted in NumPy's order: integer data (a SEARCH op), or None when
    the table is not sorted (NumPy's result then depends on its search)."""
    if not np.array_equal(np.sort(table), table, equal_nan=True):
        return None
    tape = tape_of(v)
    ref = tape.const_ref(table)
    return IntegerArray(new(tape, Op.SEARCH, v.shape, [ref, v.slot, int(side == "right")]))


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    if out is not None or kwargs or not isinstance(a, IntegerArray):
        return NotImplemented
    for bound, uf in ((a_min, np.maximum), (a_max, np.minimum)):
        if bound is not None:
            a = ufunc(uf, "__call__", (a, bound), {})
    return a


def where(condition, x=None, y=None):
    """np.where on boolean data: a SELECT, whose mask the replay reads (the
    side not taken passes no derivative, not even 0 * NaN)."""
    if x is None or y is None or not isinstance(condition, RecordedArray):
        return NotImplemented
    m = _as_bool(condition).values
    tape = tape_of(m, *[v for v in (x, y) if isinstance(v, Active)])
    shape = np.broadcast_shapes(condition.shape, np.shape(x), np.shape(y))
    rm, keep_m = operand(tape, m, shape)
    ra, keep_a = operand(tape, _floats(x), shape)
    rb, keep_b = operand(tape, _floats(y), shape)
    out = layout.elementwise(new(tape, Op.SELECT, shape, [rm, ra, rb]), m, _floats(x), _floats(y))
    kinds = {_kind_of(x), _kind_of(y)}
    if kinds == {"b"}:
        return BoolArray(out)
    if kinds <= {"b", "i"}:
        return IntegerArray(out)
    return out


def _kind_of(v):
    """NumPy's kind of an operand: b, i (integers), or f (float, active or not)."""
    if isinstance(v, RecordedArray):
        return v.dtype.kind
    if isinstance(v, Active):
        return "f"
    kind = np.asarray(v).dtype.kind
    return "i" if kind in "iu" else kind


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    if not isinstance(a, RecordedArray) or out is not None or initial is not None or \
            where is not None or dtype not in (None, int, np.int64):
        return NotImplemented
    return exact_integers(np.sum(a.values, axis=axis, keepdims=keepdims))


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if not isinstance(a, RecordedArray) or out is not None or kwargs or \
            dtype not in (None, float, np.float64):
        return NotImplemented
    return np.mean(a.values, axis=axis, keepdims=keepdims)


def _cumsum(a, axis=None, dtype=None, out=None):
    if not isinstance(a, RecordedArray) or out is not None or dtype not in (None, int, np.int64):
        return NotImplemented
    return exact_integers(np.cumsum(a.values, axis=axis))


def _count_nonzero(a, axis=None, *, keepdims=False):
    if not isinstance(a, RecordedArray):
        return NotImplemented
    return IntegerArray(np.sum(_as_bool(a).values, axis=axis, keepdims=keepdims))


def _any(a, axis=None, out=None, keepdims=False, *, where=None):
    if not isinstance(a, RecordedArray) or out is not None or where is not None:
        return NotImplemented
    count = np.sum(_as_bool(a).values, axis=axis, keepdims=keepdims)
    return BoolArray(binary(Op.GREATER, count, 0.0, sides=False))


def _all(a, axis=None, out=None, keepdims=False, *, where=None):
    if not isinstance(a, RecordedArray) or out is not None or where is not None:
        return NotImplemented
    misses = np.sum(1.0 - _as_bool(a).values, axis=axis, keepdims=keepdims)
    return BoolArray(binary(Op.EQUAL, misses, 0.0, sides=False))


FUNCTIONS = {np.take: take, np.clip: clip, np.where: where, np.sum: _sum, np.mean: _mean,
             np.cumsum: _cumsum,
             np.count_nonzero: _count_nonzero, np.any: _any, np.all: _all,
             np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim,
             np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis]}


# ---- gathers -------------------------------------------------------------------

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


def plain_key(key):
    """``key`` with its integer data as plain (guarded) values."""
    return _plain_operands(key)


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
    from .views import check_writeable, write_positions
    found = _integer_part(key)
    if found is None:
        return False
    check_writeable(a)
    at = _Placement(a, *found)
    tape = tape_of(a)
    v = _floats(value)
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


def index_recorded(a, key):
    """``a[key]`` of recorded data: recorded data of the same type (a
    boolean-mask key, whose result size depends on it, converts to plain)."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(p, BoolArray) for p in parts):
        return plain(a)[plain_key(key)]
    if any(isinstance(p, IntegerArray) for p in parts):
        return type(a)(getitem(a.values, key))
    return type(a)(a.values[key])
