"""Sparse idioms written as scientists write them, differentiated as they
are: matrices of active values assembled with setdiag, indexed by single
rows and entries, with duplicate entries under abs and power, multiplied
elementwise by each other, their norms, extreme eigenvalues and
exponentials; each against central differences in both modes, and the
recorded tape replayed at a new point. Refusals are adsim's typed errors."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import adsim
from adsim.errors import UnsupportedAttribute, UnsupportedOperation
from adsim.testing import check_grads
from fdcheck import assert_close, central

N = 10
H = 1.0 / (N + 1)
LAPLACIAN = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(N, N)) / H ** 2


def _replays(f, x, x2, rtol=1e-9):
    """The tape recorded at x gives, at x2, the value and gradient a fresh
    recording gives."""
    tape = adsim.record(f, x)
    assert_close(tape.forward(x2), f(x2), rtol, 1e-14, "replayed value")
    assert_close(tape.gradient(x2), adsim.grad(f)(x2), rtol, 1e-14, "replayed gradient")


# ---- duplicates: SciPy sums them before a nonlinear map of the values ----------------

def test_abs_and_power_of_a_coo_matrix_sum_duplicate_entries_first():
    """A stiffness-like matrix assembled with overlapping triplets: abs and
    power act on the summed entries, as SciPy's (|1 - 3| = 2, not 4)."""
    rows, cols = np.array([0, 0, 1, 2, 2]), np.array([0, 0, 1, 2, 0])

    def row_sums(v):
        A = sp.coo_array((v, (rows, cols)), shape=(3, 3)).tocsr()
        return abs(A) @ np.ones(3) + A.power(2).sum(axis=0)

    v = np.array([1.0, -3.0, 2.0, 0.5, -1.5])
    A = sp.coo_array((v, (rows, cols)), shape=(3, 3)).tocsr()
    want = abs(A) @ np.ones(3) + A.power(2).sum(axis=0)
    assert_close(adsim.record(row_sums, v).forward(v), want, 1e-14, 0.0, "SciPy's value")
    check_grads(row_sums, v)
    _replays(lambda v: np.sum(row_sums(v) ** 2), v, v * 1.1)


def test_elementwise_products_of_two_active_matrices_and_their_mean():
    """A weighted Dirichlet energy: conductivities times squared differences
    on the edges, both sparse arrays of active values on different patterns."""
    edges_i, edges_j = np.array([0, 1, 2, 3, 0]), np.array([1, 2, 3, 0, 2])

    def energy(x):
        k, u = np.exp(x[:5]), x[5:]
        K = sp.coo_array((k, (edges_i, edges_j)), shape=(4, 4)).tocsr()
        D = sp.coo_array(((u[edges_i] - u[edges_j]) ** 2, (edges_i, edges_j)), shape=(4, 4))
        W = K * D + K.multiply(K) + (K ** 2).multiply(D)
        return W.sum() + W.mean() + K.mean(axis=0) @ u

    x = np.linspace(-0.5, 0.5, 9)
    check_grads(energy, x)
    _replays(energy, x, x[::-1].copy())


# ---- single rows, columns and entries -------------------------------------------------

def test_rows_columns_and_entries_of_an_spmatrix_of_active_values():
    """A[i] and A[:, j] of an spmatrix are 1 x n and m x 1 matrices, A[i, j]
    the entry, as in SciPy; a sparse array's A[i] (1-d in SciPy) is refused."""
    def probe(v):
        A = sp.csr_matrix(np.arange(1.0, 10.0).reshape(3, 3)).multiply(v.reshape(3, 3)).tocsr()
        first, last = A[0], A[:, -1]
        assert first.shape == (1, 3) and last.shape == (3, 1)
        return np.sum((first @ np.ones(3)) ** 2) + np.sum(last.toarray() ** 3) + A[1, 2] * A[2, 1]

    v = np.linspace(0.5, 1.5, 9)
    check_grads(probe, v)
    _replays(probe, v, v + 0.2)

    def row_of_array(v):
        return sp.csr_array((v, ([0, 1, 2], [0, 1, 2])), shape=(3, 3))[1]

    with pytest.raises(UnsupportedOperation, match="single integer"):
        adsim.grad(lambda v: np.sum(row_of_array(v).toarray()))(np.ones(3))


