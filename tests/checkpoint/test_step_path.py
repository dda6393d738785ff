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


# ---- the order variants are tried in on a first pass -------------------------------

def cycle_step(s, a):
    """Three branches taken in turn (the phase s[0] counts 0, 1, 2, 0, ...)."""
    if s[0] < 0.5:
        y = s[1] * a
    elif s[0] < 1.5:
        y = s[1] + a
    else:
        y = s[1] - 0.5 * a
    return np.stack([np.where(s[0] > 1.5, 0.0, s[0] + 1.0), y])


def test_a_cycle_of_branches_is_learned_on_the_first_pass():
    """Each variant is tried after the one it followed last (path_expected):
    a cycle A, B, C, A, ... misses a few times while it is learned, not at
    every step as trying the variant used last did."""
    n, stats = 300, {}

    def loss(a):
        return adsim.checkpoint_loop(cycle_step, np.array([0.0, 1.0]), n, args=(a,),
                                     snapshots=4, stats=stats)[1]
    a = np.array(0.9)
    tape = adsim.record(loss, a)
    y = tape.forward(a)
    assert stats["variant_misses"] <= 10, stats
    assert y == pytest.approx(loss(a), rel=1e-12)
    g = tape.gradient(a)
    h = 1e-6
    assert g == pytest.approx((loss(a + h) - loss(a - h)) / (2 * h), rel=1e-5)


def tree_step(s, a):
    """One of eight branches by where the chaotic s[0] falls (a tree of
    three comparisons), so the next branch cannot be foreseen."""
    u = s[0]
    if u < 0.5:
        if u < 0.25:
            k = 0.0 if u < 0.125 else 1.0
        else:
            k = 2.0 if u < 0.375 else 3.0
    else:
        if u < 0.75:
            k = 4.0 if u < 0.625 else 5.0
        else:
            k = 6.0 if u < 0.875 else 7.0
    return np.stack([3.9 * u * (1.0 - u), s[1] * (1.0 + 0.01 * k * a), s[2] + 1.0])


@pytest.mark.parametrize("loop", ["checkpoint_loop", "checkpoint_while"])
def test_a_variant_that_leaves_at_a_comparison_is_followed_by_one_that_takes_the_other_side(loop):
    """After a failed try at a comparison, the variants that take the other
    outcome there are tried next (others_first, others_next): a step among
    eight leaves, chosen by three comparisons, costs at most three failed
    tries; trying them in the order last used cost about four on average."""
    n, stats = 400, {}

    def loss(a):
        s0 = np.array([0.3, 1.0, 0.0])
        if loop == "checkpoint_loop":
            s = adsim.checkpoint_loop(tree_step, s0, n, args=(a,), snapshots=4, stats=stats)
        else:
            s = adsim.checkpoint_while(lambda s, a: s[2] < n, tree_step, s0, args=(a,),
                                       stats=stats)
        return s[1]
    a = np.array(0.5)
    tape = adsim.record(loss, a)
    y = tape.forward(a)
    assert stats["variant_misses"] <= 1.2 * n, stats        # (about 0.75 n; 3.9 n before)
    assert y == pytest.approx(loss(a), rel=1e-12)
