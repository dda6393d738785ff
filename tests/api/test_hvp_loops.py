"""Hessian-vector products through checkpointed loops.

``checkpoint_loop`` and ``checkpoint_while`` record one op whose second-order
rule replays the step's tangent sweep to advance and its second-order
adjoint sweep to reverse one step, along a Revolve (or online) schedule.
Products are compared with central differences of the gradient, with
second differences of the plain NumPy function (no adsim involved) and with
the same loop written as a plain Python loop, for several snapshot counts
(from one snapshot, the most recomputation, to one per step).
"""
import numpy as np
import pytest

import adsim
from adsim.checkpoint import binomial_cost
from fdcheck import assert_close, central

N, M, DT = 12, 4, 0.1          # steps, state size, time step
T_END = 1.0                    # checkpoint_while runs until t reaches T_END


def step(u, p):
    """One explicit step of a nonlinear system coupling u_i and u_{M-1-i}."""
    return u + DT * (np.sin(u) * p - u ** 3 / 3.0 + 0.3 * u[::-1] * u)


def loss(u, p):
    return np.sum(u ** 2) + np.sum(np.sin(u) * p)


def plain(z):
    """The loop as plain Python: z = (u0, p)."""
    u, p = z[:M], z[M:]
    for _ in range(N):
        u = step(u, p)
    return loss(u, p)


def checkpointed(snapshots, stats=None):
    def f(z):
        u = adsim.checkpoint_loop(step, z[:M], N, args=(z[M:],), snapshots=snapshots, stats=stats)
        return loss(u, z[M:])
    return f


def second_difference(f, x, v, h=1e-3):
    def at(t):
        return float(f(x + t * v))
    return (16.0 * (at(h) + at(-h)) - (at(2 * h) + at(-2 * h)) - 30.0 * at(0.0)) / (12.0 * h * h)


