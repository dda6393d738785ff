"""Twenty-two small scientific programs written as their authors write them,
aimed at idioms the earlier collections (programs_as_published.py,
programs_s7.py, the scipy user-program tests) leave out: a cubic equation
of state solved with ``roots`` and its real roots picked by ``isreal``; a
Helmholtz free energy whose gradient and Hessian are the physics; stiff
kinetics in a class whose rate constants the caller sets on ``self.k``;
``odeint`` with ``args=``; a module-global dict of parameters read by a BDF
right-hand side; ``newton_krylov`` on a nonlinear boundary-value problem;
whole-array ``+=`` of active increments into a plain state; in-place
stencil updates through a named view; an extended Kalman filter of nested
lists of active scalars; a mixture model through scipy.stats and lists
of log-densities; oblique thin-film optics from ``from numpy import ...``;
``quad`` to infinity; ``CubicSpline`` of active data and ``interp1d`` at an
active point; frozen scipy.stats distributions; ``np.piecewise`` and
``np.vectorize`` with branches; ``np.polyfit`` with ``np.poly1d``; a
limiter full of ties of max and min; ``minimize`` with SLSQP constraints;
a sparse Laplacian scaled by an active diffusivity; a negative-binomial
regression; Monte Carlo draws made from the parameters.

None of them knows about adsim; tests/numpy/test_user_programs_s8.py
differentiates them as they are."""
from numpy import array, conj, cos, dot, exp, pi, roots, sin, sqrt, zeros
import numpy as np
import scipy.sparse as sp
from scipy import stats
from scipy.integrate import odeint, quad, solve_ivp
from scipy.interpolate import CubicSpline, interp1d
from scipy.optimize import minimize, newton_krylov, root
from scipy.sparse.linalg import spsolve
from scipy.special import logsumexp


# ---- 1. Peng-Robinson: the vapour root's fugacity coefficient ----------------------------

R_GAS = 8.314462618


def peng_robinson_ln_phi(TP, Tc=190.6, Pc=45.99e5, omega=0.011):
    """ln of the fugacity coefficient of methane's vapour (largest real root
    of the PR cubic in Z) at temperature T (K) and pressure P (Pa)."""
    T, P = TP
    kappa = 0.37464 + 1.54226 * omega - 0.26992 * omega ** 2
    alpha = (1 + kappa * (1 - np.sqrt(T / Tc))) ** 2
    a = 0.45724 * R_GAS ** 2 * Tc ** 2 / Pc * alpha
    b = 0.07780 * R_GAS * Tc / Pc
    A = a * P / (R_GAS * T) ** 2
    B = b * P / (R_GAS * T)
    Z = roots([1, -(1 - B), A - 3 * B ** 2 - 2 * B, -(A * B - B ** 2 - B ** 3)])
    Z = Z[np.isreal(Z)].real
    ZV = max(Z)
    r2 = np.sqrt(2)
    return (ZV - 1 - np.log(ZV - B)
            - A / (2 * r2 * B) * np.log((ZV + (1 + r2) * B) / (ZV + (1 - r2) * B)))


# ---- 2. van der Waals mixture: Helmholtz free energy -------------------------------------

A_VDW = np.array([0.1382, 0.3640, 0.5536])     # Pa m^6 / mol^2 (N2, CO2, H2O)
B_VDW = np.array([3.87e-5, 4.27e-5, 3.05e-5])  # m^3 / mol
K_IJ = np.array([[0.0, 0.02, 0.1], [0.02, 0.0, 0.05], [0.1, 0.05, 0.0]])


def helmholtz_vdw(n, V=1e-3, T=400.0):
    """Residual plus ideal Helmholtz energy (J) of a van der Waals mixture of
    mole numbers n in volume V, geometric-mean mixing with k_ij; its
    gradient is the chemical potentials, its Hessian the stability matrix."""
    a_ij = np.sqrt(np.outer(A_VDW, A_VDW)) * (1 - K_IJ)
    a_mix = n @ a_ij @ n
    b_mix = np.dot(n, B_VDW)
    ideal = R_GAS * T * np.sum(n * (np.log(n / V) - 1))
    return ideal - np.sum(n) * R_GAS * T * np.log(1 - b_mix / V) - a_mix / V


# ---- 3. stiff kinetics: Robertson's problem in a class, Radau ----------------------------

