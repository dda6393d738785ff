"""The recorded loop body: one step as a sub-tape, with its branch variants.

A step is recorded once and replayed in C for every step (adsim/_loop_run.pxi).
When a replay leaves the recorded path (an adaptive step accepted instead of
rejected, a limiter switching side) the step is recorded again at that
state; variants are kept, and each replay first tries the variant used last.

Under a memory budget the variants it cannot hold are *parked*: their value
arenas (most of a variant's bytes: 0.3 MB of a 1000-point RK45 step's 0.4)
go back to the system and their programs stay. When every held variant
leaves its path, the parked ones are tried (a plain replay each) before the
step is recorded again in Python (60 plain steps' worth): a budget that
holds one variant of a step whose branch changes often no longer records
at every change.
"""
import functools
import threading

import numpy as np

from .._tapecache.purity import Snapshot
from .._tapecache.random_watch import RandomWatch
from .._tapecache.recorded_again import KeptRecording
from .._record.recording import record
from ..errors import BranchChanged, UnsupportedOperation
from .._loops import drop_idle_buffers, park_arena
from .footprint import StepTapeBytes, tape_overhead, together
from .heap import release_free_memory

_MAX_VARIANTS = 48
"""Variants a step keeps whatever their size (without a budget)."""

_MAX_SMALL_VARIANTS = 1024
_SMALL_VARIANTS_BYTES = 128 * 2 ** 20
"""Beyond :data:`_MAX_VARIANTS`, up to :data:`_MAX_SMALL_VARIANTS` while all
of them take at most this many bytes in a reverse sweep (48 variants of a
large step take as much: 48 RK45 steps of a 1000-point system, 140 MB): a
step with many paths (an implicit method's orders, Newton iteration
counts, rejections and Jacobian updates: about 70 on HIRES with BDF, 86 on
the 2-D Brusselator of the stiff test set) would otherwise be recorded
again tens of times per gradient, each recording costing hundreds of
replays. A budget (``memory_limit``) bounds them instead."""


_ORIGIN_BYTES = 2 ** 20
"""A step's state and inputs up to this size are kept from its first
recording, to tell a change of its environment that changes it (StepTapes._check_environment)."""


_UNSEEN = object()
"""The environment of a step that the walk cannot see all of (StepTapes.settle)."""


