"""A checkpointed loop inside the step of another one.

The inner loop is an op of the outer step's tape; the outer executor
replays that tape per step, and the inner op's rules run their own executor
on each replay, keeping their forward pass for the reverse rule of the same
step replay (the step Replay's SweepContext). Derivatives agree with the
same loops written as plain Python loops, in every mode.
"""
import numpy as np
import pytest

import adsim

Y0 = np.array([0.3, -0.2, 0.6])
P = np.array([0.8, 1.1, -0.5])


def inner_step(y, p):
    return y + 0.05 * np.sin(p * y) - 0.02 * y * np.roll(y, 1)


def outer_step(y, p, inner):
    return 0.9 * inner(y, p) + 0.1 * np.cos(y[::-1])


def checkpointed(options):
    def inner(y, p):
        return adsim.checkpoint_loop(inner_step, y, 7, args=(p,), **options)

    def f(y, p):
        return np.sum(adsim.checkpoint_loop(outer_step, y, 9, args=(p, inner), **options) ** 2)
    return f


def plain(y, p):
    def inner(y, p):
        for _ in range(7):
            y = inner_step(y, p)
        return y
    for _ in range(9):
        y = outer_step(y, p, inner)
    return np.sum(y ** 2)


@pytest.mark.parametrize("options", [{"snapshots": 2}, {"snapshots": 20}, {"memory_limit": "1MB"}],
                         ids=["few", "many", "budget"])
def test_nested_loops_match_plain_loops(options):
    f = checkpointed(options)
    got = adsim.grad(f, argnums=(0, 1))(Y0, P)
    want = adsim.grad(plain, argnums=(0, 1))(Y0, P)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    v = np.array([1.0, -0.5, 0.25])
    np.testing.assert_allclose(adsim.hvp(f, Y0, v, P), adsim.hvp(plain, Y0, v, P),
                               rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(adsim.jvp(lambda y: f(y, P), Y0, v)[1],
                               adsim.jvp(lambda y: plain(y, P), Y0, v)[1], rtol=1e-12)
