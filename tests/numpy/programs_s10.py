"""Thirty-odd small scientific programs written as their authors write them,
in areas and idioms the earlier collections (programs_as_published.py,
programs_s7.py .. programs_s9.py) leave out: a 2-D Poisson problem whose
sparse Laplacian is built by ``scipy.sparse.kron`` of ``diags``; two gas
reactions at equilibrium by ``fsolve`` with ``args``; Redlich-Kwong's
molar volume by ``scipy.optimize.root``; Colebrook's friction factor by
``scipy.optimize.newton``; a regularisation strength tuned through an inner
``minimize`` (BFGS); Debye heat capacities by ``quad`` with an active upper
limit; ``interp1d`` of active values at an active query; ``CubicSpline``
integrals and derivatives; ``odeint`` of a bound method whose parameters
sit on the object, and of a function reading module globals; the wave
equation written into a preallocated plain history array; parameters in a
dataclass and in a namedtuple; ``np.apply_along_axis``, ``np.vectorize``
over a scalar function with an ``if``, ``np.piecewise`` with lambdas;
``np.polyfit``/``np.polyval``/``np.polyder``; ``np.unwrap`` of a phase;
``np.kron`` of stacks of 2x2 matrices; complex powers with a non-integer
active exponent (Cole-Cole) and ``np.e ** (1j * x)``; ``max``/``min`` at
exact ties; a ``from numpy import *`` module (programs_s10_star.py); lists of
active values handed to ``np.std``, ``np.var``, ``np.append``, ``np.r_``,
``np.c_``, ``np.mean``, ``np.sum``; weighted ``np.histogram``; ``np.roots``;
``np.gradient`` and ``simpson``; ``lu_factor``/``lu_solve``;
``np.linalg.lstsq``; ``np.split`` of a state; ``np.atleast_2d`` of a list of
active rows; an unscented update with ``from numpy import zeros, outer`` and
``Pxz += ...``; the momentum of a plain velocity array removed in place
by a constant mass array made inside the program; a Raman band smoothed by
``scipy.signal.savgol_filter``; two sources blurred by
``scipy.ndimage.gaussian_filter``; and a heat capacity fitted by
``Chebyshev.fit`` and integrated by ``.integ()``.

None of them knows about adsim; tests/numpy/test_user_programs_s10.py
differentiates them as they are."""
import math
import statistics
from collections import namedtuple
from dataclasses import dataclass, replace

import numpy as np
from numpy import outer, zeros
from numpy.polynomial import Chebyshev
import scipy.ndimage as ndimage
import scipy.signal as signal
import scipy.sparse as sparse
from scipy.integrate import odeint, quad, simpson
from scipy.interpolate import CubicSpline, interp1d
from scipy.linalg import lu_factor, lu_solve
from scipy.optimize import fsolve, minimize, newton, root
from scipy.sparse.linalg import spsolve
from scipy.stats import norm


# ---- 1. a 2-D Poisson problem: Laplacian by kron of diags, spsolve --------------------------

def poisson_energy(params, n=8):
    """Electrostatic energy of a square plate with a Gaussian charge, the
    operator -k Laplacian + c built as kron(I, T) + kron(T, I)."""
    k, c, width = params
    h = 1.0 / (n + 1)
    T = sparse.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    I = sparse.identity(n)
    L = (sparse.kron(I, T) + sparse.kron(T, I)) / h ** 2
    A = (k * L + c * sparse.identity(n * n)).tocsc()
    x = np.linspace(h, 1 - h, n)
    X, Y = np.meshgrid(x, x)
    f = np.exp(-((X - 0.5) ** 2 + (Y - 0.4) ** 2) / width ** 2).ravel()
    u = spsolve(A, f)
    return 0.5 * h ** 2 * f @ u


# ---- 2. two gas reactions at equilibrium by fsolve ------------------------------------------

