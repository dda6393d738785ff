"""``scipy.integrate.solve_ivp`` called unchanged inside a recording: a call
whose arguments, or whose ``fun``/``jac``/``events`` closures, hold active
values is :func:`adsim.integrate.solve_ivp` (the same steps and numbers as
SciPy's, differentiable); every other call is SciPy's. ``odeint`` (LSODA)
has no differentiable counterpart here: such a call says what to use.
"""
from .._nesting.nested import reads_recorded_values
from ..errors import UnsupportedOperation


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
    return any(callable(c) and reads_recorded_values(c) for c in candidates)


solve_ivp.routes_also = _reads_active_values


def odeint(func, y0, t, *args, **kwargs):
    raise UnsupportedOperation(
        "adsim: scipy.integrate.odeint (LSODA) on active values is not differentiable here; "
        "call scipy.integrate.solve_ivp(lambda t, y: func(y, t, *args), (t[0], t[-1]), y0, "
        "t_eval=t, method='RK45' (or 'BDF'/'Radau' for stiff problems)) instead: inside a "
        "recording it is adsim.integrate.solve_ivp, differentiable in every mode")


odeint.routes_also = lambda args, kwargs: bool(args) and callable(args[0]) and \
    reads_recorded_values(args[0])

HOOKS = {("scipy.integrate", "solve_ivp"): solve_ivp, ("scipy.integrate", "odeint"): odeint}