def check_against_plain(f, f_plain, z, seed, k=3):
    """hvp of f against the plain loop, differences of the gradient, second
    differences of f_plain, and vector mode against single directions."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(z.shape)
    hv = adsim.hvp(f, z, v)
    scale = 1.0 + np.max(np.abs(hv))
    assert_close(hv, adsim.hvp(f_plain, z, v), 1e-12, 1e-13 * scale, "H v vs the plain loop")
    assert_close(hv, central(adsim.grad(f), [z], [v]), 1e-7, 1e-7 * scale,
                 "H v vs central differences of the gradient")
    want = second_difference(f_plain, z, v)
    assert abs(v @ hv - want) <= 1e-6 * (1.0 + abs(want)), (v @ hv, want)
    V = rng.standard_normal(z.shape + (k,))
    HV = adsim.hvp(f, z, V)
    for j in range(k):
        assert_close(HV[:, j], adsim.hvp(f, z, V[:, j]), 1e-13, 1e-13 * scale,
                     "one direction of vector mode vs a single call")
    g, _ = adsim.grad_and_hvp(f, z, v)
    assert_close(g, adsim.grad(f_plain)(z), 1e-12, 1e-13 * scale, "gradient of grad_and_hvp")
    return hv


@pytest.fixture
def z():
    return np.random.default_rng(0).uniform(-1.0, 1.0, 2 * M)


@pytest.mark.parametrize("snapshots", [1, 2, 3, 5, N])
def test_checkpoint_loop_hvp(z, snapshots):
    stats = {}
    f = checkpointed(snapshots, stats)
    check_against_plain(f, plain, z, seed=snapshots)
    adsim.hvp(f, z, np.ones(2 * M))
    assert stats["snapshots"] == snapshots
    assert stats["taped_steps"] == N
    assert stats["forward_steps"] == binomial_cost(N, snapshots)


def test_checkpoint_loop_dense_hessian_and_operator(z):
    f = checkpointed(3)
    H = adsim.hessian(f)(z)
    assert_close(H, adsim.hessian(plain)(z), 1e-12, 1e-12 * np.max(np.abs(H)))
    op = adsim.hvp_operator(f, z)
    assert_close(op @ np.eye(2 * M), H, 1e-12, 1e-12 * np.max(np.abs(H)))
    assert_close(adsim.laplacian(f)(z), np.trace(H), 1e-12, 1e-12)


def test_checkpoint_loop_hvp_at_new_points_and_between_other_sweeps(z):
    """The cached tape's loop op serves hvp, grad and values at changing
    points without stale snapshots."""
    f = checkpointed(2)
    rng = np.random.default_rng(1)
    for i in range(4):
        x = z + 0.1 * i
        v = rng.standard_normal(2 * M)
        assert_close(adsim.grad(f)(x), adsim.grad(plain)(x), 1e-12, 1e-13)
        assert_close(adsim.hvp(f, x, v), adsim.hvp(plain, x, v), 1e-12, 1e-12)
        assert_close(adsim.jvp(f, x, v)[1], adsim.jvp(plain, x, v)[1], 1e-12, 1e-13)


def test_checkpoint_loop_with_schedule_object(z):
    def f(x):
        u = adsim.checkpoint_loop(step, x[:M], N, args=(x[M:],),
                                  schedule=lambda n: adsim.Revolve(n, snapshots=3))
        return loss(u, x[M:])
    v = np.random.default_rng(2).standard_normal(2 * M)
    assert_close(adsim.hvp(f, z, v), adsim.hvp(plain, z, v), 1e-12, 1e-12)


def test_checkpoint_loop_with_snapshots_on_disk(z, tmp_path):
    """A memory budget that holds the step's tape but few snapshots: the rest
    go to disk (a two-level schedule). The smallest such budget is found by
    raising it one state size at a time."""
    v = np.random.default_rng(3).standard_normal(2 * M)
    stats = {}

    def on_disk(budget):
        def f(x):
            u = adsim.checkpoint_loop(step, x[:M], N, args=(x[M:],), memory_limit=budget,
                                      snapshot_dir=str(tmp_path), stats=stats)
            return loss(u, x[M:])
        return f
    budget = 8 * M
    while True:
        try:
            hv = adsim.hvp(on_disk(budget), z, v)
            break
        except adsim.MemoryBudgetError:
            budget += 8 * M
            assert budget < 2 ** 20
    assert stats["schedule"].startswith("TwoLevel"), stats
    assert_close(hv, adsim.hvp(plain, z, v), 1e-12, 1e-12)
    assert list(tmp_path.iterdir()) == []


def verlet(state, k):
    """Störmer–Verlet step of pendulums q'' = -k sin q (a tuple state)."""
    q, p = state
    p = p - 0.5 * DT * k * np.sin(q)
    q = q + DT * p
    return q, p - 0.5 * DT * k * np.sin(q)


def pendulum_plain(z):
    q, p, k = z[:M], z[M:2 * M], z[2 * M:]
    for _ in range(N):
        q, p = verlet((q, p), k)
    return np.sum(np.cos(q) * p ** 2) + np.sum(q * k)


@pytest.mark.parametrize("snapshots", [1, 4])
def test_checkpoint_loop_tuple_state_and_active_args(snapshots):
    def f(z):
        q, p = adsim.checkpoint_loop(verlet, (z[:M], z[M:2 * M]), N, args=(z[2 * M:],),
                                     snapshots=snapshots)
        return np.sum(np.cos(q) * p ** 2) + np.sum(q * z[2 * M:])
    z = np.random.default_rng(3).uniform(0.5, 1.5, 3 * M)
    check_against_plain(f, pendulum_plain, z, seed=3 + snapshots)


def test_checkpoint_loop_with_constant_args():
    """An argument that is a constant array (a tape input of the loop op)."""
    p = np.array([0.5, -1.0, 1.5, 0.2])

    def f(u0):
        return loss(adsim.checkpoint_loop(step, u0, N, args=(p,), snapshots=2), p)

    def f_plain(u0):
        u = u0
        for _ in range(N):
            u = step(u, p)
        return loss(u, p)
    u0 = np.random.default_rng(4).uniform(-1.0, 1.0, M)
    check_against_plain(f, f_plain, u0, seed=4)


# ---------------------------------------------------------- checkpoint_while

def timed_step(state, p):
    u, t = state
    return step(u, p), t + DT


def before_end(state, *args):
    return state[1][0] < T_END - 1e-9


def while_plain(z):
    u, t, p = z[:M], np.zeros(1), z[M:]
    while t[0] < T_END - 1e-9:
        u, t = timed_step((u, t), p)
    return loss(u, p)


@pytest.mark.parametrize("snapshots", [1, 2, 3, 20])
def test_checkpoint_while_hvp(z, snapshots):
    stats = {}

    def f(x):
        u, _ = adsim.checkpoint_while(before_end, timed_step, (x[:M], np.zeros(1)), args=(x[M:],),
                                      snapshots=snapshots, stats=stats)
        return loss(u, x[M:])
    check_against_plain(f, while_plain, z, seed=10 + snapshots)
    assert stats["n_steps"] == round(T_END / DT)
    assert stats["taped_steps"] == stats["n_steps"]


def test_checkpoint_while_hvp_with_state_dependent_stop():
    """The step count depends on the state (away from the threshold, so that
    differences do not change it); each call counts again."""
    def cond(state, *args):
        return np.sum(state[0] ** 2) < 4.0

    def grow(state, p):
        u, t = state
        return u * (1.0 + DT * p ** 2) + DT * np.sin(u), t + 1.0

    def f(x):
        u, _ = adsim.checkpoint_while(cond, grow, (x[:M], np.zeros(1)), args=(x[M:],), snapshots=3)
        return np.sum(u ** 3)

    def f_plain(x):
        u, t, p = x[:M], np.zeros(1), x[M:]
        while cond((u, t)):
            u, t = grow((u, t), p)
        return np.sum(u ** 3)
    z = np.array([0.3, -0.2, 0.25, 0.1, 0.9, 1.1, 0.8, 1.2])
    check_against_plain(f, f_plain, z, seed=30)
