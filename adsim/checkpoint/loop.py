"""Checkpointed loops: ``checkpoint_loop`` and ``checkpoint_while``.

A loop of n steps is recorded into the enclosing tape as ONE op that owns a
sub-tape of one step (:mod:`adsim.checkpoint.steptape`). The op's rules run
the step's C sweeps along a checkpoint schedule: plain replays to advance,
a taped replay and its adjoint to reverse one step, snapshots of the state
kept in memory (or on disk) as the schedule says. Memory then holds the
snapshots and one step's tape, not n steps' worth of tape.
"""
import itertools
import math
import sys

import numpy as np

from .. import _numpy_api as api
from .._tape import Active, Opcode as Op, wrap
from .budget import parse_bytes, snapshots_for_budget
from .multistage import TwoLevel
from .online import Online
from .schedules import Advance, FirstTurn, Restore, Revolve, TakeShot, YouTurn
from .steptape import StepTapes
from .storage import MemoryStore, TieredStore
from ..errors import MemoryBudgetError


# ------------------------------------------------------------- state layout

class StateLayout:
    """Flattens a state (one array, or a tuple/list of arrays) into one vector."""

    def __init__(self, state):
        self.is_sequence = isinstance(state, (tuple, list))
        self.kind = type(state) if self.is_sequence else None
        leaves = list(state) if self.is_sequence else [state]
        self.shapes = [tuple(api.shape_of(leaf)) for leaf in leaves]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.size = sum(self.sizes)

    def leaves(self, state):
        leaves = list(state) if self.is_sequence else [state]
        shapes = [tuple(api.shape_of(leaf)) for leaf in leaves]
        if shapes != self.shapes:
            raise ValueError(f"adsim: the loop step returned a state with shapes {shapes}; it "
                             f"must keep the shapes of the initial state {self.shapes}")
        return leaves

    def flatten(self, state):
        leaves = self.leaves(state)
        flat = [api.reshape(x, (-1,)) if isinstance(x, Active) else
                np.asarray(x, dtype=float).reshape(-1) for x in leaves]
        if len(flat) == 1:
            return flat[0]
        return np.concatenate(flat)

    def unflatten(self, z):
        pieces, offset = [], 0
        for shape, size in zip(self.shapes, self.sizes):
            piece = z[offset:offset + size]
            pieces.append(piece.reshape(shape))
            offset += size
        if not self.is_sequence:
            return pieces[0]
        return self.kind(pieces)


# ------------------------------------------------------------- the loop op

_SNAPSHOT_OVERHEAD = 512    # bytes of Python objects around each in-memory snapshot


def _reset(stats, **fixed):
    """Start counting the work of a new sweep in ``stats``: ``forward_steps``
    counts the plain steps of the schedule's advances (Revolve's count),
    ``output_steps`` the plain steps run only to produce the loop's value,
    ``taped_steps`` the steps reversed."""
    stats.update(forward_steps=0, taped_steps=0, output_steps=0, **fixed)


