"""The last NumPy functions found missing by programs run as written: complex
powers with non-integer or active exponents, N-d np.kron, Python callables
mapped over active arrays (np.vectorize, np.frompyfunc, np.apply_along_axis,
np.piecewise), polynomial fits and roots, phase unwrapping, lexsort,
histograms; and what float() of an active value says. Each value is NumPy's
and each derivative is checked in every mode (fdcheck.check_tape: replay,
tangents, adjoints, Jacobians, Hessian-vector products against central
differences), and replays at a new point against a new recording. Ties of
max and min: test_extrema_ties.py."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, check_tape, distinct, fd_jacobian

RNG = np.random.default_rng(25)
V4 = distinct(RNG, (4,))
V6 = distinct(RNG, (6,))


@np.vectorize
def _ramp(t, slope=2.0):                 # made at import, before any recording
    return slope * t if t > 0 else t * t


def _parts(z):
    return np.stack([np.real(z), np.imag(z)])


def _phase(x):
    return np.e ** (1j * x)


def _put(x, mode="raise"):
    y = np.zeros(8)
    np.put(y, [0, 3, 3, -1], x[:3] ** 2, mode=mode)   # a repeated position keeps the last value
    np.put(y, [9, 10], x[3:5], mode="wrap" if mode == "raise" else mode)
    np.put(y, [1], 7.0)
    return y


def _masked_writes(x):
    z = np.ones((2, 4))
    np.putmask(z, np.arange(8).reshape(2, 4) % 3 == 0, x[:2] * 3)   # values cycle by position
    w = np.zeros(6)
    np.place(w, [True, False, True, True, False, True], x[1:4])     # values cycle by count
    v = np.zeros((2, 3))
    np.put_along_axis(v, np.array([[2], [0]]), x[:2, None] * x[2], axis=1)
    return np.concatenate([z.ravel(), w, v.ravel()])


def _written_lists(x):
    w = np.zeros(4)
    np.place(w, [True, False, True, False], [x[0], x[1] ** 2])
    np.put(w, [1], [x[2]])
    np.putmask(w, w == 0, (x[3],))          # the mask from recorded comparisons
    return w


def _safe_division(x):
    y = np.zeros(4)
    np.multiply(x, 2, out=y, where=x > 1.0)
    z = np.divide(1.0, x, out=np.zeros_like(x), where=x > 0)     # the safe-division idiom
    q = np.ones(4)
    np.exp(x, out=q, where=[True, False, True, False])
    return np.concatenate([y, z, q])


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
    # Python callables mapped over elements and slices
    "vectorize branch": (lambda x: np.vectorize(lambda t: t ** 2 if t > 0 else -t)(x), V6),
    "vectorize made at import": (lambda x: _ramp(x.reshape(2, 3)), V6),
    "vectorize two arguments": (lambda x: np.vectorize(lambda a, b: a * np.sin(b) if a > b
                                                       else a + b)(x[:3, None], x[3:]), V6),
    "vectorize excluded, keywords": (lambda x: np.vectorize(
        lambda t, c, p=1.0: c[0] * t * np.exp(p), excluded={1})(x, [2.0], p=x[::-1]), V6),
    "vectorize two outputs": (lambda x: np.concatenate(np.vectorize(
        lambda t: (np.exp(t), t * 3.0), otypes=[float, float])(x)), V4),
    "vectorize constant on one branch": (lambda x: np.vectorize(lambda t: 1.5 if t < 0 else
                                                                np.cos(t))(x), V6),
    "vectorize signature": (lambda x: np.vectorize(lambda a, b: a * np.sum(a * b), signature=
                                                    "(n),(n)->(n)")(x.reshape(2, 3), x[:3]), V6),
    "vectorize signature, two outputs": (lambda x: np.concatenate(np.vectorize(
        lambda r: (np.outer(r, r).ravel(), np.sum(r)), signature="(n)->(m),()")(
        x.reshape(3, 2)), axis=None), V6),
    "frompyfunc": (lambda x: np.frompyfunc(lambda a, b: a * b if a > 0 else a - b, 2, 1)(
        x, x[::-1]).astype(float), V6),
    "frompyfunc two outputs": (lambda x: np.stack(np.frompyfunc(lambda t: (t * t, -t), 1, 2)(
        x.reshape(2, 2))), V4),
    "apply_along_axis scalar": (lambda x: np.apply_along_axis(
        lambda r: np.sum(r ** 2) / r[0], 1, x.reshape(2, 3)), V6),
    "apply_along_axis axis 0 vector": (lambda x: np.apply_along_axis(
        lambda r: r[::-1] * r[0], 0, x.reshape(3, 2)), V6),
    "apply_along_axis matrix result": (lambda x: np.apply_along_axis(
        lambda r, s: np.outer(r, r) * s, 1, x.reshape(2, 1, 3), 2.0), V6),
    # polynomial fits, phase unwrapping, histogram edges
    "polyfit y": (lambda y: np.polyfit(np.linspace(0.0, 3.0, 6), y, 2), V6),
    "polyfit x": (lambda x: np.polyfit(x, np.arange(6.0) ** 2, 3), V6),
    "polyfit weights, columns": (lambda y: np.polyfit(np.arange(6.0), np.stack([y, y ** 2], 1), 1,
                                                      w=1.0 + y ** 2).ravel(), V6),
    "polyfit cov": (lambda y: np.polyfit(np.arange(6.0), y, 2, cov=True)[1].ravel(), V6),
    "polyfit full": (lambda y: np.concatenate([np.polyfit(np.arange(6.0), y, 1, full=True)[1],
                                               np.polyfit(np.arange(6.0), y, 1, full=True)[3]]),
                     V6),
    "roots, real": (lambda x: np.roots(np.array([1.0, -x[0] - x[1] - 5.0, (x[0] + 5.0) * x[1]])),
                    V4),
    "roots, complex": (lambda c: _parts(np.roots(c + np.array([1.0, 0.0, 2.0, 0.0]))), V4),
    "roots, a trailing zero": (lambda c: np.roots(np.concatenate([c[:2] + 3.0, c[2:3] * 0.0])),
                               V4),
    "unwrap": (lambda x: np.unwrap(4.0 * x), V6),
    "unwrap axis 0, period": (lambda x: np.unwrap(3.0 * x.reshape(3, 2), axis=0, period=2.5,
                                                  discont=1.5), V6),
    "histogram edges": (lambda x: np.histogram(x, bins=4)[1], V6),
    "histogram density, weights": (lambda x: np.histogram(x, bins=3, density=True,
                                                          weights=np.exp(x))[0], V6),
    # writes into arrays made in the recorded function, weighted counts
    "put": (_put, V6),
    "put clip": (lambda x: _put(x, mode="clip"), V6),
    "putmask, place, put_along_axis": (_masked_writes, V6),
    "writes of lists of active values": (lambda x: _written_lists(x), V4),
    "ufunc where= into out=": (_safe_division, V4),
    "bincount weights": (lambda x: np.bincount([0, 2, 2, 5, 0, 1], weights=x * x, minlength=7),
                         V6),
    "bincount of a list of active weights": (
        lambda x: np.bincount([1, 1], weights=[x[0], x[1] ** 2]), V4),
    "piecewise functions and values": (lambda x: np.piecewise(
        x, [x < -0.5, (x >= -0.5) & (x < 0.5)], [lambda t: -t ** 3, 0.25, np.sin]), V6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_derivatives_in_every_mode(name):
    f, x = CASES[name]
    check_tape(f, [x])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_tape_replays_at_a_new_point_as_a_new_recording(name):
    f, x = CASES[name]
    tape = adsim.record(f, x)
    moved = x + 0.003 * np.random.default_rng(1).standard_normal(x.shape)   # same branches
    w = np.random.default_rng(2).standard_normal(np.shape(f(x)))
    value, adjoint = tape.vjp(moved, w)
    fresh_value, (fresh_adjoint,) = adsim.vjp(f, (moved,), w)
    np.testing.assert_allclose(value, np.asarray(f(moved), dtype=float), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(adjoint, fresh_adjoint, rtol=1e-12, atol=1e-14)
    v = np.random.default_rng(3).standard_normal(x.shape)
    np.testing.assert_allclose(tape.jvp(moved, v)[1], adsim.jvp(f, (moved,), (v,))[1],
                               rtol=1e-12, atol=1e-14)


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


def test_a_vectorized_branch_is_checked_on_replay():
    f = np.vectorize(lambda t: t ** 2 if t > 0 else -t)
    tape = adsim.record(lambda x: np.sum(f(x)), V6)
    other = V6.copy()
    other[np.argmax(V6)] *= -1.0                 # one element takes the other branch
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(other)
    np.testing.assert_allclose(adsim.grad(lambda x: np.sum(f(x)))(other),
                               np.where(other > 0, 2 * other, -1.0))


def test_mapped_values_and_dtypes_are_numpys():
    x = V6.reshape(2, 3)
    step = np.vectorize(lambda t: 1 if t > 0 else 0)          # an integer result, no derivative
    got = adsim.record(lambda x: x * step(x), x).forward(x)
    assert np.array_equal(got, x * step(x))
    assert np.array_equal(adsim.record(lambda x: np.apply_along_axis(np.sort, 1, x), x)
                          .forward(x), np.apply_along_axis(np.sort, 1, x))
    for axis in (0, 1, -1):
        def outer(x):
            return np.apply_along_axis(lambda r: np.outer(r, r[::-1]), axis, x)
        assert np.array_equal(adsim.record(outer, x).forward(x), outer(x))
    scalar = adsim.record(lambda t: np.vectorize(lambda s: s * 2)(t[0, 0]), x).forward(x)
    assert np.shape(scalar) == ()


def test_mapping_refusals_are_numpys_or_say_what_to_do():
    with pytest.raises(ValueError, match="otypes"):
        adsim.grad(lambda x: np.sum(np.vectorize(np.sin)(x[:0])) + x[0])(V4)
    assert adsim.grad(lambda x: np.sum(np.vectorize(np.sin, otypes=[float])(x[:0])) + x[0])(
        V4)[0] == 1.0
    with pytest.raises(ValueError, match="iteration dimensions"):
        adsim.grad(lambda x: np.sum(np.apply_along_axis(np.sum, 0, x.reshape(4, 1)[:, :0])))(V4)
    with pytest.raises(ValueError, match="core dimension"):
        adsim.grad(lambda x: np.sum(np.vectorize(np.dot, signature="(n),(n)->()")(x, x[:2])))(V4)
    with pytest.raises(adsim.UnsupportedOperation, match="reduce"):
        adsim.grad(lambda x: np.frompyfunc(lambda a, b: a * b, 2, 1).reduce(x))(V4)


def test_vectorize_is_numpys_again_after_the_recording():
    code = np.vectorize.__call__.__code__
    adsim.grad(lambda x: np.sum(_ramp(x)))(V4)
    assert np.vectorize.__call__.__code__ is code
    with pytest.raises(adsim.UnsupportedOperation, match="vectorize"), \
            adsim.interposition(False):
        adsim.grad(lambda x: np.sum(_ramp(x)))(V4)


def test_ndenumerate_of_active_arrays_and_lists_is_numpys_with_active_elements():
    """np.ndenumerate's NumPy code iterates a plain copy; with active
    arguments it gives NumPy's (index, element) pairs, the elements
    recorded, checked against differences and on replay."""
    def weighted(x):
        grid = x.reshape(2, 3)
        s = 0.0
        for (i, j), v in np.ndenumerate(grid):
            s = s + (i + 1) * (j - 0.5) * v ** 2
        for (k,), v in np.ndenumerate([x[0], 2.0, x[1] * x[2]]):
            s = s + k * v
        return s + sum(v for _, v in np.ndenumerate(x[0]))

    x = V6
    tape = adsim.record(weighted, x)
    assert_close(tape.forward(x), weighted(x), 1e-15, 0)
    assert_close(tape.gradient(x), fd_jacobian(weighted, [x])[0], 1e-9, 1e-12)
    assert [idx for idx, _ in np.ndenumerate(np.ones((2, 2)))] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_a_piecewise_material_law():
    """Stress of a bar from its strain: linear elastic, then a hardening
    plastic branch, fitted to measured stresses by least squares."""
    strain = np.linspace(0.0, 0.02, 9)
    measured = np.array([0.0, 48.0, 101.0, 148.0, 190.0, 205.0, 214.0, 221.0, 229.0])

    def stress(params, eps):
        E, sigma_y, H = params
        eps_y = sigma_y / E
        return np.piecewise(eps, [eps <= eps_y, eps > eps_y],
                            [lambda e: E * e, lambda e: sigma_y + H * (e - eps_y)])

    def misfit(params):
        return np.sum((stress(params, strain) - measured) ** 2)

    params = np.array([2.0e4, 210.0, 3000.0])
    g = adsim.grad(misfit)(params)
    h = params * 1e-6
    fd = [(misfit(params + h[i] * np.eye(3)[i]) - misfit(params - h[i] * np.eye(3)[i])) /
          (2 * h[i]) for i in range(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    tape = adsim.record(misfit, params)
    np.testing.assert_allclose(tape.gradient(params * 1.01), adsim.grad(misfit)(params * 1.01),
                               rtol=1e-12)
    with pytest.raises(adsim.BranchChanged):     # the yield point moved past a sample
        tape.gradient(np.array([2.0e4, 160.0, 3000.0]))


def test_orders_histograms_and_indices_are_numpys_and_guarded():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 2.0])
    group = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])

    def by_group_then_value(x):
        return x[np.lexsort((x, group))] * np.arange(6.0)
    tape = adsim.record(by_group_then_value, x)
    for shifted in (x + 0.01 * np.arange(6.0), x * 2.0):     # the same order
        np.testing.assert_array_equal(tape.forward(shifted), by_group_then_value(shifted))
    with pytest.raises(adsim.BranchChanged):                 # a different order
        tape.forward(np.array([3.0, 1.0, 3.0, 0.5, 1.0, 2.0]))
    keyed = adsim.record(lambda x: np.lexsort([x, -x]) * x, x)
    np.testing.assert_array_equal(keyed.forward(x), np.lexsort([x, -x]) * x)
    with_nan = np.array([1.0, np.nan, 0.5, np.nan])
    np.testing.assert_array_equal(adsim.record(lambda x: x[np.lexsort((-x, x))], with_nan)
                                  .forward(with_nan), with_nan[np.lexsort((-with_nan, with_nan))])

    labels = np.array([10.0, 20.0])                          # argsort's ties are stable
    relabel = adsim.record(lambda x: labels[np.argsort(x)] * x[0], np.array([2.0, 1.0]))
    with pytest.raises(adsim.BranchChanged):                 # NumPy's order at a tie differs
        relabel.forward(np.array([2.0, 2.0]))

    counts = adsim.record(lambda x: np.histogram(x, bins=4)[0] * x[0], V6)
    np.testing.assert_array_equal(counts.forward(V6 * 1.01),
                                  np.histogram(V6 * 1.01, 4)[0] * V6[0] * 1.01)
    moved = V6.copy()
    moved[np.argmax(V6)] = np.median(V6)                     # values change bins
    assert not np.array_equal(np.histogram(moved, 4)[0], np.histogram(V6, 4)[0])
    with pytest.raises(adsim.BranchChanged):
        counts.forward(moved)
    moved = V6.copy()                    # the edges move with the smallest value, the
    moved[np.argmin(V6)] = np.median(V6)   # counts stay: replayed, NumPy's counts
    np.testing.assert_array_equal(counts.forward(moved), np.histogram(moved, 4)[0] * V6[0])
    kinds = []
    adsim.record(lambda x: kinds.append(np.histogram(x, 3)[0]) or x, x)
    assert isinstance(kinds[0], np.ndarray)                  # plain counts, NumPy's dtype
    np.testing.assert_array_equal(kinds[0], np.histogram(x, 3)[0])
    assert kinds[0].dtype == np.histogram(x, 3)[0].dtype
    gappy = np.array([0.3, np.nan, 0.9, 2.5, -0.4, 1.1])      # NaN is in no bin
    in_range = adsim.record(lambda x: np.histogram(x, 3, range=(0.0, 2.0))[0] * 1.0, gappy)
    np.testing.assert_array_equal(in_range.forward(gappy), np.histogram(gappy, 3, (0.0, 2.0))[0])
    with pytest.raises(adsim.BranchChanged):
        in_range.forward(np.nan_to_num(gappy, nan=1.0))
    with pytest.raises(adsim.UnsupportedOperation, match="number of bins"):
        adsim.grad(lambda x: np.sum(np.histogram(x, bins="auto")[1]))(x)
    with pytest.raises(ValueError, match="not finite"):
        adsim.grad(lambda x: np.sum(np.histogram(x / 0.0, bins=3)[1]))(x)

    m = np.outer(V4, V4)
    got = adsim.record(lambda x: np.outer(x, x)[np.diag_indices_from(np.outer(x, x))], V4)
    np.testing.assert_array_equal(got.forward(V4), m[np.diag_indices_from(m)])


def test_a_polynomial_calibration():
    """A sensor's readings against reference values, calibrated by a quadratic
    fit; the derivative of a calibrated reading with respect to the
    readings (how calibration error propagates) and to the reference
    values, checked against differences, in forward and reverse mode."""
    reference = np.array([0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    readings = np.array([0.12, 1.05, 2.21, 3.02, 4.15, 5.31, 6.02])

    def calibrated(readings, reference, at=3.5):
        coefficients = np.polyfit(readings, reference, 2)
        return np.polyval(coefficients, at)

    for argnum, point in ((0, readings), (1, reference)):
        def f(v, argnum=argnum):
            args = [readings, reference]
            args[argnum] = v
            return calibrated(*args)
        g = adsim.grad(f)(point)
        h = 1e-6
        fd = np.array([(f(point + h * e) - f(point - h * e)) / (2 * h) for e in np.eye(7)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(adsim.jvp(f, (point,), (np.ones(7),))[1], np.sum(fd),
                                   rtol=1e-6)
    with pytest.raises(adsim.UndefinedDerivative):      # all readings alike: no quadratic
        adsim.grad(lambda r: calibrated(r, reference))(np.ones(7))


def test_a_phase_unwrapping_signal_program():
    """The instantaneous frequency of a chirp from the angle of its analytic
    signal (np.angle, np.unwrap, np.gradient), and its derivative with
    respect to the chirp rate."""
    t = np.linspace(0.0, 1.0, 64)

    def mean_frequency(rate):
        phase = 2.0 * np.pi * (5.0 * t + 0.5 * rate[0] * t ** 2)
        signal = np.cos(phase) + 1j * np.sin(phase)
        unwrapped = np.unwrap(np.angle(signal))
        return np.mean(np.gradient(unwrapped, t[1] - t[0])) / (2.0 * np.pi)

    rate = np.array([8.0])
    value = mean_frequency(rate)
    assert abs(value - (5.0 + 0.5 * rate[0])) < 1e-6     # frequency 5 + rate t, mean at t = 1/2
    g = adsim.grad(mean_frequency)(rate)
    np.testing.assert_allclose(g, [0.5], rtol=1e-9)
    tape = adsim.record(mean_frequency, rate)
    np.testing.assert_allclose(tape.forward(rate * 1.001), mean_frequency(rate * 1.001),
                               rtol=1e-13)


def test_a_number_made_of_an_active_value_says_where_it_came_from_and_what_to_do():
    def uses_float(params):
        k = float(params[1])                 # a parameter read as a Python number
        return np.sum(params) * k
    with pytest.raises(adsim.ActiveValueLeak) as info:
        adsim.grad(uses_float)(np.array([1.0, 2.0]))
    message = str(info.value)
    assert "float()" in message and "element [1] of input 0 of the recorded function" in message
    assert "float(adsim.value(x))" in message and "adsim.stop_gradient(x)" in message
    with pytest.raises(adsim.ActiveValueLeak, match="the result of a recorded sin"):
        adsim.grad(lambda p: np.sin(p[0]).item() * p[1])(np.array([1.0, 2.0]))
    # what the message offers works: a number without derivative, checked on replay
    g = adsim.grad(lambda p: float(adsim.value(p[1])) * p[0])(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [2.0, 0.0])
    assert int(adsim.grad(lambda p: p[0] * int(p[1]))(np.array([1.0, 2.5]))[0]) == 2


def test_printing_progress_inside_a_recorded_function():
    """``print(f"{loss:.4f}")`` in a model shows the recorded value as NumPy
    would (tests/numpy/test_formatting.py), as do {loss} without a spec,
    adsim.value(loss) and a constant made in the function."""
    shown = []

    def printing(p):
        loss = np.sum(p ** 2)
        scale = np.array(2.5)                        # a constant of the recording
        shown.append(f"{loss:.4f} {adsim.value(loss):.4f} {loss} {scale:.1f}")
        return loss * scale
    np.testing.assert_allclose(adsim.grad(printing)(V4), 5.0 * V4, rtol=1e-15)
    text = f"{np.sum(V4 ** 2):.4f}"
    assert shown[-1].startswith(f"{text} {text} ") and shown[-1].endswith(" 2.5")


def test_roots_where_they_are_not_differentiable_or_change_kind():
    def repeated(c):
        return np.sum(np.roots(np.array([1.0, -2.0 * c[0], c[0] ** 2])))
    with pytest.raises(adsim.UndefinedDerivative, match="repeated root"):
        adsim.grad(repeated)(np.array([1.5]))
    with pytest.raises(adsim.UndefinedDerivative, match="leading coefficient"):
        adsim.grad(lambda c: np.sum(np.roots(c * np.array([0.0, 1.0, 1.0]))))(V4[:3] + 3.0)

    def real_roots(c):              # z^2 + c z + 1: real for |c| > 2, complex below
        return np.roots(np.array([1.0, c[0], 1.0]))
    tape = adsim.record(real_roots, np.array([3.0]))
    np.testing.assert_allclose(tape.forward(np.array([3.5])), np.roots([1.0, 3.5, 1.0]),
                               rtol=1e-14)
    with pytest.raises(adsim.BranchChanged):
        tape.forward(np.array([1.0]))
    # a trailing zero coefficient gives NumPy's exact root 0, which still moves with it
    np.testing.assert_allclose(adsim.grad(lambda c: np.roots(np.array([1.0, 2.0, c[0]]))[1])(
        np.array([0.0])), [-0.5], rtol=1e-12)
    # the sum of the roots of a monic polynomial is -c: exact in every mode
    np.testing.assert_allclose(adsim.grad(lambda c: np.sum(np.real(real_roots(c))))(
        np.array([1.0])), [-1.0], rtol=1e-12)


def test_writes_into_plain_arrays_and_out_of_range_are_refused():
    plain = np.zeros(3)
    with pytest.raises(adsim.UnsupportedOperation, match="inside the recorded function"):
        adsim.grad(lambda x: (np.put(plain, [0], x[0]), x[0])[1])(V4)
    with pytest.raises(adsim.UnsupportedOperation, match="inside the recorded function"):
        adsim.grad(lambda x: (np.putmask(plain, plain == 0, x[0]), x[0])[1])(V4)
    with pytest.raises(IndexError, match="out of bounds"):
        adsim.grad(lambda x: (np.put(np.zeros(3), [5], x[0]), x[0])[1])(V4)
    with pytest.raises(ValueError, match="same length"):
        adsim.grad(lambda x: np.bincount([0, 1], weights=x).sum())(V4)
    with pytest.raises(TypeError, match="counts integers"):
        adsim.grad(lambda x: np.bincount(x).sum())(V4)


def test_a_ufunc_where_without_out_is_refused():
    with pytest.raises(adsim.UnsupportedOperation, match="uninitialized"):
        adsim.grad(lambda x: np.sum(np.exp(x, where=x > 1)))(V4)
