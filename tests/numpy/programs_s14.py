"""Twenty-nine small scientific programs written as their authors write
them, after the grids-as-constants work of issue 25: finite-difference
time loops on grids made by ``np.linspace``, ``np.ones`` and a float
``np.arange``, updated element by element from a copy (``un = u.copy()``)
and through views (``u[1:-1] += ...``, ``u[1:-1, 1:-1] = ...``); a
leapfrog wave with swapped arrays; Kalman filters written with ``from
numpy import zeros, eye, dot`` and with parameters in a dict; a Gaussian
mixture whose parameters live on a dataclass, summed over a list of
log-densities; an equation of state solved by a fixed number of Newton
steps; thin-film optics by characteristic matrices with ``from numpy
import array, cos, sin, dot`` over a wavelength grid; a hand-written RK4
filling a ``np.zeros`` trajectory row by row; a spectral fit summing a
list of Gaussian bands; a list of active values minus an array; an SIR
model keeping Python lists of its history handed to ``np.max`` and
``np.array``; a spring chain by Newton's method with a Jacobian assembled
in loops; a sparse Laplacian scaled through ``L.data *= D`` and read back
from its ``tocsc()`` copy; a Crank-Nicolson rod with ``solve_banded``;
Planck's law integrated on a ``np.geomspace`` grid; a Lane-Emden shooting
with a ``while`` loop on an active value; a Gaussian-process marginal
likelihood; a particle-in-a-box spectrum by ``eigh``; an Arrhenius fit
over a ``np.linspace`` temperature grid; a reaction-diffusion pair updated
in place through named views; the method of lines in ``solve_ivp`` over
a linspace grid its right-hand side closes over, with ``t_eval`` a grid
too; a Gaussian beam on a ``meshgrid`` of linspace axes; a finite-element
bar assembled as a csr matrix from Python lists; a mean-field magnet by
fixed-point sweeps into ``np.full``; a clamped beam whose rows are written
from lists of stencil weights; a Fabry-Perot etalon's complex round trips.

None of them knows about adsim; tests/numpy/test_user_programs_s14.py
differentiates them as they are."""
from dataclasses import dataclass

import numpy as np
from numpy import array, cos, dot, exp, eye, pi, sin, zeros
import scipy.sparse as sp
from scipy import stats
from scipy.linalg import solve_banded
from scipy.sparse.linalg import spsolve
from scipy.special import logsumexp


# ---- 1. 1-D diffusion, the classic "step 3" loop: np.ones start, u.copy(), scalar writes -------

def diffusion_steps(params):
    nu, height = params
    nx, nt = 21, 12
    dx = 2 / (nx - 1)
    dt = 0.2 * dx ** 2
    u = np.ones(nx)
    u[int(.5 / dx):int(1 / dx + 1)] = height
    for n in range(nt):
        un = u.copy()
        for i in range(1, nx - 1):
            u[i] = un[i] + nu * dt / dx ** 2 * (un[i + 1] - 2 * un[i] + un[i - 1])
    x = np.linspace(0, 2, nx)
    return np.sum(u ** 2 * x) / nx


# ---- 2. diffusion with a matrix operator and a float arange for the time loop ---------------

def matrix_diffusion(params):
    kappa, width = params
    N = 16
    x = np.linspace(0, 1, N + 1)
    dx = x[1] - x[0]
    temp_ = np.ones(N - 2)
    A = np.eye(N - 1) * (-2 / dx ** 2) + np.diag(temp_, +1) / dx ** 2 + np.diag(temp_, -1) / dx ** 2
    B = np.zeros(N - 1).reshape(-1, 1)
    u = np.exp(-(x - 0.5) ** 2 / width ** 2).reshape(-1, 1)
    dt = dx * dx / 0.02 / 2
    for it, tt in enumerate(np.arange(dt, 0.2 + dt, dt)):
        dudt = kappa * (A @ u[1:-1]) + kappa * B
        u[1:-1] += dudt * dt
    return np.sum(u ** 2) * dx


