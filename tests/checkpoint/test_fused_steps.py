"""Checkpointed loops whose step tapes run fused kernels (adsim/_fuse/):
periodic stencils written with np.roll, as method-of-lines codes write
them, swept by a Revolve schedule with few snapshots. Every sweep of the
loop (values, gradient, hvp, tangents, a replay at a new point) must give
the interpreter's results (``set_fusion('never')``) to rounding, with NaN
and infinity in the same places; the fused gradient must match central
differences; and a step made only of fused runs pushes only the few values
its reverse kernels cannot recompute."""
from contextlib import contextmanager

import numpy as np
import pytest

import adsim as ad
from adsim.demo import rk4_step, setup
from fdcheck import assert_same_to_rounding

pytestmark = pytest.mark.usefixtures("kernel_cache")   # tests/conftest.py

N = 600                     # not a multiple of the kernels' blocks: rolls wrap mid-block
STEPS = 24


@contextmanager
def fusion(mode):
    previous = ad.set_fusion(mode)
    try:
        yield
    finally:
        ad.set_fusion(previous)


def advection_diffusion(u, c, dt):
    """Fourth-order central differences on a periodic grid, a cubic
    reaction, and a coupling to the opposite point of the ring (a roll by
    half the grid: its wrap falls inside a block)."""
    up1, um1 = np.roll(u, -1), np.roll(u, 1)
    up2, um2 = np.roll(u, -2), np.roll(u, 2)
    ux = (-up2 + 8.0 * up1 - 8.0 * um1 + um2) / 12.0
    uxx = (-up2 + 16.0 * up1 - 30.0 * u + 16.0 * um1 - um2) / 12.0
    coupling = 0.05 * (np.roll(u, N // 2) - u)
    return u + dt * (-c * ux + 0.2 * uxx + u - u ** 3 + coupling)


def advection_loss(c, u0):
    u = ad.checkpoint_loop(advection_diffusion, u0, STEPS, args=(c, 0.1), snapshots=3)
    return np.sum(np.sin(np.arange(N)) * u ** 2)


def burgers_loss(kappa, u0):
    """adsim.demo's Burgers step (rolls of a value made in the step: eight runs)."""
    _, dx, _, _, dt = setup(N)
    u = ad.checkpoint_loop(rk4_step, u0, STEPS, args=(kappa, dt, dx), snapshots=3)
    return 0.5 * np.sum((u - 0.5) ** 2) * dx


def reused_slots(u, c):
    """A slot a run reads (``a``) that a later run overwrites while the
    run's reverse kernel still needs its value: it is pushed and restored."""
    a = np.tanh(u) * c * 0.5
    b = np.roll(a, 1) * a
    e = np.roll(b, 1) * b
    a = None                # (its slot is free for what follows)
    mixed = e + b           # written there, and read by the next run
    return 0.5 * np.roll(mixed, 1) * mixed + 0.5 * u


def reused_loss(c, u0):
    u = ad.checkpoint_loop(reused_slots, u0, STEPS, args=(c,), snapshots=3)
    return np.sum(np.cos(np.arange(N)) * u)


def damped(u, c):
    """A dot product (no fused form) before the runs: its reverse rule reads
    ``a``, whose slot the next run overwrites with ``s``, which a later run
    reads; that run pushes ``a`` back as the interpreter would."""
    a = np.tanh(u) * c
    energy = a @ a / N
    a = None
    s = u * energy
    t = np.sin(s) + s
    return 0.5 * np.roll(t, 1) * s + 0.5 * u


def damped_loss(c, u0):
    u = ad.checkpoint_loop(damped, u0, STEPS, args=(c,), snapshots=3)
    return np.sum(np.cos(np.arange(N)) * u)


def burgers_point():
    _, _, u0, kappa, _ = setup(N)
    return kappa, u0


def advection_point():
    x = np.arange(N) / N
    return np.cos(2 * np.pi * x) * 0.3 + 1.0, 0.5 * np.sin(2 * np.pi * x) + 0.1 * np.cos(6 * x)


CASES = {"burgers": (burgers_loss, burgers_point), "advection": (advection_loss, advection_point),
         "reused slots": (reused_loss, advection_point),
         "interpreted op first": (damped_loss, advection_point)}


def assert_same(a, b, rtol=1e-9):
    """Equal to rounding (the fused kernels write some products in another
    form, and rounding grows over the steps), NaN and infinities alike."""
    assert_same_to_rounding(a, b, rtol)


def step_tapes(tape):
    (op,) = tape.callbacks
    return op.steps.variants


def sweeps(loss, point, mode, new_point):
    """Value, gradient, hvp and jvp at ``point``, and the gradient replayed
    at ``new_point``, every sweep under fusion ``mode``."""
    with fusion(mode):
        tape = ad.record(loss, *point)
        v = tuple(np.cos(np.arange(N) * (i + 1)) for i in range(2))
        out = dict(value=tape.forward(*point), gradient=tape.gradient(*point),
                   hvp=tape.hvp(point, v), jvp=tape.jvp(point, v)[1],
                   replayed=tape.gradient(*new_point))
    return tape, out


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_loops_give_the_interpreters_sweeps(case):
    loss, point_of = CASES[case]
    point = point_of()
    new_point = (point[0] * 1.1, point[1] + 0.01 * np.sin(np.arange(N)))
    fused_tape, fused = sweeps(loss, point, "always", new_point)
    _, plain = sweeps(loss, point, "never", new_point)
    for tape in step_tapes(fused_tape):     # the sweeps compiled and ran the step's kernels
        assert {"values", "reverse", "reverse2"} <= set(tape._fusion.kinds)
        report = tape._fusion.report()
        assert report.fused == report.runs > 0, str(report)
    assert all(np.isfinite(g).all() for g in plain["gradient"])
    for key in plain:
        if isinstance(plain[key], tuple):
            for a, b in zip(fused[key], plain[key]):
                assert_same(a, b)
        else:
            assert_same(fused[key], plain[key])


@pytest.mark.parametrize("case", ["burgers", "advection", "reused slots"])
def test_nan_and_infinity_in_the_state_propagate_as_the_interpreter(case):
    loss, point_of = CASES[case]
    c, u0 = point_of()
    u0 = u0.copy()
    u0[[0, 255, 256, N - 1]] = [np.inf, np.nan, -np.inf, np.nan]    # at block edges and the wrap
    results = {}
    for mode in ("always", "never"):
        with fusion(mode):
            tape = ad.record(loss, c, u0)
            results[mode] = (tape.forward(c, u0),) + tuple(tape.gradient(c, u0)) + tuple(
                tape.hvp((c, u0), (np.ones(N), np.ones(N))))
    for a, b in zip(results["always"], results["never"]):
        assert_same(a, b)
    assert np.isnan(results["always"][2]).any()


def test_fused_gradient_matches_central_differences():
    c, u0 = advection_point()
    with fusion("always"):
        tape = ad.record(advection_loss, c, u0)
        g_c, g_u = tape.gradient(c, u0)
        rng = np.random.default_rng(3)
        dc, du = rng.standard_normal(N) * 0.1, rng.standard_normal(N) * 0.1
        h = 1e-5
        fd = (tape.forward(c + h * dc, u0 + h * du) - tape.forward(c - h * dc, u0 - h * du)) / (2 * h)
    assert abs(g_c @ dc + g_u @ du - fd) <= 1e-6 * max(abs(fd), 1.0)


def test_a_step_of_fused_runs_pushes_only_what_its_kernels_cannot_recompute():
    """The Burgers step is eight fused runs: a keeping forward pushes only
    the one input of a run that a later run stores over (its kernels store
    only what is read after them), where the interpreter pushes every
    overwritten value its reverse rules read."""
    kappa, u0 = burgers_point()
    peaks = {}
    for mode in ("always", "never"):
        with fusion(mode):
            tape = ad.record(burgers_loss, kappa, u0)
            tape.gradient(kappa, u0)
        (step,) = step_tapes(tape)
        peaks[mode] = step.stats()["bytes"]["value_stack_peak"]
    assert peaks["always"] == N * 8 < peaks["never"], peaks
