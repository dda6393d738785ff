"""Edge points found by composed programs and NumPy's own edge cases
(beyond test_probes_s18.py): a nuclear norm at a zero singular value, a
double eigenvalue split by rounding, a determinant singular within
rounding, empty and duplicate axes, np.pad's computed modes, joins with a
dtype, np.interp at infinite table values. Each mode gives NumPy's value
and the derivative differences give, or every mode raises NumPy's error or
a typed adsim error naming what was refused."""
import numpy as np
import pytest

import adsim
import adsim.tapefile
from adsim.errors import UndefinedDerivative
from fdcheck import assert_close, central, differences

RANK_DEFICIENT = np.diag([2.0, 1.0, 0.0])
REGULAR = np.diag([3.0, 2.0, 1.0])
ONES = np.ones((3, 3))


def nuclear(m):
    return np.linalg.norm(m, "nuc")


def complex_nuclear(m):
    return np.linalg.norm(m * (1 + 1j), "nuc")


# ------------------------------------ the nuclear norm at a zero singular value

@pytest.mark.parametrize("f", [nuclear, complex_nuclear])
@pytest.mark.parametrize("call", [
    lambda f: adsim.grad(f)(RANK_DEFICIENT),
    lambda f: adsim.jvp(f, (RANK_DEFICIENT,), (ONES,)),
    lambda f: adsim.hvp(f, RANK_DEFICIENT, ONES),
    lambda f: adsim.record(f, REGULAR).gradient(RANK_DEFICIENT),
    lambda f: adsim.record(f, REGULAR).jvp(RANK_DEFICIENT, ONES),
    lambda f: adsim.tapefile.loads(adsim.tapefile.dumps(adsim.record(f, REGULAR)))
    .gradient(RANK_DEFICIENT),
])
def test_the_nuclear_norm_of_a_rank_deficient_matrix_has_no_derivative(f, call):
    """||diag(2, 1, t)||_* = 3 + |t|: no derivative at t = 0 (central
    differences give 0 there, the singular values' one-sided rule 1), for
    real matrices as for complex ones."""
    assert central(f, [RANK_DEFICIENT], [np.diag([0.0, 0.0, 1.0])]) == pytest.approx(0.0)
    with pytest.raises(UndefinedDerivative, match="nuclear norm of a rank-deficient"):
        call(f)


def test_the_nuclear_norm_still_differentiates_at_regular_and_repeated_values():
    m = np.random.default_rng(0).standard_normal((3, 4))
    g = adsim.grad(nuclear)(m)
    assert_close(g, np.linalg.svd(m, full_matrices=False)[0]
                 @ np.linalg.svd(m, full_matrices=False)[2], 1e-12, 1e-14)
    v = np.random.default_rng(1).standard_normal(m.shape)
    assert_close(adsim.hvp(nuclear, m, v), central(adsim.grad(nuclear), [m], [v]), 1e-6, 1e-9)
    assert_close(adsim.grad(nuclear)(np.diag([2.0, 2.0, 1.0])), np.eye(3), 1e-15, 0)
    assert adsim.value(adsim.value_and_grad(nuclear)(m)[0]) == np.linalg.norm(m, "nuc")


@pytest.mark.parametrize("f", [nuclear, complex_nuclear, lambda m: np.linalg.norm(m, 2)])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_the_singular_value_norms_of_an_empty_matrix_are_constants(f, shape):
    """NumPy's value (0); the derivative the zeros of the matrix's shape."""
    z = np.zeros(shape)
    value, g = adsim.value_and_grad(f)(z)
    assert value == 0.0 and g.shape == shape
    assert adsim.hvp(f, z, z).shape == shape


# ------------------------------------- NumPy's errors and shapes at the edges

X = np.array([0.3, -1.2, 0.8])
M = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("f", [
    lambda z: np.tril(z), lambda z: np.triu(z, 1), lambda z: np.tril(z * (1 + 1j), -1).imag,
])
def test_the_triangle_of_a_vector_is_numpys_square_matrix(f):
    """NumPy reads a 1-d array as the rows of an (N, N) matrix."""
    assert adsim.record(f, X).forward(X).shape == (3, 3)
    assert np.array_equal(adsim.record(f, X).forward(X), f(X))
    assert_close(adsim.jacobian(f)(X), adsim.jacobian(f, mode="forward")(X), 0, 0)
    e = np.eye(3)
    assert_close(adsim.jacobian(f)(X), np.stack([f(e[i]) for i in range(3)], axis=-1), 0, 0)


def _numpys_error(f, x):
    with pytest.raises(Exception) as numpys:
        f(x)
    return type(numpys.value), str(numpys.value)


