"""``scipy.signal`` convolutions on active arrays, called unchanged (see
hooks.py): convolve, correlate, fftconvolve, oaconvolve, convolve2d,
correlate2d (modes full, same, valid), and lfilter; savgol_filter,
filtfilt, sosfilt, sosfiltfilt, detrend, decimate and resample in the
signal (and resample_poly and upfirdn), as the linear maps they are (adsim/_scipy/linear_maps.py),
and sosfilt with active sections or initial conditions as its lfilter cascade,
lfilter_zi, filtfilt, sosfilt_zi and sosfiltfilt with active coefficients
written with lfilter and sosfilt;
welch and periodogram (welch.py); find_peaks, peak_prominences and
peak_widths (peaks.py).

Convolution is bilinear: one primitive computes the full N-d convolution
y = a * b (SciPy's values, by the method SciPy would choose), and its rules
are convolutions again: dy = da * b + a * db, abar = valid(w * flip(b)),
bbar = valid(w * flip(a)) (a correlation with the output adjoint), so
second derivatives are exact. Modes ``same`` and ``valid`` crop the full
result as SciPy does, and correlate(a, b) = a * flip(b) for real arrays.

lfilter solves sum_k a_k y[n-k] = sum_k b_k x[n-k] along ``axis`` (with
initial conditions zi, by linearity: _with_state): in x it
is linear with the transposed filter run backwards as its adjoint
(x̄ = flip(lfilter(b, a, flip(ȳ)))); in b and a, dy = lfilter(db, a, x) -
lfilter(da, a, y), whose adjoints are correlations of g = flip(lfilter(1,
a, flip(ȳ))) with x and y.
"""
import numpy as np
import scipy.signal

from ..errors import UnsupportedOperation
from .._np.core import active_leaves
from ..primitives import primitive
from .arrays import array
from . import peaks, welch
from .linear_maps import linear_in


def _flip(a):
    return a[(slice(None, None, -1),) * np.ndim(a)]


def _valid_crop(full, short):
    """The entries of a full convolution where one operand covers the other
    (``short`` is the smaller shape in every axis)."""
    index = tuple(slice(s - 1, d - s + 1) for d, s in zip(np.shape(full), short))
    return full[index]


def _full_rules(convolve_full):
    def jvp(args, out, tangents):
        a, b = args
        da, db = tangents
        total = np.zeros(np.shape(out))
        if da is not None:
            total = total + convolve_full(da, b)
        if db is not None:
            total = total + convolve_full(a, db)
        return total

    def vjp(args, out, w):
        a, b = args
        return (_valid_crop(convolve_full(w, _flip(b)), np.shape(b)),
                _valid_crop(convolve_full(w, _flip(a)), np.shape(a)))
    return jvp, vjp


def _make_full(method):
    """The full convolution as SciPy's ``method`` ('direct' or 'fft') computes it."""
    def value(a, b):
        return scipy.signal.convolve(a, b, mode="full", method=method)

    def convolve_full(a, b):
        return prim(a, b)
    jvp, vjp = _full_rules(convolve_full)
    prim = primitive(value, jvp=jvp, vjp=vjp, name=f"scipy.signal.convolve.{method}")
    return prim


_FULL = {method: _make_full(method) for method in ("direct", "fft")}


