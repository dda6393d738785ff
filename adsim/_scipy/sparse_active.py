"""Sparse matrices assembled from active values: ``coo_matrix((v, (i, j)),
shape)``, ``csr_matrix((v, indices, indptr))``, ``csc_matrix(...)``,
``diags(v, offsets)``, ``sparse.kron``, and what is made of them (``A + B``,
``A * c``, ``A.multiply(X)``, ``A.T``, ``.tocsr()``, products with other
sparse matrices, ``tril``/``triu``, writes ``A[rows, cols] = v``); their
products with arrays and ``spsolve``.

Such a matrix is an :class:`ActiveSparse`: a fixed pattern (the row and
column of each stored entry, plain integers of the recording) and the
entries' values, an active vector on the tape. Duplicate entries are kept
and summed wherever the matrix acts, as SciPy sums duplicates of a COO
matrix; the nonlinear maps of the values (abs, power, the elementwise
product of two such matrices) act on the summed entries (``_summed``), as
SciPy's do. Products are SPMV ops (adsim/_ops/sparse.pxi) with the values
as a slot, so every sweep differentiates them in the values too; sums,
scales, Kronecker products and products of two sparse matrices are
recorded operations on the value vectors. ``spsolve(A, b)`` and the Krylov
solves with such a matrix are adsim/_scipy/sparse_active_solve.py; its
norms, eigenpairs, inverse and exponential adsim/_scipy/sparse_active_linalg.py.

The constructors of SciPy's classes are hooked (adsim/_scipy/hooks.py): a
``coo_matrix(...)`` given active values becomes an ActiveSparse (its class
is changed before it is used), as ``diags`` and ``kron`` return one.
Anything else asked of one raises ``UnsupportedOperation`` naming it.

Values without a derivative (``np.ones(n)`` made in the recorded function,
as when a model builds its Laplacian with ``diags``) make SciPy's own
matrix of their plain values instead (adsim/_scipy/sparse_constant.py,
for every rule of the table): a constant matrix goes everywhere SciPy's do
(``splu``, ``LinearConstraint``, ``issparse``).
"""
import abc

import numpy as np
import scipy.sparse as sp

from .._active import Active, make_view
from .._np.core import active_leaves, gather, tape_of
from .._np.joins import from_pieces
from .._np.sparse_products import Pattern, spmv
from ..errors import UnsupportedAttribute, UnsupportedOperation


def _unsupported(what):
    return UnsupportedOperation(
        f"adsim: `{what}` of a scipy.sparse matrix assembled from active values is not "
        f"supported; supported: @ and dot (with arrays or sparse matrices), * and / by "
        f"scalars, +, -, abs, power, multiply, .T, tocsr/tocsc/tocoo/tolil, toarray, "
        f"diagonal, trace, sum, mean, row and column selection, entries A[i, j], writes "
        f"A[rows, cols] = v, setdiag, scipy.sparse.kron/tril/triu, and scipy.sparse.linalg's "
        f"spsolve, splu, cg, gmres, bicgstab, minres, lgmres, norm, eigsh, inv, expm, "
        f"expm_multiply (docs/scipy.md)")


def _entries_pattern(rows, cols, shape):
    """The CSR pattern (and the order of the entries in it) of entries at
    (rows, cols): entries stay distinct (duplicates are summed by the
    products)."""
    order = np.lexsort((cols, rows))
    counts = np.bincount(rows, minlength=shape[0])
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return Pattern(indptr, cols[order], shape), order


