"""Sixteen small scientific programs written as their authors write them:
NumPy's names imported directly, workspaces made with zeros and filled in
place, Python loops over time steps with branches on values, lists of
arrays stacked at the end, dataclasses and classes with properties,
functools.reduce, np.vectorize and np.apply_along_axis, Fortran-ordered
matrices, integer data mixed with floats. None of them knows about adsim;
tests/numpy/test_user_programs_s7.py differentiates them as they are."""
import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy import arange, array, einsum, exp, ones, pi, roll, sin, zeros


# ---- 1. lattice Boltzmann (D2Q9): decay of a shear wave ----------------------------------

W9 = array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
C9 = array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [-1, 1], [-1, -1], [1, -1]])


def lbm_equilibrium(rho, u):
    cu = 3.0 * einsum("qd,dxy->qxy", C9, u)
    usq = 1.5 * (u[0] ** 2 + u[1] ** 2)
    return W9[:, None, None] * rho * (1.0 + cu + 0.5 * cu ** 2 - usq)


def lbm_shear_wave_energy(params, nx=10, ny=8, steps=12):
    """Kinetic energy left after BGK collisions and streaming, from the
    relaxation time and the initial amplitude of a sinusoidal shear flow."""
    tau, amplitude = params
    y = arange(ny)
    rho = ones((nx, ny))
    u = zeros((2, nx, ny))
    u[0, :, :] = amplitude * sin(2 * pi * y / ny)[None, :]
    f = lbm_equilibrium(rho, u)
    for _ in range(steps):
        rho = f.sum(axis=0)
        u = einsum("qd,qxy->dxy", C9, f) / rho
        f += -(f - lbm_equilibrium(rho, u)) / tau
        for q in range(9):
            f[q] = roll(roll(f[q], C9[q, 0], axis=0), C9[q, 1], axis=1)
    rho = f.sum(axis=0)
    u = einsum("qd,qxy->dxy", C9, f) / rho
    return 0.5 * np.sum(rho * (u ** 2).sum(axis=0))


# ---- 2. molecular dynamics: velocity Verlet with a cut-off -------------------------------

def lj_forces(pos, eps, sigma, rcut=2.5):
    """Lennard-Jones forces and energy over the pairs closer than rcut."""
    forces = np.zeros_like(pos)
    i, j = np.triu_indices(len(pos), 1)
    rij = pos[i] - pos[j]
    r2 = (rij ** 2).sum(axis=1)
    close = r2 < rcut ** 2
    i, j, rij, r2 = i[close], j[close], rij[close], r2[close]
    sr6 = (sigma ** 2 / r2) ** 3
    fij = (24.0 * eps * (2.0 * sr6 ** 2 - sr6) / r2)[:, None] * rij
    np.add.at(forces, i, fij)
    np.add.at(forces, j, -fij)
    return forces, np.sum(4.0 * eps * (sr6 ** 2 - sr6))


def md_mean_kinetic_energy(params, steps=15, dt=0.004):
    eps, sigma = params
    grid = np.array([(a, b) for a in range(3) for b in range(3)], dtype=float)
    pos = 1.15 * grid + 0.03 * np.cos(7.0 * grid[:, ::-1] + 1.0)
    vel = np.zeros_like(pos)
    forces, _ = lj_forces(pos, eps, sigma)
    kinetic = []
    for _ in range(steps):
        vel += 0.5 * dt * forces
        pos = pos + dt * vel
        forces, potential = lj_forces(pos, eps, sigma)
        vel += 0.5 * dt * forces
        kinetic.append(0.5 * np.sum(vel ** 2))
    return np.mean(kinetic) + float(dt) * potential


# ---- 3. Kalman filter and Rauch-Tung-Striebel smoother -----------------------------------

@dataclass
class ConstantVelocity:
    dt: float
    q: float
    r: float
    H = np.array([[1.0, 0.0]])

    @property
    def F(self):
        return np.array([[1.0, self.dt], [0.0, 1.0]])

    @property
    def Q(self):
        dt = self.dt
        return self.q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])

    @property
    def R(self):
        return np.array([[self.r]])


