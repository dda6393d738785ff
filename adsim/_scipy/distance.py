"""``scipy.spatial.distance`` on active points, called unchanged (see
hooks.py): pdist and cdist with the metrics below (or a callable, called
per pair as SciPy does), and squareform both ways.

The pairs are gathered by plain index arrays and each metric is written
with recorded operations. A Euclidean distance between coincident points
has no derivative (that of sqrt at 0): its derivative is NaN there, as
for np.linalg.norm of a zero vector.
"""
import numpy as np

from ..errors import UnsupportedOperation
from .arrays import array


def _norms(u):
    return np.sqrt(np.sum(u * u, axis=-1))


def _cosine(u, v):
    return 1.0 - np.sum(u * v, axis=-1) / (_norms(u) * _norms(v))


def _centered(u):
    return u - np.mean(u, axis=-1, keepdims=True)


# metric -> distance of paired rows u, v (shape (k, n)) -> (k,)
_METRICS = {
    "euclidean": lambda u, v: _norms(u - v),
    "sqeuclidean": lambda u, v: np.sum((u - v) ** 2, axis=-1),
    "cityblock": lambda u, v: np.sum(np.abs(u - v), axis=-1),
    "chebyshev": lambda u, v: np.max(np.abs(u - v), axis=-1),
    "minkowski": lambda u, v, p=2.0: np.sum(np.abs(u - v) ** p, axis=-1) ** (1.0 / p),
    "cosine": _cosine,
    "correlation": lambda u, v: _cosine(_centered(u), _centered(v)),
    "braycurtis": lambda u, v: np.sum(np.abs(u - v), axis=-1) / np.sum(np.abs(u + v), axis=-1),
}
_ALIASES = {"euclid": "euclidean", "eu": "euclidean", "e": "euclidean", "sqe": "sqeuclidean",
            "sqeuclid": "sqeuclidean", "cblock": "cityblock", "cb": "cityblock", "c": "cityblock",
            "manhattan": "cityblock", "chebychev": "chebyshev", "cheby": "chebyshev",
            "cheb": "chebyshev", "ch": "chebyshev", "mi": "minkowski", "m": "minkowski",
            "pnorm": "minkowski", "cos": "cosine", "co": "correlation", "corr": "correlation"}


def _paired(name, metric, U, V, kwargs):
    """Distances of the rows U[k], V[k]."""
    if callable(metric):
        return np.stack([metric(U[k], V[k], **kwargs) for k in range(np.shape(U)[0])]) \
            if np.shape(U)[0] else np.zeros(0)
    key = _ALIASES.get(str(metric).lower(), str(metric).lower())
    if key not in _METRICS:
        raise UnsupportedOperation(
            f"adsim: scipy.spatial.distance.{name} with metric={metric!r} and active points is "
            f"not recorded; metrics: {', '.join(_METRICS)}, or a callable written with NumPy")
    allowed = {"p"} if key == "minkowski" else set()
    if set(kwargs) - allowed:
        raise UnsupportedOperation(
            f"adsim: scipy.spatial.distance.{name}(metric={key!r}) with "
            f"{sorted(set(kwargs) - allowed)} is not recorded on active points")
    return _METRICS[key](U, V, **kwargs)


def _points(name, X):
    X = array(X, f"scipy.spatial.distance.{name}")
    if np.ndim(X) != 2:
        raise ValueError(f"A 2-dimensional array must be passed. (Shape was {np.shape(X)}).")
    return X


def _no_out(name, out):
    if out is not None:
        raise UnsupportedOperation(f"adsim: scipy.spatial.distance.{name}(..., out=...) is not "
                                   f"recorded on active points; use the returned array")


def pdist(X, metric="euclidean", *, out=None, **kwargs):
    """Distances of the pairs i < j of rows, in SciPy's order."""
    _no_out("pdist", out)
    X = _points("pdist", X)
    i, j = np.triu_indices(np.shape(X)[0], 1)
    return _paired("pdist", metric, X[i], X[j], kwargs)


def cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):
    """Distances of every row of XA to every row of XB, shape (mA, mB)."""
    _no_out("cdist", out)
    XA, XB = _points("cdist", XA), _points("cdist", XB)
    if np.shape(XA)[1] != np.shape(XB)[1]:
        raise ValueError("XA and XB must have the same number of columns (i.e. feature "
                         "dimension.)")
    mA, mB = np.shape(XA)[0], np.shape(XB)[0]
    i, j = np.indices((mA, mB))
    return np.reshape(_paired("cdist", metric, XA[i.ravel()], XB[j.ravel()], kwargs), (mA, mB))


def squareform(X, force="no", checks=True):
    """A condensed distance vector as a symmetric matrix with zero diagonal,
    or such a matrix (checked as SciPy does, by recorded comparisons) as
    its condensed vector."""
    X = array(X, "scipy.spatial.distance.squareform")
    s = np.shape(X)
    if force.lower() == "tomatrix" and len(s) != 1:
        raise ValueError("Forcing 'tomatrix' but input X is not a distance vector.")
    if force.lower() == "tovector" and len(s) != 2:
        raise ValueError("Forcing 'tovector' but input X is not a distance matrix.")
    if len(s) == 1:
        if s[0] == 0:
            return np.zeros((1, 1))
        d = int(np.ceil(np.sqrt(s[0] * 2)))
        if d * (d - 1) != s[0] * 2:
            raise ValueError("Incompatible vector size. It must be a binomial coefficient n "
                             "choose 2 for some integer n >= 2.")
        index = np.zeros((d, d), dtype=int)          # 0: the zero put in front of the vector
        i, j = np.triu_indices(d, 1)
        index[i, j] = index[j, i] = np.arange(1, s[0] + 1)
        return np.concatenate([np.zeros(1), X])[index]
    if len(s) == 2:
        if s[0] != s[1]:
            raise ValueError("The matrix argument must be square.")
        if checks and (np.any(X != X.T) or np.any(np.diagonal(X) != 0)):
            raise ValueError("Distance matrix 'X' must be symmetric with zero diagonal "
                             "elements.")
        i, j = np.triu_indices(s[0], 1)
        return X[i, j]
    raise ValueError(f"The first argument must be one or two dimensional array. A "
                     f"{len(s)}-dimensional array is not permitted")


HOOKS = {("scipy.spatial.distance", f.__name__): f for f in (pdist, cdist, squareform)}