def equilibrium_residual(extent, K1, K2, P):
    """CH4 + H2O = CO + 3 H2 and CO + H2O = CO2 + H2, feed 1 CH4 : 3 H2O."""
    e1, e2 = extent
    n = np.array([1 - e1, 3 - e1 - e2, e1 - e2, 3 * e1 + e2, e2])
    y = n / np.sum(n)
    r1 = y[2] * y[3] ** 3 * P ** 2 - K1 * y[0] * y[1]
    r2 = y[4] * y[3] - K2 * y[2] * y[1]
    return [r1, r2]


def hydrogen_yield(lnK, P=2.0):
    K1, K2 = np.exp(lnK)
    e1, e2 = fsolve(equilibrium_residual, [0.5, 0.2], args=(K1, K2, P), xtol=1e-12)
    return 3 * e1 + e2


# ---- 3. Redlich-Kwong molar volume by scipy.optimize.root ----------------------------------

R_GAS = 8.314


def rk_compressibility(TP, Tc=304.2, Pc=73.8e5):
    """Compressibility factor of CO2 from the Redlich-Kwong equation solved
    for the molar volume (vapour side, started from the ideal gas)."""
    T, P = TP
    a = 0.42748 * R_GAS ** 2 * Tc ** 2.5 / Pc
    b = 0.08664 * R_GAS * Tc / Pc

    def pressure_gap(v):
        return R_GAS * T / (v - b) - a / (np.sqrt(T) * v * (v + b)) - P

    sol = root(pressure_gap, R_GAS * T / P, tol=1e-14)
    v = sol.x[0]
    return P * v / (R_GAS * T)


# ---- 4. Colebrook's friction factor by scipy.optimize.newton -------------------------------

def colebrook(f, Re, rel_rough):
    return 1 / np.sqrt(f) + 2.0 * np.log10(rel_rough / 3.7 + 2.51 / (Re * np.sqrt(f)))


def pressure_drop(params, L=100.0, D=0.1, rho=1000.0, mu=1e-3):
    """Pressure drop along a pipe (Pa) from the mean velocity (m/s) and the
    wall roughness (mm)."""
    velocity, roughness_mm = params
    Re = rho * velocity * D / mu
    f = newton(colebrook, 0.02, args=(Re, 1e-3 * roughness_mm / D), tol=1e-14)
    return f * L / D * 0.5 * rho * velocity ** 2


# ---- 5. a regularisation strength tuned through an inner BFGS ------------------------------

_rng5 = np.random.default_rng(5)
X_TRAIN = _rng5.standard_normal((30, 3))
Y_TRAIN = X_TRAIN @ np.array([1.0, -2.0, 0.5]) + 0.3 * _rng5.standard_normal(30)
X_VALID = _rng5.standard_normal((15, 3))
Y_VALID = X_VALID @ np.array([1.0, -2.0, 0.5]) + 0.3 * _rng5.standard_normal(15)


def huber_penalised(w, lam, delta=0.5):
    r = X_TRAIN @ w - Y_TRAIN
    loss = np.where(np.abs(r) < delta, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))
    return np.mean(loss) + lam * np.sum(w ** 2)


def huber_gradient(w, lam, delta=0.5):
    r = X_TRAIN @ w - Y_TRAIN
    psi = np.clip(r, -delta, delta)
    return X_TRAIN.T @ psi / len(r) + 2 * lam * w


def huber_validation_error(log_lam):
    lam = np.exp(log_lam)
    res = minimize(huber_penalised, np.zeros(3), args=(lam,), jac=huber_gradient,
                   method="BFGS", tol=1e-12)
    return np.mean((X_VALID @ res.x - Y_VALID) ** 2)


# ---- 6. Debye heat capacity by quad with an active upper limit -----------------------------

T_MEAS = np.array([20.0, 50.0, 100.0, 200.0])
C_MEAS = np.array([0.45, 5.6, 14.8, 21.4])


