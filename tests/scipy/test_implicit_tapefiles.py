"""Tapes of root finders and minimisers in tape files: the solution is one
op holding the recorded tapes of the equations (or the objective), on
which SciPy's solver runs after the first solve in the recording process
and in one that loaded it, from the same warm start, so saved, loaded and
unpickled tapes replay bitwise like the original (second derivatives
too), with derivatives that agree with central differences; the function
taking a branch none of its tapes holds raises BranchChanged in a loaded
tape; derivatives given as Python code are saved as tapes too (those of
x and a vector, callbacks and moving bounds:
tests/scipy/test_solver_tapefile_forms.py); a custom method and functions
that cannot be recorded are refused by name; altered descriptions raise
TapeFileError.
least_squares, leastsq and curve_fit save the tapes of their residual
vectors."""
import json

import numpy as np
import pytest
import scipy.optimize as so

import adsim
from adsim import tapefile
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

P = np.array([1.5, 0.7])
POINTS = [(P,), (P * (1 + 1e-6),), (np.array([1.3, 0.8]),)]
FIRST_ORDER = ["forward", "gradient", "jvp", "vjp"]


def equations(x, a, b):
    return [x[0] ** 3 + x[1] - a, x[1] - np.sin(x[0]) * b]


def roots(p):
    """fsolve, root (a closure), brentq, root_scalar, newton and
    fixed_point, tightly converged."""
    x = so.fsolve(equations, [1.0, 0.5], args=(p[0], p[1]), xtol=1e-13)
    y = so.root(lambda z: np.tanh(z) + z - p, [0.1, 0.2], method="lm", tol=1e-13).x
    r = so.brentq(lambda t: t ** 3 - p[0] * t - p[1], 0.5, 3.0, xtol=1e-14)
    s = so.root_scalar(lambda t: np.exp(t) - p[0] - t, bracket=[0.0, 3.0], xtol=1e-14).root
    u = so.newton(lambda t: t ** 2 - p[1], 1.0, tol=1e-14)
    w = so.fixed_point(lambda z: 0.5 * np.cos(z) * p[1] + 0.1 * p[0], [0.3, 0.4], xtol=1e-14)
    return np.sum(x ** 2) + np.sum(y) + r + 2.0 * s + u + w @ [1.0, -2.0]


def minima(p):
    """minimize, minimize_scalar and fmin (their gradients by differences:
    minima to about 1e-8)."""
    m = so.minimize(lambda z: (z[0] - p[0]) ** 2 + np.cosh(z[1] * p[1]) + z[0] ** 4,
                    [0.1, 0.2], method="BFGS", options={"gtol": 1e-11}).x
    q = so.minimize_scalar(lambda t: (t - p[1]) ** 2 + t ** 4, method="brent",
                           options={"xtol": 1e-12}).x
    v = so.fmin(lambda z: np.sum((z - p) ** 2) + z[0] ** 4, [0.0, 0.0], xtol=1e-12,
                ftol=1e-14, disp=False)
    return np.sum(m) + q + np.sum(v * v)


def program(p):
    return roots(p) + minima(p)


def test_tapes_of_solutions_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(program, P)
    assert "adsim.implicit_solution" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), POINTS, methods=FIRST_ORDER)


@pytest.mark.parametrize("f,step,rtol", [(roots, 1e-5, 1e-7), (minima, 1e-3, 1e-4)])
def test_derivatives_of_loaded_solutions_match_differences(f, step, rtol):
    loaded = tapefile.loads(tapefile.dumps(adsim.record(f, P)))
    for p in (P, np.array([1.3, 0.8])):
        want = [(f(p + step * e) - f(p - step * e)) / (2 * step) for e in np.eye(2)]
        np.testing.assert_allclose(loaded.gradient(p), want, rtol=rtol, atol=rtol)
        assert loaded.forward(p) == pytest.approx(f(p), rel=1e-7)