class Robertson:
    """Robertson's three-species autocatalytic reaction; the rate constants
    live on the instance and the right-hand side is a bound method."""

    def __init__(self):
        self.k = np.array([0.04, 3e7, 1e4])

    def rhs(self, t, y):
        k1, k2, k3 = self.k
        return [-k1 * y[0] + k3 * y[1] * y[2],
                k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
                k2 * y[1] ** 2]

    def jac(self, t, y):
        k1, k2, k3 = self.k
        return np.array([[-k1, k3 * y[2], k3 * y[1]],
                         [k1, -k3 * y[2] - 2 * k2 * y[1], -k3 * y[1]],
                         [0.0, 2 * k2 * y[1], 0.0]])


ROBERTSON = Robertson()


def robertson_product(log_k, t_end=1.0):
    """Amount of the third species at t_end from the log rate constants."""
    ROBERTSON.k = np.exp(log_k)
    sol = solve_ivp(ROBERTSON.rhs, (0.0, t_end), [1.0, 0.0, 0.0], method="Radau",
                    jac=ROBERTSON.jac, rtol=1e-8, atol=1e-10)
    return sol.y[2, -1]


# ---- 4. an SIR outbreak fitted with odeint -----------------------------------------------

DAYS = np.linspace(0.0, 30.0, 11)
CASES = np.array([1.0, 2.1, 4.3, 8.5, 15.9, 27.0, 39.5, 47.2, 45.8, 37.9, 27.9])


def sir_deriv(y, t, N, beta, gamma):
    S, I, R = y
    dSdt = -beta * S * I / N
    dIdt = beta * S * I / N - gamma * I
    dRdt = gamma * I
    return dSdt, dIdt, dRdt


def sir_sse(params, N=1000.0):
    """Sum of squared errors of infected counts from (beta, gamma)."""
    beta, gamma = params
    y0 = N - 1.0, 1.0, 0.0
    ret = odeint(sir_deriv, y0, DAYS, args=(N, beta, gamma), rtol=1e-10, atol=1e-10)
    S, I, R = ret.T
    return np.sum((I - CASES) ** 2)


# ---- 5. Lotka-Volterra, parameters in a module-global dict, BDF --------------------------

params = {"alpha": 1.0, "beta": 0.1, "delta": 0.075, "gamma": 1.5}


def lotka_volterra(t, z):
    x, y = z
    return [params["alpha"] * x - params["beta"] * x * y,
            params["delta"] * x * y - params["gamma"] * y]


def predator_prey_loss(theta):
    """Mean log-ratio misfit of prey and predators at three times, the rates
    written into the module's parameter dict before solving."""
    params["alpha"], params["beta"], params["delta"], params["gamma"] = theta
    t_obs = np.linspace(1.0, 3.0, 3)
    sol = solve_ivp(lotka_volterra, [0, 3], [10.0, 5.0], method="BDF", t_eval=t_obs,
                    rtol=1e-8, atol=1e-8)
    observed = np.array([[14.0, 18.0, 17.0], [6.0, 10.0, 18.0]])
    return np.mean(np.log(sol.y / observed) ** 2)


# ---- 6. Bratu's problem by Newton-Krylov -------------------------------------------------

