"""Every kind of solve_ivp tape under adsim.parallel.map: each method
(RK23, RK45, DOP853, Radau, BDF, LSODA) with outputs at ``t_eval``, at
every step, and from ``dense_output``, with an event time (explicit and
implicit methods, at every step and at ``t_eval``), and ``odeint``.

Every kind round-trips through ``tape.save``/``adsim.load_tape`` bitwise
and maps bitwise on threads, spawned processes and Dask (LSODA's and
odeint's values are SciPy's LSODA run on recorded tapes of the user's
function and of a ``Dfun``, which tape files hold). Only a ``Dfun`` that
cannot be recorded (code SciPy's LSODA then calls) keeps a tape in its
process: processes refuse it with a TapeCopyError that names it and says
to use threads.
"""
import io
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import adsim
from adsim import parallel
from adsim.errors import TapeCopyError
from adsim.integrate import odeint, solve_ivp

Z0 = np.array([1.0, 0.5])
RATES = np.array([1.0, 0.4, 1.5, 0.75])
POINTS = [(Z0 * s, RATES * s) for s in (1.0, 1.0 + 1e-7, 1.0 - 2e-7)]
METHODS = ("RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA")


def lotka_volterra(t, z, a, b, c, d):
    x, y = z
    return [a * x - b * x * y, -c * y + d * x * y]


def prey_peak(t, z, a, b, c, d):
    return z[0] - 1.2


prey_peak.terminal = True


def at_times(method):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, (0.0, 0.5), z0, method=method, args=tuple(rates),
                        t_eval=[0.2, 0.5], rtol=1e-5)
        return np.sum(sol.y ** 2)
    return loss


def at_steps(method):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, (0.0, 0.3), z0, method=method, args=tuple(rates),
                        rtol=1e-4)
        return np.sum(sol.y[:, -1] ** 2)
    return loss


def dense(method):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, (0.0, 0.5), z0, method=method, args=tuple(rates),
                        dense_output=True, rtol=1e-5)
        return np.sum(sol.sol(0.3) ** 2)
    return loss


def event_time(method, t_eval=None):
    def loss(z0, rates):
        sol = solve_ivp(lotka_volterra, (0.0, 5.0), z0, method=method, args=tuple(rates),
                        events=prey_peak, t_eval=t_eval, rtol=1e-5)
        return sol.t_events[0][0] + (0.0 if t_eval is None else np.sum(sol.y))
    return loss


def with_odeint(z0, rates):
    return np.sum(odeint(lotka_volterra, z0, [0.0, 0.2, 0.5], args=tuple(rates),
                         tfirst=True) ** 2)


def with_odeint_dfun(z0, rates):
    def jacobian(t, z, a, b, c, d):
        x, y = z
        return [[a - b * y, -b * x], [d * y, -c + d * x]]
    return np.sum(odeint(lotka_volterra, z0, [0.0, 0.2, 0.5], args=tuple(rates),
                         Dfun=jacobian, tfirst=True) ** 2)


def with_odeint_python_dfun(z0, rates):
    def jacobian(t, z, a, b, c, d):       # float(): not recordable, runs as Python
        x, y = float(z[0]), float(z[1])
        return [[a - b * y, -b * x], [d * y, -c + d * x]]
    return np.sum(odeint(lotka_volterra, z0, [0.0, 0.2, 0.5], args=tuple(rates),
                         Dfun=jacobian, tfirst=True) ** 2)


SAVED = {**{f"{m}-{form.__name__}": form(m) for m in METHODS
            for form in (at_times, at_steps, dense)},
         "RK45-event": event_time("RK45", [0.5, 1.0]), "Radau-event": event_time("Radau"),
         "LSODA-event": event_time("LSODA", [0.5, 1.0]), "odeint": with_odeint,
         "odeint-Dfun": with_odeint_dfun}
IN_PROCESS = {"odeint-python-Dfun": with_odeint_python_dfun}


def bits(results):
    return [b"".join(np.asarray(a).tobytes() for a in r) for r in results]


@pytest.fixture(scope="module")
def tapes():
    """name -> (tape, serial gradients at POINTS)."""
    out = {}
    for name, loss in {**SAVED, **IN_PROCESS}.items():
        tape = adsim.record(loss, *POINTS[0])
        out[name] = tape, bits([tape.gradient(*p) for p in POINTS])
    return out


@pytest.mark.parametrize("name", SAVED)
def test_saved_and_loaded_bitwise(name, tapes):
    tape, want = tapes[name]
    buffer = io.BytesIO()
    tape.save(buffer)
    buffer.seek(0)
    loaded = adsim.load_tape(buffer)
    assert bits([loaded.gradient(*p) for p in POINTS]) == want
    assert np.array_equal(loaded.forward(*POINTS[1]), tape.forward(*POINTS[1]))


def test_every_kind_maps_on_threads(tapes):
    with ThreadPoolExecutor(2) as pool:
        for name, (tape, want) in tapes.items():
            got = parallel.map("gradient", tape, POINTS, executor=pool, chunk_size=1)
            assert bits(got) == want, name


def test_saved_kinds_map_on_spawned_processes_and_the_others_say_why_not(tapes):
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for name in SAVED:
            tape, want = tapes[name]
            got = parallel.map("gradient", tape, POINTS, executor=pool, chunk_size=2)
            assert bits(got) == want, name
        for name, what in [("odeint-python-Dfun", "scipy.integrate.odeint with Dfun=")]:
            with pytest.raises(TapeCopyError, match=what) as caught:
                parallel.map("gradient", tapes[name][0], POINTS, executor=pool)
            assert "map this tape on threads" in "".join(getattr(caught.value, "__notes__", []))


def test_saved_kinds_map_on_dask(tapes):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'adsim[distributed]')")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        for name in SAVED:
            tape, want = tapes[name]
            assert bits(parallel.map("gradient", tape, POINTS, executor=client)) == want, name
