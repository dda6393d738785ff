"""Checkpointed loops in tape files (the callback protocol of adsim/tapefile.py).

A loop op saves what its sweeps need and none of the user's code: the
step's recorded tapes (its branch variants, used last first, with the byte
sizes measured when each was recorded), the number of steps, the options
(snapshots, memory_limit, snapshot_dir, progress=True) and the schedule
(``Revolve``, ``TwoLevel`` or ``Online``, by their parameters).

A ``checkpoint_while`` loop also saves its condition's recorded variants,
each with its outcome, and ``max_steps``.

A loaded loop replays its recorded variants. It cannot record the step (or
the condition) again, as they are code, so at a state where none of its
variants holds a replay raises :class:`adsim.BranchChanged`: record the tape
again where the step function lives. Refused when saving: a
``checkpoint_while`` whose condition is evaluated in Python (it could not be
recorded) and ``schedule=`` callables or schedule classes of your own. A ``progress`` callable and the ``stats`` dict belong to the recording
process: a loaded loop has no progress callable and fills a new dict.
"""
from ..errors import BranchChanged, TapeCopyError
from .._filefields import count_field, expect_keys, no_variant_holds, size_of
from .footprint import Footprint, StepTapeBytes
from .multistage import TwoLevel
from .online import Online
from .options import check_save_at, loop_options, resolve_schedule
from .schedules import Revolve
from .condition import ConditionTapes
from .steptape import StepTapes

_FIELDS = ("n_steps", "snapshots", "memory_limit", "snapshot_dir", "progress", "schedule",
           "footprint", "variants", "recordings", "dropped", "save_at", "condition")
_SCHEDULES = {"Revolve": (Revolve, ("n_steps", "snapshots")),
              "TwoLevel": (TwoLevel, ("n_steps", "memory_snapshots", "disk_snapshots")),
              "Online": (Online, ("snapshots",))}


class LoopFileState:
    """The tape file protocol of a checkpointed loop op (mixed into LoopOp)."""

    file_kind = "adsim.checkpoint_loop"

    def file_state(self):
        return loop_state(self)

    @classmethod
    def from_file_state(cls, state, tapes):
        return loop_from_state(cls, state, tapes)

    def operand_sizes(self):
        step = self.steps.tape
        saved = 0 if self.save_at is None else len(self.save_at)
        return [size_of(s) for s in step.input_shapes], size_of(step.output_shape) * (1 + saved)


def loop_state(op):
    """(state, step tapes) of a loop op; TapeCopyError for what is code."""
    condition, condition_tapes = _condition_state(op)
    o = op.options
    return {
        "n_steps": op.n_steps,
        "snapshots": o.snapshots,
        "memory_limit": o.memory_limit,
        "snapshot_dir": o.snapshot_dir,
        "progress": o.progress if o.progress is True else None,
        "schedule": _schedule_state(o.schedule),
        "footprint": None if op.footprint is None else [
            op.footprint.state, op.footprint.inputs, op.footprint.outer,
            op.footprint.outer_constants],
        "variants": [[b.static, b.values, b.stack] for b in op.steps.saved_sizes()],
        "recordings": op.steps.recordings,
        "dropped": op.steps.dropped,
        "save_at": None if op.save_at is None else [int(k) for k in op.save_at],
        "condition": condition,
    }, op.steps.saved_tapes() + condition_tapes


def _condition_state(op):
    """(saved facts, tapes) of a checkpoint_while condition, or (None, [])."""
    cond = op.condition
    if cond is None:
        return None, []
    if cond.python_only:
        raise TapeCopyError("adsim: the tape holds a checkpoint_while loop whose condition is "
                            "evaluated in Python (it could not be recorded: it converts the "
                            "state to plain numbers or changes its environment), so it cannot "
                            "be saved. Write the condition with comparisons of the state, or "
                            "record the tape where it replays")
    outcomes, sizes = cond.saved_facts()
    return {"outcomes": outcomes, "sizes": sizes,
            "max_steps": op.options.max_steps}, list(cond.variants)


def _schedule_state(schedule):
    if schedule is None:
        return None
    for name, (cls, params) in _SCHEDULES.items():
        if type(schedule) is cls:
            return dict({p: getattr(schedule, p) for p in params}, kind=name)
    raise TapeCopyError(f"adsim: the tape holds a checkpointed loop with schedule="
                        f"{schedule!r}, which cannot be saved (a callable or a schedule class of "
                        f"your own is code); pass adsim.Revolve, adsim.TwoLevel or adsim.Online")


