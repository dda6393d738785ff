"""Batched replay: a recorded tape replayed at B points in one sweep.

:func:`batched_program` rewrites a finished tape into the tape of a batch:
every slot of ``size`` elements becomes a slot of ``size * B`` holding
element i of member b at ``i * B + b`` (the batch is the fastest axis, as a
trailing axis of length B on every array), and every op becomes the op, or
the few ops, that compute it for all members at once:

* elementwise ops (unary, binary, comparisons, ``np.where``, copies, fills)
  are the same ops over longer slots; a member's scalar meeting a member's
  array is broadcast first (BROADCAST), array constants repeated per member;
* reductions, broadcasts and cumulative sums over ``(outer, m, inner)``
  views take ``inner * B``; 1-d and 2-d slices of unit step stay strided
  slices (rows of ``inner * B``), other slices and index lists gather by
  index;
* branch records (comparisons, ``max``/``min`` positions) are kept per
  member, so a member leaving the recorded path fails the sweep;
* ``A @ X`` with a constant A is one product over the batch (``X`` is
  ``k x (n B)``), ``x @ C`` of a vector one product ``C^T x``; ``x @ y`` of
  two active vectors a multiply and a sum; a quadratic form (QUADFORM) one
  op over the batch;
* the other ops of PER_MEMBER (products of active matrices, other products
  with a constant, sparse products, gathers and writes at integer data,
  argmax as data, searchsorted) run once per member on that member's part:
  correct, not faster.

Tapes holding an op without a batched form (CALLBACK: custom primitives,
checkpointed loops, ODE solves, nested derivatives) have no batched program:
their batched replays are B separate replays (``adsim/_batched.py``).
"""
import numpy as np

from . import _program
from ._decoder import decode
from .ops import BY_NAME, BY_CODE, INTS

Op = {spec.name: spec.code for spec in BY_NAME.values()}

# ops run once per member inside a batched program (see the module docstring)
PER_MEMBER = frozenset(Op[name] for name in (
    "MATMUL", "SPMV", "GATHER_AT", "SCATTER_AT", "ARGEXT_AT", "SEARCH"))


class NotBatchable(Exception):
    """A tape (or the point its arena holds) the rewrite cannot batch."""


def _interleaved(positions, batch):
    """Flat positions into one member's array, as positions into the batch's
    (position p of member b at p * B + b), in the batch's order."""
    p = np.asarray(positions, dtype=np.int64)[:, None] * batch
    return (p + np.arange(batch, dtype=np.int64)[None, :]).reshape(-1)


