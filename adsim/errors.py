"""Exceptions raised by adsim, each naming its cause and its fix."""


class AdsimError(Exception):
    """Base class of all adsim errors."""


class BranchChanged(AdsimError, RuntimeError):
    """A replay took a different path than the recording.

    Raised by a tape replay when a recorded outcome (a comparison, the side of
    ``abs``/``maximum``/``minimum``/``clip``, the index of a ``max`` or ``min``
    reduction) differs at the new input. The tape's derivatives would be
    those of another branch, so none are returned. Fix: record the tape again at
    the new point; the functional API (``grad``, ``jvp``, ...) does this for you.
    A tape loaded from a file raises it too where a checkpointed loop or a
    nested derivative in it meets a path none of its recorded variants
    follows (it has no code to record them again).
    """

    def __init__(self, message, op_index=-1, op_name="", batch_member=None):
        super().__init__(message)
        self.op_index = op_index
        self.op_name = op_name
        self.batch_member = batch_member      # a batched replay: the member that left the path


class IndexOutOfBounds(BranchChanged, IndexError):
    """A replay computed an index outside the axis it indexes (integer data
    recorded from the inputs, ``x.astype(int)`` used as an index, moved out
    of range at the new input).

    NumPy would raise ``IndexError`` on this path; the tape returns nothing.
    A ``BranchChanged``: the functional API records again, and NumPy's own
    error then points at the line of the user's code.
    """


class BatchShapeError(AdsimError, ValueError):
    """A batched replay (``tape.batched``) got an argument without the batch
    axis it needs.

    Every input, direction and weight of a batched replay has a leading
    batch axis of the same length B >= 1, followed by the shape the tape
    was recorded for (directions may add a trailing axis of k directions).
    Fix: stack the B points along a new first axis, ``np.stack(points)``.
    """


class UnsupportedOperation(AdsimError, TypeError):
    """A NumPy function or operation has no differentiation rule.

    Fix: express it with supported operations, register a primitive with
    ``adsim.primitive``, or apply it to the plain value ``adsim.value(x)``.
    """


class UndefinedDerivative(AdsimError, ValueError):
    """The derivative asked for does not exist at this point.

    Raised by the derivative rules of functions that are differentiable only
    away from some points: singular vectors at repeated (or zero) singular
    values, the QR factors, pseudo-inverse and least-squares solution of a
    rank-deficient matrix. The message names the function and the values
    that make the derivative undefined. Fix: differentiate a quantity that is
    defined there (functions of the singular values alone, a regularized
    matrix), or move the point.
    """


class SolverNotConverged(UndefinedDerivative):
    """A SciPy solver differentiated through its solution did not converge,
    so there is no solution whose derivative can be taken.

    Raised for the nonlinear solvers (``fsolve``, ``root``, ``minimize``,
    ...; their derivative comes from the implicit function theorem) and for
    the Krylov solves of ``scipy.sparse.linalg`` (``cg``, ``gmres``, ...)
    with active values, whose ``info != 0`` in the forward solve or in a
    tangent or adjoint solve (the same method and tolerances, on the
    transpose for the adjoint) means the result is not the solution. The
    message names the solver and its options.

    Fix: a better starting point, more iterations or looser tolerances for
    the solver, a direct solve (``spsolve``, ``splu``) for a linear system,
    or parameters where the problem has a solution.
    """


class ActiveValueLeak(AdsimError, TypeError):
    """An active (recorded) value was turned into a plain Python number or array.

    ``float(x)``, ``bool(x)`` or ``np.asarray(x)`` on a recorded value would
    let the value escape the tape, so a replay could not follow it. Fix: use
    comparisons (``x > 0`` is recorded and checked on replay), ``np.where``,
    or ``adsim.value(x)`` for a value that should not be differentiated.
    """


class UnsupportedAttribute(AdsimError, AttributeError):
    """An attribute or method of NumPy's ndarray that active arrays do not have.

    Raised for ndarray names such as ``tobytes``, ``ctypes`` or ``resize``
    that have no meaning for a recorded value, or no derivative. The message
    names the attribute and what to use instead. Fix: call the NumPy function
    adsim records (``np.resize(x, shape)``), or take the attribute of the
    plain value ``np.asarray(adsim.value(x))``.
    """


class MemoryBudgetError(AdsimError, MemoryError):
    """A checkpointed loop cannot run within the requested memory budget.

    The message states the smallest budget that works. Fix: raise
    ``memory_limit``, give ``snapshot_dir`` for disk snapshots, or shorten the step.
    """


