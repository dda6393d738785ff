"""solve_ivp with method="LSODA" and with dense_output=True on active values.

LSODA: SciPy's LSODA run on adsim's recording of ``fun`` (SciPy's numbers
to rounding), the derivatives of the donor solve (DOP853 where
LSODA stays non-stiff, Radau where it switches), checked against forward
sensitivities solved by SciPy at rtol 1e-12. dense_output: ``sol.sol(t)``
for every method, at times inside steps, at step ends and at active times,
against the same sensitivities, central differences, the other mode and
replays of the recorded tape at new parameters.
"""
import numpy as np
import pytest
import scipy.integrate

import adsim
from adsim.integrate import solve_ivp

from test_odeint import (LV_P, LV_Z0, ROB_LOGK, ROB_Y0, lotka_volterra,
                         lotka_volterra_sensitivities, reference_jacobian, relative_error,
                         robertson, robertson_sensitivities)


def lv(t, z, a, b, c, d):
    return lotka_volterra(z, t, a, b, c, d)


def rob(t, y, k1, k2, k3):
    return robertson(y, t, k1, k2, k3)


T_OBS = np.array([0.7, 2.0, 3.3, 5.0])
WEIGHTS = np.array([[1.0, -0.5], [0.3, 2.0], [-1.2, 0.4], [0.8, 0.1]])
TOL = dict(rtol=1e-9, atol=1e-9)
ROB_T = np.array([1e-3, 1.0, 40.0])
ROB_TOL = dict(rtol=1e-8, atol=[1e-10, 1e-14, 1e-10])
ROB_W = np.array([[1.0, 1e4, 1.0]] * 3)


def lv_reference(times, z0=LV_Z0, p=LV_P):
    """d y(times) / d(z0, p), shape (len(times), 2, 6), from the sensitivity
    equations at rtol 1e-12."""
    t = np.concatenate([[0.0], times])
    return reference_jacobian(lotka_volterra_sensitivities, z0, t, tuple(p), 6)[1:]


def lv_loss_reference(times=T_OBS, weights=WEIGHTS):
    return np.einsum("jn,jni->i", weights, lv_reference(times))


def rob_reference():
    t = np.concatenate([[0.0], ROB_T])
    return reference_jacobian(robertson_sensitivities, ROB_Y0, t, tuple(np.exp(ROB_LOGK)), 6)[1:]


# ------------------------------------------------------------------- LSODA

# LSODA runs on a recorded tape of fun, whose arithmetic may round otherwise
# than the Python function's; LSODA's step control amplifies that a little
SCIPY_RTOL = 1e-12


def test_lsoda_values_are_scipys_and_the_result_its_layout():
    def outputs(p):
        sol = solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA", args=tuple(p), **TOL)
        assert sol.success and sol.status == 0 and sol.sol is None
        return sol.y
    want = scipy.integrate.solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA", args=tuple(LV_P),
                                     **TOL)
    tape = adsim.record(outputs, LV_P)
    np.testing.assert_allclose(tape.forward(LV_P), want.y, rtol=SCIPY_RTOL, atol=0)

    def counted(p):
        sol = solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA", args=tuple(p), t_eval=T_OBS,
                        **TOL)
        assert (sol.nfev, sol.njev, sol.nlu) == (want_t.nfev, want_t.njev, want_t.nlu)
        assert sol.message == want_t.message
        return sol.y
    want_t = scipy.integrate.solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA",
                                       args=tuple(LV_P), t_eval=T_OBS, **TOL)
    np.testing.assert_allclose(adsim.record(counted, LV_P).forward(LV_P), want_t.y,
                               rtol=SCIPY_RTOL, atol=0)


def test_lsoda_non_stiff_gradient_against_sensitivities_both_modes():
    def loss(z0, p):
        sol = solve_ivp(lv, (0.0, 5.0), z0, method="LSODA", t_eval=T_OBS, args=tuple(p),
                        **TOL)
        return np.sum(WEIGHTS.T * sol.y)
    want = lv_loss_reference()
    g = np.concatenate(adsim.grad(loss, argnums=(0, 1))(LV_Z0, LV_P))
    assert relative_error(g, want) < 1e-7
    v = np.random.default_rng(3).standard_normal(6)
    _, jv = adsim.jvp(loss, (LV_Z0, LV_P), (v[:2], v[2:]))
    assert abs(jv - g @ v) < 1e-9 * np.abs(g) @ np.abs(v)


def test_lsoda_stiff_robertson_takes_radau_derivatives():
    def loss(logk):
        sol = solve_ivp(rob, (0.0, 40.0), ROB_Y0, method="LSODA", t_eval=ROB_T,
                        args=tuple(np.exp(logk)), **ROB_TOL)
        return np.sum(ROB_W.T * sol.y)
    want = np.einsum("jn,jni->i", ROB_W, rob_reference())[3:]
    g = adsim.grad(loss)(ROB_LOGK)
    assert relative_error(g, want) < 1e-6


