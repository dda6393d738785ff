"""Small scientific programs written as their authors write them: plain
state arrays updated in place by active values, names imported from numpy,
lists of active values handed to NumPy, parameters on objects, SciPy inside
the models, likelihoods and physics.

In-place time loops: Lax–Friedrichs Burgers with index arrays from
``np.roll`` and ``u[:] = u + dt * rhs(u)`` (an active time step from
``np.max``), Godunov fluxes by boolean-mask stores into ``np.ones_like``,
heat steps through ``out=`` arguments (``np.add``, ``np.subtract``,
``np.multiply``, ``np.clip``), a charge deposit by ``np.add.at`` with a 2-d
index tuple, a plain state reached through a dict and a list holding it,
a plate through named views and a ``reshape(-1)`` view, RK4 with stage
buffers allocated once and written by ``out[...] =``, ``np.copyto`` and
``np.fill_diagonal``, a three-buffer wave rotation, a leapfrog N-body
with broadcast separations, a delay line shifted in place (overlapping
slices), a scatter ``u[cells] += w`` with repeated cells beside
``np.add.at``, a lattice summed by ``np.ndenumerate``, a rod started
from a copy of measured data (and through a named view of that copy:
refused), a work buffer and its view made at import (refused), an inner
Newton solve warm-started from a root kept in a module dict (refused at
the next call). Styles: ``from numpy import zeros,
array, exp`` with ``to_array=np.array`` as a default argument, ``import numpy as
xp`` handed in as a module, steppers passed as functions and through
``functools.partial``, ``map`` and ``operator``. Lists of active values:
ensemble statistics (``np.mean``/``np.std``/``np.median``/``np.average``
of lists), ``np.r_``/``np.atleast_2d``/``np.column_stack``/``np.diag`` of
lists, a list of scalars minus an array, ``np.polyval`` and ``np.interp``
of lists of coefficients, ``np.add.reduce`` of a list and ``np.float64``
of a parameter (refused). Parameters in dicts updated and unpacked as
``**kwargs``, ``dataclasses.replace``, bound methods given to
``solve_ivp``, module globals set by the model, a settings module imported
inside the model (programs_s17_settings.py). SciPy: implicit diffusion
by ``spsolve`` of ``sp.eye - dt * D * L`` in a time loop, a sparse
operator applied to an active state, ``fsolve`` for each implicit Euler
step, ``root_scalar``, ``least_squares``, ``minimize`` with bounds,
``quad`` of ``erf``, clamped ``CubicSpline`` slopes, ``interp1d`` with a
fill value, ``RegularGridInterpolator`` of a plain table at active points,
``solve_ivp`` of stiff kinetics by Radau and BDF at SciPy's default
tolerances, ``odeint`` with ``args``. Statistics: ``scipy.stats`` log
densities (gamma, Student t, negative binomial, beta, frozen normal with
an active mean), zero-inflated Poisson with ``gammaln`` and ``logaddexp``,
a Kalman filter in matrix form with ``slogdet``, a GP evidence with
``cdist``, ``cho_factor``/``cho_solve``, probit with ``log_ndtr``, two
Voigt lines fitted by ``voigt_profile``, a lognormal's frozen ``mean()``
and ``std()`` (refused), a
Dirichlet–multinomial with ``betaln``/``xlogy``, kernel ridge
regression's leave-one-out error with ``K.flat[::n + 1] += lam``.
Physics: finite-volume diffusion with harmonic-mean face conductivities, Allen–Cahn by
semi-implicit FFT steps, a 3x3 Ising model's free energy by enumeration,
a mean-field magnetisation iterated until it stops changing, an XY
model's energy with ``np.roll``, thin films by the transfer-matrix
method with complex Snell angles filled into ``np.empty((2, 2),
dtype=complex)``, a Gaussian beam's complex q through ABCD matrices.

None of them knows about adsim; tests/numpy/test_user_programs_s17.py
differentiates them as they are."""
import dataclasses
import functools
import itertools
import math
import operator

import numpy as np
import numpy as xp
from numpy import array, exp, zeros
import scipy.sparse as sp
from scipy import stats
from scipy.integrate import odeint, quad, solve_ivp
from scipy.interpolate import CubicSpline, RegularGridInterpolator, interp1d
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import fsolve, least_squares, minimize, root_scalar
from scipy.sparse.linalg import spsolve
from scipy.spatial.distance import cdist
from scipy.special import betaln, erf, gammaln, log_ndtr, logsumexp, voigt_profile, xlogy


# ---- 1. Lax–Friedrichs Burgers: index arrays by np.roll, u[:] = u + dt * rhs(u) ---------

