"""Scattered-data interpolation of active data values (plain points and
query points): ``griddata`` (methods ``nearest`` and ``linear``) and
``RBFInterpolator``.

Both are linear in the values: the interpolant at the query points is W
values for the constant weights W (the nearest point's indicator, or the
barycentric coordinates in the Delaunay simplex holding the query point)
that SciPy's own ``griddata`` gives for the identity's columns as values
(one call); the result is one recorded product W values. Query points
outside the convex hull take ``fill_value`` (``linear``), a constant.
``cubic`` (Clough-Tocher: its gradients come from an iteration that stops
by the values) and active points or query points are refused by name.

An ``RBFInterpolator`` (any kernel, smoothing, degree, neighbors) is linear
in its data d the same way: the object keeps SciPy's interpolator of the
plain values (its attributes are SciPy's) and a twin built on the
identity's columns, whose values at the query points are the weights W;
the result is W d, recorded. The twin holds n^2 numbers, so more than
``splines.MAX_DENSE_POINTS`` active data points are refused by name.
"""
import numpy as np
import scipy.interpolate as si

from ..errors import UnsupportedOperation
from . import splines
from .arrays import array, now


def griddata(points, values, xi, method="linear", fill_value=np.nan, rescale=False):
    points, xi, fill_value = splines.plain_arguments("griddata", points=points, xi=xi,
                                                     fill_value=fill_value)
    if method not in ("nearest", "linear"):
        raise UnsupportedOperation(
            f"adsim: scipy.interpolate.griddata with active values and method={method!r}: "
            f"'nearest' and 'linear' are differentiated (linear in the values); a cubic "
            f"interpolant's gradients come from an iteration stopped by the values")
    values = array(values, "scipy.interpolate.griddata")
    n = np.shape(values)[0]
    weights = si.griddata(points, np.eye(n), xi, method=method, fill_value=np.nan,
                          rescale=rescale)
    outside = np.isnan(weights).any(axis=-1)
    weights = np.where(outside[..., None], 0.0, weights)
    out = np.tensordot(weights, values, axes=([-1], [0]))
    if not np.any(outside):
        return out
    mask = outside.reshape(outside.shape + (1,) * (np.ndim(values) - 1))
    return np.where(mask, float(fill_value), out)


def rbf_init(self, y, d, neighbors=None, smoothing=0.0, kernel="thin_plate_spline",
             epsilon=None, degree=None):
    name = "RBFInterpolator"
    y, smoothing, epsilon = splines.plain_arguments(name, y=y, smoothing=smoothing,
                                                    epsilon=epsilon)
    d = array(d, f"scipy.interpolate.{name}")
    n = np.shape(d)[0]
    if n > splines.MAX_DENSE_POINTS:
        raise UnsupportedOperation(
            f"adsim: scipy.interpolate.{name} of {n} active data values: its weights are a "
            f"dense map of at most {splines.MAX_DENSE_POINTS} points")
    options = dict(neighbors=neighbors, smoothing=smoothing, kernel=kernel, epsilon=epsilon,
                   degree=degree)
    si.RBFInterpolator.__init__(self, y, now(d), **options)
    self._adsim_weights = si.RBFInterpolator(y, np.eye(n), **options)
    self._adsim_d = d


def rbf_call(self, x):
    (x,) = splines.plain_arguments("RBFInterpolator", x=x)
    weights = self._adsim_weights(x)
    return np.tensordot(weights, self._adsim_d, axes=([-1], [0]))
