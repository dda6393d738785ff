"""The functional API's tape cache: reuse a recording only when provably safe.

A :class:`TapeCache` keeps up to ``MAX_TAPES`` tapes of one function, keyed
by the positions and shapes of the tape inputs and the static arguments
(equal by type and value; arguments the function never reads are left out).
A cached tape is replayed only if the function's environment still matches
the :class:`~adsim._tapecache.purity.Snapshot` taken when it was recorded; otherwise,
or when the recording drew random numbers, changed its own environment or
read something no snapshot can see, the function is recorded afresh on that
call (``reuse_blocked_by`` says why). Caches are locked, so one transformed
function may be called from several threads; two threads recording at once
make two independent tapes.
"""
import functools
import inspect
import sys
import threading
import time
import types
import weakref
from collections import OrderedDict

import numpy as np

from .codeinfo import code_info, unused_parameters
from .purity import ResultNeutral, Snapshot, is_library
from .random_watch import RandomWatch
from .._record.interpose import scipy_imported_since
from .._record.recording import flat_output, record_inputs
from .._containers.tree import LEAF, flatten, unflatten
from .._validate import name_of as _name, real_array
from ..errors import AdsimError, BranchChanged, InvalidArgument, UnsupportedOperation

MAX_TAPES = 8       # tapes kept per function (distinct shapes / static arguments)
WALK_AGAIN_AFTER = 16   # recordings without a walk once the walk could not see the environment
DEARER = 4              # a walk this many times longer than the recording is not worth it
DEAR_WALK = 1e-3        # seconds: walks shorter than this are always worth it
DEAR_STRIKES = 3        # dear walks in a row before the cache stops walking (one may be a pause)
# Walks and recordings are timed in wall-clock time: reading this thread's
# CPU time is a system call (0.6 us, several under load, four per first
# recording), where perf_counter is read in user space. Other processes can
# stretch a walk's wall-clock time, but a walk under DEAR_WALK is never dear,
# and it takes DEAR_STRIKES dear walks in a row to stop walking.
_work_clock = time.perf_counter

# Code of functions whose recording restricted to what the environment walk
# saw failed (see TapeCache._record): recorded with everything changed since.
_UNRESTRICTED = weakref.WeakSet()

_CACHE_OFF = "cache=False: the function is recorded on every call"
_CHANGED_ITSELF = ("it changed its own environment while running (an attribute, a closure "
                   "variable or a container it reads), which a replay would not repeat")


def _raised_by_adsim(error):
    """Whether an adsim error is ``error`` or was being handled when it was
    raised (SciPy's wrappers re-raise errors of the functions they call)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, AdsimError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def record_reaching(f, values, kwargs, n_varied, reach, code):
    """``record_inputs`` with interposition restricted to the names in
    ``reach`` (None: everything changed), for ``f`` or a wrapper of a
    function of ``code``; made again with everything changed when adsim
    refused a call interposition did not reach (below)."""
    if reach is not None and code in _UNRESTRICTED:
        reach = None
    modules = len(sys.modules)
    try:
        return record_inputs(f, values, kwargs, n_varied, reach)
    except Exception as error:
        if not _raised_by_adsim(error):
            raise           # the function's own exceptions propagate at once, as always
        imported = len(sys.modules) != modules and scipy_imported_since(modules)
        if reach is None and not imported:
            raise
    # Two ways an adsim refusal can come from interposition that did not
    # reach a call: the walk can miss code that only exists at run time (an
    # object a library call returns), and SciPy modules first imported while
    # the function ran (``import scipy.ndimage`` inside it) are hooked only
    # when a recording starts. Either way such code hands active values to
    # NumPy's or SciPy's own functions, where adsim refuses them. Record once
    # more with everything changed (the error stands if it was not that);
    # code the walk missed is never restricted again.
    if reach is not None and code is not None:
        _UNRESTRICTED.add(code)
    return record_inputs(f, values, kwargs, n_varied, None)


class _Call:
    """One call's split into tape inputs and cache key."""

    __slots__ = ("args", "kwargs", "positions", "values", "n_varied", "key", "extras", "trees",
                 "out_tree", "out_shapes")


def _shape(v):
    return v.shape if type(v) is np.ndarray else np.shape(v)


