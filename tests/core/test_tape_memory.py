"""Slot reuse and the value stack: memory follows live values, and only the
overwritten values a reverse sweep reads are saved, yet derivatives stay exact."""
import numpy as np
import pytest

import adsim
from adsim._decoder import decode
from adsim.testing import check_grads


def nonlinear_chain(x):
    y = x
    for k in range(25):            # temporaries die at once: their slots are reused
        y = np.sin(y) * y + np.exp(-y * y) / (2.0 + k) + y[::-1] * 0.1
    return y


def linear_chain(x):
    y = x
    for k in range(25):
        y = 0.5 * y + y[::-1] - 0.25 * (y + 1.0)
    return y


@pytest.mark.parametrize("f", [nonlinear_chain, linear_chain])
def test_reused_slots_keep_derivatives_exact(f):
    x = np.linspace(-0.7, 0.9, 6)
    check_grads(f, x, modes=("fwd", "rev"), order=2)


def test_arena_holds_live_values_not_every_result():
    x = np.linspace(-0.7, 0.9, 1000)
    tape = adsim.record(lambda z: np.sum(nonlinear_chain(z)), x)
    stats = tape.stats()
    results = sum(tape.slot_size_of(o.result) for o in decode(tape)[1] if o.result >= 0)
    assert stats["arena_elements"] < results / 10


def test_linear_ops_save_nothing_when_their_slots_are_reused():
    x = np.linspace(-0.7, 0.9, 1000)
    lin = adsim.record(lambda z: np.sum(linear_chain(z)), x)
    non = adsim.record(lambda z: np.sum(nonlinear_chain(z)), x)
    lin.gradient(x)
    non.gradient(x)
    assert lin.stats()["bytes"]["value_stack_peak"] == 0
    assert non.stats()["bytes"]["value_stack_peak"] > 0


def test_in_place_updates_save_only_the_overwritten_part():
    def f(z):
        y = z * z
        for i in range(50):
            y[i] = np.sin(y[i + 1])        # overwrites one element a reverse sweep needs
        return np.sum(y * y)
    x = np.linspace(0.1, 1.0, 400)
    tape = adsim.record(f, x)
    tape.gradient(x)
    # one element per update and the scalar temporaries, not 400 values per update
    assert tape.stats()["bytes"]["value_stack_peak"] <= 8 * 4 * 50
    check_grads(f, x[:60], modes=("fwd", "rev"), order=2)


def test_interleaved_sweeps_reuse_work_buffers_correctly():
    """A reverse sweep leaves its adjoint buffer zero, so the next one skips
    clearing it; any other sweep in between must not leave stale values."""
    x = np.linspace(-0.7, 0.9, 7)
    f = lambda z: np.sum(nonlinear_chain(z) ** 2)  # noqa: E731
    F = lambda z: nonlinear_chain(z)  # noqa: E731
    tape, vtape = adsim.record(f, x), adsim.record(F, x)
    g0 = adsim.record(f, x).gradient(x)
    rng = np.random.default_rng(3)
    v, W = rng.standard_normal(7), rng.standard_normal((7, 3))
    hv0 = adsim.record(f, x).hvp(x, v)
    for _ in range(3):
        assert np.array_equal(tape.gradient(x), g0)
        tape.jvp(x, v)
        assert np.array_equal(tape.hvp(x, v), hv0)
        assert np.array_equal(tape.gradient(x), g0)
        _, JW = vtape.vjp(x, W)
        assert np.allclose(JW[:, 1], vtape.vjp(x, W[:, 1])[1], rtol=1e-14, atol=1e-14)
