"""Fifteen small scientific programs in the style of published NumPy/SciPy
code, kept as their authors would write them (names imported from NumPy,
plain workspaces updated in place, Python time loops, lists of arrays,
dicts of parameters, classes). test_user_programs_more.py differentiates
each one as written."""
import numpy as np
from numpy import array, zeros, eye, dot, exp, sqrt, empty, cos, sin, pi
from scipy.integrate import solve_ivp
from scipy.stats import norm


# ---- 1. Lennard-Jones cluster: pair energies from a distance matrix ---------------

def lj_energy(positions, epsilon=1.0, sigma=1.0):
    pos = positions.reshape(-1, 3)
    n = pos.shape[0]
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(diff ** 2, axis=-1)
    i, j = np.triu_indices(n, k=1)
    sr6 = (sigma ** 2 / r2[i, j]) ** 3
    return 4.0 * epsilon * np.sum(sr6 ** 2 - sr6)


# ---- 2. Two-body orbit by leapfrog, trajectory kept in a list ---------------------

def orbit_miss(params, n_steps=200, dt=0.01):
    GM, vy0 = params
    r = array([1.0, 0.0])
    v = array([0.0, 1.0]) * vy0
    traj = []
    a = -GM * r / np.linalg.norm(r) ** 3
    for step in range(n_steps):
        v = v + 0.5 * dt * a
        r = r + dt * v
        a = -GM * r / np.linalg.norm(r) ** 3
        v = v + 0.5 * dt * a
        traj.append(r.copy())
    traj = np.array(traj)
    target = array([-0.4, 0.9])
    return np.sum((traj[-1] - target) ** 2) + 1e-3 * np.mean(traj[:, 0] ** 2)


# ---- 3. Explicit heat equation, in place, insulated ends ----------------------------

def rod_temperature(kappa_and_source, nx=30, nt=60):
    kappa, q = kappa_and_source
    dx = 1.0 / (nx - 1)
    dt = 0.2 * dx * dx
    x = np.linspace(0, 1, nx)
    T = np.exp(-50 * (x - 0.3) ** 2)          # plain initial state
    for n in range(nt):
        Tn = T.copy()
        T[1:-1] = Tn[1:-1] + kappa * dt / dx ** 2 * (Tn[2:] - 2 * Tn[1:-1] + Tn[:-2])
        T[1:-1] += dt * q * np.sin(pi * x[1:-1])
        T[0] = T[1]                             # insulated ends
        T[-1] = T[-2]
    return np.sum(T * x) * dx


# ---- 4. Kalman filter, constant-velocity target, names imported from NumPy ---------

class KalmanFilter:
    def __init__(self, q, r, dt=0.1):
        self.F = array([[1.0, dt], [0.0, 1.0]])
        self.H = array([[1.0, 0.0]])
        self.Q = q * array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
        self.R = r * eye(1)
        self.x = zeros(2)
        self.P = eye(2) * 10.0

    def predict(self):
        self.x = dot(self.F, self.x)
        self.P = dot(dot(self.F, self.P), self.F.T) + self.Q

    def update(self, z):
        y = z - dot(self.H, self.x)
        S = dot(dot(self.H, self.P), self.H.T) + self.R
        K = dot(dot(self.P, self.H.T), np.linalg.inv(S))
        self.x = self.x + dot(K, y)
        self.P = dot(eye(2) - dot(K, self.H), self.P)
        return y, S


TRACK = np.array([0.0, 0.12, 0.19, 0.33, 0.41, 0.48, 0.62, 0.71, 0.79, 0.93, 1.02, 1.08])


def kalman_nll(log_qr):
    kf = KalmanFilter(exp(log_qr[0]), exp(log_qr[1]))
    nll = 0.0
    for z in TRACK:
        kf.predict()
        y, S = kf.update(array([z]))
        nll += 0.5 * (np.log(2 * pi * S[0, 0]) + y[0] ** 2 / S[0, 0])
    return nll


# ---- 5. Gaussian mixture: a few EM steps, then the log-likelihood -----------------

DATA_1D = np.concatenate([np.linspace(-2.5, -0.5, 12), np.linspace(0.8, 3.0, 15)])


