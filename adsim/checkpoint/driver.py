"""The driver of a checkpointed loop's sweeps: plans, snapshots, executor.

Each sweep through a loop gets a :class:`LoopSweep`: the compiled executor
(``LoopRun`` in adsim/_loop_run.pxi) with the loop's step tapes, its
current state, its snapshots and, for reverse sweeps, the schedule's
actions in compiled form (adsim/_schedules.pyx). The driver picks
the schedule and the snapshot count (:mod:`adsim.checkpoint.planning`),
keeps the disk level of two-level schedules (``DiskStore``, called by the
executor for the few disk snapshots), reports progress, and records the
work done in the loop's ``stats``. Nothing here runs per step.
"""

import numpy as np

from .._fuse.policy import expect
from .._loops import KeptForwards, LoopRun, LoopSteps
from .._schedules import ACTION_KINDS, OnlineDecisions, OnlineRun, PythonActions, revolve_actions
from .multistage import TwoLevel
from .online import Online
from .planning import offline_plan, online_plan, plan_values
from .schedules import Advance, FirstTurn, Restore, Revolve, TakeShot, YouTurn
from .heap import release_free_memory
from .progress import ProgressLine
from .storage import DiskStore

__all__ = ["LoopSweep", "reset_stats"]

# Snapshots in memory that a sweep gives back to the system when it ends
# (heap.py: a trim costs about 60 microseconds, worth it from a megabyte on)
_TRIM_FROM = 10**6

# Without memory_limit, the forward sweeps of a while loop's first steps are
# kept (in keeping form) up to this many bytes, so that their turns need no
# second forward sweep (adsim/_loop_kept.pxi)
KEPT_FORWARDS_BYTES = 16 * 2**20

# Replay layouts of the sweeps (adsim/_replay.pxi), by the kinds of footprint.py
LAYOUTS = {"values": 0, "tangent": 1, "adjoint": 2, "second_order": 3}

_PYTHON_ACTIONS = {Advance: (ACTION_KINDS["Advance"], "steps"),
                   TakeShot: (ACTION_KINDS["TakeShot"], "index"),
                   Restore: (ACTION_KINDS["Restore"], "index"),
                   FirstTurn: (ACTION_KINDS["FirstTurn"], None),
                   YouTurn: (ACTION_KINDS["YouTurn"], None)}


def reset_stats(stats, **fixed):
    """Start counting the work of a new sweep in ``stats``: ``forward_steps``
    counts the plain steps of the schedule's advances (Revolve's count),
    ``output_steps`` the plain steps run only to produce the loop's value,
    ``taped_steps`` the steps reversed, ``kept_steps`` those of them whose
    first forward sweep was kept for their turn (adsim/_loop_kept.pxi),
    ``variant_misses`` the tries of a recorded variant of the step that left
    its path (each a sweep of the step up to where it left; a step tried
    first with the variant that took it before misses only when its branch
    changed), ``recordings`` the variants of the step recorded (in Python:
    every variant left its path) since the sweep started."""
    stats.update(dict(forward_steps=0, taped_steps=0, output_steps=0, kept_steps=0,
                      variant_misses=0, recordings=0), **fixed)


def compiled_actions(sched, n_steps):
    """The actions of ``sched`` for a loop of ``n_steps``, in compiled form
    when the schedule is one of adsim's, else converted one by one."""
    if isinstance(sched, Revolve):
        return revolve_actions(n_steps, sched.snapshots)
    if isinstance(sched, TwoLevel):
        return revolve_actions(n_steps, sched.snapshots, sched.depth_slots())
    if isinstance(sched, Online):
        return OnlineRun(sched.snapshots, n_steps)
    return PythonActions(iter(sched), _PYTHON_ACTIONS)


