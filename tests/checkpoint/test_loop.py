"""Checkpointed loops against the same loop fully taped.

Every test writes one loop twice: as ``adsim.checkpoint_loop`` /
``adsim.checkpoint_while`` (a sub-tape of one step replayed along a
checkpoint schedule) and as a plain Python ``for``/``while`` loop that the
enclosing recording tapes step by step. Both run the same floating-point
operations, so derivatives must agree to rounding (relative 1e-12) for every
schedule, snapshot count, mode (gradient, vjp, jvp, Jacobian, hvp), state
layout and control path. The work counts in ``stats`` are checked against
the binomial optimum (Griewank 1992; Griewank & Walther, ACM TOMS 26(1),
2000) and the online schedule's own count.
"""
import math
import os
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim
from adsim.errors import LoopDidNotStop
from adsim.checkpoint import Online, Revolve
from adsim.checkpoint import driver as checkpoint_driver
from snapshot_files import held_files
from adsim.checkpoint.loop import _SNAPSHOT_OVERHEAD as SNAPSHOT_OVERHEAD

RTOL = 1e-12


def assert_rel(got, want, rtol=RTOL, what="derivative"):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
    err = float(np.max(np.abs(got - want), initial=0.0)) / scale
    assert err <= rtol, f"{what}: relative difference {err:.2e} > {rtol:.0e}"


def assert_all_rel(got, want, rtol=RTOL):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert_rel(a, b, rtol, what=f"derivative {i}")


# ------------------------------------------------------------- the test loops

def step(y, p, dt):
    """A nonlinear step coupling all components (reversal mixes them)."""
    return y + dt * np.sin(p * y) * np.cos(y[::-1]) + dt * 0.1 * np.roll(y, 1) ** 2


def plain_loop(step_fn, state, n_steps, args=()):
    for _ in range(n_steps):
        state = step_fn(state, *args)
    return state


Y0 = np.array([0.3, -0.5, 0.8, 0.1])
P = np.array([1.1, 0.7, -0.4, 2.0])
DT = 0.1


def loss_checkpointed(n_steps, **options):
    def loss(y0, p):
        y = adsim.checkpoint_loop(step, y0, n_steps, args=(p, DT), **options)
        return np.sum(y ** 2) + y[0] * y[-1]
    return loss


def loss_plain(n_steps):
    def loss(y0, p):
        y = plain_loop(step, y0, n_steps, (p, DT))
        return np.sum(y ** 2) + y[0] * y[-1]
    return loss


def state_checkpointed(n_steps, **options):
    return lambda y0, p: adsim.checkpoint_loop(step, y0, n_steps, args=(p, DT), **options)


def state_plain(n_steps):
    return lambda y0, p: plain_loop(step, y0, n_steps, (p, DT))


def gradients(loss, *xs):
    return adsim.grad(loss, argnums=tuple(range(len(xs))))(*xs)


# ------------------------------------------------------------- Revolve schedules

REVOLVE_CASES = [(1, 1), (2, 1), (7, 1), (7, 2), (12, 3), (12, 11), (12, 12), (12, 30),
                 (25, 4), (40, 6)]


@pytest.mark.parametrize(("n", "s"), REVOLVE_CASES)
def test_revolve_gradient_equals_plain_loop(n, s):
    stats = {}
    got = gradients(loss_checkpointed(n, snapshots=s, stats=stats), Y0, P)
    assert_all_rel(got, gradients(loss_plain(n), Y0, P))
    assert stats["forward_steps"] == Revolve(n, s).forward_steps
    assert stats["output_steps"] == 1          # the value pass resumed by the reverse sweep
    assert stats["taped_steps"] == n
    assert stats["snapshots"] == s
    assert stats["schedule"] == repr(Revolve(n, s))


def test_forward_steps_is_the_binomial_optimum():
    """r n - beta(s + 1, r - 1), r the smallest with beta(s, r) >= n."""
    n, s = 40, 4
    r = next(r for r in range(n) if math.comb(s + r, s) >= n)
    stats = {}
    gradients(loss_checkpointed(n, snapshots=s, stats=stats), Y0, P)
    assert stats["forward_steps"] == r * n - math.comb(s + r, s + 1) == 104


