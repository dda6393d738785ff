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
