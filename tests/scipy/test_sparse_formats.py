"""Sparse matrices assembled from active values in the formats of
adsim/_scipy/sparse_formats.py: dia and bsr constructors, lil and dok
matrices written entry by entry (a finite element assembly), bmat, hstack,
vstack and block_diag; products and spsolve with them, checked in every
sweep against SciPy's values and central differences (check_tape), and
replayed at new values."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import adsim
from fdcheck import assert_close, central, check_tape

X4 = np.arange(1.0, 5.0)


def bar_stiffness(k, kind):
    """A chain of springs with stiffnesses k, fixed at its left end by a
    stiff spring, assembled element by element as a textbook does."""
    n = k.size + 1
    K = kind((n, n))
    for e in range(k.size):
        local = k[e] * np.array([[1.0, -1.0], [-1.0, 1.0]])
        for a in range(2):
            for b in range(2):
                K[e + a, e + b] += local[a, b]
    K[0, 0] += 1e3
    return K


@pytest.mark.parametrize("kind", [sp.lil_matrix, sp.lil_array, sp.dok_matrix, sp.dok_array])
def test_a_finite_element_assembly_entry_by_entry(kind):
    """Compliance f^T u of the chain under unit loads, u = K^-1 f, in every
    sweep (the matrix's values enter the solve)."""
    def compliance(k):
        K = bar_stiffness(k, kind)
        u = spsolve(K.tocsr(), np.ones(k.size + 1))
        return np.sum(u)
    check_tape(compliance, [np.linspace(1.0, 2.0, 5)], rtol=1e-6, atol=1e-8, value_rtol=1e-12)


def test_an_assembled_matrix_times_a_vector_and_its_entries_read_back():
    def f(k):
        K = bar_stiffness(k, sp.lil_matrix)
        return np.concatenate([K @ X4[:3], [K[1, 1], K[1, 2], K[2, 0]]])
    k = np.array([1.5, 0.7])
    check_tape(f, [k], rtol=1e-7, atol=1e-9)
    assert_close(adsim.record(f, k).forward(k)[3:], [2.2, -0.7, 0.0], 1e-15, 0.0, "entries")


def test_writing_a_row_at_once():
    def f(v):
        K = sp.lil_matrix((3, 3))
        K[0, 0] = v[0]
        K[1, :] = v
        K[2, 1:] = 2.0 * v[1:] ** 2
        K[2, 2] = 0.0                       # a plain 0 removes the entry
        return K @ np.arange(1.0, 4.0)
    check_tape(f, [np.array([1.0, -2.0, 3.0])], rtol=1e-7, atol=1e-9)


def test_dia_matrix_of_active_diagonals():
    def f(d):
        A = sp.dia_matrix((np.vstack([d, 2.0 * d, d ** 2]), [0, 1, -2]), shape=(4, 4))
        return np.concatenate([A @ X4, A.T @ X4])
    check_tape(f, [np.array([1.0, -2.0, 3.0, 0.5])], rtol=1e-7, atol=1e-9)


def test_bsr_matrix_of_active_blocks_and_a_solve():
    def f(v):
        blocks = v.reshape(3, 2, 2) + 4.0 * np.eye(2)
        A = sp.bsr_matrix((blocks, np.array([0, 1, 1]), np.array([0, 2, 3])), shape=(4, 4))
        return np.concatenate([A @ X4, spsolve(A.tocsc(), X4)])
    check_tape(f, [np.linspace(-0.5, 0.7, 12)], rtol=1e-7, atol=1e-9)


def test_blocks_of_active_and_constant_matrices():
    def f(v):
        A, D = sp.diags(v[:3]), sp.diags(v[3:5])
        B = sp.csr_matrix(np.ones((3, 2)))
        M = sp.bmat([[A, B], [None, D]])
        x = np.arange(1.0, 6.0)
        return np.concatenate([M @ x, sp.hstack([A, A]) @ np.ones(6),
                               sp.vstack([A, sp.eye(3)]) @ x[:3],
                               sp.block_diag([A, np.ones((2, 2)), D]) @ np.arange(7.0)])
    check_tape(f, [np.array([1.0, 2.0, 3.0, 4.0, 5.0])], rtol=1e-7, atol=1e-9)


def test_a_saddle_point_system_by_bmat_replayed_at_new_values():
    """[[K, C^T], [C, 0]] [u; lam] = [f; 0]: a constrained stiffness solve."""
    C = sp.csr_matrix(np.array([[1.0, 0.0, 0.0, -1.0]]))

    def f(k):
        K = sp.diags([k, -0.5 * k[:-1], -0.5 * k[:-1]], [0, 1, -1])
        system = sp.bmat([[K, C.T], [C, None]], format="csc")
        return spsolve(system, np.r_[X4, 0.0])[:4] @ X4
    k = np.array([3.0, 2.5, 4.0, 3.5])
    tape = adsim.record(f, k)
    k2 = k + np.array([0.2, -0.1, 0.3, 0.05])
    assert_close(tape.forward(k2), f(k2), 1e-12, 0.0, "replayed value")
    g = tape.gradient(k2)
    for i in range(4):
        assert_close(g[i], central(f, [k2], [np.eye(4)[i]]), 1e-7, 1e-9, f"d/dk_{i}")
