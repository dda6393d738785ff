"""Tape files (adsim/tapefile.py, adsim/_tapefile.pxi, docs/tape-format.md).

A saved and loaded tape replays bitwise like the original in every sweep,
for a program of every opcode; pickling and copying go through the same
format; primitives travel by name; files that are damaged, of another
version, or altered with a valid digest (a hostile writer) are refused with
TapeFileError before anything replays. Checkpointed loops in files:
tests/checkpoint/test_persist.py; random damage: tests/test_tapefile_fuzz.py."""
import copy
import gc
import io
import json
import pickle
import struct

import numpy as np
import pytest

import adsim as ad
from adsim import tapefile
from adsim._tapecache.fingerprint import fingerprint
from adsim.errors import TapeCopyError, TapeFileError
from opcases import BINARY, BINARY_CASES, PROGRAMS, UNARY, UNARY_CASES, sample
from tapefile_bytes import MAGIC, layout, replace_section, resign, section

RNG = np.random.default_rng(2024)


def outcomes(tape, x, rng):
    """Every replay of ``tape`` at ``x`` and near it, as bytes (or the error
    raised): what a loaded tape must reproduce exactly."""
    out = {}
    m = int(np.prod(tape.output_shape))
    v = rng.standard_normal(x.shape)
    V = rng.standard_normal(x.shape + (3,))
    w = rng.standard_normal(tuple(tape.output_shape))
    calls = {
        "forward": lambda: tape.forward(x),
        "jvp": lambda: tape.jvp(x, v),
        "jvp3": lambda: tape.jvp(x, V),
        "vjp": lambda: tape.vjp(x, w),
        "jacobian": lambda: tape.jacobian(x),
        "hvp_w": lambda: tape.gradient_and_hvp(x, v, w),
        "hvp3_w": lambda: tape.gradient_and_hvp(x, V, w),
    }
    if m == 1:
        calls.update(gradient=lambda: tape.gradient(x), hvp=lambda: tape.hvp(x, v))
    for name, call in calls.items():
        try:
            result = call()
        except Exception as err:        # the same error must come from the copy
            out[name] = type(err).__name__
            continue
        parts = result if isinstance(result, tuple) else (result,)
        out[name] = [np.asarray(p).tobytes() for p in parts]
    return out


def same_replays(tape, loaded, xs, seed=0):
    for x in xs:
        assert outcomes(loaded, x, np.random.default_rng(seed)) == \
            outcomes(tape, x, np.random.default_rng(seed))


def roundtrip(tape):
    return tapefile.loads(tapefile.dumps(tape))


# ---- every opcode: the loaded tape replays bitwise like the original ---------------

def _cases():
    for spec in UNARY + BINARY:
        for label, f in (UNARY_CASES.get(spec.name) or BINARY_CASES.get(spec.name) or []):
            yield spec.name, label, spec, f
    for name in PROGRAMS:
        yield name, name, None, None


@pytest.mark.parametrize("name,label,spec,f", list(_cases()),
                         ids=[f"{n}-{lab}" for n, lab, _, _ in _cases()])
def test_loaded_tape_replays_bitwise_like_the_original(name, label, spec, f):
    rng = np.random.default_rng(7)
    if spec is None:
        f, shape, (lo, hi) = PROGRAMS[name]
        x = rng.uniform(lo, hi, shape)
        near = [x, x + 1e-3 * rng.standard_normal(shape)]
        tape = ad.record(f, x)
    elif spec.family == "unary":
        x = sample(rng, spec, [(5,)])[0]
        tape = ad.record(f, x)
        near = [x, sample(rng, spec, [(5,)])[0]]
    else:
        a, b = sample(rng, spec, [(5,), (5,)])
        tape = ad.record(lambda z: f(z[:5], z[5:]), np.concatenate([a, b]))
        near = [np.concatenate([a, b]), np.concatenate(sample(rng, spec, [(5,), (5,)]))]
    loaded = roundtrip(tape)
    assert name in {ad._opcodes.OPCODE_NAMES[int(c)] for c in loaded.op_codes()}
    assert [loaded.op_operands(k) for k in range(len(loaded))] == \
        [tape.op_operands(k) for k in range(len(tape))]
    same_replays(tape, loaded, near)


