"""Sparse matrices assembled from active values, as users build them
(``coo_matrix((v, (i, j)))``, ``csr_matrix((v, indices, indptr))``,
``diags(v, offsets)``, ``sparse.kron``, sums, scales, ``multiply``, ``.T``,
row and column selection) and then multiplied or solved: every sweep
against SciPy's values and central differences (fdcheck.check_tape), the
dense equivalent, exact sparsity patterns, refusals naming the operation,
and a finite-element program assembling its stiffness matrix with
``coo_matrix`` and solving with ``spsolve``."""
import io

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import adsim as ad
from adsim.sparse.pattern import jacobian_pattern
from adsim.testing import check_grads
from fdcheck import assert_close, check_tape

N = 5
ROWS = np.array([0, 1, 2, 3, 4, 0, 2, 4, 2])
COLS = np.array([0, 1, 2, 3, 4, 4, 2, 1, 2])      # (2, 2) three times: summed
X0 = np.linspace(0.4, 1.6, N)
W = np.cos(np.arange(N) + 0.5)

PROGRAMS = {
    "coo_matrix @ x": lambda v: sp.coo_matrix((np.concatenate([v, v[:4] ** 2]), (ROWS, COLS)),
                                              shape=(N, N)) @ np.sin(v),
    "coo_array @ constant": lambda v: sp.coo_array((np.concatenate([v, np.exp(v[:4])]),
                                                    (ROWS, COLS)), shape=(N, N)) @ W,
    "csr_matrix (v, indices, indptr)": lambda v: sp.csr_matrix(
        (v ** 2, np.array([1, 0, 3, 2, 4]), np.array([0, 2, 2, 4, 5, 5])), shape=(N, N)) @ v,
    "csc_matrix (v, indices, indptr)": lambda v: sp.csc_matrix(
        (v ** 2, np.array([1, 0, 3, 2, 4]), np.array([0, 2, 2, 4, 5, 5])), shape=(N, N)).T @ W,
    "diags(v)": lambda v: sp.diags(v) @ v,
    "diags three": lambda v: sp.diags([v[1:], 2.0 + v ** 2, v[:-1] * v[1:]], [-1, 0, 1]) @ W,
    "diags_array": lambda v: sp.diags_array(np.exp(v), offsets=0) @ v,
    "kron": lambda v: (sp.kron(sp.diags(v[:2]), sp.csr_matrix(np.array([[1.0, 2.0],
                                                                         [0.0, 3.0]])))
                       @ np.arange(4.0)),
    "kron of two active": lambda v: sp.kron(sp.diags(v[:2]),
                                            sp.diags(v[2:4] ** 2)).toarray().ravel(),
    "A + B, A - c B, -A": lambda v: ((sp.diags(v) + sp.eye(N) * 3.0
                                      - v[0] * sp.diags(v[:-1] ** 2, 1)) @ W
                                     - (-sp.diags(v)) @ v),
    "A * c, c * A, A / c": lambda v: ((sp.diags(v) * v[1]) @ W + (v[2] * sp.diags(v ** 2)) @ W
                                      + (sp.diags(v) / v[3]) @ v),
    "constant sparse * active scalar": lambda v: (sp.eye(N, format="csr") * v[0]) @ v,
    "multiply by a dense array": lambda v: sp.diags([v[1:], v], [1, 0]).multiply(
        np.outer(W, W)) @ v,
    "multiply by an active column": lambda v: sp.coo_matrix(
        (v[:3], ([0, 1, 4], [2, 2, 0])), shape=(N, N)).multiply(v[:, None]) @ W,
    ".T, .tocsr(), x @ A": lambda v: (v @ sp.diags([v[1:], v], [1, 0]).tocsr()
                                      + sp.diags([v[1:], v], [1, 0]).T.tocsc() @ v),
    "abs, diagonal, toarray": lambda v: np.concatenate([
        abs(sp.diags(np.sin(3.0 * v))).diagonal(), sp.diags(v[:-1], 1).diagonal(1),
        sp.coo_matrix((v, (ROWS[:5], COLS[:5]))).toarray()[0]]),
    "sum": lambda v: np.concatenate([
        np.ravel(sp.coo_matrix((v, (ROWS[4:], COLS[4:])), shape=(N, N)).sum(axis=0)),
        sp.coo_array((v, (ROWS[4:], COLS[4:])), shape=(N, N)).sum(axis=1),
        [sp.diags(v ** 2).sum()]]),
    "row and column selection": lambda v: sp.diags([v[1:], v + 3.0, v[1:]], [-1, 0, 1]
                                                   ).tocsr()[1:][:, 1:] @ W[1:],
    "spsolve(A(v), b)": lambda v: spsolve(sp.diags([v[1:], 4.0 + v ** 2, -v[:-1]], [-1, 0, 1],
                                                   format="csc"), np.cos(v)),
    "spsolve(A(v), constant b) 2-d": lambda v: spsolve(
        sp.diags([v[1:], 4.0 + v, -v[:-1]], [-1, 0, 1], format="csc"),
        np.stack([W, W ** 2], axis=1)).ravel(),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_sweep(name):
    check_tape(PROGRAMS[name], [X0], value_rtol=1e-12)


def _dense_coo(v):
    D = np.zeros((N, N))
    np.add.at(D, (ROWS, COLS), np.concatenate([v, v[:4] ** 2]))
    return D


def test_duplicates_are_summed_and_the_gradient_equals_the_dense_one():
    f = lambda v: np.sum(np.tanh(sp.coo_matrix((np.concatenate([v, v[:4] ** 2]),  # noqa: E731
                                                (ROWS, COLS)), shape=(N, N)) @ v))
    d = lambda v: np.sum(np.tanh(_dense_coo(v) @ v))  # noqa: E731
    assert_close(f(X0), d(X0), 1e-14, 1e-14, "value")
    assert_close(ad.grad(f)(X0), ad.grad(d)(X0), 1e-13, 1e-13, "gradient")
    assert_close(ad.hvp(f, X0, W), ad.hvp(d, X0, W), 1e-12, 1e-12, "hvp")


def test_jacobian_pattern_of_an_assembled_matrix_times_a_constant():
    """y = A(v) w with A = diags(v): y_i = v_i w_i, a diagonal Jacobian; with
    a tridiagonal A(v) of three diagonals, a banded one."""
    tape = ad.record(lambda v: sp.diags(v) @ W, X0)
    assert np.array_equal(jacobian_pattern(tape).toarray(), np.eye(N, dtype=bool))
    tape = ad.record(lambda v: sp.diags([v[1:], v, v[:-1]], [-1, 0, 1]) @ W, X0)
    J = ad.jacobian(lambda v: sp.diags([v[1:], v, v[:-1]], [-1, 0, 1]) @ W)(X0)
    assert np.array_equal(jacobian_pattern(tape).toarray(), J != 0)


def test_hessian_pattern_of_a_product_with_its_own_values():
    """y = A(v) v with entries (i_p, j_p) of values v_p: d2 y / dv_p dv_j_p
    is nonzero; the pattern is exactly that of the Hessian computed."""
    from adsim.sparse.pattern import hessian_pattern
    rows, cols = np.array([0, 1, 3, 4, 2]), np.array([2, 1, 0, 4, 3])
    f = lambda v: np.sum(W * (sp.coo_matrix((v, (rows, cols)), shape=(N, N)) @ v))  # noqa: E731
    tape = ad.record(f, X0)
    H = ad.hessian(f)(X0)
    assert np.array_equal(hessian_pattern(tape).toarray(), H != 0)


def test_third_derivatives_of_an_active_solve():
    f = lambda v: np.sum(np.sin(spsolve(sp.diags([v[1:], 4.0 + v, -v[:-1]], [-1, 0, 1],  # noqa: E731
                                                 format="csc"), W)))
    d = lambda v: np.sum(np.sin(np.linalg.solve(  # noqa: E731
        np.diag(v[1:], -1) + np.diag(4.0 + v) - np.diag(v[:-1], 1), W)))
    w, u = np.cos(np.arange(N)), np.linspace(1.0, -1.0, N)

    def third(h):
        return ad.grad(lambda y: ad.grad(lambda z: ad.grad(h)(z) @ w)(y) @ u)(X0)
    assert_close(third(f), third(d), 1e-10, 1e-12, "third derivative")


def test_tape_files_and_replay_of_an_active_solve():
    f = lambda v: np.sum(spsolve(sp.diags([v[1:], 4.0 + v, -v[:-1]], [-1, 0, 1],  # noqa: E731
                                          format="csc"), np.cos(v)) ** 2)
    tape = ad.record(f, X0)
    buffer = io.BytesIO()
    tape.save(buffer)
    loaded = ad.load_tape(io.BytesIO(buffer.getvalue()))
    x = X0[::-1] * 1.1
    for t in (tape, loaded):
        value, grad = t.value_and_gradient(x)
        assert_close(value, f(x), 1e-13, 1e-13, "replayed value")
        assert_close(grad, ad.grad(f)(x), 1e-12, 1e-12, "replayed gradient")


def test_refusals_name_the_operation():
    with pytest.raises(ad.errors.UnsupportedAttribute, match="`data`"):
        ad.grad(lambda v: np.sum(sp.diags(v).data))(X0)
    with pytest.raises(ad.errors.UnsupportedOperation, match="matrix power"):
        ad.grad(lambda v: np.sum((sp.diags(v) ** 2).toarray()))(X0)
    with pytest.raises(ad.errors.UnsupportedOperation, match="indices must be plain"):
        ad.grad(lambda v: np.sum(sp.coo_matrix((v, (v, np.arange(N)))) @ W))(X0)
    with pytest.raises(ad.errors.UnsupportedOperation, match="spilu"):    # (splu solves)
        ad.grad(lambda v: np.sum(__import__("scipy.sparse.linalg").sparse.linalg.spilu(
            sp.diags(v, format="csc")).solve(W)))(X0)


def bar_stiffness(log_modulus, n_elements):
    """Assemble the stiffness matrix of a 1-d bar of linear elements with
    per-element Young's moduli exp(log_modulus), the usual way."""
    h = 1.0 / n_elements
    rows, cols, data = [], [], []
    local = np.array([[1.0, -1.0], [-1.0, 1.0]])
    for e in range(n_elements):
        dofs = [e, e + 1]
        ke = np.exp(log_modulus[e]) / h * local
        for a in range(2):
            for b in range(2):
                rows.append(dofs[a])
                cols.append(dofs[b])
                data.append(ke[a, b])
    n = n_elements + 1
    return sp.coo_matrix((np.array(data), (rows, cols)), shape=(n, n)).tocsr()


def test_finite_element_bar_compliance():
    """Compliance f^T u of a clamped bar under a distributed load, with u
    solving K(E) u = f on the free degrees of freedom: the gradient with
    respect to the log moduli is -u_e^T k_e u_e (the adjoint formula), and
    matches finite differences."""
    n_el = 8
    load = np.full(n_el + 1, 1.0 / n_el)
    free = np.arange(1, n_el + 1)

    def compliance(log_modulus):
        K = bar_stiffness(log_modulus, n_el)
        u = spsolve(K[free][:, free].tocsc(), load[free])
        return load[free] @ u

    theta = np.sin(np.arange(n_el)) * 0.3
    g = ad.grad(compliance)(theta)
    K = bar_stiffness(theta, n_el).toarray()
    u = np.zeros(n_el + 1)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], load[free])
    h = 1.0 / n_el
    want = np.array([-np.exp(theta[e]) / h * (u[e + 1] - u[e]) ** 2 for e in range(n_el)])
    assert_close(g, want, 1e-11, 1e-13, "compliance gradient against the adjoint formula")
    check_grads(compliance, theta, modes=("fwd", "rev"), order=2)


