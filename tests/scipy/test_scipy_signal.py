"""scipy.signal's convolutions and lfilter called unchanged on active arrays:
every sweep against SciPy's values and central differences for each mode,
both argument orders (also the smaller one first), 1-d and 2-d, each
method; lfilter in b, a, x and zi along any axis, sosfilt's cascade of
them, lfilter_zi, filtfilt, sosfilt_zi and sosfiltfilt in the coefficients;
clear errors for options
that are not recorded."""
import numpy as np
import pytest
import scipy.signal as sig

import adsim as ad
from fdcheck import assert_close, check_tape

rng = np.random.default_rng(11)
LONG, SHORT = rng.standard_normal(6), rng.standard_normal(3)
MEDIUM = rng.standard_normal(16)
EVEN = rng.standard_normal(4)
WIDE, SMALL = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))

CONVOLUTIONS = {
    "convolve": lambda a, b, mode: sig.convolve(a, b, mode),
    "convolve direct": lambda a, b, mode: sig.convolve(a, b, mode, method="direct"),
    "convolve fft": lambda a, b, mode: sig.convolve(a, b, mode=mode, method="fft"),
    "correlate": lambda a, b, mode: sig.correlate(a, b, mode),
    "fftconvolve": lambda a, b, mode: sig.fftconvolve(a, b, mode),
    "oaconvolve": lambda a, b, mode: sig.oaconvolve(a, b, mode),
}
OPERANDS = {"1-d": [LONG, SHORT], "1-d even kernel": [LONG, EVEN], "1-d short first": [SHORT, LONG],
            "2-d": [WIDE, SMALL], "2-d small first": [SMALL, WIDE]}


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("operands", sorted(OPERANDS))
@pytest.mark.parametrize("name", sorted(CONVOLUTIONS))
def test_convolutions_every_sweep(name, operands, mode):
    f = CONVOLUTIONS[name]
    check_tape(lambda a, b: f(a, b, mode), OPERANDS[operands],
               rtol=1e-6, value_rtol=1e-12, value_atol=1e-13)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("f", [sig.convolve2d, sig.correlate2d])
@pytest.mark.parametrize("operands", [[WIDE, SMALL], [SMALL, WIDE], [WIDE, WIDE[:, ::-1]]])
def test_two_dimensional_every_sweep(f, operands, mode):
    check_tape(lambda a, b: f(a, b, mode), operands, rtol=1e-6, value_rtol=1e-12,
               value_atol=1e-13)


def test_one_argument_active_and_a_list_kernel():
    """A plain kernel given as a list, an active signal; the adjoint is the
    correlation with the kernel."""
    w = rng.standard_normal(LONG.size + 2)
    g = ad.vjp(lambda x: sig.convolve(x, [1.0, -2.0, 0.5]), LONG, w)[1]
    assert_close(g, np.correlate(w, [1.0, -2.0, 0.5], "valid"), rtol=1e-13, what="adjoint")


B, A = np.array([0.5, 0.3, -0.2]), np.array([1.2, -0.4, 0.1])
SOS = np.array([[0.2, 0.4, 0.2, 1.0, -0.4, 0.2], [1.0, -0.5, 0.1, 1.0, 0.3, 0.1]])
FREE = np.delete(SOS, 3, axis=1)        # sosfilt requires sos[:, 3] == 1


def _sections(free):
    return np.concatenate([free[:, :3], np.ones((len(free), 1)), free[:, 3:]], axis=1)

