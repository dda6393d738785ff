"""``np.linalg`` on active arrays: solve, norm, inv, det, slogdet, cholesky,
eigh, eigvalsh, matrix_power."""
import operator
from collections import namedtuple

import numpy as np

from .._active import Active
from ..errors import UndefinedDerivative, UnsupportedOperation
from ..primitives import primitive
from .decompositions import svd
from .elementwise import absolute
from .integers import current
from .core import normalize_axis, shape_of
from .reductions import amax, amin, sum as reduce_sum
from .stacks import over_stack, square


def _solve_value(A, b):
    return np.linalg.solve(A, b)


def _solve_jvp(args, x, tangents):
    """dx = A^{-1} (db - dA x)."""
    A, b = args
    dA, db = tangents
    rhs = np.zeros_like(x) if db is None else db
    # a zero dA (a matrix made in the function) adds nothing, not even the
    # NaN of 0 @ inf where x is infinite: the sweeps' zero-times-infinity rule
    if dA is not None and (isinstance(dA, Active) or np.any(dA)):
        rhs = rhs - dA @ x
    return np.linalg.solve(A, rhs)


def _solve_vjp(args, x, xbar):
    """bbar = A^{-T} xbar, Abar = -bbar x^T."""
    A, b = args
    bbar = np.linalg.solve(A.T, xbar)
    Abar = -np.outer(bbar, x) if x.ndim == 1 else -bbar @ x.T
    return Abar, bbar


_solve = primitive(_solve_value, jvp=_solve_jvp, vjp=_solve_vjp, name="linalg.solve")


def solve(a, b):
    """NumPy 2's rule: b is one vector for every matrix when it is 1-d, else a
    stack of matrices; the batch axes broadcast."""
    square("solve", a)
    vector = len(shape_of(b)) == 1
    return over_stack(_solve, np.linalg.solve, [a, b], core=(2, 1 if vector else 2))


