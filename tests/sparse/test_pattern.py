"""Jacobian and Hessian sparsity patterns read from tapes.

Patterns must cover every numerical nonzero of the dense derivatives
(``adsim.jacobian``, ``adsim.hessian``) and be exact on structured problems.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adsim
from adsim._opcodes import Opcode
from adsim.sparse.api import hessian_sparsity, jacobian_sparsity
from adsim.sparse.pattern import hessian_pattern, iterate_pattern, jacobian_pattern


# ---------------------------------------------------------------- helpers
def tridiagonal(n):
    return sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1])


def stencil_2d(k):
    eye = sp.eye_array(k)
    return sp.kron(eye, tridiagonal(k)) + sp.kron(tridiagonal(k), eye)


def arrowhead(n):
    dense = np.eye(n, dtype=bool)
    dense[0, :] = dense[:, 0] = True
    return dense


def dense(pattern):
    return np.asarray(pattern.toarray(), dtype=bool)


def assert_covers(pattern, matrix):
    """Every numerical nonzero of ``matrix`` is in ``pattern``."""
    matrix = np.asarray(matrix).reshape(pattern.shape)
    missing = np.argwhere((matrix != 0) & ~dense(pattern))
    assert missing.size == 0, f"entries {missing[:5].tolist()} are nonzero but not in the pattern"


def assert_canonical(pattern):
    assert isinstance(pattern, sp.csr_array)
    assert pattern.dtype == bool
    assert pattern.has_sorted_indices
    copy = pattern.copy()
    copy.sum_duplicates()
    assert copy.nnz == pattern.nnz


def check_jacobian(F, x, exact=True):
    P = jacobian_sparsity(F, x)
    assert_canonical(P)
    J = adsim.jacobian(F)(x)
    assert_covers(P, J)
    if exact:
        np.testing.assert_array_equal(dense(P), np.asarray(J).reshape(P.shape) != 0)
    return P


def check_hessian(f, x, exact=True):
    P = hessian_sparsity(f, x)
    assert_canonical(P)
    assert (P != P.T).nnz == 0
    H = adsim.hessian(f)(x).reshape(P.shape)
    assert_covers(P, H)
    if exact:
        np.testing.assert_array_equal(dense(P), H != 0)
    return P


# ---------------------------------------------------------------- structured problems
def bratu1d(u):
    h = 1.0 / (u.shape[0] + 1)
    return np.diff(np.pad(u, 1), 2) + h * h * np.exp(u)


def bratu2d(u, k):
    U = u.reshape(k, k)
    P = np.pad(U, 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return (lap + 0.1 * np.exp(U)).reshape(-1)


def arrow(x):
    return np.concatenate([np.sum(x ** 2, keepdims=True), x[1:] * x[0] + np.sin(x[1:])])


def test_tridiagonal_jacobian_is_exact():
    x = np.linspace(0.1, 0.9, 12)
    P = check_jacobian(bratu1d, x)
    np.testing.assert_array_equal(dense(P), tridiagonal(12).toarray() != 0)


def test_five_point_stencil_jacobian_is_exact():
    k = 6
    x = np.random.default_rng(0).uniform(0.1, 0.9, k * k)
    P = check_jacobian(lambda u: bratu2d(u, k), x)
    np.testing.assert_array_equal(dense(P), stencil_2d(k).toarray() != 0)


def test_arrowhead_jacobian_is_exact():
    x = np.random.default_rng(1).uniform(0.1, 0.9, 9)
    P = check_jacobian(arrow, x)
    np.testing.assert_array_equal(dense(P), arrowhead(9))


def test_chained_rosenbrock_hessian_is_tridiagonal():
    f = lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)  # noqa: E731
    x = np.random.default_rng(2).uniform(-1, 1, 10)
    P = check_hessian(f, x)
    np.testing.assert_array_equal(dense(P), tridiagonal(10).toarray() != 0)


def test_stencil_energy_hessian_is_five_point():
    k = 5

    def energy(u):
        U = u.reshape(k, k)
        return (np.sum(np.diff(U, axis=0) ** 2) + np.sum(np.diff(U, axis=1) ** 2)
                + np.sum(np.exp(U)))
    x = np.random.default_rng(3).uniform(-1, 1, k * k)
    P = check_hessian(energy, x)
    np.testing.assert_array_equal(dense(P), stencil_2d(k).toarray() != 0)


def test_arrowhead_hessian_is_exact():
    f = lambda x: np.sum(x[0] * x[1:] ** 2) + np.sum(np.cos(x))  # noqa: E731
    x = np.random.default_rng(4).uniform(0.1, 0.9, 8)
    P = check_hessian(f, x)
    np.testing.assert_array_equal(dense(P), arrowhead(8))


def test_linear_parts_add_no_hessian_interactions():
    f = lambda x: np.sum(3.0 * x) + x[0] * x[1] + np.sum(np.cumsum(x) * 2.0)  # noqa: E731
    P = check_hessian(f, np.ones(5))
    assert sorted(zip(*P.nonzero())) == [(0, 1), (1, 0)]


def test_dead_nonlinear_ops_add_nothing():
    def f(x):
        unused = np.exp(x[0] * x[3])           # never reaches the output
        y = x * 1.0
        y[2] = np.sin(x[2] * x[4])             # overwritten below: dead
        y[2] = 0.5
        del unused
        return np.sum(y ** 2)
    P = check_hessian(f, np.linspace(0.2, 0.8, 5))
    np.testing.assert_array_equal(dense(P), np.diag([1, 1, 0, 1, 1]).astype(bool))


# ---------------------------------------------------------------- op by op
RNG = np.random.default_rng(7)
CONST = RNG.standard_normal((5, 6)) * (RNG.uniform(size=(5, 6)) < 0.4)


def _scatter(x):
    y = np.zeros_like(x)
    y[1:4] = x[:3] * x[2]
    y[2] = x[5]
    y[[0, 0]] = np.array([1.0, 2.0]) * x[4]
    return y + x[::-1]


def _scalar_loop(x):
    y = np.zeros_like(x, shape=(40,))
    for i in range(1, 5):
        y[i] = x[i - 1] * x[i] + y[i - 1]
    y[7] = y[3] * 2.0
    y[30:33] = x[:3]
    return y


OPS = {
    "unary": (lambda x: np.exp(np.sin(x[::-1])) * 2.0 + np.sqrt(x), True),
    "broadcast": (lambda x: (x.reshape(2, 3)[:, None, :] * x.reshape(2, 3)[None, :, :]).ravel(),
                  True),
    "scalar_broadcast": (lambda x: x * x[0] + x[1] ** 2, True),
    "sum_axis": (lambda x: np.sum(x.reshape(2, 3), axis=0) * x[:3], True),
    "mean": (lambda x: x - np.mean(x), True),
    "cumsum": (lambda x: np.cumsum(x.reshape(2, 3), axis=1).ravel() ** 2, True),
    # a mask the replay reads: either side's pattern, a superset at any one point
    "where": (lambda x: np.where(x > 0.5, x ** 2, np.sin(x[::-1])), False),
    # a plain mask is a branch of the recording: its side's pattern exactly
    "where_plain": (lambda x: np.where(np.asarray(x > 0.5), x ** 2, np.sin(x[::-1])), True),
    # sides and extrema chosen at replay: either side's pattern, each fiber's
    # for a reduction (a superset at any one point)
    "maximum": (lambda x: np.maximum(x, x[::-1]) * x, False),
    "clip": (lambda x: np.clip(x, 0.3, 0.7) ** 3, False),
    "abs": (lambda x: np.abs(x - 0.5) * x[0], True),
    "max_reduction": (lambda x: np.max(x.reshape(2, 3), axis=1) * x[:2], False),
    "matmul_const": (lambda x: CONST @ x, True),
    "matmul_const_right": (lambda x: x[:5] @ CONST, True),
    "matmul_active": (lambda x: (x.reshape(2, 3) @ x.reshape(3, 2)).ravel(), True),
    "outer": (lambda x: np.outer(x[:3], x[3:]).ravel(), True),
    "dot": (lambda x: np.atleast_1d(x[:3] @ x[3:]), True),
    "einsum": (lambda x: np.einsum("ij,jk->ik", x.reshape(2, 3), x.reshape(3, 2)).ravel(), True),
    "scatter": (_scatter, False),               # y[4] * ... multiplies a structural zero
    "scalar_loop": (_scalar_loop, True),
    "pad_concat": (lambda x: np.concatenate([np.pad(x[:2], 2) ** 2, np.cos(x), x[4:] / x[:2]]),
                   True),
    "transpose": (lambda x: (x.reshape(2, 3).T * x.reshape(3, 2)).ravel(), True),
    "prod": (lambda x: np.atleast_1d(np.prod(x[:4])), True),
    "div_pow": (lambda x: np.concatenate([x[:3] / x[3:], x[:3] ** x[3:], 2.0 / x]), True),
    "zero_derivative": (lambda x: adsim.stop_gradient(x) * x[0] + np.sign(x) + x ** 0, True),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_patterns_op_by_op(name):
    F, exact = OPS[name]
    x = np.random.default_rng(8).uniform(0.1, 0.9, 6)
    check_jacobian(F, x, exact)
    check_hessian(lambda z: np.sum(np.sin(F(z))), x, exact)


def test_every_opcode_has_a_rule():
    from adsim.sparse.pattern import DomainSweep, Liveness, Program
    names = {op.name for op in Opcode if not op.name.endswith("_END")}
    tape = adsim.record(lambda x: x * 1.0, np.ones(2))
    program = Program(tape)
    program.codes = [int(Opcode[name]) for name in sorted(names)]
    assert set(DomainSweep(program).rules) == set(program.codes)
    assert set(Liveness(program, set()).rules) == set(program.codes)


def test_several_inputs_and_selected_columns():
    F = lambda x, y: x[1:] * y[:-1] + np.sum(y)  # noqa: E731
    tape = adsim.record(F, np.ones(4), np.ones(4))
    both = dense(jacobian_pattern(tape))
    assert both.shape == (3, 8)
    np.testing.assert_array_equal(both[:, :4], np.eye(3, 4, 1, dtype=bool))
    assert both[:, 4:].all()
    np.testing.assert_array_equal(dense(jacobian_pattern(tape, [1])), both[:, 4:])
    P = jacobian_sparsity(F, np.ones(4), np.ones(4), argnum=0)
    np.testing.assert_array_equal(dense(P), both[:, :4])


def test_constant_output_has_an_empty_pattern():
    P = jacobian_sparsity(lambda x: np.ones(3), np.ones(4))
    assert P.shape == (3, 4) and P.nnz == 0
    assert hessian_sparsity(lambda x: np.sum(2.0 * x), np.ones(4)).nnz == 0


def test_hessian_of_a_vector_function_is_the_union():
    F = lambda x: np.concatenate([x[:1] * x[1:2], np.exp(x[2:])])  # noqa: E731
    P = hessian_sparsity(F, np.ones(4))
    expected = np.diag([0, 0, 1, 1]).astype(bool)
    expected[0, 1] = expected[1, 0] = True
    np.testing.assert_array_equal(dense(P), expected)


def test_scalar_code_writing_a_large_array_stays_linear():
    n = 3000

    def F(x):
        y = np.zeros_like(x)
        for i in range(1, n - 1, 7):
            y[i] = x[i - 1] * x[i + 1]
        return y * 2.0
    P = jacobian_sparsity(F, np.ones(n))
    rows = np.arange(1, n - 1, 7)
    expected = sp.csr_array((np.ones(2 * rows.size, dtype=bool),
                             (np.repeat(rows, 2), np.stack([rows - 1, rows + 1], 1).ravel())),
                            shape=(n, n))
    assert (P != expected).nnz == 0


# ---------------------------------------------------------------- callbacks
def _square_primitive():
    return adsim.primitive(lambda v: v ** 2, jvp=lambda a, out, t: 2 * a[0] * t[0],
                           vjp=lambda a, out, w: (2 * a[0] * w,))


def test_callback_without_pattern_is_dense():
    square = _square_primitive()
    F = lambda x: square(x[:3]) + x[3:]  # noqa: E731
    P = check_jacobian(F, np.linspace(0.1, 0.6, 6), exact=False)
    assert dense(P)[:, :3].all()
    np.testing.assert_array_equal(dense(P)[:, 3:], np.eye(3, dtype=bool))


def test_callback_pattern_protocol():
    """A callback object's ``pattern(arg_patterns)`` gives its result's domains."""
    square = _square_primitive()

    class Elementwise:                        # wraps the recorded Application
        def __init__(self, app):
            self.app = app

        def __getattr__(self, name):
            return getattr(self.app, name)

        def pattern(self, arg_patterns):
            return arg_patterns[0]

    def F(x):
        y = square(x[:3])
        tape = x.tape
        tape.callbacks[-1] = Elementwise(tape.callbacks[-1])
        return y * x[3:]
    x = np.linspace(0.1, 0.6, 6)
    P = check_jacobian(F, x)
    np.testing.assert_array_equal(dense(P), np.hstack([np.eye(3), np.eye(3)]).astype(bool))
    tape = adsim.record(lambda z: np.sum(F(z)), x)
    H = dense(hessian_pattern(tape))
    np.testing.assert_array_equal(H, np.kron([[1, 1], [1, 0]], np.eye(3)).astype(bool))


def test_iterate_pattern_reaches_a_fixed_point():
    step = sp.csr_array(np.eye(4, k=1, dtype=bool) | np.eye(4, dtype=bool))   # z_i <- z_i, z_{i+1}
    Z = iterate_pattern(step, None, sp.eye_array(4, dtype=bool), None, 100)
    np.testing.assert_array_equal(Z.toarray(), np.triu(np.ones((4, 4), dtype=bool)))
    shift = sp.csr_array(np.eye(3, k=1, dtype=bool))                          # z_i <- z_{i+1}
    Z = iterate_pattern(shift, sp.csr_array(np.ones((3, 1), dtype=bool)),
                        sp.eye_array(3, 4, dtype=bool), sp.csr_array(np.eye(1, 4, 3, dtype=bool)),
                        2)
    np.testing.assert_array_equal(Z.toarray().astype(int),
                                  [[0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 1]])


# ---------------------------------------------------------------- random programs
def _random_program(draw_ops, seed, n):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    C = rng.standard_normal((n, n)) * (rng.uniform(size=(n, n)) < 2.0 / n)

    def F(x):
        vs = [x]
        for op in draw_ops:
            a, b = vs[op[1] % len(vs)], vs[op[2] % len(vs)]
            kind = op[0]
            if kind == "sin":
                v = np.sin(a)
            elif kind == "exp_shift":
                v = np.exp(0.3 * np.roll(a, op[3] % n))
            elif kind == "mul":
                v = a * b[perm]
            elif kind == "div":
                v = a / (2.0 + b ** 2)
            elif kind == "add_scalar":
                v = a + a[op[3] % n] * b
            elif kind == "matmul":
                v = C @ a
            elif kind == "cumsum":
                v = np.cumsum(a.reshape(2, n // 2), axis=1).ravel()
            elif kind == "sum":
                v = a * np.repeat(np.sum(b.reshape(2, n // 2), axis=1), n // 2)
            elif kind == "where":
                v = np.where(perm % 2 == 0, a * b, np.cos(b))
            elif kind == "setitem":
                v = a * 1.0
                v[op[3] % n] = b[0] * b[-1]
            else:                                  # "maximum"
                v = np.maximum(a, b[::-1]) * 1.5
            vs.append(v)
        return vs[-1] + vs[-2] * 0.5
    return F


KINDS = ["sin", "exp_shift", "mul", "div", "add_scalar", "matmul", "cumsum", "sum", "where",
         "setitem", "maximum"]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 20), st.integers(0, 20),
                          st.integers(0, 50)), min_size=1, max_size=7),
       st.integers(0, 2 ** 16))
def test_random_programs_patterns_cover_derivatives(draw_ops, seed):
    n = 8
    F = _random_program(draw_ops, seed, n)
    x = np.random.default_rng(seed + 1).uniform(-0.9, 0.9, n)
    check_jacobian(F, x, exact=False)
    check_hessian(lambda z: np.sum(np.sin(F(z))), x, exact=False)
