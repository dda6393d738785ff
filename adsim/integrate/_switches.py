"""A right-hand side that switches where the parameters move the switch.

The derivatives of a solve are those of the steps taken, each comparison
in ``fun`` keeping its recorded outcome. A jump of ``fun`` at a fixed time
(``1.0 if t < 2.0 else 0.0``) leaves them the model's to about the
tolerance (docs/integrate.md, "Step sizes held or followed"). A jump whose
time moves with the parameters -- at a parameter's time (``rate if t <
t_off else 0.0``, ``np.where(t < t_lock, b1, b2)``) or where the state
crosses a level (``k1 if y[0] > 0.5 else k2``) -- adds to the exact
derivative a term at the crossing (the jump times the crossing time's
derivative) that no step sees: without it the derivative is silently wrong
(``d y(5) / d t_off`` came out 0 where it is 0.22). Such a switch is an op
whose derivative is zero almost everywhere (a comparison or a rounding)
reading the state, or reading both the time and a parameter, and it
matters once its outcome changes during the integration.

:func:`moving_switches` records ``fun`` once as a tape of ``(t, y,
*params)`` and finds such ops on it; :func:`refuse_moving_switches`
evaluates them at the integration's points: the output points and, where
``fun`` has such a switch, every step end (solve_ivp then keeps the states
of all steps, as for a dense output, so that a switch crossed and crossed
back between two outputs is seen). A recorded branch is evaluated by a
replay of that tape, a selection that is data (``np.where(y > c, k1,
k2)``, ``np.sign(y)``, an index from ``np.searchsorted``, the quotient of
``np.mod(y, c)`` or of ``np.mod(t, T)`` by a parameter ``T``) by a replay
of the tape that returns its outcomes (adsim/integrate/_selections.py).
Where an outcome changes between two points, it bisects the segment and
raises :class:`~adsim.errors.UnsupportedOperation`, saying how to write the
switch so that its time is differentiated (a split ``t_span``, a terminal
event), when ``fun`` jumps there; a kink (upwind fluxes) passes, its
outputs first order only (adsim/integrate/_kinks.py). A kink written
without a comparison -- ``np.maximum``, ``np.minimum`` (``np.clip``,
``np.fmax``), ``np.abs`` of the state or of the time and a parameter --
has a side (``a >= b`` for ``maximum(a, b)``), read like a selection's
outcome; where it changes the segment is bisected the same way and
``fun``'s Jacobian compared on the two sides: only a jump of it counts
as a kink crossed (``v * abs(v)`` has none, and keeps its second
derivatives). The outcomes and sides at the start and the points are
recorded as branches, so replays at other parameters check them. A call
in ``fun`` that is not written again op by op (a checkpointed loop, a
nested derivative, an ODE solve) is looked into: refused when its tapes
compare or round (or cannot be read) and it reads the state or the time
and a parameter, and so is a selection beside it, whose outcomes cannot be
read past it; a maximum or minimum there, or beside it, makes the outputs
first order only (its side cannot be read). A branch on the time
alone (``if t < 0.5:``, a switch at a fixed time) is followed to the time
it changes, and the other side's switches checked from there (such a
``fun`` alone keeps the outputs' route, its step ends checked by a plain
run when recorded). Where the outputs are checkpointed (``memory_limit``,
``snapshots``, more than 256 equations, or such a ``fun``) the step ends
are found by the method run again on plain values, when recorded and at
every replay at other values (:func:`guard_step_ends`). A switch crossed
and crossed back within one step is not seen.
"""
import copy

import numpy as np

from .._active import Active
from .._containers.tree import placed
from .._decoder import decode, refs
from .._record.creation import suspended
from .._record.recording import record
from .._replay_guard import guard_structure
from .._validate import name_of
from ..errors import BranchChanged, UnsupportedOperation
from ._dense import recorded_values
from ._rhs import real_array
from ._selections import outcome_on, outcome_tape
from ..primitives import Application

