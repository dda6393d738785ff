"""``sol.sol(t)`` at an array of times inside a recording: the times are
sorted, each run of times in one step goes to that step's interpolant at
once (as SciPy's ``OdeSolution`` evaluates them), and the columns come back
in the order of ``t``. The values are SciPy's to rounding, the values and
derivatives those of one call per time, a replay at new parameters equals a
fresh recording, and the tape grows with the steps, not with the times."""
import numpy as np
import pytest
import scipy.integrate

import adsim
from adsim.integrate import solve_ivp

from fdcheck import assert_same_to_rounding


def lv(t, z, a, b):
    return np.stack([a * z[0] - b * z[0] * z[1], -z[1] + b * z[0] * z[1]])


Z0 = np.array([1.0, 0.5])
P = np.array([1.1, 0.7])
METHODS = ["RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA"]
# unsorted, a duplicate, the start, the end and one time beyond each end
TIMES = np.array([3.7, 0.2, 5.0, 1.9, 1.9, 0.0, 4.4, -0.5, 2.6, 5.3, 0.9])


def solution(p, method, t_span=(0.0, 5.0)):
    return solve_ivp(lv, t_span, Z0, method=method, args=(p[0], p[1]), dense_output=True,
                     rtol=1e-6, atol=1e-8).sol


def at_once(method, t_span=(0.0, 5.0), times=TIMES):
    def f(p):
        return solution(p, method, t_span)(times)
    return f


def one_at_a_time(method, t_span=(0.0, 5.0), times=TIMES):
    def f(p):
        sol = solution(p, method, t_span)
        return np.stack([sol(t) for t in times], axis=1)
    return f


