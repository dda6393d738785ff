"""``scipy.special.voigt_profile`` on active arrays (the line shape fitted
to spectra): V(x; sigma, gamma) = Re w(z) / (sigma sqrt(2 pi)),
z = (x + i gamma) / (sigma sqrt 2) = a + i b, w the Faddeeva function.

Its partial derivatives need Im w too: w'(z) = -2 z w(z) + 2i / sqrt(pi)
(DLMF 7.10.2), and by the Cauchy-Riemann equations d Re w / da = Re w',
d Re w / db = -Im w', d Im w / da = Im w', d Im w / db = Re w'. The
dispersion profile D = Im w(z) / (sigma sqrt(2 pi)) is a primitive of its
own with the same rules, so second derivatives are exact. At sigma = 0
both are the Lorentzian's, V = gamma / (pi (x^2 + gamma^2)) and
D = x / (pi (x^2 + gamma^2)); a Gaussian of variance sigma^2 smooths them
as the heat equation does, V = L + sigma^2 L'' / 2 + O(sigma^4), so their
sigma-derivative there is written sigma L'' (0, with the second
derivative L'')."""
import numpy as np
import scipy.special as sc

_SQRT_2 = np.sqrt(2.0)
_SQRT_PI = np.sqrt(np.pi)
_SQRT_2PI = np.sqrt(2.0 * np.pi)


def voigt_dispersion(x, sigma, gamma):
    """Im w((x + i gamma) / (sigma sqrt 2)) / (sigma sqrt(2 pi)) (the
    Lorentzian dispersion x / (pi (x^2 + gamma^2)) at sigma = 0)."""
    x, sigma, gamma = (np.asarray(v, dtype=float) for v in (x, sigma, gamma))
    lorentz = sigma == 0
    s = np.where(lorentz, 1.0, sigma)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = sc.wofz((x + 1j * gamma) / (s * _SQRT_2)).imag / (s * _SQRT_2PI)
        return np.where(lorentz, x / (np.pi * (x * x + gamma * gamma)), d)


def _pieces(x, sigma, gamma, recorded):
    """The profile P and dispersion Q (at sigma, or at 1 where sigma = 0),
    a, b, d(a, b)/d(x, gamma), and N Re w', N Im w' (N = 1 / (sigma
    sqrt(2 pi))), with the mask of sigma = 0 and the Lorentzian's
    denominator there; ``recorded(f)``: the recorded version of the ufunc f."""
    lorentz = sigma == 0
    s = np.where(lorentz, 1.0, sigma)
    P = sc.voigt_profile(x, s, gamma)
    Q = recorded(voigt_dispersion)(x, s, gamma)
    c = 1.0 / (s * _SQRT_2)
    a, b = x * c, gamma * c
    re = -2.0 * (a * P - b * Q)
    im = -2.0 * (a * Q + b * P) + 2.0 * c / (_SQRT_PI * _SQRT_PI)
    r = x * x + gamma * gamma
    return P, Q, s, a, b, c, re, im, lorentz, np.pi * r * r, np.pi * r * r * r


def _profile_partials(x, sigma, gamma, recorded):
    P, Q, s, a, b, c, re, im, lorentz, L2, L3 = _pieces(x, sigma, gamma, recorded)
    curvature = 2.0 * gamma * (3.0 * x * x - gamma * gamma) / L3
    return (np.where(lorentz, -2.0 * x * gamma / L2, c * re),
            np.where(lorentz, sigma * curvature, -(a * re - b * im + P) / s),
            np.where(lorentz, (x * x - gamma * gamma) / L2, -c * im))


def _dispersion_partials(x, sigma, gamma, recorded):
    P, Q, s, a, b, c, re, im, lorentz, L2, L3 = _pieces(x, sigma, gamma, recorded)
    curvature = 2.0 * x * (x * x - 3.0 * gamma * gamma) / L3
    return (np.where(lorentz, (gamma * gamma - x * x) / L2, c * im),
            np.where(lorentz, sigma * curvature, -(a * im + b * re + Q) / s),
            np.where(lorentz, -2.0 * x * gamma / L2, c * re))


def table(recorded):
    """{function: partials} for adsim/_scipy/ufuncs.py's table; ``recorded``
    (ufuncs.scipy_ufunc) gives the recorded dispersion the partials read."""
    return {sc.voigt_profile: lambda x, sigma, gamma: _profile_partials(x, sigma, gamma, recorded),
            voigt_dispersion:
                lambda x, sigma, gamma: _dispersion_partials(x, sigma, gamma, recorded)}
