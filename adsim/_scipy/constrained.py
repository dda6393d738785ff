"""Constrained minimisers differentiated through their solutions: the KKT
conditions (``minimize`` with ``constraints=`` or ``bounds=``,
``fmin_slsqp``, ``fmin_cobyla``, and ``linprog``, adsim/_scipy/linprog.py).

Every constraint is written as components of one vector ``g(x, p)``, each
either an equality ``g_j = 0`` or an inequality ``g_j >= 0``: a dict
constraint as it is, a ``NonlinearConstraint`` or ``LinearConstraint``
``lb <= c(x) <= ub`` as ``c - lb = 0`` where ``lb == ub``, else ``c - lb >=
0`` and ``ub - c >= 0`` for each finite side, bounds the same way with
``c(x) = x``. At SciPy's solution ``x*`` the active set ``A`` holds the
equalities and the inequalities with ``g_j <= ACTIVE_TOL (1 + |g_j's
limit|)``; the others drop out. The multipliers solve ``grad f = J_A^T mu``
in the least-squares sense, and with ``z = (x, mu)`` the KKT conditions are
the stationarity of the Lagrangian::

    L(z, p) = f(x, p) - mu . g_A(x, p),   grad_z L = (grad f - J_A^T mu, -g_A) = 0,

so ``z*(p)`` is differentiated as a minimiser's first-order conditions are
(adsim/_scipy/implicit.py, :class:`Stationarity`): ``F_z`` is the KKT
matrix ``[[H_L, -J_A^T], [-J_A, 0]]``, nonsingular where the active
gradients are independent and the reduced Hessian is nonsingular.

Refused, with adsim errors: an active inequality whose multiplier is zero
(not strictly complementary: the derivative jumps there), more active
constraints than unknowns, a negative multiplier of an inequality or a
stationarity residual above ``KKT_RTOL`` (not a KKT point: the solver did
not converge), a violated constraint. A replay where the active set
differs from the recording's raises BranchChanged (the functional API
records again).

The parameters are found as for the unconstrained solvers
(adsim/_scipy/solver_calls.py): in ``args`` and each constraint's ``args``,
in the closures of every function given (objective, ``jac``, ``hess``,
constraint functions and their Jacobians), and in the limits (``lb``,
``ub``, bounds) and a ``LinearConstraint``'s matrix, which may be active
arrays themselves.
"""
import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint

from .._active import Active
from .._containers.container_args import gathered_inputs
from .._nesting.outer_values import PlainReads
from .._nesting.nested import reads_recorded_values
from .._np.core import active_leaves, compare
from .._opcodes import CompareKind
from ..errors import BranchChanged, InvalidArgumentValue, SolverNotConverged, UndefinedDerivative
from .callbacks import CallbackWatch
from .constrained_file import saved_constrained
from .constrained_problem import ACTIVE_TOL, Piece, Problem, describe_bounds, describe_constraint
from .implicit import Stationarity, _Recorded
from .linprog import linprog_problem
from .multipliers import slsqp_multipliers, trust_constr_multipliers
from .solution_op import ImplicitSolution
from .solver_calls import (not_converged, _as_array, _bound_to, _Leak, _with_x, plain_value, with_fun,
                           with_value_second)

__all__ = ["ACTIVE_TOL", "KKT_RTOL", "CONSTRAINED", "constrained_call", "reads_active"]

MULTIPLIER_TOL = 1e-6
"""Relative size below which an active inequality's multiplier counts as zero."""

KKT_RTOL = 1e-4
"""Relative stationarity residual above which SciPy's point is not a KKT point."""

# methods honouring constraints and bounds (SciPy ignores them elsewhere, with a warning)
_WITH_CONSTRAINTS = ("cobyla", "cobyqa", "slsqp", "trust-constr")
_WITH_BOUNDS = _WITH_CONSTRAINTS + ("nelder-mead", "powell", "l-bfgs-b", "tnc")


def _method(a):
    method = a.get("method")
    if method is None:
        return "slsqp" if a.get("constraints") else ("l-bfgs-b" if a.get("bounds") is not None
                                                      else "bfgs")
    return "_custom" if callable(method) else method.lower()


