"""``scipy.interpolate.griddata`` with active data values (plain points and
query points), methods ``nearest`` and ``linear``.

Both are linear in the values: the interpolant at the query points is W
values for the constant weights W (the nearest point's indicator, or the
barycentric coordinates in the Delaunay simplex holding the query point)
that SciPy's own ``griddata`` gives for the identity's columns as values
(one call); the result is one recorded product W values. Query points
outside the convex hull take ``fill_value`` (``linear``), a constant.
``cubic`` (Clough-Tocher: its gradients come from an iteration that stops
by the values) and active points or query points are refused by name.
"""
import numpy as np
import scipy.interpolate as si

from ..errors import UnsupportedOperation
from . import splines
from .arrays import array


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
