"""Complex intermediates of real functions.

A complex active array (:class:`ComplexActive`) is a pair of real active
arrays of one shape, its real and imaginary parts. Every operation on it is
written with the real recorded ops, so every sweep (values, tangents,
adjoints, Hessian-vector products, sparsity) handles it with no rule of its
own, and its derivatives are those of the two real parts: the gradient of a
real function of complex intermediates is its gradient with respect to the
real inputs (docs/complex.md). A complex value never leaves the recording:
turning it into a plain or a real array raises, and a recorded function
returns a real quantity (``np.abs(z)**2``, ``z.real``).

A real operand's imaginary part is an exact zero, so no term multiplies it
(NumPy computes ``inf * 0`` there, adsim leaves the term out).
"""
import numbers

import numpy as np

from .._opcodes import Opcode as Op
from .._active import Active, unhashable_message
from .._record import guards
from ..errors import ActiveValueLeak, UndefinedDerivative, UnsupportedOperation
from .core import as_active, broadcast_to, constant, copy, tape_of

_COMPLEX = np.dtype(np.complex128)


class ComplexActive:
    """A complex array being recorded: real active parts ``real`` and ``imag``.

    Made by adsim, never by hand: ``np.fft.fft(x)``, ``1j * x``, a real
    active array times a complex constant. Supports complex arithmetic
    (``+ - * / **``, unary ``-``), ``np.exp``, ``np.log``, ``np.sqrt``, the
    circular and hyperbolic sine, cosine and tangent, ``np.abs``,
    ``np.angle``, ``np.real``, ``np.imag``, ``np.conj``, sums, shape
    functions, indexing and assignment with NumPy's semantics; anything else
    raises :class:`adsim.errors.UnsupportedOperation` naming the function.
    """
    __slots__ = ("_re", "_im", "__weakref__")

    def __hash__(self):
        raise UnsupportedOperation(unhashable_message(self))

    def __init__(self, re, im):
        if not (isinstance(re, Active) and isinstance(im, Active) and re.shape == im.shape):
            raise TypeError("adsim: internal: a ComplexActive needs two active parts of one shape")
        self._re = re
        self._im = im

    # ---- parts and introspection ------------------------------------------
    @property
    def real(self):
        return self._re

    @real.setter
    def real(self, value):
        self._re[...] = value

    @property
    def imag(self):
        return self._im

    @imag.setter
    def imag(self, value):
        self._im[...] = value

    @property
    def shape(self):
        return self._re.shape

    @property
    def ndim(self):
        return self._re.ndim

    @property
    def size(self):
        return self._re.size

    @property
    def dtype(self):
        return _COMPLEX

    @property
    def T(self):
        return linear_parts(np.transpose, self)

    def __len__(self):
        return len(self._re)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        value = np.asarray(self._re.tape.slot_value(self._re.slot)).reshape(self.shape) + \
            1j * np.asarray(self._im.tape.slot_value(self._im.slot)).reshape(self.shape)
        return f"ComplexActive(shape={self.shape}, recorded value={np.array2string(value, threshold=8)})"

    # ---- leaks: the value would leave the recording, or lose its imaginary part
    def _leak(self, what):
        raise ActiveValueLeak(
            f"adsim: {what} of a complex active array (shape {self.shape}) would turn a recorded "
            f"value into a plain or real one, dropping its derivative or its imaginary part. "
            f"Complex values are intermediates: take a real quantity of them (np.real(z), "
            f"np.imag(z), np.abs(z)**2), which a recorded function may return")

    def __array__(self, dtype=None, copy=None):
        if is_constant(self) and (dtype is None or np.dtype(dtype).kind == "c"):
            # no derivative (a workspace of constants): its value, guarded as
            # a real constant is (np.asarray of each part); 0-d parts add to
            # a NumPy scalar, and __array__ must return an array
            value = np.asarray(np.asarray(self._re) + 1j * np.asarray(self._im))
            return value if dtype is None else value.astype(dtype)
        self._leak("conversion to a NumPy array (np.asarray, or assignment into a plain or a "
                   "real array)")

    def __float__(self):
        self._leak("float()")

    def __complex__(self):
        self._leak("complex()")

    def __int__(self):
        self._leak("int()")

    def __index__(self):
        self._leak("use as an index")

    def __bool__(self):
        self._leak("truth value (if z:)")

    def item(self, *args):
        self._leak(".item()")

    def tolist(self):
        self._leak(".tolist()")

    def astype(self, dtype, *args, **kwargs):
        if np.dtype(dtype).kind != "c":
            self._leak(f".astype({np.dtype(dtype)})")
        return self.copy()

    # ---- arithmetic ------------------------------------------------------
    def __add__(self, other):
        return binary(Op.ADD, self, other)

    def __radd__(self, other):
        return binary(Op.ADD, other, self)

    def __sub__(self, other):
        return binary(Op.SUB, self, other)

    def __rsub__(self, other):
        return binary(Op.SUB, other, self)

    def __mul__(self, other):
        return binary(Op.MUL, self, other)

    def __rmul__(self, other):
        return binary(Op.MUL, other, self)

    def __truediv__(self, other):
        return binary(Op.DIV, self, other)

    def __rtruediv__(self, other):
        return binary(Op.DIV, other, self)

    def __pow__(self, other, mod=None):
        return binary(Op.POW, self, other)

    def __rpow__(self, other, mod=None):
        return binary(Op.POW, other, self)

    def __matmul__(self, other):
        return bilinear(np.matmul, self, other)

    def __rmatmul__(self, other):
        return bilinear(np.matmul, other, self)

    def __neg__(self):
        return ComplexActive(-self._re, -self._im)

    def __pos__(self):
        return self.copy()

    def __abs__(self):
        return absolute(self)

    # in-place operators write into the parts (and so into every view of them);
    # z[k] of a 1-d array is a NumPy scalar, immutable: ``z[k] *= c`` makes a
    # new value, which Python then stores into z[k]
    def _assign(self, result):
        if self._re._shared_scalar:
            return result
        self[...] = result
        return self

    def __iadd__(self, other):
        return self._assign(self + other)

    def __isub__(self, other):
        return self._assign(self - other)

    def __imul__(self, other):
        return self._assign(self * other)

    def __itruediv__(self, other):
        return self._assign(self / other)

    def __ipow__(self, other):
        return self._assign(self ** other)

    def __eq__(self, other):
        raise unsupported_complex("==")

    def __ne__(self, other):
        raise unsupported_complex("!=")

    # ---- indexing: basic indexing gives views of both parts -----------------
    def __getitem__(self, key):
        return ComplexActive(self._re[key], self._im[key])

    def __setitem__(self, key, value):
        re, im = parts(_stacked(value))
        self._re[key] = re
        self._im[key] = im

    # ---- methods (NumPy's ndarray names) ---------------------------------
    def conj(self):
        return conjugate(self)

    conjugate = conj

    def copy(self, order="K"):
        return ComplexActive(np.copy(self._re), np.copy(self._im))

    def sort(self, axis=-1, kind=None, order=None):
        """In place, in NumPy's order of complex numbers: by real part, ties
        by imaginary part (numpy.polynomial's roots end with ``r.sort()``).
        The permutation is np.lexsort of the parts: integer data that a
        replay computes again."""
        if order is not None:
            raise UnsupportedOperation("adsim: sort(order=...) sorts structured arrays; a "
                                       "complex array has no fields")
        axis = axis + self.ndim if axis < 0 else axis
        at = np.lexsort((self._im, self._re), axis=axis)
        re = np.take_along_axis(self._re, at, axis)
        im = np.take_along_axis(self._im, at, axis)
        self._re[...] = re
        self._im[...] = im

    def sum(self, *args, **kwargs):
        return linear_parts(np.sum, self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return linear_parts(np.mean, self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return linear_parts(np.cumsum, self, *args, **kwargs)

    def reshape(self, *shape, **kwargs):
        shape = shape[0] if len(shape) == 1 else shape
        return linear_parts(np.reshape, self, shape, **kwargs)

    def ravel(self, order="C"):
        return linear_parts(np.ravel, self, order)

    def flatten(self, order="C"):
        return linear_parts(np.ravel, self, order).copy()

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 else (axes or None)
        return linear_parts(np.transpose, self, axes)

    def squeeze(self, axis=None):
        return linear_parts(np.squeeze, self, axis)

    def dot(self, other):
        return bilinear(np.dot, self, other)

    # ---- NumPy protocols -------------------------------------------------
    def __array_ufunc__(self, uf, method, *inputs, **kwargs):
        return ufunc(uf, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        # the dispatch layer (adsim/_numpy_api.py), through the front end of
        # the real part: it sends functions without a rule of their own here
        return self._re.__array_function__(func, types, args, kwargs)


def _stacked(value, depth=0):
    """A (nested) list or tuple holding active values as the array NumPy
    would make of it, stacked through NumPy's dispatch (which brings it to
    adsim's joins); anything else as it is."""
    if not isinstance(value, (list, tuple)) or depth > 32:
        return value
    items = [_stacked(v, depth + 1) for v in value]
    if not any(isinstance(v, (Active, ComplexActive)) for v in items):
        return value
    return np.stack(items)


# ---- operands ---------------------------------------------------------------

def is_constant(z):
    """Whether a complex active array has no derivative (both parts are
    constants of the recording, as a workspace np.zeros(n, complex) is
    before an active value is written into it)."""
    return not any(p.tape.slot_is_varied(p.slot) for p in (z._re, z._im))


def workspace(value, tape):
    """A complex array just made by NumPy (np.zeros(n, complex), ...) as a
    complex active array of constants of ``tape``, so that active values can
    be written into it."""
    value = np.asarray(value)
    return ComplexActive(as_active(tape, np.ascontiguousarray(value.real, dtype=float)),
                         as_active(tape, np.ascontiguousarray(value.imag, dtype=float)))


def is_complex(v):
    """Whether ``v`` makes an operation complex (a complex active array, or
    complex constant data)."""
    if isinstance(v, (Active, float, int)):
        return False
    return isinstance(v, (ComplexActive, complex)) or np.iscomplexobj(v)


def parts(v):
    """(real part, imaginary part) of an operand: active arrays, plain float
    arrays or Python floats; a real operand's imaginary part is 0.0."""
    if isinstance(v, ComplexActive):
        return v._re, v._im
    if isinstance(v, Active):
        return v, 0.0
    if isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_)):
        c = complex(v)
        return c.real, c.imag
    if np.iscomplexobj(v):
        arr = np.asarray(v)
        return np.ascontiguousarray(arr.real, dtype=float), np.ascontiguousarray(arr.imag,
                                                                                 dtype=float)
    return constant(v), 0.0


def _shape(v):
    return v.shape if isinstance(v, (Active, ComplexActive)) else np.shape(v)


def _zero(v):
    return type(v) is float and v == 0.0


def _add(a, b):
    return b if _zero(a) else a if _zero(b) else a + b


def _sub(a, b):
    return a if _zero(b) else -b if _zero(a) else a - b


def _mul(a, b):
    return 0.0 if _zero(a) or _zero(b) else a * b


def make(re, im, shape, *operands):
    """The ComplexActive with parts ``re`` and ``im`` (active or plain) and
    ``shape``; plain parts become recorded constants. A part that is an
    operand (or an operand's part), as in ``x + 2j`` or ``z ** 1``, is
    copied: the new array owns its storage, so writing into it in place
    (``z *= 2``) leaves the operand alone, as NumPy's new array would."""
    tape = tape_of(*[v._re if isinstance(v, ComplexActive) else v for v in (re, im) + operands
                     if isinstance(v, (Active, ComplexActive))])
    shape = tuple(shape)
    held = [p for o in operands
            for p in ((o._re, o._im) if isinstance(o, ComplexActive) else (o,))]
    return ComplexActive(_part(tape, re, shape, held), _part(tape, im, shape, held))


def _part(tape, p, shape, held):
    if isinstance(p, Active):
        if p.shape != shape:
            return broadcast_to(p, shape)
        return copy(p) if any(p is h for h in held) else p
    return as_active(tape, np.broadcast_to(np.asarray(p, dtype=float), shape))


def unsupported_complex(name):
    return UnsupportedOperation(
        f"adsim: `{name}` is not supported on complex active arrays (complex intermediates "
        f"support + - * / **, exp, exp2, log, log2, log10, sqrt, sin, cos, tan, sinh, cosh, "
        f"tanh, arcsin, arccos, arctan, arcsinh, arctanh, abs, angle, "
        f"real, imag, conj, sums, shape functions, linalg.solve, inv, det, slogdet, eig, "
        f"eigvals, eigh, indexing and numpy.fft, see docs/complex.md); write it with those, or with the real "
        f"and imaginary parts z.real and z.imag")


# ---- elementwise -------------------------------------------------------------

def binary(code, a, b):
    """a <op> b where an operand is complex (active or constant)."""
    shape = np.broadcast_shapes(_shape(a), _shape(b))
    if code == Op.POW:
        return make(*_power(a, b), shape, a, b)
    (ar, ai), (br, bi) = parts(a), parts(b)
    if code == Op.ADD:
        return make(_add(ar, br), _add(ai, bi), shape, a, b)
    if code == Op.SUB:
        return make(_sub(ar, br), _sub(ai, bi), shape, a, b)
    if code == Op.MUL:
        return make(*_product(ar, ai, br, bi), shape, a, b)
    if code == Op.DIV:
        return make(*_quotient(ar, ai, br, bi), shape, a, b)
    raise unsupported_complex(f"numpy.{Op(code).name.lower()}")


def _product(ar, ai, br, bi):
    return _sub(_mul(ar, br), _mul(ai, bi)), _add(_mul(ar, bi), _mul(ai, br))


def _quotient(ar, ai, br, bi):
    if _zero(bi):                      # a real divisor
        return ar / br, (0.0 if _zero(ai) else ai / br)
    if not isinstance(br, Active) and not isinstance(bi, Active):    # a constant divisor
        c = 1.0 / (np.asarray(br) + 1j * np.asarray(bi))
        return _product(ar, ai, c.real, c.imag)
    d = br * br + bi * bi
    re, im = _product(ar, ai, br, -bi)
    return re / d, im / d


def _power(a, b):
    """Parts of a ** b where an operand is complex: binary powering for a
    constant integer exponent (exact at z = 0, as NumPy's), otherwise NumPy's
    principal value exp(b log a)."""
    p = _integer_exponent(b)
    if p is None or not (isinstance(a, ComplexActive) or is_complex(a)):
        return parts(exp(binary(Op.MUL, b, _log_of_base(a))))
    if p < 0:
        inv = binary(Op.DIV, 1.0, a)
        return _power(inv, -p)
    result = (1.0, 0.0)             # z**0 is 1
    base = parts(a)
    first = True
    while p:                           # binary powering: O(log p) products
        if p & 1:
            result = base if first else _product(*result, *base)
            first = False
        p >>= 1
        if p:
            base = _product(*base, *base)
    return result


def _log_of_base(a):
    """log a for a ** b = exp(b log a): a constant's principal logarithm, or
    the recorded one. A base of 0 is refused: log 0 has no derivative, and
    NumPy's 0 ** b is itself 0, 1 or NaN by cases."""
    if not isinstance(a, (Active, ComplexActive)):
        a = np.asarray(a, dtype=_COMPLEX)
        if np.any(a == 0):
            raise _zero_base()
        return np.log(a)
    re, im = parts(a)
    if not guards.recorded():                       # an integrand of quad (_record/guards.py)
        re, im = _recorded_value(re), _recorded_value(im)
    nonzero = re != 0.0 if _zero(im) else (re != 0.0) | (im != 0.0)
    if not np.all(nonzero):                         # a recorded branch: replays check it
        raise _zero_base()
    return log(a)


def _zero_base():
    return UndefinedDerivative(
        "adsim: complex a ** b with an exponent that is not a constant integer is "
        "exp(b log a), which has no derivative where the base a is 0; keep the base away from "
        "0, or use a constant integer exponent (z**2 is exact at 0)")


def _integer_exponent(b):
    if isinstance(b, (Active, ComplexActive)) or np.ndim(b) != 0 or np.iscomplexobj(b):
        return None
    v = float(np.asarray(b))
    return int(v) if v.is_integer() else None


def conjugate(z):
    re, im = parts(z)
    return make(np.copy(re) if isinstance(re, Active) else re, -im, _shape(z), z)


def absolute(z):
    """|z|; at z = 0 its derivative is taken as 0 (a recorded branch), so
    |z|**2 is differentiable everywhere, as it is mathematically. (In an
    integrand of quad the test reads the values: adsim/_record/guards.py.)"""
    re, im = parts(z)
    if not guards.recorded() and np.all(
            _recorded_value(re) ** 2 + _recorded_value(im) ** 2 > 0.0):
        return np.hypot(re, im)
    r2 = re * re + im * im
    nonzero = r2 > 0.0
    if np.all(nonzero):
        return np.hypot(re, im)
    safe = np.where(nonzero, r2, 1.0)
    return np.where(nonzero, np.sqrt(safe), 0.0)


def angle(z, deg=False):
    re, im = parts(z)
    a = np.arctan2(im, re)
    return a * (180.0 / np.pi) if deg else a


def exp(z):
    re, im = parts(z)
    e = np.exp(re)
    return make(e * np.cos(im), e * np.sin(im), _shape(z), z)


def log(z):
    """Principal logarithm: log|z| + i angle(z)."""
    re, im = parts(z)
    return make(0.5 * np.log(re * re + im * im), np.arctan2(im, re), _shape(z), z)


def sin(z):
    re, im = parts(z)
    return make(np.sin(re) * np.cosh(im), np.cos(re) * np.sinh(im), _shape(z), z)


def cos(z):
    re, im = parts(z)
    return make(np.cos(re) * np.cosh(im), -(np.sin(re) * np.sinh(im)), _shape(z), z)


def sinh(z):
    re, im = parts(z)
    return make(np.sinh(re) * np.cos(im), np.cosh(re) * np.sin(im), _shape(z), z)


def cosh(z):
    re, im = parts(z)
    return make(np.cosh(re) * np.cos(im), np.sinh(re) * np.sin(im), _shape(z), z)


def sqrt(z):
    """The principal square root, exp(log(z) / 2) (NumPy's branch cut, along
    the negative real axis); at z = 0, where its derivative 1 / (2 sqrt z)
    is infinite, it raises naming np.sqrt (the program wrote no power)."""
    try:
        return binary(Op.POW, z, 0.5)
    except UndefinedDerivative:
        raise UndefinedDerivative(
            "adsim: np.sqrt of a complex value that is 0 here has no derivative (that of "
            "sqrt(z), 1 / (2 sqrt(z)), is infinite at 0); keep its argument away from 0, as "
            "a grid point where it vanishes (sqrt(k**2 - q**2 + 0j) at q = k) does not") from None


# ---- inverse circular and hyperbolic functions --------------------------------
# Principal values, written with the recorded complex ops: off their branch
# cuts they are NumPy's (the cuts of sqrt and log lie where NumPy's do), and
# their derivatives exist. arcsinh(w) = log1p(u), u = w + w^2 / (sqrt(w^2 + 1) + 1)
# (that is w + sqrt(w^2 + 1) - 1, exact to rounding near w = 0) for Re w >= 0,
# and -arcsinh(-w) for Re w < 0 (no cancellation in w + sqrt(w^2 + 1));
# arcsin(z) = -i arcsinh(iz), arccos(z) = pi/2 - arcsin(z);
# arctanh(z) = (log1p(z) - log1p(-z)) / 2, arctan(z) = -i arctanh(iz).

def _recorded_value(v):
    if isinstance(v, Active):
        return np.asarray(v.tape.slot_value(v.slot)).reshape(v.shape)
    return np.asarray(v, dtype=float)


def _off_cut(name, along, across, cut):
    """Refuse elements on the branch cut of ``name``: ``across`` exactly 0 and
    |``along``| >= 1 (the branch points included). There NumPy's value
    depends on the sign of the zero, which the recording does not carry, and
    no derivative across the cut exists. Elements on the axis inside the cut's
    gap are guarded (a recorded test: a replay that moves one onto the cut
    records again, and refuses)."""
    on_axis = np.flatnonzero(_recorded_value(across) == 0.0)
    if on_axis.size == 0 or not isinstance(along, Active) and np.all(
            np.abs(np.ravel(_recorded_value(along))[on_axis]) < 1.0):
        return
    if isinstance(along, Active) and np.all(np.abs(np.ravel(along)[on_axis]) < 1.0):
        return
    emath = f"np.emath.{name} of the real part (NumPy's value on the +0 side), or " \
        if name in ("arcsin", "arccos", "arctanh") else ""
    raise UndefinedDerivative(
        f"adsim: numpy.{name} of a complex value on its branch cut ({cut}): NumPy's value "
        f"there depends on the sign of a zero part, which adsim's complex values do not "
        f"carry, and no derivative across the cut exists. Use {emath}keep the argument off "
        f"the cut (a small nonzero part across it, as an absorbing medium's index has)")


def _log1p(u):
    """log(1 + u), accurate for small u: log|1 + u| by log1p of 2 Re u + |u|^2."""
    ur, ui = parts(u)
    return make(0.5 * np.log1p(ur * (2.0 + ur) + _mul(ui, ui)), np.arctan2(ui, 1.0 + ur),
                _shape(u), u)


def _times_i(z, sign):
    """sign * i * z."""
    re, im = parts(z)
    return make(-sign * im if not _zero(im) else 0.0, sign * re, _shape(z), z)


def _arcsinh(z):
    re, _ = parts(z)
    s = np.where(re >= 0.0, 1.0, -1.0)              # recorded data: replays compute it again
    w = binary(Op.MUL, s, z)
    t = binary(Op.MUL, w, w)
    u = binary(Op.ADD, w, binary(Op.DIV, t, binary(Op.ADD, sqrt(binary(Op.ADD, t, 1.0)), 1.0)))
    return binary(Op.MUL, s, _log1p(u))


def _arctanh(z):
    return binary(Op.MUL, 0.5, binary(Op.SUB, _log1p(z), _log1p(binary(Op.MUL, -1.0, z))))


_REAL_CUT = "imaginary part 0, |real part| >= 1"
_IMAGINARY_CUT = "real part 0, |imaginary part| >= 1"


def arcsinh(z):
    re, im = parts(z)
    _off_cut("arcsinh", im, re, _IMAGINARY_CUT)
    return _arcsinh(z)


def arcsin(z, name="arcsin"):
    re, im = parts(z)
    _off_cut(name, re, im, _REAL_CUT)
    return _times_i(_arcsinh(_times_i(z, 1.0)), -1.0)


def arccos(z):
    re, im = parts(arcsin(z, "arccos"))
    return make(np.pi / 2 - re, -im, _shape(z), z)


def arctanh(z):
    re, im = parts(z)
    _off_cut("arctanh", re, im, _REAL_CUT)
    return _arctanh(z)


def arctan(z):
    re, im = parts(z)
    _off_cut("arctan", im, re, _IMAGINARY_CUT)
    return _times_i(_arctanh(_times_i(z, 1.0)), -1.0)


_UNARY = {
    np.negative: lambda z: -z, np.positive: lambda z: z.copy(),
    np.conjugate: conjugate, np.absolute: absolute, np.exp: exp, np.log: log,
    np.sin: sin, np.cos: cos, np.sinh: sinh, np.cosh: cosh, np.sqrt: sqrt,
    np.tan: lambda z: binary(Op.DIV, sin(z), cos(z)),
    np.tanh: lambda z: binary(Op.DIV, sinh(z), cosh(z)),
    np.square: lambda z: binary(Op.MUL, z, z), np.reciprocal: lambda z: binary(Op.DIV, 1.0, z),
    np.arcsin: arcsin, np.arccos: arccos, np.arctan: arctan, np.arcsinh: arcsinh,
    np.arctanh: arctanh, np.log10: lambda z: binary(Op.MUL, log(z), 1.0 / np.log(10.0)),
    np.log2: lambda z: binary(Op.MUL, log(z), 1.0 / np.log(2.0)),
    np.exp2: lambda z: exp(binary(Op.MUL, z, np.log(2.0))),
}
_BINARY = {np.add: Op.ADD, np.subtract: Op.SUB, np.multiply: Op.MUL, np.true_divide: Op.DIV,
           np.power: Op.POW}


def ufunc(uf, method, inputs, kwargs):
    """NumPy ufunc calls with a complex active operand."""
    if method != "__call__" or kwargs.get("out") is not None or \
            set(kwargs) - {"out"}:
        raise unsupported_complex(f"numpy.{uf.__name__}" + (f".{method}" if method !=
                                                            "__call__" else "") +
                                  (f" with arguments {sorted(kwargs)}" if kwargs else ""))
    if uf in _UNARY and len(inputs) == 1:
        return _UNARY[uf](inputs[0])
    if uf in _BINARY and len(inputs) == 2:
        return binary(_BINARY[uf], *inputs)
    if uf == np.matmul:
        return bilinear(np.matmul, *inputs)
    plain = _on_constant_values(uf, inputs, {})
    if plain is not None:
        return plain[0]
    raise unsupported_complex(f"numpy.{uf.__name__}")


# ---- array functions ---------------------------------------------------------

def linear_parts(func, z, *args, **kwargs):
    """``func`` (real-linear in its first argument, e.g. a sum or a reshape)
    applied to the real and imaginary parts of ``z``."""
    re, im = parts(z)
    if _zero(im):
        im = np.zeros(_shape(z))
    out_re, out_im = func(re, *args, **kwargs), func(im, *args, **kwargs)
    return make(out_re, out_im, _shape(out_re), z)


def sequence_parts(func, seq, *args, **kwargs):
    """``func`` joining the pieces of ``seq`` (concatenate, stack, ...),
    applied to their real parts and to their imaginary parts (each float64:
    a dtype= other than complex128 would change the values)."""
    dtype = kwargs.pop("dtype", None)
    if dtype is not None and np.dtype(dtype) != np.complex128:
        raise unsupported_complex(f"numpy.{func.__name__}(..., dtype={np.dtype(dtype).name})")
    pieces = [parts(p) for p in seq]
    re = [r for r, _ in pieces]
    im = [np.zeros(_shape(r)) if _zero(i) else i for r, i in pieces]
    out_re, out_im = func(re, *args, **kwargs), func(im, *args, **kwargs)
    return make(out_re, out_im, _shape(out_re), *seq)


def bilinear(func, a, b, *args, **kwargs):
    """``func`` bilinear in its two arguments (matmul, dot, outer):
    (ar + i ai)(br + i bi) term by term."""
    (ar, ai), (br, bi) = parts(a), parts(b)

    def term(x, y):
        return 0.0 if _zero(x) or _zero(y) else func(x, y, *args, **kwargs)
    re = _sub(term(ar, br), term(ai, bi))
    im = _add(term(ar, bi), term(ai, br))
    return make(re, im, _shape(re if not _zero(re) else im), a, b)


def _no_data_kwargs(func, name, *data):
    def call(z, *args, **kwargs):
        for key in data:
            if kwargs.get(key) is not None:
                raise unsupported_complex(f"{name}(..., {key}=...)")
        return linear_parts(func, z, *args, **kwargs)
    return call


def vdot(a, b):
    """np.vdot: the first operand conjugated, both flattened."""
    return bilinear(np.dot, conjugate(linear_parts(np.ravel, a)), linear_parts(np.ravel, b))


def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm of complex values: the vector norms and the matrix
    Frobenius, 1 and inf norms depend on the moduli |z| alone (the 2-norm
    and Frobenius norm are taken of the parts, differentiable at z = 0
    beside other values); the matrix 2, -2 and nuclear norms (singular
    values of the complex matrix) are spectral_norms.py's, which calls this
    for the others."""
    nd = len(_shape(x))
    matrix = nd == 2 if axis is None else np.ndim(axis) == 1 and len(axis) == 2
    if ord is None or ord == ("fro" if matrix else 2):
        re, im = parts(x)
        axes = tuple(np.atleast_1d(axis).tolist()) if axis is not None else None
        return np.sqrt(np.sum(re * re + im * im, axis=axes, keepdims=keepdims))
    if matrix and ord in (2, -2, "nuc"):
        raise unsupported_complex(f"numpy.linalg.norm(..., ord={ord!r}) of a matrix")
    return np.linalg.norm(absolute(x), ord, axis, keepdims)


def einsum(subscripts, *operands, **kwargs):
    """np.einsum of one operand (linear) or two (bilinear), complex ones."""
    if kwargs or not isinstance(subscripts, str) or len(operands) not in (1, 2):
        raise unsupported_complex("numpy.einsum with more than two operands or options")
    if len(operands) == 1:
        return linear_parts(lambda z: np.einsum(subscripts, z), operands[0])
    return bilinear(lambda a, b: np.einsum(subscripts, a, b), *operands)


_LINEAR_FIRST = (np.sum, np.mean, np.cumsum, np.reshape, np.ravel, np.transpose, np.squeeze,
                 np.expand_dims, np.flip, np.fliplr, np.flipud, np.roll, np.rot90, np.moveaxis,
                 np.swapaxes, np.take, np.repeat, np.tile, np.copy, np.broadcast_to, np.trace,
                 np.diagonal, np.diag, np.diagflat, np.tril, np.triu, np.atleast_1d, np.atleast_2d,
                 np.fft.fftshift, np.fft.ifftshift)
FUNCTIONS = {f: (lambda f: lambda z, *a, **k: linear_parts(f, z, *a, **k))(f)
             for f in _LINEAR_FIRST}
FUNCTIONS.update({
    f: (lambda f: lambda seq, *a, **k: sequence_parts(f, seq, *a, **k))(f)
    for f in (np.concatenate, np.stack, np.hstack, np.vstack)})
FUNCTIONS.update({f: (lambda f: lambda a, b: bilinear(f, a, b))(f)
                  for f in (np.dot, np.matmul, np.outer, np.inner)})
FUNCTIONS.update({
    np.diff: _no_data_kwargs(np.diff, "numpy.diff", "prepend", "append"),
    np.vdot: vdot, np.linalg.norm: norm, np.einsum: einsum,
    np.linalg.multi_dot: lambda arrays, *, out=None: _multi_dot(arrays, out),
    np.prod: lambda z, *args, **kwargs: _prod(z, *args, **kwargs),
    np.real: lambda z: parts(z)[0], np.imag: lambda z: _imag(z), np.angle: angle,
    np.shape: lambda z: _shape(z), np.ndim: lambda z: len(_shape(z)),
    np.size: lambda z, axis=None: z.size if axis is None else z.shape[axis],
    np.zeros_like: lambda z, dtype=None, *a, **k: _filled_like(z, 0.0, dtype),
    np.ones_like: lambda z, dtype=None, *a, **k: _filled_like(z, 1.0, dtype),
    np.iscomplex: lambda z: _imag(z) != 0, np.isreal: lambda z: _imag(z) == 0,
    np.iscomplexobj: lambda z: True, np.isrealobj: lambda z: False,
})


def _multi_dot(arrays, out):
    """np.linalg.multi_dot of complex operands: the products left to right
    (NumPy's choice of order changes only the rounding)."""
    if out is not None:
        raise unsupported_complex("numpy.linalg.multi_dot(..., out=...)")
    arrays = list(arrays)
    result = arrays[0]
    for a in arrays[1:]:            # np.dot: a 1-d first or last operand as NumPy takes it
        result = bilinear(np.dot, result, a)
    return result


def _prod(z, axis=None, **kwargs):
    """np.prod of complex values: the products of the slices along ``axis``
    one by one (``dtype``, ``out``, ``keepdims``, ``initial``, ``where``
    refused)."""
    if any(v is not None and v is not False for v in kwargs.values()):
        raise unsupported_complex(f"numpy.prod with arguments {sorted(kwargs)}")
    if axis is None:
        z, axis = linear_parts(np.ravel, z), 0
    z = linear_parts(np.moveaxis, z, axis, 0)
    result = z[0] if _shape(z)[0] else 1.0 + 0.0 * z[0:0].sum(axis=0)
    for i in range(1, _shape(z)[0]):
        result = binary(Op.MUL, result, z[i])
    return result


def _filled_like(z, fill, dtype):
    """np.zeros_like(z) and ones_like: a complex workspace of constants (so
    active values can be written into it, as into np.zeros(n, complex)); a
    real dtype gives NumPy's plain array."""
    if dtype is not None and np.dtype(dtype).kind != "c":
        return np.full(z.shape, fill, dtype)
    return workspace(np.full(z.shape, fill, _COMPLEX), z._re.tape)


def _on_constant_values(func, args, kwargs):
    """(func of plain values,) when the complex active arguments are
    constants and there is no real active one: a function without a complex
    rule then runs on NumPy's values (guarded), as for real constants."""
    leaves = [v for v in (*args, *kwargs.values()) if isinstance(v, (ComplexActive, Active))]
    if not leaves or not all(isinstance(v, ComplexActive) and is_constant(v) for v in leaves):
        return None
    return (func(*[np.asarray(v) if isinstance(v, ComplexActive) else v for v in args],
                 **{k: np.asarray(v) if isinstance(v, ComplexActive) else v
                    for k, v in kwargs.items()}),)


def _imag(v):
    re, im = parts(v)
    return np.zeros(_shape(v)) if _zero(im) else im


def array_function(func, args, kwargs):
    """NumPy array functions with a complex active argument (numpy.fft is
    dispatched before, in adsim/_numpy_api.py)."""
    impl = FUNCTIONS.get(func)
    if impl is None:
        plain = _on_constant_values(func, args, kwargs)
        if plain is not None:
            return plain[0]
        raise unsupported_complex(f"{getattr(func, '__module__', None) or 'numpy'}."
                                  f"{getattr(func, '__name__', func)}")
    return impl(*args, **kwargs)
