"""The np.where trap: a branch that np.where does not select contributes
exactly zero to every derivative, even where its own derivatives are
infinite or NaN (sqrt, log, powers, divisions, arcsin outside their
domains). ``sum(where(x > 0, sqrt(x), 0))`` at x = -1 has gradient 0 in
reverse mode as in forward mode: a zero adjoint (or tangent) times a NaN
partial is 0, not NaN. Checked in every mode: gradient, vjp, jvp, hvp,
vector modes with several directions, dense Jacobians, and op-by-op and
chunked sweeps (arrays large enough for runs, adsim/_chunks.pxi)."""
import numpy as np
import pytest

import adsim as ad
from adsim import _tape

# points inside and outside each branch's domain, zeros included
POINTS = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 0.5, 0.9, 2.0, 3.5])


def sinc_like(x):
    return np.sin(x) / x


# name: (condition, branch, first derivative, second derivative), the
# derivatives only where the condition holds
CASES = {
    "sqrt": (lambda x: x > 0, np.sqrt, lambda x: 0.5 / np.sqrt(x), lambda x: -0.25 * x ** -1.5),
    "log": (lambda x: x > 0, np.log, lambda x: 1.0 / x, lambda x: -1.0 / x ** 2),
    "log10": (lambda x: x > 0, np.log10, lambda x: 1.0 / (x * np.log(10.0)),
              lambda x: -1.0 / (x * x * np.log(10.0))),
    "power": (lambda x: x > 0, lambda x: x ** 1.5, lambda x: 1.5 * np.sqrt(x),
              lambda x: 0.75 / np.sqrt(x)),
    "x_to_the_x": (lambda x: x > 0, lambda x: x ** x, lambda x: x ** x * (np.log(x) + 1.0),
                   lambda x: x ** x * ((np.log(x) + 1.0) ** 2 + 1.0 / x)),
    "reciprocal": (lambda x: x != 0, lambda x: 1.0 / x, lambda x: -1.0 / x ** 2,
                   lambda x: 2.0 / x ** 3),
    "division": (lambda x: x != 0, sinc_like, lambda x: (x * np.cos(x) - np.sin(x)) / x ** 2,
                 lambda x: ((2.0 - x * x) * np.sin(x) - 2.0 * x * np.cos(x)) / x ** 3),
    "arcsin": (lambda x: np.abs(x) < 1, np.arcsin, lambda x: 1.0 / np.sqrt(1.0 - x * x),
               lambda x: x * (1.0 - x * x) ** -1.5),
    "x_log_x": (lambda x: x > 0, lambda x: x * np.log(x), lambda x: np.log(x) + 1.0,
                lambda x: 1.0 / x),
}


def masked(cond, d, x):
    """The derivative d where the branch is selected, 0 elsewhere (NumPy's
    own evaluation of d outside the domain is never used)."""
    out = np.zeros_like(x)
    sel = cond(x)
    out[sel] = d(x[sel])
    return out


def elementwise(case, scale=1.0):
    """y = where(cond, scale * branch + 1, 0) elementwise; the affine part
    makes the branch a run of several elementwise ops (chunked when large)."""
    cond, branch, _, _ = CASES[case]

    def f(x):
        return np.where(cond(x), branch(x) * scale + 1.0, 0.0)
    return f


def scalar(case, scale=1.0):
    g = elementwise(case, scale)
    return lambda x: np.sum(g(x))


def points(n):
    """n points: POINTS repeated (every kind of point in every chunk)."""
    return np.resize(POINTS, n)


def expected(case, x, scale=1.0):
    cond, _, d1, d2 = CASES[case]
    return scale * masked(cond, d1, x), scale * masked(cond, d2, x)


def sweep_modes(tape):
    """The tape as recorded, and swept op by op (the reference path)."""
    yield tape
    tape.chunked = False
    yield tape
    tape.chunked = True


def assert_exact_zeros(value, where_zero, what):
    assert np.all(np.isfinite(value)), f"{what}: {value[~np.isfinite(value)][:5]}"
    assert np.all(value[where_zero] == 0.0), what


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n", [len(POINTS), 40_000])
def test_reverse_and_forward_give_zero_outside_the_selected_branch(case, n):
    x = points(n)
    cond = CASES[case][0]
    d1, _ = expected(case, x, 2.0)
    tape = ad.record(scalar(case, 2.0), x)
    if n > 30_000:      # the branch forms a run: the chunked sweeps are tested too
        assert _tape.find_runs(tape)[2].shape[0] > 0
    rng = np.random.default_rng(1)
    v = rng.standard_normal(n)
    V = rng.standard_normal((n, 3))
    for t in sweep_modes(tape):
        g = t.gradient(x)
        assert_exact_zeros(g, ~cond(x), f"{case} gradient")
        np.testing.assert_allclose(g, d1, rtol=1e-12)
        _, jv = t.jvp(x, v)
        np.testing.assert_allclose(jv, d1 @ v, rtol=1e-10)
        _, jV = t.jvp(x, V)
        np.testing.assert_allclose(jV, d1 @ V, rtol=1e-10)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n", [len(POINTS), 40_000])
