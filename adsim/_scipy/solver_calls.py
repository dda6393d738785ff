"""SciPy's solvers called on functions of active parameters, differentiated
through their solutions (adsim/_scipy/implicit.py).

Each solver has a :class:`Spec`: which argument holds the function whose
root, minimum or fixed point is sought, which takes the starting point
(replaced by the previous solution when a replay solves again), how to run
SciPy's solver and read whether it converged, and how to put the active
solution where the solver returns its ``x`` (the other fields of a result,
``fun``, ``jac``, ``nfev``, ..., stay SciPy's plain values of the recorded
call).

The parameters are the active values the function reads: arrays among
``args`` (also inside a dict, list or tuple), and those it reads from a
closure, an object or a global (adsim/_nesting/outer_values.py, lifted to
extra arguments as for ``solve_ivp``). SciPy's solver runs on their plain
values with functions of ``x`` alone; the equations are recorded as
functions of ``(x, *parameters)``.
"""
import copy
import functools

import numpy as np

from .._active import Active
from .._containers.container_args import gathered_inputs
from .._nesting.outer_values import PlainReads
from .._np.core import active_leaves
from .._np.joins import from_pieces
from .._record.creation import suspended
from ..api import grad, jacobian
from ..errors import SolverNotConverged, UnsupportedOperation
from .bound_parameters import MOVING, markers, parametrised, substituted
from .callbacks import CallbackWatch
from .implicit import (NEAR_DIFFERENCED_MINIMUM_RTOL, NEAR_SOLUTION_RTOL, Equations,
                       Stationarity, qualified, solution_to_rounding)
from .implicit_file import TAKE_A_VECTOR, residual_system, saved_call, taped_functions
from .solution_op import ImplicitSolution

__all__ = ["IMPLICIT", "Spec", "differentiated_solve", "plain_value"]


class Spec:
    """How one solver call is differentiated (see the module docstring).

    kind: "root" (F = f), "fixed_point" (F = x - g), "minimum" (F = grad f),
    "least_squares" (F = grad of 0.5 ||r||^2); function: the argument
    holding f, g or r; start: the argument taking the start, or None;
    x_shape: the shape of x as the solver passes it to the function;
    run(original, call) -> (raw result, x, converged, why not);
    answer(raw, x) -> the solver's return value with the active x;
    first_of: the function returns a tuple whose first item is the value
    (``jac=True``); lifted: other functions taking ``(x, *args)``;
    check(x, bounds): refuses a solution on the bounds of its solve;
    refresh(answer, at, params) -> the answer with the items that are the
    function's value at the solution or its derivatives there (``fun``,
    ``cost``, ``jac``, ``grad``) made again from ``at(x, *params)``, the
    function with the active parameters, on the active solution (they move
    with the parameters as the solution does); near_rtol: how close to a
    solution a point SciPy flags must be to stand (solution_to_rounding)."""

    def __init__(self, kind, function, start, x_shape, run, answer, first_of=False, lifted=(),
                 check=None, refresh=None, near_rtol=NEAR_SOLUTION_RTOL):
        self.kind, self.function, self.start, self.x_shape = kind, function, start, x_shape
        self.run, self.answer, self.first_of, self.lifted = run, answer, first_of, lifted
        self.check, self.refresh, self.near_rtol = check, refresh, near_rtol


# ---- the solvers ---------------------------------------------------------------------

def _flat_shape(x0):
    return (int(np.size(x0)),)


def _with_x(result, x):
    """A copy of an OptimizeResult with the active solution as ``x``."""
    out = copy.copy(result)
    out["x"] = x
    return out


def with_fun(result, at, params):
    """An OptimizeResult whose ``fun`` is the objective's active value at
    the solution and ``jac`` (where it has one) its gradient there."""
    x = result["x"]
    result["fun"] = np.reshape(at(x, *params), ())
    if "jac" in result:
        result["jac"] = grad(lambda z, *p: np.reshape(at(z, *p), ()))(x, *params)
    return result


DENSE_JACOBIAN_UP_TO = 10 ** 6
"""Entries of least_squares' ``jac`` up to which it is made again, densely,
on the active solution (above: SciPy's plain value is left)."""


