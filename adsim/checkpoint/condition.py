"""The condition of ``checkpoint_while`` as recorded tapes, decided in C.

``cond(state, *args)`` is recorded like the step: its comparisons of the
state become branch records, so a replay that follows the recorded path at
a new state has the recorded outcome, and one that leaves it is recorded
anew there (each variant keeps its outcome). A condition that cannot be
recorded (it converts the state to plain numbers, draws random numbers or
changes its own environment, a call counter say) is evaluated in Python at
every step instead, on plain arrays, as written. One evaluated in Python
for another reason, or recorded again, runs in sweeps after the program has
gone on: at states the loop's run met it has the outcomes it had there,
elsewhere what it reads is checked first (ConditionTapes.check_environment).
"""
import hashlib
import threading

import numpy as np

from .._tapecache.purity import Snapshot
from .._tapecache.random_watch import RandomWatch
from .._record.recording import record
from ..errors import UnsupportedOperation
from .footprint import tape_overhead

_MAX_VARIANTS = 16
_MAX_DECIDED = 100_000          # outcomes of a Python condition kept from the loop's run
_SAMPLES = 8                    # ... with their states (and every False one)


def _digest(z, inputs):
    """A key of the state and loop inputs (16 bytes of BLAKE2b)."""
    h = hashlib.blake2b(np.ascontiguousarray(z).tobytes(), digest_size=16)
    for x in inputs:
        h.update(np.ascontiguousarray(x).tobytes())
    return h.digest()


