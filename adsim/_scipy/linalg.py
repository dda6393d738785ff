"""``scipy.linalg`` on single active matrices: solve_triangular, solve (every
``assume_a``), solve_banded, solveh_banded, cho_factor/cho_solve, lu_factor/lu_solve, lu,
norm, and the factorizations NumPy also has (cholesky, inv, pinv, lstsq, det,
svd, svdvals, qr, eigh, eigvalsh; eigh and eigvalsh also of a pencil (a, b):
generalized_eigh.py), called unchanged (see hooks.py); the
structured matrices (structured.py), solve_sylvester and the matrix
functions expm, logm, sqrtm, ... (matfuncs.py) join them in ``HOOKS``.

Each is written with adsim's recorded operations and primitives, and reads
exactly the entries SciPy reads (a triangle, a band), so its derivative is
zero in the others. LU after M. Giles, "An extended collection of matrix
derivative results for forward and reverse mode AD", 2008.
"""
import numpy as np
import scipy.linalg

from .._np import decompositions, eigen, linalg, spectral_norms, triangular
from .._np.complex import ComplexActive
from .._np.core import compare
from .._opcodes import CompareKind
from .._active import Active
from ..errors import UnsupportedOperation
from ..primitives import BuiltinFamily, primitive
from . import generalized_eigh, matfuncs, matrix_equations, structured
from .arrays import array


def _matrix(name, a, square=True):
    shape = np.shape(a)
    if len(shape) != 2 or (square and shape[0] != shape[1]):
        raise UnsupportedOperation(f"adsim: scipy.linalg.{name} of shape {shape}: only single "
                                   f"{'square ' if square else ''}matrices are recorded (loop "
                                   f"over a batch)")


def _rhs(name, b):
    if np.ndim(b) not in (1, 2):
        raise UnsupportedOperation(f"adsim: scipy.linalg.{name} with b of shape {np.shape(b)}: "
                                   f"pass a vector or a matrix (loop over a batch)")


def _transposed(trans):
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"adsim: unknown trans={trans!r}; use 0, 1, 2, 'N', 'T' or 'C'")
    return trans in (1, 2, "T", "C")           # 'C' is 'T' for real matrices


def _unit_triangle(a, lower):
    """The triangle of ``a`` with ones on the diagonal (a unit triangular
    matrix as LAPACK reads it)."""
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    return strict + np.eye(np.shape(a)[0])


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    a, b = array(a, "scipy.linalg.solve_triangular"), array(b, "scipy.linalg.solve_triangular")
    _matrix("solve_triangular", a)
    _rhs("solve_triangular", b)
    T = _unit_triangle(a, lower) if unit_diagonal else (np.tril(a) if lower else np.triu(a))
    return triangular.solve(T, b, lower, _transposed(trans))


_STRUCTURES = {None: "general", "general": "general", "gen": "general", "banded": "general",
               "diagonal": "diagonal", "tridiagonal": "tridiagonal",
               "upper triangular": "upper", "lower triangular": "lower",
               "pos": "symmetric", "positive definite": "symmetric", "sym": "symmetric",
               "symmetric": "symmetric", "her": "symmetric", "hermitian": "symmetric"}


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """a^-1 b for the entries of ``a`` SciPy reads under ``assume_a``
    (automatic structure detection, the default, reads all of them: the
    structure it finds is that of the values, so the solution is that of
    the whole matrix)."""
    a, b = array(a, "scipy.linalg.solve"), array(b, "scipy.linalg.solve")
    _matrix("solve", a)
    _rhs("solve", b)
    if assume_a not in _STRUCTURES:
        raise ValueError(f"{assume_a} is not a recognized matrix structure")
    structure = _STRUCTURES[assume_a]
    if structure in ("upper", "lower"):
        T = np.triu(a) if structure == "upper" else np.tril(a)
        return triangular.solve(T, b, structure == "lower", transposed)
    if structure == "diagonal":
        d = np.diagonal(a)
        return b / (d if np.ndim(b) == 1 else d[:, None])
    if structure == "tridiagonal":
        a = np.triu(np.tril(a, 1), -1)
    elif structure == "symmetric":
        a = np.tril(a) + np.tril(a, -1).T if lower else np.triu(a) + np.triu(a, 1).T
    return linalg.solve(a.T if transposed else a, b)


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """a^-1 b for the band matrix a[i, j] = ab[u + i - j, j] (|i - j| within
    the band): the band is gathered into a dense matrix and solved (O(n^3);
    the entries of ``ab`` outside the band are not read)."""
    name = "scipy.linalg.solve_banded"
    ab, b = array(ab, name), array(b, name)
    lower, upper = (int(k) for k in l_and_u)
    if np.ndim(ab) != 2 or np.shape(ab)[0] != lower + upper + 1:
        raise ValueError("invalid values for the number of lower and upper diagonals: "
                         f"l+u+1 ({lower + upper + 1}) does not equal ab.shape[0] "
                         f"({np.shape(ab)[0]})")
    _rhs("solve_banded", b)
    n = np.shape(ab)[1]
    if np.shape(b)[0] != n:
        raise ValueError("shapes of ab and b are not compatible.")
    i, j = np.indices((n, n))
    row = upper + i - j
    inside = (row >= 0) & (row <= lower + upper)
    padded = np.concatenate([np.reshape(ab, (-1,)), np.zeros(1)])     # the last entry is 0
    a = padded[np.where(inside, row * n + j, (lower + upper + 1) * n)]
    return linalg.solve(a, b)


def solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False,
                  check_finite=True):
    """a^-1 b for the symmetric positive definite band matrix stored in upper
    form, a[i, j] = ab[u + i - j, j] for i <= j, or in lower form, a[i, j] =
    ab[i - j, j] for i >= j (u = ab.shape[0] - 1): the stored triangle of the
    band is gathered into a dense matrix, mirrored, and solved by Cholesky,
    which refuses a matrix that is not positive definite as SciPy does
    (O(n^3); the corner entries of ``ab`` outside the band are not read)."""
    name = "scipy.linalg.solveh_banded"
    ab, b = array(ab, name), array(b, name)
    if np.ndim(ab) != 2:
        raise ValueError(f"adsim: {name} takes a 2-d band ab; got shape {np.shape(ab)}")
    _rhs("solveh_banded", b)
    u, n = np.shape(ab)
    u -= 1
    if np.shape(b)[0] != n:
        raise ValueError("shapes of ab and b are not compatible.")
    i, j = np.indices((n, n))
    offset = np.abs(i - j)
    # the stored entry of a[i, j]: ab[u - |i - j|, max(i, j)] (upper), ab[|i - j|, min(i, j)]
    at = (u - offset) * n + np.maximum(i, j) if not lower else offset * n + np.minimum(i, j)
    padded = np.concatenate([np.reshape(ab, (-1,)), np.zeros(1)])     # the last entry is 0
    a = padded[np.where(offset <= u, at, (u + 1) * n)]
    return cho_solve(cho_factor(a, lower=True), b)


# ---- Cholesky ---------------------------------------------------------------

def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """SciPy reads the upper triangle unless ``lower``, and returns that factor."""
    a = array(a, "scipy.linalg.cholesky")
    _matrix("cholesky", a)
    return linalg.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the factor in the triangle SciPy writes, ``a``'s own
    entries in the other (as LAPACK leaves them)."""
    a = array(a, "scipy.linalg.cho_factor")
    _matrix("cho_factor", a)
    factor = linalg.cholesky(a, upper=not lower)
    return factor + (np.triu(a, 1) if lower else np.tril(a, -1)), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with (L L^T) x = b, or (U^T U) x = b, from cho_factor's triangle."""
    c, lower = c_and_lower
    c, b = array(c, "scipy.linalg.cho_solve"), array(b, "scipy.linalg.cho_solve")
    _matrix("cho_solve", c)
    _rhs("cho_solve", b)
    T = np.tril(c) if lower else np.triu(c)
    return triangular.solve(T, triangular.solve(T, b, lower, not lower), lower, lower)


# ---- LU ---------------------------------------------------------------------

def _permutation(piv):
    """perm with A[perm] = L U from LAPACK's row interchanges (row i was
    swapped with row piv[i], in order)."""
    perm = np.arange(len(piv))
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _lu_primitive(perm):
    """Packed [lu, pivots] of P^T A = L U for pivots fixed at recording; the
    pivots, a plain output without derivative, are guarded by the caller.
    ``perm`` (a list of ints, as tape files save it) is checked to be a
    permutation."""
    n = len(perm) if isinstance(perm, (list, tuple)) else -1
    if n < 0 or not all(type(p) is int for p in perm) or sorted(perm) != list(range(n)):
        raise ValueError(f"the LU pivots {perm!r} are not a permutation")
    perm = np.array(perm, dtype=np.intp)
    back = np.argsort(perm)

    def value(a):
        lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
        return np.concatenate([lu.ravel(), piv.astype(float)])

    def factors(out):
        lu = np.reshape(out[:n * n], (n, n))
        return _unit_triangle(lu, True), np.triu(lu)

    def jvp(args, out, tangents):
        """F = L^-1 P^T dA U^-1, dL = L tril(F, -1), dU = triu(F) U."""
        L, U = factors(out)
        F = triangular.solve(U, triangular.solve(L, tangents[0][perm], True).T, False, True).T
        dlu = np.tril(L @ np.tril(F, -1), -1) + np.triu(F) @ U
        return np.concatenate([np.ravel(dlu), np.zeros(n)])

    def vjp(args, out, w):
        """P^T Abar = L^-T (tril(L^T Lbar, -1) + triu(Ubar U^T)) U^-T."""
        L, U = factors(out)
        wlu = np.reshape(w[:n * n], (n, n))
        G = np.tril(L.T @ np.tril(wlu, -1), -1) + np.triu(np.triu(wlu) @ U.T)
        Abar = triangular.solve(U, triangular.solve(L, G, True, True).T, False).T
        return (Abar[back],)
    return primitive(value, jvp=jvp, vjp=vjp, name="scipy.linalg.lu_factor")


