"""Products of constant ``scipy.sparse`` matrices with arrays: ``L @ u``,
``L.dot(u)``, ``L.T @ u``, ``u @ L``, ``np.dot(L, u)``, ``L * u`` (a
``spmatrix``), and ``LinearOperator``\\ s made by ``aslinearoperator`` of a
sparse matrix.

A product is one SPMV op (adsim/_ops/sparse.pxi): the matrix is stored on
the tape once as CSR, its row pointers and column indices in the index
stream and its values as a constant (or, for a matrix assembled from active
values, adsim/_scipy/sparse_active.py, a slot). A CSC matrix is the CSR of
its transpose, so ``L.T`` of a CSR matrix and CSC matrices are stored
without conversion and multiplied by the transposed kernel; COO, DIA, BSR,
LIL and DOK matrices are converted to CSR once. The same matrix used again
on the same tape (a time loop) shares its stored pattern and values.

SciPy's sparse classes turn an active operand into a plain array before
Python could ask the operand (``np.asanyarray(other)`` in
``_spbase._matmul_dispatch``), so their operator methods are hooked
(adsim/_scipy/sparse_matrices.py) and call :func:`product`; ``u @ L`` and
``np.dot(L, u)`` reach adsim first (``Active.__matmul__``, NumPy's
dispatch), and adsim/_numpy_api.py hands them to :func:`product` too.
"""
import weakref

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from .._opcodes import Opcode as Op
from .._active import Active
from .core import new, tape_of
from ..errors import UnsupportedOperation


class Pattern:
    """A CSR pattern: ``rows + 1`` row pointers and the column index of each
    stored entry (int32, what the tape's index stream holds)."""

    __slots__ = ("indptr", "indices", "shape")

    def __init__(self, indptr, indices, shape):
        if indices.size > 2147483647 or shape[0] > 2147483646 or shape[1] > 2147483647:
            raise UnsupportedOperation(f"adsim: a sparse matrix of shape {shape} with "
                                       f"{indices.size} entries does not fit the tape's 32-bit "
                                       f"index stream")
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int32)
        self.indices = np.ascontiguousarray(indices, dtype=np.int32)
        self.shape = (int(shape[0]), int(shape[1]))

    @property
    def nnz(self):
        return int(self.indices.size)

    def offset_on(self, tape):
        """The position of this pattern in ``tape``'s index stream, stored at
        its first use on that tape."""
        stored = _PATTERNS.setdefault(tape, {})
        key = (self.shape, hash(self.indptr.tobytes()), hash(self.indices.tobytes()))
        off = stored.get(key)
        if off is None or not self._is_at(tape, off):
            off = tape.add_indices(np.concatenate([self.indptr, self.indices]))
            stored[key] = off
        return off

    def _is_at(self, tape, off):
        m = self.shape[0]
        held = tape.index_record(off, m + 1 + self.nnz)
        return np.array_equal(held[:m + 1], self.indptr) and \
            np.array_equal(held[m + 1:], self.indices)


_PATTERNS = weakref.WeakKeyDictionary()     # tape -> {pattern key: index offset}


def stored_form(matrix):
    """(pattern, values, transposed) of a constant sparse matrix: ``matrix``
    is ``S`` (pattern, values), or ``S^T`` when ``transposed`` (a CSC
    matrix is the CSR of its transpose, so it needs no conversion)."""
    if matrix.dtype.kind == "c":
        raise UnsupportedOperation("adsim: products of complex sparse matrices with active "
                                   "arrays are not supported; split real and imaginary parts")
    if matrix.ndim != 2:
        raise UnsupportedOperation(f"adsim: a sparse array of {matrix.ndim} dimensions times an "
                                   f"active array; only 2-d sparse matrices are supported")
    if matrix.format == "csc":
        m, k = matrix.shape
        nnz = matrix.indptr[-1]          # (SciPy allows longer index and data arrays)
        return Pattern(matrix.indptr, matrix.indices[:nnz], (k, m)), matrix.data[:nnz], True
    csr = matrix.tocsr()
    nnz = csr.indptr[-1]
    return Pattern(csr.indptr, csr.indices[:nnz], csr.shape), csr.data[:nnz], False


