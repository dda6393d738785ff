"""``scipy.interpolate``'s piecewise polynomials and splines with active
data values or at active points: ``CubicSpline`` (every ``bc_type``),
``CubicHermiteSpline``, ``PchipInterpolator``, ``Akima1DInterpolator``
(``akima``, ``makima``), ``PPoly``, ``make_interp_spline`` and ``BSpline``.

Construction with active ``y`` runs SciPy's constructor on the current
values (its checks, its attributes), then puts active coefficients in the
object, so that evaluating it, its ``derivative``, ``antiderivative`` and
``integrate`` are recorded (piecewise.py); a method without a rule meets
the active coefficients and raises UnsupportedOperation naming itself.

- ``CubicSpline`` and ``make_interp_spline`` coefficients are affine in
  y: an interpolating B-spline is one banded collocation solve
  (collocation.py), and ``CubicSpline`` the Taylor coefficients at its
  breaks of the cubic B-spline with the same ends. Where there is no such
  solve (periodic ends, not-a-knot at one end only) the map is SciPy's
  own constructor applied to the unit vectors (the offset: applied to
  zeros), recorded as one tensor product with y, for at most
  MAX_DENSE_POINTS points. Periodic data tie y[-1] to y[0]: the
  coefficients are then a map of y[:-1].
- ``CubicHermiteSpline`` coefficients are linear in (y, dydx); PCHIP and
  Akima slopes are nonlinear in y: they are written here with recorded
  operations after SciPy's formulas (the branches where a slope is set to
  zero, or where Akima's weights vanish, are recorded comparisons).

Boundary derivative values (``bc_type=((1, slope), (2, 0.0))``) may be
active where the coefficients are the banded collocation solve: they are
its right-hand side beside y. Active sample points ``x`` (the breaks) and
knots ``t`` are refused by name (constants made in the recorded function
pass), and so are active boundary values elsewhere.
"""
import numpy as np
import scipy.interpolate as si

from .._active import Active
from .._np.core import active_leaves
from .._np.integers import plain_if_constant
from ..errors import UnsupportedOperation
from . import collocation, piecewise
from .arrays import array, now


def plain_arguments(name, **values):
    """The arguments ``values`` (sample points, knots, boundary or fill
    values) as plain values, in order: constants made in the recorded
    function pass; an active one is refused by name."""
    out = []
    for what, v in values.items():
        v = _plain_if_constant(v)
        if active_leaves(v) or isinstance(v, Active):
            raise UnsupportedOperation(
                f"adsim: scipy.interpolate.{name} with active {what} is not differentiated "
                f"(only the data values and the points of evaluation are); pass {what} as "
                f"plain values (adsim.value({what}) if no derivative through it is wanted)")
        out.append(v)
    return out


def boundary_conditions(name, bc):
    """``bc_type`` as SciPy takes it (each boundary value as it is now) and
    as the coefficients take it (a boundary value active where it is: the
    coefficients are affine in the boundary values as in y), and whether
    any is active. Anything else active in it (an order) is refused by name."""
    if isinstance(bc, tuple) and len(bc) == 2 and isinstance(bc[0], (int, np.integer)):
        value = _plain_if_constant(bc[1])
        if isinstance(value, Active) or active_leaves(value):
            value = array(value, f"scipy.interpolate.{name}")
            return (bc[0], now(value)), (bc[0], value), True
        return bc, bc, False
    if isinstance(bc, (list, tuple)):
        parts = [boundary_conditions(name, b) for b in bc]
        return (type(bc)(p for p, _, _ in parts), type(bc)(a for _, a, _ in parts),
                any(active for _, _, active in parts))
    (bc,) = plain_arguments(name, bc_type=bc)
    return bc, bc, False


def _refuse_active_ends(name, why):
    raise UnsupportedOperation(
        f"adsim: scipy.interpolate.{name} with active boundary derivative values is "
        f"differentiated where the spline is an interpolating B-spline with those end "
        f"conditions at four or more points, not {why}; pass the values plain "
        f"(adsim.value(...)) if no derivative through them is wanted")


def _plain_if_constant(v):
    if isinstance(v, (list, tuple)):
        return type(v)(_plain_if_constant(e) for e in v)
    return plain_if_constant(v)