def lax_friedrichs_burgers(params, nx=40, steps=12, lmbda=0.8):
    c, amp = params
    x = np.linspace(0, 1, nx, endpoint=False)
    dx = x[1] - x[0]
    J = np.arange(0, nx)
    Jm1 = np.roll(J, 1)
    Jp1 = np.roll(J, -1)
    u = 1 + np.exp(-100 * (x - 0.25) ** 2)            # plain
    u[nx // 2] += amp                                  # an active bump: u is active from here

    def f(u):
        return c * u ** 2 / 2

    def rhs(u):
        uplus, uminus = u[Jp1], u[J]
        alpha = np.maximum(np.abs(c * uplus), np.abs(c * uminus))
        fluxes = (f(uplus) + f(uminus)) / 2 - alpha / 2 * (uplus - uminus)
        return -1 / dx * (fluxes[J] - fluxes[Jm1])

    for _ in range(steps):
        dt = dx * lmbda / np.max(np.abs(c * u))
        u[:] = u + dt * rhs(u)
    return np.sum(u * x) * dx + u[3]


# ---- 2. Godunov fluxes for Burgers by boolean-mask stores into np.ones_like --------------

def godunov_flux(ul, ur):
    fL = ul ** 2 / 2
    fR = ur ** 2 / 2
    f = np.ones_like(ul, dtype="float")
    f[ul > ur] = np.maximum(fL[ul > ur], fR[ul > ur])
    f[ul <= ur] = np.minimum(fL[ul <= ur], fR[ul <= ur])
    f[(ul <= 0) & (ur > 0)] = 0.0
    return f


def godunov_burgers(params, nx=30, steps=15):
    source, shift = params
    x = (np.arange(nx) + 0.5) / nx
    dx = 1.0 / nx
    dt = 0.3 * dx
    u = np.sin(2 * np.pi * x) + 0.5          # plain
    for _ in range(steps):
        ue = np.concatenate(([u[-1]], u, [u[0]]))
        F = godunov_flux(ue[:-1] + shift, ue[1:] + shift)
        u -= dt / dx * (F[1:] - F[:-1])
        u += dt * source * np.cos(2 * np.pi * x)
    return np.sum(u ** 2) * dx


# ---- 3. heat steps through out= arguments: np.subtract, np.add, np.multiply, np.clip --

def heat_with_out_arguments(params, n=30, steps=25):
    D, decay = params
    dx = 1.0 / (n - 1)
    dt = 0.2 * dx ** 2
    u = np.sin(np.pi * np.linspace(0, 1, n)) + 0.1       # plain
    lap = np.zeros(n)                                    # plain workspaces
    tmp = np.zeros(n - 2)
    for _ in range(steps):
        np.subtract(u[2:], 2 * u[1:-1], out=tmp)
        np.add(tmp, u[:-2], out=lap[1:-1])
        lap[1:-1] *= D / dx ** 2
        np.add(u, dt * lap, out=u)
        np.multiply(u, 1 - dt * decay, out=u)
        np.clip(u, 0.0, None, out=u)
    return np.sum(u) * dx + u[n // 3] ** 2


# ---- 4. charge deposit by np.add.at with a 2-d index tuple, a plain grid -----------------

PARTICLES = np.random.default_rng(17).uniform(0.05, 0.95, size=(40, 2))


def deposit_potential_energy(params, n=8):
    q, spread = params
    pos = 0.5 + spread * (PARTICLES - 0.5)
    ix = np.floor(pos[:, 0] * n).astype(int)
    iy = np.floor(pos[:, 1] * n).astype(int)
    fx = pos[:, 0] * n - ix
    rho = np.zeros((n + 1, n + 1))                       # plain grid
    np.add.at(rho, (iy, ix), q * (1 - fx))
    np.add.at(rho, (iy, ix + 1), q * fx)
    rho_hat = np.fft.rfft2(rho[:n, :n])
    k2 = (np.fft.fftfreq(n)[:, None] ** 2 + np.fft.rfftfreq(n)[None, :] ** 2)
    k2[0, 0] = 1.0
    phi = np.fft.irfft2(rho_hat / k2, s=(n, n))
    return 0.5 * np.sum(rho[:n, :n] * phi) / n ** 2


# ---- 5. a plain state reached through a dict and a list holding it ----------------------

def aliased_state_diffusion(params, n=20, steps=30):
    D, inflow = params
    u = np.zeros(n)                                   # plain
    fields = {"u": u, "t": 0.0}
    snapshots = [u]                                   # the same array, not a copy
    copies = []
    dt = 0.2
    for k in range(steps):
        fields["u"][0] = inflow
        fields["u"][1:-1] += dt * D * (u[2:] - 2 * u[1:-1] + u[:-2])
        fields["t"] += dt
        if k % 10 == 9:
            copies.append(u.copy())
    return np.sum(snapshots[0]) + np.sum(copies[0] * copies[-1]) + fields["t"] * 0.0


# ---- 6. a plate through named views and a reshape(-1) view ------------------------------

def plate_views(params, n=10, iters=30):
    t_top, sink = params
    T = np.zeros((n, n))                           # plain
    top = T[0]                                     # views taken before any store
    interior = T[1:-1, 1:-1]
    flat = T.reshape(-1)
    left = T.T[0]                                  # the first column through the transpose
    for _ in range(iters):
        top[:] = t_top
        left[1:] = 0.5 * t_top
        interior[...] = 0.25 * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2])
        flat[n * (n // 2) + n // 2] -= sink
    return np.mean(T) + T[n // 2, n // 2] + flat[-n - 2]


# ---- 7. RK4 with stage buffers allocated once, the right-hand side writing into out ------

def oscillator_chain_rhs(y, k, c, out):
    n = y.size // 2
    x, v = y[:n], y[n:]
    out[:n] = v
    out[n:] = -c * v
    out[n + 1:] -= k * (x[1:] - x[:-1])
    out[n:-1] += k * (x[1:] - x[:-1])
    out[n] -= k * x[0]
    return out


def rk4_buffers(params, n=4, steps=40, dt=0.05):
    k, c = params
    y = np.zeros(2 * n)                               # plain state
    y[0] = 1.0
    k1, k2, k3, k4, tmp = (np.zeros(2 * n) for _ in range(5))
    energy = []
    for _ in range(steps):
        oscillator_chain_rhs(y, k, c, k1)
        np.copyto(tmp, y + 0.5 * dt * k1)
        oscillator_chain_rhs(tmp, k, c, k2)
        np.copyto(tmp, y + 0.5 * dt * k2)
        oscillator_chain_rhs(tmp, k, c, k3)
        np.copyto(tmp, y + dt * k3)
        oscillator_chain_rhs(tmp, k, c, k4)
        y += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        energy.append(0.5 * np.sum(y[n:] ** 2))
    return np.mean(energy) + y[n - 1]


# ---- 8. a leapfrog N-body with broadcast separations and np.fill_diagonal ---------------

def nbody_energy_drift(params, steps=20, dt=0.01, eps=0.05):
    m_central, v0 = params
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [-0.6, 0.8], [0.2, -1.3]])
    vel = np.zeros_like(pos)                             # plain
    vel[1:, 0] = -pos[1:, 1] * v0
    vel[1:, 1] = pos[1:, 0] * v0
    mass = np.array([m_central, 1e-2, 2e-2, 5e-3])

    def accel(p):
        d = p[None, :, :] - p[:, None, :]
        r2 = np.sum(d ** 2, axis=-1) + eps ** 2
        inv_r3 = r2 ** -1.5
        np.fill_diagonal(inv_r3, 0.0)
        return np.einsum("ij,ijk,j->ik", inv_r3, d, mass)

    def energy(p, v):
        d = p[None, :, :] - p[:, None, :]
        r = np.sqrt(np.sum(d ** 2, axis=-1) + eps ** 2)
        iu = np.triu_indices(len(mass), 1)
        pair = mass[:, None] * mass[None, :] / r
        return 0.5 * np.sum(mass[:, None] * v ** 2) - np.sum(pair[iu])

    e0 = energy(pos, vel)
    a = accel(pos)
    for _ in range(steps):
        vel += 0.5 * dt * a
        pos = pos + dt * vel
        a = accel(pos)
        vel += 0.5 * dt * a
    return (energy(pos, vel) - e0) * 1e3 + pos[1, 0]


# ---- 9. a wave equation with three buffers rotated by tuple assignment -----------------

def wave_three_buffers(params, n=30, steps=30):
    c, pluck = params
    x = np.linspace(0, 1, n)
    dx = x[1] - x[0]
    dt = 0.5 * dx
    u_prev = np.zeros(n)                                  # plain buffers
    u = np.zeros(n)
    u_next = np.zeros(n)
    u[1:-1] = pluck * np.exp(-((x[1:-1] - 0.3) / 0.1) ** 2)
    u_prev[:] = u
    C2 = (c * dt / dx) ** 2
    for _ in range(steps):
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + C2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u, u_next = u, u_next, u_prev
    return np.sum(u ** 2) * dx + u[n // 2]


# ---- 10. a mechanism with from numpy import zeros, array, exp and to_array=np.array -----

def arrhenius(A, Ea, T):
    return A * exp(-Ea / (8.314 * T))


def mechanism_rates(c, k, to_array=np.array):
    a, b, i = c
    r1 = k[0] * a * b
    r2 = k[1] * i
    return to_array([-r1, -r1 + r2, r1 - r2])


def mechanism_yield(params, steps=50, dt=0.02):
    T, Ea2 = params
    k = array([arrhenius(1e5, 3.0e4, T), arrhenius(1e7, Ea2 * 1e4, T)])
    c = zeros(3)
    c[:] = [1.0, 0.8, 0.0]
    for _ in range(steps):
        c = c + dt * mechanism_rates(c, k)
    return c[2] + c[1] ** 2


# ---- 11. code written for an array namespace: import numpy as xp handed in ---------------

def gaussian_smoother_loss(params, xpm=xp):
    width, gain = params
    t = xpm.linspace(0.0, 1.0, 25)
    signal = xpm.asarray(xpm.sin(6 * t) + 0.3 * t)
    d = t[:, None] - t[None, :]
    W = xpm.exp(-0.5 * (d / width) ** 2)
    W = W / xpm.sum(W, axis=1, keepdims=True)
    smooth = gain * xpm.einsum("ij,j->i", W, signal)
    return xpm.linalg.norm(smooth - signal) + xpm.vdot(smooth, t)


# ---- 12. steppers passed as functions, functools.partial, map and operator -------------

def euler_step(f, t, y, h):
    return y + h * f(t, y)


def heun_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h, y + h * k1)
    return y + 0.5 * h * (k1 + k2)


def integrate_fixed(f, y0, t, stepper=heun_step):
    ys = [np.asarray(y0, dtype=float)]
    for t0, t1 in zip(t[:-1], t[1:]):
        ys.append(stepper(f, t0, ys[-1], t1 - t0))
    return np.array(ys)


def logistic_rhs(t, y, r=1.0, K=1.0):
    return r * y * (1 - y / K)


def stepper_comparison(params):
    r, K = params
    t = np.linspace(0, 3, 31)
    f = functools.partial(logistic_rhs, r=r, K=K)
    y_heun = integrate_fixed(f, [0.1], t)
    y_euler = integrate_fixed(f, [0.1], t, stepper=euler_step)
    scales = list(map(np.exp, [r, -K]))
    return functools.reduce(operator.add, [np.sum((y_heun - y_euler) ** 2), y_heun[-1, 0]]) \
        + operator.mul(*scales)


# ---- 13. ensemble statistics of lists of active values ----------------------------------

def ensemble_spread(params):
    a, b = params
    runs = []
    for seed_offset in (0.0, 0.3, -0.2, 0.5):
        runs.append(a * np.exp(-b * (1.0 + seed_offset)) + seed_offset)
    mean = np.mean(runs)
    spread = np.std(runs, ddof=1)
    return (mean + spread + np.median(runs) + np.average(runs, weights=[1, 2, 3, 4])
            + np.ptp(runs) + np.var([a, b]))


# ---- 14. a design matrix from lists: np.r_, np.atleast_2d, np.column_stack, np.diag ------

def design_from_lists(params):
    a, b = params
    t = np.linspace(0, 1, 6)
    X = np.column_stack([np.ones_like(t), a * t, [b, b, b, 0.0, 0.0, 0.0]])
    theta = np.r_[a, 0.5, b]
    prior = np.diag([a ** 2, 1.0, b ** 2])
    y = X @ theta
    row = np.atleast_2d([a, b, 1.0])
    offsets = [1.0, 2.0, 3.0] - row[0]
    return y @ y + np.trace(prior @ X.T @ X) + np.sum(offsets ** 2)


# ---- 15. polynomial and table coefficients as lists: np.polyval, np.interp, np.cumsum ----

def lists_of_coefficients(params):
    a, b = params
    x = np.linspace(-1, 2, 7)
    poly = np.polyval([a, b, 1.0], x)
    table = np.interp(x, [-1.0, 0.5, 2.0], [a, b, a * b])
    cum = np.cumsum([a, b, a + b])
    return (np.sum(poly * table) + cum[-1] * np.prod([a, b]) + np.linalg.norm([a, b])
            + np.max([a, 2 * b]) + np.dot([a, b], [b, 1.0]))


# ---- 16. parameters in a dict: updated, unpacked as **kwargs ---------------------------

def monod_growth(S, X, mu_max, Ks, Y, kd=0.0):
    mu = mu_max * S / (Ks + S)
    return -mu * X / Y, (mu - kd) * X


def chemostat_biomass(params, steps=60, dt=0.1):
    mu_max, Ks = params
    p = {"mu_max": mu_max, "Ks": Ks, "Y": 0.5}
    p.update(kd=0.01 * mu_max)
    S, X = 5.0, 0.1
    for _ in range(steps):
        dS, dX = monod_growth(S, X, **p)
        S, X = S + dt * dS, X + dt * dX
    return X + 0.1 * S


# ---- 17. a dataclass with a method, changed by dataclasses.replace --------------------

@dataclasses.dataclass(frozen=True)
class Cell:
    g_leak: float = 0.1
    E_leak: float = -65.0
    C: float = 1.0

    def step(self, v, I, dt):
        return v + dt / self.C * (-self.g_leak * (v - self.E_leak) + I)


def membrane_response(params, steps=100, dt=0.1):
    g_leak, C = params
    base = Cell()
    cell = dataclasses.replace(base, g_leak=g_leak, C=C)
    v = base.E_leak
    trace = np.empty(steps)                          # plain, filled with active values
    for k in range(steps):
        v = cell.step(v, 1.0 if k < 50 else 0.0, dt)
        trace[k] = v
    return np.max(trace) + np.mean(trace)


# ---- 18. a bound method handed to solve_ivp, the rates on self ----------------------------

class DecayChain:
    def __init__(self, k1, k2):
        self.k1 = k1
        self.k2 = k2

    def rhs(self, t, y):
        a, b, c = y
        return [-self.k1 * a, self.k1 * a - self.k2 * b, self.k2 * b]


def decay_chain_peak(params):
    chain = DecayChain(*params)
    sol = solve_ivp(chain.rhs, (0.0, 4.0), [1.0, 0.0, 0.0], t_eval=np.linspace(0, 4, 9),
                    rtol=1e-10, atol=1e-12)
    return np.max(sol.y[1]) + sol.y[2, -1]


# ---- 19. module globals set by the model and read by its helpers ------------------------

RATE = 1.0
CAPACITY = 10.0


def _harvest_rhs(N, h):
    return RATE * N * (1 - N / CAPACITY) - h * N


def harvest_with_globals(params, steps=40, dt=0.1):
    global RATE, CAPACITY
    RATE, CAPACITY = params[0], 10.0 * params[1]
    N = 1.0
    total = 0.0
    for _ in range(steps):
        N = N + dt * _harvest_rhs(N, 0.2)
        total += 0.2 * N * dt
    return total


# ---- 20. implicit diffusion: spsolve of sp.eye - dt * D * L in a time loop -------------

def implicit_diffusion_sparse(params, n=20, steps=8):
    D, k_react = params
    h = 1.0 / (n + 1)
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") / h ** 2
    dt = 0.01
    A = (sp.eye(n) - dt * D * L + dt * k_react * sp.eye(n)).tocsc()
    u = np.exp(-((np.arange(n) * h - 0.5) / 0.1) ** 2)          # plain
    for _ in range(steps):
        u = spsolve(A, u)
    return np.sum(u) * h + u[n // 4]


# ---- 21. a plain sparse operator applied to an active state (L @ u, L.dot) ---------------

def sparse_operator_steps(params, n=15, steps=20):
    D, v = params
    h = 1.0 / n
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n)).tolil()
    L[0, -1] = 1.0
    L[-1, 0] = 1.0
    L = L.tocsr() / h ** 2
    G = sp.diags([-1.0, 1.0], [-1, 1], shape=(n, n), format="csr") / (2 * h)
    u = np.cos(2 * np.pi * np.arange(n) * h)            # plain
    dt = 0.2 * h ** 2
    for _ in range(steps):
        u = u + dt * (D * (L @ u) - v * G.dot(u))
    return u @ u * h + u[2]


