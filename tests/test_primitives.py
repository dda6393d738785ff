"""Table-driven tests of every primitive (one row of adsim.ops.TABLE each).

Elementwise ops are sampled at random points of their table domain, on
scalars and arrays, with broadcasting (size-1 and lower-rank operands) and
with constant operands on either side. Each case runs the battery of
``fdcheck.check_tape``: value against NumPy; tangents, adjoints and dense
Jacobians against central differences, each in one and in vector mode; the
dot-product test; Hessian-vector products against differences of the
gradient. Ops NumPy evaluates on complex numbers are also checked against
the complex step. The other opcodes have one program each that must record
them, checked the same way.
"""
import zlib

import numpy as np
import pytest

import adsim
from adsim import ops
from adsim._tape import Opcode
import opcases
from fdcheck import assert_close, check_tape, complex_step
from opcases import BINARY, BINARY_CASES, UNARY, UNARY_CASES



def seed_of(*parts):
    """A fixed seed per test case (independent of test order)."""
    return zlib.crc32(repr(parts).encode())


# ------------------------------------------------------------------ unary

UNARY_SHAPES = [(), (1,), (5,), (2, 3)]

# distance to the nearest kink or branch cut, where finite differences are not valid
KINKS = dict(opcases.KINKS,
             ARCTAN2=lambda a, b: np.where(b < 0, np.abs(a), np.hypot(a, b)),
             HYPOT=lambda a, b: np.hypot(a, b))
NOT_HOLOMORPHIC = {"ABS", "SIGN"}   # accept complex input, but the complex step does not apply


def sample(rng, spec, shapes):
    """Random points of the op's domain, away from kinks."""
    lo, hi = spec.domain
    kink = KINKS.get(spec.name)
    for _ in range(1000):
        xs = [rng.uniform(lo, hi, size=s) for s in shapes]
        if kink is None or np.min(kink(*xs), initial=np.inf) > 0.05:
            return xs
    raise AssertionError("no sample away from the kinks")


def _unary_params():
    for name, cases in UNARY_CASES.items():
        for label, f in cases:
            for shape in UNARY_SHAPES:
                yield pytest.param(name, f, shape, id=f"{name}-{label}-{shape}")


@pytest.mark.parametrize(("name", "f", "shape"), list(_unary_params()))
def test_unary(name, f, shape):
    spec = ops.BY_NAME[name]
    rng = np.random.default_rng(seed_of(name, shape))
    (x,) = sample(rng, spec, [shape])
    tape = check_tape(f, [x], seed=seed_of(name, shape, 1))
    assert spec.code in tape.op_codes()


def _accepts_complex(f, n_args):
    try:
        f(*[np.array([0.5 + 1e-20j])] * n_args)
    except TypeError:
        return False
    return True


def _complex_params(specs, n_args):
    for spec in specs:
        if spec.name in NOT_HOLOMORPHIC:
            continue
        for f in spec.numpy:
            if _accepts_complex(f, n_args):
                yield pytest.param(spec.name, f, id=f"{spec.name}-{f.__name__}")


@pytest.mark.parametrize(("name", "f"), list(_complex_params(UNARY, 1)))
def test_unary_complex_step(name, f):
    spec = ops.BY_NAME[name]
    rng = np.random.default_rng(seed_of(name, "cs"))
    (x,) = sample(rng, spec, [(7,)])
    v = rng.standard_normal(7)
    _, jv = adsim.jvp(f, x, v)
    assert_close(jv, complex_step(f, [x], [v]), rtol=1e-12, atol=1e-14, what=f"{name} J v vs complex step")


def test_pow_c_special_exponents_have_exact_derivatives_at_zero():
    x = np.array([0.0, 2.0])
    assert_close(adsim.jacobian(lambda z: z ** 2)(x), np.diag(2 * x), 0, 0)
    assert_close(adsim.jacobian(lambda z: z ** 1)(x), np.eye(2), 0, 0)
    assert_close(adsim.jacobian(lambda z: z ** 0)(x), np.zeros((2, 2)), 0, 0)


