"""Tests of the online schedule for loops of unknown length.

Cost comparison used throughout: the online total is every plain step
evaluation of a run, ``n`` for the forward pass plus the advances of the
reversal; the offline reference is ``Revolve(n, s).forward_steps``, the
fewest plain evaluations of any schedule that knows ``n`` in advance (it
needs only ``n - 1`` of them before its first turn). ``ratio = online /
offline``.
"""

import pytest

from adsim.checkpoint import (
    Advance,
    FirstTurn,
    Online,
    Restore,
    Revolve,
    TakeShot,
    binomial_cost,
    simulate,
)

RATIO_GOAL = 1.10
SNAPSHOT_COUNTS = [2, 3, 5, 10, 20, 30]


def run_actions(schedule, n_steps, extra_call=False):
    """The driver's view of a run: forward actions, then ``reverse(n_steps)``.

    With ``extra_call`` the driver also asked about step ``n_steps`` but the
    loop stopped before running it.
    """
    actions = []
    for step in range(n_steps + int(extra_call)):
        shot = schedule.forward_step(step)
        if shot is not None:
            actions.append(shot)
        if step < n_steps:
            actions.append(Advance(1))
    actions.extend(schedule.reverse(n_steps))
    return actions


def merge_advances(actions):
    """The same actions with consecutive advances joined into one."""
    merged = []
    for action in actions:
        if type(action) is Advance and merged and type(merged[-1]) is Advance:
            merged[-1] = Advance(merged[-1].steps + action.steps)
        else:
            merged.append(action)
    return merged


def check_online(snapshots, n_steps):
    schedule = Online(snapshots)
    counts = simulate(schedule.actions(n_steps), n_steps, snapshots)
    assert counts.forward_steps == n_steps + schedule.reverse_steps(n_steps)
    assert counts.turns == n_steps
    assert counts.slots_used <= snapshots
    return counts


def best_placement_costs(limit, snapshots):
    """Fewest evaluations over all snapshot placements, for each n <= limit.

    ``n`` plus the cheapest split of the loop into segments reversed with
    ``s, s - 1, ...`` slots: what the best forward-pass placement for that
    very ``n`` would cost, a yardstick for short loops.
    """
    best = {1: [binomial_cost(m, 1) for m in range(limit + 1)]}
    for slots in range(2, snapshots + 1):
        fewer = best[slots - 1]
        best[slots] = [
            min(
                [binomial_cost(m, slots)]
                + [binomial_cost(a, slots) + fewer[m - a] for a in range(1, m)]
            )
            for m in range(limit + 1)
        ]
    return [n + cost for n, cost in enumerate(best[snapshots])]


# -- protocol ----------------------------------------------------------------


def test_first_states_fill_the_slots_in_order():
    schedule = Online(4)
    assert [schedule.forward_step(k) for k in range(4)] == [TakeShot(i) for i in range(4)]
    assert schedule.snapshot_positions == (0, 1, 2, 3)
    assert schedule.steps_seen == 4


def test_reverse_starts_with_a_restore_and_the_first_turn():
    schedule = Online(3)
    for step in range(50):
        schedule.forward_step(step)
    actions = list(schedule.reverse(50))
    assert type(actions[0]) is Restore
    assert next(a for a in actions if type(a).__name__.endswith("Turn")) == FirstTurn()


def test_protocol_errors():
    schedule = Online(3)
    with pytest.raises(ValueError, match="expects step 0"):
        schedule.forward_step(1)
    schedule.forward_step(0)
    schedule.forward_step(1)
    with pytest.raises(ValueError, match="expects step 2"):
        schedule.forward_step(3)
    with pytest.raises(ValueError, match="2 forward_step calls"):
        schedule.reverse(3)
    with pytest.raises(ValueError):
        schedule.reverse(0)
    list(schedule.reverse(2))
    with pytest.raises(ValueError, match="already called"):
        schedule.reverse(2)
    with pytest.raises(ValueError, match="expects step"):
        schedule.forward_step(2)
    assert schedule.forward_step(0) == TakeShot(0)  # a new run
    with pytest.raises(TypeError):
        schedule.forward_step(True)
    with pytest.raises(ValueError):
        Online(0)
    with pytest.raises(TypeError):
        Online(2.0)


def test_schedule_kind_flags():
    assert Online.requires_n_steps is False
    assert Revolve.requires_n_steps is True


