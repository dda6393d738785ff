"""scipy.stats distributions called unchanged on active arrays, frozen or
not: every sweep against SciPy's values and central differences in x, loc,
scale and shape parameters (fdcheck.check_tape); SciPy's values outside the
support and for invalid parameters, with derivative zero there; clear
errors for what has no rule; user-style likelihoods."""
import re

import numpy as np
import pytest
import scipy.stats as st
from scipy.stats import beta, binom, expon, gamma, multivariate_normal, norm, poisson, t

import adsim as ad
from fdcheck import assert_close, check_tape, fd_jacobian

X = np.array([0.3, 0.7, 1.2, 2.5])
P = np.array([0.1, 0.35, 0.6, 0.9])
LOC, SCALE = np.array(0.2), np.array(1.5)

CASES = {f"norm.{m}": ((lambda m: lambda x, loc, s: getattr(norm, m)(x, loc, s))(m),
                       [X - 1.0, LOC, SCALE])
         for m in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")}
CASES.update({f"norm.{m}": ((lambda m: lambda q, loc, s: getattr(norm, m)(q, loc, s))(m),
                            [P, LOC, SCALE]) for m in ("ppf", "isf")})
CASES.update({f"expon.{m}": ((lambda m: lambda x, loc, s: getattr(expon, m)(x, loc=loc,
                                                                               scale=s))(m),
                             [X, np.array(0.1), SCALE])
              for m in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")})
CASES.update({
    "expon.ppf isf": (lambda q, s: expon.ppf(q, scale=s) + expon.isf(q, scale=s), [P, SCALE]),
    "t.logpdf": (lambda x, df, s: t.logpdf(x, df, 0.1, s), [X - 1.0, np.array(3.5), SCALE]),
    "t.pdf": (lambda x, df: t.pdf(x, df), [X - 1.0, np.array([3.5, 2.0, 5.0, 1.5])]),
    "t.cdf sf": (lambda x, s: t.cdf(x, 3.5, scale=s) * t.sf(x, 2.0), [X - 1.0, SCALE]),
    "t.ppf": (lambda q, s: t.ppf(q, 3.5, scale=s), [P, SCALE]),
    "gamma.logpdf": (lambda x, a, s: gamma.logpdf(x, a, scale=s), [X, np.array(2.5), SCALE]),
    "gamma.pdf": (lambda x, a: gamma.pdf(x, a), [X, np.array(2.5)]),
    "gamma.cdf logsf": (lambda x, s: gamma.cdf(x, 2.5, scale=s) + gamma.logsf(x, 1.5), [X, SCALE]),
    "gamma.ppf isf": (lambda q, s: gamma.ppf(q, 2.5, scale=s) * gamma.isf(q, 2.0), [P, SCALE]),
    "beta.logpdf": (lambda x, a, b: beta.logpdf(x, a, b), [P, np.array(2.5), np.array(1.7)]),
    "beta.pdf loc scale": (lambda x, a: beta.pdf(x, a, 1.7, loc=-0.1, scale=1.3),
                           [P, np.array(2.5)]),
    "beta.cdf logcdf": (lambda x: beta.cdf(x, 2.5, 1.7) + beta.logcdf(x, 0.5, 0.5), [P]),
    "beta.ppf": (lambda q: beta.ppf(q, 2.5, 1.7), [P]),
    "poisson.logpmf": (lambda mu: poisson.logpmf([0, 1, 3, 7], mu), [np.array(2.5)]),
    "poisson.pmf loc": (lambda mu: poisson.pmf(np.array([1, 2, 4, 8]), mu, loc=1),
                        [np.array([2.5, 1.0, 0.5, 3.0])]),
    "binom.logpmf": (lambda p: binom.logpmf(np.array([0, 1, 3, 7]), 7, p), [np.array(0.3)]),
    "binom.pmf": (lambda p: binom.pmf(2, np.array([3, 4, 5]), p), [np.array([0.2, 0.5, 0.7])]),
    "frozen norm": (lambda x, loc, s: norm(loc, s).logpdf(x), [X, LOC, SCALE]),
    "frozen gamma": (lambda x, a: gamma(a, scale=2.0).logpdf(x), [X, np.array(2.5)]),
    "frozen norm median interval": (lambda loc: norm(loc, 2.0).interval(0.9)[1]
                                    + norm.median(loc), [LOC]),
})

C = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])
MEAN = np.array([0.1, 0.2, 0.3])
POINTS = np.array([[0.1, -0.3, 0.4], [1.0, 0.5, -0.2]])
CASES.update({
    "multivariate_normal.logpdf": (lambda x, m, c: multivariate_normal.logpdf(x, m, c),
                                   [POINTS, MEAN, C]),
    "multivariate_normal.pdf one point": (lambda x, m, c: multivariate_normal.pdf(x, m, cov=c),
                                          [POINTS[0], MEAN, C]),
    "multivariate_normal frozen": (lambda x, m, c: multivariate_normal(m, c).logpdf(x),
                                   [POINTS, MEAN, C]),
    "multivariate_normal frozen plain": (lambda x: multivariate_normal(MEAN, C).pdf(x), [POINTS]),
    "multivariate_normal lower triangle": (lambda c: multivariate_normal.logpdf(POINTS, MEAN, c),
                                           [C + np.triu(np.ones((3, 3)), 1)]),
    "multivariate_normal scalar cov": (lambda x, s: multivariate_normal.logpdf(x, MEAN, s),
                                       [POINTS, np.array(1.3)]),
    "multivariate_normal 1-d": (lambda x, s: multivariate_normal.logpdf(x, 0.5, s),
                                [X, np.array(1.3)]),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_distribution_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6, atol=1e-8)


EDGES = np.array([-0.5, 0.3, 1.7, np.nan])
PROBABILITIES = np.array([-0.1, 0.0, 0.3, 1.0, 1.2, np.nan])


@pytest.mark.parametrize("f, x", [
    (lambda z: gamma.logpdf(z, 2.5), EDGES), (lambda z: gamma.pdf(z, 2.5), EDGES),
    (lambda z: beta.cdf(z, 2.5, 1.5), EDGES), (lambda z: beta.sf(z, 2.5, 1.5), EDGES),
    (lambda z: expon.logcdf(z), EDGES), (lambda z: gamma.logsf(z, 2.0), EDGES),
    (lambda q: norm.ppf(q), PROBABILITIES), (lambda q: gamma.ppf(q, 2.5), PROBABILITIES),
    (lambda q: beta.ppf(q, 2.0, 3.0), PROBABILITIES), (lambda q: expon.isf(q), PROBABILITIES),
    (lambda s: norm.logpdf(0.3, 0.0, s), np.array([1.0, -1.0, 0.0])),
    (lambda a: gamma.logpdf(0.3, a), np.array([1.5, -1.0, 0.0])),
    (lambda mu: poisson.logpmf(np.array([-1, 0, 1.5, 3]), mu), np.array([2.0, 2.0, 2.0, -1.0])),
    (lambda p: binom.pmf(np.array([-1, 1, 1.5, 9]), 5, p), np.array([0.3, 0.3, 0.3, 1.2])),
])
def test_values_outside_the_support_and_for_invalid_parameters(f, x):
    """SciPy's constants (and NaN for invalid parameters), with derivative
    zero where the value is such a constant, in both modes."""
    value, tangent = ad.jvp(f, x, np.ones_like(x))
    with np.errstate(divide="ignore"):          # SciPy's own (x - loc) / 0
        want = f(x.copy())
    np.testing.assert_array_equal(np.isnan(value), np.isnan(want))
    assert_close(value[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-14, what="value")
    constant = ~np.isfinite(want) | (want == 0.0) | (want == 1.0)
    assert np.all(tangent[constant] == 0.0)
    adjoint = ad.vjp(f, x, np.ones_like(want))[1]          # elementwise: the same numbers
    assert np.all(adjoint[constant] == 0.0)
    assert_close(adjoint, tangent, rtol=1e-13, what="adjoint vs tangent")


@pytest.mark.parametrize("f, words", [
    (lambda z: st.genextreme.ppf(0.3, z), "scipy.stats.genextreme.ppf"),
    (lambda z: st.levy_stable.cdf(z, 1.5, 0.0), "scipy.stats.levy_stable.cdf"),
    (lambda z: norm.mean(loc=z), "scipy.stats.norm.mean"),
    (lambda z: st.skewnorm(z).entropy(), "scipy.stats.skewnorm.entropy"),
    (lambda z: st.gamma.rvs(z, random_state=0), "scipy.stats.gamma.rvs is differentiated in "
                                                  "loc and scale only"),
    (lambda z: poisson.rvs(z, random_state=0), "scipy.stats.poisson.rvs"),
    (lambda z: poisson.ppf(0.3, z), "scipy.stats.poisson.ppf"),
    (lambda z: t.cdf(1.0, z), "shape parameter df"),
    (lambda z: gamma.logsf(1.0, z), "shape parameter a"),
    (lambda z: binom.pmf(z, 5, 0.3), "active count k"),
    (lambda z: binom.pmf(2, z, 0.3), "shape parameter n"),
    (lambda z: multivariate_normal.cdf(z, np.zeros(2)), "scipy.stats.multivariate_normal.cdf"),
    (lambda z: multivariate_normal(z).rvs(), "multivariate_normal(mean, cov).rvs"),
])
def test_what_has_no_rule_raises_naming_it(f, words):
    with pytest.raises(ad.UnsupportedOperation, match=re.escape(words)):
        ad.grad(lambda z: np.sum(f(z)))(np.array([2.0, 3.0]))


@pytest.mark.parametrize("seed", [0, "generator", None])
def test_variates_with_active_loc_and_scale_are_pathwise(seed):
    """rvs of a continuous distribution with active loc and scale: SciPy's
    value bit for bit (vals * scale + loc of the standard variates), the
    pathwise derivative, and the same numbers on replay."""
    def draws(z):
        if seed is None:
            np.random.seed(4)
        state = np.random.default_rng(4) if seed == "generator" else seed
        x = st.gumbel_r(loc=z[0], scale=z[1]).rvs(size=5, random_state=state)
        y = st.t.rvs(3.0, z[0], z[1], size=(2, 2), random_state=state)
        return np.concatenate([x, y.ravel()])

    def f(z):
        v = draws(z)
        return np.sum(np.tanh(v[:5])) + np.sum(v[5:] ** 2)

    z = np.array([0.3, 1.4])
    tape = ad.record(draws, z)
    assert np.array_equal(tape.forward(z), draws(z))
    assert np.array_equal(tape.forward(z * 1.1), draws(z * 1.1))     # the same numbers
    g = ad.grad(f)(z)
    want = np.array([(8 * (f(z + h * e) - f(z - h * e)) - (f(z + 2 * h * e) - f(z - 2 * h * e)))
                     / (12 * h) for e in np.eye(2) for h in [1e-4]])
    assert_close(g, want, rtol=1e-7, what="gradient")


def test_normal_maximum_likelihood_gradient():
    """The score of a normal sample in (mu, log sigma) equals its closed form."""
    data = np.array([0.3, -1.1, 2.4, 0.9, 1.3])

    def log_likelihood(theta):
        return np.sum(norm.logpdf(data, loc=theta[0], scale=np.exp(theta[1])))
    theta = np.array([0.4, 0.2])
    s = np.exp(theta[1])
    want = [np.sum(data - theta[0]) / s ** 2, np.sum((data - theta[0]) ** 2) / s ** 2 - data.size]
    assert_close(ad.grad(log_likelihood)(theta), want, rtol=1e-13, what="score")


def test_gaussian_process_log_likelihood_through_multivariate_normal():
    t_ = np.linspace(0.0, 2.0, 5)
    y = np.cos(2.0 * t_)

    def log_likelihood(theta):
        K = np.exp(theta[0]) * np.exp(-0.5 * (t_[:, None] - t_) ** 2 / np.exp(2.0 * theta[1]))
        return multivariate_normal.logpdf(y, mean=np.zeros(5), cov=K + 0.05 * np.eye(5))
    theta = np.array([0.2, -0.4])
    assert_close(ad.grad(log_likelihood)(theta), fd_jacobian(log_likelihood, [theta])[0],
                 rtol=1e-7, what="gradient")
    check_tape(log_likelihood, [theta])


def test_poisson_regression_log_likelihood():
    counts = np.array([0, 2, 5, 1, 3])
    features = np.array([[1.0, 0.2], [1.0, 0.9], [1.0, 1.7], [1.0, 0.4], [1.0, 1.1]])

    def log_likelihood(w):
        return np.sum(poisson.logpmf(counts, np.exp(features @ w)))
    w = np.array([0.1, 0.6])
    rate = np.exp(features @ w)
    assert_close(ad.grad(log_likelihood)(w), features.T @ (counts - rate), rtol=1e-13,
                 what="score")


def test_densities_are_elementwise_for_sparsity():
    """norm.logpdf of a vector: a diagonal sparse Jacobian, equal to the dense one."""
    f = lambda x: norm.logpdf(x, 0.1, 2.0) + gamma.logpdf(x, 2.5)     # noqa: E731
    pattern = ad.jacobian_sparsity(f, X).toarray()
    assert np.array_equal(pattern, np.eye(X.size, dtype=bool))
    assert_close(ad.sparse_jacobian(f, X).toarray(), ad.jacobian(f)(X), rtol=1e-15,
                 what="sparse Jacobian")
