"""``adsim.parallel.map`` and ``adsim.parallel.sum_gradients`` (docs/parallel.md)."""
import concurrent.futures
from math import ceil
import numbers
import pickle

import numpy as np

from .. import _tape
from .._validate import given, name_of
from ..errors import InvalidArgument, InvalidArgumentValue
from ._backends import run, workers_of
from ._shipping import ShippedFunction, ShippedTape, run_chunk

# the replay methods of adsim.Tape a batch may call
METHODS = ("forward", "gradient", "value_and_gradient", "jvp", "vjp", "hvp", "gradient_and_hvp",
           "jacobian")


def map(method, tape, points, executor=None, chunk_size=None, progress=None, **kwargs):
    """``[tape.<method>(point, **kwargs) for point in points]``, computed in
    parallel; results in the order of ``points``, bitwise equal to serial calls.

    Parameters
    ----------
    method : str
        One of ``METHODS``: "forward", "gradient", "value_and_gradient",
        "jvp", "vjp", "hvp", "gradient_and_hvp", "jacobian".
    tape : adsim.Tape or callable
        A finished tape (``adsim.record``). For a tape of several inputs each
        point is a tuple of arrays, one per input. Or the function ``f``
        itself: each worker thread records it at its first point
        (``adsim.record(f, *point)`` for a tuple, else ``adsim.record(f,
        point)``), replays that tape at the next points and records ``f``
        again where no tape it holds stays on its recorded path (an ODE
        solve whose steps change with the parameters, say), where a tape
        would raise ``BranchChanged``. A process pool sends ``f`` by name:
        define it at module level.
    points : iterable
        Input points.
    executor : optional
        ``None`` (a thread pool of this machine's cores: replays release the
        GIL), any ``concurrent.futures.Executor`` (a ``ProcessPoolExecutor``
        receives the tape as its tape file with every chunk), or a
        ``dask.distributed.Client`` (the tape is scattered to every worker
        once; chunks of points travel as tasks).
    chunk_size : int, optional
        Points per task (default: about four tasks per worker).
    progress : callable, optional
        ``progress(done, total)``, called in this thread as chunks finish.
    **kwargs
        Passed to every call (``v=`` for jvp and hvp, ``w=`` for vjp, ...).

    Notes
    -----
    Tapes holding primitives are sent by the primitives' names (they must be
    made with ``name=`` and made in the worker processes too); threads
    share the tape, but one holding an op that is not thread-safe (odeint)
    is copied for each thread that replays it.
    An error at some point is raised here (noting the point's index), after
    the tasks not yet started are cancelled. Results of a mapped tape are
    bitwise those of serial calls; those of a mapped function are the
    replays of tapes of ``f`` recorded at one of the points, each of which
    gives the values ``adsim.record(f, point)`` does, to rounding (a tape
    replayed often enough runs fused kernels: see docs/tape.md).
    """
    _check_method(method)
    _check_needed(method, kwargs)
    points = _listed(points, "map", "points", "an iterable of input points (a list of arrays, "
                     "or of tuples of arrays for a tape of several inputs)")
    if isinstance(tape, _tape.Tape):
        tape._check_recorded()
        shipped = tape
    elif callable(tape):
        shipped = _shipped_function(tape, executor)
    else:
        raise InvalidArgument(f"adsim.parallel.map: tape must be a tape (adsim.record) or the "
                              f"function to record, got {given(tape)}")
    return _batch(method, [shipped], [(0, p) for p in points], executor, chunk_size, progress,
                  kwargs)


def _shipped_function(f, executor):
    """``f`` mapped in place of a tape; refused at once where a process pool
    could not send it."""
    if isinstance(executor, concurrent.futures.ProcessPoolExecutor):
        try:
            pickle.dumps(f)
        except Exception as err:
            raise InvalidArgument(
                f"adsim.parallel.map: a process pool cannot send the function {name_of(f)} "
                f"({type(err).__name__}: {err}): pickle sends functions by name, so it must be "
                f"defined at module level in a module the workers can import. Or record it "
                f"and map the tape: adsim.parallel.map(method, adsim.record(f, x), points, "
                f"...), which travels as its tape file") from None
    return ShippedFunction(f)


