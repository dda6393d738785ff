"""Comparisons of active values give boolean data (BoolArray) that every
replay computes again. np.where on it, logic, sums and masks used as
numbers follow new inputs without recording again; where a plain value is
needed (if-tests, boolean indexing) it is a branch record. Each case runs
one recording at points where the masks differ from the recording's and
compares with NumPy and with finite differences."""
import numpy as np
import pytest

import adsim as ad
from adsim._np.recorded_arrays import BoolArray
from fdcheck import check_tape, fd_jacobian

POINTS = [np.array([0.7, -0.4, 1.3, -2.6]), np.array([-0.7, 0.4, 3.3, 0.6]),
          np.array([4.1, 0.3, -1.3, 0.9])]


def fd_grad(f, x):
    return fd_jacobian(f, [x]).reshape(x.shape)


def _zeroed(x):
    u = x * 1.0
    u[u < 0] = 0.0
    return np.sum(u ** 2)


REPLAYED = {      # masks the replay reads: one recording serves every point
    "where": lambda x: np.sum(np.where(x > 0, np.sin(x) * x, x ** 2)),
    "nested where": lambda x: np.sum(np.where(x > 1, 1.0, np.where(x < -1, -1.0, x)) ** 2),
    "logic": lambda x: np.sum(np.where(np.logical_and(x > -1, ~(x > 1)) | (x < -2), x, 0.0)),
    "with a plain mask": lambda x: np.sum(np.where((x > 0) & np.array([1, 0, 1, 1], bool), x,
                                                   2 * x)),
    "mask as numbers": lambda x: np.sum((x > 0) * x + (x <= 0) * np.exp(x)),
    "astype(float)": lambda x: np.sum((x > 0).astype(float) * x ** 2),
    "counts": lambda x: np.sum(x) * np.count_nonzero(x > 0) + np.sum(x > 0.5) * x[0],
    "mean": lambda x: np.sum(x) * np.mean(x > 0),
    "cumsum": lambda x: np.sum(np.cumsum(x > 0) * x),
    "sum along an axis": lambda x: np.sum(np.sum(x.reshape(2, 2) > 0, axis=0) * x[:2]),
    "where of integers": lambda x: np.sum(np.where(x > 0, 1, 0) * x),
    "any without if": lambda x: np.sum(np.where(np.any(x > 3), x, -x)),
    "all and any of numbers": lambda x: (np.sum(x) * np.all(np.maximum(x[2:], 0.0))
                                         + x[0] ** 2 * np.any(np.maximum(x[[1, 3]], 0.0),
                                                              keepdims=True).sum()
                                         + np.sum(np.sin(np.all(x.reshape(2, 2), axis=0)))),
    "all and any methods": lambda x: (np.sum(x.reshape(2, 2) * np.maximum(x, 0.0).reshape(2, 2)
                                             .all(axis=1, keepdims=True))
                                      + x[1] * np.maximum(x, 0.0).any(where=[1, 0, 0, 0])),
    "nan tests": lambda x: np.sum(np.where(np.isinf(np.where(x > 0, x, np.inf))
                                           | np.isnan(np.where(x > 1, np.nan, x)), 0.0, x ** 3)
                                  + np.isfinite(np.where(x < 2, x, -np.inf)) * x),
}
BRANCHES = {      # plain values: branch records
    "if": lambda x: np.sum(x ** 2) if np.any(x > 3) else np.sum(x),
    "boolean index": lambda x: np.sum(x[x > 0] ** 2),
    "masked write": _zeroed,
    "int of a count": lambda x: np.sum(x) * int(np.sum(x > 0)),
    "iteration": lambda x: np.sum(x) * len([b for b in (x > 0) if b]),
}