class ActiveSparse:
    """A sparse matrix of active values: entries at ``rows``, ``cols``
    (CSR order) with values ``values`` (active, or plain)."""

    __array_ufunc__ = None       # NumPy hands binary operators to the reflected methods
    ndim = 2
    dtype = np.dtype(np.float64)
    _storage = _data = None      # SciPy's stored order and data, where adsim follows them

    def _setup(self, rows, cols, values, shape, format_name, stored=False):
        rows = np.asarray(rows, dtype=np.int64).ravel()
        cols = np.asarray(cols, dtype=np.int64).ravel()
        shape = (int(shape[0]), int(shape[1]))
        if rows.size and (rows.min() < 0 or rows.max() >= shape[0] or cols.min() < 0
                          or cols.max() >= shape[1]):
            raise ValueError(f"adsim: sparse entries outside a matrix of shape {shape}")
        if np.size(values) != rows.size:
            raise ValueError(f"adsim: {np.size(values)} values for {rows.size} entries")
        pattern, order = _entries_pattern(rows, cols, shape)
        self._rows, self._cols = rows[order], cols[order]
        self._pattern = pattern
        if not isinstance(values, Active) and active_leaves(values):
            values = from_pieces(values)        # a list of active entries (an assembly loop)
        values = values.reshape(-1) if isinstance(values, Active) else \
            np.asarray(values, dtype=float).reshape(-1)
        in_order = np.array_equal(order, np.arange(order.size))
        # ``stored``: rows, cols and values are SciPy's stored entries in its
        # order, and ``A.data`` is ``values``, which the entries view
        self._storage = (rows, cols) if stored else None
        self._data = values if stored else None
        if in_order:
            self._values = values
        elif stored and isinstance(values, Active):
            self._values = _viewed(values, order)
        else:
            self._values = values[order]
            if stored:                          # plain values: read through A.data only
                self._data = values.view()
                self._data.flags.writeable = False
        self._shape = shape
        self.format = format_name
        return self

    @classmethod
    def made(cls, rows, cols, values, shape, like_array, format_name="csr", stored=False):
        kind = ActiveSparseArray if like_array else ActiveSparseMatrix
        return kind.__new__(kind)._setup(rows, cols, values, shape, format_name, stored)

    def _like(self, rows, cols, values, shape=None):
        return ActiveSparse.made(rows, cols, values, shape or self._shape,
                                 isinstance(self, ActiveSparseArray), self.format)

    # ---- what it is ---------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @property
    def nnz(self):
        return int(self._rows.size)

    @property
    def values(self):
        """The values of the stored entries, in CSR order (active)."""
        return self._values

    @property
    def entries(self):
        """(rows, columns) of the stored entries, in CSR order."""
        return self._rows, self._cols

    def __repr__(self):
        return (f"<adsim sparse {self.format} matrix of active values, shape {self._shape}, "
                f"{self.nnz} stored entries>")

    @property
    def data(self):
        """SciPy's ``data``: the values of the stored entries in SciPy's
        order, an array the matrix reads (``A.data *= 3``, ``A.data[0] = v``
        change it), for a matrix whose order adsim follows (see
        ``_stored_like``); else unsupported."""
        if self._storage is None:
            raise _data_unknown()
        return self._data

    @data.setter
    def data(self, values):
        if self._storage is None:
            raise _data_unknown()
        rows, cols = self._storage
        self._setup(rows, cols, values, self._shape, self.format, stored=True)

    def _stored_like(self, rows, cols, data, shape, format_name):
        """A matrix of this kind whose stored entries, in SciPy's order, are
        at ``rows``, ``cols`` with values ``data`` (its ``A.data``)."""
        return ActiveSparse.made(rows, cols, data, shape, isinstance(self, ActiveSparseArray),
                                 format_name, stored=True)

    def _stored_as(self, format, copy):
        """SciPy's conversion to ``format`` of a matrix whose stored order
        adsim follows: itself (or a copy) in its own format; the same stored
        entries from csr or csc to coo (sharing ``data`` unless ``copy``);
        SciPy's sorted order, in new ``data``, between csr and csc and from
        coo (whose duplicates SciPy would sum: None then, as for the other
        formats, whose order adsim does not follow)."""
        rows, cols = self._storage
        if format == self.format:
            return self.copy() if copy else self
        if format == "coo" and self.format in ("csr", "csc"):
            data = _copied(self._data) if copy else self._data
            return self._stored_like(rows, cols, data, self._shape, "coo")
        if format not in ("csr", "csc") or self.format not in ("csr", "csc", "coo"):
            return None
        if self.format == "coo" and \
                np.unique(rows * self._shape[1] + cols).size != rows.size:
            return None
        order = np.lexsort((cols, rows)) if format == "csr" else np.lexsort((rows, cols))
        return self._stored_like(rows[order], cols[order], _take(self._data, order),
                                 self._shape, format)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        # an AttributeError (hasattr is False) that says what is supported; the
        # data property's own refusal ends here too (Python asks __getattr__)
        raise _data_unknown() if name == "data" else UnsupportedAttribute(str(_unsupported(name)))

    def __getitem__(self, key):
        """Rows and columns picked by slices, integer arrays or boolean masks
        (``K[free][:, free]``): the entries there, renumbered; ``A[i, j]``
        the entry (a scalar); for an ``spmatrix``, ``A[i]`` and ``A[:, j]``
        the row or column as a 1 x n or m x 1 matrix, as SciPy gives them."""
        rows_key, cols_key = _outer_keys(key)
        if _is_integer(rows_key) and _is_integer(cols_key):
            return self._entry(rows_key, cols_key)
        if isinstance(self, ActiveSparseMatrix):
            rows_key = _as_slice(rows_key, self._shape[0])
            cols_key = _as_slice(cols_key, self._shape[1])
        (keep_r, new_r, m) = _axis_selection(rows_key, self._shape[0])
        (keep_c, new_c, n) = _axis_selection(cols_key, self._shape[1])
        kept = np.flatnonzero(keep_r[self._rows] & keep_c[self._cols])
        return self._like(new_r[self._rows[kept]], new_c[self._cols[kept]],
                          _take(self._values, kept), (m, n))

    def _entry(self, i, j):
        m, n = self._shape
        if not (-m <= i < m and -n <= j < n):
            raise IndexError(f"adsim: index ({i}, {j}) out of range for shape {self._shape}")
        at = np.flatnonzero((self._rows == i % m) & (self._cols == j % n))
        return np.sum(_take(self._values, at)) if at.size else 0.0

    def _summed(self):
        """The same matrix with one entry per position (duplicates summed),
        as SciPy sums them before a nonlinear map of the values."""
        key = self._rows * self._shape[1] + self._cols
        unique, first, where = np.unique(key, return_index=True, return_inverse=True)
        if unique.size == key.size:
            return self
        return self._like(self._rows[first], self._cols[first],
                          self._collect(where.ravel(), unique.size))

    def _mapped(self, f):
        """f applied to the values of the summed entries (f(0) = 0 assumed:
        the entries not stored stay 0)."""
        s = self._summed()
        return self._like(s._rows, s._cols, f(s._values))

    def __pow__(self, other):
        if isinstance(self, ActiveSparseArray):
            return self.power(other)
        raise _unsupported("** (the matrix power of an spmatrix)")

    def power(self, n, dtype=None):
        """The elementwise power of the stored entries (SciPy's ``power``)."""
        if dtype is not None or not _is_scalar(n) or isinstance(n, Active) or n == 0:
            raise _unsupported("power with an active, array or zero exponent, or dtype=")
        return self._mapped(lambda v: v ** n)

    def __abs__(self):
        return self._mapped(abs)

    def __iter__(self):
        raise _unsupported("iteration")

    def __array__(self, dtype=None, copy=None):
        # np.asarray(A) in code written for plain values (LinearConstraint(A, ...))
        raise UnsupportedOperation(
            "adsim: a scipy.sparse matrix assembled from active values cannot become a "
            "NumPy array (np.asarray of it, as code written for plain values does); pass "
            "A.toarray(), an active dense array, instead")

    def __len__(self):
        raise _unsupported("len()")

    # ---- writes ----------------------------------------------------------------------
    def __setitem__(self, key, value):
        """``A[rows, cols] = value`` (a Dirichlet row ``A[0, :] = 0``, an
        entry ``A[0, 0] = A[0, 0] + 1``): the entries at the positions
        selected are replaced by the value broadcast over them (a plain 0
        removes them)."""
        rows_key, cols_key = _outer_keys(key)
        picked_r = _picked(rows_key, self._shape[0])
        picked_c = _picked(cols_key, self._shape[1])
        r, c = np.meshgrid(picked_r, picked_c, indexing="ij")
        self._replace(r.ravel(), c.ravel(), value, (picked_r.size, picked_c.size))

    def setdiag(self, values, k=0):
        """The entries (i, i + k) along the diagonal replaced by ``values``
        (a scalar everywhere; a shorter vector sets the first ones)."""
        m, n = self._shape
        k = int(k)
        length = max(0, min(m + min(k, 0), n - max(k, 0)))
        if np.ndim(values) != 0:
            length = min(length, np.shape(values)[0])
            values = values[:length]
        i = np.arange(length) + max(-k, 0)
        self._replace(i, i + k, values, (length,))

    def _replace(self, rows, cols, value, shape):
        """The entries at the positions (rows, cols) replaced by ``value``
        broadcast to ``shape`` (one per position, in order)."""
        n = self._shape[1]
        kept = np.flatnonzero(~np.isin(self._rows * n + self._cols, rows * n + cols))
        new_rows, new_cols = self._rows[kept], self._cols[kept]
        values = _take(self._values, kept)
        if isinstance(value, Active) or active_leaves(value) or np.any(np.asarray(value) != 0):
            if not isinstance(value, Active) and active_leaves(value):
                value = from_pieces(value)
            new_rows, new_cols = np.concatenate([new_rows, rows]), np.concatenate([new_cols, cols])
            values = _concatenate(values, np.broadcast_to(value, shape).reshape(-1))
        self._setup(new_rows, new_cols, values, self._shape, self.format)

    # ---- formats, transposes -------------------------------------------------------
    def asformat(self, format, copy=False):
        """SciPy's conversion where adsim follows the stored order
        (``_stored_as``), else a new matrix of the same entries (writes into
        it leave this one alone, as SciPy's conversions copy)."""
        if self._storage is not None:
            converted = self._stored_as(format or self.format, copy)
            if converted is not None:
                return converted
        converted = self._like(self._rows, self._cols, self._values)
        converted.format = format or self.format
        return converted

    def tocsr(self, copy=False):
        return self.asformat("csr", copy)

    def tocsc(self, copy=False):
        return self.asformat("csc", copy)

    def tocoo(self, copy=None):
        # SciPy's csc tocoo copies unless told not to; csr's and coo's share
        return self.asformat("coo", self.format == "csc" if copy is None else copy)

    def tolil(self, copy=False):
        return self.asformat("lil")

    def todok(self, copy=False):
        return self.asformat("dok")

    def copy(self):
        if self._storage is not None:
            rows, cols = self._storage
            return self._stored_like(rows, cols, _copied(self._data), self._shape, self.format)
        converted = self._like(self._rows, self._cols, self._values)
        converted.format = self.format
        return converted

    def astype(self, dtype, casting="unsafe", copy=True):
        """A copy, for a real floating dtype (the values are float64)."""
        if np.dtype(dtype) != np.float64:
            raise _unsupported(f"astype({np.dtype(dtype)}) (the values stay float64)")
        return self.copy()

    def trace(self, offset=0):
        return np.sum(self.diagonal(offset))

    def sorted_indices(self):
        return self.copy()

    def sum_duplicates(self):
        """Nothing to do: duplicates are summed wherever the matrix acts."""

    eliminate_zeros = sort_indices = prune = sum_duplicates

    def getrow(self, i):
        return self[_as_slice(i, self._shape[0]), :]

    def getcol(self, j):
        return self[:, _as_slice(j, self._shape[1])]

    @property
    def T(self):
        if self._storage is not None:       # SciPy's: the same data, csr and csc swapped
            rows, cols = self._storage
            return self._stored_like(cols, rows, self._data, self._shape[::-1],
                                     _TRANSPOSED.get(self.format, self.format))
        return self._like(self._cols, self._rows, self._values, self._shape[::-1])

    def transpose(self, axes=None, copy=False):
        if axes is not None:
            raise _unsupported("transpose with axes")
        return self.T

    # ---- products --------------------------------------------------------------------
    def _recorded_product(self, a, b):
        """``a @ b`` with this matrix on one side (NumPy's dispatch and the
        sparse products hand them here)."""
        return self.__matmul__(b) if a is self else self.__rmatmul__(a)

    def __matmul__(self, other):
        if isinstance(other, ActiveSparse) or sp.issparse(other):
            return _sparse_product(self, other)
        if _is_scalar(other):
            raise ValueError("adsim: matmul: scalar operands are not allowed, use '*' instead")
        values, x = self._values, other
        if not isinstance(values, Active) and not active_leaves(x):
            S = sp.csr_array((values, self._pattern.indices, self._pattern.indptr),
                             shape=self._shape)
            return S @ np.asarray(x, dtype=float)
        tape = tape_of(values, x)
        ref = values.slot if isinstance(values, Active) else tape.const_ref(values)
        if not isinstance(x, Active) and active_leaves(x):
            x = np.asarray(x)
        return spmv(tape, self._pattern, ref, x, False)

    def __rmatmul__(self, other):
        if isinstance(other, ActiveSparse) or sp.issparse(other):
            return _sparse_product(other, self)
        if _is_scalar(other):
            raise ValueError("adsim: matmul: scalar operands are not allowed, use '*' instead")
        if np.ndim(other) == 2:
            return self.T.__matmul__(other.T).T
        return self.T.__matmul__(other)

    def dot(self, other):
        return self._scaled(other) if _is_scalar(other) else self @ other

    def matvec(self, other):
        return self @ other

    # ---- arithmetic --------------------------------------------------------------------
    def _scaled(self, c):
        return self._like(self._rows, self._cols, self._values * c)

    def __mul__(self, other):
        if _is_scalar(other):
            return self._scaled(other)
        if isinstance(self, ActiveSparseArray):
            return self.multiply(other)
        return self @ other                   # an spmatrix: * is the matrix product

    def __rmul__(self, other):
        if _is_scalar(other):
            return self._scaled(other)
        if isinstance(self, ActiveSparseArray):
            return self.multiply(other)
        return self.__rmatmul__(other)

    def __truediv__(self, other):
        if not _is_scalar(other):
            raise _unsupported("division by an array")
        return self._scaled(1.0 / other)

    def __neg__(self):
        return self._scaled(-1.0)

    def __pos__(self):
        return self

    def __add__(self, other):
        other = as_active_sparse(other, "+")
        if other.shape != self._shape:
            raise ValueError(f"adsim: inconsistent shapes {self._shape} and {other.shape}")
        return self._like(np.concatenate([self._rows, other._rows]),
                          np.concatenate([self._cols, other._cols]),
                          _concatenate(self._values, other._values))

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-as_active_sparse(other, "-"))

    def __rsub__(self, other):
        return as_active_sparse(other, "-") + (-self)

    def multiply(self, other):
        """Elementwise product: the values times ``other`` at the stored
        entries (a dense array broadcast to the shape, or a sparse matrix)."""
        if _is_scalar(other):
            return self._scaled(other)
        if isinstance(other, ActiveSparse):
            return self._times_entries(other)
        if sp.issparse(other):
            other = other.toarray()
        if not isinstance(other, Active):
            other = np.broadcast_to(np.asarray(other, dtype=float), self._shape)
        else:
            other = np.broadcast_to(other, self._shape)
        return self._like(self._rows, self._cols,
                          self._values * other[self._rows, self._cols])

    def _times_entries(self, other):
        """The elementwise product of two sparse matrices: the summed
        entries stored in both, multiplied."""
        if other.shape != self._shape:
            raise ValueError(f"adsim: inconsistent shapes {self._shape} and {other.shape}")
        a, b = self._summed(), other._summed()
        n = self._shape[1]
        _, in_a, in_b = np.intersect1d(a._rows * n + a._cols, b._rows * n + b._cols,
                                       assume_unique=True, return_indices=True)
        return self._like(a._rows[in_a], a._cols[in_a],
                          _take(a._values, in_a) * _take(b._values, in_b))

    # ---- to dense and parts --------------------------------------------------------------
    def _collect(self, positions, size):
        """out[t] = the sum of the values of the entries p with
        positions[p] = t (a constant 0-1 matrix times the values)."""
        values = self._values
        if not isinstance(values, Active):
            return np.bincount(positions, weights=values, minlength=size)
        order = np.argsort(positions, kind="stable")
        counts = np.bincount(positions, minlength=size)
        collect = Pattern(np.concatenate([[0], np.cumsum(counts)]), order, (size, values.size))
        tape = values.tape
        return spmv(tape, collect, tape.const_ref(np.ones(values.size)), values, False)

    def toarray(self, order=None, out=None):
        if out is not None:
            raise _unsupported("toarray(out=)")
        m, k = self._shape
        return self._collect(self._rows * k + self._cols, m * k).reshape(m, k)

    def todense(self, order=None, out=None):
        if isinstance(self, ActiveSparseMatrix):
            raise _unsupported("todense (np.matrix results); use toarray")
        return self.toarray(order, out)

    def sum(self, axis=None, dtype=None, out=None):
        """The sum of the entries (duplicates included), of each column
        (axis 0) or of each row (axis 1): shaped as SciPy's (a 2-d row or
        column for an spmatrix, whose np.matrix becomes a 2-d array here)."""
        if dtype is not None or out is not None:
            raise _unsupported("sum with dtype= or out=")
        m, n = self._shape
        if axis is None:
            return np.sum(self._values) if self.nnz else 0.0
        axis = int(axis) % 2
        along = self._cols if axis == 0 else self._rows
        totals = self._collect(along, n if axis == 0 else m)
        if isinstance(self, ActiveSparseArray):
            return totals
        return totals.reshape(1, n) if axis == 0 else totals.reshape(m, 1)

    def mean(self, axis=None, dtype=None, out=None):
        """The mean over all m n positions, of each column or of each row."""
        total = self.sum(axis, dtype, out)
        m, n = self._shape
        return total / (m * n if axis is None else (m if int(axis) % 2 == 0 else n))

    def diagonal(self, k=0):
        m, n = self._shape
        length = max(0, min(m + min(k, 0), n - max(k, 0)))
        on = np.flatnonzero(self._cols - self._rows == k)
        part = self._like(self._rows[on], self._cols[on], _take(self._values, on))
        return part._collect(part._rows - max(-k, 0), length)


