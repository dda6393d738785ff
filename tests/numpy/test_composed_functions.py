"""NumPy functions adsim writes with other NumPy functions (adsim/_np/
composed.py): values equal NumPy's and derivatives match central
differences in every mode."""
import numpy as np
import pytest

import adsim as ad
from adsim.testing import check_grads

RNG = np.random.default_rng(11)
A = RNG.standard_normal((3, 4))
W4 = RNG.uniform(0.5, 2.0, 4)
NANS = np.array([0.3, np.nan, -1.2, 2.0])

CASES = {
    "average": (lambda x: np.average(x.reshape(3, 4), axis=1, weights=W4), A.ravel()),
    "average returned": (lambda x: np.concatenate(np.average(
        x.reshape(3, 4), axis=0, weights=x.reshape(3, 4) ** 2 + 1.0, returned=True)), A.ravel()),
    "average plain": (lambda x: np.average(x), A.ravel()),
    "nansum": (lambda x: np.nansum(x * NANS), A[0]),
    "nanmean": (lambda x: np.nanmean((x * NANS).reshape(2, 2), axis=0), A[0]),
    "cross 3": (lambda x: np.cross(x[:3], x[3:6]), A.ravel()[:6]),
    "cross stacked": (lambda x: np.cross(x.reshape(2, 3), x[::-1].reshape(2, 3)), A.ravel()[:6]),
    "ediff1d": (lambda x: np.ediff1d(x.reshape(3, 4), to_begin=x[0], to_end=[1.0, 2.0]),
                A.ravel()),
    "heaviside": (lambda x: np.heaviside(x, 0.5) * x ** 2 + np.heaviside(x * 0.0, x), A[0]),
    "fmax": (lambda x: np.fmax(x, NANS) + np.fmin(NANS, x ** 2), A[0]),
    "take_along_axis": (lambda x: np.take_along_axis(
        x.reshape(3, 4), np.argsort(A, axis=1), axis=1), A.ravel()),
    "meshgrid xy": (lambda x: np.sum(np.stack(np.meshgrid(x[:3], x[3:5] ** 2)), axis=0),
                    A.ravel()[:5]),
    "meshgrid ij": (lambda x: np.stack(np.meshgrid(x[:3], x[3:5], x[5:7], indexing="ij")),
                    A.ravel()[:7]),
    "linspace": (lambda x: np.linspace(x[0], x[1] + 3.0, 7) ** 2, np.array([0.2, 0.9])),
    "linspace open": (lambda x: np.linspace(0.0, x[0], 5, endpoint=False), np.array([1.3])),
    "pad active fill": (lambda x: np.pad(x[:3] ** 2, (1, 2), constant_values=x[3]),
                        np.array([0.3, -0.5, 1.2, 0.7])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_derivatives(name):
    f, x = CASES[name]
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x), rtol=1e-13, atol=1e-14)
    assert check_grads(f, x, order=2)


def test_linspace_ends_exactly_at_stop_and_returns_its_step():
    y, step = ad.value_and_grad(lambda x: np.sum(np.linspace(x[0], x[1], 11, retstep=True)[0]))(
        np.array([0.1, 0.7]))
    ref = np.linspace(0.1, 0.7, 11)
    assert y == pytest.approx(np.sum(ref), rel=1e-15)
    tape = ad.record(lambda x: np.linspace(x[0], x[1], 11), np.array([0.1, 0.7]))
    assert tape.forward(np.array([0.1, 0.7]))[-1] == 0.7


def test_cross_of_2_vectors_warns_as_numpy_does():
    with pytest.warns(DeprecationWarning, match="2-dimensional vectors"):
        g = ad.grad(lambda x: np.sum(np.cross(x[:2], x[2:4])))(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(g, [4.0, -3.0, -2.0, 1.0])


def test_arange_with_an_active_endpoint_counts_under_a_guard():
    def f(p):
        x = np.arange(0.0, p[0], 0.1)          # a grid whose extent is a parameter
        return np.sum(np.sin(x * p[1]))
    p = np.array([1.05, 2.0])
    g = ad.grad(f)
    for point in (p, np.array([1.25, 2.0]), np.array([1.27, 1.5])):
        x = np.arange(0.0, point[0], 0.1)
        np.testing.assert_allclose(g(point), [0.0, np.sum(x * np.cos(x * point[1]))])
    assert g.tapes.recordings == 2           # 11 values, then 13 twice (the tape reused)
    assert check_grads(lambda q: np.arange(q[0], 2.0, q[1]) ** 2, np.array([0.15, 0.4]))


def test_isclose_and_allclose_are_recorded_tests():
    def f(x):
        near = np.isclose(x, [1.0, 2.0, 3.0])
        return float(np.allclose(x[:1], 1.0)) + np.sum(np.where(near, x, 2.0 * x))
    x = np.array([1.0, 2.0, 2.5])
    np.testing.assert_allclose(ad.grad(f)(x), [1.0, 1.0, 2.0])
    tape = ad.record(f, x)
    with pytest.raises(ad.BranchChanged):
        tape.gradient(np.array([1.0, 2.0, 3.0]))        # x[2] is close to 3 now
