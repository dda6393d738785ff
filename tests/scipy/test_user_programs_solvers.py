"""Short scientific programs that solve, fit, integrate or interpolate with
SciPy inside the differentiated model, written as their authors write
them: gradients against central differences (both modes), and the
recorded tape replayed at new parameters."""
import numpy as np
from scipy.integrate import quad
from scipy.interpolate import CubicSpline, interp1d
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import fsolve, least_squares

import adsim
from adsim.testing import check_grads
from fdcheck import assert_close


def _replays(f, x, x2, rtol=1e-10):
    tape = adsim.record(f, x)
    assert_close(tape.forward(x2), f(x2), rtol, 1e-14, "replayed value")
    assert_close(tape.gradient(x2), adsim.grad(f)(x2), rtol, 1e-14, "replayed gradient")


# ---- a Gaussian process ------------------------------------------------------------------

X_TRAIN = np.linspace(0.0, 5.0, 15)
Y_TRAIN = np.sin(X_TRAIN) + 0.1 * np.cos(7.0 * X_TRAIN)


def gp_negative_log_marginal_likelihood(log_params):
    """Squared-exponential kernel, noise added on the diagonal through
    np.diag_indices_from, Cholesky with scipy.linalg.cho_factor/cho_solve."""
    length, signal, noise = np.exp(log_params)
    d = X_TRAIN[:, None] - X_TRAIN[None, :]
    K = signal ** 2 * np.exp(-0.5 * d ** 2 / length ** 2)
    K[np.diag_indices_from(K)] += noise ** 2
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), Y_TRAIN)
    log_det = 2.0 * np.sum(np.log(np.diag(c)))
    return 0.5 * Y_TRAIN @ alpha + 0.5 * log_det + 0.5 * len(X_TRAIN) * np.log(2 * np.pi)


def test_gaussian_process_hyperparameters():
    p = np.log(np.array([1.2, 0.9, 0.15]))
    check_grads(gp_negative_log_marginal_likelihood, p, order=2, rtol=1e-6)
    _replays(gp_negative_log_marginal_likelihood, p, p + np.array([0.1, -0.2, 0.05]))


# ---- a fit inside an outer loss -------------------------------------------------------------

T_DECAY = np.linspace(0.0, 4.0, 25)


def fitted_rate_error(true_params):
    """Synthetic decay data from true (amplitude, rate), fitted by
    least_squares from a fixed guess; the outer loss compares the fitted
    rate with the truth (a design study of how noise biases the fit)."""
    amplitude, rate = true_params
    noise = 0.02 * np.sin(11.0 * T_DECAY)
    data = amplitude * np.exp(-rate * T_DECAY) + noise

    def residuals(theta):
        return theta[0] * np.exp(-theta[1] * T_DECAY) - data
    fit = least_squares(residuals, x0=[1.0, 1.0], xtol=1e-14, ftol=1e-14, gtol=1e-14)
    return (fit.x[1] - rate) ** 2 + 0.1 * fit.cost


def test_least_squares_fit_inside_an_outer_loss():
    p = np.array([2.0, 0.7])
    check_grads(fitted_rate_error, p, rtol=1e-5)
    _replays(fitted_rate_error, p, np.array([1.8, 0.75]), rtol=1e-7)


# ---- a model driven by an interpolated forcing ------------------------------------------------

def cooled_body(forcing_knots, k=0.8, dt=0.01):
    """Newton cooling toward an ambient temperature known at a few times
    (the knots are the parameters), interpolated by a cubic spline and
    stepped with Heun's method; returns the final temperature."""
    knot_times = np.linspace(0.0, 2.0, forcing_knots.size)
    ambient = CubicSpline(knot_times, forcing_knots)
    T = 80.0
    for t in np.arange(0.0, 2.0, dt):
        slope = -k * (T - ambient(t))
        guess = T + dt * slope
        T = T + 0.5 * dt * (slope - k * (guess - ambient(t + dt)))
    return T


def test_spline_interpolated_forcing_in_a_time_stepped_model():
    knots = np.array([20.0, 22.0, 25.0, 21.0, 18.0])
    check_grads(cooled_body, knots, rtol=1e-6)
    _replays(cooled_body, knots, knots + np.array([1.0, -0.5, 0.3, 0.0, 2.0]))


def mean_dose(params):
    """A rate tabulated at a few times (linear interp1d of active values),
    times a decaying sensitivity, integrated with quad."""
    rate_values, decay = params[:-1], params[-1]
    times = np.linspace(0.0, 3.0, rate_values.size)
    rate = interp1d(times, rate_values)
    total, _ = quad(lambda t: rate(t) * np.exp(-decay * t), 0.0, 3.0, epsabs=1e-13,
                    epsrel=1e-13, points=times[1:-1])
    return total / 3.0


def test_quad_of_an_interpolated_rate():
    p = np.array([1.0, 1.6, 0.9, 0.4, 0.35])
    check_grads(mean_dose, p, rtol=1e-6)
    _replays(mean_dose, p, p * 1.1)


# ---- an equilibrium inside a likelihood ------------------------------------------------------

DOSES = np.array([0.1, 0.3, 1.0, 3.0, 10.0])
RESPONSES = np.array([0.07, 0.2, 0.46, 0.72, 0.88])


def binding_log_likelihood(log_params):
    """Receptor occupancy at each dose from the mass balance of free and
    bound ligand (a nonlinear equilibrium solved with fsolve), compared with
    measured responses under Gaussian noise."""
    kd, receptor, sigma = np.exp(log_params)

    def balance(bound, dose):
        free = dose - bound
        return bound - receptor * free / (kd + free)
    loglik = 0.0
    for dose, y in zip(DOSES, RESPONSES):
        bound = fsolve(balance, 0.5 * dose * receptor / (1.0 + receptor), args=(dose,),
                       xtol=1e-11)[0]
        occupancy = bound / receptor
        loglik = loglik - 0.5 * ((y - occupancy) / sigma) ** 2 - np.log(sigma)
    return -loglik


def test_fsolve_equilibrium_inside_a_likelihood():
    p = np.log(np.array([0.8, 0.5, 0.05]))
    check_grads(binding_log_likelihood, p, rtol=1e-5)
    _replays(binding_log_likelihood, p, p + 0.05, rtol=1e-8)
