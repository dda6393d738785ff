"""Forty-odd small scientific programs written as their authors write them,
in idioms the earlier collections (programs_as_published.py, programs_s7.py
.. programs_s11.py) leave out or touch once: ``solve_ivp`` with ``args=``,
``dense_output=True`` and a terminal event, ``odeint`` with ``tfirst=True``,
``LSODA``; ``fsolve`` with ``fprime``, ``root`` on a dict of parameters,
``brentq`` for a fugacity balance, ``minimize_scalar`` with bounds,
``newton_krylov`` on a Bratu problem; ``quad`` with ``args=``;
``CubicSpline`` derivatives and integrals; a Gray-Scott step through views
of a plain padded grid (``u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]``); a Kalman
filter written with ``from numpy import array, zeros, dot, eye``; a mixture
model's EM iterations; thin-film optics with complex Snell angles filled into
``np.zeros(n) + 0j``; a steady heat problem with ``scipy.sparse.diags`` and
``spsolve``; ``math.exp``/``math.sqrt``/``math.log`` of active scalars (and
``from math import sqrt``) and Python's ``sum``/``max`` of arrays; ``np.vectorize`` with ``otypes``;
``np.apply_along_axis``; ``dtype=`` arguments; ``np.errstate`` around a
guarded division; ``np.einsum`` strings; boolean-mask stores; ``np.clip``;
sorting and order statistics; ``np.interp`` of an active table;
``scipy.special`` and ``scipy.stats`` log-densities; ``import numpy as xp``;
an equation of state in a class; pairwise forces accumulated with ``+=``
into a plain ``zeros`` array; ``cumulative_trapezoid``; a pendulum's
period by the AGM with ``from math import sqrt``; Gray-Scott on float32
grids (a refusal that must name the dtype); an antireflection coating with
Snell's law for an active complex index (``np.arcsin``); a dataclass of
parameters (built inside, and handed to ``grad``: a refusal); Mie
scattering by ``spherical_jn``/``spherical_yn``; a sparse Laplacian scaled
through ``L.data *= D``; a steady-state
Kalman filter by ``solve_discrete_are`` and a stationary covariance by
``solve_continuous_lyapunov``; an adiabatic reactor whose ``odeint``
right-hand side uses ``math.exp``; a diode with series resistance by
``scipy.special.lambertw``; a growth rate's posterior with a
``scipy.stats.truncnorm`` prior.

None of them knows about adsim; tests/numpy/test_user_programs_s12.py
differentiates them as they are."""
import math
from dataclasses import dataclass
from math import cos, radians, sqrt

import numpy as np
import numpy as xp
from numpy import array, dot, eye, log, zeros
from numpy.linalg import inv, slogdet
import scipy.linalg as sla
import scipy.sparse as sp
from scipy import special, stats
from scipy.integrate import cumulative_trapezoid, odeint, quad, solve_ivp
from scipy.interpolate import CubicSpline
from scipy.optimize import brentq, fsolve, minimize_scalar, newton_krylov, root
from scipy.sparse.linalg import spsolve
from scipy.special import logsumexp


# ---- 1. an SEIR epidemic fitted to case counts, solve_ivp with args= ---------------------------

def _seir(t, y, beta, sigma, gamma):
    S, E, I, R = y
    N = S + E + I + R
    return [-beta * S * I / N, beta * S * I / N - sigma * E, sigma * E - gamma * I, gamma * I]


SEIR_DAYS = np.arange(0.0, 30.0, 5.0)
SEIR_CASES = np.array([10.0, 21.0, 45.0, 88.0, 150.0, 210.0])


def seir_misfit(params):
    beta, gamma = params
    sol = solve_ivp(_seir, (0.0, 25.0), [990.0, 0.0, 10.0, 0.0], args=(beta, 0.4, gamma),
                    t_eval=SEIR_DAYS, rtol=1e-9, atol=1e-9)
    return np.sum((sol.y[2] - SEIR_CASES) ** 2) / 1e4


# ---- 2. a projectile with drag: time of impact by a terminal event ------------------------------