def _honoured(a):
    """(constraints, bounds) of a ``minimize`` call that its method uses."""
    method = _method(a)
    constraints = a.get("constraints") or ()
    if isinstance(constraints, (dict, NonlinearConstraint, LinearConstraint)):
        constraints = [constraints]
    constraints = list(constraints) if method in _WITH_CONSTRAINTS + ("_custom",) else []
    bounds = a.get("bounds") if method in _WITH_BOUNDS + ("_custom",) else None
    return constraints, bounds


# ---- the solvers -----------------------------------------------------------------

def _minimize(a, original):
    problem = Problem(a["fun"], a.get("args", ()), a.get("jac") is True)
    for name in ("jac", "hess", "hessp"):
        if callable(a.get(name)):
            problem.hooks[name] = problem.function(a[name], 0, f"{name}=")
    if "hessp" in problem.hooks:
        problem.with_vector[problem.hooks["hessp"]] = None
    constraints, bounds = _honoured(a)
    problem.pieces = [describe_constraint(problem, c) for c in constraints]
    bound_piece = describe_bounds(problem, bounds) if bounds is not None else None
    if bound_piece is not None:
        problem.pieces.append(bound_piece)
    given_constraints = problem.pieces[:len(constraints)]
    # violations the derivative-free methods accept: COBYLA's catol, COBYQA's feasibility_tol
    accepted = {"cobyla": ("catol", 2e-4), "cobyqa": ("feasibility_tol", 0.0)}.get(_method(a))
    if accepted is not None:
        problem.tolerance = max(ACTIVE_TOL, (a.get("options") or {}).get(*accepted))

    x_shape = (int(np.size(plain_value(a["x0"]))),)

    def run(bound, plain, x_start):
        call = {k: plain_value(v) for k, v in a.items()
                if k not in ("fun", "args", "constraints", "bounds")
                and not (k in problem.hooks)}
        call.update({name: bound[i] for name, i in problem.hooks.items()})
        call.update(fun=bound[problem.fun], x0=np.reshape(x_start, x_shape), args=())
        if "constraints" in a:
            call["constraints"] = [p.given(bound, plain) for p in given_constraints] \
                if constraints else a["constraints"]
        if "bounds" in a:
            call["bounds"] = bound_piece.given(bound, plain) if bound_piece else \
                plain_value(a["bounds"])
        stops = CallbackWatch("minimize")
        if "callback" in call:
            call["callback"] = stops.watched(call["callback"])
        res = stops.run(lambda: original(**call))
        if "barrier_parameter" in res:   # trust-constr: inequalities keep a slack of about it
            problem.tolerance = max(ACTIVE_TOL, 10.0 * res.barrier_parameter)
        return res, res.x, bool(res.success), res.message
    return problem, run, _with_x, x_shape


def _fmin_slsqp(a, original):
    from scipy.optimize._slsqp_py import _minimize_slsqp
    problem = Problem(a["func"], a.get("args", ()), False)
    if callable(a.get("fprime")):
        problem.hooks["jac"] = problem.function(a["fprime"], 0, "fprime=")
    kinds = [("eq", f) for f in a.get("eqcons", ())] + [("ineq", f) for f in a.get("ieqcons", ())]
    if a.get("f_eqcons"):
        kinds.append(("eq", a["f_eqcons"], a.get("fprime_eqcons")))
    if a.get("f_ieqcons"):
        kinds.append(("ineq", a["f_ieqcons"], a.get("fprime_ieqcons")))
    for kind, fun, *jac in kinds:                    # sharing the objective's args
        index = problem.function(fun, 0)
        jac = problem.function(jac[0], 0, "a constraint's Jacobian") \
            if jac and callable(jac[0]) else None
        problem.pieces.append(Piece(fun=index, lb=problem.datum(0.0),
                                     ub=problem.datum(0.0 if kind == "eq" else np.inf),
                                     given=_slsqp_dict(kind, index, jac)))
    n_constraints = len(problem.pieces)
    x_shape = (int(np.size(plain_value(a["x0"]))),)
    bounds = a.get("bounds", ())
    if bounds is not None and len(bounds):
        problem.pieces.append(describe_bounds(problem, bounds))

    def run(bound, plain, x_start):
        cons = tuple(p.given(bound, plain) for p in problem.pieces[:n_constraints])
        bounds_given = problem.pieces[-1].given(bound, plain) \
            if len(problem.pieces) > n_constraints else bounds
        stops = CallbackWatch("fmin_slsqp")
        res = stops.run(lambda: _minimize_slsqp(
            bound[problem.fun], np.reshape(x_start, x_shape), (),
            jac=bound[problem.hooks["jac"]] if "jac" in problem.hooks else None,
            bounds=bounds_given, constraints=cons, maxiter=a.get("iter", 100),
            ftol=a.get("acc", 1e-6), iprint=a.get("iprint", 1),
            disp=a.get("iprint", 1) != 0, eps=a.get("epsilon", 1.4901161193847656e-08),
            callback=stops.watched(a.get("callback"))))
        return res, res.x, bool(res.success), res.message

    def answer(res, x):
        if a.get("full_output"):
            return x, res["fun"], res["nit"], res["status"], res["message"]
        return x
    return problem, run, answer, x_shape


