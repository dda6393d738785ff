"""Time-dependent programs written the way scientists write them, none of
which knows about adsim (tests/integrate/test_user_ode_programs_s16.py
differentiates them as they are): an SEIR epidemic with a lockdown that
lowers the contact rate smoothly, fitted by BFGS with ``adsim.grad`` of the
loss as ``jac=``; seasonal SIR by LSODA over three years read weekly;
an intravenous two-compartment model with saturable elimination dosed every
eight hours by restarting ``solve_ivp`` from a copy of the last state, and
an oral model whose bioavailability is added in place to a plain state;
fast enzyme binding (quasi-steady-state, Radau at SciPy's default
tolerances, ``dense_output``); a thermal explosion with an Arrhenius rate
``np.exp(-Ea / (R * T))`` by BDF at default tolerances with an ignition
event; Shampine's flame by LSODA; Goodwin's oscillator by ``odeint`` with
``tfirst=True`` and ``args=``; a chemostat whose parameters live in a dict
held by an object read by a bound method; a rate matrix filled entry by
entry and applied as ``K @ y``; a mass-spring chain with matrices in
``odeint``'s ``args=``; a bouncing ball restarted at each terminal event
with an apex event; the Oregonator with ``vectorized=True``; a
reaction-diffusion slab (Frank-Kamenetskii) with ``jac_sparsity`` built as
a ``lil_matrix``; a neural ODE (a small tanh MLP); Newton's method on an
ODE loss with ``adsim.hvp``; and RK4 by hand through
``adsim.checkpoint_loop`` with the time in the state; a lockdown on a date to
be fitted, switched inside ``fun`` (refused) and split at that date; and an
AUC by ``quad`` over ``sol.sol`` (refused)."""
import numpy as np
import scipy.sparse as sp
from scipy.integrate import odeint, solve_ivp
from scipy.optimize import minimize

import adsim


# ---- 1. SEIR with a smooth lockdown, fitted by BFGS with adsim.grad as jac ----------------------

def contact_rate(t, beta0, efficacy, t_lock=20.0, width=2.0):
    """beta falls by ``efficacy`` around day ``t_lock`` over a few days."""
    return beta0 * (1 - efficacy / (1 + np.exp(-(t - t_lock) / width)))


def seir_lockdown(t, y, beta0, efficacy, sigma, gamma, N):
    S, E, I, R = y
    new_inf = contact_rate(t, beta0, efficacy) * S * I / N
    return [-new_inf, new_inf - sigma * E, sigma * E - gamma * I, gamma * I]


CUMULATIVE = np.array([2, 4, 9, 16, 28, 46, 73, 112, 164, 226, 296, 370, 440, 499, 546, 581,
                       605, 622, 633, 641], dtype=float)   # reported every third day
DAYS = 3.0 * np.arange(1, 21)


def seir_loss(params):
    beta0, efficacy = params
    N = 1e4
    y0 = [N - 3.0, 2.0, 1.0, 0.0]
    sol = solve_ivp(seir_lockdown, (0, DAYS[-1]), y0, t_eval=DAYS,
                    args=(beta0, efficacy, 1 / 4.0, 1 / 6.0, N), rtol=1e-9, atol=1e-8)
    cases = sol.y[2] + sol.y[3]
    return np.sum((np.log(cases) - np.log(CUMULATIVE)) ** 2)


def fit_seir(p0=(0.6, 0.5)):
    return minimize(seir_loss, np.array(p0), jac=adsim.grad(seir_loss), method="BFGS",
                    options={"gtol": 1e-9})


# ---- 2. seasonal SIR with births and deaths, LSODA over three years, weekly t_eval --------------

def seasonal_sir(t, y, beta0, amplitude, gamma, mu):
    S, I = y
    beta = beta0 * (1 + amplitude * np.cos(2 * np.pi * t / 365.0))
    return [mu - beta * S * I - mu * S, beta * S * I - (gamma + mu) * I]


def seasonal_peaks(params):
    beta0, amplitude = params
    weeks = np.arange(0, 3 * 365, 7.0)
    sol = solve_ivp(seasonal_sir, (0, weeks[-1]), [0.3, 2e-4], method="LSODA", t_eval=weeks,
                    args=(beta0, amplitude, 1 / 7.0, 1 / (50 * 365.0)), rtol=1e-9, atol=1e-12)
    I = sol.y[1]
    return np.log(np.sum(I ** 2) / len(I)) + np.log(I[-1])