def sum_gradients(tapes, inputs, executor=None, argnum=0, chunk_size=None, progress=None):
    """(sum of values, sum of gradients) of scalar tapes over experiments.

    ``tapes`` is one tape (the same model at every entry of ``inputs``) or a
    list with one tape per entry; ``inputs[i]`` is the point of experiment i
    (a tuple of arrays for a tape of several inputs). The gradient is taken
    with respect to input ``argnum`` of each tape (the shared parameters), and
    the sums run in the order of ``inputs``, so the result does not depend on
    the executor. ``executor``, ``chunk_size`` and ``progress`` as for
    :func:`map`.
    """
    inputs = _listed(inputs, "sum_gradients", "inputs", "an iterable with the point of each "
                     "experiment (an array, or a tuple of arrays for a tape of several inputs)")
    if isinstance(tapes, _tape.Tape):
        tapes, jobs = [tapes], [(0, x) for x in inputs]
    else:
        tapes = _listed(tapes, "sum_gradients", "tapes", "one tape (adsim.record), or a list "
                        "with one tape per experiment")
        if len(tapes) != len(inputs):
            raise InvalidArgumentValue(f"adsim.parallel.sum_gradients: {len(tapes)} tapes for "
                                       f"{len(inputs)} inputs; give one tape per input, or one "
                                       f"tape")
        unique = {}
        for t in tapes:
            unique.setdefault(id(t), len(unique))
        jobs = [(unique[id(t)], x) for t, x in zip(tapes, inputs)]
        tapes = list({id(t): t for t in tapes}.values())
    if not jobs:
        raise InvalidArgumentValue("adsim.parallel.sum_gradients: no experiments given (inputs "
                                   "is empty); give the point of at least one experiment")
    if not isinstance(argnum, numbers.Integral) or isinstance(argnum, bool):
        raise InvalidArgument(f"adsim.parallel.sum_gradients: argnum must be an int (the input "
                              f"of each tape to take the gradient with respect to), got "
                              f"{given(argnum)}")
    for i, t in enumerate(tapes):
        _check_tape(t, f"tapes[{i}]")
        if not 0 <= argnum < t.n_inputs:
            raise InvalidArgumentValue(f"adsim.parallel.sum_gradients: argnum={argnum!r}, but "
                                       f"tape {i} has {t.n_inputs} input(s); argnum must be in "
                                       f"0..{t.n_inputs - 1}")
    results = _batch("value_and_gradient", tapes, jobs, executor, chunk_size, progress, {})
    value, gradient = 0.0, None
    for (position, _), (v, g) in zip(jobs, results):
        g = g[argnum] if tapes[position].n_inputs > 1 else g
        if gradient is not None and np.shape(g) != np.shape(gradient):
            raise ValueError(f"adsim.parallel.sum_gradients: input {argnum} has shape "
                             f"{np.shape(g)} in one experiment and {np.shape(gradient)} in "
                             f"another")
        value = value + v
        gradient = np.array(g, dtype=float) if gradient is None else gradient + g
    return value, gradient


def _batch(method, tapes, jobs, executor, chunk_size, progress, kwargs):
    """Run ``jobs`` (tape position, point): results in order."""
    if progress is not None and not callable(progress):
        raise InvalidArgument(f"adsim.parallel: progress must be None or a callable "
                              f"progress(done, total), got {given(progress)}")
    if not jobs:
        return []
    if chunk_size is None:
        chunk_size = max(1, ceil(len(jobs) / (4 * workers_of(executor))))
    elif isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) \
            or chunk_size < 1:
        raise InvalidArgumentValue(f"adsim.parallel: chunk_size must be None (about four tasks "
                                   f"per worker) or a positive integer, got {given(chunk_size)}")
    shipped = [t if isinstance(t, ShippedFunction) else ShippedTape(t) for t in tapes]
    tasks = []
    for position, items in _chunks(jobs, int(chunk_size)):
        tasks.append((run_chunk, (method, shipped[position], items, kwargs), len(items)))
    return [r for chunk in run(tasks, executor, progress) for r in chunk]


def _chunks(jobs, size):
    """Runs of at most ``size`` consecutive jobs of the same tape, as
    (tape position, [(job index, point), ...])."""
    out, current, position = [], [], None
    for index, (p, point) in enumerate(jobs):
        if current and (p != position or len(current) == size):
            out.append((position, current))
            current = []
        position = p
        current.append((index, point))
    if current:
        out.append((position, current))
    return out


def _listed(values, entry, name, accepted):
    """``values`` (an iterable) as a list."""
    try:
        return list(values)
    except TypeError:
        raise InvalidArgument(f"adsim.parallel.{entry}: {name} must be {accepted}, got "
                              f"{given(values)}") from None


def _check_method(method):
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidArgumentValue(f"adsim.parallel: method {method!r} is not a replay of a "
                                   f"tape; use one of {', '.join(METHODS)}")


# the keyword argument each method needs, and what it is
_NEEDED = {"jvp": ("v", "the tangent direction"), "hvp": ("v", "the direction"),
           "gradient_and_hvp": ("v", "the direction"), "vjp": ("w", "the output weights")}


def _check_needed(method, kwargs):
    needed = _NEEDED.get(method)
    if needed is not None and needed[0] not in kwargs:
        raise InvalidArgument(f"adsim.parallel.map: method {method!r} needs {needed[0]}= "
                              f"({needed[1]}, the same at every point), as tape.{method} does")


def _check_tape(tape, what):
    if not isinstance(tape, _tape.Tape):
        raise InvalidArgument(f"adsim.parallel: {what} must be a tape (adsim.record), got "
                              f"{given(tape)}" + ("; record it first: adsim.record(f, x)"
                                                  if callable(tape) else ""))
    tape._check_recorded()