def test_lsoda_steps_as_outputs_replayed_at_new_parameters():
    """Without t_eval the outputs are LSODA's steps; a replay at parameters
    where LSODA takes other steps records again (the functional API) or,
    from a tape, refuses instead of answering in the old layout."""
    def final(p):
        sol = solve_ivp(lv, (0.0, 3.0), LV_Z0, method="LSODA", args=tuple(p), **TOL)
        return sol.y[:, -1] @ WEIGHTS[-1]
    want = WEIGHTS[-1] @ lv_reference(np.array([3.0]))[0][:, 2:]
    grad = adsim.grad(final)
    assert relative_error(grad(LV_P), want) < 1e-7
    p2 = LV_P * 1.01
    want2 = WEIGHTS[-1] @ lv_reference(np.array([3.0]), p=p2)[0][:, 2:]
    assert relative_error(grad(p2), want2) < 1e-7
    tape = adsim.record(final, LV_P)
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(p2)


def test_lsoda_terminal_event_time_against_differences():
    def prey_peak(t, z, *p):
        return z[0] - 20.0
    prey_peak.terminal, prey_peak.direction = True, 1

    def when(p):
        sol = solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA", args=tuple(p), events=prey_peak,
                        **TOL)
        assert sol.status == 1
        return sol.t_events[0][0] + sol.t[-1]

    def plain(p):
        r = scipy.integrate.solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA", args=tuple(p),
                                      events=prey_peak, rtol=1e-12, atol=1e-12)
        return 2 * r.t_events[0][0]
    g = adsim.grad(when)(LV_P)
    h = 1e-5 * LV_P
    fd = np.array([(plain(LV_P + h * e) - plain(LV_P - h * e)) / (2 * h[i])
                   for i, e in enumerate(np.eye(4))])
    assert relative_error(g, fd) < 1e-6


def test_lsoda_hvp_against_differences_of_the_gradient():
    def loss(p):
        sol = solve_ivp(lv, (0.0, 5.0), LV_Z0, method="LSODA", t_eval=T_OBS, args=tuple(p),
                        **TOL)
        return np.sum(WEIGHTS.T * sol.y)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    hv = adsim.hvp(loss, LV_P, v)
    grad, e = adsim.grad(loss), 1e-5
    fd = (grad(LV_P + e * v) - grad(LV_P - e * v)) / (2 * e)
    assert relative_error(hv, fd) < 1e-5


# ------------------------------------------------------------------- dense_output

# (rtol, bound on the gradient's relative error): every step is recorded in
# Python, so the implicit methods run at a looser tolerance
METHODS = {"RK23": (1e-6, 1e-4), "RK45": (1e-7, 1e-5), "DOP853": (1e-8, 1e-6),
           "Radau": (1e-5, 1e-3), "BDF": (1e-5, 1e-3), "LSODA": (1e-8, 1e-6)}
T_DENSE = np.array([0.4, 0.9, 1.4])


@pytest.mark.parametrize("method", METHODS)
def test_dense_output_against_sensitivities_and_replays(method):
    """sol.sol at times inside steps and at the end of a step, with respect
    to y0 and the rates; forward against reverse; a replay of the tape at a
    new point."""
    rtol, bound = METHODS[method]
    weights = WEIGHTS[:3]
    options = dict(method=method, rtol=rtol, atol=rtol)
    knots = solve_ivp(lv, (0.0, 1.5), LV_Z0, args=tuple(LV_P), **options).t
    k = len(knots) // 2

    def loss(x):                    # x: y0, then the rates
        sol = solve_ivp(lv, (0.0, 1.5), x[:2], args=tuple(x[2:]), dense_output=True, **options)
        assert len(sol.t) == len(knots)
        return np.sum(weights.T * sol.sol(T_DENSE)) + np.sum(sol.sol(sol.t[k]))
    x = np.concatenate([LV_Z0, LV_P])
    tape = adsim.record(loss, x)
    g = tape.gradient(x)
    want = np.einsum("jn,jni->i", weights, lv_reference(T_DENSE)) + \
        lv_reference(knots[k:k + 1])[0].sum(axis=0)
    assert relative_error(g, want) < bound
    v = np.random.default_rng(4).standard_normal(6)
    assert abs(tape.jvp(x, v)[1] - g @ v) < 1e-9 * np.abs(g) @ np.abs(v)
    # the tape at a nearby point (the same steps): the values and derivatives
    # of that point, not of the recording
    x2 = x * (1 + 1e-7)
    fresh = adsim.record(loss, x2)
    assert tape.forward(x2) != tape.forward(x)
    assert np.isclose(tape.forward(x2), fresh.forward(x2), rtol=1e-12, atol=0)
    assert np.allclose(tape.gradient(x2), fresh.gradient(x2), rtol=1e-9, atol=0)


