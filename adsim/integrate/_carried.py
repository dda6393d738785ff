"""Output times in few checkpointed loops: the outputs travel in their state.

Inside a recording, when the solutions at the output times are small next
to the solver state, an integration with ``t_eval`` is one
``adsim.checkpoint_while`` loop from ``t0`` until the solver stops (as
SciPy's loop runs), or one per MAX_QUEUE output times (the next loop
carries on from the state of the one before). A loop's state is the
solver's flat state (:mod:`adsim.integrate._flat`) with four more fields:

* ``next_time``: the next output time;
* ``later_times``: the output times after it, the queue filled up behind
  with ``direction * inf``, a time no step reaches;
* ``outputs``: the interpolated solutions so far, newest last (a step that
  passes ``k`` output times shifts them forward by ``k`` rows and writes its
  ``k`` interpolants behind them, so after ``m`` outputs the last ``m``
  rows are the solutions at ``t_eval``);
* ``produced``: how many there are.

A loop's queue and rows have room for a power of two of output times (at
least ``m``, up to MAX_QUEUE, as many as fit): calls whose number of
output times differs a little have one layout, so that a later recording
can start from an earlier one's step variants
(:mod:`adsim.integrate._step_reuse`; BDF's derivatives come from a Radau
solve at BDF's step times, whose number moves with the parameters). A
full queue stops its loop at its last output time; the interpolants of
that step at the next output times it reached are made in the enclosing
tape, and the next loop queues the times after them.

A step that passes no output time costs three ops more than a plain step
(a comparison foreseeing the output test of each step at its start, so
that a replay leaving a recorded variant for an output leaves it early,
and the test itself); a replay runs the integration in compiled code with
no Python per output time, and the adjoint of each output enters the reverse sweep
at the step that made it, through the rows that carry it back there.

Without ``t_eval`` every accepted step is an output. Its time and solution
then travel in the state the same way (:class:`StepRows`): a loop runs the
attempts up to ``rows`` accepted steps, each accepted attempt shifting the
rows ``step_t`` and ``step_y`` forward by one and writing its own behind
them, and the next loop carries on from its state. A replay runs one loop
op per ``rows`` accepted steps, not one per step.
"""
import inspect
from math import prod

import numpy as np

from .._np.core import shape_of
from .._active import Active
from ..checkpoint import checkpoint_while
from ._events import event_values, sign_changes
from ._flat import FlatLayout, FlatView
from ._rhs import FAILED, RUNNING

__all__ = ["queue_length", "carried_outputs", "StepRows", "StateRows", "guarded_count",
           "SNAPSHOTS_PER_INTERVAL"]

# outputs of at most this many numbers always travel in the state
SMALL_OUTPUTS = 1024
# accepted steps carried by one loop at most: each step shifts them all on
MAX_ROWS = 32
# output times one loop queues: at most, and at least when not all fit
MAX_QUEUE, MIN_QUEUE = 128, 8
# the snapshots an interval between output times gets by default: checkpoint_while's
SNAPSHOTS_PER_INTERVAL = inspect.signature(checkpoint_while).parameters["snapshots"].default


