"""``scipy.stats.multivariate_normal`` log-density, density and entropy in
x, mean and covariance, called unchanged (see hooks.py), frozen or not.

log N(x; m, C) = -(d log 2 pi + log det C + |L^-1 (x - m)|^2) / 2 with
C = L L^T (Cholesky of the lower triangle, the triangle SciPy's
eigendecomposition reads), through adsim's Cholesky and triangular-solve
primitives. The covariance must be positive definite; SciPy's
``allow_singular`` pseudo-densities of singular covariances are refused.
"""
import numpy as np
import scipy.stats

from .._np import linalg, triangular
from ..errors import UnsupportedOperation
from .arrays import array

_NAME = "scipy.stats.multivariate_normal"


def _parameters(mean, cov, name):
    """(mean, cov, d) as SciPy completes them: a scalar or a vector
    covariance is a multiple of the identity or a diagonal."""
    if isinstance(cov, scipy.stats.Covariance):
        raise UnsupportedOperation(f"adsim: {name} with a scipy.stats.Covariance object and "
                                   f"active arguments; pass the covariance matrix")
    cov = array(1.0 if cov is None else cov, name)
    if mean is None:
        dim = 1 if np.ndim(cov) < 2 else np.shape(cov)[0]
        mean = np.zeros(dim)
    mean = array(mean, name)
    dim = np.size(mean)
    if dim == 1:
        mean, cov = np.reshape(mean, (1,)), np.reshape(cov, (1, 1))
    if np.ndim(mean) != 1:
        raise ValueError(f"Array 'mean' must be a vector of length {dim}.")
    if np.ndim(cov) == 0:
        cov = cov * np.eye(dim)
    elif np.ndim(cov) == 1:
        cov = np.diag(cov)
    if np.shape(cov) != (dim, dim):
        raise ValueError(f"Dimension mismatch: array 'cov' is of shape {np.shape(cov)}, but "
                         f"'mean' is a vector of length {dim}.")
    return mean, cov, dim


def _quantiles(x, dim):
    """Points as rows (SciPy's _process_quantiles)."""
    if np.ndim(x) == 0:
        return np.reshape(x, (1,))[None, :] if dim == 1 else np.reshape(x, (1,))
    if np.ndim(x) == 1:
        return x[:, None] if dim == 1 else x[None, :]
    return x


def _squeeze(out):
    return np.squeeze(out)


def _logdensity(x, mean, cov, allow_singular, name):
    mean, cov, dim = _parameters(mean, cov, name)
    x = _quantiles(array(x, name), dim)
    try:
        L = linalg.cholesky(cov)
    except np.linalg.LinAlgError as err:
        if allow_singular:
            raise UnsupportedOperation(
                f"adsim: {name} with a singular covariance (allow_singular=True) is not "
                f"recorded; the density is differentiated for positive definite covariances"
            ) from err
        raise
    points = np.reshape(x - mean, (-1, dim))
    z = triangular.solve(L, points.T, lower=True)
    mahalanobis = np.reshape(np.sum(z * z, axis=0), np.shape(x)[:-1])
    log_det = 2.0 * np.sum(np.log(np.diagonal(L)))
    return -0.5 * (dim * np.log(2.0 * np.pi) + log_det + mahalanobis)


def _entropy(mean, cov, name):
    """(d (log 2 pi + 1) + log det C) / 2."""
    mean, cov, dim = _parameters(mean, cov, name)
    L = linalg.cholesky(cov)
    return 0.5 * (dim * (np.log(2.0 * np.pi) + 1.0)) + np.sum(np.log(np.diagonal(L)))


def entropy(self, mean=None, cov=1):
    return _entropy(mean, cov, f"{_NAME}.entropy")


def logpdf(self, x, mean=None, cov=1, allow_singular=False):
    return _squeeze(_logdensity(x, mean, cov, allow_singular, f"{_NAME}.logpdf"))


def pdf(self, x, mean=None, cov=1, allow_singular=False):
    return _squeeze(np.exp(_logdensity(x, mean, cov, allow_singular, f"{_NAME}.pdf")))


class FrozenNormal:
    """``multivariate_normal(mean, cov)`` with active parameters: logpdf,
    pdf, entropy, mean, cov and dim; other methods raise naming themselves."""

    def __init__(self, mean, cov, allow_singular):
        self.mean, self.cov, self.dim = _parameters(mean, cov, f"{_NAME}")
        self.allow_singular = allow_singular

    def logpdf(self, x):
        return _squeeze(_logdensity(x, self.mean, self.cov, self.allow_singular,
                                    f"{_NAME}.logpdf"))

    def pdf(self, x):
        return np.exp(self.logpdf(x))

    def entropy(self):
        return _entropy(self.mean, self.cov, f"{_NAME}.entropy")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedOperation(f"adsim: {_NAME}(mean, cov).{name} with active parameters is "
                                   f"not supported; logpdf, pdf and entropy are")


def _unsupported(method):
    def rule(self, *args, **kwargs):
        raise UnsupportedOperation(f"adsim: {_NAME}.{method} with active arguments is not "
                                   f"supported; logpdf, pdf and entropy are")
    return rule


def freeze(self, mean=None, cov=1, allow_singular=False, seed=None, **kwds):
    return FrozenNormal(mean, cov, allow_singular)


def frozen_logpdf(self, x):
    return _squeeze(_logdensity(x, self.mean, self.cov, getattr(self, "allow_singular", False),
                                f"{_NAME}.logpdf"))


def frozen_pdf(self, x):
    return np.exp(frozen_logpdf(self, x))


_MODULE = "scipy.stats._multivariate"
HOOKS = {(_MODULE, "multivariate_normal_gen.logpdf"): logpdf,
         (_MODULE, "multivariate_normal_gen.pdf"): pdf,
         (_MODULE, "multivariate_normal_gen.__call__"): freeze,
         (_MODULE, "multivariate_normal_frozen.logpdf"): frozen_logpdf,
         (_MODULE, "multivariate_normal_frozen.pdf"): frozen_pdf,
         (_MODULE, "multivariate_normal_gen.entropy"): entropy,
         **{(_MODULE, f"multivariate_normal_{kind}.{m}"): _unsupported(m)
            for kind in ("gen", "frozen") for m in ("cdf", "logcdf", "rvs")}}