def kalman_filter(model, zs):
    x, P = np.zeros(2), 10.0 * np.eye(2)
    xs, Ps, x_pred, P_pred = [], [], [], []
    F, H = model.F, model.H
    for z in zs:
        x = F @ x
        P = F @ P @ F.T + model.Q
        x_pred.append(x)
        P_pred.append(P)
        S = H @ P @ H.T + model.R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ (np.atleast_1d(z) - H @ x)
        P = (np.eye(2) - K @ H) @ P
        xs.append(x)
        Ps.append(P)
    return np.array(xs), np.array(Ps), np.array(x_pred), np.array(P_pred)


def rts_smoother(model, xs, Ps, x_pred, P_pred):
    xs_s, Ps_s = xs.copy(), Ps.copy()
    for k in range(len(xs) - 2, -1, -1):
        C = Ps[k] @ model.F.T @ np.linalg.inv(P_pred[k + 1])
        xs_s[k] = xs[k] + C @ (xs_s[k + 1] - x_pred[k + 1])
        Ps_s[k] = Ps[k] + C @ (Ps_s[k + 1] - P_pred[k + 1]) @ C.T
    return xs_s, 0.5 * (Ps_s + Ps_s.swapaxes(1, 2))


TRACK_T = np.arange(25) * 0.1
TRACK_V = 1.0 + 0.5 * np.sin(TRACK_T)
TRACK_Z = np.cumsum(TRACK_V) * 0.1 + 0.05 * np.cos(13.0 * TRACK_T)


def smoothed_velocity_error(log_qr):
    model = ConstantVelocity(dt=0.1, q=np.exp(log_qr[0]), r=np.exp(log_qr[1]))
    xs_s, Ps_s = rts_smoother(model, *kalman_filter(model, TRACK_Z))
    return np.mean((xs_s[:, 1] - TRACK_V) ** 2) + 1e-3 * np.trace(Ps_s, axis1=1, axis2=2).sum()


# ---- 4. hidden Markov model: forward-backward in log space -------------------------------

def logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)), axis=axis)


def forward_backward(log_pi, log_A, log_B):
    T, K = log_B.shape
    log_alpha = np.zeros((T, K))
    log_beta = np.zeros((T, K))
    log_alpha[0] = log_pi + log_B[0]
    for t in range(1, T):
        log_alpha[t] = logsumexp(log_alpha[t - 1][:, None] + log_A, axis=0) + log_B[t]
    for t in range(T - 2, -1, -1):
        log_beta[t] = logsumexp(log_A + log_B[t + 1] + log_beta[t + 1], axis=1)
    loglik = logsumexp(log_alpha[-1])
    return loglik, np.exp(log_alpha + log_beta - loglik)


HMM_Y = np.array([0.1, -0.3, 0.2, 2.1, 1.8, 2.4, 1.9, -0.2, 0.0, 0.3, 2.2, 2.0])


def hmm_objective(theta):
    """theta: the two emission means and the logit of staying in a state."""
    means, stay = theta[:2], 1.0 / (1.0 + np.exp(-theta[2]))
    log_A = np.log(np.stack([np.stack([stay, 1 - stay]), np.stack([1 - stay, stay])]))
    log_B = np.stack([-0.5 * (HMM_Y - mu) ** 2 - 0.5 * math.log(2 * math.pi) for mu in means],
                     axis=1)
    loglik, gamma = forward_backward(np.log(np.array([0.5, 0.5])), log_A, log_B)
    return -loglik + 0.1 * np.sum(gamma[:, 1] * HMM_Y)


# ---- 5. power flow by Newton-Raphson (polar form, complex voltages) ----------------------

LINES = [(0, 1, 0.02 + 0.06j), (0, 2, 0.08 + 0.24j), (1, 2, 0.06 + 0.18j)]


def admittance_matrix(lines, n):
    Y = np.zeros((n, n), dtype=complex)
    for a, b, z in lines:
        Y[a, a] += 1 / z
        Y[b, b] += 1 / z
        Y[a, b] -= 1 / z
        Y[b, a] -= 1 / z
    return Y


