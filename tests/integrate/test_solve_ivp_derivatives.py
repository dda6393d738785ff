"""Derivatives through adsim.integrate.solve_ivp: the discrete adjoint of the
steps taken, in every mode, with respect to y0, args and the times.

References: central differences of the same solver (tight tolerances, so
that no accept/reject decision flips under the perturbation), forward
against reverse mode (equal to rounding), Hessian-vector products against
differences of gradients on a fixed step sequence, and the continuous
sensitivities for the time derivatives.
"""
import numpy as np
import pytest

import adsim
from adsim.integrate import solve_ivp
from ivp_problems import BURGERS, METHODS, VAN_DER_POL, van_der_pol

T_EVAL = np.linspace(0.5, 2.5, 5)
WEIGHTS = np.arange(1.0, 11.0).reshape(2, 5) / 10


def weighted_outputs(y0, mu, t_span, t_eval, method, **options):
    res = solve_ivp(van_der_pol, (t_span[0], t_span[1]), y0, method=method, t_eval=t_eval,
                    args=(mu,), **options)
    return np.sum(WEIGHTS * res.y ** 2)


POINT = (VAN_DER_POL["y0"], VAN_DER_POL["args"][0], np.array([0.0, 3.0]), T_EVAL)


def central_differences(f, xs, k, eps=1e-6):
    g = np.zeros(xs[k].shape)
    for i in range(xs[k].size):
        up = [x.copy() for x in xs]
        down = [x.copy() for x in xs]
        up[k].flat[i] += eps
        down[k].flat[i] -= eps
        g.flat[i] = (f(*up) - f(*down)) / (2 * eps)
    return g


@pytest.mark.parametrize("method", METHODS)
def test_gradient_against_central_differences(method):
    def f(*xs):
        return weighted_outputs(*xs, method=method, rtol=1e-9, atol=1e-12)
    grads = adsim.grad(f, argnums=(0, 1, 2, 3))(*POINT)
    for k, g in enumerate(grads):
        fd = central_differences(f, POINT, k)
        np.testing.assert_allclose(g, fd, rtol=2e-6, atol=1e-6 * np.max(np.abs(fd)))
    assert grads[2][1] == 0.0        # outputs end at 2.5 < tf: the end of t_span does not count


@pytest.mark.parametrize("method", METHODS)
def test_forward_and_reverse_modes_agree(method):
    """<grad, v> = jvp(v) and vjp(w) = w * grad, to rounding."""
    def f(*xs):
        return weighted_outputs(*xs, method=method, rtol=1e-6, atol=1e-9)
    rng = np.random.default_rng(3)
    v = tuple(rng.standard_normal(x.shape) for x in POINT)
    grads = adsim.grad(f, argnums=(0, 1, 2, 3))(*POINT)
    value, tangent = adsim.jvp(f, POINT, v)
    assert value == pytest.approx(f(*POINT), rel=1e-12)
    assert tangent == pytest.approx(sum(np.dot(g, d) for g, d in zip(grads, v)), rel=1e-11)
    value, pulled = adsim.vjp(f, POINT, np.array(2.0))
    assert value == pytest.approx(f(*POINT), rel=1e-12)
    for a, g in zip(pulled, grads):
        np.testing.assert_allclose(a, 2 * g, rtol=1e-12, atol=0)


@pytest.mark.parametrize("method", METHODS)
def test_jacobian_of_the_outputs(method):
    """Each output's adjoint enters at its time: the reverse-mode Jacobian of
    all outputs equals the forward-mode one, and its rows before an output's
    time do not depend on later ones (output j is independent of t_eval[k > j])."""
    def outputs(y0, t_eval):
        res = solve_ivp(van_der_pol, (0.0, 3.0), y0, method=method, t_eval=t_eval,
                        args=VAN_DER_POL["args"], rtol=1e-7, atol=1e-10)
        return res.y
    y0 = VAN_DER_POL["y0"]
    J_rev = adsim.jacobian(outputs, argnums=(0, 1), mode="reverse")(y0, T_EVAL)
    J_fwd = adsim.jacobian(outputs, argnums=(0, 1), mode="forward")(y0, T_EVAL)
    for a, b in zip(J_rev, J_fwd):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * np.max(np.abs(b)))
    d_times = J_rev[1]                               # shape (2, 5, 5)
    for j in range(5):
        assert np.all(d_times[:, j, np.arange(5) != j] == 0)
        assert np.all(d_times[:, j, j] != 0)


