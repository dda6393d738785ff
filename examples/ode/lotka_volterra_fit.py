"""Lotka-Volterra parameter fit with SciPy's ``solve_ivp``, differentiated by adsim.

    x' = alpha x - beta x y,      y' = delta x y - gamma y.

This is the script one writes with ``scipy.integrate.solve_ivp``: a
right-hand side in plain NumPy, ``solve_ivp(..., t_eval=t_obs, args=...)``
for the model at the observation times, a least-squares misfit, and
``scipy.optimize.minimize``. The only change is the import of ``solve_ivp``
from ``adsim.integrate`` (inside a recording SciPy's own would be adsim's
too; the import says so, and gives the options ``memory_limit=`` and
``snapshots=``): the misfit is then differentiable, and
``adsim.value_and_grad`` hands L-BFGS-B exact gradients with respect to the
four rates and the two initial populations (in log space, so they stay
positive).

The gradient is the discrete adjoint of the adaptive RK45 integration
(rtol = atol = 1e-9) along the steps it takes, their sizes held fixed. The
script checks it against the continuous forward sensitivities (the
derivative of the exact solution, ``sensitivity_reference.py``: they agree
to about the tolerance) and against central differences of the same misfit
(which also differentiate the step-size control: again to about the
tolerance),
then fits noisy synthetic data and checks the fitted parameters and the
residuals.

Run: ``python examples/ode/lotka_volterra_fit.py [--quick] [--figure PATH]``
"""
import argparse
import os
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp
from scipy.optimize import minimize

import adsim
from adsim.integrate import solve_ivp      # instead of: from scipy.integrate import solve_ivp
from sensitivity_reference import (central_differences, chain, forward_sensitivities,
                                   relative_error)

TRUE_RATES = np.array([1.0, 0.1, 1.5, 0.075])      # alpha, beta, gamma, delta
TRUE_START = np.array([10.0, 5.0])                 # prey, predators at t = 0
TRUE_THETA = np.log(np.concatenate([TRUE_RATES, TRUE_START]))
GUESS = TRUE_THETA + np.log([1.3, 0.8, 0.75, 1.25, 0.8, 1.2])
NAMES = ("alpha", "beta", "gamma", "delta", "x0", "y0")
TOL = dict(rtol=1e-9, atol=1e-9)


def lotka_volterra(t, z, rates):
    x, y = z[0], z[1]
    alpha, beta, gamma, delta = rates[0], rates[1], rates[2], rates[3]
    return [alpha * x - beta * x * y, delta * x * y - gamma * y]


def start_and_rates(theta):
    """``(z0, rates)`` for ``theta = log(alpha, beta, gamma, delta, x0, y0)``."""
    return np.exp(theta[4:]), np.exp(theta[:4])


def model(theta, t_obs, **options):
    """Populations at the observation times, shape (2, n_obs); ``options`` of
    solve_ivp (method, rtol, atol) replace the defaults."""
    start, rates = start_and_rates(theta)
    sol = solve_ivp(lotka_volterra, (0.0, t_obs[-1]), start, t_eval=t_obs, args=(rates,),
                    **{**TOL, **options})
    return sol.y


class Observations:
    """Populations observed at ``times`` (shape (2, n_obs)) with log-normal
    noise of relative size ``noise``."""

    def __init__(self, times, values, noise):
        self.times, self.values, self.noise = times, values, noise

    def misfit_of(self, populations):
        """Half the sum of squared log-residuals over the noise variance."""
        r = (np.log(populations) - np.log(self.values)) / self.noise
        return 0.5 * np.sum(r * r)

    def misfit(self, **options):
        """The misfit as a function of ``theta`` (``options`` of solve_ivp)."""
        return lambda theta: self.misfit_of(model(theta, self.times, **options))

    def reference_gradient(self, theta):
        """d misfit / d theta of the exact ODE solution (forward sensitivities)."""
        y, S = forward_sensitivities(lotka_volterra, (0.0, self.times[-1]), start_and_rates,
                                     theta, self.times)
        return chain(self.misfit_of, y, S)


def observations(quick=False, seed=0, noise=0.05):
    """The true model with noise. The random draw stays out of the class: the
    tape cache of ``adsim.value_and_grad`` checks the code the misfit can
    reach (the class's methods included), and a random draw there would make
    it record the misfit again at every call."""
    n_obs, t_end = (15, 8.0) if quick else (30, 15.0)
    times = np.linspace(t_end / n_obs, t_end, n_obs)
    clean = model(TRUE_THETA, times)
    rng = np.random.default_rng(seed)
    return Observations(times, clean * np.exp(noise * rng.standard_normal(clean.shape)), noise)