# ---- 3. Burgers by upwinding, written with from-imports ------------------------------------------

def burgers_upwind(params):
    c, nu = params
    from numpy import linspace, ones
    nx = 25
    x = linspace(0, 2, nx)
    dx = x[1] - x[0]
    dt = 0.02
    u = ones(nx)
    u[(x >= 0.5) & (x <= 1.0)] = 2.0
    for _ in range(8):
        un = u.copy()
        u[1:-1] = (un[1:-1] - c * un[1:-1] * dt / dx * (un[1:-1] - un[:-2])
                   + nu * dt / dx ** 2 * (un[2:] - 2 * un[1:-1] + un[:-2]))
        u[0] = 1.0
        u[-1] = 1.0
    return np.sum((u - 1.0) ** 2)


# ---- 4. a constant-velocity Kalman filter, noise levels in a dict --------------------------------

POSITIONS = np.array([0.1, 1.2, 1.9, 3.2, 3.9, 5.1, 6.2, 6.8])


def kalman_loglik(params):
    noise = {"q": params[0], "r": params[1]}
    dt = 1.0
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = noise["q"] * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    R = np.array([[noise["r"]]])
    x = np.array([0.0, 1.0])
    P = np.eye(2)
    ll = 0.0
    for z in POSITIONS:
        x = F @ x
        P = F @ P @ F.T + Q
        y = z - H @ x
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ y
        P = (np.eye(2) - K @ H) @ P
        ll += -0.5 * (np.log(2 * pi * np.linalg.det(S)) + y @ np.linalg.solve(S, y))
    return ll


# ---- 5. the same filter as a library writes it: from numpy import zeros, eye, dot; += and -= ----

def kalman_inplace(params):
    q, r = params
    x = zeros(2)
    P = eye(2) * 10.0
    F = array([[1.0, 1.0], [0.0, 1.0]])
    H = array([[1.0, 0.0]])
    Q = eye(2) * q
    total = 0.0
    for z in POSITIONS:
        x = dot(F, x)
        P = dot(F, dot(P, F.T)) + Q
        S = dot(H, dot(P, H.T)) + r
        K = dot(P, H.T) / S
        innovation = z - dot(H, x)
        x += dot(K, innovation)
        P -= dot(K, dot(H, P))
        total += innovation[0] ** 2 / S[0, 0] + np.log(S[0, 0])
    return total + x[1]


# ---- 6. a two-component Gaussian mixture, parameters on a dataclass ------------------------------

@dataclass
class Mixture:
    weight: float
    mu1: float
    mu2: float
    sigma: float = 0.8


SAMPLES = np.array([-1.2, -0.7, -0.1, 0.4, 1.9, 2.4, 2.8, 3.5])


def mixture_loglik(params):
    m = Mixture(weight=params[0], mu1=-0.5, mu2=params[1])
    logs = [np.logaddexp(np.log(m.weight) + stats.norm.logpdf(x, m.mu1, m.sigma),
                         np.log(1 - m.weight) + stats.norm.logpdf(x, m.mu2, m.sigma))
            for x in SAMPLES]
    return np.sum(logs) + logsumexp([np.log(m.weight), np.log(1 - m.weight)])


# ---- 7. van der Waals: compressibility by a fixed number of Newton steps -----------------------

def vdw_fugacity(params):
    a, b = params
    R, T, P = 0.08314, 300.0, 20.0
    A = a * P / (R * T) ** 2
    Bc = b * P / (R * T)
    Z = 1.0
    for _ in range(30):
        f = Z ** 3 - (1 + Bc) * Z ** 2 + A * Z - A * Bc
        df = 3 * Z ** 2 - 2 * (1 + Bc) * Z + A
        Z -= f / df
    ln_phi = Z - 1 - np.log(Z - Bc) - A / Z
    return ln_phi


# ---- 8. a two-layer antireflection stack by characteristic matrices ------------------------------