def test_second_derivatives_of_loaded_solutions():
    """The recorded adjoint rule of a loaded solve differentiates its
    function's tapes, their ops recorded again: Hessian-vector products and
    a gradient inside the recorded function replay like the original's and
    agree with differences of the gradient."""
    tape = adsim.record(program, P)
    assert_same_replays(tape, copies(tape), POINTS[::2], methods=["hvp"])
    loaded = tapefile.loads(tapefile.dumps(adsim.record(roots, P)))
    v = np.array([0.3, -0.7])
    hv = (loaded.gradient(P + 1e-5 * v) - loaded.gradient(P - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(loaded.gradient_and_hvp(P, v)[1], hv, rtol=1e-6, atol=1e-8)

    def steepness(p):                   # a gradient taken inside the recording
        return np.sum(adsim.grad(roots)(p) ** 2)
    tape = adsim.record(steepness, P)
    assert_same_replays(tape, copies(tape), POINTS[::2], methods=FIRST_ORDER)


T = np.linspace(0.0, 1.0, 6)


def fits(p):
    """least_squares, leastsq and curve_fit (with bounds, one infinite),
    tightly converged: SciPy runs on the tapes of their residual vectors."""
    a = so.least_squares(lambda z: z[0] * np.exp(-z[1] * T) - p[0] * np.exp(-p[1] * T)
                         - 0.01 * T ** 2, [1.0, 1.0], xtol=1e-15, ftol=1e-15, gtol=1e-15).x
    b = so.leastsq(lambda z, q: np.array([z[0] ** 2 - q[0], z[0] * z[1] - q[1], z[1] - 0.1]),
                   [1.0, 1.0], args=(p,), xtol=1e-14, ftol=1e-14)[0]
    popt, pcov = so.curve_fit(lambda t, c, d: c * np.exp(-d * t), T,
                              p[0] * np.exp(-p[1] * T) + 0.01 * np.sin(7.0 * T), p0=[1.0, 1.0],
                              bounds=([0.0, 0.0], [np.inf, 5.0]), xtol=1e-15, ftol=1e-15,
                              gtol=1e-15)
    return np.sum(a ** 2) + b @ [1.0, 3.0] + popt @ [1.0, 2.0] + np.sum(pcov)


def test_least_squares_solutions_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(fits, P)
    assert "adsim.implicit_solution" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), POINTS, methods=FIRST_ORDER + ["hvp"])
    loaded = tapefile.loads(tapefile.dumps(tape))
    step = 1e-3                  # the fits are good to about 1e-9
    for p in (P, np.array([1.3, 0.8])):
        want = [(fits(p + step * e) - fits(p - step * e)) / (2 * step) for e in np.eye(2)]
        np.testing.assert_allclose(loaded.gradient(p), want, rtol=1e-5)
        assert loaded.forward(p) == pytest.approx(fits(p), rel=1e-8)


