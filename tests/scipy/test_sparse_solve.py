"""scipy.sparse.linalg solves with an active right-hand side, called as
written: every sweep of the tape against SciPy's values and central
differences (fdcheck.check_tape), gradients against the dense solve, third
derivatives, replay at new right-hand sides, tape files, unconverged Krylov
solves, and two user programs (a 2-d Poisson inverse problem, implicit
reaction-diffusion steps with one factorisation)."""
import io
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.linalg import (bicgstab, cg, factorized, gmres, lgmres, minres, spilu, splu,
                                 spsolve, spsolve_triangular)

import adsim as ad
from adsim.testing import check_grads
from fdcheck import assert_close, check_tape

N = 7
_T = sp.diags([-1.0, 2.5, -1.2, 0.3], [-1, 0, 1, 3], shape=(N, N))
A = sp.csc_matrix(_T)                                   # not symmetric
SPD = sp.csr_matrix(_T @ _T.T + sp.eye(N))              # symmetric positive definite
B0 = np.linspace(-1.0, 1.3, N)
TIGHT = {"rtol": 1e-11}

SOLVES = {
    "spsolve": lambda b: spsolve(A, b),
    "spsolve csr": lambda b: spsolve(A.tocsr(), b),
    "spsolve 2-d b": lambda b: spsolve(A, np.stack([b, b ** 2], axis=1)).ravel(),
    "splu": lambda b: splu(A).solve(b),
    "splu trans T": lambda b: splu(A).solve(b, trans="T"),
    "splu 2-d b": lambda b: splu(A).solve(np.stack([b, np.sin(b)], axis=1)).ravel(),
    "spilu": lambda b: spilu(A, drop_tol=1e-3).solve(b),
    "factorized": lambda b: factorized(A)(b),
    "spsolve_triangular lower": lambda b: spsolve_triangular(sp.tril(A, format="csr"), b),
    "spsolve_triangular upper unit": lambda b: spsolve_triangular(
        sp.triu(A, format="csr"), b, lower=False, unit_diagonal=True),
    "cg": lambda b: cg(SPD, b, **TIGHT)[0],
    "minres": lambda b: minres(SPD, b, rtol=1e-12)[0],
    "gmres": lambda b: gmres(A, b, atol=1e-13, **TIGHT)[0],
    "bicgstab": lambda b: bicgstab(A, b, **TIGHT)[0],
    "lgmres": lambda b: lgmres(A, b, atol=1e-13, **TIGHT)[0],
    "cg of a LinearOperator": lambda b: cg(spla.aslinearoperator(SPD), b, **TIGHT)[0],
}


@pytest.mark.parametrize("name", SOLVES)
def test_every_sweep_of_a_solve(name):
    solve = SOLVES[name]
    check_tape(lambda b: np.sin(solve(b)) * np.sum(b ** 2), [B0], value_rtol=1e-12,
               rtol=1e-6 if name in ("cg", "minres", "bicgstab", "lgmres", "gmres",
                                     "cg of a LinearOperator") else 1e-7)


def test_gradient_equals_the_dense_solve_and_replays_at_new_right_hand_sides():
    D = A.toarray()
    f = lambda b: np.sum(np.exp(spsolve(A, b)) + splu(A).solve(b, trans="T") ** 2)  # noqa: E731
    d = lambda b: np.sum(np.exp(np.linalg.solve(D, b)) + np.linalg.solve(D.T, b) ** 2)  # noqa: E731
    tape = ad.record(f, B0)
    for seed in range(3):
        b = np.random.default_rng(seed).standard_normal(N)
        value, grad = tape.value_and_gradient(b)
        assert_close(value, f(b), 1e-13, 1e-13, "replayed value")
        assert_close(grad, ad.grad(d)(b), 1e-12, 1e-12, "replayed gradient")