@pytest.mark.parametrize("n", [1, 5, 30])
def test_explicit_schedule_object_and_callable(n):
    want = gradients(loss_plain(n), Y0, P)
    stats = {}
    got = gradients(loss_checkpointed(n, schedule=adsim.Revolve(n, 3), stats=stats), Y0, P)
    assert_all_rel(got, want)
    assert stats["forward_steps"] == Revolve(n, 3).forward_steps
    stats = {}
    got = gradients(loss_checkpointed(n, schedule=lambda m: Revolve(m, 2), stats=stats), Y0, P)
    assert_all_rel(got, want)
    assert stats["schedule"] == repr(Revolve(n, 2))


def test_schedule_for_another_length_raises():
    with pytest.raises(ValueError, match="schedule is for 9 steps, the loop has 10"):
        gradients(loss_checkpointed(10, schedule=Revolve(9, 3)), Y0, P)


def test_default_snapshots_keep_recomputation_near_three():
    n = 500
    stats = {}
    gradients(loss_checkpointed(n, stats=stats), Y0, P)
    s = stats["snapshots"]
    assert math.comb(s + 3, 3) >= n > math.comb(s + 2, 3)
    assert stats["forward_steps"] == Revolve(n, s).forward_steps <= 3 * n


def test_gradient_of_a_cached_tape_at_new_points():
    """The outer tape is replayed, not recorded again: the loop op must use
    the new state and parameters."""
    g = adsim.grad(loss_checkpointed(20, snapshots=3), argnums=(0, 1))
    g(Y0, P)
    for scale in (0.5, 1.7):
        assert_all_rel(g(scale * Y0, P / scale), gradients(loss_plain(20), scale * Y0, P / scale))


# ------------------------------------------------------------- memory budget, disk

def minimum_budget(loss):
    """The smallest memory_limit, read from the MemoryBudgetError message."""
    with pytest.raises(adsim.MemoryBudgetError) as info:
        gradients(loss(1), Y0, P)
    found = re.search(r"smallest budget that works is (\d+) bytes", str(info.value))
    assert found, str(info.value)
    return int(found.group(1))


def budget_loss(n, **options):
    return lambda limit: loss_checkpointed(n, memory_limit=limit, **options)


def test_too_small_budget_raises_and_states_the_minimum():
    n = 30
    minimum = minimum_budget(budget_loss(n))
    with pytest.raises(MemoryError, match=f"smallest budget that works is {minimum} bytes"):
        gradients(budget_loss(n)(minimum - 1), Y0, P)
    stats = {}
    got = gradients(loss_checkpointed(n, memory_limit=minimum, stats=stats), Y0, P)
    assert stats["snapshots"] == 1
    assert_all_rel(got, gradients(loss_plain(n), Y0, P))


def test_budget_sets_the_snapshot_count():
    n = 30
    minimum = minimum_budget(budget_loss(n))
    state_nbytes = Y0.nbytes + SNAPSHOT_OVERHEAD
    want = gradients(loss_plain(n), Y0, P)
    for extra, snapshots in ((0, 1), (3, 4), (10, 11), (1000, n)):
        stats = {}
        got = gradients(loss_checkpointed(n, memory_limit=minimum + extra * state_nbytes,
                                          stats=stats), Y0, P)
        assert stats["snapshots"] == snapshots
        assert stats["forward_steps"] == Revolve(n, snapshots).forward_steps
        assert_all_rel(got, want)


def test_budget_as_text():
    stats = {}
    got = gradients(loss_checkpointed(30, memory_limit="1MB", stats=stats), Y0, P)
    assert stats["snapshots"] == 30
    assert_all_rel(got, gradients(loss_plain(30), Y0, P))


def test_two_level_memory_and_disk(tmp_path):
    n, memory = 30, 3
    minimum = minimum_budget(budget_loss(n))
    limit = minimum + (memory - 1) * (Y0.nbytes + SNAPSHOT_OVERHEAD)
    directory = tmp_path / "snapshots"          # created by the store, removed after
    seen = []
    stats = {}
    loss = loss_checkpointed(n, memory_limit=limit, snapshots=8, snapshot_dir=str(directory),
                             stats=stats,
                             progress=lambda done, total: seen.append(
                                 (held_files(directory), os.listdir(directory))))
    got = gradients(loss, Y0, P)
    assert_all_rel(got, gradients(loss_plain(n), Y0, P))
    assert stats["schedule"] == repr(adsim.TwoLevel(n, memory, 8 - memory))
    assert stats["forward_steps"] == Revolve(n, 8).forward_steps
    assert all(held == 1 for held, _ in seen), "no snapshot was written to disk"
    assert all(names == [] for _, names in seen), "a snapshot file had a name"
    assert not directory.exists()


