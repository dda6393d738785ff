"""Fused runs in vector mode (``vtangents`` kernels, adsim/_fuse/codegen.py):
tangents in several directions, as ``tape.jvp`` with a matrix of directions
and the compressed sweeps of sparse Jacobians take them. Every test compares
a fused tape with the interpreter's sweeps, chunked and op by op: equal to
rounding, NaN and infinities in the same places, exact zeros where
``np.where`` did not select a branch; and sparse Jacobians of stencils with
the dense Jacobian."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from adsim._fuse.fuse import fuse as fuse_kinds
from adsim.sparse.api import sparse_jacobian_plan

from test_fused_runs import BINARY, UNARY_SAFE, assert_same, combine

N = 3000                        # above the size runs are fused from, below chunking's
RNG = np.random.default_rng(7)


pytestmark = pytest.mark.usefixtures("kernel_cache")   # tests/conftest.py


def vector_fused(f, x):
    """A tape of f with its vector tangent kernels, the same tape left to the
    chunked interpreter, and one swept op by op."""
    fused, chunked, plain = ad.record(f, x), ad.record(f, x), ad.record(f, x)
    report = fuse_kinds(fused, ("vtangents",))
    plain.chunked = False
    return fused, chunked, plain, report


def check_directions(fused, chunked, plain, x, V):
    want = plain.jvp(x, V)
    assert_same(chunked.jvp(x, V)[1], want[1])
    got = fused.jvp(x, V)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    return got[1]


def directions(n, k, seed):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, k))
    V[:, 0] = 0.0                               # a zero direction stays exactly zero
    return V


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(2, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "const"]))
        steps.append((kind, draw(st.integers(0, 20)), draw(st.integers(0, 20)),
                      draw(st.integers(0, 20))))
    return steps


def run_program(steps, x):
    """Slices of x combined elementwise by the steps, with an active scalar
    and a constant array: one vector output."""
    c = np.linspace(0.5, 1.5, x.size - 1)
    s = x[0] * 0.5 + 1.0
    values = [x[1:], x[:-1], x[1:] * 0.5 + 0.25]
    for kind, i, j, k in steps:
        pick = lambda n: values[n % len(values)]    # noqa: E731
        if kind == "unary":
            u = UNARY_SAFE[i % len(UNARY_SAFE)]
            a = pick(j)
            values.append(u(a * a + 0.5) if u in (np.sqrt, np.log1p, np.cbrt) else u(a))
        elif kind == "binary":
            values.append(combine(BINARY[i % len(BINARY)], pick(j), pick(k)))
        elif kind == "scalar":
            values.append(combine(BINARY[i % len(BINARY)], pick(j), s))
        else:
            values.append(BINARY[i % 3](pick(j), c))
    # every step feeds the output: none is removed as dead (adsim/_optimise.pxi)
    return values[-1] + 0.125 * sum(values[3:-1], np.zeros(x.size - 1))


@settings(max_examples=6, deadline=None)
@given(programs(), st.integers(0, 2 ** 32 - 1), st.sampled_from([2, 3, 7]))
def test_random_programs_match_the_interpreter(steps, seed, k):
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, N)
    fused, chunked, plain, report = vector_fused(lambda z: run_program(steps, z), x)
    assert report.fused == report.runs >= 1, str(report)
    J = check_directions(fused, chunked, plain, x, directions(N, k, seed))
    assert np.all(J[:, 0] == 0.0)
    x2 = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, N)       # replay at a new point
    check_directions(fused, chunked, plain, x2, directions(N, k, seed + 1))


def test_forward_and_reverse_modes_agree_with_differences():
    """J V by the fused vector sweep against J^T (reverse) and central differences."""
    def f(x):
        return np.tanh(x[1:] * x[:-1]) + np.exp(-x[1:] ** 2) * 0.5

    x = RNG.uniform(-1.0, 1.0, N)
    fused, chunked, plain, _ = vector_fused(f, x)
    V = RNG.standard_normal((N, 4))
    JV = check_directions(fused, chunked, plain, x, V)
    w = RNG.standard_normal(N - 1)
    np.testing.assert_allclose(w @ JV, fused.vjp(x, w)[1] @ V, rtol=1e-10)
    h = 1e-6
    for j in range(4):
        fd = (f(x + h * V[:, j]) - f(x - h * V[:, j])) / (2 * h)
        np.testing.assert_allclose(JV[:, j], fd, rtol=1e-6, atol=1e-8)


def test_nan_and_infinity_propagate_as_the_interpreter():
    def f(x):
        return np.log(x) * x + 1.0 / x + np.sqrt(x * x)

    x = RNG.uniform(0.1, 1.0, N)
    fused, chunked, plain, _ = vector_fused(f, x)
    x[:6] = [0.0, -1.0, np.inf, -np.inf, np.nan, 1e-320]
    V = directions(N, 3, 1)
    V[10, 1], V[11, 2], V[12, 1] = np.inf, np.nan, -np.inf
    J = check_directions(fused, chunked, plain, x, V)
    assert np.all(J[:, 0] == 0.0)                 # 0 * infinity: 0, the zero direction stays 0


def test_unselected_where_branches_give_exact_zeros():
    """np.where(inside, log(x) ..., ...) where x is negative outside: the log
    branch's NaN tangents are not selected, so the Jacobian there is exactly
    the other branch's. (The mask is data, as a domain's cells are: a
    comparison of active values has no fused form and would end the run.)"""
    x = RNG.uniform(-1.0, 1.0, N)
    x[::5] = -np.abs(x[::5])
    inside = x > 0

    def f(x):
        y = np.sin(x) * 2.0
        return np.where(inside, np.log(x) * y, -x * x) + y

    fused, chunked, plain, report = vector_fused(f, x)
    assert report.fused >= 1, str(report)
    V = np.stack([np.ones(N), np.arange(N) % 3 - 1.0], axis=-1)
    J = check_directions(fused, chunked, plain, x, V)
    assert np.all(np.isfinite(J))
    outside = ~inside
    assert np.array_equal(J[outside, 0], (-2.0 * x + 2.0 * np.cos(x))[outside])


def bratu2d(u, lam):
    k = int(np.sqrt(u.size))
    h = 1.0 / (k + 1)
    U = u.reshape(k, k)
    P = np.pad(U, 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return (lap + h * h * lam * np.exp(U)).reshape(-1)


def reaction_diffusion(u):
    """A periodic 2-D stencil (np.roll) with a cubic reaction and a scalar parameter."""
    k = int(np.sqrt(u.size))
    U = u.reshape(k, k)
    lap = np.roll(U, 1, 0) + np.roll(U, -1, 0) + np.roll(U, 1, 1) + np.roll(U, -1, 1) - 4 * U
    return (0.1 * lap + U - U ** 3 + np.tanh(U) * u[0]).reshape(-1)


@pytest.mark.parametrize("F, args", [(bratu2d, (6.0,)), (reaction_diffusion, ())],
                         ids=["bratu", "periodic-stencil"])
def test_sparse_jacobians_of_stencils_equal_the_dense_jacobian(F, args):
    k = 30
    u = RNG.uniform(0.0, 0.5, k * k)
    plan = sparse_jacobian_plan(F, u, *args)
    assert plan.mode == "forward" and plan.ncolors >= 5
    interpreted = plan(u, *args)
    assert fuse_kinds(plan.tape, ("vtangents",)).fused >= 1
    J = plan(u, *args)
    dense = ad.jacobian(F)(u, *args)
    np.testing.assert_allclose(J.toarray(), dense, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(J.toarray(), interpreted.toarray(), rtol=1e-13, atol=1e-15)
    u2 = u[::-1].copy()                          # a new point, the same plan
    np.testing.assert_allclose(plan(u2, *args).toarray(), ad.jacobian(F)(u2, *args),
                               rtol=1e-13, atol=1e-13)


def test_the_policy_fuses_vector_tangents_as_their_own_family():
    """Under "always", a jvp with several directions compiles the vector
    kernels only; one with one direction the tangent kernels."""
    previous = ad.set_fusion("always")
    try:
        x = RNG.uniform(-1.0, 1.0, N)
        tape = ad.record(lambda z: np.exp(z) * z, x)
        tape.jvp(x, RNG.standard_normal((N, 3)))
        assert tape._fusion.kinds == ("vtangents",)
        tape.jvp(x, np.ones(N))
        assert set(tape._fusion.kinds) == {"vtangents", "tangents"}
    finally:
        ad.set_fusion(previous)
