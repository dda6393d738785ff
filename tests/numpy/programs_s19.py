"""Small scientific programs written as their authors write them (round
nineteen): SciPy's machinery inside the models (sparse Laplacians built by
diags, lil assignment, kron and kronsum, solved by spsolve, splu and
factorized; root, fsolve, brentq, newton, minimize, least_squares and
minimize_scalar inside the function; quad, solve_ivp and odeint with
stiff kinetics, jac_sparsity, events, dense output, t_eval and args=;
CubicSpline, interp1d and RegularGridInterpolator with active data or
active queries; special functions; scipy.linalg's solve, cho_factor,
lu_factor and expm), and NumPy's last mile (stencils updated in place
through views, plain arrays written by active values, np.add.at, masks,
np.where, fancy indexing, einsum, parameters held in dicts, dataclasses,
objects, bound methods and globals, reshapes and transposes, np.linalg).

None of them knows about adsim; tests/numpy/test_user_programs_s19.py
differentiates them as they are."""
import dataclasses
import functools
import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy import integrate, interpolate, optimize, special
from scipy.integrate import odeint, quad, solve_ivp
from scipy.interpolate import CubicSpline, RegularGridInterpolator, interp1d
from scipy.optimize import brentq, fsolve, least_squares, minimize, newton, root
from scipy.sparse.linalg import spsolve, splu


# ============================ sparse operators =================================

# ---- 1. steady reaction-diffusion: diags Laplacian in csr, spsolve ------------------------

def steady_reaction_diffusion(params, n=30):
    D, k = params
    h = 1.0 / (n + 1)
    x = np.linspace(h, 1 - h, n)
    lap = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") / h ** 2
    A = D * lap - k * sp.identity(n, format="csr")
    u = spsolve(A, -np.exp(-((x - 0.4) / 0.1) ** 2))
    return np.sum(u) * h


# ---- 2. implicit Euler with one splu factorisation reused every step ----------------------

def implicit_heat_splu(params, n=20, steps=15):
    alpha, source = params
    h = 1.0 / (n + 1)
    dt = 0.01
    lap = sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1]) / h ** 2
    M = (sp.eye(n) - dt * alpha * lap).tocsc()
    lu = splu(M)
    u = np.zeros(n)
    f = source * np.sin(np.pi * np.linspace(h, 1 - h, n))
    for _ in range(steps):
        u = lu.solve(u + dt * f)
    return u.max() + u.mean()


# ---- 3. explicit steps by sparse @ dense: variable conductivity on the diagonals --------

def variable_conductivity_explicit(params, n=16, steps=30):
    k0, k1 = params
    h = 1.0 / (n + 1)
    xm = (np.arange(n + 1) + 0.5) * h             # faces
    kf = k0 + k1 * xm
    main = -(kf[:-1] + kf[1:])
    L = sp.diags([kf[1:-1], main, kf[1:-1]], [-1, 0, 1], format="csr") / h ** 2
    u = np.sin(np.pi * np.linspace(h, 1 - h, n))
    dt = 0.2 * h ** 2 / (k0 + k1)
    for _ in range(steps):
        u = u + dt * (L @ u)
    return np.sum(u ** 2) * h


# ---- 4. finite elements assembled in COO: active element conductivities, csr, spsolve ---

def fem_bar_coo(params, ne=12):
    EA_left, EA_right = params
    L = 1.0
    he = L / ne
    EA = np.where(np.arange(ne) < ne // 2, EA_left, EA_right)
    rows, cols, vals = [], [], []
    for e in range(ne):
        ke = EA[e] / he * np.array([[1.0, -1.0], [-1.0, 1.0]])
        for a in range(2):
            for b in range(2):
                rows.append(e + a)
                cols.append(e + b)
                vals.append(ke[a, b])
    K = sp.coo_matrix((vals, (rows, cols)), shape=(ne + 1, ne + 1)).tocsr()
    F = np.full(ne + 1, he)
    F[[0, -1]] = he / 2
    u = np.zeros(ne + 1)
    u[1:] = spsolve(K[1:, 1:], F[1:])
    return F @ u


# ---- 5. a 2-d Poisson problem: lil rows set in a loop, kron, active source ----------------

def d2_lil(N):
    D2 = sp.lil_matrix((N, N))
    D2[0, 0:2] = np.array([-2.0, 1.0])
    D2[N - 1, N - 2:N] = np.array([1.0, -2.0])
    for i in range(1, N - 1):
        D2[i, i - 1:i + 2] = np.array([1.0, -2.0, 1.0])
    return D2


def poisson_2d_lil(params, N=8):
    amp, width = params
    h = 1.0 / (N + 1)
    L = (sp.kron(d2_lil(N), sp.identity(N)) + sp.kron(sp.identity(N), d2_lil(N))) / h ** 2
    xs = np.linspace(h, 1 - h, N)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    f = amp * np.exp(-((X - 0.5) ** 2 + (Y - 0.5) ** 2) / width ** 2)
    u = spsolve(L.tocsr(), -f.ravel())
    return u.reshape(N, N)[N // 2, N // 2] + np.sum(u) * h * h


# ---- 6. kronsum of two 1-d operators scaled by anisotropic conductivities, factorized ----

def anisotropic_factorized(params, nx=7, ny=6):
    kx, ky = params
    Tx = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(nx, nx))
    Ty = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(ny, ny))
    A = -sp.kronsum(kx * Tx, ky * Ty, format="csc")
    solve = spla.factorized(A)
    b = np.ones(nx * ny)
    u = solve(b)
    return b @ u


# ---- 7. a graph Laplacian from an active-weighted adjacency: degrees by .sum(axis=1) -----

EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [3, 4], [4, 5], [5, 3]])


def graph_resistance(params):
    w_ring, w_chord = params
    w = np.where(np.arange(len(EDGES)) % 4 == 0, w_chord, w_ring)
    n = 6
    W = sp.csr_matrix((w, (EDGES[:, 0], EDGES[:, 1])), shape=(n, n))
    W = W + W.T
    deg = np.asarray(W.sum(axis=1)).ravel()
    Lg = sp.diags(deg) - W
    Lg = Lg.tolil()
    Lg[0, :] = 0
    Lg[0, 0] = 1.0
    b = np.zeros(n)
    b[5] = 1.0
    v = spsolve(Lg.tocsr(), b)
    return v[5] - v[0]


# ---- 8. conjugate gradients inside the model, tolerance far below the differences -----