def test_a_tape_of_several_inputs_with_views_scatters_and_branches():
    def f(x, y, k):
        z = np.zeros(6)
        z[1:4] = x * y[::2]
        z[::2] += np.where(x > 0.2, np.exp(x), np.abs(y[1::2]))
        m = np.max(z.reshape(2, 3), axis=1)
        return np.sum(np.cumsum(z) ** 2) * np.prod(m) + (k @ x) * np.linalg.det(np.diag(y[:3]) + 3)
    xs = (np.array([0.1, 0.3, 0.7]), np.linspace(-1.0, 1.0, 6), np.array([2.0, -1.0, 0.5]))
    tape = ad.record(f, *xs)
    loaded = pickle.loads(pickle.dumps(tape))
    for shift in (0.0, 1e-4):
        p = tuple(x + shift for x in xs)
        assert tape.forward(*p) == loaded.forward(*p)
        g0, g1 = tape.value_and_gradient(*p), loaded.value_and_gradient(*p)
        assert g0[0] == g1[0] and all(np.array_equal(a, b) for a, b in zip(g0[1], g1[1]))
        h0 = tape.hvp(p, tuple(np.ones_like(x) for x in p))
        h1 = loaded.hvp(p, tuple(np.ones_like(x) for x in p))
        assert all(a.tobytes() == b.tobytes() for a, b in zip(h0, h1))


def test_inputs_that_are_data_stay_data():
    from adsim._opcodes import Opcode as Op
    t = ad.Tape()
    x = t.new_input(np.array([0.5, 1.0, 2.0]))
    d = t.new_input(np.array([3.0, -1.0, 0.25]), False)
    s = t.record_op(int(Op.SIN), 3, [d, -1])            # computed from data alone
    y = t.record_op(int(Op.MUL), 3, [x, s])
    t.finish(t.record_op(int(Op.SUM), 1, [y, 1, 3, 1]), ())
    loaded = roundtrip(t)
    assert [loaded.op_flags(k) for k in range(len(t))] == [t.op_flags(k) for k in range(len(t))]
    assert loaded.op_flags(0) & 8                        # no derivative rules run for sin(d)
    point = (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]))
    assert bits_of(loaded.value_and_gradient(*point)) == bits_of(t.value_and_gradient(*point))


def bits_of(result):
    value, gradients = result
    return [np.asarray(value).tobytes()] + [g.tobytes() for g in gradients]


def test_chunked_runs_and_their_setting_survive():
    def f(x):
        return np.sum(np.tanh(np.sin(x) * x + 1.0) ** 2 * np.exp(-x))
    x = np.linspace(0.0, 3.0, 70000)
    tape = ad.record(f, x)
    loaded = roundtrip(tape)
    assert loaded.chunked and np.array_equal(loaded.gradient(x), tape.gradient(x))
    tape.chunked = False
    unchunked = roundtrip(tape)
    assert not unchunked.chunked and np.array_equal(unchunked.gradient(x), tape.gradient(x))


def test_sparse_patterns_and_compressed_sweeps_of_a_loaded_tape():
    from adsim.sparse.pattern import hessian_pattern, jacobian_pattern

    def residual(u):
        return np.concatenate([u[:1], u[:-2] - 2.0 * u[1:-1] + u[2:] + np.exp(u[1:-1]), u[-1:]])
    u = np.linspace(0.0, 1.0, 40)
    tape = ad.record(residual, u)
    loaded = roundtrip(tape)
    J, JL = jacobian_pattern(tape), jacobian_pattern(loaded)
    assert (J != JL).nnz == 0
    energy = ad.record(lambda u: np.sum(residual(u) ** 2), u)
    assert (hessian_pattern(energy) != hessian_pattern(roundtrip(energy))).nnz == 0
    seeds = np.stack([np.arange(40) % 3 == c for c in range(3)], axis=1).astype(float)
    assert tape.jvp(u, seeds)[1].tobytes() == loaded.jvp(u, seeds)[1].tobytes()


def test_saved_bytes_are_stable_and_saving_a_loaded_tape_gives_the_same_file():
    tape = ad.record(lambda x: np.sum(np.sin(x) ** 2), np.ones(4))
    data = tapefile.dumps(tape)
    assert data == tapefile.dumps(tape) == tapefile.dumps(tapefile.loads(data))
    assert data.startswith(MAGIC)
    assert struct.unpack_from("<HH", data, 16) == (tapefile.FORMAT_VERSION, 0)


# ---- files, pickling, copies --------------------------------------------------------

