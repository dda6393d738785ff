"""Views, indexing and in-place writes, after NumPy: reshapes in every
order and in place (``a.shape = ...``), transposes, diagonals, splits,
selections (compress, extract), and indexed assignment, which writes into
the root's storage (writes.py).

A function that only moves elements is applied to the root's array of element
positions (``Active._positions``); when NumPy's result shares memory with
that array NumPy made a view, and so do we (see the Active docstring for how
views stay current). Writes go to the root's storage.
"""
import numpy as np

from .._opcodes import Opcode as Op
from .._active import Active, make_view, mark_written
from ..errors import UnsupportedOperation
from .core import (broadcast_to, constant, copy, gather, new, reshaped, resolve_shape, shape_of,
                   size_of, strided, tape_of)
from .elementwise import where as select     # (copyto's parameter is named where)
from . import layout, padding, recorded_indexing
from .recorded_arrays import IntegerArray
from .integers import plain_value
from .writes import check_writeable, write_positions


def refresh_view(view, root):
    """Gather a view's elements again from its root (the root was written)."""
    tape = tape_of(root)
    positions = view._positions()
    flat = positions.reshape(-1)
    if flat.size == root.size and np.array_equal(flat, np.arange(root.size)):
        tape.record_op(int(Op.COPY), -2, [view._view_slot(), root.slot])
    else:
        tape.record_op(int(Op.GATHER), -2, [view._view_slot(), root.slot,
                                            tape.add_indices(flat, shared=True)]
                       + strided(positions))


def derived(a, positions, materialize=None):
    """The result of a NumPy function that only moves ``a``'s elements, given
    as the root positions of its elements: a view of ``a``'s root when NumPy's
    own result is a view (``materialize()`` then records its values, by
    default a gather from the root), else a copy laid out in memory as
    NumPy's (``A[:, [0, 2]]`` is in Fortran order)."""
    root = a._root()
    if positions is a._positions():        # each array keeps its own positions object
        positions = positions.view()
    if isinstance(positions, np.ndarray) and positions.size and \
            np.may_share_memory(positions, root._positions()):
        out = materialize() if materialize is not None else gather(root, positions)
        if out is a or out.base is not None:
            out = copy(out)
        return make_view(out, root, positions)
    positions = np.asarray(positions)
    return layout.laid_out(gather(root, positions), positions)


def view_of(a):
    """A view of all of ``a`` (``a.view()``, ``a.real``, ``a[...]``)."""
    return derived(a, a._positions()[...], lambda: copy(a))


def reshape(a, newshape=None, order="C", shape=None, copy=None):
    """NumPy's reshape in any order: the positions of ``a``'s elements
    reshaped as NumPy reshapes them (a view where NumPy's is one)."""
    newshape = shape if newshape is None else newshape
    newshape = resolve_shape(a, newshape)
    if order not in ("C", "F", "A"):
        raise ValueError("order must be one of 'C', 'F', 'A'")
    if order == "A":
        a.tape.observe_layout()
    if copy:
        if order == "C":
            return reshaped(a, newshape)
        positions = a._positions().reshape(newshape, order=order)
        return layout.laid_out(gather(a._root(), positions), positions)
    positions = a._positions().reshape(newshape, order=order)
    if copy is False and positions.size and \
            not np.may_share_memory(positions, a._root()._positions()):
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    if order == "C":
        out = derived(a, positions, lambda: reshaped(a, newshape))
    else:
        out = derived(a, positions)
    if _view_depends_on_layout(a, newshape):
        a._mark_layout_sensitive()
        out._mark_layout_sensitive()
    return out


def _view_depends_on_layout(a, newshape):
    """Whether NumPy's reshape of ``a`` to ``newshape`` may be a view for one
    memory layout of the arrays it came from and a copy for another: unless
    it only adds or drops axes of length 1, or ``a`` lies in a 1-d root
    (whose layout, and so its views' strides, no input changes). A write to
    either array then makes results depend on the layout (mark_written)."""
    if len(a._root().shape) <= 1:
        return False
    return [d for d in a.shape if d != 1] != [d for d in newshape if d != 1]