def cg_solve_energy(params, n=12):
    a, b = params
    A = sp.diags([-1.0, 2.0 + a, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    rhs = b * np.linspace(0, 1, n) ** 2
    u, info = spla.cg(A, rhs, rtol=1e-13, atol=0.0)
    return rhs @ u


# ---- 9. method of lines in csr with BDF given jac_sparsity -----------------------------

def mol_bdf_sparsity(params, n=6):
    D, k = params
    h = 1.0 / (n + 1)
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") / h ** 2

    def rhs(t, u):
        return D * (L @ u) - k * u ** 2

    pattern = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    u0 = np.sin(np.pi * np.linspace(h, 1 - h, n))
    sol = solve_ivp(rhs, (0, 0.05), u0, method="BDF", jac_sparsity=pattern, rtol=1e-9,
                    atol=1e-11)
    return np.sum(sol.y[:, -1]) * h


# ---- 10. sparse.linalg.expm_multiply of a generator with active rates ------------------

def birth_death_expm(params, n=8):
    lam, mu = params
    up = lam * np.ones(n - 1)
    down = mu * np.ones(n - 1)
    Q = sp.diags([up, down], [1, -1], shape=(n, n)).tolil()
    Q.setdiag(-np.asarray(Q.sum(axis=1)).ravel())
    p0 = np.zeros(n)
    p0[0] = 1.0
    p = spla.expm_multiply(Q.T.tocsc() * 1.5, p0)
    return p @ np.arange(n)


# ============================ optimisers inside ================================

# ---- 11. root with method='lm' and jac=True: a two-equation equilibrium ----------------

def lm_equilibrium(params):
    K1, K2 = params

    def fun(z):
        x, y = z
        F = np.array([x * (1 + y) - K1 * (1 - x), y * (1 + x) - K2 * (1 - y)])
        J = np.array([[1 + y + K1, x], [y, 1 + x + K2]])
        return F, J

    sol = root(fun, [0.5, 0.5], jac=True, method="lm", options={"xtol": 1e-14})
    x, y = sol.x
    return x + 2 * y


# ---- 12. fsolve with args=(tuple) and fprime: a nonlinear spring network -----------------

def spring_fsolve(params):
    k, F = params

    def residual(u, k, F):
        return np.array([k * u[0] + u[0] ** 3 - (u[1] - u[0]),
                         (u[1] - u[0]) + 0.5 * u[1] ** 3 - F])

    def jac(u, k, F):
        return np.array([[k + 3 * u[0] ** 2 + 1, -1.0], [-1.0, 1 + 1.5 * u[1] ** 2]])

    u = fsolve(residual, [0.1, 0.2], args=(k, F), fprime=jac, xtol=1e-13)
    return u[1] ** 2 + u[0]


# ---- 13. root_scalar with a bracket: the Colebrook friction factor --------------------

def colebrook_friction(params):
    Re, rough = 1e5 * params[0], 1e-4 * params[1]

    def g(x):            # x = 1 / sqrt(f)
        return x + 2.0 * np.log10(rough / 3.7 + 2.51 * x / Re)

    sol = optimize.root_scalar(g, bracket=[1.0, 20.0], method="brentq", xtol=1e-14)
    return 1.0 / sol.root ** 2


# ---- 14. newton with fprime and fprime2 (Halley): the Lambert-type Wien peak -------------

def wien_halley(params):
    n, c = params

    def f(x):
        return (x - n) * np.exp(x) + n * c

    def fp(x):
        return (x - n + 1) * np.exp(x)

    def fpp(x):
        return (x - n + 2) * np.exp(x)

    x = newton(f, n, fprime=fp, fprime2=fpp, tol=1e-14)
    return x


# ---- 15. an inner fit by BFGS: profile likelihood over a nuisance parameter ----------------

PROFILE_T = np.linspace(0, 3, 12)
PROFILE_Y = 2.0 * np.exp(-0.7 * PROFILE_T) + 0.3 + 0.02 * np.cos(5 * PROFILE_T)


def profile_bfgs(params):
    rate, offset = params

    def sse(a):
        r = a[0] * np.exp(-rate * PROFILE_T) + offset - PROFILE_Y
        return np.sum(r ** 2) + 0.1 * a[0] ** 4

    res = minimize(sse, [1.0], method="BFGS", options={"gtol": 1e-12})
    return res.fun


# ---- 16. L-BFGS-B with bounds active at the optimum and one inactive ----------------------

def bounded_design(params):
    c1, c2 = params

    def cost(z):
        return (z[0] - c1) ** 2 + (z[1] - c2) ** 2 + z[0] * z[1]

    res = minimize(cost, [0.2, 0.2], method="L-BFGS-B", bounds=[(0.0, 2.0), (0.0, 0.5)],
                   options={"ftol": 1e-15, "gtol": 1e-12})
    return res.x[0] + 3 * res.x[1] + res.fun


# ---- 17. least_squares inside: calibrate an inner model, return the fitted value ----------

LS_X = np.linspace(0.0, 1.0, 9)


def inner_least_squares(params):
    a_true, b_true = params
    y = a_true * np.exp(b_true * LS_X)

    def resid(theta):
        return theta[0] + theta[1] * LS_X + theta[2] * LS_X ** 2 - y

    fit = least_squares(resid, np.zeros(3), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return fit.x @ np.array([1.0, 0.5, 0.25]) + fit.cost


# ---- 18. minimize_scalar bounded: the most probable speed from a model ------------------

def minimize_scalar_peak(params):
    m, T = params
    res = optimize.minimize_scalar(lambda v: -(v ** 2 * np.exp(-m * v ** 2 / (2 * T))),
                                   bounds=(0.01, 10.0), method="bounded",
                                   options={"xatol": 1e-12})
    return res.x


# ---- 19. least_squares with method='lm' and args=: a Michaelis-Menten fit of data -------

MM_S = np.array([0.5, 1.0, 2.0, 4.0, 8.0])


def lm_fit_of_data(params):
    noise_amp, scale = params
    v = scale * 2.0 * MM_S / (1.5 + MM_S) + noise_amp * np.array([0.1, -0.2, 0.1, 0.05, -0.1])

    def r(theta, S, v):
        return theta[0] * S / (theta[1] + S) - v

    fit = least_squares(r, [1.0, 1.0], method="lm", args=(MM_S, v), xtol=1e-15, ftol=1e-15,
                        gtol=1e-15)
    return fit.x[0] / fit.x[1]


# ---- 20. fixed-point iteration to convergence in a while loop (Picard, plain Python) ---

def picard_while(params):
    a, b = params
    x = 0.5
    while True:
        x_new = np.cos(a * x) * b
        if abs(x_new - x) < 1e-14:
            break
        x = x_new
    return x_new


# ============================ integration inside ===============================

# ---- 21. quad to infinity: a partition function with active temperature ------------------

def partition_function_inf(params):
    T, g = params
    Z, _ = quad(lambda E, T: np.sqrt(E) * np.exp(-E / T) / (1 + g * np.exp(-E)), 0, np.inf,
                args=(T,), epsabs=1e-13, epsrel=1e-12)
    return np.log(Z)


# ---- 22. Robertson kinetics by Radau with an analytic jacobian, log of the product --------

def robertson_radau(params, rtol=1e-8, atol=1e-12):
    k1, k3 = params
    k2 = 3e7

    def rhs(t, y):
        y1, y2, y3 = y
        return [-k1 * y1 + k3 * y2 * y3, k1 * y1 - k2 * y2 ** 2 - k3 * y2 * y3, k2 * y2 ** 2]

    def jac(t, y):
        y1, y2, y3 = y
        return [[-k1, k3 * y3, k3 * y2], [k1, -2 * k2 * y2 - k3 * y3, -k3 * y2],
                [0.0, 2 * k2 * y2, 0.0]]

    sol = solve_ivp(rhs, (0, 10.0), [1.0, 0.0, 0.0], method="Radau", jac=jac, rtol=rtol,
                    atol=atol)
    return sol.y[2, -1]


# ---- 23. LSODA with a terminal event: time to reach 90 % conversion -----------------------

def lsoda_conversion_time(params):
    k, n_order = params

    def rhs(t, c):
        return [-k * c[0] ** n_order]

    def done(t, c):
        return c[0] - 0.1
    done.terminal = True

    sol = solve_ivp(rhs, (0, 100), [1.0], method="LSODA", events=done, rtol=1e-10,
                    atol=1e-12)
    return sol.t_events[0][0]


# ---- 24. odeint with args=(tuple): an SEIR model sampled on a grid --------------------------

def seir(y, t, beta, sigma, gamma):
    S, E, I, R = y
    return [-beta * S * I, beta * S * I - sigma * E, sigma * E - gamma * I, gamma * I]


def seir_peak(params):
    beta, sigma = params
    t = np.linspace(0, 40, 41)
    Y = odeint(seir, [0.99, 0.0, 0.01, 0.0], t, args=(beta, sigma, 0.2), rtol=1e-10,
               atol=1e-12)
    return np.trapezoid(Y[:, 2], t)


# ---- 25. dense output and an event together: the overshoot of a damped step response ------

def step_response_overshoot(params):
    wn, zeta = params

    def rhs(t, y):
        return [y[1], wn ** 2 * (1 - y[0]) - 2 * zeta * wn * y[1]]

    def peak(t, y):
        return y[1]
    peak.direction = -1

    sol = solve_ivp(rhs, (0, 4), [0.0, 0.0], events=peak, dense_output=True, rtol=1e-10,
                    atol=1e-12)
    t_peak = sol.t_events[0][0]
    return sol.sol(t_peak)[0] - 1.0 + 0.1 * sol.sol(2.0)[0]


# ---- 26. DOP853 for a Kepler orbit: the energy drift of a perturbed orbit ----------------

def kepler_dop853(params):
    ecc, J2 = params

    def rhs(t, s):
        x, y, vx, vy = s
        r2 = x * x + y * y
        r = np.sqrt(r2)
        a = -1.0 / r ** 3 * (1 + J2 / r2)
        return [vx, vy, a * x, a * y]

    s0 = [1 - ecc, 0.0, 0.0, np.sqrt((1 + ecc) / (1 - ecc))]
    sol = solve_ivp(rhs, (0, 3.0), s0, method="DOP853", rtol=1e-12, atol=1e-12)
    x, y = sol.y[0, -1], sol.y[1, -1]
    return np.hypot(x, y)


# ---- 27. a reactor class whose bound method is the rhs, parameters on the object ----------

class CSTR:
    def __init__(self, k0, Ea, tau=2.0, T_in=350.0):
        self.k0 = k0
        self.Ea = Ea
        self.tau = tau
        self.T_in = T_in

    def rate(self, c, T):
        return self.k0 * np.exp(-self.Ea / T) * c

    def rhs(self, t, y):
        c, T = y
        r = self.rate(c, T)
        return np.array([(1.0 - c) / self.tau - r, (self.T_in - T) / self.tau + 20.0 * r])

    def simulate(self, t_end=5.0):
        return solve_ivp(self.rhs, (0, t_end), [1.0, 350.0], t_eval=[1.0, 2.5, t_end],
                         rtol=1e-10, atol=1e-10)


def cstr_object(params):
    reactor = CSTR(params[0] * 1e3, params[1] * 1e3)
    sol = reactor.simulate()
    return sol.y[0] @ np.array([1.0, 1.0, 2.0]) + sol.y[1, -1] / 350.0


# ---- 28. an ODE with parameters in a dataclass passed through args= -----------------------

@dataclasses.dataclass
class Growth:
    r: float
    K: float
    h: float = 0.1


def harvested_logistic(t, N, p):
    return p.r * N * (1 - N / p.K) - p.h * N


def dataclass_args(params):
    p = Growth(r=params[0], K=params[1])
    sol = solve_ivp(harvested_logistic, (0, 10), [0.1], args=(p,),
                    t_eval=np.linspace(0, 10, 11), rtol=1e-10, atol=1e-12)
    return np.sum(sol.y[0])


# ---- 29. quad of a CubicSpline fitted to active samples -----------------------------------

def quad_of_spline(params):
    a, b = params
    xs = np.linspace(0, 2, 9)
    ys = a * np.sin(b * xs)
    cs = CubicSpline(xs, ys)
    val, _ = quad(cs, 0.0, 2.0, epsabs=1e-11)
    return val + cs.integrate(0.5, 1.5)


# ---- 30. an integral with an active lower limit and quad's points= ------------------------

def active_limits_quad(params):
    a, s = params
    val, _ = quad(lambda x: np.exp(-s * x) * np.abs(x - 1.0), a, 3.0, points=[1.0],
                  epsabs=1e-13, epsrel=1e-13)
    return val


# ---- 31. scipy.integrate.trapezoid and simpson of a model on a fixed grid ----------------

def simpson_moments(params):
    mu, sigma = params
    x = np.linspace(-4, 6, 101)
    pdf = np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))
    m1 = integrate.simpson(x * pdf, x=x)
    m2 = integrate.trapezoid(x ** 2 * pdf, x)
    return m2 - m1 ** 2


# ---- 32. a stiff enzyme cascade by BDF with t_eval and args= at tight tolerances ------------

def cascade_bdf(params):
    def rhs(t, y, ka, kb):
        a, b, c = y
        return [-ka * a, ka * a - kb * b * 100.0, kb * b * 100.0]

    sol = solve_ivp(rhs, (0, 2), [1.0, 0.0, 0.0], method="BDF", args=tuple(params),
                    t_eval=[0.5, 1.0, 2.0], rtol=1e-8, atol=1e-10)
    return sol.y[1].sum() * 100 + sol.y[2, -1]


# ============================ interpolation =====================================

# ---- 33. clamped CubicSpline with active knots' values and end slopes, derivative() --------

def clamped_spline(params):
    a, slope = params
    x = np.array([0.0, 0.4, 1.1, 1.5, 2.0])
    y = a * x ** 2 - x
    cs = CubicSpline(x, y, bc_type=((1, slope), (1, 0.0)))
    dcs = cs.derivative()
    t = np.linspace(0, 2, 13)
    return np.sum(cs(t) ** 2) * 0.1 + dcs(1.3) + cs(0.7, 2)


# ---- 34. interp1d cubic with active values and fill_value='extrapolate' --------------------

def interp1d_cubic_extrapolate(params):
    a, b = params
    xk = np.linspace(0, 1, 7)
    f = interp1d(xk, a * np.exp(b * xk), kind="cubic", fill_value="extrapolate")
    return np.sum(f(np.array([0.05, 0.33, 0.8, 1.1])))


# ---- 35. RegularGridInterpolator: active table values, fixed queries ----------------------

def table_lookup(params):
    a, b = params
    T = np.linspace(300, 500, 5)
    P = np.linspace(1, 5, 4)
    TT, PP = np.meshgrid(T, P, indexing="ij")
    table = a * PP / TT * 1e2 + b * np.log(TT)
    rgi = RegularGridInterpolator((T, P), table)
    q = np.array([[320.0, 1.5], [410.0, 2.2], [480.0, 4.9]])
    return np.sum(rgi(q) ** 2)


# ---- 36. RegularGridInterpolator: a fixed table, active query points ---------------------

GRID_X = np.linspace(0, 1, 6)
GRID_Y = np.linspace(0, 2, 7)
GRID_V = np.sin(3 * GRID_X)[:, None] * np.cos(GRID_Y)[None, :]
SURFACE = RegularGridInterpolator((GRID_X, GRID_Y), GRID_V, method="linear")


def surface_query(params):
    x, y = params
    pts = np.stack([x + 0.1 * np.arange(3), y - 0.2 * np.arange(3)], axis=-1)
    return np.sum(SURFACE(pts))


# ---- 37. a CubicSpline of fixed data at an active abscissa (a calibration curve) ------------

CAL_X = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 4.5])
CAL_Y = np.array([0.0, 0.8, 1.4, 2.1, 2.5, 2.8])
CALIBRATION = CubicSpline(CAL_X, CAL_Y, bc_type="natural")


