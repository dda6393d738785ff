"""Running a method: to each output time under checkpointing, or step by step.

With ``t_eval`` the integration is cut at the output times: the attempts
up to the first step that reaches ``t_eval[j]`` are one
``adsim.checkpoint_while`` loop (one op of the enclosing tape, replayed in
C, reversed with online checkpointing), and the output at ``t_eval[j]`` is
the dense output of that step, recorded in the enclosing tape. The adjoint
of output ``j`` therefore enters the reverse sweep between loop ``j + 1``
and loop ``j``, at its time. With events a loop also stops after a step in
which an event function changes sign; the events of that step are located
in the enclosing tape, and the next loop carries on. The loops do not
change the steps: each runs the attempts one long loop would, so the step
sequence is SciPy's. Inside a recording a loop's state is the solver state
as one flat vector (:mod:`adsim.integrate._flat`), passed from one loop to
the next as it is; on plain values it is the state's tuple.

Without events, and when the outputs are small next to the solver state,
the whole integration is one loop instead, the outputs travelling in its
state (:mod:`adsim.integrate._carried`): a replay then runs no Python per
output time.

Without ``t_eval`` every accepted step is an output. Inside a recording
the steps' times and solutions (with ``dense_output``, the whole solver
states) travel in the loop state, up to 32 steps per loop
(:class:`adsim.integrate._carried.StepRows`): a replay runs one loop op
per that many steps, and a loop also stops after a step that meets an
event, which the enclosing tape then locates. When a system is too large
for two rows, the attempts up to each accepted step are one loop, and each
step's time and solution are read from its loop's state in the enclosing
tape. Either way the loops of a call share one recorded step, replayed in
C, and memory grows with the number of steps, as the output does.
"""
import numpy as np

from .._np.core import shape_of
from .._active import Active
from ..checkpoint import checkpoint_while
from ..checkpoint.loop import grouped_while, while_options
from ..errors import MixedRecordings
from ._carried import (SNAPSHOTS_PER_INTERVAL, StateRows, StepRows, carried_outputs,
                       queue_length)
from ._events import event_values, sign_changes
from ._flat import FlatLayout, FlatView
from ._parameters import read_outside_arguments
from ._rhs import FAILED, RUNNING, real_array

__all__ = ["Run"]


