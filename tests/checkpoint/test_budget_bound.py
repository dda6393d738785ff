"""``memory_limit`` is a bound, and ``MemoryBudgetError`` states a budget that works.

The peak resident memory a checkpointed derivative adds (measured in fresh
child processes by benchmarks/checkpoint_memory.py: peak of the call minus
the peak of the same call without the loop) must stay within
``memory_limit`` plus 1 MB, in every mode. And the smallest budget a
``MemoryBudgetError`` states must let the mode that raised it run (the
minimum itself; one byte less raises again, for the sweeps whose own
minimum it is).
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adsim
from adsim.sparse.pattern import jacobian_pattern

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------- measured peak memory

# One state of 0.8 MB; a budget per mode between its minimum and a few MB above.
MEASURED = [("grad", "min"), ("vjp", "min+2MB"), ("hvp", "min"), ("hvp_args", "min+2MB"),
            ("jvp", "min"), ("while_grad", "min"), ("while_hvp", "min+2MB"),
            ("disk_grad", "min+2MB"), ("disk_hvp", "min")]


def measured(modes, size, budgets, steps):
    """Rows of benchmarks/checkpoint_memory.py, each measured in a fresh process."""
    cmd = [sys.executable, "-m", "benchmarks.checkpoint_memory", "--json", "--modes", modes,
           "--sizes", str(size), "--budgets", budgets, "--steps", str(steps)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


LINUX_PEAKS = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason=(
    "peak memory is measured through /proc/self/clear_refs (Linux)"))


@LINUX_PEAKS
def test_peak_memory_stays_within_the_budget():
    rows = []
    for mode, budget in MEASURED:
        rows.extend(measured(mode, 100000, budget, 20))
    for row in rows:
        assert "error" not in row, row
        assert row["excess"] <= 10**6, (
            f"{row['mode']}: peak {row['added'] / 1e6:.2f} MB with memory_limit "
            f"{row['M'] / 1e6:.2f} MB")
        assert row["files_left"] == 0, row
    assert any((row["schedule"] or "").startswith("TwoLevel") for row in rows)


# Budgets a user gives, where the snapshots they hold are what binds (at 20 MB):
# solve_ivp (RK45, 1000-point Burgers, an 80 kB solver state; the step's
# accepted, rejected and re-tried steps are variants that the budget keeps or
# drops; two output times are two loops sharing the budget) and checkpoint_loop
# with an 80 kB state and a step whose branch changes at every step (three
# variants in turn).
FIXED_BUDGETS = [("ivp_grad,ivp_hvp", 1000, 400), ("branch_grad,branch_hvp", 10000, 400)]


@LINUX_PEAKS
@pytest.mark.parametrize(("modes", "size", "steps"), FIXED_BUDGETS)
def test_peak_memory_stays_within_fixed_budgets(modes, size, steps):
    rows = measured(modes, size, "20MB,50MB", steps)
    assert {(r["mode"], r["budget"]) for r in rows} == {
        (m, b) for m in modes.split(",") for b in ("20MB", "50MB")}
    for row in rows:
        assert "error" not in row, row
        assert row["excess"] <= 10**6, (
            f"{row['mode']}: peak {row['added'] / 1e6:.2f} MB with memory_limit "
            f"{row['M'] / 1e6:.2f} MB")
        if row["budget"] == "20MB":     # the budget binds: it holds fewer snapshots than steps
            assert row["snapshots"] < steps, row


@LINUX_PEAKS
def test_peak_memory_stays_within_a_tight_budget_that_holds_every_variant():
    """2 MB above the smallest budget, solve_ivp's four RK45 step variants
    (their tapes; the sweep's work buffer and stack shared) take room the
    snapshots had (fewer snapshots than the floor of repetition number 3):
    the bound holds there too."""
    for row in measured("ivp_grad,ivp_hvp", 1000, "min+2MB", 400):
        assert "error" not in row, row
        assert row["excess"] <= 10**6, (
            f"{row['mode']}: peak {row['added'] / 1e6:.2f} MB with memory_limit "
            f"{row['M'] / 1e6:.2f} MB")


# ------------------------------------------------------------- stated minimum works

N = 12
X = np.linspace(0.1, 1.0, 40)
K = np.linspace(-0.5, 0.7, 40)
V = np.cos(np.arange(40.0))


def step(u, k):
    return u + 0.1 * np.sin(k * u) * np.roll(u, 1) - 0.01 * u ** 3


def looped(x, k, options):
    return adsim.checkpoint_loop(step, x, N, args=(k,), **options)


def counted(state, k):
    return step(state[0], k), state[1] + 1.0


def while_looped(x, k, options):
    return adsim.checkpoint_while(lambda s, k: s[1][0] < N, counted, (x, np.zeros(1)),
                                  args=(k,), **options)[0]


def plain(x, k, options):
    for _ in range(N):
        x = step(x, k)
    return x


MODES = {
    "grad": lambda loop, o: adsim.grad(lambda x, k: np.sum(loop(x, k, o) ** 2),
                                       argnums=(0, 1))(X, K),
    "vjp": lambda loop, o: adsim.vjp(lambda x: loop(x, K, o), X, np.stack([V, 2 * V], -1))[1],
    "jacobian": lambda loop, o: adsim.jacobian(lambda x: loop(x, K, o)[:3], mode="reverse")(X),
    "jvp": lambda loop, o: adsim.jvp(lambda x: np.sum(loop(x, K, o) ** 2), X, V)[1],
    "hvp": lambda loop, o: adsim.hvp(lambda x: np.sum(loop(x, K, o) ** 2), X, V),
    "hvp_args": lambda loop, o: adsim.hvp(lambda x, k: np.sum(loop(x, k, o) ** 2), X, V, K),
    "hvp_2": lambda loop, o: adsim.hvp(lambda x: np.sum(loop(x, K, o) ** 2), X,
                                       np.stack([V, V ** 2], -1)),
    "tape_hvp": lambda loop, o: adsim.record(lambda x: np.sum(loop(x, K, o) ** 2), X).hvp(X, V),
}
LOOPS = {"loop": looped, "while": while_looped}
EXTRA = {"memory": {}, "disk": {"snapshot_dir": None}, "revolve": {"schedule": adsim.Revolve(N, 3)},
         "online": {"schedule": adsim.Online(3)}}
CASES = [(m, lp, e) for m in MODES for lp in LOOPS for e in EXTRA
         if not (lp == "while" and e != "memory")]


def stated_minimum(error):
    found = re.search(r"smallest budget that works is (\d+) bytes", str(error))
    assert found, str(error)
    return int(found.group(1))


@pytest.mark.parametrize(("mode", "loop", "extra"), CASES)
def test_stated_minimum_works_for_the_mode_that_raised_it(mode, loop, extra, tmp_path):
    options = dict(EXTRA[extra])
    if "snapshot_dir" in options:
        options["snapshot_dir"] = tmp_path
    want = MODES[mode](plain, {})
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        MODES[mode](LOOPS[loop], dict(options, memory_limit=1))
    minimum = stated_minimum(caught.value)
    got = MODES[mode](LOOPS[loop], dict(options, memory_limit=minimum))
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-14)
    if mode != "jvp":       # a jvp's error states the budget that also serves an hvp
        with pytest.raises(adsim.MemoryBudgetError) as again:
            MODES[mode](LOOPS[loop], dict(options, memory_limit=minimum - 1))
        assert stated_minimum(again.value) == minimum
    assert list(tmp_path.iterdir()) == []


def test_jvp_error_names_its_own_minimum_too():
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        MODES["jvp"](looped, dict(memory_limit=1))
    own = int(re.search(r"a jvp alone needs (\d+) bytes", str(caught.value)).group(1))
    assert own < stated_minimum(caught.value)
    np.testing.assert_allclose(MODES["jvp"](looped, dict(memory_limit=own)),
                               MODES["jvp"](plain, {}), rtol=1e-12)


def test_budget_sets_the_snapshot_count_in_every_sweep():
    """Each additional snapshot's bytes buy one more snapshot, for the
    gradient and for the Hessian-vector product (whose snapshots carry the
    state's tangents too)."""
    for mode, per_snapshot in (("grad", X.nbytes + 512), ("hvp", 2 * X.nbytes + 512)):
        with pytest.raises(adsim.MemoryBudgetError) as caught:
            MODES[mode](looped, dict(memory_limit=1))
        minimum = stated_minimum(caught.value)
        for extra in (0, 2, 5):
            stats = {}
            MODES[mode](looped, dict(memory_limit=minimum + extra * per_snapshot, stats=stats))
            assert stats["snapshots"] == 1 + extra, (mode, extra)


def test_branch_variants_are_dropped_to_stay_within_the_budget():
    """A step whose branch flips every step has two recorded variants; a
    budget with room for one drops the older variant (the step is recorded
    again when its branch comes back), and the derivatives stay exact."""
    calls = []

    def flipping(y, p):
        calls.append(1)
        if y[0] > 0.5:
            return 1.0 - y + 0.05 * np.sin(p * y) * np.cos(y)
        return 1.0 - y + 0.05 * p * y

    def loss(limit):
        def f(x, k):
            u = adsim.checkpoint_loop(flipping, x, N, args=(k,), memory_limit=limit)
            return np.sum(u ** 2)
        return f

    def plain_loss(x, k):
        for _ in range(N):
            x = flipping(x, k)
        return np.sum(x ** 2)

    y0 = np.linspace(0.2, 0.4, 40)
    want = adsim.grad(plain_loss, argnums=(0, 1))(y0, K)
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        adsim.grad(loss(1), argnums=(0, 1))(y0, K)
    minimum = stated_minimum(caught.value)
    recordings = {}
    for limit in (None, minimum):
        calls.clear()
        got = adsim.grad(loss(limit), argnums=(0, 1))(y0, K)
        recordings[limit] = len(calls)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    # the first recording is made twice (the step appends to ``calls``, so the
    # loop checks once that its result does not depend on that), then one
    # recording per variant
    assert recordings[None] == 3 and recordings[minimum] > N

    tape = adsim.record(loss(minimum), y0, K)
    tape.gradient(y0, K)                    # the budgeted sweep drops a variant
    with pytest.raises(ValueError, match="union over its step's branch variants"):
        jacobian_pattern(tape)              # rather than a pattern missing a branch


def test_budget_keeps_the_recorded_variants_next_to_the_snapshots():
    """A step whose branch alternates at every step has two variants. A
    budget that can hold both and many snapshots keeps both (the step is
    recorded once per variant, as without a budget, not at every change)
    and gives the snapshots the rest; the derivatives are those of the
    plain loop."""
    calls = []
    n_steps = 300

    def alternating(y, p):
        calls.append(1)
        if y[0] > 0.5:
            return 1.0 - y + 0.05 * np.sin(p * y) * np.cos(y)
        return 1.0 - y + 0.05 * p * y

    def loss(limit, stats=None):
        def f(x, k):
            u = adsim.checkpoint_loop(alternating, x, n_steps, args=(k,), memory_limit=limit,
                                      stats=stats)
            return np.sum(u ** 2)
        return f

    y0 = np.linspace(0.2, 0.4, 40)
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        adsim.grad(loss(1), argnums=(0, 1))(y0, K)
    budget = stated_minimum(caught.value) + 200 * (y0.nbytes + 512)
    want = adsim.grad(loss(None), argnums=(0, 1))(y0, K)
    calls.clear()
    stats = {}
    got = adsim.grad(loss(budget, stats), argnums=(0, 1))(y0, K)
    assert len(calls) == 3              # two variants, the first recorded twice (purity check)
    assert 100 < stats["snapshots"] < n_steps
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
