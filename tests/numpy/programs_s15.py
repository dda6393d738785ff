"""Small scientific programs written as their authors write them, with the
SciPy machinery inside the model: a 2-d Poisson problem on a ``kron`` of
``diags`` Laplacians solved by ``scipy.sparse.linalg.cg``; backward Euler
with one ``splu`` factorisation reused over the time loop, and with the
solver ``factorized`` hands back; a nonlinear two-point problem by Newton
steps with ``lu_factor``/``lu_solve``; water waves by ``brentq`` over a
list of periods with ``args=``; a bilevel fit with an inner
``minimize_scalar`` (Brent from a bracket); ``quad`` of an integrand whose parameters come
through ``args=`` with an active limit; a ``PchipInterpolator`` and a
``CubicSpline`` of active data integrated and differentiated;
``np.interp`` of active samples at active points. Time loops: Jacobi
sweeps through 2-d views, a cable model on an object (``self.k``,
``self.u[1:-1] += ...``, ``self.mass += dt * flux``), shallow water by
Lax-Friedrichs with ``np.roll``. Statistics: an HMM forward recursion with
``logsumexp`` over an axis into a ``zeros`` table, EM for a Gaussian
mixture, a Kalman filter with its RTS smoother storing into preallocated
arrays, a GP predictive density by ``cho_factor``/``cho_solve`` and
``solve_triangular``, a Poisson regression summing a list with
``gammaln``, a continuous-time Markov chain by ``expm``. Then: a
finite-element bar assembled by ``np.add.at``, an AR(1) likelihood by
``lfilter``, coupled equilibria by ``root(jac=True)``, Kepler's equation by
``newton`` with ``fprime`` and ``args``, a ``RegularGridInterpolator`` of an
active table, and a matrix-free ``LinearOperator`` (made without a dtype,
its matvec reading the diffusivity) stepped explicitly, and a ``leastsq``
fit whose error comes from ``cov_x`` and ``infodict['fvec']``, a thermistor
calibrated by ``curve_fit(full_output=True)`` and inverted by ``brentq``'s
``RootResults``, and a shadow price read from SLSQP's ``multipliers`` and from trust-constr's
``v``; two refusals: the
same kind of operator given to ``cg``, and ``quad`` with ``weight='cos'``.

None of them knows about adsim; tests/numpy/test_user_programs_s15.py
differentiates them as they are."""
from dataclasses import dataclass

import numpy as np
from numpy import array, exp, zeros
import scipy.sparse as sp
from scipy.integrate import quad
from scipy.interpolate import CubicSpline, PchipInterpolator, RegularGridInterpolator
from scipy.linalg import cho_factor, cho_solve, expm, lu_factor, lu_solve, solve_triangular
from scipy.optimize import (NonlinearConstraint, brentq, curve_fit, leastsq, minimize,
                            minimize_scalar, newton, root)
from scipy.signal import lfilter
from scipy.sparse.linalg import LinearOperator, cg, factorized, splu
from scipy.special import gammaln, logsumexp


# ---- 1. 2-d Poisson on kron(diags) solved by conjugate gradients --------------------------

def poisson_cg(params):
    kappa, amp = params
    n = 8
    h = 1.0 / (n + 1)
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]) / h ** 2
    I = sp.identity(n)
    A = kappa * (sp.kron(T, I) + sp.kron(I, T)) + sp.identity(n * n)
    xg = np.linspace(h, 1 - h, n)
    X, Y = np.meshgrid(xg, xg)
    f = amp * np.exp(-((X - 0.4) ** 2 + (Y - 0.6) ** 2) / 0.05)
    u, info = cg(A.tocsr(), f.ravel(), rtol=1e-12, atol=0.0, maxiter=500)
    if info != 0:
        raise RuntimeError("cg did not converge")
    return h * h * np.sum(u ** 2)


# ---- 2. backward Euler, one splu reused for every step -----------------------------------