class InvalidInput(AdsimError, TypeError):
    """An argument that should be real numeric data is not.

    Inputs of a recording, differentiated arguments, tangent directions,
    adjoint weights and the value a recorded function returns must be real
    numbers: float arrays, or integers and booleans (converted to float64). Complex values (their imaginary part
    would be lost), ``None``, and object, string, bytes or datetime arrays are
    refused. Fix: pass a float64 array; split complex data into its real and
    imaginary parts.
    """


class InvalidArgnums(AdsimError, ValueError):
    """``argnums`` does not name distinct positional arguments of the call.

    ``argnums`` is an int or a tuple of ints indexing the positional
    arguments as Python indexes a tuple (negative values count from the end).
    Fix: pass indexes within the number of positional arguments, each once.
    """


class InvalidArgument(AdsimError, TypeError):
    """An argument of an adsim entry point has a type it does not accept.

    Raised by the functional API, ``checkpoint_loop``/``checkpoint_while``,
    ``adsim.integrate.solve_ivp``, the sparse entry points and
    ``adsim.parallel`` for options and arguments of the wrong kind: a count
    that is not an integer, a flag that is not a bool, a tuple of primals
    that does not fit the function's parameters. The message names the
    argument, what was given and what is accepted. Fix: pass one of the
    accepted forms the message lists.
    """


class InvalidArgumentValue(AdsimError, ValueError):
    """An argument of an adsim entry point has the right type but a value it
    cannot use (a negative count, an unknown mode, a time outside the
    interval). The message names the argument, the value given and the
    values accepted. Fix: pass a value from the accepted range.
    """


class NotCallable(InvalidArgument):
    """A function was expected and something else was given.

    Every transformation takes the function itself: ``adsim.grad(f)(x)``,
    not ``adsim.grad(f(x))`` (the value of ``f`` at ``x``); likewise
    ``jvp``, ``vjp``, ``jacobian``, ``hessian``, ``hvp``, ``checkpoint_loop``
    (``step``), ``checkpoint_while`` (``cond``, ``step``), ``primitive``
    (its value function and rules) and ``integrate.solve_ivp`` (``fun``).
    Also raised when a primitive's value function or rule is replaced by
    something that cannot be called. The message names the entry point,
    the argument and what was given. Fix: pass a function (a ``def``, a
    ``lambda``, a bound method or any callable object).
    """


class NotPicklable(AdsimError, TypeError):
    """A function made by an adsim transformation (``adsim.grad(f)``,
    ``jacobian``, ``hessian``, ``hessp``, ``laplacian``, ``value_and_grad``,
    the operator of ``hvp_operator``) was pickled.

    These functions live in the process that made them: they hold the user
    function and its tapes, and pickle sends functions by name. Fix: to
    send derivatives to another process, record the function
    (``tape = adsim.record(f, x)``) and send the tape (``tape.save(path)``
    and ``adsim.load_tape(path)``, or ``pickle.dumps(tape)``), or let
    ``adsim.parallel.map(method, tape, points, executor=...)`` ship it; or
    define a module-level function that calls the transformation, which
    pickle sends by name.
    """


class MixedRecordings(AdsimError, ValueError):
    """Active arrays of two recordings met in one operation: a value of an
    outer recording read by a function recorded on its own (a nested
    derivative, a checkpointed step) from its closure, or an active array
    kept from an earlier recording and used again."""


class PrimitiveRuleError(AdsimError, ValueError):
    """A user primitive's value, jvp or vjp rule returned something unusable.

    The message names the primitive and the rule: a value must be a real
    array (complex results would lose their imaginary part), a jvp rule
    returns one array of the output's shape, a vjp rule a sequence with one
    adjoint (or ``None``) per argument, each of that argument's shape. Fix the
    rule so that it returns what the message asks for.
    """


class SnapshotDirError(AdsimError, OSError):
    """Snapshot files of a checkpointed loop could not be created, written or read.

    Raised by the disk level of a checkpointed loop (``snapshot_dir=``) and by
    :class:`adsim.checkpoint.DiskStore`. The message names ``snapshot_dir``,
    what failed and the system's reason (``errno`` is kept). The snapshot
    file has no name, so nothing is left behind. Fix: give
    ``snapshot_dir`` a writable directory with room for the snapshots, or
    raise ``memory_limit`` so that fewer snapshots go to disk. Subclasses
    match the builtin of the cause (:class:`PermissionError`,
    :class:`FileNotFoundError`, :class:`NotADirectoryError`).
    """


