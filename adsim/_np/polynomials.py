"""Polynomial fits of active data: np.polyfit, NumPy's algorithm written
with the functions adsim records (a Vandermonde matrix, column scaling,
np.linalg.lstsq), so its values are NumPy's and its derivatives, in y, in x
and in the weights, are those of the least-squares solution (adsim's lstsq
rule; a rank-deficient fit has none and raises UndefinedDerivative)."""
import warnings

import numpy as np

from .core import shape_of


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    order = int(deg) + 1
    x, y = x + 0.0, y + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(shape_of(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(shape_of(y)) not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = shape_of(x)[0] * np.finfo(np.float64).eps
    lhs, rhs = np.vander(x, order), y
    if w is not None:
        w = w + 0.0
        if len(shape_of(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if len(shape_of(rhs)) == 2 else w)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=3)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = np.linalg.inv(np.dot(lhs.T, lhs)) / np.outer(scale, scale)
    if cov == "unscaled":
        fac = 1.0
    else:
        if shape_of(x)[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (shape_of(x)[0] - order)
    return c, (base * fac if len(shape_of(y)) == 1 else base[:, :, None] * fac)
