"""Threads sharing tapes. Every replay runs on buffers of its own (a Replay
from the tape's pool, adsim/_replay.pxi), so threads replaying one tape at
once get bitwise the results of serial replays; large sweeps release the
GIL, and a long replay stays interruptible by Ctrl-C. Runs that could crash
the interpreter if buffers were shared run in a child process, so that a
crash fails the test instead of ending the test session."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import adsim as ad
from threadwork import run_threads
from paths import ROOT

RNG = np.random.default_rng(0)

# ---- tapes: large (the GIL is released), chunked, small (it is kept), with a callback

N_DENSE = 150
A = RNG.uniform(0.0, 1.0, (N_DENSE, N_DENSE))
A = 0.5 * (A + A.T)
B = RNG.uniform(0.0, 1.0, N_DENSE)


def helmholtz(x):
    bx = B @ x
    mix = np.sum(x * np.log(x / (1.0 - bx)))
    attraction = (x @ (A @ x)) / (np.sqrt(8.0) * bx)
    return mix - attraction * np.log((1.0 + (1.0 + np.sqrt(2.0)) * bx)
                                     / (1.0 + (1.0 - np.sqrt(2.0)) * bx))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def small(x):
    return np.sum(np.sin(x) * x[::-1]) + np.log1p(x @ x)


cube = ad.primitive(lambda x: x ** 3, jvp=lambda args, out, t: 3.0 * args[0] ** 2 * t[0],
                    vjp=lambda args, out, w: (3.0 * args[0] ** 2 * w,), name="cube")


def with_callback(x):
    return np.sum(np.tanh(cube(x) * 0.1) * x)


def positive(n, seed):
    x = np.random.default_rng(seed).uniform(0.1, 1.0, n)
    return x * (0.5 / (B @ x)) if n == N_DENSE else x


TAPES = {
    "helmholtz": (helmholtz, N_DENSE),
    "rosenbrock_chunked": (rosenbrock, 40_000),
    "small": (small, 30),
    "callback": (with_callback, 3000),
}
POINTS = 3


def calls(tape, n):
    """(name, function of x) for every replay method, with fixed directions."""
    rng = np.random.default_rng(n)
    v, V = rng.standard_normal(n), rng.standard_normal((n, 3))
    out = [
        ("forward", lambda x: tape.forward(x)),
        ("gradient", lambda x: tape.gradient(x)),
        ("hvp", lambda x: tape.hvp(x, v)),
        ("hvp_3", lambda x: tape.hvp(x, V)),
        ("jvp", lambda x: tape.jvp(x, v)[1]),
        ("jvp_3", lambda x: tape.jvp(x, V)[1]),
        ("vjp", lambda x: tape.vjp(x, 2.0)[1]),
    ]
    if n <= 200:
        out.append(("jacobian", lambda x: tape.jacobian(x)))
    return out


def tasks():
    """Every (tape, method, point) with its serial result."""
    out = []
    for name, (f, n) in TAPES.items():
        xs = [positive(n, seed) for seed in range(POINTS)]
        tape = ad.record(f, xs[0])
        for method, call in calls(tape, n):
            for i, x in enumerate(xs):
                out.append((f"{name}.{method}[{i}]", call, x, np.copy(call(x))))
    return out


@pytest.fixture(scope="module")
def work():
    return tasks()


@pytest.mark.parametrize("n_threads", [2, 4])
def test_threads_sharing_tapes_get_the_serial_results_bitwise(work, n_threads):
    t0 = time.perf_counter()
    assert run_threads(n_threads, work, rounds=2) == []
    assert time.perf_counter() - t0 < 30.0


def test_one_tape_replayed_by_many_threads_at_once():
    """All threads on one method of one tape: the most contention for its pool."""
    x = positive(N_DENSE, 7)
    tape = ad.record(helmholtz, x)
    v = np.random.default_rng(1).standard_normal(N_DENSE)
    expected = tape.hvp(x, v)
    work = [("hvp", lambda x: tape.hvp(x, v), x, expected)]
    assert run_threads(4, work, rounds=100) == []


def test_large_sweeps_let_other_threads_run():
    """While one thread is inside a long replay, another thread keeps running
    Python: the sweep does not hold the GIL. (With the GIL held, the other
    thread would stop for the whole sweep.)"""
    n = 1500
    M = np.random.default_rng(2).uniform(-1.0, 1.0, (n, n)) / n

    def chain(m, z):
        for _ in range(250):
            z = np.tanh(m @ z)
        return z
    x = [M, np.ones(n)]
    tape = ad.record(chain, *x)
    span = []
    started = threading.Event()

    def replay():
        started.set()
        t0 = time.perf_counter()
        tape.forward(*x)
        span.extend([t0, time.perf_counter()])
    thread = threading.Thread(target=replay)
    stamps = []
    thread.start()
    started.wait()
    while thread.is_alive():
        stamps.append(time.perf_counter())
    thread.join()
    inside = np.array([span[0]] + [t for t in stamps if span[0] < t < span[1]] + [span[1]])
    longest = np.diff(inside).max()      # the longest time this thread could not run
    assert longest < 0.5 * (span[1] - span[0]), (longest, span[1] - span[0], len(inside))


def run_child(script, timeout=120):
    """Run ``script`` in a new interpreter with this worktree's adsim."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                                    os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