def debye_integrand(x):
    return x ** 4 * np.exp(x) / (np.exp(x) - 1) ** 2


def debye_misfit(params):
    """Squared misfit of the Debye heat capacity (J/mol/K) against four
    measurements, params = (Debye temperature, scale)."""
    theta_D, scale = params
    sse = 0.0
    for T, C in zip(T_MEAS, C_MEAS):
        integral, _ = quad(debye_integrand, 0.0, theta_D / T, epsabs=1e-13, epsrel=1e-13)
        model = scale * 9 * R_GAS * (T / theta_D) ** 3 * integral
        sse += (model - C) ** 2
    return sse


# ---- 7. interp1d of active values at an active query ---------------------------------------

DEPTHS = np.array([0.0, 10.0, 20.0, 35.0, 50.0, 80.0])


def thermocline_temperature(params):
    """Temperature at the depth where light falls to 10 %, from a profile of
    six measured temperatures (interp1d, cubic) and an extinction rate."""
    kext, temps = params[0], params[1:]
    profile = interp1d(DEPTHS, temps, kind="cubic")
    depth = np.log(10.0) / kext
    return profile(depth)


# ---- 8. CubicSpline: integral to an active bound and slope ---------------------------------

HOURS = np.array([0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0])


def daily_load(params):
    """Energy drawn up to the shut-off hour plus the ramp rate there, from
    the hourly load readings (a natural spline)."""
    shut_off, loads = params[0], params[1:]
    cs = CubicSpline(HOURS, loads, bc_type="natural")
    ramp = cs.derivative()
    return cs.integrate(0.0, shut_off) + 2.0 * ramp(shut_off)


# ---- 9. odeint of a bound method, the parameters on the object -----------------------------

class CSTR:
    """A continuous stirred tank: A -> B -> C with an inflow of A."""

    def __init__(self, k1, k2, tau=2.0, cA_in=1.0):
        self.k1 = k1
        self.k2 = k2
        self.tau = tau
        self.cA_in = cA_in

    def rhs(self, c, t):
        cA, cB = c
        dA = (self.cA_in - cA) / self.tau - self.k1 * cA
        dB = -cB / self.tau + self.k1 * cA - self.k2 * cB
        return [dA, dB]

    def run(self, t):
        return odeint(self.rhs, [0.0, 0.0], t, rtol=1e-10, atol=1e-12)


def tank_b_output(k):
    reactor = CSTR(k[0], k[1])
    t = np.linspace(0.0, 5.0, 11)
    c = reactor.run(t)
    return np.trapezoid(c[:, 1], t)


# ---- 10. odeint of a function reading module globals ---------------------------------------

BETA = 0.3
GAMMA = 0.1


def sis_rhs(i, t):
    return BETA * i * (1 - i) - GAMMA * i


def sis_prevalence(rates):
    global BETA, GAMMA
    BETA, GAMMA = rates
    t = np.linspace(0, 20, 21)
    sol = odeint(sis_rhs, 0.01, t, rtol=1e-10, atol=1e-12)
    BETA, GAMMA = 0.3, 0.1
    return sol[-1, 0]


# ---- 11. the wave equation written into a preallocated history array -----------------------

def string_energy_at_end(params, nx=30, nt=40):
    """Energy left in a plucked string with a damping term, its history held
    in U = np.zeros((nt, nx)) written row by row."""
    c, damping = params
    x = np.linspace(0, 1, nx)
    dx = x[1] - x[0]
    dt = 0.5 * dx
    U = np.zeros((nt, nx))
    U[0] = np.exp(-100 * (x - 0.3) ** 2)
    U[0, [0, -1]] = 0.0
    U[1, 1:-1] = U[0, 1:-1] + 0.5 * (c * dt / dx) ** 2 * (U[0, 2:] - 2 * U[0, 1:-1] + U[0, :-2])
    C2 = (c * dt / dx) ** 2
    for n in range(1, nt - 1):
        U[n + 1, 1:-1] = ((2 * U[n, 1:-1] - (1 - damping * dt) * U[n - 1, 1:-1]
                           + C2 * (U[n, 2:] - 2 * U[n, 1:-1] + U[n, :-2]))
                          / (1 + damping * dt))
    ut = (U[-1] - U[-2]) / dt
    ux = np.diff(U[-1]) / dx
    return 0.5 * np.sum(ut ** 2) * dx + 0.5 * c ** 2 * np.sum(ux ** 2) * dx