def stack_reflectance(params):
    d1, d2 = params
    n0, n1, n2, ns = 1.0, 1.38, 2.1, 1.52
    total = 0.0
    for lam in np.linspace(450.0, 650.0, 5):
        M = eye(2, dtype=complex)
        for n, d in ((n1, d1), (n2, d2)):
            delta = 2 * pi * n * d / lam
            layer = array([[cos(delta), 1j * sin(delta) / n], [1j * n * sin(delta), cos(delta)]])
            M = dot(M, layer)
        B, C = dot(M, array([1.0, ns]))
        r = (n0 * B - C) / (n0 * B + C)
        total += abs(r) ** 2
    return total


# ---- 9. predator-prey by a hand-written RK4 into a zeros trajectory, parameters on an object ----

class PredatorPrey:
    def __init__(self, alpha, beta, delta=0.4, gamma=0.6):
        self.alpha, self.beta, self.delta, self.gamma = alpha, beta, delta, gamma

    def rhs(self, y):
        x, z = y
        return np.array([self.alpha * x - self.beta * x * z, self.delta * x * z - self.gamma * z])


def rk4_trajectory(params):
    model = PredatorPrey(params[0], params[1])
    nt, dt = 40, 0.05
    Y = np.zeros((nt + 1, 2))
    Y[0] = [1.5, 1.0]
    for k in range(nt):
        k1 = model.rhs(Y[k])
        k2 = model.rhs(Y[k] + dt / 2 * k1)
        k3 = model.rhs(Y[k] + dt / 2 * k2)
        k4 = model.rhs(Y[k] + dt * k3)
        Y[k + 1] = Y[k] + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return Y[:, 0].mean() + Y[-1, 1]


# ---- 10. a spectrum as a sum of Gaussian bands over a list of concentrations --------------------

WAVELENGTHS = np.linspace(400.0, 700.0, 31)
MEASURED = 0.8 * np.exp(-((WAVELENGTHS - 480) / 30) ** 2) + \
    0.3 * np.exp(-((WAVELENGTHS - 600) / 40) ** 2)


def band_fit(params):
    conc = [params[0], params[1]]
    centers, widths = [480.0, 600.0], [30.0, 40.0]
    model = sum([c * np.exp(-((WAVELENGTHS - m) / w) ** 2)
                 for c, m, w in zip(conc, centers, widths)])
    residual = model - MEASURED
    return np.mean(residual ** 2) + 1e-3 * np.sum(np.square(conc))


# ---- 11. linear advection-diffusion in 2-D on a np.zeros grid, boundaries set every step ---------

def advection_2d(params):
    c, nu = params
    nx = ny = 12
    dx = dy = 2 / (nx - 1)
    dt = 0.01
    u = np.ones((ny, nx))
    u[int(.5 / dy):int(1 / dy + 1), int(.5 / dx):int(1 / dx + 1)] = 2.0
    for _ in range(6):
        un = u.copy()
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - c * dt / dx * (un[1:-1, 1:-1] - un[1:-1, :-2])
                         - c * dt / dy * (un[1:-1, 1:-1] - un[:-2, 1:-1])
                         + nu * dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, :-2])
                         + nu * dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[:-2, 1:-1]))
        u[0, :] = 1
        u[-1, :] = 1
        u[:, 0] = 1
        u[:, -1] = 1
    return np.sum(u ** 2) * dx * dy


# ---- 12. a calibration line: a list of predictions minus an array of readings -------------------

READINGS = np.array([0.52, 0.98, 1.55, 2.02, 2.41])


def calibration_misfit(params):
    intercept, slope = params
    predicted = [intercept + slope * k for k in range(5)]
    residuals = predicted - READINGS
    return np.var(residuals) + np.mean([abs(r) for r in residuals]) + np.std(predicted)


# ---- 13. SIR by Euler steps, the history in Python lists -------------------------------------

