"""Complex intermediates beyond arithmetic: sqrt, sin, cos, tan, sinh,
cosh, tanh of complex active arrays, complex constants in matrix products
and NumPy functions beside real active values, np.array of nested lists
mixing them, and complex solves and inverses: NumPy's values to rounding,
derivatives in every mode against differences (fdcheck.check_tape)."""
import numpy as np
import pytest

import adsim
import models_by_name as lib
from fdcheck import assert_close, check_tape

X = np.array([0.7, -1.3, 0.4])


def parts(z):
    return np.concatenate([np.ravel(np.real(z)), np.ravel(np.imag(z))])


@pytest.mark.parametrize("name", ["sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh"])
def test_elementary_functions_of_complex_values(name):
    f = getattr(np, name)

    def g(x):
        return parts(f(x + 1j * x[::-1] ** 2))
    assert_close(adsim.record(g, X).forward(X), g(X), 1e-13, 1e-15)
    check_tape(g, [X], value_rtol=1e-13, value_atol=1e-15)


def test_sqrt_takes_numpys_branch_and_refuses_zero():
    def g(x):
        return parts(np.sqrt(x - 2.0 + 0.0j) + np.sqrt(-x * (1.0 - 0.0j)))
    assert_close(adsim.record(g, X).forward(X), g(X), 1e-13, 1e-15)
    with pytest.raises(adsim.UndefinedDerivative):
        adsim.grad(lambda x: np.real(np.sqrt(x * 1j + 0.0j))[0])(np.zeros(1))


def test_complex_constants_in_products_and_functions():
    C = np.array([[1.0, 2.0j, 0.5], [0.3j, 1.0, -1.0j]])

    def g(x):
        return parts(np.concatenate([C @ x, np.dot(C, x), np.matmul(C, x ** 2),
                                     x @ C.T, np.multiply(x, 1j) + np.add(x, 2.0 + 1j)]))
    assert_close(adsim.record(g, X).forward(X), g(X), 1e-13, 1e-15)
    check_tape(g, [X], value_rtol=1e-13, value_atol=1e-15)


def test_nested_lists_mixing_complex_real_and_constant_values():
    def g(x):
        m = np.array([[x[0], 1j], [1j * x[1], 2.0 + x[2]]])
        assert m.dtype == np.complex128 and m.shape == (2, 2)
        v = np.asarray([x[0] * (1 + 1j), 0.5])
        return parts(np.linalg.solve(m, v))
    check_tape(g, [X], value_atol=1e-14)
    with pytest.raises(TypeError):
        adsim.grad(lambda x: np.sum(np.array([x[0], 1j * x[1]], dtype=float)))(X)


def test_concatenators_and_diagonals_of_complex_values():
    """np.r_ and np.c_ with complex active items beside real, complex and
    slice items, and np.diag, diagflat, tril, triu of complex matrices: the
    power-flow idiom ``np.r_[0.0, S]`` and ``np.diag(V) @ np.conj(Y @ V)``."""
    def g(x):
        z = x[:2] * np.exp(1j * x[2:])
        joined = np.r_[0.0, z, 2j, x[0], 1:3]
        columns = np.c_[z, x[:2], [1j, 2.0]]
        M = np.outer(z, np.conj(z)) + np.diag(z)
        return parts(np.r_[joined, columns.ravel(), np.diag(M), np.diagflat(z).ravel(),
                           np.tril(M).ravel(), np.triu(M, 1).ravel(), np.r_[z]])
    x = np.array([0.7, 1.3, 0.4, -0.9])
    assert_close(adsim.record(g, x).forward(x), g(x), 1e-13, 1e-15)
    check_tape(g, [x], value_rtol=1e-13, value_atol=1e-15)