# ---- 12. parameters in a dataclass ---------------------------------------------------------

@dataclass
class FisheryParams:
    r: float = 0.8
    K: float = 100.0
    q: float = 0.01
    effort: float = 20.0
    years: int = 25


def simulate_fishery(p: FisheryParams, B0=40.0):
    B = B0
    catches = []
    for _ in range(p.years):
        catch = p.q * p.effort * B
        B = B + p.r * B * (1 - B / p.K) - catch
        catches.append(catch)
    return np.array(catches)


def fishery_misfit(theta):
    base = FisheryParams()
    p = replace(base, r=theta[0], K=theta[1], q=theta[2])
    obs = simulate_fishery(FisheryParams())
    return np.sum((simulate_fishery(p) - 1.05 * obs) ** 2)


# ---- 13. parameters in a namedtuple --------------------------------------------------------

Oscillator = namedtuple("Oscillator", ["wn", "zeta", "gain"])


def step_response(sys, t):
    wd = sys.wn * np.sqrt(1 - sys.zeta ** 2)
    phi = np.arccos(sys.zeta)
    return sys.gain * (1 - np.exp(-sys.zeta * sys.wn * t) * np.sin(wd * t + phi)
                       / np.sqrt(1 - sys.zeta ** 2))


def overshoot_fit(params):
    sys = Oscillator(*params)
    t = np.linspace(0, 6, 61)
    target = step_response(Oscillator(2.0, 0.3, 1.0), t)
    fitted = step_response(sys._replace(gain=sys.gain * 1.0), t)
    return np.mean((fitted - target) ** 2)


# ---- 14. spectra reduced row by row with np.apply_along_axis -------------------------------

WAVELENGTHS = np.linspace(400, 700, 61)


def band_area(spectrum):
    return np.trapezoid(spectrum, WAVELENGTHS)


def peak_areas(params):
    """Areas of three absorption spectra of Gaussian bands whose centres and
    width are the parameters, computed per row with np.apply_along_axis."""
    centres, width = params[:3], params[3]
    spectra = np.exp(-((WAVELENGTHS[None, :] - centres[:, None]) / width) ** 2)
    areas = np.apply_along_axis(band_area, 1, spectra)
    return np.sum(areas * np.array([1.0, 2.0, 3.0]))


# ---- 15. np.vectorize over a scalar function with an if ------------------------------------

def tax_due(income, threshold, rate):
    if income < threshold:
        return 0.0
    return rate * (income - threshold) + 0.02 * math.sqrt(income)


INCOMES = np.array([12.0, 25.0, 40.0, 55.0, 80.0, 120.0])


def total_tax(params):
    threshold, rate = params
    due = np.vectorize(tax_due)(INCOMES, threshold, rate)
    return due.sum()


# ---- 16. a drag curve by np.piecewise with lambdas ---------------------------------------

def settling_drag(params):
    """Drag on particles across regimes (Stokes, Schiller-Naumann, Newton) at
    Reynolds numbers scaled by the fluid viscosity factor."""
    visc, newton_cd = params
    Re = np.array([0.05, 0.5, 5.0, 50.0, 500.0, 2000.0, 5000.0]) / visc
    cd = np.piecewise(Re, [Re < 1.0, (Re >= 1.0) & (Re < 1000.0), Re >= 1000.0],
                      [lambda r: 24.0 / r,
                       lambda r: 24.0 / r * (1 + 0.15 * r ** 0.687),
                       lambda r: newton_cd * np.ones_like(r)])
    return np.sum(cd * Re ** 2) / 1e6


