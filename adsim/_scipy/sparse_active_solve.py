"""Solves with a sparse matrix of active values
(adsim/_scipy/sparse_active.py), b active or plain: ``spsolve(A, b)`` (and
the solves of ``splu(A)`` and ``factorized(A)``, with A^T too) and the
Krylov methods ``cg``, ``gmres``, ``bicgstab``, ``minres``, ``lgmres``,
each one primitive of (values, b). x = A^-1 b has tangent A^-1 (db - dA x)
and adjoint lambda = A^-T xbar, bbar = lambda and, for the entry p at
(i_p, j_p), vbar_p = -lambda_i_p x_j_p (the outer product restricted to the
pattern). ``spsolve`` factorises the matrix (SuperLU) once per point, and
the transposed solve of the adjoint reuses the factors; a Krylov method
solves the derivatives with the same method and options (on A^T for the
adjoint, A for the symmetric cg and minres), so they carry the forward
solve's tolerance. The vjp is written with the solve itself (its
transposed partner), so second derivatives follow. The primitives are
BuiltinFamilies: tape files keep the pattern and the solver's options (not
a Krylov call's x0, callback or preconditioner: a loaded tape solves
without them, to the same tolerance).
"""
import threading

import numpy as np
import scipy.sparse as sp

from ..primitives import BuiltinFamily, primitive
from .krylov import KRYLOV, Krylov
from .superlu import factorise


def spsolve(A, b, permc_spec=None, transposed=False):
    """x = A^-1 b (A^-T b when ``transposed``) with A's values active (b
    active or plain)."""
    n = _checked(A, b, "spsolve")
    rows, cols = A.entries
    solve = _SOLVE(rows=rows, cols=cols, n=n, permc_spec=permc_spec, transposed=bool(transposed))
    return solve(A._values, b)


def krylov_solve(A, b, method, options, x0=None, callback=None, M=None):
    """x = A^-1 b by the Krylov ``method`` with A's values active."""
    n = _checked(A, b, method)
    rows, cols = A.entries
    parameters = dict(rows=rows, cols=cols, n=n, method=method, options=options)
    solve = _KRYLOV_SOLVE.adopt(
        _make_krylov(**parameters, transposed=False, x0=x0, callback=callback, M=M),
        **parameters, transposed=False)
    return solve(A._values, b)


def _checked(A, b, name):
    m, n = A.shape
    if m != n:
        raise ValueError(f"adsim: {name}: matrix of shape {A.shape} is not square")
    if np.shape(b)[0] != n or np.ndim(b) not in (1, 2):
        raise ValueError(f"adsim: {name}: right-hand side of shape {np.shape(b)} for a "
                         f"{n} x {n} matrix")
    return n


class _AtLastValues:
    """The solver of the matrix at the last values, per thread: made
    again only when the values change."""

    def __init__(self, rows, cols, n, make):
        self.rows, self.cols, self.n, self.make = rows, cols, n, make
        self.last = threading.local()

    def __call__(self, values):
        values = np.asarray(values, dtype=float)
        key = values.tobytes()
        if getattr(self.last, "key", None) != key:
            A = sp.csc_matrix((values, (self.rows, self.cols)), shape=(self.n, self.n))
            self.last.solver, self.last.key = self.make(A), key
        return self.last.solver


class _Factored:
    def __init__(self, factor):
        self.factor = factor

    def solve(self, b, transposed, derivative=False):
        return self.factor.solve(np.asarray(b, dtype=float), trans="T" if transposed else "N")


def _make_solve(rows, cols, n, permc_spec, transposed):
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    options = {} if permc_spec is None else {"permc_spec": permc_spec}
    solver_at = _AtLastValues(rows, cols, n, lambda A: _Factored(factorise("splu", A, options)))
    prims = {}
    for flag in (False, True):
        prims[flag] = _SOLVE.adopt(
            _solve_primitive(solver_at, rows, cols, n, flag, prims, "spsolve"),
            rows=rows, cols=cols, n=n, permc_spec=permc_spec, transposed=flag)
    return prims[bool(transposed)]


def _make_krylov(rows, cols, n, method, options, transposed, x0=None, callback=None, M=None):
    if method not in KRYLOV:
        raise ValueError(f"unknown Krylov method {method!r}")
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    solver_at = _AtLastValues(rows, cols, n, lambda A: Krylov(
        A.tocsr(), method, dict(options), x0=x0, callback=callback, M=M))
    prims = {}
    for flag in (False, True):
        prims[flag] = _KRYLOV_SOLVE.adopt(
            _solve_primitive(solver_at, rows, cols, n, flag, prims, method),
            rows=rows, cols=cols, n=n, method=method, options=options, transposed=flag)
    return prims[bool(transposed)]


def _solve_primitive(solver_at, rows, cols, n, transposed, prims, name):
    """b -> A(v)^-1 b (A(v)^-T b when ``transposed``) as a primitive of
    (v, b); ``prims`` holds it and its transposed partner (its vjp)."""
    def value(values, b):
        # the transposed partner only ever solves for derivatives (a Krylov
        # call's x0 and callback are the forward solve's)
        return solver_at(values).solve(np.asarray(b, dtype=float), transposed, transposed)

    def jvp(args, out, tangents):
        values, _ = args
        dv, db = tangents
        rhs = np.zeros_like(out) if db is None else np.array(db, dtype=float)
        if dv is not None:                  # - dA x (dA^T x when transposed)
            dA = sp.csr_matrix((dv, (rows, cols)), shape=(n, n))
            rhs = rhs - (dA.T if transposed else dA) @ out
        return solver_at(values).solve(rhs, transposed, True)

    def vjp(args, out, adjoint):
        values, _ = args
        lam = prims[not transposed](values, adjoint)
        i, j = (cols, rows) if transposed else (rows, cols)
        if np.ndim(lam) == 1:
            return -lam[i] * out[j], lam
        return -np.sum(lam[i] * out[j], axis=1), lam

    return primitive(value, jvp=jvp, vjp=vjp, name=f"scipy.sparse.linalg.{name}")


_SOLVE = BuiltinFamily("scipy.sparse.linalg.spsolve", 1, _make_solve)
_KRYLOV_SOLVE = BuiltinFamily("scipy.sparse.linalg.krylov of active values", 1, _make_krylov)
