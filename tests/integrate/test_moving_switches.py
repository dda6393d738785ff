"""A right-hand side that jumps where the parameters move the jump (an
infusion stopped at a fitted time, a rate that changes where the state
crosses a level) is refused by name, with the rewrite that is
differentiated: before, the derivative of the steps taken left out the
jump's term, silently (d y(5) / d t_off came out 0 where it is 0.223;
d y(4) / d k1 -0.411 where it is -0.164), whether the switch is a Python
branch or data (np.where, np.heaviside, np.sign, np.floor of the state).
Kinks (abs, Python's max, np.interp, np.where(y > 0, a y, b y), upwind
fluxes) and jumps at fixed times stay differentiated
(adsim/integrate/_switches.py, _selections.py)."""
import numpy as np
import pytest
from scipy.integrate import odeint, solve_ivp

import adsim
from fdcheck import differences

TIGHT = dict(rtol=1e-10, atol=1e-12)


def infusion_stopped_at(p, method="RK45", form="if"):
    """y' = [t < t_off] - k y from y(0) = 0; y(5) is known in closed form."""
    k, t_off = p

    def rhs(t, y):
        if form == "if":
            return [(1.0 if t < t_off else 0.0) - k * y[0]]
        if form == "where":
            return np.where(t < t_off, 1.0, 0.0) - k * y
        return np.heaviside(t_off - t, 1.0) - k * y
    if method == "odeint":
        return odeint(lambda y, t: rhs(t, y), [0.0], [0.0, 5.0], **TIGHT)[-1, 0]
    return solve_ivp(rhs, (0, 5), [0.0], method=method, **TIGHT).y[0, -1]


def infusion_split_at(p):
    """The same model integrated in two pieces: t_off an end of t_span."""
    k, t_off = p
    first = solve_ivp(lambda t, y: 1.0 - k * y, (0, t_off), [0.0], **TIGHT)
    return solve_ivp(lambda t, y: -k * y, (t_off, 5), first.y[:, -1], **TIGHT).y[0, -1]


def exact_infusion_gradient(k, t_off):
    def y5(k, t_off):
        return (1 - np.exp(-k * t_off)) / k * np.exp(-k * (5 - t_off))
    h = 1e-6
    return np.array([(y5(k + h, t_off) - y5(k - h, t_off)) / (2 * h),
                     (y5(k, t_off + h) - y5(k, t_off - h)) / (2 * h)])


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA", "odeint"])
def test_a_switch_at_a_parameters_time_is_refused_with_the_split_to_write(method):
    p = np.array([0.5, 2.0])
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"`(rhs|<lambda>)` of solve_ivp \(or odeint\) switches by a "
                             r"comparison of the time t and a parameter.*jumps by 1 .*t_s is "
                             r"then a differentiated end of t_span"):
        adsim.grad(lambda p: infusion_stopped_at(p, method))(p)


@pytest.mark.parametrize("form", ["where", "heaviside"])
def test_a_selection_at_a_parameters_time_is_refused(form):
    with pytest.raises(adsim.UnsupportedOperation, match="selects at a time that moves"):
        adsim.grad(lambda p: infusion_stopped_at(p, form=form))(np.array([0.5, 2.0]))


def test_the_split_integration_is_the_models_derivative():
    p = np.array([0.5, 2.0])
    np.testing.assert_allclose(adsim.grad(infusion_split_at)(p), exact_infusion_gradient(*p),
                               rtol=1e-7)


def rate_switched_by_the_state(p, method="RK45"):
    """y' = -k y with k = k1 while y > 0.5, k2 after: y(4) = 0.5 exp(-k2 (4 - ln 2 / k1))."""
    k1, k2 = p

    def rhs(t, y):
        k = k1 if y[0] > 0.5 else k2
        return [-k * y[0]]
    return solve_ivp(rhs, (0, 4), [1.0], method=method, t_eval=[4.0], **TIGHT).y[0, -1]


