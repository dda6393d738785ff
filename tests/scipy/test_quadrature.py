"""scipy.integrate.quad, quad_vec and fixed_quad called unchanged with
active integrand parameters (in args=, read from a closure, an object, a
global) and active limits: every sweep against central differences and
closed forms, forward against reverse, hvp against differences of the
gradient, replays at new points (the quadrature runs again), and the
programs scientists write with them."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.stats as st

import adsim as ad
from adsim.errors import UnsupportedOperation
from fdcheck import assert_close, check_tape

P0 = np.array([0.7, 1.3])


def decaying_wave(p):
    """int_0^{p1} sin(p0 s) exp(-p1 s) ds: a parameter in args=, another in
    the closure and in the upper limit."""
    value, _ = si.quad(lambda s, k: np.sin(k * s) * np.exp(-p[1] * s), 0.0, p[1], args=(p[0],))
    return value


def closed_form(p):
    """The same integral in closed form: Im int_0^T exp((-c + i k) s) ds."""
    k, c = p
    z = complex(-c, k)
    return ((np.exp(z * c) - 1.0) / z).imag


def test_quad_value_is_scipys_and_matches_the_closed_form():
    tape = ad.record(decaying_wave, P0)
    assert tape.forward(P0) == decaying_wave(P0)
    assert_close(tape.forward(P0), closed_form(P0), rtol=1e-12)


def test_quad_every_sweep():
    check_tape(decaying_wave, [P0], rtol=1e-6, atol=1e-8)


def test_quad_gradient_is_the_closed_forms_and_replays_at_new_points():
    tape = ad.record(decaying_wave, P0)
    for p in (P0, np.array([2.1, 0.4]), np.array([-0.3, 2.5])):
        want = [(closed_form(p + 1e-6 * e) - closed_form(p - 1e-6 * e)) / 2e-6
                for e in np.eye(2)]
        assert_close(tape.gradient(p), want, rtol=1e-7, atol=1e-9)
        assert_close(ad.grad(decaying_wave)(p), want, rtol=1e-7, atol=1e-9)
        assert_close(tape.forward(p), closed_form(p), rtol=1e-12)


def test_quad_lower_limit_and_infinite_upper_limit():
    def tail(p):         # int_{p0}^inf exp(-p1 x^2) dx
        return si.quad(lambda x: np.exp(-p[1] * x * x), p[0], np.inf)[0]

    def exact(p):
        return np.sqrt(np.pi / p[1]) * st.norm.sf(p[0] * np.sqrt(2.0 * p[1]))
    assert_close(tail(P0), exact(P0), rtol=1e-9)
    g = ad.grad(tail)(P0)
    want = [(exact(P0 + 1e-6 * e) - exact(P0 - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    assert_close(g, want, rtol=1e-6, atol=1e-9)
    v = np.array([0.4, -0.9])
    assert_close(ad.jvp(tail, P0, v)[1], np.dot(want, v), rtol=1e-6)
    tape = ad.record(tail, P0)
    p = np.array([0.2, 0.8])
    assert_close(tape.gradient(p), [(exact(p + 1e-6 * e) - exact(p - 1e-6 * e)) / 2e-6
                                    for e in np.eye(2)], rtol=1e-6, atol=1e-9)


class Spectrum:
    """A model object whose method is the integrand (a parameter read as
    ``self.width``)."""

    def __init__(self, width):
        self.width = width

    def density(self, w):
        return np.exp(-(w / self.width) ** 2) * w ** 2


def test_quad_integrand_bound_method_and_points():
    def energy(theta):
        model = Spectrum(np.exp(theta[0]))
        return si.quad(model.density, -3.0, 3.0, points=[0.0])[0] * theta[1]
    theta = np.array([0.2, 1.5])
    check_tape(energy, [theta], rtol=1e-6, atol=1e-8, order=1)


def test_expected_value_under_a_distribution_by_quad():
    """E[x^2] under N(mu, sigma) by quad over the density, as written in a
    likelihood-free calibration: mu^2 + sigma^2."""
    def second_moment(theta):
        mu, sigma = theta[0], np.exp(theta[1])
        return si.quad(lambda x: x ** 2 * st.norm.pdf(x, mu, sigma), -np.inf, np.inf)[0]
    theta = np.array([0.4, -0.2])
    assert_close(second_moment(theta), theta[0] ** 2 + np.exp(2 * theta[1]), rtol=1e-9)
    assert_close(ad.grad(second_moment)(theta),
                 [2 * theta[0], 2 * np.exp(2 * theta[1])], rtol=1e-7)
    v = np.array([0.3, -0.8])
    assert_close(ad.hvp(second_moment, theta, v), [2 * v[0], 4 * np.exp(2 * theta[1]) * v[1]],
                 rtol=1e-6)


def test_quad_vec_vector_integrand():
    def moments(p):
        return si.quad_vec(lambda x: np.array([1.0, x, x * x]) * np.exp(-p[0] * x), 0.0,
                           p[1])[0]
    check_tape(moments, [P0], rtol=1e-6, atol=1e-8)


def test_quad_vec_args_keyword():
    def f(p):
        return si.quad_vec(lambda x, a: np.sin(a * x), 0.0, 1.0, args=(p,))[0]
    check_tape(f, [np.array([0.5, 1.5, 2.0])], rtol=1e-6, atol=1e-8, order=1)


@pytest.mark.parametrize("n", [3, 5, 8])
def test_fixed_quad_is_the_recorded_gauss_sum(n):
    def f(p):
        return si.fixed_quad(lambda x: np.cos(p[0] * x) / (1.0 + x * x), 0.0, p[1], n=n)[0]
    assert ad.record(f, P0).forward(P0) == pytest.approx(f(P0), rel=1e-14)
    check_tape(f, [P0], rtol=1e-7, atol=1e-9)


def test_plain_calls_stay_scipys():
    assert si.quad(np.sin, 0.0, 1.0) == si.quad(lambda x: np.sin(x), 0.0, 1.0)
    assert ad.grad(lambda p: p[0] * si.quad(np.cos, 0.0, 1.0)[0])(P0)[0] == \
        pytest.approx(np.sin(1.0), rel=1e-14)


def test_refused_options_name_themselves():
    with pytest.raises(UnsupportedOperation, match="weight"):
        ad.grad(lambda p: si.quad(lambda x: p[0] * x, 0.0, 1.0, weight="cos", wvar=2.0)[0])(P0)
    with pytest.raises(UnsupportedOperation, match="quad_vec"):
        ad.grad(lambda p: si.quad(lambda x: p * x, 0.0, 1.0)[0])(P0)
    params = {}

    def f(p):
        params["k"] = p[0]
        return si.quad(lambda x: params["k"] * x, 0.0, 1.0)[0]
    with pytest.raises(UnsupportedOperation, match="dict"):
        ad.grad(f)(P0)


def test_explicit_namespace_with_interposition_off():
    import adsim.scipy.integrate as asi

    def wave(p):
        return asi.quad(lambda s, k: np.sin(k * s) * np.exp(-p[1] * s), 0.0, p[1],
                        args=(p[0],))[0]
    with ad.interposition(False):
        g = ad.grad(wave)(P0)
    assert_close(g, ad.grad(decaying_wave)(P0), rtol=1e-12)


def test_double_integral_by_dblquad_and_by_nested_quad():
    """int_0^1 int_0^{p1} exp(-p0 x y) dy dx, as dblquad and as a quad inside
    the integrand of a quad."""
    def by_dblquad(p):
        return si.dblquad(lambda y, x: np.exp(-p[0] * x * y), 0.0, 1.0, 0.0, p[1])[0]

    def nested(p):
        return si.quad(lambda x: si.quad(lambda y: np.exp(-p[0] * x * y), 0.0, p[1])[0],
                       0.0, 1.0)[0]
    want = [(by_dblquad(P0 + 1e-6 * e) - by_dblquad(P0 - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    assert_close(ad.grad(by_dblquad)(P0), want, rtol=1e-6)
    assert_close(ad.grad(nested)(P0), want, rtol=1e-6)


def test_parameter_derivative_matches_the_complex_step():
    """quad integrates complex integrands (complex_func=True): the complex
    step through SciPy's own quadrature is a reference free of differences;
    the derivative integral agrees to the quadrature's tolerance."""
    def integral(k, complex_func=False):
        return si.quad(lambda s: np.exp(-k * s * s) * np.cos(s), 0.0, 2.0,
                       complex_func=complex_func, epsabs=1e-13, epsrel=1e-13)[0]
    k = 0.8
    reference = np.imag(integral(k + 1e-20j, complex_func=True)) / 1e-20
    assert ad.grad(lambda k: integral(k))(np.array(k)) == pytest.approx(reference, rel=1e-11)
