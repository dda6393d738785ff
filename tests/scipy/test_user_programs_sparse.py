"""Short scientific programs built on scipy.sparse, written as their authors
write them, differentiated as they are: gradients against central
differences (both modes, and Hessian-vector products where the program is
smooth), and the recorded tape replayed at new parameters."""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse import coo_matrix, diags, identity, kronsum
from scipy.sparse.linalg import spsolve, splu

import adsim
from adsim.testing import check_grads
from fdcheck import assert_close


def _replays(f, x, x2, rtol=1e-10):
    """The tape recorded at x gives, at x2, the value and gradient a fresh
    recording gives."""
    tape = adsim.record(f, x)
    assert_close(tape.forward(x2), f(x2), rtol, 1e-14, "replayed value")
    assert_close(tape.gradient(x2), adsim.grad(f)(x2), rtol, 1e-14, "replayed gradient")


# ---- a finite-element bar ---------------------------------------------------------

def bar_compliance(E, length=2.0, area=1e-2, tip_load=1e3):
    """Axial bar of len(E) linear elements (Young's modulus per element),
    fixed at x = 0, a point load at the tip and its own weight: the
    stiffness matrix assembled element by element in COO triplets,
    the fixed node removed, solved with spsolve; returns the compliance."""
    n_el = len(E)
    h = length / n_el
    rows, cols, vals = [], [], []
    for e in range(n_el):
        k = E[e] * area / h
        for a, b, s in ((0, 0, 1.0), (0, 1, -1.0), (1, 0, -1.0), (1, 1, 1.0)):
            rows.append(e + a)
            cols.append(e + b)
            vals.append(s * k)
    K = coo_matrix((vals, (rows, cols)), shape=(n_el + 1, n_el + 1)).tocsr()
    f = np.full(n_el + 1, 9.81 * 7.8e3 * area * h)      # lumped self-weight
    f[-1] += tip_load
    free = np.arange(1, n_el + 1)
    u = np.zeros(n_el + 1)
    u[free] = spsolve(K[free][:, free].tocsc(), f[free])
    return f @ u


def test_finite_element_bar_assembled_in_coo_and_solved_with_spsolve():
    E = 2.1e11 * np.linspace(1.0, 0.6, 8)                # a tapered steel bar
    g = adsim.grad(bar_compliance)(E)
    # compliance = f^T K^-1 f; its derivative in E_e is -(strain energy of e) * 2 / E_e
    h = 2.0 / 8
    f = np.full(9, 9.81 * 7.8e3 * 1e-2 * h)
    f[-1] += 1e3
    axial = np.cumsum(f[::-1])[::-1][1:]                 # force carried by each element
    assert_close(g, -axial ** 2 * h / (1e-2 * E ** 2), 1e-9, 0.0, "closed form")
    check_grads(lambda s: bar_compliance(2.1e11 * s), E / 2.1e11, rtol=1e-6)
    _replays(bar_compliance, E, E * np.linspace(1.1, 0.9, 8))


# ---- a 2-D Poisson problem ---------------------------------------------------------

def poisson_misfit(log_source, n=12, observed=None):
    """-Laplace(u) = exp(log_source) on the unit square, u = 0 on the
    boundary: the 5-point Laplacian from kronsum of the 1-D one, factorised
    once with splu; a misfit against observations at every node."""
    h = 1.0 / (n + 1)
    T = diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n)) / h ** 2
    A = kronsum(T, T, format="csc")
    lu = splu(A)
    u = lu.solve(np.exp(log_source))
    if observed is None:
        observed = np.linspace(0.0, 0.05, n * n)
    return 0.5 * h ** 2 * np.sum((u - observed) ** 2)


def test_poisson_source_inversion_with_kronsum_and_splu():
    rng = np.random.default_rng(3)
    s = 0.3 * rng.standard_normal(144)
    check_grads(poisson_misfit, s, order=2, rtol=1e-6)
    _replays(poisson_misfit, s, s + 0.1)


# ---- implicit heat steps with a diffusivity field ---------------------------------------

def heat_after_steps(log_kappa, steps=5, dt=2e-3):
    """1-D heat equation with a diffusivity per cell face, conservative
    finite volumes, implicit Euler: (I + dt L(kappa)) u_new = u_old, the
    matrix built with diags from the parameters each step."""
    n = log_kappa.size - 1
    h = 1.0 / n
    kappa = np.exp(log_kappa)
    main = (kappa[:-1] + kappa[1:]) / h ** 2
    off = -kappa[1:-1] / h ** 2
    L = diags([off, main, off], [-1, 0, 1], format="csc")
    A = identity(n, format="csc") + dt * L
    x = (np.arange(n) + 0.5) * h
    u = np.exp(-50.0 * (x - 0.4) ** 2)
    for _ in range(steps):
        u = spsolve(A, u)
    return np.sum(u * x) * h                             # first moment of the profile


def test_implicit_heat_steps_through_a_matrix_of_parameters():
    lk = np.log(np.linspace(0.5, 1.5, 21))
    check_grads(heat_after_steps, lk, order=2, rtol=1e-6)
    _replays(heat_after_steps, lk, lk[::-1])


# ---- a graph Laplacian (networks, chemistry) ---------------------------------------------

def graph_diffusion(weights, edges, steps=3):
    """Heat kernel on a weighted graph: L = D - W from the edge list
    (symmetrised by adding the transpose), then a few steps of
    (I + L) x = x solved by conjugate gradients."""
    n = int(edges.max()) + 1
    W = sp.csr_matrix((weights, (edges[:, 0], edges[:, 1])), shape=(n, n))
    W = W + W.T
    L = diags(np.asarray(W.sum(axis=1)).ravel()) - W
    x = np.zeros(n)
    x[0] = 1.0
    for _ in range(steps):
        x, info = spla.cg(identity(n) + L, x, rtol=1e-12, atol=0.0)
        assert info == 0
    return x[-1]


def test_graph_laplacian_from_an_edge_list_with_cg():
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [0, 2], [1, 4]])
    w = np.array([1.0, 0.5, 2.0, 1.5, 0.3, 0.8])
    check_grads(lambda v: graph_diffusion(v, edges), w, rtol=1e-6)
    _replays(lambda v: graph_diffusion(v, edges), w, 1.2 * w, rtol=1e-8)
