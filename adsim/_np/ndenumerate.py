"""``np.ndenumerate`` of an active array: hooked as the SciPy functions are
while a recording runs (adsim/_record/interpose.py), since NumPy's
constructor iterates a plain copy (``np.asarray(arr).flat``)."""
import numpy as np

from .joins import from_pieces


class _ActiveFlat:
    """What ``ndenumerate.__next__`` reads of its ``iter``: ``coords`` (the
    index of the next element, read first), then ``next(iter)`` (that
    element of the active array, a recorded 0-d value)."""

    __slots__ = ("array", "indices", "coords")

    def __init__(self, array):
        self.array = array
        self.indices = np.ndindex(*array.shape)
        self.coords = next(self.indices, None)

    def __iter__(self):
        return self

    def __next__(self):
        if self.coords is None:
            raise StopIteration
        value = self.array[self.coords]
        self.coords = next(self.indices, None)
        return value


def ndenumerate_init(self, arr):
    """``np.ndenumerate(a)`` of an active array (or a list holding active
    values): (index, element) pairs in C order, as NumPy's, the elements
    active."""
    self.iter = _ActiveFlat(from_pieces(arr))