# ---- 22. implicit Euler with fsolve for each step ---------------------------------------

def brusselator_implicit(params, steps=8, dt=0.1):
    a, b = params
    y = np.array([1.0, 1.0])

    def rhs(y):
        u, v = y
        return np.array([a + u ** 2 * v - (b + 1) * u, b * u - u ** 2 * v])

    for _ in range(steps):
        y_old = y
        y = fsolve(lambda z: z - y_old - dt * rhs(z), y_old, xtol=1e-12)
    return y[0] + 0.5 * y[1]


# ---- 23. a wetted depth by root_scalar (Manning's equation) ----------------------------

def manning_depth(params, Q=2.0, S0=1e-3, width=3.0):
    n_manning, z_side = params

    def discharge(y):
        area = (width + z_side * y) * y
        perim = width + 2 * y * np.sqrt(1 + z_side ** 2)
        return area * (area / perim) ** (2 / 3) * np.sqrt(S0) / n_manning - Q

    sol = root_scalar(discharge, bracket=[0.01, 10.0], method="brentq", xtol=1e-14)
    return sol.root + 0.1 * discharge(1.0)


# ---- 24. an inner least_squares fit of a model to data generated by the parameters ------

def inner_least_squares(params):
    k_true, noise = params
    t = np.linspace(0, 2, 8)
    data = np.exp(-k_true * t) + noise * np.sin(5 * t)
    fit = least_squares(lambda th: th[0] * np.exp(-th[1] * t) - data, x0=[1.0, 1.0],
                        xtol=1e-14, ftol=1e-14, gtol=1e-14)
    return fit.x[1] + fit.cost