def _with_residuals(result, at, params):
    """least_squares: ``fun`` the active residuals, ``cost`` half their
    squared norm, ``jac`` their Jacobian and ``grad`` the cost's gradient
    (up to DENSE_JACOBIAN_UP_TO entries)."""
    x = result["x"]
    r = at(x, *params)
    result.update(fun=r, cost=0.5 * np.sum(r ** 2))
    if np.size(r) * np.size(x) <= DENSE_JACOBIAN_UP_TO:
        J = jacobian(at)(x, *params)
        result.update(jac=J, grad=J.T @ r)
    return result


def with_value_second(out, at, params):
    """(x, f, ...) of the legacy minimisers' full output: f active."""
    if not isinstance(out, tuple) or len(out) < 2 or np.ndim(out[1]) != 0:
        return out
    return (out[0], np.reshape(at(out[0], *params), ())) + out[2:]


def _fsolve(a):
    def run(original, call):
        x, info, ier, message = original(**dict(call, full_output=True))
        return (x, info, ier, message), x, ier == 1, message
    return Spec("root", "func", "x0", _flat_shape(a["x0"]), run,
                lambda raw, x: (x,) + raw[1:] if a.get("full_output") else x,
                lifted=("fprime",))


def _root(a):
    def run(original, call):
        res = original(**call)
        return res, res.x, bool(res.success), res.message
    return Spec("root", "fun", "x0", _flat_shape(a["x0"]), run, _with_x,
                first_of=a.get("jac") is True, lifted=("jac",), refresh=_with_residual)


def _with_residual(result, at, params):
    """root's result: ``fun`` the active residual at the solution, and
    method 'lm''s ``cov_x`` (J^T J)^-1 of the exact Jacobian there (None
    where SciPy found it singular), as leastsq's."""
    x = result["x"]
    if "fun" in result:
        result["fun"] = at(x, *params)
    if result.get("cov_x") is not None:
        J = jacobian(at)(x, *params)
        result["cov_x"] = np.linalg.inv(J.T @ J)
    return result


def _with_root(results, x):
    """A copy of a RootResults with the active solution as ``root`` (its
    counts and flag SciPy's of the recorded solve)."""
    out = copy.copy(results)
    out.root = x
    return out


def _root_scalar(a):
    def run(original, call):
        res = original(**call)
        return res, res.root, bool(res.converged), res.flag
    return Spec("root", "f", "x0" if a.get("x0") is not None else None, (), run, _with_root,
                first_of=a.get("fprime") is True or a.get("fprime2") is True,
                lifted=("fprime", "fprime2"))


def _bracketing(a):
    def run(original, call):
        x, r = original(**dict(call, full_output=True, disp=False))
        return (x, r), x, bool(r.converged), r.flag
    return Spec("root", "f", None, (), run,
                lambda raw, x: (x, _with_root(raw[1], x)) if a.get("full_output") else x)


def _newton(a):
    scalar = np.ndim(a["x0"]) == 0

    def run(original, call):
        res = original(**dict(call, full_output=True, disp=False))
        if scalar:
            return res, res[0], bool(res[1].converged), res[1].flag
        return res, res.root, bool(np.all(res.converged)), "some elements did not converge"

    def answer(raw, x):
        if not a.get("full_output"):
            return x
        return (x, _with_root(raw[1], x)) if scalar else raw._replace(root=x)
    return Spec("root", "func", "x0", np.shape(a["x0"]), run, answer,
                lifted=("fprime", "fprime2"))


def _fixed_point(a):
    def run(original, call):
        try:
            x = original(**call)
        except RuntimeError as err:        # SciPy's "Failed to converge after ..."
            return err, None, False, str(err)
        return x, x, True, ""
    return Spec("fixed_point", "func", "x0", np.shape(a["x0"]), run, lambda raw, x: x)


def _nonlin(a):
    from scipy.optimize import NoConvergence

    def run(original, call):
        try:
            x = original(**call)
        except NoConvergence as err:
            return err, None, False, "the iteration stopped before the tolerance was met"
        return x, x, True, ""
    return Spec("root", "F", "xin", np.shape(a["xin"]), run, lambda raw, x: x)


