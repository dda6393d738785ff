"""Transformed functions and the one-shot functions' cache used from several
threads at once (bounded in time).

The Python layer is what is checked here: the locked tape caches (lookups,
insertions and evictions racing), recordings running in several threads at
once, and the registry of the one-shot functions. Each thread replays only
tapes of its own keys (its own static argument or shape), so no tape is
replayed by two threads at the same moment.
"""
import sys
import threading
import time

import numpy as np

import adsim
from adsim._tapecache import cache as _cache
from fdcheck import assert_close

THREADS = 4
SECONDS = 1.0       # per scenario, at most
SWITCH = 1e-5       # seconds between thread switches: races show up often


def run_threads(work):
    """Run ``work(thread_index, deadline)`` in THREADS threads switching
    often; re-raise the first failure."""
    errors = []
    start = threading.Barrier(THREADS)
    deadline = time.monotonic() + SECONDS

    def target(t):
        try:
            start.wait()
            work(t, deadline)
        except BaseException as err:       # reported in the main thread
            errors.append(err)
    threads = [threading.Thread(target=target, args=(t,)) for t in range(THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH)
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=30)
    finally:
        sys.setswitchinterval(interval)
    assert not any(th.is_alive() for th in threads), "a thread hung"
    if errors:
        raise errors[0]


def f(x, k):
    return np.sum(np.sin(x) * x ** k)


def f_grad(x, k):
    return np.cos(x) * x ** k + k * np.sin(x) * x ** (k - 1)


def test_shared_transformed_function_with_evictions_and_recordings():
    """Four threads, three keys each: twelve keys for eight cached tapes, so
    lookups, recordings, insertions and evictions race."""
    g = adsim.grad(f)
    calls = [0] * THREADS

    def work(t, deadline):
        rng = np.random.default_rng(t)
        while time.monotonic() < deadline:
            k = 1 + 3 * t + calls[t] % 3            # this thread's keys only
            x = rng.uniform(0.5, 1.5, size=2 + t)
            assert_close(g(x, k), f_grad(x, k), 1e-13, 1e-14)
            calls[t] += 1
    run_threads(work)
    assert min(calls) > 0
    assert len(g.tapes.tapes) <= _cache.MAX_TAPES
    assert g.tapes.recordings >= 12                 # every key was recorded at least once
    for key, (tape, snapshot) in g.tapes.tapes.items():
        k = key[2][0][1][1]                          # the static argument of this entry
        x = np.full(key[1][0], 0.7)
        assert_close(tape.gradient(x), f_grad(x, k), 1e-13, 1e-14)


def test_recordings_in_several_threads_are_independent():
    """cache=False records on every call: four threads record the same
    function at the same time, each its own tape."""
    g = adsim.grad(f, cache=False)
    counts = [0] * THREADS

    def work(t, deadline):
        rng = np.random.default_rng(10 + t)
        while time.monotonic() < deadline:
            x = rng.uniform(0.5, 1.5, size=3)
            assert_close(g(x, 2), f_grad(x, 2), 1e-13, 1e-14)
            counts[t] += 1
    run_threads(work)
    assert g.tapes.recordings == sum(counts)


def test_one_shot_functions_from_threads_with_new_functions():
    """jvp/vjp/hvp with a new function per call: the shared registry is
    written and emptied from four threads."""
    def work(t, deadline):
        rng = np.random.default_rng(20 + t)
        while time.monotonic() < deadline:
            x, v = rng.uniform(0.5, 1.5, size=(2, 4))
            c = rng.standard_normal()
            hv = adsim.hvp(lambda z: c * np.sum(z ** 3), x, v)
            assert_close(hv, 6 * c * x * v, 1e-13, 1e-14)
            _, jv = adsim.jvp(lambda z: c * z ** 2, x, v)
            assert_close(jv, 2 * c * x * v, 1e-13, 1e-14)
            _, wj = adsim.vjp(lambda z: c * z ** 2, x, v)
            assert_close(wj, 2 * c * x * v, 1e-13, 1e-14)
    run_threads(work)