def sir_history(params):
    beta, gamma = params
    S, I, R = [0.99], [0.01], [0.0]
    dt = 0.5
    for _ in range(40):
        new_inf = beta * S[-1] * I[-1] * dt
        new_rec = gamma * I[-1] * dt
        S.append(S[-1] - new_inf)
        I.append(I[-1] + new_inf - new_rec)
        R.append(R[-1] + new_rec)
    history = np.array([S, I, R])
    return np.max(I) + history[2, -1] + np.mean(np.diff(S))


# ---- 14. a spring chain under load: Newton with a Jacobian assembled in loops -------------------

def spring_chain(params):
    k, load = params
    n = 5
    u = np.zeros(n)
    for _ in range(8):
        F = np.zeros(n)
        J = np.zeros((n, n))
        for i in range(n):
            left = u[i] - (u[i - 1] if i > 0 else 0.0)
            F[i] += k * (left + 0.1 * left ** 3)
            J[i, i] += k * (1 + 0.3 * left ** 2)
            if i > 0:
                J[i, i - 1] -= k * (1 + 0.3 * left ** 2)
            if i < n - 1:
                right = u[i + 1] - u[i]
                F[i] -= k * (right + 0.1 * right ** 3)
                J[i, i] += k * (1 + 0.3 * right ** 2)
                J[i, i + 1] -= k * (1 + 0.3 * right ** 2)
        F[-1] -= load
        u -= np.linalg.solve(J, F)
    return u[-1] + 0.1 * np.sum(u)


# ---- 15. a diffusion step with a sparse Laplacian scaled through L.data, its csc copy read -------

def sparse_implicit(params):
    D, decay = params
    n = 10
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
    L.data *= D
    M = L.tocsc()
    stiffest = M.data.min()
    A = (sp.identity(n, format="csc") - 0.1 * M).tocsc()
    u = np.exp(-np.linspace(-1, 1, n) ** 2)
    for _ in range(4):
        u = spsolve(A, u) * (1 - decay * 0.1)
    return np.sum(u) + stiffest


# ---- 16. a rod by Crank-Nicolson with solve_banded -----------------------------------------------

def crank_nicolson_rod(params):
    alpha, source = params
    n, dt = 12, 0.01
    dx = 1.0 / (n + 1)
    r = alpha * dt / dx ** 2
    ab = np.zeros((3, n))
    ab[0, 1:] = -r / 2
    ab[1, :] = 1 + r
    ab[2, :-1] = -r / 2
    x = np.linspace(dx, 1 - dx, n)
    T = np.sin(pi * x)
    for _ in range(10):
        rhs = (1 - r) * T
        rhs[1:] += r / 2 * T[:-1]
        rhs[:-1] += r / 2 * T[1:]
        T = solve_banded((1, 1), ab, rhs + dt * source)
    return np.sum(T) * dx


# ---- 17. Planck's law on a geometric wavelength grid, trapezoid --------------------------------

def band_power(params):
    T, emissivity = params
    h, c, kB = 6.626e-34, 2.998e8, 1.381e-23
    lam = np.geomspace(2e-7, 2e-5, 80)
    spectral = 2 * h * c ** 2 / lam ** 5 / (np.exp(h * c / (lam * kB * T)) - 1)
    visible = (lam > 4e-7) & (lam < 7e-7)
    return emissivity * np.trapezoid(spectral, lam) / T ** 4 + np.trapezoid(spectral[visible],
                                                                            lam[visible]) * 1e-10


# ---- 18. Lane-Emden by RK4 shooting until theta crosses zero (a while loop) --------------------

def lane_emden_radius(params):
    n_index, step = params[0], 0.02 * params[1]

    def f(xi, y):
        theta, dtheta = y
        return np.array([dtheta, -np.abs(theta) ** n_index - 2 * dtheta / xi])

    xi = 1e-3
    y = np.array([1.0 - xi ** 2 / 6, -xi / 3])
    while y[0] > 0:
        k1 = f(xi, y)
        k2 = f(xi + step / 2, y + step / 2 * k1)
        k3 = f(xi + step / 2, y + step / 2 * k2)
        k4 = f(xi + step, y + step * k3)
        y_new = y + step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if y_new[0] <= 0:
            return xi + step * y[0] / (y[0] - y_new[0])
        y, xi = y_new, xi + step
    return xi


