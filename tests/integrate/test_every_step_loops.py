"""solve_ivp without t_eval inside a recording: every accepted step is an
output. The steps' times and solutions travel in the state of loops of up
to MAX_ROWS accepted steps (or, for large systems, the attempts up to each
accepted step are one loop); the call's loops share one recorded step,
which replays in C. The values are SciPy's steps; derivatives agree with
those of the same integration recorded step by step (adsim's outputs at
SciPy's times, the times held), with the loop per accepted step, with
central differences where the step sequence does not change, across
modes; the tape saves and replays bitwise; a replay whose steps are those
of the recording records nothing again, and one whose step count differs
records again."""
import numpy as np
import pytest
import scipy.integrate

import adsim
from adsim.integrate import _carried, solve_ivp
from fdcheck import central
from tapefile_replays import assert_same_replays, callback_kinds, copies

P = np.array([1.1, 0.4])
Y0 = np.array([1.0, 0.5])
V = np.array([0.3, -0.2])


def lotka_volterra(t, y, a, b):
    return np.stack([a * y[0] - b * y[0] * y[1], -y[1] + b * y[0] * y[1]])


def every_step(method, rtol=1e-6):
    def loss(p):
        sol = solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method, args=(p[0], p[1]),
                        rtol=rtol, atol=1e-9)
        return np.sum(sol.y ** 2 * np.arange(sol.y.shape[1])) + np.sum(sol.t * sol.y[0])
    return loss


METHODS = ["RK45", "DOP853", "Radau", "BDF"]


@pytest.mark.parametrize("method", METHODS)
def test_outputs_are_scipys_steps(method):
    tape = adsim.record(lambda p: solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method,
                                            args=(p[0], p[1]), rtol=1e-6, atol=1e-9).y, P)
    assert "adsim.checkpoint_loop" in callback_kinds(tape)
    want = scipy.integrate.solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method,
                                     args=tuple(P), rtol=1e-6, atol=1e-9).y
    got = tape.forward(P)
    assert got.shape == want.shape
    # the recorded ops round otherwise than NumPy's (compiled kernels, fused
    # multiply-adds), and the step control amplifies it, as recorded step by step
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("method", METHODS)
def test_derivatives_agree_across_modes_and_with_t_eval_at_the_same_times(method):
    """The outputs at the accepted steps are differentiated with the step
    times held (docs/integrate.md): the same derivatives as the outputs
    at those times given as t_eval (interpolated at the steps' ends)."""
    loss = every_step(method)
    times = scipy.integrate.solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method,
                                      args=tuple(P), rtol=1e-6, atol=1e-9).t

    def at_times(p):
        sol = solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method, args=(p[0], p[1]),
                        rtol=1e-6, atol=1e-9, t_eval=times)
        return np.sum(sol.y ** 2 * np.arange(sol.y.shape[1])) + np.sum(times * sol.y[0])
    g = adsim.grad(loss)(P)
    np.testing.assert_allclose(g, adsim.grad(at_times)(P), rtol=1e-7)
    assert adsim.jvp(loss, (P,), (V,))[1] == pytest.approx(g @ V, rel=1e-12)
    np.testing.assert_allclose(adsim.hvp(loss, P, V), adsim.hvp(at_times, P, V), rtol=1e-7)


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_the_final_state_against_differences(method):
    def final(p):
        sol = solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method, args=(p[0], p[1]),
                        rtol=1e-10, atol=1e-12)
        return np.sum(sol.y[:, -1] ** 2)
    # tight tolerances: the held step sizes move the final state by about rtol
    assert adsim.grad(final)(P) @ V == pytest.approx(central(final, [P], [V], h=1e-6),
                                                     rel=1e-6)


def test_replays_on_the_recorded_steps_record_nothing_again(tmp_path):
    tape = adsim.record(every_step("Radau"), P)
    assert_same_replays(tape, copies(tape, tmp_path), [(P,), (P * (1 + 1e-9),)],
                        methods=["forward", "gradient", "hvp"])


def ball(t, y, g, c):
    return np.stack([y[1], -g - c * y[1] * np.abs(y[1])])


def ground(t, y, g, c):
    return y[0]


def apex(t, y, g, c):
    return y[1]


ground.terminal, ground.direction = True, -1


def thrown(method):
    def loss(p):
        sol = solve_ivp(ball, (0.0, 10.0), np.array([1.0, 5.0]), args=(p[0], p[1]),
                        events=[ground, apex], method=method, rtol=1e-9, atol=1e-11)
        return np.sum(sol.y[0] ** 2 * np.sqrt(sol.t)) + sol.t[-1] ** 2 + \
            sol.t_events[1][0] * sol.y_events[1][0][0] + sol.y[1, -1]
    return loss


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("problem", ["every_step", "thrown"])
def test_step_rows_give_the_derivatives_of_a_loop_per_step(method, problem, monkeypatch):
    """Loops of rows (several of them: more than MAX_ROWS steps; with an
    event ending a loop early, and a terminal one ending the integration)
    against a loop per accepted step, the path before the rows."""
    loss, p = (every_step(method, 1e-11), P) if problem == "every_step" else \
        (thrown(method), np.array([9.81, 0.1]))
    v = np.array([1.0, -2.0])
    tape = adsim.record(loss, p)
    steps = scipy.integrate.solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method,
                                      args=tuple(P), rtol=1e-11, atol=1e-9).t.size
    assert problem != "every_step" or steps > _carried.MAX_ROWS       # several loops
    rows = (tape.forward(p), tape.gradient(p), adsim.hvp(loss, p, v))
    monkeypatch.setattr(_carried, "MAX_ROWS", 1)        # too few rows: a loop per step
    per_step = adsim.record(loss, p)
    np.testing.assert_allclose(rows[0], per_step.forward(p), rtol=1e-14)
    np.testing.assert_allclose(rows[1], per_step.gradient(p), rtol=1e-12)
    np.testing.assert_allclose(rows[2], adsim.hvp(loss, p, v), rtol=1e-12)


def test_a_replay_whose_step_count_differs_records_again():
    loss = every_step("RK45")
    g = adsim.grad(loss)
    g(P)
    for q in (P * 1.2, P * 0.8):
        want = adsim.grad(every_step("RK45"))(q)      # a fresh recording at q
        np.testing.assert_array_equal(g(q), want)
        n = scipy.integrate.solve_ivp(lotka_volterra, (0.0, 5.0), Y0, args=tuple(q),
                                      rtol=1e-6, atol=1e-9).t.size
        assert n != scipy.integrate.solve_ivp(lotka_volterra, (0.0, 5.0), Y0, args=tuple(P),
                                              rtol=1e-6, atol=1e-9).t.size


def test_a_failed_integration_keeps_the_steps_it_accepted():
    def blow_up(t, y, a):
        return a * y ** 2

    def loss(a):
        sol = solve_ivp(blow_up, (0.0, 2.0), np.array([1.0]), args=(a,), rtol=1e-8)
        return np.sum(sol.y), sol.status, sol.t.size
    want = scipy.integrate.solve_ivp(blow_up, (0.0, 2.0), np.array([1.0]), args=(1.0,),
                                     rtol=1e-8)
    assert want.status == -1 and want.t.size > 2 * _carried.MAX_ROWS
    value, status, size = loss(1.0)
    assert status == -1 and size == want.t.size
    g = adsim.grad(lambda a: loss(a)[0])
    # y(t) = 1 / (1 - a t): held step times, d/da of sum y_i = sum t_i y_i^2
    np.testing.assert_allclose(g(1.0), np.sum(want.t * want.y[0] ** 2), rtol=1e-4)
