"""Tapes of solve_ivp(method="LSODA") and odeint in tape files: their values
are SciPy's LSODA run on recorded tapes of the user's function (and event
functions), which a tape file holds, so saved, loaded and unpickled tapes
replay bitwise like the original (tests/parallel/test_map_ode_kinds.py maps
them on spawned processes); gradients agree with differences; the values
agree with SciPy's own to rounding (LSODA's step control amplifies the
rounding differences between the recorded function and the Python one); a
loaded tape where the function takes a branch none of its tapes recorded
raises BranchChanged; a user's jac/Dfun is recorded and saved like fun
(one that cannot be recorded keeps the tape in memory).

The model: a damped, driven pair ``y' = -k tanh(y) + A sin(t) + c y_other``
(tanh: its recorded value may round otherwise than NumPy's)."""
import io
import json

import numpy as np
import pytest
import scipy.integrate

import adsim
from adsim import tapefile
from adsim.errors import TapeCopyError
from adsim.integrate import odeint, solve_ivp
from fdcheck import central
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

Y0 = np.array([1.0, -0.5])
P = np.array([1.3, 0.8])                     # k, A
C = 0.2                                      # a plain argument
T_EVAL = np.linspace(0.0, 4.0, 6)
TOL = dict(rtol=1e-8, atol=1e-10)
REPLAYED = ["forward", "gradient", "jvp", "vjp", "hvp"]
NEAR = (Y0 * (1 + 1e-6), P * (1 - 2e-6))


def driven(t, y, k, A, c):
    return -k * np.tanh(y) + A * np.sin(t) + c * y[::-1]


def driven_first(y, t, k, A, c):
    return driven(t, y, k, A, c)


def crossing(t, y, k, A, c):
    return y[0] - 0.2


crossing.direction = -1


def lsoda_at_times(y0, p):
    sol = solve_ivp(driven, (0.0, 4.0), y0, method="LSODA", args=(p[0], p[1], C),
                    t_eval=T_EVAL, **TOL)
    return np.sum(sol.y ** 2)


def lsoda_dense_and_event(y0, p):
    sol = solve_ivp(driven, (0.0, 4.0), y0, method="LSODA", args=(p[0], p[1], C),
                    dense_output=True, events=crossing, **TOL)
    return np.sum(sol.sol(1.7) ** 2) + np.sum(sol.y[:, -1]) + 0.5 * np.sum(sol.t_events[0])


def with_odeint(y0, p):
    return np.sum(odeint(driven_first, y0, T_EVAL, args=(p[0], p[1], C), **TOL) ** 2)


def with_odeint_full_output(y0, p):
    y, info = odeint(driven, y0, T_EVAL, args=(p[0], p[1], C), tfirst=True, full_output=True,
                     **TOL)
    return np.sum(y[-1] * y[2])


LOSSES = [lsoda_at_times, lsoda_dense_and_event, with_odeint, with_odeint_full_output]


@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_saved_loaded_and_pickled_replay_bitwise(loss, tmp_path):
    tape = adsim.record(loss, Y0, P)
    kind = "adsim.odeint" if "odeint" in loss.__name__ else "adsim.lsoda"
    assert kind in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), [(Y0, P), NEAR], methods=REPLAYED)


@pytest.mark.parametrize("loss", [lsoda_at_times, with_odeint], ids=lambda f: f.__name__)
def test_loaded_gradients_against_differences(loss):
    loaded = copies(adsim.record(loss, Y0, P))[0]
    g = loaded.gradient(Y0, P)
    for v in ([np.array([1.0, 0.0]), np.zeros(2)], [np.zeros(2), np.array([0.3, -1.0])]):
        want = central(lambda y0, p: loss(y0, p), [Y0, P], v, h=1e-5)
        # the derivatives are the donor solve's: the solution's to about the tolerance
        assert g[0] @ v[0] + g[1] @ v[1] == pytest.approx(want, rel=1e-5)


