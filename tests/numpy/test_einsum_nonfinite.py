"""np.einsum where adsim's contraction sums a label before multiplying by an
operand without it ('i,j,k->' as sum(x)**3): NumPy's value at infinities
(NumPy sums every product, so inf * 0 gives NaN), derivatives that agree
across modes there, and replays that leave a finite recording at an
infinity, record again (adsim/_np/einsum.py)."""
import numpy as np
import pytest

import adsim

AT = np.array([np.inf, 0.0, 1.0])
FINITE = np.array([1.0, 2.0, 0.5])
M = np.array([[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]])

CASES = {
    "i,j,k->": lambda x: np.einsum("i,j,k->", x, x, x),
    "i,j->": lambda x: np.einsum("i,j->", x, x[::-1]),
    "ij,k->i": lambda x: np.einsum("ij,k->j", M * x[:, None], x),
    "i,j->i": lambda x: np.einsum("i,j->i", x, x),
    "ij,j,k->ik": lambda x: np.einsum("ij,j,k->ik", np.outer(x, x[:2]), x[:2], x),
    "plain operand": lambda x: np.einsum("i,j->", x, AT),
    "sublists": lambda x: np.einsum(x, [0], x, [1], x, [2], []),
}


def _same(a, b):
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(np.nan_to_num(a, nan=0.0), np.nan_to_num(b, nan=0.0),
                               rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("x", [AT, FINITE, np.array([-np.inf, 2.0, 0.0]),
                               np.array([np.nan, 1.0, 2.0])], ids=["inf0", "finite", "-inf",
                                                                    "nan"])
def test_values_follow_numpy(name, x):
    f = CASES[name]
    with np.errstate(invalid="ignore"):
        _same(adsim.record(f, x).forward(x), f(x))


@pytest.mark.parametrize("name", CASES)
def test_a_finite_recording_replayed_at_an_infinity_records_again(name):
    f = CASES[name]
    tape = adsim.record(f, FINITE)
    _same(tape.forward(FINITE * 2.0), f(FINITE * 2.0))
    if name == "plain operand":         # the infinity is a constant: the recording took it
        return
    with pytest.raises(adsim.BranchChanged):
        tape.forward(AT)
    with np.errstate(invalid="ignore"):
        g = adsim.grad(lambda x: np.sum(f(x)))
        g(FINITE)
        g(AT)                           # recorded again at the infinity
        y, _ = adsim.jvp(f, AT, np.ones(3))
        _same(y, f(AT))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("x", [AT, FINITE], ids=["inf0", "finite"])
def test_derivatives_agree_across_modes(name, x):
    def scalar(x):
        return np.sum(CASES[name](x))
    v = np.array([0.3, 1.0, 2.0])      # g @ v of infinite g: no inf - inf of its own
    with np.errstate(invalid="ignore", over="ignore"):
        g = adsim.grad(scalar)(x)
        _, jv = adsim.jvp(scalar, x, v)
        _same(np.array(jv), np.array(g @ v))
        hv = adsim.hvp(scalar, x, v)
        H = adsim.hessian(scalar)(x)
        _same(hv, H @ v)
    if np.isfinite(x).all() and name != "plain operand":
        h = 1e-6
        fd = np.array([(scalar(x + h * e) - scalar(x - h * e)) / (2 * h) for e in np.eye(3)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
