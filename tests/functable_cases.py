"""The function table of tests/test_function_table.py: for every NumPy and
SciPy function, ufunc method and ndarray method adsim records, the calls
that exercise it.

``CASES`` maps the callable itself (``np.sum``, ``np.add.reduce``,
``scipy.special.gammaln``, ``scipy.stats.norm.logpdf``; ``"ndarray.sum"``
for a method of an active array) to a list of :class:`Case`: a function of
one input ``x`` of the case's shape that builds the arguments and calls it.
Each is checked for values, tangents, adjoints, Hessian-vector products,
the complex step, sparsity patterns and a tape file's copy. ``VALUE_ONLY`` lists the callables
without a derivative (shapes, comparisons, orderings); their cases are
checked for values. ``REFUSED`` lists calls adsim must refuse with a typed
error. Adding a function is one line in one of these tables.
"""
import copy
import importlib
import inspect
import itertools
import math
import operator
import pickle
import types
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.integrate
import scipy.interpolate as interpolate
import scipy.linalg as sl
import scipy.optimize
import scipy.ndimage as ndimage
import scipy.signal as signal
import scipy.spatial.distance as distance
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as sparse_linalg
import scipy.special as sc
import scipy.fft
from scipy.fft import _backend as scipy_fft_backend
import scipy.fftpack as fftpack
import scipy.stats as st

import adsim
from adsim import ops
from adsim._numpy_api import ufunc_name

MODES = ("value", "forward", "reverse", "hvp", "complex_step", "sparsity", "saved")


def _unique_rebuilt(x):
    """``x`` again from np.unique's values and inverse."""
    values, inverse = np.unique(x, return_inverse=True)
    return values[inverse]


def _unique_fields(result, k):
    """One active array of a NumPy 2 unique_* result (``k``: how many fields
    it has): the values, scaled by the counts, shifted by the indices, and
    gathered by the inverse where it has them."""
    if k == 0:
        return result
    values = result.values
    if k in (2, 4):
        values = values * result.counts
    if k == 4:
        values = values + result.indices
    if k in (3, 4):
        values = np.concatenate([values, np.ravel(values[result.inverse_indices])])
    return values


@dataclass(frozen=True)
class Case:
    """One call: ``f(x)`` for ``x`` of ``shape`` sampled in ``domain``."""

    f: object
    shape: tuple
    label: str = ""
    domain: tuple = (-2.0, 2.0)
    no_complex_step: str = ""   # why the complex step does not apply to this call
    bugs: tuple = ()            # ((mode or "all", what is wrong + a reproducer), ...)


def case(f, shape, label="", domain=(-2.0, 2.0), cs="", bugs=()):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return Case(f, shape, label, tuple(domain), cs, tuple(bugs))


def bug(reason, *modes):
    """``bugs=`` entries: the modes (all when none) that fail, and why."""
    return tuple((m, reason) for m in (modes or ("all",)))


def numpy_accepts(f, shape, domain=(-2.0, 2.0)):
    """Whether NumPy computes ``f`` at a point of ``shape`` without error or
    warning: generated argument variants keep only what NumPy allows."""
    x = np.linspace(domain[0], domain[1], int(np.prod(shape)) + 2)[1:-1].reshape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            f(x)
        except (ValueError, TypeError, IndexError, RuntimeWarning, np.exceptions.AxisError):
            return False
    return True


# ---------------------------------------------------------------- known bugs

def known_bugs(key, c):
    """Bugs that follow from a case's shapes rather than its function (none
    known now; empty tapes once failed in every sweep)."""
    return ()


# ---------------------------------------------------------------- constants

REAL_DTYPE = "a real dtype= or out= discards the imaginary part"
REAL_X = "np.interp takes real points x only"
SCIPY_COMPLEX_LOSES = ("SciPy's complex routine loses an imaginary part of 1e-20 here (Im f / h "
                       "comes out ~1e3-1e4)")

INT3 = np.array([1, 2, 3])
LAMBERTW_REAL = "the real part of SciPy's complex result drops the complex step"
F32_3 = np.array([0.5, 1.5, 2.5], dtype=np.float32)
BOOL3 = np.array([True, False, True])
C3 = np.array([0.7, -1.3, 2.1])
A23 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
A33 = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [-0.3, 0.25, 1.0]])
UNEVEN5 = np.array([0.0, 0.3, 0.5, 1.2, 1.4])
SPD3 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
TABLE5 = np.array([-1.0, 0.05, 0.55, 2.0, 3.5])      # sorted; no sample lies on it
FP5 = np.array([1.0, -2.0, 0.5, 4.0, 3.0])


KDE_CS = "SciPy's compiled code takes float64 data"
FFTPACK_REAL = "scipy.fftpack's rfft and irfft take real input only"
HERMITIAN = "SciPy reads a complex band as Hermitian: the complex step is conjugated"
KDE_DATA = np.array([0.1, 0.5, 1.3, 2.0, -0.4, 0.9])
KDE_POINTS = np.array([-0.5, 0.0, 0.7, 1.5])
# peaks at knots, samples far apart from each other and from the widths' heights
PEAK_BASE = np.interp(np.arange(20.0), [0.0, 5.0, 10.0, 15.0, 20.0], [0.0, 4.1, 0.9, 3.3, 0.2]) \
    + 0.05 * np.sin(np.arange(20.0))


def _peak_properties(s, found):
    peaks, props = found
    return np.concatenate([s[peaks], props["prominences"], props["widths"]])


def spd(x):
    """A symmetric positive definite k x k matrix of k values."""
    k = x.size
    return SPD3[:k, :k] + np.outer(x, x)


def general(x):
    """A well-conditioned k x k matrix of k * k values."""
    k = math.isqrt(x.size)
    return x.reshape(k, k) + 4.0 * np.eye(k)


# ---------------------------------------------------------------- generators

SHAPES_1 = ((), (4,), (2, 3), (0,))
SHAPES_2 = (((3,), (3,)), ((2, 3), (3,)), ((), (2, 2)), ((2, 1), (1, 3)), ((0,), ()))


def _split(x, shapes):
    out, start = [], 0
    for s in shapes:
        n = int(np.prod(s))
        out.append(x[start:start + n].reshape(s))
        start += n
    return out


def unary(uf, domain=(-2.0, 2.0), shapes=SHAPES_1, cs=""):
    """A unary function at every shape of ``shapes``."""
    return [case(uf, s, str(s), domain, cs) for s in shapes]


def binary(uf, domain=(-2.0, 2.0), constants=(INT3, F32_3, 2, 1.5), cs=""):
    """A binary function: two active operands broadcast against each other,
    one operand constant (integer, float32, Python scalars) on either side,
    and the same operand twice."""
    cases = []
    for sa, sb in SHAPES_2:
        n = int(np.prod(sa)) + int(np.prod(sb))
        cases.append(case((lambda sa, sb: lambda x: uf(*_split(x, (sa, sb))))(sa, sb), n,
                          f"{sa}x{sb}", domain, cs))
    for c in constants:
        what = f"{np.asarray(c).dtype}{np.shape(c)}"
        cases.append(case((lambda c: lambda x: uf(x, c))(c), np.shape(c) or (2,),
                          f"active,{what}", domain, cs))
        cases.append(case((lambda c: lambda x: uf(c, x))(c), np.shape(c) or (2,),
                          f"{what},active", domain, cs))
    cases.append(case(lambda x: uf(x, x), (3,), "same operand", domain, cs))
    return cases


def variants(f, shapes, label, domain=(-2.0, 2.0), cs="", bugs=None, **grid):
    """``f(x, **kw)`` for every shape and every combination of the keyword
    values in ``grid`` that NumPy accepts (JAX-style argument variants);
    ``bugs(shape, kw)`` gives the known bugs of a variant."""
    names = list(grid)
    cases = []
    for shape in shapes:
        for values in itertools.product(*grid.values()):
            kw = dict(zip(names, values))
            g = (lambda kw: lambda x: f(x, **kw))(kw)
            if numpy_accepts(g, shape, domain):
                text = ",".join(f"{k}={v}" for k, v in kw.items())
                cases.append(case(g, shape, f"{label}{shape}{text}", domain, cs,
                                  bugs(shape, kw) if bugs else ()))
    return cases


def reduction(fn, shapes=((4,), (2, 3), (), (0,), (2, 0)), axes=(None, 0, 1, -1, (0, 1)),
              keepdims=(False, True), label="", domain=(-2.0, 2.0), cs="", bugs=None, **kw):
    """``fn(x, axis=..., keepdims=..., **kw)`` where NumPy allows it."""
    return variants(lambda x, **g: fn(x, **g, **kw), shapes, label, domain, cs, bugs,
                    axis=axes, keepdims=keepdims)


def method(name):
    """``x.name(*args, **kw)`` as a function of ``x``."""
    return lambda x, *args, **kw: getattr(x, name)(*args, **kw)


# ---------------------------------------------------------------- ufuncs

def _op_table_ufuncs():
    """The elementwise rows of adsim/ops.py, each at its sampling domain."""
    out = {}
    for spec in ops.TABLE:
        for uf in spec.numpy if spec.family in ("unary", "binary") else ():
            out[uf] = (unary if spec.family == "unary" else binary)(uf, spec.domain)
    return out


NANS = np.array([np.nan, 1.0, np.nan, -1.0])


def _accumulate_cases(uf, cs=""):
    return variants(lambda x, axis: uf.accumulate(x, axis=axis), ((4,), (2, 3), (0,)),
                    "", cs=cs, axis=(0, 1, -1))


def _parts(z):
    """A complex result as its real and imaginary parts (a real one as it is)."""
    return np.stack([np.real(z), np.imag(z)]) if np.iscomplexobj(z) else z


EMATH_CS = ("numpy.emath's dtype follows the values: a complex input takes another path, "
            "and the cases read real and imaginary parts")


EMATH_SIGNS, EMATH_SHIFTS = np.array([1.0, -1.0, 1.0, -1.0]), np.array([0.0, 0.0, 1.3, 1.3])


def _emath_cases(f, inside=(0.1, 0.9)):
    """numpy.emath's ``f`` where it is real, and where it leaves the real domain
    (some elements, or all), away from the branch points 0 and +-1."""
    return [case(f, 4, "real", inside, EMATH_CS),
            case(lambda x: _parts(f(EMATH_SIGNS * (x + EMATH_SHIFTS))), 4, "complex",
                 (0.2, 0.7), EMATH_CS),
            case(lambda x: _parts(f(-1.0 - x)), 3, "all outside", (0.2, 0.9), EMATH_CS)]


def _reduceat_cases(uf, cs=""):
    """Segments of several entries, a single entry (the next index not
    larger), the last segment to the end; along either axis."""
    return [case(lambda x: uf.reduceat(x, [0, 2, 2, 5, 1]), 7, cs=cs),
            case(lambda x: uf.reduceat(x.reshape(2, 3), [0, 2], axis=1), 6, "axis 1", cs=cs),
            case(lambda x: uf.reduceat(x.reshape(3, 2), [1, 0]), 6, "axis 0", cs=cs)]


def _into(x, at, values, n=4):
    """``at(y, indices, values)`` into an active copy of ``x[:n]``."""
    y = x[:n] * 1.0
    at(y, np.array([0, 2, 2, 1]), values)
    return y