# ---- 25. minimize with bounds inside the model ---------------------------------------------

def bounded_allocation(params):
    alpha, budget = params

    def neg_utility(w):
        return -(alpha * np.log1p(w[0]) + (1 - alpha) * np.log1p(w[1])) + 5.0 * (
            w[0] + w[1] - budget) ** 2

    res = minimize(neg_utility, x0=[0.5, 0.5], method="L-BFGS-B",
                   bounds=[(0.0, None), (0.0, None)], options={"gtol": 1e-12, "ftol": 1e-15})
    return res.x[0] - 0.5 * res.x[1] + res.fun


# ---- 26. quad of an erf profile: a diffusing front's mass past a depth ---------------------

def front_mass(params, depth=0.3):
    D, t = params

    def conc(x):
        return 0.5 * (1 - erf(x / (2 * np.sqrt(D * t))))

    mass, _ = quad(conc, depth, 5.0, epsabs=1e-12, epsrel=1e-12)
    return mass + conc(depth)


# ---- 27. a clamped CubicSpline of active values, slopes at active points ----------------

def clamped_spline_slopes(params):
    a, slope0 = params
    x = np.linspace(0, 2, 6)
    y = a * np.sin(x) + x ** 2
    cs = CubicSpline(x, y, bc_type=((1, slope0), (2, 0.0)))
    pts = np.array([0.3, 1.1]) * a
    return np.sum(cs(pts, 1)) + cs(1.5) + cs.integrate(0.0, 2.0)


