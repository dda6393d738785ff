"""Schedules and snapshot counts for each sweep of a checkpointed loop.

With ``memory_limit`` the snapshot count is what fits next to everything
else the sweep holds (:mod:`adsim.checkpoint.footprint`): ``(memory_limit -
fixed) // snapshot``, less the room of the step's other recorded branch
variants when they take at most half of it. A budget that cannot hold the sweep raises
``MemoryBudgetError`` naming the smallest budget that works for that sweep;
snapshots beyond the budget go to ``snapshot_dir`` when it is given.
"""
from .budget import budget_error
from .multistage import TwoLevel
from .online import Online
from .options import default_snapshots, resolve_schedule
from .schedules import Revolve

__all__ = ["check_fits", "snapshot_counts", "offline_plan", "online_plan"]


def _purpose(kind, directions):
    plural = "" if directions == 1 else "s"
    return {
        "values": "the value of this checkpointed loop",
        "adjoint": f"a reverse sweep (gradient, vjp) through this checkpointed loop with "
                   f"{directions} adjoint direction{plural}",
        "tangent": f"a forward sweep (jvp) through this checkpointed loop with {directions} "
                   f"tangent direction{plural}",
        "second_order": f"a Hessian-vector product through this checkpointed loop with "
                        f"{directions} direction{plural}",
    }[kind]


def _sizes(footprint, steps, kind, d, condition=None):
    """(step tape bytes, fixed bytes, bytes per snapshot); the fixed part
    includes the step tape and a while loop's condition tapes."""
    tape = steps.bytes()
    held = condition.bytes() if condition is not None else 0
    return (tape.during(kind, d), footprint.fixed(kind, d, tape) + held,
            footprint.snapshot(kind, d))


def _error(options, kind, d, tape_bytes, fixed, snapshot, snapshots, purpose=None,
           condition=None):
    held = condition.bytes() if condition is not None else 0
    parts = [("the step tape", tape_bytes)]
    if held:
        parts.append(("the loop condition's tapes", held))
    parts.append(("copies of the state and work arrays", fixed - tape_bytes - held))
    if snapshots:
        parts.append((f"{snapshots} snapshot{'s' if snapshots > 1 else ''}",
                      snapshots * snapshot))
    disk_helps = snapshots > 0 and options.snapshot_dir is None and options.schedule is None
    return budget_error(options.memory_limit, purpose or _purpose(kind, d), parts,
                        fixed + snapshots * snapshot, disk_helps)


def _bound_variants(options, steps, kind, d, left, condition=None):
    """Let the step's branch variants use the bytes the plan leaves (a while
    loop's condition keeps two variants at most: the bytes planned for it in
    the fixed part, which ``left`` excludes)."""
    if condition is not None:
        condition.keep_two(options.memory_limit is not None)
    steps.keep_within(None if options.memory_limit is None else left, kind, d)


def check_fits(options, footprint, steps, d, n_steps, condition=None):
    """For a forward sweep with ``d`` tangents (a jvp), which keeps no
    snapshots: raise if the budget cannot hold it. The error states the
    budget that also serves a Hessian-vector product (the larger), whose
    forward half this sweep is, and names the jvp's own minimum too."""
    if options.memory_limit is None:
        return _bound_variants(options, steps, "tangent", d, None, condition)
    tape_bytes, fixed, snapshot = _sizes(footprint, steps, "tangent", d, condition)
    if fixed > options.memory_limit:
        so_tape, so_fixed, so_snapshot = _sizes(footprint, steps, "second_order", d, condition)
        purpose = (f"{_purpose('tangent', d)} (a jvp alone needs {fixed} bytes) or "
                   f"{_purpose('second_order', d)}")
        raise _error(options, "second_order", d, so_tape, max(so_fixed, fixed), so_snapshot,
                     _fewest_snapshots(options, n_steps), purpose, condition)
    _bound_variants(options, steps, "tangent", d, options.memory_limit - fixed + tape_bytes,
                    condition)


