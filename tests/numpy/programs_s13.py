"""Thirty-odd small scientific programs written as their authors write them,
after the stiff-ODE and in-place idioms of issues 23 and 25: stiff kinetics
in ``solve_ivp`` with Radau, BDF and LSODA and their rate constants in a
dict, on ``self`` of a model class, in module globals and in ``args=``;
``odeint`` models; ``t_eval``, ``dense_output=True`` with ``sol(t)``, and
events; ``solve_bvp`` for a catalyst pellet, a cooling fin and an
eigenvalue-like parameter; stencil updates through views in time loops
that start from a plain state (``u[1:-1] += dt * ...``), ``np.zeros``
states filled in loops and ``from numpy import zeros, array``;
``scipy.sparse`` Laplacians by ``diags`` and ``kron`` solved by ``spsolve``
and ``splu``; ``fsolve``/``root``/``brentq``/``minimize`` inside a model;
``quad``; ``CubicSpline`` and ``interp1d``; log-densities summing lists;
``np.vectorize`` and ``np.piecewise``; a mixture model; a Kalman filter;
equations of state. Then: an unscented Kalman filter (``zeros`` and
``+=`` of outer products), n-body velocities corrected in place by their
mean, ``np.mean``/``np.std``/``np.append`` of lists, ``odeint`` with
``full_output``, a Radau ignition event read through the dense output,
``np.unwrap`` and complex powers, ``np.polyfit``, ``np.r_``/``np.c_`` and a
3-d ``np.kron``, a plain history array read through a view, Nelder-Mead,
``quad`` to infinity from an active limit, a ``vectorized=True`` rhs
forced by a periodic ``CubicSpline``, ``interp1d`` extrapolating,
``root(method='lm')``, Newton steps with ``splu`` of an active sparse
matrix, Python's ``max`` of tied values, a right-hand side writing into a
module-level buffer (a refusal that must name it), ``u_old = u``
aliases updated in place, and a model object whose bound methods are
Radau's ``fun``, ``jac`` and terminal event, with LSODA's dense output.

None of them knows about adsim; tests/numpy/test_user_programs_s13.py
differentiates them as they are."""
import math

import numpy as np
from numpy import array, exp, zeros
import scipy.sparse as sp
from scipy import stats
from scipy.integrate import odeint, quad, solve_bvp, solve_ivp
from scipy.interpolate import CubicSpline, interp1d
from scipy.optimize import brentq, fsolve, minimize, root
from scipy.sparse.linalg import splu, spsolve
from scipy.special import logsumexp


# ---- 1. Robertson's kinetics, rate constants in a dict, Radau with t_eval ---------------------

def robertson_rhs(t, y, k):
    y1, y2, y3 = y
    return [-k["k1"] * y1 + k["k3"] * y2 * y3,
            k["k1"] * y1 - k["k2"] * y2 ** 2 - k["k3"] * y2 * y3,
            k["k2"] * y2 ** 2]


def robertson_yield(params):
    rates = {"k1": params[0], "k2": 3e7, "k3": params[1]}
    sol = solve_ivp(robertson_rhs, (0.0, 40.0), [1.0, 0.0, 0.0], method="Radau",
                    t_eval=[0.4, 4.0, 40.0], args=(rates,), rtol=1e-10, atol=1e-12)
    return sol.y[2, -1] + 10.0 * sol.y[0, 1]


# ---- 2. the same chemistry with BDF, constants on self -----------------------------------------

class StiffReactor:
    def __init__(self, k1, k3):
        self.k1 = k1
        self.k2 = 3e7
        self.k3 = k3

    def rhs(self, t, y):
        a, b, c = y
        r1 = self.k1 * a
        r2 = self.k2 * b * b
        r3 = self.k3 * b * c
        return np.array([-r1 + r3, r1 - r2 - r3, r2])

    def run(self, t_end):
        sol = solve_ivp(self.rhs, (0.0, t_end), np.array([1.0, 0.0, 0.0]), method="BDF",
                        rtol=1e-10, atol=1e-12)
        return sol.y[:, -1]


def reactor_final_c(params):
    reactor = StiffReactor(params[0], params[1])
    return reactor.run(10.0)[2]


# ---- 3. a lambda reading module globals, LSODA --------------------------------------------------

KF = 2.0
KB = 0.5


