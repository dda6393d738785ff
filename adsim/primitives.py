"""User-registered primitives: a function adsim records as one op whose
derivative rules are given in Python (for compiled code, solvers, or
functions adsim has no rule for). One Python call per op and sweep.

Example::

    def f_value(x):                       # any code on plain NumPy arrays
        return np.fft.irfft(np.fft.rfft(x) * kernel, n=x.size)

    def f_jvp(args, out, tangents):       # tangents[i] is None for constants
        (dx,) = tangents
        return f_value(dx)                # linear: J dx = f(dx)

    def f_vjp(args, out, out_adjoint):    # one adjoint per argument
        return (np.fft.irfft(np.fft.rfft(out_adjoint) * kernel.conj(), n=out_adjoint.size),)

    conv = adsim.primitive(f_value, jvp=f_jvp, vjp=f_vjp, name="mylib.conv")
    adsim.grad(lambda x: np.sum(conv(x) ** 2))(x0)

Second-order sweeps (``hvp``) differentiate the vjp rule itself by recording
it, so a vjp written with NumPy operations adsim supports gives exact
Hessian-vector products with no further work.

A primitive made with ``name=`` is registered in this process under that
name, and a tape file refers to it by the name and a fingerprint of its
rules (adsim/_tapecache/fingerprint.py; its code is never saved): the process that
loads the tape must have made the same primitive first, for example by
importing the module that makes it at module level.
"""
import threading
import weakref

import numpy as np

from ._callback_rules import CallbackRules
from ._record.creation import suspended
from ._record.recording import record
from ._filefields import expect_keys, json_data, shape_field, size_of
from ._tapecache.fingerprint import fingerprint
from ._opcodes import Opcode as Op
from ._active import Active, wrap
from ._validate import entry_point, function, given, resolve_argnums
from .errors import (InvalidArgument, NotCallable, PrimitiveRuleError, TapeCopyError,
                     UnsupportedOperation)

# what each part of a primitive is, for messages
_PARTS = {"value": "the function computing its output from plain arrays",
          "jvp": "jvp(args, out, tangents) -> the output's tangent, or None (no forward rule)",
          "vjp": "vjp(args, out, out_adjoint) -> one adjoint per argument, or None (no reverse "
                 "rule)"}

# name -> the live primitives made with that name= (tape files find a primitive by its
# name and fingerprint); weak, so that primitives made and dropped do not accumulate
_REGISTRY = {}
_REGISTRY_LOCK = threading.Lock()


def primitives_named(name):
    """The live primitives made with ``name=name`` in this process. adsim's
    own SciPy primitives exist once made on first use; the tape-file reader
    (adsim/tapefile.py) makes those a file names before asking."""
    with _REGISTRY_LOCK:
        return list(_REGISTRY.get(name, ()))


