"""Running chunks of work on an executor: any ``concurrent.futures.Executor``
(or an object with its ``submit``), or a ``dask.distributed.Client``.

Dask is recognised by its type's module, so adsim never imports it unless a
client is passed. With Dask, a tape used by several chunks is scattered to
every worker once (``broadcast=True``) and the chunks refer to it; a worker
that dies mid-batch has its chunks run again elsewhere by Dask, and the
other workers still hold the tape.
"""
import concurrent.futures
import os
import uuid

from .._validate import given
from ..errors import InvalidArgument
from ._shipping import ShippedTape


def is_dask_client(obj):
    """Whether ``obj`` is a dask.distributed Client (without importing dask)."""
    return any(cls.__name__ == "Client" and cls.__module__.split(".")[0] == "distributed"
               for cls in type(obj).__mro__)


def workers_of(executor):
    """How many tasks ``executor`` runs at once (for choosing chunk sizes)."""
    if executor is None:
        return default_workers()
    if is_dask_client(executor):
        return max(1, sum(executor.nthreads().values()))
    return max(1, getattr(executor, "_max_workers", None) or os.cpu_count() or 1)


def default_workers():
    return min(32, os.cpu_count() or 1)


def run(tasks, executor, progress):
    """Run ``tasks``, a list of (function, args, points): returns their
    results in order. ``progress(done, total)`` counts points as chunks
    finish. The first error raised by a task is raised here, after the tasks
    not yet started are cancelled."""
    total = sum(n for _, _, n in tasks)
    if executor is None:
        with concurrent.futures.ThreadPoolExecutor(max_workers=default_workers()) as pool:
            return _run_futures(pool, tasks, progress, total)
    if is_dask_client(executor):
        return _run_dask(executor, tasks, progress, total)
    if not callable(getattr(executor, "submit", None)):
        raise InvalidArgument(f"adsim.parallel: executor must be None (threads of this "
                              f"process), a concurrent.futures.Executor or a "
                              f"dask.distributed.Client (a ThreadPoolExecutor or "
                              f"ProcessPoolExecutor, say), got {given(executor)}")
    return _run_futures(executor, tasks, progress, total)


class _Keyed:
    """A concurrent.futures future with the ``key`` Dask futures have."""

    def __init__(self, future, key):
        self.future, self.key = future, key

    def result(self):
        return self.future.result()


def _run_futures(executor, tasks, progress, total):
    futures = [executor.submit(fn, *args) for fn, args, _ in tasks]
    keyed = {f: _Keyed(f, k) for k, f in enumerate(futures)}
    index = {k: k for k in range(len(futures))}
    finished = (keyed[f] for f in concurrent.futures.as_completed(futures))
    return _collect(index, finished, tasks, progress, total,
                    lambda: [f.cancel() for f in futures])


def _run_dask(client, tasks, progress, total):
    from distributed import as_completed
    uses = {}
    for _, args, _ in tasks:
        for a in args:
            if isinstance(a, ShippedTape):
                uses[id(a)] = uses.get(id(a), 0) + 1
    scattered = {}
    for _, args, _ in tasks:
        for a in args:
            if isinstance(a, ShippedTape) and uses[id(a)] > 1 and id(a) not in scattered:
                scattered[id(a)] = client.scatter(a, broadcast=True, hash=False)
    batch = uuid.uuid4().hex
    futures = []
    for k, (fn, args, _) in enumerate(tasks):
        args = [scattered.get(id(a), a) if isinstance(a, ShippedTape) else a for a in args]
        futures.append(client.submit(fn, *args, key=f"adsim-parallel-{batch}-{k}", pure=False))
    index = {f.key: k for k, f in enumerate(futures)}
    try:
        return _collect(index, as_completed(futures), tasks, progress, total,
                        lambda: client.cancel(futures))
    finally:
        scattered.clear()       # the workers drop the tape once no task needs it


def _collect(index, finished, tasks, progress, total, cancel):
    """Results of the futures ``finished`` yields, placed by ``index[f.key]``."""
    results = [None] * len(tasks)
    done = 0
    try:
        for future in finished:
            k = index[future.key]
            results[k] = future.result()
            done += tasks[k][2]
            if progress is not None:
                progress(done, total)
    except BaseException:
        cancel()
        raise
    return results