def test_values_agree_with_scipys_own():
    """SciPy's LSODA on the recording of fun, not on fun: equal to SciPy's
    numbers to rounding, amplified by LSODA's step control."""
    args = (P[0], P[1], C)
    ivp = adsim.record(lambda y0, p: solve_ivp(driven, (0.0, 4.0), y0, method="LSODA",
                                               args=(p[0], p[1], C), t_eval=T_EVAL, **TOL).y,
                       Y0, P)
    want = scipy.integrate.solve_ivp(driven, (0.0, 4.0), Y0, method="LSODA", args=args,
                                     t_eval=T_EVAL, **TOL).y
    np.testing.assert_allclose(ivp.forward(Y0, P), want, rtol=1e-10, atol=1e-14)
    ode = adsim.record(lambda y0, p: odeint(driven_first, y0, T_EVAL, args=(p[0], p[1], C),
                                            **TOL), Y0, P)
    np.testing.assert_allclose(ode.forward(Y0, P),
                               scipy.integrate.odeint(driven_first, Y0, T_EVAL, args=args, **TOL),
                               rtol=1e-10, atol=1e-14)


def kinked(t, y, s):
    return -s * (1.0 + 0.1 * np.abs(y))       # abs: a recorded branch on the sign of y


@pytest.mark.parametrize("solve", ["LSODA", "odeint"])
def test_a_loaded_tape_off_its_functions_paths_raises_branch_changed(solve):
    def loss(y0, s):
        if solve == "odeint":
            return np.sum(odeint(kinked, y0, [0.0, 0.5, 1.0], args=(s,), tfirst=True))
        return np.sum(solve_ivp(kinked, (0.0, 1.0), y0, method="LSODA", args=(s,),
                                t_eval=[0.5, 1.0], rtol=1e-8).y)
    y0, s = np.array([1.0]), np.array(0.5)
    tape = adsim.record(loss, y0, s)
    loaded = copies(tape)
    other = np.array(1.5)                        # y crosses 0: abs takes its other side
    with pytest.raises(adsim.BranchChanged, match="`kinked`"):
        loaded[0].forward(y0, other)
    # in memory the steps record fun again there, but the sides of abs at the
    # points are branches of the solve: a kink crossed records again
    with pytest.raises(adsim.BranchChanged):
        tape.forward(y0, other)
    # recorded where y crosses 0, the tape holds both paths of kinked
    crossing = adsim.record(loss, y0, other)
    assert np.isfinite(crossing.forward(y0, other))
    assert_same_replays(crossing, copies(crossing), [(y0, other)], methods=["forward"])


def jacobian(t, y, k, A, c):
    return np.diag(-k / np.cosh(y) ** 2) + c * np.array([[0.0, 1.0], [1.0, 0.0]])


def lsoda_with_jac(y0, p):
    return np.sum(solve_ivp(driven, (0.0, 4.0), y0, method="LSODA", args=(p[0], p[1], C),
                            jac=jacobian, t_eval=T_EVAL, **TOL).y ** 2)


def odeint_with_dfun(y0, p):
    return np.sum(odeint(driven, y0, T_EVAL, args=(p[0], p[1], C), tfirst=True,
                         Dfun=jacobian, **TOL) ** 2)


