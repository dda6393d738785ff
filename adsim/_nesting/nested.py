"""Derivatives taken inside a recording (nested differentiation).

``ad.jacobian(F)(y)`` or ``ad.grad(f)(y)`` on an ACTIVE ``y`` — a Newton
iteration inside a recorded time step, say — is recorded as one primitive:
its value is the derivative at the current point (a replay of an inner
tape), and its own derivatives are second-order sweeps of that inner tape.
For F with m outputs, a directional derivative of J costs m second-order
sweeps (one per output weight e_i): fine for the small systems of implicit
integrators, not meant for large m.

Higher orders: when the primitive's own rules are recorded (a second-order
sweep of a tape holding it records its vjp rule on active arrays; a
derivative of a derivative of a derivative), they differentiate J written
out as recorded ops (adsim/_nesting/transcribe.py), through another nested
derivative — so each order adds one level, and any order is reached.

Tape files: every rule replays tapes of the inner function through a source
(:class:`RecordedInner`, a tape cache that records the function again where
a path does not hold, keeping the tapes it used as variants; or
:class:`SavedInner`, those variants loaded from a file, which raises
BranchChanged where none holds). :class:`NestedApplication` saves the
variants and where the op's arguments go among their inputs, so a loaded
nested derivative runs the same rules on the same tapes.
"""
import contextlib
import functools
import threading

import numpy as np

from . import transcribe
from .._tapecache.cache import TapeCache, input_positions
from .._tapecache.purity import ResultNeutral, lifts_active_values
from .._tapecache.recorded_again import KeptRecording
from .._filefields import expect_keys, no_variant_holds, shape_field
from .._np.integers import current
from .outer_values import outer_slots, reads_recorded_values, recording_in_progress  # noqa: F401
from .._active import Active
from .._containers.tree import placed
from ..errors import BranchChanged, UnsupportedOperation
from .._validate import name_of as _name, real_array
from ..primitives import Application, Primitive


def closure_actives(f):
    """The places holding active arrays of a recording in progress that
    ``f`` reads from outside its arguments -- its closure (``lambda y: k *
    y`` with ``k`` active), the object it is bound to or closes over
    (``self.beta``), a module global -- with their arrays
    (adsim/_nesting/outer_values.py). Functions ``f`` reaches are searched too
    (``ad.jacobian(ad.grad(lambda w: k * w))``: the lambda's ``k`` is read
    through the gradient function)."""
    if not recording_in_progress():
        return []
    return closure_cells(f, lambda v: isinstance(v, Active) and v.tape.recording)


def closure_cells(f, wanted):
    """The places ``f`` reads from outside its arguments (closure cells,
    attributes, globals: :class:`adsim._nesting.outer_values.Slot`) whose contents
    ``wanted`` accepts, with their contents; each place once."""
    return outer_slots(f, wanted)


def distinct_slots(groups):
    """The slots of ``groups`` (lists of ``(slot, value)``), each place once."""
    slots, keys = [], set()
    for group in groups:
        for slot, _ in group:
            if slot.key not in keys:
                keys.add(slot.key)
                slots.append(slot)
    return slots


def _lifted(f, slots):
    """``f`` with the values of ``slots`` as extra trailing arguments: while
    it runs, each slot holds the value passed (an active array of the inner
    recording, or a plain array), so the inner tape takes the outer values
    as inputs and the nested derivative includes their mixed partials."""
    lifted = _lifting(f, slots)
    lifted.__name__ = _name(f)
    return keep_attributes(lifted, f)


def _lifting(f, slots):
    n = len(slots)

    def lifted(*args, **kwargs):
        with swapped(slots, args[len(args) - n:]):
            return f(*args[:len(args) - n], **kwargs)
    return lifted


# a tape cache's snapshot of a lifted function counts the active values in
# the lifted places by shape: its tapes take them as inputs
lifts_active_values(_lifting(None, ()).__code__)


