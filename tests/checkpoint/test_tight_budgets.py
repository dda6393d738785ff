"""A tight ``memory_limit`` degrades gracefully when the step's branch changes.

The variants of a step share one work buffer and value stack in a sweep
(adsim/_loop_run.pxi), so a variant that is not replaying holds its tape
only, and the plan gives the branches the step has taken room before
snapshots beyond the fewest with repetition number 3
(adsim/checkpoint/planning.py). A budget with room for two step tapes past
its minimum then keeps every variant: the step is not recorded again in the
sweep (``stats["recordings"]``), and the derivatives are those of the plain
loop, bitwise those of a sweep without a budget.
"""
import re

import numpy as np
import pytest

import adsim
from adsim.checkpoint.options import default_snapshots

SIZE = 2000
N_STEPS = 120
RNG = np.random.default_rng(3)
X = np.concatenate([0.5 * RNG.random(SIZE), [0.0]])      # the last value: a phase counter
K = 0.2 + 0.1 * RNG.random(SIZE + 1)
V = RNG.standard_normal(SIZE + 1)
W = RNG.standard_normal(SIZE + 1)


def branching(u, k):
    """A diffusion step, then one of three branches in turn (by the phase)."""
    phase = u[-1:]
    y = u[:-1]
    out = y + 0.1 * (k[:-1] * (np.roll(y, 1) - 2 * y + np.roll(y, -1))) - 0.01 * y ** 3
    if phase[0] < 1.0:
        out = out + 1e-3 * np.sin(out)
    elif phase[0] < 2.0:
        out = out - 1e-3 * out ** 2
    return np.concatenate([out, np.where(phase < 2.0, phase + 1.0, 0.0 * phase)])


def loss(limit, stats=None):
    def f(x, k):
        u = adsim.checkpoint_loop(branching, x, N_STEPS, args=(k,), memory_limit=limit,
                                  stats=stats)
        return np.sum(u ** 2)
    return f


def plain_loss(x, k):
    for _ in range(N_STEPS):
        x = branching(x, k)
    return np.sum(x ** 2)


def paired(f):
    return lambda xk: f(*xk)


MODES = {
    "grad": lambda f: adsim.grad(f, argnums=(0, 1))(X, K),
    "hvp": lambda f: adsim.hvp(paired(f), (X, K), (V, W)),
}


def tight_budget(mode):
    """The mode's smallest budget plus two step tapes (as the mode replays
    them) less a byte: room for one variant next to the few snapshots when
    each variant held buffers of its own, and the variants were given half
    of the room at most."""
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        MODES[mode](loss(1))
    text = str(caught.value)
    minimum = int(re.search(r"smallest budget that works is (\d+) bytes", text).group(1))
    tape = int(re.search(r"the step tape (\d+) bytes", text).group(1))
    return minimum + 2 * tape - 1


def flat(result):
    return np.concatenate([np.ravel(a) for a in (result if isinstance(result, tuple)
                                                  else (result,))])


@pytest.mark.parametrize("mode", ["grad", "hvp"])
def test_a_tight_budget_keeps_every_variant(mode):
    stats = {}
    got = MODES[mode](loss(tight_budget(mode), stats))
    assert stats["recordings"] == 0, stats          # the sweep recorded no variant again
    assert stats["snapshots"] >= default_snapshots(N_STEPS), stats
    assert stats["snapshots"] < N_STEPS             # the budget binds
    # a branch change costs failed tries only when the first passes meet it
    assert stats["variant_misses"] <= 2 * N_STEPS, stats
    assert np.array_equal(flat(got), flat(MODES[mode](loss(None))))
    np.testing.assert_allclose(flat(got), flat(MODES[mode](plain_loss)), rtol=1e-11,
                               atol=1e-13)


def test_tangents_of_the_inputs_survive_other_variants_sweeps():
    """Each variant reads the loop inputs' tangents from the shared work
    buffer, where another variant's tangent sweep writes its own values:
    they are written again at each change of variant (jvp and hvp in the
    direction of ``k`` only, where they alone carry the direction)."""
    zero = np.zeros_like(X)
    budget = tight_budget("hvp")
    for limit in (None, budget):
        _, jv = adsim.jvp(loss(limit), (X, K), (zero, W))
        _, want = adsim.jvp(plain_loss, (X, K), (zero, W))
        np.testing.assert_allclose(jv, want, rtol=1e-11)
        got = adsim.hvp(paired(loss(limit)), (X, K), (zero, W))
        want = adsim.hvp(paired(plain_loss), (X, K), (zero, W))
        np.testing.assert_allclose(flat(got), flat(want), rtol=1e-11, atol=1e-13)


def test_solve_ivp_under_a_tight_budget_records_no_step_again():
    """RK45's accepted, rejected and re-tried steps are variants; a budget
    with room for one step tape past its minimum keeps them all in the
    Hessian-vector product's sweeps (each output interval is a loop)."""
    from adsim.demo import rhs
    from adsim.integrate import solve_ivp
    n = 200
    dx = 1.0 / n
    rng = np.random.default_rng(0)
    kappa = (0.2 + 0.1 * rng.random(n)) / 50
    u0 = 0.5 * rng.random(n)
    v = rng.standard_normal(n)
    t_end = 300 * 0.7 * dx * dx / np.max(kappa)

    def f(limit, stats=None):
        def loss_(u):
            res = solve_ivp(lambda t, u, kappa: rhs(u, kappa, dx), (0.0, t_end), u,
                            args=(kappa,), t_eval=[t_end / 2, t_end], memory_limit=limit,
                            snapshots=10**9, stats=stats)
            return np.sum(res.y ** 2)
        return loss_

    with pytest.raises(adsim.MemoryBudgetError) as caught:
        adsim.hvp(f(1), u0, v)
    text = str(caught.value)
    minimum = int(re.search(r"smallest budget that works is (\d+) bytes", text).group(1))
    tape = int(re.search(r"the step tape (\d+) bytes", text).group(1))
    intervals = []
    got = adsim.hvp(f(minimum + tape, intervals), u0, v)
    assert intervals
    for stats in intervals:
        assert stats["recordings"] == 0, intervals
        assert stats["snapshots"] < stats["n_steps"], intervals
    assert np.array_equal(got, adsim.hvp(f(None), u0, v))


