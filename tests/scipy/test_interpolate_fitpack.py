"""FITPACK's interpolating splines as scientists call them (splrep/splev,
InterpolatedUnivariateSpline, UnivariateSpline with s=0) on active data
and at active points: SciPy's values, derivatives against central
differences in both modes, replays at new data; smoothing splines refused."""
import numpy as np
import pytest
from scipy.interpolate import (InterpolatedUnivariateSpline, UnivariateSpline, splantider,
                               splder, splev, splint, splrep)

import adsim
from adsim.errors import UnsupportedOperation
from adsim.testing import check_grads
from fdcheck import assert_close

DEPTH = np.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0, 3.8, 4.5])       # uneven samples


def _replays(f, x, x2, rtol=1e-10):
    tape = adsim.record(f, x)
    assert_close(tape.forward(x2), f(x2), rtol, 1e-14, "replayed value")
    assert_close(tape.gradient(x2), adsim.grad(f)(x2), rtol, 1e-14, "replayed gradient")


def heat_content(temperature):
    """A temperature profile through borehole samples: interpolated with
    splrep, read at the sensor depths, its gradient at the surface and the
    heat content of the top 4 m (splint), with every ext mode."""
    tck = splrep(DEPTH, temperature)
    sensors = np.array([0.2, 1.9, 4.4, 4.9])
    inside = splev(sensors, tck)
    zero_outside = splev(sensors, tck, ext=1)
    clamped = splev(sensors, tck, ext=3)
    slope = splev(0.0, splder(tck))
    cumulative = splev(2.0, splantider(tck))
    return (np.sum(inside ** 2) + np.sum(zero_outside) + np.sum(clamped) + slope ** 2
            + splint(0.0, 4.0, tck) + cumulative)


def test_splrep_splev_on_active_data_agree_with_scipy_and_differentiate():
    temperature = 10.0 + 3.0 * np.sin(DEPTH)
    assert_close(adsim.record(heat_content, temperature).forward(temperature),
                 heat_content(temperature), 1e-12, 0.0, "SciPy's value")
    check_grads(heat_content, temperature, order=2)
    _replays(heat_content, temperature, temperature[::-1].copy())


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_splev_at_active_points_for_every_degree(k):
    tck = splrep(DEPTH, np.cos(DEPTH), k=k)

    def probe(z):
        return np.sum(splev(z, tck) ** 2) + np.sum(splev(z, tck, der=1))

    z = np.array([0.3, 1.2, 2.7, 4.1])           # off the knots of every k
    assert_close(adsim.record(probe, z).forward(z), probe(z), 1e-12, 0.0, "SciPy's value")
    check_grads(probe, z)
    with pytest.raises(ValueError, match="out of bounds"):
        adsim.grad(lambda z: np.sum(splev(z, tck, ext=2)))(z + 1.0)


def test_univariate_spline_classes_with_s0():
    def profile(y):
        spline = InterpolatedUnivariateSpline(DEPTH, y, k=3, ext=3)
        same = UnivariateSpline(DEPTH, y, s=0)
        z = np.array([0.7, 2.9, 5.0])
        return (np.sum(spline(z) ** 2) + np.sum(same(z, ext="zeros")) + spline.derivative()(1.0) + spline.antiderivative()(2.0)
                + spline.integral(0.5, 3.5) + same(3.3))

    y = np.exp(-DEPTH / 3.0)
    assert_close(adsim.record(profile, y).forward(y), profile(y), 1e-12, 0.0, "SciPy's value")
    check_grads(profile, y)
    _replays(profile, y, y * 1.3 + 0.1)


def test_smoothing_splines_and_methods_without_a_rule_are_refused():
    y = np.sin(DEPTH)
    with pytest.raises(UnsupportedOperation, match="s=0.*knots depend on"):
        adsim.grad(lambda y: UnivariateSpline(DEPTH, y)(1.0))(y)         # default s = len(x)
    with pytest.raises(UnsupportedOperation, match="s=0.5"):
        adsim.grad(lambda y: splev(1.0, splrep(DEPTH, y, s=0.5)))(y)
    with pytest.raises(UnsupportedOperation, match="roots"):
        adsim.grad(lambda y: np.sum(InterpolatedUnivariateSpline(DEPTH, y - 0.5).roots()))(y)
