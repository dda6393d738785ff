"""Two threads replaying one tape: speed-up over one thread.

Tapes (each recorded once; both threads replay the SAME tape object):

* **elementwise**: the 2-D reaction–diffusion residual of the large-arrays
  area (5-point stencil, ``exp``, ``tanh``, sum of squares) on a 316 x 316
  grid (10^5 points; ``--quick``: 100 x 100);
* **checkpointed loop**: the demo's Burgers problem (``adsim.demo``: 1000
  points, periodic central differences, RK4) through ``checkpoint_loop``,
  100 steps (``--quick``: 20), Revolve with its default snapshots;
* **solve_ivp**: Lorenz-63 with DOP853 (t in [0, 2], rtol 1e-8) and the
  Robertson kinetics with Radau and with BDF (t in [0, 2]; ``--quick``:
  0.05; the ode area's problems), as functions of their parameters (Radau
  and BDF: forward and gradient only).

For each tape and method (``tape.forward``, ``tape.gradient``, ``tape.hvp``)
a round times 2K replays on one worker thread, then K replays on each of two
worker threads started together, then K replays in each of two worker
processes (spawned; each loaded the tape from its file before timing) at
once. K is chosen so that one thread's 2K replays last about 0.2 s. The
speed-up is the median over the rounds of one thread's time over two
threads' (ideal 2; goal >= 1.7); that of two processes, which share
nothing, is what this machine gives two independent replays at the time,
the bound for threads (not measured in a ``--quick`` smoke run). Every
result is checked bitwise against one thread's.

On a shared machine other processes take cores too, so each thread's wall
time is split with the kernel's scheduler statistics
(``/proc/thread-self/schedstat``, Linux) into *running*, *waiting for a
core* (the machine's load: not adsim's doing) and *blocked* (neither
running nor runnable: waiting for the GIL or another lock, which is where
threads serialize); and two measures that the machine's load does not
change: the times a thread went to sleep per replay (its voluntary context
switches: each wait for the GIL that was not over at once is one), and the
CPU time per replay on two threads over that on one (above 1 when the
threads slow each other down: shared caches, memory bandwidth, false
sharing). The load average
is printed before and after. Tapes are replayed by the interpreter
(``adsim.set_fusion("never")``): automatic fusion would change kernels, and
with them the last bits of the results, part way through the rounds.

Run as ``python -m benchmarks threads [--quick]``.
"""
import contextlib
import hashlib
import multiprocessing
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np

import adsim as ad
from adsim import demo
from adsim.integrate import solve_ivp
from adsim.tapefile import dumps, loads

from . import ode
from . import timing as T
from .large_arrays import reaction_diffusion

AREA = "threads"
GOAL = 1.7
METHODS = ("forward", "gradient", "hvp")


# ---- the tapes -------------------------------------------------------------------------

def elementwise_case(quick):
    k = 100 if quick else 316
    x = np.random.default_rng(0).uniform(0.1, 1.0, k * k)
    return f"elementwise (reaction–diffusion, {k}²)", reaction_diffusion, (x,)


def loop_case(quick):
    n_steps = 20 if quick else 100
    _, dx, u0, kappa, dt = demo.setup(1000)
    u_obs = np.roll(u0, 50)

    def loss(kappa, u0):
        u = ad.checkpoint_loop(demo.rk4_step, u0, n_steps, args=(kappa, dt, dx))
        return 0.5 * np.sum((u - u_obs) ** 2) * dx
    return f"checkpointed loop (Burgers, 1000 points, {n_steps} RK4 steps)", loss, (kappa, u0)


def lorenz_case(quick):
    def loss(p):
        sol = solve_ivp(ode.lorenz, (0.0, 0.5 if quick else 2.0), np.array([1.0, 1.0, 1.0]),
                        method="DOP853", args=(p,), rtol=1e-8, atol=1e-8)
        return np.sum(sol.y[:, -1] ** 2)
    return "solve_ivp (Lorenz-63, DOP853)", loss, (np.array([10.0, 28.0, 8.0 / 3.0]),)


def robertson_case(quick, method):
    t_end = 0.05 if quick else 2.0

    def loss(log_k):
        sol = solve_ivp(ode.robertson, (0.0, t_end), np.array([1.0, 0.0, 0.0]),
                        method=method, args=(np.exp(log_k),), rtol=1e-6, atol=1e-10,
                        t_eval=np.linspace(t_end / 4, t_end, 4))
        return np.sum(sol.y[0] + 1e4 * sol.y[1])
    return f"solve_ivp (Robertson, {method})", loss, (np.log([0.04, 3e7, 1e4]),)