class FailingIdentity:
    """An identity primitive that raises once it has been called ``limit``
    times: a user's step failing in the middle of a reverse sweep."""

    def __init__(self):
        self.calls = 0
        self.limit = math.inf
        self.op = adsim.primitive(self.value, jvp=lambda args, out, t: t[0],
                                  vjp=lambda args, out, w: (w,), name="failing_identity")

    def value(self, y):
        self.calls += 1
        if self.calls > self.limit:
            raise FloatingPointError("the step failed")
        return np.array(y, copy=True)


def test_disk_snapshots_removed_when_the_step_raises_mid_sweep(tmp_path):
    n = 30
    ident = FailingIdentity()

    def failing_step(y, p, dt):
        return ident.op(step(y, p, dt))

    def make_loss(directory, seen, limit):
        def loss(y0, p):
            y = adsim.checkpoint_loop(failing_step, y0, n, args=(p, DT), memory_limit=limit,
                                      snapshots=8, snapshot_dir=directory and str(directory),
                                      progress=lambda done, total: seen.append(
                                          (done, held_files(directory or "."))))
            return np.sum(y ** 2)
        return loss

    minimum = minimum_budget(lambda limit: make_loss(None, [], limit))
    limit = minimum + 2 * Y0.nbytes
    ident.calls = 0
    adsim.grad(make_loss(tmp_path / "full", [], limit))(Y0, P)
    total_calls = ident.calls                    # recording, forward pass and reverse sweep
    ident.calls, ident.limit = 0, total_calls - n
    seen = []
    directory = tmp_path / "failing"
    with pytest.raises(FloatingPointError, match="the step failed"):
        adsim.grad(make_loss(directory, seen, limit))(Y0, P)
    assert ident.calls == ident.limit + 1
    assert 0 < len(seen) < n, "the step should fail during the reverse sweep"
    assert any(held for _, held in seen), "no snapshot was on disk when the step failed"
    assert not directory.exists()
    assert not (tmp_path / "full").exists()


# ------------------------------------------------------------- progress

def test_progress_callback_counts_reversed_steps():
    calls = []
    gradients(loss_checkpointed(12, snapshots=3, progress=lambda d, t: calls.append((d, t))),
              Y0, P)
    assert calls == [(k, 12) for k in range(1, 13)]


def test_progress_bar_on_stderr(capsys):
    gradients(loss_checkpointed(12, snapshots=3, progress=True), Y0, P)
    err = capsys.readouterr().err
    assert err.startswith("adsim reverse sweep 100% 12/12 [") and err.endswith(" steps/s]\n")


# ------------------------------------------------------------- other modes

def test_jvp_through_the_loop():
    n = 15
    v = (np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.1, 0.2, -0.3, 0.4]))
    value_ck, tangent_ck = adsim.jvp(state_checkpointed(n, snapshots=2), (Y0, P), v)
    value_plain, tangent_plain = adsim.jvp(state_plain(n), (Y0, P), v)
    assert_rel(value_ck, value_plain)
    assert_rel(tangent_ck, tangent_plain)


def test_forward_mode_needs_no_recomputation():
    stats = {}
    adsim.jvp(state_checkpointed(15, stats=stats), (Y0, P), (np.ones(4), np.zeros(4)))
    assert stats["forward_steps"] == 15


def test_vjp_with_a_vector_output():
    n = 15
    w = np.array([0.5, -1.0, 2.0, 0.25])

    def run_ck(y, p):
        return np.tanh(adsim.checkpoint_loop(step, y, n, args=(p, DT), snapshots=3))

    def run_plain(y, p):
        return np.tanh(plain_loop(step, y, n, (p, DT)))
    value_ck, adjoint_ck = adsim.vjp(run_ck, (Y0, P), w)
    value_plain, adjoint_plain = adsim.vjp(run_plain, (Y0, P), w)
    assert_rel(value_ck, value_plain)
    assert_all_rel(adjoint_ck, adjoint_plain)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian_through_the_loop(mode):
    n = 10
    got = adsim.jacobian(state_checkpointed(n, snapshots=2), argnums=(0, 1), mode=mode)(Y0, P)
    assert_all_rel(got, adsim.jacobian(state_plain(n), argnums=(0, 1), mode=mode)(Y0, P))


