"""Parameter estimation for the Lotka-Volterra equations by adjoint gradients.

Predator-prey model

    x' = alpha x - beta x y,      y' = delta x y - gamma y,

integrated with the classical fixed-step Runge-Kutta method (RK4). Noisy
observations of (x, y) at equally spaced times are fitted by least squares
over the four rates and the initial populations (log-parametrised, so they
stay positive) with ``scipy.optimize.minimize`` (L-BFGS-B). The gradient of
the misfit comes from ``adsim.grad`` through one ``adsim.checkpoint_loop``
per observation interval: each interval is one op holding the tape of one
RK4 step, reversed with a few snapshots, so memory does not grow with the
number of RK4 steps.

The script checks itself: the gradient against central differences, the fit
against the parameters that generated the data, and the residual against the
noise level. It saves a plot of data and fit.

Run: ``python examples/ode/lotka_volterra_fit.py [--quick] [--figure PATH]``
"""
import argparse
import os
import time

import numpy as np
from scipy.optimize import minimize

import adsim as ad

TRUE_RATES = np.array([1.0, 0.1, 1.5, 0.075])      # alpha, beta, gamma, delta
TRUE_START = np.array([10.0, 5.0])                 # prey, predators at t = 0
NAMES = ("alpha", "beta", "gamma", "delta", "x0", "y0")
FIGURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                      "docs", "figures", "lotka_volterra_fit.png")


def rhs(u, rates):
    """Right-hand side of the Lotka-Volterra system for u = (x, y)."""
    alpha, beta, gamma, delta = rates[0], rates[1], rates[2], rates[3]
    x, y = u[0], u[1]
    return np.stack([alpha * x - beta * x * y, delta * x * y - gamma * y])


def rk4_step(u, rates, h):
    k1 = rhs(u, rates)
    k2 = rhs(u + 0.5 * h * k1, rates)
    k3 = rhs(u + 0.5 * h * k2, rates)
    k4 = rhs(u + h * k3, rates)
    return u + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


