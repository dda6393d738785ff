"""Batched replay (``tape.batched``): every mode at B points against B
separate replays of the same tape, on random programs and on small
scientific functions; the batched derivatives against differences; branch
changes, NaN and infinities, fallbacks and shape errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adsim as ad
from adsim.errors import BatchShapeError, BranchChanged, IndexOutOfBounds, NoCompiler
from test_properties import programs, run

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_same(got, want):
    """Batched and looped results agree to rounding, NaN for NaN, inf for inf."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13 * scale)


def loop(method, *per_member):
    """B separate replays: ``method`` at each member of the batched arguments."""
    return stack([method(*[a[b] for a in per_member]) for b in range(len(per_member[0]))])


def stack(results):
    if isinstance(results[0], tuple):
        return tuple(stack([r[i] for r in results]) for i in range(len(results[0])))
    return np.stack([np.asarray(r) for r in results])


def nearby(x, batch, seed, scale=0.02):
    rng = np.random.default_rng(seed)
    return x + scale * rng.standard_normal((batch,) + np.shape(x))


def first_failing(tape, X):
    """The first member whose own replay leaves the recorded path, or None."""
    for b in range(len(X)):
        try:
            tape.forward(X[b])
        except BranchChanged:
            return b
    return None


# ---------------------------------------------------------------- random programs

@settings(SETTINGS, max_examples=50)
@given(programs(smooth=False), st.integers(0, 2 ** 16))
def test_random_programs_every_mode_equals_separate_replays(program_x, seed):
    program, x = program_x
    tape = ad.record(lambda z: run(program, z), x)
    X = nearby(x, 3, seed)
    rng = np.random.default_rng(seed + 1)
    V = rng.standard_normal(X.shape)
    W = rng.standard_normal((3,) + tuple(tape.output_shape))
    failing = first_failing(tape, X)
    if failing is not None:          # a member off the recorded path: its own error
        with pytest.raises(BranchChanged) as caught:
            tape.batched.forward(X)
        assert caught.value.batch_member == failing
        assert f"batch member {failing}" in str(caught.value)
        return
    assert tape.batched.is_native(3)
    assert_same(tape.batched.forward(X), loop(tape.forward, X))
    assert_same(tape.batched.jvp(X, V), loop(tape.jvp, X, V))
    assert_same(tape.batched.vjp(X, W), loop(tape.vjp, X, W))
    assert_same(tape.batched.hvp(X, V, W), loop(tape.hvp, X, V, W))
    assert_same(tape.batched.jacobian(X), loop(tape.jacobian, X))
    K = rng.standard_normal(X.shape + (2,))      # two directions per member
    assert_same(tape.batched.jvp(X, K)[1], loop(lambda x, k: tape.jvp(x, k)[1], X, K))


@SETTINGS
@given(programs(smooth=True), st.integers(0, 2 ** 16))
def test_random_losses_gradient_and_hvp_equal_separate_replays(program_x, seed):
    program, x = program_x

    def loss(z):
        return np.sum(np.tanh(run(program, z)) ** 2)

    tape = ad.record(loss, x)
    X = nearby(x, 4, seed)
    V = np.random.default_rng(seed).standard_normal(X.shape)
    assert_same(tape.batched.gradient(X), loop(tape.gradient, X))
    assert_same(tape.batched.value_and_gradient(X), loop(tape.value_and_gradient, X))
    assert_same(tape.batched.hvp(X, V), loop(tape.hvp, X, V))
    assert_same(tape.batched.gradient_and_hvp(X, V), loop(tape.gradient_and_hvp, X, V))


# ---------------------------------------------------------------- scientific programs

def heat_residual(u):
    """Implicit heat step on a 2-D grid: 5-point Laplacian through slices."""
    U = u.reshape(6, 7)
    lap = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4.0 * U[1:-1, 1:-1]
    r = U[1:-1, 1:-1] - 0.1 * lap - np.exp(-U[1:-1, 1:-1])
    return np.sum(r * r)


