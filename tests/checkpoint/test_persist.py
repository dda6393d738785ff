"""Checkpointed loops in tape files (adsim/checkpoint/persist.py).

A tape holding a checkpointed loop, saved and loaded, replays bitwise like
the original (values, gradient, jvp, vjp, hvp) with the same schedule
settings; its recorded branch variants travel with it, and a state where
none holds raises BranchChanged (the loaded loop has no step code to record
again). Loops that are code (a checkpoint_while condition evaluated in
Python, schedule callables) are refused when saving."""
import io
import json
import pickle
import re

import numpy as np
import pytest

import adsim as ad
from adsim import tapefile
from adsim.checkpoint import Online, Revolve, TwoLevel
from adsim.errors import BranchChanged, MemoryBudgetError, TapeCopyError, TapeFileError

P = np.array([10.0, 28.0, 8.0 / 3.0])


def lorenz_step(u, p, dt):
    """One RK2 step of the Lorenz system."""
    def rhs(v):
        return np.stack([p[0] * (v[1] - v[0]), v[0] * (p[1] - v[2]) - v[1],
                         v[0] * v[1] - p[2] * v[2]])
    k1 = rhs(u)
    return u + 0.5 * dt * (k1 + rhs(u + dt * k1))


def misfit(p, n_steps=60, **options):
    u = ad.checkpoint_loop(lorenz_step, np.array([1.0, 1.0, 1.0]), n_steps, args=(p, 0.01),
                           **options)
    return np.sum((u - np.array([2.0, 3.0, 20.0])) ** 2)


def bits(*arrays):
    return [np.asarray(a).tobytes() for a in arrays]


def all_sweeps(tape, p):
    v = np.array([0.3, -0.2, 0.5])
    return (bits(tape.forward(p)) + bits(*tape.value_and_gradient(p)) + bits(*tape.jvp(p, v))
            + bits(*tape.vjp(p, 2.0)) + bits(tape.hvp(p, v)) + bits(tape.jacobian(p)))


@pytest.mark.parametrize("options", [
    {}, {"snapshots": 4}, {"schedule": Revolve(60, 3)}, {"memory_limit": "1MB"},
    {"schedule": Online(5)}, {"progress": True},
], ids=["default", "snapshots", "revolve", "memory_limit", "online", "progress"])
def test_a_loaded_loop_replays_bitwise_with_its_settings(options, capsys):
    tape = ad.record(lambda p: misfit(p, **options), P)
    loaded = pickle.loads(pickle.dumps(tape))
    op, op2 = tape.callbacks[0], loaded.callbacks[0]
    assert type(op2) is type(op) and op2.n_steps == op.n_steps == 60
    assert op2.options.snapshots == op.options.snapshots
    assert op2.options.memory_limit == op.options.memory_limit
    assert repr(op2.options.schedule) == repr(op.options.schedule)
    assert op2.options.progress == op.options.progress
    assert op2.footprint == op.footprint and op2.steps.sizes() == op.steps.sizes()
    for p in (P, P * 1.01):
        assert all_sweeps(loaded, p) == all_sweeps(tape, p)
    assert op2.stats["forward_steps"] == op.stats["forward_steps"] > 0
    capsys.readouterr()


def test_two_level_schedule_with_disk_snapshots(tmp_path):
    tape = ad.record(lambda p: misfit(p, schedule=TwoLevel(60, 2, 2),
                                      snapshot_dir=tmp_path / "snaps"), P)
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.callbacks[0].options.snapshot_dir == str(tmp_path / "snaps")
    assert loaded.callbacks[0].options.schedule.disk_snapshots == 2
    assert all_sweeps(loaded, P) == all_sweeps(tape, P)


def test_nested_loops_save_their_tapes_recursively():
    def inner(u, p):
        return ad.checkpoint_loop(lambda v, q: v + 0.05 * np.sin(q * v), u, 5, args=(p,))

    def f(p):
        u = ad.checkpoint_loop(inner, np.array([0.5, -0.3, 1.0]), 4, args=(p,))
        return np.sum(u ** 2)
    tape = ad.record(f, P / 10)
    data = tapefile.dumps(tape)
    loaded = tapefile.loads(data)
    inner_op = loaded.callbacks[0].steps.tape.callbacks[0]
    assert inner_op.n_steps == 5 and inner_op.steps.tape.callbacks == ()
    assert all_sweeps(loaded, P / 10) == all_sweeps(tape, P / 10)


def kink_step(u, p):
    return u + 0.1 * np.sin(p * np.abs(u))     # the sides of abs: step variants


def kink_loss(p, u0):
    return np.sum(ad.checkpoint_loop(kink_step, u0, 8, args=(p,)) ** 2)


