"""``L.data = L.data * p``: active values assigned (not written in place) to
the data of a SciPy sparse matrix make it the active sparse matrix of its
pattern, as ``L.data *= p`` does (adsim/_scipy/sparse_data.py). Before,
the plain matrix carried an active array into SciPy's compiled products,
which refused it naming SciPy's internals."""
import numpy as np
import pytest
import scipy.sparse as sparse
from scipy.sparse.linalg import spsolve

import adsim

N = 6
LAPLACIAN = sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(N, N), format="csr")
X = np.array([0.8, 0.3])
GRID = np.linspace(0.2, 1.3, N)


def _checked(f, x):
    """grad against differences, jvp against grad, hvp against differences
    of grad, and a replay at a new point against the function."""
    g = adsim.grad(f)(x)
    fd = np.array([(f(x + h) - f(x - h)) / 2e-6 for h in 1e-6 * np.eye(x.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    v = np.array([0.7, -0.4])
    _, jv = adsim.jvp(f, (x,), (v,))
    np.testing.assert_allclose(jv, g @ v, rtol=1e-12)
    hv = adsim.hvp(f, x, v)
    grad = adsim.grad(f)
    np.testing.assert_allclose(hv, (grad(x + 1e-5 * v) - grad(x - 1e-5 * v)) / 2e-5,
                               rtol=1e-5, atol=1e-8)
    tape = adsim.record(f, x)
    x2 = x * 1.3 + 0.1
    np.testing.assert_allclose(tape.forward(x2), f(x2), rtol=1e-13)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "csr_array"])
def test_data_assigned_a_product_with_parameters(fmt):
    def f(p):
        L = sparse.csr_array(LAPLACIAN) if fmt == "csr_array" else LAPLACIAN.asformat(fmt).copy()
        L.data = L.data * p[0]
        M = LAPLACIAN.T.tocsr()
        M.data = np.exp(p[1]) + M.data                  # a second matrix
        M.data = M.data * L.data                        # assigned again, once active
        u = spsolve((sparse.eye(N) - L).tocsc(), np.ones(N))
        return u @ GRID + np.sum(L @ GRID ** 2) + np.sum(M.T @ GRID) + L.data.sum()
    _checked(f, X)


def test_data_assigned_to_a_matrix_held_by_a_model():
    """The assignment inside a library's method (``self.L.data = ...``):
    every holder of the matrix sees the active values."""
    class Diffusion:
        def __init__(self):
            self.L = LAPLACIAN.copy()

        def set_coefficient(self, d):
            self.L.data = d * LAPLACIAN.data

        def step(self, u, dt):
            return u + dt * (self.L @ u)

    def f(p):
        model = Diffusion()
        held = model.L
        model.set_coefficient(p[0] + p[1] ** 2)
        u = GRID.copy()
        for _ in range(5):
            u = model.step(u, 0.1)
        return np.sum(u ** 2) + np.sum(held @ GRID)
    _checked(f, X)


def test_plain_data_assigned_keeps_scipys_matrix():
    def f(p):
        L = LAPLACIAN.copy()
        L.data = L.data * 2.0                           # plain: SciPy's matrix as it is
        assert type(L) is sparse.csr_matrix and type(L.data) is np.ndarray
        return np.sum(L @ (GRID * p[0]))
    np.testing.assert_allclose(adsim.grad(f)(X), [np.sum(2.0 * LAPLACIAN @ GRID), 0.0],
                               rtol=1e-13)
    assert "data" not in vars(type(LAPLACIAN).__mro__[0])
    assert "data" not in vars(sparse._data._data_matrix)      # nothing left after recording
    L = LAPLACIAN.copy()
    L.data = L.data * 3.0
    del L.data
    with pytest.raises(AttributeError):
        L.data


def test_data_of_the_wrong_size_or_format_is_refused_clearly():
    def wrong_size(p):
        L = LAPLACIAN.copy()
        L.data = p[0] * np.ones(L.nnz + 1)
        return np.sum(L @ GRID)
    with pytest.raises(ValueError, match=r"one value per stored entry"):
        adsim.grad(wrong_size)(X)

    def dia(p):
        L = LAPLACIAN.todia()
        L.data = L.data * p[0]
        return np.sum(L @ GRID)
    with pytest.raises(adsim.UnsupportedOperation, match="data of a dia matrix"):
        adsim.grad(dia)(X)
