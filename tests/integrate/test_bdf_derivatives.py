"""BDF's default derivatives: the values BDF's, the derivatives Radau's
(adsim/integrate/_bdf_derivatives.py).

A relaxation oscillator (Van der Pol, mu = 5) sampled before and after its
first jump is the kind of case BDF's own held tangent gets wrong; the default must
agree with an independent accurate derivative (Radau at a tolerance a
thousand times tighter), in forward and reverse mode, on replays of the
recorded tape, and with outputs at every step and event times. The values
stay those of BDF's own solve (``follow_steps=True`` keeps BDF's own
derivatives and the same values).
"""
import numpy as np
import pytest

import adsim
from adsim.integrate import solve_ivp

T_OBS = np.array([1.5, 3.5, 4.5, 6.0])        # the first jump is near t = 5.2


def van_der_pol(t, y, mu):
    x, v = y
    return [v, mu * (1.0 - x * x) * v - x]


def observed(params, method="BDF", rtol=1e-5, **options):
    """x at the observation times, from the initial state and mu in ``params``."""
    x0, v0, mu = params
    sol = solve_ivp(van_der_pol, (0.0, 6.0), [x0, v0], method=method, t_eval=T_OBS,
                    args=(mu,), rtol=rtol, atol=1e-8, **options)
    return sol.y[0]


def crossing(t, y, mu):
    """x falls through zero: the jump (an event that ends the integration)."""
    return y[0]


crossing.terminal, crossing.direction = True, -1
P0 = np.array([2.0, 0.0, 5.0])
DATA = np.array([1.8, 1.5, 1.2, -1.9])


def misfit(params, method="BDF", rtol=1e-5, **options):
    return np.sum((observed(params, method, rtol, **options) - DATA) ** 2)


@pytest.fixture(scope="module")
def tape():
    return adsim.record(misfit, P0)


def test_the_gradient_is_the_exact_solutions(tape):
    """Against Radau at rtol 1e-9 (held; the stiff test set shows it within a
    few rtol of forward sensitivities) at BDF's values: the derivative of the
    exact solution to about 1e-8."""
    residual = observed(P0) - DATA
    accurate = 2 * residual @ adsim.jacobian(lambda p: observed(p, "Radau", 1e-9))(P0)
    # 10 rtol: BDF's own held tangent was 7.8e-4 off here, the default is 1.4e-6
    np.testing.assert_allclose(tape.gradient(P0), accurate, rtol=1e-4,
                               atol=1e-4 * np.abs(accurate).max())


def test_the_values_are_bdfs_and_follow_steps_keeps_its_derivatives(tape):
    followed = adsim.record(lambda p: misfit(p, follow_steps=True), P0)
    assert tape.forward(P0) == followed.forward(P0)
    assert not np.allclose(tape.gradient(P0), followed.gradient(P0), rtol=1e-6)
    assert tape.forward(P0 + 0.01) == followed.forward(P0 + 0.01)


def test_forward_and_reverse_agree(tape):
    direction = np.array([0.3, -0.2, 1.0])
    np.testing.assert_allclose(tape.jvp(P0, direction)[1], tape.gradient(P0) @ direction,
                               rtol=1e-9)


def test_a_replay_at_a_new_point_is_a_fresh_recording(tape):
    p1 = P0 + np.array([0.01, -0.02, 0.2])
    np.testing.assert_allclose(tape.gradient(p1), adsim.grad(misfit)(p1), rtol=1e-9)
    # (SciPy's own solve, outside a recording, differences its Jacobian)
    assert tape.forward(p1) == pytest.approx(misfit(p1), rel=1e-10)


def test_second_derivatives_against_differences_of_the_gradient(tape):
    direction = np.array([0.0, 0.0, 1.0])
    hv = tape.hvp(P0, direction)
    h = 1e-3
    differences = (tape.gradient(P0 + h * direction) - tape.gradient(P0 - h * direction)) / (2 * h)
    np.testing.assert_allclose(hv, differences, rtol=1e-3, atol=1e-3 * np.abs(hv).max())


def test_outputs_at_every_step_and_the_final_time():
    """Without t_eval every BDF step is an output: the derivatives are those
    of Radau's solution at BDF's step times (the end time ``tf`` active)."""
    def final_x(params):
        x0, mu, tf = params
        sol = solve_ivp(van_der_pol, (0.0, tf), [x0, 0.0], method="BDF", args=(mu,),
                        rtol=1e-5, atol=1e-8)
        return sol.y[0, -1]

    def final_x_by_radau(params):
        x0, mu, tf = params
        sol = solve_ivp(van_der_pol, (0.0, tf), [x0, 0.0], method="Radau", t_eval=[tf],
                        args=(mu,), rtol=1e-9, atol=1e-11)
        return sol.y[0, -1]
    p = np.array([2.0, 5.0, 3.0])
    np.testing.assert_allclose(adsim.grad(final_x)(p), adsim.grad(final_x_by_radau)(p),
                               rtol=1e-3)


def test_a_terminal_event_ends_the_outputs():
    """The time x first falls to zero (the jump) and the state there, the last
    output of an integration without t_eval: BDF's values with Radau's
    derivatives, which move with the event."""
    def at_the_jump(params):
        x0, mu = params
        sol = solve_ivp(van_der_pol, (0.0, 8.0), [x0, 0.0], method="BDF", args=(mu,),
                        events=crossing, rtol=1e-5, atol=1e-8)
        assert sol.status == 1
        return sol.t_events[0][0] + sol.t[-1] + 0.1 * sol.y[1, -1]

    def at_the_jump_by_radau(params):
        x0, mu = params
        sol = solve_ivp(van_der_pol, (0.0, 8.0), [x0, 0.0], method="Radau", args=(mu,),
                        t_eval=[8.0], events=crossing, rtol=1e-10, atol=1e-12)
        return 2 * sol.t_events[0][0] + 0.1 * sol.y_events[0][0, 1]
    p = np.array([2.0, 5.0])
    np.testing.assert_allclose(adsim.grad(at_the_jump)(p), adsim.grad(at_the_jump_by_radau)(p),
                               rtol=1e-3)


def test_an_event_before_every_output_time():
    """The jump's time where the event ends the integration before the only
    output time: no output, and the event time's derivative still Radau's."""
    def jump_time(params, method="BDF", rtol=1e-6):
        x0, mu = params
        sol = solve_ivp(van_der_pol, (0.0, 8.0), [x0, 0.0], method=method, args=(mu,),
                        t_eval=[8.0], events=crossing, rtol=rtol, atol=1e-10)
        return sol.t_events[0][0]
    p = np.array([2.0, 5.0])
    g = adsim.grad(jump_time)(p)
    np.testing.assert_allclose(g, adsim.grad(lambda q: jump_time(q, "Radau", 1e-10))(p),
                               rtol=1e-3)