@contextlib.contextmanager
def swapped(slots, values):
    """``slots`` holding ``values`` for the duration of the block, and their
    own values again after it, whatever the block raises."""
    outer = [slot.get() for slot in slots]
    try:
        for slot, v in zip(slots, values):
            slot.set(v)
        yield
    finally:
        for slot, v in zip(slots, outer):
            slot.set(v)


def wrapped(f, body):
    """``body(f, *args, **kwargs)`` as a function of ``(*args, **kwargs)``
    that bears ``f``'s name and attributes (``keep_attributes``), for the
    wrappers that lift arguments of code recorded on a tape of its own;
    ``None`` (an absent Jacobian or event) stays ``None``."""
    if f is None:
        return None

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return body(f, *args, **kwargs)
    return keep_attributes(wrapper, f)


def keep_attributes(wrapper, f):
    """``wrapper`` of ``f`` with ``f``'s attributes: its own, and an event's
    ``terminal`` and ``direction``, which SciPy reads with getattr, so
    that they may come from the class of a callable object too."""
    wrapper.__dict__.update(getattr(f, "__dict__", {}))
    for name in ("terminal", "direction"):
        if name not in wrapper.__dict__ and hasattr(f, name):
            setattr(wrapper, name, getattr(f, name))
    return wrapper


def lift_closures(functions, args):
    """``functions`` (sharing trailing extra arguments) and ``args`` with
    the active values the functions read from their closures appended, for
    code recorded on a tape of its own (a checkpointed step, a condition):
    the step then takes them as loop inputs."""
    slots = distinct_slots(closure_actives(f) for f in functions)
    if not slots:
        return list(functions), tuple(args)
    return [_lifted(f, slots) for f in functions], tuple(args) + tuple(s.get() for s in slots)


def nested_derivative(f, args, kwargs, argnum, cache):
    """Record d f(args)/d args[argnum] (Jacobian, shaped out.shape + x.shape)
    as one op whose inputs are the active arguments of ``args``, its float
    arrays (constants of the op, so that a tape file keeps them) and the
    active arrays ``f`` reads from its closure (an outer variable: they are
    inputs of the inner tape, so no perturbation is confused)."""
    inner, args, positions = _inner_call(f, args, kwargs, argnum, cache)
    return _derivative(inner, args, positions)(*[args[p] for p in positions])


def transcribed_derivative(f, args, kwargs, argnum, cache):
    """The Jacobian of :func:`nested_derivative` written out as ordinary ops
    of the recording in progress (adsim/_nesting/transcribe.py) instead of
    one op: its replays and sweeps then run in C with the rest of the tape,
    at the cost of recording one reverse pass of ``f`` per output element
    (for small systems). The inner tape's comparisons are recorded on the
    outer tape, whose replays check them."""
    inner, args, positions = _inner_call(f, args, kwargs, argnum, cache)
    return _recorded_jacobian(inner, args, positions, [args[p] for p in positions])


def _inner_call(f, args, kwargs, argnum, cache):
    """(the inner function's source, the arguments with the active values
    ``f`` reads from its closure appended, the positions of the op's
    arguments: the active ones and the float arrays)."""
    lifts = closure_actives(f)
    if lifts:
        f = _lifted(f, [slot for slot, _ in lifts])
        args = tuple(args) + tuple(v for _, v in lifts)
    positions = [i for i, a in enumerate(args) if isinstance(a, Active) or float_array(a)]
    if argnum not in positions:
        positions.append(argnum)
    return RecordedInner(f, kwargs, argnum, cache), args, positions


def _recorded_jacobian(inner, args, positions, values):
    """J at ``values`` (of the arguments at ``positions``; some active) as
    recorded ops of their tape (the inner tape is recorded again when its
    path does not hold there)."""
    full = placed(args, positions, values)
    plain = [current(v) if isinstance(v, Active) else v for v in full]
    inputs = [full[p] for p in input_positions(plain, (inner.argnum,))]

    def method(tape, vals):
        tape._forward(tape._inputs(vals))        # BranchChanged: recorded again
        return transcribe.jacobian(tape, inputs, 0)
    return inner.run(plain, method)


def float_array(a):
    """An argument that is a tape input of the inner function (cache.input_positions)."""
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