class Primitive:
    """A function recorded as one CALLBACK op with user-given rules."""

    fingerprinted_by_rules = True     # adsim/_tapecache/fingerprint.py: known by its rules
    explains_recorded_rule = False    # True: its vjp's own errors say what failed (adsim's)
    saved_as = None                   # (BuiltinFamily, its parameters or a function giving them)
    flat = None                       # adsim's own: rules on the op's flat arrays (below)
    compiled = None                   # adsim's own: value and adjoint in C (_callback.pxd)
    not_saved = None                  # why, for one of adsim's that tape files cannot hold
    pure = False                      # True: computes its output only (adsim's own); an
    #                                   unused call is then dropped from the tape
    local_pattern = None              # adsim's own: () -> per argument, which of its elements
    #                                   each output element depends on (CSR); None: all

    def __init__(self, value, jvp=None, vjp=None, name=None, linear=False, elementwise=False,
                 nondiff_argnums=()):
        function(value, "primitive", "value", "adsim.primitive(f, jvp=f_jvp, vjp=f_vjp, "
                                              "name='mylib.f') with f computing the output")
        for kind, rule in (("jvp", jvp), ("vjp", vjp)):
            if rule is not None:
                function(rule, "primitive", kind, f"{kind}=f_{kind} with f_{_PARTS[kind]}")
        self.value = value
        self.nondiff_argnums = _positions(nondiff_argnums)
        self.jvp = jvp
        self.vjp = vjp
        self.linear = linear
        self.elementwise = elementwise
        if name is not None and (not isinstance(name, str) or not name):
            raise InvalidArgument(f"adsim.primitive: name must be a non-empty string, got "
                                  f"{given(name)}")
        self.name = name or getattr(value, "__name__", "primitive")
        self.registered = name is not None
        if self.registered:
            with _REGISTRY_LOCK:
                _REGISTRY.setdefault(name, weakref.WeakSet()).add(self)

    def __repr__(self):
        return f"<adsim.primitive {self.name}>"

    def not_callable(self, kind):
        """The error for a value function or rule replaced by something that
        cannot be called (after adsim.primitive checked it)."""
        part = "value function" if kind == "value" else f"{kind} rule"
        now = getattr(self, kind)
        return NotCallable(f"adsim: primitive `{self.name}` has no usable {part}: its `{kind}` "
                           f"is {'None' if now is None else given(now)}, which cannot be "
                           f"called. Set `{kind}` to {_PARTS[kind]}, or make the primitive "
                           f"again with adsim.primitive")

    def __call__(self, *args):
        if not callable(self.value):
            raise self.not_callable("value")
        # positions past the arguments of this call are refused, not ignored
        fixed = (resolve_argnums(self.nondiff_argnums, len(args), f"primitive `{self.name}`",
                                 "nondiff_argnums") if self.nondiff_argnums else ())
        if not any(isinstance(a, Active) for a in args):
            return self.value(*args)
        if fixed:
            from ._np.integers import plain_value
            args = tuple(plain_value(a, f"argument {i} of `{self.name}` (it has no derivative "
                                        f"rule)") if i in fixed else a
                         for i, a in enumerate(args))
            if not any(isinstance(a, Active) for a in args):
                return self.value(*args)
        from ._np.core import constant, tape_of
        tape = tape_of(*args)
        refs, shapes = [], []
        for a in args:
            if isinstance(a, Active):
                refs.append(a.slot)
                shapes.append(a.shape)
            else:
                arr = constant(a)
                refs.append(tape.const_ref(arr))
                shapes.append(arr.shape)
        plain = [tape.slot_value(r).reshape(s) for r, s in zip(refs, shapes)]
        with suspended():          # rules run on plain arrays
            out = _rule_result(self, "value function", self.value(*plain))
        cb = tape.add_callback(self.applied(shapes, out.shape, out))
        slot = tape.record_op(int(Op.CALLBACK), out.size, [cb, len(refs)] + refs)
        return wrap(tape, slot, out.shape)

    def applied(self, in_shapes, out_shape, first_value):
        """The rules of one recorded call (the CALLBACK op's object)."""
        cls = Application if self.saved_as is None else BuiltinApplication
        return cls(self, in_shapes, out_shape, first_value=first_value)


def _positions(nondiff_argnums):
    """``nondiff_argnums`` as a tuple of argument positions."""
    if isinstance(nondiff_argnums, (tuple, list)) and all(
            isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) and i >= 0
            for i in nondiff_argnums):
        return tuple(int(i) for i in nondiff_argnums)
    raise InvalidArgument(f"adsim.primitive: nondiff_argnums must be a tuple of ints >= 0 "
                          f"(the positions of arguments without derivatives, such as an order or a "
                          f"flag), got {given(nondiff_argnums)}; write (i,) for one")


@entry_point
def primitive(value, *, jvp=None, vjp=None, name=None, linear=False, elementwise=False,
              nondiff_argnums=()):
    """Make ``value`` (a function of plain arrays returning one array) a
    primitive with forward rule ``jvp(args, out, tangents)`` and reverse rule
    ``vjp(args, out, out_adjoint)``. Either rule may be omitted; sweeps that
    need a missing rule raise ``UnsupportedOperation``. ``linear=True``
    declares the function linear in its active arguments (an FFT, a linear
    solve with a constant matrix): its second derivative is zero, so
    Hessian-vector products need only the vjp rule. ``elementwise=True``
    declares that each output element depends only on the arguments' elements
    at the same position (NumPy broadcasting), which sparse Jacobians and
    Hessians use. ``name`` (a stable string such as ``"mylib.f"``) registers
    the primitive in this process: tapes using it can then be saved, pickled
    and sent to other processes, which must make the same primitive (same
    name, same rules and captured values) before loading them.
    Rules that return something unusable (None, complex values, a wrong
    shape, the wrong number of adjoints) raise
    :class:`adsim.errors.PrimitiveRuleError`. Arguments at ``nondiff_argnums``
    (an order, a flag) must be plain values; the rules get them as they are."""
    return Primitive(value, jvp=jvp, vjp=vjp, name=name, linear=linear, elementwise=elementwise,
                     nondiff_argnums=nondiff_argnums)


