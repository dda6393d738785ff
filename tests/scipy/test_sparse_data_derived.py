"""``.data`` of a sparse matrix of active values made from one whose stored
order adsim follows (``A.data *= p``, a constructor's arrays): copies,
conversions between coo, csr and csc, transposes, ``astype`` and the
constructors of another matrix give SciPy's ``data`` in SciPy's order, and
writes into it (``B.data *= 2``, ``d = B.data; d[0] = v``) reach exactly the
matrices SciPy's writes reach (a transpose and a same-format conversion
share A's data, a copy or a conversion between csr and csc does not).

Each program is run twice: on plain numbers (SciPy's own matrices, the
oracle) and recorded; the values, written positions included, are compared
exactly, the derivatives in every sweep against differences
(fdcheck.check_tape), and the tape replayed at a second point."""
import numpy as np
import pytest
import scipy.sparse as sparse

import adsim
from fdcheck import assert_close, check_tape

N = 5
LAPLACIAN = sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(N, N), format="csr")
GRID = np.linspace(0.3, 1.4, N)
X = np.array([0.8, 0.3])

# column indices unsorted within rows: SciPy keeps this order in data
_INDPTR = np.array([0, 2, 4, 5, 7, 8])
_INDICES = np.array([3, 0, 1, 4, 2, 4, 0, 1])
# a coo matrix whose entries are in no particular order
_ROWS = np.array([4, 0, 2, 1, 3, 0, 2])
_COLS = np.array([1, 3, 2, 0, 4, 0, 3])

BASES = {
    "csr": lambda: LAPLACIAN.copy(),
    "csr unsorted": lambda: sparse.csr_matrix((np.arange(1.0, 9.0), _INDICES, _INDPTR),
                                              shape=(N, N)),
    "csc": lambda: LAPLACIAN.tocsc(),
    "coo shuffled": lambda: sparse.coo_matrix((np.arange(1.0, 8.0), (_ROWS, _COLS)),
                                              shape=(N, N)),
    "csr_array": lambda: sparse.csr_array(LAPLACIAN, copy=True),
}

DERIVED = {
    "copy": lambda A: A.copy(),
    "tocsr": lambda A: A.tocsr(),
    "tocsc": lambda A: A.tocsc(),
    "tocoo": lambda A: A.tocoo(),
    "T": lambda A: A.T,
    "transpose": lambda A: A.transpose(),
    "astype": lambda A: A.astype(np.float64),
    "asformat csc": lambda A: A.asformat("csc"),
    "csr_matrix(A)": lambda A: sparse.csr_matrix(A),
    "csc_matrix(A)": lambda A: sparse.csc_matrix(A),
    "tocsc().T.tocoo().tocsr()": lambda A: A.tocsc().T.tocoo().tocsr(),
    "T.copy().tocsc()": lambda A: A.T.copy().tocsc(),
}


def _program(base, derive):
    def f(p):
        A = BASES[base]()
        A.data *= p[0]
        A.data = A.data + p[1] * np.arange(A.nnz)       # values that tell positions apart
        B = DERIVED[derive](A)
        return np.concatenate([B.data * 1.0, B @ GRID, A @ GRID])
    return f


@pytest.mark.parametrize("derive", sorted(DERIVED))
@pytest.mark.parametrize("base", sorted(BASES))
def test_data_of_a_derived_matrix_is_scipys(base, derive):
    f = _program(base, derive)
    check_tape(f, [X], value_rtol=0.0)
    tape = adsim.record(f, X)
    x2 = X * 1.3 + 0.1
    assert_close(tape.forward(x2), f(x2), rtol=0.0, atol=0.0, what="replayed value")


WRITES = {
    # a transpose shares its data with A (SciPy's csr.T is a csc of the same arrays)
    "T data *= ": lambda A, p: A.T.data.__imul__(2.0 + p[1]),
    # the same format: tocsr() of a csr is the matrix itself
    "tocsr data *=": lambda A, p: A.tocsr().data.__imul__(p[1]),
    # a copy and a conversion to another format have data of their own
    "copy data *=": lambda A, p: A.copy().data.__imul__(p[1]),
    "tocsc data[0] =": lambda A, p: A.tocsc().data.__setitem__(0, p[1]),
    # the array read from A.data is A's: writes into it are A's
    "d = A.data; d *= ": lambda A, p: A.data.__imul__(3.0 * p[1]),
    "A.data[1:3] = ": lambda A, p: A.data.__setitem__(slice(1, 3), p[1] ** 2),
    # csr's tocoo shares A's data, csc's copies it (SciPy's defaults)
    "tocoo data[2] =": lambda A, p: A.tocoo().data.__setitem__(2, p[0] * p[1]),
    "asformat coo data[2] =": lambda A, p: A.asformat("coo").data.__setitem__(2, p[0] * p[1]),
}


@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("base", ["csr", "csr unsorted", "csc"])
def test_writes_into_data_reach_the_matrices_scipys_reach(base, write):
    def f(p):
        A = BASES[base]()
        A.data *= p[0]
        WRITES[write](A, p)
        return np.concatenate([A.data * 1.0, A @ GRID, A.T @ GRID])
    check_tape(f, [X], value_rtol=0.0)


def test_a_gradient_through_data_of_a_converted_matrix():
    """A model that scales a Laplacian, converts it for a solve and reads
    the diagonal weights back from .data."""
    from scipy.sparse.linalg import spsolve

    def f(p):
        L = LAPLACIAN.copy()
        L.data *= p[0]
        M = (sparse.eye(N, format="csr") - L).tocsc()
        u = spsolve(M, np.ones(N))
        K = L.T.tocsc()
        K.data = K.data * np.exp(p[1])
        return u @ GRID + np.sum(K.data ** 2) + np.sum(K @ u)
    check_tape(f, [X])
    assert_close(adsim.grad(f)(X), np.array(
        [(f(X + h) - f(X - h)) / 2e-6 for h in 1e-6 * np.eye(2)]), rtol=1e-7, atol=1e-9,
        what="gradient")


def test_data_where_adsim_does_not_follow_scipys_order_is_refused():
    """A coo matrix with duplicate entries, converted: SciPy sums them, so
    its data has fewer values; after arithmetic the stored order is SciPy's
    own business. Both refuse by name instead of giving values in another
    order."""
    def duplicates(p):
        A = sparse.coo_matrix((np.ones(3), ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
        A.data *= p[0]
        return A.tocsr().data
    with pytest.raises(adsim.UnsupportedAttribute, match="stored order"):
        adsim.jacobian(duplicates)(X)

    def summed(p):
        A = LAPLACIAN.copy()
        A.data *= p[0]
        return (A + A).data
    with pytest.raises(adsim.UnsupportedAttribute, match="stored order"):
        adsim.jacobian(summed)(X)
