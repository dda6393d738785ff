"""adsim.parallel.map of tapes that travel as tape files with what they hold:
a stiff solve_ivp (Radau: a checkpointed loop whose steps hold the
Jacobians of fun and the dense Newton solves) and one taking its parameters as a dict
(a tape of containers), on threads, on spawned processes (nothing
inherited: the tapes arrive as bytes) and on Dask when it is installed.
Results are bitwise equal to serial calls."""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import adsim as ad
from adsim import parallel
from adsim.integrate import solve_ivp

Z0 = np.array([1.0, 0.5])
RATES = np.array([1.0, 0.4, 1.5, 0.75])
OPTIONS = {"t_span": (0.0, 0.2), "t_eval": [0.1, 0.2], "rtol": 1e-4, "atol": 1e-6}


def lotka_volterra(t, z, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


def stiff_loss(z0, rates):
    sol = solve_ivp(lotka_volterra, y0=z0, method="Radau", args=tuple(rates), **OPTIONS)
    return np.sum(sol.y ** 2)


def dict_loss(p):
    """One argument, a dict: each point is a dict (not spread over inputs)."""
    sol = solve_ivp(lambda t, z, q: lotka_volterra(t, z, q["a"], q["b"], q["c"], q["d"]),
                    y0=p["z0"], method="BDF", args=(p,), **OPTIONS)
    return np.sum(sol.y ** 2)


SHIFTS = (1.0, 1.0 + 1e-7, 1.0 - 2e-7)
CASES = {"stiff": (stiff_loss, [(Z0 * s, RATES) for s in SHIFTS],
                   (np.array([0.3, -0.2]), np.array([0.1, 0.2, -0.1, 0.05]))),
         "dict": (dict_loss, [dict(zip("abcd", RATES), z0=Z0 * s) for s in SHIFTS],
                  {"z0": np.array([0.3, -0.2]), "a": 0.1, "b": 0.2, "c": -0.1, "d": 0.05})}


def bits(result):
    if isinstance(result, dict):
        return {k: bits(v) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return tuple(bits(r) for r in result)
    return np.asarray(result).tobytes()


@pytest.fixture(scope="module")
def calls():
    """(tape, points, method, keyword arguments, serial results) per case."""
    out = []
    for loss, points, direction in CASES.values():
        first = points[0] if isinstance(points[0], tuple) else (points[0],)
        tape = ad.record(loss, *first)
        spread = [p if isinstance(p, tuple) else (p,) for p in points]
        out.append((tape, points, "value_and_gradient", {},
                    bits([tape.value_and_gradient(*p) for p in spread])))
        out.append((tape, points, "hvp", {"v": direction},
                    bits([tape.hvp(p, direction) for p in points])))
    return out


def test_map_on_threads_equals_serial_calls(calls):
    with ThreadPoolExecutor(2) as pool:
        for tape, points, method, kwargs, want in calls:
            got = parallel.map(method, tape, points, executor=pool, chunk_size=1, **kwargs)
            assert bits(got) == want


def test_map_on_spawned_processes_equals_serial_calls(calls):
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for tape, points, method, kwargs, want in calls:
            got = parallel.map(method, tape, points, executor=pool, chunk_size=2, **kwargs)
            assert bits(got) == want


def test_map_on_dask_equals_serial_calls(calls):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'adsim[distributed]')")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        for tape, points, method, kwargs, want in calls:
            assert bits(parallel.map(method, tape, points, executor=client, **kwargs)) == want
