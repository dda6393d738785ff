"""Adjoint of a method-of-lines PDE under a memory budget.

1-D viscous Burgers equation with a spatially varying viscosity field,
periodic on [0, 1):

    u_t + (u^2 / 2)_x = (kappa(x) u_x)_x,

central differences on N points, classical RK4 in time. The loss compares
u(T) with an observation; its gradient with respect to the viscosity field
kappa (N parameters) and the initial condition comes from one reverse sweep
through all time steps, checkpointed with ``adsim.checkpoint_loop`` under
``memory_limit``: fully taping 10^5 steps would need tens of gigabytes.

This is adsim's main demo: ``python -m adsim.demo [--steps 100000]
[--points 1000] [--memory-limit 100MB] [--tradeoff]``; the script
examples/ode/burgers_adjoint.py runs the same code.
"""
import argparse
import resource
import sys
import time

import numpy as np

import adsim as ad
from adsim._decoder import decode


def rhs(u, kappa, dx, xp=np):
    """Semi-discrete right-hand side (periodic central differences); ``xp``
    the array module (the benchmarks run the same code in JAX)."""
    up = xp.roll(u, -1)
    um = xp.roll(u, 1)
    flux = -(up * up - um * um) / (4.0 * dx)
    kf = 0.5 * (kappa + xp.roll(kappa, -1))            # kappa at i + 1/2
    diffusion = (kf * (up - u) - xp.roll(kf, 1) * (u - um)) / (dx * dx)
    return flux + diffusion


def rk4_step(u, kappa, dt, dx, xp=np):
    k1 = rhs(u, kappa, dx, xp)
    k2 = rhs(u + 0.5 * dt * k1, kappa, dx, xp)
    k3 = rhs(u + 0.5 * dt * k2, kappa, dx, xp)
    k4 = rhs(u + dt * k3, kappa, dx, xp)
    return u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def setup(points):
    x = np.arange(points) / points
    dx = 1.0 / points
    u0 = np.sin(2 * np.pi * x) + 0.5
    kappa = 2e-3 * (1.0 + 0.5 * np.cos(2 * np.pi * x))
    dt = 0.2 * dx * dx / kappa.max()          # explicit stability limit with margin
    return x, dx, u0, kappa, dt


def make_loss(n_steps, dx, dt, u_obs, **checkpoint_options):
    def loss(kappa, u0):
        u = ad.checkpoint_loop(rk4_step, u0, n_steps, args=(kappa, dt, dx), **checkpoint_options)
        return 0.5 * np.sum((u - u_obs) ** 2) * dx
    return loss


def peak_rss_mb():
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0 if sys.platform != "darwin" else kb / 2 ** 20


def run(n_steps=100_000, points=1000, memory_limit="100MB", check=True, verbose=True):
    """Gradient of the loss w.r.t. kappa and u0 within ``memory_limit``;
    returns a dict of results."""
    x, dx, u0, kappa, dt = setup(points)
    u_obs = np.sin(2 * np.pi * (x - 0.05)) + 0.5
    stats = {}
    loss = make_loss(n_steps, dx, dt, u_obs, memory_limit=memory_limit, stats=stats,
                     progress=verbose)         # the reverse sweep's progress on stderr
    rss0 = peak_rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    value, (g_kappa, g_u0) = ad.value_and_grad(loss, argnums=(0, 1))(kappa, u0)
    elapsed = time.perf_counter() - t0
    result = dict(n_steps=n_steps, points=points, loss=value, seconds=elapsed,
                  cpu_seconds=time.process_time() - c0,       # (less the waits of a busy machine)
                  peak_rss_mb=peak_rss_mb(), rss_before_mb=rss0, g_kappa=g_kappa, g_u0=g_u0,
                  **{k: stats.get(k) for k in ("snapshots", "forward_steps", "taped_steps")})
    sched = ad.Revolve(n_steps, stats["snapshots"])
    result["revolve_optimum"] = sched.forward_steps
    result["full_tape_gb"] = full_tape_bytes(u0, kappa, dt, dx, n_steps) / 1e9
    if verbose:
        print(f"Burgers, {points} points, {n_steps} RK4 steps (T = {n_steps * dt:.3f}), "
              f"memory_limit={memory_limit}")
        print(f"  loss {value:.6e}; gradient w.r.t. kappa ({points}) and u0 ({points}) in "
              f"{elapsed:.1f} s")
        print(f"  snapshots {stats['snapshots']}, plain step replays {stats['forward_steps']} "
              f"(Revolve optimum {sched.forward_steps}; recomputation factor "
              f"{stats['forward_steps'] / n_steps:.2f}) + {stats['output_steps']} for the value, "
              f"taped steps {stats['taped_steps']}")
        print(f"  peak resident memory {result['peak_rss_mb']:.0f} MB "
              f"(before the sweep {rss0:.0f} MB); taping every step would need about "
              f"{result['full_tape_gb']:.1f} GB")
    if check:
        result["fd_error"] = check_against_differences(loss, kappa, u0, g_kappa, g_u0, verbose)
    return result


