"""Moving switches that the check at the output points alone did not see
(adsim/integrate/_switches.py), each silently wrong before:

* a switch crossed and crossed back between two output points (a
  clearance that saturates while a dose peaks): both outputs on one side,
  so d y(10) / d c_sat came out 0 where it is -0.146; the outcomes are now
  checked at every step end;
* a selection inside a call adsim does not write again op by op (a
  checkpointed loop inside fun): d y(4) / d k1 came out -0.411 where it is
  -0.164; such a call is now looked into, and refused when it compares;
* np.mod(t, T) of the time by a fitted period (a sawtooth whose teeth
  move): d y(5) / d T of an oscillator it drives came out -0.726 where it
  is -0.165.

The rewrites the refusals advise are checked against central differences
of SciPy's solve at a tight tolerance, and programs without a switch (or
with a kink) are not refused."""
import numpy as np
import pytest
from scipy.integrate import odeint, solve_ivp

import adsim
from fdcheck import differences

TIGHT = dict(rtol=1e-10, atol=1e-12)
TIGHTER = dict(rtol=1e-13, atol=1e-15)       # SciPy's solves that the differences take
SATURATED, CLEARED = 0.2, 0.6        # clearance while the concentration is above c_sat, below


def blood_at(p, solve=solve_ivp, method="RK45", end=10.0, tol=TIGHT):
    """An oral dose absorbed at rate ka; its clearance saturates (drops to
    SATURATED) while the blood concentration is above c_sat: the
    concentration crosses c_sat up near t = 0.54 and down near t = 4.6, and
    both outputs (t = 0 and 10) are below it."""
    ka, c_sat = p

    def rhs(t, y):
        gut, blood = y
        k = SATURATED if blood > c_sat else CLEARED
        return [-ka * gut, ka * gut - k * blood]
    if solve is odeint:
        return odeint(lambda y, t: rhs(t, y), [1.0, 0.0], [0.0, end], **tol)[-1, 1]
    return solve(rhs, (0, end), [1.0, 0.0], method=method, t_eval=[0.0, end], **tol).y[1, -1]


def blood_by_events(p):
    """The same model, each crossing of c_sat a terminal event and a restart
    from the event's state (the crossing times are differentiated)."""
    ka, c_sat = p

    def rhs(t, y, k):
        return [-ka * y[0], ka * y[0] - k * y[1]]
    t, y = 0.0, [1.0, 0.0]
    for k, direction in ((CLEARED, 1), (SATURATED, -1), (CLEARED, 0)):
        def crossing(t, y, k):
            return y[1] - c_sat
        crossing.terminal, crossing.direction = True, direction
        sol = solve_ivp(rhs, (t, 10.0), y, events=crossing if direction else None, args=(k,),
                        **TIGHT)
        if direction:
            t, y = sol.t_events[0][0], sol.y_events[0][0]
    return sol.y[1, -1]


P = np.array([1.2, 0.4])


@pytest.mark.parametrize("method", ["RK45", "Radau", "odeint"])
def test_a_switch_crossed_and_crossed_back_between_two_outputs_is_refused(method):
    plain = solve_ivp(lambda t, y: [-P[0] * y[0], P[0] * y[0] - (
        SATURATED if y[1] > P[1] else CLEARED) * y[1]], (0, 10), [1.0, 0.0], t_eval=[0, 10],
        **TIGHT)
    assert np.all(plain.y[1] < P[1])        # both outputs below the level
    solve = odeint if method == "odeint" else solve_ivp
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"comparison of the state y, and it jumps by 0.16 where its outcome "
                             r"changes, at t = 0\.539.*terminal event"):
        adsim.grad(lambda p: blood_at(p, solve, method if solve is solve_ivp else "RK45"))(P)


def test_the_crossed_back_switch_is_refused_under_a_memory_bound():
    """With snapshots= the outputs stay checkpointed: the step ends come
    from the method run again on plain values, and are checked there."""
    def f(p):
        ka, c_sat = p

        def rhs(t, y):
            return [-ka * y[0], ka * y[0] - (SATURATED if y[1] > c_sat else CLEARED) * y[1]]
        return solve_ivp(rhs, (0, 10), [1.0, 0.0], t_eval=[0.0, 10.0], snapshots=4,
                         **TIGHT).y[1, -1]
    with pytest.raises(adsim.UnsupportedOperation, match=r"jumps by 0.16 .*at t = 0\.539"):
        adsim.grad(f)(P)


def test_the_event_restarts_of_the_crossed_switch_are_the_models_derivative():
    # SciPy's solve of the switching fun (its steps rejected about each crossing)
    want = differences(lambda p: blood_at(p, tol=TIGHTER), P)
    assert abs(want[1]) > 1e-3                 # the term the steps alone leave out
    np.testing.assert_allclose(adsim.grad(blood_by_events)(P), want, rtol=1e-5)


