"""ODE programs written the way scientists write them, none of which knows
about adsim (tests/integrate/test_user_ode_programs_s14.py differentiates
them as they are): an SIR fit by ``odeint`` with the parameters in one
tuple argument, an SEIR fit whose right-hand side is a closure called with
``vectorized=True``, an SEIRS model with keyword parameters and a Poisson
log-likelihood, repeated oral doses by restarting ``solve_ivp`` from
``sol.y[:, -1]``, an infusion switched off at a fixed time with
``max_step``, Robertson's kinetics in a class (bound methods for ``fun``
and ``jac``, BDF at SciPy's default tolerances), a reversible network with
a dict in ``args=`` solved by LSODA at default tolerances, predator-prey
rates set by ``global`` statements and read through ``dense_output``,
a pendulum's period from non-terminal events, an orbit's aphelion from
``y_events``, FitzHugh-Nagumo's first spike by a terminal event, a
Hodgkin-Huxley neuron as a callable object with a stimulus method, heat
conduction by the method of lines with ``jac_sparsity`` (BDF), Fisher-KPP
with ``jac_sparsity`` and ``vectorized=True`` (Radau), Van der Pol by LSODA
with ``first_step``, Michaelis-Menten by ``odeint`` with ``Dfun`` and
``full_output`` and a Gaussian log-likelihood with an unknown noise level,
Bergman's glucose model driven by ``np.interp`` of a measured insulin
table, an AUC by ``np.trapezoid`` over the solver's own steps with an
active final time, a ``functools.partial`` held by a lambda and
``solve_ivp`` called with keyword arguments only, an SIR peak by an event on
``dI/dt`` with ``y0`` a list of active scalars and the ``Radau`` class as
``method``, a threshold in ``args=`` read by a terminal LSODA event, an
integration backwards in time, a lag time shifting ``t_eval`` (BDF,
``vectorized=True``), and an adiabatic reactor by ``odeint(tfirst=True,
hmax=...)`` with ``math.exp`` Arrhenius rates.

(The SEIRS program was first written ``beta, gamma = np.exp((log_beta,
log_gamma))``: NumPy's ufuncs given a tuple of active scalars are refused,
with a message saying to make the tuple one array, adsim/_np.)"""
import functools
import math

import numpy as np
import scipy.sparse as sp
from scipy import integrate, stats
from scipy.integrate import odeint, solve_ivp
from scipy.special import gammaln


# ---- 1. SIR by odeint, parameters as one tuple argument, RMSE ------------------------------------

def sir_model(y, t, params):
    S, I, R = y
    beta, gamma = params
    dS = -beta * S * I
    dI = beta * S * I - gamma * I
    dR = gamma * I
    return dS, dI, dR


FLU_DATA = np.array([3, 8, 28, 76, 176, 325, 473, 530, 495, 385]) / 1000
FLU_T = np.linspace(0, len(FLU_DATA), len(FLU_DATA))


def sir_rmse(params):
    I0 = FLU_DATA[0]
    solution = odeint(sir_model, [1 - I0, I0, 0], FLU_T, args=(params,))
    return np.sqrt(np.mean((solution[:, 1] - FLU_DATA) ** 2))


# ---- 2. SEIR, closure right-hand side, vectorized=True, t_eval=np.arange -------------------------

SEIR_CONFIRMED = np.array([1, 2, 4, 7, 13, 22, 37, 59, 90, 128, 170, 210, 240, 255, 256])


def seir_loss(params):
    beta, sigma, gamma = params
    N = 10000.0

    def SEIR(t, y):
        S, E, I, R = y
        return np.array([-beta * S * I / N, beta * S * I / N - sigma * E, sigma * E - gamma * I,
                         gamma * I])
    size = len(SEIR_CONFIRMED)
    y0 = [N - 1.0, 0.0, 1.0, 0.0]
    sol = solve_ivp(SEIR, (0, size), y0, method="RK45", t_eval=np.arange(0, size, 1),
                    vectorized=True, rtol=1e-6, atol=1e-6)
    infected = sol.y[2] + sol.y[3]
    return np.mean((infected - SEIR_CONFIRMED) ** 2)


