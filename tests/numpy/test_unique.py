"""np.unique of active values (adsim/_np/unique.py): NumPy's values, indices,
inverse and counts; the values a gather at the first occurrences, so a tie's
whole derivative goes to its first element in every mode; the structure
guarded, so a replay where it changes raises BranchChanged."""
import numpy as np
import pytest

import adsim as ad
from adsim.testing import check_grads

TIED = np.array([0.5, -1.0, 0.5, 2.0, -1.0, 0.5, 3.0])


def _plain(v):
    """A plain copy of ``v`` (inside the recording: its recorded values)."""
    return np.asarray(ad.value(v).tolist()) if isinstance(v, ad.Active) else v


def _flags(k):
    return dict(return_index=bool(k & 1), return_inverse=bool(k & 2),
                return_counts=bool(k & 4))


@pytest.mark.parametrize("k", range(8))
@pytest.mark.parametrize("data, axis", [
    (TIED, None), (TIED.reshape(1, 7), None),
    (np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0], [1.0, -1.0]]), 0),
    (np.array([[1.0, 2.0, 1.0, 0.0], [3.0, 4.0, 3.0, 3.0]]), 1),
    (np.array([[1.0, 2.0, 1.0], [3.0, 4.0, 3.0]]).reshape(2, 3, 1), -2)],
    ids=["1-d", "2-d flattened", "rows", "columns", "axis -2"])
def test_every_output_is_numpys(data, axis, k):
    seen = {}

    def f(x):
        out = np.unique(x, axis=axis, **_flags(k))
        seen["out"] = tuple(map(_plain, out)) if isinstance(out, tuple) else _plain(out)
        values = out[0] if isinstance(out, tuple) else out
        return np.sum(values ** 2)
    ad.grad(f, cache=False)(data)
    expected = np.unique(data, axis=axis, **_flags(k))
    got = seen["out"]
    if not isinstance(expected, tuple):
        expected, got = (expected,), (got,)
    assert len(got) == len(expected)
    np.testing.assert_array_equal(got[0], expected[0])
    for g, e in zip(got[1:], expected[1:]):
        assert type(g) is np.ndarray and g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("f", [
    lambda x: np.unique(x.T, axis=0), lambda x: np.unique(x.T), lambda x: np.unique(x[:, ::-1], axis=1),
    lambda x: np.unique(x[:0]), lambda x: np.unique(x[0, 0]), lambda x: np.unique(x[:, :0], axis=1)],
    ids=["transposed rows", "transposed", "reversed columns", "empty", "0-d", "empty along"])
def test_views_and_empty_arrays(f):
    A = np.array([[1.0, 2.0, 1.0], [3.0, 4.0, 3.0]])
    tape = ad.record(lambda x: f(x) * 1.0, A)
    np.testing.assert_array_equal(tape.forward(A), f(A))
    assert tape.forward(A).shape == f(A).shape


def test_a_ties_derivative_goes_to_its_first_occurrence_in_every_mode():
    w = np.arange(1.0, 5.0)                     # one weight per unique value

    def f(x):
        return np.sum(w * np.unique(x) ** 2)
    first = np.unique(TIED, return_index=True)[1]
    expected = np.zeros_like(TIED)
    expected[first] = 2 * w * TIED[first]
    np.testing.assert_array_equal(ad.grad(f)(TIED), expected)
    tape = ad.record(f, TIED)
    v = np.linspace(-1.0, 1.0, TIED.size)
    np.testing.assert_allclose(tape.jvp(TIED, v)[1], expected @ v, rtol=1e-14)
    H = np.zeros((TIED.size, TIED.size))
    H[first, first] = 2 * w
    np.testing.assert_allclose(ad.hvp(f, TIED, v), H @ v, rtol=1e-14)
    # the same as the gather written by hand
    np.testing.assert_array_equal(ad.grad(lambda x: np.sum(w * x[first] ** 2))(TIED), expected)


def test_against_differences_where_no_tie_breaks():
    # duplicates of one input element move together, so differences see the gather
    def f(x):
        y = np.concatenate([x, x[::-1], x[1:2]])
        values, counts = np.unique(y, return_counts=True)
        return np.sin(values) * counts
    check_grads(f, np.array([0.3, -0.2, 1.1]), modes=("fwd", "rev"), order=2)
    check_grads(lambda x: np.unique(np.stack([x[:2], x[2:], x[:2]]), axis=0) ** 2,
                np.array([0.3, -0.2, 1.1, 0.4]), order=2)


