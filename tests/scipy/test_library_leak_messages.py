"""A SciPy function adsim has no rule for, turning an active value into a
plain array, is refused by name with what really happened: its active
argument, or -- when none of its arguments is active -- the active value a
function it calls returned (read from a closure), with what to use instead."""
import numpy as np
import pytest
import scipy.differentiate
import scipy.integrate

import adsim
from adsim._scipy.hooks import has_rule

K = np.array([0.5])


def test_an_integrand_returning_an_active_value_is_named_with_what_to_use():
    def f(k):
        return scipy.integrate.tanhsinh(lambda x: np.exp(-k[0] * x), 0.0, 1.0).integral
    with pytest.raises(adsim.UnsupportedOperation) as err:
        adsim.grad(f)(K)
    message = str(err.value)
    assert "`scipy.integrate.tanhsinh`: no argument of it has a derivative, but a function it " \
        "calls (`f`) returned an active value" in message
    assert "adsim has no rule for `scipy.integrate.tanhsinh`: use scipy.integrate.quad" in message
    assert "turns its active argument" not in message


def test_a_derivative_of_a_closure_says_to_differentiate_it_with_adsim():
    def f(k):
        return scipy.differentiate.derivative(lambda x: np.sin(k[0] * x), 0.3).df
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"`scipy.differentiate.derivative`: no argument of it has a "
                             r"derivative.*adsim.grad, adsim.jvp or adsim.jacobian"):
        adsim.grad(f)(K)


def test_the_advice_for_quad_works():
    def f(k):
        return scipy.integrate.quad(lambda x: np.exp(-k[0] * x), 0.0, 1.0)[0]
    want = -(1 - np.exp(-0.5) * 1.5) / 0.25         # d/dk (1 - e^-k) / k at k = 0.5
    np.testing.assert_allclose(adsim.grad(f)(K), [want], rtol=1e-8)


def test_an_active_argument_is_named_as_before():
    def f(k):
        return scipy.integrate.tanhsinh(np.exp, 0.0, k[0]).integral
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"`scipy.integrate.tanhsinh`: it turns its active argument"):
        adsim.grad(f)(K)


def test_which_functions_have_rules():
    assert has_rule("scipy.integrate.quad") and has_rule("scipy.integrate.solve_ivp")
    assert not has_rule("scipy.integrate.tanhsinh") and not has_rule("numpy.sum")
