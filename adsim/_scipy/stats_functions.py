"""``scipy.stats`` summary functions on active arrays, called unchanged (see
hooks.py): entropy, zscore, skew, kurtosis and pearsonr, written with
recorded NumPy operations as SciPy defines them (its ``_stats_py`` and
``_entropy``), so every mode differentiates them:

- ``entropy(pk, qk=None, base=None, axis=0)``: pk (and qk) normalised to sum
  1 along ``axis``, then the sum of ``entr(pk)`` (or ``rel_entr(pk, qk)``),
  divided by log(base);
- ``zscore(a, axis, ddof)``: (a - mean) / std, NaN where the slice is
  constant (std <= |eps mean|);
- ``skew`` and ``kurtosis`` (``bias``, ``fisher``): the central moments' ratios
  m3 / m2^1.5 and m4 / m2^2, with SciPy's bias corrections, NaN where
  m2 <= (eps mean)^2;
- ``pearsonr(x, y)`` of 1-D arrays: r = <x - x̄, y - ȳ> / (|x - x̄| |y - ȳ|)
  clipped to [-1, 1], and its p-value from the beta distribution SciPy uses
  (shapes n/2 - 1 on [-1, 1]: regularized incomplete beta functions), for
  each ``alternative``.

``nan_policy`` other than "propagate", ``pearsonr``'s ``method`` and
``axis`` are refused by name.
"""
import numpy as np
import scipy.special as sc

from ..errors import UnsupportedOperation
from .arrays import array

_EPS = np.finfo(float).eps


def _refuse(name, what, instead):
    raise UnsupportedOperation(f"adsim: scipy.stats.{name} with active arguments: {what} is not "
                               f"supported; {instead}")


def _propagate(name, nan_policy):
    if nan_policy != "propagate":
        _refuse(name, f"nan_policy={nan_policy!r}", "leave nan_policy at 'propagate' (NaN "
                "propagates), or remove the NaN first with a recorded np.where")


def _along(a, axis):
    """``a`` and the axis to reduce: the flat array for axis=None, as SciPy."""
    return (np.reshape(a, -1), 0) if axis is None else (a, axis)


def entropy(pk, qk=None, base=None, axis=0, *, nan_policy="propagate", keepdims=False):
    _propagate("entropy", nan_policy)
    pk = array(pk, "scipy.stats.entropy")
    if qk is not None:
        qk = array(qk, "scipy.stats.entropy")
        pk, qk = np.broadcast_arrays(pk, qk)
        qk, _ = _along(qk, axis)
    pk, axis = _along(pk, axis)
    pk = pk / np.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        terms = sc.entr(pk)
    else:
        terms = sc.rel_entr(pk, qk / np.sum(qk, axis=axis, keepdims=True))
    s = np.sum(terms, axis=axis, keepdims=keepdims)
    return s / np.log(base) if base is not None else s


def zscore(a, axis=0, ddof=0, nan_policy="propagate"):
    _propagate("zscore", nan_policy)
    a = array(a, "scipy.stats.zscore")
    shape = np.shape(a)
    flat, axis = _along(a, axis)
    mean = np.mean(flat, axis=axis, keepdims=True)
    std = np.var(flat, axis=axis, ddof=ddof, keepdims=True) ** 0.5
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (flat - mean) / std
    z = np.where(std <= np.abs(_EPS * mean), np.nan, z)
    return np.reshape(z, shape)


def _moments(a, axis, orders):
    """(n, mean without the axis, central moments of ``orders``)."""
    a, axis = _along(a, axis)
    n = np.shape(a)[axis]
    mean = np.mean(a, axis=axis, keepdims=True)
    d = a - mean
    return n, np.squeeze(mean, axis=axis), [np.mean(d ** k, axis=axis) for k in orders]


def _reduced(vals, keepdims, a, axis):
    if keepdims:
        vals = np.expand_dims(vals, tuple(range(np.ndim(a))) if axis is None else axis)
    return vals


