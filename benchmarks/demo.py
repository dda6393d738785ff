"""The demo's gradient: checkpointed Burgers against JAX.

``python -m adsim.demo``: 1-D viscous Burgers on 1 000 points, RK4, the
gradient of a loss on the final state with respect to the viscosity field
and the initial state, through ``adsim.checkpoint_loop`` within
``memory_limit="100MB"``. Measured:

* adsim with its step tape fused (``set_fusion("always")``; the default
  does the same at 10^5 steps, whose replays pay for compiling: the loop
  fuses the step before its sweep; the kernels come from the compiler
  cache after the first run, so the first call, which compiles, is the
  warm-up);
* adsim with fusion off (``adsim.set_fusion("never")``: the interpreter,
  what the demo cost before fused runs);
* JAX: ``jit(grad)`` of the same problem as two nested ``lax.scan`` with
  ``jax.checkpoint`` on the inner one (square-root checkpointing: about
  2 sqrt(n) states kept, within the same memory; compile time excluded).

Goal (issue "large arrays"): the demo's gradient at least 3x faster than
the fused gradient when the goal was set (18–28 s at 10^5 steps; BEFORE
below), at the same schedule and memory bound. The table gives wall-clock
seconds and the process's CPU seconds, which leave out the time spent
waiting for a core on a busy machine. ``--quick`` runs 2 000 steps (a smoke test: compiling weighs more
there), ``--full`` and the default 10^5.

Run as ``python -m benchmarks demo [--quick]``.
"""
import math
import sys

import numpy as np

import adsim as ad
from adsim import demo

from . import timing as T

AREA = "demo"
POINTS = 1000
GOAL_SPEEDUP = 3.0
# the fused gradient when the goal was set (issue 21: 18-28 s; this run at
# commit ecede6b, load 1.1): the goal is GOAL_SPEEDUP times faster than it
BEFORE = {"seconds": 18.29, "commit": "ecede6b"}


def _adsim_gradient(n_steps, mode):
    previous = ad.set_fusion(mode)
    try:
        result = demo.run(n_steps=n_steps, points=POINTS, memory_limit="100MB", check=False,
                          verbose=False)
    finally:
        ad.set_fusion(previous)
    return result


def _jax_gradient(n_steps, s):
    jax = T.jax_peer(s)
    jnp, lax = jax.numpy, jax.lax
    x, dx, u0, kappa, dt = demo.setup(POINTS)
    u_obs = np.sin(2 * np.pi * (x - 0.05)) + 0.5
    outer = int(math.isqrt(n_steps))
    while n_steps % outer:
        outer -= 1
    inner = n_steps // outer

    def step(u, k):
        return demo.rk4_step(u, k, dt, dx, xp=jnp)

    @jax.checkpoint
    def block(u, k):
        return lax.scan(lambda z, _: (step(z, k), None), u, None, length=inner)[0]

    def loss(k, u):
        u = lax.scan(lambda z, _: (block(z, k), None), u, None, length=outer)[0]
        return 0.5 * jnp.sum((u - u_obs) ** 2) * dx

    gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
    kj, uj = jnp.asarray(kappa), jnp.asarray(u0)
    jax.block_until_ready(gradient(kj, uj))             # compiles
    timing = T.measure(lambda: jax.block_until_ready(gradient(kj, uj)), s, repeats=3)
    g = gradient(kj, uj)
    return timing, np.concatenate([np.asarray(g[0]), np.asarray(g[1])]), (outer, inner)