def full_tape_bytes(u0, kappa, dt, dx, n_steps):
    """Bytes a tape of all steps would hold: each step's values and tape."""
    step = ad.record(lambda u, k: rk4_step(u, k, dt, dx), u0, kappa)
    b = step.stats()["bytes"]
    per_step = (b["opcodes"] + b["operands"] + b["indices"]
                + 8 * sum(step.slot_size_of(o.result) for o in decode(step)[1] if o.result >= 0))
    return per_step * n_steps


def check_against_differences(loss, kappa, u0, g_kappa, g_u0, verbose=True, seed=0):
    """Directional derivatives along random directions vs central differences."""
    rng = np.random.default_rng(seed)
    dk = rng.standard_normal(kappa.size) * kappa
    du = rng.standard_normal(u0.size) * 0.01
    h = 1e-4
    plain = ad.record(loss, kappa, u0).forward     # the loss replayed in C
    fd = (plain(kappa + h * dk, u0 + h * du) - plain(kappa - h * dk, u0 - h * du)) / (2 * h)
    ad_dir = g_kappa @ dk + g_u0 @ du
    err = abs(ad_dir - fd) / max(abs(fd), 1e-300)
    if verbose:
        print(f"  directional derivative: adjoint {ad_dir:.10e}, central differences {fd:.10e} "
              f"(relative difference {err:.1e})")
    return err


def tradeoff(n_steps=10_000, points=1000, snapshot_counts=(2, 4, 8, 16, 64, 256, 1024),
             figure="memory_tradeoff.png"):
    """Time and recomputation against snapshot memory; saves a plot."""
    x, dx, u0, kappa, dt = setup(points)
    u_obs = np.sin(2 * np.pi * (x - 0.05)) + 0.5
    rows = []
    for s in snapshot_counts:
        stats = {}
        loss = make_loss(n_steps, dx, dt, u_obs, snapshots=s, stats=stats)
        t0 = time.perf_counter()
        ad.grad(loss)(kappa, u0)
        rows.append((s, s * u0.nbytes / 2 ** 20, time.perf_counter() - t0,
                     stats["forward_steps"] / n_steps))
    print(f"\nmemory-time trade-off, {n_steps} steps, {points} points:")
    print("| snapshots | snapshot MB | seconds | recomputation factor |")
    print("|---:|---:|---:|---:|")
    for s, mb, sec, factor in rows:
        print(f"| {s} | {mb:.2f} | {sec:.2f} | {factor:.2f} |")
    if figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot([r[1] for r in rows], [r[2] for r in rows], "o-", label="time of the gradient")
        ax.set_xscale("log")
        ax.set_xlabel("snapshot memory (MB)")
        ax.set_ylabel("seconds")
        ax2 = ax.twinx()
        ax2.plot([r[1] for r in rows], [r[3] for r in rows], "s--", color="C1",
                 label="recomputation factor")
        ax2.set_ylabel("plain step replays / steps")
        ax.set_title(f"Burgers adjoint, {n_steps} RK4 steps")
        fig.legend(loc="upper right")
        fig.tight_layout()
        fig.savefig(figure, dpi=120)
        print(f"saved {figure}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m adsim.demo",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--memory-limit", default="100MB")
    parser.add_argument("--tradeoff", action="store_true", help="also run the memory-time trade-off")
    args = parser.parse_args(argv)
    result = run(args.steps, args.points, args.memory_limit)
    if args.tradeoff:
        tradeoff(min(args.steps, 10_000), args.points)
    assert result["fd_error"] < 1e-5, "adjoint disagrees with finite differences"


if __name__ == "__main__":
    main()