class SnapshotDirPermissionError(SnapshotDirError, PermissionError):
    """``snapshot_dir`` (or a file in it) may not be written or read."""


class SnapshotDirNotFoundError(SnapshotDirError, FileNotFoundError):
    """The snapshot directory or a snapshot file vanished while the loop ran."""


class SnapshotDirNotADirectoryError(SnapshotDirError, NotADirectoryError):
    """``snapshot_dir`` (or one of its parents) is not a directory."""


class SnapshotCleanupWarning(RuntimeWarning):
    """A checkpointed loop could not remove its private snapshot directory.
    (Kept for compatibility: snapshot files have no name now, and no
    directory of their own, so adsim no longer issues it.)

    The snapshot files in it are removed first; the warning says which empty
    directory is left (for example when ``snapshot_dir`` was made read-only
    while the loop ran). Fix: remove it by hand.
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
    """A tape cannot be saved, pickled or copied.

    Tapes are saved, pickled and copied through the tape file format
    (docs/tape-format.md), which holds data, never code. A tape that depends
    on Python code of this process cannot be written: a primitive made
    without a stable ``name=`` or whose rules capture an object that cannot
    be identified, a ``checkpoint_while`` loop whose condition is evaluated
    in Python, a checkpointed loop whose ``schedule=`` is a callable or a
    schedule class of your own, or a tape still recording or whose
    recording failed; so can containers a file cannot name (dict keys other
    than strings and integers). Of NumPy and SciPy code, only what depends
    on Python code or objects of this process: a solver, integrand or
    ``LinearOperator`` whose function could not be recorded, a custom
    ``method=`` of ``minimize``, filter settings that are objects, and a
    sparse constraint matrix whose values float64 cannot hold
    (docs/tape-format.md, "What a file cannot hold"). The message names the
    object. Fix: give the primitive a stable name (``adsim.primitive(f, ...,
    name="mylib.f")``, made once at import), use ``checkpoint_loop`` with
    ``adsim.Revolve``/``TwoLevel``/``Online``, or record the function in the
    process that replays it.
    """


class TapeNotRecorded(AdsimError, RuntimeError):
    """A tape without a finished recording was replayed, fused or inspected
    as a program.

    Tapes are made by :func:`adsim.record` (``tape = adsim.record(f, x)``):
    a ``Tape()`` made by calling the class is empty, a tape reached while
    its function runs (``x.tape``) is still recording, and a tape whose
    function raised has no program. Fix: replay the tape ``adsim.record``
    returns, or record again.
    """


class FinishedRecording(AdsimError, RuntimeError):
    """An active value was used after the recording that made it ended.

    Active values live while their function is recorded; one kept beyond
    (stored in a global, an attribute or a cache) refers to a closed tape.
    Fix: return the values you need from the function, and keep plain
    arrays (``adsim.value(x)``, or arrays made outside it) between calls.
    """


class LoopDidNotStop(AdsimError, RuntimeError):
    """``checkpoint_while`` ran ``max_steps`` steps and its condition still
    held.

    Fix: check that ``cond`` becomes False for the state the loop reaches
    (a tolerance never met, a counter compared the wrong way), or give a
    larger ``max_steps``.
    """


class ReadOnlyTapeAttribute(AdsimError, AttributeError):
    """An attribute of a tape was assigned or deleted.

    A tape's program (its inputs, output, ops) is fixed when
    :func:`adsim.record` returns, and a tape takes no attributes of its own.
    Only ``tape.chunked`` (sweep long elementwise runs chunk by chunk) may be
    set. Fix: record a new tape for another program, and keep your own data
    beside the tape (a dict or a small class holding it).
    """


class TapeFileError(AdsimError, ValueError):
    """A tape file (or a pickled tape) cannot be loaded.

    Raised by :func:`adsim.load_tape` and when unpickling a tape, for any file
    that is not a complete, intact tape of a format this adsim reads: wrong
    magic bytes, a newer format version, a checksum that does not match,
    truncated or trailing bytes, or a program whose operands, slots, indices
    or branch records would reach outside its buffers (every one is checked
    before the tape can replay). Also raised when the tape uses a primitive
    that this process has not made with the same name and rules (code,
    captured values). The message says what is wrong and where. Fix: write
    the file again with ``tape.save``; for a missing primitive, import the
    module that makes it (``adsim.primitive(..., name=...)``) before loading.
    """


class NoCompiler(AdsimError, RuntimeError):
    """``Tape.fuse`` found no C compiler that builds its kernels (``$CC``,
    else ``cc``). Nothing changes: the tape replays with the interpreter."""
