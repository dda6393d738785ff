"""Checkpointed loops: ``checkpoint_loop`` and ``checkpoint_while``.

The public functions check their arguments and record the loop into the
enclosing tape as one op (:class:`adsim.checkpoint.op.LoopOp`) owning a tape
of one step; the op's rules run the loop's sweeps through the driver
(:mod:`adsim.checkpoint.driver`), which executes checkpoint schedules in
compiled code.
"""
from dataclasses import replace

import numpy as np

from .. import _numpy_api as api
from .._opcodes import Opcode as Op
from .._active import Active, wrap
from .._validate import entry_point
from ..errors import InvalidArgument, InvalidArgumentValue, LoopDidNotStop, MixedRecordings
from .condition import ConditionTapes
from .footprint import SNAPSHOT_OVERHEAD as _SNAPSHOT_OVERHEAD, Footprint  # noqa: F401 (its old home)
from .layout import StateLayout
from .._containers.container_args import gathered_inputs
from .._containers.tree import placed
from .op import LoopOp
from .options import check_args, check_callable, check_n_steps, check_save_at, check_state, \
    loop_options, resolve_schedule
from .steptape import StepTapes

__all__ = ["checkpoint_loop", "checkpoint_while", "grouped_while", "while_options"]


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
        return placed(args, positions, inputs)

    def step_flat(z, *inputs):
        return layout.flatten(called(step, "step", layout.unflatten(z), args_of(inputs)))
    # what the step's replays assume unchanged (steptape.record_pure_step)
    step_flat.environment = (step, _constants(args, positions))
    return layout, positions, args_of, step_flat


def called(fn, name, state, args):
    """``fn(state, *args)`` (the loop's ``step`` or ``cond``). A TypeError
    raised by the call itself, not inside ``fn``, says the call does not fit
    fn's signature: a mistake of the loop's arguments, named as such."""
    try:
        return fn(state, *args)
    except TypeError as err:
        if err.__traceback__.tb_next is not None:
            raise
        raise InvalidArgument(
            f"adsim: the loop calls {name} as {name}(state, *args) with {len(args)} extra "
            f"argument{'' if len(args) == 1 else 's'} from args=, and that call fails: {err}. "
            f"Give {name} the parameters (state, ...), and pass the others in args=(...)") \
            from None


def _constants(args, positions):
    return tuple(a for i, a in enumerate(args) if i not in positions)


def _record_loop(make_op, layout, positions, args, step_flat, state, saved=0, group=None):
    """Record the loop op in the enclosing tape; returns the final state (and
    with ``saved`` states besides it, those stacked: see ``_stacked``). The
    loops of a ``group`` share their step's variants."""
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
    try:
        if group is not None and group.steps is not None and group.steps.serves(z0, shaped):
            steps = group.steps
        elif group is not None and group.inherited is not None and \
                group.inherited[0].takes(z0, shaped, step_flat):
            steps = group.inherited[0].adopted(step_flat)
        else:
            steps = StepTapes(step_flat, z0, shaped)
    except MixedRecordings as error:
        raise MixedRecordings(
            "adsim: the step of a checkpointed loop reads an active value that is not one of "
            "its arguments (from a global, an object attribute, or kept from an earlier "
            "recording). The step is recorded on a tape of its own: pass the value through "
            "the state or args= (values the step reads from its closure are passed for you)"
        ) from error
    state_bytes, input_bytes = z0.nbytes, sum(x.nbytes for x in shaped)
    op = make_op(steps, z0.size)
    del z0, shaped
    size = layout.size

    def footprint(outer_elements):
        return Footprint(state=state_bytes, inputs=input_bytes, outer=8 * outer_elements,
                         outer_constants=constants, saved=saved * state_bytes)
    # the value is computed as the op is recorded, when its result slot is
    # made: that pass is planned with the slot (the reshapes below add theirs)
    op.footprint = footprint(tape.arena_elements - arena_before + (1 + saved) * size)
    cb = tape.add_callback(op)
    slot = tape.record_op(int(Op.CALLBACK), (1 + saved) * size, [cb, 1 + len(refs), z_ref] + refs)
    steps.settle()      # (the loop has run: later recordings check what the step reads)
    if getattr(op, "condition", None) is not None:
        op.condition.settle()   # (and what a while loop's condition reads)
    flat = wrap(tape, slot, ((1 + saved) * size,))
    out = layout.unflatten(flat if not saved else flat[:size])
    if saved:
        out = (out, _stacked(layout, api.reshape(flat[size:], (saved, size))))
    op.footprint = footprint(tape.arena_elements - arena_before)
    if group is not None:
        group.steps = steps
        group.add(op)
    return out