def calibrated_reading(params):
    u, v = params
    return CALIBRATION(u) * CALIBRATION(v, 1) + CALIBRATION.antiderivative()(u + v)


# ---- 38. PCHIP through active values -------------------------------------------------------

def pchip_profile(params):
    a, b = params
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    y = np.array([0.0, a, a + b, 2 * a + b, 3.0])
    p = interpolate.PchipInterpolator(x, y)
    return np.sum(p(np.linspace(0.1, 3.9, 9)))


# ---- 39. interp1d linear with bounds_error=False, fill_value=(lo, hi) at active queries -----

TAB_X = np.array([0.0, 1.0, 2.0, 4.0])
TAB_Y = np.array([1.0, 3.0, 2.0, 5.0])
LOOKUP = interp1d(TAB_X, TAB_Y, bounds_error=False, fill_value=(TAB_Y[0], TAB_Y[-1]))


def clipped_lookup(params):
    a, b = params
    q = np.array([a, a + b, 2 * b])
    return np.sum(LOOKUP(q) * q)


# ============================ special functions ====================================

# ---- 40. a beta-binomial likelihood: betaln, gammaln ------------------------------------

BB_K = np.array([3, 7, 2, 9, 5])
BB_N = np.array([10, 12, 10, 15, 9])


def beta_binomial_nll(params):
    la, lb = params
    a, b = np.exp(la), np.exp(lb)
    ll = (special.gammaln(BB_N + 1) - special.gammaln(BB_K + 1) - special.gammaln(BB_N - BB_K + 1)
          + special.betaln(BB_K + a, BB_N - BB_K + b) - special.betaln(a, b))
    return -np.sum(ll)


# ---- 41. Theis well function: exp1 of r^2 S / (4 T t) -------------------------------------

def theis_drawdown(params):
    T, S = 1e-3 * params[0], 1e-4 * params[1]          # m^2/s, storativity
    r = np.array([5.0, 10.0, 20.0])
    t = 3600.0
    u = r ** 2 * S / (4 * T * t)
    return np.sum(0.01 / (4 * np.pi * T) * special.exp1(u))


# ---- 42. a semi-infinite solid: erfc of x / (2 sqrt(alpha t)) ------------------------------

def erfc_penetration(params):
    alpha, h = 1e-5 * params[0], params[1]             # m^2/s, 1/m
    x = np.linspace(0, 0.1, 6)
    t = 100.0
    eta = x / (2 * np.sqrt(alpha * t))
    theta = special.erfc(eta) - np.exp(h * x + h ** 2 * alpha * t) * special.erfc(
        eta + h * np.sqrt(alpha * t))
    return np.sum(theta)


# ---- 43. entropy by xlogy and relative entropy by rel_entr; softmax of logits -------------

def entropies(params):
    logits = np.array([params[0], params[1], 0.0, -params[0]])
    p = special.softmax(logits)
    q = np.array([0.1, 0.2, 0.3, 0.4])
    return -np.sum(special.xlogy(p, p)) + np.sum(special.rel_entr(p, q)) + special.log_softmax(
        logits)[1]


# ---- 44. modified Bessel functions: a fin efficiency with iv and kv ------------------------

def annular_fin(params):
    m, ro = params
    ri = 1.0
    num = (special.kv(1, m * ri) * special.iv(1, m * ro) - special.iv(1, m * ri)
           * special.kv(1, m * ro))
    den = (special.iv(0, m * ri) * special.kv(1, m * ro) + special.kv(0, m * ri)
           * special.iv(1, m * ro))
    return 2 * ri / (m * (ro ** 2 - ri ** 2)) * num / den


