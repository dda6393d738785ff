"""curve_fit and the legacy minimisers (fmin, fmin_powell, fmin_cg,
fmin_bfgs, fmin_ncg, fmin_l_bfgs_b, fmin_tnc) differentiated through their
solutions, with their own return layouts (full_output, retall)."""
import numpy as np
import pytest
import scipy.optimize as so

import adsim
from adsim.errors import SolverNotConverged, UnsupportedOperation
from fdcheck import assert_close
from implicit_checks import check_solution_derivatives

P = np.array([1.0, -2.0, 0.5])
V = np.array([0.3, -0.7, 0.4])
WEIGHTS = np.array([1.0, 2.0, 3.0])


def well(z, p):
    """A separable well: its minimiser is z = p - sin(p) / 2, to rounding."""
    return np.sum((z - p) ** 2) + np.sum(np.sin(p) * z)


def minimiser_jacobian(p):
    return np.diag(1.0 - 0.5 * np.cos(p))


TIGHT = {
    "fmin": dict(xtol=1e-12, ftol=1e-15, maxiter=20000, maxfun=20000, disp=0),
    "fmin_powell": dict(xtol=1e-12, ftol=1e-15, disp=0),
    "fmin_cg": dict(gtol=1e-10, disp=0),
    "fmin_bfgs": dict(fprime=adsim.grad(well), gtol=1e-9, disp=0),
    "fmin_ncg": dict(fprime=adsim.grad(well), fhess_p=adsim.hessp(well), avextol=1e-12, disp=0),
    "fmin_l_bfgs_b": dict(fprime=adsim.grad(well), pgtol=1e-11, factr=10.0),
    "fmin_tnc": dict(fprime=adsim.grad(well), messages=0),
}


def solve(solver, p, **more):
    return getattr(so, solver)(well, np.zeros(3), args=(p,), **{**TIGHT[solver], **more})


def solution(solver, p):
    out = solve(solver, p)
    return out[0] if solver in ("fmin_l_bfgs_b", "fmin_tnc") else out


@pytest.mark.parametrize("solver", sorted(TIGHT))
def test_legacy_minimisers_agree_with_differences(solver):
    def f(p):
        return np.sum(WEIGHTS * solution(solver, p) ** 2)
    rtol = 1e-3 if solver in ("fmin", "fmin_powell", "fmin_tnc") else 1e-5
    check_solution_derivatives(f, P, V, rtol=rtol, atol=1e-6, value_rtol=1e-5,
                               second_order=False)
    assert_close(adsim.jacobian(lambda p: solution(solver, p))(P), minimiser_jacobian(P),
                 1e-5, 1e-6, "Jacobian of the minimiser")


def test_full_output_and_retall_keep_scipy_layouts():
    def layouts(p):
        xopt, fopt, n_iter, n_calls, flag, allvecs = solve("fmin", p, full_output=True,
                                                          retall=True)
        x_only, history = solve("fmin", p, retall=True)
        x_bfgs, f_bfgs, g_bfgs, B, fc, gc, flag_bfgs = solve("fmin_bfgs", p, full_output=True)
        x_lb, f_lb, info = solve("fmin_l_bfgs_b", p)
        x_tnc, nfeval, rc = solve("fmin_tnc", p)
        assert flag == 0 and flag_bfgs == 0 and info["warnflag"] == 0 and rc in (0, 1, 2)
        assert np.ndim(fopt) == 0 and len(allvecs) == len(history) > 1
        assert np.shape(B) == (3, 3) and isinstance(n_iter, int)
        return xopt[0] + x_only[1] + x_bfgs[2] + x_lb[0] + x_tnc[1]
    assert_close(adsim.grad(layouts)(P), np.diag(minimiser_jacobian(P)) * [2, 2, 1], 1e-5, 1e-6)


def test_objective_returning_its_gradient():
    def value_and_gradient(z, p):
        return well(z, p), adsim.grad(well)(z, p)

    def f(p):
        x, value, info = so.fmin_l_bfgs_b(value_and_gradient, np.zeros(3), args=(p,),
                                          pgtol=1e-12, factr=10.0)
        return np.sum(x)
    assert_close(adsim.grad(f)(P), np.diag(minimiser_jacobian(P)), 1e-7, 1e-9)


def test_unconverged_legacy_minimiser_is_refused():
    def f(p):
        return np.sum(so.fmin_bfgs(well, np.zeros(3), args=(p,), maxiter=1, disp=0))
    with pytest.raises(SolverNotConverged, match="fmin_bfgs did not converge"):
        adsim.grad(f)(P)


def test_bounds_active_at_the_solution_are_refused():
    def f(p):
        return np.sum(so.fmin_l_bfgs_b(well, np.zeros(3), args=(p,), approx_grad=True,
                                       bounds=[(0.0, 0.1)] * 3)[0])
    with pytest.raises(UnsupportedOperation, match="lies on its bounds"):
        adsim.grad(f)(P)


# ------------------------------------------------------------------------- curve_fit

T = np.linspace(0.0, 4.0, 25)
NOISE = 0.02 * np.random.default_rng(7).standard_normal(T.size)
Y = 2.5 * np.exp(-1.3 * T) + NOISE
SIGMA = 0.02 * (1.0 + 0.5 * T)
FIT = dict(ftol=1e-15, xtol=1e-15, gtol=1e-15)


def decay(t, amplitude, rate):
    return amplitude * np.exp(-rate * t)


