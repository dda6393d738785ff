"""With t_eval, solve_ivp's memory stays bounded by memory_limit / snapshots.

Outputs small next to the solver state travel in the state of one
checkpointed loop over the whole integration (``snapshots`` for each
interval between output times); events (here one that never happens) cut
the integration into one loop per interval."""
import re
import tracemalloc

import numpy as np
import pytest

import adsim
from adsim.integrate import solve_ivp
from ivp_problems import burgers, burgers_problem

U0, NU, DX = burgers_problem(128)
T_END = 1.5
SOLVER = 8 * U0.size * (7 + 2) + 8 * 7          # RK45: 7 stage rows, y, y_old, 7 scalars
OVERHEAD = 512                                  # a snapshot's bookkeeping (docs/checkpointing.md)
T_EVAL = [0.5, T_END]
# (events, loops, bytes of a loop state): without events the two outputs travel
# in the state (next time, later times, outputs, count); with events each
# interval is a loop of its own
LAYOUTS = {"carried": (None, 1, SOLVER + 8 * (2 * (U0.size + 1) + 1)),
           "per interval": (lambda t, u, nu, dx: 1.0, 2, SOLVER)}


def make_loss(stats, events, **options):
    def loss(u0):
        res = solve_ivp(burgers, (0.0, T_END), u0, t_eval=T_EVAL, args=(NU, DX),
                        rtol=1e-6, atol=1e-8, events=events, stats=stats, **options)
        return np.sum(res.y[:, 0] ** 2) + np.sum(res.y[:, 1] ** 3)
    return loss


def _gradient(events, **options):
    stats = []
    g = adsim.grad(make_loss(stats, events, **options))(U0)
    return g, stats


def _traced_peak(events, **options):
    grad = adsim.grad(make_loss([], events, **options))
    tracemalloc.start()
    try:
        grad(U0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _budget_for(events, snapshots, snapshot):
    """A budget for about ``snapshots`` snapshots above the largest of the
    smallest budgets the loops state (each loop's step tape has its size)."""
    budget = 1000
    while True:
        try:
            _gradient(events, memory_limit=budget)
            return budget
        except adsim.MemoryBudgetError as error:
            stated = int(re.search(r"smallest budget that works is (\d+) bytes",
                                   str(error))[1])
            assert stated + snapshots * snapshot > budget
            budget = stated + snapshots * snapshot


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_memory_limit_bounds_the_snapshots_and_keeps_the_gradient(layout):
    events, loops, state = LAYOUTS[layout]
    snapshot = state + OVERHEAD
    reference, every = _gradient(events, snapshots=10 ** 4)    # every state kept
    assert len(every) == loops and all(s["n_steps"] >= 20 for s in every)
    # snapshots per interval between output times: one loop holds both intervals'
    # (the last output time ends the integration: no interval after it)
    intervals = len(T_EVAL) if loops == 1 else 1
    assert all(s["snapshots"] == 10 ** 4 * intervals for s in every)
    budget = _budget_for(events, 6, snapshot)
    g, stats = _gradient(events, memory_limit=budget)
    assert len(stats) == loops          # the last output ends the integration
    for s in stats:
        assert 2 <= s["snapshots"] and s["snapshots"] * snapshot <= budget
        assert s["taped_steps"] == s["n_steps"] and s["forward_steps"] > s["n_steps"]
    np.testing.assert_allclose(g, reference, rtol=1e-13, atol=0)
    few, _ = _gradient(events, snapshots=2)
    np.testing.assert_allclose(few, reference, rtol=1e-13, atol=0)
    tracemalloc.start()
    try:
        _gradient(events, memory_limit=budget)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # each loop keeps the snapshots of its forward pass until it is reversed
    assert peak <= loops * budget


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_peak_memory_follows_the_snapshots(layout):
    events, _, state = LAYOUTS[layout]
    _, stats = _gradient(events, snapshots=3)
    kept = sum(s["n_steps"] - s["snapshots"] for s in stats)
    saved = _traced_peak(events, snapshots=10 ** 4) - _traced_peak(events, snapshots=3)
    assert 0.7 * kept * state < saved < 1.3 * kept * (state + OVERHEAD), (saved, kept)


# ------------------------------------------------- one budget for the whole integration

def several_outputs(fun, limit, count=4):
    def loss(u0):
        res = solve_ivp(fun, (0.0, T_END), u0, t_eval=np.linspace(0.3, T_END, count),
                        args=(NU, DX), rtol=1e-6, atol=1e-8, memory_limit=limit)
        return np.sum(res.y ** 2) + np.sum(res.y[:, -1] ** 3)
    return loss


V = np.cos(np.arange(U0.size))
MODES = {"grad": lambda loss: adsim.grad(loss)(U0),
         "hvp": lambda loss: adsim.hvp(loss, U0, V),
         "jvp": lambda loss: adsim.jvp(loss, U0, V)[1]}


def stated(error):
    return int(re.search(r"smallest budget that works is (\d+) bytes", str(error))[1])


def test_stated_minimum_serves_every_interval_of_the_integration():
    """With several output times the intervals' loops share one budget; the
    minimum an error states is that of the interval needing most, so that
    the call runs with it (and, for the sweep whose own minimum it is, not
    with one byte less); the integration has no snapshot_dir to suggest."""
    for mode, run in MODES.items():
        want = run(several_outputs(burgers, None))
        with pytest.raises(adsim.MemoryBudgetError) as caught:
            run(several_outputs(burgers, 1))
        assert "snapshot_dir" not in str(caught.value)
        minimum = stated(caught.value)
        np.testing.assert_allclose(run(several_outputs(burgers, minimum)), want, rtol=1e-12)
        if mode != "jvp":       # a jvp's error states the budget that also serves an hvp
            with pytest.raises(adsim.MemoryBudgetError) as again:
                run(several_outputs(burgers, minimum - 1))
            assert stated(again.value) == minimum


def test_intervals_share_the_recorded_steps():
    """The loops between output times run the same step and condition (the
    interval's end is a loop input), so the step is recorded for the
    integration, not again for each interval: as many calls of fun for 40
    output times as for 10 (both a loop per interval: the outputs are too
    large to travel in one loop's state)."""
    calls = {}
    for count in (10, 40):
        calls[count] = []

        def counted(t, u, nu, dx, seen=calls[count]):
            seen.append(1)
            return burgers(t, u, nu, dx)
        adsim.grad(several_outputs(counted, "5MB", count))(U0)
    assert len(calls[40]) == len(calls[10])
