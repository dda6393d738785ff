"""Constant scipy.sparse matrices times active arrays, written as users write
them (``L @ u``, ``L.dot(u)``, ``L.T @ u``, ``u @ L``, ``np.dot(L, u)``,
``L * u``, ``L @ U``), in every format: every sweep of the tape against
SciPy's own product and central differences (fdcheck.check_tape), the
gradient against the dense equivalent, exact sparsity patterns, third
derivatives, replay at new points, tape files, and one stored copy of a
matrix used in every step of a loop."""
import io

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

import adsim as ad
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
from fdcheck import assert_close, check_tape

N = 6
RNG = np.random.default_rng(3)
LAPLACIAN = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(N, N), format="csr")
# a non-symmetric rectangular matrix with an explicit zero and an empty row
RECT = sp.csr_matrix(np.array([[1.0, 0.0, 2.0, 0.0, 0.0, -1.0],
                               [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                               [0.5, 3.0, 0.0, 0.0, 1.5, 0.0],
                               [0.0, 0.0, 0.0, -2.0, 0.0, 0.25]]))
RECT.data[RECT.data == 0.5] = 0.0          # stored, but zero
U0 = np.linspace(0.3, 1.4, N)


def formats(matrix):
    return {"csr": matrix.tocsr(), "csc": matrix.tocsc(), "coo": matrix.tocoo(),
            "dia": matrix.todia(), "bsr": matrix.tobsr(), "lil": matrix.tolil(),
            "csr_array": sp.csr_array(matrix), "csc_array": sp.csc_array(matrix)}


IDIOMS = {
    "L @ u": lambda L, u: L @ u,
    "L.dot(u)": lambda L, u: L.dot(u),
    "L.T @ u": lambda L, u: L.T @ (L @ u),
    "u @ L": lambda L, u: (L @ u) @ L,
    "L @ U": lambda L, u: (L @ np.stack([u, u ** 2], axis=1)).ravel(),
    "U^T @ L": lambda L, u: (np.stack([u, np.sin(u)]) @ L.T).ravel(),
    "aslinearoperator": lambda L, u: aslinearoperator(L) @ u,
    "aslinearoperator matvec, rmatvec": lambda L, u: aslinearoperator(L).rmatvec(
        aslinearoperator(L).matvec(u)),
}


@pytest.mark.parametrize("idiom", IDIOMS)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "csr_array"])
def test_idioms_in_every_sweep(idiom, fmt):
    L = formats(LAPLACIAN + sp.diags([0.5], [2], shape=(N, N)))[fmt]
    product = IDIOMS[idiom]
    check_tape(lambda u: np.sin(product(L, u)) * np.sum(u), [U0])


@pytest.mark.parametrize("fmt", list(formats(RECT)))
def test_rectangular_matrix_with_explicit_zeros_and_an_empty_row(fmt):
    R = formats(RECT)[fmt]
    check_tape(lambda u: np.tanh(R @ u) + (R.T @ np.cos(R @ u)).sum(), [U0])


def test_np_dot_of_a_sparse_matrix_is_the_matrix_product():
    """(NumPy itself makes an object array of it; recorded, it is L @ u.)"""
    L = LAPLACIAN.tocsc()
    f = lambda u: np.sin(np.dot(L, u)) + np.dot(u, L)  # noqa: E731
    tape = ad.record(f, U0)
    x = np.cos(np.arange(N))
    assert_close(tape.forward(x), np.sin(L @ x) + x @ L, 1e-15, 1e-15, "value")
    J = ad.jacobian(f)(x)
    assert_close(J, np.cos(L @ x)[:, None] * L.toarray() + L.toarray().T, 1e-14, 1e-14,
                 "Jacobian")


def test_spmatrix_star_is_the_matrix_product():
    L = sp.csr_matrix(LAPLACIAN)
    check_tape(lambda u: (L * u) ** 2 + np.asarray(u * L), [U0])


def test_gradient_equals_the_dense_equivalent():
    L, D = LAPLACIAN, LAPLACIAN.toarray()

    def energy(u, A):
        return 0.5 * u @ (A @ u) + np.sum(np.exp(-u) * (A.T @ u) ** 2)
    g_sparse = ad.grad(lambda u: energy(u, L))(U0)
    g_dense = ad.grad(lambda u: energy(u, D))(U0)
    assert_close(g_sparse, g_dense, 1e-13, 1e-13, "sparse against dense gradient")
    h_sparse = ad.hvp(lambda u: energy(u, L), U0, np.ones(N))
    h_dense = ad.hvp(lambda u: energy(u, D), U0, np.ones(N))
    assert_close(h_sparse, h_dense, 1e-13, 1e-13, "sparse against dense hvp")


def test_jacobian_pattern_is_the_matrix_pattern():
    R = RECT.tocsc()
    tape = ad.record(lambda u: R @ u, U0)
    want = (RECT.toarray() != 0)
    assert np.array_equal(jacobian_pattern(tape).toarray(), want)
    tape = ad.record(lambda u: u @ RECT.T, U0)            # the same, through u @ R^T
    assert np.array_equal(jacobian_pattern(tape).toarray(), want)


def test_hessian_pattern_of_a_quadratic_form_and_of_a_product():
    L = LAPLACIAN
    tape = ad.record(lambda u: np.sum((L @ u) ** 2), U0)
    want = ((abs(L).T @ abs(L)).toarray() != 0)
    assert np.array_equal(hessian_pattern(tape).toarray(), want)
    tape = ad.record(lambda u: np.sum(u * (L @ u)), U0)   # u_i L_ij u_j: the pattern of L + L^T
    want = ((abs(L) + abs(L).T).toarray() != 0)
    assert np.array_equal(hessian_pattern(tape).toarray(), want)


