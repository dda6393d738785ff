"""Tapes of solve_ivp with events in tape files: an event time is one op
holding the recorded tapes of its event function on the step's interpolant,
so saved, loaded and unpickled tapes replay bitwise like the original
(tests/parallel/test_map_ode_kinds.py maps them on processes, which have no
code of the model), with derivatives that agree with differences; an event function that takes a branch no recorded tape holds
raises BranchChanged in a loaded tape (it cannot record the function again).

The model: one-compartment pharmacokinetics with first-order absorption,
``y = (drug in the gut, concentration)``, the time of the peak concentration
(``t_max = ln(ka / ke) / (ka - ke)``), the time the concentration first
reaches a target and the time it falls below the therapeutic minimum
(terminal)."""
import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp
from scipy.optimize import brentq

import adsim
from adsim import tapefile
from adsim.integrate import _events, solve_ivp
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

PARAMS = np.array([1.2, 0.25, 1.0])          # ka (1/h), ke (1/h), V (L)
DOSE = np.array([1.0, 0.0])                  # mg in the gut, mg/L in the plasma
REPLAYED = ["forward", "gradient", "jvp", "vjp", "hvp"]


def absorption(t, y, ka, ke, V):
    gut, c = y
    return [-ka * gut, ka * gut / V - ke * c]


def peak(t, y, ka, ke, V):
    return ka * y[0] / V - ke * y[1]         # dc/dt: + to - at the peak


peak.direction = -1


def reached(t, y, ka, ke, V):
    return y[1] - 0.3


reached.direction = 1


def below(t, y, ka, ke, V):
    return y[1] - 0.2


below.terminal = True
below.direction = -1


def exposure(solve, method, t_eval, rtol=1e-8):
    def loss(dose, params):
        sol = solve(absorption, (0.0, 24.0), dose, method=method, args=tuple(params),
                    events=[peak, reached, below], t_eval=t_eval, rtol=rtol, atol=1e-10)
        (t_peak,), (t_reached,), (t_below,) = sol.t_events
        return t_peak + 2.0 * t_reached + 0.5 * t_below + 3.0 * sol.y_events[0][0, 1] + \
            np.sum(sol.y[1])
    return loss


def absorption_jacobian(t, y, ka, ke, V):
    return np.array([[-ka, 0.0], [ka / V, -ke]])


def events_met(solve, method, t_eval, rtol):
    # SciPy's implicit methods with the exact Jacobian, as adsim's
    jac = {"jac": absorption_jacobian} if solve is scipy_solve_ivp and method == "Radau" else {}

    def met(dose, params):
        sol = solve(absorption, (0.0, 24.0), dose, method=method, args=tuple(params),
                    events=[peak, reached, below], t_eval=t_eval, rtol=rtol, atol=1e-10, **jac)
        return np.concatenate(sol.t_events + [sol.y_events[0][0]])
    return met


CASES = [("RK45", None, 1e-8), ("RK45", np.linspace(0.0, 12.0, 7), 1e-8),
         ("Radau", None, 1e-5), ("Radau", np.linspace(0.0, 12.0, 7), 1e-5)]


@pytest.mark.parametrize("method,t_eval,rtol", CASES)
def test_tapes_with_event_times_replay_bitwise_after_saving(method, t_eval, rtol, tmp_path):
    loss = exposure(solve_ivp, method, t_eval, rtol)
    tape = adsim.record(loss, DOSE, PARAMS)
    assert "adsim.event_time" in callback_kinds(tape)
    # the recorded event times and states are SciPy's, to rounding (amplified by
    # Radau's Newton iterations)
    np.testing.assert_allclose(adsim.record(events_met(solve_ivp, method, t_eval, rtol), DOSE,
                                            PARAMS).forward(DOSE, PARAMS),
                               events_met(scipy_solve_ivp, method, t_eval, rtol)(DOSE, PARAMS),
                               rtol=1e-13 if method == "RK45" else 1e-9)
    near = (DOSE * (1 + 1e-6), PARAMS * (1 - 2e-6))
    loaded = copies(tape, tmp_path)
    assert_same_replays(tape, loaded, [(DOSE, PARAMS), near], methods=REPLAYED)
    for t in [tape] + loaded:
        with pytest.raises(adsim.BranchChanged):            # never reaches the target
            t.forward(DOSE * 0.2, PARAMS)


@pytest.mark.parametrize("method,rtol,accuracy", [("RK45", 1e-9, 1e-6), ("Radau", 1e-7, 1e-5)])
def test_derivatives_of_loaded_peak_times(method, rtol, accuracy):
    """Against the peak time's formula, and the tangent against the gradient."""
    def peak_time(dose, params):
        sol = solve_ivp(absorption, (0.0, 2.5), dose, method=method, args=tuple(params),
                        events=peak, rtol=rtol, atol=1e-12)
        return sol.t_events[0][0]
    point = PARAMS * [1.1, 0.9, 1.0]
    loaded = tapefile.loads(tapefile.dumps(adsim.record(peak_time, DOSE, point)))
    ka, ke, _ = point
    exact = [(1 / ka - (np.log(ka / ke)) / (ka - ke)) / (ka - ke),
             (-1 / ke + np.log(ka / ke) / (ka - ke)) / (ka - ke), 0.0]
    g_dose, g_params = loaded.gradient(DOSE, point)
    np.testing.assert_allclose(g_params, exact, rtol=accuracy, atol=1e-9)
    v = (np.array([0.3, 0.0]), np.array([0.1, -0.2, 0.05]))
    assert loaded.jvp((DOSE, point), v)[1] == pytest.approx(
        g_dose @ v[0] + g_params @ v[1], rel=1e-10)


