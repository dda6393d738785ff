"""scipy.interpolate's interp1d (every kind), RegularGridInterpolator and
interpn (linear, nearest, slinear, cubic, quintic) and RectBivariateSpline
called unchanged on active data and at active points: every sweep against
central differences (check_tape), values against SciPy's, bounds and fill
values, the side taken at a data point, and a lookup table inside a loss."""
import numpy as np
import pytest
import scipy.interpolate as si
from scipy.sparse.linalg import spsolve

import adsim as ad
from adsim.errors import UnsupportedOperation
from fdcheck import assert_close, check_tape

X = np.array([0.0, 0.3, 0.7, 1.2, 1.6, 2.0])
Y = np.sin(2.0 * X) + 0.3 * X + 1.0
XQ = np.array([0.1, 0.45, 1.35, 1.9])        # away from interp1d's midpoints and data
OUT = np.array([-0.3, 0.45, 2.4])

KINDS = ["linear", "nearest", "nearest-up", "previous", "next", "zero", "slinear",
         "quadratic", "cubic", 5]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_interp1d_every_kind_every_sweep(kind):
    tape = check_tape(lambda y: si.interp1d(X, y, kind=kind)(XQ), [Y], rtol=1e-6,
                      value_rtol=1e-12, value_atol=1e-13)
    moved = Y + 0.01 * np.cos(X)
    assert_close(tape.forward(moved), si.interp1d(X, moved, kind=kind)(XQ), rtol=1e-12,
                 atol=1e-13)
    f = si.interp1d(X, Y, kind=kind)
    check_tape(lambda q: f(q), [XQ], rtol=1e-6, order=1, value_rtol=1e-12, value_atol=1e-13)


@pytest.mark.parametrize("kind", ["linear", "previous", "next", "cubic"])
def test_interp1d_out_of_bounds(kind):
    f_fill = lambda y: si.interp1d(X, y, kind=kind, bounds_error=False,          # noqa: E731
                                   fill_value=(-1.0, 2.0))(OUT)
    assert_close(ad.record(f_fill, Y).forward(Y), f_fill(Y), rtol=1e-12)
    check_tape(f_fill, [Y], rtol=1e-6, order=1)
    f_ext = lambda y: si.interp1d(X, y, kind=kind, fill_value="extrapolate")(OUT)  # noqa: E731
    tape = ad.record(f_ext, Y)
    assert_close(tape.forward(Y), f_ext(Y), rtol=1e-12)
    if kind in ("linear", "cubic"):
        check_tape(f_ext, [Y], rtol=1e-6, order=1)
    with pytest.raises(ValueError, match="below the interpolation range"):
        ad.grad(lambda y: np.sum(si.interp1d(X, y, kind=kind)(OUT)))(Y)


def test_interp1d_unsorted_and_along_an_axis():
    order = np.array([3, 0, 5, 1, 4, 2])
    Y2 = np.stack([Y, Y ** 2])
    check_tape(lambda y: si.interp1d(X[order], y[:, order], kind="cubic")(XQ), [Y2],
               rtol=1e-6, order=1)
    check_tape(lambda y: si.interp1d(X, y, axis=0)(XQ), [Y2.T], rtol=1e-6, order=1)


def test_interp1d_linear_takes_the_left_piece_at_a_data_point():
    f = si.interp1d(X, Y)
    slope = ad.grad(lambda q: f(q))(X[2])
    assert slope == pytest.approx((Y[2] - Y[1]) / (X[2] - X[1]), rel=1e-12)


GX = np.array([0.0, 0.4, 1.0, 1.5, 2.0, 2.6])
GY = np.array([-1.0, -0.2, 0.5, 1.1, 2.0, 2.5])
V = np.cos(GX)[:, None] * np.exp(0.3 * GY)[None, :]
P = np.array([[0.1, 0.3], [0.6, -0.5], [1.8, 2.2], [1.2, 1.0]])
METHODS = ["linear", "nearest", "slinear", "cubic", "quintic"]


def _rgi(values, method, **options):
    if method in ("cubic", "quintic"):      # SciPy's exact solve (its default is iterative)
        options["solver"] = spsolve
    return si.RegularGridInterpolator((GX, GY), values, method=method, **options)


@pytest.mark.parametrize("method", METHODS)
def test_regular_grid_every_method_every_sweep(method):
    tape = check_tape(lambda v: _rgi(v, method)(P), [V], rtol=1e-6, value_rtol=1e-12,
                      value_atol=1e-13)
    moved = V + 0.01 * np.sin(V)
    assert_close(tape.forward(moved), _rgi(moved, method)(P), rtol=1e-12, atol=1e-13)
    table = _rgi(V, method)
    check_tape(lambda p: table(p), [P], rtol=1e-6, order=1, value_rtol=1e-12,
               value_atol=1e-13)


