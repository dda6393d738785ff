"""The pieces every NumPy function on active arrays is made of: the tape of
the operands, constants, recording an op, broadcasting, elementwise binary
ops and recorded comparisons, copies and gathers."""
from math import prod

import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .._active import Active, other_layout, record_binary_refs, wrap
from .._validate import real_array
from ..errors import FinishedRecording, MixedRecordings, UnsupportedOperation
from . import layout


def tape_of(*values):
    """The recording tape shared by the active values among ``values``."""
    tape = None
    for v in values:
        if isinstance(v, Active):
            if tape is None:
                tape = v.tape
            elif v.tape is not tape:
                raise MixedRecordings(_MIXED_RECORDINGS if tape.recording and v.tape.recording
                                      else _KEPT_FROM_EARLIER)
    if tape is None:
        raise TypeError("adsim: internal dispatch without an active operand")
    if not tape.recording:
        raise FinishedRecording("adsim: this active array belongs to a finished recording; it "
                                "can no longer be used in computations (return values, do not "
                                "store them: an object attribute, global or cache holding one "
                                "needs a plain array instead, made outside the recorded "
                                "function)")
    return tape


_MIXED_RECORDINGS = (
    "adsim: active arrays from two different recordings were combined: a derivative taken "
    "inside a recorded function (ad.grad(g)(y) in f) used an active value of the outer "
    "function that g reads from its closure, a global or an object. Pass it to g as an "
    "argument instead (ad.grad(g, argnums=0)(y, k) with g(y, k))")
_KEPT_FROM_EARLIER = (
    "adsim: an active array kept from an earlier recording was used again. Arrays computed "
    "inside a recorded function are active arrays of that recording only: one stored in an "
    "object attribute, a global or a cache (a workspace made once with np.zeros, say) cannot "
    "be used by a later call. Store plain arrays there: make the workspace outside the "
    "recorded function (in __init__, say)")


def shape_of(v):
    return v.shape if isinstance(v, Active) else np.shape(v)


def size_of(shape):
    return prod(shape)


def constant(v):
    """A plain operand as a float64 array, with a clear error for bad dtypes."""
    return real_array(v, "a constant operand")


def new(tape, code, shape, operands):
    """Record op ``code`` with a new result of ``shape``; returns the Active."""
    shape = tuple(int(d) for d in shape)
    slot = tape.record_op(int(code), size_of(shape), operands)
    return wrap(tape, slot, shape)


def operand(tape, v, shape):
    """``v`` as an operand of an elementwise op whose result has ``shape``.

    Returns (ref, keep): ``keep`` holds a temporary Active alive until the op
    is recorded (its slot could otherwise be reused for the result).
    Operands keep size 1 (stride 0 in kernels) or are broadcast to ``shape``.
    """
    n = size_of(shape)
    if isinstance(v, Active):
        if v.size == n or v.size == 1:
            return v.slot, v
        b = broadcast_to(v, shape)
        return b.slot, b
    arr = constant(v)
    if arr.size != n and arr.size != 1:
        arr = np.broadcast_to(arr, shape)
    return tape.const_ref(arr), None


def as_active(tape, v):
    """An Active holding ``v`` (a FILL of a constant when ``v`` is plain)."""
    if isinstance(v, Active):
        return v
    arr = constant(v)
    return new(tape, Op.FILL, arr.shape, [tape.const_ref(arr)])


def normalize_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def axes_of(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = [normalize_axis(a, ndim) for a in axis]
        if len(set(axes)) < len(axes):       # NumPy's error: reducing twice is no reduction
            raise ValueError("duplicate value in 'axis'")
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim),)


def reduce_axes(axis, ndim):
    """``axes_of`` as ``ufunc.reduce`` reads ``axis``: a 0-d array takes an
    integer axis 0 or -1 and reduces over nothing (NumPy's rule for scalars)."""
    if ndim == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) \
            and axis in (0, -1):
        return ()
    return axes_of(axis, ndim)


def split_at(shape, axis):
    """(outer, m, inner) view of ``shape`` around ``axis``."""
    return size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:])


def reject_kwargs(name, **kwargs):
    for key, value in kwargs.items():
        if value is not None and value is not np._NoValue:
            raise UnsupportedOperation(f"adsim: {name}(..., {key}=...) is not supported on active "
                                       f"arrays; leave {key} at its default")


def float64_only(name, dtype):
    """Refuse a ``dtype=`` other than float64 (adsim computes in float64; a
    float32 accumulation would silently differ from NumPy's)."""
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise UnsupportedOperation(f"adsim: {name}(..., dtype={np.dtype(dtype).name}) is not "
                                   f"supported on active arrays: adsim computes in float64; "
                                   f"leave dtype at its default")


def unsupported(name):
    return UnsupportedOperation(
        f"adsim: cannot differentiate `{name}`: no rule is registered; register a primitive "
        f"with adsim.primitive (vjp/jvp rules, see docs/tape.md), or call it on the plain "
        f"value adsim.value(x)")


def broadcast_to(x, shape, subok=False):
    """Repeat ``x`` to ``shape`` with one BROADCAST op per repeated axis."""
    shape = tuple(shape)
    if np.broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"adsim: cannot broadcast shape {x.shape} to {shape}")
    cur = [1] * (len(shape) - x.ndim) + list(x.shape)
    out = x
    for axis, (have, want) in enumerate(zip(list(cur), shape)):
        if have == 1 and want != 1:
            outer, _, inner = split_at(cur, axis)
            cur[axis] = want
            out = new(out.tape, Op.BROADCAST, cur, [out.slot, outer, want, inner])
    if tuple(cur) != out.shape:
        out = reshaped(out, shape)
    return out