def _operands(name, in1, in2):
    in1, in2 = array(in1, name), array(in2, name)
    if np.ndim(in1) != np.ndim(in2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if np.size(in1) == 0 or np.size(in2) == 0:
        raise UnsupportedOperation(f"adsim: {name} of an empty array is not recorded")
    return in1, in2


def _value(x):
    from .._np.integers import current
    from .._active import Active
    return current(x) if isinstance(x, Active) else x


def _crop(name, full, s1, s2, mode, round_up=False):
    """``full`` cropped as ``mode`` asks: ``same`` keeps s1 entries centred,
    the extra one left of centre (``round_up``: right of it, as correlate2d,
    which centres the convolution with the flipped kernel)."""
    if mode == "full":
        return full
    if mode == "same":
        start = [(d - s + round_up) // 2 for d, s in zip(np.shape(full), s1)]
        return full[tuple(slice(b, b + s) for b, s in zip(start, s1))]
    if mode == "valid":
        if not (all(m >= n for m, n in zip(s1, s2)) or all(n >= m for m, n in zip(s1, s2))):
            raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                             "every dimension")
        return _valid_crop(full, tuple(min(m, n) for m, n in zip(s1, s2)))
    raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")


def _convolve(name, in1, in2, mode, method, flip_second=False, round_up=False):
    in1, in2 = _operands(name, in1, in2)
    s1, s2 = np.shape(in1), np.shape(in2)
    if mode not in ("full", "same", "valid"):
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")
    if np.ndim(in1) == 0:
        return in1 * in2
    kernel = _flip(in2) if flip_second else in2
    if method == "auto":
        method = scipy.signal.choose_conv_method(_value(in1), _value(kernel), mode=mode)
    if method not in _FULL:
        raise ValueError("Acceptable method flags are 'auto', 'direct', or 'fft'.")
    return _crop(name, _FULL[method](in1, kernel), s1, s2, mode, round_up)


def convolve(in1, in2, mode="full", method="auto"):
    return _convolve("scipy.signal.convolve", in1, in2, mode, method)


def correlate(in1, in2, mode="full", method="auto"):
    return _convolve("scipy.signal.correlate", in1, in2, mode, method, flip_second=True)


def _no_axes(name, axes):
    if axes is not None:
        raise UnsupportedOperation(f"adsim: scipy.signal.{name}(..., axes={axes!r}) is not "
                                   f"recorded; convolve over every axis (axes=None)")


def fftconvolve(in1, in2, mode="full", axes=None):
    _no_axes("fftconvolve", axes)
    return _convolve("scipy.signal.fftconvolve", in1, in2, mode, "fft")


def oaconvolve(in1, in2, mode="full", axes=None):
    _no_axes("oaconvolve", axes)
    return _convolve("scipy.signal.oaconvolve", in1, in2, mode, "fft")


def _two_d(name, in1, in2, boundary, fillvalue):
    in1, in2 = array(in1, name), array(in2, name)
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name.split('.')[-1]} inputs must both be 2-D arrays")
    if boundary not in ("fill", "pad") or np.any(np.asarray(_value(fillvalue)) != 0):
        raise UnsupportedOperation(f"adsim: {name} with boundary={boundary!r}, "
                                   f"fillvalue={fillvalue!r} is not recorded; the zero fill "
                                   f"(boundary='fill', fillvalue=0) is")
    return in1, in2


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    in1, in2 = _two_d("scipy.signal.convolve2d", in1, in2, boundary, fillvalue)
    return _convolve("scipy.signal.convolve2d", in1, in2, mode, "direct")


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    in1, in2 = _two_d("scipy.signal.correlate2d", in1, in2, boundary, fillvalue)
    return _convolve("scipy.signal.correlate2d", in1, in2, mode, "direct", flip_second=True,
                     round_up=True)


# ---- lfilter ------------------------------------------------------------------

def _lagged_sums(g, z, taps):
    """sum over everything of g[..., n] z[..., n - k], k = 0..taps-1."""
    n = np.shape(z)[-1]
    return np.stack([np.sum(g[..., k:] * z[..., :n - k]) if k < n else 0.0 * np.sum(g)
                     for k in range(taps)])


def _lfilter_jvp(args, y, tangents):
    b, a, x = args
    db, da, dx = tangents
    total = np.zeros(np.shape(y))
    if dx is not None:
        total = total + _lfilter(b, a, dx)
    if db is not None:
        total = total + _lfilter(db, a, x)
    if da is not None:
        total = total - _lfilter(da, a, y)
    return total


def _lfilter_vjp(args, y, w):
    b, a, x = args
    g = _lfilter(np.ones(1), a, w[..., ::-1])[..., ::-1]       # the all-pole part, transposed
    xbar = _lfilter(b, a, w[..., ::-1])[..., ::-1]             # H^T = J H J (Toeplitz)
    return (_lagged_sums(g, x, np.shape(b)[0]), -_lagged_sums(g, y, np.shape(a)[0]), xbar)


