"""A finished tape's Jacobian written out as ops of the recording in progress.

Nested derivatives are primitives whose values come from compiled sweeps of
an inner tape (adsim/_nesting/nested.py), and whose own derivatives are second-order
sweeps of it. One order more — a Hessian-vector product through ``grad``,
``grad(grad(grad(f)))`` — needs the derivative as a *recorded computation*.
:func:`jacobian` provides it: it runs the inner tape's ops again on active
arrays of the recording in progress (the forward pass), then each op's
adjoint rule, written with NumPy operations on those arrays, in reverse
order (one reverse pass per output element). The Jacobian is thus an
active array made of ordinary ops, whose derivatives the outer tape knows;
applied to its own result the construction reaches any order (repeated
differentiation of the derivative program: Griewank & Walther, *Evaluating
Derivatives*, 2nd ed., SIAM 2008, ch. 13).

Paths: the caller first checks that the inner tape holds at the current
values (a replay that raises ``BranchChanged`` otherwise). The comparisons
and ``argmax`` records of the inner tape are recorded again on the outer
tape, so outer replays check them; its indices and ``where`` masks are
constants of that path. Masks that the adjoint rules need (the side of
``abs``, ``maximum``, ``minimum``) are recorded comparisons. An adjoint that
is exactly zero stays zero (0 · inf = 0) where a rule's factor can be
infinite, through a recorded test of the adjoint, as in the compiled sweeps.

Ops are processed on flat arrays (a slot's elements); the values of every
op are kept per op, so that a slot written again later (reused, or updated
in place) still gives each rule the values it read.
"""
import numpy as np
import scipy.sparse as sp

from .._opcodes import Opcode as Op
from .._active import Active, record_binary_refs, record_unary, wrap
from .._np.core import as_active, binary, gather
from .._np import sparse_products
from .._np.views import ufunc_at
from ..errors import BranchChanged, UnsupportedOperation
from .._rules import RuleTable, family
from ..ops import BY_CODE, TABLE, ZERO, UnaryRule, numpy_rule
from ..primitives import Application, _rule_adjoints
from ..sparse.pattern import Program



def jacobian(tape, inputs, wrt):
    """d output / d inputs[wrt] of the finished ``tape`` at ``inputs`` (one
    value per tape input: active arrays of the recording in progress, or
    plain arrays), shaped ``output.shape + inputs[wrt].shape``, recorded."""
    out_shape = tuple(tape.output_shape)
    rows = weighted_adjoints(tape, inputs, wrt, np.eye(int(np.prod(out_shape))))
    return rows.reshape(out_shape + np.shape(inputs[wrt]))


def weighted_adjoints(tape, inputs, wrt, weights):
    """``weights @ (d output / d inputs[wrt])`` of the finished ``tape`` at
    ``inputs`` (as :func:`jacobian`), recorded: one reverse pass per row of
    ``weights`` (k, output size), shaped (k, inputs[wrt].size). A row
    coloring's seeds give the compressed Jacobian of a sparse one."""
    run = _Transcription(tape, inputs)
    size = int(np.size(inputs[wrt]))
    rows = [run.adjoint_of_input(np.asarray(w, dtype=float), wrt) for w in weights]
    if not rows:
        return np.zeros((0, size))
    if not any(isinstance(r, Active) for r in rows):
        return np.stack(rows).reshape(len(rows), size)
    return np.stack([as_active(run.outer, r) for r in rows]).reshape(len(rows), size)


def _flat(v):
    return v.reshape(-1) if isinstance(v, Active) else np.asarray(v, dtype=float).reshape(-1)


def _times(g, d):
    """g * d, exactly zero where g is zero and d is not finite (an adjoint
    that is structurally zero meets an infinite slope: 0 · inf = 0, as in the
    compiled sweeps). Elsewhere it is the plain product, so the derivatives
    of a g that merely happens to be zero at this point survive. The test of
    d is recorded (``isfinite`` of an active array), so replays check it."""
    if not isinstance(g, Active) and not isinstance(d, Active):
        with np.errstate(all="ignore"):
            return np.where(np.isfinite(d) | (g != 0), g * d, 0.0)
    finite = np.isfinite(d)
    if np.all(finite):
        return g * d
    return np.where(finite | (g != 0), g * d, 0.0)


