"""Kinks of ``fun`` written without a comparison (``np.maximum``,
``np.minimum``, ``np.clip``, ``np.abs``, ``np.fmax`` of the state, or of the
time and a parameter), crossed where the parameters move the crossing:
first derivatives stay the steps' (right), second derivatives would miss
the crossing's term and are refused. A crossing where ``fun``'s Jacobian is
continuous (``v * abs(v)``, a drag) adds no term and keeps them; so does a
kink not crossed. A tape recorded where the kink is not crossed does not
replay silently where it is."""
import numpy as np
import pytest

import adsim
from adsim.integrate import solve_ivp
from fdcheck import assert_close, differences

TIGHT = dict(rtol=1e-10, atol=1e-12)
# the first derivatives of the steps, the one holding the kink differentiated
# as taken, are right to about 1e-4 here (as in test_kink_second_order.py)
FIRST = 1e-3


def final(rhs, y0, t1=1.0, method="RK45"):
    return solve_ivp(rhs, (0.0, t1), y0, method=method, t_eval=[t1], **TIGHT).y[:, -1]


def floored(p, method="RK45"):
    """y' = -p0 max(y, 0.495) from 1: y = exp(-p0 t) until it reaches 0.495
    (at t = ln(1 / 0.495) / p0 < 1), then falls linearly, so that y(1) =
    0.495 (1 - p0 + ln(1 / 0.495)): its derivative -0.495, its second 0
    (the Hessian of the steps alone is 0.38)."""
    return final(lambda t, y: -p[0] * np.maximum(y, 0.495), [1.0], method=method)[0]


P = np.array([0.8])


@pytest.mark.parametrize("method", ["RK45", "Radau", "LSODA"])
def test_the_crossed_maximum_refuses_second_derivatives_and_keeps_the_first(method):
    f = lambda p: floored(p, method)  # noqa: E731
    g = adsim.grad(f)(P)
    assert_close(g, [-0.495], rtol=FIRST, atol=0)
    assert_close(g, differences(f, P), rtol=FIRST, atol=0)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hessian(f)(P)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, P, np.ones(1))


KINKED = {
    # y' = -p0 min(y, 0.7): a constant rate until y reaches 0.7, then a decay
    "minimum": lambda p: final(lambda t, y: -p[0] * np.minimum(y, 0.7), [1.0], 2.0)[0],
    "clip": lambda p: final(lambda t, y: -p[0] * np.clip(y, 0.2, 0.7), [1.0], 2.0)[0],
    # the slope in y flips from -p1 to p1 where y passes 0.5
    "abs": lambda p: final(lambda t, y: -p[0] - p[1] * np.abs(y - 0.5), [1.0])[0],
    "fmax": lambda p: final(lambda t, y: -p[0] * np.fmax(y, 0.495), [1.0])[0],
    # of the time and a parameter: the rate grows with t once t passes p0
    "maximum of t": lambda p: final(lambda t, y: -np.maximum(t, p[0]) * y, [1.0])[0],
}
AT = {"minimum": [0.8], "clip": [0.8], "abs": [0.8, 0.5], "fmax": [0.8],
      "maximum of t": [0.4]}


@pytest.mark.parametrize("kind", list(KINKED))
def test_each_kink_crossed_refuses_second_derivatives(kind):
    f, p = KINKED[kind], np.array(AT[kind])
    assert_close(adsim.grad(f)(p), differences(f, p), rtol=FIRST, atol=1e-9)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, p, np.ones(p.size))


def test_a_large_row_of_the_jacobian_does_not_hide_a_kink_of_another():
    # u' = 1e7 w beside the floored w: the kink's jump of p0 in d w' / d w is
    # 1e-7 of the Jacobian's largest entry, but all of its own row's
    def f(p):
        def rhs(t, y):
            return [1e7 * y[1], -p[0] * np.maximum(y[1], 0.495)]
        return final(rhs, [0.0, 1.0])[1]
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, P, np.ones(1))


def thrown(p):
    """A ball thrown up against quadratic drag p0 v |v|: v passes 0 at the
    top (before t = 1.5), where the Jacobian -2 p0 |v| is continuous."""
    def rhs(t, y):
        return [y[1], -9.81 - p[0] * y[1] * np.abs(y[1])]
    return final(rhs, [0.0, 5.0], 1.5)


def test_a_crossing_with_a_continuous_jacobian_keeps_second_derivatives():
    assert thrown(np.array([0.1]))[1] < 0, "the ball passes its top"
    f = lambda p: np.sum(thrown(p) ** 2)  # noqa: E731
    p, v = np.array([0.1]), np.array([1.0])
    want = differences(adsim.grad(f), p).T @ v
    assert_close(adsim.hvp(f, p, v), want, rtol=1e-5, atol=0)


def test_a_kink_not_crossed_keeps_second_derivatives():
    # y(1) = exp(-p0) stays above 0.2: d2 / dp0^2 = exp(-p0)
    f = lambda p: final(lambda t, y: -p[0] * np.maximum(y, 0.2), [1.0])[0]  # noqa: E731
    assert_close(adsim.hvp(f, P, np.ones(1)), [np.exp(-0.8)], rtol=1e-6, atol=0)


def test_a_replay_where_the_kink_is_crossed_is_not_silent():
    """Recorded where y stays above the floor p1, replayed where it reaches
    it: the sides at the points are recorded branches, so the replay records
    again (hessian) or raises BranchChanged (a tape), rather than giving the
    uncrossed Hessian."""
    def f(p):
        return final(lambda t, y: -p[0] * np.maximum(y, p[1]), [1.0])[0]
    never, crossed = np.array([0.8, 0.2]), np.array([0.8, 0.495])
    h = adsim.hessian(f)
    assert_close(h(never), [[np.exp(-0.8), 0.0], [0.0, 0.0]], rtol=1e-6, atol=1e-9)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        h(crossed)
    with pytest.raises(adsim.BranchChanged):
        adsim.record(f, never).hvp(crossed, np.ones(2))
    with pytest.raises(adsim.BranchChanged):       # and the other way round
        adsim.record(f, crossed).hvp(never, np.ones(2))


def test_without_the_check_the_steps_hessian_misses_the_crossing(monkeypatch):
    # the refusal is not spurious: a jump of the Jacobian counted as none
    # gives the steps' Hessian, 0.38 where the exact one is 0
    from adsim.integrate import _switches
    monkeypatch.setattr(_switches, "_SLOPE_JUMP", np.inf)
    assert abs(adsim.hvp(floored, P, np.ones(1))[0]) > 0.3


@pytest.mark.parametrize("where", ["inside", "beside"])
def test_a_kink_that_cannot_be_read_past_a_loop_keeps_first_derivatives_only(where):
    """np.maximum of the state inside (or beside) a checkpointed loop in
    fun: its sides cannot be read, so its crossing cannot be excluded."""
    def f(p):
        def rhs(t, y):
            if where == "inside":
                def sweep(k, y):
                    return 0.5 * (k + p[0] * np.maximum(y, 0.495))
                return -adsim.checkpoint_loop(sweep, np.full(1, 0.2), 30, args=(y,))
            k = adsim.checkpoint_loop(lambda k, y: 0.5 * (k + p[0]), np.full(1, 0.2), 30,
                                      args=(y,))
            return -k * np.maximum(y, 0.2)
        return final(rhs, [1.0])[0]
    assert_close(adsim.grad(f)(P), differences(f, P), rtol=FIRST, atol=0)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, P, np.ones(1))
