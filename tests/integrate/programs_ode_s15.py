"""Time-dependent programs written the way scientists write them, none of
which knows about adsim (tests/integrate/test_user_ode_programs_s15.py
differentiates them as they are, against central differences of the same
programs run by SciPy): a 1-D Brusselator by the method of lines (BDF with
``jac_sparsity``, a maximum over time and a threshold-crossing time by
``np.interp`` on ``sol.t``), a 2-D heat equation flattened (Radau with
``jac_sparsity``, ``np.trapezoid`` of the mean temperature), ``odeint`` with
``tfirst=True``, ``Dfun`` and ``args=`` of floats and an array, rates held
by an object (``self.k``), a frozen dataclass, a module-level dict, explicit
Euler, RK4 and velocity Verlet by hand in preallocated arrays (the last also
through ``adsim.checkpoint_loop``), a fit by L-BFGS-B whose gradient is
``adsim.grad`` of a loss that solves an ODE, a falling body with drag
stopped by a terminal event (and its apex by a non-terminal one), and a
glycolytic oscillator read by ``sol.sol`` at many times, and a cable
equation whose sparse operator is assembled once from the active
diffusivity (``A = D * lap``) and read by ``fun``."""
import dataclasses

import numpy as np
import scipy.sparse as sp
from scipy.integrate import odeint, solve_ivp
from scipy.optimize import minimize

import adsim


# ---- 1. Brusselator in 1-D by the method of lines: BDF, jac_sparsity, max over time, crossing ---

def brusselator_rhs(t, y, a, b, alpha, dx):
    u, v = y[0::2], y[1::2]                 # interleaved so the Jacobian is banded
    uu = np.concatenate(([1.0], u, [1.0]))  # Dirichlet ends at the steady state u = 1 ...
    vv = np.concatenate(([3.0], v, [3.0]))  # ... v = b / a = 3
    lap_u = (uu[2:] - 2 * u + uu[:-2]) / dx ** 2
    lap_v = (vv[2:] - 2 * v + vv[:-2]) / dx ** 2
    dydt = np.empty_like(y)
    dydt[0::2] = a + u ** 2 * v - (b + 1) * u + alpha * lap_u
    dydt[1::2] = b * u - u ** 2 * v + alpha * lap_v
    return dydt


def brusselator_peak_and_crossing(params):
    b, alpha = params
    n = 20
    x = np.linspace(0, 1, n + 2)[1:-1]
    dx = x[1] - x[0]
    y0 = np.empty(2 * n)
    y0[0::2] = 1 + np.sin(2 * np.pi * x)
    y0[1::2] = 3.0
    pattern = sp.diags([1.0, 1.0, 1.0, 1.0, 1.0], [-2, -1, 0, 1, 2], shape=(2 * n, 2 * n))
    sol = solve_ivp(brusselator_rhs, (0, 4), y0, method="BDF", args=(1.0, b, alpha, dx),
                    jac_sparsity=pattern, rtol=1e-10, atol=1e-10)
    u_mid = sol.y[2 * (n // 4)]
    peak = np.max(sol.y[0::2])             # the largest u anywhere at any step
    rising = slice(0, np.argmax(u_mid) + 1)
    t_cross = np.interp(2.5, u_mid[rising], sol.t[rising])   # when u there first reaches 2.5
    return peak + t_cross


# ---- 2. 2-D heat equation flattened: Radau, jac_sparsity from a Kronecker sum, trapezoid -------

def laplacian_2d(m, h):
    d = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(m, m)) / h ** 2
    eye = sp.identity(m)
    return (sp.kron(eye, d) + sp.kron(d, eye)).tocsr()


def plate_mean_exposure(params):
    kappa, cooling = params
    m = 6
    h = 1.0 / (m + 1)
    L = laplacian_2d(m, h)
    X, Y = np.meshgrid(np.arange(1, m + 1) * h, np.arange(1, m + 1) * h)
    T0 = (np.exp(-20 * ((X - 0.3) ** 2 + (Y - 0.6) ** 2))).ravel()

    def heat(t, T):
        return kappa * (L @ T) - cooling * T

    t_eval = np.linspace(0, 0.1, 21)
    sol = solve_ivp(heat, (0, 0.1), T0, method="Radau", jac_sparsity=L, t_eval=t_eval,
                    rtol=1e-10, atol=1e-12)
    mean_T = sol.y.mean(axis=0)
    return np.trapezoid(mean_T, sol.t) + sol.y[:, -1].max()


# ---- 3. odeint(tfirst=True) with Dfun, args a float, an array and a float ---------------------

def chain(t, c, k_in, k, k_out):
    """A linear chain of compartments fed at a constant rate."""
    dc = np.empty_like(c)
    dc[0] = k_in - k[0] * c[0]
    dc[1:] = k[:-1] * c[:-1] - k[1:] * c[1:]
    dc[-1] -= k_out * c[-1]
    return dc


def chain_jac(t, c, k_in, k, k_out):
    J = np.diag(-k) + np.diag(k[:-1], -1)
    J[-1, -1] -= k_out
    return J


def chain_outflow(params):
    k_in, k_out = params[0], params[1]
    k = params[2:]
    t = np.linspace(0, 10, 21)
    c = odeint(chain, np.zeros(4), t, args=(k_in, k, k_out), Dfun=chain_jac, tfirst=True,
               rtol=1e-11, atol=1e-12)
    outflow = k_out * c[:, -1]
    return np.trapezoid(outflow, t) + c[-1] @ np.arange(1, 5)


# ---- 4. rates held by an object, read as self.k inside fun ------------------------------------

class Enzyme:
    def __init__(self, kf, kr, kcat):
        self.kf, self.kr, self.kcat = kf, kr, kcat
        self.E0 = 1.0

    def __call__(self, t, y):
        S, C, P = y
        E = self.E0 - C
        bind = self.kf * E * S - self.kr * C
        return [-bind, bind - self.kcat * C, self.kcat * C]

    def simulate(self, t_obs):
        return solve_ivp(self, (0, t_obs[-1]), [10.0, 0.0, 0.0], t_eval=t_obs, method="LSODA",
                         rtol=1e-10, atol=1e-12)


ENZ_T = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 12.0])
ENZ_P = np.array([0.4, 0.9, 1.9, 3.7, 6.8, 8.9])