def _fewest_snapshots(options, n_steps):
    """Snapshots in memory a reverse sweep needs at least: those of a given
    schedule, else one (none when they may go to snapshot_dir)."""
    if options.schedule is not None and n_steps is not None:
        sched = resolve_schedule(options.schedule, n_steps)
        return sched.memory_snapshots if isinstance(sched, TwoLevel) else \
            min(sched.snapshots, n_steps)
    return 0 if options.snapshot_dir is not None else 1


def snapshot_counts(options, footprint, steps, kind, d, n_steps, condition=None):
    """(memory snapshots, disk snapshots) for a sweep; ``n_steps`` is None
    for a while loop, whose condition tapes are ``condition``."""
    wanted = options.snapshots
    if options.memory_limit is None:
        _bound_variants(options, steps, kind, d, None, condition)
        return (wanted if wanted is not None else default_snapshots(n_steps)), 0
    limit = options.memory_limit
    tape_bytes, fixed, snapshot = _sizes(footprint, steps, kind, d, condition)
    on_disk = options.snapshot_dir is not None
    if limit < fixed + (0 if on_disk else snapshot):
        raise _error(options, kind, d, tape_bytes, fixed, snapshot, 0 if on_disk else 1,
                     condition=condition)
    room = limit - fixed
    # the step variants recorded so far keep their room when they take at
    # most half of it: a step whose branch alternates (an adaptive step
    # accepted, then rejected) is then not recorded again each time it
    # changes (with less room they would be dropped in turn all the same);
    # one snapshot whenever one fits
    others = max(steps.variants_bytes(kind, d) - tape_bytes, 0)
    fit = max((room - (others if 2 * others <= room else 0)) // snapshot,
              min(room // snapshot, 1))
    if n_steps is not None:
        fit = min(fit, n_steps)
    if wanted is None:
        wanted = max(fit, default_snapshots(n_steps)) if on_disk else fit
    if n_steps is not None:
        wanted = min(wanted, n_steps)
    memory = min(wanted, fit)
    disk = wanted - memory if on_disk else 0
    _bound_variants(options, steps, kind, d, limit - fixed + tape_bytes - memory * snapshot,
                    condition)
    return memory, disk


def offline_plan(options, footprint, steps, kind, d, n_steps):
    """(schedule, slots, memory slots) for reversing ``n_steps`` steps:
    slots ``memory slots ..`` are kept on disk (``options.snapshot_dir``)."""
    if options.schedule is not None:
        return _given_schedule(options, footprint, steps, kind, d, n_steps)
    memory, disk = snapshot_counts(options, footprint, steps, kind, d, n_steps)
    if disk:
        return TwoLevel(n_steps, memory, disk), memory + disk, memory
    return Revolve(n_steps, memory), memory, memory


def _given_schedule(options, footprint, steps, kind, d, n_steps):
    sched = resolve_schedule(options.schedule, n_steps)
    two_level = isinstance(sched, TwoLevel)
    memory = sched.memory_snapshots if two_level else min(sched.snapshots, n_steps)
    if options.memory_limit is not None:
        tape_bytes, fixed, snapshot = _sizes(footprint, steps, kind, d)
        if fixed + memory * snapshot > options.memory_limit:
            raise _error(options, kind, d, tape_bytes, fixed, snapshot, memory,
                         f"{_purpose(kind, d)} with schedule={sched!r} (or leave schedule out "
                         f"and let memory_limit choose the snapshots)")
        _bound_variants(options, steps, kind, d,
                        options.memory_limit - fixed + tape_bytes - memory * snapshot)
    else:
        _bound_variants(options, steps, kind, d, None)
    if two_level:
        if sched.disk_snapshots and options.snapshot_dir is None:
            raise ValueError(f"adsim: schedule={sched!r} keeps {sched.disk_snapshots} snapshots "
                             f"on disk; give snapshot_dir= for their files")
        return sched, sched.snapshots, sched.memory_snapshots
    return sched, sched.snapshots, sched.snapshots


def online_plan(options, footprint, steps, kind, d, condition):
    """(schedule, slots) for a while loop's forward pass and reversal."""
    memory, _ = snapshot_counts(options, footprint, steps, kind, d, None, condition)
    return Online(memory), memory
