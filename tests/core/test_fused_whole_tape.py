"""A tape that is one fused run summed into its output (an objective written
in elementwise NumPy) is replayed by its gradient or second-order kernel
reading the caller's arrays and setting fresh, uninitialised result arrays
(``replay_whole_tape`` in adsim/_replay.pxi; elements no block reaches are
zeroed first); and a fused block runs with
plain products first, again with the zero-times-infinity rule when a
derivative comes out NaN (``_element_loops`` in adsim/_fuse/codegen.py).
Both are checked against the interpreter."""
import threading

import numpy as np
import pytest

import adsim as ad
from adsim.errors import NoCompiler

from test_fused_runs import assert_same

N = 40_000
pytestmark = pytest.mark.usefixtures("kernel_cache")   # tests/conftest.py


def fused_and_plain(f, *xs):
    fused, plain = ad.record(f, *xs), ad.record(f, *xs)
    try:
        report = fused.fuse()
    except NoCompiler as why:
        pytest.skip(str(why))
    assert report.fused == report.runs == 1, str(report)
    return fused, plain


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_results_are_fresh_arrays_and_inputs_are_untouched():
    x = np.random.default_rng(0).uniform(-1.0, 1.0, N)
    fused, plain = fused_and_plain(rosenbrock, x)
    x2 = x + 0.25
    kept = x2.copy()
    g1, g2 = fused.gradient(x2), fused.gradient(x2)
    assert g1 is not g2 and not np.shares_memory(g1, g2) and not np.shares_memory(g1, x2)
    assert np.array_equal(x2, kept)
    assert_same(g1, plain.gradient(x2))
    assert_same(g2, g1)
    v = np.cos(np.arange(N))
    h1 = fused.hvp(x2, v)
    assert not np.shares_memory(h1, v) and np.array_equal(x2, kept)
    assert_same(h1, plain.hvp(x2, v))
    assert_same(fused.hvp(x2, v), h1)        # the scratch gradient starts at zero each time
    y, gy = fused.vjp(x2, np.array(2.0))
    assert_same(gy, 2.0 * plain.gradient(x2))
    assert y == pytest.approx(rosenbrock(x2), rel=1e-12)


def test_several_inputs_and_strided_inputs():
    def f(x, y):
        return np.sum(np.exp(-x[::2]) * y[1:] + np.tanh(y[:-1]) * x[1::2])
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, 2 * N), rng.uniform(-1, 1, N + 1)
    fused, plain = fused_and_plain(f, x, y)
    for s in (1.0, -0.5):
        got, want = fused.gradient(s * x, y), plain.gradient(s * x, y)
        for a, b in zip(got, want):
            assert_same(a, b)
    gx = fused.gradient(x[::-1].copy(), y)
    assert_same(gx[0], plain.gradient(x[::-1].copy(), y)[0])


def test_a_zero_times_an_infinity_is_zero_whatever_the_block():
    """sqrt's slope is infinite at 0, where the weight m is 0: the derivative
    there is 0, not NaN (the plain-product pass gives NaN and the block runs
    again); elsewhere in the same block the derivative is the plain one."""
    m = np.ones(N)
    zeros = [3, 300, N - 1]
    m[zeros] = 0.0

    def f(x):
        return np.sum(np.sqrt(x) * m + x * x)
    x = np.random.default_rng(2).uniform(0.5, 2.0, N)
    fused, plain = fused_and_plain(f, x)
    x0 = x.copy()
    x0[zeros] = 0.0
    g = fused.gradient(x0)
    assert np.all(np.isfinite(g))
    assert np.array_equal(g[zeros], np.zeros(3))
    assert_same(g, plain.gradient(x0))
    v = np.ones(N)
    h = fused.hvp(x0, v)
    assert_same(h, plain.hvp(x0, v))
    assert np.array_equal(h[zeros], 2.0 * np.ones(3))
    assert_same(fused.jvp(x0, v)[1], plain.jvp(x0, v)[1])


def test_nan_and_infinity_reach_the_same_places():
    x = np.random.default_rng(3).uniform(0.5, 2.0, N)

    def f(x):
        return np.sum(np.log(x) * x + 1.0 / x)
    fused, plain = fused_and_plain(f, x)
    x1 = x.copy()
    x1[[5, 700]] = np.nan
    x1[[900]] = 0.0                  # log(0) * 0 and 1/0: infinite value, NaN slope
    x1[[1200]] = -1.0                # log of a negative number
    assert_same(fused.gradient(x1), plain.gradient(x1))
    assert_same(fused.hvp(x1, np.ones(N)), plain.hvp(x1, np.ones(N)))