__all__ = ["guard_step_ends", "refuse_moving_switches"]

# ops whose result is piecewise constant in their operands (as adsim/_scipy/jumps.py)
_STEPS = frozenset({"LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL",
                    "SIGN", "FLOOR", "CEIL", "TRUNC", "RINT", "ROUND", "FLOOR_DIVIDE"})
# integer data from the state (np.searchsorted, np.argmax as data): the index it picks steps
_INDEXES = frozenset({"SEARCH", "ARGEXT_AT"})
# ops that wrap their operand (continuous but where its quotient steps): the quotient's step
_WRAPS = {"REMAINDER": "floor", "FMOD": "trunc"}
_TIME, _STATE, _PARAMETER = 1, 2, 4
# ops continuous in their operands whose slope steps where the side they take changes
# (kinks): the side (adsim/integrate/_selections.py)
_KINKS = {"MAXIMUM": "maximum", "MINIMUM": "minimum", "ABS": "abs"}
# a kink crossed counts where fun's Jacobian jumps by more than this part of its size
_SLOPE_JUMP = 1e-6
# COMPARE's kinds (adsim/_opcodes.pxd); 5 (not equal) is the guard of bool(x)
_NAMES = {0: " (<)", 1: " (<=)", 2: " (>)", 3: " (>=)", 4: " (==)"}