# ---- setdiag -----------------------------------------------------------------------------

def test_reaction_diffusion_operator_built_with_setdiag():
    """lil_matrix of the Laplacian, then the diagonal set to the reaction
    rates (a scalar on the first super-diagonal too), converted and solved."""
    source = np.linspace(1.0, 2.0, N)

    def response(rates):
        A = sp.lil_matrix(LAPLACIAN)
        A.setdiag(2.0 / H ** 2 + rates ** 2)
        A.setdiag(-1.0 / H ** 2 + 0.1 * rates[0], k=1)
        return np.sum(spla.spsolve(A.tocsr(), source) ** 2)

    rates = np.linspace(0.5, 1.5, N)
    check_grads(response, rates, rtol=1e-6)
    _replays(response, rates, rates * 1.2)

    def response_of_active_matrix(rates):       # setdiag on a matrix already active
        A = (LAPLACIAN + sp.diags(rates)).tocsr()
        A.setdiag(2.0 / H ** 2 + rates ** 2)
        A.setdiag(rates[:3], k=-2)
        return np.sum(spla.spsolve(A.tocsc(), source) ** 2)

    dense = (LAPLACIAN.toarray() + np.diag(2.0 / H ** 2 + rates ** 2 - 2.0 / H ** 2)
             + np.diag(np.r_[rates[:3], np.zeros(N - 5)], -2))
    assert_close(adsim.record(response_of_active_matrix, rates).forward(rates),
                 np.sum(np.linalg.solve(dense, source) ** 2), 1e-12, 0.0, "the dense solve")
    check_grads(response_of_active_matrix, rates, rtol=1e-6)


# ---- norms, eigenvalues, exponentials ---------------------------------------------------

def test_sparse_norms_of_a_matrix_of_active_values():
    def norms(v):
        A = sp.coo_matrix((v, ([0, 0, 1, 2], [0, 0, 2, 1])), shape=(3, 3))
        return (spla.norm(A) + spla.norm(A, 1) + spla.norm(A, np.inf) + spla.norm(A, -np.inf)
                + np.sum(spla.norm(A, axis=0)))

    v = np.array([1.0, -3.0, 2.5, 0.5])
    A = sp.coo_matrix((v, ([0, 0, 1, 2], [0, 0, 2, 1])), shape=(3, 3))
    want = (spla.norm(A) + spla.norm(A, 1) + spla.norm(A, np.inf) + spla.norm(A, -np.inf)
            + np.sum(spla.norm(A, axis=0)))
    assert_close(adsim.record(norms, v).forward(v), want, 1e-14, 0.0, "SciPy's value")
    check_grads(norms, v)
    with pytest.raises(UnsupportedOperation, match="ord=2"):
        adsim.grad(lambda v: spla.norm(sp.diags(v), 2))(np.ones(3))