_MAX_VARIANTS = 16      # inner tapes a nested derivative keeps for tape files


class _Variants:
    """The tapes of its inner function a nested derivative replayed (one
    per branch path met), the one used last first: what a tape file saves."""

    def __init__(self, tapes=()):
        self._tapes = list(tapes)
        self._lock = threading.Lock()

    def use(self, tape):
        tapes = self._tapes
        if tapes and tapes[0] is tape:      # already first (most replays): no lock
            return
        with self._lock:
            self._tapes = [tape] + [t for t in self._tapes if t is not tape][:_MAX_VARIANTS - 1]

    def tapes(self):
        with self._lock:
            return list(self._tapes)


class RecordedInner:
    """The inner function of a derivative op (a nested derivative, the
    sparse Jacobian of solve_ivp's implicit methods) in the process that has
    it: a tape cache records ``f`` (differentiated in argument ``argnum``),
    again where a replay leaves its path. The tapes used are its variants,
    which a tape file saves. Tape inputs are ``full[argnum]``, then the other
    float arrays of ``full`` in order (``cache.input_positions``).

    The tape the op's value used is kept (``pinned``) and serves its rules
    while its path holds: they run after the recording has gone on, when
    what ``f`` reads besides its arguments may have changed (a loop's
    counter, a list updated in place), and must differentiate the function
    the value was computed with. A replay that leaves its path asks the
    cache, which records ``f`` again as it reads now."""

    def __init__(self, f, kwargs, argnum, cache):
        self.f, self.kwargs, self.argnum, self.cache = f, kwargs, argnum, cache
        self.name = _name(f)
        self.variants = _Variants()
        self.pinned = None
        self._origin = None     # the pinned tape's arguments and value

    def run(self, full, method):
        """``method(tape, tape input values)`` on the tape of ``f`` at ``full``."""
        pinned = self.pinned
        if pinned is not None:
            try:
                return method(pinned, _tape_inputs(full, self.argnum))
            except BranchChanged:
                self._check_origin()

        def used(tape, values):
            if self.pinned is None:
                kept = KeptRecording(tape, values)      # BranchChanged: recorded here
                self.pinned, self._origin = tape, ([np.array(v) if isinstance(v, np.ndarray)
                                                    else v for v in full], kept)
            self.variants.use(tape)
            return method(tape, values)
        return self.cache.run(self.f, tuple(full), self.kwargs, (self.argnum,), used,
                              all_varied=True)

    def _check_origin(self):
        """Before the cache records ``f`` again (a replay leaving the pinned
        tape's path), after the program may have changed what ``f`` reads
        besides its arguments: at the pinned tape's arguments ``f`` must
        still compute what it did, else the new tape would be of a function
        the program never differentiated (FirstPoint).

        Recorded again through the cache, as the pinned tape was: with every
        float array of the call an input (``all_varied``), the other
        arguments static, the keyword arguments and lifted closure values as
        they were. A recording with the differentiated argument the only
        input folds the ops on the others into constants and never matches
        (recorded_again.py). The cache replays the tape it holds there when
        the function's environment is unchanged, records it else."""
        if self._origin is None:
            return
        full, kept = self._origin

        def again(*point):      # (``full`` holds the point's values)
            def replayed(tape, values):
                tape.forward(*values)       # BranchChanged: the cache records f again
                return tape
            return self.cache.run(self.f, tuple(full), self.kwargs, (self.argnum,), replayed,
                                  all_varied=True)
        if not kept.computed_again(again):
            raise BranchChanged(
                f"adsim: a derivative of `{self.name}` taken inside a recording must be "
                f"recorded again here (a replay at a point where its recorded path does not "
                f"hold), but `{self.name}` no longer computes what it did when the program "
                f"took the derivative: what it reads besides its arguments (a closure, a "
                f"global, an object's attribute, a dict or array updated in place) changed "
                f"since. Record the program again here (adsim.grad and the other "
                f"transformations do), pass such values as arguments, or leave them unchanged "
                f"until the derivatives are taken")


