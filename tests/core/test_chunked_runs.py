"""Runs of elementwise ops on large arrays are swept chunk by chunk
(adsim/_chunks.pxi), with one direction or several; ``tape.chunked = False``
sweeps op by op. These tests check the chunked sweeps against the op-by-op
ones, against
differences and against analytic derivatives, on arrays large enough to be
chunked, with the things that make chunking delicate: slots reused (values
pushed and restored chunk by chunk), slices of a reused input, constant
arrays, an active scalar broadcast over the run, and a value the run reads
after a later op of the run overwrote its slot, and slots that cross the
edges of a run."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from adsim import _tape
from adsim.testing import check_grads

N = 40_000                       # above the size from which runs are chunked
RUN_SIZE = 32_768                # the smallest run that is chunked (_chunks.pxi)
RNG = np.random.default_rng(0)
C = RNG.uniform(0.5, 1.5, N - 1)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    t = x[1:] - x[:-1] ** 2
    g[:-1] += -400.0 * x[:-1] * t - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    return g


def rosenbrock_hvp(x, v):
    hv = np.zeros_like(x)
    hv[:-1] += (1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0) * v[:-1] - 400.0 * x[:-1] * v[1:]
    hv[1:] += -400.0 * x[:-1] * v[:-1] + 200.0 * v[1:]
    return hv


def mixed(x):
    """Slices, a constant array, an active scalar, exp/log/tanh, reused slots."""
    s = np.sum(x[:100]) / 100.0
    u = x[1:] * C + s * x[:-1]
    u = np.tanh(u) + np.exp(-u * u)
    w = np.log1p(x[::-1][1:] ** 2) * u
    return np.sum(w * w + s * u)


def reversed_pairs(x):
    """A gather (x reversed) whose source the run also reads elementwise."""
    y = np.sin(x) * x
    z = x[::-1] * y + x[N // 2:][::-1].sum()
    return np.sum(z * x)


def elementwise_vector(x):
    """A vector output: the run ends at the output itself."""
    y = np.sin(x) * x
    y = y * y + np.cos(x)
    return y / (1.0 + x * x)


def two_runs(x):
    """Two runs around a cumulative sum (which no run takes): the first run's
    result is read by the sum and by the second run, and x by both runs."""
    y = np.sin(x) * x
    y = np.tanh(y) * y + 0.5 * y
    z = y * y + x
    w = np.cumsum(z) * 1e-4
    v = np.tanh(w) * x + z * np.cos(x)
    v = v * v + np.sin(v)
    v = np.tanh(v) * v
    return v * v - 0.5 * v


K = 200                          # a K x K grid: N = 40 000 unknowns


def stencil(x):
    """A 5-point Laplacian on a padded grid plus a nonlinearity: the run takes
    the 2-d slices of the padded grid, in chunks of whole rows."""
    U = x.reshape(K, K)
    P = np.pad(U, 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return (lap + 0.1 * np.exp(U) * U).reshape(-1)


FUNCTIONS = [rosenbrock, mixed, reversed_pairs, elementwise_vector, two_runs, stencil]


def point(n=N, seed=1):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_tape_has_chunked_runs(f):
    """Guards the tests below: they must exercise the chunked path."""
    tape = ad.record(f, point())
    _, _, runs, _, shifted, _ = _tape.find_runs(tape)
    assert len(runs) >= 1 and runs[:, 1].max() - runs[:, 0].min() >= 4
    assert f is not reversed_pairs or shifted.any()
    assert (runs[:, 7] == K).any() == (f is stencil)        # chunks of whole rows
    if f not in (elementwise_vector, two_runs, stencil):     # the last run is summed into the output: it is
        assert runs[-1, 1] == len(tape) - 1     # reversed chunk by chunk right after its forward


def test_rosenbrock_against_analytic_derivatives():
    x, v = point(), point(seed=2)
    tape = ad.record(rosenbrock, x)
    np.testing.assert_allclose(tape.forward(x), rosenbrock(x), rtol=1e-14)
    np.testing.assert_allclose(tape.gradient(x), rosenbrock_grad(x), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(tape.hvp(x, v), rosenbrock_hvp(x, v), rtol=1e-12, atol=1e-9)
    g, hv = tape.gradient_and_hvp(x, v)
    np.testing.assert_allclose(g, rosenbrock_grad(x), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(hv, rosenbrock_hvp(x, v), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("f", [rosenbrock, mixed, reversed_pairs])
def test_against_differences(f):
    check_grads(f, point(), modes=("fwd", "rev"), order=2, rtol=1e-5)


@pytest.mark.parametrize("f", [elementwise_vector, stencil])
def test_vector_output_against_differences(f):
    check_grads(f, point(), modes=("fwd", "rev", "cs"), order=2)


def sweeps(tape, xs, V, W, w, wdot):
    """Every compiled sweep of ``tape`` with the directions given."""
    _, ty = tape._tangent(xs, [V], True)
    _, adj = tape._adjoint(xs, W)
    _, ty2, adj2, adot2 = tape._soadjoint(xs, [V], w, wdot)
    return {"tangent": ty, "adjoint": adj[0], "second-order tangent": ty2,
            "second-order adjoint": adj2[0], "adjoint tangents": adot2[0],
            "value": tape._forward(xs)}


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("f", FUNCTIONS)
def test_chunked_equals_op_by_op(f, k):
    """The chunked sweeps, with one direction and with several, against the
    same tape swept op by op (to rounding: chunks may add adjoints in
    another order); values are bitwise equal."""
    x = point()
    tape = ad.record(f, x)
    xs = tape._inputs(x)
    m = np.size(f(x))
    V = np.random.default_rng(3).standard_normal((k, N))
    W = np.random.default_rng(4).standard_normal((k, m))
    w = W[0].reshape(np.shape(f(x)))
    wdot = np.random.default_rng(5).standard_normal((k, m))
    chunked = sweeps(tape, xs, V, W, w, wdot)
    tape.chunked = False
    reference = sweeps(tape, xs, V, W, w, wdot)
    for name, expected in reference.items():
        tol = 0 if name == "value" else 1e-12
        np.testing.assert_allclose(chunked[name], expected, rtol=tol, atol=tol * 10, err_msg=name)


def test_loop_body_iterated_in_c():
    """Tape._iterate replays a chunked step many times."""
    step = lambda u: u + 0.01 * (np.tanh(u) * u - u ** 3)
    u0 = point()
    tape = ad.record(step, u0)
    done, u = tape._iterate([u0], 5)
    expected = u0
    for _ in range(5):
        expected = step(expected)
    assert done == 5
    np.testing.assert_allclose(u, expected, rtol=1e-14, atol=1e-15)


UNARY = [np.sin, np.tanh, np.exp, lambda a: a * a, lambda a: 0.5 * a, lambda a: 1.0 - a]
BINARY = [np.add, np.subtract, np.multiply, lambda a, b: a * np.cos(b)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 5), st.integers(0, 3),
                          st.integers(0, 7), st.integers(0, 7)), min_size=2, max_size=10))
def test_random_elementwise_programs(program):
    """Random programs over a pool of arrays: each step replaces a pool entry
    (so slots are reused) with a unary or binary op of two entries. hvp and
    gradient of the chunked tape, with one and with three directions, must
    match the op-by-op sweeps."""
    def f(x):
        pool = [x[1:], x[:-1], 0.5 * x[1:], C * x[:-1]]
        for binary, ui, bi, a, b in program:
            a, b = a % len(pool), b % len(pool)
            pool[a] = BINARY[bi](pool[a], pool[b]) if binary else UNARY[ui](pool[a])
            pool[a] = np.tanh(pool[a])         # keep values bounded
        return np.sum(pool[0] * pool[-1])
    x = point(seed=5) * 0.5
    tape = ad.record(f, x)
    xs = tape._inputs(x)
    V = np.random.default_rng(6).standard_normal((3, N))
    results = []
    for chunked in (True, False):
        tape.chunked = chunked
        results.append([tape._soadjoint(xs, [V[:1]], np.ones(())),
                        tape._soadjoint(xs, [V], np.ones(()))])
    for (_, ty, adj, adot), (_, ty_ref, adj_ref, adot_ref) in zip(*results):
        np.testing.assert_allclose(ty, ty_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(adj[0], adj_ref[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(adot[0], adot_ref[0], rtol=1e-11, atol=1e-11)
    tape.chunked = True
    np.testing.assert_allclose(tape.gradient(x), results[1][1][2][0], rtol=1e-12, atol=1e-12)


def test_final_sum_that_is_not_the_output():
    """The tape's last op sums a run, but the output is an earlier value: the
    fused final run then carries a zero adjoint and must not disturb it."""
    def f(x):
        t = np.sum(np.sin(x) * x)
        np.sum(np.exp(0.1 * x) * x)      # recorded last, not returned
        return t
    x, v = point(), point(seed=7)
    tape = ad.record(f, x)
    assert _tape.find_runs(tape)[2][-1, 1] == len(tape) - 1     # the fused path is taken
    g_expected = np.sin(x) + x * np.cos(x)
    hv_expected = (2.0 * np.cos(x) - x * np.sin(x)) * v
    np.testing.assert_allclose(tape.forward(x), f(x), rtol=1e-13)
    np.testing.assert_allclose(tape.gradient(x), g_expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tape.hvp(x, v), hv_expected, rtol=1e-12, atol=1e-13)



@settings(max_examples=10, deadline=None)
@given(st.integers(150, 700), st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2),
                                                 st.integers(0, 5)), min_size=2, max_size=6))
def test_random_stencils(width, terms):
    """Random sums of shifted 2-d slices of a padded grid (rows of ``width``
    elements, not a divisor of the chunk length): the chunked sweeps, which
    take whole rows, must match the op-by-op ones in every mode."""
    rows = -(-RUN_SIZE // width)

    def f(x):
        P = np.pad(x.reshape(rows, width), 1)
        total = 0.5 * x.reshape(rows, width)
        for a, b, u in terms:
            total = total + UNARY[u](P[a:a + rows, b:b + width]) * total
            total = np.tanh(total)
        return total.reshape(-1)

    x = point(rows * width, seed=8) * 0.5
    tape = ad.record(f, x)
    assert (_tape.find_runs(tape)[2][:, 7] == width).any()
    xs = tape._inputs(x)
    V = np.random.default_rng(9).standard_normal((2, x.size))
    W = np.random.default_rng(10).standard_normal((2, x.size))
    chunked = sweeps(tape, xs, V, W, W[0], W)
    tape.chunked = False
    reference = sweeps(tape, xs, V, W, W[0], W)
    for name, expected in reference.items():
        tol = 0 if name == "value" else 1e-12
        np.testing.assert_allclose(chunked[name], expected, rtol=tol, atol=tol * 10, err_msg=name)