def test_save_and_load_through_paths_and_file_objects(tmp_path):
    tape = ad.record(lambda x: np.sum(x ** 3), np.arange(3.0))
    tape.save(tmp_path / "t.adtape")
    tape.save(str(tmp_path / "u.adtape"))
    buffer = io.BytesIO()
    tape.save(buffer)
    assert (tmp_path / "t.adtape").read_bytes() == buffer.getvalue()
    assert [p.name for p in tmp_path.iterdir()] != [] and \
        not any(p.name.startswith(".adsim-tape-") for p in tmp_path.iterdir())
    for source in (tmp_path / "t.adtape", str(tmp_path / "u.adtape"), io.BytesIO(buffer.getvalue())):
        assert np.array_equal(ad.load_tape(source).gradient(np.ones(3)), 3.0 * np.ones(3))
    with pytest.raises(TypeError, match=r"file must be a path \(str, bytes or os.PathLike\) or a "
                                        r"binary file"):
        ad.load_tape(3)
    with pytest.raises(TypeError, match="binary mode"):
        ad.load_tape(io.StringIO("text"))


@pytest.mark.parametrize("how", [lambda t: pickle.loads(pickle.dumps(t)), copy.copy, copy.deepcopy])
def test_pickling_and_copying_a_tape_make_an_independent_equal_tape(how):
    tape = ad.record(lambda x: np.sum(np.log1p(x * x)), np.linspace(0.0, 1.0, 7))
    other = how(tape)
    assert other is not tape and isinstance(other, ad.Tape)
    x = np.linspace(0.5, 1.5, 7)
    assert other.gradient(x).tobytes() == tape.gradient(x).tobytes()


def test_active_values_still_refuse_pickling():
    def f(x):
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(x)
        return np.sum(x)
    ad.record(f, np.ones(2))


def test_tapes_still_recording_or_failed_cannot_be_saved():
    def f(x):
        with pytest.raises(TapeCopyError, match="still recording"):
            tapefile.dumps(x.tape)
        raise KeyError("stop")
    with pytest.raises(KeyError):
        ad.record(f, np.ones(2))


# ---- primitives travel by name --------------------------------------------------------

cube = ad.primitive(lambda x: x ** 3, jvp=lambda a, o, t: 3.0 * a[0] ** 2 * t[0],
                    vjp=lambda a, o, w: (3.0 * a[0] ** 2 * w,), name="tests.tapefile.cube")


def test_a_named_primitive_is_saved_by_name_and_found_when_loading():
    x = np.array([0.5, -1.0, 2.0])
    tape = ad.record(lambda x: np.sum(cube(x) * np.sin(x)), x)
    loaded = roundtrip(tape)
    assert loaded.callbacks[0].prim is cube
    same_replays(tape, loaded, [x, x + 0.25])
    state = json.loads(_call_section(tapefile.dumps(tape)))[0]
    assert state == {"kind": "adsim.primitive", "tapes": [],
                     "state": {"name": "tests.tapefile.cube", "fingerprint": fingerprint(cube),
                               "in_shapes": [[3]], "out_shape": [3]}}


def test_adsims_own_primitives_are_found_even_before_first_use():
    import scipy.special as sc
    x = np.array([0.5, 1.5, 2.5])
    tape = ad.record(lambda x: np.sum(sc.gammaln(x) + np.linalg.inv(np.diag(x))), x)
    loaded = roundtrip(tape)
    assert loaded.gradient(x).tobytes() == tape.gradient(x).tobytes()


def test_primitives_that_cannot_be_identified_cannot_be_saved_and_say_so():
    anonymous = ad.primitive(lambda x: 2.0 * x, vjp=lambda a, o, w: (2.0 * w,))
    with pytest.raises(TapeCopyError, match="`<lambda>`.*without name="):
        pickle.dumps(ad.record(lambda x: np.sum(anonymous(x)), np.ones(2)))
    solver = object()
    captures = ad.primitive(lambda x: 2.0 * x + 0.0 * id(solver),
                            vjp=lambda a, o, w: (2.0 * w,), name="tests.captures")
    with pytest.raises(TapeCopyError, match="`tests.captures`.*builtins.object object"):
        pickle.dumps(ad.record(lambda x: np.sum(captures(x)), np.ones(2)))
    with pytest.raises(TypeError, match="non-empty string"):
        ad.primitive(lambda x: x, name=3)


def scaled(c):
    """A function that makes primitives: one name, a value captured per call."""
    return ad.primitive(lambda x: c * x, vjp=lambda a, o, w: (c * w,), name="tests.scaled")


def _saved_sum_of_squares(prim):
    return tapefile.dumps(ad.record(lambda x: np.sum(prim(x) ** 2), np.ones(3)))


