"""Small scientific programs written as their authors write them, with
adsim's own derivatives inside some models and NumPy as written.

Newton–Krylov and Helmholtz energies: a nonlinear elastic chain relaxed
by Newton steps whose conjugate-gradient solves take Hessian products from
``adsim.hvp`` (hand-written, and SciPy's ``cg`` on a ``LinearOperator`` of
them), a Bratu problem by ``minimize(method='trust-krylov')`` given
``adsim.grad`` and ``adsim.hvp`` and by SciPy's ``newton_krylov``, a van der
Waals Helmholtz energy whose pressure is ``adsim.grad`` of it, an Einstein
solid's heat capacity by ``adsim.hessian``. Equations of state with their
parameters in dicts: a Soave–Redlich–Kwong mixture (``kij`` keyed by pairs,
Z from ``np.roots``), a virial mixture, a Peng–Robinson liquid by
``fsolve(full_output=True)``. PDE codes updating plain arrays in place:
upwind advection with ghost cells (``u[1:-1] -= ...``), Fisher–KPP with a
Laplacian written into ``np.empty_like``, a heat plate (``u[1:-1, 1:-1] +=``),
a spring net through a view, periodic mixing by ``np.roll``, a Vasicek bond
by Crank–Nicolson and ``solve_banded``, an American put rolled back in
place on a binomial tree. Filters with ``from numpy import zeros, array,
dot``: Kalman, unscented (``P += w * outer(...)``), extended (``x[:] =``,
``P[:] =``). Likelihoods summing lists: a Gaussian mixture by
``np.sum([logpdf(y) for y in ys])``, von Mises with ``np.mean``/``np.std``
of lists, ``scipy.stats`` log densities with ``logsumexp(b=)``,
Hardy–Weinberg with ``math.log`` over a dict. Optics: a Bragg mirror by
``functools.reduce(np.dot, ...)``, a film on an absorbing substrate with
``np.emath.sqrt`` and ``np.e ** (2j * beta)``, a periodic mirror with
``cmath`` and ``np.linalg.matrix_power``. Population genetics: selection
with dominance, Kimura's fixation probability by ``np.vectorize``, a
Wright–Fisher chain from ``binom.pmf``. Finance: Black–Scholes with
``math`` and ``norm.cdf``, implied volatilities by ``brentq`` in a loop over
strikes, Heston's characteristic function with a complex power by the
trapezoid rule and by ``quad``. Images: ``gaussian_filter`` and ``sobel``,
``ndimage.shift``, ``center_of_mass`` and ``label``. SciPy machinery: a
Rachford–Rice flash by ``brentq`` with Wilson K-values from a dict,
``fsolve`` with ``args``, ``dblquad``, a firing rate by ``brentq`` of a
``quad``, a ``CubicSpline`` drag table along a trajectory, sparse
Laplacians assembled by ``coo_matrix``, ``lil_matrix`` and ``sp.diags`` and
solved by ``spsolve``, a leader–follower game with an inner BFGS. Styles:
``np.piecewise`` with lambdas, ``np.apply_along_axis``, ``np.polyfit``,
``Polynomial.fit(...).convert()``, ``np.atleast_2d`` of a list with ``np.r_``
and ``np.append``, ``np.unwrap`` and a 3-d ``np.kron``, ``np.frompyfunc``
with tied maxima, and a loss printed with ``float()`` (refused).

None of them knows about adsim except those that call it as a user would;
tests/numpy/test_user_programs_s16.py differentiates them as they are."""
import cmath
import functools
import math

import numpy as np
from numpy import array, dot, eye, outer, zeros
from numpy.linalg import cholesky, inv, det
import scipy.sparse as sp
from scipy import ndimage
from scipy.integrate import dblquad
from scipy.interpolate import CubicSpline
from scipy.optimize import brentq, fsolve, minimize
from scipy.sparse.linalg import spsolve
from scipy.stats import norm

import adsim


# ---- 1. a nonlinear chain relaxed by Newton–CG with Hessian products from adsim.hvp -------

def chain_energy(u, k, load):
    # springs with a quartic stiffening, the left end clamped, a load on every node
    ext = np.diff(np.concatenate(([0.0], u)))
    return np.sum(0.5 * k * ext ** 2 + 0.25 * ext ** 4) - load * np.sum(u)


def cg_solve(matvec, b, tol=1e-13, maxiter=200):
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = dot(r, r)
    for _ in range(maxiter):
        Ap = matvec(p)
        alpha = rs / dot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = dot(r, r)
        if np.sqrt(rs_new) < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def relaxed_chain(params, n=5, newton_steps=5):
    k, load = params
    energy = lambda u: chain_energy(u, k, load)
    u = np.zeros(n)
    for _ in range(newton_steps):
        g = adsim.grad(energy)(u)
        du = cg_solve(lambda v: adsim.hvp(energy, u, v), -g)
        u = u + du
    return energy(u)


# ---- 2. Bratu by minimize(method='trust-krylov') with adsim's gradient and hvp -----------

def bratu_functional(u, lam, h):
    du = np.diff(np.concatenate(([0.0], u, [0.0]))) / h
    return h * (0.5 * np.sum(du ** 2) - lam * np.sum(np.exp(u)))


def bratu_trust_krylov(params, n=10):
    lam, scale = params
    h = 1.0 / (n + 1)
    f = lambda u: bratu_functional(u, lam, h)
    res = minimize(f, np.zeros(n), method="trust-krylov", jac=adsim.grad(f),
                   hessp=lambda u, v: adsim.hvp(f, u, v), options={"gtol": 1e-12})
    return scale * np.max(res.x)


# ---- 3. Soave–Redlich–Kwong mixture: kij in a dict, Z from np.roots ----------------------

