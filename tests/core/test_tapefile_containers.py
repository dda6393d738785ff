"""Tapes recorded with containers (dicts, lists, tuples, namedtuples, None)
in tape files: the ARGS section keeps the argument structures, so a saved,
loaded or unpickled tape takes the same containers and replays bitwise like
the original; namedtuples travel by their type name and field names (no
class is imported); what a file cannot name is refused when saving, altered
structures when loading. Files of format version 1 still load."""
import collections
import json
import pickle
import struct

import numpy as np
import pytest

import adsim as ad
from adsim import tapefile
from adsim.errors import InvalidArgumentValue, InvalidInput, TapeCopyError, TapeFileError
from tapefile_bytes import ITEM, layout, replace_section, resign, section, sections
from tapefile_replays import assert_same_replays, copies, nearby

RNG = np.random.default_rng(11)
Rates = collections.namedtuple("Rates", "k c")


def model(params, state):
    a, b = params["a"], params["b"]
    x, rates, by_index = state
    return (a * np.sum(np.sin(b) * x[:3]) + np.sum(rates.c * x[1:] ** 2) * rates.k
            + np.log1p(b @ b) * params["c"][0] + by_index[2] @ by_index[10] ** 2)


PARAMS = {"a": np.array(2.0), "b": np.array([1.0, 2.0, 0.5]), "c": [np.array(0.7), None]}
STATE = (np.array([0.5, 1.5, -0.3, 0.2]), Rates(np.array(0.3), np.array([1.0, 2.0, 3.0])),
         {10: np.array([0.1, 0.2]), 2: np.array([1.5, -1.0])})


def test_the_example_of_the_task_loads_with_its_dict():
    args = ({"a": np.array(2.0), "b": np.array([1.0, 2.0])},)
    tape = ad.record(lambda p: p["a"] * np.sum(p["b"] ** 2), *args)
    for loaded in copies(tape):
        assert type(loaded) is type(tape)
        g = loaded.gradient(*args)
        assert set(g) == {"a", "b"} and g["b"].tobytes() == tape.gradient(*args)["b"].tobytes()
        assert_same_replays(tape, loaded, [args, (nearby(args[0], RNG),)])


def test_a_loaded_tape_given_its_leaves_apart_says_which_containers_it_takes():
    args = ({"a": np.array(2.0), "b": np.array([1.0, 2.0])},)
    tape = ad.record(lambda p: p["a"] * np.sum(p["b"] ** 2), *args)
    for t in [tape] + copies(tape):
        with pytest.raises(InvalidArgumentValue, match=r"recorded with 1 argument "
                           r"\(\{'a': \*, 'b': \*\}; \* marks an array\) but 2 were given"):
            t.gradient(args[0]["a"], args[0]["b"])


def test_nested_containers_replay_bitwise_after_saving_loading_and_pickling(tmp_path):
    tape = ad.record(model, PARAMS, STATE)
    points = [(PARAMS, STATE), (nearby(PARAMS, RNG), nearby(STATE, RNG))]
    assert_same_replays(tape, copies(tape, tmp_path), points)
    data = tapefile.dumps(tape)
    assert tapefile.dumps(tapefile.loads(data)) == data       # saving again: the same file


def test_a_loaded_tape_takes_namedtuples_of_the_saved_name_and_fields_and_answers_in_them():
    data = pickle.dumps(ad.record(model, PARAMS, STATE))
    loaded = pickle.loads(data)
    Again = collections.namedtuple("Rates", "k c")          # the class defined again
    state = (STATE[0], Again(*STATE[1]), STATE[2])
    g = loaded.gradient(PARAMS, state)
    assert type(g[1][1]) is Again and g[1][1].c.tobytes() == \
        ad.record(model, PARAMS, STATE).gradient(PARAMS, STATE)[1][1].c.tobytes()
    for other in (collections.namedtuple("Speeds", "k c"), collections.namedtuple("Rates", "c k")):
        with pytest.raises(InvalidInput, match=r"recorded argument 1 has \(\*, Rates\(\*, \*\), "):
            loaded.gradient(PARAMS, (STATE[0], other(*STATE[1]), STATE[2]))
    with pytest.raises(InvalidInput, match="structure"):
        loaded.gradient(PARAMS, (STATE[0], tuple(STATE[1]), STATE[2]))


def test_what_a_file_cannot_name_is_refused_when_saving():
    tape = ad.record(lambda p: np.sum(p[1.5] * p[2.5]), {1.5: np.ones(2), 2.5: np.ones(2)})
    with pytest.raises(TapeCopyError, match=r"dict whose key 1\.5 \(float, in argument 0\)"):
        pickle.dumps(tape)

    class Odd(tuple):                 # a tuple with _fields that are no field names
        _fields = ("not a name",)

        def __new__(cls, *items):
            return tuple.__new__(cls, items)
    tape = ad.record(lambda p: np.sum(p[0] ** 2), Odd(np.ones(2)))
    with pytest.raises(TapeCopyError, match="namedtuple .*Odd.*cannot name"):
        tape.save(__import__("io").BytesIO())


def _args_section(data, tape=0):
    _, count, at = section(data, "ARGS", tape)
    return json.loads(bytes(data[at:at + count]).decode())


