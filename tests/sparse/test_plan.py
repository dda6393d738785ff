"""Sparse Jacobians and Hessians from compressed sweeps: values equal the
dense derivatives, colorings are valid, plans are reused and follow branch
changes, and the SciPy adapters work."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import adsim
import adsim.coloring as coloring
from adsim.sparse.plan import (choose_jacobian_coloring, jacobian_cost, sparse_hessian,
                               sparse_hessian_plan, sparse_jacobian, sparse_jacobian_plan,
                               split_bicoloring)


def assert_sparse_equal(J, reference, rtol=1e-12):
    assert isinstance(J, sp.csr_array)
    assert J.has_sorted_indices
    reference = np.asarray(reference).reshape(J.shape)
    scale = max(1.0, float(np.abs(reference).max(initial=0.0)))
    np.testing.assert_allclose(J.toarray(), reference, rtol=rtol, atol=1e-13 * scale)


def check_plan(plan):
    """The plan's coloring passes the checker on its pattern."""
    assert coloring.check(plan.pattern, plan.coloring)


# ---------------------------------------------------------------- problems
def bratu1d(u, lam):
    h = 1.0 / (u.shape[0] + 1)
    return np.diff(np.pad(u, 1), 2) + h * h * lam * np.exp(u)


def bratu2d(u, lam):
    k = int(round(np.sqrt(u.shape[0])))
    U = u.reshape(k, k)
    P = np.pad(U, 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return (lap + lam / (k + 1) ** 2 * np.exp(U)).reshape(-1)


def arrow(x):
    return np.concatenate([np.sum(x ** 2, keepdims=True), x[1:] * x[0] + np.sin(x[1:])])


def wide(x):
    """Few outputs depending on many inputs: reverse mode wins."""
    return np.concatenate([np.sum(np.sin(x), keepdims=True), np.sum(x[::2] ** 2, keepdims=True),
                           x[:3] * x[-1]])


RNG = np.random.default_rng(11)
X1 = RNG.uniform(0.1, 0.9, 15)
X2 = RNG.uniform(0.1, 0.9, 36)
X3 = RNG.uniform(0.1, 0.9, 12)
X4 = RNG.uniform(0.1, 0.9, 20)


@pytest.mark.parametrize("F, x, args, mode", [
    (bratu1d, X1, (2.0,), "forward"),
    (bratu2d, X2, (6.0,), "forward"),
    (arrow, X3, (), "bidirectional"),
    (wide, X4, (), "reverse"),
])
def test_sparse_jacobian_equals_dense(F, x, args, mode):
    plan = sparse_jacobian_plan(F, x, *args)
    check_plan(plan)
    assert plan.mode == mode
    J = plan(x, *args)
    assert_sparse_equal(J, adsim.jacobian(F)(x, *args))
    assert J.shape == plan.pattern.shape
    np.testing.assert_array_equal(J.indices, plan.pattern.indices)


@pytest.mark.parametrize("mode", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("F, x", [(bratu1d, X1), (arrow, X3), (wide, X4)])
def test_every_mode_gives_the_same_jacobian(F, x, mode):
    args = (2.0,) if F is bratu1d else ()
    plan = sparse_jacobian_plan(F, x, *args, mode=mode)
    check_plan(plan)
    assert_sparse_equal(plan(x, *args), adsim.jacobian(F)(x, *args))


def test_mode_choice_and_costs():
    tri = sp.diags_array([np.ones(9), np.ones(10), np.ones(9)], offsets=[-1, 0, 1], format="csr")
    assert choose_jacobian_coloring(tri != 0).kind == "column"
    arrowhead = sp.csr_array(np.eye(30) + np.eye(1, 30) + np.eye(30, 1) != 0)
    result = choose_jacobian_coloring(arrowhead)
    assert result.kind == "bicoloring" and result.ncolors <= 3
    assert jacobian_cost(3, 0) < jacobian_cost(0, 3) < jacobian_cost(3, 3)
    with pytest.raises(ValueError, match="unknown Jacobian mode"):
        choose_jacobian_coloring(tri != 0, "sideways")


def test_dense_lines_use_a_split_bicoloring():
    def F(x):          # a dense row, a dense column, and a tridiagonal part
        return np.concatenate([np.sum(x ** 2, keepdims=True), x[1:] * x[0] + np.sin(x[1:]),
                               np.diff(x) ** 2 * x[-1]])
    x = np.random.default_rng(3).uniform(0.1, 0.9, 400)
    plan = sparse_jacobian_plan(F, x)
    check_plan(plan)
    assert plan.mode == "bidirectional" and plan.ncolors <= 5
    assert_sparse_equal(plan(x), adsim.jacobian(F)(x))


@pytest.mark.parametrize("seed", range(4))
def test_split_bicoloring_is_valid(seed):
    rng = np.random.default_rng(seed)
    A = sp.random_array((60, 50), density=0.05, rng=rng, format="lil")
    A[rng.integers(0, 60, 3), :] = 1.0
    A[:, rng.integers(0, 50, 2)] = 1.0
    A = sp.csr_array(A)
    dense = np.diff(A.indptr) > 20
    result = split_bicoloring(A != 0, dense)
    assert coloring.check(A, result)
    J = rng.standard_normal(A.shape) * (A.toarray() != 0)
    recovered = coloring.recover(A, result, J @ result.column_seed(), result.row_seed().T @ J)
    np.testing.assert_allclose(recovered.toarray(), J, atol=1e-14)


def test_value_and_jacobian_share_one_sweep():
    plan = sparse_jacobian_plan(bratu2d, X2, 6.0)
    assert plan.ncolors == 5
    y, J = plan.value_and_jacobian(X2, 6.0)
    np.testing.assert_allclose(y, bratu2d(X2, 6.0), rtol=1e-14)
    assert_sparse_equal(J, adsim.jacobian(bratu2d)(X2, 6.0))


def test_plan_reuse_at_new_points_and_parameters():
    plan = sparse_jacobian_plan(bratu2d, X2, 6.0)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, lam = rng.uniform(-1, 1, X2.shape), float(rng.uniform(1, 7))
        assert_sparse_equal(plan(x, lam), adsim.jacobian(bratu2d)(x, lam))
    assert plan.recordings == 1


def test_branch_change_records_and_detects_again():
    def F(x):
        # the coupling to the next element exists only where x > 0 (a plain
        # mask: a branch of the recording)
        return np.where(np.asarray(x[:-1] > 0), x[:-1] * x[1:], 2.0 * x[:-1])
    x0 = np.array([1.0, 1.0, -1.0, 1.0, 1.0])
    plan = sparse_jacobian_plan(F, x0)
    assert plan.pattern.nnz == 7
    x1 = np.array([1.0, -1.0, -1.0, -1.0, 1.0])
    J = plan(x1)
    assert plan.recordings == 2
    assert plan.pattern.nnz == 5
    check_plan(plan)
    assert_sparse_equal(J, adsim.jacobian(F)(x1))


def test_a_mask_read_at_replay_needs_no_new_recording():
    def F(x):
        return np.where(x[:-1] > 0, x[:-1] * x[1:], 2.0 * x[:-1])
    plan = sparse_jacobian_plan(F, np.array([1.0, 1.0, -1.0, 1.0, 1.0]))
    assert plan.pattern.nnz == 8                  # both sides' couplings
    for x in (np.array([1.0, -1.0, -1.0, -1.0, 1.0]), np.array([2.0, 1.0, 3.0, -1.0, 1.0])):
        assert_sparse_equal(plan(x), adsim.jacobian(F)(x))
    assert plan.recordings == 1


def test_a_hessian_plan_follows_a_new_side_of_maximum():
    """maximum chooses its side at every replay: the plan's pattern holds
    both sides, and a point where a side flips needs no new recording."""
    f = lambda x: np.sum(np.maximum(x[:-1] * x[1:], 0.0)) + np.sum(x ** 2)  # noqa: E731
    x0 = np.array([1.0, 1.0, 1.0, 1.0])
    plan = sparse_hessian_plan(f, x0)
    x1 = np.array([1.0, -1.0, 1.0, 1.0])
    H = plan(x1)
    assert plan.recordings == 1
    assert_sparse_equal(H, adsim.hessian(f)(x1))
    assert_sparse_equal(plan(x0), adsim.hessian(f)(x0))


def test_branch_change_in_a_hessian_plan():
    f = lambda x: np.sum(np.abs(x[:-1] * x[1:])) + np.sum(x ** 2)  # noqa: E731
    x0 = np.array([1.0, 1.0, 1.0, 1.0])
    plan = sparse_hessian_plan(f, x0)
    x1 = np.array([1.0, -1.0, 1.0, 1.0])
    H = plan(x1)
    assert plan.recordings == 2
    assert_sparse_equal(H, adsim.hessian(f)(x1))


def test_constant_and_linear_functions():
    J = sparse_jacobian(lambda x: np.ones(3) * 2.0, np.ones(4))
    assert J.shape == (3, 4) and J.nnz == 0
    plan = sparse_hessian_plan(lambda x: np.sum(3.0 * x), np.ones(4))
    f, g, H = plan.value_gradient_hessian(np.ones(4))
    assert f == 12.0 and H.nnz == 0
    np.testing.assert_array_equal(g, 3.0 * np.ones(4))


def test_jacobian_with_respect_to_another_argument():
    F = lambda a, x: a[0] * np.diff(x) ** 2 + a[1]  # noqa: E731
    a, x = np.array([2.0, 3.0]), X1
    plan = sparse_jacobian_plan(F, a, x, argnum=1)
    assert_sparse_equal(plan(a, x), adsim.jacobian(F, argnums=1)(a, x))
    full = adsim.jacobian(F, argnums=0)(a, x)
    assert_sparse_equal(sparse_jacobian(F, a, x, argnum=0), full)


# ---------------------------------------------------------------- Hessians
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def energy(u):
    k = int(round(np.sqrt(u.shape[0])))
    U = u.reshape(k, k)
    return np.sum(np.diff(U, axis=0) ** 2) + np.sum(np.diff(U, axis=1) ** 2) + np.sum(np.exp(U) * U)


def arrow_energy(x):
    return np.sum(x[0] * x[1:] ** 2) + np.sum(np.cos(x))


@pytest.mark.parametrize("method", ["auto", "star", "acyclic"])
@pytest.mark.parametrize("f, x", [(rosenbrock, X1), (energy, X2), (arrow_energy, X3)])
def test_sparse_hessian_equals_dense(f, x, method):
    plan = sparse_hessian_plan(f, x, method=method)
    check_plan(plan)
    if method != "auto":
        assert plan.coloring.kind == method
    value, gradient, H = plan.value_gradient_hessian(x)
    reference = adsim.hessian(f)(x)
    assert_sparse_equal(H, reference)
    assert (H != H.T).nnz == 0
    np.testing.assert_allclose(value, f(x), rtol=1e-14)
    np.testing.assert_allclose(gradient, adsim.grad(f)(x), rtol=1e-12)
    x_new = x[::-1] * 0.9
    assert_sparse_equal(plan(x_new), adsim.hessian(f)(x_new))
    assert plan.recordings == 1


def test_sparse_hessian_one_shot_and_errors():
    assert_sparse_equal(sparse_hessian(rosenbrock, X1), adsim.hessian(rosenbrock)(X1))
    with pytest.raises(ValueError, match="scalar"):
        sparse_hessian_plan(lambda x: x * 2.0, X1)
    with pytest.raises(ValueError, match="unknown Hessian method"):
        sparse_hessian_plan(rosenbrock, X1, method="greedy")
    with pytest.raises(ValueError, match="argnum"):
        sparse_jacobian_plan(bratu1d, X1, 2.0, argnum=2)


# ---------------------------------------------------------------- SciPy adapters
def test_as_ivp_jac_with_time_argument():
    def rhs(t, y):
        return -np.cos(t) * y ** 3 + np.concatenate([y[1:], y[:1]]) - y
    y0 = np.linspace(0.5, 1.0, 8)
    jac = sparse_jacobian_plan(rhs, 0.0, y0, argnum=1).as_ivp_jac()
    J = jac(0.3, y0)
    assert isinstance(J, sp.csc_array)
    assert_sparse_equal(sp.csr_array(J), adsim.jacobian(rhs, argnums=1)(0.3, y0))
    ours = solve_ivp(rhs, (0.0, 2.0), y0, method="BDF", jac=jac, rtol=1e-8, atol=1e-10)
    plain = solve_ivp(rhs, (0.0, 2.0), y0, method="BDF", rtol=1e-8, atol=1e-10)
    assert ours.success and plain.success
    np.testing.assert_allclose(ours.y[:, -1], plain.y[:, -1], rtol=1e-5)
    assert jac.plan.recordings == 1


def test_as_ivp_jac_autonomous():
    F = lambda y: -y ** 3 + np.roll(y, 1) - y  # noqa: E731
    jac = sparse_jacobian_plan(F, np.ones(6)).as_ivp_jac(format="csr")
    assert_sparse_equal(jac(1.0, np.full(6, 0.5)), adsim.jacobian(F)(np.full(6, 0.5)))


# ---------------------------------------------------------------- random sparse functions
def _random_sparse_function(seed, n, m):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=min(1.0, 2.5 / n), rng=rng).toarray()
    idx = rng.integers(0, n, size=(m, 2))
    dense_row = rng.integers(0, 2)

    def F(x):
        y = A @ np.sin(x) + x[idx[:, 0]] * np.exp(0.3 * x[idx[:, 1]])
        if dense_row:
            y = np.concatenate([y[:-1], np.sum(x ** 2, keepdims=True)])
        return y
    return F


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 16), st.integers(4, 40), st.integers(2, 40),
       st.sampled_from(["auto", "forward", "reverse", "bidirectional"]))