class _Rewrite:
    """The state of one rewrite of ``tape`` for a batch of ``batch`` members."""

    def __init__(self, tape, batch, new_tape):
        self.t = tape
        self.B = batch
        self.bt = new_tape
        self.slots = {}            # slot of the tape -> its slot in the batched program
        self.compares = {}         # branch offset of a COMPARE -> (n, offset in the batch)
        self.compare_ranges = []   # (first, end) branch offsets written by COMPAREs
        self.argexts = []          # (offset in the batch, expected records) to verify

    # ---- operands --------------------------------------------------------------
    def size(self, ref):
        return self.t.slot_size_of(ref)

    def const(self, ref, per_member):
        """A constant of the tape in the batched program: as it is (a scalar
        the kernel broadcasts, a matrix) or each element repeated per member."""
        value = self.t.slot_value(ref)
        return self.bt.const_ref(np.repeat(value, self.B) if per_member else value)

    def arg(self, ref, n, broadcastable=False):
        """Operand ``ref`` of an op whose members read ``n`` elements of it: a
        slot of n per member, a member's scalar broadcast to n, or a constant.
        When ``broadcastable``, the kernel takes size-1 operands as they are."""
        if ref < 0:
            size = self.size(ref)
            if size == 1 and broadcastable:
                return self.const(ref, False)
            if size == n:
                return self.const(ref, True)
            if size == 1:
                return self.bt.const_ref(np.full(n * self.B, self.t.slot_value(ref)[0]))
            raise NotBatchable(f"a constant of {size} elements where {n} are read")
        slot = self.mapped(ref)
        size = self.size(ref)
        if size == n:
            return slot
        if size == 1:                  # each member's scalar, repeated n times
            return self.bt.record_op(Op["BROADCAST"], n * self.B, [slot, 1, n, self.B])
        raise NotBatchable(f"a slot of {size} elements where {n} are read")

    def mapped(self, ref):
        """The batched slot of the tape's slot ``ref``."""
        if ref not in self.slots:
            raise NotBatchable(f"slot {ref} read before it is written")
        return self.slots[ref]

    def member(self, ref, b):
        """Member ``b``'s part of operand ``ref`` (a temporary slot), or a
        constant as it is."""
        if ref < 0:
            return self.const(ref, False)
        n = self.size(ref)
        return self.bt.record_op(Op["GATHER"], n, [self.mapped(ref), 0, b, self.B, n, 0])

    def emit(self, code, result, operands):
        """Record ``code`` writing the batched slot of ``result``."""
        if result < 0:
            return self.bt.record_op(code, -1, operands)
        if result in self.slots:
            return self.bt.record_op(code, -2, [self.slots[result]] + list(operands))
        self.slots[result] = slot = self.bt.record_op(code, self.size(result) * self.B, operands)
        return slot

    def new_branches(self, outcomes):
        off = self.bt.add_branch_space(outcomes.size * self.B)
        self.bt.set_branches(off, np.repeat(outcomes, self.B))
        return off

    # ---- ops -------------------------------------------------------------------
    def op(self, code, o):
        spec = BY_CODE[code]
        name, B = spec.name, self.B
        if spec.family == "unary":
            n = self.size(o.result)
            return self.emit(code, o.result, [self.arg(o.x, n), o.c])
        if spec.family == "binary":
            n = self.size(o.result)
            return self.emit(code, o.result, [self.arg(o.a, n, True), self.arg(o.b, n, True)])
        if name == "COMPARE":
            off = self.new_branches(self.t.branch_outcome(o.branch_offset, o.n))
            self.compares[o.branch_offset] = (o.n, off)
            self.compare_ranges.append((o.branch_offset, o.branch_offset + o.n))
            return self.emit(code, -1, [self.arg(o.a, o.n, True), self.arg(o.b, o.n, True),
                                        o.kind, off, o.n * B])
        if name == "ARGEXT":
            recorded = self.t.index_record(o.index_offset, o.outer * o.inner)
            off = self.bt.add_indices(np.zeros(o.outer * o.inner * B, dtype=np.int64))
            self.emit(code, -1, [self.arg(o.a, o.outer * o.m * o.inner), o.outer, o.m,
                                 o.inner * B, off, o.want_min])
            self.argexts.append((off, _interleaved(recorded, B)))
            return None
        if name in ("COPY", "FILL"):
            n = self.size(o.result)
            return self.emit(code, o.result, [self.arg(o.a if name == "COPY" else o.c, n,
                                                       name == "FILL")])
        if name in ("SUM", "CUMSUM", "BROADCAST"):
            n = o.outer * o.inner if name == "BROADCAST" else o.outer * o.m * o.inner
            return self.emit(code, o.result, [self.arg(o.a, n), o.outer, o.m, o.inner * B])
        if name == "GATHER":
            return self.gather(code, o)
        if name == "SCATTER":
            return self.scatter(code, o)
        if name == "WHERE":
            n = self.size(o.result)
            return self.emit(code, o.result, [self.arg(o.a, n, True), self.arg(o.b, n, True),
                                              self.where_mask(o.branch_offset, n)])
        if name == "SELECT":
            n = self.size(o.result)
            return self.emit(code, o.result, [self.arg(o.m, n, True), self.arg(o.a, n, True),
                                              self.arg(o.b, n, True)])
        if name == "MATMUL" and self.matmul(code, o):
            return None
        if name == "QUADFORM":
            return self.quadform(o)
        if code in PER_MEMBER:
            return self.per_member(code, o)
        raise NotBatchable(f"op {name}")

    def where_mask(self, off, n):
        if off in self.compares and self.compares[off][0] == n:
            return self.compares[off][1]
        if any(lo < off + n and off < hi for lo, hi in self.compare_ranges):
            raise NotBatchable("a where-mask inside a comparison's records")
        return self.new_branches(self.t.branch_outcome(off, n))     # a constant mask

    def gather(self, code, o):
        n, na, B = self.size(o.result), self.size(o.a), self.B
        if o.step != 0:
            inner = o.inner if o.inner > 0 else n
            rows = n // inner if inner else 0
            if o.step == 1:                        # rows of inner elements: of inner * B
                return self.emit(code, o.result, [self.arg(o.a, na), 0, o.start * B, 1,
                                                  inner * B, o.outer_step * B])
            if rows == 1:                          # a strided 1-d slice: a row per element
                return self.emit(code, o.result, [self.arg(o.a, na), 0, o.start * B, 1, B,
                                                  o.step * B])
            j = np.arange(n, dtype=np.int64)
            positions = o.start + (j // inner) * o.outer_step + (j % inner) * o.step
        else:
            positions = self.t.index_record(o.index_offset, n)
        off = self.bt.add_indices(_interleaved(positions, B))
        return self.emit(code, o.result, [self.arg(o.a, na), off, 0, 0, 0, 0])

    def scatter(self, code, o):
        if o.result not in self.slots:
            raise NotBatchable("a write into a slot not written before")
        off = self.bt.add_indices(_interleaved(self.t.index_record(o.index_offset, o.m), self.B))
        v = self.arg(o.v, o.m, broadcastable=o.v < 0)
        return self.emit(code, o.result, [v, off, o.m * self.B, 0, 0, 0, 0])

    def matmul(self, code, o):
        """The batched forms of a matrix product; False: none (run per member)."""
        B = self.B
        if o.a < 0 <= o.b:                         # A @ X: X is k x (n B)
            self.emit(code, o.result, [self.const(o.a, False), self.mapped(o.b), o.m, o.k, o.n * B])
            return True
        if o.b < 0 <= o.a and o.m == 1:            # x @ C = C^T x: x is k x B
            Ct = self.bt.const_ref(np.ascontiguousarray(
                self.t.slot_value(o.b).reshape(o.k, o.n).T))
            self.emit(code, o.result, [Ct, self.mapped(o.a), o.n, o.k, B])
            return True
        if o.a >= 0 and o.b >= 0 and o.m == 1 and o.n == 1:     # x @ y
            products = self.bt.record_op(Op["MUL"], o.k * B, [self.mapped(o.a), self.mapped(o.b)])
            self.emit(Op["SUM"], o.result, [products, 1, o.k, B])
            return True
        return False

    def quadform(self, o):
        """The forms of all members in one op, its gradient slot made for it
        (a FILL no reverse rule reads)."""
        n = o.k * self.B
        g = self.bt.record_op(Op["FILL"], n, [self.bt.const_ref(np.zeros(1))])
        return self.emit(Op["QUADFORM"], o.result, [self.const(o.c, False), self.mapped(o.x), g,
                                                     o.k, o.form])

    def per_member(self, code, o):
        """Op ``code`` once per member, on that member's part of its operands,
        each result written into its part of the batched result."""
        spec = BY_CODE[code]
        refs = [getattr(o, x.name) for x in spec.operands if x.is_ref]
        if o.result in refs:
            raise NotBatchable("an op writing one of its operands")
        if any(x.role == INTS for x in spec.operands) and spec.name != "SPMV":
            raise NotBatchable(f"op {spec.name} with recorded indices")
        n, B = self.size(o.result), self.B
        result = self.emit(Op["FILL"], o.result, [self.bt.const_ref(np.zeros(1))])
        for b in range(B):
            operands = []
            for x in spec.operands:
                value = getattr(o, x.name)
                if x.is_ref:
                    operands.append(self.member(value, b))
                elif x.role == INTS:             # SPMV's CSR pattern: row pointers, columns
                    operands.append(self.bt.add_indices(
                        self.t.index_record(value, o.m + 1 + self.size(o.a))))
                else:
                    operands.append(value)
            part = self.bt.record_op(code, n, operands)
            off = self.bt.add_indices(np.arange(n, dtype=np.int64) * B + b)
            self.bt.record_op(Op["SCATTER"], -2, [result, part, off, n, b, B, n, 0])
        return result


def sums_to_output(codes, ops, out_slot):
    """The op summing a whole array into the tape's scalar output when the
    tape ends with one (a loss, an energy), else None."""
    if codes and codes[-1] == Op["SUM"]:
        o = ops[-1]
        if o.result == out_slot and o.outer == 1 and o.inner == 1 and o.a >= 0:
            return o
    return None


def batched_program(tape, batch, new_tape, summed=False):
    """A tape (made by ``new_tape()``) computing ``tape`` at ``batch``
    points, interleaved (see the module docstring); its inputs and output
    have a trailing batch axis. Raises NotBatchable when an op has no
    batched form. ``summed``: for a tape ending in a sum to a scalar
    (sums_to_output), the output is instead the sum over all members: one
    scalar whose gradient and Hessian-vector products are the members' (the
    members do not interact), and whose final sum the sweeps reverse chunk
    by chunk as they do a single tape's."""
    codes, ops = decode(tape)
    final = sums_to_output(codes, ops, tape.output_slot) if summed else None
    if summed and final is None:
        raise NotBatchable("no final sum to a scalar output")
    if any(BY_CODE[c].family == "callback" for c in codes):
        raise NotBatchable("a CALLBACK op (custom primitive, loop, ODE solve)")
    if tape.layout_observed:            # each member's own layout is checked as it replays
        raise NotBatchable("the function read its arrays' memory layout")
    buffers = _program.program_buffers(tape)
    bt = new_tape()
    if buffers["consts"].size:
        bt.const_ref(buffers["consts"])     # first: unary ops' parameter positions hold
    rw = _Rewrite(tape, batch, bt)
    try:
        for slot, shape, varied in zip(buffers["input_slots"], buffers["input_shapes"],
                                       buffers["input_varied"]):
            value = np.repeat(tape.slot_value(slot), batch).reshape(tuple(shape) + (batch,))
            rw.slots[slot] = bt.new_input(value, varied)
        for code, o in zip(codes[:-1] if final else codes, ops[:-1] if final else ops):
            rw.op(code, o)
        if final:
            total = bt.record_op(Op["SUM"], 1, [rw.arg(final.a, final.m), 1, final.m * batch, 1])
        for off, expected in rw.argexts:
            if not np.array_equal(bt.index_record(off, expected.size), expected):
                raise NotBatchable("max/min positions at the arena's point differ from the "
                                   "recording's")
        out = total if final else rw.slots.get(buffers["out_slot"])
        if out is None:
            raise NotBatchable("an output not computed by the tape's ops")
        bt.finish(out, () if final else tuple(buffers["output_shape"]) + (batch,))
    except BaseException:
        if bt.recording:
            bt.finish_failed()
        raise
    bt.chunked = tape.chunked
    return bt
