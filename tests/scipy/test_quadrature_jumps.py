"""quad of integrands that switch where the variable meets a parameter:
the Leibniz rule misses the moving jump's term, so adsim refuses them by
name instead of returning a derivative without it; kinks (continuous) and
jumps at fixed points keep the rule exact and are differentiated."""
import numpy as np
import pytest
import scipy.integrate as si

import adsim
from adsim.errors import UnsupportedOperation
from fdcheck import assert_close


def exercised_fraction(p):
    """Time spent above a threshold p (an indicator through np.where)."""
    return si.quad(lambda t: np.where(np.sin(t) > p[0], 1.0, 0.0), 0.0, np.pi)[0]


def truncated_mean(p):
    """A Python branch on the variable against the parameter."""
    def integrand(x):
        if x < p[0]:
            return x * np.exp(-x)
        return 0.0
    return si.quad(integrand, 0.0, 5.0)[0]


def stepped(p):
    return si.quad(lambda x: np.floor(p[0] * x) * x, 0.0, 1.0)[0]


@pytest.mark.parametrize("f", [exercised_fraction, truncated_mean, stepped])
def test_moving_jumps_are_refused(f):
    with pytest.raises(UnsupportedOperation, match="Leibniz rule.*Split the integral"):
        adsim.grad(f)(np.array([0.3]))


def test_the_split_integral_is_differentiated():
    """truncated_mean written as the refusal says: the switching point is a limit."""
    def split(p):
        return si.quad(lambda x: x * np.exp(-x), 0.0, p[0])[0]

    p = np.array([1.3])
    assert_close(adsim.grad(split)(p), p * np.exp(-p), 1e-10, 0.0, "the boundary term")


def test_kinks_and_fixed_jumps_keep_the_leibniz_rule():
    def call_payoff(p):                 # E[max(S - K, 0)] under an exponential law
        strike, rate = p
        return si.quad(lambda s: np.maximum(s - strike, 0.0) * rate * np.exp(-rate * s),
                       0.0, np.inf)[0]

    def piecewise_source(p):            # a jump at the fixed point x = 0.5
        return si.quad(lambda x: np.where(x < 0.5, p[0] * x, p[1] * np.abs(x - p[0])), 0.0, 1.0,
                       points=[0.5])[0]

    p = np.array([0.8, 1.5])
    strike, rate = p
    exact = [-np.exp(-rate * strike), -(strike + 1.0 / rate) * np.exp(-rate * strike) / rate]
    assert_close(adsim.grad(call_payoff)(p), exact, 1e-8, 0.0, "closed form, reverse")
    assert_close(adsim.jvp(call_payoff, p, np.array([0.3, -0.7]))[1], np.dot(exact, [0.3, -0.7]),
                 1e-8, 0.0, "closed form, forward")
    a, b = 0.7, 1.2                     # 1/8 a + b ((a - 1/2)^2 + (1 - a)^2) / 2
    assert_close(adsim.grad(piecewise_source)(np.array([a, b])),
                 [0.125 + b * (2 * a - 1.5), ((a - 0.5) ** 2 + (1 - a) ** 2) / 2], 0.0, 1e-9,
                 "closed form")


def characteristic_integral(p):
    """A complex square root and power of values depending on the variable
    and the parameters (a Heston-like integrand): no jump, since the
    principal branch is continuous off the negative real axis. The check
    that the base of a complex power is not 0 was a recorded comparison,
    which this rule took for a moving jump and refused."""
    def integrand(u):
        d = np.sqrt(p[0] ** 2 + p[1] ** 2 * (u ** 2 + 1j * u))
        return ((1 + 0.5j * u) ** (-p[0]) * np.exp(-d)).real
    return si.quad(integrand, 0.0, 4.0, epsabs=1e-13, epsrel=1e-13)[0]


def test_complex_roots_and_powers_of_the_variable_and_the_parameters():
    x = np.array([1.2, 0.7])
    g = adsim.grad(characteristic_integral)(x)
    h = 1e-5
    want = np.array([(characteristic_integral(x + e) - characteristic_integral(x - e)) / (2 * h)
                     for e in np.eye(2) * h])
    assert_close(g, want, rtol=1e-7, atol=1e-10, what="gradient")
    _, jv = adsim.jvp(characteristic_integral, (x,), (np.array([0.4, -1.0]),))
    assert_close(jv, g @ np.array([0.4, -1.0]), rtol=1e-10, atol=1e-14, what="jvp vs grad")
    tape = adsim.record(characteristic_integral, x)
    x2 = x * 1.05
    assert_close(tape.forward(x2), characteristic_integral(x2), rtol=1e-12, atol=1e-14,
                 what="replayed value")
    with pytest.raises(adsim.UndefinedDerivative, match="base a is 0"):
        adsim.grad(lambda p: (((p - p) * 1j) ** p[0]).real.sum())(np.array([0.5]))


def noise_bandwidth(p):
    """|H(iw)|^2 of a first-order filter: abs of a complex value of the
    variable and the parameters, whose check for z = 0 was a recorded
    comparison this rule refused."""
    return si.quad(lambda w: abs(p[1] / (1j * w * p[0] + 1)) ** 2 + np.abs(1j * w + p[0]),
                   0.0, 5.0, epsabs=1e-13, epsrel=1e-13)[0]


def test_the_modulus_of_a_complex_transfer_function():
    x = np.array([0.5, 1.3])
    g = adsim.grad(noise_bandwidth)(x)
    h = 1e-5
    want = np.array([(noise_bandwidth(x + e) - noise_bandwidth(x - e)) / (2 * h)
                     for e in np.eye(2) * h])
    assert_close(g, want, rtol=1e-7, atol=1e-10, what="gradient")
    v = np.array([1.0, -0.5])
    hv = adsim.hvp(noise_bandwidth, x, v)
    want = (adsim.grad(noise_bandwidth)(x + h * v) - adsim.grad(noise_bandwidth)(x - h * v)) / (2 * h)
    assert_close(hv, want, rtol=1e-6, atol=1e-9, what="hvp")
