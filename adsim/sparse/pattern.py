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
interactions are ``dom(y_k) x dom(y_k)`` for each marked output element.

References
----------
.. [1] A. Walther, "Computing sparse Hessians with automatic
   differentiation", ACM Trans. Math. Software 34(1), article 3, 2008.
.. [2] A. Griewank and A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM,
   2008, ch. 7 (sparse forward and reverse propagation of index domains).
"""
import numpy as np
import scipy.sparse as sp

from adsim.ops import BY_CODE, LINEAR, NONLINEAR
from adsim._tape import Opcode as Op

__all__ = ["hessian_pattern", "iterate_pattern", "jacobian_pattern"]

_MERGE_NNZ = 4_000_000      # merge accumulated Hessian terms beyond this many entries


# ---------------------------------------------------------------- CSR helpers

def _csr(indptr, indices, shape):
    """Boolean CSR array on the given structure (no copies, no checks of order)."""
    data = np.ones(indices.shape[0], dtype=bool)
    return sp.csr_array((data, indices, indptr), shape=shape)


def _empty(rows, ncols):
    return _csr(np.zeros(rows + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), (rows, ncols))


def _ragged_arange(start, count):
    """Concatenation of ``arange(start[i], start[i] + count[i])`` over i."""
    total = int(count.sum())
    if total == 0:
        return np.zeros(0, dtype=np.intp)
    ends = np.cumsum(count)
    shift = np.repeat(start - (ends - count), count)
    return np.arange(total, dtype=np.intp) + shift


def _row_of_entries(P):
    return np.repeat(np.arange(P.shape[0], dtype=np.intp), np.diff(P.indptr))


def take_rows(P, rows):
    """Rows ``rows`` (int array, repeats allowed) of the CSR pattern ``P``."""
    rows = np.asarray(rows, dtype=np.intp)
    if P.nnz == 0:
        return _empty(rows.shape[0], P.shape[1])
    start = P.indptr[rows].astype(np.intp)
    count = P.indptr[rows + 1] - start
    indptr = np.zeros(rows.shape[0] + 1, dtype=np.intp)
    np.cumsum(count, out=indptr[1:])
    return _csr(indptr, P.indices[_ragged_arange(start, count)], (rows.shape[0], P.shape[1]))


def keep_rows(P, keep):
    """``P`` with the rows where ``keep`` is False emptied."""
    if P.nnz == 0 or keep.all():
        return P
    kept = keep[_row_of_entries(P)]
    indptr = np.zeros(P.shape[0] + 1, dtype=np.intp)
    np.cumsum(np.where(keep, np.diff(P.indptr), 0), out=indptr[1:])
    return _csr(indptr, P.indices[kept], P.shape)


def union(A, B):
    """Entrywise union of two patterns of one shape."""
    if A is B or B.nnz == 0:
        return A
    if A.nnz == 0:
        return B
    return A + B


def expand(P, n):
    """``P`` with ``n`` rows: itself, or its single row repeated (a broadcast scalar)."""
    if P.shape[0] == n:
        return P
    assert P.shape[0] == 1, "operands have the result's size or size one"
    return take_rows(P, np.zeros(n, dtype=np.intp))


def merge_rows(P, target, nrows):
    """Pattern with ``nrows`` rows whose row ``t`` is the union of the rows
    ``i`` of ``P`` with ``target[i] == t`` (a 0-1 matrix applied on the left)."""
    if P.nnz == 0:
        return _empty(nrows, P.shape[1])
    source = np.arange(P.shape[0], dtype=np.intp)
    S = sp.csr_array((np.ones(source.shape[0], dtype=bool), (target, source)),
                     shape=(nrows, P.shape[0]))
    return S @ P


def select_rows(mask, A, B):
    """Row ``i`` from ``A`` where ``mask[i]``, else from ``B`` (same shapes)."""
    if B.nnz == 0 or mask.all():
        return keep_rows(A, mask)
    if A.nnz == 0 or not mask.any():
        return keep_rows(B, ~mask)
    n = mask.shape[0]
    both = sp.vstack([A, B], format="csr")
    return take_rows(both, np.where(mask, np.arange(n), n + np.arange(n)))


def replace_rows(R, rows, V):
    """``R`` with rows ``rows[j]`` replaced by row ``j`` of ``V``; when an index
    repeats, the last write wins (the SCATTER rule)."""
    n = R.shape[0]
    m = rows.shape[0]
    _, first_reversed = np.unique(rows[::-1], return_index=True)
    last = m - 1 - first_reversed                  # position of the last write per index
    source = np.arange(n, dtype=np.intp)
    source[rows[last]] = n + last
    if V.nnz == 0:
        keep = np.ones(n, dtype=bool)
        keep[rows] = False
        return keep_rows(R, keep)
    both = sp.vstack([R, V], format="csr")
    return take_rows(both, source)


def canonical(P):
    """Sorted indices, no duplicates, boolean data, ``csr_array``."""
    P = sp.csr_array(P, dtype=bool)
    P.sum_duplicates()
    P.sort_indices()
    P.eliminate_zeros()
    return P


def _stack_union(patterns, ncols):
    """One row: the union of every row of every pattern."""
    rows = [P for P in patterns if P.nnz]
    if not rows:
        return _empty(1, ncols)
    cols = np.unique(np.concatenate([P.indices for P in rows]))
    return _csr(np.array([0, cols.shape[0]], dtype=np.intp), cols, (1, ncols))


def iterate_pattern(step_state, step_args, state, args, n_steps):
    """Index domains of a loop state after ``n_steps`` steps.

    A helper for the ``pattern`` method of loop callbacks: if one step maps
    ``(z, a) -> z'`` with Jacobian patterns ``step_state`` (z' w.r.t. z) and
    ``step_args`` (z' w.r.t. a), the state's domains follow
    ``Z <- step_state Z  u  step_args A``. The iteration is deterministic, so
    it stops at a fixed point (at most ``n_steps`` products).

    Parameters
    ----------
    step_state : sparse (s x s) ; step_args : sparse (s x p) or None
    state : sparse (s x N)
        Domains of the initial state.
    args : sparse (p x N) or None
        Domains of the loop arguments.
    n_steps : int

    Returns
    -------
    scipy.sparse.csr_array
        Boolean (s x N).
    """
    Z = canonical(state)
    Jz = canonical(step_state)
    source = canonical(step_args) @ canonical(args) if step_args is not None and \
        args is not None else None
    for _ in range(int(n_steps)):
        nxt = Jz @ Z
        if source is not None:
            nxt = union(nxt, source)
        nxt = canonical(nxt)
        if nxt.nnz == Z.nnz and np.array_equal(nxt.indptr, Z.indptr) and \
                np.array_equal(nxt.indices, Z.indices):
            break
        Z = nxt
    return Z


# ---------------------------------------------------------------- op decoding

ZERO_DERIVATIVE, LINEAR_OP, NONLINEAR_OP = 0, 1, 2


def unary_kind(code, c):
    """Whether a unary op with parameter ``c`` has a zero, constant or varying
    derivative (the op table's class, refined by the parameter)."""
    if code in (Op.SIGN, Op.STOP_GRADIENT):
        return ZERO_DERIVATIVE
    if code == Op.MUL_C and c == 0.0 or code == Op.RDIV_C and c == 0.0:
        return ZERO_DERIVATIVE
    if code == Op.POW_C and c in (0.0, 1.0):
        return ZERO_DERIVATIVE if c == 0.0 else LINEAR_OP
    if code == Op.RPOW_C and c == 1.0:
        return ZERO_DERIVATIVE
    return NONLINEAR_OP if BY_CODE[code].hessian == NONLINEAR else LINEAR_OP


class Program:
    """The ops of a tape decoded once: opcodes, operands and the columns
    (independents) of the selected inputs."""

    def __init__(self, tape, inputs=None):
        if tape.recording or tape.output_slot is None:
            raise RuntimeError("adsim: sparsity needs a finished recording (adsim.record)")
        self.tape = tape
        self.codes = [int(c) for c in tape.op_codes()]
        self.operands = [tape.op_operands(k) for k in range(len(self.codes))]
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
        o = self.operands[k]
        return self.tape.param_value(o[2]) if o[2] >= 0 else 0.0

    def unary_kind(self, k):
        return unary_kind(self.codes[k], self.param(k))

    def side_mask(self, k):
        """For maximum/minimum: True where the first operand was taken, read
        from the comparison recorded just before the op (None if absent)."""
        o = self.operands[k]
        if k > 0 and self.codes[k - 1] == Op.COMPARE:
            c = self.operands[k - 1]
            if c[1] == o[1] and c[2] == o[2]:
                return self.tape.branch_outcome(c[4], c[5])
        return None

    def where_mask(self, k):
        o = self.operands[k]
        return self.tape.branch_outcome(o[3], self.size(o[0]))

    def indices(self, k):
        o = self.operands[k]
        n = o[3] if self.codes[k] == Op.SCATTER else self.size(o[0])
        return self.tape.index_record(o[2], n).astype(np.intp)

    def constant_nonzero(self, ref, shape):
        return self.tape.slot_value(ref).reshape(shape) != 0.0

    def family(self, k):
        return BY_CODE[self.codes[k]].family

    def spec(self, k):
        return BY_CODE[self.codes[k]]


# ---------------------------------------------------------------- forward sweep

class DomainSweep:
    """Forward propagation of index domains over a Program.

    ``run(hook)`` walks the ops; ``hook(k, result)``, when given, is called
    after op k's result pattern is computed and before it is stored, so
    ``self.get`` still returns the operands' patterns.
    """

    def __init__(self, program):
        self.program = program
        self.ncols = program.ncols
        self.patterns = {}
        self._empties = {}
        rules = {"unary": self.unary, "binary": self.binary, "linalg": self.matmul,
                 "callback": self.callback, "branch": None}
        structural = {"COPY": self.copy, "FILL": self.fill, "BROADCAST": self.broadcast,
                      "SUM": self.sum, "CUMSUM": self.cumsum, "GATHER": self.gather,
                      "SCATTER": self.scatter, "WHERE": self.where}
        self.rules = {}
        for code in set(program.codes):
            spec = BY_CODE[code]
            if spec.family == "structural":
                if spec.name not in structural:
                    raise NotImplementedError(f"adsim: no sparsity rule for op {spec.name}")
                self.rules[code] = structural[spec.name]
            elif spec.family in rules:
                self.rules[code] = rules[spec.family]
            else:
                raise NotImplementedError(f"adsim: no sparsity rule for op {spec.name} "
                                          f"(family {spec.family})")

    def empty(self, rows):
        P = self._empties.get(rows)
        if P is None:
            P = self._empties[rows] = _empty(rows, self.ncols)
        return P

    def get(self, ref):
        """Domains of a slot (its current contents) or constant (empty)."""
        if ref >= 0:
            P = self.patterns.get(ref)
            if P is not None:
                return P
        return self.empty(self.program.size(ref))

    def run(self, hook=None):
        prog = self.program
        for slot, offset, size in prog.columns:
            indptr = np.arange(size + 1, dtype=np.intp)
            self.patterns[slot] = _csr(indptr, offset + np.arange(size, dtype=np.intp),
                                       (size, self.ncols))
        rules, operands, patterns = self.rules, prog.operands, self.patterns
        for k, code in enumerate(prog.codes):
            rule = rules[code]
            if rule is None:
                continue
            o = operands[k]
            result = rule(k, o)
            if hook is not None:
                hook(k, result)
            patterns[o[0]] = result
        return self.get(prog.output_slot)

    # ---- rules: each returns the result's domains ----------------------
    def unary(self, k, o):
        if self.program.unary_kind(k) == ZERO_DERIVATIVE:
            return self.empty(self.program.size(o[0]))
        return self.get(o[1])

    def binary(self, k, o):
        n = self.program.size(o[0])
        A, B = expand(self.get(o[1]), n), expand(self.get(o[2]), n)
        if self.program.codes[k] in (Op.MAXIMUM, Op.MINIMUM):
            mask = self.program.side_mask(k)
            if mask is not None:
                return select_rows(mask, A, B)
        return union(A, B)

    def copy(self, k, o):
        return self.get(o[1])

    def fill(self, k, o):
        return self.empty(self.program.size(o[0]))

    def broadcast(self, k, o):
        outer, m, inner = o[2], o[3], o[4]
        u = np.arange(outer, dtype=np.intp)[:, None, None]
        i = np.arange(inner, dtype=np.intp)[None, None, :]
        rows = np.broadcast_to(u * inner + i, (outer, m, inner)).reshape(-1)
        return take_rows(self.get(o[1]), rows)

    def sum(self, k, o):
        outer, m, inner = o[2], o[3], o[4]
        u = np.arange(outer, dtype=np.intp)[:, None, None]
        i = np.arange(inner, dtype=np.intp)[None, None, :]
        target = np.broadcast_to(u * inner + i, (outer, m, inner)).reshape(-1)
        return merge_rows(self.get(o[1]), target, outer * inner)

    def cumsum(self, k, o):
        outer, m, inner = o[2], o[3], o[4]
        A = self.get(o[1])
        if A.nnz == 0:
            return self.empty(outer * m * inner)
        source = np.flatnonzero(np.diff(A.indptr))          # rows with a domain
        kk = (source // inner) % m                          # their position on the axis
        count = m - kk                                      # they reach positions kk..m-1
        src = np.repeat(source, count)
        target = src + inner * _ragged_arange(np.zeros_like(kk), count)
        S = sp.csr_array((np.ones(src.shape[0], dtype=bool), (target, src)),
                         shape=(outer * m * inner, A.shape[0]))
        return S @ A

    def gather(self, k, o):
        return take_rows(self.get(o[1]), self.program.indices(k))

    def scatter(self, k, o):
        rows = self.program.indices(k)
        V = expand(self.get(o[1]), rows.shape[0])
        return replace_rows(self.get(o[0]), rows, V)

    def where(self, k, o):
        n = self.program.size(o[0])
        A, B = expand(self.get(o[1]), n), expand(self.get(o[2]), n)
        return select_rows(self.program.where_mask(k), A, B)

    def matmul(self, k, o):
        r, a, b, m, kk, n = o[:6]
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
            M = sp.csr_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)),
                             shape=(m * n, m * kk))
            result = union(result, M @ A)
        if B.nnz:           # C[i, j] <- B[l, j] for l with A[i, l] != 0 (all l if A is active)
            if a < 0:
                ii, ls = np.nonzero(prog.constant_nonzero(a, (m, kk)))
            else:
                ii, ls = np.repeat(i, kk), np.tile(np.arange(kk), m)
            rows = (ii[:, None] * n + j[None, :]).reshape(-1)
            cols = (ls[:, None] * n + j[None, :]).reshape(-1)
            M = sp.csr_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)),
                             shape=(m * n, kk * n))
            result = union(result, M @ B)
        return result

    def callback(self, k, o):
        n = self.program.size(o[0])
        args = [self.get(ref) for ref in o[3:3 + o[2]]]
        cb = self.program.tape.callbacks[o[1]]
        rule = getattr(cb, "pattern", None)
        if rule is None:
            return expand(_stack_union(args, self.ncols), n)
        P = rule([canonical(a) for a in args])
        if P is None:
            return expand(_stack_union(args, self.ncols), n)
        if P.shape != (n, self.ncols):
            raise ValueError(f"adsim: {type(cb).__name__}.pattern returned shape {P.shape}; "
                             f"expected {(n, self.ncols)}")
        return canonical(P)


