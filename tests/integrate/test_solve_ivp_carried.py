"""Outputs that travel in the loop state (one checkpointed loop for the
whole integration, or one per queue of output times) are what one loop per
output time gives: the same outputs, counts and derivatives, also when a
step passes many output times (the first at t0; across the end of a
queue), backwards in time, when the integration fails, and for a
right-hand side that depends on t. An event that never happens makes the
integration one loop per output time, the reference here."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import _carried, solve_ivp
from ivp_problems import METHODS, van_der_pol

MU = np.array([2.0])
Y0 = np.array([2.0, 0.0])


def _never(t, y, *args):
    return 1.0


def forced(t, y, mu):
    """Van der Pol driven by cos(t): its stages need their times."""
    return [y[1], mu[0] * (1 - y[0] ** 2) * y[1] - y[0] + np.cos(t)]


def _loss_and_loops(fun, t_span, t_eval, method, events, rtol):
    weights = np.random.default_rng(7).uniform(0.5, 1.5, (2, len(t_eval)))
    loops = []

    def loss(y0, mu):
        stats = []
        res = solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, args=(mu,),
                        rtol=rtol, atol=rtol * 1e-3, events=events, stats=stats)
        loops.append((len(stats), res.nfev, res.status))
        return np.sum(weights * res.y ** 2)
    return loss, loops, weights


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fun, t_span, t_eval", [
    (van_der_pol, (0.0, 3.0), np.linspace(0.0, 3.0, 121)),      # ~10 outputs per step, one at t0
    (van_der_pol, (3.0, -1.0), np.linspace(2.5, -1.0, 8)),      # backwards
    (forced, (0.0, 4.0), np.linspace(0.5, 4.0, 8))], ids=["dense", "backwards", "forced"])
def test_one_loop_gives_what_a_loop_per_output_gives(method, fun, t_span, t_eval):
    rtol = 1e-3 if len(t_eval) > 100 else 1e-7
    carried, loops_c, weights = _loss_and_loops(fun, t_span, t_eval, method, None, rtol)
    per_output, loops_p, _ = _loss_and_loops(fun, t_span, t_eval, method, _never, rtol)
    value_c, grads_c = adsim.value_and_grad(carried, argnums=(0, 1))(Y0, MU)
    value_p, grads_p = adsim.value_and_grad(per_output, argnums=(0, 1))(Y0, MU)
    ref = scipy_solve_ivp(fun, t_span, Y0, method=method, t_eval=t_eval, args=(MU,),
                          rtol=rtol, atol=rtol * 1e-3)
    assert loops_c[-1] == (1, ref.nfev, 0)
    assert len(t_eval) < 100 or ref.nfev < 1.2 * len(t_eval)     # dense: several per step
    assert loops_p[-1][1:] == (ref.nfev, 0) and loops_p[-1][0] >= len(t_eval)
    assert value_c == pytest.approx(value_p, rel=1e-12)
    assert value_c == pytest.approx(np.sum(weights * ref.y ** 2), rel=1e-10)
    for a, b in zip(grads_c, grads_p):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12 * np.max(np.abs(b)))
    # forward mode through the carried outputs, against the reverse mode
    v = (np.array([0.3, -0.2]), np.array([0.5]))
    _, tangent = adsim.jvp(carried, (Y0, MU), v)
    assert tangent == pytest.approx(sum(np.dot(g, d) for g, d in zip(grads_c, v)), rel=1e-10)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau"])
@pytest.mark.parametrize("queue", [8, 32])
def test_queues_of_output_times_give_what_a_loop_per_output_gives(method, queue, monkeypatch):
    """121 output times, about ten per step, in loops of 8 or 32 of them: a
    loop stops at the step that makes its last output, whose interpolants
    at the next times are made in the enclosing tape."""
    monkeypatch.setattr(_carried, "MAX_QUEUE", queue)
    t_eval = np.linspace(0.0, 3.0, 121)
    queued, loops_q, _ = _loss_and_loops(van_der_pol, (0.0, 3.0), t_eval, method, None, 1e-3)
    per_output, _, _ = _loss_and_loops(van_der_pol, (0.0, 3.0), t_eval, method, _never, 1e-3)
    value_q, grads_q = adsim.value_and_grad(queued, argnums=(0, 1))(Y0, MU)
    value_p, grads_p = adsim.value_and_grad(per_output, argnums=(0, 1))(Y0, MU)
    ref = scipy_solve_ivp(van_der_pol, (0.0, 3.0), Y0, method=method, t_eval=t_eval,
                          args=(MU,), rtol=1e-3, atol=1e-6)
    assert 1 < loops_q[-1][0] <= 121 // queue + 1 and loops_q[-1][1:] == (ref.nfev, 0)
    assert value_q == pytest.approx(value_p, rel=1e-12)
    for a, b in zip(grads_q, grads_p):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12 * np.max(np.abs(b)))
    v = (np.array([0.3, -0.2]), np.array([0.5]))
    _, tangent = adsim.jvp(queued, (Y0, MU), v)
    assert tangent == pytest.approx(sum(np.dot(g, d) for g, d in zip(grads_q, v)), rel=1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_recorded_outputs_are_scipys(method):
    """Outputs at the times t_eval, recorded and replayed, are SciPy's to rounding."""
    t_eval = np.linspace(0.0, 4.0, 41)
    ref = scipy_solve_ivp(forced, (0.0, 4.0), Y0, method=method, t_eval=t_eval, args=(MU,),
                          rtol=1e-8, atol=1e-10)

    def outputs(y0, mu):
        return solve_ivp(forced, (0.0, 4.0), y0, method=method, t_eval=t_eval, args=(mu,),
                         rtol=1e-8, atol=1e-10).y
    tape = adsim.record(outputs, Y0, MU)
    np.testing.assert_allclose(tape.forward(Y0, MU), ref.y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("queue", [None, 2])
def test_a_failed_integration_returns_the_outputs_it_reached(method, queue, monkeypatch):
    """y' = a y^2 blows up at t = 1/a: SciPy stops with status -1 and the
    outputs before; so does a recording (in one loop, or in queues of two
    output times), and so does its replay at another a (the failure moves,
    and the step is recorded again)."""
    if queue is not None:
        monkeypatch.setattr(_carried, "MAX_QUEUE", queue)
        monkeypatch.setattr(_carried, "MIN_QUEUE", queue)
    t_eval = np.linspace(0.0, 2.0, 9)
    seen = {}

    def blow_up(t, y, a):
        return a * y ** 2

    def outputs(y0, a):
        res = solve_ivp(blow_up, (0.0, 2.0), y0, method=method, t_eval=t_eval, args=(a,))
        seen.update(status=res.status, t=np.asarray(res.t))
        return res.y
    value_and_grad = adsim.value_and_grad(lambda y0, a: np.sum(outputs(y0, a)))
    for a in (1.0, 0.6):
        ref = scipy_solve_ivp(blow_up, (0.0, 2.0), [1.0], method=method, t_eval=t_eval,
                              args=(np.array([a]),))
        y = value_and_grad(np.array([1.0]), np.array([a]))[0]
        assert seen["status"] == ref.status == -1
        np.testing.assert_array_equal(seen["t"], ref.t)
        assert y == pytest.approx(np.sum(ref.y), rel=1e-10)