class ActiveSparseMatrix(ActiveSparse):
    """An ActiveSparse made where SciPy would make an ``spmatrix`` (its
    layout matches theirs, so a constructor's instance can become one)."""


class ActiveSparseArray(abc.ABC, ActiveSparse):
    """An ActiveSparse made where SciPy would make an ``sparray`` (its
    layout matches theirs, so a constructor's instance can become one)."""


def _axis_selection(key, size):
    """(kept, new position, new size) of the positions of an axis a key
    selects: a slice, integer positions (each at most once) or a mask."""
    if isinstance(key, Active) or active_leaves(key):
        raise _unsupported("indexing with active values")
    if isinstance(key, (int, np.integer)):
        raise _unsupported("indexing a sparse array with a single integer (a 1-d result); "
                           "take a slice i:i+1")
    picked = np.arange(size)[key]
    if picked.ndim != 1 or np.unique(picked).size != picked.size:
        raise _unsupported("indexing that repeats rows or columns")
    kept = np.zeros(size, dtype=bool)
    kept[picked] = True
    new = np.full(size, -1, dtype=np.int64)
    new[picked] = np.arange(picked.size)
    return kept, new, picked.size


def _sparse_product(a, b):
    """C = A B of two sparse matrices, one or both of active values: the
    product a_p b_q at (row of p, column of q) for every pair of entries
    with column of p = row of q, then summed per position (SciPy's pattern
    of the product, explicit zeros aside)."""
    like_array = any(isinstance(m, (sp.sparray, ActiveSparseArray)) for m in (a, b))
    A, B = as_active_sparse(a, "@"), as_active_sparse(b, "@")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"adsim: dimension mismatch in a product of shapes {A.shape} and "
                         f"{B.shape}")
    starts = B._pattern.indptr                 # B's entries of row r: starts[r]:starts[r + 1]
    counts = np.diff(starts)[A._cols]
    p = np.repeat(np.arange(A.nnz), counts)
    q = np.repeat(starts[A._cols], counts) + np.arange(p.size) - \
        np.repeat(np.cumsum(counts) - counts, counts)
    values = _take(A._values, p) * _take(B._values, q)
    product = ActiveSparse.made(A._rows[p], B._cols[q], values, (A.shape[0], B.shape[1]),
                                like_array, "csr")
    return product._summed()


