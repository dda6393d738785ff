"""The compiled loop executor against a Python driver of the same schedule.

``reference_reverse`` below executes schedule actions one by one in Python
with the step tapes' own replay methods (``_forward``, ``_adjoint``,
``_soadjoint``), trying each recorded variant of a branching step in turn
and recording a new one when none follows its path: the checkpoint driver
as it was written before it was compiled. The compiled executor, run
through the loop op's reverse rules, must give bitwise the same adjoints
(and adjoint tangents) for random loops, schedules and snapshot counts,
whatever variants the step needs.
"""
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim
from adsim._callback import SweepContext
from adsim.checkpoint import Advance, Online, Restore, Revolve, TakeShot, TwoLevel
from adsim.checkpoint.storage import MemoryStore
from adsim.errors import BranchChanged

P = np.array([0.9, -0.4, 1.3])


def smooth(y, p):
    return y + 0.1 * np.sin(p * y) * np.cos(y[::-1]) + 0.02 * np.roll(y, 1) ** 2


def branching(y, p):
    """Its Python branch flips along the loop: several recorded variants."""
    if y[0] > 0.35:
        return 0.9 * y + 0.1 * np.sin(p * y)
    return y + 0.1 * p * np.cos(y) + 0.05


STEPS = {"smooth": smooth, "branching": branching}


def loop_op(step, n, y0, **options):
    """The op of ``checkpoint_loop(step, y, n, args=(p,))`` and its arguments."""
    tape = adsim.record(lambda y, p: adsim.checkpoint_loop(step, y, n, args=(p,), **options),
                        y0, P)
    (op,) = tape.callbacks
    return op


def call(steps, method, z, inputs):
    """``method(tape, xs)`` on the variant whose branches hold at z; a new
    variant is recorded when none does."""
    for tape in list(steps.variants):
        try:
            return method(tape, tape._inputs([z.reshape(tape.input_shapes[0])] + inputs))
        except BranchChanged:
            continue
    tape = steps.add_variant(z, inputs)
    return method(tape, tape._inputs([z] + inputs))


def reference_reverse(steps, actions, n, z0, inputs, w, zdot0=None, wdot=None, in_dots=None):
    """Execute ``actions`` in Python; returns the adjoints (and adjoint tangents)
    of the state and the inputs."""
    second = zdot0 is not None
    store = MemoryStore(10 ** 6)
    state, current, position = (z0, zdot0), 0, n
    sums = [np.zeros((w.shape[0] if not second else 1, x.size)) for x in inputs]
    dot_sums = [np.zeros((wdot.shape[0], x.size)) for x in inputs] if second else None
    positions = {}
    for action in actions:
        if isinstance(action, Advance):
            z, zdot = state
            for _ in range(action.steps):
                if second:
                    z, zdot = call(steps, lambda t, xs: t._tangent(xs, [zdot] + in_dots), z, inputs)
                else:
                    z = call(steps, lambda t, xs: t._forward(xs), z, inputs)
            state, current = (z, zdot), current + action.steps
        elif isinstance(action, TakeShot):
            store.put(action.index, [a for a in state if a is not None])
            positions[action.index] = current
        elif isinstance(action, Restore):
            got = store.get(action.index)
            state, current = (got[0], got[1] if second else None), positions[action.index]
        else:
            z, zdot = state
            if second:
                _, _, adj, adot = call(steps, lambda t, xs: t._soadjoint(
                    xs, [zdot] + in_dots, w, wdot), z, inputs)
                w, wdot = adj[0], adot[0]
                for a, g in zip(sums, adj[1:]):
                    a += g
                for a, g in zip(dot_sums, adot[1:]):
                    a += g
            else:
                _, adj = call(steps, lambda t, xs: t._adjoint(xs, w), z, inputs)
                w = adj[0]
                for a, g in zip(sums, adj[1:]):
                    a += g
            position, current, state = current, None, (None, None)
    assert position == 0
    return (w, sums) if not second else (w, wdot, sums, dot_sums)


