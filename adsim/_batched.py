"""Batched replay (``tape.batched``): the tape's replays at B points at once.

The tape is rewritten once per batch size into a tape of the batch
(``adsim/_batch_rewrite.py``), kept with the tape, and replayed by the
ordinary sweeps; a tape without a batched form, or a member leaving the
recorded path, is replayed member by member. See docs/tape.md, "Batched
replay".
"""
import threading
import weakref

import numpy as np

from . import _tape
from ._batch_rewrite import batched_program
from .errors import BatchShapeError, BranchChanged, NoCompiler, UnsupportedOperation


_PROGRAMS = weakref.WeakKeyDictionary()    # tape -> {(batch, summed, fused): program or None}
_REASONS = weakref.WeakKeyDictionary()    # tape -> {key of _PROGRAMS: why no program}
_LOCK = threading.Lock()
_KEPT = 6                                  # batched programs kept per tape (the latest used)
_JACOBIAN_BYTES = 256 * 2 ** 20            # work memory per vector sweep of a batched Jacobian
_STAGING = threading.local()               # per thread: buffers of the program's layout (_in)
DIRECTION, WEIGHT = 1 << 16, 1 << 17       # roles of _in's arrays besides the inputs


def _stack(results):
    """Per-member results (arrays, floats, or tuples of them) stacked along a
    new first axis."""
    first = results[0]
    if isinstance(first, tuple):
        return tuple(_stack([r[i] for r in results]) for i in range(len(first)))
    return np.stack([np.asarray(r, dtype=np.float64) for r in results])


def _in(a, ndim, role):
    """A user's batched array (B,) + shape (+ (k,)) as the program's: shape +
    (B,) (+ (k,)), where ``ndim`` is len(shape); ``role`` tells apart the
    arrays of one call (an input's position, DIRECTION + it, WEIGHT).

    Written into a buffer the thread keeps for the next call (the sweep
    copies it into its arena): a fresh block per call and per argument, freed
    at the call's end, makes the C library's heap shrink and grow again on
    every call, and faulting those pages back in cost more than the batched
    sweep itself (measured on Rosenbrock, n = 1000, B = 64)."""
    moved = np.moveaxis(a, 0, ndim)
    buffers = getattr(_STAGING, "buffers", None)
    if buffers is None:
        buffers = _STAGING.buffers = {}
    key = (role, moved.shape)
    buffer = buffers.get(key)
    if buffer is None:
        if len(buffers) >= 8:
            buffers.clear()
        buffer = buffers[key] = np.empty(moved.shape)
    np.copyto(buffer, moved)
    return buffer


def _ins(X):
    """The batched inputs, each as the program's (see _in)."""
    return [_in(x, x.ndim - 1, i) for i, x in enumerate(X)]


def _dirs(V, X):
    """Directions of the inputs X as the program's (see _in)."""
    return [_in(v, x.ndim - 1, DIRECTION + i) for i, (v, x) in enumerate(zip(V, X))]


def _out(a, ndim):
    """A program's array shape + (B,) (+ (k,)) as the user's (B,) + shape (+
    (k,)): a view, not a copy (copying would cost as much as the batched
    sweep: the fresh block and the freed one make the C library's heap shrink
    and grow again on every call, faulting its pages back in)."""
    return np.moveaxis(np.asarray(a), ndim, 0)