def test_lists_of_complex_values_assigned_into_a_complex_workspace():
    """``C[0] = [1j * a, b]``: rows of a complex matrix written as lists."""
    def g(x):
        C = np.zeros((3, 2), complex)
        C[0] = [1j * x[0], x[1]]
        C[1] = (2.0, np.exp(1j * x[2]))
        C[2, :] = [1j, 0.5]
        M = np.zeros((2, 2), dtype=complex)
        M[:] = [[np.cos(x[0]), 1j * np.sin(x[0])], [1j * np.sin(x[0]), np.cos(x[3])]]
        return np.concatenate([parts(C), parts(np.linalg.inv(M))])
    x = np.array([0.7, 1.3, 0.4, 1.9])
    assert_close(adsim.record(g, x).forward(x), g(x), 1e-13, 1e-15)
    check_tape(g, [x], value_rtol=1e-13, value_atol=1e-15)


def test_an_absorbing_coating():
    """A metal-like layer with complex refractive index n - i k between
    dielectrics: complex cos and sin of the phase thickness."""
    def absorbing(p):
        return sum(lib.reflectance([1.38, p[0] - 1j * p[1], 2.1], [99.6, 12.0, p[2]], w)
                   for w in (450.0, 550.0, 650.0))
    check_tape(absorbing, [np.array([0.5, 2.8, 60.0])])


def test_determinants_of_complex_matrices():
    """det of a complex matrix, and a damped chain's dispersion function
    |det(K - w^2 M + i w c K)|^2; at a singular matrix the rule (which uses
    the inverse) raises."""
    def f(x):
        m = np.array([[x[0], 1j], [1j * x[1], 2.0 + x[2]]])
        stack = np.stack([m, m * (1.0 - 0.5j) + np.eye(2)])
        return parts(np.concatenate([np.reshape(np.linalg.det(m), (1,)), np.linalg.det(stack)]))
    tape = check_tape(f, [X], value_rtol=1e-12, value_atol=1e-15)
    assert_close(tape.forward(X), f(X), 1e-13, 1e-15)

    def dispersion(p):
        k, c, w = p
        K = np.array([[2 * k, -k], [-k, k]])
        return np.abs(np.linalg.det(K - w ** 2 * np.eye(2) + 1j * w * c * K)) ** 2
    check_tape(dispersion, [np.array([1.5, 0.1, 1.3])])


def test_the_determinant_of_a_singular_complex_matrix_has_the_adjugate_as_derivative():
    """At a matrix of rank n - 1, d det = tr(adj(M) dM) with adj(M) != 0."""
    def f(x):
        m = (np.outer(x, [1.0, 2.0, 0.5]) + np.diag([0.0, 1.0, 2.0])) * (1.0 + 1j)
        return parts(np.reshape(np.linalg.det(m), (1,)))
    z = np.array([0.0, 0.3, -0.4])                      # a singular point: row 0 is zero
    assert abs(np.linalg.det(np.outer(z, [1.0, 2.0, 0.5]) + np.diag([0.0, 1.0, 2.0]))) == 0
    _, jv = adsim.jvp(f, (z,), (np.array([1.0, 0.0, 0.0]),))
    assert_close(jv, parts(np.reshape(2.0 * (1.0 + 1j) ** 3, (1,))), 1e-12, 1e-14)
    check_tape(f, [z], order=1)


