"""Runs of elementwise ops on large arrays are swept chunk by chunk
(adsim/_chunks.pxi); with several directions the same tape is swept op by
op. These tests check the chunked sweeps against the op-by-op ones, against
differences and against analytic derivatives, on arrays large enough to be
chunked, with the things that make chunking delicate: slots reused (values
pushed and restored chunk by chunk), slices of a reused input, constant
arrays, an active scalar broadcast over the run, and a value the run reads
after a later op of the run overwrote its slot."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from adsim import _tape
from adsim.testing import check_grads

N = 40_000                       # above the size from which runs are chunked
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


def point(n=N, seed=1):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


@pytest.mark.parametrize("f", [rosenbrock, mixed, reversed_pairs, elementwise_vector])
def test_tape_has_chunked_runs(f):
    """Guards the tests below: they must exercise the chunked path."""
    tape = ad.record(f, point())
    _, _, runs, _, shifted = _tape.find_runs(tape)
    assert len(runs) >= 1 and runs[:, 1].max() - runs[:, 0].min() >= 4
    assert f is not reversed_pairs or shifted.any()
    if f is not elementwise_vector:     # the last run is summed into the output: it is
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


def test_vector_output_against_differences():
    check_grads(elementwise_vector, point(), modes=("fwd", "rev", "cs"), order=2)


@pytest.mark.parametrize("f", [rosenbrock, mixed, reversed_pairs, elementwise_vector])
def test_chunked_equals_op_by_op(f):
    """One direction is chunked, two are not: the first of two must agree
    with the one (to rounding: chunks may add adjoints in another order)."""
    x = point()
    tape = ad.record(f, x)
    xs = tape._inputs(x)
    V = np.random.default_rng(3).standard_normal((2, N))
    m = np.size(f(x))
    W = np.random.default_rng(4).standard_normal((2, m))
    one = tape._tangent(xs, [V[:1]], True)[1]
    two = tape._tangent(xs, [V], True)[1]
    np.testing.assert_allclose(one[0], two[0], rtol=1e-13, atol=1e-13)
    one = tape._adjoint(xs, W[:1])[1][0]
    two = tape._adjoint(xs, W)[1][0]
    np.testing.assert_allclose(one[0], two[0], rtol=1e-13, atol=1e-13)
    w = W[0].reshape(np.shape(f(x)))
    _, _, adj1, adot1 = tape._soadjoint(xs, [V[:1]], w)
    _, _, adj2, adot2 = tape._soadjoint(xs, [V], w)
    np.testing.assert_allclose(adj1[0], adj2[0], rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(adot1[0][0], adot2[0][0], rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(tape.forward(x), tape._forward(xs, chunked=False), rtol=0, atol=0)


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
    gradient of the chunked tape must match the op-by-op sweeps."""
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
    V = np.random.default_rng(6).standard_normal((2, N))
    _, _, adj1, adot1 = tape._soadjoint(xs, [V[:1]], np.ones(()))
    _, _, adj2, adot2 = tape._soadjoint(xs, [V], np.ones(()))
    np.testing.assert_allclose(adj1[0], adj2[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(adot1[0][0], adot2[0][0], rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(tape.gradient(x), adj2[0], rtol=1e-12, atol=1e-12)


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
