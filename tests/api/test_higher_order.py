"""Derivatives of order three and more: nested derivatives whose own rules
are recorded (adsim/_nesting/transcribe.py). Each order is checked against central
differences of the order below it, which the compiled second-order sweeps
give; every op's recorded adjoint rule is exercised through the op table."""
import numpy as np
import pytest
import scipy.special as sc

import adsim
from fdcheck import assert_close
from opcases import BINARY_CASES, FD_KINKS, UNARY_CASES, sample
from adsim import ops

BY_NAME = ops.BY_NAME


def central_difference(g, x, v, h=1e-5):
    return (g(x + h * v) - g(x - h * v)) / (2 * h)


def third_order(f, x, w, v):
    """grad of (hvp of f along w) . v, two ways: hvp through a nested grad
    (a second-order sweep that records the nested rule) and grad∘grad∘grad;
    with the reference from differences of the second order."""
    grad_w = lambda y: adsim.grad(f)(y) @ w  # noqa: E731
    by_hvp = adsim.hvp(grad_w, x, v)
    by_grads = adsim.grad(lambda y: adsim.grad(grad_w)(y) @ v)(x)
    reference = central_difference(adsim.grad(grad_w), x, v)
    return by_hvp, by_grads, reference


def tanh_derivatives(t, order):
    """d^k tanh / dx^k as a polynomial in t = tanh x: p' = p'(t) (1 - t^2)."""
    p = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(order):
        p = p.deriv() * np.polynomial.Polynomial([1.0, 0.0, -1.0])
    return p(t)


def test_tanh_to_order_six():
    x = np.linspace(-2.0, 2.0, 7)
    f = lambda y: np.sum(np.tanh(y))  # noqa: E731
    for order in range(1, 7):
        g = adsim.grad(f)
        assert_close(g(x), tanh_derivatives(np.tanh(x), order), 1e-12, 1e-12,
                     what=f"order {order}")
        f = (lambda g: lambda y: np.sum(g(y)))(g)


RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 4))
B = RNG.normal(size=4)


def _in_place(x):
    y = np.zeros(4)
    y[1:] = x[:-1] * x[1:]
    y[0] = x[0] ** 3
    return np.sum(y ** 2)


