"""Two threads replaying ONE tape at different points at once, for the tape
kinds whose replays keep more than a value arena: solve_ivp tapes (steps as
ops of the tape, or with t_eval in a checkpointed while loop; Radau and BDF
with their Newton solves and the nested Jacobian of ``fun``; odeint's op,
which solves with SciPy under a lock of its own), tapes whose runs are
fused (tape.fuse(): compiled kernels with their own pointer tables and
saved slots), and a checkpointed loop of a field (step tapes replayed
without the GIL) with snapshots in memory and on disk. Every result must be
bitwise the single-threaded one. (Plain, chunked and small tapes:
test_threads.py; every kind of checkpointed loop, four threads:
checkpoint/test_loop_threads.py.)"""
import os
import re
import tempfile
import threading

import numpy as np
import pytest

import adsim as ad
from adsim.errors import MemoryBudgetError, NoCompiler
from adsim.integrate import odeint, solve_ivp
from threadwork import run_threads

ROUNDS = 2


def lorenz(t, y, p):
    return [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]


def robertson(t, y, k):
    return [-k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
            k[1] * y[1] ** 2]


def lorenz_misfit(method, t_eval):
    """With ``t_eval`` the steps are a checkpointed while loop, without it
    ops of the tape."""
    observed = np.array([-3.0, -4.0, 20.0])

    def misfit(p):
        sol = solve_ivp(lorenz, (0.0, 0.4), np.array([1.0, 1.0, 1.0]), method=method,
                        args=(p,), rtol=1e-7, atol=1e-9, t_eval=t_eval)
        return np.sum((sol.y[:, -1] - observed) ** 2) + 0.1 * np.sum(sol.y[:, 0] ** 2)
    return misfit


def lorenz_odeint(p):
    Y = odeint(lorenz, np.array([1.0, 1.0, 1.0]), np.linspace(0.0, 0.3, 4), args=(p,),
               tfirst=True, rtol=1e-8, atol=1e-10)
    return np.sum(Y[-1] ** 2) + np.sum(Y[1])


def robertson_yield(method, t_eval=None):
    """With ``t_eval`` the steps are a checkpointed while loop, without it
    ops of the tape."""
    def final_yield(log_k):
        sol = solve_ivp(robertson, (0.0, 0.05), np.array([1.0, 0.0, 0.0]), method=method,
                        args=(np.exp(log_k),), rtol=1e-4, atol=1e-8, t_eval=t_eval)
        return sol.y[0, -1] + 1e4 * sol.y[1, -1]
    return final_yield


def reaction_diffusion(u):
    k = int(round(u.size ** 0.5))
    U = u.reshape(k, k)
    lap = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4.0 * U[1:-1, 1:-1]
    r = 0.1 * lap + np.exp(-U[1:-1, 1:-1]) - np.tanh(U[1:-1, 1:-1])
    return np.sum(r * r)


def rk4_heat(u, kappa, dt):
    def rhs(u):
        return kappa * (np.roll(u, 1) - 2.0 * u + np.roll(u, -1)) + np.sin(u)
    k1 = rhs(u)
    k2 = rhs(u + 0.5 * dt * k1)
    k3 = rhs(u + 0.5 * dt * k2)
    k4 = rhs(u + dt * k3)
    return u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def heat_loss(**options):
    def loss(u0, kappa):
        u = ad.checkpoint_loop(rk4_heat, u0, 30, args=(kappa, 0.05), **options)
        return np.sum(u ** 2) + np.sum(np.tanh(u) * u0)
    return loss


def methods(tape, n_in, size):
    """name -> call of the tape at a point (a tuple of its inputs)."""
    rng = np.random.default_rng(size)
    v = tuple(rng.standard_normal(size) for _ in range(n_in))
    one = n_in == 1
    return {"forward": lambda x: tape.forward(*x),
            "gradient": lambda x: tape.gradient(*x),
            "hvp": lambda x: tape.hvp(x[0] if one else x, v[0] if one else v),
            "jvp": lambda x: tape.jvp(x[0] if one else x, v[0] if one else v)[1]}


def tasks(name, tape, points, skip=()):
    """(name, call, point, single-threaded result) of every method (but
    ``skip``) at every point."""
    out = []
    for method, call in methods(tape, len(points[0]), points[0][0].size).items():
        for i, x in enumerate(points if method not in skip else ()):
            out.append((f"{name}.{method}[{i}]", call, x, np.copy(call(x))))
    return out


def near(x, count, scale):
    return [tuple(a * (1.0 + scale * k) for a in x) for k in range(count)]


