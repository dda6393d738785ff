"""Constrained minimisers differentiated through the KKT conditions:
``minimize`` with constraints (dicts, NonlinearConstraint, LinearConstraint)
and bounds, ``fmin_slsqp``, ``fmin_cobyla``; parameters in the objective,
in the constraint functions (args, closures), in the limits and in a linear
constraint's matrix; refusals where the derivative does not exist."""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from scipy.optimize import LinearConstraint, NonlinearConstraint

import adsim
from adsim.errors import BranchChanged, SolverNotConverged, UndefinedDerivative
from fdcheck import assert_close, central
from implicit_checks import check_solution_derivatives

EXPECTED = np.array([0.08, 0.12, 0.15])
COVARIANCE = np.array([[0.10, 0.02, 0.01], [0.02, 0.20, 0.03], [0.01, 0.03, 0.30]])


def frontier_weights(target, expected=EXPECTED):
    """The minimum-variance portfolio of return ``target`` (both constraints
    active): the KKT system of an equality-constrained quadratic program."""
    K = np.zeros((5, 5))
    K[:3, :3] = 2 * COVARIANCE
    K[:3, 3] = K[3, :3] = 1.0
    K[:3, 4] = K[4, :3] = expected
    return np.linalg.solve(K, np.r_[0.0, 0.0, 0.0, 1.0, target])[:3]


def long_only_portfolio(target):
    """A scientist's program: fully invested, long only, at least ``target``
    expected return; the return constraint is active, the bounds are not."""
    constraints = [{"type": "eq", "fun": lambda w: np.sum(w) - 1.0},
                   {"type": "ineq", "fun": lambda w, r: EXPECTED @ w - r, "args": (target,)}]
    res = so.minimize(lambda w: w @ COVARIANCE @ w, np.ones(3) / 3, method="SLSQP",
                      constraints=constraints, bounds=[(0.0, None)] * 3,
                      options={"ftol": 1e-14})
    return res.x


def test_portfolio_weights_move_with_the_target_return_as_the_kkt_system_says():
    target = np.array(0.11)
    assert_close(long_only_portfolio(target), frontier_weights(0.11), 1e-7, 1e-9, "weights")
    slope = frontier_weights(1.0) - frontier_weights(0.0)           # linear in the target
    assert_close(adsim.jacobian(long_only_portfolio)(target), slope, 1e-6, 1e-8, "dw / dr")


def test_portfolio_risk_in_every_mode():
    def risk(p):                        # the variance of the optimal portfolio, scaled
        w = long_only_portfolio(p[0])
        return p[1] * (w @ COVARIANCE @ w)
    check_solution_derivatives(risk, [0.11, 2.0], [1.0, 0.5], rtol=1e-5, moved=0.004,
                               value_rtol=1e-8)


def test_a_constraint_that_becomes_inactive_on_replay_is_a_branch_change():
    def risk(p):
        w = long_only_portfolio(p[0])
        return w @ COVARIANCE @ w
    tape = adsim.record(risk, np.array([0.11]))
    with pytest.raises(BranchChanged, match="active constraints of scipy.optimize.minimize"):
        tape.gradient(np.array([0.05]))
    # the functional API records again: below the unconstrained optimum's return the
    # target does not matter
    assert_close(adsim.grad(risk)(np.array([0.05])), [0.0], 0.0, 1e-9, "inactive target")


def test_slsqp_multipliers_are_the_kkt_multipliers_in_scipys_layout():
    """res.multipliers of SLSQP (shadow prices), one per constraint row
    (bounds have none): the equality rows first, then each constraint's
    lower and upper sides, zero where inactive. They are the multipliers of
    the KKT solution: SciPy's values, derivatives that match differences,
    and new values on replay (they were the recorded call's plain copy)."""
    def multipliers(p):
        res = so.minimize(
            lambda z: (z[0] - 3) ** 2 + (z[1] + 2) ** 2 + (z[2] - 1) ** 2 + p[0] * z[1],
            np.zeros(3), method="SLSQP", bounds=[(None, None), (-10, 10), (None, None)],
            constraints=[NonlinearConstraint(lambda z: np.array([z[2], z[0] + z[1]]),
                                             [0.0, -5.0], [p[1], np.inf]),
                         {"type": "eq", "fun": lambda z: z[0] - 2 * z[2] - p[0]},
                         LinearConstraint(np.array([[1.0, 1.0, 0.0]]), -6.0, np.inf)],
            options={"ftol": 1e-14})
        return res.multipliers

    def exact(p):
        # z2 = p1 (upper side held), z0 = 2 p1 + p0 (equality), z1 = -2 - p0 / 2:
        # grad f = mu_eq (1, 0, -2) - mu_up (0, 0, 1)
        mu_eq = 2 * (2 * p[1] + p[0] - 3)
        return np.array([mu_eq, 0.0, 0.0, -2 * (p[1] - 1) - 2 * mu_eq, 0.0])

    p = np.array([0.3, 0.4])
    tape = adsim.record(multipliers, p)
    for q in (p, p * np.array([1.2, 0.9])):
        assert_close(tape.forward(q), exact(q), 1e-6, 1e-8, "multipliers")
        assert_close(tape.jacobian(q), [[2.0, 4.0], [0, 0], [0, 0], [-4.0, -10.0], [0, 0]],
                     1e-9, 1e-9, "their derivatives")


