"""``scipy.interpolate`` on active data and at active points: the rule
table. The rules: splines.py (piecewise polynomials and splines),
fitpack.py (FITPACK's interpolating splines), scattered.py (griddata),
interp1d.py, grids.py (regular grids and bivariate splines); the recorded
evaluation of piecewise polynomials: piecewise.py.

A constructor is routed when its data are active; a method of an object
when its argument is, or when the object holds active coefficients (made
by a routed constructor): ``routes_also`` looks at the object.
"""
from .._active import Active
from ..errors import UnsupportedOperation
from . import bivariate, fitpack, grids, interp1d, scattered, splines

_PP = "scipy.interpolate._interpolate"
_CUBIC = "scipy.interpolate._cubic"
_BSPL = "scipy.interpolate._bsplines"


# where the objects keep data that routed constructors make active
_DATA = ("_c", "_y", "_values", "_adsim_d", "_adsim_x")


def _holds_active(args, kwargs):
    """Whether the object a method is called on holds active data."""
    return bool(args) and (any(isinstance(getattr(args[0], name, None), Active)
                               for name in _DATA)
                           or bivariate.holds_active_coefficients(args[0]))


_METHODS = {
    (_PP, "_PPolyBase.__call__"): splines.ppoly_call,
    (_PP, "PPoly.derivative"): splines.ppoly_derivative,
    (_PP, "PPoly.antiderivative"): splines.ppoly_antiderivative,
    (_PP, "PPoly.integrate"): splines.ppoly_integrate,
    (_BSPL, "BSpline.__call__"): splines.bspline_call,
    (_BSPL, "BSpline.derivative"): splines.bspline_derivative,
    (_BSPL, "BSpline.antiderivative"): splines.bspline_antiderivative,
    (_BSPL, "BSpline.integrate"): splines.bspline_integrate,
    ("scipy.interpolate._polyint", "_Interpolator1D.__call__"): interp1d.interp1d_call,
    ("scipy.interpolate._rgi", "RegularGridInterpolator.__call__"): grids.rgi_call,
    ("scipy.interpolate._fitpack2", "_BivariateSplineBase.__call__"): bivariate.rbs_call,
    ("scipy.interpolate._rbfinterp", "RBFInterpolator.__call__"): scattered.rbf_call,
}


def _unsupported(method):
    """The rule of a method without one, on an object holding active data:
    an error naming it (instead of an error from SciPy's compiled code)."""
    def rule(self, *args, **kwargs):
        raise UnsupportedOperation(
            f"adsim: scipy.interpolate.{type(self).__name__}.{method} on active data or "
            f"points is not supported; adsim differentiates evaluation, derivative, "
            f"antiderivative and integrate (docs/scipy.md). Call it on an object made from "
            f"plain values (adsim.value(y)) if no derivative is wanted")
    return rule


_METHODS.update({
    (_PP, "PPoly.roots"): _unsupported("roots"), (_PP, "PPoly.solve"): _unsupported("solve"),
    (_PP, "_PPolyBase.extend"): _unsupported("extend"),
    (_BSPL, "BSpline.insert_knot"): _unsupported("insert_knot"),
    ("scipy.interpolate._fitpack2", "BivariateSpline.integral"): _unsupported("integral"),
    ("scipy.interpolate._fitpack2", "_BivariateSplineBase.partial_derivative"):
        _unsupported("partial_derivative"),
    ("scipy.interpolate._fitpack2", "_BivariateSplineBase.get_coeffs"):
        _unsupported("get_coeffs"),
})

_METHODS.update(fitpack.METHODS)
_METHODS.update({("scipy.interpolate._fitpack2", f"UnivariateSpline.{name}"): _unsupported(name)
                 for name in fitpack.UNSUPPORTED_METHODS})
for _rule in _METHODS.values():
    _rule.routes_also = _holds_active



def _held(name):
    """The rule of a property getter (``spl.c``, ``rgi.values``): the data
    the object holds in ``name``, active (SciPy's getter would make them a
    plain array), in SciPy's layout, which the rules keep. It routes on
    that attribute alone: ``_holds_active`` reads ``tck``, which reads
    ``c``."""
    def rule(self):
        return getattr(self, name)
    rule.routes_also = lambda args, kwargs: isinstance(getattr(args[0], name, None), Active)
    return rule


HOOKS = {
    **_METHODS,
    (_PP, "_PPolyBase.c"): _held("_c"), (_BSPL, "BSpline.c"): _held("_c"),
    ("scipy.interpolate._rgi", "RegularGridInterpolator.values"): _held("_values"),
    (_CUBIC, "CubicSpline.__init__"): splines.cubic_spline_init,
    (_CUBIC, "CubicHermiteSpline.__init__"): splines.cubic_hermite_init,
    (_CUBIC, "PchipInterpolator.__init__"): splines.pchip_init,
    (_CUBIC, "Akima1DInterpolator.__init__"): splines.akima_init,
    ("scipy.interpolate", "make_interp_spline"): splines.make_interp_spline,
    (_PP, "_PPolyBase.__init__"): splines.ppoly_init,
    (_BSPL, "BSpline.__init__"): splines.bspline_init,
    (_PP, "interp1d.__init__"): interp1d.interp1d_init,
    ("scipy.interpolate._rgi", "RegularGridInterpolator.__init__"): grids.rgi_init,
    ("scipy.interpolate", "interpn"): grids.interpn,
    ("scipy.interpolate._fitpack2", "RectBivariateSpline.__init__"): bivariate.rbs_init,
    **fitpack.CONSTRUCTORS,
    ("scipy.interpolate", "griddata"): scattered.griddata,
    ("scipy.interpolate._rbfinterp", "RBFInterpolator.__init__"): scattered.rbf_init,
}

# the classes adsim.scipy.interpolate publishes routed (explicit.py)
CLASSES = ("PPoly", "BSpline", "CubicSpline", "CubicHermiteSpline", "PchipInterpolator",
           "Akima1DInterpolator", "interp1d", "RegularGridInterpolator",
           "RectBivariateSpline", "UnivariateSpline", "InterpolatedUnivariateSpline",
           "RBFInterpolator")


def covers(obj):
    """No instance of scipy.interpolate is published (classes are: CLASSES)."""
    return False