def test_derivatives_of_loaded_event_times_and_states():
    """Every event time and the peak's state (smooth in the parameters,
    unlike the steps) against central differences of SciPy's solve_ivp at a
    tight tolerance."""
    point = PARAMS * [1.1, 0.9, 1.0]
    weights = np.array([1.0, 2.0, 0.5, -1.0, 3.0])

    def weighted(solve):
        met = events_met(solve, "RK45", None, 1e-10)
        return lambda dose, params: np.dot(weights, met(dose, params))
    loaded = tapefile.loads(tapefile.dumps(adsim.record(weighted(solve_ivp), DOSE, point)))
    ref = weighted(scipy_solve_ivp)
    g_dose, g_params = loaded.gradient(DOSE, point)
    for i, e in enumerate(np.eye(3) * 1e-5):
        difference = (ref(DOSE, point + e) - ref(DOSE, point - e)) / 2e-5
        assert g_params[i] == pytest.approx(difference, rel=1e-5, abs=1e-7)
    e = np.array([1e-5, 0.0])
    assert g_dose[0] == pytest.approx((ref(DOSE + e, point) - ref(DOSE - e, point)) / 2e-5,
                                      rel=1e-5)
    v = (np.array([0.3, 0.0]), np.array([0.1, -0.2, 0.05]))
    assert loaded.jvp((DOSE, point), v)[1] == pytest.approx(
        g_dose @ v[0] + g_params @ v[1], rel=1e-10)


def test_a_branch_no_recorded_tape_holds_raises_branch_changed_when_loaded(monkeypatch):
    """The threshold is written in other units after a review time just past
    the step the concentration falls below it in: the recording meets one
    branch. Extending that step past the review time (as a replay could),
    the original records the other branch and finds the same zero; the
    loaded op has no code to record it and raises BranchChanged."""
    calls = []
    value = _events.EventTime._value

    def spied(self, z, *arrays):
        calls.append((self, z.copy(), arrays))
        return value(self, z, *arrays)
    monkeypatch.setattr(_events.EventTime, "_value", spied)

    def record_with_review(review):
        def below_min(t, y, ka, ke, V):
            if t < review:
                return y[1] - 0.2               # mg/L
            return 1000.0 * y[1] - 200.0        # ug/L after the review
        below_min.terminal = True

        def end_time(dose, params):
            sol = solve_ivp(absorption, (0.0, 24.0), dose, args=tuple(params),
                            events=below_min, rtol=1e-8, atol=1e-10)
            return sol.t_events[0][0]
        calls.clear()
        tape = adsim.record(end_time, DOSE, PARAMS)
        (op, z, arrays), = calls
        return tape, op, z, arrays

    _, op, z, _ = record_with_review(np.inf)
    t_old, t_end = (z[k] for k in op.bracket)
    review = t_end + 0.01 * (t_end - t_old)
    tape, op, z, arrays = record_with_review(review)
    assert len(op.inner.variants.tapes()) == 1
    loaded = tapefile.loads(tapefile.dumps(tape))
    (loaded_op,) = [cb.prim for cb in loaded.callbacks
                    if isinstance(getattr(cb, "prim", None), _events.EventTime)]
    root = op._value(z, *arrays)
    assert loaded_op._value(z, *arrays) == root
    longer = z.copy()
    longer[op.bracket[1]] += 0.02 * (t_end - t_old)
    # the zero of the event function itself, on the longer step's interpolant
    zero = brentq(lambda tau: float(op.inner.G(np.array(tau), longer, *arrays)),
                  *(longer[k] for k in op.bracket), xtol=1e-15, rtol=1e-15)
    assert op._value(longer, *arrays) == pytest.approx(zero, rel=1e-13)
    assert len(op.inner.variants.tapes()) == 2
    with pytest.raises(adsim.BranchChanged, match="time of event `below_min`.*loaded from a "
                                                  "tape file"):
        loaded_op._value(longer, *arrays)


def time_of_peak(dose, params):
    sol = solve_ivp(absorption, (0.0, 2.5), dose, args=tuple(params), events=peak)
    return sol.t_events[0][0]


def altered_file(change):
    """The file of a tape of ``time_of_peak`` with ``change`` applied to the
    description of its event time."""
    data = tapefile.dumps(adsim.record(time_of_peak, DOSE, PARAMS))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.event_time"]
    change(described["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("change,message", [
    (lambda st: st.update(bracket=[0, 10 ** 6]), "the step's ends"),
    (lambda st: st["in_shapes"][0].append(1), "a number, not"),
    (lambda st: st["in_shapes"][1].append(2), "a tape of the event function"),
    (lambda st: st.update(out_shape=[2]), "to a number"),
    (lambda st: st.update(extra=1), "fields")])
def test_altered_event_descriptions_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(change))


def test_a_file_whose_step_ends_bracket_no_zero_fails_with_a_tape_file_error():
    """The loader checks that the step's ends are positions in the state;
    a file that names two positions between which the event function does
    not change sign is found out at the first replay."""
    loaded = tapefile.loads(altered_file(lambda st: st.update(bracket=[st["bracket"][0]] * 2)))
    with pytest.raises(adsim.TapeFileError, match="finds no zero"):
        loaded.forward(DOSE, PARAMS)
