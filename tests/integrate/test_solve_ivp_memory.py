"""With t_eval, solve_ivp's memory stays bounded by memory_limit / snapshots:
each interval between output times is one checkpointed loop."""
import re
import tracemalloc

import numpy as np
import pytest

import adsim
from adsim.integrate import solve_ivp
from ivp_problems import burgers, burgers_problem

U0, NU, DX = burgers_problem(128)
T_END = 1.5
STATE = 8 * U0.size * (7 + 3) + 8 * 8          # RK45: 7 stage rows, y, f, y_old, 8 scalars
SNAPSHOT = STATE + 512                          # a snapshot's bookkeeping (docs/checkpointing.md)


def make_loss(stats, **options):
    def loss(u0):
        res = solve_ivp(burgers, (0.0, T_END), u0, t_eval=[0.5, T_END], args=(NU, DX),
                        rtol=1e-6, atol=1e-8, stats=stats, **options)
        return np.sum(res.y[:, 0] ** 2) + np.sum(res.y[:, 1] ** 3)
    return loss


def _gradient(**options):
    stats = []
    g = adsim.grad(make_loss(stats, **options))(U0)
    return g, stats


def _traced_peak(**options):
    loss = make_loss([], **options)
    grad = adsim.grad(loss)
    tracemalloc.start()
    try:
        grad(U0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _budget_for(snapshots):
    """A budget for about ``snapshots`` snapshots above the largest of the
    smallest budgets the loops state (each loop's step tape has its size)."""
    budget = 1000
    while True:
        try:
            _gradient(memory_limit=budget)
            return budget
        except adsim.MemoryBudgetError as error:
            stated = int(re.search(r"smallest budget that works is (\d+) bytes",
                                   str(error))[1])
            assert stated + snapshots * SNAPSHOT > budget
            budget = stated + snapshots * SNAPSHOT


def test_memory_limit_bounds_the_snapshots_and_keeps_the_gradient():
    reference, every = _gradient(snapshots=10 ** 4)            # every state kept
    assert every[1]["n_steps"] > 50 and every[1]["snapshots"] == 10 ** 4
    budget = _budget_for(6)
    g, stats = _gradient(memory_limit=budget)
    assert len(stats) == 2          # two outputs; the second ends the integration
    for s in stats:
        assert 2 <= s["snapshots"] and s["snapshots"] * SNAPSHOT <= budget
        assert s["taped_steps"] == s["n_steps"] >= 20
    np.testing.assert_allclose(g, reference, rtol=1e-13, atol=0)
    few, _ = _gradient(snapshots=2)
    np.testing.assert_allclose(few, reference, rtol=1e-13, atol=0)
    tracemalloc.start()
    try:
        _gradient(memory_limit=budget)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= budget


def test_peak_memory_follows_the_snapshots():
    _, stats = _gradient(snapshots=3)
    kept = sum(s["n_steps"] for s in stats) - 3 * len(stats)
    saved = _traced_peak(snapshots=10 ** 4) - _traced_peak(snapshots=3)
    assert 0.7 * kept * STATE < saved < 1.3 * kept * SNAPSHOT, (saved, kept)


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
    integration, not again for each interval: as many calls of fun for 20
    output times as for 2."""
    calls = {}
    for count in (2, 20):
        calls[count] = []

        def counted(t, u, nu, dx, seen=calls[count]):
            seen.append(1)
            return burgers(t, u, nu, dx)
        adsim.grad(several_outputs(counted, "5MB", count))(U0)
    assert len(calls[20]) == len(calls[2])
