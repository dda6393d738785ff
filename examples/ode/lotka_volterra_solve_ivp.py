"""Lotka-Volterra parameter fit with SciPy's ``solve_ivp``, differentiated by adsim.

    x' = alpha x - beta x y,      y' = delta x y - gamma y.

This is the script one writes with ``scipy.integrate.solve_ivp``: a
right-hand side in plain NumPy, ``solve_ivp(..., t_eval=t_obs, args=...)``
for the model at the observation times, a least-squares misfit, and
``scipy.optimize.minimize``. The only change is the import of ``solve_ivp``
from ``adsim.integrate``: the misfit is then differentiable, and
``adsim.value_and_grad`` gives L-BFGS-B exact gradients with respect to
the four rates and the two initial populations (log-parametrised).

The gradient is the discrete adjoint of the adaptive RK45 integration
(rtol = atol = 1e-9), step-size control included. The script checks it
against central differences of the same misfit and against the continuous
forward sensitivities S = dz/d(theta) (SciPy's DOP853 at rtol 1e-12 on the
ODE augmented by S' = f_z S + f_theta, whose Jacobians come from
``adsim.jacobian``), then fits noisy synthetic data and checks the fitted
parameters and residuals.

Run: ``python examples/ode/lotka_volterra_solve_ivp.py [--quick]``
"""
import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp
from scipy.optimize import minimize

import adsim
from adsim.integrate import solve_ivp      # instead of: from scipy.integrate import solve_ivp

TRUE_RATES = np.array([1.0, 0.1, 1.5, 0.075])      # alpha, beta, gamma, delta
TRUE_START = np.array([10.0, 5.0])                 # prey, predators at t = 0
NAMES = ("alpha", "beta", "gamma", "delta", "x0", "y0")
TOL = dict(rtol=1e-9, atol=1e-9)


def lotka_volterra(t, z, rates):
    x, y = z[0], z[1]
    alpha, beta, gamma, delta = rates[0], rates[1], rates[2], rates[3]
    return [alpha * x - beta * x * y, delta * x * y - gamma * y]


def model(theta, t_obs):
    """Populations at the observation times, shape (2, n_obs), for
    ``theta = log(alpha, beta, gamma, delta, x0, y0)``."""
    rates, start = np.exp(theta[:4]), np.exp(theta[4:])
    sol = solve_ivp(lotka_volterra, (0.0, t_obs[-1]), start, t_eval=t_obs, args=(rates,), **TOL)
    return sol.y


def make_misfit(t_obs, data, noise):
    """Half the sum of squared log-residuals over the noise variance."""
    def misfit(theta):
        r = (np.log(model(theta, t_obs)) - np.log(data)) / noise
        return 0.5 * np.sum(r * r)
    return misfit


def synthetic_data(t_obs, noise, seed):
    """The true model at the observation times with log-normal noise."""
    clean = model(np.log(np.concatenate([TRUE_RATES, TRUE_START])), t_obs)
    return clean * np.exp(noise * np.random.default_rng(seed).standard_normal(clean.shape))


# ---- references for the gradient ------------------------------------------------

def sensitivity_gradient(theta, t_obs, data, noise):
    """d misfit / d theta from the continuous forward sensitivities (SciPy)."""
    jac = adsim.jacobian(lambda z, rates: np.array(lotka_volterra(0.0, z, rates)),
                         argnums=(0, 1))
    rates, start = np.exp(theta[:4]), np.exp(theta[4:])

    def augmented(t, w):
        z, S = w[:2], w[2:].reshape(2, 6)
        f_z, f_rates = jac(z, rates)
        dS = f_z @ S
        dS[:, :4] += f_rates * rates              # d/dlog(rate) = rate d/drate
        return np.concatenate([lotka_volterra(t, z, rates), dS.ravel()])
    S0 = np.zeros((2, 6))
    S0[0, 4], S0[1, 5] = start                    # d z0 / d log z0
    sol = scipy_solve_ivp(augmented, (0.0, t_obs[-1]), np.concatenate([start, S0.ravel()]),
                          t_eval=t_obs, method="DOP853", rtol=1e-12, atol=1e-12)
    z, S = sol.y[:2], sol.y[2:].reshape(2, 6, -1)
    r = (np.log(z) - np.log(data)) / noise
    return np.einsum("ik,ijk->j", r / (noise * z), S)