def _outer_keys(key):
    """(rows key, columns key) of an index selecting the rows times the
    columns: a row key alone, a slice or integer on either side, or
    np.ix_'s column and row. Two integer arrays or masks pair their
    elements (NumPy's and SciPy's meaning), which is refused."""
    rows_key, cols_key = key if isinstance(key, tuple) and len(key) == 2 else (key, slice(None))
    if isinstance(rows_key, (slice, int, np.integer)) or isinstance(cols_key, (slice, int,
                                                                              np.integer)):
        return rows_key, cols_key
    r, c = np.asarray(rows_key), np.asarray(cols_key)
    if r.ndim == 2 and c.ndim == 2 and r.shape[1] == 1 and c.shape[0] == 1:      # np.ix_
        return r.ravel(), c.ravel()
    raise _unsupported("indexing with two integer arrays or masks (SciPy pairs their "
                       "elements); select the rows, then the columns: A[rows][:, cols]")


def _picked(key, size):
    """The positions along an axis a key of a write selects (an integer too)."""
    if isinstance(key, Active) or active_leaves(key):
        raise _unsupported("writes at active positions")
    picked = np.arange(size)[key]
    return np.atleast_1d(picked).ravel()


def _is_integer(key):
    return isinstance(key, (int, np.integer)) and not isinstance(key, bool)