# ---- 28. interp1d with bounds_error=False and a fill value -------------------------------

def interp1d_fill(params):
    a, b = params
    x = np.linspace(0, 1, 7)
    y = np.tanh(a * x) + b * x ** 2
    f = interp1d(x, y, kind="linear", bounds_error=False, fill_value=0.0)
    q = np.array([-0.2, 0.15, 0.5, 0.93, 1.2])
    g = interp1d(x, y, kind="cubic")
    return np.sum(f(q) ** 2) + g(0.37)


# ---- 29. a plain table by RegularGridInterpolator at active points ----------------------

TT = np.linspace(250.0, 350.0, 6)
PP = np.linspace(1.0, 5.0, 5)
TABLE = np.log(PP[None, :]) * 0.3 + 1e-3 * (TT[:, None] - 300.0) ** 2 / 10


def table_path(params):
    T0, P0 = params
    interp = RegularGridInterpolator((TT, PP), TABLE)
    pts = np.column_stack([T0 + np.linspace(0, 20, 5), P0 * np.linspace(1, 1.5, 5)])
    return np.sum(interp(pts)) + interp([T0, P0])[0] ** 2


# ---- 30. stiff kinetics by Radau at SciPy's default tolerances -------------------------

DATA_T = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
DATA_B = np.array([0.30, 0.42, 0.45, 0.35, 0.18])


def kinetics_rhs(t, y, k1, k2, k3):
    a, b, c = y
    return [-k1 * a + k3 * b * c, k1 * a - k2 * b ** 2 - k3 * b * c, k2 * b ** 2]


def kinetics_radau(params, rtol=None):
    k1, k2 = params
    kw = {} if rtol is None else {"rtol": rtol, "atol": 1e-12}
    sol = solve_ivp(kinetics_rhs, (0.0, 8.0), [1.0, 0.0, 0.0], method="Radau", t_eval=DATA_T,
                    args=(k1, k2, 1e3), **kw)
    return np.sum((sol.y[1] - DATA_B) ** 2)


def kinetics_bdf(params, rtol=None):
    k1, k2 = params
    kw = {} if rtol is None else {"rtol": rtol, "atol": 1e-12}
    sol = solve_ivp(lambda t, y: kinetics_rhs(t, y, k1, k2, 1e3), [0, 8], [1.0, 0.0, 0.0],
                    method="BDF", **kw)
    return sol.y[1, -1] + sol.y[2, -1] ** 2


# ---- 31. odeint with args of a two-compartment model -----------------------------------

def two_compartment(y, t, ka, ke, k12, k21):
    gut, central, periph = y
    return [-ka * gut, ka * gut - (ke + k12) * central + k21 * periph,
            k12 * central - k21 * periph]


def odeint_auc(params):
    ka, ke = params
    t = np.linspace(0, 12, 25)
    y = odeint(two_compartment, [100.0, 0.0, 0.0], t, args=(ka, ke, 0.3, 0.2),
               rtol=1e-11, atol=1e-11)
    return np.trapezoid(y[:, 1], t) / 100 + y[-1, 2] / 10


# ---- 32. a log posterior from scipy.stats: gamma, Student t, negative binomial, beta ----

COUNTS = np.array([3, 0, 5, 2, 8, 1, 4])
RESID = np.array([0.3, -1.2, 2.5, 0.1, -0.4])


def stats_posterior(params):
    log_r, log_nu = params
    r = np.exp(log_r)
    nu = np.exp(log_nu)
    mean = 3.0
    p = r / (r + mean)
    lp = np.sum(stats.nbinom.logpmf(COUNTS, r, p))
    lp += np.sum(stats.t.logpdf(RESID, df=nu, loc=0.0, scale=0.8))
    lp += stats.gamma.logpdf(r, a=2.0, scale=2.0) + stats.gamma(a=2.0, scale=5.0).logpdf(nu)
    lp += stats.beta.logpdf(p, 2.0, 2.0)
    return lp


