"""``plain_array ** active_scalar``: NumPy before 2.3 asks the exponent for
its index (``__index__``) and, for -1, 0, 1 and 2, computes reciprocal,
ones, a copy or a square without the exponent, which lost its derivative
(a zero gradient at exactly those values). adsim needs NumPy 2.3; under an
older one an active value with a derivative is not an index."""
import operator

import numpy as np
import pytest

import adsim
from adsim._np import integers

T = np.linspace(0.1, 1.0, 8)


@pytest.mark.parametrize("e", [-1.0, 0.0, 1.0, 2.0, 0.5, 3.0])
def test_the_exponent_keeps_its_derivative_at_every_value(e):
    def f(p):
        return np.sum(T ** p[0]) + np.sum(2.0 ** p[1] * T)
    p = np.array([e, e])
    want = [np.sum(T ** e * np.log(T)), np.log(2.0) * 2.0 ** e * np.sum(T)]
    np.testing.assert_allclose(adsim.grad(f)(p), want, rtol=1e-13)
    np.testing.assert_allclose(adsim.record(f, p + 0.5).gradient(p), want, rtol=1e-13)


@pytest.mark.skipif(not integers._POWER_ASKS_FOR_AN_INDEX, reason="NumPy 2.3 and later")
def test_under_an_older_numpy_a_value_with_a_derivative_is_not_an_index():
    x = np.arange(5.0)
    with pytest.raises(TypeError, match="integer scalar arrays.*derivative"):
        adsim.grad(lambda p: p[1] * operator.index(p[0]))(np.array([2.0, 3.0]))
    # int() is NumPy's way to an index: a plain integer, derivative zero
    assert adsim.grad(lambda p: x[int(p[0])] * p[1])(np.array([2.0, 3.0]))[1] == 2.0
