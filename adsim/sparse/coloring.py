"""Colorings of sparsity patterns for compressed derivative evaluation.

A column coloring is **structurally orthogonal** when no two columns of one
color have an entry in the same row: then ``J @ S`` holds every entry of
``J`` once (Curtis, Powell & Reid). It is a partial distance-2 coloring of the
bipartite graph of ``J``, i.e. a distance-1 coloring of its column intersection
graph [1]_. Row colorings are the same on ``J.T`` and serve reverse mode.

This module holds the result types, column and row coloring, the post-processing
that drops unneeded colors, and :func:`check`, the validity checker for every
kind. Symmetric colorings are in :mod:`adsim.sparse.symmetric`, bicolorings in
:mod:`adsim.sparse.bicoloring`. Nothing here knows about tapes.

References
----------
.. [1] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian?
   Graph coloring for computing derivatives", SIAM Review 47(4), 629-705, 2005.
.. [2] A. Montoison, G. Dalle and A. H. Gebremedhin, "Revisiting sparse matrix
   coloring and bicoloring", arXiv:2505.07308, 2025.
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from adsim.sparse import _coloring
from adsim.sparse.orderings import (ORDERINGS, as_csr_pattern, bipartite_structure,
                                    column_graph, degrees, method_name, order_vertices,
                                    row_graph, row_indices, symmetric_structure,
                                    twin_positions)
from adsim.sparse.recovery import NEUTRAL, seed_matrix, unique_in_rows

DEFAULT_ORDERS = ("largest_first", "smallest_last", "incidence_degree",
                  "dynamic_largest_first", "natural", "dsatur")
"""Orderings tried by the ``best_*`` functions, in this order (ties keep the first)."""

SEARCH_SIZE_LIMIT = 20_000_000
"""``best_*`` searches with backtracking only when vertices x colors is below this."""

DSATUR_EDGE_LIMIT = 20_000_000
"""``best_*`` skips DSATUR on graphs with more (directed) edges than this: it
keeps one entry per vertex and neighbouring color."""

KINDS = ("column", "row", "star", "acyclic", "bicoloring")


@dataclass(frozen=True, eq=False)
class Coloring:
    """A one-sided coloring (column, row, star or acyclic).

    Attributes
    ----------
    colors : numpy.ndarray of intp
        Color of every column / row / vertex, numbered ``0..ncolors-1``;
        ``-1`` (:data:`NEUTRAL`) marks one that takes part in no product.
    ncolors : int
        Number of colors, i.e. of seed vectors and of compressed products.
    kind : str
        ``"column"``, ``"row"``, ``"star"`` or ``"acyclic"``.
    ordering : str
        The vertex ordering that produced it.
    """

    colors: np.ndarray
    ncolors: int
    kind: str
    ordering: str

    def seed(self, sparse=False):
        """Seed matrix ``S`` (columns, star, acyclic) or ``W`` (rows); see
        :func:`adsim.sparse.recovery.seed_matrix`."""
        return seed_matrix(self.colors, self.ncolors, sparse)

    def __repr__(self):
        return (f"Coloring(kind={self.kind!r}, ncolors={self.ncolors}, "
                f"ordering={self.ordering!r}, size={self.colors.shape[0]})")


@dataclass(frozen=True, eq=False)
class Bicoloring:
    """A star bicoloring: rows for reverse products, columns for forward ones.

    Attributes
    ----------
    row_colors, column_colors : numpy.ndarray of intp
        Colors numbered from 0 on each side; ``-1`` (:data:`NEUTRAL`) marks a
        row or column that is not used.
    n_row_colors, n_column_colors : int
        Number of reverse (``W.T @ J``) and forward (``J @ S``) products.
    ordering : str
        The construction and ordering that produced it: ``"star/<ordering>"``
        (star coloring of ``[[0, A.T], [A, 0]]``), ``"split-rows>=t/<ordering>"``
        or ``"split-columns>=t/<ordering>"`` (rows or columns with at least ``t``
        entries by the other mode), ``"column/..."`` or ``"row/..."`` (one-sided).
    """

    row_colors: np.ndarray
    column_colors: np.ndarray
    n_row_colors: int
    n_column_colors: int
    ordering: str
    kind = "bicoloring"

    @property
    def ncolors(self):
        """Total number of products, forward plus reverse."""
        return self.n_row_colors + self.n_column_colors

    def row_seed(self, sparse=False):
        """Row seed ``W`` (m x n_row_colors) for ``W.T @ J``."""
        return seed_matrix(self.row_colors, self.n_row_colors, sparse)

    def column_seed(self, sparse=False):
        """Column seed ``S`` (n x n_column_colors) for ``J @ S``."""
        return seed_matrix(self.column_colors, self.n_column_colors, sparse)

    def __repr__(self):
        return (f"Bicoloring(n_row_colors={self.n_row_colors}, "
                f"n_column_colors={self.n_column_colors}, ordering={self.ordering!r})")


def compact(colors):
    """Renumber the colors in use to ``0..k-1`` keeping their order.

    Returns
    -------
    colors : numpy.ndarray of intp
        ``-1`` entries stay ``-1``.
    ncolors : int
    """
    colors = np.asarray(colors, dtype=np.intp)
    used = np.unique(colors[colors >= 0])
    renumbered = np.full(colors.shape[0], NEUTRAL, dtype=np.intp)
    kept = colors >= 0
    renumbered[kept] = np.searchsorted(used, colors[kept])
    return renumbered, int(used.shape[0])


def _one_sided(graph, order):
    """Greedy coloring of ``graph`` in an ordering; ``(colors, ncolors)``."""
    order = order_vertices(graph, order)
    colors = _coloring.greedy_coloring(order, *graph.arrays())
    return colors, int(colors.max(initial=-1)) + 1


def _best(graph, kind, orders, color_with, lower_bound=0):
    """Run ``color_with(graph, order)`` for each order; keep the fewest colors
    (stopping early once ``lower_bound`` colors are reached)."""
    orders = tuple(orders)
    if not orders:
        raise ValueError("give at least one ordering")
    if "dsatur" in orders and len(orders) > 1 and degrees(graph).sum() > DSATUR_EDGE_LIMIT:
        orders = tuple(o for o in orders if o != "dsatur")
    best = None
    for order in orders:
        colors, ncolors = color_with(graph, order)
        if best is None or ncolors < best.ncolors:
            best = Coloring(colors, ncolors, kind, method_name(order))
        if best.ncolors <= lower_bound:
            break
    return best


def _search(graph, best, target, budget):
    """DSATUR with bounded backtracking for ``target`` colors; returns the
    better coloring and the budget left."""
    if graph.nvertices * best.ncolors > SEARCH_SIZE_LIMIT or budget <= 0:
        return best, budget
    colors, spent = _coloring.search_coloring(*graph.arrays(), target, budget)
    if colors is None:
        return best, budget - spent
    colors, ncolors = compact(colors)
    return Coloring(colors, ncolors, best.kind, "dsatur_backtracking"), budget - spent


def _best_one_sided(graph, kind, orders, bound, search):
    """Fewest colors over ``orders``, stopping at the lower ``bound``.

    With ``search``, DSATUR with backtracking first tries ``bound`` colors
    right after the first ordering (lattice stencils end there), and after
    the other orderings tries one color fewer than the best while that
    succeeds; all searches share ``n + 20000`` color assignments.
    """
    orders = tuple(orders)
    if not orders:
        raise ValueError("give at least one ordering")
    best = _best(graph, kind, orders[:1], _one_sided, bound)
    budget = graph.nvertices + 20_000 if search else 0
    if best.ncolors > bound:
        best, budget = _search(graph, best, bound, budget)
    if best.ncolors > bound and len(orders) > 1:
        others = _best(graph, kind, orders[1:], _one_sided, bound)
        best = others if others.ncolors < best.ncolors else best
    while best.ncolors - 1 > bound and budget >= graph.nvertices:
        improved, budget = _search(graph, best, best.ncolors - 1, budget)
        if improved is best:
            break
        best = improved
    return best


def column_coloring(pattern, order="largest_first"):
    """Structurally orthogonal column coloring, for ``J @ S`` (forward mode).

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
        Sparsity pattern of ``J`` (m x n), any format.
    order : str or array_like of int
        Vertex ordering, one of :data:`adsim.sparse.orderings.ORDERINGS`, or a
        permutation of the columns.

    Returns
    -------
    Coloring
        ``kind="column"``; ``colors`` has length n.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> tridiagonal = sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(6, 6))
    >>> column_coloring(tridiagonal, "natural").colors
    array([0, 1, 2, 0, 1, 2])
    """
    graph = column_graph(as_csr_pattern(pattern))
    colors, ncolors = _one_sided(graph, order)
    return Coloring(colors, ncolors, "column", method_name(order))


def row_coloring(pattern, order="largest_first"):
    """Structurally orthogonal row coloring, for ``W.T @ J`` (reverse mode).

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    order : str or array_like of int

    Returns
    -------
    Coloring
        ``kind="row"``; ``colors`` has length m.
    """
    graph = row_graph(as_csr_pattern(pattern))
    colors, ncolors = _one_sided(graph, order)
    return Coloring(colors, ncolors, "row", method_name(order))


def best_column_coloring(pattern, orders=DEFAULT_ORDERS, search=True):
    """Column coloring with the fewest colors over several orderings.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    orders : sequence of str
        Orderings to try; ties keep the earlier one.
    search : bool
        If the best greedy coloring has more colors than the largest row has
        entries (a lower bound), try DSATUR with bounded backtracking [3]_;
        ``ordering`` is then ``"dsatur_backtracking"``. Orderings stop once a
        coloring meets the bound.

    Returns
    -------
    Coloring

    References
    ----------
    .. [3] D. Brelaz, "New methods to color the vertices of a graph",
       Comm. ACM 22(4), 251-256, 1979.
    """
    csr = as_csr_pattern(pattern)
    graph = column_graph(csr)
    bound = int(np.diff(csr.indptr).max(initial=0))
    return _best_one_sided(graph, "column", orders, bound, search)


def best_row_coloring(pattern, orders=DEFAULT_ORDERS, search=True):
    """Row coloring with the fewest colors over several orderings.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    orders : sequence of str
    search : bool
        As in :func:`best_column_coloring`, with the largest column as bound.

    Returns
    -------
    Coloring
    """
    csr = as_csr_pattern(pattern)
    graph = row_graph(csr)
    bound = int(np.bincount(csr.indices, minlength=csr.shape[1]).max(initial=0))
    return _best_one_sided(graph, "row", orders, bound, search)


# ------------------------------------------------------------- post-processing
def neutralize(adjacency, colors, keep, twin=None):
    """Give the neutral color to vertices whose color no recovery reads.

    In direct recovery entry ``(u, v)`` is read in row ``u`` of the product
    at ``colors[v]`` when ``v`` is the only colored neighbour of ``u`` with
    that color (so ``v`` must stay colored), or symmetrically. Entries readable
    one way only fix the vertex they need; the others are assigned greedily,
    first to colors already kept, then to the color that serves most of them.
    Uncoloring vertices never spoils a read, so the result stays valid [2]_.

    Parameters
    ----------
    adjacency : scipy.sparse.csr_array
        Symmetric structure without diagonal (sorted indices).
    colors : numpy.ndarray of intp
        A coloring allowing direct recovery (star coloring, or star
        bicoloring of ``[[0, A.T], [A, 0]]``).
    keep : numpy.ndarray of bool
        Vertices that must stay colored (those with a diagonal entry).
    twin : numpy.ndarray of intp, optional
        :func:`adsim.sparse.orderings.twin_positions` of ``adjacency``.

    Returns
    -------
    numpy.ndarray of intp
        Colors with ``-1`` for neutral vertices; not renumbered.
    """
    rows, cols = row_indices(adjacency), adjacency.indices
    here = unique_in_rows(adjacency, colors[cols])
    there = here[twin_positions(adjacency) if twin is None else twin]
    assert not np.any(~here & ~there), "neutralize needs a coloring allowing direct recovery"
    keep = keep.copy()
    keep[cols[here & ~there]] = True
    keep[rows[there & ~here]] = True
    upper = rows < cols
    while True:
        open_ = upper & here & there & ~keep[rows] & ~keep[cols]
        if not open_.any():
            break
        used = np.zeros(int(colors.max()) + 1, dtype=bool)
        used[colors[keep & (colors >= 0)]] = True
        free = open_ & used[colors[cols]]
        keep[cols[free]] = True
        free = open_ & ~free & used[colors[rows]]
        keep[rows[free]] = True
        open_ &= ~keep[rows] & ~keep[cols]
        if not open_.any():
            break
        served = (np.bincount(colors[cols[open_]], minlength=used.shape[0])
                  + np.bincount(colors[rows[open_]], minlength=used.shape[0]))
        chosen = int(np.argmax(served))
        keep[cols[open_ & (colors[cols] == chosen)]] = True
        keep[rows[open_ & (colors[rows] == chosen)]] = True
    return np.where(keep, colors, NEUTRAL).astype(np.intp)


# ---------------------------------------------------------------------- check
def _labels(colors, length, what):
    colors = np.asarray(colors)
    if colors.shape != (length,) or not np.issubdtype(colors.dtype, np.integer):
        raise ValueError(f"{what} must be an integer array of shape ({length},), "
                         f"got {colors.dtype} array of shape {colors.shape}")
    return colors.astype(np.intp)


def _first_clash(groups, labels):
    """Two entries with the same group and the same label >= 0, or None."""
    kept = np.flatnonzero(labels >= 0)
    keys = groups[kept].astype(np.int64) * (int(labels.max(initial=0)) + 1) + labels[kept]
    order = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if same.size == 0:
        return None
    return kept[order[same[0]]], kept[order[same[0] + 1]]


def _check_orthogonal(csr, colors, side):
    rows, cols = row_indices(csr), csr.indices
    owner, other = (cols, rows) if side == "column" else (rows, cols)
    uncolored = np.flatnonzero(colors[owner] < 0)
    if uncolored.size:
        i = uncolored[0]
        raise ValueError(f"{side} {owner[i]} has an entry at ({rows[i]}, {cols[i]}) "
                         "but no color")
    clash = _first_clash(other, colors[owner])
    if clash is not None:
        a, b = clash
        across = "row" if side == "column" else "column"
        raise ValueError(
            f"{side}s {owner[a]} and {owner[b]} share color {colors[owner[a]]} and both "
            f"have an entry in {across} {other[a]}: not structurally orthogonal")
    return True


def _check_proper(adjacency, colors):
    rows, cols = row_indices(adjacency), adjacency.indices
    bad = np.flatnonzero((colors[rows] == colors[cols]) & (colors[rows] >= 0))
    if bad.size:
        u, v = rows[bad[0]], cols[bad[0]]
        raise ValueError(f"vertices {u} and {v} are adjacent and share color {colors[u]}")
    return rows, cols


def _unrecoverable(rows, cols, colors, here, there):
    """Message naming an entry no color isolates, and why."""
    p = int(np.flatnonzero(~here & ~there)[0])
    u, v = rows[p], cols[p]

    def why(a, b):                      # why (a, b) is not isolated in row a
        if colors[b] < 0:
            return f"vertex {b} is not colored"
        w = cols[(rows == a) & (colors[cols] == colors[b]) & (cols != b)][0]
        return f"vertex {w} also touches {a} with color {colors[b]}"

    return f"entry ({u}, {v}) cannot be recovered: {why(u, v)}, and {why(v, u)}"


def _check_star(pattern, colors):
    adjacency, diagonal = symmetric_structure(pattern)
    colors = _labels(colors, adjacency.shape[0], "colors")
    rows, cols = _check_proper(adjacency, colors)
    bare = np.flatnonzero(diagonal & (colors < 0))
    if bare.size:
        raise ValueError(f"vertex {bare[0]} has a diagonal entry but no color")
    here = unique_in_rows(adjacency, colors[cols])
    there = here[twin_positions(adjacency)]
    if np.any(~here & ~there):
        raise ValueError("not a star coloring: " + _unrecoverable(rows, cols, colors,
                                                                   here, there))
    return True


def _check_acyclic(pattern, colors):
    adjacency, diagonal = symmetric_structure(pattern)
    colors = _labels(colors, adjacency.shape[0], "colors")
    rows, cols = _check_proper(adjacency, colors)
    has_entry = diagonal | (np.diff(adjacency.indptr) > 0)
    bare = np.flatnonzero(has_entry & (colors < 0))
    if bare.size:
        raise ValueError(f"vertex {bare[0]} has entries but no color")
    upper = rows < cols
    u, v = rows[upper], cols[upper]
    low, high = np.minimum(colors[u], colors[v]), np.maximum(colors[u], colors[v])
    k = int(colors.max(initial=0)) + 1
    pair = low.astype(np.int64) * k + high
    nodes, index = np.unique(np.concatenate([u * (k * k) + pair, v * (k * k) + pair]),
                             return_inverse=True)
    nedges = u.shape[0]
    graph = sp.coo_array((np.ones(nedges), (index[:nedges], index[nedges:])),
                         shape=(nodes.shape[0], nodes.shape[0]))
    ncomp, label = connected_components(graph, directed=False)
    vertices_per = np.bincount(label, minlength=ncomp)
    edges_per = np.bincount(label[index[:nedges]], minlength=ncomp)
    cyclic = np.flatnonzero(edges_per >= vertices_per)
    if cyclic.size:
        members = nodes[label == cyclic[0]] // (k * k)
        p = int(pair[np.flatnonzero(label[index[:nedges]] == cyclic[0])[0]])
        raise ValueError(
            f"not an acyclic coloring: vertices {members[:8].tolist()} colored "
            f"{p // k} and {p % k} contain a two-colored cycle")
    return True


def _check_bicoloring(pattern, row_colors, column_colors):
    csr = as_csr_pattern(pattern)
    m, n = csr.shape
    row_colors = _labels(row_colors, m, "row colors")
    column_colors = _labels(column_colors, n, "column colors")
    augmented = bipartite_structure(csr)
    colors = np.concatenate([column_colors, row_colors])
    rows, cols = row_indices(augmented), augmented.indices
    here = unique_in_rows(augmented, colors[cols])
    there = here[twin_positions(augmented)]
    if np.any(~here & ~there):
        p = int(np.flatnonzero(~here & ~there)[0])
        j, i = (rows[p], cols[p] - n) if rows[p] < n else (cols[p], rows[p] - n)
        raise ValueError(
            f"not a star bicoloring: entry ({i}, {j}) is isolated neither in row {i} "
            f"(another column of color {column_colors[j]} there, or column {j} neutral) "
            f"nor in column {j} (another row of color {row_colors[i]} there, or row "
            f"{i} neutral)")
    return True


def check(pattern, coloring, kind=None):
    """Check that a coloring allows recovery of every entry of the pattern.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    coloring : Coloring, Bicoloring, array_like of int, or pair of arrays
        A result object, a colors array, or ``(row_colors, column_colors)``
        for a bicoloring.
    kind : {"column", "row", "star", "acyclic", "bicoloring"}, optional
        Required for plain arrays; defaults to ``coloring.kind``.

        ``column`` / ``row``
            Structural orthogonality: no two columns (rows) of one color share
            a row (column); every column (row) with an entry is colored.
        ``star``
            Adjacent vertices differ and every path on four vertices uses at
            least three colors -- equivalently every off-diagonal entry is
            isolated by its row or its column; neutral vertices allowed.
        ``acyclic``
            Adjacent vertices differ and every two-colored subgraph is a forest.
        ``bicoloring``
            Every entry ``(i, j)`` is isolated in row ``i`` among colored
            columns, or in column ``j`` among colored rows.

    Returns
    -------
    bool
        True.

    Raises
    ------
    ValueError
        Naming a conflicting pair (and the entry it spoils).
    """
    kind = kind if kind is not None else getattr(coloring, "kind", None)
    if kind not in KINDS:
        raise ValueError(f"unknown coloring kind {kind!r}; expected one of {KINDS}")
    if kind == "bicoloring":
        if isinstance(coloring, Bicoloring):
            return _check_bicoloring(pattern, coloring.row_colors, coloring.column_colors)
        row_colors, column_colors = coloring
        return _check_bicoloring(pattern, row_colors, column_colors)
    colors = coloring.colors if isinstance(coloring, Coloring) else coloring
    if kind == "star":
        return _check_star(pattern, colors)
    if kind == "acyclic":
        return _check_acyclic(pattern, colors)
    csr = as_csr_pattern(pattern)
    length = csr.shape[1] if kind == "column" else csr.shape[0]
    return _check_orthogonal(csr, _labels(colors, length, f"{kind} colors"), kind)


__all__ = ["Bicoloring", "Coloring", "DEFAULT_ORDERS", "NEUTRAL", "ORDERINGS",
           "best_column_coloring", "best_row_coloring", "check", "column_coloring",
           "compact", "neutralize", "row_coloring"]