def softplus_regression(w, X=np.linspace(-1, 1, 24).reshape(8, 3), y=np.arange(8.0)):
    """A small model: constant design matrix times parameters, a softplus
    link, a squared loss and a ridge term."""
    pred = np.logaddexp(0.0, X @ w)
    return np.mean((pred - y) ** 2) + 1e-2 * w @ w


def pendulum_energy(q):
    """Positions and momenta of a chain: where, clip, strided and fancy indexing."""
    x, p = q[::2], q[1::2]
    spring = np.where(x > 0.0, x ** 2, 0.5 * np.sin(x) ** 2)
    drag = np.clip(p, -1.0, 1.0) * p
    return np.sum(spring) + 0.5 * np.sum(drag) + np.max(x) * np.mean(q[[0, 3, 3, 5]])


def column_stats(A):
    """Reductions along both axes of a matrix, centred columns (a row
    broadcast down the rows) and a scalar broadcast per member."""
    C = A - np.mean(A, axis=0)
    col = np.sum(C ** 2, axis=0)
    row = np.mean(A * A, axis=1, keepdims=True)
    return np.sum(np.cumsum(col) ** 2) + np.sum(row * A) * np.linalg.norm(A) + np.min(C[:, 1])


def thresholded_energy(x):
    """Boolean-mask selection (its size depends on the data: recorded) and a product."""
    e = x[x > 0.2]
    return np.sum(e ** 2) + np.prod(np.tanh(x[:4])) + np.sum(x[[1, 1, -1]] * x[2:5:2].mean())


def assert_modes_match_the_loop(tape, X, V):
    """forward, gradient, jvp and hvp at the batch equal single replays."""
    assert_same(tape.batched.forward(X), loop(tape.forward, X))
    assert_same(tape.batched.gradient(X), loop(tape.gradient, X))
    assert_same(tape.batched.jvp(X, V), loop(tape.jvp, X, V))
    assert_same(tape.batched.hvp(X, V), loop(tape.hvp, X, V))


@pytest.mark.parametrize("f, x", [
    (heat_residual, np.linspace(0.1, 1.0, 42)),
    (softplus_regression, np.array([0.3, -0.2, 0.5])),
    (pendulum_energy, np.linspace(-1.0, 1.2, 12)),
    (column_stats, np.arange(12.0).reshape(3, 4) / 7.0),
    (thresholded_energy, np.linspace(-0.5, 1.0, 9)),
])
def test_scientific_functions(f, x):
    tape = ad.record(f, x)
    X = nearby(x, 5, 0, scale=0.01)
    V = np.random.default_rng(1).standard_normal(X.shape)
    assert tape.batched.is_native(5)
    assert_modes_match_the_loop(tape, X, V)


def test_gradient_and_hvp_against_differences_and_across_modes():
    tape = ad.record(heat_residual, np.linspace(0.1, 1.0, 42))
    X = nearby(np.linspace(0.1, 1.0, 42), 3, 2, scale=0.05)
    V = np.random.default_rng(3).standard_normal(X.shape)
    G = tape.batched.gradient(X)
    h = 1e-6
    fd = (tape.batched.forward(X + h * V) - tape.batched.forward(X - h * V)) / (2 * h)
    np.testing.assert_allclose(np.sum(G * V, axis=1), fd, rtol=1e-7)
    _, jv = tape.batched.jvp(X, V)                      # forward mode = reverse mode
    np.testing.assert_allclose(jv, np.sum(G * V, axis=1), rtol=1e-12)
    Hv = tape.batched.hvp(X, V)                        # against differences of gradients
    fd_h = (tape.batched.gradient(X + h * V) - tape.batched.gradient(X - h * V)) / (2 * h)
    np.testing.assert_allclose(Hv, fd_h, rtol=1e-6, atol=1e-6)


