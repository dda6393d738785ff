"""Loading a tape file bounds the memory its program may ask for: by default
64 bytes per byte of file plus 1 GiB (adsim.tapefile.default_max_bytes), or
``max_bytes=``; the values of every tape and the values its forward sweeps
save for the reverse sweep count, before any arena exists."""
import io
import json
import pickle

import numpy as np
import pytest

import adsim as ad
from adsim import tapefile
from adsim.errors import InvalidArgument, TapeFileError
from tapefile_bytes import replace_section, section

U0 = np.exp(-np.linspace(-2.0, 2.0, 40) ** 2)


def heat(u, nu=0.2, rate=0.5, steps=5):
    """Explicit steps of a 1-D reaction-diffusion equation (Fisher's), the
    interior updated in place: each step overwrites values the reverse
    sweep of the reaction term reads, so the forward sweep saves them."""
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + nu * (u[2:] - 2.0 * u[1:-1] + u[:-2]) + rate * u[1:-1] * (1 - u[1:-1])
        u = np.sin(u)
    return np.sum(u ** 2)


@pytest.fixture(scope="module")
def saved():
    buf = io.BytesIO()
    ad.record(heat, U0).save(buf)
    return buf.getvalue()


def needed_bytes(tape):
    """What a load of ``tape`` counts: its values and, at most, a result per
    op that saves the value it overwrites."""
    return 8 * (tape.arena_elements + tapefile._saved_values(tape))


def test_a_recording_loads_within_the_default_bound(saved):
    tape = ad.load_tape(io.BytesIO(saved))
    np.testing.assert_array_equal(tape.gradient(U0), ad.record(heat, U0).gradient(U0))
    assert needed_bytes(tape) < tapefile.default_max_bytes(len(saved))
    assert tapefile.default_max_bytes(len(saved)) == 64 * len(saved) + 2 ** 30


def test_max_bytes_bounds_the_values_and_what_sweeps_save(saved):
    tape = ad.load_tape(io.BytesIO(saved))
    need = needed_bytes(tape)
    stack = tape.stats()["bytes"]["value_stack_peak"]
    tape.gradient(U0)
    assert 0 < tape.stats()["bytes"]["value_stack_peak"] <= need - 8 * tape.arena_elements
    assert stack == 0
    loaded = ad.load_tape(io.BytesIO(saved), max_bytes=need)
    np.testing.assert_array_equal(loaded.gradient(U0), tape.gradient(U0))
    with pytest.raises(TapeFileError, match=r"max_bytes=\d+: the values tape 0 saves per sweep"):
        ad.load_tape(io.BytesIO(saved), max_bytes=8 * tape.arena_elements)
    with pytest.raises(TapeFileError, match=r"the values of tape 0 need \d+ bytes.*max_bytes="):
        ad.load_tape(io.BytesIO(saved), max_bytes=64)


def test_a_hostile_slot_size_is_refused_by_the_default_bound(saved):
    code, count, at = section(saved, "SLOT")
    sizes = np.frombuffer(saved[at:at + 8 * count], dtype="<i8").copy()
    sizes[1] = 2 ** 40                      # 8 TiB of values, within the format's limit
    hostile = replace_section(saved, "SLOT", sizes.tobytes())
    for load in (tapefile.loads, lambda data: pickle.loads(pickle.dumps(_Pickled(data)))):
        with pytest.raises(TapeFileError, match="more memory than the default bound for a file"):
            load(hostile)
    with pytest.raises(TapeFileError, match="more memory than max_bytes"):
        ad.load_tape(io.BytesIO(hostile), max_bytes=10 ** 12)


class _Pickled:
    """Unpickles as the tape whose file is ``data`` (as a pickled tape does)."""

    def __init__(self, data):
        self.data = data

    def __reduce__(self):
        return tapefile._from_bytes, (self.data,)


@pytest.mark.parametrize("bad", [0, -5, 1.5, "1GB", True])
def test_max_bytes_must_be_a_positive_integer(saved, bad):
    with pytest.raises(InvalidArgument, match="max_bytes must be a positive integer"):
        ad.load_tape(io.BytesIO(saved), max_bytes=bad)


def _relax(x):
    """A damped fixed-point iteration, checkpointed: its snapshots are states."""
    u = ad.checkpoint_loop(lambda u: 0.5 * u + 0.5 * np.cos(u) * x, x, 200, snapshots=8)
    return np.sum(u ** 2)


@pytest.mark.parametrize("fields", [dict(snapshots=10 ** 9),
                                    dict(snapshots=None, memory_limit=2 ** 50)])
def test_a_loop_asking_for_huge_snapshots_is_refused(fields):
    x = np.linspace(0.0, 1.0, 1000)
    buf = io.BytesIO()
    ad.record(_relax, x).save(buf)
    data = buf.getvalue()
    ad.load_tape(io.BytesIO(data))                  # as recorded: 8 snapshots of 8 kB
    code, count, at = section(data, "CALL")
    calls = json.loads(bytes(data[at:at + count]))
    calls[0]["state"].update(fields, n_steps=10 ** 9)
    hostile = replace_section(data, "CALL", json.dumps(calls).encode())
    with pytest.raises(TapeFileError, match="snapshots and saved states of the checkpointed loop"):
        ad.load_tape(io.BytesIO(hostile))
