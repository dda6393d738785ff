"""Vertex orderings: each checked against its defining property on small graphs."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import adsim.coloring as coloring
from adsim.sparse.orderings import (ORDERINGS, degrees, graph_of, order_vertices,
                                    symmetric_structure)


def random_pattern(draw_seed, m, n, density):
    return sp.random_array((m, n), density=density, rng=np.random.default_rng(draw_seed),
                           format="csr")


def dense_graph(pattern, kind):
    """Boolean adjacency matrix of the graph a kind of coloring works on."""
    structure = (sp.csr_array(pattern).toarray() != 0).astype(int)
    if kind == "column":
        adjacency = structure.T @ structure > 0
    elif kind == "row":
        adjacency = structure @ structure.T > 0
    elif kind == "symmetric":
        adjacency = (structure + structure.T) > 0
    else:
        m, n = structure.shape
        adjacency = np.zeros((m + n, m + n), dtype=bool)
        adjacency[n:, :n] = structure > 0
        adjacency[:n, n:] = structure.T > 0
    np.fill_diagonal(adjacency, False)
    return adjacency


def pattern_for(kind, draw_seed, m, n, density):
    pattern = random_pattern(draw_seed, m, n, density)
    return pattern if kind in ("column", "row", "bipartite") else random_pattern(
        draw_seed, m, m, density)


def greedy_colors(adjacency, order):
    colors = np.full(adjacency.shape[0], -1)
    for v in order:
        taken = set(colors[adjacency[v]]) - {-1}
        colors[v] = min(set(range(len(taken) + 1)) - taken)
    return colors


def check_smallest_last(adjacency, order):
    for i in range(len(order)):
        sub = adjacency[np.ix_(order[:i + 1], order[:i + 1])]
        assert sub[i].sum() == sub.sum(axis=1).min()


def check_incidence_degree(adjacency, order):
    assert adjacency[order[0]].sum() == adjacency.sum(axis=1).max()
    for i in range(1, len(order)):
        ordered = adjacency[:, order[:i]].sum(axis=1)
        remaining = order[i:]
        assert ordered[order[i]] == ordered[remaining].max()


def check_dynamic_largest_first(adjacency, order):
    for i in range(len(order)):
        remaining = order[i:]
        sub = adjacency[np.ix_(remaining, remaining)].sum(axis=1)
        assert sub[0] == sub.max()


def check_dsatur(adjacency, order):
    colors = np.full(adjacency.shape[0], -1)
    for v in order:
        uncolored = np.flatnonzero(colors < 0)
        saturation = [len(set(colors[adjacency[u]]) - {-1}) for u in uncolored]
        assert len(set(colors[adjacency[v]]) - {-1}) == max(saturation)
        taken = set(colors[adjacency[v]]) - {-1}
        colors[v] = min(set(range(len(taken) + 1)) - taken)


def check_largest_first(adjacency, order):
    assert np.all(np.diff(adjacency.sum(axis=1)[order]) <= 0)


PROPERTIES = {
    "natural": lambda adjacency, order: np.testing.assert_array_equal(
        order, np.arange(adjacency.shape[0])),
    "largest_first": check_largest_first,
    "smallest_last": check_smallest_last,
    "incidence_degree": check_incidence_degree,
    "dynamic_largest_first": check_dynamic_largest_first,
    "dsatur": check_dsatur,
}


@pytest.mark.slow
@seed(20240621)
@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["column", "row", "symmetric", "bipartite"]),
       st.integers(0, 2**32 - 1), st.integers(1, 18), st.integers(1, 18), st.floats(0.05, 0.5))
def test_orderings_have_their_defining_property(kind, draw_seed, m, n, density):
    pattern = pattern_for(kind, draw_seed, m, n, density)
    adjacency = dense_graph(pattern, kind)
    graph = graph_of(pattern, kind)
    np.testing.assert_array_equal(degrees(graph), adjacency.sum(axis=1))
    for method in ORDERINGS:
        order = order_vertices(graph, method)
        assert order.dtype == np.intp
        np.testing.assert_array_equal(np.sort(order), np.arange(adjacency.shape[0]))
        PROPERTIES[method](adjacency, order)


def test_greedy_in_an_ordering_matches_a_plain_greedy():
    pattern = random_pattern(4, 30, 25, 0.12)
    adjacency = dense_graph(pattern, "column")
    for method in ORDERINGS:
        order = coloring.ordering(pattern, method, "column")
        result = coloring.column_coloring(pattern, method)
        np.testing.assert_array_equal(result.colors, greedy_colors(adjacency, order))


def test_dsatur_colors_bipartite_graphs_with_two_colors():
    cycle = sp.diags_array([np.ones(9), np.ones(9)], offsets=[-1, 1], shape=(10, 10)).tolil()
    cycle[0, 9] = cycle[9, 0] = 1
    adjacency = dense_graph(cycle, "symmetric")
    order = coloring.ordering(cycle, "dsatur", "symmetric")
    assert greedy_colors(adjacency, order).max() == 1


def test_ordering_kinds_and_errors():
    pattern = random_pattern(5, 6, 9, 0.3)
    assert coloring.ordering(pattern, "natural", "column").shape == (9,)
    assert coloring.ordering(pattern, "natural", "row").shape == (6,)
    assert coloring.ordering(pattern, "natural", "bipartite").shape == (15,)
    with pytest.raises(ValueError, match="graph kind"):
        coloring.ordering(pattern, "natural", "diagonal")
    with pytest.raises(ValueError, match="unknown ordering"):
        coloring.ordering(pattern, "random")
    with pytest.raises(ValueError, match="square"):
        coloring.ordering(pattern, "natural", "symmetric")


def test_symmetric_structure_merges_triangles_and_drops_the_diagonal():
    pattern = sp.csr_array(np.array([[1, 1, 0], [0, 0, 1], [0, 0, 1]]))
    adjacency, diagonal = symmetric_structure(pattern)
    np.testing.assert_array_equal(adjacency.toarray(), [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(diagonal, [True, False, True])


def test_orderings_scale_to_large_stencils():
    side = 100
    line = sp.diags_array([np.ones(side - 1), np.ones(side), np.ones(side - 1)],
                          offsets=[-1, 0, 1])
    pattern = sp.csr_array(sp.kron(sp.eye_array(side), line) + sp.kron(line, sp.eye_array(side)))
    for method in ORDERINGS:
        for kind in ("column", "symmetric"):
            order = coloring.ordering(pattern, method, kind)
            assert np.array_equal(np.sort(order), np.arange(side * side))
