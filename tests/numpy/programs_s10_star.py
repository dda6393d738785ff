"""A module written in the ``from numpy import *`` style (programs_s10.py
section 34): NumPy's ``sum``, ``max``, ``abs``, ``exp`` shadow the
builtins, arrays are made by ``array``, ``zeros``, ``linspace`` bound
directly, and a plain array made by ``zeros`` is filled in place."""
from numpy import *
from scipy.integrate import trapezoid

H_PLANCK = 6.626e-34
C_LIGHT = 2.998e8
K_BOLTZ = 1.381e-23

LAMBDAS = linspace(0.4e-6, 3.0e-6, 40)


def planck(lam, T):
    return 2 * H_PLANCK * C_LIGHT ** 2 / lam ** 5 / (exp(H_PLANCK * C_LIGHT / (lam * K_BOLTZ * T)) - 1)


def two_source_spectrum(params):
    """Normalised spectrum of two black bodies with an emissivity, the
    bands integrated into a zeros array in a loop."""
    T1, T2, emissivity = params
    spectrum = emissivity * planck(LAMBDAS, T1) + (1 - emissivity) * planck(LAMBDAS, T2)
    bands = zeros(4)
    edges = array([0, 10, 20, 30, 40])
    for i in range(4):
        bands[i] = trapezoid(spectrum[edges[i]:edges[i + 1]], LAMBDAS[edges[i]:edges[i + 1]])
    frac = bands / sum(bands)
    return max(frac) + sum(abs(frac - 0.25)) + log(mean(spectrum))