def rate_switched_by_an_event(p):
    k1, k2 = p

    def half(t, y):
        return y[0] - 0.5
    half.terminal = True
    first = solve_ivp(lambda t, y: -k1 * y, (0, 4), [1.0], events=half, **TIGHT)
    t1 = first.t_events[0][0]
    return solve_ivp(lambda t, y: -k2 * y, (t1, 4), first.y_events[0][0], **TIGHT).y[0, -1]


def exact_switched_gradient(k1, k2):
    y4 = 0.5 * np.exp(-k2 * (4 - np.log(2) / k1))
    return np.array([-y4 * k2 * np.log(2) / k1 ** 2, -y4 * (4 - np.log(2) / k1)])


@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_a_switch_on_the_state_is_refused_and_the_event_restart_is_exact(method):
    p = np.array([0.5, 0.2])
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"comparison of the state y.*jumps by 0.15 .*at t = 1.3862.*"
                             r"terminal event"):
        adsim.grad(lambda p: rate_switched_by_the_state(p, method))(p)
    np.testing.assert_allclose(adsim.grad(rate_switched_by_an_event)(p),
                               exact_switched_gradient(*p), rtol=1e-7)


def test_a_replay_that_crosses_the_switch_is_not_silent():
    """Recorded where the level is never reached, replayed where it is: the
    steps would record another variant of themselves and carry on; the
    branches of fun at the outputs make the replay record again (grad) or
    raise BranchChanged (a tape)."""
    def f(p):
        k, level = p

        def rhs(t, y):
            return [-(k if y[0] > level else 0.2) * y[0]]
        return solve_ivp(rhs, (0, 4), [1.0], t_eval=[4.0], **TIGHT).y[0, -1]
    never, crossed = np.array([0.5, 0.01]), np.array([0.5, 0.5])
    g = adsim.grad(f)
    np.testing.assert_allclose(g(never), [-4 * np.exp(-2.0), 0.0], rtol=1e-8)
    with pytest.raises(adsim.UnsupportedOperation, match="comparison of the state y"):
        g(crossed)
    with pytest.raises(adsim.BranchChanged):
        adsim.record(f, never).gradient(crossed)


def test_kinks_crossed_and_jumps_at_fixed_times_stay_differentiated():
    """abs and Python's max of the state, np.interp of the state, and a dose
    stopped at a fixed time: continuous where their outcome changes, or not
    moving: the derivatives stay the model's."""
    def drag(p):
        g, c = p
        return solve_ivp(lambda t, y: [y[1], -g - c * y[1] * abs(y[1])], (0, 2), [0.0, 5.0],
                         **TIGHT).y[0, -1]

    def clamped(p):
        def rhs(t, y):
            return [p[0] - p[1] * max(y[0], 0.0)]
        return solve_ivp(rhs, (0, 3), [-1.0], **TIGHT).y[0, -1]

    def tabled(p):
        return solve_ivp(lambda t, y: -p[0] * np.interp(y, [0.0, 0.5, 2.0], [0.0, 0.2, 2.0]),
                         (0, 3), [1.5], method="Radau", **TIGHT).y[0, -1]

    def fixed_stop(p):
        return solve_ivp(lambda t, y: [(1.0 if t < 2.0 else 0.0) - p[0] * y[0]], (0, 5),
                         [0.0], **TIGHT).y[0, -1] * p[1]
    for f, x in ((drag, [9.81, 0.1]), (clamped, [0.8, 0.5]), (tabled, [0.7, 1.0]),
                 (fixed_stop, [0.5, 2.0])):
        x = np.array(x)
        got, want = adsim.grad(f)(x), differences(f, x, 1e-4)
        # the steps held across a kink or a stop: the model's to about 1e-6 (2.9e-6 clamped)
        assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want)), (f.__name__, got,
                                                                           want)