def moving_switches(fun, vectorized, args, t0, y0):
    """The moving switches of ``fun`` (gathered: its active values are the
    Active entries of ``args``) recorded at ``(t0, y0)``: a
    :class:`_Switches`, or None when it has none. Raises
    UnsupportedOperation for a selection at a time that moves with the
    parameters, or one inside a call that cannot be checked."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Active)]
    params = [recorded_values(args[i]) for i in positions]

    def G(t, y, *params):
        state = y[:, None] if vectorized else y
        return real_array(fun(t, state, *placed(args, positions, params)), "fun(t, y)")
    ref = _Switches(fun, G, params, (np.array(recorded_values(t0)), recorded_values(y0)))
    if not ref.guards and ref.selections is None and not ref.unseen_kink and not ref.regimes:
        return None
    ref.active = [args[i] for i in positions]
    return ref


def refuse_moving_switches(ref, t0, y0, t, y, steps=None, direction=1.0, checked_only=None):
    """Raise UnsupportedOperation when the recording ``ref`` of
    :func:`moving_switches` jumps at a moving switch between ``(t0, y0)``
    and the points ``(t[j], y[:, j])``: the output points, and the step
    ends ``steps`` (times, states) when given, in the ``direction`` of
    time. The outcomes there are recorded branches; at the step ends
    ``checked_only`` (plain values), they are checked alone. Returns
    whether a kink is crossed on the way (see adsim/integrate/_kinks.py): a
    switch's outcome changed, or a kink's side where ``fun``'s Jacobian
    jumps, or ``fun`` calls a loop or a solve holding a kink (its sides
    cannot be read)."""
    if steps is not None:
        t, y = _merged((t, y), steps, direction)
    ts, ys = recorded_values(t), recorded_values(y)
    crossed = ref.unseen_kink
    if checked_only is not None:        # checked there, the branches recorded at (t, y)
        crossed = _walk(ref, *_merged((ts, ys), checked_only, direction))[1] or crossed
    holding, at_points = _walk(ref, ts, ys)
    crossed = crossed or at_points
    active = holding[0].active
    # what fun takes at the start and the points, recorded here: a replay where it differs
    # (the steps record another variant of theirs without coming back here) records again
    if any(h.guards or h.regimes for h in holding):     # its branches
        for j in range(ts.shape[0]):
            holding[0].G(t[j], y[:, j], *active)
    if any(h.selections is not None for h in holding):
        held_selections(holding, (t0, y0), (t, y), active)
    return crossed


def guard_step_ends(ref, step_ends, start, recorded_ends):
    """Record a check, run at every replay, of the switches along the step
    ends of an integration whose outputs are checkpointed (no step end is
    on the tape, so its ops cannot hold their outcomes): at the replay's
    start ``(t0, y0, t)`` and parameters, ``step_ends(start, params)``
    (the method run again on plain values) gives the step ends, where no
    jump may be crossed, nor a kink or a switch where the recording
    crossed none. A replay where one is crossed (and crossed back) between
    two outputs then raises BranchChanged, and a recording there refuses
    it or makes its outputs first order only. At the recorded values
    nothing runs again; ``recorded_ends`` are the step ends there, already
    found."""
    fun, G, active = ref.fun, ref.G, ref.active
    first = [recorded_ends]             # (the recording's own path: its ends are found)
    recorded = []                       # whether the recording crossed a kink on them

    def path(t0, y0, t, *params):
        recording = bool(first)
        try:
            start = _Switches(fun, G, list(params), (np.array(t0), y0))
            ends = first.pop() if first else _step_ends(step_ends, start, (t0, y0, t), params)
            _, crossed = _walk(start, *ends, crossed=bool(recorded and recorded[0]),
                               settled=bool(recorded))
        except (UnsupportedOperation, BranchChanged):   # a jump crossed there, or fun's path
            if recording:               # (refused as the recording's own check refuses it)
                raise
            return [np.array([-1.0])]
        if not recorded:
            recorded.append(crossed)
        # a kink crossed where the recording crossed none: its outputs are first order only
        return [np.array([float(crossed and not recorded[0])])]
    guard_structure(path, (*start, *active), f"the check of {name_of(fun)}'s switches at the "
                    f"step ends", "which runs the method again on plain values at every replay "
                    "(adsim/integrate/_switches.py); without memory_limit or snapshots, for up to "
                    "256 equations, the step ends are on the tape instead")


def _step_ends(step_ends, start, span, params):
    """``step_ends`` with ``fun`` replayed from ``start``'s tape (in C,
    about five times faster than calling it), or called where a branch of
    that tape changes on the way (a switch crossed, a time passed)."""
    tape = start.tape

    def replayed(t, y, *args):
        if isinstance(y, Active) or isinstance(t, Active):  # an implicit method's Jacobian
            return np.reshape(start.G(t, y, *start.params), -1)    # records fun
        return np.reshape(tape.forward(np.array(t), y, *start.params), -1)
    try:
        return step_ends(span, params, replayed)
    except BranchChanged:
        return step_ends(span, params, None)


def _walk(ref, ts, ys, crossed=False, settled=False):
    """The recordings holding at each point ``(ts[j], ys[:, j])`` from
    ``ref``'s on, and whether a kink is crossed between two of them (or
    ``crossed`` already); raises where ``fun`` jumps there. ``settled``:
    once a kink is crossed, a change of kinks' sides alone is not bisected
    (it can only tell that again)."""
    previous, holding = ref.point, [ref]
    for j in range(ts.shape[0]):
        point = (np.array(ts[j]), ys[:, j])
        boundary = ref.regime_boundary(previous, point)
        while boundary is not None:     # `if t < t_switch:` taken the other way on the segment
            before, after = boundary
            differs, ref = ref.differs(before)
            if differs:
                crossed = ref.refuse_a_jump(previous, before) or crossed
            # from there, the other side's switches (a fixed time's jump is the model's)
            ref, previous = _Switches(ref.fun, ref.G, ref.params, after), after
            boundary = ref.regime_boundary(previous, point)
        differs, ref = ref.differs(point)
        if differs:
            if not (settled and crossed and ref.kinks_only(point)):
                crossed = ref.refuse_a_jump(previous, point) or crossed
            ref = ref.at(point)
        previous = point
        holding.append(ref)
    return holding, crossed


def _merged(outputs, steps, direction):
    """The output points and the step ends as one sequence of points
    ``(t, y)``, in the direction of integration."""
    t = np.concatenate([outputs[0], steps[0]])
    y = np.concatenate([outputs[1], steps[1]], axis=1)
    times = recorded_values(t)
    order = np.argsort(direction * times, kind="stable")
    return t[order], y[:, order]


def held_selections(holding, start, outputs, active):
    """Recorded branches on the selections' outcomes at the start and the
    outputs (each point's by the recording ``holding`` there): true while
    they are the ones checked here."""
    t0, y0 = start
    t = np.concatenate([np.reshape(t0, (1,)), outputs[0]])
    y = np.concatenate([np.reshape(y0, (-1, 1)), outputs[1]], axis=1)
    first = 0
    for j in range(1, len(holding) + 1):
        if j < len(holding) and holding[j].selections is holding[first].selections:
            continue
        if holding[first].selections is not None:
            got = outcome_on(holding[first].selections, t[first:j], y[:, first:j], active)
            if isinstance(got, Active):
                bool(np.all(got == recorded_values(got)))
        first = j


class _Switches:
    """``G`` recorded at ``point``: the outcomes of its moving switches (its
    recorded branches, and the selections on the state that are data) and
    the sides of its kinks."""

    active = None           # fun's active parameters (the recording made at the start)

    def __init__(self, fun, G, params, point):
        self.fun, self.G, self.params, self.point = fun, G, params, point
        self.tape = record(G, *point, *params)
        self.guards, selects, chosen, calls, self.sides, self.regimes = \
            _moving_switches(self.tape)
        if selects:         # its outcome is data, not a recorded branch: refused as it is
            _refuse(fun, selects[0], "it selects at a time that moves with the parameters")
        # a kink inside a call: its sides cannot be read, its crossing not excluded
        self.unseen_kink = False
        for call, reads in calls:       # switches no replay of the tape here would see
            inner = _switch_inside(call)
            if inner == _KINK_INSIDE:
                self.unseen_kink = True
            elif inner is not None:
                _refuse(fun, (f"{inner} inside {_call_name(call)},", reads), _UNSEEN,
                        _OPEN_THE_CALL)
        self.outcomes = [(what, tuple(self.tape.branch_outcome(*where)))
                         for what, where in self.guards.values()]
        self.chosen = [chosen[k] for k in sorted(chosen)]
        # which outcomes are kinks' sides (their change is a crossing when the slope jumps)
        self.kink = np.concatenate([np.full(size, quotient in _KINKS.values(), dtype=bool)
                                    for _, size, quotient in self.chosen]) if chosen else None
        self.selections = outcome_tape(self.tape, [(k, chosen[k][2]) for k in sorted(chosen)],
                                       (*point, *params)) if chosen else None
        if chosen and self.selections is None:      # a call its outcomes cannot be read past
            switch = next((c for c in self.chosen if c[2] not in _KINKS.values()), None)
            if switch is None:          # kinks alone: their crossings not excluded
                self.unseen_kink = True
            else:
                _refuse(fun, switch[0], f"{_UNSEEN}, since fun also calls "
                        f"{_call_name(calls[0][0]) if calls else 'a loop or a solve'}, "
                        f"which adsim does not write again op by op to read the outcomes",
                        _OPEN_THE_CALL)
        self.selected = self._selected(point)

    def _selected(self, point):
        """The selections' outcomes at ``point`` (where the branches hold), or None."""
        if self.selections is None:
            return None
        return self.selections.forward(*point, *self.params)

    def differs(self, point):
        """(whether a moving switch's outcome or a kink's side at ``point``
        differs from this one's, the recording to go on with)."""
        try:
            self.tape.forward(*point, *self.params)
        except BranchChanged as err:
            if err.op_index in self.guards or err.op_index in self.sides:
                return True, self
            # another branch (a switch at a fixed time, say): its own recording's outcomes
            other = _Switches(self.fun, self.G, self.params, point)
            same = other.outcomes == self.outcomes and _same(other.selected, self.selected)
            return not same, (other if same else self)
        return not _same(self._selected(point), self.selected), self

    @property
    def moves(self):
        """Whether this recording has switches or kinks that move (not
        branches at fixed times alone)."""
        return bool(self.guards) or self.selections is not None or self.unseen_kink or \
            bool(self.sides) or (self.kink is not None and bool(self.kink.any()))

    def regime_boundary(self, a, b):
        """None when this recording's branches on the time alone take the
        same side at the point ``b`` as at ``a`` (this recording's); else the
        points (before, after) 1e-9 of the segment apart about the first
        change, on the straight line from ``a`` to ``b``."""
        if not self.regimes or not self._other_regime(b):
            return None

        def on(s):
            return (np.array(a[0] + s * (b[0] - a[0])), a[1] + s * (b[1] - a[1]))
        lo, hi = 0.0, 1.0
        while hi - lo > 1e-9:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if self._other_regime(on(mid)) else (mid, hi)
        return on(lo), on(hi)

    def _other_regime(self, point):
        """Whether a branch on the time alone takes another side at
        ``point`` (the first branch that differs there is one)."""
        try:
            self.tape.forward(*point, *self.params)
        except BranchChanged as err:
            return err.op_index in self.regimes
        return False

    def at(self, point):
        """This recording with its outcomes at ``point``, when its branches
        hold there (no recording again), else a recording at ``point``."""
        try:
            self.tape.forward(*point, *self.params)
        except BranchChanged:
            return _Switches(self.fun, self.G, self.params, point)
        moved = copy.copy(self)
        moved.point, moved.selected = point, self._selected(point)
        return moved

    def refuse_a_jump(self, a, b):
        """Raise when ``G`` jumps where an outcome changes on the segment
        from ``a`` (this recording's outcomes) to ``b`` (others): each change
        in turn bisected to 1e-9 of the segment, and where ``G`` moves there
        by more than 1e-7 of its size, on to 1e-13, where a kink
        (``max(y[0], 0.0)``, ``np.where(y > 0, a * y, b * y)``) moves ``G``
        by that much, a jump by its size. Returns whether a kink is crossed
        on the way: a switch's outcome changed (``G`` continuous there), or
        only kinks' sides where ``G``'s Jacobian jumps (not ``v * abs(v)``,
        whose Jacobian is continuous)."""
        def on(s):
            return (np.array(a[0] + s * (b[0] - a[0])), a[1] + s * (b[1] - a[1]))
        ref, start, crossed, ends = self, 0.0, False, []
        while True:
            lo, hi = ref._bisected(on, start, 1.0, 1e-9)    # most changes are kinks, settled
            if ref.kinks_only(on(hi)):
                ends = ends or [self._slopes(on(0.0)), self._slopes(on(1.0))]
                crossed = crossed or ref._slope_jumps(on, lo, hi, ends)
            else:
                crossed = True
                jump = self._jump(on(lo), on(hi))
                if jump:
                    lo, hi = ref._bisected(on, lo, hi, 1e-13)
                    jump = self._jump(on(lo), on(hi))
                if jump:
                    _refuse(self.fun, ref.changed(on(hi)),
                            f"it jumps by {jump:.3g} where its outcome changes, at t = "
                            f"{float(on(hi)[0]):.6g} (between the points t = {float(a[0]):.6g} "
                            f"and t = {float(b[0]):.6g} of the integration)")
            ref, start = ref.at(on(hi)), hi
            if start >= 1.0 or not ref.differs(b)[0]:
                return crossed

    def _bisected(self, on, lo, hi, width):
        """(lo, hi) narrowed to ``width`` about the first change from this
        recording's outcomes (which hold at ``on(lo)``, not at ``on(hi)``)."""
        while hi - lo > width:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if self.differs(on(mid))[0] else (mid, hi)
        return lo, hi

    def _jump(self, left, right):
        """How far ``G`` moves from ``left`` to ``right``, when more than
        1e-7 of its size; else 0."""
        with suspended(), np.errstate(all="ignore"):     # points off the solution
            left, right = (np.asarray(self.G(*point, *self.params), dtype=float)
                           for point in (left, right))
        jump = np.max(np.abs(right - left))
        return jump if jump > 1e-7 * max(np.max(np.abs(left)), np.max(np.abs(right)),
                                         1e-300) else 0.0

    def kinks_only(self, point):
        """Whether the outcomes that differ at ``point`` from this
        recording's are kinks' sides alone."""
        if self.kink is None or not self.kink.any():
            return False
        try:
            self.tape.forward(*point, *self.params)
            now = self._selected(point)
        except BranchChanged as err:
            if err.op_index in self.guards:
                return False
            other = _Switches(self.fun, self.G, self.params, point)
            if other.outcomes != self.outcomes or other.selected is None or \
                    [c[1:] for c in other.chosen] != [c[1:] for c in self.chosen]:
                return False
            now = other.selected
        return bool(np.all((now == self.selected) | self.kink))

    def _slope_jumps(self, on, lo, hi, ends):
        """Whether ``G``'s Jacobian (in the time, the state and each
        parameter) jumps from ``on(lo)`` to ``on(hi)`` (which bracket a
        kink's change of side) by more than _SLOPE_JUMP of its size on the
        segment (on the two sides and at its ends, whose Jacobians are
        ``ends``), still when bisected on to 1e-13: a kink's two slopes
        differ by about the Jacobian's size (``np.maximum(y, c)``: 1 and
        0); a continuous Jacobian moves across the bracket by its change
        over the segment times the bracket's width (``v * abs(v)``: 1e-13
        of it; 3e-7 for a square root's continuity, ``v *
        sqrt(abs(v))``); a jump above 1e-2 at 1e-9 is settled there (a
        continuous Jacobian moving that much is less than 0.2-Hölder)."""
        jump = self._slope_jump(on(lo), on(hi), ends)
        if _SLOPE_JUMP < jump < 1e-2:   # not settled at 1e-9 (a kink's is about 1)
            lo, hi = self._bisected(on, lo, hi, 1e-13)
            jump = self._slope_jump(on(lo), on(hi), ends)
        return jump > _SLOPE_JUMP

    def _slope_jump(self, left, right, ends):
        """The largest jump of ``G``'s Jacobian from ``left`` to ``right``,
        each row's derivatives in each input relative to their largest
        entry there and in ``ends`` (a stiff row's size does not hide
        another's jump)."""
        left, right = self._slopes(left), self._slopes(right)
        jump = 0.0
        for i, (l, r) in enumerate(zip(left, right)):
            size = np.max([np.max(np.abs(j[i]), axis=1, initial=0.0)
                           for j in (left, right, *ends)], axis=0)
            moved = np.max(np.abs(r - l), axis=1, initial=0.0)
            if np.any(moved > 0):
                jump = max(jump, np.max(moved[moved > 0] / size[moved > 0]))
        return jump

    def _slopes(self, point):
        """``G``'s Jacobian at ``point`` in each input (the time, the state,
        each parameter), a row per output: by this recording's tape where its branches
        hold there (a maximum's side follows the values), else recorded
        there."""
        inputs = (*point, *self.params)
        with np.errstate(all="ignore"):     # points off the solution
            try:
                blocks = self.tape.jacobian(*inputs)
            except BranchChanged:           # abs's other side, say
                blocks = record(self.G, *inputs).jacobian(*inputs)
        blocks = blocks if isinstance(blocks, (list, tuple)) else [blocks]
        rows = np.size(blocks[0])           # d G / d t: one per row
        return [np.asarray(j, dtype=float).reshape(rows, -1) for j in blocks]

    def changed(self, point):
        """The switch whose outcome differs at ``point``: a selection's when
        the branches hold there, else the first recorded branch."""
        try:
            self.tape.forward(*point, *self.params)
            now = self._selected(point)
        except BranchChanged:
            now = None
        if now is not None:
            at = 0
            for what, size, quotient in self.chosen:
                if quotient not in _KINKS.values() and \
                        not np.array_equal(now[at:at + size], self.selected[at:at + size]):
                    return what
                at += size
        return next((what for what, _ in self.outcomes), ("comparison", "the state y"))


_UNSEEN = ("its outcome cannot be checked at the points of the integration (it may change "
           "between them where fun jumps)")
# what to write instead of a switch adsim cannot check inside a call
_OPEN_THE_CALL = ("Write the loop as a plain Python loop or the selection outside the call "
                  "(adsim then records it op by op and checks where its outcome changes). ")
_SWITCHING = _STEPS | _INDEXES | set(_WRAPS) | {"COMPARE"}


_KINK_INSIDE = "kink"


def _switch_inside(call):
    """The first comparison or rounding on the tapes a call holds (a
    checkpointed loop's steps, a solve's functions, a nested derivative),
    as ``"comparison or rounding (greater)"``; without the name when its
    tapes cannot be read; else _KINK_INSIDE when they hold a maximum or a
    minimum; None when they hold none of these."""
    try:
        tapes = list(call.file_state()[1])
    except Exception:       # a call whose tapes are code (TapeCopyError): assume a switch
        return "comparison or rounding"
    seen, found = set(), None
    while tapes:
        tape = tapes.pop()
        if id(tape) in seen:
            continue
        seen.add(id(tape))
        for op in decode(tape)[1]:
            name = op.spec.name
            if name in _SWITCHING:
                return f"comparison or rounding ({name.lower()})"
            if name in _KINKS:
                found = _KINK_INSIDE
            if name == "CALLBACK" and not isinstance(tape.callbacks[op.callback], Application):
                inner = _switch_inside(tape.callbacks[op.callback])
                if inner is not None and inner != _KINK_INSIDE:
                    return inner
                found = found or inner
    return found


def _call_name(call):
    return getattr(call, "file_kind", None) or type(call).__name__


def _same(u, v):
    return (u is None) == (v is None) and (u is None or np.array_equal(u, v))


def _moving_switches(tape):
    """(guards, selects, chosen, calls, sides, regimes) on ``tape`` (inputs t, y,
    params): ``guards``
    {op index: ((op name, what it reads), (branch offset, n))} of the
    recorded branches (COMPARE) on values depending on the state, or on the
    time and a parameter; ``selects``: [(op name, what it reads)] of the
    comparisons and roundings of the time and a parameter whose results
    other ops read (``np.where(t < t_off, a, b)``); ``chosen`` {op index:
    ((op name, what it reads), result size, quotient)} of those of the state
    whose results other ops read or ``fun`` returns (``np.where(y > c, k1,
    k2)``, ``np.sign(y)``), and of its remainders (``np.mod(y, c)``: their
    quotient, "floor" or "trunc", is the step) and of its kinks
    (``np.maximum(y, c)``, ``np.abs(v)``: their side, "maximum", "minimum"
    or "abs"); ``calls`` [(callback, what it reads)] of the calls on such
    values that are not written again op by op (a loop or a solve inside
    ``fun``); ``sides`` {op index} of the recorded branches that are the
    sides of such ``abs`` (kinks, not switches); ``regimes`` {op index}
    of the recorded branches on the time alone (``if t < 1.0:``, a switch
    at a fixed time), whose other side may hold other switches."""
    depends = {}
    for i, slot in enumerate(tape.input_slots):
        depends[slot] = _TIME if i == 0 else (_STATE if i == 1 else _PARAMETER)
    guards, steps, selects, chosen, calls, sides = {}, {}, [], {}, [], set()
    regimes = set()
    ops = decode(tape)[1]
    for k, op in enumerate(ops):
        on, read = 0, []
        for _, ref in refs(op):
            if ref >= 0:
                on |= depends.get(ref, 0)
                read.append(ref)
        name = op.spec.name
        moving = bool(on & _STATE) or on & (_TIME | _PARAMETER) == _TIME | _PARAMETER
        if name == "COMPARE" and not moving and on & _TIME:
            regimes.add(k)              # a branch at a fixed time (`if t < t_switch:`)
        if name == "COMPARE" and moving:
            if _side_of_abs(op, ops[k + 1:k + 2]):     # read as the abs's side (a kink)
                sides.add(k)
            else:
                guards[k] = (("comparison" + _NAMES.get(op.kind, ""), _reads(on)),
                             (op.branch_offset, op.n))
        elif name != "COMPARE":
            if name == "CALLBACK" and moving and \
                    not isinstance(tape.callbacks[op.callback], Application):
                calls.append((tape.callbacks[op.callback], _reads(on)))
            for ref in read:
                if ref in steps:
                    _take(steps[ref], chosen, selects)
            if name in _WRAPS and moving:       # np.mod(y, c), np.mod(t, T): teeth that move
                chosen[k] = ((f"remainder ({name.lower()})", _reads(on)),
                             tape.slot_size_of(op.result), _WRAPS[name])
            elif name in _KINKS and moving:     # np.maximum(y, c), np.abs(v): sides that move
                chosen[k] = ((f"kink ({name.lower()})", _reads(on)),
                             tape.slot_size_of(op.result), _KINKS[name])
        if op.result >= 0:
            steps.pop(op.result, None)
            if (name in _STEPS and moving) or (name in _INDEXES and on & _STATE):
                kind = "index" if name in _INDEXES else "comparison or rounding"
                steps[op.result] = ((f"{kind} ({name.lower()})", _reads(on)),
                                    on, k, tape.slot_size_of(op.result))
            depends[op.result] = on | (depends.get(op.result, 0) if op.spec.in_place else 0)
    if tape.output_slot in steps:          # fun returns the step itself (np.sign(y))
        _take(steps[tape.output_slot], chosen, selects)
    return guards, selects, chosen, calls, sides, regimes


def _take(step, chosen, selects):
    """A step whose result is data: a selection on the state (chosen) or at
    a time that moves with the parameters (selects)."""
    what, on, k, size = step
    if on & _STATE:
        chosen[k] = (what, size, None)
    else:
        selects.append(what)


def _side_of_abs(compare, following):
    """Whether ``compare`` is the recorded side of the ``abs`` after it (a
    kink, continuous: its outcome may change freely)."""
    return bool(following) and following[0].spec.name == "ABS" and \
        following[0].x == compare.a


# what to write instead of np.mod(t, T) whose teeth jump
_TEETH = ("For a sawtooth of period T (np.mod(t, T)), integrate tooth by tooth: solve on "
          "(k T, (k + 1) T) from the state reached, each k T a differentiated end of t_span; "
          "or write the forcing as a function of t / T continuous across the teeth "
          "(np.sin(2 * np.pi * t / T)). ")


def _reads(on):
    return "the state y" if on & _STATE else "the time t and a parameter"


def _refuse(fun, switch, where, advice=""):
    name, reads = switch
    if name.startswith("remainder") and not reads.startswith("the state"):
        advice = _TEETH
    # odeint's derivatives come from solve_ivp of its Call's rhs: the user's func
    fname = getattr(getattr(fun, "__self__", None), "name", None) or name_of(fun)
    raise UnsupportedOperation(
        f"adsim: the right-hand side `{fname}` of solve_ivp (or odeint) switches by a {name} "
        f"of {reads}, and {where}. "
        f"The time of that switch moves with the parameters, and the derivative of the steps "
        f"taken (each comparison keeping its outcome) would miss the jump's term: silently "
        f"wrong. {advice}Make the switch a boundary of the integration: for a switch at a "
        f"parameter's time t_s, solve on (t0, t_s) and again from the state reached on (t_s, "
        f"t1) (t_s is then a differentiated end of t_span); for a switch where the state "
        f"crosses a level, a terminal event (event(t, y) = y[i] - level) and a restart from "
        f"sol.y_events; or smooth the step (a logistic of (t - t_s) / width). If fun is "
        f"continuous there (max(y[0], 0.0)), write it with np.maximum or np.clip, which adsim "
        f"differentiates as a kink")
