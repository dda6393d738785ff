"""NumPy's reduction keywords on active arrays (initial=, where=, out=) and
ufunc.reduce / ufunc.accumulate: values equal NumPy's, derivatives match
central differences in every mode."""
import numpy as np
import pytest

import adsim as ad
from adsim.testing import check_grads

X = np.array([0.3, -1.2, 2.0, 0.7, -0.4, 1.1])
M = np.array([True, False, True, True, False, True])

CASES = {
    "sum initial where": lambda x: np.sum(x ** 2, initial=1.5, where=M),
    "sum axis where": lambda x: np.sum(x.reshape(2, 3), axis=1, where=M.reshape(2, 3)),
    "mean where": lambda x: np.mean(x.reshape(3, 2) ** 2, axis=0, where=M.reshape(3, 2)),
    "max initial": lambda x: np.max(x, initial=1.5),
    "max where": lambda x: np.max(x, where=M, initial=-5.0),
    "min method initial": lambda x: x.min(initial=-0.5),
    "prod where": lambda x: np.prod(x, where=M, initial=2.0),
    "multiply.reduce": lambda x: np.multiply.reduce(x.reshape(2, 3), axis=1),
    "maximum.accumulate": lambda x: np.maximum.accumulate(x),
    "minimum.accumulate 2-d": lambda x: np.minimum.accumulate(x.reshape(3, 2), axis=0),
    "add.accumulate": lambda x: np.add.accumulate(x.reshape(2, 3), axis=1),
    "multiply.accumulate": lambda x: np.multiply.accumulate(x),
    "minimum.reduce": lambda x: np.minimum.reduce(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_derivatives(name):
    f = CASES[name]
    np.testing.assert_allclose(ad.record(f, X).forward(X), f(X), rtol=1e-14)
    assert check_grads(f, X, order=2)


def _writes_into_out(x):
    o = np.zeros(2)
    np.sum(x.reshape(2, 3), axis=1, out=o)
    p = np.empty(6)
    returned = np.cumsum(x, out=p)
    q = np.zeros(6)
    np.clip(x, -1.0, 1.0, out=q)
    r = np.zeros(())
    np.dot(x, x, out=r)
    return np.sum(o ** 2) + np.sum(returned) + np.sum(q * x) + r


def test_out_arguments_receive_the_result_and_are_returned():
    np.testing.assert_allclose(ad.record(_writes_into_out, X).forward(X), _writes_into_out(X))
    assert check_grads(_writes_into_out, X, order=2)


def test_where_without_initial_on_max_is_numpys_error():
    with pytest.raises(ValueError, match="initial"):
        ad.grad(lambda x: np.max(x, where=M))(X)
