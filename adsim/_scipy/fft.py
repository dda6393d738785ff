"""``scipy.fft``'s discrete Fourier transforms of active arrays.

SciPy's transforms are uarray multimethods: a call goes to the backend's
``__ua_function__(method, args, kwargs)``, which converts its arguments to
plain arrays. Hooked there (see hooks.py), a call with an active argument
runs the same transform of ``numpy.fft`` instead (NumPy's functions, with
adsim's rules; both compute the same DFT, to rounding), so
``scipy.fft.rfft(u)`` in a spectral solver records as ``np.fft.rfft(u)``.
SciPy's arguments that only say how to compute (``overwrite_x``,
``workers``) are dropped; a ``plan``, the Hermitian transforms (``hfft``,
``ihfft``, as in numpy.fft) and the real-to-real and Hankel transforms
(``dct``, ``dst``, ``fht``, ...) are refused by name.
"""
import inspect

import numpy as np

from ..errors import UnsupportedOperation
from .._np.complex import ComplexActive

# the transforms whose numpy.fft function takes the same arguments (x first)
SAME_AS_NUMPY = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
                 "ifftn", "rfftn", "irfftn")
_HOW = ("overwrite_x", "workers")        # no effect on the values


def ua_function(method, args, kwargs):
    """SciPy's backend dispatch, for a call with active arguments."""
    name = getattr(method, "__name__", repr(method))
    if name not in SAME_AS_NUMPY:
        raise UnsupportedOperation(
            f"adsim: scipy.fft.{name} of an active array has no rule; adsim differentiates "
            f"scipy.fft's {', '.join(SAME_AS_NUMPY)} (as numpy.fft's). Write the transform "
            f"with those, or call it on adsim.value(x) if no derivative is wanted")
    bound = inspect.signature(method).bind(*args, **kwargs).arguments
    for how in _HOW:
        bound.pop(how, None)
    if bound.pop("plan", None) is not None:
        raise UnsupportedOperation(f"adsim: scipy.fft.{name} with a plan= of an active array; "
                                   f"leave plan out (adsim runs numpy.fft.{name})")
    x = bound.pop("x")
    return getattr(np.fft, name)(x, **bound)


def _complex_arguments(args, kwargs):
    """A complex active array among the transform's arguments (the hooks
    route calls with real active values by themselves)."""
    if len(args) != 3:
        return False
    _, call_args, call_kwargs = args
    return any(isinstance(a, ComplexActive)
               for a in list(call_args) + list(dict(call_kwargs).values()))


ua_function.routes_also = _complex_arguments

HOOKS = {("scipy.fft._backend", "_ScipyBackend.__ua_function__"): ua_function}
