"""``scipy.linalg.eigh(a, b)`` and ``eigvalsh(a, b)``: the generalized
symmetric-definite eigenproblem A x = w B x (SciPy's ``type=1``), with A
and B each active or plain, each read from the triangle SciPy reads.

Values are SciPy's own (LAPACK's ``sygvd``; the eigenvalues of
``eigvals_only=True`` come from another call of it, so they are their own
primitive). SciPy's eigenvectors are B-orthonormal, X^T B X = I.
Differentiating A X = B X diag(w) and X^T B X = I gives, with
P = X^T dA X and Q = X^T dB X,

    dw_i = P_ii - w_i Q_ii,
    dX = X C,  C_ij = (P_ij - w_j Q_ij) / (w_j - w_i)  (i != j),  C_ii = -Q_ii / 2

(the symmetric case B = I, dB = 0 is NumPy's eigh rule). The reverse rules
are the transposes: with Y = X^T Xbar and F_ij = 1 / (w_j - w_i) off the
diagonal, Abar = X (diag(wbar) + F o Y) X^T and
Bbar = -X (diag(wbar w) + (F o Y) diag(w) + diag(Y_ii) / 2) X^T. The rules
are written with recorded operations on the primitives themselves, so
Hessian-vector products are exact. Eigenvector derivatives need distinct
eigenvalues (adsim.UndefinedDerivative otherwise), eigenvalue derivatives
do not.

``subset_by_index=[lo, hi]`` (with B, or without: B = I, dB = 0) keeps
SciPy's own subset computation (its values and eigenvector signs); the
eigenvectors' derivatives, sums over the other eigenpairs, take those from
the full problem, where they enter as x_j x_j^T whatever their signs.
"""
import numpy as np
import scipy.linalg

from .._np.linalg import _from_triangle, _gaps, distinct_eigenvalues
from ..primitives import primitive

_NAME = "scipy.linalg.eigh(b=...)"


def _products(X, da, db):
    P = 0.0 if da is None else X.T @ da @ X
    Q = 0.0 if db is None else X.T @ db @ X
    return P, Q


def _diagonal(M, n):
    return np.zeros(n) if np.ndim(M) == 0 else np.diagonal(M)


def _values_jvp(args, w, tangents):
    X = _vectors[_uplo_of(args)](*args[:2])
    P, Q = _products(X, *tangents[:2])
    n = np.shape(X)[0]
    return _diagonal(P, n) - eigvalsh_of(*args[:2], _uplo_of(args)) * _diagonal(Q, n)


def _values_vjp(args, w, wbar):
    a, b = args[:2]
    X = _vectors[_uplo_of(args)](a, b)
    lam = eigvalsh_of(a, b, _uplo_of(args))
    return (X * wbar) @ X.T, -((X * (wbar * lam)) @ X.T)


def _vectors_jvp(args, X, tangents):
    a, b = args[:2]
    lam = eigvalsh_of(a, b, _uplo_of(args))
    distinct_eigenvalues(lam, "forward mode computes the eigenvectors' tangents", _NAME,
                         "scipy.linalg.eigvalsh(a, b)")
    X = _vectors[_uplo_of(args)](a, b)
    P, Q = _products(X, *tangents[:2])
    C = _gaps(lam) * (P - Q * lam[None, :]) - 0.5 * np.diag(_diagonal(Q, np.shape(X)[0]))
    return X @ C


def _vectors_vjp(args, X, xbar):
    a, b = args[:2]
    lam = eigvalsh_of(a, b, _uplo_of(args))
    distinct_eigenvalues(lam, "the eigenvectors are used", _NAME, "scipy.linalg.eigvalsh(a, b)")
    X = _vectors[_uplo_of(args)](a, b)
    FY = _gaps(lam) * (X.T @ xbar)
    return (X @ FY @ X.T,
            -(X @ (FY * lam[None, :] + 0.5 * np.diag(np.diagonal(X.T @ xbar))) @ X.T))


def _uplo_of(args):
    return args[2] if len(args) > 2 else "L"


def _per_triangle(value, name, jvp, vjp):
    """One primitive per triangle SciPy reads (``lower=``): rounding and the
    eigenvectors' signs are those of the triangle read."""
    def with_triangle(rule, uplo):
        return lambda args, out, t: rule((*args, uplo), out, t)
    made = {}
    for uplo in ("L", "U"):
        made[uplo] = primitive(lambda a, b, uplo=uplo: value(a, b, uplo == "L"),
                               jvp=with_triangle(jvp, uplo), vjp=with_triangle(vjp, uplo),
                               name=name + ("" if uplo == "L" else "(lower=False)"))
        made[uplo].pure = True
    return made


_eigvalsh = _per_triangle(lambda a, b, lower: scipy.linalg.eigh(
    a, b, lower=lower, eigvals_only=True), "scipy.linalg.eigvalsh(b=...)", _values_jvp,
    _values_vjp)
_eigh_values = _per_triangle(lambda a, b, lower: scipy.linalg.eigh(a, b, lower=lower)[0],
                             "scipy.linalg.eigh(b=...).eigenvalues", _values_jvp, _values_vjp)
_vectors = _per_triangle(lambda a, b, lower: scipy.linalg.eigh(a, b, lower=lower)[1],
                         _NAME, _vectors_jvp, _vectors_vjp)


def eigvalsh_of(a, b, uplo):
    return _eigvalsh[uplo](a, b)