def _shaped(g, shape):
    return g.reshape(shape) if isinstance(g, Active) else np.asarray(g).reshape(shape)


def _one_hot(i, m):
    """E[p, j] = 1 where index value i[j] picks position p of an axis of m,
    else 0: max(0, 1 - |(i mod m) - p|), exact for integers, recorded with
    ops that have no branches (i has no derivative)."""
    pos = binary(Op.REMAINDER, i.reshape(-1), float(m))     # negative ones wrap
    gap = record_unary(pos.reshape(1, i.size) - np.arange(m, dtype=float).reshape(m, 1),
                       int(Op.ABS))
    return binary(Op.MAXIMUM, 1.0 - gap, 0.0)


def _positions_at(i, outer, m, inner):
    """The flat positions a GATHER_AT reads for the plain index values ``i``."""
    p = np.asarray(i, dtype=np.int64).reshape(-1)
    p = np.where(p < 0, p + m, p)
    u = np.arange(outer)[:, None, None]
    t = np.arange(inner)[None, None, :]
    return ((u * m + p[None, :, None]) * inner + t).reshape(-1)


class _Transcription:
    """The forward pass of ``tape`` on the recording in progress; reverse
    passes on demand."""

    def __init__(self, tape, inputs):
        self.tape = tape
        self.prog = Program(tape)
        self.outer = next((v.tape for v in inputs if isinstance(v, Active)), None)
        if self.outer is None:
            raise TypeError("adsim: internal: a transcription needs an active input")
        self._check_callbacks()
        self.inputs = [_flat(v) for v in inputs]
        current = {}
        for slot, v in zip(tape.input_slots, self.inputs):
            current[slot] = v
        self.current = current
        self.read = []           # per op: the values of its slot operands, in order
        self.result = []         # per op: its result value (None for branch records)
        forward = FORWARD_RULES.bind(self, self.prog.codes)
        for k, code in enumerate(self.prog.codes):
            o = self.prog.operands[k]
            out = forward[code](k, o)
            self.result.append(out)
            if out is not None and o[0] >= 0:
                current[o[0]] = out
        ref = tape.output_slot
        self.output = self.value(ref)

    def _check_callbacks(self):
        for cb in self.tape.callbacks:
            if not isinstance(cb, Application):
                raise UnsupportedOperation(
                    f"adsim: derivatives of order three and more are recorded op by op, which "
                    f"{getattr(cb, 'name', type(cb).__name__)} does not support (a checkpointed "
                    f"loop or an ODE solve inside a nested derivative): take one derivative "
                    f"order less, or move the loop out of the nested function")

    # ---- values ----------------------------------------------------------
    def value(self, ref):
        """The flat value of a slot now (an active or plain array), or of a constant."""
        if ref < 0:
            return self.tape.slot_value(ref).reshape(-1)
        v = self.current.get(ref)
        if v is None:            # a slot read before any op wrote it: cannot happen on a tape
            raise RuntimeError(f"adsim: internal: slot {ref} read before it was written")
        return v

    def ref(self, v):
        return v.slot if isinstance(v, Active) else self.outer.const_ref(v)

    def active(self, v):
        return v if isinstance(v, Active) else as_active(self.outer, v)

    def _reads(self, k, refs):
        vals = [self.value(r) for r in refs]
        self.read.append(vals)
        return vals

    def _new(self, code, size, operands):
        return wrap(self.outer, self.outer.record_op(int(code), size, operands), (size,))

    # ---- forward rules: the op recorded again on the outer tape ------------------------
    def _unary(self, k, o):
        (x,) = self._reads(k, [o[1]])
        return record_unary(self.active(x), self.prog.codes[k], self.prog.param(k))

    def _binary(self, k, o):
        a, b = self._reads(k, [o[1], o[2]])
        if not isinstance(a, Active) and not isinstance(b, Active):
            a = self.active(a)
        n = self.prog.size(o[0])
        return record_binary_refs(self.outer, self.prog.codes[k], self.ref(a), self.ref(b), (n,))

    def _branch(self, k, o):
        code = self.prog.codes[k]
        if code == Op.COMPARE:
            a, b = self._reads(k, [o[1], o[2]])
            if not isinstance(a, Active) and not isinstance(b, Active):
                return None
            n = o[5]
            off = self.outer.add_branch_space(n)
            self.outer.record_op(int(Op.COMPARE), -1, [self.ref(a), self.ref(b), o[3], off, n])
            same = np.array_equal(self.outer.branch_outcome(off, n),
                                  self.tape.branch_outcome(o[4], n))
        else:                    # ARGEXT
            (a,) = self._reads(k, [o[1]])
            if not isinstance(a, Active):
                return None
            n = o[2] * o[4]
            off = self.outer.add_indices(np.zeros(n, dtype=np.int64))
            self.outer.record_op(int(Op.ARGEXT), -1, [a.slot, o[2], o[3], o[4], off, o[6]])
            same = np.array_equal(self.outer.index_record(off, n), self.tape.index_record(o[5], n))
        if not same:
            raise BranchChanged("adsim: a nested derivative's tape took another path at these "
                                "values", k, BY_CODE[code].name)
        return None

    def _copy(self, k, o):
        (a,) = self._reads(k, [o[1]])
        return a                 # values are never written in place here: share it

    def _fill(self, k, o):
        (c,) = self._reads(k, [o[1]])
        return np.broadcast_to(c, (self.prog.size(o[0]),)).copy()

    def _structural_view(self, k, o):
        (a,) = self._reads(k, [o[1]])
        return self._new(self.prog.codes[k], self.prog.size(o[0]),
                         [self.active(a).slot, o[2], o[3], o[4]])

    _broadcast = _sum = _cumsum = _structural_view

    def _gather(self, k, o):
        (a,) = self._reads(k, [o[1]])
        idx = self.prog.indices(k)
        return gather(a, idx) if isinstance(a, Active) else a[idx]

    def _gather_at(self, k, o):
        a, i = self._reads(k, [o[1], o[2]])
        n = self.prog.size(o[0])
        if not isinstance(i, Active):
            pos = _positions_at(i, o[3], o[4], o[5])
            return gather(a, pos) if isinstance(a, Active) else a[pos]
        return self._new(Op.GATHER_AT, n, [self.ref(a), i.slot, o[3], o[4], o[5]])

    def _argext_at(self, k, o):
        (a,) = self._reads(k, [o[1]])
        outer, m, inner = o[2], o[3], o[4]
        if not isinstance(a, Active):
            pick = np.argmin if o[5] else np.argmax
            return pick(a.reshape(outer, m, inner), axis=1).reshape(-1).astype(float)
        return self._new(Op.ARGEXT_AT, outer * inner, [a.slot, outer, m, inner, o[5]])

    def _search(self, k, o):
        table, v = self._reads(k, [o[1], o[2]])
        if not isinstance(table, Active) and not isinstance(v, Active):
            return np.searchsorted(table, v, side="right" if o[3] else "left").astype(float)
        return self._new(Op.SEARCH, self.prog.size(o[0]), [self.ref(table), self.ref(v), o[3]])

    def _scatter_at(self, k, o):
        base, v, i = self._reads(k, [o[1], o[2], o[3]])
        outer, m, inner, add = o[4], o[5], o[6], o[7]
        if isinstance(i, Active):
            return self._new(Op.SCATTER_AT, self.prog.size(o[0]),
                             [self.ref(base), self.ref(v), i.slot, outer, m, inner, add])
        pos = _positions_at(i, outer, m, inner)
        if not isinstance(base, Active) and not isinstance(v, Active):
            new = np.array(base, dtype=float)
            if add:
                np.add.at(new, pos, v)
            else:
                new[pos] = v
            return new
        new = self._new(Op.COPY, self.prog.size(o[0]), [self.active(base).slot])
        if add:
            ufunc_at(np.add, new, pos, v)
        else:
            self.outer.record_op(int(Op.SCATTER), -2, [new.slot, self.ref(v),
                                                       self.outer.add_indices(pos), pos.size,
                                                       0, 0, 0, 0])
        return new

    def _select(self, k, o):
        m, a, b = self._reads(k, [o[1], o[2], o[3]])
        n = self.prog.size(o[0])
        if not isinstance(m, Active):
            mask = np.broadcast_to(np.asarray(m) != 0.0, (n,))
            if not isinstance(a, Active) and not isinstance(b, Active):
                return np.where(mask, a, b)
            off = self.outer.add_branch_space(n)
            self.outer.set_branches(off, mask)
            return self._new(Op.WHERE, n, [self.ref(a), self.ref(b), off])
        return self._new(Op.SELECT, n, [m.slot, self.ref(a), self.ref(b)])

    def _select_adjoint(self, k, o, g):
        m = self.read[k][0]
        if not isinstance(m, Active):
            mask = np.asarray(m) != 0.0
            return [(o[2], np.where(mask, g, 0.0)), (o[3], np.where(mask, 0.0, g))]
        n = self.prog.size(o[0])
        g = self.active(g)
        return [(o[2], self._new(Op.SELECT, n, [m.slot, g.slot, self.outer.const_ref(0.0)])),
                (o[3], self._new(Op.SELECT, n, [m.slot, self.outer.const_ref(0.0), g.slot]))]

    def _scatter(self, k, o):
        old, v = self._reads(k, [o[0], o[1]])
        idx = self.prog.indices(k)
        if not isinstance(old, Active) and not isinstance(v, Active):
            new = old.copy()
            new[idx] = v
            return new
        # out of place: the old value stays what earlier ops read
        base = self._new(Op.COPY, old.size, [self.active(old).slot])
        self.outer.record_op(int(Op.SCATTER), -2, [base.slot, self.ref(v),
                                                   self.outer.add_indices(idx), o[3], 0, 0, 0, 0])
        return base

    def _where(self, k, o):
        a, b = self._reads(k, [o[1], o[2]])
        n = self.prog.size(o[0])
        mask = self.prog.where_mask(k)
        if not isinstance(a, Active) and not isinstance(b, Active):
            return np.where(mask, a, b)
        off = self.outer.add_branch_space(n)
        self.outer.set_branches(off, mask)
        return self._new(Op.WHERE, n, [self.ref(a), self.ref(b), off])

    def _matmul(self, k, o):
        a, b = self._reads(k, [o[1], o[2]])
        m, kk, n = o[3], o[4], o[5]
        if not isinstance(a, Active) and not isinstance(b, Active):
            return (a.reshape(m, kk) @ b.reshape(kk, n)).reshape(-1)
        return self._new(Op.MATMUL, m * n, [self.ref(a), self.ref(b), m, kk, n])

    def _form(self, k, o):
        """(C, X): the matrix and x as k x B (B members of a batched program)."""
        c, x = self.read[k]
        return np.asarray(c).reshape(o.k, o.k), x.reshape(o.k, -1)

    def _quadform(self, k, o):
        """x . (C @ x), or x . (x @ C) as recorded (form bit 1), per member."""
        self._reads(k, [o.c, o.x])
        C, X = self._form(k, o)
        if X.shape[1] == 1:
            x = X.reshape(-1)
            return (x @ (x @ C if o.form & 1 else C @ x)).reshape(-1)
        return np.sum(X * ((C.T if o.form & 1 else C) @ X), axis=0)

    def _spmv(self, k, o):
        a, x = self._reads(k, [o.a, o.x])
        indptr, indices = self.prog.sparse_pattern(k)
        X = x.reshape(-1, o.n)
        if not isinstance(a, Active) and not isinstance(x, Active):
            S = sp.csr_array((a, indices, indptr), shape=(o.m, o.k))
            return ((S.T if o.trans else S) @ X).reshape(-1)
        pattern = sparse_products.Pattern(indptr, indices, (o.m, o.k))
        return sparse_products.spmv(self.outer, pattern, self.ref(a), X, o.trans).reshape(-1)

    def _callback(self, k, o):
        app = self.tape.callbacks[o.callback]
        args = self._reads(k, list(o.args))
        shaped = [a.reshape(s) for a, s in zip(args, app.in_shapes)]
        return _flat(app.prim(*shaped))

    # ---- reverse pass -------------------------------------------------------------
    def adjoint_of_input(self, seed, wrt):
        """The adjoint of input ``wrt`` for output weights ``seed``."""
        adj = {}
        out_ref = self.tape.output_slot
        if out_ref < 0:
            return np.zeros(self.inputs[wrt].size)
        adj[out_ref] = seed
        prog = self.prog
        rules = ADJOINT_RULES.bind(self, prog.codes)
        for k in range(len(prog.codes) - 1, -1, -1):
            code = prog.codes[k]
            o = prog.operands[k]
            if o.result < 0:                              # a branch record
                continue
            rule = rules[code]
            if o.spec.in_place:                           # only the written part
                g = adj.get(o.result)
                if g is not None:
                    rule(k, o, g, adj)
                continue
            g = adj.pop(o.result, None)                   # (the slot's earlier value is
            if rule is None or g is None or \
                    (not isinstance(g, Active) and not np.any(g)):   # another adjoint's)
                continue
            with np.errstate(all="ignore"):               # plain factors may be infinite
                parts = rule(k, o, g)
            for ref, part in parts:
                self._accumulate(adj, ref, part)
        total = adj.get(self.tape.input_slots[wrt])
        return np.zeros(self.inputs[wrt].size) if total is None else total

    def _accumulate(self, adj, ref, part):
        if ref < 0 or part is None:
            return
        size = self.prog.size(ref)
        if (part.size if isinstance(part, Active) else np.size(part)) != size:            # a size-one operand of an elementwise op
            part = np.sum(part).reshape(1) if isinstance(part, Active) else \
                np.array([np.sum(part)])
        old = adj.get(ref)
        adj[ref] = part if old is None else old + part

    # ---- adjoint rules: each returns [(operand ref, adjoint contribution)] ------------
    def _unary_adjoints(self, k, o, g):
        return [(o.x, self._unary_adjoint(k, g))]

    def _unary_adjoint(self, k, g):
        code = self.prog.codes[k]
        (x,) = self.read[k]
        y = self.result[k]
        c = self.prog.param(k)
        if BY_CODE[code].hessian == ZERO or code == Op.POW_C and c == 0.0:
            return None                              # sign, rounding, stop_gradient
        if code in (Op.NEG, Op.RSUB_C):
            return -g
        if code == Op.ADD_C or code == Op.POW_C and c == 1.0:
            return g
        if code == Op.MUL_C:
            return g * c
        if code == Op.ABS:
            return np.where(x >= 0.0, g, -g)
        slope, finite = _UNARY_SLOPES[code](x, y, c)
        return g * slope if finite else _times(g, slope)

    def _binary_adjoint(self, k, o, g):
        code = self.prog.codes[k]
        a, b = self.read[k]
        y = self.result[k]
        if code == Op.ADD:
            return [(o[1], g), (o[2], g)]
        if code == Op.SUB:
            return [(o[1], g), (o[2], -g)]
        if code == Op.MUL:
            return [(o[1], g * b if o[1] >= 0 else None), (o[2], g * a if o[2] >= 0 else None)]
        if BY_CODE[code].hessian == ZERO:             # a // b, comparisons
            return []
        if code == Op.REMAINDER:                     # a - b (a // b)
            return [(o[1], g), (o[2], -g * np.floor_divide(a, b) if o[2] >= 0 else None)]
        if code == Op.FMOD:                          # a - b trunc(a / b)
            return [(o[1], g), (o[2], -g * np.rint((a - y) / b) if o[2] >= 0 else None)]
        if code in (Op.MAXIMUM, Op.MINIMUM):         # ties go to a, as the compiled rule
            first = a >= b if code == Op.MAXIMUM else a <= b
            return [(o[1], np.where(first, g, 0.0)), (o[2], np.where(first, 0.0, g))]
        if code == Op.DIV:
            return [(o[1], _times(g, 1.0 / b)), (o[2], _times(g, -y / b))]
        if code == Op.POW:
            parts = []
            if o[1] >= 0:                            # b a^(b-1), zero where b is
                parts.append((o[1], _times(g, _times(b, a ** (b - 1.0)))))
            if o[2] >= 0:                            # y ln a, zero where y is (a -> 0+)
                parts.append((o[2], _times(g, _times(y, np.log(a)))))
            return parts
        if code == Op.ARCTAN2:
            r = a * a + b * b
            return [(o[1], _times(g, b / r)), (o[2], _times(g, -a / r))]
        if code == Op.HYPOT:                         # a / y, b / y; 0 at the origin (0 / 0)
            y = np.where(y != 0.0, y, np.inf)
            return [(o[1], _times(g, a / y)), (o[2], _times(g, b / y))]
        if code in (Op.LOGADDEXP, Op.LOGADDEXP2):    # 1 / (1 + e^(b - a)), 1/2 where a = b
            power = np.exp if code == Op.LOGADDEXP else np.exp2
            return [(o[1], _times(g, np.where(a == b, 0.5, 1.0 / (1.0 + power(b - a))))),
                    (o[2], _times(g, np.where(a == b, 0.5, 1.0 / (1.0 + power(a - b)))))]
        raise UnsupportedOperation(f"adsim: no recorded adjoint rule for {BY_CODE[code].name}")

    def _copy_adjoint(self, k, o, g):
        return [(o[1], g)]

    def _fill_adjoint(self, k, o, g):
        return []

    def _broadcast_adjoint(self, k, o, g):
        outer, m, inner = o[2], o[3], o[4]
        return [(o[1], g.reshape(outer, m, inner).sum(axis=1).reshape(-1))]

    def _sum_adjoint(self, k, o, g):
        outer, m, inner = o[2], o[3], o[4]
        return [(o[1], np.broadcast_to(g.reshape(outer, 1, inner), (outer, m, inner))
                 .reshape(-1))]

    def _cumsum_adjoint(self, k, o, g):
        outer, m, inner = o[2], o[3], o[4]
        backwards = g.reshape(outer, m, inner)[:, ::-1, :]
        return [(o[1], np.cumsum(backwards, axis=1)[:, ::-1, :].reshape(-1))]

    def _gather_adjoint_at(self, o, g, idx):
        """The adjoint of r = a[idx] (flat positions)."""
        n = self.prog.size(o[1])
        if not isinstance(g, Active):
            total = np.zeros(n)
            np.add.at(total, idx, g)
            return [(o[1], total)]
        total = as_active(self.outer, np.zeros(n))
        if np.unique(idx).size == idx.size:
            total[idx] = g
        else:
            ufunc_at(np.add, total, idx, g)
        return [(o[1], total)]

    def _gather_at_adjoint(self, k, o, g):
        """Where the indices are recorded values, the adjoint is E g with the
        one-hot matrix E of the indices (_one_hot)."""
        _, i = self.read[k]
        outer, m, inner = o[3], o[4], o[5]
        if not isinstance(i, Active):
            return self._gather_adjoint_at(o, g, _positions_at(i, outer, m, inner))
        G = _shaped(g, (outer, i.size, inner))
        return [(o[1], np.einsum("pj,ujt->upt", _one_hot(i, m), G).reshape(-1))]

    def _scatter_at_adjoint(self, k, o, g):
        """base's adjoint is g where no index writes (all of g when adding),
        v's is g at its index (only for the last write to a position)."""
        _, _, i = self.read[k]
        outer, m, inner, add = o[4], o[5], o[6], o[7]
        picks = i.size
        if not isinstance(i, Active):
            pos = _positions_at(i, outer, m, inner)
            taken = g[pos] if isinstance(g, Active) else np.asarray(g)[pos]
            if add:
                return [(o[1], g), (o[2], taken)]
            p = (np.asarray(i, dtype=np.int64).reshape(-1) + m) % m
            last = np.zeros(picks, dtype=bool)
            last[picks - 1 - np.unique(p[::-1], return_index=True)[1]] = True
            keep = np.ones(m)
            keep[p] = 0.0
            lasts = np.broadcast_to(last[None, :, None], (outer, picks, inner)).reshape(-1)
            return [(o[1], g * np.broadcast_to(keep[None, :, None], (outer, m, inner)).reshape(-1)),
                    (o[2], np.where(lasts, taken, 0.0))]
        E = _one_hot(i, m)
        G = _shaped(g, (outer, m, inner))
        taken = np.einsum("pj,upt->ujt", E, G)
        if add:
            return [(o[1], g), (o[2], taken.reshape(-1))]
        hit = binary(Op.MINIMUM, np.sum(E, axis=1), 1.0)
        same = np.einsum("pj,pl->jl", E, E) * np.triu(np.ones((picks, picks)), 1)
        last = 1.0 - binary(Op.MINIMUM, np.sum(same, axis=1), 1.0)
        return [(o[1], (G * (1.0 - hit).reshape(1, m, 1)).reshape(-1)),
                (o[2], (taken * last.reshape(1, picks, 1)).reshape(-1))]

    def _gather_adjoint(self, k, o, g):
        return self._gather_adjoint_at(o, g, self.prog.indices(k))

    def _scatter_adjoint(self, k, o, g, adj):
        idx = self.prog.indices(k)
        n = self.prog.size(o[0])
        last = np.zeros(idx.size, dtype=bool)         # the write that wins at each position
        _, first_from_end = np.unique(idx[::-1], return_index=True)
        last[idx.size - 1 - first_from_end] = True
        written = g[idx] if isinstance(g, Active) else np.asarray(g)[idx]
        part = written if last.all() else np.where(last, written, 0.0)
        keep = np.ones(n)
        keep[idx] = 0.0
        adj[o[0]] = g * keep
        self._accumulate(adj, o[1], part)

    def _where_adjoint(self, k, o, g):
        mask = self.prog.where_mask(k)
        return [(o[1], np.where(mask, g, 0.0)), (o[2], np.where(mask, 0.0, g))]

    def _matmul_adjoint(self, k, o, g):
        a, b = self.read[k]
        m, kk, n = o[3], o[4], o[5]
        G = g.reshape(m, n)
        return [(o[1], (G @ b.reshape(kk, n).T).reshape(-1)),
                (o[2], (a.reshape(m, kk).T @ G).reshape(-1))]

    def _quadform_adjoint(self, k, o, g):
        """xbar += qbar (C + C^T) x."""
        C, X = self._form(k, o)
        gradient = 2.0 * (C @ X) if o.form & 2 else C @ X + C.T @ X
        return [(o.x, _flat(_times(_shaped(g, (1, X.shape[1])), gradient)))]

    def _spmv_adjoint(self, k, o, g):
        a, x = self.read[k]
        indptr, indices = self.prog.sparse_pattern(k)
        n = o.n
        G, X = g.reshape(-1, n), x.reshape(-1, n)
        if isinstance(a, Active) or isinstance(G, Active):
            pattern = sparse_products.Pattern(indptr, indices, (o.m, o.k))
            x_adjoint = sparse_products.spmv(self.outer, pattern, self.ref(a), G, not o.trans)
        else:
            S = sp.csr_array((a, indices, indptr), shape=(o.m, o.k))
            x_adjoint = (S if o.trans else S.T) @ G
        rows = np.repeat(np.arange(o.m), np.diff(indptr))
        out, into = (indices, rows) if o.trans else (rows, indices)
        a_adjoint = np.sum(G[out] * X[into], axis=1)
        return [(o.a, _flat(a_adjoint)), (o.x, _flat(x_adjoint))]

    def _callback_adjoint(self, k, o, g):
        app = self.tape.callbacks[o.callback]
        prim = app.prim
        if prim.vjp is None:
            raise UnsupportedOperation(f"adsim: primitive `{prim.name}` has no vjp rule, which "
                                       f"derivatives of order three and more need")
        args = [a.reshape(s) for a, s in zip(self.read[k], app.in_shapes)]
        out = self.result[k].reshape(app.out_shape)
        adjoints = _rule_adjoints(prim, prim.vjp(args, out, g.reshape(app.out_shape)),
                                  app.in_shapes, recorded=True)
        return [(ref, None if a is None else _flat(a)) for i, (ref, a) in
                enumerate(zip(o.args, adjoints)) if i not in prim.nondiff_argnums]