def equilibration(params):
    global KF, KB
    KF, KB = params[0], params[1]
    sol = solve_ivp(lambda t, c: [-KF * c[0] + KB * c[1], KF * c[0] - KB * c[1]],
                    (0.0, 3.0), [1.0, 0.0], method="LSODA", rtol=1e-10, atol=1e-12)
    return sol.y[1, -1]


# ---- 4. Oregonator with a jac= callable, Radau --------------------------------------------------

def oregonator_peak(params):
    eps, q = params
    f = 1.0

    def rhs(t, u):
        x, z = u
        return [(x * (1 - x) - f * z * (x - q) / (x + q)) / eps, x - z]

    def jac(t, u):
        x, z = u
        dfx = (1 - 2 * x - f * z * (2 * q) / (x + q) ** 2) / eps
        return [[dfx, -f * (x - q) / (x + q) / eps], [1.0, -1.0]]

    sol = solve_ivp(rhs, (0.0, 2.0), [0.2, 0.1], method="Radau", jac=jac,
                    t_eval=np.linspace(0, 2, 9), rtol=1e-9, atol=1e-11)
    return np.sum(sol.y[0] ** 2) + sol.y[1, -1]


# ---- 5. an odeint pharmacokinetic model with Dfun ------------------------------------------------

def pk(y, t, ka, ke, v):
    gut, plasma = y
    return [-ka * gut, ka * gut / v - ke * plasma]


def pk_jac(y, t, ka, ke, v):
    return [[-ka, 0.0], [ka / v, -ke]]


def pk_cmax_proxy(params):
    ka, ke = params
    t = np.linspace(0.0, 12.0, 25)
    y = odeint(pk, [200.0, 0.0], t, args=(ka, ke, 30.0), Dfun=pk_jac)
    return np.sum(y[:, 1] * np.exp(-0.1 * t)) / 10.0


# ---- 6. a predator-prey model, dense_output and sol(t) -------------------------------------------

def lv_mean_prey(params):
    a, b = params

    def lv(t, z):
        x, y = z
        return [a * x - b * x * y, -0.8 * y + 0.3 * x * y]
    sol = solve_ivp(lv, [0, 8], [4.0, 2.0], dense_output=True, rtol=1e-10, atol=1e-10)
    ts = np.linspace(0, 8, 41)
    z = sol.sol(ts)
    return np.mean(z[0]) + 0.1 * sol.sol(5.0)[1]


# ---- 7. a falling object with a non-terminal event (apex) and a terminal one -----------------

def ball_apex_and_landing(params):
    v0, k = params

    def rhs(t, s):
        return [s[1], -9.81 - k * s[1] * abs(s[1])]

    def apex(t, s):
        return s[1]

    def ground(t, s):
        return s[0]
    ground.terminal = True
    ground.direction = -1
    sol = solve_ivp(rhs, (0, 50), [0.0, v0], events=[apex, ground], rtol=1e-10, atol=1e-10)
    return sol.y_events[0][0][0] + 2.0 * sol.t_events[1][0]


# ---- 8. a catalyst pellet by solve_bvp, Thiele modulus and order ----------------------------------

def effectiveness(params):
    phi, order = params

    def fun(x, y):
        c = np.maximum(y[0], 1e-12)
        return np.vstack([y[1], phi ** 2 * c ** order])

    def bc(ya, yb):
        return np.array([ya[1], yb[0] - 1.0])
    x = np.linspace(0, 1, 11)
    y = np.vstack([np.ones_like(x), np.zeros_like(x)])
    sol = solve_bvp(fun, bc, x, y, tol=1e-8)
    return sol.sol(1.0)[1] / phi ** 2


# ---- 9. a cooling fin with an unknown parameter p (solve_bvp p=) ---------------------------

def fin_heat(params):
    m, hl = params

    def fun(x, y, p):
        return np.vstack([y[1], m ** 2 * y[0]])

    def bc(ya, yb, p):
        # tip convection condition; p is the base heat flux (unknown)
        return np.array([ya[0] - 1.0, yb[1] + hl * yb[0], ya[1] + p[0]])
    x = np.linspace(0, 1, 8)
    y = np.vstack([np.linspace(1, 0.5, 8), -0.5 * np.ones(8)])
    sol = solve_bvp(fun, bc, x, y, p=[0.5], tol=1e-9)
    return sol.p[0] + sol.y[0, -1]


# ---- 10. explicit heat equation: a plain state updated through views ----------------------------

