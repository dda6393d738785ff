"""Events: zeros of ``event(t, y, *args)`` located on the interpolant of each
accepted step, as SciPy's ``solve_ivp`` locates them, with derivatives.

After every accepted step the event functions are evaluated at its end;
a sign change (in the event's ``direction``) since the start of the step
makes the event *active*. Its time is the zero of
``G(tau) = event(tau, y_interp(tau), *args)`` on the step, found by
``brentq`` (the tolerances SciPy uses). Inside a recording that zero is one
op: ``G`` is recorded as a tape of ``(tau, state, arrays)`` (one per branch
path met), every replay finds the zero again by ``brentq`` on that tape, and
the derivatives follow from the implicit function theorem,
``dtau = -(dG/dinputs) / (dG/dtau)``, with both partial derivatives of
``G`` from its tape. A tape file holds those tapes, not the event function:
a loaded op finds the same zeros bitwise, and raises BranchChanged where
``G`` takes a branch none of them recorded. Whether an event is active, and
the order of the zeros, are recorded comparisons (branches).
"""
import numpy as np
from scipy.optimize import brentq

from ..checkpoint.layout import StateLayout
from ..errors import BranchChanged, TapeFileError, UnsupportedOperation
from ..primitives import Application, Primitive
from .._containers.tree import placed
from .._active import Active
from .._filefields import expect_keys, shape_field
from .._nesting.nested import RecordingInner, SavedInner
from ._common import EPS
from ._rhs import real_array

__all__ = ["Events", "event_values", "sign_changes"]


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
        self.direction = tuple(float(getattr(e, "direction", 0)) for e in functions)
        self.count = [0] * len(functions)
        self.times = [[] for _ in functions]
        self.states = [[] for _ in functions]
        self._roots = [None] * len(functions)

    def values(self, t, y, args):
        return event_values(self.functions, t, y, args)

    def active(self, g, g_new):
        return sign_changes(g, g_new, self.direction)

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


def event_values(functions, t, y, args):
    """The values of the event ``functions`` at ``(t, y)``."""
    return [real_array(e(t, y, *args), "event(t, y)").reshape(()) for e in functions]


def sign_changes(g, g_new, direction):
    """Indices of the events whose sign changed from ``g`` to ``g_new``
    (SciPy's rule: a zero at either end counts, in the event's direction)."""
    found = []
    for i, (a, b, d) in enumerate(zip(g, g_new, direction)):
        up = a <= 0 and b >= 0
        down = a >= 0 and b <= 0
        if (up and d > 0) or (down and d < 0) or ((up or down) and d == 0):
            found.append(i)
    return found


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
        return placed(args, positions, arrays)

    def G(tau, z, *arrays):
        state = method.State(*layout.unflatten(z))
        full = full_args(arrays)
        return real_array(event(tau, method.dense(state, tau, full), *full), "event").reshape(())

    name = getattr(event, "__name__", "") or "event"
    return EventTime(RecordedEvent(G, name), _bracket(method.State, layout))


def _bracket(State, layout):
    """The positions of ``t_old`` and ``t`` (the step's ends) in the flat state."""
    offsets = np.cumsum([0] + layout.sizes)
    return tuple(int(offsets[State._fields.index(field)]) for field in ("t_old", "t"))


class RecordedEvent(RecordingInner):
    """``G(tau, z, *arrays)`` of one event function in the process that has
    it: its recorded variants (one tape per branch path met, which a tape
    file saves), and ``G`` recorded again where none holds."""

    def __init__(self, G, name):
        super().__init__(G, name, f"the time of event `{name}`")
        self.G = G


