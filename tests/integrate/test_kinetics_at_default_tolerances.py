"""A stiff kinetics fit written the way chemists write it -- rate constants
in a dict, ``def rhs(t, y, k1, k2, k3)`` with ``args=``, SciPy's
``solve_ivp`` at its default tolerances (rtol 1e-3, atol 1e-6), a weighted
least-squares misfit against measured concentrations -- differentiated by
``adsim.grad`` without any change to the script.

At these loose tolerances the computed concentrations are good to about
1e-3, and the default derivative must stay within 1 % of the derivative of
the model itself: the forward sensitivities ``S' = f_y S + f_k``, written
out by hand below and solved by SciPy's LSODA at rtol 1e-11. (An earlier
default gave a derivative 5-7 times off on such a script, silently.)
Measured on the misfit's gradient: Radau 1.6e-4, LSODA 1.1e-3, BDF 8.0e-3
(on the concentrations' sensitivities 5.6e-5 for each) -- BDF's misfit is
that of BDF's own concentrations, whose error at rtol 1e-3 moves the
residuals; its derivative is Radau's (docs/integrate.md, "BDF's default
derivatives").
"""
import numpy as np
import pytest
from scipy.integrate import odeint, solve_ivp

import adsim

# Robertson's autocatalytic mechanism: A -> B (k1), 2B -> B + C (k2),
# B + C -> A + C (k3); concentrations in mol/L, times in s
RATES = {"k1": 0.04, "k2": 3.0e7, "k3": 1.0e4}
T_MEASURED = np.array([0.4, 4.0, 40.0, 100.0, 400.0, 1000.0, 4000.0])
C0 = [1.0, 0.0, 0.0]


def rhs(t, y, k1, k2, k3):
    A, B, C = y
    r1 = k1 * A
    r2 = k2 * B ** 2
    r3 = k3 * B * C
    return [-r1 + r3, r1 - r2 - r3, r2]


def measured_concentrations():
    """Synthetic measurements: the model at the true rates, 1 % noise."""
    sol = solve_ivp(rhs, (0.0, T_MEASURED[-1]), C0, method="Radau", t_eval=T_MEASURED,
                    args=tuple(RATES.values()), rtol=1e-10, atol=1e-14)
    noise = np.random.default_rng(7).normal(0.0, 0.01, sol.y.shape)
    return sol.y * (1.0 + noise)


DATA = measured_concentrations()
SIGMA = 0.01 * DATA.max(axis=1, keepdims=True)       # each species on its own scale


def misfit(log_k, method):
    k = {name: np.exp(v) for name, v in zip(RATES, log_k)}
    sol = solve_ivp(rhs, (0.0, T_MEASURED[-1]), C0, method=method, t_eval=T_MEASURED,
                    args=(k["k1"], k["k2"], k["k3"]))
    return np.sum(((sol.y - DATA) / SIGMA) ** 2)


def model_sensitivities(log_k):
    """The exact model's concentrations ``y`` (shape (3, times)) and
    sensitivities ``S[t, i, j] = d y_i(t) / d log k_j``, by forward
    sensitivities."""
    k1, k2, k3 = np.exp(log_k)

    def augmented(w, t):
        (A, B, C), S = w[:3], w[3:].reshape(3, 3)
        f_y = np.array([[-k1, k3 * C, k3 * B],
                        [k1, -2 * k2 * B - k3 * C, -k3 * B],
                        [0.0, 2 * k2 * B, 0.0]])
        # d f / d log k = (d f / d k) k
        f_logk = np.array([[-k1 * A, 0.0, k3 * B * C],
                           [k1 * A, -k2 * B ** 2, -k3 * B * C],
                           [0.0, k2 * B ** 2, 0.0]])
        return np.concatenate([rhs(t, w[:3], k1, k2, k3), (f_y @ S + f_logk).ravel()])
    times = np.concatenate([[0.0], T_MEASURED])
    w = odeint(augmented, np.concatenate([C0, np.zeros(9)]), times, rtol=1e-11,
               atol=np.concatenate([np.full(3, 1e-16), np.full(9, 1e-14)]), mxstep=100000)[1:]
    return w[:, :3].T, w[:, 3:].reshape(-1, 3, 3)


def model_sensitivity_gradient(log_k):
    """d misfit / d log k of the exact model."""
    y, S = model_sensitivities(log_k)
    return 2 * np.einsum("it,tij->j", (y - DATA) / SIGMA ** 2, S)


# a fit under way: every rate 10-30 % from the truth
LOG_K = np.log(list(RATES.values())) + np.array([0.1, -0.2, 0.25])


@pytest.fixture(scope="module")
def model_gradient():
    return model_sensitivity_gradient(LOG_K)


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_default_derivative_within_one_percent_of_the_models(method, model_gradient):
    value, g = adsim.value_and_grad(misfit)(LOG_K, method)
    # SciPy's numbers (Radau and BDF iterate with adsim's exact Jacobian where
    # SciPy differences ``rhs``: the same solution to well within the tolerance)
    assert value == pytest.approx(misfit(LOG_K, method), rel=1e-5)
    error = np.max(np.abs(g - model_gradient)) / np.max(np.abs(model_gradient))
    assert error < 1e-2, f"{method}: {g} against the model's {model_gradient} ({error:.1e})"


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_default_sensitivities_of_each_species(method):
    """d concentration / d log k at the measured times, each species against
    its own scale: 5.6e-5 for every method (their derivatives are Radau's)."""
    def concentrations(log_k):
        return solve_ivp(rhs, (0.0, T_MEASURED[-1]), C0, method=method, t_eval=T_MEASURED,
                         args=tuple(np.exp(log_k))).y
    J = adsim.jacobian(concentrations)(LOG_K)                  # (species, times, rates)
    expected = np.transpose(model_sensitivities(LOG_K)[1], (1, 0, 2))
    for species, (got, want) in enumerate(zip(J, expected)):
        error = np.max(np.abs(got - want)) / np.max(np.abs(want))
        assert error < 1e-3, f"{method}, species {species}: {error:.1e}"


def test_the_reference_is_the_models_derivative(model_gradient):
    """The hand-written sensitivities against central differences of a
    tight solve: the reference is right."""
    def tight_misfit(log_k):
        sol = solve_ivp(rhs, (0.0, T_MEASURED[-1]), C0, method="LSODA", t_eval=T_MEASURED,
                        args=tuple(np.exp(log_k)), rtol=1e-12, atol=1e-16)
        return np.sum(((sol.y - DATA) / SIGMA) ** 2)
    h = 1e-4
    differences = [(tight_misfit(LOG_K + h * e) - tight_misfit(LOG_K - h * e)) / (2 * h)
                   for e in np.eye(3)]
    np.testing.assert_allclose(model_gradient, differences, rtol=1e-5)