def central_gradient_difference(grad_fn, x, v, h=1e-3):
    """H v by the fourth-order central stencil on the gradient."""
    plus, minus = grad_fn(x + h * v), grad_fn(x - h * v)
    plus2, minus2 = grad_fn(x + 2 * h * v), grad_fn(x - 2 * h * v)
    return (8.0 * (plus - minus) - (plus2 - minus2)) / (12.0 * h)


@pytest.mark.parametrize("s", [1, 3, 20])
def test_hvp_equals_differences_of_the_gradient(s):
    n = 15
    loss = loss_checkpointed(n, snapshots=s)
    v = np.array([0.3, -1.0, 0.7, 0.2])
    got = adsim.hvp(loss, Y0, v, P)
    assert_rel(got, adsim.hvp(loss_plain(n), Y0, v, P))
    assert_rel(got, central_gradient_difference(lambda y: adsim.grad(loss)(y, P), Y0, v), 1e-8)


def test_hvp_with_respect_to_parameters_and_several_directions():
    n = 12
    loss_ck = loss_checkpointed(n, snapshots=3)
    loss_pl = loss_plain(n)

    def p_first_ck(p, y):
        return loss_ck(y, p)

    def p_first_pl(p, y):
        return loss_pl(y, p)
    V = np.random.default_rng(0).standard_normal((4, 3))
    assert_rel(adsim.hvp(p_first_ck, P, V, Y0), adsim.hvp(p_first_pl, P, V, Y0))
    assert_rel(adsim.hessian(p_first_ck)(P, Y0), adsim.hessian(p_first_pl)(P, Y0))


# ------------------------------------------------------------- arguments

def test_vector_scalar_and_constant_arguments():
    """Adjoints accumulate over all steps for a vector parameter and a 0-d
    parameter; constant arrays (captured, or tape inputs not differentiated)
    and Python floats enter the step as constants."""
    n = 14
    A = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0],
                  [0.0, 0.0, 0.0, 1.0], [-1.0, 0.0, 0.0, 0.0]])

    def forced_step(y, p, c, A, B, dt):
        return y + dt * (c * np.tanh(A @ y) + p * np.sin(y) + B @ y)

    def loss_ck(p, theta, y0, B):
        c = theta[0]                  # a 0-d active parameter
        y = adsim.checkpoint_loop(forced_step, y0, n, args=(p, c, A, B, DT), snapshots=3)
        return np.sum(y ** 3) + theta[1] * y[0]

    def loss_pl(p, theta, y0, B):
        y = plain_loop(forced_step, y0, n, (p, theta[0], A, B, DT))
        return np.sum(y ** 3) + theta[1] * y[0]

    theta = np.array([0.8, -0.3])
    grad_ck = adsim.grad(loss_ck, argnums=(0, 1, 2))
    grad_pl = adsim.grad(loss_pl, argnums=(0, 1, 2))
    for B in (0.1 * np.eye(4), 0.2 * A.T):         # new B: the cached tape must use it
        assert_all_rel(grad_ck(P, theta, Y0, B), grad_pl(P, theta, Y0, B))


@pytest.mark.parametrize("c", [1.3, np.float64(1.3), np.array(1.3)], ids=["float", "float64", "0-d"])
def test_scalar_argument_differentiated_directly(c):
    def scaled_step(y, c, dt):
        return y + dt * c * np.sin(y) * np.cos(y[::-1])

    def loss_ck(c, y0):
        return np.sum(adsim.checkpoint_loop(scaled_step, y0, 12, args=(c, DT), snapshots=2) ** 2)

    def loss_pl(c, y0):
        return np.sum(plain_loop(scaled_step, y0, 12, (c, DT)) ** 2)
    got = adsim.grad(loss_ck, argnums=(0, 1))(c, Y0)
    assert np.shape(got[0]) == np.shape(c)
    assert_all_rel(got, adsim.grad(loss_pl, argnums=(0, 1))(c, Y0))


