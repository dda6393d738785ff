"""``scipy.optimize`` inside a recording.

The Rosenbrock test function and its derivatives on active arrays, called
unchanged (see hooks.py; SciPy's own code converts its argument through the
array API, which drops the derivative): rosen, rosen_der, rosen_hess,
rosen_hess_prod, written as SciPy defines them along the first axis.

The solvers, called while this thread records, are routed here. A call of
one of the solvers of ``solver_calls.IMPLICIT`` (``fsolve``, ``root``,
``root_scalar``, ``brentq`` and the other bracketing methods, ``newton``,
``newton_krylov`` and the other large-scale solvers, ``fixed_point``,
``minimize``, ``minimize_scalar``, ``least_squares``, ``leastsq``, the
legacy ``fmin``, ``fmin_powell``, ``fmin_cg``, ``fmin_bfgs``, ``fmin_ncg``,
``fmin_l_bfgs_b``, ``fmin_tnc``, and ``curve_fit``, adsim/_scipy/curve_fit.py) whose
solution depends on active values -- in ``args``, or read by its function
from a closure, an object or a global -- is differentiated through its
solution by the implicit function theorem (adsim/_scipy/solver_calls.py,
adsim/_scipy/implicit.py). Every other call runs as SciPy's with the
functions it is given watched: a function returning a value that depends on
the inputs being differentiated (an active array) cannot be solved through,
since the solver computes on plain floats. SciPy would report that as an
error of its own ("Result from function call is not a proper array of
floats", "The user-provided objective function must return a scalar value",
with adsim's error printed on stderr or chained below), so the error raised
is adsim's :class:`~adsim.errors.UnsupportedOperation`, naming the solver
and the function and saying what to do. Solvers SciPy writes in Python on
NumPy operations (``golden``, ``fminbound``) are recorded through as they
run: a call that succeeds is left as it is.
"""
import functools
import inspect
import sys
import types

import numpy as np

from .._record.creation import current_tape
from .._np.core import active_leaves
from .._active import Active
from .._validate import name_of
from ..errors import UnsupportedOperation
from .arrays import array
from .._record.interpose import unhooked
from .._containers.matrix_args import holds_recorded_matrix
from .._nesting.nested import reads_recorded_values
from .._nesting.outer_values import args_hold_recorded_objects
from .._record.callers import library_entry
from .constrained import CONSTRAINED, applies, constrained_call, reads_active
from .curve_fit import fit_curve
from .solver_calls import IMPLICIT, differentiated_solve, unsearched

# solvers differentiated through their solutions: IMPLICIT's, the constrained
# minimisers (the KKT conditions, adsim/_scipy/constrained.py), and curve_fit
# (a least-squares problem in the fitted parameters, adsim/_scipy/curve_fit.py)
DIFFERENTIATED = sorted({*IMPLICIT, *CONSTRAINED, "curve_fit"})


def rosen(x):
    """sum(100 (x[1:] - x[:-1]^2)^2 + (1 - x[:-1])^2) over the first axis."""
    x = array(x, "scipy.optimize.rosen")
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2, axis=0)


def rosen_der(x):
    x = array(x, "scipy.optimize.rosen_der")
    inner = (200.0 * (x[1:-1] - x[:-2] ** 2) - 400.0 * (x[2:] - x[1:-1] ** 2) * x[1:-1]
             - 2.0 * (1.0 - x[1:-1]))
    first = -400.0 * x[:1] * (x[1:2] - x[:1] ** 2) - 2.0 * (1.0 - x[:1])
    last = 200.0 * (x[-1:] - x[-2:-1] ** 2)
    return np.concatenate([first, inner, last])


def rosen_hess(x):
    x = array(x, "scipy.optimize.rosen_hess")
    diagonal = np.concatenate([1200.0 * x[:1] ** 2 - 400.0 * x[1:2] + 2.0,
                               202.0 + 1200.0 * x[1:-1] ** 2 - 400.0 * x[2:], np.full(1, 200.0)])
    return np.diag(-400.0 * x[:-1], 1) + np.diag(-400.0 * x[:-1], -1) + np.diag(diagonal)


