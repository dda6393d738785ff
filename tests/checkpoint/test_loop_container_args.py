"""Parameters in a dict, list or tuple passed through ``args=`` of a
checkpointed loop: the step (and the condition) get the container as
given; its active values are loop inputs, its plain numbers constants."""
import numpy as np
import pytest

import adsim

THETA = np.array([0.8, 0.5])


def step(z, p):
    return z + 0.01 * (p["a"] * z - p["b"][0] * z ** 2 * p["b"][1])


def unrolled(theta, n):
    p = {"a": theta[0], "b": (theta[1], 2.0)}
    z = np.linspace(0.5, 1.5, 4)
    for _ in range(n):
        z = step(z, p)
    return np.sum(z ** 2)


def test_checkpoint_loop_with_a_dict():
    def loss(theta):
        p = {"a": theta[0], "b": (theta[1], 2.0)}
        z = adsim.checkpoint_loop(step, np.linspace(0.5, 1.5, 4), 60, args=(p,), snapshots=4)
        return np.sum(z ** 2)
    np.testing.assert_allclose(adsim.grad(loss)(THETA), adsim.grad(unrolled)(THETA, 60),
                               rtol=1e-12)
    v = np.array([0.3, -0.7])
    np.testing.assert_allclose(adsim.hvp(loss, THETA, v),
                               adsim.hvp(lambda t: unrolled(t, 60), THETA, v), rtol=1e-10)


def test_checkpoint_while_with_a_dict_read_by_the_condition():
    def cond(z, p):
        return z[0] < p["stop"]

    def loss(theta):
        p = {"a": theta[0], "b": (theta[1], 2.0), "stop": 0.7}
        z = adsim.checkpoint_while(cond, step, np.linspace(0.5, 1.5, 4), args=(p,),
                                   snapshots=3)
        return np.sum(z ** 2)

    def plain(theta):
        p = {"a": theta[0], "b": (theta[1], 2.0)}
        z = np.linspace(0.5, 1.5, 4)
        while adsim.value(z[0]) < 0.7:
            z = step(z, p)
        return np.sum(z ** 2)
    np.testing.assert_allclose(adsim.grad(loss)(THETA), adsim.grad(plain)(THETA), rtol=1e-12)


def test_a_dict_read_from_the_closure_of_the_step():
    def loss(theta):
        p = {"a": theta[0], "b": (theta[1], 2.0)}
        z = adsim.checkpoint_loop(lambda z: step(z, p), np.linspace(0.5, 1.5, 4), 60,
                                  snapshots=4)
        return np.sum(z ** 2)
    np.testing.assert_allclose(adsim.grad(loss)(THETA), adsim.grad(unrolled)(THETA, 60),
                               rtol=1e-12)
    # the closure holds the caller's dict again afterwards
    p = {"a": 1.0}
    f = (lambda z: z * p["a"])
    adsim.grad(lambda a: np.sum(adsim.checkpoint_loop(
        lambda z: f(z) * a, np.ones(2), 3)))(np.array(1.1))
    assert p == {"a": 1.0} and f.__closure__[0].cell_contents is p


_GLOBAL_RATE = None


def test_an_active_global_read_by_the_step_is_an_input_of_the_loop():
    def step_with_global(z):
        return z * _GLOBAL_RATE

    def loss(k):
        global _GLOBAL_RATE
        _GLOBAL_RATE = k
        try:
            return np.sum(adsim.checkpoint_loop(step_with_global, np.ones(2), 3))
        finally:
            _GLOBAL_RATE = None
    k = np.array(1.1)
    assert adsim.grad(loss)(k) == pytest.approx(2 * 3 * k ** 2, rel=1e-14)
    tape = adsim.record(loss, k)
    assert tape.gradient(np.array(0.5)) == pytest.approx(2 * 3 * 0.25, rel=1e-14)
    assert _GLOBAL_RATE is None
