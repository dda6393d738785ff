"""A replay's results for a tape of several inputs (their adjoints, their
adjoint tangents) share one allocation (``per_input_arrays`` in
adsim/_replay.pxi: fresh multi-megabyte arrays per input cost their page
faults at every call). Each result must still be its own input's, of its
shape, and independent of the others: checked against the same function
recorded on one concatenated input, interpreted and fused."""
import numpy as np
import pytest

import adsim as ad
from adsim.errors import NoCompiler

SIZES = (7, 0, 1, 12)


def f_split(a, b, c, d):
    return np.sum(np.sin(a) * a) + np.sum(b) * c[0] + c[0] ** 3 + np.sum(np.exp(-d) * d ** 2)


def f_joined(z):
    parts = np.split(z, np.cumsum(SIZES)[:-1])
    return f_split(*parts)


def split(z):
    return np.split(z, np.cumsum(SIZES)[:-1])


def points(seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, n) for n in SIZES]


def tapes(fuse):
    xs = points(0)
    several, joined = ad.record(f_split, *xs), ad.record(f_joined, np.concatenate(xs))
    if fuse:
        try:
            several.fuse()
        except NoCompiler as why:
            pytest.skip(str(why))
    return several, joined


def assert_independent(results):
    for i, r in enumerate(results):
        for j, other in enumerate(results):
            if i != j:
                assert not np.shares_memory(r, other)


@pytest.mark.parametrize("fuse", [False, True])
def test_gradients_of_several_inputs(fuse):
    several, joined = tapes(fuse)
    for seed in (1, 2):
        xs = points(seed)
        got = several.gradient(*xs)
        want = split(joined.gradient(np.concatenate(xs)))
        assert [g.shape for g in got] == [x.shape for x in xs]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
        assert_independent(got)
        kept = [g.copy() for g in got]
        got[0][:] = np.nan                      # writing one result leaves the others
        for g, k in zip(got[1:], kept[1:]):
            assert np.array_equal(g, k)


def test_vjps_in_several_directions_of_several_inputs():
    several, joined = tapes(False)
    xs = points(3)
    weights = np.array([1.0, -2.0, 0.5])
    _, got = several.vjp(xs, weights)
    _, want = joined.vjp(np.concatenate(xs), weights)
    for g, w in zip(got, split(want)):             # (size, weights) each
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    assert_independent(got)


def test_second_order_results_of_several_inputs():
    several, joined = tapes(False)
    xs, vs = points(4), points(5)
    got = several._soadjoint(xs, [v.reshape(1, -1) for v in vs], np.ones(1))
    want = joined._soadjoint([np.concatenate(xs)], [np.concatenate(vs).reshape(1, -1)],
                             np.ones(1))
    for g, w in zip(got[2], split(want[2][0])):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    for g, w in zip(got[3], np.split(want[3][0], np.cumsum(SIZES)[:-1], axis=1)):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    assert_independent(got[2] + got[3])