# ---- 3. IV bolus every 8 h, saturable elimination, restarted from a copy of the last state ------

def two_cpt_mm(t, a, Vmax, Km, k12, k21, Vc):
    central, peripheral = a
    conc = central / Vc
    elim = Vmax * conc / (Km + conc)
    return [-elim - k12 * central + k21 * peripheral, k12 * central - k21 * peripheral]


def trough_and_auc(params, n_doses=4, dose=500.0, tau=8.0):
    Vmax, Km, k12 = params
    Vc = 20.0
    y0 = np.array([dose, 0.0])
    t_all, c_all, troughs = [], [], []
    for i in range(n_doses):
        t_grid = np.linspace(i * tau, (i + 1) * tau, 17)
        sol = solve_ivp(two_cpt_mm, (i * tau, (i + 1) * tau), y0, t_eval=t_grid,
                        args=(Vmax, Km, k12, 0.3, Vc), rtol=1e-10, atol=1e-10)
        t_all.append(sol.t)
        c_all.append(sol.y[0] / Vc)
        troughs.append(sol.y[0, -1] / Vc)
        y0 = sol.y[:, -1].copy()
        y0[0] += dose
    auc = np.trapezoid(np.concatenate(c_all), np.concatenate(t_all))
    return auc / (n_doses * tau) + 5 * troughs[-1]


# ---- 4. oral doses, the bioavailable fraction added in place to a plain state -------------------

def gut_central(t, y, ka, ke):
    return [-ka * y[0], ka * y[0] - ke * y[1]]


def oral_regimen(params, dose=250.0, tau=12.0):
    ka, ke, F = params
    state = np.zeros(2)
    peaks = []
    for i in range(3):
        state[0] += F * dose
        sol = solve_ivp(gut_central, (i * tau, (i + 1) * tau), state, args=(ka, ke),
                        dense_output=True, rtol=1e-10, atol=1e-10)
        t_fine = np.linspace(i * tau, (i + 1) * tau, 49)
        peaks.append(sol.sol(t_fine)[1].max())
        state = sol.y[:, -1]
    return np.log(peaks[-1]) + 0.01 * state[1]


# ---- 5. fast enzyme binding: Radau at SciPy's default tolerances, dense output ------------------

def enzyme_full(t, y, kon, koff, kcat):
    S, E, C, P = y
    bind = kon * E * S - koff * C
    return [-bind, -bind + kcat * C, bind - kcat * C, kcat * C]


def product_curve(params):
    log_kon, kcat = params
    kon = 10.0 ** log_kon
    sol = solve_ivp(enzyme_full, (0, 50), [10.0, 1.0, 0.0, 0.0], method="Radau",
                    args=(kon, 1e3, kcat), dense_output=True)
    t_obs = np.array([2.0, 5.0, 11.0, 17.0, 30.0, 44.0])
    P = sol.sol(t_obs)[3]
    return np.sum((P - np.array([0.9, 2.2, 4.5, 6.4, 9.0, 9.9])) ** 2)


# ---- 6. thermal explosion: Arrhenius rate, BDF at default tolerances, ignition event ------------

R_GAS = 8.314


def adiabatic_batch(t, y, A, Ea, dT_ad):
    c, T = y
    k = A * np.exp(-Ea / (R_GAS * T))
    return [-k * c, dT_ad * k * c]


def ignition(t, y, A, Ea, dT_ad):
    return y[1] - 600.0


ignition.direction = 1


def explosion_summary(params):
    log_A, Ea_kJ = params
    sol = solve_ivp(adiabatic_batch, (0, 10.0), [1.0, 500.0], method="BDF",
                    args=(np.exp(log_A), 1e3 * Ea_kJ, 400.0), events=ignition,
                    t_eval=[0.5, 1.0, 10.0])
    return sol.t_events[0][0] + sol.y[0, 1] + 1e-3 * sol.y[1, -1]


# ---- 7. Shampine's flame by LSODA: a ball of flame from a small ignition ------------------------

def flame(t, y):
    return y ** 2 - y ** 3


def flame_front(params):
    (delta,) = params
    t_end = 2 / delta
    sol = solve_ivp(flame, (0, t_end), [delta], method="LSODA", rtol=1e-8, atol=1e-10,
                    t_eval=np.array([0.5, 0.9, 0.99]) / delta)
    return np.sum(sol.y[0])


