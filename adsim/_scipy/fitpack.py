"""FITPACK's interpolating splines with active data values or at active
points: ``splrep`` (``s=0``, the default without weights), ``splev``,
``splint``, ``splder``, ``splantider``, and the classes
``InterpolatedUnivariateSpline`` and ``UnivariateSpline`` with ``s=0``.

With s = 0 FITPACK's spline interpolates the data on knots that depend on
the sample points alone: it is the B-spline ``make_interp_spline(x, y, k,
t=knots)`` gives with FITPACK's knots (one banded collocation solve,
splines.py and collocation.py), so its coefficients are affine in y and
every mode differentiates them. Evaluation, derivatives, antiderivatives
and integrals are those of adsim's BSpline rules on the coefficients
(padded with k + 1 zeros, as FITPACK stores them). ``ext`` follows
FITPACK: 0 extrapolates the end pieces, 1 gives 0 outside the base
interval, 2 raises ValueError, 3 evaluates at the nearest end (the
derivative in a point outside is then 0).

A smoothing spline (s > 0, or ``UnivariateSpline``'s default s, or
``splrep`` with weights and no s) places its knots by the data values and
is refused by name, as are given knots, periodic splines and the methods
without a rule (``roots``, ``get_coeffs``, ...).
"""
import numpy as np
import scipy.interpolate as si
from scipy.interpolate._fitpack2 import _extrap_modes

from .._active import Active
from ..errors import UnsupportedOperation
from . import splines
from .arrays import array, now

_FP2 = "scipy.interpolate._fitpack2"


def _smoothing_refused(name, why):
    return UnsupportedOperation(
        f"adsim: scipy.interpolate.{name} with active data is differentiated for "
        f"interpolating splines (s=0) only, not {why}: a smoothing spline's knots depend on "
        f"the data values. Use s=0, or make_interp_spline, or fit the smoothing spline as a "
        f"penalised least-squares problem with np.linalg.solve")


def _interpolating_coefficients(x, y, k, knots):
    """FITPACK's coefficients (length len(knots), the last k + 1 zero) of
    the spline through (x, y) on ``knots``."""
    spline = splines.make_interp_spline(x, y, k=k, t=knots)
    return np.concatenate([spline._c, np.zeros(k + 1)])


def splrep(x, y, w=None, xb=None, xe=None, k=3, task=0, s=None, t=None, full_output=0,
           per=0, quiet=1):
    x, w, xb, xe, t, s = splines.plain_arguments("splrep", x=x, w=w, xb=xb, xe=xe, t=t, s=s)
    if s is None and w is not None:
        raise _smoothing_refused("splrep", "weights without s (s = m - sqrt(2 m) then)")
    if s is not None and s != 0:
        raise _smoothing_refused("splrep", f"s={s}")
    if task != 0 or t is not None or per or full_output:
        raise UnsupportedOperation("adsim: scipy.interpolate.splrep with active data takes "
                                   "task=0, no knots t, per=0 and full_output=0")
    y = array(y, "scipy.interpolate.splrep")
    knots, _, k = si.splrep(x, now(y), w=w, xb=xb, xe=xe, k=k, s=0)
    return knots, _interpolating_coefficients(x, y, k, knots), k


def _bspline(t, c, k):
    """adsim's BSpline of FITPACK's (t, c, k) (c may be active)."""
    t = np.asarray(t, dtype=float)
    n = t.size - k - 1
    c = array(c, "scipy.interpolate.splev") if isinstance(c, Active) else \
        np.asarray(c, dtype=float)
    if np.ndim(c) != 1:
        raise UnsupportedOperation("adsim: scipy.interpolate.splev of a parametric spline "
                                   "(splprep's coefficients) with active values is not "
                                   "supported")
    spline = si.BSpline.construct_fast(t, np.zeros(n), k, True, 0)
    return splines.install(spline, c[:n])


def _tck(tck, name):
    if isinstance(tck, si.BSpline):
        raise UnsupportedOperation(f"adsim: scipy.interpolate.{name} of a BSpline with active "
                                   f"values: call the BSpline itself")
    t, c, k = tck
    (t,) = splines.plain_arguments(name, t=t)
    return np.asarray(t, dtype=float), c, int(k)


def _evaluate(x, t, c, k, der, ext):
    x = array(x, "scipy.interpolate.splev")
    if ext not in (0, 1, 2, 3):
        raise ValueError(f"ext = {ext} not in (0, 1, 2, 3) ")       # SciPy's words
    n = t.size - k - 1
    low, high = t[k], t[n]
    outside = (now(x) < low) | (now(x) > high)
    if ext == 2 and np.any(outside):
        raise ValueError("Error code returned by bispev: x value out of bounds")  # SciPy's
    if ext == 3:
        x = np.clip(x, low, high)
    out = splines.bspline_call(_bspline(t, c, k), x, der, True)
    if ext == 1:
        out = np.where((x < low) | (x > high), 0.0, out)
    return out