def test_trust_constr_v_is_the_kkt_multipliers_per_constraint_component():
    """res.v of trust-constr: one array per constraint (bounds last), one
    multiplier per component of c, mu_upper - mu_lower - mu_equal of the
    KKT solution (SciPy's signs), zero where inactive: SciPy's values,
    exact derivatives, and new values on replay."""
    def multipliers(p):
        res = so.minimize(
            lambda z: (z[0] - 3) ** 2 + (z[1] + 2) ** 2 + (z[2] - 1) ** 2 + p[0] * z[1],
            np.zeros(3), method="trust-constr",
            bounds=so.Bounds([-np.inf, -1.0, -np.inf], [np.inf, 10.0, np.inf]),
            constraints=[NonlinearConstraint(lambda z: np.array([z[2], z[0] + z[1]]),
                                             [0.0, -5.0], [p[1], np.inf],
                                             hess=lambda z, v: np.zeros((3, 3))),
                         NonlinearConstraint(lambda z: z[0] - 2 * z[2] - p[0], 0.0, 0.0,
                                             hess=lambda z, v: np.zeros((3, 3))),
                         LinearConstraint(np.array([[1.0, 1.0, 0.0]]), -6.0, np.inf)],
            options={"gtol": 1e-12, "xtol": 1e-14})
        assert [np.size(v) for v in res.v] == [2, 1, 1, 3]
        return np.concatenate(res.v)

    def exact(p):
        # z = (2 p1 + p0, -1, p1): the upper side of z2 <= p1, the equality and
        # z1's lower bound hold it; grad f = mu_eq (1, 0, -2) - mu_up (0, 0, 1) + mu_lb (0, 1, 0)
        mu_eq = 2 * (2 * p[1] + p[0] - 3)
        return np.array([-2 * (p[1] - 1) - 2 * mu_eq, 0.0, -mu_eq, 0.0,
                         0.0, -(2.0 + p[0]), 0.0])

    p = np.array([0.3, 0.4])
    tape = adsim.record(multipliers, p)
    for q in (p, p * np.array([1.2, 0.9])):
        # the interior point method stops about 1e-5 inside the active limits
        assert_close(tape.forward(q), exact(q), 1e-4, 1e-6, "v")
        assert_close(tape.jacobian(q), [[-4.0, -10.0], [0, 0], [-2.0, -4.0], [0, 0], [0, 0],
                                        [-1.0, 0.0], [0, 0]], 1e-7, 1e-7, "its derivatives")


def test_trust_constr_with_a_nonlinear_limit_and_a_linear_equality():
    def weights(target):
        cons = [LinearConstraint(np.ones((1, 3)), 1.0, 1.0),
                NonlinearConstraint(lambda w: EXPECTED @ w, target, np.inf,
                                    jac=lambda w: EXPECTED[None, :],
                                    hess=lambda w, v: np.zeros((3, 3)))]
        return so.minimize(lambda w: w @ COVARIANCE @ w, np.ones(3) / 3, method="trust-constr",
                           jac=lambda w: 2.0 * COVARIANCE @ w, hess=lambda w: 2.0 * COVARIANCE,
                           constraints=cons, options=options).x
    slope = frontier_weights(1.0) - frontier_weights(0.0)
    # the interior point method ends with a barrier parameter: the return
    # constraint keeps a slack of about it, and the weights are that accurate
    options = {"gtol": 1e-12, "xtol": 1e-12, "barrier_tol": 1e-12}
    assert_close(adsim.jacobian(weights)(np.array(0.11)), slope, 1e-6, 1e-8, "dw / dr")
    options = {"gtol": 1e-10, "xtol": 1e-10}        # SciPy's barrier_tol: a slack near 1e-6
    assert_close(adsim.jacobian(weights)(np.array(0.11)), slope, 1e-4, 1e-6, "dw / dr")