def set_shape(a, shape):
    """``a.shape = shape``: NumPy's in-place reshape, where NumPy allows one
    (its own check on the positions raises AttributeError where a copy would
    be needed)."""
    if a._shared_scalar:
        raise AttributeError("adsim: the shape of a NumPy scalar (x[k] of a 1-d array) is not "
                             "writable; use np.reshape(x[k], shape)")
    newshape = resolve_shape(a, shape)
    index = a._positions()
    index.shape = newshape
    a._reshaped_in_place(newshape, index)


def ravel(a, order="C"):
    if order == "C":
        return reshape(a, (-1,))
    if order not in ("F", "A", "K"):
        raise ValueError("order must be one of 'C', 'F', 'A', or 'K'")
    if order != "F":
        a.tape.observe_layout()
    out = derived(a, np.ravel(a._positions(), order=order))
    if _view_depends_on_layout(a, out.shape):
        a._mark_layout_sensitive()
        out._mark_layout_sensitive()
    return out


def diagflat(v, k=0):
    """A 2-d array with the flattened ``v`` on its k-th diagonal (positions
    shifted by one so that 0 marks the zero fill, as in diag)."""
    return index_map(lambda idx: np.diagflat(idx + 1, k) - 1, [v])


def squeeze(a, axis=None):
    return reshape(a, np.squeeze(np.empty(a.shape, dtype=np.bool_), axis=axis).shape)


def expand_dims(a, axis):
    return reshape(a, np.expand_dims(np.empty(a.shape, dtype=np.bool_), axis).shape)


def _check_index(key):
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        if isinstance(part, Active):
            raise UnsupportedOperation("adsim: an active array cannot be used as an index (its "
                                       "values would be frozen); index with integers, slices "
                                       "or boolean masks from comparisons")


def getitem(a, key):
    _check_index(key)
    if any(isinstance(p, IntegerArray) for p in (key if isinstance(key, tuple) else (key,))):
        return recorded_indexing.getitem(a, key)
    return derived(a, a._positions()[key])


def setitem(a, key, value):
    """a[key] = value, written into the storage of ``a``'s root (so every view
    of it sees the write)."""
    _check_index(key)
    if any(isinstance(p, IntegerArray) for p in (key if isinstance(key, tuple) else (key,))):
        if recorded_indexing.setitem(a, key, value):
            return
        key = recorded_indexing.plain_key(key)
    check_writeable(a)
    write_positions(a._root(), a._positions()[key], value)


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
    check_writeable(a)
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
        index_pieces.append(layout.numbered(shape, offset, p))
        spans.append((offset, n))
        offset += n
    if len(pieces) == 1 and isinstance(pieces[0], Active):
        moved = func(pieces[0]._positions(), *args, **kwargs)
        if (np.asarray(moved) >= 0).all():
            return derived(pieces[0], moved)
    idx = np.asarray(func(*index_pieces, *args, **kwargs))
    flat = idx.reshape(-1)
    fill = np.full(flat.size, float(fill_value))
    placed = _positions_of_pieces(flat, spans)
    for p, (start, n), positions in zip(pieces, spans, placed):
        if not isinstance(p, Active):
            fill[positions] = constant(p).reshape(-1)[flat[positions] - start]
    out = layout.laid_out(new(tape, Op.FILL, idx.shape, [tape.const_ref(fill)]), idx)
    for source, positions, local in _active_sources(pieces, spans, placed, flat):
        if positions.size == 0:
            continue
        whole = local.size == source.size and (
            local[0] == 0 if local.size == 1 else np.array_equal(local, np.arange(source.size)))
        src = source if whole else gather(source, local)
        rows = positions.reshape(source.shape) if whole and source.ndim else positions
        tape.record_op(int(Op.SCATTER), -2, [out.slot, src.slot,
                                             tape.add_indices(positions, shared=True),
                                             positions.size] + strided(rows))
    return out


def _active_sources(pieces, spans, placed, flat):
    """``(source, output positions, source positions)`` for the active
    pieces: each piece alone, but views of one root together, as the root
    (the times of many steps, views of the rows a loop returned, stacked:
    one scatter per root, not per view)."""
    by_root = {}
    for i, p in enumerate(pieces):
        if isinstance(p, Active):
            root = p._root()
            key = id(root) if root is not p else ("piece", i)
            by_root.setdefault(key, []).append(i)
    for members in by_root.values():
        if len(members) == 1:
            i = members[0]
            yield pieces[i], placed[i], flat[placed[i]] - spans[i][0]
            continue
        root = pieces[members[0]]._root()
        positions = np.sort(np.concatenate([placed[i] for i in members]))
        at = np.empty(flat.size, dtype=np.intp)
        for i in members:
            at[placed[i]] = pieces[i]._positions().reshape(-1)[flat[placed[i]] - spans[i][0]]
        yield root, positions, at[positions]


