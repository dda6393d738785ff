"""Integer data of a recording: ``x.astype(int)`` of an active array.

An :class:`IntegerArray` holds integers computed from the inputs as a float
array of the tape (a rounding op's result: exact below 2**53, which a
recorded guard checks). It behaves as NumPy's int64 array where that can be
recorded — integer arithmetic, ``clip``/``minimum``/``maximum``, conversion
to float, indexing an active array (``u[i]``, ``u[:, i]``, ``np.take``) —
and every replay computes the integers again: indexing is a GATHER_AT op
whose indices the replay reads and bounds-checks (``IndexOutOfBounds``, an
``IndexError``, where NumPy would raise one).

Everywhere else (``table[i]`` of a plain array, ``range(i)``, comparisons,
``int(i)``, functions without a rule here) it converts to a plain int64
array under a guard that the integers stay exactly what they are: a replay
where they differ raises ``BranchChanged``, so a converted value is never
stale. The rules live in ``integer_data``.
"""
import numpy as np


def _rules():
    from . import integer_data
    return integer_data


class IntegerArray:
    """int64 data computed from active values, recorded (see the module)."""

    __array_priority__ = 1001.0        # above Active's: mixed operators come here
    __hash__ = None

    def __init__(self, values):
        self.values = values           # an Active of integral floats, no derivative

    # ---- what it is --------------------------------------------------------
    dtype = np.dtype(np.int64)

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
        return f"IntegerArray(shape={self.shape}, recorded value=" \
               f"{np.array2string(_rules().current_integers(self), threshold=8)})"

    # ---- conversions to plain values (guarded) -------------------------------
    def __array__(self, dtype=None, copy=None):
        v = _rules().plain(self)
        return v if dtype is None else v.astype(dtype)

    def __index__(self):
        if self.shape:
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index "
                            f"(integer data of shape {self.shape})")
        return int(_rules().plain(self))

    __int__ = __index__

    def __float__(self):
        return float(self.__index__())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(_rules().plain(self).reshape(()))

    def __format__(self, spec):
        return format(_rules().plain(self)[()] if not self.shape else _rules().plain(self), spec)

    def __iter__(self):
        return iter(_rules().plain(self))

    def item(self, *args):
        return _rules().plain(self).item(*args)

    def tolist(self):
        return _rules().plain(self).tolist()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return _rules().astype(self, np.dtype(dtype))

    def copy(self):
        return self

    def __setitem__(self, key, value):
        raise TypeError("adsim: integer data computed from active values (x.astype(int)) are "
                        "read-only; make a plain copy to write into: np.array(i)")

    # ---- recorded operations ---------------------------------------------------
    def __getitem__(self, key):
        return _rules().index_integers(self, key)

    def reshape(self, *shape, order="C"):
        return IntegerArray(self.values.reshape(*shape, order=order))

    def ravel(self, order="C"):
        return IntegerArray(self.values.ravel(order))

    def flatten(self, order="C"):
        return IntegerArray(self.values.ravel(order).copy())

    @property
    def T(self):
        return IntegerArray(self.values.T)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _rules().ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _rules().array_function(func, args, kwargs)

    def __neg__(self):
        return _rules().ufunc(np.negative, "__call__", (self,), {})

    def __pos__(self):
        return self

    def __abs__(self):
        return _rules().ufunc(np.absolute, "__call__", (self,), {})


def _operator(uf, reflected=False):
    if reflected:
        return lambda self, other: _rules().ufunc(uf, "__call__", (other, self), {})
    return lambda self, other: _rules().ufunc(uf, "__call__", (self, other), {})


for _name, _uf in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                   ("mod", np.remainder), ("pow", np.power), ("and", np.bitwise_and),
                   ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                   ("rshift", np.right_shift), ("matmul", np.matmul)):
    setattr(IntegerArray, f"__{_name}__", _operator(_uf))
    setattr(IntegerArray, f"__r{_name}__", _operator(_uf, reflected=True))
for _name, _uf in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)):
    setattr(IntegerArray, f"__{_name}__", _operator(_uf))