def _tape_inputs(full, argnum):
    """The inner tape's input values at the arguments ``full``: argument
    ``argnum``, then the other float arrays in order (as the cache splits them)."""
    order = input_positions(full, (argnum,))
    return [real_array(full[argnum], f"argument {argnum}")] + [full[p] for p in order[1:]]


class SavedInner:
    """The inner function of a derivative op loaded from a tape file: its
    recorded variants, no code (``what`` names the op in messages)."""

    def __init__(self, name, argnum, tapes, what):
        self.name, self.argnum, self.what = name, argnum, what
        self.variants = _Variants(tapes)

    def run(self, full, method):
        """``method`` on the first variant whose path holds at ``full``;
        BranchChanged if none does (it cannot record ``f`` again)."""
        values = _tape_inputs(full, self.argnum)
        tapes, changed = self.variants.tapes(), None
        for tape in tapes:
            try:
                result = method(tape, values)
            except BranchChanged as err:
                changed = err
                continue
            self.variants.use(tape)
            return result
        raise no_variant_holds(self.what, len(tapes), "function", f"`{self.name}`") from changed


class RecordingInner(SavedInner):
    """The inner function of an op whose values run on its tapes (an event
    time, an integral, a solve), in the process that has the function: the
    variants as loaded ones are tried first, and where none holds
    ``function(*full)`` is recorded again (all its arguments float arrays,
    in the tapes' input order) and becomes the first variant."""

    def __init__(self, function, name, what):
        super().__init__(name, 0, (), what)
        self.function = function
        self._recorder = FirstPoint(function, name, what)

    def run(self, full, method):
        try:
            return super().run(full, method)
        except BranchChanged:
            tape = self._recorder.record(full)
            self.variants.use(tape)
            return method(tape, list(full))


class FirstPoint:
    """Records ``function`` (of float arrays) for an op that runs on its
    tapes, keeping the point, op codes and value of its first recording.
    Each later recording happens where a replay or a rule meets a point at
    which none of its paths holds, when the program may have changed what
    the function reads besides its arguments (a dict of settings updated in
    place, an object's attribute): recorded again at its first point it must
    compute what it computed there, else the new variant would be of a
    function the program never called, and its values wrong without an
    error: BranchChanged, so that the program is recorded again. (A change
    that only the other paths read goes unseen.)"""

    def __init__(self, function, name, what):
        self.function, self.name, self.what = function, name, what
        self._first = None

    def record(self, full):
        from .._record.recording import record
        if self._first is not None and \
                not self._first.computed_again(functools.partial(record, self.function)):
            raise BranchChanged(
                f"adsim: {self.what} must be recorded again here (a replay or a derivative "
                f"at a point where none of its recorded paths holds), but `{self.name}` no "
                f"longer computes what it did when the program called it: what it reads "
                f"besides its arguments (a closure, a global, an object's attribute, a dict "
                f"or array updated in place) changed since. Record the program again here "
                f"(adsim.grad and the other transformations do), pass such values as "
                f"arguments (args=), or leave them unchanged until the derivatives are taken")
        tape = record(self.function, *full)
        if self._first is None:
            self._first = KeptRecording(tape, full)
        return tape


def _contracted(J, *values):
    """<w, J> for the weight w last among ``values`` (the vjp rule's value)."""
    return np.sum(values[-1] * J)


def _itself(J, *values):
    return J