def test_decay_rate_fitted_to_noisy_data_differentiated_by_the_data():
    """A user's fit of an exponential decay: how the fitted rate moves with
    each measurement (its influence), and how its variance does."""
    def fitted_rate(y):
        popt, pcov = so.curve_fit(decay, T, y, p0=[1.0, 1.0], sigma=SIGMA, **FIT)
        return popt[1]

    def rate_variance(y):
        popt, pcov = so.curve_fit(decay, T, y, p0=[1.0, 1.0], sigma=SIGMA, **FIT)
        return pcov[1, 1]

    direction = np.cos(np.arange(T.size))
    check_solution_derivatives(fitted_rate, Y, direction, rtol=1e-5, atol=1e-7, moved=0.01)
    check_solution_derivatives(rate_variance, Y, direction, rtol=1e-4, atol=1e-10, moved=0.01,
                               second_order=False)
    # against the same fit written as least_squares (differentiated since before)
    def by_least_squares(y):
        return so.least_squares(lambda p: (decay(T, *p) - y) / SIGMA, [1.0, 1.0],
                                **FIT).x[1]
    assert_close(adsim.grad(fitted_rate)(Y), adsim.grad(by_least_squares)(Y), 1e-8, 1e-10)
    # pcov's value is SciPy's (from its Jacobian by differences)
    popt, pcov = so.curve_fit(decay, T, Y, p0=[1.0, 1.0], sigma=SIGMA, **FIT)
    tape = adsim.record(rate_variance, Y)
    assert_close(tape.forward(Y), pcov[1, 1], 1e-6, 0, "pcov")


def decay_jacobian(t, amplitude, rate):
    return np.stack([np.exp(-rate * t), -amplitude * t * np.exp(-rate * t)], axis=1)


@pytest.mark.parametrize("how", ["times", "sigma", "covariance", "bounds", "absolute", "jac"])
def test_curve_fit_options_agree_with_differences(how):
    cov = np.diag(SIGMA ** 2) + 1e-5 * np.exp(-np.abs(T[:, None] - T[None, :]))

    def f(q):                      # q: the data's scale and the sample times' stretch
        t, y, options = T, Y * q[0], dict(FIT, p0=[1.0, 1.0])
        if how == "times":
            t = T * q[1]
        elif how == "sigma":
            options["sigma"] = SIGMA * q[1]
        elif how == "covariance":
            options["sigma"] = cov * q[1]
        elif how == "bounds":
            options.update(bounds=([0.0, 0.0], [10.0, 10.0]), method="trf")
        elif how == "jac":
            options.update(sigma=SIGMA * q[1], jac=decay_jacobian)
        else:
            options.update(sigma=SIGMA * q[1], absolute_sigma=True)
        popt, pcov = so.curve_fit(decay, t, y, **options)
        return popt[0] * popt[1] + 10.0 * pcov[0, 1]
    check_solution_derivatives(f, np.array([1.0, 1.1]), np.array([0.4, -0.3]), rtol=1e-4,
                               atol=1e-8, moved=0.01, second_order=False)


def test_curve_fit_model_reading_an_active_value_from_its_closure():
    def f(offset):
        def shifted(t, amplitude, rate):
            return amplitude * np.exp(-rate * t) + offset[0]
        popt, _ = so.curve_fit(shifted, T, Y, p0=[1.0, 1.0], **FIT)
        return popt[1]
    # the rate of a fit with a free offset is ill-conditioned: solves from
    # different starts stop up to a few 1e-9 apart in it (seen: 2.3e-9)
    check_solution_derivatives(f, np.array([0.05]), np.array([1.0]), rtol=1e-4, atol=1e-8,
                               moved=0.01, second_order=False, value_rtol=1e-8)


def test_curve_fit_full_output_and_default_start():
    def f(y):
        popt, pcov, info, message, ier = so.curve_fit(decay, T, y, full_output=True, **FIT)
        assert ier in (1, 2, 3, 4) and "fvec" in info and isinstance(message, str)
        return popt[1]
    def plain(y):
        return so.curve_fit(decay, T, y, **FIT)[0][1]
    assert_close(adsim.grad(f)(Y), adsim.grad(plain)(Y), 1e-12, 1e-14)


def test_curve_fit_full_output_residuals_move_with_the_data():
    """infodict['fvec'] of curve_fit(full_output=True), read as a chi-square,
    is the residual at the active popt: its gradient in the data is that of
    the fit's squared residual (by the envelope theorem, 2 (y - model)),
    and a replay at new data gives its new value (it was the recorded
    fit's plain value)."""
    def chi2(y):
        popt, pcov, info, message, ier = so.curve_fit(decay, T, y, full_output=True, **FIT)
        return np.sum(info["fvec"] ** 2)

    def exact(y):
        popt = so.curve_fit(decay, T, y, **FIT)[0]
        r = decay(T, *popt) - y
        return np.sum(r ** 2), -2.0 * r

    tape = adsim.record(chi2, Y)
    for y in (Y, Y * 1.05 + 0.01):
        value, gradient = exact(y)
        assert_close(tape.forward(y), value, 1e-7, 1e-12, "replayed chi-square")
        assert_close(tape.gradient(y), gradient, 1e-6, 1e-9, "gradient of the chi-square")


def test_curve_fit_refusals():
    def omitting(y):
        return so.curve_fit(decay, T, y, p0=[1.0, 1.0], nan_policy="omit")[0][1]
    with pytest.raises(UnsupportedOperation, match="nan_policy='omit'"):
        adsim.grad(omitting)(Y)

    def with_nan(y):
        return so.curve_fit(decay, T, y * np.where(T > 3.0, np.nan, 1.0), p0=[1.0, 1.0])[0][1]
    with pytest.raises(ValueError, match="must not contain infs or NaNs"):
        adsim.grad(with_nan)(Y)

    def too_few_steps(y):
        return so.curve_fit(decay, T, y, p0=[1.0, 1.0], maxfev=2)[0][1]
    with pytest.raises(SolverNotConverged, match="curve_fit did not converge"):
        adsim.grad(too_few_steps)(Y)
