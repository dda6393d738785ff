"""Schedules and snapshot counts for each sweep of a checkpointed loop.

With ``memory_limit`` the snapshot count is what fits next to everything
else the sweep holds (:mod:`adsim.checkpoint.footprint`): ``(memory_limit -
fixed) // snapshot``, less the room of the step's other recorded branch
variants when they take at most half of it. A budget that cannot hold the sweep raises
``MemoryBudgetError`` naming the smallest budget that works for that sweep;
snapshots beyond the budget go to ``snapshot_dir`` when it is given.
"""
from ..errors import InvalidArgumentValue
from .budget import budget_error
from .multistage import TwoLevel
from .online import Online
from .options import default_snapshots, resolve_schedule
from .schedules import Revolve, binomial_cost

__all__ = ["check_fits", "check_reversal", "plan_values", "snapshot_counts", "offline_plan",
           "online_plan"]


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


def _held(options, footprint, kind, d, condition):
    """(what, bytes) of what the sweep holds besides the loop's footprint:
    a while loop's condition tapes, the other parts of a loop group."""
    parts = []
    if condition is not None and condition.bytes():
        parts.append(("the loop condition's tapes", condition.bytes()))
    if options.group is not None:
        parts.append(("the rest of the integration (its other intervals and outputs, "
                      "recorded in the enclosing tape)", options.group.outside(kind, d, footprint)))
    return parts


def _sizes(options, footprint, steps, kind, d, condition=None):
    """(step tape bytes, fixed bytes, bytes per snapshot, parts held besides);
    the fixed part includes the step tape and the parts held besides."""
    tape = steps.bytes()
    held = _held(options, footprint, kind, d, condition)
    return (tape.during(kind, d), footprint.fixed(kind, d, tape) + sum(n for _, n in held),
            footprint.snapshot(kind, d), held)


def _largest(options, footprint, steps, kind, d, condition=None):
    """``_sizes`` of the loop, or of the loop of its group that needs most
    (a group's budget must serve each of its loops: its error states that)."""
    sizes = _sizes(options, footprint, steps, kind, d, condition)
    if options.group is not None:
        for other in options.group.footprints():
            if other is not footprint:
                found = _sizes(options, other, steps, kind, d, condition)
                if found[1] > sizes[1]:
                    sizes = found
    return sizes


def _error(options, kind, d, sizes, snapshots, purpose=None):
    """The budget error of a sweep whose loop (the one of its group that
    needs most) has ``sizes``, with ``snapshots`` in memory at least."""
    tape_bytes, fixed, snapshot, held = sizes
    parts = [("the step tape", tape_bytes)] + held
    parts.append(("copies of the state and work arrays",
                  fixed - tape_bytes - sum(n for _, n in held)))
    if snapshots:
        parts.append((f"{snapshots} snapshot{'s' if snapshots > 1 else ''}",
                      snapshots * snapshot))
    disk_helps = snapshots > 0 and options.snapshot_dir is None and options.schedule is None \
        and not options.while_loop     # (while loops keep no snapshots on disk)
    return budget_error(options.memory_limit, purpose or _purpose(kind, d), parts,
                        fixed + snapshots * snapshot, disk_helps)


def _variants_cap(options, footprint, steps, condition):
    """Bytes the step's variants may hold between sweeps (their tapes:
    ``StepTapeBytes.idle``; a sweep's work buffer and stack are freed when
    it ends): a sweep that follows (a Hessian-vector product after a
    gradient, say) makes its copies and derivative rows before its plan
    drops variants, so variants kept by one sweep must leave the fixed part
    of a second-order sweep with one direction, the largest of the usual
    ones, but for the step tape it replays (and for the recording it might
    make, when the budget is too small for it: it raises first)."""
    tape_bytes, fixed, snapshot = _sizes(options, footprint, steps, "second_order", 1,
                                         condition)[:3]
    cap = options.memory_limit - fixed + tape_bytes
    if fixed + (0 if options.snapshot_dir is not None else snapshot) > options.memory_limit:
        # no Hessian-vector product runs within the budget: one raises
        # before it records or replays a step, so room for a recording is
        # not needed next to the variants
        cap += steps.bytes().recording()
    return cap


def _bound_variants(options, steps, kind, d, left, condition=None, cap=None):
    """Let the step's branch variants use the bytes the plan leaves (a while
    loop's condition keeps two variants at most: the bytes planned for it in
    the fixed part, which ``left`` excludes), their tapes no more than
    ``cap`` (:func:`_variants_cap`)."""
    if condition is not None:
        condition.keep_two(options.memory_limit is not None)
    if options.memory_limit is None:
        return steps.keep_within(None, kind, d)
    steps.keep_within(max(left, 0), kind, d, None if cap is None else max(cap, 0))