# ---- 45. the digamma and polygamma of a Dirichlet expectation ------------------------------

def dirichlet_expectations(params):
    a = np.array([params[0], params[1], 1.5])
    e_log = special.digamma(a) - special.digamma(a.sum())
    var_log = special.polygamma(1, a) - special.polygamma(1, a.sum())
    return np.sum(e_log) + np.sum(var_log)


# ---- 46. an ellipse perimeter by ellipe and a pendulum period by ellipk -------------------

def elliptic_lengths(params):
    a, theta0 = params
    b = 1.0
    m = 1 - (b / a) ** 2
    perimeter = 4 * a * special.ellipe(m)
    period = 4 * special.ellipk(np.sin(theta0 / 2) ** 2)
    return perimeter + period


# ---- 47. gammainc and gammaincc: chi-square tail probabilities -----------------------------

def chi2_tails(params, k=3.0):
    x, y = params
    return special.gammaincc(k / 2, x / 2) + special.gammainc(k / 2, 0.5 * x * y)


def chi2_tail_of_active_dof(params):
    k, x = params
    return special.gammaincc(k / 2, x / 2)


# ---- 48. a Gaussian CDF by ndtr and its log by log_ndtr: a probit likelihood --------------

PROBIT_X = np.linspace(-2, 2, 8)
PROBIT_Y = np.array([0, 0, 1, 0, 1, 1, 1, 1])


def probit_nll(params):
    b0, b1 = params
    z = b0 + b1 * PROBIT_X
    return -np.sum(PROBIT_Y * special.log_ndtr(z) + (1 - PROBIT_Y) * special.log_ndtr(-z))


# ============================ scipy.linalg =========================================

# ---- 49. a GP log marginal likelihood: cho_factor(lower=True), cho_solve ----------------

GP_X = np.linspace(0, 5, 10)
GP_Y = np.sin(GP_X) + 0.1 * np.cos(7 * GP_X)


def gp_log_marginal(params):
    log_ell, log_sf = params
    d = GP_X[:, None] - GP_X[None, :]
    K = np.exp(2 * log_sf) * np.exp(-0.5 * d ** 2 / np.exp(2 * log_ell)) + 0.01 * np.eye(10)
    c, low = sla.cho_factor(K, lower=True)
    alpha = sla.cho_solve((c, low), GP_Y)
    return 0.5 * GP_Y @ alpha + np.sum(np.log(np.diag(c))) + 5 * np.log(2 * np.pi)


# ---- 50. a continuous-time Markov chain: expm of the generator times t ------------------

def ctmc_expm(params):
    a, b = params
    Q = np.array([[-a, a, 0.0], [b, -(a + b), a], [0.0, b, -b]])
    P = sla.expm(Q * 0.7)
    return P[0, 2] + P[2, 0] ** 2


# ---- 51. lu_factor once, lu_solve for several right-hand sides -------------------------------

def lu_multiple_rhs(params):
    a, b = params
    A = np.array([[4.0 + a, 1.0, 0.0], [1.0, 3.0, b], [0.0, b, 2.0 + a * b]])
    lu, piv = sla.lu_factor(A)
    total = 0.0
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        total = total + sla.lu_solve((lu, piv), e)[k]
    return total


# ---- 52. solve(assume_a='pos') and solve_triangular of a cholesky factor ------------------

def spd_solves(params):
    a, b = params
    A = np.array([[2.0 + a, b, 0.1], [b, 3.0, 0.2], [0.1, 0.2, 1.0 + b * b]])
    rhs = np.array([1.0, 2.0, 3.0])
    x1 = sla.solve(A, rhs, assume_a="pos")
    L = sla.cholesky(A, lower=True)
    y = sla.solve_triangular(L, rhs, lower=True)
    return x1 @ rhs + y @ y


# ---- 53. scipy.linalg.eigh(A, B): generalized vibration frequencies --------------------------

def generalized_modes(params):
    k1, m2 = params
    K = np.array([[k1 + 1.0, -1.0], [-1.0, 1.0]])
    M = np.diag([1.0, m2])
    w2 = sla.eigh(K, M, eigvals_only=True)
    return np.sqrt(w2).sum()


# ---- 54. a banded solve: solve_banded of a tridiagonal in (1, 1) storage ----------------------

def banded_tridiagonal(params, n=8):
    a, c = params
    ab = np.zeros((3, n))
    ab[0, 1:] = -c
    ab[1, :] = 2.0 + a
    ab[2, :-1] = -c
    x = sla.solve_banded((1, 1), ab, np.ones(n))
    return np.sum(x)


# ---- 55. sqrtm of an SPD matrix, its determinant by scipy.linalg.det ------------------------

def matrix_functions(params):
    a, b = params
    A = np.array([[2.0 + a, b], [b, 1.5]])
    return np.trace(sla.sqrtm(A)).real + np.log(sla.det(A))


# ============================ NumPy's last mile ======================================

# ---- 56. 2-d diffusion: u[1:-1, 1:-1] += dt * laplacian, Dirichlet edges fixed -----------