# ---- 33. a frozen normal with an active mean and a lognormal likelihood ---------------

OBS = np.array([1.2, 0.7, 2.9, 1.8, 1.1])


def frozen_mean_likelihood(params):
    mu, log_s = params
    s = np.exp(log_s)
    prior = stats.norm(mu, 2.0)
    like = stats.lognorm(s=s, scale=np.exp(mu))
    return prior.logpdf(0.5) + np.sum(like.logpdf(OBS)) + prior.cdf(1.0)


# ---- 34. zero-inflated Poisson: gammaln, logaddexp and np.where over counts -------------

ZIP_Y = np.array([0, 0, 1, 3, 0, 2, 5, 0, 1, 0])


def zip_loglik(params):
    logit_pi, log_lam = params
    pi = 1 / (1 + np.exp(-logit_pi))
    lam = np.exp(log_lam)
    log_pois = ZIP_Y * np.log(lam) - lam - gammaln(ZIP_Y + 1)
    ll_zero = np.logaddexp(np.log(pi), np.log1p(-pi) - lam)
    ll_pos = np.log1p(-pi) + log_pois
    return np.sum(np.where(ZIP_Y == 0, ll_zero, ll_pos))


# ---- 35. a Kalman filter in matrix form, the likelihood by slogdet and solve ------------

Z2 = np.array([[1.0, 0.1], [1.8, 0.3], [3.1, 0.2], [4.2, 0.5], [4.9, 0.4], [6.1, 0.7]])


def kalman_matrix_form(params, dt=1.0):
    log_q, log_r = params
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.eye(2)
    Q = np.exp(log_q) * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    R = np.exp(log_r) * np.diag([1.0, 4.0])
    x = np.zeros(2)
    P = 10 * np.eye(2)
    ll = 0.0
    for z in Z2:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        innov = z - H @ x
        K = np.linalg.solve(S.T, (P @ H.T).T).T
        x = x + K @ innov
        P = (np.eye(2) - K @ H) @ P
        sign, logdet = np.linalg.slogdet(S)
        ll -= 0.5 * (logdet + innov @ np.linalg.solve(S, innov) + 2 * np.log(2 * np.pi))
    return ll


# ---- 36. a GP evidence: cdist kernel, cho_factor(lower=True), cho_solve ----------------

X_GP = np.array([[0.0, 0.1], [0.4, 0.3], [0.9, 0.5], [1.3, 1.0], [1.9, 0.2], [2.4, 0.8]])
Y_GP = np.array([0.1, 0.5, 0.9, 0.7, -0.2, 0.3])


def gp_evidence_cdist(params):
    log_ell, log_sf = params
    ell, sf2 = np.exp(log_ell), np.exp(2 * log_sf)
    K = sf2 * np.exp(-0.5 * cdist(X_GP, X_GP, "sqeuclidean") / ell ** 2)
    K[np.diag_indices_from(K)] += 1e-2
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), Y_GP)
    return (-0.5 * Y_GP @ alpha - np.sum(np.log(np.diag(c)))
            - 0.5 * len(Y_GP) * np.log(2 * np.pi))


# ---- 37. probit regression by log_ndtr and norm.logcdf -----------------------------------

XP = np.array([-1.5, -0.7, -0.2, 0.4, 0.9, 1.6, 2.2])
YP = np.array([0, 0, 1, 0, 1, 1, 1])


def probit_loglik(params):
    b0, b1 = params
    eta = b0 + b1 * XP
    s = 2 * YP - 1
    return np.sum(log_ndtr(s * eta)) + 0.5 * np.sum(stats.norm.logcdf(-np.abs(eta)))


# ---- 38. a Dirichlet–multinomial likelihood by betaln and xlogy -------------------------

TABLE_COUNTS = np.array([[5, 2, 1], [3, 3, 0], [1, 4, 6]])


def dirichlet_multinomial(params):
    log_conc, skew = params
    conc = np.exp(log_conc)
    alpha = conc * np.array([1.0, np.exp(skew), 1.0]) / (2 + np.exp(skew))
    ll = 0.0
    for row in TABLE_COUNTS:
        n = row.sum()
        ll += (gammaln(n + 1) - np.sum(gammaln(row + 1)) + gammaln(np.sum(alpha))
               - gammaln(n + np.sum(alpha)) + np.sum(gammaln(row + alpha) - gammaln(alpha)))
    p = alpha / np.sum(alpha)
    return ll - np.sum(xlogy(p, p)) + betaln(alpha[0], alpha[1])


# ---- 39. finite-volume diffusion: harmonic-mean face conductivities, np.diff ----------

def fv_harmonic(params, n=25, steps=40):
    k_left, k_right = params
    xc = (np.arange(n) + 0.5) / n
    k = np.where(xc < 0.5, k_left, k_right)
    k_face = 2 * k[1:] * k[:-1] / (k[1:] + k[:-1])
    dx = 1.0 / n
    dt = 0.2 * dx ** 2 / max(1.0, 2.0)
    T = np.zeros(n)                                  # plain
    for _ in range(steps):
        flux = -k_face * np.diff(T) / dx
        flux_full = np.concatenate(([-k[0] * (T[0] - 1.0) / (dx / 2)], flux, [0.0]))
        T -= dt / dx * np.diff(flux_full)
    return np.sum(T) * dx + T[-1]


# ---- 40. Allen–Cahn by semi-implicit Fourier steps ----------------------------------