def test_stop_gradient():
    """Value of x, derivative zero: d/dx [x * stop(x)] = stop(x) = x."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, size=5)
    tape = adsim.record(lambda z: adsim.stop_gradient(z), x)
    assert ops.BY_NAME["STOP_GRADIENT"].code in tape.op_codes()
    assert_close(tape.forward(x), x, 0, 0)
    assert_close(tape.jacobian(x, mode="forward"), np.zeros((5, 5)), 0, 0)
    assert_close(tape.jacobian(x, mode="reverse"), np.zeros((5, 5)), 0, 0)
    f = lambda z: np.sum(z * adsim.stop_gradient(z))  # noqa: E731
    assert_close(adsim.grad(f)(x), x, 1e-15, 0)
    v = rng.standard_normal(5)
    assert_close(adsim.hvp(f, x, v), np.zeros(5), 0, 0)   # the gradient stop(x) has derivative 0
    y = x + 1.0
    assert_close(adsim.record(f, x).forward(y), np.sum(y * y), 1e-14, 0)
    assert adsim.stop_gradient(x) is x


# ----------------------------------------------------------------- binary

BINARY_SHAPES = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)),
                 ((1,), (4,)), ((2, 3), ()), ((), (2, 3)), ((2, 3), (2, 1)), ((1, 1), (2, 2))]


def _binary_params():
    for name, cases in BINARY_CASES.items():
        for label, f in cases:
            for sa, sb in BINARY_SHAPES:
                for mode in ("both", "const_b", "const_a"):
                    yield pytest.param(name, f, sa, sb, mode, id=f"{name}-{label}-{sa}-{sb}-{mode}")


@pytest.mark.parametrize(("name", "f", "sa", "sb", "mode"), list(_binary_params()))
def test_binary(name, f, sa, sb, mode):
    spec = ops.BY_NAME[name]
    rng = np.random.default_rng(seed_of(name, sa, sb, mode))
    a, b = sample(rng, spec, [sa, sb])
    if mode == "both":
        tape = check_tape(f, [a, b], seed=seed_of(name, sa, sb, 1))
    elif mode == "const_b":
        tape = check_tape(lambda x: f(x, b), [a], seed=seed_of(name, sa, sb, 2))
    else:
        tape = check_tape(lambda x: f(a, x), [b], seed=seed_of(name, sa, sb, 3))
    assert spec.code in tape.op_codes()


@pytest.mark.parametrize("name", list(BINARY_CASES))
@pytest.mark.parametrize("scalar_side", ["left", "right"])
def test_binary_python_scalar(name, scalar_side):
    """A Python float operand (a constant parameter or a constant operand)."""
    spec = ops.BY_NAME[name]
    rng = np.random.default_rng(seed_of(name, scalar_side))
    x, c = sample(rng, spec, [(2, 3), ()])
    c = float(c)
    for _, f in BINARY_CASES[name]:
        g = (lambda z: f(c, z)) if scalar_side == "left" else (lambda z: f(z, c))
        check_tape(g, [x], seed=seed_of(name, scalar_side, 1))


def _binary_complex_params():
    for p in _complex_params(BINARY, 2):
        yield p


@pytest.mark.parametrize(("name", "f"), list(_binary_complex_params()))
def test_binary_complex_step(name, f):
    spec = ops.BY_NAME[name]
    rng = np.random.default_rng(seed_of(name, "cs2"))
    a, b = sample(rng, spec, [(2, 3), (3,)])
    va, vb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    _, jv = adsim.jvp(f, (a, b), (va, vb))
    assert_close(jv, complex_step(f, [a, b], [va, vb]), rtol=1e-12, atol=1e-14,
                 what=f"{name} J v vs complex step")


def test_same_operand_twice():
    """x * x, x / x, x - x: both operands are the same slot."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 2.0, size=4)
    for f in (lambda z: z * z, lambda z: z / z + z, lambda z: z - z + z ** z, lambda z: np.hypot(z, z)):
        check_tape(f, [x], seed=6)


# ------------------------------------------------- the other opcodes

A43 = np.random.default_rng(11).standard_normal((4, 3))
M4 = np.random.default_rng(12).standard_normal((4, 4)) + 4.0 * np.eye(4)


def _scatter_program(x):
    y = np.zeros_like(x, shape=(6,))
    y[1:5] = x
    y[2] = x[0] ** 2          # overwrite an element written before
    y[0] += x[3]
    return y * y


def _compare_program(x):
    if np.sum(x) > 0:
        return np.sin(x) * 2.0
    return np.cos(x)


