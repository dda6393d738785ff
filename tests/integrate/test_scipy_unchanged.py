"""scipy.integrate.solve_ivp and odeint called unchanged inside a recording
are adsim's (adsim/_scipy/integrate.py): active arguments, or active values
the right-hand side reads from a closure, make them differentiable; plain
calls stay SciPy's."""
import numpy as np
import scipy.integrate

import adsim
from adsim.integrate import solve_ivp as adsim_solve_ivp

Y0 = np.array([1.0, 2.0])
T = [0.5, 1.0]


def test_closure_over_active_rates():
    def loss(k):
        sol = scipy.integrate.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), Y0, t_eval=T,
                                        rtol=1e-10, atol=1e-12)
        return np.sum(sol.y[:, -1])
    k = np.array([0.7, 0.3])
    np.testing.assert_allclose(adsim.grad(loss)(k), -np.exp(-k) * Y0, rtol=1e-8)


def test_active_arguments_give_adsims_steps():
    def decay(t, y, k):
        return -k * y * (1.0 + 0.1 * np.sin(t))

    def loss(y0, k, solver):
        return np.sum(solver(decay, (0.0, 2.0), y0, args=(k,), t_eval=T, rtol=1e-8).y ** 2)
    k = np.array([0.4])
    ours = adsim.grad(loss, argnums=(0, 1))(Y0, k, adsim_solve_ivp)
    unchanged = adsim.grad(loss, argnums=(0, 1))(Y0, k, scipy.integrate.solve_ivp)
    for a, b in zip(ours, unchanged):
        np.testing.assert_array_equal(a, b)


def test_plain_calls_inside_a_recording_stay_scipys():
    def f(y0):
        plain = scipy.integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0])
        assert isinstance(plain.y, np.ndarray)
        return np.sum(y0) * plain.y[0, -1]
    assert adsim.grad(f)(Y0)[0] == scipy.integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0),
                                                             [1.0]).y[0, -1]


def test_odeint_on_active_values_is_adsims():
    """scipy.integrate.odeint with active arguments, or a func reading an
    active rate from its closure, is adsim.integrate.odeint (its tests:
    tests/integrate/test_odeint.py)."""
    t = [0.0, 1.0]
    k = np.array([0.5])
    np.testing.assert_allclose(
        adsim.grad(lambda y0: np.sum(scipy.integrate.odeint(lambda y, t: -y, y0, t)))(Y0),
        [1.0 + np.exp(-1.0)] * 2, rtol=1e-7)
    np.testing.assert_allclose(
        adsim.grad(lambda k: np.sum(scipy.integrate.odeint(lambda y, t: -k * y, Y0, t)))(k),
        -np.sum(Y0) * np.exp(-k), rtol=1e-7)
