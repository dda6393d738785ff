"""The compiled schedule sources (adsim/_schedules.pyx) give exactly
the actions of the pure-Python schedules they stand for: Revolve, TwoLevel,
Online (its snapshot decisions, its reversal, its whole run), and the same
binomial costs. The loop executor runs these sources, so the step counts of
every checkpointed loop stay those of the Python schedules."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from adsim import _schedules
from adsim.checkpoint import Online, Revolve, TwoLevel, binomial_cost
from adsim.checkpoint.schedules import Advance, FirstTurn, Restore, TakeShot, YouTurn

KINDS = {Advance: (_schedules.ACTION_KINDS["Advance"], "steps"),
         TakeShot: (_schedules.ACTION_KINDS["TakeShot"], "index"),
         Restore: (_schedules.ACTION_KINDS["Restore"], "index"),
         FirstTurn: (_schedules.ACTION_KINDS["FirstTurn"], None),
         YouTurn: (_schedules.ACTION_KINDS["YouTurn"], None)}


def encoded(actions):
    """Python actions as the (kind, argument) pairs of the compiled sources."""
    out = []
    for action in actions:
        kind, attribute = KINDS[type(action)]
        out.append((kind, getattr(action, attribute) if attribute else 0))
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 7, 30, 257, 4000])
@pytest.mark.parametrize("s", [1, 2, 3, 5, 29, 10 ** 9])
def test_revolve_actions(n, s):
    assert list(_schedules.revolve_actions(n, s)) == encoded(Revolve(n, s))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 3000), s=st.integers(1, 80))
def test_revolve_actions_and_costs_at_random(n, s):
    assert list(_schedules.revolve_actions(n, s)) == encoded(Revolve(n, s))
    assert _schedules._binomial_cost(n, s) == binomial_cost(n, s)


def test_binomial_costs_of_long_loops():
    for n, s in [(10 ** 6, 2), (10 ** 9, 3), (10 ** 12, 40), (10 ** 7, 10 ** 6), (5, 10 ** 9)]:
        assert _schedules._binomial_cost(n, s) == binomial_cost(n, s)


@pytest.mark.parametrize(("n", "memory", "disk"), [(10, 1, 3), (100, 3, 5), (1000, 4, 2),
                                                   (30, 0, 6), (7, 2, 0)])
def test_two_level_actions(n, memory, disk):
    sched = TwoLevel(n, memory, disk)
    assert list(_schedules.revolve_actions(n, sched.snapshots, sched.depth_slots())) == \
        encoded(sched)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 400), s=st.integers(1, 30))
def test_online_run_of_known_length(n, s):
    assert list(_schedules.OnlineRun(s, n)) == encoded(Online(s).actions(n))


@pytest.mark.parametrize("s", [1, 2, 3, 7, 40])
def test_online_decisions_and_reversal(s):
    """Snapshot decisions step by step over a long forward pass, and the
    reversal at several stopping points of it."""
    python, compiled = Online(s), _schedules.OnlineDecisions(s)
    stops = {1, 2, s, s + 1, 97, 1000, 20000}
    for k in range(20000):
        shot = python.forward_step(k)
        assert compiled.decide(k) == (None if shot is None else shot.index), k
        if k + 1 in stops:
            assert list(compiled.reversal(k + 1)) == encoded(Online._reverse_actions(
                python._segments(k + 1), s))
    assert compiled.held == (list(python.snapshot_positions), python._slots)


def test_python_actions_are_checked_one_by_one():
    assert list(_schedules.PythonActions(iter(Revolve(9, 3)), KINDS)) == encoded(Revolve(9, 3))
    with pytest.raises(TypeError, match="schedule action 2 is not an action: 'advance'"):
        list(_schedules.PythonActions([TakeShot(0), Advance(3), "advance"], KINDS))


def test_memory_is_bounded_by_the_slots_not_the_length():
    """A source holds O(slots): a loop of 10**12 steps starts at once."""
    source = _schedules.revolve_actions(10 ** 12, 5)
    first = [next(source) for _ in range(6)]
    assert first[0] == (_schedules.ACTION_KINDS["TakeShot"], 0)
    assert first[1][0] == _schedules.ACTION_KINDS["Advance"] and first[1][1] > 10 ** 9
    assert np.all([kind in _schedules.ACTION_KINDS.values() for kind, _ in first])
