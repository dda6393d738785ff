"""Integer and boolean data of a recording.

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
without a rule here) they convert to a plain NumPy array under a guard that
the values stay exactly what they are: a replay where they differ raises
``BranchChanged``, so a converted value is never stale. The rules live in
``recorded_data``.
"""
import numpy as np


def _rules():
    from . import recorded_data
    return recorded_data


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
               f"{np.array2string(_rules().current_values(self), threshold=8)})"

    # ---- conversions to plain values (guarded) -------------------------------
    def __array__(self, dtype=None, copy=None):
        v = _rules().plain(self)
        return v if dtype is None else v.astype(dtype)

    def __getattr__(self, name):
        """ndarray attributes without a rule here: those of the plain value."""
        if name.startswith("__") or name == "values":
            raise AttributeError(name)
        return getattr(_rules().plain(self), name)

    def __index__(self):
        if self.shape:
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index "
                            f"(recorded data of shape {self.shape})")
        return int(_rules().plain(self))

    __int__ = __index__

    def __float__(self):
        return float(self.__index__())

    def __bool__(self):
        return _rules().truth(self)

    def __format__(self, spec):
        v = _rules().plain(self)
        return format(v[()] if not self.shape else v, spec)

    def __iter__(self):
        return iter(_rules().plain(self))

    def item(self, *args):
        return _rules().plain(self).item(*args)

    def tolist(self):
        return _rules().plain(self).tolist()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return _rules().astype(self, np.dtype(dtype))

    def copy(self, order="K"):
        return self

    def __setitem__(self, key, value):
        raise TypeError(f"adsim: {self.dtype} data computed from active values are read-only; "
                        f"make a plain copy to write into: np.array(a)")

    # ---- recorded operations ---------------------------------------------------
    def __getitem__(self, key):
        return _rules().index_recorded(self, key)

    def reshape(self, *shape, order="C"):
        return type(self)(self.values.reshape(*shape, order=order))

    def ravel(self, order="C"):
        return type(self)(self.values.ravel(order))

    def flatten(self, order="C"):
        return type(self)(self.values.ravel(order).copy())

    @property
    def T(self):
        return type(self)(self.values.T)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _rules().ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _rules().array_function(func, args, kwargs)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def any(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def all(self, axis=None, out=None, keepdims=False, **kwargs):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def __neg__(self):
        return _rules().ufunc(np.negative, "__call__", (self,), {})

    def __pos__(self):
        return _rules().ufunc(np.positive, "__call__", (self,), {})

    def __abs__(self):
        return _rules().ufunc(np.absolute, "__call__", (self,), {})

    def __invert__(self):
        return _rules().ufunc(np.invert, "__call__", (self,), {})


class IntegerArray(RecordedArray):
    """int64 data computed from active values, recorded (see the module)."""

    dtype = np.dtype(np.int64)


class BoolArray(RecordedArray):
    """Booleans computed from active values (a comparison), recorded (see the
    module)."""

    dtype = np.dtype(np.bool_)


def _operator(uf, reflected=False):
    if reflected:
        return lambda self, other: _rules().ufunc(uf, "__call__", (other, self), {})
    return lambda self, other: _rules().ufunc(uf, "__call__", (self, other), {})


for _name, _uf in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                   ("mod", np.remainder), ("pow", np.power), ("and", np.bitwise_and),
                   ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                   ("rshift", np.right_shift), ("matmul", np.matmul)):
    setattr(RecordedArray, f"__{_name}__", _operator(_uf))
    setattr(RecordedArray, f"__r{_name}__", _operator(_uf, reflected=True))
for _name, _uf in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)):
    setattr(RecordedArray, f"__{_name}__", _operator(_uf))
