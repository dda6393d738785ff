"""Star and acyclic colorings of symmetric patterns, for sparse Hessians.

For a symmetric ``H`` one product ``H @ S`` serves rows and columns alike, so
fewer colors than a column coloring suffice:

* a **star coloring** (adjacent vertices differ; every path on four vertices
  has at least three colors) lets every entry be read directly from ``H @ S``;
* an **acyclic coloring** (adjacent vertices differ; every cycle has at least
  three colors) needs fewer colors, and the entries are obtained by
  substitution along the two-colored trees.

Both greedy algorithms keep the two-colored structures (stars, or trees in a
disjoint-set forest) while coloring, so they cost ``O(sum of squared degrees)``
[1]_. Star colorings are post-processed: a vertex whose color no entry is read
through (no diagonal entry, not the hub of a star) takes the neutral color, and
a color nobody needs any more disappears [2]_.

References
----------
.. [1] A. H. Gebremedhin, A. Tarafdar, F. Manne and A. Pothen, "New acyclic and
   star coloring algorithms with application to computing Hessians", SIAM J.
   Sci. Comput. 29(3), 1042-1072, 2007.
.. [2] A. Montoison, G. Dalle and A. H. Gebremedhin, "Revisiting sparse matrix
   coloring and bicoloring", arXiv:2505.07308, 2025.
.. [3] A. H. Gebremedhin, F. Manne and A. Pothen, "What color is your Jacobian?
   Graph coloring for computing derivatives", SIAM Review 47(4), 629-705, 2005.
"""
import numpy as np

from adsim.sparse import _coloring
from adsim.sparse.coloring import DEFAULT_ORDERS, Coloring, _best, compact, neutralize
from adsim.sparse.orderings import (adjacency_graph, method_name, order_vertices,
                                    symmetric_structure, twin_positions)


class _SymmetricGraph:
    """Adjacency structure of a symmetric pattern with what the kernels need."""

    def __init__(self, pattern):
        self.adjacency, self.diagonal = symmetric_structure(pattern)
        self.graph = adjacency_graph(self.adjacency)
        self.indices = np.ascontiguousarray(self.adjacency.indices, dtype=np.intp)
        self.twin = twin_positions(self.adjacency)

    def star(self, order, postprocess=True):
        """Star coloring in the given order; ``(colors, ncolors)``."""
        order = order_vertices(self.graph, order)
        colors = _coloring.star_coloring(order, self.graph.aptr, self.indices, self.twin)
        if postprocess:
            colors = neutralize(self.adjacency, colors, self.diagonal, self.twin)
        return compact(colors)

    def acyclic(self, order):
        """Acyclic coloring in the given order; ``(colors, ncolors)``."""
        order = order_vertices(self.graph, order)
        colors = _coloring.acyclic_coloring(order, self.graph.aptr, self.indices, self.twin)
        return compact(colors)


def star_coloring(pattern, order="largest_first", postprocess=True):
    """Star coloring of a symmetric pattern, for direct Hessian recovery.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
        Square pattern; ``P + P.T`` is colored, so one triangle suffices.
    order : str or array_like of int
        Vertex ordering (see :mod:`adsim.sparse.orderings`) or a permutation.
    postprocess : bool
        Neutralize colors that no entry is read through [2]_.

    Returns
    -------
    Coloring
        ``kind="star"``; ``-1`` marks vertices that need no seed.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> arrow = sp.lil_array((5, 5)); arrow[0, :] = 1; arrow[:, 0] = 1; arrow.setdiag(1)
    >>> star_coloring(arrow).ncolors
    2
    """
    colors, ncolors = _SymmetricGraph(pattern).star(order, postprocess)
    return Coloring(colors, ncolors, "star", method_name(order))


def acyclic_coloring(pattern, order="largest_first"):
    """Acyclic coloring of a symmetric pattern, for Hessian recovery by substitution.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
        Square pattern; ``P + P.T`` is colored.
    order : str or array_like of int

    Returns
    -------
    Coloring
        ``kind="acyclic"``.
    """
    colors, ncolors = _SymmetricGraph(pattern).acyclic(order)
    return Coloring(colors, ncolors, "acyclic", method_name(order))


def best_star_coloring(pattern, orders=DEFAULT_ORDERS, postprocess=True):
    """Star coloring with the fewest colors over several orderings.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    orders : sequence of str
    postprocess : bool

    Returns
    -------
    Coloring
    """
    sym = _SymmetricGraph(pattern)
    return _best(sym.graph, "star", orders, lambda g, o: sym.star(o, postprocess))


def best_acyclic_coloring(pattern, orders=DEFAULT_ORDERS):
    """Acyclic coloring with the fewest colors over several orderings.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    orders : sequence of str

    Returns
    -------
    Coloring
    """
    sym = _SymmetricGraph(pattern)
    return _best(sym.graph, "acyclic", orders, lambda g, o: sym.acyclic(o))


def hessian_coloring(pattern, method="star", orders=DEFAULT_ORDERS):
    """Default coloring for a sparse Hessian: best over ``orders``.

    Parameters
    ----------
    pattern : scipy.sparse matrix or array, or array_like
    method : {"star", "acyclic"}
        Direct recovery (``"star"``) or substitution (``"acyclic"``, fewer colors).
    orders : sequence of str

    Returns
    -------
    Coloring
    """
    if method == "star":
        return best_star_coloring(pattern, orders)
    if method == "acyclic":
        return best_acyclic_coloring(pattern, orders)
    raise ValueError(f"unknown Hessian coloring method {method!r}; use 'star' or 'acyclic'")
