"""Tapes of constrained minimisers in tape files: the solution is one op
holding the recorded tapes of the objective and of each constraint
function (linear constraints, bounds and limits as data), on which SciPy's
minimiser, the multipliers and the KKT system run after the first solve in
the recording process and in one that loaded it, so saved, loaded and
unpickled tapes replay bitwise like the original (second derivatives
too), with derivatives that agree with central differences; a function
taking a branch none of its tapes holds raises BranchChanged in a loaded
tape; derivatives given as Python code are saved as tapes too (those of x and a
vector: tests/scipy/test_solver_tapefile_forms.py, as are active limits
and callbacks); a custom method is refused by name;
altered descriptions raise TapeFileError."""
import json

import numpy as np
import pytest
import scipy.optimize as so
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint

import adsim
from adsim import tapefile
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

P = np.array([1.5, 0.7])
POINTS = [(P,), (P * (1 + 1e-6),), (np.array([1.45, 0.75]),)]
FIRST_ORDER = ["forward", "gradient", "jvp", "vjp"]

# trust-constr's quasi-Newton Hessian of a linear constraint
pytestmark = pytest.mark.filterwarnings("ignore:delta_grad == 0.0")


def slsqp(p):
    """minimize (SLSQP) with dict constraints, one taking args, and bound
    pairs: the inequality and the equality active."""
    cons = [{"type": "ineq", "fun": lambda z, c: c - z[0] ** 2 - z[1], "args": (0.6 * p[1],)},
            {"type": "eq", "fun": lambda z: z[0] + z[1] - 0.3 * p[0]}]
    r = so.minimize(lambda z: (z[0] - p[0]) ** 2 + (z[1] - 2.0) ** 2, [0.1, 0.2],
                    method="SLSQP", constraints=cons, bounds=[(None, 5.0), (-1.0, None)],
                    options={"ftol": 1e-14})
    return r.x @ [1.0, 2.0] + r.x[0] ** 2


def trust_constr(p):
    """trust-constr with a NonlinearConstraint, a LinearConstraint and
    Bounds (the nonlinear one active)."""
    r = so.minimize(lambda z: np.sum((z - p) ** 2) + z[0] * z[1], [0.5, 0.5],
                    method="trust-constr",
                    constraints=[NonlinearConstraint(lambda z: z[0] ** 2 + z[1] ** 2, 0.0, 1.0),
                                 LinearConstraint([[1.0, -1.0]], -3.0, 3.0)],
                    bounds=Bounds([-2.0, -2.0], [2.0, 2.0]),
                    options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 3000})
    return np.sum(r.x * [1.0, -0.5])


def bounded(p):
    """L-BFGS-B with an active bound, and COBYLA with a constraint."""
    x = so.minimize(lambda z: (z[0] - 2.0 * p[0]) ** 2 + (z[1] - p[1]) ** 4 + z[1] ** 2,
                    [0.0, 0.0], method="L-BFGS-B", bounds=[(0.0, 2.0), (None, None)],
                    options={"ftol": 1e-15, "gtol": 1e-12}).x
    y = so.minimize(lambda z: (z[0] - p[0]) ** 2 + (z[1] - p[1]) ** 2, [0.0, 0.0],
                    method="COBYLA", constraints={"type": "ineq", "fun": lambda z: 1.0 - z[0] - z[1]},
                    options={"tol": 1e-13, "catol": 1e-13, "maxiter": 5000}).x
    return x[0] + 3.0 * x[1] + y @ [2.0, -1.0]