class GaussianMixture1D:
    def __init__(self, means, sigma=0.7, weights=(0.5, 0.5)):
        self.mu = means
        self.sigma = sigma
        self.w = np.asarray(weights)

    def densities(self, x):
        z = (x[:, None] - self.mu[None, :]) / self.sigma
        return self.w * np.exp(-0.5 * z ** 2) / (sqrt(2 * pi) * self.sigma)

    def em_step(self, x):
        p = self.densities(x)
        resp = p / p.sum(axis=1, keepdims=True)
        Nk = resp.sum(axis=0)
        self.mu = (resp * x[:, None]).sum(axis=0) / Nk
        self.w = Nk / len(x)

    def loglik(self, x):
        return np.log(self.densities(x).sum(axis=1)).sum()


def mixture_after_em(initial_means, n_iter=1):
    gm = GaussianMixture1D(initial_means)
    for it in range(n_iter):
        gm.em_step(DATA_1D)
    return gm.loglik(DATA_1D)


# ---- 6. Bragg mirror: characteristic matrices filled entry by entry ----------------

def bragg_reflectance(thicknesses, n_layers=(2.3, 1.45), wavelength=0.55, n_sub=1.52):
    M = eye(2, dtype=complex)
    for k, d in enumerate(thicknesses):
        n = n_layers[k % 2]
        delta = 2 * pi * n * d / wavelength
        layer = empty((2, 2), dtype=complex)
        layer[0, 0] = cos(delta)
        layer[0, 1] = 1j * sin(delta) / n
        layer[1, 0] = 1j * n * sin(delta)
        layer[1, 1] = cos(delta)
        M = M @ layer
    B, C = M @ array([1.0, n_sub])
    r = (B - C) / (B + C)
    return np.abs(r) ** 2


# ---- 7. Shallow water, Lax-Friedrichs finite volumes ----------------------------------

def dam_break_energy(hump, nx=40, nt=40, g=9.81):
    x = np.linspace(0, 1, nx)
    dx = x[1] - x[0]
    h = 1.0 + hump[0] * np.exp(-((x - 0.5) / hump[1]) ** 2)
    hu = np.zeros(nx)
    dt = 0.4 * dx / np.sqrt(g * 1.5)
    for n in range(nt):
        u = hu / h
        F = np.array([hu, hu * u + 0.5 * g * h ** 2])
        U = np.array([h, hu])
        Up = np.concatenate([U[:, 1:], U[:, -1:]], axis=1)      # outflow boundaries
        Um = np.concatenate([U[:, :1], U[:, :-1]], axis=1)
        Fp = np.concatenate([F[:, 1:], F[:, -1:]], axis=1)
        Fm = np.concatenate([F[:, :1], F[:, :-1]], axis=1)
        U = 0.5 * (Up + Um) - dt / (2 * dx) * (Fp - Fm)
        h, hu = U[0], U[1]
    return np.sum(0.5 * hu ** 2 / h + 0.5 * g * h ** 2) * dx


# ---- 8. Cantilever of Euler-Bernoulli elements, dense assembly ------------------------

def beam_tip_deflection(EI, L=2.0, P=1.0):
    ne = len(EI)
    le = L / ne
    ndof = 2 * (ne + 1)
    K = np.zeros((ndof, ndof))
    for e in range(ne):
        k = EI[e] / le ** 3 * np.array([[12, 6 * le, -12, 6 * le],
                                        [6 * le, 4 * le ** 2, -6 * le, 2 * le ** 2],
                                        [-12, -6 * le, 12, -6 * le],
                                        [6 * le, 2 * le ** 2, -6 * le, 4 * le ** 2]])
        dofs = np.arange(2 * e, 2 * e + 4)
        K[np.ix_(dofs, dofs)] += k
    F = np.zeros(ndof)
    F[-2] = -P
    free = np.arange(2, ndof)                  # clamped at x = 0
    u = np.zeros(ndof)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], F[free])
    return u[-2]


# ---- 9. Two-compartment pharmacokinetics with solve_ivp and a dict ------------------

T_SAMPLE = np.array([0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0])
CONC_OBS = np.array([4.1, 6.0, 6.3, 4.9, 3.6, 2.7, 1.5])


def pk_rhs(t, y, p):
    gut, central, peripheral = y
    dgut = -p["ka"] * gut
    dcen = (p["ka"] * gut - p["cl"] / p["v1"] * central
            - p["q"] / p["v1"] * central + p["q"] / p["v2"] * peripheral)
    dper = p["q"] / p["v1"] * central - p["q"] / p["v2"] * peripheral
    return [dgut, dcen, dper]