class TapeCache(ResultNeutral):
    """Tapes of one function; see the module docstring.

    Attributes
    ----------
    recordings : int
        How often the function was recorded.
    reuse_blocked_by : str or None
        Why the latest recording could not be kept for reuse (None if it was).
    """

    def __init__(self, cache=True, opaque_outputs=False):
        self.cache = cache
        self.opaque_outputs = opaque_outputs    # non-numeric output leaves pass through
        self.tapes = OrderedDict()          # key -> (tape, snapshot)
        self._outputs = {}                  # key -> (output treedef, leaf shapes, seconds its
        #                                     recording took) of its tape
        self.recordings = 0
        self.reuse_blocked_by = None if cache else _CACHE_OFF
        self._lock = threading.Lock()
        self._last = None                   # newest snapshot, shared while it matches
        self._unseen = None                 # (snapshot the walk gave up on, recordings left)
        self._dear_walks = 0                # walks in a row dearer than recording

    def __repr__(self):
        blocked = self.reuse_blocked_by
        return (f"<adsim tape cache: {len(self.tapes)} tapes, {self.recordings} recordings"
                f"{'' if blocked is None else ', reuse blocked: ' + blocked}>")

    # ---- one call ----------------------------------------------------------
    def run(self, f, args, kwargs, argnums, method, all_varied=False):
        """``method(tape, input values)`` for the call ``f(*args, **kwargs)``
        with ``args[argnums]`` differentiated (arrays, and ``f`` returns one
        array), recording when needed and again if the replay finds that a
        branch changed. ``all_varied``: every tape input, data included, is
        differentiated (a nested derivative needs their mixed partials)."""
        def plain(tape, call):
            if not call.out_tree.is_leaf:
                raise InvalidArgument(f"adsim: {_name(f)} returned the container "
                                      f"{call.out_tree!r} (* marks an array); here it must "
                                      f"return one array")
            return method(tape, call.values)
        return self.run_call(f, args, kwargs, argnums, plain, all_varied)

    def run_call(self, f, args, kwargs, argnums, method, all_varied=False):
        """``method(tape, call)`` as :meth:`run`; differentiated arguments may
        be containers (``call.trees``, one leaf per tape input) and ``f`` may
        return one (``call.out_tree``, ``call.out_shapes``)."""
        call = self.split(f, args, kwargs, argnums, all_varied)
        tape = self._cached(f, call)
        if tape is None:
            tape = self._adopted(f, call)
        if tape is None:
            tape = self._record(f, call)
        try:
            return method(tape, call)
        except BranchChanged:
            return method(self._record(f, call), call)

    def split(self, f, args, kwargs, argnums, all_varied=False):
        """The tape inputs (differentiated arguments first, then the other
        float arrays: data, recorded as inputs that are never differentiated)
        and the cache key of a call."""
        call = _Call()
        call.args, call.kwargs = args, kwargs
        values, trees = [], []
        for i in argnums:
            a = args[i]
            if type(a) is np.ndarray and a.dtype == np.float64:     # the common case, at once
                values.append(a)
                trees.append(LEAF)
                continue
            if type(a) is np.ndarray or a is None:      # without a walk
                values.append(real_array(a, f"argument {i} of {_name(f)}"))
                trees.append(LEAF)
                continue
            leaves, tree = flatten(a)
            values += [real_array(leaf, f"argument {i}{path} of {_name(f)}")
                       for path, leaf in zip(tree.paths(), leaves)]
            trees.append(tree)
        call.trees = tuple(trees)
        n_varied = len(values)
        static, extras = [], []
        if len(args) == len(argnums):           # only differentiated arguments
            positions = list(argnums)
        else:
            positions = input_positions(args, argnums)
            values += [args[i] for i in positions[len(argnums):]]
        if self.cache and (kwargs or len(positions) < len(args)):
            unused = unused_parameters(f)
            params = code_info(f.__code__).positional if unused else ()
            for i, a in enumerate(args):
                if i not in positions and not (i < len(params) and params[i] in unused):
                    static.append((i, self._static(a, extras)))
            for k in sorted(kwargs):
                if k not in unused:
                    static.append((k, self._static(kwargs[k], extras)))
        call.positions, call.values = positions, values
        call.n_varied = len(values) if all_varied else n_varied
        call.extras = tuple(extras)
        call.key = (tuple(positions), tuple(_shape(v) for v in values), tuple(static),
                    call.trees, call.n_varied) if self.cache else None
        return call

    @staticmethod
    def _static(a, extras):
        key = static_key(a)
        if key is None:                     # not plain data: compared by the snapshot
            extras.append(a)
            return ("object", type(a))
        return key

    # ---- cache -------------------------------------------------------------
    def _cached(self, f, call):
        if call.key is None or not self.tapes:      # (a first call: nothing to look up)
            return None
        with self._lock:
            entry = self.tapes.get(call.key)
            if entry is not None:
                self.tapes.move_to_end(call.key)
                output = self._outputs[call.key]
        if entry is None:
            return None
        started = _work_clock()
        if not entry[1].matches(f, call.extras):
            return None
        reason = self._dearer_walk(_work_clock() - started, output[2], call.extras)
        if reason is not None:                  # replayed this once, recorded from now on
            with self._lock:
                self.tapes.clear()
                self._outputs.clear()
                self._last = None
                self.reuse_blocked_by = reason
        call.out_tree, call.out_shapes = output[:2]
        return entry[0]

    def _adopted(self, f, call):
        """A tape another function of the same code recorded (``_SameCode``),
        taken as this function's when this function's environment matches
        the snapshot taken with it; else None."""
        if call.key is None or not _same_code.takes(f):
            return None
        entry = _same_code.get(f.__code__, self.opaque_outputs, call.key)
        if entry is None or not entry[1].matches(f, call.extras):
            return None
        tape, snapshot, output = entry
        with self._lock:
            self.tapes[call.key] = (tape, snapshot)
            self._outputs[call.key] = output
            self.tapes.move_to_end(call.key)
            if len(self.tapes) > MAX_TAPES:
                self._outputs.pop(self.tapes.popitem(last=False)[0])
            self._last = snapshot
        call.out_tree, call.out_shapes = output[:2]
        return tape

    def _snapshot(self, f, extras):
        last = self._last
        if last is not None and last.matches(f, extras):
            return last
        # An environment the walk gave up on (too many values, an iterator), or
        # whose walk costs more than recording the function, is recorded on
        # every call: walking it each time would only add its cost to the
        # recording's. It is walked again every WALK_AGAIN_AFTER recordings,
        # in case it changed.
        unseen = self._unseen
        if unseen is not None and unseen[1] > 0 and not extras:
            self._unseen = (unseen[0], unseen[1] - 1)
            return unseen[0]
        snapshot = Snapshot(f, extras)
        self._unseen = (snapshot, WALK_AGAIN_AFTER - 1) if snapshot.tokens is None else None
        return snapshot

    def _record(self, f, call):
        snapshot = watch = None
        started = _work_clock()
        if call.key is not None:
            snapshot = self._snapshot(f, call.extras)
            if snapshot.blocked is None:
                watch = RandomWatch(snapshot.randoms)
        walked = _work_clock() - started
        reach = None if snapshot is None else snapshot.reach
        code = getattr(f, "__code__", None)
        started = _work_clock()
        tape = record_reaching(_with_inputs(f, call, self.opaque_outputs), call.values, {},
                               call.n_varied, reach, code)
        if reach is not None and code in _UNRESTRICTED:
            snapshot.reach = None       # (the walk missed code: see record_reaching)
        recorded = _work_clock() - started
        if snapshot is None:
            blocked = _CACHE_OFF
        else:
            blocked = snapshot.blocked or watch.changed() or (
                None if snapshot.matches(f, call.extras) else _CHANGED_ITSELF) or \
                self._dearer_walk(walked, recorded, call.extras)
        with self._lock:
            self.recordings += 1
            self.reuse_blocked_by = blocked
            if blocked is None:
                self.tapes[call.key] = (tape, snapshot)
                self._outputs[call.key] = (call.out_tree, call.out_shapes, recorded)
                self.tapes.move_to_end(call.key)
                if len(self.tapes) > MAX_TAPES:
                    self._outputs.pop(self.tapes.popitem(last=False)[0])
                self._last = snapshot
                if _same_code.takes(f) and (walked <= DEAR_WALK or walked <= DEARER * recorded):
                    _same_code.put(f.__code__, self.opaque_outputs, call.key, tape, snapshot,
                                   self._outputs[call.key])
            else:
                self.tapes.pop(call.key, None)
                self._outputs.pop(call.key, None)
                if self._last is snapshot or self._unseen is not None:
                    self._last = None           # (so that no walk precedes the next recording)
        return tape

    def _dearer_walk(self, walked, recorded, extras):
        """Why tapes are no longer kept when walking the function's environment
        took longer than recording it, DEAR_STRIKES times in a row (many small
        Python objects to check, few of them read), else None. Its next
        recordings skip the walk (``_snapshot``)."""
        if walked <= DEAR_WALK or walked <= DEARER * recorded or extras:
            self._dear_walks = 0
            return None
        self._dear_walks += 1
        if self._dear_walks < DEAR_STRIKES:
            return None
        self._dear_walks = 0
        reason = (f"checking its environment takes longer than recording it ({walked * 1e3:.1f} "
                  f"ms against {recorded * 1e3:.2f} ms)")
        self._unseen = (Snapshot.unchecked(reason), WALK_AGAIN_AFTER - 1)
        return reason


