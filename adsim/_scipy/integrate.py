"""``scipy.integrate.solve_ivp`` and ``odeint`` called unchanged inside a
recording: a call whose arguments, or the values its functions (``fun``,
``jac``, ``events``; ``func``, ``Dfun``) read from outside their arguments,
hold active values is
:func:`adsim.integrate.solve_ivp` (the same steps and numbers as SciPy's,
differentiable) or :func:`adsim.integrate.odeint` (SciPy's numbers, the
derivatives of the exact solution to about the tolerance); every other call
is SciPy's. ``solve_bvp`` likewise: SciPy's solve differentiated through its
collocation equations on SciPy's mesh (adsim/_scipy/bvp.py).
"""
import numpy as np
import scipy.integrate

from .._nesting.nested import reads_recorded_values
from .._nesting.outer_values import args_hold_recorded_objects
from ..errors import UnsupportedOperation
from . import bvp, nested_quad, quadrature, samples
from .linear_maps import linear_in


def solve_ivp(fun, t_span, y0, *args, **kwargs):
    from ..integrate import solve_ivp as differentiable_solve_ivp
    return differentiable_solve_ivp(fun, t_span, y0, *args, **kwargs)


def _reads_active_values(args, kwargs):
    """Whether a function passed to the solver reads active values from
    outside its arguments (``lambda t, y: -k * y`` with ``k`` active, a
    bound method reading ``self.k``, a global, a dict of parameters)."""
    candidates = list(args[:1]) + [kwargs.get(name) for name in ("fun", "jac", "events")]
    events = kwargs.get("events")
    if isinstance(events, (list, tuple)):
        candidates += list(events)
    extra = kwargs.get("args", args[8] if len(args) > 8 else None)
    return any(callable(c) and reads_recorded_values(c) for c in candidates) or \
        args_hold_recorded_objects(extra) or _reads_active_matrix(candidates, extra)


def _reads_active_matrix(functions, extra):
    """A sparse matrix of active values read by the functions: adsim's
    solve, which takes its entries as inputs. (adsim.integrate sits above
    this layer: imported on use.)"""
    from ..integrate._parameters import reads_active_matrix
    return reads_active_matrix(functions, extra)


solve_ivp.routes_also = _reads_active_values


def odeint(func, y0, t, *args, **kwargs):
    from ..integrate import odeint as differentiable_odeint
    return differentiable_odeint(func, y0, t, *args, **kwargs)


def _odeint_reads_active_values(args, kwargs):
    """Whether ``func`` or ``Dfun`` (positional argument 4) reads active
    values from outside its arguments (closure, object, global), or
    ``args`` holds an object holding them."""
    candidates = list(args[:1]) + list(args[4:5]) + [kwargs.get(k) for k in ("func", "Dfun")]
    extra = kwargs.get("args", args[3] if len(args) > 3 else None)
    return any(callable(c) and reads_recorded_values(c) for c in candidates) or \
        args_hold_recorded_objects(extra) or _reads_active_matrix(candidates, extra)


odeint.routes_also = _odeint_reads_active_values


def ode_solver_init(self, fun, t0, y0, t_bound, *args, **kwargs):
    """SciPy's solver classes (``RK45(fun, t0, y0, t_bound)`` and the
    others) stepped by hand with active values: refused with what to call
    instead (their ``step`` converts the state to plain arrays)."""
    raise UnsupportedOperation(
        f"adsim: stepping SciPy's `{type(self).__name__}` class by hand with active values "
        "(in y0, t0, t_bound or read by fun) is not differentiated; call "
        f"scipy.integrate.solve_ivp(fun, (t0, t_bound), y0, method={type(self).__name__!r}, "
        "...) instead, with t_eval= or dense_output=True for the states along the way and "
        "events= to stop early (docs/integrate.md)")


def _solver_fun_reads_active_values(args, kwargs):
    fun = args[1] if len(args) > 1 else kwargs.get("fun")
    return callable(fun) and reads_recorded_values(fun)


ode_solver_init.routes_also = _solver_fun_reads_active_values


def ode_integrate(self, *args, **kwargs):
    """``scipy.integrate.ode`` (and ``complex_ode``) with active values:
    refused with what to call instead (its Fortran integrators take plain
    arrays)."""
    raise UnsupportedOperation(
        "adsim: scipy.integrate.ode with active values (in its initial value or read by f) "
        "is not differentiated; call scipy.integrate.solve_ivp(f, (t0, t1), y0, "
        "method='DOP853' or 'LSODA' or 'BDF', t_eval=...) instead (note its fun(t, y) takes "
        "t first, as ode's f does), or odeint (docs/integrate.md)")


def _ode_reads_active_values(args, kwargs):
    ode = args[0] if args else None
    return any(callable(c) and reads_recorded_values(c)
               for c in (getattr(ode, "f", None), getattr(ode, "jac", None)))


ode_integrate.routes_also = _ode_reads_active_values


def ode_solution_call(self, t):
    """``OdeSolution.__call__`` of a plain solution (SciPy's own solve) at
    active times: the step SciPy's search chooses from the times' recorded
    values, recorded as comparisons with the step's ends, and that step's
    interpolant evaluated on the active times (its derivative in ``t`` the
    interpolant's slope)."""
    from ..integrate._dense import plain_solution
    return plain_solution(self)(t)


def dense_output_call(self, t):
    """``DenseOutput.__call__`` (one step's interpolant) at active times."""
    if np.ndim(t) > 1:
        raise ValueError("`t` must be a float or a 1-D array.")
    return self._call_impl(t)


def _integrand_reads_active_values(args, kwargs):
    """Whether the integrand (first argument, or ``func``/``f``) reads
    active values from outside its arguments, or ``args`` (quad's and
    fixed_quad's fourth argument) holds an object holding them."""
    candidates = list(args[:1]) + [kwargs.get(name) for name in ("func", "f")]
    extra = kwargs.get("args", args[3] if len(args) > 3 else None)
    return any(callable(c) and reads_recorded_values(c) for c in candidates) or \
        args_hold_recorded_objects(extra if isinstance(extra, tuple) else (extra,))


for _rule in (quadrature.quad, quadrature.quad_vec, quadrature.fixed_quad):
    _rule.routes_also = _integrand_reads_active_values

HOOKS = {("scipy.integrate", "solve_ivp"): solve_ivp, ("scipy.integrate", "odeint"): odeint,
         ("scipy.integrate", "solve_bvp"): bvp.solve_bvp,
         ("scipy.integrate._ivp.common", "OdeSolution.__call__"): ode_solution_call,
         ("scipy.integrate._ivp.base", "DenseOutput.__call__"): dense_output_call,
         ("scipy.integrate._ivp.base", "OdeSolver.__init__"): ode_solver_init,
         ("scipy.integrate._ode", "ode.set_initial_value"): ode_integrate,
         ("scipy.integrate._ode", "ode.integrate"): ode_integrate,
         **{("scipy.integrate", name): getattr(quadrature, name)
            for name in ("quad", "quad_vec", "fixed_quad")},
         # (dblquad and tplquad call nquad)
         ("scipy.integrate", "nquad"): nested_quad.nquad,
         **samples.HOOKS,
         # linear in the samples (adsim/_scipy/linear_maps.py)
         ("scipy.integrate", "cumulative_simpson"): linear_in(
             scipy.integrate.cumulative_simpson, "y", "scipy.integrate.cumulative_simpson")}


def covers(obj):
    """No module-level object of scipy.integrate takes rules of its own (the
    explicit namespace asks): ``OdeSolution`` and the interpolants are
    made by ``solve_ivp``, their calls routed by the hooks."""
    return False
