"""Minimisers of scipy.optimize differentiated through their solutions:
the minimiser x*(p) through the first-order conditions grad_x f(x*, p) = 0
(minimize, minimize_scalar), J^T r = 0 (least_squares, leastsq); bounds
inactive at the solution (minimize's active bounds and constraints:
test_implicit_constrained.py); refusals where the derivative would be wrong."""
import numpy as np
import pytest
import scipy.optimize as so

import adsim
from adsim.errors import SolverNotConverged, UndefinedDerivative, UnsupportedOperation
from fdcheck import assert_close, central
from implicit_checks import check_solution_derivatives

P = np.array([1.0, 2.0])
V = np.array([0.3, -0.7])


def quartic(z, p):
    return np.sum((z - p) ** 4) + p[0] * np.sum(z ** 2) + z[0] * z[1]


@pytest.mark.parametrize("method, options", [
    ("BFGS", {"gtol": 1e-7}), ("L-BFGS-B", {"gtol": 1e-12, "ftol": 1e-15}),
    ("Newton-CG", {"xtol": 1e-12}), ("trust-exact", {"gtol": 1e-12}),
    ("Nelder-Mead", {"xatol": 1e-12, "fatol": 1e-15, "maxiter": 4000})])
def test_minimize_methods_agree_with_differences(method, options):
    needs = {"BFGS": dict(jac=adsim.grad(quartic)), "Newton-CG": dict(jac=adsim.grad(quartic)),
             "trust-exact": dict(jac=adsim.grad(quartic), hess=adsim.hessian(quartic))}

    def f(p):
        res = so.minimize(quartic, np.zeros(2), args=(p,), method=method, options=options,
                          **needs.get(method, {}))
        return np.sum(res.x ** 2)
    # a minimiser is found to about the square root of the objective's precision:
    # differences of it are that accurate
    check_solution_derivatives(f, P, V, rtol=1e-3 if method == "Nelder-Mead" else 1e-4,
                               atol=1e-7, value_rtol=1e-6,
                               second_order=method in ("Newton-CG", "trust-exact"))


def test_minimize_and_fsolve_on_the_gradient_give_the_same_derivative():
    """The derivative is that of the exact minimiser: fsolve on the gradient,
    which converges to rounding, gives the same (to the minimiser's accuracy)."""
    grad_quartic = adsim.grad(quartic)

    def by_minimize(p):
        return so.minimize(quartic, np.zeros(2), args=(p,), jac=grad_quartic, method="BFGS",
                           options={"gtol": 1e-9}).x

    def by_fsolve(p):
        return so.fsolve(grad_quartic, np.zeros(2), args=(p,), xtol=1e-14)
    assert_close(adsim.jacobian(by_minimize)(P), adsim.jacobian(by_fsolve)(P), 1e-7, 1e-9,
                 "Jacobian of the minimiser")


def test_minimize_with_the_gradient_returned_with_the_objective():
    def fun(z, p):
        return quartic(z, p), adsim.grad(quartic)(z, p)

    def f(p):
        res = so.minimize(fun, np.zeros(2), args=(p,), jac=True, method="BFGS",
                          options={"gtol": 1e-10})
        return res.x[0] - res.x[1]
    check_solution_derivatives(f, P, V, rtol=1e-4, value_rtol=1e-6)


