"""Seed matrices and recovery of sparse Jacobians and Hessians from products."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import adsim.coloring as coloring


def random_matrix(draw_seed, m, n, density, dense_line=False):
    """Random sparse matrix, optionally with a dense first row and column."""
    rng = np.random.default_rng(draw_seed)
    matrix = sp.random_array((m, n), density=density, rng=rng, format="lil")
    if dense_line:
        matrix[0, :] = rng.standard_normal(n)
        matrix[:, 0] = rng.standard_normal(m)
    return sp.csr_array(matrix)


def random_symmetric(draw_seed, n, density, diagonal=True):
    rng = np.random.default_rng(draw_seed)
    half = sp.random_array((n, n), density=density, rng=rng, format="csr")
    matrix = half + half.T
    if diagonal:
        matrix = matrix + sp.diags_array(rng.standard_normal(n))
    return sp.csr_array(matrix)


def assert_recovered(recovered, matrix, pattern=None):
    """Same values as the dense matrix, on the canonical structure of the pattern."""
    pattern = matrix if pattern is None else pattern
    reference = sp.csr_array(pattern, copy=True)
    reference.sum_duplicates()
    assert isinstance(recovered, sp.csr_array)
    assert recovered.has_sorted_indices
    np.testing.assert_array_equal(recovered.indptr, reference.indptr)
    np.testing.assert_array_equal(recovered.indices, reference.indices)
    if reference.nnz == 0:
        return
    rows = np.repeat(np.arange(reference.shape[0]), np.diff(reference.indptr))
    expected = np.asarray(sp.csr_array(matrix)[rows, reference.indices]).ravel()
    np.testing.assert_allclose(recovered.data, expected, rtol=1e-12, atol=1e-12)


def jacobian_products(result, dense):
    """What the sweeps would return for a Jacobian coloring result."""
    if result.kind == "column":
        return (dense @ result.seed(),)
    if result.kind == "row":
        return (result.seed().T @ dense,)
    return dense @ result.column_seed(), result.row_seed().T @ dense


# ----------------------------------------------------------------- seeds
def test_seed_matrix_dense_and_sparse():
    seed_dense = coloring.seed_matrix([0, 2, 1, 0, -1])
    np.testing.assert_array_equal(seed_dense, [[1, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0],
                                               [0, 0, 0]])
    assert seed_dense.dtype == np.float64
    seed_sparse = coloring.seed_matrix([0, 2, 1, 0, -1], 4, sparse=True)
    assert seed_sparse.shape == (5, 4)
    np.testing.assert_array_equal(seed_sparse.toarray()[:, :3], seed_dense)
    with pytest.raises(ValueError, match="does not fit"):
        coloring.seed_matrix([0, 3], 2)


def test_result_objects_give_their_seeds():
    pattern = random_matrix(1, 10, 12, 0.3)
    result = coloring.column_coloring(pattern)
    assert result.seed().shape == (12, result.ncolors)
    both = coloring.best_bicoloring(random_matrix(2, 10, 12, 0.2, dense_line=True))
    assert both.row_seed().shape == (10, both.n_row_colors)
    assert both.column_seed(sparse=True).shape == (12, both.n_column_colors)


# ------------------------------------------------------------- Jacobians
jacobians = st.builds(random_matrix, st.integers(0, 2**32 - 1), st.integers(1, 30),
                      st.integers(1, 30), st.floats(0.02, 0.5), st.booleans())


@pytest.mark.slow
@seed(20240611)
@settings(max_examples=50, deadline=None)
@given(jacobians)
def test_jacobian_recovery_matches_dense(matrix):
    dense = matrix.toarray()
    results = [coloring.column_coloring(matrix), coloring.row_coloring(matrix, "smallest_last"),
               coloring.jacobian_coloring(matrix), coloring.bicoloring(matrix),
               coloring.bicoloring(matrix, "dsatur", method="star"),
               coloring.best_bicoloring(matrix, ("largest_first", "natural"))]
    for result in results:
        recovered = coloring.recover(matrix, result, *jacobian_products(result, dense))
        assert_recovered(recovered, matrix)


def test_recovery_objects_are_reusable():
    pattern = random_matrix(7, 40, 30, 0.1)
    result = coloring.column_coloring(pattern)
    recovery = coloring.recovery_for(pattern, result)
    rng = np.random.default_rng(8)
    for _ in range(3):
        values = pattern.copy()
        values.data = rng.standard_normal(values.nnz)
        assert_recovered(recovery(values @ result.seed(sparse=True)), values, pattern)


def test_pattern_entries_that_are_numerically_zero_stay_stored():
    pattern = random_matrix(3, 12, 12, 0.3)
    values = pattern.copy()
    values.data[::2] = 0.0
    result = coloring.row_coloring(pattern)
    recovered = coloring.recover(pattern, result, result.seed().T @ values.toarray())
    assert recovered.nnz == pattern.nnz
    assert_recovered(recovered, values, pattern)


def test_recovery_rejects_bad_products_and_colorings():
    pattern = random_matrix(4, 8, 6, 0.4)
    result = coloring.column_coloring(pattern)
    with pytest.raises(ValueError, match="shape"):
        coloring.recover(pattern, result, np.zeros((7, result.ncolors)))
    with pytest.raises(ValueError, match="no color"):
        coloring.ColumnRecovery(pattern, np.full(6, -1))
    arrow = random_matrix(5, 6, 6, 0.0, dense_line=True)
    with pytest.raises(ValueError, match="cannot be recovered"):
        coloring.BidirectionalRecovery(arrow, np.full(6, -1), np.zeros(6, dtype=int))


def test_bidirectional_recovery_of_an_arrowhead():
    rng = np.random.default_rng(9)
    matrix = sp.lil_array((50, 40))
    matrix[0, :] = rng.standard_normal(40)
    matrix[:, 0] = rng.standard_normal(50)
    matrix.setdiag(rng.standard_normal(40))
    matrix = sp.csr_array(matrix)
    result = coloring.best_bicoloring(matrix)
    assert result.ncolors <= 3
    forward = matrix @ result.column_seed(sparse=True)
    reverse = result.row_seed(sparse=True).T @ matrix
    assert_recovered(coloring.recover(matrix, result, forward, reverse), matrix)


# -------------------------------------------------------------- Hessians
@pytest.mark.slow
@seed(20240612)
@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 35), st.floats(0.02, 0.5), st.booleans())
def test_hessian_recovery_matches_dense(draw_seed, n, density, diagonal):
    matrix = random_symmetric(draw_seed, n, density, diagonal)
    dense = matrix.toarray()
    upper = sp.triu(matrix, format="csr")
    for result in (coloring.star_coloring(matrix), coloring.acyclic_coloring(matrix),
                   coloring.best_star_coloring(matrix, ("smallest_last", "dsatur")),
                   coloring.star_coloring(matrix, "natural", postprocess=False),
                   coloring.best_acyclic_coloring(matrix)):
        compressed = dense @ result.seed()
        assert_recovered(coloring.recover(matrix, result, compressed), matrix)
        assert_recovered(coloring.recover(upper, result, compressed), matrix, upper)


def test_acyclic_recovery_by_substitution_on_a_grid():
    side = 25
    grid = sp.kron(sp.eye_array(side), sp.diags_array([np.ones(side - 1)] * 2, offsets=[-1, 1]))
    pattern = sp.csr_array(grid + grid.T + sp.eye_array(side * side))
    rng = np.random.default_rng(10)
    values = pattern.copy()
    values.data = rng.standard_normal(values.nnz)
    values = sp.csr_array(values + values.T)
    star = coloring.best_star_coloring(values)
    acyclic = coloring.best_acyclic_coloring(values)
    assert acyclic.ncolors < star.ncolors or acyclic.ncolors == 2
    recovery = coloring.AcyclicRecovery(values, acyclic.colors)
    assert_recovered(recovery(values @ acyclic.seed(sparse=True)), values)
    compressed = values @ acyclic.seed()
    complex_result = recovery(compressed + 2j * compressed)
    np.testing.assert_allclose(complex_result.toarray(), (1 + 2j) * values.toarray(),
                               rtol=1e-12, atol=1e-12)


def test_symmetric_recovery_rejects_invalid_colorings():
    path = sp.csr_array(sp.diags_array([np.ones(3)] * 2, offsets=[-1, 1]))
    with pytest.raises(ValueError, match="cannot be recovered"):
        coloring.StarRecovery(path, np.array([0, 1, 0, 1]))
    cycle = path.tolil()
    cycle[0, 3] = cycle[3, 0] = 1
    with pytest.raises(ValueError, match="not acyclic"):
        coloring.AcyclicRecovery(cycle, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="diagonal entry needs"):
        coloring.StarRecovery(sp.eye_array(2), np.array([0, -1]))


def test_recovery_at_scale_is_fast_enough():
    side = 200
    line = sp.diags_array([np.ones(side - 1), np.ones(side), np.ones(side - 1)],
                          offsets=[-1, 0, 1])
    matrix = sp.csr_array(sp.kron(sp.eye_array(side), line) + sp.kron(line, sp.eye_array(side)))
    matrix.data = np.random.default_rng(12).standard_normal(matrix.nnz)
    result = coloring.jacobian_coloring(matrix)
    assert result.ncolors == 5
    recovered = coloring.recover(matrix, result, matrix @ result.seed(sparse=True))
    assert_recovered(recovered, matrix)
