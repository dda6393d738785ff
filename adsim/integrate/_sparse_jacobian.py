"""The Jacobian of the right-hand side on a sparse pattern, by row coloring.

For the sparse Newton matrices of Radau and BDF: ``J = d fun / d y`` at
``(t, y, args)``, as its values on a fixed pattern ``P`` (the entries of the
Newton matrices, CSC order).

Values. ``fun`` is recorded (one tape per control path, re-recorded when a
replay's branch differs), the pattern ``Q`` of that tape is detected
(:func:`adsim.sparse.pattern.jacobian_pattern`) and the rows of ``Q`` are
colored so that no two rows of one color share a column. One adjoint sweep
with the weights ``w_r`` (the indicator of the rows of color ``r``) gives
``C = W^T J``, and every entry of ``Q`` is one entry of it:
``J[i, j] = C[color(i), j]``. The values on ``P`` are those of ``Q``; an
entry of ``P`` outside ``Q`` is zero, and an entry of ``Q`` outside ``P`` is
left out: the Newton matrix is then an approximation, as it is in SciPy with
a ``jac_sparsity`` that misses a nonzero, which changes the steps (Newton
converges more slowly) but neither the correctness of the computed solution
nor that of its derivatives, which are those of the matrix actually used.

Derivatives. Inside a recording the values are one op. Its rules are
second-order adjoint sweeps of the same tape: a sweep with tangent
direction ``v`` (of y, t and the arguments) and output weight ``w`` gives
``sum_i w_i d/dx (grad f_i . v)``, and

* tangent: with ``v`` the inputs' tangent and ``w = w_r``, its y part is
  row ``r`` of ``dC = W^T dJ`` (``d/dy_j`` of the directional derivative
  ``sum_l (d f_i / d x_l) v_l`` is the tangent of ``J[i, j]``), read like
  ``C``;
* adjoint: with ``v`` the y-direction holding, in each column ``j``, the
  adjoint of the entry ``(i, j)`` whose row ``i`` has color ``r``, and
  ``w = w_r``, it gives ``sum over those entries of J_bar[i, j] grad J[i, j]``
  for every input.

One sweep per color for each rule (the tangent and the weight both vary
with the color), where the dense nested Jacobian needs one per equation.

Higher orders. A second-order sweep through the op (a Hessian-vector
product of a loss on the solution) records its vjp rule on active arrays,
which needs third derivatives of ``fun``. The values are then written out
as recorded ops: one reverse pass of ``fun`` per color, seeded with
``w_r`` (adsim/_nesting/transcribe.py), and the same gather onto ``P``;
the rules recorded are nested derivatives of functions of those values,
as for the dense nested Jacobian (``RecordedRules``,
adsim/_nesting/nested.py), whose own derivatives are second-order sweeps of
a tape holding one transcribed reverse pass per color (the dense one holds
one per equation).
"""
import warnings

import numpy as np
import scipy.sparse as sp

from .._tapecache.cache import TapeCache, input_positions
from .._active import Active
from .._filefields import expect_keys, pattern_field, shape_field
from .._containers.tree import placed
from .._nesting import transcribe
from .._nesting.nested import (RecordedInner, RecordedRules, SavedInner, float_array,
                               operand_ranks, tape_now)
from .._np.integers import current
from ..primitives import Application, Primitive
from ..sparse.coloring import best_row_coloring
from ..sparse.orderings import row_indices
from ..sparse.pattern import jacobian_pattern
from ..sparse.recovery import RowRecovery
from ._kept import Kept

__all__ = ["ColoredJacobian"]

KEPT_BRANCHES = 8
"""Control paths of ``fun`` whose pattern and coloring are kept."""