class EventTime(Primitive):
    """The time of an event as one op: the zero of ``G`` on the step found
    by ``brentq`` on the recorded ``G`` (the same tapes in this process and
    in one that loaded them from a tape file), its derivatives by the
    implicit function theorem with both partial derivatives of ``G`` from
    the same tapes. ``inner``: a RecordedEvent or, loaded, a SavedInner;
    ``bracket``: the positions of the step's ends in the flat state."""

    explains_recorded_rule = True

    def __init__(self, inner, bracket):
        self.inner, self.bracket = inner, bracket
        super().__init__(self._value, jvp=self._jvp, vjp=self._vjp)
        self.name = f"time of event {inner.name}"

    def applied(self, in_shapes, out_shape, first_value):
        return EventTimeApplication(self, in_shapes, out_shape, first_value=first_value)

    def _on_g(self, tau, inputs, method):
        return self.inner.run((np.array(tau, dtype=float),) + tuple(inputs), method)

    def _value(self, z, *arrays):
        start, end = (float(z[k]) for k in self.bracket)
        try:
            return np.array(brentq(lambda tau: self._on_g(tau, (z,) + arrays, _forward), start,
                                   end, xtol=4 * EPS, rtol=4 * EPS))
        except ValueError as err:
            # the outer tape's branches keep a sign change between the step's ends, so
            # only a tape file's description of them can be wrong here
            raise TapeFileError(f"adsim: the {self.name} finds no zero between the times at "
                                f"positions {list(self.bracket)} of the step's state "
                                f"({start!r}, {end!r}): the tape file that described it is "
                                f"inconsistent ({err}); write it again with tape.save") from err

    def _slopes(self, tau, inputs):
        """dG/dtau and dG/d(inputs) at the zero."""
        derivatives = self._on_g(tau, inputs, _gradient)
        return derivatives[0], derivatives[1:]

    def _jvp(self, inputs, tau, tangents):
        directions = (np.zeros(()),) + tuple(np.zeros(np.shape(x)) if d is None else d
                                             for x, d in zip(inputs, tangents))
        along = self._on_g(tau, inputs, lambda tape, values: tape.jvp(values, directions)[1])
        return -along / self._slopes(tau, inputs)[0]

    def _vjp(self, inputs, tau, tau_adjoint):
        if any(isinstance(x, Active) for x in inputs):
            # second-order sweeps call second_order instead of recording this rule
            raise UnsupportedOperation(
                "adsim.integrate.solve_ivp: derivatives of order three and more through event "
                "times are not supported; grad, jvp, vjp and hvp are")
        g_tau, g_inputs = self._slopes(tau, inputs)
        return tuple(-tau_adjoint / g_tau * g for g in g_inputs)

    def second_order(self, inputs, tau, tangents, adjoint, adjoint_tangents):
        """The inputs' adjoints, and their tangents in p directions, by the
        implicit function theorem differentiated once more. The zero tau(x)
        of G(tau, x) has the slope s = -G_x / G_tau; along a direction xdot
        (taudot = s . xdot, d = (taudot, xdot)) the slope changes by
        ds = -([H d]_x + s [H d]_tau) / G_tau, H the Hessian of G, whose
        products with d are one second-order sweep of G's tape. ``tangents``:
        per input None or (p, size); ``adjoint`` (1,); ``adjoint_tangents``
        (p, 1). Returns ([adjoint (size,)], [adjoint tangents (p, size)])."""
        p = adjoint_tangents.shape[0]
        w = float(adjoint[0])
        g_tau, g_inputs = self._slopes(tau, inputs)
        slopes = [np.ravel(-g / g_tau) for g in g_inputs]
        xdots = [np.zeros((p, s.size)) if t is None else np.reshape(t, (p, s.size))
                 for s, t in zip(slopes, tangents)]
        taudot = sum(xd @ s for xd, s in zip(xdots, slopes)).reshape(p, 1)
        if w != 0.0:
            def curvature(tape, values):
                V = [taudot] + xdots
                return tape._soadjoint(tape._inputs(values), V, np.ones(1), None, False)[3]
            h = self._on_g(tau, inputs, curvature)
            h_tau = h[0].reshape(p, 1)
            slope_dots = [-(h_x.reshape(p, -1) + s * h_tau) / g_tau for h_x, s in zip(h[1:], slopes)]
        else:
            slope_dots = [np.zeros((p, s.size)) for s in slopes]
        return ([w * s for s in slopes],
                [adjoint_tangents[:, :1] * s + w * sd for s, sd in zip(slopes, slope_dots)])


def _forward(tape, values):
    return tape.forward(*values)


def _gradient(tape, values):
    return tape.gradient(*values)


class EventTimeApplication(Application):
    """One recorded event time. A tape file saves the recorded variants of
    its ``G`` and the positions of the step's ends in the state; a loaded
    one finds the zero on those variants and raises BranchChanged where none
    holds (it has no code to record the event function again)."""

    file_kind = "adsim.event_time"

    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents, context=None):
        return self.prim.second_order(self._args(flat_args), np.reshape(result, ()), tangents,
                                      np.reshape(adjoint, -1), np.reshape(
                                          adjoint_tangents, (np.shape(adjoint_tangents)[0], -1)))

    def file_state(self):
        return {"event": self.prim.inner.name, "bracket": list(self.prim.bracket),
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, self.prim.inner.variants.tapes()

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("event", "bracket", "in_shapes", "out_shape"))
        name, bracket = state["event"], state["bracket"]
        if not isinstance(name, str) or not isinstance(state["in_shapes"], list) or not tapes:
            raise ValueError("an event time is described by its event's name, the step's ends "
                             "and shapes, and owns the tapes of its event function")
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        out_shape = shape_field(state["out_shape"], "the output shape")
        if not in_shapes or len(in_shapes[0]) != 1 or out_shape != ():
            raise ValueError(f"an event time maps a flat state and arrays to a number, not "
                             f"{in_shapes} to {out_shape}")
        if not (isinstance(bracket, list) and len(bracket) == 2
                and all(type(k) is int and 0 <= k < in_shapes[0][0] for k in bracket)):
            raise ValueError(f"the step's ends {bracket!r} are not two positions in a state of "
                             f"{in_shapes[0][0]} values")
        inputs = [()] + in_shapes
        for tape in tapes:
            if [tuple(s) for s in tape.input_shapes] != inputs or tuple(tape.output_shape) != ():
                raise ValueError(f"a tape of the event function maps inputs "
                                 f"{tape.input_shapes} to {tape.output_shape}; the event time "
                                 f"has (time, state, arrays) {inputs}")
        inner = SavedInner(name, 0, tapes, f"the time of event `{name}`")
        return cls(EventTime(inner, tuple(bracket)), in_shapes, out_shape)
