"""A small modelling library written as such libraries are: NumPy's names
imported at the top, a fixed-step integrator filling a preallocated
trajectory, thin-film transfer matrices built as nested lists of complex
values. tests/numpy/test_user_program_sweep.py differentiates through it
without changing it."""
from numpy import array, cos, eye, pi, sin, zeros


def rk4(rhs, y0, t, *args):
    """Classical Runge-Kutta on the grid ``t``, the trajectory stored row by row."""
    y = zeros((len(t), len(y0)))
    y[0] = y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        k1 = rhs(y[i], t[i], *args)
        k2 = rhs(y[i] + h / 2 * k1, t[i] + h / 2, *args)
        k3 = rhs(y[i] + h / 2 * k2, t[i] + h / 2, *args)
        k4 = rhs(y[i] + h * k3, t[i] + h, *args)
        y[i + 1] = y[i] + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def sir(y, t, beta, gamma):
    """Kermack-McKendrick epidemic: susceptible, infected, recovered fractions."""
    S, I, R = y
    return array([-beta * S * I, beta * S * I - gamma * I, gamma * I])


def characteristic_matrix(n_layer, d, wavelength):
    """Abeles matrix of one homogeneous layer at normal incidence."""
    delta = 2 * pi * n_layer * d / wavelength
    return array([[cos(delta), 1j * sin(delta) / n_layer],
                  [1j * n_layer * sin(delta), cos(delta)]])


def reflectance(indices, thicknesses, wavelength, n_in=1.0, n_sub=1.52):
    """Reflectance of a layer stack on a substrate (Macleod's B, C form)."""
    M = eye(2, dtype=complex)
    for n_layer, d in zip(indices, thicknesses):
        M = M @ characteristic_matrix(n_layer, d, wavelength)
    B, C = M @ array([1.0, n_sub])
    r = (n_in * B - C) / (n_in * B + C)
    return abs(r) ** 2
