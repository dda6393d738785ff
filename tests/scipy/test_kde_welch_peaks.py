"""scipy.stats.gaussian_kde with active data, weights, bandwidth or points
(the bandwidth differentiated with the data's covariance, as SciPy
computes it), scipy.signal.welch of an active signal, and
scipy.signal.find_peaks of an active signal (plain indices, guarded; the
properties that are values of the signal active). SciPy's values; every
mode against central differences (fdcheck.check_tape); replays."""
import numpy as np
import pytest
import scipy.signal as sg
import scipy.stats as st

import adsim
from adsim.errors import BranchChanged, UnsupportedOperation
from fdcheck import check_tape

DATA = np.array([0.1, 0.5, 1.3, 2.0, -0.4, 0.9])
POINTS = np.array([-0.5, 0.0, 0.7, 1.5])
DATA2 = np.array([0.1, 0.5, 1.3, 2.0, -0.4, 0.9, 0.2, -1.1, 0.4, 0.6])

KDE = {
    "data": (lambda d: st.gaussian_kde(d)(POINTS), DATA),
    "data, logpdf": (lambda d: st.gaussian_kde(d).logpdf(POINTS), DATA),
    "points, pdf": (lambda p: st.gaussian_kde(DATA).pdf(p), POINTS),
    "points, logpdf": (lambda p: st.gaussian_kde(DATA).logpdf(p), POINTS),
    "silverman": (lambda d: st.gaussian_kde(d, bw_method="silverman").evaluate(POINTS), DATA),
    "scalar bandwidth": (lambda b: st.gaussian_kde(DATA, bw_method=b[0])(POINTS),
                         np.array([0.4])),
    "weights": (lambda w: st.gaussian_kde(DATA, weights=w ** 2)(POINTS),
                np.array([1.0, 2.0, 0.5, 1.5, 1.2, 0.8])),
    "2-d data": (lambda d: st.gaussian_kde(d.reshape(2, 5))(np.array([[0.1, 0.4], [0.3, -0.2]])),
                 DATA2),
    "2-d, one point as a row": (lambda d: st.gaussian_kde(d.reshape(2, 5)).logpdf(
        np.array([0.1, 0.4])), DATA2),
    "data and points": (lambda v: st.gaussian_kde(v[:6])(v[6:]), np.r_[DATA, POINTS]),
}


@pytest.mark.parametrize("name", list(KDE))
def test_gaussian_kde(name):
    f, x = KDE[name]
    tape = check_tape(f, [x], value_rtol=1e-13, value_atol=1e-15)
    other = x * 1.05 + 0.01
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-13, atol=1e-15)


def test_kde_fit_by_leave_one_out_likelihood():
    # a bandwidth chosen by maximising the leave-one-out log-likelihood
    def loo(log_bw):
        bw = np.exp(log_bw[0])
        total = 0.0
        for i in range(DATA.size):
            rest = np.delete(DATA, i)
            total = total + st.gaussian_kde(rest, bw_method=bw).logpdf(DATA[i:i + 1])[0]
        return total
    check_tape(loo, [np.array([-0.7])], value_rtol=1e-13)


SIGNAL = np.sin(np.linspace(0.0, 20.0, 64)) + 0.3 * np.cos(np.arange(64) * 1.3)