@pytest.mark.parametrize("name", sorted(REPLAYED))
def test_masks_are_recomputed_by_replays(name):
    f = REPLAYED[name]
    tape = ad.record(f, POINTS[0])
    for x in POINTS:
        value, grad = tape.value_and_gradient(x)
        assert np.isclose(value, f(x.copy()), rtol=1e-13)
        np.testing.assert_allclose(grad, fd_grad(f, x), rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose([ad.jvp(f, x, e)[1] for e in np.eye(x.size)], grad,
                                   rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_plain_uses_are_branches_and_the_functional_api_follows(name):
    f = BRANCHES[name]
    tape = ad.record(f, POINTS[0])
    g = ad.grad(f)
    for x in POINTS:
        np.testing.assert_allclose(g(x), fd_grad(f, x), rtol=1e-7, atol=1e-8)
        try:
            np.testing.assert_allclose(tape.gradient(x), g(x), rtol=1e-12)
        except ad.BranchChanged:
            pass
    with pytest.raises(ad.BranchChanged):
        for x in POINTS[1:]:
            tape.gradient(x)


def test_comparisons_give_boolean_data_with_numpy_semantics():
    seen = {}

    def f(x):
        m = x > 0
        seen.update(m=m, types=(type(m & (x < 1)), type(~m), type(m == True),  # noqa: E712
                                type(np.sum(m)), type(m * x)))
        seen["plain"] = (np.asarray(m), m.tolist(), m.dtype, m.shape, bool(m[0]))
        return np.sum(x)

    ad.grad(f)(np.array([1.0, -1.0, np.nan]))
    assert isinstance(seen["m"], BoolArray)
    assert seen["types"][:3] == (BoolArray, BoolArray, BoolArray)
    assert seen["types"][4] is ad.Active
    plain, as_list, dtype, shape, first = seen["plain"]
    np.testing.assert_array_equal(plain, [True, False, False])     # NaN compares false
    assert as_list == [True, False, False] and dtype == np.bool_ and shape == (3,) and first


def test_the_side_not_taken_passes_no_derivative_in_any_mode():
    """np.where(x > 0, sqrt(x), 0) at x < 0: 0 in every mode (not 0 * NaN),
    also at points replayed from a recording made where x > 0."""
    def f(x):
        return np.sum(np.where(x > 0, np.sqrt(x), 0.0))

    tape = ad.record(f, np.array([1.0, 4.0]))
    x, v = np.array([-1.0, 4.0]), np.array([1.0, 1.0])
    np.testing.assert_array_equal(tape.gradient(x), [0.0, 0.25])
    assert ad.jvp(f, x, v)[1] == 0.25
    np.testing.assert_array_equal(ad.hvp(f, x, v), [0.0, -1.0 / 32.0])


def test_upwind_steps_in_a_checkpointed_loop_are_recorded_once():
    calls = []

    def step(u, c):
        calls.append(1)
        left, right = np.roll(u, 1), np.roll(u, -1)
        flux = np.where(u > 0, u - left, right - u)        # upwind by the local sign
        return u - 0.1 * c * u * flux

    u0 = np.sin(np.linspace(0.0, 2 * np.pi, 16, endpoint=False))

    def f(c):
        return np.sum(ad.checkpoint_loop(step, u0, 40, args=(c,)) ** 2)

    def plain(c):
        u = u0.copy()
        for _ in range(40):
            u = step(u, c)
        return np.sum(u ** 2)

    c = np.array(0.7)
    value, grad = ad.value_and_grad(f)(c)
    assert len(calls) <= 3
    assert np.isclose(value, plain(c), rtol=1e-13)
    assert np.isclose(grad, (plain(c + 1e-6) - plain(c - 1e-6)) / 2e-6, rtol=1e-6)


def test_sparsity_of_a_mask_covers_both_sides():
    def F(x):
        return np.where(x[:-1] > 0, x[:-1] * x[1:], 2.0 * x[:-1])

    pattern = ad.jacobian_sparsity(F, np.array([1.0, 1.0, -1.0, 1.0])).toarray()
    np.testing.assert_array_equal(pattern, np.eye(3, 4, dtype=bool) | np.eye(3, 4, 1, dtype=bool))
    for x in POINTS:
        np.testing.assert_allclose(ad.sparse_jacobian(F, x).toarray(), ad.jacobian(F)(x),
                                   rtol=1e-14)


@pytest.mark.parametrize("name", ["all and any of numbers", "all and any methods"])
def test_all_and_any_of_numbers_in_every_mode(name):
    """np.all/np.any of active arrays (boolean data of x != 0): every sweep,
    Hessian-vector products included, at points where they differ."""
    for x in POINTS:
        check_tape(REPLAYED[name], [x])
