"""A while loop's plain forward pass runs without the GIL from step to step
when neither its condition nor its step runs Python (adsim/_loop_while.pxi).
It hands back to the executor at a state no recorded variant follows (one
is recorded there), at the end of the loop and at ``max_steps``; it must
give what the steps computed one by one give, on one thread or on two.

The program: a ball dropped on the floor, bouncing until its energy falls
below a tenth of the start's. The step branches on whether the ball meets
the floor, and the number of steps depends on the restitution ``e``, so a
replay at another ``e`` meets the floor at other steps (the two variants in
a new order) and takes a different number of steps.
"""
import numpy as np
import pytest

import adsim
from adsim.errors import LoopDidNotStop
from adsim.testing import check_grads
from threadwork import run_threads

G, DT, H0 = 9.81, 0.01, 1.0


def bounce(state, e):
    """One symplectic Euler step of the ball; at the floor it reflects and
    keeps the share ``e`` of its speed."""
    h, v = state[0], state[1]
    v = v - G * DT
    h = h + v * DT
    if h < 0.0:
        h = -h
        v = -e * v
    return np.stack([h, v])


def still_bouncing(state, e):
    return 0.5 * state[1] ** 2 + G * state[0] > 0.1 * G * H0


def final_height(max_steps=None):
    def loss(e):
        state = adsim.checkpoint_while(still_bouncing, bounce, np.array([H0, 0.0]), args=(e,),
                                       max_steps=max_steps)
        return state[0] + 0.1 * state[1]
    return loss


def test_replays_at_new_restitutions_give_the_plain_loop_values():
    loss = final_height()
    tape = adsim.record(loss, np.array(0.5))
    for e in (0.5, 0.45, 0.6, 0.7, 0.3):
        x = np.array(e)
        assert tape.forward(x) == loss(x)            # NumPy's loop, step by step
    # the derivative too, where the bounces stay at the same steps
    check_grads(loss, np.array(0.55))


def test_gradients_at_new_restitutions_are_those_of_a_tape_recorded_there():
    """The forward pass of a reversal (online snapshots, kept forward
    sweeps) meets states no recorded variant follows; it records them as
    it goes and gives a fresh recording's gradient bitwise."""
    loss = final_height()
    tape = adsim.record(loss, np.array(0.5))
    for e in (0.45, 0.62, 0.38):
        x = np.array(e)
        assert np.array_equal(tape.gradient(x), adsim.record(loss, x).gradient(x))


def test_max_steps_holds_for_a_replay_that_needs_more_steps():
    loss = final_height(max_steps=120)
    tape = adsim.record(loss, np.array(0.3))        # few bounces: within the limit
    assert tape.forward(np.array(0.3)) == loss(np.array(0.3))
    for replay in (tape.forward, tape.gradient):
        with pytest.raises(LoopDidNotStop, match="max_steps=120"):
            replay(np.array(0.8))


def test_two_threads_replaying_one_while_loop_give_the_values_of_one():
    loss = final_height()
    tape = adsim.record(loss, np.array(0.5))
    points = [np.array(e) for e in (0.5, 0.42, 0.58, 0.66, 0.35)]
    work = [(f"forward[{e}]", tape.forward, x, loss(x)) for e, x in zip("abcde", points)]
    work += [(f"gradient[{e}]", tape.gradient, x, np.copy(tape.gradient(x)))
             for e, x in zip("abcde", points)]
    assert run_threads(2, work, rounds=4) == []