def implicit_heat_splu(params):
    D, width = params
    n, nt, dt = 30, 10, 0.01
    x = np.linspace(0, 1, n + 2)[1:-1]
    dx = x[1] - x[0]
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n)) / dx ** 2
    A = (sp.eye(n) - dt * D * L).tocsc()
    lu = splu(A)
    u = np.exp(-((x - 0.5) / width) ** 2)
    for _ in range(nt):
        u = lu.solve(u)
    return dx * np.sum(u * x)


# ---- 3. the same with the solve function factorized hands back --------------------------

def implicit_heat_factorized(params):
    D, source = params
    n, nt, dt = 20, 6, 0.02
    dx = 1.0 / (n + 1)
    main = 1 + 2 * dt * D / dx ** 2 * np.ones(n)
    off = -dt * D / dx ** 2 * np.ones(n - 1)
    A = sp.diags([off, main, off], [-1, 0, 1], format="csc")
    solve = factorized(A)
    u = zeros(n)
    for _ in range(nt):
        u = solve(u + dt * source)
    return np.max(u) + np.mean(u)


# ---- 4. Bratu-like two-point problem by Newton with lu_factor / lu_solve ----------------

def newton_bvp(params):
    lam, ends = params
    n = 15
    h = 1.0 / (n + 1)
    u = np.zeros(n)
    for _ in range(8):
        F = np.zeros(n)
        J = np.zeros((n, n))
        for i in range(n):
            left = u[i - 1] if i > 0 else ends
            right = u[i + 1] if i < n - 1 else ends
            F[i] = (left - 2 * u[i] + right) / h ** 2 + lam * np.exp(u[i])
            J[i, i] = -2 / h ** 2 + lam * np.exp(u[i])
            if i > 0:
                J[i, i - 1] = 1 / h ** 2
            if i < n - 1:
                J[i, i + 1] = 1 / h ** 2
        lu, piv = lu_factor(J)
        u = u - lu_solve((lu, piv), F)
    return h * np.sum(u)


# ---- 5. water-wave dispersion solved by brentq for a list of periods --------------------

def _dispersion(k, omega, depth, g):
    return omega ** 2 - g * k * np.tanh(k * depth)


def wavelengths(params):
    depth, g = params
    lengths = []
    for period in [4.0, 6.0, 8.0, 11.0]:
        omega = 2 * np.pi / period
        k = brentq(_dispersion, 1e-6, 10.0, args=(omega, depth, g), xtol=1e-14)
        lengths.append(2 * np.pi / k)
    return sum(lengths) / len(lengths)


# ---- 6. bilevel: an inner minimize_scalar of a penalised misfit --------------------------

T_OBS = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
Y_OBS = np.array([1.02, 0.63, 0.35, 0.24, 0.13, 0.09])


def bilevel_rate(params):
    prior, weight = params

    def misfit(k):
        return np.sum((np.exp(-k * T_OBS) - Y_OBS) ** 2) + weight * (k - prior) ** 2

    res = minimize_scalar(misfit, bracket=(0.2, 2.0), options={"xtol": 1e-12})
    k = res.x
    return k ** 2 + np.log(k)


# ---- 7. quad with parameters through args= and an active upper limit --------------------

def _spectrum(nu, temp, beta):
    return nu ** (3 + beta) / (np.exp(nu / temp) - 1.0)


def dust_flux(params):
    temp, beta = params
    val, err = quad(_spectrum, 0.05, 8 * temp, args=(temp, beta), epsabs=1e-13, epsrel=1e-13)
    return np.log(val)


# ---- 8. a monotone Pchip of active data, integrated; a spline's derivative ---------------

DEPTHS = np.array([0.0, 10.0, 25.0, 50.0, 80.0, 120.0])


def profile_stats(params):
    t_surf, decay = params
    temps = t_surf * np.exp(-DEPTHS / decay) + 4.0
    p = PchipInterpolator(DEPTHS, temps)
    heat = p.integrate(0.0, 100.0)
    cs = CubicSpline(DEPTHS, temps, bc_type="natural")
    grad_at = cs.derivative()(np.array([5.0, 30.0, 60.0]))
    return heat / 100.0 + np.sum(grad_at ** 2)


