"""Integer and boolean data of a recording: the types and their conversions.

``x.astype(int)``, ``np.argmax(x)`` or ``np.searchsorted(table, x)`` of an
active array give an :class:`IntegerArray`; a comparison of active values
(``x > 0``) gives a :class:`BoolArray`. Both hold their values as a float
array of the tape without derivative (integers exact below 2**53, which a
recorded guard checks; booleans as 0.0 and 1.0), which every replay
computes again. They behave as NumPy's int64 and bool arrays where that can
be recorded — arithmetic and logic with NumPy's result types, indexing an
active array with integer data (a GATHER_AT op) or writing at it
(SCATTER_AT), ``np.where`` on a boolean mask (SELECT) — and the replay
reads the values (an index out of bounds raises ``IndexOutOfBounds``, an
``IndexError``).

Everywhere else (``table[i]`` of a plain array, ``x[mask]`` whose size
depends on the mask, ``if mask:``, ``range(i)``, functions and attributes
without a rule) they convert to a plain NumPy array under a guard that
the values stay exactly what they are: a replay where they differ raises
``BranchChanged``, so a converted value is never stale.

This module holds the data and those conversions. NumPy's protocols
(``__array_ufunc__``, ``__array_function__``) and the operators go to the
active array holding the values, whose front end hands them to the
dispatch layer (adsim/_numpy_api.py); it applies the rules of
``recorded_data``, which sit above this module.
"""
import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .core import binary, copy as copy_active, record_compare, tape_of
from .integers import current, frozen

# NumPy's own np.piecewise (while recording, the name is bound to a wrapper):
# recorded conditions reach it inside its list of conditions
_PIECEWISE = np.piecewise