def pk_sse(log_theta):
    ka, cl = np.exp(log_theta)
    p = {"ka": ka, "cl": cl, "v1": 15.0, "v2": 30.0, "q": 2.0}
    sol = solve_ivp(pk_rhs, (0, 12), [100.0, 0.0, 0.0], t_eval=T_SAMPLE, args=(p,),
                    rtol=1e-10, atol=1e-10)
    conc = sol.y[1] / p["v1"]
    return np.sum((conc - CONC_OBS) ** 2)


# ---- 10. Black-Scholes book of calls, normal cdf from scipy.stats ------------------

STRIKES = np.array([80.0, 90.0, 100.0, 110.0, 120.0])


def call_price(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def book_value(market):
    S, r, sigma = market
    prices = [call_price(S, K, 0.5, r, sigma) for K in STRIKES]
    return np.sum(np.array(prices) * np.array([1, -2, 1, 3, -1]))


# ---- 11. Viscous Burgers by a pseudo-spectral method with RK4 ------------------------

def burgers_energy(nu_and_amp, N=32, nt=20, dt=4e-3):
    nu, amp = nu_and_amp
    x = 2 * np.pi * np.arange(N) / N
    k = np.fft.rfftfreq(N, d=1.0 / N)
    u = amp * np.sin(x) + 0.1 * np.cos(2 * x)

    def rhs(u):
        u_hat = np.fft.rfft(u)
        ux = np.fft.irfft(1j * k * u_hat, n=N)
        uxx = np.fft.irfft(-(k ** 2) * u_hat, n=N)
        return -u * ux + nu * uxx

    for n in range(nt):
        k1 = rhs(u)
        k2 = rhs(u + 0.5 * dt * k1)
        k3 = rhs(u + 0.5 * dt * k2)
        k4 = rhs(u + dt * k3)
        u = u + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return 0.5 * np.mean(u ** 2)


# ---- 12. Markov chain: stationary distribution of a softmax transition matrix -------

REWARD = np.array([1.0, -0.5, 2.0, 0.0])


def long_run_reward(logits):
    W = logits.reshape(4, 4)
    P = np.exp(W) / np.exp(W).sum(axis=1, keepdims=True)
    A = P.T - np.eye(4)
    A[-1, :] = 1.0                              # replace one equation by sum(pi) = 1
    b = np.zeros(4)
    b[-1] = 1.0
    pi_stat = np.linalg.solve(A, b)
    return pi_stat @ REWARD


# ---- 13. A neural ODE: a tiny MLP vector field, explicit Euler ----------------------

def unpack(theta, sizes=((2, 8), (8,), (8, 2), (2,))):
    params, start = [], 0
    for shape in sizes:
        n = int(np.prod(shape))
        params.append(theta[start:start + n].reshape(shape))
        start += n
    return params


def node_loss(theta, dt=0.05, steps=20):
    W1, b1, W2, b2 = unpack(theta)
    z = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    path = [z]
    for _ in range(steps):
        h = np.tanh(z @ W1 + b1)
        z = z + dt * (h @ W2 + b2)
        path.append(z)
    path = np.stack(path)
    target = np.array([[0.0, 1.0], [-1.0, 0.0], [-0.5, -1.0]])
    return np.mean((path[-1] - target) ** 2) + 1e-3 * np.sum(theta ** 2)


# ---- 14. Lucas-Kanade flow: least squares on image gradients -----------------------

def lucas_kanade_flow(shift):
    y, x = np.mgrid[0:16, 0:16].astype(float)
    frame0 = np.exp(-((x - 7.5) ** 2 + (y - 7.0) ** 2) / 12.0)
    frame1 = np.exp(-((x - 7.5 - shift[0]) ** 2 + (y - 7.0 - shift[1]) ** 2) / 12.0)
    Iy, Ix = np.gradient(frame0)
    It = frame1 - frame0
    mask = frame0 > 0.05
    A = np.stack([Ix[mask], Iy[mask]], axis=1)
    flow, *_ = np.linalg.lstsq(A, -It[mask], rcond=None)
    return flow


# ---- 15. 1-D Ising chain: free energy from the transfer matrix ----------------------

def ising_free_energy(beta_h, J=1.0, N=50):
    beta, h = beta_h
    spins = np.array([1.0, -1.0])
    T = np.exp(beta * (J * np.outer(spins, spins) + 0.5 * h * (spins[:, None] + spins[None, :])))
    lam = np.linalg.eigvalsh(T)
    Z = np.sum(lam ** N)
    return -np.log(Z) / (beta * N)
