"""Step sizes held (the default) or followed (``follow_steps=True``).

Held, the derivatives are those of the steps taken with their sizes fixed;
followed, also of the sizes the controller chooses (the exact derivative of
the numbers computed). Right-hand sides with features fixed in time (a
switch at a time, a table of knots) make the followed derivative grow from
step to step; the held one stays within the tolerance of the exact
derivative. On a smooth problem the followed one is the derivative of the
solver's numbers (central differences agree to their own accuracy) and the
held one agrees with them to about the tolerance.
"""
import numpy as np
import pytest

import adsim
from adsim.integrate import solve_ivp

METHODS = ("RK23", "RK45", "DOP853", "Radau", "BDF")
TIGHT = dict(rtol=1e-10, atol=1e-12)


def infusion(t, y, k):
    return [(1.0 if t < 1.0 else 0.0) - k * y[0]]


def exact_after_infusion(k):
    """y(2) of y' = [t < 1] - k y, y(0) = 0."""
    return (1.0 - np.exp(-k)) / k * np.exp(-k)


@pytest.mark.parametrize("method", METHODS)
def test_a_switch_at_a_fixed_time(method):
    def y_end(k, **options):
        return solve_ivp(infusion, (0.0, 2.0), [0.0], args=(k,), method=method, **TIGHT,
                         **options).y[0, -1]
    k, eps = 0.5, 1e-6
    exact = (exact_after_infusion(k + eps) - exact_after_infusion(k - eps)) / (2 * eps)
    held = adsim.grad(y_end)(np.array(k))
    assert held == pytest.approx(exact, rel=1e-6)
    followed = adsim.grad(lambda k: y_end(k, follow_steps=True))(np.array(k))
    assert abs(followed - exact) > 0.1 * abs(exact)         # see docs/integrate.md


def test_a_forcing_interpolated_from_a_table():
    knots = np.arange(0.0, 25.0, 3.0)
    table = np.array([285, 283, 290, 298, 303, 300, 294, 289, 286]) / 290.0

    def log_c(k):
        f = (lambda t, c, k: -k * np.interp(t, knots, table) * c)
        return np.log(solve_ivp(f, (0.0, 24.0), [1.0], args=(k,), **TIGHT).y[0, -1])
    k = 0.02
    # log c(24) = -k * integral of the table: linear in k
    assert adsim.grad(log_c)(np.array(k)) == pytest.approx(log_c(k) / k, rel=1e-8)


def lotka_volterra(t, z, rates):
    x, y = z[0], z[1]
    return [rates[0] * x - rates[1] * x * y, rates[3] * x * y - rates[2] * y]


def fit(rates, rtol, **options):
    sol = solve_ivp(lotka_volterra, (0.0, 10.0), [10.0, 5.0], args=(rates,), rtol=rtol,
                    atol=rtol, t_eval=np.linspace(1.0, 10.0, 10), **options)
    return np.sum(sol.y ** 2)


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_followed_is_the_derivative_of_the_numbers_and_held_is_within_the_tolerance(method):
    rates, rtol, eps = np.array([1.0, 0.1, 1.5, 0.075]), 1e-6, 1e-7
    fd = np.array([(fit(rates + eps * e, rtol, method=method)
                    - fit(rates - eps * e, rtol, method=method)) / (2 * eps)
                   for e in np.eye(4)])
    followed = adsim.grad(lambda r: fit(r, rtol, method=method, follow_steps=True))(rates)
    held = adsim.grad(lambda r: fit(r, rtol, method=method))(rates)
    np.testing.assert_allclose(followed, fd, rtol=1e-6)
    np.testing.assert_allclose(held, fd, rtol=100 * rtol)
    # and the held one is the better estimate of the exact derivative
    exact = adsim.grad(lambda r: fit(r, 1e-11, method="DOP853"))(rates)
    assert np.max(np.abs(held - exact) / np.abs(exact)) < 100 * rtol


def test_held_hessian_vector_products_agree_with_differences_of_the_gradient():
    rates, v, eps = np.array([1.0, 0.1, 1.5, 0.075]), np.array([0.3, -1.0, 0.2, 0.5]), 1e-6
    g = adsim.grad(lambda r: fit(r, 1e-8))
    hv = adsim.hvp(lambda r: fit(r, 1e-8), rates, v)
    fd = (g(rates + eps * v) - g(rates - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-4)


def test_follow_steps_must_be_a_bool():
    with pytest.raises(TypeError, match="follow_steps"):
        solve_ivp(lotka_volterra, (0.0, 1.0), [1.0, 1.0], args=(np.ones(4),),
                  follow_steps="yes")