def solve_power_flow(loads, tol=1e-10, max_iter=20):
    """loads = (P1, P2, Q1, Q2) drawn at the two PQ buses; bus 0 is the slack."""
    Ybus = admittance_matrix(LINES, 3)
    pq = [1, 2]
    S_spec = -(loads[:2] + 1j * loads[2:])
    Va, Vm = np.zeros(3), np.ones(3)
    for it in range(max_iter):
        V = Vm * np.exp(1j * Va)
        Ibus = Ybus @ V
        mis = V * np.conj(Ibus) - np.r_[0.0, S_spec]
        F = np.r_[mis[pq].real, mis[pq].imag]
        if np.linalg.norm(F, np.inf) < tol:
            break
        dS_dVa = 1j * np.diag(V) @ np.conj(np.diag(Ibus) - Ybus @ np.diag(V))
        Vn = np.diag(V / Vm)
        dS_dVm = np.diag(V) @ np.conj(Ybus @ Vn) + np.conj(np.diag(Ibus)) @ Vn
        J = np.block([[dS_dVa[np.ix_(pq, pq)].real, dS_dVm[np.ix_(pq, pq)].real],
                      [dS_dVa[np.ix_(pq, pq)].imag, dS_dVm[np.ix_(pq, pq)].imag]])
        dx = np.linalg.solve(J, -F)
        Va[pq] += dx[:2]
        Vm[pq] += dx[2:]
    slack = V[0] * np.conj(Ibus[0])
    return np.array([Vm[1], Vm[2], Va[1], Va[2], slack.real, slack.imag])


# ---- 6. Black-Scholes by Crank-Nicolson finite differences -------------------------------

def crank_nicolson_put(params, S0=1.0, K=1.0, T=0.5, M=40, N=25, Smax=3.0):
    """European put on a uniform price grid: the price at S0 from (sigma, r)."""
    sigma, r = params
    S = np.linspace(0.0, Smax, M + 1)
    dt = T / N
    j = np.arange(1, M)
    a = 0.25 * dt * (sigma ** 2 * j ** 2 - r * j)
    b = -0.5 * dt * (sigma ** 2 * j ** 2 + r)
    c = 0.25 * dt * (sigma ** 2 * j ** 2 + r * j)
    A = np.zeros((M - 1, M - 1), order="F")
    B = np.zeros((M - 1, M - 1), order="F")
    A += np.diag(1 - b) - np.diag(a[1:], -1) - np.diag(c[:-1], 1)
    B += np.diag(1 + b) + np.diag(a[1:], -1) + np.diag(c[:-1], 1)
    V = np.maximum(K - S, 0.0)
    for n in range(N):
        tau = (n + 1) * dt
        rhs = B @ V[1:-1]
        rhs[0] += a[0] * (K * np.exp(-r * (tau - dt)) + K * np.exp(-r * tau))
        V[1:-1] = np.linalg.solve(A, rhs)
        V[0] = K * np.exp(-r * tau)
        V[-1] = 0.0
    return np.interp(S0, S, V)


# ---- 7. chemical equilibrium: ammonia synthesis from Gibbs energies ----------------------

SPECIES = {"N2": {"Hf": 0.0, "S": 191.6, "nu": -1},
           "H2": {"Hf": 0.0, "S": 130.7, "nu": -3},
           "NH3": {"Hf": -45.9e3, "S": 192.8, "nu": 2}}
R_GAS = 8.314


def ammonia_yield(conditions, feed=(1.0, 3.0, 0.0)):
    """Mole fraction of NH3 at equilibrium from (T in K, P in bar)."""
    T, P = conditions
    dH = sum(s["nu"] * s["Hf"] for s in SPECIES.values())
    dS = sum(s["nu"] * s["S"] for s in SPECIES.values())
    lnK = -(dH - T * dS) / (R_GAS * T)
    nu = np.array([s["nu"] for s in SPECIES.values()])
    n0 = np.array(feed)
    xi = 0.5
    for it in range(50):
        n = n0 + nu * xi
        total = n.sum()
        g = np.sum(nu * np.log(n / total)) + nu.sum() * np.log(P) - lnK
        dg = np.sum(nu ** 2 / n) - nu.sum() ** 2 / total
        step = g / dg
        xi = np.clip(xi - step, 1e-9, 0.999999)
        if abs(step) < 1e-13:
            break
    n = n0 + nu * xi
    return n[2] / n.sum()


# ---- 8. two-stream radiative transfer through layers (adding method) ---------------------