# (tape, methods timed): the hvp of Radau and BDF runs the Python rules of
# their Newton solves for seconds per call, which says nothing more about
# threads than their gradients
CASES = ((elementwise_case, METHODS), (loop_case, METHODS), (lorenz_case, METHODS),
         (lambda quick: robertson_case(quick, "Radau"), ("forward", "gradient")),
         (lambda quick: robertson_case(quick, "BDF"), ("forward", "gradient")))


def calls(tape, xs):
    """method -> a call of it at the point ``xs`` (one fixed direction for hvp)."""
    vs = tuple(np.linspace(-1.0, 1.0, x.size).reshape(x.shape) for x in xs)
    point, direction = (xs[0], vs[0]) if len(xs) == 1 else (xs, vs)
    return {"forward": lambda: tape.forward(*xs),
            "gradient": lambda: tape.gradient(*xs),
            "hvp": lambda: tape.hvp(point, direction)}


# ---- timing ----------------------------------------------------------------------------

def thread_clock():
    """(wall, running, waiting for a core) seconds of the calling thread so
    far, and its voluntary context switches (the last three from the
    kernel's statistics; NaN where there are none)."""
    wall, running = time.perf_counter(), time.thread_time()
    try:        # (the schedstat running time is brought up to date only every tick)
        with open("/proc/thread-self/schedstat") as f:
            wait_ns = int(f.read().split()[1])
        with open("/proc/thread-self/status") as f:
            sleeps = next(int(line.split()[1]) for line in f
                          if line.startswith("voluntary_ctxt_switches"))
        return wall, running, wait_ns * 1e-9, sleeps
    except (OSError, ValueError, IndexError, StopIteration):
        return wall, running, float("nan"), float("nan")


def timed_calls(fn, count, start):
    """Run ``fn`` ``count`` times after ``start`` (a barrier); returns the last
    result and this thread's (wall, running, waiting) seconds and sleeps."""
    start.wait()
    before = thread_clock()
    for _ in range(count):
        out = fn()
    after = thread_clock()
    return out, tuple(b - a for a, b in zip(before, after))


def one_round(pool, fn, k):
    """Seconds for 2k calls on one thread and k calls on each of two, and the
    two threads' (wall, running, waiting, sleeps) with their results."""
    t0 = time.perf_counter()
    single = pool.submit(timed_calls, fn, 2 * k, threading.Barrier(1)).result()
    one = time.perf_counter() - t0
    start = threading.Barrier(2)
    t0 = time.perf_counter()
    futures = [pool.submit(timed_calls, fn, k, start) for _ in range(2)]
    pair = [f.result() for f in futures]
    two = time.perf_counter() - t0
    return one, two, single, pair


def _bits(out):
    return np.asarray(out).tobytes()


_LOADED = {}        # in a worker process: tapes loaded from their files, by hash


def process_calls(data, key, xs, method, k):
    """In a worker process: ``k`` calls of ``method`` of the tape in file
    ``data`` (loaded once per process); the last result's bytes."""
    tape = _LOADED.get(key)
    if tape is None:
        tape = _LOADED[key] = loads(data)
    out, _ = timed_calls(calls(tape, xs)[method], k, threading.Barrier(1))
    return _bits(out)


