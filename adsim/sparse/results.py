"""Sparse results built on a fixed CSR structure: a plan's Jacobians and
Hessians (one new ``csr_array`` per evaluation without SciPy's checks), and
the same cut into blocks, one per pair of pieces of the rows and columns
(the arrays of a container argument, adsim/sparse/arguments.py)."""
import numpy as np
import scipy.sparse as sp

__all__ = ["Blocks", "Structure", "on_pattern"]


class Structure:
    """The CSR structure results are built on (32-bit indices when they fit:
    less to copy per result), and a result made on it once by SciPy's
    checking constructor, whose state every later result copies: a new
    ``csr_array`` costs a few microseconds, not SciPy's checks over the
    index arrays (about 50 us at 5 * 10^4 nonzeros)."""

    def __init__(self, pattern):
        small = pattern.nnz < 2 ** 31 - 1 and max(pattern.shape) < 2 ** 31 - 1
        dtype = np.int32 if small else np.int64
        self.indices = pattern.indices.astype(dtype)
        self.indptr = pattern.indptr.astype(dtype)
        self.shape = pattern.shape
        self.template = sp.csr_array((np.zeros(self.indices.shape[0]), self.indices, self.indptr),
                                     shape=self.shape)
        self.template.has_sorted_indices = True
        self.template.has_canonical_format = True


def on_pattern(structure, data):
    """A new CSR array holding ``data`` on ``structure``, with its own copies
    of the index arrays (SciPy changes them in place, ``eliminate_zeros``)."""
    J = sp.csr_array.__new__(sp.csr_array)
    J.__dict__.update(structure.template.__dict__)
    J.data = data
    J.indices = structure.indices.copy()
    J.indptr = structure.indptr.copy()
    return J


class Blocks:
    """Results on the CSR structure ``pattern`` cut into blocks: rows at
    ``row_bounds``, columns at ``column_bounds`` (offsets, first 0 and last
    the size). Each block keeps the positions of its entries among the
    pattern's (row-major order is each block's CSR order) and its own
    structure, so cutting a result is one gather per block."""

    def __init__(self, pattern, row_bounds, column_bounds):
        assert pattern.has_sorted_indices, "results are built on canonical patterns"
        rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
        cols = pattern.indices
        self.shape = (len(row_bounds) - 1, len(column_bounds) - 1)
        self._blocks = []
        for r0, r1 in zip(row_bounds[:-1], row_bounds[1:]):
            for c0, c1 in zip(column_bounds[:-1], column_bounds[1:]):
                at = np.flatnonzero((rows >= r0) & (rows < r1) & (cols >= c0) & (cols < c1))
                block = sp.csr_array((np.ones(at.size), (rows[at] - r0, cols[at] - c0)),
                                     shape=(int(r1 - r0), int(c1 - c0)))
                self._blocks.append((at, Structure(block)))

    def __call__(self, data):
        """The blocks of the result holding ``data`` on the pattern, row by
        row of blocks: a list of lists of ``csr_array``."""
        out = [on_pattern(structure, data[at]) for at, structure in self._blocks]
        k = self.shape[1]
        return [out[i:i + k] for i in range(0, len(out), k)]
