"""``numpy.emath`` (``numpy.lib.scimath``) on active values: sqrt, log, log2,
log10, logn, power, arcsin, arccos, arctanh.

NumPy decides the result's dtype from the values: real where every element
stays in the real domain (x >= 0 for sqrt, the logarithms and power's base;
|x| <= 1 for arcsin, arccos, arctanh), complex as soon as one element
leaves it. adsim decides the same way and records the decision as a
comparison of the extreme element (``nanmin(x) < 0``, ``max(nanmax(x),
-nanmin(x)) > 1``, NaN skipped as NumPy's ``any`` skips it): a replay at a
point where NumPy would give the other dtype raises ``BranchChanged``
(the functional API records again there) instead of reusing the recorded
dtype. Which elements are negative inside a complex result is recomputed at
every replay.

On a real active array the complex results are written with real ops, from
NumPy's values on the real axis (an input's imaginary part is +0):
``sqrt(x) = i sqrt(-x)`` and ``log(x) = log(-x) + i pi`` for x < 0
(log2 and log10 are log times log2(e), log10(e), as NumPy's complex loops
compute them), and for |x| > 1 ``arcsin(x) = sign(x) pi/2 + i acosh|x|``,
``arccos(x) = (0 or pi) - i acosh|x|``, ``arctanh(x) = acoth(x) + i pi/2``.
The branch not taken is evaluated at a harmless point, so its derivative
(infinite at the domain's edge) never meets a zero weight. ``power`` and
``logn`` of a complex base use the complex intermediates
(adsim/_np/complex.py), as do the functions of a complex active argument.
"""
import numpy as np

from .._active import Active
from .._opcodes import CompareKind
from .complex import ComplexActive
from .core import compare

_LOG2E = 1.0 / np.log(2.0)
_LOG10E = 1.0 / np.log(10.0)


def _abs(x):
    return np.maximum(x, -x)        # no sign record: the side is chosen at every replay


def _leaves(x, beyond_one):
    """Whether NumPy's emath makes ``x`` complex: a negative element (an
    element beyond +-1 when ``beyond_one``), NaN skipped; for an active x
    the decision is a recorded comparison, checked on replay."""
    if isinstance(x, ComplexActive):
        return True
    if not isinstance(x, Active):
        a = np.asarray(x)
        if a.dtype.kind == "c":
            return True
        with np.errstate(invalid="ignore"):
            return bool(np.any(np.abs(a) > 1 if beyond_one else a < 0))
    if x.size == 0:
        return False
    finite = np.where(np.isnan(x), 0.0, x)      # NaN leaves nothing (NumPy's any of x < 0)
    if beyond_one:
        return bool(compare(CompareKind.CMP_GT, np.maximum(np.max(finite), -np.min(finite)), 1.0))
    return bool(compare(CompareKind.CMP_LT, np.min(finite), 0.0))


def _complex(re, im):
    return re + 1j * im


def _real_complex(x):
    """A real plain value made complex as NumPy's _tocomplex makes it."""
    return np.asarray(x).astype(np.cdouble) if not isinstance(x, (Active, ComplexActive)) else x


def sqrt(x):
    if not _leaves(x, False):
        return np.sqrt(x)
    if not isinstance(x, Active):
        return np.sqrt(_real_complex(x))
    s = np.sqrt(_abs(x))
    return _complex(np.where(x < 0, 0.0, s), np.where(x < 0, s, 0.0))


def _log(x, scale, real):
    if not _leaves(x, False):
        return real(x)
    if not isinstance(x, Active):
        z = np.log(_real_complex(x))
        return z if scale == 1.0 else z * scale
    re = np.log(_abs(x))
    im = np.where(x < 0, np.pi, 0.0)
    return _complex(re, im) if scale == 1.0 else _complex(re * scale, im * scale)


def log(x):
    return _log(x, 1.0, np.log)


def log2(x):
    return _log(x, _LOG2E, np.log2)


def log10(x):
    return _log(x, _LOG10E, np.log10)


def logn(n, x):
    return log(x) / log(n)


def power(x, p):
    if not isinstance(p, (Active, ComplexActive)):
        p = np.asarray(p)
        if p.dtype.kind in "iu" and np.any(p < 0):   # NumPy's _fix_int_lt_zero
            p = p * 1.0
    if not _leaves(x, False):
        return np.power(x, p)
    base = x + 0j if isinstance(x, Active) else _real_complex(x)
    return np.power(base, p)


def _inverse_trig(kind):
    """arcsin, arccos or arctanh of NumPy's emath."""
    real = {"arcsin": np.arcsin, "arccos": np.arccos, "arctanh": np.arctanh}[kind]

    def rule(x):
        if not _leaves(x, True):
            return real(x)
        if not isinstance(x, Active):
            return real(_real_complex(x))
        inside = _abs(x) <= 1.0
        x_in = np.where(inside, x, 0.0)                 # harmless points for the branch
        x_out = np.where(inside, 2.0, x)                # not taken
        if kind == "arctanh":
            re_out = 0.5 * np.log((x_out + 1.0) / (x_out - 1.0))
            return _complex(np.where(inside, np.arctanh(x_in), re_out),
                            np.where(inside, 0.0, np.pi / 2))
        h = np.arccosh(_abs(x_out))
        if kind == "arcsin":
            return _complex(np.where(inside, np.arcsin(x_in), np.where(x > 0, np.pi / 2,
                                                                         -np.pi / 2)),
                            np.where(inside, 0.0, h))
        return _complex(np.where(inside, np.arccos(x_in), np.where(x > 0, 0.0, np.pi)),
                        np.where(inside, 0.0, -h))
    rule.__name__ = kind
    return rule


arcsin, arccos, arctanh = (_inverse_trig(k) for k in ("arcsin", "arccos", "arctanh"))

FUNCTIONS = {getattr(np.emath, f.__name__): f
             for f in (sqrt, log, log2, log10, logn, power, arcsin, arccos, arctanh)}