def test_a_replay_where_the_structure_changes_raises_and_the_api_records_again():
    def f(x):
        return np.sum(np.unique(x) ** 2)
    tape = ad.record(f, TIED)
    moved = TIED + 0.25                         # same ties, same order: replays
    np.testing.assert_allclose(tape.forward(moved), f(moved), rtol=1e-14)
    broken = TIED.copy()
    broken[2] += 0.1                            # a tie breaks
    with pytest.raises(ad.BranchChanged):
        tape.forward(broken)
    swapped = TIED.copy()
    swapped[[0, 3]] = swapped[[3, 0]]           # the order of the distinct values changes
    with pytest.raises(ad.BranchChanged):
        tape.forward(swapped * np.array([1, 1, 1, 1, 1, 1, -1.0]))
    g = ad.grad(f)
    for x in (TIED, broken, moved):
        first = np.unique(x, return_index=True)[1]
        expected = np.zeros_like(x)
        expected[first] = 2 * x[first]
        np.testing.assert_array_equal(g(x), expected)


def test_nan_as_numpy_collapses_it():
    data = np.array([1.0, np.nan, 0.5, np.nan, 1.0])
    for equal_nan in (True, False):
        seen = {}

        def f(x):
            values = np.unique(x, equal_nan=equal_nan)
            seen["values"] = _plain(values)
            return np.nansum(values)
        g = ad.grad(f, cache=False)(data)
        np.testing.assert_array_equal(seen["values"],
                                      np.unique(data, equal_nan=equal_nan))
        np.testing.assert_array_equal(g, [1.0, 0.0, 1.0, 0.0, 0.0])
    tape = ad.record(lambda x: np.nansum(np.unique(x)), data)
    with pytest.raises(ad.BranchChanged):
        tape.forward(np.nan_to_num(data))       # the NaN are gone: another unique
    with pytest.raises(ad.UnsupportedOperation, match="NaN"):
        ad.grad(lambda x: np.sum(np.unique(x, axis=0)))(data.reshape(5, 1))


@pytest.mark.skipif(not hasattr(np, "unique_all"), reason="NumPy >= 2.0")
def test_numpy_2s_unique_functions_return_numpys_named_results():
    seen = {}

    def f(x):
        for name in ("all", "counts", "inverse"):
            out = getattr(np, f"unique_{name}")(x)
            seen[name] = (type(out), out._fields, [_plain(v) for v in out])
        return np.sum(np.unique_values(x) * np.unique_counts(x).counts)
    g = ad.grad(f, cache=False)(TIED.reshape(7, 1))
    for name in ("all", "counts", "inverse"):
        expected = getattr(np, f"unique_{name}")(TIED.reshape(7, 1))
        kind, fields, got = seen[name]
        assert kind is type(expected) and fields == expected._fields
        for field, e in zip(got, expected):
            np.testing.assert_array_equal(field, e)
    first = np.unique(TIED, return_index=True)[1]
    expected = np.zeros(7)
    expected[first] = np.unique(TIED, return_counts=True)[1]
    np.testing.assert_array_equal(g, expected.reshape(7, 1))


# ---- user-style models --------------------------------------------------------

READINGS = np.array([2.0, 3.0, 2.0, 5.0, 3.0, 2.0, 7.0, 5.0])     # repeated instrument readings


def test_a_likelihood_grouped_by_unique_values_matches_the_ungrouped_one():
    """A grouped likelihood: each distinct (rescaled) reading once, weighted by
    how often it occurs, as one writes it for long repetitive data."""
    def grouped(theta):
        scale, log_rate = theta
        values, counts = np.unique(scale * READINGS, return_counts=True)
        rate = np.exp(log_rate)
        return np.sum(counts * (log_rate - rate * values))

    def ungrouped(theta):
        scale, log_rate = theta
        return np.sum(log_rate - np.exp(log_rate) * scale * READINGS)
    theta = np.array([0.7, -0.3])
    np.testing.assert_allclose(ad.grad(grouped)(theta), ad.grad(ungrouped)(theta), rtol=1e-14)
    check_grads(grouped, theta, order=2)


def test_a_mixture_model_with_components_found_by_np_unique_of_labels():
    labels = np.array([2, 0, 2, 1, 0, 2, 2, 1])
    data = np.array([1.9, -0.2, 2.3, 0.9, 0.1, 2.0, 1.7, 1.2])

    def negloglik(params):
        components, counts = np.unique(labels, return_counts=True)
        weights = counts / labels.size
        means = params[components]
        centred = data[:, None] - means[None, :]
        log_dens = -0.5 * centred ** 2 + np.log(weights)
        m = np.max(log_dens, axis=1, keepdims=True)
        return -np.sum(m[:, 0] + np.log(np.sum(np.exp(log_dens - m), axis=1)))
    check_grads(negloglik, np.array([0.0, 1.0, 2.0]), order=2)
    # the component means learnt from the data, then deduplicated as the labels are
    check_grads(lambda p: np.unique(np.round(p * 4) / 4 + p * 1e-3), np.array([0.1, 0.9, 0.3]))