def bratu_mean(lam, n=24):
    """Mean of u solving u'' + lam exp(u) = 0 on (0, 1), u(0) = u(1) = 0
    (second-order differences), by scipy's newton_krylov."""
    h = 1.0 / (n + 1)

    def residual(u):
        d2u = np.zeros_like(u)
        d2u[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / h ** 2
        d2u[0] = (u[1] - 2 * u[0]) / h ** 2
        d2u[-1] = (u[-2] - 2 * u[-1]) / h ** 2
        return d2u + lam * np.exp(u)

    u = newton_krylov(residual, np.zeros(n), f_tol=1e-12)
    return u.mean()


# ---- 7. Gray-Scott reaction-diffusion: whole-array += into a plain state -----------------

def gray_scott_mass(Fk, n=12, steps=25, dt=1.0, Du=0.16, Dv=0.08):
    """Total V after explicit Euler steps of the Gray-Scott model from a
    seeded square, feed and kill rates (F, k)."""
    F, k = Fk
    U = np.ones((n, n))
    V = np.zeros((n, n))
    r = slice(n // 2 - 2, n // 2 + 2)
    U[r, r] = 0.50
    V[r, r] = 0.25

    def laplacian(Z):
        return (np.roll(Z, 1, 0) + np.roll(Z, -1, 0) + np.roll(Z, 1, 1) + np.roll(Z, -1, 1)
                - 4 * Z)

    for _ in range(steps):
        uvv = U * V * V
        dU = Du * laplacian(U) - uvv + F * (1 - U)
        dV = Dv * laplacian(V) + uvv - (F + k) * V
        U += dt * dU
        V += dt * dV
    return V.sum()


# ---- 8. 2-D heat with a point source, in place through a named view ----------------------

def plate_temperature(params, n=10, steps=30):
    """Temperature at a probe after explicit steps of the 2-D heat equation
    with diffusivity and source strength (alpha, q): interior updated in
    place through a view, insulated left and right edges."""
    alpha, q = params
    dx = 1.0 / (n - 1)
    dt = 0.2 * dx ** 2
    u = np.zeros((n, n))
    inner = u[1:-1, 1:-1]
    for _ in range(steps):
        un = u.copy()
        inner += alpha * dt / dx ** 2 * (un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:]
                                         + un[1:-1, :-2] - 4 * un[1:-1, 1:-1])
        u[n // 2, n // 3] += q * dt
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]
    return u[n // 2 + 1, n // 2]


# ---- 9. an extended Kalman filter of a pendulum ------------------------------------------

ANGLES = np.array([0.48, 0.31, 0.05, -0.22, -0.41, -0.47, -0.33, -0.08, 0.19, 0.40])


def pendulum_ekf_nll(params, dt=0.2, g=9.81):
    """Negative log-likelihood of noisy angle readings under an EKF of a
    pendulum of length L with process and measurement variances (q, r)."""
    L, log_q, log_r = params
    q, r = np.exp(log_q), np.exp(log_r)
    x = np.array([0.5, 0.0])
    P = np.eye(2) * 0.1
    H = np.array([[1.0, 0.0]])
    nll = 0.0
    for z in ANGLES:
        x = np.array([x[0] + dt * x[1], x[1] - dt * g / L * np.sin(x[0])])
        F = np.array([[1, dt], [-dt * g / L * np.cos(x[0]), 1]])
        P = F @ P @ F.T + q * np.eye(2)
        y = z - H @ x
        S = H @ P @ H.T + r
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ y
        P = (np.eye(2) - K @ H) @ P
        sign, logdet = np.linalg.slogdet(S)
        nll += 0.5 * (logdet + y @ np.linalg.solve(S, y) + np.log(2 * pi))
    return nll


# ---- 10. a two-component Gaussian mixture: log-likelihood --------------------------------

SAMPLE = np.array([-1.9, -1.2, -0.8, -1.5, 0.2, 1.1, 1.7, 2.3, 1.4, 0.9])


def mixture_log_likelihood(theta):
    """Log-likelihood of a sample under w N(mu1, s1) + (1 - w) N(mu2, s2),
    theta = (logit w, mu1, mu2, log s1, log s2); the per-point densities are
    a Python list, the centre of the means np.mean([mu1, mu2])."""
    w = 1 / (1 + np.exp(-theta[0]))
    mu1, mu2 = theta[1], theta[2]
    s1, s2 = np.exp(theta[3]), np.exp(theta[4])
    centre = np.mean([mu1, mu2])
    comps = np.array([stats.norm.logpdf(SAMPLE, mu1, s1), stats.norm.logpdf(SAMPLE, mu2, s2)])
    ll = logsumexp(comps, axis=0, b=np.array([[w], [1 - w]]))
    prior = np.sum([stats.norm.logpdf(m, centre, 3.0) for m in (mu1, mu2)])
    return np.sum(ll) + prior


# ---- 11. an absorbing thin-film stack at oblique incidence -------------------------------

def layer_matrix(n, d, wavelength, kx):
    cos_n = sqrt(n ** 2 - kx ** 2 + 0j)
    delta = 2 * pi * cos_n * d / wavelength
    eta = cos_n
    return array([[cos(delta), 1j * sin(delta) / eta], [1j * eta * sin(delta), cos(delta)]])


def stack_reflectance(d, n_layers=(2.35, 1.46 + 0.01j, 2.35), n_sub=1.52, theta0=0.3):
    """Mean s-polarised reflectance over three wavelengths (um) of a
    three-layer stack with thicknesses d on glass (Macleod's
    characteristic matrices)."""
    kx = sin(theta0)
    eta0 = cos(theta0)
    eta_s = sqrt(n_sub ** 2 - kx ** 2)
    R = []
    for wl in (0.5, 0.6, 0.7):
        M = np.eye(2, dtype=complex)
        for n, t in zip(n_layers, d):
            M = dot(M, layer_matrix(n, t, wl, kx))
        B, C = dot(M, array([1, eta_s]))
        r = (eta0 * B - C) / (eta0 * B + C)
        R.append((r * conj(r)).real)
    return np.mean(R)


# ---- 12. black-body band fraction by quad to infinity ------------------------------------

def band_fraction(T, lo=3.0, hi=5.0):
    """Fraction of a black body's exitance at temperature T (in thousands of
    K) emitted between lo and hi micrometres: Planck over the band divided
    by the integral to infinity in the dimensionless variable."""
    c2 = 14.388  # mm K -> um kK with T in kK

    def planck(lam, T):
        return lam ** -5 / (np.exp(c2 / (lam * T)) - 1)

    band, _ = quad(planck, lo, hi, args=(T,))
    total, _ = quad(lambda x: x ** 3 * np.exp(-x) / -np.expm1(-x), 0, np.inf)
    return band / (total * (T / c2) ** 4)


# ---- 13. a tabulated stress-strain curve: CubicSpline of active data ---------------------

STRAIN = np.linspace(0.0, 0.05, 6)


def strain_energy_and_stiffness(stress_knots, eps=0.032):
    """Strain energy density up to eps and tangent stiffness at eps of a
    natural cubic spline through measured stresses (MPa)."""
    cs = CubicSpline(STRAIN, np.concatenate([[0.0], stress_knots]), bc_type="natural")
    energy = cs.integrate(0.0, eps)
    stiffness = cs(eps, 1)
    return energy + 1e-3 * stiffness


# ---- 14. a heat capacity looked up at an active temperature ------------------------------

T_TABLE = np.array([300.0, 400.0, 500.0, 600.0, 800.0, 1000.0])
CP_TABLE = np.array([29.1, 29.3, 29.6, 30.1, 31.4, 32.7])


def enthalpy_rise(T_hot):
    """Mean cp between 300 K and T_hot (trapezoid on 9 points of a cubic
    interp1d of the table) times the rise, plus np.interp at T_hot."""
    cp = interp1d(T_TABLE, CP_TABLE, kind="cubic")
    T = np.linspace(300.0, T_hot, 9)
    return np.trapezoid(cp(T), T) + np.interp(T_hot, T_TABLE, CP_TABLE)


# ---- 15. a hierarchical Poisson model: log posterior through frozen distributions -------

COUNTS = [np.array([3, 5, 4, 6]), np.array([9, 7, 11]), np.array([1, 0, 2, 1, 2])]
EXPOSURE = [np.array([1.0, 1.2, 0.9, 1.4]), np.array([1.0, 0.8, 1.3]), np.full(5, 1.1)]


def hierarchical_log_posterior(theta):
    """theta = (mu, log tau, three group log-rates): Poisson counts per group,
    group rates normal around mu with scale tau, a half-Cauchy on tau and
    a Student-t prior on mu."""
    mu, log_tau = theta[0], theta[1]
    tau = np.exp(log_tau)
    eta = theta[2:]
    lp = stats.t(df=4, loc=0, scale=5).logpdf(mu) + stats.halfcauchy.logpdf(tau, scale=2) + log_tau
    group = stats.norm(mu, tau)
    lp += np.sum([group.logpdf(e) for e in eta])
    lp += np.sum([np.sum(stats.poisson.logpmf(y, np.exp(e) * x))
                  for y, x, e in zip(COUNTS, EXPOSURE, eta)])
    return lp


# ---- 16. a photosynthesis light response: np.piecewise and np.vectorize ------------------

LIGHT = np.array([0.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1200.0])


def canopy_assimilation(params):
    """Daily assimilation of a canopy: a non-rectangular light response,
    piecewise in light (linear below a threshold), and a temperature
    modifier with branches applied by np.vectorize."""
    phi, Amax, Topt = params
    threshold = 0.2 * Amax / phi
    A = np.piecewise(LIGHT, [LIGHT < threshold, LIGHT >= threshold],
                     [lambda I: phi * I,
                      lambda I: Amax * (1 - 0.8 * np.exp(-phi * (I - threshold) / Amax))])

    def temperature_factor(T):
        if T < Topt:
            return np.exp(-((T - Topt) / 10.0) ** 2)
        else:
            return 1.0 - 0.03 * (T - Topt)

    f = np.vectorize(temperature_factor)(np.array([12.0, 18.0, 24.0, 30.0]))
    return np.sum(A) * np.mean(f)


# ---- 17. Arrhenius fit by np.polyfit -----------------------------------------------------

TEMPS = np.array([300.0, 320.0, 340.0, 360.0, 380.0])


def fitted_activation_energy(params):
    """Rates from a two-step mechanism (pre-factors and activation energies
    of two parallel paths), fitted by a quadratic in 1/T with np.polyfit;
    the apparent activation energy at 340 K from the fitted poly1d."""
    A1, E1, A2, E2 = params
    k = A1 * np.exp(-E1 / (R_GAS * TEMPS)) + A2 * np.exp(-E2 / (R_GAS * TEMPS))
    p = np.poly1d(np.polyfit(1 / TEMPS, np.log(k), 2))
    return -R_GAS * p.deriv()(1 / 340.0) / 1e3


# ---- 18. MUSCL advection of a step with a minmod limiter ---------------------------------

def minmod(a, b):
    return np.where(a * b > 0, np.sign(a) * np.minimum(np.abs(a), np.abs(b)), 0.0)


def advected_front(params, n=40, steps=20, cfl=0.5, c_max=1.0):
    """Second moment of a step profile (height h) advected by speed c with
    a minmod-limited MUSCL scheme, the time step set by the larger of |c|
    and a design speed c_max: flat regions make the limiter's arguments
    tie at zero everywhere."""
    c, h = params
    x = np.linspace(0.0, 1.0, n)
    u = np.where(x < 0.3, h, 0.1 * h)
    dx = x[1] - x[0]
    dt = cfl * dx / max(abs(c), c_max)
    for _ in range(steps):
        du = minmod(u - np.roll(u, 1), np.roll(u, -1) - u)
        face = u + 0.5 * (1 - c * dt / dx) * du
        u = u - c * dt / dx * (face - np.roll(face, 1))
    return np.sum(u * x ** 2) * dx


# ---- 19. a long-only portfolio by SLSQP --------------------------------------------------

COV = np.array([[0.04, 0.006, 0.01], [0.006, 0.09, 0.02], [0.01, 0.02, 0.0625]])


def optimal_portfolio_utility(mu, risk_aversion=3.0):
    """Mean-variance utility of the optimal weights (sum to one, none
    negative) for expected returns mu."""
    def objective(w):
        return -(mu @ w - 0.5 * risk_aversion * w @ COV @ w)

    cons = ({"type": "eq", "fun": lambda w: np.sum(w) - 1},)
    res = minimize(objective, np.ones(3) / 3, method="SLSQP", bounds=[(0, 1)] * 3,
                   constraints=cons, options={"ftol": 1e-14, "maxiter": 200})
    return -res.fun


# ---- 20. steady reaction-diffusion with a sparse Laplacian -------------------------------

def catalyst_effectiveness(params, n=30):
    """Effectiveness of a slab catalyst: D u'' = k u with u = 1 at the
    surface, D times a sparse second-difference matrix minus a sparse
    diagonal of k, solved with spsolve; then a CSTR balance closed with
    scipy.optimize.root."""
    D, k = params
    dx = 1.0 / n
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csr") / dx ** 2
    A = D * L - sp.diags(k * np.ones(n))
    b = np.zeros(n)
    b[-1] = -D / dx ** 2
    u = spsolve(A.tocsc(), b)
    eta = np.mean(u)

    def balance(c, eta, k):
        return [1.0 - c[0] - eta * k * c[0]]

    c_out = root(balance, [0.5], args=(eta, k), method="hybr", tol=1e-12).x[0]
    return c_out


# ---- 21. overdispersed counts: a negative-binomial (NB2) regression ----------------------

SITES = np.array([[1.0, 0.2], [1.0, 0.9], [1.0, 1.6], [1.0, 2.3], [1.0, 3.1], [1.0, 3.8]])
ABUNDANCE = np.array([2, 5, 4, 11, 19, 30])


def nb2_log_likelihood(theta):
    """Log-likelihood of species counts at six sites, log mean linear in an
    environmental gradient, dispersion alpha = exp(theta[2]); SciPy's
    (n, p) from the mean and dispersion, as regression codes convert."""
    beta, alpha = theta[:2], np.exp(theta[2])
    mu = np.exp(SITES @ beta)
    n = 1.0 / alpha
    p = n / (n + mu)
    return np.sum(stats.nbinom.logpmf(ABUNDANCE, n, p))


# ---- 22. a stochastic growth model with common random numbers ----------------------------

def mean_final_biomass(params, n_paths=8, steps=10, seed=42):
    """Monte Carlo mean of logistic growth with multiplicative noise of a
    given mean and spread, the draws made from the parameters with a fixed
    seed (common random numbers)."""
    r, sigma = params
    rng = np.random.default_rng(seed)
    B = np.full(n_paths, 0.1)
    for _ in range(steps):
        shocks = rng.normal(r, sigma, size=n_paths)
        B = B + 0.1 * shocks * B * (1 - B)
    return B.mean()