def test_log_determinants_of_complex_matrices():
    """slogdet of a complex matrix and of a stack: the sign det/|det| moves on
    the unit circle, log|det| is real; NumPy's values, every mode. A damped
    chain's log|det(K - w^2 M + i w c K)| (the log of its dispersion
    function) through it, and at a singular matrix a clear refusal."""
    def f(x):
        m = np.array([[x[0], 1j], [1j * x[1], 2.0 + x[2]]])
        stack = np.stack([m, m * (1.0 - 0.5j) + np.eye(2)])
        sign, logabsdet = np.linalg.slogdet(m)
        signs, logs = np.linalg.slogdet(stack)
        return np.concatenate([parts(np.reshape(sign, (1,))), np.reshape(logabsdet, (1,)),
                               parts(signs), logs])
    tape = check_tape(f, [X], rtol=1e-6, value_rtol=1e-12, value_atol=1e-15)
    assert_close(tape.forward(X * 1.1), f(X * 1.1), 1e-13, 1e-15)

    def log_dispersion(p):
        k, c, w = p
        K = np.array([[2 * k, -k], [-k, k]])
        return np.linalg.slogdet(K - w ** 2 * np.eye(2) + 1j * w * c * K).logabsdet
    p = np.array([1.5, 0.1, 1.3])
    check_tape(log_dispersion, [p], rtol=1e-6)
    K = np.array([[3.0, -1.5], [-1.5, 1.5]])
    want = 0.5 * np.log(np.abs(np.linalg.det(K - 1.69 * np.eye(2) + 0.13j * K)) ** 2)
    assert_close(log_dispersion(p), want, 1e-13, 1e-15)
    with pytest.raises(adsim.UndefinedDerivative, match="singular"):
        adsim.grad(lambda x: np.linalg.slogdet(np.outer([1.0, 2.0], x[:2]) * (1.0 + 1j))[1])(X)


@pytest.mark.parametrize("f", [
    lambda z, x: np.vdot(z, x * z),
    lambda z, x: np.einsum("i,i->", z, z) + np.einsum("ij->j", np.outer(z, x)).sum(),
    lambda z, x: np.einsum("ij,jk->ik", np.outer(z, x), np.outer(x, z)),
    lambda z, x: np.linalg.norm(z) + np.linalg.norm(z, 1) + np.linalg.norm(z, np.inf),
    lambda z, x: np.linalg.norm(np.outer(z, x), axis=1) + np.linalg.norm(np.outer(z, z), 1,
                                                                          axis=0),
    lambda z, x: np.linalg.norm(np.outer(z, x), "fro", keepdims=True),
], ids=["vdot", "einsum one and two", "einsum matrices", "vector norms", "axis norms",
        "frobenius keepdims"])
def test_products_and_norms_of_complex_values(f):
    def g(x):
        return parts(f(x * (1.0 + 2.0j) - 0.5j * x[::-1], x))
    assert_close(adsim.record(g, X).forward(X), g(X), 1e-13, 1e-15)
    check_tape(g, [X], value_rtol=1e-13, value_atol=1e-15)


C43 = np.random.default_rng(5).standard_normal((2, 4, 3))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("shape", ["tall", "wide", "stack"])
def test_singular_value_norms_of_complex_matrices(ord, shape):
    """The 2, -2 and nuclear norms of a complex matrix (NumPy's values, its
    SVD's derivative in every mode, hvp through the Gram matrix's Hermitian
    eigenvectors), of tall, wide and stacked matrices."""
    def f(x):
        m = C43[0] * x[0] + 1j * (C43[1] + np.outer(C43[0][:, 0], x))
        if shape == "wide":
            m = m.T
        if shape == "stack":
            return np.linalg.norm(np.stack([m, m * (0.5 - x[1] * 1j)]), ord, axis=(1, 2),
                                  keepdims=True)
        return np.linalg.norm(m, ord)
    tape = check_tape(f, [X], rtol=1e-6, value_rtol=1e-14, value_atol=1e-15)
    assert_close(tape.forward(X * 1.1), f(X * 1.1), 1e-14, 1e-15)


@pytest.mark.parametrize("ord, why", [(2, "largest singular value is repeated"),
                                      (-2, "smallest singular value is zero or repeated"),
                                      ("nuc", "rank-deficient")])
def test_singular_value_norms_where_they_are_not_differentiable(ord, why):
    with pytest.raises(adsim.UndefinedDerivative, match=why):
        adsim.grad(lambda x: np.linalg.norm(np.diag(x) * (1 + 1j), ord))(np.array([1.0, 1.0, 0.0]))