def coefficients_active(obj):
    """Whether the SciPy object's coefficients are active (made here)."""
    return isinstance(getattr(obj, "_c", None), Active)


def _homogeneous(bc, trailing):
    """``bc_type`` with every boundary derivative value set to zeros of
    shape ``trailing`` (the linear part of the map from y to coefficients)."""
    if isinstance(bc, tuple) and len(bc) == 2 and isinstance(bc[0], (int, np.integer)):
        return (bc[0], np.zeros(trailing))
    if isinstance(bc, (list, tuple)):
        return type(bc)(_homogeneous(b, trailing) for b in bc)
    return bc


# the map from n data values to coefficients is held dense (about 4 n^2
# numbers): beyond this many points it would take hundreds of megabytes
MAX_DENSE_POINTS = 2500


def affine_coefficients(make, y0, bc):
    """make(data, bc) -> plain coefficients, affine in data along axis 0:
    the coefficients for the active data y0 (n, *trailing), recorded as
    basis @ y0 + offset."""
    n = y0.shape[0]
    if n > MAX_DENSE_POINTS:
        raise UnsupportedOperation(
            f"adsim: a spline through {n} active data values: adsim holds the linear map from "
            f"the data to the spline's coefficients as a dense array (about {4 * n * n * 8 >> 20} "
            f"MB), and does so for at most {MAX_DENSE_POINTS} points. Fit splines to pieces of "
            f"the data, use interp1d(kind='linear') or PchipInterpolator (no such map), or pass "
            f"plain data (adsim.value(y)) if no derivative in it is wanted")
    if isinstance(bc, str) and bc == "periodic":
        tie = np.eye(n)[:, :n - 1]          # y[-1] = y[0]: a map of y[:-1]
        tie[-1, 0] = 1.0
        basis = make(tie, bc)
        return np.tensordot(basis, y0[:n - 1], axes=([basis.ndim - 1], [0]))
    basis = make(np.eye(n), _homogeneous(bc, (n,)))
    out = np.tensordot(basis, y0, axes=([basis.ndim - 1], [0]))
    if _has_values(bc):
        out = out + make(np.zeros(np.shape(y0)), bc)
    return out


def _has_values(bc):
    """Whether ``bc_type`` gives boundary derivative values (an offset)."""
    if isinstance(bc, tuple) and len(bc) == 2 and isinstance(bc[0], (int, np.integer)):
        return True
    return isinstance(bc, (list, tuple)) and any(_has_values(b) for b in bc)


def _moved(y, axis, name):
    y = array(y, f"scipy.interpolate.{name}")
    return y, np.moveaxis(y, axis % max(np.ndim(y), 1), 0)


def install(obj, c):
    """Put the active coefficients ``c`` into SciPy's object; returns it."""
    obj._c = c
    return obj


# ---------------------------------------------------------------- constructors