_LU = BuiltinFamily("scipy.linalg.lu_factor", 1, _lu_primitive)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv) as SciPy returns them; the pivots are those of the recording,
    and a replay whose pivoting differs raises BranchChanged."""
    a = array(a, "scipy.linalg.lu_factor")
    _matrix("lu_factor", a)
    n = np.shape(a)[0]
    piv = scipy.linalg.lu_factor(_current(a), check_finite=False)[1]
    packed = _LU(perm=_permutation(piv).tolist())(a)
    compare(CompareKind.CMP_EQ, packed[n * n:], piv.astype(float))      # guard the pivots
    return np.reshape(packed[:n * n], (n, n)), piv


def _current(a):
    """The recorded value of ``a`` now (to choose pivots, which are guarded)."""
    return a.tape.slot_value(a.slot).reshape(a.shape) if isinstance(a, Active) else a


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with A x = b (A^T x = b with ``trans``), A[perm] = L U."""
    lu, piv = lu_and_piv
    lu, b = array(lu, "scipy.linalg.lu_solve"), array(b, "scipy.linalg.lu_solve")
    _matrix("lu_solve", lu)
    _rhs("lu_solve", b)
    if isinstance(piv, Active):
        raise UnsupportedOperation("adsim: scipy.linalg.lu_solve with active pivots; pass the "
                                   "pivots lu_factor returned")
    perm = _permutation(np.asarray(piv))
    L, U = _unit_triangle(lu, True), np.triu(lu)
    if not _transposed(trans):
        return triangular.solve(U, triangular.solve(L, b[perm], True), False)
    w = triangular.solve(L, triangular.solve(U, b, False, True), True, True)
    return w[np.argsort(perm)]


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """A = P L U (or (P L, U), or (p, L, U) with A = L[p] U) from lu_factor's
    rule: the pivots are those of the recording, guarded."""
    a = array(a, "scipy.linalg.lu")
    _matrix("lu", a)
    n = np.shape(a)[0]
    packed, piv = lu_factor(a)
    perm = _permutation(np.asarray(piv))
    L, U = _unit_triangle(packed, True), np.triu(packed)
    back = np.argsort(perm)                 # A = L[back] U
    if permute_l:
        return L[back], U
    if p_indices:
        return back, L, U
    return np.eye(n)[perm].T, L, U


# ---- factorizations NumPy also has ------------------------------------------

def _plain_options(name, **options):
    for key, (value, default) in options.items():
        if not (value is default or np.isscalar(value) and value == default):
            # an array is named by its shape: its values say nothing about the refusal
            shown = f"<array of shape {np.shape(value)}>" if np.ndim(value) else repr(value)
            raise UnsupportedOperation(f"adsim: scipy.linalg.{name}(..., {key}={shown}) is not "
                                       f"supported on active arrays; leave {key} at its default")


def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """np.linalg.norm's rule (every order it supports)."""
    return spectral_norms.norm(array(a, "scipy.linalg.norm"), ord=ord, axis=axis,
                               keepdims=keepdims)


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    a = array(a, "scipy.linalg.inv")
    _matrix("inv", a)
    _plain_options("inv", assume_a=(assume_a, None))
    return linalg.inv(a)


def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    """np.linalg.pinv's rule with SciPy's cutoff rtol * s_max (rtol
    max(M, N) eps by default, as SciPy's)."""
    a = array(a, "scipy.linalg.pinv")
    _matrix("pinv", a, square=False)
    _plain_options("pinv", atol=(None if np.isscalar(atol) and atol == 0 else atol, None),
                   return_rank=(return_rank, False))
    cut = max(np.shape(a)) * np.finfo(float).eps if rtol is None else rtol
    return decompositions.pinv(a, rcond=cut)


def lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True,
          lapack_driver=None):
    """np.linalg.lstsq's rule (a of full rank; the drivers agree there) in
    SciPy's layout: the residue of a vector b is a scalar. SciPy's default
    cutoff is eps (LAPACK's rank test)."""
    a, b = array(a, "scipy.linalg.lstsq"), array(b, "scipy.linalg.lstsq")
    _matrix("lstsq", a, square=False)
    x, residues, rank, s = decompositions.lstsq(a, b, rcond=np.finfo(float).eps
                                                if cond is None else cond)
    if np.ndim(b) == 1 and np.size(residues):
        residues = residues[0]
    return x, residues, rank, s


def det(a, overwrite_a=False, check_finite=True):
    a = array(a, "scipy.linalg.det")
    _matrix("det", a)
    return linalg.det(a)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    a = array(a, "scipy.linalg.svd")
    _matrix("svd", a, square=False)
    out = decompositions.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def svdvals(a, overwrite_a=False, check_finite=True):
    a = array(a, "scipy.linalg.svdvals")
    _matrix("svdvals", a, square=False)
    return decompositions.svd(a, compute_uv=False)


_QR_MODES = {"full": "complete", "economic": "reduced", "r": "r", "raw": "raw"}


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    a = array(a, "scipy.linalg.qr")
    _matrix("qr", a, square=False)
    _plain_options("qr", pivoting=(pivoting, False))
    if mode not in _QR_MODES:
        raise ValueError("Mode argument should be one of ['full', 'r', 'economic', 'raw']")
    out = decompositions.qr(a, mode=_QR_MODES[mode])
    return (out,) if mode == "r" else tuple(out)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    a = array(a, "scipy.linalg.eigh")
    _matrix("eigh", a)
    _plain_options("eigh", subset_by_value=(subset_by_value, None))
    if b is not None:
        b = array(b, "scipy.linalg.eigh")
        _matrix("eigh", b)
        if np.shape(b) != np.shape(a):
            raise ValueError(f"wrong b dimensions {np.shape(b)}, should be {np.shape(a)}")
        _plain_options("eigh", type=(type, 1))
    if b is not None or subset_by_index is not None:
        # another LAPACK driver computes other rounding and eigenvector signs
        _plain_options("eigh", driver=(driver, None))
    if subset_by_index is not None:
        out = generalized_eigh.subset(a, b, lower, eigvals_only, subset_by_index)
        return out if eigvals_only else tuple(out)
    if b is not None:
        out = generalized_eigh.eigh(a, b, lower, eigvals_only)
        return out if eigvals_only else tuple(out)
    _plain_options("eigh", driver=(driver, None))
    out = generalized_eigh.one_matrix(a, lower, eigvals_only)
    return out if eigvals_only else tuple(out)


def eigvalsh(a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1,
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    return eigh(a, b, lower=lower, eigvals_only=True, subset_by_index=subset_by_index,
                subset_by_value=subset_by_value)


def _real_or_complex(a, name):
    """An active matrix, or a complex intermediate (eig's rules take both)."""
    return a if isinstance(a, ComplexActive) else array(a, name)


def _complex_argument(args, kwargs):
    """A complex intermediate as the matrix: routed to the rule too."""
    return isinstance(args[0] if args else kwargs.get("a"), ComplexActive)


def _as_complex(w):
    """SciPy's eigenvalues are complex whatever they are (NumPy's are real
    when every one is): a real result gains a zero imaginary part."""
    return w if isinstance(w, ComplexActive) else w + 0j


def eig(a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False,
        check_finite=True, homogeneous_eigvals=False):
    """np.linalg.eig's rule (adsim/_np/eigen.py): the same LAPACK problem,
    the eigenvalues always complex as SciPy returns them, the eigenvectors
    real when every eigenvalue is real, as SciPy's."""
    a = _real_or_complex(a, "scipy.linalg.eig")
    _matrix("eig", a)
    _plain_options("eig", b=(b, None), left=(left, False),
                   homogeneous_eigvals=(homogeneous_eigvals, False))
    if not right:
        return eigvals(a)
    values, vectors = eigen.eig(a)
    return _as_complex(values), vectors


def eigvals(a, b=None, overwrite_a=False, check_finite=True, homogeneous_eigvals=False):
    a = _real_or_complex(a, "scipy.linalg.eigvals")
    _matrix("eigvals", a)
    _plain_options("eigvals", b=(b, None), homogeneous_eigvals=(homogeneous_eigvals, False))
    return _as_complex(eigen.eigvals(a))


eig.routes_also = eigvals.routes_also = _complex_argument

HOOKS = {**{("scipy.linalg", f.__name__): f for f in (
    solve_triangular, solve, solve_banded, solveh_banded, cholesky, cho_factor, cho_solve, lu_factor, lu_solve, lu,
    norm, inv, pinv, lstsq, det, svd, svdvals, qr, eigh, eigvalsh, eig, eigvals)}, **structured.HOOKS, **matfuncs.HOOKS,
         **matrix_equations.HOOKS}