def heat_explicit(params):
    alpha, src = params
    n = 31
    dx = 1.0 / (n - 1)
    dt = 0.4 * dx * dx
    u = np.sin(np.pi * np.linspace(0, 1, n))
    for step in range(60):
        u[1:-1] += dt * (alpha * (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2 + src)
    return np.sum(u) * dx


# ---- 11. Burgers' equation, upwind, u = zeros then filled in a loop -----------------------------

def burgers_energy(params):
    nu, amp = params
    n = 40
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    dx = x[1] - x[0]
    u = zeros(n)
    for i in range(n):
        u[i] = 1.0 + amp * math.sin(x[i])
    dt = 0.01
    for _ in range(40):
        un = u.copy()
        u[1:] = un[1:] - un[1:] * dt / dx * (un[1:] - un[:-1]) + \
            nu * dt / dx ** 2 * (np.roll(un, -1)[1:] - 2 * un[1:] + un[:-1])
        u[0] = u[-1]
    return 0.5 * np.sum(u ** 2) * dx


# ---- 12. a 2-D diffusion step on a padded grid, slices and -= ----------------------------------

def diffusion_2d(params):
    D, k = params
    T = np.zeros((12, 12))
    T[5:7, 5:7] = 1.0
    dt = 0.1
    for _ in range(20):
        lap = T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:] - 4 * T[1:-1, 1:-1]
        T[1:-1, 1:-1] += dt * D * lap
        T[1:-1, 1:-1] -= dt * k * T[1:-1, 1:-1]
    return T.sum() + T[6, 6]


# ---- 13. a sparse Poisson problem by kron of diags, spsolve ------------------------------------

def poisson_2d(params):
    kappa, q = params
    n = 8
    h = 1.0 / (n + 1)
    T1 = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n)) / h ** 2
    I = sp.identity(n)
    A = kappa * (sp.kron(T1, I) + sp.kron(I, T1)) + sp.identity(n * n)
    b = q * np.ones(n * n)
    u = spsolve(A.tocsr(), b)
    return u.max() + u.mean()


# ---- 14. implicit Euler for a reaction-diffusion rod with splu reused -------------------------

def rod_implicit(params):
    D, r = params
    n = 20
    dx = 1.0 / (n + 1)
    dt = 0.01
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csc") / dx ** 2
    M = (sp.identity(n, format="csc") - dt * D * L).tocsc()
    lu = splu(M)
    u = np.exp(-50 * (np.linspace(dx, 1 - dx, n) - 0.5) ** 2)
    for _ in range(15):
        u = lu.solve(u + dt * r * u * (1 - u))
    return np.sum(u) * dx


# ---- 15. vapour pressure: bubble point by brentq (Antoine, Raoult) ------------------------------

def bubble_temperature(params):
    a_shift, x1 = params

    def psat(T, A, B, C):
        return 10 ** (A - B / (T + C))

    def residual(T):
        return x1 * psat(T, 4.0 + a_shift, 1200.0, -50.0) + \
            (1 - x1) * psat(T, 4.1, 1350.0, -60.0) - 1.0
    return brentq(residual, 250.0, 600.0, xtol=1e-13)


# ---- 16. Van der Waals volume by fsolve ----------------------------------------------------------

def vdw_volume(params):
    a, b = params
    R, T, P = 0.08314, 300.0, 10.0

    def eos(V):
        return P - R * T / (V - b) + a / V ** 2
    V = fsolve(eos, R * T / P, xtol=1e-13)[0]
    return V


# ---- 17. a CSTR steady state by root(method='hybr') with a dict -----------------------------

def cstr_conversion(params):
    p = {"k0": params[0], "E": params[1], "tau": 5.0, "Tf": 350.0, "J": 20.0}

    def balances(z):
        c, T = z
        r = p["k0"] * np.exp(-p["E"] / T) * c
        return [(1 - c) / p["tau"] - r, (p["Tf"] - T) / p["tau"] + p["J"] * r]
    sol = root(balances, [0.5, 360.0], tol=1e-13)
    return 1.0 - sol.x[0]


# ---- 18. a least-squares fit inside the model by minimize (BFGS) -------------------------------

T_DATA = np.linspace(0, 4, 9)


def fitted_rate(params):
    amp, decay = params
    data = amp * np.exp(-decay * T_DATA) + 0.05 * np.cos(3 * T_DATA)

    def sse(theta):
        return np.sum((theta[0] * np.exp(-theta[1] * T_DATA) - data) ** 2)
    res = minimize(sse, [1.0, 1.0], method="BFGS", options={"gtol": 1e-11})
    return res.x[1] + 0.1 * res.x[0]