def test_inputs_only_in_the_arguments():
    """A constant initial state: only the parameters carry adjoints."""
    n = 12
    def run_ck(p):
        return np.sum(adsim.checkpoint_loop(step, Y0, n, args=(p, DT), snapshots=2) ** 2)

    def run_plain(p):
        return np.sum(plain_loop(step, Y0, n, (p, DT)) ** 2)
    assert_rel(adsim.grad(run_ck)(P), adsim.grad(run_plain)(P))


@pytest.mark.parametrize("which", ["index", "mask"])
def test_integer_and_boolean_array_arguments(which):
    index = np.array([3, 0, 1, 2])
    mask = np.array([True, False, True, True])

    def indexed_step(y, p, index):
        return y + DT * np.sin(p * y[index])

    def masked_step(y, p, mask):
        return y + DT * np.where(mask, np.sin(p * y), 0.0)
    step_fn, extra = (indexed_step, index) if which == "index" else (masked_step, mask)

    def run_ck(y):
        return np.sum(adsim.checkpoint_loop(step_fn, y, 6, args=(P, extra)) ** 2)

    def run_plain(y):
        return np.sum(plain_loop(step_fn, y, 6, (P, extra)) ** 2)
    assert_rel(adsim.grad(run_ck)(Y0), adsim.grad(run_plain)(Y0))


# ------------------------------------------------------------- state layouts

def oscillator_step(state, k, dt):
    """Symplectic Euler on a pendulum chain: state (positions (2, 3), velocities (6,))."""
    x, v = state
    v = v - dt * (k * np.sin(x)).reshape(-1) - dt * 0.1 * v ** 3
    return (x + dt * v.reshape(2, 3), v)


@pytest.mark.parametrize("s", [1, 4, 50])
def test_tuple_state(s):
    n = 20
    x0 = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    v0 = np.linspace(0.5, -0.5, 6)
    k = np.linspace(1.0, 2.0, 6).reshape(2, 3)

    def loss_ck(x0, v0, k):
        x, v = adsim.checkpoint_loop(oscillator_step, (x0, v0), n, args=(k, DT), snapshots=s)
        return np.sum(x ** 2) + np.sum(np.sin(v))

    def loss_pl(x0, v0, k):
        x, v = plain_loop(oscillator_step, (x0, v0), n, (k, DT))
        return np.sum(x ** 2) + np.sum(np.sin(v))
    assert_all_rel(gradients(loss_ck, x0, v0, k), gradients(loss_pl, x0, v0, k))
    vx = np.ones((2, 3))
    assert_rel(adsim.hvp(loss_ck, x0, vx, v0, k), adsim.hvp(loss_pl, x0, vx, v0, k))


def test_tuple_state_keeps_its_type_and_shapes():
    x0 = np.zeros((2, 3))
    v0 = np.ones(6)

    def check(x0):
        out = adsim.checkpoint_loop(oscillator_step, (x0, v0), 3, args=(np.ones((2, 3)), DT))
        assert isinstance(out, tuple) and out[0].shape == (2, 3) and out[1].shape == (6,)
        return np.sum(out[0])
    adsim.grad(check)(x0)


# ------------------------------------------------------------- branch changes

def if_step(y, p):
    """The Python branch depends on the state and flips during the loop."""
    if y[0] > 0.5:
        return y + 0.1 * np.sin(p * y)
    return y + 0.1 * p * np.cos(y)


def where_step(y, p):
    """Element-wise sides (np.where, np.maximum, np.abs) flip during the loop."""
    return y + 0.1 * (np.where(y > 0.4, p * y ** 2, np.maximum(y, -p)) - 0.05 * np.abs(y))


def branch_sides(step_fn, path):
    """The recorded outcomes of each step along a path of states."""
    if step_fn is if_step:
        return path[:, :1] > 0.5
    return np.concatenate([path > 0.4, path > -BRANCH_P, path > 0], axis=1)


BRANCH_Y0 = np.array([0.1, 0.2, -0.3])
BRANCH_P = np.array([0.9, 1.2, 0.5])


