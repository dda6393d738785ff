"""Checkpointed loops run no Python per step.

The executor of a loop's schedule is compiled (adsim/_loop_run.pxi); Python
is entered per sweep (planning, the op rules) but not per step. Counted with
``sys.setprofile`` (every Python call and every call of a builtin), a replay
of a recorded loop through 2,000 steps and one through 4,000 steps make the
same small number of calls, in every mode and for both kinds of loop, also
when the loss reads the loop's state at many times (``save_at``).
"""
import gc
import sys

import numpy as np
import pytest

import adsim

Y0 = np.array([0.3, -0.2, 0.5])
P = np.array([1.1, 0.7, -0.4])
DT = 1e-3


def step(y, p, dt):
    return y + dt * (np.sin(p * y) - 0.1 * y * np.roll(y, 1))


def loop(n, options):
    def f(y, p):
        return np.sum(adsim.checkpoint_loop(step, y, n, args=(p, DT), **options) ** 2)
    return f


def saving_loop(n, options):
    """A loss reading the state at 100 times of the loop."""
    def f(y, p):
        final, saved = adsim.checkpoint_loop(step, y, n, args=(p, DT),
                                             save_at=np.arange(0, n, n // 100), **options)
        return np.sum(final ** 2) + np.sum(np.sin(saved))
    return f


def while_loop(n, options):
    def f(y, p):
        z = adsim.checkpoint_while(lambda z, p: z[0] < n * DT, lambda z, p: np.concatenate(
            [z[:1] + DT, step(z[1:], p, DT)]), np.concatenate([np.zeros(1), y]), args=(p,),
            **options)
        return np.sum(z[1:] ** 2)
    return f


MODES = {
    "grad": lambda tape: tape.gradient(Y0, P),
    "value": lambda tape: tape.forward(Y0, P),
    "jvp": lambda tape: tape.jvp((Y0, P), (np.ones(3), np.zeros(3))),
    "hvp": lambda tape: tape.hvp((Y0, P), (np.ones(3), np.zeros(3))),
}
LOOPS = {"loop": (loop, {}), "budget": (loop, {"memory_limit": "2MB"}),
         "while": (while_loop, {"snapshots": 30}), "saved": (saving_loop, {"snapshots": 30})}


def python_calls(run):
    """The fewest calls over three runs, with the garbage collector off.

    Calls made by something else (a finaliser of an object from an earlier
    test, run by a collection that happens inside the replay) only add to a
    count, so the fewest of several runs is the replay's own.
    """
    counts = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            count = [0]

            def profile(frame, event, arg):
                if event in ("call", "c_call"):
                    count[0] += 1
            sys.setprofile(profile)
            try:
                run()
            finally:
                sys.setprofile(None)
            counts.append(count[0])
    finally:
        gc.enable()
    return min(counts)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_python_calls_do_not_grow_with_the_steps(kind, mode):
    make, options = LOOPS[kind]
    counts = []
    for n in (2000, 4000):
        tape = adsim.record(make(n, options), Y0, P)
        MODES[mode](tape)
        counts.append(python_calls(lambda: MODES[mode](tape)))
    assert counts[0] < 250, counts
    assert abs(counts[1] - counts[0]) <= 5, counts
