"""Tests of the binomial schedule (Revolve), its counts and the simulator."""

import heapq
import time
from functools import lru_cache
from math import comb

import pytest
from hypothesis import given, settings, strategies as st

from adsim.checkpoint import (
    Advance,
    FirstTurn,
    Restore,
    Revolve,
    TakeShot,
    TwoLevel,
    YouTurn,
    binomial_cost,
    repetition_number,
    simulate,
)


def optimum_by_formula(n_steps, snapshots):
    """``r n - C(s + r, s + 1)`` with ``r`` the smallest r with C(s+r, s) >= n."""
    r = 0
    while comb(snapshots + r, snapshots) < n_steps:
        r += 1
    return r * n_steps - comb(snapshots + r, snapshots + 1)


@lru_cache(maxsize=None)
def optimum_by_recursion(n_steps, snapshots):
    """Dynamic program over the first snapshot position (Griewank 1992).

    Reversing m steps from a stored start with c slots: advance j steps,
    store, reverse the m - j steps ahead with c - 1 slots, restore the start
    and reverse the j steps behind with c slots.
    """
    if n_steps == 1:
        return 0
    if snapshots == 1:
        return n_steps * (n_steps - 1) // 2
    return min(
        j + optimum_by_recursion(n_steps - j, snapshots - 1) + optimum_by_recursion(j, snapshots)
        for j in range(1, n_steps)
    )


def optimum_by_search(n_steps, snapshots):
    """Fewest plain steps over *all* legal action sequences (Dijkstra).

    A state is (current index, reverse position, sorted slot contents), with
    -1 for "no current state" and for empty slots; slot identity does not
    change the cost, so contents are kept as a sorted tuple.
    """
    start = (0, n_steps, (-1,) * snapshots)
    best = {start: 0}
    queue = [(0, start)]
    while queue:
        cost, state = heapq.heappop(queue)
        if cost > best[state]:
            continue
        current, reverse, held = state
        if reverse == 0:
            return cost
        for step_cost, following in _search_moves(current, reverse, held, n_steps):
            total = cost + step_cost
            if total < best.get(following, total + 1):
                best[following] = total
                heapq.heappush(queue, (total, following))
    raise AssertionError("no schedule reverses the loop")


def _search_moves(current, reverse, held, n_steps):
    turned = reverse < n_steps
    limit = reverse - 1 if turned else n_steps - 1
    if current >= 0:
        if current < limit:
            yield 1, (current + 1, reverse, held)
        if current == reverse - 1:
            yield 0, (-1, reverse - 1, held)
        for i in range(len(held)):
            stored = tuple(sorted(held[:i] + (current,) + held[i + 1 :]))
            yield 0, (current, reverse, stored)
    for index in held:
        if 0 <= index < reverse:
            yield 0, (index, reverse, held)


# -- the optimum -------------------------------------------------------------


def test_closed_form_matches_formula_on_full_grid():
    for snapshots in range(1, 41):
        r = 0
        for n_steps in range(1, 2001):
            while comb(snapshots + r, snapshots) < n_steps:
                r += 1
            expected = r * n_steps - comb(snapshots + r, snapshots + 1)
            schedule = Revolve(n_steps, snapshots)
            assert schedule.forward_steps == expected, (n_steps, snapshots)
            assert schedule.repetition_number == r, (n_steps, snapshots)


@pytest.mark.parametrize("snapshots", range(1, 7))
def test_formula_is_the_recursive_optimum(snapshots):
    for n_steps in range(1, 41):
        assert optimum_by_formula(n_steps, snapshots) == optimum_by_recursion(
            n_steps, snapshots
        ), n_steps


@pytest.mark.parametrize(("snapshots", "longest"), [(1, 10), (2, 10), (3, 10), (4, 9)])
def test_formula_is_the_optimum_over_all_schedules(snapshots, longest):
    for n_steps in range(1, longest + 1):
        assert optimum_by_search(n_steps, snapshots) == Revolve(n_steps, snapshots).forward_steps


def test_special_cases():
    assert Revolve(1, 1).forward_steps == 0
    assert Revolve(1, 5).forward_steps == 0
    for n_steps in range(1, 60):
        assert Revolve(n_steps, 1).forward_steps == n_steps * (n_steps - 1) // 2
        assert Revolve(n_steps, n_steps).forward_steps == n_steps - 1
        assert Revolve(n_steps, n_steps + 7).forward_steps == n_steps - 1
        assert Revolve(n_steps, max(n_steps - 1, 1)).forward_steps == n_steps - 1


