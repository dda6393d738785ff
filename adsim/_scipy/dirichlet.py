"""``scipy.stats.dirichlet``: logpdf, pdf and entropy in the point x and the
concentrations alpha, called unchanged (see hooks.py), frozen or not.

log D(x; alpha) = sum_i (alpha_i - 1) log x_i - log B(alpha), with
log B(alpha) = sum_i gammaln(alpha_i) - gammaln(sum_i alpha_i); the entropy
is log B(alpha) + (alpha_0 - K) psi(alpha_0) - sum_i (alpha_i - 1) psi(alpha_i).
As in SciPy, the components run along the first axis of x (K or K - 1
entries; the last is then 1 - sum), and x must lie on the simplex; these
checks are recorded comparisons.
"""
import numpy as np
import scipy.special as sc

from ..errors import UnsupportedOperation
from .arrays import array

_NAME = "scipy.stats.dirichlet"


def _concentrations(alpha, name):
    alpha = array(alpha, name)
    if np.ndim(alpha) != 1:
        raise ValueError(f"Parameter vector 'a' must be one dimensional, but a.shape = "
                         f"{np.shape(alpha)}.")
    if np.any(alpha <= 0):
        raise ValueError("All parameters must be greater than 0")
    return alpha


def _point(alpha, x, name):
    """x completed to K components and checked as SciPy does."""
    x = array(x, name)
    K = np.shape(alpha)[0]
    if np.ndim(x) not in (1, 2) or np.shape(x)[0] not in (K, K - 1):
        raise ValueError(f"Vector 'x' must have either the same number of entries as, or one "
                         f"entry fewer than, parameter vector 'a', but alpha.shape = "
                         f"{np.shape(alpha)} and x.shape = {np.shape(x)}.")
    if np.shape(x)[0] == K - 1:
        x = np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)
    if np.any(x < 0):
        raise ValueError("Each entry in 'x' must be greater than or equal to zero.")
    if np.any(x > 1):
        raise ValueError("Each entry in 'x' must be smaller or equal one.")
    small = np.reshape(alpha < 1, (K,) + (1,) * (np.ndim(x) - 1))
    if np.any((x == 0) & small):
        raise ValueError("Each entry in 'x' must be greater than zero if its alpha is less "
                         "than one.")
    excess = np.sum(x, axis=0) - 1.0          # two comparisons: abs would record a sign
    if np.any((excess > 10e-10) | (excess < -10e-10)):
        raise ValueError("The input vector 'x' must lie within the normal simplex.")
    return x


def _log_beta(alpha):
    return np.sum(sc.gammaln(alpha)) - sc.gammaln(np.sum(alpha))


def _logdensity(x, alpha, name):
    alpha = _concentrations(alpha, name)
    x = _point(alpha, x, name)
    a = np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))
    return np.sum(sc.xlogy(a - 1.0, x), axis=0) - _log_beta(alpha)


def logpdf(self, x, alpha):
    return _logdensity(x, alpha, f"{_NAME}.logpdf")


def pdf(self, x, alpha):
    return np.exp(_logdensity(x, alpha, f"{_NAME}.pdf"))


def entropy(self, alpha):
    alpha = _concentrations(alpha, f"{_NAME}.entropy")
    total = np.sum(alpha)
    return (_log_beta(alpha) + (total - np.shape(alpha)[0]) * sc.digamma(total)
            - np.sum((alpha - 1.0) * sc.digamma(alpha)))


class FrozenDirichlet:
    """``dirichlet(alpha)`` with active concentrations: logpdf, pdf,
    entropy; other methods raise naming themselves."""

    def __init__(self, alpha):
        self.alpha = _concentrations(alpha, _NAME)

    def logpdf(self, x):
        return logpdf(None, x, self.alpha)

    def pdf(self, x):
        return pdf(None, x, self.alpha)

    def entropy(self):
        return entropy(None, self.alpha)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedOperation(f"adsim: {_NAME}(alpha).{name} with active concentrations is "
                                   f"not supported; logpdf, pdf and entropy are")


def freeze(self, alpha, seed=None):
    return FrozenDirichlet(alpha)


_MODULE = "scipy.stats._multivariate"
HOOKS = {(_MODULE, "dirichlet_gen.logpdf"): logpdf, (_MODULE, "dirichlet_gen.pdf"): pdf,
         (_MODULE, "dirichlet_gen.entropy"): entropy, (_MODULE, "dirichlet_gen.__call__"): freeze}
