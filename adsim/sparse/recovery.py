"""Seed matrices and recovery of sparse derivatives from compressed products.

With a coloring of the columns (colors ``0..k-1``, ``-1`` for "not used"), the
seed matrix ``S`` (n x k) has ``S[j, color[j]] = 1``. A forward sweep gives
``B = J @ S`` (m x k); a reverse sweep with row seeds ``W`` gives
``C = W.T @ J`` (k x n); a second-order sweep gives ``B = H @ S``. Recovery
fills a CSR matrix on the given pattern from these products: each entry is one
element of the product (direct recovery) or the result of a substitution along
two-colored trees (acyclic coloring). No dense m x n array is ever formed.

Every recovery here is a class that does the combinatorial work once
(``__init__``) and maps products to a CSR matrix cheaply (``__call__``), since a
plan recovers many Jacobians on one pattern; :func:`recover` is the one-shot
form.

References
----------
.. [1] A. R. Curtis, M. J. D. Powell and J. K. Reid, "On the estimation of
   sparse Jacobian matrices", IMA J. Appl. Math. 13, 117-119, 1974.
.. [2] T. F. Coleman and A. Verma, "The efficient computation of sparse
   Jacobian matrices using automatic differentiation", SIAM J. Sci. Comput.
   19(4), 1210-1233, 1998.
.. [3] A. H. Gebremedhin, A. Tarafdar, F. Manne and A. Pothen, "New acyclic and
   star coloring algorithms with application to computing Hessians", SIAM J.
   Sci. Comput. 29(3), 1042-1072, 2007.
"""
import numpy as np
import scipy.sparse as sp

from adsim.sparse import _coloring
from adsim.sparse.orderings import (as_csr_pattern, row_indices, symmetric_structure,
                                    twin_positions)

NEUTRAL = -1
"""Color of a row or column that takes no part in any product."""


def seed_matrix(colors, ncolors=None, sparse=False):
    """Seed matrix of a coloring.

    Parameters
    ----------
    colors : array_like of int
        Color of every column (or row), ``-1`` for not used.
    ncolors : int, optional
        Number of seed columns; default ``max(colors) + 1``.
    sparse : bool
        Return a ``scipy.sparse.csr_array`` instead of a dense array.

    Returns
    -------
    numpy.ndarray or scipy.sparse.csr_array
        ``len(colors) x ncolors`` float array, ``S[j, colors[j]] = 1``.

    Examples
    --------
    >>> seed_matrix([0, 1, 0, -1])
    array([[1., 0.],
           [0., 1.],
           [1., 0.],
           [0., 0.]])
    """
    colors = np.asarray(colors, dtype=np.intp)
    if ncolors is None:
        ncolors = int(colors.max(initial=-1)) + 1
    if colors.size and colors.max() >= ncolors:
        raise ValueError(f"color {colors.max()} does not fit in {ncolors} seed columns")
    used = np.flatnonzero(colors >= 0)
    if sparse:
        ones = np.ones(used.shape[0])
        return sp.csr_array((ones, (used, colors[used])), shape=(colors.shape[0], ncolors))
    seed = np.zeros((colors.shape[0], ncolors))
    seed[used, colors[used]] = 1.0
    return seed


def unique_labels(groups, labels):
    """Whether each labelled entry is the only one with its label in its group.

    Parameters
    ----------
    groups, labels : numpy.ndarray of int
        Group and label of each entry; entries with a negative label take no part.

    Returns
    -------
    numpy.ndarray of bool
        False for unlabelled entries.
    """
    unique = np.zeros(labels.shape[0], dtype=bool)
    kept = np.flatnonzero(labels >= 0)
    if kept.size == 0:
        return unique
    keys = groups[kept].astype(np.int64) * (int(labels.max()) + 1) + labels[kept]
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    alone = np.ones(kept.shape[0], dtype=bool)
    same = ordered[1:] == ordered[:-1]
    alone[1:] &= ~same
    alone[:-1] &= ~same
    unique[kept[order]] = alone
    return unique


def unique_in_rows(csr, labels):
    """Whether each entry's label is the only one of its value in its row.

    Parameters
    ----------
    csr : scipy.sparse.csr_array
        Structure with sorted indices; ``labels`` follows its entry order.
    labels : numpy.ndarray of int
        Negative labels take no part (and give False).

    Returns
    -------
    numpy.ndarray of bool
    """
    return _coloring.unique_in_rows(np.ascontiguousarray(csr.indptr, dtype=np.intp),
                                    np.ascontiguousarray(labels, dtype=np.intp))