WELCH = {
    "defaults": lambda s: sg.welch(np.concatenate([s, s[::-1], s, s[::-1], s]))[1],
    "nperseg": lambda s: sg.welch(s, nperseg=16)[1],
    "spectrum, fs, overlap": lambda s: sg.welch(s, fs=10.0, nperseg=16, noverlap=4,
                                                scaling="spectrum")[1],
    "median of 3 segments": lambda s: sg.welch(s[:48], nperseg=16, noverlap=0,
                                               average="median")[1],
    "linear detrend, odd nfft": lambda s: sg.welch(s, nperseg=15, nfft=17, detrend="linear")[1],
    "two-sided, tukey, no detrend": lambda s: sg.welch(s, window=("tukey", 0.3), nperseg=20,
                                                       detrend=False, return_onesided=False)[1],
    "2-d, axis 0": lambda s: sg.welch(s.reshape(32, 2), nperseg=8, axis=0)[1],
    "window array": lambda s: sg.welch(s, window=np.hamming(12))[1],
    "periodogram": lambda s: sg.periodogram(s, fs=4.0)[1],
    "periodogram, hann, nfft shorter": lambda s: sg.periodogram(s, window="hann", nfft=50,
                                                                scaling="spectrum")[1],
    "periodogram, nfft longer, 2-d": lambda s: sg.periodogram(s.reshape(2, 32), nfft=40,
                                                              detrend="linear")[1],
}


NOISE = np.random.default_rng(0).standard_normal(64)   # its medians are far from ties


@pytest.mark.parametrize("name", list(WELCH))
def test_welch(name):
    f = WELCH[name]
    x = NOISE if "median" in name else SIGNAL
    tape = check_tape(f, [x], value_rtol=1e-12, value_atol=1e-14)
    other = x[::-1] * 0.8 if "median" not in name else x * 0.8
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-12, atol=1e-14)


def test_welch_refuses_an_active_sampling_rate():
    with pytest.raises(UnsupportedOperation, match=r"welch\(\.\.\., fs=<active>\)"):
        adsim.record(lambda v: sg.welch(SIGNAL * v[0], fs=v[0], nperseg=16)[1],
                     np.array([2.0]))


# straight lines between knots of distinct levels, with a little noise: peaks
# and valleys at knots, neighbouring samples 0.03 or more apart, and no sample
# within 0.012 of a width's height, so that central differences cross no
# comparison find_peaks makes
PEAKY = np.interp(np.arange(60.0), np.arange(0.0, 61.0, 5.0),
                  4.0 * np.array([0.0, 1.03, 0.21, 0.83, 0.12, 1.41, 0.33, 0.94, 0.27, 1.19,
                                  0.07, 0.63, 0.02])) \
    + np.random.default_rng(1).uniform(-0.03, 0.03, 60)


def _props(found, drop=("left_bases", "right_bases")):
    return np.concatenate([np.atleast_1d(v) for k, v in found[1].items() if k not in drop])


PEAKS = {
    "indexing the signal": lambda s: s[sg.find_peaks(s)[0]],
    "heights and thresholds": lambda s: _props(sg.find_peaks(s, height=0.1, threshold=0.0)),
    "prominences and widths": lambda s: _props(sg.find_peaks(s, prominence=0.1, width=1.0)),
    "widths at 0.8": lambda s: _props(sg.find_peaks(s, width=1.0, rel_height=0.8, wlen=15,
                                                    distance=12)),
}


@pytest.mark.parametrize("name", list(PEAKS))
def test_find_peaks(name):
    f = PEAKS[name]
    # rtol: the widths' second derivatives (1 / slope^3) make differences of the
    # gradient accurate to a few 1e-7 only
    tape = check_tape(f, [PEAKY], value_rtol=0.0, value_atol=1e-15, rtol=1e-6)
    other = PEAKY * 1.01 + 0.02                            # the same peaks
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-14, atol=1e-15)


def test_find_peaks_returns_plain_indices_and_guards_them():
    seen = []

    def f(s):
        peaks, _ = sg.find_peaks(s)
        seen.append(peaks)
        return s[peaks]
    tape = adsim.record(f, PEAKY)
    assert seen[0].dtype.kind == "i" and list(seen[0]) == [5, 15, 25, 35, 45, 55]
    moved = PEAKY.copy()
    moved[52] = 8.0                          # a new peak
    with pytest.raises(BranchChanged):
        tape.forward(moved)
    np.testing.assert_allclose(adsim.grad(lambda s: np.sum(f(s) ** 2))(moved),
                               2 * moved * np.isin(np.arange(60), [5, 15, 25, 35, 45, 52, 55]))