KRYLOV_METHODS = ("cg", "gmres", "bicgstab", "minres", "lgmres")


@pytest.mark.parametrize("method", KRYLOV_METHODS)
def test_krylov_solves_with_a_matrix_of_active_values(method):
    """x = A(v)^-1 b(v) by each Krylov method: its derivatives solve with the
    same method (on A^T for the adjoint of the unsymmetric ones) to the
    forward solve's tolerance, compared with the dense solve; the tape
    replays and survives a tape file."""
    import scipy.sparse.linalg as spla
    upper = 1.0 if method in ("cg", "minres") else 0.6          # cg, minres: A symmetric
    tight = {"rtol": 1e-13} if method == "minres" else {"rtol": 1e-13, "atol": 0.0}

    def f(v):
        A = sp.diags([-v[1:], 4.0 + v, -upper * v[1:]], [-1, 0, 1], format="csr")
        x, info = getattr(spla, method)(A, np.cos(v), **tight)
        assert info == 0
        return np.sum(np.sin(x)) + x @ W

    def dense(v):
        A = np.diag(-v[1:], -1) + np.diag(4.0 + v) + np.diag(-upper * v[1:], 1)
        x = np.linalg.solve(A, np.cos(v))
        return np.sum(np.sin(x)) + x @ W
    assert_close(ad.grad(f)(X0), ad.grad(dense)(X0), 1e-9, 1e-11, "gradient")
    check_grads(f, X0, order=2, rtol=1e-6)
    tape = ad.record(f, X0)
    buffer = io.BytesIO()
    tape.save(buffer)
    loaded = ad.load_tape(io.BytesIO(buffer.getvalue()))
    x = X0[::-1] * 1.1
    for t in (tape, loaded):
        assert_close(t.gradient(x), ad.grad(dense)(x), 1e-9, 1e-11, "replayed gradient")


def test_an_unconverged_krylov_solve_with_a_matrix_of_active_values_raises():
    import scipy.sparse.linalg as spla
    with pytest.raises(ad.errors.SolverNotConverged, match="gmres did not converge"):
        ad.grad(lambda v: np.sum(spla.gmres(sp.diags(4.0 + v, format="csr") + sp.eye(N, k=1),
                                            W, rtol=1e-15, atol=0.0, maxiter=1,
                                            restart=1)[0]))(X0)
