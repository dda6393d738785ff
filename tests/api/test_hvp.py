"""Hessian-vector products (reverse on forward) through the functional API.

Every case checks ``adsim.hvp`` against

* central differences of ``adsim.grad`` (fourth-order stencil);
* v'Hv against fourth-order second differences of f evaluated on plain
  NumPy arrays, which involve no adsim code at all;
* the dense ``adsim.hessian``, and k directions at once (vector mode)
  against k single calls.

The cases cover every row of ``adsim.ops.TABLE`` (elementwise ops sampled on
their table domains, the other opcodes by small programs that record them)
and random programs (hypothesis). Extended Rosenbrock and the Helmholtz free
energy are compared with analytic Hessians; then the API around hvp
(grad_and_hvp, hessian, hessp, hvp_operator, laplacian), recording again when
a branch changes, and user primitives whose vjp is written in NumPy.
"""
import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from scipy.sparse.linalg import LinearOperator, eigsh

import adsim
from adsim import ops
from fdcheck import assert_close, central, distinct
from opcases import FD_KINKS, NONSMOOTH, S34, branch_max_rows, written_copy

# ---------------------------------------------------------------- checkers


def second_difference(f, x, v, h=1e-3):
    """v'H v from values of f alone (fourth-order central second difference)."""
    def at(t):
        return float(f(x + t * v))
    return (16.0 * (at(h) + at(-h)) - (at(2 * h) + at(-2 * h)) - 30.0 * at(0.0)) / (12.0 * h * h)


def check_hvp(f, x, seed, rtol=1e-7, k=3):
    """Check adsim.hvp(f, x, .) as the module docstring says; returns H v."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x, dtype=float)
    v = rng.standard_normal(x.shape)
    hv = adsim.hvp(f, x, v)
    assert hv.shape == x.shape
    fd = central(adsim.grad(f), [x], [v])
    scale = 1.0 + np.max(np.abs(fd))
    assert_close(hv, fd, rtol, rtol * scale, "H v vs central differences of the gradient")
    want = second_difference(f, x, v)
    tol = 1e-6 * (1.0 + abs(want) + abs(float(f(x))))
    got = float(np.sum(v * hv))
    assert abs(got - want) <= tol, f"v'Hv = {got!r}, second differences of f give {want!r}"
    H = adsim.hessian(f)(x)
    assert H.shape == x.shape + x.shape
    Hm = H.reshape(x.size, x.size)
    assert np.array_equal(Hm, Hm.T)
    assert_close(hv.reshape(-1), Hm @ v.reshape(-1), 1e-12, 1e-12 * scale, "H v vs dense Hessian")
    V = rng.standard_normal(x.shape + (k,))
    HV = adsim.hvp(f, x, V)
    assert HV.shape == x.shape + (k,)
    for j in range(k):
        assert_close(HV[..., j], adsim.hvp(f, x, V[..., j]), 1e-13, 1e-13 * scale,
                     "one direction of vector mode vs a single call")
    return hv


def opcodes_of(f, x):
    return {int(c) for c in adsim.record(f, np.asarray(x, dtype=float)).op_codes()}


# ------------------------------------------------------- every primitive family

C_OPS = {"ADD_C": lambda x, c: x + c, "MUL_C": lambda x, c: c * x, "RSUB_C": lambda x, c: c - x,
         "RDIV_C": lambda x, c: c / x, "POW_C": lambda x, c: x ** c, "RPOW_C": lambda x, c: c ** x}
UNARY = [s for s in ops.TABLE if s.family == "unary"]
BINARY = [s for s in ops.TABLE if s.family == "binary" and s.numpy]   # comparisons: PROGRAMS
W5 = np.array([0.7, -1.3, 0.4, 1.1, -0.6])
C5 = np.array([0.3, 0.5, -0.2, 0.8, 0.1])

def unary_callable(spec):
    if spec.name == "STOP_GRADIENT":
        return adsim.stop_gradient
    if spec.numpy:
        return spec.numpy[0]
    op, c = C_OPS[spec.name], spec.param
    return lambda x: op(x, c)


def sample(rng, spec, shapes):
    lo, hi = spec.domain
    kink = FD_KINKS.get(spec.name)
    for _ in range(1000):
        xs = [rng.uniform(lo, hi, size=s) for s in shapes]
        if kink is None or np.min(kink(*xs)) > 0.08:
            return xs
    raise AssertionError("no sample away from the kinks")


def objective(y, x):
    """A scalar of an op's result y and its input x with a dense Hessian: the
    op's first and second derivatives both matter."""
    return np.sum(W5 * y) + 0.5 * np.sum(C5 * y) ** 2 + np.sum(y * x)