def _slsqp_dict(kind, fun, jac):
    def given(bound, plain):
        out = {"type": kind, "fun": bound[fun], "args": ()}
        if jac is not None:
            out["jac"] = bound[jac]
        return out
    return given


def _fmin_cobyla(a, original):
    from scipy.optimize._cobyla_py import _minimize_cobyla
    problem = Problem(a["func"], a.get("args", ()), False)
    problem.tolerance = max(ACTIVE_TOL, a.get("catol", 2e-4))   # violations COBYLA accepts
    cons = a["cons"]
    cons = [cons] if callable(cons) else list(cons)
    consargs = a.get("consargs")
    group = 0 if consargs is None else problem.group(consargs)
    x_shape = (int(np.size(plain_value(a["x0"]))),)
    for con in cons:
        index = problem.function(con, group)
        problem.pieces.append(Piece(
            fun=index, lb=problem.datum(0.0), ub=problem.datum(np.inf),
            given=lambda bound, plain, index=index: NonlinearConstraint(bound[index], 0, np.inf)))

    def run(bound, plain, x_start):
        stops = CallbackWatch("fmin_cobyla")
        res = stops.run(lambda: _minimize_cobyla(
            bound[problem.fun], np.reshape(x_start, x_shape), (),
            constraints=[p.given(bound, plain) for p in problem.pieces],
            rhobeg=a.get("rhobeg", 1.0), tol=a.get("rhoend", 1e-4), disp=a.get("disp"),
            maxiter=a.get("maxfun", 1000), catol=a.get("catol", 2e-4),
            callback=stops.watched(a.get("callback"))))
        if a.get("disp") and not res["success"]:
            print(f"COBYLA failed to find a solution: {res.message}")
        return res, res.x, bool(res.success), res.message
    return problem, run, lambda res, x: x, x_shape


CONSTRAINED = {"minimize": _minimize, "fmin_slsqp": _fmin_slsqp, "fmin_cobyla": _fmin_cobyla,
               "linprog": linprog_problem}
"""Solvers differentiated through the KKT conditions: name -> description of a call."""


def applies(solver, a):
    """Whether a call of ``solver`` goes through the KKT conditions
    (``minimize``: when its method uses constraints or bounds)."""
    if solver != "minimize":
        return solver in CONSTRAINED
    constraints, bounds = _honoured(a)
    return bool(constraints) or bounds is not None


def reads_active(solver, a):
    """Whether the constraints or bounds of a call read active values of a
    recording in progress (their functions' closures, their args, their
    limits)."""
    if solver not in CONSTRAINED:
        return False
    if solver == "minimize":
        constraints, bounds = _honoured(a)
        values = [vars(bounds) if isinstance(bounds, Bounds) else bounds] + \
            [vars(c) if not isinstance(c, dict) else c for c in constraints]
    elif solver == "linprog":
        values = [a.get(k) for k in ("c", "A_ub", "b_ub", "A_eq", "b_eq", "bounds")]
    else:
        values = [a.get(k) for k in ("eqcons", "ieqcons", "f_eqcons", "f_ieqcons", "bounds",
                                     "fprime_eqcons", "fprime_ieqcons", "cons", "consargs")]
    found = []

    def walk(v, depth):
        if isinstance(v, Active):
            found.append(v)
        elif callable(v) and not isinstance(v, type):
            if reads_recorded_values(v):
                found.append(v)
        elif depth < 3 and isinstance(v, (list, tuple)):
            for item in v:
                walk(item, depth + 1)
        elif depth < 3 and isinstance(v, dict):
            for item in v.values():
                walk(item, depth + 1)
    walk(values, 0)
    return bool(found)


