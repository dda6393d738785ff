"""numpy.emath on active values (real or complex results as NumPy's values
decide, the decision checked on replay), np.logaddexp's reduce and
accumulate, numpy.polynomial's sums and conversions of active series. Each
value is NumPy's; each derivative is checked in every mode by
fdcheck.check_tape (tangents, adjoints, Jacobians, Hessian-vector products
against central differences), and replays at new points."""
import numpy as np
import pytest
from numpy.polynomial import Chebyshev, Legendre, Polynomial

import adsim
from adsim.errors import BranchChanged, UnsupportedOperation
from fdcheck import check_tape

INSIDE = np.array([0.3, 0.7, 0.45])          # every function real here
NEGATIVE = np.array([0.3, -0.7, 0.45])       # sqrt, logs, power complex
BEYOND = np.array([0.3, -1.7, 1.45])         # every function complex


def _parts(z):
    """A result as real numbers: NumPy's real array, or the real and imaginary
    parts of a complex one."""
    return np.concatenate([np.real(z), np.imag(z)]) if np.iscomplexobj(z) else z


EMATH = {
    "sqrt": np.emath.sqrt, "log": np.emath.log, "log2": np.emath.log2,
    "log10": np.emath.log10, "arcsin": np.emath.arcsin, "arccos": np.emath.arccos,
    "arctanh": np.emath.arctanh,
    "logn": lambda x: np.emath.logn(3.0, x),
    "logn of an active base": lambda x: np.emath.logn(x[1] + 0.2, np.array([2.0, -3.0, 0.5])),
    "power": lambda x: np.emath.power(x, 1.5),
    "power of an active exponent": lambda x: np.emath.power(np.array([-2.0, 3.0, 0.5]), x),
    "power of an integer": lambda x: np.emath.power(x, -2),
}


@pytest.mark.parametrize("point", [INSIDE, NEGATIVE, BEYOND], ids=["inside", "negative",
                                                                 "beyond one"])
@pytest.mark.parametrize("name", list(EMATH))
def test_emath_values_and_derivatives(name, point):
    fn = EMATH[name]

    def f(x):
        return _parts(fn(x))
    seen = []

    def complex_inside(x):
        seen.append(np.iscomplexobj(fn(x)))    # the dtype is NumPy's
        return x
    adsim.record(complex_inside, point)
    assert seen == [np.iscomplexobj(fn(point))]
    tape = check_tape(f, [point], value_rtol=1e-14, value_atol=1e-15)
    assert tape.output_shape == np.shape(f(point))


def test_emath_replays_at_a_new_point_with_the_same_dtype():
    f = lambda x: _parts(np.emath.sqrt(x) + np.emath.arcsin(x))   # noqa: E731
    tape = adsim.record(f, BEYOND)
    other = np.array([-0.4, 1.2, 0.6])         # other elements leave the domain
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-14)
    np.testing.assert_allclose(tape.jacobian(other), adsim.record(f, other).jacobian(other),
                               rtol=1e-13)


@pytest.mark.parametrize("fn", [np.emath.sqrt, np.emath.log, np.emath.arccos],
                         ids=["sqrt", "log", "arccos"])
def test_emath_replay_where_the_dtype_would_change_raises(fn):
    real_tape = adsim.record(lambda x: np.sum(fn(x)), INSIDE)
    with pytest.raises(BranchChanged):
        real_tape.forward(BEYOND)              # NumPy's result would be complex there
    complex_tape = adsim.record(lambda x: np.real(np.sum(fn(x))), BEYOND)
    with pytest.raises(BranchChanged):
        complex_tape.forward(INSIDE)           # and real here
    # the functional API records again where the path changes
    g = adsim.grad(lambda x: np.real(np.sum(fn(x))))
    for point in (INSIDE, BEYOND):
        want = adsim.record(lambda x: np.real(np.sum(fn(x))), point).gradient(point)
        np.testing.assert_allclose(g(point), want, rtol=1e-14)


def test_emath_nan_is_skipped_as_numpy_skips_it():
    x = np.array([np.nan, 4.0])
    assert not np.iscomplexobj(np.emath.sqrt(x))
    tape = adsim.record(lambda x: np.emath.sqrt(x), x)
    assert tape.output_shape == (2,)


# ---- np.logaddexp.reduce and .accumulate -------------------------------------

M = np.array([[0.3, -0.7, 1.2], [2.0, -1.0, 0.1]])


@pytest.mark.parametrize("f", [
    lambda x: np.logaddexp.accumulate(x, axis=1),
    lambda x: np.logaddexp2.accumulate(x),
    lambda x: np.logaddexp.reduce(x, axis=0),
    lambda x: np.logaddexp.reduce(np.stack([x[0, 0], x[1, 1], x[0, 2]])),
], ids=["accumulate", "accumulate base 2", "reduce", "reduce of a stacked list"])
def test_logaddexp_reduce_and_accumulate(f):
    tape = check_tape(f, [M], value_rtol=1e-14, value_atol=1e-15)
    other = M * 0.7 + 0.1           # np.logaddexp records which operand is larger
    np.testing.assert_allclose(tape.forward(other), f(other), rtol=1e-14)


LOGADDEXP = np.logaddexp        # NumPy's own ufunc, kept before any recording


