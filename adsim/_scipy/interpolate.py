"""``scipy.interpolate`` on active data and at active points: the rule
table. The rules: splines.py (piecewise polynomials and splines),
interp1d.py, grids.py (regular grids and bivariate splines); the recorded
evaluation of piecewise polynomials: piecewise.py.

A constructor is routed when its data are active; a method of an object
when its argument is, or when the object holds active coefficients (made
by a routed constructor): ``routes_also`` looks at the object.
"""
from . import splines

_PP = "scipy.interpolate._interpolate"
_CUBIC = "scipy.interpolate._cubic"
_BSPL = "scipy.interpolate._bsplines"


def _holds_active(args, kwargs):
    """Whether the object a method is called on holds active data."""
    return bool(args) and splines.coefficients_active(args[0])


_METHODS = {
    (_PP, "_PPolyBase.__call__"): splines.ppoly_call,
    (_PP, "PPoly.derivative"): splines.ppoly_derivative,
    (_PP, "PPoly.antiderivative"): splines.ppoly_antiderivative,
    (_PP, "PPoly.integrate"): splines.ppoly_integrate,
    (_BSPL, "BSpline.__call__"): splines.bspline_call,
    (_BSPL, "BSpline.derivative"): splines.bspline_derivative,
    (_BSPL, "BSpline.antiderivative"): splines.bspline_antiderivative,
    (_BSPL, "BSpline.integrate"): splines.bspline_integrate,
}
for _rule in _METHODS.values():
    _rule.routes_also = _holds_active

HOOKS = {
    **_METHODS,
    (_CUBIC, "CubicSpline.__init__"): splines.cubic_spline_init,
    (_CUBIC, "CubicHermiteSpline.__init__"): splines.cubic_hermite_init,
    (_CUBIC, "PchipInterpolator.__init__"): splines.pchip_init,
    (_CUBIC, "Akima1DInterpolator.__init__"): splines.akima_init,
    ("scipy.interpolate", "make_interp_spline"): splines.make_interp_spline,
}

# the classes adsim.scipy.interpolate publishes routed (explicit.py)
CLASSES = ("PPoly", "BSpline", "CubicSpline", "CubicHermiteSpline", "PchipInterpolator",
           "Akima1DInterpolator")


def covers(obj):
    """No instance of scipy.interpolate is published (classes are: CLASSES)."""
    return False