def norm(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: every vector order, and the matrix 1-, inf- and
    Frobenius norms (those of -1, -inf too); the matrix 2-norm, -2 and
    nuclear norms from singular values (single matrices)."""
    nd = x.ndim
    if axis is None:
        if ord is None:
            return _keep(np.sqrt(reduce_sum(x * x)), nd, keepdims)
        if nd == 1:
            return vector_norm_along(x, ord, 0, keepdims)
        if nd == 2:
            return _matrix_norm(x, ord, (0, 1), keepdims)
        raise ValueError("Improper number of dimensions to norm.")
    axes = norm_axes(axis, nd)
    if len(axes) == 1:
        return vector_norm_along(x, 2 if ord is None else ord, axes[0], keepdims)
    return _matrix_norm(x, "fro" if ord is None else ord, axes, keepdims)


def norm_axes(axis, nd):
    """np.linalg.norm's ``axis`` (not None) as NumPy reads it: an integer,
    or a tuple of one or two distinct axes; normalized, or NumPy's error."""
    if not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except Exception as err:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from err
    if len(axis) not in (1, 2):
        raise ValueError("Improper number of dimensions to norm.")
    axes = tuple(normalize_axis(int(a), nd) for a in axis)
    if len(axes) == 2 and axes[0] == axes[1]:
        raise ValueError("Duplicate axes given.")
    return axes


def _keep(y, nd, keepdims):
    return y.reshape((1,) * nd) if keepdims else y


def vector_norm_along(x, ord, axis, keepdims):
    a = absolute(x)
    if ord in (np.inf, "inf"):          # NumPy's initial=0: of an empty vector 0
        return amax(a, axis=axis, keepdims=keepdims, initial=0.0 if x.size == 0 else None)
    if ord == -np.inf:
        return amin(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == 0:            # a count: piecewise constant, its comparisons recorded
        return np.sum(x != 0, axis=axis, keepdims=keepdims).astype(float)
    if ord == 1:
        return reduce_sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return np.sqrt(reduce_sum(x * x, axis=axis, keepdims=keepdims))
    return reduce_sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = (ax % x.ndim for ax in axes)
    if ord == "fro":
        return np.sqrt(reduce_sum(x * x, axis=(row, col), keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        summed = col if ord in (np.inf, -np.inf) else row       # rows for inf, columns for 1
        sums = reduce_sum(absolute(x), axis=summed, keepdims=True)
        other = row if summed == col else col
        if ord in (1, np.inf):           # NumPy's initial=0: of an empty matrix 0
            out = amax(sums, axis=other, keepdims=True, initial=0.0 if x.size == 0 else None)
        else:
            out = amin(sums, axis=other, keepdims=True)
        return out if keepdims else out.reshape(tuple(d for i, d in enumerate(out.shape)
                                                       if i not in (row, col)))
    if ord in (2, -2, "nuc"):
        s = svd(np.moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
        out = amax(s, axis=-1) if ord == 2 else (amin(s, axis=-1) if ord == -2 else
                                                reduce_sum(s, axis=-1))
        if keepdims:
            out = out.reshape(tuple(1 if i in (row, col) else d for i, d in enumerate(x.shape)))
        return out
    raise ValueError("Invalid norm order for matrices.")


# ---- matrix functions: primitives whose rules are differentiable, so that
# Hessian-vector products (which record the reverse rule) are exact too.
# Rules after M. Giles, "An extended collection of matrix derivative results
# for forward and reverse mode AD", 2008, and I. Murray, "Differentiation of
# the Cholesky decomposition", 2016.

def _inv_jvp(args, out, tangents):
    return -(out @ tangents[0] @ out)


def _inv_vjp(args, out, w):
    return (-(out.T @ w @ out.T),)


_inv = primitive(np.linalg.inv, jvp=_inv_jvp, vjp=_inv_vjp, name="numpy.linalg.inv")


def inv(a):
    square("inv", a)
    return over_stack(_inv, np.linalg.inv, [a])


def _adjugate(a):
    """adj(A), with A adj(A) = det(A) I: through the SVD on plain values, so
    that it exists at singular matrices too; as det(A) inv(A) when recorded
    (second derivatives), which needs A regular."""
    if isinstance(a, np.ndarray) and not np.all(np.isfinite(a)):
        return _cofactors(a).T      # LAPACK's SVD does not return on inf or NaN
    if isinstance(a, np.ndarray):
        U, s, Vt = np.linalg.svd(a)
        n = s.size
        others = np.array([np.prod(np.delete(s, i)) for i in range(n)])
        return np.linalg.det(U) * np.linalg.det(Vt) * (Vt.T * others) @ U.T
    try:
        if singular_within_rounding(current(a)):
            raise np.linalg.LinAlgError("singular within rounding")
        return det(a) * inv(a)
    except np.linalg.LinAlgError as err:
        raise UnsupportedOperation("adsim: second derivatives of np.linalg.det at a singular "
                                   "matrix (singular within rounding) are not supported") from err


def singular_within_rounding(a):
    """Whether the smallest singular value is within 100 n eps of the largest:
    there LU need not meet a zero pivot, but det(A) inv(A) is rounding noise
    times its inverse, not the adjugate."""
    if not np.all(np.isfinite(a)):      # (LAPACK's SVD does not return on inf or NaN)
        return False
    s = np.linalg.svd(a, compute_uv=False)
    return s.size > 0 and s[-1] <= 100.0 * np.finfo(float).eps * s.size * s[0]


def _cofactors(a):
    """The cofactor matrix by the determinants of the minors (LU: IEEE
    infinities and NaN, and it returns)."""
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=0), j, axis=1)
            out[i, j] = (-1.0) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


def _trace_of_product(m, t):
    """trace(m t), term by term on plain values: a zero of t adds nothing,
    not the NaN of 0 * inf (the sweeps' zero-times-infinity rule)."""
    if isinstance(m, np.ndarray) and isinstance(t, np.ndarray):
        with np.errstate(invalid="ignore"):
            return np.sum(np.where(t.T == 0.0, 0.0, m * t.T))
    return np.trace(m @ t)


def _det_jvp(args, out, tangents):
    return _trace_of_product(_adjugate(args[0]), tangents[0])


def _det_vjp(args, out, w):
    return (w * _adjugate(args[0]).T,)


_det = primitive(np.linalg.det, jvp=_det_jvp, vjp=_det_vjp, name="numpy.linalg.det")


def det(a):
    square("det", a)
    return over_stack(_det, np.linalg.det, [a])


def _logabsdet(a):
    return np.linalg.slogdet(a)[1]


def _inverse_for_logabsdet(a):
    """inv(A), the derivative of log|det A|, which has none at a singular A
    (log|det A| = -inf there)."""
    try:
        return inv(a)
    except np.linalg.LinAlgError as err:
        raise UndefinedDerivative(
            "adsim: np.linalg.slogdet of a singular matrix has log|det| = -inf and no "
            "derivative (it is inv(A).T, which does not exist); keep the matrix regular (add a "
            "small multiple of the identity) or differentiate det, whose derivative exists "
            "there") from err


def _logabsdet_jvp(args, out, tangents):
    return _trace_of_product(_inverse_for_logabsdet(args[0]), tangents[0])


def _logabsdet_vjp(args, out, w):
    return (w * _inverse_for_logabsdet(args[0]).T,)


_logabsdet_prim = primitive(_logabsdet, jvp=_logabsdet_jvp, vjp=_logabsdet_vjp,
                            name="numpy.linalg.slogdet")


def slogdet(a):
    """(sign, log|det|): the sign is a branch record (it changes only where
    the determinant crosses zero), the logarithm is differentiated."""
    square("slogdet", a)
    return over_stack(_slogdet, np.linalg.slogdet, [a])


def _slogdet(a):
    d = _det(a)
    sign = 1.0 if d > 0 else (-1.0 if d < 0 else 0.0)
    return SlogdetResult(sign, _logabsdet_prim(a))


SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])   # NumPy's field names
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


def _from_triangle(a, lower):
    """The symmetric matrix NumPy's symmetric routines see: the lower (or
    upper) triangle of ``a`` mirrored. Recording it makes the derivatives
    those of the triangle actually read, as NumPy's values are."""
    t = np.tril(a) if lower else np.triu(a)
    return t + (np.tril(a, -1) if lower else np.triu(a, 1)).T


def _phi(x):
    """Lower triangle with the diagonal halved (Murray 2016)."""
    return np.tril(x) - 0.5 * np.diag(np.diag(x))


def _cholesky_jvp(args, L, tangents):
    Li = inv(L)
    return L @ _phi(Li @ tangents[0] @ Li.T)


def _cholesky_vjp(args, L, w):
    Li = inv(L)
    S = Li.T @ _phi(L.T @ w) @ Li
    return (0.5 * (S + S.T),)


_cholesky = primitive(np.linalg.cholesky, jvp=_cholesky_jvp, vjp=_cholesky_vjp,
                      name="numpy.linalg.cholesky")


def cholesky(a, upper=False):
    """NumPy reads the lower triangle (the upper one when ``upper``)."""
    square("cholesky", a)
    return over_stack(lambda m: _cholesky_of(m, upper), np.linalg.cholesky, [a])


def _cholesky_of(a, upper):
    L = _cholesky(_from_triangle(a, lower=not upper))
    return L.T if upper else L


def _eigvalsh_jvp(args, w, tangents):
    V = _eigenvectors(args[0])
    return np.einsum("ij,ik,kj->j", V, tangents[0], V)


def _eigvalsh_vjp(args, w, wbar):
    V = _eigenvectors(args[0])
    return ((V * wbar) @ V.T,)


def _eigenvectors(a):
    return eigh(a)[1]


def _per_triangle(value, name, jvp, vjp):
    """One primitive of ``value(a, uplo)`` per triangle LAPACK reads: on the
    mirrored matrix both give the same eigenvalues, but rounding and the
    eigenvectors' signs are those of the triangle read, and NumPy's values
    are those of the triangle the user named."""
    return {uplo: primitive(lambda a, uplo=uplo: value(a, uplo), jvp=jvp, vjp=vjp,
                            name=name + suffix)
            for uplo, suffix in (("L", ""), ("U", "(UPLO='U')"))}


_eigvalsh = _per_triangle(np.linalg.eigvalsh, "numpy.linalg.eigvalsh", _eigvalsh_jvp,
                          _eigvalsh_vjp)
# eigh's eigenvalues come from another LAPACK driver than eigvalsh's: their own primitive
_eigh_values = _per_triangle(lambda a, uplo: np.linalg.eigh(a, uplo)[0],
                             "numpy.linalg.eigh.eigenvalues", _eigvalsh_jvp, _eigvalsh_vjp)


def repeated_pair(w, exactly=False):
    """The first two of the symmetric eigenvalues ``w`` that are equal (with
    ``exactly``), or equal within 100 times LAPACK's rounding, n eps max|w|
    (two eigenvalues of one cluster differ in rounding only, and
    1 / (w_j - w_i) is then noise); or None."""
    bound = 0.0 if exactly else \
        100.0 * np.finfo(float).eps * w.size * np.max(np.abs(w), initial=0.0)
    repeated = (np.abs(w[None, :] - w[:, None]) <= bound) & ~np.eye(w.size, dtype=bool)
    return tuple(np.argwhere(repeated)[0]) if repeated.any() else None


def distinct_eigenvalues(w, why, name="numpy.linalg.eigh", instead="np.linalg.eigvalsh"):
    """Refuse equal eigenvalues: the eigenvectors (and the second
    derivatives of the eigenvalues) have no derivative there."""
    if isinstance(w, Active):
        return
    w = np.asarray(w, dtype=float)
    pair = repeated_pair(w, exactly=True)
    if pair is not None:
        i, j = pair
        raise UndefinedDerivative(
            f"adsim: {name}: {why}, and eigenvalues {i} and {j} are equal "
            f"({float(w[i])!r}, {float(w[j])!r}): the eigenvectors of a repeated eigenvalue, "
            f"and the second "
            f"derivatives of the eigenvalues, do not exist there. For first derivatives of the "
            f"eigenvalues alone use {instead}; otherwise move the point")


def _eigvecs_jvp(args, V, tangents):
    """dV = V (F o (V^T dA V)), F_ij = 1 / (w_j - w_i) off the diagonal."""
    w = eigvalsh(args[0])
    distinct_eigenvalues(w, "forward mode computes the eigenvectors' tangents (also for second "
                 "derivatives of eigenvalues)")
    inner = V.T @ tangents[0] @ V
    return V @ (_cluster_gaps(w, inner) * inner)


def _cluster_gaps(w, inner):
    """_gaps(w), where eigenvalues equal within rounding (a double eigenvalue
    LAPACK split in the last bits) have 1 / (w_j - w_i) of rounding noise:
    a tangent that does not split them (V^T dA V zero between them, as a
    perturbation keeping a symmetry) moves the eigenvectors within their
    cluster by an undetermined rotation, taken as none; one that splits
    them has no eigenvector tangent (and the eigenvalues no second
    derivative) there: refused."""
    F = _gaps(w)
    pair = repeated_pair(w)
    if pair is None:
        return F
    bound = 100.0 * np.finfo(float).eps * w.size * np.max(np.abs(w), initial=0.0)
    near = (np.abs(w[None, :] - w[:, None]) <= bound) & ~np.eye(w.size, dtype=bool)
    scale = np.max(np.abs(inner), initial=0.0)
    if np.any(np.abs(inner[near]) > 100.0 * np.finfo(float).eps * w.size * scale):
        i, j = pair
        raise UndefinedDerivative(
            f"adsim: numpy.linalg.eigh: eigenvalues {i} and {j} are equal within rounding "
            f"({float(w[i])!r}, {float(w[j])!r}) and the direction splits them: the "
            f"eigenvectors' tangents (and the eigenvalues' second derivatives) do not exist "
            f"there. For first derivatives of the eigenvalues alone use np.linalg.eigvalsh; "
            f"otherwise move the point")
    F[near] = 0.0
    return F


def _eigvecs_vjp(args, V, vbar):
    """Called only for a nonzero seed: the eigenvectors are used."""
    w = eigvalsh(args[0])
    distinct_eigenvalues(w, "the eigenvectors are used")
    return (V @ (_gaps(w) * (V.T @ vbar)) @ V.T,)


def _gaps(w):
    """F_ij = 1 / (w_j - w_i) for i != j, 0 on the diagonal (distinct eigenvalues)."""
    d = w[None, :] - w[:, None]
    eye = np.eye(d.shape[0])
    return (1.0 - eye) / (d + eye)


_eigvecs = _per_triangle(lambda a, uplo: np.linalg.eigh(a, uplo)[1], "numpy.linalg.eigh",
                         _eigvecs_jvp, _eigvecs_vjp)


def uplo_of(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return UPLO.upper()


def eigvalsh(a, UPLO="L"):
    square("eigvalsh", a)
    uplo = uplo_of(UPLO)
    return over_stack(lambda m: _eigvalsh[uplo](_from_triangle(m, uplo == "L")),
                      lambda m: np.linalg.eigvalsh(m, uplo), [a])


def eigh(a, UPLO="L"):
    """Eigenvalues and eigenvectors of the symmetric matrix NumPy reads from
    one triangle; eigenvector derivatives need distinct eigenvalues (as
    every such rule does), eigenvalue derivatives do not."""
    square("eigh", a)
    uplo = uplo_of(UPLO)
    return over_stack(lambda m: _eigh(_from_triangle(m, uplo == "L"), uplo),
                      lambda m: np.linalg.eigh(m, uplo), [a])


def _eigh(s, uplo):
    return EighResult(_eigh_values[uplo](s), _eigvecs[uplo](s))


def matrix_power(a, n):
    square("matrix_power", a)
    n = operator.index(n)
    if n < 0:
        a, n = inv(a), -n
    if n == 0:                                 # no dependence on a
        return np.broadcast_to(np.eye(shape_of(a)[-1]), shape_of(a)).copy()
    result = a
    for _ in range(n - 1):
        result = result @ a
    return result


# NumPy's linear algebra computes its results and nothing else: a call whose
# result the tape's output does not need (the eigenvectors of eigh when only
# the eigenvalues are read) is dropped from the tape (adsim/_optimise.pxi)
for _prim in (_solve, _inv, _det, _logabsdet_prim, _cholesky, *_eigvalsh.values(),
              *_eigvecs.values()):
    _prim.pure = True
del _prim