FULLY_INVESTED = sp.csr_matrix(np.ones((1, 3)))


def test_a_sparse_linear_constraint_beside_one_with_a_parameter_as_its_limit():
    def weights(target):
        cons = [LinearConstraint(FULLY_INVESTED, 1.0, 1.0),
                LinearConstraint(EXPECTED[None, :], target, np.inf)]
        return so.minimize(lambda w: w @ COVARIANCE @ w, np.ones(3) / 3, method="SLSQP",
                           constraints=cons, options={"ftol": 1e-15}).x
    slope = frontier_weights(1.0) - frontier_weights(0.0)
    assert_close(adsim.jacobian(weights)(np.array(0.11)), slope, 1e-6, 1e-8, "dw / dr")


def test_a_linear_constraint_whose_matrix_holds_the_parameters():
    """Estimated expected returns in the constraint's matrix."""
    def weights(expected):
        cons = [LinearConstraint(np.ones((1, 3)), 1.0, 1.0),
                LinearConstraint(expected[None, :], 0.11, np.inf)]
        return so.minimize(lambda w: w @ COVARIANCE @ w, np.ones(3) / 3, method="SLSQP",
                           constraints=cons, options={"ftol": 1e-15}).x
    J = adsim.jacobian(weights)(EXPECTED)
    for i in range(3):
        want = central(lambda e: frontier_weights(0.11, e), [EXPECTED], [np.eye(3)[i]], h=1e-6)
        assert_close(J[:, i], want, 1e-6, 1e-8, f"dw / dmu_{i}")


def _projection(center, radius, **options):
    """The point of the ball |z| <= radius nearest ``center`` (outside it):
    radius * center / |center|; the radius read from a closure."""
    cons = [{"type": "ineq", "fun": lambda z: radius ** 2 - z @ z,
             "jac": lambda z: -2.0 * z}]
    return so.minimize(lambda z: np.sum((z - center) ** 2), np.zeros(2), method="SLSQP",
                       jac=lambda z: 2.0 * (z - center), constraints=cons,
                       options={"ftol": 1e-9, **options}).x


def test_a_nonlinear_constraint_read_from_a_closure_in_every_mode():
    def f(p):
        z = _projection(p[:2], p[2])
        return z[0] + 2.0 * z[1] ** 2
    p = np.array([1.5, 2.0, 0.8])
    # differences of a solution found to 1e-9 are good to about 1e-5
    check_solution_derivatives(f, p, [0.3, -0.2, 0.5], rtol=1e-4, moved=0.01, value_rtol=1e-8)
    c, r = p[:2], p[2]
    unit = c / np.linalg.norm(c)
    dz_dc = r / np.linalg.norm(c) * (np.eye(2) - np.outer(unit, unit))
    want = np.r_[np.array([1.0, 4.0 * r * unit[1]]) @ dz_dc, np.array([1.0, 4.0 * r * unit[1]])
                 @ unit]
    assert_close(adsim.grad(f)(p), want, 1e-6, 1e-8, "closed form")


def test_bounds_that_are_parameters():
    """z = max(z_free, lower): the lower bound, a parameter, holds the first
    coordinate; the second is free."""
    def f(p):
        return so.minimize(lambda z: np.sum((z - np.array([0.2, 0.7])) ** 2), np.ones(2),
                           method="L-BFGS-B", bounds=[(p[0], None), (p[1], 2.0)],
                           options={"gtol": 1e-12, "ftol": 1e-15}).x
    assert_close(adsim.jacobian(f)(np.array([0.5, 0.1])), [[1.0, 0.0], [0.0, 0.0]], 1e-9,
                 1e-9, "dz / dlower")


def test_fmin_slsqp_in_its_layout_with_shared_args():
    def f(r):
        out = so.fmin_slsqp(lambda w, r: w @ COVARIANCE @ w, np.ones(3) / 3,
                            eqcons=[lambda w, r: np.sum(w) - 1.0],
                            f_ieqcons=lambda w, r: np.array([EXPECTED @ w - r]),
                            bounds=[(0.0, 1.0)] * 3, args=(r,), acc=1e-14, iprint=0,
                            full_output=True)
        x, fx, its, imode, smode = out
        assert imode == 0 and isinstance(smode, str)
        return x
    slope = frontier_weights(1.0) - frontier_weights(0.0)
    assert_close(adsim.jacobian(f)(np.array(0.11)), slope, 1e-6, 1e-8, "dw / dr")


