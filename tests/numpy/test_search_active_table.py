"""np.searchsorted in a table that depends on the inputs: systematic
resampling of a particle filter (positions in the cumulative sum of the
weights), inverse-CDF lookups. The positions are piecewise constant, so no
derivative flows through them; a replay where the table's order or a value's
interval differs leaves the recorded path (BranchChanged), and the
functional API records again."""
import numpy as np
import pytest

import adsim as ad
from fdcheck import check_tape, fd_jacobian


def resample(log_w, particles=np.linspace(-1.0, 1.0, 8)):
    """Systematic resampling (weights from log-weights), then the mean of the
    survivors weighted by their normalised weights."""
    w = np.exp(log_w - np.max(log_w))
    w = w / np.sum(w)
    c = np.cumsum(w)
    c[-1] = 1.0                              # guard against round-off, as filters do
    u = (np.arange(w.size) + 0.37) / w.size
    idx = np.searchsorted(c, u)
    return np.sum(particles[idx] * w[idx]) + np.sum(w ** 2)


def inverse_cdf(p):
    """Active table and active queries: where p[3:] fall in the cumsum of p[:3]."""
    table = np.cumsum(p[:3] ** 2)
    i = np.searchsorted(table, p[3:], side="right")
    return np.sum(p[3:] * np.take(table, np.minimum(i, 2)))


LOG_W = np.array([0.1, -0.3, 0.5, 0.0, -1.0, 0.2, 0.4, -0.2])
P = np.array([0.6, 0.8, 0.9, 0.5, 1.2])


@pytest.mark.parametrize("f, x", [(resample, LOG_W), (inverse_cdf, P)])
def test_every_sweep_against_differences(f, x):
    check_tape(f, [x])


def test_gradient_and_positions_as_numpy_gives_them():
    g = ad.grad(resample)(LOG_W)
    np.testing.assert_allclose(g, fd_jacobian(resample, [LOG_W])[0], rtol=1e-7, atol=1e-9)
    tape = ad.record(resample, LOG_W)
    np.testing.assert_allclose(tape.forward(LOG_W), resample(LOG_W), rtol=1e-15)


def test_a_replay_where_positions_change_leaves_the_recorded_path():
    tape = ad.record(inverse_cdf, P)
    moved = P.copy()
    moved[3] = 1.1                  # table [0.36, 1.0, 1.81]: from interval 1 to interval 2
    with pytest.raises(ad.BranchChanged):
        tape.forward(moved)
    assert np.isclose(ad.grad(inverse_cdf)(moved) @ np.ones(5),
                      fd_jacobian(inverse_cdf, [moved])[0] @ np.ones(5))


def test_a_table_out_of_order_at_a_replay_leaves_the_recorded_path():
    tape = ad.record(lambda t: np.searchsorted(t, 0.5) * t[0] + np.sum(t), np.array([0.1, 0.4, 0.9]))
    with pytest.raises(ad.BranchChanged):
        tape.forward(np.array([0.1, 0.95, 0.9]))


@pytest.mark.parametrize("side", ["left", "right"])
def test_ties_follow_numpy_side(side):
    t0 = np.array([0.0, 0.5, 0.5, 1.0])
    f = lambda t: t[np.minimum(np.searchsorted(t, np.array([0.5, 0.25]), side=side), 3)] * 2.0
    tape = ad.record(f, t0)
    np.testing.assert_array_equal(tape.forward(t0), f(t0))
    shifted = t0 + np.array([0.0, 0.0, 1e-9, 0.0])     # the tie broken: NumPy's answer may move
    try:
        out = tape.forward(shifted)
    except ad.BranchChanged:
        return
    np.testing.assert_array_equal(out, f(shifted))


def test_unsorted_active_table_is_refused_by_name():
    with pytest.raises(ad.UnsupportedOperation, match="not sorted"):
        ad.grad(lambda t: np.sum(t) * np.searchsorted(t, 0.5))(np.array([0.9, 0.1, 0.4]))


def test_sorter_and_constant_tables():
    t0 = np.array([0.9, 0.1, 0.4])
    f = lambda t: np.sum(t[:2] * np.searchsorted(t, np.array([0.2, 0.5]), sorter=np.argsort(t0)))
    np.testing.assert_allclose(ad.grad(f)(t0), fd_jacobian(f, [t0])[0], rtol=1e-7)
    g = lambda x: x[0] * np.searchsorted(np.cumsum(np.array([0.2, 0.3])), 0.4)
    np.testing.assert_allclose(ad.grad(g)(np.array([2.0])), [1.0])