# ---- 8. Goodwin's oscillator by odeint(tfirst=True) with args=, Hill exponent as parameter ------

def goodwin(t, x, a, b, K, n):
    m, p, r = x
    return [a / (1 + (r / K) ** n) - b * m, a * m - b * p, a * p - b * r]


def goodwin_mean_repressor(params):
    a, n = params
    t = np.linspace(0, 60, 241)
    x = odeint(goodwin, [0.1, 0.2, 2.5], t, args=(a, 0.2, 1.0, n), tfirst=True,
               rtol=1e-10, atol=1e-12)
    return np.mean(x[120:, 2]) + x[-1, 0]


# ---- 9. a chemostat whose parameters live in a dict held by an object, bound method ------------

class Chemostat:
    def __init__(self, mu_max, Ks, yield_coeff, D=0.1, S_in=10.0):
        self.p = {"mu_max": mu_max, "Ks": Ks, "Y": yield_coeff}
        self.D, self.S_in = D, S_in

    def growth(self, S):
        return self.p["mu_max"] * S / (self.p["Ks"] + S)

    def rhs(self, t, y):
        S, X = y
        mu = self.growth(S)
        return [self.D * (self.S_in - S) - mu * X / self.p["Y"], (mu - self.D) * X]

    def run(self, t_end=80.0):
        return solve_ivp(self.rhs, (0, t_end), [5.0, 0.05], method="DOP853",
                         t_eval=np.linspace(0, t_end, 9), rtol=1e-10, atol=1e-12)


def biomass_at_samples(params):
    sol = Chemostat(params[0], params[1], params[2]).run()
    return np.sum(sol.y[1] * np.linspace(1.0, 2.0, 9))


# ---- 10. a rate matrix filled entry by entry, K @ y, an infusion input --------------------------

def three_compartment_matrix(k):
    k10, k12, k21, k13, k31 = k
    K = np.zeros((3, 3))
    K[0, 0] = -(k10 + k12 + k13)
    K[0, 1] = k21
    K[0, 2] = k31
    K[1, 0] = k12
    K[1, 1] = -k21
    K[2, 0] = k13
    K[2, 2] = -k31
    return K


def central_exposure(params):
    K = three_compartment_matrix(params)
    u = np.array([10.0, 0.0, 0.0])

    def rhs(t, y):
        return K @ y + (u if t < 2.0 else 0.0 * u)
    sol = solve_ivp(rhs, (0, 24), np.zeros(3), t_eval=np.linspace(0, 24, 25), max_step=0.5,
                    rtol=1e-10, atol=1e-12)
    return np.trapezoid(sol.y[0], sol.t) + sol.y[2, -1]


# ---- 11. a mass-spring-damper chain: matrices M, K, C through odeint's args= --------------------

def chain_matrices(k):
    n = len(k)
    K = np.diag(k) + np.diag(np.append(k[1:], 0.0))
    K -= np.diag(k[1:], 1) + np.diag(k[1:], -1)
    return K


def second_order(y, t, Minv, K, C):
    n = len(y) // 2
    x, v = y[:n], y[n:]
    return np.concatenate([v, Minv @ (-K @ x - C @ v)])


def chain_response(params):
    K = chain_matrices(params[:3])
    C = params[3] * np.eye(3)
    Minv = np.linalg.inv(np.diag([1.0, 2.0, 1.0]))
    t = np.linspace(0, 10, 101)
    y = odeint(second_order, [0.0, 0.0, 0.1, 0.0, 0.0, 0.0], t, args=(Minv, K, C),
               rtol=1e-10, atol=1e-12)
    return np.sum(y[:, 0] ** 2) * (t[1] - t[0])


# ---- 12. a bouncing ball: restarted after each terminal event, apex by a second event -----------

def ball(t, s, c):
    y, v = s
    return [v, -9.81 - c * v * abs(v)]


def floor(t, s, c):
    return s[0]


floor.terminal = True
floor.direction = -1


def top(t, s, c):
    return s[1]


top.direction = -1