def _stacked(layout, rows):
    """States given as the rows of a (k, size) array, stacked leaf by leaf:
    an array (k,) + shape, or the state's container of such arrays."""
    k = rows.shape[0]
    pieces, offset = [], 0
    for shape, size in zip(layout.shapes, layout.sizes):
        pieces.append(api.reshape(rows[:, offset:offset + size], (k,) + tuple(shape)))
        offset += size
    return layout.kind(pieces) if layout.is_sequence else pieces[0]


def _plain_loop(step, state, n_steps, args, save_at):
    """The loop on plain values (nothing to differentiate)."""
    if save_at is None:
        for _ in range(n_steps):
            state = called(step, "step", state, args)
        return state
    order = np.argsort(save_at, kind="stable")
    saved, k = [None] * len(save_at), 0
    for i in range(n_steps + 1):
        while k < len(order) and save_at[order[k]] == i:
            saved[order[k]] = state
            k += 1
        if i < n_steps:
            state = called(step, "step", state, args)
    return state, _stack_plain(state, saved)


def _stack_plain(state, saved):
    if isinstance(state, (tuple, list)):
        leaves = [np.stack([np.asarray(s[i], dtype=float) for s in saved]) if saved else
                  np.zeros((0,) + np.shape(leaf)) for i, leaf in enumerate(state)]
        return type(state)(leaves)
    return np.stack([np.asarray(s, dtype=float) for s in saved]) if saved else \
        np.zeros((0,) + np.shape(state))


def _any_active(state, args):
    leaves = list(state) if isinstance(state, (tuple, list)) else [state]
    return any(isinstance(v, Active) for v in leaves + list(args))


# ------------------------------------------------------------- public API

