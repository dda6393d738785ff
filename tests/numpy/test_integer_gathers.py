"""Integer data recorded from active values: ``x.astype(int)`` and integer
arithmetic on it are recomputed by every replay, and indexing an active
array with them is a gather whose indices the replay reads (GATHER_AT),
bounds-checked there. Each test replays one recording at points where the
integers differ from the recording's and compares with a fresh NumPy
evaluation and with finite differences."""
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from adsim._np.recorded_arrays import IntegerArray
from fdcheck import fd_jacobian

X0 = np.array([0.3, 1.1, 2.7, 1.9, 0.6, 3.4])
POINTS = [np.array([2.2, 0.4, 1.7, 3.43, 2.9, 0.1]), np.array([3.6, 3.2, 0.45, 0.8, 1.3, 2.2]),
          np.array([1.4, 2.6, 3.1, 0.2, 0.7, 1.6])]          # away from integer jumps


def fd_grad(f, x):
    return fd_jacobian(f, [x]).reshape(x.shape)


def semi_lagrangian(u):
    """Linear interpolation of u at departure points (a periodic grid)."""
    n = u.size
    xd = np.arange(n) - 0.8 * u
    j = np.floor(xd).astype(int)
    w = xd - j
    return np.sum(((1.0 - w) * u[j % n] + w * u[(j + 1) % n]) ** 2)