LFILTER = {
    "b a x": (lambda b, a, x: sig.lfilter(b, a, x), [B, A, LONG]),
    "axis 0": (lambda b, a, x: sig.lfilter(b, a, x, axis=0), [B, A[:2], WIDE]),
    "2-d last axis": (lambda x: sig.lfilter([1.0, 2.0], [1.0], x), [WIDE]),
    "filter longer than x": (lambda a: sig.lfilter(B, a, SHORT),
                             [np.array([2.0, 0.3, 0.2, -0.1, 0.05])]),
    "zi: y and zf in b a x zi": (lambda b, a, x, zi: np.concatenate(sig.lfilter(b, a, x, zi=zi)),
                                 [B, A, LONG, np.array([0.3, -0.6])]),
    "zi: the steady-state idiom": (
        lambda x: sig.lfilter(B, A, x, zi=sig.lfilter_zi(B, A) * x[0])[0], [LONG]),
    "zi along axis 0": (lambda x, zi: np.concatenate(sig.lfilter(B[:2], A, x, axis=0, zi=zi)),
                        [WIDE, rng.standard_normal((2,) + WIDE.shape[1:])]),
    "sosfilt: active sections": (lambda c, x: sig.sosfilt(_sections(c), x), [FREE, LONG]),
    "sosfilt: zi, axis 0": (
        lambda c, x, zi: np.concatenate([np.ravel(r) for r in
                                         sig.sosfilt(_sections(c), x, 0, zi)]),
        [FREE, WIDE, rng.standard_normal((2, 2) + WIDE.shape[1:])]),
    "sosfilt: the steady-state idiom": (
        lambda x: sig.sosfilt(SOS, x, zi=sig.sosfilt_zi(SOS) * x[0])[0], [LONG]),
    "lfilter_zi in b and a": (lambda b, a: sig.lfilter_zi(b, a), [B, A]),
    "lfilter_zi: a leading zero of a": (
        lambda b, a: sig.lfilter_zi(b, np.concatenate([np.zeros(1), a])), [B[:2], A]),
    "filtfilt in b, a and x": (lambda b, a, x: sig.filtfilt(b, a, x), [B, A, MEDIUM]),
    "filtfilt: even, axis 0": (lambda b, x: sig.filtfilt(b, A[:2], x, axis=0, padtype="even"),
                               [B, np.stack([MEDIUM, MEDIUM[::-1]], axis=1)]),
    "filtfilt: constant, padlen": (
        lambda a: sig.filtfilt(B, a, MEDIUM, padtype="constant", padlen=4), [A]),
    "filtfilt: no padding": (lambda a: sig.filtfilt(B, a, MEDIUM, padtype=None), [A]),
    "sosfilt_zi": (lambda c: sig.sosfilt_zi(_sections(c)), [FREE]),
    "sosfiltfilt: active sections": (lambda c, x: sig.sosfiltfilt(_sections(c), x),
                                     [FREE, MEDIUM]),
    "sosfiltfilt: even, axis 0, a section of order 1": (
        lambda c, x: sig.sosfiltfilt(_sections(c * [1.0, 1.0, 0.0, 1.0, 0.0]), x, axis=0,
                                     padtype="even"),
        [FREE, np.stack([MEDIUM, MEDIUM[::-1]], axis=1)]),
    "zi: x shorter than the filter": (
        lambda a, x, zi: np.concatenate(sig.lfilter(B, a, x, zi=zi)),
        [np.array([2.0, 0.3, 0.2, -0.1, 0.05]), SHORT[:2], rng.standard_normal(4)]),
}


@pytest.mark.parametrize("name", sorted(LFILTER))
def test_lfilter_every_sweep(name):
    f, xs = LFILTER[name]
    check_tape(f, xs, rtol=1e-6, value_rtol=1e-12, value_atol=1e-14)


def test_lfilter_adjoint_in_x_is_the_filter_run_backwards():
    w = rng.standard_normal(LONG.size)
    g = ad.vjp(lambda x: sig.lfilter(B, A, x), LONG, w)[1]
    assert_close(g, sig.lfilter(B, A, w[::-1])[::-1], rtol=1e-13, what="adjoint")


def test_filtfilt_with_active_coefficients_refuses_gust_and_short_signals():
    with pytest.raises(ad.UnsupportedOperation, match="method='gust'"):
        ad.grad(lambda a: np.sum(sig.filtfilt(B, a, MEDIUM, method="gust")))(A)
    with pytest.raises(ValueError, match="greater than padlen"):
        ad.grad(lambda a: np.sum(sig.filtfilt(B, a, MEDIUM[:9])))(A)


def test_leading_zeros_and_unit_sections_are_guarded():
    """lfilter_zi strips a's leading zeros and sosfilt needs sos[:, 3] == 1:
    a replay where either changes raises instead of computing another filter."""
    tape = ad.record(lambda a: sig.lfilter_zi(B[:2], a), np.array([0.0, 1.2, -0.4]))
    with pytest.raises(ad.BranchChanged):
        tape.forward(np.array([0.1, 1.2, -0.4]))
    tape = ad.record(lambda s: sig.sosfilt(s, LONG), SOS)
    with pytest.raises(ad.BranchChanged):
        tape.forward(SOS + np.array([0.0, 0.0, 0.0, 0.1, 0.0, 0.0]))


@pytest.mark.parametrize("f, error, words", [
    (lambda x: sig.fftconvolve(x, x, axes=0), ad.UnsupportedOperation, "axes=0"),
    (lambda x: sig.convolve2d(x, x, boundary="wrap"), ad.UnsupportedOperation, "'wrap'"),
    (lambda x: sig.correlate2d(x, x, fillvalue=1.0), ad.UnsupportedOperation, "fillvalue=1.0"),
    (lambda x: sig.lfilter(B, A, x[0], zi=np.zeros(3)), ValueError, "Unexpected shape for zi"),
    (lambda x: sig.convolve(x, x[0], "valid"), ValueError, "same dimensionality"),
    (lambda x: sig.convolve(x, x[:1, :5].T, "valid"), ValueError, "at least as large"),
])
def test_what_is_not_recorded_is_refused_by_name(f, error, words):
    with pytest.raises(error, match=words):
        ad.grad(lambda x: np.sum(f(x)))(WIDE)
