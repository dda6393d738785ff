"""A small filtering and optics library written as such libraries are: NumPy
imported by name at the top, plain work arrays updated in place. The tests
in test_plain_targets.py differentiate through it without changing it."""
from numpy import array, dot, exp, outer, sqrt, sum, zeros


def sigma_points(x, P, kappa=1.0):
    """Julier's 2n + 1 sigma points of the mean ``x`` and covariance ``P``
    (Cholesky factor by the 2x2 formula, to stay elementary)."""
    n = len(x)
    L = zeros((n, n))
    L[0, 0] = sqrt((n + kappa) * P[0, 0])
    L[1, 0] = (n + kappa) * P[1, 0] / L[0, 0]
    L[1, 1] = sqrt((n + kappa) * P[1, 1] - L[1, 0] ** 2)
    points = [x]
    for i in range(n):
        points.append(x + L[:, i])
    for i in range(n):
        points.append(x - L[:, i])
    weights = array([kappa / (n + kappa)] + [0.5 / (n + kappa)] * (2 * n))
    return array(points), weights


def cross_covariance(sigmas_f, sigmas_h, x, z, Wc):
    """Pxz of the unscented transform, accumulated in place."""
    Pxz = zeros((sigmas_f.shape[1], sigmas_h.shape[1]))
    for i in range(sigmas_f.shape[0]):
        dx = sigmas_f[i] - x
        dz = sigmas_h[i] - z
        Pxz += Wc[i] * outer(dx, dz)
    return Pxz


def kalman_update(x, P, z, H, r):
    """One scalar-measurement update; the covariance is updated in place."""
    s = dot(H, dot(P, H)) + r
    k = dot(P, H) / s
    x = x + k * (z - dot(H, x))
    P -= outer(k, k) * s
    return x, P


def layer_phases(thicknesses, n_index, wavelength):
    """Phase thickness of each layer of a thin-film stack, from a list of
    thicknesses (numbers or parameters)."""
    d = array(thicknesses, dtype=float)
    return 2.0 * 3.141592653589793 * n_index * d / wavelength


def transmitted(phases, loss):
    """A toy transmission: attenuation accumulated layer by layer."""
    total = zeros(1)
    for phi in phases:
        total += loss * phi
    return sum(exp(-total))
