"""Two-level checkpointing: a few snapshots in memory, more on disk.

The binomial reversal of :class:`~adsim.checkpoint.schedules.Revolve` keeps
the snapshot of nesting depth ``d`` in one slot. Shallow depths are written
and restored rarely (depth 0 holds the initial state: written once), deep
depths very often. :class:`TwoLevel` runs the same optimal schedule with all
``memory + disk`` slots and places on disk the depths that are restored
least often, so the extra slots cut recomputation while disk traffic stays
small.
"""

from ..errors import InvalidArgumentValue
from .schedules import (
    TakeShot,
    _check_count,
    binomial_cost,
    _binomial_reversal,
    _binomial_split,
    repetition_number,
)

__all__ = ["TwoLevel"]

# Depths whose counts are kept per TwoLevel schedule (lists of this length).
_MAX_DEPTHS = 10**7


def _binomial_depth_counts(n_steps, snapshots):
    """Shots and restores per nesting depth in ``Revolve(n_steps, snapshots)``.

    Returns
    -------
    shots, restores : tuple of int
        Length ``min(snapshots, n_steps)`` (the depths a reversal can use);
        entry ``d`` counts the ``TakeShot`` / ``Restore`` actions on the
        slot of depth ``d`` (slot ``d`` in
        :class:`~adsim.checkpoint.schedules.Revolve`).

    Notes
    -----
    Mirrors :func:`~adsim.checkpoint.schedules._binomial_reversal` on the
    pair (steps, slots) of each nested reversal; equal pairs recur very often,
    so the counts are memoized and cost far less than running the schedule.
    """
    n_steps = _check_count(n_steps, "n_steps", 1)
    snapshots = _check_count(snapshots, "snapshots", 1)
    used = min(snapshots, n_steps)      # deeper depths are never used
    shots, restores = _reversal_counts(n_steps, used)
    shots = _padded(shots, used)
    restores = _padded(restores, used)
    if n_steps > 1:
        shots[0] += 1
    return tuple(shots), tuple(restores)


def _reversal_counts(n_steps, slots):
    """Per-depth (shots, restores) of the reversal of ``n_steps`` steps.

    Count lists are as long as the depths used, not padded to ``slots``.
    """
    memo = {}
    pending = [(n_steps, slots)]
    while pending:
        m, c = pending[-1]
        if (m, c) in memo:
            pending.pop()
            continue
        if m == 1 or c == 1:
            memo[m, c] = ([], [m - 1])
        elif c >= m - 1:
            # Repetition 1: a snapshot at every state, each restored once.
            memo[m, c] = ([0] + [1] * (m - 2), [1] * (m - 1))
        else:
            j = _binomial_split(m, c, repetition_number(m, c))
            left, right = (j, c), (m - j, c - 1)
            missing = [part for part in (left, right) if part not in memo]
            if missing:
                pending.extend(missing)
                continue
            memo[m, c] = _combine(memo[left], memo[right], m - j > 1)
        pending.pop()
    return memo[n_steps, slots]


def _combine(left, right, right_shot):
    """Counts of a split: left part at the same depth, right part one deeper."""
    shots = _shifted_sum(left[0], right[0])
    restores = _shifted_sum(left[1], right[1])
    restores[0] += 1
    if right_shot:
        shots[1] += 1
    return shots, restores


def _shifted_sum(same_depth, one_deeper):
    """``same_depth[d] + one_deeper[d - 1]``, at least two entries long."""
    total = _padded(same_depth, max(len(same_depth), len(one_deeper) + 1, 2))
    for depth, count in enumerate(one_deeper, start=1):
        total[depth] += count
    return total


def _padded(counts, length):
    """``counts`` as a new list extended with zeros to ``length``."""
    return list(counts) + [0] * (length - len(counts))


