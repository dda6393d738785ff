"""Solver options that depend on the parameters (``tol=1e-3 * p[1]``,
``options={"gtol": ...}``, ``xtol=`` of a bracketing root finder): they
move where SciPy stops, so a replay frozen at the recorded value would
solve to another tolerance than the program asks for at the new point, a
silently different value. An unconstrained solve gives SciPy each option
at the solve's own parameters (a parameter of the solution op whose
equations ignore it: the solution does not move with it); a constrained
one guards it (BranchChanged where it differs; the functional API
records again). Loaded tapes do the same, bitwise like the original, and
their gradients agree with central differences of the exact solution."""
import numpy as np
import pytest
import scipy.optimize as so

import adsim
from adsim import tapefile
from fdcheck import assert_close, central
from tapefile_replays import assert_same_replays, copies

P = np.array([0.5, 1.0])          # tolerances 1e-3 * p[1]: loose when recorded
Q = np.array([0.6, 1e-4])         # and tight at the replay


def _objective(z, p):
    return np.sum((z - p[0]) ** 2) + np.sum(z ** 4) + p[0] * z[0] * z[1]


def exact_minimum(p):
    """The minimiser of ``_objective`` to rounding (for the checks)."""
    plain = np.asarray(p, dtype=float)
    x = so.minimize(_objective, np.zeros(2), args=(plain,), method="BFGS", tol=1e-14).x
    return np.sum(x ** 2)


def exact_root(p):
    x = so.root(lambda z: z ** 3 + z - p[0], np.zeros(2), tol=1e-14).x
    return np.sum(x ** 2)


CASES = {
    "minimize tol": (lambda p: np.sum(so.minimize(_objective, np.zeros(2), args=(p,),
                                                  method="BFGS", tol=1e-3 * p[1]).x ** 2),
                     exact_minimum),
    "minimize options gtol": (lambda p: np.sum(so.minimize(
        _objective, np.zeros(2), args=(p,), method="BFGS",
        options={"gtol": 1e-3 * p[1]}).x ** 2), exact_minimum),
    "root tol": (lambda p: np.sum(so.root(lambda z: z ** 3 + z - p[0], np.zeros(2),
                                          tol=1e-3 * p[1]).x ** 2), exact_root),
    "brentq xtol": (lambda p: so.brentq(lambda z: z ** 3 + z - p[0], -2.0, 2.0,
                                        xtol=1e-3 * p[1]) ** 2,
                    lambda p: so.brentq(lambda z: z ** 3 + z - p[0], -2.0, 2.0,
                                        xtol=1e-15) ** 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_option_of_the_parameters_is_given_at_each_solve(name, tmp_path):
    f, exact = CASES[name]
    tape = adsim.record(f, P)
    # at Q the program asks for a tolerance of 1e-7: the replay solves to it,
    # where the recorded 1e-3 would leave an error near 1e-4
    assert tape.forward(Q) == pytest.approx(exact(Q), rel=1e-6, abs=1e-10)
    assert_same_replays(tape, copies(tape, tmp_path), [(P,), (Q,)],
                        methods=["forward", "gradient", "jvp", "vjp"])
    loaded = tapefile.load(tmp_path / "saved.adtape")
    assert_close(loaded.gradient(Q), [central(exact, [Q], [e])[()] for e in np.eye(2)],
                 1e-6, 1e-8, "loaded gradient")


def constrained(p, **options):
    cons = [{"type": "eq", "fun": lambda z: z[0] + z[1] - 1.0}]
    x = so.minimize(lambda z: _objective(z, p), np.array([0.3, 0.4]), method="SLSQP",
                    constraints=cons, **options).x
    return np.sum(x ** 2)


@pytest.mark.parametrize("options", [lambda p: {"tol": 1e-10 * p[1]},
                                     lambda p: {"options": {"ftol": 1e-10 * p[1]}}],
                         ids=["tol", "options ftol"])
def test_a_constrained_solve_guards_an_option_of_the_parameters(options):
    def f(p):
        return constrained(p, **options(p))
    tape = adsim.record(f, P)
    loaded = tapefile.loads(tapefile.dumps(tape))
    same = np.array([0.6, 1.0])               # the option's value as recorded: replays
    assert tape.forward(same) == loaded.forward(same)
    assert tape.forward(same) == pytest.approx(constrained(same, tol=1e-12), rel=1e-8)
    for t in (tape, loaded):
        with pytest.raises(adsim.BranchChanged, match="COMPARE"):
            t.forward(Q)
    g = adsim.grad(f)(Q)                       # records again, at Q's own option
    exact = lambda p: constrained(p, options={"ftol": 1e-14})
    assert_close(g, [central(exact, [Q], [e])[()] for e in np.eye(2)], 1e-6, 1e-8,
                 "gradient")
