"""NumPy semantics on active arrays: broadcasting, reductions, indexing,
joining, products and the ``__array_ufunc__``/``__array_function__`` tables.

Every function here turns a NumPy call into a few tape ops. Elements that
are only moved or repeated (transpose, flip, slicing, concatenate, pad, ...)
are recorded through one index map: the NumPy function is applied to arrays
of element indices, and the result says where each output element comes from.
"""
import math

import numpy as np

from . import ops
from ._tape import Active, CompareKind, Opcode as Op, _install_unary_ufuncs, make_view, \
    mark_written, record_binary_refs, record_unary, wrap
from .errors import UnsupportedOperation

_install_unary_ufuncs(ops.UNARY_UFUNCS)


# ---------------------------------------------------------------- helpers

def tape_of(*values):
    """The recording tape shared by the active values among ``values``."""
    tape = None
    for v in values:
        if isinstance(v, Active):
            if tape is None:
                tape = v.tape
            elif v.tape is not tape:
                raise ValueError(
                    "adsim: active arrays from two different recordings were combined. A value "
                    "recorded by one adsim call cannot be used inside another; pass it in as an "
                    "argument of the inner function instead")
    if tape is None:
        raise TypeError("adsim: internal dispatch without an active operand")
    if not tape.recording:
        raise RuntimeError("adsim: this active array belongs to a finished recording; it can no "
                           "longer be used in computations (return values, do not store them)")
    return tape


def shape_of(v):
    return v.shape if isinstance(v, Active) else np.shape(v)


def size_of(shape):
    return math.prod(shape)


def constant(v):
    """A plain operand as a float64 array, with a clear error for bad dtypes."""
    arr = np.asarray(v)
    if arr.dtype.kind == "c":
        raise TypeError("adsim: complex constants cannot enter a recording; split real and "
                        "imaginary parts")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"adsim: cannot use a {arr.dtype} value in a recorded computation")
    return arr.astype(np.float64, copy=False)


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
    if not -ndim <= axis < max(ndim, 1):
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim if ndim else 0


def axes_of(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted({normalize_axis(a, ndim) for a in axis}))
    return (normalize_axis(axis, ndim),)


def split_at(shape, axis):
    """(outer, m, inner) view of ``shape`` around ``axis``."""
    return size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:])


def reject_kwargs(name, **kwargs):
    for key, value in kwargs.items():
        if value is not None and value is not np._NoValue:
            raise UnsupportedOperation(f"adsim: {name}(..., {key}=...) is not supported on active "
                                       f"arrays; leave {key} at its default")


# ------------------------------------------------------- elementwise ops

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
    """a <op> b for a binary primitive, with NumPy broadcasting."""
    tape = tape_of(a, b)
    shape = np.broadcast_shapes(shape_of(a), shape_of(b))
    ra, keep_a = operand(tape, a, shape)
    rb, keep_b = operand(tape, b, shape)
    if code == Op.MAXIMUM:
        record_compare(tape, CompareKind.CMP_GE, ra, rb, shape)
    elif code == Op.MINIMUM:
        record_compare(tape, CompareKind.CMP_LE, ra, rb, shape)
    return record_binary_refs(tape, int(code), ra, rb, shape)


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
    out = record_compare(tape, kind, ra, rb, shape)
    return out[()] if out.ndim == 0 else out


_MIRROR = {CompareKind.CMP_LT: CompareKind.CMP_GT, CompareKind.CMP_LE: CompareKind.CMP_GE,
           CompareKind.CMP_GT: CompareKind.CMP_LT, CompareKind.CMP_GE: CompareKind.CMP_LE,
           CompareKind.CMP_EQ: CompareKind.CMP_EQ, CompareKind.CMP_NE: CompareKind.CMP_NE}


def absolute(x):
    tape = tape_of(x)
    record_compare(tape, CompareKind.CMP_GE, x.slot, tape.const_ref(0.0), x.shape)
    return record_unary(x, int(Op.ABS))


def clip(x, a_min=None, a_max=None, out=None, **kwargs):
    reject_kwargs("clip", out=out)
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    y = x
    if a_min is not None:
        y = binary(Op.MAXIMUM, y, a_min)
    if a_max is not None:
        y = binary(Op.MINIMUM, y, a_max)
    if y is x:
        y = copy(x)
    return y


