"""What a checkpointed loop holds in memory during each kind of sweep.

A checkpointed loop is one op of the enclosing tape; its rules (op.py) run
its sweeps through the compiled executor (adsim/_loop_run.pxi, driven by
driver.py). At its peak a sweep through the loop holds

* its snapshots (:meth:`Footprint.snapshot` bytes each);
* the step tape: fixed buffers, value arena, work buffer (one row of the
  arena per derivative direction) and value stack; the step's other
  recorded variants add their tapes only (:meth:`StepTapeBytes.idle`): the
  variants of a sweep share one work buffer and value stack
  (adsim/_loop_run.pxi);
* the loop's part of the enclosing tape: the slots its input and output
  occupy there, with their derivative rows, and the constants it added;
* the copies the op protocol (adsim/_ops/callback.pxi) hands to the rules:
  arguments, result, incoming derivatives;
* the executor's states: the current state, a state read back from disk,
  the arrays a rule returns;
* one state more as allocator slack: the C heap keeps a freed state-sized
  block that an allocation of another size (a state with tangents, a
  snapshot read from disk) cannot reuse, so resident memory runs up to
  about one state above the bytes alive (measured: up to 0.9 states with
  snapshots on disk, benchmarks/checkpoint_memory.py);
* a step variant being recorded (a branch changed): see
  :meth:`StepTapeBytes.recording`. Freed variants and what a recording
  outgrows are given back to the system (adsim/checkpoint/heap.py), so
  they do not stay resident besides.

:meth:`Footprint.fixed` adds up everything but the snapshots for one kind of
sweep, so that ``memory_limit`` can be honoured as a bound: the driver keeps
``(memory_limit - fixed) // snapshot`` snapshots. Every count below is an
upper bound of what the rules and the executor allocate; the tests in
tests/checkpoint/test_budget_bound.py compare them with the peak resident
memory of real sweeps.
"""
from dataclasses import dataclass

__all__ = ["KINDS", "Footprint", "StepTapeBytes", "tape_overhead", "together"]

# values: a plain forward pass; adjoint: reverse sweep with q directions;
# tangent: forward sweep with p tangents; second_order: reverse on forward
# with p directions (Hessian-vector products).
KINDS = ("values", "adjoint", "tangent", "second_order")

SNAPSHOT_OVERHEAD = 512     # bytes planned around one snapshot in memory (an upper bound)


def tape_overhead(nbytes):
    """Resident bytes of a tape with buffers of ``nbytes`` besides them:
    its sixteen-odd buffers come from the system in whole pages (up to two
    partial pages each), and its Python objects, slot and run tables (of
    the chunked sweeps) come on top (measured: 2 to 8 per cent of the
    buffers of a 1000-point RK45 step)."""
    return nbytes // 10 + 8192


@dataclass(frozen=True)
class StepTapeBytes:
    """Byte sizes of one step tape: fixed buffers (ops, operands, constants,
    indices, branch records, slot table), value arena, and the value stack a
    keeping forward sweep fills."""

    static: int
    values: int
    stack: int

    def during(self, kind, directions):
        """Resident bytes while a sweep of ``kind`` replays the tape. The work
        buffer keeps its largest size; at least one row exists once the tape
        has been reversed (the stack probe of steptape.py does that)."""
        rows = {"values": 0, "adjoint": directions, "tangent": directions,
                "second_order": 2 * directions + 1}[kind]
        stack_rows = 1 + directions if kind == "second_order" else 1
        nbytes = self.static + self.values * (1 + max(rows, 1)) + self.stack * stack_rows
        # a sweep with more rows than the one that measured the variant (one
        # row) frees its work buffer and value stack for larger ones; the
        # freed blocks stay resident until the heap is next trimmed
        outgrown = (self.values if rows > 1 else 0) + (self.stack if stack_rows > 1 else 0)
        return nbytes + outgrown + tape_overhead(nbytes)

    def idle(self):
        """Resident bytes of the variant while another variant of the step
        replays: its tape (buffers and value arena). The variants of a sweep
        share one work buffer and value stack (adsim/_loop_run.pxi), which
        :meth:`during` counts for the one replaying."""
        nbytes = self.static + self.values
        return nbytes + tape_overhead(nbytes)

    def parked(self):
        """Resident bytes of the variant parked (steptape.py): its tape
        without the pages of its value arena."""
        return self.static + tape_overhead(self.static)

    def recording(self):
        """Bytes a recording of a variant holds at its peak besides the
        variant itself: its buffers grow by doubling, and the blocks they
        outgrow (up to half of each one's final size; the value stack grows
        so while the new tape is measured) stay resident until the heap is
        trimmed after the recording; the step's code makes temporaries of
        its own (measured: 0.8 to 1.9 MB for a 1000-point RK45 step whose
        buffers take 1.8 MB)."""
        return self.static + self.values + self.stack