def schedule_for(kind, n, s):
    if kind == "revolve":
        return Revolve(n, s)
    if kind == "two_level":
        return TwoLevel(n, max(s // 2, 0), s - max(s // 2, 0))
    return Online(s)


def python_actions(sched, n):
    return list(sched.actions(n) if isinstance(sched, Online) else sched)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 25), s=st.integers(1, 12), q=st.integers(1, 2),
       kind=st.sampled_from(["revolve", "two_level", "online"]),
       step=st.sampled_from(sorted(STEPS)), seed=st.integers(0, 3))
def test_reverse_sweep_is_bitwise_the_python_drivers(n, s, q, kind, step, seed):
    rng = np.random.default_rng(seed)
    y0 = rng.uniform(0.1, 0.6, 3)
    sched = schedule_for(kind, n, s)
    with tempfile.TemporaryDirectory() as directory:
        op = loop_op(STEPS[step], n, y0, schedule=sched,
                     snapshot_dir=directory if kind == "two_level" else None)
        w = rng.standard_normal((q, 3))
        got = op.adjoint([y0, P], None, w.copy(), SweepContext())
    want_w, want_sums = reference_reverse(op.steps, python_actions(sched, n), n, y0, [P], w)
    assert np.array_equal(got[0], want_w)
    assert np.array_equal(got[1], want_sums[0])
    assert op.stats["taped_steps"] == n


@pytest.mark.slow
@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 20), s=st.integers(1, 8), p=st.integers(1, 2),
       kind=st.sampled_from(["revolve", "online"]), step=st.sampled_from(sorted(STEPS)),
       seed=st.integers(0, 3))
def test_second_order_sweep_is_bitwise_the_python_drivers(n, s, p, kind, step, seed):
    rng = np.random.default_rng(seed)
    y0 = rng.uniform(0.1, 0.6, 3)
    sched = schedule_for(kind, n, s)
    op = loop_op(STEPS[step], n, y0, schedule=sched)
    zdot, pdot = rng.standard_normal((p, 3)), rng.standard_normal((p, 3))
    w, wdot = rng.standard_normal(3), rng.standard_normal((p, 3))
    adj, adot = op.soadjoint([y0, P], None, [zdot, pdot], w.copy(), wdot.copy(), SweepContext())
    want = reference_reverse(op.steps, python_actions(sched, n), n, y0, [P], w, zdot, wdot,
                             [pdot])
    assert np.array_equal(adj[0], want[0]) and np.array_equal(adot[0], want[1])
    assert np.array_equal(adj[1], want[2][0][0]) and np.array_equal(adot[1], want[3][0])


@pytest.mark.parametrize("step", sorted(STEPS))
def test_forward_and_kept_prefix_are_bitwise_the_python_drivers(step):
    """The value (the schedule up to its first turn and one step more, kept
    for the reverse rule of the same call: the one made while recording,
    then one made by a replay) and the reverse rule resuming it."""
    n, y0 = 17, np.array([0.2, 0.5, 0.3])
    op = loop_op(STEPS[step], n, y0, snapshots=4)
    z = y0
    for _ in range(n):
        z = call(op.steps, lambda t, xs: t._forward(xs), z, [P])
    w = np.array([[1.0, -2.0, 0.5]])
    want = reference_reverse(op.steps, list(Revolve(n, 4)), n, y0, [P], w)
    for _ in range(2):
        context = SweepContext("adjoint", 1)
        assert np.array_equal(op.value([y0, P], context), z)
        assert op.stats["output_steps"] == 1
        got = op.adjoint([y0, P], None, w.copy(), context)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1][0])
        assert op.stats["output_steps"] == 1 and op.stats["taped_steps"] == n
        assert op.stats["forward_steps"] == Revolve(n, 4).forward_steps
    context = SweepContext("values", 0)
    assert np.array_equal(op.value([y0, P], context), z)
    assert op.stats["output_steps"] == n and context.take(op) is None
