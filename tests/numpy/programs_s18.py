"""Small scientific programs written as their authors write them (round
eighteen): ODE models fitted through solve_ivp and odeint (parameters in
dicts, on objects, in bound methods, properties, partials and module
globals; stiff kinetics by Radau, BDF and LSODA at SciPy's default
tolerances; terminal, repeated and restarted events; dense output; a
complex Schrödinger state), equations of state as Helmholtz energies whose
pressures and chemical potentials come from adsim itself, mixture-model
likelihoods closed over data objects, Kalman and unscented filters written
with names imported from numpy, thin-film optics with complex
arithmetic, NumPy PDE codes updating plain states in place through views,
SciPy's sparse, root-finding, minimising, quadrature and interpolation
machinery inside the models, and lists of active values handed to NumPy
(``np.sum([...])``, ``np.r_``, ``np.vstack``, ``np.vectorize``,
``np.piecewise``, ``np.apply_along_axis``).

None of them knows about adsim; tests/numpy/test_user_programs_s18.py
differentiates them as they are."""
import functools

import numpy as np
from numpy import array, dot, exp, log, outer, zeros
from numpy.linalg import cholesky, inv
import scipy.sparse as sp
from scipy import special, stats
from scipy.integrate import cumulative_trapezoid, odeint, quad, simpson, solve_ivp
from scipy.interpolate import CubicSpline, interp1d, make_interp_spline
from scipy.optimize import brentq, fsolve, minimize, newton, root
from scipy.sparse.linalg import spsolve
from scipy.special import expit, gammaln, logsumexp


# =============================== ODE models ==================================

# ---- 1. Michaelis–Menten uptake: parameters in a dict, t_eval, squared misfit ----------

T_OBS = np.array([0.5, 1.0, 2.0, 4.0, 6.0])
S_OBS = np.array([8.6, 7.3, 5.1, 1.9, 0.5])


def mm_misfit(params):
    p = {"Vmax": params[0], "Km": params[1], "S0": 10.0}

    def rhs(t, y):
        S, P = y
        v = p["Vmax"] * S / (p["Km"] + S)
        return [-v, v]

    sol = solve_ivp(rhs, (0.0, T_OBS[-1]), [p["S0"], 0.0], t_eval=T_OBS, rtol=1e-10,
                    atol=1e-12)
    return np.sum((sol.y[0] - S_OBS) ** 2)


# ---- 2. a reactor object: self.k1, self.k2, a bound method, Radau at default tolerances

class StiffReactor:
    """A -> B (k1), B -> C fast (k2), B + B -> C (k3): B in quasi-steady state."""

    def __init__(self, k1, k2, k3=30.0):
        self.k1 = k1
        self.k2 = k2
        self.k3 = k3

    def rhs(self, t, c):
        a, b, _ = c
        r1 = self.k1 * a
        r2 = self.k2 * b
        r3 = self.k3 * b * b
        return np.array([-r1, r1 - r2 - 2 * r3, r2 + r3])

    def run(self, t_end=5.0, method="Radau"):
        return solve_ivp(self.rhs, (0.0, t_end), [1.0, 0.0, 0.0], method=method)


def reactor_c_yield(params, method="Radau", **tolerances):
    reactor = StiffReactor(params[0], 1e3 * params[1])
    if tolerances:
        sol = solve_ivp(reactor.rhs, (0.0, 5.0), [1.0, 0.0, 0.0], method=method, **tolerances)
    else:
        sol = reactor.run(method=method)
    return sol.y[2, -1]


# ---- 3. BDF with a hand-written Jacobian closed over the rate constants ------------------

def enzyme_bdf(params, rtol=1e-3, atol=1e-6):
    kf, kcat = params
    kr = 1e3
    E0 = 0.05

    def rhs(t, y):
        S, C, P = y
        E = E0 - C
        return [-kf * 1e3 * E * S + kr * C, kf * 1e3 * E * S - (kr + kcat) * C, kcat * C]

    def jac(t, y):
        S, C, P = y
        E = E0 - C
        return np.array([[-kf * 1e3 * E, kf * 1e3 * S + kr, 0.0],
                         [kf * 1e3 * E, -kf * 1e3 * S - kr - kcat, 0.0],
                         [0.0, kcat, 0.0]])

    sol = solve_ivp(rhs, [0, 8.0], [1.0, 0.0, 0.0], method="BDF", jac=jac, rtol=rtol,
                    atol=atol)
    return sol.y[2][-1]


# ---- 4. a projectile with drag: a terminal event at the ground, the range ------------------

def projectile_range(params):
    v0, drag = params
    angle = np.radians(40.0)
    g = 9.81

    def rhs(t, s):
        x, y, vx, vy = s
        v = np.sqrt(vx ** 2 + vy ** 2)
        return [vx, vy, -drag * v * vx, -g - drag * v * vy]

    def hit_ground(t, s):
        return s[1]
    hit_ground.terminal = True
    hit_ground.direction = -1

    s0 = [0.0, 0.0, v0 * np.cos(angle), v0 * np.sin(angle)]
    sol = solve_ivp(rhs, (0, 100), s0, events=hit_ground, rtol=1e-10, atol=1e-10,
                    max_step=0.5)
    return sol.y_events[0][0][0] + sol.t_events[0][0]


# ---- 5. a drug below its threshold: a non-terminal event, the first crossing time ---------

def time_below_threshold(params):
    ka, ke = params
    dose = 100.0

    def pk(t, y, ka, ke):
        gut, plasma = y
        return [-ka * gut, ka * gut - ke * plasma]

    def below(t, y, ka, ke):
        return y[1] - 20.0
    below.direction = -1

    sol = solve_ivp(pk, (0, 48), [dose, 0.0], args=(ka, ke), events=below, rtol=1e-10,
                    atol=1e-10)
    return sol.t_events[0][0]


# ---- 6. dense output: a damped oscillator sampled by sol.sol on a fine grid ---------------

def oscillator_dense(params):
    omega, zeta = params
    sol = solve_ivp(lambda t, y: [y[1], -2 * zeta * omega * y[1] - omega ** 2 * y[0]],
                    (0.0, 6.0), [1.0, 0.0], dense_output=True, rtol=1e-10, atol=1e-12)
    t = np.linspace(0, 6, 61)
    x = sol.sol(t)[0]
    return np.trapezoid(x ** 2, t)


# ---- 7. odeint with parameters in module globals and tfirst=True ---------------------------

BETA = 0.3
GAMMA = 0.1


def sir_rhs_globals(t, y):
    S, I, R = y
    return [-BETA * S * I, BETA * S * I - GAMMA * I, GAMMA * I]


def sir_final_size(params):
    global BETA, GAMMA
    BETA, GAMMA = params
    t = np.linspace(0, 60, 31)
    Y = odeint(sir_rhs_globals, [0.99, 0.01, 0.0], t, tfirst=True, rtol=1e-9, atol=1e-11)
    return Y[-1, 2] + np.max(Y[:, 1])


# ---- 8. parameters bound by functools.partial, y0 from a list of active values ------------

