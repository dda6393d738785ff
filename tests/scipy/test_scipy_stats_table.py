"""The rows of the distribution table (adsim/_scipy/distributions.py) added
for chi2, lognorm, laplace, cauchy, logistic, uniform, invgamma,
weibull_min, halfnorm, skewnorm, halfcauchy, lomax, fisk, weibull_max,
invweibull, levy, vonmises, bernoulli, nbinom, geom and the discrete cdf/sf, the
entropy methods, dirichlet and multivariate_normal.entropy: every sweep
against SciPy's values and central differences (x, loc, scale and the
shape parameters active), broadcasting, SciPy's values at the ends of the
support and for invalid parameters, and clear errors for what stays
unsupported."""
import numpy as np
import pytest
import scipy.stats as st

import adsim as ad
from fdcheck import assert_close, check_tape

LOC, SCALE = np.array(0.1), np.array(1.5)
Q = np.array([0.1, 0.35, 0.6, 0.9])
# points whose standardized values lie inside each support
ANYWHERE = np.array([-1.7, -0.2, 0.4, 2.3])
POSITIVE = np.array([0.3, 0.7, 1.2, 2.5])
UNIT = LOC + SCALE * np.array([0.1, 0.4, 0.6, 0.9])

# name -> (points, shape parameters, methods)
ROWS = {
    "chi2": (POSITIVE, [np.array(3.5)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "lognorm": (POSITIVE, [np.array(0.7)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "laplace": (ANYWHERE, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "cauchy": (ANYWHERE, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "logistic": (ANYWHERE, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "uniform": (UNIT, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "invgamma": (POSITIVE, [np.array(2.5)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "weibull_min": (POSITIVE, [np.array(1.7)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "halfnorm": (POSITIVE, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "skewnorm": (ANYWHERE, [np.array(1.5)], "pdf logpdf cdf logcdf sf logsf"),
    "halfcauchy": (POSITIVE, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "lomax": (POSITIVE, [np.array(2.2)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "fisk": (POSITIVE, [np.array(1.8)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "weibull_max": (-POSITIVE, [np.array(1.7)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "invweibull": (POSITIVE, [np.array(2.4)], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "levy": (POSITIVE, [], "pdf logpdf cdf logcdf sf logsf ppf isf"),
    "vonmises": (np.array([-4.0, -0.2, 0.4, 7.3]), [np.array(1.3)], "pdf logpdf"),
}
# shape parameters an incomplete gamma function takes in its first argument
PLAIN_IN = {"chi2": "cdf logcdf sf logsf ppf isf", "invgamma": "cdf logcdf sf logsf ppf isf"}


def _case(name, method):
    points, shapes, _ = ROWS[name]
    dist = getattr(st, name)
    active_shapes = method not in PLAIN_IN.get(name, "").split()
    x = Q if method in ("ppf", "isf") else points

    def f(x, loc, scale, *s):
        return getattr(dist, method)(x, *(s if active_shapes else shapes), loc=loc, scale=scale)
    return f, [x, LOC, SCALE] + (shapes if active_shapes else [])


CASES = [(name, m) for name, (_, _, methods) in ROWS.items() for m in methods.split()]


@pytest.mark.parametrize("name, method", CASES)
def test_every_method_every_sweep(name, method):
    f, xs = _case(name, method)
    check_tape(f, xs, rtol=1e-6, atol=1e-8, value_rtol=1e-12)


@pytest.mark.parametrize("f, xs", [
    (lambda x, loc, s: st.laplace.logcdf(x, loc, s), [ANYWHERE.reshape(2, 2, 1), LOC,
                                                      np.array([1.5, 0.5, 2.0])]),
    (lambda x, c: st.weibull_min.logsf(x, c), [POSITIVE[:, None], np.array([0.8, 1.7, 3.0])]),
    (lambda x, a: st.skewnorm.cdf(x, a), [ANYWHERE.reshape(2, 2), np.array([-2.0, 0.5])]),
    (lambda q, s: st.lognorm(s, scale=2.0).ppf(q), [Q.reshape(2, 2), np.array([[0.3], [1.1]])]),
    (lambda x, df: st.chi2.logpdf(x, df), [POSITIVE, np.array([[1.2], [2.3], [5.5]])]),
])
def test_broadcasting_and_frozen(f, xs):
    check_tape(f, xs, rtol=1e-6, atol=1e-8, value_rtol=1e-12)


@pytest.mark.parametrize("f, x", [
    (lambda z: st.lognorm.logpdf(z, 0.7), np.array([-0.5, 0.0, 0.3, np.nan])),
    (lambda z: st.lognorm.cdf(z, 0.7), np.array([-0.5, 0.0, 0.3, np.nan])),
    (lambda z: st.invgamma.pdf(z, 2.5), np.array([-0.5, 0.0, 0.3, np.nan])),
    (lambda z: st.invgamma.logsf(z, 2.5), np.array([-0.5, 0.0, 0.3, np.nan])),
    (lambda z: st.uniform.logpdf(z), np.array([-0.5, 0.3, 1.5])),
    (lambda z: st.uniform.sf(z), np.array([-0.5, 0.3, 1.5])),
    (lambda z: st.halfnorm.logcdf(z), np.array([-0.5, 0.3])),
    (lambda z: st.weibull_min.logpdf(z, 1.0), np.array([-0.5, 0.3])),
    (lambda q: st.chi2.ppf(q, 3.0), np.array([-0.1, 0.0, 0.3, 1.0, 1.2])),
    (lambda q: st.laplace.isf(q), np.array([-0.1, 0.0, 0.3, 1.0, 1.2])),
    (lambda s: st.lognorm.logpdf(0.4, s), np.array([0.5, -1.0, 0.0])),
    (lambda s: st.laplace.logpdf(0.4, 0.0, s), np.array([0.5, -1.0, 0.0])),
    (lambda mu: st.poisson.cdf(np.array([-1, 0, 1.5, 3]), mu), np.array([2.0, 2.0, 2.0, -1.0])),
    (lambda p: st.binom.sf(np.array([-1, 1, 4.5, 5, 9]), 5, p), np.array([0.3, 0.3, 0.3, 0.3,
                                                                            1.2])),
    (lambda p: st.bernoulli.logpmf(np.array([-1, 0, 1, 0.5]), p), np.array([0.3, 0.3, 0.3, 0.3])),
    (lambda p: st.nbinom.logpmf(np.array([-1, 0, 2.5, 3]), 2.0, p), np.array([0.3, 0.3, 0.3, 1.2])),
    (lambda p: st.geom.sf(np.array([0, 1, 2.5, 3]), p), np.array([0.3, 0.3, 0.3, -0.2])),
    (lambda k: st.vonmises.logpdf(0.4, k), np.array([0.5, 0.0, -1.0])),
    (lambda p: st.geom.logpmf(np.array([0, 1, 1.5, 3]), p), np.array([0.3, 0.3, 0.3, 1.2])),
    (lambda p: st.nbinom.cdf(np.array([-1, 0, 1.5, 3]), 2.0, p), np.array([0.3, 0.3, 0.3, 1.2])),
    (lambda n: st.nbinom.logpmf(np.array([-1, 0, 1.5, 3]), n, 0.4), np.array([2.0, 2.0, 2.0, -1.0])),
])
def test_scipys_values_outside_the_support_and_for_invalid_parameters(f, x):
    """SciPy's constants (and NaN for invalid parameters) with derivative
    zero there, in both modes (lognorm and invgamma: 0 is outside)."""
    value, tangent = ad.jvp(f, x, np.ones_like(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        want = f(x.copy())
    np.testing.assert_array_equal(np.isnan(value), np.isnan(want))
    assert_close(value[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-13, what="value")
    constant = ~np.isfinite(want) | (want == 0.0) | (want == 1.0)
    assert np.all(tangent[constant] == 0.0)
    adjoint = ad.vjp(f, x, np.ones_like(want))[1]
    assert np.all(adjoint[constant] == 0.0)


@pytest.mark.parametrize("name, shapes, method", [
    ("uniform", (), "logpdf"), ("uniform", (), "sf"), ("halfnorm", (), "logcdf"),
    ("halfnorm", (), "pdf"), ("weibull_min", (1.0,), "logpdf"), ("weibull_min", (0.5,), "pdf"),
    ("weibull_min", (1.5,), "logpdf"), ("chi2", (1.0,), "logpdf"), ("chi2", (2.0,), "pdf"),
])
def test_scipys_values_at_a_closed_end_of_the_support(name, shapes, method):
    dist = getattr(st, name)
    x = np.array([0.0, 1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        value = ad.jvp(lambda z: getattr(dist, method)(z, *shapes), x, np.ones(2))[0]
        want = getattr(dist, method)(x, *shapes)
    assert_close(value, want, rtol=1e-14, atol=0.0, what="value at the end")


DISCRETE = {
    "poisson.cdf": (lambda mu: st.poisson.cdf([0, 1.5, 3, 7], mu),
                    [np.array([2.5, 1.0, 0.5, 3.0])]),
    "poisson.logsf": (lambda mu: st.poisson.logsf(np.array([[0], [2]]), mu, loc=-1),
                      [np.array([2.5, 1.0, 0.5])]),
    "binom.cdf": (lambda p: st.binom.cdf([0, 1, 3, 6], 7, p), [np.array(0.3)]),
    "binom.logcdf sf": (lambda p: st.binom.logcdf(2, [3, 4, 5], p) + st.binom.sf(1, 4, p),
                        [np.array([0.2, 0.5, 0.7])]),
    "bernoulli.pmf logpmf": (lambda p: st.bernoulli.pmf([0, 1, 1], p) * st.bernoulli.logpmf(0, p),
                             [np.array([0.2, 0.5, 0.7])]),
    "bernoulli.cdf sf": (lambda p: st.bernoulli.cdf([0, 0.5, 1], p) + st.bernoulli.logsf(0, p),
                         [np.array([0.2, 0.5, 0.7])]),
    "nbinom.pmf logpmf": (lambda n, p: st.nbinom.logpmf([0, 2, 5], n, p) * st.nbinom.pmf(3, n, p),
                          [np.array([0.6, 2.5, 4.0]), np.array([0.3, 0.5, 0.8])]),
    "nbinom.cdf logsf shifted": (lambda p: st.nbinom.cdf([0, 2.5, 5], 3.0, p)
                         + st.nbinom.logsf([1, 3, 4.5], 2.0, p, loc=1), [np.array([0.3, 0.5, 0.8])]),
    "geom.logpmf cdf sf": (lambda p: st.geom.logpmf([1, 3, 4], p) + st.geom.cdf([1, 2.5, 6], p)
                           + st.geom.logsf([0, 2, 5], p), [np.array([0.2, 0.5, 0.7])]),
    "nbinom.logpmf": (lambda n, p: st.nbinom.logpmf([0, 1, 3, 7], n, p),
                      [np.array([2.5, 0.8, 4.0, 1.5]), np.array([0.3, 0.6, 0.5, 0.2])]),
    "nbinom.pmf frozen": (lambda n, p: st.nbinom(n, p).pmf(np.array([[0], [2]])),
                          [np.array([1.5, 3.0]), np.array(0.4)]),
    "nbinom.cdf logsf": (lambda p: st.nbinom.cdf([0, 1.5, 3, 7], 2.5, p)
                         + st.nbinom.logsf(2, 3.0, p, loc=-1), [np.array([0.3, 0.6, 0.5, 0.2])]),
    "geom.logpmf cdf": (lambda p: st.geom.logpmf([1, 2, 5], p) + st.geom.cdf([1, 2.5, 4], p),
                        [np.array([0.2, 0.5, 0.7])]),
    "geom.sf logsf logcdf": (lambda p: st.geom.sf(3, p) + st.geom.logsf([1, 2, 5.5], p, loc=1)
                             + st.geom.logcdf(2, p), [np.array([0.2, 0.5, 0.7])]),
}


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_every_sweep(name):
    f, xs = DISCRETE[name]
    check_tape(f, xs, rtol=1e-6, atol=1e-8, value_rtol=1e-12)


ENTROPY = ["norm", "expon", "t", "gamma", "beta", "chi2", "lognorm", "laplace", "cauchy",
           "logistic", "uniform", "invgamma", "weibull_min", "halfnorm", "halfcauchy", "lomax",
           "fisk", "weibull_max", "invweibull"]
SHAPE_VALUES = {"t": [np.array([3.5, 40.0])], "gamma": [np.array([0.7, 2.5])],
                "beta": [np.array([2.5, 0.6]), np.array(1.7)], "chi2": [np.array([3.5, 1.0])],
                "lognorm": [np.array([0.7, 1.3])], "invgamma": [np.array([2.5, 0.8])],
                "weibull_min": [np.array([1.7, 0.6])], "lomax": [np.array([2.2, 0.7])],
                "fisk": [np.array([1.8, 0.6])], "weibull_max": [np.array([1.7, 0.6])],
                "invweibull": [np.array([2.4, 0.9])]}


@pytest.mark.parametrize("name", ENTROPY)
def test_entropy_every_sweep(name):
    """The differential entropy in the shapes and the scale (loc has none)."""
    dist = getattr(st, name)
    shapes = SHAPE_VALUES.get(name, [])
    check_tape(lambda scale, *s: dist.entropy(*s, loc=0.3, scale=scale), [SCALE] + shapes,
               rtol=1e-6, atol=1e-8, value_rtol=1e-11)


def test_levy_entropy_is_scipys_number():
    """SciPy integrates levy's entropy numerically, 1e-10 from the closed
    form (1 + 3 gamma + log(16 pi)) / 2; adsim gives SciPy's number, plus
    log(scale) with its derivative 1 / scale."""
    tape = check_tape(lambda scale: st.levy.entropy(loc=0.3, scale=scale), [SCALE], rtol=1e-6,
                      atol=1e-8, value_rtol=1e-14)
    closed = 0.5 * (1.0 + 3.0 * np.euler_gamma + np.log(16.0 * np.pi)) + np.log(SCALE)
    assert_close(tape.forward(SCALE), closed, 1e-9, 0.0, "the closed form")
    assert_close(tape.gradient(SCALE), 1.0 / SCALE, 1e-14, 0.0, "d/dscale")


def test_entropy_frozen_invalid_and_with_active_loc():
    value, g = ad.value_and_grad(lambda p: np.sum(st.norm(p[0], p[1]).entropy()))(
        np.array([0.3, 2.0]))
    assert_close(value, st.norm.entropy(scale=2.0), rtol=1e-15, what="entropy")
    assert_close(g, [0.0, 0.5], rtol=1e-15, what="gradient")
    out = ad.jvp(lambda s: st.gamma.entropy(s), np.array([1.5, -1.0]), np.ones(2))
    assert np.isnan(out[0][1]) and out[1][1] == 0.0 and np.isfinite(out[1][0])


ALPHA = np.array([1.5, 2.0, 3.2])
SIMPLEX = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])        # components along axis 0


@pytest.mark.parametrize("f, xs", [
    (lambda x, a: st.dirichlet.logpdf(x / np.sum(x), a), [SIMPLEX[:, 0], ALPHA]),
    (lambda x, a: st.dirichlet.logpdf(x / np.sum(x, axis=0), a), [SIMPLEX, ALPHA]),
    (lambda x, a: st.dirichlet.pdf(x, a), [SIMPLEX[:2], ALPHA]),          # K - 1 components
    (lambda a: st.dirichlet(a).logpdf(SIMPLEX) + st.dirichlet(a).entropy(), [ALPHA]),
    (lambda x: st.dirichlet(ALPHA).logpdf(x / np.sum(x)), [np.array([0.4, 1.0, 0.7])]),
    (lambda a: st.dirichlet.entropy(a), [ALPHA]),
    (lambda m, c: st.multivariate_normal.entropy(m, c), [np.zeros(2), np.array([[2.0, 0.3],
                                                                              [0.3, 1.0]])]),
    (lambda c: st.multivariate_normal(np.zeros(2), c).entropy(), [np.array([[2.0, 0.3],
                                                                            [0.3, 1.0]])]),
    (lambda s: st.multivariate_normal.entropy(cov=s), [np.array(1.7)]),
])
def test_multivariate_every_sweep(f, xs):
    check_tape(f, xs, rtol=1e-6, atol=1e-8, value_rtol=1e-12)


def test_dirichlet_refuses_points_off_the_simplex_as_scipy_does():
    with pytest.raises(ValueError, match="simplex"):
        ad.grad(lambda x: st.dirichlet.logpdf(x, ALPHA))(np.array([0.2, 0.3, 0.6]))
    with pytest.raises(ValueError, match="greater than 0"):
        ad.grad(lambda a: st.dirichlet.logpdf(SIMPLEX[:, 0], a))(np.array([1.0, -1.0, 2.0]))


@pytest.mark.parametrize("f, words", [
    (lambda z: st.chi2.cdf(1.0, z), "shape parameter df"),
    (lambda z: st.invgamma.ppf(0.3, z), "shape parameter a"),
    (lambda z: st.skewnorm(z).entropy(), "scipy.stats.skewnorm.entropy"),
    (lambda z: st.poisson.entropy(z), "scipy.stats.poisson.entropy"),
    (lambda z: st.dirichlet(z).mean(), "dirichlet(alpha).mean"),
    (lambda z: st.binom.cdf(z, 5, 0.3), "active count k"),
    (lambda z: st.nbinom.sf(2, z, 0.3), "shape parameter n"),
])
def test_what_stays_unsupported_names_itself(f, words):
    with pytest.raises(ad.UnsupportedOperation, match=words.replace(".", r"\.")
                       .replace("(", r"\(").replace(")", r"\)")):
        ad.grad(lambda z: np.sum(f(z)))(np.array([2.0, 3.0]))
