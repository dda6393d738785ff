"""``np.linalg.qr``, ``svd``, ``pinv`` (also of stacks of matrices) and
``lstsq`` on active matrices.

Each factorization is one primitive whose output packs its factors (they
are sliced apart as views), with rules written in differentiable operations
so that Hessian-vector products are exact. The derivatives exist where the
factors are smooth functions of the matrix; elsewhere the rules raise
:class:`adsim.UndefinedDerivative` rather than return inf or NaN:

- QR (m >= n): full column rank. Forward rule after S. F. Walter, L.
  Lehmann, "Algorithmic differentiation of linear algebra functions with
  application in optimum experimental design", 2010 (extended in Walter,
  Lehmann, Lamour, Optim. Methods Softw. 27, 2012); reverse rule after M.
  Seeger et al., "Auto-differentiating linear algebra", arXiv:1710.08717,
  2017. Wide matrices (m < n) as A = Q [U, Q^T Y] with the square QR of the
  first m columns (D. Roberts, L. Roberts, arXiv:2009.10071, 2020).
- SVD: distinct, nonzero singular values for the singular vectors (J.
  Townsend, "Differentiating the singular value decomposition", 2016);
  the singular values alone need no condition (at repeated or zero values
  the rule gives one one-sided derivative; symmetric functions of them, such
  as their sum, are differentiable there).
- pinv and lstsq: full rank (G. H. Golub, V. Pereyra, "The differentiation
  of pseudo-inverses and nonlinear least squares problems whose variables
  separate", SIAM J. Numer. Anal. 10, 1973).
"""
from collections import namedtuple

import numpy as np

from ..errors import UndefinedDerivative, UnsupportedOperation
from ..primitives import BuiltinFamily, primitive
from . import triangular
from .stacks import at_least_2d, over_stack

QRResult = namedtuple("QRResult", ["Q", "R"])           # NumPy's field names
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
_EPS = np.finfo(float).eps


def _matrix(a):
    if np.ndim(a) != 2:
        raise np.linalg.LinAlgError(f"{np.ndim(a)}-dimensional array given. Array must be "
                                    f"two-dimensional")


def _plain(x):
    return isinstance(x, np.ndarray)


# ---- QR ---------------------------------------------------------------------

def _times_rinv(M, R):
    """M R^-1 for upper triangular R."""
    return triangular.solve(R, M.T, lower=False, trans=True).T


def _times_rinv_t(M, R):
    """M R^-T for upper triangular R."""
    return triangular.solve(R, M.T, lower=False).T


def _full_column_rank(R):
    if _plain(R):
        d = np.abs(np.diag(R))
        if d.size and not d.min() > d.size * _EPS * d.max():
            raise UndefinedDerivative(
                f"adsim: the derivative of np.linalg.qr is undefined for a matrix without full "
                f"column rank (|diag R| = {d}); its Q is not determined by the matrix there")


def _qr_value(a):
    return np.concatenate(np.linalg.qr(a))           # [Q; R], (m + n, n)


def _qr_jvp(args, out, tangents):
    """C = Q^T dA R^-1, Omega = tril(C, -1) - tril(C, -1)^T (Q^T dQ),
    dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega)."""
    m = np.shape(args[0])[0]
    Q, R = out[:m], out[m:]
    _full_column_rank(R)
    D = _times_rinv(tangents[0], R)
    C = Q.T @ D
    upper = np.triu(C) + np.tril(C, -1).T              # C - Omega
    return np.concatenate([D - Q @ upper, upper @ R])


def _qr_vjp(args, out, w):
    """Abar = (Qbar + Q copyltu(M)) R^-T, M = R Rbar^T - Qbar^T Q."""
    m = np.shape(args[0])[0]
    Q, R = out[:m], out[m:]
    Qbar, Rbar = w[:m], w[m:]
    _full_column_rank(R)
    M = R @ Rbar.T - Qbar.T @ Q
    return (_times_rinv_t(Qbar + Q @ (np.tril(M) + np.tril(M, -1).T), R),)