def loop_from_state(cls, state, tapes):
    """A loop op from its saved state and step tapes, every field checked
    as checkpoint_loop checks its arguments."""
    expect_keys(state, _FIELDS)
    condition = state["condition"]
    n_steps = None if condition is not None else count_field(state, "n_steps", 1)
    if state["progress"] not in (None, True):
        raise ValueError(f"progress is {state['progress']!r}")
    schedule = _schedule_from(state["schedule"])
    snapshot_dir = state["snapshot_dir"]
    if snapshot_dir is not None and not isinstance(snapshot_dir, str):
        raise ValueError(f"snapshot_dir is {snapshot_dir!r}")
    n_step_tapes = len(tapes) if condition is None else _condition_split(condition, tapes)
    step_tapes, condition_tapes = tapes[:n_step_tapes], tapes[n_step_tapes:]
    if condition is None:
        options = loop_options(count_field(state, "snapshots", 1, optional=True),
                               count_field(state, "memory_limit", 1, optional=True),
                               snapshot_dir, schedule, state["progress"], None)
    else:
        options = loop_options(count_field(state, "snapshots", 1, optional=True),
                               count_field(state, "memory_limit", 1, optional=True),
                               snapshot_dir, schedule, state["progress"], None,
                               max_steps=count_field(condition, "max_steps", 1, optional=True),
                               while_loop=True)
    if schedule is not None and n_steps is not None:
        resolve_schedule(schedule, n_steps)
    sizes = _variant_sizes(state["variants"], step_tapes)
    dropped = count_field(state, "dropped")
    steps = StepTapes.restored(step_tapes, sizes,
                               count_field(state, "recordings", len(step_tapes)), dropped,
                               _cannot_record(len(step_tapes), dropped))
    if condition is not None:
        cond = ConditionTapes.restored(condition_tapes, condition["outcomes"],
                                       condition["sizes"], _cannot_record(len(condition_tapes)))
        if state["save_at"] is not None:
            raise ValueError("a checkpoint_while loop with save_at")
        op = cls(steps, options, size_of(step_tapes[0].output_shape), condition=cond)
        op.footprint = _footprint(state["footprint"])
        return op
    save_at = state["save_at"]
    if save_at is not None:
        save_at = check_save_at(save_at, n_steps)
    op = cls(steps, options, size_of(tapes[0].output_shape), n_steps=n_steps, save_at=save_at)
    op.footprint = _footprint(state["footprint"])
    return op


def _condition_split(condition, tapes):
    """How many of ``tapes`` are step tapes: the last ones are the
    condition's variants, one per saved outcome, each mapping the state and
    the loop inputs to one value."""
    expect_keys(condition, ("outcomes", "sizes", "max_steps"))
    outcomes, sizes = condition["outcomes"], condition["sizes"]
    if not (isinstance(outcomes, list) and isinstance(sizes, list) and
            len(outcomes) == len(sizes) and 0 < len(outcomes) < len(tapes) and
            all(type(o) is bool for o in outcomes) and
            all(type(n) is int and n >= 0 for n in sizes)):
        raise ValueError(f"condition outcomes {outcomes!r} and sizes {sizes!r} for "
                         f"{len(tapes)} tapes")
    n_steps = len(tapes) - len(outcomes)
    # a condition is recorded on the loop inputs as flat arrays (scalars of
    # shape (1,)): the loop hands both the same buffers, so sizes must agree
    step_sizes = [size_of(s) for s in tapes[0].input_shapes]
    for tape in tapes[n_steps:]:
        if [size_of(s) for s in tape.input_shapes] != step_sizes or \
                size_of(tape.output_shape) != 1:
            raise ValueError("a condition tape differs from the step in the sizes of its "
                             "inputs, or has more than one output")
    return n_steps


def _schedule_from(spec):
    if spec is None:
        return None
    if not isinstance(spec, dict) or spec.get("kind") not in _SCHEDULES:
        raise ValueError(f"schedule is {spec!r}")
    cls, params = _SCHEDULES[spec["kind"]]
    expect_keys(spec, ("kind",) + params)
    return cls(*[count_field(spec, p) for p in params])


def _variant_sizes(listed, tapes):
    """StepTapeBytes per step tape; the tapes map a state of one size to
    the next with the same inputs."""
    if not tapes or not isinstance(listed, list) or len(listed) != len(tapes):
        raise ValueError(f"{len(tapes)} step tapes with sizes {listed!r}")
    first = tapes[0]
    if not first.input_shapes or size_of(first.output_shape) != size_of(first.input_shapes[0]):
        raise ValueError(f"a step tape maps inputs {first.input_shapes} to "
                         f"{first.output_shape}, not a state to a state of its size")
    sizes = []
    for tape, entry in zip(tapes, listed):
        if tape.input_shapes != first.input_shapes or \
                tuple(tape.output_shape) != tuple(first.output_shape):
            raise ValueError("the step tapes differ in their inputs or output")
        if not (isinstance(entry, list) and len(entry) == 3 and
                all(type(v) is int and v >= 0 for v in entry)):
            raise ValueError(f"step tape sizes {entry!r}")
        sizes.append(StepTapeBytes(*entry))
    return sizes


def _footprint(listed):
    if listed is None:
        return None
    if not (isinstance(listed, list) and len(listed) == 4 and
            all(type(v) is int and v >= 0 for v in listed)):
        raise ValueError(f"footprint {listed!r}")
    return Footprint(*listed)


def _cannot_record(n_variants, dropped=0):
    """The step of a loaded loop where none of its variants holds: it has
    no code, so it raises BranchChanged. A loop whose recording process
    dropped variants outright (past the variants it keeps, or under a
    memory_limit too small to keep their programs parked) saved without
    them, and the state may be one they served: the error says so."""
    def step_flat(*args):
        err = no_variant_holds("a checkpointed loop", n_variants, "step", "the step function")
        if dropped:
            err = BranchChanged(
                f"{err.args[0]}. The file may lack the variant this state needs: the process "
                f"that recorded the loop dropped step variants {dropped} times (more than it "
                f"keeps, or under a memory_limit too small to keep their programs) and saved "
                f"the {n_variants} it held. To ship such a loop, record it with a memory_limit "
                f"that holds the step's branch variants (or none), and save that tape")
        raise err
    return step_flat