def test_regular_grid_derivative_orders_and_trailing_values():
    check_tape(lambda v: _rgi(v, "cubic")(P, nu=(1, 0)), [V], rtol=1e-6, order=1)
    V3 = np.stack([V, V ** 2], axis=-1)
    check_tape(lambda v: _rgi(v, "linear")(P), [V3], rtol=1e-6, order=1)
    assert_close(ad.record(lambda v: _rgi(v, "quintic")(P, nu=(1, 1)), V).forward(V),
                 _rgi(V, "quintic")(P, nu=(1, 1)), rtol=1e-10)


def test_regular_grid_bounds_fill_and_extrapolation():
    outside = P + np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    for options in ({"bounds_error": False, "fill_value": 0.5},
                    {"bounds_error": False, "fill_value": None}):
        f = lambda v: _rgi(v, "linear", **options)(outside)       # noqa: E731
        assert_close(ad.record(f, V).forward(V), f(V), rtol=1e-12)
        check_tape(f, [V], rtol=1e-6, order=1)
    with pytest.raises(ValueError, match="out of bounds in dimension 0"):
        ad.grad(lambda v: np.sum(_rgi(v, "linear")(outside)))(V)


def test_regular_grid_descending_axis_and_interpn():
    check_tape(lambda v: si.RegularGridInterpolator((GX[::-1], GY), v)(P), [V], rtol=1e-6,
               order=1)
    check_tape(lambda p: si.interpn((GX, GY), V, p), [P], rtol=1e-6, order=1)
    check_tape(lambda v: si.interpn((GX, GY), v, P, method="nearest"), [V], rtol=1e-6, order=1)


def test_lookup_table_inside_a_loss():
    """A drag coefficient tabulated on (Mach, angle) is calibrated: the table
    entries are parameters, fitted to measured forces at scattered states."""
    states = np.array([[0.2, -0.6], [0.9, 0.1], [1.4, 1.7], [1.7, 0.4], [0.5, 2.3]])
    measured = np.array([1.1, 0.8, 1.9, 0.6, 2.0])

    def loss(table):
        drag = si.RegularGridInterpolator((GX, GY), table)
        predicted = drag(states) * (1.0 + states[:, 0] ** 2)
        return np.mean((predicted - measured) ** 2) + 1e-3 * np.sum(np.diff(table, axis=0) ** 2)
    check_tape(loss, [V], rtol=1e-6)
    g = ad.grad(loss)(V)
    assert g.shape == V.shape and np.count_nonzero(g) > 0


def test_rect_bivariate_spline_every_sweep():
    qx, qy = np.array([0.1, 0.7, 1.3]), np.array([-0.5, 0.9, 1.7, 2.2])
    check_tape(lambda z: si.RectBivariateSpline(GX, GY, z)(qx, qy), [V], rtol=1e-6,
               value_rtol=1e-12, value_atol=1e-13)
    check_tape(lambda z: si.RectBivariateSpline(GX, GY, z, kx=2, ky=1).ev(qx, qy[:3]), [V],
               rtol=1e-6, order=1)
    check_tape(lambda z: si.RectBivariateSpline(GX, GY, z)(qx, qy, dx=1, dy=1), [V],
               rtol=1e-6, order=1)
    spline = si.RectBivariateSpline(GX, GY, V)
    check_tape(lambda q: spline.ev(q[:3], q[3:]), [np.concatenate([qx, qy[:3]])], rtol=1e-6)


def test_refusals_name_themselves():
    with pytest.raises(UnsupportedOperation, match="pchip"):
        ad.grad(lambda v: np.sum(si.RegularGridInterpolator((GX, GY), v, method="pchip")(P)))(V)
    with pytest.raises(UnsupportedOperation, match="s=0"):
        ad.grad(lambda z: np.sum(si.RectBivariateSpline(GX, GY, z, s=0.1)(0.5, 0.5)))(V)
    with pytest.raises(UnsupportedOperation, match="active points"):
        ad.grad(lambda g: np.sum(si.RegularGridInterpolator((g, GY), V)(P)))(GX)


def test_a_replay_where_a_point_leaves_the_grid_is_a_branch_change():
    """Whether a point is inside is recorded: a replay that moves it out
    raises BranchChanged instead of reusing the recorded fill mask."""
    from adsim.errors import BranchChanged
    table = si.RegularGridInterpolator((GX, GY), V, bounds_error=False, fill_value=0.0)
    tape = ad.record(lambda p: table(p), P)
    outside = P + np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(BranchChanged):
        tape.forward(outside)
    assert_close(ad.jacobian(lambda p: table(p))(outside)[2], np.zeros((4, 2)), atol=0)