# ---- 19. Planck's law integrated by quad --------------------------------------------------------

def band_power(params):
    T, lam_hi = params

    def planck(lam, T):
        return 1.0 / lam ** 5 / (np.exp(14387.8 / (lam * T)) - 1.0)
    val, err = quad(planck, 1.0, lam_hi, args=(T,), epsabs=1e-14, epsrel=1e-12)
    return val * 1e3


# ---- 20. a CubicSpline of a calibration table with an active node ------------------------------

CAL_X = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])


def calibrated_area(params):
    gain, bump = params
    y = gain * np.array([0.0, 0.8, 1.9, 2.7, 3.1, 3.2])
    y[2] += bump
    cs = CubicSpline(CAL_X, y, bc_type="natural")
    return cs.integrate(0.0, 5.0) + cs(2.5, 1) + cs(1.7)


# ---- 21. interp1d of a simulated curve, cubic ------------------------------------------------

def interp_readout(params):
    a, b = params
    xs = np.linspace(0, 2, 11)
    ys = a * xs ** 2 + np.sin(b * xs)
    f = interp1d(xs, ys, kind="cubic")
    g = interp1d(xs, ys)
    return f(1.23) + g(0.77)


# ---- 22. a log-likelihood summing a list -------------------------------------------------------

OBS = np.array([1.2, 0.4, 2.3, 1.9, 0.8, 1.5])


def loglik_list(params):
    mu, log_sigma = params
    sigma = np.exp(log_sigma)
    terms = [stats.norm.logpdf(y, mu, sigma) for y in OBS]
    prior = [stats.norm.logpdf(mu, 0, 10), stats.norm.logpdf(log_sigma, 0, 2)]
    return np.sum(terms) + sum(prior)


# ---- 23. np.vectorize of a scalar model with branches -------------------------------------------

def _drag_coefficient(re, c):
    if re < 1.0:
        return 24.0 / re
    elif re < 1000.0:
        return 24.0 / re * (1 + c * re ** 0.687)
    return 0.44


def settling(params):
    scale, c = params
    re = scale * np.array([0.5, 3.0, 40.0, 500.0, 2000.0])
    cd = np.vectorize(_drag_coefficient)(re, c)
    return np.sum(cd * re)


# ---- 24. np.piecewise friction factor ---------------------------------------------------------

def piecewise_friction(params):
    scale, rough = params
    re = scale * np.array([800.0, 1500.0, 5000.0, 20000.0])
    f = np.piecewise(re, [re < 2300, re >= 2300],
                     [lambda r: 64.0 / r, lambda r: 0.316 * r ** -0.25 + rough])
    return np.sum(f)


# ---- 25. a two-component Gaussian mixture log-likelihood with logsumexp -------------------------

MIX_DATA = np.array([-1.8, -1.1, -0.3, 0.2, 1.4, 2.2, 2.9])


def mixture_loglik(params):
    w, sep = params
    means = np.array([-1.0, -1.0 + sep])
    logw = np.log(np.array([w, 1 - w]))
    comp = logw[:, None] - 0.5 * (MIX_DATA[None, :] - means[:, None]) ** 2 - \
        0.5 * np.log(2 * np.pi)
    return np.sum(logsumexp(comp, axis=0))


# ---- 26. a Kalman filter written with zeros/array and list accumulation --------------------------

ZS = np.array([0.9, 2.1, 2.9, 4.2, 5.1, 5.8, 7.2])


def kalman_loglik(params):
    q, r = params
    F = array([[1.0, 1.0], [0.0, 1.0]])
    H = array([[1.0, 0.0]])
    Q = q * array([[0.25, 0.5], [0.5, 1.0]])
    x = zeros(2)
    P = np.eye(2) * 10.0
    ll = []
    for z in ZS:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + r
        K = P @ H.T / S
        innov = z - H @ x
        x = x + (K * innov).ravel()
        P = (np.eye(2) - K @ H) @ P
        ll.append(-0.5 * (np.log(2 * np.pi * S[0, 0]) + innov[0] ** 2 / S[0, 0]))
    return sum(ll)


# ---- 27. Peng-Robinson compressibility by np.roots of the cubic ------------------------------