def _minimize(a):
    """Without constraints nor bounds its method uses (those go through the
    KKT conditions, adsim/_scipy/constrained.py)."""
    def run(original, call):
        res = original(**call)
        return res, res.x, bool(res.success), res.message
    return Spec("minimum", "fun", "x0", _flat_shape(a["x0"]), run, _with_x,
                first_of=a.get("jac") is True, lifted=("jac", "hess", "hessp"),
                check=_bounds_check("minimize", a.get("bounds")), refresh=with_fun,
                near_rtol=_near_rtol(a.get("jac") is None or isinstance(a.get("jac"), str)))


def _near_rtol(differenced):
    """How close a flagged solve must be to stand: a minimiser whose gradient
    SciPy differences stops farther from the minimum (implicit.py)."""
    return NEAR_DIFFERENCED_MINIMUM_RTOL if differenced else NEAR_SOLUTION_RTOL


def _minimize_scalar(a):
    def run(original, call):
        res = original(**call)
        return res, res.x, bool(res.success), res.message
    # the bounded method (Brent within the bounds) never lands on a bound: a
    # minimum held by one is returned up to about 2 xatol inside it
    method = a.get("method") or ("bounded" if a.get("bounds") is not None else "brent")
    within = 2.0 * (a.get("options") or {}).get("xatol", 1e-5) \
        if not callable(method) and method.lower() == "bounded" else 0.0
    return Spec("minimum", "fun", None, (), run, _with_x,
                check=_bounds_check("minimize_scalar", a.get("bounds"), within),
                refresh=with_fun)


def _least_squares(a):
    if a.get("loss", "linear") != "linear":
        raise UnsupportedOperation(
            f"adsim: scipy.optimize.least_squares with loss={a['loss']!r} is not "
            f"differentiated; loss='linear' is (the minimiser of 0.5 ||r||^2). Write the robust "
            f"loss into an objective and use scipy.optimize.minimize")

    def run(original, call):
        res = original(**call)
        return res, res.x, bool(res.success), res.message
    return Spec("least_squares", "fun", "x0", _flat_shape(a["x0"]), run, _with_x,
                lifted=("jac",), check=_bounds_check("least_squares", a.get("bounds")),
                refresh=_with_residuals)


def _leastsq(a):
    def run(original, call):
        raw = original(**dict(call, full_output=True))
        return raw, raw[0], raw[4] in (1, 2, 3, 4), raw[3]
    return Spec("least_squares", "func", "x0", _flat_shape(a["x0"]), run,
                lambda raw, x: (x,) + raw[1:] if a.get("full_output") else (x, raw[4]),
                lifted=("Dfun",), refresh=_with_leastsq_output)


def _with_leastsq_output(out, at, params):
    """leastsq's full output: ``cov_x`` (J^T J)^-1 of the active Jacobian at
    the solution (None where SciPy found J^T J singular) and the infodict's
    ``fvec`` the active residuals, as the program reads them to weigh a fit
    (a chi-square, parameter errors); MINPACK's ``fjac``, ``ipvt``, ``qtf``
    and the counts stay SciPy's plain values of the recorded solve."""
    if len(out) != 5:
        return out
    x, cov_x, info, mesg, ier = out
    r = at(x, *params)
    if cov_x is not None:
        J = jacobian(at)(x, *params)
        cov_x = np.linalg.inv(J.T @ J)
    return x, cov_x, dict(info, fvec=r), mesg, ier


# the legacy minimisers: (function argument, lifted functions, position of the
# warning flag in the full output, whose 0 means converged)
_LEGACY_MINIMISERS = {
    "fmin": ("func", (), 4), "fmin_powell": ("func", (), 5),
    "fmin_cg": ("f", ("fprime",), 4), "fmin_bfgs": ("f", ("fprime",), 6),
    "fmin_ncg": ("f", ("fprime", "fhess_p", "fhess"), 5),
}


def _legacy_minimiser(solver):
    """``fmin`` and its kin: run with ``full_output=True``; the call's own
    layout given back (``xopt``, the full output, ``allvecs`` with
    ``retall``), ``fopt`` the objective at the active solution, the other
    items plain values of the recorded solve."""
    function, lifted, flag_at = _LEGACY_MINIMISERS[solver]

    def spec(a):
        def run(original, call):
            raw = original(**dict(call, full_output=True))
            return raw, raw[0], raw[flag_at] == 0, _LEGACY_WARNINGS.get(raw[flag_at], raw[flag_at])

        def answer(raw, x):
            if a.get("full_output"):
                return (x,) + raw[1:]
            return (x, raw[-1]) if a.get("retall") else x
        return Spec("minimum", function, "x0", _flat_shape(a["x0"]), run, answer, lifted=lifted,
                    refresh=with_value_second,
                    near_rtol=_near_rtol(bool(lifted) and a.get(lifted[0]) is None))
    return spec