class _SameCode:
    """The newest tapes recorded, by the code of the function recorded:
    ``adsim.grad(lambda p: loss(p, data))(p)`` written in a loop makes a new
    function at every call, whose own cache is empty, but its code, and
    usually its environment, are those of the last call's. A function of the
    same code whose environment matches the snapshot taken with a tape here
    (the check a function's own cache makes before each replay) replays it
    instead of recording. Bounded: ``MAX_ENTRIES`` tapes over all codes,
    each holding at most ``MAX_BYTES`` and no Python callback (small
    functions, where recording is the cost) and checked faster than recorded (a large array in the
    environment is digested at each check), the least recently used
    dropped first; the entries hold the code objects, not the functions.
    Only user code takes part: the closures
    adsim and SciPy make hold objects (rules, tapes) that snapshots count as
    neutral, which the same code holds other ones of in another closure."""

    MAX_ENTRIES = 64
    MAX_BYTES = 2 ** 20

    def __init__(self):
        self._entries = OrderedDict()   # (code, opaque outputs, call key) -> (tape, snapshot,
        #                                 outputs)
        self._lock = threading.Lock()

    @staticmethod
    def takes(f):
        return type(f) is types.FunctionType and not is_library(f.__module__)

    def get(self, code, opaque, key):
        if not self._entries:
            return None
        with self._lock:
            entry = self._entries.get((code, opaque, key))
            if entry is not None:
                self._entries.move_to_end((code, opaque, key))
            return entry

    def put(self, code, opaque, key, tape, snapshot, output):
        if tape.held_bytes > self.MAX_BYTES or tape.callbacks:
            return      # (a callback's Python objects may hold the function itself)
        with self._lock:
            self._entries[code, opaque, key] = (tape, snapshot, output)
            self._entries.move_to_end((code, opaque, key))
            while len(self._entries) > self.MAX_ENTRIES:
                self._entries.popitem(last=False)

    def clear(self):
        with self._lock:
            self._entries.clear()