def test_branch_variants_travel_and_a_new_branch_raises_branch_changed():
    p = np.array([1.0, 0.5])
    tape = ad.record(kink_loss, p, np.array([0.5, 0.4]))
    tape.gradient(p, np.array([-0.5, 0.4]))       # a second variant of the step is recorded
    op = tape.callbacks[0]
    assert len(op.steps.variants) == 2
    loaded = pickle.loads(pickle.dumps(tape))
    assert len(loaded.callbacks[0].steps.variants) == 2
    for u0 in (np.array([0.5, 0.4]), np.array([-0.5, 0.4])):
        assert bits(*loaded.value_and_gradient(p, u0)) == bits(*tape.value_and_gradient(p, u0))
    with pytest.raises(BranchChanged, match="loaded from a tape file.*2 recorded step variants"):
        loaded.gradient(p, np.array([0.5, -0.4]))
    tape.gradient(p, np.array([0.5, -0.4]))      # the original records a third variant


def _staircase(z, a):
    """A step that takes a new branch at every step: the counter z[0] is
    compared with each of 12 thresholds."""
    w = z * a
    for j in range(12):
        if z[0] > j + 0.5:
            w = w + 0.0 * z
    return np.array([z[0] + 1.0, w[1] * 0.99 + np.sin(z[0]) * 0.01])


def test_a_loop_that_dropped_variants_saves_and_says_what_its_file_lacks():
    """Under a memory_limit that holds one step tape and no parked program,
    variants are dropped outright: the loop records its step again at each
    new branch. Its file holds the variants it kept; a loaded copy replays
    where they hold and, at a branch it lacks, raises BranchChanged naming
    the dropped variants and what to do (never a value without them)."""
    def loss(a, limit=None):
        return ad.checkpoint_loop(_staircase, np.array([0.0, 1.0]), 12, args=(a,),
                                  memory_limit=limit)[1]
    a = np.array([1.0, 0.999])
    with pytest.raises(MemoryBudgetError) as err:
        ad.grad(lambda a: loss(a, 1000))(a)
    smallest = int(re.search(r"smallest budget that works is (\d+) bytes",
                             str(err.value)).group(1))
    tight = ad.record(lambda a: loss(a, smallest), a)
    g = tight.gradient(a)
    steps = tight.callbacks[0].steps
    assert steps.dropped > 0 and len(steps.saved_tapes()) < 12
    loaded = tapefile.loads(tapefile.dumps(tight))
    for method in (loaded.forward, loaded.gradient):
        with pytest.raises(BranchChanged, match="dropped step variants .* times.*memory_limit"):
            method(a)
    # recorded without the budget, every branch travels and the copy replays bitwise
    free = ad.record(loss, a)
    assert free.callbacks[0].steps.dropped == 0
    copy = tapefile.loads(tapefile.dumps(free))
    assert bits(*copy.value_and_gradient(a)) == bits(*free.value_and_gradient(a))
    assert bits(g) == bits(free.gradient(a))


def _while_loss(p):
    u = ad.checkpoint_while(lambda u, p: u[0] < 2.0, lambda u, p: u + 0.1 * p, np.zeros(2),
                            args=(p,), snapshots=3)
    return np.sum(u ** 2)


def test_a_while_loop_travels_with_its_recorded_condition():
    p = np.array([1.0, 0.5])
    tape = ad.record(_while_loss, p)
    loaded = pickle.loads(pickle.dumps(tape))
    v = np.array([0.3, -0.2])
    sweeps = [bits(t.forward(p)) + bits(*t.value_and_gradient(p)) + bits(*t.jvp(p, v))
              + bits(*t.vjp(p, 2.0)) + bits(t.hvp(p, v)) for t in (tape, loaded)]
    assert sweeps[0] == sweeps[1]
    near = np.array([1.01, 0.45])                  # the same 20 steps: the same paths
    assert bits(*loaded.value_and_gradient(near)) == bits(*tape.value_and_gradient(near))
    # 25 steps: the two saved condition variants (true, false) decide every
    # state, so the loaded loop runs the new number of steps too
    far = np.array([0.8, 0.5])
    assert bits(*loaded.value_and_gradient(far)) == bits(*tape.value_and_gradient(far))
    np.testing.assert_allclose(loaded.gradient(far), ad.grad(_while_loss)(far), rtol=1e-14)
    assert loaded.callbacks[0].last_n_steps == 25


def _while_loss_with_scalar_args(p):
    u = ad.checkpoint_while(lambda u, a, b: u[0] < 2.0, lambda u, a, b: u + 0.1 * np.stack([a, b]),
                            np.zeros(2), args=(p[0], p[1]), snapshots=3)
    return np.sum(u ** 2)