def test_a_ufunc_method_given_a_list_of_active_values_names_itself():
    # through numpy's name, adsim's stand-in converts the list; past it (a
    # ufunc kept before the recording) NumPy converts the list itself before
    # any override is asked: the refusal names the call and the fix
    tape = adsim.record(lambda x: np.logaddexp.reduce([x[0], x[1], x[2]]), INSIDE)
    assert np.isclose(tape.forward(INSIDE), np.logaddexp.reduce(INSIDE[:3]), rtol=1e-15)
    with pytest.raises(UnsupportedOperation, match=r"numpy\.logaddexp\.reduce.*np\.stack"):
        adsim.record(lambda x: LOGADDEXP.reduce([x[0], x[1], x[2]]), INSIDE)


# ---- numpy.polynomial: sums and conversions of active series -------------------

SERIES = {
    "chebyshev to power": lambda c: Chebyshev(c).convert(kind=Polynomial).coef,
    "chebyshev on a domain": lambda c: Chebyshev(c, domain=[-2, 3]).convert(kind=Polynomial).coef,
    "power to chebyshev": lambda c: Polynomial(c).convert(kind=Chebyshev).coef,
    "legendre to chebyshev": lambda c: Legendre(c).convert(kind=Chebyshev).coef,
    "plain plus active": lambda c: (Polynomial([1.0, 2.0, 3.0, 4.0]) + Polynomial(c)).coef,
    "active minus longer plain": lambda c: (Polynomial(c) - Polynomial([1.0, 2.0, 3.0, 4.0])).coef,
    "chebsub": lambda c: np.polynomial.chebyshev.chebsub([0.5, 0.25, 1.0, 2.0], c),
}


@pytest.mark.parametrize("name", list(SERIES))
def test_series_sums_and_conversions(name):
    f = SERIES[name]
    tape = check_tape(f, [INSIDE])
    np.testing.assert_allclose(tape.forward(BEYOND), f(BEYOND), rtol=1e-14)


def test_trailing_zero_of_a_sum_is_trimmed_and_guarded():
    f = lambda c: np.polynomial.polynomial.polyadd([1.0, 2.0, 3.0], c)   # noqa: E731
    c = np.array([0.5, 1.0, -3.0])            # the sum's last coefficient is zero: trimmed
    tape = adsim.record(f, c)
    np.testing.assert_array_equal(tape.forward(c), f(c))
    with pytest.raises(BranchChanged):
        tape.forward(np.array([0.5, 1.0, -2.0]))


# ---- polynomial division --------------------------------------------------------

U5 = np.array([1.0, 2.0, 3.0, 4.0, -1.0])
DIVISIONS = {
    "polydiv": lambda x: np.concatenate(np.polydiv(U5 * x[0], x)),
    "polydiv of a plain dividend": lambda x: np.concatenate(np.polydiv(U5, x)),
    "polydiv by a plain divisor": lambda x: np.concatenate(np.polydiv(np.concatenate([x, x]),
                                                                      np.array([2.0, 1.0]))),
    "polydiv, shorter dividend": lambda x: np.concatenate(np.polydiv(x[:2], x)),
    "poly1d /": lambda x: np.concatenate([c.coeffs for c in np.poly1d(U5) / np.poly1d(x)]),
    "chebdiv": lambda x: np.concatenate(np.polynomial.chebyshev.chebdiv(U5 * x[1], x)),
    "chebdiv of a plain dividend": lambda x: np.concatenate(
        np.polynomial.chebyshev.chebdiv(U5, x)),
    "legdiv by a plain divisor": lambda x: np.concatenate(
        np.polynomial.legendre.legdiv(x, [1.0, 0.5])),
    "polynomial.polydiv of a plain dividend": lambda x: np.concatenate(
        np.polynomial.polynomial.polydiv(U5, x)),
    "divmod of Polynomials": lambda x: np.concatenate(
        [c.coef for c in divmod(Polynomial(U5), Polynomial(x))]),
    "Hermite //": lambda x: (np.polynomial.Hermite(U5) // np.polynomial.Hermite(x)).coef,
}


@pytest.mark.parametrize("name", list(DIVISIONS))
def test_polynomial_division(name):
    f = DIVISIONS[name]
    tape = check_tape(f, [INSIDE], value_rtol=0.0, value_atol=0.0)   # NumPy's steps: its bits
    other = INSIDE + 0.1
    np.testing.assert_array_equal(tape.forward(other), f(other))


def test_polydiv_drops_a_remainder_coefficient_numpy_finds_zero_and_guards_it():
    # (x - 1)(x + 2) / (x - 1): remainder 0, NumPy's [0.]
    f = lambda v: np.concatenate(np.polydiv(np.array([1.0, 1.0, -2.0]), v))   # noqa: E731
    v = np.array([1.0, -1.0])
    tape = adsim.record(f, v)
    np.testing.assert_array_equal(tape.forward(v), f(v))
    with pytest.raises(BranchChanged):
        tape.forward(np.array([1.0, -1.5]))      # the remainder is not zero there


def test_emath_of_a_list_of_active_values_and_vecdot_along_an_axis():
    f = lambda x: _parts(np.emath.sqrt([x[0], x[1] - 2.0, x[2]]))     # noqa: E731
    check_tape(f, [INSIDE], value_rtol=1e-15, value_atol=0.0)
    g = lambda x: np.vecdot(x.reshape(3, 2), x[::-1].reshape(3, 2), axis=0)   # noqa: E731
    check_tape(g, [np.arange(1.0, 7.0)], value_rtol=1e-15, value_atol=0.0)