_same_code = _SameCode()


def input_positions(args, argnums):
    """Positions of a call's tape inputs: the differentiated arguments, then
    the other float arrays (so new values of those need no recording)."""
    return list(argnums) + [i for i, a in enumerate(args) if i not in argnums
                            and isinstance(a, np.ndarray) and a.dtype.kind == "f"]


# ---- cache keys --------------------------------------------------------------

class ArrayKey:
    """A non-differentiated array argument as part of a cache key (by dtype,
    shape and exact contents)."""

    __slots__ = ("_key", "_hash")

    def __init__(self, array):
        self._key = (type(array), array.dtype.str, array.shape, array.tobytes())
        self._hash = hash(self._key)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return isinstance(other, ArrayKey) and self._key == other._key


def static_key(v):
    """A hashable key equal exactly when two static arguments are equal by
    type and value (so ``2`` and ``2.0`` differ), or None for values that
    are not plain data (those are compared by :class:`Snapshot`)."""
    t = type(v)
    if t is int or t is str or t is bool or v is None or t is bytes:
        return (t, v)
    if t is float:
        return (t, v if v == v and v != 0.0 else v.hex())
    if t is complex:
        return (t, v.real.hex(), v.imag.hex())
    if isinstance(v, np.ndarray):
        return None if v.dtype.hasobject else ArrayKey(v)
    if isinstance(v, np.generic):
        return (t, v.tobytes()) if not isinstance(v, np.object_) else None
    if t is tuple or t is list:
        keys = tuple(static_key(e) for e in v)
        return None if any(k is None for k in keys) else (t, keys)
    if t is dict:
        items = tuple((static_key(k), static_key(e)) for k, e in v.items())
        return None if any(a is None or b is None for a, b in items) else (t, items)
    return None


