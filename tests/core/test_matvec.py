"""Matrix-vector products take their own kernels (adsim/_matvec.h): one pass
over the matrix for a value and its tangents, or an adjoint and its tangents.
These tests cover the shapes around the kernels' blocking (row counts that
are and are not multiples of four, rows shorter and longer than eight) with
either operand active or both, in every sweep and in vector mode."""
import numpy as np
import pytest

import adsim as ad
from adsim.testing import check_grads

SHAPES = [(1, 2), (3, 5), (4, 8), (5, 9), (7, 17), (12, 3), (33, 40)]


def _matrix(m, k, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (m, k))


@pytest.mark.parametrize("m,k", SHAPES)
def test_constant_matrix_times_vector(m, k):
    A = _matrix(m, k)
    f = lambda x: np.sin(A @ x) * (A @ x)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, k)
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x), rtol=1e-13, atol=1e-14)
    check_grads(f, x, modes=("fwd", "rev", "cs"), order=2)


@pytest.mark.parametrize("m,k", SHAPES)
def test_vector_times_constant_matrix(m, k):
    B = _matrix(m, k, seed=2)
    f = lambda x: np.tanh(x @ B) ** 2
    x = np.random.default_rng(3).uniform(-1.0, 1.0, m)
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x), rtol=1e-13, atol=1e-14)
    check_grads(f, x, modes=("fwd", "rev", "cs"), order=2)


@pytest.mark.parametrize("m,k", [(4, 8), (5, 9), (9, 3)])
@pytest.mark.parametrize("vector_first", [False, True])
def test_both_operands_active(m, k, vector_first):
    """The matrix's own tangent and adjoint terms add to the vector's."""
    def f(z):
        M = np.reshape(z[: m * k], (m, k)) ** 2
        if vector_first:
            return np.exp(z[m * k: m * k + m] @ M)
        return np.exp(M @ z[m * k:])
    z = np.random.default_rng(4).uniform(-0.5, 0.5, m * k + (m if vector_first else k))
    check_grads(f, z, modes=("fwd", "rev", "cs"), order=2)


def test_vector_mode_equals_single_directions():
    """p tangents and q adjoints in one sweep give the single-direction results."""
    A = _matrix(7, 11, seed=5)
    f = lambda x: np.sum(np.cos(A @ x) ** 2) + (x @ A.T) @ (A @ x)
    x = np.random.default_rng(6).uniform(-1.0, 1.0, 11)
    V = np.random.default_rng(7).standard_normal((11, 5))
    tape = ad.record(f, x)
    together = tape.hvp(x, V)
    single = np.column_stack([tape.hvp(x, V[:, j]) for j in range(5)])
    np.testing.assert_allclose(together, single, rtol=1e-12, atol=1e-12)
    g = lambda x: np.sin(A @ x)
    J_fwd = ad.jacobian(g, mode="forward")(x)
    J_rev = ad.jacobian(g, mode="reverse")(x)
    np.testing.assert_allclose(J_fwd, J_rev, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(J_fwd, np.cos(A @ x)[:, None] * A, rtol=1e-12, atol=1e-14)


def test_hessian_of_quadratic_form_is_exact():
    """H of x'Ax/2 + b'x is (A + A')/2 whatever path the products take."""
    A = _matrix(9, 9, seed=8)
    b = np.random.default_rng(9).standard_normal(9)
    f = lambda x: 0.5 * (x @ (A @ x)) + b @ x
    H = ad.hessian(f)(np.zeros(9))
    np.testing.assert_allclose(H, 0.5 * (A + A.T), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("m,k", SHAPES)
@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("vector_first", [False, True])
def test_value_is_bitwise_the_same_in_every_sweep(m, k, p, vector_first):
    """Values computed with their tangents (vectors taken in pairs) are the
    values of the zero-order sweep, bit for bit: branch records compare them."""
    A = _matrix(m, k, seed=10)
    f = (lambda x: x @ A) if vector_first else (lambda x: A @ x)
    n_in, n_out = (m, k) if vector_first else (k, m)
    tape = ad.record(f, np.ones(n_in))
    xs = tape._inputs(np.random.default_rng(11).uniform(-1.0, 1.0, n_in))
    V = np.random.default_rng(12).standard_normal((p, n_in))
    y = tape._forward(xs)
    np.testing.assert_array_equal(tape._tangent(xs, [V], True)[0], y)
    np.testing.assert_array_equal(tape._soadjoint(xs, [V], np.ones(n_out))[0], y)
