"""Integer-valued results of active values, and adsim.value.

floor, ceil, trunc, rint, round, //, % and fmod of active values are
recorded ops that replays compute again with NumPy's exact values. int(),
casts to integer types (``np.int64(x)``, ``np.asarray(x, dtype=np.int32)``)
and integer data indexing plain arrays are plain arrays under guards, so a
replay where they would differ raises BranchChanged (the functional API
records again) instead of reusing a stale constant (recorded gathers by
integer data: test_integer_gathers.py). Every
test compares with a fresh NumPy evaluation at points where the integers
differ from those of the recording.
"""
import numpy as np
import pytest

import adsim as ad
import adsim.testing
from fdcheck import fd_jacobian

TABLE = np.linspace(-3.0, 5.0, 12) ** 2


def fd_grad(f, x):
    return fd_jacobian(f, [x]).reshape(x.shape)


def lookup(x):
    i = np.floor(ad.value(x)).astype(int) % TABLE.size
    return np.sum(TABLE[i] * x)


def interpolate(x):
    """Linear interpolation in TABLE at positions x (a semi-Lagrangian step)."""
    i = np.floor(x).astype(int)
    w = x - i
    return np.sum((1.0 - w) * TABLE[i] + w * TABLE[i + 1])


def branch_on_value(x):
    if ad.value(x)[0] > 0:
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def modular(x):
    return np.sum((x % 1.5) ** 2 + (x // 0.7) * x + np.fmod(x, 0.9) ** 2)


def rounding(x):
    return np.sum(np.ceil(x) * x + np.rint(2.0 * x) * x ** 2 + np.trunc(x) + np.round(x, 1) * x)


def as_index(x):
    k = int(x[0]) % 3
    return np.sum(x[k:] ** 2) + x[int(np.floor(x[1])) % 4]


def cast_by_scalar_type(x):
    """Cells found by casting with NumPy's integer types, as particle codes do."""
    cell = np.int64(np.abs(x) * 2.0)
    nearest = np.asarray(x * 3.0, dtype=np.int32)         # truncation toward zero
    assert cell.dtype == np.int64 and nearest.dtype == np.int32
    return np.sum(TABLE[cell] * x + TABLE[nearest] * x ** 2)


FUNCTIONS = [lookup, interpolate, branch_on_value, modular, rounding, as_index,
             cast_by_scalar_type]
POINTS = [np.array([1.3, 2.6, 0.2, 3.4]), np.array([2.2, 0.4, 1.7, 0.43]),
          np.array([-0.3, 3.7, 2.03, 1.12])]      # all at least 2e-3 from any jump


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_functional_api_follows_integer_data_at_new_points(f):
    g = ad.value_and_grad(f)
    for x in POINTS:
        value, grad = g(x)
        assert np.isclose(value, f(x.copy()), rtol=1e-13)
        np.testing.assert_allclose(grad, fd_grad(f, x), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_explicit_tape_refuses_points_where_integers_differ(f):
    tape = ad.record(f, POINTS[0])
    for x in POINTS[1:]:
        try:
            got = tape.gradient(x)
        except ad.BranchChanged:
            continue
        np.testing.assert_allclose(got, fd_grad(f, x), rtol=1e-7, atol=1e-8)
    # close to the recording, where no integer changes, the tape replays
    x = POINTS[0] + 1e-3
    np.testing.assert_allclose(tape.gradient(x), fd_grad(f, x), rtol=1e-7, atol=1e-8)
    assert np.isclose(tape.forward(x), f(x.copy()), rtol=1e-13)


def test_value_is_a_recorded_stop_gradient():
    def f(x):
        c = ad.value(x)
        return np.sum(x * c) + np.sum(np.sin(c))
    tape = ad.record(f, np.array([0.5, 1.5]))
    x = np.array([2.0, -1.0])
    assert np.isclose(tape.forward(x), f(x.copy()))
    np.testing.assert_allclose(tape.gradient(x), x)


def test_float_of_a_value_is_a_guarded_constant():
    def scaled(x):
        s = float(ad.value(np.max(np.abs(x))))     # a scale without derivative
        return np.sum(x ** 3) / s
    g = ad.grad(scaled)
    for x in POINTS:
        np.testing.assert_allclose(g(x), 3.0 * x ** 2 / np.max(np.abs(x)), rtol=1e-14)
    tape = ad.record(scaled, POINTS[0])
    with pytest.raises(ad.BranchChanged):
        tape.gradient(POINTS[1])


def test_float_of_a_differentiable_value_is_refused():
    with pytest.raises(ad.ActiveValueLeak, match="float"):
        ad.grad(lambda x: float(x[0]) * np.sum(x))(np.ones(3))
    with pytest.raises(ad.ActiveValueLeak):
        ad.grad(lambda x: np.sum(x.__array__() * x))(np.ones(3))


def test_truth_values_are_recorded_branches():
    def f(x):
        if x[0]:
            return np.sum(x ** 2)
        return np.sum(x)
    g = ad.grad(f)
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_allclose(g(np.array([0.0, 2.0])), [1.0, 1.0])
    with pytest.raises(ValueError, match="ambiguous"):
        ad.grad(lambda x: np.sum(x) * bool(x))(np.ones(2))


def test_index_conversion_needs_an_integral_scalar():
    with pytest.raises(TypeError, match="integer scalar"):
        ad.grad(lambda x: np.sum(x[: x[0]]))(np.array([1.5, 2.0]))
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(x[: x[0]] ** 2))(np.array([2.0, 3.0, 4.0])),
                               [4.0, 6.0, 0.0])


def test_guards_inside_checkpointed_loops_record_the_step_again():
    """A semi-Lagrangian-like step whose cell indices change from step to step."""
    def step(u, c):
        i = np.floor(u * 3.0).astype(int) % TABLE.size
        return u + 0.01 * TABLE[i] * c

    def f(c, u0=np.array([0.1, 0.5, 0.9])):
        return np.sum(ad.checkpoint_loop(step, u0, 40, args=(c,)) ** 2)

    def plain(c, u0=np.array([0.1, 0.5, 0.9])):
        u = u0.copy()
        for _ in range(40):
            u = step(u, c)
        return np.sum(u ** 2)
    c = np.array([1.0, 0.8, 1.2])
    value, grad = ad.value_and_grad(f)(c)
    assert np.isclose(value, plain(c), rtol=1e-12)
    np.testing.assert_allclose(grad, fd_grad(plain, c), rtol=1e-6, atol=1e-9)


def test_an_active_index_is_guarded_to_stay_that_integer():
    """A list indexed by an active integral scalar: a replay where it is no
    longer integral (where the index would be refused) must not reuse it."""
    def f(x):
        return np.sum(x[1:] ** 2) * [10.0, 20.0, 30.0][x[0]]
    tape = ad.record(f, np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ad.BranchChanged):
        tape.forward(np.array([1.5, 2.0, 3.0]))
    assert np.isclose(tape.forward(np.array([1.0, 4.0, 3.0])), 25.0 * 20.0)


def test_floor_division_and_remainder_use_numpys_quotient():
    # 0.5 / 0.1 rounds to 5.0, but 0.1 is a little above 1/10: NumPy's
    # quotient is 4 and its remainder just below 0.1
    x = np.array([0.5, 1.0, -0.3, 2.05])
    table = np.arange(40.0) ** 2
    for f in (lambda x: np.sum(x // 0.1), lambda x: np.sum(table[(x % 4.0 // 0.1).astype(int)]),
              lambda x: np.sum(np.floor_divide(x, -0.3)), lambda x: np.sum(np.fmod(x, 0.1) * x)):
        value, _ = ad.value_and_grad(f)(x)
        assert value == pytest.approx(f(x), rel=1e-14, abs=1e-14)
    y, t = ad.jvp(lambda x: x % 0.1, x, np.ones(4))
    np.testing.assert_allclose(y, x % 0.1, rtol=1e-13, atol=1e-16)
    np.testing.assert_array_equal(t, np.ones(4))


def test_remainder_quotients_match_numpy_at_random_points_and_replays():
    rng = np.random.default_rng(7)
    a = rng.uniform(-5, 5, 400)
    b = rng.choice([0.1, 0.3, -0.7, 2.0, 1e-3, -0.2], 400)
    for fn in (np.floor_divide, np.remainder, np.fmod):
        tape = ad.record(lambda a: fn(a, b) + 0.0 * a, a)
        for point in (a, a + rng.uniform(-1e-9, 1e-9, 400)):
            try:
                y = tape.forward(point)
            except ad.BranchChanged:
                y = ad.record(lambda a: fn(a, b) + 0.0 * a, point).forward(point)
            np.testing.assert_allclose(y, fn(point, b), rtol=0, atol=1e-15 * 8)


def test_an_active_divisor_keeps_its_derivative():
    f = lambda z: np.sum(np.remainder(z[:2], z[2:]) * z[:2]) + np.sum(np.fmod(z[:2], z[2:]) ** 2)
    assert ad.testing.check_grads(f, np.array([2.5, -1.3, 0.3, -0.7]))


SPECIAL = [0.5, 0.1, -0.5, -0.1, 3.0, -3.0, 7.25, -7.25, 1e-300, 0.0, -0.0, np.inf, -np.inf,
           np.nan, 2.0, 1e308, 5.551115123125783e-17]


def test_rounding_and_integer_division_are_numpys_at_every_special_value():
    a, b = (np.array(v) for v in zip(*[(p, q) for p in SPECIAL for q in SPECIAL]))
    functions = [np.floor_divide, np.remainder, np.fmod, lambda u, v: divmod(u, v)[0],
                 lambda u, v: divmod(u, v)[1], lambda u, v: np.floor(u), lambda u, v: np.ceil(u),
                 lambda u, v: np.trunc(u), lambda u, v: np.rint(u), lambda u, v: np.round(u, 2),
                 lambda u, v: np.fix(u), lambda u, v: u // v, lambda u, v: u % v]
    tape = ad.record(lambda u, v: np.stack([f(u, v) for f in functions]), np.ones(a.size),
                     np.ones(b.size))
    got = tape.forward(a, b)
    with np.errstate(all="ignore"):
        want = np.stack([f(a, b) for f in functions])
    np.testing.assert_array_equal(got, want)                        # NaN where NumPy's is
    assert np.array_equal(np.signbit(got), np.signbit(want))        # signed zeros too


def test_float_rounding_and_wrapping_replay_across_cells():
    """No guard: an explicit tape follows x into other cells and periods."""
    def f(x):
        return np.sum((x % 1.0) ** 2 * np.floor(x) + (x // 0.35) * x + np.fmod(x, 0.7) * np.rint(x))
    tape = ad.record(f, POINTS[0])
    for x in POINTS[1:] + [-POINTS[0]]:
        assert tape.forward(x) == pytest.approx(f(x), rel=1e-14)
        np.testing.assert_allclose(tape.gradient(x), fd_grad(f, x), rtol=1e-7, atol=1e-8)


def test_a_periodic_wrap_records_once():
    """Particles wrapped into a periodic box: the same tape at every step."""
    L = 2.0

    def positions(v):
        x = np.array([0.3, 1.1, 1.9])
        for _ in range(20):
            x = (x + 0.17 * v) % L
        return np.sum(np.sin(np.pi * x))
    g = ad.grad(positions)
    for v in (np.array([1.0, -2.0, 0.5]), np.array([3.1, 0.2, -1.4])):
        np.testing.assert_allclose(g(v), fd_grad(positions, v), rtol=1e-7, atol=1e-8)
    assert g.tapes.recordings == 1