def given_derivatives(p):
    """Solves given their derivatives as Python code (jac=, fprime=, hess=,
    Dfun=, a curve_fit jac=, a function returning its value and derivative
    with jac=True), reading the parameters through args and closures: SciPy
    runs on the tapes of the function and of each derivative."""
    def objective(z):
        return np.sum((z - p) ** 2) + z[0] ** 4 + np.cosh(z[1])

    def gradient(z):
        return 2.0 * (z - p) + np.array([4.0 * z[0] ** 3, np.sinh(z[1])])

    def hessian(z):
        return np.diag([2.0 + 12.0 * z[0] ** 2, 2.0 + np.cosh(z[1])])
    m = so.minimize(objective, [0.1, 0.2], jac=gradient, method="BFGS",
                    options={"gtol": 1e-10}).x
    e = so.minimize(objective, [0.1, 0.2], jac=gradient, hess=hessian, method="Newton-CG",
                    options={"xtol": 1e-12}).x
    r = so.fsolve(equations, [1.0, 0.5], args=(p[0], p[1]), xtol=1e-13,
                  fprime=lambda x, a, b: [[3.0 * x[0] ** 2, 1.0], [-np.cos(x[0]) * b, 1.0]])
    u = so.newton(lambda t: t ** 2 - p[1], 1.0, fprime=lambda t: 2.0 * t, tol=1e-14)
    s = so.root(lambda z: np.tanh(z) + z - p, [0.1, 0.2], tol=1e-13,
                jac=lambda z: np.diag(2.0 - np.tanh(z) ** 2)).x
    b = so.leastsq(lambda z, q: np.array([z[0] ** 2 - q[0], z[0] * z[1] - q[1], z[1] - 0.1]),
                   [1.0, 1.0], args=(p,), xtol=1e-14, ftol=1e-14,
                   Dfun=lambda z, q: np.array([[2.0 * z[0], 0.0], [z[1], z[0]], [0.0, 1.0]]))[0]
    popt, _ = so.curve_fit(lambda t, c, d: c * np.exp(-d * t), T,
                           p[0] * np.exp(-p[1] * T) + 0.01 * np.sin(7.0 * T), p0=[1.0, 1.0],
                           jac=lambda t, c, d: np.stack([np.exp(-d * t),
                                                         -c * t * np.exp(-d * t)], 1),
                           xtol=1e-15, ftol=1e-15, gtol=1e-15)
    paired = so.minimize(lambda z: (objective(z), gradient(z)), [0.1, 0.2], jac=True,
                         method="BFGS", options={"gtol": 1e-10}).x
    q = so.root(lambda z: (np.tanh(z) + z - p, np.diag(2.0 - np.tanh(z) ** 2)), [0.1, 0.2],
                jac=True, tol=1e-13).x
    return (np.sum(m ** 2) + e @ [1.0, -1.0] + np.sum(r ** 2) + u + s @ [2.0, 1.0]
            + b @ [1.0, 3.0] + popt @ [1.0, 2.0] + paired @ [0.5, 1.5] + q @ [1.0, -2.0])


def test_solves_given_python_derivatives_save_their_tapes(tmp_path):
    tape = adsim.record(given_derivatives, P)
    assert "adsim.implicit_solution" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), POINTS, methods=FIRST_ORDER + ["hvp"])
    loaded = tapefile.loads(tapefile.dumps(tape))
    step = 1e-4
    for p in (P, np.array([1.3, 0.8])):
        want = [(given_derivatives(p + step * e) - given_derivatives(p - step * e)) / (2 * step)
                for e in np.eye(2)]
        np.testing.assert_allclose(loaded.gradient(p), want, rtol=1e-5)
        assert loaded.forward(p) == pytest.approx(given_derivatives(p), rel=1e-8)


def test_a_loaded_solve_runs_on_its_derivatives_tapes():
    """The loaded fsolve calls the tape of its fprime: a file whose
    derivative's tapes are listed under another name, or cut short, is
    refused."""
    def f(p):
        return np.sum(so.fsolve(equations, [1.0, 0.5], args=(p[0], p[1]), xtol=1e-13,
                                fprime=lambda x, a, b: [[3.0 * x[0] ** 2, 1.0],
                                                        [-np.cos(x[0]) * b, 1.0]]))
    data = tapefile.dumps(adsim.record(f, P))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.implicit_solution"]
    assert described["state"]["derivatives"] == [["fprime", 1]]
    for listed in ([["jac", 1]], [["fprime", 2]], [["fprime", 0]], "fprime"):
        described["state"]["derivatives"] = listed
        with pytest.raises(adsim.TapeFileError, match="derivatives of fsolve"):
            tapefile.loads(replace_section(data, "CALL", json.dumps(calls).encode()))


