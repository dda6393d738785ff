"""Batch derivatives with adsim.parallel.map: speed-up over serial replays.

Two workloads, each run serially (a Python loop over ``tape.gradient``) and
with ``adsim.parallel.map`` on three executors of 2 workers each: a thread
pool, a process pool (spawned processes: the tape travels as its tape file
with every chunk) and, when dask.distributed is installed, a Dask
LocalCluster of 2 worker processes with one thread each (the tape is
scattered once to each worker).

* **Ensemble**: 24 gradients of a checkpointed Lorenz-63 misfit (problem
  ``lorenz63``: 4000 RK4 steps in one ``checkpoint_loop``, Revolve with the
  default snapshots) at 24 parameter sets; ``--quick``: 6 gradients, 200
  steps. Goal: speed-up >= 1.4 on 2 workers (of an ideal 2).
* **Per-task overhead**: a trivial tape (``sum(x * x)``, 3 inputs) at 2000
  points (``--quick``: 200), one point per task (``chunk_size=1``), and with
  the default chunks (about four per worker). The overhead per task is the
  time per point minus the serial time per point.

Every executor's results are checked bitwise against the serial ones.
Times are medians over rounds that call every method once in turn (so that
the load of a shared machine weighs on all alike), after a warm-up round
(executors are started before timing; their first map ships and loads the
tape). Times are wall-clock; the serial loop's CPU time is reported too, as
a measure of how much of a core the machine gave it. Threads share the tape;
the loop's executor runs its steps in C without the GIL (two threads on one
tape: ``python -m benchmarks threads``).

Run as ``python -m benchmarks parallel [--quick]``.
"""
import contextlib
import importlib.util
import math
import multiprocessing
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np

import adsim as ad
from adsim import parallel

from . import problems
from . import timing as T

AREA = "parallel"
WORKERS = 2
GOAL = 1.4                      # speed-up of the ensemble on 2 workers
SIZES = {"members": 24, "steps": 4000, "points": 2000}
QUICK_SIZES = {"members": 6, "steps": 200, "points": 200}


# ---- the Lorenz-63 misfit -------------------------------------------------------------

def lorenz63(u, p, xp=np):
    return xp.stack([p[0] * (u[1] - u[0]), u[0] * (p[1] - u[2]) - u[1], u[0] * u[1] - p[2] * u[2]])


def lorenz63_step(u, p, dt, xp=np):
    k1 = lorenz63(u, p, xp)
    k2 = lorenz63(u + 0.5 * dt * k1, p, xp)
    k3 = lorenz63(u + 0.5 * dt * k2, p, xp)
    k4 = lorenz63(u + dt * k3, p, xp)
    return u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def lorenz63_misfit(p, u0, target, n_steps, dt, xp=np):
    """Squared distance of u(n_steps dt) to ``target``: a plain loop (the
    benchmark checkpoints it with ``extras['step']``)."""
    u = u0
    for _ in range(int(n_steps)):
        u = lorenz63_step(u, p, dt, xp)
    return xp.sum((u - target) ** 2)


def make_lorenz63(n, rng):
    p = np.array([10.0, 28.0, 8.0 / 3.0]) * (1.0 + 0.01 * rng.standard_normal(3))
    return p, (np.array([1.0, 1.0, 1.0]), np.array([-2.0, 1.0, 24.0]), 4000, 0.0025)


problems.register(problems.Problem(
    "lorenz63", "Lorenz-63 misfit after 4000 RK4 steps (3 parameters)", lorenz63_misfit,
    make_lorenz63, sizes=(3,), quick_sizes=(3,), tags=frozenset({"loop"}),
    data="p = (10, 28, 8/3) (1 + 0.01 `rng.standard_normal(3)`), u0 = (1, 1, 1), "
         "dt = 0.0025, target (-2, 1, 24).",
    extras={"step": lorenz63_step}))


def ensemble_tape(steps):
    inst = problems.get("lorenz63").instance(3)
    u0, target, _, dt = inst.params
    step = inst.problem.extras["step"]

    def misfit(p):
        u = ad.checkpoint_loop(step, u0, steps, args=(p, dt))
        return np.sum((u - target) ** 2)
    members = [inst.x * (1.0 + 0.02 * k / SIZES["members"]) for k in range(SIZES["members"])]
    return ad.record(misfit, inst.x), members


# ---- executors ----------------------------------------------------------------------------

@contextlib.contextmanager
def executors():
    """name -> an executor of WORKERS workers, or the reason it cannot run."""
    with contextlib.ExitStack() as stack:
        pools = {"threads": stack.enter_context(ThreadPoolExecutor(WORKERS)),
                 "processes": stack.enter_context(ProcessPoolExecutor(
                     WORKERS, mp_context=multiprocessing.get_context("spawn")))}
        if importlib.util.find_spec("distributed") is None:
            pools["dask"] = "dask.distributed not installed"
        else:
            import distributed
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=WORKERS, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=50))
            pools["dask"] = stack.enter_context(distributed.Client(cluster))
        yield pools


def _bits(results):
    return [np.asarray(r).tobytes() for r in results]


