"""Thirty-eight small scientific programs written as their authors write them,
in areas and idioms the earlier collections (programs_as_published.py,
programs_s7.py, programs_s8.py) leave out: a Hodgkin-Huxley neuron by
forward Euler with ``np.where`` guards of its removable singularities; a
worm-like polymer chain through ``np.diff``, ``np.linalg.norm(axis=1)``
and ``np.cross``; radial-basis interpolation with
``scipy.spatial.distance.cdist``; an AR(2) likelihood by
``scipy.signal.lfilter``; backward-Euler heat steps with a sparse matrix
made by ``scipy.sparse.diags`` of active diagonals; a queue simulated with
``rng.exponential(scale)`` and ``rng.uniform(low, high)`` draws of the
parameters; measurement error drawn by the legacy ``np.random.normal``
after ``np.random.seed``; LWR traffic flow by Godunov fluxes updated in
place on a plain state; a triangle spring mesh whose forces are gathered
by ``np.add.at``; a two-state protein's heat capacity from
``np.logaddexp.reduce``; quantum tunnelling through a barrier stack by
complex transfer matrices from ``from numpy import ...``; an RK4 pendulum
with ``math.pi`` and ``float()`` of plain constants; ridge regression's
validation error through L-BFGS-B; Michaelis-Menten kinetics in a class
whose constants the caller sets as attributes; a decay chain by
``scipy.linalg.expm``; a Gaussian process's marginal likelihood by
``cho_factor``/``cho_solve``; a Morse cluster over ``np.triu_indices``; a
1-D finite-element bar assembled with ``np.ix_``; a Hill dose-response
binomial likelihood through ``expit`` and ``gammaln``; Kepler's equation by
Newton iterations for a radial-velocity fit; a two-box climate model by
``solve_ivp`` with a dict of parameters; a windowed periodogram peak by
``np.fft.rfft``; a Ricker map's likelihood grown in a Python list; a
tight-binding ring by ``eigh``; a Cox partial likelihood by a reversed
``cumsum``; a bivariate normal through ``scipy.stats.multivariate_normal``;
cubic elasticity by ``einsum``; a drug profile by ``np.convolve``; a
natural spline by ``solve_banded``; a Markov chain's stationary law by
``eig``; a bond yield by ``brentq`` with ``args``; and a particle filter
resampling with ``rng.choice(n, p=w)``; a projectile's range at a
``solve_ivp`` terminal event; a spring chain assembled by
``scipy.sparse.coo_matrix`` from lists; a Wasserstein distance by
``np.sort`` of draws of the parameters; a value at risk by
``np.percentile``; and explicit diffusion by ``u += ...`` on a plain state
whose interior a named view holds.

None of them knows about adsim; tests/numpy/test_user_programs_s9.py
differentiates them as they are."""
import math

from numpy import array, dot, exp, sqrt, eye
import numpy as np
import scipy.sparse as sp
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve, expm
from scipy.optimize import minimize
from scipy.signal import lfilter
from scipy.sparse.linalg import spsolve
from scipy.spatial.distance import cdist
from scipy.special import expit, gammaln


# ---- 1. Hodgkin-Huxley neuron, forward Euler ---------------------------------------------

def alpha_n(V):
    x = V + 55.0
    safe = np.where(np.abs(x) < 1e-7, 1.0, x)
    return np.where(np.abs(x) < 1e-7, 0.1, 0.01 * safe / (1.0 - np.exp(-0.1 * safe)))


def beta_n(V):
    return 0.125 * np.exp(-(V + 65.0) / 80.0)


def alpha_m(V):
    x = V + 40.0
    safe = np.where(np.abs(x) < 1e-7, 1.0, x)
    return np.where(np.abs(x) < 1e-7, 1.0, 0.1 * safe / (1.0 - np.exp(-0.1 * safe)))


def beta_m(V):
    return 4.0 * np.exp(-(V + 65.0) / 18.0)


def alpha_h(V):
    return 0.07 * np.exp(-(V + 65.0) / 20.0)


def beta_h(V):
    return 1.0 / (1.0 + np.exp(-(V + 35.0) / 10.0))