class LoopOp:
    """The CALLBACK rules of one checkpointed loop (see adsim/_ops/callback.pxi
    for the protocol: flat float64 arrays in and out)."""

    def __init__(self, steps, n_steps=None, cond=None, layout=None, args_of=None, *,
                 snapshots=None, memory_limit=None, snapshot_dir=None, schedule=None,
                 progress=None, max_steps=None, stats=None):
        self.steps = steps
        self.n_steps = n_steps
        self.cond = cond
        self.layout = layout
        self.args_of = args_of
        self.snapshots = snapshots
        self.memory_limit = None if memory_limit is None else parse_bytes(memory_limit)
        self.snapshot_dir = snapshot_dir
        self.schedule = schedule
        self.progress = progress
        self.max_steps = max_steps
        self.stats = {} if stats is None else stats
        self._pending = None
        self._prefix = None      # schedule state left by the last value pass
        self._runs = {}          # online runs of checkpoint_while, per mode

    # ---- plain loop ----------------------------------------------------
    def run_value(self, z, inputs):
        if self.cond is not None:
            return self._while_forward("values", [z], inputs)[0]
        _reset(self.stats, n_steps=self.n_steps)
        self._drop_prefix()
        memory, disk = self._slots(self.n_steps, z.nbytes, 1)
        if disk or self.schedule is not None:
            self.stats["output_steps"] = self.n_steps
            return self.steps.iterate(z, inputs, self.n_steps)
        return self._value_with_prefix(z, inputs)

    def _value_with_prefix(self, z, inputs):
        """The loop's value, running the schedule's actions up to its first
        turn on the way: the snapshots a reverse sweep starts with are taken
        by the plain forward pass, which a reverse sweep then resumes."""
        sched, store = self._plan(self.n_steps, z.nbytes, 1)
        actions = iter(sched)

        def advance(state, k):
            return [self.steps.iterate(state[0], inputs, k)]
        try:
            state, current, positions, first_turn = self._execute(
                actions, [z], store, advance, None, until_turn=True)
            out = self.steps.iterate(state[0], inputs, 1)
        except BaseException:
            store.close()
            raise
        self.stats["output_steps"] = 1
        self.stats.update(snapshots=sched.snapshots, schedule=repr(sched))
        self._prefix = dict(key=[np.array(z, copy=True)] + [np.array(x, copy=True) for x in inputs],
                            store=store, actions=itertools.chain([first_turn], actions),
                            state=state, current=current, positions=positions,
                            snapshots=sched.snapshots)
        return out

    def _drop_prefix(self, close=True):
        prefix, self._prefix = self._prefix, None
        if prefix is not None and close:
            prefix["store"].close()
        return prefix

    def value(self, flat_args):
        if self._pending is not None:
            out, self._pending = self._pending, None
            return out
        return self.run_value(flat_args[0], flat_args[1:])

    # ---- sparsity ------------------------------------------------------
    def pattern(self, arg_patterns):
        """Index domains of the loop's result (the CALLBACK ``pattern``
        protocol of adsim/sparse/pattern.py): the step's Jacobian pattern,
        united over its recorded branch variants, iterated n_steps times."""
        import scipy.sparse as sp

        from ..sparse.pattern import iterate_pattern, jacobian_pattern
        size = arg_patterns[0].shape[0]
        J = None
        for tape in self.steps.variants:
            P = jacobian_pattern(tape)
            J = P if J is None else (J + P)
        J = sp.csr_array(J)
        step_args = J[:, size:] if J.shape[1] > size else None
        args = sp.vstack(arg_patterns[1:]) if len(arg_patterns) > 1 else None
        return iterate_pattern(J[:, :size], step_args, arg_patterns[0], args, self.n_steps)

    # ---- schedules -----------------------------------------------------
    def _slots(self, n_steps, state_nbytes, adjoint_directions, tangent_directions=0):
        """(memory snapshots, disk snapshots) for this sweep."""
        wanted = self.snapshots
        if self.memory_limit is None:
            return (wanted if wanted is not None else _default_snapshots(n_steps)), 0
        tape_nbytes = self.steps.nbytes(adjoint_directions, tangent_directions)
        state_nbytes += _SNAPSHOT_OVERHEAD
        try:
            fit = snapshots_for_budget(self.memory_limit, state_nbytes, tape_nbytes, n_steps)
        except MemoryBudgetError:
            if self.snapshot_dir is None:
                raise
            if self.memory_limit < tape_nbytes:     # disk snapshots cannot hold the tape
                raise MemoryBudgetError(
                    f"adsim: memory_limit={self.memory_limit} bytes cannot hold the tape of one "
                    f"step ({tape_nbytes} bytes), which stays in memory even with snapshot_dir; "
                    f"raise memory_limit to at least {tape_nbytes} bytes or shorten the step")
            fit = 0
        if wanted is None:
            wanted = fit if self.snapshot_dir is None else max(fit, _default_snapshots(n_steps))
        if wanted <= fit or self.snapshot_dir is None:
            return min(wanted, fit) if self.snapshot_dir is None else wanted, 0
        return fit, wanted - fit

    def _plan(self, n_steps, state_nbytes, adjoint_directions, tangent_directions=0):
        """(schedule, store) for an offline reversal of n_steps."""
        if self.schedule is not None:
            sched = self.schedule(n_steps) if callable(self.schedule) else self.schedule
            if sched.n_steps != n_steps:
                raise ValueError(f"adsim: the schedule is for {sched.n_steps} steps, the loop has {n_steps}")
            return sched, MemoryStore(sched.snapshots)
        memory, disk = self._slots(n_steps, state_nbytes, adjoint_directions, tangent_directions)
        if disk:
            return (TwoLevel(n_steps, memory, disk),
                    TieredStore(memory, disk, self.snapshot_dir))
        return Revolve(n_steps, memory), MemoryStore(memory)

    def _execute(self, actions, state, store, advance, turn, current=0, reverse_from=None,
                 positions=None, until_turn=False):
        """Run schedule actions; ``state`` is a list of arrays; ``positions``
        maps filled snapshot slots to their step index. With ``until_turn``
        stop before the first turn and return (state, current, positions,
        that turn action)."""
        positions = {} if positions is None else positions
        total = reverse_from if reverse_from is not None else self.n_steps
        position = total
        for action in actions:
            if isinstance(action, Advance):
                state = advance(state, action.steps)
                current += action.steps
                self.stats["forward_steps"] += action.steps
            elif isinstance(action, TakeShot):
                store.put(action.index, state)
                positions[action.index] = current
            elif isinstance(action, Restore):
                state = store.get(action.index)
                current = positions[action.index]
            elif isinstance(action, (FirstTurn, YouTurn)):
                if until_turn:
                    return state, current, positions, action
                turn(state, current)
                position = current
                self.stats["taped_steps"] += 1
                self._report(total - position, total)
        return position

    def _report(self, done, total):
        if self.progress is None or self.progress is False:
            return
        if callable(self.progress):
            self.progress(done, total)
            return
        if done == total or done % max(1, total // 100) == 0:
            bar = int(40 * done / max(total, 1))
            sys.stderr.write(f"\radsim reverse sweep [{'#' * bar}{'.' * (40 - bar)}] {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    # ---- reverse mode ----------------------------------------------------
    def adjoint(self, flat_args, result, adjoint):
        z0, inputs = flat_args[0], flat_args[1:]
        q = adjoint.shape[0]
        acc = [np.zeros((q, x.size)) for x in inputs]
        zbar = [adjoint]

        def advance(state, k):
            return [self.steps.iterate(state[0], inputs, k)]

        def turn(state, current):
            _, adj = self.steps.call(lambda t, xs: t._adjoint(xs, zbar[0]), state[0], inputs)
            zbar[0] = adj[0]
            for a, g in zip(acc, adj[1:]):
                a += g

        self._reverse("values", [z0], inputs, advance, turn, z0.nbytes, q)
        return [zbar[0]] + acc

    # ---- forward mode: no snapshots ----------------------------------------
    def tangent(self, flat_args, result, tangents):
        z, inputs = flat_args[0], flat_args[1:]
        p = next(t.shape[0] for t in tangents if t is not None)
        zdot = tangents[0] if tangents[0] is not None else np.zeros((p, z.size))
        in_dots = [t if t is not None else np.zeros((p, x.size)) for t, x in zip(tangents[1:], inputs)]
        if self.cond is not None:
            return self._while_forward("tangents", [z, zdot], inputs, in_dots)[1]
        _reset(self.stats, n_steps=self.n_steps)
        for _ in range(self.n_steps):
            z, zdot = self.steps.call(lambda t, xs: t._tangent(xs, [zdot] + in_dots), z, inputs)
        self.stats["forward_steps"] += self.n_steps
        return zdot

    # ---- second order: reverse on forward through the loop -------------------
    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents):
        z0, inputs = flat_args[0], flat_args[1:]
        p = adjoint_tangents.shape[0]
        zdot0 = tangents[0] if tangents[0] is not None else np.zeros((p, z0.size))
        in_dots = [t if t is not None else np.zeros((p, x.size)) for t, x in zip(tangents[1:], inputs)]
        acc = [np.zeros(x.size) for x in inputs]
        acc_dot = [np.zeros((p, x.size)) for x in inputs]
        bar = [adjoint, adjoint_tangents]

        def advance(state, k):
            z, zdot = state
            for _ in range(k):
                z, zdot = self.steps.call(lambda t, xs: t._tangent(xs, [zdot] + in_dots), z, inputs)
            return [z, zdot]

        def turn(state, current):
            z, zdot = state
            _, _, adj, adot = self.steps.call(
                lambda t, xs: t._soadjoint(xs, [zdot] + in_dots, bar[0], bar[1]), z, inputs)
            bar[0], bar[1] = adj[0], adot[0]
            for a, g in zip(acc, adj[1:]):
                a += g
            for a, g in zip(acc_dot, adot[1:]):
                a += g

        self._reverse("tangents", [z0, zdot0], inputs, advance, turn,
                      z0.nbytes * (1 + p), 1, tangents=in_dots, tangent_directions=p)
        return [bar[0]] + acc, [bar[1]] + acc_dot

    def _reverse(self, mode, state0, inputs, advance, turn, state_nbytes, directions, tangents=None,
                 tangent_directions=0):
        if self.cond is None:
            prefix = self._drop_prefix(close=False)
            if prefix is not None and not (mode == "values"
                    and prefix["snapshots"] == self._slots(self.n_steps, state_nbytes, directions)[0]
                    and all(np.array_equal(a, b) for a, b in zip(prefix["key"], state0 + list(inputs)))):
                prefix["store"].close()
                prefix = None
            if prefix is not None:
                with prefix["store"]:        # resume where the value pass stopped
                    self._execute(prefix["actions"], prefix["state"], prefix["store"], advance,
                                  turn, current=prefix["current"], positions=prefix["positions"])
                return
            _reset(self.stats, n_steps=self.n_steps)
            sched, store = self._plan(self.n_steps, state_nbytes, directions, tangent_directions)
            self.stats.update(snapshots=sched.snapshots, schedule=repr(sched))
            with store:
                self._execute(iter(sched), state0, store, advance, turn)
            return
        run = self._runs.get(mode)
        if run is None or not all(np.array_equal(a, b) for a, b in zip(run["key"], state0 + list(inputs))):
            self._while_forward(mode, state0, inputs, tangents)
            run = self._runs[mode]
        n, store, sched = run["n"], run["store"], run["schedule"]
        try:
            self._execute(sched.reverse(n), run["final"], store, advance, turn,
                          current=n, reverse_from=n, positions=run["positions"])
        finally:
            store.close()
            self._runs.pop(mode, None)

    # ---- while loops: online checkpointing during the forward pass ----------
    def _while_forward(self, mode, state, inputs, in_dots=None):
        """Run a while loop forward (values, or values and tangents), taking the
        online schedule's snapshots. Returns the final state."""
        old = self._runs.pop(mode, None)
        if old is not None:
            old["store"].close()
        per_state = sum(x.nbytes for x in state)
        memory, disk = self._slots(None, per_state, 1)
        if disk:
            raise ValueError("adsim: checkpoint_while keeps its snapshots in memory; raise "
                             "memory_limit or lower snapshots")
        sched = Online(memory)
        store = MemoryStore(memory)
        key = [np.array(a, copy=True) for a in state + list(inputs)]
        positions = {}
        _reset(self.stats, snapshots=memory, schedule=repr(sched))
        k = 0
        try:
            while self.cond(self.layout.unflatten(state[0]), *self.args_of(inputs)):
                if k >= self.max_steps:
                    raise RuntimeError(f"adsim: checkpoint_while did not stop within max_steps="
                                       f"{self.max_steps} steps; raise max_steps or check cond")
                shot = sched.forward_step(k)
                if shot is not None:
                    store.put(shot.index, state)
                    positions[shot.index] = k
                if len(state) == 1:
                    state = [self.steps.call(lambda t, xs: t._forward(xs), state[0], inputs)]
                else:
                    state = list(self.steps.call(
                        lambda t, xs: t._tangent(xs, [state[1]] + in_dots), state[0], inputs))
                k += 1
        except BaseException:
            store.close()
            raise
        self.stats.update(n_steps=k, forward_steps=k)
        if k == 0:
            store.close()
            raise ValueError("adsim: checkpoint_while ran no step (cond was false at the start); "
                             "the loop is the identity, do not wrap it")
        self.n_steps = k
        self._runs[mode] = dict(n=k, store=store, schedule=sched, final=state, key=key,
                                positions=positions)
        return state


def _default_snapshots(n_steps):
    """Snapshots when neither ``snapshots`` nor ``memory_limit`` is given:
    enough for a recomputation factor of about 3 (repetition number <= 3)."""
    if n_steps is None:
        return 64
    s = 1
    while math.comb(s + 3, 3) < n_steps and s < n_steps:
        s += 1
    return max(1, min(s, n_steps))


# ------------------------------------------------------------- public API

def _split_args(args):
    """Positions of loop inputs among ``args``: active arrays and float arrays
    (replayed with the step); other values (integer index arrays, masks,
    Python numbers) are captured as constants."""
    return [i for i, a in enumerate(args)
            if isinstance(a, Active) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]


def _setup(step, state, args):
    layout = StateLayout(state)
    args = tuple(args)
    positions = _split_args(args)

    def args_of(inputs):
        full = list(args)
        for pos, v in zip(positions, inputs):
            full[pos] = v
        return full

    def step_flat(z, *inputs):
        return layout.flatten(step(layout.unflatten(z), *args_of(inputs)))

    return layout, positions, args_of, step_flat


def _record_loop(op_factory, layout, positions, args, step_flat, state):
    """Record the loop op in the enclosing tape; returns the final state."""
    leaves = [state] if not layout.is_sequence else list(state)
    inputs = [args[i] for i in positions]
    tape = api.tape_of(*[v for v in leaves + inputs if isinstance(v, Active)])
    z = layout.flatten(state)
    z_ref = z.slot if isinstance(z, Active) else tape.const_ref(z)
    refs, values = [], []
    for v in inputs:
        if isinstance(v, Active):
            refs.append(v.slot)
            values.append(tape.slot_value(v.slot))
        else:
            arr = np.asarray(v, dtype=float)
            refs.append(tape.const_ref(arr))
            values.append(arr.reshape(-1))
    z0 = tape.slot_value(z_ref)
    shaped = [val.reshape(api.shape_of(v)) for val, v in zip(values, inputs)]
    steps = StepTapes(step_flat, z0, shaped)
    op = op_factory(steps)
    op._pending = op.run_value(z0, values)
    cb = tape.add_callback(op)
    slot = tape.record_op(int(Op.CALLBACK), z0.size, [cb, 1 + len(refs), z_ref] + refs)
    out = wrap(tape, slot, (z0.size,))
    return layout.unflatten(out)


def _any_active(state, args):
    leaves = list(state) if isinstance(state, (tuple, list)) else [state]
    return any(isinstance(v, Active) for v in leaves + list(args))


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
        Initial state.
    n_steps : int
        Number of steps.
    args : tuple
        Further arguments of ``step``. Arrays (active or not) are loop inputs
        whose adjoints accumulate over all steps; other values are constants.
    snapshots : int, optional
        Snapshots kept, counting the initial state (default: enough for a
        recomputation factor of about 3, or what ``memory_limit`` allows).
    memory_limit : int or str, optional
        Budget in bytes ("100MB") for snapshots plus the step's tape; the
        snapshot count follows from it. ``MemoryBudgetError`` if even one
        snapshot does not fit.
    snapshot_dir : str, optional
        Directory for snapshots beyond the memory budget (two-level schedule);
        files are written atomically and removed when the sweep ends.
    schedule : Revolve or callable, optional
        A schedule object for ``n_steps`` (e.g. ``Revolve(n, 30)``), or a
        callable ``n -> schedule``; overrides ``snapshots``.
    progress : bool or callable, optional
        ``True`` draws a progress bar of reverse sweeps on stderr; a callable
        gets ``(steps reversed, n_steps)``.
    stats : dict, optional
        Receives the work of the last sweep: ``forward_steps`` (plain step
        replays), ``taped_steps``, ``snapshots``, ``schedule``.
    """
    n_steps = int(n_steps)
    if n_steps < 0:
        raise ValueError(f"adsim: n_steps must be >= 0, got {n_steps}")
    if n_steps == 0:
        return state
    if not _any_active(state, args):
        for _ in range(n_steps):
            state = step(state, *args)
        return state
    layout, positions, args_of, step_flat = _setup(step, state, args)
    if memory_limit is not None:
        parse_bytes(memory_limit)

    def factory(steps):
        return LoopOp(steps, n_steps=n_steps, layout=layout, args_of=args_of, snapshots=snapshots,
                      memory_limit=memory_limit, snapshot_dir=snapshot_dir, schedule=schedule,
                      progress=progress, stats=stats)
    return _record_loop(factory, layout, positions, tuple(args), step_flat, state)


def checkpoint_while(cond, step, state, args=(), *, snapshots=20, memory_limit=None,
                     max_steps=10 ** 6, progress=None, stats=None):
    """``while cond(state, *args): state = step(state, *args)``, differentiated
    with online checkpointing.

    The number of steps is found as the loop runs; snapshots are placed by an
    online schedule (:class:`adsim.checkpoint.Online`) whose total
    recomputation stays close to the offline binomial optimum. ``cond`` is
    evaluated on plain values; each replay runs as many steps as ``cond``
    allows, and derivatives are those of the steps taken. Other parameters as
    for :func:`checkpoint_loop`.
    """
    if not _any_active(state, args):
        k = 0
        while cond(state, *args):
            if k >= max_steps:
                raise RuntimeError(f"adsim: checkpoint_while did not stop within max_steps={max_steps}")
            state = step(state, *args)
            k += 1
        return state
    layout, positions, args_of, step_flat = _setup(step, state, args)

    def factory(steps):
        return LoopOp(steps, cond=cond, layout=layout, args_of=lambda inputs: args_of(
            [x.reshape(api.shape_of(args[i])) for x, i in zip(inputs, positions)]),
            snapshots=snapshots, memory_limit=memory_limit, progress=progress,
            max_steps=max_steps, stats=stats)
    return _record_loop(factory, layout, positions, tuple(args), step_flat, state)
