"""scipy.interpolate's splines called unchanged on active data and at active
points: CubicSpline (every bc_type), CubicHermiteSpline, PchipInterpolator,
Akima1DInterpolator, make_interp_spline/BSpline and the PPoly methods
(derivative, antiderivative, integrate). Every sweep against central
differences and hvp against differences of the gradient (check_tape),
values against SciPy's, replays at new data, the side taken at a knot, and
the programs scientists write with them."""
import numpy as np
import pytest
import scipy.integrate as integrate
import scipy.interpolate as si

import adsim as ad
from adsim.errors import BranchChanged, UnsupportedOperation
from fdcheck import assert_close, central, check_tape

X = np.array([0.0, 0.3, 0.7, 1.2, 1.6, 2.0])
Y = np.sin(2.0 * X) + 0.3 * X
XQ = np.array([0.1, 0.55, 1.35, 1.95])
OUT = np.array([-0.3, 0.55, 2.4])           # two points outside the data

BC_TYPES = {"not-a-knot": "not-a-knot", "natural": "natural", "clamped": "clamped",
            "derivative values": ((1, 0.5), (2, -1.0))}

SPLINES = {
    **{f"CubicSpline {k}": (lambda bc: lambda y: si.CubicSpline(X, y, bc_type=bc))(bc)
       for k, bc in BC_TYPES.items()},
    "CubicSpline periodic": lambda y: si.CubicSpline(X, np.concatenate([y[:-1], y[:1]]),
                                                     bc_type="periodic"),
    "CubicHermiteSpline": lambda y: si.CubicHermiteSpline(X, y, np.cos(y)),
    "PchipInterpolator": lambda y: si.PchipInterpolator(X, y),
    "Akima1DInterpolator": lambda y: si.Akima1DInterpolator(X, y, extrapolate=True),
    "Akima1DInterpolator makima": lambda y: si.Akima1DInterpolator(X, y, method="makima",
                                                                   extrapolate=True),
    "make_interp_spline": lambda y: si.make_interp_spline(X, y),
    "make_interp_spline k=1": lambda y: si.make_interp_spline(X, y, k=1),
    "make_interp_spline k=5": lambda y: si.make_interp_spline(X, y, k=5),
    "make_interp_spline clamped": lambda y: si.make_interp_spline(X, y, bc_type="clamped"),
}


@pytest.mark.parametrize("name", sorted(SPLINES))
def test_spline_of_active_data_every_sweep(name):
    make = SPLINES[name]
    tape = check_tape(lambda y: make(y)(XQ), [Y], rtol=1e-6, value_rtol=1e-12,
                      value_atol=1e-13)
    assert_close(tape.forward(Y), make(Y)(XQ), rtol=1e-12, atol=1e-13)
    moved = Y + 0.01 * np.cos(X)          # a replay at new data (same branches)
    assert_close(tape.forward(moved), make(moved)(XQ), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", ["CubicSpline clamped", "PchipInterpolator",
                                  "Akima1DInterpolator makima", "make_interp_spline k=5"])
def test_spline_at_active_points_every_sweep(name):
    spline = SPLINES[name](Y)
    check_tape(lambda q: spline(q), [XQ], rtol=1e-6, value_rtol=1e-12, value_atol=1e-13)


@pytest.mark.parametrize("name", ["CubicSpline not-a-knot", "PchipInterpolator",
                                  "make_interp_spline"])
def test_derivatives_antiderivatives_and_integrals(name):
    make = SPLINES[name]
    check_tape(lambda y: make(y).derivative()(XQ), [Y], rtol=1e-6, order=1)
    check_tape(lambda y: make(y)(XQ, 2), [Y], rtol=1e-6, order=1)
    check_tape(lambda y: make(y).antiderivative()(OUT), [Y], rtol=1e-6, order=1)
    check_tape(lambda y: make(y).integrate(0.2, 1.7), [Y], rtol=1e-6, order=1)
    check_tape(lambda ab: SPLINES[name](Y).integrate(ab[0], ab[1]), [np.array([0.2, 1.7])],
               rtol=1e-6)


def test_extrapolation_and_nan_outside():
    check_tape(lambda y: si.CubicSpline(X, y)(OUT), [Y], rtol=1e-6, order=1)
    values = ad.record(lambda y: si.CubicSpline(X, y, extrapolate=False)(OUT), Y).forward(Y)
    assert np.isnan(values[0]) and np.isnan(values[2]) and np.isfinite(values[1])


def test_several_columns_along_an_axis():
    Y2 = np.stack([Y, Y ** 2, np.cos(Y)])           # 3 curves along axis 1
    check_tape(lambda y: si.CubicSpline(X, y, axis=1)(XQ), [Y2], rtol=1e-6, order=1)
    check_tape(lambda y: si.make_interp_spline(X, y.T)(XQ), [Y2], rtol=1e-6, order=1)


