"""Reading the coefficients of a spline made from active data -- ``.c`` of
``CubicSpline``, ``PPoly``, ``BSpline`` (``make_interp_spline``), and
``RegularGridInterpolator.values`` -- gives the active coefficients, in
SciPy's layout, so that a function of them is differentiated: checked
against differences in every mode, replayed at new data, saved and loaded;
the object stays usable (evaluation, derivative) after the read."""
import numpy as np
import pytest
import scipy.interpolate as si

import adsim
from fdcheck import check_tape
from tapefile_replays import assert_same_replays, copies

X = np.linspace(0.0, 1.0, 6)
Y = np.sin(np.arange(6.0)) + 0.3
WEIGHTS = np.cos(np.arange(24.0))


def cubic_spline(y):
    spl = si.CubicSpline(X, y)
    return np.concatenate([(spl.c ** 2).ravel(), spl([0.37]), spl.derivative()([0.2])])


def cubic_spline_on_axis_1(y):
    spl = si.CubicSpline(X, np.stack([y, y ** 2]), axis=1, bc_type="natural")
    return np.concatenate([(spl.c ** 2).ravel(), spl([0.5]).ravel()])


def pchip(y):
    return np.ravel(si.PchipInterpolator(X, y).c * WEIGHTS[:20].reshape(4, 5))


def ppoly(y):
    pp = si.PPoly(y.reshape(2, 3), np.array([0.0, 1.0, 2.0, 3.0]))
    return np.concatenate([(pp.c ** 3).ravel(), pp.derivative().c.ravel(), pp([1.5])])


def interpolating_bspline(y):
    b = si.make_interp_spline(X, y, k=3)
    return np.concatenate([b.c * np.arange(b.c.size), b([0.4]), b.antiderivative().c])


def bspline(y):
    b = si.BSpline(np.array([0.0, 0.0, 0.0, 0.4, 1.0, 1.0, 1.0]), y[:4], 2)
    return np.concatenate([np.exp(b.c), b([0.3, 0.8])])


def grid_values(y):
    r = si.RegularGridInterpolator((X[::-1],), y)          # descending: SciPy flips values
    return np.concatenate([r.values ** 2, r([0.3])])


PROGRAMS = [cubic_spline, cubic_spline_on_axis_1, pchip, ppoly, interpolating_bspline, bspline,
            grid_values]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_coefficients_are_active_in_every_mode_and_replay(program, tmp_path):
    tape = check_tape(program, [Y], rtol=1e-6, atol=1e-8, value_atol=1e-12)
    y2 = Y + 0.05 * np.cos(np.arange(6.0))
    np.testing.assert_allclose(tape.forward(y2), program(y2), rtol=1e-12, atol=1e-12)
    assert_same_replays(tape, copies(tape, tmp_path), [(Y,), (y2,)])


def test_the_values_read_are_scipys():
    """The active coefficients have the values (and layout) SciPy gives for
    the same data."""
    for make, attribute in [(lambda y: si.CubicSpline(X, y), "c"),
                            (lambda y: si.make_interp_spline(X, y), "c"),
                            (lambda y: si.RegularGridInterpolator((X[::-1],), y), "values")]:
        got = adsim.record(lambda y: getattr(make(y), attribute), Y).forward(Y)
        np.testing.assert_allclose(got, getattr(make(Y), attribute), rtol=1e-12, atol=1e-14)


def test_the_explicit_namespace_reads_them_without_interposition():
    import adsim.scipy.interpolate as asi

    def loss(y):
        return np.sum(asi.CubicSpline(X, y).c ** 2)
    with adsim.interposition(False):
        g = adsim.grad(loss)(Y)
    np.testing.assert_allclose(g, adsim.grad(lambda y: np.sum(si.CubicSpline(X, y).c ** 2))(Y),
                               rtol=1e-12)
    plain = asi.CubicSpline(X, Y)
    plain.c = 2.0 * plain.c                 # SciPy's setter, on plain data
    np.testing.assert_allclose(plain(0.5), 2.0 * si.CubicSpline(X, Y)(0.5), rtol=1e-13)
