"""Parameters that ``fun`` finds outside its arguments -- an object's
attribute through a lambda, a bound method, a callable object, a list of
objects, a module global, functools.partial (passed, or held in a
closure) -- are inputs of the
integration with every method of solve_ivp and with odeint, called through
SciPy's names as users write them: the derivatives are right, replays at new parameters are right, and
the places hold the caller's values again afterwards."""
import functools

import numpy as np
import pytest
from scipy.integrate import odeint, solve_ivp

import adsim

METHODS = ("RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA", "odeint")
Y0 = np.array([1.0, 2.0])
T = 1.0


def exact_loss(k):
    """sum of y(T) for y' = -k y: (1 + 2) exp(-k T)."""
    return 3.0 * np.exp(-k * T)


def exact_gradient(k):
    return -3.0 * T * np.exp(-k * T)


class Decay:
    def __init__(self, k):
        self.k = k

    def rhs(self, t, y):
        return -self.k * y

    def __call__(self, t, y):
        return -self.k * y


class Species:
    def __init__(self, rate):
        self.rate = rate


class Network:
    def __init__(self, rates):
        self.species = [Species(r) for r in rates]

    def rhs(self, t, y):
        return np.stack([-s.rate * yi for s, yi in zip(self.species, y)])


_RATE = None


def _decay_with_global_rate(t, y):
    return -_RATE * y


def _decay_of(k, t, y):
    return -k * y


def _final_state(fun, method):
    """y(T) by ``scipy.integrate.solve_ivp(fun, ...)`` with ``method``, or by
    ``scipy.integrate.odeint(fun, ..., tfirst=True)``, as a user calls them."""
    if method == "odeint":
        return odeint(fun, Y0, [0.0, T], tfirst=True, rtol=1e-9, atol=1e-10)[-1]
    return solve_ivp(fun, (0, T), Y0, method=method, rtol=1e-7, atol=1e-10).y[:, -1]


def _with_lambda_on_object(k, method):
    model = Decay(k)
    return _final_state(lambda t, y: -model.k * y, method)


def _with_bound_method(k, method):
    return _final_state(Decay(k).rhs, method)


def _with_callable_object(k, method):
    return _final_state(Decay(k), method)


def _with_list_of_objects(k, method):
    return _final_state(Network([k, k]).rhs, method)


def _with_global(k, method):
    global _RATE
    _RATE = k
    try:
        return _final_state(_decay_with_global_rate, method)
    finally:
        _RATE = None


def _with_partial(k, method):
    return _final_state(functools.partial(_decay_of, k), method)


def _with_lambda_calling_a_partial(k, method):
    f = functools.partial(_decay_of_keyword, k=k)        # a partial held in a closure
    return _final_state(lambda t, y: f(t, y), method)


def _decay_of_keyword(t, y, k):
    return -k * y


FORMS = [_with_lambda_on_object, _with_bound_method, _with_callable_object,
         _with_list_of_objects, _with_global, _with_partial, _with_lambda_calling_a_partial]


# Where fun finds the parameter (how adsim's walk of fun reaches it) does not
# depend on the method: every form with an explicit and an implicit method,
# every method with two forms (the walk's two ways: attributes and globals).
CASES = [(form, method) for form in FORMS for method in ("RK45", "Radau")] + \
    [(form, method) for method in METHODS if method not in ("RK45", "Radau")
     for form in (_with_bound_method, _with_global)]


@pytest.mark.parametrize("form, method", CASES,
                         ids=[f"{f.__name__[len('_with_'):]}-{m}" for f, m in CASES])
def test_a_parameter_read_outside_the_arguments_is_an_input(form, method):
    def loss(k):
        return np.sum(form(k, method))
    k = np.array(0.7)
    value, g = adsim.value_and_grad(loss)(k)
    assert value == pytest.approx(exact_loss(0.7), rel=1e-6)
    assert g == pytest.approx(exact_gradient(0.7), rel=1e-5)
    # forward mode agrees with reverse mode
    _, tangent = adsim.jvp(loss, (k,), (np.array(1.0),))
    assert tangent == pytest.approx(g, rel=1e-10)
    # at a new parameter the functional API records again where the steps
    # differ, and the value read from outside is the new one
    assert adsim.grad(loss)(np.array(0.4)) == pytest.approx(exact_gradient(0.4), rel=1e-5)


