"""Sparsity patterns of Jacobians and Hessians, read from a recorded tape.

Jacobian: index domains
    Every element of every slot depends on a set of independent variables,
    its *index domain*. A slot's domains are the rows of a boolean CSR matrix
    (slot size x number of independents), and every op maps its operands'
    matrices to its result's by the op's index map: elementwise ops keep
    rows (a union for two operands, a size-1 operand repeated), broadcasts,
    sums and cumulative sums are sparse 0-1 matrices applied on the left,
    gathers select rows, scatters replace rows, ``where`` picks rows by the
    recorded mask, a matrix product ``C = A B`` joins row ``(i, l)`` of ``A``
    and ``(l, j)`` of ``B`` for every ``l`` (only the nonzero entries of a
    constant factor). The sweep walks the ops forward keeping one matrix per
    live slot, so its cost follows the number of nonzeros, never ``n^2``;
    the pattern holds for the recorded control path exactly.

Hessian: nonlinear interactions
    A second derivative of the output couples variables ``i`` and ``j`` only
    through an op that is nonlinear in operands depending on ``i`` and ``j``
    and whose result influences the output [1]_. A reverse pass marks, per
    element, the results that reach the output through nonzero partial
    derivatives; the forward index-domain sweep then adds, for every marked
    element ``k`` of a nonlinear op, ``dom(x_k) x dom(x_k)`` (unary),
    ``dom(a_k) x dom(b_k)`` (product), ``dom(a_k) x dom(b_k)`` plus
    ``dom(b_k) x dom(b_k)`` (quotient), ``(dom(a_k) u dom(b_k))^2`` (other
    binary ops) and the cross terms of a matrix product. With the marked rows
    ``Q`` of an operand's matrix these sets are sparse products ``Q^T Q``.

CALLBACK ops (user primitives, checkpointed loops) make every output
element depend on every input element unless the callback object has a
method ``pattern(arg_patterns)``: it receives one boolean CSR array per
argument (argument size x number of independents, empty for constants) and
returns the result's (result size x number of independents). Its Hessian
interactions are ``dom(y_k) x dom(y_k)`` for each marked output element,
none for a callback whose ``linear`` is true (a primitive declared linear).

References
----------
.. [1] A. Walther, "Computing sparse Hessians with automatic
   differentiation", ACM Trans. Math. Software 34(1), article 3, 2008.
.. [2] A. Griewank and A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM,
   2008, ch. 7 (sparse forward and reverse propagation of index domains).
"""
import numpy as np
import scipy.sparse as sp

from adsim._decoder import decode
from adsim._rules import RuleTable, family
from adsim.ops import BILINEAR, BY_CODE, LINEAR, NONLINEAR, TABLE, ZERO
from adsim._opcodes import Opcode as Op

from .domains import (Domains, apply_left, canonical, empty, expand, indptr_from_counts,
                      iterate_pattern, last_writes, ragged_arange, replace_rows, select_rows,
                      take_rows, union, union_row, with_rows)

__all__ = ["hessian_pattern", "iterate_pattern", "jacobian_pattern"]

_MERGE_NNZ = 4_000_000      # merge collected Hessian interactions beyond this many


# ---------------------------------------------------------------- op decoding

ZERO_DERIVATIVE, LINEAR_OP, NONLINEAR_OP = 0, 1, 2


def unary_kind(code, c):
    """Whether a unary op with parameter ``c`` has a zero, constant or varying
    derivative (the op table's class, refined by the parameter)."""
    if BY_CODE[code].hessian == ZERO:            # sign, rounding, stop_gradient
        return ZERO_DERIVATIVE
    if code == Op.MUL_C and c == 0.0 or code == Op.RDIV_C and c == 0.0:
        return ZERO_DERIVATIVE
    if code == Op.POW_C and c in (0.0, 1.0):
        return ZERO_DERIVATIVE if c == 0.0 else LINEAR_OP
    if code == Op.RPOW_C and c == 1.0:
        return ZERO_DERIVATIVE
    return NONLINEAR_OP if BY_CODE[code].hessian == NONLINEAR else LINEAR_OP