_qr = primitive(_qr_value, jvp=_qr_jvp, vjp=_qr_vjp, name="numpy.linalg.qr")


def qr(a, mode="reduced"):
    at_least_2d(a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    if mode == "raw":
        raise UnsupportedOperation("adsim: np.linalg.qr(mode='raw') (Householder reflectors) is "
                                   "not recorded; use mode='reduced', 'complete' or 'r'")
    return over_stack(lambda m: _qr_of(m, mode), lambda m: np.linalg.qr(m, mode=mode), [a])


def _qr_of(a, mode):
    m, n = np.shape(a)
    if mode == "complete" and m > n:
        raise UndefinedDerivative(
            f"adsim: np.linalg.qr(mode='complete') of a {m}x{n} matrix: the last {m - n} columns "
            f"of Q are any orthonormal completion, without a derivative; use mode='reduced'")
    if m >= n:
        packed = _qr(a)
        Q, R = packed[:m], packed[m:]
    else:                                   # A = [X, Y] = Q [U, Q^T Y]
        packed = _qr(a[:, :m])
        Q = packed[:m]
        R = np.concatenate([packed[m:], Q.T @ a[:, m:]], axis=1)
    return R if mode == "r" else QRResult(Q, R)


# ---- SVD --------------------------------------------------------------------

def _inverse_gaps(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it; the singular
    values must be distinct and nonzero (checked on plain values)."""
    k = np.size(s)
    if _plain(s) and k:
        tol = max(k, 2) * _EPS * np.max(s)
        gaps = np.abs(s[:, None] - s[None, :])
        np.fill_diagonal(gaps, np.inf)
        if not np.min(s) > tol or np.min(gaps) <= tol:
            raise UndefinedDerivative(
                f"adsim: the derivative of the singular vectors of np.linalg.svd is undefined at "
                f"repeated or zero singular values (s = {s}): the vectors are not determined "
                f"there. Functions of the singular values alone (compute_uv=False) are "
                f"differentiable")
    s2 = s * s
    eye = np.eye(k)
    return (1.0 - eye) / (s2[None, :] - s2[:, None] + eye)


def _unpack_vectors(packed, m, n):
    k = min(m, n)
    return np.reshape(packed[:m * k], (m, k)), np.reshape(packed[m * k:], (k, n))


def _vectors(a):
    """(U, Vt) of the reduced SVD: NumPy's on a plain matrix, recorded on an
    active one."""
    m, n = np.shape(a)
    if _plain(a):
        U, _, Vt = np.linalg.svd(a, full_matrices=False)
        return U, Vt
    return _unpack_vectors(_svd_vectors(a), m, n)


def _values(a):
    return np.linalg.svd(a, compute_uv=False) if _plain(a) else _svd_values(a)


def _values_jvp(args, s, tangents):
    U, Vt = _vectors(args[0])
    return np.einsum("ik,ij,kj->k", U, tangents[0], Vt)       # diag(U^T dA V)


def _values_vjp(args, s, sbar):
    U, Vt = _vectors(args[0])
    return ((U * sbar) @ Vt,)


_svd_values = primitive(lambda a: np.linalg.svd(a, compute_uv=False), jvp=_values_jvp,
                        vjp=_values_vjp, name="numpy.linalg.svd")


def _vectors_value(a):
    U, _, Vt = np.linalg.svd(a, full_matrices=False)
    return np.concatenate([U.ravel(), Vt.ravel()])


def _vectors_jvp(args, out, tangents):
    """With dP = U^T dA V: dU = U (F o (dP S + S dP^T)) + (I - U U^T) dA V S^-1,
    dV = V (F o (S dP + dP^T S)) + (I - V V^T) dA^T U S^-1 (Townsend 2016)."""
    A, dA = args[0], tangents[0]
    m, n = np.shape(A)
    U, Vt = _unpack_vectors(out, m, n)
    s = _values(A)
    F = _inverse_gaps(s)
    V = Vt.T
    dP = U.T @ dA @ V
    dU = U @ (F * (dP * s + s[:, None] * dP.T))
    dV = V @ (F * (s[:, None] * dP + dP.T * s))
    if m > n:
        dU = dU + (dA @ V - U @ dP) / s
    if n > m:
        dV = dV + (dA.T @ U - V @ dP.T) / s
    return np.concatenate([np.ravel(dU), np.ravel(dV.T)])


def _vectors_vjp(args, out, w):
    """Abar = U (J S + S K) V^T + (I - U U^T) Ubar S^-1 V^T + U S^-1 Vbar^T (I - V V^T),
    J = F o (U^T Ubar - Ubar^T U), K = F o (V^T Vbar - Vbar^T V) (Townsend 2016)."""
    A = args[0]
    m, n = np.shape(A)
    U, Vt = _unpack_vectors(out, m, n)
    Ubar, Vtbar = _unpack_vectors(w, m, n)
    s = _values(A)
    F = _inverse_gaps(s)
    V, Vbar = Vt.T, Vtbar.T
    J = F * (U.T @ Ubar - Ubar.T @ U)
    K = F * (V.T @ Vbar - Vbar.T @ V)
    Abar = U @ (J * s + s[:, None] * K) @ Vt
    if m > n:
        Abar = Abar + ((Ubar - U @ (U.T @ Ubar)) / s) @ Vt
    if n > m:
        Abar = Abar + (U / s) @ (Vtbar - (Vtbar @ V) @ Vt)
    return (Abar,)


_svd_vectors = primitive(_vectors_value, jvp=_vectors_jvp, vjp=_vectors_vjp,
                         name="numpy.linalg.svd (singular vectors)")


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    at_least_2d(a)
    if hermitian:
        raise UnsupportedOperation("adsim: np.linalg.svd(hermitian=True) of an active matrix is "
                                   "not recorded; pass hermitian=False")
    return over_stack(lambda m: _svd_of(m, full_matrices, compute_uv),
                      lambda m: np.linalg.svd(m, full_matrices, compute_uv), [a])


def _svd_of(a, full_matrices, compute_uv):
    s = _svd_values(a)
    if not compute_uv:
        return s
    m, n = np.shape(a)
    if full_matrices and m != n:
        raise UndefinedDerivative(
            f"adsim: np.linalg.svd(full_matrices=True) of a {m}x{n} matrix: the last {abs(m - n)} "
            f"columns of {'U' if m > n else 'V'} are any orthonormal completion, without a "
            f"derivative; pass full_matrices=False (or compute_uv=False for the values alone)")
    U, Vt = _unpack_vectors(_svd_vectors(a), m, n)
    return SVDResult(U, s, Vt)


# ---- pinv and lstsq ----------------------------------------------------------

def _full_rank(a, rcond, name):
    """Refuse a matrix whose singular values NumPy would cut (rank deficient)."""
    if _plain(a) and np.size(a):
        s = np.linalg.svd(a, compute_uv=False)
        if not s[-1] > rcond * s[0]:
            raise UndefinedDerivative(
                f"adsim: the derivative of {name} is undefined at a rank-deficient matrix "
                f"(singular values {s}, cut below {rcond * s[0]:.3g}): only full-rank matrices "
                f"are differentiated")


def _pinv_jvp_rule(A, X, dA):
    """dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X."""
    return (-X @ dA @ X + X @ (X.T @ dA.T) @ (np.eye(np.shape(A)[0]) - A @ X)
            + (dA.T - X @ (A @ dA.T)) @ (X.T @ X))


def _pinv_vjp_rule(A, X, W):
    """Abar = -X^T W X^T + (I - A X) W^T X X^T + X^T X W^T (I - X A)."""
    return (-X.T @ W @ X.T + (W.T - A @ (X @ W.T)) @ (X @ X.T)
            + (X.T @ X) @ (W.T - (W.T @ X) @ A))


def _pinv_rcond(shape, rcond, rtol):
    if rcond is None:
        if rtol is np._NoValue:
            return 1e-15
        return max(shape) * _EPS if rtol is None else rtol
    if rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return rcond


def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    at_least_2d(a)
    if hermitian:
        raise UnsupportedOperation("adsim: np.linalg.pinv(hermitian=True) of an active matrix is "
                                   "not recorded; pass hermitian=False")
    cut = _pinv_rcond(np.shape(a)[-2:], rcond, rtol)
    return over_stack(_PINV(cut=cut), lambda m: np.linalg.pinv(m, rcond=cut), [a])


def _pinv_primitive(cut):
    cut = _cutoff(cut)

    def jvp(args, X, tangents):
        _full_rank(args[0], cut, "np.linalg.pinv")
        return _pinv_jvp_rule(args[0], X, tangents[0])

    def vjp(args, X, W):
        _full_rank(args[0], cut, "np.linalg.pinv")
        return (_pinv_vjp_rule(args[0], X, W),)
    return primitive(lambda a: np.linalg.pinv(a, rcond=cut), jvp=jvp, vjp=vjp,
                     name="numpy.linalg.pinv")


def _cutoff(cut):
    """A cutoff (rcond) as given, or as a tape file saves it (a list for an array)."""
    if isinstance(cut, list):
        return np.array(cut, dtype=float)
    if isinstance(cut, bool) or not isinstance(cut, (int, float, np.number, np.ndarray)):
        raise ValueError(f"the cutoff {cut!r} is not a number")
    return cut


_PINV = BuiltinFamily("numpy.linalg.pinv", 1, _pinv_primitive)


def lstsq(a, b, rcond=None):
    """(x, residuals, rank, s) as NumPy gives them, for a full-rank ``a``:
    x = pinv(a) b, differentiated in ``a`` and ``b``."""
    _matrix(a)
    if np.ndim(b) not in (1, 2):
        raise UnsupportedOperation(f"adsim: np.linalg.lstsq with b of shape {np.shape(b)}; pass "
                                   f"a vector or a matrix")
    m, n = np.shape(a)
    cut = max(m, n) * _EPS if rcond is None else rcond
    x = _LSTSQ(cut=cut)(a, b)
    s = _values(a)
    if m > n:
        r = b - a @ x
        residuals = np.reshape(np.sum(r * r, axis=0), (-1,))
    else:
        residuals = np.zeros(0)
    return x, residuals, min(m, n), s


def _lstsq_primitive(cut):
    cut = _cutoff(cut)

    def value(a, b):
        _full_rank(a, cut, "np.linalg.lstsq")     # the rank it returns stays min(m, n)
        return np.linalg.lstsq(a, b, rcond=cut)[0]

    def pseudo_inverse(a):
        return np.linalg.pinv(a, rcond=cut) if _plain(a) else _PINV(cut=cut)(a)

    def jvp(args, x, tangents):
        (A, b), (dA, db) = args, tangents
        X = pseudo_inverse(A)
        dx = np.zeros_like(x) if db is None else X @ db
        return dx if dA is None else dx + _pinv_jvp_rule(A, X, dA) @ b

    def vjp(args, x, xbar):
        A, b = args
        X = pseudo_inverse(A)
        W = np.outer(xbar, b) if np.ndim(b) == 1 else xbar @ b.T
        return _pinv_vjp_rule(A, X, W), X.T @ xbar
    return primitive(value, jvp=jvp, vjp=vjp, name="numpy.linalg.lstsq")


_LSTSQ = BuiltinFamily("numpy.linalg.lstsq", 1, _lstsq_primitive)


# computed from their arguments alone: a call whose result the tape's output
# does not need (the singular vectors when only the singular values are
# read) is dropped from the tape (adsim/_optimise.pxi)
for _prim in (_qr, _svd_values, _svd_vectors):
    _prim.pure = True
del _prim