def discretised(p):
    """fsolve of a 450-unknown Bratu problem: above 400 unknowns, the
    derivatives come from a sparse Jacobian (a coloring plan), which a
    loaded solve records from its tapes."""
    n = 450
    h = 1.0 / (n + 1)

    def bratu(u, lam):
        up, um = np.concatenate([u[1:], [0.0]]), np.concatenate([[0.0], u[:-1]])
        return (up - 2.0 * u + um) / h ** 2 + lam * np.exp(u)
    u = so.fsolve(bratu, np.zeros(n), args=(p[0],), xtol=1e-12)
    return np.sum(u ** 2) + p[1] * u[0]


def test_solves_of_more_than_400_unknowns_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(discretised, P)
    assert_same_replays(tape, copies(tape, tmp_path), POINTS[::2], methods=["forward", "gradient"])
    loaded = tapefile.loads(tapefile.dumps(tape))
    step = 1e-4
    want = [(discretised(P + step * e) - discretised(P - step * e)) / (2 * step)
            for e in np.eye(2)]
    np.testing.assert_allclose(loaded.gradient(P), want, rtol=1e-6, atol=1e-6)
    v = np.array([1.0, 0.0])
    want = (loaded.gradient(P + step * v) - loaded.gradient(P - step * v)) / (2 * step)
    np.testing.assert_allclose(loaded.hvp(P, v), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loaded.hvp(P, v), tape.hvp(P, v), rtol=1e-10)


def test_altered_residual_tapes_are_refused():
    """A least-squares solve's tapes are of a vector of residuals."""
    data = tapefile.dumps(adsim.record(
        lambda p: np.sum(so.least_squares(lambda z: z - p, [0.0, 0.0]).x), P))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.implicit_solution"]
    described["state"]["solver"] = "minimize"
    with pytest.raises(adsim.TapeFileError, match=r"function's output \(\)"):
        tapefile.loads(replace_section(data, "CALL", json.dumps(calls).encode()))


def bent(t, p):
    """A line that bends at t = 5 (a branch on the unknown)."""
    if t < 5.0:
        return t - p[0]
    return 2.0 * t - 5.0 - p[0]


def test_the_branches_at_a_bracket_s_ends_are_recorded():
    """brentq evaluates the bracket's ends at every solve: the recording
    records the function there too, so a loaded tape knows the branch past
    the bend though the solution (t = p[0] = 1.5) lies before it."""
    def f(p):
        return so.brentq(bent, 0.0, 10.0, args=(p,), xtol=1e-14)
    tape = adsim.record(f, P)
    loaded = tapefile.loads(tapefile.dumps(tape))
    for p in (P * 1.1, P * 2.0, P * 4.0):          # the last solution past the bend: 5.5
        assert loaded.forward(p) == tape.forward(p)
        assert loaded.gradient(p).tobytes() == tape.gradient(p).tobytes()
    assert tape.forward(P * 4.0) == pytest.approx(5.5, rel=1e-12)


def test_a_branch_no_recorded_tape_holds_raises_branch_changed_when_loaded():
    """fsolve's iterates stay near the solution: the recording meets the
    line before the bend only; a replay whose solution lies past it meets
    the other branch, which the original records and the loaded tape
    cannot."""
    def f(p):
        return so.fsolve(lambda z: [bent(z[0], p)], [1.0], xtol=1e-13)[0]
    tape = adsim.record(f, P)
    loaded = tapefile.loads(tapefile.dumps(tape))
    assert loaded.forward(P * 1.1) == tape.forward(P * 1.1)
    assert tape.forward(P * 10.0) == pytest.approx(10.0, rel=1e-12)
    with pytest.raises(adsim.BranchChanged, match="scipy.optimize.fsolve.*loaded from a tape"):
        loaded.forward(P * 10.0)