def cubic_spline_init(self, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
    (x,) = plain_arguments("CubicSpline", x=x)
    bc_type, bc_active, active_ends = boundary_conditions("CubicSpline", bc_type)
    y, y0 = _moved(y, axis, "CubicSpline")
    si.CubicSpline.__init__(self, x, now(y), axis=axis, bc_type=bc_type,
                            extrapolate=extrapolate)
    breaks = np.asarray(self._x)
    ends = _bspline_conditions(bc_active)
    if ends is not None and breaks.size >= 4:
        install(self, _cubic_from_bspline(breaks, y0, ends))
        return
    if active_ends:
        _refuse_active_ends("CubicSpline", f"with bc_type {bc_type!r} at {breaks.size} points")

    def make(data, bc):
        return si.CubicSpline(breaks, data, axis=0, bc_type=bc).c
    install(self, affine_coefficients(make, y0, bc_type))


def _bspline_conditions(bc_type):
    """CubicSpline's ``bc_type`` as make_interp_spline's end conditions (the
    same cubic spline): (left, right) lists of (order, value), or None where
    it has no such form (periodic; not-a-knot at one end only)."""
    if isinstance(bc_type, str) and bc_type != "periodic":
        return collocation.conditions(bc_type)
    if isinstance(bc_type, str):
        return None
    aliases = {"clamped": (1, 0.0), "natural": (2, 0.0)}
    ends = [aliases.get(e, e) if isinstance(e, str) else e for e in bc_type]
    if any(isinstance(e, str) for e in ends):
        return None
    return [tuple(ends[0])], [tuple(ends[1])]


def _cubic_from_bspline(breaks, y0, ends):
    """CubicSpline's coefficients from the cubic B-spline through the data
    (a banded solve, collocation.py): each piece's Taylor coefficients at
    its break, recorded."""
    left, right = ends
    # the knots depend on the conditions' orders alone: scalar zeros stand for
    # the values (which may be active, or vectors for vector-valued data)
    bc = ([(o, 0.0) for o, _ in left], [(o, 0.0) for o, _ in right]) if left or right else None
    t = si.make_interp_spline(breaks, np.zeros(breaks.size), k=3, bc_type=bc).t
    c = collocation.coefficients(breaks, t, 3, y0, left, right)
    pieces, pp = piecewise.bspline_pieces(t, 3, c)
    taylor = [piecewise.evaluate(pp, pieces, breaks[:-1], nu=m) / (1.0, 1.0, 2.0, 6.0)[m]
              for m in (3, 2, 1, 0)]
    return np.stack(taylor)


def hermite_coefficients(x, y0, dydx0):
    """PPoly coefficients of the cubic Hermite interpolant (SciPy's
    CubicHermiteSpline formula), recorded: linear in y and dydx."""
    dx = np.diff(np.asarray(x, dtype=float)).reshape((-1,) + (1,) * (np.ndim(y0) - 1))
    slope = np.diff(y0, axis=0) / dx
    t = (dydx0[:-1] + dydx0[1:] - 2 * slope) / dx
    return np.stack((t / dx, (slope - dydx0[:-1]) / dx - t, dydx0[:-1], y0[:-1]))


def cubic_hermite_init(self, x, y, dydx, axis=0, extrapolate=None):
    (x,) = plain_arguments("CubicHermiteSpline", x=x)
    y, y0 = _moved(y, axis, "CubicHermiteSpline")
    dydx, d0 = _moved(dydx, axis, "CubicHermiteSpline")
    si.CubicHermiteSpline.__init__(self, x, now(y), now(dydx), axis=axis,
                                   extrapolate=extrapolate)
    install(self, hermite_coefficients(self._x, y0, d0))


def _pchip_edge(h0, h1, m0, m1):
    """SciPy's one-sided three-point end slope, kept shape-preserving."""
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    flipped = np.sign(d) != np.sign(m0)
    overshoot = (np.sign(m0) != np.sign(m1)) & (np.abs(d) > 3.0 * np.abs(m0))
    return np.where(flipped, 0.0 * d, np.where(overshoot, 3.0 * m0, d))


def pchip_slopes(x, y0):
    """PCHIP's slopes at the data points (Fritsch-Carlson weighted harmonic
    means, zero at extrema), recorded."""
    h = np.diff(np.asarray(x, dtype=float)).reshape((-1,) + (1,) * (np.ndim(y0) - 1))
    m = np.diff(y0, axis=0) / h
    if y0.shape[0] == 2:
        return np.concatenate([m, m], axis=0)
    flat = (np.sign(m[1:]) != np.sign(m[:-1])) | (m[1:] == 0) | (m[:-1] == 0)
    w1 = 2 * h[1:] + h[:-1]
    w2 = h[1:] + 2 * h[:-1]
    m0, m1 = np.where(flat, 1.0, m[:-1]), np.where(flat, 1.0, m[1:])
    inner = np.where(flat, 0.0, (w1 + w2) / (w1 / m0 + w2 / m1))
    first = _pchip_edge(h[0], h[1], m[0], m[1])
    last = _pchip_edge(h[-1], h[-2], m[-1], m[-2])
    return np.concatenate([first[None], inner, last[None]], axis=0)


def pchip_init(self, x, y, axis=0, extrapolate=None):
    (x,) = plain_arguments("PchipInterpolator", x=x)
    y, y0 = _moved(y, axis, "PchipInterpolator")
    si.PchipInterpolator.__init__(self, x, now(y), axis=axis, extrapolate=extrapolate)
    install(self, hermite_coefficients(self._x, y0, pchip_slopes(self._x, y0)))


def akima_slopes(x, y0, method):
    """Akima's (or modified Akima's) slopes, recorded after SciPy's
    formula: two extrapolated secants at each end, weights |m_{i+1} - m_i|
    (+ |m_{i+1} + m_i| / 2 for makima), the mean of the neighbouring
    secants where both weights vanish."""
    h = np.diff(np.asarray(x, dtype=float)).reshape((-1,) + (1,) * (np.ndim(y0) - 1))
    secants = np.diff(y0, axis=0) / h
    left1 = 2.0 * secants[0] - secants[1]
    left0 = 2.0 * left1 - secants[0]
    right1 = 2.0 * secants[-1] - secants[-2]
    right2 = 2.0 * right1 - secants[-1]
    m = np.concatenate([left0[None], left1[None], secants, right1[None], right2[None]], axis=0)
    mean = 0.5 * (m[3:] + m[:-3])
    dm = np.abs(np.diff(m, axis=0))
    if method == "makima":
        pm = np.abs(m[1:] + m[:-1])
        f1, f2 = dm[2:] + 0.5 * pm[2:], dm[:-2] + 0.5 * pm[:-2]
    else:
        f1, f2 = dm[2:], dm[:-2]
    f12 = f1 + f2
    defined = f12 > 1e-9 * np.max(f12)
    safe = np.where(defined, f12, 1.0)
    weighted = m[1:-2] + (f2 / safe) * (m[2:-1] - m[1:-2])
    return np.where(defined, weighted, mean)


def akima_init(self, x, y, axis=0, *, method="akima", extrapolate=None):
    (x,) = plain_arguments("Akima1DInterpolator", x=x)
    y, y0 = _moved(y, axis, "Akima1DInterpolator")
    si.Akima1DInterpolator.__init__(self, x, now(y), axis=axis, method=method,
                                    extrapolate=extrapolate)
    install(self, hermite_coefficients(self._x, y0, akima_slopes(self._x, y0, method)))


def make_interp_spline(x, y, k=3, t=None, bc_type=None, axis=0, check_finite=True):
    x, t = plain_arguments("make_interp_spline", x=x, t=t)
    bc_type, bc_active, active_ends = boundary_conditions("make_interp_spline", bc_type)
    y, y0 = _moved(y, axis, "make_interp_spline")
    spline = si.make_interp_spline(x, now(y), k=k, t=t, bc_type=bc_type, axis=axis,
                                   check_finite=check_finite)

    ends = collocation.conditions(bc_active)
    if ends is not None:
        return install(spline, collocation.coefficients(np.asarray(x, dtype=float), spline.t, k,
                                                        y0, *ends))
    if active_ends:
        _refuse_active_ends("make_interp_spline", f"with bc_type {bc_type!r}")

    def make(data, bc):
        return si.make_interp_spline(x, data, k=k, t=t, bc_type=bc, axis=0).c
    return install(spline, affine_coefficients(make, y0, bc_type))


def ppoly_init(self, c, x, extrapolate=None, axis=0):
    if not isinstance(self, si.PPoly):
        raise UnsupportedOperation(f"adsim: scipy.interpolate.{type(self).__name__} with active "
                                   f"coefficients is not supported; use PPoly")
    (x,) = plain_arguments("PPoly", x=x)
    c = array(c, "scipy.interpolate.PPoly")
    si.PPoly.__init__(self, now(c), x, extrapolate=extrapolate, axis=axis)
    if axis != 0:                       # SciPy's order: (k, m, ...) first
        c = np.moveaxis(np.moveaxis(c, axis + 1, 0), axis + 1, 0)
    install(self, c)


def bspline_init(self, t, c, k, extrapolate=True, axis=0):
    (t,) = plain_arguments("BSpline", t=t)
    c = array(c, "scipy.interpolate.BSpline")
    si.BSpline.__init__(self, t, now(c), k, extrapolate=extrapolate, axis=axis)
    install(self, np.moveaxis(c, self.axis, 0) if self.axis else c)


# ---------------------------------------------------------------- PPoly methods

def _increasing(self, name):
    breaks = np.asarray(self._x)
    if not isinstance(self, si.PPoly):
        raise UnsupportedOperation(f"adsim: {type(self).__name__}.{name} with active "
                                   f"arguments is not supported; convert to a PPoly first")
    if breaks.size > 1 and breaks[-1] < breaks[0]:
        raise UnsupportedOperation(f"adsim: PPoly.{name} with decreasing breaks and active "
                                   f"arguments is not supported; reverse the breaks")
    return breaks


def _extrapolation(self, extrapolate):
    return self.extrapolate if extrapolate is None else extrapolate


def ppoly_call(self, x, nu=0, extrapolate=None):
    breaks = _increasing(self, "__call__")
    x = array(x, f"scipy.interpolate.{type(self).__name__}")
    out = piecewise.evaluate(self._c, breaks, x, nu, _extrapolation(self, extrapolate))
    return piecewise.to_axis(out, np.ndim(x), self.axis)


def _like(self, c, breaks, extrapolate):
    made = type(self).construct_fast(np.zeros(np.shape(c)), breaks, extrapolate, self.axis)
    return install(made, c)


def ppoly_derivative(self, nu=1):
    if nu < 0:
        return ppoly_antiderivative(self, -nu)
    breaks = _increasing(self, "derivative")
    return _like(self, piecewise.derivative_coefficients(self._c, nu), breaks, self.extrapolate)


def ppoly_antiderivative(self, nu=1):
    if nu <= 0:
        return ppoly_derivative(self, -nu)
    breaks = _increasing(self, "antiderivative")
    extrapolate = False if self.extrapolate == "periodic" else self.extrapolate
    return _like(self, piecewise.antiderivative_coefficients(self._c, breaks, nu), breaks,
                 extrapolate)


def ppoly_integrate(self, a, b, extrapolate=None):
    breaks = _increasing(self, "integrate")
    name = f"scipy.interpolate.{type(self).__name__}.integrate"
    return piecewise.integral(self._c, breaks, array(a, name), array(b, name),
                              _extrapolation(self, extrapolate))


# ---------------------------------------------------------------- BSpline methods

def _base(self):
    """(breaks, PPoly coefficients) of the spline on its base interval
    t[k] .. t[n], where BSpline evaluates (and extrapolates from the end
    pieces)."""
    return piecewise.bspline_pieces(self._t, self.k, self._c)


def bspline_call(self, x, nu=0, extrapolate=None):
    x = array(x, "scipy.interpolate.BSpline")
    breaks, c = _base(self)
    out = piecewise.evaluate(c, breaks, x, nu, _extrapolation(self, extrapolate))
    return piecewise.to_axis(out, np.ndim(x), self.axis)


def _linear_in_c(self, method):
    """A BSpline made from self by ``method`` (derivative, antiderivative),
    which is linear in the coefficients: SciPy's method applied to the
    unit coefficients, recorded as one product with the active ones."""
    n = np.shape(self._c)[0]
    unit = method(si.BSpline.construct_fast(np.asarray(self._t), np.eye(n), self.k,
                                            self.extrapolate, 0))
    c = np.tensordot(np.asarray(unit.c), self._c, axes=([1], [0]))
    made = type(self).construct_fast(np.asarray(unit.t), np.zeros(np.shape(c)), unit.k,
                                     self.extrapolate, self.axis)
    return install(made, c)


def bspline_derivative(self, nu=1):
    return _linear_in_c(self, lambda s: s.derivative(nu))


def bspline_antiderivative(self, nu=1):
    return _linear_in_c(self, lambda s: s.antiderivative(nu))


def bspline_integrate(self, a, b, extrapolate=None):
    name = "scipy.interpolate.BSpline.integrate"
    extrapolate = _extrapolation(self, extrapolate)
    if extrapolate == "periodic":
        raise UnsupportedOperation(f"adsim: {name} with periodic extrapolation and active "
                                   f"arguments is not supported")
    if not active_leaves((a, b)):
        n = np.shape(self._c)[0]
        weights = si.BSpline.construct_fast(np.asarray(self._t), np.eye(n), self.k,
                                            self.extrapolate, 0).integrate(a, b, extrapolate)
        return np.tensordot(np.asarray(weights), self._c, axes=([0], [0]))
    breaks, c = _base(self)
    a, b = array(a, name), array(b, name)
    if not extrapolate:                     # zero outside the base interval
        a, b = np.clip(a, breaks[0], breaks[-1]), np.clip(b, breaks[0], breaks[-1])
    return piecewise.integral(c, breaks, a, b, True)