def pr_compressibility(params):
    T, P = params
    Tc, Pc, omega, R = 190.6, 45.99, 0.012, 83.14
    kappa = 0.37464 + 1.54226 * omega - 0.26992 * omega ** 2
    alpha = (1 + kappa * (1 - np.sqrt(T / Tc))) ** 2
    a = 0.45724 * R ** 2 * Tc ** 2 / Pc * alpha
    b = 0.07780 * R * Tc / Pc
    A = a * P / (R * T) ** 2
    B = b * P / (R * T)
    roots = np.roots([1.0, -(1 - B), A - 3 * B ** 2 - 2 * B, -(A * B - B ** 2 - B ** 3)])
    real = roots[np.abs(roots.imag) < 1e-10].real
    return real.max()


# ---- 28. an odeint SIR model with the state filled by zeros and a list of params -----------------

def sir(y, t, beta, gamma):
    dydt = np.zeros(3)
    dydt[0] = -beta * y[0] * y[1]
    dydt[1] = beta * y[0] * y[1] - gamma * y[1]
    dydt[2] = gamma * y[1]
    return dydt


def sir_peak(params):
    t = np.linspace(0, 40, 81)
    out = odeint(sir, [0.99, 0.01, 0.0], t, args=tuple(params))
    return np.max(out[:, 1]) + out[-1, 2]


# ---- 29. a Crank-Nicolson cable equation with a dense solve per step -------------------------

def cable_cn(params):
    lam, tau = params
    n = 15
    dx = 0.1
    dt = 0.05
    L = (np.diag(-2 * np.ones(n)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1))
    L /= dx ** 2
    A = np.eye(n) - 0.5 * dt * (lam ** 2 * L - np.eye(n)) / tau
    B = np.eye(n) + 0.5 * dt * (lam ** 2 * L - np.eye(n)) / tau
    v = np.zeros(n)
    v[0] = 1.0
    for _ in range(10):
        v = np.linalg.solve(A, B @ v)
        v[0] = 1.0
    return v.sum()


# ---- 30. a Brusselator method of lines with BDF and jac_sparsity ----------------------------------

def brusselator_total(params):
    A, Bc = params
    n = 8
    dx = 1.0 / (n + 1)
    alpha = 0.02

    def rhs(t, y):
        u, v = y[:n], y[n:]
        up = np.concatenate([[1.0], u, [1.0]])
        vp = np.concatenate([[3.0], v, [3.0]])
        du = A + u * u * v - (Bc + 1) * u + alpha * (up[2:] - 2 * u + up[:-2]) / dx ** 2
        dv = Bc * u - u * u * v + alpha * (vp[2:] - 2 * v + vp[:-2]) / dx ** 2
        return np.concatenate([du, dv])
    band = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    S = sp.bmat([[band, sp.identity(n)], [sp.identity(n), band]])
    xs = np.linspace(dx, 1 - dx, n)
    y0 = np.concatenate([1 + np.sin(2 * np.pi * xs), 3 * np.ones(n)])
    sol = solve_ivp(rhs, (0, 2.0), y0, method="BDF", jac_sparsity=S, rtol=1e-9, atol=1e-11)
    return np.sum(sol.y[:n, -1])


# ---- 31. an adiabatic flame temperature by an energy balance (brentq) with a cp polynomial ----

def flame_temperature(params):
    phi, h_react = params
    cp = np.array([28.0, 4e-3, -1e-7])

    def enthalpy(T):
        return cp[0] * (T - 298) + cp[1] / 2 * (T ** 2 - 298 ** 2) + cp[2] / 3 * (T ** 3 - 298 ** 3)

    return brentq(lambda T: enthalpy(T) - phi * h_react, 300.0, 5000.0, xtol=1e-12)


# ---- 32. a global parameter vector read by an odeint rhs (Michaelis-Menten chain) ---------------

VMAX = np.array([1.0, 0.5])


def mm_chain(s, t):
    v1 = VMAX[0] * s[0] / (0.5 + s[0])
    v2 = VMAX[1] * s[1] / (0.2 + s[1])
    return [-v1, v1 - v2, v2]


def mm_product(params):
    global VMAX
    VMAX = params
    out = odeint(mm_chain, [2.0, 0.0, 0.0], [0.0, 2.0, 5.0], rtol=1e-10, atol=1e-12)
    return out[-1, 2] + out[1, 1]


# ---- 33. an unscented Kalman filter written with from numpy import zeros, += outer ----------