def binary(code, a, b):
    """a <op> b for a binary primitive, with NumPy broadcasting. maximum and
    minimum record no branch: their kernels choose the side from the values
    at every replay (ties and NaN in ``a`` go to ``a``), so a replay where
    the other side wins follows it."""
    tape = tape_of(a, b)
    shape = np.broadcast_shapes(shape_of(a), shape_of(b))
    ra, keep_a = operand(tape, a, shape)
    rb, keep_b = operand(tape, b, shape)
    return layout.elementwise(record_binary_refs(tape, int(code), ra, rb, shape), a, b)


def record_compare(tape, kind, ra, rb, shape):
    n = size_of(shape)
    boff = tape.add_branch_space(n)
    tape.record_op(int(Op.COMPARE), -1, [ra, rb, int(kind), boff, n])
    return tape.branch_outcome(boff, n).reshape(shape)


def compare(kind, a, b):
    """A recorded comparison; returns the outcome as plain booleans."""
    if not isinstance(a, Active) and not isinstance(b, Active):
        raise TypeError("adsim: internal compare without an active operand")
    if isinstance(b, Active) and not isinstance(a, Active):
        return compare(_MIRROR[kind], b, a)
    tape = tape_of(a, b)
    shape = np.broadcast_shapes(shape_of(a), shape_of(b))
    ra, keep_a = operand(tape, a, shape)
    rb, keep_b = operand(tape, b, shape)
    out = layout.plain_elementwise(record_compare(tape, kind, ra, rb, shape), a, b)
    return out[()] if out.ndim == 0 else out


_MIRROR = {CompareKind.CMP_LT: CompareKind.CMP_GT, CompareKind.CMP_LE: CompareKind.CMP_GE,
           CompareKind.CMP_GT: CompareKind.CMP_LT, CompareKind.CMP_GE: CompareKind.CMP_LE,
           CompareKind.CMP_EQ: CompareKind.CMP_EQ, CompareKind.CMP_NE: CompareKind.CMP_NE}


def copy(a, order="K", subok=False):
    """np.copy: a new array of ``a``'s values, laid out in memory as NumPy's
    copy in ``order`` is (order "K" keeps a transpose's layout)."""
    out = new(tape_of(a), Op.COPY, a.shape, [a.slot])
    if order == "C" or (order in ("K", "A") and not other_layout(a)):
        return out
    return layout.laid_out(out, np.copy(a._positions(), order=order))   # NumPy checks ``order``


def reshaped(a, shape):
    """A new array with ``a``'s elements in ``shape`` (internal: no view)."""
    return new(tape_of(a), Op.COPY, resolve_shape(a, shape), [a.slot])


def resolve_shape(a, newshape):
    """``newshape`` for ``a``'s elements, its -1 worked out; NumPy's errors."""
    if isinstance(newshape, (int, np.integer)):
        newshape = (newshape,)
    newshape = tuple(int(d) for d in newshape)
    if newshape.count(-1) > 1:
        raise ValueError("adsim: can only specify one unknown dimension")
    if -1 in newshape:
        known = size_of([d for d in newshape if d != -1])
        if known == 0 or a.size % known:
            raise ValueError(f"adsim: cannot reshape array of size {a.size} into shape {newshape}")
        newshape = tuple(a.size // known if d == -1 else d for d in newshape)
    if size_of(newshape) != a.size or any(d < 0 for d in newshape):
        raise ValueError(f"adsim: cannot reshape array of size {a.size} into shape {newshape}")
    return newshape


def gather(a, idx):
    """Active with out[j] = a.flat[idx.flat[j]] and shape idx.shape."""
    idx = np.asarray(idx)
    flat = idx.reshape(-1)
    tape = tape_of(a)
    if flat.size == a.size and np.array_equal(flat, np.arange(a.size)):
        return new(tape, Op.COPY, idx.shape, [a.slot])
    return new(tape, Op.GATHER, idx.shape, [a.slot, tape.add_indices(flat, shared=True)] + strided(idx))


def strided(idx):
    """[start, step, inner, outer_step] when the indices of a gather are those
    of a 1-d or 2-d slice, start + u outer_step + i step with i < inner
    (its kernel then needs no index loads), else zeros."""
    size = np.size(idx)
    if size <= 1:                   # (one element: many of a joined list's pieces)
        return [int(np.reshape(idx, -1)[0]), 1, 1, 0] if size else [0, 0, 0, 0]
    rows = np.asarray(idx).reshape(-1, idx.shape[-1]) if np.ndim(idx) else np.reshape(idx, (1, 1))
    inner = rows.shape[1]
    step = int(rows[0, 1] - rows[0, 0]) if inner > 1 else 1
    outer_step = int(rows[1, 0] - rows[0, 0]) if rows.shape[0] > 1 else 0
    if step == 0:
        return [0, 0, 0, 0]
    want = rows[0, 0] + outer_step * np.arange(rows.shape[0])[:, None] + step * np.arange(inner)
    if not np.array_equal(rows, want):
        return [0, 0, 0, 0]
    return [int(rows[0, 0]), step, inner, outer_step]


def active_leaves(obj, depth=0):
    """The active arrays held by ``obj`` and the lists, tuples and dicts
    nested in it (to a bounded depth)."""
    if isinstance(obj, Active):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)) and depth < 8:
        return [a for o in obj for a in active_leaves(o, depth + 1)]
    return []
