"""``scipy.signal.welch`` and ``periodogram`` of an active signal: Welch's
power spectral density, linear in the signal up to a square, written with
recorded operations as SciPy defines it (a periodogram is SciPy's welch of
one segment, the whole signal or its first ``nfft`` samples, ``'boxcar'``
window by default).

For segments s_k of ``nperseg`` samples, ``nperseg - noverlap`` apart
(as many as fit), each detrended (``'constant'``: minus its mean;
``'linear'``: minus its least-squares line, a projection; a callable:
applied to the active segments; ``False``: none), windowed and
transformed (``rfft``, or ``fft`` when two-sided, with ``nfft`` points):
P_k(f) = scale |FFT(w s_k)(f)|^2, with ``scale = 1 / (fs sum w^2)``
(density) or ``1 / (sum w)^2`` (spectrum), one-sided values doubled except
at 0 and at Nyquist for even ``nfft``, then averaged over the segments
(``'mean'``; ``'median'`` divided by SciPy's bias). SciPy's own call on the
plain signal gives the frequencies, its checks and warnings, and the
window (``_triage_segments``, as SciPy chooses it); the values agree with
SciPy's to rounding. Settings stay plain (an active ``fs`` or window is
refused by name).
"""
import warnings

import numpy as np
import scipy.signal
from scipy.signal import _spectral_py

from .._active import Active
from .._np.integers import current, plain_if_constant
from ..errors import UnsupportedOperation
from .arrays import array


def _plain(name, v):
    v = plain_if_constant(v)
    if isinstance(v, Active):
        raise UnsupportedOperation(f"adsim: scipy.signal.welch(..., {name}=<active>) is not "
                                   f"supported: welch is differentiated in its signal x only; "
                                   f"pass adsim.value({name})")
    return v


def _line_projection(n):
    """The projection onto straight lines a + b t over n samples (symmetric):
    SciPy's linear detrend subtracts the least-squares line."""
    A = np.stack([np.arange(n, dtype=float) / n, np.ones(n)], axis=1)
    return A @ np.linalg.pinv(A)


def welch(x, fs=1.0, window="hann_periodic", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    x = array(x, "scipy.signal.welch")
    fs, window, nperseg, noverlap, nfft = (_plain(n, v) for n, v in (
        ("fs", fs), ("window", window), ("nperseg", nperseg), ("noverlap", noverlap),
        ("nfft", nfft)))
    plain_x = current(x) if isinstance(x, Active) else x
    freqs, plain = scipy.signal.welch(plain_x, fs, window, nperseg, noverlap, nfft, detrend,
                                      return_onesided, scaling, axis, average)
    if not isinstance(x, Active) or np.size(plain_x) == 0:
        return freqs, plain
    xs = np.moveaxis(x, axis, -1)
    n = np.shape(xs)[-1]
    with warnings.catch_warnings():        # SciPy's own call above warned already
        warnings.simplefilter("ignore")
        win, nperseg = _spectral_py._triage_segments(window, nperseg, input_length=n)
    nfft = nperseg if nfft is None else int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    hop = nperseg - noverlap
    segments = np.lib.stride_tricks.sliding_window_view(xs, nperseg, axis=-1)[..., ::hop, :]
    if detrend == "constant":
        segments = segments - np.mean(segments, axis=-1, keepdims=True)
    elif detrend == "linear":
        segments = segments - segments @ _line_projection(nperseg)
    elif callable(detrend):
        segments = detrend(segments)
    spectrum = (np.fft.rfft if return_onesided else np.fft.fft)(win * segments, n=nfft)
    power = np.real(spectrum) ** 2 + np.imag(spectrum) ** 2
    win_sum = np.sum(win * win) * fs if scaling == "density" else np.sum(win) ** 2
    doubled = np.ones(np.shape(power)[-1])
    if return_onesided:
        doubled[1:-1 if nfft % 2 == 0 else None] = 2.0
    power = power * (doubled / win_sum)
    k = np.shape(power)[-2]
    if k > 1 and average == "median":
        power = np.median(power, axis=-2) / _spectral_py._median_bias(k)
    elif k > 1:
        power = np.mean(power, axis=-2)
    else:
        power = power[..., 0, :]
    out = np.moveaxis(power, -1, axis)
    assert np.shape(out) == np.shape(plain), "adsim: welch's shape differs from SciPy's"
    return freqs, out


def periodogram(x, fs=1.0, window="boxcar", nfft=None, detrend="constant",
                return_onesided=True, scaling="density", axis=-1):
    """SciPy's periodogram: its choice of one segment, then its welch."""
    x = array(x, "scipy.signal.periodogram")
    if np.size(x) == 0:
        return np.empty(np.shape(x)), np.empty(np.shape(x))
    window = "boxcar" if window is None else window
    n = np.shape(x)[axis]
    nperseg = n
    if nfft is not None and nfft < n:
        x = np.take(x, np.arange(nfft), axis=axis)
        nperseg, nfft = nfft, None
    elif nfft is not None and nfft == n:
        nperseg = nfft
    if hasattr(window, "size") and window.size != nperseg:
        raise ValueError("the size of the window must be the same size of the input on the "
                         "specified axis")
    return welch(x, fs=fs, window=window, nperseg=nperseg, noverlap=0, nfft=nfft,
                 detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis)