def integer_arithmetic(x):
    i = np.floor(x).astype(int)
    k = np.clip(2 * i - 1, 0, 5)
    m = np.maximum(abs(-i) // 2, np.minimum(i % 4, 3))
    return np.sum(x[k] * x) + np.sum(np.take(x, m) ** 2) + np.sum(i * 0.5 * x) + np.sum(x / (i + 1))


def axes(x):
    X = x.reshape(2, 3)
    i = np.floor(X[0]).astype(int) % 3
    return np.sum(X[:, i] ** 2) + np.sum(X[1, i] * X[0]) + np.sum(np.take(X, i[:2], axis=1) * X[:, 1:])


def deposit(x):
    """Cloud-in-cell deposition of particles at x on a periodic grid."""
    rho = np.zeros(6)
    cell = np.floor(x).astype(int)
    w = x - cell
    np.add.at(rho, cell, 1.0 - w)
    np.add.at(rho, (cell + 1) % 6, w)
    np.subtract.at(rho, cell % 3, 0.1 * w ** 2)
    return np.sum(rho ** 2 * np.arange(1.0, 7.0))


def assign(x):
    """Writes at integer data, repeated indices included (the last wins)."""
    u = x * 1.0
    j = np.floor(x * 1.7).astype(int) % 5
    u[j] = x[:j.size] ** 2
    u[j] += 3.0 * x[::-1][:j.size]
    U = np.outer(x[:3], x[:4])
    k = np.floor(x[:2]).astype(int) % 4
    U[:, k] = 0.5 * U[:, k] ** 2
    U[1, k] = -x[:2]
    U[1:][0, k[::-1]] *= 2.0                     # through a view
    return np.sum(u[:5] * np.arange(5.0)) + np.sum(np.sin(U))


FUNCTIONS = [semi_lagrangian, integer_arithmetic, axes, deposit, assign]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_one_recording_replays_where_the_integers_differ(f):
    tape = ad.record(f, X0)
    for x in POINTS:
        assert np.isclose(tape.forward(x), f(x.copy()), rtol=1e-13)
        grad = tape.gradient(x)
        np.testing.assert_allclose(grad, fd_grad(f, x), rtol=1e-6, atol=1e-8)
        # forward mode, column by column, agrees to rounding
        np.testing.assert_allclose([ad.jvp(f, x, e)[1] for e in np.eye(x.size)], grad,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_modes_agree_through_recorded_gathers(f):
    x = POINTS[1]
    v = np.linspace(-0.3, 0.4, x.size)
    g = ad.grad(f)
    y, t = ad.jvp(f, x, v)
    assert np.isclose(t, g(x) @ v, rtol=1e-12)
    h = 1e-6
    np.testing.assert_allclose(ad.hvp(f, x, v), (g(x + h * v) - g(x - h * v)) / (2 * h),
                               rtol=1e-5, atol=1e-6)
    # third order: the gather's indices are values of the outer recording
    cubic = ad.grad(lambda y: ad.hvp(f, y, v) @ v)(x)
    np.testing.assert_allclose(cubic, fd_grad(lambda y: ad.hvp(f, y, v) @ v, x),
                               rtol=1e-5, atol=1e-6)


def test_astype_int_gives_recorded_integer_data():
    seen = {}

    def f(x):
        i = x.astype(int)
        seen["i"] = i
        seen["float"] = (i + 0.5, i / 2, np.sin(i), i.astype(float))
        seen["int"] = (i + 1, i - 3, 2 * i, -i, abs(i), i // 3, i % 4, np.clip(i, 0, 2), i[1:])
        return np.sum(x)

    ad.grad(f)(np.array([1.5, -2.5, 3.2]))
    assert isinstance(seen["i"], IntegerArray) and seen["i"].dtype == np.int64
    assert all(isinstance(v, ad.Active) for v in seen["float"])
    assert all(isinstance(v, IntegerArray) for v in seen["int"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-9.0, 9.0), min_size=4, max_size=4),
       st.lists(st.floats(-9.0, 9.0), min_size=4, max_size=4),
       st.integers(1, 5), st.integers(-4, 4))
def test_integer_arithmetic_replays_as_numpy_computes_it(a, b, d, c):
    """Values of integer expressions, recorded at one point and replayed at
    another, equal NumPy's on int64 at the second point."""
    def f(x):
        i = x.astype(int)
        j = (i * c - 3) // d + abs(i) % d - np.minimum(i, c) + np.maximum(-i, 1)
        return np.sum(j * 1.0) + np.sum(np.clip(j, -5, 7) * 0.5)

    tape = ad.record(f, np.array(a))
    x = np.array(b)
    assert tape.forward(x) == f(x)


def test_indices_out_of_bounds_at_a_replay_raise_index_errors():
    def f(x):
        return np.sum(x[np.floor(x).astype(int)] * x)

    x = np.array([0.5, 2.5, 1.2, 2.9])
    tape = ad.record(f, x)
    far = np.array([0.5, 7.5, 1.2, 2.9])
    with pytest.raises(ad.IndexOutOfBounds) as caught:
        tape.gradient(far)
    assert isinstance(caught.value, IndexError) and isinstance(caught.value, ad.BranchChanged)
    with pytest.raises(ad.IndexOutOfBounds):
        tape.forward(far)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        ad.grad(f)(far)                     # records again: NumPy's own error
    # negative indices count from the end, as in NumPy; below -n is out
    np.testing.assert_allclose(tape.forward(np.array([-0.5, -3.5, 1.2, 2.9])),
                               f(np.array([-0.5, -3.5, 1.2, 2.9])), rtol=1e-14)
    with pytest.raises(ad.IndexOutOfBounds):
        tape.forward(np.array([-4.5, 1.5, 1.2, 2.9]))


def test_values_outside_the_exact_integer_range_leave_the_recorded_path():
    def f(x):
        return np.sum(x[np.floor(x).astype(int) % 3] * x)

    tape = ad.record(f, np.array([0.5, 1.5, 2.5]))
    for bad in (np.nan, np.inf, 2.0 ** 60):
        with pytest.raises(ad.BranchChanged):
            tape.forward(np.array([0.5, bad, 2.5]))


def test_numpy_index_placement():
    """One integer-data index among slices, integers, None and Ellipsis
    gives NumPy's shapes and values."""
    A = np.arange(24.0).reshape(2, 3, 4) / 7.0
    ind = np.array([[2.2, 0.1], [1.7, 3.9]])
    keys = [lambda i: (i,), lambda i: (slice(None), i % 3), lambda i: (Ellipsis, i),
            lambda i: (0, slice(None), i), lambda i: (1, i % 3), lambda i: (None, i % 2, 1),
            lambda i: (slice(None), None, i % 3, slice(1, 3)), lambda i: (i[0] % 2,)]
    for key in keys:
        def f(a, key=key):
            return a[key(np.floor(ad.value(a[0, 0, :2]).reshape(1, 2) * 0 + ind).astype(int) % 2)]
        want = A[key(np.floor(ind).astype(int) % 2)]
        got = ad.record(f, A).forward(A)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_checkpointed_step_with_integer_data_is_recorded_once():
    calls = []

    def step(u, c):
        calls.append(1)
        n = u.size
        j = np.floor(np.arange(n) - c * u).astype(int) % n
        return 0.5 * (u + u[j])

    def f(c, u0=np.linspace(0.2, 1.8, 8)):
        return np.sum(ad.checkpoint_loop(step, u0, 30, args=(c,)) ** 2)

    def plain(c, u0=np.linspace(0.2, 1.8, 8)):
        u = u0.copy()
        for _ in range(30):
            u = step(u, c)
        return np.sum(u ** 2)

    c = np.array(1.3)
    value, grad = ad.value_and_grad(f)(c)
    recorded = len(calls)
    assert recorded <= 3          # the step tape is recorded once, its indices replayed
    assert np.isclose(value, plain(c), rtol=1e-13)
    h = 1e-6
    assert np.isclose(grad, (plain(c + h) - plain(c - h)) / (2 * h), rtol=1e-6)


def test_plain_uses_of_integer_data_are_guarded():
    """Where NumPy turns integer data into a plain array (a plain table,
    comparisons, Python ints), the value is guarded: a replay where it
    differs raises BranchChanged, and the functional API follows."""
    table = np.linspace(0.0, 3.0, 5) ** 2

    def f(x):
        i = np.floor(x).astype(int)
        n = int(i[0]) + len([k for k in i if k > 1])
        return np.sum(table[i] * x) * n + np.sum(x[: i[1] + 1])

    x, y = np.array([1.5, 2.5, 3.2]), np.array([2.5, 0.5, 3.2])
    tape = ad.record(f, x)
    with pytest.raises(ad.BranchChanged):
        tape.gradient(y)
    for p in (x, y):
        np.testing.assert_allclose(ad.grad(f)(p), fd_grad(f, p), rtol=1e-7)
    assert f"{ad.record(lambda x: np.sum(x) + len(str(np.floor(x).astype(int))), x).forward(x)}"


def test_integer_data_are_read_only_and_need_no_derivative():
    def write(x):
        i = np.floor(x).astype(int)
        i[0] = 1
        return np.sum(x)

    with pytest.raises(TypeError, match="read-only"):
        ad.grad(write)(np.ones(2))
    # astype(int) has derivative zero: the gradient is the gather's only
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(x.astype(int) * 1.0 + x))(X0),
                               np.ones(X0.size))