def _as_slice(key, size):
    """An spmatrix's single row or column index as the slice SciPy reads it as."""
    if not _is_integer(key):
        return key
    if not -size <= key < size:
        raise IndexError(f"adsim: index {key} out of range for an axis of size {size}")
    return slice(key % size, key % size + 1)


def _is_scalar(x):
    """A number (active or not); np.ndim of a sparse matrix is 0 too."""
    return not (sp.issparse(x) or isinstance(x, ActiveSparse)) and np.ndim(x) == 0


def _take(values, positions):
    return values[positions]


_TRANSPOSED = {"csr": "csc", "csc": "csr"}


def _data_unknown():
    return UnsupportedAttribute(
        f"{_unsupported('data')}. A.data is known for a coo, csr or csc matrix made from "
        f"active values by its constructor, by A.data = v or A.data *= p, and for its copies, "
        f"conversions between these formats and transposes; not after arithmetic, diags, "
        f"kron or writes A[i, j] = v, whose stored order adsim does not follow")


def _viewed(values, order):
    """``values`` (active) taken in ``order``, as a view of their root: a
    write into ``values`` (SciPy's ``A.data``) is seen by the matrix."""
    root = values._root()
    index = values._positions().reshape(-1)[order]
    return make_view(gather(root, index), root, index)


