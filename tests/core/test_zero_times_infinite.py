"""A zero factor of the chain rule makes a zero contribution whichever side
it is on (adsim/_opcodes.pxd, chain): forward and reverse mode meet the same
factors in opposite orders and must give the same derivative at points
where a partial is infinite and the other factor zero."""
import numpy as np
import pytest

import adsim

V = np.array([1.0, 2.0, 3.0])


def _grad_dot_v_and_jvp(f, x, v):
    g = adsim.grad(f)(x)
    _, t = adsim.jvp(f, (x,), (v,))
    return float(g @ v), float(t), g


@pytest.mark.parametrize("f", [
    lambda x: np.linalg.norm(x),
    lambda x: np.sqrt(np.sum(x ** 2)),
    lambda x: np.sqrt(x @ x),
    lambda x: np.sqrt(np.dot(x, x)) + np.linalg.norm(x[:2]),
    lambda x: np.hypot(x[0], np.hypot(x[1], x[2])),      # its partials a/y: 0/0 there
], ids=["norm", "sqrt-sum-squares", "sqrt-matmul", "sqrt-dot-and-norm", "hypot"])
def test_a_norm_at_zero_has_the_zero_subgradient_in_every_mode(f):
    x = np.zeros(3)
    reverse, forward, g = _grad_dot_v_and_jvp(f, x, V)
    assert np.all(np.isfinite(g)) and reverse == forward == 0.0
    tape = adsim.record(f, x)
    assert np.array_equal(tape.gradient(x), g)
    assert float(tape.jvp(x, V)[1]) == 0.0
    np.testing.assert_array_equal(tape.jacobian(x), g)
    # away from zero the ordinary derivative
    x1 = np.array([0.3, -0.4, 0.0])
    reverse, forward, g = _grad_dot_v_and_jvp(f, x1, V)
    assert reverse == pytest.approx(forward, rel=1e-14)
    h = 1e-7
    differences = [(f(x1 + h * e) - f(x1 - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(g, differences, rtol=1e-7, atol=1e-8)


def test_an_overflowed_log_sum_exp_gives_the_same_derivative_in_every_mode():
    def naive(x):
        return np.log(np.sum(np.exp(x)))
    x = np.array([1000.0, 1.0])
    with np.errstate(over="ignore"):
        reverse, forward, _ = _grad_dot_v_and_jvp(naive, x, np.array([1.0, 1.0]))
    assert reverse == forward


def test_a_zero_tangent_through_an_infinite_slope_stays_zero():
    # d sqrt(x) at x = 0 along a direction that does not move x[0]
    f = lambda x: np.sqrt(x)
    J = adsim.jacobian(f)(np.array([0.0, 4.0]))
    assert J[1, 1] == 0.25 and J[0, 1] == 0.0 and J[1, 0] == 0.0


def test_an_infinite_adjoint_through_a_matrix_product_meets_zeros():
    # the adjoint of sqrt at 0 is infinite; it reaches M @ M.T whose factors are 0
    f = lambda M: np.sqrt((M @ M.T)[0, 0]) + np.sum(M)
    np.testing.assert_array_equal(adsim.grad(f)(np.zeros((2, 2))), np.ones((2, 2)))


def _forward_and_reverse(f, x):
    tape = adsim.record(f, x)
    return tape.jacobian(x, mode="forward"), tape.jacobian(x, mode="reverse")


@pytest.mark.parametrize("f, x", [
    (lambda x: np.sum(np.exp(x) * 0.0 + x), [1000.0, 1.0]),     # exp overflowing, times 0
    (lambda x: np.sum(0.0 * np.sqrt(x)), [0.0, 1.0]),            # the slope of sqrt at 0
    (lambda x: np.sum(x / np.inf), [0.0, 1.0]),                  # the slope 1/inf = 0
], ids=["exp-times-0", "0-times-sqrt", "over-inf"])
def test_a_zero_constant_factor_zeroes_an_infinite_tangent(f, x):
    with np.errstate(all="ignore"):
        forward, reverse = _forward_and_reverse(f, np.array(x))
    np.testing.assert_array_equal(forward, reverse)
    assert np.all(np.isfinite(forward))


A_INF = np.array([[np.inf, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 2.0, 1.0]])
W0 = np.array([0.0, 1.0, 1.0])


@pytest.mark.parametrize("f, x", [
    # a zero tangent meets an infinite entry of the matrix (forward mode)
    (lambda x: x @ np.array([0.0, 1.0, 2.0]), [np.inf, 1.0, 2.0]),
    (lambda x: np.einsum("i,i->", x, x), [np.inf, 0.0, 0.0]),
    (lambda x: np.sum(np.outer(x, x) @ np.eye(3)), [np.inf, 1.0, 0.0]),
    # a zero adjoint meets an infinite entry (reverse mode)
    (lambda x: np.sum((A_INF @ x) * W0), [1.0, 2.0, 0.0]),
    (lambda x: np.sum((x @ A_INF.T) ** 2 * W0), [1.0, 2.0, 0.0]),
    (lambda x: np.sum((np.outer(x, x) @ A_INF) ** 2 * W0[:, None]), [1.0, 2.0, 0.0]),
], ids=["dot", "einsum", "outer-matmul", "A-x", "x-A", "matmul"])
def test_matrix_products_with_an_infinite_entry_agree_forward_and_reverse(f, x):
    with np.errstate(all="ignore"):
        x = np.array(x)
        forward, reverse = _forward_and_reverse(f, x)
        np.testing.assert_array_equal(forward, reverse)
        v = np.array([1.0, -2.0, 3.0])
        tape = adsim.record(f, x)
        hv = tape.hvp(x, v)
        # the Hessian-vector product as the forward derivative of the gradient
        np.testing.assert_array_equal(hv, adsim.jvp(adsim.grad(f), (x,), (v,))[1])
