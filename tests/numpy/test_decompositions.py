"""np.linalg.qr, svd, pinv, lstsq and the matrix 2- and nuclear norms: every
sweep of the recorded tape against NumPy's values and central differences
(fdcheck.check_tape: tangents, adjoints, the dot-product test, Jacobians in
both modes, Hessian-vector products against differences of the gradient);
a clear UndefinedDerivative where the derivative does not exist; and
user-style programs."""
import numpy as np
import pytest

import adsim as ad
from fdcheck import assert_close, check_tape, fd_jacobian

SHAPES = {"tall": (4, 3), "square": (3, 3), "wide": (2, 4)}


def _matrix(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + np.eye(*shape)


CASES = {
    "qr Q": lambda a: np.linalg.qr(a)[0],
    "qr R": lambda a: np.linalg.qr(a).R,
    "qr mode r": lambda a: np.linalg.qr(a, mode="r"),
    "svd values": lambda a: np.linalg.svd(a, compute_uv=False),
    "svd U": lambda a: np.linalg.svd(a, full_matrices=False).U,
    "svd Vh": lambda a: np.linalg.svd(a, full_matrices=False)[2],
    "svd U s Vh": lambda a: np.einsum("ij,j,jk->ik", *np.linalg.svd(a, full_matrices=False)[:2],
                                      np.linalg.svd(a, full_matrices=False)[2] ** 2),
    "pinv": np.linalg.pinv,
    "lstsq x": lambda a: np.linalg.lstsq(a, np.arange(1.0, a.shape[0] + 1))[0],
    "lstsq matrix b": lambda a: np.linalg.lstsq(a, np.cos(np.arange(a.shape[0] * 2.0))
                                                .reshape(-1, 2))[0],
    "lstsq s": lambda a: np.linalg.lstsq(a, np.ones(a.shape[0]))[3],
    "norm 2": lambda a: np.linalg.norm(a, 2),
    "norm -2 axes": lambda a: np.linalg.norm(a, -2, axis=(1, 0), keepdims=True),
    "norm nuc": lambda a: np.linalg.norm(a, "nuc"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_decomposition_every_sweep(name, shape):
    check_tape(CASES[name], [_matrix(SHAPES[shape])], rtol=1e-6, atol=1e-8)


def test_complete_qr_of_a_square_matrix_and_qr_of_a_wide_one():
    A = _matrix((3, 3), seed=1)
    check_tape(lambda a: np.concatenate(np.linalg.qr(a, mode="complete")), [A])
    Q, R = np.linalg.qr(_matrix((2, 4)))
    check_tape(lambda a: np.linalg.qr(a)[1], [_matrix((2, 4), seed=2)])
    assert Q.shape == (2, 2) and R.shape == (2, 4)


def test_lstsq_in_both_arguments_and_its_residuals():
    A, b = _matrix((5, 2)), np.linspace(-1.0, 2.0, 5)
    check_tape(lambda a, y: np.linalg.lstsq(a, y)[0], [A, b])
    check_tape(lambda a, y: np.linalg.lstsq(a, y)[1], [A, b])
    ranks = []

    def fit(a):
        x, residuals, rank, s = np.linalg.lstsq(a, b)
        ranks.append(rank)
        return x
    ad.jacobian(fit)(A)
    assert ranks == [np.linalg.lstsq(A, b)[2]]


def test_singular_values_have_derivatives_at_repeated_values():
    """The nuclear norm is differentiable at the identity (U V^T = I); the
    sum of singular values there in every mode."""
    eye = np.eye(3)
    nuclear = lambda a: np.sum(np.linalg.svd(a, compute_uv=False))     # noqa: E731
    assert_close(ad.grad(nuclear)(eye), eye, what="gradient of the nuclear norm")
    v = np.arange(9.0).reshape(3, 3)
    assert_close(ad.jvp(nuclear, eye, v)[1], np.trace(v), what="tangent of the nuclear norm")


def test_the_spectral_norms_where_they_are_not_differentiable():
    """The 2-norm at a repeated largest singular value and the -2 norm at a
    repeated or zero smallest one have no derivative (a maximum of crossing
    values): every mode raises, also on replay; the nuclear norm, a sum,
    has one."""
    def spectral(a):
        return np.linalg.norm(a, 2)
    with pytest.raises(ad.UndefinedDerivative, match="largest singular value is repeated"):
        ad.grad(spectral)(np.diag([2.0, 2.0, 1.0]))
    with pytest.raises(ad.UndefinedDerivative, match="smallest singular value"):
        ad.jvp(lambda a: np.linalg.norm(a, -2), (np.diag([2.0, 1.0, 0.0]),), (np.eye(3),))
    tape = ad.record(spectral, np.diag([3.0, 2.0, 1.0]))
    assert_close(tape.gradient(np.diag([3.0, 2.0, 1.0])), np.diag([1.0, 0.0, 0.0]))
    with pytest.raises(ad.UndefinedDerivative, match="repeated"):
        tape.gradient(np.diag([3.0, 3.0, 1.0]))
    assert_close(ad.grad(lambda a: np.linalg.norm(a, "nuc"))(np.diag([2.0, 2.0, 1.0])),
                 np.eye(3))


def test_condition_number_refuses_where_the_spectral_norms_do():
    """A design-of-experiments script minimising the condition number of a
    sensor matrix: cond(A) = norm(A, 2) / norm(A, -2) has no derivative at a
    repeated largest or smallest singular value (where it used to return an
    arbitrary gradient), in every mode and on replay; elsewhere it matches
    differences, also replayed at a new point."""
    def conditioning(angles, p=None):
        sensors = np.stack([np.cos(angles), np.sin(angles), 0.3 * angles], axis=1)
        return np.linalg.cond(sensors.T @ sensors + np.diag([1.0, 2.0, 3.0]), p)
    angles = np.array([0.1, 0.9, 1.7, 2.6])
    for p in (None, 2, -2):
        g = ad.grad(conditioning)(angles, p)
        assert_close(g, fd_jacobian(lambda a: conditioning(a, p), [angles])[0], rtol=1e-6,
                     what=f"gradient of cond(p={p})")
    tape = ad.record(conditioning, angles)
    moved = angles + 0.05
    assert_close(tape.gradient(moved), fd_jacobian(conditioning, [moved])[0], rtol=1e-6,
                 what="replayed gradient of cond")
    for p, top in ((None, "largest"), (2, "largest"), (-2, "largest")):
        with pytest.raises(ad.UndefinedDerivative, match=f"{top} singular value is repeated"):
            ad.grad(lambda a: np.linalg.cond(a, p))(np.diag([2.0, 2.0, 1.0]))
    for p in (None, 2, -2):
        with pytest.raises(ad.UndefinedDerivative, match="smallest singular value"):
            ad.jvp(lambda a: np.linalg.cond(a, p), (np.diag([3.0, 1.0, 1.0]),), (np.eye(3),))
    with pytest.raises(ad.UndefinedDerivative, match="repeated"):
        ad.record(lambda a: np.linalg.cond(a), np.diag([3.0, 2.0, 1.0])).gradient(
            np.diag([3.0, 3.0, 1.0]))


@pytest.mark.parametrize("f", [
    lambda a: np.sum(np.linalg.svd(a)[0] ** 3),
    lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[2][0]),
])
def test_singular_vectors_at_repeated_singular_values_raise(f):
    A = np.diag([2.0, 1.0, 1.0])
    for run in (lambda: ad.grad(f)(A), lambda: ad.jvp(f, A, np.ones((3, 3))),
                lambda: ad.hvp(f, A, np.ones((3, 3)))):
        with pytest.raises(ad.UndefinedDerivative, match="repeated or zero singular values"):
            run()


def test_singular_vectors_at_a_zero_singular_value_raise():
    with pytest.raises(ad.UndefinedDerivative, match="singular values"):
        ad.grad(lambda a: np.sum(np.linalg.svd(a)[0]))(np.diag([1.0, 0.0]))


@pytest.mark.parametrize(("f", "point", "words"), [
    (lambda a: np.sum(np.linalg.qr(a)[0]), np.outer([1.0, 2.0, 3.0], [1.0, 1.0]), "full column"),
    (lambda a: np.sum(np.linalg.qr(a, mode="complete")[0]), _matrix((3, 2)), "completion"),
    (lambda a: np.sum(np.linalg.svd(a)[0]), _matrix((3, 2)), "full_matrices=False"),
    (lambda a: np.sum(np.linalg.pinv(a)), np.outer([1.0, 2.0, 3.0], [1.0, 1.0]), "rank-deficient"),
    (lambda a: np.sum(np.linalg.lstsq(a, np.ones(3))[0]), np.outer([1.0, 2.0, 3.0], [1.0, 1.0]),
     "rank-deficient"),
])
def test_undefined_derivatives_raise_with_the_reason(f, point, words):
    with pytest.raises(ad.UndefinedDerivative, match=words):
        ad.grad(f)(point)


def test_unsupported_variants_are_named():
    with pytest.raises(ad.UnsupportedOperation, match="raw"):
        ad.grad(lambda a: np.sum(np.linalg.qr(a, mode="raw")[0]))(np.eye(2))
    with pytest.raises(ad.UnsupportedOperation, match="hermitian"):
        ad.grad(lambda a: np.sum(np.linalg.svd(a, hermitian=True)[1]))(np.eye(2))


def test_procrustes_rotation_fit():
    """Orthogonal Procrustes as users write it: R = U V^T from the SVD of
    B A^T, and the misfit of R A against B, differentiated in A."""
    rng = np.random.default_rng(3)
    B = rng.standard_normal((3, 6))

    def misfit(A):
        U, _, Vt = np.linalg.svd(B @ A.T)
        R = U @ Vt
        return np.sum((R @ A - B) ** 2)
    A = rng.standard_normal((3, 6))
    g = ad.grad(misfit)(A)
    assert_close(g, fd_jacobian(misfit, [A]).reshape(3, 6), rtol=1e-6, what="Procrustes gradient")
    check_tape(misfit, [A], rtol=1e-6)


def test_regression_coefficients_and_gram_schmidt():
    """Least-squares coefficients of a polynomial fit as a function of the
    data, and orthonormal columns from QR."""
    t = np.linspace(0.0, 1.0, 7)
    V = np.vander(t, 3)

    def coefficients(y):
        return np.linalg.lstsq(V, y, rcond=None)[0]
    y = np.sin(3.0 * t)
    J = ad.jacobian(coefficients)(y)
    assert_close(J, np.linalg.pinv(V), rtol=1e-10, what="d coefficients / d data")

    def orthonormal(a):
        Q, _ = np.linalg.qr(a)
        return Q.T @ np.arange(1.0, 6.0)
    check_tape(orthonormal, [_matrix((5, 3), seed=4)])