@pytest.mark.parametrize("spec", UNARY, ids=[s.name for s in UNARY])
def test_hvp_unary(spec):
    g = unary_callable(spec)
    (x,) = sample(np.random.default_rng(spec.code), spec, [(5,)])
    f = lambda z: objective(g(z), z)  # noqa: E731
    assert spec.code in opcodes_of(f, x)
    if spec.name == "STOP_GRADIENT":
        # y = stop(x) is a constant at every order: f is linear in x, H = 0
        # (differences of the gradient y = x would see the identity instead)
        assert np.array_equal(adsim.hessian(f)(x), np.zeros((5, 5)))
        return
    check_hvp(f, x, seed=spec.code)


BINARY_LAYOUTS = {          # shapes of the operands and which are constants
    "both": ((5,), (5,), ""),
    "broadcast": ((2, 5), (5,), ""),
    "scalar": ((5,), (), ""),
    "const_b": ((5,), (5,), "b"),
    "const_a": ((5,), (5,), "a"),
}


@pytest.mark.parametrize("layout", list(BINARY_LAYOUTS))
@pytest.mark.parametrize("spec", BINARY, ids=[s.name for s in BINARY])
def test_hvp_binary(spec, layout):
    sa, sb, const = BINARY_LAYOUTS[layout]
    rng = np.random.default_rng([spec.code, len(layout)])
    a, b = sample(rng, spec, [sa, sb])
    op = spec.numpy[0]
    if const == "b":
        f, x = (lambda z: objective(op(z, b), z)), a
    elif const == "a":
        f, x = (lambda z: objective(op(a, z), z)), b
    else:
        na = a.size

        def f(z):
            za, zb = np.reshape(z[:na], sa), np.reshape(z[na:], sb)
            return objective(op(za, zb), za[-1])
        x = np.concatenate([a.ravel(), np.ravel(b)])
    assert spec.code in opcodes_of(f, x)
    check_hvp(f, x, seed=spec.code)


A43 = np.random.default_rng(11).standard_normal((4, 3))
M4 = np.random.default_rng(12).standard_normal((4, 4)) + 4.0 * np.eye(4)


def _compare(x):
    if np.sum(x) > 0:
        return np.sum(np.sin(x) * x ** 2)
    return np.sum(np.cos(x))


def _scatter(x):
    y = np.zeros_like(x, shape=(6,))
    y[1:5] = x * x
    y[2] = x[0] ** 3          # overwrite an element written before
    y[0] += x[3] * x[1]
    return np.sum(np.exp(0.3 * y) * np.pad(x, 1, mode="constant"))


# opcode name: (scalar program, input shape, how to sample the input)
MASK6 = np.array([True, False, False, True, True, False])      # a plain mask: WHERE


def _scatter_at_sum(x):
    u = x ** 2
    i = np.floor(np.abs(x) * 2.0).astype(int) % 5
    u[i] = np.sin(x) * x
    np.add.at(u, i[::-1], x ** 3)
    return np.sum(u ** 2 * x)