def lotka(t, z, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


def lotka_partial(params):
    a, x0 = params
    f = functools.partial(lotka, a=a, b=0.4, c=0.9, d=0.1)
    sol = solve_ivp(f, [0, 8], [x0, 2.0], t_eval=np.linspace(0, 8, 17), rtol=1e-10, atol=1e-10)
    return np.mean(sol.y[0]) + sol.y[1, -1]


# ---- 9. LSODA for a two-compartment PK model with infusion ending at a time ---------------

def pk_lsoda(params):
    CL, V = params

    def rhs(t, c):
        infusion = 10.0 if t < 2.0 else 0.0
        c1, c2 = c
        return [(infusion - CL * c1 - 0.5 * (c1 - c2)) / V, 0.5 * (c1 - c2) / 20.0]

    sol = solve_ivp(rhs, (0, 2.0), [0.0, 0.0], method="LSODA", rtol=1e-10, atol=1e-12)
    return sol.y[0, -1] * 10 + sol.y[1, -1]


# ---- 10. van der Pol (mu = 50) by Radau: the amplitude after two periods ----------------

def vdp_radau(params, rtol=1e-3, atol=1e-6):
    mu, x0 = params

    def vdp(t, y):
        return [y[1], mu * ((1 - y[0] ** 2) * y[1]) - y[0]]

    sol = solve_ivp(vdp, (0, 3.0), [x0, 0.0], method="Radau", rtol=rtol, atol=atol)
    return sol.y[0, -1]


# ============================ equations of state ================================

R_GAS = 8.314462618


# ---- 11. Peng–Robinson residual Helmholtz energy: p = -dA/dV, mu_i = dA/dn_i by adsim ----

PR_TC = np.array([190.6, 305.3])
PR_PC = np.array([45.99e5, 48.72e5])
PR_OMEGA = np.array([0.012, 0.100])
PR_KIJ = np.array([[0.0, 0.003], [0.003, 0.0]])


def pr_helmholtz(state):
    T, V, n1, n2 = state
    n = np.array([n1, n2])
    kappa = 0.37464 + 1.54226 * PR_OMEGA - 0.26992 * PR_OMEGA ** 2
    alpha = (1 + kappa * (1 - np.sqrt(T / PR_TC))) ** 2
    a = 0.45724 * R_GAS ** 2 * PR_TC ** 2 / PR_PC * alpha
    b = 0.07780 * R_GAS * PR_TC / PR_PC
    aij = np.sqrt(np.outer(a, a)) * (1 - PR_KIJ)
    N = n.sum()
    A_mix = n @ aij @ n
    B_mix = n @ b
    d1, d2 = 1 + np.sqrt(2), 1 - np.sqrt(2)
    ar = (-N * np.log(1 - B_mix / V)
          - A_mix / (R_GAS * T * B_mix * (d1 - d2)) * np.log((V + d1 * B_mix) / (V + d2 * B_mix)))
    ideal = np.sum(n * (np.log(n / V) - 1))
    return R_GAS * T * (ar + ideal)


# ---- 12. Carnahan–Starling plus mean-field attraction: Z from the density derivative ----

def cs_free_energy(rho, T, sigma=1.0, eps=1.0):
    eta = np.pi / 6 * rho * sigma ** 3
    a_hs = (4 * eta - 3 * eta ** 2) / (1 - eta) ** 2
    a_att = -16 * np.pi / 9 * rho * sigma ** 3 * eps / T
    return T * (np.log(rho) - 1 + a_hs + a_att)


# ---- 13. a cubic by Cardano's formula with np.cbrt and the trigonometric branch ----------

def rk_vapour_z(params):
    Tr, Pr = params
    A = 0.42748 * Pr / Tr ** 2.5
    B = 0.08664 * Pr / Tr
    # Z^3 - Z^2 + (A - B - B^2) Z - A B = 0
    a2, a1, a0 = -1.0, A - B - B ** 2, -A * B
    p = a1 - a2 ** 2 / 3
    q = 2 * a2 ** 3 / 27 - a2 * a1 / 3 + a0
    disc = (q / 2) ** 2 + (p / 3) ** 3
    if disc > 0:
        s = np.sqrt(disc)
        z = np.cbrt(-q / 2 + s) + np.cbrt(-q / 2 - s) - a2 / 3
    else:
        r = np.sqrt(-p / 3)
        phi = np.arccos(-q / (2 * r ** 3))
        roots = 2 * r * np.cos((phi - 2 * np.pi * np.arange(3)) / 3) - a2 / 3
        z = np.max(roots)
    return z + np.log(z - B) - A / B * np.log(1 + B / z)


# ---- 14. Debye free energy: quad with an active upper limit Theta/T ----------------------

def debye_free_energy(params):
    theta_D, T = params

    def integrand(x):
        return x ** 3 / np.expm1(x)

    D3, _ = quad(integrand, 0.0, theta_D / T)
    D3 *= 3 * (T / theta_D) ** 3
    return R_GAS * T * (3 * np.log(-np.expm1(-theta_D / T)) - D3) + 9 / 8 * R_GAS * theta_D


# ============================ mixture likelihoods ==============================

class Sample:
    def __init__(self, x, w=None):
        self.x = np.asarray(x, dtype=float)
        self.w = np.ones_like(self.x) if w is None else np.asarray(w, dtype=float)


SAMPLE = Sample(np.r_[np.random.default_rng(5).normal(-1.0, 0.6, 40),
                      np.random.default_rng(6).normal(1.5, 0.9, 60)],
                np.linspace(0.5, 1.5, 100))


# ---- 15. a weighted Gaussian mixture: np.split of the parameters, softmax weights -------

def make_gmm_nll(data):
    def nll(theta):
        logits, mus, log_sigmas = np.split(theta, 3)
        logw = logits - logsumexp(logits)
        sig = np.exp(log_sigmas)
        z = (data.x[:, None] - mus[None, :]) / sig
        comp = logw - 0.5 * z ** 2 - log_sigmas - 0.5 * np.log(2 * np.pi)
        return -np.sum(data.w * logsumexp(comp, axis=1))
    return nll


gmm_nll = make_gmm_nll(SAMPLE)


# ---- 16. a Student-t mixture by stats.t.logpdf with array loc/scale and logsumexp(b=) ----

def t_mixture_nll(params):
    mu, log_s = params
    locs = np.array([mu, -mu])
    scales = np.exp(np.array([log_s, 0.5 * log_s]))
    lp = stats.t.logpdf(SAMPLE.x[:, None], df=4.0, loc=locs, scale=scales)
    return -np.sum(logsumexp(lp, axis=1, b=np.array([0.4, 0.6])))


# ---- 17. a Poisson mixture: gammaln of counts, np.logaddexp, expit of a logit -----------

COUNTS = np.array([0, 1, 1, 2, 3, 3, 4, 7, 8, 9, 10, 12])


def poisson_mixture(params):
    logit_pi, log_ratio = params
    pi = expit(logit_pi)
    lam1 = 2.0
    lam2 = lam1 * np.exp(log_ratio)
    lp1 = COUNTS * np.log(lam1) - lam1 - gammaln(COUNTS + 1)
    lp2 = COUNTS * np.log(lam2) - lam2 - gammaln(COUNTS + 1)
    return -np.sum(np.logaddexp(np.log(pi) + lp1, np.log1p(-pi) + lp2))


# ---- 18. a von Mises mixture with i0e, responsibilities appended to a list ---------------

ANGLES = np.random.default_rng(11).vonmises(0.5, 3.0, 30)


def von_mises_mixture(params):
    kappa, mu2 = params
    mus = [0.5, mu2]
    logps = []
    for m in mus:
        logps.append(kappa * (np.cos(ANGLES - m) - 1) - np.log(2 * np.pi * special.i0e(kappa)))
    L = np.vstack(logps) + np.log(0.5)
    return -logsumexp(L, axis=0).sum()


# =============================== filters =======================================

# ---- 19. an unscented Kalman filter: from numpy import zeros, dot, outer; Pxz += outer ---

RANGES = np.array([5.1, 5.6, 6.4, 7.1, 7.7, 8.6])


def ukf_range_nll(params, kappa=1.0):
    q, r = params
    dt = 1.0
    F = array([[1.0, dt], [0.0, 1.0]])
    Q = q * array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    x = array([5.0, 0.5])
    P = 0.5 * np.eye(2)
    n = 2
    W = zeros(2 * n + 1)
    W[0] = kappa / (n + kappa)
    W[1:] = 0.5 / (n + kappa)
    nll = 0.0
    for z in RANGES:
        x = dot(F, x)
        P = dot(F, dot(P, F.T)) + Q
        S_root = cholesky((n + kappa) * P).T
        sigmas = zeros((2 * n + 1, n))
        sigmas[0] = x
        for k in range(n):
            sigmas[k + 1] = x + S_root[k]
            sigmas[n + k + 1] = x - S_root[k]
        Z = np.sqrt(sigmas[:, 0] ** 2 + 1.0)
        z_hat = dot(W, Z)
        Pzz = r
        Pxz = zeros(n)
        for k in range(2 * n + 1):
            Pzz += W[k] * (Z[k] - z_hat) ** 2
            Pxz += W[k] * (sigmas[k] - x) * (Z[k] - z_hat)
        K = Pxz / Pzz
        innov = z - z_hat
        x = x + K * innov
        P = P - outer(K, K) * Pzz
        nll += 0.5 * (log(2 * np.pi * Pzz) + innov ** 2 / Pzz)
    return nll


# ---- 20. a Kalman filter in Joseph form with inv and names from numpy -------------------

SERIES = np.array([1.0, 1.4, 1.1, 1.9, 2.4, 2.2, 2.9, 3.3])


def kalman_joseph(params):
    log_q, log_r = params
    q, r = exp(log_q), exp(log_r)
    F = array([[1.0, 1.0], [0.0, 1.0]])
    H = array([[1.0, 0.0]])
    Q = q * np.eye(2)
    R = array([[r]])
    x = zeros((2, 1))
    P = 10.0 * np.eye(2)
    I = np.eye(2)
    ll = 0.0
    for z in SERIES:
        x = dot(F, x)
        P = dot(dot(F, P), F.T) + Q
        y = z - dot(H, x)
        S = dot(dot(H, P), H.T) + R
        K = dot(dot(P, H.T), inv(S))
        x = x + dot(K, y)
        IKH = I - dot(K, H)
        P = dot(dot(IKH, P), IKH.T) + dot(dot(K, R), K.T)
        ll += -0.5 * (log(2 * np.pi * S[0, 0]) + y[0, 0] ** 2 / S[0, 0])
    return -ll


# ---- 21. an ensemble Kalman filter with fixed perturbations and np.cov -------------------

ENKF_NOISE = np.random.default_rng(3).standard_normal((4, 20))


def enkf_analysis(params):
    growth, r = params
    ens = 1.0 + 0.2 * ENKF_NOISE[0]
    obs = [1.3, 1.7, 2.0]
    for k, z in enumerate(obs):
        ens = ens * growth
        pert = z + np.sqrt(r) * ENKF_NOISE[k + 1]
        var = np.cov(ens)
        gain = var / (var + r)
        ens = ens + gain * (pert - ens)
    return np.mean(ens) + np.std(ens)


# =============================== optics ========================================

# ---- 22. one film: interface and propagation matrices, T[1][0] / T[0][0] -----------------

def film_reflectance(params):
    n_film, d = params
    n = np.array([1.0, n_film, 1.52])
    R_total = 0.0
    for lam in np.linspace(450.0, 650.0, 5):
        beta = 2 * np.pi * n_film / lam
        t01 = 2 * n[0] / (n[0] + n[1])
        r01 = (n[0] - n[1]) / (n[0] + n[1])
        t12 = 2 * n[1] / (n[1] + n[2])
        r12 = (n[1] - n[2]) / (n[1] + n[2])
        I01 = np.array([[1 / t01, r01 / t01], [r01 / t01, 1 / t01]])
        P1 = np.array([[np.exp(-1j * beta * d), 0], [0, np.exp(1j * beta * d)]])
        I12 = np.array([[1 / t12, r12 / t12], [r12 / t12, 1 / t12]])
        T = np.dot(np.dot(I01, P1), I12)
        r = T[1][0] / T[0][0]
        R_total += np.abs(r) * np.abs(r)
    return R_total / 5


# ---- 23. an absorbing film at oblique incidence: complex index, dynamical matrices, inv --

def absorbing_stack(params):
    k_ext, d = params
    lam = 550.0
    theta0 = np.radians(30.0)
    ns = [1.0 + 0j, 2.0 + 1j * k_ext, 1.5 + 0j]
    sin0 = ns[0] * np.sin(theta0)
    cos_t = [np.sqrt(1 - (sin0 / ni) ** 2) for ni in ns]

    def D(i):                                 # s polarisation
        return np.array([[1, 1], [ns[i] * cos_t[i], -ns[i] * cos_t[i]]])

    phi = 2 * np.pi * ns[1] * cos_t[1] * d / lam
    Pm = np.diag([np.exp(1j * phi), np.exp(-1j * phi)])
    M = inv(D(0)) @ D(1) @ Pm @ inv(D(1)) @ D(2)
    r = M[1, 0] / M[0, 0]
    t = 1 / M[0, 0]
    Tr = np.real(ns[2] * cos_t[2]) / np.real(ns[0] * cos_t[0]) * np.abs(t) ** 2
    return np.abs(r) ** 2 + 0.5 * Tr


# ---- 24. a Bragg grating by coupled modes: complex sqrt, sinh and cosh -------------------

def grating_reflectance(params, dbeta=np.linspace(-3.0, 3.0, 12)):
    kappa, L = params
    s = np.sqrt(kappa ** 2 - dbeta ** 2 + 0j)
    r = -1j * kappa * np.sinh(s * L) / (s * np.cosh(s * L) + 1j * dbeta * np.sinh(s * L))
    R = (r * np.conj(r)).real
    return np.trapezoid(R, dbeta)


# ---- 25. a nonlinear Schrödinger pulse by split-step Fourier --------------------------------

def nls_split_step(params, n=64, steps=20):
    gamma, chirp = params
    t = np.linspace(-8, 8, n, endpoint=False)
    w = 2 * np.pi * np.fft.fftfreq(n, t[1] - t[0])
    A = np.exp(-t ** 2 / 2) * np.exp(-1j * chirp * t ** 2)
    dz = 0.05
    half_linear = np.exp(-0.5j * w ** 2 * dz / 2)
    for _ in range(steps):
        A = np.fft.ifft(half_linear * np.fft.fft(A))
        A = A * np.exp(1j * gamma * np.abs(A) ** 2 * dz)
        A = np.fft.ifft(half_linear * np.fft.fft(A))
    I = np.abs(A) ** 2
    return np.sum(I * t ** 2) / np.sum(I)


# ============================== PDE codes =====================================

# ---- 26. 1-D heat, Neumann ends copied every step: u[0] = u[1], u[1:-1] += ... ------------

def heat_neumann(params, n=25, steps=60):
    alpha, heat = params
    dx = 1.0 / (n - 1)
    dt = 0.4 * dx ** 2
    u = np.zeros(n)
    src = np.exp(-((np.linspace(0, 1, n) - 0.3) / 0.1) ** 2)
    for _ in range(steps):
        u[1:-1] += dt * (alpha * (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2 + heat * src[1:-1])
        u[0] = u[1]
        u[-1] = u[-2]
    return u.sum() * dx + u.max()


# ---- 27. a box model: plain reservoirs updated in place, Mass += dt * flux ----------------

def carbon_box_model(params, years=50):
    k_ocean, k_land = params
    Mass = np.array([600.0, 1000.0, 2300.0])        # atmosphere, ocean surface, land
    emissions = np.linspace(5.0, 10.0, years)
    history = []
    dt = 1.0
    for year in range(years):
        flux = np.zeros(3)
        to_ocean = k_ocean * (Mass[0] - 0.6 * Mass[1])
        to_land = k_land * Mass[0] - 0.01 * Mass[2]
        flux[0] = emissions[year] - to_ocean - to_land
        flux[1] = to_ocean
        flux[2] = to_land
        Mass += dt * flux
        history.append(Mass[0])
    return history[-1] / 600.0 + np.mean(history) / 1e3


# ---- 28. advection–diffusion with np.where upwinding of a sign-changing velocity ---------

def upwind_where(params, n=40, steps=40):
    U, D = params
    x = np.linspace(0, 1, n)
    dx = x[1] - x[0]
    vel = U * np.sin(2 * np.pi * x)
    c = np.exp(-((x - 0.5) / 0.1) ** 2)
    dt = 0.2 * dx
    for _ in range(steps):
        back = (c[1:-1] - c[:-2]) / dx
        fwd = (c[2:] - c[1:-1]) / dx
        adv = np.where(vel[1:-1] > 0, vel[1:-1] * back, vel[1:-1] * fwd)
        c[1:-1] = c[1:-1] - dt * adv + dt * D * (c[2:] - 2 * c[1:-1] + c[:-2]) / dx ** 2
    return np.sum(c * x) * dx


# ---- 29. semi-Lagrangian advection: np.interp with period= ---------------------------------

def semi_lagrangian(params, n=48, steps=10):
    speed, width = params
    x = np.linspace(0, 1, n, endpoint=False)
    u = np.exp(-((x - 0.5) / width) ** 2)
    dt = 0.02
    for _ in range(steps):
        u = np.interp(x - speed * dt, x, u, period=1.0)
    return np.sum(u * np.sin(2 * np.pi * x)) / n


# ---- 30. an energy balance climate model with np.gradient on a latitude grid -------------

def ebm_global_mean(params, n=30, steps=80):
    D, A_out = params
    lat = np.linspace(-np.pi / 2 + 0.05, np.pi / 2 - 0.05, n)
    s = np.sin(lat)
    insol = 1.0 - 0.48 * (3 * s ** 2 - 1) / 2
    T = np.full(n, 10.0)
    dt = 0.002
    for _ in range(steps):
        dTds = np.gradient(T, s)
        transport = np.gradient(D * (1 - s ** 2) * dTds, s)
        T = T + dt * (340 * insol * 0.7 - (A_out + 2.0 * T) + transport * 10)
    return np.average(T, weights=np.cos(lat))


# ---- 31. Cahn–Hilliard by explicit steps with a Laplacian of np.roll, c += dt * lap(mu) --

CH_START = 0.05 * np.random.default_rng(21).standard_normal((12, 12))


def cahn_hilliard(params, steps=20):
    mean_c, gamma = params
    c = mean_c + CH_START.copy()
    dt = 0.002

    def lap(f):
        return np.roll(f, 1, 0) + np.roll(f, -1, 0) + np.roll(f, 1, 1) + np.roll(f, -1, 1) - 4 * f

    for _ in range(steps):
        mu = c ** 3 - c - gamma * lap(c)
        c += dt * lap(mu)
    return np.mean(c ** 4) + np.var(c)


# ---- 32. MacCormack for Burgers: predictor into a copy, corrector by views ---------------

def maccormack_burgers(params, n=40, steps=20):
    amp, nu = params
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    dx = x[1] - x[0]
    u = 1.0 + amp * np.sin(x)
    dt = 0.3 * dx
    for _ in range(steps):
        F = 0.5 * u ** 2
        us = u.copy()
        us[:-1] = u[:-1] - dt / dx * (F[1:] - F[:-1]) + nu * dt / dx ** 2 * (
            np.roll(u, -1) - 2 * u + np.roll(u, 1))[:-1]
        us[-1] = u[-1] - dt / dx * (F[0] - F[-1])
        Fs = 0.5 * us ** 2
        u[1:] = 0.5 * (u[1:] + us[1:] - dt / dx * (Fs[1:] - Fs[:-1]))
        u[0] = 0.5 * (u[0] + us[0] - dt / dx * (Fs[0] - Fs[-1]))
    return np.sum(u ** 2) * dx


# ---- 33. 2-D reaction–diffusion with np.pad(mode="edge") for no-flux borders ---------------

def fisher_2d_pad(params, n=10, steps=25):
    D, r = params
    u = np.zeros((n, n))
    u[4:6, 4:6] = 0.5
    dt = 0.05
    for _ in range(steps):
        up = np.pad(u, 1, mode="edge")
        lap = up[2:, 1:-1] + up[:-2, 1:-1] + up[1:-1, 2:] + up[1:-1, :-2] - 4 * u
        u = u + dt * (D * lap + r * u * (1 - u))
    return u.sum()


# ============================ SciPy inside models ===============================

# ---- 34. Poisson–Boltzmann by Newton: a sparse Jacobian A - diags(cosh u), spsolve --------

def poisson_boltzmann(params, n=30):
    phi0, kappa2 = params
    h = 1.0 / (n + 1)
    A = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") / h ** 2
    bc = np.zeros(n)
    bc[0] = phi0 / h ** 2
    u = np.zeros(n)
    for _ in range(8):
        F = A @ u + bc - kappa2 * np.sinh(u)
        J = A - sp.diags(kappa2 * np.cosh(u))
        u = u - spsolve(J.tocsc(), F)
    return h * np.sum(u) + u[0]


# ---- 35. chemical equilibrium by root(method='hybr') with parameters in a dict -----------

def equilibrium_root(params):
    K = {"K1": params[0], "K2": params[1]}
    feed = {"A": 1.0, "B": 0.7}

    def residual(xi, K, feed):
        x1, x2 = xi
        A = feed["A"] - x1 - x2
        B = feed["B"] - x1
        C = x1
        D = x2
        return [C - K["K1"] * A * B, D - K["K2"] * A]

    sol = root(residual, [0.2, 0.2], args=(K, feed), method="hybr", tol=1e-13)
    return sol.x[0] + 2 * sol.x[1]


# ---- 36. the energy at a minimum found by BFGS (envelope theorem) ------------------------

def relaxed_energy(params):
    k, f = params

    def energy(u):
        return 0.5 * k * np.sum(np.diff(np.r_[0.0, u]) ** 2) + 0.25 * np.sum(u ** 4) - f * u[-1]

    res = minimize(energy, np.zeros(4), method="BFGS", options={"gtol": 1e-12})
    return res.fun + res.x[-1]


# ---- 37. a natural CubicSpline of active samples: integrate, derivative() ---------------

def spline_work(params):
    a, b = params
    xs = np.linspace(0, 2, 6)
    ys = a * np.sin(xs) + b * xs ** 2
    cs = CubicSpline(xs, ys, bc_type="natural")
    slope = cs.derivative()(np.array([0.5, 1.5]))
    return cs.integrate(0.2, 1.8) + np.sum(slope ** 2)


# ---- 38. make_interp_spline of active values evaluated on a fine grid -----------------------

def bspline_roughness(params):
    a, w = params
    xs = np.linspace(0, 1, 8)
    ys = np.exp(-((xs - 0.5) / w) ** 2) * a
    spl = make_interp_spline(xs, ys, k=3)
    xf = np.linspace(0, 1, 41)
    return np.trapezoid(spl(xf, 2) ** 2, xf) * 1e-3 + spl(0.33)


# ---- 39. Bessel functions: a cylinder's transient centre temperature ----------------------

J0_ZEROS = special.jn_zeros(0, 6)


def cylinder_centre(params):
    alpha, t = params
    lam = J0_ZEROS
    coef = 2 / (lam * special.j1(lam))
    return np.sum(coef * np.exp(-alpha * lam ** 2 * t)) + special.jv(1, alpha * 2.0)


# ---- 40. simpson and cumulative_trapezoid of active profiles -----------------------------

def cumulative_dose(params):
    k, A = params
    t = np.linspace(0, 10, 21)
    c = A * t * np.exp(-k * t)
    auc = simpson(c, x=t)
    running = cumulative_trapezoid(c, t, initial=0)
    return auc + running[10] ** 2 / auc


# ---- 41. newton on an array of starting points (vectorised secant/Newton) -----------------

def kepler_newton_array(params):
    e, M0 = params
    M = M0 + np.linspace(0.1, 3.0, 6)
    E = newton(lambda E: E - e * np.sin(E) - M, M, fprime=lambda E: 1 - e * np.cos(E),
               tol=1e-13)
    return np.sum(np.cos(E))


# ---- 42. brentq for a bubble temperature with Antoine constants in a dict -----------------

ANTOINE = {"benzene": (6.90565, 1211.033, 220.79), "toluene": (6.95464, 1344.8, 219.482)}


def bubble_point(params):
    x_benzene, P = params

    def psat(name, T):
        a, b, c = ANTOINE[name]
        return 10 ** (a - b / (T + c))

    def f(T):
        return x_benzene * psat("benzene", T) + (1 - x_benzene) * psat("toluene", T) - P

    return brentq(f, 0.0, 200.0, xtol=1e-14)


# ---- 43. interp1d of an active table, quadratic, evaluated inside fsolve -----------------

def interp_fsolve(params):
    a, target = params
    xs = np.linspace(0, 3, 7)
    table = interp1d(xs, a * xs ** 2 + xs, kind="quadratic")
    root_x, = fsolve(lambda z: table(z) - target, [1.0], xtol=1e-13)
    return root_x


# ============================ lists, vectorize, piecewise =========================

# ---- 44. np.sum and np.mean of lists of active scalars and arrays ------------------------

def lists_to_numpy(params):
    a, b = params
    x = np.linspace(0, 1, 5)
    terms = [a * x, b * x ** 2, a * b * np.ones(5)]
    total = np.sum(terms)
    by_col = np.sum(terms, axis=0)
    mid = np.mean([a, b])
    stacked = np.vstack(terms)
    flat = np.r_[a, b, 0.0, by_col]
    return total + mid * stacked[1].sum() + np.dot(flat, flat) + np.hstack(terms)[7]


# ---- 45. np.vectorize of a scalar model with branches -------------------------------------

def _drag_cd(Re, a):
    if Re < 1.0:
        return 24.0 / Re
    elif Re < 1000.0:
        return 24.0 / Re * (1 + a * Re ** 0.687)
    return 0.44


drag_cd = np.vectorize(_drag_cd)


def vectorized_drag(params):
    a, scale = params
    Re = scale * np.array([0.5, 5.0, 50.0, 500.0, 5000.0])
    return np.sum(drag_cd(Re, a) * Re)


# ---- 46. np.piecewise with lambdas closing over active parameters ------------------------

def piecewise_flow(params):
    k1, h0 = params
    h = np.linspace(0, 2, 21)
    q = np.piecewise(h, [h < h0, h >= h0],
                     [lambda h: k1 * h ** 1.5, lambda h: k1 * h0 ** 1.5 + 2.0 * (h - h0)])
    return np.trapezoid(q, h)


# ---- 47. np.apply_along_axis over trajectories stacked with np.vstack ---------------------

def apply_along_axis_stats(params):
    a, b = params
    t = np.linspace(0, 1, 9)
    runs = [np.exp(-a * s * t) + b * t for s in (0.5, 1.0, 2.0)]
    M = np.vstack(runs)
    integrals = np.apply_along_axis(lambda row: np.trapezoid(row, t), 1, M)
    peaks = np.apply_along_axis(np.max, 0, M)
    return integrals @ np.array([1.0, 2.0, 3.0]) + peaks.sum()


# ---- 48. builtins on active scalars: max, min, sorted, sum of a generator -----------------

def builtins_of_scalars(params):
    a, b = params
    vals = [a * a, b + 0.5, a * b]
    return max(vals) + min(a, b) + sum(v ** 2 for v in vals) + sorted(vals)[1] + abs(a - b)


# ---- 49. np.stack with axis=1, np.concatenate of a list of arrays, np.linalg.norm of a list

def trajectory_geometry(params):
    vx, vy = params
    t = np.linspace(0, 1, 6)
    xs = vx * t
    ys = vy * t - 0.5 * 9.81 * t ** 2
    path = np.stack([xs, ys], axis=1)
    seg = np.diff(path, axis=0)
    length = np.sum(np.linalg.norm(seg, axis=1))
    ends = np.concatenate([path[0], path[-1]])
    return length + np.linalg.norm([ends[2] - ends[0], ends[3] - ends[1]])


# ---- 50. np.array of a list of 0-d arrays and floats; np.asarray([...]) in a loop --------

def array_of_scalars(params):
    k, c = params
    state = [np.float64(1.0), 0.0]
    for _ in range(20):
        x, v = state
        a = -k * x - c * v
        state = np.asarray([x + 0.05 * v, v + 0.05 * a])
    return np.array([state[0], state[1] ** 2, k]).sum()


# ---- 51. Newton–Krylov with adsim products: the user's objective (hvp checked) -------------

def chain_energy_logsumexp(u):
    du = np.diff(np.r_[0.0, u, 1.0])
    return np.sum(0.5 * du ** 2 + 0.1 * np.cosh(3 * du)) + logsumexp(u)


# ============================ round two: harder corners ============================

# ---- 52. a bouncing ball: a terminal event restarted in a loop, apexes by a second event -

def bouncing_ball(params, bounces=3):
    restitution, v0 = params

    def fall(t, y):
        return [y[1], -9.81 - 0.05 * y[1]]

    def ground(t, y):
        return y[0]
    ground.terminal = True
    ground.direction = -1

    def apex(t, y):
        return y[1]
    apex.direction = -1

    t0, y = 0.0, [1.0, v0]
    apexes = []
    for _ in range(bounces):
        sol = solve_ivp(fall, (t0, t0 + 10.0), y, events=[ground, apex], rtol=1e-10,
                        atol=1e-12)
        apexes.append(sol.y_events[1][0][0])
        t0 = sol.t_events[0][0]
        y_hit = sol.y_events[0][0]
        y = [0.0, -restitution * y_hit[1]]
    return t0 + sum(apexes)


# ---- 53. odeint with Dfun, a stiff three-species network (full_output read) --------------

def robertson_like_odeint(params):
    k1, k3 = params

    def f(y, t):
        a, b, c = y
        return [-k1 * a + 1e2 * b * c, k1 * a - 1e2 * b * c - k3 * b ** 2, k3 * b ** 2]

    def jac(y, t):
        a, b, c = y
        return [[-k1, 1e2 * c, 1e2 * b], [k1, -1e2 * c - 2 * k3 * b, -1e2 * b],
                [0.0, 2 * k3 * b, 0.0]]

    t = np.array([0.0, 1.0, 10.0, 40.0])
    Y, info = odeint(f, [1.0, 0.0, 0.0], t, Dfun=jac, full_output=True, rtol=1e-10, atol=1e-12,
                     mxstep=5000)
    return Y[-1, 2] + Y[1, 1] * 1e3


# ---- 54. solve_ivp with vectorized=True and an array of initial states --------------------

def logistic_vectorized(params):
    r, K = params

    def rhs(t, y):
        return r * y * (1 - y / K)

    y0 = np.array([0.1, 0.5, 1.5])
    sol = solve_ivp(rhs, (0, 4), y0, vectorized=True, t_eval=[1.0, 2.0, 4.0], rtol=1e-10,
                    atol=1e-12)
    return np.sum(sol.y[:, -1]) + np.sum(sol.y[0])


# ---- 55. an active time step in a while loop: while t < t_end, dt from a CFL number -------

def cfl_while_loop(params, n=30):
    speed, cfl = params
    x = np.linspace(0, 1, n)
    dx = x[1] - x[0]
    u = np.exp(-((x - 0.3) / 0.08) ** 2)
    t, t_end = 0.0, 0.2
    while t < t_end:
        dt = min(cfl * dx / speed, t_end - t)
        u[1:] = u[1:] - speed * dt / dx * (u[1:] - u[:-1])
        t = t + dt
    return np.sum(u * x) * dx


# ---- 56. a model object whose step() method updates self.state in place ------------------

class Rod:
    def __init__(self, n, kappa, loss):
        self.kappa = kappa
        self.loss = loss
        self.state = np.zeros(n)
        self.state[0] = 1.0
        self.dx = 1.0 / (n - 1)

    def step(self, dt):
        u = self.state
        u[1:-1] += dt * (self.kappa * (u[2:] - 2 * u[1:-1] + u[:-2]) / self.dx ** 2
                         - self.loss * u[1:-1])

    def run(self, steps, dt):
        for _ in range(steps):
            self.step(dt)
        return self.state


def rod_object(params):
    kappa, loss = params
    rod = Rod(20, kappa, loss)
    u = rod.run(50, 0.2 * rod.dx ** 2 / kappa)
    return u[5] + u.mean()


# ---- 57. in-place complex field propagation: E[1:] *= np.exp(1j * k dz), a real power ----

def waveguide_phase(params, n=32):
    k0, loss = params
    E = np.zeros(n, dtype=complex)
    E[:] = np.exp(-np.linspace(-2, 2, n) ** 2)
    dz = 0.1
    for _ in range(5):
        E[1:] *= np.exp(1j * k0 * dz - loss * dz)
        E[0] = E[1]
    return np.sum(np.real(E * np.exp(-0.3j)) ** 2) + np.angle(E[5]) ** 2


# ---- 58. interpolation on active knots: np.interp with an active xp ---------------------

def active_knots(params):
    x_break, y_break = params
    xp_ = [0.0, x_break, 1.0]
    fp = [0.0, y_break, 1.0]
    xs = np.linspace(0, 1, 11)
    curve = np.interp(xs, xp_, fp)
    return np.sum(curve ** 2) + np.interp(0.35, xp_, [1.0, 0.5, 0.0])


# ---- 58b. the same broken line by interp1d of active knots -----------------------------

def active_knots_interp1d(params):
    x_break, y_break = params
    line = interp1d(np.array([0.0, x_break, 1.0]), np.array([0.0, y_break, 1.0]))
    return np.sum(line(np.linspace(0, 1, 11)) ** 2) + line(0.35)


# ---- 59. Helmholtz stability: the Hessian of A(n1, n2) at fixed T, V by adsim.hessian ----

def pr_stability(params):
    T, V = params

    def A(n):
        return pr_helmholtz(np.r_[T, V, n])

    H = hessian_of(A, np.array([0.6, 0.4]))
    return np.linalg.eigvalsh(H)[0] * 1e-3


def hessian_of(f, x):
    import adsim                       # the user's own derivative tool, inside the model
    return adsim.hessian(f)(x)


# ---- 60. special functions: lambertw, ellipk, gammaincc, erfcx, kv ------------------------

def special_functions(params):
    a, b = params
    w = special.lambertw(a * np.exp(a)).real
    k = special.ellipk(b / 2)
    q = special.gammaincc(2.5, a)
    e = special.erfcx(b)
    kv = special.kv(1.0, a + b)
    return w + k + q + e + kv


# ---- 61. Nelder–Mead inside the model: a fitted offset -------------------------------------

def nelder_mead_offset(params):
    a, b = params

    def misfit(c):
        return (c[0] - a) ** 2 + 3 * (c[1] - a * b) ** 2 + 0.1 * c[0] ** 4

    res = minimize(misfit, [0.0, 0.0], method="Nelder-Mead",
                   options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 4000})
    return res.x[0] + res.x[1]


# ---- 62. np.vectorize with otypes and a keyword, np.piecewise of a scalar -----------------

def vectorize_otypes(params):
    a, b = params
    shape_fn = np.vectorize(lambda x, p=1.0: x ** p if x > 0.5 else p * x, otypes=[float])
    x = np.linspace(0.1, 1.0, 6) * b
    s = shape_fn(x, p=a)
    pw = np.piecewise(a, [a < 1.0, a >= 1.0], [lambda v: v ** 2, lambda v: 2 * v - 1])
    return np.sum(s) + pw


# ---- 63. a tight-binding chain: eigh of a matrix filled in loops, the band energy --------

def tight_binding(params, n=8):
    t_hop, onsite = params
    H = np.zeros((n, n))
    for i in range(n):
        H[i, i] = onsite * (-1) ** i
        if i + 1 < n:
            H[i, i + 1] = H[i + 1, i] = -t_hop
    w, V = np.linalg.eigh(H)
    occupied = w[: n // 2]
    return occupied.sum() + V[0, 0] ** 2


# ---- 64. np.r_ with slices and scalars, np.c_, np.hstack of list of 0-d values ------------

def index_tricks(params):
    a, b = params
    v = np.r_[a, 0:3, b, [a * b, 1.0]]
    m = np.c_[np.array([a, b]), np.array([b, 1.0])]
    h = np.hstack([a, b, a + b])
    return v @ v + np.linalg.det(m) + h.prod()


# ---- 65. a Kalman smoother's gain with np.linalg.solve on transposes, P = (P + P.T) / 2 -

def symmetrised_kalman(params):
    q, r = params
    F = np.array([[1.0, 0.1], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    x = np.zeros(2)
    P = np.eye(2)
    nll = 0.0
    for z in SERIES:
        x = F @ x
        P = F @ P @ F.T + q * np.eye(2)
        S = H @ P @ H.T + r
        K = np.linalg.solve(S.T, (P @ H.T).T).T
        innov = z - H @ x
        x = x + (K @ innov)
        P = P - K @ S @ K.T
        P = (P + P.T) / 2
        nll += 0.5 * (np.log(np.linalg.det(2 * np.pi * S)) + innov @ np.linalg.solve(S, innov))
    return nll


# ---- 66. quad with args and points=, an active integrand parameter ------------------------

def quad_points(params):
    a, c = params
    val, _ = quad(lambda x, a, c: np.exp(-a * x) * np.abs(x - c), 0.0, 2.0, args=(a, c),
                  points=[0.8], epsabs=1e-13, epsrel=1e-13)
    return val


# ---- 67. a sparse 2-D Laplacian by kron, an active conductivity on its diagonal ---------

def sparse_kron_poisson(params, n=6):
    k, s = params
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    I = sp.identity(n)
    A = (sp.kron(I, T) + sp.kron(T, I)) * k + s * sp.identity(n * n)
    b = np.ones(n * n)
    u = spsolve(A.tocsr(), b)
    return u @ (A @ u) + u.max()


# ============================ round three =============================================

# ---- 68. repeated doses: segments restarted from y0 = sol.y[:, -1].copy(); y0[0] += dose -

def repeated_doses(params, doses=3, tau=8.0):
    ka, ke = params
    y0 = np.array([100.0, 0.0])
    troughs = []
    for _ in range(doses):
        sol = solve_ivp(lambda t, y: [-ka * y[0], ka * y[0] - ke * y[1]], (0, tau), y0,
                        rtol=1e-10, atol=1e-10)
        y0 = sol.y[:, -1].copy()
        troughs.append(y0[1])
        y0[0] += 100.0
    return np.mean(troughs) + y0[1]


# ---- 69. a model object with parameters in a dict attribute, lambda events ---------------

class Population:
    def __init__(self, **p):
        self.p = dict(p)

    def rhs(self, t, n):
        r, K, h = self.p["r"], self.p["K"], self.p["h"]
        return [r * n[0] * (1 - n[0] / K) - h * n[0]]


def time_to_half_capacity(params):
    model = Population(r=params[0], K=10.0, h=params[1])
    half = lambda t, n: n[0] - 4.0           # noqa: E731 (as written)
    half.terminal = True
    sol = solve_ivp(model.rhs, (0, 50), [0.5], events=half, t_eval=np.linspace(0, 50, 101),
                    rtol=1e-10, atol=1e-12)
    return sol.t_events[0][0] + np.sum(sol.y[0]) * 1e-2


# ---- 70. RK45 at SciPy's default tolerances: a growth fit over a list of experiments ----

EXPERIMENTS = [(0.1, np.array([0.2, 0.39, 0.68])), (0.3, np.array([0.52, 0.8, 0.95]))]


def growth_fit_default_tolerances(params, **tolerances):
    r, K = params
    sse = 0.0
    for n0, data in EXPERIMENTS:
        sol = solve_ivp(lambda t, n: r * n * (1 - n / K), (0, 3), [n0], t_eval=[1.0, 2.0, 3.0],
                        **tolerances)
        sse = sse + np.sum((sol.y[0] - data) ** 2)
    return sse


# ---- 71. fugacities by adsim.grad of n a_res inside a Rachford–Rice brentq -----------------

def vdw_ln_phi(T, P, z):
    """ln phi_i of a van der Waals mixture from the residual Helmholtz energy
    of the liquid-like root, the derivative taken by adsim."""
    import adsim
    a = np.array([2.3, 5.5])
    b = np.array([0.043, 0.064])

    def nA_res(n, V):
        N = np.sum(n)
        am = n @ np.sqrt(np.outer(a, a)) @ n
        bm = n @ b
        return -N * np.log(1 - bm / V) - am / (0.08314 * T * V)

    V = 0.08314 * T / P + np.sum(z * b)          # gas-like volume, one mole
    Z = P * V / (0.08314 * T)
    return adsim.grad(lambda n: nA_res(n, V))(z) - np.log(Z)


def flash_fraction(params):
    T, P = params
    z = np.array([0.6, 0.4])
    K = np.array([2.2, 0.4]) * np.exp(vdw_ln_phi(T, P, z) * 0.1)

    def rr(beta):
        return np.sum(z * (K - 1) / (1 + beta * (K - 1)))

    return brentq(rr, 1e-9, 1 - 1e-9, xtol=1e-14)


# ---- 72. a vectorised transfer matrix: (wavelengths, 2, 2) complex stacks, einsum, matmul -

def stacked_tmm(params):
    n_hi, d_hi = params
    lam = np.linspace(500.0, 700.0, 9)
    layers = [(n_hi, d_hi), (1.45, 95.0)] * 3
    M = np.broadcast_to(np.eye(2, dtype=complex), (lam.size, 2, 2)).copy()
    for n, d in layers:
        delta = 2 * np.pi * n * d / lam
        layer = np.empty((lam.size, 2, 2), dtype=complex)
        layer[:, 0, 0] = np.cos(delta)
        layer[:, 0, 1] = 1j * np.sin(delta) / n
        layer[:, 1, 0] = 1j * n * np.sin(delta)
        layer[:, 1, 1] = np.cos(delta)
        M = np.einsum("wij,wjk->wik", M, layer)
    n0, ns = 1.0, 1.52
    B = M[:, 0, 0] + M[:, 0, 1] * ns
    C = M[:, 1, 0] + M[:, 1, 1] * ns
    r = (n0 * B - C) / (n0 * B + C)
    return np.mean(np.abs(r) ** 2)


# ---- 73. a minmod-limited finite-volume advection: np.where, np.sign, np.minimum --------

def minmod_advection(params, n=40, steps=20):
    speed, width = params
    x = (np.arange(n) + 0.5) / n
    u = np.exp(-((x - 0.4) / width) ** 2)
    dx = 1.0 / n
    dt = 0.4 * dx / speed
    for _ in range(steps):
        a = u - np.roll(u, 1)
        b = np.roll(u, -1) - u
        slope = np.where(a * b > 0, np.sign(a) * np.minimum(np.abs(a), np.abs(b)), 0.0)
        face = u + 0.5 * (1 - speed * dt / dx) * slope
        flux = speed * face
        u = u - dt / dx * (flux - np.roll(flux, 1))
    return np.sum(u * x) * dx


# ---- 74. expm_multiply of a sparse generator with an active rate -------------------------

def sparse_master_equation(params, n=12):
    birth, death = params
    from scipy.sparse.linalg import expm_multiply
    up = birth * np.ones(n - 1)
    down = death * np.arange(1, n)
    Q = sp.diags([up, down], [-1, 1], shape=(n, n)).tolil()
    Q.setdiag(-(np.r_[up, 0.0] + np.r_[0.0, down]))
    p0 = np.zeros(n)
    p0[0] = 1.0
    p = expm_multiply(Q.tocsc(), p0, start=0, stop=2.0, num=3, endpoint=True)
    return p[-1] @ np.arange(n) + p[1, 2]


# ---- 75. np.vectorize with a signature: a per-row model over a design --------------------

def vectorize_signature(params):
    a, b = params
    rows = np.array([[1.0, 0.2, 0.1], [0.5, 0.9, 0.3], [0.1, 0.4, 1.2]])

    def score(row):
        return np.log(np.sum(np.exp(a * row))) + b * row[0]

    scores = np.vectorize(score, signature="(n)->()")(rows)
    return scores.sum()


# ---- 76. a rate constant on a @property used by the right-hand side ----------------------

class Decay:
    def __init__(self, k, temperature):
        self.k = k
        self.temperature = temperature

    @property
    def k_eff(self):
        return self.k * np.exp(-1000.0 / self.temperature)

    def rhs(self, t, y):
        return -self.k_eff * y


def decay_property(params):
    model = Decay(params[0] * 10.0, params[1])
    sol = solve_ivp(model.rhs, (0, 2), [1.0], rtol=1e-10, atol=1e-12)
    return sol.y[0, -1]


# ---- 77. a convolution model: np.convolve of an active kernel with active input ---------

def convolved_response(params):
    tau, gain = params
    t = np.arange(0, 10, 0.5)
    kernel = gain * np.exp(-t / tau) / tau
    drive = np.sin(t) ** 2 + 0.1 * tau
    out = np.convolve(drive, kernel)[: t.size] * 0.5
    return np.sum(out ** 2) + np.correlate(out, kernel, mode="valid")[0]


# ---- 78. a weighted histogram of samples moved by the parameters ---------------------------

SAMPLES = np.random.default_rng(8).normal(size=200)


def weighted_histogram(params):
    shift, tilt = params
    w = np.exp(tilt * SAMPLES)
    hist, edges = np.histogram(SAMPLES, bins=8, range=(-3, 3), weights=w)
    centres = 0.5 * (edges[1:] + edges[:-1])
    return np.sum(hist * (centres - shift) ** 2) / np.sum(hist)


# ---- 79. a global plain parameter array written by the model, read by the rhs ------------

RATES = np.array([1.0, 0.5])


def _rates_rhs(t, y):
    return [-RATES[0] * y[0], RATES[0] * y[0] - RATES[1] * y[1]]


def global_rates_written(params):
    RATES[:] = params
    sol = solve_ivp(_rates_rhs, (0, 3), [1.0, 0.0], rtol=1e-10, atol=1e-12)
    return sol.y[1, -1]


# ---- 80. fixed_quad and romb of active integrands ---------------------------------------

def gauss_legendre_moments(params):
    from scipy.integrate import fixed_quad
    a, b = params
    m1, _ = fixed_quad(lambda x: x * np.exp(-a * x ** 2), 0.0, b, n=8)
    m2, _ = fixed_quad(lambda x: x ** 2 * np.exp(-a * x ** 2), 0.0, b, n=8)
    return m2 / m1


# ---- 81. np.linalg.pinv and lstsq of an active design --------------------------------

def pinv_fit(params):
    a, b = params
    t = np.linspace(0, 1, 8)
    X = np.column_stack([np.ones_like(t), np.exp(-a * t), t ** b])
    y = np.cos(3 * t)
    beta = np.linalg.pinv(X) @ y
    resid = y - X @ beta
    return resid @ resid + beta[1]


# ---- 82. logsumexp with return_sign=True over signed weights ------------------------------

def signed_logsumexp(params):
    a, b = params
    x = np.array([a, b, 0.5 * (a + b), 1.0])
    val, sign = logsumexp(x, b=np.array([1.0, -0.3, 0.8, -0.2]), return_sign=True)
    return sign * np.exp(val)


# ---- 83. a Kalman filter writing into P[:] and x[:] of preallocated plain arrays ---------

def kalman_in_place(params):
    q, r = params
    x = np.zeros(2)
    P = np.eye(2)
    F = np.array([[1.0, 1.0], [0.0, 1.0]])
    nll = 0.0
    for z in SERIES:
        x[:] = F @ x
        P[:] = F @ P @ F.T + q * np.eye(2)
        S = P[0, 0] + r
        K = P[:, 0] / S
        innov = z - x[0]
        x += K * innov
        P -= np.outer(K, P[0, :])
        nll += 0.5 * (np.log(2 * np.pi * S) + innov ** 2 / S)
    return nll


# ---- 84. an UKF measurement update in matrix form: Pxz += outer, K = Pxz @ inv(Pzz) -------

def ukf_matrix_update(params):
    sx, sz = params
    n, m = 2, 2
    x = np.array([1.0, 0.5])
    P = np.diag([sx, sx])
    kappa = 1.0
    L = np.linalg.cholesky((n + kappa) * P)
    sig = [x] + [x + L[:, i] for i in range(n)] + [x - L[:, i] for i in range(n)]
    w = np.full(2 * n + 1, 0.5 / (n + kappa))
    w[0] = kappa / (n + kappa)
    Z = [np.array([np.hypot(s[0], s[1]), np.arctan2(s[1], s[0])]) for s in sig]
    z_mean = np.sum([wi * zi for wi, zi in zip(w, Z)], axis=0)
    Pzz = sz * np.eye(m)
    Pxz = np.zeros((n, m))
    for wi, si, zi in zip(w, sig, Z):
        dz = zi - z_mean
        Pzz += wi * np.outer(dz, dz)
        Pxz += wi * np.outer(si - x, dz)
    K = Pxz @ np.linalg.inv(Pzz)
    x_new = x + K @ (np.array([1.2, 0.45]) - z_mean)
    P_new = P - K @ Pzz @ K.T
    return x_new.sum() + np.trace(P_new)


# ---- 85. einsum(optimize=True) and tensordot in a three-body contraction ------------------

def contractions(params):
    a, b = params
    T = np.arange(24, dtype=float).reshape(2, 3, 4) / 24
    u = np.array([a, b])
    v = np.array([1.0, a, b])
    w = np.linspace(0.1, 0.4, 4) * b
    e1 = np.einsum("i,ijk,j,k->", u, T, v, w, optimize=True)
    e2 = np.tensordot(np.tensordot(u, T, axes=1), w, axes=([1], [0])) @ v
    return e1 + e2 ** 2


# ---- 86. a right-hand side filling np.zeros_like(y) and np.empty, args=(dict,) -----------

def _buffered_kinetics(t, y, p):
    dydt = np.zeros_like(y)
    r1 = p["k1"] * y[0]
    r2 = p["k2"] * y[1] * max(y[0], 0.0)
    dydt[0] = -r1 - r2
    dydt[1] = r1 - r2
    dydt[2] = 2 * r2
    return dydt


def _empty_kinetics(t, y, p):
    out = np.empty(3)
    out[0] = -p["k1"] * y[0]
    out[1] = p["k1"] * y[0] - p["k2"] * y[1]
    out[2] = p["k2"] * y[1]
    return out


def buffered_rhs_dict_args(params, method="RK45"):
    p = {"k1": params[0], "k2": params[1]}
    a = solve_ivp(_buffered_kinetics, (0, 4), [1.0, 0.0, 0.0], args=(p,), method=method,
                  rtol=1e-10, atol=1e-12)
    b = solve_ivp(_empty_kinetics, (0, 4), [1.0, 0.0, 0.0], args=(p,), method="DOP853",
                  rtol=1e-10, atol=1e-12)
    return a.y[2, -1] + b.y[1, -1]


# ---- 87. AUC by the trapezoid rule over the solver's own steps (no t_eval) ---------------

def auc_over_steps(params, **options):
    ka, ke = params
    sol = solve_ivp(lambda t, y: [-ka * y[0], ka * y[0] - ke * y[1]], (0, 24), [100.0, 0.0],
                    **options)
    return np.trapezoid(sol.y[1], sol.t)


# ---- 88. RK23 with t_eval and a squared misfit, data from a list of tuples ---------------

OBS_PAIRS = [(1.0, 0.62), (2.0, 0.41), (3.0, 0.25), (5.0, 0.11)]


def rk23_misfit(params):
    k, n = params
    t_obs = [t for t, _ in OBS_PAIRS]
    c_obs = np.array([c for _, c in OBS_PAIRS])
    sol = solve_ivp(lambda t, c: -k * c ** n, (0, 5), [1.0], method="RK23", t_eval=t_obs,
                    rtol=1e-9, atol=1e-12)
    return np.sum((sol.y[0] - c_obs) ** 2)


# ============================ round four ================================================

# ---- 89. helpers that write into the caller's plain array: apply_bc(u, ...), add_source --

def apply_bc(u, left, right):
    u[0] = left
    u[-1] = right


def add_source(u, strength, where):
    u[where] += strength


def rod_with_helpers(params, n=20, steps=40):
    T_left, q = params
    u = np.zeros(n)
    dx = 1.0 / (n - 1)
    dt = 0.4 * dx ** 2
    for _ in range(steps):
        apply_bc(u, T_left, 0.0)
        lap = np.zeros(n)
        lap[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2
        u += dt * lap
        add_source(u, dt * q, slice(8, 12))
    return u.sum() * dx


# ---- 90. in-place arithmetic on views: reversed, strided, transposed ---------------------

def view_updates(params):
    a, b = params
    u = np.linspace(0.0, 1.0, 9)
    M = np.ones((3, 4))
    for _ in range(3):
        u[::-1] += a * u
        u[1:-1][::2] *= 1 + 0.1 * b
        u /= u.sum()
        u **= 1.1
        M.T[1] += a * u[:3]
        M[:, ::-1][0] -= b * u[4:8]
    np.divide(u, 1 + a, out=u)
    return u @ u + M.sum() + M[0, 0] * M[2, 1]


# ---- 91. running maxima and ufunc.accumulate; np.maximum.accumulate of a drawdown --------

def drawdown(params):
    mu, vol = params
    shocks = np.sin(np.arange(30) * 1.3)
    path = np.cumsum(mu + vol * shocks)
    peak = np.maximum.accumulate(path)
    growth = np.multiply.accumulate(1 + 0.01 * (mu + vol * shocks))
    return np.max(peak - path) + growth[-1]


# ---- 92. np.putmask, np.place, np.copyto(where=), np.put with active values ---------------

def masked_writes(params):
    a, b = params
    x = np.linspace(-1, 1, 9)
    y = np.zeros(9)
    np.copyto(y, a * x ** 2, where=x > 0)
    z = x.copy()
    np.putmask(z, x < 0, b * x)
    w = np.ones(9)
    np.place(w, np.abs(x) < 0.3, [a, b])
    v = np.zeros(9)
    np.put(v, [1, 5, 7], [a, b, a * b])
    return y @ z + w.sum() * v.sum()


# ---- 93. sorting and quantiles of active samples: np.sort, np.quantile, np.percentile -----

def robust_summary(params):
    loc, scale = params
    z = np.array([-1.2, 0.3, 2.5, -0.1, 0.8, 1.7, -2.2, 0.05])
    s = loc + scale * z ** 3
    srt = np.sort(s)
    trimmed = srt[1:-1].mean()
    iqr = np.percentile(s, 75) - np.percentile(s, 25)
    med = np.quantile(s, 0.5)
    order = np.argsort(s)
    return trimmed + iqr + med + s[order[-1]]


# ---- 94. NaN in the data: np.nansum, np.nanmean, np.nan_to_num around active weights ----

NAN_DATA = np.array([1.0, np.nan, 2.5, 3.1, np.nan, 0.7])


def nan_aware(params):
    a, b = params
    w = np.exp(a * np.arange(6) / 6)
    weighted = w * NAN_DATA
    return np.nansum(weighted) / np.nansum(w * ~np.isnan(NAN_DATA)) + np.nanmean(b * NAN_DATA) \
        + np.sum(np.nan_to_num(b * NAN_DATA, nan=0.0) ** 2)


# ---- 95. a Markov chain's n-step distribution by np.linalg.matrix_power -------------------

def markov_power(params):
    p_stay, q = params
    P = np.array([[p_stay, 1 - p_stay, 0.0],
                  [q, 1 - 2 * q, q],
                  [0.0, 1 - p_stay, p_stay]])
    pi = np.array([1.0, 0.0, 0.0]) @ np.linalg.matrix_power(P, 7)
    return pi @ np.array([0.0, 1.0, 4.0])


# ---- 96. savgol_filter, uniform_filter1d and fftconvolve on an active signal ---------------

def smoothed_peak(params):
    from scipy.ndimage import uniform_filter1d
    from scipy.signal import fftconvolve, savgol_filter
    amp, width = params
    t = np.linspace(-3, 3, 61)
    sig = amp * np.exp(-t ** 2 / (2 * width ** 2)) + 0.05 * np.sin(7 * t)
    sg = savgol_filter(sig, 9, 3)
    box = uniform_filter1d(sig, size=5, mode="nearest")
    conv = fftconvolve(sig, np.exp(-np.linspace(-1, 1, 11) ** 2), mode="same")
    return sg.max() + box[30] + conv[25] * 0.1


# ---- 97. np.gradient with edge_order=2 on a non-uniform grid, cumulative_simpson -----------

def nonuniform_gradient(params):
    from scipy.integrate import cumulative_simpson
    a, b = params
    x = np.linspace(0, 1, 15) ** 1.5
    f = np.sin(a * x) + b * x ** 2
    df = np.gradient(f, x, edge_order=2)
    F = cumulative_simpson(f, x=x, initial=0)
    return np.sum(df ** 2) * 0.01 + F[-1] + F[7]


# ---- 98. a masked array of active values (np.ma) --------------------------------------------

def masked_mean(params):
    a, b = params
    v = a * np.linspace(0, 1, 6) + b
    m = np.ma.masked_where(np.array([0, 1, 0, 0, 1, 0], dtype=bool), v)
    return m.mean() + m.sum()


# ---- 99. a linear ODE system by scipy.linalg.expm and a Lyapunov covariance ---------------

def linear_system_covariance(params):
    from scipy.linalg import expm, solve_continuous_lyapunov
    k, c = params
    A = np.array([[0.0, 1.0], [-k, -c]])
    Q = np.array([[0.0, 0.0], [0.0, 1.0]])
    Sigma = solve_continuous_lyapunov(A, -Q)
    x1 = expm(A * 1.5) @ np.array([1.0, 0.0])
    return np.trace(Sigma) + x1 @ x1


# ============================ round five: more ODE fits ====================================

# ---- 100. the flight time as a parameter: t_span=(0, tf) active, t_eval from linspace ---

def flight_time_fit(params):
    tf, k = params
    t_eval = np.linspace(0, tf, 6)
    sol = solve_ivp(lambda t, y: [-k * y[0] * y[1], k * y[0] * y[1] - 0.3 * y[1]], (0, tf),
                    [0.9, 0.1], t_eval=t_eval, rtol=1e-10, atol=1e-12)
    return np.sum(sol.y[1] ** 2) + sol.y[0, -1]


# ---- 101. an event that stops at its second occurrence (terminal=2) ------------------------

def second_crossing(params):
    omega, gamma = params

    def osc(t, y):
        return [y[1], -omega ** 2 * y[0] - gamma * y[1]]

    def through_zero(t, y):
        return y[0]
    through_zero.terminal = 2

    sol = solve_ivp(osc, (0, 20), [1.0, 0.0], events=through_zero, rtol=1e-10, atol=1e-12)
    return sol.t[-1] + sol.y[1, -1]


# ---- 102. BDF with an event and t_eval; the state at the event -----------------------------

def bdf_event_state(params):
    k1, k2 = params

    def chem(t, c):
        return [-k1 * c[0], k1 * c[0] - k2 * c[1], k2 * c[1]]

    def product_half(t, c):
        return c[2] - 0.5
    product_half.terminal = True

    sol = solve_ivp(chem, (0, 50), [1.0, 0.0, 0.0], method="BDF", events=product_half,
                    rtol=1e-8, atol=1e-10)
    return sol.t_events[0][0] + sol.y_events[0][0][1]


# ---- 103. residuals of a fit through solve_ivp for least squares: adsim.jacobian ------------

T_FIT = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
Y_FIT = np.array([0.78, 0.61, 0.47, 0.37, 0.22])


def decay_residuals(params):
    k, y0 = params
    sol = solve_ivp(lambda t, y: -k * y, (0, 3.0), [y0], t_eval=T_FIT, rtol=1e-10, atol=1e-12)
    return sol.y[0] - Y_FIT


# ---- 104. odeint with hmax and tcrit, a forcing switched off at t = 2 ------------------------

def forced_odeint(params):
    k, F = params

    def rhs(y, t):
        forcing = F if t < 2.0 else 0.0
        return [-k * y[0] + forcing]

    t = np.linspace(0, 4, 9)
    Y = odeint(rhs, [0.0], t, hmax=0.05, tcrit=[2.0], rtol=1e-10, atol=1e-12)
    return Y[-1, 0] + Y[4, 0]


# ---- 105. a sensitivity-weighted objective: the misfit's gradient norm inside the model --

def gradient_norm_objective(params):
    import adsim

    def misfit(q):
        return np.sum(decay_residuals(q) ** 2)

    g = adsim.grad(misfit)(params)
    return misfit(params) + 0.1 * g @ g


# ---- 106. a Bratu residual for a matrix-free Newton–Krylov solver -------------------------

def bratu_residual(u, lam=2.0):
    n = u.size
    h = 1.0 / (n + 1)
    up = np.concatenate(([0.0], u, [0.0]))
    return (up[2:] - 2 * up[1:-1] + up[:-2]) / h ** 2 + lam * np.exp(u)


# ---- 107. a free energy minimised by Newton–CG with adsim's Hessian products ---------------

def landau_free_energy(x, T=0.8, J=1.0, h=0.05):
    """Mean-field free energy of a ring of spins with magnetisations
    m = tanh(x) (unconstrained for the minimiser)."""
    m = np.tanh(x)
    s = 0.5 * ((1 + m) * np.log1p(m) + (1 - m) * np.log1p(-m))
    return -J * np.sum(m * np.roll(m, 1)) - h * np.sum(m) + T * np.sum(s)


# ============================ round six: other codes scientists write ====================

# ---- 108. a truss by finite elements: K[np.ix_(dofs, dofs)] += ke, free dofs by a mask ----

TRUSS_NODES = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.5, 0.8], [1.5, 0.8]])
TRUSS_BARS = [(0, 1), (1, 2), (0, 3), (1, 3), (1, 4), (2, 4), (3, 4)]


def truss_compliance(params):
    E_chord, E_web = params
    ndof = 2 * len(TRUSS_NODES)
    K = np.zeros((ndof, ndof))
    for i, j in TRUSS_BARS:
        d = TRUSS_NODES[j] - TRUSS_NODES[i]
        L = np.linalg.norm(d)
        c, s = d / L
        EA = E_chord if abs(d[1]) < 1e-12 or i >= 3 else E_web
        k = EA / L * np.array([[c * c, c * s], [c * s, s * s]])
        ke = np.block([[k, -k], [-k, k]])
        dofs = [2 * i, 2 * i + 1, 2 * j, 2 * j + 1]
        K[np.ix_(dofs, dofs)] += ke
    fixed = np.zeros(ndof, dtype=bool)
    fixed[[0, 1, 5]] = True
    free = ~fixed
    F = np.zeros(ndof)
    F[3] = -1.0
    u = np.zeros(ndof)
    u[free] = np.linalg.solve(K[free][:, free], F[free])
    return F @ u


# ---- 109. a D2Q9 lattice Boltzmann channel: streaming by np.roll into a plain f ------------

D2Q9_C = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]])
D2Q9_W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)