class Problem:
    """Observation times, data and the misfit of a parameter vector.

    ``theta = log(alpha, beta, gamma, delta, x0, y0)``.
    """

    def __init__(self, n_obs=40, t_end=20.0, steps_per_obs=25, noise=0.05, snapshots=4, seed=0):
        self.n_obs = n_obs
        self.steps_per_obs = steps_per_obs
        self.h = t_end / (n_obs * steps_per_obs)
        self.times = np.linspace(0.0, t_end, n_obs + 1)[1:]
        self.noise = noise
        self.snapshots = snapshots
        self.theta_true = np.log(np.concatenate([TRUE_RATES, TRUE_START]))
        rng = np.random.default_rng(seed)
        clean = self.trajectory(self.theta_true)
        # multiplicative (log-normal) noise: populations stay positive
        self.data = clean * np.exp(noise * rng.standard_normal(clean.shape))
        self.stats = [{} for _ in range(n_obs)]      # the work of each interval's loop

    def trajectory(self, theta, fine=1):
        """States at the observation times (``fine`` > 1: also in between)."""
        rates, u = np.exp(theta[:4]), np.exp(theta[4:])
        out = []
        for _ in range(self.n_obs * fine):
            for _ in range(self.steps_per_obs // fine):
                u = rk4_step(u, rates, self.h)
            out.append(u)
        return np.array(out)

    def misfit(self, theta):
        """Half the sum of squared log-residuals over the noise variance."""
        rates, u = np.exp(theta[:4]), np.exp(theta[4:])
        total = 0.0
        for k in range(self.n_obs):
            u = ad.checkpoint_loop(rk4_step, u, self.steps_per_obs, args=(rates, self.h),
                                   snapshots=self.snapshots, stats=self.stats[k])
            r = (np.log(u) - np.log(self.data[k])) / self.noise
            total = total + 0.5 * np.sum(r * r)
        return total


def central_difference_check(problem, theta, gradient, seed=1, eps=1e-5):
    """Largest relative error of the gradient along random directions."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(3):
        v = rng.standard_normal(theta.size)
        fd = (problem.misfit(theta + eps * v) - problem.misfit(theta - eps * v)) / (2 * eps)
        worst = max(worst, abs(gradient @ v - fd) / abs(fd))
    return worst


def fit(problem, theta0, maxiter=200):
    value_and_grad = ad.value_and_grad(problem.misfit)
    evaluations = []

    def fun(theta):
        value, g = value_and_grad(theta)
        evaluations.append(value)
        return value, g
    result = minimize(fun, theta0, jac=True, method="L-BFGS-B", options=dict(maxiter=maxiter))
    return result, len(evaluations)


def plot(problem, theta_fit, theta0, figure):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fine = 5
    t_fine = np.linspace(0.0, problem.times[-1], problem.n_obs * fine + 1)

    def curve(theta):
        return np.concatenate([np.exp(theta[4:])[None], problem.trajectory(theta, fine)])
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, (name, colour) in enumerate((("prey", "C0"), ("predators", "C3"))):
        ax.plot(problem.times, problem.data[:, i], "o", ms=3.5, color=colour,
                label=f"{name}, noisy data")
        ax.plot(t_fine, curve(theta_fit)[:, i], "-", color=colour, label=f"{name}, fit")
        ax.plot(t_fine, curve(theta0)[:, i], ":", color=colour, lw=1,
                label=f"{name}, initial guess")
    ax.set_ylim(0.0, 1.45 * problem.data.max())
    ax.set_xlabel("t")
    ax.set_ylabel("population")
    ax.set_title("Lotka-Volterra fit: L-BFGS-B with adjoint gradients (RK4, checkpointed)")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=7, ncol=3, loc="upper center")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(figure)), exist_ok=True)
    fig.savefig(figure, dpi=120)
    plt.close(fig)


def run(quick=False, figure=FIGURE, verbose=True, seed=0):
    """Fit the model to synthetic data; returns a dict of measured numbers."""
    if quick:
        problem = Problem(n_obs=20, t_end=10.0, steps_per_obs=10, noise=0.05, seed=seed)
    else:
        problem = Problem(seed=seed)
    n_steps = problem.n_obs * problem.steps_per_obs
    theta0 = problem.theta_true + np.log([1.3, 0.8, 0.75, 1.25, 0.8, 1.2])

    grad = ad.grad(problem.misfit)
    grad(theta0)                                       # records the tape
    t0 = time.perf_counter()
    g0 = grad(theta0)
    t_grad = time.perf_counter() - t0
    t0 = time.perf_counter()
    problem.misfit(theta0)
    t_plain = time.perf_counter() - t0
    fd_error = central_difference_check(problem, theta0, g0)

    t0 = time.perf_counter()
    result, evaluations = fit(problem, theta0)
    t_fit = time.perf_counter() - t0
    rates = np.exp(result.x[:4])
    start = np.exp(result.x[4:])
    rate_error = np.max(np.abs(rates / TRUE_RATES - 1.0))
    start_error = np.max(np.abs(start / TRUE_START - 1.0))
    residual = (np.log(problem.trajectory(result.x)) - np.log(problem.data)) / problem.noise
    rms = np.sqrt(np.mean(residual ** 2))
    out = dict(n_steps=n_steps, n_obs=problem.n_obs, fd_error=fd_error, t_grad=t_grad,
               t_plain=t_plain, t_fit=t_fit, evaluations=evaluations, success=result.success,
               gradient_norm=float(np.linalg.norm(result.jac)), rates=rates, start=start,
               rate_error=rate_error, start_error=start_error, rms=rms,
               forward_steps=problem.stats[0]["forward_steps"],
               snapshots=problem.stats[0]["snapshots"],
               plain_steps=sum(s["forward_steps"] + s["output_steps"] for s in problem.stats))
    if verbose:
        print(f"Lotka-Volterra, RK4 with {n_steps} steps, {problem.n_obs} noisy observations "
              f"({100 * problem.noise:.0f} % noise)")
        print(f"  gradient of the misfit: {1e3 * t_grad:.1f} ms (plain NumPy misfit "
              f"{1e3 * t_plain:.1f} ms); relative error vs central differences {fd_error:.1e}")
        print(f"  each of the {problem.n_obs} intervals: {problem.steps_per_obs} RK4 steps "
              f"reversed with {out['snapshots']} snapshots; {out['plain_steps']} plain steps "
              f"in all for {n_steps} taped ones (recomputation factor "
              f"{out['plain_steps'] / n_steps:.2f})")
        print(f"  L-BFGS-B: {result.nit} iterations, {evaluations} gradient evaluations, "
              f"{t_fit:.2f} s, |grad| = {out['gradient_norm']:.1e}, success={result.success}")
        print("  parameter   true      fitted")
        for name, true, got in zip(NAMES, np.concatenate([TRUE_RATES, TRUE_START]),
                                   np.concatenate([rates, start])):
            print(f"  {name:8s} {true:8.4f}  {got:8.4f}")
        print(f"  largest relative parameter error {max(rate_error, start_error):.1%}; "
              f"RMS residual / noise {rms:.2f}")
    if figure:
        plot(problem, result.x, theta0, figure)
        if verbose:
            print(f"  saved {os.path.normpath(figure)}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller problem, for tests")
    parser.add_argument("--figure", default=None,
                        help="where to save the plot (default docs/figures/lotka_volterra_fit.png;"
                             " 'none' for no plot)")
    args = parser.parse_args(argv)
    figure = args.figure
    if figure is None:
        figure = None if args.quick else FIGURE
    elif figure.lower() == "none":
        figure = None
    out = run(quick=args.quick, figure=figure)
    assert out["fd_error"] < 1e-6, "adjoint gradient disagrees with central differences"
    assert out["success"], "the optimizer did not converge"
    assert out["rate_error"] < 0.1 and out["start_error"] < 0.1, "fit far from the truth"
    assert 0.6 < out["rms"] < 1.4, "residuals do not match the noise level"
    return out


if __name__ == "__main__":
    main()