_LEGACY_WARNINGS = {1: "the maximum number of iterations or function evaluations was reached",
                    2: "the gradient or function values did not change (precision loss)",
                    3: "NaN result encountered"}


def _gradient_of_value(a):
    """Whether ``func`` returns (value, gradient): fmin_l_bfgs_b and fmin_tnc
    without ``fprime`` nor ``approx_grad``."""
    return a.get("fprime") is None and not a.get("approx_grad")


def _fmin_l_bfgs_b(a):
    def run(original, call):
        raw = original(**call)
        return raw, raw[0], raw[2]["warnflag"] == 0, raw[2].get("task", raw[2]["warnflag"])
    return Spec("minimum", "func", "x0", _flat_shape(a["x0"]), run,
                lambda raw, x: (x,) + raw[1:], first_of=_gradient_of_value(a),
                lifted=("fprime",), check=_bounds_check("fmin_l_bfgs_b", a.get("bounds")),
                refresh=with_value_second)


# fmin_tnc's return codes: 0 local minimum, 1 and 2 converged in f or x; the others
_TNC_FAILURES = {-1: "infeasible (lower bound above upper bound)",
                 3: "the maximum number of function evaluations was reached",
                 4: "the line search failed", 5: "all lower bounds equal the upper bounds",
                 6: "unable to progress", 7: "the user function stopped the minimisation"}


def _fmin_tnc(a):
    def run(original, call):
        raw = original(**call)
        return raw, raw[0], raw[2] in (0, 1, 2), _TNC_FAILURES.get(raw[2], raw[2])
    return Spec("minimum", "func", "x0", _flat_shape(a["x0"]), run,
                lambda raw, x: (x,) + raw[1:], first_of=_gradient_of_value(a),
                lifted=("fprime",), check=_bounds_check("fmin_tnc", a.get("bounds")))


IMPLICIT = {
    "fsolve": _fsolve, "root": _root, "root_scalar": _root_scalar, "newton": _newton,
    **{name: _bracketing for name in ("brentq", "brenth", "ridder", "bisect", "toms748")},
    "fixed_point": _fixed_point,
    **{name: _nonlin for name in ("newton_krylov", "anderson", "broyden1", "broyden2",
                                  "excitingmixing", "linearmixing", "diagbroyden")},
    "minimize": _minimize, "minimize_scalar": _minimize_scalar,
    "least_squares": _least_squares, "leastsq": _leastsq,
    **{name: _legacy_minimiser(name) for name in _LEGACY_MINIMISERS},
    "fmin_l_bfgs_b": _fmin_l_bfgs_b, "fmin_tnc": _fmin_tnc,
}
"""Solvers differentiated through their solutions: name -> Spec of a call's arguments."""


# ---- bounds ------------------------------------------------------------------------

def limits(solver, bounds, shape):
    """The lower and upper limits of ``solver``'s ``bounds`` (a Bounds, a
    (lower, upper) pair or bound pairs), as float arrays of ``shape``."""
    from scipy.optimize import Bounds
    if isinstance(bounds, Bounds):
        lower, upper = bounds.lb, bounds.ub
    elif solver in ("least_squares", "curve_fit") or \
            (len(bounds) == 2 and solver == "minimize_scalar"):
        lower, upper = bounds
    else:
        pairs = list(bounds)
        lower = [-np.inf if lo is None else lo for lo, _ in pairs]
        upper = [np.inf if hi is None else hi for _, hi in pairs]
    return tuple(np.broadcast_to(np.asarray(plain_value(v), dtype=float), shape)
                 for v in (lower, upper))


def within_bounds(solver, bounds, x_start):
    """A warm start moved into bounds that moved with the parameters (SciPy
    refuses a start outside them; the solve then ends on the bound, which
    the check refuses by name)."""
    lower, upper = limits(solver, bounds, np.shape(x_start))
    return np.minimum(np.maximum(x_start, lower), upper)