class _Branch:
    """What one tape of ``fun`` (one control path) needs: its pattern ``Q``,
    a row coloring with its seeds and recovery, and where the entries of the
    fixed pattern ``P`` sit among those of ``Q``."""

    def __init__(self, tape, P):
        self.tape = tape
        Q = jacobian_pattern(tape, [0])
        coloring = best_row_coloring(Q)
        self.recovery = RowRecovery(Q, coloring.colors)
        Q = self.recovery.pattern
        self.W = coloring.seed()                              # (n, q)
        self.Wt = np.ascontiguousarray(self.W.T)
        self.colors = self.recovery.colors
        self.n = Q.shape[1]
        self.q_rows = row_indices(Q)
        self.q_cols = Q.indices.astype(np.intp)
        # position of each entry of P among Q's (CSR order), or -1
        where = sp.csr_array((np.arange(1, Q.nnz + 1), Q.indices, Q.indptr), shape=Q.shape)
        Pc = sp.csc_array(P)
        p_rows = Pc.indices
        p_cols = np.repeat(np.arange(P.shape[1]), np.diff(Pc.indptr))
        self.take = (np.asarray(where[p_rows, p_cols]).reshape(-1) - 1).astype(np.intp) \
            if P.nnz else np.zeros(0, dtype=np.intp)
        self.inside = self.take >= 0
        self.missed = Q.nnz - int(np.count_nonzero(self.inside))     # of Q, not in P
        # where each value on P is in C = W^T J, flat (row color(i), column j: direct
        # recovery, as self.recovery reads Q's), or one past C's end: a zero
        at = self.colors[self.q_rows] * self.n + self.q_cols
        self.gather = np.where(self.inside, at[np.maximum(self.take, 0)] if Q.nnz else 0,
                               self.ncolors * self.n).astype(np.intp)

    @property
    def ncolors(self):
        return self.Wt.shape[0]

    def on_p(self, C):
        """Values on P from a compressed product ``C = W^T J`` (q, n), plain or
        recorded."""
        return np.concatenate([C.reshape(-1), np.zeros(1)])[self.gather]

    def compressed_adjoint(self, data_bar):
        """The (q, n) directions whose row r holds, in column j, the adjoint of
        the entry (i, j) of Q with color(i) = r (the adjoint of :meth:`on_p`)."""
        C_bar = np.zeros(self.ncolors * self.n + 1)
        C_bar[self.gather[self.inside]] = data_bar[self.inside]
        return C_bar[:-1].reshape(self.ncolors, self.n)