def lbm_channel(params, nx=8, ny=6, steps=6):
    tau, force = params
    f = np.ones((9, ny, nx)) * D2Q9_W[:, None, None]
    for _ in range(steps):
        rho = f.sum(axis=0)
        ux = (np.einsum("i,iyx->yx", D2Q9_C[:, 0].astype(float), f) + 0.5 * force) / rho
        uy = np.einsum("i,iyx->yx", D2Q9_C[:, 1].astype(float), f) / rho
        for i in range(9):
            cu = 3 * (D2Q9_C[i, 0] * ux + D2Q9_C[i, 1] * uy)
            feq = rho * D2Q9_W[i] * (1 + cu + 0.5 * cu ** 2 - 1.5 * (ux ** 2 + uy ** 2))
            f[i] += -(f[i] - feq) / tau + 3 * D2Q9_W[i] * D2Q9_C[i, 0] * force
        for i in range(9):
            f[i] = np.roll(np.roll(f[i], D2Q9_C[i, 0], axis=1), D2Q9_C[i, 1], axis=0)
    return np.mean(ux) * 1e3


# ---- 110. Lennard-Jones in a periodic box: minimum image with np.round -------------------

LJ_POS = np.random.default_rng(4).uniform(0, 3.0, size=(10, 3))


def periodic_lj(params):
    eps, box = params
    pos = LJ_POS * box / 3.0
    dr = pos[:, None, :] - pos[None, :, :]
    dr -= box * np.round(dr / box)
    r2 = np.sum(dr ** 2, axis=-1)
    iu = np.triu_indices(len(pos), 1)
    inv6 = (1.0 / r2[iu]) ** 3
    return np.sum(4 * eps * (inv6 ** 2 - inv6))