def impact_range(params):
    """Horizontal distance at which a ball with quadratic drag hits the ground."""
    v0, drag = params
    angle = math.radians(40.0)

    def rhs(t, s):
        x, y, vx, vy = s
        speed = np.sqrt(vx ** 2 + vy ** 2)
        return [vx, vy, -drag * speed * vx, -9.81 - drag * speed * vy]

    def hit_ground(t, s):
        return s[1]
    hit_ground.terminal = True
    hit_ground.direction = -1

    sol = solve_ivp(rhs, (0.0, 100.0), [0.0, 0.0, v0 * math.cos(angle), v0 * math.sin(angle)],
                    events=hit_ground, rtol=1e-10, atol=1e-10)
    return sol.y_events[0][0][0] + sol.t_events[0][0]


# ---- 3. a two-compartment drug model, AUC from the dense output ---------------------------------

def drug_auc(params):
    ka, ke = params
    sol = solve_ivp(lambda t, c: [-ka * c[0], ka * c[0] - ke * c[1]], (0.0, 24.0), [100.0, 0.0],
                    dense_output=True, rtol=1e-10, atol=1e-10)
    t = np.linspace(0.0, 24.0, 97)
    plasma = sol.sol(t)[1]
    return np.trapezoid(plasma, t) / 100.0 + sol.sol(6.0)[1] / 10.0


# ---- 4. an enzyme cascade by odeint(tfirst=True) ---------------------------------------------

def cascade(t, y, k1, k2, km):
    s, p, q = y
    v1 = k1 * s / (km + s)
    return [-v1, v1 - k2 * p, k2 * p]


def cascade_yield(params):
    k1, km = params
    t = np.linspace(0.0, 10.0, 21)
    y = odeint(cascade, [5.0, 0.0, 0.0], t, args=(k1, 0.3, km), tfirst=True, rtol=1e-11,
               atol=1e-11)
    return y[-1, 2] + 0.1 * y[10, 1]


# ---- 5. Van der Pol by LSODA ----------------------------------------------------------------

def vdp_amplitude(params):
    mu, x0 = params
    sol = solve_ivp(lambda t, z: [z[1], mu * (1 - z[0] ** 2) * z[1] - z[0]], (0.0, 5.0),
                    [x0, 0.0], method="LSODA", rtol=1e-10, atol=1e-10)
    return sol.y[0, -1] ** 2 + sol.y[1, -1] ** 2


# ---- 6. ammonia equilibrium by fsolve with an analytic Jacobian ---------------------------------

def _extent_residual(xi, K, P):
    n_n2, n_h2, n_nh3 = 1.0 - xi[0], 3.0 - 3.0 * xi[0], 2.0 * xi[0]
    total = 4.0 - 2.0 * xi[0]
    return [n_nh3 ** 2 * total ** 2 - K * P ** 2 * n_n2 * n_h2 ** 3]


def _extent_jacobian(xi, K, P):
    x = xi[0]
    d = (8 * x * (4 - 2 * x) ** 2 - 16 * x ** 2 * (4 - 2 * x)
         - K * P ** 2 * (-(3 - 3 * x) ** 3 - 9 * (1 - x) * (3 - 3 * x) ** 2))
    return [[d]]


def ammonia_conversion(params):
    K, P = params
    xi = fsolve(_extent_residual, [0.3], args=(K, P), fprime=_extent_jacobian, xtol=1e-12)
    return xi[0]


# ---- 7. a CSTR steady state by root, parameters in a dict -------------------------------------

def _cstr(y, p):
    c, T = y
    r = p["k0"] * np.exp(-p["E"] / T) * c
    return [p["q"] * (1.0 - c) - r, p["q"] * (300.0 - T) + p["dH"] * r]


def cstr_temperature(params):
    p = {"k0": params[0], "E": params[1], "q": 1.0, "dH": 200.0}
    sol = root(_cstr, [0.5, 350.0], args=(p,), method="hybr", tol=1e-13)
    return sol.x[1] / 100.0


# ---- 8. Peng-Robinson vapour pressure condition by brentq on a class --------------------------

class PengRobinson:
    R = 8.314

    def __init__(self, Tc, Pc, omega):
        self.Tc, self.Pc, self.omega = Tc, Pc, omega
        self.b = 0.07780 * self.R * Tc / Pc

    def a(self, T):
        kappa = 0.37464 + 1.54226 * self.omega - 0.26992 * self.omega ** 2
        alpha = (1 + kappa * (1 - np.sqrt(T / self.Tc))) ** 2
        return 0.45724 * self.R ** 2 * self.Tc ** 2 / self.Pc * alpha

    def pressure(self, V, T):
        return self.R * T / (V - self.b) - self.a(T) / (V ** 2 + 2 * self.b * V - self.b ** 2)