# ---- 17. a calibration peak by polyfit, polyval and polyder ------------------------------

def calibration_peak(params):
    """Position and height of the vertex of a quadratic fitted (weighted) to
    responses of a Gaussian sensor centred at mu with width s."""
    mu, s = params
    x = np.linspace(-1, 1, 9)
    y = np.exp(-(x - mu) ** 2 / (2 * s ** 2))
    coef = np.polyfit(x, y, 2, w=1 + x ** 2)
    slope = np.polyder(coef)
    x_peak = -slope[1] / slope[0]
    return x_peak + np.polyval(coef, x_peak)


# ---- 18. group delay from the unwrapped phase ----------------------------------------------

def group_delay_spread(params):
    """Spread of the group delay of a resonant filter with a transport delay,
    from np.unwrap(np.angle(H)) over frequency."""
    zeta, w0, delay = params
    w = np.linspace(0.1, 10, 200)
    s = 1j * w
    H = w0 ** 2 / (s ** 2 + 2 * zeta * w0 * s + w0 ** 2) * np.exp(-s * delay)
    phase = np.unwrap(np.angle(H))
    gd = -np.diff(phase) / np.diff(w)
    return np.std(gd) + np.mean(gd)


# ---- 19. two-qubit gates by np.kron of stacks of 2x2 matrices ------------------------------

def ry(theta):
    c, s = np.cos(theta / 2), np.sin(theta / 2)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


ZZ = np.diag([1.0, -1.0, -1.0, 1.0])


def mean_zz(params):
    """Mean <ZZ> over a batch of product states Ry(a_k) x Ry(b), the gates
    made for the whole batch at once by np.kron of (n, 2, 2) stacks."""
    a, b = params[:-1], params[-1]
    U = np.kron(ry(a), ry(b)[None])
    psi = U[:, :, 0]
    return np.mean(np.einsum("ki,ij,kj->k", psi, ZZ, psi))


# ---- 20. Cole-Cole permittivity: a complex power with an active exponent ------------------

FREQ = np.logspace(3, 8, 12)
EPS_DATA = 5.0 + 40.0 / (1 + (2j * np.pi * FREQ * 1e-6) ** 0.8)


def cole_cole_misfit(params):
    eps_inf, deps, log_tau, alpha = params
    w = 2 * np.pi * FREQ
    eps = eps_inf + deps / (1 + (1j * w * np.exp(log_tau)) ** (1 - alpha))
    return np.sum(np.abs(eps - EPS_DATA) ** 2)


# ---- 21. a Fourier series written with np.e ** (1j * x) ----------------------------------

def fourier_signal_power(params, n_terms=5):
    """Power of a signal synthesised from complex exponentials, with a base
    frequency and a decay of the amplitudes."""
    w, decay = params
    t = np.linspace(0, 2, 50)
    signal = 0
    for k in range(1, n_terms + 1):
        signal = signal + np.exp(-decay * k) * np.e ** (1j * k * w * t)
    return np.mean(np.abs(signal.real) ** 2)


# ---- 22. max and min at exact ties ---------------------------------------------------------

def twin_peak_height(params):
    """Largest and smallest values of a profile symmetric about zero, on a
    grid symmetric about zero: maxima at two mirrored points, exact ties."""
    A, c, s = params
    half = np.linspace(0.05, 2.0, 40)
    x = np.concatenate([-half[::-1], half])
    y = A * (np.exp(-((x - c) / s) ** 2) + np.exp(-((x + c) / s) ** 2))
    left, right = y[:40].max(), y[40:].max()
    return np.max(y) + max(left, right) + 0.1 * min(left, right) + np.min(y[35:45])


# ---- 23. lists of active values to std, var, append, r_, c_, mean ---------------------------