def hh_mean_voltage(conductances, I_ext=4.0, T=8.0, dt=0.01):
    """Mean membrane potential (mV) over T ms of a sub-threshold current step,
    from the maximal sodium and potassium conductances (mS/cm^2)."""
    g_Na, g_K = conductances
    g_L, E_Na, E_K, E_L, C_m = 0.3, 50.0, -77.0, -54.387, 1.0
    V = -65.0
    m = alpha_m(V) / (alpha_m(V) + beta_m(V))
    h = alpha_h(V) / (alpha_h(V) + beta_h(V))
    n = alpha_n(V) / (alpha_n(V) + beta_n(V))
    trace = []
    for _ in range(int(T / dt)):
        I_Na = g_Na * m ** 3 * h * (V - E_Na)
        I_K = g_K * n ** 4 * (V - E_K)
        I_L = g_L * (V - E_L)
        V = V + dt * (I_ext - I_Na - I_K - I_L) / C_m
        m = m + dt * (alpha_m(V) * (1 - m) - beta_m(V) * m)
        h = h + dt * (alpha_h(V) * (1 - h) - beta_h(V) * h)
        n = n + dt * (alpha_n(V) * (1 - n) - beta_n(V) * n)
        trace.append(V)
    return np.mean(trace)


# ---- 2. a worm-like chain: bending and torsion of a polymer ------------------------------

def chain_energy(coords, kb=2.0, kt=0.5, ks=100.0, b0=1.0):
    """Stretching, bending and torsion energy of a chain of beads (a flat
    array of 3-D coordinates): bonds from np.diff, lengths from
    np.linalg.norm(axis=1), dihedral angles from np.cross."""
    r = coords.reshape(-1, 3)
    bonds = np.diff(r, axis=0)
    lengths = np.linalg.norm(bonds, axis=1)
    u = bonds / lengths[:, None]
    cos_theta = np.sum(u[1:] * u[:-1], axis=1)
    n1 = np.cross(bonds[:-2], bonds[1:-1])
    n2 = np.cross(bonds[1:-1], bonds[2:])
    m1 = np.cross(n1, u[1:-1])
    x = np.sum(n1 * n2, axis=1)
    y = np.sum(m1 * n2, axis=1)
    phi = np.arctan2(y, x)
    return (0.5 * ks * np.sum((lengths - b0) ** 2) + kb * np.sum(1.0 - cos_theta)
            + kt * np.sum(1.0 + np.cos(3 * phi)))


CHAIN = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [1.6, 0.9, 0.2], [2.5, 1.2, 0.7],
                  [3.1, 2.0, 0.4], [4.0, 2.3, 0.9]]).ravel()


# ---- 3. radial-basis interpolation with cdist --------------------------------------------

SITES = np.array([[0.1, 0.2], [0.8, 0.1], [0.5, 0.5], [0.2, 0.9], [0.9, 0.8], [0.4, 0.3]])
QUERY = np.array([[0.3, 0.4], [0.7, 0.6], [0.5, 0.9]])


def rbf_prediction(params):
    """Sum of a multiquadric RBF interpolant at three query points, from the
    shape parameter and the six measured values."""
    eps, values = params[0], params[1:]
    phi = np.sqrt(1.0 + (eps * cdist(SITES, SITES)) ** 2)
    weights = np.linalg.solve(phi, values)
    phi_q = np.sqrt(1.0 + (eps * cdist(QUERY, SITES, "euclidean")) ** 2)
    return np.sum(phi_q @ weights)


# ---- 4. an AR(2) likelihood by lfilter ---------------------------------------------------

SERIES = np.array([0.3, 0.8, 1.1, 0.6, -0.2, -0.9, -1.1, -0.4, 0.5, 1.2, 1.0, 0.2, -0.6,
                   -1.0, -0.7, 0.1, 0.9, 1.3, 0.8, -0.1])


def ar2_conditional_loglik(theta):
    """Conditional Gaussian log-likelihood of an AR(2) process: residuals as
    the series filtered by the AR polynomial (lfilter with the parameters in
    the numerator), theta = (phi1, phi2, log sigma)."""
    phi1, phi2, log_sigma = theta
    sigma2 = np.exp(2 * log_sigma)
    eps = lfilter([1.0, -phi1, -phi2], [1.0], SERIES)[2:]
    n = len(eps)
    return -0.5 * n * np.log(2 * np.pi * sigma2) - 0.5 * np.sum(eps ** 2) / sigma2


def ar1_smoothed_mean(params):
    """Mean of an exponentially smoothed series: lfilter with the parameter
    in the denominator (a recursive filter), params = (alpha, gain)."""
    alpha, gain = params
    return np.mean(lfilter([gain * (1 - alpha)], [1.0, -alpha], SERIES) ** 2)


# ---- 5. backward-Euler heat steps with sparse diagonals ----------------------------------