def _copied(values):
    return np.copy(values)


def _concatenate(a, b):
    if not isinstance(a, Active) and not isinstance(b, Active):
        return np.concatenate([a, b])
    return np.concatenate([a.reshape(-1) if isinstance(a, Active) else np.asarray(a, float),
                           b.reshape(-1) if isinstance(b, Active) else np.asarray(b, float)])


def is_active_matrix(obj):
    return isinstance(obj, ActiveSparse)


def as_active_sparse(obj, what):
    """An ActiveSparse, or a constant sparse matrix as one (plain values)."""
    if isinstance(obj, ActiveSparse):
        return obj
    if sp.issparse(obj):
        coo = sp.coo_matrix(obj)
        return ActiveSparse.made(coo.row, coo.col, coo.data.astype(float), coo.shape,
                                 isinstance(obj, sp.sparray))
    raise _unsupported(f"{what} with a {type(obj).__name__}")


# ---- the hooked constructors and functions ------------------------------------------

def _from_arguments(arg1, shape, format_name):
    """(rows, cols, values, shape) of a constructor's ``arg1``."""
    if isinstance(arg1, ActiveSparse):
        if shape is not None and tuple(shape) != arg1.shape:
            raise _unsupported("a change of shape")
        return arg1._rows, arg1._cols, arg1._values, arg1.shape
    if isinstance(arg1, Active) and arg1.ndim == 2:    # a dense array: every entry stored
        r, c = np.nonzero(np.ones(arg1.shape, dtype=bool))
        return r, c, arg1.reshape(-1), arg1.shape
    if not isinstance(arg1, tuple):
        raise _unsupported(f"{format_name}_matrix of an active dense array; pass "
                           f"(values, (row, col)) or (values, indices, indptr)")
    if len(arg1) == 2:                              # (values, (rows, cols))
        values, (rows, cols) = arg1
        rows, cols = _plain_indices(rows), _plain_indices(cols)
        if shape is None:
            shape = (int(rows.max()) + 1 if rows.size else 0,
                     int(cols.max()) + 1 if cols.size else 0)
        return rows, cols, values, shape
    if len(arg1) == 3:                              # (values, indices, indptr)
        values, indices, indptr = arg1
        indices, indptr = _plain_indices(indices), _plain_indices(indptr)
        major = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
        if shape is None:
            shape = (indptr.size - 1, int(indices.max()) + 1 if indices.size else 0)
            if format_name == "csc":
                shape = shape[::-1]
        if format_name == "csc":
            return indices, major, values, shape
        return major, indices, values, shape
    raise _unsupported(f"{format_name} constructor arguments of length {len(arg1)}")


