"""Kept forward sweeps: a while loop's first steps reversed without a second
forward sweep (adsim/_loop_kept.pxi).

Without ``memory_limit`` the first pass of a reversed while loop runs its
steps as keeping sweeps and keeps what they leave, up to
``driver.KEPT_FORWARDS_BYTES``; their turns then run the adjoint sweep
alone. The derivatives must be bitwise those of the loop that keeps
nothing, whatever part of the steps was kept, across branch variants, and
the schedule's step counts must not change.
"""
import numpy as np
import pytest

import adsim
from adsim.checkpoint import driver
from adsim.integrate import solve_ivp

Y0 = np.array([0.3, -0.2, 0.5])
P = np.array([1.5, 0.8, -1.0])


def step(z, p):
    dt = 0.05
    # a limiter: each side is a variant of the step, taken as the state moves
    growth = np.where(z[1:] > 0.0, np.sin(p * z[1:]), 0.5 * np.tanh(p * z[1:]))
    if z[1] * p[0] > 0.2:
        growth = growth * 1.1
    return np.concatenate([z[:1] + dt, z[1:] + dt * growth])


def loss(y, p, stats=None, **options):
    z = adsim.checkpoint_while(lambda z, p: z[0] < 3.0, step,
                               np.concatenate([np.zeros(1), y]), args=(p,), stats=stats,
                               **options)
    return np.sum(z[1:] ** 2) + z[0] * z[1]


def gradient(allowance, monkeypatch, y=Y0, **options):
    monkeypatch.setattr(driver, "KEPT_FORWARDS_BYTES", allowance)
    stats = {}
    g = adsim.grad(lambda y, p: loss(y, p, stats, **options), argnums=(0, 1))(y, P)
    return g, stats


@pytest.mark.parametrize("snapshots", [4, 20, 200])
def test_kept_turns_give_the_same_bits(snapshots, monkeypatch):
    plain, plain_stats = gradient(0, monkeypatch, snapshots=snapshots)
    kept, kept_stats = gradient(2**30, monkeypatch, snapshots=snapshots)
    assert plain_stats["kept_steps"] == 0
    assert kept_stats["kept_steps"] == kept_stats["n_steps"] > 50
    for a, b in zip(plain, kept):
        assert np.array_equal(a, b)
    for key in ("taped_steps", "n_steps"):
        assert plain_stats[key] == kept_stats[key]
    # every step kept: the reversal takes no forward step past the first pass
    assert kept_stats["forward_steps"] == kept_stats["n_steps"]
    assert plain_stats["forward_steps"] >= kept_stats["n_steps"]


def test_an_allowance_spent_midway_keeps_the_first_steps(monkeypatch):
    plain, _ = gradient(0, monkeypatch)
    # one step's arena and pushed values take a few hundred bytes
    partial, stats = gradient(4000, monkeypatch)
    assert 0 < stats["kept_steps"] < stats["n_steps"]
    for a, b in zip(plain, partial):
        assert np.array_equal(a, b)


def test_points_on_other_paths_and_differences(monkeypatch):
    monkeypatch.setattr(driver, "KEPT_FORWARDS_BYTES", 2**30)
    g = adsim.grad(lambda y, p: loss(y, p), argnums=(0, 1))
    eps = 1e-7
    for scale in (1.0, -0.7, 2.0):
        y = scale * Y0
        gy, _ = g(y, P)
        fd = [(loss(y + eps * e, P) - loss(y - eps * e, P)) / (2 * eps) for e in np.eye(3)]
        np.testing.assert_allclose(gy, fd, rtol=1e-5, atol=1e-7)


def test_memory_limit_and_second_order_keep_nothing(monkeypatch):
    monkeypatch.setattr(driver, "KEPT_FORWARDS_BYTES", 2**30)
    _, stats = gradient(2**30, monkeypatch, memory_limit="10MB")
    assert stats["kept_steps"] == 0
    stats = {}
    v = np.array([0.1, -0.3, 0.2])
    h = adsim.hvp(lambda y: loss(y, P, stats), Y0, v)
    eps = 1e-6
    g = adsim.grad(lambda y: loss(y, P))
    np.testing.assert_allclose(h, (g(Y0 + eps * v) - g(Y0 - eps * v)) / (2 * eps),
                               rtol=1e-5, atol=1e-7)
    assert stats["kept_steps"] == 0


def test_adaptive_integration_with_rejected_steps(monkeypatch):
    def rhs(t, z, rates):
        x, y = z[0], z[1]
        return [rates[0] * x - rates[1] * x * y, rates[3] * x * y - rates[2] * y]

    def fit(y0, rates, stats=None):
        sol = solve_ivp(rhs, (0.0, 12.0), y0, args=(rates,), t_eval=np.linspace(1.0, 12.0, 12),
                        rtol=1e-4, atol=1e-6, stats=stats)
        return np.sum(sol.y ** 2)
    y0, rates = np.array([10.0, 5.0]), np.array([1.0, 0.1, 1.5, 0.075])
    results = []
    for allowance in (0, 2**30):
        monkeypatch.setattr(driver, "KEPT_FORWARDS_BYTES", allowance)
        stats = []
        results.append((adsim.grad(lambda a, b: fit(a, b, stats), argnums=(0, 1))(y0, rates),
                        stats))
    (plain, plain_stats), (kept, kept_stats) = results
    assert sum(s.get("kept_steps", 0) for s in kept_stats) > 0
    for a, b in zip(plain, kept):
        assert np.array_equal(a, b)