def third_bounce(params):
    e, c = params
    t0, s = 0.0, [1.0, 0.0]
    heights = []
    for _ in range(3):
        sol = solve_ivp(ball, (t0, t0 + 10), s, args=(c,), events=[floor, top], rtol=1e-10,
                        atol=1e-12)
        heights.extend(sol.y_events[1][:, 0])
        t0 = sol.t_events[0][0]
        s = [0.0, -e * sol.y_events[0][0, 1]]
    return t0 + np.sum(heights)


# ---- 13. the Oregonator, vectorized=True, Radau -------------------------------------------------

def oregonator(t, u, eps, q, f, delta=2e-2):
    x, y, z = u
    return np.array([(q * y - x * y + x * (1 - x)) / eps,
                     (-q * y - x * y + 2 * f * z) / delta,
                     x - z])


def oregonator_mean(params):
    eps, f = params
    sol = solve_ivp(oregonator, (0, 10), [0.5, 0.2, 0.3], method="Radau", vectorized=True,
                    args=(eps, 8e-4, f), t_eval=np.linspace(0, 10, 11), rtol=1e-8, atol=1e-10)
    return np.mean(sol.y[0]) + sol.y[2, -1]


# ---- 14. a reacting slab (Frank-Kamenetskii): method of lines, lil_matrix jac_sparsity ----------

def slab_rhs(t, T, lam, dx):
    Tpad = np.concatenate(([0.0], T, [0.0]))      # cold walls
    diffusion = (Tpad[2:] - 2 * T + Tpad[:-2]) / dx ** 2
    return diffusion + lam * np.exp(T / (1 + 0.05 * T))


def slab_hot_spot(params, n=30):
    lam, T_init = params
    x = np.linspace(0, 1, n + 2)[1:-1]
    dx = x[1] - x[0]
    pattern = sp.lil_matrix((n, n))
    for i in range(n):
        for j in (i - 1, i, i + 1):
            if 0 <= j < n:
                pattern[i, j] = 1
    sol = solve_ivp(slab_rhs, (0, 0.5), T_init * np.sin(np.pi * x), method="BDF",
                    args=(lam, dx), jac_sparsity=pattern, rtol=1e-9, atol=1e-10)
    return sol.y[n // 2, -1] + np.mean(sol.y[:, -1])


# ---- 15. a neural ODE: a tanh MLP right-hand side, weights unpacked from one vector -------------

HIDDEN = 8


def unpack(theta):
    W1 = theta[:2 * HIDDEN].reshape(HIDDEN, 2)
    b1 = theta[2 * HIDDEN:3 * HIDDEN]
    W2 = theta[3 * HIDDEN:5 * HIDDEN].reshape(2, HIDDEN)
    b2 = theta[5 * HIDDEN:]
    return W1, b1, W2, b2


def mlp_field(t, z, theta):
    W1, b1, W2, b2 = unpack(theta)
    h = np.tanh(W1 @ z + b1)
    return W2 @ h + b2


SPIRAL_T = np.linspace(0, 2, 11)
SPIRAL = np.stack([np.exp(-0.3 * SPIRAL_T) * np.cos(2 * SPIRAL_T),
                   np.exp(-0.3 * SPIRAL_T) * np.sin(2 * SPIRAL_T)])


def neural_ode_loss(theta):
    sol = solve_ivp(mlp_field, (0, 2), SPIRAL[:, 0], t_eval=SPIRAL_T, args=(theta,),
                    rtol=1e-9, atol=1e-10)
    return np.mean((sol.y - SPIRAL) ** 2)


def neural_ode_init(seed=0):
    rng = np.random.default_rng(seed)
    return 0.5 * rng.standard_normal(5 * HIDDEN + 2)


# ---- 16. Newton's method on an ODE loss: gradient and Hessian-vector products -------------------

def decay_chain(t, y, k1, k2):
    return [-k1 * y[0], k1 * y[0] - k2 * y[1]]


CHAIN_T = np.array([0.5, 1.0, 2.0, 3.0, 5.0, 8.0])
CHAIN_B = np.array([0.28, 0.41, 0.47, 0.42, 0.28, 0.14])


def chain_loss(log_k):
    k1, k2 = np.exp(log_k)
    sol = solve_ivp(decay_chain, (0, 8), [1.0, 0.0], args=(k1, k2), t_eval=CHAIN_T,
                    method="DOP853", rtol=1e-11, atol=1e-12)
    return 0.5 * np.sum((sol.y[1] - CHAIN_B) ** 2)


def newton_fit(x0=(0.0, -1.5), iters=8):
    x = np.array(x0, dtype=float)
    grad = adsim.grad(chain_loss)
    for _ in range(iters):
        g = grad(x)
        H = np.column_stack([adsim.hvp(chain_loss, x, e) for e in np.eye(len(x))])
        x = x - np.linalg.solve(H, g)
    return x


# ---- 17. RK4 by hand through adsim.checkpoint_loop, the time carried in the state ---------------

def forced_oscillator(t, x, zeta, omega):
    return np.array([x[1], -2 * zeta * omega * x[1] - omega ** 2 * x[0] + np.sin(1.3 * t)])


def rk4_step(state, zeta, omega, h=0.02):
    t, x = state
    k1 = forced_oscillator(t, x, zeta, omega)
    k2 = forced_oscillator(t + h / 2, x + h / 2 * k1, zeta, omega)
    k3 = forced_oscillator(t + h / 2, x + h / 2 * k2, zeta, omega)
    k4 = forced_oscillator(t + h, x + h * k3, zeta, omega)
    return (t + h, x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))


