"""Several threads running the same tasks at once (shared by the thread
tests): each runs every task in its own order, all starting together."""
import threading

import numpy as np


def run_threads(n_threads, work, rounds):
    """Each thread runs every task ``rounds`` times in its own order, all
    starting together; returns the names of results that differ bitwise."""
    start = threading.Barrier(n_threads)
    wrong, errors = [], []

    def worker(k):
        order = np.random.default_rng(k).permutation(len(work) * rounds) % len(work)
        start.wait()
        try:
            for j in order:
                name, call, x, expected = work[j]
                if not np.array_equal(call(x), expected):
                    wrong.append(name)
        except BaseException as err:      # reported below, not lost in the thread
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return wrong