def _colors_array(colors, length, name):
    colors = np.asarray(colors, dtype=np.intp)
    if colors.shape != (length,):
        raise ValueError(f"{name} must have shape ({length},), got {colors.shape}")
    return colors


def _product(array, shape, name, color_axis=1):
    """A compressed product as an array, checked against its expected shape
    (axis ``color_axis`` may hold more colors than needed)."""
    array = np.asarray(array.toarray() if sp.issparse(array) else array)
    other = 1 - color_axis
    if (array.ndim != 2 or array.shape[other] != shape[other]
            or array.shape[color_axis] < shape[color_axis]):
        raise ValueError(f"{name} must have shape {shape}, got {np.shape(array)}")
    return array


def _on_pattern(csr, data):
    """CSR matrix with the structure of ``csr`` and the given values."""
    return sp.csr_array((data, csr.indices.copy(), csr.indptr.copy()), shape=csr.shape)


def _lost(rows, cols, bad, what):
    i = int(np.flatnonzero(bad)[0])
    return ValueError(
        f"entry ({rows[i]}, {cols[i]}) cannot be recovered: {what}; "
        "check the coloring with adsim.coloring.check"
    )


class ColumnRecovery:
    """Recover ``J`` from ``B = J @ S`` for a column coloring (forward mode).

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
        The m x n sparsity pattern of ``J``.
    colors : array_like of int
        A structurally orthogonal column coloring (see ``check``).
    """

    def __init__(self, pattern, colors):
        self.pattern = as_csr_pattern(pattern)
        m, n = self.pattern.shape
        self.colors = _colors_array(colors, n, "column colors")
        self.ncolors = int(self.colors.max(initial=-1)) + 1
        self._rows = row_indices(self.pattern)
        self._seed_cols = self.colors[self.pattern.indices]
        if np.any(self._seed_cols < 0):
            raise _lost(self._rows, self.pattern.indices, self._seed_cols < 0,
                        "its column has no color")

    def __call__(self, forward):
        """CSR ``J`` from the m x k product ``forward = J @ S``."""
        forward = _product(forward, (self.pattern.shape[0], self.ncolors), "J @ S")
        return _on_pattern(self.pattern, forward[self._rows, self._seed_cols])


class RowRecovery:
    """Recover ``J`` from ``C = W.T @ J`` for a row coloring (reverse mode).

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
        The m x n sparsity pattern of ``J``.
    colors : array_like of int
        A structurally orthogonal row coloring.
    """

    def __init__(self, pattern, colors):
        self.pattern = as_csr_pattern(pattern)
        m, n = self.pattern.shape
        self.colors = _colors_array(colors, m, "row colors")
        self.ncolors = int(self.colors.max(initial=-1)) + 1
        self._rows = row_indices(self.pattern)
        self._seed_rows = self.colors[self._rows]
        if np.any(self._seed_rows < 0):
            raise _lost(self._rows, self.pattern.indices, self._seed_rows < 0,
                        "its row has no color")

    def __call__(self, reverse):
        """CSR ``J`` from the k x n product ``reverse = W.T @ J``."""
        reverse = _product(reverse, (self.ncolors, self.pattern.shape[1]), "W.T @ J", 0)
        return _on_pattern(self.pattern, reverse[self._seed_rows, self.pattern.indices])