def splev(x, tck, der=0, ext=0):
    t, c, k = _tck(tck, "splev")
    return _evaluate(x, t, c, k, der, ext)


def splint(a, b, tck, full_output=0):
    t, c, k = _tck(tck, "splint")
    if full_output:
        raise UnsupportedOperation("adsim: scipy.interpolate.splint with active values takes "
                                   "full_output=0")
    return splines.bspline_integrate(_bspline(t, c, k), a, b, extrapolate=False)


def _fitpack_form(spline):
    """(t, c padded with zeros to the length of t, k) of one of adsim's
    BSplines, as FITPACK stores them."""
    t = np.asarray(spline.t)
    pad = t.size - np.shape(spline._c)[0]
    return t, np.concatenate([spline._c, np.zeros(pad)]) if pad > 0 else spline._c, spline.k


def splder(tck, n=1):
    t, c, k = _tck(tck, "splder")
    return _fitpack_form(splines.bspline_derivative(_bspline(t, c, k), n))


def splantider(tck, n=1):
    t, c, k = _tck(tck, "splantider")
    return _fitpack_form(splines.bspline_antiderivative(_bspline(t, c, k), n))


# ---------------------------------------------------------------- the classes

def univariate_spline_init(self, x, y, w=None, bbox=[None, None], k=3, s=None, ext=0,
                           check_finite=False):
    if s is None or s != 0:
        raise _smoothing_refused(type(self).__name__, "s=None (the default: s = len(x))"
                                 if s is None else f"s={s}")
    _init(self, x, y, w, bbox, k, 0, ext, check_finite)


def interpolated_univariate_spline_init(self, x, y, w=None, bbox=[None, None], k=3, ext=0,
                                        check_finite=False):
    _init(self, x, y, w, bbox, k, 0, ext, check_finite)


def _init(self, x, y, w, bbox, k, s, ext, check_finite):
    name = type(self).__name__
    x, w, bbox = splines.plain_arguments(name, x=x, w=w, bbox=bbox)
    y = array(y, f"scipy.interpolate.{name}")
    si.UnivariateSpline.__init__(self, x, now(y), w=w, bbox=bbox, k=k, s=s, ext=ext,
                                 check_finite=check_finite)
    t, _, k = self._eval_args
    self._c = _interpolating_coefficients(x, y, k, np.asarray(t))


def _coefficients(self):
    t, c, k = self._eval_args
    active = self.__dict__.get("_c")
    return np.asarray(t, dtype=float), (c if active is None else active), k


def spline_call(self, x, nu=0, ext=None):
    t, c, k = _coefficients(self)
    if ext is not None and ext not in _extrap_modes:
        raise ValueError(f"Unknown extrapolation mode {ext}.")      # SciPy's words
    return _evaluate(x, t, c, k, nu, self.ext if ext is None else _extrap_modes[ext])


def _from_form(self, form, ext):
    """A spline of self's class (so adsim.scipy's routed class stays
    routed) from FITPACK's (t, c, k), c active."""
    t, c, k = form
    made = type(self)._from_tck((t, now(c), k), ext=ext)
    made._c = c
    return made


def spline_derivative(self, n=1):
    t, c, k = _coefficients(self)
    return _from_form(self, splder((t, c, k), n), 1 if self.ext == 3 else self.ext)


def spline_antiderivative(self, n=1):
    t, c, k = _coefficients(self)
    return _from_form(self, splantider((t, c, k), n), self.ext)


def spline_integral(self, a, b):
    t, c, k = _coefficients(self)
    return splint(a, b, (t, c, k))


METHODS = {
    (_FP2, "UnivariateSpline.__call__"): spline_call,
    (_FP2, "UnivariateSpline.derivative"): spline_derivative,
    (_FP2, "UnivariateSpline.antiderivative"): spline_antiderivative,
    (_FP2, "UnivariateSpline.integral"): spline_integral,
}
UNSUPPORTED_METHODS = ("roots", "get_coeffs", "get_residual", "set_smoothing_factor",
                       "derivatives")
CONSTRUCTORS = {
    (_FP2, "UnivariateSpline.__init__"): univariate_spline_init,
    (_FP2, "InterpolatedUnivariateSpline.__init__"): interpolated_univariate_spline_init,
    ("scipy.interpolate", "splrep"): splrep,
    ("scipy.interpolate", "splev"): splev,
    ("scipy.interpolate", "splint"): splint,
    ("scipy.interpolate", "splder"): splder,
    ("scipy.interpolate", "splantider"): splantider,
}
