"""The scipy.special functions of adsim/_scipy/cdf_ufuncs.py (raw
distribution functions) and the later additions to adsim/_scipy/ufuncs.py
(kn, jve, yve, struve, modstruve, poch, ndtri_exp, ellipkm1, inv_boxcox,
inv_boxcox1p, the orthogonal polynomials): every sweep against SciPy's
values and central differences (check_tape: tangents, adjoints, Jacobians,
Hessian-vector products, replays at new points); refusals of shape
arguments; likelihoods written with them and with scipy.stats' tails."""
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import adsim as ad
from fdcheck import assert_close, central, check_tape

X = np.array([0.6, 1.3, 2.2, 3.1])
P = np.array([0.1, 0.35, 0.6, 0.9])
COUNTS = np.array([0, 2, 3, 6])

CASES = {
    "chdtr chdtrc": (lambda x: sc.chdtr(3.0, x) + 2.0 * sc.chdtrc(np.array([[1.5], [4.0]]), x),
                     [X]),
    "chdtri": (lambda p: sc.chdtri(np.array([1.0, 2.5, 4.0, 7.0]), p), [P]),
    "gdtr in rate and x": (lambda a, x: sc.gdtr(a, 2.5, x), [X[::-1], X]),
    "gdtrc": (lambda a, x: sc.gdtrc(a, np.array([[0.7], [3.0]]), x), [X[::-1], X]),
    "gdtrix": (lambda a, p: sc.gdtrix(a, 1.7, p), [X, P]),
    "pdtr pdtrc": (lambda m: sc.pdtr(COUNTS, m) - sc.pdtrc(COUNTS, 2.0 * m), [X]),
    "pdtri": (lambda y: sc.pdtri(COUNTS, y), [P]),
    "bdtr bdtrc": (lambda p: sc.bdtr(COUNTS, 8, p) + 3.0 * sc.bdtrc(COUNTS, 8, p), [P]),
    "bdtr with k at n": (lambda p: sc.bdtr(np.array([2, 4, 5, 0]), 5, p), [P]),
    "bdtri": (lambda y: sc.bdtri(np.array([0, 1, 3, 5]), 7, y), [P]),
    "nbdtr nbdtrc": (lambda p: sc.nbdtr(COUNTS, 3, p) * sc.nbdtrc(COUNTS, 2, p), [P]),
    "fdtr fdtrc": (lambda x: sc.fdtr(3.0, 7.0, x) + sc.fdtrc(np.array([[1.0], [5.0]]), 2.5, x),
                   [X]),
    "fdtri": (lambda p: sc.fdtri(4.0, 6.0, p), [P]),
    "betainccinv": (lambda y: sc.betainccinv(2.0, 3.5, y), [P]),
    "kn": (lambda x: sc.kn(np.array([0, 1, 2, 4]), x), [X]),
    "jve yve": (lambda x: sc.jve(1.5, x) + sc.yve(np.array([[0.0], [2.5]]), x), [X]),
    "struve modstruve": (lambda x: sc.struve(0.5, x) * sc.modstruve(np.array([[1.0], [2.5]]), x),
                         [X]),
    "poch": (lambda z, m: sc.poch(z, m), [X, np.array([0.5, 1.0, -0.3, 2.0])]),
    "ndtri_exp": (lambda y: sc.ndtri_exp(y), [np.array([-20.0, -3.0, -0.7, -0.05])]),
    "ellipkm1": (lambda p: sc.ellipkm1(p), [P]),
    "inv_boxcox near lambda 0": (lambda y, lam: sc.inv_boxcox(y, lam),
                                 [X / 2.0, np.array([0.0, 0.02, -0.3, 1.5])]),
    "inv_boxcox1p": (lambda y, lam: sc.inv_boxcox1p(y, lam), [X / 2.0, np.array([[0.0], [0.4]])]),
    "legendre chebyshev": (lambda x: sc.eval_legendre(np.array([0, 1, 3, 6]), x)
                           + sc.eval_chebyt(np.array([[0], [4]]), x)
                           + sc.eval_chebyu(np.array([[0], [3]]), x)
                           + sc.eval_sh_legendre(3, (x + 1.0) / 2.0), [P * 2.0 - 1.0]),
    "hermite laguerre": (lambda x: sc.eval_hermite(np.array([0, 1, 2, 5]), x)
                         + sc.eval_hermitenorm(4, x) + sc.eval_laguerre(np.array([[0], [3]]), x)
                         + sc.eval_genlaguerre(2, 0.5, x), [X - 1.5]),
    "gegenbauer jacobi": (lambda x: sc.eval_gegenbauer(np.array([0, 2, 3, 5]), 0.7, x)
                          * sc.eval_jacobi(3, 0.5, np.array([[1.5], [-0.3]]), x), [P - 0.5]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6, atol=1e-8)


def test_the_derivatives_are_the_densities():
    """d/dx chdtr is the chi-square density, d/dp bdtrc the beta density of
    Beta(k + 1, n - k), d/dx fdtr the F density."""
    x = np.array([0.5, 2.0, 6.0])
    assert_close(ad.grad(lambda x: np.sum(sc.chdtr(3.0, x)))(x), st.chi2.pdf(x, 3.0), 1e-12,
                 1e-14, "chi2")
    assert_close(ad.grad(lambda x: np.sum(sc.fdtr(3.0, 7.0, x)))(x), st.f.pdf(x, 3.0, 7.0),
                 1e-12, 1e-14, "F")
    p = np.array([0.2, 0.5, 0.8])
    assert_close(ad.grad(lambda p: np.sum(sc.bdtrc(2, 6, p)))(p), st.beta.pdf(p, 3.0, 4.0),
                 1e-12, 1e-14, "binomial")


@pytest.mark.parametrize("f, words", [
    (lambda v: sc.chdtr(v, 2.0), "chdtr is not differentiated in its degrees of freedom v"),
    (lambda b: sc.gdtr(1.0, b, 2.0), "gdtr is not differentiated in its shape b"),
    (lambda n: sc.bdtr(1, n, 0.3), "bdtr is not differentiated in its counts k, n"),
    (lambda n: sc.eval_legendre(n, 0.3), "eval_legendre is not differentiated in its degree n"),
    (lambda v: sc.struve(v, 1.0), "struve is not differentiated in its order v"),
])
def test_shape_arguments_are_refused_by_name(f, words):
    with pytest.raises(ad.UnsupportedOperation, match=words):
        ad.grad(lambda a: np.sum(f(a)))(np.array([3.0]))


def test_a_dose_response_likelihood_with_poisson_and_binomial_tails():
    """Counts above a detection limit (Poisson tail probability, pdtrc) and
    surviving fractions (binomial cdf, bdtr) with the rates a logistic
    dose-response: the gradient in the two dose parameters."""
    dose = np.array([0.5, 1.0, 2.0, 4.0])
    survivors = np.array([9, 7, 4, 1])
    detected = np.array([1, 3, 6, 10])

    def log_likelihood(theta):
        kill = sc.expit(theta[0] + theta[1] * np.log(dose))
        rate = 12.0 * kill
        return np.sum(np.log(sc.bdtr(survivors, 10, kill)) + np.log(sc.pdtrc(detected, rate)))
    theta = np.array([-0.4, 1.1])
    g = ad.grad(log_likelihood)(theta)
    for i in range(2):
        assert_close(g[i], central(log_likelihood, [theta], [np.eye(2)[i]]), 1e-7, 1e-9,
                     f"d/dtheta_{i}")


def test_a_censored_student_t_likelihood_with_logcdf_and_logsf():
    """Measurements with heavy-tailed errors, some only known to lie above
    (right-censored: logsf) or below (left-censored: logcdf) a limit: the
    gradient and the Hessian in the location and log-scale."""
    observed = np.array([0.3, -1.2, 2.5, 0.9, 1.7, -0.4])
    right = np.array([False, False, True, False, True, False])
    left = np.array([False, True, False, False, False, False])

    def negative_log_likelihood(theta):
        mu, scale = theta[0], np.exp(theta[1])
        exact = st.t.logpdf(observed, 4.0, loc=mu, scale=scale)
        above = st.t.logsf(observed, 4.0, loc=mu, scale=scale)
        below = st.t.logcdf(observed, 4.0, loc=mu, scale=scale)
        return -np.sum(np.where(right, above, np.where(left, below, exact)))
    theta = np.array([0.4, 0.1])
    g = ad.grad(negative_log_likelihood)(theta)
    H = ad.hessian(negative_log_likelihood)(theta)
    for i in range(2):
        e = np.eye(2)[i]
        assert_close(g[i], central(negative_log_likelihood, [theta], [e]), 1e-7, 1e-9, "gradient")
        assert_close(H[:, i], central(ad.grad(negative_log_likelihood), [theta], [e]), 1e-6,
                     1e-8, "Hessian")