PROGRAMS = {
    # name: (function, input shape, sampling interval)
    "COMPARE": (_compare_program, (4,), (0.1, 2.0)),
    "ARGEXT": (lambda x: np.max(x, axis=1) * np.min(x, axis=0)[:2], (2, 3), (-2.0, 2.0)),
    "COPY": (lambda x: np.reshape(x, (3, 2)) ** 2, (2, 3), (-2.0, 2.0)),
    "FILL": (lambda x: np.concatenate([np.ones(2), x]) * np.sum(x), (3,), (-2.0, 2.0)),
    "BROADCAST": (lambda x: np.broadcast_to(x, (3, 4)) * x[None, :] ** 2, (4,), (-2.0, 2.0)),
    "SUM": (lambda x: np.sum(x ** 3, axis=0), (3, 2), (-2.0, 2.0)),
    "CUMSUM": (lambda x: np.cumsum(x * x), (5,), (-2.0, 2.0)),
    "GATHER": (lambda x: x[[2, 0, 0, 1]] ** 2 * x[::-1][:4], (5,), (-2.0, 2.0)),
    "SCATTER": (_scatter_program, (4,), (-2.0, 2.0)),
    "WHERE": (lambda x: np.where(x > 0, x ** 2, np.sin(x)), (6,), (-2.0, 2.0)),
    "MATMUL": (lambda x: (x @ A43) ** 2, (4,), (-2.0, 2.0)),
    "CALLBACK": (lambda x: np.linalg.solve(M4 + 0.1 * x[:, None] * x[None, :], x), (4,), (-1.0, 1.0)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_of_opcode(name):
    f, shape, (lo, hi) = PROGRAMS[name]
    rng = np.random.default_rng(seed_of(name, "program"))
    x = rng.uniform(lo, hi, size=shape)
    if name == "WHERE":
        x[np.abs(x) < 0.05] = 0.5
    tape = check_tape(f, [x], seed=seed_of(name, "program", 1))
    assert ops.BY_NAME[name].code in tape.op_codes()


# ------------------------------------------------------ table consistency

TESTED = set(UNARY_CASES) | {"STOP_GRADIENT"} | set(BINARY_CASES) | set(PROGRAMS)
FAMILY_END = {"unary": Opcode.UNARY_END, "binary": Opcode.BINARY_END, "branch": Opcode.BRANCH_END,
              "structural": Opcode.STRUCTURAL_END, "linalg": Opcode.LINALG_END,
              "callback": Opcode.CALLBACK_END}


def test_every_opcode_has_a_table_row_and_a_test_spec():
    names = [op.name for op in Opcode if not op.name.endswith("_END")]
    assert [n for n in names if n not in ops.BY_NAME] == [], "opcodes without a row in adsim/ops.py"
    assert [n for n in names if n not in TESTED] == [], "opcodes without a test spec"
    assert [n for n in names if n in UNARY_CASES and not UNARY_CASES[n]] == []


def test_every_table_row_has_an_opcode_in_its_family_range():
    assert len(ops.BY_NAME) == len(ops.TABLE)
    ends = sorted(FAMILY_END.values())
    for spec in ops.TABLE:
        code = Opcode[spec.name]
        end = FAMILY_END[spec.family]
        start = max([e for e in ends if e < end], default=0)
        assert start < code < end, spec.name
        assert ops.BY_CODE[int(code)] is spec
        assert spec.hessian in (ops.ZERO, ops.LINEAR, ops.BILINEAR, ops.NONLINEAR)
        lo, hi = spec.domain
        assert lo < hi


def test_hessian_class_matches_second_derivatives():
    """LINEAR and ZERO unary ops have H v = 0 everywhere; NONLINEAR ones do not."""
    rng = np.random.default_rng(21)
    for name, cases in UNARY_CASES.items():
        spec = ops.BY_NAME[name]
        (x,) = sample(rng, spec, [(4,)])
        label, f = cases[0]
        hv = adsim.hvp(lambda z: np.sum(f(z)), x, np.ones(4))
        if spec.hessian in (ops.LINEAR, ops.ZERO):
            assert np.all(hv == 0.0), name
        else:
            assert np.any(hv != 0.0), name


def test_numpy_callables_record_their_opcode():
    """Every NumPy callable listed in a unary/binary row records that row's op."""
    rng = np.random.default_rng(22)
    for spec in UNARY + BINARY:
        for f in spec.numpy:
            xs = sample(rng, spec, [(3,)] * (1 if spec.family == "unary" else 2))
            tape = adsim.record(f, *xs)
            assert spec.code in tape.op_codes(), (spec.name, f.__name__)