def estimator_spread(params):
    """Spread of three estimates of a location from a sample whose shift and
    scale are the parameters; the design matrix built by np.c_ and np.r_."""
    shift, scale = params
    z = np.array([-1.2, -0.4, 0.1, 0.3, 0.8, 1.5, 2.1])
    sample = shift + scale * z
    m1 = np.mean(sample)
    m2 = np.median(sample)
    m3 = 0.5 * (sample.min() + sample.max())
    spread = np.std([m1, m2, m3]) + np.var([m1, m2, m3], ddof=1)
    extended = np.append(sample, [m1, m2])
    X = np.c_[np.ones(extended.size), extended]
    y = np.r_[z, shift, scale]
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    return spread + np.sum(beta ** 2) + np.mean([m1, scale]) + np.sum([shift, scale, 1.0])


# ---- 24. a log-likelihood summing a list of log densities -----------------------------------

OBS = np.array([1.2, 0.7, 2.3, 1.9, 1.1, 0.4, 1.6])


def gaussian_loglik(params):
    mu, log_sigma = params
    sigma = np.exp(log_sigma)
    ll = np.sum([norm.logpdf(y, mu, sigma) for y in OBS])
    centred = np.asarray([mu, 2 * mu]) - OBS[:2]
    return ll - 0.1 * np.sum(centred ** 2)


# ---- 25. a weighted histogram of plain samples with active weights --------------------------

SAMPLES = np.random.default_rng(25).standard_normal(400)


def reweighted_histogram_chi2(theta):
    """Chi-square between an importance-reweighted histogram of standard
    normal draws (tilted by exp(theta x)) and the target N(theta, 1) bin
    masses."""
    w = np.exp(theta * SAMPLES)
    w = w / np.sum(w)
    counts, edges = np.histogram(SAMPLES, bins=8, range=(-3, 3), weights=w)
    target = norm.cdf(edges[1:], theta) - norm.cdf(edges[:-1], theta)
    return np.sum((counts - target) ** 2 / target)


# ---- 26. the slowest mode of a cubic characteristic polynomial by np.roots -----------------

def slowest_decay(gains):
    """Decay rate of the slowest mode of s^3 + a s^2 + b s + c from the
    controller gains; the slowest two roots are a conjugate pair whose real
    parts tie exactly."""
    kp, kd = gains
    coeffs = [1.0, 2.0 + kd, 3.0 + kp, 1.5 * kp]
    r = np.roots(coeffs)
    return -np.max(r.real)


# ---- 27. wall shear and flow rate: np.gradient and simpson --------------------------------

def channel_flow(params, n=41):
    """Wall shear stress (one-sided np.gradient) and flow rate (simpson) of a
    power-law fluid's velocity profile in a channel."""
    dpdx, n_index = params
    y = np.linspace(-1, 1, n)
    u = dpdx * (1 - np.abs(y) ** (1 + 1 / n_index))
    dudy = np.gradient(u, y, edge_order=2)
    return simpson(u, x=y) + 0.1 * dudy[0] - 0.1 * dudy[-1]


# ---- 28. implicit reaction-diffusion steps by lu_factor / lu_solve -------------------------

def implicit_decay(params, n=15, steps=12, dt=0.05):
    D, k = params
    h = 1.0 / (n + 1)
    A = (np.diag(np.full(n, 1 + 2 * D * dt / h ** 2 + k * dt))
         + np.diag(np.full(n - 1, -D * dt / h ** 2), 1)
         + np.diag(np.full(n - 1, -D * dt / h ** 2), -1))
    lu, piv = lu_factor(A)
    u = np.sin(np.pi * np.linspace(h, 1 - h, n))
    for _ in range(steps):
        u = lu_solve((lu, piv), u)
    return np.sum(u) * h


# ---- 29. a linearised fit by np.linalg.lstsq -----------------------------------------------

