"""The condition of ``checkpoint_while`` is recorded and decided in C.

Its comparisons of the state are branch records: a replay that follows the
recorded path has the recorded outcome, one that leaves it is recorded again
there. A condition that cannot be recorded faithfully is called in Python at
every step, on plain values, so it still decides as written. Each case is
checked against the same loop as a plain Python ``while``.
"""
import numpy as np
import pytest

import adsim

Y0 = np.array([0.3, -0.2, 0.5])
P = np.array([1.5, 0.8, -1.0])
DT = 0.05


def step(z, p):
    return np.concatenate([z[:1] + DT, z[1:] + DT * np.sin(p * z[1:])])


def start(y):
    return np.concatenate([np.zeros(1), y])


def plain_loss(cond):
    def loss(y, p):
        z = start(y)
        while cond(adsim.value(z), adsim.value(p)):
            z = step(z, p)
        return np.sum(z[1:] ** 2) + z[0]
    return loss


def while_loss(cond, **options):
    def loss(y, p):
        z = adsim.checkpoint_while(cond, step, start(y), args=(p,), snapshots=4, **options)
        return np.sum(z[1:] ** 2) + z[0]
    return loss


def check(cond, plain_cond=None, points=(1.0, 0.5, 2.0)):
    g = adsim.grad(while_loss(cond), argnums=(0, 1))
    for scale in points:
        want = adsim.grad(plain_loss(plain_cond or cond), argnums=(0, 1))(scale * Y0, P)
        for a, b in zip(g(scale * Y0, P), want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_a_condition_on_the_state_and_the_args():
    check(lambda z, p: z[0] < 1.0 + 0.1 * p[0])


def test_a_condition_with_branches_of_its_own():
    def cond(z, p):
        if z[1] > 0.4:                       # the outcome depends on a second comparison
            return z[0] < 0.6
        return z[0] < 1.2
    check(cond)


def test_a_condition_on_plain_numbers_runs_in_python():
    check(lambda z, p: float(z[0]) < 0.9)


def test_a_condition_counting_its_calls_runs_in_python():
    """Its outcome depends on a counter it changes: recorded once it would
    never change; called at every step, it stops the loop as written."""
    calls = []

    def counting(z, p):
        calls.append(1)
        return len(calls) % 13 != 0

    def plain_counting(z, p):
        return counting(z, p)
    stats = {}
    tape = adsim.record(while_loss(counting, stats=stats), Y0, P)
    tape.forward(Y0, P)                      # the value made while recording
    calls.clear()
    value = tape.forward(Y0, P)
    assert stats["n_steps"] == 12 and len(calls) == 13
    calls.clear()
    assert value == plain_loss(plain_counting)(Y0, P)


@pytest.mark.parametrize("limit", [0.0, 0.3])
def test_no_step_at_the_start(limit):
    check(lambda z, p: z[0] < limit)


def test_a_condition_reading_an_active_value_from_a_closure_is_recorded_and_saves():
    """The active value is a loop input (lifted from the closure): the
    condition is recorded (not called in Python), and its tape saves and
    replays bitwise from a file."""
    from adsim import tapefile

    def closing(y, p):
        z = adsim.checkpoint_while(lambda z: z[0] < 1.0 + 0.1 * p[0], lambda z: step(z, p),
                                   start(y), snapshots=4)
        return np.sum(z[1:] ** 2) + z[0]
    check_against = plain_loss(lambda z, p: z[0] < 1.0 + 0.1 * p[0])
    for scale in (1.0, 0.5):
        for a, b in zip(adsim.grad(closing, argnums=(0, 1))(scale * Y0, P),
                        adsim.grad(check_against, argnums=(0, 1))(scale * Y0, P)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    tape = adsim.record(closing, Y0, P)
    assert not tape.callbacks[0].condition.python_only
    loaded = tapefile.loads(tapefile.dumps(tape))
    for y in (Y0, 0.5 * Y0):
        got, want = loaded.value_and_gradient(y, P), tape.value_and_gradient(y, P)
        assert got[0] == want[0]
        assert all(np.array_equal(a, b) for a, b in zip(got[1], want[1]))


def test_a_counting_condition_reading_an_active_closure_still_runs_in_python():
    """Past the active value, the walk sees the counter the condition
    changes: it is called at every step and stops the loop as written."""
    calls = []

    def cond(z, p):
        calls.append(1)
        return z[0] < 1.0 + 0.1 * p[0] and len(calls) % 9 != 0

    def closing(y, p):
        z = adsim.checkpoint_while(lambda z: cond(z, p), lambda z: step(z, p), start(y))
        return np.sum(z[1:] ** 2) + z[0]
    tape = adsim.record(closing, Y0, P)
    assert tape.callbacks[0].condition.python_only
    tape.forward(Y0, P)                      # the value made while recording
    calls.clear()
    value = tape.forward(Y0, P)
    calls.clear()
    assert value == plain_loss(cond)(Y0, P)