class BatchedReplays:
    """``tape.batched``: the tape's replays at B points at once.

    Every argument takes a leading batch axis: ``X`` of shape ``(B,) +
    x.shape`` for each input (and directions, weights of ``(B,) +`` their
    usual shapes); results come back with the same leading axis, equal to B
    separate replays to rounding. See docs/tape.md, "Batched replay".
    """

    __slots__ = ("tape", "_new_tape")

    def __init__(self, tape, new_tape):
        self.tape = tape
        self._new_tape = new_tape

    def __repr__(self):
        return f"<batched replays of {self.tape!r}>"

    # ---- the batched program ------------------------------------------------------
    def program(self, batch, summed=False):
        """The tape of ``batch`` members made from this tape (``summed``: its
        output the sum of the members' scalar outputs), or None when it has
        none (an op without a batched form): replays then loop."""
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise BatchShapeError(f"adsim: a batch of {batch!r} members; the batch size is an "
                                  f"integer >= 1")
        self.tape._check_recorded()
        fused = getattr(self.tape, "_fusion", None) is not None
        key = (int(batch), bool(summed), fused)
        with _LOCK:
            known = _PROGRAMS.setdefault(self.tape, {})
            if key in known:
                known[key] = known.pop(key)         # most recently used last
                return known[key]
        try:
            program = batched_program(self.tape, batch, self._new_tape, summed)
        except Exception as why:        # NotBatchable; an index out of range at the arena's
            program = None              # point, where the rewrite runs its ops; no memory
            with _LOCK:
                _REASONS.setdefault(self.tape, {})[key] = f"{type(why).__name__}: {why}"
        if program is not None and fused:
            try:                # fused as the tape is: the user asked for compiled runs
                program.fuse()
            except NoCompiler:
                pass
        with _LOCK:
            known = _PROGRAMS.setdefault(self.tape, {})
            program = known.setdefault(key, program)
            while len(known) > _KEPT:               # each holds B times the tape's arena
                del known[next(iter(known))]
            return program

    def is_native(self, batch=2):
        """Whether replays of ``batch`` members run as one batched sweep
        (False: as ``batch`` separate replays of the tape)."""
        return self.program(batch) is not None

    def why_not_native(self, batch=2):
        """Why replays of ``batch`` members loop over the members (the op
        without a batched form), or None when they run as one sweep."""
        if self.program(batch) is not None:
            return None
        fused = getattr(self.tape, "_fusion", None) is not None
        return _REASONS.get(self.tape, {}).get((int(batch), False, fused), "no batched form")

    # ---- arguments -----------------------------------------------------------------
    def _points(self, xs):
        """The batched inputs as float64 arrays of (B,) + each input's shape, and B."""
        tape = self.tape
        tape._check_recorded()
        if tape._n_arguments() != tape.n_inputs:
            raise UnsupportedOperation(
                "adsim: batched replays of a tape recorded with containers of parameters are "
                "not supported; record the function of flat arrays")
        if len(xs) == 1 and isinstance(xs[0], (tuple, list)) and tape.n_inputs > 1:
            xs = tuple(xs[0])                   # the inputs given as one tuple
        if len(xs) != tape.n_inputs:
            raise BatchShapeError(f"adsim: the tape has {tape.n_inputs} inputs but {len(xs)} "
                                  f"batched inputs were given")
        out, batch = [], None
        for i, (x, shape) in enumerate(zip(xs, tape.input_shapes)):
            x = np.ascontiguousarray(_tape._as_float_array(x, f"batched input {i}"))
            if x.ndim != len(shape) + 1 or x.shape[1:] != tuple(shape) or x.shape[0] < 1 or \
                    batch is not None and x.shape[0] != batch:
                want = f"({batch if batch is not None else 'B'},) + {tuple(shape)}"
                raise BatchShapeError(
                    f"adsim: batched input {i} has shape {x.shape}; expected {want}: the batch "
                    f"axis first (B >= 1, the same for every input), then the shape the tape "
                    f"was recorded for")
            batch = x.shape[0]
            out.append(x)
        return out, batch

    @staticmethod
    def _per_member(values, batch, shapes, what):
        """Directions or weights, one array per shape: (B,) + shape, or (B,) +
        shape + (k,) for k of them per member (the same k for all)."""
        if not isinstance(values, (tuple, list)):
            values = (values,)
        if len(values) != len(shapes):
            raise BatchShapeError(f"adsim: {len(values)} batched {what}s for {len(shapes)} inputs")
        out, k = [], None
        for i, (v, shape) in enumerate(zip(values, shapes)):
            v = _tape._as_float_array(v, f"batched {what} {i}")
            full = (batch,) + tuple(shape)
            kk = None if v.shape == full else v.shape[-1] if v.shape[:-1] == full else -1
            if kk == -1 or (i and kk != k):
                raise BatchShapeError(
                    f"adsim: batched {what} {i} has shape {v.shape}; expected {full} (one per "
                    f"member) or {full + ('k',)} (k per member, the same k for every input)")
            k = kk
            out.append(v)
        return out, k

    def _scalar_output(self, what):
        if self.tape.slot_size_of(self.tape.output_slot) != 1:
            raise ValueError(f"adsim: {what} needs a scalar output; this tape's output has shape "
                             f"{self.tape.output_shape}: use batched.vjp or batched.jacobian")

    def _single(self, arrays):
        return arrays[0] if self.tape.n_inputs == 1 else tuple(arrays)

    def _ndims(self):
        return [len(s) for s in self.tape.input_shapes]

    # ---- running ---------------------------------------------------------------------
    def _run(self, program, batched, member, batch):
        """``batched(program)``, or ``member(b)`` for every member stacked
        when there is no program. A member off the recorded path raises its
        own replay's error, naming the member."""
        if program is not None:
            try:
                return batched(program)
            except BranchChanged:
                pass            # which member left the path: the separate replays say
        results = []
        for b in range(batch):
            try:
                results.append(member(b))
            except BranchChanged as err:
                raise type(err)(f"adsim: batch member {b}: {err}", op_index=err.op_index,
                                op_name=err.op_name, batch_member=b) from err
        return _stack(results)

    # ---- the replays -------------------------------------------------------------------
    def forward(self, *xs):
        """The outputs at B points: shape (B,) + the output's shape."""
        X, batch = self._points(xs)
        nd = len(self.tape.output_shape)
        return self._run(self.program(batch),
                         lambda bt: _out(bt._forward(_ins(X)), nd),
                         lambda b: self.tape.forward(*[x[b] for x in X]), batch)

    def value_and_gradient(self, *xs):
        """(values of shape (B,), gradients of (B,) + each input's shape) of a
        scalar output."""
        X, batch = self._points(xs)
        self._scalar_output("the gradient")

        def batched(bt):
            y, adj = bt._adjoint(_ins(X), None)    # weight 1 on each member
            return y, self._single([_out(a.reshape(x.shape[1:] + (batch,)), x.ndim - 1)
                                    for a, x in zip(adj, X)])

        return self._run(self.program(batch), batched,
                         lambda b: self.tape.value_and_gradient(*[x[b] for x in X]), batch)

    def gradient(self, *xs):
        """The gradients at B points: (B,) + the input's shape (a tuple for
        several inputs)."""
        X, batch = self._points(xs)
        self._scalar_output("the gradient")
        summed = self.program(batch, summed=True)
        if summed is None:
            return self.value_and_gradient(*X)[1]

        def batched(bt):        # the gradient of the members' total: each member's own
            adj = bt._adjoint(_ins(X), None)[1]
            return self._single([_out(a.reshape(x.shape[1:] + (batch,)), x.ndim - 1)
                                 for a, x in zip(adj, X)])

        return self._run(summed, batched,
                         lambda b: self.tape.gradient(*[x[b] for x in X]), batch)

    def jvp(self, x, v):
        """(outputs, J v) at B points: ``v`` of (B,) + x.shape, or (B,) +
        x.shape + (k,) for k directions per member."""
        X, batch = self._points(x if isinstance(x, (tuple, list)) else (x,))
        V, _ = self._per_member(v, batch, self.tape.input_shapes, "direction")
        nd = len(self.tape.output_shape)

        def batched(bt):
            y, ty = bt.jvp(tuple(_ins(X)), tuple(_dirs(V, X)))
            return _out(y, nd), _out(ty, nd)

        return self._run(self.program(batch), batched,
                         lambda b: self.tape.jvp(tuple(x[b] for x in X), tuple(u[b] for u in V)),
                         batch)

    def vjp(self, x, w):
        """(outputs, J^T w) at B points: ``w`` of (B,) + the output's shape,
        or (B,) + that + (k,)."""
        X, batch = self._points(x if isinstance(x, (tuple, list)) else (x,))
        (W,), _ = self._per_member(w, batch, [self.tape.output_shape], "adjoint weight")
        nd = len(self.tape.output_shape)

        def batched(bt):
            y, adj = bt.vjp(tuple(_ins(X)), _in(W, nd, WEIGHT))
            adj = adj if isinstance(adj, tuple) else (adj,)
            return _out(y, nd), self._single([_out(a, x.ndim - 1) for a, x in zip(adj, X)])

        return self._run(self.program(batch), batched,
                         lambda b: self.tape.vjp(tuple(x[b] for x in X), W[b]), batch)

    def hvp(self, x, v, w=None):
        """Hessian-vector products at B points: ``v`` of (B,) + x.shape (or +
        (k,)); for a vector output ``w`` of (B,) + the output's shape weights
        each member's outputs."""
        return self._second_order(x, v, w, gradients=False)

    def gradient_and_hvp(self, x, v, w=None):
        """(gradients of w·f, H v) at B points, from the same two sweeps."""
        return self._second_order(x, v, w, gradients=True)

    def _second_order(self, x, v, w, gradients):
        X, batch = self._points(x if isinstance(x, (tuple, list)) else (x,))
        V, _ = self._per_member(v, batch, self.tape.input_shapes, "direction")
        nd = len(self.tape.output_shape)
        program = None
        if w is None:
            self._scalar_output("hvp without an output weight")
            program = self.program(batch, summed=True)
            W = np.ones((batch,) + tuple(self.tape.output_shape))
        else:
            (W,), k = self._per_member(w, batch, [self.tape.output_shape], "output weight")
            if k is not None:
                raise BatchShapeError(f"adsim: batched output weight of shape {W.shape}; "
                                      f"expected {(batch,) + tuple(self.tape.output_shape)}")
        weight = None if program is not None else _in(W, nd, WEIGHT)
        program = program if program is not None else self.program(batch)

        def batched(bt):
            g, hv = bt.gradient_and_hvp(tuple(_ins(X)), tuple(_dirs(V, X)), weight)
            g, hv = ((g, hv) if isinstance(g, tuple) else ((g,), (hv,)))
            hv = self._single([_out(h, x.ndim - 1) for h, x in zip(hv, X)])
            return (self._single([_out(a, x.ndim - 1) for a, x in zip(g, X)]), hv) \
                if gradients else hv

        def member(b):
            g, hv = self.tape.gradient_and_hvp(tuple(x[b] for x in X), tuple(u[b] for u in V),
                                               None if w is None else W[b])
            return (g, hv) if gradients else hv

        return self._run(program, batched, member, batch)

    def jacobian(self, *xs, mode=None):
        """Dense Jacobians at B points: (B,) + output shape + input shape,
        by forward (columns) or reverse (rows) vector sweeps as tape.jacobian."""
        X, batch = self._points(xs)
        sizes = [x[0].size for x in X]
        out_shape = tuple(self.tape.output_shape)
        n, m = sum(sizes), int(np.prod(out_shape))
        if mode is None:
            mode = "forward" if n <= m else "reverse"
        if mode not in ("forward", "reverse"):
            raise ValueError(f"adsim: jacobian mode must be 'forward' or 'reverse', not {mode!r}")

        def batched(bt):
            chunk = max(1, _JACOBIAN_BYTES // (8 * max(bt.arena_elements, 1)))
            Xp = tuple(_ins(X))
            parts = []
            for lo in range(0, n if mode == "forward" else m, chunk):
                if mode == "forward":            # columns lo.. of every member: (n, k) seeds
                    seeds = np.eye(n)[:, lo:lo + chunk]
                    V = [np.broadcast_to(s.reshape(x.shape[1:] + (1, -1)),
                                         x.shape[1:] + (batch, s.shape[1]))
                         for s, x in zip(np.split(seeds, np.cumsum(sizes)[:-1]), X)]
                    ty = bt.jvp(Xp, tuple(V))[1]                 # out + (B, k)
                    parts.append(np.moveaxis(ty.reshape(m, batch, -1), 1, 0))
                else:                            # rows lo.. of every member
                    seeds = np.eye(m)[:, lo:lo + chunk]
                    W = np.broadcast_to(seeds.reshape(out_shape + (1, -1)),
                                        out_shape + (batch, seeds.shape[1]))
                    adj = bt.vjp(Xp, W)[1]                       # shape + (B, k) per input
                    adj = adj if isinstance(adj, tuple) else (adj,)
                    rows = np.concatenate([a.reshape(s, batch, -1) for a, s in zip(adj, sizes)])
                    parts.append(rows.transpose(1, 2, 0))        # (B, k, n)
            J = np.concatenate(parts, axis=2 if mode == "forward" else 1) if parts else \
                np.zeros((batch, m, n))
            return self._single([np.ascontiguousarray(j).reshape((batch,) + out_shape + x.shape[1:])
                                 for j, x in zip(np.split(J, np.cumsum(sizes)[:-1], axis=2), X)])

        return self._run(self.program(batch), batched,
                         lambda b: self.tape.jacobian(*[x[b] for x in X], mode=mode), batch)
