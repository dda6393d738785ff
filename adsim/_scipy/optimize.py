"""``scipy.optimize``'s Rosenbrock test function and its derivatives on active
arrays, called unchanged (see hooks.py; SciPy's own code converts its
argument through the array API, which drops the derivative): rosen,
rosen_der, rosen_hess, rosen_hess_prod, written as SciPy defines them along
the first axis."""
import numpy as np

from .arrays import array


def rosen(x):
    """sum(100 (x[1:] - x[:-1]^2)^2 + (1 - x[:-1])^2) over the first axis."""
    x = array(x, "scipy.optimize.rosen")
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2, axis=0)


def rosen_der(x):
    x = array(x, "scipy.optimize.rosen_der")
    inner = (200.0 * (x[1:-1] - x[:-2] ** 2) - 400.0 * (x[2:] - x[1:-1] ** 2) * x[1:-1]
             - 2.0 * (1.0 - x[1:-1]))
    first = -400.0 * x[:1] * (x[1:2] - x[:1] ** 2) - 2.0 * (1.0 - x[:1])
    last = 200.0 * (x[-1:] - x[-2:-1] ** 2)
    return np.concatenate([first, inner, last])


def rosen_hess(x):
    x = array(x, "scipy.optimize.rosen_hess")
    diagonal = np.concatenate([1200.0 * x[:1] ** 2 - 400.0 * x[1:2] + 2.0,
                               202.0 + 1200.0 * x[1:-1] ** 2 - 400.0 * x[2:], np.full(1, 200.0)])
    return np.diag(-400.0 * x[:-1], 1) + np.diag(-400.0 * x[:-1], -1) + np.diag(diagonal)


def rosen_hess_prod(x, p):
    x = np.reshape(array(x, "scipy.optimize.rosen_hess_prod"), (-1,)) if np.ndim(x) == 0 else \
        array(x, "scipy.optimize.rosen_hess_prod")
    p = array(p, "scipy.optimize.rosen_hess_prod")
    first = (1200.0 * x[:1] ** 2 - 400.0 * x[1:2] + 2.0) * p[:1] - 400.0 * x[:1] * p[1:2]
    inner = (-400.0 * x[:-2] * p[:-2] + (202.0 + 1200.0 * x[1:-1] ** 2 - 400.0 * x[2:]) * p[1:-1]
             - 400.0 * x[1:-1] * p[2:])
    last = -400.0 * x[-2:-1] * p[-2:-1] + 200.0 * p[-1:]
    return np.concatenate([first, inner, last])


HOOKS = {("scipy.optimize", f.__name__): f for f in (rosen, rosen_der, rosen_hess,
                                                     rosen_hess_prod)}