def enzyme_sse(params):
    model = Enzyme(params[0], params[1], params[2])
    return np.sum((model.simulate(ENZ_T).y[2] - ENZ_P) ** 2)


# ---- 5. a frozen dataclass of parameters passed through args= ---------------------------------

@dataclasses.dataclass(frozen=True)
class Tumour:
    r: float
    K: float
    kill: float
    clearance: float = 0.3


def gompertz_drug(t, y, p):
    N, D = y
    return [p.r * N * np.log(p.K / N) - p.kill * D * N, -p.clearance * D]


def tumour_at_day_30(params):
    p = Tumour(r=params[0], K=params[1], kill=params[2])
    sol = solve_ivp(gompertz_drug, (0, 30), [1.0, 5.0], args=(p,), method="DOP853",
                    rtol=1e-11, atol=1e-12)
    return np.log(sol.y[0, -1])


# ---- 6. a module-level dict of parameters read inside fun --------------------------------------

PARAMS = {"alpha": 1.0, "beta": 0.1, "delta": 0.075, "gamma": 1.5}


def lv(t, z):
    x, y = z
    return [PARAMS["alpha"] * x - PARAMS["beta"] * x * y,
            PARAMS["delta"] * x * y - PARAMS["gamma"] * y]


def lv_final_prey(theta):
    PARAMS["beta"], PARAMS["delta"] = theta[0], theta[1]
    sol = solve_ivp(lv, (0, 15), [10.0, 5.0], t_eval=[5.0, 10.0, 15.0], rtol=1e-10, atol=1e-10)
    return sol.y[0] @ np.array([1.0, 0.5, 0.25])


# ---- 7. explicit Euler by hand into a preallocated trajectory ----------------------------------

def euler_sir(params, n_steps=400):
    beta, gamma = params
    dt = 60.0 / n_steps
    traj = np.zeros((n_steps + 1, 3))
    traj[0] = [0.99, 0.01, 0.0]
    for i in range(n_steps):
        S, I, R = traj[i]
        traj[i + 1, 0] = S - dt * beta * S * I
        traj[i + 1, 1] = I + dt * (beta * S * I - gamma * I)
        traj[i + 1, 2] = R + dt * gamma * I
    return traj[:, 1].max() + traj[-1, 2]


# ---- 8. classical RK4 by hand, state updated in place ------------------------------------------

def duffing(t, x, delta, alpha, beta, gamma, omega):
    return np.array([x[1], -delta * x[1] - alpha * x[0] - beta * x[0] ** 3
                     + gamma * np.cos(omega * t)])


def rk4_duffing_energy(params, n_steps=300):
    delta, gamma = params
    h = 10.0 / n_steps
    x = np.array([1.0, 0.0])
    energy = np.zeros(n_steps + 1)
    energy[0] = 0.5 * x[1] ** 2 + 0.5 * x[0] ** 2 + 0.25 * x[0] ** 4
    args = (delta, 1.0, 1.0, gamma, 1.2)
    for i in range(n_steps):
        t = i * h
        k1 = duffing(t, x, *args)
        k2 = duffing(t + h / 2, x + h / 2 * k1, *args)
        k3 = duffing(t + h / 2, x + h / 2 * k2, *args)
        k4 = duffing(t + h, x + h * k3, *args)
        x += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        energy[i + 1] = 0.5 * x[1] ** 2 + 0.5 * x[0] ** 2 + 0.25 * x[0] ** 4
    return np.mean(energy)