def eigh(a, b, lower, eigvals_only):
    """SciPy's results for the pencil (a, b) read from the lower (upper)
    triangles."""
    uplo = "L" if lower else "U"
    a, b = _from_triangle(a, lower), _from_triangle(b, lower)
    if eigvals_only:
        return _eigvalsh[uplo](a, b)
    return _eigh_values[uplo](a, b), _vectors[uplo](a, b)


# ---- subset_by_index: eigenpairs lo..hi (SciPy's own subset computation) -------------

def _subset_rules(uplo, lo, hi, has_b):
    """Rules for eigenpairs lo..hi of the pencil (A, B), or of A alone
    (B = I). The other eigenpairs enter the eigenvectors' derivative only
    through x_j x_j^T, so the full problem's eigenvectors serve, whatever
    their signs; x_i and w_i are the subset's own."""
    def pencil(args):
        a = args[0]
        b = args[1] if has_b else np.eye(np.shape(a)[0])
        return a, b

    def tangents_of(args, tangents):
        return tangents[0], (tangents[1] if has_b else None)

    def full(args):
        a, b = pencil(args)
        return eigvalsh_of(a, b, uplo), _vectors[uplo](a, b)

    def values_jvp(args, w, tangents):
        X = _subset[uplo, lo, hi, has_b, "vectors"](*args)
        lam = _subset[uplo, lo, hi, has_b, "values"](*args)
        da, db = tangents_of(args, tangents)
        P, Q = _products(X, da, db)
        k = np.shape(X)[1]
        return _diagonal(P, k) - lam * _diagonal(Q, k)

    def values_vjp(args, w, wbar):
        X = _subset[uplo, lo, hi, has_b, "vectors"](*args)
        lam = _subset[uplo, lo, hi, has_b, "values"](*args)
        out = ((X * wbar) @ X.T, -((X * (wbar * lam)) @ X.T))
        return out if has_b else out[:1]

    def coefficients(args):
        """G_ji = 1 / (lam_i - w_j) for the full problem's j != lo + i, else 0."""
        w_full, F = full(args)
        lam = _subset[uplo, lo, hi, has_b, "values"](*args)
        distinct_eigenvalues(w_full, "the eigenvectors are used", _NAME,
                             "scipy.linalg.eigvalsh(a, b)")
        n, k = np.shape(F)[0], hi - lo + 1
        own = np.zeros((n, k))
        own[np.arange(lo, hi + 1), np.arange(k)] = 1.0
        d = lam[None, :] - w_full[:, None] + own
        return F, (1.0 - own) / d

    def vectors_jvp(args, X, tangents):
        X = _subset[uplo, lo, hi, has_b, "vectors"](*args)
        lam = _subset[uplo, lo, hi, has_b, "values"](*args)
        F, G = coefficients(args)
        da, db = tangents_of(args, tangents)
        P = 0.0 if da is None else F.T @ da @ X
        Q = 0.0 if db is None else F.T @ db @ X
        out = F @ (G * (P - Q * lam[None, :]))
        if db is not None:
            out = out - 0.5 * X * np.diagonal(X.T @ db @ X)
        return out

    def vectors_vjp(args, X, xbar):
        X = _subset[uplo, lo, hi, has_b, "vectors"](*args)
        lam = _subset[uplo, lo, hi, has_b, "values"](*args)
        F, G = coefficients(args)
        GY = G * (F.T @ xbar)                       # n x k
        abar = F @ GY @ X.T
        if not has_b:
            return (abar,)
        bbar = -(F @ (GY * lam[None, :]) @ X.T) - 0.5 * (X * np.sum(X * xbar, axis=0)) @ X.T
        return abar, bbar
    return values_jvp, values_vjp, vectors_jvp, vectors_vjp


class _Subsets(dict):
    """The primitives of eigenpairs lo..hi, made on first use per triangle,
    range and problem (with or without B)."""

    def __missing__(self, key):
        uplo, lo, hi, has_b, kind = key
        values_jvp, values_vjp, vectors_jvp, vectors_vjp = _subset_rules(uplo, lo, hi, has_b)
        for part, jvp, vjp in (("values", values_jvp, values_vjp),
                               ("vectors", vectors_jvp, vectors_vjp)):
            def value(a, b=None, part=part):
                w, v = scipy.linalg.eigh(a, b, lower=uplo == "L", subset_by_index=[lo, hi])
                return w if part == "values" else v
            prim = primitive(value, jvp=jvp, vjp=vjp)
            prim.name = f"scipy.linalg.eigh(subset_by_index=[{lo}, {hi}]).{part}"
            prim.not_saved = "made for this call's range of eigenpairs"
            prim.pure = True
            dict.__setitem__(self, (uplo, lo, hi, has_b, part), prim)
        return dict.__getitem__(self, key)


_subset = _Subsets()


def subset(a, b, lower, eigvals_only, subset_by_index):
    """Eigenpairs lo..hi (SciPy's ``subset_by_index``) of the pencil (a, b),
    or of a alone when b is None."""
    n = np.shape(a)[0]
    lo, hi = (int(i) for i in subset_by_index)
    if not 0 <= lo <= hi < n:
        raise ValueError(f"Requested eigenvalue indices are not valid. Valid range is [0, {n - 1}] "
                         f"and start <= end, but start={lo}, end={hi} is given")
    uplo = "L" if lower else "U"
    args = (_from_triangle(a, lower),) + (() if b is None else (_from_triangle(b, lower),))
    has_b = b is not None
    values = _subset[uplo, lo, hi, has_b, "values"](*args)
    if eigvals_only:
        return values
    return values, _subset[uplo, lo, hi, has_b, "vectors"](*args)