def test_time_derivatives_follow_the_solution():
    """d y(t_j) / d t_j is the interpolant's slope, close to f(t_j, y_j); the
    end of the interval moves the last output only through the final step."""
    def outputs(t_eval, t_span):
        res = solve_ivp(van_der_pol, (t_span[0], t_span[1]), VAN_DER_POL["y0"],
                        t_eval=t_eval, args=VAN_DER_POL["args"], rtol=1e-10, atol=1e-12)
        return res.y
    t_span = np.array([0.0, 2.5])
    J_eval, J_span = adsim.jacobian(outputs, argnums=(0, 1))(T_EVAL, t_span)
    y = outputs(T_EVAL, t_span)
    slopes = np.stack([van_der_pol(t, y[:, j], VAN_DER_POL["args"][0])
                       for j, t in enumerate(T_EVAL)], axis=1)
    np.testing.assert_allclose(np.einsum("ijj->ij", J_eval), slopes, rtol=1e-5, atol=1e-6)
    # shifting t0 moves the whole solution back in time: dy/dt0 = -f(t, y) for an
    # autonomous system (to the integration tolerance)
    np.testing.assert_allclose(J_span[:, :, 0], -slopes, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_every_step_mode_agrees_with_checkpointed_mode(method):
    """t_eval=None records every step; t_eval=[tf] checkpoints them: the same
    steps, so the same derivatives of the final state."""
    problem = BURGERS
    u0, (nu, dx) = problem["y0"], problem["args"]

    def final_energy(u0, nu, t_eval):
        res = solve_ivp(problem["fun"], problem["t_span"], u0, method=method, t_eval=t_eval,
                        args=(nu, dx), rtol=1e-5, atol=1e-8)
        return np.sum(res.y[:, -1] ** 2)
    every = adsim.grad(lambda u, n: final_energy(u, n, None), argnums=(0, 1))(u0, nu)
    checkpointed = adsim.grad(lambda u, n: final_energy(u, n, [1.0]), argnums=(0, 1))(u0, nu)
    for a, b in zip(every, checkpointed):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)


def _fixed_steps(method):
    """A step sequence that cannot change: every step is clamped to max_step
    (loose tolerances let the controller ask for ten times more)."""
    return dict(method=method, rtol=1.0, atol=1.0, first_step=0.05, max_step=0.05)


@pytest.mark.parametrize("method", METHODS)
def test_hvp_against_differences_of_gradients(method):
    options = _fixed_steps(method)

    def f(y0, mu):
        return weighted_outputs(y0, mu, np.array([0.0, 3.0]), T_EVAL, **options)
    y0, mu = POINT[0], POINT[1]
    v = np.array([0.3, -0.7])
    hv = adsim.hvp(f, y0, v, mu)
    eps = 1e-5
    grad = adsim.grad(f)
    difference = (grad(y0 + eps * v, mu) - grad(y0 - eps * v, mu)) / (2 * eps)
    np.testing.assert_allclose(hv, difference, rtol=1e-7, atol=1e-9)
    # and along the parameter, with both arguments differentiated
    hv_mu = adsim.hvp(lambda x: f(x[:2], x[2:]), np.concatenate([y0, mu]),
                      np.array([0.0, 0.0, 1.0]))
    grad_x = adsim.grad(lambda x: f(x[:2], x[2:]))
    x = np.concatenate([y0, mu])
    e = np.array([0.0, 0.0, eps])
    np.testing.assert_allclose(hv_mu, (grad_x(x + e) - grad_x(x - e)) / (2 * eps),
                               rtol=1e-7, atol=1e-9)


def test_captured_parameters():
    """A right-hand side that reads an active parameter from its closure
    differentiates like the args form: with t_eval (steps recorded apart
    from the enclosing recording) the captured value becomes a loop input;
    without t_eval it is recorded with the steps."""
    y0, mu = POINT[0], POINT[1]

    def through_args(mu, t_eval):
        return np.sum(solve_ivp(van_der_pol, (0, 2), y0, t_eval=t_eval, args=(mu,)).y[:, -1])

    def captured(mu, t_eval):
        def fun(t, y):
            return [y[1], mu[0] * (1 - y[0] ** 2) * y[1] - y[0]]
        return np.sum(solve_ivp(fun, (0, 2), y0, t_eval=t_eval).y[:, -1])
    np.testing.assert_allclose(adsim.grad(captured)(mu, [1.0, 2.0]),
                               adsim.grad(through_args)(mu, [1.0, 2.0]), rtol=1e-12)
    np.testing.assert_allclose(adsim.grad(captured)(mu, None),
                               adsim.grad(through_args)(mu, [2.0]), rtol=1e-9)