# the rule of every op in each pass (adsim/_rules.py)
FORWARD_RULES = RuleTable("transcription (forward)", "adsim/_nesting/transcribe.py", [
    (family("unary"), "_unary"), (family("binary"), "_binary"), (family("branch"), "_branch"),
    ("COPY", "_copy"), ("FILL", "_fill"), (("BROADCAST", "SUM", "CUMSUM"), "_structural_view"),
    ("GATHER", "_gather"), ("SCATTER", "_scatter"), ("WHERE", "_where"),
    ("GATHER_AT", "_gather_at"), ("SCATTER_AT", "_scatter_at"), ("SELECT", "_select"),
    ("ARGEXT_AT", "_argext_at"), ("SEARCH", "_search"), ("MATMUL", "_matmul"), ("SPMV", "_spmv"),
    ("QUADFORM", "_quadform"), ("CALLBACK", "_callback")])

ADJOINT_RULES = RuleTable("transcription (adjoint)", "adsim/_nesting/transcribe.py", [
    (family("unary"), "_unary_adjoints"), (family("binary"), "_binary_adjoint"),
    (family("branch"), None), ("COPY", "_copy_adjoint"), ("FILL", "_fill_adjoint"),
    ("BROADCAST", "_broadcast_adjoint"), ("SUM", "_sum_adjoint"),
    ("CUMSUM", "_cumsum_adjoint"), ("GATHER", "_gather_adjoint"),
    ("SCATTER", "_scatter_adjoint"), ("WHERE", "_where_adjoint"),
    ("GATHER_AT", "_gather_at_adjoint"), ("SCATTER_AT", "_scatter_at_adjoint"),
    ("SELECT", "_select_adjoint"), ("ARGEXT_AT", None), ("SEARCH", None),
    ("MATMUL", "_matmul_adjoint"), ("SPMV", "_spmv_adjoint"), ("QUADFORM", "_quadform_adjoint"),
    ("CALLBACK", "_callback_adjoint")])