# ---- checks of what user rules return ------------------------------------------

def _rule_result(prim, rule, result, shape=None, of="the output"):
    """``result`` of ``prim``'s ``rule`` as a float64 array, refusing what
    would be silently wrong: None, sequences of arrays, complex or non-numeric
    data, and (when ``shape`` is given) another shape than ``shape`` (a 0-d
    result broadcasts)."""
    where = f"the {rule} of primitive `{prim.name}`"
    if result is None:
        raise PrimitiveRuleError(f"adsim: {where} returned None; return an array of {of}'s "
                                 f"shape")
    if isinstance(result, (tuple, list)):
        raise PrimitiveRuleError(f"adsim: {where} returned a {type(result).__name__}; a "
                                 f"primitive has one output: return one array")
    try:
        arr = np.asarray(result)
    except (ValueError, TypeError) as err:
        raise PrimitiveRuleError(f"adsim: {where} returned something that is not an array "
                                 f"of numbers ({err})") from err
    if arr.dtype.kind == "c":
        raise PrimitiveRuleError(f"adsim: {where} returned complex values ({arr.dtype}); "
                                 f"their imaginary part would be lost: return real values")
    if arr.dtype.kind not in "biuf":
        raise PrimitiveRuleError(f"adsim: {where} returned a {arr.dtype} array; return "
                                 f"float64 values")
    arr = arr.astype(np.float64, copy=False)
    if shape is not None and arr.shape != tuple(shape):
        if arr.ndim == 0:
            return np.broadcast_to(arr, shape)
        raise PrimitiveRuleError(
            f"adsim: primitive returned {arr.size} numbers where {int(np.prod(shape))} were "
            f"expected: {where} returned shape {arr.shape}, {of} has shape {tuple(shape)}")
    return arr


def _apply(prim, kind, rule, args, out, seed):
    """``rule(args, out, seed)``; a rule that does not take these three
    arguments is named with the form it must have (a TypeError raised
    inside the rule is the rule's own and passes unchanged)."""
    try:
        return rule(args, out, seed)
    except TypeError as err:
        if err.__traceback__.tb_next is not None:        # raised inside the rule
            raise
        raise PrimitiveRuleError(f"adsim: the {kind} rule of primitive `{prim.name}` cannot be "
                                 f"called as {kind}(args, out, "
                                 f"{'tangents' if kind == 'jvp' else 'out_adjoint'}) ({err}); "
                                 f"write it as {_PARTS[kind]}") from None


def _rule_adjoints(prim, result, shapes, recorded=False):
    """The per-argument adjoints a vjp rule returned, checked: one entry
    (an array of the argument's shape, or None) per argument. With
    ``recorded`` (the rule run on active arrays) active entries pass as
    they are."""
    where = f"the vjp rule of primitive `{prim.name}`"
    n = len(shapes)
    if not isinstance(result, (tuple, list)):
        raise PrimitiveRuleError(f"adsim: {where} returned a {type(result).__name__}; return a "
                                 f"tuple with one adjoint (or None) per argument ({n})")
    if len(result) != n:
        raise PrimitiveRuleError(f"adsim: {where} returned {len(result)} adjoints for {n} "
                                 f"argument{'s' if n != 1 else ''}; return one (or None) per "
                                 f"argument")
    return [a if a is None or recorded and isinstance(a, Active) else
            _rule_result(prim, "vjp rule", a, s, f"argument {i}")
            for i, (a, s) in enumerate(zip(result, shapes))]


