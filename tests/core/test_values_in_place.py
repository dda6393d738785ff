"""Values replays (tape.forward) read their inputs in the caller's arrays and
write the output into the array they return (adsim/_replay.pxi,
place_values). What must hold: results bitwise those of the copying replay,
the caller's inputs never written, a returned array never changed by a later
replay (in this thread or another), and the copying path wherever reading or
writing in place would not be safe."""
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import adsim as ad
from adsim import _program, _tape
from adsim._opcodes import Opcode as Op
from threadwork import run_threads

RNG = np.random.default_rng(7)
X = RNG.uniform(0.1, 0.9, 12)


def laplacian(m):
    second = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(m, m))
    return sp.kronsum(second, second, format="csr")


L = laplacian(40)              # 1600 unknowns: sweeps heavy enough to release the GIL


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


CASES = {
    "sparse product": (lambda x: L @ x, RNG.standard_normal(1600)),
    "elementwise": (lambda x: np.sin(x) * x + 1.0, X),
    "scalar": (rosenbrock, RNG.uniform(0.1, 0.9, 3000)),
    "identity": (lambda x: x, X),
    "reshaped input": (lambda x: x.reshape(3, 4), X),
    "constant output": (lambda x: np.ones(4) + 0.0 * np.sum(x) * 0.0, X),
    "concatenated": (lambda x: np.concatenate([x, 2.0 * x]), X),
    "padded": (lambda x: np.pad(np.exp(x), 2), X),
    "written slice": (lambda x: _written_slice(x), X),
    "matrix input": (lambda x: np.tanh(x @ x.T), X.reshape(3, 4)),
}


def _written_slice(x):
    y = np.zeros(x.shape)
    y[2:5] = np.cos(x[:3])
    return y


def both_ways(tape, *xs):
    """The copying replay's result and the in-place one's."""
    previous = _tape.set_values_in_place(False)
    try:
        copied = tape.forward(*xs)
    finally:
        _tape.set_values_in_place(True)
    try:
        return copied, tape.forward(*xs)
    finally:
        _tape.set_values_in_place(previous)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_are_bitwise_those_of_the_copying_replay(name):
    f, x = CASES[name]
    tape = ad.record(f, x)
    for z in (x, x * 1.1, x[::-1].copy()):
        copied, in_place = both_ways(tape, z)
        assert np.asarray(copied).tobytes() == np.asarray(in_place).tobytes()
        assert np.allclose(in_place, f(z), rtol=1e-13, atol=0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_result_is_never_changed_by_a_later_replay_nor_changes_one(name):
    f, x = CASES[name]
    tape = ad.record(f, x)
    first = tape.forward(x)
    if not isinstance(first, np.ndarray):
        return                                  # a float: nothing to share
    kept = first.copy()
    second = tape.forward(x + 0.5)
    assert np.array_equal(first, kept)
    assert not np.shares_memory(first, second)
    first[...] = np.nan                         # the caller owns it: no replay reads it
    assert np.array_equal(tape.forward(x + 0.5), second)
    assert first.flags.writeable and first.flags.owndata


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_callers_input_is_never_written_nor_returned(name):
    f, x = CASES[name]
    tape = ad.record(f, x)
    z = x * 1.3
    before = z.tobytes()
    y = tape.forward(z)
    assert z.tobytes() == before
    if isinstance(y, np.ndarray):
        assert not np.shares_memory(y, z)
        y[...] = 0.0
        assert z.tobytes() == before


def test_an_input_whose_slot_an_op_writes_is_copied_in_not_written():
    t = _tape.Tape()
    a = t.new_input(np.ones(5))
    t.record_op(int(Op.NEG), -2, [a, a, -1])         # overwrites the input's slot
    out = t.record_op(int(Op.SIN), 5, [a, -1])
    _program.finish(t, out, (5,))
    x = np.linspace(0.1, 0.5, 5)
    before = x.tobytes()
    for _ in range(3):
        assert np.array_equal(t._forward([x]), np.sin(-x))
    assert x.tobytes() == before


def test_unaligned_and_converted_inputs_give_the_same_results():
    tape = ad.record(lambda x: L @ x, np.ones(1600))
    x = RNG.standard_normal(1600)
    raw = np.zeros(8 * 1600 + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float64)
    unaligned[...] = x
    assert not unaligned.flags.aligned
    narrow = x.astype(np.float32)               # converted to float64 for the replay
    for z, at in ((unaligned, x), (narrow, narrow.astype(np.float64)), (list(x), x),
                  (x[::1], x)):
        assert tape.forward(z).tobytes() == both_ways(tape, at)[0].tobytes()
    assert np.array_equal(unaligned, x)


def test_several_inputs_some_read_in_place():
    f = lambda a, b: np.sin(a) * b + a                           # noqa: E731
    tape = ad.record(f, X, X[::-1].copy())
    a, b = X * 0.7, np.asfortranarray(X)
    assert tape.forward(a, b).tobytes() == f(a, b).tobytes()
    assert tape.forward(a, a).tobytes() == f(a, a).tobytes()     # one array for both


def test_threads_replaying_one_tape_keep_their_results_apart():
    tape = ad.record(lambda x: L @ x, np.ones(1600))
    points = [RNG.standard_normal(1600) for _ in range(6)]
    work = [(f"x{i}", tape.forward, z, L @ z) for i, z in enumerate(points)]
    assert run_threads(4, work, rounds=6) == []


def test_results_kept_by_threads_stay_what_each_replay_returned():
    tape = ad.record(lambda x: np.exp(x) * x, np.ones(50_000))
    start = threading.Barrier(3)
    kept, errors = [], []

    def worker(k):
        z = np.full(50_000, 0.01 * k)
        start.wait()
        try:
            mine = [tape.forward(z + j) for j in range(8)]
            kept.append((z, mine))
        except BaseException as err:
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for z, mine in kept:
        for j, y in enumerate(mine):
            assert np.array_equal(y, np.exp(z + j) * (z + j))


def test_an_output_that_is_an_input_overwritten_in_place_is_copied_out():
    t = _tape.Tape()
    a = t.new_input(np.ones(4))
    t.record_op(int(Op.NEG), -2, [a, a, -1])
    _program.finish(t, a, (4,))
    x = np.arange(1.0, 5.0)
    first = t._forward([x])
    assert np.array_equal(first, -x) and np.array_equal(x, np.arange(1.0, 5.0))
    assert np.array_equal(t._forward([2.0 * x]), -2.0 * x) and np.array_equal(first, -x)


def test_arrays_of_the_inputs_size_but_another_shape_are_refused():
    tape = ad.record(lambda x: np.tanh(x) * 2.0, X.reshape(3, 4))
    for wrong in (X.reshape(4, 3), X, X.reshape(3, 4, 1)):
        with pytest.raises(ad.errors.InvalidArgumentValue, match="shape"):
            tape.forward(wrong)
    assert isinstance(ad.record(rosenbrock, X).forward(X), float)
