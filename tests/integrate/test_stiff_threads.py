"""Threads replaying one Radau or BDF tape at once. The compiled Newton
solves run without the GIL, each thread with its own factorisations
(adsim/_ops/dense_newton.pxi), so two threads at different parameters must
give exactly what one thread gives, call after call, whichever thread's
cache held a factorisation and whichever thread a pooled replay last ran
on."""
import threading

import numpy as np
import pytest

import adsim as ad
from adsim.integrate import solve_ivp
from adsim.integrate._dense_solve import DenseLinear
from threadwork import run_threads


def robertson(t, y, k):
    r1, r2, r3 = k[0] * y[0], k[1] * y[1] ** 2, k[2] * y[1] * y[2]
    return np.array([-r1 + r3, r1 - r2 - r3, r2])


def product_yield(method, t_eval):
    """A kinetics fit's loss: the yield of the second species at the
    measured times (t_eval: a checkpointed while loop) or at the end (the
    steps as ops of the tape)."""
    def loss(log_k):
        sol = solve_ivp(robertson, (0.0, 0.3), np.array([1.0, 0.0, 0.0]), method=method,
                        args=(np.exp(log_k),), rtol=1e-5, atol=1e-10, t_eval=t_eval)
        return np.sum(sol.y[0] + 1e4 * sol.y[1])
    return loss


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_two_threads_replay_one_stiff_tape_as_one_thread_does(method):
    log_k = np.log([0.04, 3e7, 1e4])
    work = []
    for t_eval in ([0.1, 0.2, 0.3], None):
        tape = ad.record(product_yield(method, t_eval), log_k)
        # nearby parameters take the recorded steps; each thread's points are
        # its own, so the two threads' matrices, and factorisations, differ
        for i, scale in enumerate((0.0, 3e-7, -5e-7, 1e-6)):
            x = log_k * (1.0 + scale)
            for name, call in (("forward", tape.forward), ("gradient", tape.gradient)):
                work.append((f"{t_eval}.{name}[{i}]", call, x, np.copy(call(x))))
    assert run_threads(2, work, rounds=6) == []


def test_each_thread_keeps_its_own_factorisations():
    """No thread sees (or overwrites) another's factors: what a thread keeps
    is what it solved."""
    linear = DenseLinear(3)
    J = np.array([[-0.04, 1e4, 0.0], [0.04, -1e4, -3e3], [0.0, 3e3, 0.0]])
    b = np.array([1.0, 2.0, 3.0])
    x = linear.shifted(J, 5.0, b)
    assert linear.kept_factorisations() == 1
    seen = {}

    def other():
        seen["before"] = linear.kept_factorisations()
        seen["x"] = linear.shifted(J, 5.0, b)
        linear.shifted(J, 7.0, b)
        seen["after"] = linear.kept_factorisations()
    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == {"before": 0, "x": seen["x"], "after": 2}
    assert np.array_equal(seen["x"], x)
    assert linear.kept_factorisations() == 1
    np.testing.assert_allclose((5.0 * np.eye(3) - J) @ x, b, rtol=1e-12)


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_two_threads_far_from_the_recording_give_fresh_recordings_values(method):
    """Parameters far from the recorded ones take steps along paths the
    recording did not: each replay records them where it meets them, the
    loop's forward pass running without the GIL in between
    (adsim/_loop_while.pxi), while the other thread replays the same tape.
    Both give bitwise what tapes recorded at those points give."""
    loss = product_yield(method, [0.1, 0.2, 0.3])
    log_k = np.log([0.04, 3e7, 1e4])
    points = [log_k + shift for shift in ([0.4, 0.0, 0.0], [0.0, -0.6, 0.0], [0.0, 0.0, 0.5])]
    work = []
    for i, x in enumerate(points):
        fresh = ad.record(loss, x)
        work += [(f"forward[{i}]", None, x, np.copy(fresh.forward(x))),
                 (f"gradient[{i}]", None, x, np.copy(fresh.gradient(x)))]
    tape = ad.record(loss, log_k)
    work = [(name, tape.forward if name.startswith("forward") else tape.gradient, x, expected)
            for name, _, x, expected in work]
    assert run_threads(2, work, rounds=1) == []