class Application(CallbackRules):
    """The rules of one recorded call of a Primitive (the CALLBACK protocol
    of adsim/_callback_rules.py)."""

    file_kind = "adsim.primitive"    # tape files (adsim/tapefile.py) refer to it by name
    thread_safe = True               # keeps nothing between calls: threads may share it

    def __init__(self, prim, in_shapes, out_shape, first_value=None):
        self.prim = prim
        self.name = prim.name
        self.in_shapes = in_shapes
        self.out_shape = out_shape
        self._first_value = first_value

    @property
    def pure(self):
        return self.prim.pure

    @property
    def linear(self):
        """Declared linear: no Hessian interactions (adsim/sparse/pattern.py)."""
        return self.prim.linear

    def _args(self, flat_args):
        return [a.reshape(s) for a, s in zip(flat_args, self.in_shapes)]

    # ---- tape files: the primitive's name and fingerprint, the shapes of this call --
    def file_state(self):
        prim = self.prim
        if prim.not_saved is not None:
            raise TapeCopyError(f"adsim: the tape holds `{prim.name}`, {prim.not_saved}; tape "
                                f"files cannot hold it. Record the tape in the process that "
                                f"replays it")
        try:
            if not prim.registered:
                raise TypeError("it was made without name=")
            identity = fingerprint(prim)
        except TypeError as err:
            example = f"mylib.{prim.name}" if prim.name.isidentifier() else "mylib.f"
            raise TapeCopyError(
                f"adsim: the tape calls primitive `{prim.name}`, which cannot be saved: {err}. "
                f"Tape files refer to a primitive by its name and what its rules compute with: "
                f"make it at import with adsim.primitive(..., name={example!r}), from "
                f"functions that capture arrays, numbers, strings and functions only") from err
        return {"name": prim.name, "fingerprint": identity,
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, []

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("name", "fingerprint", "in_shapes", "out_shape"))
        name, identity = state["name"], state["fingerprint"]
        if not isinstance(name, str) or not isinstance(identity, str) or tapes or \
                not isinstance(state["in_shapes"], list):
            raise ValueError("a primitive is described by its name, fingerprint and shapes")
        found = primitives_named(name)
        prim = next((p for p in found if _same_fingerprint(p, identity)), None)
        if prim is None and not found:
            raise LookupError(f"the tape calls primitive `{name}`, which is not registered in "
                              f"this process: import the module that makes it "
                              f"(adsim.primitive(..., name={name!r})) before loading")
        if prim is None:
            raise LookupError(
                f"the tape calls primitive `{name}`; this process has {len(found)} primitive(s) "
                f"of that name, but none with the same rules and captured values (other code, "
                f"another Python version, or a primitive made by a function for other "
                f"arguments): make the same primitive before loading")
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        return cls(prim, in_shapes, shape_field(state["out_shape"], "the output shape"))

    def operand_sizes(self):
        return [size_of(s) for s in self.in_shapes], size_of(self.out_shape)

    def pattern(self, arg_patterns):
        """Sparsity of an elementwise primitive: output element k depends on
        the elements the arguments broadcast to position k; of a primitive
        with a ``local_pattern``, those it names (None: dense)."""
        if self.prim.local_pattern is not None:
            return self._local_pattern(arg_patterns)
        if not self.prim.elementwise:
            return None
        import scipy.sparse as sp
        n = int(np.prod(self.out_shape))
        P = None
        for A, shape in zip(arg_patterns, self.in_shapes):
            if A.shape[0] == 0:             # a constant argument
                continue
            at = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape),
                                 self.out_shape).reshape(-1)
            rows = sp.csr_array(A[at]) if n else A[:0]
            P = rows if P is None else sp.csr_array((P + rows).astype(bool))
        return P

    def _local_pattern(self, arg_patterns):
        import scipy.sparse as sp
        P = None
        for A, L in zip(arg_patterns, self.prim.local_pattern()):
            if A.shape[0] == 0:             # a constant argument
                continue
            rows = sp.csr_array(sp.csr_array(L, dtype=float) @ sp.csr_array(A, dtype=float))
            P = rows if P is None else P + rows
        return None if P is None else sp.csr_array(P.astype(bool))

    def value(self, flat_args, context=None):
        if self._first_value is not None:      # computed while recording
            out, self._first_value = self._first_value, None
            return out.reshape(-1)
        if not callable(self.prim.value):
            raise self.prim.not_callable("value")
        with suspended():
            value = self.prim.value(*self._args(flat_args))
        return _rule_result(self.prim, "value function", value, self.out_shape).reshape(-1)

    def _rule(self, kind):
        rule = getattr(self.prim, kind)
        if rule is None:
            mode = "forward mode (jvp, jacobian columns)" if kind == "jvp" else "reverse mode (grad, vjp)"
            raise UnsupportedOperation(f"adsim: primitive `{self.prim.name}` has no {kind} rule, "
                                       f"which {mode} needs; pass {kind}= to adsim.primitive")
        if not callable(rule):
            raise self.prim.not_callable(kind)
        return rule

    def tangent(self, flat_args, result, tangents, context=None):
        jvp = self._rule("jvp")
        args = self._args(flat_args)
        out = result.reshape(self.out_shape)
        p = next(t.shape[0] for t in tangents if t is not None) if any(
            t is not None for t in tangents) else 1
        rows = []
        for j in range(p):
            tj = [None if t is None else t[j].reshape(s) for t, s in zip(tangents, self.in_shapes)]
            if not any(t is not None and t.any() for t in tj):
                rows.append(np.zeros(out.size))       # a zero seed gives exactly zero
                continue
            with suspended():
                tangent = _apply(self.prim, "jvp", jvp, args, out, tj)
            rows.append(_rule_result(self.prim, "jvp rule", tangent, self.out_shape).reshape(-1))
        return np.stack(rows)

    def _adjoints(self, vjp, args, out, weight):
        if not np.any(weight):             # a zero seed gives exactly zero (0 * inf = 0)
            return [np.zeros(np.shape(a)) for a in args]
        with suspended():
            adjoints = _apply(self.prim, "vjp", vjp, args, out, weight.reshape(self.out_shape))
        return _rule_adjoints(self.prim, adjoints, self.in_shapes)

    def adjoint(self, flat_args, result, adjoint, context=None):
        vjp = self._rule("vjp")
        args = self._args(flat_args)
        out = result.reshape(self.out_shape)
        per_arg = [[] for _ in args]
        for j in range(adjoint.shape[0]):
            for col, a in zip(per_arg, self._adjoints(vjp, args, out, adjoint[j])):
                col.append(a)
        return [_stack(col, a.size) for col, a in zip(per_arg, args)]

    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents, context=None):
        """Adjoint, and its tangent: the tangent of the vjp rule in the
        direction (arg tangents, result tangent, adjoint tangent), computed by
        recording the vjp rule and running its tangent sweep."""
        vjp = self._rule("vjp")
        p = adjoint_tangents.shape[0]
        if not np.any(adjoint) and not np.any(adjoint_tangents):
            # the vjp rule is linear in its seed: a zero seed and seed
            # tangent give exactly zero (an unused eigenvector, say)
            sizes = [int(np.prod(s)) for s in self.in_shapes]
            return [np.zeros(n) for n in sizes], [np.zeros((p, n)) for n in sizes]
        if self.prim.linear:       # no curvature: the adjoint tangents are a vjp
            adjs = self.adjoint(flat_args, result, adjoint.reshape(1, -1))
            adots = self.adjoint(flat_args, result, adjoint_tangents)
            return [None if a is None else a[0] for a in adjs], adots
        self._rule("jvp")
        args = self._args(flat_args)
        out = result.reshape(self.out_shape)
        zeros = [np.zeros((p, a.size)) for a in args]
        arg_t = [z if t is None else t for z, t in zip(zeros, tangents)]
        out_t = self.tangent(flat_args, result, arg_t)
        n_args = len(args)
        shapes = self.in_shapes
        fixed = self.prim.nondiff_argnums      # stay plain in the recorded rule
        free = [i for i in range(n_args) if i not in fixed]

        def flat_vjp(*xs):
            full = list(args)
            for i, x in zip(free, xs):
                full[i] = x
            adj = _rule_adjoints(self.prim, _apply(self.prim, "vjp", vjp, full, xs[-2], xs[-1]),
                                 shapes, recorded=True)
            from ._np.core import reshaped
            pieces = [reshaped(a, (-1,)) if isinstance(a, Active) else
                      np.zeros(int(np.prod(shapes[i]))) if a is None else np.ravel(a) * 0.0
                      for i, a in enumerate(adj) if i in free]
            return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        try:
            tape = record(flat_vjp, *[args[i] for i in free], out, adjoint.reshape(self.out_shape))
        except (UnsupportedOperation, TypeError) as err:
            if self.prim.explains_recorded_rule:
                raise
            if self.prim.saved_as is not None:      # adsim's own: the user cannot rewrite it
                raise UnsupportedOperation(
                    f"adsim: second derivatives (hvp, hessian, a vjp of a vjp) through "
                    f"`{self.prim.name}` are not supported: its first-derivative rule runs on "
                    f"plain values. First derivatives (grad, jvp, vjp, jacobian) are; for "
                    f"second ones write the computation with NumPy functions adsim records "
                    f"(dense arrays: np.linalg, scipy.linalg)") from err
            raise UnsupportedOperation(
                f"adsim: second-order sweeps through primitive `{self.prim.name}` differentiate "
                f"its vjp rule, which could not be recorded ({err}); write the vjp with NumPy "
                f"operations adsim supports") from err
        V = [arg_t[i] for i in free] + [out_t, adjoint_tangents]
        xs = [args[i] for i in free] + [out, adjoint.reshape(self.out_shape)]
        _, dadj = tape._tangent(tape._inputs(xs), [np.ascontiguousarray(v) for v in V])
        adj = self._adjoints(vjp, args, out, adjoint)
        adjs = [None if a is None else a.reshape(-1) for a in adj]
        adots, start = [], 0
        for i, a in enumerate(args):
            if i in fixed:
                adots.append(np.zeros((p, a.size)))
                continue
            adots.append(dadj[:, start:start + a.size])
            start += a.size
        return adjs, adots