def _with_inputs(f, call, opaque=False):
    """``f`` as a function of the tape inputs alone (other arguments fixed):
    containers are rebuilt from their leaves, and a container returned is
    flattened to one array (its structure kept in ``call``)."""
    args, kwargs, positions, trees = call.args, call.kwargs, call.positions, call.trees

    def inputs_to_f(*inputs):
        full = list(args)
        lo = 0
        for k, pos in enumerate(positions):
            tree = trees[k] if k < len(trees) else LEAF
            n = tree.n_leaves
            full[pos] = inputs[lo] if tree.is_leaf else unflatten(tree, inputs[lo:lo + n])
            lo += n
        try:
            result = f(*full, **kwargs)
        except TypeError as err:
            _refuse_misfit(f, err, full, kwargs)
            raise
        out, call.out_tree, call.out_shapes = flat_output(result, _name(f), opaque)
        return out
    inputs_to_f.__name__ = _name(f)
    return inputs_to_f


def _refuse_misfit(f, err, args, kwargs):
    """Name a call of the user's Python function ``f`` that did not fit its
    signature (a TypeError raised by the call itself, before f ran: one
    raised inside f is f's own and passes), or an ndarray method
    (``np.ndarray.sum``) given as f, which takes ndarrays only."""
    if isinstance(f, types.MethodDescriptorType) and f.__objclass__ is np.ndarray:
        raise UnsupportedOperation(f"adsim: f is the method np.ndarray.{f.__name__}, which "
                                   f"takes only NumPy arrays, not the active arrays adsim "
                                   f"passes; pass a function: lambda x: x.{f.__name__}() or "
                                   f"np.{f.__name__} where NumPy has it") from err
    if err.__traceback__.tb_next is None and isinstance(f, (types.FunctionType,
                                                            types.MethodType)):
        shown = ", ".join(["x"] * len(args) + [f"{k}=..." for k in kwargs])
        try:
            form = f"{_name(f)}{inspect.signature(f)}"
        except (TypeError, ValueError):
            form = _name(f)
        misfit = InvalidArgument(f"adsim: a function adsim made (grad(f), jacobian(f), ...) "
                                 f"passes its arguments to f unchanged, and {_name(f)}({shown}) "
                                 f"raised \"{err}\"; call it with the arguments of {form}")
        misfit.off_signature = True      # jvp and vjp say more of their primals
        raise misfit from err


# ---- caches shared per function -------------------------------------------------
#
# ``adsim.grad(f)(x)`` written inline makes a new transformed function at every
# call, so the tapes live with ``f``, not with the transformed function: every
# ``grad``/``value_and_grad``/``jacobian`` of ``f`` (cache=True) and the one-shot
# functions share them. Entries are keyed by the ids of the objects whose life
# they follow and hold only weak references to them: an entry goes when one of
# them dies (its weakref callback runs before the id can be reused).

_shared = {}        # (ids of the parts of f, opaque_outputs) -> (weakrefs of the parts, TapeCache)
_shared_lock = threading.Lock()


def _parts(f):
    """The objects a cache of ``f`` lives with: a bound method's function and
    owner (``model.loss`` makes a new method object at each access), else ``f``."""
    if type(f) is types.MethodType:
        return (f.__func__, f.__self__)
    return (f,)


def shared_cache(f, opaque_outputs=False):
    """The tape cache kept for ``f`` (see above): it lives as long as ``f``
    (a bound method: its function and owner) and holds no reference to it.
    Objects that cannot be weakly referenced get a new cache each time."""
    parts = _parts(f)
    key = (id(f), opaque_outputs) if len(parts) == 1 else \
        (id(parts[0]), id(parts[1]), opaque_outputs)
    entry = _shared.get(key)
    if entry is not None and all(r() is p for r, p in zip(entry[0], parts)):
        return entry[1]
    cache = TapeCache(opaque_outputs=opaque_outputs)
    try:
        refs = tuple(weakref.ref(p, functools.partial(_forget, key)) for p in parts)
    except TypeError:           # not weak-referenceable: no sharing
        return cache
    with _shared_lock:
        entry = _shared.get(key)
        if entry is not None and all(r() is p for r, p in zip(entry[0], parts)):
            return entry[1]     # another thread made it meanwhile
        _shared[key] = (refs, cache)
    return cache


def _forget(key, dead):
    """Weakref callback: drop the entry ``dead`` belonged to. No lock: it may
    run inside any allocation, also while this thread holds the lock; a dict
    pop is atomic."""
    shared = _shared
    if shared is None:          # interpreter shutdown: the module's globals are gone
        return
    entry = shared.get(key)
    if entry is not None and any(r is dead for r in entry[0]):
        shared.pop(key, None)
