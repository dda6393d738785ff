"""np.sort puts NaN last. A recorded sort guards that its neighbours stay in
order, but NaN compares False with everything, so a tape recorded with NaN
also guards which sorted elements are NaN: a replay where they sit elsewhere
leaves the recorded path (adsim/_np/ordering.py)."""
import numpy as np
import pytest

import adsim as ad

WEIGHTS = np.arange(3.0)


def weighted_sort(x):
    return np.sort(np.log(x)) @ WEIGHTS


def test_a_replay_whose_nan_moved_leaves_the_recorded_path():
    with np.errstate(invalid="ignore", divide="ignore"):
        recorded_at = np.array([0.1, -1.0, -2.0])        # log: [-2.3, nan, nan]
        tape = ad.record(weighted_sort, recorded_at)
        x = np.array([-1.0, 0.0, -1.0])                  # log: [nan, -inf, nan]
        with pytest.raises(ad.BranchChanged):
            tape.gradient(x)
        # the functional API records again there: NumPy's order, -inf first
        fresh = ad.record(weighted_sort, x)
        np.testing.assert_array_equal(ad.grad(weighted_sort)(x), fresh.gradient(x))
        assert fresh.gradient(x)[1] == 0.0          # -inf sorted first, weighted 0


def test_a_replay_with_the_nan_in_place_follows_the_new_values():
    with np.errstate(invalid="ignore"):
        tape = ad.record(weighted_sort, np.array([0.1, -1.0, 0.5]))   # [-2.3, -0.69, nan]
        x = np.array([0.2, -3.0, 0.3])
        np.testing.assert_array_equal(tape.gradient(x), ad.record(weighted_sort, x).gradient(x))


def test_partition_guards_its_nan_too():
    def f(x):
        return np.partition(np.log(x), 1) @ WEIGHTS
    with np.errstate(invalid="ignore", divide="ignore"):
        tape = ad.record(f, np.array([0.1, -1.0, -2.0]))
        with pytest.raises(ad.BranchChanged):
            tape.forward(np.array([-1.0, 0.0, -1.0]))