def _progress(progress, total):
    """(report, every) for the executor: the user's callable after every
    turn, or the display of progress.py (which keeps its own pace)."""
    if progress is None or progress is False:
        return None, 1
    if callable(progress):
        return progress, 1
    return ProgressLine(), max(1, total // 1000)


class LoopSweep:
    """One sweep through a loop (see the module docstring).

    Parameters
    ----------
    op : LoopOp
        The loop (adsim/checkpoint/op.py): its step tapes, options, size.
    kind : str
        "values", "tangent", "adjoint" or "second_order" (footprint.KINDS).
    d : int
        Tangent or adjoint directions.
    z, inputs : arrays
        The initial state and the loop inputs (flat).
    zdot, in_dots : arrays, optional
        Their tangents (p, size) for tangent and second-order sweeps.
    """

    def __init__(self, op, kind, d, z, inputs, zdot=None, in_dots=None):
        self.op = op
        self.kind = kind
        self.directions = d
        self.key = [z] + list(inputs)
        self.actions = None
        self.disk = None
        tangents = kind in ("tangent", "second_order")
        if tangents and zdot is None:
            zdot = np.zeros((d, z.size))
        self._z, self._zdot = z, (zdot if tangents else None)
        self._in_dots = list(in_dots) if tangents else None
        self.steps = self.run = self.outputs = None
        self.output = None          # the loop's result, when a forward rule keeps the sweep
        self.base_steps = 0         # while loops: the steps of the forward pass
        self._snapshot_bytes = 0    # of the snapshots in memory
        self.closed = False         # close() ran: snapshots and replays are given back
        self.taken = False          # a reverse rule took it (a LoopGroup may not close it)
        self._recordings = op.steps.recordings      # before the sweep
        if op.budgeted and op.options.group is not None:
            op.options.group.evict()

    def _start(self, n_steps, n_slots=0, memory_slots=0, total=0):
        """The executor, once the plan has chosen the step variants to keep."""
        report, every = _progress(self.op.options.progress, total)
        footprint = self.op.footprint
        self._snapshot_bytes = memory_slots * footprint.snapshot(self.kind, self.directions) \
            if memory_slots and footprint is not None else 0
        if n_steps and self.directions <= 1:          # the step tapes' fused kernels
            for tape in self.op.steps.variants:
                expect(tape, LAYOUTS[self.kind], n_steps)
        self.steps = LoopSteps(self.op.steps, self.key[1:], LAYOUTS[self.kind], self.directions,
                               self.op.size, self._in_dots, hints=self.op.path_hints)
        self.run = LoopRun(self.steps, n_steps, self._z, self._zdot, n_slots=n_slots,
                           memory_slots=memory_slots, disk=self.disk, report=report, every=every)
        self._z = self._zdot = None
        if self.op.save_at is not None:
            self.outputs = self.run.set_outputs(self.op.save_at)

    def matches(self, kind, d, key):
        """Whether this sweep (kept from a forward rule) serves a reverse rule."""
        return not self.closed and kind == self.kind and d == self.directions and \
            len(key) == len(self.key) and all(np.array_equal(a, b) for a, b in zip(key, self.key))

    def close(self):
        """Free the snapshots and remove their files; give the Replays back
        (once; the current state goes with the executor)."""
        if self.closed:
            return
        self.closed = True
        run, steps, disk = self.run, self.steps, self.disk
        self.run = self.steps = self.disk = self._z = self._zdot = None
        try:
            if run is not None:
                run.close()
            elif steps is not None:
                steps.finish()
        finally:
            if disk is not None:
                disk.close()
            if self.op.options.memory_limit is not None and self._snapshot_bytes >= _TRIM_FROM:
                release_free_memory()   # the snapshots' pages, before the next sweep

    # -- counted loops ----------------------------------------------------------

    def forward(self, n_steps, raising=True, plan=True):
        """The state (and tangents) after ``n_steps`` steps, no snapshots. A
        plain pass is planned here when ``plan`` (``raising``: see
        ``plan_values``); a tangent pass was checked by the op's tangent rule."""
        if self.kind == "values" and plan:
            plan_values(self.op.options, self.op.footprint, self.op.steps, n_steps,
                        raising=raising)
        self._start(n_steps)
        try:
            self.run.advance(n_steps)
        finally:
            self._count_variants(n_steps)
        return self.run.state()

    def plan(self, n_steps):
        """Choose the schedule and snapshots of a reversal (stats reset)."""
        options, stats = self.op.options, self.op.stats
        sched, n_slots, memory = offline_plan(options, self.op.footprint, self.op.steps,
                                              self.kind, self.directions, n_steps)
        reset_stats(stats, n_steps=n_steps, snapshots=sched.snapshots, schedule=repr(sched))
        if n_slots > memory:
            self.disk = DiskStore(options.snapshot_dir, n_slots - memory)
        self._start(n_steps, n_slots, memory, n_steps)
        self.actions = compiled_actions(sched, n_steps)

    def until_turn(self):
        """Run the schedule up to its first turn (current state n-1); the
        loop's output (state n, with its tangents) is one step more."""
        self.run.execute(self.actions, True)
        self._count()
        self.op.stats["output_steps"] = 1
        return self.run.after(1)

    def reverse(self, adjoint, adjoint_tangents=None, saved=None, saved_tangents=None):
        """Run the rest of the schedule (all of it if ``until_turn`` did not
        run): the state's adjoints (and their tangents) replace the given
        ones, in place, with those of the saved states (one row each) added
        on the way; returns the inputs' summed adjoints (and tangents)."""
        self.run.set_adjoints(adjoint, adjoint_tangents, saved, saved_tangents)
        try:
            self.run.execute(self.actions)
        finally:
            self._count()
        return self.steps.sums, self.steps.dot_sums

    def _count(self):
        self.op.stats.update(forward_steps=self.run.forward_steps,
                             taped_steps=self.run.taped_steps)
        self._count_variants(self.run.forward_steps + self.run.taped_steps)

    def _count_variants(self, ran):
        """Count the sweep's variant misses and recordings, and how often
        the step's branch changed per step of the ``ran`` steps (the plan
        of the next sweep weighs recordings by it)."""
        misses = self.steps.misses
        self.op.stats.update(variant_misses=misses,
                             recordings=self.op.steps.recordings - self._recordings)
        if ran:
            self.op.steps.change_rate = min(misses / ran, 1.0)

    # -- while loops ----------------------------------------------------------

    def forward_while(self, keep, raising=True, plan=True):
        """Run the while loop forward; with ``keep`` take the online
        schedule's snapshots for a reversal. Returns the final state (and
        tangents). ``raising`` and ``plan`` as for :meth:`forward`."""
        op = self.op
        online = None
        op.condition.new_sweep()
        if not op.condition.variants and not op.condition.python_only:
            # its size is planned for: record it first
            op.condition.add_variant(self._z, self.key[1:])
        if keep:
            sched, memory = online_plan(op.options, op.footprint, op.steps, self.kind,
                                        self.directions, op.condition, op.last_n_steps)
            reset_stats(op.stats, snapshots=sched.snapshots, schedule=repr(sched))
            online = OnlineDecisions(memory)
            self._start(0, memory, memory)
        else:
            if self.kind == "values" and plan:
                plan_values(op.options, op.footprint, op.steps, None, op.condition, raising)
            reset_stats(op.stats)
            self._start(0)
        kept = KeptForwards(KEPT_FORWARDS_BYTES) if keep and self.kind == "adjoint" and \
            op.options.memory_limit is None else None
        condition = LoopSteps(op.condition, list(self.key[1:]), 0, 0, op.size, None, True)
        n = 0
        try:
            n = self.run.run_while(condition, online, op.options.max_steps, kept)
        finally:
            condition.finish()
            self._count_variants(n)
            op.condition.settle_again()
        op.stats.update(n_steps=n, forward_steps=n)
        if kept is not None:
            op.stats["kept_steps"] = kept.kept
        op.last_n_steps = n
        if keep and n:
            self.actions = online.reversal(n)
            report, every = _progress(op.options.progress, n)
            self.run.set_report(report, every)
        self.base_steps = n
        return self.run.state()

    def reverse_while(self, adjoint, adjoint_tangents=None):
        """Reverse the steps of ``forward_while(keep=True)``."""
        if self.actions is None:          # no step ran: the identity
            return self.steps.sums, self.steps.dot_sums
        self.run.set_adjoints(adjoint, adjoint_tangents)
        try:
            self.run.execute(self.actions)
        finally:
            self.op.stats.update(forward_steps=self.base_steps + self.run.forward_steps,
                                 taped_steps=self.run.taped_steps)
            self._count_variants(self.base_steps + self.run.forward_steps +
                                 self.run.taped_steps)
        return self.steps.sums, self.steps.dot_sums