def test_solve_ivp_tapes_replayed_by_two_threads_at_once():
    p = np.array([10.0, 28.0, 8.0 / 3.0])
    log_k = np.log([0.04, 3e7, 1e4])
    work = []
    for method, t_eval in (("RK45", [0.2, 0.4]), ("DOP853", [0.2, 0.4]), ("DOP853", None)):
        tape = ad.record(lorenz_misfit(method, t_eval), p)
        work += tasks(f"lorenz.{method}.{t_eval}", tape, near((p,), 3, 1e-6))
    work += tasks("lorenz.odeint", ad.record(lorenz_odeint, p), near((p,), 2, 1e-6))
    for method, t_eval, skip in (("Radau", None, {"hvp"}), ("Radau", [0.02, 0.05], {"hvp"}),
                                 ("BDF", None, {"hvp", "jvp"})):     # (slow: seconds each)
        tape = ad.record(robertson_yield(method, t_eval), log_k)
        work += tasks(f"robertson.{method}.{t_eval}", tape, near((log_k,), 2, 1e-7), skip)
    assert run_threads(2, work, ROUNDS) == []


def test_fused_tapes_replayed_by_two_threads_at_once(kernel_cache):
    k = 200
    u = np.random.default_rng(3).uniform(0.1, 1.0, k * k)
    fused, plain = ad.record(reaction_diffusion, u), ad.record(reaction_diffusion, u)
    try:
        fused.fuse()
    except NoCompiler as why:
        pytest.skip(f"no C compiler: {why}")
    points = near((u,), 3, 1e-3)
    work = tasks("fused", fused, points)
    # the fused kernels agree with the interpreter to rounding (test_fused_runs.py)
    for (_, _, x, got), (_, _, _, want) in zip(work, tasks("plain", plain, points)):
        assert np.allclose(got, want, rtol=1e-10, atol=1e-12 * np.max(np.abs(want)))
    assert run_threads(2, work, ROUNDS) == []


def test_checkpointed_field_loops_replayed_by_two_threads_at_once():
    """Snapshots in memory (Revolve) and on disk (a two-level schedule within
    a budget); the step (200 points) is worth releasing the GIL for."""
    n = 200
    s = np.linspace(0.0, 1.0, n)
    u0, kappa = 0.5 + 0.3 * np.sin(2 * np.pi * s), 0.2 + 0.1 * np.cos(2 * np.pi * s)
    with tempfile.TemporaryDirectory() as directory:
        on_disk = {"snapshots": 6, "snapshot_dir": directory}
        try:        # the smallest budget of the largest sweep (an hvp): snapshots on disk
            ad.record(heat_loss(memory_limit=1, **on_disk), u0, kappa).hvp((u0, kappa),
                                                                          (u0, kappa))
            raise AssertionError("a budget of one byte was accepted")
        except MemoryBudgetError as error:
            minimum = int(re.search(r"smallest budget that works is (\d+)", str(error))[1])
        work = []
        for name, options in {"memory": {"snapshots": 5},
                              "disk": dict(on_disk, memory_limit=minimum + 2000)}.items():
            tape = ad.record(heat_loss(**options), u0, kappa)
            work += tasks(name, tape, near((u0, kappa), 2, 1e-3))
        assert run_threads(2, work, ROUNDS) == []
        assert not any(files for _, _, files in os.walk(directory))


def test_fusing_a_tape_while_two_threads_replay_it(kernel_cache):
    """Replays that started before fuse() finish with the interpreter, later
    ones use the fused kernels: every result is bitwise one of the two."""
    k = 200                     # runs of 32 768 elements and more are fused after a replay
    u = np.random.default_rng(4).uniform(0.1, 1.0, k * k)
    tape = ad.record(reaction_diffusion, u)
    points = near((u,), 2, 1e-3)
    interpreted = [tape.gradient(*x).tobytes() for x in points]
    replayed = [threading.Event(), threading.Event()]
    done = threading.Event()            # fuse() returned (or failed)
    results = [[], []]                  # (point, started after fuse() returned, gradient)

    def replays(i):
        after = 0
        while after < 4:
            j = len(results[i]) % 2
            started_after = done.is_set()
            results[i].append((j, started_after, tape.gradient(*points[j]).tobytes()))
            after += started_after
            replayed[i].set()
    threads = [threading.Thread(target=replays, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    try:
        for event in replayed:
            event.wait()
        report = tape.fuse()
    except NoCompiler as why:
        pytest.skip(f"no C compiler: {why}")
    finally:
        done.set()
        for t in threads:
            t.join()
    assert report.fused == 1
    fused = [tape.gradient(*x).tobytes() for x in points]
    for j, after, got in results[0] + results[1]:
        assert got == fused[j] if after else got in (interpreted[j], fused[j])