def rosen_hess_prod(x, p):
    x = np.reshape(array(x, "scipy.optimize.rosen_hess_prod"), (-1,)) if np.ndim(x) == 0 else \
        array(x, "scipy.optimize.rosen_hess_prod")
    p = array(p, "scipy.optimize.rosen_hess_prod")
    first = (1200.0 * x[:1] ** 2 - 400.0 * x[1:2] + 2.0) * p[:1] - 400.0 * x[:1] * p[1:2]
    inner = (-400.0 * x[:-2] * p[:-2] + (202.0 + 1200.0 * x[1:-1] ** 2 - 400.0 * x[2:]) * p[1:-1]
             - 400.0 * x[1:-1] * p[2:])
    last = -400.0 * x[-2:-1] * p[-2:-1] + 200.0 * p[-1:]
    return np.concatenate([first, inner, last])


# ---- solvers ------------------------------------------------------------------

def _minpack(method_default=None):
    """Whether a call passes the function's values to MINPACK, whose C code
    would print adsim's error and raise its own (the watch then raises at
    once): always, or with ``method`` (default ``method_default``) 'hybr'
    or 'lm'."""
    if method_default is None:
        return lambda arguments: True
    return lambda arguments: arguments.get("method", method_default) in ("hybr", "lm")


# solver -> whether its functions' values go straight to compiled code
SOLVERS = {
    "fsolve": _minpack(), "leastsq": _minpack(), "curve_fit": _minpack(), "root": _minpack("hybr"),
    **{name: None for name in (
        "minimize", "minimize_scalar", "root_scalar", "newton", "fixed_point", "least_squares",
        "brentq", "brenth", "ridder", "bisect", "toms748", "fmin", "fmin_powell", "fmin_cg",
        "fmin_bfgs", "fmin_ncg", "fmin_l_bfgs_b", "fmin_tnc", "fmin_cobyla", "fmin_slsqp",
        "linprog", "basinhopping", "differential_evolution", "dual_annealing", "shgo", "direct", "brute",
        "newton_krylov", "anderson", "broyden1", "broyden2", "excitingmixing", "linearmixing",
        "diagbroyden", "approx_fprime", "check_grad")},
}


def solver_error(solver, function, value):
    """adsim's error for ``function`` (called by ``scipy.optimize.<solver>``)
    returning the active ``value``: for a solver adsim differentiates
    through, the value came from a place its search does not look."""
    if solver in DIFFERENTIATED:
        return unsearched(solver, function)
    return UnsupportedOperation(
        f"adsim: cannot differentiate through scipy.optimize.{solver}: the function it calls "
        f"({name_of(function)}) returned a value that depends on the inputs being "
        f"differentiated (an active array of shape {value.shape}), and {solver} computes on "
        f"plain floats, which would drop that dependence. adsim differentiates "
        f"{', '.join(DIFFERENTIATED)} through their solutions when the program calls them "
        f"(docs/scipy.md); {solver} is not among them here. Either write the problem for one "
        f"of those, or differentiate the solution by the implicit function theorem yourself: "
        f"at a solution x of F(x, p) = 0 (for a minimizer, F is the gradient of the "
        f"objective), dx/dp = -(dF/dx)^-1 dF/dp; make the solve an adsim.primitive(solve, "
        f"jvp=..., vjp=...) that calls {solver} on plain values, with rules from that formula "
        f"(adsim.jacobian gives dF/dx and dF/dp at the solution). Or, if no derivative through "
        f"the solution is wanted, call {solver} on plain values (adsim.value(p) for an active "
        f"p)")


def _varied(value):
    """The first active array in ``value`` that carries a derivative."""
    for leaf in active_leaves(value):
        if leaf.tape.slot_is_varied(leaf.slot):
            return leaf
    return None


class _Watch:
    """The functions given to one solver call, wrapped: a value carrying a
    derivative is noted (and raises at once when ``strict``)."""

    def __init__(self, solver, strict):
        self.solver = solver
        self.strict = strict
        self.error = None

    def function(self, f):
        @functools.wraps(f)
        def watched(*args, **kwargs):
            out = f(*args, **kwargs)
            if self.error is None:
                leaf = _varied(out)
                if leaf is not None:
                    self.error = solver_error(self.solver, f, leaf)
            if self.strict and self.error is not None:
                raise self.error
            return out
        return watched

    def value(self, v, depth=0):
        """``v`` with the functions in it watched (in lists, tuples and
        dicts such as constraints, to a small depth)."""
        if callable(v) and not isinstance(v, (type, Active)):
            return self.function(v)
        if depth < 2 and type(v) in (list, tuple):
            return type(v)(self.value(item, depth + 1) for item in v)
        if depth < 2 and type(v) is dict:
            return {k: self.value(item, depth + 1) for k, item in v.items()}
        return v


