"""Tests of the snapshot stores, and of schedules executed on real arrays."""

import gc
import os

import numpy as np
import pytest
from snapshot_files import held_files

from adsim.checkpoint import (
    Advance,
    DiskStore,
    FirstTurn,
    MemoryStore,
    Online,
    Restore,
    Revolve,
    TakeShot,
    TieredStore,
    TwoLevel,
    YouTurn,
    simulate,
)


def snapshot(seed, sizes=(3, 5)):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(sizes[0]), rng.standard_normal((sizes[1], 2)), np.float64(seed))


def assert_same(got, expected):
    assert isinstance(got, tuple) and len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == np.asarray(b).dtype and a.shape == np.shape(b)
        np.testing.assert_array_equal(a, b)


def files_under(path):
    return sorted(os.path.relpath(os.path.join(root, name), path)
                  for root, _, names in os.walk(path) for name in names)  # fmt: skip


@pytest.fixture(params=["memory", "disk", "tiered"])
def make_store(request, tmp_path):
    def make(slots):
        if request.param == "memory":
            return MemoryStore(slots)
        if request.param == "disk":
            return DiskStore(tmp_path, slots)
        return TieredStore(slots // 2, slots - slots // 2, tmp_path)

    return make


# -- behaviour common to all stores ------------------------------------------------


def test_put_get_round_trip(make_store):
    with make_store(4) as store:
        for i in range(4):
            store.put(i, snapshot(i))
        for i in range(4):
            assert_same(store.get(i), snapshot(i))
        store.put(2, snapshot(9))
        assert_same(store.get(2), snapshot(9))
        assert 2 in store and store.slots == 4


def test_snapshots_are_private_copies(make_store):
    with make_store(2) as store:
        state = [np.arange(4.0)]
        store.put(1, state)
        state[0][:] = -1.0
        got = store.get(1)
        got[0][:] = 7.0
        assert_same(store.get(1), (np.arange(4.0),))


def test_nbytes_counts_stored_arrays(make_store):
    with make_store(4) as store:
        assert store.nbytes == 0
        store.put(0, (np.zeros(10), np.zeros((2, 3))))
        store.put(3, [np.zeros(5)])
        assert store.nbytes == 8 * (10 + 6 + 5)
        store.put(0, [np.zeros(1)])
        assert store.nbytes == 8 * (1 + 5)


def test_empty_and_out_of_range_slots(make_store):
    with make_store(2) as store:
        with pytest.raises(KeyError, match="slot 1 .*empty"):
            store.get(1)
        with pytest.raises(IndexError):
            store.put(2, snapshot(0))
        with pytest.raises(IndexError):
            store.get(-1)
        with pytest.raises(TypeError, match="wrap a single array"):
            store.put(0, np.zeros(3))


def test_closed_store_refuses_use(make_store):
    store = make_store(2)
    store.put(0, snapshot(0))
    store.close()
    store.close()  # closing twice is harmless
    assert store.closed and store.nbytes == 0
    with pytest.raises(ValueError, match="closed"):
        store.put(0, snapshot(0))
    with pytest.raises(ValueError, match="closed"):
        store.get(0)


def test_special_arrays_round_trip(make_store):
    arrays = (
        np.zeros((0, 3)),
        np.float64(2.5),
        np.asfortranarray(np.ones((2, 3))),
        np.arange(6.0)[::2],
    )
    with make_store(2) as store:
        store.put(1, arrays)
        assert_same(store.get(1), arrays)


# -- files on disk -------------------------------------------------------------------


def test_disk_store_keeps_its_snapshots_in_one_file_without_a_name(tmp_path):
    with DiskStore(tmp_path, 3) as store:
        store.put(0, snapshot(0))
        store.put(2, snapshot(2))
        store.put(2, snapshot(3))
        assert os.listdir(tmp_path) == [] and held_files(tmp_path) == 1
        assert_same(store.get(2), snapshot(3))
        assert_same(store.get(0), snapshot(0))
    assert os.listdir(tmp_path) == [] and held_files(tmp_path) == 0


def test_disk_store_reuses_the_regions_of_replaced_snapshots(tmp_path):
    with DiskStore(tmp_path, 2) as store:
        store.put(0, snapshot(0))
        one = os.fstat(store._file.fileno()).st_size
        for k in range(1, 20):
            store.put(k % 2, snapshot(k))
        assert os.fstat(store._file.fileno()).st_size == 3 * one     # two slots and a spare
        assert_same(store.get(0), snapshot(18))
        assert_same(store.get(1), snapshot(19))
        store.put(1, snapshot(7, sizes=(30, 50)))         # larger: a new region
        assert_same(store.get(1), snapshot(7, sizes=(30, 50)))
        assert_same(store.get(0), snapshot(18))


def test_disk_store_cleans_up_when_an_exception_propagates(tmp_path):
    with pytest.raises(RuntimeError, match="step failed"):
        with DiskStore(tmp_path, 2) as store:
            store.put(0, snapshot(0))
            store.put(1, snapshot(1))
            raise RuntimeError("step failed")
    assert os.listdir(tmp_path) == []


def test_tiered_store_cleans_up_when_an_exception_propagates(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with TieredStore(2, 2, tmp_path) as store:
            for i in range(4):
                store.put(i, snapshot(i))
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []
    assert store.closed


def test_disk_store_removes_a_directory_it_created(tmp_path):
    target = tmp_path / "snapshots"
    with DiskStore(target, 1) as store:
        store.put(0, snapshot(0))
        assert target.is_dir()
    assert not target.exists()


def test_disk_store_keeps_a_directory_it_did_not_create(tmp_path):
    (tmp_path / "other.txt").write_text("keep me")
    with DiskStore(tmp_path, 1) as store:
        store.put(0, snapshot(0))
    assert os.listdir(tmp_path) == ["other.txt"]


def test_failed_write_leaves_old_snapshot_and_no_temporary_file(tmp_path):
    with DiskStore(tmp_path, 1) as store:
        store.put(0, snapshot(0))
        before = files_under(tmp_path)
        with pytest.raises(ValueError):
            store.put(0, (np.zeros(2), np.array([object()], dtype=object)))
        assert files_under(tmp_path) == before
        assert_same(store.get(0), snapshot(0))


def test_forgotten_disk_store_is_removed_when_collected(tmp_path):
    store = DiskStore(tmp_path, 1)
    store.put(0, snapshot(0))
    del store
    gc.collect()
    assert os.listdir(tmp_path) == []


def test_stores_in_one_directory_do_not_collide(tmp_path):
    with DiskStore(tmp_path, 1) as first, DiskStore(tmp_path, 1) as second:
        first.put(0, snapshot(1))
        second.put(0, snapshot(2))
        assert_same(first.get(0), snapshot(1))
        assert_same(second.get(0), snapshot(2))
    assert os.listdir(tmp_path) == []


def test_tiered_store_places_slots_by_index(tmp_path):
    with TieredStore(2, 3, tmp_path) as store:
        assert [store.is_disk(i) for i in range(5)] == [False, False, True, True, True]
        for i in range(5):
            store.put(i, snapshot(i))
        assert files_under(tmp_path) == [] and held_files(tmp_path) == 1
        assert store.memory.nbytes + store.disk.nbytes == store.nbytes
        assert_same(store.get(3), snapshot(3))
        with pytest.raises(IndexError):
            store.put(5, snapshot(5))


def test_tiered_store_without_disk_slots_creates_no_files(tmp_path):
    with TieredStore(3, 0, tmp_path) as store:
        store.put(2, snapshot(2))
        assert not store.is_disk(2)
        assert os.listdir(tmp_path) == []


# -- schedules executed on arrays ------------------------------------------------------


def step(state, k):
    """A nonlinear step whose every state is distinguishable."""
    (x,) = state
    return (np.sin(x) + 0.1 * (k + 1) * np.roll(x, 1),)


def execute(actions, initial, n_steps, store):
    """Run the actions on arrays; return the step indices and inputs of each turn.

    The executor follows the driver's contract: an ``Advance`` runs plain
    steps, a turn runs (here: records) the step at ``current``.
    """
    current, state = 0, initial
    turns = []
    for action in actions:
        kind = type(action)
        if kind is Advance:
            for _ in range(action.steps):
                state = step(state, current)
                current += 1
        elif kind is TakeShot:
            store.put(action.index, (np.array(float(current)),) + state)
        elif kind is Restore:
            stored = store.get(action.index)
            current, state = int(stored[0]), stored[1:]
        else:
            assert kind in (FirstTurn, YouTurn)
            turns.append((current, state[0].copy()))
            current, state = None, None
    return turns


def reference_states(initial, n_steps):
    states = [initial]
    for k in range(n_steps):
        states.append(step(states[-1], k))
    return states


@pytest.mark.parametrize(
    "make_schedule",
    [
        lambda: Revolve(37, 4),
        lambda: TwoLevel(37, memory_snapshots=2, disk_snapshots=2),
        lambda: TwoLevel(37, memory_snapshots=0, disk_snapshots=3),
    ],
)
def test_offline_schedules_reproduce_every_state_at_its_turn(make_schedule, tmp_path):
    schedule = make_schedule()
    initial = (np.linspace(0.0, 1.0, 6),)
    states = reference_states(initial, 37)
    slots_memory = getattr(schedule, "memory_snapshots", schedule.snapshots)
    slots_disk = schedule.snapshots - slots_memory
    with TieredStore(slots_memory, slots_disk, tmp_path) as store:
        turns = execute(schedule, initial, 37, store)
    assert [k for k, _ in turns] == list(range(36, -1, -1))
    for k, x in turns:
        np.testing.assert_array_equal(x, states[k][0])
    assert os.listdir(tmp_path) == []


def test_online_schedule_reproduces_every_state_at_its_turn():
    n_steps, schedule = 45, Online(4)
    initial = (np.linspace(-1.0, 1.0, 5),)
    states = reference_states(initial, n_steps)
    with MemoryStore(4) as store:
        turns = execute(schedule.actions(n_steps), initial, n_steps, store)
    assert [k for k, _ in turns] == list(range(n_steps - 1, -1, -1))
    for k, x in turns:
        np.testing.assert_array_equal(x, states[k][0])


def test_two_level_disk_traffic_matches_execution():
    schedule = TwoLevel(5000, memory_snapshots=6, disk_snapshots=3)
    counts = simulate(schedule)
    disk = range(6, 9)
    assert schedule.disk_writes == sum(counts.shots_per_slot[i] for i in disk)
    assert schedule.disk_reads == sum(counts.restores_per_slot[i] for i in disk)
    assert schedule.memory_writes + schedule.disk_writes == counts.shots
    assert schedule.memory_reads + schedule.disk_reads == counts.restores
