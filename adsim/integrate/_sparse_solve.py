"""Sparse Newton solves of the implicit methods: SciPy's sparse LU, and the
transposed solves of their adjoints with the same factors.

The Jacobian is its values on a fixed pattern (CSC order), the Newton
matrices are formed from them as SciPy forms them from a sparse Jacobian
(``scipy.sparse`` arithmetic) and factored by ``scipy.sparse.linalg.splu``.
The forms, the kept factorisations and the rules are those of every Newton
solve (:mod:`adsim.integrate._newton_solve`).
"""
import weakref

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .._filefields import pattern_field
from ..primitives import BuiltinFamily
from ._newton_solve import FORM_NAMES, SINGULAR, NewtonSolves

__all__ = ["SparseLinear"]


class SparseLinear(NewtonSolves):
    """The Newton solves of one problem for a Jacobian given by its values
    on ``pattern`` (an n-by-n sparse matrix or array; its stored entries, in
    CSC order, are the positions of the values)."""

    label = "sparse"

    def __init__(self, pattern):
        P = sp.csc_matrix(pattern)
        P.sort_indices()
        self.nnz = P.nnz
        self.indices = P.indices.copy()
        self.indptr = P.indptr.copy()
        self.rows = P.indices.astype(np.intp)
        self.cols = np.repeat(np.arange(P.shape[0], dtype=np.intp), np.diff(P.indptr))
        self._identity = sp.eye(P.shape[0], format="csc")
        super().__init__(P.shape[0])

    def adopt(self, prim, form, transposed):
        return _SOLVES.adopt(prim, n=self.n, indptr=self.indptr, indices=self.indices,
                             form=form, transposed=transposed)

    # ---- the storage --------------------------------------------------------------
    def matrix(self, data):
        """J as SciPy holds a sparse Jacobian (``csc_matrix``)."""
        return sp.csc_matrix((np.asarray(data, dtype=float), self.indices, self.indptr),
                             shape=(self.n, self.n))

    def identity(self):
        return self._identity

    @staticmethod
    def factorised(A, is_complex):
        """``splu(A)``, or :data:`SINGULAR` for a matrix that is singular or
        not finite (a step size that underflowed, a Jacobian with NaNs)."""
        if not np.all(np.isfinite(A.data)):
            return SINGULAR
        try:
            return splu(A)
        except RuntimeError:           # "Factor is exactly singular"
            return SINGULAR

    @staticmethod
    def solve_factored(lu, b, transposed):
        trans = ("H" if np.iscomplexobj(b) else "T") if transposed else "N"
        return lu.solve(b, trans=trans)

    def times(self, data, v, transposed):
        """``J v`` (``J^T v``) for J's values ``data`` (plain)."""
        J = self.matrix(data)
        return (J.T if transposed else J) @ v

    def pair(self, u, v):
        """``u_i v_j`` at the pattern's entries: the adjoint of J's values in ``u^T J v``."""
        return u[self.rows] * v[self.cols]


# ---- tape files -----------------------------------------------------------------------

_LOADED = weakref.WeakValueDictionary()     # pattern -> SparseLinear of the tapes loaded


def _solve_of(n, indptr, indices, form, transposed):
    """A Newton solve of a tape file, on the pattern (n, indptr, indices)
    in CSC form; the solves of one pattern share one SparseLinear, and so
    its factorisations, as in the recording."""
    if form not in FORM_NAMES or type(transposed) is not bool:
        raise ValueError(f"a sparse Newton solve of form {form!r}, transposed={transposed!r}")
    pattern = pattern_field(n, indptr, indices)
    key = (n, pattern.indptr.tobytes(), pattern.indices.tobytes())
    linear = _LOADED.get(key)
    if linear is None:
        linear = _LOADED.setdefault(key, SparseLinear(pattern))
    return linear._solves[FORM_NAMES[form], transposed]


_SOLVES = BuiltinFamily("solve_ivp.sparse_newton_solve", 1, _solve_of)