# ---- 9. np.interp of active samples at active points ------------------------------------

GRID_T = np.linspace(0.0, 10.0, 11)


def interp_lookup(params):
    shift, gain = params
    table = gain * np.sin(GRID_T / 3.0) + 0.1 * GRID_T
    query = np.array([1.3, 4.45, 7.8]) + shift
    return np.sum(np.interp(query, GRID_T, table) ** 2)


# ---- 10. Jacobi sweeps through 2-d views ---------------------------------------------------

def jacobi_plate(params):
    t_top, q = params
    n = 10
    h = 1.0 / (n - 1)
    u = np.zeros((n, n))
    u[0, :] = t_top
    f = q * np.ones((n, n))
    for _ in range(25):
        un = u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2]
                                + h ** 2 * f[1:-1, 1:-1])
    return np.mean(u[1:-1, 1:-1])


# ---- 11. a cable model on an object: self.k, in-place view updates, a mass budget ------------

class Cable:
    def __init__(self, k, leak, n=20):
        self.k = k
        self.leak = leak
        self.dx = 1.0 / n
        self.dt = 0.2 * self.dx ** 2
        self.u = zeros(n + 1)
        self.u[0] = 1.0
        self.mass = 0.0

    def step(self):
        u = self.u
        flux = -self.k * (u[1] - u[0]) / self.dx
        u[1:-1] += self.dt * (self.k * (u[2:] - 2 * u[1:-1] + u[:-2]) / self.dx ** 2
                              - self.leak * u[1:-1])
        u[-1] = u[-2]
        self.mass += self.dt * flux


def cable_uptake(params):
    c = Cable(params[0], params[1])
    for _ in range(40):
        c.step()
    return c.mass + np.sum(c.u) * c.dx


# ---- 12. shallow water by Lax-Friedrichs with np.roll ----------------------------------------

def shallow_water(params):
    g, hump = params
    n, steps = 40, 15
    x = np.linspace(0, 1, n, endpoint=False)
    dx = x[1] - x[0]
    dt = 0.2 * dx
    h = 1.0 + hump * exp(-((x - 0.5) / 0.1) ** 2)
    hu = np.zeros(n)
    for _ in range(steps):
        F1 = hu
        F2 = hu ** 2 / h + 0.5 * g * h ** 2
        h_new = 0.5 * (np.roll(h, 1) + np.roll(h, -1)) - dt / (2 * dx) * (np.roll(F1, -1)
                                                                         - np.roll(F1, 1))
        hu = 0.5 * (np.roll(hu, 1) + np.roll(hu, -1)) - dt / (2 * dx) * (np.roll(F2, -1)
                                                                        - np.roll(F2, 1))
        h = h_new
    return np.sum(h ** 3) * dx


# ---- 13. HMM forward recursion, logsumexp over an axis into a zeros table -----------------

OBS = np.array([0.1, -0.3, 0.2, 2.1, 1.8, 2.4, 0.0, -0.2, 1.9, 2.2])


def hmm_loglik(params):
    stay, mu2 = params
    A = array([[stay, 1 - stay], [1 - stay, stay]])
    means = array([0.0, mu2])
    log_e = -0.5 * (OBS[:, None] - means[None, :]) ** 2 - 0.5 * np.log(2 * np.pi)
    T, K = log_e.shape
    log_alpha = zeros((T, K))
    log_alpha[0] = np.log(0.5) + log_e[0]
    for t in range(1, T):
        log_alpha[t] = logsumexp(log_alpha[t - 1][:, None] + np.log(A), axis=0) + log_e[t]
    return logsumexp(log_alpha[-1])


# ---- 14. EM for a 1-d two-component Gaussian mixture ------------------------------------------

