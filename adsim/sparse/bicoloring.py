"""Star bicoloring of Jacobian patterns (forward and reverse products together).

A Jacobian with a dense row needs ``n`` column colors, one with a dense column
``m`` row colors; one with both is expensive either way. A bicoloring colors
some rows (for ``W.T @ J``) and some columns (for ``J @ S``) so that every
entry ``(i, j)`` is isolated in row ``i`` among colored columns or in column
``j`` among colored rows; rows and columns that are not needed stay neutral
(``-1``). The cost is the number of row colors plus column colors [2]_.

Two constructions are tried and the cheaper kept:

* **star coloring of** ``[[0, A.T], [A, 0]]`` followed by neutralization of the
  colors no entry is read through, with row and column colors counted
  separately [3]_;
* **dense splitting**: rows with at least ``t`` entries are left to reverse
  mode (row coloring of those rows), all other entries to forward mode (column
  coloring of the remaining rows), and the same with rows and columns swapped,
  for a few thresholds ``t``: a vertex cover of the bipartite graph made of
  the dense rows and the columns of the sparse remainder, in the spirit of
  Coleman & Verma [1]_ and of the vertex-cover view of Gebremedhin et al. [2]_.
  An arrowhead matrix takes 3 colors (1 row, 2 columns).

Every candidate is then neutralized. The star route alone does not find the
arrowhead's 3 colors: greedy smallest-color choices give the spokes the hub's
color, after which every row needs its own. :func:`best_bicoloring` also lets
the best one-sided colorings compete, so it is never worse than either.

References
----------
.. [1] T. F. Coleman and A. Verma, "The efficient computation of sparse
   Jacobian matrices using automatic differentiation", SIAM J. Sci. Comput.
   19(4), 1210-1233, 1998.
.. [2] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian?
   Graph coloring for computing derivatives", SIAM Review 47(4), 629-705, 2005.
.. [3] A. Montoison, G. Dalle and A. H. Gebremedhin, "Revisiting sparse matrix
   coloring and bicoloring", arXiv:2505.07308, 2025.
"""
import numpy as np
import scipy.sparse as sp

from adsim.sparse import _coloring
from adsim.sparse.coloring import (DEFAULT_ORDERS, Bicoloring, Coloring, best_column_coloring,
                                   best_row_coloring, compact, neutralize)
from adsim.sparse.orderings import (adjacency_graph, as_csr_pattern, bipartite_structure,
                                    column_graph, method_name, order_vertices, row_graph,
                                    row_indices, twin_positions)
from adsim.sparse.recovery import NEUTRAL

JACOBIAN_ORDERS = ("largest_first", "smallest_last", "natural")
"""Orderings :func:`jacobian_coloring` tries by default."""

MAX_SPLITS = 8
"""Number of density thresholds tried on each side by the dense splitting."""

METHODS = ("auto", "star", "split")


class _Bipartite:
    """A Jacobian pattern with its bipartite adjacency structure."""

    def __init__(self, pattern):
        self.csr = as_csr_pattern(pattern)
        self.shape = self.csr.shape
        self.augmented = bipartite_structure(self.csr)
        self.graph = adjacency_graph(self.augmented)
        self.indices = np.ascontiguousarray(self.augmented.indices, dtype=np.intp)
        self.twin = twin_positions(self.augmented)

    def finish(self, row_colors, column_colors, ordering):
        """Neutralize unneeded colors, renumber each side, wrap the result."""
        n = self.shape[1]
        colors = np.concatenate([column_colors, row_colors + n * (row_colors >= 0)])
        keep = np.zeros(colors.shape[0], dtype=bool)
        colors = neutralize(self.augmented, colors.astype(np.intp), keep, self.twin)
        column_colors, kc = compact(colors[:n])
        row_colors, kr = compact(colors[n:])
        return Bicoloring(row_colors, column_colors, kr, kc, ordering)

    def star(self, order):
        """Star coloring of the bipartite graph, split into rows and columns."""
        permutation = order_vertices(self.graph, order)
        colors = _coloring.star_coloring(permutation, self.graph.aptr, self.indices, self.twin)
        n = self.shape[1]
        return self.finish(colors[n:], colors[:n], f"star/{method_name(order)}")


def _rows_only(csr, rows_kept):
    """The entries of ``csr`` in the rows where ``rows_kept`` is True (same shape)."""
    rows = row_indices(csr)
    kept = rows_kept[rows]
    ones = np.ones(np.count_nonzero(kept), dtype=np.int8)
    return as_csr_pattern(sp.coo_array((ones, (rows[kept], csr.indices[kept])),
                                       shape=csr.shape))


def _greedy(graph, order):
    return _coloring.greedy_coloring(order_vertices(graph, order), *graph.arrays())


def _split(csr, dense_rows, order):
    """Dense rows by reverse mode, every other entry by forward mode; returns
    ``(row_colors, column_colors)``."""
    reverse_part = _rows_only(csr, dense_rows)
    forward_part = _rows_only(csr, ~dense_rows)
    row_colors = _greedy(row_graph(reverse_part), order)
    column_colors = _greedy(column_graph(forward_part), order)
    row_colors[~dense_rows] = NEUTRAL
    column_colors[np.bincount(forward_part.indices, minlength=csr.shape[1]) == 0] = NEUTRAL
    return row_colors, column_colors


def _thresholds(degree_counts, limit):
    """Density thresholds: the largest distinct degrees with the dense part at
    most half, then one above the largest degree (nothing dense: a one-sided
    coloring)."""
    values = np.unique(degree_counts)[::-1]
    size = degree_counts.shape[0]
    kept = [int(v) for v in values if np.count_nonzero(degree_counts >= v) * 2 <= size]
    return kept[:limit] + [int(degree_counts.max(initial=0)) + 1]


