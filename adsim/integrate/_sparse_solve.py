"""Sparse Newton solves of the implicit methods: SciPy's sparse LU, and the
transposed solves of their adjoints with the same factors.

The Jacobian is its values on a fixed pattern (CSC order). The Newton
matrices have the entries SciPy forms from a sparse Jacobian (``c I - J``
and the like: the same arithmetic per entry), on the pattern and the
diagonal, and are factored by ``scipy.sparse.linalg.splu``.

The symbolic analysis is done once per pattern: a fill-reducing ordering
of the Newton matrices' structure (SuperLU's minimum degree on the
structure of ``A + A^T``, which suits the nearly symmetric structures of
discretised PDEs; for the 2-D Brusselator it halves the fill of SciPy's
default ordering, COLAMD, per factorisation) and where each entry of the
symmetrically permuted matrix comes from. A Newton matrix is then one
gather of J's values into that structure, factored without ordering it
again (``permc_spec="NATURAL"``), and a solve permutes its right-hand side
and solution. The order assumes pivots on the diagonal, so SuperLU pivots
by threshold (``diag_pivot_thresh=0.1``: the diagonal unless another entry
of its column is ten times larger, growth bounded by 11 per column), as
symmetric-pattern strategies do; with SciPy's partial pivoting a Newton
matrix ``c I - J`` whose diagonal is small beside its column (a species
without a diagonal entry in ``J``) filled twice as much as with SciPy's
own order (tests/integrate/test_newton_pieces.py). The solutions are
those of SciPy's factors to rounding.

The forms, the kept factorisations and the rules are those of every Newton
solve (:mod:`adsim.integrate._newton_solve`).
"""
import weakref

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .._active import Active
from .._filefields import pattern_field
from ..primitives import BuiltinFamily
from ._kept import Kept
from ._newton_solve import FORM_NAMES, KEPT_FACTORS, SINGULAR, NewtonSolves

__all__ = ["SparseLinear", "KEPT_FACTOR_BYTES"]

KEPT_FACTOR_BYTES = 96 * 2 ** 20
"""Beyond :data:`KEPT_FACTORS`, sparse factorisations are kept per problem
while together they take at most this many bytes. A gradient factors each
Newton matrix of the forward solve, and its reverse sweep needs them all
again, last first: kept, the reverse sweep factors only those that did not
fit. On the 2-D Brusselator of the stiff test set (512 states) a
factorisation takes about 0.33 MB, 0.55 MB in complex arithmetic, and a
Radau gradient needs 198 of them, 87 MB: 64 MB kept three quarters, and
the reverse sweep factored 50-80 matrices again (a tenth of the gradient's
time)."""


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
        self.ordered = OrderedNewtonPattern(P.shape[0], self.rows, self.cols)
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
    def kept_factors():
        return Kept(KEPT_FACTORS, KEPT_FACTOR_BYTES, _factor_bytes)

    def newton_matrix(self, form, data, scalars):
        """The Newton matrix, symmetrically permuted (``OrderedNewtonPattern``)."""
        return self.ordered.matrix(form, data, scalars)

    @staticmethod
    def factorised(A, is_complex):
        """``splu(A)`` in the order A is given in, or :data:`SINGULAR` for a
        matrix that is singular or not finite (a step size that
        underflowed, a Jacobian with NaNs)."""
        if not np.all(np.isfinite(A.data)):
            return SINGULAR
        try:
            return splu(A, permc_spec="NATURAL", diag_pivot_thresh=0.1)
        except RuntimeError:           # "Factor is exactly singular"
            return SINGULAR

    def solve_factored(self, lu, b, transposed):
        trans = ("H" if np.iscomplexobj(b) else "T") if transposed else "N"
        return self.ordered.solve(lu, b, trans)

    def times(self, data, v, transposed):
        """``J v`` (``J^T v``) for J's values ``data``: plain, as a sum over the
        entries (no matrix is built: the tangent rules call this per solve);
        recorded (higher orders), as a product with the matrix of the values."""
        if isinstance(data, Active) or isinstance(v, Active):
            J = sp.csc_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))
            return (J.T if transposed else J) @ v
        out, into = (self.rows, self.cols) if transposed else (self.cols, self.rows)
        return np.bincount(into, weights=np.asarray(data, dtype=float) * v[out],
                           minlength=self.n)

    def pair(self, u, v):
        """``u_i v_j`` at the pattern's entries: the adjoint of J's values in ``u^T J v``."""
        return u[self.rows] * v[self.cols]


class OrderedNewtonPattern:
    """The structure of the Newton matrices of a pattern (its entries and the
    diagonal) under a fill-reducing symmetric permutation ``A[q][:, q]``,
    computed once: where each of its entries (CSC order) comes from among
    J's values (``take``; the diagonal entries outside the pattern read an
    appended zero) and which are on the diagonal (``unit``, I's values)."""

    def __init__(self, n, rows, cols):
        nnz = rows.shape[0]
        missing = np.setdiff1d(np.arange(n, dtype=np.intp), rows[rows == cols])
        rows = np.concatenate([rows, missing])
        cols = np.concatenate([cols, missing])
        labels = np.concatenate([np.arange(nnz, dtype=np.intp),
                                 np.full(missing.shape[0], nnz, dtype=np.intp)])
        position = _fill_reducing_position(n, rows, cols)    # of each row/column in A[q][:, q]
        new_rows, new_cols = position[rows], position[cols]
        order = np.lexsort((new_rows, new_cols))
        self.n = n
        self.q = np.argsort(position)
        self.indices = new_rows[order].astype(np.int32)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(new_cols, minlength=n))]
                                     ).astype(np.int32)
        self.take = labels[order]
        self.unit = (rows == cols)[order].astype(float)

    def matrix(self, form, data, scalars):
        """The permuted matrix of ``form`` (CSC): the same arithmetic per entry
        as SciPy's sparse ``c * I - J`` and the like."""
        values = np.append(np.asarray(data, dtype=float), 0.0)[self.take]
        A = form.matrix(values, self.unit, *scalars)
        return sp.csc_matrix((A, self.indices, self.indptr), shape=(self.n, self.n))

    def solve(self, lu, b, trans):
        """The solution of the unpermuted system from the factors of the permuted one."""
        y = lu.solve(np.ascontiguousarray(b[self.q]), trans=trans)
        x = np.empty_like(y)
        x[self.q] = y
        return x


def _factor_bytes(key, lu):
    """About the memory of SuperLU's factors: their entries (complex for the
    complex form, named by the key's first item) and their row indices."""
    if lu is SINGULAR:
        return 0
    return lu.nnz * ((16 if FORM_NAMES[key[0]].complex else 8) + 4)


def _fill_reducing_position(n, rows, cols):
    """The position of each row and column in SuperLU's minimum-degree order of
    the structure ``rows, cols`` (which holds the diagonal): the order depends
    on the structure alone, so a diagonally dominant matrix on it gives it."""
    values = np.where(rows == cols, float(n + 1), 1.0)
    lu = splu(sp.csc_matrix((values, (rows, cols)), shape=(n, n)),
              permc_spec="MMD_AT_PLUS_A")
    return lu.perm_c.astype(np.intp)


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
