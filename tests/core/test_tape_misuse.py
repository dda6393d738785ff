"""A tape used as a user might guess it works: made by calling ``Tape()``,
reached while its function still runs, or given attributes. Every public
method either answers harmlessly or raises an adsim error that says tapes
are made by ``adsim.record(f, x)``; no attribute of a tape can be changed
except ``chunked``."""
import copy
import io
import pickle

import numpy as np
import pytest

import adsim as ad
from adsim.errors import (InvalidArgumentValue, ReadOnlyTapeAttribute, TapeCopyError,
                          TapeNotRecorded)
from adsim.tape import Tape

X = np.linspace(0.2, 1.4, 6)


def energy(x):
    """A chain of springs: the potential of the stretched links."""
    stretch = np.diff(x) - 0.2
    return 0.5 * np.sum(stretch ** 2) + np.sum(np.cos(x))


# every public method and property of a tape, called as a user would
REPLAYS = {
    "forward": lambda t: t.forward(X),
    "gradient": lambda t: t.gradient(X),
    "value_and_gradient": lambda t: t.value_and_gradient(X),
    "jvp": lambda t: t.jvp(X, X),
    "vjp": lambda t: t.vjp(X, 1.0),
    "hvp": lambda t: t.hvp(X, X),
    "gradient_and_hvp": lambda t: t.gradient_and_hvp(X, X),
    "jacobian": lambda t: t.jacobian(X),
    "fuse": lambda t: t.fuse(),
    "parallel.map": lambda t: ad.parallel.map("gradient", t, [X]),
    "batched": lambda t: t.batched.gradient(X[None]),
}
COPIES = {
    "save": lambda t: t.save(io.BytesIO()),
    "pickle": pickle.dumps,
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}
HARMLESS = {
    "str": str, "repr": repr, "len": len, "stats": lambda t: t.stats(),
    "op_codes": lambda t: t.op_codes(), "input_slots": lambda t: t.input_slots,
    "input_shapes": lambda t: t.input_shapes, "output_slot": lambda t: t.output_slot,
    "output_shape": lambda t: t.output_shape, "n_inputs": lambda t: t.n_inputs,
    "callbacks": lambda t: t.callbacks, "arena_elements": lambda t: t.arena_elements,
    "held_bytes": lambda t: t.held_bytes,
    "recording": lambda t: t.recording, "recording_failed": lambda t: t.recording_failed,
    "chunked": lambda t: t.chunked, "layout_observed": lambda t: t.layout_observed,
}
# positions on an empty tape: refused with the tape's size
POSITIONS = {
    "op_operands": lambda t: t.op_operands(0), "op_flags": lambda t: t.op_flags(0),
    "slot_value": lambda t: t.slot_value(0), "slot_size_of": lambda t: t.slot_size_of(0),
    "param_value": lambda t: t.param_value(0), "branch_outcome": lambda t: t.branch_outcome(0, 1),
    "index_record": lambda t: t.index_record(0, 1), "slot_is_varied": lambda t: t.slot_is_varied(0),
}


def test_the_table_names_every_public_method_of_a_tape():
    public = {n for n in dir(Tape) if not n.startswith("_")}
    recording_helpers = {"add_branch_space", "add_callback", "add_indices", "const_ref", "finish",
                         "finish_failed", "new_input", "observe_layout", "pin", "record_op",
                         "set_branches"}
    covered = set(REPLAYS) | set(COPIES) | set(HARMLESS) | set(POSITIONS) | recording_helpers
    assert public <= covered, public - covered


@pytest.mark.parametrize("name", sorted(REPLAYS))
def test_replaying_a_tape_made_by_calling_Tape_says_to_use_record(name):
    with pytest.raises(TapeNotRecorded, match=r"adsim\.record\(f, x\)") as err:
        REPLAYS[name](Tape())
    assert isinstance(err.value, RuntimeError) and "Tape() directly" in str(err.value)


@pytest.mark.parametrize("name", sorted(COPIES))
def test_saving_or_copying_an_empty_tape_says_to_use_record(name):
    with pytest.raises(TapeCopyError, match=r"adsim\.record\(f, x\)"):
        COPIES[name](Tape())


@pytest.mark.parametrize("name", sorted(HARMLESS))
def test_inspecting_an_empty_tape_is_harmless(name):
    HARMLESS[name](Tape())
    assert "adsim.record(f, x)" in str(Tape()) and "empty" in repr(Tape())
    assert len(Tape()) == 0 and Tape().stats()["n_ops"] == 0


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_positions_in_an_empty_tape_are_refused_with_its_size(name):
    with pytest.raises((ValueError, IndexError), match="adsim"):
        POSITIONS[name](Tape())