_lfilter = primitive(lambda b, a, x: scipy.signal.lfilter(b, a, x, axis=-1),
                     jvp=_lfilter_jvp, vjp=_lfilter_vjp, name="scipy.signal.lfilter")


def lfilter(b, a, x, axis=-1, zi=None):
    """The IIR filter along ``axis``; with initial conditions ``zi``,
    (y, zf) as SciPy returns them (see _with_state)."""
    name = "scipy.signal.lfilter"
    b, a, x = array(b, name), array(a, name), array(x, name)
    if np.ndim(b) != 1 or np.ndim(a) != 1 or np.ndim(x) == 0:
        raise ValueError(f"adsim: {name} takes 1-d b and a and an array x; got shapes "
                         f"{np.shape(b)}, {np.shape(a)}, {np.shape(x)}")
    moved = np.moveaxis(x, axis, -1)
    y = _lfilter(b, a, moved)
    if zi is None:
        return np.moveaxis(y, -1, axis)
    zi = array(zi, name)
    if np.ndim(zi) != np.ndim(x):
        raise ValueError(f"Dimensions of parameters x and zi must match, but x.ndim="
                         f"{np.ndim(x)}, zi.ndim={np.ndim(zi)}!")
    state = np.moveaxis(zi, axis, -1)
    taps = max(np.shape(a)[0], np.shape(b)[0]) - 1
    expected = np.shape(moved)[:-1] + (taps,)
    # SciPy expands zi's axes of length 1 other than the filtered one
    if any(s != e and (k == len(expected) - 1 or s != 1)
           for k, (s, e) in enumerate(zip(np.shape(state), expected))):
        raise ValueError(f"Unexpected shape for zi: expected {expected} along the last axis "
                         f"moved, found {np.shape(state)}.")
    if np.shape(state) != expected:
        state = np.broadcast_to(state, expected)
    y, zf = _with_state(b, a, moved, y, state, taps)
    return np.moveaxis(y, -1, axis), np.moveaxis(zf, -1, axis)


def _with_state(b, a, x, y, zi, taps):
    """lfilter's (y, zf) from its zero-state output ``y``, by linearity.
    SciPy's transposed direct form II with delays z_i (coefficients divided
    by a[0]): y[n] = b_0 x[n] + z_0[n-1], z_i[n] = b_{i+1} x[n] - a_{i+1}
    y[n] + z_{i+1}[n-1]. Started from zi, the output gains the filter's
    response to zi alone, which is the all-pole filter 1/a driven by zi[0],
    zi[1], ... at n = 0, 1, ... (unrolling the recursion from z = zi with
    x = 0). Unrolled to the end, zf_i = sum_m (b_{i+1+m} x[N-1-m] - a_{i+1+m}
    y[N-1-m]) over the m < min(N, taps - i), plus zi[i + N] where i + N <
    taps (a signal shorter than the filter)."""
    n = np.shape(x)[-1]
    if taps == 0:
        return y, zi
    lead = min(taps, n)
    drive = np.concatenate([zi[..., :lead], np.zeros(np.shape(x)[:-1] + (n - lead,))], axis=-1)
    y = y + _lfilter(a[:1], a, drive)          # a[:1] / a: the all-pole part of the normalised filter
    bn = np.concatenate([b, np.zeros(taps + 1 - np.shape(b)[0])]) / a[0]
    an = np.concatenate([a, np.zeros(taps + 1 - np.shape(a)[0])]) / a[0]
    delays = []
    for i in range(taps):
        z = 0.0
        for m in range(min(n, taps - i)):
            z = z + bn[i + 1 + m] * x[..., n - 1 - m] - an[i + 1 + m] * y[..., n - 1 - m]
        if i + n < taps:
            z = z + zi[..., i + n]
        delays.append(z * np.ones(np.shape(x)[:-1]))
    return y, np.stack(delays, axis=-1)