# ---- 19. a Gaussian-process marginal likelihood --------------------------------------------------

GP_X = np.linspace(0.0, 5.0, 9)
GP_Y = np.sin(GP_X) + 0.1 * np.cos(3 * GP_X)


def gp_evidence(params):
    log_ell, log_noise = params
    ell, noise = np.exp(log_ell), np.exp(log_noise)
    d = np.subtract.outer(GP_X, GP_X)
    K = np.exp(-0.5 * (d / ell) ** 2) + noise ** 2 * np.eye(GP_X.size)
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, GP_Y))
    return -0.5 * GP_Y @ alpha - np.sum(np.log(np.diag(L))) - 0.5 * GP_X.size * np.log(2 * pi)


# ---- 20. a particle in a box with a linear potential: the lowest levels by eigh ------------------

def box_levels(params):
    slope, mass = params
    n = 20
    x = np.linspace(0, 1, n + 2)[1:-1]
    h = x[1] - x[0]
    kinetic = (np.diag(np.full(n, 2.0)) - np.diag(np.ones(n - 1), 1)
               - np.diag(np.ones(n - 1), -1)) / (2 * mass * h ** 2)
    H = kinetic + np.diag(slope * x)
    energies = np.linalg.eigh(H)[0]
    return energies[0] + 0.5 * energies[1]


# ---- 21. an Arrhenius fit over a linspace temperature grid, constants in a dict ------------------

RATES = np.array([0.012, 0.025, 0.049, 0.091, 0.16, 0.27])


def arrhenius_fit(params):
    consts = {"R": 8.314, "Tref": 350.0}
    ln_A, Ea_kJ = params
    T = np.linspace(320.0, 380.0, 6)
    k = np.exp(ln_A - Ea_kJ * 1000 / consts["R"] * (1 / T - 1 / consts["Tref"]))
    return np.sum((np.log(k) - np.log(RATES)) ** 2)


# ---- 22. Gray-Scott-like pair on a linspace grid, updated in place through named views ----------