def rod_after_implicit_steps(params, n=20, steps=10, dt=0.01):
    """Heat at the middle of a rod after backward-Euler steps, conductivity
    and a loss coefficient (k, h) entering the diagonals of a sparse matrix
    built by scipy.sparse.diags; each step an spsolve."""
    k, h = params
    dx = 1.0 / (n + 1)
    r = k * dt / dx ** 2
    A = sp.diags([-r * np.ones(n - 1), (1 + 2 * r + h * dt) * np.ones(n), -r * np.ones(n - 1)],
                 [-1, 0, 1], format="csc")
    x = np.linspace(dx, 1 - dx, n)
    u = np.exp(-50 * (x - 0.4) ** 2)
    for _ in range(steps):
        u = spsolve(A, u)
    return u[n // 2]


# ---- 6. a single-server queue with draws from the parameters (Generator) -----------------

def mean_waiting_time(params, n_customers=40, seed=0):
    """Mean waiting time of a single-server queue (Lindley's recursion), the
    inter-arrival times exponential with the given mean and the service
    times uniform between the given bounds, common random numbers."""
    mean_arrival, service_lo, service_hi = params
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(mean_arrival, n_customers)
    service = rng.uniform(service_lo, service_hi, size=n_customers)
    wait = 0.0
    total = 0.0
    for i in range(1, n_customers):
        wait = np.maximum(0.0, wait + service[i - 1] - gaps[i])
        total = total + wait
    return total / (n_customers - 1)


# ---- 7. measurement error by the legacy np.random functions ------------------------------

def calibration_bias(params, n=30):
    """Bias of a least-squares slope when the predictor is measured with
    normal error of a given spread, legacy seeded draws of the parameters:
    the true predictor is np.random.normal(mu, tau)."""
    mu, tau, noise = params
    np.random.seed(123)
    x_true = np.random.normal(mu, tau, n)
    x_obs = x_true + np.random.normal(0.0, noise, n)
    y = 2.0 * x_true + 0.1 * np.random.standard_normal(n)
    xc = x_obs - x_obs.mean()
    slope = np.sum(xc * (y - y.mean())) / np.sum(xc ** 2)
    return slope - 2.0


# ---- 8. LWR traffic flow by Godunov fluxes, in place on a plain state --------------------

def greenshields(rho, vmax, rho_max):
    return vmax * rho * (1 - rho / rho_max)


def traffic_delay(params, nx=40, nt=30, L=1.0):
    """Vehicles left on the road after a queue discharges: the density is a
    plain array updated in place, h[1:-1] -= dt/dx (F[1:] - F[:-1]), with
    Godunov fluxes of Greenshields' law with free speed vmax and jam
    density rho_max."""
    vmax, rho_max = params
    dx = L / nx
    dt = 0.4 * dx / 1.0
    x = (np.arange(nx) + 0.5) * dx
    rho = np.where(x < 0.5, 0.6, 0.1)
    rho_crit = 0.5 * rho_max
    for _ in range(nt):
        left, right = rho[:-1], rho[1:]
        demand = np.where(left < rho_crit, greenshields(left, vmax, rho_max),
                          0.25 * vmax * rho_max)
        supply = np.where(right > rho_crit, greenshields(right, vmax, rho_max),
                          0.25 * vmax * rho_max)
        F = np.minimum(demand, supply)
        rho[1:-1] -= dt / dx * (F[1:] - F[:-1])
    return np.sum(rho[x > 0.5]) * dx


# ---- 9. a triangle spring mesh relaxed under load: forces by np.add.at -------------------

def _mesh(n=4):
    xs, ys = np.meshgrid(np.arange(n, dtype=float), np.arange(n, dtype=float))
    nodes = np.column_stack([xs.ravel(), ys.ravel()])
    edges = []
    for j in range(n):
        for i in range(n):
            k = j * n + i
            if i + 1 < n:
                edges.append((k, k + 1))
            if j + 1 < n:
                edges.append((k, k + n))
            if i + 1 < n and j + 1 < n:
                edges.append((k, k + n + 1))
    return nodes, np.array(edges)


MESH_NODES, MESH_EDGES = _mesh()


def sagging_membrane(stiffness, iterations=40, step=0.02, load=0.05):
    """Mean vertical displacement of a spring mesh pinned along its bottom
    row, relaxed by gradient steps; the spring forces of all edges are
    gathered to the nodes with np.add.at. stiffness = (edge k, diagonal k)."""
    k_edge, k_diag = stiffness
    pos = MESH_NODES.copy()
    i, j = MESH_EDGES[:, 0], MESH_EDGES[:, 1]
    rest = np.linalg.norm(MESH_NODES[j] - MESH_NODES[i], axis=1)
    k = np.where(rest > 1.2, k_diag, k_edge)
    free = MESH_NODES[:, 1] > 0
    for _ in range(iterations):
        d = pos[j] - pos[i]
        length = np.linalg.norm(d, axis=1)
        f = (k * (length - rest) / length)[:, None] * d
        force = np.zeros_like(pos)
        np.add.at(force, i, f)
        np.add.at(force, j, -f)
        force[:, 1] -= load
        pos = pos + step * force * free[:, None]
    return np.mean(pos[free, 1] - MESH_NODES[free, 1])


# ---- 10. a two-state protein: heat capacity from the partition function ------------------

K_B = 0.0019872  # kcal / (mol K)
LEVELS = np.arange(6)


def unfolding_free_energy(params, T=320.0):
    """Free energy (kcal/mol) of a protein with a folded state and a ladder
    of unfolded states: dH, dS of unfolding and a spacing; log Z by
    np.logaddexp.reduce over the Boltzmann weights."""
    dH, dS, spacing = params
    energies = np.concatenate([[0.0], dH - T * dS + spacing * LEVELS])
    logZ = np.logaddexp.reduce(-energies / (K_B * T))
    return -K_B * T * logZ


# ---- 11. quantum tunnelling through a stack of barriers ----------------------------------

def interface(k1, k2):
    return 0.5 * array([[1 + k2 / k1, 1 - k2 / k1], [1 - k2 / k1, 1 + k2 / k1]])


def propagate(k, d):
    return array([[exp(1j * k * d), 0], [0, exp(-1j * k * d)]])


def transmission(widths, E=0.8, V=(1.0, 0.0, 1.0)):
    """Transmission probability of a particle of energy E (units hbar = 2m =
    1) through barriers of height V[i] and widths[i]; wavenumbers complex in
    the barriers (sqrt of a complex number), transfer matrices by dot."""
    k0 = sqrt(E + 0j)
    M = eye(2, dtype=complex)
    k_prev = k0
    for V_i, w in zip(V, widths):
        k_i = sqrt(E - V_i + 0j)
        M = dot(M, interface(k_prev, k_i))
        M = dot(M, propagate(k_i, w))
        k_prev = k_i
    M = dot(M, interface(k_prev, k0))
    return 1.0 / np.abs(M[0, 0]) ** 2


# ---- 12. a pendulum by hand-written RK4, math constants and float() ----------------------

def pendulum_energy_drift(params, n_periods=2):
    """Angle after two small-angle periods of a damped pendulum from its
    length and damping, by RK4 with a step count from float() and math.pi
    on plain constants."""
    L, c = params
    g = float(9.81)
    T0 = 2 * math.pi * math.sqrt(1.0 / g)
    n = int(n_periods * T0 / float(0.01))
    dt = n_periods * T0 / n

    def f(y):
        return np.array([y[1], -g / L * np.sin(y[0]) - c * y[1]])

    y = np.array([math.radians(20.0), 0.0])
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[0]


# ---- 13. ridge regression's validation error through L-BFGS-B ----------------------------

_rng = np.random.default_rng(7)
X_TRAIN = _rng.standard_normal((25, 4))
Y_TRAIN = X_TRAIN @ np.array([1.0, -0.5, 0.0, 2.0]) + 0.3 * _rng.standard_normal(25)
X_VALID = _rng.standard_normal((10, 4))
Y_VALID = X_VALID @ np.array([1.0, -0.5, 0.0, 2.0]) + 0.3 * _rng.standard_normal(10)


def validation_mse(log_lambda):
    """Validation error of ridge weights found by scipy.optimize.minimize
    (L-BFGS-B with the analytic gradient) at regularisation exp(log_lambda)."""
    lam = np.exp(log_lambda)

    def loss(w):
        r = X_TRAIN @ w - Y_TRAIN
        return 0.5 * r @ r + 0.5 * lam * w @ w

    def grad(w):
        return X_TRAIN.T @ (X_TRAIN @ w - Y_TRAIN) + lam * w

    res = minimize(loss, np.zeros(4), jac=grad, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 500})
    return np.mean((X_VALID @ res.x - Y_VALID) ** 2)