def test_third_derivatives_record_the_transposed_solve():
    D = A.toarray()
    f = lambda b: np.sum(np.sin(spsolve(A, b)) * b)  # noqa: E731
    g = lambda b: np.sum(np.sin(np.linalg.solve(D, b)) * b)  # noqa: E731
    w, v = np.cos(np.arange(N)), np.linspace(1.0, -1.0, N)

    def third(h):
        return ad.grad(lambda y: ad.grad(lambda z: ad.grad(h)(z) @ w)(y) @ v)(B0)
    assert_close(third(f), third(g), 1e-11, 1e-11, "third derivative")


def test_tape_files_keep_the_solver():
    f = lambda b: np.sum(spsolve(A, b) ** 2 + cg(SPD, b, **TIGHT)[0] * b)  # noqa: E731
    tape = ad.record(f, B0)
    buffer = io.BytesIO()
    tape.save(buffer)
    loaded = ad.load_tape(io.BytesIO(buffer.getvalue()))
    b = np.random.default_rng(5).standard_normal(N)
    want_value, want_grad = tape.value_and_gradient(b)
    value, grad = loaded.value_and_gradient(b)
    assert_close(value, want_value, 1e-12, 1e-12, "value of the loaded tape")
    assert_close(grad, want_grad, 1e-9, 1e-9, "gradient of the loaded tape")


def test_an_unconverged_krylov_solve_raises():
    with pytest.raises(ad.errors.SolverNotConverged, match="cg did not converge"):
        ad.grad(lambda b: np.sum(cg(SPD, b, rtol=1e-14, maxiter=1)[0] ** 2))(B0)


def test_a_column_right_hand_side_gives_a_vector_as_in_scipy():
    tape = ad.record(lambda b: spsolve(A, b[:, None]), B0)
    assert tuple(tape.output_shape) == spsolve(A, B0[:, None]).shape == (N,)


def test_a_singular_matrix_raises():
    singular = sp.csc_matrix(np.diag([1.0, 0.0, 2.0]))
    with pytest.raises(ad.errors.UndefinedDerivative, match="singular"):
        ad.grad(lambda b: np.sum(spsolve(singular, b)))(np.ones(3))


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab"])
def test_preconditioned_krylov_solves(method):
    """M (an incomplete LU, a LinearOperator with rmatvec, a diagonal matrix)
    preconditions the value and every derivative solve; the adjoint of a
    non-symmetric method uses M^T."""
    matrix = SPD if method == "cg" else A
    ilu = spilu(sp.csc_matrix(matrix), drop_tol=1e-2)
    preconditioners = {
        "ilu": spla.LinearOperator((N, N), matvec=ilu.solve,
                                   rmatvec=lambda v: ilu.solve(v, trans="T")),
        "jacobi": sp.diags(1.0 / matrix.diagonal()),
        "no rmatvec": spla.LinearOperator((N, N), matvec=ilu.solve),
    }
    solve = getattr(spla, method)
    D = matrix.toarray()
    for name, M in preconditioners.items():
        f = lambda b: np.sum(np.sin(solve(matrix, b, M=M, rtol=1e-12)[0]))  # noqa: E731
        g = ad.grad(f)(B0)
        want = ad.grad(lambda b: np.sum(np.sin(np.linalg.solve(D, b))))(B0)
        assert_close(g, want, 1e-9, 1e-11, f"gradient with M = {name}")
    check_tape(lambda b: np.sin(solve(matrix, b, M=preconditioners["ilu"], rtol=1e-12)[0]),
               [B0], rtol=1e-6, value_rtol=1e-12)