def heat_2d_inplace(params, n=10, steps=20):
    alpha, T_edge = params
    u = np.zeros((n, n))
    u[0, :] = T_edge
    u[:, 0] = T_edge
    dx = 1.0 / (n - 1)
    dt = 0.2 * dx ** 2
    for _ in range(steps):
        lap = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]) / dx ** 2
        u[1:-1, 1:-1] += alpha * dt * lap
    return u[n // 2, n // 2] + u.mean()


# ---- 57. a plain array filled element by element in a Python loop ------------------------

def elementwise_fill(params, n=12):
    a, b = params
    out = np.empty(n)
    for i in range(n):
        t = i / (n - 1)
        out[i] = a * t ** 2 + np.sin(b * t)
    out[out < 0.3] = 0.3
    return np.sum(out ** 2)


# ---- 58. np.add.at: a histogram-like scatter with repeated indices -----------------------

SCATTER_IDX = np.array([0, 2, 2, 1, 0, 3, 3, 3])


def add_at_scatter(params):
    a, b = params
    vals = a * np.linspace(0, 1, 8) + b * np.cos(np.arange(8))
    acc = np.zeros(4)
    np.add.at(acc, SCATTER_IDX, vals)
    return np.sum(acc ** 2)


# ---- 59. fancy a[idx] += v with repeated indices: NumPy's last write wins ------------------

def fancy_repeated_iadd(params):
    a, b = params
    acc = np.zeros(4)
    vals = np.array([a, b, a * b, a + b])
    acc[np.array([0, 1, 1, 3])] += vals
    return acc @ np.array([1.0, 2.0, 3.0, 4.0]) + np.sum(acc ** 2)


# ---- 60. boolean masks: select, assign, count ---------------------------------------------

def mask_select_assign(params):
    a, b = params
    x = np.linspace(-1, 1, 11)
    y = a * x ** 3 + b * x
    pos = y > 0
    y[~pos] *= 0.5
    return y[pos].sum() + np.mean(y[~pos]) + np.count_nonzero(pos)


# ---- 61. np.where with both branches active, and np.select ----------------------------------

def where_select(params):
    a, b = params
    x = np.linspace(0, 3, 13)
    y = np.where(x < 1, a * x, b * (x - 1) + a)
    z = np.select([x < 0.5, x < 2.0], [y ** 2, np.sqrt(y + 1)], default=np.log1p(y))
    return np.sum(z)


# ---- 62. fancy gather of an active matrix, take_along_axis of argmax ----------------------

def fancy_gather(params):
    a, b = params
    M = np.outer(np.array([1.0, a, b]), np.array([b, 1.0, a, 2.0]))
    rows = np.array([2, 0, 1, 2])
    cols = np.array([1, 3, 0, 0])
    g = M[rows, cols]
    idx = np.argmax(M, axis=1)
    best = np.take_along_axis(M, idx[:, None], axis=1).ravel()
    return np.sum(g * np.arange(1, 5)) + best @ np.array([1.0, 2.0, 3.0])


# ---- 63. einsum: a batched quadratic form, a trace, an outer product ------------------------

def einsum_forms(params):
    a, b = params
    A = np.array([[[a, b], [b, 2.0]], [[1.0, a], [a, b + 2.0]]])
    v = np.array([[1.0, a], [b, 1.0]])
    q = np.einsum("ni,nij,nj->n", v, A, v)
    tr = np.einsum("nii->", A)
    o = np.einsum("i,j->ij", v[0], v[1])
    return q.sum() + tr + np.einsum("ij,ij", o, o)


# ---- 64. parameters in a dict updated in a loop (an optimiser's state dict) --------------

def dict_state_updates(params):
    state = {"x": params[0], "v": 0.0, "k": params[1]}
    for _ in range(20):
        a = -state["k"] * state["x"] - 0.1 * state["v"]
        state["v"] += 0.1 * a
        state["x"] += 0.1 * state["v"]
    return state["x"] ** 2 + state["v"] ** 2


# ---- 65. a model object whose attributes are set from parameters and updated in place -----

class Population:
    def __init__(self, growth, capacity):
        self.growth = growth
        self.capacity = capacity
        self.N = np.array([1.0, 2.0, 0.5])

    def step(self, dt=0.1):
        self.N += dt * self.growth * self.N * (1 - self.N.sum() / self.capacity)

    def run(self, steps):
        for _ in range(steps):
            self.step()
        return self.N


def population_object(params):
    pop = Population(*params)
    N = pop.run(25)
    return N.sum() + N[0] / N[2]


# ---- 66. a bound method handed to a higher-order helper ----------------------------------

class Potential:
    def __init__(self, eps, sigma):
        self.eps = eps
        self.sigma = sigma

    def energy(self, r):
        sr6 = (self.sigma / r) ** 6
        return 4 * self.eps * (sr6 ** 2 - sr6)


def total_over(fn, rs):
    return sum(fn(r) for r in rs)


def bound_method_sum(params):
    pot = Potential(params[0], params[1])
    return total_over(pot.energy, [1.1, 1.3, 1.7, 2.2])


# ---- 67. module globals set then read by a helper ----------------------------------------

DAMPING = 0.2
STIFFNESS = 1.0


def _acceleration(x, v):
    return -STIFFNESS * x - DAMPING * v


def globals_oscillator(params):
    global DAMPING, STIFFNESS
    DAMPING, STIFFNESS = params
    x, v = 1.0, 0.0
    for _ in range(30):
        v = v + 0.05 * _acceleration(x, v)
        x = x + 0.05 * v
    return x + v


# ---- 68. reshape, transpose, in-place writes through a transposed view -----------------------

def reshape_transpose(params):
    a, b = params
    v = np.arange(12.0) * a + b
    M = v.reshape(3, 4)
    D = np.zeros((4, 4))
    D[:] = M[0]
    D.T[:] -= M[1]
    return np.sum(D ** 2) + np.sum(M.T @ M[:, :3]) + M.ravel(order="F")[5]


# ---- 69. a symmetric matrix filled from a parameter vector by triu_indices ----------------

def triu_fill(params):
    a, b = params
    theta = np.array([a, b, 0.3, a * b, 1.0, b ** 2])
    S = np.zeros((3, 3))
    iu = np.triu_indices(3)
    S[iu] = theta
    S = S + S.T - np.diag(np.diag(S))
    np.fill_diagonal(S, np.diag(S) + 2.0)
    return np.linalg.slogdet(S)[1] + np.trace(np.linalg.inv(S))


# ---- 70. np.linalg: lstsq, qr, svd norms, eigvalsh and det of active matrices ---------------

def linalg_mix(params):
    a, b = params
    A = np.array([[1.0, a], [b, 2.0], [a * b, 1.0]])
    y = np.array([1.0, 2.0, 0.5])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    Q, R = np.linalg.qr(A)
    s = np.linalg.svd(A, compute_uv=False)
    w = np.linalg.eigvalsh(A.T @ A)
    return coef.sum() + np.abs(R[1, 1]) + s[0] / s[1] + w[0] + np.linalg.det(A.T @ A)


# ---- 71. a batch of 2x2 solves, stacked matrices --------------------------------------------

def batched_solves(params):
    a, b = params
    k = np.arange(1, 5)[:, None, None]
    A = np.array([[2.0, a], [b, 3.0]]) + k * np.eye(2)
    rhs = np.stack([np.ones(4), np.arange(4.0)], axis=-1)[..., None]
    x = np.linalg.solve(A, rhs)
    return np.sum(x[..., 0] ** 2) + np.linalg.det(A).sum()


# ---- 72. odd/even strided updates (red-black Gauss–Seidel sweeps) ------------------------

def red_black_sweeps(params, n=17, sweeps=10):
    f_amp, k = params
    h = 1.0 / (n - 1)
    f = f_amp * np.ones(n)
    u = np.zeros(n)
    for _ in range(sweeps):
        u[1:-1:2] = (u[0:-2:2] + u[2::2] + h * h * f[1:-1:2]) / (2 + k * h * h)
        u[2:-1:2] = (u[1:-2:2] + u[3::2] + h * h * f[2:-1:2]) / (2 + k * h * h)
    return u.sum() * h


# ---- 73. cumsum / diff / clip / maximum: a reservoir with spill -----------------------------

def reservoir_spill(params):
    inflow_scale, capacity = params
    inflow = inflow_scale * (1 + np.sin(np.linspace(0, 6, 20)))
    storage = np.cumsum(inflow - 0.8)
    spill = np.maximum(storage - capacity, 0.0)
    held = np.clip(storage, 0.0, capacity)
    return np.sum(spill) + np.sum(np.diff(held) ** 2)


# ---- 74. Jacobi iteration with a plain buffer swapped each step (u, u_new = u_new, u) -------

def jacobi_swap(params, n=12, iters=25):
    g, bc = params
    u = np.zeros(n)
    u_new = np.zeros(n)
    u[0] = u_new[0] = bc
    h = 1.0 / (n - 1)
    for _ in range(iters):
        u_new[1:-1] = 0.5 * (u[:-2] + u[2:] + h * h * g)
        u, u_new = u_new, u
    return u.sum()


# ---- 75. parameters via float(): the common cast of a parameter to a Python float -------

def float_cast(params):
    k = float(params[0])
    c = float(params[1])
    return k * c + np.exp(-k)


# ---- 76. math.exp and math.sqrt of parameters ------------------------------------------------

def math_module(params):
    a, b = params
    return math.exp(-a) * math.sqrt(b) + math.log(a + b)


# ---- 77. .item() and .tolist() of active values ------------------------------------------

def item_and_tolist(params):
    a = params[0].item()
    lst = (params * 2).tolist()
    return a * lst[0] + lst[1] ** 2


# ---- 78. a finite-volume flux with np.diff and boundary fluxes concatenated -----------------

def finite_volume_fluxes(params, n=15, steps=30):
    D, inflow = params
    dx = 1.0 / n
    c = np.zeros(n)
    dt = 0.3 * dx ** 2 / D
    for _ in range(steps):
        interior = -D * np.diff(c) / dx
        flux = np.concatenate(([inflow], interior, [0.0]))
        c -= dt * np.diff(flux) / dx
    return np.sum(c) * dx + c[0]


# ---- 79. an MCMC-style log posterior with parameters from a dict of named slices ----------

LAYOUT = {"mu": slice(0, 1), "log_sigma": slice(1, 2)}
OBS = np.array([0.3, 1.2, 0.8, 1.9, 1.1])


def named_slices(theta):
    p = {k: theta[s] for k, s in LAYOUT.items()}
    sigma = np.exp(p["log_sigma"])
    return float(0) + np.sum(0.5 * ((OBS - p["mu"]) / sigma) ** 2 + np.log(sigma)) \
        + 0.5 * p["mu"][0] ** 2


# ---- 80. a Newton solve written by hand with np.linalg.solve and a convergence test --------

def hand_newton(params):
    a, b = params
    x = np.array([1.0, 1.0])
    for _ in range(50):
        F = np.array([x[0] ** 2 + x[1] ** 2 - a, x[0] - b * x[1]])
        J = np.array([[2 * x[0], 2 * x[1]], [1.0, -b]])
        dx = np.linalg.solve(J, -F)
        x = x + dx
        if np.linalg.norm(dx) < 1e-14:
            break
    return x[0] * x[1]


# ---- 81. np.interp with active queries and np.searchsorted of active values --------------

def searchsorted_bins(params):
    a, b = params
    edges = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    x = np.array([a, b, a + b, 0.1])
    k = np.searchsorted(edges, x)
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    return np.sum(weights[k] * x) + np.sum(np.interp(x, edges, edges ** 2))


# ---- 82. a lattice energy by np.roll neighbours of an active field -----------------------

def lattice_roll_energy(params, n=6):
    J, h = params
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    s = np.tanh(h * np.cos(0.7 * i + 0.3 * j))
    E = -J * np.sum(s * (np.roll(s, 1, axis=0) + np.roll(s, 1, axis=1))) - h * s.sum()
    return E


# ---- 83. an explicit Runge-Kutta written by hand with arrays of stages -------------------

def hand_rk4(params, steps=20):
    a, b = params

    def f(y):
        return np.array([a * y[0] - y[0] * y[1], -b * y[1] + y[0] * y[1]])

    y = np.array([1.0, 0.5])
    h = 0.05
    traj = np.zeros((steps + 1, 2))
    traj[0] = y
    for n in range(steps):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj[n + 1] = y
    return np.sum(traj[:, 0] ** 2) * h + traj[-1].sum()


# ---- 84. a kernel matrix by broadcasting, np.linalg.cholesky and a triangular solve -------

def cholesky_whitening(params):
    ell, nug = params
    x = np.linspace(0, 1, 6)
    K = np.exp(-np.subtract.outer(x, x) ** 2 / ell ** 2) + nug * np.eye(6)
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, np.sin(4 * x))
    return z @ z + 2 * np.log(np.diag(L)).sum()