def _split_candidates(bip, order):
    """Bicolorings from splitting off the densest rows, or the densest columns."""
    row_degree = np.diff(bip.csr.indptr)
    column_degree = np.bincount(bip.csr.indices, minlength=bip.shape[1])
    name = method_name(order)
    for t in _thresholds(row_degree, MAX_SPLITS):
        row_colors, column_colors = _split(bip.csr, row_degree >= t, order)
        yield bip.finish(row_colors, column_colors, f"split-rows>={t}/{name}")
    transposed = as_csr_pattern(bip.csr.T)
    for t in _thresholds(column_degree, MAX_SPLITS):
        column_colors, row_colors = _split(transposed, column_degree >= t, order)
        yield bip.finish(row_colors, column_colors, f"split-columns>={t}/{name}")


def _one_sided(bip, coloring):
    """A column or row coloring as a bicoloring (the other side neutral)."""
    m, n = bip.shape
    if coloring.kind == "column":
        return Bicoloring(np.full(m, NEUTRAL, dtype=np.intp), coloring.colors, 0,
                          coloring.ncolors, f"column/{coloring.ordering}")
    return Bicoloring(coloring.colors, np.full(n, NEUTRAL, dtype=np.intp), coloring.ncolors,
                      0, f"row/{coloring.ordering}")


def _candidates(bip, order, method):
    if method not in METHODS:
        raise ValueError(f"unknown bicoloring method {method!r}; expected one of {METHODS}")
    if method in ("auto", "star"):
        yield bip.star(order)
    if method in ("auto", "split"):
        yield from _split_candidates(bip, order)


def _fewest(candidates):
    best = None
    for candidate in candidates:
        if best is None or candidate.ncolors < best.ncolors:
            best = candidate
    return best


def bicoloring(pattern, order="largest_first", method="auto"):
    """Star bicoloring for bidirectional (forward + reverse) Jacobian compression.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
        Sparsity pattern of ``J`` (m x n).
    order : str or array_like of int
        Vertex ordering; for ``"star"`` it orders the columns then rows of
        ``[[0, A.T], [A, 0]]``, for ``"split"`` the rows and columns colored.
    method : {"auto", "star", "split"}
        Construction (see the module notes); ``"auto"`` keeps the cheaper.

    Returns
    -------
    Bicoloring
        ``ncolors`` is the total number of products.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> arrow = sp.lil_array((6, 6)); arrow[0, :] = 1; arrow[:, 0] = 1; arrow.setdiag(1)
    >>> result = bicoloring(arrow)
    >>> result.n_row_colors, result.n_column_colors
    (1, 2)
    """
    return _fewest(_candidates(_Bipartite(pattern), order, method))


def best_bicoloring(pattern, orders=DEFAULT_ORDERS, method="auto"):
    """Bicoloring with the fewest total colors over several orderings.

    One-sided colorings from :func:`best_column_coloring` and
    :func:`best_row_coloring` compete too (as bicolorings with the other side
    neutral), so the result is never worse than either.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    orders : sequence of str
    method : {"auto", "star", "split"}

    Returns
    -------
    Bicoloring
    """
    bip = _Bipartite(pattern)
    candidates = [c for order in orders for c in _candidates(bip, order, method)]
    if method in ("auto", "split"):
        candidates.append(_one_sided(bip, best_column_coloring(bip.csr, orders)))
        candidates.append(_one_sided(bip, best_row_coloring(bip.csr, orders)))
    return _fewest(candidates)


def _structurally_symmetric(csr):
    if csr.shape[0] != csr.shape[1]:
        return False
    transposed = as_csr_pattern(csr.T)
    return (np.array_equal(transposed.indptr, csr.indptr)
            and np.array_equal(transposed.indices, csr.indices))


def jacobian_coloring(pattern, mode="auto", orders=JACOBIAN_ORDERS, search=True):
    """Coloring for a sparse Jacobian: the cheapest way to compress it.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    mode : {"auto", "forward", "reverse", "bidirectional"}
        ``"forward"``: column coloring (``J @ S``); ``"reverse"``: row coloring
        (``W.T @ J``); ``"auto"``: whichever of the two needs fewer products,
        forward on ties (and forward alone for a structurally symmetric
        pattern); ``"bidirectional"``: :func:`best_bicoloring`.
    orders : sequence of str
        Orderings tried (the best kept); by default a fast subset of
        :data:`DEFAULT_ORDERS`.
    search : bool
        Let one-sided colorings try DSATUR with bounded backtracking when the
        greedy colorings stay above the lower bound (see
        :func:`adsim.sparse.coloring.best_column_coloring`).

    Returns
    -------
    Coloring or Bicoloring

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> pattern = sp.csr_array(np.array([[1, 1, 1, 1], [1, 0, 0, 0], [0, 1, 0, 0]]))
    >>> result = jacobian_coloring(pattern)
    >>> result.kind, result.ncolors
    ('row', 2)
    """
    if mode == "forward":
        return best_column_coloring(pattern, orders, search)
    if mode == "reverse":
        return best_row_coloring(pattern, orders, search)
    if mode == "bidirectional":
        return best_bicoloring(pattern, orders)
    if mode != "auto":
        raise ValueError(f"unknown Jacobian coloring mode {mode!r}; expected 'auto', "
                         "'forward', 'reverse' or 'bidirectional'")
    csr = as_csr_pattern(pattern)
    forward = best_column_coloring(csr, orders, search)
    if _structurally_symmetric(csr):
        return forward
    reverse = best_row_coloring(csr, orders, search)
    return reverse if reverse.ncolors < forward.ncolors else forward


__all__ = ["Bicoloring", "Coloring", "best_bicoloring", "bicoloring", "jacobian_coloring"]