R_GAS = 8.314
COMPONENTS = {
    "CH4": {"Tc": 190.6, "Pc": 45.99e5, "omega": 0.011},
    "C2H6": {"Tc": 305.3, "Pc": 48.72e5, "omega": 0.099},
}
KIJ = {("CH4", "C2H6"): 0.003}


def srk_pure(comp, T):
    c = COMPONENTS[comp]
    m = 0.480 + 1.574 * c["omega"] - 0.176 * c["omega"] ** 2
    alpha = (1 + m * (1 - np.sqrt(T / c["Tc"]))) ** 2
    a = 0.42748 * R_GAS ** 2 * c["Tc"] ** 2 / c["Pc"] * alpha
    b = 0.08664 * R_GAS * c["Tc"] / c["Pc"]
    return a, b


def srk_ln_phi_methane(state):
    T, y1 = state
    P = 30e5
    names = list(COMPONENTS)
    y = {names[0]: y1, names[1]: 1 - y1}
    ab = {c: srk_pure(c, T) for c in names}
    am = 0.0
    for i in names:
        for j in names:
            kij = KIJ.get((i, j), KIJ.get((j, i), 0.0))
            am = am + y[i] * y[j] * np.sqrt(ab[i][0] * ab[j][0]) * (1 - kij)
    bm = sum(y[c] * ab[c][1] for c in names)
    A = am * P / (R_GAS * T) ** 2
    B = bm * P / (R_GAS * T)
    roots = np.roots([1.0, -1.0, A - B - B ** 2, -A * B])
    Z = np.max(roots[np.abs(roots.imag) < 1e-10].real)
    i = names[0]
    sum_a = sum(y[j] * np.sqrt(ab[i][0] * ab[j][0]) * (1 - KIJ.get((i, j), KIJ.get((j, i), 0.0)))
                for j in names)
    bi = ab[i][1]
    return (bi / bm * (Z - 1) - np.log(Z - B)
            - A / B * (2 * sum_a / am - bi / bm) * np.log(1 + B / Z))


# ---- 4. virial mixture: B_ij(T) from a dict of pair coefficients -------------------------

VIRIAL = {("N2", "N2"): (-160.0, 0.35), ("CO2", "CO2"): (-580.0, 0.55),
          ("N2", "CO2"): (-300.0, 0.45)}


def second_virial(pair, T):
    b0, expo = VIRIAL[pair] if pair in VIRIAL else VIRIAL[pair[::-1]]
    return b0 * (300.0 / T) ** (1 + expo) * 1e-6    # m3/mol


def virial_fugacity(state, P=5e5):
    T, x_co2 = state
    x = {"N2": 1 - x_co2, "CO2": x_co2}
    Bmix = sum(x[i] * x[j] * second_virial((i, j), T) for i in x for j in x)
    Z = 1 + Bmix * P / (R_GAS * T)
    # ln phi of CO2 for a truncated virial gas
    ln_phi = (2 * sum(x[j] * second_virial(("CO2", j), T) for j in x) - Bmix) * P / (R_GAS * T)
    return Z + math.e ** ln_phi


# ---- 5. van der Waals Helmholtz energy, its pressure by adsim.grad ----------------------

class VdWFluid:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def helmholtz(self, V, T, n=1.0):
        # residual plus ideal part, per mole (thermal wavelength folded into a constant)
        return -n * R_GAS * T * (np.log((V - n * self.b) / n) + 1.5 * np.log(T)) - self.a * n ** 2 / V

    def pressure(self, V, T):
        return -adsim.grad(lambda v: self.helmholtz(v, T))(V)


def vdw_work(params, T=320.0):
    a, b = params
    fluid = VdWFluid(a, b * 1e-5)
    volumes = np.linspace(1e-3, 2e-3, 6)
    p = np.array([fluid.pressure(V, T) for V in volumes])
    return np.trapezoid(p, volumes)


# ---- 6. upwind advection with ghost cells, a plain state updated in place ---------------

def advected_mass_centre(params, n=40, steps=25):
    v, kappa = params
    dx = 1.0 / n
    dt = 0.4 * dx
    x = (np.arange(n + 2) - 0.5) * dx
    u = np.exp(-((x - 0.3) / 0.08) ** 2)          # plain
    for _ in range(steps):
        u[0] = u[-2]
        u[-1] = u[1]
        flux = v * u[:-1]
        diff = kappa * (u[2:] - 2 * u[1:-1] + u[:-2]) / dx
        u[1:-1] -= dt / dx * (flux[1:] - flux[:-1]) - dt / dx * diff
    return np.sum(x[1:-1] * u[1:-1]) / np.sum(u[1:-1])


# ---- 7. Fisher–KPP with a Laplacian written into np.empty_like --------------------------