# ---- 85. a softmax attention over a short sequence (reshape, swapaxes, max-shift) ---------

def attention(params):
    wq, wk = params
    X = np.cos(np.arange(12.0)).reshape(4, 3)
    Q = wq * X
    K = wk * X[::-1]
    S = Q @ K.swapaxes(0, 1) / np.sqrt(3)
    S = S - S.max(axis=1, keepdims=True)
    P = np.exp(S)
    P /= P.sum(axis=1, keepdims=True)
    return np.sum((P @ X) ** 2)


# ---- 86. an in-place Gram–Schmidt on the columns of a copied active matrix ------------------

def gram_schmidt(params):
    a, b = params
    A = np.array([[1.0, a, 0.5], [b, 1.0, a], [0.2, b, 1.0]])
    Q = A.copy()
    for j in range(3):
        for i in range(j):
            Q[:, j] -= (Q[:, i] @ A[:, j]) * Q[:, i]
        Q[:, j] /= np.linalg.norm(Q[:, j])
    return np.sum(Q * A)


# ---- 87. an upwind scheme with np.maximum/np.minimum fluxes, periodic np.roll --------------

def flux_splitting(params, n=20, steps=20):
    u0, amp = params
    x = np.linspace(0, 1, n, endpoint=False)
    q = 1 + amp * np.sin(2 * np.pi * x)
    vel = u0 * np.cos(2 * np.pi * x)
    dt = 0.3 / n
    for _ in range(steps):
        F = np.maximum(vel, 0) * q + np.minimum(vel, 0) * np.roll(q, -1)
        q = q - dt * n * (F - np.roll(F, 1))
    return np.sum(q ** 2) / n


# ---- 88. scipy.sparse: an active diagonal added to a fixed csr operator, then spsolve ------

def sparse_plus_active_diagonal(params, n=10):
    k, s = params
    L = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    x = np.linspace(0, 1, n)
    A = L + sp.diags(k * (1 + x ** 2))
    u = spsolve(A.tocsc(), s * np.ones(n))
    return u @ u


# ---- 89. a sparse matrix with active data multiplied by its transpose (normal equations) ---

def sparse_normal_equations(params):
    a, b = params
    rows = np.array([0, 0, 1, 1, 2, 2, 3])
    cols = np.array([0, 1, 1, 2, 0, 2, 1])
    data = np.array([1.0, a, 2.0, b, 0.5, 1.0, a * b])
    G = sp.csr_matrix((data, (rows, cols)), shape=(4, 3))
    N = (G.T @ G).toarray() + 0.1 * np.eye(3)
    d = np.array([1.0, 2.0, 0.0, 1.0])
    m = np.linalg.solve(N, G.T @ d)
    return np.sum(m ** 2)


# ---- 90. sparse matrix-vector products on a plain array written in place ------------------

def sparse_matvec_inplace(params, n=12, steps=10):
    c, nu = params
    D1 = sp.diags([-0.5, 0.5], [-1, 1], shape=(n, n), format="csr")
    D2 = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
    u = np.exp(-(np.linspace(-1, 1, n) / 0.3) ** 2)
    for _ in range(steps):
        u += 0.05 * (-c * D1.dot(u) + nu * (D2 @ u))
    return u @ u


# ============================ edges of the last mile =====================================

# ---- 91. the diagonal updated through A.flat[::n + 1] += ... (a nugget on a kernel) -------

def flat_diagonal_nugget(params):
    ell, nug = params
    x = np.linspace(0, 1, 5)
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell ** 2)
    K.flat[::6] += nug
    return np.linalg.slogdet(K)[1] + np.sum(np.linalg.solve(K, np.ones(5)))


# ---- 92. the diagonal updated through einsum('ii->i', A) as a writeable view --------------

def einsum_diagonal_view(params):
    a, b = params
    A = np.outer([1.0, a, b], [b, 1.0, a])
    d = np.einsum("ii->i", A)
    d += 3.0
    A[np.diag_indices(3)] *= a
    return np.linalg.det(A)


# ---- 93. an integer array assigned a parameter (NumPy truncates it) -------------------------

def int_array_store(params):
    a, b = params
    counts = np.zeros(3, dtype=int)
    counts[0] = a * 10
    return counts[0] * b + b ** 2


# ---- 94. ndarray.fill with an active scalar, np.full and np.append --------------------------

def fill_and_append(params):
    a, b = params
    u = np.empty(4)
    u.fill(a)
    v = np.full(3, b)
    w = np.append(u, v * a)
    w = np.insert(w, 1, a * b)
    return np.sum(w ** 2) + np.delete(w, 0).prod()


# ---- 95. hand-written linear interpolation: i = int(x // dx), weights from the fraction ----