def _bounds_check(solver, bounds, within=0.0):
    """A check refusing a solution on one of the bounds, or less than
    ``within`` from one (there the first order conditions are not ``grad f
    = 0``); None without ``bounds``. ``check(x, bounds)`` is given the
    bounds of the solve (adsim/_scipy/bound_parameters.py: they may move
    with the parameters)."""
    if bounds is None:
        return None

    def check(x, bounds):
        lo, hi = limits(solver, bounds, np.shape(x))
        margin = np.sqrt(np.finfo(float).eps)
        with np.errstate(invalid="ignore"):          # no bound: -inf or inf
            touching = (np.isfinite(lo) & (x - lo <= within + margin * (1 + np.abs(lo)))) | \
                (np.isfinite(hi) & (hi - x <= within + margin * (1 + np.abs(hi))))
        if np.any(touching):
            where = np.flatnonzero(np.ravel(touching))
            raise UnsupportedOperation(
                f"adsim: the solution of scipy.optimize.{solver} lies on its bounds (at "
                f"{'position' if where.size == 1 else 'positions'} "
                f"{', '.join(map(str, where[:5]))}), where it is held by the bound rather than "
                f"by a zero gradient of the objective; its derivative through the active bound "
                f"is not computed. Widen the bounds so that none is active at the solution, or "
                f"fix the bounded unknowns and differentiate the remaining problem")
    return check


# ---- the call ----------------------------------------------------------------------

def _reads_active_bounds(bounds):
    """Whether bounds (a Bounds, pairs, a pair) or a bracket read active values."""
    from scipy.optimize import Bounds
    if isinstance(bounds, Bounds):
        bounds = (bounds.lb, bounds.ub)
    return bool(active_leaves(bounds))


def not_converged(solver, why, tolerance):
    """The error of a solve that stopped short of a solution (``why``: the
    solver's message; ``tolerance``: which change of it may help)."""
    why = " ".join(str(why).split())
    return SolverNotConverged(
        f"adsim: scipy.optimize.{solver} did not converge ({why}), so there is no solution "
        f"to differentiate. Give it a better starting point, more iterations or "
        f"{tolerance}, or keep the parameters where the problem has a solution")


def plain_value(v):
    """The plain value of an active array (or a list or tuple of them)."""
    if isinstance(v, Active):
        return np.array(v.tape.slot_value(v.slot)).reshape(v.shape)
    if type(v) in (list, tuple) and active_leaves(v):
        return type(v)(plain_value(item) for item in v)
    return v


def _as_array(out):
    """A function's value as an array (a list such as ``[x[0] - p, ...]``
    stacked)."""
    if isinstance(out, Active) or not active_leaves(out):
        return out if isinstance(out, Active) else np.asarray(out, dtype=float)
    return from_pieces(out)


def _system(spec, function, x_shape, n, what, full_args):
    """The equations F(x_flat, *params) of ``spec.kind`` for ``function``
    (taking ``(x, *args)``, ``args = full_args(params)``)."""
    def value_of(x, params):
        out = function(np.reshape(x, x_shape), *full_args(params))
        return out[0] if spec.first_of else out

    if spec.kind == "root":
        return Equations(lambda x, *args: _as_array(value_of(x, args)), n, what)
    if spec.kind == "fixed_point":
        return Equations(lambda x, *args: x - np.reshape(_as_array(value_of(x, args)), (-1,)),
                         n, what)
    if spec.kind == "minimum":
        return Stationarity(lambda x, *args: _as_array(value_of(x, args)), n, what)
    return residual_system(lambda x, *args: np.reshape(_as_array(value_of(x, args)), (-1,)),
                           n, what)


def _second(function):
    """The derivative a function returns with its value (``jac=True``)."""
    return lambda *args: function(*args)[1]


def _of_flat_x(function, x_shape, full_args, with_vector=False):
    """``function`` (taking ``(x, *args)``, or with ``with_vector``
    ``(x, vector, *args)``) as a function of the flat ``x`` (the vector)
    and the parameters, ``args = full_args(params)``: how a derivative
    given as Python code is recorded."""
    if with_vector:
        return lambda x, v, *params: _as_array(
            function(np.reshape(x, x_shape), v, *full_args(params)))
    return lambda x, *params: _as_array(function(np.reshape(x, x_shape), *full_args(params)))