class Run:
    """One integration: the method, the end of the interval, ``fun``'s extra
    arguments, the events (or None). After :meth:`outputs_at` or
    :meth:`every_step`: ``state`` (the final solver state), ``stop`` (the
    time of a terminal event, or None) and ``marks`` (the accepted-step
    count of every step whose interpolant was used, in order). After
    :meth:`every_step`, ``steps`` holds the state after each accepted step
    (the interpolants of ``dense_output``)."""

    def __init__(self, method, t_bound, args, events=None, group=None, setup=None):
        self.method = method
        self.t_bound = t_bound
        self.args = args
        self.events = events
        self.group = group              # the LoopGroup of the loops, inside a recording
        self.setup = setup              # its StepSetup: the variants of an earlier recording
        self.state = None
        self.stop = None
        self.marks = []
        self.steps = []
        self.layout = None          # of the flat loop state, once a loop is recorded
        self._functions = None      # (condition, step, layout, one_step): one recorded step

    # ---- step by step ------------------------------------------------------------
    def accepted_steps(self, state):
        """``(t, y)`` of every accepted step, the start included, as arrays
        (``y`` of shape ``(n, steps)``; the last one at the time of a
        terminal event); without a dense output."""
        carrier = self._rows(state, whole=False)
        if carrier is None:
            times, ys = self.every_step(state)
            return real_array(list(times), "t"), np.stack(ys, axis=1)
        times, ys = [np.reshape(real_array(state.t, "t"), (1,))], [np.reshape(state.y, (-1, 1))]
        for view, k in self._loops_of_rows(state, carrier):
            t, y = carrier.times_and_solutions(view, k)
            if self.stop is not None:       # a terminal event in the last step
                s = carrier.solver_state(view)
                t = np.concatenate([t[:-1], np.reshape(self.stop, (1,))])
                y = np.concatenate([y[:, :-1], np.reshape(
                    self.method.dense(s, self.stop, self.args), (-1, 1))], axis=1)
            times.append(t)
            ys.append(y)
        return np.concatenate(times), np.concatenate(ys, axis=1)

    def accepted_states(self, state):
        """:meth:`accepted_steps` for a dense output: ``steps`` holds the
        state after each accepted step (inside a recording, a
        :class:`StateRows` of the rows the states travel in)."""
        carrier = self._rows(state, whole=True)
        if carrier is None:
            times, ys = self.every_step(state)
            return real_array(list(times), "t"), np.stack(ys, axis=1)
        times, ys, blocks = [np.reshape(real_array(state.t, "t"), (1,))], \
            [np.reshape(state.y, (-1, 1))], []
        for view, k in self._loops_of_rows(state, carrier):
            blocks.append(carrier.state_rows(view, k))
            rows = carrier.solver.rows(blocks[-1])
            times.append(rows.t)
            ys.append(rows.y.T)
        self.steps = StateRows(carrier.solver, blocks) if blocks else []
        t, y = np.concatenate(times), np.concatenate(ys, axis=1)
        if self.stop is not None:           # a terminal event in the last step
            t = np.concatenate([t[:-1], np.reshape(self.stop, (1,))])
            y = np.concatenate([y[:, :-1], np.reshape(
                self.method.dense(self.steps[-1], self.stop, self.args), (-1, 1))], axis=1)
        return t, y

    def _rows(self, state, whole):
        """The StepRows of this integration (inside a recording, when two
        rows or more fit), or None."""
        if self.group is None or not _recorded(state, (self.t_bound,) + self.args):
            return None
        rows = StepRows.per_loop(state, whole)
        if not rows:
            return None
        self._inherit(("state rows" if whole else "rows", rows, self.events is not None), state)
        return StepRows(self.method, state, rows, self.events, whole)

    def _loops_of_rows(self, state, carrier):
        """The loops of ``carrier`` from ``state`` to the end of the
        integration: ``(final view, accepted steps)`` of each that accepted
        one; an event the last step met is handled (``stop`` set when it
        ends the integration)."""
        events, args = self.events, self.args
        while state.status == RUNNING:
            state, k = carrier.run(self._checkpointed, state, _input(self.t_bound), args,
                                   {"max_steps": None})
            self.state = state
            if k == 0:       # failed before accepting a step
                return
            if events is not None:      # did the loop stop at an event?
                s = carrier.solver_state(state)
                active = events.active(events.values(s.t_old, s.y_old, args),
                                       events.values(s.t, s.y, args))
                if active and self._handle(s, active):      # it ends the integration
                    yield state, k
                    return
            yield state, k

    def every_step(self, state):
        """(times, solutions) of every accepted step, the start included (the
        last one at the time of a terminal event)."""
        method, events = self.method, self.events
        times, ys = [state.t], [state.y]
        g = events.values(state.t, state.y, self.args) if events else None
        looped = self.group is not None and _recorded(state, (self.t_bound,) + self.args)
        while state.status == RUNNING:
            if looped:          # the attempts up to the next accepted step: one loop
                before = state.n_accepted
                state = self._loop(state, self.t_bound, before, {"max_steps": None}, None,
                                   one_step=True)
                if state.n_accepted == before:          # failed before accepting one
                    break
            else:
                state, accepted = method.attempt(state, self.t_bound, self.args)
                if not accepted:
                    continue
            self.steps.append(state)
            if events is not None:
                g_new = events.values(state.t, state.y, self.args)
                active = events.active(g, g_new)
                g = g_new
                if active and self._handle(state, active):
                    times.append(self.stop)
                    ys.append(method.dense(state, self.stop, self.args))
                    break
            times.append(state.t)
            ys.append(state.y)
        self.state = state
        return times, ys

    # ---- checkpointed, to each output time -----------------------------------------
    def outputs_at(self, state, times, loop, stats=None):
        """Interpolated solutions at ``times`` (in the direction of
        integration), then the attempts to the end of the interval. Stops
        before the first time a failed integration did not reach or that
        lies beyond a terminal event. ``loop`` holds options of
        ``checkpoint_while``; ``stats`` (a list) receives one dict of work
        counts per loop (no loop runs after an output time that ends the
        integration; one loop per MAX_QUEUE output times when the outputs
        travel in its state, with ``snapshots`` per interval between output
        times)."""
        method, d = self.method, self.method.direction
        m = shape_of(times)[0]
        room = queue_length(state, m) if self.events is None and m and \
            _recorded(state, (times, self.t_bound) + self.args) else 0
        if room:
            self._inherit(("carried", room), state)
            snapshots = loop.get("snapshots", SNAPSHOTS_PER_INTERVAL)

            def options_for(intervals):
                return self._options(dict(loop, snapshots=snapshots * intervals), stats)
            self.state, outputs = carried_outputs(self._checkpointed, method, state, times,
                                                  _input(self.t_bound), self.args,
                                                  options_for)
            return outputs
        outputs, handled = [], 0.0
        for t_target in list(times) + [None]:
            if t_target is None and state.status != RUNNING:
                break           # the last output time ended the integration
            target = self.t_bound if t_target is None else t_target
            while True:
                state = self._loop(state, target, handled, loop, stats)
                if self.events is None or state.status == FAILED or state.n_accepted == 0 \
                        or state.n_accepted == handled:
                    break
                g = self.events.values(state.t_old, state.y_old, self.args)
                active = self.events.active(g, self.events.values(state.t, state.y, self.args))
                if not active:
                    break
                handled = state.n_accepted
                if self._handle(state, active) or d * (state.t - target) >= 0:
                    break
            self.state = state
            if state.status == FAILED or t_target is None:
                break
            if self.stop is not None and d * (t_target - self.stop) > 0:
                break
            outputs.append(method.dense(state, t_target, self.args))
            self.marks.append(state.n_accepted)
        return outputs

    def _handle(self, state, active):
        """Locate the active events of the last step; True when one terminates."""
        self.marks.append(state.n_accepted)
        self.stop = self.events.handle(self.method, state, active)
        return self.stop is not None

    def _loop(self, state, target, handled, loop, stats, one_step=False):
        """The attempts from ``state`` to the first step that reaches
        ``target`` (or, ``one_step``, to the next accepted step: ``handled``
        is then the accepted-step count at the start) as one loop."""
        if self.stop is not None:          # a terminal event ended the integration
            return state
        # the interval's end is a loop input, so that all loops share one step and condition
        args = (self.t_bound, _input(target), _input(handled)) + self.args
        if self.layout is None and _recorded(state, args):
            self.layout = FlatLayout(state._fields, state, self.method.State)
        layout = self.layout
        if layout is None:
            start = tuple(state)
        elif isinstance(state, FlatView) and state.pristine:
            start = state._z
        else:
            start = layout.vector(state)
        # the loops share their functions while the layout and the kind of
        # condition stay (a run makes one kind: every_step or outputs_at)
        if self._functions is None or self._functions[2] is not layout or \
                self._functions[3] != one_step:
            if self._functions is None and layout is not None:
                self._inherit(("one step" if one_step else "to times", self.events is not None),
                              state)
            condition = _one_more(self.method, layout) if one_step else \
                _condition(self.method, self.events, layout)
            self._functions = (condition, _step(self.method, layout), layout, one_step)
        condition, step = self._functions[:2]
        final = self._checkpointed(condition, step, start, args, self._options(loop, stats))
        return self.method.State(*final) if layout is None else layout.view(final)

    def _inherit(self, label, state):
        """Before the first loop (of kind ``label``, from ``state``): start
        from the variants of an earlier recording of the same loops."""
        if self.setup is not None and self.group is not None:
            self.setup.inherit(self.group, label, state)

    @staticmethod
    def _options(loop, stats):
        """Options of one ``checkpoint_while``; its work counts go to ``stats``."""
        options = dict(loop)
        if stats is not None:
            options["stats"] = {}
            stats.append(options["stats"])
        return options

    def _checkpointed(self, cond, step, state, args, options):
        """``checkpoint_while`` (in the integration's loop group, which shares
        one budget, inside a recording), its error on values read from
        closures reworded for ``fun``."""
        try:
            if self.group is None:
                return checkpoint_while(cond, step, state, args=args, **options)
            return grouped_while(self.group, cond, step, state, args, while_options(**options))
        except MixedRecordings as error:
            raise read_outside_arguments() from error


