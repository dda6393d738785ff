"""Table-driven checks of NumPy functions composed from recorded ops: every
case against NumPy's value, central differences (Jacobian), forward against
reverse mode (dot-product test), and a second point through the same
transformed function."""
import numpy as np
import pytest

import adsim as ad
from fdcheck import fd_jacobian

TABLE = np.array([-1.0, 0.05, 0.55, 2.0, 3.5])    # away from the test points
FP = np.array([1.0, -2.0, 0.5, 4.0, 3.0])
M = np.arange(1.0, 13.0).reshape(3, 4) / 5.0

SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def _spd(x):
    """A symmetric positive definite matrix depending on x (3 values)."""
    return SPD + np.outer(x, x)


CASES = {
    "linalg.inv": (lambda x: np.linalg.inv(_spd(x)), (3,)),
    "linalg.det": (lambda x: np.linalg.det(_spd(x) - 2.0 * np.eye(3)), (3,)),
    "linalg.slogdet": (lambda x: np.linalg.slogdet(_spd(x)).logabsdet * np.linalg.slogdet(-_spd(x))[0], (3,)),
    "linalg.cholesky": (lambda x: np.linalg.cholesky(_spd(x)), (3,)),
    "linalg.eigvalsh": (lambda x: np.linalg.eigvalsh(_spd(x)), (3,)),
    "linalg.eigh vectors": (lambda x: np.abs(np.linalg.eigh(_spd(x)).eigenvectors) * x, (3,)),
    "linalg.eigvalsh upper": (lambda x: np.linalg.eigvalsh(_spd(x) + np.triu(np.outer(x, x), 1),
                                                            UPLO="U"), (3,)),
    "linalg.eigh lower of non-symmetric": (lambda x: np.linalg.eigh(_spd(x) + np.triu(
        np.outer(x, x), 1)).eigenvalues, (3,)),
    "linalg.cholesky upper": (lambda x: np.linalg.cholesky(_spd(x) + np.tril(np.outer(x, x), -1),
                                                           upper=True), (3,)),
    "linalg.matrix_power": (lambda x: np.linalg.matrix_power(_spd(x) * 0.3, 3), (3,)),
    "linalg.matrix_power -1": (lambda x: np.linalg.matrix_power(_spd(x), -2), (3,)),
    "var": (lambda x: np.var(x), (6,)),
    "var axis ddof": (lambda x: np.var(x.reshape(2, 3), axis=1, ddof=1), (6,)),
    "std keepdims": (lambda x: np.std(x.reshape(3, 2), axis=0, keepdims=True), (6,)),
    "std method": (lambda x: x.reshape(2, 3).std(axis=-1), (6,)),
    "cumprod": (lambda x: np.cumprod(x), (5,)),
    "cumprod axis": (lambda x: np.cumprod(x.reshape(2, 3), axis=1), (6,)),
    "diff n=2": (lambda x: np.diff(x, n=2), (6,)),
    "diff prepend": (lambda x: np.diff(x, prepend=0.5, append=x[0]), (5,)),
    "diff axis 0": (lambda x: np.diff(x.reshape(3, 2), axis=0), (6,)),
    "gradient": (lambda x: np.gradient(x, 0.5), (6,)),
    "gradient 2nd order": (lambda x: np.gradient(x, 0.5, edge_order=2), (6,)),
    "gradient 2-d": (lambda x: np.stack(np.gradient(x.reshape(3, 4))), (12,)),
    "trapezoid": (lambda x: np.trapezoid(x ** 2, dx=0.1), (6,)),
    "trapezoid x": (lambda x: np.trapezoid(x, np.linspace(0, 1, 6) ** 2), (6,)),
    "trapezoid active x": (lambda x: np.trapezoid(x[:3] ** 2, x[3:]), (6,)),
    "polyval": (lambda x: np.polyval([1.0, -2.0, 0.5], x), (4,)),
    "polyval active p": (lambda x: np.polyval(x[:3], x[3:]), (6,)),
    "sort": (lambda x: np.sort(x) * np.arange(1.0, 7.0), (6,)),
    "sort axis 0": (lambda x: np.sort(x.reshape(3, 2), axis=0), (6,)),
    "argsort gather": (lambda x: x[np.argsort(x)] * np.arange(6.0), (6,)),
    "sort in place": (lambda x: _sorted_in_place(x), (6,)),
    "searchsorted": (lambda x: FP[np.searchsorted(TABLE, x)] * x, (4,)),
    "digitize": (lambda x: np.digitize(x, TABLE) * x ** 2, (4,)),
    "interp": (lambda x: np.interp(x, TABLE, FP), (4,)),
    "interp active fp": (lambda x: np.interp(np.array([0.2, 1.0, 3.0]), TABLE, x), (5,)),
    "interp outside": (lambda x: np.interp(x * 3.0, TABLE, FP, left=-5.0), (4,)),
    "logaddexp": (lambda x: np.logaddexp(x[:3], x[3:]), (6,)),
    "logaddexp2": (lambda x: np.logaddexp2(x[:3], 2.0 * x[3:]), (6,)),
    "sinc": (lambda x: np.sinc(x), (5,)),
    "sinc near 0": (lambda x: np.sinc(x * 1e-3), (5,)),
    "degrees radians": (lambda x: np.deg2rad(x) + np.rad2deg(x) + np.degrees(x) * np.radians(x), (3,)),
    "isfinite isinf": (lambda x: np.where(np.isfinite(x) & ~np.isinf(x), x, 0.0), (3,)),
    "real imag conj": (lambda x: np.real(x) + np.imag(x) + np.conj(x) * x.conjugate(), (3,)),
    "select": (lambda x: np.select([x < 0.3, x > 1.0], [x ** 2, np.sin(x)], 2.0), (6,)),
    "einsum ellipsis": (lambda x: np.einsum("...ij,jk->...ik", x.reshape(2, 2, 3), M[:3, :2]), (12,)),
    "einsum implicit ellipsis": (lambda x: np.einsum("i...->...", x.reshape(3, 4) ** 2), (12,)),
    "einsum broadcast ellipsis": (lambda x: np.einsum("...i,...i->...", x.reshape(4, 3), x[:3]), (12,)),
    "einsum sublists": (lambda x: np.einsum(x.reshape(3, 4), [0, 1], M, [0, 2], [1, 2]), (12,)),
    "matmul stacked": (lambda x: x.reshape(2, 2, 3) @ M[:3, :2], (12,)),
    "matmul stacked both": (lambda x: x.reshape(2, 2, 3) @ x.reshape(2, 3, 2), (12,)),
    "matmul stacked vector": (lambda x: np.concatenate([(x.reshape(2, 2, 3) @ x[:3]).ravel(),
                                                        (x[:2] @ x.reshape(2, 2, 3)).ravel()]), (12,)),
    "ufunc.at": (lambda x: _accumulated(x), (7,)),
    "convolve": (lambda x: np.convolve(x, [0.25, 0.5, -0.25]), (5,)),
    "convolve same active": (lambda x: np.convolve(x[:3], x[3:], mode="same"), (7,)),
    "convolve valid": (lambda x: np.convolve([1.0, -2.0, 1.0, 0.5, 3.0], x[:3] ** 2, mode="valid"), (3,)),
    "correlate": (lambda x: np.correlate(x, [1.0, 2.0]), (5,)),
    "correlate full longer v": (lambda x: np.correlate(x[:2], x[2:], mode="full"), (6,)),
    "norm vector orders": (lambda x: np.stack([np.linalg.norm(x * [1, -1, 1, -1], o) for o in
                                               (None, 1, 2, 3, 0.5, np.inf, -np.inf, -2)]), (4,)),
    "norm matrix orders": (lambda x: np.stack([np.linalg.norm(x.reshape(2, 3) * [[1, -1, 1], [-1, 1, 1]], o) for o in
                                               ("fro", 1, -1, np.inf, -np.inf)]), (6,)),
    "norm axes": (lambda x: np.concatenate([np.linalg.norm(x.reshape(2, 3), axis=1),
                                            np.linalg.norm(x.reshape(2, 3), 1, axis=0),
                                            np.linalg.norm(x.reshape(1, 2, 3), axis=(1, 2)),
                                            np.linalg.norm(x.reshape(2, 3), keepdims=True).ravel()]),
                  (6,)),
    "median": (lambda x: np.median(x) + np.median(x[:5]), (6,)),
    "median axis": (lambda x: np.median(x.reshape(2, 3), axis=1, keepdims=True), (6,)),
    "quantile": (lambda x: np.quantile(x, [0.1, 0.5, 0.77]), (6,)),
    "percentile axis": (lambda x: np.percentile(x.reshape(3, 2), 30, axis=0), (6,)),
    "matmul broadcast batch": (lambda x: np.concatenate([
        (M[None, :2, :2] @ x.reshape(3, 2, 2)).ravel(),
        (x.reshape(1, 2, 2, 3)[:, :, :, :2] @ x[:8].reshape(2, 1, 2, 2)).ravel()]), (12,)),
    "tensordot": (lambda x: np.tensordot(x.reshape(3, 4), M, axes=([0, 1], [0, 1])), (12,)),
    "tensordot int": (lambda x: np.tensordot(M.T, x.reshape(3, 4), axes=1), (12,)),
    "kron": (lambda x: np.kron(x.reshape(2, 2), M[:2, :2]), (4,)),
    "kron 1-d": (lambda x: np.kron(x, x[::-1]), (3,)),
    "append": (lambda x: np.append(x, [x[0] ** 2, 3.0]), (4,)),
    "triu tril": (lambda x: np.triu(x.reshape(3, 3), 1) + np.tril(x.reshape(3, 3)) ** 2, (9,)),
    "diag": (lambda x: np.diag(x) @ np.diag(np.outer(x, x)) + np.sum(np.diag(np.outer(x, x), 1)),
             (3,)),
    "split": (lambda x: np.concatenate([p ** (i + 1) for i, p in enumerate(np.split(x, 3))]), (6,)),
    "array_split": (lambda x: np.stack([np.sum(p) for p in np.array_split(x, 4)]), (7,)),
    "hsplit vsplit": (lambda x: np.vsplit(x.reshape(2, 4), 2)[1] * np.hsplit(x.reshape(2, 4), 2)[0].T.reshape(1, 4), (8,)),
    "rollaxis": (lambda x: np.rollaxis(x.reshape(2, 3, 2), 2) * np.arange(12.0).reshape(2, 2, 3), (12,)),
}