class Program:
    """The ops of a tape decoded once (adsim/_decoder.py): opcodes, operands
    as named tuples, and the columns (independents) of the selected inputs."""

    def __init__(self, tape, inputs=None):
        if tape.recording or tape.output_slot is None:
            raise RuntimeError("adsim: sparsity needs a finished recording (adsim.record)")
        self.tape = tape
        self.codes, self.operands = decode(tape)
        positions = list(range(tape.n_inputs)) if inputs is None else [int(i) for i in inputs]
        for i in positions:
            if not 0 <= i < tape.n_inputs:
                raise ValueError(f"adsim: input {i} does not exist; the tape has "
                                 f"{tape.n_inputs} inputs")
        self.columns = []           # (slot, first column, size)
        offset = 0
        for i in positions:
            slot = tape.input_slots[i]
            size = tape.slot_size_of(slot)
            self.columns.append((slot, offset, size))
            offset += size
        self.ncols = offset
        self.output_slot = tape.output_slot
        self.output_size = tape.slot_size_of(tape.output_slot)
        self._params = {}

    def size(self, ref):
        return self.tape.slot_size_of(ref)

    def param(self, k):
        c = self.operands[k].c
        return self.tape.param_value(c) if c >= 0 else 0.0

    def unary_kind(self, k):
        return unary_kind(self.codes[k], self.param(k))

    def side_mask(self, k):
        """For maximum/minimum: True where the first operand was taken, read
        from the comparison recorded just before the op (None if absent)."""
        o = self.operands[k]
        if k > 0 and self.codes[k - 1] == Op.COMPARE:
            c = self.operands[k - 1]
            if c.a == o.a and c.b == o.b:
                return self.tape.branch_outcome(c.branch_offset, c.n)
        return None

    def where_mask(self, k):
        o = self.operands[k]
        return self.tape.branch_outcome(o.branch_offset, self.size(o.result))

    def indices(self, k):
        """Element indices of a GATHER (read) or SCATTER (written) op; a
        strided GATHER ``[r, a, ioff, start, step, inner, outer_step]`` with
        ``step != 0`` reads ``start + (j // inner) outer_step + (j % inner) step``."""
        o = self.operands[k]
        if self.codes[k] == Op.SCATTER:
            return self.tape.index_record(o.index_offset, o.m).astype(np.intp)
        n = self.size(o.result)
        if o.step != 0:
            inner = o.inner if o.inner > 0 else n
            j = np.arange(n, dtype=np.intp)
            return o.start + (j // inner) * o.outer_step + (j % inner) * o.step
        return self.tape.index_record(o.index_offset, n).astype(np.intp)

    def constant_nonzero(self, ref, shape):
        return self.tape.slot_value(ref).reshape(shape) != 0.0

    def form_pattern(self, o):
        """A QUADFORM op's coupling: S[i, j] when C[i, j] or C[j, i] is not
        zero (the Hessian C + C^T), as a boolean CSR array, and the elements
        of x some term of x^T C x reads."""
        nz = self.constant_nonzero(o.c, (o.k, o.k))
        S = nz | nz.T
        return sp.csr_array(S), np.flatnonzero(S.any(axis=1))

    def sparse_pattern(self, k):
        """(row pointers, column indices) of an SPMV op's CSR matrix."""
        o = self.operands[k]
        held = self.tape.index_record(o.index_offset, o.m + 1 + self.size(o.a)).astype(np.intp)
        return held[:o.m + 1], held[o.m + 1:]

    def sparse_entries(self, k):
        """An SPMV op's stored entries: (out, into, p), for each entry p that
        can be nonzero (all of an active matrix, the nonzero values of a
        constant one), the result row it adds to and the row of x it reads."""
        o = self.operands[k]
        nnz = self.size(o.a)
        indptr, cols = self.sparse_pattern(k)
        rows = np.repeat(np.arange(o.m, dtype=np.intp), np.diff(indptr))
        p = np.arange(nnz, dtype=np.intp)
        if o.a < 0:
            p = np.flatnonzero(self.constant_nonzero(o.a, (nnz,)))
        out, into = (cols[p], rows[p]) if o.trans else (rows[p], cols[p])
        return out, into, p



# ---------------------------------------------------------------- forward sweep

SMALL_WRITE = 16     # scatters of at most this many elements into a larger slot are kept aside


class DomainSweep:
    """Forward propagation of index domains over a Program.

    ``run(hook)`` walks the ops; ``hook(k, result)``, when given, is called
    with op k's result domains before they are stored, so ``get`` still
    returns the operands'. Scatters of a few elements into a large slot
    (scalar code writing ``y[i] = ...``) are kept as pending rows of that
    slot and merged in one pass when the whole slot is read.
    """

    def __init__(self, program):
        self.program = program
        self.ncols = program.ncols
        self.patterns = {}
        self.pending = {}               # slot -> {row: indices} not yet merged
        self._empties = {}
        self.rules = JACOBIAN_RULES.bind(self, program.codes)

    def empty(self, rows):
        P = self._empties.get(rows)
        if P is None:
            P = self._empties[rows] = empty(rows, self.ncols)
        return P

    def get(self, ref):
        """Domains of a slot's current contents, or of a constant (empty)."""
        if ref < 0:
            return self.empty(self.program.size(ref))
        rows = self.pending.pop(ref, None)
        if rows is not None:
            self.patterns[ref] = with_rows(self.get(ref), rows)
        P = self.patterns.get(ref)
        return P if P is not None else self.empty(self.program.size(ref))

    def get_rows(self, ref, rows):
        """Rows ``rows`` of a slot, without merging its pending rows for a few."""
        new = self.pending.get(ref) if ref >= 0 else None
        if new is None or rows.shape[0] > SMALL_WRITE:
            return take_rows(self.get(ref), rows)
        base = self.patterns.get(ref) or self.empty(self.program.size(ref))
        parts = [new[i] if i in new else base.row(i) for i in rows.tolist()]
        sizes = np.fromiter((p.shape[0] for p in parts), dtype=np.intp, count=len(parts))
        indices = np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)
        return Domains(indptr_from_counts(sizes), indices, rows.shape[0], self.ncols)

    def run(self, hook=None):
        prog = self.program
        for slot, offset, size in prog.columns:
            self.patterns[slot] = Domains(np.arange(size + 1, dtype=np.intp),
                                          offset + np.arange(size, dtype=np.intp), size,
                                          self.ncols)
        rules, operands, patterns, pending = self.rules, prog.operands, self.patterns, \
            self.pending
        for k, code in enumerate(prog.codes):
            rule = rules[code]
            if rule is None:
                continue
            o = operands[k]
            result = rule(k, o)
            if result is None:          # rows kept pending (small scatter)
                continue
            if hook is not None:
                hook(k, result)
            patterns[o[0]] = result
            pending.pop(o[0], None)
        return self.get(prog.output_slot)

    # ---- rules: each returns the result's domains ----------------------
    def unary(self, k, o):
        if self.program.unary_kind(k) == ZERO_DERIVATIVE:
            return self.empty(self.program.size(o.result))
        return self.get(o.x)

    def binary(self, k, o):
        n = self.program.size(o.result)
        if BY_CODE[self.program.codes[k]].hessian == ZERO:     # a // b: no derivative
            return self.empty(n)
        A, B = expand(self.get(o.a), n), expand(self.get(o.b), n)
        if self.program.codes[k] in (Op.MAXIMUM, Op.MINIMUM):
            mask = self.program.side_mask(k)
            if mask is not None:
                return select_rows(mask, A, B)
        return union(A, B)

    def copy(self, k, o):
        return self.get(o.a)

    def no_dependence(self, k, o):
        return self.empty(self.program.size(o.result))

    @staticmethod
    def _outer_inner(outer, m, inner):
        u = np.arange(outer, dtype=np.intp)[:, None, None]
        i = np.arange(inner, dtype=np.intp)[None, None, :]
        return np.broadcast_to(u * inner + i, (outer, m, inner)).reshape(-1)

    def broadcast(self, k, o):
        return take_rows(self.get(o.a), self._outer_inner(o.outer, o.m, o.inner))

    def sum(self, k, o):
        target = self._outer_inner(o.outer, o.m, o.inner)
        return apply_left(self.get(o.a), target, np.arange(target.shape[0]), o.outer * o.inner)

    def cumsum(self, k, o):
        outer, m, inner = o.outer, o.m, o.inner
        A = self.get(o.a)
        source = np.flatnonzero(np.diff(A.indptr))          # rows with a domain
        count = m - (source // inner) % m                   # positions they reach
        src = np.repeat(source, count)
        target = src + inner * ragged_arange(np.zeros_like(count), count)
        return apply_left(A, target, src, outer * m * inner)

    def gather(self, k, o):
        return self.get_rows(o.a, self.program.indices(k))

    def gather_at(self, k, o):
        """Indices read at replay: each result element may take any element
        of its fiber along the indexed axis (a bound for every replay)."""
        outer, m, inner = o.outer, o.m, o.inner
        fibers = self._outer_inner(outer, m, inner)
        U = apply_left(self.get(o.a), fibers, np.arange(fibers.shape[0]), outer * inner)
        picks = self.program.size(o.i)
        return take_rows(U, self._outer_inner(outer, picks, inner))

    def select(self, k, o):
        """The mask is read at replay: either side may be taken."""
        n = self.program.size(o.result)
        return union(expand(self.get(o.a), n), expand(self.get(o.b), n))

    def scatter_at(self, k, o):
        """Positions read at replay: each element of a fiber may receive any
        value written to that fiber, and keeps its base (a bound for every
        replay)."""
        outer, m, inner = o.outer, o.m, o.inner
        picks = self.program.size(o.i)
        sources = self._outer_inner(outer, picks, inner)
        U = apply_left(self.get(o.v), sources, np.arange(sources.shape[0]), outer * inner)
        written = take_rows(U, self._outer_inner(outer, m, inner))
        return union(expand(self.get(o.base), outer * m * inner), written)

    def scatter(self, k, o):
        rows = self.program.indices(k)
        V = expand(self.get(o.v), rows.shape[0])
        r = o.result
        if rows.shape[0] <= SMALL_WRITE and rows.shape[0] * 8 < self.program.size(r):
            new = self.pending.setdefault(r, {})
            for j, i in enumerate(rows.tolist()):
                new[i] = V.row(j)
            return None
        return replace_rows(self.get(r), rows, V)

    def where(self, k, o):
        n = self.program.size(o.result)
        A, B = expand(self.get(o.a), n), expand(self.get(o.b), n)
        return select_rows(self.program.where_mask(k), A, B)

    def matmul(self, k, o):
        a, b, m, kk, n = o.a, o.b, o.m, o.k, o.n
        prog = self.program
        result = self.empty(m * n)
        i = np.arange(m, dtype=np.intp)
        j = np.arange(n, dtype=np.intp)
        A, B = self.get(a), self.get(b)
        if A.nnz:           # C[i, j] <- A[i, l] for l with B[l, j] != 0 (all l if B is active)
            if b < 0:
                ls, js = np.nonzero(prog.constant_nonzero(b, (kk, n)))
            else:
                ls, js = np.repeat(np.arange(kk), n), np.tile(j, kk)
            rows = (i[:, None] * n + js[None, :]).reshape(-1)
            cols = (i[:, None] * kk + ls[None, :]).reshape(-1)
            result = union(result, apply_left(A, rows, cols, m * n))
        if B.nnz:           # C[i, j] <- B[l, j] for l with A[i, l] != 0 (all l if A is active)
            if a < 0:
                ii, ls = np.nonzero(prog.constant_nonzero(a, (m, kk)))
            else:
                ii, ls = np.repeat(i, kk), np.tile(np.arange(kk), m)
            rows = (ii[:, None] * n + j[None, :]).reshape(-1)
            cols = (ls[:, None] * n + j[None, :]).reshape(-1)
            result = union(result, apply_left(B, rows, cols, m * n))
        return result

    def quadform(self, k, o):
        """q_b <- x[i, b] for each i that a term C[i, j] x[i] x[j] reads (x
        is k x B for the B members of a batched program)."""
        _, touched = self.program.form_pattern(o)
        B = self.program.size(o.result)
        members = np.arange(B, dtype=np.intp)
        cols = (touched[:, None] * B + members[None, :]).reshape(-1)
        return apply_left(self.get(o.x), np.tile(members, touched.shape[0]), cols, B)

    def spmv(self, k, o):
        """r[out_p, j] <- x[into_p, j] and a[p] for each stored entry p (a
        constant x: only where x[into_p, j] != 0)."""
        out, into, p = self.program.sparse_entries(k)
        n, size = o.n, self.program.size(o.result)
        j = np.arange(n, dtype=np.intp)
        result = self.empty(size)
        X, A = self.get(o.x), self.get(o.a)
        if X.nnz:
            rows = (out[:, None] * n + j[None, :]).reshape(-1)
            cols = (into[:, None] * n + j[None, :]).reshape(-1)
            result = union(result, apply_left(X, rows, cols, size))
        if A.nnz:
            if o.x < 0:
                e, jj = np.nonzero(self.program.constant_nonzero(o.x, (-1, n))[into])
            else:
                e, jj = np.repeat(np.arange(p.shape[0]), n), np.tile(j, p.shape[0])
            result = union(result, apply_left(A, out[e] * n + jj, p[e], size))
        return result

    def callback(self, k, o):
        n = self.program.size(o.result)
        args = [self.get(ref) for ref in o.args]
        cb = self.program.tape.callbacks[o.callback]
        rule = getattr(cb, "pattern", None)
        P = None if rule is None else rule([canonical(a) for a in args])
        if P is None:
            return expand(union_row(args, self.ncols), n)
        if P.shape != (n, self.ncols):
            raise ValueError(f"adsim: {type(cb).__name__}.pattern returned shape {P.shape}; "
                             f"expected {(n, self.ncols)}")
        return Domains.of(canonical(P))


# ---------------------------------------------------------------- liveness

class Liveness:
    """Reverse pass: which elements of each op's result reach the output
    through nonzero partial derivatives. ``run()`` returns {op: mask} for the
    ops in ``wanted`` (those whose Hessian interactions need it).

    A slot's mask is owned by the pass (made by ``mark``) and updated in
    place; once an op's result mask is taken out of the slot it is never
    written again.
    """

    def __init__(self, program, wanted):
        self.program = program
        self.wanted = wanted
        self.live = {}
        self.rules = LIVENESS_RULES.bind(self, program.codes)

    def mark(self, ref, mask):
        """Elements of ``ref`` where ``mask`` influence the output."""
        if ref < 0:
            return
        n = self.program.size(ref)
        old = self.live.get(ref)
        if mask.shape[0] != n:                  # a size-one operand
            mask = np.array([mask.any()])
        if old is None:
            self.live[ref] = np.array(mask, dtype=bool)
        else:
            old |= mask

    def mark_at(self, ref, positions):
        """Elements ``positions`` of ``ref`` influence the output."""
        if ref < 0 or positions.shape[0] == 0:
            return
        old = self.live.get(ref)
        if old is None:
            old = self.live[ref] = np.zeros(self.program.size(ref), dtype=bool)
        old[positions] = True

    def run(self):
        prog = self.program
        self.live[prog.output_slot] = np.ones(prog.output_size, dtype=bool)
        kept = {}
        for k in range(len(prog.codes) - 1, -1, -1):
            o = prog.operands[k]
            r = o[0]
            if r < 0:
                continue
            code = prog.codes[k]
            rule = self.rules[code]
            if o.spec.in_place:                 # only the written part dies
                L = self.live.get(r)
                if L is not None:
                    rule(k, o, L)
                continue
            L = self.live.pop(r, None)
            if L is None or not L.any():
                continue
            if k in self.wanted:
                kept[k] = L
            if rule is not None:
                rule(k, o, L)
        return kept

    def unary(self, k, o, L):
        if self.program.unary_kind(k) != ZERO_DERIVATIVE:
            self.mark(o.x, L)

    def binary(self, k, o, L):
        if BY_CODE[self.program.codes[k]].hessian == ZERO:
            return
        mask = None
        if self.program.codes[k] in (Op.MAXIMUM, Op.MINIMUM):
            mask = self.program.side_mask(k)
        if mask is None:
            self.mark(o.a, L)
            self.mark(o.b, L)
        else:
            self.mark(o.a, L & mask)
            self.mark(o.b, L & ~mask)

    def copy(self, k, o, L):
        self.mark(o.a, L)

    def broadcast(self, k, o, L):
        self.mark(o.a, L.reshape(o.outer, o.m, o.inner).any(axis=1).reshape(-1))

    def sum(self, k, o, L):
        outer, m, inner = o.outer, o.m, o.inner
        self.mark(o.a, np.broadcast_to(L.reshape(outer, 1, inner), (outer, m, inner)).reshape(-1))

    def cumsum(self, k, o, L):
        later = np.logical_or.accumulate(L.reshape(o.outer, o.m, o.inner)[:, ::-1, :], axis=1)
        self.mark(o.a, later[:, ::-1, :].reshape(-1))

    def gather(self, k, o, L):
        self.mark_at(o.a, self.program.indices(k)[L])

    def gather_at(self, k, o, L):
        outer, m, inner = o.outer, o.m, o.inner
        picks = self.program.size(o.i)
        fiber = L.reshape(outer, picks, inner).any(axis=1, keepdims=True)
        self.mark(o.a, np.broadcast_to(fiber, (outer, m, inner)).reshape(-1))

    def select(self, k, o, L):
        self.mark(o.a, L)
        self.mark(o.b, L)

    def scatter_at(self, k, o, L):
        outer, m, inner = o.outer, o.m, o.inner
        picks = self.program.size(o.i)
        self.mark(o.base, L)
        fiber = L.reshape(outer, m, inner).any(axis=1, keepdims=True)
        self.mark(o.v, np.broadcast_to(fiber, (outer, picks, inner)).reshape(-1))

    def scatter(self, k, o, L):
        rows = self.program.indices(k)
        taken = np.zeros(rows.shape[0], dtype=bool)
        taken[last_writes(rows)] = True
        taken &= L[rows]
        if o.v >= 0 and taken.any():
            if self.program.size(o.v) == 1:
                self.mark_at(o.v, np.zeros(1, dtype=np.intp))
            else:
                self.mark_at(o.v, np.flatnonzero(taken))
        L[rows] = False                         # overwritten: the old values are dead

    def where(self, k, o, L):
        mask = self.program.where_mask(k)
        self.mark(o.a, L & mask)
        self.mark(o.b, L & ~mask)

    def matmul(self, k, o, L):
        a, b, m, kk, n = o.a, o.b, o.m, o.k, o.n
        prog = self.program
        L2 = L.reshape(m, n)
        if a >= 0:
            if b < 0:
                nz = prog.constant_nonzero(b, (kk, n)).astype(np.float64)
                La = (L2.astype(np.float64) @ nz.T) > 0
            else:
                La = np.broadcast_to(L2.any(axis=1)[:, None], (m, kk))
            self.mark(a, La.reshape(-1))
        if b >= 0:
            if a < 0:
                nz = prog.constant_nonzero(a, (m, kk)).astype(np.float64)
                Lb = (nz.T @ L2.astype(np.float64)) > 0
            else:
                Lb = np.broadcast_to(L2.any(axis=0)[None, :], (kk, n))
            self.mark(b, Lb.reshape(-1))

    def quadform(self, k, o, L):
        _, touched = self.program.form_pattern(o)
        read = np.zeros(o.k, dtype=bool)
        read[touched] = True
        self.mark(o.x, (read[:, None] & L[None, :]).reshape(-1))

    def spmv(self, k, o, L):
        out, into, p = self.program.sparse_entries(k)
        n = o.n
        L2 = L.reshape(-1, n)
        if o.x >= 0:
            rows_in = self.program.size(o.x) // n if n else 0
            M = sp.csr_array((np.ones(out.shape[0]), (into, out)), shape=(rows_in, L2.shape[0]))
            self.mark(o.x, ((M @ L2.astype(np.float64)) > 0).reshape(-1))
        if o.a >= 0:
            La = np.zeros(self.program.size(o.a), dtype=bool)
            La[p] = L2[out].any(axis=1)
            self.mark(o.a, La)

    def callback(self, k, o, L):
        for ref in o.args:
            self.mark(ref, np.ones(self.program.size(ref), dtype=bool))


# ---------------------------------------------------------------- Hessian sweep

class Interactions:
    """The hook of a DomainSweep that collects nonlinear interactions."""

    def __init__(self, sweep, live):
        self.sweep = sweep
        self.program = sweep.program
        self.live = live
        self.n = sweep.ncols
        self.rows, self.cols = [], []
        self.pending = 0
        self.merged = sp.csr_array((self.n, self.n), dtype=bool)
        self.rules = INTERACTION_RULES.bind(self, self.program.codes)

    def add(self, A, B):
        """Interactions ``A^T B``: for every row k, dom_A(k) x dom_B(k)."""
        if A.nnz == 0 or B.nnz == 0:
            return
        if A.nrows == 1:
            a, b = A.indices, B.indices
            self.rows.append(np.repeat(a, b.shape[0]))
            self.cols.append(np.tile(b, a.shape[0]))
        else:
            M = (A.scipy().T @ B.scipy()).tocoo()
            self.rows.append(M.coords[0])
            self.cols.append(M.coords[1])
        self.pending += self.rows[-1].shape[0]
        if self.pending > _MERGE_NNZ + 2 * self.merged.nnz:
            self.merge()

    def merge(self):
        if self.rows:
            merged = sp.coo_array(self.merged)
            rows = np.concatenate([merged.coords[0]] + self.rows)
            cols = np.concatenate([merged.coords[1]] + self.cols)
            coo = sp.coo_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)),
                               shape=(self.n, self.n))
            self.merged = canonical(coo.tocsr())
            self.rows, self.cols, self.pending = [], [], 0
        return self.merged

    def rows_of(self, ref, live_rows, n):
        if self.program.size(ref) == 1 and n != 1:
            return take_rows(self.sweep.get(ref), np.zeros(live_rows.shape[0], dtype=np.intp))
        return self.sweep.get_rows(ref, live_rows)

    def __call__(self, k, result):
        L = self.live.get(k)
        if L is None:
            return
        prog = self.program
        rows = np.flatnonzero(L)
        self.k = k                  # (the op's place, for rules that read its index data)
        self.rules[prog.codes[k]](prog.operands[k], L, rows, result)

    # ---- rules: the interactions of one op's live elements ------------------
    def unary(self, o, L, rows, result):
        Q = self.rows_of(o.x, rows, L.shape[0])
        self.add(Q, Q)

    def binary(self, o, L, rows, result):
        n = L.shape[0]
        A, B = self.rows_of(o.a, rows, n), self.rows_of(o.b, rows, n)
        code = o.spec.code
        if code == Op.MUL:
            self.add(A, B)
        elif code == Op.DIV:                        # a/b: no a-a term
            self.add(A, B)
            self.add(B, B)
        else:
            U = union(A, B)
            self.add(U, U)

    def callback(self, o, L, rows, result):
        if getattr(self.program.tape.callbacks[o.callback], "linear", False):
            return
        Q = take_rows(result, rows)
        self.add(Q, Q)

    def matmul(self, o, L, rows, result):
        a, b, m, kk, n = o.a, o.b, o.m, o.k, o.n
        A, B = self.sweep.get(a), self.sweep.get(b)
        if A.nnz == 0 or B.nnz == 0:
            return
        ii, jj = np.nonzero(L.reshape(m, n))
        ls = np.arange(kk, dtype=np.intp)
        rows = (ii[:, None] * kk + ls[None, :]).reshape(-1)      # A[i, l] ...
        cols = (ls[None, :] * n + jj[:, None]).reshape(-1)       # ... times B[l, j]
        X = sp.csr_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)),
                         shape=(m * kk, kk * n))
        self.add(A, Domains.of(X @ B.scipy()))

    def quadform(self, o, L, rows, result):
        """dom(x[i, b]) x dom(x[j, b]) wherever C[i, j] or C[j, i] is not zero,
        for each live member b."""
        X = self.sweep.get(o.x)
        if X.nnz == 0:
            return
        S, _ = self.program.form_pattern(o)
        coupling = sp.kron(S, sp.diags(L.astype(np.float64)), format="csr")
        self.add(X, Domains.of((coupling @ X.scipy().astype(np.float64)) != 0))

    def spmv(self, o, L, rows, result):
        """dom(a_p) x dom(x[into_p, j]) for each live r[out_p, j]."""
        A, X = self.sweep.get(o.a), self.sweep.get(o.x)
        if A.nnz == 0 or X.nnz == 0:
            return
        out, into, p = self.program.sparse_entries(self.k)
        n = o.n
        e, jj = np.nonzero(L.reshape(-1, n)[out])
        M = sp.csr_array((np.ones(e.shape[0], dtype=bool), (p[e], into[e] * n + jj)),
                         shape=(A.nrows, X.nrows))
        self.add(A, Domains.of(M @ X.scipy()))