def _positions_of_pieces(flat, spans):
    """For each piece's span ``(start, n)`` of element indices, the output
    positions (ascending) whose index ``flat`` falls in it: one sort of the
    indices for all pieces (a list of many scalars stacked is not scanned
    once per piece)."""
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    starts = np.array([start for start, _ in spans], dtype=ordered.dtype)
    ends = np.array([start + n for start, n in spans], dtype=ordered.dtype)
    lows = np.searchsorted(ordered, starts, side="left")
    highs = np.searchsorted(ordered, ends, side="left")
    return [np.sort(order[lo:hi]) for lo, hi in zip(lows, highs)]


def transpose(a, axes=None):
    return derived(a, np.transpose(a._positions(), axes))


def user_broadcast_to(x, shape, subok=False):
    """np.broadcast_to: a read-only view, as in NumPy."""
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    return derived(x, np.broadcast_to(x._positions(), shape), lambda: broadcast_to(x, shape))


def broadcast_arrays(*args, subok=False):
    """np.broadcast_arrays: each argument as a read-only view of the common
    shape (a tuple, as NumPy 2 returns)."""
    shape = np.broadcast_shapes(*(shape_of(a) for a in args))
    return tuple(user_broadcast_to(a, shape) if isinstance(a, Active) else
                 np.broadcast_to(a, shape) for a in args)


def pad(array, pad_width, mode="constant", **kwargs):
    if mode == "constant":
        value = kwargs.pop("constant_values", 0)
        if np.ndim(value) != 0:
            raise UnsupportedOperation("adsim: np.pad with per-axis constant_values is not "
                                       "supported; pad with one scalar")
        def padded(fill):
            return index_map(lambda idx: np.pad(idx, pad_width, mode="constant",
                                                constant_values=-1), [array], fill_value=fill)
        if not isinstance(value, Active):
            return padded(value)
        # an active fill (a boundary value that is a parameter): zeros, plus
        # the value times the plain mask of the padded border
        border = np.pad(np.zeros(np.shape(array)), pad_width, mode="constant",
                        constant_values=1.0)
        return padded(0.0) + value * border
    if callable(mode) or mode == "empty":
        raise UnsupportedOperation(f"adsim: np.pad(..., mode={getattr(mode, '__name__', mode)!r})"
                                   f" of an active array is not supported (a function as mode "
                                   f"writes into NumPy's array; 'empty' leaves values undefined):"
                                   f" pad with mode 'constant', 'edge', 'wrap', 'reflect', "
                                   f"'symmetric', 'linear_ramp', 'maximum', 'minimum', 'mean' or "
                                   f"'median'")
    if padding.computes(mode, kwargs):
        return padding.pad(array, pad_width, mode, kwargs)
    return index_map(lambda idx: np.pad(idx, pad_width, mode=mode, **kwargs), [array])


def triangle(m, k, upper):
    """np.triu / np.tril: the other elements become zero (a copy, as in NumPy).
    A 1-d m is, as NumPy takes it, the row of a square matrix (N, N)."""
    shape = m.shape[-2:] if m.ndim >= 2 else m.shape * 2
    mask = (np.triu if upper else np.tril)(np.ones(shape, dtype=bool), k)
    if m.ndim < 2:
        m = np.broadcast_to(m, shape)
    return where_mask(np.broadcast_to(mask, m.shape), m)


def where_mask(mask, m):
    """m where ``mask`` (a plain boolean array of m's shape), else 0."""
    return select(mask, m, 0.0)


def diag(v, k=0):
    """np.diag: the k-th diagonal of a 2-d array (a read-only view, as
    NumPy's), or a 2-d array with a 1-d array on its k-th diagonal."""
    if v.ndim == 1:      # positions shifted by one so that 0 marks the zero fill
        return index_map(lambda idx: np.diag(idx + 1, k) - 1, [v])
    if v.ndim == 2:
        return index_map(lambda idx: np.diagonal(idx, k), [v])
    raise ValueError("Input must be 1- or 2-d.")