# ---------------------------------------------------------------- liveness

class Liveness:
    """Reverse pass: which elements of each op's result reach the output
    through nonzero partial derivatives. ``run()`` returns {op: mask} for the
    ops whose Hessian interactions depend on it."""

    def __init__(self, program, wanted):
        self.program = program
        self.wanted = wanted           # ops whose result masks are kept
        self.live = {}
        families = {"unary": self.unary, "binary": self.binary, "linalg": self.matmul,
                    "callback": self.callback}
        structural = {"COPY": self.copy, "FILL": None, "BROADCAST": self.broadcast,
                      "SUM": self.sum, "CUMSUM": self.cumsum, "GATHER": self.gather,
                      "SCATTER": None, "WHERE": self.where}
        self.rules = {}
        for code in set(program.codes):
            spec = BY_CODE[code]
            if spec.family == "structural":
                self.rules[code] = structural[spec.name]
            else:
                self.rules[code] = families.get(spec.family)

    def mark(self, ref, mask):
        """Elements of ``ref`` (where ``mask``) influence the output."""
        if ref < 0:
            return
        n = self.program.size(ref)
        if mask.shape[0] != n:
            mask = np.array([mask.any()]) if n == 1 else np.broadcast_to(mask, (n,))
        old = self.live.get(ref)
        self.live[ref] = np.array(mask, dtype=bool) if old is None else old | mask

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
            L = self.live.get(r)
            if code == Op.SCATTER:
                if L is not None and L.any():
                    self.scatter(k, o, L)
                continue
            self.live.pop(r, None)
            if L is None or not L.any():
                continue
            if k in self.wanted:
                kept[k] = L
            rule = self.rules[code]
            if rule is not None:
                rule(k, o, L)
        return kept

    def unary(self, k, o, L):
        if self.program.unary_kind(k) != ZERO_DERIVATIVE:
            self.mark(o[1], L)

    def binary(self, k, o, L):
        mask = None
        if self.program.codes[k] in (Op.MAXIMUM, Op.MINIMUM):
            mask = self.program.side_mask(k)
        if mask is None:
            self.mark(o[1], L)
            self.mark(o[2], L)
        else:
            self.mark(o[1], L & mask)
            self.mark(o[2], L & ~mask)

    def copy(self, k, o, L):
        self.mark(o[1], L)

    def broadcast(self, k, o, L):
        outer, m, inner = o[2], o[3], o[4]
        self.mark(o[1], L.reshape(outer, m, inner).any(axis=1).reshape(-1))

    def sum(self, k, o, L):
        outer, m, inner = o[2], o[3], o[4]
        self.mark(o[1], np.broadcast_to(L.reshape(outer, 1, inner), (outer, m, inner)).reshape(-1))

    def cumsum(self, k, o, L):
        outer, m, inner = o[2], o[3], o[4]
        later = np.logical_or.accumulate(L.reshape(outer, m, inner)[:, ::-1, :], axis=1)
        self.mark(o[1], later[:, ::-1, :].reshape(-1))

    def gather(self, k, o, L):
        La = np.zeros(self.program.size(o[1]), dtype=bool)
        La[self.program.indices(k)[L]] = True
        self.mark(o[1], La)

    def scatter(self, k, o, L):
        rows = self.program.indices(k)
        m = rows.shape[0]
        _, first_reversed = np.unique(rows[::-1], return_index=True)
        last = np.zeros(m, dtype=bool)
        last[m - 1 - first_reversed] = True
        self.mark(o[1], L[rows] & last)
        before = L.copy()
        before[rows] = False
        self.live[o[0]] = before

    def where(self, k, o, L):
        mask = self.program.where_mask(k)
        self.mark(o[1], L & mask)
        self.mark(o[2], L & ~mask)

    def matmul(self, k, o, L):
        r, a, b, m, kk, n = o[:6]
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

    def callback(self, k, o, L):
        for ref in o[3:3 + o[2]]:
            self.mark(ref, np.ones(self.program.size(ref), dtype=bool))