class Layer:
    """A homogeneous layer: optical depth, single-scattering albedo, asymmetry."""

    def __init__(self, tau, omega, g=0.85):
        self.tau, self.omega, self.g = tau, omega, g

    @property
    def gamma1(self):
        return 2.0 - self.omega * (1.0 + self.g)

    @property
    def gamma2(self):
        return self.omega * (1.0 - self.g)

    @property
    def reflectance_transmittance(self):
        k = np.sqrt(self.gamma1 ** 2 - self.gamma2 ** 2)
        denominator = k * np.cosh(k * self.tau) + self.gamma1 * np.sinh(k * self.tau)
        return self.gamma2 * np.sinh(k * self.tau) / denominator, k / denominator


def add_layers(top, bottom):
    R1, T1 = top
    R2, T2 = bottom
    return R1 + T1 ** 2 * R2 / (1.0 - R1 * R2), T1 * T2 / (1.0 - R1 * R2)


def cloud_albedo(params, surface_albedo=0.15):
    """Albedo of three cloud layers over a surface: three optical depths then
    three single-scattering albedos."""
    layers = [Layer(t, w) for t, w in zip(params[:3], params[3:])]
    stack = [layer.reflectance_transmittance for layer in layers] + [(surface_albedo, 0.0)]
    R, T = functools.reduce(add_layers, stack)
    return R


# ---- 9. a stage-structured population with density dependence ---------------------------

def survival_curve(age, scale):
    return np.exp(-((age / scale) ** 1.5))


def projected_population(params, years=30):
    """Total population after ``years`` from (fecundity, crowding, survival scale)."""
    fecundity, crowding, scale = params
    ages = np.arange(1, 6)
    survive = np.vectorize(survival_curve)(ages, scale)
    p = survive[1:] / survive[:-1]
    N = np.array([10.0, 6.0, 4.0, 2.0, 1.0])
    totals = []
    for t in range(years):
        A = np.zeros((5, 5))
        A[0, 2:] = fecundity * np.exp(-crowding * N.sum())
        np.fill_diagonal(A[1:], p)
        N = A @ N
        totals.append(N.sum())
    return functools.reduce(lambda acc, n: 0.9 * acc + 0.1 * n, totals)


# ---- 10. an SEIR epidemic with a lockdown, fitted by a Poisson likelihood ----------------

@dataclass
class SEIRParameters:
    beta: float
    sigma: float
    gamma: float
    lockdown_day: float = 20.0
    reduction: float = 0.6


def simulate_seir(p, days=40, dt=0.25, population=1e5):
    state = np.array([population - 10.0, 0.0, 10.0, 0.0])
    history, incidence = [state], []
    new_cases = 0.0
    for k in range(int(days / dt)):
        t = k * dt
        beta = p.beta * (1.0 - p.reduction) if t >= p.lockdown_day else p.beta
        S, E, I, R = state
        infection = beta * S * I / population
        flows = np.array([-infection, infection - p.sigma * E,
                          p.sigma * E - p.gamma * I, p.gamma * I])
        state = np.clip(state + dt * flows, 0.0, None)
        new_cases = new_cases + dt * p.sigma * E
        if (k + 1) % int(1 / dt) == 0:
            incidence.append(new_cases)
            new_cases = 0.0
        history.append(state)
    return np.array(history), np.array(incidence)


SEIR_CASES = np.array([3, 3, 4, 4, 6, 6, 7, 9, 10, 12, 14, 16, 20, 23, 27, 31, 36, 42, 49, 56,
                       60, 55, 48, 41, 35, 30, 26, 22, 19, 16, 14, 12, 10, 9, 8, 7, 6, 5, 4, 4])


def seir_negative_log_likelihood(rates):
    p = SEIRParameters(beta=rates[0], sigma=rates[1], gamma=rates[2])
    history, incidence = simulate_seir(p)
    mu = np.where(incidence > 1e-8, incidence, 1e-8)
    early = np.arange(10)
    growth, _ = np.linalg.lstsq(np.c_[early, np.ones(10)], np.log(mu[:10]), rcond=None)[0]
    return np.sum(mu - SEIR_CASES * np.log(mu)) + 10.0 * growth ** 2 + 1e-5 * history[-1, 3]


# ---- 11. a plane truss: element stiffnesses assembled, solved by Cholesky ----------------

