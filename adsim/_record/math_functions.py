"""``math``'s functions given active numbers inside a recorded function.

``math.exp(x)`` converts its argument with ``float()``, which an active value
refuses (it would drop the derivative), so scalar models written with the
``math`` module (``k = A * math.exp(-Ea / (R * T))``, ``math.sqrt(vx**2 +
vy**2)``) could not be recorded as written. adsim/_record/interpose.py binds
the stand-ins made here in the ``math`` module, and in place of names imported
from it (``from math import exp``), while a recording with interposition on
runs, as it binds NumPy's creation functions.

``math.isnan``, ``isinf``, ``isfinite`` and ``isclose`` of an active number
answer a Python bool from recorded comparisons (a replay where the answer
changes records again). ``math.floor``, ``ceil`` and ``trunc`` need no
stand-in: they call the active value's own ``__floor__``, ... (guarded
integers).

A stand-in given plain numbers, or called outside such a recording, is
``math``'s own function. Given an active number (an active array of one
element) on a recording thread, it first calls ``math``'s function on the
plain values, so that it raises exactly where ``math`` raises (``math.sqrt(-1)``
and ``math.log(0)``: ValueError, ``math.exp(1000)``: OverflowError), then
records the NumPy function (or ``scipy.special`` ufunc) of the same value,
equal to ``math``'s up to rounding, and returns it as a 0-d active array,
which works where a number does. An active array of more than one element
raises what ``math`` would (a TypeError: only one-element arrays convert to
numbers), naming the NumPy function to use instead.
"""
import functools
import math

import numpy as np
from scipy import special

from . import creation
from .stand_ins import named_like
from .._active import Active
from .._np.complex import ComplexActive
from .._np.integers import current


def _log(x, base=None):
    return np.log(x) if base is None else np.log(x) / np.log(base)


def _hypot(*coordinates):
    if not coordinates:
        return 0.0
    return functools.reduce(np.hypot, coordinates, 0.0)


def _dist(p, q):
    return _hypot(*[a - b for a, b in zip(p, q)])


def _fsum(values):
    """Neumaier's compensated sum (Neumaier 1974) with recorded operations:
    math.fsum's point is a sum that cancels (fsum([1e16, 1.0, -1e16]) is 1.0),
    which a plain sum would get wrong; the compensation's derivative is 0, and
    the side it takes is chosen from the values at every replay (np.where)."""
    total, compensation = 0.0, 0.0
    for v in values:
        new = total + v
        compensation = compensation + np.where(np.abs(total) >= np.abs(v),
                                               (total - new) + v, (v - new) + total)
        total = new
    return total + compensation


def _prod(values, *, start=1):
    return functools.reduce(np.multiply, values, start)


# math's name -> what adsim records for it (elementwise on the scalar)
_ELEMENTWISE = {
    "exp": np.exp, "expm1": np.expm1, "exp2": np.exp2, "log": _log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "cbrt": np.cbrt, "pow": np.power,
    "fabs": np.abs, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "hypot": _hypot, "degrees": np.degrees, "radians": np.radians,
    "erf": special.erf, "erfc": special.erfc, "gamma": special.gamma,
    "lgamma": special.gammaln, "copysign": np.copysign, "fmod": np.fmod,
}


def _isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    """math.isclose's test, |a - b| <= max(rel_tol max(|a|, |b|), abs_tol),
    equal values (infinities too) close and other infinities not, written
    with recorded comparisons."""
    if bool(a == b):
        return True
    if not (bool(np.isfinite(a)) and bool(np.isfinite(b))):
        return False
    diff = np.abs(a - b)
    return bool(diff <= rel_tol * np.abs(a)) or bool(diff <= rel_tol * np.abs(b)) or \
        bool(diff <= abs_tol)


# math's predicates: a Python bool of recorded comparisons, checked on replay
_PREDICATES = {
    "isnan": lambda x: bool(np.isnan(x)), "isinf": lambda x: bool(np.isinf(x)),
    "isfinite": lambda x: bool(np.isfinite(x)), "isclose": _isclose,
}
# math's functions of iterables: the active items are looked for inside them
_OF_ITERABLES = {"fsum": _fsum, "prod": _prod, "dist": _dist}


def _plain(value):
    """The recorded number of a one-element active array."""
    return float(current(value).reshape(()))


def _scalar(value, name, numpy_name):
    """An active argument as a 0-d active array; an active array of more than
    one element raises as math does for a NumPy array of that size."""
    if value.size != 1:
        raise TypeError(
            f"adsim: math.{name} takes a number, and was given an active array of shape "
            f"{value.shape} (math raises TypeError for such an array too); use "
            f"{numpy_name}, which works elementwise and which adsim records")
    return value.reshape(())


def _numpy_name(recorded):
    if isinstance(recorded, np.ufunc):
        module = "scipy.special" if getattr(special, recorded.__name__, None) == recorded \
            else "np"
        return f"{module}.{recorded.__name__}"
    return "NumPy's functions"


def _elementwise_stand_in(name, original, recorded):
    numpy_name = _numpy_name(recorded)

    def stand_in(*args, **kwargs):
        if not (any(isinstance(a, Active) for a in args) and creation.routed()):
            return original(*args, **kwargs)
        args = [_scalar(a, name, numpy_name) if isinstance(a, Active) else a for a in args]
        original(*[_plain(a) if isinstance(a, Active) else a for a in args], **kwargs)
        return recorded(*args, **kwargs)
    return stand_in


def _iterable_stand_in(name, original, recorded):
    def stand_in(*args, **kwargs):
        if not creation.routed():
            return original(*args, **kwargs)
        # iterables, active arrays among them, as lists of their items
        args = [list(a) if (isinstance(a, Active) and a.ndim > 0) or (
            not isinstance(a, (Active, ComplexActive)) and hasattr(a, "__iter__")) else a
            for a in args]
        items = [v for a in args for v in (a if isinstance(a, list) else [a])]
        if not any(isinstance(v, Active) for v in items):
            return original(*args, **kwargs)
        for v in items:
            if isinstance(v, Active):
                _scalar(v, name, "NumPy's functions")
        plain = [[_plain(v) if isinstance(v, Active) else v for v in a]
                 if isinstance(a, list) else a for a in args]
        original(*plain, **kwargs)
        return np.reshape(recorded(*args, **kwargs), ())
    return stand_in


def wrappers():
    """{(math, name): stand-in} for the functions of ``math`` this Python has
    (made from the objects bound there now)."""
    made = {}
    for table, make in ((_ELEMENTWISE, _elementwise_stand_in),
                        (_PREDICATES, _elementwise_stand_in),
                        (_OF_ITERABLES, _iterable_stand_in)):
        for name, recorded in table.items():
            original = getattr(math, name, None)
            if original is not None:
                made[math, name] = named_like(make(name, original, recorded), original, "math")
    return made
