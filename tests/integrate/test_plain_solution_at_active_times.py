"""A solution SciPy computed (plain numbers, ``dense_output=True``)
evaluated inside a recording at times that move with the parameters (a lag
time fitted against data, say): ``sol.sol(t)`` is the interpolant of the
step SciPy's search chooses, its derivative in ``t`` the interpolant's
slope, for every method, at one time, at an array of times in any order
and at a step's end; a replay where a time moves into another step stops
there, and the functional API records again."""
import numpy as np
import pytest
import scipy.integrate

import adsim

from fdcheck import assert_same_to_rounding


def lv(t, z, a, b):
    return [a * z[0] - b * z[0] * z[1], -z[1] + b * z[0] * z[1]]


METHODS = ["RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA"]
T_OBS = np.array([0.7, 2.0, 1.3, 3.3, 4.9])
SHIFT = np.array([0.05])


def solved(method):
    return scipy.integrate.solve_ivp(lv, (0.0, 5.0), [1.0, 0.5], method=method, args=(1.1, 0.7),
                                     dense_output=True, rtol=1e-6)


def lagged_loss(sol):
    """A misfit at observation times moved by a lag, and the state at 2.5
    plus the lag."""
    return lambda lag: np.sum(sol(T_OBS - lag) ** 2) + np.sum(sol(lag[0] + 2.5))


def differences(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("method", METHODS)
def test_derivatives_are_the_interpolants_slopes(method):
    sol = solved(method).sol
    loss = lagged_loss(sol)
    tape = adsim.record(loss, SHIFT)
    assert np.isclose(tape.forward(SHIFT), loss(SHIFT), rtol=1e-14, atol=0)   # SciPy's numbers
    g = tape.gradient(SHIFT)
    np.testing.assert_allclose(g, differences(loss, SHIFT), rtol=1e-7)
    assert abs(tape.jvp(SHIFT, np.ones(1))[1] - g[0]) <= 1e-12 * abs(g[0])
    hv = tape.hvp(SHIFT, np.ones(1))
    np.testing.assert_allclose(hv, differences(tape.gradient, SHIFT, 1e-5), rtol=1e-5)


@pytest.mark.parametrize("method", ["RK45", "LSODA"])
def test_a_time_at_a_step_end(method):
    """At a knot the step that ends there is chosen (SciPy's rule); the
    slope is that step's interpolant's, finite."""
    sol = solved(method).sol
    knot = sol.ts[3]
    jacobian = adsim.jacobian(lambda t: sol(t))(np.array(knot))
    assert np.all(np.isfinite(jacobian))
    left = scipy.integrate.solve_ivp(lv, (0.0, 5.0), [1.0, 0.5], method=method, args=(1.1, 0.7),
                                     dense_output=True, rtol=1e-6).sol.interpolants[2]
    np.testing.assert_allclose(jacobian, (left(knot) - left(knot - 1e-7)) / 1e-7, rtol=1e-5)


def test_a_replay_into_another_step_is_detected():
    sol = solved("RK45").sol
    loss = lagged_loss(sol)
    tape = adsim.record(loss, SHIFT)
    far = SHIFT + 0.5           # every observation time moves into another step
    with pytest.raises(adsim.BranchChanged):
        tape.forward(far)
    value, gradient = adsim.value_and_grad(loss)(far)
    assert value == loss(far)
    fresh = adsim.record(loss, far)
    assert_same_to_rounding(gradient, fresh.gradient(far), 0.0)
