"""No call from Python can crash a tape. Every method and attribute of the
compiled Tape either checks its arguments or refuses: out-of-range
positions and refs, malformed operands of recorded ops, indices past 32
bits, writes to a finished recording, replays of recordings that are still
running or failed, tampering with its attributes. Pickling and copying go
through the tape file format.
The fuzzing runs in a child process, so that a crash fails the test
instead of ending the test session."""
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adsim as ad
from adsim import _program, _tape
from adsim._opcodes import Opcode as Op
from adsim.errors import AdsimError, TapeCopyError, TapeOverflow
from paths import ROOT

X = np.linspace(0.1, 0.9, 5)


def f(x):
    y = np.sin(x) * x[::-1]
    y[1:3] = x[:2] ** 2
    return np.sum(np.where(x > 0.5, y, 2.0 * y)) + np.max(x) + x @ x


@pytest.fixture
def tape():
    return ad.record(f, X)


# ---- copies --------------------------------------------------------------------

@pytest.mark.parametrize("how", [lambda t: pickle.loads(pickle.dumps(t)), copy.copy,
                                 copy.deepcopy])
def test_pickling_or_copying_a_tape_goes_through_the_tape_file_format(tape, how):
    other = how(tape)              # tests/test_tapefile.py checks the format itself
    assert other is not tape and other.gradient(X).tobytes() == tape.gradient(X).tobytes()


def test_a_tape_that_depends_on_code_says_why_it_cannot_be_pickled():
    unnamed = ad.primitive(lambda x: x + 1.0, vjp=lambda a, o, w: (w,))
    tape = ad.record(lambda x: np.sum(unnamed(x)), X)
    for how in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TapeCopyError, match="without name=") as err:
            how(tape)
        assert isinstance(err.value, TypeError) and isinstance(err.value, AdsimError)


# ---- recordings that are running or failed ----------------------------------------

def test_replaying_a_tape_that_is_still_recording_is_refused():
    seen = []

    def g(x):
        with pytest.raises(RuntimeError, match="still recording"):
            x.tape.forward(X)
        with pytest.raises(RuntimeError, match="still recording"):
            x.tape._forward([X])
        seen.append(True)
        return np.sum(x)
    ad.record(g, X)
    assert seen


def test_replaying_a_failed_recording_is_refused():
    tapes = []

    def g(x):
        tapes.append(x.tape)
        raise ZeroDivisionError("in the user's function")
    with pytest.raises(ZeroDivisionError):
        ad.record(g, X)
    for call in (lambda t: t.forward(X), lambda t: t.gradient(X), lambda t: t._hvp_one(X, X)):
        with pytest.raises(RuntimeError, match="recording failed"):
            call(tapes[0])
    assert tapes[0].recording_failed and not tapes[0].recording


def test_a_bare_tape_cannot_be_replayed_or_finished_without_an_output():
    t = _tape.Tape()
    with pytest.raises(RuntimeError, match="still recording"):
        t._forward([])
    with pytest.raises(ValueError, match="not a slot"):
        _program.finish(t, 0, ())


# ---- a finished tape is read-only ------------------------------------------------

FINISHED_REFUSES = {
    "record_op": (int(Op.NEG), 5, [0, -1]),
    "const_ref": (np.ones(3),),
    "add_indices": ([0, 1],),
    "add_branch_space": (3,),
    "set_branches": (0, [True]),
    "add_callback": (object(),),
    "new_input": (np.ones(2),),
    "pin": (0,),
    "finish": (0, (5,)),
}


@pytest.mark.parametrize("name", sorted(FINISHED_REFUSES))
def test_a_finished_tape_refuses_to_record(tape, name):
    before = tape.stats()
    with pytest.raises(RuntimeError, match="finished recording"):
        getattr(tape, name)(*FINISHED_REFUSES[name])
    assert tape.stats() == before
    np.testing.assert_allclose(tape.forward(X), f(X), rtol=1e-14)


@pytest.mark.parametrize("name", ["output_slot", "output_shape", "recording", "input_slots",
                                  "input_shapes", "callbacks", "n_inputs", "arena_elements"])