def check_fits(options, footprint, steps, d, n_steps, condition=None):
    """For a forward sweep with ``d`` tangents (a jvp), which keeps no
    snapshots: raise if the budget cannot hold it. The error states the
    budget that also serves a Hessian-vector product (the larger), whose
    forward half this sweep is, and names the jvp's own minimum too."""
    if options.memory_limit is None:
        return _bound_variants(options, steps, "tangent", d, None, condition)
    sizes = _sizes(options, footprint, steps, "tangent", d, condition)
    tape_bytes, fixed = sizes[:2]
    if fixed > options.memory_limit:
        fixed = _largest(options, footprint, steps, "tangent", d, condition)[1]
        so_sizes = _largest(options, footprint, steps, "second_order", d, condition)
        purpose = (f"{_purpose('tangent', d)} (a jvp alone needs {fixed} bytes) or "
                   f"{_purpose('second_order', d)}")
        if so_sizes[1] < fixed:
            so_sizes = (so_sizes[0], fixed) + so_sizes[2:]
        raise _error(options, "second_order", d, so_sizes, _fewest_snapshots(options, n_steps),
                     purpose)
    _bound_variants(options, steps, "tangent", d, options.memory_limit - fixed + tape_bytes,
                    condition, _variants_cap(options, footprint, steps, condition))


def plan_values(options, footprint, steps, n_steps, condition=None, raising=True):
    """For a plain forward pass (the loop's value): raise if the budget
    cannot hold it (``raising``), and let the step's variants use what the
    pass leaves. The pass that runs while the enclosing function is
    recorded does not raise: the sweep of the call that follows (a reverse
    sweep, a jvp) needs more and raises with its own, larger minimum, or
    runs within the budget."""
    if options.memory_limit is None:
        return _bound_variants(options, steps, "values", 0, None, condition)
    sizes = _sizes(options, footprint, steps, "values", 0, condition)
    tape_bytes, fixed = sizes[:2]
    if raising and fixed > options.memory_limit:
        raise _error(options, "values", 0,
                     _largest(options, footprint, steps, "values", 0, condition), 0)
    _bound_variants(options, steps, "values", 0, options.memory_limit - fixed + tape_bytes,
                    condition, _variants_cap(options, footprint, steps, condition))


def check_reversal(options, footprint, steps, kind, d, n_steps, condition=None):
    """Raise the error of a reverse sweep of ``kind`` that the budget cannot
    hold, before the plain forward pass that precedes it in the same call
    runs (so that it never runs beyond the budget of a sweep that fails)."""
    if options.memory_limit is None:
        return
    sizes = _sizes(options, footprint, steps, kind, d, condition)
    fixed, snapshot = sizes[1:3]
    memory = _fewest_snapshots(options, n_steps)
    if fixed + memory * snapshot > options.memory_limit:
        purpose = None if options.schedule is None else \
            f"{_purpose(kind, d)} with schedule={options.schedule!r}"
        raise _error(options, kind, d, _largest(options, footprint, steps, kind, d, condition),
                     memory, purpose)


def _fewest_snapshots(options, n_steps):
    """Snapshots in memory a reverse sweep needs at least: those of a given
    schedule, else one (none when they may go to snapshot_dir)."""
    if options.schedule is not None and n_steps is not None:
        sched = resolve_schedule(options.schedule, n_steps)
        return sched.memory_snapshots if isinstance(sched, TwoLevel) else \
            min(sched.snapshots, n_steps)
    return 0 if options.snapshot_dir is not None else 1