@pytest.mark.parametrize("f, x", [
    (lambda z: np.linalg.cond(z), np.array(2.0)),
    (lambda z: np.linalg.cond(z, 1), X),
    (lambda z: np.linalg.cond(z), np.zeros(0)),
    (lambda z: np.linalg.norm(z, axis=0), np.array(2.0)),
    (lambda z: np.linalg.norm(z, "nuc", axis=(1, -1)), np.array(2.0)),
    (lambda z: np.linalg.norm(z, axis=(0, 0)), M),
    (lambda z: np.linalg.norm(z, 1, axis=(1, -1)), M),
    (lambda z: np.linalg.norm(z * 1j, "fro", axis=(0, -2)), M),
    (lambda z: np.linalg.norm(z, axis=(0, 1, 1)), M),
    (lambda z: np.linalg.norm(z, axis=[0]), M),
    (lambda z: np.sum(z, axis=(0, 0)), M),
    (lambda z: np.max(z, axis=(1, -1)), M),
    (lambda z: np.var(z, axis=(1, 1)), M),
    (lambda z: np.mean(z * 1j, axis=(0, 0)).real, M),
    (lambda z: np.take_along_axis(z, np.zeros((2, 1), int), axis=5), M),
    (lambda z: np.take_along_axis(z, np.zeros((1, 2), int), axis=-3), M),
    (lambda z: np.linalg.vector_norm(z, axis=2), M),
    (lambda z: np.linalg.vector_norm(z, axis=(0, -2)), M),
    (lambda z: np.linalg.tensorsolve(z.reshape(2, 1, 2) + 3.0, np.ones(2), axes=(5,)), M),
    (lambda z: np.linalg.tensorsolve(z.reshape(2, 1, 2) + 3.0, np.ones(2), axes=(-1,)), M),
])
def test_what_numpy_refuses_is_refused_with_numpys_error(f, x):
    """Duplicate or missing axes, too few dimensions: NumPy raises; a
    recording once reduced the duplicates away, or failed on a modulo."""
    kind, _ = _numpys_error(f, x)
    with pytest.raises(kind):
        adsim.grad(lambda z: np.sum(f(z)))(x)


@pytest.mark.parametrize("f", [
    lambda z: np.max(z, initial=0.5),
    lambda z: np.min(z, axis=1, initial=0.5),
    lambda z: np.max(z, axis=(0, 1), keepdims=True, initial=-1.0),
    lambda z: np.linalg.norm(z.ravel(), np.inf),
    lambda z: np.linalg.norm(z, 1),
    lambda z: np.linalg.norm(z, np.inf),
])
@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3)])
def test_a_maximum_with_an_initial_value_over_nothing_is_that_value(f, shape):
    """NumPy's max(initial=...) of an empty axis (and the inf- and 1-norms,
    which NumPy takes with initial=0) is the initial value, which the error
    of a max over an empty axis even told the user to pass."""
    z = np.zeros(shape)
    want = f(z)
    assert np.array_equal(adsim.record(f, z).forward(z), want)
    assert adsim.jacobian(f)(z).shape == np.shape(want) + shape


@pytest.mark.parametrize("mode", ["empty", lambda vector, width, axis, kwargs: None])
def test_pad_modes_that_write_into_numpys_array_are_refused_by_name(mode):
    with pytest.raises(adsim.UnsupportedOperation, match="np.pad.*mode="):
        adsim.grad(lambda z: np.sum(np.pad(z, 1, mode=mode)))(X)


@pytest.mark.parametrize("f", [
    lambda z: np.concatenate([z, z], dtype=int, casting="unsafe"),
    lambda z: np.stack([z, z], dtype=np.int64, casting="unsafe"),
    lambda z: np.hstack([z, z], dtype=np.float32),
])
def test_joins_with_another_dtype_are_refused_not_left_uncast(f):
    """NumPy casts the joined values (2.5 -> 2); a join of positions did not."""
    with pytest.raises(adsim.UnsupportedOperation, match="dtype="):
        adsim.record(lambda z: f(z) * 1.0, np.array([0.3, -1.7, 2.5]))


def test_a_complex_join_keeps_its_complex128_dtype():
    f = lambda z: np.concatenate([z, z * 1j], dtype=complex).imag   # noqa: E731
    x = np.array([0.3, -1.7, 2.5])
    assert np.array_equal(adsim.record(f, x).forward(x), f(x))


PLAIN = np.zeros(4)


@pytest.mark.parametrize("uf", [np.add, np.subtract, np.maximum])
def test_ufunc_at_into_a_plain_array_says_to_make_it_active(uf):
    def f(z):
        a = PLAIN.copy()
        uf.at(a, [0, 0, 3], z[:3])
        return a
    with pytest.raises(adsim.UnsupportedOperation, match="plain NumPy array .shape .4,..*active"):
        adsim.record(f, np.array([0.3, -1.7, 2.5, 0.8]))