# ---- 14. Michaelis-Menten kinetics in a class --------------------------------------------

class EnzymeAssay:
    """Substrate depletion in a batch assay; the caller sets the kinetic
    constants as attributes before simulating."""

    def __init__(self, S0=5.0, dt=0.05, n_steps=100):
        self.S0 = S0
        self.dt = dt
        self.n_steps = n_steps
        self.Vmax = 1.0
        self.Km = 1.0
        self.Ki = 10.0

    def rate(self, S):
        return self.Vmax * S / (self.Km + S + S ** 2 / self.Ki)

    def simulate(self):
        S = [self.S0]
        for _ in range(self.n_steps):
            S.append(S[-1] - self.dt * self.rate(S[-1]))
        return np.array(S)


ASSAY = EnzymeAssay()
ASSAY_TIMES = np.arange(0, 101, 20)
ASSAY_DATA = np.array([5.0, 4.1, 3.25, 2.45, 1.75, 1.15])


def assay_misfit(theta):
    """Sum of squares between simulated and measured substrate from
    (Vmax, Km, Ki) written onto the model object."""
    ASSAY.Vmax, ASSAY.Km, ASSAY.Ki = theta
    S = ASSAY.simulate()
    return np.sum((S[ASSAY_TIMES] - ASSAY_DATA) ** 2)