def test_a_tape_seen_while_its_function_runs_is_described_and_refused():
    seen = {}

    def spy(x):
        y = energy(x)
        seen["text"] = (str(x.tape), repr(x.tape))
        with pytest.raises(TapeNotRecorded, match="still recording"):
            x.tape.gradient(X)
        with pytest.raises(TapeNotRecorded, match="still recording"):
            x.tape.fuse()
        with pytest.raises(TapeNotRecorded, match="still recording"):
            x.tape._run_table()       # runs found now would miss the ops still to come
        return y
    tape = ad.record(spy, X)
    assert all("recording" in text for text in seen["text"])
    np.testing.assert_allclose(tape.gradient(X), ad.grad(energy)(X), rtol=1e-14)
    assert "output: s" in str(tape)


def test_a_failed_recording_is_described_and_refused():
    tapes = []

    def broken(x):
        tapes.append(x.tape)
        return energy(x) / np.zeros(2)[5]
    with pytest.raises(IndexError):
        ad.record(broken, X)
    assert "failed" in str(tapes[0]) and "failed" in repr(tapes[0])
    with pytest.raises(TapeNotRecorded, match="recording failed"):
        tapes[0].gradient(X)


# ---- attributes ---------------------------------------------------------------

@pytest.fixture
def tape():
    return ad.record(energy, X)


@pytest.mark.parametrize("name", ["output_slot", "output_shape", "recording", "input_slots",
                                  "input_shapes", "callbacks", "n_inputs", "arena_elements",
                                  "held_bytes", "recording_failed", "gradient", "forward"])
def test_assigning_a_tape_attribute_is_refused_and_points_to_record(tape, name):
    with pytest.raises(ReadOnlyTapeAttribute, match=r"read-only.*adsim\.record") as err:
        setattr(tape, name, 10 ** 6)
    assert isinstance(err.value, AttributeError)
    with pytest.raises(ReadOnlyTapeAttribute, match="deleted"):
        delattr(tape, name)
    np.testing.assert_allclose(tape.gradient(X), ad.grad(energy)(X), rtol=1e-14)


def test_a_tape_takes_no_attributes_of_its_own(tape):
    with pytest.raises(ReadOnlyTapeAttribute, match="no attributes of its own"):
        tape.label = "springs"
    assert not hasattr(tape, "label")


def test_the_attributes_adsim_sets_still_work(tape):
    tape.chunked = False                  # a user's switch
    g = tape.gradient(X)
    tape.chunked = True
    np.testing.assert_array_equal(tape.gradient(X), g)
    params = {"k": np.array(2.0), "x": X}
    tree_tape = ad.record(lambda p: p["k"] * energy(p["x"]), params)      # sets _trees
    np.testing.assert_allclose(tree_tape.gradient(params)["k"], energy(X), rtol=1e-14)
    for loaded in (ad.load_tape(io.BytesIO(_saved(tree_tape))), pickle.loads(pickle.dumps(tree_tape))):
        np.testing.assert_array_equal(loaded.gradient(params)["x"], tree_tape.gradient(params)["x"])


def _saved(tape):
    buf = io.BytesIO()
    tape.save(buf)
    return buf.getvalue()


def test_the_attributes_adsim_sets_cannot_be_set_by_users(tape):
    params = {"k": np.array(2.0), "x": X}
    tree_tape = ad.record(lambda p: p["k"] * energy(p["x"]), params)
    want = tree_tape.gradient(params)
    # other argument structures would send arrays to other inputs
    for t in (tree_tape, ad.load_tape(io.BytesIO(_saved(tree_tape)))):
        with pytest.raises(ReadOnlyTapeAttribute, match="read-only|no attributes of its own"):
            t._trees = ({"k": "*", "y": "*"},)
        with pytest.raises(ReadOnlyTapeAttribute, match="structures are fixed"):
            t._set_trees(({"k": "*", "y": "*"},))
        with pytest.raises(ReadOnlyTapeAttribute, match="no attributes of its own"):
            t._fusion = object()             # Tape.fuse's summary
        np.testing.assert_array_equal(t.gradient(params)["x"], want["x"])
    for value in ("no", 0, None, np.array([True])):
        with pytest.raises(InvalidArgumentValue, match="tape.chunked is True .* or False"):
            tape.chunked = value
    assert tape.chunked is True
    tape.chunked = np.False_
    assert tape.chunked is False


def test_lists_a_tape_hands_out_are_copies(tape):
    tape.input_slots[0] = 10 ** 7
    tape.input_shapes[0] = (5,)
    tape.input_slots.append(3)
    assert tape.input_slots == [0] and tape.input_shapes == [X.shape]
    np.testing.assert_allclose(tape.gradient(X), ad.grad(energy)(X), rtol=1e-14)