class ConditionTapes:
    """Recorded variants of ``cond_flat(z, *inputs) -> truth value``, each
    with its outcome; or, when it cannot be recorded, the plain function."""

    def __init__(self, cond_flat, environment):
        self.cond_flat = cond_flat
        self.environment = environment      # (user cond, constants) for the purity check
        self.variants = []
        self.python_only = False
        self._outcomes = {}
        self._sizes = {}
        self._limit = _MAX_VARIANTS
        self._lock = threading.Lock()
        self._settled = None                # what cond read when the loop had run (settle)
        self._checked = False               # ... compared with what it reads in this sweep
        self._decided = {}                  # a Python condition's outcomes in the loop's run
        self._samples = []                  # ... some with their states, to check against
        self._changes_itself = False        # a Python condition changing what it reads

    @classmethod
    def restored(cls, variants, outcomes, sizes, cond_flat):
        """Condition tapes read from a tape file (``variants`` used last
        first, each with its outcome and byte size); ``cond_flat`` is called
        when no variant holds at a state (a loaded loop has no condition
        code: it raises)."""
        self = cls(cond_flat, (None, ()))
        self.variants = list(variants)
        self._outcomes = {id(t): bool(o) for t, o in zip(self.variants, outcomes)}
        self._sizes = {id(t): int(n) for t, n in zip(self.variants, sizes)}
        return self

    def adopt(self, other):
        """Start from the variants of ``other``, the tapes of a condition
        that computes what this one does (the caller has made sure of it)."""
        with other._lock:
            variants = list(other.variants)
            outcomes, sizes = dict(other._outcomes), dict(other._sizes)
        with self._lock:
            self.python_only = other.python_only
            self._changes_itself = other._changes_itself
            self.variants = variants[:self._limit]
            self._outcomes = {id(t): outcomes[id(t)] for t in self.variants}
            self._sizes = {id(t): sizes[id(t)] for t in self.variants}

    def saved_facts(self):
        """(outcomes, byte sizes) of the variants, in their order."""
        return ([self._outcomes[id(t)] for t in self.variants],
                [self._sizes[id(t)] for t in self.variants])

    def outcome(self, tape):
        return self._outcomes[id(tape)]

    def keep_two(self, bounded):
        """Under a memory budget keep two variants at most (a condition
        flips once: true while the loop runs, false at its end)."""
        self._limit = 2 if bounded else _MAX_VARIANTS
        with self._lock:
            self._trim(self._limit)

    def bytes(self):
        """Bytes the variants may hold: two of the largest recorded, and a
        third being recorded (half of it: see StepTapeBytes.recording)."""
        largest = max(self._sizes.values(), default=0)
        return 2 * (largest + tape_overhead(largest)) + largest // 2 if largest else 0

    def _trim(self, count):
        for dropped in self.variants[count:]:
            self._outcomes.pop(id(dropped), None)
            self._sizes.pop(id(dropped), None)
        self.variants = self.variants[:count]

    def settle(self):
        """The loop has run (or a sweep has ended): from now on the condition
        is evaluated or recorded again during sweeps, while the program may
        have changed what it reads besides its arguments. Take a snapshot of
        that (None where the walk cannot see all of it)."""
        user_cond, constants = self.environment
        if user_cond is None or self._changes_itself:
            return
        snapshot = Snapshot(user_cond, constants, parameters=True)
        self._settled = snapshot if snapshot.blocked is None else None

    def settle_again(self):
        """After a sweep that called the condition (its environment checked
        first): take in what the condition changed itself (a call counter)."""
        if self._settled is not None and self._checked:
            self.settle()

    def check_environment(self):
        """Before a sweep runs the loop again: refuse when the program changed
        what the condition reads since the loop ran (a dict of settings
        updated in place): its outcomes would be of a condition the loop never
        had, and the steps taken and their derivatives wrong without an error.
        (Changes the condition makes itself during a sweep, a call counter,
        are taken in by :meth:`settle` after it.)"""
        settled = self._settled
        if settled is None:
            return
        user_cond, constants = self.environment
        if settled.matches(user_cond, constants):
            return
        # a change that does not change the outcomes (a call counter) passes: at
        # states the loop met the condition must decide as it did there
        if self._samples and all(bool(self.cond_flat(z, *inputs)) == outcome
                                 for z, inputs, outcome in self._samples):
            self.settle()
        else:
            raise UnsupportedOperation(
                f"adsim: checkpoint_while runs its loop again here (a sweep, or a replay at "
                f"other inputs), but what its condition "
                f"{getattr(user_cond, '__name__', '')} reads besides its arguments (a "
                f"closure, a global, an object's attribute, a dict or array updated in place) "
                f"changed since the loop ran, so it would not decide as the loop's did. Pass "
                f"such values to the loop through args=, or leave them unchanged until the "
                f"derivatives are taken (update a copy of a dict of settings)")

    def new_sweep(self):
        self._checked = False

    def _checked_environment(self):
        if not self._checked:
            self.check_environment()
            self._checked = True

    def evaluate(self, z, inputs):
        """The condition on plain arrays (a condition that is not recorded).
        At a state the loop's own run met (a sweep at its inputs) the outcome
        is the one it had there, whatever the program changed since; at
        another, the condition is called after :meth:`check_environment`."""
        key = _digest(z, inputs)
        if self._settled is not None:
            known = self._decided.get(key)
            if known is not None:
                return known
            self._checked_environment()
        outcome = bool(self.cond_flat(z, *inputs))
        if self._settled is None and len(self._decided) < _MAX_DECIDED:
            self._decided[key] = outcome
            sample = (np.array(z, dtype=float), [np.array(x) for x in inputs], outcome)
            if len(self._samples) < _SAMPLES or not outcome:
                self._samples.append(sample)
        return outcome

    def add_variant(self, z, inputs):
        """Record the condition at the flat state ``z`` and return its tape;
        a condition that cannot be recorded faithfully turns to Python
        evaluation (None)."""
        with self._lock:
            if self.python_only:
                return None
            decided = []

            def recorded(z, *xs):
                decided.append(bool(self.cond_flat(z, *xs)))
                return np.zeros(1)

            self._checked_environment()
            self._trim(self._limit - 1)     # room for the new one
            user_cond, constants = self.environment
            # the active values its closures hold are loop inputs (lifted):
            # they count by shape, and the walk goes on past them
            snapshot = Snapshot(user_cond, constants, parameters=True)
            watch = RandomWatch(snapshot.randoms)
            try:
                tape = record(recorded, z, *inputs)
            except Exception:        # plain evaluation raises again if the condition is wrong
                self.python_only = True
                return None
            if watch.changed() is not None or snapshot.blocked is not None or \
                    not snapshot.matches(user_cond, constants):
                self.python_only = True
                # one that changes what it reads (a call counter, random draws) is
                # called as written, in sweeps too: settle() leaves it unchecked
                self._changes_itself = snapshot.blocked is None
                self._settled = None
                return None
            self._outcomes[id(tape)] = decided[0]
            self._sizes[id(tape)] = sum(tape.stats()["bytes"].values())
            self.variants = [tape] + self.variants
            return tape

    def used_order(self, order):
        with self._lock:
            rank = {id(t): i for i, t in enumerate(order)}
            self.variants = sorted(self.variants, key=lambda t: rank.get(id(t), len(rank)))