def fit(obs, theta0=GUESS, value_and_grad=None):
    """L-BFGS-B with adsim's gradients (``value_and_grad`` of the misfit, made
    here if not given); the result, the number of evaluations and how often
    the misfit was recorded."""
    value_and_grad = value_and_grad or adsim.value_and_grad(obs.misfit())
    evaluations = []

    def objective(theta):
        value, g = value_and_grad(theta)
        evaluations.append(value)
        return value, g
    result = minimize(objective, theta0, jac=True, method="L-BFGS-B", options=dict(maxiter=300))
    return result, len(evaluations), value_and_grad.tapes.recordings


def run(quick=False, verbose=True, seed=0):
    obs = observations(quick, seed)
    misfit = obs.misfit()
    value_and_grad = adsim.value_and_grad(misfit)
    value_and_grad(GUESS)                                    # records the tape
    t0 = time.perf_counter()
    _, g = value_and_grad(GUESS)
    t_grad = time.perf_counter() - t0
    start, rates = start_and_rates(GUESS)
    t0 = time.perf_counter()
    scipy_solve_ivp(lotka_volterra, (0.0, obs.times[-1]), start, t_eval=obs.times,
                    args=(rates,), **TOL)
    t_scipy = time.perf_counter() - t0
    sens_error = relative_error(g, obs.reference_gradient(GUESS))
    fd_error = relative_error(g, central_differences(misfit, GUESS))

    t0 = time.perf_counter()
    result, evaluations, recordings = fit(obs, value_and_grad=value_and_grad)
    t_fit = time.perf_counter() - t0
    fitted = np.exp(result.x)
    truth = np.exp(TRUE_THETA)
    parameter_error = float(np.max(np.abs(fitted / truth - 1.0)))
    residual = (np.log(model(result.x, obs.times)) - np.log(obs.values)) / obs.noise
    rms = float(np.sqrt(np.mean(residual ** 2)))
    out = dict(sens_error=sens_error, fd_error=fd_error, t_grad=t_grad, t_scipy=t_scipy,
               t_fit=t_fit, evaluations=evaluations, success=bool(result.success),
               parameter_error=parameter_error, rms=rms, theta=result.x, recordings=recordings,
               observations=obs)
    if verbose:
        print(f"Lotka-Volterra, RK45 (rtol = atol = 1e-9), {obs.times.size} noisy observations "
              f"of both species")
        print(f"  value and gradient {1e3 * t_grad:.1f} ms; SciPy's forward solve alone "
              f"{1e3 * t_scipy:.1f} ms")
        print(f"  gradient vs forward sensitivities: relative error {sens_error:.1e}; "
              f"vs central differences: {fd_error:.1e}")
        print(f"  L-BFGS-B: {result.nit} iterations, {evaluations} evaluations, {t_fit:.2f} s, "
              f"the misfit recorded {recordings} times, success={result.success}")
        print("  parameter   true      fitted")
        for name, true, got in zip(NAMES, truth, fitted):
            print(f"  {name:8s} {true:8.4f}  {got:8.4f}")
        print(f"  largest relative parameter error {parameter_error:.1%}; RMS residual / noise "
              f"{rms:.2f}")
    return out


def check(out):
    assert out["sens_error"] < 1e-5, "gradient disagrees with the forward sensitivities"
    assert out["fd_error"] < 1e-6, "gradient disagrees with central differences"
    assert out["success"], "the optimizer did not converge"
    assert out["parameter_error"] < 0.15, "fit far from the truth"
    assert 0.5 < out["rms"] < 1.5, "residuals do not match the noise level"


def plot(obs, theta_fit, figure, theta0=GUESS):
    """Data, fitted model and initial guess against time, saved to ``figure``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t_fine = np.linspace(0.0, obs.times[-1], 400)[1:]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, (name, colour) in enumerate((("prey", "C0"), ("predators", "C3"))):
        ax.plot(obs.times, obs.values[i], "o", ms=3.5, color=colour, label=f"{name}, noisy data")
        ax.plot(t_fine, model(theta_fit, t_fine)[i], "-", color=colour, label=f"{name}, fit")
        ax.plot(t_fine, model(theta0, t_fine)[i], ":", color=colour, lw=1,
                label=f"{name}, initial guess")
    ax.set_ylim(0.0, 1.45 * obs.values.max())
    ax.set_xlabel("t")
    ax.set_ylabel("population")
    ax.set_title("Lotka-Volterra fit: L-BFGS-B with adsim gradients through solve_ivp (RK45)",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=3, loc="upper center")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(figure)), exist_ok=True)
    fig.savefig(figure, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller problem, for tests")
    parser.add_argument("--figure", help="save a plot of data, fit and initial guess here")
    args = parser.parse_args(argv)
    out = run(quick=args.quick)
    check(out)
    if args.figure:
        plot(out["observations"], out["theta"], args.figure)
        print(f"  saved {args.figure}")
    return out


if __name__ == "__main__":
    main()
