"""A kink of ``fun`` crossed where the parameters move the crossing: first
derivatives are the steps' (right), second derivatives would miss the
crossing's term (the jump of ``fun``'s derivative times the crossing
time's derivative) and are refused rather than returned 6 % off."""
import os

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adsim
from fdcheck import assert_close


def loss(p, method="RK45"):
    # a relaxation whose rate changes slope where the state passes 1
    def rhs(t, y):
        return p[0] - np.where(y > 1.0, p[1] * (y - 1.0), 0.2 * (y - 1.0)) - 0.3 * y
    sol = solve_ivp(rhs, (0.0, 3.0), np.array([0.0]), method=method, t_eval=[1.5, 3.0],
                    rtol=1e-10, atol=1e-12)
    return np.sum(sol.y ** 2)


CROSSING = np.array([1.5, 2.0])     # the state passes 1 before t = 1.5
BELOW = np.array([0.2, 2.0])        # it stays below


def central(f, x, h):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_second_derivatives_across_a_crossed_kink_are_refused(method):
    f = lambda p: loss(p, method)  # noqa: E731
    assert_close(adsim.grad(f)(CROSSING), central(f, CROSSING, 1e-6), rtol=1e-4, atol=1e-8)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, CROSSING, np.ones(2))
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hessian(f)(CROSSING)


def test_a_kink_not_crossed_keeps_its_second_derivatives():
    hv = adsim.hvp(loss, BELOW, np.array([1.0, -0.5]))
    want = central(adsim.grad(loss), BELOW, 1e-5).T @ np.array([1.0, -0.5])
    assert_close(hv, want, rtol=1e-6, atol=1e-9)


def test_a_saved_tape_keeps_the_refusal(tmp_path):
    tape = adsim.record(loss, CROSSING)
    path = os.path.join(tmp_path, "kink.adt")
    tape.save(path)
    loaded = adsim.load_tape(path)
    assert_close(loaded.gradient(CROSSING), tape.gradient(CROSSING), rtol=0, atol=0)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        loaded.hvp(CROSSING, np.ones(2))


def test_the_dense_interpolant_and_the_events_of_a_crossing_refuse_second_derivatives_too():
    def rhs_of(p):
        return lambda t, y: p[0] - np.where(y > 1.0, p[1] * (y - 1.0), 0.2 * (y - 1.0)) - 0.3 * y

    def by_interpolant(p):
        sol = solve_ivp(rhs_of(p), (0.0, 3.0), np.array([0.0]), dense_output=True, rtol=1e-10,
                        atol=1e-12)
        return np.sum(sol.sol(2.5) ** 2)

    def by_event(p):
        level = lambda t, y: y[0] - 1.5  # noqa: E731
        sol = solve_ivp(rhs_of(p), (0.0, 3.0), np.array([0.0]), events=level, rtol=1e-10,
                        atol=1e-12)
        return sol.t_events[0][0] ** 2
    for f in (by_interpolant, by_event):
        assert_close(adsim.grad(f)(CROSSING), central(f, CROSSING, 1e-6), rtol=1e-4, atol=1e-8)
        with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
            adsim.hvp(f, CROSSING, np.ones(2))


def test_a_large_system_with_a_kink_stays_checkpointed(monkeypatch):
    # above EVERY_STEP_UP_TO equations the outputs stay checkpointed, the
    # step ends checked by a plain run of the method
    from adsim.integrate import _api
    n = _api.EVERY_STEP_UP_TO + 44
    plain_runs = []
    plain_step_ends = _api._plain_step_ends
    monkeypatch.setattr(_api, "_plain_step_ends",
                        lambda *a: plain_runs.append(1) or plain_step_ends(*a))

    def f(p):
        rhs = lambda t, y: p[0] - np.where(y > 1.0, p[1] * (y - 1.0), 0.2 * (y - 1.0)) - 0.3 * y  # noqa: E731,E501
        sol = solve_ivp(rhs, (0.0, 3.0), np.linspace(0.0, 0.5, n), t_eval=[1.5, 3.0], rtol=1e-8,
                        atol=1e-10)
        return np.sum(sol.y ** 2)
    g = adsim.grad(f)(CROSSING)
    assert plain_runs, "the checkpointed route checks the step ends by a plain run"
    assert_close(g, central(f, CROSSING, 1e-6), rtol=1e-4, atol=1e-8)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, CROSSING, np.ones(2))