class ColoredJacobian:
    """``d fun / d y`` on a pattern, for ``fun_of_y(y, t, *args)``; see the
    module docstring. ``detect`` gives the pattern at a point; after
    ``use_pattern(P)`` a call returns the values on ``P`` (plain, or inside
    a recording one recorded op), warning once when ``fun`` has entries
    outside ``P`` and ``warn_outside`` is set (a detected pattern that a
    later control path outgrows)."""

    def __init__(self, fun_of_y, name):
        self.fun = fun_of_y
        self.name = name
        self.P = None
        self.warn_outside = False
        self._tapes = TapeCache()
        # the tapes of fun used (its variants, which tape files save); no fun: restored()
        self._inner = None if fun_of_y is None else RecordedInner(fun_of_y, {}, 0, self._tapes)
        self._branches = Kept(KEPT_BRANCHES)
        self._warned = False

    # ---- pattern -------------------------------------------------------------------
    def detect(self, y, t, *args):
        """The pattern (boolean CSR, n x n) of ``fun`` at plain arguments."""
        return self._tapes.run(self.fun, (y, t) + args, {}, (0,),
                               lambda tape, values: jacobian_pattern(tape, [0]),
                               all_varied=True)

    def use_pattern(self, P, warn_outside=False):
        self.P = sp.csc_matrix(P, dtype=bool)
        self.P.sort_indices()
        self.warn_outside = warn_outside
        self._branches = Kept(KEPT_BRANCHES)          # their gathers belong to the pattern

    def _branch(self, tape):
        branch = self._branches.get(id(tape))
        if branch is not None and branch.tape is tape:
            return branch
        branch = self._branches.put(id(tape), _Branch(tape, self.P))
        if branch.missed and self.warn_outside and not self._warned:
            self._warned = True
            warnings.warn(
                f"adsim.integrate.solve_ivp: the Jacobian of fun has {branch.missed} "
                f"nonzero{'s' if branch.missed != 1 else ''} outside the pattern detected at "
                f"the start of the integration (fun took another branch); the Newton matrices "
                f"leave them out, which may slow Newton's convergence but keeps the solution "
                f"and its derivatives those of the steps taken. Give jac_sparsity= covering "
                f"every branch to include them",
                stacklevel=2)
        return branch

    # ---- values and derivatives ----------------------------------------------------
    def _run(self, full, method):
        """``method(branch, tape, inputs, positions)`` on the tape of ``fun`` at
        the plain arguments ``full`` (recorded again when a branch differs)."""
        positions = input_positions(full, (0,))

        def run(tape, values):
            return method(self._branch(tape), tape, tape._inputs(values), positions)
        return self._inner.run(full, run)

    def values(self, full):
        def method(branch, tape, xs, positions):
            if not branch.ncolors:
                return np.zeros(self.P.nnz)
            return branch.on_p(tape._adjoint(xs, branch.Wt)[1][0])
        return self._run(full, method)

    def recorded_values(self, full):
        """The values at ``full`` (some active) as recorded ops of their tape: one
        reverse pass of ``fun`` per color written out (adsim/_nesting/transcribe.py),
        so that their derivatives (third derivatives of ``fun``) can be taken."""
        plain = [current(v) if isinstance(v, Active) else v for v in full]
        inputs = [full[p] for p in input_positions(plain, (0,))]

        def run(tape, values):
            tape._forward(tape._inputs(values))          # BranchChanged: recorded again
            branch = self._branch(tape)
            return branch.on_p(transcribe.weighted_adjoints(tape, inputs, 0, branch.Wt))
        return self._inner.run(plain, run)

    def tangent(self, full, directions):
        """Tangent of the values for the input tangents ``directions`` (dict
        position in ``full`` -> array)."""
        def method(branch, tape, xs, positions):
            V = [None if p not in directions else
                 np.asarray(directions[p], dtype=float).reshape(1, -1) for p in positions]
            C_dot = np.zeros((branch.ncolors, xs[0].size))
            for r in range(branch.ncolors):
                C_dot[r] = tape._soadjoint(xs, V, branch.W[:, r], None, False)[3][0][0]
            return branch.on_p(C_dot) if branch.ncolors else np.zeros(self.P.nnz)
        return self._run(full, method)

    def adjoints(self, full, data_bar, wanted):
        """Adjoints of the arguments at positions ``wanted`` for the values'
        adjoint ``data_bar``."""
        def method(branch, tape, xs, positions):
            totals = {p: np.zeros(np.shape(full[p])) for p in wanted}
            if not branch.ncolors:
                return totals
            C_bar = branch.compressed_adjoint(data_bar)
            for r in range(branch.ncolors):
                if not C_bar[r].any():
                    continue
                V = [C_bar[r:r + 1]] + [None] * (len(xs) - 1)
                adot = tape._soadjoint(xs, V, branch.W[:, r], None, False)[3]
                for k, p in enumerate(positions):
                    if p in totals:
                        totals[p] += adot[k][0].reshape(np.shape(full[p]))
            return totals
        return self._run(full, method)

    def __call__(self, y, t, *args):
        """Values on ``P`` at ``(y, t, *args)``; one recorded op when any is
        active, whose arguments are the active ones and the float arrays
        (constants of the op, which a tape file keeps)."""
        full = (y, t) + args
        if not any(isinstance(a, Active) for a in full):
            return self.values(full)
        active = [i for i, a in enumerate(full) if isinstance(a, Active) or float_array(a)]
        return self.op(full, active)(*[full[p] for p in active])

    def op(self, full, active):
        """The primitive of the values on ``P`` at ``full`` with its
        arguments at positions ``active``."""
        base = [None if p in active else a for p, a in enumerate(full)]

        def substituted(values):
            return placed(base, active, values)

        def value(*values):
            return self.values(substituted(values))

        # the rules recorded (a second-order sweep through the op records its vjp):
        # the values written out as ops, one derivative order more
        recorded = RecordedRules(lambda values: self.recorded_values(substituted(values)),
                                 lambda values: tape_now(self._inner, substituted(values)),
                                 f"derivative of {self.name}", self._inner.name)

        def jvp(values, out, tangents):
            if any(isinstance(v, Active) for v in (*values, *tangents)):
                return recorded.jvp(values, tangents)
            return self.tangent(substituted(values),
                                {p: d for p, d in zip(active, tangents) if d is not None})

        def vjp(values, out, out_adjoint):
            if any(isinstance(v, Active) for v in (*values, out_adjoint)):
                return recorded.vjp(values, out_adjoint)
            totals = self.adjoints(substituted(values), np.asarray(out_adjoint, dtype=float),
                                   active)
            return tuple(totals[p] for p in active)

        return ColoredPrimitive(self, active, value, jvp, vjp)

    # ---- tape files -----------------------------------------------------------------
    @classmethod
    def restored(cls, name, P, tapes):
        """The sparse Jacobian of a tape file: its pattern and the recorded
        variants of ``fun``, without ``fun`` (BranchChanged where none holds)."""
        self = cls(None, name)
        self.use_pattern(P)
        self._inner = SavedInner(name, 0, tapes, f"the sparse Jacobian `{name}`")
        return self