@pytest.mark.parametrize("loss", [lsoda_with_jac, odeint_with_dfun], ids=lambda f: f.__name__)
def test_users_jacobians_are_saved_with_the_tape(loss, tmp_path):
    """SciPy's LSODA calls the tapes of jac/Dfun too, in memory and loaded:
    bitwise alike, equal to SciPy's own on the Python functions to rounding
    and with gradients that agree with differences."""
    tape = adsim.record(loss, Y0, P)
    held = [c for c in tape.callbacks if type(c).__name__ in ("LsodaPiece", "OdeintOp")]
    assert held and all(c.call.jac.taped if hasattr(c.call, "jac") else c.call.Dfun.taped
                        for c in held)
    assert_same_replays(tape, copies(tape, tmp_path), [(Y0, P), NEAR], methods=REPLAYED)
    args = (P[0], P[1], C)
    if loss is lsoda_with_jac:
        want = np.sum(scipy.integrate.solve_ivp(driven, (0.0, 4.0), Y0, method="LSODA",
                                                args=args, jac=jacobian, t_eval=T_EVAL,
                                                **TOL).y ** 2)
    else:
        want = np.sum(scipy.integrate.odeint(driven, Y0, T_EVAL, args=args, tfirst=True,
                                             Dfun=jacobian, **TOL) ** 2)
    assert tape.forward(Y0, P) == pytest.approx(want, rel=1e-10)
    loaded = copies(tape)[0]
    v = [np.zeros(2), np.array([0.3, -1.0])]
    want = central(lambda y0, p: loss(y0, p), [Y0, P], v, h=1e-5)
    assert loaded.gradient(Y0, P)[1] @ v[1] == pytest.approx(want, rel=1e-5)


def test_users_jacobians_that_cannot_be_recorded_keep_the_tape_in_memory():
    def unrecordable(t, y, k, A, c):            # float() of an active value: not recordable
        return jacobian(t, y, float(k), A, c)

    def with_jac(y0, p):
        return np.sum(solve_ivp(driven, (0.0, 1.0), y0, method="LSODA", args=(p[0], p[1], C),
                                jac=unrecordable, t_eval=[1.0], **TOL).y)

    def with_dfun(y0, p):
        return np.sum(odeint(driven, y0, [0.0, 1.0], args=(p[0], p[1], C), tfirst=True,
                             Dfun=unrecordable, **TOL))
    for loss, what in [(with_jac, "callable jac=.*could not be recorded"),
                       (with_dfun, "odeint with Dfun=.*could not be recorded")]:
        tape = adsim.record(loss, Y0, P)
        assert np.isfinite(tape.forward(*NEAR))
        with pytest.raises(TapeCopyError, match=what):
            tape.save(io.BytesIO())


def test_the_pieces_of_a_loaded_call_share_one_solve():
    """Each op of one LSODA call (layout, outputs, every sol(t)) saves its
    own copy of the tapes; loaded, they share one call, so a replay solves
    once, as in memory."""
    from adsim.integrate._lsoda import LsodaPiece
    for t in copies(adsim.record(lsoda_dense_and_event, Y0, P)):
        pieces = [cb for cb in t.callbacks if isinstance(cb, LsodaPiece)]
        assert len(pieces) == 3 and len({id(cb.call) for cb in pieces}) == 1


def altered_file(loss, kind, change):
    """The file of a tape of ``loss`` with ``change`` applied to the
    description of each callback of ``kind``."""
    data = tapefile.dumps(adsim.record(loss, Y0, P))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    for c in calls:
        if c["kind"] == kind:
            change(c["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("loss,kind,change,message", [
    (lsoda_at_times, "adsim.lsoda", lambda st: st.update(piece="steps"), "a piece"),
    (lsoda_at_times, "adsim.lsoda", lambda st: st["sizes"].append(1), "inputs of sizes"),
    (lsoda_at_times, "adsim.lsoda", lambda st: st["call"].update(n=3), "maps"),
    (lsoda_at_times, "adsim.lsoda",
     lambda st: st["call"]["options"].update(rtol={"shape": [], "hex": ["x"]}), "hexadecimal"),
    (with_odeint, "adsim.odeint", lambda st: st.update(m=0), "len"),
    (with_odeint, "adsim.odeint", lambda st: st["call"]["options"].pop("tfirst"), "options"),
    (with_odeint, "adsim.odeint", lambda st: st["call"]["functions"][0].update(tapes=2),
     "tapes")])
def test_altered_descriptions_are_refused(loss, kind, change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(loss, kind, change))
