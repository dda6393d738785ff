"""Time of checkpointed derivatives under tight ``memory_limit`` budgets.

A step whose branch changes (an adaptive step accepted, rejected and
re-tried) has several recorded variants; a budget holds them next to the
snapshots, and a variant it cannot hold is recorded again, in Python, each
time its branch comes back. This script times one call of each mode under
budgets from a little above the smallest one to a generous one and without
a limit, the budgets in turn within each round (so that the machine's load
falls on all of them alike), and reports the median time, its ratio to the
generous budget's (``--generous``, 50 MB) and the loop's ``stats`` summed
over its loops: variants recorded, variant misses, snapshots, plain steps
replayed (``forward_steps``).

Modes (the problems of benchmarks/checkpoint_memory.py): ivp_grad, ivp_hvp
(``adsim.integrate.solve_ivp``, RK45, the method-of-lines Burgers equation
of ``adsim.demo`` with ``n`` points over about ``n_steps`` steps, two output
times); branch_grad, branch_hvp (``checkpoint_loop`` whose step takes three
branches in turn). Each call records the function anew (as a first call
does), then runs the mode's sweeps.

Usage::

    python -m benchmarks.checkpoint_budget               # 1000 points (branch: 10^4), 1000 steps
    python -m benchmarks.checkpoint_budget --quick       # a smoke run: small and short
    python -m benchmarks.checkpoint_budget --modes ivp_hvp --budgets min,12MB,20MB,50MB,none
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

from .checkpoint_memory import _minimum, _problem

MODES = ("ivp_grad", "ivp_hvp", "branch_grad", "branch_hvp")
BUDGETS = ("min", "min+1MB", "min+3MB", "20MB", "50MB", "none")
COUNTS = ("recordings", "variant_misses", "snapshots", "forward_steps")


def _budget(text, minimum):
    """``none``, ``min`` (the smallest budget the mode's error states),
    ``min+1MB`` or a size."""
    from adsim.checkpoint import parse_bytes
    if text == "none":
        return None
    if text.startswith("min"):
        return minimum + (parse_bytes(text[4:]) if text.startswith("min+") else 0)
    return parse_bytes(text)


def _counts(stats):
    """The counts of ``COUNTS`` summed over the loops (solve_ivp: one per
    interval), but snapshots: the most a loop kept."""
    loops = stats.get("intervals", [stats])
    return {key: (max if key == "snapshots" else sum)(s.get(key) or 0 for s in loops)
            for key in COUNTS}


def measure(mode, n, n_steps, budgets, rounds):
    """{budget: dict(times=[...], counts=..., error=...)} with the budgets
    timed in turn in each round."""
    import numpy as np
    rows = {b: dict(times=[]) for b in budgets}
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        _problem(mode, 64, 4, 10**7, directory)()           # imports, first-call costs
        minimum = _minimum(mode, n, n_steps, directory)
        for _ in range(rounds):
            for text in budgets:
                row = rows[text]
                if "error" in row:
                    continue
                stats = {}
                row["M"] = _budget(text, minimum)
                call = _problem(mode, n, n_steps, row["M"], directory, stats=stats)
                t0 = time.perf_counter()
                try:
                    value = call()
                except Exception as error:      # a budget below the mode's minimum
                    row["error"] = f"{type(error).__name__}: {str(error)[:120]}"
                    continue
                row["times"].append(time.perf_counter() - t0)
                row["counts"] = _counts(stats)
                value = np.asarray(value[0] if isinstance(value, tuple) else value)
                results.setdefault(text, value)
    reference = results.get(budgets[-1])
    for text, row in rows.items():
        if row["times"]:
            row["median"] = statistics.median(row["times"])
            row["bitwise_equal"] = bool(reference is not None and np.array_equal(
                results[text], reference))
    return rows


def table(mode, rows, generous):
    base = rows.get(generous, {}).get("median")
    lines = [f"{mode}:", "| budget | M (MB) | median (s) | / " + generous + " | recordings "
             "| misses | snapshots | forward steps | bitwise = last |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for text, row in rows.items():
        if "median" not in row:
            lines.append(f"| {text} | {row.get('error', 'not run')} |")
            continue
        c = row["counts"]
        ratio = f"{row['median'] / base:.2f}" if base else "-"
        size = "-" if row["M"] is None else f"{row['M'] / 1e6:.2f}"
        lines.append(f"| {text} | {size} | {row['median']:.3f} | {ratio} | {c['recordings']} "
                     f"| {c['variant_misses']} | {c['snapshots']} | {c['forward_steps']} "
                     f"| {row['bitwise_equal']} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.checkpoint_budget",
                                description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="a smoke run: 100 points (branch: 1000), 100 steps, 2 rounds, "
                        "budgets min+1MB, 20MB, none (the smallest budget thrashes)")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--n", type=int, default=1000, help="points of the ivp modes")
    p.add_argument("--branch-n", type=int, default=10_000, help="state size of the branch modes")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--budgets", default=",".join(BUDGETS),
                   help="sizes such as 20MB, min (the smallest budget), min+1MB or none; "
                        "the last is the reference of bitwise")
    p.add_argument("--generous", default="50MB", help="the budget the ratios are taken to")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", action="store_true")
    args, _ = p.parse_known_args(argv)
    if args.quick:
        args.n, args.branch_n, args.steps, args.rounds = 100, 1000, 100, 2
        args.budgets = "min+1MB,20MB,none"
    budgets = args.budgets.split(",")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    out = {}
    for mode in args.modes.split(","):
        n = args.branch_n if mode.startswith("branch") else args.n
        out[mode] = measure(mode, n, args.steps, budgets, args.rounds)
        if not args.json:
            print(table(mode, out[mode], args.generous), "\n", flush=True)
    if args.json:
        print(json.dumps(dict(load=load, n=args.n, steps=args.steps, modes=out)))
    else:
        print(f"{args.n} points (ivp), a state of {args.branch_n} (branch), about {args.steps} "
              f"steps, {args.rounds} rounds; load: {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