def laplacian_1d(u, dx):
    lap = np.empty_like(u)
    lap[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2
    lap[0] = 2 * (u[1] - u[0]) / dx ** 2
    lap[-1] = 2 * (u[-2] - u[-1]) / dx ** 2
    return lap


def fisher_front(params, n=30, steps=40):
    D, r = params
    dx = 0.5
    dt = 0.05
    u = np.zeros(n)
    u[:3] = 1.0
    for _ in range(steps):
        u += dt * (D * laplacian_1d(u, dx) + r * u * (1 - u))
    return dx * np.sum(u)


# ---- 8. heat plate: u[1:-1, 1:-1] += ... on a plain grid, edges set by parameters --------

def plate_centre(params, n=9, steps=30):
    alpha, t_edge = params
    h = 1.0 / (n - 1)
    dt = 0.2 * h ** 2
    u = np.zeros((n, n))
    for _ in range(steps):
        u[0, :] = t_edge
        u[:, -1] = 0.5 * t_edge
        u[1:-1, 1:-1] += alpha * dt / h ** 2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                                 + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    return u[n // 2, n // 2] + np.mean(u)


# ---- 9. a Kalman filter with names imported from numpy ---------------------------------

ZS = [0.9, 2.1, 2.8, 4.2, 5.1, 5.8, 7.2, 8.1]


def kf_neg_loglik(params, dt=1.0):
    q, r = np.exp(params)
    F = array([[1.0, dt], [0.0, 1.0]])
    H = array([[1.0, 0.0]])
    Q = q * array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    R = array([[r]])
    x = zeros(2)
    P = eye(2) * 10.0
    nll = 0.0
    for z in ZS:
        x = dot(F, x)
        P = dot(dot(F, P), F.T) + Q
        S = dot(dot(H, P), H.T) + R
        y = array([z]) - dot(H, x)
        K = dot(dot(P, H.T), inv(S))
        x = x + dot(K, y)
        P = dot(eye(2) - dot(K, H), P)
        nll += 0.5 * (np.log(2 * np.pi * det(S)) + dot(y, dot(inv(S), y)))
    return nll


# ---- 10. an unscented Kalman filter: sigma points in zeros, P += w * outer(...) -------

def calculate_sigmas(x, P, kappa):
    n = len(x)
    sigmas = zeros((2 * n + 1, n))
    sigmas[0] = x
    root = cholesky((n + kappa) * P).T
    sigmas[1:n + 1] = x + root
    sigmas[n + 1:] = x - root
    return sigmas


def unscented_transform(sigmas, weights, noise):
    mean = dot(weights, sigmas)
    P = zeros((sigmas.shape[1], sigmas.shape[1]))
    for k in range(sigmas.shape[0]):
        P += weights[k] * outer(sigmas[k] - mean, sigmas[k] - mean)
    return mean, P + noise


def ukf_pendulum(params, dt=0.1, kappa=1.0):
    q, r = params
    zs = [0.48, 0.45, 0.40, 0.33, 0.24, 0.14]
    x = array([0.5, 0.0])
    P = eye(2) * 0.1
    n = 2
    w = np.full(2 * n + 1, 0.5 / (n + kappa))
    w[0] = kappa / (n + kappa)
    fx = lambda s: array([s[0] + dt * s[1], s[1] - dt * 9.81 * np.sin(s[0])])
    total = 0.0
    for z in zs:
        sig = calculate_sigmas(x, P, kappa)
        sig_f = np.array([fx(s) for s in sig])
        x, P = unscented_transform(sig_f, w, q * eye(2))
        sig = calculate_sigmas(x, P, kappa)
        zsig = sig[:, 0]
        zm = dot(w, zsig)
        Pz = dot(w, (zsig - zm) ** 2) + r
        Pxz = zeros(2)
        for k in range(2 * n + 1):
            Pxz += w[k] * (sig[k] - x) * (zsig[k] - zm)
        K = Pxz / Pz
        x = x + K * (z - zm)
        P = P - outer(K, K) * Pz
        total += np.log(Pz) + (z - zm) ** 2 / Pz
    return total


# ---- 11. a Gaussian mixture summing a list of per-point log densities -----------------

YS = np.array([-1.8, -1.1, -0.4, 0.2, 1.4, 1.9, 2.5, 3.1])


def normal_logpdf(y, mu, sigma):
    return -0.5 * np.log(2 * np.pi * sigma ** 2) - (y - mu) ** 2 / (2 * sigma ** 2)


def gmm_loglik(params):
    mu2, log_sigma = params
    weights = [0.4, 0.6]
    mus = [-1.0, mu2]
    sigma = np.exp(log_sigma)

    def logpdf(y):
        return np.log(sum(w * np.exp(normal_logpdf(y, m, sigma)) for w, m in zip(weights, mus)))

    return np.sum([logpdf(y) for y in YS])


# ---- 12. von Mises headings: np.mean and np.std of lists of active values ---------------

HEADINGS = np.radians([10.0, 35.0, -20.0, 50.0, 15.0, 5.0])


def von_mises_fit(params):
    mu, kappa = params
    ll = [kappa * np.cos(t - mu) - np.log(2 * np.pi) - np.log(np.i0(kappa)) for t in HEADINGS]
    resid = [np.sin(t - mu) for t in HEADINGS]
    return -np.mean(ll) + np.std(resid) + np.var([mu, kappa])


# ---- 13. a Bragg mirror: characteristic matrices multiplied by functools.reduce --------

def char_matrix(n, d, lam):
    delta = 2 * np.pi * n * d / lam
    return array([[np.cos(delta), 1j * np.sin(delta) / n],
                  [1j * n * np.sin(delta), np.cos(delta)]])


def bragg_reflectance(params, lam=np.array([520.0, 550.0, 600.0])):
    d_hi, d_lo = params
    n_hi, n_lo, n_sub = 2.3 + 0.002j, 1.46, 1.52
    out = []
    for wl in lam:
        mats = [char_matrix(n_hi, d_hi, wl) if k % 2 == 0 else char_matrix(n_lo, d_lo, wl)
                for k in range(6)]
        M = functools.reduce(np.dot, mats)
        B, C = dot(M, array([1.0, n_sub]))
        r = (B - C) / (B + C)
        out.append(np.abs(r) ** 2)
    return np.mean(out)


# ---- 14. selection with dominance over generations, a list of frequencies --------------

OBSERVED_P = np.array([0.10, 0.13, 0.17, 0.22, 0.27, 0.33])


def allele_trajectory(s, h, p0, generations):
    p = p0
    traj = [p]
    for _ in range(generations):
        q = 1 - p
        w11, w12, w22 = 1 + s, 1 + h * s, 1.0
        wbar = p ** 2 * w11 + 2 * p * q * w12 + q ** 2 * w22
        p = (p ** 2 * w11 + p * q * w12) / wbar
        traj.append(p)
    return np.array(traj)


def selection_sse(params):
    s, h = params
    traj = allele_trajectory(s, h, 0.10, 25)
    return np.sum((traj[::5] - OBSERVED_P) ** 2)


# ---- 15. fixation probabilities (Kimura) by np.vectorize over population sizes --------

def kimura_fixation(N, s, p):
    if abs(s) < 1e-12:
        return p
    return (1 - math.exp(-4 * N * s * p)) / (1 - math.exp(-4 * N * s))


def mean_fixation(params):
    s, p = params
    fix = np.vectorize(kimura_fixation)
    sizes = np.array([10.0, 50.0, 200.0])
    return np.mean(fix(sizes, s, p))


# ---- 16. Black–Scholes with math on scalars and scipy.stats.norm ------------------------

def bs_call(S, K, T, r, sigma):
    d1 = (math.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    return S * norm.cdf(d1) - K * math.exp(-r * T) * norm.cdf(d2)


def straddle_book(params):
    sigma, r = params
    book = 0.0
    for K, T in [(90.0, 0.5), (100.0, 1.0), (110.0, 2.0)]:
        call = bs_call(100.0, K, T, r, sigma)
        put = call - 100.0 + K * math.exp(-r * T)
        book += call + put
    return book


# ---- 17. an implied volatility by brentq from an active price ---------------------------

def implied_vol_spread(params):
    price_a, price_b = params
    vols = []
    for price, K in [(price_a, 95.0), (price_b, 105.0)]:
        vols.append(brentq(lambda s: bs_call(100.0, K, 1.0, 0.02, s) - price, 1e-3, 3.0,
                           xtol=1e-14))
    return vols[1] - vols[0] + 0.1 * vols[0] ** 2


# ---- 18. Heston: characteristic function with a complex power, trapezoid integral -------

def heston_cf(u, T, kappa, theta, sigma, rho, v0, r):
    b = kappa - rho * sigma * 1j * u
    d = np.sqrt(b ** 2 + sigma ** 2 * (u ** 2 + 1j * u))
    g = (b - d) / (b + d)
    # the Albrecher form: the power of a complex base to an active real exponent
    C = r * 1j * u * T + kappa * theta / sigma ** 2 * (b - d) * T
    G = ((1 - g) / (1 - g * np.exp(-d * T))) ** (2 * kappa * theta / sigma ** 2)
    D = (b - d) / sigma ** 2 * (1 - np.exp(-d * T)) / (1 - g * np.exp(-d * T))
    return np.exp(C + D * v0) * G


def heston_call(params, S=100.0, K=100.0, T=1.0, r=0.01, rho=-0.6, v0=0.04):
    kappa, sigma = params
    theta = 0.05
    u = np.linspace(1e-4, 60.0, 600)
    k = np.log(K / S)
    phi2 = heston_cf(u, T, kappa, theta, sigma, rho, v0, r)
    phi1 = heston_cf(u - 1j, T, kappa, theta, sigma, rho, v0, r) / heston_cf(
        -1j, T, kappa, theta, sigma, rho, v0, r)
    P1 = 0.5 + np.trapezoid(np.real(np.exp(-1j * u * k) * phi1 / (1j * u)), u) / np.pi
    P2 = 0.5 + np.trapezoid(np.real(np.exp(-1j * u * k) * phi2 / (1j * u)), u) / np.pi
    return S * P1 - K * np.exp(-r * T) * P2


# ---- 19. an image: a blob blurred by gaussian_filter, edges by sobel --------------------

def blob_edges(params, n=24):
    width, amp = params
    yy, xx = np.mgrid[0:n, 0:n]
    img = amp * np.exp(-((xx - 11.5) ** 2 + (yy - 12.0) ** 2) / (2 * width ** 2))
    smooth = ndimage.gaussian_filter(img, sigma=1.0)
    gx = ndimage.sobel(smooth, axis=0)
    gy = ndimage.sobel(smooth, axis=1)
    return np.sum(np.hypot(gx, gy)) / n ** 2


# ---- 20. a template compared with a shifted image ---------------------------------------

def shifted_template_misfit(params, n=16):
    amp, width = params
    yy, xx = np.mgrid[0:n, 0:n]
    target = np.exp(-((xx - 8.3) ** 2 + (yy - 7.6) ** 2) / 8.0)
    model = amp * np.exp(-((xx - 8.0) ** 2 + (yy - 8.0) ** 2) / (2 * width ** 2))
    moved = ndimage.shift(model, (-0.4, 0.3), order=3, mode="nearest")
    return np.sum((moved - target) ** 2)


# ---- 21. a Rachford–Rice flash by brentq, Wilson K-values from a dict ------------------

FEED = {"C3": {"z": 0.3, "Tc": 369.8, "Pc": 42.48, "w": 0.152},
        "nC4": {"z": 0.4, "Tc": 425.1, "Pc": 37.96, "w": 0.200},
        "nC5": {"z": 0.3, "Tc": 469.7, "Pc": 33.70, "w": 0.252}}


def wilson_k(c, T, P):
    return c["Pc"] / P * np.exp(5.373 * (1 + c["w"]) * (1 - c["Tc"] / T))


def flash_vapour_fraction(conditions):
    T, P = conditions
    K = {name: wilson_k(c, T, P) for name, c in FEED.items()}

    def rachford_rice(beta):
        return sum(c["z"] * (K[n] - 1) / (1 + beta * (K[n] - 1)) for n, c in FEED.items())

    beta = brentq(rachford_rice, 1e-9, 1 - 1e-9, xtol=1e-14)
    y_c3 = FEED["C3"]["z"] * K["C3"] / (1 + beta * (K["C3"] - 1))
    return beta + y_c3


# ---- 22. a steady state by fsolve with args ---------------------------------------------

def gene_switch(c, alpha, n_hill):
    u, v = c
    return [alpha / (1 + v ** n_hill) - u, alpha / (1 + u ** n_hill) - v + 0.1]


def switch_state(params):
    alpha, n_hill = params
    sol = fsolve(gene_switch, [2.0, 0.3], args=(alpha, n_hill), xtol=1e-13)
    return sol[0] - sol[1]


# ---- 23. a double integral by dblquad of an active density ------------------------------

def dose_over_square(params):
    sx, sy = params
    val, _ = dblquad(lambda y, x: np.exp(-x ** 2 / (2 * sx ** 2) - y ** 2 / (2 * sy ** 2)),
                     0.0, 1.0, 0.0, 1.0, epsabs=1e-10, epsrel=1e-10)
    return val


# ---- 24. a falling sphere with a CubicSpline drag table at active Reynolds numbers ------

RE_TABLE = np.array([1.0, 10.0, 100.0, 1e3, 1e4])
CD_TABLE = np.array([24.5, 4.1, 1.09, 0.47, 0.40])
DRAG = CubicSpline(np.log10(RE_TABLE), np.log10(CD_TABLE))


def sphere_fall(params, dt=0.02, steps=40):
    diameter, density = params
    rho_air, mu, g = 1.2, 1.8e-5, 9.81
    mass = density * np.pi * diameter ** 3 / 6
    area = np.pi * diameter ** 2 / 4
    v, z = 0.1, 0.0
    for _ in range(steps):
        Re = rho_air * v * diameter / mu
        cd = 10 ** DRAG(np.log10(Re))
        a = g - 0.5 * rho_air * cd * area * v ** 2 / mass
        v = v + dt * a
        z = z + dt * v
    return z


# ---- 25. a variable-coefficient Poisson problem, coo_matrix assembly, spsolve ----------

def conductivity_flux(params, n=20):
    a, b = params
    h = 1.0 / n
    xm = (np.arange(n) + 0.5) * h                # cell faces between the n - 1 unknowns + ends
    kappa = np.exp(a + b * xm)
    rows, cols, vals = [], [], []
    for i in range(n - 1):
        rows.append(i); cols.append(i); vals.append((kappa[i] + kappa[i + 1]) / h ** 2)
        if i > 0:
            rows.append(i); cols.append(i - 1); vals.append(-kappa[i] / h ** 2)
        if i < n - 2:
            rows.append(i); cols.append(i + 1); vals.append(-kappa[i + 1] / h ** 2)
    A = sp.coo_matrix((np.array(vals), (rows, cols)), shape=(n - 1, n - 1)).tocsr()
    u = spsolve(A, np.ones(n - 1))
    return kappa[0] * u[0] / h + kappa[-1] * u[-1] / h + np.max(u)


# ---- 26. a leader–follower game: the follower's best reply by an inner minimize --------

def follower_profit(q, price, cost):
    return -(price * q[0] - cost * q[0] ** 2 - 0.5 * q[0] * q[1] - 0.3 * q[1] ** 2 + q[1])


def leader_revenue(params):
    price, cost = params
    reply = minimize(follower_profit, x0=np.array([1.0, 1.0]), args=(price, cost),
                     method="BFGS", options={"gtol": 1e-7})
    q = reply.x
    return price * q[0] - 0.2 * price ** 2 + q[1]


# ---- 27. a bilinear hardening law by np.piecewise with lambdas --------------------------

STRAINS = np.array([0.0005, 0.001, 0.002, 0.004, 0.008])
STRESS_OBS = np.array([100.0, 200.0, 255.0, 270.0, 300.0])


def hardening_misfit(params):
    E, H = params
    eps_y = 250.0 / (E * 1e5)
    sigma = np.piecewise(STRAINS, [STRAINS <= eps_y, STRAINS > eps_y],
                         [lambda e: E * 1e5 * e, lambda e: 250.0 + H * 1e3 * (e - eps_y)])
    return np.sum((sigma - STRESS_OBS) ** 2) / 1e3


# ---- 28. per-row softmax log-likelihood by np.apply_along_axis -------------------------

CHOICES = np.array([0, 2, 1, 2, 0])
ATTRS = np.array([[1.0, 0.5, 2.0], [0.2, 1.5, 1.0], [0.8, 0.3, 0.9],
                  [1.1, 1.2, 2.2], [0.1, 0.9, 0.4]])


def logit_loglik(params):
    beta, bias = params
    util = beta * ATTRS + bias * np.array([0.0, 1.0, 0.5])

    def log_softmax(row):
        return row - np.log(np.sum(np.exp(row)))

    logp = np.apply_along_axis(log_softmax, 1, util)
    return np.sum(logp[np.arange(len(CHOICES)), CHOICES])


# ---- 29. a calibration line by np.polyfit of active readings ----------------------------

VOLTS = np.linspace(0.0, 4.0, 7)


def calibration_curvature(params):
    gain, offset = params
    readings = gain * VOLTS + offset + 0.05 * np.sin(VOLTS) * gain ** 2
    coeffs = np.polyfit(VOLTS, readings, 2)
    return coeffs[0] * 100 + coeffs[1] + np.polyval(coeffs, 2.5)


# ---- 30. a loss printed with float() as it is computed ---------------------------------

def reported_loss(params):
    a, b = params
    t = np.linspace(0.0, 2.0, 6)
    loss = np.sum((a * np.exp(-b * t) - np.exp(-0.7 * t)) ** 2)
    print(f"loss = {float(loss):.6f}")
    return loss


# ---- 31. a Bratu problem by scipy's newton_krylov on the residual -----------------------

def bratu_residual(u, lam, h):
    full = np.concatenate(([0.0], u, [0.0]))
    return (full[2:] - 2 * full[1:-1] + full[:-2]) / h ** 2 + lam * np.exp(u)


def bratu_newton_krylov(params, n=12):
    from scipy.optimize import newton_krylov
    lam, scale = params
    h = 1.0 / (n + 1)
    u = newton_krylov(lambda u: bratu_residual(u, lam, h), np.zeros(n), f_tol=1e-12)
    return scale * h * np.sum(u)


# ---- 32. heat capacity of a Helmholtz model: C_v = -T d2A/dT2 by adsim.hessian -------

EINSTEIN = {"theta": 240.0, "n_modes": 3.0}


def helmholtz_einstein(T, theta, eps0):
    return EINSTEIN["n_modes"] * (0.5 * theta + T * np.log(1 - np.exp(-theta / T))) - eps0


def heat_capacity_fit(params, temps=(80.0, 150.0, 300.0)):
    theta, eps0 = params
    cv = [-T * adsim.hessian(lambda t: helmholtz_einstein(t, theta, eps0))(np.array(T))
          for T in temps]
    return np.sum((np.array(cv) - np.array([1.1, 2.2, 2.8])) ** 2) + 0.001 * eps0 ** 2


# ---- 33. an American put on a binomial tree: the plain payoff array rolled back in place

def american_put(params, S0=100.0, K=100.0, T=1.0, steps=30):
    sigma, r = params
    dt = T / steps
    u = np.exp(sigma * np.sqrt(dt))
    d = 1 / u
    p = (np.exp(r * dt) - d) / (u - d)
    disc = np.exp(-r * dt)
    j = np.arange(steps + 1)
    S = S0 * u ** (steps - j) * d ** j
    V = np.maximum(K - S, 0.0)
    for i in range(steps - 1, -1, -1):
        S = S0 * u ** (i - np.arange(i + 1)) * d ** np.arange(i + 1)     # the prices at step i
        V[:i + 1] = np.maximum(disc * (p * V[:i + 1] + (1 - p) * V[1:i + 2]), K - S)
    return V[0]


# ---- 34. Heston by quad of the real part of a complex integrand ------------------------

def heston_digital(params, S=100.0, K=110.0, T=0.5, r=0.0, rho=-0.5, v0=0.04):
    from scipy.integrate import quad
    kappa, sigma = params
    k = np.log(K / S)

    def integrand(u):
        phi = heston_cf(u, T, kappa, 0.05, sigma, rho, v0, r)
        return (np.exp(-1j * u * k) * phi / (1j * u)).real

    val, _ = quad(integrand, 1e-8, 200.0, limit=200, epsabs=1e-11, epsrel=1e-11)
    return 0.5 + val / np.pi


# ---- 35. a centroid by ndimage.center_of_mass and a label sum --------------------------

def blob_centroid(params, n=20):
    x0, width = params
    yy, xx = np.mgrid[0:n, 0:n].astype(float)
    img = np.exp(-((xx - x0) ** 2 + (yy - 9.0) ** 2) / (2 * width ** 2))
    cy, cx = ndimage.center_of_mass(img)
    # the region from a reference frame (plain), its mass in this one
    reference = np.exp(-((xx - 8.0) ** 2 + (yy - 9.0) ** 2) / 8.0)
    labels, count = ndimage.label(ndimage.gaussian_filter(reference, 1.0) > 0.1)
    mass = ndimage.sum(img, labels, index=1)
    return cx + 0.1 * cy + mass


# ---- 36. a film on an absorbing substrate: Fresnel with np.emath.sqrt --------------------

def absorbing_reflectance(params, angles=np.radians([10.0, 40.0, 70.0])):
    n_film, d_film = params
    n_sub = 3.9 + 0.02j
    lam = 600.0
    total = 0.0
    for th in angles:
        s = np.sin(th)
        c0 = np.cos(th)
        c1 = np.emath.sqrt(1 - (s / n_film) ** 2)
        c2 = np.emath.sqrt(1 - (s / n_sub) ** 2)
        r01 = (c0 - n_film * c1) / (c0 + n_film * c1)
        r12 = (n_film * c1 - n_sub * c2) / (n_film * c1 + n_sub * c2)
        beta = 2 * np.pi * n_film * d_film * c1 / lam
        r = (r01 + r12 * np.e ** (2j * beta)) / (1 + r01 * r12 * np.e ** (2j * beta))
        total = total + abs(r) ** 2
    return total / len(angles)


# ---- 37. Wright–Fisher transition matrix from binom.pmf, absorption by a linear solve --

def wf_fixation_time(params, N=12):
    from scipy.stats import binom
    s, mu = params
    i = np.arange(N + 1)
    p = i / N
    p_sel = p * (1 + s) / (1 + s * p)
    p_mut = p_sel * (1 - mu) + (1 - p_sel) * mu
    P = np.array([binom.pmf(i, N, q) for q in p_mut[1:-1]])       # transient rows
    Q = P[:, 1:-1]
    t = np.linalg.solve(np.eye(N - 1) - Q, np.ones(N - 1))
    return np.log(t[N // 4])


# ---- 38. a spring network relaxed in place: a view of the state updated -----------------

def relaxed_net(params, n=10, iters=40):
    k, g = params
    y = np.zeros(n + 2)                       # plain, the ends held at zero
    interior = y[1:-1]                        # a view the update goes through
    for _ in range(iters):
        force = k * (y[2:] - 2 * y[1:-1] + y[:-2]) - g
        interior += 0.2 / k * force
    return np.sum(y) / n + np.min(y)


# ---- 39. a scipy.sparse Laplacian with active conductances through sp.diags, spsolve ----

def groundwater_head(params, n=25):
    logk_left, logk_right = params
    x = np.linspace(0, 1, n + 1)
    k_face = np.exp(np.where(x[1:-1] < 0.5, logk_left, logk_right))
    k_face = np.concatenate(([k_face[0]], k_face, [k_face[-1]]))
    main = k_face[:-1] + k_face[1:]
    A = sp.diags([-k_face[1:-1], main, -k_face[1:-1]], [-1, 0, 1], format="csc") * n ** 2
    recharge = np.full(n, 0.3)
    recharge[n // 2] += 2.0
    h = spsolve(A, recharge)
    return np.max(h) + h @ h / n


# ---- 40. a UKF list of sigma points: np.atleast_2d of a list, np.r_ with active items ----

def sigma_cloud_spread(params):
    a, b = params
    centre = array([a, b])
    pts = [centre, centre + array([0.3, 0.0]), centre - array([0.0, 0.2])]
    cloud = np.atleast_2d(pts)
    stacked = np.r_[cloud[:, 0], a * b, cloud[:, 1]]
    offsets = [1.0, 2.0, 3.0] - cloud[:, 0]
    return np.std(stacked) + np.sum(offsets ** 2) + np.var(np.append(pts, [a, b]))


# ---- 41. a chirp's phase by np.unwrap and a Kronecker product beyond 2-d ------------------

def chirp_phase_slope(params, n=24):
    f0, rate = params
    t = np.linspace(0.0, 1.0, n)
    z = np.e ** (1j * 2 * np.pi * (f0 * t + 0.5 * rate * t ** 2))
    phase = np.unwrap(np.angle(z))
    block = np.kron(np.ones((2, 1, 1)), np.reshape(z.real[:4], (1, 2, 2)))
    return np.polyfit(t, phase, 1)[0] + np.sum(block)


# ---- 42. a pairwise potential by np.frompyfunc and tied maxima -------------------------

def frompyfunc_energy(params):
    eps, sigma = params
    lj = np.frompyfunc(lambda r: 4 * eps * ((sigma / r) ** 12 - (sigma / r) ** 6), 1, 1)
    r = np.array([1.1, 1.3, 1.6, 2.0])
    energies = lj(r).astype(float)
    tied = np.maximum(np.array([eps, eps, 0.5]), 0.0)
    return np.sum(energies) + np.max(tied)


# ---- 43. a Peng–Robinson liquid density by fsolve(full_output=True), params in a dict ---

PR = {"Tc": 507.6, "Pc": 30.25e5, "omega": 0.301}        # n-hexane


def pr_pressure(v, T, a, b):
    return R_GAS * T / (v - b) - a / (v * (v + b) + b * (v - b))


def liquid_density(state, P=1.0e5):
    T, kappa_shift = state
    kappa = 0.37464 + 1.54226 * PR["omega"] - 0.26992 * PR["omega"] ** 2 + kappa_shift
    a = 0.45724 * R_GAS ** 2 * PR["Tc"] ** 2 / PR["Pc"] * (1 + kappa * (1 - np.sqrt(T / PR["Tc"]))) ** 2
    b = 0.07780 * R_GAS * PR["Tc"] / PR["Pc"]
    v, info, ier, msg = fsolve(lambda v: pr_pressure(v, T, a, b) - P, [1.3 * b],
                               full_output=True, xtol=1e-12)
    if ier != 1:
        raise RuntimeError(msg)
    return 0.08618 / v[0]           # kg/m3


# ---- 44. a sparse matrix assembled with lil_matrix from active conductances -------------

def lil_network_potential(params, n=8):
    g_series, g_shunt = params
    A = sp.lil_matrix((n, n))
    for i in range(n):
        A[i, i] = 2 * g_series + g_shunt
        if i > 0:
            A[i, i - 1] = -g_series
        if i < n - 1:
            A[i, i + 1] = -g_series
    b = np.zeros(n)
    b[0] = 1.0
    v = spsolve(A.tocsr(), b)
    return v[-1] + np.sum(v) / n


# ---- 45. a log posterior with scipy.stats over lists, logsumexp with b= -----------------

def stats_mixture_posterior(params):
    from scipy import stats
    from scipy.special import logsumexp
    mu, log_s = params
    s = np.exp(log_s)
    data = [0.3, -0.4, 1.9, 2.2, 2.6, -1.0]
    prior = stats.norm.logpdf(mu, 0.0, 5.0) + stats.halfnorm.logpdf(s, scale=2.0)
    comps = [[stats.norm.logpdf(y, 0.0, 1.0), stats.norm.logpdf(y, mu, s)] for y in data]
    return prior + np.sum(logsumexp(comps, axis=1, b=[0.3, 0.7]))


# ---- 46. an extended Kalman filter writing into preallocated P[:] and x[:] ---------------

def ekf_range_nll(params, dt=0.5):
    q, r = np.exp(params)
    zs = [5.1, 4.6, 4.3, 4.2, 4.4, 4.9]
    x = zeros(2)
    x[:] = [5.0, -1.0]
    P = zeros((2, 2))
    P[:] = eye(2)
    F = array([[1.0, dt], [0.0, 1.0]])
    nll = 0.0
    for z in zs:
        x[:] = dot(F, x)
        P[:] = dot(dot(F, P), F.T) + q * array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
        hx = np.sqrt(x[0] ** 2 + 1.0)
        H = array([[x[0] / hx, 0.0]])
        S = (dot(dot(H, P), H.T) + r)[0, 0]
        K = dot(P, H.T)[:, 0] / S
        x += K * (z - hx)
        P -= np.outer(K, K) * S
        nll += 0.5 * (np.log(2 * np.pi * S) + (z - hx) ** 2 / S)
    return nll


# ---- 47. a 2-d diffusion with the five-point stencil by np.roll, history in a list -------

def periodic_mixing(params, n=12, steps=20):
    D, drift = params
    dt, h = 0.1, 1.0
    yy, xx = np.mgrid[0:n, 0:n]
    c = np.where((xx - 4) ** 2 + (yy - 6) ** 2 < 6, 1.0, 0.0)      # plain
    variances = []
    for _ in range(steps):
        lap = (np.roll(c, 1, 0) + np.roll(c, -1, 0) + np.roll(c, 1, 1) + np.roll(c, -1, 1)
               - 4 * c) / h ** 2
        adv = drift * (c - np.roll(c, 1, 1)) / h
        c = c + dt * (D * lap - adv)
        variances.append(np.var(c))
    return np.mean(variances[-5:]) * 100 + np.max(c)


# ---- 48. a leaky integrate-and-fire rate by brentq on a quad ------------------------------

def lif_threshold_current(params, tau=0.02, t_ref=0.002, rate=40.0):
    from scipy.integrate import quad
    v_th, sigma = params

    def firing_rate(mu):
        lo, hi = (0.0 - mu) / sigma, (v_th - mu) / sigma
        integral, _ = quad(lambda u: np.exp(u ** 2) * (1 + math.erf(u)), lo, hi,
                           epsabs=1e-10, epsrel=1e-10)
        return 1.0 / (t_ref + tau * np.sqrt(np.pi) * integral)

    return brentq(lambda mu: firing_rate(mu) - rate, 0.0, 3.0, xtol=1e-13)


# ---- 49. a genotype likelihood: Hardy–Weinberg with inbreeding, counts in a dict ------

GENOTYPES = {"AA": 48, "Aa": 34, "aa": 18}


def hw_inbreeding_loglik(params):
    p, F = params
    q = 1 - p
    freq = {"AA": p ** 2 + F * p * q, "Aa": 2 * p * q * (1 - F), "aa": q ** 2 + F * p * q}
    return sum(n * math.log(freq[g]) for g, n in GENOTYPES.items())


# ---- 50. a Crank–Nicolson bond price (Vasicek) with a banded solve ---------------------

def vasicek_bond(params, n=40, steps=20, T=2.0):
    from scipy.linalg import solve_banded
    kappa, sigma = params
    theta = 0.04
    r = np.linspace(-0.05, 0.15, n)
    dr = r[1] - r[0]
    dt = T / steps
    drift = kappa * (theta - r)
    lower = 0.5 * sigma ** 2 / dr ** 2 - drift / (2 * dr)
    upper = 0.5 * sigma ** 2 / dr ** 2 + drift / (2 * dr)
    diag = -sigma ** 2 / dr ** 2 - r
    P = np.ones(n)
    ab = np.zeros((3, n))
    ab[0, 1:] = -0.5 * dt * upper[:-1]
    ab[1] = 1 - 0.5 * dt * diag
    ab[2, :-1] = -0.5 * dt * lower[1:]
    for _ in range(steps):
        rhs = P + 0.5 * dt * (diag * P)
        rhs[1:] += 0.5 * dt * lower[1:] * P[:-1]
        rhs[:-1] += 0.5 * dt * upper[:-1] * P[1:]
        P = solve_banded((1, 1), ab, rhs)
    return np.interp(0.03, r, P)


# ---- 51. a periodic mirror with cmath: one period's matrix to the N-th power -------------

def period_matrix(n1, d1, n2, d2, lam):
    d_1 = 2 * cmath.pi * n1 * d1 / lam
    d_2 = 2 * cmath.pi * n2 * d2 / lam
    m1 = np.array([[cmath.cos(d_1), 1j * cmath.sin(d_1) / n1], [1j * n1 * cmath.sin(d_1), cmath.cos(d_1)]])
    m2 = np.array([[cmath.cos(d_2), 1j * cmath.sin(d_2) / n2], [1j * n2 * cmath.sin(d_2), cmath.cos(d_2)]])
    return m1 @ m2


def periodic_mirror(params, periods=8, n_sub=1.52):
    d_hi, d_lo = params
    total = 0.0
    for lam in (540.0, 560.0):
        M = np.linalg.matrix_power(period_matrix(2.3 + 0.001j, d_hi, 1.46, d_lo, lam), periods)
        B = M[0, 0] + M[0, 1] * n_sub
        C = M[1, 0] + M[1, 1] * n_sub
        r = (B - C) / (B + C)
        total += abs(r) ** 2 + 0.01 * cmath.phase(r)
    return total / 2


# ---- 52. a calibration by numpy.polynomial's Polynomial.fit, converted to the power basis

def sensor_curve(params):
    gain, bend = params
    volts = np.linspace(0.5, 4.5, 9)
    reading = gain * volts + bend * volts ** 2 / 10 + 0.02 * np.cos(volts)
    fitted = np.polynomial.Polynomial.fit(volts, reading, 2)
    c0, c1, c2 = fitted.convert().coef
    return c1 + 10 * c2 + fitted.deriv()(2.0) + fitted(3.3)


# ---- 53. Newton–Krylov with SciPy's cg on a LinearOperator of adsim.hvp products ---------

def newton_krylov_scipy_cg(params, n=5, steps=5):
    from scipy.sparse.linalg import LinearOperator, cg
    k, load = params
    energy = lambda u: chain_energy(u, k, load)
    u = np.zeros(n)
    for _ in range(steps):
        g = adsim.grad(energy)(u)
        H = LinearOperator((n, n), matvec=lambda v: adsim.hvp(energy, u, v), dtype=float)
        du, info = cg(H, -g, rtol=1e-12, atol=0.0)
        u = u + du
    return energy(u)
