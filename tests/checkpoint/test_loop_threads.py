"""Threads replaying one tape with checkpointed loops at once.

Each sweep through a loop keeps its state, snapshots and step replays for
itself (the executor is per call, the step tapes' Replays come from their
pools, a forward pass kept for the reverse sweep lives in the replay's own
SweepContext), so threads replaying one enclosing tape get bitwise the
results of serial replays: loops with and without a memory budget, with
snapshots on disk, while loops, and a step whose branch changes (new
variants recorded while other threads replay).
"""
import os
import re
import tempfile

import numpy as np
import pytest

import adsim
from threadwork import run_threads

N = 60
P = np.array([0.9, -0.4, 1.3, 0.2])


def step(y, p):
    return y + 0.05 * np.sin(p * y) * np.cos(y[::-1]) + 0.01 * np.roll(y, 1) ** 2


def branching(y, p):
    if y[0] > 0.4:
        return 0.95 * y + 0.05 * np.sin(p * y)
    return y + 0.05 * p * np.cos(y) + 0.02


def losses(directory, y0):
    def loss(options, step_fn=step):
        return lambda y, p: np.sum(adsim.checkpoint_loop(step_fn, y, N, args=(p,),
                                                         **options) ** 2)

    on_disk = {"snapshots": 12, "snapshot_dir": directory}
    tiny = adsim.record(loss(dict(on_disk, memory_limit=1)), y0, P)
    v = np.linspace(-1.0, 1.0, 4)
    try:            # the smallest budget of the largest sweep (an hvp): every snapshot on disk
        tiny.hvp((y0, P), (v, 0.0 * v))
    except adsim.MemoryBudgetError as error:
        minimum = int(re.search(r"smallest budget that works is (\d+)", str(error))[1])

    def while_loss(y, p):
        z = adsim.checkpoint_while(lambda z, p: z[0] < 1.0, lambda z, p: np.concatenate(
            [z[:1] + 1.0 / N, step(z[1:], p)]), np.concatenate([np.zeros(1), y]), args=(p,),
            snapshots=5)
        return np.sum(z[1:] ** 2)
    return {"revolve": loss({"snapshots": 5}),
            "budget": loss({"memory_limit": "50kB"}),
            "disk": loss(dict(on_disk, memory_limit=minimum + 1200)),
            "branching": loss({"snapshots": 4}, branching),
            "while": while_loss}


def calls(tape):
    v = np.linspace(-1.0, 1.0, 4)
    return {"forward": lambda y: tape.forward(y, P),
            "gradient": lambda y: tape.gradient(y, P)[0],
            "hvp": lambda y: tape.hvp((y, P), (v, 0.0 * v)),
            "jvp": lambda y: tape.jvp((y, P), (v, 0.0 * v))[1]}


@pytest.mark.parametrize("n_threads", [4])
def test_threads_replaying_loops_get_the_serial_results_bitwise(n_threads):
    points = [np.array([0.2, 0.5, 0.3, 0.45]) + 0.03 * k for k in range(3)]
    with tempfile.TemporaryDirectory() as directory:
        work = []
        for name, loss in losses(directory, points[0]).items():
            serial = calls(adsim.record(loss, points[0], P))
            shared = calls(adsim.record(loss, points[0], P))    # its variants come from threads
            for method, call in shared.items():
                for i, y in enumerate(points):
                    work.append((f"{name}.{method}[{i}]", call, y, np.copy(serial[method](y))))
        wrong = run_threads(n_threads, work, rounds=2)
        assert wrong == []
        assert not any(files for _, _, files in os.walk(directory))
