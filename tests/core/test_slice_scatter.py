"""Writes of contiguous rows into a slice (``np.pad``, ``Y[:, 1:] = ...``)
are block copies in every sweep; shifted writes of an array into itself
must still give NumPy's values and exact derivatives, at new points too."""
import numpy as np

import adsim as ad
from adsim.testing import check_grads


def shifted_field(x):
    """A field advected by whole cells along both axes, then padded."""
    y = x * 1.0
    y[1:] = y[:-1]                      # overlapping rows of one array
    Y = y.reshape(20, 30)
    Y[:, 1:] = Y[:, :-1] * 2.0
    Y[2:, :] = Y[:-2, :]
    P = np.pad(np.sin(Y), 1)
    return (P[:-2, 1:-1] + P[2:, 1:-1] - 2.0 * P[1:-1, 1:-1]).reshape(-1)


def test_shifted_writes_replay_as_numpy_computes_them():
    rng = np.random.default_rng(3)
    x = rng.random(600)
    tape = ad.record(shifted_field, x)
    for point in (x, rng.random(600), np.where(rng.random(600) < 0.05, np.nan, x)):
        np.testing.assert_array_equal(tape.forward(point), shifted_field(point))
    check_grads(shifted_field, x, modes=("fwd", "rev"))


def test_tangents_in_several_directions_equal_one_at_a_time():
    rng = np.random.default_rng(4)
    x, V = rng.random(600), rng.standard_normal((3, 600))
    tape = ad.record(shifted_field, x)
    xs = tape._inputs((x,))
    _, together = tape._tangent(xs, [V])
    for d in range(3):
        np.testing.assert_array_equal(together[d], tape._tangent(xs, [V[d:d + 1]])[1][0])
