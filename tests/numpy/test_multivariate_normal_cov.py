"""rng.multivariate_normal(mean, cov) with an active covariance (and mean):
NumPy's draws (bit for bit for the 'eigh' and 'cholesky' factorisations, to
the last bit or two for the SVD, whose product adsim computes with another
operand layout), their pathwise derivatives with the normal variates held
fixed, through the factorisation NumPy uses, in every mode
(fdcheck.check_tape), and replays at new covariances."""
import numpy as np
import pytest

import adsim
from adsim.errors import UndefinedDerivative
from fdcheck import check_tape

C = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
X0 = np.array([0.3, -0.4, 0.2])


def _draws(kind, method=None, size=4, mean_active=True, seed=0):
    def f(x):
        rng = np.random.default_rng(seed) if kind == "Generator" else np.random.RandomState(seed)
        L = np.array([[1.0, 0.0, 0.0], [x[0], 1.0, 0.0], [0.2, x[1], 1.0]])
        cov = C * (1.0 + x[2]) + L @ L.T                # a covariance model's parameters
        mean = x if mean_active else np.zeros(3)
        options = {} if method is None else {"method": method}
        return rng.multivariate_normal(mean, cov, size=size, **options)
    return f


CASES = {
    "Generator, svd": (_draws("Generator"), 1e-15),
    "Generator, eigh": (_draws("Generator", "eigh"), 0.0),
    "Generator, cholesky": (_draws("Generator", "cholesky"), 0.0),
    "RandomState": (_draws("RandomState"), 1e-15),
    "size (2, 2)": (_draws("Generator", size=(2, 2)), 1e-15),
    "one draw": (_draws("Generator", size=None), 1e-15),
    "plain mean": (_draws("Generator", mean_active=False), 1e-15),
}


@pytest.mark.parametrize("name", list(CASES))
def test_draws_and_their_derivatives(name):
    f, rtol = CASES[name]
    tape = check_tape(f, [X0], value_rtol=rtol, value_atol=1e-15)
    other = X0 + np.array([0.1, 0.05, -0.1])
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-14, atol=1e-15)


def test_the_generator_is_left_where_numpy_leaves_it():
    def f(x):
        rng = np.random.default_rng(5)
        first = rng.multivariate_normal(np.zeros(2), np.diag(1.0 + x ** 2), size=3)
        return np.concatenate([first.ravel(), rng.standard_normal(2)])
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(adsim.record(f, x).forward(x), f(x), rtol=1e-15, atol=1e-15)


def test_an_isotropic_covariance_has_no_svd_derivative_but_cholesky_has():
    def svd_draw(s):
        return np.random.default_rng(0).multivariate_normal(np.zeros(2), s[0] ** 2 * np.eye(2))

    def cholesky_draw(s):
        return np.random.default_rng(0).multivariate_normal(np.zeros(2), s[0] ** 2 * np.eye(2),
                                                            method="cholesky")
    with pytest.raises(UndefinedDerivative):
        adsim.jacobian(svd_draw)(np.array([1.5]))
    check_tape(cholesky_draw, [np.array([1.5])], value_rtol=0.0, value_atol=0.0)


def test_a_constant_covariance_made_inside_is_drawn_with_as_numpy_does():
    def f(m):
        cov = np.array([[2.0, 0.3], [0.3, 1.0]])        # active, without derivative
        return np.random.default_rng(1).multivariate_normal(m, cov, size=3)
    m = np.array([0.5, -0.5])
    check_tape(f, [m], value_rtol=0.0, value_atol=0.0)