def ukf_loglik(params):
    q, r = params
    n = 2
    kappa = 1.0
    x = array([0.0, 1.0])
    P = np.eye(n)
    ll = 0.0
    for z in [0.8, 1.9, 3.2, 3.9]:
        S = np.linalg.cholesky((n + kappa) * P)
        sigmas = [x] + [x + S[:, i] for i in range(n)] + [x - S[:, i] for i in range(n)]
        weights = [kappa / (n + kappa)] + [0.5 / (n + kappa)] * (2 * n)
        prop = [array([s[0] + s[1] + 0.05 * np.sin(s[0]), s[1]]) for s in sigmas]
        xm = zeros(n)
        for w, s in zip(weights, prop):
            xm += w * s
        Pm = q * np.eye(n)
        for w, s in zip(weights, prop):
            Pm += w * np.outer(s - xm, s - xm)
        zs = [s[0] for s in prop]
        zm = np.dot(weights, zs)
        Pzz = r + sum(w * (zi - zm) ** 2 for w, zi in zip(weights, zs))
        Pxz = zeros(n)
        for w, s, zi in zip(weights, prop, zs):
            Pxz += w * (s - xm) * (zi - zm)
        K = Pxz / Pzz
        x = xm + K * (z - zm)
        P = Pm - np.outer(K, K) * Pzz
        ll += -0.5 * (np.log(2 * np.pi * Pzz) + (z - zm) ** 2 / Pzz)
    return ll


# ---- 34. n-body leapfrog: plain velocities corrected by their mean in place --------------------

def cluster_energy(params):
    soft, g = params
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.2], [-0.8, -0.5]])
    vel = np.array([[0.0, 0.1], [0.0, 0.5], [-0.4, 0.0], [0.2, -0.3]])
    mass = 2.0 * np.ones(4)
    vel -= np.mean(mass[:, None] * vel, 0) / np.mean(mass)
    dt = 0.01

    def accel(pos):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = np.sum(d ** 2, axis=-1) + soft ** 2
        inv3 = r2 ** -1.5
        np.fill_diagonal(inv3, 0.0)
        return g * np.sum(d * (inv3 * mass[None, :])[:, :, None], axis=1)
    a = accel(pos)
    for _ in range(30):
        vel += 0.5 * dt * a
        pos += dt * vel
        a = accel(pos)
        vel += 0.5 * dt * a
    return 0.5 * np.sum(mass[:, None] * vel ** 2)


# ---- 35. a posterior summed as a list, np.mean of a list and np.append -------------------------

def hier_logpost(params):
    mu, tau = params
    groups = [np.array([1.1, 0.7, 1.5]), np.array([2.0, 2.4]), np.array([0.3, 0.9, 0.6, 0.2])]
    means = [np.mean(gr) for gr in groups]
    lp = [stats.norm.logpdf(m, mu, tau) for m in means]
    spread = np.std([mu, means[0], means[1]])
    allm = np.append(means, mu)
    return np.sum(lp) + np.mean([lp[0], lp[2]]) - spread + np.var(allm)


# ---- 36. odeint with full_output and a Dfun on a stiff Robertson chemistry ---------------------

def robertson_odeint(params):
    k1, k3 = params

    def f(y, t):
        return [-k1 * y[0] + k3 * y[1] * y[2],
                k1 * y[0] - k3 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2]
    t = np.logspace(-3, 2, 12)
    t = np.concatenate([[0.0], t])
    y, info = odeint(f, [1.0, 0.0, 0.0], t, full_output=True, rtol=1e-10, atol=1e-12)
    return y[-1, 0] + 1e4 * y[3, 1]


# ---- 37. Radau with dense output and an event, rates passed by args= tuple(list) --------------

def ignition_delay(params):
    a, b = params

    def rhs(t, y, a, b):
        fuel, temp = y
        rate = a * fuel * np.exp(-b / temp)
        return [-rate, 50.0 * rate - 0.1 * (temp - 1.0)]

    def hot(t, y, a, b):
        return y[1] - 3.0
    hot.terminal = True
    sol = solve_ivp(rhs, (0, 100), [1.0, 1.0], method="Radau", events=hot,
                    args=tuple([a, b]), dense_output=True, rtol=1e-10, atol=1e-12)
    t_ign = sol.t_events[0][0]
    return t_ign + sol.sol(0.5 * t_ign)[1]


