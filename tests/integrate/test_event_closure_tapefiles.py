"""solve_ivp with events whose right-hand side reads the active parameters
from a closure (not args=): the loop's condition is recorded (the closure's
values are loop inputs, and the cells adsim keeps of lifted closures count
by their contents), so the tape saves and replays bitwise from a file, at
the recorded parameters and nearby. An event that is a callable object
whose class says ``terminal = True`` stays terminal when its closure is
lifted (it integrated past the event, a wrong value and derivative): the
values and derivatives equal those of the same problem written with args=,
and central differences."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adsim
from adsim import tapefile
from tapefile_replays import assert_same_replays, copies

K = np.array([0.8, 0.3])
POINTS = [(K,), (K * (1 + 1e-6),), (K + np.array([0.02, -0.01]),)]


def half_life(k):
    """Non-terminal: the time the first component falls to one half."""
    sol = solve_ivp(lambda t, y: -k * y, (0.0, 4.0), np.ones(2),
                    events=lambda t, y: y[0] - 0.5, rtol=1e-8)
    return sol.t_events[0][0] + np.sum(sol.y[:, -1])


def half_life_args(k):
    sol = solve_ivp(lambda t, y, k: -k * y, (0.0, 4.0), np.ones(2),
                    events=lambda t, y, k: y[0] - 0.5, rtol=1e-8, args=(k,))
    return sol.t_events[0][0] + np.sum(sol.y[:, -1])


class Below:
    """A terminal event as a callable object: its class holds ``terminal``."""
    terminal = True
    direction = -1

    def __call__(self, t, y, *args):
        return y[1] - 0.8


def stopped(k):
    """Terminal: integrate until the second component falls to 0.8."""
    sol = solve_ivp(lambda t, y: -k * y ** 2, (0.0, 10.0), np.ones(2), events=Below(),
                    rtol=1e-8)
    return sol.t[-1] + sol.y[0, -1]


def stopped_args(k):
    sol = solve_ivp(lambda t, y, k: -k * y ** 2, (0.0, 10.0), np.ones(2), events=Below(),
                    rtol=1e-8, args=(k,))
    return sol.t[-1] + sol.y[0, -1]


def stopped_in_a_dict(k):
    """The parameters in a dict, read from a closure."""
    p = {"k": k}
    sol = solve_ivp(lambda t, y: -p["k"] * y ** 2, (0.0, 10.0), np.ones(2), events=Below(),
                    rtol=1e-8)
    return sol.t[-1] + sol.y[0, -1]


def stopped_in_a_dict_of_args(k):
    """The parameters in a dict passed in args= (spread into its leaves)."""
    sol = solve_ivp(lambda t, y, p: -p["k"] * y ** 2, (0.0, 10.0), np.ones(2), events=Below(),
                    rtol=1e-8, args=({"k": k},))
    return sol.t[-1] + sol.y[0, -1]


@pytest.mark.parametrize("f", [stopped, stopped_in_a_dict, stopped_in_a_dict_of_args])
def test_a_terminal_event_object_stays_terminal_whatever_carries_the_parameters(f):
    assert adsim.record(f, K).forward(K) == f(K)
    np.testing.assert_allclose(adsim.grad(f)(K), adsim.grad(stopped_args)(K), rtol=1e-10)


@pytest.mark.parametrize("f,with_args", [(half_life, half_life_args), (stopped, stopped_args)])
def test_events_with_a_closure_right_hand_side_replay_bitwise_after_saving(f, with_args,
                                                                           tmp_path):
    tape = adsim.record(f, K)
    assert_same_replays(tape, copies(tape, tmp_path), POINTS,
                        methods=["forward", "gradient", "jvp", "vjp"])
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.forward(K) == pytest.approx(f(K), rel=1e-12)
    np.testing.assert_allclose(loaded.gradient(K), adsim.grad(with_args)(K), rtol=1e-10)
    h = 1e-4
    fd = [(f(K + h * e) - f(K - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(loaded.gradient(K), fd, rtol=1e-4)
