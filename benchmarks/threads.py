"""Two threads replaying one tape: speed-up over one thread.

Tapes (each recorded once; both threads replay the SAME tape object):

* **elementwise**: the 2-D reaction–diffusion residual of the large-arrays
  area (5-point stencil, ``exp``, ``tanh``, sum of squares) on a 316 x 316
  grid (10^5 points; ``--quick``: 100 x 100);
* **checkpointed loop**: the demo's Burgers problem (``adsim.demo``: 1000
  points, periodic central differences, RK4) through ``checkpoint_loop``,
  400 steps (``--quick``: 40), Revolve with its default snapshots;
* **solve_ivp**: Lorenz-63 with DOP853 (t in [0, 2], rtol 1e-8) and the
  Robertson kinetics with Radau (the ode area's problems), as functions of
  their parameters.

For each tape and method (``tape.forward``, ``tape.gradient``, ``tape.hvp``)
a round times 2K replays on one worker thread, then K replays on each of two
worker threads started together (K is chosen so that a round lasts about a
second); the speed-up is the median over the rounds of one thread's time
over two threads' (ideal 2; goal >= 1.7). Every two-thread result is checked
bitwise against the one-thread result.

On a shared machine other processes take cores too, so each thread's wall
time is split with the kernel's scheduler statistics
(``/proc/thread-self/schedstat``, Linux) into *running*, *waiting for a
core* (the machine's load: not adsim's doing) and *blocked* (neither
running nor runnable: waiting for the GIL or another lock, which is where
threads serialize). The load average is printed before and after.

Run as ``python -m benchmarks threads [--quick]``.
"""
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import adsim as ad
from adsim import demo
from adsim.integrate import solve_ivp

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
    n_steps = 40 if quick else 400
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


def robertson_case(quick):
    t_eval = np.linspace(4.0, 40.0, 10)

    def loss(log_k):
        sol = solve_ivp(ode.robertson, (0.0, 4.0 if quick else 40.0), np.array([1.0, 0.0, 0.0]),
                        method="Radau", args=(np.exp(log_k),), rtol=1e-6, atol=1e-10,
                        t_eval=t_eval[:1] if quick else t_eval)
        return np.sum(sol.y[0] + 1e4 * sol.y[1])
    return "solve_ivp (Robertson, Radau)", loss, (np.log([0.04, 3e7, 1e4]),)


CASES = (elementwise_case, loop_case, lorenz_case, robertson_case)


def calls(tape, xs):
    """method -> a call of it at the point ``xs`` (one fixed direction for hvp)."""
    vs = tuple(np.linspace(-1.0, 1.0, x.size).reshape(x.shape) for x in xs)
    point, direction = (xs[0], vs[0]) if len(xs) == 1 else (xs, vs)
    return {"forward": lambda: tape.forward(*xs),
            "gradient": lambda: tape.gradient(*xs),
            "hvp": lambda: tape.hvp(point, direction)}


# ---- timing ----------------------------------------------------------------------------

def thread_clock():
    """(wall, running, waiting for a core) seconds of the calling thread so far
    (the last two from the scheduler's statistics; NaN where there are none)."""
    wall = time.perf_counter()
    try:
        with open("/proc/thread-self/schedstat") as f:
            run_ns, wait_ns = (int(v) for v in f.read().split()[:2])
        return wall, run_ns * 1e-9, wait_ns * 1e-9
    except (OSError, ValueError):
        return wall, time.thread_time(), float("nan")


def timed_calls(fn, count, start):
    """Run ``fn`` ``count`` times after ``start`` (a barrier); returns the last
    result and this thread's (wall, running, waiting) seconds."""
    start.wait()
    before = thread_clock()
    for _ in range(count):
        out = fn()
    after = thread_clock()
    return out, tuple(b - a for a, b in zip(before, after))


def one_round(pool, fn, k):
    """Seconds for 2k calls on one thread and k calls on each of two, and the
    two threads' totals of (wall, running, waiting) with their results."""
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


def measure(fn, s):
    """Speed-up of two threads over one for ``fn`` (see the module docstring)."""
    rounds = 2 if s.quick else 5
    target = 0.05 if s.quick else 0.5          # seconds of one thread's 2k calls
    with ThreadPoolExecutor(2) as pool:
        pool.submit(fn).result()                # (first-call costs: not timed)
        t0 = time.perf_counter()
        pool.submit(fn).result()
        k = max(1, int(target / 2 / max(time.perf_counter() - t0, 1e-6)))
        expected = _bits(pool.submit(fn).result())
        ones, twos, blocked, waiting = [], [], [], []
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
    return {"calls_per_thread": k, "rounds": rounds,
            "one_thread_per_call": statistics.median(ones) / (2 * k),
            "two_threads_per_call": statistics.median(twos) / (2 * k),
            "speedup": statistics.median(o / t for o, t in zip(ones, twos)),
            "speedups": [o / t for o, t in zip(ones, twos)],
            "blocked": statistics.median(blocked), "waiting": statistics.median(waiting)}


def run(s):
    load_before = os.getloadavg()
    rows = []
    for make in CASES:
        name, f, xs = make(s.quick)
        tape = ad.record(f, *xs)
        for method, fn in calls(tape, xs).items():
            rows.append({"tape": name, "method": method, **measure(fn, s)})
            r = rows[-1]
            print(f"{name:55s} {method:8s} {1e3 * r['one_thread_per_call']:9.3f} ms  "
                  f"x{r['speedup']:.2f}  blocked {100 * r['blocked']:.0f}%  "
                  f"waiting {100 * r['waiting']:.0f}%", file=sys.stderr, flush=True)
    return {"goal": GOAL, "rows": rows, "load_before": load_before,
            "load_after": os.getloadavg()}


def markdown(res, s, machine):
    def load(v):
        return " / ".join(f"{x:.2f}" for x in v)
    lines = ["## Two threads on one tape\n", T.header(AREA, s, machine), "",
             f"Milliseconds per replay on one thread; speed-up of two threads replaying the "
             f"same tape over one (median over {res['rows'][0]['rounds']} rounds; ideal 2, goal "
             f"≥ {res['goal']:g}). Blocked: the share of the two threads' time spent neither "
             f"running nor waiting for a core (waiting for the GIL or a lock); waiting: the "
             f"share spent waiting for a core taken by other processes. Load average before "
             f"{load(res['load_before'])}, after {load(res['load_after'])}.", ""]
    rows = [(r["tape"], r["method"], f"{1e3 * r['one_thread_per_call']:.3g}",
             T.fmt_ratio(r["speedup"]), f"{min(r['speedups']):.2f}–{max(r['speedups']):.2f}",
             f"{100 * r['blocked']:.0f} %", f"{100 * r['waiting']:.0f} %") for r in res["rows"]]
    lines.append(T.table(["tape", "method", "one thread (ms)", "speed-up, 2 threads",
                          "range", "blocked", "waiting for a core"], rows))
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