# ---- the call ----------------------------------------------------------------------

class KKT:
    """One call's solve as a function of the plain parameters ``values``,
    through its functions wherever they come from: ``evaluate(i, x,
    values)`` (function ``i`` of the problem at the flat ``x``, on plain or
    active arrays), ``bound(values)`` (the functions of ``x`` alone SciPy is
    given, by index) and ``data(values)`` (the limits and matrices as SciPy
    holds them). In the recording process they are the program's functions
    until the first solution, then (when a tape file can hold the call) the
    recorded tapes of each (adsim/_scipy/constrained_file.py), as in a
    process that loaded it. ``active``: the active set of the first
    solution, with which ``system()`` is the Lagrangian's stationarity."""

    def __init__(self, solver, problem, run, x_shape, evaluate, bound, data):
        self.solver, self.problem, self.run, self.x_shape = solver, problem, run, x_shape
        self.n = int(np.prod(x_shape))
        self.evaluate, self.bound, self.data = evaluate, bound, data
        self.active = None
        self.raw = None                 # SciPy's answer at the first solve
        self.solution = None
        self.first_order = None         # the tapes of (f, g), for the multipliers
        self.after_solve = None         # (x, values) -> None, once SciPy returned

    def f(self, x, *values):
        out = self.evaluate(self.problem.fun, x, values)
        out = out[0] if self.problem.first_of else out
        if np.size(out) != 1:
            raise InvalidArgumentValue(
                f"adsim: the objective minimised by {self.solver} returned {np.size(out)} "
                f"numbers; it must return one")
        return np.reshape(_as_array(out), ())

    def constraint_values(self, x, *values):
        """Each piece's ``(c(x), lb, ub)``, flat."""
        data = self.data(values)
        out = []
        for piece in self.problem.pieces:
            if piece.fun is not None:
                c = _as_array(self.evaluate(piece.fun, x, values))
            elif piece.matrix is not None:
                c = data[piece.matrix] @ np.reshape(x, (-1,))
            else:
                c = x
            c = np.reshape(c, (-1,))
            out.append((c, np.broadcast_to(data[piece.lb], c.shape),
                        np.broadcast_to(data[piece.ub], c.shape)))
        return out

    def g(self, x, *values):
        """The canonical constraint vector (equalities, then inequalities >= 0
        as laid out at the first solution)."""
        parts = []
        for piece, (c, lb, ub) in zip(self.problem.pieces, self.constraint_values(x, *values)):
            equal, lower, upper = piece.layout
            parts += [c[equal] - lb[equal], c[lower] - lb[lower], ub[upper] - c[upper]]
        return np.concatenate(parts) if parts else np.zeros(0)

    def lagrangian(self, z, *values):
        n = self.n
        return self.f(z[:n], *values) - np.dot(z[n:], self.g(z[:n], *values)[self.active])

    def system(self):
        return Stationarity(self.lagrangian, self.n + self.active.size, self.solver)

    def solve(self, z_start, values):
        solver = self.solver
        leak = _Leak(solver)
        bound = [leak.watched(b) for b in self.bound(values)]
        plain = list(self.data(values))
        raw, x, converged, why = leak.run(lambda: self.run(bound, plain, z_start[:self.n]))
        if not converged:
            raise not_converged(solver, why, "a tighter tolerance")
        x = np.asarray(x, dtype=float).reshape(-1)
        if self.after_solve is not None:
            self.after_solve(x, values)
        active, mu = _active_set(self, x, values)
        if self.active is None:
            self.active, self.raw = active, raw
            self.solution.system = self.system()
        elif not np.array_equal(active, self.active):
            raise BranchChanged(
                f"adsim: the active constraints of scipy.optimize.{solver} at these parameters "
                f"differ from those of the recording, so the recorded derivative (through the "
                f"KKT conditions of the recorded active set) does not hold here; record again "
                f"(the functional API does so itself)")
        return np.concatenate([x, mu])


