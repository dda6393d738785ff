"""``spsolve(A, b)`` with a sparse matrix of active values
(adsim/_scipy/sparse_active.py), b active or plain: one primitive of
(values, b). x = A^-1 b has tangent A^-1 (db - dA x) and adjoint
lambda = A^-T xbar, bbar = lambda and, for the entry p at (i_p, j_p),
vbar_p = -lambda_i_p x_j_p (the outer product restricted to the pattern).
The matrix is factorised (SuperLU) once per point, and the transposed
solve of the adjoint reuses the factors; the vjp is written with the solve
itself (its transposed partner), so second derivatives follow. The
primitives are a BuiltinFamily: tape files keep the pattern.
"""
import threading

import numpy as np
import scipy.sparse as sp

from ..primitives import BuiltinFamily, primitive
from .superlu import factorise


def spsolve(A, b, permc_spec=None):
    """x = A^-1 b with A's values active (b active or plain)."""
    m, n = A.shape
    if m != n:
        raise ValueError(f"adsim: spsolve: matrix of shape {A.shape} is not square")
    if np.shape(b)[0] != n or np.ndim(b) not in (1, 2):
        raise ValueError(f"adsim: spsolve: right-hand side of shape {np.shape(b)} for a "
                         f"{n} x {n} matrix")
    rows, cols = A.entries
    solve = _SOLVE(rows=rows, cols=cols, n=n, permc_spec=permc_spec, transposed=False)
    return solve(A._values, b)


def _make_solve(rows, cols, n, permc_spec, transposed):
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    options = {} if permc_spec is None else {"permc_spec": permc_spec}
    last = threading.local()          # the factorisation at the last values, per thread

    def factor(values):
        values = np.asarray(values, dtype=float)
        key = values.tobytes()
        if getattr(last, "key", None) != key:
            A = sp.csc_matrix((values, (rows, cols)), shape=(n, n))
            last.factor, last.key = factorise("splu", A, options), key
        return last.factor

    prims = {}
    for flag in (False, True):
        prims[flag] = _SOLVE.adopt(_solve_primitive(factor, rows, cols, n, flag, prims),
                                   rows=rows, cols=cols, n=n, permc_spec=permc_spec,
                                   transposed=flag)
    return prims[bool(transposed)]


def _solve_primitive(factor, rows, cols, n, transposed, prims):
    """b -> A(v)^-1 b (A(v)^-T b when ``transposed``) as a primitive of
    (v, b); ``prims`` holds it and its transposed partner (its vjp)."""
    trans = "T" if transposed else "N"

    def value(values, b):
        return factor(values).solve(np.asarray(b, dtype=float), trans=trans)

    def jvp(args, out, tangents):
        values, _ = args
        dv, db = tangents
        rhs = np.zeros_like(out) if db is None else np.array(db, dtype=float)
        if dv is not None:                  # - dA x (dA^T x when transposed)
            dA = sp.csr_matrix((dv, (rows, cols)), shape=(n, n))
            rhs = rhs - (dA.T if transposed else dA) @ out
        return factor(values).solve(rhs, trans=trans)

    def vjp(args, out, adjoint):
        values, _ = args
        lam = prims[not transposed](values, adjoint)
        i, j = (cols, rows) if transposed else (rows, cols)
        if np.ndim(lam) == 1:
            return -lam[i] * out[j], lam
        return -np.sum(lam[i] * out[j], axis=1), lam

    return primitive(value, jvp=jvp, vjp=vjp, name="scipy.sparse.linalg.spsolve")


_SOLVE = BuiltinFamily("scipy.sparse.linalg.spsolve", 1, _make_solve)
