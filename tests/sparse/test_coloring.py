"""Colorings of sparsity patterns: known color counts, validity, the checker."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import adsim.coloring as coloring
from adsim.sparse.coloring import compact


# ------------------------------------------------------------ standard patterns
def tridiagonal(n):
    return sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1],
                          format="csr")


def stencil_2d(nx, ny, nine_point=False):
    """Pattern of a 5-point (or 9-point) stencil on an nx x ny grid."""
    if nine_point:
        return sp.csr_array(sp.kron(tridiagonal(ny), tridiagonal(nx)))
    return sp.csr_array(sp.kron(sp.eye_array(ny), tridiagonal(nx))
                        + sp.kron(tridiagonal(ny), sp.eye_array(nx)))


def stencil_3d(nx, ny, nz):
    """Pattern of a 7-point stencil on an nx x ny x nz grid."""
    ex, ey, ez = sp.eye_array(nx), sp.eye_array(ny), sp.eye_array(nz)
    return sp.csr_array(sp.kron(sp.kron(ez, ey), tridiagonal(nx))
                        + sp.kron(sp.kron(ez, tridiagonal(ny)), ex)
                        + sp.kron(sp.kron(tridiagonal(nz), ey), ex))


def block_tridiagonal(nblocks, b):
    return sp.csr_array(sp.kron(tridiagonal(nblocks), np.ones((b, b))))


def arrowhead(m, n=None):
    """Dense first row and column plus the diagonal."""
    n = m if n is None else n
    dense = np.zeros((m, n))
    dense[0, :] = 1
    dense[:, 0] = 1
    dense[np.arange(min(m, n)), np.arange(min(m, n))] = 1
    return sp.csr_array(dense)


STANDARD = [
    ("tridiagonal", tridiagonal(50), 3),
    ("5-point 2-D", stencil_2d(20, 15), 5),
    ("9-point 2-D", stencil_2d(20, 15, nine_point=True), 9),
    ("7-point 3-D", stencil_3d(8, 7, 6), 7),
    ("block tridiagonal b=2", block_tridiagonal(10, 2), 6),
    ("block tridiagonal b=3", block_tridiagonal(10, 3), 9),
    ("block tridiagonal b=5", block_tridiagonal(8, 5), 15),
]


def is_compact(result):
    used = result.colors[result.colors >= 0]
    return set(used.tolist()) == set(range(result.ncolors))


@pytest.mark.parametrize("name, pattern, expected", STANDARD, ids=[s[0] for s in STANDARD])
def test_best_colorings_reach_known_counts(name, pattern, expected):
    for result in (coloring.best_column_coloring(pattern), coloring.best_row_coloring(pattern),
                   coloring.jacobian_coloring(pattern)):
        assert result.ncolors == expected
        assert coloring.check(pattern, result)
        assert is_compact(result)


@pytest.mark.parametrize("name, pattern, expected", STANDARD, ids=[s[0] for s in STANDARD])
def test_every_ordering_gives_a_valid_coloring(name, pattern, expected):
    for order in coloring.ORDERINGS:
        for result in (coloring.column_coloring(pattern, order),
                       coloring.row_coloring(pattern, order)):
            assert result.ordering == order
            assert result.ncolors >= expected
            assert coloring.check(pattern, result)
            assert is_compact(result)


def test_natural_order_is_optimal_on_banded_patterns():
    assert coloring.column_coloring(tridiagonal(40), "natural").ncolors == 3
    assert coloring.column_coloring(block_tridiagonal(6, 4), "natural").ncolors == 12


def test_search_improves_on_greedy_for_the_3d_stencil():
    pattern = stencil_3d(10, 10, 10)
    greedy = coloring.best_column_coloring(pattern, search=False)
    searched = coloring.best_column_coloring(pattern)
    assert greedy.ncolors > 7
    assert searched.ncolors == 7 and searched.ordering == "dsatur_backtracking"
    assert coloring.check(pattern, searched)


def test_row_coloring_is_column_coloring_of_the_transpose():
    pattern = sp.random_array((30, 20), density=0.15, rng=np.random.default_rng(3))
    for order in coloring.ORDERINGS:
        rows = coloring.row_coloring(pattern, order)
        columns = coloring.column_coloring(pattern.T, order)
        np.testing.assert_array_equal(rows.colors, columns.colors)


def test_any_input_format_gives_the_same_coloring():
    pattern = stencil_2d(6, 5)
    reference = coloring.column_coloring(pattern).colors
    dense = pattern.toarray()
    duplicated = sp.coo_array((np.ones(2 * pattern.nnz), (np.tile(pattern.tocoo().row, 2),
                                                          np.tile(pattern.tocoo().col, 2))),
                              shape=pattern.shape)
    for variant in (dense, sp.csc_array(pattern), sp.lil_matrix(pattern), duplicated,
                    sp.coo_matrix(pattern)):
        np.testing.assert_array_equal(coloring.column_coloring(variant).colors, reference)


def test_explicit_zeros_count_as_structure():
    pattern = sp.csr_array((np.zeros(3), np.array([0, 1, 2]), np.array([0, 3])), shape=(1, 3))
    assert coloring.column_coloring(pattern).ncolors == 3


def test_colorings_are_deterministic():
    pattern = sp.random_array((60, 60), density=0.08, rng=np.random.default_rng(5))
    for order in coloring.ORDERINGS:
        first = coloring.column_coloring(pattern, order).colors
        np.testing.assert_array_equal(first, coloring.column_coloring(pattern, order).colors)


def test_explicit_permutation_as_order():
    pattern = tridiagonal(6)
    result = coloring.column_coloring(pattern, np.arange(6)[::-1])
    assert result.ordering == "given"
    np.testing.assert_array_equal(result.colors, [2, 1, 0, 2, 1, 0])
    with pytest.raises(ValueError, match="permutation"):
        coloring.column_coloring(pattern, [0, 1, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="unknown ordering"):
        coloring.column_coloring(pattern, "random")


def test_empty_and_degenerate_patterns():
    empty = sp.csr_array((4, 3))
    assert coloring.check(empty, coloring.column_coloring(empty))
    assert coloring.best_bicoloring(empty).ncolors == 0
    single = sp.csr_array(np.ones((1, 1)))
    assert coloring.best_star_coloring(single).ncolors == 1
    assert coloring.acyclic_coloring(single).ncolors == 1


# ------------------------------------------------------------- bicoloring
@pytest.mark.parametrize("shape", [(12, 12), (40, 40), (30, 17), (9, 25)])
def test_arrowhead_needs_three_colors_with_bicoloring(shape):
    pattern = arrowhead(*shape)
    assert coloring.best_column_coloring(pattern).ncolors == shape[1]
    assert coloring.best_row_coloring(pattern).ncolors == shape[0]
    for result in (coloring.bicoloring(pattern), coloring.best_bicoloring(pattern),
                   coloring.jacobian_coloring(pattern, "bidirectional")):
        assert result.ncolors <= 3
        assert coloring.check(pattern, result)
        assert np.count_nonzero(result.row_colors == coloring.NEUTRAL) >= shape[0] - 2


def test_bicoloring_is_never_worse_than_one_sided():
    pattern = stencil_2d(12, 9)
    assert coloring.best_bicoloring(pattern).ncolors == 5


def test_bicoloring_methods_are_valid():
    rng = np.random.default_rng(11)
    pattern = sp.random_array((25, 35), density=0.1, rng=rng).tolil()
    pattern[3, :] = 1
    pattern[:, 7] = 1
    for method in ("star", "split", "auto"):
        for order in coloring.ORDERINGS:
            result = coloring.bicoloring(pattern, order, method=method)
            assert coloring.check(pattern, result)
    with pytest.raises(ValueError, match="method"):
        coloring.bicoloring(pattern, method="greedy")


# ------------------------------------------------------ star and acyclic
def test_star_coloring_of_5_point_hessian():
    pattern = stencil_2d(30, 30)
    best = coloring.best_star_coloring(pattern)
    assert best.ncolors <= 6
    assert coloring.check(pattern, best)
    for order in coloring.ORDERINGS:
        star = coloring.star_coloring(pattern, order)
        acyclic = coloring.acyclic_coloring(pattern, order)
        assert coloring.check(pattern, star) and coloring.check(pattern, acyclic)
    assert coloring.best_acyclic_coloring(pattern).ncolors <= best.ncolors


@pytest.mark.parametrize("pattern, star, acyclic", [
    (tridiagonal(20), 3, 2),
    (arrowhead(15), 2, 2),
    (sp.eye_array(5, format="csr"), 1, 1),
])
def test_symmetric_color_counts(pattern, star, acyclic):
    assert coloring.best_star_coloring(pattern).ncolors == star
    assert coloring.best_acyclic_coloring(pattern).ncolors == acyclic
    assert coloring.hessian_coloring(pattern, "acyclic").ncolors == acyclic


def test_star_postprocessing_neutralizes_spokes_without_diagonal():
    hub_and_spokes = arrowhead(8)
    hub_and_spokes.setdiag(0)
    hub_and_spokes.eliminate_zeros()
    plain = coloring.star_coloring(hub_and_spokes, postprocess=False)
    processed = coloring.star_coloring(hub_and_spokes)
    assert plain.ncolors == 2
    assert processed.ncolors == 1
    assert processed.colors[0] == 0 and np.all(processed.colors[1:] == coloring.NEUTRAL)
    assert coloring.check(hub_and_spokes, processed)


def test_symmetric_coloring_rejects_rectangular_patterns():
    with pytest.raises(ValueError, match="square"):
        coloring.star_coloring(sp.csr_array((3, 4)))


# ----------------------------------------------------------------- checker
def test_check_names_columns_sharing_a_row():
    pattern = tridiagonal(5)
    with pytest.raises(ValueError, match=r"columns 0 and 1 share color 0 .* row 0"):
        coloring.check(pattern, np.array([0, 0, 1, 2, 0]), kind="column")
    with pytest.raises(ValueError, match=r"rows 3 and 4 share color 0 .* column 3"):
        coloring.check(pattern, np.array([0, 1, 2, 0, 0]), kind="row")
    with pytest.raises(ValueError, match="no color"):
        coloring.check(pattern, np.array([0, 1, 2, -1, 1]), kind="column")
    with pytest.raises(ValueError, match="shape"):
        coloring.check(pattern, np.array([0, 1, 2]), kind="column")
    with pytest.raises(ValueError, match="kind"):
        coloring.check(pattern, np.array([0, 1, 2, 0, 1]))


def path_graph(n):
    adjacency = tridiagonal(n)
    adjacency.setdiag(0)
    adjacency.eliminate_zeros()
    return adjacency


def test_check_rejects_two_colored_paths_for_star():
    pattern = path_graph(4)
    assert coloring.check(pattern, np.array([0, 1, 0, 1]), kind="acyclic")
    with pytest.raises(ValueError, match=r"not a star coloring: entry \(1, 2\)"):
        coloring.check(pattern, np.array([0, 1, 0, 1]), kind="star")
    with pytest.raises(ValueError, match="adjacent and share color"):
        coloring.check(pattern, np.array([0, 0, 1, 2]), kind="star")
    with pytest.raises(ValueError, match="diagonal entry but no color"):
        coloring.check(tridiagonal(3), np.array([0, 1, -1]), kind="star")


def test_check_rejects_two_colored_cycles_for_acyclic():
    cycle = path_graph(4).tolil()
    cycle[0, 3] = cycle[3, 0] = 1
    with pytest.raises(ValueError, match="two-colored cycle"):
        coloring.check(cycle, np.array([0, 1, 0, 1]), kind="acyclic")
    assert coloring.check(cycle, np.array([0, 1, 0, 2]), kind="acyclic")
    with pytest.raises(ValueError, match="entries but no color"):
        coloring.check(cycle, np.array([0, 1, 0, -1]), kind="acyclic")


def test_check_rejects_bad_bicolorings():
    pattern = arrowhead(6)
    good = coloring.best_bicoloring(pattern)
    assert coloring.check(pattern, (good.row_colors, good.column_colors), kind="bicoloring")
    rows = np.full(6, coloring.NEUTRAL)
    with pytest.raises(ValueError, match=r"not a star bicoloring: entry \(0, 1\)"):
        coloring.check(pattern, (rows, np.array([0, 1, 1, 1, 1, 1])), kind="bicoloring")
    with pytest.raises(ValueError, match="not a star bicoloring"):
        coloring.check(pattern, (rows, np.full(6, coloring.NEUTRAL)), kind="bicoloring")


def test_compact_renumbers_in_order():
    colors, ncolors = compact(np.array([4, -1, 2, 4, 9]))
    np.testing.assert_array_equal(colors, [1, -1, 0, 1, 2])
    assert ncolors == 3


# ---------------------------------------------------------- property tests
def random_pattern(draw_seed, m, n, density):
    rng = np.random.default_rng(draw_seed)
    return sp.random_array((m, n), density=density, rng=rng, format="csr")


patterns = st.builds(random_pattern, st.integers(0, 2**32 - 1), st.integers(1, 25),
                     st.integers(1, 25), st.floats(0.02, 0.6))


@pytest.mark.slow
@seed(20240601)
@settings(max_examples=40, deadline=None)
@given(patterns)
def test_random_jacobian_colorings_are_valid(pattern):
    for order in coloring.ORDERINGS:
        for result in (coloring.column_coloring(pattern, order),
                       coloring.row_coloring(pattern, order),
                       coloring.bicoloring(pattern, order)):
            assert coloring.check(pattern, result)
    best = coloring.best_bicoloring(pattern)
    assert coloring.check(pattern, best)
    assert best.ncolors <= min(coloring.best_column_coloring(pattern).ncolors,
                               coloring.best_row_coloring(pattern).ncolors)


@pytest.mark.slow
@seed(20240602)
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.floats(0.02, 0.5))
def test_random_symmetric_colorings_are_valid(draw_seed, n, density):
    half = random_pattern(draw_seed, n, n, density)
    pattern = half + half.T
    for order in coloring.ORDERINGS:
        star = coloring.star_coloring(pattern, order)
        acyclic = coloring.acyclic_coloring(pattern, order)
        assert coloring.check(pattern, star) and coloring.check(pattern, acyclic)
        assert coloring.check(pattern, star.colors, kind="star")
        assert is_compact(star) and is_compact(acyclic)
        unprocessed = coloring.star_coloring(pattern, order, postprocess=False)
        assert coloring.check(pattern, unprocessed.colors, kind="acyclic")
        assert star.ncolors <= unprocessed.ncolors
