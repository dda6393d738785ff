"""The op of a checkpointed loop: its CALLBACK rules (adsim/_callback_rules.py).

A loop of n steps is one op of the enclosing tape that owns a sub-tape of
one step (:mod:`adsim.checkpoint.steptape`). Its rules run sweeps of the
step along a checkpoint schedule through the driver
(:mod:`adsim.checkpoint.driver`): plain replays to advance, a taped replay
and its adjoint to reverse one step, snapshots kept in memory (or on disk)
as the schedule says. Memory then holds the snapshots and one step's tape,
not n steps' worth of tape.

A forward rule that knows a reverse sweep follows in the same call (the
sweep context says so) runs the schedule up to its first turn and keeps it
in the context; the reverse rule resumes it, so the forward pass is not run
twice. With ``memory_limit`` every sweep is planned so that what it holds
(:mod:`adsim.checkpoint.footprint`) stays within the budget.
"""
import functools
import threading

import numpy as np

from .._callback_rules import CallbackRules
from .._loops import PathHints
from ..errors import MemoryBudgetError
from .driver import LoopSweep, reset_stats
from .persist import LoopFileState
from .planning import check_fits, check_reversal

__all__ = ["LoopOp"]


def _explain_memory_errors(rule):
    """Turn a bare MemoryError inside an op rule into a MemoryBudgetError
    that says what the loop held and how to bound it."""
    @functools.wraps(rule)
    def wrapped(self, *args):
        try:
            return rule(self, *args)
        except MemoryBudgetError:
            raise
        except MemoryError as error:
            held = self.stats.get("snapshots", "no")
            raise MemoryBudgetError(
                f"adsim: the checkpointed loop ran out of memory ({error or 'no details'}) "
                f"holding {held} snapshots of its state"
                + (" (no memory_limit was given)" if not self.budgeted else "")
                + "; give memory_limit= so that the snapshots fit next to everything else "
                "the sweep holds, lower snapshots=, or give snapshot_dir= with memory_limit "
                "to keep snapshots on disk") from error
    return wrapped


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