def allen_cahn_fft(params, n=32, steps=10, dt=0.05):
    eps, amp = params
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    u = amp * np.cos(x) + 0.1 * np.sin(3 * x)
    k = np.fft.fftfreq(n, d=1.0 / n)
    for _ in range(steps):
        u_hat = np.fft.fft(u)
        nl_hat = np.fft.fft(u - u ** 3)
        u = np.real(np.fft.ifft((u_hat + dt * nl_hat) / (1 + dt * eps ** 2 * k ** 2)))
    return np.mean(u ** 2) + np.mean(np.gradient(u, x) ** 2)


# ---- 41. a 3x3 Ising model's free energy by enumerating the 512 states ---------------

ISING_L = 3
STATES = np.array(list(itertools.product([-1, 1], repeat=ISING_L ** 2))).reshape(-1, ISING_L,
                                                                                 ISING_L)


def ising_free_energy(params):
    J, h = params
    bonds = (np.sum(STATES * np.roll(STATES, 1, axis=1), axis=(1, 2))
             + np.sum(STATES * np.roll(STATES, 1, axis=2), axis=(1, 2)))
    mag = STATES.sum(axis=(1, 2))
    E = -J * bonds - h * mag
    logZ = logsumexp(-E)
    p = np.exp(-E - logZ)
    return -logZ + np.sum(p * mag ** 2) / ISING_L ** 4


# ---- 42. an XY model's energy with np.roll, spins relaxed by gradient steps ----------

def xy_relaxed_energy(params, L=5, sweeps=15):
    J, field = params
    rng = np.random.default_rng(3)
    theta = rng.uniform(-0.5, 0.5, size=(L, L))         # plain
    for _ in range(sweeps):
        torque = J * sum(np.sin(np.roll(theta, shift, axis) - theta)
                         for shift in (1, -1) for axis in (0, 1))
        torque -= field * np.sin(theta)
        theta += 0.1 * torque
    return (-J * np.sum(np.cos(theta - np.roll(theta, 1, 0)) + np.cos(theta - np.roll(theta, 1, 1)))
            - field * np.sum(np.cos(theta)))


# ---- 43. thin films by the transfer-matrix method: complex Snell angles, filled 2x2 ----

def make_2x2_array(a, b, c, d, dtype=complex):
    m = np.empty((2, 2), dtype=dtype)
    m[0, 0] = a
    m[0, 1] = b
    m[1, 0] = c
    m[1, 1] = d
    return m


def snell(n_1, n_2, th_1):
    return np.arcsin(n_1 * np.sin(th_1) / n_2)


def tmm_reflectance(params, lam=550.0):
    d1, d2 = params
    n_list = np.array([1.0, 2.1 + 0.01j, 1.45, 1.52])
    d_list = [np.inf, d1, d2, np.inf]
    th0 = np.radians(30.0)
    R = 0.0
    for pol in ("s", "p"):
        th = [th0]
        for i in range(1, len(n_list)):
            th.append(snell(n_list[i - 1], n_list[i], th[-1]))
        kz = [2 * np.pi * n * np.cos(t) / lam for n, t in zip(n_list, th)]

        def rt(i, j):
            ni, nj, ci, cj = n_list[i], n_list[j], np.cos(th[i]), np.cos(th[j])
            if pol == "s":
                r = (ni * ci - nj * cj) / (ni * ci + nj * cj)
                t = 2 * ni * ci / (ni * ci + nj * cj)
            else:
                r = (nj * ci - ni * cj) / (nj * ci + ni * cj)
                t = 2 * ni * ci / (nj * ci + ni * cj)
            return r, t

        M = np.eye(2, dtype=complex)
        for i in range(1, len(n_list) - 1):
            delta = kz[i] * d_list[i]
            r, t = rt(i, i + 1)
            M = M @ (make_2x2_array(np.exp(-1j * delta), 0, 0, np.exp(1j * delta))
                     @ make_2x2_array(1, r, r, 1) / t)
        r01, t01 = rt(0, 1)
        M = make_2x2_array(1, r01, r01, 1) / t01 @ M
        R = R + 0.5 * np.abs(M[1, 0] / M[0, 0]) ** 2
    return R


# ---- 44. a Gaussian beam's complex q parameter through ABCD matrices ------------------

def beam_waist_after_lenses(params, lam=1.064e-3):
    f1, gap = params
    w0 = 0.5
    q = 1j * np.pi * w0 ** 2 / lam
    elements = [np.array([[1.0, 100.0], [0.0, 1.0]]),
                np.array([[1.0, 0.0], [-1.0 / f1, 1.0]]),
                np.array([[1.0, gap], [0.0, 1.0]]),
                np.array([[1.0, 0.0], [-1.0 / 50.0, 1.0]]),
                np.array([[1.0, 80.0], [0.0, 1.0]])]
    M = np.linalg.multi_dot(elements[::-1])
    A, B, C, D = M.ravel()
    q_out = (A * q + B) / (C * q + D)
    inv_q = 1 / q_out
    w = np.sqrt(-lam / (np.pi * inv_q.imag))
    return w + 0.01 * np.angle(q_out)


# ---- 45. math.fsum of active values (a plain-number reduction) ---------------------

def fsum_of_terms(params):
    a, b = params
    return math.fsum([a * a, b * b, a * b])


# ---- 46. a delay line: a plain queue shifted in place (overlapping slices) ------------

def delay_line_outflow(params, n=12, steps=30):
    inflow, leak = params
    queue = np.zeros(n)                               # plain
    out = 0.0
    for k in range(steps):
        out += queue[-1]
        queue[1:] = queue[:-1]                        # NumPy copies the overlapping source
        queue[0] = inflow * (1 + 0.5 * np.sin(0.4 * k))
        queue *= 1 - leak
    return out + np.sum(queue * np.arange(n))


# ---- 47. a scatter with repeated cells: u[cells] += w keeps the last write only ----------

CELLS = np.array([0, 2, 2, 5, 1, 5, 5, 3])