def snapshot_counts(options, footprint, steps, kind, d, n_steps, condition=None,
                    expected=None):
    """(memory snapshots, disk snapshots) for a sweep; ``n_steps`` is None
    for a while loop, whose condition tapes are ``condition`` and whose last
    pass took ``expected`` steps (None: not known)."""
    wanted = options.snapshots
    if options.memory_limit is None:
        _bound_variants(options, steps, kind, d, None, condition)
        return (wanted if wanted is not None else default_snapshots(n_steps)), 0
    limit = options.memory_limit
    sizes = _sizes(options, footprint, steps, kind, d, condition)
    tape_bytes, fixed, snapshot = sizes[:3]
    on_disk = options.snapshot_dir is not None
    if limit < fixed + (0 if on_disk else snapshot):
        raise _error(options, kind, d, _largest(options, footprint, steps, kind, d, condition),
                     0 if on_disk else 1)
    room = limit - fixed
    cap = _variants_cap(options, footprint, steps, condition) if kind != "second_order" or \
        d != 1 else limit - fixed + tape_bytes
    others = _variants_room(steps, cap, room, snapshot,
                            n_steps if n_steps is not None else expected)
    fit = max((room - others) // snapshot, min(room // snapshot, 1))
    if n_steps is not None:
        fit = min(fit, n_steps)
    if wanted is None:
        wanted = max(fit, default_snapshots(n_steps)) if on_disk else fit
    if n_steps is not None:
        wanted = min(wanted, n_steps)
    memory = min(wanted, fit)
    disk = wanted - memory if on_disk else 0
    _bound_variants(options, steps, kind, d, limit - fixed + tape_bytes - memory * snapshot,
                    condition, cap)
    return memory, disk


# A recording of a step variant (Python: the step's code, the tape built and
# measured) costs about this many plain steps replayed in C: 60 for an RK45
# step of 1000 points (6 ms against 0.1 ms), more for smaller steps; a
# tangent or second-order sweep's steps cost more than plain ones, so the
# estimate is halved
RECORDING_STEPS = 30


def _variants_room(steps, cap, room, snapshot, n_steps):
    """Bytes of ``room`` (what the budget leaves past the fixed part, which
    holds one variant) for the step's other branch variants.

    Wanted: every branch the step has taken, at its size (its tape: the
    variants of a sweep share its work buffer and stack), no more than
    ``cap`` of tapes. They come before snapshots beyond the fewest with
    repetition number 3 (``default_snapshots``); below that floor they take
    the room too when the plain steps the fewer snapshots cost (Griewank's
    count, ``binomial_cost``) are fewer than the recordings they save: a
    branch not held is recorded again, in Python, each time it comes back
    (``RECORDING_STEPS`` plain steps' worth each), as often as the last
    sweep saw the branch change (``StepTapes.change_rate``). A while loop
    whose length is not known yet leaves its variants half of the room."""
    wanted = 0
    for sizes in (steps.branch_sizes(), steps.sizes()):
        tapes = 0
        for idle in sorted([size.idle() for size in sizes]):
            if tapes + idle > cap:
                break
            tapes += idle
        wanted = max(wanted, tapes)
    wanted = max(wanted - steps.bytes().idle(), 0)
    if n_steps is None:
        return max(min(wanted, room - (room // 2) // snapshot * snapshot), 0)
    floor = min(default_snapshots(n_steps), room // snapshot)
    others = max(min(wanted, room - floor * snapshot), 0)
    every = min((room - wanted) // snapshot, n_steps)
    if others == wanted or every < 1:
        return others
    fewer = min((room - others) // snapshot, n_steps)
    replays = binomial_cost(n_steps, every) - binomial_cost(n_steps, fewer)
    changes = steps.change_rate * (n_steps + binomial_cost(n_steps, fewer))
    return wanted if replays < changes * RECORDING_STEPS else others


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
        sizes = _sizes(options, footprint, steps, kind, d)
        tape_bytes, fixed, snapshot = sizes[:3]
        if fixed + memory * snapshot > options.memory_limit:
            raise _error(options, kind, d, sizes, memory,
                         f"{_purpose(kind, d)} with schedule={sched!r} (or leave schedule out "
                         f"and let memory_limit choose the snapshots)")
        _bound_variants(options, steps, kind, d,
                        options.memory_limit - fixed + tape_bytes - memory * snapshot,
                        cap=_variants_cap(options, footprint, steps, None))
    else:
        _bound_variants(options, steps, kind, d, None)
    if two_level:
        if sched.disk_snapshots and options.snapshot_dir is None:
            raise InvalidArgumentValue(
                f"adsim: schedule={sched!r} keeps {sched.disk_snapshots} "
                f"snapshots on disk; give snapshot_dir= (a directory for their files; it is "
                f"None), or a schedule without disk snapshots")
        return sched, sched.snapshots, sched.memory_snapshots
    return sched, sched.snapshots, sched.snapshots


def online_plan(options, footprint, steps, kind, d, condition, expected=None):
    """(schedule, slots) for a while loop's forward pass and reversal; its
    last pass took ``expected`` steps (None: not known)."""
    memory, _ = snapshot_counts(options, footprint, steps, kind, d, None, condition, expected)
    return Online(memory), memory