def test_fmin_cobyla_converged_tightly():
    """COBYLA's point is as accurate as its final trust radius and catol;
    the derivative is that of the exact solution at it."""
    def f(p):
        return so.fmin_cobyla(lambda z: np.sum((z - p[:2]) ** 2), np.zeros(2),
                              [lambda z, *_: p[2] ** 2 - z @ z], rhoend=1e-10, catol=1e-13,
                              maxfun=4000)
    p = np.array([1.5, 2.0, 0.8])
    c, r = p[:2], p[2]
    unit = c / np.linalg.norm(c)
    assert_close(f(p), r * unit, 1e-6, 1e-8, "value")
    want = np.c_[r / np.linalg.norm(c) * (np.eye(2) - np.outer(unit, unit)), unit]
    assert_close(adsim.jacobian(f)(p), want, 1e-5, 1e-7, "dz / dp")


def test_the_explicit_fmin_cobyla_equals_the_hooked_one():
    import adsim.scipy.optimize as explicit

    def f(p, solver):
        return solver(lambda z: np.sum((z - p[:2]) ** 2), np.zeros(2),
                      [lambda z: p[2] ** 2 - z @ z], rhoend=1e-10, catol=1e-13, maxfun=4000)
    p = np.array([1.5, 2.0, 0.8])
    hooked = adsim.jacobian(lambda p: f(p, so.fmin_cobyla))(p)
    with adsim.interposition(False):
        plain = adsim.jacobian(lambda p: f(p, explicit.fmin_cobyla))(p)
    assert_close(plain, hooked, 1e-14, 1e-14, "explicit against hooked")


# ---- refusals ------------------------------------------------------------------

def test_an_inequality_touched_with_a_zero_multiplier_is_refused():
    """At the target return the unconstrained optimum already earns, the
    return constraint is active with multiplier zero: the derivative jumps."""
    free = so.minimize(lambda w: w @ COVARIANCE @ w, np.ones(3) / 3, method="SLSQP",
                       constraints=[{"type": "eq", "fun": lambda w: np.sum(w) - 1.0}],
                       options={"ftol": 1e-15}).x
    with pytest.raises(UndefinedDerivative, match="zero multiplier"):
        adsim.grad(lambda p: np.sum(long_only_portfolio(p[0]) ** 2))(np.array([EXPECTED @ free]))


def test_more_active_constraints_than_unknowns_are_refused():
    def f(p):
        cons = [{"type": "ineq", "fun": lambda z: z[0] - p[0]},
                {"type": "ineq", "fun": lambda z: z[1] - p[0]},
                {"type": "ineq", "fun": lambda z: z[0] + z[1] - 2 * p[0]}]
        return so.minimize(lambda z: np.sum(z ** 2), np.ones(2), method="SLSQP",
                           constraints=cons, options={"ftol": 1e-14}).x
    with pytest.raises(UndefinedDerivative, match="3 constraints are active for 2 unknowns"):
        adsim.jacobian(f)(np.array([0.5]))


def test_an_unconverged_constrained_solve_is_refused():
    def f(p):
        return so.minimize(lambda z: np.sum((z - p) ** 4), np.zeros(2), method="SLSQP",
                           constraints=[{"type": "ineq", "fun": lambda z: 1.0 - z @ z}],
                           options={"maxiter": 1}).x
    with pytest.raises(SolverNotConverged, match="minimize did not converge"):
        adsim.jacobian(f)(np.array([2.0, 3.0]))


def test_a_coarse_cobyla_point_is_not_a_kkt_point():
    def f(r):
        return so.fmin_cobyla(lambda w: w @ COVARIANCE @ w, np.ones(3) / 3,
                              [lambda w: np.sum(w) - 1.0, lambda w: 1.0 - np.sum(w),
                               lambda w: EXPECTED @ w - r], rhoend=1e-10)
    # which check refuses it depends on where COBYLA stops
    with pytest.raises(SolverNotConverged,
                       match="not a KKT point|violates its constraints|not a constrained minimum"):
        adsim.jacobian(f)(np.array(0.11))