def test_several_inputs_and_vector_output():
    def model(a, b):
        return np.concatenate([a * b[:3], np.sum(a) * np.cos(b)])

    tape = ad.record(model, np.array([1.0, 2.0, 3.0]), np.array([0.5, -0.5, 1.0, 2.0]))
    A, Bs = nearby(np.array([1.0, 2.0, 3.0]), 4, 0), nearby(np.array([0.5, -0.5, 1.0, 2.0]), 4, 1)
    assert_same(tape.batched.forward(A, Bs), loop(tape.forward, A, Bs))
    assert_same(tape.batched.jacobian(A, Bs), loop(tape.jacobian, A, Bs))
    assert_same(tape.batched.jacobian(A, Bs, mode="reverse"),
                loop(lambda a, b: tape.jacobian(a, b, mode="reverse"), A, Bs))
    Va, Vb = np.ones_like(A), np.full_like(Bs, 0.5)
    assert_same(tape.batched.jvp((A, Bs), (Va, Vb)),
                loop(lambda a, b, va, vb: tape.jvp((a, b), (va, vb)), A, Bs, Va, Vb))
    W = np.random.default_rng(2).standard_normal((4, 7))
    assert_same(tape.batched.vjp((A, Bs), W), loop(lambda a, b, w: tape.vjp((a, b), w), A, Bs, W))


def test_nan_and_infinity_stay_in_their_member():
    def f(x):
        return np.sum(np.log(x) * np.sqrt(x)) + np.sum(np.exp(400.0 * x[:2]))

    tape = ad.record(f, np.array([0.5, 1.0, 2.0]))
    X = np.array([[0.5, 1.0, 2.0], [-1.0, 1.0, 2.0], [0.0, 0.5, 1.0], [1.0, np.inf, 2.0],
                  [np.nan, 1.0, 1.0]])
    with np.errstate(all="ignore"):
        want_g, want_y = loop(tape.gradient, X), loop(tape.forward, X)
        got_g, got_y = tape.batched.gradient(X), tape.batched.forward(X)
        assert_same(got_y, want_y)
        assert_same(got_g, want_g)
        assert np.all(np.isfinite(got_g[0])) and np.isnan(got_g[1, 0]) and np.isnan(got_y[4])
        V = np.ones_like(X)
        assert_same(tape.batched.hvp(X, V), loop(tape.hvp, X, V))


def test_where_passes_nothing_from_the_branch_not_taken():
    def f(x):
        return np.sum(np.where(x > 0.0, np.sqrt(x), x))

    tape = ad.record(f, np.array([1.0, -1.0, 2.0]))
    X = np.array([[1.0, -1.0, 2.0], [4.0, -3.0, 0.25]])
    assert_same(tape.batched.gradient(X), loop(tape.gradient, X))
    np.testing.assert_array_equal(tape.batched.gradient(X)[:, 1], [1.0, 1.0])


def test_products_of_two_actives_run_per_member():
    def f(x):
        M = np.outer(x, np.sin(x))                   # MATMUL of two active operands
        return np.sum(M @ M) + x @ x

    tape = ad.record(f, np.array([0.1, 0.2, 0.3]))
    X = nearby(np.array([0.1, 0.2, 0.3]), 3, 4)
    V = np.ones_like(X)
    assert tape.batched.is_native(3)
    assert_same(tape.batched.gradient(X), loop(tape.gradient, X))
    assert_same(tape.batched.hvp(X, V), loop(tape.hvp, X, V))


def test_tapes_with_callbacks_replay_member_by_member():
    A = np.array([[3.0, 1.0], [1.0, 2.0]])

    def f(x):
        return np.sum(np.linalg.solve(A + np.diag(x ** 2), np.array([1.0, 2.0])))

    tape = ad.record(f, np.array([0.5, 0.7]))
    X = nearby(np.array([0.5, 0.7]), 3, 5)
    V = np.ones_like(X)
    assert not tape.batched.is_native(3)
    assert "CALLBACK" in tape.batched.why_not_native(3)
    assert_same(tape.batched.gradient(X), loop(tape.gradient, X))
    assert_same(tape.batched.forward(X), loop(tape.forward, X))
    assert_same(tape.batched.hvp(X, V), loop(tape.hvp, X, V))


# ---------------------------------------------------------------- branches and errors

