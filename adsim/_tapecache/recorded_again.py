"""A function recorded again at the point of a kept recording must compute
what that recording computed there.

Ops that record a user function again where none of their tapes' paths
holds (a nested derivative's inner function, a function an op runs on its
tapes, a checkpointed loop's step) do so after the program may have changed
what the function reads besides its arguments (a dict of settings updated
in place). Recorded again at an earlier recording's point, it must give the
same op codes and, replayed there, the same value (bitwise, NaN equal to
NaN); else the new tape would be of a function the program never called,
its values and derivatives wrong without an error.

The recording again must take the same tape inputs as the kept one. An
array recorded as a constant instead of as an input folds the ops on it
into constants: a nested derivative's tapes take every float array of the
call as an input (its tape cache's ``all_varied``), and recording its
right-hand side with ``y`` the only input drops the comparison of
``if t >= 1.1`` and the ``np.exp(p)`` (36 op codes for 43 on the stiff
set's Brusselator), so the comparison refuses an unchanged function. Each
caller therefore passes its own way of recording (``record``).
"""
import numpy as np

from ..errors import BranchChanged

__all__ = ["KeptRecording"]


class KeptRecording:
    """A recording's point (copied), op codes and value there (a replay)."""

    __slots__ = ("point", "codes", "value")

    def __init__(self, tape, point):
        self.point = [np.array(v, dtype=float) for v in point]
        self.codes = tape.op_codes()
        self.value = tape.forward(*self.point)

    def computed_by(self, tape):
        """Whether ``tape`` (of the same inputs) computes at the point what
        the kept recording did: the same op codes and value."""
        return np.array_equal(tape.op_codes(), self.codes) and \
            np.array_equal(tape.forward(*self.point), self.value, equal_nan=True)

    def computed_again(self, record):
        """Whether ``record(*point)``, the function recorded again at the
        point with the kept recording's inputs, computes what it did; a
        recording or replay that leaves a path there (BranchChanged) does not."""
        try:
            return self.computed_by(record(*self.point))
        except BranchChanged:
            return False