def difference_gradient(misfit, theta, eps=1e-6):
    g = np.zeros(theta.size)
    for i in range(theta.size):
        e = np.zeros(theta.size)
        e[i] = eps
        g[i] = (misfit(theta + e) - misfit(theta - e)) / (2 * eps)
    return g


def run(quick=False, verbose=True, seed=0):
    n_obs, t_end, noise = (15, 8.0, 0.05) if quick else (30, 15.0, 0.05)
    t_obs = np.linspace(t_end / n_obs, t_end, n_obs)
    data = synthetic_data(t_obs, noise, seed)
    misfit = make_misfit(t_obs, data, noise)
    truth = np.concatenate([TRUE_RATES, TRUE_START])
    theta0 = np.log(truth * [1.3, 0.8, 0.75, 1.25, 0.8, 1.2])
    value_and_grad = adsim.value_and_grad(misfit)
    value_and_grad(theta0)                                   # records the tape
    t0 = time.perf_counter()
    _, g0 = value_and_grad(theta0)
    t_grad = time.perf_counter() - t0
    rates0, start0 = np.exp(theta0[:4]), np.exp(theta0[4:])
    t0 = time.perf_counter()
    scipy_solve_ivp(lotka_volterra, (0.0, t_end), start0, t_eval=t_obs, args=(rates0,), **TOL)
    t_scipy = time.perf_counter() - t0
    g_sens = sensitivity_gradient(theta0, t_obs, data, noise)
    g_fd = difference_gradient(misfit, theta0)
    scale = np.max(np.abs(g_sens))
    sens_error = np.max(np.abs(g0 - g_sens)) / scale
    fd_error = np.max(np.abs(g0 - g_fd)) / scale

    evaluations = []

    def objective(theta):
        value, g = value_and_grad(theta)
        evaluations.append(value)
        return value, g
    t0 = time.perf_counter()
    result = minimize(objective, theta0, jac=True, method="L-BFGS-B", options=dict(maxiter=300))
    t_fit = time.perf_counter() - t0
    fitted = np.exp(result.x)
    parameter_error = np.max(np.abs(fitted / truth - 1.0))
    residual = (np.log(model(result.x, t_obs)) - np.log(data)) / noise
    rms = float(np.sqrt(np.mean(residual ** 2)))
    out = dict(sens_error=sens_error, fd_error=fd_error, t_grad=t_grad, t_scipy=t_scipy,
               t_fit=t_fit, evaluations=len(evaluations), success=result.success,
               parameter_error=parameter_error, rms=rms, fitted=fitted,
               recordings=value_and_grad.tapes.recordings)
    if verbose:
        print(f"Lotka-Volterra, RK45 (rtol = atol = 1e-9), {n_obs} noisy observations")
        print(f"  value and gradient {1e3 * t_grad:.1f} ms; SciPy's forward solve alone "
              f"{1e3 * t_scipy:.1f} ms")
        print(f"  gradient vs forward sensitivities: {sens_error:.1e}; vs central differences: "
              f"{fd_error:.1e} (relative to the largest component)")
        print(f"  L-BFGS-B: {result.nit} iterations, {len(evaluations)} evaluations, "
              f"{t_fit:.2f} s, {out['recordings']} recordings, success={result.success}")
        print("  parameter   true      fitted")
        for name, true, got in zip(NAMES, truth, fitted):
            print(f"  {name:8s} {true:8.4f}  {got:8.4f}")
        print(f"  largest relative parameter error {parameter_error:.1%}; RMS residual / noise "
              f"{rms:.2f}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller problem, for tests")
    args = parser.parse_args(argv)
    out = run(quick=args.quick)
    assert out["sens_error"] < 1e-5, "gradient disagrees with the forward sensitivities"
    assert out["fd_error"] < 1e-5, "gradient disagrees with central differences"
    assert out["success"], "the optimizer did not converge"
    assert out["parameter_error"] < 0.15, "fit far from the truth"
    assert 0.5 < out["rms"] < 1.5, "residuals do not match the noise level"
    return out


if __name__ == "__main__":
    main()