# ---- 15. a radioactive decay chain by the matrix exponential -----------------------------

def daughter_activity(log_half_lives, t=3.0):
    """Activity of the last member of a three-member decay chain at time t
    from the log half-lives, N(t) = expm(A t) N0 with the Bateman matrix."""
    lam = np.log(2) / np.exp(log_half_lives)
    A = np.diag(-lam) + np.diag(lam[:-1], -1)
    N = expm(A * t) @ np.array([1.0, 0.0, 0.0])
    return lam[-1] * N[-1]


# ---- 16. a Gaussian process: log marginal likelihood by Cholesky -------------------------

GP_X = np.array([[0.0], [0.4], [1.1], [1.7], [2.3], [3.0], [3.6]])
GP_Y = np.array([0.1, 0.5, 0.9, 1.0, 0.7, 0.1, -0.4])


def gp_log_marginal(log_params):
    """Log marginal likelihood of a squared-exponential GP (Rasmussen and
    Williams eq. 2.30) from log amplitude, length scale and noise."""
    amp, ell, noise = np.exp(log_params)
    sq = cdist(GP_X, GP_X, "sqeuclidean")
    K = amp ** 2 * np.exp(-0.5 * sq / ell ** 2) + noise ** 2 * np.eye(len(GP_X))
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), GP_Y)
    return (-0.5 * GP_Y @ alpha - np.sum(np.log(np.diag(c)))
            - 0.5 * len(GP_X) * np.log(2 * np.pi))


# ---- 17. a Morse cluster over the upper-triangle pairs -----------------------------------

def morse_energy(x, D=1.0, a=1.5, r0=1.1):
    """Morse energy of a cluster of atoms (flat coordinates), the pairs taken
    with np.triu_indices on the distance matrix."""
    pos = x.reshape(-1, 3)
    n = len(pos)
    diff = pos[:, None, :] - pos[None, :, :]
    i, j = np.triu_indices(n, k=1)
    r = np.sqrt(np.sum(diff[i, j] ** 2, axis=-1))
    return np.sum(D * (1 - np.exp(-a * (r - r0))) ** 2 - D)


CLUSTER = np.array([[0.0, 0.0, 0.0], [1.1, 0.0, 0.1], [0.5, 0.95, -0.1],
                    [0.55, 0.3, 0.9], [1.4, 1.0, 0.7]]).ravel()


# ---- 18. a 1-D finite-element bar assembled with np.ix_ ----------------------------------

def bar_tip_displacement(E_elements, L=1.0, area=1e-4, P=1000.0):
    """Tip displacement of a bar fixed at one end with an end load, one
    Young's modulus per element, the global stiffness matrix assembled in
    place with K[np.ix_(dofs, dofs)] += k_e."""
    n_el = len(E_elements)
    le = L / n_el
    K = np.zeros((n_el + 1, n_el + 1))
    for e in range(n_el):
        ke = E_elements[e] * area / le * np.array([[1.0, -1.0], [-1.0, 1.0]])
        dofs = [e, e + 1]
        K[np.ix_(dofs, dofs)] += ke
    F = np.zeros(n_el + 1)
    F[-1] = P
    u = np.zeros(n_el + 1)
    u[1:] = np.linalg.solve(K[1:, 1:], F[1:])
    return u[-1] * 1e3


# ---- 19. a Hill dose-response: binomial likelihood ---------------------------------------

DOSES = np.array([0.1, 0.3, 1.0, 3.0, 10.0, 30.0])
N_ANIMALS = np.array([20, 20, 20, 20, 20, 20])
RESPONDERS = np.array([1, 3, 6, 12, 17, 19])


def hill_loglik(theta):
    """Binomial log-likelihood of responders, the probability a Hill curve
    expit(n (log d - log EC50)), theta = (log EC50, n); the binomial
    coefficient by gammaln."""
    log_ec50, hill = theta
    p = expit(hill * (np.log(DOSES) - log_ec50))
    log_choose = gammaln(N_ANIMALS + 1) - gammaln(RESPONDERS + 1) - gammaln(N_ANIMALS - RESPONDERS + 1)
    return np.sum(log_choose + RESPONDERS * np.log(p) + (N_ANIMALS - RESPONDERS) * np.log1p(-p))


# ---- 20. Kepler's equation by Newton: a radial-velocity fit ------------------------------

RV_TIMES = np.linspace(0.0, 10.0, 12)
RV_DATA = np.array([12.0, 30.1, 41.5, 35.0, 15.2, -8.8, -27.0, -36.4, -31.0, -14.1, 8.5, 28.8])