# ---- Hermitian eigenproblems ----------------------------------------------------------

HR, HI = np.random.default_rng(3).standard_normal((2, 4, 4))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_hermitian_eigenvalues_are_numpys_and_differentiated_from_the_triangle_read(uplo):
    def values(re, im):
        return np.concatenate([np.linalg.eigvalsh(re + 1j * im, uplo),
                               np.linalg.eigh(re + 1j * im, UPLO=uplo).eigenvalues])
    tape = check_tape(values, [HR, HI])
    assert np.array_equal(tape.forward(HR, HI), values(HR, HI))
    g_re, g_im = adsim.grad(lambda re, im: np.sum(np.linalg.eigvalsh(re + 1j * im, uplo) ** 3),
                            argnums=(0, 1))(HR, HI)
    unread = np.triu(np.ones((4, 4)), 1) if uplo == "L" else np.tril(np.ones((4, 4)), -1)
    assert np.all(g_re[unread == 1] == 0) and np.all(g_im[unread == 1] == 0)
    assert np.all(np.diagonal(g_im) == 0)          # the diagonal's imaginary part is not read


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_phase_free_functions_of_hermitian_eigenvectors(uplo):
    def shapes(re, im):
        w, V = np.linalg.eigh(re + 1j * im, UPLO=uplo)
        return np.concatenate([np.ravel(np.abs(V) ** 2),
                               parts(np.outer(V[:, 2], np.conj(V[:, 2])))])
    check_tape(shapes, [HR, HI], value_atol=1e-14)


def test_bands_of_a_ring_threaded_by_a_flux():
    """Tight-binding ring of 5 sites, hopping t with Peierls phase phi / 5 per
    bond and a site potential: its bands against the closed form without
    the potential, and every sweep with it."""
    def hamiltonian(t, phi, onsite):
        n = 5
        hop = -t * np.exp(1j * phi / n)
        H = np.roll(np.eye(n), 1, axis=1) * hop
        return H + np.conj(H).T + np.diag(onsite)

    def bands(p):
        return np.linalg.eigvalsh(hamiltonian(p[0], p[1], p[2] * np.cos(np.arange(5.0))))
    p = np.array([1.0, 0.4, 0.0])
    k = 2 * np.pi * np.arange(5) / 5
    assert_close(bands(p), np.sort(-2 * p[0] * np.cos(k + p[1] / 5)), 1e-12, 1e-14)
    check_tape(bands, [np.array([1.0, 0.4, 0.3])])


def test_hermitian_eigenvectors_at_a_repeated_eigenvalue_are_refused():
    def f(x):
        h = np.diag([x[0], x[0], 2.0]) + 1j * np.zeros((3, 3)) * x[1]
        return np.sum(np.abs(np.linalg.eigh(h)[1]) ** 4)
    with pytest.raises(adsim.UndefinedDerivative, match="equal"):
        adsim.grad(f)(np.array([1.0, 0.5]))


# ---- complex workspaces filled item by item -----------------------------------------

FREQUENCIES = np.linspace(0.5, 2.0, 5)


def receptance(p):
    """The receptance 1 / (k - w^2 m + i w c) of a damped oscillator at
    several frequencies, stored item by item into a complex workspace as a
    frequency-response code does, then its magnitude and phase."""
    k, m, c = p
    H = np.zeros(len(FREQUENCIES), dtype=complex)
    for i, w in enumerate(FREQUENCIES):
        H[i] = 1.0 / (k - w ** 2 * m + 1j * w * c)
    return np.concatenate([np.abs(H), np.angle(H)])


def test_a_complex_workspace_filled_in_a_loop():
    p = np.array([2.0, 1.1, 0.3])
    tape = check_tape(receptance, [p], value_rtol=1e-13, value_atol=1e-15)
    moved = p * np.array([1.05, 0.97, 1.2])
    assert_close(tape.forward(moved), receptance(moved), 1e-13, 1e-15)