def test_attributes_that_describe_the_program_are_read_only(tape, name):
    with pytest.raises(AttributeError):
        setattr(tape, name, 10 ** 6)
    tape.input_slots.append(10 ** 6)           # copies: changing them changes nothing
    tape.input_shapes.clear()
    np.testing.assert_allclose(tape.forward(X), f(X), rtol=1e-14)


def test_the_callbacks_of_a_finished_tape_are_a_tuple():
    cube = ad.primitive(lambda x: x ** 3, vjp=lambda a, out, w: (3 * a[0] ** 2 * w,))
    t = ad.record(lambda x: np.sum(cube(x)), X)
    assert isinstance(t.callbacks, tuple) and len(t.callbacks) == 1


# ---- reading positions and refs --------------------------------------------------

OUT_OF_RANGE = {
    "op_operands": [(-1,), (10 ** 9,)],
    "op_flags": [(-1,), (10 ** 9,)],
    "slot_value": [(10 ** 6,), (-10 ** 6,)],
    "slot_size_of": [(10 ** 6,), (-10 ** 6,)],
    "param_value": [(-1,), (10 ** 9,)],
    "branch_outcome": [(-1, 1), (0, 10 ** 9), (10 ** 9, 1), (0, -5)],
    "index_record": [(-1, 1), (0, 10 ** 9), (10 ** 9, 1), (0, -5)],
}


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE))
def test_positions_outside_the_tape_are_refused(tape, name):
    for args in OUT_OF_RANGE[name]:
        with pytest.raises((ValueError, IndexError), match="adsim"):
            getattr(tape, name)(*args)


def test_sweeps_check_their_arrays(tape):
    xs = tape._inputs(X)
    bad = [
        lambda: tape._forward([]),
        lambda: tape._forward([np.zeros(4)]),
        lambda: tape._forward(None),
        lambda: tape._forward([X, X]),
        lambda: tape._adjoint(xs, np.ones((2, 7))),
        lambda: tape._adjoint(xs, np.ones(3)),
        lambda: tape._tangent(xs, [np.ones(5)]),           # one direction, not (p, 5)
        lambda: tape._tangent(xs, [np.ones((2, 4))]),
        lambda: tape._tangent(xs, []),
        lambda: tape._tangent(xs, [None]),
        lambda: tape._soadjoint(xs, [np.ones((1, 5))], np.ones(3)),
        lambda: tape._soadjoint(xs, [np.ones((2, 5))], np.ones(1), np.ones((3, 1))),
        lambda: tape._hvp_one(X, np.ones(4)),
        lambda: tape._hvp_one(np.ones(3), X),
        lambda: tape._iterate(xs, 1),                      # output size 1, state size 5
    ]
    for call in bad:
        with pytest.raises(ValueError, match="adsim"):
            call()
    np.testing.assert_allclose(tape.forward(X), f(X), rtol=1e-14)


# ---- recording malformed ops -------------------------------------------------------

def recording_tape():
    """A bare recording with slots of 5, 5 and 1 elements, a constant of 5,
    one parameter, indices 0..4, three branch records and one callback."""
    t = _tape.Tape()
    a = t.new_input(np.ones(5))
    b = t.new_input(np.ones(5))
    c = t.new_input(np.ones(1))
    k = t.const_ref(np.arange(5.0))
    t.add_indices(np.arange(5))
    t.add_branch_space(3)
    t.add_callback(object())
    return t, a, b, c, k