def skew(a, axis=0, bias=True, nan_policy="propagate", *, keepdims=False):
    _propagate("skew", nan_policy)
    a = array(a, "scipy.stats.skew")
    n, mean, (m2, m3) = _moments(a, axis, (2, 3))
    zero = m2 <= (_EPS * mean) ** 2
    safe = np.where(zero, 1.0, m2)          # no NaN reaches the derivatives
    vals = np.where(zero, np.nan, m3 / safe ** 1.5)
    if not bias and n > 2:
        vals = np.where(zero, vals, ((n - 1.0) * n) ** 0.5 / (n - 2.0) * m3 / safe ** 1.5)
    return _reduced(vals, keepdims, a, axis)


def kurtosis(a, axis=0, fisher=True, bias=True, nan_policy="propagate", *, keepdims=False):
    _propagate("kurtosis", nan_policy)
    a = array(a, "scipy.stats.kurtosis")
    n, mean, (m2, m4) = _moments(a, axis, (2, 4))
    zero = m2 <= (_EPS * mean) ** 2
    safe = np.where(zero, 1.0, m2)
    vals = np.where(zero, np.nan, m4 / safe ** 2)
    if not bias and n > 3:
        corrected = 1.0 / (n - 2) / (n - 3) * ((n ** 2 - 1.0) * m4 / safe ** 2
                                               - 3 * (n - 1) ** 2.0) + 3.0
        vals = np.where(zero, vals, corrected)
    vals = vals - 3.0 if fisher else vals
    return _reduced(vals, keepdims, a, axis)


class PearsonRResult(tuple):
    """(statistic, pvalue), also by name, as SciPy's result unpacks and reads."""

    def __new__(cls, statistic, pvalue):
        return super().__new__(cls, (statistic, pvalue))

    @property
    def statistic(self):
        return self[0]

    @property
    def pvalue(self):
        return self[1]

    def confidence_interval(self, *args, **kwargs):
        _refuse("pearsonr", "the result's confidence_interval",
                "compute it from the statistic with np.arctanh (Fisher's transformation)")


def pearsonr(x, y, *, alternative="two-sided", method=None, axis=0):
    if method is not None:
        _refuse("pearsonr", f"method={method!r}", "leave method out (the beta distribution)")
    x, y = array(x, "scipy.stats.pearsonr"), array(y, "scipy.stats.pearsonr")
    if np.ndim(x) != 1 or np.ndim(y) != 1 or axis not in (0, -1):
        _refuse("pearsonr", f"arrays of shapes {np.shape(x)} and {np.shape(y)} (axis={axis!r})",
                "pass two 1-D arrays")
    n = np.shape(x)[0]
    if np.shape(y)[0] != n:
        raise ValueError("`x` and `y` must have the same length along `axis`.")
    if n < 2:
        raise ValueError("`x` and `y` must have length at least 2.")
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")
    xm, ym = x - np.mean(x), y - np.mean(y)
    r = np.sum(xm * ym) / (np.sqrt(np.sum(xm * xm)) * np.sqrt(np.sum(ym * ym)))
    r = np.clip(r, -1.0, 1.0)
    # r is beta(n/2 - 1, n/2 - 1) on [-1, 1] under independence: P(R <= r) =
    # I_{(1 + r)/2}(a, a), and P(R >= r) = I_{(1 - r)/2}(a, a) by symmetry
    a = n / 2 - 1
    if n == 2:
        p = 1.0 + 0.0 * r
    elif alternative == "two-sided":
        p = 2 * sc.betainc(a, a, (1.0 - np.abs(r)) / 2)
    elif alternative == "less":
        p = sc.betainc(a, a, (1.0 + r) / 2)
    else:
        p = sc.betainc(a, a, (1.0 - r) / 2)
    return PearsonRResult(r, p)


HOOKS = {("scipy.stats", f.__name__): f for f in (entropy, zscore, skew, kurtosis, pearsonr)}
