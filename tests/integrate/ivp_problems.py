"""Initial value problems shared by the tests of adsim.integrate, written
as a user would write them for scipy.integrate.solve_ivp."""
import numpy as np


def lorenz(t, y, p):
    """Lorenz-63; p = (sigma, rho, beta)."""
    return [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]


def van_der_pol(t, y, mu):
    """Van der Pol oscillator, stiff-ish for mu of a few units; mu of shape (1,)."""
    return np.array([y[1], mu[0] * (1 - y[0] ** 2) * y[1] - y[0]])


def robertson(t, y, k):
    """Robertson's chemical kinetics (stiff); k = (0.04, 3e7, 1e4)."""
    return [-k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
            k[1] * y[1] ** 2]


def robertson_jacobian(t, y, k):
    """d robertson / dy, written out (usable as ``jac=`` inside a recording)."""
    zero = 0 * y[0]
    return np.array([[-k[0] + zero, k[2] * y[2], k[2] * y[1]],
                     [k[0] + zero, -2 * k[1] * y[1] - k[2] * y[2], -k[2] * y[1]],
                     [zero, 2 * k[1] * y[1], zero]])


def heat(t, u, kappa, dx):
    """1-D heat equation, method of lines, zero Dirichlet boundaries; a
    conductivity field ``kappa`` on the grid and a time-dependent source."""
    padded = np.concatenate([np.zeros(1), u, np.zeros(1)])
    laplacian = (padded[2:] - 2 * padded[1:-1] + padded[:-2]) / dx ** 2
    return kappa * laplacian + np.sin(t) * np.exp(-u ** 2)


def burgers(t, u, nu, dx):
    """Viscous Burgers, periodic, conservative central differences."""
    flux = 0.5 * u ** 2
    return (-(np.roll(flux, -1) - np.roll(flux, 1)) / (2 * dx)
            + nu * (np.roll(u, -1) - 2 * u + np.roll(u, 1)) / dx ** 2)


def heat_problem(n=24):
    x = np.linspace(0, 1, n + 2)[1:-1]
    dx = x[1] - x[0]
    return np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x), 0.05 + 0.02 * x, dx


def burgers_problem(n=32):
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return 1.0 + 0.5 * np.sin(x), np.array(0.1), x[1] - x[0]


LORENZ = dict(fun=lorenz, y0=np.array([1.0, 1.0, 1.0]), args=(np.array([10.0, 28.0, 8 / 3]),),
              t_span=(0.0, 2.0))
VAN_DER_POL = dict(fun=van_der_pol, y0=np.array([2.0, 0.0]), args=(np.array([5.0]),),
                   t_span=(0.0, 8.0))
_u0, _kappa, _dx = heat_problem()
HEAT = dict(fun=heat, y0=_u0, args=(_kappa, _dx), t_span=(0.0, 0.5))
_v0, _nu, _dxb = burgers_problem()
BURGERS = dict(fun=burgers, y0=_v0, args=(_nu, _dxb), t_span=(0.0, 1.0))
PROBLEMS = {"lorenz": LORENZ, "van_der_pol": VAN_DER_POL, "heat": HEAT, "burgers": BURGERS}
METHODS = ("RK23", "RK45", "DOP853")