class LoopOp(CallbackRules, LoopFileState):
    """The rules of one ``checkpoint_loop`` (``n_steps`` given) or
    ``checkpoint_while`` (``condition`` given: its :class:`ConditionTapes`)."""

    name = "checkpointed loop"

    def __init__(self, steps, options, size, n_steps=None, condition=None, save_at=None):
        self.steps = steps
        self.options = options
        self.size = size
        self.n_steps = n_steps
        self.condition = condition
        self.save_at = save_at    # step counts of the states returned besides the last
        self.stats = options.stats
        self.footprint = None     # set when the op is recorded (its slots in the enclosing tape)
        self.last_n_steps = None  # while loops: the steps of the last forward pass (patterns)
        self._first = None        # the value made while recording, for the first replay
        self._first_nbytes = 0
        self._lock = threading.Lock()
        self.path_hints = PathHints()   # the steps' variants in the last sweep (_loop_run.pxi)

    @property
    def thread_safe(self):
        """Whether threads may replay the enclosing tape at once (adsim.parallel
        then shares it): every sweep keeps its executor, snapshots and kept
        forward pass for itself (the call's sweep context), so only the
        callbacks of the step (and condition) tapes can keep it from being."""
        tapes = list(self.steps.variants) + (list(self.condition.variants)
                                             if self.condition is not None else [])
        return all(getattr(cb, "thread_safe", False) for tape in tapes for cb in tape.callbacks)

    @property
    def budgeted(self):
        return self.options.memory_limit is not None

    def _keep(self, context, sweep):
        """Keep a forward pass for the reverse rule of the same call (of a
        loop in a group under a budget: the only one the group keeps)."""
        if context.sweep == "record":
            with self._lock:
                self._first = (sweep.key, sweep)
            return
        if self.budgeted and self.options.group is not None:
            self.options.group.hold(sweep)
        context.keep(self, sweep)

    def _kept(self, context, kind, d, key):
        """The forward pass kept for this reverse rule, if it serves it."""
        sweep = context.take(self)
        group = self.options.group
        if sweep is not None and group is not None and not group.take(sweep):
            sweep = None                # its group closed it for another loop's
        if sweep is not None and not sweep.matches(kind, d, key):
            sweep.close()
            sweep = None
        return sweep

    def first_nbytes(self):
        """Bytes of what the recording's value rule kept for the first replay
        (counted after that replay took it too: a group's budget is then
        the same in every sweep, and its stated minimum the same)."""
        return self._first_nbytes

    def _take_first(self, args, context):
        """The value computed while recording, when the first replay asks
        for it at the same point (with its forward pass, if the replay's
        reverse rule can use it)."""
        with self._lock:
            first, self._first = self._first, None
        if first is None:
            return None
        key, found = first
        if not _same(key, args):
            if not isinstance(found, np.ndarray):
                found.close()
            return None
        if isinstance(found, np.ndarray):
            return found
        out = found.output
        if context.sweep == "adjoint" and context.directions == found.directions:
            context.keep(self, found)
        else:
            found.close()
        return out

    # ---- values --------------------------------------------------------
    @_explain_memory_errors
    def value(self, args, context):
        first = self._take_first(args, context)
        if first is not None:
            return first
        if self.budgeted:
            self._check_budget(context)
        z, inputs = args[0], args[1:]
        reverse = context.sweep == "adjoint" or (
            context.sweep == "record" and not self.budgeted and self.options.schedule is None)
        d = context.directions if context.sweep == "adjoint" else 1
        # a plain pass is planned in a recording and in a values sweep (see
        # planning.plan_values); in a tangent or second-order sweep the plan of
        # the sweep before it bounds it, and _check_budget raised if it must
        raising = context.sweep == "values"
        plain = context.sweep in ("record", "values")
        if self.condition is not None:
            out = self._while_forward("adjoint" if reverse else "values", d, z, inputs, None, None,
                                      context if reverse else None, raising, plain)[0]
        elif reverse:
            sweep = LoopSweep(self, "adjoint", d, z, inputs)
            try:
                sweep.plan(self.n_steps)
                out = sweep.output = self._joined(sweep, sweep.until_turn())[0]
            except BaseException:
                sweep.close()
                raise
            self._keep(context, sweep)
        else:
            reset_stats(self.stats, n_steps=self.n_steps, output_steps=self.n_steps)
            out = self._forward("values", 0, z, inputs, raising=raising, plan=plain)[0]
        if context.sweep == "record" and self._first is None:
            with self._lock:
                self._first = (list(args), out)
                self._first_nbytes = sum(np.asarray(a).nbytes for a in args) + out.nbytes
        return out

    def _check_budget(self, context):
        """Before the plain forward pass of a tangent or second-order sweep:
        raise that sweep's budget error now, not after the pass has run."""
        d = context.directions
        if context.sweep == "tangent":
            check_fits(self.options, self.footprint, self.steps, d, self.n_steps, self.condition)
        elif context.sweep == "second_order":
            check_reversal(self.options, self.footprint, self.steps, "second_order", d,
                           self.n_steps, self.condition)

    def _forward(self, kind, d, z, inputs, zdot=None, in_dots=None, raising=True, plan=True):
        sweep = LoopSweep(self, kind, d, z, inputs, zdot, in_dots)
        try:
            return self._joined(sweep, sweep.forward(self.n_steps, raising, plan))
        finally:
            sweep.close()

    def _joined(self, sweep, final):
        """The op's result from the final state (and its tangents (p, size)):
        with ``save_at``, the saved states follow it (and their tangents
        follow its tangents, direction by direction)."""
        z, zdot = final
        if self.save_at is None:
            return z, zdot
        saved = sweep.outputs.values             # (k, size + p size): values, then tangents
        n, k = self.size, len(self.save_at)
        z = np.concatenate([z, saved[:, :n].reshape(-1)])
        if zdot is not None:
            p = zdot.shape[0]
            dots = saved[:, n:].reshape(k, p, n).transpose(1, 0, 2).reshape(p, k * n)
            zdot = np.concatenate([zdot, dots], axis=1)
        return z, zdot

    def _split(self, adjoint, rows):
        """(final state's part, saved states' parts (k, rows * size)) of the
        result's adjoints (rows, (1 + k) size), or (adjoint, None)."""
        if self.save_at is None:
            return adjoint, None
        n, k = self.size, len(self.save_at)
        flat = adjoint.reshape(rows, (1 + k) * n)
        saved = flat[:, n:].reshape(rows, k, n).transpose(1, 0, 2).reshape(k, rows * n)
        return np.ascontiguousarray(flat[:, :n]).reshape(adjoint.shape[:-1] + (n,)), saved

    def _while_forward(self, kind, d, z, inputs, zdot, in_dots, context, raising=True,
                       plan=True):
        """A while loop's forward pass; kept in ``context`` for the reverse
        rule when given."""
        sweep = LoopSweep(self, kind, d, z, inputs, zdot, in_dots)
        try:
            out = sweep.forward_while(keep=context is not None, raising=raising, plan=plan)
        except BaseException:
            sweep.close()
            raise
        if context is None:
            sweep.close()
        else:
            sweep.output = out[0]
            self._keep(context, sweep)
        return out

    # ---- sparsity ------------------------------------------------------
    def pattern(self, arg_patterns):
        """Index domains of the loop's result: the step's Jacobian pattern,
        united over its recorded branch variants, iterated n_steps times."""
        import scipy.sparse as sp

        from ..sparse.pattern import iterate_pattern, jacobian_pattern
        if self.steps.dropped:
            raise ValueError(
                f"adsim: the sparsity pattern of this checkpointed loop is the union over its "
                f"step's branch variants, and {self.steps.dropped} were dropped (more than 16, "
                f"or beyond memory_limit); compute the pattern of a loop without memory_limit")
        size = arg_patterns[0].shape[0]
        J = None
        for tape in self.steps.variants:
            P = jacobian_pattern(tape)
            J = P if J is None else (J + P)
        J = sp.csr_array(J)
        step_args = J[:, size:] if J.shape[1] > size else None
        args = sp.vstack(arg_patterns[1:]) if len(arg_patterns) > 1 else None
        n_steps = self.n_steps if self.condition is None else self.last_n_steps
        counts = [n_steps] + ([] if self.save_at is None else [int(k) for k in self.save_at])
        return sp.vstack([iterate_pattern(J[:, :size], step_args, arg_patterns[0], args, k)
                          for k in counts], format="csr")

    # ---- reverse mode ----------------------------------------------------
    @_explain_memory_errors
    def adjoint(self, args, result, adjoint, context):
        """Adjoints of the state and inputs; ``adjoint`` (q, size) is the
        protocol's copy of the output adjoint, updated in place step by step."""
        q = adjoint.shape[0]
        final, saved = self._split(adjoint, q)
        sums, _ = self._reverse("adjoint", q, args, None, context, final, None, saved)
        return [final] + list(sums)

    # ---- forward mode: no snapshots ----------------------------------------
    @_explain_memory_errors
    def tangent(self, args, result, tangents, context):
        z, inputs = args[0], args[1:]
        p = next(t.shape[0] for t in tangents if t is not None)
        zdot = tangents[0] if tangents[0] is not None else np.zeros((p, z.size))
        in_dots = list(tangents[1:])
        keep = context.sweep == "second_order"
        if self.budgeted and not keep:
            check_fits(self.options, self.footprint, self.steps, p, self.n_steps, self.condition)
        if self.condition is not None:
            return self._while_forward("second_order" if keep else "tangent", p, z, inputs, zdot,
                                       in_dots, context if keep else None)[1]
        if keep:
            sweep = LoopSweep(self, "second_order", p, z, inputs, zdot, in_dots)
            try:
                sweep.plan(self.n_steps)
                sweep.output = self._joined(sweep, sweep.until_turn())[1]
            except BaseException:
                sweep.close()
                raise
            self._keep(context, sweep)
            return sweep.output
        reset_stats(self.stats, n_steps=self.n_steps, forward_steps=self.n_steps)
        return self._forward("tangent", p, z, inputs, zdot, in_dots)[1]

    # ---- second order: reverse on forward through the loop -------------------
    @_explain_memory_errors
    def soadjoint(self, args, result, tangents, adjoint, adjoint_tangents, context):
        p = adjoint_tangents.shape[0]
        final, saved = self._split(adjoint, 1)
        final_dots, saved_dots = self._split(adjoint_tangents, p)
        sums, dot_sums = self._reverse("second_order", p, args, tangents, context, final,
                                       final_dots, saved, saved_dots)
        return [final] + list(sums), [final_dots] + list(dot_sums)

    def _reverse(self, kind, d, args, tangents, context, adjoint, adjoint_tangents=None,
                 saved=None, saved_tangents=None):
        """The reverse sweep: resumed from the forward pass kept in
        ``context``, or run from the start."""
        key = list(args)
        sweep = self._kept(context, kind, d, key)
        try:
            if sweep is None:
                z, inputs = args[0], args[1:]
                zdot = in_dots = None
                if tangents is not None:
                    zdot = tangents[0] if tangents[0] is not None else np.zeros((d, z.size))
                    in_dots = list(tangents[1:])
                sweep = LoopSweep(self, kind, d, z, inputs, zdot, in_dots)
                if self.condition is not None:
                    sweep.forward_while(keep=True)
                else:
                    sweep.plan(self.n_steps)
            if self.condition is not None:
                return sweep.reverse_while(adjoint, adjoint_tangents)
            return sweep.reverse(adjoint, adjoint_tangents, saved, saved_tangents)
        finally:
            if sweep is not None:
                sweep.close()