def split_function(func):
    """np.split and its relatives: views of the pieces, as in NumPy."""
    def pieces(a, *args, **kwargs):
        return [derived(a, part) for part in func(a._positions(), *args, **kwargs)]
    return pieces


def rollaxis(a, axis, start=0):
    return derived(a, np.rollaxis(a._positions(), axis, start))


def copyto(dst, src, casting="same_kind", where=True):
    """np.copyto into an active array: a write, broadcast as NumPy does."""
    if not isinstance(dst, Active):
        raise UnsupportedOperation("adsim: np.copyto writes an active value into a plain array; "
                                   "make the destination inside the recorded function "
                                   "(np.zeros_like(...)) or assign the result instead")
    if where is True:
        setitem(dst, Ellipsis, src)
    else:
        setitem(dst, Ellipsis, select(np.broadcast_to(where, dst.shape), src, dst))


def fill_diagonal(a, val, wrap=False):
    """np.fill_diagonal in place (NumPy's positions, including ``wrap``)."""
    probe = np.zeros(a.shape, dtype=bool)
    np.fill_diagonal(probe, True, wrap=wrap)
    count = int(probe.sum())
    if isinstance(val, Active):
        if val.size not in (1, count):
            raise UnsupportedOperation(f"adsim: np.fill_diagonal with an active value of "
                                       f"{val.size} elements for {count} diagonal places; "
                                       f"pass one value or one per place")
        setitem(a, probe, val.reshape(-1) if val.size == count else val)
    else:
        setitem(a, probe, np.resize(np.asarray(val, dtype=float), count))


def ufunc_at(op, a, indices, b):
    """``np.add.at(a, indices, b)`` (and subtract, multiply): unbuffered, so
    repeated indices apply once per occurrence. The positions are split into
    layers without repeats (first occurrences, second ones, ...), and each
    layer is one read-modify-write of ``a``'s storage."""
    if not isinstance(a, Active):
        raise UnsupportedOperation(
            f"adsim: ufunc.at would write active values into a plain NumPy array (shape "
            f"{np.shape(a)}), which cannot hold them: make that array active, e.g. "
            f"np.zeros_like(x, shape=(n,)) for an active x, or np.zeros(n) inside a recorded "
            f"function defined in a file")
    check_writeable(a)
    target = np.asarray(a._positions()[indices])
    flat = target.reshape(-1)
    values = b if isinstance(b, Active) else constant(b)
    values = broadcast_to(values, target.shape) if isinstance(values, Active) else \
        np.broadcast_to(values, target.shape)
    values = values.reshape(-1) if isinstance(values, Active) else np.ravel(values)
    root = a._root()
    order = np.argsort(flat, kind="stable")
    first = np.r_[True, flat[order][1:] != flat[order][:-1]]
    rank = np.empty(flat.size, dtype=np.intp)
    rank[order] = np.arange(flat.size) - np.maximum.accumulate(np.where(first, np.arange(flat.size), 0))
    for layer in range(int(rank.max()) + 1 if flat.size else 0):
        where_ = np.nonzero(rank == layer)[0]
        positions = flat[where_]
        current = gather(root, positions)
        write_positions(root, positions, op(current, values[where_]))


def _target(a, name):
    """The storage positions of ``a``'s elements for a NumPy function that
    writes into ``a`` (np.put, ...): ``a`` must be active (made inside the
    recorded function) and writeable."""
    if not isinstance(a, Active):
        raise UnsupportedOperation(f"adsim: np.{name} writes an active value into a plain array; "
                                   f"make the array inside the recorded function (np.zeros(...)) "
                                   f"or write into a copy made there (a = np.array(a))")
    check_writeable(a)
    return a._positions()


def _cycled(values, picks):
    """The flat elements ``picks`` of ``values`` taken cyclically (NumPy's
    put, putmask and place repeat a short array of values)."""
    flat = values.reshape(-1) if isinstance(values, Active) else np.ravel(constant(values))
    return flat[picks % flat.size] if flat.size else flat