RAW = np.array([-1.9, -1.4, -1.1, -0.6, 0.2, 1.1, 1.6, 2.0, 2.3, 2.9])


@dataclass
class EMSettings:
    iterations: int = 6
    var_floor: float = 1e-3


def em_mixture(params, settings=EMSettings()):
    shift, scale = params
    x = shift + scale * RAW
    w = np.array([0.5, 0.5])
    mu = np.array([-1.0, 1.0])
    var = np.array([1.0, 1.0])
    for _ in range(settings.iterations):
        logp = (np.log(w) - 0.5 * np.log(2 * np.pi * var)
                - 0.5 * (x[:, None] - mu) ** 2 / var)
        resp = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        nk = resp.sum(axis=0)
        w = nk / len(x)
        mu = resp.T @ x / nk
        var = np.maximum((resp * (x[:, None] - mu) ** 2).sum(axis=0) / nk, settings.var_floor)
    logp = np.log(w) - 0.5 * np.log(2 * np.pi * var) - 0.5 * (x[:, None] - mu) ** 2 / var
    return np.sum(logsumexp(logp, axis=1))


# ---- 15. Kalman filter and RTS smoother into preallocated arrays -----------------------------

TRACK = np.array([0.0, 0.9, 2.2, 2.8, 4.1, 5.2, 5.8, 7.1])


def rts_smoother(params):
    q, r = params
    F = array([[1.0, 1.0], [0.0, 1.0]])
    Q = q * array([[1 / 3, 1 / 2], [1 / 2, 1.0]])
    H = array([[1.0, 0.0]])
    n = len(TRACK)
    xs = zeros((n, 2))
    Ps = zeros((n, 2, 2))
    xp = zeros((n, 2))
    Pp = zeros((n, 2, 2))
    x = array([0.0, 1.0])
    P = np.eye(2)
    for k in range(n):
        x = F @ x
        P = F @ P @ F.T + Q
        xp[k], Pp[k] = x, P
        S = H @ P @ H.T + r
        K = P @ H.T / S
        x = x + (K * (TRACK[k] - H @ x)).ravel()
        P = P - K @ H @ P
        xs[k], Ps[k] = x, P
    for k in range(n - 2, -1, -1):
        C = Ps[k] @ F.T @ np.linalg.inv(Pp[k + 1])
        xs[k] += C @ (xs[k + 1] - xp[k + 1])
        Ps[k] += C @ (Ps[k + 1] - Pp[k + 1]) @ C.T
    return np.sum((xs[:, 0] - TRACK) ** 2) + np.sum(Ps[:, 0, 0])


# ---- 16. GP predictive log-density with cho_factor / cho_solve / solve_triangular -------------

XT = np.array([0.0, 0.7, 1.3, 2.1, 2.9, 3.4])
YT = np.array([0.1, 0.6, 1.0, 0.8, 0.1, -0.3])
XS = np.array([1.0, 2.5])
YS = np.array([0.85, 0.45])


def _rbf(a, b, ell, sf):
    return sf ** 2 * np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ell ** 2)


def gp_predictive(params):
    log_ell, log_sf = params
    ell, sf, sn = np.exp(log_ell), np.exp(log_sf), 0.1
    K = _rbf(XT, XT, ell, sf) + sn ** 2 * np.eye(len(XT))
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), YT)
    Ks = _rbf(XT, XS, ell, sf)
    mean = Ks.T @ alpha
    v = solve_triangular(np.tril(c), Ks, lower=True)
    var = sf ** 2 + sn ** 2 - np.sum(v ** 2, axis=0)
    return np.sum(-0.5 * (YS - mean) ** 2 / var - 0.5 * np.log(2 * np.pi * var))


# ---- 17. Poisson regression summing a list, gammaln of the counts ----------------------------

DOSE = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0]
COUNTS = [2, 3, 6, 8, 15, 33]


