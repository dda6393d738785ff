"""Tapes on their way to workers, and the function workers run.

A :class:`ShippedTape` is the tape itself inside this process (a thread pool
shares it) and its tape file when pickled (a process pool or a Dask worker
receives bytes, never the user's code). A worker process loads those bytes
once: loaded tapes are cached per process under the SHA-256 of their file.
Replays of one tape are thread-safe; a tape holding a callback that does
not say so (``thread_safe``: primitives and checkpointed loops do, odeint
does not) gets a copy per thread, loaded from its file (SciPy's LSODA runs
of odeint and solve_ivp take turns, adsim/integrate/_recorded_fun.py). One
that tape files cannot hold (an odeint with the user's ``Dfun``, code) is
replayed by the threads of this process one call at a time, under one lock
for all such tapes.
"""
import collections
import contextlib
import hashlib
import threading
import uuid

from ..api import record
from ..errors import BranchChanged, TapeCopyError
from ..tapefile import dumps, loads

_CACHED = 4                     # loaded tapes a worker process (or thread) keeps
_process_cache = collections.OrderedDict()
_process_lock = threading.Lock()
_thread_cache = threading.local()
# replays of tapes that threads may neither share nor copy, one at a time
_serial_replays = threading.Lock()


def shared_by_threads(tape):
    """Whether threads may replay ``tape`` at once: its callbacks keep no
    state between calls (primitives, and checkpointed loops whose steps call
    only such callbacks)."""
    return all(getattr(cb, "thread_safe", False) for cb in tape.callbacks)


class ShippedTape:
    """A tape for a batch of tasks (see the module docstring)."""

    def __init__(self, tape=None, data=None, key=None, shared=None):
        self._tape = tape
        self._data = data
        self._key = key
        self.shared = shared_by_threads(tape) if shared is None else shared
        self._lock = threading.Lock()
        self._uncopyable = False

    def data(self):
        """The tape file, written on first use: (key, bytes)."""
        with self._lock:
            if self._data is None:
                try:
                    self._data = dumps(self._tape)
                except TapeCopyError as err:
                    self._uncopyable = True
                    _note(err, "adsim.parallel sends tapes to processes and Dask workers as "
                               "tape files: map this tape on threads (executor=None or a "
                               "ThreadPoolExecutor), which replay it in this process")
                    raise
                self._key = hashlib.sha256(self._data).hexdigest()
            return self._key, self._data

    def nbytes(self):
        return len(self.data()[1])

    def __reduce__(self):
        key, data = self.data()
        return (ShippedTape, (None, data, key, self.shared))

    def tape(self):
        """The tape the calling thread replays and the lock it holds while
        replaying it (a context manager; a null one for most tapes)."""
        if self.shared and self._tape is not None:
            return self._tape, contextlib.nullcontext()
        if not self.shared and self._tape is not None and not self._copyable():
            return self._tape, _serial_replays
        key, data = self.data() if self._tape is not None else (self._key, self._data)
        if self.shared:
            return _cached(_process_cache, key, data, _process_lock), contextlib.nullcontext()
        cache = getattr(_thread_cache, "tapes", None)
        if cache is None:
            cache = _thread_cache.tapes = collections.OrderedDict()
        return _cached(cache, key, data, None), contextlib.nullcontext()

    def _copyable(self):
        """Whether the tape has a tape file (written here on first use)."""
        if not self._uncopyable:
            try:
                self.data()
            except TapeCopyError:
                pass
        return not self._uncopyable


def _cached(cache, key, data, lock):
    """The tape of file ``data`` from ``cache`` (an LRU of _CACHED), loaded on a miss."""
    if lock is not None:
        with lock:
            tape = cache.get(key)
    else:
        tape = cache.get(key)
    if tape is None:
        tape = loads(data)
        if lock is not None:
            lock.acquire()
        try:
            tape = cache.setdefault(key, tape)
            cache.move_to_end(key)
            while len(cache) > _CACHED:
                cache.popitem(last=False)
        finally:
            if lock is not None:
                lock.release()
    return tape


# methods whose arguments are the tape's inputs one by one (a point of a
# tape with several inputs is a tuple of arrays, spread over them)
SPREAD = ("forward", "gradient", "value_and_gradient", "jacobian")


def run_chunk(method, shipped, items, kwargs):
    """``tape.<method>(point, **kwargs)`` for each (index, point) of
    ``items``, in order; an error names the index of its point."""
    if isinstance(shipped, ShippedFunction):
        return _run_function_chunk(method, shipped, items, kwargs)
    tape, guard = shipped.tape()
    call = getattr(tape, method)
    spread = method in SPREAD and tape._n_arguments() > 1
    out = []
    for index, point in items:
        try:
            with guard:
                out.append(call(*point, **kwargs) if spread else call(point, **kwargs))
        except Exception as err:
            _note(err, f"adsim.parallel: raised by {method} at point {index}")
            if isinstance(err, BranchChanged):
                _note(err, "adsim.parallel: map the recorded function instead of its tape, "
                           "adsim.parallel.map(method, f, points, ...), to have it recorded "
                           "again where a tape's branches do not hold")
            raise
    return out


class ShippedFunction:
    """A function mapped instead of a tape: each worker thread records it at
    its first point, replays that tape at the next ones, and records it
    again where none of its tapes' branches holds (as ``adsim.grad`` does).
    Pickled by reference, as pickle sends functions (a process pool needs
    one defined at module level; Dask's pickler also sends others); the
    token names its tapes in the workers across chunks."""

    MAX_TAPES = 8       # tapes a worker thread keeps per function

    def __init__(self, f, token=None):
        self.f = f
        self.token = token or uuid.uuid4().hex

    def __reduce__(self):
        return (ShippedFunction, (self.f, self.token))

    def tapes(self):
        """This thread's tapes of the function, the one used last first."""
        kept = getattr(_thread_cache, "functions", None)
        if kept is None:
            kept = _thread_cache.functions = collections.OrderedDict()
        tapes = kept.setdefault(self.token, [])
        kept.move_to_end(self.token)
        while len(kept) > _CACHED:
            kept.popitem(last=False)
        return tapes


def _run_function_chunk(method, shipped, items, kwargs):
    tapes = shipped.tapes()
    out = []
    for index, point in items:
        several = type(point) is tuple
        try:
            for k, tape in enumerate(tapes):
                try:
                    result = _call(tape, method, point, several, kwargs)
                except BranchChanged:
                    continue
                tapes.insert(0, tapes.pop(k))
                break
            else:
                tape = record(shipped.f, *point) if several else record(shipped.f, point)
                result = _call(tape, method, point, several, kwargs)
                tapes.insert(0, tape)
                del tapes[ShippedFunction.MAX_TAPES:]
            out.append(result)
        except Exception as err:
            _note(err, f"adsim.parallel: raised by {method} at point {index}")
            raise
    return out


def _call(tape, method, point, several, kwargs):
    call = getattr(tape, method)
    return call(*point, **kwargs) if several and method in SPREAD else call(point, **kwargs)


def _note(err, text):
    """Add ``text`` to the error's notes (``__notes__``, which tracebacks show
    from Python 3.11 on)."""
    if hasattr(err, "add_note"):
        err.add_note(text)
    else:
        err.__notes__ = list(getattr(err, "__notes__", ())) + [text]
