"""Sparsity patterns as graphs, and vertex orderings for greedy coloring.

A pattern is any ``scipy.sparse`` matrix or array (or a dense array): its
stored entries are its structural nonzeros, whatever their values. Coloring
works on three graphs built from it, none of them formed explicitly when it
would be larger than the pattern:

* the **column intersection graph** (vertices: columns; neighbours: columns
  sharing a row), for column coloring, walked through CSC and CSR;
* the **row intersection graph**, its transpose, for row coloring;
* the **adjacency graph** of a symmetric pattern (off-diagonal entries), for
  star and acyclic coloring, and of the bipartite matrix ``[[0, A.T], [A, 0]]``
  for bicoloring.

Orderings never use random numbers: ties are broken by vertex index.

References
----------
.. [1] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian?
   Graph coloring for computing derivatives", SIAM Review 47(4), 629-705, 2005.
.. [2] D. W. Matula and L. L. Beck, "Smallest-last ordering and clustering and
   graph coloring algorithms", J. ACM 30(3), 417-427, 1983.
.. [3] T. F. Coleman and J. J. More, "Estimation of sparse Jacobian matrices
   and graph coloring problems", SIAM J. Numer. Anal. 20(1), 187-209, 1983.
.. [4] D. Brelaz, "New methods to color the vertices of a graph",
   Comm. ACM 22(4), 251-256, 1979.
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from adsim.sparse import _coloring

ORDERINGS = (
    "natural",
    "largest_first",
    "smallest_last",
    "incidence_degree",
    "dynamic_largest_first",
    "dsatur",
)
"""Names accepted wherever an ordering is asked for."""

GRAPH_KINDS = ("column", "row", "symmetric", "bipartite")


def _intp(array):
    """Contiguous ``numpy.intp`` copy or view of an index array."""
    return np.ascontiguousarray(array, dtype=np.intp)


def as_csr_pattern(pattern):
    """Canonical CSR structure of a pattern.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
        Stored entries (explicit zeros included) are structural nonzeros.

    Returns
    -------
    scipy.sparse.csr_array
        Sorted indices, no duplicates, ``int8`` ones as data; the input is not
        modified.
    """
    if sp.issparse(pattern):
        csr = sp.csr_array(pattern, copy=True)
    else:
        dense = np.asarray(pattern)
        if dense.ndim != 2:
            raise ValueError(f"a sparsity pattern must be 2-D, got shape {dense.shape}")
        csr = sp.csr_array(dense != 0)
    ones = np.ones(csr.indices.shape[0], dtype=np.int8)
    csr = sp.csr_array((ones, _intp(csr.indices), _intp(csr.indptr)), shape=csr.shape)
    csr.sum_duplicates()
    csr.data[:] = 1
    return csr


def symmetric_structure(pattern):
    """Off-diagonal adjacency structure of a square pattern, symmetrized.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
        Square pattern; ``P`` and ``P.T`` are merged, so a triangle suffices.

    Returns
    -------
    adjacency : scipy.sparse.csr_array
        Pattern of ``P + P.T`` without its diagonal, sorted indices.
    diagonal : numpy.ndarray of bool
        ``diagonal[i]`` is True when entry ``(i, i)`` is stored.
    """
    csr = as_csr_pattern(pattern)
    if csr.shape[0] != csr.shape[1]:
        raise ValueError(
            f"a symmetric coloring needs a square pattern, got shape {csr.shape}; "
            "use a column, row or bidirectional coloring for rectangular Jacobians"
        )
    rows, cols = row_indices(csr), csr.indices
    diagonal = np.zeros(csr.shape[0], dtype=bool)
    diagonal[rows[rows == cols]] = True
    both = sp.csr_array(csr + csr.T)
    both.sum_duplicates()
    rows = row_indices(both)
    off = rows != both.indices
    indptr = np.zeros(csr.shape[0] + 1, dtype=np.intp)
    np.cumsum(np.bincount(rows[off], minlength=csr.shape[0]), out=indptr[1:])
    ones = np.ones(np.count_nonzero(off), dtype=np.int8)
    return sp.csr_array((ones, _intp(both.indices[off]), indptr), shape=csr.shape), diagonal


def _from_entries(rows, cols, shape):
    """Canonical CSR structure with the given (possibly repeated) entries."""
    ones = np.ones(rows.shape[0], dtype=np.int8)
    return as_csr_pattern(sp.coo_array((ones, (rows, cols)), shape=shape))


def bipartite_structure(pattern):
    """Adjacency structure of ``[[0, A.T], [A, 0]]``: columns of ``A`` are
    vertices ``0..n-1`` and rows are vertices ``n..n+m-1``."""
    csr = as_csr_pattern(pattern)
    m, n = csr.shape
    rows, cols = row_indices(csr) + n, csr.indices
    return _from_entries(np.concatenate([cols, rows]), np.concatenate([rows, cols]),
                         (m + n, m + n))


def row_indices(csr):
    """Row index of every stored entry of a CSR structure."""
    return np.repeat(np.arange(csr.shape[0], dtype=np.intp), np.diff(csr.indptr))


def twin_positions(adjacency):
    """Position of entry ``(j, i)`` for the entry ``(i, j)`` at each position
    of a structurally symmetric CSR structure with sorted indices."""
    nnz = adjacency.indices.shape[0]
    positions = sp.csr_array((np.arange(nnz, dtype=np.intp), adjacency.indices,
                              adjacency.indptr), shape=adjacency.shape)
    return _intp(positions.tocsc().data)       # CSC order of a symmetric pattern = CSR order


@dataclass(frozen=True)
class Graph:
    """A graph on the vertices of a pattern, in the form the kernels walk.

    Attributes
    ----------
    aptr, aidx, bptr, bidx : numpy.ndarray of intp
        See :mod:`adsim.sparse._coloring`: distance-1 graphs use ``aptr, aidx``
        (``b*`` repeat them); distance-2 graphs go vertex -> ``a`` -> ``b``.
    distance2 : bool
        Whether neighbours are reached in two steps.
    """

    aptr: np.ndarray
    aidx: np.ndarray
    bptr: np.ndarray
    bidx: np.ndarray
    distance2: bool

    @property
    def nvertices(self):
        """Number of vertices."""
        return self.aptr.shape[0] - 1

    def arrays(self):
        """Arguments of the compiled kernels."""
        return (self.aptr, self.aidx, self.bptr, self.bidx, self.distance2)


def _padded(indices):
    """Index array with at least one element, so kernels can take its address."""
    indices = _intp(indices)
    return indices if indices.shape[0] else np.zeros(1, dtype=np.intp)


def column_graph(csr):
    """Column intersection graph of a canonical CSR pattern (distance-2)."""
    csc = sp.csc_array(csr)
    csc.sort_indices()
    return Graph(_intp(csc.indptr), _padded(csc.indices),
                 _intp(csr.indptr), _padded(csr.indices), True)


def row_graph(csr):
    """Row intersection graph of a canonical CSR pattern (distance-2)."""
    csc = sp.csc_array(csr)
    csc.sort_indices()
    return Graph(_intp(csr.indptr), _padded(csr.indices),
                 _intp(csc.indptr), _padded(csc.indices), True)


def adjacency_graph(adjacency):
    """Distance-1 graph of a symmetric CSR structure without diagonal."""
    ptr, idx = _intp(adjacency.indptr), _padded(adjacency.indices)
    return Graph(ptr, idx, ptr, idx, False)


def graph_of(pattern, kind):
    """The graph that ``kind`` of coloring works on.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    kind : {"column", "row", "symmetric", "bipartite"}

    Returns
    -------
    Graph
    """
    if kind == "column":
        return column_graph(as_csr_pattern(pattern))
    if kind == "row":
        return row_graph(as_csr_pattern(pattern))
    if kind == "symmetric":
        return adjacency_graph(symmetric_structure(pattern)[0])
    if kind == "bipartite":
        return adjacency_graph(bipartite_structure(pattern))
    raise ValueError(f"unknown graph kind {kind!r}; expected one of {GRAPH_KINDS}")


def degrees(graph):
    """Number of distinct neighbours of every vertex of a :class:`Graph`."""
    return _coloring.degrees(*graph.arrays())


def _largest_first(graph):
    return np.argsort(-degrees(graph), kind="stable").astype(np.intp)


_KERNELS = {
    "natural": lambda graph: np.arange(graph.nvertices, dtype=np.intp),
    "largest_first": _largest_first,
    "smallest_last": lambda graph: _coloring.smallest_last_order(*graph.arrays()),
    "incidence_degree": lambda graph: _coloring.incidence_degree_order(*graph.arrays()),
    "dynamic_largest_first":
        lambda graph: _coloring.dynamic_largest_first_order(*graph.arrays()),
    "dsatur": lambda graph: _coloring.dsatur_order(*graph.arrays()),
}


def order_vertices(graph, method="largest_first"):
    """Order the vertices of a :class:`Graph`.

    Parameters
    ----------
    graph : Graph
    method : str or array_like of int
        One of :data:`ORDERINGS`, or an explicit permutation (returned checked).

        ``natural``
            Vertex index order.
        ``largest_first``
            Decreasing degree (Welsh & Powell).
        ``smallest_last``
            Reverse of repeatedly removing a vertex of minimum remaining degree [2]_.
        ``incidence_degree``
            Next vertex has most already-ordered neighbours [3]_.
        ``dynamic_largest_first``
            Next vertex has most not-yet-ordered neighbours.
        ``dsatur``
            Brelaz's saturation order [4]_: next vertex sees most distinct
            colors in a greedy coloring of the same graph.

    Returns
    -------
    numpy.ndarray of intp
        A permutation of ``range(graph.nvertices)``.

    References
    ----------
    .. [2] Matula & Beck, J. ACM 30(3), 1983.
    .. [3] Coleman & More, SIAM J. Numer. Anal. 20(1), 1983.
    .. [4] Brelaz, Comm. ACM 22(4), 1979.
    """
    if isinstance(method, str):
        if method not in _KERNELS:
            raise ValueError(f"unknown ordering {method!r}; expected one of {ORDERINGS}")
        return _KERNELS[method](graph)
    order = _intp(method)
    if order.ndim != 1 or not np.array_equal(np.sort(order), np.arange(graph.nvertices)):
        raise ValueError(
            f"an explicit ordering must be a permutation of range({graph.nvertices})"
        )
    return order


def ordering(pattern, method="largest_first", kind="column"):
    """Vertex ordering of a pattern for a given kind of coloring.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    method : str
        One of :data:`ORDERINGS`; see :func:`order_vertices`.
    kind : {"column", "row", "symmetric", "bipartite"}
        ``"column"`` orders columns on the column intersection graph,
        ``"row"`` rows on the row intersection graph, ``"symmetric"`` the
        vertices of a symmetric pattern's adjacency graph (star and acyclic
        coloring), ``"bipartite"`` columns then rows of ``[[0, A.T], [A, 0]]``.

    Returns
    -------
    numpy.ndarray of intp

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> ordering(sp.eye_array(3, format="csr"), "natural")
    array([0, 1, 2])
    """
    return order_vertices(graph_of(pattern, kind), method)


def method_name(method):
    """Printable name of an ordering argument."""
    return method if isinstance(method, str) else "given"
