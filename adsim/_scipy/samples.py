"""``scipy.integrate`` rules on samples: ``trapezoid``, ``cumulative_trapezoid``,
``simpson``, ``romb`` with active samples ``y`` (and active ``x`` or ``dx``
where said).

SciPy writes them with NumPy, but their first line, ``np.asarray(y)``, would
drop the derivative. ``trapezoid`` and ``cumulative_trapezoid`` are written
here with recorded NumPy operations, in ``y`` and ``x``. For fixed sample
points ``simpson`` and ``romb`` are linear in ``y``: their weights are
SciPy's own function applied to the unit vectors (computed once per call,
so the value is SciPy's to rounding), and the result is the weighted sum
along ``axis``; a scalar ``dx`` scales it and may be active. Active sample
points ``x`` of ``simpson`` (where the weights are not linear) are refused
by name.
"""
import numpy as np
import scipy.integrate as si

from .._np.core import active_leaves
from ..errors import UnsupportedOperation
from .arrays import array


def _spacing(x, dx, y, axis, name):
    """The interval lengths along ``axis``, shaped to broadcast with y's
    differences (SciPy's rules: a 1-d x lies along axis, an n-d x matches y)."""
    if x is None:
        return dx
    x = array(x, f"scipy.integrate.{name}")
    d = np.diff(x, axis=-1 if x.ndim == 1 else axis)
    if x.ndim == 1:
        shape = [1] * np.ndim(y)
        shape[axis] = d.shape[0]
        d = np.reshape(d, tuple(shape))
    return d


def _halves(y, axis):
    n = y.shape[axis]
    lo = np.take(y, np.arange(n - 1), axis=axis)
    hi = np.take(y, np.arange(1, n), axis=axis)
    return lo + hi


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = array(y, "scipy.integrate.trapezoid")
    d = _spacing(x, dx, y, axis, "trapezoid")
    return np.sum(d * _halves(y, axis) / 2.0, axis=axis)


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    y = array(y, "scipy.integrate.cumulative_trapezoid")
    d = _spacing(x, dx, y, axis, "cumulative_trapezoid")
    res = np.cumsum(d * _halves(y, axis) / 2.0, axis=axis)
    if initial is None:
        return res
    if not np.isscalar(initial) or initial != 0:
        raise ValueError("`initial` must be `None` or `0`.")
    shape = list(res.shape)
    shape[axis] = 1
    return np.concatenate([np.zeros(tuple(shape)), res], axis=axis)


def _weighted_sum(y, weights, axis):
    return np.moveaxis(y, axis, -1) @ weights


def simpson(y, *, x=None, dx=1.0, axis=-1):
    y = array(y, "scipy.integrate.simpson")
    if active_leaves(x):
        raise UnsupportedOperation(
            "adsim: scipy.integrate.simpson with active sample points x is not differentiated "
            "(its weights are not linear in x); pass x as plain values, or use trapezoid, "
            "which is differentiated in x")
    n = y.shape[axis]
    if x is not None and np.ndim(x) != 1:
        raise UnsupportedOperation(
            "adsim: scipy.integrate.simpson with active y takes a 1-d x; for sample points "
            "that differ along other axes, call it once per row")
    weights = si.simpson(np.eye(n), x=x, dx=1.0, axis=0)
    out = _weighted_sum(y, weights, axis)
    return out if x is not None else dx * out


def romb(y, dx=1.0, axis=-1, show=False):
    y = array(y, "scipy.integrate.romb")
    if show:
        raise UnsupportedOperation("adsim: scipy.integrate.romb with show=True and active "
                                   "samples; call it without show")
    weights = si.romb(np.eye(y.shape[axis]), dx=1.0, axis=0)
    return dx * _weighted_sum(y, weights, axis)


HOOKS = {("scipy.integrate", name): rule for name, rule in (
    ("trapezoid", trapezoid), ("cumulative_trapezoid", cumulative_trapezoid),
    ("simpson", simpson), ("romb", romb))}
