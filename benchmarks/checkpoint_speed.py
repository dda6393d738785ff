"""Speed of checkpointed loops per step: Lorenz-63 with RK4.

The loss ``sum(u(T)**2)`` after ``n`` RK4 steps (dt = 1e-4: T = 10 for
10**5 steps, short enough for the chaotic system's gradients to agree
between tools to rounding) of the Lorenz-63 system from u0 = (1, 1, 1), as a
function of the parameters (sigma, rho, beta) = (10, 28, 8/3), through
``adsim.checkpoint_loop(..., memory_limit="50MB")``. Reported in µs per
step, wall time and CPU time of the process (the latter leaves out time
spent waiting for a core on a busy machine; the goal is judged on it):

* adsim value: ``tape.forward`` of the recorded loss (the step tape
  replayed n times);
* adsim gradient: ``adsim.grad`` of the loss (cached tape): the forward
  pass up to the schedule's first turn, then the reverse sweep, every step
  replayed in C along the binomial schedule;
* the step tape alone: ``tape._iterate`` of the step's tape (plain
  replays, the floor of the value) and, for reference, the plain NumPy
  step in a Python loop;
* JAX ``jit(loss)`` and ``jit(grad(loss))`` over ``lax.scan`` when JAX is
  installed (no checkpointing: JAX keeps every step's residuals);
* with ``--baseline DIR`` (or ``ADSIM_BENCH_BASELINE=DIR`` in the
  environment, for the runner): the adsim rows again with the adsim found
  in DIR (a source checkout with its extension built), for before/after.

Run as ``python -m benchmarks checkpoint_speed [--quick]`` or
``python -m benchmarks.checkpoint_speed [--quick] [--baseline DIR]``.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from . import timing as T

AREA = "checkpoint_speed"
N_STEPS, QUICK_STEPS = 100_000, 2_000
NUMPY_STEPS = 2_000          # the plain NumPy loop is timed on fewer steps
MEMORY_LIMIT = "50MB"
DT = 1e-4
U0 = np.array([1.0, 1.0, 1.0])
P = np.array([10.0, 28.0, 8.0 / 3.0])
GOAL = 2e-6                  # gradient seconds per step


def lorenz(u, p, xp=np):
    x, y, z = u[0], u[1], u[2]
    return xp.stack([p[0] * (y - x), x * (p[1] - z) - y, x * y - p[2] * z])


def rk4_step(u, p, dt, xp=np):
    k1 = lorenz(u, p, xp)
    k2 = lorenz(u + 0.5 * dt * k1, p, xp)
    k3 = lorenz(u + 0.5 * dt * k2, p, xp)
    k4 = lorenz(u + dt * k3, p, xp)
    return u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def adsim_rows(s, n):
    """adsim's timings per step (run in this process, with its adsim)."""
    import adsim as ad

    def loss(p):
        u = ad.checkpoint_loop(rk4_step, U0, n, args=(p, DT), memory_limit=MEMORY_LIMIT)
        return np.sum(u ** 2)
    grad = ad.grad(loss)
    tape = ad.record(loss, P)
    step = ad.record(lambda u, p: rk4_step(u, p, DT), U0, P)
    xs = step._inputs([U0, P])
    rows = {"value": T.measure(lambda: tape.forward(P), s).per(n),
            "gradient": T.measure(lambda: grad(P), s).per(n),
            "step_iterate": T.measure(lambda: step._iterate(xs, n), s).per(n)}
    check = grad(P)
    rows["gradient_value"] = [float(v) for v in check]
    rows["step_ops"] = len(step)
    rows["adsim"] = ad.__file__
    return rows


def numpy_row(s):
    def run():
        u = U0
        for _ in range(NUMPY_STEPS):
            u = rk4_step(u, P, DT)
        return u
    return T.measure(run, s, repeats=min(s.repeats, 3)).per(NUMPY_STEPS)