def _derivative(inner, args, positions):
    """The primitive whose value at the op's arguments is the Jacobian of
    ``inner``'s function w.r.t. argument ``inner.argnum``, with its rules:
    second-order sweeps of the inner tape, and for higher orders its
    Jacobian written out as recorded ops (the same rules whether the inner
    function is recorded here or its tapes were loaded from a file). The
    op's arguments go to ``positions`` of the function's arguments
    ``args`` (the others stay as they are)."""
    argnum = inner.argnum
    position_of_x = positions.index(argnum)

    def full_args(values):
        return placed(args, positions, values)

    def value(*values):
        def method(tape, vals):
            J = tape.jacobian(*vals)
            return J[0] if isinstance(J, tuple) else J
        return inner.run(full_args(values), method)

    def second_order(values, directions, weight):
        """Adjoint tangents of every argument for output weight ``weight``
        and argument directions ``directions`` (dict position -> array)."""
        full = full_args(values)
        tape_positions = input_positions(full, (argnum,))

        def method(tape, vals):
            V = [np.asarray(directions.get(p, np.zeros(np.shape(full[p]))), dtype=float)
                 .reshape(1, -1) for p in tape_positions]
            _, _, _, adot = tape._soadjoint(tape._inputs(vals), V, weight, None, False)
            return {p: a[0].reshape(np.shape(full[p])) for p, a in zip(tape_positions, adot)}
        return inner.run(full, method)

    # higher orders
    recorded = RecordedRules(lambda values: _recorded_jacobian(inner, args, positions, values),
                             lambda values: tape_now(inner, full_args(values)),
                             f"derivative of {inner.name}", inner.name)

    def jvp(values, out, tangents):
        if any(isinstance(v, Active) for v in values) or \
                any(isinstance(t, Active) for t in tangents):
            return recorded.jvp(values, tangents)
        m = int(np.prod(out.shape[:out.ndim - np.ndim(values[position_of_x])]))
        directions = {pos: t for pos, t in zip(positions, tangents) if t is not None}
        rows = []
        for i in range(m):
            w = np.zeros(m)
            w[i] = 1.0
            rows.append(second_order(values, directions, w)[argnum].reshape(-1))
        return np.array(rows).reshape(out.shape)

    def vjp(values, out, out_adjoint):
        if any(isinstance(v, Active) for v in values) or isinstance(out_adjoint, Active):
            return recorded.vjp(values, out_adjoint)  # being recorded: one order more
        x_shape = np.shape(values[position_of_x])
        m = int(np.prod(out.shape[:out.ndim - len(x_shape)]))
        bars = out_adjoint.reshape(m, -1)
        total = {pos: np.zeros(np.shape(values[k])) for k, pos in enumerate(positions)}
        for i in range(m):
            if not bars[i].any():
                continue
            w = np.zeros(m)
            w[i] = 1.0
            adot = second_order(values, {argnum: bars[i].reshape(x_shape)}, w)
            for pos in positions:
                total[pos] += adot[pos]
        return tuple(total[pos] for pos in positions)

    return NestedPrimitive(inner, positions, value, jvp, vjp)


class _Held(ResultNeutral):
    """A function held where a tape cache does not look (its fingerprint is
    a constant): the recorded value of :class:`RecordedRules`, whose
    dependence on the inner function the rules' key states instead."""

    __slots__ = ("f",)

    def __init__(self, f):
        self.f = f


def tape_now(inner, full):
    """The tape of ``inner``'s function (a RecordedInner or SavedInner) that
    its cache holds for the arguments ``full`` (active ones taken at their
    current values), without replaying it."""
    plain = [current(v) if isinstance(v, Active) else v for v in full]
    return inner.run(plain, lambda tape, values: tape)