# ---- 3. SEIRS with keyword parameters, log rates through np.exp of a tuple, Poisson NLL ----------

def SEIRS(t, y, beta=None, alpha=None, gamma=None, xi=None):
    S, E, I, R = y
    N = S + E + I + R
    return [-beta * S * I / N + xi * R, beta * S * I / N - alpha * E, alpha * E - gamma * I,
            gamma * I - xi * R]


WEEKLY_CASES = np.array([4, 9, 20, 37, 61, 85, 97, 94, 80, 62, 46, 33])


def seirs_nll(log_params):
    beta, gamma = np.exp(log_params)
    alpha, xi = 1 / 5.2, 1 / 180
    weeks = np.arange(1, 13) * 7.0
    sol = solve_ivp(SEIRS, [0, weeks[-1]], [5000.0, 10.0, 2.0, 0.0], t_eval=weeks,
                    args=(beta, alpha, gamma, xi), rtol=1e-7, atol=1e-8)
    incidence = alpha * sol.y[1] * 7.0          # new cases over a week, roughly
    lam = incidence
    return -np.sum(WEEKLY_CASES * np.log(lam) - lam - gammaln(WEEKLY_CASES + 1))


# ---- 4. repeated oral doses: restart from sol.y[:, -1] with the dose added -----------------------

def oral_pk(t, y, ka, ke):
    gut, central = y
    return [-ka * gut, ka * gut - ke * central]


PK_TIMES = np.array([2.0, 6.0, 11.0, 14.0, 23.0, 30.0, 36.0, 47.0])
PK_CONC = np.array([7.9, 9.2, 6.0, 11.5, 9.8, 13.1, 13.8, 10.2])


def multiple_dose_sse(params):
    ka, ke = params
    V, dose, tau = 10.0, 100.0, 12.0
    y = np.array([0.0, 0.0])
    ts, cs = [], []
    for k in range(4):
        y = y + np.array([dose, 0.0])
        t_obs = PK_TIMES[(PK_TIMES >= k * tau) & (PK_TIMES < (k + 1) * tau)]
        sol = solve_ivp(oral_pk, (k * tau, (k + 1) * tau), y, args=(ka, ke), rtol=1e-8,
                        atol=1e-10, dense_output=True)
        ts.append(t_obs)
        cs.append(sol.sol(t_obs)[1] / V)
        y = sol.y[:, -1]
    conc = np.concatenate(cs)
    return np.sum((np.log(conc) - np.log(PK_CONC)) ** 2)


# ---- 5. an infusion switched off at a fixed time, max_step so the solver sees it -----------------

def two_compartment(t, x, k10, k12, k21, V1, rate, t_inf):
    infusion = rate if t < t_inf else 0.0
    a1, a2 = x
    return [infusion - (k10 + k12) * a1 + k21 * a2, k12 * a1 - k21 * a2]


def infusion_auc_and_trough(params):
    k10, k12 = params
    t = np.linspace(0, 24, 49)
    sol = solve_ivp(two_compartment, (0, 24), [0, 0], t_eval=t, max_step=0.25,
                    args=(k10, k12, 0.15, 5.0, 50.0, 2.0), rtol=1e-6, atol=1e-9)
    c = sol.y[0] / 5.0
    return np.trapezoid(c, t) + 10 * c[-1]


# ---- 6. Robertson's kinetics in a class: bound methods, BDF at SciPy's default tolerances --------

class Reactor:
    def __init__(self, k):
        self.k = k

    def rhs(self, t, c):
        k1, k2, k3 = self.k
        A, B, C = c
        return [-k1 * A + k3 * B * C, k1 * A - k2 * B ** 2 - k3 * B * C, k2 * B ** 2]

    def jac(self, t, c):
        k1, k2, k3 = self.k
        A, B, C = c
        return np.array([[-k1, k3 * C, k3 * B],
                         [k1, -2 * k2 * B - k3 * C, -k3 * B],
                         [0.0, 2 * k2 * B, 0.0]])

    def run(self, t_obs):
        return solve_ivp(self.rhs, (0, t_obs[-1]), [1.0, 0.0, 0.0], method="BDF",
                         jac=self.jac, t_eval=t_obs)


