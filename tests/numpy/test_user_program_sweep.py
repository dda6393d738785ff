"""Short scientific programs written as their authors write them (issue 25's
sweep): each gradient against central differences, every sweep of its tape
(fdcheck.check_tape: tangents, adjoints, Jacobians, Hessian-vector
products), and the tape replayed at a new point against differences there.

Programs: an epidemic fitted through a Runge-Kutta integrator of a library
that imports NumPy's names; a reaction-diffusion time loop updating a plain
initial state in place; a log-posterior summing a list comprehension; an
np.vectorize'd rate law with a branch; a Kalman filter's likelihood with
np.linalg.inv and in-place covariance updates; a thin-film reflectance
from complex transfer matrices written as nested lists; a Gaussian
mixture's likelihood with logsumexp; a frequency response from complex
solves; a population's growth rate, the dominant eigenvalue of a Leslie
matrix; a forcing interpolated, integrated and differentiated on an uneven
grid."""
import numpy as np
import scipy.special
import scipy.stats

import adsim
import models_by_name as lib
from fdcheck import assert_close, central, check_tape


def check_program(f, p, p2, **tolerances):
    """grad against central differences, every sweep of the tape at ``p``,
    and the tape's gradient at ``p2`` against central differences there."""
    e = np.eye(p.size)
    fd = np.array([central(f, [p], [e[i]]) for i in range(p.size)])
    assert_close(adsim.grad(f)(p), fd, **tolerances)
    tape = check_tape(f, [p], **tolerances)
    fd2 = np.array([central(f, [p2], [e[i]]) for i in range(p.size)])
    assert_close(tape.gradient(p2), fd2, **tolerances)


# ---- an epidemic through a library's integrator ---------------------------------

T_OBS = np.linspace(0.0, 20.0, 21)
PREVALENCE = np.array([0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.16, 0.2, 0.22, 0.22, 0.2,
                       0.17, 0.14, 0.11, 0.09, 0.07, 0.05, 0.04, 0.03, 0.02, 0.02])


def epidemic_misfit(p):
    y = lib.rk4(lib.sir, [0.99, 0.01, 0.0], T_OBS, p[0], p[1])
    return np.sum((y[:, 1] - PREVALENCE) ** 2)


def test_an_epidemic_fitted_through_a_library_integrator():
    check_program(epidemic_misfit, np.array([0.6, 0.25]), np.array([0.62, 0.24]))


# ---- a time loop from a plain state ---------------------------------------------