def run(s):
    n_steps = 2_000 if s.quick else 100_000
    rows = {}
    fused_first = _adsim_gradient(n_steps, "always")      # compiles the step's kernels, once
    fused = [_adsim_gradient(n_steps, "always") for _ in range(1 if s.quick else 2)] + \
        [fused_first]
    plain = [_adsim_gradient(n_steps, "never")]
    g_fused = np.concatenate([fused[0]["g_kappa"], fused[0]["g_u0"]])
    g_plain = np.concatenate([plain[0]["g_kappa"], plain[0]["g_u0"]])
    rows["n_steps"] = n_steps
    rows["fused_seconds"] = sorted(r["seconds"] for r in fused[:-1])
    rows["fused_cpu_seconds"] = sorted(r["cpu_seconds"] for r in fused[:-1])
    rows["first_call_seconds"] = fused_first["seconds"]
    rows["first_call_cpu_seconds"] = fused_first["cpu_seconds"]
    rows["interpreter_seconds"] = sorted(r["seconds"] for r in plain)
    rows["interpreter_cpu_seconds"] = sorted(r["cpu_seconds"] for r in plain)
    rows["fused_vs_interpreter"] = float(np.max(np.abs(g_fused - g_plain)) /
                                         np.max(np.abs(g_plain)))
    rows["schedule"] = {k: fused[0][k] for k in ("snapshots", "forward_steps", "taped_steps")}
    rows["schedule_interpreter"] = {k: plain[0][k] for k in ("snapshots", "forward_steps",
                                                              "taped_steps")}
    rows["peak_rss_mb"] = max(r["peak_rss_mb"] for r in fused + plain)
    if s.peers:
        try:
            timing, g_jax, split = _jax_gradient(n_steps, s)
            rows["jax"] = {"timing": timing, "split": split,
                           "difference": float(np.max(np.abs(g_jax - g_fused)) /
                                               np.max(np.abs(g_fused)))}
        except T.Skip as why:
            rows["jax"] = {"skipped": str(why)}
    else:
        rows["jax"] = {"skipped": "--no-peers"}
    return rows


def markdown(res, s, machine):
    fused = float(np.median(res["fused_seconds"]))
    plain = float(np.median(res["interpreter_seconds"]))
    jax = res["jax"]
    lines = ["## The demo's gradient\n", T.header(AREA, s, machine), "",
             f"Burgers, {POINTS} points, {res['n_steps']:,} RK4 steps, memory_limit 100MB "
             f"(schedule {res['schedule']}, the same without fusion: "
             f"{res['schedule_interpreter'] == res['schedule']}); seconds per gradient.", ""]
    fused_cpu = float(np.median(res["fused_cpu_seconds"]))
    rows = [("adsim, fused step (default)", f"{fused:.2f}", f"{fused_cpu:.2f}"),
            ("adsim, first call (compiles the step's kernels)",
             f"{res['first_call_seconds']:.2f}", f"{res['first_call_cpu_seconds']:.2f}"),
            ("adsim, interpreter (`set_fusion('never')`)", f"{plain:.2f}",
             f"{float(np.median(res['interpreter_cpu_seconds'])):.2f}")]
    if "skipped" not in jax:
        rows.append((f"JAX jit(grad), nested scan + checkpoint {jax['split']}",
                     f"{jax['timing'].median:.2f}", f"{jax['timing'].cpu_median:.2f}"))
    lines.append(T.table(["", "seconds", "CPU seconds (of the process)"], rows))
    against = "" if res["n_steps"] != 100_000 else (
        f" Against the fused gradient when the goal was set ({BEFORE['seconds']:.2f} s at "
        f"commit {BEFORE['commit']}): {BEFORE['seconds'] / fused:.2f}x in seconds, "
        f"{BEFORE['seconds'] / fused_cpu:.2f}x in CPU seconds (goal >= {GOAL_SPEEDUP:g}x).")
    lines += ["", f"Speed-up of fusion: {plain / fused:.2f}x.{against} "
              f"Fused and interpreted gradients differ by {res['fused_vs_interpreter']:.1e} "
              f"(relative, max norm). Peak resident memory {res['peak_rss_mb']:.0f} MB."]
    if "skipped" in jax:
        lines.append(f"JAX: {jax['skipped']}.")
    else:
        lines.append(f"adsim fused / JAX: {fused / jax['timing'].median:.2f}; JAX's gradient "
                     f"differs from adsim's by {jax['difference']:.1e}.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