def constrained_call(solver, original, arguments):
    """``original`` (SciPy's solver) called with ``arguments`` (bound, ``**kw``
    spread), its solution active through the KKT conditions."""
    arguments = _options_as_recorded(solver, arguments)
    problem, run, answer, x_shape = CONSTRAINED[solver](arguments, original)
    functions, every = problem.arrange()
    reads = PlainReads(functions)       # as in solver_calls.differentiated_solve
    functions, every = gathered_inputs([reads.frozen(f) for f in functions], every)
    positions = [i for i, v in enumerate(every) if isinstance(v, Active)]
    start = arguments.get("x0")          # (linprog's is optional)
    x0 = np.zeros(x_shape) if start is None else start
    x0 = np.asarray(plain_value(x0), dtype=float).reshape(-1)

    def full(values):
        out = list(every)
        for i, v in zip(positions, values):
            out[i] = v[()] if type(v) is np.ndarray and v.ndim == 0 else v
        for i in range(len(problem.data)):        # limits as SciPy would hold them
            if not isinstance(out[i], Active) and not sp.issparse(out[i]):
                out[i] = np.asarray(plain_value(out[i]), dtype=float)
        return tuple(out)

    def python(i, x, values, vector=()):
        return functions[i](np.reshape(x, x_shape), *vector, *full(values))

    saved = saved_constrained(solver, arguments, problem, positions, python, x0.size)

    def evaluate(i, x, values):
        return saved.evaluate(i, x, values) if saved.taped else python(i, x, values)

    def bound(values):
        if saved.taped:            # SciPy runs on the tapes after the first solution
            return saved.bound(values)
        args = full(values)
        return [_bound_to(fn, args) for fn in functions]

    kkt = KKT(solver, problem, run, x_shape, evaluate, bound,
              lambda values: full(values)[:len(problem.data)])
    kkt.after_solve = saved.record
    solution = ImplicitSolution(Stationarity(kkt.f, kkt.n, solver), kkt.solve, x0)
    kkt.solution = solution
    solution.saved = saved
    saved.kkt = kkt
    params = [every[i] for i in positions]
    z = solution(params)
    reads.hold()
    out = answer(kkt.raw, z[:kkt.n].reshape(x_shape))

    def at(x, *values):                # the objective with the parameters as arguments
        out = python(problem.fun, np.reshape(x, (-1,)), values)
        return np.reshape(_as_array(out[0] if problem.first_of else out), ())
    if isinstance(out, dict):          # an OptimizeResult: fun and jac
        if "multipliers" in out:       # SLSQP's
            out["multipliers"] = slsqp_multipliers(kkt, z[kkt.n:], out["multipliers"])
        if isinstance(out.get("v"), list):     # trust-constr's
            out["v"] = trust_constr_multipliers(kkt, z[kkt.n:], out["v"])
        return with_fun(out, at, params)
    return with_value_second(out, at, params) if isinstance(out, tuple) else out


# a call's settings of where the solver stops (not limits or functions)
_OPTIONS = {"minimize": ("tol", "options"), "fmin_slsqp": ("acc", "iter", "epsilon"),
            "fmin_cobyla": ("rhobeg", "rhoend", "maxfun", "catol"), "linprog": ("options",)}


def _options_as_recorded(solver, arguments):
    """``arguments`` with the solver's options that read active values
    (``tol=1e-8 * p[1]``, ``options={"ftol": ...}``) at their recorded
    values, each guarded: they move where SciPy stops, so a replay (or a
    loaded tape) where one differs raises BranchChanged (the functional API
    records again) rather than solve to the recorded tolerance."""
    out = dict(arguments)
    for key in _OPTIONS[solver]:
        if key in out and active_leaves(out[key]):
            out[key] = _guarded(out[key])
    return out


def _guarded(v):
    if isinstance(v, Active):
        value = plain_value(v)
        compare(CompareKind.CMP_EQ, v, value)
        return value[()] if value.ndim == 0 else value
    if isinstance(v, dict):
        return {k: _guarded(item) for k, item in v.items()}
    if type(v) in (list, tuple):
        return type(v)(_guarded(item) for item in v)
    return v


