"""Recomputation of the checkpoint schedules: offline Revolve vs. online.

Prints a markdown table of plain step evaluations per loop step
(``forward_steps / n``, the recomputation factor) for the binomial schedule
``Revolve(n, s)``, which knows ``n`` in advance, and for ``Online(s)``, which
learns ``n`` only when the loop stops. The online count includes its whole
forward pass (``n`` steps); Revolve needs only ``n - 1`` plain steps before
its first turn. ``ratio`` is online / offline. A second table gives, for
each snapshot count, the worst ratio over all loop lengths in a range.

Usage::

    python benchmarks/checkpoint_schedules.py            # n up to 10**5
    python benchmarks/checkpoint_schedules.py --quick    # n up to 10**4
    python benchmarks/checkpoint_schedules.py --verify   # also execute every
                                                         # schedule (simulate)
"""

import argparse
import sys
import time
from pathlib import Path

try:
    import adsim.checkpoint as checkpoint
except ImportError:  # run from a source checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import adsim.checkpoint as checkpoint

LENGTHS = (10**3, 10**4, 10**5)
QUICK_LENGTHS = (10**3, 10**4)
SNAPSHOTS = (10, 30, 100)
WORST_CASE_SNAPSHOTS = (2, 3, 5, 10, 30, 100)


def measure(n_steps, snapshots, verify):
    """Counts of both schedules for one loop, and the online time per step."""
    offline = checkpoint.Revolve(n_steps, snapshots)
    online = checkpoint.Online(snapshots)
    started = time.perf_counter()
    online_total = online.forward_steps_for(n_steps)
    seconds = time.perf_counter() - started
    if verify:
        counted = checkpoint.simulate(offline).forward_steps
        assert counted == offline.forward_steps, (n_steps, snapshots)
        actions = checkpoint.Online(snapshots).actions(n_steps)
        counted = checkpoint.simulate(actions, n_steps, snapshots).forward_steps
        assert counted == online_total, (n_steps, snapshots)
    return {
        "n": n_steps,
        "s": snapshots,
        "r": offline.repetition_number,
        "offline": offline.forward_steps,
        "online": online_total,
        "microseconds": 1e6 * seconds / n_steps,
    }


def table(rows):
    """The rows as a markdown table."""
    lines = [
        "| n | s | r | Revolve forward_steps | Revolve / n | Online forward_steps "
        "| Online / n | ratio online/offline | online decision time per step |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        n = row["n"]
        lines.append(
            f"| {n} | {row['s']} | {row['r']} | {row['offline']} "
            f"| {row['offline'] / n:.3f} | {row['online']} | {row['online'] / n:.3f} "
            f"| {row['online'] / row['offline']:.3f} | {row['microseconds']:.1f} us |"
        )
    return "\n".join(lines)


def worst_ratios(snapshots, longest):
    """Largest online/offline ratio below and from 100 steps, with its n.

    Every n up to 3000 is checked, then every 89th (one forward pass).
    """
    schedule = checkpoint.Online(snapshots)
    lengths = list(range(2, min(longest, 3000) + 1)) + list(range(3001, longest + 1, 89))
    worst = {"short": (0.0, 0), "long": (0.0, 0)}
    step = 0
    for n_steps in lengths:
        while step < n_steps:
            schedule.forward_step(step)
            step += 1
        online = n_steps + schedule.reverse_steps(n_steps)
        ratio = online / checkpoint.binomial_cost(n_steps, snapshots)
        key = "short" if n_steps < 100 else "long"
        worst[key] = max(worst[key], (ratio, n_steps))
    return worst


def worst_table(longest):
    """Markdown table of the worst ratios for each snapshot count."""
    lines = [
        f"| s | worst ratio, 2 <= n < 100 | worst ratio, 100 <= n <= {longest} |",
        "|---:|---:|---:|",
    ]
    for snapshots in WORST_CASE_SNAPSHOTS:
        worst = worst_ratios(snapshots, longest)
        (short, short_n), (long, long_n) = worst["short"], worst["long"]
        lines.append(f"| {snapshots} | {short:.3f} (n={short_n}) | {long:.3f} (n={long_n}) |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only n = 10**3 and 10**4")
    parser.add_argument(
        "--verify", action="store_true", help="execute every schedule and check its counts"
    )
    options = parser.parse_args(argv)
    lengths = QUICK_LENGTHS if options.quick else LENGTHS
    rows = [measure(n, s, options.verify) for n in lengths for s in SNAPSHOTS]
    print(table(rows))
    print()
    print(worst_table(max(lengths)))


if __name__ == "__main__":
    main()
