"""scipy.stats.entropy, zscore, skew, kurtosis and pearsonr on active arrays
(adsim/_scipy/stats_functions.py): SciPy's values for each argument form,
every sweep against central differences, SciPy's NaN where a slice is
constant, and the options refused by name."""
import warnings

import numpy as np
import pytest
import scipy.stats as st

import adsim as ad
from fdcheck import check_tape

RNG = np.random.default_rng(7)
A = RNG.uniform(0.2, 2.0, (4, 5))
W = np.array([0.2, 0.1, 0.4, 0.3])

CALLS = {
    "entropy": lambda a: st.entropy(a[:, 0]),
    "entropy base qk": lambda a: st.entropy(a[:, 0], a[:, 1], base=2.0),
    "entropy axis 1 keepdims": lambda a: st.entropy(a, axis=1, keepdims=True),
    "entropy axis None": lambda a: st.entropy(a, W[:, None] + a, axis=None),
    "entropy broadcast qk": lambda a: st.entropy(a, W[:, None]),
    "zscore": lambda a: st.zscore(a),
    "zscore axis 1 ddof": lambda a: st.zscore(a, axis=1, ddof=1),
    "zscore axis None": lambda a: st.zscore(a, axis=None),
    "skew": lambda a: st.skew(a),
    "skew unbiased axis 1": lambda a: st.skew(a, axis=1, bias=False),
    "skew axis None keepdims": lambda a: st.skew(a, axis=None, keepdims=True),
    "kurtosis": lambda a: st.kurtosis(a),
    "kurtosis pearson unbiased": lambda a: st.kurtosis(a, axis=1, fisher=False, bias=False),
    "pearsonr": lambda a: st.pearsonr(a[:, 0], a[:, 1])[0],
    "pearsonr pvalue": lambda a: st.pearsonr(a[0], a[1] ** 2).pvalue,
    "pearsonr less": lambda a: st.pearsonr(a[0], -a[2], alternative="less").pvalue,
    "pearsonr greater": lambda a: st.pearsonr(a[0], a[3], alternative="greater")[1],
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_scipys_values_and_every_sweep(name):
    f = CALLS[name]
    np.testing.assert_allclose(ad.record(f, A).forward(A), f(A.copy()), rtol=1e-12, atol=1e-14)
    check_tape(f, [A], rtol=1e-6, atol=1e-8, value_rtol=1e-12)


def test_a_loss_written_with_them():
    """Moment matching: a model's samples against target skewness and
    kurtosis, with a correlation penalty, in a gradient-based fit."""
    z = np.linspace(-2.0, 2.0, 40)

    def loss(theta):
        x = theta[0] + theta[1] * z + theta[2] * z ** 2 + theta[3] * z ** 3
        r, _ = st.pearsonr(x, z)
        return (st.skew(x) - 0.5) ** 2 + (st.kurtosis(x) - 1.0) ** 2 + (1 - r) ** 2
    theta = np.array([0.1, 1.0, 0.3, 0.05])
    g = ad.grad(loss)(theta)
    h = 1e-6
    fd = np.array([(loss(theta + h * e) - loss(theta - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_constant_slices_give_scipys_nan():
    a = np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 4.5]])
    for f in (lambda x: st.zscore(x), lambda x: st.skew(x), lambda x: st.kurtosis(x, bias=False)):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # SciPy's precision loss
            want = f(a.copy())
        got = ad.record(f, a).forward(a)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-13)
        assert np.all(np.isfinite(ad.vjp(f, a, np.where(np.isnan(want), 0.0, 1.0))[1]))


def test_pearsonr_result_reads_as_scipys():
    x, y = A[0], A[1]
    r, p = ad.record(lambda a: np.stack(st.pearsonr(a[0], a[1])), A).forward(A)
    want = st.pearsonr(x, y)
    assert r == pytest.approx(want.statistic, rel=1e-13) and p == pytest.approx(want.pvalue,
                                                                             rel=1e-11)
    with pytest.raises(ad.UnsupportedOperation, match="confidence_interval"):
        ad.grad(lambda a: st.pearsonr(a[0], a[1]).confidence_interval().low)(A)


@pytest.mark.parametrize("call, match", [
    (lambda a: st.entropy(a[:, 0], nan_policy="omit"), "nan_policy='omit'"),
    (lambda a: st.skew(a, nan_policy="raise"), "nan_policy='raise'"),
    (lambda a: st.pearsonr(a, a).statistic, r"shapes \(4, 5\)"),
    (lambda a: st.pearsonr(a[0], a[1], method=st.PermutationMethod()).statistic, "method="),
])
def test_refusals_name_the_option(call, match):
    with pytest.raises(ad.UnsupportedOperation, match=match):
        ad.grad(lambda a: np.sum(call(a)))(A)