@entry_point
def checkpoint_loop(step, state, n_steps, args=(), *, save_at=None, snapshots=None,
                    memory_limit=None, snapshot_dir=None, schedule=None, progress=None,
                    stats=None):
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
        whose adjoints accumulate over all steps, as are the active arrays
        held in dicts, lists, tuples and objects' attributes (a dataclass of
        parameters); other values are constants.
    save_at : sequence of int, optional
        Step counts (each in ``0..n_steps``) of states to return besides the
        last: the result is then ``(state, saved)``, ``saved`` holding the
        state after ``save_at[i]`` steps at index ``i`` of a new first axis
        (of each array of a tuple state). All of them are one op: a loss
        reading the loop at many times costs no extra pass through it.
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
        ``True`` shows the progress of reverse sweeps on stderr: on a
        terminal one line updated in place (steps done, rate, time left),
        elsewhere a plain line every few seconds; a callable gets ``(steps
        reversed, n_steps)``.
    stats : dict, optional
        Receives the work of the last sweep: ``forward_steps`` (plain step
        replays), ``taped_steps``, ``snapshots``, ``schedule``.
    """
    check_callable(step, "step", "checkpoint_loop")
    n_steps = check_n_steps(n_steps)
    args = check_args(args)
    (step,), args = gathered_inputs([step], args)   # every active value step reads: loop inputs
    size = check_state(state)
    if save_at is not None:
        save_at = check_save_at(save_at, n_steps)
    options = loop_options(snapshots, memory_limit, snapshot_dir, schedule, progress, stats)
    if options.schedule is not None and not callable(options.schedule) and n_steps:
        resolve_schedule(options.schedule, n_steps)
    if n_steps == 0 or size == 0 or not _any_active(state, args):
        # nothing to iterate (the state stays what it is), or nothing to differentiate
        return _plain_loop(step, state, n_steps if size else 0, args, save_at)
    layout, positions, args_of, step_flat = _setup(step, state, args)

    def make_op(steps, size):
        return LoopOp(steps, options, size, n_steps=n_steps, save_at=save_at)
    return _record_loop(make_op, layout, positions, args, step_flat, state,
                        0 if save_at is None else len(save_at))


@entry_point
def checkpoint_while(cond, step, state, args=(), *, snapshots=20, memory_limit=None,
                     max_steps=10 ** 6, progress=None, stats=None):
    """``while cond(state, *args): state = step(state, *args)``, differentiated
    with online checkpointing.

    The number of steps is found as the loop runs; snapshots are placed by an
    online schedule (:class:`adsim.checkpoint.Online`) whose total
    recomputation stays close to the offline binomial optimum. ``cond`` is
    recorded like the step and decided in C (a ``cond`` that cannot be
    recorded, one that converts the state to plain numbers or changes its
    own environment, is called in Python on plain values at every step);
    each replay runs as many steps as ``cond`` allows (possibly none), and
    derivatives are those of the steps taken.
    ``max_steps`` (an integer, or None for no bound) stops a loop that does
    not end. Other parameters as for :func:`checkpoint_loop`.
    """
    cond, step, args, size = _checked_while(cond, step, state, args)
    options = while_options(snapshots, memory_limit, max_steps, progress, stats)
    return _while(cond, step, state, args, size, options)


def while_options(snapshots=20, memory_limit=None, max_steps=10 ** 6, progress=None,
                  stats=None):
    """The checked options of :func:`checkpoint_while` (for :func:`grouped_while`)."""
    return loop_options(snapshots, memory_limit, None, None, progress, stats,
                        max_steps=max_steps, while_loop=True)


def grouped_while(group, cond, step, state, args, options):
    """:func:`checkpoint_while` with checked ``options``, the loop one of
    ``group`` (a :class:`~adsim.checkpoint.group.LoopGroup`): it shares the
    recorded step and condition of the group's other loops, which must
    therefore be the same functions of the state and ``args`` (what
    differs between the loops is in ``args``)."""
    cond, step, args, size = _checked_while(cond, step, state, args)
    return _while(cond, step, state, args, size, replace(options, group=group))


def _checked_while(cond, step, state, args):
    check_callable(cond, "cond", "checkpoint_while")
    check_callable(step, "step", "checkpoint_while")
    args = check_args(args)
    (cond, step), args = gathered_inputs([cond, step], args)
    return cond, step, args, check_state(state)


def _one_truth(holds):
    """``cond``'s result, which must be one truth value: NumPy's message for
    an array in ``while`` does not say whose it is."""
    shape = np.shape(holds) if not hasattr(holds, "shape") else tuple(holds.shape)
    if int(np.prod(shape)) != 1:
        raise InvalidArgumentValue(
            f"adsim.checkpoint_while: cond(state, *args) must return one truth value (a bool, "
            f"or an array of one element), got an array of shape {shape}; reduce it, as "
            f"np.all(...) or np.any(...) or a norm against a tolerance does")
    return holds


def _while(cond, step, state, args, size, options):
    group = options.group
    if not _any_active(state, args):
        k = 0
        while _one_truth(called(cond, "cond", state, args)):
            if options.max_steps is not None and k >= options.max_steps:
                raise LoopDidNotStop(f"adsim: checkpoint_while did not stop within "
                                   f"max_steps={options.max_steps}; check that cond becomes "
                                   f"False, or raise max_steps")
            state = called(step, "step", state, args)
            k += 1
        return state
    if size == 0:           # every step keeps the empty state
        return state
    layout, positions, args_of, step_flat = _setup(step, state, args)

    def cond_flat(z, *inputs):
        return _one_truth(called(cond, "cond", layout.unflatten(z), args_of(
            [np.reshape(x, api.shape_of(args[i])) for x, i in zip(inputs, positions)])))
    condition = group.condition if group is not None and group.condition is not None else \
        ConditionTapes(cond_flat, (cond, _constants(args, positions)))
    if group is not None and group.condition is None and group.inherited is not None:
        condition.adopt(group.inherited[1])
    if group is not None:
        group.condition = condition

    def make_op(steps, size):
        return LoopOp(steps, options, size, condition=condition)
    return _record_loop(make_op, layout, positions, args, step_flat, state, group=group)
