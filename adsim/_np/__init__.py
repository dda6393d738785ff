"""NumPy semantics on active arrays, by topic; adsim/_numpy_api.py, above all
of them, dispatches NumPy's calls to them.

The modules form layers. Each imports, at module level, only modules of
lower layers (and the compiled core, errors, primitives); a call upwards
goes through NumPy's protocols, which the front end hands to
adsim/_numpy_api.py. Bottom to top:

1. layout, triangular -- results laid out in memory as NumPy's; triangular solves
2. core -- tape of operands, constants, recording ops, broadcasting, comparisons, gathers
3. integers, writes, stacks, complex -- guards and integer-valued results; writes
   into a root's storage; stacks of matrices; complex intermediates
4. recorded_arrays, decompositions, fft -- integer and boolean data (types and
   conversions); qr, svd, pinv, lstsq; numpy.fft
5. recorded_indexing, composed -- gathers and scatters at integer data; functions
   composed of others
6. recorded_data -- ufuncs and functions of integer and boolean data
7. elementwise, padding -- elementwise functions of several ops or a branch, where;
   np.pad's modes that compute their values
8. views -- views, indexing and in-place writes
9. conversions, joins, ordering, reductions, unique -- np.asarray and astype; joins and
   padding; sorts, searches, quantiles; sums, extrema, arg-extrema; np.unique
10. array_likes, draws, emath, index_tricks, linalg, mapped, numeric, products, special --
    lists and tuples of active values as arrays; numpy.random draws with active
    parameters; numpy.emath (real or complex results, as the values decide);
    np.r_ and np.c_; numpy.linalg; Python callables mapped over elements
    and slices; statistics and calculus; dot, outer, kron, trace; SciPy's special
    functions
10. sparse_products -- products with scipy.sparse matrices
10. ndenumerate -- np.ndenumerate of active arrays
11. complex_linalg, einsum, histograms, nanfunctions -- complex matrices as pairs of real
    ones, np.linalg.solve and inv with a complex operand; einsum and the products built on
    it; np.histogram; the NaN-skipping functions
12. eigen, linalg_composed, polynomials, poly1d, polynomial_series -- np.linalg.eig and
    eigvals of general matrices; linear algebra composed of the above; np.polyfit,
    np.roots; np.poly1d of a list of active values; numpy.polynomial's *val at active
    points
13. hermitian -- np.linalg.eigh and eigvalsh of complex Hermitian matrices
14. spectral_norms -- the matrix 2, -2 and nuclear norms of real and complex matrices
"""
