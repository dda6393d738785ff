"""Reductions along axes: sum, mean, prod, max/min and their positions, cumsum."""
import numpy as np

from .._opcodes import Opcode as Op
from .._active import Active
from .core import (as_active, axes_of, binary, copy, float64_only, new, normalize_axis,
                   reduce_axes, reject_kwargs, reshaped, size_of, split_at, tape_of)
from .views import getitem
from . import layout
from .recorded_arrays import IntegerArray


def finish_reduction(out, shape, axes, keepdims):
    """Give the reduced result its final shape (keepdims puts 1s back)."""
    if keepdims:
        final = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        final = tuple(d for i, d in enumerate(shape) if i not in axes)
    if out.shape == final:
        return out
    return reshaped(out, final)


def _masked(a, where, fill, name):
    """``a`` with the elements outside NumPy's ``where=`` mask of a
    reduction replaced by ``fill`` (the reduction's identity or initial)."""
    if where is None or where is True:
        return a
    if fill is None:
        raise ValueError(f"reduction operation '{name}' does not have an identity, so to use a "
                         f"where mask one has to specify 'initial'")
    mask = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
    return np.where(mask, a, fill)


def _with_initial(y, initial, combine):
    return y if initial is None else combine(y, initial)


def _blocks(axes):
    """Sorted axes as [first, end) blocks of adjacent axes."""
    blocks = []
    for ax in axes:
        if blocks and blocks[-1][1] == ax:
            blocks[-1][1] = ax + 1
        else:
            blocks.append([ax, ax + 1])
    return blocks


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    if axis is None and type(a) is Active and a.ndim and dtype is None and out is None and \
            not keepdims and initial is None and where is None:
        return new(tape_of(a), Op.SUM, (), [a.slot, 1, a.size, 1])     # the common call, at once
    reject_kwargs("sum", out=out)
    float64_only("sum", dtype)
    if where is not None or initial is not None:
        total = sum(_masked(as_active(tape_of(a), a), where, 0.0, "add"), axis=axis,
                    keepdims=keepdims)
        return _with_initial(total, initial, np.add)
    axes = reduce_axes(axis, a.ndim)
    tape = tape_of(a)
    y, cur = a, list(a.shape)
    for first, end in reversed(_blocks(sorted(axes))):   # adjacent axes: one op (and one
        outer = size_of(cur[:first])                      # run into a scalar output for the
        m = size_of(cur[first:end])                       # sweeps, see _chunks.pxi)
        inner = size_of(cur[end:])
        del cur[first:end]
        y = new(tape, Op.SUM, cur, [y.slot, outer, m, inner])
    if y is a:
        y = copy(a)
    return layout.reduced(finish_reduction(y, a.shape, axes, keepdims), a, axes, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    reject_kwargs("mean", out=out)
    float64_only("mean", dtype)
    if where is not None and where is not True:
        mask = np.broadcast_to(np.asarray(where, dtype=bool), a.shape)
        count = np.sum(mask, axis=axis, keepdims=keepdims)
        return sum(a, axis=axis, keepdims=keepdims, where=mask) / count
    count = size_of([a.shape[i] for i in axes_of(axis, a.ndim)])
    return binary(Op.DIV, sum(a, axis=axis, keepdims=keepdims), float(count))


def _extremum(a, axis, keepdims, want_min):
    """max/min along ``axis``: the element at each fiber's argmax (argmin),
    whose position is integer data (ARGEXT_AT) that every replay computes
    again, so a replay where the extremum moves follows it instead of
    leaving the recorded path (a log-sum-exp in an optimisation loop replays
    one tape). The derivative goes to that one element: the tie rule of
    docs/numpy.md (the first extremal element, NumPy's argmax)."""
    axes = reduce_axes(axis, a.ndim)
    tape = tape_of(a)
    if any(a.shape[ax] == 0 for ax in axes):
        raise ValueError(f"adsim: {'min' if want_min else 'max'} over an axis of length 0 "
                         f"(shape {a.shape}, axis={axis}): NumPy's maximum/minimum have no "
                         f"identity; pass initial= or reduce over non-empty axes")
    if a.size == 0:             # another axis is empty: so is the result
        return finish_reduction(as_active(tape, np.zeros([d for i, d in enumerate(a.shape)
                                                          if i not in axes])), a.shape, axes,
                                keepdims)
    y, cur = a, list(a.shape)
    for ax in sorted(axes, reverse=True):
        outer, m, inner = split_at(cur, ax)
        del cur[ax]
        y = _pick_extremum(tape, y, outer, m, inner, want_min, cur)
    return layout.reduced(finish_reduction(y, a.shape, axes, keepdims), a, axes, keepdims)


def _pick_extremum(tape, y, outer, m, inner, want_min, shape):
    """The extremum of each fiber ``y[u, :, t]`` (of ``m`` elements), shaped
    ``shape``. One fiber: a gather at the recomputed position. Several: the
    fiber's elements selected where their position is the recomputed one (a
    SELECT, whose mask replays read), summed along the fiber; the others are
    -0.0, which leaves every sum exact (also a maximum of -0.0), and their
    sparsity pattern stays one fiber per result."""
    at = new(tape, Op.ARGEXT_AT, (outer, inner), [y.slot, outer, m, inner, int(want_min)])
    if outer * inner == 1:
        return new(tape, Op.GATHER_AT, shape, [y.slot, at.slot, 1, m, 1])
    fiber = (outer, m, inner)
    spread = new(tape, Op.BROADCAST, fiber, [at.slot, outer, m, inner])     # at[u, t] along j
    hit = binary(Op.EQUAL, spread, np.arange(m, dtype=np.float64).reshape(1, m, 1))
    zero = tape.const_ref(np.array(-0.0))
    kept = new(tape, Op.SELECT, fiber, [hit.slot, y.slot, zero])
    return new(tape, Op.SUM, shape, [kept.slot, outer, m, inner])


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("max", out=out)
    a = _masked(a, where, initial, "maximum")
    if initial is not None and _empty_fibers(a, axis):
        return _initial_only(a, axis, keepdims, initial, np.max)
    return _with_initial(_extremum(a, axis, keepdims, False), initial, np.maximum)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("min", out=out)
    a = _masked(a, where, initial, "minimum")
    if initial is not None and _empty_fibers(a, axis):
        return _initial_only(a, axis, keepdims, initial, np.min)
    return _with_initial(_extremum(a, axis, keepdims, True), initial, np.minimum)


def _empty_fibers(a, axis):
    return any(a.shape[ax] == 0 for ax in reduce_axes(axis, a.ndim))


def _initial_only(a, axis, keepdims, initial, extremum):
    """max/min over an empty axis with ``initial``: NumPy's result, every
    entry ``initial``, a constant (a has no element to differentiate)."""
    plain = extremum(np.zeros(a.shape), axis=axis, keepdims=keepdims, initial=initial)
    return as_active(tape_of(a), np.asarray(plain, dtype=float))


def _argext(a, axis, want_min, keepdims=False):
    """argmax/argmin: integer data (an ARGEXT_AT op), which replays compute
    again, so ``x[np.argmax(x)]`` follows new inputs."""
    tape = tape_of(a)
    if axis is None or not reduce_axes(axis, a.ndim):
        outer, m, inner = 1, a.size, 1
        shape = (1,) * a.ndim if keepdims else ()
    else:
        ax = normalize_axis(axis, a.ndim)
        outer, m, inner = split_at(a.shape, ax)
        shape = a.shape[:ax] + ((1,) if keepdims else ()) + a.shape[ax + 1:]
    if m == 0 and outer * inner:
        raise ValueError(f"attempt to get {'argmin' if want_min else 'argmax'} of an empty "
                         f"sequence")
    return IntegerArray(new(tape, Op.ARGEXT_AT, shape, [a.slot, outer, m, inner, int(want_min)]))


def argmax(a, axis=None, out=None, keepdims=False):
    reject_kwargs("argmax", out=out)
    return _argext(a, axis, False, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    reject_kwargs("argmin", out=out)
    return _argext(a, axis, True, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product as a chain of multiplications along the axis (exact derivatives
    at zeros, unlike exp(sum(log)))."""
    reject_kwargs("prod", out=out)
    float64_only("prod", dtype)
    if where is not None or initial is not None:
        product = prod(_masked(as_active(tape_of(a), a), where, 1.0, "multiply"), axis=axis,
                       keepdims=keepdims)
        return _with_initial(product, initial, np.multiply)
    if axis is None:
        y = prod(reshaped(a, (-1,)), axis=0)
        return reshaped(y, (1,) * a.ndim) if keepdims else y
    axes = reduce_axes(axis, a.ndim)
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
    float64_only("cumsum", dtype)
    if axis is None or a.ndim == 0:          # a 0-d array runs along its one value
        a, axis = reshaped(a, (-1,)), 0 if axis is None else axis
    ax = normalize_axis(axis, a.ndim)
    outer, m, inner = split_at(a.shape, ax)
    return layout.elementwise(new(tape_of(a), Op.CUMSUM, a.shape, [a.slot, outer, m, inner]), a)