def _wanted_ops(program):
    """Ops that add Hessian interactions: those with an interaction rule,
    less the ones this tape makes linear (a unary op whose parameter makes
    it linear, a product or quotient by a constant, a matrix product with a
    constant factor)."""
    wanted = set()
    for k, code in enumerate(program.codes):
        if INTERACTION_RULES.rule(code) is None:
            continue
        o = program.operands[k]
        kind = o.spec.family
        if kind == "unary":
            if program.unary_kind(k) != NONLINEAR_OP:
                continue
        elif kind == "binary":
            if code == Op.MUL and (o.a < 0 or o.b < 0) or code == Op.DIV and o.b < 0:
                continue
        elif code == Op.QUADFORM:
            if o.x < 0:
                continue
        elif kind == "linalg":
            if o.a < 0 or (o.x if code == Op.SPMV else o.b) < 0:
                continue
        wanted.add(k)
    return wanted


# ---------------------------------------------------------------- rule tables

_NO_DERIVATIVE = [spec.name for spec in TABLE if spec.family != "branch" and
                  spec.hessian == ZERO and spec.family not in ("unary", "binary")]

# Jacobian sparsity: the result's index domains from the operands'
JACOBIAN_RULES = RuleTable("Jacobian sparsity", "adsim/sparse/pattern.py (DomainSweep)", [
    (family("unary"), "unary"), (family("binary"), "binary"), (family("branch"), None),
    ("COPY", "copy"), (_NO_DERIVATIVE, "no_dependence"), ("BROADCAST", "broadcast"),
    ("SUM", "sum"), ("CUMSUM", "cumsum"), ("GATHER", "gather"), ("SCATTER", "scatter"),
    ("WHERE", "where"), ("GATHER_AT", "gather_at"), ("SCATTER_AT", "scatter_at"),
    ("SELECT", "select"), ("MATMUL", "matmul"), ("SPMV", "spmv"), ("QUADFORM", "quadform"),
    ("CALLBACK", "callback")])