ROB_T = np.array([1.0, 10.0, 100.0, 1000.0])
ROB_C = np.array([0.97, 0.85, 0.62, 0.36])


def reactor_misfit(log_k12):
    k = np.array([np.exp(log_k12[0]), 3e7, np.exp(log_k12[1])])
    sol = Reactor(k).run(ROB_T)
    return np.sum(((sol.y[0] - ROB_C) / 0.01) ** 2)


# ---- 7. a reversible network, rate constants in a dict passed by args=, LSODA defaults -----------

def network(t, c, p):
    A, B, C, D = c
    r1 = p["kf1"] * A * B - p["kr1"] * C
    r2 = p["k2"] * C - p["kr2"] * D ** 2
    return [-r1, -r1, r1 - r2, 2 * r2]


def network_yield(params):
    p = {"kf1": params[0], "kr1": 0.3, "k2": params[1], "kr2": 0.05}
    sol = solve_ivp(network, (0, 20), [1.0, 0.8, 0.0, 0.0], method="LSODA", args=(p,),
                    t_eval=[5.0, 10.0, 20.0])
    return sol.y[3, -1] + 0.5 * sol.y[2, 0]


# ---- 8. predator-prey rates set by `global`, read through dense_output --------------------------

alpha, beta, delta, gamma_ = 1.0, 0.1, 0.075, 1.5


def lotka(t, z):
    x, y = z
    return [alpha * x - beta * x * y, delta * x * y - gamma_ * y]


HARE = np.array([30.0, 47.2, 70.2, 77.4, 36.3, 20.6, 18.1, 21.4, 22.0, 25.4, 27.1])
LYNX = np.array([4.0, 6.1, 9.8, 35.2, 59.4, 41.7, 19.0, 13.0, 8.3, 9.1, 7.4])


def lotka_residuals_half_ss(params):
    global alpha, delta
    alpha, delta = params
    sol = solve_ivp(lotka, [0, 10], [HARE[0], LYNX[0]], dense_output=True, rtol=1e-7, atol=1e-9)
    t = np.linspace(0, 10, 11)
    z = sol.sol(t)
    res = np.concatenate([z[0] - HARE, z[1] - LYNX])
    return 0.5 * res @ res


# ---- 9. a damped pendulum's period from non-terminal events -------------------------------------

def pendulum_period(params):
    L, c = params
    g = 9.81

    def pend(t, th):
        return [th[1], -(g / L) * np.sin(th[0]) - c * th[1]]

    def upward_zero(t, th):
        return th[0]
    upward_zero.direction = 1

    sol = solve_ivp(pend, (0, 12), [0.5, 0.0], events=upward_zero, rtol=1e-9, atol=1e-10,
                    method="DOP853")
    crossings = sol.t_events[0]
    return np.mean(np.diff(crossings))


# ---- 10. an orbit's aphelion from y_events of r.v = 0 --------------------------------------------

def kepler(t, s, mu):
    x, y, vx, vy = s
    r3 = (x ** 2 + y ** 2) ** 1.5
    return [vx, vy, -mu * x / r3, -mu * y / r3]


def radial_velocity_zero(t, s, mu):
    return s[0] * s[2] + s[1] * s[3]


def aphelion_distance(params):
    mu, v0 = params
    sol = solve_ivp(kepler, (0, 20), [1.0, 0.0, 0.0, v0], args=(mu,),
                    events=radial_velocity_zero, rtol=1e-10, atol=1e-12)
    radii = [np.hypot(s[0], s[1]) for s in sol.y_events[0]]
    return max(radii) + 0.1 * sol.t_events[0][1]


# ---- 11. FitzHugh-Nagumo: time of the first spike by a terminal event ---------------------------

def I_ext(t):
    return 0.5 if 1.0 <= t <= 40.0 else 0.0


def fhn(t, u, a, b, eps):
    v, w = u
    return [v - v ** 3 / 3 - w + I_ext(t), eps * (v + a - b * w)]


def spike(t, u, a, b, eps):
    return u[0] - 1.0