def schrodinger_ground_state(potential):
    """Lowest eigenvalue of -u'' + V u (a particle in a box with a
    potential) and the ground state's weight on the left half."""
    Hm = (LAPLACIAN + sp.diags(potential)).tocsr()
    w, V = spla.eigsh(Hm, k=2, which="SA", tol=1e-13)
    return w[0] + 10.0 * np.sum(V[: N // 2, 0] ** 2) + 0.1 * w[1]


def test_eigsh_smallest_eigenpairs_of_an_active_hamiltonian():
    potential = 5.0 * np.linspace(0.0, 1.0, N) ** 2
    g = adsim.grad(schrodinger_ground_state)(potential)
    # Hellmann-Feynman: d w0 / d V_i = u_i^2 (the eigenvalue part alone)
    w, V = np.linalg.eigh((LAPLACIAN + sp.diags(potential)).toarray())
    assert_close(adsim.grad(lambda p: spla.eigsh((LAPLACIAN + sp.diags(p)).tocsr(), k=1,
                                                 which="SA", return_eigenvectors=False)[0])(
                     potential), V[:, 0] ** 2, 1e-8, 1e-12, "Hellmann-Feynman")
    assert g.shape == potential.shape
    check_grads(schrodinger_ground_state, potential, rtol=1e-5)
    _replays(schrodinger_ground_state, potential, potential * 1.3 + 0.1, rtol=1e-7)


def test_eigsh_largest_with_shift_invert_and_its_second_order_refusal():
    def top(p):
        A = (LAPLACIAN + sp.diags(p ** 2)).tocsc()
        w, V = spla.eigsh(A, k=1, sigma=0.0)           # nearest 0: the smallest
        return w[0] + np.sum(V[:, 0] ** 4)

    p = np.linspace(0.1, 1.0, N)
    check_grads(top, p, rtol=1e-5)
    # refused by name, saying what is supported (not the advice for a user's
    # own primitive, to write its vjp with NumPy)
    with pytest.raises(UnsupportedOperation, match=r"second derivatives \(hvp, hessian.*"
                                                   r"`scipy.sparse.linalg.eigsh` are not "
                                                   r"supported.*First derivatives"):
        adsim.hvp(top, p, np.ones(N))


def test_expm_multiply_of_an_active_generator():
    """Heat flow with a decay rate per node: exp(t (L + diag(-k))) u0."""
    def heat(k):
        A = -1e-3 * LAPLACIAN - sp.diags(k)
        return np.sum(spla.expm_multiply(A.tocsr(), np.ones(N)) ** 2)

    k = np.linspace(0.0, 0.2, N)
    check_grads(heat, k)
    _replays(heat, k, k + 0.05)

    def heat_large(k):
        return np.sum(spla.expm_multiply(sp.diags(k), np.ones(k.size)))

    with pytest.raises(UnsupportedOperation, match="expm_multiply"):
        adsim.grad(heat_large)(np.zeros(401))


def test_expm_multiply_at_several_times_is_scipys_stack():
    """start, stop, num, endpoint (SciPy's linspace of them, its defaults
    where left out, 50 times): the value is SciPy's stack over the times,
    and the gradient agrees with differences."""
    def heat(k, **times):
        A = -1e-2 * LAPLACIAN - sp.diags(k)
        return spla.expm_multiply(A.tocsr(), np.linspace(1.0, 2.0, N), start=0.0, stop=1.5,
                                  **times)

    k = np.linspace(0.0, 0.2, N)
    for times in ({"num": 4}, {"num": 3, "endpoint": False}, {}):
        def loss(k):
            return np.sum(heat(k, **times) ** 2)
        value, g = adsim.value_and_grad(loss)(k)
        assert_close(value, loss(k), 1e-12, 0.0, "value")
        if times:
            v = np.cos(np.arange(N))
            assert_close(g @ v, central(loss, [k], [v]), 1e-8, 1e-12, "gradient")


def test_todense_of_an_spmatrix_is_refused_and_of_an_sparray_works():
    def dense(v, kind):
        return np.sum(np.asarray(kind((v, ([0, 1], [1, 0])), shape=(2, 2)).todense()) ** 2)

    assert_close(adsim.grad(lambda v: dense(v, sp.csr_array))(np.array([1.0, 2.0])),
                 [2.0, 4.0], 1e-15, 0.0, "todense of an sparray")
    with pytest.raises(UnsupportedOperation, match="toarray"):
        adsim.grad(lambda v: dense(v, sp.csr_matrix))(np.array([1.0, 2.0]))
    with pytest.raises(UnsupportedAttribute):
        adsim.grad(lambda v: sp.csr_array((v, ([0, 1], [1, 0])), shape=(2, 2)).max())(
            np.array([1.0, 2.0]))


# ---- products of sparse matrices, writes, triangles ------------------------------------

GRADIENT = sp.diags([-1.0, 1.0], [0, 1], shape=(N - 1, N)).tocsr() / H     # nodes -> edges


def heat_with_dirichlet_row(log_k):
    """Finite volumes: K = G^T diag(k) G, the first row replaced by the
    boundary condition u_0 = 1 (written into a lil copy), then solved."""
    K = GRADIENT.T @ sp.diags(np.exp(log_k)) @ GRADIENT
    K = K.tolil()
    K[0, :] = 0.0
    K[0, 0] = 1.0
    K[N - 1, N - 1] = K[N - 1, N - 1] + 1.0 / H          # a Robin end
    rhs = np.full(N, 1.0)
    rhs[0] = 1.0
    u = spla.spsolve(K.tocsr(), rhs)
    return u @ u * H


def test_stiffness_as_a_product_of_sparse_matrices_with_a_dirichlet_row():
    log_k = np.linspace(-0.3, 0.4, N - 1)
    k = np.exp(log_k)
    K = (GRADIENT.T @ sp.diags(k) @ GRADIENT).toarray()
    K[0, :] = 0.0
    K[0, 0] = 1.0
    K[-1, -1] += 1.0 / H
    u = np.linalg.solve(K, np.ones(N))
    assert_close(adsim.record(heat_with_dirichlet_row, log_k).forward(log_k), u @ u * H,
                 1e-12, 0.0, "the dense solve")
    check_grads(heat_with_dirichlet_row, log_k, order=2, rtol=1e-5)
    _replays(heat_with_dirichlet_row, log_k, log_k[::-1].copy())


def test_products_of_two_matrices_of_active_values_match_scipy():
    rows, cols = np.array([0, 1, 1, 2, 0]), np.array([0, 0, 2, 1, 0])   # a duplicate

    def squared(v):
        A = sp.coo_matrix((v, (rows, cols)), shape=(3, 3))
        return (A @ A.T + A.dot(A)).toarray()

    v = np.array([1.0, -2.0, 0.5, 3.0, 0.25])
    A = sp.coo_matrix((v, (rows, cols)), shape=(3, 3))
    assert_close(adsim.record(squared, v).forward(v), (A @ A.T + A @ A).toarray(), 1e-14, 0.0,
                 "SciPy's product")
    check_grads(squared, v)


def test_gauss_seidel_sweeps_with_triangles_of_an_active_matrix():
    """Two Gauss-Seidel iterations x <- L^-1 (b - U x) for A = T + diag(k),
    with tril/triu and spsolve_triangular (upper with unit diagonal too)."""
    b = np.linspace(1.0, 2.0, N)

    def smoothed(k):
        A = (LAPLACIAN * H ** 2 + sp.diags(k)).tocsr()
        L, U = sp.tril(A, format="csr"), sp.triu(A, k=1, format="csr")
        x = np.zeros(N)
        for _ in range(2):
            x = spla.spsolve_triangular(L, b - U @ x)
        unit = spla.spsolve_triangular(sp.eye(N) + U * 0.1, x, lower=False, unit_diagonal=True)
        return np.sum(x ** 2) + np.sum(unit)

    k = np.linspace(0.1, 0.5, N)
    check_grads(smoothed, k)
    _replays(smoothed, k, k + 0.3)


def test_inverse_and_exponential_of_a_small_active_sparse_matrix():
    def propagator(k):
        A = sp.diags([k[1:], -k, k[1:]], [-1, 0, 1], format="csc")
        return np.sum(spla.expm(A).toarray() ** 2) + np.trace(spla.inv(A - sp.eye(N)).toarray())

    k = np.linspace(0.1, 0.4, N)
    check_grads(propagator, k)
    _replays(propagator, k, k * 1.2)


def test_boundary_rows_written_into_a_matrix_assembled_in_a_loop():
    """A spring chain assembled entry by entry into a lil_matrix, its first
    row then made a boundary condition; a block read through np.ix_."""
    def tip_displacement(k):
        n = k.size + 1
        K = sp.lil_matrix((n, n))
        for e in range(k.size):
            K[e, e] += k[e]
            K[e + 1, e + 1] += k[e]
            K[e, e + 1] -= k[e]
            K[e + 1, e] -= k[e]
        K[0, :] = 0.0
        K[0, 0] = 1.0
        load = np.ones(n)
        load[0] = 0.0
        u = spla.spsolve(K.tocsr(), load)
        inner = K.tocsr()[np.ix_([1, 2], [1, 2])]
        return u[-1] + np.sum(inner.toarray())

    k = np.linspace(1.0, 2.0, 5)
    # u_tip = sum over springs of (the load carried) / k_e; the block
    # [[k0 + k1, -k1], [-k1, k1 + k2]] sums to k0 + k2
    carried = np.arange(5.0, 0.0, -1.0)
    assert_close(adsim.grad(tip_displacement)(k), -carried / k ** 2 + np.array([1.0, 0, 1, 0, 0]),
                 1e-10, 1e-12, "closed form")
    check_grads(tip_displacement, k)
    _replays(tip_displacement, k, k[::-1].copy())

    def paired(v):
        return sp.csr_matrix((v, ([0, 1, 2], [0, 1, 2])), shape=(3, 3))[[0, 1], [0, 1]]

    with pytest.raises(UnsupportedOperation, match="pairs their elements"):
        adsim.grad(lambda v: np.sum(paired(v).toarray()))(np.ones(3))


# ---- least squares with lsqr and lsmr ---------------------------------------------------

RAYS = (sp.random(40, 12, density=0.3, random_state=4, format="csr") + sp.eye(40, 12)).tocsr()


@pytest.mark.parametrize("method", ["lsqr", "lsmr"])
@pytest.mark.parametrize("damp", [0.0, 0.4])
def test_travel_time_tomography_with_lsqr_and_lsmr(method, damp):
    """Slownesses fitted to travel times t (active) along fixed rays: x =
    (A^T A + damp^2 I)^-1 A^T t; the residual norms SciPy reports follow t."""
    solve = getattr(spla, method)
    normal = (RAYS.T @ RAYS + damp ** 2 * sp.eye(12)).toarray()

    def fit(t):
        limit = {"maxiter": 60} if method == "lsmr" else {}     # its default is min(m, n)
        out = solve(RAYS, t, damp=damp, atol=1e-12, btol=1e-12, **limit)
        return np.concatenate([out[0], [out[3] ** 2]])

    t = np.linspace(1.0, 2.0, 40) + np.sin(np.arange(40.0))
    x = np.linalg.solve(normal, RAYS.T @ t)
    r2 = np.sum((t - RAYS @ x) ** 2) + (damp ** 2 * x @ x if method == "lsmr" else 0.0)
    assert_close(adsim.record(fit, t).forward(t), np.concatenate([x, [r2]]), 1e-8, 1e-12,
                 "the normal equations")
    J = adsim.jacobian(fit)(t)
    assert_close(J[:12], np.linalg.solve(normal, RAYS.T.toarray()), 1e-7, 1e-12, "x = N^-1 A^T t")
    check_grads(lambda t: fit(t) @ np.arange(1.0, 14.0), t, rtol=1e-6)


def test_lsqr_of_an_active_matrix_says_what_to_solve_instead():
    with pytest.raises(UnsupportedOperation, match="normal equations"):
        adsim.grad(lambda k: np.sum(spla.lsqr(RAYS.multiply(k[0]), np.ones(40))[0]))(
            np.array([1.0]))


def test_svds_singular_triplets_of_an_active_matrix():
    """The leading singular pairs of a ratings matrix with active entries:
    ds = u^T dA v (the value checked against the dense SVD's), the vectors
    through the eigenpairs of [[0, A], [A^T, 0]]."""
    rows = np.array([0, 0, 1, 2, 3, 3, 4, 1, 4])
    cols = np.array([0, 2, 1, 3, 0, 2, 1, 3, 3])

    def spectrum(v):
        A = sp.coo_matrix((v, (rows, cols)), shape=(5, 4)).tocsr()
        u, s, vt = spla.svds(A, k=2, tol=1e-14)
        return s[0] + 2.0 * s[1] + np.sum(u[:, 1] ** 2 * np.arange(5)) + np.sum(vt[0] ** 4)

    v = np.linspace(0.5, 2.0, 9)
    U, S, Vt = np.linalg.svd(sp.coo_matrix((v, (rows, cols)), shape=(5, 4)).toarray())
    top = adsim.grad(lambda v: spla.svds(sp.coo_matrix((v, (rows, cols)), shape=(5, 4)), k=1,
                                         return_singular_vectors=False)[0])(v)
    assert_close(top, U[rows, 0] * Vt[0, cols], 1e-9, 1e-12, "u^T dA v")
    check_grads(spectrum, v, rtol=1e-6)
    _replays(spectrum, v, v[::-1].copy(), rtol=1e-7)