PROGRAMS = {
    "COMPARE": (_compare, (4,), (0.1, 2.0)),
    "ARGEXT": (lambda X: np.sum(branch_max_rows(X) ** 3) + np.min(X) * np.sum(X * X), (2, 3),
               "distinct"),
    # (a copy written into: one only read is optimised away)
    "COPY": (lambda X: np.sum(np.reshape(written_copy(X), (3, 2)) ** 3 @ np.array([1.0, -2.0])),
             (2, 3), (-2.0, 2.0)),
    "FILL": (lambda x: np.sum(np.concatenate([np.ones(2), x]) ** 3) * np.sum(np.ones_like(x) * x),
             (3,), (-2.0, 2.0)),
    "BROADCAST": (lambda x: np.sum(np.sin(np.broadcast_to(x, (3, 4)) * x[:, None][:3])), (4,),
                  (-2.0, 2.0)),
    "SUM": (lambda X: np.sum(np.sum(X ** 3, axis=0) ** 2) + np.mean(X) ** 3, (3, 2), (-2.0, 2.0)),
    "CUMSUM": (lambda x: np.sum(np.cumsum(x * x) ** 2), (5,), (-2.0, 2.0)),
    "GATHER": (lambda x: np.sum(x[[2, 0, 0, 1]] ** 2 * x[::-1][:4])
               + np.sum(np.transpose(np.reshape(x[:4], (2, 2))) * np.reshape(x[1:], (2, 2)) ** 2),
               (5,), (-2.0, 2.0)),
    "SCATTER": (_scatter, (4,), (-2.0, 2.0)),
    "ARGEXT_AT": (lambda X: np.sum(X[:, np.argmax(X, axis=0)] ** 3) * X[0, np.argmin(X[1])]
                  + np.sum(np.max(X, axis=1) ** 3) + np.min(X) * np.sum(X * X),
                  (2, 3), "distinct"),
    "SEARCH": (lambda x: np.sum(np.interp(x, np.linspace(-2.0, 2.0, 7), np.cos(np.arange(7.0)))
                                * x ** 2) + np.sum(np.digitize(x, [-1.0, 0.0, 1.0]) * x ** 3),
               (5,), (-1.9, 1.9)),
    "SCATTER_AT": (lambda x: _scatter_at_sum(x), (5,), (-2.0, 2.0)),
    "GATHER_AT": (lambda X: np.sum(X[:, np.floor(np.abs(X[0]) * 1.5).astype(int) % 3] ** 3 * X)
                  + np.sum(np.take(X, np.floor(X[1] + 2.0).astype(int) - 2, axis=1) ** 2 * X),
                  (2, 3), (-2.0, 2.0)),
    "WHERE": (lambda x: np.sum(np.where(MASK6, x ** 3, np.sin(x)) * x), (6,), "distinct"),
    "SELECT": (lambda x: np.sum(np.where(x > 0, x ** 3, np.sin(x)) * x), (6,), "distinct"),
    **{name: ((lambda op: lambda x: np.sum(np.where(op(x[:3], x[3:]), x[:3] ** 3,
                                                    np.sin(x[3:]) * x[:3])))(op),
              (6,), "distinct")
       for name, op in (("LESS", np.less), ("LESS_EQUAL", np.less_equal),
                        ("GREATER", np.greater), ("GREATER_EQUAL", np.greater_equal),
                        ("EQUAL", lambda a, b: np.equal(np.floor(a), np.floor(b))),
                        ("NOT_EQUAL", lambda a, b: np.not_equal(np.floor(a), np.floor(b))))},
    "MATMUL": (lambda X: np.sum((X @ X) ** 2) + np.sum(X @ A43[:3]) ** 2
               + np.einsum("ij,ij->", X, X) * np.sum(np.outer(X[0], X[1])), (3, 3), (-1.0, 1.0)),
    "SPMV": (lambda x: np.sum(np.sin(S34 @ x) ** 2) + np.sum(S34.T.tocsc() @ (x[:3] * x[1:])),
             (4,), (-1.0, 1.0)),
    "QUADFORM": (lambda x: np.tanh(x @ (M4 @ x)) + np.sin(x) @ x * (x @ (M4 + M4.T) @ x),
                 (4,), (-1.0, 1.0)),
    "CALLBACK": (lambda x: np.sum(np.linalg.solve(M4 + np.eye(4) * (x * x), x) ** 2), (4,),
                 (-1.0, 1.0)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_hvp_program_of_opcode(name):
    f, shape, interval = PROGRAMS[name]
    rng = np.random.default_rng(ops.BY_NAME[name].code)
    if interval == "distinct":
        x = distinct(rng, shape)
    else:
        x = rng.uniform(*interval, size=shape)
    assert ops.BY_NAME[name].code in opcodes_of(f, x)
    check_hvp(f, x, seed=ops.BY_NAME[name].code)


def test_every_opcode_is_covered():
    covered = {s.name for s in UNARY + BINARY} | set(PROGRAMS)
    assert covered == {s.name for s in ops.TABLE}


# --------------------------------------------------------------- random programs

SMOOTH_UNARY = [s for s in UNARY if s.name not in NONSMOOTH | {"STOP_GRADIENT"}]
SMOOTH_BINARY = [s for s in BINARY if s.name not in NONSMOOTH | {"ARCTAN2"}]


def into(domain, z):
    """Smoothly map z into the inner 90 % of an op's sampling domain."""
    lo, hi = domain
    return lo + (hi - lo) * (0.5 + 0.45 * np.tanh(z))


def build_program(steps, n):
    """A scalar function from a list of steps, each appending to a pool of
    arrays of shape (n,): a unary or binary op (arguments mapped into its
    domain), or a linear map."""
    M = np.random.default_rng(n).standard_normal((n, n)) / np.sqrt(n)
    linear = [lambda a, b: M @ a, lambda a, b: np.cumsum(a) / n, lambda a, b: a[::-1] - b,
              lambda a, b: np.sum(a) * b, lambda a, b: np.where(np.arange(n) % 2 == 0, a, b),
              lambda a, b: np.mean(a * b) + a]

    def f(x):
        pool = [x]
        for kind, which, i, j in steps:
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            if kind == "unary":
                spec = SMOOTH_UNARY[which % len(SMOOTH_UNARY)]
                pool.append(unary_callable(spec)(into(spec.domain, a)))
            elif kind == "binary":
                spec = SMOOTH_BINARY[which % len(SMOOTH_BINARY)]
                pool.append(spec.numpy[0](into(spec.domain, a), into(spec.domain, b)))
            else:
                pool.append(linear[which % len(linear)](a, b))
        return np.sum(np.sin(pool[-1]) * pool[len(pool) // 2]) + 0.1 * np.sum(pool[-1] ** 2)
    return f


step_strategy = st.tuples(st.sampled_from(["unary", "unary", "binary", "linear"]),
                          st.integers(0, 63), st.integers(0, 7), st.integers(0, 7))


@pytest.mark.slow
@seed(20240611)
@settings(max_examples=80, deadline=None)
@given(steps=st.lists(step_strategy, min_size=1, max_size=8), n=st.integers(1, 5),
       point=st.integers(0, 2 ** 16))
def test_hvp_random_programs(steps, n, point):
    f = build_program(steps, n)
    rng = np.random.default_rng(point)
    x = rng.uniform(-1.5, 1.5, n)
    check_hvp(f, x, seed=point, rtol=1e-6, k=2)
    u, v = rng.standard_normal((2, n))
    uhv, vhu = u @ adsim.hvp(f, x, v), v @ adsim.hvp(f, x, u)
    assert abs(uhv - vhu) <= 1e-11 * (abs(uhv) + abs(vhu) + 1.0), "u'Hv != v'Hu"


# -------------------------------------------------------------- analytic Hessians

def rosenbrock_chain(x):
    """sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 (scipy.optimize.rosen)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_chain_hvp(x, v):
    """The tridiagonal analytic Hessian times v."""
    d = np.zeros_like(x)
    d[:-1] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    d[1:] += 200.0
    off = -400.0 * x[:-1]
    hv = d * v
    hv[:-1] += off * v[1:]
    hv[1:] += off * v[:-1]
    return hv


def rosenbrock_pairs(x):
    """Extended Rosenbrock of Moré, Garbow and Hillstrom (ACM TOMS 7(1), 1981,
    problem 21): independent pairs (x_{2i-1}, x_{2i})."""
    odd, even = x[0::2], x[1::2]
    return np.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


def rosenbrock_pairs_hessian(x):
    n = x.size
    H = np.zeros((n, n))
    i = np.arange(0, n, 2)
    H[i, i] = 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
    H[i + 1, i + 1] = 200.0
    H[i, i + 1] = H[i + 1, i] = -400.0 * x[i]
    return H


def test_rosenbrock_chain_analytic():
    rng = np.random.default_rng(1)
    x = rng.uniform(-2.0, 2.0, 30)
    H = adsim.hessian(rosenbrock_chain)(x)
    assert_close(H, scipy.optimize.rosen_hess(x), 1e-14, 1e-11, "dense Hessian vs rosen_hess")
    v = rng.standard_normal(30)
    assert_close(adsim.hvp(rosenbrock_chain, x, v), rosenbrock_chain_hvp(x, v), 1e-13, 1e-10)
    check_hvp(rosenbrock_chain, x, seed=2)


def test_rosenbrock_chain_large():
    """hvp at n = 10^4 against the analytic tridiagonal product."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-2.0, 2.0, 10 ** 4)
    V = rng.standard_normal((10 ** 4, 2))
    HV = adsim.hvp(rosenbrock_chain, x, V)
    for j in range(2):
        assert_close(HV[:, j], rosenbrock_chain_hvp(x, V[:, j]), 1e-13, 1e-10)
    assert_close(adsim.hessp(rosenbrock_chain)(x, V[:, 0]), HV[:, 0], 0, 0)


def test_rosenbrock_pairs_analytic():
    x = np.random.default_rng(4).uniform(-2.0, 2.0, 12)
    assert_close(adsim.hessian(rosenbrock_pairs)(x), rosenbrock_pairs_hessian(x), 1e-14, 1e-11)
    check_hvp(rosenbrock_pairs, x, seed=5)


SQ2 = np.sqrt(2.0)
ALPHA, BETA, C8 = 1.0 + SQ2, 1.0 - SQ2, np.sqrt(8.0)


def helmholtz(x, A, b, RT=1.0):
    """Helmholtz free energy of a mixed fluid (Baydin et al., JMLR 18, 2018, Sec. 4)."""
    s = b @ x
    return (RT * np.sum(x * np.log(x / (1.0 - s)))
            - (x @ (A @ x)) / (C8 * s) * np.log((1.0 + ALPHA * s) / (1.0 + BETA * s)))


def _phi(s):
    """phi(s) = L(s) / (sqrt 8 s) with L = log((1 + a s)/(1 + b s)), and phi', phi''."""
    L = np.log((1.0 + ALPHA * s) / (1.0 + BETA * s))
    L1 = ALPHA / (1.0 + ALPHA * s) - BETA / (1.0 + BETA * s)
    L2 = -ALPHA ** 2 / (1.0 + ALPHA * s) ** 2 + BETA ** 2 / (1.0 + BETA * s) ** 2
    phi = L / (C8 * s)
    phi1 = L1 / (C8 * s) - L / (C8 * s * s)
    phi2 = L2 / (C8 * s) - 2.0 * L1 / (C8 * s * s) + 2.0 * L / (C8 * s ** 3)
    return phi, phi1, phi2


def helmholtz_gradient(x, A, b, RT=1.0):
    """With s = b'x, S = sum x, q = x'Ax: f = RT (sum x log x - S log(1 - s)) - q phi(s)."""
    s, S, Ax = b @ x, np.sum(x), A @ x
    phi, phi1, _ = _phi(s)
    mix = RT * (np.log(x) + 1.0 - np.log(1.0 - s) + S * b / (1.0 - s))
    return mix - (2.0 * phi * Ax + (x @ Ax) * phi1 * b)


def helmholtz_hessian(x, A, b, RT=1.0):
    s, S, Ax = b @ x, np.sum(x), A @ x
    phi, phi1, phi2 = _phi(s)
    one = np.ones_like(x)
    mix = RT * (np.diag(1.0 / x) + (np.outer(one, b) + np.outer(b, one)) / (1.0 - s)
                + S * np.outer(b, b) / (1.0 - s) ** 2)
    attraction = (2.0 * phi * A + 2.0 * phi1 * (np.outer(Ax, b) + np.outer(b, Ax))
                  + (x @ Ax) * phi2 * np.outer(b, b))
    return mix - attraction


def helmholtz_data(n, seed):
    rng = np.random.default_rng(seed)
    M = rng.uniform(0.0, 1.0, (n, n))
    b = rng.uniform(0.0, 1.0, n)
    x = rng.uniform(0.0, 1.0, n)
    return x * 0.5 / (b @ x), 0.5 * (M + M.T), b


@pytest.mark.parametrize("n", [1, 5, 40])
def test_helmholtz_analytic(n):
    x, A, b = helmholtz_data(n, seed=n)
    f = lambda z: helmholtz(z, A, b)  # noqa: E731
    H = helmholtz_hessian(x, A, b)
    # the analytic formulas first, against differences of each other (the
    # direction scaled by x: the 1/x_i terms need steps relative to x_i)
    v = x * np.random.default_rng(n).standard_normal(n)
    assert_close(central(lambda z: helmholtz_gradient(z, A, b), [x], [v], h=1e-4), H @ v, 1e-7,
                 1e-7 * np.max(np.abs(H)), "analytic Hessian vs differences of analytic gradient")
    assert_close(helmholtz_gradient(x, A, b), adsim.grad(f)(x), 1e-12, 1e-12)
    scale = np.max(np.abs(H))
    assert_close(adsim.hessian(f)(x), H, 1e-11, 1e-12 * scale, "Helmholtz Hessian")
    raw = adsim.hvp(f, x, np.eye(n))
    assert_close(raw, raw.T, 1e-13, 1e-13 * scale, "symmetry of the unsymmetrised products")
    assert_close(adsim.hvp(f, x, v), H @ v, 1e-11, 1e-12 * scale)


# ------------------------------------------------------------- the API around hvp

def test_hessian_is_symmetric_and_shaped():
    X = np.random.default_rng(6).uniform(0.2, 1.0, (2, 3))
    f = lambda Z: np.sum(np.log(Z @ Z.T + 1.0)) * np.sum(np.sqrt(Z))  # noqa: E731
    H = adsim.hessian(f)(X)
    assert H.shape == (2, 3, 2, 3)
    Hm = H.reshape(6, 6)
    assert np.array_equal(Hm, Hm.T)
    raw = adsim.hvp(f, X, np.eye(6).reshape(2, 3, 6)).reshape(6, 6)
    assert_close(raw, raw.T, 1e-13, 1e-13 * np.max(np.abs(raw)))
    check_hvp(f, X, seed=7)


@pytest.mark.parametrize("k", [1, 4, 9])
def test_vector_mode_equals_single_calls(k):
    x, A, b = helmholtz_data(9, seed=8)
    V = np.random.default_rng(k).standard_normal((9, k))
    HV = adsim.hvp(helmholtz, x, V, A, b)
    assert HV.shape == (9, k)
    for j in range(k):     # equal to rounding: one direction may use dgemv where k use dgemm
        assert_close(HV[:, j], adsim.hvp(helmholtz, x, V[:, j], A, b), 1e-13, 1e-13)


def test_grad_and_hvp_gradient_equals_grad():
    x, A, b = helmholtz_data(7, seed=9)
    rng = np.random.default_rng(9)
    want = adsim.grad(helmholtz)(x, A, b)
    for v in (rng.standard_normal(7), rng.standard_normal((7, 3))):
        g, hv = adsim.grad_and_hvp(helmholtz, x, v, A, b)
        assert g.shape == x.shape and hv.shape == v.shape
        assert_close(g, want, 1e-14, 1e-14, "gradient of grad_and_hvp vs grad")
        assert_close(hv, helmholtz_hessian(x, A, b) @ v, 1e-11, 1e-10)


def test_hvp_operator_is_a_symmetric_linear_operator():
    x, A, b = helmholtz_data(12, seed=10)
    op = adsim.hvp_operator(helmholtz, x, A, b)
    assert isinstance(op, LinearOperator)
    assert op.shape == (12, 12) and op.dtype == np.float64
    H = helmholtz_hessian(x, A, b)
    scale = np.max(np.abs(H))
    rng = np.random.default_rng(10)
    u, v = rng.standard_normal((2, 12))
    assert_close(op.matvec(v), H @ v, 1e-11, 1e-12 * scale)
    assert_close(op.rmatvec(v), op.matvec(v), 0, 0)
    assert_close(op.T @ v, op @ v, 0, 0)
    assert_close(op.H @ v, op @ v, 0, 0)
    assert abs(u @ (op @ v) - v @ (op @ u)) <= 1e-12 * scale * 12
    V = rng.standard_normal((12, 4))
    assert_close(op.matmat(V), H @ V, 1e-11, 1e-12 * scale)
    assert_close(op @ V, op.matmat(V), 0, 0)
    top = eigsh(op, k=1, which="LA", return_eigenvectors=False)[0]
    assert_close(top, np.linalg.eigvalsh(H)[-1], 1e-9, 0, "largest eigenvalue via eigsh")


def test_hvp_operator_of_a_matrix_argument():
    X = np.random.default_rng(11).uniform(-1.0, 1.0, (3, 2))
    f = lambda Z: np.sum(np.tanh(Z) ** 2) * np.sum(Z ** 3)  # noqa: E731
    op = adsim.hvp_operator(f, X)
    H = adsim.hessian(f)(X).reshape(6, 6)
    assert op.shape == (6, 6)
    assert_close(op @ np.eye(6), H, 1e-13, 1e-13 * np.max(np.abs(H)))


def test_hvp_operator_on_complex_vectors():
    """A real operator applied to a + ib gives H a + i H b (SciPy's solvers
    may pass complex vectors to a float64 operator)."""
    x, A, b = helmholtz_data(6, seed=13)
    op = adsim.hvp_operator(helmholtz, x, A, b)
    H = helmholtz_hessian(x, A, b)
    rng = np.random.default_rng(13)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    Z = rng.standard_normal((6, 2)) + 1j * rng.standard_normal((6, 2))
    scale = np.max(np.abs(H))
    for got, want in ((op @ z, H @ z), (op.matmat(Z), H @ Z)):
        assert np.iscomplexobj(got)
        assert_close(got.real, want.real, 1e-11, 1e-12 * scale)
        assert_close(got.imag, want.imag, 1e-11, 1e-12 * scale)


def test_hessian_and_laplacian_record_once_per_shape():
    def f(x, c):
        return c * np.sum(x ** 3)
    hessian, laplacian = adsim.hessian(f), adsim.laplacian(f)
    for i in range(3):
        x = np.arange(3.0) + i
        assert_close(hessian(x, 2.0), np.diag(12.0 * x), 1e-15, 0)
        assert_close(laplacian(x, 2.0), 12.0 * np.sum(x), 1e-15, 0)
    # one tape each, replayed at the new points (f has no side effect: a function that
    # changes its environment while recording is recorded on every call)
    assert hessian.tapes.recordings == laplacian.tapes.recordings == 1


def test_laplacian_equals_trace_of_the_hessian():
    x, A, b = helmholtz_data(10, seed=12)
    lap = adsim.laplacian(helmholtz)(x, A, b)
    assert isinstance(lap, float)
    assert_close(lap, np.trace(adsim.hessian(helmholtz)(x, A, b)), 1e-13, 0)
    assert_close(lap, np.trace(helmholtz_hessian(x, A, b)), 1e-11, 0)
    X = np.random.default_rng(12).uniform(-1.0, 1.0, (2, 3))
    f = lambda Z: np.sum(np.exp(Z) * Z ** 2)  # noqa: E731
    assert_close(adsim.laplacian(f)(X), np.sum(np.exp(X) * (X ** 2 + 4 * X + 2)), 1e-13, 0)


@pytest.mark.parametrize("method", ["trust-krylov", "Newton-CG"])
def test_hessp_drives_scipy_minimize(method):
    x0 = np.tile([-1.2, 1.0], 50)
    res = scipy.optimize.minimize(rosenbrock_pairs, x0, jac=adsim.grad(rosenbrock_pairs),
                                  hessp=adsim.hessp(rosenbrock_pairs), method=method,
                                  options={"xtol": 1e-10} if method == "Newton-CG" else {})
    assert res.success
    assert_close(res.x, np.ones(100), 0, 1e-6)


# ------------------------------------------------------ branches and primitives

def branchy(x):
    if x[0] > 0:
        return np.sum(np.sin(x) * x ** 2)
    return np.sum(np.exp(x) * x) + x[0] * x[1] ** 3


def branchy_hessian(x):
    if x[0] > 0:
        return np.diag(2.0 * np.sin(x) + 4.0 * x * np.cos(x) - x ** 2 * np.sin(x))
    H = np.diag(np.exp(x) * (x + 2.0))
    H[1, 1] += 6.0 * x[0] * x[1]
    H[0, 1] += 3.0 * x[1] ** 2
    H[1, 0] += 3.0 * x[1] ** 2
    return H


def test_hvp_follows_the_branch_between_calls():
    """The cached tape is recorded again when `if x[0] > 0` changes outcome."""
    rng = np.random.default_rng(13)
    v = rng.standard_normal(4)
    for first in (0.7, -0.4, 1.1, -1.3, -0.2, 0.3):
        x = np.concatenate([[first], rng.uniform(-1.0, 1.0, 3)])
        H = branchy_hessian(x)
        assert_close(adsim.hvp(branchy, x, v), H @ v, 1e-13, 1e-13)
        assert_close(adsim.hvp(branchy, x, np.eye(4)), H, 1e-13, 1e-13)
        assert_close(adsim.hessian(branchy)(x), H, 1e-13, 1e-13)
        assert_close(adsim.hessp(branchy)(x, v), H @ v, 1e-13, 1e-13)
        assert_close(adsim.laplacian(branchy)(x), np.trace(H), 1e-13, 1e-13)
        g, hv = adsim.grad_and_hvp(branchy, x, v)
        assert_close(g, adsim.grad(branchy)(x), 1e-14, 1e-14)
        assert_close(adsim.hvp_operator(branchy, x) @ v, H @ v, 1e-13, 1e-13)


def test_hvp_follows_piecewise_sides():
    """where/maximum/abs change side between calls of one cached function."""
    f = lambda x: np.sum(np.where(x > 0, x ** 3, -x ** 2) + np.maximum(x, 0.5) ** 2  # noqa: E731
                         + np.abs(x) ** 3)
    v = np.ones(3)
    for x in (np.array([0.7, -0.4, 0.9]), np.array([-0.7, 0.4, 0.2]), np.array([0.3, 0.8, -0.6])):
        d = np.where(x > 0, 6.0 * x, -2.0) + np.where(x > 0.5, 2.0, 0.0) + 6.0 * np.abs(x)
        assert_close(adsim.hvp(f, x, v), d, 1e-14, 1e-14)


M3 = np.array([[1.0, 0.4, -0.3], [0.2, -0.8, 0.5], [0.6, 0.1, 0.9], [-0.5, 0.7, 0.3]])


def _tanh_layer_value(x):
    return np.tanh(M3 @ x)


def _tanh_layer_jvp(args, out, tangents):
    (dx,) = tangents
    return (1.0 - out ** 2) * (M3 @ dx)


def _tanh_layer_vjp(args, out, out_adjoint):
    return (M3.T @ ((1.0 - out ** 2) * out_adjoint),)


tanh_layer = adsim.primitive(_tanh_layer_value, jvp=_tanh_layer_jvp, vjp=_tanh_layer_vjp,
                             name="tanh_layer")


def _scaled_exp_value(x, s):
    return s * np.exp(x)


def _scaled_exp_jvp(args, out, tangents):
    x, s = args
    dx, ds = tangents
    t = out * dx if dx is not None else 0.0
    return t + (np.exp(x) * ds if ds is not None else 0.0)


def _scaled_exp_vjp(args, out, out_adjoint):
    x, s = args
    return out * out_adjoint, np.exp(x) * out_adjoint


scaled_exp = adsim.primitive(_scaled_exp_value, jvp=_scaled_exp_jvp, vjp=_scaled_exp_vjp,
                             name="scaled_exp")


def test_hvp_through_a_user_primitive():
    """The primitive's vjp is NumPy code; hvp differentiates it by recording it.
    Compared with the same function written with adsim's own ops."""
    with_prim = lambda x: np.sum(tanh_layer(x) ** 2) * np.sum(x ** 2)  # noqa: E731
    plain = lambda x: np.sum(np.tanh(M3 @ x) ** 2) * np.sum(x ** 2)  # noqa: E731
    x = np.array([0.3, -0.8, 0.5])
    v = np.array([1.0, 0.5, -2.0])
    assert_close(adsim.hvp(with_prim, x, v), adsim.hvp(plain, x, v), 1e-13, 1e-14)
    assert_close(adsim.hessian(with_prim)(x), adsim.hessian(plain)(x), 1e-13, 1e-14)
    check_hvp(with_prim, x, seed=14)


def test_hvp_through_a_two_argument_primitive():
    """Both arguments active, and one of them constant."""
    both = lambda z: np.sum(scaled_exp(z[:3], z[3:]) ** 2)  # noqa: E731
    plain = lambda z: np.sum((z[3:] * np.exp(z[:3])) ** 2)  # noqa: E731
    z = np.array([0.2, -0.5, 0.4, 1.5, -0.7, 0.9])
    v = np.random.default_rng(15).standard_normal(6)
    assert_close(adsim.hvp(both, z, v), adsim.hvp(plain, z, v), 1e-13, 1e-14)
    check_hvp(both, z, seed=15)
    s = np.array([1.5, -0.7, 0.9])
    const_s = lambda x: np.sum(np.sin(scaled_exp(x, s)))  # noqa: E731
    check_hvp(const_s, z[:3], seed=16)


def test_check_hvp_catches_a_wrong_vjp():
    """The checker itself: a primitive whose vjp misses the factor 1 - out^2
    gives gradients and products that agree with each other, but not with
    second differences of f."""
    wrong = adsim.primitive(_tanh_layer_value, jvp=_tanh_layer_jvp,
                            vjp=lambda args, out, g: (M3.T @ g,), name="wrong")
    f = lambda x: np.sum(wrong(x) ** 2) * np.sum(x ** 2)  # noqa: E731
    with pytest.raises(AssertionError, match="second differences"):
        check_hvp(f, np.array([0.3, -0.8, 0.5]), seed=17)