def test_two_threads_replaying_one_fused_tape():
    x = np.random.default_rng(4).uniform(-1.0, 1.0, N)
    fused, plain = fused_and_plain(rosenbrock, x)
    points = [x + 0.01 * k for k in range(8)]
    want = [plain.gradient(p) for p in points]
    got, failures = [None] * len(points), []

    def work(ks):
        try:
            for _ in range(5):
                for k in ks:
                    got[k] = fused.gradient(points[k])
                    assert_same(got[k], want[k])
        except Exception as exc:          # (a thread's failure is the test's)
            failures.append(exc)
    threads = [threading.Thread(target=work, args=(range(i, 8, 2),)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    for g, w in zip(got, want):
        assert_same(g, w)


def fresh_gradient(tape, *xs):
    """tape.gradient with NaN left behind in the memory its new result
    arrays are likely to get: an element the kernel neither sets nor zeroes
    shows up."""
    for _ in range(3):
        litter = [np.full(np.size(x), np.nan) for x in xs]
        del litter
    return tape.gradient(*xs)


@pytest.mark.parametrize("m", [3 * 256, 3 * 256 + 1, 3 * 256 + 2, 257])
def test_every_element_of_a_fresh_result_is_set(m):
    """A three-point stencil's gathers (shifts 0, 1, 2) cover x: each block
    sets what it reaches first, and a last block shorter than the largest
    shift (m = 3 * 256 + 1) zeroes its new elements before adding."""
    def stencil(x):
        return np.sum((x[2:] - 2.0 * x[1:-1] + x[:-2]) ** 2 * x[1:-1] + np.sin(x[:-2]))
    x = np.random.default_rng(5).uniform(-1.0, 1.0, m + 2)
    fused, plain = fused_and_plain(stencil, x)
    for s in (1.0, -2.0):
        assert_same(fresh_gradient(fused, s * x), plain.gradient(s * x))
        v = np.cos(np.arange(m + 2))
        assert_same(fused.hvp(s * x, v), plain.hvp(s * x, v))


@pytest.mark.parametrize("f", [
    lambda x, y, a: np.sum(x[1:] ** 2 + a * x[1:]),          # element 0 of x never read
    lambda x, y, a: np.sum(x[:N // 3] * x[2 * (N // 3):3 * (N // 3)] + a),   # a gap
    lambda x, y, a: np.sum(x[::2] * x[1::2] + a * x[::2]),   # strided: one pass each
    lambda x, y, a: np.sum(np.exp(x) * a),                   # y not read at all
], ids=["head-unread", "gap", "strided", "unread-input"])
def test_adjoints_of_elements_no_block_reaches_are_zero(f):
    rng = np.random.default_rng(6)
    xs = (rng.uniform(-1.0, 1.0, N), rng.uniform(-1.0, 1.0, N), np.array(0.5))
    fused, plain = fused_and_plain(f, *xs)
    for _ in range(2):
        got, want = fresh_gradient(fused, *xs), plain.gradient(*xs)
        for a, b in zip(got, want):
            assert_same(a, b)
    assert np.array_equal(got[1], np.zeros(N))


def test_rows_of_a_2d_stencil():
    def energy(u):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        return np.sum(lap ** 2 + np.cosh(u[1:-1, 1:-1]))
    u = np.random.default_rng(7).uniform(-1.0, 1.0, (130, 300))
    fused, plain = fused_and_plain(energy, u)
    assert_same(fresh_gradient(fused, u), plain.gradient(u))
    v = np.sin(np.arange(u.size)).reshape(u.shape)
    assert_same(fused.hvp(u, v), plain.hvp(u, v))


def test_zero_adjoints_have_the_interpreters_sign():
    """Op adjoints in the fused kernels start at -0.0 (one addition fewer);
    an input's adjoint that comes out zero is still +0.0, as the interpreter's
    sums into zeroed buffers give, where every contribution is -0.0 or the
    contributions cancel."""
    def f(x):
        u = x[1:] * -0.0 + x[:-1] * 0.0           # -0.0 and +0.0 contributions
        w = x[:-1] ** 2 * np.exp(x[1:]) * 0.0
        return np.sum(u - w + 3.0)
    x = np.random.default_rng(4).uniform(-1.0, 1.0, N)
    fused, plain = fused_and_plain(f, x)
    g, want = fused.gradient(x), plain.gradient(x)
    assert not np.signbit(want).any()
    assert g.tobytes() == want.tobytes()
    v = np.sign(x) * -1.0
    assert fused.hvp(x, v).tobytes() == plain.hvp(x, v).tobytes()


def test_a_gradient_without_its_value_is_the_gradient_with_it():
    """tape.gradient and adsim.grad run the kernel variant that skips the
    output's value (outs NULL); value_and_gradient runs the full one."""
    x = np.random.default_rng(5).uniform(-1.0, 1.0, N)
    fused, plain = fused_and_plain(rosenbrock, x)
    y, g = fused.value_and_gradient(x)
    assert y == pytest.approx(rosenbrock(x), rel=1e-12)
    assert fused.gradient(x).tobytes() == g.tobytes() == plain.gradient(x).tobytes()
    f = lambda z: rosenbrock(z)                  # noqa: E731 (a function of its own)
    grad, value_and_grad = ad.grad(f), ad.value_and_grad(f)
    for _ in range(2):                           # recorded, then replayed
        value, gv = value_and_grad(x)
        assert grad(x).tobytes() == gv.tobytes()
        assert value == pytest.approx(rosenbrock(x), rel=1e-12)