class TwoLevel:
    """Binomial schedule over memory and disk snapshot slots.

    The schedule is that of ``Revolve(n_steps, memory_snapshots +
    disk_snapshots)``, so :attr:`forward_steps` is optimal for the total
    slot count. Slot indices tell the level: ``0 .. memory_snapshots - 1``
    are memory slots, ``memory_snapshots .. snapshots - 1`` are disk slots
    (the layout of :class:`~adsim.checkpoint.storage.TieredStore`). The disk
    slots receive the nesting depths restored least often (ties: fewer
    shots, then the shallower depth); for a long loop these are the
    shallowest depths, whose snapshots live longest.

    Parameters
    ----------
    n_steps : int
        Number of loop steps, ``>= 1``.
    memory_snapshots, disk_snapshots : int
        Slots per level, each ``>= 0``, together ``>= 1``. The slot holding
        the initial state counts.

    Attributes
    ----------
    requires_n_steps : bool
        ``True``: the loop length must be known before the loop runs.

    Notes
    -----
    A driver executes it with a store of the same layout::

        schedule = TwoLevel(n, memory_snapshots=m, disk_snapshots=d)
        with TieredStore(m, d, directory) as store:
            for action in schedule:
                ...  # TakeShot(i): store.put(i, state); Restore(i): store.get(i)

    The schedule itself is not changed to save disk traffic at the price of
    recomputation, which pays only when a disk access costs more than
    several steps (see [1]_ for such trade-offs); the disk holds the
    snapshots needed least, so for long loops its traffic is a small
    fraction (``disk_writes``, ``disk_reads``).

    References
    ----------
    .. [1] P. Stumm and A. Walther, "MultiStage approaches for optimal offline
       checkpointing", SIAM J. Sci. Comput. 31(3), 1946-1967, 2009.
    .. [2] A. Griewank and A. Walther, "Algorithm 799: revolve", ACM TOMS
       26(1), 19-45, 2000.

    Examples
    --------
    >>> schedule = TwoLevel(10_000, memory_snapshots=8, disk_snapshots=2)
    >>> schedule.forward_steps == binomial_cost(10_000, 10)
    True
    >>> schedule.disk_writes, schedule.disk_reads
    (8, 33)
    """

    requires_n_steps = True

    def __init__(self, n_steps, memory_snapshots, disk_snapshots):
        self._n_steps = _check_count(n_steps, "n_steps", 1, "TwoLevel")
        self._memory = _check_count(memory_snapshots, "memory_snapshots", 0, "TwoLevel")
        self._disk = _check_count(disk_snapshots, "disk_snapshots", 0, "TwoLevel")
        if self._memory + self._disk < 1:
            raise InvalidArgumentValue("adsim.TwoLevel: memory_snapshots + disk_snapshots must be "
                                       ">= 1, got 0; keep at least one snapshot")
        total = self._memory + self._disk
        if min(total, self._n_steps) > _MAX_DEPTHS:
            raise InvalidArgumentValue(
                f"adsim.TwoLevel({self._n_steps}, {self._memory}, {self._disk}) would place "
                f"{min(total, self._n_steps)} snapshot depths; at most {_MAX_DEPTHS} are "
                "supported. Use fewer snapshots: beyond a few hundred they barely cut "
                "recomputation (see Revolve(n, s).forward_steps)"
            )
        self._depth_shots, self._depth_restores = _binomial_depth_counts(
            self._n_steps, total
        )
        self._slot_of_depth = self._assign_slots()

    def _assign_slots(self):
        """Slot index of each depth a reversal uses: the depths restored least
        often (ties: fewer shots, then the shallower depth) go to disk.

        Depths from ``min(snapshots, n_steps)`` on are never used; in that
        order they come right after the used depths that are never touched,
        so they take disk slots before any depth in use does.
        """
        used = len(self._depth_restores)
        never = [d for d in range(used)
                 if self._depth_restores[d] == 0 and self._depth_shots[d] == 0]
        touched = sorted(
            (d for d in range(used) if self._depth_restores[d] or self._depth_shots[d]),
            key=lambda d: (self._depth_restores[d], self._depth_shots[d], d),
        )
        unused = self._memory + self._disk - used
        on_disk = set(never[: self._disk])
        on_disk.update(touched[: max(0, self._disk - len(never) - unused)])
        slot_of_depth = [0] * used
        for slot, depth in enumerate(d for d in range(used) if d not in on_disk):
            slot_of_depth[depth] = slot
        for rank, depth in enumerate(sorted(on_disk)):
            slot_of_depth[depth] = self._memory + rank
        return tuple(slot_of_depth)

    @property
    def n_steps(self):
        """Number of loop steps."""
        return self._n_steps

    @property
    def memory_snapshots(self):
        """Number of memory slots (indices ``0 .. memory_snapshots - 1``)."""
        return self._memory

    @property
    def disk_snapshots(self):
        """Number of disk slots (indices ``memory_snapshots ..``)."""
        return self._disk

    @property
    def snapshots(self):
        """Total number of slots."""
        return self._memory + self._disk

    @property
    def repetition_number(self):
        """Most plain evaluations of any step (see ``Revolve``)."""
        return repetition_number(self._n_steps, self.snapshots)

    @property
    def forward_steps(self):
        """Plain step evaluations (sum of all ``Advance`` steps)."""
        return binomial_cost(self._n_steps, self.snapshots)

    def is_disk(self, index):
        """Whether slot ``index`` is a disk slot."""
        return index >= self._memory

    def _level_total(self, counts, disk):
        return sum(
            count
            for depth, count in enumerate(counts)
            if self.is_disk(self._slot_of_depth[depth]) == disk
        )

    @property
    def disk_writes(self):
        """Number of ``TakeShot`` actions on disk slots."""
        return self._level_total(self._depth_shots, True)

    @property
    def disk_reads(self):
        """Number of ``Restore`` actions on disk slots."""
        return self._level_total(self._depth_restores, True)

    @property
    def memory_writes(self):
        """Number of ``TakeShot`` actions on memory slots."""
        return self._level_total(self._depth_shots, False)

    @property
    def memory_reads(self):
        """Number of ``Restore`` actions on memory slots."""
        return self._level_total(self._depth_restores, False)

    def actions(self):
        """Return a fresh iterator over the actions."""
        return iter(self)

    def depth_slots(self):
        """The slot of each nesting depth the reversal uses (depth 0 holds
        the initial state)."""
        return self._slot_of_depth[: min(self.snapshots, self._n_steps)]

    def __iter__(self):
        slots = self.depth_slots()
        if self._n_steps > 1:
            yield TakeShot(slots[0])
        yield from _binomial_reversal(0, self._n_steps, slots, True)

    def __repr__(self):
        return (
            f"TwoLevel(n_steps={self._n_steps}, memory_snapshots={self._memory}, "
            f"disk_snapshots={self._disk})"
        )