def poisson_loglik(params):
    b0, b1 = params
    terms = []
    for d, y in zip(DOSE, COUNTS):
        log_mu = b0 + b1 * d
        terms.append(y * log_mu - np.exp(log_mu) - gammaln(y + 1))
    return sum(terms)


# ---- 18. a continuous-time Markov chain by expm ----------------------------------------------

TRANSITIONS = np.array([[30, 5, 1], [4, 25, 6], [0, 3, 20]])


def ctmc_loglik(params):
    a, b = params
    Q = array([[-a, a, 0.0], [b, -(a + b), a], [0.0, b, -b]])
    P = expm(0.5 * Q)
    return np.sum(TRANSITIONS * np.log(P + 1e-300))


# ---- 19. a finite-element bar assembled with np.add.at ------------------------------------

def fem_add_at(params):
    E, q = params
    n = 8
    h = 1.0 / n
    K = np.zeros((n + 1, n + 1))
    F = np.zeros(n + 1)
    for e in range(n):
        dofs = np.array([e, e + 1])
        area = 1.0 + 0.5 * (e + 0.5) * h
        np.add.at(K, (dofs[:, None], dofs[None, :]),
                  E * area / h * np.array([[1.0, -1.0], [-1.0, 1.0]]))
        np.add.at(F, dofs, q * h / 2)
    u = np.linalg.solve(K[1:, 1:], F[1:])
    return u[-1] + 0.1 * np.max(u)


# ---- 20. an AR(1) likelihood by lfilter -------------------------------------------------------

SERIES = np.array([0.3, 0.5, 0.1, -0.4, -0.2, 0.6, 0.9, 0.2, -0.1, 0.4])


def ar1_loglik(params):
    phi, sigma = params
    e = lfilter([1.0, -phi], [1.0], SERIES)[1:]
    n = len(e)
    return -0.5 * np.sum(e ** 2) / sigma ** 2 - n * np.log(sigma) - 0.5 * n * np.log(2 * np.pi)


# ---- 21. two coupled equilibria by root with jac=True -----------------------------------------

def equilibria(params):
    K1, K2 = params

    def residual(x):
        a, b = x
        F = np.array([a * (1 + b) - K1 * (1 - a), b * (1 + a) - K2 * (1 - b) ** 2])
        J = np.array([[1 + b + K1, a], [b, 1 + a + 2 * K2 * (1 - b)]])
        return F, J

    sol = root(residual, [0.5, 0.5], jac=True, tol=1e-14)
    return sol.x[0] * sol.x[1] + sol.x[1]


# ---- 22. Kepler's equation by newton with fprime and args, over a list of times --------------

def _kepler(E, M, e):
    return E - e * np.sin(E) - M


def _kepler_prime(E, M, e):
    return 1 - e * np.cos(E)


def orbit_radius(params):
    ecc, period = params
    radii = []
    for t in [0.3, 1.1, 2.0, 2.9]:
        M = 2 * np.pi * t / period
        E = newton(_kepler, M, fprime=_kepler_prime, args=(M, ecc), tol=1e-14)
        radii.append(1 - ecc * np.cos(E))
    return np.mean(np.array(radii))


# ---- 23. a table lookup by RegularGridInterpolator ------------------------------------------

def table_lookup(params):
    a, b = params
    T = np.linspace(300.0, 400.0, 5)
    P = np.linspace(1.0, 3.0, 4)
    TT, PP = np.meshgrid(T, P, indexing="ij")
    table = a * np.exp(-b * 1000.0 / TT) * PP
    lookup = RegularGridInterpolator((T, P), table)
    return np.sum(lookup(np.array([[320.0, 1.5], [375.0, 2.6]])))


# ---- 24. a matrix-free diffusion operator stepped explicitly ----------------------------------

def operator_steps(params):
    D, u0 = params
    n = 12
    dx = 1.0 / (n + 1)
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n)).tocsr() / dx ** 2
    A = LinearOperator((n, n), matvec=lambda v: D * (L @ v))
    u = u0 * np.sin(np.pi * np.linspace(dx, 1 - dx, n))
    for _ in range(10):
        u = u + 0.2 * dx ** 2 * (A @ u)
    return np.sum(u ** 2) * dx + dx ** 2 * np.sum(A.matvec(np.ones(n)))