def test_hvp_gives_zero_outside_the_selected_branch(case, n):
    x = points(n)
    cond = CASES[case][0]
    d1, d2 = expected(case, x, 2.0)
    tape = ad.record(scalar(case, 2.0), x)
    rng = np.random.default_rng(2)
    v = rng.standard_normal(n)
    V = rng.standard_normal((n, 2))
    for t in sweep_modes(tape):
        hv = t.hvp(x, v)                         # the direct path of one direction
        assert_exact_zeros(hv, ~cond(x), f"{case} hvp")
        np.testing.assert_allclose(hv, d2 * v, rtol=1e-10)
        g, hV = t.gradient_and_hvp(x, V)         # several directions, with the gradient
        assert_exact_zeros(g, ~cond(x), f"{case} gradient (second order)")
        np.testing.assert_allclose(g, d1, rtol=1e-12)
        assert_exact_zeros(hV, ~cond(x), f"{case} hvp, 2 directions")
        np.testing.assert_allclose(hV, d2[:, None] * V, rtol=1e-10)


@pytest.mark.parametrize("case", sorted(CASES))
def test_vector_output_modes_give_zero_outside_the_selected_branch(case):
    x = points(4 * len(POINTS))
    cond = CASES[case][0]
    d1, d2 = expected(case, x)
    tape = ad.record(elementwise(case), x)
    rng = np.random.default_rng(3)
    w = rng.standard_normal(x.size)
    W = rng.standard_normal((x.size, 4))
    _, wJ = tape.vjp(x, w)
    assert_exact_zeros(wJ, ~cond(x), f"{case} vjp")
    np.testing.assert_allclose(wJ, d1 * w, rtol=1e-12)
    _, WJ = tape.vjp(x, W)
    np.testing.assert_allclose(WJ, d1[:, None] * W, rtol=1e-12)
    for mode in ("forward", "reverse"):
        J = tape.jacobian(x, mode=mode)
        assert np.all(np.isfinite(J)), mode
        np.testing.assert_allclose(J, np.diag(d1), rtol=1e-12, err_msg=mode)
    hv = tape.hvp(x, np.ones_like(x), w=w)       # the Hessian of w . f
    assert_exact_zeros(hv, ~cond(x), f"{case} weighted hvp")
    np.testing.assert_allclose(hv, d2 * w, rtol=1e-10)


def test_the_functional_api_agrees():
    x = POINTS.copy()
    g = ad.grad(scalar("sqrt"))(x)
    np.testing.assert_allclose(g, expected("sqrt", x)[0], rtol=1e-12)


def test_a_zero_tangent_times_an_infinite_partial_is_zero():
    """d/dz0 of sqrt(z1) z0 at z1 = 0 is sqrt(0) = 0: the tangent of sqrt(z1)
    along z0 is 0 (z1 does not move), although sqrt'(0) is infinite."""
    def f(z):
        return np.sqrt(z[1:]) * z[:1]
    z = np.array([3.0, 0.0])
    tape = ad.record(f, z)
    _, jv = tape.jvp(z, np.array([1.0, 0.0]))
    assert jv[0] == 0.0
    J = tape.jacobian(z, mode="forward")
    assert J[0, 0] == 0.0 and J[0, 1] == np.inf


def test_a_selected_nan_still_propagates():
    """Only exact zeros are protected: a NaN derivative of the branch that
    is taken stays NaN (it is the true derivative's value at that point)."""
    x = np.array([0.0, 1.0])
    g = ad.record(lambda z: np.sum(np.where(z >= 0, np.sqrt(z), 0.0)), x).gradient(x)
    assert g[0] == np.inf and g[1] == 0.5


def test_powers_of_a_zero_or_infinite_scalar_base_have_zero_derivatives():
    # 0 ** x (x > 0) and inf ** x (x < 0) are constant: 0, not 0 * log(0) = NaN
    x = np.array([2.0, 3.0])
    for f in (lambda x: np.sum(0.0 ** x), lambda x: np.sum(np.power(0.0, x))):
        np.testing.assert_array_equal(ad.grad(f)(x), [0.0, 0.0])
        np.testing.assert_array_equal(ad.hvp(f, x, np.ones(2)), [0.0, 0.0])
        np.testing.assert_array_equal(ad.jvp(f, x, np.ones(2))[1], 0.0)
    np.testing.assert_array_equal(ad.grad(lambda x: np.sum(np.inf ** x))(-x), [0.0, 0.0])
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(2.0 ** x))(x), 2.0 ** x * np.log(2.0))
