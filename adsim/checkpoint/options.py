"""Checks of the arguments of ``checkpoint_loop`` and ``checkpoint_while``.

Every argument is checked when the loop is called, inside a recording or
not, so that a mistake raises the same clear error wherever the loop runs.
"""
import errno
from math import comb
import os
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .._tapecache.purity import output_channel
from .._active import Active
from .._validate import count as _valid_count, function, given
from ..errors import InvalidArgument, InvalidArgumentValue, SnapshotDirNotADirectoryError
from .budget import parse_bytes
from .multistage import TwoLevel
from .online import Online
from .schedules import Revolve

__all__ = ["LoopOptions", "loop_options", "check_n_steps", "check_args", "check_callable",
           "check_state", "resolve_schedule"]

_SCHEDULES = ("adsim.Revolve(n_steps, snapshots), adsim.TwoLevel(n_steps, memory_snapshots, "
              "disk_snapshots) or adsim.Online(snapshots)")


@dataclass(frozen=True)
class LoopOptions:
    """The checked options of one checkpointed loop."""

    snapshots: Optional[int]
    memory_limit: Optional[int]
    snapshot_dir: Optional[str]
    schedule: Any
    progress: Any
    stats: MutableMapping
    max_steps: Optional[int] = None
    while_loop: bool = False        # checkpoint_while (no snapshot_dir)
    group: Any = None               # the LoopGroup of the loop (adsim/checkpoint/group.py)


def loop_options(snapshots, memory_limit, snapshot_dir, schedule, progress, stats,
                 max_steps=None, while_loop=False):
    """Check the keyword options; returns :class:`LoopOptions`."""
    if snapshots is not None:
        snapshots = _count(snapshots, "snapshots", 1)
    if memory_limit is not None:
        memory_limit = _memory_limit(memory_limit)
    if snapshot_dir is not None:
        snapshot_dir = _snapshot_dir(snapshot_dir)
    schedule = _schedule(schedule)
    if snapshot_dir is not None and memory_limit is None and not isinstance(schedule, TwoLevel) \
            and not callable(schedule):
        raise InvalidArgumentValue("adsim: snapshot_dir holds the snapshots that do not fit in "
                                   "memory_limit; give memory_limit= as well (or "
                                   "schedule=adsim.TwoLevel(...) to choose the disk snapshots "
                                   "yourself)")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise InvalidArgument(f"adsim: progress must be True, False, None or a callable "
                              f"(done, total) -> None, got {given(progress)}")
    if stats is None:
        stats = {}
    elif not isinstance(stats, MutableMapping):
        raise InvalidArgument(f"adsim: stats must be a dict to fill with the work counts, got "
                              f"{given(stats)}")
    else:
        output_channel(stats)        # filled by the sweeps: tape caches do not look at it
    if while_loop and max_steps is not None:
        max_steps = _count(max_steps, "max_steps", 0)
    return LoopOptions(snapshots=snapshots, memory_limit=memory_limit, snapshot_dir=snapshot_dir,
                       schedule=schedule, progress=progress, stats=stats, max_steps=max_steps,
                       while_loop=while_loop)


def _count(value, name, minimum):
    return _valid_count(value, name, None, minimum)


def check_n_steps(n_steps):
    """``n_steps`` as an int >= 0 (NumPy's rule for counts: no floats, no
    bools) that the loop's 64-bit step counters hold."""
    n = _valid_count(n_steps, "n_steps", "checkpoint_loop", 0, accepted=(
        ". For a loop whose number of steps is not known in advance, use "
        "adsim.checkpoint_while(cond, step, state, args), which runs while cond(state, *args) "
        "holds" if n_steps is None else ""))
    if n >= 2 ** 63:
        raise InvalidArgumentValue(f"adsim.checkpoint_loop: n_steps must be below 2**63 (the "
                                   f"loop counts steps in 64 bits), got {n}")
    return n


def _memory_limit(value):
    try:
        limit = parse_bytes(value)
    except (TypeError, ValueError) as error:
        kind = InvalidArgument if isinstance(error, TypeError) else InvalidArgumentValue
        raise kind(f"adsim: memory_limit={value!r}: {error}") from None
    if limit == 0:
        raise InvalidArgumentValue("adsim: memory_limit must be a positive number of bytes (for no "
                                   "limit give None)")
    return limit


def _snapshot_dir(value):
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise InvalidArgument(f"adsim: snapshot_dir must be a directory path (str or os.PathLike), "
                              f"got {type(value).__name__}")
    path = os.fspath(value)
    if not isinstance(path, str) or not path:
        raise InvalidArgument(f"adsim: snapshot_dir must be a non-empty text path, got {value!r}")
    existing = os.path.abspath(path)           # the path, or its nearest existing parent
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if os.path.exists(existing) and not os.path.isdir(existing):
        raise SnapshotDirNotADirectoryError(
            errno.ENOTDIR, f"adsim: snapshot_dir={path!r} cannot be a directory: {existing!r} "
            f"is a file. Give a directory (it is created if missing)")
    return path