class ColoredPrimitive(Primitive):
    """The values on the pattern as one op (see :meth:`ColoredJacobian.op`)."""

    explains_recorded_rule = True

    def __init__(self, jacobian, positions, value, jvp, vjp):
        super().__init__(value, jvp=jvp, vjp=vjp)
        self.name = jacobian.name
        self.jacobian, self.positions = jacobian, positions

    def applied(self, in_shapes, out_shape, first_value):
        return ColoredApplication(self, in_shapes, out_shape, first_value=first_value)


class ColoredApplication(Application):
    """One recorded sparse Jacobian. A tape file saves its pattern, the
    recorded variants of ``fun`` and where the op's arguments go among their
    inputs (as for nested derivatives); a loaded one colors each variant's
    pattern again as the recording did, and raises BranchChanged where no
    variant holds."""

    file_kind = "adsim.sparse_jacobian"

    def file_state(self):
        colored = self.prim.jacobian
        operands, _ = operand_ranks(self.prim.positions, 0)
        P = colored.P
        return {"function": colored.name, "operands": operands, "n": P.shape[0],
                "indptr": P.indptr.tolist(), "indices": P.indices.tolist(),
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, colored._inner.variants.tapes()

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("function", "operands", "n", "indptr", "indices", "in_shapes",
                            "out_shape"))
        name, operands = state["function"], state["operands"]
        if not isinstance(name, str) or not isinstance(state["in_shapes"], list) or not tapes:
            raise ValueError("a sparse Jacobian is described by its function's name, operands, "
                             "pattern and shapes, and owns the tapes of its function")
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        n_args = len(in_shapes)
        if not (isinstance(operands, list) and all(type(p) is int for p in operands)
                and sorted(operands) == list(range(n_args))):
            raise ValueError(f"the operands {operands!r} do not number {n_args} arguments")
        P = pattern_field(state["n"], state["indptr"], state["indices"])
        out_shape = shape_field(state["out_shape"], "the output shape")
        shape_at = dict(zip(operands, in_shapes))
        inputs = [shape_at[p] for p in range(n_args)]
        if out_shape != (P.nnz,) or inputs[0] != (P.shape[0],):
            raise ValueError(f"a sparse Jacobian of {P.nnz} values on a {P.shape[0]} x "
                             f"{P.shape[0]} pattern has output {out_shape} and y of shape "
                             f"{inputs[0]}")
        for tape in tapes:
            if [tuple(s) for s in tape.input_shapes] != inputs or \
                    tuple(tape.output_shape) != inputs[0]:
                raise ValueError(f"a tape of the function maps inputs {tape.input_shapes} to "
                                 f"{tape.output_shape}; the sparse Jacobian has arguments "
                                 f"{inputs}")
        colored = ColoredJacobian.restored(name, P, tapes)
        return cls(colored.op([None] * n_args, operands), in_shapes, out_shape)
