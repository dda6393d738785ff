"""scipy.stats methods added to the distribution table: gumbel_r, gumbel_l,
rayleigh, pareto (every method), beta.isf, and skewnorm.ppf/isf (SciPy's
root of the cdf, differentiated by the implicit function theorem): every
sweep against SciPy's values and central differences in x, loc, scale and
the shapes; a return-level estimate and a quantile fit as written; clear
errors for shape parameters without a derivative."""
import numpy as np
import pytest
import scipy.stats as st

import adsim as ad
from adsim.errors import UnsupportedOperation
from fdcheck import assert_close, check_tape

LOC, SCALE = np.array(0.2), np.array(1.3)
Q = np.array([0.15, 0.3, 0.6, 0.85])
ANYWHERE = np.array([-1.7, -0.2, 0.4, 2.3])
POSITIVE = np.array([0.3, 0.7, 1.2, 2.5])
ABOVE_ONE = LOC + SCALE * np.array([1.1, 1.6, 2.5, 4.0])
METHODS = "pdf logpdf cdf logcdf sf logsf ppf isf".split()

ROWS = {"gumbel_r": (ANYWHERE, []), "gumbel_l": (ANYWHERE, []), "rayleigh": (POSITIVE, []),
        "pareto": (ABOVE_ONE, [np.array(2.5)])}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(ROWS))
def test_new_distributions_every_method_every_sweep(name, method):
    points, shapes = ROWS[name]
    dist = getattr(st, name)
    x = Q if method in ("ppf", "isf") else points

    def f(x, loc, scale, *s):
        return getattr(dist, method)(x, *s, loc=loc, scale=scale)
    check_tape(f, [x, LOC, SCALE] + shapes, rtol=1e-6, atol=1e-8, value_rtol=1e-12)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_new_distributions_entropy(name):
    dist, shapes = getattr(st, name), ROWS[name][1]
    check_tape(lambda loc, scale, *s: dist.entropy(*s, loc=loc, scale=scale),
               [LOC, SCALE] + shapes, rtol=1e-6, value_rtol=1e-12)


@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_skewnorm_quantiles_by_the_implicit_function_theorem(method):
    def f(q, a, loc, scale):
        return getattr(st.skewnorm, method)(q, a, loc=loc, scale=scale)
    check_tape(f, [Q, np.array(1.5), LOC, SCALE], rtol=1e-6, atol=1e-8, value_rtol=1e-12)
    a = np.array([-2.0, 0.5, 3.0])                    # several shapes, broadcast
    check_tape(lambda q, a: getattr(st.skewnorm, method)(q[:, None], a), [Q, a], rtol=1e-6,
               atol=1e-8, value_rtol=1e-12)


def test_beta_isf_in_the_quantile_loc_and_scale():
    check_tape(lambda q, loc, scale: st.beta.isf(q, 2.0, 3.5, loc=loc, scale=scale),
               [Q, LOC, SCALE], rtol=1e-6, value_rtol=1e-12)


def test_return_level_of_annual_maxima():
    """The 100-year return level of a Gumbel fit, z = gumbel_r.isf(1/100),
    and its sensitivity to the fitted location and scale (the delta method)."""
    def return_level(theta):
        return st.gumbel_r.isf(0.01, loc=theta[0], scale=np.exp(theta[1]))
    theta = np.array([31.0, np.log(4.2)])
    g = ad.grad(return_level)(theta)
    assert_close(g, [1.0, -np.log(-np.log(0.99)) * 4.2], rtol=1e-12)


def test_quantile_matching_of_a_skewed_error_model():
    """Fit a skew-normal error model so that its quartiles match observed
    ones: a least-squares loss of ppf values in (shape, loc, log scale)."""
    observed = np.array([-0.31, 0.12, 0.71])

    def loss(theta):
        q = st.skewnorm.ppf([0.25, 0.5, 0.75], theta[0], loc=theta[1], scale=np.exp(theta[2]))
        return np.sum((q - observed) ** 2)
    check_tape(loss, [np.array([1.2, -0.1, -0.4])], rtol=1e-6)


@pytest.mark.parametrize("f, words", [
    (lambda a: st.gamma.cdf(1.3, a), "shape parameter a"),
    (lambda df: st.t.ppf(0.3, df), "shape parameter df"),
    (lambda b: st.beta.isf(0.3, 2.0, b), "shape parameter b"),
])
def test_shapes_without_a_derivative_are_refused_by_name(f, words):
    with pytest.raises(UnsupportedOperation, match=words):
        ad.grad(f)(np.array(2.5))