spike.terminal = True
spike.direction = 1


def first_spike_time(params):
    a, eps = params
    sol = solve_ivp(fhn, (0, 60), [-1.2, -0.6], args=(a, 0.8, eps), events=spike, rtol=1e-8,
                    atol=1e-10, max_step=0.5)
    return sol.t_events[0][0]


# ---- 12. Hodgkin-Huxley as a callable object with a stimulus method ------------------------------

class HodgkinHuxley:
    def __init__(self, gNa=120.0, gK=36.0, gL=0.3):
        self.gNa, self.gK, self.gL = gNa, gK, gL
        self.ENa, self.EK, self.EL = 50.0, -77.0, -54.4
        self.C = 1.0

    def I(self, t):
        return 10.0 if t > 1.0 else 0.0

    @staticmethod
    def alpha_n(V):
        return 0.01 * (V + 55) / (1 - np.exp(-(V + 55) / 10))

    @staticmethod
    def beta_n(V):
        return 0.125 * np.exp(-(V + 65) / 80)

    @staticmethod
    def alpha_m(V):
        return 0.1 * (V + 40) / (1 - np.exp(-(V + 40) / 10))

    @staticmethod
    def beta_m(V):
        return 4.0 * np.exp(-(V + 65) / 18)

    @staticmethod
    def alpha_h(V):
        return 0.07 * np.exp(-(V + 65) / 20)

    @staticmethod
    def beta_h(V):
        return 1 / (1 + np.exp(-(V + 35) / 10))

    def __call__(self, t, y):
        V, n, m, h = y
        INa = self.gNa * m ** 3 * h * (V - self.ENa)
        IK = self.gK * n ** 4 * (V - self.EK)
        IL = self.gL * (V - self.EL)
        dV = (self.I(t) - INa - IK - IL) / self.C
        dn = self.alpha_n(V) * (1 - n) - self.beta_n(V) * n
        dm = self.alpha_m(V) * (1 - m) - self.beta_m(V) * m
        dh = self.alpha_h(V) * (1 - h) - self.beta_h(V) * h
        return [dV, dn, dm, dh]

    @property
    def initial_conditions(self):
        V = -65.0
        n = self.alpha_n(V) / (self.alpha_n(V) + self.beta_n(V))
        m = self.alpha_m(V) / (self.alpha_m(V) + self.beta_m(V))
        h = self.alpha_h(V) / (self.alpha_h(V) + self.beta_h(V))
        return [V, n, m, h]


def hh_peak_and_time(params):
    gNa, gK = params
    model = HodgkinHuxley(gNa=gNa, gK=gK)

    def threshold(t, y):
        return y[0]
    threshold.terminal = True
    threshold.direction = 1
    sol = solve_ivp(model, (0, 15), model.initial_conditions, events=threshold, rtol=1e-8,
                    atol=1e-8, max_step=0.1)
    return sol.t_events[0][0] + 0.01 * sol.y[2, -1]       # m at the spike


# ---- 13. heat conduction by the method of lines, BDF with jac_sparsity ---------------------------