class RecordedArray:
    """What integer and boolean data share (see the module)."""

    __array_priority__ = 1001.0        # above Active's: mixed operators come here
    __hash__ = None
    dtype = None

    def __init__(self, values):
        self.values = values           # an Active without derivative

    @property
    def shape(self):
        return self.values.shape

    @property
    def ndim(self):
        return len(self.values.shape)

    @property
    def size(self):
        return self.values.size

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape}, recorded value=" \
               f"{np.array2string(current_values(self), threshold=8)})"

    # ---- conversions to plain values (guarded) -------------------------------
    def __array__(self, dtype=None, copy=None):
        v = plain(self)
        return v if dtype is None else v.astype(dtype)

    def __getattr__(self, name):
        """ndarray attributes without a rule here: those of the plain value."""
        if name.startswith("__") or name == "values":
            raise AttributeError(name)
        return getattr(plain(self), name)

    def __index__(self):
        if self.shape:
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index "
                            f"(recorded data of shape {self.shape})")
        return int(plain(self))

    __int__ = __index__

    def __float__(self):
        return float(self.__index__())

    def __bool__(self):
        return truth(self)

    def __format__(self, spec):
        v = plain(self)
        return format(v[()] if not self.shape else v, spec)

    def __iter__(self):
        return iter(plain(self))

    def item(self, *args):
        return plain(self).item(*args)

    def tolist(self):
        return plain(self).tolist()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return astype(self, np.dtype(dtype))

    def copy(self, order="K"):
        return self

    def __setitem__(self, key, value):
        raise TypeError(f"adsim: {self.dtype} data computed from active values are read-only; "
                        f"make a plain copy to write into: np.array(a)")

    # ---- reshaping and indexing ------------------------------------------------
    def __getitem__(self, key):
        """Recorded data of the same type (integer data in the key are a
        recorded gather of the active array's indexing); a boolean-data key,
        whose result size depends on it, converts to plain."""
        parts = key if isinstance(key, tuple) else (key,)
        if any(isinstance(p, BoolArray) for p in parts):
            return plain(self)[plain_operands(key)]
        return type(self)(self.values[key])

    def reshape(self, *shape, order="C"):
        return type(self)(self.values.reshape(*shape, order=order))

    def ravel(self, order="C"):
        return type(self)(self.values.ravel(order))

    def flatten(self, order="C"):
        return type(self)(self.values.ravel(order).copy())

    @property
    def T(self):
        return type(self)(self.values.T)

    # ---- NumPy's protocols: to the dispatch layer, through the values' front end -------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return self.values.__array_ufunc__(ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if holds_recorded(args, kwargs) or func is _PIECEWISE:     # its list of conditions
            return self.values.__array_function__(func, types, args, kwargs)
        # recorded data only inside a list or tuple argument: no rule applies
        return func(*plain_operands(args), **plain_operands(kwargs))

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def any(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def all(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def __neg__(self):
        return self.values.__array_ufunc__(np.negative, "__call__", self)

    def __pos__(self):
        return self.values.__array_ufunc__(np.positive, "__call__", self)

    def __abs__(self):
        return self.values.__array_ufunc__(np.absolute, "__call__", self)

    def __invert__(self):
        return self.values.__array_ufunc__(np.invert, "__call__", self)

    def _binary(uf):
        def operator(self, other):
            return self.values.__array_ufunc__(uf, "__call__", self, other)
        return operator

    def _reflected(uf):
        def operator(self, other):
            return self.values.__array_ufunc__(uf, "__call__", other, self)
        return operator

    __add__, __radd__ = _binary(np.add), _reflected(np.add)
    __sub__, __rsub__ = _binary(np.subtract), _reflected(np.subtract)
    __mul__, __rmul__ = _binary(np.multiply), _reflected(np.multiply)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _reflected(np.true_divide)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _reflected(np.floor_divide)
    __mod__, __rmod__ = _binary(np.remainder), _reflected(np.remainder)
    __pow__, __rpow__ = _binary(np.power), _reflected(np.power)
    __and__, __rand__ = _binary(np.bitwise_and), _reflected(np.bitwise_and)
    __or__, __ror__ = _binary(np.bitwise_or), _reflected(np.bitwise_or)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _reflected(np.bitwise_xor)
    __lshift__, __rlshift__ = _binary(np.left_shift), _reflected(np.left_shift)
    __rshift__, __rrshift__ = _binary(np.right_shift), _reflected(np.right_shift)
    __matmul__, __rmatmul__ = _binary(np.matmul), _reflected(np.matmul)
    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)
    del _binary, _reflected


class IntegerArray(RecordedArray):
    """int64 data computed from active values, recorded (see the module)."""

    dtype = np.dtype(np.int64)


class BoolArray(RecordedArray):
    """Booleans computed from active values (a comparison), recorded (see the
    module)."""

    dtype = np.dtype(np.bool_)


# ---- conversions -------------------------------------------------------------------

def _typed(values, dtype):
    """Float values held by recorded data as NumPy's values of ``dtype``."""
    return np.asarray(values != 0.0) if dtype == np.bool_ else values.astype(dtype)


def current_values(a):
    """The values ``a`` holds now (no guard: for display and shapes only)."""
    return _typed(current(a.values), a.dtype)


def plain(a):
    """``a`` as a plain array of its dtype, guarded to stay exactly that."""
    return _typed(frozen(a.values, ""), a.dtype)


def plain_operands(obj, depth=0):
    """``obj`` with the recorded data in it (also in lists, tuples and dicts)
    as plain values (guarded)."""
    if isinstance(obj, RecordedArray):
        return plain(obj)
    if isinstance(obj, (list, tuple)) and depth < 8:
        return type(obj)(plain_operands(o, depth + 1) for o in obj)
    if isinstance(obj, dict) and depth < 8:
        return {k: plain_operands(o, depth + 1) for k, o in obj.items()}
    return obj


def holds_recorded(args, kwargs):
    """Is recorded data among the arguments (NumPy dispatches functions on
    some arguments only: np.take not on its indices)?"""
    return any(isinstance(v, RecordedArray) for v in (*args, *kwargs.values()))


def truth(a):
    """``bool(a)`` of one element: a recorded test (the replay checks it)."""
    if a.size != 1:
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")
    tape = tape_of(a.values)
    outcome = record_compare(tape, CompareKind.CMP_NE, a.values.slot, tape.const_ref(0.0),
                             a.shape)
    return bool(outcome.reshape(()))


def floats(v):
    """An operand of a recorded op: recorded data as their float values,
    plain booleans as 0.0 and 1.0."""
    if isinstance(v, RecordedArray):
        return v.values
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == np.bool_):
        return np.asarray(v, dtype=np.float64)
    return v


def as_bool(v):
    """``v != 0`` as boolean data (booleans as they are)."""
    if isinstance(v, BoolArray):
        return v
    return BoolArray(binary(Op.NOT_EQUAL, floats(v), 0.0))


def astype(a, dtype):
    """``a.astype(dtype)``: float64 an active copy of the values, int64 and
    bool recorded data, other types plain (guarded)."""
    if dtype == a.dtype:
        return a
    if dtype == np.float64:
        return copy_active(a.values)
    if dtype == np.int64:
        return IntegerArray(a.values)              # booleans: 0 and 1
    if dtype == np.bool_:
        return as_bool(a)
    return plain(a).astype(dtype)