NODES = np.array([[0, 0], [2, 0], [4, 0], [6, 0], [1, 1], [3, 1], [5, 1]])       # metres, ints
MEMBERS = np.array([[0, 1], [1, 2], [2, 3], [4, 5], [5, 6],
                    [0, 4], [4, 1], [1, 5], [5, 2], [2, 6], [6, 3]])


def truss_compliance(areas, E=200e3, load=10.0):
    """Compliance and the largest stress of a Warren truss, pinned at node 0,
    on a roller at node 3, loaded at its lower chord; areas in cm^2."""
    ndof = 2 * len(NODES)
    K = np.zeros((ndof, ndof), order="F")
    for e, (a, b) in enumerate(MEMBERS):
        d = NODES[b] - NODES[a]
        L = math.hypot(*d)
        c = np.r_[-d, d] / L
        dofs = [2 * a, 2 * a + 1, 2 * b, 2 * b + 1]
        K[np.ix_(dofs, dofs)] += E * areas[e] / L * np.outer(c, c)
    F = np.zeros(ndof)
    F[[3, 5]] = -load
    free = np.ones(ndof, dtype=bool)
    free[[0, 1, 7]] = False
    L = np.linalg.cholesky(K[np.ix_(free, free)])
    u = np.zeros(ndof)
    u[free] = np.linalg.solve(L.T, np.linalg.solve(L, F[free]))
    spans = NODES[MEMBERS[:, 1]] - NODES[MEMBERS[:, 0]]
    elongation = np.array([(u[2 * b:2 * b + 2] - u[2 * a:2 * a + 2]) @ (NODES[b] - NODES[a])
                           for a, b in MEMBERS]) / np.sum(spans ** 2, axis=1)
    stress = E * elongation
    return F @ u + 1e-4 * np.max(np.abs(stress))


# ---- 12. elastic net by coordinate descent, tuned on a validation set --------------------

def soft_threshold(z, t):
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def elastic_net(X, y, alpha, l1_ratio, sweeps=30):
    n, p = X.shape
    beta = np.zeros(p)
    residual = y.copy()
    for _ in range(sweeps):
        for j in range(p):
            col_norm = (X[:, j] ** 2).sum().item() / n
            old = beta[j]
            rho = X[:, j] @ residual / n + col_norm * old
            beta[j] = soft_threshold(rho, alpha * l1_ratio) / (col_norm + alpha * (1 - l1_ratio))
            residual += X[:, j] * (old - beta[j])
    return beta


_rng = np.random.default_rng(7)
EN_X = _rng.standard_normal((30, 6))
EN_Y = EN_X @ np.array([1.5, 0.0, -2.0, 0.0, 0.0, 0.7]) + 0.3 * _rng.standard_normal(30)


def validation_error(log_alpha_and_ratio):
    alpha, l1_ratio = np.exp(log_alpha_and_ratio[0]), log_alpha_and_ratio[1]
    beta = elastic_net(EN_X[:20], EN_Y[:20], alpha, l1_ratio)
    return np.mean((EN_X[20:] @ beta - EN_Y[20:]) ** 2)


# ---- 13. a Gaussian beam through lenses (ray transfer matrices) --------------------------

def free_space(d):
    return np.array([[1.0, d], [0.0, 1.0]])


def thin_lens(f):
    return np.array([[1.0, 0.0], [-1.0 / f, 1.0]])


def beam_at_detector(optics, wavelength=1.064e-3, waist=0.5, detector=200.0):
    """Beam radius (mm) and radius of curvature at the detector behind a
    two-lens telescope: focal lengths f1, f2 and their spacing (mm)."""
    f1, f2, spacing = optics
    elements = [free_space(100.0), thin_lens(f1), free_space(spacing), thin_lens(f2),
                free_space(detector)]
    (A, B), (C, D) = functools.reduce(lambda M, E: E @ M, elements)
    q_in = 1j * math.pi * waist ** 2 / wavelength
    q = (A * q_in + B) / (C * q_in + D)
    inv_q = 1.0 / q
    radius = np.sqrt(-wavelength / (math.pi * inv_q.imag))
    return np.array([radius, inv_q.real * 1e3, np.abs(q) / 1e3])


# ---- 14. a spring network relaxing under its own weight ----------------------------------

