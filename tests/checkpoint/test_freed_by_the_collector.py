"""A loop's sweep dropped unfinished and freed by the cycle collector: its
step variants' Replays borrow the sweep's shared work buffer, and the
collector may clear a variant (dropping its Replay) after the sweep itself
is gone. The Replay must not free what it borrowed: that was a double free
that aborted the interpreter (tapes of odeint recorded with adsim.record and
then dropped). Run in a child process, so that an abort fails the test
instead of the test run."""
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import gc
    import numpy as np
    from scipy.integrate import odeint
    import adsim

    def f(th):
        return odeint(lambda y, t, k: k * y, np.ones(3), [0.0, 1.0], args=(th[0],))[-1].sum()

    def g(u):
        return np.sum(adsim.checkpoint_loop(lambda v: v + 0.1 * np.sin(v), u, 20) ** 2)

    for i in range(4):
        tape = adsim.record(f, np.array([0.3]))         # dropped unreplayed: the abort
        del tape
        gc.collect()
        tape = adsim.record(f, np.array([0.3]))
        assert abs(tape.gradient(np.array([0.3]))[0] - 3 * np.exp(0.3)) < 1e-6
        del tape
        gc.collect()
        tape = adsim.record(g, np.linspace(0.0, 1.0, 5))
        tape.gradient(np.linspace(0.0, 1.0, 5))
        del tape
        gc.collect()
    print("done")
""")


def test_tapes_of_loops_freed_by_the_collector_do_not_crash():
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "done"
