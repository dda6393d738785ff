"""Checkpointed loops that run one after another under one ``memory_limit``.

``adsim.integrate.solve_ivp`` with ``t_eval`` cuts an integration into one
``checkpoint_while`` loop per interval between output times, and the memory
limit the user gives bounds the whole call. The loops of such a group

* share the step's and the condition's recorded variants (the loops run the
  same step and condition; the interval's end is a loop input, not a
  constant), so the variants are held once, not once per interval, and
  may start from the variants of an earlier recording of the same loops
  (``inherited``);
* keep at most one forward pass for the reverse rule that follows in the
  same call: a loop that keeps one closes the one another loop kept (whose
  reverse rule then runs its forward pass again);
* count, in every sweep through one of them, what the call recorded in the
  enclosing tape besides that loop (its first steps, the other loops'
  slots, the outputs between them, with their derivative rows and the
  values a keeping sweep pushes) and the first values the other loops kept
  from the recording.
"""
import threading
import weakref

__all__ = ["LoopGroup"]


def _tape_bytes(tape):
    """(values, other bytes) of a tape: arena, and program buffers."""
    sizes = tape.stats()["bytes"]
    values = sizes["values"]
    return values, sum(v for k, v in sizes.items() if k not in ("values", "value_stack_peak"))


class LoopGroup:
    """The loops one call records into ``tape`` (see the module docstring).
    Make it before the call records anything; :meth:`finish` when the call
    has recorded its last output (later operations are the caller's)."""

    def __init__(self, tape):
        self._tape = tape
        self._start = _tape_bytes(tape)
        self._end = None
        self.steps = None           # StepTapes of the loops
        self.condition = None       # ConditionTapes of the loops
        # (StepTapes, ConditionTapes) of an earlier recording of the same loops,
        # whose variants the first loop adopts (adsim.integrate._step_reuse)
        self.inherited = None
        self._ops = weakref.WeakSet()
        self._held = None           # weak reference to the LoopSweep kept for a reverse rule
        self._lock = threading.Lock()

    def finish(self):
        """The call's recording ended: its part of the tape is fixed."""
        if self._end is None:
            self._end = _tape_bytes(self._tape)
            self._tape = None

    def add(self, op):
        self._ops.add(op)

    def footprints(self):
        """The footprints of the group's loops (each plans with its own)."""
        return [op.footprint for op in list(self._ops) if op.footprint is not None]

    def outside(self, kind, d, footprint):
        """Bytes the group holds in a sweep of ``kind`` with ``d``
        directions through the loop of ``footprint``, besides what that
        footprint counts: the call's part of the enclosing tape without the
        loop's slots (values with derivative rows as for the footprint's
        outer slots, a keeping sweep's pushes of them, program bytes) and
        the other loops' first values."""
        end = self._end if self._end is not None else _tape_bytes(self._tape)
        values = max(end[0] - self._start[0] - footprint.outer, 0)
        program = max(end[1] - self._start[1], 0)
        rows = {"values": 1, "adjoint": 1 + d, "tangent": 1 + d, "second_order": 2 + 2 * d}[kind]
        pushed = {"adjoint": 1, "second_order": 1 + d}.get(kind, 0)
        firsts = sum(other.first_nbytes() for other in list(self._ops)
                     if other.footprint is not footprint)
        return values * (rows + pushed) + program + firsts

    # ---- the one kept forward pass -------------------------------------------------
    def hold(self, sweep):
        """``sweep`` is kept for its reverse rule (the only one; the call's
        context keeps it alive, this only finds it)."""
        self.evict()
        with self._lock:
            self._held = weakref.ref(sweep)

    def evict(self):
        """A sweep through one of the loops begins: close the forward pass
        kept for another one (unless its reverse rule has taken it), whose
        snapshots the new sweep's plan does not count."""
        with self._lock:
            old = self._held() if self._held is not None else None
            self._held = None
            if old is not None and not old.taken:
                old.close()

    def take(self, sweep):
        """A reverse rule takes its kept ``sweep``: False if it was closed."""
        with self._lock:
            if sweep.closed:
                return False
            sweep.taken = True
            if self._held is not None and self._held() is sweep:
                self._held = None
            return True