def test_ridge_regression_minimiser_as_a_function_of_the_regularisation():
    """The minimiser of ||A w - b||^2 + alpha ||w||^2 found by minimize is
    (A^T A + alpha I)^-1 A^T b: its derivative in alpha is known exactly."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((20, 4))
    b = rng.standard_normal(20)

    def fitted(log_alpha):
        alpha = np.exp(log_alpha)
        def objective(w):
            return np.sum((A @ w - b) ** 2) + alpha * np.sum(w ** 2)
        res = so.minimize(objective, np.zeros(4), jac=adsim.grad(objective), method="BFGS",
                          options={"gtol": 1e-11})
        return res.x

    def validation_error(log_alpha):
        return np.sum((fitted(log_alpha) - 0.1) ** 2)
    log_alpha = np.array(0.5)
    alpha = np.exp(0.5)
    K = A.T @ A + alpha * np.eye(4)
    w = np.linalg.solve(K, A.T @ b)
    dw = -np.linalg.solve(K, w) * alpha                 # d w / d log(alpha)
    assert_close(adsim.jacobian(fitted)(log_alpha), dw, 1e-6, 1e-8, "dw/dlog(alpha)")
    assert_close(adsim.grad(validation_error)(log_alpha), 2 * (w - 0.1) @ dw, 1e-6, 1e-8,
                 "validation gradient")


def test_a_large_smoothing_problem_takes_the_sparse_hessian():
    """Whittaker smoothing of 450 samples: the minimiser of ||x - y||^2 +
    alpha ||diff(x)||^2 is (I + alpha D^T D)^-1 y; its derivative in
    log(alpha) comes from the sparse Hessian of the objective (more than
    400 unknowns)."""
    n = 450
    t = np.linspace(0.0, 1.0, n)
    y = np.sin(6 * t) + 0.1 * np.cos(40 * t)

    def smoothed(log_alpha):
        alpha = np.exp(log_alpha)

        def objective(x):
            return np.sum((x - y) ** 2) + alpha * np.sum(np.diff(x) ** 2)
        return so.minimize(objective, np.zeros(n), jac=adsim.grad(objective), method="L-BFGS-B",
                           options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 5000}).x
    D = np.diff(np.eye(n), axis=0)
    K = np.eye(n) + np.e * D.T @ D
    x = np.linalg.solve(K, y)
    want = -np.linalg.solve(K, np.e * D.T @ D @ x)
    assert_close(adsim.jacobian(smoothed)(np.array(1.0)), want, 1e-6, 1e-8, "dx / dlog(alpha)")


def test_minimize_with_bounds_inactive_at_the_solution():
    def f(p):
        res = so.minimize(quartic, np.zeros(2), args=(p,), method="L-BFGS-B",
                          bounds=[(-5.0, 5.0), (None, 3.0)],
                          options={"gtol": 1e-12, "ftol": 1e-15})
        return np.sum(res.x ** 2)
    check_solution_derivatives(f, P, V, rtol=1e-4, value_rtol=1e-6, second_order=False)


def test_minimize_scalar():
    def f(p):
        # d/dz: 2 (z - a) + 4 b z^3 = 0; at (1, 2), z = 1/2
        return so.minimize_scalar(lambda z: (z - p[0]) ** 2 + p[1] * z ** 4).x
    # dz/da = 2 / (2 + 12 b z^2) = 1/4, dz/db = -4 z^3 / (2 + 12 b z^2) = -1/16
    # Brent's method finds z to about 1e-8 (its default tol): so is the derivative
    assert_close(adsim.grad(f)(P), [0.25, -0.0625], 1e-7, 1e-9, "minimize_scalar")

    def bounded(p):
        return so.minimize_scalar(lambda z: (z - p[0]) ** 2 + p[1] * z ** 4, bounds=(-3, 3),
                                  method="bounded", options={"xatol": 1e-12}).x
    assert_close(adsim.grad(bounded)(P), [0.25, -0.0625], 1e-7, 1e-9, "bounded")


def test_least_squares_curve_fit_as_a_function_of_the_data():
    """Fitted decay rate of y = c exp(-k t) as a function of the measured
    values: least_squares with the data in args, and leastsq."""
    t = np.linspace(0.0, 2.0, 8)

    def residuals(theta, y):
        return theta[0] * np.exp(-theta[1] * t) - y

    def by_least_squares(y):
        res = so.least_squares(residuals, np.array([1.0, 1.0]), args=(y,), xtol=1e-15,
                               ftol=1e-15, gtol=1e-15)
        return res.x[1]

    def by_leastsq(y):
        theta, ier = so.leastsq(residuals, np.array([1.0, 1.0]), args=(y,), xtol=1e-14,
                                ftol=1e-14)
        return theta[1]
    y = 2.0 * np.exp(-0.7 * t) + 0.01 * np.sin(7 * t)
    v = np.cos(np.arange(8.0))
    for f in (by_least_squares, by_leastsq):
        check_solution_derivatives(f, y, v, rtol=1e-4, moved=0.01, value_rtol=1e-7)


def test_leastsq_full_output_covariance_and_residuals_move_with_the_parameters():
    """cov_x and infodict['fvec'] of leastsq(full_output=True), read by a
    program to weigh its fit, are (J^T J)^-1 and the residuals at the
    active solution: their derivatives are those of the exact fit (k* from
    the normal equation by brentq, J = -a t exp(-k t)), and a replay at new
    parameters gives their new values, not the recorded call's."""
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    y = np.array([1.02, 0.63, 0.35, 0.24, 0.13, 0.09])

    def fitted(p):
        k, cov, info, _, _ = so.leastsq(lambda k: p[0] * np.exp(-k[0] * t) + p[1] - y, [1.0],
                                        full_output=True, xtol=1e-14, ftol=1e-14)
        return cov[0, 0] + np.sum(info["fvec"] ** 2)

    def exact(p):
        a, b = p
        k = so.brentq(lambda k: np.sum((a * np.exp(-k * t) + b - y) * t * np.exp(-k * t)),
                      0.1, 5.0, xtol=1e-15, rtol=1e-15)
        return 1.0 / np.sum((a * t * np.exp(-k * t)) ** 2) + \
            np.sum((a * np.exp(-k * t) + b - y) ** 2)

    p = np.array([1.0, 0.05])
    tape = adsim.record(fitted, p)
    for q in (p, p * np.array([1.03, 0.9])):
        want = np.array([central(exact, [q], [e], 1e-4) for e in np.eye(2)])
        assert_close(tape.gradient(q), want, 1e-7, 1e-9, "gradient of cov_x + |fvec|^2")
        assert_close(tape.forward(q), exact(q), 1e-7, 0.0, "replayed value")