def _same_fingerprint(prim, identity):
    try:
        return fingerprint(prim) == identity
    except TypeError:                 # rules that cannot be identified match nothing
        return False


def _stack(column, size):
    """Per-direction adjoints of one argument as (q, size); None if the rule
    gave None for every direction (a None among arrays is a zero)."""
    if all(a is None for a in column):
        return None
    return np.stack([np.zeros(size) if a is None else a.reshape(-1) for a in column])


# ---- adsim's own primitives made from parameters -------------------------------

_FAMILIES = {}          # name -> BuiltinFamily


class BuiltinFamily:
    """adsim's own primitives of one kind made per call from parameters (an
    FFT from its plan, an LU factorisation from its pivots): calling the
    family with the parameters (JSON data once saved: numbers, strings,
    lists) makes one with ``make(**parameters)``. A tape file saves the
    family's name, ``version`` (of its rules: raised when they change what
    they compute) and the parameters; the reader makes the primitive again
    from them, so no fingerprint of code is needed. ``make`` checks the
    parameters as it would check a file's."""

    def __init__(self, name, version, make, bytes_of=None):
        self.name, self.version, self.make = name, version, make
        # bytes_of(**parameters): what make allocates beyond the file's own
        # bytes (a compressed matrix), for the memory bound of a load
        self.bytes_of = bytes_of
        _FAMILIES[name] = self

    def __repr__(self):
        return f"<adsim built-in primitives {self.name}, rules version {self.version}>"

    def __call__(self, **parameters):
        return self.adopt(self.make(**parameters), **parameters)

    def adopt(self, prim, **parameters):
        """Mark ``prim`` as the family's primitive for ``parameters`` (one
        that ``make(**parameters)`` makes again); returns it."""
        prim.saved_as = (self, parameters)
        return prim

    def adopt_lazily(self, prim, parameters_of):
        """:meth:`adopt` with parameters made by ``parameters_of()`` when a
        file is written (large ones: a probed matrix as text)."""
        prim.saved_as = (self, parameters_of)
        return prim