def _room(state):
    """How many numbers the outputs may add to the loop state (see fits)."""
    return max(sum(prod(shape_of(v)) for v in state) // 8, SMALL_OUTPUTS)


def queue_length(state, m):
    """Output times one loop queues: ``m`` rounded up to a power of two, at
    most MAX_QUEUE and as many as fit (see fits); 0 (a loop per output
    time instead) when fewer than ``m`` and fewer than MIN_QUEUE fit: a
    step that may emit outputs has more variants than one that does not,
    which a short queue would not pay back."""
    room = min(1 << max(m - 1, 0).bit_length(), MAX_QUEUE)
    while room > 1 and not fits(state, room):
        room //= 2
    return room if fits(state, room) and (room >= m or room >= MIN_QUEUE) else 0


def fits(state, m):
    """Do ``m`` outputs travel in the loop state? Every step copies them on
    (and its reverse their adjoints), where a loop per output time costs
    Python per loop instead: they do when the fields they add hold at most
    an eighth of the numbers of the solver state (copying them adds little
    to a step of a large system), or at most SMALL_OUTPUTS (a small system,
    whose steps cost about what a loop's Python does)."""
    return m * (shape_of(state.y)[0] + 1) + 1 <= _room(state)


def carried_outputs(loop, method, state, times, t_bound, args, options_for):
    """Run the integration from ``state`` as loops of ``queue_length``
    output times each (``loop``: a callable like ``checkpoint_while``;
    ``options_for(k)``: its options for a loop of ``k`` intervals between
    output times); returns the final state (its solver fields readable as
    attributes) and the outputs at ``times``, as many as the integration
    reached (all unless it failed)."""
    m, n = shape_of(times)[0], shape_of(state.y)[0]
    room, d = queue_length(state, m), method.direction
    pad = d * np.inf
    carried = {"next_time": pad, "outputs": np.zeros((room, n)), "produced": 0.0}
    if room > 1:
        carried["later_times"] = np.full(room - 1, pad)
    layout = FlatLayout(method.State._fields + tuple(carried),
                        list(state) + list(carried.values()), method.State)

    def more(z, t_bound, *args):
        s = layout.view(z)
        return bool(s.status == RUNNING) and bool(s.produced < room)
    step = _step(method, layout, room)

    # intervals between output times: the last one ends the integration, or one more follows
    after = 0 if m and times[-1] == t_bound else 1
    view, outputs, at = state, [], 0
    while True:
        # a full queue stops the loop at its last output time; a shorter one
        # runs to the end of the integration
        k = min(room, m - at)
        queued = times[at:at + k]
        changes = {"next_time": queued[0] if k else pad, "produced": 0.0}
        if room > 1:
            changes["later_times"] = np.concatenate([queued[1:], np.full(room - max(k, 1), pad)])
        start = layout.vector(list(state) + [changes.get(name, v) for name, v in carried.items()]) \
            if view is state else layout.vector(view._replace(**changes), base=view)
        view = layout.view(loop(more, step, start,
                                (t_bound,) + tuple(args),
                                options_for(max(k + (after if at + k == m else 0), 1))))
        produced = k if view.status != FAILED else guarded_count(view.produced)
        rows = view.outputs
        outputs += [rows[j] for j in range(room - produced, room)]
        at += produced
        if produced < k:        # failed (a full queue stops the loop before a failed attempt)
            return view, outputs
        # the step that made the loop's last output may reach later times too
        while at < m and (times[at] <= view.t if d > 0 else times[at] >= view.t):
            outputs.append(method.dense(view, times[at], args))
            at += 1
        if view.status != RUNNING:
            return view, outputs


def _step(method, layout, m):
    solver = method.State._fields
    d = method.direction

    def attempt(z, t_bound, *args):
        view = layout.view(z)
        # Foresee the output test of the step (after its work) by one recorded
        # comparison at its start: a replay whose step reaches an output time
        # where the recorded one did not (or the reverse) leaves the recorded
        # variant here, before the work, not after it. Its outcome decides nothing.
        t, h, te = view.t, view.h_abs, view.next_time
        bool(te <= t + h if d > 0 else te >= t - h)
        s, accepted = method.attempt(view, t_bound, args)
        if not isinstance(s, FlatView):     # a new state of the method's own type
            s = view._replace(**dict(zip(solver, s)))
        if accepted:
            s = _emit(method, layout, s, m, args)
        return layout.vector(s, base=view)
    return attempt


def _emit(method, layout, s, m, args):
    """State ``s`` after an accepted step, with the interpolants of the step
    at the output times it reached appended to the outputs (written in
    place into the step's input vector)."""
    d, t = method.direction, s.t
    due, te = [], s.next_time
    while te <= t if d > 0 else te >= t:
        due.append(te)
        if len(due) == m:
            break
        te = s.later_times[len(due) - 1]
    k = len(due)
    if not k:
        return s
    pad = d * np.inf
    layout.push_rows(s, "outputs", [method.dense(s, te, args) for te in due])
    changes = dict(produced=s.produced + k)
    if m > 1:
        later = s.later_times
        changes["next_time"] = later[k - 1] if k < m else pad
        changes["later_times"] = np.full(m - 1, pad) if k >= m - 1 else \
            np.concatenate([later[k:], np.full(k, pad)])
    else:
        changes["next_time"] = pad
    s = s._replace(**changes)
    return method.count_dense(s) if method.dense_evaluations else s


def guarded_count(count):
    """A recorded count as an int, under one guard: a replay at which the
    count differs leaves the tape there."""
    if not isinstance(count, Active):
        return int(count)
    k = int(np.asarray(count.tape.slot_value(count.slot)).reshape(-1)[0])
    if not bool(count == k):
        raise AssertionError(f"adsim.integrate: a count of {k} that is not {k}")
    return k


class StepRows:
    """The accepted steps of an integration, ``rows`` per loop, travelling
    in the loop state (see the module's text): their times and solutions,
    or (``whole``, for a dense output) the whole solver state after each.
    ``loop`` runs a loop like ``checkpoint_while`` with ``(cond, step,
    state, args, options)``."""

    def __init__(self, method, state, rows, events=None, whole=False):
        self.rows, self.whole = rows, whole
        self.State = State = method.State
        self.solver = FlatLayout(State._fields, list(state), State)
        carried = {"step_states": np.zeros((rows, self.solver.size))} if whole else \
            {"step_t": np.zeros(rows), "step_y": np.zeros((rows, shape_of(state.y)[0]))}
        self._carried = list(carried.values())
        self.layout = FlatLayout(State._fields + tuple(carried),
                                 list(state) + self._carried, State)
        self.condition = _below(self.layout, rows, events)
        self.step = _accepting(method, self.layout, self.solver.size if whole else None)

    @staticmethod
    def per_loop(state, whole=False):
        """Rows of one loop for this state: as many as the outputs' room
        holds (see fits), up to MAX_ROWS; 0 when fewer than two fit."""
        row = sum(prod(shape_of(v)) for v in state) if whole else shape_of(state.y)[0] + 1
        rows = min(_room(state) // row, MAX_ROWS)
        return rows if rows >= 2 else 0

    def solver_state(self, view):
        """The solver's state (without the rows) of a view the loop ended with."""
        return self.State(*(getattr(view, name) for name in self.State._fields))

    def run(self, loop, state, t_bound, args, options):
        """From ``state`` (the solver's, or the view a loop of these rows
        ended with) to the ``rows``-th accepted step, the end of the
        integration or (with events) the first step in which an event's
        sign changes: ``(final view, k)``, ``k`` the loop's accepted steps."""
        if isinstance(state, FlatView) and state._layout is self.layout and state.pristine:
            start = state._z
        else:
            start = self.layout.vector(list(state) + self._carried)
        handled = state.n_accepted
        if not isinstance(handled, Active):
            handled = np.asarray(handled, dtype=float)
        final = self.layout.view(loop(self.condition, self.step, start,
                                      (t_bound, handled) + tuple(args), options))
        return final, guarded_count(final.n_accepted - handled)

    def times_and_solutions(self, final, k):
        """The times of the last ``k`` accepted steps of a loop that ended
        with ``final`` and their solutions as columns."""
        return final.step_t[self.rows - k:], final.step_y[self.rows - k:].T

    def state_rows(self, final, k):
        """(``whole``) The solver states after the last ``k`` accepted steps,
        as the rows of a 2-d array (see :class:`StateRows`)."""
        return final.step_states[self.rows - k:]


class StateRows:
    """The solver states after the accepted steps of an integration, as the
    rows of the loops' 2-d arrays (``blocks``): the rows together
    (:meth:`rows`, one array for the interpolants of many steps at once)
    or one state (``states[j]``, a view of row j made when asked for)."""

    def __init__(self, layout, blocks):
        self.layout = layout
        self.blocks = list(blocks)
        self._starts = np.cumsum([0] + [shape_of(b)[0] for b in self.blocks])
        self._joined = None

    def __len__(self):
        return int(self._starts[-1])

    def __getitem__(self, j):
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(j)
        block = int(np.searchsorted(self._starts, j, side="right")) - 1
        return self.layout.view(self.blocks[block][j - self._starts[block]])

    def rows(self):
        """All states as the rows of one 2-d array (made once)."""
        if self._joined is None:
            self._joined = self.blocks[0] if len(self.blocks) == 1 else \
                np.concatenate(self.blocks)
        return self._joined


def _below(layout, rows, events):
    """Attempts continue while the integration runs and fewer than ``rows``
    steps have been accepted since the loop began (``handled``), and stop
    after an accepted step in which an event function changes sign."""
    # the event functions and directions only: the Events object holds the times met
    functions, directions = (events.functions, events.direction) if events else (None, None)

    def more(z, t_bound, handled, *args):
        s = layout.view(z)
        if s.status != RUNNING:
            return False
        if functions is not None and s.n_accepted != handled and sign_changes(
                event_values(functions, s.t_old, s.y_old, args),
                event_values(functions, s.t, s.y, args), directions):
            return False
        return bool(s.n_accepted < handled + rows)
    return more


def _accepting(method, layout, whole=None):
    """One attempt; an accepted one writes its time and solution (or, with
    ``whole`` the size of the solver state, that state) behind the rows,
    in place into the step's input vector (or its output vector)."""
    solver = method.State._fields

    def attempt(z, t_bound, handled, *args):
        view = layout.view(z)
        s, accepted = method.attempt(view, t_bound, args)
        if not isinstance(s, FlatView):     # a new state of the method's own type
            s = view._replace(**dict(zip(solver, s)))
        if accepted and whole is None:
            layout.push_rows(s, "step_t", [s.t])
            layout.push_rows(s, "step_y", [s.y])
        out = layout.vector(s, base=view)
        if accepted and whole is not None:
            # the solver's fields come first in the vector
            layout.push_rows(layout.view(out), "step_states", [out[np.arange(whole)]])
        return out
    return attempt
