"""Checkpointed loops: ``checkpoint_loop`` and ``checkpoint_while``.

A loop of n steps is recorded into the enclosing tape as ONE op that owns a
sub-tape of one step (:mod:`adsim.checkpoint.steptape`). The op's rules run
the step's C sweeps along a checkpoint schedule: plain replays to advance,
a taped replay and its adjoint to reverse one step, snapshots of the state
kept in memory (or on disk) as the schedule says. Memory then holds the
snapshots and one step's tape, not n steps' worth of tape.

The driver never writes into a state array: replays return new arrays, so
a snapshot in memory shares its arrays with the current state instead of
copying them, and derivative arrays handed in by the op protocol are
updated in place. With ``memory_limit`` every sweep is planned so that what
it holds (:mod:`adsim.checkpoint.footprint`) stays within the budget; value
passes then keep no snapshots, so that whatever sweep follows has the
whole budget.
"""
import functools
import itertools
import sys

import numpy as np

from .. import _numpy_api as api
from .._tape import Active, Opcode as Op, wrap
from .footprint import SNAPSHOT_OVERHEAD as _SNAPSHOT_OVERHEAD, Footprint  # noqa: F401
from .layout import StateLayout
from .options import (check_args, check_callable, check_n_steps, check_state, default_snapshots,
                      loop_options, resolve_schedule)
from .persist import LoopFileState
from .planning import check_fits, offline_plan, online_plan
from .schedules import Advance, FirstTurn, Restore, Revolve, TakeShot, YouTurn
from .steptape import StepTapes
from .storage import MemoryStore
from ..errors import MemoryBudgetError

__all__ = ["checkpoint_loop", "checkpoint_while"]

def _reset(stats, **fixed):
    """Start counting the work of a new sweep in ``stats``: ``forward_steps``
    counts the plain steps of the schedule's advances (Revolve's count),
    ``output_steps`` the plain steps run only to produce the loop's value,
    ``taped_steps`` the steps reversed."""
    stats.update(forward_steps=0, taped_steps=0, output_steps=0, **fixed)


def _same(a, b):
    """Whether two lists of arrays (or None) hold equal values."""
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and np.array_equal(x, y))
        for x, y in zip(a, b))


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