def differentiated_solve(solver, original, signature, arguments, spec=None):
    """``original`` (SciPy's solver) called with ``arguments`` (its bound
    arguments, ``**kw`` spread), its solution active: the return value.
    ``spec``: how to make the call's :class:`Spec`, if not ``IMPLICIT``'s."""
    spec = (spec or IMPLICIT[solver])(arguments)
    names = [spec.function] + [n for n in spec.lifted if callable(arguments.get(n))]
    takes_args = "args" in signature.parameters
    args = arguments.get("args", ()) if takes_args else ()
    args = args if isinstance(args, tuple) else (args,)
    functions = [arguments[n] for n in names]
    keywords = arguments.get("kwargs") if solver == "least_squares" else None
    if keywords:             # least_squares' kwargs=: one more (container) argument
        functions = [_with_keywords(f) for f in functions]
        args = args + (dict(keywords),)
    # later calls (second-order rules, replays solving again) see the plain values the
    # functions read as this call does (a function made in a loop reads the loop's variable)
    reads = PlainReads(functions)
    functions, args = gathered_inputs([reads.frozen(f) for f in functions], args)
    positions = [i for i, v in enumerate(args) if isinstance(v, Active)]
    call = {k: v if k in names or k == "args" or callable(v) else plain_value(v)
            for k, v in arguments.items()}
    call.pop("kwargs", None) if keywords else None
    # bounds, brackets and options (tol=1e-8 * p[1], options={"gtol": ...}) that
    # read active values: SciPy is given them at each solve's own values
    moving = [key for key in arguments if _reads_active_bounds(arguments[key]) and (
        key in MOVING or key not in (*names, "args", "kwargs", spec.start)
        and not callable(arguments[key]))]
    if not positions and not moving:     # nothing the solve depends on is active
        leak = _Leak(solver)
        call.update({name: leak.watched(f) for name, f in zip(names, functions)})
        if takes_args:
            call["args"] = args
        return leak.run(lambda: original(**call))
    # (where only bounds or a bracket are active, the solution does not move
    # with them, but it is an op, so that each replay solves within its own)
    x0 = np.asarray(call[spec.start], dtype=float) if spec.start else np.zeros(spec.x_shape)
    n = int(np.prod(spec.x_shape))
    first = {}
    # bounds, brackets and options reading active values: parameters of the
    # solve, given to SciPy at each solve's own values (adsim/_scipy/bound_parameters.py)
    bound_leaves = []
    for key in moving:
        call[key], leaves = parametrised(arguments[key], len(positions) + len(bound_leaves))
        bound_leaves += leaves

    def with_params(values):
        full = list(args)
        for i, v in zip(positions, values):
            full[i] = v[()] if type(v) is np.ndarray and v.ndim == 0 else v
        return tuple(full)

    system = _system(spec, functions[0], spec.x_shape, n, solver, with_params)
    derivatives = {name: _of_flat_x(f, spec.x_shape, with_params, name in TAKE_A_VECTOR)
                   for name, f in zip(names[1:], functions[1:])}
    if spec.first_of:        # fun returns (value, jac): its jac is recorded apart
        derivatives["jac"] = _of_flat_x(_second(functions[0]), spec.x_shape, with_params)
    saved = saved_call(solver, spec, call, names, system, derivatives)
    taped = taped_functions(spec, system, n, saved.derivatives) \
        if saved.why_not is None else None

    def python_functions(values):
        full = with_params(values)
        return {name: _bound_to(f, full) for name, f in zip(names, functions)}

    def functions_at(values):
        # SciPy runs on the recorded function once it holds at the solution
        # (the first solve runs on the program's own), so a tape file replays
        # exactly what this process replays
        if saved.why_not is None and saved.recorded:
            return taped(values)
        return python_functions(values)

    def solve(x_start, values):
        this = substituted(call, values)
        # a solve from the program's own start that SciPy flags but that stopped at a
        # solution to rounding is the one the program goes on with; one from the
        # previous solution is refused instead, and solved again from that start
        # (adsim/_scipy/solution_op.py), as the program would
        own_start = np.array_equal(np.ravel(x_start), np.ravel(x0))
        if spec.start and spec.check is not None and markers(call["bounds"]):
            x_start = within_bounds(solver, this["bounds"], x_start)
        x, raw = run_solver(solver, spec, original, this, x0.shape, functions_at(values),
                            takes_args, x_start,
                            near_solution=(lambda x: solution_to_rounding(
                                system, x, values, spec.near_rtol)) if own_start else None)
        first.setdefault("raw", raw)
        first.setdefault("shape", x.shape)
        if not saved.recorded and saved.why_not is None:
            saved.record(x, values)
        return x.reshape(-1)

    solution = ImplicitSolution(system, solve, x0)
    solution.saved = saved
    x = solution([args[i] for i in positions] + bound_leaves).reshape(first["shape"])
    reads.hold()
    out = spec.answer(first["raw"], x)
    if spec.refresh is None:
        return out

    def at(z, *params):                # the function with the parameters as arguments
        value = functions[0](np.reshape(z, spec.x_shape), *params)
        return _as_array(value[0] if spec.first_of else value)
    return spec.refresh(out, at, args)


