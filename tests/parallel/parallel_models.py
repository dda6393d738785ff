"""Models shared by the tests of adsim.parallel, importable by worker
processes (a process pool's initializer imports this module, which makes
the named primitive there too)."""
import numpy as np
from scipy.integrate import solve_ivp

import adsim as ad

softplus = ad.primitive(lambda x: np.logaddexp(0.0, x),
                        jvp=lambda a, out, t: t[0] / (1.0 + np.exp(-a[0])),
                        vjp=lambda a, out, w: (w / (1.0 + np.exp(-a[0])),),
                        name="tests.parallel.softplus")


def model(x):
    """A scalar function with views, a reduction, a matrix product and a primitive."""
    y = np.sin(x) * x[::-1] + np.cumsum(x) / x.size
    return np.sum(softplus(y) ** 2) + np.log1p(x @ x) + np.max(np.abs(x))


def lorenz_step(u, p, dt):
    """One RK2 step of the Lorenz system."""
    def rhs(v):
        return np.stack([p[0] * (v[1] - v[0]), v[0] * (p[1] - v[2]) - v[1],
                         v[0] * v[1] - p[2] * v[2]])
    k1 = rhs(u)
    return u + 0.5 * dt * (k1 + rhs(u + dt * k1))


def lorenz_misfit(p, n_steps=200):
    """Squared distance of a checkpointed Lorenz trajectory's end point to a target."""
    u = ad.checkpoint_loop(lorenz_step, np.array([1.0, 1.0, 1.0]), n_steps, args=(p, 0.005),
                           snapshots=8)
    return np.sum((u - np.array([-2.0, 1.0, 24.0])) ** 2)


def pairs_loss(p, data):
    """A loss of parameters ``p`` and an experiment's ``data`` (two inputs)."""
    return np.sum((np.tanh(p[0] * data) + p[1] * data - 0.3) ** 2)


def _lotka(t, y, a, b):
    return [a * y[0] - b * y[0] * y[1], -y[1] + y[0] * y[1]]


def adaptive_misfit(p):
    """The end state of an adaptive ODE solve: its steps, hence its tape's
    branches, change with the parameters."""
    sol = solve_ivp(_lotka, (0.0, 5.0), [1.0, 0.5], args=(p[0], p[1]), rtol=1e-8, atol=1e-10)
    return np.sum(sol.y[:, -1] ** 2)