# ---- 38. a complex exponential with a non-integer power and np.unwrap of the phase -----------

def resonator_phase(params):
    w0, q = params
    w = np.linspace(0.5, 1.5, 21)
    h = 1.0 / (1 - (w / w0) ** 2 + 1j * w / (w0 * q))
    phase = np.unwrap(np.angle(h))
    g = np.e ** (1j * phase)
    return np.sum(phase * w) + np.sum(np.abs(h) ** 1.5) + np.real(np.sum(g))


# ---- 39. a polynomial trend fitted by np.polyfit inside the model ----------------------------

def trend_slope(params):
    a, b = params
    t = np.linspace(0, 1, 12)
    y = a * t + b * t ** 2 + 0.1 * np.sin(7 * t)
    coef = np.polyfit(t, y, 2)
    return coef[1] + np.polyval(coef, 0.5)


# ---- 40. np.r_ and np.c_ assembling a state with active pieces --------------------------------

def assembled(params):
    a, b = params
    left = np.linspace(0, 1, 4) * a
    v = np.r_[left, b, 2 * b, left[::-1]]
    m = np.c_[v, v ** 2]
    return np.sum(m[:, 0] * m[:, 1]) + np.kron(np.ones((2, 1, 2)), v[:3].reshape(1, 3, 1)).sum()


# ---- 41. a plain history array with a view kept, updated in place ------------------------------

def relaxation_history(params):
    k, u_inf = params
    hist = np.zeros((6, 3))
    current = hist[0]                 # a view the loop reads back
    current[:] = [1.0, 2.0, 3.0]
    for i in range(1, 6):
        hist[i] = hist[i - 1]
        hist[i] += 0.2 * k * (u_inf - hist[i - 1])
    return current.sum() + hist[-1].sum() + hist[:, 1].max()


# ---- 42. a reaction yield maximised by Nelder-Mead (no gradient in the optimiser) ------------

def best_temperature(params):
    e1, e2 = params

    def neg_yield(T):
        k1 = np.exp(10.0 - e1 / T[0])
        k2 = np.exp(12.0 - e2 / T[0])
        return -(k1 / (k1 + k2)) * (1 - np.exp(-k1 - k2))
    res = minimize(neg_yield, [4.0], method="Nelder-Mead",
                   options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 2000})
    return res.x[0]


# ---- 43. quad over a semi-infinite range with an active lower limit ----------------------------

def tail_mass(params):
    x0, s = params
    val, _ = quad(lambda x: np.exp(-x / s) / (1 + x ** 2), x0, np.inf, epsabs=1e-14,
                  epsrel=1e-12)
    return val


# ---- 44. solve_ivp with vectorized=True and a periodic CubicSpline forcing ---------------------

TIDE_T = np.linspace(0, 12, 7)


def tide_response(params):
    amp, k = params
    forcing = CubicSpline(TIDE_T, amp * np.array([0.0, 1.0, 0.2, -0.9, -0.4, 0.6, 0.0]),
                          bc_type="periodic")

    def rhs(t, y):
        return -k * y + forcing(t)
    sol = solve_ivp(rhs, (0, 12), [0.0], vectorized=True, t_eval=[3.0, 6.0, 12.0],
                    rtol=1e-10, atol=1e-12)
    return np.sum(sol.y[0] ** 2)


# ---- 45. interp1d extrapolating a saturation curve, fill_value="extrapolate" -----------------

def saturation_extrapolated(params):
    a, b = params
    p = np.array([1.0, 2.0, 4.0, 8.0])
    sat = a * p / (b + p)
    curve = interp1d(p, sat, kind="quadratic", fill_value="extrapolate")
    return curve(10.0) + curve(0.5) + curve(3.0)


# ---- 46. root(method='lm') of an overdetermined-looking equilibrium (square) -----------------

def speciation(params):
    logk1, logk2 = params

    def eqs(z):
        h, a = np.exp(z)
        return [np.log(a) + np.log(h) - logk1 - np.log(1.0 - a),
                h - a - 10 ** logk2 / h - 1e-3]
    sol = root(eqs, [np.log(1e-3), np.log(0.5)], method="lm", options={"xtol": 1e-14})
    return -np.log10(np.exp(sol.x[0]))


# ---- 47. a sparse reaction-diffusion Jacobian solved with splu of an active matrix --------------