def measure_map(tape, points, pools, s, want, chunk_size=None):
    """Serial timing, and each executor's timing and speed-up. The methods
    are timed in rounds (one call of each per round), so that a change of
    the machine's load during the run weighs on all of them alike."""
    calls = {"serial": lambda: [tape.gradient(p) for p in points]}
    out = {}
    for name, pool in pools.items():
        if isinstance(pool, str):
            out[name] = {"skipped": pool}
            continue

        def batch(pool=pool):
            return parallel.map("gradient", tape, points, executor=pool, chunk_size=chunk_size)
        assert _bits(batch()) == want, f"{name}: results differ from serial replays"
        calls[name] = batch
    for name, timing in _rounds(calls, s).items():
        out[name] = {"timing": timing}
        if name != "serial":
            out[name]["speedup"] = out["serial"]["timing"].median / timing.median
    return out


def _rounds(calls, s):
    """Medians over rounds of one call of each method (after one warm-up
    round); rounds of short calls repeat each call so that it lasts
    ``s.target`` at least, and no more rounds run than fit ``s.budget``."""
    started = time.perf_counter()
    number = {}
    for name, call in calls.items():
        t0 = time.perf_counter()
        call()
        number[name] = max(1, math.ceil(s.target / max(time.perf_counter() - t0, 1e-9)))
    first = time.perf_counter() - started
    repeats = max(1, min(s.repeats, int(s.budget * len(calls) / max(first, 1e-9))))
    samples = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(number[name]):
                call()
            samples[name].append((time.perf_counter() - t0) / number[name])
            cpu[name].append((time.process_time() - c0) / number[name])
    return {name: T.Timing(statistics.median(v), min(v), max(v), repeats, number[name],
                           statistics.median(cpu[name]))
            for name, v in samples.items()}


def run(s):
    sizes = QUICK_SIZES if s.quick else SIZES
    tape, members = ensemble_tape(sizes["steps"])
    members = members[:sizes["members"]]
    trivial = ad.record(lambda x: np.sum(x * x), np.ones(3))
    points = [np.array([1.0, 2.0, 3.0]) + 0.001 * k for k in range(sizes["points"])]
    with executors() as pools:
        want = _bits(tape.gradient(p) for p in members)
        ensemble = measure_map(tape, members, pools, s, want)
        want = _bits(trivial.gradient(p) for p in points)
        per_task = measure_map(trivial, points, pools, s, want, chunk_size=1)
        chunked = measure_map(trivial, points, pools, s, want)
    n = len(points)
    base = per_task["serial"]["timing"].median / n
    overhead = {name: (e["timing"].median / n - base) for name, e in per_task.items()
                if "timing" in e and name != "serial"}
    return {"sizes": sizes, "workers": WORKERS, "goal": GOAL, "ensemble": ensemble,
            "per_task": per_task, "chunked": chunked, "overhead_per_task": overhead,
            "tape_bytes": {"ensemble": len(ad.tapefile.dumps(tape)),
                           "trivial": len(ad.tapefile.dumps(trivial))}}


# ---- reporting ---------------------------------------------------------------------------

LABELS = {"serial": "serial loop of `tape.gradient`", "threads": "threads",
          "processes": "process pool (spawn)", "dask": "Dask LocalCluster"}


def _row(label, e, what):
    if "skipped" in e:
        return [label, f"skipped: {e['skipped']}", "–", "–"]
    speedup = e.get("speedup")
    return [label, T.fmt_timing(e["timing"]), T.fmt_time(e["timing"].median / what),
            "1" if speedup is None else T.fmt_ratio(speedup)]


def markdown(res, s, machine):
    sz = res["sizes"]
    lines = ["## Batch derivatives (adsim.parallel)\n", T.header(AREA, s, machine), "",
             f"{res['workers']} workers per executor. Ensemble: {sz['members']} gradients of a "
             f"checkpointed Lorenz-63 misfit ({sz['steps']} RK4 steps, tape file "
             f"{res['tape_bytes']['ensemble']} bytes); goal: speed-up ≥ {res['goal']:g} on "
             f"{res['workers']} workers.", ""]
    rows = [_row(f"ensemble: {LABELS[k]}", e, sz["members"]) for k, e in res["ensemble"].items()]
    lines.append(T.table(["workload", "time per batch", "per gradient", "speed-up"], rows))
    best = max((e.get("speedup", 0.0) for k, e in res["ensemble"].items() if k != "serial"),
               default=0.0)
    serial = res["ensemble"]["serial"]["timing"]
    lines += ["", f"Best ensemble speed-up {best:.2f} (goal ≥ {res['goal']:g}: "
              f"{'met' if best >= res['goal'] else '**not met**'}). The serial loop took "
              f"{T.fmt_time(serial.median / sz['members'])} of wall-clock time but "
              f"{T.fmt_time(serial.cpu_median / sz['members'])} of CPU time per gradient: the "
              f"rest is time this process waited for a core, which no executor can give back.",
              "",
              f"Trivial tape (`sum(x * x)`, 3 inputs, tape file {res['tape_bytes']['trivial']} "
              f"bytes) at {sz['points']} points:", ""]
    rows = [_row(f"one point per task: {LABELS[k]}", e, sz["points"])
            for k, e in res["per_task"].items()]
    rows += [_row(f"default chunks: {LABELS[k]}", e, sz["points"])
             for k, e in res["chunked"].items() if k != "serial"]
    lines.append(T.table(["workload", "time per batch", "per point", "speed-up"], rows))
    lines += ["", "Overhead per task (time per point with one point per task, minus the serial "
              "time per point): " + ", ".join(f"{LABELS[k]} {T.fmt_time(v)}"
                                             for k, v in res["overhead_per_task"].items()) + ".",
              ""]
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