def lstsq_decay_rate(params):
    """Decay rate recovered by a log-linear least-squares fit of a signal
    with a baseline offset."""
    amp, rate, offset = params
    t = np.linspace(0, 3, 12)
    y = amp * np.exp(-rate * t) + offset
    A = np.vstack([np.ones_like(t), t]).T
    coef, residuals, rank, sv = np.linalg.lstsq(A, np.log(y), rcond=None)
    return -coef[1] + residuals[0]


# ---- 30. a two-body orbit by RK4 on a split state ------------------------------------------

def orbit_rhs(state, mu):
    r, v = np.split(state, 2)
    a = -mu * r / np.linalg.norm(r) ** 3
    return np.concatenate([v, a])


def orbit_radius(params, steps=60, dt=0.05):
    mu, v0 = params
    state = np.array([1.0, 0.0, 0.0, v0])
    for _ in range(steps):
        k1 = orbit_rhs(state, mu)
        k2 = orbit_rhs(state + 0.5 * dt * k1, mu)
        k3 = orbit_rhs(state + 0.5 * dt * k2, mu)
        k4 = orbit_rhs(state + dt * k3, mu)
        state = state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    pos, vel = np.array_split(state, 2)
    return np.linalg.norm(pos) + 0.1 * np.dot(vel, vel)


# ---- 31. a measurement matrix from a list of active rows by np.atleast_2d ------------------

def sensor_information(params):
    """Log-determinant of the Fisher information of two sensors at angles
    given by the parameters, rows stacked from a list."""
    rows = [np.array([np.cos(a), np.sin(a)]) for a in params]
    H = np.atleast_2d(rows)
    info = H.T @ H + 0.1 * np.eye(2)
    return np.linalg.slogdet(info)[1]


# ---- 32. an unscented update with from numpy import zeros, outer ---------------------------

def ukf_update_variance(params, z=1.3):
    """Posterior variance of the first state of a 2-D state measured through
    a range function, by the unscented transform (Pxz accumulated in place
    in an array made by zeros)."""
    mean = np.array([params[0], params[1]])
    P = np.array([[params[2], 0.1], [0.1, 0.5]])
    n, kappa = 2, 1.0
    S = np.linalg.cholesky((n + kappa) * P)
    sigmas = [mean] + [mean + S[:, i] for i in range(n)] + [mean - S[:, i] for i in range(n)]
    weights = np.array([kappa / (n + kappa)] + [0.5 / (n + kappa)] * (2 * n))
    Z = [np.sqrt(s[0] ** 2 + s[1] ** 2) for s in sigmas]
    z_mean = sum(w * zi for w, zi in zip(weights, Z))
    Pzz = 0.05
    Pxz = zeros(2)
    for w, s, zi in zip(weights, sigmas, Z):
        Pzz += w * (zi - z_mean) ** 2
        Pxz += w * (s - mean) * (zi - z_mean)
    K = Pxz / Pzz
    P_post = P - outer(K, K) * Pzz
    x_post = mean + K * (z - z_mean)
    return P_post[0, 0] + 0.1 * x_post[0]


# ---- 33. momentum removed in place from a plain velocity array ------------------------------

VEL0 = np.random.default_rng(33).standard_normal((6, 2))


def md_kinetic_energy(params, steps=10, dt=0.01):
    """Kinetic energy after a few harmonic-trap steps, the centre-of-mass
    velocity removed in place each step with a constant mass array made by
    np.ones inside the program."""
    k, drift = params
    n = VEL0.shape[0]
    mass = 20 * np.ones(n)
    pos = np.zeros((n, 2))
    vel = VEL0.copy()
    for _ in range(steps):
        vel += dt * (-k * pos + drift)
        vel -= np.mean(mass[:, None] * vel, 0) / np.mean(mass)
        pos += dt * vel
    return 0.5 * np.sum(mass[:, None] * vel ** 2) + np.sum(pos ** 2)