def test_a_loaded_tape_gets_the_primitive_with_the_same_rules_and_captured_values():
    twice = ad.primitive(lambda x: 2.0 * x, vjp=lambda a, o, w: (2.0 * w,), name="tests.times")
    thrice = ad.primitive(lambda x: 3.0 * x, vjp=lambda a, o, w: (3.0 * w,), name="tests.times")
    for prim in (twice, thrice):
        tape = ad.record(lambda x: np.sum(prim(x)), np.ones(2))
        assert roundtrip(tape).callbacks[0].prim is prim
    assert fingerprint(scaled(0.5)) == fingerprint(scaled(0.5)) != fingerprint(scaled(0.7))
    data = _saved_sum_of_squares(scaled(0.5))     # then dropped: gone from the registry
    gc.collect()
    other = scaled(0.7)
    assert ad.primitives.primitives_named("tests.scaled") == [other]
    with pytest.raises(TapeFileError, match="`tests.scaled`.*1 primitive.*none with the same"):
        tapefile.loads(data)
    again = scaled(0.5)
    assert tapefile.loads(data).callbacks[0].prim is again
    assert tapefile.loads(data).gradient(np.ones(3)).tobytes() == (0.5 * np.ones(3)).tobytes()


def test_fingerprints_see_code_defaults_globals_and_captured_arrays():
    kernel = np.arange(3.0)

    def make(scale, k):
        return ad.primitive(lambda x, s=scale: s * (x @ k), name="tests.fp")
    base = fingerprint(make(1.0, kernel))
    assert fingerprint(make(1.0, kernel.copy())) == base
    assert fingerprint(make(2.0, kernel)) != base
    assert fingerprint(make(1.0, kernel + np.array([0.0, 0.0, 1e-12]))) != base
    assert fingerprint(ad.primitive(lambda x: x @ np.ones(3), name="tests.fp")) != base
    assert fingerprint(cube) == fingerprint(ad.primitive(cube.value, jvp=cube.jvp, vjp=cube.vjp,
                                                         name="tests.tapefile.cube"))


def test_loading_a_tape_whose_primitive_is_not_registered_names_it():
    data = tapefile.dumps(ad.record(lambda x: np.sum(cube(x)), np.ones(2)))
    text = _call_section(data).replace("tests.tapefile.cube", "tests.tapefile.gone")
    altered = replace_section(data, "CALL", text.encode())
    with pytest.raises(TapeFileError, match="`tests.tapefile.gone`.*not registered.*import"):
        tapefile.loads(altered)


# ---- damaged, foreign and altered files ------------------------------------------------

@pytest.fixture(scope="module")
def saved():
    def f(x):
        y = np.sin(x) * x[::-1]
        y[1:3] = x[:2] ** 2
        return np.sum(np.where(x > 0.5, y, 2.0 * y)) + np.max(x) + x @ x + np.sum(cube(x)) \
            + np.sum(np.abs(x - 0.45))
    return tapefile.dumps(ad.record(f, np.linspace(0.1, 0.9, 5)))


def _call_section(data, tape=0):
    _, count, at = section(data, "CALL", tape)
    return bytes(data[at:at + count]).decode()


def test_damaged_files_are_refused_by_their_header_and_digest(saved):
    body, payload = layout(saved)
    cases = {
        "not a tape file": b"PK\x03\x04" + saved[4:],
        "format version 7.*upgrade": saved[:16] + struct.pack("<H", 7) + saved[18:],
        "header flags": saved[:18] + struct.pack("<H", 1) + saved[20:],
        "truncated": saved[:-3],
        "bytes appended": saved + b"\x00",
        "digest does not match": saved[:payload + 5] + bytes([saved[payload + 5] ^ 4])
                                 + saved[payload + 6:],
        "version field claims": saved[:20] + struct.pack("<I", 10 ** 6) + saved[24:],
        "ends after": saved[:30],
    }
    for why, data in cases.items():
        with pytest.raises(TapeFileError, match=why):
            tapefile.loads(data)
    assert isinstance(TapeFileError("x"), ValueError) and issubclass(TapeFileError, ad.AdsimError)


def _with_ints(data, tag, edit, dtype):
    code, count, at = section(data, tag)
    values = np.frombuffer(data[at:at + count * np.dtype(dtype).itemsize], dtype=dtype).copy()
    edit(values)
    return replace_section(data, tag, values.tobytes())