class BidirectionalRecovery:
    """Recover ``J`` from ``B = J @ S`` and ``C = W.T @ J`` (star bicoloring).

    Entry ``(i, j)`` is read from ``B[i, column_colors[j]]`` when column ``j``
    is the only colored column of row ``i`` with its color, else from
    ``C[row_colors[i], j]``.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
    row_colors, column_colors : array_like of int
        ``-1`` marks a row or column that is not used.
    """

    def __init__(self, pattern, row_colors, column_colors):
        self.pattern = as_csr_pattern(pattern)
        m, n = self.pattern.shape
        self.row_colors = _colors_array(row_colors, m, "row colors")
        self.column_colors = _colors_array(column_colors, n, "column colors")
        self.n_row_colors = int(self.row_colors.max(initial=-1)) + 1
        self.n_column_colors = int(self.column_colors.max(initial=-1)) + 1
        rows, cols = row_indices(self.pattern), self.pattern.indices
        forward_ok = unique_in_rows(self.pattern, self.column_colors[cols])
        reverse_ok = unique_labels(cols, self.row_colors[rows])
        if np.any(~forward_ok & ~reverse_ok):
            raise _lost(rows, cols, ~forward_ok & ~reverse_ok,
                        "neither its row nor its column isolates it")
        self._forward = np.flatnonzero(forward_ok)
        self._forward_at = (rows[self._forward], self.column_colors[cols[self._forward]])
        self._reverse = np.flatnonzero(~forward_ok)
        self._reverse_at = (self.row_colors[rows[self._reverse]], cols[self._reverse])

    def __call__(self, forward, reverse=None):
        """CSR ``J`` from ``forward = J @ S`` (m x kc) and ``reverse = W.T @ J``
        (kr x n; may be None when no row is colored)."""
        m, n = self.pattern.shape
        forward = _product(forward, (m, self.n_column_colors), "J @ S")
        if reverse is None:
            reverse = np.zeros((self.n_row_colors, n))
        reverse = _product(reverse, (self.n_row_colors, n), "W.T @ J", 0)
        data = np.empty(self.pattern.indices.shape[0], dtype=np.result_type(forward, reverse))
        data[self._forward] = forward[self._forward_at]
        data[self._reverse] = reverse[self._reverse_at]
        return _on_pattern(self.pattern, data)


class _SymmetricPattern:
    """Given pattern, its symmetrized adjacency, and where each entry sits in it."""

    def __init__(self, pattern, colors):
        self.pattern = as_csr_pattern(pattern)
        self.adjacency, self.diagonal = symmetric_structure(self.pattern)
        n = self.adjacency.shape[0]
        self.colors = _colors_array(colors, n, "colors")
        self.ncolors = int(self.colors.max(initial=-1)) + 1
        self.rows, self.cols = row_indices(self.pattern), self.pattern.indices
        self.adj_rows = row_indices(self.adjacency)
        self.on_diagonal = self.rows == self.cols
        keys = self.adj_rows.astype(np.int64) * n + self.adjacency.indices
        off = ~self.on_diagonal
        self.position = np.searchsorted(keys, self.rows[off].astype(np.int64) * n + self.cols[off])
        bad = self.on_diagonal & (self.colors[self.cols] < 0)
        if np.any(bad):
            raise _lost(self.rows, self.cols, bad, "a diagonal entry needs its vertex colored")


class StarRecovery:
    """Recover a symmetric ``H`` from ``B = H @ S`` for a star coloring (direct).

    Entry ``(u, v)`` is ``B[u, colors[v]]`` when ``v`` is the only colored
    neighbour of ``u`` with its color, else ``B[v, colors[u]]`` [3]_.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
        Square pattern; the output has exactly its stored entries (a triangle
        gives a triangle).
    colors : array_like of int
        Star coloring, ``-1`` for vertices that are not used.
    """

    def __init__(self, pattern, colors):
        sym = _SymmetricPattern(pattern, colors)
        self.pattern, self.ncolors = sym.pattern, sym.ncolors
        adj_cols = sym.adjacency.indices
        here = unique_in_rows(sym.adjacency, sym.colors[adj_cols])
        there = here[twin_positions(sym.adjacency)]
        if np.any(~here & ~there):
            raise _lost(sym.adj_rows, adj_cols, ~here & ~there,
                        "no color isolates it (not a star coloring)")
        read_row = np.where(here, sym.adj_rows, adj_cols)
        read_col = np.where(here, sym.colors[adj_cols], sym.colors[sym.adj_rows])
        self._at = (np.empty(sym.rows.shape[0], dtype=np.intp),
                    np.empty(sym.rows.shape[0], dtype=np.intp))
        diag, off = sym.on_diagonal, ~sym.on_diagonal
        self._at[0][diag] = sym.rows[diag]
        self._at[1][diag] = sym.colors[sym.rows[diag]]
        self._at[0][off] = read_row[sym.position]
        self._at[1][off] = read_col[sym.position]

    def __call__(self, compressed):
        """CSR ``H`` from the n x k product ``compressed = H @ S``."""
        compressed = _product(compressed, (self.pattern.shape[0], self.ncolors), "H @ S")
        return _on_pattern(self.pattern, compressed[self._at])


