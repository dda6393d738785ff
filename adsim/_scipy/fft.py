"""``scipy.fft``'s discrete Fourier transforms of active arrays.

SciPy's transforms are uarray multimethods: a call goes to the backend's
``__ua_function__(method, args, kwargs)``, which converts its arguments to
plain arrays. Hooked there (see hooks.py), a call with an active argument
runs the same transform of ``numpy.fft`` instead (NumPy's functions, with
adsim's rules; both compute the same DFT, to rounding), so
``scipy.fft.rfft(u)`` in a spectral solver records as ``np.fft.rfft(u)``.
The Hermitian transforms (``hfft``, ``ihfft`` and their 2-D and n-D
forms) run as ``irfftn`` and ``rfftn`` with conjugates (numpy.fft's
definitions, which SciPy shares); the real-to-real transforms (``dct``,
``dst``, their inverses and n-D forms) are adsim's own ops (fft_r2r.py).
SciPy's arguments that only say how to compute (``overwrite_x``,
``workers``) are dropped; a ``plan`` and the Hankel transforms (``fht``,
``ifht``) are refused by name.
"""
import inspect

import numpy as np

from ..errors import UnsupportedOperation
from .._np.complex import ComplexActive
from .._np.fft import hermitian
from . import fft_r2r

# the transforms whose numpy.fft function takes the same arguments (x first)
SAME_AS_NUMPY = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
                 "ifftn", "rfftn", "irfftn")
_HOW = ("overwrite_x", "workers")        # no effect on the values
# name -> inverse? of the Hermitian transforms
HERMITIAN = {"hfft": False, "ihfft": True, "hfft2": False, "ihfft2": True, "hfftn": False,
             "ihfftn": True}
# name -> (kind, inverse) of the real-to-real transforms, one-axis forms
R2R = {"dct": ("dct", False), "idct": ("dct", True), "dst": ("dst", False),
       "idst": ("dst", True)}
SUPPORTED = SAME_AS_NUMPY + tuple(HERMITIAN) + tuple(R2R) + tuple(f"{n}n" for n in R2R)


def _hermitian_axes(x, s, axes):
    """SciPy's ``s`` without ``axes``: the last len(s) axes."""
    if axes is None:
        return tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    return (axes,) if isinstance(axes, int) else tuple(axes)


def ua_function(method, args, kwargs):
    """SciPy's backend dispatch, for a call with active arguments."""
    name = getattr(method, "__name__", repr(method))
    if name not in SUPPORTED:
        raise UnsupportedOperation(
            f"adsim: scipy.fft.{name} of an active array has no rule; adsim differentiates "
            f"scipy.fft's {', '.join(SUPPORTED)}. Write the transform with those, or call it "
            f"on adsim.value(x) if no derivative is wanted")
    bound = inspect.signature(method).bind(*args, **kwargs).arguments
    for how in _HOW:
        bound.pop(how, None)
    if bound.pop("plan", None) is not None:
        raise UnsupportedOperation(f"adsim: scipy.fft.{name} with a plan= of an active array; "
                                   f"leave plan out (adsim runs numpy.fft.{name})")
    x = bound.pop("x")
    if name.rstrip("n") in R2R:
        kind, inverse = R2R[name.rstrip("n")]
        call = fft_r2r.transform if name.endswith("n") else fft_r2r.one_axis
        return call(kind, inverse, f"scipy.fft.{name}", x, **bound)
    if name in ("hfft", "ihfft"):
        return getattr(np.fft, name)(x, **bound)
    if name in HERMITIAN:
        signature = inspect.signature(method).bind(*args, **kwargs)
        signature.apply_defaults()              # hfft2's axes=(-2, -1)
        bound = signature.arguments
        s = bound.get("s")
        s = (s,) if isinstance(s, int) else s
        return hermitian(HERMITIAN[name], f"scipy.fft.{name}", x, s,
                         _hermitian_axes(x, s, bound.get("axes")), bound.get("norm"), None)
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