@pytest.mark.parametrize("method", METHODS)
def test_values_are_scipys(method):
    got = adsim.record(lambda p: at_once(method)(p).ravel(), P).forward(P)
    want = scipy.integrate.solve_ivp(lv, (0.0, 5.0), Z0, method=method, args=(P[0], P[1]),
                                     dense_output=True, rtol=1e-6, atol=1e-8).sol(TIMES)
    got = got.reshape(want.shape)
    inside = (TIMES >= 0.0) & (TIMES <= 5.0)   # beyond the ends the polynomials amplify rounding
    np.testing.assert_allclose(got[:, inside], want[:, inside], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("t_span", [(0.0, 5.0), (5.0, 0.0)])
@pytest.mark.parametrize("method", METHODS)
def test_derivatives_are_those_of_one_call_per_time(method, t_span):
    """Values, gradients and Hessian-vector products of a loss on the
    columns, forward and backward in time."""
    w = np.random.default_rng(3).standard_normal((2, TIMES.size))

    def loss(evaluate):
        return lambda p: np.sum(w * evaluate(p) ** 2)
    together = adsim.record(loss(at_once(method, t_span)), P)
    apart = adsim.record(loss(one_at_a_time(method, t_span)), P)
    v = np.array([0.3, -1.0])
    for x in (P, P * (1 + 1e-9)):
        assert_same_to_rounding(together.forward(x), apart.forward(x), 1e-12)
        assert_same_to_rounding(together.gradient(x), apart.gradient(x), 1e-10)
        if method != "LSODA":        # (LSODA: no third derivatives of its donor's Jacobian)
            assert_same_to_rounding(together.hvp(x, v), apart.hvp(x, v), 1e-9)


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF"])
def test_a_replay_where_the_steps_move_is_detected(method):
    """At new parameters the steps change, and with them which step holds
    each time: the replay of the tape stops there, and the functional API
    records again, giving a fresh recording's numbers."""
    def loss(p):
        return np.sum(np.sin(at_once(method, times=np.linspace(0.0, 5.0, 40))(p)))
    tape = adsim.record(loss, P)
    value_and_grad = adsim.value_and_grad(loss)
    value_and_grad(P)
    for x in (P * 1.01, P * 0.97):
        with pytest.raises(adsim.BranchChanged):
            tape.forward(x)
        fresh = adsim.record(loss, x)
        value, gradient = value_and_grad(x)
        assert value == fresh.forward(x)
        np.testing.assert_array_equal(gradient, fresh.gradient(x))


def test_active_times_in_any_order():
    """Times that move with a parameter, unsorted: d sol(c t)/dc is
    t f(c t, y(c t)), as from one call per time."""
    times = np.array([2.0, 0.5, 3.5, 1.0])

    def f(c, evaluate):
        sol = solution(P + 0.0 * c, "RK45")
        return evaluate(sol, c * times)
    together = adsim.jacobian(lambda c: f(c, lambda s, t: s(t)))(1.0)
    apart = adsim.jacobian(lambda c: f(c, lambda s, t: np.stack([s(t[i]) for i in range(4)],
                                                                axis=1)))(1.0)
    assert_same_to_rounding(together, apart, 1e-12)
    plain = scipy.integrate.solve_ivp(lv, (0.0, 5.0), Z0, args=(P[0], P[1]), dense_output=True,
                                      rtol=1e-10, atol=1e-12).sol
    slope = np.stack([times[i] * lv(0.0, plain(times[i]), *P) for i in range(4)], axis=1)
    np.testing.assert_allclose(together, slope, atol=1e-3)    # the interpolant at rtol 1e-6


def test_the_tape_grows_with_the_steps_not_with_the_times():
    def ops(times):
        return len(adsim.record(lambda p: np.sum(at_once("RK45", times=times)(p)), P))
    few, many = ops(np.linspace(0.0, 5.0, 50)), ops(np.linspace(0.0, 5.0, 2000))
    assert many < 1.3 * few


@pytest.mark.parametrize("method", ["RK23", "RK45", "Radau", "BDF"])
def test_the_interpolants_of_many_steps_are_one_set_of_ops(method):
    """Times in many steps are evaluated together (the methods' dense_rows:
    the states of the steps stacked, one gather of a row per time, the
    comparisons placing each time as two array comparisons), so the tape
    does not grow with the number of steps the times fall in; BDF's rows
    above each step's order are selected away, as its interpolant ignores
    them."""
    def ops(times):
        return len(adsim.record(lambda p: np.sum(at_once(method, times=times)(p)), P))
    n_steps = scipy.integrate.solve_ivp(lv, (0.0, 5.0), Z0, method=method, args=(P[0], P[1]),
                                        rtol=1e-6, atol=1e-8).t.size - 1
    assert n_steps > 20
    two_steps, every_step = ops(np.array([0.01, 4.99])), ops(np.linspace(0.0, 5.0, 500))
    assert every_step - two_steps < 40


@pytest.mark.parametrize("method", ["RK45", "Radau", "BDF"])
def test_the_steps_of_a_dense_solution_cost_no_ops_per_step(method):
    """The states after the accepted steps stay the rows of their loops
    (StateRows): the times and solutions of every step are read from the
    rows of each loop at once, not state by state, so ``dense_output=True``
    records about as many ops as every step's output alone."""
    def ops(dense):
        def f(p):
            sol = solve_ivp(lv, (0.0, 5.0), Z0, method=method, args=(p[0], p[1]),
                            dense_output=dense, rtol=1e-8, atol=1e-10)
            return np.sum(sol.y ** 2) + np.sum(sol.t)
        return len(adsim.record(f, P))
    n_steps = scipy.integrate.solve_ivp(lv, (0.0, 5.0), Z0, method=method, args=(P[0], P[1]),
                                        rtol=1e-8, atol=1e-10).t.size - 1
    assert n_steps > 40
    assert ops(True) - ops(False) < n_steps


@pytest.mark.parametrize("method", ["RK45", "BDF"])
def test_a_replay_where_an_active_time_changes_step_is_detected(method):
    """Times that move with a parameter, in many steps at once: where a
    replay moves one into another step (the steps themselves unchanged),
    the recorded placement fails and the replay raises BranchChanged; a
    move that keeps every time in its step replays."""
    times = np.linspace(0.3, 4.7, 30)
    steps = scipy.integrate.solve_ivp(lv, (0.0, 5.0), Z0, method=method, args=(P[0], P[1]),
                                      rtol=1e-6, atol=1e-8).t

    def f(c):
        return np.sum(solution(P + 0.0 * c, method)(c * times) ** 2)
    tape = adsim.record(f, 1.0)
    gap = np.min(np.abs(times[:, None] - steps[None, :]))
    c = 1.0 + 0.5 * gap / times[-1]                     # every time stays in its step
    assert tape.forward(c) == pytest.approx(f(c), rel=1e-12)
    crossing = np.min(steps[steps > times[-1]]) / times[-1] + 1e-6    # the last time leaves it
    with pytest.raises(adsim.BranchChanged):
        tape.forward(crossing)


# ---- times outside the solution's interval ------------------------------------------

def _decay_to_half(k, times, method="RK45", terminal=True):
    def half(t, y, k):
        return y[0] - 0.5
    half.terminal = terminal
    sol = solve_ivp(lambda t, y, k: -k * y, (0.0, 10.0), np.array([1.0]), args=(k,),
                    events=half, dense_output=True, method=method, rtol=1e-10, atol=1e-12)
    return np.sum(sol.sol(times)[0])


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_a_time_past_a_terminal_event_is_refused_not_extrapolated(method):
    """SciPy extrapolates the cut last step's polynomial past the event; its
    derivative is not that of SciPy's values (RK45 gave -0.258 where
    differences give -0.180), so adsim refuses it by name."""
    k = np.array(0.7)
    with pytest.raises(adsim.UnsupportedOperation, match="outside the solution's interval"):
        adsim.grad(lambda k: _decay_to_half(k, np.array([0.5, 3.0]), method))(k)
    inside = lambda k: _decay_to_half(k, np.array([0.3, 0.9]), method)      # event at 0.99
    h = 1e-6
    assert adsim.grad(inside)(k) == pytest.approx((inside(k + h) - inside(k - h)) / (2 * h),
                                                  rel=1e-5)


def test_a_replay_that_moves_the_end_before_a_time_is_caught():
    times = np.array([0.95])                  # inside at k = 0.7 (event at 0.99), outside at 0.8
    tape = adsim.record(lambda k: _decay_to_half(k, times), np.array(0.7))
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(np.array(0.8))
    with pytest.raises(adsim.UnsupportedOperation, match="outside the solution's interval"):
        adsim.grad(lambda k: _decay_to_half(k, times))(np.array(0.8))