def solve_kepler(M, e, tol=1e-12):
    E = M.copy()
    for _ in range(50):
        dE = (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
        E = E - dE
        if np.max(np.abs(dE)) < tol:
            break
    return E


def rv_chi2(theta):
    """Chi-square of a Keplerian radial-velocity curve, theta = (period,
    semi-amplitude K, eccentricity, argument of periastron)."""
    P, K, e, omega = theta
    M = 2 * np.pi * RV_TIMES / P
    E = solve_kepler(M, e)
    nu = 2 * np.arctan2(np.sqrt(1 + e) * np.sin(E / 2), np.sqrt(1 - e) * np.cos(E / 2))
    model = K * (np.cos(nu + omega) + e * np.cos(omega))
    return np.sum((model - RV_DATA) ** 2 / 2.0 ** 2)


# ---- 21. a two-box energy-balance climate model, a dict of parameters --------------------

CLIMATE = {"C": 8.0, "C_deep": 100.0, "lam": 1.3, "gamma": 0.7, "F2x": 3.9}


def two_box(t, T, p):
    forcing = p["F2x"] * np.minimum(t / 70.0, 1.0)
    Ts, Td = T
    dTs = (forcing - p["lam"] * Ts - p["gamma"] * (Ts - Td)) / p["C"]
    dTd = p["gamma"] * (Ts - Td) / p["C_deep"]
    return [dTs, dTd]


def transient_warming(theta, years=100.0):
    """Surface warming after `years` of a forcing ramp, from the feedback
    parameter and ocean heat uptake (lam, gamma) put into a dict."""
    p = dict(CLIMATE)
    p["lam"], p["gamma"] = theta
    sol = solve_ivp(two_box, (0.0, years), [0.0, 0.0], args=(p,), rtol=1e-10, atol=1e-10,
                    t_eval=[years])
    return sol.y[0, -1]


# ---- 22. a windowed periodogram: power at the peak frequency -----------------------------

def windowed_peak_power(params, n=64, fs=16.0):
    """Power of a damped sinusoid (frequency, decay rate) at the bin nearest
    to 3 Hz of a Hann-windowed periodogram by np.fft.rfft."""
    freq, decay = params
    t = np.arange(n) / fs
    signal = np.exp(-decay * t) * np.sin(2 * np.pi * freq * t)
    window = np.hanning(n)
    spectrum = np.fft.rfft(signal * window)
    power = np.abs(spectrum) ** 2 / np.sum(window ** 2)
    bins = np.fft.rfftfreq(n, 1 / fs)
    return power[np.argmin(np.abs(bins - 3.0))]


# ---- 23. a Ricker map: likelihood of a population series ---------------------------------

COUNTS = np.array([12, 20, 31, 38, 29, 35, 33, 30, 36, 31])


def ricker_nll(theta):
    """Poisson negative log-likelihood of counts from a deterministic Ricker
    map, the trajectory grown in a Python list, theta = (log r, K)."""
    r, K = np.exp(theta[0]), theta[1]
    N = [10.0]
    for _ in range(len(COUNTS) - 1):
        N.append(N[-1] * np.exp(r * (1 - N[-1] / K)))
    N = np.array(N)
    return -np.sum(COUNTS * np.log(N) - N - gammaln(COUNTS + 1))


# ---- 24. tight-binding chain: band energy from eigh --------------------------------------

def band_energy(hoppings, n_electrons=4, onsite=0.1):
    """Sum of the lowest occupied eigenvalues (two electrons per level) of a
    six-site tight-binding ring with alternating hoppings (t1, t2)."""
    t1, t2 = hoppings
    n = 6
    H = onsite * np.eye(n)
    for i in range(n):
        t = t1 if i % 2 == 0 else t2
        H[i, (i + 1) % n] = -t
        H[(i + 1) % n, i] = -t
    eps = np.linalg.eigh(H)[0]
    return 2 * np.sum(eps[:n_electrons // 2])


# ---- 25. Cox proportional hazards: partial likelihood by a reversed cumsum ---------------

SURV_TIME = np.array([2.0, 3.0, 5.0, 7.0, 8.0, 11.0, 13.0, 17.0])
SURV_EVENT = np.array([1, 1, 0, 1, 1, 0, 1, 1])
SURV_X = np.array([[0.5, 1.0], [1.2, 0.0], [0.3, 1.0], [0.8, 0.0], [1.5, 1.0], [0.1, 0.0],
                   [0.9, 1.0], [0.4, 0.0]])


def cox_partial_loglik(beta):
    """Breslow partial log-likelihood (no ties), the risk-set sums as a
    cumulative sum over the reversed, time-ordered linear predictors."""
    order = np.argsort(SURV_TIME)
    eta = SURV_X[order] @ beta
    risk = np.log(np.cumsum(np.exp(eta)[::-1])[::-1])
    return np.sum((eta - risk)[SURV_EVENT[order] == 1])


# ---- 26. a bivariate normal model through scipy.stats.multivariate_normal ----------------

PAIRS = np.array([[0.2, 1.1], [0.8, 1.9], [-0.3, 0.4], [1.1, 2.2], [0.5, 1.0]])


def bivariate_loglik(theta):
    """Log-likelihood of paired measurements, theta = (mu1, mu2, log s1,
    log s2, atanh rho)."""
    mu = theta[:2]
    s = np.exp(theta[2:4])
    rho = np.tanh(theta[4])
    cov = np.array([[s[0] ** 2, rho * s[0] * s[1]], [rho * s[0] * s[1], s[1] ** 2]])
    from scipy.stats import multivariate_normal
    return np.sum(multivariate_normal.logpdf(PAIRS, mean=mu, cov=cov))


# ---- 27. anisotropic elasticity: strain energy by einsum ---------------------------------

def strain_energy_density(moduli, strain=np.array([[1e-3, 2e-4, 0.0], [2e-4, -5e-4, 1e-4],
                                                   [0.0, 1e-4, 2e-4]])):
    """0.5 C_ijkl e_ij e_kl for a cubic crystal with (C11, C12, C44) in GPa,
    the stiffness tensor built index by index."""
    C11, C12, C44 = moduli
    d = np.eye(3)
    C = np.zeros((3, 3, 3, 3))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                for l in range(3):
                    C[i, j, k, l] = (C12 * d[i, j] * d[k, l]
                                     + C44 * (d[i, k] * d[j, l] + d[i, l] * d[j, k])
                                     + (C11 - C12 - 2 * C44) * d[i, j] * d[k, l] * d[i, k])
    return 0.5 * np.einsum("ijkl,ij,kl->", C, strain, strain) * 1e6


# ---- 28. drug concentration by convolving the input with the impulse response ------------

def peak_concentration(params, dt=0.25, n=48):
    """Largest concentration of a one-compartment model with first-order
    absorption given as an infusion profile convolved (np.convolve) with
    the unit impulse response; params = (ka, ke, V)."""
    ka, ke, V = params
    t = np.arange(n) * dt
    infusion = np.where(t < 2.0, 50.0, 0.0)
    impulse = ka / (V * (ka - ke)) * (np.exp(-ke * t) - np.exp(-ka * t))
    conc = np.convolve(infusion, impulse)[:n] * dt
    return np.max(conc)


# ---- 29. a natural cubic spline by hand with solve_banded --------------------------------

from scipy.linalg import solve_banded

KNOTS = np.array([0.0, 0.5, 1.2, 2.0, 2.6, 3.5])


def spline_length(values, n_eval=40):
    """Arc length of a natural cubic spline through (KNOTS, values), its
    second derivatives from the tridiagonal system by solve_banded."""
    h = np.diff(KNOTS)
    n = len(KNOTS)
    ab = np.zeros((3, n - 2))
    ab[0, 1:] = h[1:-1]
    ab[1, :] = 2 * (h[:-1] + h[1:])
    ab[2, :-1] = h[1:-1]
    rhs = 6 * (np.diff(values[1:]) / h[1:] - np.diff(values[:-1]) / h[:-1])
    M = np.concatenate([[0.0], solve_banded((1, 1), ab, rhs), [0.0]])
    x = np.linspace(KNOTS[0], KNOTS[-1] - 1e-9, n_eval)
    i = np.searchsorted(KNOTS, x, side="right") - 1
    a, b = KNOTS[i + 1] - x, x - KNOTS[i]
    slope = (-M[i] * a ** 2 / 2 + M[i + 1] * b ** 2 / 2 + values[i + 1] - values[i]) / h[i] \
        - (M[i + 1] - M[i]) * h[i] / 6
    return np.trapezoid(np.sqrt(1 + slope ** 2), x)


# ---- 30. a Markov chain's stationary distribution by eig ---------------------------------

def long_run_cost(logits, costs=np.array([1.0, 4.0, 2.5])):
    """Expected cost under the stationary distribution of a 3-state chain
    whose rows are softmaxes of the logits, the eigenvector of P.T for the
    eigenvalue nearest to one (numpy.linalg.eig, complex results)."""
    L = logits.reshape(3, 3)
    P = np.exp(L) / np.sum(np.exp(L), axis=1, keepdims=True)
    w, v = np.linalg.eig(P.T)
    k = np.argmin(np.abs(w - 1.0))
    pi = np.real(v[:, k])
    pi = pi / np.sum(pi)
    return pi @ costs


# ---- 31. a bond's yield by brentq with args ----------------------------------------------

from scipy.optimize import brentq


def bond_yield(coupon_and_price, years=5):
    """Yield to maturity of an annual-coupon bond from its coupon rate and
    price (per 100 face), the root of the price equation by brentq."""
    coupon, price = coupon_and_price

    def pv(y, c, p):
        t = np.arange(1, years + 1)
        return np.sum(100 * c / (1 + y) ** t) + 100 / (1 + y) ** years - p

    return brentq(pv, -0.5, 1.0, args=(coupon, price), xtol=1e-14)


# ---- 32. a bootstrap particle filter: log-likelihood with resampling ---------------------

OBS = np.array([0.4, 0.9, 1.3, 1.1, 0.6, 0.2, -0.1, 0.3])


def particle_loglik(theta, n=64):
    """Log-likelihood estimate of an AR(1) state-space model by a bootstrap
    particle filter with multinomial resampling (rng.choice with the
    normalised weights), theta = (phi, log q, log r)."""
    phi, q, r = theta[0], np.exp(theta[1]), np.exp(theta[2])
    rng = np.random.default_rng(1)
    x = rng.normal(0.0, 1.0, n)
    ll = 0.0
    for y in OBS:
        x = phi * x + np.sqrt(q) * rng.standard_normal(n)
        logw = -0.5 * (y - x) ** 2 / r - 0.5 * np.log(2 * np.pi * r)
        m = np.max(logw)
        w = np.exp(logw - m)
        ll += m + np.log(np.mean(w))
        idx = rng.choice(n, size=n, p=w / np.sum(w))
        x = x[idx]
    return ll


# ---- 33. a projectile with drag: range at the ground-hit event ---------------------------

def projectile_range(launch, drag=0.1, g=9.81):
    """Horizontal distance where a projectile with linear drag comes down,
    from launch speed and angle: solve_ivp with a terminal event."""
    v0, angle = launch

    def rhs(t, y):
        return [y[2], y[3], -drag * y[2], -g - drag * y[3]]

    def ground(t, y):
        return y[1]
    ground.terminal = True
    ground.direction = -1
    sol = solve_ivp(rhs, (0.0, 10.0), [0.0, 0.0, v0 * np.cos(angle), v0 * np.sin(angle)],
                    events=ground, rtol=1e-10, atol=1e-10)
    return sol.y_events[0][0][0]


# ---- 34. a bar of springs assembled as a sparse COO matrix -------------------------------

def spring_chain_tip(k, load=0.1):
    """Tip displacement of a chain of springs fixed at one end under equal
    nodal loads, the stiffness assembled from Python lists of (value, row,
    column) triplets into scipy.sparse.coo_matrix."""
    n = len(k)
    rows, cols, vals = [], [], []
    for e in range(n):
        for a in range(2):
            for b in range(2):
                rows.append(e + a)
                cols.append(e + b)
                vals.append(k[e] if a == b else -k[e])
    K = sp.coo_matrix((vals, (rows, cols)), shape=(n + 1, n + 1)).tocsr()
    f = np.full(n + 1, load)
    u = spsolve(K[1:, 1:].tocsc(), f[1:])
    return u[-1]


# ---- 35. the 1-D Wasserstein distance between samples by sorting -------------------------

def wasserstein_to_standard(params, n=50):
    """W1 distance between n draws of N(mu, s) and n standard normal draws
    (common random numbers), the optimal coupling by sorting both."""
    mu, s = params
    rng = np.random.default_rng(3)
    a = np.sort(rng.normal(mu, s, n))
    b = np.sort(rng.standard_normal(n))
    return np.mean(np.abs(a - b))


# ---- 36. value at risk of a portfolio of two risk factors by np.percentile ---------------

def value_at_risk(exposures, level=95):
    """Monte Carlo 95 % value at risk of losses from a normal and a
    heavy-tailed (Student t) factor with the given exposures."""
    rng = np.random.default_rng(0)
    losses = exposures[0] * rng.standard_normal(200) + exposures[1] * rng.standard_t(4, 200)
    return np.percentile(losses, level)


# ---- 37. explicit diffusion: u += ... with the interior held as a named view -------------

def diffused_interior(params, n=12, steps=5):
    """Interior heat content after explicit steps of diffusion with decay,
    the state a plain array updated by `u += ...` while `interior` (a view
    of it) is read at the end."""
    D, k = params
    u = np.cos(np.linspace(0.0, 3.0, n))
    interior = u[1:-1]
    for _ in range(steps):
        u += 0.1 * D * (np.roll(u, 1) - 2 * u + np.roll(u, -1)) - 0.05 * k * u
    return np.sum(interior ** 2)
