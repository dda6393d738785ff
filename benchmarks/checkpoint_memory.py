"""Peak resident memory of checkpointed derivatives against ``memory_limit``.

``memory_limit=M`` bounds what a checkpointed loop adds to a sweep. For each
mode, state size n and budget M this script measures, in a fresh child
process, the peak resident memory (VmHWM, reset through
/proc/self/clear_refs after ``malloc_trim``) of one call of the mode on

    f(x) = sum(checkpoint_loop(step, x, n_steps, args=(k,), memory_limit=M) ** 2)

(the first call: recording plus sweep) and subtracts the peak of the same
call on ``sum(x ** 2)``, the function without the loop. ``excess`` is that
difference minus M; the bound holds when it is at most 1 MB. ``min`` is the
smallest budget the mode's ``MemoryBudgetError`` states. Every number comes
from its own fresh process: in a process that has run for a while, freed
heap memory is reused or fragmented differently, which shifts peaks by a few
hundred kB either way.

Modes: grad; vjp with 2 weight vectors; hvp (the tape's one-input path),
tape_hvp (``adsim.record(f, x).hvp``), hvp_args (the parameters ``k`` as a
second input: the general second-order sweep); jvp; while_grad, while_hvp,
while_jvp (``checkpoint_while`` with the same step); disk_grad, disk_hvp
(``snapshot_dir``: snapshots beyond M go to files); branch_grad, branch_hvp
(a step whose branch changes every few steps: three recorded variants, which
the budget keeps or drops); ivp_grad, ivp_hvp (``adsim.integrate.solve_ivp``,
RK45, on the method-of-lines Burgers equation of ``adsim.demo`` with ``n``
points over about ``n_steps`` steps, two output times: the loss is
``sum(y ** 2)`` over both; its accepted, rejected and re-tried steps are
variants).

Usage::

    python -m benchmarks.checkpoint_memory             # n = 1e3 .. 2e5, budgets min .. 50 MB
    python -m benchmarks.checkpoint_memory --quick     # one size, two modes (a smoke run)
    python -m benchmarks.checkpoint_memory --json --modes grad,hvp --sizes 100000 \\
        --budgets min,min+3MB                          # rows as JSON (used by the tests)
"""
import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("grad", "vjp", "hvp", "tape_hvp", "hvp_args", "jvp", "while_grad", "while_hvp",
         "while_jvp", "disk_grad", "disk_hvp", "branch_grad", "branch_hvp", "ivp_grad", "ivp_hvp")
SIZES = (1000, 10_000, 100_000, 200_000)
BUDGETS = ("min", "min+1MB", "min+5MB", "50MB")
N_STEPS = 40
SLACK = 10**6           # the bound: peak added <= memory_limit + 1 MB


# ---- the child: one mode, one size, several budgets --------------------------------

def _status():
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM:", "VmRSS:")):
                key, value = line.split(":")
                values[key] = int(value.split()[0]) * 1024
    return values


def _peak_of(call):
    """Bytes of resident memory ``call()`` adds at its peak, and its result."""
    import ctypes
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)      # free heap pages go back first
    before = _status()["VmRSS"]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                             # VmHWM := VmRSS
    result = call()
    return _status()["VmHWM"] - before, result


def _problem(mode, n, n_steps, budget, directory, loop=True, stats=None):
    """The call of ``mode`` on a loop of ``n`` values, as a function of no arguments."""
    import numpy as np
    import adsim as ad
    rng = np.random.default_rng(0)
    k = 0.2 + 0.1 * rng.random(n)
    x = 0.5 * rng.random(n)
    v = rng.standard_normal(n)
    options = dict(memory_limit=budget, stats=stats)
    if mode.startswith("disk"):
        options["snapshot_dir"] = directory

    def step(u, k):
        return u + 0.1 * (k * (np.roll(u, 1) - 2 * u + np.roll(u, -1))) - 0.01 * u ** 3

    def branching(u, k):
        """The step, then a phase counter (the last value) that takes three
        branches in turn."""
        phase = u[-1:]
        out = step(u[:-1], k[:-1])
        if phase[0] < 1.0:
            out = out + 1e-3 * np.sin(out)
        elif phase[0] < 2.0:
            out = out - 1e-3 * out ** 2
        return np.concatenate([out, np.where(phase < 2.0, phase + 1.0, 0.0 * phase)])

    def looped(x, k):
        if not loop:
            return x
        if mode.startswith("ivp"):
            return _integrated(x, k, n_steps, options)
        if mode.startswith("branch"):
            return ad.checkpoint_loop(branching, x, n_steps, args=(k,), **options)
        if mode.startswith("while"):
            def counted(state, k):
                return step(state[0], k), state[1] + 1.0
            return ad.checkpoint_while(lambda s, k: s[1][0] < n_steps, counted, (x, np.zeros(1)),
                                       args=(k,), snapshots=10**6, **options)[0]
        return ad.checkpoint_loop(step, x, n_steps, args=(k,), **options)

    def f(x):
        return np.sum(looped(x, k) ** 2)

    kind = mode.split("_")[-1]
    if kind == "grad":
        return lambda: ad.grad(f)(x)
    if kind == "vjp":
        return lambda: ad.vjp(lambda x: looped(x, k), x, np.stack([v, 2 * v], axis=-1))
    if mode == "tape_hvp":
        return lambda: ad.record(f, x).hvp(x, v)
    if mode == "hvp_args":
        return lambda: ad.hvp(lambda x, k: np.sum(looped(x, k) ** 2), x, v, k)
    if kind == "hvp":
        return lambda: ad.hvp(f, x, v)
    if kind == "jvp":
        return lambda: ad.jvp(f, x, v)
    raise ValueError(f"unknown mode {mode!r}")


