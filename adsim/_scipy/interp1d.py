"""``scipy.interpolate.interp1d`` with active data values or at active
points, every ``kind``.

Construction with active ``y`` runs SciPy's constructor on the current
values (checks, sorting, attributes), then puts the active values (sorted
as SciPy sorts them) where SciPy keeps its own (``y``, ``_y``); the spline
kinds (``zero``, ``slinear``, ``quadratic``, ``cubic``, an integer order)
get their spline's coefficients as the affine map of y splines.py uses.
Evaluation follows SciPy's code with recorded operations:

- ``linear``: the piece is found as SciPy's ``_call_linear`` finds it
  (searchsorted side ``left``): at an inner data point the derivative in
  x is the slope of the piece on the left; the sample points ``x`` may be
  active too (a fitted breakpoint), as in ``np.interp`` with an active
  ``xp``: the piece of each point is then a recorded decision, which
  replays check;
- ``nearest``, ``nearest-up``, ``previous``, ``next``: the chosen data
  value (derivative 0 in x);
- spline kinds: the B-spline, derivative of the piece on the right;
- out of bounds: ``fill_value`` (constant, derivative 0), or
  extrapolation, or SciPy's ValueError with ``bounds_error``.
"""
import numpy as np
import scipy.interpolate as si

from .._active import Active
from .._np.core import active_leaves
from ..errors import UnsupportedOperation
from . import collocation, splines
from .arrays import array, now


def interp1d_init(self, x, y, kind="linear", axis=-1, copy=True, bounds_error=None,
                  fill_value=np.nan, assume_sorted=False):
    active_x = None
    if kind == "linear" and (isinstance(x, Active) or active_leaves(x)):
        active_x = array(x, "scipy.interpolate.interp1d")
        x = now(active_x)
    x, fill_value = splines.plain_arguments("interp1d", x=x, fill_value=fill_value)
    y = array(y, "scipy.interpolate.interp1d")
    si.interp1d.__init__(self, x, now(y), kind=kind, axis=axis, copy=copy,
                         bounds_error=bounds_error, fill_value=fill_value,
                         assume_sorted=assume_sorted)
    order = None if assume_sorted else np.argsort(np.asarray(x), kind="mergesort")
    if order is not None:
        y = np.take(y, order, axis=axis)
    if active_x is not None:
        if np.isnan(np.asarray(self.x)).any():
            raise UnsupportedOperation("adsim: interp1d with NaN in an active x: SciPy gives "
                                       "NaN everywhere; remove the NaN points")
        self._adsim_x = np.reshape(active_x, (-1,)) if order is None else \
            np.take(np.reshape(active_x, (-1,)), order)
    self.y = y
    self._y = np.reshape(np.moveaxis(y, self.axis, 0), (np.shape(y)[self.axis], -1))
    if self._kind == "spline":
        if np.isnan(np.asarray(self.x)).any():
            raise UnsupportedOperation("adsim: interp1d with NaN in x and active y: SciPy "
                                       "gives NaN everywhere; remove the NaN points")
        order, knots = self._spline.k, np.asarray(self._spline.t)
        if knots.size - order - 1 == len(self.x):      # a square collocation system
            splines.install(self._spline, collocation.coefficients(
                np.asarray(self.x, dtype=float), knots, order, self._y, [], []))
        else:
            def make(data, bc):
                return si.make_interp_spline(self.x, data, k=order, check_finite=False).c
            splines.install(self._spline, splines.affine_coefficients(make, self._y, None))
    self._adsim_extrapolated_fill = _do_extrapolate(fill_value)


def _do_extrapolate(fill_value):
    return isinstance(fill_value, str) and fill_value == "extrapolate"


def _sample_points(self):
    """The sample points, sorted: the active ones where they are (linear)."""
    x = getattr(self, "_adsim_x", None)
    return np.asarray(self.x) if x is None else x


def _values(self, xf):
    """The interpolant at the flat points ``xf``, shape (len(xf), columns)."""
    x, y2, n = _sample_points(self), self._y, len(self.x)
    kind = self._kind
    if kind == "linear":
        hi = np.clip(np.searchsorted(x, xf), 1, n - 1)
        lo = hi - 1
        slope = (y2[hi] - y2[lo]) / (x[hi] - x[lo])[:, None]
        return slope * (xf - x[lo])[:, None] + y2[lo]
    if kind in ("nearest", "nearest-up"):
        return y2[np.clip(np.searchsorted(self.x_bds, xf, side=self._side), 0, n - 1)]
    if kind in ("previous", "next"):
        i = np.clip(np.searchsorted(self._x_shift, xf, side=self._side), 1 - self._ind,
                    n - self._ind)
        return y2[i + self._ind - 1]
    return splines.bspline_call(self._spline, xf)


def _fills(self):
    """(below, above) fill values as rows (1, columns); the ends of the data
    for ``previous``/``next`` extrapolation, as SciPy sets them."""
    columns = self._y.shape[1]
    below = np.reshape(np.broadcast_to(np.ravel(self._fill_value_below), (columns,)), (1, -1))
    above = np.reshape(np.broadcast_to(np.ravel(self._fill_value_above), (columns,)), (1, -1))
    if getattr(self, "_adsim_extrapolated_fill", False) and self._kind == "previous":
        above = self._y[-1:]
    elif getattr(self, "_adsim_extrapolated_fill", False) and self._kind == "next":
        below = self._y[:1]
    return below, above


def interp1d_call(self, x):
    if not isinstance(self, si.interp1d):
        raise UnsupportedOperation(f"adsim: scipy.interpolate.{type(self).__name__} with active "
                                   f"arguments is not supported; use interp1d, CubicSpline, "
                                   f"make_interp_spline or PchipInterpolator")
    x = array(x, "scipy.interpolate.interp1d")
    x_shape = np.shape(x)
    xf = np.reshape(x, (-1,))
    out = _values(self, xf)
    if not self._extrapolate:
        x = _sample_points(self)
        below, above = xf < x[0], xf > x[-1]
        if self.bounds_error and (np.any(below) or np.any(above)):
            self._check_bounds(now(xf))         # raises SciPy's ValueError
        fill_below, fill_above = _fills(self)
        out = np.where(below[:, None], fill_below, np.where(above[:, None], fill_above, out))
    return self._finish_y(out, x_shape)
