"""``scipy.fftpack``'s transforms of active arrays: its real-to-real
transforms and its complex DFTs.

fftpack's ``dct``, ``dst`` and their n-D forms are scipy.fft's (the same
kernels); its inverses differ in normalisation: ``fftpack.idct(x, type=t,
norm=None)`` is the *unnormalised* forward transform of the inverse type
(scipy.fft's ``idct`` divides by 2N), and with ``norm="ortho"`` the two
agree. So each call runs adsim's op of the forward transform of the type
fftpack computes (fft_r2r.py); ``shape`` is scipy.fft's ``s``, with
fftpack's check that ``shape`` without ``axes`` names every axis.
fftpack's ``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn`` and ``ifftn``
compute numpy.fft's transforms of the same names (``shape`` as ``s``) and
run them, with adsim's rules. ``overwrite_x`` has no effect on the values
and is dropped. ``rfft`` and ``irfft`` use fftpack's packed real format
[y0, Re y1, Im y1, ..., Re y(n/2)] (the last Im y((n-1)/2) for odd n) of
the half spectrum y of numpy.fft's ``rfft``: they are numpy.fft's
``rfft``/``irfft`` with the packing written in recorded operations
(slices, stacking, a complex sum), so every mode differentiates them and
tape files keep them.
"""
import numpy as np

from .._np.complex import ComplexActive
from ..errors import InvalidInput
from .fft_r2r import INVERSE_TYPE, one_axis, transform


def _one_axis(kind, inverse, name):
    def rule(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False):
        t = INVERSE_TYPE.get(type, type) if inverse else type
        return one_axis(kind, False, f"scipy.fftpack.{name}", x, t, n, axis, norm)
    rule.__name__ = name
    return rule


def _good_shape(x, shape, axes):
    """fftpack's ``shape``: without ``axes``, one length per axis."""
    if shape is not None and axes is None:
        shape = tuple(np.atleast_1d(shape))
        if len(shape) != x.ndim:
            raise ValueError("when given, axes and shape arguments have to be of the same "
                             "length")
    return shape


def _n_axes(kind, inverse, name):
    def rule(x, type=2, shape=None, axes=None, norm=None, overwrite_x=False):
        shape = _good_shape(x, shape, axes)
        t = INVERSE_TYPE.get(type, type) if inverse else type
        return transform(kind, False, f"scipy.fftpack.{name}", x, t, shape, axes, norm)
    rule.__name__ = name
    return rule


def _dft_one_axis(name):
    def rule(x, n=None, axis=-1, overwrite_x=False):
        return getattr(np.fft, name)(x, n, axis)
    rule.__name__ = name
    return rule


def _dft_axes(name, default):
    def rule(x, shape=None, axes=default, overwrite_x=False):
        shape = _good_shape(x, shape, axes)
        if shape is not None and axes is None:
            axes = tuple(range(x.ndim))
        return getattr(np.fft, name)(x, s=shape, axes=axes)
    rule.__name__ = name
    return rule


def _real_only(x, name):
    if isinstance(x, ComplexActive) or np.iscomplexobj(x):
        raise InvalidInput(f"adsim: scipy.fftpack.{name} takes a real sequence (as SciPy's "
                           f"does) and was given a complex array; use scipy.fft.fft for "
                           f"complex data")


def rfft(x, n=None, axis=-1, overwrite_x=False):
    """fftpack's packed real DFT along ``axis``: the half spectrum of
    numpy.fft.rfft as [Re y0, Re y1, Im y1, Re y2, ...], n entries."""
    _real_only(x, "rfft")
    n = np.shape(x)[axis] if n is None else int(n)
    y = np.moveaxis(np.fft.rfft(x, n, axis), axis, -1)
    pairs = np.stack([np.real(y[..., 1:]), np.imag(y[..., 1:])], axis=-1)
    packed = np.concatenate([np.real(y[..., :1]), np.reshape(pairs, pairs.shape[:-2] + (-1,))],
                            axis=-1)
    return np.moveaxis(packed[..., :n], -1, axis)


def irfft(x, n=None, axis=-1, overwrite_x=False):
    """The inverse of :func:`rfft`: the packed half spectrum of length n
    (``x`` truncated or zero-padded to it) unpacked, then numpy.fft.irfft."""
    _real_only(x, "irfft")
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1] if n is None else int(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    if n > x.shape[-1]:         # zero-padded, or truncated, to n
        x = np.concatenate([x, np.zeros_like(x, shape=x.shape[:-1] + (n - x.shape[-1],))],
                           axis=-1)
    x = x[..., :n]
    m = n // 2 + 1
    zero = np.zeros_like(x[..., :1])
    re = np.concatenate([x[..., :1], x[..., 1::2]], axis=-1)
    im = np.concatenate([zero, x[..., 2::2]] + [zero] * (m - 1 - (n - 1) // 2), axis=-1)
    return np.moveaxis(np.fft.irfft(re + 1j * im, n, axis=-1), -1, axis)


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
for _rule in (_dft_one_axis("fft"), _dft_one_axis("ifft"), _dft_axes("fft2", (-2, -1)),
              _dft_axes("ifft2", (-2, -1)), _dft_axes("fftn", None), _dft_axes("ifftn", None),
              rfft, irfft):
    _rule.routes_also = _complex_arguments
    HOOKS[("scipy.fftpack", _rule.__name__)] = _rule