_ORIGINALS = {}


def _original(function):
    """SciPy's own ``function`` (its code and keyword defaults as SciPy
    defines them, whether or not a recording routes it here), and the
    signature its arguments are bound to."""
    code, kwdefaults = unhooked(function)
    found = _ORIGINALS.get(function)
    if found is None or found[0].__code__ is not code:
        original = types.FunctionType(code, function.__globals__, function.__name__,
                                      function.__defaults__, function.__closure__)
        original.__kwdefaults__ = None if kwdefaults is None else dict(kwdefaults)
        original.__qualname__ = function.__qualname__
        target = function if hasattr(function, "__wrapped__") else original
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            signature = None
        found = _ORIGINALS[function] = (original, signature)
    return found


def _spread_keywords(bound, signature):
    """The bound arguments as keywords, ``**kw`` spread."""
    arguments = {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(value)
        else:
            arguments[name] = value
    return arguments


def _depends_on_active(solver, arguments):
    """Whether the solution depends on active values: arrays in ``args``
    (least_squares' ``kwargs``), values a function given reads from
    outside its arguments, or the constraints and bounds of a constrained
    minimiser. An active starting point or bracket alone does not move the
    solution."""
    extra = arguments.get("args", ())
    if active_leaves([extra, arguments.get("kwargs")]):
        return True
    extra = extra if isinstance(extra, tuple) else (extra,)
    if any(map(holds_recorded_matrix, extra)):
        return True     # a sparse matrix of active values, maybe in a container or object
    if args_hold_recorded_objects(extra):
        return True     # args=(p,), p a dataclass of parameters (bound: container_args.py)
    if reads_active(solver, arguments):
        return True
    return any(callable(v) and not isinstance(v, (type, Active)) and reads_recorded_values(v)
               for v in arguments.values())


def _inside_another_solver(solver):
    """Whether SciPy's own code makes this call (``basinhopping`` calling
    ``minimize``, ``curve_fit`` calling ``leastsq``): the outer solver's
    result is not the solution of this one, so it is not differentiated
    through it (the outer solver is refused by name instead)."""
    entry = library_entry()
    return entry is not None and entry.startswith("scipy.") and \
        entry.rsplit(".", 1)[-1] != solver


def _solver_rule(solver, strict_when):
    def rule(*args, **kwargs):
        original, signature = _original(getattr(sys.modules["scipy.optimize"], solver))
        try:
            bound = signature.bind(*args, **kwargs)
        except (AttributeError, TypeError):       # no signature, or a call SciPy refuses
            return original(*args, **kwargs)
        if solver in DIFFERENTIATED and not _inside_another_solver(solver):
            arguments = _spread_keywords(bound, signature)
            if _depends_on_active(solver, arguments) or \
                    active_leaves(list(arguments.values())):
                # (an active start or bracket alone: solved on its plain value)
                if solver == "curve_fit":
                    return fit_curve(original, arguments)
                if solver in CONSTRAINED and applies(solver, arguments):
                    return constrained_call(solver, original, arguments)
                return differentiated_solve(solver, original, signature, arguments)
        watch = _Watch(solver, strict_when is not None and strict_when(bound.arguments))
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if name == "args":                    # the extra arguments of the functions
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                bound.arguments[name] = {k: v if k == "args" else watch.value(v)
                                         for k, v in value.items()}
            else:
                bound.arguments[name] = watch.value(value)
        try:
            return original(*bound.args, **bound.kwargs)
        except Exception as err:
            if watch.error is None or err is watch.error:
                raise
            raise watch.error from err
    rule.__name__ = solver
    rule.routes_also = lambda args, kwargs: current_tape() is not None
    return rule


HOOKS = {("scipy.optimize", f.__name__): f for f in (rosen, rosen_der, rosen_hess,
                                                     rosen_hess_prod)}
HOOKS.update({("scipy.optimize", solver): _solver_rule(solver, strict)
              for solver, strict in SOLVERS.items()})