def hand_interpolation(params):
    x, y = params
    grid = np.linspace(0, 2, 11)
    vals = np.sin(grid) + grid ** 2
    dx = grid[1] - grid[0]
    total = 0.0
    for q in (x, y):
        i = int(q // dx)
        w = (q - grid[i]) / dx
        total = total + (1 - w) * vals[i] + w * vals[i + 1]
    return total


# ---- 96. np.float64() of a parameter, astype, np.asarray(..., dtype=float) ----------------

def float64_casts(params):
    k = np.float64(params[0])
    p = params.astype(float)
    q = np.asarray(params, dtype=np.float64)
    return k * p[1] + np.sum(q ** 2)


# ---- 97. the parameter vector itself written in place (a clamp at entry) ----------------

def input_written_in_place(params):
    params = np.asarray(params)
    params[1] = np.clip(params[1], 0.0, 0.9)
    params *= 2.0
    return params[0] * np.exp(params[1])


# ---- 98. out= arguments: products and ufuncs into a plain preallocated buffer --------------

def out_arguments(params):
    a, b = params
    A = np.array([[1.0, a], [b, 2.0]])
    buf = np.empty(2)
    np.dot(A, np.array([1.0, 2.0]), out=buf)
    np.multiply(buf, buf, out=buf)
    acc = np.zeros(2)
    np.add(acc, buf, out=acc)
    np.exp(acc * 0.1, out=acc)
    return acc.sum()


# ---- 99. in-place sort of an active copy, sorted() of scalars with a key -------------------

def inplace_sort(params):
    a, b = params
    v = np.array([a, b, a * b, 0.5])
    w = v.copy()
    w.sort()
    pairs = sorted([(a, 1.0), (b, 2.0), (0.3, 3.0)], key=lambda t: t[0])
    return w @ np.arange(1.0, 5.0) + pairs[0][0] * pairs[0][1]


# ---- 100. sparse data scaled in place: L.data *= D, setdiag of an active vector ---------------

def sparse_data_inplace(params, n=8):
    D, k = params
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
    L.data *= D
    M = sp.identity(n, format="csr") - 0.1 * L
    M = M.tolil()
    M.setdiag(M.diagonal() + k * np.linspace(0, 1, n))
    u = spsolve(M.tocsr(), np.ones(n))
    return u.sum()


# ---- 101. a sparse operator's .multiply by an active vector, diagonal() and sum() ----------

def sparse_multiply_methods(params, n=6):
    a, b = params
    T = sp.diags([1.0, 2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr")
    w = a + b * np.arange(n)
    S = T.multiply(w[:, None])
    return S.sum() + S.diagonal() @ w + (S @ np.ones(n)).max()


# ---- 102. gmres and bicgstab on an active nonsymmetric sparse matrix -------------------------

def krylov_nonsymmetric(params, n=10):
    c, s = params
    A = sp.diags([-1.0 - c, 2.5, -1.0 + c], [-1, 0, 1], shape=(n, n), format="csr")
    b = s * np.ones(n)
    x1, _ = spla.gmres(A, b, rtol=1e-13, atol=0.0, restart=n)
    x2, _ = spla.bicgstab(A, b, rtol=1e-13, atol=0.0)
    return x1 @ x1 + x2.sum()


# ---- 103. solve_ivp with a sparse jac returned by the user --------------------------------

def sparse_jacobian_radau(params, n=6):
    D, k = params
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") * (n + 1) ** 2

    def rhs(t, u):
        return D * (L @ u) - k * u

    def jac(t, u):
        return (D * L - k * sp.identity(n)).tocsc()

    u0 = np.sin(np.pi * np.arange(1, n + 1) / (n + 1))
    sol = solve_ivp(rhs, (0, 0.05), u0, method="Radau", jac=jac, rtol=1e-10, atol=1e-12)
    return sol.y[:, -1].sum()


# ---- 104. odeint with a banded Dfun (ml, mu) ----------------------------------------------

def odeint_banded(params, n=5):
    D, k = params

    def rhs(u, t):
        du = np.empty_like(u)
        du[0] = D * (-2 * u[0] + u[1]) - k * u[0]
        du[1:-1] = D * (u[:-2] - 2 * u[1:-1] + u[2:]) - k * u[1:-1]
        du[-1] = D * (u[-2] - 2 * u[-1]) - k * u[-1]
        return du

    def jac_banded(u, t):
        J = np.zeros((3, n))
        J[0, 1:] = D
        J[1, :] = -2 * D - k
        J[2, :-1] = D
        return J

    u = odeint(rhs, np.linspace(1, 0.2, n), [0, 0.5, 1.0], Dfun=jac_banded, ml=1, mu=1,
               rtol=1e-11, atol=1e-12)
    return u[-1].sum() + u[1, 0]


# ---- 105. an event function with args=, a state reached, then a second solve from there ---

def event_args_restart(params):
    k, thr = params

    def rhs(t, y, k):
        return [-k * y[0], k * y[0]]

    def reached(t, y, k):
        return y[1] - thr
    reached.terminal = True

    first = solve_ivp(rhs, (0, 20), [1.0, 0.0], args=(k,), events=reached, rtol=1e-11,
                      atol=1e-12)
    t1 = first.t_events[0][0]
    y1 = first.y_events[0][0]
    second = solve_ivp(rhs, (t1, t1 + 1.0), y1, args=(2 * k,), rtol=1e-11, atol=1e-12)
    return second.y[0, -1] + t1


# ---- 106. quad with weight='cos' and an active wvar ---------------------------------------

def fourier_weight_quad(params):
    omega, decay = params
    val, _ = quad(lambda x: np.exp(-decay * x), 0.0, 5.0, weight="cos", wvar=omega,
                  epsabs=1e-13)
    return val


# ---- 107. dblquad over a triangle with an active integrand parameter and an active bound --

def dblquad_triangle(params):
    a, top = params
    val, _ = integrate.dblquad(lambda y, x: np.exp(-a * (x * x + y)), 0.0, top, 0.0,
                               lambda x: x, epsabs=1e-10)
    return val


# ---- 108. solve_bvp: a reaction-diffusion boundary-value problem ------------------------

def bvp_catalyst(params):
    phi, Bi = params

    def fun(x, y):
        return np.vstack([y[1], phi ** 2 * y[0]])

    def bc(ya, yb):
        return np.array([ya[1], yb[1] + Bi * (yb[0] - 1.0)])

    x = np.linspace(0, 1, 11)
    sol = integrate.solve_bvp(fun, bc, x, np.ones((2, x.size)), tol=1e-10)
    return sol.sol(0.5)[0] + sol.y[0, -1]


# ---- 109. splrep/splev of active data (FITPACK's interface) -----------------------------

def splrep_splev(params):
    a, b = params
    x = np.linspace(0, 3, 10)
    tck = interpolate.splrep(x, a * np.sin(x) + b * x, s=0)
    return np.sum(interpolate.splev([0.4, 1.7, 2.9], tck)) + interpolate.splev(1.1, tck, der=1)


# ---- 110. UnivariateSpline with s=0 and a periodic CubicSpline ----------------------------

def univariate_and_periodic(params):
    a, b = params
    x = np.linspace(0, 2 * np.pi, 9)
    us = interpolate.UnivariateSpline(x, a * np.cos(x) + b, s=0)
    y = b * np.sin(x) + a
    y[-1] = y[0]
    cs = CubicSpline(x, y, bc_type="periodic")
    return us(1.0) + us.integral(0, 3) + cs(7.0)


# ---- 111. RegularGridInterpolator with method='cubic' on active values ----------------------

def rgi_cubic(params):
    a, b = params
    x = np.linspace(0, 1, 5)
    y = np.linspace(0, 1, 6)
    X, Y = np.meshgrid(x, y, indexing="ij")
    V = np.exp(a * X) * np.cos(b * Y)
    f = RegularGridInterpolator((x, y), V, method="cubic", solver=spsolve)
    return np.sum(f([[0.3, 0.2], [0.7, 0.9]]))


# ---- 112. interp1d kind='previous' and 'nearest' of active values ------------------------

def step_interpolants(params):
    a, b = params
    x = np.arange(5.0)
    y = a * x + b * x ** 2
    prev = interp1d(x, y, kind="previous")
    near = interp1d(x, y, kind="nearest")
    return np.sum(prev([0.5, 2.3, 3.7])) + np.sum(near([0.4, 2.6]))


# ---- 113. stats distributions with active parameters --------------------------------------

def stats_logpdfs(params):
    from scipy import stats
    loc, shape = params
    x = np.array([0.5, 1.2, 2.0, 3.5])
    return (stats.norm.logpdf(x, loc=loc, scale=shape).sum()
            + stats.gamma.logpdf(x, a=shape, scale=1.5).sum()
            + stats.lognorm.logcdf(x, s=shape, scale=np.exp(loc)).sum())


# ---- 114. a multivariate normal with an active mean and covariance -------------------------

def mvn_logpdf(params):
    from scipy import stats
    rho, s = params
    cov = np.array([[1.0, rho * s], [rho * s, s ** 2]])
    x = np.array([[0.3, 0.5], [-0.2, 1.0], [1.0, -0.4]])
    return stats.multivariate_normal.logpdf(x, mean=[0.1, rho], cov=cov).sum()


# ---- 115. curve_fit inside the model ----------------------------------------------------

CF_X = np.linspace(0, 2, 8)


def curve_fit_inside(params):
    amp, rate = params
    y = amp * np.exp(-rate * CF_X) + 0.2 * np.sin(3 * CF_X) ** 2
    popt, _ = optimize.curve_fit(lambda t, A, k: A * np.exp(-k * t), CF_X, y, p0=[1.0, 1.0],
                                 xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return popt[0] + popt[1]


# ---- 116. SLSQP with an equality constraint inside the model ----------------------------

def slsqp_constrained(params):
    c, w = params
    res = minimize(lambda z: (z[0] - 1) ** 2 + w * (z[1] - 2) ** 2, [0.5, 0.5],
                   method="SLSQP",
                   constraints=[{"type": "eq", "fun": lambda z: z[0] + z[1] - c}],
                   options={"ftol": 1e-15})
    return res.x[0] * res.x[1]


# ---- 117. optimize.fixed_point and bisect ----------------------------------------------

def fixed_point_and_bisect(params):
    a, b = params
    xf = optimize.fixed_point(lambda x, a: np.cos(a * x), 0.5, args=(a,), xtol=1e-14)
    xb = optimize.bisect(lambda x: x ** 3 - b, 0.0, 3.0, xtol=1e-15)
    return xf + xb


# ---- 118. polyfit of active data, polyval and roots of the fit ------------------------------

def polyfit_roots(params):
    a, b = params
    x = np.linspace(-1, 1, 7)
    y = a * x ** 2 + b * x - 0.5
    c = np.polyfit(x, y, 2)
    r = np.roots(c)
    return np.polyval(c, 0.3) + np.max(r.real)


# ---- 119. np.linalg.eig of a nonsymmetric matrix with real eigenvalues ----------------------

def nonsymmetric_eig(params):
    a, b = params
    A = np.array([[2.0, a, 0.0], [0.1, 1.0, b], [0.0, 0.2, 3.0]])
    w, V = np.linalg.eig(A)
    i = np.argmax(w.real)
    v = V[:, i].real
    return w.real[i] + (v[0] / v[2]) ** 2


# ---- 120. scipy.ndimage.gaussian_filter and signal.lfilter of active signals -------------------

def filters_of_signals(params):
    from scipy import ndimage, signal
    a, b = params
    img = np.outer(np.sin(np.linspace(0, a, 6)), np.cos(np.linspace(0, b, 5)))
    sm = ndimage.gaussian_filter(img, sigma=1.0)
    y = signal.lfilter([1.0 - b / 2], [1.0, -b / 2], np.sin(np.arange(10) * a))
    return np.sum(sm ** 2) + y[-1]


# ---- 121. np.fft.rfft power spectrum and np.unwrap of angles -----------------------------

def spectrum_and_phase(params):
    f0, damp = params
    t = np.arange(32) / 32
    x = np.exp(-damp * t) * np.cos(2 * np.pi * f0 * t)
    P = np.abs(np.fft.rfft(x)) ** 2
    z = np.exp(1j * 2 * f0 * t) * (1 + damp)
    ph = np.unwrap(np.angle(z))
    return P[:6].sum() + ph[-1]


# ---- 122. an np.fromiter of active values from a generator --------------------------------

def fromiter_generator(params):
    a, b = params
    v = np.fromiter((a * k + b for k in range(4)), dtype=float)
    return np.sum(v ** 2)


# ---- 123. u[u > c] = c with an active cap, np.nonzero indices of an active condition -------

def active_cap(params):
    amp, cap = params
    u = amp * np.sin(np.linspace(0, 3, 12))
    u[u > cap] = cap
    idx = np.nonzero(u < 0.5 * cap)[0]
    return u.sum() + u[idx].sum() * 2


# ---- 124. views of views: u[1:-1][::2] += ..., u[::-1][:3] *= ..., Ellipsis -----------------

def views_of_views(params):
    a, b = params
    u = np.linspace(0, 1, 9) * a
    u[1:-1][::2] += b
    u[::-1][:3] *= a
    M = np.ones((2, 3, 2))
    M[..., 0] = u[:6].reshape(2, 3)
    M[:, None, 1, :] += b
    return np.sum(u ** 2) + np.sum(M ** 2)


# ---- 125. aliasing: b = a, b += ..., reading a; np.asarray returning the same array ------

def aliasing(params):
    a, b = params
    x = np.array([1.0, 2.0, 3.0]) * a
    y = x
    y += b
    z = np.asarray(x)
    z[0] = b * b
    return x @ np.array([1.0, 2.0, 3.0]) + y[0]


# ---- 126. np.meshgrid of active vectors, np.tile and np.repeat --------------------------------

def meshgrid_tile_repeat(params):
    a, b = params
    xs = np.array([0.0, a, 2 * a])
    ys = np.array([b, 1.0])
    X, Y = np.meshgrid(xs, ys)
    T = np.tile(xs, 2)
    R = np.repeat(ys, 3)
    return np.sum(X * Y) + T @ R + np.sum(np.kron(xs, ys))


# ---- 127. np.cross, np.arctan2, np.hypot: a rigid-body kinematics fragment ------------------

def kinematics(params):
    wz, r = params
    omega = np.array([0.1, 0.0, wz])
    pos = np.array([r, 0.5, 0.0])
    v = np.cross(omega, pos)
    return np.arctan2(v[1], v[0]) + np.hypot(v[0], v[1]) + np.linalg.norm(v, ord=1)


# ---- 128. x ** 0.5 of a value that reaches zero: the derivative is infinite ---------------

def sqrt_at_zero(params):
    a, b = params
    return np.sqrt(a - 1.0) + b


# ---- 129. prod and cumprod: survival through stages ---------------------------------------

def survival_products(params):
    p1, p2 = params
    s = np.array([p1, p2, p1 * p2, 0.9])
    return np.prod(s) + np.cumprod(s).sum()


# ---- 130. matrix exponential by np.linalg.matrix_power / pinv / matrix_rank --------------------

def pinv_and_power(params):
    a, b = params
    A = np.array([[0.9, a], [0.0, b]])
    P = np.linalg.matrix_power(A, 5)
    B = np.array([[1.0, a], [2.0, 2 * a], [b, 1.0]])
    return P.sum() + np.linalg.pinv(B).sum()


# ---- 131. diagonals given as lists of numbers: [-t] * (n - 1), and one diagonal [a, b, c] --

def listed_diagonals(params, n=6):
    t, eps = params
    H = sp.diags([[-t] * (n - 1), [2 * t + eps] * n, [-t] * (n - 1)], [-1, 0, 1], format="csr")
    M = sp.diags([1.0, eps, t, 1.0, eps, t])             # one diagonal, offset 0
    G = spsolve((H + M).tocsc(), np.ones(n))
    return G @ G + sp.diags((t, eps), 1).sum()


# ---- 132. the inverse's trace by spsolve with a sparse identity as right-hand side -------

def sparse_identity_rhs(params):
    a, b = params
    A = sp.csc_matrix(np.array([[3.0, a, 0.0], [a, 2.0, b], [0.0, b, 4.0]]))
    X = spsolve(A, sp.identity(3, format="csc"))
    return X.diagonal().sum()


# ---- 133. a dataclass of parameters handed to quad and to minimize through args= ----------

@dataclasses.dataclass
class Kinetics:
    k: float
    c: float


def dataclass_quad_args(params):
    P = Kinetics(params[0], params[1])
    val, _ = quad(lambda t, P: np.exp(-P.k * t) * np.cos(P.c * t), 0.0, 2.0, args=(P,),
                  epsabs=1e-13)
    return val


def dataclass_minimize_args(params):
    P = Kinetics(params[0], params[1])
    res = minimize(lambda z, P: P.k * (z[0] - P.c) ** 2 + z[0] ** 4 + (z[1] - z[0]) ** 2,
                   [0.1, 0.1], args=(P,), method="BFGS", options={"gtol": 1e-12})
    return res.x.sum()


# ---- 134. a field initialised by np.full_like of a plain grid with a parameter ----------------

GRID = np.linspace(0.0, 1.0, 9)


def full_like_initial_field(params, steps=10):
    T_init, alpha = params
    T = np.full_like(GRID, T_init)
    T[0] = 0.0
    dx = GRID[1] - GRID[0]
    for _ in range(steps):
        T[1:-1] += 0.2 * alpha * (T[2:] - 2 * T[1:-1] + T[:-2])
    return np.sum(T * GRID) * dx


def full_like_of_integers(params):
    return np.full_like(np.arange(4), params[1] * 3.0).sum() * params[0]


# ---- 135. rows and columns swapped through views: NumPy's aliasing kept --------------------

def swapped_through_views(params):
    a, b = params
    A = np.array([[a, 1.0], [b, 2.0], [a * b, 3.0]])
    A[:, 0], A[:, 1] = A[:, 1], A[:, 0]        # both columns end as the old second one
    B = np.array([[a, 1.0], [b, 2.0]])
    B[0], B[1] = B[1], B[0]                    # likewise, rows
    u = np.array([a, b, 1.0])
    u[0], u[1] = u[1], u[0]                    # elements are copies: a true swap
    return np.sum(A * np.arange(6.0).reshape(3, 2)) + np.sum(B * A[:2]) + u @ [1.0, 2.0, 3.0]


# ---- 136. ufunc.at family: multiply.at, subtract.at, maximum.at with repeated indices ------

def ufunc_at_family(params):
    a, b = params
    u = np.array([1.0, a, b, 2.0])
    np.multiply.at(u, [1, 1, 2], [a, 2.0, b])
    np.subtract.at(u, [0, 3, 3], [b, a, 1.0])
    v = np.array([0.5, 0.2, 1.0])
    np.maximum.at(v, [0, 0, 2], [a, b * 0.1, b])
    return u @ np.array([1.0, 2.0, 3.0, 4.0]) + v @ np.array([1.0, 2.0, 3.0])


# ---- 137. 2-d finite elements: K[np.ix_(nodes, nodes)] += and np.add.at on (rows, cols) ---

def fem_assembly_2d(params):
    k1, k2 = params
    conn = np.array([[0, 1, 3], [1, 4, 3], [1, 2, 4], [2, 5, 4]])
    kel = np.array([k1, k2, k1 * k2, 1.0])
    Ke0 = np.array([[1.0, -0.5, -0.5], [-0.5, 0.5, 0.0], [-0.5, 0.0, 0.5]])
    K = np.zeros((6, 6))
    for e, nodes in enumerate(conn):
        K[np.ix_(nodes, nodes)] += kel[e] * Ke0
    K2 = np.zeros((6, 6))
    np.add.at(K2, (np.repeat(conn, 3, axis=1).ravel(), np.tile(conn, 3).ravel()),
              (kel[:, None, None] * Ke0).ravel())
    free = np.array([1, 2, 4, 5])
    return np.linalg.solve(K[np.ix_(free, free)] + np.eye(4), np.ones(4)).sum() + \
        np.sum(K2 * K)