def legacy(p):
    """fmin_slsqp and fmin_cobyla."""
    x = so.fmin_slsqp(lambda z: (z[0] - p[0]) ** 2 + (z[1] - p[1]) ** 2, [0.0, 0.0],
                      eqcons=[lambda z: z[0] - 2.0 * z[1]], ieqcons=[lambda z: 1.5 - z[0]],
                      acc=1e-14, iprint=0)
    y = so.fmin_cobyla(lambda z: (z[0] - p[1]) ** 2 + (z[1] - p[0]) ** 2, [0.0, 0.0],
                       cons=[lambda z: 2.0 - z[0] - z[1]], rhoend=1e-13, catol=1e-13,
                       maxfun=5000, disp=0)
    return x @ [1.0, 1.0] + y @ [0.5, 1.0]


def given_derivatives(p):
    """SLSQP, trust-constr and fmin_slsqp given their derivatives as Python
    code (jac=, hess=, a dict constraint's jac, a NonlinearConstraint's
    jac, fprime=): SciPy runs on the tapes of each."""
    def objective(z):
        return (z[0] - p[0]) ** 2 + (z[1] - p[1]) ** 2 + z[0] * z[1]

    def gradient(z):
        return np.array([2.0 * (z[0] - p[0]) + z[1], 2.0 * (z[1] - p[1]) + z[0]])
    disk = {"type": "ineq", "fun": lambda z: 1.0 - z[0] ** 2 - z[1] ** 2,
            "jac": lambda z: np.array([-2.0 * z[0], -2.0 * z[1]])}
    x = so.minimize(objective, [0.1, 0.1], jac=gradient, constraints=[disk], method="SLSQP",
                    options={"ftol": 1e-12}).x
    line = NonlinearConstraint(lambda z: z[0] + z[1] ** 2, -np.inf, 0.8,
                               jac=lambda z: np.array([[1.0, 2.0 * z[1]]]))
    y = so.minimize(objective, [0.1, 0.1], jac=gradient,
                    hess=lambda z: np.array([[2.0, 1.0], [1.0, 2.0]]), constraints=[line],
                    method="trust-constr", options={"gtol": 1e-12, "xtol": 1e-14}).x
    w = so.fmin_slsqp(objective, [0.1, 0.1], fprime=gradient,
                      ieqcons=[lambda z: 1.0 - z[0] ** 2 - z[1] ** 2], acc=1e-12, iprint=0)
    return np.sum(x ** 2) + y @ [1.0, 2.0] + w @ [3.0, 1.0]


PROGRAMS = [slsqp, trust_constr, bounded, legacy, given_derivatives]


@pytest.mark.parametrize("f", PROGRAMS)
def test_tapes_of_constrained_solutions_replay_bitwise_after_saving(f, tmp_path):
    tape = adsim.record(f, P)
    assert "adsim.constrained_solution" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), POINTS, methods=FIRST_ORDER)


@pytest.mark.parametrize("f", [slsqp, legacy])
def test_second_derivatives_of_loaded_constrained_solutions(f):
    tape = adsim.record(f, P)
    assert_same_replays(tape, copies(tape), POINTS[::2], methods=["hvp"])
    loaded = tapefile.loads(tapefile.dumps(tape))
    v = np.array([0.3, -0.7])
    hv = (loaded.gradient(P + 1e-3 * v) - loaded.gradient(P - 1e-3 * v)) / 2e-3
    np.testing.assert_allclose(loaded.gradient_and_hvp(P, v)[1], hv, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f,step,rtol", [(slsqp, 1e-5, 1e-6), (trust_constr, 1e-4, 1e-5),
                                         (bounded, 1e-2, 1e-4), (legacy, 1e-2, 1e-4),
                                         (given_derivatives, 1e-3, 1e-4)])
def test_derivatives_of_loaded_constrained_solutions_match_differences(f, step, rtol):
    """(COBYLA's solutions are good to about 1e-8: steps of 1e-2 there.)"""
    loaded = tapefile.loads(tapefile.dumps(adsim.record(f, P)))
    for p in (P, np.array([1.45, 0.75])):
        want = [(f(p + step * e) - f(p - step * e)) / (2 * step) for e in np.eye(2)]
        np.testing.assert_allclose(loaded.gradient(p), want, rtol=rtol, atol=rtol)
        assert loaded.forward(p) == pytest.approx(f(p), rel=1e-7)