def test_at_a_knot_the_derivative_is_the_right_pieces():
    """PPoly's pieces are [x_i, x_{i+1}): at an inner knot the derivative
    in the point is that of the piece on the right (the second derivative
    jumps there for PCHIP)."""
    spline = si.PchipInterpolator(X, Y)
    knot = X[2]
    d2 = ad.grad(lambda q: spline(q, 1))(knot)
    right = spline(knot, 2)
    assert d2 == pytest.approx(float(right), rel=1e-10)
    left_piece = si.PPoly(spline.c[:, 1:2], X[1:3])
    assert abs(left_piece(knot, 2) - right) > 1e-3


def test_replay_at_points_in_other_pieces_raises_branch_changed():
    tape = ad.record(lambda q: si.CubicSpline(X, Y)(q), XQ)
    with pytest.raises(BranchChanged):
        tape.forward(XQ[::-1].copy())
    g = ad.jacobian(lambda q: si.CubicSpline(X, Y)(q))(XQ[::-1].copy())   # records again
    assert_close(np.diag(g), si.CubicSpline(X, Y)(XQ[::-1], 1), rtol=1e-12)


def test_spline_fitted_through_active_data_then_integrated():
    """A measured rate profile interpolated by a cubic spline and integrated,
    both with the spline's own integral and with quad (told where the knots
    are: the derivatives in the coefficients jump there)."""
    def total(y):
        rate = si.CubicSpline(X, y, bc_type="natural")
        return rate.integrate(0.0, 2.0) + integrate.quad(rate, 0.0, 2.0, points=X[1:-1])[0]
    value, g = ad.value_and_grad(total)(Y)
    assert value == pytest.approx(2.0 * si.CubicSpline(X, Y, bc_type="natural").integrate(0, 2),
                                  rel=1e-10)
    weights = si.CubicSpline(X, np.eye(6), bc_type="natural").integrate(0.0, 2.0)
    assert_close(g, 2.0 * weights, rtol=1e-8, atol=1e-12)


def test_refused_arguments_name_themselves():
    with pytest.raises(UnsupportedOperation, match="active x"):
        ad.grad(lambda x: np.sum(si.CubicSpline(x, Y)(XQ)))(X)
    with pytest.raises(UnsupportedOperation, match="roots"):
        ad.grad(lambda y: np.sum(si.CubicSpline(X, y).roots()))(Y)


ENDS = {
    "CubicSpline slopes": lambda p: si.CubicSpline(X, Y * p[2], bc_type=((1, p[0]), (1, p[1]))),
    "CubicSpline slope and curvature, plain data": lambda p: si.CubicSpline(
        X, Y, bc_type=((1, p[0]), (2, p[1] * p[2]))),
    "CubicSpline vector ends of 2-column data": lambda p: si.CubicSpline(
        X, np.stack([Y * p[2], Y ** 2], axis=1), bc_type=((1, [p[0], 0.5]), (2, [0.0, p[1]]))),
    "make_interp_spline": lambda p: si.make_interp_spline(
        X, Y * p[2], bc_type=([(1, p[0])], [(2, p[1])])),
}


@pytest.mark.parametrize("name", sorted(ENDS))
def test_active_boundary_derivative_values_every_sweep(name):
    """A clamped end's slope (or a curvature) from the parameters: the
    coefficients are the collocation solve of [ends; y], affine in the end
    values as in y (refused before)."""
    make = ENDS[name]
    p = np.array([0.4, -0.7, 1.2])
    tape = check_tape(lambda p: np.ravel(make(p)(XQ)), [p], rtol=1e-6, value_rtol=1e-12,
                      value_atol=1e-13)
    moved = p + np.array([0.1, 0.2, -0.1])
    assert_close(tape.forward(moved), np.ravel(make(moved)(XQ)), rtol=1e-12, atol=1e-13)


def test_active_boundary_values_without_a_collocation_form_are_refused():
    with pytest.raises(UnsupportedOperation, match="boundary derivative values"):
        ad.grad(lambda s: si.CubicSpline(X, Y, bc_type=((1, s), "not-a-knot"))(0.3))(0.5)
    with pytest.raises(UnsupportedOperation, match="boundary derivative values"):
        ad.grad(lambda s: si.CubicSpline(X[:3], Y[:3], bc_type=((1, s), (1, 0.0)))(0.3))(0.5)
    with pytest.raises(UnsupportedOperation, match="active bc_type"):
        ad.grad(lambda s: si.CubicSpline(X, Y, bc_type=((1 + 0 * s, 0.0), (1, 0.0)))(0.3))(0.5)


def test_large_data_through_the_banded_solve_and_the_dense_map_limit():
    """Splines through many active values are one banded solve (O(n) per
    sweep); a periodic spline keeps the dense map and refuses beyond it."""
    from adsim._scipy.splines import MAX_DENSE_POINTS
    n = MAX_DENSE_POINTS + 1
    x = np.linspace(0.0, 1.0, n)
    y = np.sin(5.0 * x)
    q = np.array([0.1234, 0.5678])
    for bc in ("not-a-knot", "natural", ((1, 0.3), (2, -1.0))):
        g = ad.grad(lambda y: np.sum(si.CubicSpline(x, y, bc_type=bc)(q)))(y)
        unit = np.zeros(n)
        unit[[617, 618, 619]] = 1.0                 # the data around q[0]
        assert g @ unit == pytest.approx(np.sum(si.CubicSpline(x, unit, bc_type=(
            bc if isinstance(bc, str) else ((1, 0.0), (2, 0.0))))(q)), abs=1e-12)
    with pytest.raises(UnsupportedOperation, match=f"{n} active data values"):
        ad.grad(lambda y: si.CubicSpline(x, np.concatenate([y[:-1], y[:1]]),
                                         bc_type="periodic")(0.5))(y)