def test_repetition_number_helper_with_and_without_bound():
    for snapshots in (2, 3, 7, 30):
        for n_steps in range(1, 3000, 7):
            r = repetition_number(n_steps, snapshots)
            assert comb(snapshots + r, snapshots) >= n_steps
            assert r == 0 or comb(snapshots + r - 1, snapshots) < n_steps
            assert repetition_number(n_steps, snapshots, upper=r + 3) == r
    assert binomial_cost(10**5, 30) == Revolve(10**5, 30).forward_steps


# -- executed schedules --------------------------------------------------------


def test_golden_three_steps_two_snapshots():
    assert list(Revolve(3, 2)) == [
        TakeShot(0), Advance(1), TakeShot(1), Advance(1), FirstTurn(),
        Restore(1), YouTurn(), Restore(0), YouTurn(),
    ]  # fmt: skip


def test_golden_five_steps_two_snapshots():
    # r = 2: advance 3 (the most that leaves 3 = beta(2, 1) steps behind),
    # reverse the last 2 steps from slot 1, then the first 3 with both slots.
    assert list(Revolve(5, 2)) == [
        TakeShot(0), Advance(3), TakeShot(1), Advance(1), FirstTurn(),
        Restore(1), YouTurn(),
        Restore(0), Advance(1), TakeShot(1), Advance(1), YouTurn(),
        Restore(1), YouTurn(),
        Restore(0), YouTurn(),
    ]  # fmt: skip


def test_golden_trivial_cases():
    assert list(Revolve(1, 3)) == [FirstTurn()]
    assert list(Revolve(2, 1)) == [TakeShot(0), Advance(1), FirstTurn(), Restore(0), YouTurn()]
    assert list(Revolve(3, 1)) == [
        TakeShot(0), Advance(2), FirstTurn(), Restore(0), Advance(1), YouTurn(),
        Restore(0), YouTurn(),
    ]  # fmt: skip


def check_revolve(n_steps, snapshots):
    schedule = Revolve(n_steps, snapshots)
    counts = simulate(schedule)
    assert counts.forward_steps == schedule.forward_steps
    assert counts.forward_steps == optimum_by_formula(n_steps, snapshots)
    assert counts.turns == n_steps
    assert counts.slots_used <= snapshots
    assert counts.max_repetitions == schedule.repetition_number
    return counts


def test_simulated_small_grid():
    for snapshots in range(1, 13):
        for n_steps in range(1, 151):
            check_revolve(n_steps, snapshots)


def _boundary_lengths(snapshots, limit):
    """Loop lengths around the binomial boundaries beta(s, r), below limit."""
    lengths = set()
    for r in range(1, 60):
        boundary = comb(snapshots + r, snapshots)
        lengths.update(n for n in (boundary - 1, boundary, boundary + 1) if 1 <= n <= limit)
        if boundary > limit:
            break
    return lengths


@pytest.mark.slow
@pytest.mark.parametrize("snapshots", range(1, 41))
def test_simulated_strided_grid(snapshots):
    lengths = set(range(151, 2001, 97)) | _boundary_lengths(snapshots, 2000) | {2000}
    for n_steps in sorted(lengths):
        check_revolve(n_steps, snapshots)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(n_steps=st.integers(1, 5000), snapshots=st.integers(1, 64))
def test_simulated_random_cases(n_steps, snapshots):
    check_revolve(n_steps, snapshots)


def test_iterating_twice_gives_the_same_actions():
    schedule = Revolve(200, 6)
    assert list(schedule) == list(schedule) == list(schedule.actions())


def test_long_loop_is_generated_lazily_and_fast():
    schedule = Revolve(10**5, 30)
    started = time.perf_counter()
    advanced = sum(action.steps for action in schedule if type(action) is Advance)
    elapsed = time.perf_counter() - started
    assert advanced == schedule.forward_steps
    assert 4.4 < schedule.forward_steps / 10**5 < 4.6
    assert elapsed < 5.0


def test_long_loop_with_one_snapshot_needs_no_deep_recursion():
    counts = simulate(Revolve(3000, 1))
    assert counts.forward_steps == 3000 * 2999 // 2
    assert counts.max_repetitions == 2999


@pytest.mark.parametrize(
    ("arguments", "error"),
    [((0, 3), ValueError), ((3, 0), ValueError), ((2.5, 3), TypeError), ((True, 3), TypeError)],
)
def test_invalid_arguments(arguments, error):
    with pytest.raises(error):
        Revolve(*arguments)