def repeated_index_scatter(params, n=6):
    a, b = params
    w = a * np.exp(-b * np.arange(len(CELLS)))
    last = np.zeros(n)
    last[CELLS] += w                       # buffered: each cell gets one of its w
    total = np.zeros(n)
    np.add.at(total, CELLS, w)             # unbuffered: each cell gets the sum
    return np.sum(last * np.arange(1, n + 1)) + np.sum(total ** 2)


# ---- 48. a lattice energy summed with np.ndenumerate ----------------------------------

def ndenumerate_lattice(params, L=4):
    J, h = params
    spins = np.cos(h * np.arange(L * L).reshape(L, L) + J)
    energy = 0.0
    for (i, j), s in np.ndenumerate(spins):
        energy -= J * s * (spins[(i + 1) % L, j] + spins[i, (j + 1) % L]) + h * s
    return energy


# ---- 49. a work buffer and its view allocated at import, written by the model ----------

WORK = np.zeros(10)
WORK_INNER = WORK[1:-1]


def module_work_buffer(params, steps=10):
    D, edge = params
    WORK[:] = 0.0
    for _ in range(steps):
        WORK[0] = edge
        WORK_INNER[:] += 0.2 * D * (WORK[2:] - 2 * WORK_INNER + WORK[:-2])
    return np.sum(WORK)


# ---- 50. np.add.reduce and np.multiply.reduce of lists of active values --------------

def ufunc_reduce_of_lists(params):
    a, b = params
    return np.add.reduce([a, b, a * b]) + np.multiply.reduce([a, b, 2.0])


# ---- 51. np.float64 of a parameter --------------------------------------------------

def float64_of_parameter(params):
    a, b = params
    scale = np.float64(a)
    return scale * b ** 2


# ---- 52. settings imported inside the model from the project's module -------------------

def arrhenius_from_settings(params):
    import programs_s17_settings as cfg
    lnA, dEa = params
    T = np.linspace(280.0, 340.0, 5)
    k = np.exp(lnA - (cfg.ACTIVATION + dEa) / (cfg.R_GAS * T))
    k_ref = np.exp(21.0 - cfg.ACTIVATION / (cfg.R_GAS * cfg.REFERENCE_T))
    return np.sum(np.log(k / k_ref) ** 2)


# ---- 53. kernel ridge regression's leave-one-out error, K.flat[::n + 1] += lam ----------

X_KRR = np.linspace(-2, 2, 9)
Y_KRR = np.tanh(1.5 * X_KRR) + 0.05 * np.cos(7 * X_KRR)


def krr_loo_error(params):
    log_lam, log_ell = params
    n = len(X_KRR)
    K = np.exp(-0.5 * np.subtract.outer(X_KRR, X_KRR) ** 2 / np.exp(2 * log_ell))
    K.flat[::n + 1] += np.exp(log_lam)
    Kinv = np.linalg.inv(K)
    alpha = Kinv @ Y_KRR
    loo = alpha / np.diag(Kinv)
    return np.mean(loo ** 2)


# ---- 54. a mean-field magnetisation iterated until it stops changing ---------------------

def mean_field_magnetisation(params, z=4):
    J, h = params
    m = 0.5
    while True:
        m_new = np.tanh(z * J * m + h)
        if abs(m_new - m) < 1e-14:
            break
        m = m_new
    chi = (1 - m_new ** 2) / (1 - z * J * (1 - m_new ** 2))
    return m_new + 0.1 * chi


# ---- 55. two Voigt lines fitted to a spectrum: scipy.special.voigt_profile -------------

WAVENUMBER = np.linspace(990.0, 1010.0, 41)
SPECTRUM = (2.0 * voigt_profile(WAVENUMBER - 998.0, 0.8, 0.5)
            + 1.2 * voigt_profile(WAVENUMBER - 1003.5, 0.8, 0.7) + 0.01)


def voigt_misfit(params):
    sigma, gamma = params
    model = (2.1 * voigt_profile(WAVENUMBER - 998.1, sigma, gamma)
             + 1.1 * voigt_profile(WAVENUMBER - 1003.4, sigma, 1.4 * gamma) + 0.01)
    return np.sum((model - SPECTRUM) ** 2) * 1e2


# ---- 56. a lognormal's mean from its frozen distribution ------------------------------

def lognormal_mean_match(params):
    mu, s = params
    dist = stats.lognorm(s, scale=np.exp(mu))
    return (dist.mean() - 2.0) ** 2 + (dist.std() - 1.0) ** 2


# ---- 57. a rod started from a copy of a measured profile, history of copies -------------

MEASURED = np.exp(-((np.linspace(0, 1, 12) - 0.4) / 0.1) ** 2)


def rod_from_measured_profile(params, steps=10):
    D, k = params
    u = MEASURED.copy()                               # plain: a copy, not np.zeros
    history = []
    for _ in range(steps):
        u[1:-1] += 0.2 * D * (u[2:] - 2 * u[1:-1] + u[:-2])
        u -= 0.01 * k * u
        u[0] = u[1]
        history.append(u.copy())
    return np.sum(u) + np.sum(history[3] ** 2)


# ---- 58. the same rod through a named view of the copy ---------------------------------

def rod_view_of_copy(params, steps=10):
    D, k = params
    u = MEASURED.copy()
    interior = u[1:-1]
    for _ in range(steps):
        interior += 0.2 * D * (u[2:] - 2 * interior + u[:-2])
        u *= 1 - 0.01 * k
    return np.sum(u)


# ---- 59. an inner Newton solve warm-started from the previous call's root ---------------

WARM_START = {}


def warm_started_root(params, iters=30):
    a, b = params
    x = WARM_START.get("x", 1.0)
    for _ in range(iters):
        x = x - (x ** 3 + a * x - b) / (3 * x ** 2 + a)
    WARM_START["x"] = x
    return x ** 2
