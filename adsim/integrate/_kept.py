"""A small cache of values derived from their keys (factorisations, the
coloring of a tape's pattern), shared by the threads replaying a tape."""
import threading
from collections import OrderedDict

from .._tapecache.purity import ResultNeutral

__all__ = ["Kept"]


class Kept(ResultNeutral):
    """The ``size`` most recently used values, by key, and with a ``budget``
    (bytes, ``weigh(key, value)`` each) more of them while all weigh at most
    that together. Each value is a function of its key alone, so the cache never
    changes a result (the environment checks of recorded steps count it as
    a constant)."""

    def __init__(self, size, budget=0, weigh=None):
        self.size = size
        self.budget = budget
        self._weigh = weigh
        self._weights = {}
        self._total = 0
        self._values = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        """The value kept for ``key``, or None."""
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key, value):
        with self._lock:
            if self._weigh is not None:
                weight = self._weigh(key, value)
                self._total += weight - self._weights.get(key, 0)
                self._weights[key] = weight
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size and (
                    self._weigh is None or self._total > self.budget):
                old, _ = self._values.popitem(last=False)
                self._total -= self._weights.pop(old, 0)
        return value
