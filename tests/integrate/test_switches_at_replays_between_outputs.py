"""A switch of fun crossed between two outputs only at a replay's values,
where the outputs are checkpointed (``snapshots``, ``memory_limit``, more
than 256 equations): no step end is on the tape there, so the tape's ops
could not see it, and the replay gave the held-step derivative without the
crossing's term (d y(10) / d c_sat came out 0 where it is -0.146). The
method now runs again on plain values at each replay at other values
(adsim/integrate/_switches.py, guard_step_ends), and a crossing there
raises BranchChanged: the functional API records again, which refuses a
jump or makes a kink's outputs first order only."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adsim
from fdcheck import differences

TIGHT = dict(rtol=1e-9, atol=1e-11)
SATURATED, CLEARED = 0.2, 0.6
NEVER = np.array([1.2, 0.9])        # the concentration stays below c_sat
NEAR = np.array([1.25, 0.95])       # and here
CROSSED = np.array([1.2, 0.4])      # crosses c_sat up near t = 0.54, down near t = 4.6
BOUNDS = {"snapshots": dict(snapshots=4), "memory_limit": dict(memory_limit="10 MB"),
          "300 equations": dict(n=300)}


def rate(kind, blood, c_sat):
    if kind == "if":
        return SATURATED if blood > c_sat else CLEARED
    if kind == "where":
        return np.where(blood > c_sat, SATURATED, CLEARED)
    raise ValueError(kind)


def blood(kind="if", n=2, method="RK45", **bound):
    """An oral dose whose clearance saturates while the blood concentration
    is above c_sat (n - 2 more components decay apart); the concentration
    at t = 10, an output as the start is."""
    def f(p):
        ka, c_sat = p

        def rhs(t, y):
            gut, b = y[0], y[1]
            if kind == "kink":          # a clearance that drops above c_sat: a kink
                head = [-ka * gut, ka * gut - CLEARED * b + 0.4 * np.maximum(b - c_sat, 0.0)]
            else:
                head = [-ka * gut, ka * gut - rate(kind, b, c_sat) * b]
            return np.concatenate([head, -0.1 * y[2:]]) if n > 2 else head
        y0 = np.zeros(n)
        y0[0] = 1.0
        return solve_ivp(rhs, (0, 10), y0, t_eval=[0.0, 10.0], method=method, **bound,
                         **TIGHT).y[1, -1]
    return f


@pytest.mark.parametrize("bound", list(BOUNDS))
@pytest.mark.parametrize("kind", ["if", "where"])
def test_a_switch_crossed_only_at_the_replay_is_not_silent(kind, bound):
    f = blood(kind, **BOUNDS[bound])
    tape = adsim.record(f, NEVER)
    # no crossing at the replay: the held steps' derivative (the method ran again, plainly)
    np.testing.assert_allclose(tape.gradient(NEAR), differences(blood(kind), NEAR, 1e-4),
                               rtol=1e-6, atol=1e-9)
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(CROSSED)
    g = adsim.grad(f)
    g(NEVER)
    with pytest.raises(adsim.UnsupportedOperation, match=r"jumps by 0.16 .*at t = 0\.539"):
        g(CROSSED)


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_implicit_methods_replay_and_check_their_step_ends(method):
    """Their Newton matrices record fun (the check's run replays its tape
    elsewhere)."""
    f = blood("where", method=method, snapshots=4)
    tape = adsim.record(f, NEVER)
    want = differences(blood("where", method=method), NEAR, 1e-4)
    np.testing.assert_allclose(tape.gradient(NEAR), want, rtol=1e-5, atol=1e-9)
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(CROSSED)


def test_threads_replay_such_a_tape():
    tape = adsim.record(blood("if", snapshots=4), NEVER)
    points = [NEAR + 0.002 * i for i in range(4)]
    with ThreadPoolExecutor(2) as pool:
        got = adsim.parallel.map("gradient", tape, points, executor=pool)
    np.testing.assert_array_equal(got, [tape.gradient(p) for p in points])


def test_a_kink_crossed_only_at_the_replay_makes_the_outputs_first_order_only():
    f = blood("kink", snapshots=4)
    with pytest.raises(adsim.BranchChanged):
        adsim.record(f, NEVER).gradient(CROSSED)
    g = adsim.grad(f)
    g(NEVER)
    # (a kink crossed within a step leaves the held steps' derivative the model's to about the
    # tolerance of the steps about it)
    np.testing.assert_allclose(g(CROSSED), differences(blood("kink"), CROSSED, 1e-4),
                               rtol=1e-3)
    with pytest.raises(adsim.UnsupportedOperation, match="crosses a kink"):
        adsim.hvp(f, CROSSED, np.ones(2))


def test_a_kink_the_recording_crossed_replays_where_it_is_crossed_again():
    f = blood("kink", snapshots=4)
    tape = adsim.record(f, CROSSED)
    moved = CROSSED + [0.02, 0.01]
    np.testing.assert_allclose(tape.gradient(moved), differences(blood("kink"), moved, 1e-4),
                               rtol=1e-3)


def test_the_method_runs_again_only_at_other_values_on_funs_tape():
    calls = [0]

    def f(p):
        ka, c_sat = p

        def rhs(t, y):
            calls[0] += 1
            return [-ka * y[0], ka * y[0] - rate("if", y[1], c_sat) * y[1]]
        return solve_ivp(rhs, (0, 10), [1.0, 0.0], t_eval=[0.0, 10.0], snapshots=4,
                         **TIGHT).y[1, -1]
    tape = adsim.record(f, NEVER)
    calls[0] = 0
    tape.gradient(NEVER)
    assert calls[0] == 0
    tape.gradient(NEAR)
    # fun recorded once at the replay's start, its tape replayed at the stages of the plain run
    assert 1 <= calls[0] <= 2
    calls[0] = 0
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(CROSSED)
    assert calls[0] > 50         # the tape's branch changed on the way: fun called at the stages


def test_such_a_tape_is_not_saved_and_says_why(tmp_path):
    tape = adsim.record(blood("if", snapshots=4), NEVER)
    with pytest.raises(adsim.TapeCopyError, match=r"switches at the step ends.*runs the method "
                                                  r"again on plain values at every replay"):
        tape.save(str(tmp_path / "t.adsim"))