@pytest.mark.parametrize("solve,why", [
    (lambda p: so.brentq(lambda t, a: np.exp(float(t)) - a, -2.0, 2.0, args=(p[0],)),
     "its function could not be recorded: ActiveValueLeak"),
    (lambda p: so.minimize(lambda z: np.sum((z - p) ** 2), [0.0, 0.0],
                           method=lambda fun, x0, args=(), **kw: so.minimize(fun, x0, args)).x,
     "method= is Python code"),
    (lambda p: so.minimize(lambda z: np.sum((z - p) ** 2), [0.0, 0.0],
                           jac=lambda z: 2.0 * (z - p) + 0.0 * float(z[0])).x,
     "its jac= could not be recorded")])
def test_solves_tape_files_cannot_hold_say_why(solve, why, tmp_path):
    tape = adsim.record(lambda p: np.sum(solve(p)), P)
    assert tape.forward(P * 1.1) == pytest.approx(np.sum(solve(P * 1.1)), rel=1e-6)
    with pytest.raises(adsim.TapeCopyError, match=why):
        tape.save(tmp_path / "solve.adtape")


def fsolved(p):
    return np.sum(so.fsolve(equations, [1.0, 0.5], args=(p[0], p[1])) ** 2)


def altered_file(change):
    """The file of a tape of ``fsolved`` with ``change`` applied to the
    description of its solution."""
    data = tapefile.dumps(adsim.record(fsolved, P))
    _, count, at = section(data, "CALL")
    calls = json.loads(data[at:at + count])
    (described,) = [c for c in calls if c["kind"] == "adsim.implicit_solution"]
    change(described["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("change,message", [
    (lambda st: st.update(solver="eval"), "one of adsim's solvers"),
    (lambda st: st.update(solver="minimize"), r"the function.s output \(\)"),
    (lambda st: st["arguments"].update(func=1), "arguments"),
    (lambda st: st["arguments"].update(bogus=1), "arguments"),
    (lambda st: st["arguments"].pop("x0"), "not a call adsim differentiates"),
    (lambda st: st["arguments"].update(x0=[1.0, 0.5, 2.0]), "unknowns"),
    (lambda st: st.update(start=[1.0]), "the start is not a list of 2"),
    (lambda st: st.update(first=["a", "b"]), "the first is not"),
    (lambda st: st.update(solved_at=[1.0]), "the parameters is not"),
    (lambda st: st["in_shapes"].pop(), "a tape of the function"),
    (lambda st: st.update(out_shape=[3]), "unknowns"),
    (lambda st: st.update(arguments={"encoded": [1.0]}), "arguments are a dict"),
    (lambda st: st.update(arguments={"encoded": {"eval": 1}}), "not an encoded argument"),
    (lambda st: st.update(extra=1), "fields")])
def test_altered_solution_descriptions_are_refused(change, message):
    with pytest.raises(adsim.TapeFileError, match=message):
        tapefile.loads(altered_file(change))


def test_arguments_plain_json_cannot_hold_are_written_marked():
    """least_squares with a half-infinite bound and a Bounds object, and
    root_scalar with an array bracket: the arguments are written in the
    marked form (an infinite limit, a Bounds) and come back as they were."""
    def f(p):
        a = so.least_squares(lambda z: z - p, [0.5, 0.5], bounds=(0.0, np.inf)).x
        b = so.least_squares(lambda z: z * z - p, [0.5, 0.5],
                             bounds=so.Bounds([0.0, 0.0], [np.inf, 10.0]), xtol=1e-15).x
        c = so.root_scalar(lambda t: t ** 3 - p[0], bracket=np.array([0.0, 3.0]),
                           xtol=1e-14).root
        return np.sum(a) + b @ [1.0, 2.0] + c
    tape = adsim.record(f, P)
    assert_same_replays(tape, copies(tape), POINTS, methods=FIRST_ORDER)
    want = [1.0 + 0.5 / np.sqrt(P[0]) + P[0] ** (-2 / 3) / 3, 1.0 + 1.0 / np.sqrt(P[1])]
    np.testing.assert_allclose(tapefile.loads(tapefile.dumps(tape)).gradient(P), want,
                               rtol=1e-7)