def _integrated(u0, k, n_steps, options):
    """solve_ivp (RK45) of the Burgers equation of adsim.demo from ``u0``,
    the viscosity ``k / 50``, over about ``n_steps`` steps (RK45's step is
    bounded by stability: about 0.7 dx^2 / max viscosity); the solution at
    two times, stacked."""
    import numpy as np
    from adsim.demo import rhs
    from adsim.integrate import solve_ivp
    n = u0.shape[0]
    dx = 1.0 / n
    kappa = k / 50
    t_end = n_steps * 0.7 * dx * dx / np.max(kappa)
    stats = options.get("stats")
    found = [] if stats is not None else None
    res = solve_ivp(lambda t, u, kappa: rhs(u, kappa, dx), (0.0, t_end), u0, args=(kappa,),
                    t_eval=[t_end / 2, t_end], memory_limit=options["memory_limit"],
                    snapshots=10 ** 9, stats=found)
    if stats is not None:           # filled by the sweeps, one dict per interval
        stats["intervals"] = found
    return res.y


def _minimum(mode, n, n_steps, directory):
    import adsim as ad
    try:
        _problem(mode, n, n_steps, 1, directory)()
    except ad.MemoryBudgetError as error:
        return int(re.search(r"smallest budget that works is (\d+) bytes", str(error)).group(1))
    raise AssertionError("a budget of 1 byte was accepted")


def _budget(text, minimum):
    from adsim.checkpoint import parse_bytes
    if text == "min":
        return minimum
    if text.startswith("min+"):
        return minimum + parse_bytes(text[4:])
    return parse_bytes(text)


def child(mode, n, n_steps, budget):
    """One measurement in this (fresh) process: with ``budget="base"`` the
    smallest budget of the mode and the peak of the call without the loop,
    else the peak of the call with ``memory_limit=budget``."""
    import adsim as ad
    with tempfile.TemporaryDirectory() as directory:
        loop = budget != "base"
        _problem(mode, 64, 4, 10**7, directory, loop=loop)()   # imports, first-call costs
        if not loop:
            minimum = _minimum(mode, n, n_steps, directory)
            peak, _ = _peak_of(_problem(mode, n, n_steps, None, directory, loop=False))
            return dict(min=minimum, base=peak)
        stats = {}
        try:
            peak, _ = _peak_of(_problem(mode, n, n_steps, int(budget), directory, stats=stats))
        except ad.MemoryBudgetError as error:
            row = dict(error=str(error))
        else:
            # (solve_ivp: its busier interval)
            found = max(stats.get("intervals", [stats]), key=lambda s: s.get("snapshots") or 0)
            row = dict(peak=peak, snapshots=found.get("snapshots"), schedule=found.get("schedule"))
        row["files_left"] = sum(len(files) for _, _, files in os.walk(directory))
        return row


# ---- the parent: one child process per measurement ------------------------------------

def _run_child(mode, n, n_steps, budget):
    cmd = [sys.executable, "-m", "benchmarks.checkpoint_memory", "--child", mode, str(n),
           str(n_steps), str(budget)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def measure(modes, sizes, budgets, n_steps=N_STEPS):
    """Rows (dicts) of the table: each mode, size and budget in a fresh process."""
    rows = []
    for mode in modes:
        for n in sizes:
            base = _run_child(mode, n, n_steps, "base")
            for text in budgets:
                budget = _budget(text, base["min"])
                row = dict(mode=mode, n=n, n_steps=n_steps, budget=text, M=budget, **base)
                row.update(_run_child(mode, n, n_steps, budget))
                if "peak" in row:
                    row.update(added=row["peak"] - row["base"],
                               excess=row["peak"] - row["base"] - budget)
                rows.append(row)
    return rows


def table(rows):
    lines = ["| mode | n | budget | M (MB) | min (MB) | snapshots | added (MB) | excess (MB) |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            tail = f"error: {r['error'][:60]}... | | |"
        else:
            tail = f"{r['snapshots']} | {r['added'] / 1e6:.2f} | {r['excess'] / 1e6:+.2f} |"
        lines.append(f"| {r['mode']} | {r['n']} | {r['budget']} | {r['M'] / 1e6:.2f} "
                     f"| {r['min'] / 1e6:.2f} | {tail}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.checkpoint_memory",
                                description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one size, two modes, two budgets")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--sizes", default=",".join(map(str, SIZES)))
    p.add_argument("--budgets", default=",".join(BUDGETS))
    p.add_argument("--steps", type=int, default=N_STEPS)
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--child", nargs=4, metavar=("MODE", "N", "STEPS", "BUDGET"),
                   help=argparse.SUPPRESS)
    args, _ = p.parse_known_args(argv)
    if args.child:
        mode, n, steps, budget = args.child
        print(json.dumps(child(mode, int(n), int(steps), budget)))
        return 0
    if not os.path.exists("/proc/self/clear_refs"):
        print("peak memory is measured through /proc/self/clear_refs (Linux); not available here")
        return 0
    modes, sizes = args.modes.split(","), [int(s) for s in args.sizes.split(",")]
    budgets = args.budgets.split(",")
    if args.quick:
        modes, sizes, budgets = ["grad", "hvp"], [20_000], ["min", "min+1MB"]
    rows = measure(modes, sizes, budgets, args.steps)
    if args.json:
        print(json.dumps(rows))
        return 0
    print(table(rows))
    worst = max((r["excess"] for r in rows if "excess" in r), default=0)
    print(f"\nlargest excess over memory_limit: {worst / 1e6:+.2f} MB (bound: +{SLACK / 1e6:g} MB); "
          f"files left in snapshot_dir: {sum(r['files_left'] for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