def test_least_squares_keyword_arguments_and_bounds():
    def f(p):
        res = so.least_squares(lambda z, scale: scale * (z - p) + 0.1 * z ** 3, np.zeros(2),
                               kwargs={"scale": p[0]}, bounds=([-4, -4], [4, 4]),
                               xtol=1e-15, ftol=1e-15, gtol=1e-15)
        return np.sum(res.x ** 2)
    check_solution_derivatives(f, P, V, rtol=1e-5, value_rtol=1e-7, second_order=False)


# ---- refusals ------------------------------------------------------------------

def test_a_bound_active_at_the_solution_holds_its_coordinate():
    """minimize with bounds goes through the KKT conditions
    (tests/scipy/test_implicit_constrained.py): z = clip(p, 0, 1.5), held by
    the upper bound in its second coordinate."""
    def f(p):
        return so.minimize(lambda z: np.sum((z - p) ** 2), np.zeros(2),
                           bounds=[(0.0, 1.5)] * 2, options={"gtol": 1e-12}).x
    assert_close(adsim.jacobian(f)(P), [[1.0, 0.0], [0.0, 0.0]], 1e-9, 1e-9, "dz / dp")


def test_a_robust_loss_is_refused():
    def f(p):
        return np.sum(so.least_squares(lambda z: z - p, np.zeros(2), loss="soft_l1").x)
    with pytest.raises(UnsupportedOperation, match="loss='soft_l1'"):
        adsim.grad(f)(P)


def test_a_flat_direction_of_the_objective_is_refused():
    def f(p):
        return np.sum(so.minimize(lambda z: p[1] * (z[0] + z[1] - p[0]) ** 2, np.zeros(2)).x)
    with pytest.raises(UndefinedDerivative, match="singular"):
        adsim.grad(f)(P)


def test_an_unsuccessful_minimisation_is_refused():
    def f(p):
        return np.sum(so.minimize(lambda z: np.sum((z - p) ** 4), np.zeros(2), method="BFGS",
                                  options={"maxiter": 2}).x)
    with pytest.raises(SolverNotConverged, match="minimize did not converge"):
        adsim.grad(f)(P)


