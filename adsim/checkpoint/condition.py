"""The condition of ``checkpoint_while`` as recorded tapes, decided in C.

``cond(state, *args)`` is recorded like the step: its comparisons of the
state become branch records, so a replay that follows the recorded path at
a new state has the recorded outcome, and one that leaves it is recorded
anew there (each variant keeps its outcome). A condition that cannot be
recorded (it converts the state to plain numbers, draws random numbers or
changes its own environment, a call counter say) is evaluated in Python at
every step instead, on plain arrays, as written.
"""
import threading

import numpy as np

from .._tapecache.purity import Snapshot
from .._tapecache.random_watch import RandomWatch
from .._record.recording import record
from .footprint import tape_overhead

_MAX_VARIANTS = 16


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

    def evaluate(self, z, inputs):
        """The condition on plain arrays (a condition that is not recorded)."""
        return bool(self.cond_flat(z, *inputs))

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
                return None
            self._outcomes[id(tape)] = decided[0]
            self._sizes[id(tape)] = sum(tape.stats()["bytes"].values())
            self.variants = [tape] + self.variants
            return tape

    def used_order(self, order):
        with self._lock:
            rank = {id(t): i for i, t in enumerate(order)}
            self.variants = sorted(self.variants, key=lambda t: rank.get(id(t), len(rank)))
