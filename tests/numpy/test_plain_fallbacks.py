"""Values without derivatives meet functions adsim has no rule for: constants
made inside the function, adsim.value results. They run on plain values
(frozen under guards); values with derivatives still raise. Also Python's
rounding builtins and the ndarray methods users reach for."""
import math

import numpy as np
import pytest

import adsim as ad
from fdcheck import fd_jacobian


def check(f, x):
    value, g = ad.value_and_grad(f)(x)
    assert np.isclose(value, f(x.copy()), rtol=1e-13)
    np.testing.assert_allclose(g, fd_jacobian(f, [x]).reshape(x.shape), rtol=1e-7, atol=1e-9)


def test_functions_without_rules_run_on_constants():
    def f(x):
        w = np.zeros(3)
        w[0] = 1.0
        k = np.sort_complex(w).size                 # no rule: runs on the constant
        F = np.fft.fft(w).real                      # fft of a constant
        M = np.linalg.inv(np.eye(3) * 2.0 + w[:, None])
        nz = np.nonzero(w)[0]
        return np.sum(M @ x) * k + np.sum(F * x) + np.sum(x[nz] ** 2) + np.isclose(w, 1.0) @ x
    check(f, np.array([0.3, 1.7, 2.2]))


def test_functions_without_rules_follow_value_results_at_new_points():
    def f(x):
        s = np.ptp(np.sort_complex(ad.value(x)).real)  # guarded: a new point records again
        return np.sum((x - s) ** 2)
    g = ad.grad(f)
    for x in (np.array([0.3, 1.7, 2.2]), np.array([3.0, -1.0, 0.5])):
        np.testing.assert_allclose(g(x), 2.0 * (x - np.ptp(x)))


def test_functions_without_rules_refuse_values_with_derivatives():
    with pytest.raises(ad.UnsupportedOperation, match="numpy.sort_complex"):
        ad.grad(lambda x: np.sum(np.sort_complex(x).real))(np.ones(3))


def test_in_place_writers_fill_diagonal_and_copyto():
    def f(x):
        A = np.zeros((3, 3))
        np.fill_diagonal(A, x)
        np.copyto(A[0], x[::-1] * 2.0)
        B = np.eye(3)
        np.fill_diagonal(B, 5.0)
        return np.sum(A * A) + np.sum(B @ x)
    check(f, np.array([0.3, 1.7, 2.2]))


def test_put_family_writes_into_the_workspace_not_into_a_copy():
    def f(x):
        w = np.zeros(3)
        np.put(w, [0], 1.0)
        return np.sum(w * x)
    np.testing.assert_array_equal(ad.grad(f)(np.ones(3)), [1.0, 0.0, 0.0])


def test_rounding_builtins_and_methods():
    def f(x):
        r = round(x[0]) + math.floor(x[1]) + math.ceil(x[2]) + math.trunc(x[0])
        return (r * np.sum(x) + (x > 1).any() + x.all() + np.sum(x.repeat(2))
                + np.sum(x.take([0, 0])) + round(x[1], 1) * x[2])
    check(f, np.array([0.3, 1.74, 2.2]))
