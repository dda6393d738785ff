"""Events: SciPy's event times and states, and their derivatives (implicit
function theorem on the step's interpolant)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from ivp_problems import van_der_pol


def thrown(t, y, p):
    """A ball with quadratic drag; p = (g, k)."""
    return [y[1], -p[0] - p[1] * y[1] * abs(y[1])]


def thrown_jacobian(t, y, p):
    return np.array([[0.0, 1.0], [0.0, -2 * p[1] * abs(y[1])]])


def ground(t, y, p):
    return y[0]


ground.terminal = True
ground.direction = -1


def apex(t, y, p):
    return y[1]


def height(t, y, p):
    return y[0] - 5.0


P = np.array([9.81, 0.02])
Y0 = np.array([0.5, 20.0])        # above the ground: |y| has no kink at the start
EVENTS = [apex, ground, height]


@pytest.mark.parametrize("method", ("RK23", "RK45", "DOP853", "Radau", "BDF"))
def test_events_as_scipy(method):
    for t_eval in (None, np.linspace(0, 10, 21)):
        options = dict(method=method, args=(P,), events=EVENTS, t_eval=t_eval, rtol=1e-8,
                       atol=1e-10)
        ours = solve_ivp(thrown, (0.0, 10.0), Y0, **options)
        if method in ("Radau", "BDF"):
            options["jac"] = thrown_jacobian
        ref = scipy_solve_ivp(thrown, (0.0, 10.0), Y0, **options)
        assert (ours.status, ours.message, ours.nfev) == (ref.status, ref.message, ref.nfev)
        assert ours.status == 1 and ours.t.shape == ref.t.shape
        exact = method not in ("Radau", "BDF")
        for a, b in zip(ours.t_events + ours.y_events, ref.t_events + ref.y_events):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-14 if exact else 1e-9, atol=1e-12)
        if exact or t_eval is not None:     # implicit: step times agree to amplified rounding
            np.testing.assert_allclose(ours.y, ref.y, rtol=1e-13 if exact else 1e-8,
                                       atol=1e-10)


def test_terminal_counts_and_directions():
    def crossing(t, y, mu):
        return y[0]
    crossing.terminal = 3
    crossing.direction = 1
    for options in ({}, dict(t_eval=np.linspace(0, 30, 61))):
        ours = solve_ivp(van_der_pol, (0, 30), [2.0, 0.0], args=(np.array([1.0]),),
                         events=crossing, **options)
        ref = scipy_solve_ivp(van_der_pol, (0, 30), [2.0, 0.0], args=(np.array([1.0]),),
                              events=crossing, **options)
        assert ours.t_events[0].shape == (3,) and ours.status == 1
        np.testing.assert_array_equal(ours.t_events[0], ref.t_events[0])
        np.testing.assert_array_equal(ours.t, ref.t)
    with pytest.raises(ValueError, match="terminal"):
        crossing.terminal = 1.5
        solve_ivp(van_der_pol, (0, 3), [2.0, 0.0], args=(np.array([1.0]),), events=crossing)


def _landing(p, y0, method, t_eval):
    res = solve_ivp(thrown, (0.0, 10.0), y0, method=method, args=(p,), events=EVENTS,
                    t_eval=t_eval, rtol=1e-10, atol=1e-12)
    (t_apex,), (t_ground,), t_height = res.t_events
    outputs = res.y[1, -1] if t_eval is None else np.sum(res.y[0])   # impact speed, or heights
    return t_ground + 2 * res.y_events[0][0, 0] + np.sum(t_height) + outputs


def _stencil(f, x, e):
    """Fourth-order central difference of f at x along e (truncation O(|e|^4))."""
    return (8 * (f(x + e) - f(x - e)) - (f(x + 2 * e) - f(x - 2 * e))) / (12 * np.linalg.norm(e))


@pytest.mark.parametrize("method", ("RK45", "DOP853", "Radau"))
@pytest.mark.parametrize("t_eval", (None, np.linspace(0.0, 4.0, 5)))
def test_event_derivatives(method, t_eval):
    """Against differences with a step large enough (1e-4) that the jumps of
    the discrete solver (decisions flipping, at the tolerance's scale) stay
    below the error of a fourth-order stencil."""
    grads = adsim.grad(lambda p, y0: _landing(p, y0, method, t_eval), argnums=(0, 1))(P, Y0)
    x = np.concatenate([P, Y0])

    def f(x):
        return _landing(x[:2], x[2:], method, t_eval)
    for i, g in enumerate(np.concatenate(grads)):
        assert g == pytest.approx(_stencil(f, x, 1e-4 * np.eye(4)[i]), rel=1e-5, abs=1e-8)
    v, w = np.array([0.3, -0.5]), np.array([0.2, 0.1])
    _, tangent = adsim.jvp(lambda p, y0: _landing(p, y0, method, t_eval), (P, Y0), (v, w))
    assert tangent == pytest.approx(grads[0] @ v + grads[1] @ w, rel=1e-9)


def test_event_structure_is_guarded():
    """A tape recorded with one crossing of y = 5 does not replay where the
    ball does not reach that height."""
    def f(y0):
        res = solve_ivp(thrown, (0.0, 10.0), y0, args=(P,), events=EVENTS, t_eval=[1.0])
        return res.t_events[1][0] + np.sum(res.t_events[2])
    tape = adsim.record(f, Y0)
    assert tape.forward(Y0 + [0.0, 0.5]) == pytest.approx(f(Y0 + [0.0, 0.5]), rel=1e-12)
    with pytest.raises(adsim.BranchChanged):
        tape.forward(np.array([0.0, 5.0]))          # apex below 5: no crossing


@pytest.mark.parametrize("method", ("RK45", "Radau"))
@pytest.mark.parametrize("t_eval", (None, np.linspace(0.0, 4.0, 5)))
def test_hessian_vector_products_through_event_times(method, t_eval):
    """Against differences of the gradient (the discrete solver's own
    derivative: its held step sizes make them agree to about 1e-5), and the
    tape's replay at another point against a fresh recording there."""
    def f(x):
        return _landing(x[:2], x[2:], method, t_eval)
    x = np.concatenate([P, Y0])
    v = np.array([0.3, -0.5, 0.2, 0.1])
    g = adsim.grad(f)
    want = (8 * (g(x + 1e-4 * v) - g(x - 1e-4 * v)) - (g(x + 2e-4 * v) - g(x - 2e-4 * v))) / 12e-4
    got = adsim.hvp(f, x, v)
    np.testing.assert_allclose(got, want, rtol=5e-5 if method == "RK45" else 5e-6,
                               atol=1e-6 * np.max(np.abs(want)))
    tape = adsim.record(f, x)
    assert tape.hvp(x, v).tobytes() == got.tobytes()
    if method == "RK45":            # (Radau's step decisions change within 1e-7)
        moved = x * (1 + 1e-7)
        np.testing.assert_allclose(tape.hvp(moved, v), adsim.record(f, moved).hvp(moved, v),
                                   rtol=1e-9)


def _decay_crossing(p):
    """exp(-k t) = c at T = -ln(c) / k; returns T^2 + k T."""
    def crossing(t, y):
        return y[0] - p[1]
    crossing.terminal = True
    sol = solve_ivp(lambda t, y: -p[0] * y, (0.0, 5.0), np.array([1.0]), events=[crossing],
                    rtol=1e-12, atol=1e-14)
    T = sol.t_events[0][0]
    return T ** 2 + p[0] * T


def test_hessian_of_an_event_time_against_its_formula():
    k, c = p = np.array([0.7, 0.3])
    T = -np.log(c) / k
    Tk, Tc = -T / k, -1.0 / (c * k)
    Tkk, Tkc, Tcc = 2 * T / k ** 2, 1.0 / (c * k ** 2), 1.0 / (c ** 2 * k)
    H = np.array([[2 * Tk ** 2 + 2 * T * Tkk + 2 * Tk + k * Tkk,
                   2 * Tk * Tc + 2 * T * Tkc + Tc + k * Tkc],
                  [0.0, 2 * Tc ** 2 + 2 * T * Tcc + k * Tcc]])
    H[1, 0] = H[0, 1]
    for v in np.eye(2):
        np.testing.assert_allclose(adsim.hvp(_decay_crossing, p, v), H @ v, rtol=1e-8)
    np.testing.assert_allclose(adsim.hessian(_decay_crossing)(p), H, rtol=1e-8)


def _event_time(p):
    def crossing(t, y):
        return y[0] - p[1]                     # reads p from the enclosing function
    crossing.terminal = True
    sol = solve_ivp(lambda t, y: -p[0] * y, (0.0, 5.0), np.array([1.0]), events=[crossing],
                    rtol=1e-10, atol=1e-12)
    return sol.t_events[0][0]


def test_events_reading_active_values_from_their_closure():
    # t* = -ln(p1) / p0
    p = np.array([0.8, 0.5])
    np.testing.assert_allclose(adsim.grad(_event_time)(p),
                               [np.log(p[1]) / p[0] ** 2, -1.0 / (p[0] * p[1])], rtol=1e-7)