def test_tape_file_keeps_recorded_gathers():
    tape = ad.record(semi_lagrangian, X0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "step.adt")
        tape.save(path)
        loaded = ad.load_tape(path)
    for x in POINTS:
        np.testing.assert_array_equal(loaded.gradient(x), tape.gradient(x))


def test_sparsity_of_a_recorded_gather_covers_every_replay():
    def f(x):
        return x[:3][np.floor(np.abs(x[:3])).astype(int) % 3] * x[:3]

    pattern = ad.jacobian_sparsity(f, np.array([0.5, 1.5, 2.5, 0.1])).toarray()
    # each output may read any of x[0:3] at some replay, and multiplies x[k]
    assert pattern[:, :3].all() and not pattern[:, 3].any()
    for x in POINTS:
        np.testing.assert_allclose(ad.sparse_jacobian(f, x[:4]).toarray(),
                                   ad.jacobian(f)(x[:4]), rtol=1e-14)


def test_malformed_gather_at_operands_are_refused():
    from adsim._opcodes import Opcode as Op
    seen = []

    def f(x):
        tape = x.tape
        i = np.floor(x).astype(int)
        for operands in ([x.slot, i.values.slot, 1, 7, 1], [x.slot, i.values.slot, 1, 3, 2],
                         [x.slot, i.values.slot, 1, 3]):
            with pytest.raises(ValueError):
                tape.record_op(int(Op.GATHER_AT), 3, operands)
            seen.append(1)
        return np.sum(x)

    ad.grad(f)(np.array([0.5, 1.5, 2.5]))
    assert len(seen) == 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-2.0, -1.0, -1.0, 0.0, 0.5, 3.0, np.inf, np.nan]), min_size=0,
                max_size=7),
       st.lists(st.sampled_from([-3.0, -1.0, 0.0, 0.25, 0.5, 3.0, 7.0, np.inf, -np.inf, np.nan]),
                min_size=3, max_size=3),
       st.sampled_from(["left", "right"]))
def test_searchsorted_replays_numpy_positions(table, v, side):
    """Recorded searches give np.searchsorted's positions at every replay,
    duplicates, infinities and NaN (sorted last) included."""
    table = np.sort(np.array(table, dtype=float))

    def f(x):
        return np.sum(np.searchsorted(table, x, side=side) * 1.0)

    tape = ad.record(f, np.array([0.1, 0.2, 0.3]))
    x = np.array(v)
    assert tape.forward(x) == np.sum(np.searchsorted(table, x, side=side))


def test_interpolation_in_a_table_replays_across_cells():
    xp = np.linspace(0.0, 5.0, 11)
    fp = np.sin(xp) * xp

    def f(x):
        return np.sum(np.interp(x, xp, fp) ** 2) + np.sum(np.digitize(x, xp) * 0.5 * x)

    tape = ad.record(f, np.array([0.33, 1.7, 4.2, 2.9]))
    for x in (np.array([3.1, 0.2, 1.1, 4.9]), np.array([2.35, 2.45, 0.05, 3.3]),
              np.array([-1.0, 1.3, 6.1, 2.2])):               # below and above the table too
        assert np.isclose(tape.forward(x), f(x), rtol=1e-14)
        np.testing.assert_allclose(tape.gradient(x), fd_grad(f, x), rtol=1e-6, atol=1e-8)


def test_writes_at_integer_data_follow_numpy():
    """u[i] = v keeps the last of repeated writes, u[i] += v applies once
    (buffered), np.add.at every time: replayed values equal NumPy's."""
    def f(x):
        i = np.floor(x).astype(int)
        a, b, c = np.zeros(4), np.zeros(4), np.zeros(4)
        a[i] = x
        b[i] += x
        np.add.at(c, i, x)
        return np.sum(a * 1.0 + b * 10.0 + c * 100.0)

    tape = ad.record(f, np.array([0.5, 1.5, 2.5, 3.5]))
    for x in (np.array([1.5, 1.25, 1.75, 0.5]), np.array([3.5, 3.25, -0.5, -3.5])):
        assert tape.forward(x) == f(x)
        np.testing.assert_allclose(tape.gradient(x), fd_grad(f, x), rtol=1e-7)
    with pytest.raises(ad.IndexOutOfBounds):
        tape.forward(np.array([0.5, 4.5, 2.5, 3.5]))
