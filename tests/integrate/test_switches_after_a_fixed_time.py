"""A switch in a branch that ``fun`` takes only after a fixed time (``if t
< 0.5: ... else: k1 if y > c else k2``): the recording at t0 holds no
switch, so before it was never checked, and crossing it gave a silent
wrong derivative (d y(2) / d k1 came out -0.108 where it is -0.032). The
branches on the time alone are now followed to the time they change, and
the other side's switches checked from there
(adsim/integrate/_switches.py)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adsim
from adsim.errors import UnsupportedOperation
from fdcheck import differences

TIGHT = dict(rtol=1e-10, atol=1e-12)


def decay(p, level, jump=True, method="RK45", t_eval=(2.0,)):
    """y' = -y/2 before t = 0.5; after it k1 y while y > level, k2 y below
    (``jump``: a jump of the rate there; else a kink, continuous)."""
    def fun(t, y, k1, k2):
        if t < 0.5:
            return -0.5 * y
        if jump:
            return -k1 * y if y[0] > level else -k2 * y
        return -k1 * np.maximum(y, level) - k2 * np.minimum(y - level, 0.0)
    sol = solve_ivp(fun, (0, 2), [1.0], args=(p[0], p[1]), t_eval=list(t_eval),
                    method=method, **TIGHT)
    return sol.y[0, -1]


P = np.array([1.0, 0.3])


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_a_jump_crossed_after_a_fixed_time_is_refused(method):
    with pytest.raises(UnsupportedOperation, match="jumps by"):
        adsim.grad(lambda p: decay(p, 0.6, method=method))(P)


def test_a_switch_the_state_does_not_reach_after_a_fixed_time_stays_differentiated():
    """y stays above 0.1 on [0.5, 2]: the switch is not crossed, and the
    jump at the fixed time 0.5 is the model's."""
    f = lambda p: decay(p, 0.1)           # noqa: E731
    got, want = adsim.grad(f)(P), differences(f, P, 1e-5)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-9)     # a jump inside a step: ~1e-5


def test_a_kink_crossed_after_a_fixed_time_keeps_first_derivatives_only():
    f = lambda p: decay(p, 0.6, jump=False)           # noqa: E731
    got, want = adsim.grad(f)(P), differences(f, P, 1e-5)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-7)
    with pytest.raises(UnsupportedOperation, match="second derivatives"):
        adsim.hessian(f)(P)


def test_a_replay_where_the_switch_is_crossed_after_the_fixed_time_is_not_silent():
    """Recorded where y stays above the level after t = 0.5, replayed where
    it crosses: the replay records again and refuses."""
    f = lambda p: decay(p, 0.6)           # noqa: E731
    g = adsim.grad(f)
    slow = np.array([0.1, 0.3])           # y(2) = e^-0.25 e^-0.15 = 0.67 > 0.6
    assert np.allclose(g(slow), differences(f, slow, 1e-5), rtol=1e-4, atol=1e-9)
    with pytest.raises(UnsupportedOperation, match="jumps by"):
        g(P)
