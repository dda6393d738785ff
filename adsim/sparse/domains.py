"""Index domains as boolean CSR matrices: the sparse-matrix operations the
pattern sweeps of :mod:`adsim.sparse.pattern` apply per op (row selection,
row replacement, unions, left products), and the fixed-point iteration of a
loop step's pattern.

A slot's domains are a (slot size x number of independents) 0-1 CSR matrix;
every function here returns canonical CSR (sorted, no duplicates).
"""
import numpy as np
import scipy.sparse as sp

class Domains:
    """Index domains of the elements of one slot: a CSR structure (rows:
    elements, columns: independents) without values. Never modified once
    built, so slots may share one. Rows need not be sorted; no duplicates."""

    __slots__ = ("indptr", "indices", "nrows", "ncols")

    def __init__(self, indptr, indices, nrows, ncols):
        self.indptr = indptr
        self.indices = indices
        self.nrows = nrows
        self.ncols = ncols

    @property
    def nnz(self):
        return self.indices.shape[0]

    def row(self, i):
        return self.indices[self.indptr[i]:self.indptr[i + 1]]

    def scipy(self):
        """As a boolean ``scipy.sparse.csr_array`` (shares the index arrays)."""
        return sp.csr_array((np.ones(self.nnz, dtype=bool), self.indices, self.indptr),
                            shape=(self.nrows, self.ncols))

    @staticmethod
    def of(P):
        """From any scipy sparse matrix (structure only)."""
        P = sp.csr_array(P)
        end = int(P.indptr[-1])
        return Domains(P.indptr, P.indices[:end], P.shape[0], P.shape[1])

    @staticmethod
    def single(indices, ncols):
        """One row."""
        return Domains(np.array([0, indices.shape[0]], dtype=np.intp), indices, 1, ncols)


def empty(nrows, ncols):
    return Domains(np.zeros(nrows + 1, dtype=np.intp), np.zeros(0, dtype=np.intp), nrows, ncols)


def ragged_arange(start, count):
    """Concatenation of ``arange(start[i], start[i] + count[i])`` over i."""
    total = int(count.sum())
    if total == 0:
        return np.zeros(0, dtype=np.intp)
    ends = np.cumsum(count)
    return np.arange(total, dtype=np.intp) + np.repeat(start - (ends - count), count)


def indptr_from_counts(count):
    indptr = np.zeros(count.shape[0] + 1, dtype=np.intp)
    np.cumsum(count, out=indptr[1:])
    return indptr


def row_of_entries(P):
    return np.repeat(np.arange(P.nrows, dtype=np.intp), np.diff(P.indptr))


def take_rows(P, rows):
    """Rows ``rows`` (int array, repeats allowed) of ``P``."""
    rows = np.asarray(rows, dtype=np.intp)
    if P.nnz == 0:
        return empty(rows.shape[0], P.ncols)
    if rows.shape[0] == 1:
        return Domains.single(P.row(rows[0]), P.ncols)
    start = P.indptr[rows]
    count = P.indptr[rows + 1] - start
    return Domains(indptr_from_counts(count), P.indices[ragged_arange(start, count)], rows.shape[0],
                   P.ncols)


def keep_rows(P, keep):
    """``P`` with the rows where ``keep`` is False emptied."""
    if P.nnz == 0 or keep.all():
        return P
    count = np.where(keep, np.diff(P.indptr), 0)
    return Domains(indptr_from_counts(count), P.indices[keep[row_of_entries(P)]], P.nrows, P.ncols)


def union(A, B):
    """Row-wise union of two domains with the same rows."""
    if A is B or B.nnz == 0:
        return A
    if A.nnz == 0:
        return B
    if A.nrows == 1:
        return Domains.single(np.union1d(A.indices, B.indices), A.ncols)
    return Domains.of(A.scipy() + B.scipy())


def expand(P, n):
    """``P`` with ``n`` rows: itself, or its one row repeated (a broadcast scalar)."""
    if P.nrows == n:
        return P
    assert P.nrows == 1, "operands have the result's size or size one"
    if P.nnz == 0:
        return empty(n, P.ncols)
    return take_rows(P, np.zeros(n, dtype=np.intp))


def apply_left(P, rows, cols, nrows):
    """``M @ P`` for the 0-1 matrix ``M`` (nrows x P.nrows) with entries
    ``(rows, cols)``: row t of the result is the union of the rows of ``P``
    that ``M`` maps to it."""
    if P.nnz == 0:
        return empty(nrows, P.ncols)
    M = sp.csr_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)), shape=(nrows, P.nrows))
    return Domains.of(M @ P.scipy())


