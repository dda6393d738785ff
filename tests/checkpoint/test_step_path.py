"""Checkpointed loops remember which recorded variant of the step took each
step (adsim/_loop_run.pxi, StepPath): an advance that re-runs a step from a
snapshot and the turn that reverses it try that variant first. A step whose
branch changes then costs a failed try (``stats["variant_misses"]``) only
the first time the loop passes it, however often the schedule comes back."""
import numpy as np
import pytest

import adsim
from test_while_released import DT, G, bounce


def switches(e, n):
    """How often the branch taken differs from the step before's."""
    state, before, count = np.array([1.0, 0.0]), False, 0
    for _ in range(n):
        h = state[0] + (state[1] - G * DT) * DT
        count += (h < 0.0) != before
        before = h < 0.0
        state = bounce(state, e)
    return count


@pytest.mark.parametrize("snapshots", [3, 8])
def test_a_branch_change_misses_once_whatever_the_schedule(snapshots):
    n = 600
    stats = {}

    def loss(e):
        return adsim.checkpoint_loop(bounce, np.array([1.0, 0.0]), n, args=(e,),
                                     snapshots=snapshots, stats=stats)[0]
    e = np.array(0.8)
    tape = adsim.record(loss, e)
    g = tape.gradient(e)
    assert stats["forward_steps"] > n          # the schedule re-ran steps from snapshots
    # once per change of branch, when the first pass meets it (the last step
    # is met first by its turn, with no variant known for it)
    assert 0 < stats["variant_misses"] <= switches(0.8, n) + 1
    h = 1e-7
    assert g == pytest.approx((loss(e + h) - loss(e - h)) / (2 * h), rel=1e-5)


def test_a_while_loop_counts_its_misses_too():
    stats = {}

    def loss(e):
        return adsim.checkpoint_while(lambda s, e: s[0] + s[1] ** 2 / (2 * G) > 0.2, bounce,
                                      np.array([1.0, 0.0]), args=(e,), stats=stats)[1]
    e = np.array(0.9)
    tape = adsim.record(loss, e)
    tape.gradient(e)
    n = stats["n_steps"]
    assert 0 < stats["variant_misses"] <= switches(0.9, n) + 1


# A sweep's first pass starts from the path the loop's last sweep took
# (PathHints): a replay at the same point tries no wrong variant; at a moved
# point the hints are wrong where the branches moved, which costs tries only.

@pytest.mark.parametrize("kind", ["loop", "while"])
def test_the_next_sweep_starts_from_the_last_path(kind):
    stats = {}

    def loss(e):
        if kind == "loop":
            return adsim.checkpoint_loop(bounce, np.array([1.0, 0.0]), 400, args=(e,),
                                         snapshots=4, stats=stats)[0]
        return adsim.checkpoint_while(lambda s, e: s[0] + s[1] ** 2 / (2 * G) > 0.2, bounce,
                                      np.array([1.0, 0.0]), args=(e,), stats=stats)[1]
    e = np.array(0.8)
    tape = adsim.record(loss, e)
    first = tape.gradient(e)
    assert stats["variant_misses"] > 0
    again = tape.gradient(e)
    assert stats["variant_misses"] == 0
    assert again == first
    v = np.array(1.0)
    assert tape.hvp(e, v) == tape.hvp(e, v)
    assert stats["variant_misses"] == 0
    moved = np.array(0.83)              # the bounces come at other steps
    g = tape.gradient(moved)
    assert g == adsim.record(loss, moved).gradient(moved)
    h = 1e-7
    assert g == pytest.approx((loss(moved + h) - loss(moved - h)) / (2 * h), rel=1e-5)
