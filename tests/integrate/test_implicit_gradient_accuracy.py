"""Radau and BDF gradients on Robertson's stiff kinetics, with respect to the
log rate constants, across tolerances.

The loss is a weighted sum of the three concentrations at five times on
[1e-3, 10]. Three checks, each on its own able to catch a wrong gradient:

* the derivative of the exact solution: forward sensitivities
  ``S' = f_y S + f_{log k}`` integrated with the state by SciPy at rtol
  1e-10 (written-out Jacobians, nothing from adsim), within 1e-4 in every
  component from rtol 1e-5 on (the discrete adjoint differs from it by the
  derivative of the solver's error, which is larger at looser tolerances);
* central differences of adsim's forward solve, at points where the step
  decisions stay (the counts are equal): the derivative of the numbers
  computed, which the gradient is with ``follow_steps=True`` (by default it
  holds the step sizes, and agrees with them to about the tolerance);
* linearity and modes: the tangent along 3 v is three times the one along v,
  and it agrees with the adjoint. A derivative of rounding errors fails this
  (its size follows the last bits of the seed).

The rates are the initial guess of examples/ode/robertson_fit.py (computed
as it computes them: the last bits matter), with its absolute tolerances
(y2 stays below 4e-5). Radau's first step from rest then has an error
estimate at rounding level, whose derivative (a derivative of rounding
errors) must not reach the step sizes through the predictive controller
when derivatives follow the step sizes; where it did, the gradient was off by 1e-2 (rtol 1e-4) and 4e-3 (rtol
1e-5), and tangents were not linear in the seed. Which rates show it depends
on how the rounding falls: most nearby rates do not.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from adsim.integrate._piecewise import frozen_at_or_below
from ivp_problems import robertson, robertson_jacobian

IMPLICIT = ("Radau", "BDF")
Y0 = np.array([1.0, 0.0, 0.0])
T_END = 10.0
T_OBS = np.logspace(-3, 1, 5)
WEIGHTS = np.array([1.0, 1e4, 1.0])          # y2 is four orders below the others
RATES = np.array([0.04, 3e7, 1e4])
NOMINAL = np.log(RATES)
GUESS = np.log(RATES * [2.0, 0.5, 3.0])
ATOL_PER_RTOL = np.array([1e-3, 1e-8, 1e-3])
GOAL = 1e-4


def loss(log_k, method, rtol, atol_per_rtol=ATOL_PER_RTOL, **options):
    res = solve_ivp(robertson, (0.0, T_END), Y0, method=method, t_eval=T_OBS,
                    args=(np.exp(log_k),), rtol=rtol, atol=rtol * atol_per_rtol, **options)
    return WEIGHTS @ np.sum(res.y, axis=1)


def rate_derivative(y, k):
    """d robertson / d log k."""
    return np.array([[-y[0], 0.0, y[1] * y[2]],
                     [y[0], -y[1] ** 2, -y[1] * y[2]],
                     [0.0, y[1] ** 2, 0.0]]) * k


def sensitivity_gradient(log_k, rtol):
    """The loss's gradient for the exact solution: state and S = dy/dlog k
    (3 x 3) integrated together by SciPy's Radau."""
    k = np.exp(log_k)

    def augmented(t, w):
        y, S = w[:3], w[3:].reshape(3, 3)
        return np.concatenate([robertson(t, y, k),
                               (robertson_jacobian(t, y, k) @ S + rate_derivative(y, k)).ravel()])
    atol = rtol * np.concatenate([ATOL_PER_RTOL, np.repeat(ATOL_PER_RTOL, 3)])
    sol = scipy_solve_ivp(augmented, (0.0, T_END), np.concatenate([Y0, np.zeros(9)]),
                          method="Radau", t_eval=T_OBS, rtol=rtol, atol=atol)
    assert sol.success
    return np.einsum("i,ijt->j", WEIGHTS, sol.y[3:].reshape(3, 3, -1))


@pytest.fixture(scope="module")
def reference():
    g = sensitivity_gradient(GUESS, 1e-10)
    # its own uncertainty, far below the goal
    assert np.max(np.abs(g - sensitivity_gradient(GUESS, 1e-8)) / np.abs(g)) < 1e-6
    return g


@pytest.mark.parametrize("rtol", [1e-5, 1e-6, 1e-8])
@pytest.mark.parametrize("method", IMPLICIT)
def test_gradient_against_forward_sensitivities(method, rtol, reference):
    g = adsim.grad(loss)(GUESS, method, rtol)
    assert np.max(np.abs(g - reference) / np.abs(reference)) < GOAL


@pytest.mark.parametrize("rtol", [1e-4, 1e-8])
@pytest.mark.parametrize("method", IMPLICIT)
def test_gradient_against_differences_of_the_forward_solve(method, rtol):
    """At the nominal rates with atol = 1e-4 rtol, where the forward solve is
    smooth in the rates down to steps of 1e-5 (with the tolerances above,
    Radau's steps follow the rounding of its first error estimate, and
    differences of the forward solve scatter by 1e-4)."""
    uniform = np.full(3, 1e-4)

    def counts(log_k):
        res = solve_ivp(robertson, (0.0, T_END), Y0, method=method, t_eval=T_OBS,
                        args=(np.exp(log_k),), rtol=rtol, atol=rtol * uniform)
        return res.nfev, res.njev, res.nlu
    g = adsim.grad(lambda log_k: loss(log_k, method, rtol, uniform, follow_steps=True))(NOMINAL)
    held = adsim.grad(loss)(NOMINAL, method, rtol, uniform)
    eps = 1e-5
    for i in range(3):
        e = eps * np.eye(3)[i]
        assert counts(NOMINAL + e) == counts(NOMINAL) == counts(NOMINAL - e)
        fd = (loss(NOMINAL + e, method, rtol, uniform)
              - loss(NOMINAL - e, method, rtol, uniform)) / (2 * eps)
        assert g[i] == pytest.approx(fd, rel=1e-7)
        assert held[i] == pytest.approx(fd, rel=max(10 * rtol, 1e-5))


@pytest.mark.parametrize("follow_steps", [False, True])
@pytest.mark.parametrize("rtol", [1e-4, 1e-5, 1e-7])
@pytest.mark.parametrize("method", IMPLICIT)
def test_tangents_linear_in_the_seed_and_equal_to_adjoints(method, rtol, follow_steps):
    def f(log_k):
        return loss(log_k, method, rtol, follow_steps=follow_steps)
    v = np.array([0.3, -1.0, 0.5])
    _, once = adsim.jvp(f, (GUESS,), (v,))
    _, thrice = adsim.jvp(f, (GUESS,), (3 * v,))
    assert thrice == pytest.approx(3 * once, rel=1e-7)
    assert adsim.grad(f)(GUESS) @ v == pytest.approx(once, rel=1e-7)


def test_frozen_derivative_keeps_the_value_and_follows_the_level_at_replay():
    """The value is exactly x; the derivative is dropped at or below the
    level, decided from the values at every replay (no re-recording)."""
    def f(x):
        y = 3.0 * x[0]
        return frozen_at_or_below(y * y, 4.0 * x[1]) + x[1]
    x = np.array([0.1, 1.0])
    tape = adsim.record(f, x)
    for point, side in ((x, 0.0), (np.array([2.0, 1.0]), 1.0), (np.array([0.5, 0.6]), 0.0)):
        expected = (3.0 * point[0]) ** 2 + point[1]
        assert tape.forward(point) == expected and f(point) == expected
        assert tape.gradient(point) == pytest.approx([side * 18.0 * point[0], 1.0], abs=0)