def measure(fn, s, processes=None):
    """Speed-up of two threads over one for ``fn``, and of two processes
    when ``processes`` = (pool, tape file, its hash, xs, method) (see the
    module docstring)."""
    rounds = 2 if s.quick else 3
    target = 0.05 if s.quick else 0.2          # seconds of one thread's 2k calls
    with ThreadPoolExecutor(2) as pool:
        pool.submit(fn).result()                # (first-call costs: not timed)
        t0 = time.perf_counter()
        pool.submit(fn).result()
        k = max(1, int(target / 2 / max(time.perf_counter() - t0, 1e-6)))
        expected = _bits(pool.submit(fn).result())
        if processes is not None:
            procs, data, key, xs, method = processes
            in_process = [procs.submit(process_calls, data, key, xs, method, 1) for _ in range(4)]
            assert all(f.result() == expected for f in in_process), \
                "a tape loaded in another process gave results that differ from this one's"
        ones, twos, pairs, blocked, waiting, sleeps, cpu = [], [], [], [], [], [], []
        for _ in range(rounds):
            one, two, single, pair = one_round(pool, fn, k)
            assert _bits(single[0]) == expected and all(_bits(o) == expected for o, _ in pair), \
                "two threads replaying one tape gave results that differ from one thread's"
            ones.append(one)
            twos.append(two)
            wall = sum(c[0] for _, c in pair)
            running = sum(c[1] for _, c in pair)
            waits = sum(c[2] for _, c in pair)
            waiting.append(waits / wall)
            blocked.append(max(0.0, wall - running - waits) / wall)
            sleeps.append(sum(c[3] for _, c in pair) / (2 * k))
            cpu.append(running / single[1][1])         # both made 2k replays
            if processes is not None:
                t0 = time.perf_counter()
                both = [procs.submit(process_calls, data, key, xs, method, k) for _ in range(2)]
                assert all(f.result() == expected for f in both)
                pairs.append(time.perf_counter() - t0)
    return {"calls_per_thread": k, "rounds": rounds,
            "one_thread_per_call": statistics.median(ones) / (2 * k),
            "two_threads_per_call": statistics.median(twos) / (2 * k),
            "speedup": statistics.median(o / t for o, t in zip(ones, twos)),
            "speedups": [o / t for o, t in zip(ones, twos)],
            "processes_speedup": statistics.median(o / t for o, t in zip(ones, pairs))
            if pairs else None,
            "blocked": statistics.median(blocked), "waiting": statistics.median(waiting),
            "sleeps_per_replay": statistics.median(sleeps), "cpu_ratio": statistics.median(cpu)}


def run(s):
    # The interpreter throughout: automatic fusion would switch a tape to
    # compiled kernels part way through the rounds, whose results differ from
    # the interpreter's in the last bits, and every result is compared bitwise.
    ad.set_fusion("never")
    load_before = os.getloadavg()
    rows = []
    with contextlib.ExitStack() as stack:
        procs = None if s.quick else stack.enter_context(    # (a smoke run: no processes)
            ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")))
        for make, methods in CASES:
            name, f, xs = make(s.quick)
            tape = ad.record(f, *xs)
            data = dumps(tape)
            key = hashlib.sha256(data).hexdigest()
            for method, fn in calls(tape, xs).items():
                if method not in methods:
                    continue
                r = measure(fn, s, None if procs is None else (procs, data, key, xs, method))
                rows.append({"tape": name, "method": method, **r})
                print(f"{name:55s} {method:8s} {1e3 * r['one_thread_per_call']:9.3f} ms  "
                      f"threads x{r['speedup']:.2f}  processes x{r['processes_speedup'] or 0:.2f}  "
                      f"blocked {100 * r['blocked']:.0f}%  waiting {100 * r['waiting']:.0f}%  "
                      f"sleeps {r['sleeps_per_replay']:.2g}  CPU x{r['cpu_ratio']:.2f}",
                      file=sys.stderr, flush=True)
    return {"goal": GOAL, "rows": rows, "load_before": load_before,
            "load_after": os.getloadavg()}


def markdown(res, s, machine):
    def load(v):
        return " / ".join(f"{x:.2f}" for x in v)
    lines = ["## Two threads on one tape\n", T.header(AREA, s, machine), "",
             f"Milliseconds per replay on one thread; speed-up of two threads replaying the "
             f"same tape over one (median over {res['rows'][0]['rounds']} rounds; ideal 2, goal "
             f"≥ {res['goal']:g}); of two processes replaying copies of it at once, what the "
             f"machine gave work that shares nothing at the time. Blocked: the share of the two threads' time spent neither "
             f"running nor waiting for a core (waiting for the GIL or a lock); waiting: the "
             f"share spent waiting for a core taken by other processes; sleeps: the times a "
             f"thread went to sleep (for the GIL or a lock) per replay; CPU: the CPU time of a "
             f"replay on two threads over that on one. Load average before "
             f"{load(res['load_before'])}, after {load(res['load_after'])}.", ""]
    rows = [(r["tape"], r["method"], f"{1e3 * r['one_thread_per_call']:.3g}",
             T.fmt_ratio(r["speedup"]), f"{min(r['speedups']):.2f}–{max(r['speedups']):.2f}",
             T.fmt_ratio(r["processes_speedup"]), f"{100 * r['blocked']:.0f} %",
             f"{100 * r['waiting']:.0f} %", f"{r['sleeps_per_replay']:.2g}",
             f"{r['cpu_ratio']:.2f}")
            for r in res["rows"]]
    lines.append(T.table(["tape", "method", "one thread (ms)", "speed-up, 2 threads",
                          "range", "speed-up, 2 processes", "blocked", "waiting for a core",
                          "sleeps per replay", "CPU, 2 threads / 1"],
                         rows))
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