def reaction_diffusion(p):
    n = 20
    u = np.sin(np.linspace(0.0, np.pi, n))          # plain: depends on no parameter
    dx = 1.0 / (n - 1)
    dt = 0.2 * dx ** 2
    for _ in range(30):
        lap = np.zeros(n)
        lap[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2
        u += dt * p[0] * lap - dt * p[1] * u ** 3
    return np.sum(u ** 2) * dx


def test_a_reaction_diffusion_loop_updating_a_plain_state_in_place():
    check_program(reaction_diffusion, np.array([1.0, 0.5]), np.array([1.1, 0.45]))


# ---- a log-posterior summing a list ---------------------------------------------

OBS = np.array([1.2, 0.7, 2.3, 1.9, 0.4, 1.1])


def normal_logpdf(y, mu, sigma):
    return -0.5 * np.log(2 * np.pi * sigma ** 2) - (y - mu) ** 2 / (2 * sigma ** 2)


def log_posterior(theta):
    mu, log_sigma = theta
    sigma = np.exp(log_sigma)
    lp = np.sum([normal_logpdf(y, mu, sigma) for y in OBS])
    lp += sum(scipy.stats.norm.logpdf(v, 0.0, 10.0) for v in theta)
    return lp


def test_a_log_posterior_summing_a_list_comprehension():
    check_program(log_posterior, np.array([1.0, 0.1]), np.array([1.1, -0.1]))


# ---- a vectorized rate law ---------------------------------------------------------

GAS_CONSTANT = 8.314
TEMPERATURES = np.array([240.0, 280.0, 300.0, 320.0, 350.0])
RATES = np.array([0.0, 0.011, 0.03, 0.07, 0.2])


@np.vectorize
def arrhenius(T, A, Ea):
    if T < 250.0:                  # frozen below 250 K
        return 0.0
    return A * np.exp(-Ea / (GAS_CONSTANT * T))


def rate_misfit(p):
    return np.sum((arrhenius(TEMPERATURES, np.exp(p[0]), p[1] * 1e4) - RATES) ** 2)


def test_a_vectorized_rate_law_with_a_branch():
    check_program(rate_misfit, np.array([5.0, 2.5]), np.array([5.1, 2.45]))


# ---- a Kalman filter ---------------------------------------------------------------

POSITIONS = np.array([0.1, 0.35, 0.42, 0.8, 1.1, 1.05, 1.4, 1.7])


def kalman_negative_log_likelihood(log_noise):
    q, r = np.exp(log_noise)
    F = np.array([[1.0, 1.0], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = q * np.array([[0.25, 0.5], [0.5, 1.0]])
    x = np.zeros(2)
    P = np.eye(2) * 10.0
    nll = 0.0
    for z in POSITIONS:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + r
        K = P @ H.T @ np.linalg.inv(S)
        innovation = z - H @ x
        x += K @ innovation
        P -= K @ H @ P
        nll += 0.5 * (np.log(np.linalg.det(S)) + innovation @ np.linalg.inv(S) @ innovation)
    return nll


def test_a_kalman_filter_likelihood_with_in_place_covariance_updates():
    check_program(kalman_negative_log_likelihood, np.array([-2.0, -3.0]),
                  np.array([-1.9, -2.8]))


# ---- thin-film optics with complex transfer matrices -------------------------------

def antireflection(p):
    """A two-layer coating (high index p[0], thickness p[1] nm, then MgF2
    quarter-wave) at 500, 550 and 600 nm."""
    return sum(lib.reflectance([p[0], 1.38], [p[1], 99.6], w) for w in (500.0, 550.0, 600.0))


def test_a_thin_film_reflectance_from_nested_lists_of_complex_values():
    check_program(antireflection, np.array([2.1, 65.0]), np.array([2.05, 66.0]))


# ---- a Gaussian mixture ---------------------------------------------------------------

SAMPLES = np.array([-1.2, -0.8, -1.0, 2.1, 1.9, 2.4, 0.3])


def mixture_negative_log_likelihood(theta):
    weights = scipy.special.softmax(np.array([0.0, theta[0]]))
    means, scales = theta[1:3], np.exp(theta[3:5])
    joint = np.log(weights) + scipy.stats.norm.logpdf(SAMPLES[:, None], means, scales)
    return -np.sum(scipy.special.logsumexp(joint, axis=1))


def test_a_gaussian_mixture_with_logsumexp():
    check_program(mixture_negative_log_likelihood, np.array([0.2, -1.0, 2.0, -0.5, -0.3]),
                  np.array([0.1, -0.9, 2.1, -0.4, -0.35]))


# ---- a frequency response from complex solves ---------------------------------------

def response_energy(p):
    """Receptance of a damped two-mass chain summed over a frequency band."""
    k1, k2, c = p
    M = np.diag([1.0, 0.5])
    K = np.array([[k1 + k2, -k2], [-k2, k2]])
    C = c * K                                     # proportional damping
    f = np.array([1.0, 0.0])
    amplitudes = []
    for w in np.linspace(0.5, 3.0, 6):
        H = np.linalg.solve(K - w ** 2 * M + 1j * w * C, f)
        amplitudes.append(np.abs(H[1]) ** 2)
    return np.sum(amplitudes)


def test_a_frequency_response_from_complex_solves():
    check_program(response_energy, np.array([2.0, 1.0, 0.2]), np.array([2.1, 0.95, 0.25]))


def test_complex_solves_and_inverses_are_numpys_values():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3, 3))

    def f(x):
        m = x + 1j * b
        return np.stack([np.linalg.solve(m, x[0] - 2j).real, np.linalg.inv(m)[1].imag])
    assert_close(adsim.record(f, a).forward(a), f(a), 1e-13, 1e-15)


# ---- a population's growth rate ---------------------------------------------------

def growth_rate(vital_rates):
    """Dominant eigenvalue of a Leslie matrix: fecundities, then survivals."""
    L = np.zeros((3, 3))
    L[0, :] = vital_rates[:3]
    L[1, 0], L[2, 1] = vital_rates[3:]
    return np.max(np.abs(np.linalg.eigvals(L)))


def test_a_population_growth_rate_and_its_sensitivities():
    rates = np.array([0.0, 1.5, 1.2, 0.6, 0.8])
    check_program(growth_rate, rates, np.array([0.1, 1.4, 1.3, 0.55, 0.85]))
    # Caswell's sensitivities: d lambda / d a_ij = v_i w_j / <v, w>
    L = np.zeros((3, 3))
    L[0, :] = rates[:3]
    L[1, 0], L[2, 1] = rates[3:]
    lam, W = np.linalg.eig(L)
    k = int(np.argmax(np.abs(lam)))
    mu, V = np.linalg.eig(L.T)
    v, w = np.real(V[:, int(np.argmax(np.abs(mu)))]), np.real(W[:, k])
    S = np.outer(v, w) / (v @ w)
    assert_close(adsim.grad(growth_rate)(rates), [S[0, 0], S[0, 1], S[0, 2], S[1, 0], S[2, 1]],
                 1e-12, 1e-14)


# ---- a forcing on an uneven grid -------------------------------------------------------

T_UNEVEN = np.concatenate([np.linspace(0.0, 1.0, 11), np.linspace(1.25, 5.0, 16)])


def forcing_roughness(p):
    forcing = np.interp(T_UNEVEN, [0.0, 2.0, 5.0], [0.0, p[0], p[1]])
    impulse = np.concatenate([[0.0], np.cumsum(0.5 * (forcing[1:] + forcing[:-1])
                                               * np.diff(T_UNEVEN))])
    rate = np.gradient(impulse, T_UNEVEN, edge_order=2)
    return np.trapezoid(rate ** 2, T_UNEVEN) + np.sum(impulse * np.sin(p[0] * T_UNEVEN))


def test_a_forcing_integrated_and_differentiated_on_an_uneven_grid():
    check_program(forcing_roughness, np.array([1.0, 0.3]), np.array([1.1, 0.25]))


def mixture_by_logaddexp(theta):
    """The same mixture written with np.logaddexp.reduce and a polynomial
    trend in the means (np.polyder for its slope penalty)."""
    log_w = np.log(scipy.special.softmax(np.array([0.0, theta[0]])))
    trend = np.poly1d(theta[1:3])
    means = np.array([trend(0.0), trend(1.0)])
    log_dens = -0.5 * ((SAMPLES[:, None] - means) / 0.8) ** 2 - np.log(0.8 * np.sqrt(2 * np.pi))
    penalty = np.sum(np.polyder(theta[1:3]) ** 2)
    return -np.sum(np.logaddexp.reduce(log_w + log_dens, axis=1)) + 0.1 * penalty


def test_a_mixture_written_with_logaddexp_reduce():
    theta = np.array([0.2, 3.0, -1.0])
    check_program(mixture_by_logaddexp, theta, np.array([0.1, 2.8, -0.9]))
    joint = np.log(scipy.special.softmax([0.0, 0.2]))[None, :] + SAMPLES[:, None]
    assert_close(adsim.record(lambda t: np.logaddexp.reduce(joint * t[0], axis=1),
                              np.ones(1)).forward(np.ones(1)),
                 np.logaddexp.reduce(joint, axis=1), 1e-14, 0)


# ---- a piecewise-linear profile with fitted breakpoints -----------------------------

DEPTHS = np.array([0.2, 0.5, 0.9, 1.4, 1.8, 2.5, 3.1])
TEMPERATURE = np.array([14.8, 14.5, 12.1, 9.0, 7.2, 6.1, 5.8])


def thermocline_misfit(p):
    """A three-segment temperature profile whose breakpoints (depths) are
    fitted with the temperatures at them."""
    knots = np.cumsum(np.exp(p[:3]))
    profile = np.interp(DEPTHS, knots, p[3:6], left=p[3], right=p[5])
    return np.sum((profile - TEMPERATURE) ** 2)


def test_a_profile_with_fitted_breakpoints():
    p = np.array([np.log(0.6), np.log(0.7), np.log(1.3), 14.9, 9.5, 6.0])   # knots off the data
    check_program(thermocline_misfit, p, p + np.array([0.05, -0.03, 0.02, 0.1, -0.2, 0.1]))