def pr_gas_volume(params, T=300.0, P=2.0e6):
    """The vapour-branch molar volume at (T, P): the root of P(V) - P above
    the spinodal, bracketed and found by brentq."""
    Tc, omega = params
    eos = PengRobinson(Tc, 4.6e6, omega)
    V = brentq(lambda v: eos.pressure(v, T) - P, 5e-4, 5e-3, xtol=1e-16, rtol=1e-14)
    return V * 1e3


# ---- 9. an optimal harvest by minimize_scalar with bounds -------------------------------------

def best_yield(params):
    """The largest sustainable yield of a logistic stock, maximised over effort."""
    r, K = params

    def neg_yield(E):
        return -(E * K * (1.0 - E / r))
    res = minimize_scalar(neg_yield, bounds=(0.0, 5.0), method="bounded",
                          options={"xatol": 1e-12})
    return -res.fun + res.x


# ---- 10. the Bratu problem by newton_krylov ------------------------------------------------

def bratu_norm(params, n=20):
    lam, bc = params
    h = 1.0 / (n + 1)

    def residual(u):
        padded = np.concatenate([[bc], u, [bc]])
        return (padded[:-2] - 2 * padded[1:-1] + padded[2:]) / h ** 2 + lam * np.exp(u)
    u = newton_krylov(residual, np.zeros(n), f_tol=1e-12)
    return np.sum(u ** 2) * h


# ---- 11. a Debye-like integral by quad with args= -------------------------------------------

def _debye_integrand(x, n, scale):
    return x ** n / np.expm1(x) * np.exp(-scale * x)


def debye_moment(params):
    theta, scale = params
    val, _ = quad(_debye_integrand, 0.0, theta, args=(3, scale), epsabs=1e-13, epsrel=1e-13)
    return val / theta ** 3


# ---- 12. CubicSpline of an active profile: slope and area ---------------------------------

def spline_features(params, z=np.linspace(0.0, 2.0, 9)):
    a, b = params
    profile = a * np.tanh(b * (z - 1.0)) + 0.1 * z ** 2
    cs = CubicSpline(z, profile, bc_type="natural")
    return cs(1.0, 1) + cs.integrate(0.2, 1.7) + cs(np.array([0.35, 1.45])).sum()


# ---- 13. Gray-Scott through views of a plain padded grid -------------------------------------