def spring_net(n=4):
    ij = np.array([(i, j) for i in range(n) for j in range(n)])
    index = {tuple(p): k for k, p in enumerate(ij)}
    edges, kinds = [], []
    for (i, j), k in index.items():
        for (di, dj), kind in (((1, 0), 0), ((0, 1), 0), ((1, 1), 1)):
            if (i + di, j + dj) in index:
                edges.append((k, index[(i + di, j + dj)]))
                kinds.append(kind)
    return ij.astype(float), np.array(edges), np.array(kinds)


def sagging_net(stiffness, steps=60, dt=0.05, damping=0.5, weight=0.05):
    """Depth of the lowest node of a net pinned along its top row, after a
    damped explicit relaxation; stiffness = (axial, diagonal)."""
    rest, edges, kinds = spring_net()
    k = np.asarray(stiffness)[kinds]
    L0 = np.apply_along_axis(np.linalg.norm, 1, rest[edges[:, 1]] - rest[edges[:, 0]])
    pinned = rest[:, 1] == rest[:, 1].max()
    x = rest.copy()
    v = np.zeros_like(x)
    for _ in range(steps):
        d = x[edges[:, 1]] - x[edges[:, 0]]
        L = np.linalg.norm(d, axis=1)
        tension = (k * (L - L0) / L)[:, None] * d
        force = np.zeros_like(x)
        np.add.at(force, edges[:, 0], tension)
        np.subtract.at(force, edges[:, 1], tension)
        force[:, 1] -= weight
        v = (1 - damping * dt) * v + dt * force
        v[pinned] = 0.0
        x = x + dt * v
    return -x.T[1].min() + x[:, 0].std()


# ---- 15. a periodic Poisson problem solved spectrally ------------------------------------

def potential_energy(charges, n=16, length=1.0):
    """Electrostatic energy of two Gaussian charge blobs on a periodic square:
    charges = (q1, q2, width)."""
    q1, q2, width = charges
    x = np.arange(n) * length / n
    X, Y = np.meshgrid(x, x, indexing="ij")
    blob = lambda x0, y0: np.exp(-((X - x0) ** 2 + (Y - y0) ** 2) / (2 * width ** 2))
    rho = q1 * blob(0.3, 0.4) + q2 * blob(0.7, 0.6)
    rho = rho - rho.mean()
    k = 2 * np.pi * np.fft.fftfreq(n, d=length / n)
    KX, KY = np.meshgrid(k, k, indexing="ij")
    k2 = KX ** 2 + KY ** 2
    phi_hat = np.fft.fft2(rho) / np.where(k2 == 0, 1.0, k2)
    phi_hat[0, 0] = 0.0
    phi = np.fft.ifft2(phi_hat).real
    return 0.5 * np.sum(phi * rho) * (length / n) ** 2


# ---- 16. a 1-D electrostatic particle-in-cell step (cloud-in-cell deposit) ---------------

def pic_field_energy(params, n_cells=16, n_particles=64, steps=6, length=2 * np.pi):
    """Field energy after a few leapfrog steps of a plasma: cloud-in-cell
    charge deposited with np.bincount, Poisson's equation solved with FFTs,
    the field gathered back; params = (perturbation amplitude, drift speed)."""
    amplitude, drift = params
    dx = length / n_cells
    x0 = (np.arange(n_particles) + 0.5) * length / n_particles
    x = x0 + amplitude * np.sin(x0)
    v = drift * np.cos(2 * x0)
    k = 2 * np.pi * np.fft.rfftfreq(n_cells, d=dx)
    k[0] = 1.0
    energies = []
    for step in range(steps):
        x = np.mod(x, length)
        cell = np.floor(x / dx).astype(int)
        frac = x / dx - cell
        right = (cell + 1) % n_cells
        rho = (np.bincount(cell, weights=1 - frac, minlength=n_cells)
               + np.bincount(right, weights=frac, minlength=n_cells))
        rho = rho * n_cells / n_particles - 1.0
        E_hat = -1j * np.fft.rfft(rho) / k
        E_hat[0] = 0.0
        E = np.fft.irfft(E_hat, n=n_cells)
        v = v - 0.1 * ((1 - frac) * E[cell] + frac * E[right])
        x = x + 0.1 * v
        energies.append(0.5 * dx * np.sum(E ** 2))
    return sum(energies) / len(energies)
