"""Exceptions raised by adsim, each naming its cause and its fix."""


class AdsimError(Exception):
    """Base class of all adsim errors."""


class BranchChanged(AdsimError, RuntimeError):
    """A replay took a different path than the recording.

    Raised by a tape replay when a recorded outcome (a comparison, the side of
    ``abs``/``maximum``/``minimum``/``clip``, the index of ``argmax`` or of a
    ``max`` reduction) differs at the new input. The tape's derivatives would be
    those of another branch, so none are returned. Fix: record the tape again at
    the new point; the functional API (``grad``, ``jvp``, ...) does this for you.
    """

    def __init__(self, message, op_index=-1, op_name=""):
        super().__init__(message)
        self.op_index = op_index
        self.op_name = op_name


class UnsupportedOperation(AdsimError, TypeError):
    """A NumPy function or operation has no differentiation rule.

    Fix: express it with supported operations, register a primitive with
    ``adsim.primitive``, or apply it to the plain value ``adsim.value(x)``.
    """


class ActiveValueLeak(AdsimError, TypeError):
    """An active (recorded) value was turned into a plain Python number or array.

    ``float(x)``, ``bool(x)`` or ``np.asarray(x)`` on a recorded value would
    let the value escape the tape, so a replay could not follow it. Fix: use
    comparisons (``x > 0`` is recorded and checked on replay), ``np.where``,
    or ``adsim.value(x)`` for a value that should not be differentiated.
    """


class MemoryBudgetError(AdsimError, MemoryError):
    """A checkpointed loop cannot run within the requested memory budget.

    The message states the smallest budget that works. Fix: raise
    ``memory_limit``, give ``snapshot_dir`` for disk snapshots, or shorten the step.
    """


class TapeOverflow(AdsimError, OverflowError):
    """A recorded quantity does not fit the tape's 32-bit fields.

    Element indices of gathers and scatters, operands and offsets into the
    tape's streams are stored as 32-bit integers, so an array of 2**31 or more
    elements cannot be indexed element by element, and one tape holds fewer
    than 2**31 operands and indices. Nothing is wrapped around: the recording
    stops with this error. Fix: split the array into pieces of fewer than
    2**31 elements, or record a loop body once with ``adsim.checkpoint_loop``
    instead of every iteration.
    """


class TapeCopyError(AdsimError, TypeError):
    """A tape cannot be pickled or copied.

    A tape is compiled buffers plus references to Python objects of this
    process (user primitives, checkpointed loops), and there is no tape file
    format yet (one is planned). Fix: to use a function in another process,
    record it there (``adsim.record``, or the functional API, which records
    for you); to use it from several threads, share the tape itself: replays
    are thread-safe.
    """