@pytest.mark.parametrize("method", ["RK45", "LSODA"])
def test_dense_output_at_an_active_time(method):
    """d sol(t)/dt is the slope of the interpolant: close to f(t, y(t)),
    equal to differences of the interpolant itself; with respect to the
    rates, the sensitivities at t."""
    def at(tq, p):
        sol = solve_ivp(lv, (0.0, 3.0), LV_Z0, method=method, args=tuple(p),
                        dense_output=True, rtol=1e-8, atol=1e-8)
        return sol.sol(tq)
    tq = np.array(2.345)
    J_t, J_p = adsim.jacobian(at, argnums=(0, 1))(tq, LV_P)
    y = at(tq, LV_P)
    assert relative_error(J_t, lv(2.345, y, *LV_P)) < 1e-5
    assert relative_error(J_p, lv_reference(np.array([2.345]))[0][:, 2:]) < 1e-5
    plain = scipy.integrate.solve_ivp(lv, (0.0, 3.0), LV_Z0, method=method, args=tuple(LV_P),
                                      dense_output=True, rtol=1e-8, atol=1e-8).sol
    e = 1e-6
    assert relative_error(J_t, (plain(2.345 + e) - plain(2.345 - e)) / (2 * e)) < 1e-6


def test_dense_output_with_t_eval_and_a_terminal_event():
    """t_eval outputs come from the same interpolants; the solution stops at
    the event as SciPy's does."""
    def crash(t, z, *p):
        return z[1] - 8.0
    crash.terminal, crash.direction = True, 1

    def run(p):
        sol = solve_ivp(lv, (0.0, 8.0), LV_Z0, t_eval=np.linspace(0.0, 8.0, 9), args=tuple(p),
                        dense_output=True, events=crash, **TOL)
        return sol
    want = scipy.integrate.solve_ivp(lv, (0.0, 8.0), LV_Z0, t_eval=np.linspace(0.0, 8.0, 9),
                                     args=tuple(LV_P), dense_output=True, events=crash, **TOL)

    def outputs(p):
        sol = run(p)
        assert sol.status == want.status and sol.y.shape == want.y.shape
        assert sol.nfev == want.nfev
        return np.concatenate([sol.y.ravel(), sol.sol(sol.t_events[0][0] - 0.1)])
    got = adsim.record(outputs, LV_P).forward(LV_P)
    expect = np.concatenate([want.y.ravel(), want.sol(want.t_events[0][0] - 0.1)])
    assert np.allclose(got, expect, rtol=1e-11, atol=1e-12)


def test_dense_output_hvp_against_differences_of_the_gradient():
    def loss(p):
        sol = solve_ivp(lv, (0.0, 5.0), LV_Z0, args=tuple(p), dense_output=True, **TOL)
        return np.sum(WEIGHTS.T * sol.sol(T_OBS))
    v = np.array([0.5, 1.0, -2.0, 1.0])
    hv = adsim.hvp(loss, LV_P, v)
    grad, e = adsim.grad(loss), 1e-5
    fd = (grad(LV_P + e * v) - grad(LV_P - e * v)) / (2 * e)
    assert relative_error(hv, fd) < 1e-5


@pytest.mark.parametrize("method", ["RK45", "BDF", "LSODA"])
def test_a_sol_kept_past_its_recording_refuses(method):
    kept = []

    def loss(p):
        sol = solve_ivp(lv, (0.0, 1.0), LV_Z0, method=method, args=tuple(p), dense_output=True)
        kept.append(sol.sol)
        return np.sum(sol.y[:, -1])
    adsim.grad(loss)(LV_P)
    with pytest.raises(adsim.UnsupportedOperation, match="recording that has finished"):
        kept[0](0.5)


@pytest.mark.parametrize("method", ["RK45", "LSODA"])
def test_the_knots_of_sol_are_recorded_values(method):
    """sol.ts and sol.t_max move with the end of the interval (the last
    step is clipped to it); a replay at another end gives the new ones."""
    def end(tf):
        sol = solve_ivp(lv, (0.0, tf), LV_Z0, method=method, args=tuple(LV_P),
                        dense_output=True, rtol=1e-6, atol=1e-6)
        return np.stack([sol.sol.t_max, sol.sol.ts[-1], sol.sol.ts[1]])
    J = adsim.jacobian(end)(np.array(1.0))
    assert np.array_equal(J, [1.0, 1.0, 0.0])
    tape = adsim.record(end, np.array(1.0))
    assert np.array_equal(tape.forward(np.array(1.0 + 1e-9))[:2], [1.0 + 1e-9] * 2)