def builtin_family(name):
    """The :class:`BuiltinFamily` called ``name``, or None if its module is
    not imported yet (adsim/tapefile.py imports those a file names)."""
    return _FAMILIES.get(name)


class BuiltinApplication(Application):
    """One recorded call of a primitive of a :class:`BuiltinFamily`: saved
    by the family's name and rules version and the call's parameters."""

    file_kind = "adsim.builtin_primitive"

    # A family's primitive may carry ``flat``: its value and reverse-sweep
    # adjoint computed directly on the op's flat arrays, for ops replayed
    # thousands of times per sweep (the Newton solves of solve_ivp), where
    # the checks that user rules need cost as much as the rule. ``flat.value(
    # flat_args)`` returns the flat result, ``flat.adjoint(flat_args, result,
    # adjoint, in_shapes)`` one (directions, size) array per argument, and
    # ``flat.soadjoint(flat_args, result, tangents, adjoint, adjoint_tangents,
    # in_shapes)``, if it has one, what Application.soadjoint returns.
    # A primitive may also carry ``compiled``: a CompiledRules object
    # (adsim/_callback.pxd) that the CALLBACK kernels call instead of
    # ``value`` and ``adjoint``, once the value computed while recording is
    # handed on (until then, ``compiled`` of the call is None).
    def __init__(self, prim, in_shapes, out_shape, first_value=None):
        super().__init__(prim, in_shapes, out_shape, first_value)
        self.compiled = prim.compiled if first_value is None else None

    def value(self, flat_args, context=None):
        flat = self.prim.flat
        if self._first_value is not None:
            out = super().value(flat_args, context)
            self.compiled = self.prim.compiled
            return out
        if flat is None:
            return super().value(flat_args, context)
        with suspended():          # rules run on plain arrays
            return flat.value(flat_args)

    def adjoint(self, flat_args, result, adjoint, context=None):
        flat = self.prim.flat
        if flat is None:
            return super().adjoint(flat_args, result, adjoint, context)
        with suspended():
            return flat.adjoint(flat_args, result, adjoint, self.in_shapes)

    def soadjoint(self, flat_args, result, tangents, adjoint, adjoint_tangents, context=None):
        flat = self.prim.flat
        if flat is None or not hasattr(flat, "soadjoint"):
            return super().soadjoint(flat_args, result, tangents, adjoint, adjoint_tangents,
                                     context)
        with suspended():
            return flat.soadjoint(flat_args, result, tangents, adjoint, adjoint_tangents,
                                  self.in_shapes)

    def file_state(self):
        family, parameters = self.prim.saved_as
        if callable(parameters):
            parameters = parameters()
        try:
            data = json_data(parameters, "its parameters")
        except TypeError as err:
            raise TapeCopyError(f"adsim: the tape calls adsim's primitive `{self.name}`, which "
                                f"cannot be saved: {err}. Record the function in the process "
                                f"that replays it") from err
        return {"family": family.name, "version": family.version, "parameters": data,
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, []

    @classmethod
    def building_bytes(cls, state):
        """What making the family's primitive from ``state`` allocates beyond
        the file's bytes (0 where the family does not say, or the state is
        not one; reading it then refuses it)."""
        family = builtin_family(state.get("family")) if isinstance(state, dict) else None
        parameters = state.get("parameters") if isinstance(state, dict) else None
        if family is None or family.bytes_of is None or not isinstance(parameters, dict):
            return 0
        try:
            return family.bytes_of(**parameters)
        except (TypeError, ValueError):
            return 0

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("family", "version", "parameters", "in_shapes", "out_shape"))
        name, version, parameters = state["family"], state["version"], state["parameters"]
        if not isinstance(name, str) or type(version) is not int or tapes or \
                not isinstance(parameters, dict) or not isinstance(state["in_shapes"], list):
            raise ValueError("a built-in primitive is described by its family, rules version, "
                             "parameters and shapes")
        family = builtin_family(name)
        if family is None:
            raise LookupError(f"the tape calls adsim's built-in primitives `{name}`, which this "
                              f"adsim does not have (written by another version of adsim?)")
        if version != family.version:
            raise LookupError(f"the tape calls adsim's built-in primitives `{name}` with rules "
                              f"of version {version}; this adsim has version {family.version}: "
                              f"record the tape again with this adsim")
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        return cls(family(**parameters), in_shapes,
                   shape_field(state["out_shape"], "the output shape"))