# ---- 36. a Raman band smoothed by savgol_filter ---------------------------------------------

SHIFTS = np.linspace(900.0, 1100.0, 81)
NOISE36 = 0.02 * np.random.default_rng(36).standard_normal(81)


def smoothed_band_height(params):
    """Height and slope of a Lorentzian Raman band over a sloping baseline,
    read off a Savitzky-Golay smoothed spectrum (window 11, cubic) and its
    smoothed derivative; params = (shift of the band from 1000 cm-1, width,
    amplitude)."""
    offset, width, amplitude = params
    centre = 1000.0 + offset
    spectrum = amplitude / (1 + ((SHIFTS - centre) / width) ** 2) + 1e-3 * SHIFTS + NOISE36
    smooth = signal.savgol_filter(spectrum, 11, 3)
    slope = signal.savgol_filter(spectrum, 11, 3, deriv=1, delta=SHIFTS[1] - SHIFTS[0])
    return smooth[40] + 10 * np.sum(slope[:20] ** 2)


# ---- 37. two blurred sources fitted to an image: gaussian_filter ---------------------------

_y37, _x37 = np.mgrid[0:16, 0:16]


def blob_image(params):
    (x1, y1, x2, y2, flux) = params
    img = flux * np.exp(-((_x37 - x1) ** 2 + (_y37 - y1) ** 2) / 2.0)
    return img + np.exp(-((_x37 - x2) ** 2 + (_y37 - y2) ** 2) / 2.0)


OBSERVED37 = ndimage.gaussian_filter(blob_image([5.0, 6.0, 10.5, 9.0, 2.0]), 1.5)


def blurred_misfit(params):
    """Squared misfit of a model of two point-like sources blurred by the
    telescope's Gaussian point-spread function (scipy.ndimage)."""
    model = ndimage.gaussian_filter(blob_image(params), 1.5, mode="nearest")
    return np.sum((model - OBSERVED37) ** 2)


# ---- 38. a heat-capacity curve fitted by a Chebyshev series, integrated -------------------

T38 = np.linspace(300.0, 1000.0, 15)


def enthalpy_from_fit(params):
    """Enthalpy rise from 300 K to 900 K of a Shomate heat capacity, through
    a degree-5 Chebyshev fit of tabulated values integrated by .integ()."""
    A, B, C = params
    t = T38 / 1000.0
    cp = A + B * t + C * t ** 2 - 0.5 / t ** 2
    series = Chebyshev.fit(T38, cp, 5)
    H = series.integ(lbnd=300.0)
    return H(900.0) / 1000.0 + series.deriv()(600.0)


# ---- 34. a from numpy import * module: two black bodies ------------------------------------

from programs_s10_star import two_source_spectrum  # noqa: E402


def gaussian_loglik_list_minus_data(params):
    """As gaussian_loglik, with a list of active values minus a plain array:
    NumPy converts the list before adsim can see it, so this stays refused."""
    mu, log_sigma = params
    centred = [mu, 2 * mu] - OBS[:2]
    return -0.1 * np.sum(centred ** 2) + log_sigma


# ---- 35. float() of a parameter (stays a clear error) --------------------------------------

def scheduled_rate(params, steps=10):
    """A step count from the parameter by float() and int(): the derivative
    would be lost, so this must be refused with a clear message."""
    rate = float(params[0])
    decay = params[1]
    x = 1.0
    for _ in range(int(rate * steps)):
        x = x * (1 - decay)
    return x


# ---- 39. the statistics module on parameters (stays a clear error) ------------------------

def replicate_spread(params):
    """Spread of three replicate estimates by statistics.stdev: Python's
    statistics module computes in exact fractions, which carry no
    derivative, so this must be refused with a message naming NumPy's
    functions instead."""
    a, b = params
    replicates = [a * b, a + b, a - 0.5 * b]
    return statistics.stdev(replicates) + statistics.mean(replicates)
