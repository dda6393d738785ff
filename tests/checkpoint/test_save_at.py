"""``checkpoint_loop(..., save_at=...)``: states at several step counts from
one loop op. The executor copies them out on its first pass and adds their
adjoints as its reverse sweep goes back through them, so a loss that reads
the loop at many times makes no extra pass and no Python call per output.
Derivatives are compared with the same loop written as a plain Python loop
(the same floating-point operations: agreement to rounding), for every
mode, schedule and state layout.
"""
import numpy as np
import pytest

import adsim
from adsim.sparse.pattern import jacobian_pattern

Y0 = np.array([0.3, -0.5, 0.8, 0.1])
P = np.array([1.1, 0.7, -0.4, 2.0])
N = 23
SAVE = [5, 0, 23, 12, 12, 1]          # unsorted, repeated, both ends


def step(y, p):
    return y + 0.1 * np.sin(p * y) * np.cos(y[::-1]) + 0.01 * np.roll(y, 1) ** 2


def plain_states(y, p, n=N, save_at=SAVE):
    states = [y]
    for _ in range(n):
        states.append(step(states[-1], p))
    return states[-1], [states[k] for k in save_at]


def weights(k, size):
    return np.cos(np.arange(k * size, dtype=float)).reshape(k, size)


def loss_checkpointed(**options):
    def loss(y, p):
        final, saved = adsim.checkpoint_loop(step, y, N, args=(p,), save_at=SAVE, **options)
        return np.sum(final ** 3) + np.sum(weights(len(SAVE), 4) * np.sin(saved))
    return loss


def loss_plain(y, p):
    final, saved = plain_states(y, p)
    return np.sum(final ** 3) + np.sum(weights(len(SAVE), 4) * np.sin(np.stack(saved)))


def close(a, b, rtol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


OPTIONS = {"revolve": {"snapshots": 3}, "one_snapshot": {"snapshots": 1},
           "many": {"snapshots": 40}, "budget": {"memory_limit": "200kB"},
           "online": {"schedule": adsim.Online(4)}}


@pytest.mark.parametrize("which", sorted(OPTIONS))
def test_derivatives_match_the_plain_loop(which):
    f = loss_checkpointed(**OPTIONS[which])
    for a, b in zip(adsim.grad(f, argnums=(0, 1))(Y0, P), adsim.grad(loss_plain, argnums=(0, 1))(Y0, P)):
        close(a, b)
    v = np.array([0.5, -1.0, 0.25, 2.0])
    close(adsim.hvp(f, Y0, v, P), adsim.hvp(loss_plain, Y0, v, P), 1e-11)
    close(adsim.jvp(lambda y: f(y, P), Y0, v)[1], adsim.jvp(lambda y: loss_plain(y, P), Y0, v)[1])


def test_values_and_vjp_of_the_saved_states():
    def states(y, p):
        final, saved = adsim.checkpoint_loop(step, y, N, args=(p,), save_at=SAVE, snapshots=2)
        return np.concatenate([final, saved.reshape(-1)])

    def plain(y, p):
        final, saved = plain_states(y, p)
        return np.concatenate([final, np.stack(saved).reshape(-1)])
    close(adsim.record(states, Y0, P).forward(Y0, P), plain(Y0, P), 0)
    w = np.sin(np.arange(4.0 * (1 + len(SAVE))))
    for a, b in zip(adsim.vjp(states, (Y0, P), w)[1], adsim.vjp(plain, (Y0, P), w)[1]):
        close(a, b)


def test_disk_snapshots(tmp_path):
    f = loss_checkpointed(schedule=adsim.TwoLevel(N, 1, 3), snapshot_dir=tmp_path)
    for a, b in zip(adsim.grad(f, argnums=(0, 1))(Y0, P), adsim.grad(loss_plain, argnums=(0, 1))(Y0, P)):
        close(a, b)
    assert list(tmp_path.iterdir()) == []


def pair_step(state, k):
    x, v = state
    return x + 0.1 * v.reshape(2, 3), v - 0.1 * (k * np.sin(x)).reshape(-1)


def test_tuple_state_and_plain_call():
    x0, v0, k = np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0.5, -0.5, 6), np.ones((2, 3))
    final, saved = adsim.checkpoint_loop(pair_step, (x0, v0), 4, args=(k,), save_at=[4, 0, 2])
    assert isinstance(saved, tuple) and saved[0].shape == (3, 2, 3) and saved[1].shape == (3, 6)
    np.testing.assert_array_equal(saved[0][1], x0)
    np.testing.assert_array_equal(saved[0][0], final[0])

    def loss(x0, v0):
        final, (xs, vs) = adsim.checkpoint_loop(pair_step, (x0, v0), 4, args=(k,),
                                                save_at=[4, 0, 2], snapshots=2)
        return np.sum(final[0] ** 2) + np.sum(xs[2] * vs[2].reshape(2, 3))

    def plain(x0, v0):
        state = (x0, v0)
        states = [state]
        for _ in range(4):
            state = pair_step(state, k)
            states.append(state)
        return np.sum(state[0] ** 2) + np.sum(states[2][0] * states[2][1].reshape(2, 3))
    assert np.isclose(adsim.record(loss, x0, v0).forward(x0, v0), plain(x0, v0), rtol=1e-14)
    for a, b in zip(adsim.grad(loss, argnums=(0, 1))(x0, v0), adsim.grad(plain, argnums=(0, 1))(x0, v0)):
        close(a, b)


def test_sparsity_pattern_of_the_saved_states():
    def local(y, p):
        return y + 0.1 * p * np.sin(y)          # each element on its own: diagonal Jacobian

    def states(y):
        final, saved = adsim.checkpoint_loop(local, y, 5, args=(P,), save_at=[0, 3])
        return np.concatenate([final, saved.reshape(-1)])
    pattern = jacobian_pattern(adsim.record(states, Y0)).toarray()
    np.testing.assert_array_equal(pattern, np.vstack([np.eye(4, dtype=bool)] * 3))


@pytest.mark.parametrize(("save_at", "error", "match"), [
    ([3, 24], ValueError, "outside 0..23"), ([-1], ValueError, "outside 0..23"),
    ([1.5], TypeError, "step counts"), ([[1, 2]], TypeError, "step counts"),
    ([True], TypeError, "step counts")])
def test_bad_save_at(save_at, error, match):
    with pytest.raises(error, match=match):
        adsim.grad(lambda y: np.sum(adsim.checkpoint_loop(step, y, N, args=(P,),
                                                          save_at=save_at)[0]))(Y0)