def stack(A, B):
    """Rows of ``A`` then rows of ``B``."""
    return Domains(np.concatenate([A.indptr, A.nnz + B.indptr[1:]]),
                   np.concatenate([A.indices, B.indices]), A.nrows + B.nrows, A.ncols)


def select_rows(mask, A, B):
    """Row ``i`` from ``A`` where ``mask[i]``, else from ``B``."""
    if B.nnz == 0 or mask.all():
        return keep_rows(A, mask)
    if A.nnz == 0 or not mask.any():
        return keep_rows(B, ~mask)
    n = mask.shape[0]
    return take_rows(stack(A, B), np.where(mask, np.arange(n), n + np.arange(n)))


def last_writes(rows):
    """Positions j of ``rows`` that are the last occurrence of their value."""
    _, first_reversed = np.unique(rows[::-1], return_index=True)
    return rows.shape[0] - 1 - first_reversed


def replace_rows(R, rows, V):
    """``R`` with rows ``rows[j]`` replaced by rows ``j`` of ``V``, the last
    write winning where an index repeats (the SCATTER rule)."""
    n = R.nrows
    last = last_writes(rows)
    if V.nnz == 0:
        keep = np.ones(n, dtype=bool)
        keep[rows] = False
        return keep_rows(R, keep)
    source = np.arange(n, dtype=np.intp)
    source[rows[last]] = n + last
    return take_rows(stack(R, V), source)


def with_rows(P, new):
    """``P`` with the rows given in the dict ``new`` (row -> indices) replaced."""
    rows = np.fromiter(new.keys(), dtype=np.intp, count=len(new))
    parts = list(new.values())
    order = np.argsort(rows)
    rows = rows[order]
    sizes = np.fromiter((parts[i].shape[0] for i in order), dtype=np.intp, count=len(parts))
    keep = np.ones(P.nrows, dtype=bool)
    keep[rows] = False
    count = np.where(keep, np.diff(P.indptr), 0)
    count[rows] = sizes
    indptr = indptr_from_counts(count)
    indices = np.empty(int(indptr[-1]), dtype=np.intp)
    kept_rows = np.flatnonzero(keep & (count > 0))
    indices[ragged_arange(indptr[kept_rows], count[kept_rows])] = \
        P.indices[keep[row_of_entries(P)]]
    if sizes.sum():
        indices[ragged_arange(indptr[rows], sizes)] = np.concatenate([parts[i] for i in order])
    return Domains(indptr, indices, P.nrows, P.ncols)


def canonical(P):
    """Boolean ``csr_array`` with sorted indices and no duplicates."""
    P = sp.csr_array(P.scipy() if isinstance(P, Domains) else P, dtype=bool, copy=True)
    P.sum_duplicates()
    P.sort_indices()
    P.eliminate_zeros()
    return P


def union_row(patterns, ncols):
    """One row: the union of every row of every pattern."""
    parts = [P.indices for P in patterns if P.nnz]
    if not parts:
        return empty(1, ncols)
    return Domains.single(np.unique(np.concatenate(parts)), ncols)


def iterate_pattern(step_state, step_args, state, args, n_steps):
    """Index domains of a loop state after ``n_steps`` steps.

    A helper for the ``pattern`` method of loop callbacks: if one step maps
    ``(z, a) -> z'`` with Jacobian patterns ``step_state`` (z' w.r.t. z) and
    ``step_args`` (z' w.r.t. a), the state's domains follow
    ``Z <- step_state Z  u  step_args A``. The map is the same every step, so
    the iteration stops at a fixed point (at most ``n_steps`` products).

    Parameters
    ----------
    step_state : scipy sparse (s x s)
    step_args : scipy sparse (s x p) or None
    state : scipy sparse (s x N)
        Domains of the initial state.
    args : scipy sparse (p x N) or None
        Domains of the loop arguments.
    n_steps : int

    Returns
    -------
    scipy.sparse.csr_array
        Boolean (s x N), sorted indices.
    """
    Z = canonical(state)
    Jz = canonical(step_state)
    source = None
    if step_args is not None and args is not None:
        source = canonical(step_args) @ canonical(args)
    for _ in range(int(n_steps)):
        nxt = Jz @ Z
        if source is not None:
            nxt = nxt + source
        nxt = canonical(nxt)
        if np.array_equal(nxt.indptr, Z.indptr) and np.array_equal(nxt.indices, Z.indices):
            break
        Z = nxt
    return Z
