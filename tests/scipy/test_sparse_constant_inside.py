"""Sparse matrices a model builds inside the recorded function from
constants (``np.ones`` there is an active array without a derivative) are
SciPy's own matrices, so every SciPy routine takes them: ``splu``,
``expm_multiply``, ``issparse`` checks."""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import adsim
from adsim.testing import check_grads

N = 12


def _laplacian(n, h):
    """The 1-D Dirichlet Laplacian, written as scripts write it."""
    main, off = -2.0 * np.ones(n), np.ones(n - 1)
    return sp.diags([off, main, off], [-1, 0, 1], format="csc") / h ** 2


def steady_heat(source):
    """-u'' = source on (0, 1), u = 0 at both ends; the mean of u squared."""
    h = 1.0 / (N + 1)
    L = _laplacian(N, h)
    assert sp.issparse(L)                         # SciPy's own matrix
    u = spla.splu(-L).solve(source)
    return h * np.sum(u ** 2)


def implicit_euler(u0):
    """Two implicit Euler steps of the heat equation, a solver made once."""
    h, dt = 1.0 / (N + 1), 1e-3
    A = sp.csc_matrix(sp.eye(N) - dt * _laplacian(N, h))
    solve = spla.factorized(A)
    u = solve(solve(u0))
    return np.sum(u * np.sin(np.arange(N)))


def coo_assembly(x):
    """A mass matrix assembled from constants in COO form, times x."""
    i = np.arange(N)
    M = sp.coo_matrix((4.0 * np.ones(N), (i, i)), shape=(N, N)).tocsr()
    M = M + sp.coo_matrix((np.ones(N - 1), (i[:-1], i[1:])), shape=(N, N))
    return x @ (M @ x) + np.sum(spla.expm_multiply(-0.1 * M, x))


def test_a_laplacian_built_inside_the_model_is_scipys():
    x = np.linspace(0.2, 1.3, N) ** 2
    for f in (steady_heat, implicit_euler, coo_assembly):
        check_grads(f, x)
        tape = adsim.record(f, x)
        x2 = 1.05 * x                      # (expm_multiply's steps depend on the norms)
        assert np.allclose(tape.gradient(x2), adsim.grad(f)(x2), rtol=1e-12)


def test_active_values_still_make_an_active_matrix():
    """A diagonal that depends on the input is differentiated through the
    matrix's values."""
    def f(k):
        A = sp.diags([-np.ones(N - 1), 2.0 + k, -np.ones(N - 1)], [-1, 0, 1], format="csc")
        return np.sum(spla.spsolve(A, np.ones(N)))
    check_grads(f, np.linspace(0.5, 1.5, N))