UFUNCS = {
    **_op_table_ufuncs(),
    np.positive: unary(np.positive),
    np.floor: unary(np.floor), np.ceil: unary(np.ceil), np.trunc: unary(np.trunc),
    np.rint: unary(np.rint),
    np.floor_divide: [
        case(lambda x: np.floor_divide(x, 1.0), 4), case(lambda x: x // 2, (2, 3), "x // 2"),
        case(lambda x: np.floor_divide(1.0, x), 4, "1 // x", (0.55, 2.0))],
    np.remainder: [
        case(lambda x: np.remainder(x, 1.0), 4), case(lambda x: x % 2, (2, 3), "x % 2"),
        case(lambda x: np.remainder(1.0, x), 4, "1 % x", (0.55, 2.0)),
        case(lambda x: np.remainder(x[:3] + 2.0, x[3:] + 3.0), 6, "both active", (0.05, 0.95))],
    np.fmod: [
        case(lambda x: np.fmod(x, [1.0, 2.0, 1.0]), 3),
        case(lambda x: np.fmod(1.0, x), 4, "1 fmod x", (0.55, 2.0)),
        case(lambda x: np.fmod(x[:3] + 2.0, x[3:] + 3.0), 6, "both active", (0.05, 0.95))],
    np.logaddexp: binary(np.logaddexp), np.logaddexp2: binary(np.logaddexp2),
    np.deg2rad: unary(np.deg2rad), np.rad2deg: unary(np.rad2deg),
    np.radians: unary(np.radians), np.degrees: unary(np.degrees),
    np.conjugate: unary(np.conjugate),
    np.heaviside: [
        case(lambda x: np.heaviside(x, 0.5), 4),
        case(lambda x: np.heaviside(np.array([0.0, 1.0, -1.0, 0.0]), x), 4, "x1 constant with 0"),
        case(lambda x: np.heaviside(x[:3], x[3:]), 6, "both active")],
    np.fmax: binary(np.fmax) + [case(lambda x: np.fmax(x, NANS), 4, "NaN constant"),
                                case(lambda x: np.fmax(NANS[::-1], x), 4, "NaN constant first")],
    np.fmin: binary(np.fmin) + [case(lambda x: np.fmin(x, NANS), 4, "NaN constant")],
    np.add.reduce: reduction(np.add.reduce),
    np.multiply.reduce: reduction(np.multiply.reduce),
    np.maximum.reduce: reduction(np.maximum.reduce),
    np.minimum.reduce: reduction(np.minimum.reduce),
    np.logaddexp.reduce: reduction(np.logaddexp.reduce, cs="NumPy's logaddexp takes real input"),
    np.logaddexp2.reduce: reduction(np.logaddexp2.reduce, cs="NumPy's logaddexp2 takes real "
                                                            "input"),
    np.add.reduceat: _reduceat_cases(np.add),
    np.multiply.reduceat: _reduceat_cases(np.multiply),
    np.maximum.reduceat: _reduceat_cases(np.maximum),
    np.minimum.reduceat: _reduceat_cases(np.minimum),
    np.logaddexp.reduceat: _reduceat_cases(np.logaddexp, "NumPy's logaddexp takes real input"),
    np.logaddexp2.reduceat: _reduceat_cases(np.logaddexp2, "NumPy's logaddexp2 takes real input"),
    np.add.accumulate: _accumulate_cases(np.add),
    np.multiply.accumulate: _accumulate_cases(np.multiply),
    np.maximum.accumulate: _accumulate_cases(np.maximum),
    np.minimum.accumulate: _accumulate_cases(np.minimum),
    np.logaddexp.accumulate: _accumulate_cases(np.logaddexp, "NumPy's logaddexp takes real "
                                                             "input"),
    np.logaddexp2.accumulate: _accumulate_cases(np.logaddexp2, "NumPy's logaddexp2 takes real "
                                                               "input"),
    **{getattr(np.emath, name): _emath_cases(getattr(np.emath, name))
       for name in ("sqrt", "log", "log2", "log10", "arcsin", "arccos", "arctanh")},
    np.emath.logn: [*_emath_cases(lambda x: np.emath.logn(3.0, x)),
                    case(lambda x: _parts(np.emath.logn(x[0], np.array([2.0, -3.0]))), 1,
                         "active base", (0.2, 0.9), EMATH_CS)],
    np.emath.power: [*_emath_cases(lambda x: np.emath.power(x, 1.5)),
                     case(lambda x: _parts(np.emath.power(np.array([-2.0, 3.0]), x)), 2,
                          "active exponent", (-1.0, 1.0), EMATH_CS)],
    np.add.at: [case(lambda x: _into(x, np.add.at, x[4:] ** 2), 8),
                case(lambda x: _into(x, np.add.at, 0.5), 4, "constant values"),
                case(lambda x: _add_at_into_zeros(x), 3, "into np.zeros",
                     cs="np.zeros(4) is a real array: complex values cannot be added into it")],
    np.subtract.at: [case(lambda x: _into(x, np.subtract.at, x[4:] ** 2), 8)],
    np.multiply.at: [case(lambda x: _into(x, np.multiply.at, x[4:]), 8),
                     case(lambda x: _into(x, np.multiply.at, 1.5), 4, "constant values")],
    np.divide.at: [case(lambda x: _into(x, np.divide.at, x[4:] ** 2 + 1.0), 8),
                   case(lambda x: _into(x, np.divide.at, 4.0), 4, "constant values")],
    # scatter-max: repeated positions take the larger value one after the other
    np.maximum.at: [case(lambda x: _into(x, np.maximum.at, x[4:]), 8,
                         cs="not holomorphic: maximum"),
                    case(lambda x: _into(x, np.maximum.at, 0.3), 4, "constant values",
                         cs="not holomorphic: maximum")],
    np.minimum.at: [case(lambda x: _into(x, np.minimum.at, x[4:]), 8,
                         cs="not holomorphic: minimum")],
}


def _add_at_into_zeros(x):
    y = np.zeros(4)                 # active while recording
    np.add.at(y, [0, 3, 3], x * x)
    return y


# ---------------------------------------------------------------- NumPy functions

def _axes_cases(f, shapes=((4,), (2, 3)), axes=(None, 0, -1), **grid):
    return variants(lambda x, **kw: f(x, **kw), shapes, "", axis=axes, **grid)


def _max_min(fn):
    return reduction(fn) + [
        case(lambda x: fn(x, initial=0.1), 4, "initial"),
        case(lambda x: fn(x.reshape(2, 2), axis=0, where=BOOL3[:2], initial=-3.0), 4,
             "where initial")]


def _spaced(x):
    """Sorted, well-separated values made of x (for coordinates)."""
    return np.cumsum(1.0 + 0.1 * x)


def _sorted_copy(x):
    y = x * 1.0
    y.sort()
    return y


def _copyto(x, **kw):
    y = np.zeros_like(x, shape=(2, 3))
    np.copyto(y, x[:3] ** 2, **kw)
    return y


def _into_zeros(write, x, shape, *args, **kw):
    """A workspace shaped ``shape`` (x's dtype: complex in the complex step),
    written by ``write(workspace, *args(x))``."""
    y = np.zeros_like(x, shape=shape)
    write(y, *[a(x) if callable(a) else a for a in args], **kw)
    return y


def _fill_diagonal(x, val, wrap=False, shape=(3, 3)):
    y = x.reshape(shape) * 1.0
    np.fill_diagonal(y, val, wrap=wrap)
    return y


NUMPY = {
    np.sum: reduction(np.sum) + [
        case(lambda x: np.sum(x, where=np.array([True, False, True, True])), 4, "where"),
        case(lambda x: np.sum(x.reshape(2, 2), axis=0, initial=1.5), 4, "initial"),
        case(lambda x: np.sum(x, dtype=np.float64), 4, "dtype", cs=REAL_DTYPE),
        case(lambda x: np.sum(x.reshape(2, 2), axis=1, out=np.zeros(2)), 4, "out", cs=REAL_DTYPE)],
    np.mean: reduction(np.mean) + [
        case(lambda x: np.mean(x, where=np.array([True, False, True, True])), 4, "where")],
    np.prod: reduction(np.prod) + [case(lambda x: np.prod(x, initial=2.0), 4, "initial")],
    np.max: _max_min(np.max), np.amax: _max_min(np.amax),
    np.min: _max_min(np.min), np.amin: _max_min(np.amin),
    np.cumsum: _axes_cases(np.cumsum, ((4,), (2, 3), (), (0,))),
    np.cumprod: _axes_cases(np.cumprod, ((4,), (2, 3), (), (0,))),
    np.dot: [
        case(lambda x: np.dot(x[:3], x[3:]), 6, "1-d . 1-d"),
        case(lambda x: np.dot(x.reshape(2, 3), C3), 6, "2-d . constant"),
        case(lambda x: np.dot(A23, x), 3, "constant . 1-d"),
        case(lambda x: np.dot(x[:6].reshape(2, 3), x[6:].reshape(3, 2)), 12, "2-d . 2-d"),
        case(lambda x: np.dot(x[0], x[1:]), 4, "0-d . 1-d"),
        case(lambda x: np.dot(x.reshape(2, 1, 2), x[:4].reshape(2, 2)), 4, "3-d . 2-d")],
    np.matmul: [
        case(lambda x: np.matmul(x[:6].reshape(2, 3), x[6:].reshape(3, 2)), 12, "2-d @ 2-d"),
        case(lambda x: x[:2] @ x[2:].reshape(2, 3), 8, "1-d @ 2-d"),
        case(lambda x: np.matmul(x.reshape(2, 3), C3), 6, "2-d @ constant 1-d"),
        case(lambda x: np.matmul(x[:3], x[3:]), 6, "1-d @ 1-d"),
        case(lambda x: np.matmul(x.reshape(2, 2, 3), A23.T), 12, "stack @ constant"),
        case(lambda x: np.matmul(A23, x.reshape(2, 3, 2)), 12, "constant @ stack"),
        case(lambda x: np.matmul(x[:4].reshape(1, 2, 2), x[4:].reshape(3, 2, 1)), 10,
             "broadcast batch")],
    np.vdot: [case(lambda x: np.vdot(x[:3], x[3:]), 6),
              case(lambda x: np.vdot(x.reshape(2, 3), A23), 6, "2-d constant")],
    np.inner: [case(lambda x: np.inner(x[:3], x[3:]), 6),
               case(lambda x: np.inner(x[0], x[1:]), 4, "0-d"),
               case(lambda x: np.inner(x.reshape(2, 3), A23), 6, "2-d")],
    np.outer: [case(lambda x: np.outer(x[:2], x[2:]), 5),
               case(lambda x: np.outer(C3, x.reshape(2, 2)), 4, "constant, 2-d flattened")],
    np.einsum: [
        case(lambda x: np.einsum("ij,jk->ik", x[:6].reshape(2, 3), x[6:].reshape(3, 2)), 12),
        case(lambda x: np.einsum("ii->", x.reshape(3, 3)), 9, "trace"),
        case(lambda x: np.einsum("ii->i", x.reshape(3, 3)), 9, "diagonal"),
        case(lambda x: np.einsum("ij->ji", x.reshape(2, 3)), 6, "transpose"),
        case(lambda x: np.einsum("i,i", x, x), 4, "implicit output, same operand"),
        case(lambda x: np.einsum("ij,ij->i", x.reshape(2, 3), A23), 6, "rowwise with constant"),
        case(lambda x: np.einsum("...ij,jk->...ik", x.reshape(2, 2, 3), A23.T), 12, "ellipsis"),
        case(lambda x: np.einsum(x.reshape(2, 3), [0, 1], C3, [1], [0]), 6, "sublists"),
        case(lambda x: np.einsum("i,j,k->ijk", x[:2], x[2:4], x[4:]), 6, "three operands"),
        case(lambda x: np.einsum("ij,jk,kl->il", x.reshape(2, 3), A33, x.reshape(3, 2),
                                 optimize=True), 6, "optimize")],
    np.trace: [case(lambda x: np.trace(x.reshape(3, 3)), 9),
               case(lambda x: np.trace(x.reshape(3, 3), offset=1), 9, "offset 1"),
               case(lambda x: np.trace(x.reshape(2, 3), offset=-1), 6, "offset -1"),
               case(lambda x: np.trace(x.reshape(2, 2, 3), axis1=0, axis2=2), 12, "axes")],
    np.reshape: [case(lambda x: np.reshape(x, (3, 2)), 6),
                 case(lambda x: np.reshape(x, (2, -1)), 6, "-1"),
                 case(lambda x: np.reshape(x, ()), 1, "to 0-d"),
                 case(lambda x: np.reshape(x, (1, 1)), (), "0-d to 2-d"),
                 case(lambda x: np.reshape(x, (2, 0)), 0, "empty")],
    np.ravel: [case(lambda x: np.ravel(x.reshape(2, 3)), 6), case(np.ravel, (), "0-d")],
    np.squeeze: [case(lambda x: np.squeeze(x.reshape(1, 3, 1)), 3),
                 case(lambda x: np.squeeze(x.reshape(1, 3, 1), axis=2), 3, "axis"),
                 case(lambda x: np.squeeze(x.reshape(1, 1)), 1, "to 0-d")],
    np.expand_dims: [case(lambda x: np.expand_dims(x, 0), 3),
                     case(lambda x: np.expand_dims(x, -1), (2, 2), "-1"),
                     case(lambda x: np.expand_dims(x, (0, 2)), 3, "tuple"),
                     case(lambda x: np.expand_dims(x, 0), (), "0-d")],
    np.transpose: [case(np.transpose, (2, 3)),
                   case(lambda x: np.transpose(x.reshape(2, 3, 2), (1, 0, 2)), 12, "axes"),
                   case(np.transpose, 3, "1-d"), case(np.transpose, (), "0-d")],
    np.copy: [case(np.copy, 4), case(np.copy, (), "0-d"), case(np.copy, (2, 0), "empty")],
    np.broadcast_to: [case(lambda x: np.broadcast_to(x, (2, 3)), 3),
                      case(lambda x: np.broadcast_to(x, (2, 2)), (), "0-d"),
                      case(lambda x: np.broadcast_to(x.reshape(2, 1), (2, 3)), 2, "column")],
    np.broadcast_arrays: [case(lambda x: np.stack(np.broadcast_arrays(x[:3], x[3:].reshape(2, 1))),
                               5),
                          case(lambda x: np.broadcast_arrays(x, C3)[0] * np.broadcast_arrays(
                              x, C3)[1], 3, "with a plain array")],
    np.where: [
        case(lambda x: np.where(x > 0, x ** 2, np.sin(x)), 6),
        case(lambda x: np.where(BOOL3, x, 0.5), 3, "constant condition"),
        case(lambda x: np.where(BOOL3[:2, None], x[:3], x[3:, None]), 5, "broadcast"),
        case(lambda x: np.where(x[0] > 0, x[1:], -x[1:]), (3,), "0-d condition")],
    np.clip: [case(lambda x: np.clip(x, -1.0, 1.0), 6),
              case(lambda x: np.clip(x, None, 0.0), 4, "a_min None"),
              case(lambda x: np.clip(x[:4], x[4], x[5]), 6, "active bounds"),
              case(lambda x: np.clip(x, C3 - 1.0, 1.0), 3, "array bound"),
              case(lambda x: np.clip(x, -1.0, 1.0), (), "0-d")],
    np.pad: [case(lambda x: np.pad(x, 1), 3),
             case(lambda x: np.pad(x.reshape(2, 2), ((1, 0), (0, 2))), 4, "widths"),
             case(lambda x: np.pad(x, 2, constant_values=0.5), 3, "constant_values"),
             case(lambda x: np.pad(x[1:], 1, constant_values=x[0]), 4, "active constant_values"),
             case(lambda x: np.pad(x, 2, mode="edge"), 3, "edge"),
             case(lambda x: np.pad(x, 2, mode="reflect"), 3, "reflect"),
             case(lambda x: np.pad(x, 2, mode="symmetric"), 3, "symmetric"),
             case(lambda x: np.pad(x, (1, 2), mode="wrap"), 3, "wrap"),
             case(lambda x: np.pad(x, 2, mode="maximum", stat_length=2), 3, "maximum"),
             case(lambda x: np.pad(x.reshape(2, 3), (1, 2), mode="mean"), 6, "mean corners"),
             case(lambda x: np.pad(x, (2, 1), mode="median"), 4, "median"),
             case(lambda x: np.pad(x.reshape(2, 2), 2, mode="linear_ramp", end_values=(1.5, -1.0)),
                  4, "linear_ramp"),
             case(lambda x: np.pad(x, 5, mode="reflect", reflect_type="odd"), 3, "odd reflect"),
             case(lambda x: np.pad(x, (4, 1), mode="symmetric", reflect_type="odd"), 3,
                  "odd symmetric")],
    np.diff: _axes_cases(np.diff, ((5,), (2, 3)), (0, -1), n=(1, 2)) + [
        case(lambda x: np.diff(x, prepend=0.5, append=x[0]), 4, "prepend append"),
        case(lambda x: np.diff(x, n=3), 2, "empty result"),
        case(lambda x: np.diff(x, n=0), 3, "n=0")],
    np.round: [case(np.round, 4), case(lambda x: np.round(x, -1), 4, "decimals -1"),
               case(np.round, (), "0-d")],
    np.around: [case(np.around, 4), case(lambda x: np.around(x, decimals=-1), 4, "-1")],
    np.fix: unary(np.fix),
    np.var: reduction(np.var) + _axes_cases(np.var, ((4,), (2, 3)), (None, 0), ddof=(1,)),
    np.std: reduction(np.std) + _axes_cases(np.std, ((4,), (2, 3)), (None, 0), ddof=(1,)),
    np.convolve: [case(lambda x: np.convolve(x, [0.25, 0.5, -0.25]), 5),
                  case(lambda x: np.convolve(x[:3], x[3:], mode="same"), 7, "same, active"),
                  case(lambda x: np.convolve(C3, x, mode="valid"), 5, "valid"),
                  case(lambda x: np.convolve(x[:1], x[1:]), 3, "length 1")],
    np.correlate: [case(lambda x: np.correlate(x, [1.0, 2.0]), 5),
                   case(lambda x: np.correlate(x[:2], x[2:], mode="full"), 6, "full, active"),
                   case(lambda x: np.correlate(x[:4], x[4:], mode="same"), 6, "same")],
    np.trapezoid: [case(np.trapezoid, 5), case(lambda x: np.trapezoid(x, dx=0.1), 5, "dx"),
                   case(lambda x: np.trapezoid(x, np.linspace(0, 1, 5) ** 2), 5, "x"),
                   case(lambda x: np.trapezoid(x[:3], _spaced(x[3:])), 6, "active x"),
                   case(lambda x: np.trapezoid(x.reshape(2, 3), axis=0), 6, "axis")],
    np.polyder: [case(lambda x: np.polyder(x), 4), case(lambda x: np.polyder(x, 2), 4, "m=2"),
                 case(lambda x: np.polyder(x[:1]), 1, "constant"),
                 case(lambda x: np.poly1d(x).deriv()(0.5), 3, "poly1d")],
    np.polyint: [case(lambda x: np.polyint(x), 3),
                 case(lambda x: np.polyint(x, 2, k=[1.0, x[0]]), 3, "m=2, k"),
                 case(lambda x: np.poly1d(x).integ(k=2.0)(0.5), 3, "poly1d")],
    np.polydiv: [case(lambda x: np.concatenate(np.polydiv(x[:5], x[5:] + np.array([3.0, 0, 0]))),
                      8),
                 case(lambda x: np.concatenate(np.polydiv(FP5, x + np.array([3.0, 0.0]))), 2,
                      "constant dividend")],
    np.polyadd: [case(lambda x: np.polyadd(x[:3], x[3:]), 5),
                 case(lambda x: np.polyadd([1.0, 2.0, 0.5, 1.0], x), 2, "longer constant"),
                 case(lambda x: (np.poly1d(x[:2]) + np.poly1d([x[2], 1.0, x[3]]))(0.7), 4,
                      "poly1d")],
    np.polysub: [case(lambda x: np.polysub(x[:2], x[2:]), 5),
                 case(lambda x: (np.poly1d(x) - 2.0)(1.5), 3, "poly1d minus a number")],
    np.polymul: [case(lambda x: np.polymul(x[:3], x[3:]), 5),
                 case(lambda x: np.polymul(x, [0.5, -1.0]), 3, "constant factor"),
                 case(lambda x: (np.poly1d([x[0], 1.0]) * np.poly1d(x[1:]))(0.3), 4,
                      "poly1d of a list")],
    np.logspace: [case(lambda x: np.logspace(x[0], x[1], 4), 2),
                  case(lambda x: np.logspace(0.0, 1.0, 3, base=x[0] + 3.0), 1, "active base",
                       cs="a complex base gives complex powers"),
                  case(lambda x: np.logspace(x[0], 2.0, 3, endpoint=False, base=2.0), 1,
                       "endpoint")],
    np.polyval: [case(lambda x: np.polyval([1.0, -2.0, 0.5], x), 4),
                 case(lambda x: np.polyval(x[:3], x[3:]), 5, "active coefficients"),
                 case(lambda x: np.polyval(x, 0.7), 4, "constant point"),
                 case(lambda x: np.polyval(C3, x), (), "0-d")],
    np.gradient: [case(lambda x: np.gradient(x, 0.5), 6),
                  case(lambda x: np.gradient(x, edge_order=2), 6, "edge_order 2"),
                  case(lambda x: np.stack(np.gradient(x.reshape(2, 3))), 6, "2-d"),
                  case(lambda x: np.gradient(x.reshape(2, 3), axis=1), 6, "axis"),
                  case(lambda x: np.gradient(x, UNEVEN5), 5, "uneven coordinates"),
                  case(lambda x: np.gradient(x, UNEVEN5, edge_order=2), 5,
                       "uneven coordinates, edge_order 2"),
                  case(lambda x: np.gradient(x.reshape(3, 2), [0.0, 0.5, 1.5], 2.0)[0], 6,
                       "coordinates and a spacing"),
                  case(lambda x: np.gradient(x ** 2, np.arange(4)), 4, "even integer coordinates"),
                  case(lambda x: np.gradient(x[:3] ** 2, np.cumsum(x[3:] ** 2 + 0.5),
                                             edge_order=2), 6, "active coordinates")],
    np.sort: _axes_cases(np.sort, ((4,), (2, 3), (0,))) + [
        case(lambda x: np.sort(x, axis=None), (), "0-d"),
        case(lambda x: np.sort(x, kind="stable"), 4, "stable")],
    np.interp: [case(lambda x: np.interp(x, TABLE5, FP5), 4, cs=REAL_X),
                case(lambda x: np.interp(np.array([0.2, 1.0, 3.0]), TABLE5, x), 5, "active fp"),
                case(lambda x: np.interp(x * 3.0, TABLE5, FP5, left=-5.0, right=x[0]), 4,
                     "outside, active right", cs=REAL_X),
                case(lambda x: np.interp(x, TABLE5, FP5), (), "0-d", cs=REAL_X),
                case(lambda x: np.interp(TABLE5[1:4], np.cumsum(x ** 2 + 0.3) - 1.0, FP5[:4] * x),
                     4, "active knots", cs=REAL_X)],
    np.median: _axes_cases(np.median, ((5,), (2, 3)), keepdims=(False, True)),
    np.quantile: [case(lambda x: np.quantile(x, 0.3), 5),
                  case(lambda x: np.quantile(x, [0.1, 0.5, 0.77]), 6, "q array"),
                  case(lambda x: np.quantile(x.reshape(2, 3), 0.4, axis=1, keepdims=True), 6,
                       "axis keepdims")],
    np.percentile: [case(lambda x: np.percentile(x, 30), 5),
                    case(lambda x: np.percentile(x.reshape(3, 2), [20, 90], axis=0), 6, "axis")],
    np.sinc: unary(np.sinc),
    np.real: unary(np.real, shapes=((), (4,))),
    np.imag: unary(np.imag, shapes=((), (4,))),
    np.select: [case(lambda x: np.select([x < 0.3, x > 1.0], [x ** 2, np.sin(x)], 2.0), 6),
                case(lambda x: np.select([BOOL3], [x[:3]], x[3:]), 6, "active default")],
    np.choose: [case(lambda x: np.choose(np.array([[0, 1, 2], [2, 1, 0]]),
                                         [x[:3], x[3:] ** 2, np.sin(x[:3])]), 6),
                case(lambda x: np.choose([3, -1, 4], [x[:3], 2 * x[3:]], mode="wrap"), 6,
                     "wrap"),
                case(lambda x: np.choose(np.array([5, 0, 1]), [x[:3], x[3:]], mode="clip"), 6,
                     "clip")],
    np.tensordot: [case(lambda x: np.tensordot(x.reshape(2, 3), A23, axes=2), 6),
                   case(lambda x: np.tensordot(x.reshape(2, 3), A23.T, axes=1), 6, "axes=1"),
                   case(lambda x: np.tensordot(x[:6].reshape(2, 3), x[6:].reshape(2, 2),
                                               axes=([0], [1])), 10, "lists, active"),
                   case(lambda x: np.tensordot(x[:2], x[2:], axes=0), 5, "outer")],
    np.kron: [case(lambda x: np.kron(x.reshape(2, 2), A23[:, :2]), 4),
              case(lambda x: np.kron(x[:3], x[3:]), 5, "1-d, active"),
              case(lambda x: np.kron(x.reshape(2, 1, 2), x[:2]), 4, "3-d, 1-d")],
    np.append: [case(lambda x: np.append(x, [0.5, 1.5]), 3),
                case(lambda x: np.append(x.reshape(2, 2), x[:2].reshape(1, 2), axis=0), 4, "axis"),
                case(lambda x: np.append(x[:2], [x[2] ** 2, 3.0]), 3, "active scalar in list")],
    np.triu: [case(np.triu, (3, 3)), case(lambda x: np.triu(x, 1), (3, 3), "k=1"),
              case(lambda x: np.triu(x, -1), (2, 3), "k=-1"),
              case(np.triu, (2, 2, 3), "stack")],
    np.tril: [case(np.tril, (3, 3)), case(lambda x: np.tril(x, -1), (3, 2), "k=-1"),
              case(lambda x: np.tril(x, 1), (3, 3), "k=1")],
    np.diag: [case(np.diag, 3), case(lambda x: np.diag(x, 1), 3, "1-d k=1"),
              case(lambda x: np.diag(x, -2), 2, "1-d k=-2"), case(np.diag, (3, 3), "2-d"),
              case(lambda x: np.diag(x, 1), (2, 3), "2-d k=1")],
    np.rollaxis: [case(lambda x: np.rollaxis(x.reshape(2, 3, 2), 2), 12),
                  case(lambda x: np.rollaxis(x.reshape(2, 3, 2), 0, 3), 12, "start")],
    np.copyto: [case(lambda x: _copyto(x), 3),
                case(lambda x: _copyto(x, where=np.array([[True, False, True]] * 2)), 3,
                     "where")],
    np.fill_diagonal: [case(lambda x: _fill_diagonal(x, 0.5), 9),
                       case(lambda x: _fill_diagonal(x[1:], x[0]), 10, "active value"),
                       case(lambda x: _fill_diagonal(x, C3), 9, "array value"),
                       case(lambda x: _fill_diagonal(x, 0.5, True, (5, 2)), 10, "wrap")],
    np.split: [case(lambda x: np.stack(np.split(x, 3)), 6),
               case(lambda x: np.concatenate(np.split(x, [1, 3])[::-1]), 5, "indices"),
               case(lambda x: np.split(x.reshape(2, 4), 2, axis=1)[1], 8, "axis")],
    np.array_split: [case(lambda x: np.stack([np.sum(p) for p in np.array_split(x, 3)]), 7)],
    np.hsplit: [case(lambda x: np.hsplit(x.reshape(2, 4), 2)[0], 8)],
    np.vsplit: [case(lambda x: np.vsplit(x.reshape(4, 2), [1])[1], 8)],
    np.dsplit: [case(lambda x: np.dsplit(x.reshape(1, 2, 4), 2)[1], 8)],
    np.zeros_like: [case(lambda x: np.zeros_like(x) + x, 3),
                    case(lambda x: np.zeros_like(x, shape=(2, 2)), 3, "shape"),
                    case(lambda x: np.zeros_like(x, dtype=int) + x, 3, "int dtype")],
    np.ones_like: [case(lambda x: np.ones_like(x) * x, 3),
                   case(lambda x: np.ones_like(x), (), "0-d"),
                   case(lambda x: np.ones_like(x, dtype=np.float32) * x, 3, "float32 dtype")],
    np.empty_like: [case(lambda x: _written(np.empty_like(x), x), 3)],
    np.full_like: [case(lambda x: np.full_like(x, 2.5), 3),
                   case(lambda x: np.full_like(x, x[0]) * x, 3, "active fill"),
                   case(lambda x: np.full_like(x, x[0], dtype=int) * x, 3, "active fill, int",
                        (1.2, 1.8), "NumPy refuses to cast complex values to integers")],
    np.concatenate: [
        case(lambda x: np.concatenate([x[:2], x[2:] ** 2]), 5),
        case(lambda x: np.concatenate([x.reshape(2, 2), A23[:, :2]], axis=1), 4, "axis 1"),
        case(lambda x: np.concatenate([x.reshape(2, 2), x.reshape(2, 2)], axis=None), 4,
             "axis None"),
        case(lambda x: np.concatenate([x[1:], [x[0], 2.0]]), 4, "active scalar in a list"),
        case(lambda x: np.concatenate([x, np.zeros(0)]), 0, "empty")],
    np.stack: [case(lambda x: np.stack([x[:2], x[2:]]), 4),
               case(lambda x: np.stack([x[:2], C3[:2]], axis=-1), 2, "axis -1, constant"),
               case(lambda x: np.stack([x[0], x[1] ** 2]), 2, "0-d pieces")],
    np.hstack: [case(lambda x: np.hstack([x[:2], [1.0], x[2:]]), 4)],
    np.vstack: [case(lambda x: np.vstack([x[:3], C3]), 3), case(lambda x: np.vstack([x, x]), (),
                                                                "0-d")],
    np.column_stack: [case(lambda x: np.column_stack([x[:3], x[3:]]), 6)],
    np.average: [case(np.average, 4),
                 case(lambda x: np.average(x[:3], weights=C3 + 2.0), 3, "weights"),
                 case(lambda x: np.average(x[:3], weights=x[3:] + 3.0), 6, "active weights"),
                 case(lambda x: np.average(x.reshape(2, 3), axis=1, weights=C3 + 2.0), 6, "axis"),
                 case(lambda x: np.stack(np.average(x, weights=[1.0, 2.0, 3.0],
                                                    returned=True)), 3, "returned")],
    np.nansum: [case(lambda x: np.nansum(x * NANS), 4),
                case(lambda x: np.nansum(x.reshape(2, 2) * NANS.reshape(2, 2), axis=0), 4, "axis")],
    np.nanmean: [case(lambda x: np.nanmean(x * NANS), 4),
                 case(lambda x: np.nanmean(x.reshape(2, 2) * NANS.reshape(2, 2), axis=1,
                                           keepdims=True), 4, "axis")],
    np.cross: [case(lambda x: np.cross(x[:3], x[3:]), 6),
               case(lambda x: np.cross(x.reshape(2, 3), C3), 6, "stack, constant"),
               case(lambda x: np.cross(x.reshape(3, 2), A33[:, :2], axis=0), 6, "axis")],
    np.ediff1d: [case(np.ediff1d, 4),
                 case(lambda x: np.ediff1d(x[1:], to_begin=x[0], to_end=[1.0, 2.0]), 4, "ends")],
    np.take_along_axis: [
        case(lambda x: np.take_along_axis(x.reshape(2, 3), np.array([[2, 0], [1, 1]]), axis=1),
             6),
        case(lambda x: np.take_along_axis(x, np.array([3, 0, 0]), axis=0), 4, "1-d")],
    np.meshgrid: [case(lambda x: np.stack(np.meshgrid(x[:2], x[2:])), 5),
                  case(lambda x: np.stack(np.meshgrid(x[:2], C3, indexing="ij")), 2, "ij"),
                  case(lambda x: np.meshgrid(x[:2], x[2:], sparse=True)[1] * x[0], 5, "sparse")],
    np.linspace: [case(lambda x: np.linspace(x[0], x[1], 5), 2),
                  case(lambda x: np.linspace(0.5, x, 4, endpoint=False), (), "endpoint"),
                  case(lambda x: np.linspace(x[0], 2.0, 1), 1, "num 1"),
                  case(lambda x: np.linspace(x[0], x[1], 3, retstep=True)[1] * x, 2, "retstep")],
    np.geomspace: [case(lambda x: np.geomspace(x[0] + 2.0, x[1] + 5.0, 4), 2),
                   case(lambda x: np.geomspace(-1.5, -x - 3.0, 3), (), "negative endpoints"),
                   case(lambda x: np.geomspace(x[0] + 2.0, 9.0, 3, endpoint=False), 1,
                        "endpoint", cs="the sign of a complex start is not real")],
}


def _written(y, x):
    y[...] = x ** 2
    return y


def _sym(x):
    """A symmetric k x k matrix of k * k values, eigenvalues 1.4 or more apart."""
    k = math.isqrt(x.size)
    return np.diag(1.0 + 3.0 * np.arange(k)) + 0.2 * (x.reshape(k, k) + x.reshape(k, k).T)


_ROTATION = np.array([[1.0, -3.0], [3.0, 1.0]])
NOT_HOLOMORPHIC_PARTS = "not holomorphic: real and imaginary parts (or |.|) of complex values"


def _spiral(x):
    """A 2 x 2 matrix of 4 values whose eigenvalues are a complex pair near 1 +- 3i."""
    return 0.3 * x.reshape(2, 2) + _ROTATION


def _skew_sym(x):
    """A non-symmetric 2 x 2 matrix of 4 values with real eigenvalues near 1 and 4."""
    return np.diag([1.0, 4.0]) + 0.3 * x.reshape(2, 2)


def _parts(z):
    return np.concatenate([np.real(z), np.imag(z)])


LINALG = {
    np.linalg.norm: [
        *[case((lambda o: lambda x: np.linalg.norm(x, o))(o), 4, f"vector ord={o}")
          for o in (None, 1, 2, 3, 0.5, np.inf, -np.inf, -2)],
        *[case((lambda o: lambda x: np.linalg.norm(x.reshape(2, 3), o))(o), 6, f"matrix ord={o}")
          for o in ("fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc")],
        case(lambda x: np.linalg.norm(x.reshape(2, 3), axis=1), 6, "axis"),
        case(lambda x: np.linalg.norm(x.reshape(2, 3), 1, axis=0, keepdims=True), 6, "keepdims"),
        case(lambda x: np.linalg.norm(x.reshape(1, 2, 3), axis=(1, 2)), 6, "matrix axes"),
        case(lambda x: np.linalg.norm(x), (), "0-d")],
    np.linalg.solve: [case(lambda x: np.linalg.solve(general(x[:4]), x[4:]), 6),
                      case(lambda x: _parts(np.linalg.solve(general(x[:4]) + 1j * _spiral(x[:4]),
                                                            x[4:] - 0.5j)), 6, "complex",
                           cs=NOT_HOLOMORPHIC_PARTS),
                      case(lambda x: _parts(np.linalg.solve(general(x[:4]), A33[:2, :2] + 2j)),
                           4, "complex right side", cs=NOT_HOLOMORPHIC_PARTS),
                      case(lambda x: np.abs(np.linalg.solve(A33 + 1j * np.eye(3), x)), 3,
                           "complex constant matrix", cs=NOT_HOLOMORPHIC_PARTS),
                      case(lambda x: np.linalg.solve(A33, x.reshape(3, 2)), 6, "constant matrix"),
                      case(lambda x: np.linalg.solve(spd(x), C3), 3, "constant right side")],
    np.linalg.inv: [case(lambda x: np.linalg.inv(general(x)), 9),
                    case(lambda x: np.linalg.inv(x.reshape(1, 1) + 3.0), 1, "1 x 1"),
                    case(lambda x: _parts(np.linalg.inv(general(x) * (1.0 + 0.5j))), 4,
                         "complex", cs=NOT_HOLOMORPHIC_PARTS),
                    case(lambda x: _parts(np.linalg.inv(x.reshape(2, 2, 2) * 1j + _ROTATION)),
                         8, "complex stack", cs=NOT_HOLOMORPHIC_PARTS)],
    np.linalg.det: [case(lambda x: np.linalg.det(general(x)), 9),
                    case(lambda x: _parts(np.reshape(np.linalg.det(general(x) * (1.0 - 0.3j)),
                                                     (1,))), 4, "complex",
                         cs=NOT_HOLOMORPHIC_PARTS),
                    case(lambda x: np.linalg.det(spd(x) - 3.0 * np.eye(3)), 3, "indefinite")],
    np.linalg.slogdet: [
        case(lambda x: np.linalg.slogdet(general(x)).logabsdet, 9),
        case(lambda x: np.linalg.slogdet(2.0 * np.eye(3) - spd(x))[0] * x, 3, "sign")],
    np.linalg.cholesky: [case(lambda x: np.linalg.cholesky(spd(x)), 3),
                         case(lambda x: np.linalg.cholesky(spd(x[:2]) + np.triu(
                             x[2:].reshape(2, 2), 1), upper=True), 6, "upper")],
    np.linalg.eigh: [case(lambda x: np.linalg.eigh(_sym(x)).eigenvalues, 4),
                     case(lambda x: np.abs(np.linalg.eigh(_sym(x))[1]), 4, "vectors"),
                     case(lambda x: np.linalg.eigh(_sym(x) + np.triu(x.reshape(2, 2), 1),
                                                   UPLO="U")[0], 4, "UPLO"),
                     case(lambda x: np.abs(np.linalg.eigh(_sym(x) + 1j * np.tril(
                         x.reshape(2, 2), -1)).eigenvectors) ** 2, 4, "complex Hermitian")],
    np.linalg.eigvalsh: [case(lambda x: np.linalg.eigvalsh(_sym(x)), 4),
                         case(lambda x: np.linalg.eigvalsh(spd(x), UPLO="U"), 3, "UPLO"),
                         case(lambda x: np.linalg.eigvalsh(_sym(x) + 1j * x.reshape(2, 2),
                                                          UPLO="U"), 4, "complex Hermitian")],
    np.linalg.eig: [
        case(lambda x: _parts(np.linalg.eig(_spiral(x)).eigenvalues), 4, "complex pair",
             cs=NOT_HOLOMORPHIC_PARTS),
        case(lambda x: np.abs(np.linalg.eig(_spiral(x))[1]) ** 2, 4, "vectors |v|^2",
             cs=NOT_HOLOMORPHIC_PARTS),
        case(lambda x: np.linalg.eig(_skew_sym(x))[0], 4, "real eigenvalues"),
        case(lambda x: np.linalg.eig(_skew_sym(x))[1] ** 2, 4, "real vectors squared",
             cs="LAPACK scales complex eigenvectors to unit norm with |.|: not holomorphic"),
        case(lambda x: _parts(np.linalg.eig(_skew_sym(x) + 1j * _spiral(x)).eigenvalues), 4,
             "complex matrix", cs=NOT_HOLOMORPHIC_PARTS)],
    np.linalg.eigvals: [
        case(lambda x: _parts(np.linalg.eigvals(_spiral(x))), 4, "complex pair",
             cs=NOT_HOLOMORPHIC_PARTS),
        case(lambda x: np.linalg.eigvals(_skew_sym(x)), 4, "real eigenvalues"),
        case(lambda x: _parts(np.linalg.eigvals(x.reshape(2, 2, 2) + _ROTATION)), 8, "stack",
             cs=NOT_HOLOMORPHIC_PARTS)],
    np.linalg.matrix_power: [
        *[case((lambda k: lambda x: np.linalg.matrix_power(0.3 * general(x), k))(k), 9, f"{k}")
          for k in (0, 1, 3, -2)]],
    np.linalg.qr: [case(lambda x: np.linalg.qr(general(x))[1], 4),
                   case(lambda x: np.linalg.qr(x.reshape(3, 2) + A33[:, :2])[0], 6, "tall Q"),
                   case(lambda x: np.linalg.qr(x.reshape(2, 3) + A23, mode="r"), 6, "wide r"),
                   case(lambda x: np.linalg.qr(general(x), mode="complete").Q, 4, "complete")],
    np.linalg.svd: [case(lambda x: np.linalg.svd(x.reshape(2, 3) + A23, compute_uv=False), 6),
                    case(lambda x: np.abs(np.linalg.svd(general(x))[0]), 4, "U of square"),
                    case(lambda x: np.abs(np.linalg.svd(x.reshape(3, 2) + A33[:, :2],
                                                        full_matrices=False).Vh), 6, "Vh thin")],
    np.linalg.pinv: [case(lambda x: np.linalg.pinv(x.reshape(3, 2) + A33[:, :2]), 6),
                     case(lambda x: np.linalg.pinv(general(x)), 4, "square")],
    np.linalg.lstsq: [
        case(lambda x: np.linalg.lstsq(x[:6].reshape(3, 2) + A33[:, :2], x[6:])[0], 9),
        case(lambda x: np.linalg.lstsq(A33[:, :2], x, rcond=None)[1], 3, "residuals"),
        case(lambda x: np.linalg.lstsq(x.reshape(3, 2) + A33[:, :2], C3)[3], 6,
             "singular values")],
}


def _real_of(transform, **kw):
    return lambda x: np.real(transform(x, **kw)) + np.imag(transform(x, **kw)) ** 2


FFT = {
    # scipy.fft's transforms run numpy.fft's on active arrays (adsim/_scipy/fft.py)
    scipy_fft_backend._ScipyBackend.__ua_function__: [
        case(_real_of(scipy.fft.fft, norm="ortho", workers=2), 4, "scipy.fft.fft"),
        case(lambda x: scipy.fft.irfft(-np.arange(4.0) ** 2 * scipy.fft.rfft(x), n=6), 6,
             "scipy.fft spectral second derivative"),
        case(_real_of(scipy.fft.fftn, axes=(0, 1), overwrite_x=True), (2, 3), "scipy.fft.fftn"),
        case(lambda x: scipy.fft.irfft(x[:3] + 1j * x[3:], workers=-1), 6,
             "scipy.fft.irfft of parts"),
        # the real-to-real transforms are adsim's ops (adsim/_scipy/fft_r2r.py)
        case(lambda x: scipy.fft.dct(x, type=1, norm="ortho"), 5, "scipy.fft.dct"),
        case(lambda x: scipy.fft.idct(x, n=6, norm="forward"), 4, "scipy.fft.idct"),
        case(lambda x: scipy.fft.dst(x, type=3, orthogonalize=True), 5, "scipy.fft.dst"),
        case(lambda x: scipy.fft.idst(x, type=4, axis=0), (3, 2), "scipy.fft.idst"),
        case(lambda x: scipy.fft.dctn(x, type=2, s=(3, 4), axes=(0, 1)), (2, 3),
             "scipy.fft.dctn"),
        case(lambda x: scipy.fft.idctn(x, type=3, norm="ortho"), (2, 3), "scipy.fft.idctn"),
        case(lambda x: scipy.fft.dstn(x, type=1, axes=1), (2, 3), "scipy.fft.dstn"),
        case(lambda x: scipy.fft.idstn(x, type=2, s=(2,), axes=(0,)), (3, 2),
             "scipy.fft.idstn"),
        case(lambda x: scipy.fft.hfft(x, n=6), 4, "scipy.fft.hfft"),
        case(_real_of(scipy.fft.ihfft, norm="ortho"), 5, "scipy.fft.ihfft"),
        case(lambda x: scipy.fft.hfft2(x), (2, 3), "scipy.fft.hfft2"),
        case(_real_of(scipy.fft.ihfftn, s=(2, 4), axes=(0, 1)), (2, 3), "scipy.fft.ihfftn")],
    # fftpack's: as scipy.fft's, its inverses unnormalised (adsim/_scipy/fftpack.py)
    fftpack.dct: [case(lambda x: fftpack.dct(x, type=1), 5)],
    # the packed real format [y0, Re y1, Im y1, ...] (adsim/_scipy/fftpack.py)
    "scipy.fftpack._basic.rfft": [case(lambda x: fftpack.rfft(x), 5, cs=FFTPACK_REAL),
                                  case(lambda x: fftpack.rfft(x, n=6, axis=0), (4, 2), "n axis",
                                       cs=FFTPACK_REAL)],
    "scipy.fftpack._basic.irfft": [case(lambda x: fftpack.irfft(x), 6, cs=FFTPACK_REAL),
                                   case(lambda x: fftpack.irfft(x, n=5), 4, "n",
                                        cs=FFTPACK_REAL)],
    fftpack.idct: [case(lambda x: fftpack.idct(x, n=6), 4),
                   case(lambda x: fftpack.idct(x, type=3, norm="ortho"), 4, "ortho")],
    fftpack.dst: [case(lambda x: fftpack.dst(x, type=4, axis=0), (3, 2))],
    fftpack.idst: [case(lambda x: fftpack.idst(x, type=1), 4)],
    fftpack.dctn: [case(lambda x: fftpack.dctn(x, shape=(3, 4)), (2, 3))],
    fftpack.idctn: [case(lambda x: fftpack.idctn(x, type=2, axes=(1,)), (2, 3))],
    fftpack.dstn: [case(lambda x: fftpack.dstn(x, type=3, norm="ortho"), (2, 3))],
    fftpack.idstn: [case(lambda x: fftpack.idstn(x, type=4, shape=(4,), axes=0), (2, 3))],
    fftpack.fft: [case(_real_of(fftpack.fft, n=6, axis=0), (4, 2))],
    fftpack.ifft: [case(_real_of(fftpack.ifft), 5)],
    fftpack.fft2: [case(_real_of(fftpack.fft2, shape=(3, 2)), (2, 3))],
    fftpack.ifft2: [case(_real_of(fftpack.ifft2, axes=(1, 0)), (2, 3))],
    fftpack.fftn: [case(_real_of(fftpack.fftn, shape=(2, 4)), (2, 3))],
    fftpack.ifftn: [case(lambda x: np.abs(fftpack.ifftn(x[:6] + 1j * x[6:], axes=(0,))), 12,
                         "complex of parts")],
    np.fft.fft: [case(_real_of(np.fft.fft), 4), case(_real_of(np.fft.fft, n=6), 4, "n"),
                 case(_real_of(np.fft.fft, axis=0, norm="ortho"), (2, 3), "axis norm"),
                 case(lambda x: np.abs(np.fft.fft(x)) ** 2, 5, "power spectrum")],
    np.fft.ifft: [case(_real_of(np.fft.ifft), 4),
                  case(_real_of(np.fft.ifft, norm="forward"), (2, 2), "norm")],
    np.fft.rfft: [case(_real_of(np.fft.rfft), 5), case(_real_of(np.fft.rfft, n=4), 5, "n")],
    np.fft.hfft: [case(np.fft.hfft, 4), case(lambda x: np.fft.hfft(x, n=5, axis=0, norm="ortho"),
                                             (3, 2), "n axis norm"),
                  case(lambda x: np.fft.hfft(x[:3] + 1j * x[3:]), 6, "complex of parts")],
    np.fft.ihfft: [case(_real_of(np.fft.ihfft), 5),
                   case(_real_of(np.fft.ihfft, n=6, norm="forward"), 4, "n norm")],
    np.fft.irfft: [case(lambda x: np.fft.irfft(np.fft.rfft(x) * [1.0, 0.5, 2.0]), 4),
                   case(lambda x: np.fft.irfft(x[:3] + 1j * x[3:]), 6, "complex of parts"),
                   case(lambda x: np.fft.irfft(x, n=5), 3, "real input, n")],
    np.fft.fft2: [case(_real_of(np.fft.fft2), (2, 3)),
                  case(_real_of(np.fft.fft2, axes=(0, 2)), (2, 2, 2), "axes")],
    np.fft.ifft2: [case(_real_of(np.fft.ifft2, s=(2, 4)), (2, 3))],
    np.fft.rfft2: [case(_real_of(np.fft.rfft2), (2, 4))],
    np.fft.irfft2: [case(lambda x: np.fft.irfft2(np.fft.rfft2(x) * 2.0, s=(2, 4)), (2, 4))],
    np.fft.fftn: [case(_real_of(np.fft.fftn), (2, 2, 2)),
                  case(_real_of(np.fft.fftn, axes=(1,)), (2, 3), "axes")],
    np.fft.ifftn: [case(_real_of(np.fft.ifftn, norm="ortho"), (2, 3))],
    np.fft.rfftn: [case(_real_of(np.fft.rfftn), (2, 2, 3))],
    np.fft.irfftn: [case(lambda x: np.fft.irfftn(np.fft.rfftn(x) ** 2, s=(2, 4), axes=(0, 1)),
                         (2, 4))],
    np.fft.fftshift: [case(np.fft.fftshift, 5), case(lambda x: np.fft.fftshift(x, axes=1), (2, 3),
                                                     "axes")],
    np.fft.ifftshift: [case(np.fft.ifftshift, (2, 3))],
}

INDEX_MAPS = {
    np.flip: [case(np.flip, 4), case(lambda x: np.flip(x, 0), (2, 3), "axis"),
              case(np.flip, (), "0-d")],
    np.fliplr: [case(np.fliplr, (2, 3))], np.flipud: [case(np.flipud, (2, 3))],
    np.roll: [case(lambda x: np.roll(x, 2), 5),
              case(lambda x: np.roll(x, (1, -1), axis=(0, 1)), (2, 3), "axes"),
              case(lambda x: np.roll(x, 1), (0,), "empty")],
    np.rot90: [case(np.rot90, (2, 3)),
               case(lambda x: np.rot90(x, -1, axes=(1, 2)), (2, 2, 2), "k")],
    np.swapaxes: [case(lambda x: np.swapaxes(x, 0, 2), (2, 3, 1))],
    np.moveaxis: [case(lambda x: np.moveaxis(x, 0, -1), (2, 3, 2)),
                  case(lambda x: np.moveaxis(x, [0, 1], [1, 0]), (2, 3), "lists")],
    np.diagonal: [case(np.diagonal, (3, 3)), case(lambda x: np.diagonal(x, 1), (2, 3), "offset"),
                  case(lambda x: np.diagonal(x, axis1=1, axis2=2), (2, 2, 2), "axes")],
    np.repeat: [case(lambda x: np.repeat(x, 2), 3),
                case(lambda x: np.repeat(x, [1, 0, 3], axis=0), (3, 2), "counts axis"),
                case(lambda x: np.repeat(x, 3), (), "0-d")],
    np.tile: [case(lambda x: np.tile(x, 2), 3),
              case(lambda x: np.tile(x, (2, 1, 2)), (2, 2), "reps")],
    np.take: [case(lambda x: np.take(x, [3, 0, 0]), 4),
              case(lambda x: np.take(x, [[1], [0]], axis=1), (2, 3), "axis"),
              case(lambda x: np.take(x, [5, -7], mode="wrap"), 4, "wrap"),
              case(lambda x: np.take(x, [9, -1], mode="clip"), 4, "clip")],
    np.atleast_1d: [case(np.atleast_1d, ()), case(lambda x: np.concatenate(np.atleast_1d(x[0], x, 2.0)),
                                                  2, "several")],
    np.atleast_2d: [case(np.atleast_2d, 3), case(np.atleast_2d, (), "0-d"),
                    case(lambda x: np.atleast_2d(x[0], 1.0, x)[2], 2, "several")],
    np.atleast_3d: [case(np.atleast_3d, (2, 2)), case(np.atleast_3d, 3, "1-d"),
                    case(lambda x: np.atleast_3d(x, x[1:].reshape(2, 2))[1], 5, "several")],
}


# ---------------------------------------------------------------- SciPy

SHAPES_S = ((), (4,))


def _second(f, first, domain, label=""):
    """``f(first, x)``: differentiated in its last argument only."""
    return [case(lambda x: f(first, x), s, f"{label}{s}", domain) for s in SHAPES_S]


SPECIAL_UFUNCS = {
    sc.gammaln: unary(sc.gammaln, (0.2, 3.0), SHAPES_S),
    sc.gamma: unary(sc.gamma, (0.2, 3.0), SHAPES_S) + [
        case(lambda x: sc.gamma(x - 2.5), 3, "negative", (-0.45, 0.45), cs=SCIPY_COMPLEX_LOSES)],
    sc.digamma: unary(sc.digamma, (0.2, 3.0), SHAPES_S),
    sc.zeta: _second(sc.zeta, 3.0, (0.2, 3.0)),
    sc.lambertw: [case(lambda x: np.real(sc.lambertw(x)), 3, "", (-0.3, 3.0), LAMBERTW_REAL),
                  case(lambda x: np.real(sc.lambertw(-0.05 - 0.25 * x, -1)), 3, "k = -1",
                       (0.0, 1.0), LAMBERTW_REAL)],
    sc.spherical_jn: [case(lambda x: sc.spherical_jn(INT3 - 1, x), 3, "", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES),
                      case(lambda x: sc.spherical_jn(2, -x), 3, "negative z", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES)],
    sc.spherical_yn: [case(lambda x: sc.spherical_yn(INT3 - 1, x), 3, "", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES),
                      case(lambda x: sc.spherical_yn(1, -x), 3, "negative z", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES)],
    sc.spherical_in: [case(lambda x: sc.spherical_in(INT3 - 1, x), 3, "", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES),
                      case(lambda x: sc.spherical_in(2, -x), 3, "negative z", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES)],
    sc.spherical_kn: [case(lambda x: sc.spherical_kn(INT3 - 1, x), 3, "", (0.2, 3.0),
                           SCIPY_COMPLEX_LOSES)],
    sc._spherical_bessel._spherical_jn_d: [
        case(lambda x: sc.spherical_jn(INT3, x, derivative=True), 3, "", (0.2, 3.0),
             SCIPY_COMPLEX_LOSES)],
    sc._spherical_bessel._spherical_yn_d: [
        case(lambda x: sc.spherical_yn(INT3, x, derivative=True), 3, "", (0.2, 3.0),
             SCIPY_COMPLEX_LOSES)],
    sc._spherical_bessel._spherical_in_d: [
        case(lambda x: sc.spherical_in(INT3, x, derivative=True), 3, "", (0.2, 3.0),
             SCIPY_COMPLEX_LOSES)],
    sc._spherical_bessel._spherical_kn_d: [
        case(lambda x: sc.spherical_kn(INT3, x, derivative=True), 3, "", (0.2, 3.0),
             SCIPY_COMPLEX_LOSES)],
    sc.beta: [case(lambda x: sc.beta(x[:2], x[2:]), 4, domain=(0.3, 3.0)),
              case(lambda x: sc.beta(x, 2.0), (2, 2), "constant b", (0.3, 3.0))],
    sc.betaln: [case(lambda x: sc.betaln(x[:2], x[2:, None]), 4, domain=(0.3, 3.0))],
    sc.erf: unary(sc.erf, shapes=SHAPES_S), sc.erfc: unary(sc.erfc, shapes=SHAPES_S),
    sc.erfinv: unary(sc.erfinv, (-0.9, 0.9), SHAPES_S),
    sc.erfcinv: unary(sc.erfcinv, (0.1, 1.9), SHAPES_S),
    sc.expit: unary(sc.expit, shapes=SHAPES_S), sc.log_expit: unary(sc.log_expit, shapes=SHAPES_S),
    sc.logit: unary(sc.logit, (0.05, 0.95), SHAPES_S),
    sc.xlogy: [case(lambda x: sc.xlogy(x[:2], x[2:]), 4, domain=(0.2, 3.0)),
               case(lambda x: sc.xlogy(np.array([0.0, 1.5, 0.0]), x), 3, "x = 0", (0.2, 3.0))],
    sc.xlog1py: [case(lambda x: sc.xlog1py(x[:2], x[2:]), 4, domain=(-0.5, 2.0)),
                 case(lambda x: sc.xlog1py(np.array([0.0, 1.5]), x), 2, "x = 0", (-0.5, 2.0))],
    sc.entr: unary(sc.entr, (0.1, 3.0), SHAPES_S),
    sc.rel_entr: [case(lambda x: sc.rel_entr(x[:2], x[2:]), 4, domain=(0.2, 3.0))],
    sc.ndtr: unary(sc.ndtr, shapes=SHAPES_S), sc.log_ndtr: unary(sc.log_ndtr, shapes=SHAPES_S),
    sc.ndtri: unary(sc.ndtri, (0.05, 0.95), SHAPES_S),
    sc.jv: _second(sc.jv, 1.5, (0.2, 3.0)) + [
        case(lambda x: sc.jv(np.array([0.0, 1.0, 2.5]), x), 3, "orders", (0.2, 3.0))],
    sc.iv: _second(sc.iv, 0.5, (0.2, 3.0)),
    sc.j0: unary(sc.j0, shapes=SHAPES_S), sc.j1: unary(sc.j1, shapes=SHAPES_S),
    sc.i0: unary(sc.i0, shapes=SHAPES_S), sc.i1: unary(sc.i1, shapes=SHAPES_S),
    sc.i0e: unary(sc.i0e, shapes=SHAPES_S), sc.i1e: unary(sc.i1e, shapes=SHAPES_S),
    sc.ive: _second(sc.ive, 1.0, (-2.0, 2.0)),
    sc.gammainc: _second(sc.gammainc, 2.5, (0.2, 3.0)),
    sc.gammaincc: _second(sc.gammaincc, 2.5, (0.2, 3.0)),
    sc.gammaincinv: _second(sc.gammaincinv, 2.5, (0.2, 0.7)),
    sc.gammainccinv: _second(sc.gammainccinv, 2.5, (0.3, 0.8)),
    sc.betainc: [case(lambda x: sc.betainc(2.0, 3.0, x), 4, domain=(0.05, 0.95))],
    sc.betaincc: [case(lambda x: sc.betaincc(2.0, 3.0, x), 4, domain=(0.05, 0.95))],
    sc.betaincinv: [case(lambda x: sc.betaincinv(2.0, 3.0, x), 4, domain=(0.05, 0.95))],
    sc.stdtr: _second(sc.stdtr, 3.5, (-2.0, 2.0)),
    sc.stdtrit: _second(sc.stdtrit, 3.5, (0.25, 0.85)),
}

SCIPY_FUNCTIONS = {
    sc.logsumexp: [case(sc.logsumexp, 4),
                   case(lambda x: sc.logsumexp(x, axis=0), (2, 3), "axis"),
                   case(lambda x: sc.logsumexp(x.reshape(1, 2, 3), axis=(0, 2), keepdims=True), 6,
                        "axes keepdims"),
                   case(lambda x: sc.logsumexp(x[:3], b=x[3:] + 2.5), 6, "active b"),
                   case(lambda x: sc.logsumexp(x, b=np.array([1.0, 0.0, 2.0])), 3, "b with 0"),
                   case(lambda x: sc.logsumexp(x, b=np.array([1.0, -3.0, 0.5]),
                                               return_sign=True)[0], 3, "return_sign",
                        cs="not holomorphic: log |sum|"),
                   case(sc.logsumexp, (), "0-d")],
    sc.softmax: [case(sc.softmax, 4), case(lambda x: sc.softmax(x, axis=1), (2, 3), "axis")],
    sc.log_softmax: [case(sc.log_softmax, 4),
                     case(lambda x: sc.log_softmax(x, axis=0), (2, 3), "axis")],
    sc.polygamma: [case(lambda x: sc.polygamma(1, x), 3, domain=(0.2, 3.0)),
                   case(lambda x: sc.polygamma(np.array([0, 1, 2, 3]), x), 4, "orders", (0.2, 3.0)),
                   case(lambda x: sc.polygamma(0, x), (), "n=0", (0.2, 3.0))],
    sl.solve_triangular: [
        case(lambda x: sl.solve_triangular(general(x[:4]), x[4:]), 6),
        case(lambda x: sl.solve_triangular(general(x[:4]), x[4:].reshape(2, 1), lower=True,
                                           trans="T"), 6, "lower T"),
        case(lambda x: sl.solve_triangular(general(x[:4]), x[4:], trans=1, unit_diagonal=True),
             6, "unit diagonal")],
    sl.solve: [case(lambda x: sl.solve(general(x[:4]), x[4:]), 6),
               *[case((lambda a: lambda x: sl.solve(_sym(x[:4]) + 3.0 * np.eye(2), x[4:],
                                                   assume_a=a))(a), 6, a,
                      cs="not holomorphic: Cholesky" if a == "pos" else "")
                 for a in ("pos", "sym", "diagonal", "tridiagonal", "upper triangular",
                           "lower triangular")],
               case(lambda x: sl.solve(general(x[:4]), x[4:], transposed=True), 6, "transposed",
                    cs="SciPy refuses transposed complex systems")],
    sl.cholesky: [case(lambda x: sl.cholesky(spd(x)), 3),
                  case(lambda x: sl.cholesky(spd(x), lower=True), 3, "lower")],
    sl.cho_factor: [case(lambda x: sl.cho_factor(spd(x))[0], 3),
                    case(lambda x: np.tril(sl.cho_factor(spd(x), lower=True)[0]), 3, "lower")],
    sl.cho_solve: [case(lambda x: sl.cho_solve(sl.cho_factor(spd(x[:3])), x[3:]), 6)],
    sl.lu_factor: [case(lambda x: sl.lu_factor(general(x))[0], 4)],
    sl.lu_solve: [case(lambda x: sl.lu_solve(sl.lu_factor(general(x[:4])), x[4:]), 6),
                  case(lambda x: sl.lu_solve(sl.lu_factor(general(x[:4])), x[4:], trans=1), 6,
                       "trans")],
    sl.expm: [case(lambda x: sl.expm(0.3 * x.reshape(2, 2)), 4),
              case(lambda x: sl.expm(x.reshape(1, 1)), 1, "1 x 1")],
    sl.inv: [case(lambda x: sl.inv(general(x)), 9)],
    sl.det: [case(lambda x: sl.det(general(x)), 9)],
    sl.svd: [case(lambda x: sl.svd(x.reshape(2, 3) + A23, compute_uv=False), 6),
             case(lambda x: np.abs(sl.svd(general(x))[2]), 4, "Vh")],
    sl.svdvals: [case(lambda x: sl.svdvals(x.reshape(3, 2) + A33[:, :2]), 6)],
    sl.pinv: [case(lambda x: sl.pinv(x.reshape(3, 2) + A33[:, :2]), 6),
              case(lambda x: sl.pinv(general(x), rtol=1e-12), 4, "rtol")],
    sl.lstsq: [case(lambda x: sl.lstsq(x[:6].reshape(3, 2) + A33[:, :2], x[6:])[0], 9),
               case(lambda x: sl.lstsq(A33[:, :2], x)[1], 3, "residue")],
    sl.qr: [case(lambda x: sl.qr(general(x))[1], 4),
            case(lambda x: sl.qr(x.reshape(3, 2) + A33[:, :2], mode="economic")[0], 6, "economic"),
            case(lambda x: sl.qr(general(x), mode="r")[0], 4, "r")],
    sl.eigh: [case(lambda x: sl.eigh(_sym(x))[0], 4),
              case(lambda x: sl.eigh(_sym(x), eigvals_only=True, lower=False), 4, "upper values"),
              case(lambda x: sl.eigh(_sym(x[:4]), SPD3[:2, :2] + np.outer(x[4:], x[4:]))[1],
                   6, "pencil, vectors"),
              case(lambda x: sl.eigh(_sym(x), SPD3[:2, :2], lower=False)[0], 4,
                   "pencil, upper values")],
    sl.eigvalsh: [case(lambda x: sl.eigvalsh(_sym(x)), 4),
                  case(lambda x: sl.eigvalsh(_sym(x[:4]), SPD3[:2, :2] * (2.0 + x[4])), 5,
                       "pencil")],
    sl.eig: [case(lambda x: _parts(sl.eig(_spiral(x))[0]), 4, "complex pair",
                  cs=NOT_HOLOMORPHIC_PARTS),
             case(lambda x: sl.eig(_skew_sym(x))[1] ** 2, 4, "real vectors squared",
                  cs="LAPACK scales complex eigenvectors to unit norm with |.|: not holomorphic"),
             case(lambda x: _parts(sl.eig(_skew_sym(x), right=False)), 4, "right=False",
                  cs=NOT_HOLOMORPHIC_PARTS)],
    sl.eigvals: [case(lambda x: _parts(sl.eigvals(_skew_sym(x))), 4, "real eigenvalues",
                      cs=NOT_HOLOMORPHIC_PARTS),
                 case(lambda x: _parts(sl.eigvals(_spiral(x) + 1j * _skew_sym(x))), 4,
                      "complex matrix", cs=NOT_HOLOMORPHIC_PARTS)],
}


# shape parameters of each distribution at a point inside their range; a
# case moves them by 0.1 x. A distribution adsim adds gets no case until it
# is listed here (the completeness test names its methods).
STAT_SHAPES = {"norm": (), "expon": (), "cauchy": (), "halfnorm": (), "laplace": (),
               "logistic": (), "uniform": (), "t": (3.5,), "gamma": (2.5,), "chi2": (3.0,),
               "invgamma": (2.5,), "lognorm": (0.7,), "weibull_min": (1.8,),
               "skewnorm": (1.5,), "beta": (2.5, 1.7), "gumbel_r": (), "gumbel_l": (),
               "rayleigh": (), "pareto": (2.5,), "halfcauchy": (), "lomax": (2.2,),
               "fisk": (1.8,), "weibull_max": (1.7,), "invweibull": (2.4,), "levy": (),
               "vonmises": (1.3,), "truncnorm": (-1.0, 1.5)}
# the counts k (plain) and the parameters, active, of discrete distributions
STAT_DISCRETE = {"poisson": (lambda x: ([0, 1, 3], 1.0 + x), 1),
                 "binom": (lambda x: ([0, 2, 4], 5, x), 1),
                 "bernoulli": (lambda x: (0, x), 1),
                 "nbinom": (lambda x: ([0, 2, 4], 2.5, x), 1),
                 "geom": (lambda x: ([1, 2, 4], x), 1)}
STAT_DOMAIN = (0.1, 0.9)           # points x and quantiles q, well inside every support
STAT_SHIFT = {"invgamma": 0.6, "chi2": 0.5, "pareto": 1.2, "weibull_max": -1.2, "levy": 0.3,
              "invweibull": 0.5}   # points where differences of the density are accurate


def _stat_arguments(name, method, x):
    """(points, *shapes, loc, scale) of a continuous distribution from x:
    shapes that adsim does not differentiate in ``method`` stay plain."""
    from adsim._scipy.distributions import CONTINUOUS
    plain = CONTINUOUS[name].plain.get(method, ())
    base = STAT_SHAPES[name]
    points, rest = (x[:3], x[3:]) if method != "entropy" else ((), x)
    if method in ("ppf", "isf"):
        points = 0.25 + 0.5 * points                  # quantiles away from 0 and 1
    elif method != "entropy":
        points = points + STAT_SHIFT.get(name, 0.0)
    shapes, k = [], 0
    for i, b in enumerate(base):
        if i in plain:
            shapes.append(b)
        else:
            shapes.append(b + 0.1 * rest[k])
            k += 1
    loc, scale = 0.05 * rest[k], 1.0 + 0.2 * rest[k + 1]
    return ((points,) if method != "entropy" else ()) + tuple(shapes) + (loc, scale)


def _stat_size(name, method):
    from adsim._scipy.distributions import CONTINUOUS
    plain = CONTINUOUS[name].plain.get(method, ())
    active = sum(1 for i in range(len(STAT_SHAPES[name])) if i not in plain)
    return (3 if method != "entropy" else 0) + active + 2


def _stat_cases():
    from adsim._scipy import distributions, stats
    cases = {}
    for name in STAT_SHAPES:
        dist = getattr(st, name)
        for m in stats._methods(distributions.CONTINUOUS[name]):
            cases[getattr(dist, m)] = [case(
                (lambda name, m: lambda x: getattr(getattr(st, name), m)(
                    *_stat_arguments(name, m, x)))(name, m), _stat_size(name, m),
                domain=STAT_DOMAIN)]
    for name, (arguments, n) in STAT_DISCRETE.items():
        dist = getattr(st, name)
        for m in stats._methods(distributions.DISCRETE[name]):
            cases[getattr(dist, m)] = [case(
                (lambda dist, m, arguments: lambda x: getattr(dist, m)(*arguments(x)))(
                    dist, m, arguments), n, domain=STAT_DOMAIN)]
    return cases


# methods where the complex step does not apply: "*" all of a distribution's
STAT_REFUSE_COMPLEX = {"norm": "entropy ppf isf", "expon": "entropy ppf isf",
                       "cauchy": "entropy ppf isf cdf logcdf sf logsf",
                       "halfnorm": "entropy ppf isf", "laplace": "entropy ppf isf",
                       "logistic": "entropy ppf isf cdf logcdf sf logsf",
                       "uniform": "entropy ppf isf", "t": "*", "gamma": "*", "chi2": "*",
                       "invgamma": "*", "lognorm": "entropy ppf isf",
                       "weibull_min": "entropy ppf isf", "beta": "*",
                       "skewnorm": "cdf logcdf sf logsf ppf isf", "poisson": "*", "binom": "*",
                       "bernoulli": "*", "nbinom": "*", "geom": "*", "gumbel_r": "entropy ppf isf",
                       "gumbel_l": "entropy ppf isf", "rayleigh": "entropy ppf isf",
                       "pareto": "entropy ppf isf",
                       "halfcauchy": "entropy ppf isf logcdf sf logsf",
                       "lomax": "entropy ppf isf", "fisk": "entropy ppf isf",
                       "weibull_max": "entropy ppf isf", "invweibull": "entropy ppf isf",
                       "levy": "entropy ppf isf", "vonmises": "*"}
STAT_WITH_ABS = {"cauchy": "logpdf", "laplace": "logpdf pdf", "logistic": "logpdf pdf"}


def _stats_without_complex_step():
    from adsim._scipy import distributions, stats
    families = {**distributions.CONTINUOUS, **distributions.DISCRETE}
    out = {}
    for table, reason in ((STAT_REFUSE_COMPLEX, REFUSES_COMPLEX),
                          (STAT_WITH_ABS, "SciPy computes it with |x|: not holomorphic")):
        for name, methods in table.items():
            names = stats._methods(families[name]) if methods == "*" else methods.split()
            out.update(dict.fromkeys([getattr(getattr(st, name), m) for m in names], reason))
    out.update(dict.fromkeys([st.dirichlet.logpdf, st.dirichlet.pdf, st.dirichlet.entropy,
                              st.dirichlet.__call__], REFUSES_COMPLEX))
    out.update(dict.fromkeys([getattr(st.truncnorm, m)
                              for m in stats._methods(distributions.CONTINUOUS["truncnorm"])],
                             "SciPy's truncnorm drops the imaginary part of its input"))
    return out


NO_COMPLEX_ENTR = "scipy.special.entr and rel_entr have no complex loop"
MVN_FROZEN = st.multivariate_normal(np.array([0.1, -0.2, 0.3]), SPD3)


def _simplex(x):
    return np.concatenate([0.3 * x, [1.0 - 0.3 * np.sum(x)]])


STATS = {
    **_stat_cases(),
    # summary functions (adsim/_scipy/stats_functions.py)
    st.entropy: [case(lambda x: st.entropy(1.5 + x), 4, domain=STAT_DOMAIN, cs=NO_COMPLEX_ENTR),
                 case(lambda x: st.entropy(1.5 + x[:3], 1.2 + x[3:], base=2.0), 6, "qk base",
                      domain=STAT_DOMAIN, cs=NO_COMPLEX_ENTR)],
    st.zscore: [case(lambda x: st.zscore(x.reshape(2, 3), axis=1, ddof=1), 6,
                     cs="the standard deviation takes |x|: not holomorphic")],
    st.skew: [case(lambda x: st.skew(x, bias=False), 5)],
    st.kurtosis: [case(lambda x: st.kurtosis(x.reshape(2, 3), axis=None), 6)],
    st.pearsonr: [case(lambda x: np.stack(st.pearsonr(x[:4], x[4:] ** 2 + x[:4])), 8,
                       cs="the p-value takes |r|, betainc has no complex loop")],
    st.norm.logpdf: [case(lambda x: st.norm(x[3], x[4]).logpdf(x[:3]), 5, "frozen", STAT_DOMAIN)],
    st.gaussian_kde.__init__: [case(lambda x: st.gaussian_kde(x)(KDE_POINTS), 6, cs=KDE_CS),
                               case(lambda x: st.gaussian_kde(KDE_DATA, bw_method=1.0 + x[0],
                                                              weights=2.0 + x[1:])(KDE_POINTS),
                                    7, "bandwidth, weights", cs=KDE_CS)],
    st.gaussian_kde.evaluate: [case(lambda x: st.gaussian_kde(KDE_DATA)(x), 3, cs=KDE_CS)],
    st.gaussian_kde.set_bandwidth: [case(
        lambda x: [k.set_bandwidth(bw_method=0.5 + x[6]) or k(KDE_POINTS)
                   for k in [st.gaussian_kde(x[:6])]][0], 7, cs=KDE_CS)],
    st.gaussian_kde.logpdf: [case(lambda x: st.gaussian_kde(x[:6]).logpdf(x[6:]), 8, cs=KDE_CS)],
    st.multivariate_normal.logpdf: [
        case(lambda x: st.multivariate_normal.logpdf(x[:2], x[2:4], spd(x[4:])), 6),
        case(lambda x: st.multivariate_normal.logpdf(x.reshape(2, 3), cov=SPD3), 6, "points")],
    st.multivariate_normal.pdf: [
        case(lambda x: st.multivariate_normal.pdf(x[:3], x[3:], SPD3), 6)],
    st.multivariate_normal.__call__: [
        case(lambda x: st.multivariate_normal(x[2:4], spd(x[4:])).logpdf(x[:2]), 6)],
    MVN_FROZEN.logpdf: [case(MVN_FROZEN.logpdf, 3)],
    st.multivariate_normal.entropy: [case(lambda x: st.multivariate_normal.entropy(cov=spd(x)), 2)],
    MVN_FROZEN.pdf: [case(MVN_FROZEN.pdf, (2, 3))],
    st.dirichlet.logpdf: [case(lambda x: st.dirichlet.logpdf(_simplex(x[:2]), 1.0 + x[2:]), 5,
                               domain=STAT_DOMAIN)],
    st.dirichlet.pdf: [case(lambda x: st.dirichlet.pdf(_simplex(x[:2]), 1.5 + x[2:]), 5,
                            domain=STAT_DOMAIN)],
    st.dirichlet.entropy: [case(lambda x: st.dirichlet.entropy(1.0 + x), 3, domain=STAT_DOMAIN)],
    st.dirichlet.__call__: [case(lambda x: st.dirichlet(1.0 + x[2:]).logpdf(_simplex(x[:2])), 5,
                                 domain=STAT_DOMAIN)],
    # the pathwise derivative of variates in loc and scale (adsim/_scipy/stats_rvs.py)
    st.rv_continuous.rvs: [case(lambda x: st.norm.rvs(x[0], x[1], size=3, random_state=0), 2,
                                domain=(0.2, 1.5), cs="a draw takes real parameters")],
}


# ---------------------------------------------------------------- more NumPy

NAN2 = np.array([[1.0, np.nan, 1.0], [np.nan, 1.0, 1.0]])      # NaNs for the nan-functions


def _with_nans(f):
    return lambda x: f(x.reshape(2, 3) * NAN2)


def _partitioned(x):
    y = x * 1.0
    y.partition(2)
    return y


def _nan_reductions():
    out = {}
    for f in (np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanvar, np.nanstd,
              np.nanmedian):
        out[f] = [case(_with_nans(f), 6),
                  case((lambda f: _with_nans(lambda y: f(y, axis=0)))(f), 6, "axis 0 (a column "
                       "of one number)"),
                  case((lambda f: _with_nans(lambda y: f(y, axis=1, keepdims=True)))(f), 6,
                       "axis 1 keepdims")]
    out[np.nancumsum] = [case(_with_nans(np.nancumsum), 6),
                         case(_with_nans(lambda y: np.nancumsum(y, axis=1)), 6, "axis")]
    out[np.nancumprod] = [case(_with_nans(lambda y: np.nancumprod(y, axis=0)), 6)]
    out[np.nanquantile] = [case(_with_nans(lambda y: np.nanquantile(y, [0.25, 0.5], axis=1)), 6)]
    out[np.nanpercentile] = [case(_with_nans(lambda y: np.nanpercentile(y, 40)), 6)]
    return out


NUMPY_MORE = {
    **_nan_reductions(),
    np.ptp: [case(np.ptp, 4), case(lambda x: np.ptp(x, axis=1), (2, 3), "axis")],
    np.cov: [case(np.cov, (2, 3)), case(lambda x: np.cov(x, rowvar=False, ddof=0), (3, 2),
                                        "columns"),
             case(lambda x: np.cov(x[:3], x[3:]), 6, "two")],
    np.corrcoef: [case(np.corrcoef, (2, 3))],
    np.partition: [case(lambda x: np.partition(x, 2), 5),
                   case(lambda x: np.partition(x, 1, axis=0), (3, 2), "axis")],
    np.angle: [case(lambda x: np.angle(x + 1j * x[::-1]), 3)],
    np.nan_to_num: [case(lambda x: np.nan_to_num(x * NANS, nan=0.5), 4),
                    case(lambda x: np.nan_to_num(x * np.array([1.0, np.inf, -np.inf])), 3, "inf")],
    np.real_if_close: [case(np.real_if_close, 3)],
    np.i0: [case(np.i0, 4)],
    np.piecewise: [case(lambda x: np.piecewise(x, [x < 0.0, x >= 0.0], [np.sin, lambda v: v ** 2]),
                        5),
                   case(lambda x: np.piecewise(x, [x < -1.0], [0.5, np.cos]), 4, "default")],
    np.polyfit: [case(lambda x: np.polyfit(np.arange(5.0), x, 2), 5),
                 case(lambda x: np.polyfit(x[:5], x[5:] ** 2, 1, w=x[:5] ** 2), 10,
                      "active x, y, w")],
    np.roots: [case(lambda x: np.roots(np.array([1.0, -x[0] - x[1] - 5.0, (x[0] + 5.0) * x[1]])),
                    2),
               case(lambda x: np.stack([np.real(np.roots(x)), np.imag(np.roots(x))]), 4,
                    "complex roots", domain=(0.5, 2.0))],
    np.unwrap: [case(lambda x: np.unwrap(3.0 * x), 6),
                case(lambda x: np.unwrap(2.0 * x, axis=0, period=3.0), (3, 2), "axis, period")],
    np.bincount: [case(lambda x: np.bincount([0, 2, 2, 4, 0, 1], weights=x ** 2), 6),
                  case(lambda x: np.bincount([3, 1], weights=x, minlength=6), 2, "minlength")],
    np.put: [case(lambda x: _into_zeros(np.put, x, 6, [0, 3, 3, -1], lambda x: x ** 2), 4,
                  "repeated positions"),
             case(lambda x: _into_zeros(np.put, x, (2, 3), [7, -8], lambda x: x, mode="wrap"),
                  3, "wrap, values repeated"),
             case(lambda x: _into_zeros(np.put, x, 4, [9, 0], lambda x: x, mode="clip"), 2,
                  "clip")],
    np.putmask: [case(lambda x: _into_zeros(np.putmask, x, (2, 3),
                                            np.arange(6).reshape(2, 3) % 2 == 0, lambda x: x), 4)],
    np.place: [case(lambda x: _into_zeros(np.place, x, 6, [True, False, True, True, False, True],
                                          lambda x: x), 3)],
    np.put_along_axis: [case(lambda x: _into_zeros(np.put_along_axis, x, (2, 3),
                                                   np.array([[2], [0]]), lambda x: x, axis=1),
                             (2, 1)),
                        case(lambda x: _into_zeros(np.put_along_axis, x, 5, np.array([4, 1]),
                                                   lambda x: x, axis=None), 2, "axis None")],
    np.histogram_bin_edges: [case(lambda x: np.histogram_bin_edges(x, 3), 6),
                             case(lambda x: np.histogram_bin_edges(x, 2, range=(x[0], 3.0)), 4,
                                  "active range")],
    np.unique: [case(lambda x: np.unique(np.concatenate([x, x[2:0:-1], x[:1]])), 5, "ties"),
                case(lambda x: np.prod(np.unique(np.concatenate([x, x[:2]]),
                                                 return_counts=True), axis=0), 4, "counts"),
                case(lambda x: _unique_rebuilt(np.concatenate([x, x[::-2]])), 5, "inverse"),
                case(lambda x: np.sum(np.unique(np.concatenate([x[::-1], x]), return_index=True),
                                      axis=0), 3, "index"),
                case(lambda x: np.unique(np.concatenate([x, x[:1]]), axis=0), (2, 3), "rows"),
                case(lambda x: np.unique(np.concatenate([x, x[:, :1], x[:, 1:2]], axis=1),
                                         axis=-1), (2, 2), "columns"),
                case(lambda x: np.unique(x.reshape(2, 2)), 4, "2-d flattened")],
    **{getattr(np, name): [case(lambda x, f=getattr(np, name), k=k: _unique_fields(
        f(np.concatenate([x, x[1:3], x[:2]]).reshape(2, 4)), k), 4,
        cs="NumPy's unique_values of complex values comes in hash order" if k == 0 else "")]
       for name, k in (("unique_values", 0), ("unique_counts", 2), ("unique_inverse", 3),
                       ("unique_all", 4)) if hasattr(np, name)},
    np.histogram2d: [case(lambda x: np.histogram2d(x[:4], x[4:], 2, weights=x[:4] ** 2)[0], 8),
                     case(lambda x: np.histogram2d(x[:4], x[4:], [2, 3])[2], 8, "edges")],
    np.histogramdd: [case(lambda x: np.histogramdd(x.reshape(4, 2), 2, density=True,
                                                   weights=x[::2] ** 2)[0], 8)],
    np.histogram: [case(lambda x: np.histogram(x, 3)[1], 6),
                   case(lambda x: np.histogram(x, 2, density=True, weights=x ** 2)[0], 6,
                        "density, weights")],
    np.apply_along_axis: [case(lambda x: np.apply_along_axis(lambda r: r * np.sum(r), 1, x),
                               (2, 3))],
    np.vander: [case(np.vander, 3), case(lambda x: np.vander(x, 2, increasing=True), 3, "N")],
    np.copysign: [case(lambda x: np.copysign(x, np.array([1.0, -1.0, -2.0])), 3),
                  case(lambda x: np.copysign(x[:2], x[2:]), 4, "active sign")],
    np.divmod: [case(lambda x: np.divmod(x, 1.0)[1], 3),
                case(lambda x: np.divmod(2.5, x)[1], 3, "constant numerator", (0.55, 1.2))],
    np.dstack: [case(lambda x: np.dstack([x[:2], x[2:]]), 4)],
    np.block: [case(lambda x: np.block([[x.reshape(2, 2), np.eye(2)],
                                        [x.reshape(2, 2).T, x.reshape(2, 2)]]), 4),
               case(lambda x: np.block([x[:2], np.ones(1), x[2:]]), 4, "1-d")],
    np.diagflat: [case(np.diagflat, (2, 2)), case(lambda x: np.diagflat(x, 1), 2, "k")],
    np.compress: [case(lambda x: np.compress([True, False, True], x), 3),
                  case(lambda x: np.compress([False, True], x, axis=0), (2, 2), "axis")],
    np.extract: [case(lambda x: np.extract(BOOL3, x), 3)],
    np.insert: [case(lambda x: np.insert(x, 1, 0.5), 3),
                case(lambda x: np.insert(x[1:], [0, 2], x[0] ** 2), 4, "active values")],
    np.delete: [case(lambda x: np.delete(x, 1), 3),
                case(lambda x: np.delete(x, [0], axis=1), (2, 3), "axis")],
    np.resize: [case(lambda x: np.resize(x, (2, 3)), 4)],
    np.lib.stride_tricks.sliding_window_view: [
        case(lambda x: np.lib.stride_tricks.sliding_window_view(x, 3), 5)],
    np.r_: [case(lambda x: np.r_[x[:2], 0.5, x[2:]], 4), case(lambda x: np.r_[x, 0:2], 2, "slice")],
    np.c_: [case(lambda x: np.c_[x[:2], x[2:]], 4)],
    np.trim_zeros: [case(lambda x: np.trim_zeros(np.concatenate([[0.0], x, [0.0, 0.0]])), 3)],
    np.linalg.multi_dot: [case(lambda x: np.linalg.multi_dot([x.reshape(1, 3), A33, x]), 3)],
    np.linalg.cond: [case(lambda x: np.linalg.cond(general(x)), 4),
                     case(lambda x: np.linalg.cond(general(x), 1), 4, "ord 1")],
    np.linalg.tensorsolve: [case(lambda x: np.linalg.tensorsolve(general(x[:4]), x[4:]), 6)],
    np.linalg.tensorinv: [case(lambda x: np.linalg.tensorinv(general(x).reshape(2, 2), ind=1), 4)],
    np.linalg.matrix_rank: [
        case(lambda x: x * np.linalg.matrix_rank(general(x)), 4),
        case(lambda x: x * np.linalg.matrix_rank(spd(x), hermitian=True), 3, "hermitian"),
        case(lambda x: x[0] * np.linalg.matrix_rank(x.reshape(2, 3), tol=0.5 * np.max(x)), 6,
             "active tol"),
        case(lambda x: x * np.linalg.matrix_rank(x), 3, "a vector")],
    np.cumulative_sum: [case(np.cumulative_sum, 4),
                        case(lambda x: np.cumulative_sum(x, axis=0, include_initial=True),
                             (2, 2), "include_initial")],
    np.cumulative_prod: [case(np.cumulative_prod, 4)],
    np.unstack: [case(lambda x: np.unstack(x)[1] * 2.0, (2, 3))],
    np.astype: [case(lambda x: np.astype(x, np.float64), 3)],
    np.matrix_transpose: [case(np.matrix_transpose, (2, 2, 3))],
    np.linalg.matrix_transpose: [case(np.linalg.matrix_transpose, (2, 3))],
    np.linalg.matmul: [case(lambda x: np.linalg.matmul(x.reshape(2, 2), x.reshape(2, 2)), 4)],
    np.linalg.outer: [case(lambda x: np.linalg.outer(x[:2], x[2:]), 5)],
    np.linalg.vecdot: [case(lambda x: np.linalg.vecdot(x.reshape(2, 3), C3), 6),
                       case(lambda x: np.linalg.vecdot(x[:6].reshape(3, 2), x[6:], axis=0), 9,
                            "axis 0 of operands of two ranks")],
    np.linalg.trace: [case(np.linalg.trace, (2, 2, 2))],
    np.linalg.diagonal: [case(lambda x: np.linalg.diagonal(x, offset=1), (2, 3))],
    np.linalg.cross: [case(lambda x: np.linalg.cross(x[:3], x[3:]), 6)],
    np.linalg.vector_norm: [case(np.linalg.vector_norm, 4),
                            case(lambda x: np.linalg.vector_norm(x, ord=1, axis=0), (2, 3), "ord")],
    np.linalg.matrix_norm: [case(np.linalg.matrix_norm, (2, 3)),
                            case(lambda x: np.linalg.matrix_norm(x, ord="nuc"), (2, 3), "nuc")],
    np.linalg.svdvals: [case(lambda x: np.linalg.svdvals(x + A23), (2, 3))],
    np.vecdot: [case(lambda x: np.vecdot(x[:3], x[3:]), 6),
                case(lambda x: np.vecdot(x.reshape(2, 2), x[:2]), 4, "broadcast")],
    np.matvec: [case(lambda x: np.matvec(x[:4].reshape(2, 2), x[4:]), 6),
                case(lambda x: np.matvec(A23, x.reshape(2, 3)), 6, "stack")],
    np.vecmat: [case(lambda x: np.vecmat(x[:2], x[2:].reshape(2, 2)), 6)],
    "ndarray.compress": [case(lambda x: x.compress([True, False, True]), 3)],
    # coefficients read back from splines made of active data (adsim/_scipy/interpolate.py)
    "scipy.interpolate._bsplines.BSpline.c": [
        case(lambda x: interpolate.BSpline(np.arange(7.0), x, 2).c, 4)],
    "scipy.interpolate._interpolate._PPolyBase.c": [
        case(lambda x: interpolate.CubicSpline(np.arange(4.0), x).c, 4)],
    "scipy.interpolate._rgi.RegularGridInterpolator.values": [
        case(lambda x: interpolate.RegularGridInterpolator((np.arange(3.0),), x).values, 3)],
    "ndarray.partition": [case(_partitioned, 4)],
    "ndarray.mT": [case(lambda x: x.mT, (2, 2, 3))],
}


# ---------------------------------------------------------------- more scipy.special

def _unaries(domains, shapes=SHAPES_S):
    return {f: unary(f, d, shapes) for f, d in domains.items()}


SPECIAL_MORE = {
    **_unaries({sc.y0: (0.2, 3.0), sc.y1: (0.2, 3.0), sc.k0: (0.2, 3.0), sc.k1: (0.2, 3.0),
                sc.k0e: (0.2, 3.0), sc.k1e: (0.2, 3.0), sc.gammasgn: (0.2, 3.0),
                sc.rgamma: (-2.0, 2.0), sc.loggamma: (0.2, 3.0), sc.erfcx: (-2.0, 2.0),
                sc.erfi: (-2.0, 2.0), sc.dawsn: (-2.0, 2.0), sc.exp1: (0.2, 3.0),
                sc.expi: (0.2, 3.0), sc.spence: (0.2, 3.0), sc.ellipk: (-2.0, 0.9),
                sc.ellipe: (-2.0, 0.9), sc.exprel: (-2.0, 2.0), sc.cosm1: (-2.0, 2.0),
                sc.exp10: (-1.0, 1.0), sc.cosdg: (-2.0, 2.0), sc.sindg: (-2.0, 2.0),
                sc.tandg: (-2.0, 2.0), sc.cotdg: (0.2, 3.0), sc.expm1: (-2.0, 2.0),
                sc.log1p: (-0.5, 2.0), sc.cbrt: (0.2, 3.0), sc.exp2: (-2.0, 2.0)}),
    sc.yn: _second(sc.yn, 2, (0.2, 3.0)), sc.yv: _second(sc.yv, 1.5, (0.2, 3.0)),
    sc.kv: _second(sc.kv, 0.5, (0.2, 3.0)), sc.kve: _second(sc.kve, 1.5, (0.2, 3.0)),
    sc.expn: _second(sc.expn, 2, (0.2, 3.0)),
    sc.binom: [case(lambda x: sc.binom(3.0 + x[:2], x[2:]), 4, domain=(0.2, 1.8)),
               case(lambda x: sc.binom(5, x), 3, "integer n", (0.2, 1.8))],
    sc.owens_t: [case(lambda x: sc.owens_t(x[:2], x[2:]), 4)],
    sc.hyp2f1: [case(lambda x: sc.hyp2f1(0.5, 1.5, 2.5, x), 3, domain=(-0.8, 0.8))],
    sc.hyp1f1: [case(lambda x: sc.hyp1f1(0.5, 1.5, x), 3)],
    sc.boxcox: [case(lambda x: sc.boxcox(x[:2] + 2.5, x[2:]), 4),
                case(lambda x: sc.boxcox(x + 2.5, 0.0), 3, "lambda 0")],
    sc.boxcox1p: [case(lambda x: sc.boxcox1p(x[:2] + 1.5, x[2:]), 4)],
    sc.huber: [case(lambda x: sc.huber(1.0, x), 4), case(lambda x: sc.huber(x[:2] + 2.5, x[2:]), 4,
                                                           "active delta")],
    sc.pseudo_huber: [case(lambda x: sc.pseudo_huber(x[:2] + 2.5, x[2:]), 4)],
    sc.kl_div: [case(lambda x: sc.kl_div(x[:2], x[2:]), 4, domain=(0.2, 3.0))],
    sc.powm1: [case(lambda x: sc.powm1(x[:2], x[2:]), 4, domain=(0.2, 3.0))],
    sc.radian: [case(lambda x: sc.radian(x[0], x[1], x[2]), 3)],
    sc.multigammaln: [case(lambda x: sc.multigammaln(x, 3), 2, domain=(1.2, 3.0))],
    # raw distribution functions (adsim/_scipy/cdf_ufuncs.py): in the variable
    sc.chdtr: _second(sc.chdtr, 3.0, (0.2, 3.0)), sc.chdtrc: _second(sc.chdtrc, 1.5, (0.2, 3.0)),
    sc.chdtri: _second(sc.chdtri, 2.5, (0.1, 0.9)),
    sc.gdtr: [case(lambda x: sc.gdtr(x[:2], 2.5, x[2:]), 4, domain=(0.2, 3.0))],
    sc.gdtrc: [case(lambda x: sc.gdtrc(x[:2], 0.7, x[2:]), 4, domain=(0.2, 3.0))],
    sc.gdtrix: [case(lambda x: sc.gdtrix(x[:2] + 0.5, 1.7, x[2:] / 4.0), 4, domain=(0.2, 3.0))],
    sc.pdtr: _second(sc.pdtr, 3, (0.2, 3.0)), sc.pdtrc: _second(sc.pdtrc, 2, (0.2, 3.0)),
    sc.pdtri: _second(sc.pdtri, 3, (0.1, 0.9)),
    sc.bdtr: [case(lambda x: sc.bdtr(3, 8, x), 3, domain=(0.1, 0.9))],
    sc.bdtrc: [case(lambda x: sc.bdtrc(3, 8, x), 3, domain=(0.1, 0.9))],
    sc.bdtri: [case(lambda x: sc.bdtri(3, 8, x), 3, domain=(0.1, 0.9))],
    sc.nbdtr: [case(lambda x: sc.nbdtr(3, 2, x), 3, domain=(0.1, 0.9))],
    sc.nbdtrc: [case(lambda x: sc.nbdtrc(3, 2, x), 3, domain=(0.1, 0.9))],
    sc.fdtr: [case(lambda x: sc.fdtr(3.0, 7.0, x), 3, domain=(0.2, 3.0))],
    sc.fdtrc: [case(lambda x: sc.fdtrc(3.0, 7.0, x), 3, domain=(0.2, 3.0))],
    sc.fdtri: [case(lambda x: sc.fdtri(3.0, 7.0, x), 3, domain=(0.1, 0.9))],
    sc.betainccinv: [case(lambda x: sc.betainccinv(2.0, 3.5, x), 3, domain=(0.1, 0.9))],
    # more of adsim/_scipy/ufuncs.py
    sc.kn: _second(sc.kn, 2, (0.2, 3.0)), sc.jve: _second(sc.jve, 1.5, (0.2, 3.0)),
    sc.yve: _second(sc.yve, 0.5, (0.2, 3.0)), sc.struve: _second(sc.struve, 0.5, (0.2, 3.0)),
    sc.modstruve: _second(sc.modstruve, 1.5, (0.2, 3.0)),
    sc.poch: [case(lambda x: sc.poch(x[:2] + 2.5, x[2:]), 4)],
    sc.voigt_profile: [case(lambda x: sc.voigt_profile(x[:2], x[2:4] + 2.5, x[4:] + 2.5), 6),
                       case(lambda x: sc.voigt_profile(x, 0.0, 1.3), 3, "Lorentzian")],
    **_unaries({sc.ndtri_exp: (-3.0, -0.1), sc.ellipkm1: (0.1, 0.9)}),
    sc.inv_boxcox: [case(lambda x: sc.inv_boxcox(x[:2] / 2.0, x[2:] / 4.0), 4)],
    sc.inv_boxcox1p: [case(lambda x: sc.inv_boxcox1p(x[:2] / 2.0, x[2:] / 4.0), 4)],
    **{f: _second(f, 3, (-0.9, 0.9)) for f in (
        sc.eval_legendre, sc.eval_sh_legendre, sc.eval_chebyt, sc.eval_chebyu, sc.eval_hermite,
        sc.eval_hermitenorm, sc.eval_laguerre)},
    sc.eval_gegenbauer: [case(lambda x: sc.eval_gegenbauer(4, 0.7, x), 3, domain=(-0.9, 0.9))],
    sc.eval_genlaguerre: [case(lambda x: sc.eval_genlaguerre(3, 0.5, x), 3)],
    sc.eval_jacobi: [case(lambda x: sc.eval_jacobi(3, 0.5, 1.5, x), 3, domain=(-0.9, 0.9))],
}


# ---------------------------------------------------------------- more SciPy

def _odes(x):
    sol = scipy.integrate.solve_ivp(lambda t, y: -x[0] * y + np.sin(t), (0.0, 0.5), x[1:],
                                    t_eval=[0.25, 0.5], rtol=1e-11, atol=1e-12)
    return sol.y


def _odeint_active_rtol(x):
    # odeint's derivatives (adsim/integrate/_odeint.py) are those of the exact
    # solution to about the tolerance, not to the rounding this table checks:
    # tests/integrate/test_odeint.py checks them; here, an option refused
    return scipy.integrate.odeint(lambda y, t: -y, x[1:], [0.0, 0.5], rtol=x[0] * 1e-6)


def _cantilever(x):
    # EI y'''' = q clamped at 0, free at 1 (x = (EI, q, tip shear)): a quartic the
    # collocation holds exactly at the nodes, on the initial mesh for every x here
    def fun(s, y):
        return np.vstack([y[1], y[2], y[3], np.ones_like(s) * (x[1] / x[0])])

    def bc(ya, yb):
        return np.stack([ya[0], ya[1], yb[2], yb[3] - x[2]])
    sol = scipy.integrate.solve_bvp(fun, bc, np.linspace(0.0, 1.0, 6),
                                    np.zeros((4, 6), dtype=np.result_type(x)), tol=1e-4)
    return np.concatenate([sol.y[0], sol.sol(np.array([0.3, 0.75]))[1]])


# a plain solution (SciPy's own solve) evaluated at active times
_PLAIN_SOLUTION = scipy.integrate.solve_ivp(lambda t, y: [y[1], -y[0]], (0.0, 2.0), [1.0, 0.0],
                                            dense_output=True, rtol=1e-6).sol

SCIPY_MORE = {
    sl.lu: [case(lambda x: sl.lu(general(x))[2], 4), case(lambda x: sl.lu(general(x))[1], 4, "L")],
    sl.norm: [case(lambda x: sl.norm(x), (2, 3)), case(lambda x: sl.norm(x, 1), 4, "ord 1")],
    sl.solve_banded: [case(lambda x: sl.solve_banded((1, 1), np.array(
        [[0.0, 0.5, 0.5], [4.0, 4.0, 4.0], [0.5, 0.5, 0.0]]) + x[:9].reshape(3, 3) * 0.1, x[9:]),
        12)],
    sl.solveh_banded: [case(lambda x: sl.solveh_banded(np.array(
        [[0.0, 0.5, 0.5], [4.0, 4.0, 4.0]]) + x[:6].reshape(2, 3) * 0.1, x[6:]), 9, cs=HERMITIAN),
        case(lambda x: sl.solveh_banded(np.array([[4.0, 4.0, 4.0], [0.5, 0.5, 0.0]]) +
                                        x[:6].reshape(2, 3) * 0.1, x[6:], lower=True), 9,
             "lower", cs=HERMITIAN)],
    sl.solve_sylvester: [case(lambda x: sl.solve_sylvester(general(x[:4]), np.eye(2), x[4:].reshape(
        2, 2)), 8)],
    sl.solve_continuous_lyapunov: [case(lambda x: sl.solve_continuous_lyapunov(
        -general(x[:4]), x[4:].reshape(2, 2)), 8)],
    sl.solve_discrete_lyapunov: [case(lambda x: sl.solve_discrete_lyapunov(
        0.1 * general(x[:4]), x[4:].reshape(2, 2)), 8)],
    sl.solve_continuous_are: [case(lambda x: sl.solve_continuous_are(
        general(x[:4]) - 5.0 * np.eye(2), x[4:6].reshape(2, 1) + 1.0,
        np.diag(x[6:8] ** 2 + 1.0), (x[8:] ** 2 + 1.0).reshape(1, 1)), 9)],
    sl.solve_discrete_are: [case(lambda x: sl.solve_discrete_are(
        0.2 * general(x[:4]), x[4:6].reshape(2, 1) + 1.0, np.diag(x[6:8] ** 2 + 1.0),
        (x[8:] ** 2 + 1.0).reshape(1, 1)), 9)],
    sl.block_diag: [case(lambda x: sl.block_diag(x[:2].reshape(1, 2), x[2:].reshape(2, 1), 1.5),
                         4)],
    sl.toeplitz: [case(lambda x: sl.toeplitz(x[:3], x[3:]), 6),
                  case(lambda x: sl.toeplitz(x), 3, "symmetric", cs="conjugates c for r")],
    sl.circulant: [case(sl.circulant, 3)],
    sl.hankel: [case(lambda x: sl.hankel(x[:3], x[2:]), 5)],
    **{f: [case((lambda f: lambda x: f(0.3 * x.reshape(2, 2) + np.eye(2)))(f), 4)]
       for f in (sl.sqrtm, sl.logm, sl.cosm, sl.sinm, sl.tanm, sl.coshm, sl.sinhm, sl.tanhm)},
    signal.convolve: [case(lambda x: signal.convolve(x[:3], x[3:]), 5),
                      case(lambda x: signal.convolve(x.reshape(2, 2), A23, mode="same"), 4, "2-d")],
    signal.correlate: [case(lambda x: signal.correlate(x, C3, mode="valid"), 4)],
    signal.fftconvolve: [case(lambda x: signal.fftconvolve(x[:3], x[3:]), 5)],
    signal.oaconvolve: [case(lambda x: signal.oaconvolve(x, C3, mode="same"), 4)],
    signal.convolve2d: [case(lambda x: signal.convolve2d(x.reshape(2, 2), A23), 4)],
    signal.correlate2d: [case(lambda x: signal.correlate2d(x.reshape(2, 3), x.reshape(2, 3)[:1],
                                                           mode="same"), 6)],
    signal.lfilter: [case(lambda x: signal.lfilter([0.5, 0.25], [1.0, -0.3], x), 5),
                     case(lambda x: signal.lfilter(x[:2], [1.0, x[2] * 0.2], x[3:]), 7,
                          "active coefficients"),
                     case(lambda x: signal.lfilter(x[:2], [1.0, x[2] * 0.2], x[3:6], zi=x[6:])[0],
                          7, "zi"),
                     case(lambda x: np.concatenate([r.ravel() for r in signal.lfilter(
                         [1.0, x[0] * 0.3], [1.0, -0.4], x[1:7].reshape(2, 3), axis=1,
                         zi=x[7:8].reshape(1, 1))]), 8, "zi broadcast as SciPy does"),
                     case(lambda x: np.concatenate([r.ravel() for r in signal.lfilter(
                         [1.0, 0.5, x[0] * 0.3], [1.0, -0.4], x[1:7].reshape(3, 2), axis=0,
                         zi=x[7:9].reshape(2, 1))]), 9, "zi broadcast along axis 1")],
    signal.lfilter_zi: [case(lambda x: signal.lfilter_zi(x[:3], [1.0, x[3] * 0.2, 0.1]), 4)],
    signal.sosfilt_zi: [case(lambda x: signal.sosfilt_zi(np.concatenate(
        [x[:3], np.ones(1), x[3:] * 0.2, [0.1]])[None]), 4)],
    np.common_type: [case(lambda x: x * np.ones(1, np.common_type(x, np.arange(2))), 3)],
    # linear in the signal or image (adsim/_scipy/linear_maps.py)
    signal.welch: [case(lambda x: signal.welch(x, nperseg=8)[1], 24, cs=KDE_CS),
                   case(lambda x: signal.welch(x.reshape(2, 12), nperseg=6, noverlap=2,
                                               scaling="spectrum", detrend="linear")[1], 24,
                        "2-d, spectrum", cs=KDE_CS)],
    signal.periodogram: [case(lambda x: signal.periodogram(x, window="hann")[1], 12, cs=KDE_CS)],
    signal.peak_prominences: [case(lambda x: signal.peak_prominences(
        PEAK_BASE + 0.01 * x, [5, 15])[0], 20, cs=KDE_CS)],
    signal.peak_widths: [case(lambda x: signal.peak_widths(
        PEAK_BASE + 0.01 * x, [5, 15], rel_height=0.6)[0], 20, cs=KDE_CS)],
    signal.find_peaks: [case(lambda x: _peak_properties(
        PEAK_BASE + 0.01 * x, signal.find_peaks(PEAK_BASE + 0.01 * x, prominence=0.5, width=1.0)),
        20, cs=KDE_CS)],
    signal.savgol_filter: [case(lambda x: signal.savgol_filter(x, 5, 2), 7,
                                cs="SciPy's savgol_filter takes real input"),
                           case(lambda x: signal.savgol_filter(x, 3, 1, deriv=1, mode="wrap"),
                                6, "wrap", cs="SciPy's savgol_filter takes real input")],
    signal.filtfilt: [case(lambda x: signal.filtfilt([0.5, 0.25], [1.0, -0.3], x), 10),
                      case(lambda x: signal.filtfilt(x[:2], [1.0, x[2] * 0.2], x[3:]), 10,
                           "active coefficients")],
    signal.sosfilt: [case(lambda x: signal.sosfilt([[0.2, 0.4, 0.2, 1.0, -0.4, 0.2]], x), 6)],
    signal.sosfiltfilt: [case(lambda x: signal.sosfiltfilt([[0.2, 0.4, 0.2, 1.0, -0.4, 0.2]],
                                                           x), 12),
                         case(lambda x: signal.sosfiltfilt(np.concatenate(
                             [x[:3], np.ones(1), x[3:4] * 0.2, [0.1]])[None], x[4:]), 14,
                             "active sections")],
    signal.detrend: [case(lambda x: signal.detrend(x), 5)],
    signal.decimate: [case(lambda x: signal.decimate(x, 2, n=4, ftype="fir"), 12)],
    signal.resample: [case(lambda x: signal.resample(x, 7), 5,
                           cs="SciPy resamples a real signal by rfft: complex input is another "
                              "transform")],
    signal.resample_poly: [case(lambda x: signal.resample_poly(x, 3, 2), 6)],
    signal.upfirdn: [case(lambda x: signal.upfirdn([1.0, 0.5, 0.25], x, 2, 1), 5)],
    scipy.integrate.cumulative_simpson: [case(
        lambda x: scipy.integrate.cumulative_simpson(x, dx=0.5, initial=0.0), 5)],
    ndimage.affine_transform: [case(lambda x: ndimage.affine_transform(
        x.reshape(3, 3), [[0.9, 0.1], [-0.1, 0.9]], offset=0.2, order=1), 9)],
    ndimage.sum_labels: [case(lambda x: ndimage.sum_labels(x, [1, 2, 1, 0, 2, 2], [1, 2]), 6,
                              cs="scipy.ndimage sums labelled regions of real input")],
    ndimage.mean: [case(lambda x: ndimage.mean(x, [1, 2, 1, 0, 2, 2], [1, 2]), 6,
                        cs="scipy.ndimage averages labelled regions of real input"),
                   case(lambda x: ndimage.mean(x.reshape(2, 3)), 6, "whole image")],
    ndimage.center_of_mass: [
        case(lambda x: np.stack(ndimage.center_of_mass(x.reshape(2, 3))), 6, domain=(0.5, 2.0),
             cs="scipy.ndimage.center_of_mass takes real input"),
        case(lambda x: np.stack(ndimage.center_of_mass(x.reshape(2, 3), [[1, 2, 1], [0, 2, 2]],
                                                       2)), 6, "one region",
             domain=(0.5, 2.0), cs="scipy.ndimage.center_of_mass takes real input")],
    ndimage.gaussian_filter: [case(lambda x: ndimage.gaussian_filter(x.reshape(2, 3), 0.8), 6)],
    ndimage.gaussian_filter1d: [case(lambda x: ndimage.gaussian_filter1d(x, 1.0), 5)],
    ndimage.uniform_filter: [case(lambda x: ndimage.uniform_filter(x.reshape(2, 3), 2), 6)],
    ndimage.uniform_filter1d: [case(lambda x: ndimage.uniform_filter1d(x, 3), 5)],
    ndimage.convolve: [case(lambda x: ndimage.convolve(x.reshape(2, 3), [[1.0, 2.0],
                                                                         [0.5, -1.0]]), 6)],
    ndimage.correlate: [case(lambda x: ndimage.correlate(x.reshape(2, 3), [[1.0, 2.0],
                                                                           [0.5, -1.0]]), 6)],
    ndimage.convolve1d: [case(lambda x: ndimage.convolve1d(x, [1.0, -2.0, 0.5]), 5)],
    ndimage.correlate1d: [case(lambda x: ndimage.correlate1d(x, [1.0, -2.0, 0.5]), 5)],
    ndimage.laplace: [case(lambda x: ndimage.laplace(x.reshape(2, 3)), 6)],
    ndimage.gaussian_laplace: [case(lambda x: ndimage.gaussian_laplace(x.reshape(2, 3), 0.7),
                                    6)],
    ndimage.sobel: [case(lambda x: ndimage.sobel(x.reshape(2, 3)), 6)],
    ndimage.prewitt: [case(lambda x: ndimage.prewitt(x.reshape(2, 3)), 6)],
    ndimage.zoom: [case(lambda x: ndimage.zoom(x.reshape(2, 3), 1.5, order=1), 6)],
    ndimage.shift: [case(lambda x: ndimage.shift(x, 0.4), 5)],
    ndimage.rotate: [case(lambda x: ndimage.rotate(x.reshape(3, 3), 30, reshape=False,
                                                   order=1), 9)],
    ndimage.map_coordinates: [case(lambda x: ndimage.map_coordinates(
        x.reshape(2, 3), [[0.5, 1.0], [0.3, 1.7]], order=1), 6)],
    ndimage.spline_filter: [case(lambda x: ndimage.spline_filter(x.reshape(2, 3)), 6,
                                 cs="SciPy's spline_filter takes real input")],
    ndimage.spline_filter1d: [case(lambda x: ndimage.spline_filter1d(x), 5,
                                   cs="SciPy's spline_filter1d takes real input")],
    distance.pdist: [case(lambda x: distance.pdist(x.reshape(3, 2)), 6),
                     case(lambda x: distance.pdist(x.reshape(3, 2), "sqeuclidean"), 6, "metric")],
    distance.cdist: [case(lambda x: distance.cdist(x[:4].reshape(2, 2), x[4:].reshape(1, 2)), 6),
                     case(lambda x: distance.cdist(x.reshape(2, 2), A23[:, :2], "cityblock"), 4,
                          "cityblock")],
    distance.squareform: [case(distance.squareform, 3),
                          case(lambda x: distance.squareform(distance.squareform(x)), 3, "back")],
    scipy.optimize.rosen: [case(scipy.optimize.rosen, 4)],
    scipy.optimize.rosen_der: [case(scipy.optimize.rosen_der, 4)],
    scipy.optimize.rosen_hess: [case(scipy.optimize.rosen_hess, 3)],
    scipy.optimize.rosen_hess_prod: [case(lambda x: scipy.optimize.rosen_hess_prod(x, C3), 3)],
    scipy.integrate.solve_ivp: [case(_odes, 3, domain=(0.2, 1.8),
                                     cs="step sizes come from error norms |.|: not holomorphic")],
    scipy.integrate.solve_bvp: [case(_cantilever, 3, domain=(0.5, 1.5))],
    scipy.integrate._ivp.common.OdeSolution.__call__: [case(
        lambda x: _PLAIN_SOLUTION(x), 3, domain=(0.1, 1.9),
        cs="the step holding t is chosen by comparing t with the step ends")],
    scipy.integrate._ivp.base.DenseOutput.__call__: [case(
        lambda x: _PLAIN_SOLUTION.interpolants[1](x), 3, domain=(0.1, 1.9))],
}


# ---------------------------------------------------------------- quadrature and interpolation

IX = np.array([0.0, 0.33, 0.72, 1.24, 1.61, 2.0])      # data points off the sampling grid
IY = np.sin(2.0 * IX) + 0.3 * IX
IQ = np.array([0.12, 0.55, 1.37, 1.93])
GX, GY = np.array([0.0, 0.37, 1.0]), np.array([0.0, 0.28, 0.63, 1.0])
GP = np.array([[0.11, 0.52], [0.83, 0.17]])
BX, BY = np.array([0.0, 0.37, 0.71, 1.0]), np.array([0.0, 0.28, 0.63, 1.0])
GV, BV = np.add.outer(GX, GY ** 2), np.multiply.outer(np.cos(BX), BY + 1.0)
_PPOLY, _BSPL = interpolate.PPoly, interpolate.BSpline
_FITPACK2 = importlib.import_module("scipy.interpolate._fitpack2")
_POLYINT = importlib.import_module("scipy.interpolate._polyint")
_INSIDE = (0.05, 0.95)

QUADRATURE_AND_INTERPOLATION = {
    scipy.integrate.quad: [case(lambda x: scipy.integrate.quad(
        lambda s, a: np.sin(a * s) * np.exp(-x[1] * s), 0.0, x[2], args=(x[0],))[0], 3,
        domain=(0.2, 1.8))],
    scipy.integrate.quad_vec: [case(lambda x: scipy.integrate.quad_vec(
        lambda s: np.cos(s * np.array([0.0, 1.0])) * np.exp(-x[0] * s), 0.0, x[1])[0], 2,
        domain=(0.2, 1.8))],
    scipy.integrate.fixed_quad: [case(lambda x: scipy.integrate.fixed_quad(
        lambda s: np.cos(x[0] * s), 0.0, x[1], n=4)[0], 2)],
    # (dblquad and tplquad call nquad; an upper limit held in its ranges list)
    scipy.integrate.nquad: [case(lambda x: scipy.integrate.nquad(
        lambda s, t: np.cos(x[0] * s * t), [lambda t: [0.0, t], [0.0, x[1]]])[0], 2,
        domain=(0.2, 1.8))],
    scipy.integrate.trapezoid: [case(lambda x: scipy.integrate.trapezoid(x[:4], x[4:]), 8)],
    scipy.integrate.cumulative_trapezoid: [case(lambda x: scipy.integrate.cumulative_trapezoid(
        x, dx=0.5, initial=0), 4)],
    scipy.integrate.simpson: [case(lambda x: scipy.integrate.simpson(x, x=IX[:5]), 5)],
    scipy.integrate.romb: [case(lambda x: scipy.integrate.romb(x[:5], dx=x[5]), 6)],
    interpolate.CubicSpline.__init__: [case(lambda x: interpolate.CubicSpline(IX, x)(IQ), 6)],
    interpolate.CubicHermiteSpline.__init__: [case(
        lambda x: interpolate.CubicHermiteSpline(IX, x, np.cos(x))(IQ), 6)],
    interpolate.PchipInterpolator.__init__: [case(
        lambda x: interpolate.PchipInterpolator(IX, x)(IQ), 6)],
    interpolate.Akima1DInterpolator.__init__: [case(
        lambda x: interpolate.Akima1DInterpolator(IX, x, method="makima")(IQ), 6)],
    interpolate.make_interp_spline: [case(lambda x: interpolate.make_interp_spline(IX, x)(IQ), 6)],
    _PPOLY.__mro__[1].__call__: [case(lambda x: interpolate.CubicSpline(IX, IY)(x), 3, domain=(0.05, 1.95))],
    _PPOLY.__mro__[1].__init__: [case(lambda x: interpolate.PPoly(x.reshape(2, 5), IX)(IQ), 10)],
    _BSPL.__init__: [case(lambda x: interpolate.BSpline(
        interpolate.make_interp_spline(IX, IY).t, x, 3)(IQ), 6)],
    _PPOLY.derivative: [case(lambda x: interpolate.CubicSpline(IX, x).derivative()(IQ), 6)],
    _PPOLY.antiderivative: [case(lambda x: interpolate.CubicSpline(IX, x).antiderivative(2)(IQ),
                                 6)],
    _PPOLY.integrate: [case(lambda x: interpolate.CubicSpline(IX, IY).integrate(x[0], x[1]), 2,
                              domain=(0.05, 1.95))],
    _BSPL.__call__: [case(lambda x: interpolate.make_interp_spline(IX, IY)(x), 3,
                            domain=(0.05, 1.95))],
    _BSPL.derivative: [case(lambda x: interpolate.make_interp_spline(IX, x).derivative()(IQ), 6)],
    _BSPL.antiderivative: [case(
        lambda x: interpolate.make_interp_spline(IX, x).antiderivative()(IQ), 6)],
    _BSPL.integrate: [case(lambda x: interpolate.make_interp_spline(IX, x).integrate(0.1, 1.7),
                           6)],
    interpolate.interp1d.__init__: [case(lambda x: interpolate.interp1d(IX, x, kind="cubic")(IQ),
                                         6),
                                    # active sample points (linear): each moves 0.02 at most
                                    case(lambda x: interpolate.interp1d(IX + 0.02 * np.sin(x),
                                                                        IY)(IQ), 6, "active x")],
    _POLYINT._Interpolator1D.__call__: [case(lambda x: interpolate.interp1d(IX, IY)(x), 3,
                                               domain=(0.05, 1.95))],
    interpolate.RegularGridInterpolator.__init__: [case(
        lambda x: interpolate.RegularGridInterpolator((GX, GY), x.reshape(3, 4))(GP), 12)],
    interpolate.RegularGridInterpolator.__call__: [case(
        lambda x: interpolate.RegularGridInterpolator((GX, GY), GV)(x.reshape(2, 2)), 4,
        domain=_INSIDE)],
    interpolate.interpn: [case(lambda x: interpolate.interpn((GX, GY), x.reshape(3, 4), GP), 12)],
    interpolate.RectBivariateSpline.__init__: [case(lambda x: interpolate.RectBivariateSpline(
        BX, BY, x.reshape(4, 4), kx=2, ky=2)(IQ[:2] / 2, IQ[1:] / 2), 16)],
    _FITPACK2._BivariateSplineBase.__call__: [case(
        lambda x: interpolate.RectBivariateSpline(BX, BY, BV, kx=2, ky=2).ev(x[:2], x[2:]), 4,
        domain=_INSIDE)],
    interpolate.griddata: [case(lambda x: interpolate.griddata(
        np.c_[IX, IY], x, np.c_[IQ, np.sin(2.0 * IQ) + 0.3 * IQ], method="nearest"), 6)],
    interpolate.RBFInterpolator.__init__: [case(lambda x: interpolate.RBFInterpolator(
        np.c_[IX, IY], x)(np.c_[IQ, 0.5 * IQ]), 6)],
    interpolate.RBFInterpolator.__call__: [case(lambda x: interpolate.RBFInterpolator(
        np.c_[IX, IY], x, kernel="cubic")(np.c_[IQ[:2], IQ[2:]]), 6, "the weights' map")],
    interpolate.splrep: [case(lambda x: interpolate.splrep(IX, x)[1], 6)],
    interpolate.splev: [case(lambda x: interpolate.splev(IQ, interpolate.splrep(IX, x), der=1),
                             6),
                        case(lambda x: interpolate.splev(x, interpolate.splrep(IX, IY), ext=1), 3,
                             "at points", domain=(0.05, 1.95))],
    interpolate.splint: [case(lambda x: interpolate.splint(0.1, 1.7, interpolate.splrep(IX, x)),
                              6)],
    interpolate.splder: [case(lambda x: interpolate.splder(interpolate.splrep(IX, x), 2)[1], 6)],
    interpolate.splantider: [case(
        lambda x: interpolate.splantider(interpolate.splrep(IX, x))[1], 6)],
    _FITPACK2.UnivariateSpline.__init__: [case(
        lambda x: interpolate.UnivariateSpline(IX, x, s=0)(IQ), 6)],
    _FITPACK2.InterpolatedUnivariateSpline.__init__: [case(
        lambda x: interpolate.InterpolatedUnivariateSpline(IX, x, k=2)(IQ), 6)],
    _FITPACK2.UnivariateSpline.__call__: [case(
        lambda x: interpolate.InterpolatedUnivariateSpline(IX, IY)(x, ext=3), 3,
        domain=(0.05, 1.95))],
    _FITPACK2.UnivariateSpline.derivative: [case(
        lambda x: interpolate.InterpolatedUnivariateSpline(IX, x).derivative()(IQ), 6)],
    _FITPACK2.UnivariateSpline.antiderivative: [case(
        lambda x: interpolate.InterpolatedUnivariateSpline(IX, x).antiderivative(2)(IQ), 6)],
    _FITPACK2.UnivariateSpline.integral: [case(
        lambda x: interpolate.InterpolatedUnivariateSpline(IX, x).integral(0.1, 1.7), 6)],
}


# ---------------------------------------------------------------- creation while recording

COMPLEX_ARANGE = "NumPy counts complex ranges differently (an empty array here)"
WRITES_INTO_REAL = "a real array made by the function: complex values cannot be written into it"


def _workspace(make, key=slice(1, None)):
    """``y = make(); y[key] = x ** 2``: the ODE right-hand-side pattern."""
    def f(x):
        y = make(x)
        y[key] = x[:np.size(y[key])] ** 2
        return y
    return f


CREATION = {
    np.array: [case(lambda x: np.array([x[0] * x[1], x[2], 1.5]), 3, "list of pieces"),
               case(lambda x: np.array([[x[0], x[1]], [x[1] ** 2, 2.0]]), 2, "nested"),
               case(lambda x: np.array(x) * x, 3, "copy"),
               case(_workspace(lambda x: np.array([1.0, 0.0, 0.0])), 3, "plain, written",
                    cs=WRITES_INTO_REAL)],
    np.asarray: [case(lambda x: np.asarray(x) * x, 3),
                 case(lambda x: np.asarray([x[1], x[0]], dtype=float), 2, "list",
                      cs="dtype=float is real")],
    np.asanyarray: [case(lambda x: np.asanyarray([x[0], 2.0 * x[1]]), 2)],
    np.ascontiguousarray: [case(lambda x: np.ascontiguousarray(x.T), (2, 3))],
    np.asfortranarray: [case(lambda x: np.asfortranarray(x) * x, (2, 3)),
                        case(lambda x: np.asfortranarray([x[0], x[1] ** 2]), 2, "list")],
    np.require: [case(lambda x: np.require(x.T, requirements="C") * x.T, (2, 3))],
    np.fromiter: [case(lambda x: np.fromiter((xi ** 2 for xi in x), dtype=float), 3,
                       cs="dtype=float is real")],
    np.zeros: [case(_workspace(lambda x: np.zeros(4)), 3, cs=WRITES_INTO_REAL),
               case(_workspace(lambda x: np.zeros((2, 2)), (0, slice(None))), 2, "2-d",
                    cs=WRITES_INTO_REAL)],
    np.ones: [case(_workspace(lambda x: np.ones(3)), 2, cs=WRITES_INTO_REAL)],
    np.empty: [case(_workspace(lambda x: np.empty(3), slice(None)), 3, cs=WRITES_INTO_REAL)],
    np.full: [case(_workspace(lambda x: np.full(4, 0.5)), 3, cs=WRITES_INTO_REAL),
              case(lambda x: np.full(3, x[0]) * x, 3, "active fill")],
    np.eye: [case(_workspace(lambda x: np.eye(2), (0, slice(1, None))), 1, cs=WRITES_INTO_REAL),
             case(lambda x: np.eye(3, k=1) * x, 3, "k")],
    np.identity: [case(lambda x: np.identity(2) @ x, 2)],
    np.arange: [case(lambda x: np.arange(x[0], 3.0), 1, "active start", cs=COMPLEX_ARANGE),
                case(lambda x: np.arange(0.0, 2.0, x[0]), 1, "active step", (0.3, 0.9),
                     cs=COMPLEX_ARANGE),
                case(lambda x: np.arange(3.0) * x, 3, "plain")],
}

# ---------------------------------------------------------------- methods and operators of Active

def _inplace(op, other, shape=None):
    def f(x):
        y = x * 1.0 if shape is None else x.reshape(shape) * 1.0
        return op(y, other(x) if callable(other) else other)
    return f


def _set(key, value):
    """``y[key] = value(x)`` into an active copy of x."""
    def f(x):
        y = x * 1.0
        y[key] = value(x)
        return y * y
    return f


def _set_into_zeros(x):
    y = np.zeros(4)                # active while recording
    y[0] = x[0]
    y[2:] = x[1:] ** 2
    return y


def _sorted_method(x, **kw):
    y = x * 1.0
    y.sort(**kw)
    return y


def _reshaped_in_place(x):
    y = x * 1.0
    y.shape = (2, 2)           # NumPy's in-place reshape
    return y


def _filled(x):
    y = x * 1.0
    y.fill(0.5)
    return y + x


M = {f"ndarray.{name}": [case(method(name), s, str(s)) for s in ((4,), (2, 3))]
     for name in ("sum", "mean", "prod", "max", "min", "cumsum", "cumprod", "ravel",
                  "flatten", "view", "transpose", "squeeze", "copy", "conj", "conjugate",
                  "var", "std", "round")}
M["ndarray.sum"] += [case(lambda x: x.sum(axis=0, keepdims=True), (2, 3), "axis keepdims")]
M["ndarray.mean"] += [case(lambda x: x.mean(axis=-1), (2, 3), "axis")]
M["ndarray.prod"] += [case(lambda x: x.prod(axis=1), (2, 3), "axis")]
M["ndarray.max"] += [case(lambda x: x.max(axis=0), (2, 3), "axis")]
M["ndarray.min"] += [case(lambda x: x.min(axis=1, keepdims=True), (2, 3), "axis keepdims")]
M["ndarray.cumsum"] += [case(lambda x: x.cumsum(axis=1), (2, 3), "axis")]
M["ndarray.cumprod"] += [case(lambda x: x.cumprod(axis=0), (2, 3), "axis")]
M["ndarray.var"] += [case(lambda x: x.var(axis=0, ddof=1), (2, 3), "axis ddof")]
M["ndarray.std"] += [case(lambda x: x.std(axis=1, ddof=1, keepdims=True), (2, 3), "keepdims")]
M["ndarray.transpose"] += [case(lambda x: x.transpose(1, 0, 2), (2, 3, 2), "axes"),
                           case(lambda x: x.transpose((2, 0, 1)), (2, 3, 2), "axes tuple")]
M["ndarray.squeeze"] += [case(lambda x: x.reshape(1, 4).squeeze(axis=0), 4, "axis")]
M["ndarray.round"] += [case(lambda x: x.round(-1), 4, "decimals")]
M.update({
    "ndarray.dot": [case(lambda x: x[:3].dot(x[3:]), 6),
                    case(lambda x: x.reshape(2, 3).dot(A33), 6, "constant")],
    "ndarray.reshape": [case(lambda x: x.reshape(3, 2), 6), case(lambda x: x.reshape((-1, 2)), 6,
                                                                "tuple"),
                        case(lambda x: x.reshape(()), 1, "0-d")],
    "ndarray.swapaxes": [case(lambda x: x.swapaxes(0, 1), (2, 3))],
    "ndarray.diagonal": [case(lambda x: x.diagonal(), (3, 3)),
                         case(lambda x: x.diagonal(1, 1, 2), (2, 2, 3), "offset axes")],
    "ndarray.astype": [case(lambda x: x.astype(float), 4),
                       case(lambda x: x.astype(np.float64, copy=False), 4, "copy=False")],
    "ndarray.trace": [case(lambda x: x.trace(), (3, 3)),
                      case(lambda x: x.trace(offset=1), (2, 3), "offset")],
    "ndarray.sort": [case(_sorted_method, 4), case(lambda x: _sorted_method(x, axis=0), (3, 2),
                                                   "axis")],
    "ndarray.fill": [case(_filled, 3)],
    "ndarray.repeat": [case(lambda x: x.repeat(2), 3),
                       case(lambda x: x.repeat([2, 1], axis=0), (2, 2), "axis")],
    "ndarray.take": [case(lambda x: x.take([2, 0, 2]), 3),
                     case(lambda x: x.take([1], axis=1), (2, 3), "axis")],
    "ndarray.clip": [case(lambda x: x.clip(-1.0, 1.0), 5),
                     case(lambda x: x.clip(max=0.0), 4, "max")],
    "ndarray.T": [case(lambda x: x.T, (2, 3)), case(lambda x: x.T, 3, "1-d")],
    "ndarray.real": [case(lambda x: x.real, 3)], "ndarray.imag": [case(lambda x: x.imag + x, 3)],
    "ndarray.flat": [case(lambda x: x.flat[[1, 4]], (2, 3)),
                     case(lambda x: x.flat[2], (2, 2), "int")],
    "ndarray.__add__": [case(lambda x: x + 1.5, 3),
                        case(lambda x: x[:2] + x[2:, None], 5, "broadcast"),
                        case(lambda x: x + INT3, 3, "int array"), case(lambda x: x + x, (), "0-d")],
    "ndarray.__radd__": [case(lambda x: 1.5 + x, 3),
                         case(lambda x: [1.0, 2.0, 3.0] + x, 3, "list")],
    "ndarray.__sub__": [case(lambda x: x - F32_3, 3), case(lambda x: x[:2] - x[2:], 4, "active")],
    "ndarray.__rsub__": [case(lambda x: 2 - x, 3)],
    "ndarray.__mul__": [case(lambda x: x * BOOL3, 3, "bool"), case(lambda x: x[:2] * x[2:], 4)],
    "ndarray.__rmul__": [case(lambda x: 2.5 * x, 3)],
    "ndarray.__truediv__": [case(lambda x: x[:2] / x[2:], 4, domain=(0.3, 3.0)),
                            case(lambda x: x / 3, 3, "int")],
    "ndarray.__rtruediv__": [case(lambda x: 1.5 / x, 3, domain=(0.3, 3.0))],
    "ndarray.__pow__": [case(lambda x: x[:2] ** x[2:], 4, domain=(0.3, 3.0)),
                        case(lambda x: x ** 2, 3, "square"), case(lambda x: x ** -0.5, 3, "-0.5",
                                                                  (0.3, 3.0))],
    "ndarray.__rpow__": [case(lambda x: 2.0 ** x, 3), case(lambda x: INT3 ** x, 3, "int array")],
    "ndarray.__matmul__": [case(lambda x: x.reshape(2, 3) @ A33, 6),
                           case(lambda x: x[:3] @ x[3:].reshape(3, 2), 9, "active")],
    "ndarray.__rmatmul__": [case(lambda x: A23 @ x, 3), case(lambda x: [1.0, 2.0] @ x.reshape(2, 2),
                                                             4, "list")],
    "ndarray.__neg__": [case(lambda x: -x, 3)], "ndarray.__pos__": [case(lambda x: +x, 3)],
    "ndarray.__abs__": [case(abs, 3)],
    "ndarray.__floordiv__": [case(lambda x: x // 1.0, 3)],
    "ndarray.__rfloordiv__": [case(lambda x: 1.0 // x, 3, domain=(0.55, 2.0))],
    "ndarray.__mod__": [case(lambda x: x % 1.0, 3)],
    "ndarray.__rmod__": [case(lambda x: 1.0 % x, 3, domain=(0.55, 2.0))],
    "ndarray.__divmod__": [case(lambda x: divmod(x, 1.0)[1], 3),
                           case(lambda x: divmod(x, 1.0)[0] * x, 3, "quotient")],
    "ndarray.__rdivmod__": [case(lambda x: divmod(1.0, x)[1], 3, domain=(0.55, 2.0))],
    "ndarray.__iadd__": [case(_inplace(operator.iadd, lambda x: x ** 2), 3),
                         case(_inplace(operator.iadd, 1.0), 3, "constant")],
    "ndarray.__isub__": [case(_inplace(operator.isub, lambda x: x[::-1]), 3)],
    "ndarray.__imul__": [case(_inplace(operator.imul, lambda x: x), 3)],
    "ndarray.__itruediv__": [case(_inplace(operator.itruediv, lambda x: x + 3.0), 3)],
    "ndarray.__ipow__": [case(_inplace(operator.ipow, 3), 3)],
    "ndarray.__ifloordiv__": [case(_inplace(operator.ifloordiv, 1.0), 3)],
    "ndarray.__imod__": [case(_inplace(operator.imod, 1.0), 3)],
    "ndarray.__imatmul__": [case(_inplace(operator.imatmul, lambda x: x.reshape(2, 2), (2, 2)), 4)],
    "ndarray.__getitem__": [
        case(lambda x: x[1:3], 4), case(lambda x: x[::-2], 5, "negative step"),
        case(lambda x: x[[2, 0, 2]], 3, "integer array"),
        case(lambda x: x[x > 0.0], 6, "boolean mask"),
        case(lambda x: x[:, None, 1:], (2, 3), "newaxis"),
        case(lambda x: x[..., 0], (2, 3), "ellipsis"),
        case(lambda x: x[1, -1], (2, 3), "scalar"), case(lambda x: x[()], (), "0-d"),
        case(lambda x: x[[0, 1], [2, 0]], (2, 3), "two index arrays"),
        case(lambda x: x[2:2], 3, "empty")],
    "ndarray.__setitem__": [
        case(_set(slice(1, 3), lambda x: x[:2] ** 2), 4),
        case(_set(0, lambda x: 2.5), 3, "constant"),
        case(_set(np.array([2, 0]), lambda x: x[1:]), 3, "integer array"),
        case(_set(np.array([True, False, True]), lambda x: np.sin(x[:2])), 3, "mask"),
        case(_set(Ellipsis, lambda x: x[0]), 3, "broadcast scalar"),
        case(_set_into_zeros, 3, "into np.zeros",
             cs="np.zeros(4) is a real array: complex values cannot be assigned into it")],
    "ndarray.__iter__": [case(lambda x: np.stack([r * (i + 1) for i, r in enumerate(x)]), (2, 3))],
    "ndarray.__reversed__": [case(lambda x: np.stack([r * (i + 1) for i, r in
                                                      enumerate(reversed(x))]), (2, 3))],
    "ndarray.__copy__": [case(lambda x: copy.copy(x) * x, 3)],
    "ndarray.to_device": [case(lambda x: x.to_device("cpu") * x, 3)],
    "ndarray.__setattr__": [case(_reshaped_in_place, 4)],
    "ndarray.__deepcopy__": [case(lambda x: copy.deepcopy(x) * x, 3)],
})



# ---------------------------------------------------------------- edge cases

def _iadd_view(x):
    y = x * 1.0
    y[1:] += x[:-1] ** 2
    return y


def _write_through_view(x):
    y = x.reshape(2, 3) * 1.0
    v = y[:, 1:]
    v *= 2.0
    v[0, 0] = x[0] ** 3
    return y


def _sin_out(x):
    y = np.empty_like(x)
    np.sin(x, out=y)
    return y * x


ZEROS4 = np.array([[0.0, 1.0], [1.0, 1.0]])

# more calls of functions above: 3-d axes, zero factors, 1 x 1 matrices,
# empty pieces, writes through views
EDGE_CASES = {
    # ufuncs given active values inside lists only (adsim/_record/listed.py's stand-ins)
    np.exp: [case(lambda x: np.exp([x[0], x[1] * x[2], 0.5]), 3, "a list")],
    np.hypot: [case(lambda x: np.hypot([x[0], x[1]], (x[2], 1.5)), 3, "lists")],
    np.add.reduce: [case(lambda x: np.add.reduce([[x[0], 2.0], [x[1] ** 2, x[0]]]), 2,
                         "a nested list")],
    np.sum: [case(lambda x: np.sum(x.reshape(2, 2, 2), axis=(0, 2)), 8, "3-d axes")],
    np.max: [case(lambda x: np.max(x.reshape(2, 2, 2), axis=(0, 2), keepdims=True), 8,
                  "3-d axes")],
    np.prod: [case(lambda x: np.prod(np.concatenate([x, [0.0]])), 3, "a zero factor"),
              case(lambda x: np.prod(x.reshape(2, 2) * ZEROS4, axis=0), 4, "a zero, axis")],
    np.cumprod: [case(lambda x: np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0])), 4, "a zero")],
    np.std: [case(lambda x: np.std(x.reshape(2, 2, 2), axis=(0, 2)), 8, "3-d axes")],
    np.sort: [case(lambda x: np.sort(x.reshape(2, 2, 2), axis=1), 8, "3-d axis 1")],
    np.median: [case(np.median, 4, "even count")],
    np.quantile: [case(lambda x: np.quantile(x, [0.0, 1.0]), 4, "ends")],
    np.einsum: [case(lambda x: np.einsum("iij->j", x.reshape(2, 2, 2)), 8, "repeated index"),
                case(lambda x: np.einsum(",i->i", x[0], x[1:]), 3, "0-d operand")],
    np.matmul: [case(lambda x: x[:2] @ x[2:].reshape(2, 2, 2), 10, "1-d @ stack"),
                case(lambda x: x[2:].reshape(2, 2, 2) @ x[:2], 10, "stack @ 1-d")],
    np.dot: [case(lambda x: np.dot(x[:8].reshape(2, 2, 2), x[8:].reshape(2, 2, 1)), 12,
                  "3-d . 3-d")],
    np.outer: [case(lambda x: np.outer(x[0], x[1:]), 3, "0-d")],
    np.where: [case(lambda x: np.where(np.array([1, 0, 2]), x, -x), 3, "integer condition")],
    np.clip: [case(lambda x: np.clip(x, np.array([-1, 0, -2]), 1), 3, "integer bounds")],
    np.repeat: [case(lambda x: np.repeat(x, [0, 2, 0]), 3, "zero counts")],
    np.tile: [case(lambda x: np.tile(x, 0), 3, "zero reps")],
    np.take: [case(lambda x: np.take(x, []), 3, "no indices")],
    np.concatenate: [case(lambda x: np.concatenate([x[:0], x, x[3:]]), 3, "empty pieces")],
    np.flip: [case(lambda x: np.flip(x.reshape(2, 0), 0), 0, "empty")],
    np.pad: [case(lambda x: np.pad(x, 1), 0, "empty"), case(lambda x: np.pad(x, 0), 3, "no width")],
    np.linalg.norm: [case(lambda x: np.linalg.norm(x), 0, "empty"),
                     case(lambda x: np.linalg.norm(x.reshape(2, 3), 3, axis=0), 6, "ord 3 axis")],
    np.linalg.det: [case(lambda x: np.linalg.det(x.reshape(1, 1)), 1, "1 x 1")],
    np.linalg.slogdet: [case(lambda x: np.linalg.slogdet(x.reshape(1, 1) - 3.0)[1], 1, "1 x 1")],
    np.linalg.eigh: [case(lambda x: np.linalg.eigh(x.reshape(1, 1))[0], 1, "1 x 1")],
    np.linalg.eig: [case(lambda x: np.linalg.eig(x.reshape(1, 1))[1] * x, 1, "1 x 1")],
    np.linalg.svd: [case(lambda x: np.linalg.svd(x.reshape(1, 1) + 3.0, compute_uv=False), 1,
                         "1 x 1")],
    np.linalg.qr: [case(lambda x: np.linalg.qr(x.reshape(1, 1) + 3.0)[1], 1, "1 x 1")],
    np.linalg.cholesky: [case(lambda x: np.linalg.cholesky(x.reshape(1, 1) ** 2 + 1.0), 1,
                              "1 x 1")],
    np.fft.fft: [case(lambda x: np.real(np.fft.fft(x, n=2)), 4, "n smaller")],
    np.fft.ifft2: [case(lambda x: np.real(np.fft.ifft2(x, axes=(0, 2))), (2, 2, 2), "axes")],
    sc.gammaln: [case(lambda x: sc.gammaln(x.reshape(2, 1) * np.ones(3)), 2, "broadcast",
                      (0.2, 3.0))],
    np.sin: [case(_sin_out, 3, "out=")],
    "ndarray.__iadd__": [case(_iadd_view, 4, "into a view")],
    "ndarray.__imul__": [case(_write_through_view, 6, "through a view")],
    "ndarray.sum": [case(lambda x: x.sum(dtype=float), 3, "dtype", cs=REAL_DTYPE)],
    "ndarray.max": [case(lambda x: x.max(initial=0.3), 3, "initial")],
    "ndarray.min": [case(lambda x: x.min(where=BOOL3, initial=5.0), 3, "where")],
    "ndarray.clip": [case(lambda x: x.clip(min=0.0), 4, "min")],
    "ndarray.trace": [case(lambda x: x.trace(axis1=1, axis2=2), (2, 2, 2), "3-d axes")],
}

# ---- scipy.sparse: constant matrices times active arrays, solves with active b

_L5 = sp.csr_matrix(sp.diags([1.0, -2.5, 0.75], [-1, 0, 2], shape=(5, 5)))
_A5 = sp.csc_matrix(_L5 @ _L5.T + 4.0 * sp.eye(5))          # symmetric positive definite
_N5 = sp.csc_matrix(_L5 + 5.0 * sp.eye(5))                  # not symmetric
_NO_CS = "sparse products and solves are recorded for real arrays"
_EIGEN_FIRST_ORDER = ("eigsh and svds of active matrices have first derivatives only: "
                      "Hessian-vector products and Hessian sparsity raise UnsupportedOperation")
_TIGHT = {"rtol": 1e-10, "atol": 1e-14}
_operator = sparse_linalg.aslinearoperator


def _written_sparse(kind, x):
    """A 5 x 5 matrix of ``kind`` written entry by entry: x[i]^2 on the
    diagonal, x[i] x[i + 1] added above it."""
    A = kind((5, 5))
    for i in range(5):
        A[i, i] = x[i] ** 2
        if i < 4:
            A[i, i + 1] += x[i] * x[i + 1]
    return A


def _sparse(f, label=""):
    return [case(f, 5, label, cs=_NO_CS)]


def _graph(x):
    """A 3-node graph of positive weights from x, one of them constant."""
    return np.reshape(np.concatenate([x[:3], [0.5], x[3:]]), (3, 3)) ** 2 + 0.1


SPARSE = {
    csgraph.laplacian: [
        case(lambda x: csgraph.laplacian(_graph(x)), 8, cs=_NO_CS),
        case(lambda x: csgraph.laplacian(_graph(x), normed=True, return_diag=True)[1], 8,
             "normed, its degrees", cs=_NO_CS),
        case(lambda x: csgraph.laplacian(_graph(x), use_out_degree=True, symmetrized=True), 8,
             "out degree, symmetrized", cs=_NO_CS)],
    sp._base._spbase.__matmul__: _sparse(lambda x: np.sin(_L5 @ x)),
    sp._base._spbase.__rmatmul__: _sparse(lambda x: _L5.__rmatmul__(np.sin(x))),
    sp._base._spbase.dot: _sparse(lambda x: _L5.dot(x ** 2)),
    sp._coo._coo_base.dot: _sparse(lambda x: _L5.tocoo().dot(np.cos(x))),
    sp._matrix.spmatrix.__mul__: _sparse(lambda x: np.tanh(_L5 * x)),
    sp._matrix.spmatrix.__rmul__: _sparse(lambda x: x * _L5 * x),
    sparse_linalg.LinearOperator.matvec: _sparse(lambda x: _operator(_L5).matvec(x) ** 2),
    sparse_linalg.LinearOperator.matmat: _sparse(
        lambda x: _operator(_L5).matmat(np.stack([x, x ** 2], axis=1))),
    sparse_linalg.LinearOperator.dot: _sparse(lambda x: _operator(_L5).dot(np.sin(x))),
    sparse_linalg.LinearOperator.__matmul__: _sparse(lambda x: _operator(_L5).T @ x ** 2),
    sparse_linalg.LinearOperator.__mul__: _sparse(lambda x: _operator(_L5) * x ** 3),
    sparse_linalg.LinearOperator.rmatvec: _sparse(lambda x: _operator(_L5).rmatvec(x) * x),
    # an operator of Python code reading an active value, made without a dtype
    sparse_linalg.LinearOperator._init_dtype: _sparse(lambda x: sparse_linalg.LinearOperator(
        (5, 5), matvec=lambda v: x[0] * (_L5 @ v) + v) @ np.sin(x)),
    sparse_linalg.spsolve: _sparse(lambda x: np.sin(sparse_linalg.spsolve(_N5, x))),
    sparse_linalg.splu: _sparse(lambda x: sparse_linalg.splu(_N5).solve(x ** 2, trans="T")),
    sparse_linalg.spilu: _sparse(lambda x: sparse_linalg.spilu(_N5).solve(np.sin(x))),
    sparse_linalg.factorized: _sparse(lambda x: sparse_linalg.factorized(_N5)(x) * x),
    sparse_linalg.spsolve_triangular: _sparse(
        lambda x: sparse_linalg.spsolve_triangular(sp.tril(_N5, format="csr"), x ** 2)),
    **{getattr(sparse_linalg, name): _sparse(
        lambda x, name=name: np.sin(getattr(sparse_linalg, name)(
            _A5 if name in ("cg", "minres") else _N5, x, **_TIGHT)[0]))
       for name in ("cg", "gmres", "bicgstab", "lgmres")},
    sparse_linalg.minres: _sparse(lambda x: np.sin(sparse_linalg.minres(_A5, x, rtol=1e-12)[0])),
    sp._base._spbase.__mul__: _sparse(lambda x: (sp.csr_array(_L5) * x).toarray().ravel()),
    sp._base._spbase.__rmul__: _sparse(lambda x: (x[:, None] * sp.csr_array(_L5)) @ x),
    sp._base._spbase.multiply: _sparse(lambda x: _L5.multiply(np.sin(x)[:, None]) @ x),
    # matrices assembled from active values
    sp._coo._coo_base.__init__: _sparse(
        lambda x: sp.coo_matrix((x ** 2, ([0, 1, 1, 4, 4], [0, 2, 2, 3, 0])), shape=(5, 5)) @ x),
    sp._compressed._cs_matrix.__init__: _sparse(
        lambda x: sp.csr_array((np.sin(x), [0, 3, 1, 2, 4], [0, 2, 3, 5, 5, 5]), shape=(5, 5))
        @ x),
    sp.diags: _sparse(lambda x: sp.diags([x[1:], x ** 2], [-1, 0]) @ np.cos(x)),
    sp.diags_array: _sparse(lambda x: sp.diags_array(x ** 3, offsets=0) @ x),
    sp.kron: _sparse(lambda x: sp.kron(sp.diags(x[:2]), sp.diags(x[2:4]) + sp.eye(2)).toarray()
                     .ravel()),
    sp._dia._dia_base.__init__: _sparse(
        lambda x: sp.dia_matrix((np.stack([x ** 2, np.sin(x)]), [0, -2]), shape=(5, 5)) @ x),
    sp._bsr._bsr_base.__init__: _sparse(
        lambda x: sp.bsr_matrix((np.stack([x[:4], x[1:]]).reshape(2, 2, 2),
                                 [0, 1], [0, 1, 2]), shape=(4, 4)) @ x[:4]),
    sp._lil._lil_base.__setitem__: _sparse(lambda x: _written_sparse(sp.lil_matrix, x) @ x),
    sp._index.IndexMixin.__setitem__: _sparse(lambda x: _written_sparse(sp.dok_array, x) @ np.cos(x)),
    sp.bmat: _sparse(lambda x: sp.bmat([[sp.diags(x[:3]), None], [_L5[3:, :3], sp.diags(x[3:])]])
                     @ x),
    sp.hstack: _sparse(lambda x: sp.hstack([sp.diags(x), _L5]) @ np.concatenate([x, x])),
    sp.vstack: _sparse(lambda x: sp.vstack([sp.diags(x ** 2), _L5]) @ x),
    sp.block_diag: _sparse(lambda x: sp.block_diag([sp.diags(x[:2]), np.ones((3, 3))]) @ x),
    sp._base._spbase.setdiag: _sparse(lambda x: _with_diagonal(x ** 2) @ x),
    sp._extract.tril: _sparse(lambda x: sp.tril(_tridiagonal(x)) @ np.cos(x)),
    sp._extract.triu: _sparse(lambda x: sp.triu(_tridiagonal(x), k=1) @ x),
    sparse_linalg.norm: _sparse(lambda x: sparse_linalg.norm(_tridiagonal(x)) * x),
    sparse_linalg.inv: _sparse(lambda x: sparse_linalg.inv(_tridiagonal(x).tocsc()) @ x),
    sparse_linalg.expm: _sparse(lambda x: sparse_linalg.expm(0.1 * _tridiagonal(x).tocsc()) @ x),
    sparse_linalg.expm_multiply: _sparse(
        lambda x: sparse_linalg.expm_multiply(0.1 * _tridiagonal(x).tocsc(), np.cos(x))) + _sparse(
        lambda x: sparse_linalg.expm_multiply(0.1 * _tridiagonal(x).tocsc(), np.cos(x), start=0.5,
                                              stop=2.0, num=3, endpoint=False), "times"),
    sparse_linalg.eigsh: [case(
        lambda x: sparse_linalg.eigsh(_tridiagonal(x), k=1, which="LA")[0] * x, 5, cs=_NO_CS,
        bugs=bug(_EIGEN_FIRST_ORDER, "hvp", "sparsity"))],
    sparse_linalg.svds: [case(
        lambda x: sparse_linalg.svds(_tridiagonal(x), k=1, random_state=0)[1] * x, 5, cs=_NO_CS,
        bugs=bug(_EIGEN_FIRST_ORDER, "hvp", "sparsity"))],
    **{getattr(sparse_linalg, name): _sparse(
        lambda x, name=name: np.sin(getattr(sparse_linalg, name)(
            _N5, x ** 2, atol=1e-14, btol=1e-14)[0]))
       for name in ("lsqr", "lsmr")},
}


def _tridiagonal(x):
    """A symmetric tridiagonal matrix of active values, its diagonal well
    separated (distinct eigenvalues)."""
    return sp.diags([x[1:], x ** 2 + 3.0 * np.arange(5.0), x[1:]], [-1, 0, 1], format="csr")


def _with_diagonal(d):
    A = sp.lil_matrix(_L5)
    A.setdiag(d)
    return A.tocsr()

CASES = {**UFUNCS, **NUMPY, **LINALG, **FFT, **INDEX_MAPS, **SPECIAL_UFUNCS,
         **SCIPY_FUNCTIONS, **STATS, **M, **CREATION, **NUMPY_MORE, **SPECIAL_MORE,
         **SCIPY_MORE, **SPARSE, **QUADRATURE_AND_INTERPOLATION}
for _key, _more in EDGE_CASES.items():
    CASES[_key] = CASES[_key] + _more


# ---------------------------------------------------------------- without derivatives

def _compare_cases(uf):
    return [case(lambda x: uf(x, 0.3), 4), case(lambda x: uf(x.reshape(2, 2), x[:2]), 4,
                                                 "broadcast"),
            case(lambda x: uf(x, x), (), "0-d same operand")]


def _order_cases(f):
    return [case(f, 5), case(lambda x: f(x.reshape(2, 3), axis=0), 6, "axis")]


VALUE_ONLY = {
    **{uf: _compare_cases(uf) for uf in (np.less, np.less_equal, np.greater, np.greater_equal,
                                         np.equal, np.not_equal)},
    **{f: [case(lambda x, f=f: f(x * NANS), 4), case(lambda x, f=f: f(x), (), "0-d")]
       for f in (np.isnan, np.isinf, np.isfinite)},
    np.argmax: _order_cases(np.argmax) + [case(lambda x: np.argmax(x.reshape(2, 3), axis=1,
                                                                   keepdims=True), 6, "keepdims")],
    np.argmin: _order_cases(np.argmin) + [case(lambda x: np.argmin(x, 0, keepdims=True), (2, 2),
                                               "keepdims")],
    np.argsort: _order_cases(np.argsort) + [case(lambda x: np.argsort(x, axis=None), (2, 2),
                                                 "None")],
    np.lexsort: [case(lambda x: np.lexsort((x[:4], np.round(x[4:]))), 8),
                 case(lambda x: np.lexsort(x.reshape(2, 3)), 6, "2-d keys")],
    np.diag_indices_from: [case(lambda x: np.diag_indices_from(x)[0], (3, 3))],
    np.searchsorted: [case(lambda x: np.searchsorted(TABLE5, x), 4),
                      case(lambda x: np.searchsorted(TABLE5, x[0], side="right"), 2, "right"),
                      case(lambda x: np.searchsorted(np.array([0.0, 1.0]), x), 3,
                           "table made in the function")],
    np.digitize: [case(lambda x: np.digitize(x, TABLE5), 4),
                  case(lambda x: np.digitize(x, TABLE5, right=True), 4, "right")],
    np.shape: [case(np.shape, (2, 3)), case(np.shape, (), "0-d")],
    np.ndim: [case(np.ndim, (2, 3)), case(np.ndim, (), "0-d")],
    np.size: [case(np.size, (2, 3)), case(lambda x: np.size(x, 1), (2, 3), "axis")],
    np.isclose: [case(lambda x: np.isclose(x, x + 1e-9), 3),
                 case(lambda x: np.isclose(x, C3, atol=2.0), 3, "atol")],
    np.allclose: [case(lambda x: np.allclose(x, x[::-1]), 3), case(lambda x: np.allclose(x, x), 3,
                                                                   "equal")],
    np.array_equal: [case(lambda x: np.array_equal(x, x[::-1]), 3),
                     case(lambda x: np.array_equal(x, x * 1.0), 3, "equal"),
                     case(lambda x: np.array_equal(x, x[:2]), 3, "shapes differ"),
                     case(lambda x: np.array_equal(np.r_[x, np.nan], np.r_[x, np.nan],
                                                   equal_nan=True), 3, "equal_nan")],
    np.array_equiv: [case(lambda x: np.array_equiv(x, np.stack([x, x])), 3),
                     case(lambda x: np.array_equiv(x, x[:2]), 3, "shapes differ")],
    np.shares_memory: [case(lambda x: np.shares_memory(x[1:], x[:2]), 3),
                       case(lambda x: np.shares_memory(x[::2], x[1::2]), 4, "interleaved"),
                       case(lambda x: np.shares_memory(x, x.copy()), 3, "a copy"),
                       case(lambda x: np.shares_memory(x, C3), 3, "a plain array")],
    np.may_share_memory: [case(lambda x: np.may_share_memory(x[1:], x[:2]), 3),
                          case(lambda x: np.may_share_memory(x[::2], x[1::2]), 4, "interleaved"),
                          case(lambda x: np.may_share_memory(x[:1], x[2:]), 3, "apart"),
                          case(lambda x: np.may_share_memory(x.T, x.copy()), (2, 3), "a copy")],
    np.result_type: [case(lambda x: np.result_type(x, 1.0), 3),
                     case(lambda x: np.result_type(x, np.float32, 2), 3, "dtypes")],
    **{f"ndarray.{name}": [case(method(name), (2, 3))] for name in ("argmax", "argmin", "argsort",
                                                                    "__len__")},
    **{f"ndarray.{name}": [case((lambda name: lambda x: getattr(x, name))(name), (2, 3))]
       for name in ("ndim", "shape", "size", "dtype", "itemsize", "nbytes")},
    "ndarray.any": [case(lambda x: (x * BOOL3).any(), 3), case(lambda x: x.any(axis=0), (2, 3),
                                                               "axis")],
    "ndarray.all": [case(lambda x: x.all(), 3), case(lambda x: (x * BOOL3).all(), 3, "zero")],
    "ndarray.base": [case(lambda x: x[1:].base is None, 3)],
    np.argpartition: [case(lambda x: np.argpartition(x, 2)[2], 5),
                      case(lambda x: np.argpartition(x, 1, axis=0)[1], (3, 2), "axis")],
    np.nonzero: [case(lambda x: np.nonzero(x * BOOL3), 3),
                 case(lambda x: np.nonzero(x > 0.0), (2, 3), "comparison")],
    np.all: [case(np.all, 3), case(lambda x: np.all(x * BOOL3, axis=0, keepdims=True), 3, "zero"),
             case(lambda x: np.all(x * BOOL3, where=BOOL3), 3, "where")],
    np.any: [case(lambda x: np.any(x * BOOL3 * 0.0), 3, "zeros"),
             case(lambda x: np.any(x.reshape(2, 3), axis=1), (2, 3), "axis"),
             case(lambda x: np.any(x * BOOL3, where=~BOOL3), 3, "where")],
    np.count_nonzero: [case(lambda x: np.count_nonzero(x * BOOL3), 3),
                       case(lambda x: np.count_nonzero(x > 0.0, axis=0), (2, 3), "axis")],
    np.argwhere: [case(lambda x: np.argwhere(x.reshape(3, 1) * BOOL3[:, None]), 3)],
    np.flatnonzero: [case(lambda x: np.flatnonzero(x * BOOL3), 3)],
    np.isposinf: [case(lambda x: np.isposinf(x * np.array([1.0, np.inf, -np.inf])), 3)],
    np.isneginf: [case(lambda x: np.isneginf(x * np.array([1.0, np.inf, -np.inf])), 3)],
    np.iscomplex: [case(np.iscomplex, 3), case(lambda x: np.iscomplex(x + 1j * x[0] ** 2), 3,
                                               "complex")],
    np.isreal: [case(np.isreal, (2, 3)), case(lambda x: np.isreal(x + x[::-1] * 1j), 3,
                                              "complex")],
    np.iscomplexobj: [case(np.iscomplexobj, 3), case(lambda x: np.iscomplexobj(x * 1j), 3,
                                                     "complex")],
    np.isrealobj: [case(np.isrealobj, (), "0-d"), case(lambda x: np.isrealobj(x + 0j), 3,
                                                       "complex")],
    np.nanargmax: [case(_with_nans(np.nanargmax), 6),
                   case(_with_nans(lambda y: np.nanargmax(y, axis=1)), 6, "axis")],
    np.nanargmin: [case(_with_nans(lambda y: np.nanargmin(y, axis=0)), 6)],
    "ndarray.argpartition": [case(lambda x: x.argpartition(1)[1], 4)],
    "ndarray.nonzero": [case(lambda x: (x * BOOL3).nonzero(), 3)],
    "ndarray.device": [case(lambda x: x.device, 3)],
    "ndarray.flags": [case(lambda x: (x.flags.c_contiguous, x[::2].flags.c_contiguous), 3)],
    "ndarray.strides": [case(lambda x: x.strides, (2, 3))],
    "ndarray.setflags": [case(lambda x: x.setflags(write=True), 3)],
    **{f"ndarray.{name}": [case((lambda op: lambda x: op(x[:2], x[1:]))(getattr(operator, name)),
                                3)]
       for name in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")},
    "ndarray.__bool__": [case(lambda x: bool(x > 0.0) and bool(x), ())],
    "ndarray.__int__": [case(int, ())],
    # a 0-d active array stands for a NumPy scalar (x[()]), which defines these
    "ndarray.__round__": [case(lambda x: round(x[()]), ()),
                          case(lambda x: round(x[()], 1), (), "ndigits")],
    "ndarray.__trunc__": [case(lambda x: math.trunc(x[()]), ())],
    "ndarray.__floor__": [case(lambda x: math.floor(x[()]), ())],
    "ndarray.__ceil__": [case(lambda x: math.ceil(x[()]), ())],
}
def refuse(f, shape, error, match, label="", bugs=()):
    """A call adsim must refuse with ``error`` whose message matches ``match``."""
    return case(f, shape, label, bugs=bugs), error, match


def _leak(f, label=""):
    return [refuse(f, 3, adsim.ActiveValueLeak, "would turn a recorded value into a constant",
                   label)]


def _stats_refusal(call, name):
    return [refuse(call, 3, adsim.UnsupportedOperation, name.replace(".", r"\."))]


def _own_method_refusals():
    """The distributions whose class defines its own fit, rvs, expect...
    (norm, gamma, beta have their own fit): refused, named as users call them."""
    methods = ("fit", "expect", "rvs", "mean", "var", "std", "stats", "moment", "support", "nnlf")
    out = {}
    for name in sorted(dir(st)):
        dist = getattr(st, name)
        if isinstance(dist, (st.rv_continuous, st.rv_discrete)) and dist.name == name:
            for m in methods:
                own = vars(type(dist)).get(m)
                if own is not None and own not in out:
                    out[own] = _stats_refusal((lambda f: lambda x: f(x))(getattr(dist, m)),
                                              f"scipy.stats.{name}.{m}")
    return out


_MVN_GEN, _MVN_FROZEN = type(st.multivariate_normal), type(MVN_FROZEN)


def _solver_refusal(name, call):
    """A SciPy solver given a function of the active input: adsim's error
    names the solver (SciPy's own would not say what went wrong)."""
    return [refuse(call, 2, adsim.UnsupportedOperation,
                   rf"through scipy\.optimize\.{name}: the function it calls")]


def _objective(x):
    return lambda z: np.sum((z - x) ** 2)


_opt = scipy.optimize
_BOX = [(-3.0, 3.0)] * 2
# solvers adsim does not differentiate: adsim's error names the solver
_SOLVER_CALLS = {
    "basinhopping": lambda x: _opt.basinhopping(_objective(x), np.zeros(2), niter=1).x,
    "differential_evolution": lambda x: _opt.differential_evolution(_objective(x), _BOX,
                                                                    maxiter=1).x,
    "dual_annealing": lambda x: _opt.dual_annealing(_objective(x), _BOX, maxiter=2).x,
    "shgo": lambda x: _opt.shgo(_objective(x), _BOX).x,
    "direct": lambda x: _opt.direct(_objective(x), _BOX, maxfun=50).x,
    "brute": lambda x: _opt.brute(_objective(x), _BOX, Ns=3, finish=None),
    "approx_fprime": lambda x: _opt.approx_fprime(np.ones(2), _objective(x)),
    "check_grad": lambda x: _opt.check_grad(_objective(x), lambda z: 2.0 * (z - x),
                                            np.ones(2)),
}


def _contraction(x):
    """z = 0.5 cos(z) + 0.3 x: one solution, F = z - g(z) has F_z near 1."""
    return lambda z: z - 0.5 * np.cos(z) - 0.3 * x


def _cubic(x):
    """z^3 + z = x: one real root for every x."""
    return lambda z: z ** 3 + z - x


def _quartic(x):
    """Minimised where z^3 + z = x."""
    return lambda z: np.sum(0.25 * z ** 4 + 0.5 * z ** 2 - x * z)


def _unit_well(x):
    """Minimised at z = sin(x), with the identity as Hessian."""
    return lambda z: 0.5 * np.sum((z - np.sin(x)) ** 2)


def _unit_well_gradient(x):
    return lambda z: z - np.sin(x)


def _scalar_solver(name):
    return lambda x: getattr(_opt, name)(_cubic(x), -3.0, 3.0, xtol=1e-15)


# solvers differentiated through their solutions (implicit function theorem),
# converged to rounding so that differences see the exact derivative
SOLVERS = {
    _opt.fsolve: [case(lambda x: _opt.fsolve(_cubic(x), np.zeros(2), xtol=1e-13), 2,
                       domain=(0.5, 1.5))],
    _opt.root: [case((lambda m: lambda x: _opt.root(_contraction(x), np.zeros(2), method=m,
                                                   tol=1e-13).x)(m), 2, m)
                for m in ("hybr", "lm", "krylov")],
    _opt.leastsq: [case(lambda x: _opt.leastsq(_cubic(x), np.zeros(2), xtol=1e-14)[0], 2,
                        domain=(0.5, 1.5))],
    _opt.least_squares: [case(lambda x: _opt.least_squares(_cubic(x), np.zeros(2), xtol=1e-15,
                                                           ftol=1e-15, gtol=1e-15).x, 2,
                              domain=(0.5, 1.5))],
    _opt.minimize: [case(lambda x: _opt.minimize(
        _quartic(x), np.zeros(2), method="trust-ncg", jac=lambda z: z ** 3 + z - x,
        hess=lambda z: np.diag(3 * z ** 2 + 1), options={"gtol": 1e-14}).x, 2,
        domain=(0.5, 1.5))],
    _opt.minimize_scalar: [case(lambda x: _opt.minimize_scalar(
        lambda z: (z - x) ** 2 + 0.5 * np.cos(z), bounds=(-3.0, 3.0), method="bounded",
        options={"xatol": 1e-15}).x, (), domain=(0.5, 1.5))],
    _opt.root_scalar: [case(lambda x: _opt.root_scalar(_cubic(x), bracket=(-3.0, 3.0),
                                                       xtol=1e-15).root, ())],
    **{getattr(_opt, name): [case(_scalar_solver(name), ())]
       for name in ("brentq", "brenth", "ridder", "bisect", "toms748")},
    _opt.newton: [case(lambda x: _opt.newton(_cubic(x), 0.5, fprime=lambda z: 3 * z ** 2 + 1,
                                             tol=1e-15), ())],
    _opt.fixed_point: [case(lambda x: _opt.fixed_point(lambda z: 0.5 * np.cos(z) + 0.3 * x,
                                                       np.zeros(2), xtol=1e-15), 2)],
    **{getattr(_opt, name): [case((lambda name: lambda x: getattr(_opt, name)(
        _contraction(x), np.zeros(2), f_tol=1e-14))(name), 2)]
       for name in ("newton_krylov", "broyden1", "broyden2", "diagbroyden")},
    # mixing with a positive step needs a Jacobian near -1
    **{getattr(_opt, name): [case((lambda name: lambda x: getattr(_opt, name)(
        lambda z: -_contraction(x)(z), np.zeros(2), f_tol=1e-14))(name), 2)]
       for name in ("excitingmixing", "linearmixing")},
    # (with a longer memory, anderson's own least-squares solves warn of ill-conditioning)
    _opt.anderson: [case(lambda x: _opt.anderson(lambda z: -_contraction(x)(z), np.zeros(2),
                                                 M=1, f_tol=1e-14), 2)],
    # the legacy minimisers, on a well whose Hessian is the identity: each lands on
    # the minimiser to rounding (Nelder-Mead and Powell with tolerances near zero)
    **{getattr(_opt, name): [case((lambda name, options: lambda x: np.ravel(getattr(_opt, name)(
        _unit_well(x), np.zeros(2), **options(x))[0] if name in ("fmin_l_bfgs_b", "fmin_tnc")
        else getattr(_opt, name)(_unit_well(x), np.zeros(2), **options(x))))(name, options), 2)]
       for name, options in (
           ("fmin", lambda x: dict(xtol=1e-15, ftol=1e-31, maxiter=4000, maxfun=4000, disp=0)),
           ("fmin_powell", lambda x: dict(xtol=1e-15, ftol=1e-31, disp=0)),
           ("fmin_cg", lambda x: dict(fprime=_unit_well_gradient(x), gtol=1e-14, disp=0)),
           ("fmin_bfgs", lambda x: dict(fprime=_unit_well_gradient(x), gtol=1e-14, disp=0)),
           ("fmin_ncg", lambda x: dict(fprime=_unit_well_gradient(x), fhess=lambda z: np.eye(2),
                                       avextol=1e-15, disp=0)),
           ("fmin_l_bfgs_b", lambda x: dict(fprime=_unit_well_gradient(x), pgtol=1e-14,
                                            factr=1.0)),
           ("fmin_tnc", lambda x: dict(fprime=_unit_well_gradient(x), pgtol=1e-14, messages=0)))},
    # a constrained minimiser (the KKT conditions), the unit well held on the line
    # z0 + z1 = 3 (an active inequality, multiplier at least 1/2)
    _opt.fmin_slsqp: [case(lambda x: _opt.fmin_slsqp(
        _unit_well(x), np.zeros(2), ieqcons=[lambda z: z[0] + z[1] - 3.0],
        fprime=_unit_well_gradient(x), fprime_ieqcons=lambda z: np.ones((1, 2)), acc=1e-15,
        iprint=0), 2)],
    # a linear program at a nondegenerate vertex (both inequalities active,
    # multipliers 1/2): its optimal basis (adsim/_scipy/linprog.py)
    _opt.linprog: [case(lambda x: (lambda r: np.append(r.x, r.fun))(_opt.linprog(
        [-1.0, -2.0], A_ub=np.array([[1.0, 1.0], [1.0, 3.0]]) + x[2] * np.eye(2)[:, ::-1],
        b_ub=np.array([4.0, 6.0]) + x[:2])), 3, domain=(0.1, 0.5))],
    # data on the model's curve: Gauss-Newton converges to rounding
    _opt.curve_fit: [case(lambda x: _opt.curve_fit(
        lambda t, a, k: a * np.exp(-k * t), np.linspace(0.0, 2.0, 6),
        (1.0 + x[0]) * np.exp(-(1.0 + x[1] ** 2) * np.linspace(0.0, 2.0, 6)),
        p0=[1.0, 1.0], ftol=1e-15, xtol=1e-15, gtol=1e-15)[0], 2, domain=(0.1, 0.5))],
}

# fmin_cobyla's solutions are too coarse for differences: inside a recording it
# gives SciPy's value (its derivatives: tests/scipy/test_implicit_constrained.py)
VALUE_ONLY[_opt.fmin_cobyla] = [case(lambda x: _opt.fmin_cobyla(
    _unit_well(x), np.zeros(2), [lambda z: z[0] + z[1] - 3.0], rhoend=1e-8, catol=1e-12), 2)]
CASES.update(SOLVERS)
# NumPy dispatches these from 2.4 (adsim/_numpy_api.py); before, they are plain
# NumPy code, covered by tests/numpy/test_numpy_polynomial.py
if hasattr(np.polynomial.polynomial.polyval2d, "_implementation"):
    CASES.update({
        np.polynomial.polynomial.polyval2d: [case(
            lambda x: np.polynomial.polynomial.polyval2d(x[:2], x[2:4], x.reshape(2, 3)), 6)],
        np.polynomial.polynomial.polygrid2d: [case(
            lambda x: np.polynomial.polynomial.polygrid2d(x[:2], x[2:5], x[:4].reshape(2, 2)),
            6)]})

REFUSED = {
    np.real_if_close: [refuse(lambda x: np.real_if_close(x + 0j), 3, adsim.UnsupportedOperation,
                              "real_if_close")],
    "ndarray.__getattr__": [refuse(lambda x: x.ctypes, 3, adsim.UnsupportedAttribute,
                                   "no ndarray attribute `ctypes`")],
    "ndarray.searchsorted": [refuse(lambda x: np.concatenate([x, x - 5.0]).searchsorted(0.5), 3,
                                    adsim.UnsupportedOperation, "not sorted")],
    scipy.integrate.odeint: [refuse(_odeint_active_rtol, 3, adsim.UnsupportedOperation, "rtol=")],
    # SciPy's solver classes stepped by hand and scipy.integrate.ode: refused, naming
    # solve_ivp (tests/integrate/test_user_ode_programs_s14.py runs them as users write them)
    scipy.integrate.OdeSolver.__init__: [refuse(
        lambda x: scipy.integrate.RK45(lambda t, y: -x[0] * y, 0.0, x[1:], 1.0), 3,
        adsim.UnsupportedOperation, "call scipy.integrate.solve_ivp")],
    scipy.integrate.ode.set_initial_value: [refuse(
        lambda x: scipy.integrate.ode(lambda t, y: -y).set_initial_value(x, 0.0), 3,
        adsim.UnsupportedOperation, "scipy.integrate.ode with active values")],
    scipy.integrate.ode.integrate: [refuse(
        lambda x: scipy.integrate.ode(lambda t, y: -x[0] * y).set_initial_value(
            np.ones(2), 0.0).integrate(1.0), 3,
        adsim.UnsupportedOperation, "scipy.integrate.ode with active values")],
    **{method: [refuse((lambda call: lambda x: call(interpolate.CubicSpline(IX, x)))(call), 6,
                       adsim.UnsupportedOperation, method.__name__)]
       for method, call in ((_PPOLY.roots, lambda s: s.roots()),
                            (_PPOLY.solve, lambda s: s.solve(0.5)),
                            (_PPOLY.__mro__[1].extend, lambda s: s.extend(np.zeros((4, 1)), [2.5])))},
    _BSPL.insert_knot: [refuse(lambda x: interpolate.make_interp_spline(IX, x).insert_knot(0.5), 6,
                               adsim.UnsupportedOperation, "insert_knot")],
    **{method: [refuse((lambda call: lambda x: call(interpolate.RectBivariateSpline(
        BX, BY, x.reshape(4, 4), kx=2, ky=2)))(call), 16, adsim.UnsupportedOperation,
        method.__name__)]
       for method, call in ((_FITPACK2.BivariateSpline.integral, lambda s: s.integral(0, 1, 0, 1)),
                            (_FITPACK2._BivariateSplineBase.partial_derivative,
                             lambda s: s.partial_derivative(1, 0)),
                            (_FITPACK2._BivariateSplineBase.get_coeffs, lambda s: s.get_coeffs()))},
    **{getattr(_FITPACK2.UnivariateSpline, name): [refuse(
        (lambda name: lambda x: getattr(interpolate.InterpolatedUnivariateSpline(IX, x), name)(
            *((0.5,) if name in ("set_smoothing_factor", "derivatives") else ())))(name), 6,
        adsim.UnsupportedOperation, name)]
       for name in ("roots", "get_coeffs", "get_residual", "set_smoothing_factor",
                    "derivatives")},
    np.linspace: [refuse(lambda x: np.linspace(x[:2], x[2:], 3), 4, adsim.UnsupportedOperation,
                         "linspace with active array endpoints")],
    np.var: [refuse(lambda x: np.var(x, where=np.array([True, True, False])), 3,
                    adsim.UnsupportedOperation, "where")],
    "ndarray.__float__": _leak(lambda x: float(x[0])),
    "ndarray.__complex__": _leak(lambda x: complex(x[0])),
    "ndarray.__array__": [refuse(lambda x: x.__array__(), 3, adsim.ActiveValueLeak,
                                 "conversion to a plain NumPy array")],
    "ndarray.item": _leak(lambda x: x[0].item()),
    "ndarray.as_integer_ratio": [refuse(lambda x: x[0].as_integer_ratio(), 3,
                                        adsim.ActiveValueLeak, "exact fraction")],
    "ndarray.tolist": _leak(lambda x: x.tolist()),
    "ndarray.__index__": [refuse(lambda x: x.__index__(), (), TypeError, "integer scalar arrays"),
                          refuse(lambda x: x.__index__(), 3, TypeError, "integer scalar arrays",
                                 "1-d")],
    "ndarray.__reduce__": [refuse(lambda x: pickle.dumps(x), 3, TypeError, "cannot be pickled")],
    "ndarray.__delitem__": [refuse(lambda x: x.__delitem__(0), 3, ValueError, "delete")],
    "ndarray.astype": [refuse(lambda x: x.astype(np.float32), 3, adsim.UnsupportedOperation,
                              "float32")],
    sc.zeta: [refuse(lambda x: sc.zeta(x + 2.0, 1.5), 3, adsim.UnsupportedOperation, "zeta")],
    sc.gammainc: [refuse(lambda x: sc.gammainc(x + 3.0, 1.5), 3, adsim.UnsupportedOperation,
                         "gammainc")],
    st.rv_continuous.fit: _stats_refusal(lambda x: st.t.fit(x), "scipy.stats.t.fit"),
    **_own_method_refusals(),
    np.vecmat: [refuse(lambda x: np.vecmat(x[:2], x[2:]), 4, ValueError, "enough dimensions",
                       "1-d matrix")],
    np.matvec: [refuse(lambda x: np.matvec(x[:2], x[2:]), 4, ValueError, "enough dimensions",
                       "1-d matrix")],
    np.vecdot: [refuse(lambda x: np.vecdot(x[:3], x[3:]), 4, ValueError, "core dimension",
                       "lengths 3 and 1")],
    st.rv_continuous.expect: _stats_refusal(lambda x: st.norm.expect(loc=x[0]),
                                            "scipy.stats.norm.expect"),
    **{getattr(st.rv_discrete, m): _stats_refusal(
        (lambda m: lambda x: getattr(st.poisson, m)(0.5, x))(m), f"scipy.stats.poisson.{m}")
       for m in ("ppf", "isf")},
    st.rv_discrete.rvs: _stats_refusal(lambda x: st.poisson.rvs(x), "scipy.stats.poisson.rvs"),
    st.rv_discrete.expect: _stats_refusal(lambda x: st.poisson.expect(args=(x[0],)),
                                          "scipy.stats.poisson.expect"),
    **{getattr(st.rv_continuous, m): _stats_refusal(
        (lambda m: lambda x: getattr(st.norm, m)(x[0], x[1]))(m), f"scipy.stats.norm.{m}")
       for m in ("mean", "var", "std", "stats", "support")},
    st.rv_continuous.moment: _stats_refusal(lambda x: st.norm.moment(2, x[0]),
                                            "scipy.stats.norm.moment"),
    st.rv_continuous.nnlf: _stats_refusal(lambda x: st.norm.nnlf(x[:2], C3),
                                          "scipy.stats.norm.nnlf"),
    **{getattr(_MVN_GEN, m): _stats_refusal(
        (lambda m: lambda x: getattr(st.multivariate_normal, m)(x, cov=SPD3))(m),
        f"scipy.stats.multivariate_normal.{m}") for m in ("cdf", "logcdf", "rvs")},
    **{getattr(_MVN_FROZEN, m): _stats_refusal(
        (lambda m: lambda x: getattr(MVN_FROZEN, m)(x))(m),
        f"scipy.stats.multivariate_normal.{m}") for m in ("cdf", "logcdf")},
    **{getattr(scipy.optimize, name): _solver_refusal(name, call)
       for name, call in _SOLVER_CALLS.items()},
}

NOT_FUNCTIONS = {
    "ndarray.__new__": "construction: active arrays come from recordings",
    "ndarray.__getattribute__": "Python's attribute lookup",
    "ndarray.__delattr__": "Python's attribute deletion",
    "ndarray.__repr__": "text for people, not a value",
    # the recorded value as text, display only (tests/numpy/test_formatting.py)
    "ndarray.__format__": "text for people, not a value",
    **{f: "text for people, not a value" for f in (np.array2string, np.array_str,
                                                    np.array_repr)},
    "ndarray.__array_ufunc__": "the ufunc protocol every ufunc case goes through",
    "ndarray.__array_function__": "the function protocol every NumPy function case goes through",
    "ndarray.__array_priority__": "a protocol constant",
    "ndarray.__hash__": "None: arrays are unhashable",
    "ndarray.__doc__": "documentation",
    "ndarray.__pyx_vtable__": "the compiled class's internals",
    "ndarray.slot": "adsim's own attribute (where the value lives on the tape), not NumPy's",
    "ndarray.tape": "adsim's own attribute (the recording), not NumPy's",
    _MVN_FROZEN.rvs: "takes no array argument, so no call passes it an active one",
}

# ---------------------------------------------------------------- no complex step

REFUSES_COMPLEX = "NumPy/SciPy refuse complex input here (no complex loop, or a cast to real)"
NOT_HOLOMORPHIC = "not holomorphic"
FFT_MIXES = ("computed by FFTs, which mix real and imaginary parts: rounding of the real parts "
             "(1e-16) swamps the step (1e-20)")
NO_COMPLEX_STEP = {
    **dict.fromkeys([np.arctan2, np.hypot, np.cbrt, np.ceil, np.floor, np.trunc, np.fabs,
                     np.deg2rad, np.rad2deg, np.degrees, np.radians, np.floor_divide, np.fmod,
                     np.remainder, np.heaviside, np.logaddexp, np.logaddexp2, np.unwrap],
                    REFUSES_COMPLEX),
    np.absolute: "not holomorphic: |z|",
    **dict.fromkeys([np.histogram, np.histogram2d, np.histogramdd],
                    "NumPy's histogram of complex values discards their imaginary parts"),
    np.bincount: "NumPy's bincount casts its weights to float64",
    np.polyfit: "not holomorphic: NumPy's least squares of complex values conjugates",
    np.roots: "the roots of complex coefficients are complex: their parts are not holomorphic",
    np.sign: "not holomorphic: sign(z) = z / |z|",
    np.conjugate: "not holomorphic: conj(z)",
    np.real: "not holomorphic: Re z", np.imag: "not holomorphic: Im z",
    np.var: "not holomorphic: NumPy's variance of complex values is the mean of |z - mean|^2",
    np.std: "not holomorphic: the square root of NumPy's variance of |z - mean|^2",
    np.vdot: "not holomorphic: conjugates its first argument",
    np.correlate: "not holomorphic: conjugates its second argument",
    np.quantile: "NumPy's quantile takes real arrays only",
    np.percentile: "NumPy's percentile takes real arrays only",
    np.fix: REFUSES_COMPLEX,
    **dict.fromkeys([np.linalg.norm, np.linalg.slogdet], "not holomorphic: absolute values"),
    **dict.fromkeys([np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh, np.linalg.qr,
                     np.linalg.svd, np.linalg.pinv, np.linalg.lstsq, sl.cholesky, sl.cho_factor,
                     sl.cho_solve, sl.svd, sl.svdvals, sl.pinv, sl.lstsq, sl.qr, sl.eigh,
                     sl.eigvalsh],
                    "not holomorphic: Hermitian (conjugate) transposes"),
    **dict.fromkeys([np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn,
                     np.fft.ifftn, np.fft.irfft, fftpack.fft, fftpack.ifft, fftpack.fft2,
                     fftpack.ifft2, fftpack.fftn, fftpack.ifftn],
                    "its real results here are Re, Im or |.| of complex values: not holomorphic"),
    **dict.fromkeys([np.fft.rfft, np.fft.rfft2, np.fft.rfftn, np.fft.irfft2, np.fft.irfftn,
                     np.fft.ihfft], "NumPy's real transforms take real input only"),
    np.fft.hfft: "not holomorphic: the conjugate of its input",
    scipy_fft_backend._ScipyBackend.__ua_function__:
        "real results of complex transforms (Re, Im, |.|) and real transforms: not holomorphic",
    **dict.fromkeys([sc.gammaln, sc.zeta, sc.beta, sc.betaln, sc.erfinv, sc.erfcinv, sc.expit,
                     sc.log_expit, sc.logit, sc.entr, sc.rel_entr, sc.ndtri, sc.j0, sc.j1,
                     sc.i0, sc.i1, sc.i0e, sc.i1e, sc.gammainc, sc.gammaincc, sc.gammaincinv,
                     sc.gammainccinv, sc.betainc, sc.betaincc, sc.betaincinv, sc.stdtr,
                     sc.stdtrit, sc.polygamma], REFUSES_COMPLEX),
    sc.jv: SCIPY_COMPLEX_LOSES,
    sc.ive: "not holomorphic: scaled by exp(-|Re z|)",
    **dict.fromkeys([st.multivariate_normal.logpdf, st.multivariate_normal.pdf,
                     st.multivariate_normal.__call__, MVN_FROZEN.logpdf, MVN_FROZEN.pdf,
                     st.multivariate_normal.entropy],
                    "SciPy casts its arguments to real"),
    **dict.fromkeys(["ndarray.conj", "ndarray.conjugate", "ndarray.real"], "not holomorphic"),
    "ndarray.__abs__": "not holomorphic: |z|",
    "ndarray.var": "not holomorphic: the mean of |z - mean|^2",
    "ndarray.std": "not holomorphic: the square root of the mean of |z - mean|^2",
    "ndarray.astype": "casts to a real dtype",
    **dict.fromkeys(["ndarray.__floordiv__", "ndarray.__rfloordiv__", "ndarray.__mod__",
                     "ndarray.__rmod__", "ndarray.__divmod__", "ndarray.__rdivmod__"],
                    REFUSES_COMPLEX),
    "ndarray.__ifloordiv__": REFUSES_COMPLEX, "ndarray.__imod__": REFUSES_COMPLEX,
    **dict.fromkeys([np.copysign, np.divmod, np.nanquantile, np.nanpercentile, np.i0, np.astype,
                     sc.binom, sc.boxcox, sc.boxcox1p, sc.cbrt, sc.cosdg, sc.cosm1, sc.cotdg,
                     sc.ellipe, sc.ellipk, sc.exp10, sc.exp2, sc.expn, sc.exprel, sc.gammasgn,
                     sc.huber, sc.k0, sc.k0e, sc.k1, sc.k1e, sc.kl_div, sc.owens_t, sc.powm1,
                     sc.pseudo_huber, sc.radian, sc.sindg, sc.tandg, sc.y0, sc.y1, sc.yn,
                     sc.multigammaln, distance.pdist, distance.cdist, sc.chdtr, sc.chdtrc,
                     sc.chdtri, sc.gdtr, sc.gdtrc, sc.gdtrix, sc.pdtr, sc.pdtrc, sc.pdtri, sc.bdtr,
                     sc.bdtrc, sc.bdtri, sc.nbdtr, sc.nbdtrc, sc.fdtr, sc.fdtrc, sc.fdtri,
                     sc.betainccinv, sc.kn, sc.struve, sc.modstruve, sc.poch, sc.ndtri_exp,
                     sc.ellipkm1, sc.inv_boxcox, sc.inv_boxcox1p, sc.eval_hermite,
                     sc.eval_hermitenorm, sc.voigt_profile], REFUSES_COMPLEX),
    **dict.fromkeys([sc.jve, sc.yve], "not holomorphic: scaled by exp(-|Im z|)"),
    **dict.fromkeys([np.angle, np.real_if_close], "not holomorphic: arg z, Re z"),
    **dict.fromkeys([np.nanvar, np.nanstd], "not holomorphic: |z - mean|^2"),
    **dict.fromkeys([np.cov, np.corrcoef, np.vecdot, np.vecmat, np.linalg.vecdot,
                     signal.correlate2d], "not holomorphic: conjugates an operand"),
    **dict.fromkeys([np.linalg.cond, np.linalg.vector_norm, np.linalg.matrix_norm,
                     np.linalg.svdvals, sl.norm], "not holomorphic: absolute values"),
    np.partition: "NumPy orders the elements beside the kth differently for complex input",
    np.nan_to_num: "replaces a NaN in the real and the imaginary part alike",
    **dict.fromkeys([signal.fftconvolve, signal.oaconvolve], FFT_MIXES),
    **dict.fromkeys([sc.yv, sc.rgamma, sl.solve_sylvester, sl.cosm, sl.sinm, sl.tanm],
                    SCIPY_COMPLEX_LOSES),
    **dict.fromkeys([sl.solve_continuous_lyapunov, sl.solve_discrete_lyapunov],
                    "SciPy's solution of a complex equation conjugates A (A X + X A^H)"),
    **dict.fromkeys([sl.solve_continuous_are, sl.solve_discrete_are],
                    "SciPy's Riccati solvers take complex input as a Hermitian equation"),
    sc.expi: "branch cut along the real axis (Im Ei(x + i0) = pi)",
    **_stats_without_complex_step(),
    **dict.fromkeys(SOLVERS, "SciPy's solvers compute on real floats"),
    **dict.fromkeys(QUADRATURE_AND_INTERPOLATION, "adsim's rules for quadrature and "
                    "interpolation take real values (SciPy's compiled codes are real)"),
}


# ---- where users find each callable (test ids and messages) ------------------------

PUBLIC_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "scipy.special", "scipy.linalg",
                  "scipy.stats", "scipy.signal", "scipy.spatial.distance", "scipy.optimize",
                  "scipy.integrate")


def name_of(key):
    """Where users find ``key``: ``numpy.sum``, ``numpy.add.reduce``,
    ``scipy.special.zeta`` (for its private ufunc), ``scipy.stats.norm.logpdf``,
    ``ndarray.sum``."""
    if isinstance(key, str):
        return key
    if isinstance(key, np.ufunc):
        return ufunc_name(key)
    if isinstance(key, types.BuiltinMethodType) and isinstance(key.__self__, np.ufunc):
        return f"{name_of(key.__self__)}.{key.__name__}"
    if inspect.ismethod(key):
        owner = key.__self__
        if isinstance(owner, (st.rv_continuous, st.rv_discrete)):
            return f"scipy.stats.{owner.name}.{key.__name__}"
        return name_of(key.__func__)
    for module in PUBLIC_MODULES:
        if getattr(importlib.import_module(module), getattr(key, "__name__", ""), None) is key:
            return f"{module}.{key.__name__}"
        for attr, value in vars(importlib.import_module(module)).items():
            if value is key and not attr.startswith("_"):      # objects such as np.r_
                return f"{module}.{attr}"
    return f"{key.__module__}.{key.__qualname__}"