# ---- 9. velocity Verlet for a chain of masses and springs, by hand and by checkpoint_loop -----

def spring_forces(q, k, m):
    stretch = np.diff(np.concatenate(([0.0], q)))      # the first mass tied to a wall
    f = -k * stretch
    f[:-1] -= f[1:]                                    # each spring pulls both its ends
    return f / m


def verlet_chain_by_hand(params, n_steps=200):
    k = params[:3]
    m = np.array([1.0, 2.0, 1.5])
    dt = 0.05
    q = np.array([0.1, 0.0, -0.1])
    p = np.zeros(3)
    a = spring_forces(q, k, m)
    for _ in range(n_steps):
        p += 0.5 * dt * a
        q += dt * p
        a = spring_forces(q, k, m)
        p += 0.5 * dt * a
    return np.sum(q ** 2) + 0.1 * np.sum(p ** 2)


def verlet_step(state, k):
    q, p = state
    m = np.array([1.0, 2.0, 1.5])
    dt = 0.05
    p = p + 0.5 * dt * spring_forces(q, k, m)
    q = q + dt * p
    p = p + 0.5 * dt * spring_forces(q, k, m)
    return (q, p)


def verlet_chain_checkpointed(params, n_steps=200):
    k = params[:3]
    q, p = adsim.checkpoint_loop(verlet_step, (np.array([0.1, 0.0, -0.1]), np.zeros(3)), n_steps,
                                 args=(k,))
    return np.sum(q ** 2) + 0.1 * np.sum(p ** 2)


# ---- 10. a fit by L-BFGS-B, its gradient adsim.grad of a loss that solves an ODE ---------------

def logistic_growth(t, N, r, K):
    return r * N * (1 - N / K)


GROWTH_T = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0])
GROWTH_N = np.array([0.11, 0.24, 0.52, 1.05, 1.80, 2.70, 3.40, 4.30, 4.70])


def growth_loss(theta):
    r, K = theta
    sol = solve_ivp(logistic_growth, (0, 10), [0.1], t_eval=GROWTH_T, args=(r, K), rtol=1e-10,
                    atol=1e-12)
    return np.sum((sol.y[0] - GROWTH_N) ** 2)


def fit_growth(p0=(0.5, 3.0)):
    return minimize(growth_loss, np.array(p0), jac=adsim.grad(growth_loss), method="L-BFGS-B",
                    bounds=[(0.01, 5.0), (0.5, 20.0)], options={"gtol": 1e-10, "ftol": 1e-14})


# ---- 11. a falling body with quadratic drag: apex (non-terminal event) and landing (terminal) --

def projectile(t, s, c, g):
    x, y, vx, vy = s
    speed = np.sqrt(vx ** 2 + vy ** 2)
    return [vx, vy, -c * speed * vx, -g - c * speed * vy]


def ground(t, s, c, g):
    return s[1]


ground.terminal = True
ground.direction = -1


def apex(t, s, c, g):
    return s[3]


def range_and_apex(params):
    c, angle = params
    v0 = 30.0
    s0 = [0.0, 1.5, v0 * np.cos(angle), v0 * np.sin(angle)]
    sol = solve_ivp(projectile, (0, 20), s0, args=(c, 9.81), events=[ground, apex], rtol=1e-11,
                    atol=1e-11)
    landing = sol.y_events[0][0]
    top = sol.y_events[1][0]
    return landing[0] + top[1] + sol.t_events[0][0]


# ---- 12. Sel'kov's glycolytic oscillator read by sol.sol at many times -------------------------

def selkov(t, z, a, b):
    x, y = z
    return [-x + a * y + x ** 2 * y, b - a * y - x ** 2 * y]


def selkov_spectrum_proxy(params):
    a, b = params
    sol = solve_ivp(selkov, (0, 30), [1.0, 1.0], args=(a, b), dense_output=True, rtol=1e-10,
                    atol=1e-12)
    t = np.linspace(0, 30, 601)
    x = sol.sol(t)[0]
    x = x - x.mean()
    return np.sum(x * np.cos(0.8 * t)) * (t[1] - t[0]) + np.mean(x ** 2)


# ---- 13. the diffusion operator assembled once with the active diffusivity, read by fun --------

def cable_potential_at_the_end(params):
    D, leak = params
    n = 25
    dx = 1.0 / n
    lap = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") / dx ** 2
    A = D * lap - leak * sp.identity(n, format="csr")     # the whole linear operator, once

    def cable(t, v):
        out = A @ v
        out[0] += D / dx ** 2                              # the clamped left end, v = 1
        return out
    sol = solve_ivp(cable, (0, 0.5), np.zeros(n), method="BDF", jac_sparsity=A, rtol=1e-10,
                    atol=1e-12)
    return sol.y[-1, -1]