# liveness: the operand elements through which a live result element reaches the output
LIVENESS_RULES = RuleTable("Hessian liveness", "adsim/sparse/pattern.py (Liveness)", [
    (family("unary"), "unary"), (family("binary"), "binary"), (family("branch"), None),
    ("COPY", "copy"), (_NO_DERIVATIVE, None), ("BROADCAST", "broadcast"), ("SUM", "sum"),
    ("CUMSUM", "cumsum"), ("GATHER", "gather"), ("SCATTER", "scatter"), ("WHERE", "where"),
    ("GATHER_AT", "gather_at"), ("SCATTER_AT", "scatter_at"), ("SELECT", "select"),
    ("MATMUL", "matmul"), ("SPMV", "spmv"), ("QUADFORM", "quadform"), ("CALLBACK", "callback")])

# Hessian interactions: the variable pairs a nonlinear op couples (linear ops: none)
INTERACTION_RULES = RuleTable("Hessian interactions", "adsim/sparse/pattern.py (Interactions)", [
    ([spec.name for spec in TABLE if spec.hessian in (LINEAR, ZERO)], None),
    ([spec.name for spec in TABLE if spec.family == "unary" and spec.hessian == NONLINEAR],
     "unary"),
    ([spec.name for spec in TABLE if spec.family == "binary" and
      spec.hessian in (NONLINEAR, BILINEAR)], "binary"),
    ("MATMUL", "matmul"), ("SPMV", "spmv"), ("QUADFORM", "quadform"), ("CALLBACK", "callback")])