def test_variants_take_snapshots_room_when_recordings_would_cost_more():
    """Below the floor of snapshots (repetition number 3), the variants take
    the room when the plain steps that fewer snapshots cost are fewer than
    the recordings they save: this step changes branch at every step, so
    some budgets between the smallest and one step tape more keep every
    variant with fewer snapshots than the floor, and record none."""
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        MODES["hvp"](loss(1))
    text = str(caught.value)
    minimum = int(re.search(r"smallest budget that works is (\d+) bytes", text).group(1))
    tape = int(re.search(r"the step tape (\d+) bytes", text).group(1))
    want = flat(MODES["hvp"](loss(None)))
    traded = []
    for share in np.arange(0.45, 0.75, 0.05):
        stats = {}
        got = MODES["hvp"](loss(int(minimum + share * tape), stats))
        assert np.array_equal(flat(got), want)
        if stats["snapshots"] < default_snapshots(N_STEPS):
            traded.append(stats["recordings"])
    assert traded and min(traded) == 0, traded


def now_and_then(u, k):
    """A diffusion step that takes a second branch at every tenth step (a
    rejected step among accepted ones, say): by a counter, the last value."""
    count = u[-1:]
    y = u[:-1]
    out = y + 0.1 * (k[:-1] * (np.roll(y, 1) - 2 * y + np.roll(y, -1))) - 0.01 * y ** 3
    if count[0] >= 9.0:
        out = out - 1e-3 * out ** 2
    return np.concatenate([out, np.where(count < 9.0, count + 1.0, 0.0 * count)])


@pytest.mark.parametrize("share", [0.4, 0.7])
def test_a_rare_branch_is_kept_in_the_recordings_room(share):
    """A budget short of one step tape past its minimum cannot hold a second
    variant next to a recording, but holds it between recordings (in the
    room the plan keeps for one): a step that changes branch now and then
    is recorded twice, not at every change, with the results of a sweep
    without a budget."""
    def f(limit, stats=None):
        def loss_(x, k):
            return np.sum(adsim.checkpoint_loop(now_and_then, x, N_STEPS, args=(k,),
                                                memory_limit=limit, stats=stats) ** 2)
        return loss_
    grad = adsim.grad(f(1), argnums=(0, 1))
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        grad(X, K)
    text = str(caught.value)
    minimum = int(re.search(r"smallest budget that works is (\d+) bytes", text).group(1))
    tape = int(re.search(r"the step tape (\d+) bytes", text).group(1))
    stats = {}
    got = adsim.grad(f(int(minimum + share * tape), stats), argnums=(0, 1))(X, K)
    assert stats["snapshots"] < N_STEPS
    assert stats["recordings"] <= 2, stats       # (two variants recorded again at most)
    assert np.array_equal(flat(got), flat(adsim.grad(f(None), argnums=(0, 1))(X, K)))


def test_variants_the_budget_cannot_hold_are_parked_not_recorded_again():
    """A budget a third of a step tape past its minimum holds one variant
    of the three branches next to its snapshots; the others are parked
    (their value arenas given back, their programs kept: steptape.py) and
    tried again, each a plain replay, before the step is recorded anew.
    The Hessian-vector product's sweeps then record the step a few times,
    not at every change of branch (421 times when they were dropped), with
    the results of a sweep without a budget."""
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        MODES["hvp"](loss(1))
    text = str(caught.value)
    minimum = int(re.search(r"smallest budget that works is (\d+) bytes", text).group(1))
    tape = int(re.search(r"the step tape (\d+) bytes", text).group(1))
    stats = {}
    got = MODES["hvp"](loss(int(minimum + 0.3 * tape), stats))
    assert stats["snapshots"] < N_STEPS, stats         # the budget binds
    assert stats["recordings"] <= 5, stats
    assert np.array_equal(flat(got), flat(MODES["hvp"](loss(None))))


def test_a_tape_file_keeps_the_parked_variants():
    """A loaded loop cannot record its step again: the file holds the parked
    variants beside the held ones, so a loaded tape replays every branch the
    recorded one took, with its results bitwise."""
    from adsim import tapefile
    with pytest.raises(adsim.MemoryBudgetError) as caught:
        MODES["hvp"](loss(1))
    text = str(caught.value)
    minimum = int(re.search(r"smallest budget that works is (\d+) bytes", text).group(1))
    tape_bytes = int(re.search(r"the step tape (\d+) bytes", text).group(1))
    f = loss(int(minimum + 0.3 * tape_bytes))
    tape = adsim.record(f, X, K)
    want = tape.hvp((X, K), (V, W))         # (its sweeps park variants the budget cannot hold)
    steps = tape.callbacks[0].steps
    assert steps.parked, "the budget held every variant: the test needs a tighter one"
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert len(loaded.callbacks[0].steps.variants) == len(steps.variants) + len(steps.parked)
    assert np.array_equal(flat(loaded.hvp((X, K), (V, W))), flat(want))
    assert np.array_equal(flat(loaded.gradient(X, K)), flat(tape.gradient(X, K)))
