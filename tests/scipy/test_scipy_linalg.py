"""scipy.linalg called unchanged on active arrays: every sweep of the tape
against SciPy's values and central differences (fdcheck.check_tape),
tangents against the complex step where the function is holomorphic, the
entries SciPy ignores have derivative zero, LU pivots are guarded, and
user-style programs (a Gaussian process, a linear ODE)."""
import numpy as np
import pytest
import scipy.linalg as sl
from scipy.linalg import cho_factor, cho_solve, expm, lu_factor, lu_solve, solve_triangular

import adsim as ad
from fdcheck import assert_close, check_tape, complex_step, fd_jacobian

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 4)) + 3.0 * np.eye(4)
S = A @ A.T
b = RNG.standard_normal(4)
B = RNG.standard_normal((4, 2))

CASES = {
    "solve_triangular": (lambda a, y: solve_triangular(a, y), [A, b]),
    "solve_triangular lower T": (lambda a, y: solve_triangular(a, y, lower=True, trans="T"),
                                 [A, B]),
    "solve_triangular unit": (lambda a, y: solve_triangular(a, y, trans=1, unit_diagonal=True),
                              [A, B]),
    "cho_factor cho_solve": (lambda a, y: cho_solve(cho_factor(a), y), [S, b]),
    "cho lower": (lambda a, y: cho_solve(cho_factor(a, lower=True), y), [S, B]),
    "cho_factor c": (lambda a: cho_factor(a)[0], [S]),
    "cho_factor lower c of a non-symmetric matrix": (lambda a: cho_factor(a, lower=True)[0],
                                                     [S + np.triu(A, 1)]),
    "lu_factor lu_solve": (lambda a, y: lu_solve(lu_factor(a), y), [A, b]),
    "lu_solve trans": (lambda a, y: lu_solve(lu_factor(a), y, trans=1), [A, B]),
    "lu_factor lu": (lambda a: lu_factor(a)[0], [A]),
    "expm": (lambda a: expm(a), [0.3 * A]),
    "solve": (lambda a, y: sl.solve(a, y), [A, b]),
    "solve pos": (lambda a, y: sl.solve(a, y, assume_a="pos"), [S, B]),
    "solve sym lower": (lambda a, y: sl.solve(a, y, assume_a="sym", lower=True), [A, b]),
    "solve diagonal": (lambda a, y: sl.solve(a, y, assume_a="diagonal"), [A, B]),
    "solve tridiagonal transposed": (lambda a, y: sl.solve(a, y, assume_a="tridiagonal",
                                                           transposed=True), [A, B]),
    "solve upper triangular": (lambda a, y: sl.solve(a, y, assume_a="upper triangular"), [A, b]),
    "cholesky": (lambda a: sl.cholesky(a), [S]),
    "inv det": (lambda a: sl.inv(a) * sl.det(a), [A]),
    "svd": (lambda a: sl.svd(a)[0], [A]),
    "svdvals": (lambda a: sl.svdvals(a[:, :3]), [A]),
    "qr": (lambda a: sl.qr(a)[1], [A]),
    "qr economic": (lambda a: sl.qr(a[:, :2], mode="economic")[0], [A]),
    "eigh": (lambda a: sl.eigh(a)[0], [S]),
    "eigvalsh upper": (lambda a: sl.eigvalsh(a, lower=False), [S]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scipy_linalg_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [
    lambda a, y: solve_triangular(a, y, lower=True, trans="T"),
    lambda a, y: lu_solve(lu_factor(a), y, trans=1),
    lambda a, y: sl.solve(a, y),
    lambda a, y: expm(0.3 * a) @ y,
])
def test_tangents_against_the_complex_step(f):
    va, vb = RNG.standard_normal(A.shape), RNG.standard_normal(B.shape)
    _, tangent = ad.jvp(f, (A, B), (va, vb))
    assert_close(tangent, complex_step(f, [A, B], [va, vb]), rtol=1e-12, atol=1e-13,
                 what="tangent vs complex step")


def test_entries_scipy_does_not_read_have_derivative_zero():
    g = ad.grad(lambda a: np.sum(solve_triangular(a, b, lower=True, unit_diagonal=True)))(A)
    assert np.all(np.triu(g) == 0.0)
    g = ad.grad(lambda a: np.sum(sl.solve(a, b, assume_a="sym")))(A)
    assert np.all(np.tril(g, -1) == 0.0)
    g = ad.grad(lambda a: np.sum(cho_solve(cho_factor(a), b)))(S)
    assert np.all(np.tril(g, -1) == 0.0)


def test_lu_pivots_are_guarded():
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    other = np.array([[5.0, 2.0], [3.0, 4.0]])        # another pivot order
    tape = ad.record(lambda a: lu_factor(a)[0], M)
    with pytest.raises(ad.BranchChanged):
        tape.forward(other)
    f = lambda a: np.sum(lu_solve(lu_factor(a), np.ones(2)))     # noqa: E731
    grad = ad.grad(f)
    for point in (M, other, M):                         # re-recorded where pivots differ
        assert_close(grad(point), fd_jacobian(f, [point]).reshape(2, 2), rtol=1e-7,
                     what="gradient")


def test_unsupported_arguments_are_refused_by_name():
    with pytest.raises(ad.UnsupportedOperation, match="scipy.linalg.expm of shape"):
        ad.grad(lambda a: np.sum(expm(a)))(np.ones((2, 2, 2)))
    with pytest.raises(ad.UnsupportedOperation, match="pivoting"):
        ad.grad(lambda a: np.sum(sl.qr(a, pivoting=True)[0]))(A)
    with pytest.raises(ad.UnsupportedOperation, match="subset_by_value"):
        ad.grad(lambda a: np.sum(sl.eigh(a, subset_by_value=[0.0, 1.0])[0]))(S)


def test_gaussian_process_marginal_likelihood():
    """A GP's negative log marginal likelihood, as written with
    cho_factor/cho_solve, differentiated in the kernel's hyperparameters."""
    t = np.linspace(0.0, 3.0, 6)
    y = np.sin(t) + 0.1 * np.cos(5.0 * t)

    def nll(theta):
        amplitude, length, noise = np.exp(theta)
        K = amplitude * np.exp(-0.5 * (t[:, None] - t[None, :]) ** 2 / length ** 2)
        K = K + noise * np.eye(t.size)
        c, low = cho_factor(K)
        alpha = cho_solve((c, low), y)
        return 0.5 * y @ alpha + np.sum(np.log(np.diag(c)))
    theta = np.array([0.1, -0.2, -2.0])
    assert_close(ad.grad(nll)(theta), fd_jacobian(nll, [theta]).reshape(3), rtol=1e-7,
                 what="gradient")
    check_tape(nll, [theta])


def test_linear_ode_solution_sensitivity():
    """x(t) = expm(A t) x0 differentiated in the rate matrix."""
    x0 = np.array([1.0, 0.0, 0.5])

    def final_state(rates):
        K = np.array([[-rates[0], rates[1], 0.0],
                      [rates[0], -rates[1] - rates[2], 0.0],
                      [0.0, rates[2], 0.0]])
        return expm(2.0 * K) @ x0
    check_tape(final_state, [np.array([0.7, 0.3, 0.4])])
