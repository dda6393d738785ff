"""The rules of integer and boolean data of a recording (``IntegerArray``,
``BoolArray``; see ``recorded_arrays``): ufuncs and NumPy functions on them,
what is recorded, and the guarded plain fallback. The dispatch layer
(adsim/_numpy_api.py) sends every call with recorded data here; indexing
with integer data is ``recorded_indexing``.

NumPy decides every result type: a ufunc is tried on empty arrays of the
operands' dtypes. An int64 result of an integer-preserving ufunc is
recorded as integer data, a bool result of a comparison or logical ufunc as
boolean data, a float64 result as an active float array; any other (bitwise
ops on integers, int ** int, ...) takes the plain fallback.
"""
import warnings

import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .._active import Active, record_unary
from .core import as_active, binary, new, operand, tape_of
from . import composed, layout
from .recorded_arrays import BoolArray, IntegerArray, RecordedArray, as_bool, floats, \
    plain_operands
from .recorded_indexing import setitem, take
from .integers import current, guard

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


def _nonzero_plain_integers(v):
    return not isinstance(v, (IntegerArray, Active)) and np.asarray(v).dtype.kind in "iub" \
        and np.all(np.asarray(v) != 0)


# ---- ufuncs --------------------------------------------------------------------

def ufunc(uf, method, inputs, kwargs):
    if method == "at" and uf in (np.add, np.subtract) and len(inputs) == 3 and not kwargs \
            and isinstance(inputs[0], Active) and isinstance(inputs[1], IntegerArray):
        b = inputs[2] if uf == np.add else -floats(inputs[2])
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
            values = binary(_PRESERVING[uf], floats(inputs[0]), floats(inputs[1]))
            return exact_integers(values) if uf in _GROWING else IntegerArray(values)
        if dtype == np.bool_:
            recorded = _boolean(uf, inputs)
            if recorded is not None:
                return recorded
        if dtype == np.float64:
            return uf(*[floats(v) for v in inputs])
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
        return BoolArray(binary(_COMPARISONS[uf], floats(inputs[0]), floats(inputs[1])))
    if uf in (np.logical_not, np.invert):
        return BoolArray(1.0 - as_bool(inputs[0]).values)
    if uf == np.isnan:
        v = floats(inputs[0])
        return BoolArray(binary(Op.NOT_EQUAL, v, v))
    if uf == np.isfinite:
        v = floats(inputs[0])
        return BoolArray(binary(Op.EQUAL, v - v, 0.0))
    if uf == np.isinf:
        return BoolArray(binary(Op.EQUAL, record_unary(as_active(tape_of(floats(inputs[0])),
                                                                 floats(inputs[0])),
                                                       int(Op.ABS)), np.inf))
    if len(inputs) != 2:
        return None
    a, b = (as_bool(v).values if isinstance(v, (RecordedArray, Active)) else
            np.asarray(v, dtype=bool).astype(np.float64) for v in inputs)
    if uf in (np.logical_and, np.bitwise_and, np.multiply, np.minimum):
        return BoolArray(binary(Op.MUL, a, b))
    if uf in (np.logical_or, np.bitwise_or, np.add, np.maximum):
        return BoolArray(binary(Op.MAXIMUM, a, b))
    if uf in (np.logical_xor, np.bitwise_xor):
        return BoolArray(binary(Op.NOT_EQUAL, a, b))
    return None


def _fallback(uf, inputs, kwargs, method="__call__"):
    f = uf if method == "__call__" else getattr(uf, method)
    return f(*plain_operands(inputs), **plain_operands(kwargs))


# ---- functions -----------------------------------------------------------------

def array_function(func, args, kwargs):
    rule = FUNCTIONS.get(func)
    if rule is not None:
        out = rule(*args, **kwargs)
        if out is not NotImplemented:
            return out
    return func(*plain_operands(args), **plain_operands(kwargs))


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
    m = as_bool(condition).values
    tape = tape_of(m, *[v for v in (x, y) if isinstance(v, Active)])
    shape = np.broadcast_shapes(condition.shape, np.shape(x), np.shape(y))
    rm, keep_m = operand(tape, m, shape)
    ra, keep_a = operand(tape, floats(x), shape)
    rb, keep_b = operand(tape, floats(y), shape)
    out = layout.elementwise(new(tape, Op.SELECT, shape, [rm, ra, rb]), m, floats(x), floats(y))
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
    return IntegerArray(np.sum(as_bool(a).values, axis=axis, keepdims=keepdims))


def _any(a, axis=None, out=None, keepdims=False, *, where=None):
    if not isinstance(a, RecordedArray) or out is not None or where is not None:
        return NotImplemented
    count = np.sum(as_bool(a).values, axis=axis, keepdims=keepdims)
    return BoolArray(binary(Op.GREATER, count, 0.0))


def _all(a, axis=None, out=None, keepdims=False, *, where=None):
    if not isinstance(a, RecordedArray) or out is not None or where is not None:
        return NotImplemented
    misses = np.sum(1.0 - as_bool(a).values, axis=axis, keepdims=keepdims)
    return BoolArray(binary(Op.EQUAL, misses, 0.0))


FUNCTIONS = {np.take: take, np.clip: clip, np.where: where, np.sum: _sum, np.mean: _mean,
             np.cumsum: _cumsum,
             np.count_nonzero: _count_nonzero, np.any: _any, np.all: _all,
             np.piecewise: composed.piecewise,      # conditions of recorded comparisons
             np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim,
             np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis]}