class StepTapes:
    """Sub-tapes of one loop body ``step_flat(z, *inputs) -> z_next``.

    ``variants`` lists the recorded tapes, the one used last first. Sweeps
    (possibly in several threads) replay them; recording a variant and
    reordering them take a lock.
    """

    def __init__(self, step_flat, z, inputs):
        self._start(step_flat)
        self._record(z, inputs)

    def _start(self, step_flat):
        self.step_flat = step_flat
        self.variants = []
        self.recordings = 0
        self.dropped = 0            # variants dropped (too many, or beyond the budget)
        self.parked = []            # (tape, StepTapeBytes): held without their arenas, newest first
        self.revived = 0            # parked variants that took a step (instead of a recording)
        self._sizes = {}
        self._branches = {}         # branch (op codes) -> StepTapeBytes, held or dropped
        self._largest = None        # StepTapeBytes bounding every variant recorded so far
        self._allowance = None      # (bytes, kind, directions, idle bytes): keep_within
        self._checked = False       # the step's side effects were found harmless
        # what the step read besides its arguments when the loop had run
        # (settle), and the first variant's recording to check a change of it
        # against (_check_environment)
        self._environment = None
        self._origin = None
        self.change_rate = 0.0      # variant misses per step run in the last sweep (planning.py)
        self._lock = threading.RLock()

    @classmethod
    def restored(cls, variants, sizes, recordings, dropped, step_flat):
        """Step tapes read from a tape file: ``variants`` (used last first)
        with their :class:`StepTapeBytes`. ``step_flat`` is called when no
        variant holds at a state (it has no step code to record: it raises)."""
        self = cls.__new__(cls)
        self._start(step_flat)
        self._checked = True
        self.variants = list(variants)
        self._input_shapes = self.variants[0].input_shapes
        self._sizes = {id(t): s for t, s in zip(self.variants, sizes)}
        for tape, size in zip(self.variants, sizes):
            self._grow_largest(size)
            self._note_branch(tape, size)
        self.recordings, self.dropped = recordings, dropped
        return self

    def adopted(self, step_flat):
        """New step tapes for ``step_flat``, a step that computes what this
        one does (the caller has made sure of it), starting from these
        variants: they are shared, not copied; new ones are recorded with
        ``step_flat``. Their recordings count the variants adopted."""
        with self._lock:
            variants, sizes = list(self.variants), self.sizes()
        tapes = StepTapes.restored(variants, sizes, len(variants), 0, step_flat)
        tapes._origin = self._origin
        return tapes

    def takes(self, z, inputs, step_flat):
        """Whether ``step_flat`` may adopt these tapes (:meth:`adopted`): they
        serve its state and inputs, and the loop arguments it holds as
        constants (Python numbers, integer arrays: ``environment``) are
        those these tapes were recorded with."""
        if not self.variants or not self.serves(z, inputs):
            return False
        mine = getattr(self.step_flat, "environment", (None, None))[1]
        theirs = getattr(step_flat, "environment", (None, None))[1]
        return mine is not None and theirs is not None and \
            Snapshot(None, mine).same_as(Snapshot(None, theirs))

    def serves(self, z, inputs):
        """Whether these tapes take the flat state ``z`` and the ``inputs``
        (their sizes and shapes), as a loop sharing them must give."""
        return [np.shape(x) for x in [z] + list(inputs)] == [tuple(s) for s in self._input_shapes]

    def sizes(self):
        """The :class:`StepTapeBytes` of each variant, in the order of ``variants``."""
        return [self._sizes[id(t)] for t in self.variants]

    def _record(self, z, inputs):
        with self._lock:
            self._make_room()
            if self._checked:
                self._check_environment()
                tape = record(self.step_flat, z, *inputs)
            else:
                tape = record_pure_step(self.step_flat, z, inputs)
                self._checked = True
            if tuple(tape.output_shape) != (z.size,):
                raise ValueError(f"adsim: the loop step returned a state of "
                                 f"{tuple(tape.output_shape)} values; it must return a state "
                                 f"shaped like its input")
            self._input_shapes = tape.input_shapes
            if self._origin is None and z.nbytes + sum(np.size(x) for x in inputs) * 8 <= \
                    _ORIGIN_BYTES:
                self._origin = KeptRecording(tape, [z] + list(inputs))
            self._sizes[id(tape)] = _measure(tape, z, inputs)
            self._grow_largest(self._sizes[id(tape)])
            self._note_branch(tape, self._sizes[id(tape)])
            self.recordings += 1
            self.variants = [tape] + self.variants
            while self._too_many():
                self._drop_last()
            if self._allowance is not None:
                self.keep_within(*self._allowance)
                release_free_memory()   # the buffers the recording outgrew
            return tape

    def settle(self):
        """The loop has run: from now on a variant is recorded (a reverse
        sweep whose budget dropped one, a replay taking a new path) while the
        program may have changed what the step reads besides its arguments.
        Take a snapshot of that to check against (_UNSEEN where the walk
        cannot see all of it: a sparse Jacobian holding tapes)."""
        user_step, constants = getattr(self.step_flat, "environment", (self.step_flat, ()))
        snapshot = Snapshot(user_step, constants)
        self._environment = snapshot if snapshot.blocked is None else _UNSEEN

    def _check_environment(self):
        """Refuse to record a variant when what the step reads besides its
        arguments changed since the loop ran in a way that changes the step:
        the recording would be of a step the loop never took (a dict of
        settings the program updated in place afterwards), its derivative
        wrong without an error. A change the step does not depend on (a
        counter of a function it calls) passes: the step recorded again at
        its first variant's point must compute what it computed there.
        Where the walk cannot see the environment, that check runs at every
        such recording (none is possible without a first point kept)."""
        environment = self._environment
        if environment is None or environment is _UNSEEN and self._origin is None:
            return
        user_step, constants = getattr(self.step_flat, "environment", (self.step_flat, ()))
        if environment is not _UNSEEN and environment.matches(user_step, constants):
            return
        if self._origin is not None and \
                self._origin.computed_again(functools.partial(record, self.step_flat)):
            self.settle()
            return
        raise UnsupportedOperation(
            f"adsim: the step of a checkpointed loop must be recorded again here (a replay "
            f"or a sweep under its memory budget takes a path none of its kept variants "
            f"holds), but what {getattr(user_step, '__name__', 'the step')} reads besides its "
            f"arguments (a closure, a global, an object's attribute) changed since the loop "
            f"ran, so the recording would not be of the step the loop took. Pass such values "
            f"to the step through args=, or leave them unchanged until the derivatives are "
            f"taken (copy a dict or array of settings before updating it)")

    def _too_many(self):
        n = len(self.variants)
        return n > _MAX_VARIANTS and (n > _MAX_SMALL_VARIANTS or self.variants_bytes(
            "adjoint", 1) > _SMALL_VARIANTS_BYTES)

    def add_variant(self, z, inputs):
        """The tape of a variant that follows its path at the flat state
        ``z`` (every held variant left its path there): a parked one that
        does, else one recorded there; ``inputs`` are the loop inputs, flat."""
        shapes = self._input_shapes[1:]
        inputs = [np.reshape(x, s) for x, s in zip(inputs, shapes)]
        with self._lock:
            if self.parked:             # room for one arena tried at a time
                trial = self._largest.values + tape_overhead(self._largest.values)
                while self._allowance is not None and \
                        not self._fit(list(self._sizes.values()), True, trial) and \
                        self._give_back(1):
                    pass
                found = self._revive(z, inputs)
                if found is not None:
                    return found
        return self._record(z, inputs)

    def saved_tapes(self):
        """The variants a tape file holds: the held ones (used last first),
        then the parked ones (a loaded loop cannot record a step again)."""
        with self._lock:
            return list(self.variants) + self.parked_tapes()

    def saved_sizes(self):
        """The :class:`StepTapeBytes` of :meth:`saved_tapes`, in their order."""
        with self._lock:
            return self.sizes() + [size for _, size in self.parked]

    def parked_tapes(self):
        """The parked variants' tapes (a sweep's shared work buffer has room
        for them too: one may take a step again)."""
        return [tape for tape, _ in self.parked]

    def _revive(self, z, inputs):
        """The first parked variant whose path ``z`` follows, held again
        (the budget then parks others), or None."""
        found = None
        for i, (tape, size) in enumerate(self.parked):
            try:
                tape.forward(*_shaped(tape, z, inputs))
            except BranchChanged:
                park_arena(tape)        # (the try touched its arena's pages)
                continue
            del self.parked[i]
            self._sizes[id(tape)] = size
            self.variants = [tape] + self.variants
            self.revived += 1
            found = tape
            break
        release_free_memory()           # the arenas tried and given back stay out
        if found is not None and self._allowance is not None:
            self.keep_within(*self._allowance)
        return found

    def used_order(self, order):
        """A sweep used the variants in ``order`` (last used first): try
        them in that order next time."""
        with self._lock:
            rank = {id(t): i for i, t in enumerate(order)}
            self.variants = sorted(self.variants, key=lambda t: rank.get(id(t), len(rank)))

    @property
    def tape(self):
        """The variant used last."""
        return self.variants[0]

    def bytes(self):
        """:class:`StepTapeBytes` bounding every variant recorded so far, held
        or dropped (for the budget: a variant recorded again has that size)."""
        return self._largest

    def _grow_largest(self, size):
        old = self._largest or size
        self._largest = StepTapeBytes(static=max(old.static, size.static),
                                      values=max(old.values, size.values),
                                      stack=max(old.stack, size.stack))

    def _note_branch(self, tape, size):
        """Count the branch ``tape`` took (its op codes: a variant recorded
        again at another state has the same) at the largest size seen."""
        key = hash(tape.op_codes().tobytes())
        old = self._branches.pop(key, size)     # (re-inserted last: the newest branches last)
        self._branches[key] = StepTapeBytes(static=max(old.static, size.static),
                                            values=max(old.values, size.values),
                                            stack=max(old.stack, size.stack))
        while len(self._branches) > _MAX_SMALL_VARIANTS:
            del self._branches[next(iter(self._branches))]

    def branch_sizes(self):
        """The :class:`StepTapeBytes` of every branch the step has taken,
        held or dropped: holding them all keeps a step whose branch changes
        from being recorded again."""
        return list(self._branches.values())

    def variants_bytes(self, kind, directions):
        """Bytes all variants held take together during a sweep of ``kind``."""
        return together(self._sizes.values(), kind, directions)

    def keep_within(self, nbytes, kind, directions, idle=None):
        """Drop the variants used least recently (never the last one used)
        while all of them together would take more than ``nbytes`` during a
        sweep of ``kind``, or their tapes alone (what they hold between
        sweeps: :meth:`StepTapeBytes.idle`) more than ``idle``; later
        variants recorded by this sweep obey the same bounds. ``nbytes=None``
        lifts them.

        ``nbytes`` leaves out the room the plan keeps for a recording
        (:meth:`StepTapeBytes.recording` of the largest variant, in the
        sweep's fixed part): between recordings the variants may hold that
        room too, and a recording first drops them to ``nbytes`` with the
        new one (:meth:`_make_room`). So a budget that holds one variant
        next to its recording holds two or more between recordings, and a
        step whose branch changes now and then is not recorded again at
        every change."""
        with self._lock:
            self._allowance = None if nbytes is None else (nbytes, kind, directions, idle)
            if nbytes is None:
                return
            dropped = self.dropped
            while not self._fit(list(self._sizes.values()), True) and self._give_back(1):
                pass
            if self.dropped != dropped:
                release_free_memory()

    def _fit(self, sizes, between_recordings=False, extra=0):
        """Whether variants of ``sizes`` held, the parked ones and ``extra``
        bytes fit the allowance (with the room of a recording between
        recordings)."""
        nbytes, kind, directions, idle = self._allowance
        if between_recordings:
            nbytes += self._largest.recording()
        parked = sum(size.parked() for _, size in self.parked) + extra
        return together(sizes, kind, directions) + parked <= nbytes and (
            idle is None or sum(s.idle() for s in sizes) + parked <= idle)

    def _give_back(self, keep):
        """Park the held variant used least recently while more than
        ``keep`` are held, else forget the oldest parked one; False when
        there is nothing to give back."""
        if len(self.variants) > keep:
            self._drop_last()
        elif self.parked:
            self.parked.pop()
        else:
            return False
        return True

    def _make_room(self):
        """Before a recording under a bound: drop the variants used least
        recently (all of them if need be: the new one replaces them, as
        every one left its path) until the new one fits next to the rest."""
        if self._allowance is None or not self.variants:
            return
        dropped = self.dropped
        while not self._fit(list(self._sizes.values()) + [self._largest]) and \
                self._give_back(0):
            pass
        if self.dropped != dropped:     # before the recording touches fresh pages
            release_free_memory()

    def _drop_last(self):
        """Drop the held variant used least recently: parked under a budget
        (when it has room for its program), else forgotten."""
        dropped = self.variants[-1]
        self.variants = self.variants[:-1]
        size = self._sizes.pop(id(dropped), None)
        self.dropped += 1
        if self._allowance is not None and size is not None and \
                len(self.parked) < _MAX_VARIANTS and park_arena(dropped):
            self.parked.insert(0, (dropped, size))