def _input(t):
    """A time as a loop input: an active value as it is, a number as an array."""
    return t if isinstance(t, Active) else np.asarray(t, dtype=float)


def _recorded(state, args):
    """Does the loop record (some value of the state or args is active)?"""
    return isinstance(state, FlatView) or any(isinstance(v, Active)
                                              for v in tuple(state) + tuple(args))


def _step(method, layout):
    """One attempt, on the state's tuple or (``layout``) its flat vector."""
    def attempt(state, t_bound, t_target, handled, *args):
        if layout is None:
            return tuple(method.attempt(method.State(*state), t_bound, args)[0])
        view = layout.view(state)
        return layout.vector(method.attempt(view, t_bound, args)[0], base=view)
    return attempt


def _one_more(method, layout):
    """Attempts continue until one is accepted (the accepted-step count is
    no longer ``handled``, the count at the loop's start) or the
    integration ends."""
    State = method.State        # not the method: its caches would keep cond from being recorded

    def more(state, t_bound, t_target, handled, *args):
        s = State(*state) if layout is None else layout.view(state)
        if s.status != RUNNING:
            return False
        return bool(s.n_accepted == handled)
    return more


def _condition(method, events, layout):
    """Attempts continue until a step reaches ``t_target`` (at least one
    step, so that there is an interpolant), and stop after a step whose
    events are not yet handled (its accepted-step count is not ``handled``)."""
    # the state's class and direction, not the method (its caches, a sparse
    # Jacobian's tape among them, would keep the condition from being recorded);
    # the event functions and directions only: the Events object also holds the
    # times met (active values)
    State, direction = method.State, method.direction
    functions, directions = (events.functions, events.direction) if events else (None, None)

    def more(state, t_bound, t_target, handled, *args):
        s = State(*state) if layout is None else layout.view(state)
        if s.status != RUNNING:
            return False
        if s.n_accepted == 0:
            return True
        if functions is not None and s.n_accepted != handled and sign_changes(
                event_values(functions, s.t_old, s.y_old, args),
                event_values(functions, s.t, s.y, args), directions):
            return False
        # direction * (t - t_target) < 0, one comparison
        return bool(s.t < t_target if direction > 0 else s.t > t_target)
    return more