def test_a_member_off_the_recorded_path_raises_naming_it():
    def g(x):
        if x[0] > 0:
            return np.sum(x ** 2)
        return np.sum(np.sin(x))

    tape = ad.record(g, np.array([1.0, 2.0]))
    X = np.array([[1.0, 2.0], [0.5, 1.0], [-1.0, 2.0], [-2.0, 0.0]])
    for method in (tape.batched.gradient, tape.batched.forward):
        with pytest.raises(BranchChanged) as caught:
            method(X)
        assert caught.value.batch_member == 2 and "batch member 2" in str(caught.value)
        assert caught.value.op_name
    assert_same(tape.batched.gradient(X[:2]), loop(tape.gradient, X[:2]))


def test_an_index_out_of_range_in_a_member_raises_index_out_of_bounds():
    def f(x):
        i = np.floor(x[0]).astype(int)
        return x[1:][i] * x[0]

    tape = ad.record(f, np.array([1.5, 2.0, 3.0, 4.0]))
    X = np.array([[1.5, 2.0, 3.0, 4.0], [7.5, 2.0, 3.0, 4.0]])
    with pytest.raises(IndexOutOfBounds) as caught:
        tape.batched.gradient(X)
    assert caught.value.batch_member == 1


@pytest.mark.parametrize("args", [
    (np.ones(3),),                       # no batch axis
    (np.ones((2, 4)),),                  # wrong member shape
    (np.ones((0, 3)),),                  # an empty batch
    (np.ones((2, 3, 1)),),               # an extra axis
])
def test_wrong_batch_shapes_raise_batch_shape_error(args):
    tape = ad.record(lambda x: np.sum(x ** 2), np.ones(3))
    with pytest.raises(BatchShapeError, match="batch axis first"):
        tape.batched.gradient(*args)