class LoopOp(LoopFileState):
    """The CALLBACK rules of one checkpointed loop (see adsim/_ops/callback.pxi
    for the protocol: flat float64 arrays in and out)."""

    def __init__(self, steps, options, n_steps=None, cond=None, layout=None, args_of=None):
        self.steps = steps
        self.options = options
        self.n_steps = n_steps
        self.cond = cond
        self.layout = layout
        self.args_of = args_of
        self.stats = options.stats
        self.footprint = None     # set when the op is recorded (its slots in the enclosing tape)
        self._recorded = False    # the first value call is made while recording
        self._cache = None        # that call's arguments and result, for the sweep that follows
        self._prefix = None       # schedule state left by a value pass (no memory_limit)
        self._run = None          # while loops: a forward pass with its snapshots (no memory_limit)

    @property
    def budgeted(self):
        return self.options.memory_limit is not None

    def _forget(self):
        """Drop what a value pass kept for a reverse sweep."""
        self._cache = None
        prefix, self._prefix = self._prefix, None
        run, self._run = self._run, None
        for kept in (prefix, run):
            if kept is not None and kept["store"] is not None:
                kept["store"].close()

    # ---- values --------------------------------------------------------
    @_explain_memory_errors
    def value(self, flat_args):
        cache, self._cache = self._cache, None
        if cache is not None and _same(cache["args"], flat_args):
            return cache["out"]
        del cache
        out = self.run_value(flat_args[0], flat_args[1:])
        if not self._recorded:
            self._recorded = True
            self._cache = dict(args=list(flat_args), out=out)
        return out

    def run_value(self, z, inputs):
        self._forget()
        if self.cond is not None:
            run = self._while_forward("adjoint", 1, (z,), inputs, None, keep=not self.budgeted)
            self._keep_run("adjoint", run, [z] + list(inputs))
            return run["final"][0]
        _reset(self.stats, n_steps=self.n_steps)
        if not self.budgeted and self.options.schedule is None:
            return self._value_with_prefix(z, inputs)
        self.stats["output_steps"] = self.n_steps
        return self.steps.iterate(z, inputs, self.n_steps)

    def _value_with_prefix(self, z, inputs):
        """The loop's value, running the schedule's actions up to its first
        turn on the way: the snapshots a reverse sweep starts with are taken
        by the plain forward pass, which a reverse sweep then resumes."""
        s = self.options.snapshots or default_snapshots(self.n_steps)
        sched, store = Revolve(self.n_steps, s), MemoryStore(s, copy=False)
        actions = iter(sched)
        try:
            state, current, positions, first_turn = self._execute(
                actions, (z,), store, self._plain_advance(inputs), None, until_turn=True)
            out = self.steps.iterate(state[0], inputs, 1)
        except BaseException:
            store.close()
            raise
        self.stats["output_steps"] = 1
        self.stats.update(snapshots=s, schedule=repr(sched))
        self._prefix = dict(key=[z] + list(inputs), store=store, state=state, current=current,
                            actions=itertools.chain([first_turn], actions), positions=positions)
        return out

    def _plain_advance(self, inputs):
        def advance(state, k):
            return (self.steps.iterate(state[0], inputs, k),)
        return advance

    # ---- sparsity ------------------------------------------------------
    def pattern(self, arg_patterns):
        """Index domains of the loop's result (the CALLBACK ``pattern``
        protocol of adsim/sparse/pattern.py): the step's Jacobian pattern,
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
        return iterate_pattern(J[:, :size], step_args, arg_patterns[0], args, self.n_steps)

    # ---- executing a schedule ------------------------------------------------
    def _execute(self, actions, state, store, advance, turn, current=0, reverse_from=None,
                 positions=None, until_turn=False):
        """Run schedule actions; ``state`` is a tuple of arrays; ``positions``
        maps filled snapshot slots to their step index. With ``until_turn``
        stop before the first turn and return (state, current, positions,
        that turn action). Actions that would reverse the wrong steps raise
        (a schedule of the user's own is checked as it runs)."""
        positions = {} if positions is None else positions
        total = reverse_from if reverse_from is not None else self.n_steps
        position = total                   # steps position.. are reversed
        for number, action in enumerate(actions):
            if isinstance(action, Advance):
                limit = position - 1 if position < total else total
                if current is None or not 1 <= action.steps <= limit - current:
                    _illegal(number, action, current, position)
                state = advance(state, action.steps)
                current += action.steps
                self.stats["forward_steps"] += action.steps
            elif isinstance(action, TakeShot):
                if current is None:
                    _illegal(number, action, current, position)
                store.put(action.index, state)
                positions[action.index] = current
            elif isinstance(action, Restore):
                state = store.get(action.index)
                current = positions[action.index]
            elif isinstance(action, (FirstTurn, YouTurn)):
                if current != position - 1 or isinstance(action, FirstTurn) != (position == total):
                    _illegal(number, action, current, position)
                if until_turn:
                    return state, current, positions, action
                turn(state, current)
                position, current, state = current, None, None
                self.stats["taped_steps"] += 1
                self._report(total - position, total)
            else:
                raise TypeError(f"adsim: schedule action {number} is not an action: {action!r}")
        if position != 0 and not until_turn:
            raise ValueError(f"adsim: the schedule ended with steps 0..{position - 1} not "
                             f"reversed; check it with adsim.checkpoint.simulate")
        return position

    def _report(self, done, total):
        if self.options.progress is None or self.options.progress is False:
            return
        if callable(self.options.progress):
            self.options.progress(done, total)
            return
        if done == total or done % max(1, total // 100) == 0:
            bar = int(40 * done / max(total, 1))
            sys.stderr.write(f"\radsim reverse sweep [{'#' * bar}{'.' * (40 - bar)}] {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    # ---- reverse mode ----------------------------------------------------
    @_explain_memory_errors
    def adjoint(self, flat_args, result, adjoint):
        """Adjoints of the state and inputs; ``adjoint`` (q, size) is the
        protocol's copy of the output adjoint, updated in place step by step."""
        z0, inputs = flat_args[0], flat_args[1:]
        q = adjoint.shape[0]
        self._cache = None
        acc = [np.zeros((q, x.size)) for x in inputs]

        def turn(state, current):
            _, adj = self.steps.call(lambda t, xs: t._adjoint(xs, adjoint), state[0], inputs)
            adjoint[...] = adj[0]
            for a, g in zip(acc, adj[1:]):
                a += g

        self._reverse("adjoint", q, (z0,), inputs, self._plain_advance(inputs), turn,
                      key=[z0] + list(inputs))
        return [adjoint] + acc

    # ---- forward mode: no snapshots ----------------------------------------
    @_explain_memory_errors
    def tangent(self, flat_args, result, tangents):
        z, inputs = flat_args[0], flat_args[1:]
        p = next(t.shape[0] for t in tangents if t is not None)
        self._forget()
        zdot = tangents[0] if tangents[0] is not None else np.zeros((p, z.size))
        in_dots = list(tangents[1:])
        if self.budgeted:
            check_fits(self.options, self.footprint, self.steps, p, self.n_steps)
        if self.cond is not None:
            run = self._while_forward("second_order", p, (z, zdot), inputs, in_dots,
                                      keep=not self.budgeted)
            self._keep_run("second_order", run, [z] + list(inputs) + list(tangents))
            return run["final"][1]
        _reset(self.stats, n_steps=self.n_steps)
        for _ in range(self.n_steps):
            z, zdot = self.steps.call(lambda t, xs: t._tangent(xs, [zdot] + in_dots), z, inputs)
        self.stats["forward_steps"] += self.n_steps
        return zdot

    # ---- second order: reverse on forward through the loop -------------------
    @_explain_memory_errors
    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents):
        z0, inputs = flat_args[0], flat_args[1:]
        p = adjoint_tangents.shape[0]
        self._cache = None
        zdot0 = tangents[0] if tangents[0] is not None else np.zeros((p, z0.size))
        in_dots = list(tangents[1:])
        acc = [np.zeros(x.size) for x in inputs]
        acc_dot = [np.zeros((p, x.size)) for x in inputs]

        def advance(state, k):
            z, zdot = state
            for _ in range(k):
                z, zdot = self.steps.call(lambda t, xs: t._tangent(xs, [zdot] + in_dots), z, inputs)
            return (z, zdot)

        def turn(state, current):
            z, zdot = state
            _, _, adj, adot = self.steps.call(
                lambda t, xs: t._soadjoint(xs, [zdot] + in_dots, adjoint, adjoint_tangents),
                z, inputs)
            adjoint[...] = adj[0]
            adjoint_tangents[...] = adot[0]
            for a, g in zip(acc, adj[1:]):
                a += g
            for a, g in zip(acc_dot, adot[1:]):
                a += g

        self._reverse("second_order", p, (z0, zdot0), inputs, advance, turn, in_dots=in_dots,
                      key=[z0] + list(inputs) + list(tangents))
        return [adjoint] + acc, [adjoint_tangents] + acc_dot

    def _reverse(self, kind, d, state0, inputs, advance, turn, in_dots=None, key=None):
        if self.cond is not None:
            return self._reverse_while(kind, d, state0, inputs, advance, turn, in_dots, key)
        prefix = self._take_prefix(kind, key)
        if prefix is not None:
            with prefix["store"]:        # resume where the value pass stopped
                self._execute(prefix["actions"], prefix["state"], prefix["store"], advance,
                              turn, current=prefix["current"], positions=prefix["positions"])
            return
        _reset(self.stats, n_steps=self.n_steps)
        sched, store, actions = offline_plan(self.options, self.footprint, self.steps, kind, d,
                                             self.n_steps)
        self.stats.update(snapshots=sched.snapshots, schedule=repr(sched))
        with store:
            self._execute(actions, state0, store, advance, turn)

    def _take_prefix(self, kind, key):
        prefix, self._prefix = self._prefix, None
        if prefix is None:
            return None
        if kind == "adjoint" and _same(prefix.pop("key"), key):
            return prefix
        prefix["store"].close()
        return None

    # ---- while loops: online checkpointing ------------------------------------
    def _reverse_while(self, kind, d, state0, inputs, advance, turn, in_dots, key):
        run, self._run = self._run, None
        if run is None or run["kind"] != kind or not _same(run["key"], key):
            if run is not None:
                run["store"].close()
            run = self._while_forward(kind, d, state0, inputs, in_dots, keep=True)
        n, store, sched = run["n"], run["store"], run["schedule"]
        with store:        # the final state is dropped at the first Restore
            if n:
                self._execute(sched.reverse(n), run.pop("final"), store, advance, turn,
                              current=n, reverse_from=n, positions=run["positions"])

    def _keep_run(self, kind, run, key):
        if run["store"] is not None:
            self._run = dict(run, kind=kind, key=key)

    def _while_forward(self, kind, d, state, inputs, in_dots, keep):
        """Run the while loop forward (values, or values and tangents); with
        ``keep`` take the online schedule's snapshots for a reverse sweep of
        ``kind``. Returns the run: its length, final state, store, schedule."""
        sched = store = None
        if keep:
            sched, store = online_plan(self.options, self.footprint, self.steps, kind, d)
            _reset(self.stats, snapshots=sched.snapshots, schedule=repr(sched))
        else:
            _reset(self.stats)
        positions = {}
        k, limit = 0, self.options.max_steps
        try:
            while self.cond(self.layout.unflatten(state[0]), *self.args_of(inputs)):
                if limit is not None and k >= limit:
                    raise RuntimeError(f"adsim: checkpoint_while did not stop within max_steps="
                                       f"{limit} steps; raise max_steps or check cond")
                if keep:
                    shot = sched.forward_step(k)
                    if shot is not None:
                        store.put(shot.index, state)
                        positions[shot.index] = k
                state = self._one_step(state, inputs, in_dots)
                k += 1
        except BaseException:
            if store is not None:
                store.close()
            raise
        self.stats.update(n_steps=k, forward_steps=k)
        self.n_steps = k
        return dict(n=k, store=store, schedule=sched, final=state, positions=positions)

    def _one_step(self, state, inputs, in_dots):
        if len(state) == 1:
            return (self.steps.call(lambda t, xs: t._forward(xs), state[0], inputs),)
        return tuple(self.steps.call(lambda t, xs: t._tangent(xs, [state[1]] + in_dots),
                                     state[0], inputs))


def _illegal(number, action, current, position):
    where = "no current state (a turn spent it; Restore first)" if current is None else \
        f"the current state is {current}"
    raise ValueError(f"adsim: schedule action {number} ({action!r}) is illegal: {where}, and "
                     f"steps {position}.. are reversed; check the schedule with "
                     f"adsim.checkpoint.simulate")


# ------------------------------------------------------------- recording

def _split_args(args):
    """Positions of loop inputs among ``args``: active arrays and float arrays
    (replayed with the step); other values (integer index arrays, masks,
    Python numbers) are captured as constants."""
    return [i for i, a in enumerate(args)
            if isinstance(a, Active) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]


def _setup(step, state, args):
    layout = StateLayout(state)
    positions = _split_args(args)

    def args_of(inputs):
        full = list(args)
        for pos, v in zip(positions, inputs):
            full[pos] = v
        return full

    def step_flat(z, *inputs):
        return layout.flatten(step(layout.unflatten(z), *args_of(inputs)))
    # what the step's replays assume unchanged (steptape.record_pure_step)
    step_flat.environment = (step, tuple(a for i, a in enumerate(args) if i not in positions))
    return layout, positions, args_of, step_flat


def _record_loop(make_op, layout, positions, args, step_flat, state):
    """Record the loop op in the enclosing tape; returns the final state."""
    leaves = [state] if not layout.is_sequence else list(state)
    inputs = [args[i] for i in positions]
    tape = api.tape_of(*[v for v in leaves + inputs if isinstance(v, Active)])
    arena_before, constants = tape.arena_elements, 0
    z = layout.flatten(state)
    if isinstance(z, Active):
        z_ref = z.slot
    else:
        z_ref = tape.const_ref(z)
        constants += z.nbytes
    refs, shaped = [], []
    for v in inputs:
        if isinstance(v, Active):
            refs.append(v.slot)
        else:
            refs.append(tape.const_ref(np.asarray(v, dtype=float)))
            constants += 8 * int(np.size(v))
        shaped.append(tape.slot_value(refs[-1]).reshape(api.shape_of(v)))
    z0 = tape.slot_value(z_ref)
    steps = StepTapes(step_flat, z0, shaped)
    state_bytes, input_bytes = z0.nbytes, sum(x.nbytes for x in shaped)
    del z0, shaped
    op = make_op(steps)
    cb = tape.add_callback(op)
    slot = tape.record_op(int(Op.CALLBACK), layout.size, [cb, 1 + len(refs), z_ref] + refs)
    out = layout.unflatten(wrap(tape, slot, (layout.size,)))
    op.footprint = Footprint(state=state_bytes, inputs=input_bytes,
                             outer=8 * (tape.arena_elements - arena_before),
                             outer_constants=constants)
    return out


def _any_active(state, args):
    leaves = list(state) if isinstance(state, (tuple, list)) else [state]
    return any(isinstance(v, Active) for v in leaves + list(args))


# ------------------------------------------------------------- public API

def checkpoint_loop(step, state, n_steps, args=(), *, snapshots=None, memory_limit=None,
                    snapshot_dir=None, schedule=None, progress=None, stats=None):
    """``state = step(state, *args)`` repeated ``n_steps`` times, differentiated
    with binomial checkpointing.

    Inside a recording (adsim.grad, adsim.record, ...) the loop becomes one op
    holding a tape of ONE step, replayed in C for every step. Reverse sweeps
    follow the Revolve schedule (Griewank & Walther, ACM TOMS 26(1), 2000):
    ``snapshots`` states are kept and forward segments are re-run, so memory
    is the snapshots plus one step's tape. Forward mode needs no snapshots.

    Parameters
    ----------
    step : callable
        ``step(state, *args) -> state``, plain NumPy code; state is an array
        or a tuple/list of arrays and keeps its shapes.
    state : array or tuple of arrays
        Initial state (real numbers). An empty state is returned as it is.
    n_steps : int
        Number of steps, ``>= 0`` (an integer, as for ``range``).
    args : tuple
        Further arguments of ``step``. Arrays (active or not) are loop inputs
        whose adjoints accumulate over all steps; other values are constants.
    snapshots : int, optional
        Snapshots kept, counting the initial state (default: enough for a
        recomputation factor of about 3, or what ``memory_limit`` allows).
    memory_limit : int or str, optional
        Bound in bytes ("100MB") on the memory the loop adds to a sweep:
        snapshots, the step's tape and every copy of the state the sweep
        makes (see docs/checkpointing.md). A sweep that cannot run within it
        raises ``MemoryBudgetError`` naming the smallest budget that works.
    snapshot_dir : str or os.PathLike, optional
        Directory for snapshots beyond ``memory_limit`` (two-level schedule);
        files live in a private subdirectory, are written atomically and are
        removed when the sweep ends, also on errors and KeyboardInterrupt.
        File system failures raise ``adsim.errors.SnapshotDirError``.
    schedule : optional
        ``adsim.Revolve(n_steps, snapshots)``, ``adsim.TwoLevel(n_steps,
        memory_snapshots, disk_snapshots)`` (with ``snapshot_dir``),
        ``adsim.Online(snapshots)``, or a callable ``n -> schedule``;
        overrides ``snapshots``.
    progress : bool or callable, optional
        ``True`` draws a progress bar of reverse sweeps on stderr; a callable
        gets ``(steps reversed, n_steps)``.
    stats : dict, optional
        Receives the work of the last sweep: ``forward_steps`` (plain step
        replays), ``taped_steps``, ``snapshots``, ``schedule``.
    """
    check_callable(step, "step")
    n_steps = check_n_steps(n_steps)
    args = check_args(args)
    size = check_state(state)
    options = loop_options(snapshots, memory_limit, snapshot_dir, schedule, progress, stats)
    if options.schedule is not None and not callable(options.schedule) and n_steps:
        resolve_schedule(options.schedule, n_steps)
    if n_steps == 0:
        return state
    if not _any_active(state, args):
        for _ in range(n_steps):
            state = step(state, *args)
        return state
    if size == 0:           # nothing to iterate: the state stays empty
        return state
    layout, positions, args_of, step_flat = _setup(step, state, args)

    def make_op(steps):
        return LoopOp(steps, options, n_steps=n_steps, layout=layout, args_of=args_of)
    return _record_loop(make_op, layout, positions, args, step_flat, state)


def checkpoint_while(cond, step, state, args=(), *, snapshots=20, memory_limit=None,
                     max_steps=10 ** 6, progress=None, stats=None):
    """``while cond(state, *args): state = step(state, *args)``, differentiated
    with online checkpointing.

    The number of steps is found as the loop runs; snapshots are placed by an
    online schedule (:class:`adsim.checkpoint.Online`) whose total
    recomputation stays close to the offline binomial optimum. ``cond`` is
    evaluated on plain values; each replay runs as many steps as ``cond``
    allows (possibly none), and derivatives are those of the steps taken.
    ``max_steps`` (an integer, or None for no bound) stops a loop that does
    not end. Other parameters as for :func:`checkpoint_loop`.
    """
    check_callable(cond, "cond")
    check_callable(step, "step")
    args = check_args(args)
    size = check_state(state)
    options = loop_options(snapshots, memory_limit, None, None, progress, stats,
                           max_steps=max_steps, while_loop=True)
    if not _any_active(state, args):
        k = 0
        while cond(state, *args):
            if options.max_steps is not None and k >= options.max_steps:
                raise RuntimeError(f"adsim: checkpoint_while did not stop within "
                                   f"max_steps={options.max_steps}")
            state = step(state, *args)
            k += 1
        return state
    if size == 0:           # every step keeps the empty state
        return state
    layout, positions, args_of, step_flat = _setup(step, state, args)

    def make_op(steps):
        return LoopOp(steps, options, cond=cond, layout=layout, args_of=lambda inputs: args_of(
            [x.reshape(api.shape_of(args[i])) for x, i in zip(inputs, positions)]))
    return _record_loop(make_op, layout, positions, args, step_flat, state)