SELECTED_RATES = {                  # k1 while y > 0.5, k2 after, written as data
    "where": lambda y, k1, k2: np.where(y > 0.5, k1, k2),
    "heaviside": lambda y, k1, k2: k2 + (k1 - k2) * np.heaviside(y - 0.5, 1.0),
    "sign": lambda y, k1, k2: k2 + (k1 - k2) * (np.sign(y - 0.5) + 1) / 2,
    "floor": lambda y, k1, k2: k2 + (k1 - k2) * np.minimum(np.floor(2 * y), 1.0),
}


def rate_selected_by_the_state(p, form="where", method="RK45", t_eval=None):
    k1, k2 = p

    def rhs(t, y):
        return -SELECTED_RATES[form](y, k1, k2) * y
    if method == "odeint":
        return odeint(lambda y, t: rhs(t, y), [1.0], [0.0, 2.0, 4.0], **TIGHT)[-1, 0]
    return solve_ivp(rhs, (0, 4), [1.0], method=method, t_eval=t_eval, **TIGHT).y[0, -1]


@pytest.mark.parametrize("form,method", [("where", "RK45"), ("where", "Radau"),
                                         ("where", "odeint"), ("heaviside", "RK45"),
                                         ("sign", "BDF"), ("floor", "RK45")])
def test_a_selection_on_the_state_is_refused(form, method):
    """np.where (np.heaviside, np.sign, np.floor) of the state: a switch that
    is data, not a recorded branch (np.sign passes 0 between the two rates:
    half the jump); before, d y(4) / d k1 came out -0.411 where it is
    -0.164."""
    with pytest.raises(adsim.UnsupportedOperation,
                       match=r"comparison or rounding \((greater|less|sign|floor)\) of the state "
                             r"y, and it jumps by (0.15|0.075) where .*terminal event"):
        adsim.grad(lambda p: rate_selected_by_the_state(p, form, method))(np.array([0.5, 0.2]))