def _plain_indices(idx):
    if isinstance(idx, Active) or active_leaves(idx):
        raise UnsupportedOperation("adsim: sparse matrix indices must be plain integers, not "
                                   "active values")
    arr = np.asarray(idx)
    if arr.size and arr.dtype.kind not in "iub":
        raise TypeError(f"adsim: sparse matrix indices must be integers, not {arr.dtype}")
    return arr.astype(np.int64).ravel()


def _init(format_name, self, arg1, shape, dtype):
    """A constructor given active values: ``self`` becomes an ActiveSparse
    (of the matrix or array kind SciPy would make). Its stored order is
    SciPy's where adsim follows it: the arrays given, in the constructor's
    own format (SciPy keeps them as ``data``); a csr or csc matrix of
    (values, (rows, cols)) without duplicate positions, sorted as SciPy
    sorts them; a matrix of that order converted."""
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise _unsupported(f"dtype={dtype}")
    rows, cols, values, shape = _from_arguments(arg1, shape, format_name)
    self.__class__ = ActiveSparseArray if isinstance(self, sp.sparray) else ActiveSparseMatrix
    stored = isinstance(arg1, tuple) and (len(arg1) == 3 or format_name == "coo")
    if isinstance(arg1, ActiveSparse) and arg1._storage is not None:
        converted = arg1.asformat(format_name)
        if converted._storage is not None:
            (rows, cols), values, stored = converted._storage, converted._data, True
    elif isinstance(arg1, tuple) and len(arg1) == 2 and not stored:
        key = rows * shape[1] + cols
        if np.unique(key).size == key.size:         # SciPy's coo -> csr/csc, sorted
            order = np.lexsort((cols, rows)) if format_name == "csr" else \
                np.lexsort((rows, cols))
            if not isinstance(values, Active) and active_leaves(values):
                values = from_pieces(values)
            flat = np.reshape(values, (-1,))
            rows, cols, values, stored = rows[order], cols[order], _take(flat, order), True
    self._setup(rows, cols, values, shape, format_name, stored)


def adopt(matrix, values):
    """SciPy's sparse ``matrix`` (csr, csc, coo) becomes, in place, the active
    sparse matrix of its stored entries with the active ``values`` (in its
    storage order): ``A.data *= p`` (adsim/_record/plain_targets.py)."""
    if matrix.format not in ("csr", "csc", "coo"):
        raise _unsupported(f"writing active values into the data of a {matrix.format} matrix")
    coo = matrix.tocoo(copy=False) if matrix.format != "coo" else matrix
    rows, cols, shape = np.array(coo.row), np.array(coo.col), matrix.shape
    kind = ActiveSparseArray if isinstance(matrix, sp.sparray) else ActiveSparseMatrix
    format_name = matrix.format
    vars(matrix).clear()
    matrix.__class__ = kind
    # ``A.data`` stays the values in SciPy's storage order, read and written
    # (A.data += q again)
    matrix._setup(rows, cols, values, shape, format_name, stored=True)


def diags(diagonals, offsets=0, shape=None, format=None, dtype=None):
    return _diagonals(diagonals, offsets, shape, format, False)


def diags_array(diagonals, /, *, offsets=0, shape=None, format=None, dtype=None):
    return _diagonals(diagonals, offsets, shape, format, True)


def _diagonals(diagonals, offsets, shape, format, like_array):
    """The entries of SciPy's ``diags``: diagonal t at offset k_t fills
    positions (i, i + k_t) in order, a scalar diagonal broadcast."""
    single = np.ndim(offsets) == 0
    if single and isinstance(diagonals, (list, tuple)) and diagonals and \
            np.ndim(diagonals[0]) == 0:
        # (SciPy: with one offset, a sequence of numbers is that one diagonal)
        diagonals, offsets = [_listed_diagonal(diagonals)], [offsets]
    elif single and (isinstance(diagonals, Active) and diagonals.ndim == 1
                     or not isinstance(diagonals, (list, tuple))):
        diagonals, offsets = [diagonals], [offsets]
    elif single:
        offsets = [offsets]
    offsets = [int(k) for k in np.atleast_1d(offsets)]
    diagonals = [_listed_diagonal(d) if isinstance(d, (list, tuple)) else d for d in diagonals]
    if len(diagonals) != len(offsets):
        raise ValueError("adsim: diags: different number of diagonals and offsets")
    lengths = [np.size(d) for d in diagonals]
    if shape is None:               # (SciPy's: from the first diagonal)
        m = lengths[0] + abs(offsets[0])
        shape = (m, m)
    m, n = shape
    rows, cols, parts = [], [], []
    for d, k in zip(diagonals, offsets):
        length = max(0, min(m + min(k, 0), n - max(k, 0)))
        if np.size(d) == 1:
            d = d.reshape(()) if isinstance(d, Active) else float(np.asarray(d).reshape(()))
            d = d * np.ones(length)
        elif np.size(d) < length:
            raise ValueError(f"adsim: diags: diagonal of length {np.size(d)} at offset {k} "
                             f"shorter than {length}")
        else:
            d = d[:length]
        i = np.arange(length) + max(-k, 0)
        rows.append(i)
        cols.append(i + k)
        parts.append(d.reshape(-1) if isinstance(d, Active) else np.asarray(d, float))
    values = np.concatenate(parts) if any(isinstance(p, Active) for p in parts) else \
        np.concatenate(parts)
    return ActiveSparse.made(np.concatenate(rows), np.concatenate(cols), values, shape,
                             like_array, format or "dia")