# ---- 111. a Chebyshev collocation boundary-value problem -----------------------------------

def cheb(N):
    x = np.cos(np.pi * np.arange(N + 1) / N)
    c = np.r_[2.0, np.ones(N - 1), 2.0] * (-1) ** np.arange(N + 1)
    X = np.tile(x, (N + 1, 1)).T
    dX = X - X.T
    D = np.outer(c, 1 / c) / (dX + np.eye(N + 1))
    D -= np.diag(D.sum(axis=1))
    return D, x


def chebyshev_bvp(params, N=12):
    k, s = params
    D, x = cheb(N)
    A = D @ D - k ** 2 * np.eye(N + 1)
    A = A[1:-1, 1:-1]
    rhs = s * np.exp(x[1:-1])
    u = np.zeros(N + 1)
    u[1:-1] = np.linalg.solve(A, rhs)
    w = np.polynomial.chebyshev.chebfit(x, u, N)
    return np.polynomial.chebyshev.chebval(0.3, w) + u[N // 2]


# ---- 112. image registration: ndimage.map_coordinates of a shifted template --------------

def registration_misfit(params):
    from scipy import ndimage
    dx, dy = params
    yy, xx = np.mgrid[0:16, 0:16].astype(float)
    image = np.exp(-((xx - 8.3) ** 2 + (yy - 7.6) ** 2) / 8.0)
    template = np.exp(-((xx - 7.0) ** 2 + (yy - 8.0) ** 2) / 8.0)
    warped = ndimage.map_coordinates(image, [yy + dy, xx + dx], order=1, mode="nearest")
    return np.sum((warped - template) ** 2)


# ---- 113. Butler–Volmer: the overpotential for a current by brentq, exp of active -------

def overpotential(params):
    i0, alpha = params
    F_RT = 96485.0 / (8.314 * 298.15)

    def bv(eta, i_target):
        return i0 * (np.exp(alpha * F_RT * eta) - np.exp(-(1 - alpha) * F_RT * eta)) - i_target

    etas = [brentq(bv, -1.0, 1.0, args=(i,), xtol=1e-15) for i in (0.5, 1.0, 2.0)]
    return np.sum(etas) * 100


# ---- 114. observations interpolated from the solver's steps: np.interp(t_obs, sol.t, y) ---

def interpolated_observations(params, t_obs=(0.7, 2.2, 4.1), **options):
    a, b = params
    sol = solve_ivp(lambda t, y: [-a * y[0] + b * np.sin(t)], (0, 5), [1.0], **options)
    if "t_eval" in options:
        return np.sum(sol.y[0] ** 2)
    return np.sum(np.interp(t_obs, sol.t, sol.y[0]) ** 2)


# ---- 115. Rabi oscillations: a complex state psi' = -1j H psi by solve_ivp ------------------

def rabi_population(params):
    delta, omega = params
    H = 0.5 * np.array([[delta, omega], [omega, -delta]])
    psi0 = np.array([1.0 + 0j, 0.0 + 0j])
    sol = solve_ivp(lambda t, psi: -1j * (H @ psi), (0, 4), psi0, t_eval=np.linspace(0, 4, 9),
                    rtol=1e-10, atol=1e-12)
    P_excited = np.abs(sol.y[1]) ** 2
    return np.trapezoid(P_excited, sol.t) + P_excited[-1]