def reaction_diffusion(params):
    feed, kill = params
    n = 24
    x = np.linspace(0, 1, n)
    u = 1.0 - 0.5 * np.exp(-((x - 0.5) / 0.1) ** 2)
    v = np.linspace(0.0, 0.0, n) + 0.25 * np.exp(-((x - 0.5) / 0.1) ** 2)
    ui, vi = u[1:-1], v[1:-1]
    for _ in range(15):
        lap_u = u[:-2] - 2 * ui + u[2:]
        lap_v = v[:-2] - 2 * vi + v[2:]
        uvv = ui * vi * vi
        ui += 0.2 * lap_u - uvv + feed * (1 - ui)
        vi += 0.1 * lap_v + uvv - (feed + kill) * vi
    return np.sum(v) / n + u[n // 2]


# ---- 23. a leapfrog wave with swapped plain arrays ----------------------------------------------

def leapfrog_wave(params):
    c, damping = params
    n, dt = 30, 0.01
    x = np.linspace(0, 1, n)
    dx = x[1] - x[0]
    C2 = (c * dt / dx) ** 2
    u_prev = np.exp(-200 * (x - 0.3) ** 2)
    u = u_prev.copy()
    for _ in range(25):
        u_next = np.zeros(n)
        u_next[1:-1] = (2 * u[1:-1] - (1 - damping * dt) * u_prev[1:-1]
                        + C2 * (u[2:] - 2 * u[1:-1] + u[:-2])) / (1 + damping * dt)
        u_prev, u = u, u_next
    return np.sum(u ** 2) * dx


# ---- 24. the method of lines: solve_ivp over a linspace grid the rhs closes over ----------------

def method_of_lines(params):
    from scipy.integrate import solve_ivp
    D, k = params
    x = np.linspace(0, 1, 12)
    dx = x[1] - x[0]
    source = np.sin(pi * x)

    def rhs(t, u):
        dudt = np.zeros_like(u)
        dudt[1:-1] = D * (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2 - k * u[1:-1] + source[1:-1]
        return dudt

    sol = solve_ivp(rhs, (0.0, 0.2), np.zeros(x.size), t_eval=np.linspace(0.0, 0.2, 5),
                    method="RK45", rtol=1e-10, atol=1e-12)
    return np.trapezoid(sol.y[:, -1], x) + sol.y[5, 2]


# ---- 25. a Gaussian beam on a meshgrid of linspace axes, integrated twice ---------------------

def beam_power(params):
    x0, w = params
    x = np.linspace(-2, 2, 41)
    y = np.linspace(-1.5, 1.5, 31)
    X, Y = np.meshgrid(x, y)
    intensity = np.exp(-2 * ((X - x0) ** 2 + Y ** 2) / w ** 2)
    aperture = (X ** 2 + Y ** 2) < 1.0
    return np.trapezoid(np.trapezoid(intensity * aperture, x, axis=1), y)


# ---- 26. a bar of two materials by finite elements: csr assembly from lists, Dirichlet rows -----

def fem_bar(params):
    E1, E2 = params
    n_el = 6
    nodes = np.linspace(0.0, 1.0, n_el + 1)
    rows, cols, vals = [], [], []
    for e in range(n_el):
        h = nodes[e + 1] - nodes[e]
        k_e = (E1 if e < n_el // 2 else E2) / h
        for a, b, s in ((0, 0, 1.0), (0, 1, -1.0), (1, 0, -1.0), (1, 1, 1.0)):
            rows.append(e + a)
            cols.append(e + b)
            vals.append(s * k_e)
    K = sp.csr_matrix((vals, (rows, cols)), shape=(n_el + 1, n_el + 1))
    f = np.full(n_el + 1, 1.0 / n_el)
    u = np.zeros(n_el + 1)
    u[1:] = spsolve(K[1:, 1:].tocsc(), f[1:])
    return u[-1] + np.sum(K.diagonal()) * 1e-3


# ---- 27. a mean-field magnetisation by fixed-point sweeps into a np.full array -------------------

def mean_field_magnet(params):
    J, h = params
    n = 8
    m = np.full(n, 0.5)
    for _ in range(30):
        neighbours = np.roll(m, 1) + np.roll(m, -1)
        m[:] = np.tanh(J * neighbours + h)
    return np.mean(m) + 0.1 * m[0] * m[3]


# ---- 28. a clamped beam by fourth differences: rows written from lists of stencil weights -------

def beam_deflection(params):
    EI, load = params
    n = 12
    h = 1.0 / (n + 1)
    A = np.zeros((n, n))
    for i in range(2, n - 2):
        A[i, i - 2:i + 3] = [1, -4, 6, -4, 1]
    A[0, :3] = [7, -4, 1]
    A[1, :4] = [-4, 6, -4, 1]
    A[-2, -4:] = [1, -4, 6, -4]
    A[-1, -3:] = [1, -4, 7]
    x = np.linspace(h, 1 - h, n)
    q = load * np.sin(np.pi * x)
    w = np.linalg.solve(EI / h ** 4 * A, q)
    return np.max(np.abs(w)) + np.sum(w) * h


# ---- 29. a Fabry-Perot etalon: complex round trips over a wavelength grid -----------------------

def etalon_transmission(params):
    thickness, reflectivity = params
    n_glass = 1.5
    wl = np.linspace(600e-9, 610e-9, 15)
    delta = 4 * np.pi * n_glass * thickness * 1e-6 / wl
    r = np.sqrt(reflectivity)
    t = (1 - reflectivity) / (1 - r ** 2 * np.exp(1j * delta))
    return np.mean(np.abs(t) ** 2)