def test_complex_workspaces_of_every_creation_function():
    def f(x):
        a = np.ones((2, 2), dtype=complex)
        a[0, 1] = 1j * x[0]
        a[1] = x[1:] * (1.0 - 1.0j)
        b = np.empty(3, np.complex128)             # every element written, as NumPy needs
        b[0] = 0.25
        b[1:] = x[:2] + 1j * x[1:]
        b += 0.5j * x[2]
        c = np.full(3, 2.0 + 1.0j) * np.eye(3, dtype=complex)[0]
        c[2] = b[1] * b[2]
        d = np.zeros_like(b)                       # of a complex active array too
        d[0] = c[2] * 1j
        return np.concatenate([parts(np.linalg.det(a)), parts(b), parts(c), parts(d)])
    check_tape(f, [X], value_rtol=1e-13, value_atol=1e-15)


def test_a_complex_workspace_is_a_constant_until_an_active_value_is_written():
    def f(x):
        z = np.zeros(3, complex)
        z[1] = 2.0 + 1.0j
        w = np.polyval(z, 0.5) + np.sum(np.arctan(z))    # no complex rule: NumPy's values
        return x * np.abs(w)
    z = np.array([0.0, 2.0 + 1.0j, 0.0])
    assert_close(adsim.record(f, X).forward(X), X * np.abs(np.polyval(z, 0.5) +
                                                        np.sum(np.arctan(z))), 1e-15, 0.0)

    def written(x):
        z = np.zeros(3, complex)
        z[0] = 1j * x[0]
        return x * np.abs(np.polyval(z, 0.5))
    with pytest.raises(adsim.UnsupportedOperation, match="numpy.polyval"):
        adsim.jacobian(written)(X)
    with pytest.raises(adsim.ActiveValueLeak, match="imaginary part"):
        adsim.jacobian(lambda x: np.asarray(np.zeros(3, complex) + 1j * x).real)(X)


@pytest.mark.parametrize("n", [5, 2, 1, 0, -3])
def test_matrix_power_of_a_complex_transfer_matrix(n):
    """A periodic stack's transfer matrix, one period's characteristic
    matrix to the power of the number of periods (the inverse's for n < 0):
    it was refused on complex active arrays."""
    def f(p):
        d = p[0]
        M = np.array([[np.cos(d), 1j * np.sin(d) / p[1]], [1j * p[1] * np.sin(d), np.cos(d)]])
        P = np.linalg.matrix_power(M @ np.array([[1.0, 0.2j], [0.0, 1.0]]), n)
        return np.abs(P[0, 1]) ** 2 + np.real(P[1, 1]) + np.imag(P[0, 0])

    x = np.array([0.4, 1.5])
    M = np.array([[np.cos(0.4), 1j * np.sin(0.4) / 1.5], [1j * 1.5 * np.sin(0.4), np.cos(0.4)]])
    P = np.linalg.matrix_power(M @ np.array([[1.0, 0.2j], [0.0, 1.0]]), n)
    assert_close(adsim.record(f, x).forward(x), np.abs(P[0, 1]) ** 2 + P[1, 1].real + P[0, 0].imag,
                 rtol=1e-13, atol=1e-14, what="value")
    g = adsim.grad(f)(x)
    h = 1e-6
    assert_close(g, np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(2) * h]),
                 rtol=1e-6, atol=1e-9, what="gradient")
    v = np.array([0.3, -0.7])
    _, jv = adsim.jvp(f, (x,), (v,))
    assert_close(jv, g @ v, rtol=1e-12, atol=1e-15, what="jvp vs grad")
    assert_close(adsim.hvp(f, x, v), (adsim.grad(f)(x + h * v) - adsim.grad(f)(x - h * v)) / (2 * h),
                 rtol=1e-5, atol=1e-8, what="hvp")