def test_the_minimum_value_in_the_result_moves_with_the_parameters():
    """``res.fun`` (and least_squares' ``cost``, the legacy full outputs'
    ``fopt``) is the objective at the active solution: by the envelope
    theorem its gradient is the objective's partial derivative in p there
    (SciPy's float would give zero); ``res.jac`` is made there too."""
    def partial(z, p):                     # d quartic / dp at fixed z
        return adsim.grad(lambda q: quartic(z, q))(p)

    def solution(p):
        return so.minimize(quartic, np.zeros(2), args=(p,), jac=adsim.grad(quartic),
                           options={"gtol": 1e-9}).x
    calls = {
        "minimize": lambda p: so.minimize(quartic, np.zeros(2), args=(p,),
                                          jac=adsim.grad(quartic), options={"gtol": 1e-9}).fun,
        "fmin full_output": lambda p: so.fmin(quartic, np.zeros(2), args=(p,), xtol=1e-12,
                                              ftol=1e-15, full_output=True, disp=False)[1],
        "fmin_l_bfgs_b": lambda p: so.fmin_l_bfgs_b(quartic, np.zeros(2), args=(p,),
                                                    approx_grad=True, pgtol=1e-10)[1],
        "minimize SLSQP with an inactive constraint": lambda p: so.minimize(
            quartic, np.zeros(2), args=(p,), method="SLSQP", options={"ftol": 1e-14},
            constraints=[{"type": "ineq", "fun": lambda z: 10.0 - z[0]}]).fun,
    }
    want = partial(solution(P), P)
    for name, f in calls.items():
        assert_close(adsim.grad(f)(P), want, 1e-5, 1e-7, name)

    def cost_and_variance(p):
        """A line fitted to an exponential: its cost and the variance of its
        slope from res.jac, as scripts compute it."""
        t = np.linspace(0.0, 1.0, 8)
        res = so.least_squares(lambda th: th[0] + th[1] * t ** p[1] - p[0] * np.exp(p[1] * t),
                               np.zeros(2), jac=lambda th: np.stack([t ** 0, t ** p[1]], 1),
                               xtol=1e-14, ftol=1e-14, gtol=1e-14)
        covariance = np.linalg.inv(res.jac.T @ res.jac) * 2.0 * res.cost / (8 - 2)
        return res.cost + covariance[1, 1]
    check_solution_derivatives(cost_and_variance, P, V, rtol=1e-6, second_order=False)

    def held_gradient(p):
        """res.jac of a constrained minimum: the objective's gradient there,
        held by the constraint (not zero)."""
        res = so.minimize(lambda z: np.sum((z - p) ** 2), np.zeros(2), method="SLSQP",
                          constraints=[{"type": "ineq", "fun": lambda z: 0.5 - z[0]}],
                          options={"ftol": 1e-14})
        return res.jac @ np.array([1.0, 3.0])
    assert_close(adsim.grad(held_gradient)(P), [-2.0, 0.0], 1e-8, 1e-8, "d jac / dp")


def bowl(w, p):
    return np.sum((w - p) ** 2) + 0.1 * np.sum(w ** 4) + np.prod(w)


def test_bfgs_stopping_at_precision_loss_on_a_minimum_is_differentiated():
    # without a gradient and with tol=1e-12, BFGS stops with "Desired error not
    # necessarily achieved due to precision loss" at a minimum good to about
    # 1e-8: programs go on with res.x, and so does adsim
    def f(p):
        res = so.minimize(bowl, np.zeros(2), args=(p,), method="BFGS", tol=1e-12)
        return np.sum(res.x ** 2)
    p = np.array([1.5, 0.2])
    assert so.minimize(bowl, np.zeros(2), args=(p,), method="BFGS", tol=1e-12).status == 2
    g = adsim.grad(f)(p)
    want = [central(f, [p], [e], 1e-3) for e in np.eye(2)]
    assert_close(g, want, rtol=1e-5, what="grad")


def test_bfgs_stopped_by_maxiter_away_from_a_minimum_still_raises():
    def f(p):
        res = so.minimize(bowl, np.zeros(2), args=(p,), method="BFGS",
                          options={"maxiter": 2})
        return np.sum(res.x ** 2)
    with pytest.raises(SolverNotConverged, match="Maximum number of iterations"):
        adsim.grad(f)(np.array([1.5, 0.2]))
