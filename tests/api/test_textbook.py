"""Worked examples from the literature, with their printed values and the
analytic derivatives they come from.

References
----------
A. Griewank and A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008:
the lighthouse-free running example f = ln x1 + x1 x2 - sin x2 (ch. 1/3) and
Speelpenning's product (ch. 3).
A. G. Baydin et al., Automatic differentiation in machine learning: a
survey, JMLR 18(153), 2018: f = ln x1 + x1 x2 - sin x2 at (2, 5) (Table 2,
Figure 2). The logistic example y = 1/(1 + exp(x0 x1 + sin x0)) is the
classic computational-graph exercise.
"""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, check_tape


def griewank(x):
    return np.log(x[0]) + x[0] * x[1] - np.sin(x[1])


def griewank_two_args(x1, x2):
    return np.sum(np.log(x1) + x1 * x2 - np.sin(x2))


def logistic(x):
    return 1.0 / (1.0 + np.exp(x[0] * x[1] + np.sin(x[0])))


def test_griewank_value_and_gradient_at_2_5():
    value, g = adsim.value_and_grad(griewank)(np.array([2.0, 5.0]))
    assert round(value, 3) == 11.652
    assert np.array_equal(np.round(g, 3), [5.5, 1.716])
    # the exact values: f = ln 2 + 10 - sin 5, grad = (1/x1 + x2, x1 - cos x2)
    assert_close(value, np.log(2.0) + 10.0 - np.sin(5.0), 1e-15, 0)
    assert_close(g, [0.5 + 5.0, 2.0 - np.cos(5.0)], 1e-15, 0)


def test_griewank_forward_mode_and_hessian():
    x = np.array([2.0, 5.0])
    _, dx1 = adsim.jvp(griewank, x, np.array([1.0, 0.0]))
    _, dx2 = adsim.jvp(griewank, x, np.array([0.0, 1.0]))
    assert_close([dx1, dx2], [5.5, 2.0 - np.cos(5.0)], 1e-15, 0)
    # Hessian [[-1/x1^2, 1], [1, sin x2]]
    assert_close(adsim.hessian(griewank)(x), [[-0.25, 1.0], [1.0, np.sin(5.0)]], 1e-15, 1e-16)


def test_griewank_two_arguments():
    g1, g2 = adsim.grad(griewank_two_args, argnums=(0, 1))(np.array([2.0]), np.array([5.0]))
    assert_close(g1, [5.5], 1e-15, 0)
    assert_close(g2, [2.0 - np.cos(5.0)], 1e-15, 0)


def test_griewank_tape_is_the_evaluation_trace():
    """The recorded trace has the textbook's elementary operations."""
    tape = adsim.record(griewank, np.array([2.0, 5.0]))
    names = {adsim.ops.BY_CODE[int(c)].name for c in tape.op_codes()}
    assert {"LOG", "MUL", "SIN", "ADD", "SUB"} <= names
    check_tape(griewank, [np.array([2.0, 5.0])])


def test_logistic_gradient_at_1_1():
    g = adsim.grad(logistic)(np.array([1.0, 1.0]))
    assert np.array_equal(np.round(g, 6), [-0.181974, -0.118142])
    # y' = -e^s / (1 + e^s)^2 times ds/dx = (x1 + cos x0, x0), s = x0 x1 + sin x0
    s = 1.0 + np.sin(1.0)
    dyds = -np.exp(s) / (1.0 + np.exp(s)) ** 2
    assert_close(g, [dyds * (1.0 + np.cos(1.0)), dyds * 1.0], 1e-14, 0)
    check_tape(logistic, [np.array([1.0, 1.0])])


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_speelpenning_product(n):
    """f = prod x_i: gradient prod_{j != i} x_j, Hessian prod_{k != i, j} x_k off the diagonal."""
    rng = np.random.default_rng(n)
    x = rng.uniform(0.5, 1.5, size=n)
    p = np.prod(x)
    assert_close(adsim.grad(np.prod)(x), p / x, 1e-14, 0)
    H = p / np.outer(x, x)
    np.fill_diagonal(H, 0.0)
    assert_close(adsim.hessian(np.prod)(x), H, 1e-14, 1e-300)
    # explicit loop, as the textbook writes it
    def speelpenning(z):
        y = z[0]
        for i in range(1, n):
            y = y * z[i]
        return y
    assert_close(adsim.grad(speelpenning)(x), p / x, 1e-14, 0)