def test_growing_work_buffers_from_several_threads_never_crash():
    """Threads ask one tape for ever more directions (its buffers grow) while
    others replay it, and its callback (a user primitive) hands the GIL to
    them mid-sweep; in a child process, so that a crash fails the test."""
    result = run_child("""
        import threading
        import numpy as np
        import adsim as ad

        n = 2000
        x = np.linspace(0.1, 1.0, n)
        square = ad.primitive(lambda z: z * z, jvp=lambda a, out, t: 2.0 * a[0] * t[0],
                              vjp=lambda a, out, w: (2.0 * a[0] * w,), name="square")
        tape = ad.record(lambda z: np.sum(np.sin(square(z)) * z[::-1] + z ** 3), x)
        rng = np.random.default_rng(0)
        cases = []
        for k in (1, 2, 5, 9, 17, 33):
            V = rng.standard_normal((n, k))
            cases.append((lambda V=V: tape.jvp(x, V)[1], tape.jvp(x, V)[1]))
            cases.append((lambda V=V: tape.hvp(x, V), tape.hvp(x, V)))
            W = rng.standard_normal((k,))
            cases.append((lambda W=W: tape.vjp(x, W)[1], tape.vjp(x, W)[1]))
        wrong = []

        def worker(seed):
            for j in np.random.default_rng(seed).permutation(len(cases) * 4) % len(cases):
                call, expected = cases[j]
                if not np.array_equal(call(), expected):
                    wrong.append(j)
        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("wrong", len(wrong))
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "wrong 0" in result.stdout


@pytest.mark.parametrize("kind", ["matrix_products", "chunked_run"])
def test_ctrl_c_interrupts_one_long_replay_within_half_a_second(kind):
    """SIGINT during one long compiled replay (over a second) raises
    KeyboardInterrupt within 0.5 s, for ops swept one by one and for a run
    swept chunk by chunk."""
    body = {
        "matrix_products": """
            n = 1500
            M = np.random.default_rng(0).uniform(-1.0, 1.0, (n, n)) / n
            def f(m, z):
                for _ in range(6000):
                    z = m @ z
                return z
            x = [M, np.ones(n)]
        """,
        "chunked_run": """
            def f(z):
                for _ in range(200):
                    z = np.sin(z)
                return z
            x = [np.linspace(0.0, 1.0, 10 ** 6)]
        """,
    }[kind]
    script = textwrap.dedent("""
        import sys, time
        import numpy as np
        import adsim as ad
    """) + textwrap.dedent(body) + textwrap.dedent("""
        tape = ad.record(f, *x)
        print("replaying", flush=True)
        t0 = time.perf_counter()
        try:
            tape.forward(*x)
            print("finished", time.perf_counter() - t0, flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                                    os.environ.get("PYTHONPATH")])))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert child.stdout.readline().strip() == "replaying"
        time.sleep(0.1)
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        latency = time.perf_counter() - sent
        assert line == "interrupted", (line, child.stderr.read()[-2000:])
        assert latency < 0.5, latency
    finally:
        child.kill()
        child.communicate()