def kinked(p):
    """An objective that changes its formula at z[0] = 2 (a branch on the
    unknown) under an equality constraint."""
    def objective(z):
        shift = (z[0] - p[0]) ** 2 if z[0] < 2.0 else 2.0 * (z[0] - p[0]) ** 2
        return shift + (z[1] - 1.0) ** 2
    return np.sum(so.fmin_slsqp(objective, [0.5, 0.5], eqcons=[lambda z: z[1] - 0.5 * z[0]],
                                acc=1e-14, iprint=0))


def test_a_branch_no_recorded_tape_holds_raises_branch_changed_when_loaded():
    """SLSQP's iterates stay below z[0] = 2 at the recorded point; far
    away the objective's other branch is met, which the original records
    and the loaded tape cannot."""
    tape = adsim.record(kinked, P)
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.forward(P * 1.1) == tape.forward(P * 1.1)
    assert tape.forward(P * 3.0) == pytest.approx(kinked(P * 3.0), rel=1e-7)
    with pytest.raises(adsim.BranchChanged, match="objective of scipy.optimize.fmin_slsqp.*loaded"):
        loaded.forward(P * 3.0)


def _slsqp_method(fun, x0, args=(), constraints=(), **options):
    """A custom method of minimize: SLSQP, tightly."""
    return so.minimize(fun, x0, args=args, method="SLSQP", constraints=constraints,
                       options={"ftol": 1e-14})


@pytest.mark.parametrize("solve,why", [
    (lambda p: so.minimize(lambda z: np.sum((z - p) ** 2), [0.0, 0.0], method=_slsqp_method,
                           constraints={"type": "ineq", "fun": lambda z: 1.0 - z[0]}).x,
     "method= is Python code")])
def test_constrained_solves_tape_files_cannot_hold_say_why(solve, why, tmp_path):
    tape = adsim.record(lambda p: np.sum(solve(p)), P)
    assert tape.forward(P * 1.01) == pytest.approx(np.sum(solve(P * 1.01)), rel=1e-6)
    with pytest.raises(adsim.TapeCopyError, match=why):
        tape.save(tmp_path / "solve.adtape")