def _active_set(kkt, x, values):
    """The active components of ``g`` at the solution ``x`` and their
    multipliers; refuses a point the derivative does not hold at."""
    solver, problem = kkt.solver, kkt.problem
    pieces = kkt.constraint_values(x, *values)
    if kkt.active is None:                 # the layout, from the recorded solution
        for piece, (c, lb, ub) in zip(problem.pieces, pieces):
            lb, ub = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
            equal = lb == ub
            piece.layout = (equal, np.isfinite(lb) & ~equal, np.isfinite(ub) & ~equal)
    slack, limit, equality = [], [], []
    for piece, (c, lb, ub) in zip(problem.pieces, pieces):
        equal, lower, upper = piece.layout
        lb, ub = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
        slack += [c[equal] - lb[equal], c[lower] - lb[lower], ub[upper] - c[upper]]
        limit += [lb[equal], lb[lower], ub[upper]]
        equality += [np.ones(np.count_nonzero(equal), bool),
                     np.zeros(np.count_nonzero(lower) + np.count_nonzero(upper), bool)]
    slack = np.concatenate(slack) if slack else np.zeros(0)
    scale = 1.0 + np.abs(np.concatenate(limit)) if limit else np.zeros(0)
    equality = np.concatenate(equality) if equality else np.zeros(0, bool)
    if np.any(~equality & (slack < -problem.tolerance * scale)):
        raise SolverNotConverged(
            f"adsim: the point scipy.optimize.{solver} returned violates its constraints "
            f"(an inequality is negative by more than the tolerance), so it is no constrained "
            f"minimum to differentiate. Tighten the solver's tolerances or give a feasible "
            f"starting point")
    active = np.flatnonzero(equality | (slack <= problem.tolerance * scale))
    if active.size > x.size and problem.not_a_vertex is None:
        raise UndefinedDerivative(
            f"adsim: at the solution of scipy.optimize.{solver}, {active.size} constraints are "
            f"active for {x.size} unknowns; their gradients cannot be independent, so the "
            f"multipliers, and the derivative of the solution, are not unique. Remove "
            f"redundant constraints")
    seeds = [np.eye(x.size)] + [np.zeros((x.size, np.size(v))) for v in values]
    if kkt.first_order is None:
        kkt.first_order = _Recorded(
            lambda y, *v: np.concatenate([np.reshape(kkt.f(y, *v), (1,)), kkt.g(y, *v)]))
    J = kkt.first_order.sweep("_tangent", [x] + list(values), seeds)[1].T
    gradient, JA = J[0], J[1:][active]
    mu = np.linalg.lstsq(JA.T, gradient, rcond=None)[0] if active.size else np.zeros(0)
    if problem.not_a_vertex is not None:
        error = problem.not_a_vertex(solver, JA, mu, ~equality[active], x.size)
        if error is not None:
            raise error
    size = 1.0 + np.max(np.abs(gradient), initial=0.0)
    if np.max(np.abs(gradient - JA.T @ mu), initial=0.0) > KKT_RTOL * size:
        raise SolverNotConverged(
            f"adsim: the point scipy.optimize.{solver} returned is not a KKT point of the "
            f"problem to the tolerance {KKT_RTOL:g} (the objective's gradient is not a "
            f"combination of the active constraints' gradients), so there is no constrained "
            f"minimum to differentiate. Tighten the solver's tolerances")
    inequality = ~equality[active]
    if np.any(inequality & (mu < -MULTIPLIER_TOL * size)):
        raise SolverNotConverged(
            f"adsim: at the point scipy.optimize.{solver} returned, an active inequality has a "
            f"negative multiplier: the objective decreases into the feasible set, so it is "
            f"not a constrained minimum. Tighten the solver's tolerances")
    if np.any(inequality & (np.abs(mu) <= MULTIPLIER_TOL * size)):
        raise UndefinedDerivative(
            f"adsim: at the solution of scipy.optimize.{solver} an inequality constraint is "
            f"active with a zero multiplier (the solution touches it without being held by "
            f"it: not strictly complementary), so the solution's derivative differs on either "
            f"side of the parameters and is undefined there. Move the parameters off this "
            f"point, or make the constraint an equality or drop it")
    return active, mu