HOOKS = {("scipy.signal", f.__name__): f for f in (
    convolve, correlate, fftconvolve, oaconvolve, convolve2d, correlate2d, lfilter,
    welch.welch, welch.periodogram, peaks.find_peaks, peaks.peak_prominences,
    peaks.peak_widths)}

# linear in the signal for plain filter settings (adsim/_scipy/linear_maps.py)
HOOKS.update({("scipy.signal", name): linear_in(getattr(scipy.signal, name), data,
                                                f"scipy.signal.{name}")
              for name, data in (
                  ("savgol_filter", "x"), ("filtfilt", "x"), ("sosfilt", "x"),
                  ("sosfiltfilt", "x"), ("detrend", "data"), ("decimate", "x"),
                  ("resample", "x"), ("resample_poly", "x"), ("upfirdn", "x"))})

_linear_sosfilt = HOOKS["scipy.signal", "sosfilt"]


def sosfilt(sos, x, axis=-1, zi=None):
    """Second-order sections: the linear map in x for plain ``sos`` without
    ``zi``; else the sections' lfilter calls in turn (active coefficients,
    initial conditions zi of shape (n_sections, ..., 2), returning (y, zf)),
    which is SciPy's cascade."""
    if zi is None and not active_leaves(sos):
        return _linear_sosfilt(sos, x, axis=axis)
    name = "scipy.signal.sosfilt"
    sos = _sections(sos)
    y, final = array(x, name), []
    for k in range(np.shape(sos)[0]):
        if zi is None:
            y = lfilter(sos[k, :3], sos[k, 3:], y, axis=axis)
        else:
            y, zf = lfilter(sos[k, :3], sos[k, 3:], y, axis=axis, zi=array(zi, name)[k])
            final.append(zf)
    return y if zi is None else (y, np.stack(final))


HOOKS["scipy.signal", "sosfilt"] = sosfilt


def _sections(sos):
    """``sos`` checked as SciPy checks it: (n_sections, 6), sos[:, 3] == 1
    (a recorded comparison on active sections: a replay where it fails raises)."""
    sos = array(sos, "scipy.signal.sosfilt")
    if np.ndim(sos) != 2 or np.shape(sos)[1] != 6:
        raise ValueError("sos array must be shape (n_sections, 6)")
    if np.any(sos[:, 3] != 1.0):
        raise ValueError("sos[:, 3] should be all ones")
    return sos


def lfilter_zi(b, a):
    """The delays of lfilter's steady state for a unit step, as SciPy
    computes them: (I - C^T) zi = b[1:] - a[1:] b[0] with C the companion
    matrix of the normalised a (first column of C^T -a[1:], ones above the
    diagonal)."""
    name = "scipy.signal.lfilter_zi"
    b, a = array(b, name), array(a, name)
    if np.ndim(b) != 1 or np.ndim(a) != 1:
        raise ValueError("Numerator b and Denominator a must be 1-D.")
    while np.shape(a)[0] > 1 and a[0] == 0.0:       # (recorded comparisons: guarded)
        a = a[1:]
    if np.shape(a)[0] < 1 or a[0] == 0.0:
        raise ValueError("There must be at least one nonzero `a` coefficient.")
    b, a = b / a[0], a / a[0]
    n = max(np.shape(a)[0], np.shape(b)[0])
    a = np.concatenate([a, np.zeros(n - np.shape(a)[0])])
    b = np.concatenate([b, np.zeros(n - np.shape(b)[0])])
    first = np.zeros(n - 1)
    first[0] = 1.0
    system = np.eye(n - 1) - np.eye(n - 1, k=1) + a[1:, None] * first
    return np.linalg.solve(system, b[1:] - a[1:] * b[0])


def filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None):
    """The forward-backward filter: the linear map in x for plain b and a;
    with active b or a, SciPy's 'pad' method written with lfilter and its
    steady-state zi (_forward_backward)."""
    if not active_leaves((b, a)):
        return _linear_filtfilt(b, a, x, axis=axis, padtype=padtype, padlen=padlen,
                                method=method, irlen=irlen)
    name = "scipy.signal.filtfilt"
    if method != "pad":
        raise UnsupportedOperation(f"adsim: {name}(..., method={method!r}) with active filter "
                                   f"coefficients is not recorded; method='pad' is")
    b, a = np.atleast_1d(array(b, name)), np.atleast_1d(array(a, name))
    zi = lfilter_zi(b, a)
    return _forward_backward(lambda v, z: lfilter(b, a, v, zi=z)[0], zi, array(x, name), axis,
                             padtype, 3 * max(np.shape(a)[0], np.shape(b)[0]), padlen)