def test_a_while_loop_with_scalar_inputs_travels():
    # the condition is recorded on flat inputs (a scalar as shape (1,)), the
    # step on the inputs as they are: the file holds both, and loads
    p = np.array([1.0, 0.5])
    tape = ad.record(_while_loss_with_scalar_args, p)
    loaded = tapefile.loads(tapefile.dumps(tape))
    v = np.array([0.3, -0.2])
    sweeps = [bits(t.forward(p)) + bits(*t.value_and_gradient(p)) + bits(*t.jvp(p, v))
              + bits(*t.vjp(p, 2.0)) for t in (tape, loaded)]
    assert sweeps[0] == sweeps[1]


def test_loops_that_are_code_cannot_be_saved():
    calls = []

    def counted(u, p):                  # changes its environment: evaluated in Python
        calls.append(1)
        return u[0] < 2.0

    def python_condition_loss(p):
        u = ad.checkpoint_while(counted, lambda u, p: u + 0.1 * p, np.zeros(2), args=(p,))
        return np.sum(u ** 2)
    with pytest.raises(TapeCopyError, match="checkpoint_while.*evaluated in Python"):
        pickle.dumps(ad.record(python_condition_loss, np.array([1.0, 0.5])))
    tape = ad.record(lambda p: misfit(p, schedule=lambda n: Revolve(n, 3)), P)
    with pytest.raises(TapeCopyError, match="schedule=.*cannot be saved"):
        tape.save(io.BytesIO())


def test_progress_callables_and_stats_stay_behind():
    seen, stats = [], {}
    tape = ad.record(lambda p: misfit(p, progress=lambda d, t: seen.append(d), stats=stats), P)
    loaded = pickle.loads(pickle.dumps(tape))
    assert loaded.callbacks[0].options.progress is None
    before = dict(stats)
    loaded.gradient(P)
    assert seen == [] and stats == before and loaded.callbacks[0].stats["taped_steps"] == 60
    tape.gradient(P)
    assert seen[-1] == 60 and stats["taped_steps"] == 60


def _loop_state(data):
    from tapefile_bytes import section
    _, count, at = section(data, "CALL")
    return json.loads(data[at:at + count])


@pytest.mark.parametrize("edit,why", [
    (lambda s: s.update(n_steps=0), "n_steps is 0"),
    (lambda s: s.update(n_steps=61), "schedule is for 60 steps"),
    (lambda s: s.update(snapshots="3"), "snapshots is '3'"),
    (lambda s: s.update(schedule={"kind": "Evil", "n_steps": 60}), "schedule is"),
    (lambda s: s["schedule"].update(snapshots=0), "snapshots must be >= 1"),
    (lambda s: s.update(variants=[]), "step tapes with sizes"),
    (lambda s: s.update(footprint=[1, 2, 3]), "footprint"),
    (lambda s: s.update(progress="yes"), "progress is 'yes'"),
    (lambda s: s.update(recordings=0), "recordings is 0"),
])
def test_altered_loop_descriptions_are_refused(edit, why):
    from tapefile_bytes import replace_section
    data = tapefile.dumps(ad.record(lambda p: misfit(p, schedule=Revolve(60, 3)), P))
    calls = _loop_state(data)
    edit(calls[0]["state"])
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(replace_section(data, "CALL", json.dumps(calls).encode()))


def test_a_step_tape_of_the_wrong_size_is_refused():
    from tapefile_bytes import replace_section, section
    data = tapefile.dumps(ad.record(lambda p: misfit(p), P))
    other = tapefile.dumps(ad.record(lambda u, p: u[:2] * p[0], np.ones(3), P))
    calls = _loop_state(data)
    _, count, at = section(other, "SLOT")
    altered = replace_section(data, "SLOT", other[at:at + 8 * count], tape=1)
    with pytest.raises(TapeFileError, match="tape 1"):
        tapefile.loads(altered)
    assert calls[0]["tapes"] == [1]


@pytest.mark.parametrize(("edit", "why"), [
    (lambda c: c.update(outcomes=[True]), "condition outcomes"),
    (lambda c: c.update(outcomes=[1, 0]), "condition outcomes"),
    (lambda c: c.update(sizes=[-1, 3]), "condition outcomes"),
    (lambda c: c.update(max_steps=0), "max_steps"),
    (lambda c: c.pop("max_steps"), "max_steps"),
])
def test_altered_while_conditions_are_refused(edit, why):
    from tapefile_bytes import replace_section
    data = tapefile.dumps(ad.record(_while_loss, np.array([1.0, 0.5])))
    calls = _loop_state(data)
    edit(calls[0]["state"]["condition"])
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(replace_section(data, "CALL", json.dumps(calls).encode()))