def run_solver(solver, spec, original, call, x0_shape, functions, takes_args, x_start,
               near_solution=None):
    """(x, SciPy's raw result) of ``original`` called with ``call``, its
    functions ``functions`` (name -> function of x alone) and the start
    ``x_start``; SolverNotConverged where SciPy says it did not converge,
    unless ``near_solution(x)`` finds its point a solution up to rounding
    (adsim/_scipy/implicit.py, solution_to_rounding)."""
    leak, stops = _Leak(solver), CallbackWatch(solver)
    this = dict(call)
    this.update({name: leak.watched(f) for name, f in functions.items()})
    if takes_args:
        this["args"] = ()
    if spec.start:
        this[spec.start] = np.reshape(x_start, x0_shape)
    if "callback" in this:
        this["callback"] = stops.watched(this["callback"])
    raw, x, converged, why = stops.run(lambda: leak.run(lambda: spec.run(original, this)))
    if not converged and (near_solution is None or not near_solution(np.ravel(x))):
        raise not_converged(solver, why, "a looser tolerance")
    x = np.asarray(x, dtype=float)
    if spec.check is not None:
        spec.check(x, this["bounds"])
    return x, raw


def unsearched(solver, f):
    """The error for the function ``f`` given to ``solver`` (one adsim
    differentiates through) returning a value that depends on the inputs
    being differentiated, read from where adsim's search does not look."""
    return UnsupportedOperation(
        f"adsim: the function given to {qualified(solver)} "
        f"({getattr(f, '__name__', 'function')}) reads a value that depends on the "
        f"inputs being differentiated from a place adsim does not search for "
        f"parameters (it looks in args, closures, the attributes of objects and "
        f"module globals, to a depth of 8 and in containers of up to 256 "
        f"entries). Pass the value through args=, or through a closure")


class _Leak:
    """The functions of one plain solve, watched: a value that still
    depends on the inputs being differentiated means the function reads an
    active value where adsim's search for parameters does not look."""

    def __init__(self, solver):
        self.solver = solver
        self.error = None

    def watched(self, f):
        @functools.wraps(f)
        def watched(*xs):
            out = f(*xs)
            if self.error is None and (isinstance(out, Active) or active_leaves(out)):
                self.error = unsearched(self.solver, f)
            if self.error is not None:
                raise self.error
            return out
        return watched

    def run(self, solve):
        """``solve()`` on plain values; the error about a watched function,
        rather than SciPy's own error about it or a result after SciPy's
        code swallowed it."""
        try:
            with suspended():
                result = solve()
        except Exception as err:
            if self.error is None or err is self.error:
                raise
            raise self.error from err
        if self.error is not None:
            raise self.error
        return result


def _with_keywords(f):
    @functools.wraps(f)
    def with_keywords(x, *args):
        return f(x, *args[:-1], **args[-1])
    return with_keywords


def _bound_to(f, args):
    """``f`` with its extra arguments bound: SciPy calls it with ``x`` (and,
    for ``hessp``, the vector) alone."""
    @functools.wraps(f)
    def bound(*xs):
        return f(*xs, *args)
    return bound