# -- the simulator rejects illegal schedules ----------------------------------


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([Restore(1), FirstTurn()], "empty"),
        ([TakeShot(2), Advance(2), FirstTurn()], "slot outside"),
        ([Advance(4), FirstTurn()], "limit"),
        ([Advance(1), FirstTurn()], "current state 1"),
        ([YouTurn()], "FirstTurn must come first"),
        ([Advance(2), FirstTurn(), YouTurn()], "no current state"),
        ([Advance(2), FirstTurn(), Advance(1)], "no current state"),
        ([TakeShot(0), Advance(2), FirstTurn(), FirstTurn()], "FirstTurn"),
        ([TakeShot(0), Advance(2), TakeShot(1), FirstTurn(), Restore(1)], "no longer needed"),
        ([TakeShot(0), Advance(2), FirstTurn(), Restore(0), Advance(2)], "limit"),
        ([Advance(2), FirstTurn()], "not reversed"),
        ([TakeShot(0), Advance(2), FirstTurn(), Restore(0), Advance(1), YouTurn(),
          Restore(0), YouTurn(), Restore(0)], "after the last turn"),
    ],
)  # fmt: skip
def test_simulate_rejects_illegal_actions(actions, message):
    with pytest.raises(ValueError, match=message):
        simulate(actions, n_steps=3, snapshots=2)


def test_simulate_rejects_foreign_objects():
    with pytest.raises(TypeError, match="not a schedule action"):
        simulate(["advance"], n_steps=1, snapshots=1)


def test_simulate_counts_per_slot():
    counts = simulate(Revolve(5, 2))
    assert counts.shots_per_slot == (1, 2)
    assert counts.restores_per_slot == (2, 2)
    assert counts.shots == 3 and counts.restores == 4


# -- two levels ------------------------------------------------------------------


def relabelled(actions, mapping):
    """Actions with slot indices renamed through ``mapping``."""
    kinds = {TakeShot: TakeShot, Restore: Restore}
    return [kinds[type(a)](mapping[a.index]) if type(a) in kinds else a for a in actions]


@pytest.mark.parametrize(
    ("n_steps", "memory", "disk"),
    [
        (1, 1, 0), (2, 0, 1), (9, 1, 2), (100, 3, 2), (1000, 5, 5), (4321, 8, 3),
        (5000, 0, 4), (30, 40, 5), (3000, 2000, 500), (3000, 1000, 1000),
    ],
)
def test_two_level_is_revolve_with_slots_relabelled(n_steps, memory, disk):
    schedule = TwoLevel(n_steps, memory, disk)
    plain = Revolve(n_steps, memory + disk)
    assert schedule.forward_steps == plain.forward_steps
    assert schedule.repetition_number == plain.repetition_number
    actions = list(schedule)
    counts = simulate(actions, n_steps, memory + disk)
    assert counts.forward_steps == plain.forward_steps
    mapping = {}
    for ours, theirs in zip(actions, plain):
        assert type(ours) is type(theirs)
        if type(ours) in (TakeShot, Restore):
            assert mapping.setdefault(theirs.index, ours.index) == ours.index
    assert relabelled(list(plain), mapping) == actions
    disk_slots = range(memory, memory + disk)
    assert schedule.disk_writes == sum(counts.shots_per_slot[i] for i in disk_slots)
    assert schedule.disk_reads == sum(counts.restores_per_slot[i] for i in disk_slots)
    assert schedule.memory_reads + schedule.disk_reads == counts.restores
    assert schedule.memory_writes + schedule.disk_writes == counts.shots
    memory_restores = [counts.restores_per_slot[i] for i in range(memory)]
    disk_restores = [counts.restores_per_slot[i] for i in disk_slots]
    if memory_restores and disk_restores:
        assert max(disk_restores) <= min(memory_restores)


def test_two_level_puts_the_long_lived_snapshots_on_disk():
    schedule = TwoLevel(10**5, memory_snapshots=20, disk_snapshots=10)
    # Depths 0..9 (the initial state and the first snapshots) go to disk.
    assert schedule.disk_writes < 0.02 * (schedule.disk_writes + schedule.memory_writes)
    assert schedule.disk_reads < 0.03 * (schedule.disk_reads + schedule.memory_reads)
    actions = iter(schedule)
    assert next(actions) == TakeShot(20)  # the initial state is on disk
    assert [schedule.is_disk(i) for i in (0, 19, 20, 29)] == [False, False, True, True]


def test_two_level_without_disk_is_revolve():
    assert list(TwoLevel(500, 7, 0)) == list(Revolve(500, 7))
    schedule = TwoLevel(500, 7, 0)
    assert schedule.disk_reads == schedule.disk_writes == 0


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ((10, 0, 0), ValueError), ((10, -1, 2), ValueError),
        ((0, 1, 1), ValueError), ((10, 1.0, 1), TypeError),
    ],
)
def test_two_level_invalid_arguments(arguments, error):
    with pytest.raises(error):
        TwoLevel(*arguments)
