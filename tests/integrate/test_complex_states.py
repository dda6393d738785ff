"""solve_ivp of a complex state with active values (adsim/integrate/_complex_state.py):
a two-level system's Schrödinger equation as physicists write it,
``-1j * (H @ psi)`` from ``y0 = np.array([1.0 + 0j, 0.0 + 0j])``, by the
explicit methods. The values are SciPy's complex solve's; the gradient at
tight tolerances is the exact one (a matrix exponential's), and agrees
with central differences of the program; with ``t_eval``, events, dense
output, ``args``, an active initial state, Hessian products and replays.
Radau, BDF and LSODA refuse a complex active state by name."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

import adsim
from fdcheck import assert_close, central

X = np.array([0.5, 1.0])                   # detuning, Rabi frequency
PSI0 = np.array([1.0 + 0j, 0.0 + 0j])


def hamiltonian(p):
    delta, omega = p
    return np.array([[delta / 2, omega / 2], [omega / 2, -delta / 2]])


def excited(p, T=3.0, **options):
    H = hamiltonian(p)
    sol = solve_ivp(lambda t, psi: -1j * (H @ psi), (0, T), PSI0, **options)
    return np.abs(sol.y[1, -1]) ** 2 + 0.3 * np.real(sol.y[0, -1])


def exact(p, T=3.0):
    psi = expm(-1j * T * hamiltonian(p)) @ PSI0
    return np.abs(psi[1]) ** 2 + 0.3 * np.real(psi[0])


def gradient_by_differences(f, x):
    return np.array([central(f, [x], [e * 1e-3]) / 1e-3 for e in np.eye(x.size)])


@pytest.mark.parametrize("options", [{"rtol": 1e-10, "atol": 1e-12},
                                     {"method": "DOP853", "rtol": 1e-10, "atol": 1e-12},
                                     {"method": "RK23", "rtol": 1e-8, "atol": [1e-10, 1e-11]}])
def test_values_are_scipys_and_gradients_exact(options):
    value, g = adsim.value_and_grad(lambda p: excited(p, **options))(X)
    assert_close(value, excited(X, **options), rtol=1e-12, atol=0, what="value")
    want = gradient_by_differences(exact, X)
    tol = 1e-6 if options.get("method") == "RK23" else 1e-8
    assert_close(g, want, rtol=tol, atol=0, what="gradient")
    assert_close(g, gradient_by_differences(lambda p: excited(p, **options), X), rtol=tol,
                 atol=0, what="against differences of the program")


def test_default_tolerances_to_about_the_tolerance():
    """At rtol=1e-3 the gradient is the exact derivative to about 1e-3 and
    forward and reverse modes agree; a replay at a new point gives what a
    recording there gives (or the steps changed: BranchChanged)."""
    g = adsim.grad(excited)(X)
    assert_close(g, gradient_by_differences(exact, X), rtol=3e-3, atol=0, what="gradient")
    v = np.array([0.3, -0.7])
    assert_close(adsim.jvp(excited, (X,), (v,))[1], g @ v, rtol=1e-10, atol=0, what="jvp")
    tape = adsim.record(excited, X)
    x2 = X * 1.01
    try:
        g2 = tape.gradient(x2)
    except adsim.BranchChanged:
        return
    assert_close(g2, adsim.grad(excited)(x2), rtol=1e-10, atol=0, what="replay")


def test_t_eval_dense_output_events_args_and_an_active_initial_state():
    """Populations at t_eval, the dense solution at other times, the first
    time the excited population reaches 0.3 (a terminal event on |psi_1|^2)
    and an initial superposition made from the parameters, against
    differences; Hessian products against differences of the gradient."""
    def program(p):
        H = hamiltonian(p)
        psi0 = np.array([np.cos(p[1] / 4), np.sin(p[1] / 4) * np.exp(0.3j)])

        def schrodinger(t, psi, scale):
            return -1j * scale * (H @ psi)

        def quarter(t, psi, scale):
            return np.abs(psi[1]) ** 2 - 0.3
        quarter.terminal = True
        quarter.direction = 1
        sol = solve_ivp(schrodinger, (0, 6), psi0, t_eval=[0.5, 1.0], args=(1.1,),
                        events=quarter, dense_output=True, rtol=1e-10, atol=1e-12)
        later = sol.sol(np.array([0.2, 0.7]))
        return (np.sum(np.abs(sol.y[0]) ** 2) + np.sum(np.real(later * np.conj(later[::-1])))
                + sol.t_events[0][0] + np.imag(sol.y_events[0][0][1]))
    value, g = adsim.value_and_grad(program)(X)
    assert_close(value, program(X), rtol=1e-10, atol=0, what="value")
    assert_close(g, gradient_by_differences(program, X), rtol=1e-6, atol=0, what="gradient")
    v = np.array([0.3, -0.7])
    assert_close(adsim.hvp(program, X, v), central(adsim.grad(program), [X], [v * 1e-2]) / 1e-2,
                 rtol=1e-5, atol=0, what="hvp")


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_implicit_methods_refuse_a_complex_active_state_by_name(method):
    """BDF integrates complex states in SciPy (Radau and LSODA do not: SciPy
    raises its ValueError on the plain program); adsim refuses all three
    with active values, naming the explicit methods."""
    with pytest.raises(adsim.UnsupportedOperation, match=r"complex y0 .* explicit methods"):
        adsim.grad(lambda p: excited(p, method=method))(X)
    if method == "BDF":
        assert np.isfinite(excited(X, method=method))
    else:
        with pytest.raises(ValueError, match="complex"):
            excited(X, method=method)