class AcyclicRecovery:
    """Recover a symmetric ``H`` from ``B = H @ S`` for an acyclic coloring.

    Every two-colored subgraph is a forest, so its edges can be solved for
    leaf by leaf: a vertex ``u`` with one unsolved neighbour ``v`` of color
    ``b`` gives ``H[u, v]`` as what is left of ``B[u, b]``, which is then
    subtracted from ``B[v, colors[u]]`` [3]_. The order of these steps depends
    only on the pattern and is computed once.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
        Square pattern; the output has exactly its stored entries.
    colors : array_like of int
        Acyclic coloring; every vertex with an entry must be colored.
    """

    def __init__(self, pattern, colors):
        sym = _SymmetricPattern(pattern, colors)
        self.pattern, self.ncolors, self._sym = sym.pattern, sym.ncolors, sym
        adj_cols = sym.adjacency.indices
        if np.any(sym.colors[adj_cols] < 0):
            raise _lost(sym.adj_rows, adj_cols, sym.colors[adj_cols] < 0,
                        "substitution needs every vertex colored")
        keys = sym.adj_rows.astype(np.int64) * max(self.ncolors, 1) + sym.colors[adj_cols]
        groups, pair_of = np.unique(keys, return_inverse=True)
        run_pos = np.argsort(pair_of, kind="stable").astype(np.intp)
        run_ptr = np.zeros(groups.shape[0] + 1, dtype=np.intp)
        np.cumsum(np.bincount(pair_of, minlength=groups.shape[0]), out=run_ptr[1:])
        self._twin = twin_positions(sym.adjacency)
        schedule = _coloring.substitution_schedule(
            sym.adj_rows, adj_cols.astype(np.intp), self._twin, sym.colors,
            pair_of.astype(np.intp), run_ptr, run_pos)
        if schedule is None:
            raise ValueError("entries on a two-colored cycle cannot be recovered by "
                             "substitution: the coloring is not acyclic; check it with "
                             "adsim.coloring.check(pattern, colors, kind='acyclic')")
        self._schedule = schedule

    def _solve(self, compressed):
        sym = self._sym
        residual = np.array(compressed[:, :max(self.ncolors, 1)], dtype=np.float64, order="C")
        solved = np.empty(self._schedule[0].shape[0])
        _coloring.substitute(residual, *self._schedule[:4], solved)
        values = np.empty(self._twin.shape[0])
        values[self._schedule[4]] = solved
        values[self._twin[self._schedule[4]]] = solved
        data = np.empty(sym.rows.shape[0])
        diag = sym.on_diagonal
        data[diag] = compressed[sym.rows[diag], sym.colors[sym.rows[diag]]]
        data[~diag] = values[sym.position]
        return data

    def __call__(self, compressed):
        """CSR ``H`` from the n x k product ``compressed = H @ S``."""
        compressed = _product(compressed, (self.pattern.shape[0], self.ncolors), "H @ S")
        if np.iscomplexobj(compressed):
            data = self._solve(compressed.real) + 1j * self._solve(compressed.imag)
        else:
            data = self._solve(compressed)
        return _on_pattern(self.pattern, data)


def recovery_for(pattern, coloring):
    """The recovery object for a coloring result.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
    coloring : Coloring or Bicoloring
        A result of ``adsim.coloring``; its ``kind`` selects the recovery.

    Returns
    -------
    ColumnRecovery, RowRecovery, BidirectionalRecovery, StarRecovery or AcyclicRecovery
    """
    kind = coloring.kind
    if kind == "bicoloring":
        return BidirectionalRecovery(pattern, coloring.row_colors, coloring.column_colors)
    classes = {"column": ColumnRecovery, "row": RowRecovery,
               "star": StarRecovery, "acyclic": AcyclicRecovery}
    if kind not in classes:
        raise ValueError(f"no recovery for colorings of kind {kind!r}")
    return classes[kind](pattern, coloring.colors)


def recover(pattern, coloring, *products):
    """Recover a sparse derivative from compressed products, in one call.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array
    coloring : Coloring or Bicoloring
    *products : numpy.ndarray
        ``J @ S`` (column), ``W.T @ J`` (row), ``J @ S, W.T @ J`` (bicoloring),
        ``H @ S`` (star, acyclic).

    Returns
    -------
    scipy.sparse.csr_array
        On the pattern's structure, sorted indices.
    """
    return recovery_for(pattern, coloring)(*products)