def sosfiltfilt(sos, x, axis=-1, padtype="odd", padlen=None):
    """The forward-backward filter of second-order sections: the linear map
    in x for plain ``sos``; with active sections, SciPy's method written with
    sosfilt and sosfilt_zi (_forward_backward)."""
    if not active_leaves(sos):
        return _linear_sosfiltfilt(sos, x, axis=axis, padtype=padtype, padlen=padlen)
    name = "scipy.signal.sosfiltfilt"
    sos = _sections(sos)
    # SciPy's default pad: 3 (2 n + 1 - the trailing zeros both b and a of every section have)
    trailing = min(int(np.sum(sos[:, 2] == 0.0)), int(np.sum(sos[:, 5] == 0.0)))
    x = array(x, name)
    n = np.shape(sos)[0]
    zi = np.reshape(sosfilt_zi(sos), (n,) + (1,) * (np.ndim(x) - 1) + (2,))
    return _forward_backward(lambda v, z: sosfilt(sos, v, zi=z)[0], zi, x, axis, padtype,
                             3 * (2 * n + 1 - trailing), padlen)


def sosfilt_zi(sos):
    """Each section's lfilter_zi, scaled by the gains at frequency 0 of the
    sections before it (as SciPy computes it)."""
    sos = _sections(sos)
    zi, scale = [], 1.0
    for k in range(np.shape(sos)[0]):
        b, a = sos[k, :3], sos[k, 3:]
        zi.append(scale * lfilter_zi(b, a))
        scale = scale * np.sum(b) / np.sum(a)
    return np.stack(zi)


def _forward_backward(run, zi, x, axis, padtype, default_pad, padlen):
    """SciPy's forward-backward 'pad' method along ``axis``: x extended by
    ``padtype``, ``run(v, zi * v[0])`` forward, then on the reversed output
    from its last value, reversed back and cropped (``run`` filters the last
    axis; zi broadcasts against v[..., :1] with the delays in its last axis)."""
    if padtype not in ("even", "odd", "constant", None):
        raise ValueError(f"Unknown value '{padtype}' given to padtype. "
                         "padtype must be 'even', 'odd', 'constant', or None.")
    edge = 0 if padtype is None else default_pad if padlen is None else int(padlen)
    moved = np.moveaxis(x, axis, -1)
    if np.shape(moved)[-1] <= edge:
        raise ValueError(f"The length of the input vector x must be greater than padlen, "
                         f"which is {edge}.")
    ext = _extended(moved, edge, padtype) if edge > 0 else moved
    y = run(ext, zi * ext[..., :1])
    y = run(y[..., ::-1], zi * y[..., -1:])[..., ::-1]
    if edge > 0:
        y = y[..., edge:-edge]
    return np.moveaxis(y, -1, axis)


def _extended(x, edge, padtype):
    """x with ``edge`` samples added at both ends of its last axis, as
    SciPy's odd_ext, even_ext and const_ext make them."""
    left, right = x[..., edge:0:-1], x[..., -2:-(edge + 2):-1]
    if padtype == "odd":
        left, right = 2.0 * x[..., :1] - left, 2.0 * x[..., -1:] - right
    elif padtype == "constant":
        left, right = x[..., :1] + 0.0 * left, x[..., -1:] + 0.0 * right
    return np.concatenate([left, x, right], axis=-1)


_linear_filtfilt = HOOKS["scipy.signal", "filtfilt"]
_linear_sosfiltfilt = HOOKS["scipy.signal", "sosfiltfilt"]
HOOKS.update({("scipy.signal", f.__name__): f for f in (
    filtfilt, sosfiltfilt, lfilter_zi, sosfilt_zi)})
