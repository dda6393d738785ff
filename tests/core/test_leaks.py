"""No cache keeps a function alive: calling every entry point with a new
function each time leaves no function, tape or memory behind.

Each case makes a fresh lambda (closing over a fresh array) per call, as a
loop ``adsim.hvp(lambda z: ..., x, v)`` does. Checks: the lambda is freed
as soon as the call returns; the number of live tapes does not grow; the
resident set size does not grow over 150 calls after a warm-up (the leak
this replaces kept about 140 kB per ``hvp`` call at n = 1000).
"""
import ctypes
import gc
import os
import weakref

import numpy as np
import pytest

import adsim
from adsim import _tape
from adsim._tapecache.cache import _same_code
from adsim.testing import check_grads

N = 1000            # large enough that a leaked tape per call shows in the RSS
N_DENSE = 40        # for entry points whose result is n x n
WARMUP, CALLS = 50, 150
RSS_PER_CALL = 8192     # bytes: far below one leaked tape of the N cases


_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", lambda pad: 0)


def _memory():
    """(resident bytes, live tapes), after collecting reference cycles
    (garbage waiting for the cycle collector is not a leak), emptying the
    tapes kept by code (a bounded cache: test_tapes_kept_by_code_are_bounded)
    and returning free heap pages to the system (so that fragmentation is
    not counted)."""
    _same_code.clear()
    gc.collect()
    _TRIM(0)
    with open("/proc/self/statm") as fh:
        rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return rss, sum(1 for o in gc.get_objects() if isinstance(o, _tape.Tape))


def _point(n, i):
    return np.linspace(0.1, 1.0, n) + 0.001 * i


def _cases():
    """name -> (n, call(i, keep)) where call makes a new function, lets
    ``keep`` hold a weak reference to it, and runs the entry point."""
    def scalar(i, keep, n):
        a = _point(n, i)
        fn = lambda z: np.sum(a * z ** 3)  # noqa: E731
        keep.append(weakref.ref(fn))
        return fn, _point(n, -i)

    def vector(i, keep, n):
        a = _point(n, i)
        fn = lambda z: a * np.sin(z)  # noqa: E731
        keep.append(weakref.ref(fn))
        return fn, _point(n, -i)

    def nested(i, keep, n):
        a = _point(n, i)
        inner = lambda w: np.sum(a * w ** 3)  # noqa: E731
        keep.append(weakref.ref(inner))
        return (lambda z: np.sum(adsim.grad(inner)(z) * z)), _point(n, -i)

    def run(make, entry, n):
        def call(i, keep):
            fn, x = make(i, keep, n)
            return entry(fn, x)
        return n, call

    v = lambda x: np.ones_like(x)  # noqa: E731
    return {
        "grad": run(scalar, lambda fn, x: adsim.grad(fn)(x), N),
        "value_and_grad": run(scalar, lambda fn, x: adsim.value_and_grad(fn)(x), N),
        "jacobian": run(vector, lambda fn, x: adsim.jacobian(fn)(x), N_DENSE),
        "jvp": run(vector, lambda fn, x: adsim.jvp(fn, x, v(x)), N),
        "vjp": run(vector, lambda fn, x: adsim.vjp(fn, x, v(x)), N),
        "hessian": run(scalar, lambda fn, x: adsim.hessian(fn)(x), N_DENSE),
        "hvp": run(scalar, lambda fn, x: adsim.hvp(fn, x, v(x)), N),
        "grad_and_hvp": run(scalar, lambda fn, x: adsim.grad_and_hvp(fn, x, v(x)), N),
        "hessp": run(scalar, lambda fn, x: adsim.hessp(fn)(x, v(x)), N),
        "hvp_operator": run(scalar, lambda fn, x: adsim.hvp_operator(fn, x) @ v(x), N),
        "laplacian": run(scalar, lambda fn, x: adsim.laplacian(fn)(x), N_DENSE),
        "record": run(scalar, lambda fn, x: adsim.record(fn, x).gradient(x), N),
        "check_grads": run(vector, lambda fn, x: check_grads(fn, x, n_directions=1), N_DENSE),
        "sparse_jacobian": run(vector, lambda fn, x: adsim.sparse_jacobian(fn, x), N_DENSE),
        "sparse_hessian": run(scalar, lambda fn, x: adsim.sparse_hessian(fn, x), N_DENSE),
        "nested grad": run(nested, lambda fn, x: adsim.grad(fn)(x), N_DENSE),
    }


CASES = _cases()


@pytest.mark.parametrize("name", list(CASES))
def test_new_function_per_call_leaves_nothing_behind(name):
    n, call = CASES[name]
    keep = []
    for i in range(WARMUP):
        call(i, keep)
    rss, tapes = _memory()
    assert all(ref() is None for ref in keep), "a cache kept a function alive"
    for i in range(CALLS):
        call(WARMUP + i, keep)
    rss_after, tapes_after = _memory()
    grown = rss_after - rss
    assert tapes_after <= tapes, "tapes outlived their functions"
    assert all(ref() is None for ref in keep), "a cache kept a function alive"
    if n == N:
        assert grown <= RSS_PER_CALL * CALLS, f"RSS grew {grown / CALLS:.0f} bytes per call"


def test_transformed_function_frees_its_function_and_tapes():
    keep = []

    def make():
        a = np.ones(N)
        fn = lambda z: np.sum(a * z ** 2)  # noqa: E731
        keep.append(weakref.ref(fn))
        g = adsim.grad(fn)
        g(np.ones(N))
        return weakref.ref(g)
    tapes = _memory()[1]
    g_ref = make()
    assert _memory()[1] <= tapes
    assert g_ref() is None and keep[0]() is None


def test_tapes_kept_by_code_are_bounded():
    """Functions of many different codes, each recorded once: the tapes kept
    by code stay at the cache's bound, and none holds its function."""
    _memory()
    before = sum(1 for o in gc.get_objects() if isinstance(o, _tape.Tape))
    functions = []
    for i in range(_same_code.MAX_ENTRIES + 40):
        namespace = {"np": np}
        exec(f"def f(z):\n    return np.sum(z * z) + {i}\n", namespace)
        adsim.grad(namespace["f"])(np.ones(3))
        functions.append(weakref.ref(namespace["f"]))
        del namespace
    gc.collect()
    assert all(ref() is None for ref in functions)
    live = sum(1 for o in gc.get_objects() if isinstance(o, _tape.Tape))
    assert live - before <= _same_code.MAX_ENTRIES
    assert len(_same_code._entries) == _same_code.MAX_ENTRIES
