"""``scipy.fftpack``'s real-to-real transforms of active arrays.

fftpack's ``dct``, ``dst`` and their n-D forms are scipy.fft's (the same
kernels); its inverses differ in normalisation: ``fftpack.idct(x, type=t,
norm=None)`` is the *unnormalised* forward transform of the inverse type
(scipy.fft's ``idct`` divides by 2N), and with ``norm="ortho"`` the two
agree. So each call runs adsim's op of the forward transform of the type
fftpack computes (fft_r2r.py); ``shape`` is scipy.fft's ``s``, with
fftpack's check that ``shape`` without ``axes`` names every axis.
``overwrite_x`` has no effect on the values and is dropped. fftpack's
complex transforms (``fft``, ``rfft``'s packed format, ...) have no rules:
use numpy.fft or scipy.fft, whose transforms adsim differentiates.
"""
import numpy as np

from .._np.complex import ComplexActive
from .fft_r2r import INVERSE_TYPE, one_axis, transform


def _one_axis(kind, inverse, name):
    def rule(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False):
        t = INVERSE_TYPE.get(type, type) if inverse else type
        return one_axis(kind, False, f"scipy.fftpack.{name}", x, t, n, axis, norm)
    rule.__name__ = name
    return rule


def _n_axes(kind, inverse, name):
    def rule(x, type=2, shape=None, axes=None, norm=None, overwrite_x=False):
        if shape is not None and axes is None:
            shape = tuple(np.atleast_1d(shape))
            if len(shape) != np.ndim(x):
                raise ValueError("when given, axes and shape arguments have to be of the "
                                 "same length")
        t = INVERSE_TYPE.get(type, type) if inverse else type
        return transform(kind, False, f"scipy.fftpack.{name}", x, t, shape, axes, norm)
    rule.__name__ = name
    return rule


def _complex_arguments(args, kwargs):
    """A complex active array among the arguments (the hooks route calls
    with real active values by themselves)."""
    return any(isinstance(a, ComplexActive) for a in list(args) + list(kwargs.values()))


HOOKS = {}
for _kind in ("dct", "dst"):
    for _inverse in (False, True):
        _name = f"{'i' if _inverse else ''}{_kind}"
        for _make, _called in ((_one_axis, _name), (_n_axes, f"{_name}n")):
            _rule = _make(_kind, _inverse, _called)
            _rule.routes_also = _complex_arguments
            HOOKS[("scipy.fftpack", _called)] = _rule