def _accumulated(x):
    y = np.zeros(4)
    np.add.at(y, np.array([0, 2, 2, 1, 2, 0]), x[:6] ** 2)     # repeats add once each
    np.multiply.at(y, [1, 1], x[6])
    np.subtract.at(y, [3], 0.5)
    return y


def _sorted_in_place(x):
    y = x * 1.0
    y.sort()
    return y * np.arange(1.0, y.size + 1)


def _points(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 1.4, shape) + 0.05 * np.arange(np.prod(shape)).reshape(shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_values_and_derivatives(name):
    f, shape = CASES[name]
    jac = ad.jacobian(f)
    for seed in (0, 1):
        x = _points(shape, seed)
        want = np.asarray(f(x.copy()), dtype=float)
        J = jac(x)
        _, y = ad.vjp(f, x, np.ones_like(want))
        np.testing.assert_allclose(ad.jvp(f, x, np.ones(shape))[0], want, rtol=1e-13, atol=1e-14)
        J_fd = fd_jacobian(f, [x]).reshape(want.shape + shape)
        np.testing.assert_allclose(J, J_fd, rtol=1e-6, atol=1e-8)
        v = np.cos(np.arange(x.size) + 1.0).reshape(shape)
        w = np.sin(np.arange(want.size) + 2.0).reshape(want.shape)
        _, jv = ad.jvp(f, x, v)
        _, jtw = ad.vjp(f, x, w)
        assert np.isclose(np.sum(w * jv), np.sum(jtw * v), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_hessian_vector_products(name):
    f, shape = CASES[name]
    x = _points(shape, 2)
    w = np.sin(np.arange(np.asarray(f(x.copy())).size) + 2.0).reshape(np.shape(f(x.copy())))

    def scalar(z):
        return np.sum(w * f(z))
    v = np.cos(np.arange(x.size) + 1.0).reshape(shape)
    g = ad.grad(scalar)
    h = 1e-4
    want = (g(x + h * v) - g(x - h * v)) / (2 * h)
    np.testing.assert_allclose(ad.hvp(scalar, x, v), want, rtol=1e-6, atol=1e-7)


def test_logaddexp_from_minus_infinity_has_finite_derivatives():
    """A forward recursion in log space starts from -inf: no NaN may leak."""
    def forward(x):
        la = np.full(3, -np.inf)
        la[0] = x[0]
        for _ in range(3):
            la = np.logaddexp(la, np.roll(la, 1) + x)
        return np.sum(la)
    x = np.array([0.1, -0.3, 0.5])
    value, g = ad.value_and_grad(forward)(x)
    assert np.isclose(value, forward(x.copy()), rtol=1e-14)
    np.testing.assert_allclose(g, fd_jacobian(forward, [x]).reshape(3), rtol=1e-7)


def test_linalg_at_singular_and_degenerate_points():
    """det's derivative at a singular matrix is the adjugate; eigenvalues at a
    repeated eigenvalue have derivatives, and unused eigenvectors add nothing."""
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(ad.grad(np.linalg.det)(singular), [[4.0, -2.0], [-2.0, 1.0]])
    g = ad.grad(lambda K: np.sum(np.log(np.linalg.eigh(K).eigenvalues)))(2.0 * np.eye(3))
    np.testing.assert_allclose(g, 0.5 * np.eye(3))


def test_eigenvectors_and_second_derivatives_at_a_repeated_eigenvalue_are_refused():
    """At equal eigenvalues the eigenvectors have no derivative, nor do the
    eigenvalues a second one: UndefinedDerivative, never NaN."""
    A = np.diag([1.0, 1.0, 2.0])
    V = np.ones((3, 3))
    uses_vectors = lambda K: np.sum(np.linalg.eigh(K)[1][:, 0] ** 3)        # noqa: E731
    values = lambda K: np.sum(np.linalg.eigvalsh(K) ** 2)                    # noqa: E731
    for call in (lambda: ad.grad(uses_vectors)(A), lambda: ad.jvp(uses_vectors, A, V),
                 lambda: ad.hvp(values, A, V)):
        with pytest.raises(ad.UndefinedDerivative, match="eigenvalues 0 and 1 are equal"):
            call()
    np.testing.assert_allclose(ad.grad(values)(A), 2 * A)       # first derivatives exist
    assert ad.jvp(values, A, V)[1] == pytest.approx(8.0)