def test_find_peaks_with_a_threshold_computed_from_the_signal():
    def f(s):
        peaks, props = sg.find_peaks(s, height=0.6 * np.max(s), prominence=0.2 * np.ptp(s))
        return props["peak_heights"] * props["prominences"]
    tape = check_tape(f, [PEAKY], value_rtol=0.0, value_atol=1e-15, rtol=1e-6)
    lower = PEAKY.copy()
    lower[np.argmax(PEAKY)] = 0.5 * PEAKY.max()        # the threshold falls: more peaks
    with pytest.raises(BranchChanged):
        tape.forward(lower)


def test_find_peaks_with_an_active_threshold_on_a_plain_signal_is_guarded():
    def f(h):
        peaks, _ = sg.find_peaks(PEAKY, height=h)
        return h * peaks.size
    tape = adsim.record(f, np.array(3.0))
    np.testing.assert_array_equal(tape.forward(np.array(3.1)), f(3.1))
    with pytest.raises(BranchChanged):
        tape.forward(np.array(0.5))


def test_find_peaks_refuses_an_active_distance():
    with pytest.raises(UnsupportedOperation, match=r"find_peaks\(\.\.\., distance=<active>\)"):
        adsim.record(lambda v: sg.find_peaks(PEAKY, distance=v)[0], np.array(3.0))


def test_kde_bandwidth_set_again_and_explicit_namespace():
    def f(d):
        kde = st.gaussian_kde(d)
        kde.set_bandwidth(bw_method="silverman")
        return kde(POINTS)
    check_tape(f, [DATA], value_rtol=1e-13, value_atol=1e-15)
    from adsim.scipy.stats import gaussian_kde
    with adsim.interposition(False):
        g = adsim.grad(lambda d: np.sum(gaussian_kde(d).logpdf(POINTS)))(DATA)
    np.testing.assert_allclose(g, adsim.grad(lambda d: np.sum(st.gaussian_kde(d).logpdf(
        POINTS)))(DATA), rtol=1e-14)


@pytest.mark.parametrize("f, x", [
    (lambda d: st.gaussian_kde(d).resample(4, seed=np.random.default_rng(1)).ravel(), DATA),
    (lambda d: np.atleast_1d(st.gaussian_kde(d).integrate_box_1d(0.0, 1.0)), DATA),
    (lambda d: np.atleast_1d(st.gaussian_kde(d.reshape(2, 5)).integrate_gaussian(
        np.zeros(2), np.eye(2))), DATA2),
], ids=["resample (pathwise)", "integrate_box_1d", "integrate_gaussian"])
def test_kde_methods_run_as_scipy_writes_them(f, x):
    check_tape(f, [x], value_rtol=1e-13, value_atol=1e-15)


@pytest.mark.parametrize("f", [
    lambda s: sg.peak_prominences(s, sg.find_peaks(s)[0])[0],
    lambda s: sg.peak_prominences(s, sg.find_peaks(s)[0], wlen=11)[0],
    lambda s: np.concatenate(sg.peak_widths(s, sg.find_peaks(s)[0], rel_height=0.7)),
    lambda s: np.concatenate(sg.peak_widths(s, np.array([5, 25, 45]), prominence_data=(
        s[[5, 25, 45]] * 0.5, np.array([0, 20, 40]), np.array([10, 30, 50])))),
], ids=["peak_prominences", "peak_prominences, wlen", "peak_widths", "peak_widths, given data"])
def test_peak_prominences_and_widths(f):
    tape = check_tape(f, [PEAKY], value_rtol=0.0, value_atol=1e-15, rtol=1e-6)
    other = PEAKY * 1.01 + 0.02
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-14, atol=1e-15)
    moved = PEAKY.copy()
    moved[np.argmin(PEAKY[:12])] = -5.0          # a deeper base
    try:
        got = tape.forward(moved)
    except BranchChanged:
        return
    np.testing.assert_allclose(got, f(moved), rtol=1e-14, atol=1e-15)