def test_krylov_solves_with_a_linear_operator_of_python_code():
    """A matrix-free operator (matvec and rmatvec written with NumPy): the
    solves run on the recordings of its products, which tape files keep
    (tests/scipy/test_operator_solve_tapefiles.py); one whose products
    cannot be recorded runs its own code, and tape files refuse it."""
    D = A.toarray()
    op = spla.LinearOperator((N, N), matvec=lambda v: D @ v, rmatvec=lambda v: D.T @ v)
    f = lambda b: np.sin(gmres(op, b, atol=1e-13, rtol=1e-12)[0])  # noqa: E731
    check_tape(f, [B0], rtol=1e-6, value_rtol=1e-12)
    by_numbers = spla.LinearOperator((N, N), matvec=lambda v: D @ v + 0.0 * float(v[0]),
                                     rmatvec=lambda v: D.T @ v)
    g = lambda b: np.sin(gmres(by_numbers, b, atol=1e-13, rtol=1e-12)[0])  # noqa: E731
    tape = check_tape(g, [B0], rtol=1e-6, value_rtol=1e-12)
    with pytest.raises(ad.errors.TapeCopyError, match="LinearOperator of Python code that "
                                                      "could not be recorded"):
        tape.save(io.BytesIO())
    no_transpose = spla.LinearOperator((N, N), matvec=lambda v: D @ v)
    with pytest.raises(ad.errors.UnsupportedOperation, match="rmatvec"):
        ad.grad(lambda b: np.sum(gmres(no_transpose, b, rtol=1e-12)[0]))(B0)
    # an operator whose products read active values (Newton–Krylov's Hessian or
    # Jacobian products): differentiated by the implicit function theorem
    # (adsim/_scipy/operator_implicit.py); it was refused
    theta = np.array([2.0])
    w = np.sum(np.linalg.solve(SPD.toarray() if sp.issparse(SPD) else SPD, B0))
    both = lambda t: np.sum(cg(spla.LinearOperator(  # noqa: E731
        (N, N), matvec=lambda v: t[0] * (SPD @ v), dtype=float), B0 * t[0] ** 2,
        rtol=1e-13, atol=0.0)[0])
    assert_close(ad.grad(both)(theta), [w], rtol=1e-9, atol=1e-12, what="d(t b)/dt")
    # made without a dtype (SciPy probes one on a product), with a plain b
    for made in (lambda t: spla.LinearOperator((N, N), matvec=lambda v: t[0] * (SPD @ v)),
                 lambda t: spla.LinearOperator((N, N), matvec=lambda v: t[0] * (SPD @ v),
                                               dtype=float)):
        for method in (cg, gmres):
            f = lambda t: np.sum(method(made(t), B0, rtol=1e-13, atol=0.0)[0])  # noqa: E731
            assert_close(ad.grad(f)(theta), [-w / 4.0], rtol=1e-9, atol=1e-12,
                         what=method.__name__)
            assert_close(ad.hvp(f, theta, np.array([1.0])), [2 * w / 8.0], rtol=1e-8,
                         atol=1e-12, what=f"{method.__name__} hvp")


def test_refusals():
    with pytest.raises(ad.errors.UnsupportedOperation, match="initial guess"):
        ad.grad(lambda b: np.sum(cg(SPD, B0, x0=b)[0]))(B0)