@pytest.mark.parametrize("x, fp", [
    (1.0, [0.0, 1.0, np.inf]),          # at a knot beside an infinite value
    (2.0, [0.0, np.nan, 2.0]),          # the last knot
    (0.5, [np.inf, np.inf, 1.0]),       # a constant infinite cell
    (1.5, [0.0, np.inf, np.inf]),
])
def test_interp_at_non_finite_table_values_gives_numpys_value(x, fp):
    f = lambda z: np.interp(z, [0.0, 1.0, 2.0], fp)    # noqa: E731
    assert adsim.record(f, np.array([x])).forward(np.array([x])) == f(np.array([x]))


def test_interp_in_a_decreasing_table_is_refused():
    with pytest.raises(adsim.UnsupportedOperation, match="not increasing"):
        adsim.grad(lambda z: np.sum(np.interp(z, [2.0, 1.0, 0.0], [0.0, 1.0, 2.0])))(X)


def _eigenvalues_of_a_softmax(z):
    """The eigenvalues of s s^T + diag(s) for s = softmax(z): at z = 0 the
    matrix is 1/9 + I/3, whose eigenvalue 1/3 is double, and LAPACK's two
    copies of it differ in the last bit."""
    s = np.exp(z) / np.sum(np.exp(z))
    return np.sum(np.linalg.eigvalsh(np.outer(s, s) + np.diag(s)) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("call", [
    lambda z, v: adsim.hvp(_eigenvalues_of_a_softmax, z, v),
    lambda z, v: adsim.hessian(_eigenvalues_of_a_softmax)(z),
    lambda z, v: adsim.record(_eigenvalues_of_a_softmax, z + v).hvp(z, v),
    lambda z, v: adsim.jvp(lambda y: np.linalg.eigh(np.outer(y, y) + np.diag(y))[1],
                           (np.full(3, 1 / 3),), (v,)),
])
def test_eigenvalues_equal_within_rounding_have_no_second_derivative(call):
    """The second derivatives (and the eigenvectors' tangents) divide by the
    difference of the two copies, 1e-16, where the direction splits them: a
    Hessian-vector product came out as noise, asymmetric and unlike
    differences of the gradient."""
    with pytest.raises(UndefinedDerivative, match="equal within rounding"):
        call(np.zeros(3), np.array([0.3, -0.5, 0.9]))


def test_their_first_derivatives_remain():
    """(The double eigenvalue weighted alike: a differentiable function.)"""
    def f(z):
        s = np.exp(z) / np.sum(np.exp(z))
        return np.linalg.eigvalsh(np.outer(s, s) + np.diag(s)) @ np.array([1.0, 1.0, 3.0])
    z = np.zeros(3)
    assert_close(adsim.grad(f)(z), differences(f, z), 1e-7, 1e-9)


SINGULAR_IN_ROUNDING = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]])


@pytest.mark.parametrize("f", [np.linalg.det, lambda m: np.real(np.linalg.det(m * (1 + 0.5j)))])
def test_second_derivatives_of_det_at_a_matrix_singular_within_rounding_are_refused(f):
    """LU meets no zero pivot (det = 7e-18), so det(A) inv(A) went through:
    rounding noise times its inverse, a Hessian off by 5 where its entries
    are below 1. First derivatives (the adjugate, by the SVD) stay right."""
    assert np.linalg.det(SINGULAR_IN_ROUNDING) != 0.0
    with pytest.raises(adsim.AdsimError, match="singular"):
        adsim.hessian(f)(SINGULAR_IN_ROUNDING)
    cofactors = np.array([[-0.03, 0.06, -0.03], [0.06, -0.12, 0.06], [-0.03, 0.06, -0.03]])
    assert_close(adsim.grad(np.linalg.det)(SINGULAR_IN_ROUNDING), cofactors, 1e-12, 1e-15)


@pytest.mark.parametrize("f", [lambda m: np.linalg.norm(m, 2), lambda m: np.linalg.norm(m, "nuc"),
                               lambda m: np.linalg.norm(m * (1 + 1j), 2)])
def test_norm_hessians_at_repeated_singular_values_are_refused_by_the_norms_name(f):
    """Once refused as 'the eigenvectors of a complex Hermitian matrix', a
    Gram matrix the user never wrote."""
    with pytest.raises(UndefinedDerivative, match=r"numpy.linalg.norm\(\.\.\., ord=.*repeated "
                                                  r"singular values"):
        adsim.hessian(f)(np.diag([3.0, 1.0, 1.0]))
