"""The numpy.polynomial package on active coefficients, data and points:
NumPy's own code recorded through the functions it calls (its array
creation taken as the recorded function's own, adsim/_record/creation.py),
against central differences in every mode, and a replay at a new point."""
import numpy as np
import numpy.polynomial.chebyshev as C
import numpy.polynomial.hermite as H
import numpy.polynomial.legendre as L
import numpy.polynomial.polynomial as P
import pytest
from numpy.polynomial import Chebyshev, Legendre, Polynomial

import adsim
from fdcheck import assert_close, central, check_tape

T = np.linspace(-1, 1, 9)
X = np.array([0.7, 1.3, 0.4, 0.9])

CASES = {
    "polyval chebval legval hermval": lambda x: P.polyval(0.3, x) + C.chebval(0.3, x)
    + L.legval(-0.2, x) + H.hermval(0.4, x),
    "points active": lambda x: np.sum(P.polyval(x, [1.0, -2.0, 0.5])) + C.chebval(x[0], [1, 2]),
    "polyfit chebfit": lambda x: np.sum(P.polyfit(T, np.exp(x[0] * T) + x[1], 2))
    + np.sum(C.chebfit(T, np.sin(x[2] * T), 3, w=1 + T ** 2)),
    "der int with an active constant": lambda x: np.sum(C.chebder(x, 2))
    + np.sum(C.chebint(x, lbnd=0.2, k=x[0])),
    "vander fromroots roots": lambda x: np.sum(P.polyvander(x, 2))
    + np.sum(P.polyfromroots(x)) + np.sum(np.sort(P.polyroots(P.polyfromroots(x)))),
    "mul div pow": lambda x: np.sum(P.polymul(x, x)) + np.sum(P.polydiv(x, [1.0, 0.5])[0])
    + np.sum(P.polypow(x[:2], 3)),
    "val2d grid2d": lambda x: P.polyval2d(0.3, 0.5, x.reshape(2, 2))
    + np.sum(P.polygrid2d([0.1, 0.2], [0.3], x.reshape(2, 2))),
    "classes": lambda x: (Polynomial(x) * Polynomial(x[:2]) + 2 * Polynomial(x) ** 2)(0.4)
    + Polynomial(x).deriv()(0.2) + Polynomial(x).integ(lbnd=0.1)(0.9),
    "fit": lambda x: Chebyshev.fit(T * 3 + 1, np.sin(x[0] * T) + x[1] * T ** 2, 3,
                                   domain=[-2, 4])(1.5)
    + Legendre.fit(T, np.exp(x[2] * T), 2, w=1 + T ** 2).coef[1],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_sweep(name):
    check_tape(CASES[name], [X])


def test_a_fitted_series_replayed_at_new_data():
    def misfit(x):
        series = Chebyshev.fit(T, np.exp(x[0] * T) * x[1], 4)
        return np.sum((series(T) - np.cos(T)) ** 2) + series.deriv()(0.5)
    tape = adsim.record(misfit, X[:2])
    x2 = np.array([0.5, 1.1])
    assert_close(tape.forward(x2), misfit(x2), rtol=1e-13, what="replayed value")
    assert_close(tape.gradient(x2), [central(misfit, [x2], [e]) for e in np.eye(2)],
                 what="replayed gradient")


def test_plain_series_inside_a_recording_stay_plain_and_right():
    # NumPy's own arrays where no active value is involved (np.roots of them
    # at a double root, float() of them: as outside a recording)
    def f(x):
        c = P.polyfit(T, T ** 2, 2)
        assert type(c) is np.ndarray and type(Polynomial(c).deriv().coef) is np.ndarray
        np.roots(c[::-1])
        return x[0] * P.polyval(0.3, c) * float(c[2]) ** 2
    assert_close(adsim.grad(f)(X), [P.polyval(0.3, P.polyfit(T, T ** 2, 2)), 0, 0, 0],
                 rtol=1e-14, what="plain fit")


def test_iterable_of_a_zero_d_active_value_is_false_as_numpys():
    def f(x):
        assert not np.iterable(x[0]) and np.iterable(x)
        with pytest.raises(TypeError):
            iter(x[0])
        assert [float(adsim.value(v)) for v in reversed(x)] == list(X[::-1])
        return x[0]
    adsim.grad(f)(X)


C2 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
W22 = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("val", [P.polyval, C.chebval, L.legval, H.hermval,
                                 P.polyvalfromroots])
def test_two_d_coefficients_at_active_points_take_their_own_axes(val):
    # NumPy reshapes c for tensor=True only when isinstance(x, np.ndarray):
    # at an active x it would broadcast c against x, a different result
    def f(x):
        return np.sum(val(x, C2) * W22) + np.sum(val([x[1], x[0]], C2) * W22)
    x = np.array([0.5, 0.7])
    assert_close(adsim.value_and_grad(f)(x)[0], f(x), rtol=1e-14, what="value")
    check_tape(f, [x])


def test_grid_and_series_classes_at_active_points():
    def f(x):
        return (np.sum(P.polygrid2d(x[:2], x[2:], C2[:2]) * W22)
                + np.sum(Chebyshev(C2[:, 0])(x.reshape(2, 2)) * W22))
    check_tape(f, [X])


def test_complex_roots_sorted_in_place_as_numpys():
    # polyroots ends with r.sort() on the complex eigenvalues: NumPy's order
    # (real part, then imaginary), a permutation that replays compute again
    W = np.array([1.0, 2.0, 3.0])

    def f(c):
        r = P.polyroots(np.r_[c, 1.0])
        return np.sum(r.real * W) + np.sum(r.imag * W) + np.sum(np.abs(r))
    c = np.array([1.3, 0.4, 1.1])
    assert_close(adsim.value_and_grad(f)(c)[0], f(c), rtol=1e-14, what="value")
    check_tape(f, [c])


def test_sorting_a_complex_array_in_place_matches_numpy_and_replays():
    def f(x):
        z = x[:4] + 1j * x[4:]
        z.sort()
        return np.sum(z.real * np.arange(1.0, 5.0)) + np.sum(z.imag * np.arange(5.0, 9.0))
    x = np.array([0.3, -1.2, 0.3, 2.0, 0.5, 0.1, -0.4, 1.0])   # a tie in the real parts
    z = x[:4] + 1j * x[4:]
    z.sort()
    assert_close(adsim.value_and_grad(f)(x)[0], f(x), rtol=1e-14, what="value")
    tape = adsim.record(f, x)
    x2 = x + np.array([0.0, 2.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0])  # another order
    try:
        g2 = tape.gradient(x2)
    except adsim.BranchChanged:
        g2 = adsim.grad(f)(x2)
    assert_close(g2, [central(f, [x2], [e], 1e-6) for e in np.eye(8)], what="new order")


def test_a_fitted_series_converted_to_its_own_domain():
    """``Polynomial.fit`` maps the data's domain to the window; ``convert()``
    maps back by evaluating the series at ``off + scl * x`` with ``x`` the
    identity series wrapped by np.asanyarray in a 0-d object array, and
    ``scl`` a value of the recording (the data made inside the function):
    an active value times an array of objects is NumPy's object loop (each
    element's reflected method). It was refused as a constant operand of
    objects."""
    def f(p):
        X = np.linspace(0.0, 2.0, 7)
        y = p[0] * X ** 2 + p[1] * np.sin(X)
        fitted = np.polynomial.Polynomial.fit(X, y, 3)
        c = fitted.convert().coef
        return c[2] * c[1] + fitted.deriv()(1.1) + np.sum(fitted.integ().convert().coef)

    x = np.array([0.4, 1.3])
    g = adsim.grad(f)(x)
    h = 1e-6
    assert_close(g, np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(2) * h]),
                 rtol=1e-7, atol=1e-9, what="gradient")
    v = np.array([1.0, 0.5])
    assert_close(adsim.hvp(f, x, v), (adsim.grad(f)(x + h * v) - adsim.grad(f)(x - h * v)) / (2 * h),
                 rtol=1e-6, atol=1e-8, what="hvp")
    assert_close(adsim.record(f, x).forward(1.1 * x), f(1.1 * x), rtol=1e-13, atol=1e-14,
                 what="replayed value")