PROGRAMS = {
    "elementwise": lambda x: np.sum(np.sin(x) * x[::-1]) + np.log1p(x @ x),
    "branches": lambda x: (np.sum(np.where(x > 0, np.sqrt(np.abs(x)) * x, x ** 2))
                           + np.sum(np.maximum(x, 0.3) ** 3) + np.sum(np.abs(x) ** 3)),
    "cumsum, matmul": lambda x: np.sum(np.tanh(np.cumsum(A @ x) / 4) * np.exp(x)),
    "quadratic form": lambda x: np.tanh(x @ (A @ x) / 4) * np.sum(np.exp(x)),
    "in place": _in_place,
    "scipy.special": lambda x: np.sum(sc.gammaln(x + 2)) + sc.logsumexp(x * x),
    "solve": lambda x: np.sum(np.linalg.solve(A @ A.T + np.diag(x * x + 1), B) ** 2),
    "powers": lambda x: (np.sum((x + 2) ** (x + 2)) + np.sum(np.arctan2(x, 2.0 + x ** 2))
                         + np.sum(np.hypot(x, 1.0 + x))),
    "max, outer": lambda x: np.max(x * np.sin(x)) ** 2 + np.sum(np.outer(x, x) ** 2),
    "quotients, prod": lambda x: np.sum(x / (3.0 + x ** 2)) + np.prod(x + 3),
    "reductions": lambda x: np.sum(np.mean(np.reshape(np.tile(x, 3), (3, 4)) ** 3, axis=0)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_third_derivatives_of_programs(name):
    x = np.array([0.35, -0.7, 1.1, 0.5])
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    by_hvp, by_grads, reference = third_order(PROGRAMS[name], x, w, v)
    scale = 1.0 + np.max(np.abs(reference))
    assert_close(by_hvp, reference, 1e-6, 1e-6 * scale, what="hvp through grad")
    assert_close(by_grads, by_hvp, 1e-12, 1e-12 * scale, what="grad of grad of grad")


@pytest.mark.parametrize("name", sorted(UNARY_CASES))
def test_every_unary_rule_recorded(name):
    spec = BY_NAME[name]
    rng = np.random.default_rng(3)
    for label, op in UNARY_CASES[name]:
        x = sample(rng, spec, [(3,)])[0]
        f = lambda y: np.sum(op(y) * np.array([1.0, 0.5, -0.25]))  # noqa: E731
        g2 = adsim.grad(lambda y: adsim.grad(f)(y) @ np.ones(3))
        g3 = adsim.grad(lambda y: g2(y) @ np.ones(3))
        reference = central_difference(g2, x, np.ones(3))
        # the third derivative of an elementwise op along ones: elementwise
        assert_close(g3(x), reference, 1e-5, 1e-6 * (1 + np.max(np.abs(reference))),
                     what=f"{label}: third derivative")


@pytest.mark.parametrize("name", sorted(BINARY_CASES))
def test_every_binary_rule_recorded(name):
    spec = BY_NAME[name]
    rng = np.random.default_rng(5)
    _, op = BINARY_CASES[name][0]
    a, b = sample(rng, spec, [(3,), (3,)])
    if name in FD_KINKS:
        assert np.all(FD_KINKS[name](a, b) > 1e-3)
    x = np.concatenate([a, b])
    f = lambda y: np.sum(op(y[:3], y[3:]) * np.array([1.0, 0.5, -0.25]))  # noqa: E731
    w, v = rng.normal(size=6), rng.normal(size=6)
    by_hvp, by_grads, reference = third_order(f, x, w, v)
    scale = 1.0 + np.max(np.abs(reference))
    assert_close(by_hvp, reference, 1e-5, 1e-6 * scale, what=f"{name}: hvp through grad")
    assert_close(by_grads, by_hvp, 1e-11, 1e-12 * scale, what=f"{name}: three grads")


def test_jacobians_of_jacobians_of_vector_functions():
    def F(y):
        return np.array([y[0] * y[1] ** 2, np.sin(y[0]) + y[1] ** 3])
    x = np.array([0.4, -1.2])
    J3 = adsim.jacobian(adsim.jacobian(adsim.jacobian(F)))(x)
    assert J3.shape == (2, 2, 2, 2)
    d2 = adsim.jacobian(adsim.jacobian(F))
    for k in range(2):
        e = np.zeros(2)
        e[k] = 1.0
        assert_close(J3[..., k], central_difference(d2, x, e), 1e-7, 1e-8)


def test_closures_over_outer_values_at_third_order():
    # d^2/dx^2 [x * d/dy (x y^2) at y = 1] = d^2/dx^2 (2 x^2) = 4
    def f(x):
        return x * adsim.grad(lambda y: x * y ** 2)(np.array(1.0))
    assert adsim.grad(adsim.grad(f))(np.array(0.7)) == pytest.approx(4.0, abs=1e-12)
    # and one more: d^3/dx^3 [x^2 * d/dy (x y^3) at y = 2] = d^3/dx^3 (12 x^3) = 72
    def g(x):
        return x ** 2 * adsim.grad(lambda y: x * y ** 3)(np.array(2.0))
    assert adsim.grad(adsim.grad(adsim.grad(g)))(np.array(0.3)) == pytest.approx(72.0, rel=1e-12)


def test_a_branch_taken_elsewhere_is_recorded_again():
    f = lambda y: np.sum(np.where(y > 0, y ** 4, -y ** 5))  # noqa: E731
    g3 = adsim.grad(lambda y: np.sum(adsim.grad(lambda z: np.sum(adsim.grad(f)(z)))(y)))
    x = np.array([0.5, -0.5])
    assert_close(g3(x), np.array([24 * 0.5, -60 * 0.25]), 1e-12, 1e-12)
    assert_close(g3(-x), np.array([-60 * 0.25, 24 * 0.5]), 1e-12, 1e-12)


def test_a_zero_adjoint_stays_zero_at_third_order():
    # sqrt is not taken at x = -1: its infinite slopes must not make NaN
    f = lambda y: np.sum(np.where(y > 0, np.sqrt(np.abs(y)) ** 3, y ** 4))  # noqa: E731
    x = np.array([-1.0, 0.25])
    g3 = adsim.grad(lambda y: np.sum(adsim.grad(lambda z: np.sum(adsim.grad(f)(z)))(y)))(x)
    assert_close(g3, np.array([24 * -1.0, 3 * 0.5 * 0.5 * -0.5 * 0.25 ** -1.5]), 1e-12, 1e-12)


def test_explicit_tapes_of_nested_gradients_replay_at_new_points():
    inner = adsim.grad(lambda y: np.sum(np.exp(y) * y ** 3))
    tape = adsim.record(lambda y: np.sum(inner(y) ** 2), np.array([0.2, 0.4]))
    x = np.array([0.5, -0.3])
    g = adsim.grad(lambda y: np.sum(inner(y) ** 2))
    assert_close(tape.hvp(x, np.array([1.0, 2.0])),
                 central_difference(g, x, np.array([1.0, 2.0])), 1e-7, 1e-8)


def test_loops_inside_a_derivative_of_order_three_are_refused_clearly():
    def step(y, p):
        return y + 0.1 * np.sin(y) * p
    inner = adsim.grad(lambda p: np.sum(adsim.checkpoint_loop(step, np.ones(2), 5, (p,))))
    f = lambda p: np.sum(inner(p) ** 2)  # noqa: E731
    p = np.array([0.3, 0.6])
    assert np.all(np.isfinite(adsim.grad(f)(p)))
    with pytest.raises(adsim.UnsupportedOperation, match="order three"):
        adsim.hvp(f, p, np.ones(2))


@pytest.mark.parametrize("f, x, want", [
    (lambda x: x * np.exp(x), 0.0, 3.0),
    (lambda x: (x - 1.0) * np.exp(x), 1.0, 3.0 * np.e),
    (lambda x: x * np.exp(x * x), 0.0, 6.0),
    (lambda x: x * np.cosh(x), 0.0, 3.0),
    (lambda x: x * np.log1p(x * x), 0.0, 6.0),
], ids=["x exp x", "(x-1) exp x", "x exp x^2", "x cosh x", "x log1p x^2"])
def test_a_factor_that_is_zero_here_keeps_its_derivatives(f, x, want):
    """An adjoint that happens to be 0 at the point (not structurally) still
    has derivatives: the third derivative of x e^x at 0 is 3, not 1."""
    third = adsim.grad(adsim.grad(adsim.grad(f)))(np.array(x))
    assert third == pytest.approx(want, rel=1e-12)
    fourth = adsim.grad(adsim.grad(adsim.grad(adsim.grad(lambda x: np.exp(x * x)))))
    assert fourth(np.array(0.0)) == pytest.approx(12.0, rel=1e-12)


def test_power_derivatives_where_the_exponent_is_zero():
    T = adsim.jacobian(adsim.hessian(lambda z: z[0] ** z[1]))(np.array([2.0, 0.0]))
    assert T[0, 1, 1] == pytest.approx(np.log(2.0), rel=1e-12)    # d3/da db^2 of a^b at b = 0
    assert T[0, 0, 1] == pytest.approx(-0.25, rel=1e-12)          # d3/da^2 db: -1/a^2