def together(sizes, kind, directions):
    """Bytes of the step variants of ``sizes`` (:class:`StepTapeBytes`) held
    together during a sweep of ``kind``: each one's tape, and the shared
    buffers at the largest (one replays at a time)."""
    tapes = shared = 0
    for size in sizes:
        idle = size.idle()
        tapes += idle
        shared = max(shared, size.during(kind, directions) - idle)
    return tapes + shared


@dataclass(frozen=True)
class Footprint:
    """Bytes one checkpointed loop adds, apart from its step tape.

    Parameters
    ----------
    state : int
        Bytes of the flat loop state (S).
    inputs : int
        Bytes of the loop inputs (``args`` arrays) together (I).
    outer : int
        Bytes of the value slots the loop added to the enclosing tape (its
        flat input and output and their reshapes), O.
    outer_constants : int
        Bytes of constants the loop added to the enclosing tape (a constant
        state or constant ``args`` arrays).
    saved : int
        Bytes of the states returned besides the last (``save_at``), K.
    """

    state: int
    inputs: int
    outer: int
    outer_constants: int
    saved: int = 0

    def snapshot(self, kind, directions):
        """Bytes of one snapshot in memory: the state, and for second-order
        sweeps its ``directions`` tangents too."""
        rows = 1 + directions if kind == "second_order" else 1
        return rows * self.state + SNAPSHOT_OVERHEAD

    def fixed(self, kind, directions, tape):
        """Peak bytes of a sweep of ``kind`` apart from the snapshots.

        ``tape`` is the :class:`StepTapeBytes` of the step (the largest
        variant). The sweep's op rules run one after another (the value,
        then the tangents, then the reverse), so the peak is the largest
        of them, on top of what stays for the whole sweep.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown sweep kind {kind!r}")
        d = directions
        phases = [self._value_rule()]
        if kind in ("tangent", "second_order"):
            phases.append(self._tangent_rule(d))
        if kind == "adjoint":
            phases.append(self._adjoint_rule(d))
        if kind == "second_order":
            phases.append(self._second_order_rule(d))
        slack = self.snapshot(kind, d) - SNAPSHOT_OVERHEAD
        return (self._outer(kind, d) + tape.during(kind, d) + tape.recording() + max(phases)
                + slack)

    # -- pieces, each an upper bound; S, I: state and input bytes ------------

    def _outer(self, kind, d):
        """The loop's slots in the enclosing tape with their derivative rows."""
        rows = {"values": 1, "adjoint": 1 + d, "tangent": 1 + d, "second_order": 2 + 2 * d}[kind]
        return self.outer * rows + self.outer_constants

    def _value_rule(self):
        """Arguments copied in (S + I); then either the result kept from the
        recording with the arguments it was made from (2S + I), or the
        executor's current state, the state it steps from to the last one
        and that last one (3S). With saved states (K): the executor's copies
        of them and the result holding them (2K), and the recorded result
        (K)."""
        S, I, K = self.state, self.inputs, self.saved
        return S + I + max(2 * S + I, 3 * S) + 3 * K

    def _tangent_rule(self, d):
        """Arguments, result and argument tangents copied in (2S + I +
        d(S + I)); the current state with its tangents, its copy and the
        last one (2(1 + d)S and less). Saved states: in the result and its
        copy (K), their copies with tangents and the result's tangents
        (2(1 + d)K)."""
        S, I, K = self.state, self.inputs, self.saved
        return 2 * S + I + d * (S + I) + 2 * (1 + d) * S + (3 + 2 * d) * K

    def _adjoint_rule(self, d):
        """Arguments, result and output adjoint copied in (2S + I + dS; the
        adjoint is updated in place); input adjoint sums (dI); the current
        state (S); a state read back from disk or the copy of an advance's
        end (up to 3S), or a turn's output and adjoints (S + d(S + I), an
        upper bound: turns update in place). Saved states: in the result,
        their adjoints and the rows they are split into (K + 2dK), the
        executor's copies of them (K), the final state's adjoints split off
        (dS)."""
        S, I, K = self.state, self.inputs, self.saved
        saved = (2 + 2 * d) * K + d * S if K else 0
        return 2 * S + I + d * S + d * I + S + max(3 * S, S + d * (S + I)) + saved

    def _second_order_rule(self, d):
        """Arguments, result, argument tangents, output adjoint and adjoint
        tangents copied in (3S + I + d(2S + I)); input adjoint sums and their
        tangents ((1 + d)I); the current state with tangents ((1 + d)S);
        then an advance (previous and new state with tangents, 2(1 + d)S) or
        a turn (output value and tangents (1 + d)S, new adjoints and adjoint
        tangents (1 + d)(S + I)); upper bounds, as for the adjoint. Saved
        states: in the result, its adjoint and adjoint tangents and the rows
        they are split into, the executor's copies with tangents
        ((4 + 3d)K), the final state's parts split off ((1 + d)S)."""
        S, I, K = self.state, self.inputs, self.saved
        u = 1 + d
        saved = (4 + 3 * d) * K + u * S if K else 0
        return (3 * S + I + d * (2 * S + I) + u * I + u * S
                + max(2 * u * S, u * S + u * (S + I)) + saved)