def test_each_solver_says_what_matrix_it_was_given_and_what_it_takes():
    """A heat-conduction script whose matrix depends on the conductivities k:
    built dense, it is refused with the way to pass it (sparse, whose values
    may be active); a triangular solve of its triangle, sparse, is spsolve's;
    an incomplete factorisation of it says why it cannot differentiate
    through the matrix and what can; a
    plain dense matrix, or one built as constants inside the function, is
    taken as SciPy takes it."""
    def dense_conduction(k):
        return np.diag(2.0 * k) - np.diag(k[1:], 1) - np.diag(k[1:], -1)
    k = np.linspace(1.0, 2.0, N)
    for solve in (lambda M: spsolve(M, B0), lambda M: cg(M, B0, **TIGHT)[0]):
        with pytest.raises(ad.UnsupportedOperation, match=r"with a dense matrix of active "
                           r"values \(an array of shape \(7, 7\) \(float64\)\).*pass "
                           r"scipy.sparse.csc_matrix\(A\)"):
            ad.grad(lambda k: np.sum(solve(dense_conduction(k))))(k)
        g = ad.grad(lambda k: np.sum(solve(sp.csc_matrix(dense_conduction(k)))))(k)
        dense = ad.grad(lambda k: np.sum(np.linalg.solve(dense_conduction(k), B0)))(k)
        assert_close(g, dense, 1e-8, 1e-10)
    g = ad.grad(lambda k: np.sum(spsolve_triangular(sp.csr_matrix(np.tril(
        dense_conduction(k))), B0)))(k)           # the triangle of active values: spsolve's
    dense = ad.grad(lambda k: np.sum(np.linalg.solve(np.tril(dense_conduction(k)), B0)))(k)
    assert_close(g, dense, 1e-8, 1e-10)
    with pytest.raises(ad.UnsupportedOperation, match=r"spilu with a matrix of active values "
                       r".*incomplete factorisation"):
        ad.grad(lambda k: np.sum(spilu(sp.csc_matrix(dense_conduction(k))).solve(B0)))(k)
    with pytest.raises(ad.UnsupportedOperation, match=r"spsolve: the matrix A is an array of "
                       r"shape \(7,\) .*pass a scipy.sparse matrix"):
        ad.grad(lambda b: np.sum(spsolve(np.ones(N), b)))(B0)
    plain = A.toarray()
    for made_inside in (False, True):
        def f(b):
            M = np.array(plain.tolist()) if made_inside else plain
            return np.sum(spsolve(M, b) ** 2)
        with pytest.warns(sp.SparseEfficiencyWarning, match="CSC or CSR"):   # as SciPy's
            g = ad.grad(f)(B0)
        assert_close(g, 2 * spsolve(A.T.tocsc(), spsolve(A, B0)), 1e-10, 1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
            check_grads(f, B0)


def test_factorisations_outside_recordings_are_scipy_s():
    ad.grad(lambda b: np.sum(splu(A).solve(b)))(B0)
    assert type(splu(A)).__name__ == "SuperLU"
    assert type(factorized(A)(B0)) is np.ndarray


def poisson_2d(n):
    h = 1.0 / (n + 1)
    lap = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n)) / h ** 2
    return sp.kron(sp.eye(n), lap) + sp.kron(lap, sp.eye(n))


def test_poisson_inverse_problem():
    """Fit a source to observed temperatures: the misfit of -L u = s,
    gradient against the dense solve and against finite differences."""
    n = 8
    L = poisson_2d(n).tocsc()
    xs = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(xs, xs)
    observed = (np.sin(np.pi * X) * np.sin(np.pi * Y)).ravel() * 0.05

    def misfit(source):
        u = spsolve(-L, source)
        return 0.5 * np.sum((u - observed) ** 2) + 1e-4 * np.sum(np.diff(source) ** 2)

    source = np.cos(np.arange(n * n) / 7.0)
    g = ad.grad(misfit)(source)
    D = -L.toarray()
    dense = ad.grad(lambda s: 0.5 * np.sum((np.linalg.solve(D, s) - observed) ** 2)
                    + 1e-4 * np.sum(np.diff(s) ** 2))(source)
    assert_close(g, dense, 1e-11, 1e-13, "gradient of the misfit")
    check_grads(misfit, source, modes=("fwd", "rev"), order=2)


def test_implicit_reaction_diffusion_steps_with_one_factorisation():
    """Backward Euler for u' = D L u + k u (1 - u): the linear part
    factorised once with factorized(), the reaction explicit."""
    n, steps, dt = 12, 6, 0.01
    L = poisson_2d(n).tocsc() / (n + 1) ** 2 * 4.0
    solve = None

    def final_mass(params):
        nonlocal solve
        diffusion, rate = params[0], params[1]
        xs = np.linspace(0.0, 1.0, n)
        u = np.exp(-20.0 * ((xs[:, None] - 0.5) ** 2 + (xs[None, :] - 0.4) ** 2)).ravel()
        solve = factorized(sp.eye(n * n, format="csc") - dt * 0.8 * L)
        for _ in range(steps):
            u = solve(u + dt * (diffusion * (L @ u) + rate * u * (1.0 - u)))
        return np.sum(u ** 2)

    p = np.array([0.2, 3.0])
    check_grads(final_mass, p, modes=("fwd", "rev"), order=2)
    tape = ad.record(final_mass, p)
    p2 = np.array([0.3, 2.0])
    assert_close(tape.forward(p2), final_mass(p2), 1e-13, 1e-13, "replayed value")
