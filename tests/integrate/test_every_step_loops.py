"""solve_ivp without t_eval inside a recording: every accepted step is an
output, and the attempts up to each accepted step are one checkpointed
loop whose recorded step (shared by the call's loops) replays in C. The
values are SciPy's steps; derivatives agree with those of the same
integration recorded step by step (adsim's outputs at SciPy's times, the
times held), with central differences where the step sequence does not
change, across modes; the tape saves and replays bitwise; a replay whose
steps are those of the recording records nothing again."""
import numpy as np
import pytest
import scipy.integrate

import adsim
from adsim.integrate import solve_ivp
from fdcheck import central
from tapefile_replays import assert_same_replays, callback_kinds, copies

P = np.array([1.1, 0.4])
Y0 = np.array([1.0, 0.5])
V = np.array([0.3, -0.2])


def lotka_volterra(t, y, a, b):
    return np.stack([a * y[0] - b * y[0] * y[1], -y[1] + b * y[0] * y[1]])


def every_step(method):
    def loss(p):
        sol = solve_ivp(lotka_volterra, (0.0, 5.0), Y0, method=method, args=(p[0], p[1]),
                        rtol=1e-6, atol=1e-9)
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