def where(condition, x=None, y=None):
    if x is None or y is None:
        raise UnsupportedOperation("adsim: np.where(condition) with one argument returns indices; "
                                   "call it on a comparison result, which is a plain array")
    if isinstance(condition, Active):
        raise TypeError("adsim: np.where needs a boolean condition, got an active float array; "
                        "write a comparison such as np.where(x > 0, a, b)")
    tape = tape_of(x, y)
    mask = np.asarray(condition, dtype=bool)
    shape = np.broadcast_shapes(mask.shape, shape_of(x), shape_of(y))
    ra, keep_a = operand(tape, x, shape)
    rb, keep_b = operand(tape, y, shape)
    n = size_of(shape)
    boff = tape.add_branch_space(n)
    tape.set_branches(boff, np.broadcast_to(mask, shape))
    return new(tape, Op.WHERE, shape, [ra, rb, boff])


def stop_gradient(x):
    """``x`` with derivative zero: replays follow its value, derivatives ignore it."""
    if not isinstance(x, Active):
        return x
    return record_unary(x, int(Op.STOP_GRADIENT))


def value(x):
    """``x`` without derivatives (see adsim.value): inside a recording a
    recorded stop-gradient, so replays follow it; else a plain array."""
    if isinstance(x, Active):
        return stop_gradient(x)
    return np.asarray(x)


# ------------------------------------------- integer-valued results
#
# floor, ceil, trunc, rint, //, int(), astype(int), indices: their results
# are piecewise constant in x. They are returned as plain arrays (so they
# index, count and loop like NumPy's) and the recording keeps a guard: the
# interval [lo, hi) that each element of x must stay in for the result to be
# the same. A replay outside it raises BranchChanged (the functional API then
# records again), so a guarded constant is never stale; its derivative, zero,
# is exact almost everywhere.

def guard(x, lo, hi):
    """Record that every element of ``x`` lies in [lo, hi) (as it does now)."""
    tape = tape_of(x)
    record_compare(tape, CompareKind.CMP_GE, x.slot, tape.const_ref(lo), x.shape)
    record_compare(tape, CompareKind.CMP_LT, x.slot, tape.const_ref(hi), x.shape)
    if np.isnan(np.asarray(lo)).any():      # NaN fails both bounds whatever x is
        record_compare(tape, CompareKind.CMP_EQ, x.slot, x.slot, x.shape)


def current(x):
    """The value ``x`` holds now, as a plain array of its shape."""
    return tape_of(x).slot_value(x.slot).reshape(x.shape)


def _up(v):
    return np.nextafter(v, np.inf)


def rounded(x, how):
    """floor/ceil/trunc/rint of an active array: a guarded plain array."""
    v = current(x)
    with np.errstate(invalid="ignore"):
        if how == "floor":
            c = np.floor(v)
            lo, hi = c, np.maximum(c + 1.0, _up(c))
        elif how == "ceil":
            c = np.ceil(v)
            lo, hi = _up(c - 1.0), _up(c)
        elif how == "trunc":
            c = np.trunc(v)
            neg = v < 0
            lo = np.where(neg, _up(c - 1.0), c)
            hi = np.where(neg, _up(c), np.maximum(c + 1.0, _up(c)))
        elif how == "rint":
            c = np.rint(v)
            even = np.fmod(c, 2.0) == 0       # halves round to the even neighbour
            lo = np.where(even, c - 0.5, _up(c - 0.5))
            hi = np.where(even, _up(c + 0.5), c + 0.5)
        else:
            raise AssertionError(how)
    guard(x, lo, hi)
    return c


def frozen(x, what):
    """The current value of ``x`` as a plain array, guarded to stay equal on
    replay. Only for values with no derivative (adsim.value results and what
    is computed from them): freezing anything else would drop its derivative."""
    if tape_of(x).slot_is_varied(x.slot):
        x._leak(what)
    v = current(x)
    guard(x, v, _up(v))
    return v


def as_integers(x, dtype=np.int64):
    """``x.astype(int)``: truncation, guarded."""
    return rounded(x, "trunc").astype(dtype)