def gray_scott_mass(params, n=12, steps=15):
    """u and v are views of the interior of plain zero-padded grids; the
    reaction-diffusion step updates them in place with ``+=``."""
    F, k = params
    Du, Dv = 0.16, 0.08
    U = np.zeros((n + 2, n + 2))
    V = np.zeros((n + 2, n + 2))
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    u[:] = 1.0
    r = 3
    U[n // 2 - r:n // 2 + r, n // 2 - r:n // 2 + r] = 0.5
    V[n // 2 - r:n // 2 + r, n // 2 - r:n // 2 + r] = 0.25 + F
    for _ in range(steps):
        Lu = U[0:-2, 1:-1] + U[1:-1, 0:-2] - 4 * U[1:-1, 1:-1] + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[0:-2, 1:-1] + V[1:-1, 0:-2] - 4 * V[1:-1, 1:-1] + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = u * v * v
        u += Du * Lu - uvv + F * (1 - u)
        v += Dv * Lv + uvv - (F + k) * v
    return V.sum() + 0.5 * U[1:-1, 1:-1].mean()


# ---- 14. a constant-velocity Kalman filter, from numpy import ... ------------------------------

KF_Z = array([0.1, 0.9, 2.2, 2.8, 4.1, 5.2, 5.8, 7.1])


def kalman_nll(params, dt=1.0):
    q, r = params
    F = array([[1.0, dt], [0.0, 1.0]])
    H = array([[1.0, 0.0]])
    Q = q * array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    R = array([[r]])
    x = zeros((2, 1))
    P = eye(2) * 10.0
    nll = 0.0
    for z in KF_Z:
        x = dot(F, x)
        P = dot(dot(F, P), F.T) + Q
        y = z - dot(H, x)
        S = dot(dot(H, P), H.T) + R
        K = dot(dot(P, H.T), inv(S))
        x = x + dot(K, y)
        P = dot(eye(2) - dot(K, H), P)
        nll += 0.5 * (log(2 * np.pi * S[0, 0]) + y[0, 0] ** 2 / S[0, 0])
    return nll


# ---- 15. a Gaussian mixture: three EM iterations from the given start ------------------------

MIX_DATA = np.array([-1.2, -0.8, -1.5, -0.3, 0.2, 1.9, 2.4, 2.1, 1.6, 3.0, 2.7])


def em_loglik(params, iters=3):
    mu1, mu2 = params
    mu = np.array([mu1, mu2])
    sd = np.array([1.0, 1.0])
    w = np.array([0.5, 0.5])
    for _ in range(iters):
        logp = stats.norm.logpdf(MIX_DATA[:, None], mu, sd) + np.log(w)
        resp = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        nk = resp.sum(axis=0)
        w = nk / len(MIX_DATA)
        mu = (resp * MIX_DATA[:, None]).sum(axis=0) / nk
        sd = np.sqrt((resp * (MIX_DATA[:, None] - mu) ** 2).sum(axis=0) / nk)
    logp = stats.norm.logpdf(MIX_DATA[:, None], mu, sd) + np.log(w)
    return logsumexp(logp, axis=1).sum()


# ---- 16. thin-film stack: complex Snell angles filled into zeros + 0j ----------------------------

def stack_reflectance(params, wavelength=633.0, theta_deg=30.0):
    d1, d2 = params
    ds = np.array([0.0, d1, d2, 0.0])
    index = np.array([1.0, 2.1 + 0.02j, 1.46, 1.52])
    N = index.shape[0] - 2
    thetas = np.zeros(N + 2) + 0j
    thetas[0] = theta_deg * np.pi / 180
    for i in range(N + 1):
        thetas[i + 1] = np.arcsin(np.sin(thetas[i]) * index[i] / index[i + 1])
    M = np.eye(2, dtype=complex)
    for j in range(1, N + 1):
        delta = 2 * np.pi * index[j] * ds[j] * np.cos(thetas[j]) / wavelength
        eta = index[j] * np.cos(thetas[j])
        Mj = np.array([[np.cos(delta), 1j * np.sin(delta) / eta],
                       [1j * eta * np.sin(delta), np.cos(delta)]])
        M = M.dot(Mj)
    eta0 = index[0] * np.cos(thetas[0])
    etas = index[-1] * np.cos(thetas[-1])
    B, C = M @ np.array([1.0, etas])
    r = (eta0 * B - C) / (eta0 * B + C)
    return np.abs(r) ** 2


# ---- 17. steady heat conduction with scipy.sparse.diags and spsolve ----------------------------

def rod_peak_temperature(params, n=30):
    k0, beta = params
    x = np.linspace(0.0, 1.0, n + 2)
    h = x[1] - x[0]
    kf = k0 * (1.0 + beta * 0.5 * (x[1:] + x[:-1]))          # conductivity at faces
    main = (kf[:-1] + kf[1:]) / h ** 2
    off = -kf[1:-1] / h ** 2
    A = sp.diags([off, main, off], [-1, 0, 1], format="csc")
    q = np.ones(n)
    T = spsolve(A, q)
    return T.max() + T.mean()


# ---- 18. Arrhenius rates with the math module and Python's sum/max ---------------------------

def arrhenius_spread(params, temps=(300.0, 350.0, 400.0, 450.0)):
    """Ea in kJ/mol."""
    Ea, lnA = params
    R = 8.314e-3
    rates = [math.exp(lnA - Ea / (R * T)) for T in temps]
    half_lives = np.log(2) / np.array(rates)
    spread = max(half_lives) / sum(half_lives)
    return math.log(spread) + math.sqrt(rates[-1] / rates[0]) / 100.0 + math.log10(sum(rates))


# ---- 19. a piecewise friction factor by np.vectorize(otypes=[float]) --------------------------

def _friction(Re, rough):
    if Re < 2300.0:
        return 64.0 / Re
    return 0.25 / math.log10(rough / 3.7 + 5.74 / Re ** 0.9) ** 2


friction = np.vectorize(_friction, otypes=[float])


def pipe_pressure_drop(params, Re=np.array([800.0, 1500.0, 5e3, 2e4, 1e5])):
    """Relative roughness in thousandths."""
    rough, scale = params
    f = friction(Re * scale, rough / 1000.0)
    return np.sum(f * Re ** 0.1)


# ---- 20. column-wise statistics by apply_along_axis --------------------------------------------

def _robust_scale(col):
    med = np.median(col)
    return np.sqrt(np.mean((col - med) ** 2) + 1e-3)


def feature_scales(params):
    a, b = params
    X = np.array([[1.0, 2.0], [1.5, 0.5], [2.5, -1.0], [0.7, 3.0], [1.1, 1.9]])
    Y = np.column_stack([a * X[:, 0] + b, np.exp(b * X[:, 1] / 4)])
    return np.sum(np.apply_along_axis(_robust_scale, 0, Y))


# ---- 21. dtype arguments everywhere -----------------------------------------------------------

def dtype_heavy_energy(params):
    k1, k2, k3 = params
    springs = np.array([k1, k2, k3], dtype=float)
    ext = np.zeros(3, dtype=np.float64)
    ext[:] = np.asarray([0.1, 0.25, 0.4], dtype=np.float64) * springs
    energy = 0.5 * np.sum(springs * ext ** 2, dtype=np.float64)
    stiff = springs.astype(np.float64)
    return energy + np.mean(stiff, dtype=np.float64) + np.prod(stiff, dtype=float) ** (1 / 3)


# ---- 22. a sinc diffraction pattern under np.errstate -----------------------------------------

def slit_intensity(params, theta=np.linspace(-0.02, 0.02, 11)):
    """Single-slit intensity (width and wavelength in micrometres); theta = 0
    is in the grid, 0/0 guarded by where."""
    width, wl = params
    beta = np.pi * width * np.sin(theta) / wl
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(beta == 0, 1.0, np.sin(beta) / beta)
    return np.sum(s ** 2)


# ---- 23. a rigid body's inertia tensor by einsum strings -------------------------------------

def inertia_anisotropy(params):
    m1, spread = params
    r = np.array([[1.0, 0.0, 0.0], [0.0, spread, 0.0], [0.0, 0.0, 0.5], [0.3, 0.4, spread]])
    m = np.array([m1, 1.0, 2.0, 0.5])
    r2 = np.einsum("ij,ij->i", r, r)
    I = np.einsum("i,i,jk->jk", m, r2, np.eye(3)) - np.einsum("i,ij,ik->jk", m, r, r)
    w = np.linalg.eigvalsh(I)
    return (w[-1] - w[0]) / np.einsum("ii", I)


# ---- 24. a rectified response with boolean-mask stores and clip --------------------------------

def rectified_power(params, t=np.linspace(0.0, 1.0, 25)):
    amp, offset = params
    y = amp * np.sin(2 * np.pi * 3 * t) + offset
    y[y < 0] = 0.0                              # half-wave rectifier
    clipped = np.clip(y, 0.0, 1.2)
    big = clipped > 0.5
    clipped[big] = 0.5 + 0.5 * (clipped[big] - 0.5)
    return np.mean(clipped ** 2)


# ---- 25. order statistics: trimmed mean and quantiles of simulated data -----------------------

def trimmed_statistics(params, n=41):
    loc, scale = params
    z = np.random.default_rng(12).standard_normal(n)
    samples = loc + scale * z ** 3
    s = np.sort(samples)
    trimmed = s[4:-4].mean()
    order = np.argsort(samples)
    return trimmed + 0.1 * samples[order[-1]] + np.median(samples) + np.percentile(samples, 80)


# ---- 26. a thermocouple table interpolated by np.interp ---------------------------------------

TC_MV = np.array([0.0, 4.1, 8.1, 12.2, 16.4, 20.6])
TC_C = np.array([0.0, 100.0, 200.0, 300.0, 400.0, 500.0])


def thermocouple_reading(params):
    gain, bias = params
    readings = gain * np.array([2.0, 7.5, 13.3]) + bias
    table = TC_C * (1.0 + 0.01 * bias)
    temps = np.interp(readings, TC_MV, table)
    return temps.sum() / 100.0


# ---- 27. scipy.special: a membrane mode, an erfc profile, xlogy entropy ------------------------

def special_mix(params, r=np.linspace(0.1, 1.0, 6)):
    k, D = params
    drum = special.j0(k * r) + special.jv(1, k * r)
    front = special.erfc(r / (2 * np.sqrt(D)))
    p = front / front.sum()
    return drum.sum() + special.kv(0, k) - np.sum(special.xlogy(p, p)) + special.gammaln(k + 1)


# ---- 28. a hierarchical log posterior from scipy.stats logpdfs --------------------------------

COUNTS = np.array([3, 5, 2, 8, 4])
TIMES = np.array([1.2, 0.7, 2.5, 1.9, 0.4])


def hierarchical_logpost(params):
    log_shape, log_rate, nu = params
    shape, rate = np.exp(log_shape), np.exp(log_rate)
    lam = COUNTS / (TIMES + 1.0) + 0.5
    lp = stats.gamma.logpdf(lam, a=shape, scale=1.0 / rate).sum()
    lp += stats.poisson.logpmf(COUNTS, lam * TIMES * shape / (shape + 1)).sum()
    lp += stats.t.logpdf(np.log(lam), df=nu, loc=log_shape, scale=0.8).sum()
    lp += stats.beta.logpdf(0.3, shape, rate) + stats.halfnorm.logpdf(nu / 10.0)
    return lp


# ---- 29. a Gaussian-process evidence with import numpy as xp and slogdet ------------------------

GP_X = xp.array([0.0, 0.3, 0.7, 1.1, 1.6, 2.0])
GP_Y = xp.array([0.1, 0.5, 0.8, 0.7, 0.2, -0.3])


def gp_evidence(params):
    ell, sf, sn = params
    d = GP_X[:, None] - GP_X[None, :]
    K = sf ** 2 * xp.exp(-0.5 * (d / ell) ** 2) + sn ** 2 * xp.eye(len(GP_X))
    alpha = xp.linalg.solve(K, GP_Y)
    sign, logdet = slogdet(K)
    return -0.5 * GP_Y @ alpha - 0.5 * logdet - 0.5 * len(GP_X) * xp.log(2 * xp.pi)


# ---- 30. Lennard-Jones forces accumulated into a plain zeros array -----------------------------

def lj_virial(params, pos=np.array([[0.0, 0.0], [1.1, 0.1], [0.4, 1.0], [1.5, 1.2]])):
    eps, sigma = params
    n = len(pos)
    forces = np.zeros((n, 2))
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            rij = pos[i] - pos[j]
            r2 = dot(rij, rij)
            sr6 = (sigma ** 2 / r2) ** 3
            energy += 4 * eps * (sr6 ** 2 - sr6)
            f = 24 * eps * (2 * sr6 ** 2 - sr6) / r2 * rij
            forces[i] += f
            forces[j] -= f
    virial = np.sum(forces * pos)
    return energy + 0.1 * virial + 0.01 * np.sum(forces ** 2)


# ---- 31. a covariance from a list of active values, inverted --------------------------------

def mahalanobis_sum(params, pts=np.array([[0.5, 1.0], [-0.3, 0.2], [1.4, -0.8]])):
    s1, s2, rho = params
    cov = np.array([[s1 ** 2, rho * s1 * s2], [rho * s1 * s2, s2 ** 2]])
    prec = np.linalg.inv(cov)
    centre = np.hstack([rho, np.zeros(1)])
    d = pts - centre
    return np.einsum("ni,ij,nj->", d, prec, d) + np.log(np.linalg.det(cov))


# ---- 32. a cumulative dose by cumulative_trapezoid and np.searchsorted ------------------------

def time_to_dose(params, t=np.linspace(0.0, 10.0, 41)):
    """Time at which the cumulative dose first passes a threshold, linearly
    interpolated between grid points."""
    rate, decay = params
    dose_rate = rate * np.exp(-decay * t)
    cum = cumulative_trapezoid(dose_rate, t, initial=0.0)
    i = np.searchsorted(cum, 5.0)
    frac = (5.0 - cum[i - 1]) / (cum[i] - cum[i - 1])
    return t[i - 1] + frac * (t[i] - t[i - 1])


# ---- 33. float() of a parameter: a conversion that loses the derivative ------------------------

def float_misuse(params):
    """An author's float() of a parameter (to 'clean' it): adsim must refuse
    with a clear error rather than return a zero derivative."""
    a, b = params
    a = float(a)
    return a * b ** 2


# ---- 34. in-place += of active rows into a plain history from zeros -------------------------

def logistic_map_history(params, steps=12):
    r, x0 = params
    hist = np.zeros(steps + 1)
    hist[0] = x0
    acc = np.zeros(2)
    for i in range(steps):
        hist[i + 1] = r * hist[i] * (1 - hist[i])
        acc += np.array([hist[i + 1], hist[i + 1] ** 2])
    return acc[1] / acc[0] + hist[-1]


# ---- 35. a pendulum's large-amplitude period by the AGM, from math import sqrt ----------------

def pendulum_period(params, g=9.81):
    """T = 2 pi sqrt(L / g) / AGM(1, cos(theta0 / 2)), the arithmetic-geometric
    mean iterated to a tolerance with math's functions on numbers."""
    L, theta0_deg = params
    a, b = 1.0, cos(radians(theta0_deg) / 2)
    while abs(a - b) > 1e-15:
        a, b = (a + b) / 2, sqrt(a * b)
    return 2 * math.pi * sqrt(L / g) / a


# ---- 36. Gray-Scott as benchmarks publish it: float32 grids -----------------------------------

def gray_scott_float32(params, n=8, steps=3):
    """The same step on float32 grids: NumPy computes in float32, which adsim
    does not record; it must say that the dtype is the cause."""
    F, k = params
    U = np.zeros((n + 2, n + 2), dtype=np.float32)
    V = np.zeros((n + 2, n + 2), dtype=np.float32)
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    u[:] = 1.0
    V[3:6, 3:6] = 0.25
    for _ in range(steps):
        uvv = u * v * v
        u += -uvv + F * (1 - u)
        v += uvv - (F + k) * v
    return V.sum()


# ---- 37. an antireflection coating: Snell's law for complex indices, vectorised --------------

def coating_reflectance(params, wavelengths=np.array([450.0, 550.0, 650.0]), th_0=0.6):
    """Mean s-polarised reflectance of a coating whose index and thickness are
    the parameters, on an absorbing substrate: complex Snell angles by
    np.arcsin over the whole stack, interface and propagation matrices."""
    n_coat, d_coat = params
    n_list = np.array([1.0, n_coat, 3.9 + 0.02j])
    th = np.arcsin(n_list[0] * np.sin(th_0) / n_list)
    kz_cos = n_list * np.cos(th)
    r01 = (kz_cos[0] - kz_cos[1]) / (kz_cos[0] + kz_cos[1])
    r12 = (kz_cos[1] - kz_cos[2]) / (kz_cos[1] + kz_cos[2])
    total = 0.0
    for lam in wavelengths:
        delta = 2 * np.pi * kz_cos[1] * d_coat / lam
        r = (r01 + r12 * np.exp(2j * delta)) / (1 + r01 * r12 * np.exp(2j * delta))
        total = total + np.abs(r) ** 2
    return total / len(wavelengths)


# ---- 38. parameters in a dataclass, the object handed to the derivative ----------------------

@dataclass
class Kinetics:
    k1: float
    k2: float


def series_yield(kin, t=2.0):
    """Peak of the intermediate of A -> B -> C, parameters read from an object."""
    k1, k2 = kin.k1, kin.k2
    return k1 / (k2 - k1) * (np.exp(-k1 * t) - np.exp(-k2 * t))


def series_yield_from_array(params):
    """The same model, the object built inside from an array of parameters."""
    return series_yield(Kinetics(*params))


# ---- 39. Mie scattering of a dielectric sphere by spherical Bessel functions -----------------

def mie_efficiency(params, n_max=6):
    """Scattering efficiency of a sphere of size parameter x and real index m:
    Riccati-Bessel functions from scipy.special.spherical_jn/yn and their
    derivatives (derivative=True), coefficients a_n, b_n as complex numbers."""
    x, m = params
    n = np.arange(1, n_max + 1)
    mx = m * x
    jx, jx_d = special.spherical_jn(n, x), special.spherical_jn(n, x, derivative=True)
    yx, yx_d = special.spherical_yn(n, x), special.spherical_yn(n, x, derivative=True)
    jm, jm_d = special.spherical_jn(n, mx), special.spherical_jn(n, mx, derivative=True)
    psi_x, dpsi_x = x * jx, jx + x * jx_d
    psi_m, dpsi_m = mx * jm, jm + mx * jm_d
    xi_x = x * (jx + 1j * yx)
    dxi_x = (jx + 1j * yx) + x * (jx_d + 1j * yx_d)
    a = (m * psi_m * dpsi_x - psi_x * dpsi_m) / (m * psi_m * dxi_x - xi_x * dpsi_m)
    b = (psi_m * dpsi_x - m * psi_x * dpsi_m) / (psi_m * dxi_x - m * xi_x * dpsi_m)
    return 2.0 / x ** 2 * np.sum((2 * n + 1) * (np.abs(a) ** 2 + np.abs(b) ** 2))


# ---- 40. a sparse Laplacian scaled in place through its data ----------------------------------

def implicit_diffusion(params, n=10, steps=4):
    """Backward-Euler steps of u_t = D u_xx with the Laplacian scaled in place
    (``L.data *= D``: the SciPy matrix's data becomes active)."""
    D, amp = params
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csc") * (n + 1) ** 2
    L.data *= D
    A = (sp.identity(n, format="csc") - 0.01 * L).tocsc()
    u = amp * np.sin(np.pi * np.linspace(0.0, 1.0, n))
    for _ in range(steps):
        u = spsolve(A, u)
    return u.sum()


# ---- 41. a steady-state Kalman filter by solve_discrete_are, a stationary covariance ----------

def steady_state_tracking_error(params, dt=0.1):
    """Steady-state innovation variance of a constant-velocity tracker (the
    filter Riccati equation by the dual DARE) plus the stationary covariance
    of a damped oscillator driven by noise (a continuous Lyapunov equation)."""
    q, r = params
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    P = sla.solve_discrete_are(F.T, H.T, Q, np.array([[r]]))
    S = H @ P @ H.T + r
    A = np.array([[0.0, 1.0], [-4.0, -0.5 - q]])
    Sigma = sla.solve_continuous_lyapunov(A, -np.array([[0.0, 0.0], [0.0, r]]))
    return S[0, 0] + Sigma[0, 0]


# ---- 42. an adiabatic batch reactor: math.exp in an odeint right-hand side --------------------

def _reactor(y, t, lnA, Ea):
    conc, T = y
    rate = math.exp(lnA - Ea / (8.314e-3 * T)) * conc
    return [-rate, 40.0 * rate]


def reactor_runaway(params):
    """Temperature after 5 s of an adiabatic first-order reaction, the rate
    constant written with math.exp (Ea in kJ/mol)."""
    lnA, Ea = params
    y = odeint(_reactor, [1.0, 300.0], np.linspace(0.0, 5.0, 6), args=(lnA, Ea), rtol=1e-10,
               atol=1e-10)
    return y[-1, 1] / 300.0


# ---- 43. a diode with series resistance, solved in closed form by the Lambert W function -------

def diode_power(params, V=np.array([0.45, 0.55, 0.65, 0.75]), n_Vt=0.0334):
    """Current of I = Is (exp((V - I Rs) / (n Vt)) - 1) solved explicitly,
    I = n Vt / Rs W(Is Rs / (n Vt) exp((V + Is Rs) / (n Vt))) - Is, summed as
    dissipated power; saturation current as its logarithm."""
    ln_Is, Rs = params
    Is = np.exp(ln_Is)
    arg = Is * Rs / n_Vt * np.exp((V + Is * Rs) / n_Vt)
    current = n_Vt / Rs * special.lambertw(arg).real - Is
    return np.sum(V * current)


# ---- 44. a growth-rate posterior with a truncated-normal prior -------------------------------

GROWTH_T = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
GROWTH_N = np.array([12.0, 19.0, 33.0, 51.0, 88.0])


def growth_log_posterior(params):
    """Poisson counts of exponential growth; the rate's prior a normal
    truncated to [0, 2] (scipy.stats.truncnorm in its standardized bounds)."""
    r, log_n0 = params
    mu, sd = 0.4, 0.3
    a, b = (0.0 - mu) / sd, (2.0 - mu) / sd
    lam = np.exp(log_n0 + r * GROWTH_T)
    loglik = np.sum(stats.poisson.logpmf(GROWTH_N, lam))
    return loglik + stats.truncnorm.logpdf(r, a, b, loc=mu, scale=sd) + \
        stats.truncnorm.logsf(r, a, b, loc=mu, scale=sd)