def test_third_derivatives_through_the_transcription():
    L = LAPLACIAN.tocsc()
    f = lambda u: np.sum(np.sin(L @ u) * u)  # noqa: E731
    g = lambda u: np.sum(np.sin(LAPLACIAN.toarray() @ u) * u)  # noqa: E731
    w, v = np.linspace(-1.0, 1.0, N), np.cos(np.arange(N))
    third = ad.grad(lambda y: ad.grad(lambda z: ad.grad(f)(z) @ w)(y) @ v)(U0)
    dense = ad.grad(lambda y: ad.grad(lambda z: ad.grad(g)(z) @ w)(y) @ v)(U0)
    assert_close(third, dense, 1e-12, 1e-12, "third derivative")


def test_replay_at_new_points_and_tape_files():
    L = sp.csc_matrix(LAPLACIAN)
    f = lambda u: np.sum(np.sin(L @ u) ** 2 + (u @ L) * u)  # noqa: E731
    tape = ad.record(f, U0)
    buffer = io.BytesIO()
    tape.save(buffer)
    loaded = ad.load_tape(io.BytesIO(buffer.getvalue()))
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal(N)
        want = ad.grad(lambda u: np.sum(np.sin(L.toarray() @ u) ** 2 +
                                        (u @ L.toarray()) * u))(x)
        for t in (tape, loaded):
            value, grad = t.value_and_gradient(x)
            assert_close(value, f(x), 1e-14, 1e-14, "replayed value")
            assert_close(grad, want, 1e-13, 1e-13, "replayed gradient")


def test_a_matrix_used_in_every_step_is_stored_once():
    n = 200
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
    u0 = np.sin(np.linspace(0.0, np.pi, n))

    def heat(u, steps=50, dt=0.2):
        for _ in range(steps):
            u = u + dt * (L @ u)
        return np.sum(u ** 2)
    tape = ad.record(heat, u0)
    stats = tape.stats()
    assert stats["ops"]["SPMV"] == 50
    assert stats["bytes"]["indices"] == 4 * (n + 1 + L.nnz)       # one pattern
    assert stats["bytes"]["constants"] < 8 * (L.nnz + 100)       # one copy of the values
    check = ad.grad(lambda u: heat(u, 3))(u0)
    dense = ad.grad(lambda u: _dense_heat(L.toarray(), u, 3))(u0)
    assert_close(check, dense, 1e-12, 1e-12, "gradient of the heat equation")


def _dense_heat(A, u, steps, dt=0.2):
    for _ in range(steps):
        u = u + dt * (A @ u)
    return np.sum(u ** 2)


def test_a_matrix_changed_in_place_is_stored_again():
    L = LAPLACIAN.copy()

    def f(u):
        first = L @ u
        L.data *= 2.0                    # the user rescales the matrix between products
        second = L @ u
        L.data /= 2.0
        return first + second
    tape = ad.record(f, U0)
    J = tape.jacobian(U0)
    assert_close(J, 3.0 * LAPLACIAN.toarray(), 1e-15, 1e-15, "Jacobian")


def test_refusals_name_the_operation():
    with pytest.raises(ad.errors.UnsupportedOperation, match="complex"):
        ad.grad(lambda u: np.sum(np.real(sp.csr_matrix(LAPLACIAN * 1j) @ u)))(U0)
    with pytest.raises(ValueError, match="dimension mismatch"):
        ad.grad(lambda u: np.sum(RECT @ u[:3]))(U0)


def test_a_linear_operator_of_user_code_runs_its_own_rules_on_active_arrays():
    """LinearOperator(shape, matvec=..., rmatvec=...) written with NumPy: its
    rules are recorded like any code (SciPy's matvec would make x plain)."""
    from scipy.sparse.linalg import LinearOperator
    A = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, -1.0], [0.5, 0.0, 1.0]])
    op = LinearOperator((3, 3), matvec=lambda v: A @ v, rmatvec=lambda v: A.T @ v)
    check_tape(lambda x: np.sin(op @ x) + op.rmatvec(x) * x
               + np.sum(op.matmat(np.stack([x, x ** 2], axis=1)) ** 2), [U0[:3]])


def test_a_linear_operator_whose_rules_read_active_values_keeps_their_derivative():
    """LinearOperator(shape, matvec=lambda v: k * (L @ v) + v), made inside
    the recorded function without a dtype (SciPy probes one by converting a
    product to an array) and applied to plain and active arrays (SciPy's
    matvec converts the product): every product is the rule's own, recorded."""
    from scipy.sparse.linalg import LinearOperator
    plain = np.linspace(1.0, 2.0, N)

    def f(p):
        op = LinearOperator((N, N), matvec=lambda v: p[0] * (LAPLACIAN @ v) + v,
                            rmatvec=lambda v: p[0] * (LAPLACIAN.T @ v) + v)
        u = p[1] * U0
        return np.sum(np.sin(op @ u)) + np.sum(op.matvec(plain) ** 2) + op.rmatvec(plain) @ u \
            + np.sum(op.matmat(np.stack([plain, u], axis=1)) ** 2) + op.dtype.itemsize
    check_tape(f, [np.array([0.7, 1.3])])
    with pytest.raises(ValueError, match="dimension mismatch"):
        ad.grad(lambda p: np.sum(LinearOperator((N, N), matvec=lambda v: p[0] * v).matvec(
            np.ones(N + 1))))(np.array([0.7]))