def spmv(tape, pattern, values_ref, x, transpose):
    """Record ``S x`` (``S^T x`` when ``transpose``) for the CSR pattern and
    the values at ``values_ref``; x is a 1-d or 2-d array (active or plain)
    whose first axis has the matching length."""
    m, k = pattern.shape
    rows_in, rows_out = (m, k) if transpose else (k, m)
    shape = np.shape(x)
    if len(shape) not in (1, 2):
        raise UnsupportedOperation(f"adsim: a sparse matrix times an array of shape {shape}: "
                                   f"pass a vector or a matrix")
    if shape[0] != rows_in:
        raise ValueError(f"adsim: matmul: dimension mismatch: a sparse matrix of shape "
                         f"{(rows_out, rows_in)} times an array of shape {shape}")
    n = 1 if len(shape) == 1 else shape[1]
    x_ref = x.slot if isinstance(x, Active) else tape.const_ref(np.asarray(x, dtype=float))
    out_shape = (rows_out,) + shape[1:]
    return new(tape, Op.SPMV, out_shape, [values_ref, x_ref, pattern.offset_on(tape), m, k, n,
                                          int(transpose)])


def matrix_times(matrix, x, transpose=False):
    """``matrix @ x`` (``matrix.T @ x``) for a constant sparse matrix and an
    active array x."""
    pattern, values, flipped = stored_form(matrix)
    tape = tape_of(x)
    return spmv(tape, pattern, tape.const_ref(values), _float(x), transpose != flipped)


def times_matrix(x, matrix):
    """``x @ matrix``: ``matrix^T x`` for a vector, ``(matrix^T x^T)^T`` for a
    matrix of rows."""
    x = _float(x)
    if np.ndim(x) == 2:
        return matrix_times(matrix, x.T, transpose=True).T
    return matrix_times(matrix, x, transpose=True)


def _float(x):
    if isinstance(x, Active):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise UnsupportedOperation(f"adsim: a sparse matrix times an array of dtype {arr.dtype}")
    return arr


# ---- operands: scipy.sparse matrices and the LinearOperators made of them ----------

def is_sparse_operand(obj):
    """A constant sparse matrix, a LinearOperator ``aslinearoperator`` made
    of one (its transposes included), or a sparse matrix of active values
    (adsim/_scipy/sparse_active.py: it has ``_recorded_product``)."""
    return sp.issparse(obj) or hasattr(type(obj), "_recorded_product") or \
        (isinstance(obj, LinearOperator) and _operator_matrix(obj) is not None)


def _operator_matrix(op):
    """(matrix, transposed) behind a LinearOperator, or None: those of
    ``aslinearoperator(S)`` for a sparse S, and their ``.T``/``.H`` (SciPy's
    private classes, known by name)."""
    transposed = False
    while type(op).__name__ in ("_TransposedLinearOperator", "_AdjointLinearOperator"):
        op, transposed = op.A, not transposed
    matrix = getattr(op, "A", None)
    if type(op).__name__ == "MatrixLinearOperator" and sp.issparse(matrix):
        return matrix, transposed
    return None


def unpacked(obj):
    if sp.issparse(obj):
        return obj, False
    found = _operator_matrix(obj) if isinstance(obj, LinearOperator) else None
    if found is None:
        raise UnsupportedOperation(
            f"adsim: a {type(obj).__name__} times an active array: only LinearOperators "
            f"made by aslinearoperator of a sparse matrix are recorded; write the product "
            f"with the matrix itself, or make a primitive (adsim.primitive)")
    return found


def product(a, b):
    """``a @ b`` where one side is a constant sparse matrix (or a
    LinearOperator of one) and the other an array: one SPMV op."""
    for side in (a, b):
        if hasattr(type(side), "_recorded_product"):      # a matrix of active values
            return side._recorded_product(a, b)
    if is_sparse_operand(a) and is_sparse_operand(b):
        raise UnsupportedOperation("adsim: a product of two sparse matrices with an active "
                                   "argument is not supported")
    if is_sparse_operand(a):
        matrix, transposed = unpacked(a)
        if np.ndim(b) == 0:
            raise ValueError("adsim: matmul: scalar operands are not allowed, use '*' instead")
        return matrix_times(matrix, b, transposed)
    matrix, transposed = unpacked(b)
    if np.ndim(a) == 0:
        raise ValueError("adsim: matmul: scalar operands are not allowed, use '*' instead")
    if transposed:                  # a @ M^T = (M a^T)^T
        a = _float(a)
        return matrix_times(matrix, a.T).T if np.ndim(a) == 2 else matrix_times(matrix, a)
    return times_matrix(a, matrix)