class RecordedRules:
    """The rules of a derivative op while they are being recorded (a
    second-order sweep through the op records its vjp rule on active
    arrays): one derivative order more. ``recorded_value(values)`` writes
    the op's value out as recorded ops (transcribe.py); a rule's result is
    then the derivatives of a function of that value w.r.t. the op's
    arguments, each one nested derivative, whose own rules are
    second-order sweeps of that function's tape. Used by nested derivatives
    and by the sparse Jacobian of solve_ivp's implicit methods.

    That function's tapes are kept per rule and per tape of the inner
    function (``inner_tape(values)``, which the inner function's own cache
    records again when its environment changes): a second-order sweep
    records the rule once per op and sweep, and replays them. ``name``
    names the functions so made, ``source`` the function whose derivative
    the op is (in messages)."""

    def __init__(self, recorded_value, inner_tape, name, source):
        self.recorded_value, self.inner_tape = recorded_value, inner_tape
        self.name, self.source = name, source
        self._functions = {}   # (rule, inner tape) -> (the function it differentiates, its tapes)

    def _derivatives(self, values, rule, count):
        """The derivatives of ``rule(value, *values)`` w.r.t. the first ``count``
        values (the op's arguments), the value recorded."""
        key = (rule, self.inner_tape(values[:count]))
        entry = self._functions.get(key)
        if entry is None:
            if len(self._functions) >= _MAX_VARIANTS:
                self._functions.pop(next(iter(self._functions)), None)
            value = _Held(self.recorded_value)  # what h reads besides its arguments: the key
            h = lambda *vals: rule(value.f(vals[:count]), *vals)  # noqa: E731
            h.__name__ = self.name
            entry = self._functions[key] = h, TapeCache()
        h, tapes = entry
        return tuple(nested_derivative(h, tuple(values), {}, k, tapes) for k in range(count))

    def vjp(self, values, out_adjoint):
        """The vjp rule recorded: the gradient of <out_adjoint, value>."""
        try:
            return self._derivatives(tuple(values) + (out_adjoint,), _contracted, len(values))
        except (UnsupportedOperation, TypeError) as err:
            if "order three and more" in str(err):
                raise
            raise UnsupportedOperation(
                f"adsim: derivatives of order three and more of {self.source} are recorded "
                f"op by op, and one of its operations could not be: {err}") from err

    def jvp(self, values, tangents):
        """The jvp rule recorded: sum_k d value / d values[k] tangents[k]."""
        given = [k for k, t in enumerate(tangents) if t is not None]
        Ds = self._derivatives(tuple(values), _itself, len(values))
        return sum(np.tensordot(Ds[k], tangents[k], axes=np.ndim(tangents[k])) for k in given)


class NestedPrimitive(Primitive):
    """A nested derivative as a primitive (see :func:`_derivative`)."""

    explains_recorded_rule = True

    def __init__(self, inner, positions, value, jvp, vjp):
        super().__init__(value, jvp=jvp, vjp=vjp)
        self.name = f"derivative of {inner.name}"
        self.inner, self.positions = inner, positions

    def applied(self, in_shapes, out_shape, first_value):
        return NestedApplication(self, in_shapes, out_shape, first_value=first_value)


class NestedApplication(Application):
    """One recorded nested derivative. A tape file saves the recorded
    variants of its inner function (one tape per branch path met, the one
    used last first) and where the op's arguments go among their inputs;
    a loaded one replays those variants and raises BranchChanged where none
    holds (it has no code to record the function again)."""

    file_kind = "adsim.nested_derivative"

    def file_state(self):
        inner = self.prim.inner
        operands, argnum = operand_ranks(self.prim.positions, inner.argnum)
        return {"function": inner.name, "operands": operands, "argnum": argnum,
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, inner.variants.tapes()

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("function", "operands", "argnum", "in_shapes", "out_shape"))
        name, operands, argnum = state["function"], state["operands"], state["argnum"]
        if not isinstance(name, str) or not isinstance(state["in_shapes"], list):
            raise ValueError("a nested derivative is described by its function's name, "
                             "operands, argnum and shapes")
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        n = len(in_shapes)
        if not (isinstance(operands, list) and all(type(p) is int for p in operands)
                and sorted(operands) == list(range(n)) and type(argnum) is int and 0 <= argnum < n):
            raise ValueError(f"the operands {operands!r} and argnum {argnum!r} do not number "
                             f"{n} arguments")
        out_shape = shape_field(state["out_shape"], "the output shape")
        shape_at = {p: s for p, s in zip(operands, in_shapes)}
        inputs = [shape_at[argnum]] + [shape_at[p] for p in range(n) if p != argnum]
        if not tapes:
            raise ValueError("a nested derivative owns no tape of its function")
        for tape in tapes:
            if [tuple(s) for s in tape.input_shapes] != inputs or \
                    tuple(tape.output_shape) + shape_at[argnum] != out_shape:
                raise ValueError(f"a tape of the function maps inputs {tape.input_shapes} to "
                                 f"{tape.output_shape}; the nested derivative has arguments "
                                 f"{inputs} and output {out_shape}")
        inner = SavedInner(name, argnum, tapes, f"the nested derivative `derivative of {name}`")
        return cls(_derivative(inner, [None] * n, operands), in_shapes, out_shape)