# -- legality and counts ----------------------------------------------------------


@pytest.mark.parametrize("snapshots", [1, 2, 3, 5, 10, 20, 30])
def test_simulated_runs(snapshots):
    lengths = list(range(1, 121)) + [257, 1000, 3001, 12345]
    for n_steps in lengths:
        check_online(snapshots, n_steps)


@pytest.mark.slow
@pytest.mark.parametrize("snapshots", [2, 30])
def test_simulated_long_runs(snapshots):
    counts = check_online(snapshots, 10**5)
    offline = Revolve(10**5, snapshots).forward_steps
    assert counts.forward_steps <= RATIO_GOAL * offline


def test_one_snapshot_recomputes_from_the_start():
    for n_steps in (1, 2, 7, 40):
        counts = check_online(1, n_steps)
        assert counts.forward_steps == n_steps + n_steps * (n_steps - 1) // 2


def test_short_loops_store_every_state():
    for n_steps in range(1, 11):
        counts = check_online(10, n_steps)
        assert counts.forward_steps == n_steps  # the forward pass only
        assert counts.max_repetitions == 1


def test_stopping_after_an_extra_forward_step_call_is_legal():
    for snapshots in (2, 4):
        for n_steps in (1, 5, 17, 60):
            actions = run_actions(Online(snapshots), n_steps, extra_call=True)
            simulate(actions, n_steps, snapshots)


def test_decisions_depend_only_on_the_steps_seen():
    short, long = Online(5), Online(5)
    decisions_short = [short.forward_step(k) for k in range(300)]
    decisions_long = [long.forward_step(k) for k in range(1000)]
    assert decisions_long[:300] == decisions_short
    assert merge_advances(run_actions(Online(5), 300)) == list(Online(5).actions(300))


def test_runs_repeat_identically():
    schedule = Online(6)
    assert list(schedule.actions(500)) == list(schedule.actions(500))
    assert schedule.forward_steps_for(500) == Online(6).forward_steps_for(500)


# -- cost against the offline optimum --------------------------------------------


def ratios(snapshots, lengths):
    """Online total / offline optimum at each length, from one forward pass."""
    schedule = Online(snapshots)
    wanted = sorted(set(lengths))
    result = {}
    step = 0
    for n_steps in wanted:
        while step < n_steps:
            schedule.forward_step(step)
            step += 1
        online = n_steps + schedule.reverse_steps(n_steps)
        result[n_steps] = online / binomial_cost(n_steps, snapshots)
    return result


@pytest.mark.slow
@pytest.mark.parametrize("snapshots", SNAPSHOT_COUNTS)
def test_within_ten_percent_of_offline_from_100_steps(snapshots, record_property):
    lengths = list(range(100, 3001)) + list(range(3001, 10**5 + 1, 89)) + [10**5]
    measured = ratios(snapshots, lengths)
    worst = max(measured, key=measured.get)
    record_property(f"worst_ratio_s{snapshots}", f"{measured[worst]:.4f} at n={worst}")
    assert measured[worst] <= RATIO_GOAL, (worst, measured[worst])


@pytest.mark.parametrize("snapshots", [2, 3, 5, 10])
def test_short_loops_close_to_the_best_placement(snapshots):
    """Below 100 steps the 10 % goal is out of reach for any placement.

    For example at ``n = s + 1`` every placement leaves a segment of two
    steps, so ``n + 1`` evaluations against the offline ``n - 1``. Here the
    schedule is compared with the best placement for each ``n``.
    """
    limit = 120
    best = best_placement_costs(limit, snapshots)
    schedule = Online(snapshots)
    for n_steps in range(1, limit + 1):
        schedule.forward_step(n_steps - 1)
        online = n_steps + schedule.reverse_steps(n_steps)
        assert best[n_steps] <= online <= 1.16 * best[n_steps], n_steps
    assert max(ratios(snapshots, range(2, 100)).values()) <= 2.0


def test_unavoidable_gap_just_past_the_slot_count():
    for snapshots in (5, 10, 30):
        n_steps = snapshots + 1
        best = best_placement_costs(n_steps, snapshots)[n_steps]
        assert best == n_steps + 1 == Online(snapshots).forward_steps_for(n_steps)
        assert Revolve(n_steps, snapshots).forward_steps == n_steps - 1