def _listed_diagonal(entries):
    """A diagonal given as a list of numbers, some active (``[k] * n``):
    one array."""
    if not any(isinstance(e, Active) for e in entries):
        return np.asarray(entries, dtype=float)
    return np.stack([np.reshape(e, ()) if isinstance(e, Active) else np.float64(e)
                     for e in entries])


def kron(A, B, format=None):
    """Kronecker product: entry (a, b) at (i_a m_B + i_b, j_a n_B + j_b) with
    value v_a w_b."""
    like_array = isinstance(A, (sp.sparray, ActiveSparseArray)) or \
        isinstance(B, (sp.sparray, ActiveSparseArray))
    A, B = _kron_operand(A), _kron_operand(B)
    mb, nb = B.shape
    rows = (A._rows[:, None] * mb + B._rows[None, :]).ravel()
    cols = (A._cols[:, None] * nb + B._cols[None, :]).ravel()
    values = (A._values.reshape(-1, 1) * B._values.reshape(1, -1)).reshape(-1)
    return ActiveSparse.made(rows, cols, values, (A.shape[0] * mb, A.shape[1] * nb),
                             like_array, format or "bsr")


def _kron_operand(M):
    if isinstance(M, ActiveSparse) or sp.issparse(M):
        return as_active_sparse(M, "kron")
    arr = M if isinstance(M, Active) else np.asarray(M, dtype=float)
    if np.ndim(arr) != 2:
        raise _unsupported("kron of an array that is not 2-d")
    r, c = np.nonzero(np.ones(np.shape(arr), dtype=bool))
    return ActiveSparse.made(r, c, arr.reshape(-1), np.shape(arr), False)


def involves_active_matrix(args, kwargs):
    return any(isinstance(a, ActiveSparse) for a in (*args, *kwargs.values()))


def tril(A, k=0, format=None):
    """The entries on and below the k-th diagonal."""
    return _triangle(A, np.less_equal, k, format)


def triu(A, k=0, format=None):
    """The entries on and above the k-th diagonal."""
    return _triangle(A, np.greater_equal, k, format)


def _triangle(A, side, k, format):
    A = as_active_sparse(A, "tril/triu")
    keep = np.flatnonzero(side(A._cols - A._rows, int(k)))
    part = A._like(A._rows[keep], A._cols[keep], _take(A._values, keep))
    part.format = format or "coo"
    return part


for _rule in (diags, diags_array, kron, tril, triu):
    _rule.routes_also = involves_active_matrix


def _compressed_init(self, arg1, shape=None, dtype=None, copy=False, **kwargs):
    fmt = "csc" if isinstance(self, (sp.csc_matrix, sp.csc_array)) else "csr"
    return _init(fmt, self, arg1, shape, dtype)


def _coo_init(self, arg1, shape=None, dtype=None, copy=False, **kwargs):
    return _init("coo", self, arg1, shape, dtype)


for _rule, _owner in ((_compressed_init, "_cs_matrix"), (_coo_init, "_coo_base")):
    _rule.__name__, _rule.__qualname__ = "__init__", f"{_owner}.__init__"
    _rule.routes_also = involves_active_matrix

HOOKS = {
    ("scipy.sparse._coo", "_coo_base.__init__"): _coo_init,
    ("scipy.sparse._compressed", "_cs_matrix.__init__"): _compressed_init,
    ("scipy.sparse._construct", "diags"): diags,
    ("scipy.sparse._construct", "diags_array"): diags_array,
    ("scipy.sparse._construct", "kron"): kron,
    ("scipy.sparse._extract", "tril"): tril,
    ("scipy.sparse._extract", "triu"): triu,
}


def scaled(matrix, scale, name):
    """A constant sparse matrix times an active scalar (``A * c``, ``c * A``,
    ``A.dot(c)``)."""
    return as_active_sparse(matrix, name)._scaled(scale)