def operand_ranks(positions, argnum):
    """(operands, argnum) of a derivative op as a tape file numbers them: an
    argument's number is its rank among the op's arguments in the call, so
    that the inner tapes' inputs are argument ``argnum``, then the others
    by increasing number (as ``cache.input_positions`` orders them)."""
    rank = {p: k for k, p in enumerate(sorted(positions))}
    return [rank[p] for p in positions], rank[argnum]


# ---- the other transformations inside a recording, made of nested derivatives -----

def _per_direction(directions, shapes, one):
    """``one(directions)`` for directions of ``shapes`` (one per argument),
    or for each of k directions along a trailing axis of every one of them,
    the results stacked along a new last axis (a tuple of results: each)."""
    ds, shapes = tuple(directions), [tuple(sh) for sh in shapes]
    if all(np.shape(d) == sh for d, sh in zip(ds, shapes)):
        return one(ds)
    if not all(np.ndim(d) == len(sh) + 1 and np.shape(d)[:-1] == sh
               for d, sh in zip(ds, shapes)) or len({np.shape(d)[-1] for d in ds}) != 1:
        raise ValueError(f"adsim: directions of shapes {[np.shape(d) for d in ds]} for "
                         f"arguments of shapes {shapes}; give each argument's shape, or the same "
                         f"trailing axis of k directions to every one")
    k = np.shape(ds[0])[-1]
    results = [one(tuple(d[..., j] for d in ds)) for j in range(max(k, 1))]
    if isinstance(results[0], tuple):
        return tuple(np.stack(r, axis=-1)[..., :k] for r in zip(*results))
    return np.stack(results, axis=-1)[..., :k]


def _named(g, what, f):
    g.__name__ = f"{what} of {_name(f)}"
    return g


def nested_jvp(f, xs, vs, y=None):
    """(f(*xs), J v) inside a recording: J v = d/de f(xs + e vs) at e = 0,
    one nested derivative w.r.t. the scalar e (one forward sweep for its
    value). ``y``: f(*xs) when the caller has it."""
    n = len(xs)
    along = _named(lambda e, *xv: f(*[x + e * v for x, v in zip(xv[:n], xv[n:])]),
                   "a directional derivative", f)
    tapes = TapeCache()

    def one(ds):
        return nested_derivative(along, (np.array(0.0),) + tuple(xs) + ds, {}, 0, tapes)
    return f(*xs) if y is None else y, _per_direction(vs, [np.shape(x) for x in xs], one)


def nested_vjp(f, xs, w, y=None):
    """(f(*xs), w^T J) inside a recording: the gradient of sum(w * f(xs)),
    one nested derivative per argument (one reverse sweep for its value), a
    tuple of one per argument (the caller unwraps a single bare primal).
    ``y``: f(*xs) when the caller has it."""
    n = len(xs)
    weighted = _named(lambda *xw: np.sum(xw[n] * f(*xw[:n])), "a weighted sum", f)
    tapes = TapeCache()
    y = f(*xs) if y is None else y

    def one(ws):
        return tuple(nested_derivative(weighted, tuple(xs) + ws, {}, i, tapes) for i in range(n))
    return y, _per_direction((w,), [np.shape(y)], one)


def nested_hvp(f, inner, x, v, args):
    """(gradient, H v) of scalar f inside a recording, ``inner`` its
    gradient function: H v is the gradient of inner(x) . v (a nested
    derivative of a nested derivative)."""
    along = _named(lambda y, d, *rest: np.sum(inner(y, *rest) * d), "a Hessian-vector product",
                   f)
    tapes = TapeCache()
    g = inner(x, *args)
    return g, _per_direction((v,), [np.shape(x)], lambda ds: nested_derivative(
        along, (x,) + ds + tuple(args), {}, 0, tapes))