def _row_slope(rule):
    slope = numpy_rule(rule.slope)
    return lambda x, y, c: (slope(x, y, c), rule.finite)


# the derivative of each unary op as NumPy on active arrays, from its row in
# adsim/ops.py; ``finite``: the slope cannot be infinite (no zero-test needed)
_UNARY_SLOPES = {
    **{spec.code: _row_slope(spec.rule) for spec in TABLE
       if isinstance(spec.rule, UnaryRule)},
    # the two whose kernels are written by hand (exact zeros for special parameters)
    Op.POW_C: lambda x, y, c: (_pow_slope(x, c), False),
    Op.RPOW_C: lambda x, y, c: _rpow_slope(y, c),
}


def _pow_slope(x, c):
    """c x^(c-1) as adsim_pow_c_slope (_elementwise.h): x^0.5 is a square root."""
    if c == 2.0:
        return 2.0 * x
    return 0.5 / np.sqrt(x) if c == 0.5 else c * x ** (c - 1.0)


def _rpow_slope(y, c):
    """y ln c, taken as 0 where y = 0 (0^x, inf^x: constant there)."""
    with np.errstate(divide="ignore"):
        lc = float(np.log(c))
    if 0.0 < c < np.inf:
        return y * lc, True
    return np.where(y != 0.0, y * lc, 0.0), False
