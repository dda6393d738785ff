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


# ---- one matrix, and subset_by_index: eigenpairs lo..hi -------------------------------

def _one_matrix_primitive(uplo, lo, hi, has_b, kind):
    """The primitive computing ``kind`` of all eigenpairs of one matrix
    (made at import: tape files identify the rules reading it)."""
    return _one_matrix[uplo][kind]


def _subset_primitive(uplo, lo, hi, has_b, kind):
    """The primitive computing ``kind`` of eigenpairs lo..hi (made on first use)."""
    return _subset[uplo, lo, hi, has_b][kind]


def _full_of(uplo, has_b, args):
    """(w, X) of the whole problem."""
    if has_b:
        return eigvalsh_of(*args, uplo), _vectors[uplo](*args)
    return _one_matrix[uplo]["values"](*args), _one_matrix[uplo]["vectors"](*args)


def _pair_rules(uplo, lo, hi, has_b, source):
    """Rules for the eigenpairs lo..hi (hi < 0: all of a single matrix's)
    of the pencil (A, B) or of A alone (B = I, dB = 0). The other eigenpairs
    enter the eigenvectors' derivative only through x_j x_j^T, so the full
    problem's eigenvectors serve whatever their signs, while x_i and w_i are
    the primitives' own, which ``source(uplo, lo, hi, has_b, kind)`` gives.
    (The rules capture strings, numbers and module functions only, so tape
    files can identify them.)"""
    def pair(args):
        return (source(uplo, lo, hi, has_b, "values")(*args),
                source(uplo, lo, hi, has_b, "vectors")(*args))

    def tangents_of(tangents):
        return tangents[0], (tangents[1] if has_b else None)

    def values_jvp(args, w, tangents):
        lam, X = pair(args)
        P, Q = _products(X, *tangents_of(tangents))
        k = np.shape(X)[1]
        return _diagonal(P, k) - lam * _diagonal(Q, k)

    def values_vjp(args, w, wbar):
        lam, X = pair(args)
        out = ((X * wbar) @ X.T, -((X * (wbar * lam)) @ X.T))
        return out if has_b else out[:1]

    def coefficients(args, lam, k):
        """(F, G): the full problem's eigenvectors and G_ji = 1 / (lam_i - w_j)
        for j != lo + i, else 0."""
        w_full, F = _full_of(uplo, has_b, args)
        distinct_eigenvalues(w_full, "the eigenvectors are used", _NAME,
                             "scipy.linalg.eigvalsh")
        n = np.shape(F)[0]
        own = np.zeros((n, k))
        own[np.arange(lo, lo + k), np.arange(k)] = 1.0
        return F, (1.0 - own) / (lam[None, :] - w_full[:, None] + own)

    def vectors_jvp(args, X, tangents):
        lam, X = pair(args)
        F, G = coefficients(args, lam, np.shape(X)[1])
        da, db = tangents_of(tangents)
        P = 0.0 if da is None else F.T @ da @ X
        Q = 0.0 if db is None else F.T @ db @ X
        out = F @ (G * (P - Q * lam[None, :]))
        if db is not None:
            out = out - 0.5 * X * np.diagonal(X.T @ db @ X)
        return out

    def vectors_vjp(args, X, xbar):
        lam, X = pair(args)
        F, G = coefficients(args, lam, np.shape(X)[1])
        GY = G * (F.T @ xbar)
        abar = F @ GY @ X.T
        if not has_b:
            return (abar,)
        bbar = -(F @ (GY * lam[None, :]) @ X.T) - 0.5 * (X * np.sum(X * xbar, axis=0)) @ X.T
        return abar, bbar
    return {"values": (values_jvp, values_vjp), "values_only": (values_jvp, values_vjp),
            "vectors": (vectors_jvp, vectors_vjp)}


def _scipy_eigh(uplo, kind, subset=None):
    """SciPy's eigh of (a, b) or of a (b None): eigenvalues alone (its
    eigvals_only call), or the eigenvalues or eigenvectors of its full call."""
    def value(a, b=None):
        w, v = (scipy.linalg.eigh(a, b, lower=uplo == "L", eigvals_only=True,
                                  subset_by_index=subset), None) if kind == "values_only" else \
            scipy.linalg.eigh(a, b, lower=uplo == "L", subset_by_index=subset)
        return v if kind == "vectors" else w
    return value


def _one_matrix_primitives(uplo):
    """scipy.linalg.eigh(a) and eigvalsh(a): SciPy's own values (its 'evr'
    driver, whose eigenvector signs differ from NumPy's eigh), named (tape
    files make them on demand)."""
    made = {}
    suffix = "" if uplo == "L" else "(lower=False)"
    rules = _pair_rules(uplo, 0, -1, False, _one_matrix_primitive)
    for kind, name in (("values_only", "scipy.linalg.eigvalsh"),
                       ("values", "scipy.linalg.eigh.eigenvalues"),
                       ("vectors", "scipy.linalg.eigh")):
        jvp, vjp = rules[kind]
        made[kind] = primitive(_scipy_eigh(uplo, kind), jvp=jvp, vjp=vjp, name=name + suffix)
        made[kind].pure = True
    return made


_one_matrix = {uplo: _one_matrix_primitives(uplo) for uplo in ("L", "U")}


class _Subsets(dict):
    """The primitives of eigenpairs lo..hi, made on first use per triangle,
    range and problem (with or without B)."""

    def __missing__(self, key):
        uplo, lo, hi, has_b = key
        made = {}
        rules = _pair_rules(uplo, lo, hi, has_b, _subset_primitive)
        for kind in ("values_only", "values", "vectors"):
            jvp, vjp = rules[kind]
            prim = primitive(_scipy_eigh(uplo, kind, [lo, hi]), jvp=jvp, vjp=vjp)
            prim.name = f"scipy.linalg.eigh(subset_by_index=[{lo}, {hi}]).{kind}"
            prim.not_saved = "made for this call's range of eigenpairs"
            prim.pure = True
            made[kind] = prim
        dict.__setitem__(self, key, made)
        return made


_subset = _Subsets()


def one_matrix(a, lower, eigvals_only):
    """SciPy's eigh(a) (eigvalsh(a)) of the matrix read from one triangle."""
    prims = _one_matrix["L" if lower else "U"]
    a = _from_triangle(a, lower)
    if eigvals_only:
        return prims["values_only"](a)
    return prims["values"](a), prims["vectors"](a)


def subset(a, b, lower, eigvals_only, subset_by_index):
    """Eigenpairs lo..hi (SciPy's ``subset_by_index``) of the pencil (a, b),
    or of a alone when b is None."""
    n = np.shape(a)[0]
    lo, hi = (int(i) for i in subset_by_index)
    if not 0 <= lo <= hi < n:
        raise ValueError(f"Requested eigenvalue indices are not valid. Valid range is [0, {n - 1}] "
                         f"and start <= end, but start={lo}, end={hi} is given")
    args = (_from_triangle(a, lower),) + (() if b is None else (_from_triangle(b, lower),))
    prims = _subset["L" if lower else "U", lo, hi, b is not None]
    if eigvals_only:
        return prims["values_only"](*args)
    return prims["values"](*args), prims["vectors"](*args)
