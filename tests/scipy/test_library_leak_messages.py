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


def test_arrays_made_in_the_function_are_no_active_arguments():
    """np.ones(n) made in the recorded function may be active without a
    derivative: y0 below is no active argument; the rate, in a list longer
    than adsim searches, is what fun returns."""
    class Rate:
        def __init__(self, k):
            self.k = k

    def f(k):
        rates = [Rate(k[0])] * 300
        return scipy.integrate.solve_ivp(lambda t, y: -rates[-1].k * y, (0.0, 1.0),
                                         np.ones(3)).y[0, -1]
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"`scipy.integrate.solve_ivp`: no argument of it has a derivative, "
                             r"but a function it calls \(`<lambda>`\).*args="):
        adsim.grad(f)(K)


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


def test_a_sparse_matrix_of_active_values_where_adsim_does_not_take_one_is_named():
    """quad takes no scipy.sparse matrix of active values (the ODE solvers,
    minimize and checkpoint_loop do): refused naming where it is, with
    what to pass; the advice (the matrix dense) is differentiated."""
    import scipy.sparse as sp
    L = sp.diags([np.ones(3), -2.0 * np.ones(4), np.ones(3)], [-1, 0, 1], format="csr")
    v = np.arange(1.0, 5.0) ** 2

    def in_args(k):
        return scipy.integrate.quad(lambda x, p: (p["L"] @ v)[1] * x, 0.0, 1.0,
                                    args=({"L": k[0] * L},))[0]

    def in_closure(k):
        A = k[0] * L
        return scipy.integrate.quad(lambda x: (A @ v)[1] * x, 0.0, 1.0)[0]

    def dense(k):
        return scipy.integrate.quad(lambda x, A: (A @ v)[1] * x, 0.0, 1.0,
                                    args=((k[0] * L).toarray(),))[0]
    for f, where in ((in_args, "argument `args`"), (in_closure, "read by `<lambda>`")):
        with pytest.raises(adsim.UnsupportedOperation,
                           match=rf"`scipy.integrate.quad` given a scipy.sparse matrix of active "
                                 rf"values \({where}\).*A.toarray\(\)"):
            adsim.grad(f)(K)
    np.testing.assert_allclose(adsim.grad(dense)(K), [(L @ v)[1] / 2.0], rtol=1e-12)