def test_a_replay_that_crosses_and_crosses_back_between_outputs_is_not_silent():
    """Recorded where the level is never reached, replayed where it is
    reached and left between the outputs: the outcomes at the step ends are
    recorded branches, so the replay records again (grad) or raises (a
    tape)."""
    never = np.array([1.2, 0.9])
    g = adsim.grad(blood_at)
    np.testing.assert_allclose(g(never), differences(blood_at, never, 1e-4), rtol=1e-6)
    with pytest.raises(adsim.UnsupportedOperation, match="comparison of the state y"):
        g(P)
    with pytest.raises(adsim.BranchChanged):
        adsim.record(blood_at, never).gradient(P)


def relay_rate(p, inside="loop"):
    """y' = -k y, the rate k1 while y > level, else 0.2, computed by a few
    relaxation sweeps in a checkpointed loop inside fun (or, for
    comparison, by a loop without a comparison)."""
    k1, level = p

    def rhs(t, y):
        if inside == "loop":
            def sweep(k, y):
                return 0.5 * (k + np.where(y > level, k1, 0.2))
        else:
            def sweep(k, y):
                return 0.5 * (k + k1 * (1.0 + 0.1 * np.tanh(y - level)))
        k = adsim.checkpoint_loop(sweep, np.full(1, 0.2), 30, args=(y,))
        return -k * y
    return solve_ivp(rhs, (0, 4), [1.0], t_eval=[4.0], **TIGHT).y[0, -1]


def test_a_selection_inside_a_loop_in_fun_is_refused():
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"comparison or rounding \(greater\) inside "
                             r"adsim.checkpoint_loop, of the state y, and its outcome cannot be "
                             r"checked.*plain Python loop"):
        adsim.grad(relay_rate)(np.array([0.5, 0.5]))


def test_a_loop_in_fun_without_a_comparison_is_differentiated():
    p = np.array([0.5, 0.5])
    f = (lambda p: relay_rate(p, "smooth"))
    np.testing.assert_allclose(adsim.grad(f)(p), differences(f, p, 1e-4), rtol=1e-6)


def test_a_selection_beside_a_loop_in_fun_is_refused():
    """np.where of the state next to a checkpointed loop in fun: the
    selection is written on fun's tape, but its outcomes cannot be read
    past the loop."""
    def f(p):
        k1, level = p

        def rhs(t, y):
            k = adsim.checkpoint_loop(lambda k, y: 0.5 * (k + k1), np.full(1, 0.2), 30,
                                      args=(y,))
            return -np.where(y > level, k, 0.2) * y
        return solve_ivp(rhs, (0, 4), [1.0], t_eval=[4.0], **TIGHT).y[0, -1]
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"since fun also calls adsim.checkpoint_loop, which adsim does not "
                             r"write again"):
        adsim.grad(f)(np.array([0.5, 0.3]))


def forced_oscillator(p, form="sawtooth", tol=TIGHT):
    """A damped mass driven by a periodic force of fitted period T: a
    sawtooth (np.mod(t, T) / T, a jump of 1 at every tooth) or a smooth
    periodic function of np.mod(t, T) (continuous across the teeth)."""
    c, T = p

    def rhs(t, y):
        phase = np.mod(t, T) / T
        force = phase if form == "sawtooth" else np.sin(2 * np.pi * phase)
        return [y[1], force - c * y[1] - 4.0 * y[0]]
    return solve_ivp(rhs, (0, 5), [0.0, 0.0], t_eval=[5.0], **tol).y[0, -1]


def forced_tooth_by_tooth(p):
    """The sawtooth integrated tooth by tooth: each k T an end of t_span."""
    c, T = p
    y, k = np.zeros(2), 0
    while k * T < 5.0:
        t0, t1 = k * T, min((k + 1) * T, 5.0)

        def rhs(t, y, t0=t0):
            return [y[1], (t - t0) / T - c * y[1] - 4.0 * y[0]]
        y = solve_ivp(rhs, (t0, t1), y, **TIGHT).y[:, -1]
        k += 1
    return y[0]


def test_a_sawtooth_whose_teeth_move_is_refused_with_the_teeth_to_split():
    p = np.array([0.5, 1.3])
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"remainder \(remainder\) of the time t and a parameter, and it "
                             r"jumps by 1 .*at t = 1.3 .*integrate tooth by tooth"):
        adsim.grad(forced_oscillator)(p)
    want = differences(lambda p: forced_oscillator(p, tol=TIGHTER), p)
    np.testing.assert_allclose(adsim.grad(forced_tooth_by_tooth)(p), want, rtol=1e-6)


def test_a_periodic_force_continuous_across_the_teeth_is_differentiated():
    p = np.array([0.5, 1.3])
    f = (lambda p: forced_oscillator(p, "smooth"))
    np.testing.assert_allclose(adsim.grad(f)(p), differences(f, p, 1e-4), rtol=1e-6)


def test_a_program_without_switches_is_not_refused():
    """A two-compartment dose with linear clearance: no comparison in fun."""
    def f(p):
        ka, k = p
        sol = solve_ivp(lambda t, y: [-ka * y[0], ka * y[0] - k * y[1]], (0, 10), [1.0, 0.0],
                        t_eval=np.linspace(0, 10, 6), **TIGHT)
        return np.sum(sol.y[1])
    np.testing.assert_allclose(adsim.grad(f)(P), differences(f, P), rtol=1e-7)