@pytest.mark.parametrize("tag,dtype,edit,why", [
    ("OPND", "<i4", lambda o: o.__setitem__(1, 999), "not a slot|neither a slot"),
    ("OPND", "<i4", lambda o: o.__setitem__(0, -5), "not a slot"),
    ("CODE", "<u2", lambda c: c.__setitem__(0, 50), "not an opcode"),
    ("CODE", "<u2", lambda c: c.__setitem__(0, 0xFFFF), "not an opcode"),
    ("STRT", "<i4", lambda s: s.__setitem__(2, s[1]), "operands"),
    ("STRT", "<i4", lambda s: s.__setitem__(0, 1), "start at 1"),
    ("FLAG", "<u1", lambda f: f.__setitem__(0, f[0] ^ 1), "flags"),
    ("FLAG", "<u1", lambda f: f.__setitem__(1, f[1] | 2), "flags"),
    ("SLOT", "<i8", lambda s: s.__setitem__(1, s[1] + 1), "elements|values"),
    ("SLOT", "<i8", lambda s: s.__setitem__(2, -1), "slot 2 of -1"),
    ("SLOT", "<i8", lambda s: s.__setitem__(3, 2 ** 62), "at most|more memory than"),
    ("INTS", "<i4", lambda i: i.__setitem__(slice(None), 10 ** 6), "out of bounds"),
    ("BRCH", "<u1", lambda b: b.__setitem__(0, 2), "outcomes are 0 or 1"),
    ("COFF", "<i8", lambda c: c.__setitem__(0, 10 ** 9), "outside the tape's constants"),
    ("CSIZ", "<i8", lambda c: c.__setitem__(0, -3), "outside the tape's constants"),
    ("INPT", "<i8", lambda i: i.__setitem__(1, 4), "input 0 of shape"),
    ("INPT", "<i8", lambda i: i.__setitem__(0, 3), "ends early"),
    ("INPT", "<i8", lambda i: i.__setitem__(2, 2), "varied=2"),
    ("OUTP", "<i8", lambda o: o.__setitem__(0, 10 ** 9), "not a slot"),
    ("OUTP", "<i8", lambda o: o.__setitem__(1, 1), "output section ends early"),
    ("OPTS", "<i8", lambda o: o.__setitem__(0, 5), "chunked=5"),
])
def test_altered_programs_with_a_valid_digest_are_refused_before_replay(saved, tag, dtype, edit,
                                                                        why):
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(_with_ints(saved, tag, edit, dtype))


@pytest.mark.parametrize("edit,why", [
    (lambda c: c[0].update(kind="os.system"), "kind 'os.system'"),
    (lambda c: c[0]["state"].update(in_shapes=[[4]]), "callback 0 with arguments of"),
    (lambda c: c[0]["state"].update(out_shape=[-1]), "not a shape"),
    (lambda c: c[0].update(tapes=[0]), "owns tape 0"),
    (lambda c: c.append(dict(c[0])), "called by 0 ops"),
    (lambda c: c[0]["state"].update(extra=1), "fields"),
])
def test_altered_callback_descriptions_are_refused(saved, edit, why):
    calls = json.loads(_call_section(saved))
    edit(calls)
    with pytest.raises(TapeFileError, match=why):
        tapefile.loads(replace_section(saved, "CALL", json.dumps(calls).encode()))


def test_altered_structure_is_refused(saved):
    code, count, at = section(saved, "CODE")
    _, payload = layout(saved)
    for data, why in [
        (resign(saved[:payload] + struct.pack("<I", 0) + saved[payload + 4:]), "0 tapes"),
        (resign(saved[:payload] + struct.pack("<I", 2) + saved[payload + 4:]), "ends after"),
        (resign(saved[:payload + 4] + struct.pack("<I", 13) + saved[payload + 8:]), "13 sections"),
        (resign(saved[:at - 16] + b"XXXX" + saved[at - 12:]), "unknown or repeated"),
        (resign(saved[:at - 12] + b"\x05" + saved[at - 11:]), "type code 5"),
        (resign(saved[:at - 8] + struct.pack("<Q", 2 ** 60) + saved[at:]), "claims"),
        (replace_section(saved, "CALL", b"\xff\xfe"), "utf-8"),
        (replace_section(saved, "CALL", b"[" * 100000 + b"]" * 100000), "recursion|depth"),
        (replace_section(saved, "CALL", b'{"a": NaN}'), "NaN"),
    ]:
        with pytest.raises(TapeFileError, match=why):
            tapefile.loads(data)