def _write_in_order(a, targets, values):
    """a's storage at ``targets`` gets ``values`` (one per target), written in
    order as NumPy's loops write: a repeated target keeps its last value."""
    targets = np.asarray(targets).reshape(-1)
    if targets.size == 0:
        return
    if np.size(values) == 0:
        raise ValueError("Cannot insert from an empty array!")
    _, last = np.unique(targets[::-1], return_index=True)
    if last.size != targets.size:
        keep = np.sort(targets.size - 1 - last)
        targets = targets[keep]
        values = values[keep]
    write_positions(a._root(), targets, values)


def put(a, ind, v, mode="raise"):
    """np.put: ``a.flat[ind] = v``, ``v`` repeated to the length of ``ind``."""
    positions = np.ravel(_target(a, "put"))
    ind = np.asarray(plain_value(ind, "the indices of np.put"), dtype=np.intp).reshape(-1)
    n = positions.size
    if mode == "wrap":
        ind = ind % n if n else ind
    elif mode == "clip":
        ind = np.clip(ind, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    elif np.any((ind < -n) | (ind >= n)):
        bad = ind[(ind < -n) | (ind >= n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis 0 with size {n}")
    _write_in_order(a, positions[ind], _cycled(v, np.arange(ind.size)))


def putmask(a, mask, values):
    """np.putmask: ``a.flat[n] = values.flat[n % values.size]`` where ``mask.flat[n]``."""
    positions = np.ravel(_target(a, "putmask"))
    mask = np.asarray(plain_value(mask, "the mask of np.putmask"), dtype=bool)
    if mask.size != positions.size:
        raise ValueError("putmask: mask and data must be the same size")
    chosen = np.flatnonzero(mask)
    _write_in_order(a, positions[chosen], _cycled(values, chosen))


def place(arr, mask, vals):
    """np.place: the k-th position where ``mask`` holds gets ``vals.flat[k % vals.size]``."""
    positions = np.ravel(_target(arr, "place"))
    mask = np.asarray(plain_value(mask, "the mask of np.place"), dtype=bool)
    if mask.size != positions.size:
        raise ValueError("place: mask and data must be the same size")
    chosen = np.flatnonzero(mask)
    _write_in_order(arr, positions[chosen], _cycled(vals, np.arange(chosen.size)))


def put_along_axis(arr, indices, values, axis):
    """np.put_along_axis: the positions np.take_along_axis reads are written,
    ``values`` broadcast to them."""
    positions = _target(arr, "put_along_axis")
    indices = np.asarray(plain_value(indices, "the indices of np.put_along_axis"))
    if axis is None:
        positions, axis = np.ravel(positions), 0
    targets = np.take_along_axis(positions, indices, axis)
    values = broadcast_to(values, targets.shape) if isinstance(values, Active) else \
        np.broadcast_to(constant(values), targets.shape)
    _write_in_order(arr, targets, values.reshape(-1))


def may_share_memory(a, b, /, max_work=None):
    """Active arrays share storage only with views of the same root (a plain
    array never with an active one), and, as NumPy's bounds test, only when
    the ranges of their positions there overlap."""
    if not (isinstance(a, Active) and isinstance(b, Active)) or a._root() is not b._root() or \
            a.size == 0 or b.size == 0:
        return False
    pa, pb = a._positions(), b._positions()
    return bool(pa.min() <= pb.max() and pb.min() <= pa.max())


def shares_memory(a, b, /, max_work=None):
    """As may_share_memory, and some element of one is an element of the other."""
    return may_share_memory(a, b) and \
        np.intersect1d(a._positions(), b._positions()).size > 0


def unstack(x, /, *, axis=0):
    """The views along ``axis``, as NumPy's unstack gives them."""
    return tuple(derived(x, part) for part in np.unstack(x._positions(), axis=axis))


def compress(condition, a, axis=None, out=None):
    if out is not None:
        raise UnsupportedOperation("adsim: np.compress(..., out=...) is not recorded; assign the "
                                   "result instead")
    condition = np.asarray(plain_value(condition, "the condition of np.compress"))
    if not isinstance(a, Active):
        return np.compress(condition, a, axis=axis)
    return index_map(lambda idx: np.compress(condition, idx, axis=axis), [a])


def extract(condition, arr):
    condition = np.asarray(plain_value(condition, "the condition of np.extract"))
    if not isinstance(arr, Active):
        return np.extract(condition, arr)
    return index_map(lambda idx: np.extract(condition, idx), [arr])