# ---- 25. a decay fit by leastsq, its uncertainty from cov_x and the residuals in fvec --------

DECAY_T = np.linspace(0.0, 3.0, 9)
DECAY_Y = np.array([2.02, 1.49, 1.13, 0.82, 0.63, 0.45, 0.35, 0.27, 0.19])


def decay_fit_error(params):
    gain, offset = params
    y = gain * DECAY_Y + offset

    def residuals(theta):
        return theta[0] * np.exp(-theta[1] * DECAY_T) - y

    theta, cov_x, infodict, mesg, ier = leastsq(residuals, [1.0, 1.0], full_output=True,
                                                xtol=1e-14, ftol=1e-14)
    s_sq = (infodict["fvec"] ** 2).sum() / (len(y) - len(theta))
    pcov = cov_x * s_sq
    return theta[1] + np.sqrt(pcov[1, 1]) / theta[1]


# ---- 26. a thermistor: a curve_fit chi-square from full_output, a brentq RootResults ------------

RESIST_T = np.array([273.0, 283.0, 293.0, 303.0, 313.0, 323.0])
RESIST_R = np.array([32.6, 19.9, 12.5, 8.06, 5.33, 3.60])


def _steinhart(T, lnR0, B):
    return lnR0 + B * (1.0 / T - 1.0 / 298.15)


def thermistor(params):
    scale, target = params
    popt, pcov, info, mesg, ier = curve_fit(_steinhart, RESIST_T, np.log(scale * RESIST_R),
                                            p0=[2.0, 3000.0], full_output=True)
    chi2 = np.sum(info["fvec"] ** 2)
    T_at, result = brentq(lambda T: _steinhart(T, *popt) - np.log(target), 250.0, 400.0,
                          xtol=1e-12, full_output=True)
    return result.root / 300.0 + 100.0 * chi2


# ---- 27. a shadow price: SLSQP's multiplier of a binding resource constraint ----------------------

def shadow_price(params):
    capacity, price = params

    def negative_profit(q):
        return -(price * q[0] + 3.0 * q[1]) + 0.5 * (q[0] ** 2 + q[1] ** 2)

    res = minimize(negative_profit, np.array([0.5, 0.5]), method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda q: capacity - q[0] - 2.0 * q[1]}],
                   options={"ftol": 1e-14})
    return res.multipliers[0] + res.fun


# ---- 28. the same shadow price from trust-constr's res.v -------------------------------------------

def shadow_price_trust_constr(params):
    capacity, price = params

    def negative_profit(q):
        return -(price * q[0] + 3.0 * q[1]) + 0.5 * (q[0] ** 2 + q[1] ** 2)

    res = minimize(negative_profit, np.array([0.5, 0.5]), method="trust-constr",
                   hess=lambda q: np.eye(2),
                   constraints=[NonlinearConstraint(lambda q: q[0] + 2.0 * q[1], -np.inf,
                                                    capacity, hess=lambda q, v: np.zeros((2, 2)))],
                   options={"gtol": 1e-12, "xtol": 1e-14})
    return res.v[0][0] + res.fun


# ---- refusals that must say what to do --------------------------------------------------------

def operator_cg(params):
    """cg with a LinearOperator whose matvec reads active values."""
    kappa, amp = params
    n = 6
    L = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n)).tocsr()
    A = LinearOperator((n, n), matvec=lambda v: kappa * (L @ v) + v)
    u, info = cg(A, amp * np.ones(n), rtol=1e-12)
    return np.sum(u ** 2)


def damped_cosine_transform(params):
    """quad with weight='cos' and an active frequency."""
    omega, decay = params
    val, _ = quad(lambda t: np.exp(-decay * t), 0.0, 3.0, weight="cos", wvar=omega)
    return val