def heat_midpoint(params):
    kappa, h_out = params
    n = 40
    dx = 1.0 / (n - 1)

    def rhs(t, u):
        dudt = np.zeros_like(u)
        dudt[1:-1] = kappa * (u[2:] - 2 * u[1:-1] + u[:-2]) / dx ** 2
        dudt[0] = kappa * 2 * (u[1] - u[0]) / dx ** 2 + 2 * 1.0 / dx       # heat flux in
        dudt[-1] = kappa * 2 * (u[-2] - u[-1]) / dx ** 2 - 2 * h_out * u[-1] / dx
        return dudt

    pattern = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    sol = solve_ivp(rhs, (0, 0.5), np.zeros(n), method="BDF", jac_sparsity=pattern,
                    t_eval=[0.1, 0.5], rtol=1e-6, atol=1e-8)
    return sol.y[n // 2, -1] + sol.y[-1, 0]


# ---- 14. Fisher-KPP fronts: Radau, jac_sparsity, vectorized=True --------------------------------

def fisher_front_mass(params):
    D, r = params
    N = 30
    x = np.linspace(0, 10, N)
    dx = x[1] - x[0]

    def kpp(t, u):
        lap = np.empty_like(u)
        lap[1:-1] = u[2:] - 2 * u[1:-1] + u[:-2]
        lap[0] = 2 * (u[1] - u[0])
        lap[-1] = 2 * (u[-2] - u[-1])
        return D * lap / dx ** 2 + r * u * (1 - u)

    S = sp.diags([np.ones(N - 1), np.ones(N), np.ones(N - 1)], [-1, 0, 1]).tolil()
    u0 = 1 / (1 + np.exp(4 * (x - 2)))
    sol = solve_ivp(kpp, [0, 3], u0, method="Radau", jac_sparsity=S, vectorized=True,
                    t_eval=[1.5, 3.0], rtol=1e-5, atol=1e-8)
    return np.trapezoid(sol.y[:, -1], x) + sol.y[N // 2, 0]


# ---- 15. Van der Pol by LSODA with first_step ----------------------------------------------------

def vdp(t, y, mu):
    return [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]]


def vdp_amplitude(params):
    mu, x0 = params
    t = np.linspace(0, 15, 31)
    sol = solve_ivp(vdp, (0, 15), [x0, 0.0], method="LSODA", t_eval=t, args=(mu,),
                    first_step=1e-4, rtol=1e-8, atol=1e-10)
    return np.sum(sol.y[0] ** 2) / len(t)


# ---- 16. Michaelis-Menten by odeint with Dfun and full_output; Gaussian log-likelihood ----------

def mm(S, t, Vmax, Km):
    return [-Vmax * S[0] / (Km + S[0])]


def mm_jac(S, t, Vmax, Km):
    return [[-Vmax * Km / (Km + S[0]) ** 2]]


MM_T = np.array([0.0, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0])
MM_S = np.array([10.0, 8.7, 7.3, 5.0, 3.0, 1.7, 0.45, 0.1])


def mm_loglik(params):
    Vmax, Km, log_sigma = params
    S, info = odeint(mm, [10.0], MM_T, args=(Vmax, Km), Dfun=mm_jac, full_output=True)
    sigma = np.exp(log_sigma)
    return stats.norm.logpdf(MM_S, loc=S[:, 0], scale=sigma).sum()


# ---- 17. Bergman's minimal glucose model driven by a measured insulin table ----------------------

INS_T = np.array([0, 2, 4, 8, 12, 16, 20, 30, 40, 60, 90, 120.0])
INS = np.array([11, 92, 78, 60, 48, 40, 35, 24, 20, 15, 10, 9.0])
GLU_T = np.array([5, 10, 20, 30, 60, 90, 120.0])
GLU = np.array([280, 240, 200, 175, 130, 105, 95.0])


def bergman(t, z, p1, p2, p3, Gb, Ib):
    G, X = z
    insulin = np.interp(t, INS_T, INS)
    return [-(p1 + X) * G + p1 * Gb, -p2 * X + p3 * (insulin - Ib)]


def glucose_fit(params):
    p1, p3_scaled = params
    sol = integrate.solve_ivp(bergman, (0, 120), [300.0, 0.0], t_eval=GLU_T,
                              args=(p1, 0.025, p3_scaled * 1e-5, 90.0, 9.0), rtol=1e-8,
                              atol=1e-8, max_step=2.0)
    return np.sum((sol.y[0] - GLU) ** 2) / 100


# ---- 18. AUC by np.trapezoid over the solver's own steps, active final time ---------------------

def auc_to_tlast(params):
    k, t_last = params

    def elimination(t, c):
        return -k * c * (1 + 0.1 * np.cos(t))
    sol = solve_ivp(elimination, (0, t_last), [5.0], rtol=1e-10, atol=1e-12)
    return np.trapezoid(sol.y[0], sol.t) + sol.y[0, -1] / k


# ---- 19. a partial right-hand side, keyword-only call, a cooling law with a spin-up ------------

def cooling(t, T, h, T_env, heat):
    return -h * (T - T_env) + heat * math.exp(-t)


def cooling_final(params):
    h, heat = params
    f = functools.partial(cooling, h=h, T_env=20.0, heat=heat)
    sol = solve_ivp(fun=lambda t, T: f(t, T), t_span=(0.0, 5.0), y0=np.array([90.0]),
                    method="RK23", rtol=1e-7, atol=1e-7)
    return sol.y[0][-1]


# ---- 20. SIR with a fitted initial prevalence: y0 a list of active scalars, the Radau class, -----
#          the epidemic's peak by a non-terminal event on dI/dt

def sir(t, y, beta, gamma):
    S, I, R = y
    return [-beta * S * I, beta * S * I - gamma * I, gamma * I]


def infection_peak(t, y, beta, gamma):
    S, I, R = y
    return beta * S * I - gamma * I


infection_peak.direction = -1


def peak_time_and_size(params):
    beta, i0 = params
    gamma = 0.1
    sol = solve_ivp(sir, (0, 200), [1 - i0, i0, 0.0], method=integrate.Radau,
                    args=(beta, gamma), events=infection_peak, rtol=1e-6, atol=1e-9)
    t_peak = sol.t_events[0][0]
    I_peak = sol.y_events[0][0][1]
    return t_peak / 10 + 100 * I_peak


# ---- 21. when does the drug fall below a threshold? LSODA, terminal event, threshold in args ----

def one_compartment(t, y, ke, mec):
    return [-ke * y[0]]


def below_mec(t, y, ke, mec):
    return y[0] - mec


below_mec.terminal = True


def time_above_mec(params):
    ke, mec = params
    sol = solve_ivp(one_compartment, (0, 100), [20.0], method="LSODA", args=(ke, mec),
                    events=[below_mec], rtol=1e-8, atol=1e-10)
    return sol.t_events[0][0]


# ---- 22. integrating backwards from a known final state -----------------------------------------

def backwards_start(params):
    k, c = params

    def rhs(t, y):
        return [y[1], -k * y[0] - c * y[1] + np.cos(t)]
    sol = solve_ivp(rhs, (10.0, 0.0), [1.0, 0.0], rtol=1e-8, atol=1e-10)
    return sol.y[0, -1] ** 2 + sol.y[1, -1]


# ---- 23. a lag time: t_eval shifted by a fitted delay, BDF with vectorized=True -----------------

def absorption(t, y, ka, ke):
    return np.array([-ka * y[0], ka * y[0] - ke * y[1]])


LAG_T = np.array([1.0, 2.0, 3.0, 5.0, 8.0, 12.0])
LAG_C = np.array([0.5, 3.9, 5.6, 6.1, 4.9, 3.2])


def lagged_fit(params):
    ka, t_lag = params
    sol = solve_ivp(absorption, (0, 12), [10.0, 0.0], method="BDF", vectorized=True,
                    t_eval=np.clip(LAG_T - t_lag, 0, None), args=(ka, 0.12), rtol=1e-7,
                    atol=1e-9)
    return np.sum((sol.y[1] - LAG_C) ** 2)


# ---- 24. an adiabatic batch reactor with Arrhenius rates by math.exp, odeint(tfirst=True, hmax) -

def batch(t, y, A, Ea):
    c, T = y
    r = A * math.exp(-Ea / (8.314 * T)) * c
    return [-r, 40.0 * r]


def final_temperature(params):
    log_A, Ea = params
    t = np.linspace(0, 10, 11)
    y = odeint(batch, [1.0, 320.0], t, args=(math.exp(log_A), Ea), tfirst=True, hmax=0.5)
    return y[-1, 1] + y[5, 1]


# ---- 25. a right-hand side that fills and returns one preallocated buffer ------------------------

def pendulum_with_buffer(params, method="Radau"):
    g_over_L, c = params
    dydt = np.empty(2)

    def rhs(t, y):
        dydt[0] = y[1]
        dydt[1] = -g_over_L * np.sin(y[0]) - c * y[1]
        return dydt
    sol = solve_ivp(rhs, (0, 5), [1.0, 0.0], method=method, rtol=1e-8, atol=1e-10)
    return sol.y[0, -1]