def test_wrong_directions_and_mismatched_batches_raise_batch_shape_error():
    tape = ad.record(lambda a, b: np.sum(a * b), np.ones(3), np.ones(3))
    with pytest.raises(BatchShapeError, match="expected \\(2,\\)"):
        tape.batched.forward(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(BatchShapeError, match="2 inputs"):
        tape.batched.forward(np.ones((2, 3)))
    with pytest.raises(BatchShapeError, match="direction 1"):
        tape.batched.jvp((np.ones((2, 3)), np.ones((2, 3))), (np.ones((2, 3)), np.ones(3)))
    one = ad.record(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match="scalar output"):
        one.batched.gradient(np.ones((2, 3)))


def test_fused_tape_batched_equals_separate_replays():
    x = np.linspace(0.1, 1.0, 1000)

    def rosenbrock(z):
        return np.sum(100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2)

    tape = ad.record(rosenbrock, x)
    X = nearby(x, 8, 6)
    tape.batched.gradient(X)                         # a program made before fusing
    try:
        tape.fuse()
    except NoCompiler:
        pytest.skip("no C compiler")
    X = nearby(x, 8, 6)
    V = np.random.default_rng(7).standard_normal(X.shape)
    assert tape.batched.program(8, summed=True)._fusion is not None
    assert_same(tape.batched.gradient(X), loop(tape.gradient, X))
    assert_same(tape.batched.hvp(X, V), loop(tape.hvp, X, V))
    assert_same(tape.batched.forward(X), loop(tape.forward, X))


def test_a_loaded_tape_and_many_batch_sizes():
    import io
    tape = ad.record(heat_residual, np.linspace(0.1, 1.0, 42))
    buffer = io.BytesIO()
    tape.save(buffer)
    buffer.seek(0)
    loaded = ad.load_tape(buffer)
    for batch in (1, 2, 3, 5, 8, 9, 2, 13):          # more sizes than the programs kept
        X = nearby(np.linspace(0.1, 1.0, 42), batch, batch)
        assert_same(loaded.batched.gradient(X), loop(tape.gradient, X))


SPARSE = __import__("scipy.sparse", fromlist=["random"]).random(5, 12, density=0.4,
                                                                 random_state=0, format="csr")


def structural_zoo(x):
    """Strided 2-d slices, transposes, roll, pad, in-place writes, integer
    data (argmax, searchsorted, astype(int) as indices), a sparse product
    and cumulative sums: the batched forms and the per-member ops."""
    U = x.reshape(3, 4)
    a = np.sum(U[::2, ::2] ** 2) + np.sum(U[:, ::-1] * U) + np.sum(U.T @ np.arange(3.0))
    y = x * 1.0
    y[[1, 4, 7]] = np.sin(x[:3])
    i = np.argmax(U, axis=1)
    g = np.take_along_axis(U, i[:, None], axis=1)
    k = np.searchsorted(np.array([0.0, 0.5, 1.0]), x[:4])
    h = x[np.floor(x[:3] * 3.0).astype(int)]
    return (a + np.sum(np.roll(x, 3) * x) + np.sum(np.pad(U, 1) ** 3) + np.sum(y ** 2)
            + np.sum(g) + np.sum(k * x[:4]) + np.sum(SPARSE @ x) + np.sum(h ** 2)
            + np.sum(np.cumsum(U, axis=1) ** 2))


def test_structural_ops_and_ops_run_per_member():
    x = np.linspace(0.05, 0.95, 12)
    tape = ad.record(structural_zoo, x)
    X = nearby(x, 3, 0, scale=0.003)
    V = np.random.default_rng(8).standard_normal(X.shape)
    assert tape.batched.is_native(3)
    assert_modes_match_the_loop(tape, X, V)


def test_threads_share_a_tape_and_its_batched_programs():
    from concurrent.futures import ThreadPoolExecutor
    x = np.linspace(0.1, 1.0, 42)
    tape = ad.record(heat_residual, x)
    batches = [nearby(x, 2 + k % 3, k) for k in range(12)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(tape.batched.gradient, batches))
    for X, G in zip(batches, results):
        assert_same(G, loop(tape.gradient, X))


def test_the_batch_size_of_a_program_is_checked():
    tape = ad.record(heat_residual, np.linspace(0.1, 1.0, 42))
    for batch in (0, -2, 1.5, None):
        with pytest.raises(BatchShapeError, match="integer >= 1"):
            tape.batched.is_native(batch)


def test_sums_and_cumsums_over_an_inner_axis_add_in_order():
    """A batched program sums with the batch innermost; those sums add rows
    in turn and must give, bit for bit, the running sum down each column
    (NaN, infinities and -0.0 included)."""
    A = np.random.default_rng(9).standard_normal((17, 3, 5))
    A[2, 1, 3], A[4, 0, 0], A[:, 2, 2] = np.nan, np.inf, -0.0
    running = np.zeros((3, 5))
    partial = []
    for row in A:
        running = running + row
        partial.append(running)
    for f, want in ((lambda a: np.sum(a, axis=0), running),
                    (lambda a: np.cumsum(a, axis=0), np.stack(partial))):
        got = ad.record(f, A).forward(A)
        np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def test_results_of_one_call_are_not_changed_by_the_next():
    x = np.linspace(0.1, 1.0, 42)
    tape = ad.record(heat_residual, x)
    X1, X2 = nearby(x, 4, 1), nearby(x, 4, 2)
    V = np.ones_like(X1)
    first = (tape.batched.gradient(X1), tape.batched.jvp(X1, V), tape.batched.hvp(X1, V),
             tape.batched.forward(X1))
    for _ in range(2):
        tape.batched.gradient(X2), tape.batched.jvp(X2, V), tape.batched.hvp(X2, V)
    assert_same(first, (loop(tape.gradient, X1), loop(tape.jvp, X1, V), loop(tape.hvp, X1, V),
                        loop(tape.forward, X1)))
    X1[:] = 0.0                                 # nor do the inputs alias the results
    assert_same(first[0], loop(tape.gradient, nearby(x, 4, 1)))


def test_scalar_inputs_and_nested_lists():
    tape = ad.record(lambda t: np.sin(t) * t ** 2, 0.5)
    T = [0.1, 0.5, 2.0]                                 # a list of B scalars
    assert_same(tape.batched.gradient(T), loop(tape.gradient, np.array(T)))
    assert_same(tape.batched.forward(T), loop(tape.forward, np.array(T)))
    vector = ad.record(lambda x: np.sum(x ** 3), np.ones(2))
    assert_same(vector.batched.gradient([[1.0, 2.0], [3.0, 4.0]]),
                loop(vector.gradient, np.array([[1.0, 2.0], [3.0, 4.0]])))