def altered_file(change):
    """The file of a tape of ``slsqp`` with ``change`` applied to the
    description of its solution."""
    data = tapefile.dumps(adsim.record(slsqp, P))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.constrained_solution"]
    change(described["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


def _arguments(st):
    return st["arguments"]["dict"]


@pytest.mark.parametrize("change,message", [
    (lambda st: st.update(solver="eval"), "constrained minimisers"),
    (lambda st: _arguments(st).update(bogus=1), "arguments"),
    (lambda st: _arguments(st).update(method={"eval": 1}), "not an encoded argument"),
    (lambda st: _arguments(st).update(tol={"float": "1e400"}), "as a string"),
    (lambda st: _arguments(st).pop("x0"), "not a call adsim differentiates"),
    (lambda st: _arguments(st).update(x0={"array": [1.0, 0.5, 2.0]}), "maps"),
    (lambda st: _arguments(st)["constraints"].pop(), "functions, each with its tapes"),
    (lambda st: st.update(variants=[2, 1, 0]), "functions, each with its tapes"),
    (lambda st: st["layout"][0][0].append(True), "layout"),
    (lambda st: st["layout"].pop(), "one entry per constraint"),
    (lambda st: st.update(active=[1, 0]), "active set"),
    (lambda st: st.update(active=[0, 9]), "active set"),
    (lambda st: st.update(tolerance="small"), "tolerance"),
    (lambda st: st.update(start=[1.0]), "the start is not a list of 4"),
    (lambda st: st.update(solved_at=[1.0]), "the parameters is not"),
    (lambda st: st.update(out_shape=[3]), "multipliers"),
    (lambda st: st.update(extra=1), "fields")])
def test_altered_constrained_descriptions_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(change))


def test_a_loaded_tape_whose_active_set_changes_raises_branch_changed():
    """At p = (1.5, 3.0) the inequality of ``slsqp`` is slack: the
    original and the loaded tape both refuse the recorded KKT system there."""
    tape = adsim.record(slsqp, P)
    loaded = tapefile.loads(tapefile.dumps(tape))
    far = np.array([1.5, 3.0])
    for t in (tape, loaded):
        with pytest.raises(adsim.BranchChanged, match="active constraints"):
            t.forward(far)


def test_cobyqa_saves():
    """A projection onto a half-plane: the gradient is known exactly."""
    def f(p):
        return np.sum(so.minimize(lambda z: np.sum((z - p) ** 2), [0.0, 0.0], method="COBYQA",
                                  constraints=LinearConstraint([[1.0, 1.0]], -np.inf, 1.0),
                                  options={"final_tr_radius": 1e-12}).x * [1.0, 2.0])
    tape = adsim.record(f, P)
    assert_same_replays(tape, copies(tape), POINTS, methods=FIRST_ORDER)
    np.testing.assert_allclose(tapefile.loads(tapefile.dumps(tape)).gradient(P), [-0.5, 0.5],
                               atol=1e-8)


# ---- above 400 unknowns --------------------------------------------------------------

N_LARGE = 450
GRID = np.linspace(0.0, 1.0, N_LARGE)


def large(p):
    """minimize (SLSQP) of 450 unknowns near a curve of the parameters,
    their sum held at 1 (the equality active): beyond the size up to which
    the implicit function theorem's Jacobians are dense."""
    target = p[0] * np.sin(3.0 * GRID) + p[1]
    r = so.minimize(lambda x: 0.5 * np.sum((x - target) ** 2) + 0.1 * np.sum(x ** 4),
                    np.zeros(N_LARGE), jac=lambda x: x - target + 0.4 * x ** 3,
                    method="SLSQP",
                    constraints=[LinearConstraint(np.ones((1, N_LARGE)), 1.0, 1.0)],
                    options={"ftol": 1e-12, "maxiter": 500})
    return np.sum(r.x * GRID)


def test_a_solve_of_more_than_400_unknowns_saves_and_replays_bitwise(tmp_path):
    from fdcheck import assert_close, central
    p, q = np.array([0.8, 0.3]), np.array([0.9, 0.25])
    tape = adsim.record(large, p)
    copied = copies(tape, tmp_path)
    assert_same_replays(tape, copied, [(q,)], methods=["forward", "gradient"])
    v = np.array([0.6, -0.8])
    assert_close(copied[0].gradient(q) @ v, central(large, [q], [v], h=1e-3), 1e-5, 1e-7,
                 "loaded gradient . v")
    # second derivatives of so many unknowns, loaded or not (the adjoint
    # solve of the second-order rule is an implicit solution of its own)
    want = central(lambda z: tape.gradient(z), [q], [v], h=1e-2)     # above SLSQP's noise
    for t in (tape, copied[0]):
        g, hv = t.gradient_and_hvp(q, v)
        assert_close(hv, want, 1e-5, 1e-7 * np.max(np.abs(want)), "hvp of a large solve")


def test_the_dense_working_arrays_of_a_large_solve_count_against_the_load_bound():
    data = tapefile.dumps(adsim.record(large, np.array([0.8, 0.3])))
    need = 8 * (N_LARGE ** 2 + 2 * N_LARGE)
    with pytest.raises(adsim.TapeFileError, match=rf"working arrays .* need {need} bytes"):
        tapefile.loads(data, max_bytes=need + 2 ** 16)      # the tapes' values fit, not those
    assert tapefile.loads(data, max_bytes=need + 2 ** 24).forward(np.array([0.8, 0.3])) > 0