def test_the_places_hold_the_callers_values_afterwards():
    model = Decay(0.5)
    network = Network([0.5, 0.25])
    seen = []

    def loss(k):
        model.k = k
        network.species[1].rate = k
        a = solve_ivp(model.rhs, (0, T), Y0, rtol=1e-8)
        b = solve_ivp(network.rhs, (0, T), Y0, method="Radau", rtol=1e-8)
        seen.append((model.k is k, network.species[1].rate is k,
                     network.species[0].rate == 0.5))
        return np.sum(a.y[:, -1]) + np.sum(b.y[:, -1])
    adsim.grad(loss)(np.array(0.7))
    assert seen == [(True, True, True)]


def test_a_frozen_dataclass_of_parameters():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Rates:
        k: object

        def rhs(self, t, y):
            return -self.k * y

    def loss(k):
        return np.sum(solve_ivp(Rates(k).rhs, (0, T), Y0, method="BDF", rtol=1e-7,
                                atol=1e-10).y[:, -1])
    assert adsim.grad(loss)(np.array(0.7)) == pytest.approx(exact_gradient(0.7), rel=1e-5)


def test_a_nested_jacobian_of_a_function_reading_a_global():
    def loss(k):
        global _RATE
        _RATE = k
        try:
            J = adsim.jacobian(lambda y: _decay_with_global_rate(0.0, y))(Y0 * k)
        finally:
            _RATE = None
        return np.sum(J)
    # J = -k I, so sum(J) = -2 k, whose derivative is -2 (the y-dependence is linear)
    assert adsim.grad(loss)(np.array(0.7)) == pytest.approx(-2.0, rel=1e-14)


def test_a_checkpointed_step_reading_an_object_attribute():
    class Stepper:
        def __init__(self, rate):
            self.rate = rate

        def step(self, z):
            return z * self.rate

    def loss(k):
        return np.sum(adsim.checkpoint_loop(Stepper(k).step, np.ones(2), 4))
    k = np.array(1.1)
    assert adsim.grad(loss)(k) == pytest.approx(2 * 4 * 1.1 ** 3, rel=1e-14)
    # the attribute is an input of the loop: a replay at a new value uses it
    tape = adsim.record(loss, k)
    assert tape.forward(np.array(0.5)) == pytest.approx(2 * 0.5 ** 4, rel=1e-14)
    assert tape.gradient(np.array(0.5)) == pytest.approx(2 * 4 * 0.5 ** 3, rel=1e-14)


def test_odeint_with_a_bound_method_reading_its_parameters():

    class SIR:
        def __init__(self, beta, gamma):
            self.beta, self.gamma = beta, gamma

        def deriv(self, y, t):
            S, I, R = y
            return np.stack([-self.beta * S * I, self.beta * S * I - self.gamma * I,
                             self.gamma * I])
    t = np.linspace(0, 10, 11)

    def loss(p):
        model = SIR(p[0], p[1])
        return np.sum(odeint(model.deriv, [0.99, 0.01, 0.0], t, rtol=1e-11, atol=1e-12)[:, 1])
    p = np.array([1.5, 0.3])
    h = 1e-5
    differences = [(loss(p + h * e) - loss(p - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(adsim.grad(loss)(p), differences, rtol=1e-6)


def test_a_parameter_in_a_place_not_searched_is_refused_with_what_to_do():
    """A list of 300 objects each holding its rate is longer than the
    search goes (adsim/_nesting/outer_values.py): the refusal names the
    places searched and says to pass the values through args=."""
    def loss(k):
        network = Network(k * np.linspace(1.0, 2.0, 300))
        return np.sum(solve_ivp(network.rhs, (0, T), np.ones(300)).y[:, -1])
    with pytest.raises(adsim.UnsupportedOperation, match=r"(?s)up to 256 entries.*args="):
        adsim.grad(loss)(np.array(0.7))
