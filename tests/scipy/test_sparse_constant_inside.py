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


def _second_difference(n):
    """spdiags as older scripts write it: the 1-D stencil, unscaled."""
    e = np.ones(n)
    return sp.spdiags(np.vstack([e, -2.0 * e, e]), [-1, 0, 1], n, n)


def _lil_mass(n):
    """A lumped mass matrix written entry by entry into a LIL matrix."""
    M = sp.lil_matrix((n, n))
    w = np.ones(n)
    for i in range(n):
        M[i, i] = w[i] * (0.5 if i in (0, n - 1) else 1.0)
    return M.tocsc()


def _dok_mass(n):
    M = sp.dok_array((n, n))
    w = 0.25 * np.ones(n)
    for i in range(n):
        M[i, i] += w[i]
        M[i, i] += w[i]
    return M


# every builder given values without a derivative: (name, operator of size N)
BUILDERS = {
    "dia_matrix": lambda: sp.dia_matrix((np.ones((2, N)) * [[1.0], [0.5]], [0, 1]),
                                        shape=(N, N)),
    "dia_array": lambda: sp.dia_array((np.ones((1, N)), [0]), shape=(N, N)),
    "bsr_matrix": lambda: sp.bsr_matrix((np.ones((N // 2, 2, 2)), np.arange(N // 2),
                                         np.arange(N // 2 + 1)), shape=(N, N)),
    "lil": lambda: _lil_mass(N),
    "dok": lambda: _dok_mass(N),
    "kron": lambda: sp.kron(sp.eye(N // 2), np.ones((2, 2)) * 0.5),
    "kronsum": lambda: sp.kronsum(_second_difference(N // 3), _second_difference(3)),
    "bmat": lambda: sp.bmat([[sp.eye(N // 2), 0.1 * np.ones((N // 2, N // 2))],
                             [None, sp.eye(N // 2)]]),
    "hstack": lambda: sp.hstack([sp.eye(N, N // 2), np.eye(N, N // 2, -1) * np.ones(N // 2)]),
    "vstack": lambda: sp.vstack([sp.eye(N // 2, N), np.ones((N // 2, N)) / N]),
    "block_diag": lambda: sp.block_diag([np.ones((2, 2)) + np.eye(2), sp.eye(N - 2)]),
    "spdiags": lambda: _second_difference(N),
    "eye of an active size": lambda: sp.eye(np.sum(np.ones(N) > 0)),
    "identity with an active dtype": lambda: sp.identity(N, dtype=np.ones(2).dtype),
    "scaled by a constant": lambda: sp.eye(N) * np.sum(np.ones(3)),
    "dot with a constant": lambda: sp.eye(N).dot(np.ones(N)[0]),
    "multiply": lambda: sp.csr_matrix(sp.eye(N)).multiply(np.ones((N, N)) * 2.0),
    "sum of two": lambda: sp.diags(np.ones(N)) + sp.diags(np.ones(N - 1), 1),
    "product of two": lambda: sp.diags(np.ones(N)) @ sp.diags(np.ones(N - 1), 1),
    "transpose": lambda: _second_difference(N).T,
    "tocsr": lambda: sp.dia_matrix((np.ones((1, N)), [0]), shape=(N, N)).tocsr(),
}


def test_every_builder_given_constants_makes_scipys_matrix():
    """Each operator is SciPy's, so SciPy's routines (issparse, splu,
    expm_multiply) take it; the gradient through it is right and replays."""
    x = np.linspace(0.2, 1.3, N) ** 2
    for name, build in BUILDERS.items():
        def f(x):
            A = build()
            assert sp.issparse(A), name
            B = sp.csc_matrix(sp.eye(N) + 0.1 * (A @ A.T))
            y = spla.splu(B).solve(x) + spla.expm_multiply(-0.05 * A, x)
            return np.sum(np.sin(y) * y)
        check_grads(f, x)
        tape = adsim.record(f, x)
        x2 = 1.05 * x + 0.01                # (expm_multiply branches on norms)
        assert np.allclose(tape.gradient(x2), adsim.grad(f)(x2), rtol=1e-12), name

