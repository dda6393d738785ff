"""Parameters in a dict, list or tuple passed through ``args=``: the
right-hand side, its Jacobian and the events get the container as given,
and the derivatives reach every active value in it."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp

T_OBS = np.linspace(2.0, 40.0, 8)


def sir(t, y, p):
    S, I, R = y
    infection = p["beta"] * S * I / p["N"]
    return [-infection, infection - p["rates"][0] * I, p["rates"][0] * I]


def sir_jacobian(t, y, p):
    S, I, _ = y
    b, g, N = p["beta"], p["rates"][0], p["N"]
    return np.array([[-b * I / N, -b * S / N, 0.0],
                     [b * I / N, b * S / N - g, 0.0],
                     [0.0, g, 0.0]])


def peak(t, y, p):
    return p["beta"] * y[0] / p["N"] - p["rates"][0]      # dI/dt changes sign


peak.direction = -1.0


def params(theta):
    return {"beta": theta[0], "rates": [theta[1]], "N": 1000.0}


@pytest.mark.parametrize("method, jac", [("RK45", None), ("Radau", sir_jacobian),
                                         ("BDF", None)])
def test_a_dict_of_parameters_in_args(method, jac):
    theta = np.array([0.3, 0.1])
    options = dict(t_eval=T_OBS, method=method, rtol=1e-10, atol=1e-10, events=peak)
    if jac is not None:
        options["jac"] = jac

    def loss(theta):
        sol = solve_ivp(sir, (0.0, 40.0), [990.0, 10.0, 0.0], args=(params(theta),), **options)
        return np.sum(sol.y[1] ** 2) + 100.0 * sol.t_events[0][0]
    reference = scipy_solve_ivp(sir, (0.0, 40.0), [990.0, 10.0, 0.0], args=(params(theta),),
                                **options)
    ours = solve_ivp(sir, (0.0, 40.0), [990.0, 10.0, 0.0], args=(params(theta),), **options)
    np.testing.assert_allclose(ours.y, reference.y, rtol=1e-7)
    g = adsim.grad(loss)(theta)
    eps = 1e-7
    fd = [(loss(theta + eps * e) - loss(theta - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-5)


@pytest.mark.parametrize("method", ["RK45", "BDF"])
def test_a_dict_of_parameters_read_from_the_closure(method):
    theta = np.array([0.3, 0.1])

    def loss(theta):
        p = params(theta)
        sol = solve_ivp(lambda t, y: sir(t, y, p), (0.0, 40.0), [990.0, 10.0, 0.0],
                        t_eval=T_OBS, method=method, rtol=1e-10, atol=1e-10)
        return np.sum(sol.y[1] ** 2)

    def with_args(theta):
        sol = solve_ivp(sir, (0.0, 40.0), [990.0, 10.0, 0.0], args=(params(theta),),
                        t_eval=T_OBS, method=method, rtol=1e-10, atol=1e-10)
        return np.sum(sol.y[1] ** 2)
    np.testing.assert_array_equal(adsim.grad(loss)(theta), adsim.grad(with_args)(theta))
    assert loss(theta) == with_args(theta)
