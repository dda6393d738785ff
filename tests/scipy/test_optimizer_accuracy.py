"""Gradients through ``minimize`` are exact at SciPy's point: their error is
the solver's.

A minimiser's derivative is the implicit-function rule (the KKT system
with constraints) at the point SciPy returns, so it is off by about as much
as that point is off the true minimiser. Against differences of solves at
SciPy's default tolerances the gradient looks 1e-5 to 1e-4 wrong (the
differences are noisier still); the checks here compare it with the exact
derivative instead, central differences of the KKT (or stationarity)
system solved to rounding, and find its error a small multiple of the
solution's own error at every setting, falling to rounding as the
tolerance tightens: SLSQP 1e-4 at its default ``ftol`` to 1e-11 at
``tol=1e-10``; trust-constr to 1e-8, where its barrier parameter stops
the solution's error near 1e-9; trust-ncg with ``adsim.hessp`` to rounding.

The constrained problem has an active inequality (a disk), an equality (a
plane) and an inactive bound, so the rule's active set, its multipliers
(one positive, one negative) and the dropped bound all enter.
"""
import warnings

import numpy as np
import pytest
import scipy.optimize as so

import adsim

P = np.array([2.0, 1.5, 0.3, 0.3, 1.5])
W = np.array([1.0, -0.7, 0.4])
LOWER = -5.0                    # the bound x[2] >= LOWER, inactive
FACTOR = 20.0                   # the gradient's error against the solution's


def objective(x, p):
    return (x[0] - p[0]) ** 2 + 2 * (x[1] - p[1]) ** 2 + (x[2] - 1.0) ** 2 + \
        p[2] * x[0] * x[1] + 0.1 * x[0] ** 4


def disk(x, p):                 # active: >= 0
    return p[3] - x[0] ** 2 - x[1] ** 2


def plane(x, p):                # = 0
    return x[0] + x[1] + x[2] - p[4]


def constrained(p, method, tol=None, options=None):
    if method == "SLSQP":
        constraints = [{"type": "ineq", "fun": disk, "args": (p,), "jac": adsim.grad(disk)},
                       {"type": "eq", "fun": plane, "args": (p,), "jac": adsim.grad(plane)}]
    else:
        constraints = [so.NonlinearConstraint(lambda x: disk(x, p), 0.0, np.inf),
                       so.NonlinearConstraint(lambda x: plane(x, p), 0.0, 0.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # trust-constr's quasi-Newton updates
        return so.minimize(objective, np.array([0.1, 0.1, 0.9]), args=(p,), method=method,
                           jac=adsim.grad(objective), constraints=constraints,
                           bounds=[(None, None), (None, None), (LOWER, None)], tol=tol,
                           options=options or {}).x


def _kkt(z, p):
    """Stationarity of the Lagrangian and the two active constraints."""
    x, mu = z[:3], z[3:]
    gradient = np.array([2 * (x[0] - p[0]) + p[2] * x[1] + 0.4 * x[0] ** 3,
                         4 * (x[1] - p[1]) + p[2] * x[0], 2 * (x[2] - 1.0)])
    J = np.array([[-2 * x[0], -2 * x[1], 0.0], [1.0, 1.0, 1.0]])
    return np.concatenate([gradient - J.T @ mu, [disk(x, p), plane(x, p)]])


def constrained_exactly(p):
    start = np.concatenate([constrained(p, "SLSQP", 1e-10), [1.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # xtol below what rounding allows
        z = so.fsolve(_kkt, start, args=(p,), xtol=1e-15)
    assert np.max(np.abs(_kkt(z, p))) < 1e-13
    return z


def rates(p):
    """A smooth convex objective without constraints (trust-ncg)."""
    return lambda x: np.sum(np.exp(p[0] * x) - p[1] * np.arange(1.0, 5.0) * x) + \
        0.5 * p[2] * np.sum(np.diff(x) ** 2) + 0.25 * np.sum(x ** 4)


def unconstrained(p, options=None):
    f = rates(p)
    return so.minimize(f, np.zeros(4), method="trust-ncg", jac=adsim.grad(f),
                       hessp=adsim.hessp(f), options=options or {}).x


def unconstrained_exactly(p):
    g = adsim.grad(rates(p))
    return so.root(g, unconstrained(p, {"gtol": 1e-12}), tol=1e-15).x


def exact_gradient(solution, weights, p, h=1e-5):
    """d (weights . x*(p)) / dp by fourth-order central differences of the
    exact solution (truncation and rounding near 1e-10 here)."""
    def loss(q):
        return weights @ solution(q)[:weights.size]
    steps = h * np.eye(p.size)
    return np.array([(8 * (loss(p + e) - loss(p - e)) - (loss(p + 2 * e) - loss(p - 2 * e)))
                     / (12 * h) for e in steps])


def _relative(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.fixture(scope="module")
def constrained_reference():
    z = constrained_exactly(P)
    assert z[3] > 0.1              # the disk's multiplier: strictly active
    return z[:3], exact_gradient(constrained_exactly, W, P)


@pytest.mark.parametrize("method, settings, tightest", [
    ("SLSQP", [{}, {"tol": 1e-8}, {"tol": 1e-10}], 1e-9),
    ("trust-constr", [{}, {"options": {"gtol": 1e-12, "xtol": 1e-14, "barrier_tol": 1e-12}}],
     1e-7),
])
def test_constrained_gradient_error_is_the_solvers(constrained_reference, method, settings,
                                                   tightest):
    x_exact, want = constrained_reference
    errors = []
    for s in settings:
        got = adsim.grad(lambda p: W @ constrained(p, method, **s))(P)
        solution_error = np.max(np.abs(constrained(P, method, **s) - x_exact))
        errors.append(_relative(got, want))
        assert errors[-1] <= FACTOR * solution_error + 1e-9, (method, s, errors, solution_error)
    assert errors[-1] <= tightest, (method, errors)


def test_trust_ncg_with_adsim_hessp_gradient_error_is_the_solvers():
    weights = np.linspace(1.0, -0.5, 4)
    x_exact = unconstrained_exactly(P[:3])
    want = exact_gradient(unconstrained_exactly, weights, P[:3])
    errors = []
    for options in [{}, {"gtol": 1e-7}, {"gtol": 1e-11}]:
        got = adsim.grad(lambda p: weights @ unconstrained(p, options))(P[:3])
        solution_error = np.max(np.abs(unconstrained(P[:3], options) - x_exact))
        errors.append(_relative(got, want))
        assert errors[-1] <= FACTOR * solution_error + 1e-9, (options, errors, solution_error)
    assert errors[-1] <= 1e-9, errors
