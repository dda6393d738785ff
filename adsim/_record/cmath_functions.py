"""``cmath``'s functions given active numbers inside a recorded function.

Thin-film and scattering codes written with ``cmath`` (``cmath.sqrt(n**2 -
sin_t**2)``, ``cmath.exp(1j * delta)``) convert their argument with
``complex()``, which an active value refuses. As for ``math``
(adsim/_record/math_functions.py), adsim/_record/interpose.py binds the
stand-ins made here in the ``cmath`` module, and in place of names imported
from it (``from cmath import exp``), while a recording with interposition
on runs. Given an active number (a real active value of one element, taken
as complex as ``cmath`` takes a real, or a complex active value,
adsim/_np/complex.py), a stand-in calls ``cmath``'s function on the plain
value, so that it raises where ``cmath`` raises (``cmath.log(0)``), then
records NumPy's complex function of it (principal branches, ``cmath``'s and
NumPy's alike) and returns a 0-d complex active value. Plain numbers, or a
call outside such a recording, get ``cmath``'s own function.
"""
import cmath

import numpy as np

from . import creation
from .stand_ins import named_like
from .._active import Active
from .._np import complex as complex_
from .._np.complex import ComplexActive, _recorded_value

_ACTIVE = (Active, ComplexActive)


def _as_complex(v):
    return v + 0j if isinstance(v, Active) else v


def _log(z, base=None):
    return np.log(z) if base is None else np.log(z) / np.log(_as_complex(base))


def _rect(r, phi):
    return r * np.cos(phi) + 1j * (r * np.sin(phi))


def _polar(z):
    return np.abs(z), np.angle(z)


# cmath's name -> what adsim records for it on complex values; True: the argument
# is taken as complex (cmath.sqrt(-1.0) is 1j), False: as it is (rect's are real)
_RECORDED = {
    "exp": (np.exp, True), "log": (_log, True), "log10": (np.log10, True),
    "sqrt": (np.sqrt, True), "sin": (np.sin, True), "cos": (np.cos, True),
    "tan": (np.tan, True), "asin": (np.arcsin, True), "acos": (np.arccos, True),
    "atan": (np.arctan, True), "sinh": (np.sinh, True), "cosh": (np.cosh, True),
    "tanh": (np.tanh, True), "asinh": (np.arcsinh, True), "atanh": (np.arctanh, True),
    "phase": (np.angle, True), "polar": (_polar, True), "rect": (_rect, False),
}


def _plain(v):
    """The recorded number of a one-element active value (for cmath's own call)."""
    if isinstance(v, ComplexActive):
        re, im = complex_.parts(v)
        return complex(_recorded_value(re).reshape(()), _recorded_value(im).reshape(()))
    return float(_recorded_value(v).reshape(()))


def _scalar(v, name):
    if v.size != 1:
        raise TypeError(
            f"adsim: cmath.{name} takes a number, and was given an active array of shape "
            f"{v.shape} (cmath raises TypeError for such an array too); use NumPy's function "
            f"(np.sqrt, np.exp, ... of a complex array), which works elementwise and which "
            f"adsim records")
    return v.reshape(())


def _stand_in(name, original, recorded, as_complex):
    def stand_in(*args, **kwargs):
        if not (any(isinstance(a, _ACTIVE) for a in args) and creation.routed()):
            return original(*args, **kwargs)
        args = [_scalar(a, name) if isinstance(a, _ACTIVE) else a for a in args]
        original(*[_plain(a) if isinstance(a, _ACTIVE) else a for a in args], **kwargs)
        if as_complex:
            args = [_as_complex(a) for a in args]
        return recorded(*args, **kwargs)
    return named_like(stand_in, original, "cmath")


def wrappers():
    """{(cmath, name): stand-in} for the functions listed (made from the
    objects bound in ``cmath`` now)."""
    return {(cmath, name): _stand_in(name, getattr(cmath, name), recorded, as_complex)
            for name, (recorded, as_complex) in _RECORDED.items() if hasattr(cmath, name)}