def _finite_divisor(b, op):
    if not isinstance(b, Active) and not np.isfinite(constant(b)).all():
        raise UnsupportedOperation(f"adsim: `{op}` by a non-finite constant is not recorded; "
                                   f"use a finite divisor (or np.where to select the cases)")


def floor_divide(a, b):
    _finite_divisor(b, "//")
    return rounded(binary(Op.DIV, a, b), "floor")


def remainder(a, b):
    """a % b = a - b floor(a / b) (NumPy's sign convention); the floor is a
    guarded constant, so the derivative is 1 in a and -floor(a/b) in b."""
    _finite_divisor(b, "%")
    return a - b * floor_divide(a, b)


def fmod(a, b):
    _finite_divisor(b, "fmod")
    return a - b * rounded(binary(Op.DIV, a, b), "trunc")


# ------------------------------------------------------------ reductions

def finish_reduction(out, shape, axes, keepdims):
    """Give the reduced result its final shape (keepdims puts 1s back)."""
    if keepdims:
        final = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        final = tuple(d for i, d in enumerate(shape) if i not in axes)
    if out.shape == final:
        return out
    return reshaped(out, final)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("sum", out=out, initial=initial, where=where)
    axes = axes_of(axis, a.ndim)
    tape = tape_of(a)
    y, cur = a, list(a.shape)
    for ax in sorted(axes, reverse=True):
        outer, m, inner = split_at(cur, ax)
        del cur[ax]
        y = new(tape, Op.SUM, cur, [y.slot, outer, m, inner])
    if y is a:
        y = copy(a)
    return finish_reduction(y, a.shape, axes, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    reject_kwargs("mean", out=out, where=where)
    count = size_of([a.shape[i] for i in axes_of(axis, a.ndim)])
    return binary(Op.DIV, sum(a, axis=axis, keepdims=keepdims), float(count))


def _extremum(a, axis, keepdims, want_min):
    axes = axes_of(axis, a.ndim)
    tape = tape_of(a)
    if a.size == 0:
        raise ValueError("adsim: max/min of an empty array")
    y, cur = a, list(a.shape)
    for ax in sorted(axes, reverse=True):
        outer, m, inner = split_at(cur, ax)
        del cur[ax]
        ioff = tape.add_indices(np.zeros(outer * inner, dtype=np.int32))
        tape.record_op(int(Op.ARGEXT), -1, [y.slot, outer, m, inner, ioff, int(want_min)])
        y = new(tape, Op.GATHER, cur, [y.slot, ioff, 0, 0, 0, 0])
    return finish_reduction(y, a.shape, axes, keepdims)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("max", out=out, initial=initial, where=where)
    return _extremum(a, axis, keepdims, False)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("min", out=out, initial=initial, where=where)
    return _extremum(a, axis, keepdims, True)


def _argext(a, axis, want_min):
    tape = tape_of(a)
    if axis is None:
        outer, m, inner, shape = 1, a.size, 1, ()
    else:
        ax = normalize_axis(axis, a.ndim)
        outer, m, inner = split_at(a.shape, ax)
        shape = a.shape[:ax] + a.shape[ax + 1:]
    ioff = tape.add_indices(np.zeros(outer * inner, dtype=np.int32))
    tape.record_op(int(Op.ARGEXT), -1, [a.slot, outer, m, inner, ioff, int(want_min)])
    flat = tape.index_record(ioff, outer * inner).astype(np.intp)
    local = (flat // inner) % m
    return local.reshape(shape)[()] if shape == () else local.reshape(shape)


def argmax(a, axis=None, out=None, keepdims=False):
    reject_kwargs("argmax", out=out)
    return _argext(a, axis, False)


def argmin(a, axis=None, out=None, keepdims=False):
    reject_kwargs("argmin", out=out)
    return _argext(a, axis, True)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product as a chain of multiplications along the axis (exact derivatives
    at zeros, unlike exp(sum(log)))."""
    reject_kwargs("prod", out=out, initial=initial, where=where)
    if axis is None:
        y = prod(reshaped(a, (-1,)), axis=0)
        return reshaped(y, (1,) * a.ndim) if keepdims else y
    axes = axes_of(axis, a.ndim)
    y = a
    for ax in sorted(axes, reverse=True):
        n = y.shape[ax]
        index = [slice(None)] * y.ndim
        index[ax] = 0
        acc = getitem(y, tuple(index)) if n else 1.0
        for k in range(1, n):
            index[ax] = k
            acc = acc * getitem(y, tuple(index))
        y = acc if isinstance(acc, Active) else as_active(tape_of(a), np.ones(
            y.shape[:ax] + y.shape[ax + 1:]))
    return finish_reduction(y, a.shape, axes, keepdims) if keepdims else y


def cumsum(a, axis=None, dtype=None, out=None):
    reject_kwargs("cumsum", out=out)
    if axis is None:
        a, axis = reshaped(a, (-1,)), 0
    ax = normalize_axis(axis, a.ndim)
    outer, m, inner = split_at(a.shape, ax)
    return new(tape_of(a), Op.CUMSUM, a.shape, [a.slot, outer, m, inner])


# ------------------------------------------------------ shape and indexing
#
# Views follow NumPy exactly: a function that only moves elements is applied
# to the root's array of element positions (``Active._positions``); when
# NumPy's result shares memory with that array, NumPy made a view, and so do
# we (see the Active docstring for how views stay current).

def copy(a, order="K", subok=False):
    return new(tape_of(a), Op.COPY, a.shape, [a.slot])


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


def refresh_view(view, root):
    """Gather a view's elements again from its root (the root was written)."""
    tape = tape_of(root)
    positions = view._positions()
    flat = positions.reshape(-1)
    if flat.size == root.size and np.array_equal(flat, np.arange(root.size)):
        tape.record_op(int(Op.COPY), -2, [view._view_slot(), root.slot])
    else:
        tape.record_op(int(Op.GATHER), -2, [view._view_slot(), root.slot, tape.add_indices(flat)]
                       + strided(positions))


def derived(a, positions, materialize=None):
    """The result of a NumPy function that only moves ``a``'s elements, given
    as the root positions of its elements: a view of ``a``'s root when NumPy's
    own result is a view (``materialize()`` then records its values, by
    default a gather from the root), else a copy."""
    root = a._root()
    if isinstance(positions, np.ndarray) and positions.size and \
            np.may_share_memory(positions, root._positions()):
        out = materialize() if materialize is not None else gather(root, positions)
        if out is a or out.base is not None:
            out = copy(out)
        return make_view(out, root, positions)
    return gather(root, np.asarray(positions))


def view_of(a):
    """A view of all of ``a`` (``a.view()``, ``a.real``, ``a[...]``)."""
    return derived(a, a._positions()[...], lambda: copy(a))


def reshape(a, newshape=None, order="C", shape=None, copy=None):
    newshape = shape if newshape is None else newshape
    if order not in ("C", "A"):
        raise UnsupportedOperation("adsim: only C-order reshapes are recorded")
    newshape = resolve_shape(a, newshape)
    if copy:
        return reshaped(a, newshape)
    positions = a._positions().reshape(newshape)
    return derived(a, positions, lambda: reshaped(a, newshape))


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def squeeze(a, axis=None):
    return reshape(a, np.squeeze(np.empty(a.shape, dtype=np.bool_), axis=axis).shape)


def expand_dims(a, axis):
    return reshape(a, np.expand_dims(np.empty(a.shape, dtype=np.bool_), axis).shape)


def _check_index(key):
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        if isinstance(part, Active):
            raise TypeError("adsim: an active array cannot be used as an index (its values "
                            "would be frozen); index with integers, slices or boolean masks "
                            "from comparisons")


def gather(a, idx):
    """Active with out[j] = a.flat[idx.flat[j]] and shape idx.shape."""
    idx = np.asarray(idx)
    flat = idx.reshape(-1)
    tape = tape_of(a)
    if flat.size == a.size and np.array_equal(flat, np.arange(a.size)):
        return new(tape, Op.COPY, idx.shape, [a.slot])
    return new(tape, Op.GATHER, idx.shape, [a.slot, tape.add_indices(flat)] + strided(idx))


def strided(idx):
    """[start, step, inner, outer_step] when the indices of a gather are those
    of a 1-d or 2-d slice, start + u outer_step + i step with i < inner
    (its kernel then needs no index loads), else zeros."""
    if np.size(idx) == 0:
        return [0, 0, 0, 0]
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


def getitem(a, key):
    _check_index(key)
    return derived(a, a._positions()[key])


def _same_elements(value, root, target):
    """Is ``value`` a view showing exactly the elements ``target`` of ``root``?
    (``y[a:b] += x`` assigns the view back to itself: nothing to write.)"""
    return isinstance(value, Active) and value.base is root and \
        value._positions().shape == np.shape(target) and np.array_equal(value._positions(), target)


def setitem(a, key, value):
    """a[key] = value, written into the storage of ``a``'s root (so every view
    of it sees the write)."""
    _check_index(key)
    check_writeable(a)
    write_positions(a._root(), a._positions()[key], value)


def check_writeable(a):
    if not a._positions().flags.writeable:
        raise ValueError("assignment destination is read-only (adsim follows NumPy: this "
                         "view, e.g. from np.diagonal or np.broadcast_to, cannot be written; "
                         "write into a copy)")


def write_positions(root, target, value):
    """root.flat[target] = value (broadcast to target's shape); the
    overwritten part is saved on the value stack when a reverse sweep needs it."""
    tape = tape_of(root, value)
    tshape = np.shape(target)
    m = size_of(tshape)
    if m == 0 or _same_elements(value, root, target):
        return
    vshape = shape_of(value)
    if size_of(vshape) not in (1, m):
        vshape = np.broadcast_shapes(vshape, tshape)
    if isinstance(value, Active):
        v = value if value.size in (1, m) else broadcast_to(value, tshape)
        vref = v.slot
    else:
        arr = constant(value)
        if arr.size not in (1, m):
            arr = np.broadcast_to(arr, tshape)
        v, vref = None, tape.const_ref(arr)
    flat = np.asarray(target).reshape(-1)
    if isinstance(value, Active) and v.size == root.size and \
            np.array_equal(flat, np.arange(root.size)):
        tape.record_op(int(Op.COPY), -2, [root.slot, vref])        # the whole root, in order
    else:
        ioff = tape.add_indices(flat)
        tape.record_op(int(Op.SCATTER), -2, [root.slot, vref, ioff, m] +
                       strided(np.asarray(target)))
    mark_written(root)


class FlatIndexer:
    """``a.flat``: indexing as if ``a`` were 1-d, in C order; reads copy,
    writes go to ``a``'s storage (NumPy's flatiter)."""

    def __init__(self, a):
        self.a = a

    def __len__(self):
        return self.a.size

    def __iter__(self):
        return iter(ravel(self.a))

    def __getitem__(self, key):
        _check_index(key)
        return gather(self.a._root(), np.asarray(self.a._positions().flat[key]))

    def __setitem__(self, key, value):
        _check_index(key)
        check_writeable(self.a)
        write_positions(self.a._root(), np.asarray(self.a._positions().flat[key]), value)


def assign_inplace(a, result, op):
    """``a op= b``: ``result`` (a op b, just recorded) is written into ``a``.
    A 0-d root stands for a NumPy scalar (what indexing and reductions
    return), which is immutable: ``s += 1`` rebinds ``s``."""
    if a.ndim == 0 and a.base is None:
        return result
    if result.shape != a.shape:
        raise ValueError(f"non-broadcastable output operand with shape {a.shape} doesn't "
                         f"match the broadcast shape {result.shape} (in `{op}`)")
    if a.base is None and result.base is None and result is not a:
        a._adopt(result)            # a root takes over the fresh result's storage
        mark_written(a)
    else:
        setitem(a, Ellipsis, result)
    return a


def index_map(func, pieces, *args, fill_value=0.0, **kwargs):
    """Record ``func(*pieces, *args, **kwargs)`` for a NumPy function that only
    moves, repeats or pads elements, by applying it to element indices.

    Each piece gets indices offset past the previous ones; padding positions
    are marked -1 and filled with ``fill_value``.
    """
    tape = tape_of(*pieces)
    index_pieces, offset, spans = [], 0, []
    for p in pieces:
        shape = shape_of(p)
        n = size_of(shape)
        index_pieces.append(np.arange(offset, offset + n, dtype=np.int64).reshape(shape))
        spans.append((offset, n))
        offset += n
    if len(pieces) == 1 and isinstance(pieces[0], Active) and fill_value == 0.0:
        moved = func(pieces[0]._positions(), *args, **kwargs)
        if (np.asarray(moved) >= 0).all():
            return derived(pieces[0], moved)
    idx = np.asarray(func(*index_pieces, *args, **kwargs))
    flat = idx.reshape(-1)
    fill = np.full(flat.size, float(fill_value))
    for p, (start, n) in zip(pieces, spans):
        if not isinstance(p, Active):
            sel = (flat >= start) & (flat < start + n)
            fill[sel] = constant(p).reshape(-1)[flat[sel] - start]
    out = new(tape, Op.FILL, idx.shape, [tape.const_ref(fill)])
    for p, (start, n) in zip(pieces, spans):
        if isinstance(p, Active):
            positions = np.nonzero((flat >= start) & (flat < start + n))[0]
            if positions.size == 0:
                continue
            local = flat[positions] - start
            whole = np.array_equal(local, np.arange(n))
            src = p if whole else gather(p, local)
            rows = positions.reshape(p.shape) if whole and p.ndim else positions
            tape.record_op(int(Op.SCATTER), -2, [out.slot, src.slot, tape.add_indices(positions),
                                                 positions.size] + strided(rows))
    return out


def transpose(a, axes=None):
    return derived(a, np.transpose(a._positions(), axes))


def user_broadcast_to(x, shape, subok=False):
    """np.broadcast_to: a read-only view, as in NumPy."""
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    return derived(x, np.broadcast_to(x._positions(), shape), lambda: broadcast_to(x, shape))


def _sequence_function(func):
    def joined(arrays, *args, **kwargs):
        arrays = [_piece(a) for a in arrays]
        return index_map(lambda *idx: func(idx, *args, **kwargs), arrays)
    return joined


def _piece(a):
    """A piece of a joined array: active, or a plain array (a list holding
    active values, such as ``[s]``, becomes active)."""
    if isinstance(a, (list, tuple)):
        from ._creation import from_pieces
        return from_pieces(a, None)
    return a


def stack_pieces(pieces):
    """np.array of a list of pieces, some active: they are stacked."""
    pieces = [p if isinstance(p, Active) else constant(p) for p in pieces]
    shapes = {shape_of(p) for p in pieces}
    if len(shapes) > 1:
        raise ValueError(f"setting an array element with a sequence. The requested array has "
                         f"an inhomogeneous shape: pieces of shapes {sorted(shapes)}")
    return index_map(lambda *idx: np.stack(idx), pieces)


def pad(array, pad_width, mode="constant", **kwargs):
    if mode == "constant":
        value = kwargs.pop("constant_values", 0)
        if np.ndim(value) != 0:
            raise UnsupportedOperation("adsim: np.pad with per-axis constant_values is not "
                                       "supported; pad with one scalar")
        return index_map(lambda idx: np.pad(idx, pad_width, mode="constant", constant_values=-1),
                         [array], fill_value=value)
    return index_map(lambda idx: np.pad(idx, pad_width, mode=mode, **kwargs), [array])


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    reject_kwargs("diff", prepend=prepend, append=append)
    ax = normalize_axis(axis, a.ndim)
    hi = [slice(None)] * a.ndim
    lo = [slice(None)] * a.ndim
    hi[ax], lo[ax] = slice(1, None), slice(None, -1)
    y = a
    for _ in range(n):
        y = getitem(y, tuple(hi)) - getitem(y, tuple(lo))
    return y


# --------------------------------------------------------------- products

def _as_matrix_operand(tape, v):
    if isinstance(v, Active):
        return v, v.slot, v.shape
    arr = constant(v)
    return None, tape.const_ref(arr), arr.shape


def matmul(a, b, out=None):
    reject_kwargs("matmul", out=out)
    tape = tape_of(a, b)
    keep_a, ra, sa = _as_matrix_operand(tape, a)
    keep_b, rb, sb = _as_matrix_operand(tape, b)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError("adsim: matmul: input operand does not have enough dimensions")
    if len(sa) > 2 or len(sb) > 2:
        raise UnsupportedOperation(
            f"adsim: matmul of shapes {sa} and {sb}: stacked (batched) products are not "
            f"recorded; loop over the leading axis or use np.einsum")
    m, k = (1, sa[0]) if len(sa) == 1 else sa
    k2, n = (sb[0], 1) if len(sb) == 1 else sb
    if k != k2:
        raise ValueError(f"adsim: matmul: shapes {sa} and {sb} are not aligned ({k} != {k2})")
    shape = (() if len(sa) == 1 else (m,)) + (() if len(sb) == 1 else (n,))
    return new(tape, Op.MATMUL, shape, [ra, rb, m, k, n])


def dot(a, b, out=None):
    if np.ndim(a) == 0 or np.ndim(b) == 0 or (isinstance(a, Active) and a.ndim == 0) \
            or (isinstance(b, Active) and b.ndim == 0):
        return binary(Op.MUL, a, b)
    return matmul(a, b, out=out)


def vdot(a, b):
    return matmul(ravel(as_active(tape_of(a, b), a)), ravel(as_active(tape_of(a, b), b)))


def inner(a, b):
    if len(shape_of(a)) > 1 or len(shape_of(b)) > 1:
        raise UnsupportedOperation("adsim: np.inner of arrays with more than one axis")
    return matmul(a, b)


def outer(a, b, out=None):
    tape = tape_of(a, b)
    ka, ra, sa = _as_matrix_operand(tape, a)
    kb, rb, sb = _as_matrix_operand(tape, b)
    m, n = size_of(sa), size_of(sb)
    return new(tape, Op.MATMUL, (m, n), [ra, rb, m, 1, n])


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return sum(index_map(lambda idx: np.diagonal(idx, offset, axis1, axis2), [a]), axis=-1)


from ._einsum import einsum  # noqa: E402  (einsum builds on the functions above)
from ._linalg import norm, solve  # noqa: E402


# ------------------------------------------------------------ constructors

def _filled(a, value, shape, dtype=None):
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise TypeError("adsim: active arrays are float64")
    shape = shape_of(a) if shape is None else (shape if isinstance(shape, tuple) else
                                                tuple(np.atleast_1d(shape)))
    return as_active(tape_of(a), np.full(shape, value, dtype=np.float64))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return _filled(a, 0.0, shape, dtype)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return _filled(a, 1.0, shape, dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    if isinstance(fill_value, Active):
        return broadcast_to(fill_value, shape_of(a) if shape is None else shape) + 0.0
    return _filled(a, fill_value, shape, dtype)


# ------------------------------------------------------------ dispatch tables

_BINARY_UFUNCS = ops.BINARY_UFUNCS
_COMPARE_UFUNCS = {np.less: CompareKind.CMP_LT, np.less_equal: CompareKind.CMP_LE,
                   np.greater: CompareKind.CMP_GT, np.greater_equal: CompareKind.CMP_GE,
                   np.equal: CompareKind.CMP_EQ, np.not_equal: CompareKind.CMP_NE}


_ROUNDING_UFUNCS = {np.floor: "floor", np.ceil: "ceil", np.trunc: "trunc", np.rint: "rint"}
_INTEGER_DIVISION_UFUNCS = {np.floor_divide: floor_divide, np.remainder: remainder,
                            np.fmod: fmod}


def around(a, decimals=0, out=None):
    reject_kwargs("round", out=out)
    if decimals == 0:
        return rounded(a, "rint")
    scale = 10.0 ** decimals
    return rounded(a * scale, "rint") / scale


def unsupported(name):
    return UnsupportedOperation(
        f"adsim: cannot differentiate `{name}`: no rule is registered; register a primitive "
        f"with adsim.primitive (vjp/jvp rules, see docs/tape.md), or call it on the plain "
        f"value adsim.value(x)")


def ufunc(uf, method, inputs, kwargs):
    out = kwargs.get("out")
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(out, Active):
            raise UnsupportedOperation(f"adsim: `numpy.{uf.__name__}(..., out=...)` writes an "
                                       f"active result into a plain array; assign the result "
                                       f"instead")
        result = ufunc(uf, method, inputs, {k: v for k, v in kwargs.items() if k != "out"})
        if not isinstance(result, Active):
            result = as_active(tape_of(out), result)
        if result.shape != out.shape:
            result = broadcast_to(result, out.shape)
        setitem(out, Ellipsis, result)
        return out
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    allowed = {"dtype", "axis", "keepdims"} if method == "reduce" else {"dtype"}
    if kwargs.get("dtype", np.float64) not in (np.float64, float, "float64", "d") or \
            set(kwargs) - allowed:
        raise UnsupportedOperation(f"adsim: `numpy.{uf.__name__}` with arguments "
                                   f"{sorted(kwargs)} is not supported on active arrays")
    if method == "reduce" and uf is np.add:
        return sum(inputs[0], axis=kwargs.get("axis", 0), keepdims=kwargs.get("keepdims", False))
    if method != "__call__":
        raise unsupported(f"numpy.{uf.__name__}.{method}")
    if uf in (np.absolute, np.fabs):
        return absolute(inputs[0])
    if uf is np.positive:
        return copy(inputs[0])
    if uf in ops.UNARY_UFUNCS:
        return record_unary(inputs[0], ops.UNARY_UFUNCS[uf])
    if uf in _BINARY_UFUNCS:
        return binary(_BINARY_UFUNCS[uf], *inputs)
    if uf in _COMPARE_UFUNCS:
        return compare(_COMPARE_UFUNCS[uf], *inputs)
    if uf is np.matmul:
        return matmul(*inputs)
    if uf is np.isnan:
        return compare(CompareKind.CMP_NE, inputs[0], inputs[0])
    if uf in _ROUNDING_UFUNCS:
        return rounded(inputs[0], _ROUNDING_UFUNCS[uf])
    if uf in _INTEGER_DIVISION_UFUNCS:
        return _INTEGER_DIVISION_UFUNCS[uf](*inputs)
    raise unsupported(f"numpy.{uf.__name__}")


def _shape(a):
    return shape_of(a)


FUNCTIONS = {
    np.sum: sum, np.mean: mean, np.prod: prod, np.max: amax, np.amax: amax,
    np.min: amin, np.amin: amin, np.argmax: argmax, np.argmin: argmin, np.cumsum: cumsum,
    np.dot: dot, np.matmul: matmul, np.vdot: vdot, np.inner: inner, np.outer: outer,
    np.einsum: einsum, np.trace: trace,
    np.reshape: reshape, np.ravel: ravel, np.squeeze: squeeze, np.expand_dims: expand_dims,
    np.transpose: transpose, np.copy: copy, np.broadcast_to: user_broadcast_to,
    np.where: where, np.clip: clip, np.pad: pad, np.diff: diff,
    np.round: around, np.around: around, np.fix: lambda a, out=None: rounded(a, "trunc"),
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: zeros_like,
    np.concatenate: _sequence_function(np.concatenate), np.stack: _sequence_function(np.stack),
    np.hstack: _sequence_function(np.hstack), np.vstack: _sequence_function(np.vstack),
    np.column_stack: _sequence_function(np.column_stack),
    np.shape: _shape, np.ndim: lambda a: len(shape_of(a)), np.size: lambda a, axis=None:
        size_of(shape_of(a)) if axis is None else shape_of(a)[axis],
    np.linalg.norm: norm, np.linalg.solve: solve,
}
# functions that only move elements: recorded through index_map
for _f in (np.flip, np.fliplr, np.flipud, np.roll, np.rot90, np.swapaxes, np.moveaxis,
           np.diagonal, np.repeat, np.tile, np.take, np.atleast_1d, np.atleast_2d, np.atleast_3d,
           np.triu_indices_from):
    FUNCTIONS[_f] = (lambda f: lambda a, *args, **kw: index_map(f, [a], *args, **kw))(_f)
del FUNCTIONS[np.triu_indices_from]


def array_function(func, types, args, kwargs):
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise unsupported(f"{getattr(func, '__module__', None) or 'numpy'}."
                          f"{getattr(func, '__name__', func)}")
    return impl(*args, **kwargs)
