"""Values without derivative (constants made in the function, adsim.value
results, data arguments) run no derivative rules: an infinite partial
derivative of such a value (sqrt at 0, arcsin at 1, inf constants) never
meets a zero and never turns into NaN, in any mode."""
import numpy as np
import pytest

import adsim as ad

X = np.array([0.3, 1.2, 0.7])


def test_stop_gradient_through_an_infinite_partial():
    f = lambda x: np.sum(x * np.sqrt(ad.value(x) - 0.3))        # noqa: E731
    x = np.array([0.3, 1.2])
    np.testing.assert_array_equal(np.isfinite(ad.grad(f)(x)), [True, True])
    np.testing.assert_allclose(ad.grad(f)(x), np.sqrt(x - 0.3))
    np.testing.assert_allclose(ad.jvp(f, x, np.ones(2))[1], np.sum(np.sqrt(x - 0.3)))
    np.testing.assert_allclose(ad.hvp(f, x, np.ones(2)), 0.0)


def test_constants_with_infinite_partials_made_inside_the_function():
    def f(x):
        d = np.ones(3) * np.inf                  # an "infinity" initialisation
        s = np.sqrt(np.zeros(3)) + np.arcsin(np.ones(3))
        return np.sum(np.minimum(d, x ** 2)) + s @ x
    s = np.full(3, np.pi / 2)
    np.testing.assert_allclose(ad.grad(f)(X), 2 * X + s)
    np.testing.assert_allclose(ad.jvp(f, X, np.ones(3))[1], np.sum(2 * X + s))
    np.testing.assert_allclose(ad.hessian(f)(X), 2 * np.eye(3))


def test_data_arguments_with_infinite_partials():
    f = lambda x, d: np.sum(x ** 2 * np.sqrt(d))                  # noqa: E731
    d = np.array([0.0, 4.0, 1.0])
    np.testing.assert_allclose(ad.hessian(f)(X, d), np.diag(2 * np.sqrt(d)))
    np.testing.assert_allclose(ad.hvp(f, X, np.ones(3), d), 2 * np.sqrt(d))
    np.testing.assert_allclose(ad.jvp(lambda x: f(x, d), X, np.ones(3))[1],
                               np.sum(2 * X * np.sqrt(d)))


def test_passive_ops_are_flagged_on_the_tape():
    def f(x):
        c = np.sqrt(np.arange(3.0) + 1.0) * np.ones(3)           # constants only
        return np.sum(x * c)
    tape = ad.record(f, X)
    passive = [k for k in range(len(tape)) if tape.op_flags(k) & 8]
    assert passive, "no op of the constant chain was flagged passive"
    np.testing.assert_allclose(tape.gradient(X), np.sqrt(np.arange(3.0) + 1.0))


def _loss_with_unruled_data_functions(x, d):
    # np.sort_complex has no derivative rule: fine on data
    return np.sum(x ** 2) * np.ptp(np.sort_complex(d).real) + np.sort_complex(d)[-1].real * x[0]


def _expected_gradient(x, d):
    return 2 * x * np.ptp(d) + np.array([np.max(d), 0.0])


def test_data_arguments_reach_functions_without_rules_and_stay_current():
    g = ad.grad(_loss_with_unruled_data_functions)
    x = np.array([1.0, 2.0])
    for d in (np.array([3.0, 1.0, 2.0, 3.0]), np.array([5.0, 1.0, 2.0, 3.0]),
              np.array([5.0, 1.0, 2.0, 3.0])):
        np.testing.assert_allclose(g(x, d), _expected_gradient(x, d))
    v = np.array([1.0, -1.0])
    d = np.array([5.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(ad.hvp(lambda x: _loss_with_unruled_data_functions(x, d), x, v),
                               2 * v * np.ptp(d))


def test_differentiating_the_data_argument_still_refuses_a_function_without_rule():
    g = ad.grad(_loss_with_unruled_data_functions, argnums=(0, 1))
    with pytest.raises(ad.UnsupportedOperation, match="sort_complex"):
        g(np.array([1.0, 2.0]), np.array([3.0, 1.0, 2.0]))


def test_a_nested_derivative_keeps_the_mixed_partials_of_its_data_inputs():
    # g(y, c) = sum(y sin c)**2 has d/dy = 2 sin(c) (y.sin c); the outer
    # function differentiates through c, which the inner one treats as data
    # (sin(c) alone must keep its derivative rule on the inner tape)
    inner = ad.grad(lambda y, c: np.sum(y * np.sin(c)) ** 2)
    y = np.array([1.0, 2.0])

    def outer(c):
        return np.sum(inner(y, c))
    c = np.array([0.5, -1.5])
    s, dot = np.sin(c), np.dot(y, np.sin(c))
    # outer(c) = 2 (y.s) sum(s); gradient 2 cos(c) (y sum(s) + y.s)
    expected = 2 * np.cos(c) * (y * np.sum(s) + dot)
    np.testing.assert_allclose(ad.grad(outer)(c), expected)
