"""A checkpointed loop's step recorded again after the loop has run.

A sweep under a tight memory budget, or a replay taking a path no kept
variant holds, records the step again -- when the program may have changed
what the step reads besides its arguments (a dict of settings updated in
place after the loop). Recorded with those values, the variant would be of
a step the loop never took and the gradient wrong without an error
(d/dp came out 0.47 where it is 0.33); it is refused instead, while a
change the step does not depend on (a counter) passes."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close

P = np.array([1.0, 2.0])
U0 = np.array([0.3, 0.7])


def loss(p, memory_limit, after_loop):
    """40 steps of a step with two branch paths (two variants), reading a
    setting from a dict; ``after_loop(settings)`` runs once the loop has."""
    settings = {"c": 1.0, "calls": 0}

    def step(u, p):
        if u[0] > 0.5:
            return u * 0.9 + settings["c"] * p * 0.01
        return u * 1.05 + settings["c"] * p * 0.02
    u = adsim.checkpoint_loop(step, U0 + 0 * p, 40, args=(p,), memory_limit=memory_limit)
    after_loop(settings)
    return np.sum(u ** 2)


def changed_setting(settings):
    settings["c"] = 5.0


def counted(settings):
    settings["calls"] += 7      # in the dict the step reads, but not read by it


def untouched(settings):
    pass


def plain_gradient(p):
    """Central differences of the loss on plain values, with steps small
    enough that no step's branch changes."""
    h = 1e-6
    return np.array([(loss(p + h * e, None, untouched) - loss(p - h * e, None, untouched)) /
                     (2 * h) for e in np.eye(p.size)])


# 12 kB holds one step variant: the reverse sweep records the other again
TIGHT = "12KB"


def test_a_setting_changed_after_the_loop_is_refused_where_a_variant_is_recorded_again():
    with pytest.raises(adsim.UnsupportedOperation, match="changed since the loop ran"):
        adsim.grad(lambda p: loss(p, TIGHT, changed_setting))(P)


@pytest.mark.parametrize("after_loop", [untouched, counted], ids=["untouched", "a counter"])
def test_an_unchanged_or_unread_environment_keeps_the_gradient_under_a_tight_budget(after_loop):
    g = adsim.grad(lambda p: loss(p, TIGHT, after_loop))(P)
    assert_close(g, plain_gradient(P), 1e-7, 1e-9)


def test_without_a_budget_every_variant_is_recorded_while_the_loop_runs():
    # the settings change after the loop, but no variant is recorded then
    g = adsim.grad(lambda p: loss(p, None, changed_setting))(P)
    assert_close(g, plain_gradient(P), 1e-7, 1e-9)


def test_a_replay_at_a_new_point_after_the_setting_changed_is_refused_or_right():
    settings_seen = []

    def f(p):
        return loss(p, None, settings_seen.append)
    tape = adsim.record(f, P)
    settings_seen[0]["c"] = 3.0         # the program changes it after the recording
    far = np.array([-30.0, -40.0])      # the state stays below 0.5: one branch only
    try:
        g = tape.gradient(far)
    except (adsim.UnsupportedOperation, adsim.BranchChanged):
        return
    assert_close(g, plain_gradient(far), 1e-7, 1e-9)