@pytest.mark.parametrize("name", ["CubicSpline not-a-knot", "CubicSpline natural",
                                  "CubicSpline derivative values", "make_interp_spline",
                                  "make_interp_spline k=5"])
def test_data_derivatives_match_the_complex_step(name):
    """SciPy builds these splines from complex data too, and they are linear
    in it: Im f(y + i h v) / h is J v to rounding, a sharper reference than
    differences."""
    make = SPLINES[name]
    v = np.cos(3.0 * X)
    reference = np.imag(make(Y + 1e-20j * v)(XQ)) / 1e-20
    assert_close(ad.jvp(lambda y: make(y)(XQ), Y, v)[1], reference, rtol=1e-12, atol=1e-13)
    w = np.array([0.3, -1.0, 0.5, 2.0])
    J = np.stack([np.imag(make(Y + 1e-20j * e)(XQ)) / 1e-20 for e in np.eye(len(X))], axis=1)
    assert_close(ad.vjp(lambda y: make(y)(XQ), Y, w)[1], J.T @ w, rtol=1e-12, atol=1e-13)


def test_periodic_extrapolation_and_pchip_interpolate():
    x = np.linspace(0.0, 2.0 * np.pi, 7)
    y = np.sin(x)
    y[-1] = y[0]
    spline = si.CubicSpline(x, y, bc_type="periodic")        # extrapolates periodically
    q = np.array([-1.0, 7.5, 3.0])
    assert_close(np.diag(ad.jacobian(lambda q: spline(q))(q)), spline(q, 1), rtol=1e-12)
    check_tape(lambda y: si.pchip_interpolate(X, y, XQ, der=1), [Y], rtol=1e-6, order=1)


def test_a_large_plain_table_at_active_points_costs_little():
    """A B-spline's pieces come from SciPy's from_spline (plain coefficients)
    or from k + 1 conversions (active ones): no dense basis of the table."""
    x = np.linspace(0.0, 1.0, 20000)
    table = si.interp1d(x, np.sin(30.0 * x), kind="cubic")
    q = np.array([0.1234, 0.5678, 0.9012])
    g = ad.grad(lambda q: np.sum(table(q)))(q)
    assert_close(g, table._spline(q, 1)[:, 0], rtol=1e-10)
    spline = si.make_interp_spline(x[:2000], np.cos(x[:2000]))
    check_tape(lambda c: si.BSpline(spline.t, c, 3)(q[:2] / 10.0), [spline.c], rtol=1e-6,
               order=1)


def test_ppoly_and_bspline_made_from_active_coefficients():
    spline = si.CubicSpline(X, Y)
    check_tape(lambda c: si.PPoly(c, X)(XQ), [spline.c], rtol=1e-6)
    check_tape(lambda c: si.PPoly(c, X).integrate(0.1, 1.8), [spline.c], rtol=1e-6, order=1)
    b = si.make_interp_spline(X, Y)
    check_tape(lambda c: si.BSpline(b.t, c, 3).derivative()(XQ), [b.c], rtol=1e-6, order=1)


def test_interp1d_linear_on_active_sample_points():
    """A fitted breakpoint: interp1d's linear kind with active (unsorted) x,
    2-d y along axis 1, a fill pair and extrapolation, against differences;
    a replay whose points change order raises BranchChanged; the other kinds
    still refuse active x by name."""
    Q = np.array([-0.5, 0.2, 0.9, 1.4, 1.9, 2.5])

    def filled(p):
        xs = np.array([2.0, p[1], p[0], 0.0])
        line = si.interp1d(xs, np.array([2.0, 0.5, 1.0, 0.0]), bounds_error=False,
                           fill_value=(0.3, 0.7))
        return np.sum(line(Q) ** 2 * np.arange(1, 7))

    def extrapolated(p):
        line = si.interp1d(np.array([0.0, p[0], 2.0]),
                           np.array([[0.0, 1.0, 0.5], [1.0, 2.0, 3.0]]) * p[1], axis=1,
                           fill_value="extrapolate")
        return np.sum(line(Q[::2]) ** 2)

    p = np.array([0.6, 1.3])
    for f in (filled, extrapolated):
        want = [central(f, [p], [e], 1e-4) for e in np.eye(2)]
        assert_close(ad.grad(f)(p), want, rtol=1e-8, atol=1e-10)
    tape = ad.record(filled, p)
    with pytest.raises(ad.BranchChanged):
        tape.gradient(np.array([1.5, 1.3]))
    with pytest.raises(UnsupportedOperation, match="active x"):
        ad.grad(lambda p: si.interp1d(np.r_[0.0, p[0], 2.0], [0.0, 1.0, 0.0],
                                      kind="nearest")(0.4))(p)
