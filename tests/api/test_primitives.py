"""Table-driven tests of every primitive (one row of adsim.ops.TABLE each).

Elementwise ops are sampled at random points of their table domain, on
scalars and arrays, with broadcasting (size-1 and lower-rank operands) and
with constant operands on either side. Each case runs the battery of
``fdcheck.check_tape``: value against NumPy; tangents, adjoints and dense
Jacobians against central differences, each in one and in vector mode; the
dot-product test; Hessian-vector products against differences of the
gradient. Ops NumPy evaluates on complex numbers are also checked against
the complex step. The other opcodes have one program each that must record
them, checked the same way (tests/opcases.py holds all these specs;
tests/test_ops_table.py checks that every opcode has one).
"""
import zlib

import numpy as np
import pytest

import adsim
from adsim import ops
from fdcheck import assert_close, check_tape, complex_step
from opcases import BINARY, BINARY_CASES, NOT_HOLOMORPHIC, PROGRAMS, UNARY, UNARY_CASES, sample


def seed_of(*parts):
    """A fixed seed per test case (independent of test order)."""
    return zlib.crc32(repr(parts).encode())


# ------------------------------------------------------------------ unary

UNARY_SHAPES = [(), (1,), (5,), (2, 3)]


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
    assert_close(jv, complex_step(f, [x], [v]), rtol=1e-12, atol=1e-14,
                 what=f"{name} J v vs complex step")


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


@pytest.mark.parametrize(("name", "f"), list(_complex_params(BINARY, 2)))
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

@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_of_opcode(name):
    f, shape, (lo, hi) = PROGRAMS[name]
    rng = np.random.default_rng(seed_of(name, "program"))
    x = rng.uniform(lo, hi, size=shape)
    if name == "WHERE":
        x[np.abs(x) < 0.05] = 0.5
    tape = check_tape(f, [x], seed=seed_of(name, "program", 1))
    assert ops.BY_NAME[name].code in tape.op_codes()