def rk4_amplitude(params, n_steps=500):
    zeta, omega = params
    (t, x), saved = adsim.checkpoint_loop(rk4_step, (np.array(0.0), np.array([1.0, 0.0])),
                                          n_steps, args=(zeta, omega),
                                          save_at=range(250, n_steps + 1, 25))
    return np.max(np.abs(saved[1][:, 0])) + x @ x


def rk4_amplitude_plain(params, n_steps=500):
    """The same loop written out, for comparison."""
    zeta, omega = params
    state = (np.array(0.0), np.array([1.0, 0.0]))
    kept = []
    for i in range(1, n_steps + 1):
        state = rk4_step(state, zeta, omega)
        if i >= 250 and i % 25 == 0:
            kept.append(state[1][0])
    return np.max(np.abs(np.array(kept))) + state[1] @ state[1]


# ---- 18. a lockdown on a date to be fitted: the contact rate switched inside fun ----------------

def seir_switched(t, y, beta0, reduction, t_lock, sigma, gamma, N):
    S, E, I, R = y
    beta = beta0 if t < t_lock else beta0 * (1 - reduction)
    return [-beta * S * I / N, beta * S * I / N - sigma * E, sigma * E - gamma * I, gamma * I]


def lockdown_date_loss(params):
    """As published: refused (the switch's date is a parameter)."""
    beta0, t_lock = params
    N = 1e4
    sol = solve_ivp(seir_switched, (0, DAYS[-1]), [N - 3.0, 2.0, 1.0, 0.0], t_eval=DAYS,
                    args=(beta0, 0.6, t_lock, 1 / 4.0, 1 / 6.0, N), rtol=1e-9, atol=1e-8)
    return np.sum((np.log(sol.y[2] + sol.y[3]) - np.log(CUMULATIVE)) ** 2)


def lockdown_date_loss_split(params):
    """The same model, integrated up to the lockdown and on from there."""
    beta0, t_lock = params
    N = 1e4
    rates = (1 / 4.0, 1 / 6.0, N)
    before = DAYS[DAYS < t_lock]
    first = solve_ivp(seir_switched, (0, t_lock), [N - 3.0, 2.0, 1.0, 0.0],
                      t_eval=np.append(before, t_lock), args=(beta0, 0.0, np.inf) + rates,
                      rtol=1e-9, atol=1e-8)
    second = solve_ivp(seir_switched, (t_lock, DAYS[-1]), first.y[:, -1],
                       t_eval=DAYS[DAYS >= t_lock], args=(beta0 * 0.4, 0.0, np.inf) + rates,
                       rtol=1e-9, atol=1e-8)
    y = np.concatenate([first.y[:, :-1], second.y], axis=1)
    return np.sum((np.log(y[2] + y[3]) - np.log(CUMULATIVE)) ** 2)


# ---- 19. AUC by quad over the dense output ---------------------------------------------------

def auc_by_quad(params):
    """As published: scipy.integrate.quad of sol.sol (refused, see the tests)."""
    from scipy.integrate import quad
    ka, ke = params
    sol = solve_ivp(gut_central, (0, 24), [100.0, 0.0], args=(ka, ke), dense_output=True,
                    rtol=1e-10, atol=1e-10)
    return quad(lambda t: sol.sol(t)[1], 0, 24)[0]