# ---------------------------------------------------------------- public

def jacobian_pattern(tape, inputs=None):
    """Sparsity pattern of the Jacobian of a recorded tape.

    Parameters
    ----------
    tape : adsim.Tape
        A finished recording (:func:`adsim.record`).
    inputs : sequence of int, optional
        Positions of the tape inputs whose columns are wanted (default all,
        in order); the others count as constants.

    Returns
    -------
    scipy.sparse.csr_array
        Boolean, (output size) x (total size of the selected inputs), rows
        and columns in C order of the flattened arrays; sorted indices.
        Entry ``(i, j)`` is stored when output ``i`` depends on input ``j``
        along the recorded control path.

    Examples
    --------
    >>> import numpy as np, adsim
    >>> tape = adsim.record(lambda x: x[1:] * x[:-1], np.ones(4))
    >>> jacobian_pattern(tape).toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    return canonical(DomainSweep(Program(tape, inputs)).run())


def hessian_pattern(tape, inputs=None):
    """Sparsity pattern of the Hessian of a recorded tape [1]_.

    For a vector output the pattern is the union over the output elements
    (the Hessian of ``w . f`` for a generic weight ``w``).

    Parameters
    ----------
    tape : adsim.Tape
    inputs : sequence of int, optional
        As in :func:`jacobian_pattern`.

    Returns
    -------
    scipy.sparse.csr_array
        Boolean, symmetric, n x n over the selected inputs' elements.

    Examples
    --------
    >>> import numpy as np, adsim
    >>> tape = adsim.record(lambda x: np.sum(x[1:] * x[:-1]) + np.exp(x[0]), np.ones(4))
    >>> hessian_pattern(tape).toarray().astype(int)
    array([[1, 1, 0, 0],
           [1, 0, 1, 0],
           [0, 1, 0, 1],
           [0, 0, 1, 0]])
    """
    program = Program(tape, inputs)
    live = Liveness(program, _wanted_ops(program)).run()
    sweep = DomainSweep(program)
    interactions = Interactions(sweep, live)
    sweep.run(interactions)
    H = interactions.merge()
    return canonical(H + H.T)