def test_a_remainder_of_the_state_that_wraps_is_refused_and_a_periodic_one_is_not():
    """np.mod(y, c) jumps where y crosses a multiple of c (its quotient
    steps) unless fun is periodic in it."""
    def f(p, periodic):
        def rhs(t, y):
            r = np.mod(y, 0.7)
            return -p[0] - p[1] * (np.sin(2 * np.pi * r / 0.7) if periodic else r)
        return solve_ivp(rhs, (0, 4), [1.0], **TIGHT).y[0, -1]
    p = np.array([0.5, 0.2])
    with pytest.raises(adsim.UnsupportedOperation, match=r"remainder \(remainder\) of the state "
                                                         r"y, and it jumps by 0.14"):
        adsim.grad(lambda p: f(p, False))(p)
    got, want = adsim.grad(lambda p: f(p, True))(p), differences(lambda p: f(p, True), p, 1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("form", ["searchsorted", "argmax"])
def test_an_index_found_from_the_state_is_a_selection(form):
    """A table of rates indexed by np.searchsorted or np.argmax of the
    state: the index steps where fun jumps (np.interp of the state, whose
    index steps where it is continuous, is a kink above)."""
    def f(p):
        k1, k2 = p

        def rhs(t, y):
            if form == "searchsorted":
                return -np.array([k2, k1])[np.searchsorted([0.5], y)] * y
            return -np.array([k1, k2])[np.argmax(y)] * y + np.array([0.0, 0.3])
        return solve_ivp(rhs, (0, 4), [1.0] if form == "searchsorted" else [1.0, 0.8],
                         **TIGHT).y[0, -1]
    with pytest.raises(adsim.UnsupportedOperation, match=r"index \((search|argext_at)\) of the "
                                                         r"state y, and it jumps by"):
        adsim.grad(f)(np.array([0.5, 0.2]))


def test_a_selection_crossed_between_two_outputs_is_bisected():
    """t_eval = [4.0]: the crossing is between two of the steps' ends, found
    there by bisection (at ln 2 / k1)."""
    with pytest.raises(adsim.UnsupportedOperation, match=r"at t = 1\.3862"):
        adsim.grad(lambda p: rate_selected_by_the_state(p, t_eval=[4.0]))(np.array([0.5, 0.2]))


def test_a_replay_that_crosses_a_selection_is_not_silent():
    """The selections' outcomes at the outputs are a recorded branch: a
    replay where they differ records again (grad) or raises (a tape)."""
    def f(p):
        k, level = p
        return solve_ivp(lambda t, y: -np.where(y > level, k, 0.2) * y, (0, 4), [1.0],
                         t_eval=[4.0], **TIGHT).y[0, -1]
    never, crossed = np.array([0.5, 0.01]), np.array([0.5, 0.5])
    g = adsim.grad(f)
    np.testing.assert_allclose(g(never), [-4 * np.exp(-2.0), 0.0], rtol=1e-8)
    with pytest.raises(adsim.UnsupportedOperation, match="comparison or rounding"):
        g(crossed)
    with pytest.raises(adsim.BranchChanged):
        adsim.record(f, never).gradient(crossed)


def upwind_burgers(p, n=40):
    """Viscous Burgers by the method of lines, upwinded by the sign of u
    (np.where of a comparison of the state): a source drives u below zero
    cell after cell, each change of sign a kink of the fluxes."""
    nu, a = p
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    dx = x[1] - x[0]

    def rhs(t, u):
        up, um = np.roll(u, -1), np.roll(u, 1)
        adv = np.where(u > 0, u * (u - um), u * (up - u)) / dx
        return -a * adv + nu * (up - 2 * u + um) / dx ** 2 - 0.6
    sol = solve_ivp(rhs, (0, 1.0), np.sin(x) + 0.3, t_eval=np.linspace(0, 1, 21), rtol=1e-10,
                    atol=1e-12)
    return np.sum(sol.y[:, -1] ** 2) + np.sum(sol.y[:, 10] * x)


def test_kinks_selected_from_the_state_stay_differentiated():
    """np.where(y > 0, a y, b y), np.sign(y) y, np.heaviside(y, 0.5) y and
    np.maximum: continuous where their outcome changes (bisected, fun equal
    on both sides); upwind fluxes whose cells change sign. The derivatives
    are the model's (differences of the program)."""
    def split_rate(p):
        a, b = p
        return solve_ivp(lambda t, y: np.where(y > 0, a * y, b * y) - 0.5, (0, 3), [1.0],
                         **TIGHT).y[0, -1]

    def signed(p):
        return solve_ivp(lambda t, y: -p[0] * np.sign(y) * y - p[1] * y + np.cos(2 * t),
                         (0, 4), [0.3], **TIGHT).y[0, -1]

    def heaviside_kink(p):
        return odeint(lambda y, t: p[0] - p[1] * np.heaviside(y, 0.5) * y - 0.1 * y,
                      [-1.0], [0.0, 1.0, 3.0], **TIGHT)[-1, 0]

    def clamped(p):
        return solve_ivp(lambda t, y: p[0] - p[1] * np.maximum(y, 0.0), (0, 3), [-1.0],
                         method="Radau", **TIGHT).y[0, -1]
    for f, x in ((split_rate, [-0.3, -0.8]), (signed, [0.4, 0.3]), (heaviside_kink, [0.8, 0.5]),
                 (clamped, [0.8, 0.5]), (upwind_burgers, [0.05, 1.0])):
        x = np.array(x)
        got, want = adsim.grad(f)(x), differences(f, x, 1e-4)
        # the steps held across kinks: the model's to about 1e-5 (1.1e-5 signed, upwind)
        assert np.max(np.abs(got - want)) <= 3e-5 * np.max(np.abs(want)), (f.__name__, got,
                                                                           want)