def jax_rows(s, n):
    if s.threads == 1 and "jax" not in sys.modules:   # XLA reads its flags when it starts
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
    jax = T.peer("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def loss(p):
        def body(u, _):
            return rk4_step(u, p, DT, jnp), None
        u, _ = jax.lax.scan(body, jnp.asarray(U0), None, length=n)
        return jnp.sum(u ** 2)
    value, grad = jax.jit(loss), jax.jit(jax.grad(loss))
    p = jnp.asarray(P)
    return {"value": T.measure(lambda: value(p).block_until_ready(), s).per(n),
            "gradient": T.measure(lambda: grad(p).block_until_ready(), s).per(n),
            "gradient_value": [float(v) for v in grad(p)], "version": jax.__version__}


def baseline_rows(directory, quick):
    """adsim_rows in a child process whose adsim is the one in ``directory``."""
    env = dict(os.environ, ADSIM_BASELINE=str(Path(directory).resolve()),
               PYTHONPATH=str(T.ROOT))
    cmd = [sys.executable, "-m", f"benchmarks.{AREA}", "--adsim-json"] + (["--quick"] if quick
                                                                          else [])
    out = subprocess.run(cmd, cwd=T.ROOT, env=env, capture_output=True, text=True)
    if out.returncode:
        raise T.Skip(f"the baseline failed: {out.stderr.strip().splitlines()[-1:]}")
    rows = json.loads(out.stdout)
    rows = {k: T.Timing(**v) if isinstance(v, dict) else v for k, v in rows.items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=directory,
                            capture_output=True, text=True)
    rows["commit"] = commit.stdout.strip() or "unknown commit"
    return rows


def run(s, baseline=None):
    n = QUICK_STEPS if s.quick else N_STEPS
    results = {"n_steps": n, "memory_limit": MEMORY_LIMIT, "adsim": adsim_rows(s, n),
               "numpy": numpy_row(s)}
    if baseline is not None:
        try:
            results["baseline"] = baseline_rows(baseline, s.quick)
            results["baseline_dir"] = str(baseline)
        except T.Skip as why:
            results["baseline"] = {"skipped": str(why)}
    if s.peers:
        try:
            results["jax"] = jax_rows(s, n)
        except T.Skip as why:
            results["jax"] = {"skipped": str(why)}
    else:
        results["jax"] = {"skipped": "--no-peers"}
    return results


def _us(timing):
    return (f"{timing.median * 1e6:.2f} ({timing.min * 1e6:.2f}–{timing.max * 1e6:.2f}) | "
            f"{timing.cpu_median * 1e6:.2f}")


def markdown(res, s, machine):
    n, a = res["n_steps"], res["adsim"]
    rows = [("adsim value (`tape.forward`)", _us(a["value"]), ""),
            ("adsim gradient (`adsim.grad`)", _us(a["gradient"]),
             "goal ≤ 2 µs (CPU): " + ("met" if a["gradient"].cpu_median <= GOAL else "not met")),
            (f"step tape alone, plain replays ({a['step_ops']} ops)", _us(a["step_iterate"]), ""),
            ("plain NumPy step in a Python loop", _us(res["numpy"]), f"{NUMPY_STEPS} steps")]
    base = res.get("baseline")
    if base and "skipped" not in base:
        rows += [("before (`--baseline`): adsim value", _us(base["value"]),
                  f"commit {base['commit']}"),
                 ("before (`--baseline`): adsim gradient", _us(base["gradient"]), "")]
    elif base:
        rows.append(("before (`--baseline`)", "– | –", base["skipped"]))
    jx = res["jax"]
    if "skipped" in jx:
        rows.append(("JAX", "– | –", jx["skipped"]))
    else:
        agree = np.allclose(jx["gradient_value"], a["gradient_value"], rtol=1e-8)
        rows += [(f"JAX {jx['version']} `jit(loss)` over `lax.scan`", _us(jx["value"]), ""),
                 ("JAX `jit(grad(loss))` over `lax.scan`", _us(jx["gradient"]),
                  f"adsim / JAX {a['gradient'].median / jx['gradient'].median:.2f} (wall), "
                  f"{a['gradient'].cpu_median / jx['gradient'].cpu_median:.2f} (CPU: XLA runs "
                  f"threads); gradients "
                  f"{'agree' if agree else 'DIFFER'} to 1e-8")]
    lines = ["## Checkpointed loops: time per step\n", T.header(AREA, s, machine), "",
             f"Lorenz-63, RK4, dt = {DT}, {n} steps, gradient of `sum(u(T)**2)` with respect to "
             f"(sigma, rho, beta) through `checkpoint_loop(..., memory_limit="
             f"\"{res['memory_limit']}\")`. Microseconds per step: wall time, median "
             f"(min–max), and the median CPU time of the process.\n",
             T.table(["what", "wall µs per step", "CPU µs per step", "note"], rows)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = T.parser(AREA, __doc__.splitlines()[0])
    p.add_argument("--baseline", type=Path, default=os.environ.get("ADSIM_BENCH_BASELINE"),
                   help="a source checkout of adsim (extension built) to time as 'before'")
    p.add_argument("--adsim-json", action="store_true", help=__import__("argparse").SUPPRESS)
    args = p.parse_args(argv)
    settings = T.settings_from(args, AREA)
    if args.adsim_json:           # the child of --baseline: its adsim comes first
        sys.path.insert(0, os.environ["ADSIM_BASELINE"])
        T.limit_threads(settings)
        rows = adsim_rows(settings, QUICK_STEPS if args.quick else N_STEPS)
        print(json.dumps(rows, default=T._jsonable))
        return 0
    machine = T.machine_info(T.limit_threads(settings))
    results = run(settings, args.baseline)
    return T.report(AREA, settings, machine, results, markdown(results, settings, machine))


if __name__ == "__main__":
    sys.exit(main())