MALFORMED = {
    "unknown opcode": (999, 5, [0, -1]),
    "end marker": (int(Op.UNARY_END), 5, [0, -1]),
    "unary size": (int(Op.SIN), 5, ["c", -1]),
    "unary parameter": (int(Op.ADD_C), 5, ["a", 10 ** 6]),
    "unary arity": (int(Op.SIN), 5, ["a"]),
    "slot past the end": (int(Op.SIN), 5, [10 ** 6, -1]),
    "constant past the end": (int(Op.SIN), 5, [-10 ** 6, -1]),
    "binary size": (int(Op.ADD), 4, ["a", "b"]),
    "no result": (int(Op.ADD), -1, ["a", "b"]),
    "compare range": (int(Op.COMPARE), -1, ["a", "b", 0, 1, 5]),
    "compare kind": (int(Op.COMPARE), -1, ["c", "c", 17, 0, 1]),
    "argext size": (int(Op.ARGEXT), -1, ["a", 1, 6, 1, 0, 0]),
    "argext empty axis": (int(Op.ARGEXT), -1, ["c", 1, 0, 1, 0, 0]),
    "copy size": (int(Op.COPY), 4, ["a"]),
    "fill size": (int(Op.FILL), 4, ["k"]),
    "sum view": (int(Op.SUM), 1, ["a", 1, 6, 1]),
    "broadcast view": (int(Op.BROADCAST), 10, ["a", 1, 3, 5]),
    "gather index": (int(Op.GATHER), 1, ["c", 1, 0, 0, 0, 0]),
    "gather index range": (int(Op.GATHER), 5, ["a", 3, 0, 0, 0, 0]),
    "gather stride": (int(Op.GATHER), 5, ["a", 0, 1, 2, 0, 0]),
    "gather negative start": (int(Op.GATHER), 2, ["a", 0, -1, 1, 0, 0]),
    "scatter index": (int(Op.SCATTER), -2, ["c", "a", 0, 5, 0, 0, 0, 0]),
    "scatter values": (int(Op.SCATTER), -2, ["a", "b", 0, 3, 0, 0, 0, 0]),
    "scatter stride": (int(Op.SCATTER), -2, ["a", "c", 0, 3, 4, 1, 3, 0]),
    "where mask range": (int(Op.WHERE), 5, ["a", "b", 1]),
    "matmul sizes": (int(Op.MATMUL), 1, ["a", "b", 1, 4, 1]),
    "matmul negative": (int(Op.MATMUL), 0, ["a", "b", -1, 5, 0]),
    "callback index": (int(Op.CALLBACK), 5, [3, 1, "a"]),
    "callback arity": (int(Op.CALLBACK), 5, [0, 2, "a"]),
    "result size": (int(Op.SIN), -3, ["a", -1]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_ops_are_refused_before_they_run(case):
    t, a, b, c, k = recording_tape()
    code, size, operands = MALFORMED[case]
    names = {"a": a, "b": b, "c": c, "k": k}
    before = len(t)
    with pytest.raises((ValueError, IndexError), match="adsim"):
        t.record_op(code, size, [names.get(o, o) for o in operands])
    assert len(t) == before
    t.record_op(int(Op.SIN), 5, [a, -1])        # the recording goes on


def test_argext_cannot_overwrite_indices_a_gather_reads():
    t, a, b, c, k = recording_tape()
    t.record_op(int(Op.GATHER), 5, [a, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="gather or scatter"):
        t.record_op(int(Op.ARGEXT), -1, [b, 1, 5, 1, 0, 0])


def test_indices_and_operands_past_32_bits_are_refused_not_wrapped():
    t, a, b, c, k = recording_tape()
    for idx in ([2 ** 31], np.array([-2 ** 31 - 1]), np.array([0, 2 ** 40], dtype=np.int64)):
        with pytest.raises(TapeOverflow, match="32-bit"):
            t.add_indices(idx)
    with pytest.raises(TypeError, match="integers"):
        t.add_indices(np.array([0.5]))
    with pytest.raises(TapeOverflow):
        t.record_op(int(Op.GATHER), 1, [a, 0, 2 ** 31, 1, 1, 0])
    assert isinstance(TapeOverflow("x"), OverflowError)


# ---- fuzzing in a child process ----------------------------------------------------

FUZZ = r"""
import copy, pickle, sys
import numpy as np
import adsim as ad
from adsim import _program, _tape
from adsim.errors import AdsimError

AWKWARD = [None, -1, 0, 1, 7, -7, 2 ** 31, -2 ** 31 - 1, 2 ** 63, 10 ** 30, 1.5, float("nan"),
           "x", b"\x00", [], [1, 2, 3], (), np.zeros(3), np.zeros((2, 5)), np.ones(5),
           np.array([2 ** 40]), object()]
rng = np.random.default_rng(int(sys.argv[1]))
kinds = {}

def attempt(call):
    try:
        call()
    except BaseException as err:
        if isinstance(err, (SystemError, KeyboardInterrupt, SystemExit)):
            raise
        kinds[type(err).__name__] = kinds.get(type(err).__name__, 0) + 1

def f(x):
    y = np.sin(x) * x[::-1]
    y[1:3] = x[:2] ** 2
    return np.sum(np.where(x > 0.5, y, 2.0 * y)) + np.max(x) + x @ x

x = np.linspace(0.1, 0.9, 5)
tapes = [ad.record(f, x), _tape.Tape(), ad.record(lambda z: z * 2.0, x)]
names = sorted(n for n in dir(_tape.Tape) if not n.startswith("__") or n in
               ("__len__", "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__"))
for t in tapes:
    for name in names:
        member = getattr(t, name, None)
        if callable(member):
            attempt(member)
            for a in AWKWARD:
                attempt(lambda: member(a))
            for _ in range(60):
                args = [AWKWARD[i] for i in rng.integers(0, len(AWKWARD), rng.integers(2, 5))]
                attempt(lambda: member(*args))
        for a in AWKWARD:
            attempt(lambda: setattr(t, name, a))
    for call in (lambda: t.forward(x), lambda: t.gradient(x), lambda: t.hvp(x, x),
                 lambda: t.jvp(x, x), lambda: t.vjp(x, 1.0), lambda: t.jacobian(x),
                 lambda: _tape.find_runs(t), lambda: _tape.Replay(), lambda: _tape.Replay(t)):
        attempt(call)

# random programs: ops of every kind with operands that are valid, or nearly
from adsim._opcodes import Opcode as Op

class Rules:          # a callback op's Python rules, sometimes answering wrongly
    def __init__(self, size, wrong):
        self.size, self.wrong = size, wrong
    def out(self, n):
        return np.ones(n + (1 if self.wrong else 0))
    def value(self, args):
        return self.out(self.size)
    def tangent(self, args, result, tangents):
        p = next((t.shape[0] for t in tangents if t is not None), 1)
        return np.ones((p, self.size + (1 if self.wrong else 0)))
    def adjoint(self, args, result, adjoint):
        return [np.ones((adjoint.shape[0], a.size)) for a in args][: None if not self.wrong else 1]
    def soadjoint(self, args, result, tangents, adjoint, adjoint_tangents):
        return ([np.ones(a.size) for a in args],
                [np.ones((adjoint_tangents.shape[0], a.size)) for a in args])

def random_op(t, refs, rng):      # (code, result size, operands) on the refs (ref, size)
    below = lambda n, m=1: rng.integers(0, max(n, 1), m)
    pick = lambda: refs[rng.integers(len(refs))]
    (a, na), (b, nb) = pick(), pick()
    kind = rng.integers(11)
    if kind == 0:
        code = int(rng.integers(1, int(Op.UNARY_END)))
        return code, na, [a, int(rng.integers(-1, 2))]
    if kind == 1:
        return int(rng.integers(int(Op.ADD), int(Op.BINARY_END))), max(na, nb), [a, b]
    if kind == 2:
        n = max(na, nb)
        return int(Op.COMPARE), -1, [a, b, int(rng.integers(6)), t.add_branch_space(n), n]
    if kind == 3:
        return int(Op.ARGEXT), -1, [a, 1, na, 1, t.add_indices(np.zeros(1, int)), 0]
    if kind == 4:
        code = [Op.COPY, Op.FILL, Op.BROADCAST, Op.SUM, Op.CUMSUM][rng.integers(5)]
        extra = [] if code in (Op.COPY, Op.FILL) else [1, 2 if code == Op.BROADCAST else na, 1]
        size = na * 2 if code == Op.BROADCAST else 1 if code == Op.SUM else na
        return int(code), size, [a] + extra
    if kind == 5:
        m = int(rng.integers(1, 6))
        ioff = t.add_indices(below(na, m))
        strided = rng.random() < 0.5
        return int(Op.GATHER), m, [a, ioff] + ([0, 1, m, 0] if strided and m <= na else [0, 0, 0, 0])
    if kind == 6:
        slot = [r for r in refs if r[0] >= 0][rng.integers(len([r for r in refs if r[0] >= 0]))]
        m = int(rng.integers(1, max(slot[1], 1) + 1))
        ioff = t.add_indices(below(slot[1], m))
        return int(Op.SCATTER), -2, [slot[0], b if nb in (1, m) else a, ioff, m, 0, 0, 0, 0]
    if kind == 7:
        n = max(na, nb)
        off = t.add_branch_space(n)
        t.set_branches(off, rng.random(n) < 0.5)
        return int(Op.WHERE), n, [a, b, off]
    if kind == 8:
        return int(Op.MATMUL), 1, [a, b, 1, na, 1] if na == nb else [a, b, 1, 1, 1]
    if kind == 9:
        cb = t.add_callback(Rules(na, rng.random() < 0.2))
        return int(Op.CALLBACK), na, [cb, 2, a, b]
    return int(rng.integers(0, 300)), int(rng.integers(-3, 6)), [int(v) for v in rng.integers(-4, 9, rng.integers(0, 8))]

recorded = finished = 0
for trial in range(150):
    t = _tape.Tape()
    refs = [(t.new_input(rng.uniform(-2, 2, 4)), 4), (t.new_input(rng.uniform(-2, 2, 1)), 1),
            (t.const_ref(rng.uniform(-2, 2, 4)), 4), (t.const_ref(rng.uniform(-2, 2, 1)), 1)]
    results = []
    for _ in range(25):
        try:
            code, size, ops = random_op(t, refs, rng)
        except Exception as err:             # refused while preparing (an index, ...)
            attempt(lambda: (_ for _ in ()).throw(err))
            continue
        if rng.random() < 0.25:              # nearly valid: one operand off
            j = rng.integers(len(ops) + 1)
            if j == len(ops):
                size = int(size + rng.integers(-2, 3))
            else:
                ops[j] = int(ops[j] + rng.choice([-3, -1, 1, 2, 7, 2 ** 31 - 1]))
        try:
            r = t.record_op(code, size, ops)
        except Exception as err:
            attempt(lambda: (_ for _ in ()).throw(err))
            continue
        if r >= 0 and size >= 0:
            refs.append((r, size))
            results.append((r, size))
    recorded += len(t)
    out, n = results[-1] if results else refs[0]
    attempt(lambda: _program.finish(t, out, (n,)))
    if t.recording:
        continue
    finished += 1
    xs = [rng.uniform(-2, 2, 4), rng.uniform(-2, 2, 1)]
    for chunked in (True, False):
        t.chunked = chunked
        for call in (lambda: t.forward(*xs), lambda: t.gradient(*xs), lambda: t.jvp(xs, xs),
                     lambda: t.vjp(xs, np.ones(n)), lambda: t.hvp(xs, xs),
                     lambda: t.hvp(xs, [np.ones((4, 3)), np.ones((1, 3))], w=np.ones(n)),
                     lambda: t.jacobian(*xs), lambda: t._iterate(t._inputs(xs), 3)):
            attempt(call)
assert recorded > 1000 and finished > 100, (recorded, finished)
print("ok", sorted(kinds))
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_awkward_calls_from_python_never_crash(seed):
    """Every method and attribute of Tape fed None, negative, huge, NaN,
    wrong types and arrays of the wrong shape, and random programs recorded
    op by op and replayed in every mode: only Python exceptions, never a
    signal, and never a SystemError (an error without an adsim message)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                                    os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(FUZZ), str(seed)],
                            capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    assert result.stdout.startswith("ok"), result.stdout[-2000:]
    assert "SystemError" not in result.stdout
