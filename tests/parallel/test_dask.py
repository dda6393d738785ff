"""adsim.parallel on a Dask LocalCluster of two worker processes: results
bitwise equal to serial calls, the tape scattered to the workers and loaded
once per worker process, and a worker killed in the middle of a map loses
no result (Dask runs its chunks again elsewhere). Skipped without Dask."""
import os
import signal
import threading

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'adsim[distributed]')")

import adsim as ad                                                   # noqa: E402
from adsim import parallel                                           # noqa: E402
from parallel_models import lorenz_misfit, model                     # noqa: E402

P = np.array([10.0, 28.0, 8.0 / 3.0])
X0 = np.linspace(0.2, 1.0, 6)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=50,
                                       death_timeout=60)
    client = distributed.Client(cluster, timeout=60)
    client.run(__import__, "parallel_models")          # the workers make the named primitive
    try:
        yield client
    finally:
        client.close(timeout=30)
        cluster.close(timeout=30)


def bits(results):
    return [np.asarray(r).tobytes() for r in results]


def bounded(call, seconds=120):
    """``call()`` in a daemon thread, failing the test if it has not
    returned within ``seconds`` (a cluster that never recovers cannot hang
    the test session)."""
    out = []
    worker = threading.Thread(target=lambda: out.append(_outcome(call)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"no result within {seconds} s"
    ok, value = out[0]
    if not ok:
        raise value
    return value


def _outcome(call):
    try:
        return True, call()
    except BaseException as err:          # re-raised in the test's thread
        return False, err


def test_map_on_a_dask_cluster_equals_serial_calls(client):
    tape = ad.record(model, X0)
    points = [X0 * (1.0 - 0.01 * k) for k in range(20)]
    want = bits(tape.gradient(x) for x in points)
    assert bits(bounded(lambda: parallel.map("gradient", tape, points, executor=client))) == want
    got = bounded(lambda: parallel.map("hvp", tape, points, executor=client, chunk_size=3,
                                       v=np.ones(6)))
    assert bits(got) == bits(tape.hvp(x, np.ones(6)) for x in points)
    digest = parallel._shipping.ShippedTape(tape).data()[0]
    loaded = client.run(lambda: list(__import__("adsim.parallel._shipping",
                                                fromlist=["_"])._process_cache))
    assert all(keys == [digest] for keys in loaded.values()), loaded


def test_sum_gradients_on_a_dask_cluster(client):
    tape = ad.record(lorenz_misfit, P)
    points = [P * (1.0 + 0.005 * k) for k in range(6)]
    value, grad = bounded(lambda: parallel.sum_gradients(tape, points, executor=client))
    parts = [tape.value_and_gradient(p) for p in points]
    assert value == sum(v for v, _ in parts)
    want = parts[0][1]
    for _, g in parts[1:]:
        want = want + g
    assert grad.tobytes() == want.tobytes()


def test_a_worker_killed_mid_map_loses_no_result(client):
    tape = ad.record(lambda p: lorenz_misfit(p, n_steps=1500), P)
    points = [P * (1.0 + 0.002 * k) for k in range(12)]
    want = bits(tape.gradient(p) for p in points)
    pids = client.run(os.getpid)
    killed = []

    def kill_one(done, total):
        if not killed:
            pid = next(iter(pids.values()))
            os.kill(pid, signal.SIGKILL)
            killed.append((pid, done, total))
    got = bounded(lambda: parallel.map("gradient", tape, points, executor=client, chunk_size=1,
                                       progress=kill_one))
    assert killed and killed[0][1] < killed[0][2], "the worker was killed after the map ended"
    assert bits(got) == want
    client.wait_for_workers(2, timeout=60)
    assert killed[0][0] not in client.run(os.getpid).values()
