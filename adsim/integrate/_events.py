"""Events: zeros of ``event(t, y, *args)`` located on the interpolant of each
accepted step, as SciPy's ``solve_ivp`` locates them, with derivatives.

After every accepted step the event functions are evaluated at its end;
a sign change (in the event's ``direction``) since the start of the step
makes the event *active*. Its time is the zero of
``G(tau) = event(tau, y_interp(tau), *args)`` on the step, found by
``brentq`` (the tolerances SciPy uses). Inside a recording that zero is one
op: its value is found again at every replay, and its derivatives follow
from the implicit function theorem, ``dtau = -(dG/dinputs) / (dG/dtau)``,
with both partial derivatives of ``G`` taken by adsim. Whether an event is
active, and the order of the zeros, are recorded comparisons (branches).
"""
import numpy as np
from scipy.optimize import brentq

from ..api import grad, jvp
from ..checkpoint.layout import StateLayout
from ..errors import UnsupportedOperation
from ..primitives import primitive
from .._active import Active
from ._common import EPS
from ._rhs import real_array

__all__ = ["Events"]


class Events:
    """The event functions of one problem, with SciPy's ``terminal`` and
    ``direction`` attributes; counts, times and states of the events met."""

    def __init__(self, events, args):
        functions = (events,) if callable(events) else tuple(events)
        if not all(callable(e) for e in functions):
            raise TypeError("adsim.integrate.solve_ivp: events must be a callable or a sequence "
                            "of callables event(t, y, *args)")
        self.functions = functions
        self.args = args
        self.limit = []
        for e in functions:
            terminal = getattr(e, "terminal", None)
            if terminal is None or terminal == 0:
                self.limit.append(np.inf)
            elif int(terminal) == terminal and terminal > 0:
                self.limit.append(int(terminal))
            else:
                raise ValueError("The `terminal` attribute of each event must be a boolean or "
                                 "positive integer.")
        self.direction = [float(getattr(e, "direction", 0)) for e in functions]
        self.count = [0] * len(functions)
        self.times = [[] for _ in functions]
        self.states = [[] for _ in functions]
        self._roots = [None] * len(functions)

    def values(self, t, y, args):
        return [real_array(e(t, y, *args), "event(t, y)").reshape(()) for e in self.functions]

    def active(self, g, g_new):
        """Indices of the events whose sign changed (SciPy's rule: a zero at
        either end counts, in the event's direction)."""
        found = []
        for i, (a, b, d) in enumerate(zip(g, g_new, self.direction)):
            up = a <= 0 and b >= 0
            down = a >= 0 and b <= 0
            if (up and d > 0) or (down and d < 0) or ((up or down) and d == 0):
                found.append(i)
        return found

    def handle(self, method, state, active):
        """Locate the active events of the last step of ``state``: records
        their times and states; returns the time to stop at, or None."""
        layout = StateLayout(tuple(state))
        inputs = (layout.flatten(tuple(state)),) + tuple(a for a in self.args if _is_input(a))
        roots = [self._root(method, i, layout)(*inputs) for i in active]
        for i in active:
            self.count[i] += 1
        terminate = any(self.count[i] >= self.limit[i] for i in active)
        if terminate:                  # in the order met; stop at the first terminal one
            order = sorted(range(len(roots)), key=_Ordered(roots, method.direction))
            active, roots = [active[k] for k in order], [roots[k] for k in order]
            last = next(k for k, i in enumerate(active) if self.count[i] >= self.limit[i])
            active, roots = active[:last + 1], roots[:last + 1]
        for i, root in zip(active, roots):
            self.times[i].append(root)
            self.states[i].append(method.dense(state, root, self.args))
        if terminate:
            self.stopped_by = active[-1]
        return roots[-1] if terminate else None

    stopped_by = None       # the index of the terminal event that ended the integration

    def results(self, n):
        """SciPy's ``t_events`` and ``y_events``."""
        t_events = [real_array(ts, "t_events") if ts else np.empty(0) for ts in self.times]
        y_events = [real_array(ys, "y_events") if ys else np.empty((0, n)) for ys in self.states]
        return t_events, y_events

    def _root(self, method, i, layout):
        if self._roots[i] is None:
            self._roots[i] = _event_time(method, self.functions[i], self.args, layout)
        return self._roots[i]


class _Ordered:
    """Sort key of roots in the direction of integration (recorded comparisons)."""

    def __init__(self, roots, direction):
        self.roots = roots
        self.direction = direction

    def __call__(self, k):
        return _Key(self.roots[k] * self.direction)


class _Key:
    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        return bool(self.value < other.value)


def _is_input(a):
    return isinstance(a, Active) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _event_time(method, event, args, layout):
    """The op ``tau(z, *arrays)``: the zero of the event on the interpolant of
    the last step of the flat solver state ``z`` (``arrays``: the float
    arrays among ``args``, which may be active)."""
    positions = [k for k, a in enumerate(args) if _is_input(a)]

    def full_args(arrays):
        full = list(args)
        for k, a in zip(positions, arrays):
            full[k] = a
        return tuple(full)

    def G(tau, z, *arrays):
        state = method.State(*layout.unflatten(z))
        full = full_args(arrays)
        return real_array(event(tau, method.dense(state, tau, full), *full), "event").reshape(())

    def value(z, *arrays):
        state = method.State(*layout.unflatten(z))
        return np.array(brentq(lambda tau: float(G(tau, z, *arrays)), state.t_old, state.t,
                               xtol=4 * EPS, rtol=4 * EPS))

    def slopes(tau, inputs):
        """dG/dtau and dG/d(inputs) at the zero."""
        derivatives = grad(G, argnums=tuple(range(1 + len(inputs))))(tau, *inputs)
        return derivatives[0], derivatives[1:]

    def tau_jvp(inputs, tau, tangents):
        directions = tuple(np.zeros(np.shape(x)) if d is None else d
                           for x, d in zip(inputs, tangents))
        _, along = jvp(lambda *xs: G(tau, *xs), tuple(inputs), directions)
        return -along / slopes(tau, inputs)[0]

    def tau_vjp(inputs, tau, tau_adjoint):
        if any(isinstance(x, Active) for x in inputs):
            raise UnsupportedOperation(
                "adsim.integrate.solve_ivp: Hessian-vector products through event times are not "
                "supported (second derivatives of a zero are not recorded); use grad, jvp or vjp")
        g_tau, g_inputs = slopes(tau, inputs)
        return tuple(-tau_adjoint / g_tau * g for g in g_inputs)

    prim = primitive(value, jvp=tau_jvp, vjp=tau_vjp,
                     name=f"time of event {getattr(event, '__name__', '')}".rstrip())
    prim.not_saved = ("the time of an event of solve_ivp, which every replay finds again with "
                      "brentq on the event function (code)")
    return prim