@pytest.mark.parametrize("step_fn", [if_step, where_step], ids=["if", "where"])
@pytest.mark.parametrize("s", [1, 3, 40])
def test_branch_change_inside_the_step(step_fn, s):
    n = 30
    path = [BRANCH_Y0]
    for _ in range(n):
        path.append(step_fn(path[-1], BRANCH_P))
    sides = branch_sides(step_fn, np.array(path))
    assert np.any(sides[1:] != sides[:-1]), "the test loop must change branch"

    def loss_ck(y0, p):
        return np.sum(adsim.checkpoint_loop(step_fn, y0, n, args=(p,), snapshots=s) ** 2)

    def loss_pl(y0, p):
        return np.sum(plain_loop(step_fn, y0, n, (p,)) ** 2)
    assert_all_rel(gradients(loss_ck, BRANCH_Y0, BRANCH_P), gradients(loss_pl, BRANCH_Y0, BRANCH_P))
    v = np.array([1.0, -1.0, 0.5])
    assert_rel(adsim.hvp(loss_ck, BRANCH_Y0, v, BRANCH_P),
               adsim.hvp(loss_pl, BRANCH_Y0, v, BRANCH_P))
    assert_rel(adsim.jvp(lambda y: loss_ck(y, BRANCH_P), BRANCH_Y0, v)[1],
               adsim.jvp(lambda y: loss_pl(y, BRANCH_P), BRANCH_Y0, v)[1])


def test_branch_pattern_changes_between_calls_of_a_cached_tape():
    n = 30

    def loss_ck(y0, p):
        return np.sum(adsim.checkpoint_loop(if_step, y0, n, args=(p,), snapshots=3) ** 2)
    def loss_pl(y0, p):
        return np.sum(plain_loop(if_step, y0, n, (p,)) ** 2)
    g = adsim.grad(loss_ck, argnums=(0, 1))
    for y0 in (BRANCH_Y0, BRANCH_Y0 + 0.6, BRANCH_Y0 - 0.4):
        assert_all_rel(g(y0, BRANCH_P), gradients(loss_pl, y0, BRANCH_P))


# ------------------------------------------------------------- checkpoint_while

T_END = 1.0


def time_cond(z, p):
    return z[0] < T_END


def time_step(z, p):
    """State (t, y); the step size shrinks with |y| and the last step is cut
    to land on T_END (a recorded np.minimum whose side flips)."""
    t, y = z[0], z[1:]
    h = np.minimum(0.06 / (1.0 + np.sum(y * y)), T_END - t)
    y_next = y + h * np.sin(p * y) + h * 0.2 * np.roll(y, 1)
    return np.concatenate([np.reshape(t + h, (1,)), y_next])


def while_loss_checkpointed(**options):
    def loss(y0, p):
        z = adsim.checkpoint_while(time_cond, time_step, np.concatenate([np.zeros(1), y0]),
                                   args=(p,), **options)
        return np.sum(z[1:] ** 2) + z[0] * z[1]
    return loss


def while_loss_plain(y0, p):
    z = np.concatenate([np.zeros(1), y0])
    while adsim.value(z)[0] < T_END:
        z = time_step(z, p)
    return np.sum(z[1:] ** 2) + z[0] * z[1]


W_Y0 = np.array([0.3, -0.2, 0.5])
W_P = np.array([1.5, 0.8, -1.0])


@pytest.mark.parametrize("s", [1, 2, 3, 5, 100])
def test_checkpoint_while_online_schedule(s, monkeypatch):
    # no kept forward sweeps: a loop whose steps are all kept skips the schedule
    monkeypatch.setattr(checkpoint_driver, "KEPT_FORWARDS_BYTES", 0)
    stats = {}
    got = gradients(while_loss_checkpointed(snapshots=s, stats=stats), W_Y0, W_P)
    assert_all_rel(got, gradients(while_loss_plain, W_Y0, W_P))
    n = stats["n_steps"]
    assert 15 < n < 40
    assert stats["taped_steps"] == n
    assert stats["schedule"] == repr(Online(s))
    assert stats["forward_steps"] == Online(s).forward_steps_for(n)    # forward pass + reversal
    if s >= n:
        assert stats["forward_steps"] == n


def test_checkpoint_while_step_count_changes_between_calls():
    stats = {}
    g = adsim.grad(while_loss_checkpointed(snapshots=3, stats=stats), argnums=(0, 1))
    counts = set()
    for scale in (1.0, 2.5, 0.5):
        assert_all_rel(g(scale * W_Y0, W_P), gradients(while_loss_plain, scale * W_Y0, W_P))
        counts.add(stats["n_steps"])
    assert len(counts) == 3