def _schedule(schedule):
    if schedule is None or isinstance(schedule, (Revolve, TwoLevel, Online)):
        return schedule
    if any(schedule is cls for cls in (Revolve, TwoLevel, Online)):
        raise InvalidArgument(f"adsim: schedule={schedule.__name__} is a class; pass a schedule "
                              f"object such as {_SCHEDULES}")
    if callable(schedule) or _is_schedule(schedule):
        return schedule
    raise InvalidArgument(
        f"adsim: schedule={schedule!r} is not a schedule; pass {_SCHEDULES}, or a "
        f"callable n_steps -> schedule. To set only the number of snapshots, give "
        f"snapshots=")


def _is_schedule(obj):
    """A schedule object of the user's own: steps, slots and actions."""
    return (not isinstance(obj, (str, bytes)) and hasattr(obj, "n_steps")
            and hasattr(obj, "snapshots") and hasattr(obj, "__iter__"))


def resolve_schedule(schedule, n_steps):
    """The schedule object for a loop of ``n_steps`` (calling a callable)."""
    sched = schedule
    if callable(schedule) and not _is_schedule(schedule):
        sched = schedule(n_steps)
        if sched is None or not (isinstance(sched, (Revolve, TwoLevel, Online))
                                 or _is_schedule(sched)):
            raise InvalidArgument(f"adsim: the schedule callable returned {sched!r} for n_steps="
                                  f"{n_steps}; it must return {_SCHEDULES}")
    if not isinstance(sched, Online) and sched.n_steps != n_steps:
        raise InvalidArgumentValue(
            f"adsim: the schedule is for {sched.n_steps} steps, the loop has "
            f"{n_steps}")
    return sched


_USAGE = {"step": "step(state, *args) returning the next state",
          "cond": "cond(state, *args) returning whether to take another step"}


def check_callable(f, name, entry):
    function(f, entry, name, _USAGE.get(name, ""))


def check_args(args):
    """``args`` as a tuple; a bare array is refused (iterating it would pass rows)."""
    if not isinstance(args, (tuple, list)):
        raise InvalidArgument(f"adsim: args must be a tuple of further arguments of the step, "
                              f"got {given(args)}; write args=(value,) for one argument")
    return tuple(args)


def check_state(state):
    """Check that ``state`` is an array or a flat tuple/list of arrays of real
    numbers; returns the number of state values."""
    leaves = list(state) if isinstance(state, (tuple, list)) else [state]
    if isinstance(state, (tuple, list)) and not leaves:
        raise InvalidArgumentValue("adsim: the loop state is an empty tuple; give at least one "
                                   "array")
    size = 0
    for i, leaf in enumerate(leaves):
        where = f"state[{i}]" if isinstance(state, (tuple, list)) else "state"
        if isinstance(leaf, Active):
            size += leaf.size
            continue
        if isinstance(leaf, (tuple, list)) and isinstance(state, (tuple, list)):
            raise InvalidArgument(f"adsim: {where} is a {type(leaf).__name__}; a loop state is "
                                  f"an array or a flat tuple of arrays (nest no further)")
        try:
            arr = np.asarray(leaf)
        except ValueError:                  # a ragged sequence
            arr = np.empty(0, dtype=object)
        if arr.dtype.kind == "O":
            raise InvalidArgument(f"adsim: {where} must be an array of real numbers (a loop "
                                  f"state is an array or a flat tuple or list of arrays), got "
                                  f"{given(leaf)}")
        if arr.dtype.kind not in "biuf":
            raise InvalidArgument(f"adsim: {where} has dtype {arr.dtype}; a loop state holds "
                                  f"real numbers (float64 arrays)")
        size += arr.size
    return size


def default_snapshots(n_steps):
    """Snapshots when neither ``snapshots`` nor ``memory_limit`` is given:
    the fewest with repetition number at most 3 (``C(s + 3, 3) >= n_steps``)."""
    if n_steps is None:
        return 64
    s = max(1, int(round((6 * n_steps) ** (1 / 3))) - 3)
    while s > 1 and comb(s + 2, 3) >= n_steps:
        s -= 1
    while comb(s + 3, 3) < n_steps and s < n_steps:
        s += 1
    return max(1, min(s, n_steps))


def check_save_at(save_at, n_steps):
    """``save_at`` as a 1-d int64 array of step counts in 0..n_steps."""
    counts = np.asarray(save_at)
    if counts.ndim != 1 or (counts.size and counts.dtype.kind not in "iu") or \
            counts.dtype == np.bool_:
        raise InvalidArgument(f"adsim: save_at must be a sequence of step counts (integers), got "
                              f"{save_at!r}")
    counts = counts.astype(np.int64)
    if counts.size and (counts.min() < 0 or counts.max() > n_steps):
        raise InvalidArgumentValue(
            f"adsim: save_at holds step counts outside 0..{n_steps} (n_steps): "
            f"{counts[(counts < 0) | (counts > n_steps)][:5].tolist()}")
    return counts