def test_random_sparse_jacobians_are_recovered(seed, n, m, mode):
    F = _random_sparse_function(seed, n, m)
    x = np.random.default_rng(seed).uniform(-1, 1, n)
    plan = sparse_jacobian_plan(F, x, mode=mode)
    check_plan(plan)
    assert_sparse_equal(plan(x), adsim.jacobian(F)(x))
    x2 = x + 0.25
    assert_sparse_equal(plan(x2), adsim.jacobian(F)(x2))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 16), st.integers(3, 30), st.sampled_from(["star", "acyclic"]))
def test_random_sparse_hessians_are_recovered(seed, n, method):
    F = _random_sparse_function(seed, n, n)
    f = lambda x: np.sum(np.cos(F(x))) + np.sum(x[1:] * x[:-1] ** 2)  # noqa: E731
    x = np.random.default_rng(seed).uniform(-1, 1, n)
    plan = sparse_hessian_plan(f, x, method=method)
    check_plan(plan)
    assert_sparse_equal(plan(x), adsim.hessian(f)(x), rtol=1e-10)


def test_a_plan_shared_by_threads_matches_serial_results_across_branch_changes():
    from concurrent.futures import ThreadPoolExecutor

    def F(u):
        out = np.zeros_like(u)
        out[:-5] = np.where(u[:-5] > 0, u[:-5] * u[5:], np.sin(u[:-5]))
        out[-5:] = u[-5:] ** 2
        return out
    rng = np.random.default_rng(3)
    points = [rng.standard_normal(400) for _ in range(6)]
    want = [adsim.sparse_jacobian(F, p).toarray() for p in points]
    plan = adsim.sparse_jacobian_plan(F, points[0])
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda k: plan(points[k % 6]).toarray(), range(36)))
    for k, J in enumerate(got):
        np.testing.assert_array_equal(J, want[k % 6])