def test_checkpoint_while_jvp_hvp_and_vjp():
    loss = while_loss_checkpointed(snapshots=3)
    v = np.array([1.0, 0.5, -2.0])
    assert_rel(adsim.jvp(lambda y: loss(y, W_P), W_Y0, v)[1],
               adsim.jvp(lambda y: while_loss_plain(y, W_P), W_Y0, v)[1])
    assert_rel(adsim.hvp(loss, W_Y0, v, W_P), adsim.hvp(while_loss_plain, W_Y0, v, W_P))

    def state_ck(y0, p):
        return adsim.checkpoint_while(time_cond, time_step, np.concatenate([np.zeros(1), y0]),
                                      args=(p,), snapshots=2)

    def state_pl(y0, p):
        z = np.concatenate([np.zeros(1), y0])
        while adsim.value(z)[0] < T_END:
            z = time_step(z, p)
        return z
    w = np.array([0.0, 1.0, -1.0, 2.0])
    assert_all_rel(adsim.vjp(state_ck, (W_Y0, W_P), w)[1], adsim.vjp(state_pl, (W_Y0, W_P), w)[1])


def test_checkpoint_while_budget():
    stats = {}
    loss = while_loss_checkpointed(memory_limit="1MB", snapshots=4, stats=stats)
    got = gradients(loss, W_Y0, W_P)
    assert_all_rel(got, gradients(while_loss_plain, W_Y0, W_P))
    assert stats["snapshots"] == 4
    with pytest.raises(adsim.MemoryBudgetError, match=r"smallest budget that works is \d+ bytes"):
        gradients(while_loss_checkpointed(memory_limit=100), W_Y0, W_P)


def test_checkpoint_while_max_steps():
    with pytest.raises(LoopDidNotStop, match="max_steps=5"):
        gradients(while_loss_checkpointed(max_steps=5), W_Y0, W_P)


# ------------------------------------------------------------- property test

_PLAIN_GRADIENTS = {}


def plain_gradients(n):
    if n not in _PLAIN_GRADIENTS:
        _PLAIN_GRADIENTS[n] = gradients(loss_plain(n), Y0, P)
    return _PLAIN_GRADIENTS[n]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 60), s=st.integers(1, 70))
def test_checkpointed_adjoint_equals_plain_adjoint(n, s):
    stats = {}
    got = gradients(loss_checkpointed(n, snapshots=s, stats=stats), Y0, P)
    assert_all_rel(got, plain_gradients(n))
    assert stats["forward_steps"] == Revolve(n, s).forward_steps
    assert stats["taped_steps"] == n


def test_a_step_closing_over_active_parameters_takes_them_as_loop_inputs():
    def loss(k, **options):
        def step(u):
            return u + 0.01 * (-k * u + np.sin(u))
        u = adsim.checkpoint_loop(step, np.array([1.0, 0.5]), 50, **options)
        return np.sum(u ** 2)

    def through_args(k):
        u = adsim.checkpoint_loop(lambda u, k: u + 0.01 * (-k * u + np.sin(u)),
                                  np.array([1.0, 0.5]), 50, args=(k,))
        return np.sum(u ** 2)
    k = np.array([0.7, 1.3])
    for options in ({}, {"snapshots": 3}):
        np.testing.assert_array_equal(adsim.grad(lambda k: loss(k, **options))(k),
                                      adsim.grad(through_args)(k))
    v = np.array([0.4, -1.0])
    np.testing.assert_allclose(adsim.hvp(loss, k, v), adsim.hvp(through_args, k, v), rtol=1e-13)

    def while_loss(k):
        limit = 2.0 * k[0]
        u = adsim.checkpoint_while(lambda u: u[0] < limit, lambda u: u + 0.1 * k, np.zeros(2))
        return np.sum(u ** 2)
    k = np.array([0.14, 1.0])                  # 20 steps of 0.1 k reach u[0] = 2 k[0]
    assert while_loss(k) == pytest.approx(4.0 * np.sum(k ** 2))
    np.testing.assert_allclose(adsim.grad(while_loss)(k), 8.0 * k)