# ---------------------------------------------------------------- Hessian sweep

class Interactions:
    """Accumulates the nonlinear interactions of a Hessian pattern."""

    def __init__(self, sweep, live):
        self.sweep = sweep
        self.program = sweep.program
        self.live = live
        self.n = sweep.ncols
        self.terms = []
        self.pending = 0
        self.merged = _empty(self.n, self.n)

    def add(self, M):
        if M.nnz == 0:
            return
        self.terms.append(M)
        self.pending += M.nnz
        if self.pending > _MERGE_NNZ + 2 * self.merged.nnz:
            self.merge()

    def merge(self):
        if self.terms:
            parts = [self.merged] + self.terms
            rows = np.concatenate([_row_of_entries(P) for P in parts])
            cols = np.concatenate([P.indices for P in parts]).astype(np.intp)
            coo = sp.coo_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)),
                               shape=(self.n, self.n))
            self.merged = canonical(coo.tocsr())
            self.terms, self.pending = [], 0
        return self.merged

    def rows_of(self, ref, live_rows, n):
        P = self.sweep.get(ref)
        if P.shape[0] == 1 and n != 1:
            return take_rows(P, np.zeros(live_rows.shape[0], dtype=np.intp))
        return take_rows(P, live_rows)

    def __call__(self, k, result):
        L = self.live.get(k)
        if L is None:
            return
        prog = self.program
        o = prog.operands[k]
        family = prog.family(k)
        rows = np.flatnonzero(L)
        n = L.shape[0]
        if family == "unary":
            if prog.unary_kind(k) == NONLINEAR_OP:
                Q = self.rows_of(o[1], rows, n)
                self.add(Q.T @ Q)
        elif family == "binary":
            code = prog.codes[k]
            if BY_CODE[code].hessian == LINEAR:
                return
            A, B = self.rows_of(o[1], rows, n), self.rows_of(o[2], rows, n)
            if code == Op.MUL:
                if A.nnz and B.nnz:
                    self.add(A.T @ B)
            elif code == Op.DIV:
                if A.nnz and B.nnz:
                    self.add(A.T @ B)
                if B.nnz:
                    self.add(B.T @ B)
            else:
                U = union(A, B)
                self.add(U.T @ U)
        elif family == "linalg":
            self.matmul(o, L)
        elif family == "callback":
            Q = take_rows(result, rows)
            self.add(Q.T @ Q)

    def matmul(self, o, L):
        r, a, b, m, kk, n = o[:6]
        if a < 0 or b < 0:
            return                               # linear in the active factor
        A, B = self.sweep.get(a), self.sweep.get(b)
        if A.nnz == 0 or B.nnz == 0:
            return
        ii, jj = np.nonzero(L.reshape(m, n))
        ls = np.arange(kk, dtype=np.intp)
        rows = (ii[:, None] * kk + ls[None, :]).reshape(-1)      # A[i, l]
        cols = (ls[None, :] * n + jj[:, None]).reshape(-1)       # B[l, j]
        X = sp.csr_array((np.ones(rows.shape[0], dtype=bool), (rows, cols)),
                         shape=(m * kk, kk * n))
        self.add(A.T @ (X @ B))


def _wanted_ops(program):
    """Ops that can add Hessian interactions."""
    wanted = set()
    for k, code in enumerate(program.codes):
        spec = BY_CODE[code]
        if spec.family == "unary":
            if program.unary_kind(k) == NONLINEAR_OP:
                wanted.add(k)
        elif spec.family in ("binary", "linalg", "callback") and spec.hessian != LINEAR:
            wanted.add(k)
    return wanted


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
    sweep = DomainSweep(Program(tape, inputs))
    return canonical(sweep.run())


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