def newton_steady(params):
    D, k = params
    n = 30
    dx = 1.0 / (n + 1)
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csc") / dx ** 2
    u = np.ones(n) * 0.5
    for _ in range(8):
        F = D * (L @ u) - k * u ** 2 + 1.0
        J = D * L - sp.diags(2 * k * u, format="csc")
        u = u - splu(J.tocsc()).solve(F)
    return np.mean(u)


# ---- 48. max of tied values and a log-sum over a list of arrays ---------------------------------

def tied_scores(params):
    a, b = params
    s = np.array([a, a, b, 0.5 * b])
    best = max(s)                        # a tie between the first two
    arrays = [np.array([a, b]), np.array([b, 2 * a])]
    return best + np.log(np.sum([np.exp(v).sum() for v in arrays])) + np.max(s) * 0.5


# ---- 49. a right-hand side writing into a preallocated module buffer, BDF with a buffered jac --

_F_BUF = np.zeros(3)
_J_BUF = np.zeros((3, 3))
_RATES = [0.04, 3e7, 1e4]


def _buffered_rhs(t, y):
    k1, k2, k3 = _RATES
    _F_BUF[0] = -k1 * y[0] + k3 * y[1] * y[2]
    _F_BUF[1] = k1 * y[0] - k2 * y[1] * y[1] - k3 * y[1] * y[2]
    _F_BUF[2] = k2 * y[1] * y[1]
    return _F_BUF


def _buffered_jac(t, y):
    k1, k2, k3 = _RATES
    _J_BUF[0, 0] = -k1
    _J_BUF[0, 1] = k3 * y[2]
    _J_BUF[0, 2] = k3 * y[1]
    _J_BUF[1, 0] = k1
    _J_BUF[1, 1] = -2.0 * k2 * y[1] - k3 * y[2]
    _J_BUF[1, 2] = -k3 * y[1]
    _J_BUF[2, 1] = 2.0 * k2 * y[1]
    return _J_BUF


def buffered_robertson(params):
    _RATES[0] = params[0]
    _RATES[2] = params[1]
    sol = solve_ivp(_buffered_rhs, (0.0, 5.0), [1.0, 0.0, 0.0], method="BDF",
                    jac=_buffered_jac, rtol=1e-10, atol=1e-12)
    return sol.y[2, -1]


# ---- 50. u_old aliasing u (no copy): a Gauss-Seidel-like sweep in place -----------------------

def gauss_seidel_sweeps(params):
    kappa, f = params
    n = 12
    u = np.zeros(n)
    u_old = u                      # the same array: updates are seen at once
    h = 1.0 / (n - 1)
    for _ in range(25):
        for i in range(1, n - 1):
            u[i] = 0.5 * (u_old[i - 1] + u_old[i + 1] + h * h * f / kappa)
    return u.sum() * h


# ---- 51. a threshold crossing with an active threshold, LSODA dense output ----------------------

class Tumour:
    """Gompertz growth under a drug; the time to reach a size limit."""

    def __init__(self, growth, limit):
        self.r = growth
        self.K = 10.0
        self.limit = limit

    def rhs(self, t, v):
        return self.r * v * np.log(self.K / v) - 0.05 * v

    def jac(self, t, v):
        return np.array([[self.r * (np.log(self.K / v[0]) - 1.0) - 0.05]])

    def reach(self, t, v):
        return v[0] - self.limit
    reach.terminal = True


def time_to_limit(params):
    model = Tumour(params[0], params[1])
    sol = solve_ivp(model.rhs, (0.0, 50.0), [0.5], method="Radau", jac=model.jac,
                    events=model.reach, rtol=1e-10, atol=1e-12)
    dense = solve_ivp(model.rhs, (0.0, 5.0), [0.5], method="LSODA", dense_output=True,
                      rtol=1e-10, atol=1e-12)
    return sol.t_events[0][0] + dense.sol(np.array([1.0, 2.5, 4.0])).sum()


# ---- 52. a profile started from np.linspace, relaxed through named views -------------------
# (np.linspace's grid is an active array of constants, its named views active views)

def relaxed_profile(params):
    D, lam = params
    u = np.linspace(1.0, 0.0, 21)
    inner, left, right = u[1:-1], u[:-2], u[2:]
    for _ in range(40):
        u += 0.0                                   # the author's hook for a source term
        inner += 0.2 * D * (left + right - 2 * inner) - 0.01 * lam * inner ** 2
    return np.sum(inner) / 19 + u[10]
