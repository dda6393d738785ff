"""The user-facing tape: replay methods that shape inputs and results.

The compiled base class (adsim._tape.Tape) holds the recorded program and
runs the sweeps on flat arrays, each call on buffers of its own (so threads
may share a tape); this class turns NumPy-shaped arguments into sweep seeds
and sweep results back into NumPy shapes. Directions for vector modes
go in a trailing axis: ``v`` of shape ``x.shape + (k,)`` is k directions.
"""
import functools

import numpy as np

from . import _program, _tape, ops
from ._fuse import policy
from ._batched import BatchedReplays
from ._decoder import decode_op
from ._tapefile_write import save as save_tape_file
from ._validate import given
from .errors import InvalidArgument, InvalidArgumentValue, ReadOnlyTapeAttribute

_CHUNK_BYTES = 256 * 2 ** 20   # work memory per vector sweep when building Jacobians
_ONE = np.ones(1)              # the weight of a scalar output
# the one attribute a user sets on a tape: whether sweeps chunk long elementwise runs
_SETTABLE = frozenset({"chunked"})
# those adsim sets (set_internal): the summary of Tape.fuse, the argument
# structures of a TreeTape
_INTERNAL = frozenset({"_fusion", "_trees"})


class Tape(_tape.Tape):
    """A recorded computation; made by :func:`adsim.record`.

    Replays run in C on new inputs of the recorded shapes. Every method
    raises :class:`adsim.BranchChanged` if a recorded comparison comes out
    differently at the new input.
    """

    def __init__(self, *args, **kwargs):
        if args or kwargs:             # the compiled base would ignore them
            raise InvalidArgument(f"adsim.Tape() takes no arguments, got {len(args)} positional "
                                  f"and {sorted(kwargs)} keyword; tapes are made by "
                                  f"adsim.record(f, x) or adsim.load_tape(file)")

    def _set_internal(self, name, value):
        """:func:`set_internal` for the modules below this one (fused runs)."""
        set_internal(self, name, value)

    def __setattr__(self, name, value):
        if name not in _SETTABLE:
            _refuse_attribute(self, name, "assigned")
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidArgumentValue(f"adsim: tape.chunked is True (sweep long elementwise "
                                       f"runs chunk by chunk) or False, not {given(value)}")
        super().__setattr__(name, bool(value))

    def __delattr__(self, name):
        _refuse_attribute(self, name, "deleted")

    def finish(self, output_slot, output_shape):
        """End recording with ``output_slot`` (an int) as the output, of
        ``output_shape`` (a tuple): the program is optimised once and is
        read-only from here on (adsim/_program.pyx)."""
        _program.finish(self, output_slot, output_shape)

    # ---- shaping helpers -------------------------------------------------
    def _n_arguments(self):
        """How many arguments a replay takes: one per input (a tape recorded
        with containers takes one container per recorded argument)."""
        return self.n_inputs

    def _single(self, arrays):
        return arrays[0] if self.n_inputs == 1 else tuple(arrays)

    def _directions(self, xs, vs, what):
        """Directions per input as (k, size) arrays, and k (None: one direction)."""
        if not isinstance(vs, (tuple, list)) or self.n_inputs == 1 and len(vs) != 1:
            vs = (vs,)
        if len(vs) != self.n_inputs:
            raise InvalidArgumentValue(f"adsim: {what} needs one direction per input "
                                       f"({self.n_inputs})")
        out, k = [], None
        for i, (x, v) in enumerate(zip(xs, vs)):
            if type(v) is np.ndarray and v.shape == x.shape and v.dtype == np.float64:
                kk, flat = None, v.reshape(1, -1)       # the common case: one direction
                if i and kk != k:
                    raise InvalidArgumentValue(f"adsim: all {what}s need the same number of "
                                               "directions")
                out.append(flat)
                continue
            v = _tape._as_float_array(v, f"{what} {i}")
            if v.shape == x.shape:
                kk = None
                flat = v.reshape(1, -1)
            elif v.shape[:-1] == x.shape:
                kk = v.shape[-1]
                flat = np.ascontiguousarray(v.reshape(x.size, kk).T)
            else:
                raise InvalidArgumentValue(f"adsim: {what} {i} has shape {v.shape}; expected "
                                           f"{x.shape} (one direction) or {x.shape + ('k',)} (k "
                                           "directions)")
            if i and kk != k:
                raise InvalidArgumentValue(f"adsim: all {what}s need the same number of directions")
            k = kk
            out.append(flat)
        return out, k

    @staticmethod
    def _shape_dirs(flat, shape, k):
        """(k, size) -> shape (one direction) or shape + (k,)."""
        if k is None:
            return flat[0].reshape(shape)
        return flat.T.reshape(tuple(shape) + (k,))

    @staticmethod
    def _value(y):
        return float(y) if y.ndim == 0 else y

    # ---- replays -----------------------------------------------------------
    def forward(self, *xs):
        """The output at new inputs (zero-order replay)."""
        return self._forward_value(xs)

    # gradient, value_and_gradient: compiled (adsim/_tape.pyx)

    def jvp(self, x, v):
        """(f(x), J v): one forward sweep carrying the direction(s) ``v``."""
        xs = self._inputs(x)
        V, k = self._directions(xs, v, "tangent")
        y, ty = self._tangent(xs, V)
        return self._value(y), self._shape_dirs(ty, self.output_shape, k)

    def vjp(self, x, w):
        """(f(x), J^T w): one reverse sweep carrying the weight(s) ``w``."""
        xs = self._inputs(x)
        w = _tape._as_float_array(w, "adjoint weight")
        shape = tuple(self.output_shape)
        if w.shape == shape:
            k, W = None, w.reshape(1, -1)
        elif w.shape[:-1] == shape:
            k, W = w.shape[-1], np.ascontiguousarray(w.reshape(-1, w.shape[-1]).T)
        else:
            raise InvalidArgumentValue(f"adsim: the adjoint weight has shape {w.shape}; expected "
                                       f"{shape} (one weight) or {shape + ('k',)} (k weights)")
        y, adj = self._adjoint(xs, W)
        return self._value(y), self._single([self._shape_dirs(a, x.shape, k) for a, x in zip(adj, xs)])

    def jacobian(self, *xs, mode=None):
        """Dense Jacobian of shape output.shape + input.shape, by forward
        (columns) or reverse (rows) vector sweeps, whichever needs fewer
        directions unless ``mode`` is "forward" or "reverse"."""
        xs = self._inputs(xs)
        m = int(np.prod(self.output_shape))
        n = sum(x.size for x in xs)
        if mode is None:
            mode = "forward" if n <= m else "reverse"
        chunk = max(1, min(max(n, m), _CHUNK_BYTES // (8 * max(self.arena_elements, 1))))
        if mode == "forward":
            cols = []
            for lo in range(0, n, chunk):
                seeds = np.eye(n)[lo:lo + chunk]
                V = np.split(seeds, np.cumsum([x.size for x in xs])[:-1], axis=1)
                cols.append(self._tangent(xs, [np.ascontiguousarray(v) for v in V])[1])
            J = np.concatenate(cols, axis=0).T if cols else np.zeros((m, 0))
        elif mode == "reverse":
            rows = []
            for lo in range(0, m, chunk):
                W = np.eye(m)[lo:lo + chunk]
                rows.append(np.concatenate(self._adjoint(xs, W)[1], axis=1))
            J = np.concatenate(rows, axis=0) if rows else np.zeros((0, n))
        else:
            raise InvalidArgumentValue("adsim: jacobian mode must be 'forward' or 'reverse', not "
                                       f"{mode!r}")
        splits = np.split(J, np.cumsum([x.size for x in xs])[:-1], axis=1)
        return self._single([s.reshape(tuple(self.output_shape) + x.shape)
                             for s, x in zip(splits, xs)])

    def hvp(self, x, v, w=None):
        """Hessian-vector product(s) by reverse-on-forward: one tangent sweep
        carrying ``v`` (shape x.shape, or x.shape + (k,) for k directions) and
        one second-order adjoint sweep. For a vector output, ``w`` weights the
        outputs (the Hessian of w·f)."""
        if (w is None and self.n_inputs == 1 and type(x) is np.ndarray and type(v) is np.ndarray
                and v.shape == x.shape and v.dtype == np.float64 and v.flags.c_contiguous):
            xs = self._inputs((x,))            # the common case: one input, one direction
            if self.slot_size_of(self.output_slot) == 1:
                return self._hvp_one(xs[0], v)
        return self.gradient_and_hvp(x, v, w)[1]

    def gradient_and_hvp(self, x, v, w=None):
        """(gradient of w·f, H v) from the same two sweeps."""
        xs = self._inputs(x)
        V, k = self._directions(xs, v, "direction")
        shape = tuple(self.output_shape)
        if w is None:
            if self.slot_size_of(self.output_slot) != 1:
                raise InvalidArgumentValue("adsim: hvp needs a scalar output or a weight w of "
                                           f"the output's shape {shape}")
            w = _ONE
        else:
            w = _tape._as_float_array(w, "output weight")
            if w.shape != shape and w.size != 1:
                raise InvalidArgumentValue(f"adsim: the output weight has shape {w.shape}, "
                                           f"expected {shape}")
            if w.shape != shape:
                w = np.broadcast_to(w, shape)
        _, _, adj, adot = self._soadjoint(xs, V, w)
        g = self._single([a.reshape(x.shape) for a, x in zip(adj, xs)])
        hv = self._single([self._shape_dirs(d, x.shape, k) for d, x in zip(adot, xs)])
        return g, hv

    @property
    def batched(self):
        """The same replays at B points at once: ``tape.batched.gradient(X)``
        with ``X`` of shape ``(B,) + x.shape`` (docs/tape.md, "Batched replay")."""
        return BatchedReplays(self, Tape)

    # ---- files ---------------------------------------------------------------
    def fuse(self):
        """Compile the tape's runs of elementwise ops over large arrays into
        single loops, for this processor, with the system's C compiler.

        Later sweeps (``forward``, ``jvp`` with any number of directions,
        compressed sparse Jacobians in forward mode, ``gradient``, ``vjp``
        with one weight, ``hvp``) sweep each fused run in one loop with its
        intermediates in registers; adjoints in several directions, and runs
        holding an op without a fused form, stay with the interpreter.
        Runs from 256 elements on are fused; a replay under way finishes
        as it started. Results agree with the interpreter's up to rounding
        (docs/tape.md, "Fused runs"). Compiled kernels are cached on disk
        (``$ADSIM_KERNEL_CACHE``, else ``~/.cache/adsim/kernels``). By
        default adsim fuses a tape on its own once its replays have done
        about as much work as compiling costs (:func:`adsim.set_fusion`).

        Returns a summary of what was fused. Raises
        :class:`adsim.errors.NoCompiler` when no C compiler (``$CC``, else
        ``cc``) builds the kernels; the tape then replays as before.
        """
        self._check_recorded()
        from ._fuse.fuse import fuse
        return fuse(self)

    def save(self, file):
        """Write this tape to ``file`` (a path or a binary file object) in
        the tape file format (docs/tape-format.md): the recorded program as
        data, never code. :func:`adsim.load_tape` reads it back, in this or
        another process, and the loaded tape replays bitwise like this one.
        Primitives are referred to by the ``name=`` they were made with (adsim's
        own by their rules and parameters), nested derivatives keep the
        recorded variants of their inner function, checkpointed loops their
        step tapes and schedule settings, and a tape recorded with containers
        their structure; :class:`adsim.errors.TapeCopyError` names what cannot
        be saved."""
        save_tape_file(self, file)

    # ---- inspection --------------------------------------------------------
    def __repr__(self):
        if self.recording_failed:
            return "<adsim.Tape: recording failed (the function raised)>"
        if self.recording:
            if not len(self) and not self.n_inputs:
                return "<adsim.Tape: empty (tapes are made by adsim.record(f, x))>"
            return f"<adsim.Tape: recording, {len(self)} ops so far>"
        return (f"<adsim.Tape: {len(self)} ops, inputs {self.input_shapes}, "
                f"output {self.output_shape}>")

    def __str__(self):
        return listing(self) if self.output_slot is not None else repr(self)


def set_internal(tape, name, value):
    """Set one of adsim's own attributes of ``tape`` (:data:`_INTERNAL`),
    which users cannot assign."""
    assert name in _INTERNAL, name
    super(Tape, tape).__setattr__(name, value)


def _refuse_attribute(tape, name, how):
    if hasattr(type(tape), name):
        what = f"Tape.{name} is read-only: the recorded program is fixed when adsim.record returns"
    else:
        what = f"a tape takes no attributes of its own ({name!r})"
    raise ReadOnlyTapeAttribute(
        f"adsim: cannot have {name!r} {how}: {what}. Record a new tape (adsim.record(f, x)) "
        f"for another program, and keep your own data beside the tape; only tape.chunked "
        f"may be set")


def _ref(tape, ref):
    if ref >= 0:
        return f"s{ref}[{tape.slot_size_of(ref)}]"
    return f"c{-ref - 1}[{tape.slot_size_of(ref)}]"


def _operand(tape, operand, value):
    """One operand of the listing, by its role (adsim/ops.py)."""
    if operand.is_ref:
        return ", ".join(_ref(tape, r) for r in value) if operand.variadic else _ref(tape, value)
    if operand.role == ops.PARAM:
        return f"c={tape.param_value(value):g}" if value >= 0 else ""
    if operand.role == ops.CALLBACK:
        return type(tape.callbacks[value]).__name__
    if operand.name == "kind":
        return ["<", "<=", ">", ">=", "==", "!="][value]
    return f"{operand.name}={value}"


def listing(tape, limit=200):
    """A readable listing: one line per op, result <- operation(arguments)."""
    lines = [repr(tape)]
    inputs = ", ".join(f"s{s}{tuple(shape)}" for s, shape in zip(tape.input_slots, tape.input_shapes))
    lines.append(f"  inputs: {inputs}")
    codes = tape.op_codes()
    for k, code in enumerate(codes[:limit]):
        o = decode_op(int(code), tape.op_operands(k))
        res = _ref(tape, o.result) if o.result >= 0 else "-"
        args = ", ".join(text for text in (_operand(tape, operand, value) for operand, value
                                           in zip(o.spec.operands, o[1:])) if text)
        flag = " (saves overwritten)" if tape.op_flags(k) & 1 else ""
        lines.append(f"  {k:5d}  {res:>12} <- {o.spec.name.lower()}({args}){flag}")
    if len(codes) > limit:
        lines.append(f"  ... {len(codes) - limit} more ops")
    lines.append(f"  output: s{tape.output_slot}{tuple(tape.output_shape)}")
    return "\n".join(lines)


@functools.wraps(policy.set_fusion)
def set_fusion(mode):
    if not isinstance(mode, str) or mode not in policy.MODES:
        error = InvalidArgumentValue if isinstance(mode, str) else InvalidArgument
        raise error(f"adsim.set_fusion: mode must be one of {', '.join(map(repr, policy.MODES))}, "
                    f"got {given(mode)}")
    return policy.set_fusion(mode)
