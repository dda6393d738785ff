"""Sparsity through checkpointed loops: the step's pattern, iterated."""
import numpy as np

import adsim as ad


def diffusion_step(y, p):
    return y + 0.1 * (np.roll(y, 1) - 2 * y + np.roll(y, -1)) + 0.01 * p * y * y


def test_loop_pattern_is_the_iterated_step_pattern():
    y0, p = np.linspace(0.0, 1.0, 16), np.full(16, 0.5)
    for n_steps in (1, 3, 5):
        F = lambda y, q: ad.checkpoint_loop(diffusion_step, y, n_steps, args=(q,), snapshots=2)  # noqa: E731
        P = ad.jacobian_sparsity(F, y0, p).toarray()
        J = ad.jacobian(F)(y0, p)
        band = np.abs(np.subtract.outer(np.arange(16), np.arange(16)))
        band = np.minimum(band, 16 - band) <= n_steps          # periodic band of width n
        assert np.array_equal(P, band) and np.array_equal(P, J != 0)


def test_sparse_jacobian_through_a_loop_equals_the_dense_one():
    y0, p = np.linspace(0.0, 1.0, 16), np.full(16, 0.5)
    F = lambda y: ad.checkpoint_loop(diffusion_step, y, 4, args=(p,), snapshots=2)  # noqa: E731
    assert np.allclose(ad.sparse_jacobian(F, y0).toarray(), ad.jacobian(F)(y0), rtol=1e-13, atol=1e-15)