def test_the_args_section_holds_the_structures_as_documented():
    data = tapefile.dumps(ad.record(model, PARAMS, STATE))
    assert _args_section(data) == [
        {"dict": [["a", "*"], ["b", "*"], ["c", {"list": ["*", None]}]]},
        {"tuple": ["*", {"namedtuple": "Rates", "fields": ["k", "c"], "items": ["*", "*"]},
                   {"dict": [[2, "*"], [10, "*"]]}]}]
    plain = tapefile.dumps(ad.record(lambda x: np.sum(x), np.ones(2)))
    assert _args_section(plain) is None


@pytest.mark.parametrize("edit,why", [
    (lambda s: s[0]["dict"].pop(), "hold 7 arrays for 8 inputs"),
    (lambda s: s[0]["dict"].reverse(), "not distinct and sorted"),
    (lambda s: s[0]["dict"].__setitem__(0, ["a", "*", "*"]), "pairs"),
    (lambda s: s[1]["tuple"][1].update(fields=["k", "k"]), "distinct field names"),
    (lambda s: s[1]["tuple"][1].update(namedtuple="os.system"), "type name"),
    (lambda s: s.__setitem__(0, {"set": ["*"]}), "holds {'set'"),
    (lambda s: s.__setitem__(0, 7), "holds 7"),
])
def test_altered_argument_structures_are_refused(edit, why):
    data = tapefile.dumps(ad.record(model, PARAMS, STATE))
    structures = _args_section(data)
    edit(structures)
    altered = replace_section(data, "ARGS", json.dumps(structures).encode())
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(altered)


def test_the_args_section_is_checked_like_the_others():
    data = tapefile.dumps(ad.record(model, PARAMS, STATE))
    for text, why in [(b"[", "Expecting value|JSON"), (b'{"a": NaN}', "NaN"),
                      (b"[" * 100000 + b"]" * 100000, "recursion|depth")]:
        with pytest.raises(TapeFileError, match=why):
            tapefile.loads(replace_section(data, "ARGS", text))


# ---- format version 1 ----------------------------------------------------------------

# written by adsim 0.1.0 (format 1, before the ARGS section):
# ad.record(lambda x: np.sum(np.sin(x) * x[::-1]) + x @ x, np.array([0.5, 1.0, 1.5]))
VERSION_1 = bytes.fromhex(
    "89616473696d2d746170650d0a1a0a000100000005000000302e312e300402000000000000782471e9cb98b2cfb2dece"
    "0a9b1e9c588db627306f76e0546e38327f7744f60f010000000e000000434f44450200000006000000000000000f0085"
    "0042008300a00040005354525403000000060000000000000000000000030000000a0000000d00000012000000180000"
    "00464c41470100000006000000000000000000000000004f504e44030000001b000000000000000100000000000000ff"
    "ffffff02000000000000000000000002000000ffffffff03000000000000000300000001000000020000000400000003"
    "000000010000000300000001000000050000000000000000000000010000000300000001000000060000000400000005"
    "000000434e5354050000000000000000000000434f46460400000000000000000000004353495a040000000000000000"
    "000000494e54530300000003000000000000000200000001000000000000004252434801000000000000000000000053"
    "4c4f54040000000700000000000000030000000000000003000000000000000300000000000000030000000000000001"
    "0000000000000001000000000000000100000000000000494e5054040000000500000000000000010000000000000000"
    "000000000000000100000000000000010000000000000003000000000000004f55545004000000020000000000000006"
    "0000000000000000000000000000004f505453040000000100000000000000010000000000000043414c4c0600000002"
    "000000000000005b5d")


def test_files_of_format_version_1_still_load():
    assert struct.unpack_from("<H", VERSION_1, 16) == (1,)
    tape = tapefile.loads(VERSION_1)
    x = np.array([0.5, 1.0, 1.5])
    assert tape.gradient(x).tobytes().hex() == "616a2da9cd820a40df84af27df0d0b40a578c8634c1e0c40"
    again = tapefile.dumps(tape)                               # written in the current format
    assert struct.unpack_from("<H", again, 16) == (tapefile.FORMAT_VERSION,) == (2,)
    assert tapefile.loads(again).gradient(x).tobytes() == tape.gradient(x).tobytes()


def as_version_1(data):
    """A file of the current format written as format 1: without its ARGS
    sections (the fourteen others are format 1's)."""
    _, payload = layout(data)
    tapes = {}
    for t, tag, code, count, _, at in sections(data):
        if tag != "ARGS":
            tapes.setdefault(t, []).append(data[at - 16:at + count * ITEM[code]])
    body = struct.pack("<I", len(tapes)) + b"".join(
        struct.pack("<I", len(blocks)) + b"".join(blocks) for blocks in tapes.values())
    head = bytearray(data[:payload - 40])               # up to the payload length
    struct.pack_into("<H", head, 16, 1)
    return resign(bytes(head) + struct.pack("<Q", len(body)) + bytes(32) + body)


def test_a_version_1_file_of_a_tape_with_containers_loads_as_a_tape_of_arrays():
    tape = ad.record(lambda p: p["a"] * np.sum(p["b"] ** 2),
                     {"a": np.array(2.0), "b": np.array([1.0, 2.0])})
    data = tapefile.dumps(tape)
    loaded = tapefile.loads(as_version_1(data))
    assert type(loaded) is ad.Tape and loaded.n_inputs == 2
    assert loaded.gradient(np.array(2.0), np.array([1.0, 2.0]))[1].tobytes() == \
        tape.gradient({"a": np.array(2.0), "b": np.array([1.0, 2.0])})["b"].tobytes()
    with pytest.raises(TapeFileError, match="15 sections; format 1 tapes have 14"):
        tapefile.loads(resign(data[:16] + struct.pack("<H", 1) + data[18:]))