def _measure(tape, z, inputs):
    """Byte sizes of a new step tape. One reverse sweep (weights zero) fills
    the value stack as every later sweep will, so its size is known before
    a budget is planned."""
    tape._adjoint(_shaped(tape, z, inputs), np.zeros((1, z.size)))
    drop_idle_buffers(tape)     # (a loop's sweeps lend its Replays shared ones)
    sizes = tape.stats()["bytes"]
    values, stack = sizes["values"], sizes["value_stack_peak"]
    static = sum(v for k, v in sizes.items() if k not in ("values", "value_stack_peak"))
    return StepTapeBytes(static=static, values=values, stack=stack)


def _shaped(tape, z, inputs):
    """Flat loop state and inputs in the shapes the step tape was recorded with."""
    xs = [z] + list(inputs)
    return tape._inputs([np.reshape(x, s) for x, s in zip(xs, tape.input_shapes)])


def record_pure_step(step, z, inputs):
    """The tape of one step, refusing a step whose replays could not repeat
    it: one that draws random numbers (every replay would reuse the first
    draws), or that changes its own environment in a way its result depends
    on (a time counter in a closure). A step that only counts its calls is
    fine: when the environment changed, the step is recorded once more and
    the two recordings must agree."""
    user_step, constants = getattr(step, "environment", (step, ()))
    snapshot = Snapshot(user_step, constants)
    watch = RandomWatch(snapshot.randoms)
    tape = record(step, z, *inputs)
    why = watch.changed()
    # a blocked walk (an active value or an object adsim cannot see in the
    # step's closure) may have missed a random generator or state the step
    # changes: a second recording at the same point must then agree too
    if why is None and (snapshot.blocked is not None or
                        not snapshot.matches(user_step, constants)):
        if not KeptRecording(tape, [z] + list(inputs)).computed_by(record(step, z, *inputs)):
            why = "it changes its own environment (a variable in a closure, a global, an " \
                  "object) and its result depends on that" if snapshot.blocked is None else \
                  "two recordings at the same point differ: it draws random numbers or " \
                  "changes its own environment (adsim could not watch all of it: " \
                  f"{snapshot.blocked})"
    if why is not None:
        if getattr(user_step, "__module__", "").split(".")[0] == "adsim":
            raise UnsupportedOperation(
                f"adsim: a solver adsim runs as a checkpointed loop (odeint, solve_ivp, ...) "
                f"records its step, which calls your function (the right-hand side, an event), "
                f"once and replays it, but {why}, which replays would not repeat. Make your "
                f"function depend on its arguments only: draw random numbers before the solve "
                f"and pass them in (args=, or a closure over a plain array)")
        raise UnsupportedOperation(
            f"adsim: the step of a checkpointed loop is recorded once and replayed, but {why}, "
            f"which replays would not repeat. Make the step a function of its state and args: "
            f"keep time or counters in the state, and draw random numbers before the loop "
            f"(pass them in args, indexed by a step counter kept in the state)")
    return tape
