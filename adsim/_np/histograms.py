"""np.histogram of active data.

The counts are plain integers: which bin holds each value is piecewise
constant in the data, so it is guarded as a search is (adsim/_np/ordering.py):
each value's comparisons with the edges of its bin are recorded, and a
replay where a value changes bin raises BranchChanged. The edges NumPy
computes from the range of the data (``bins`` a count, no ``range``) are
min + (max - min) * k / bins, differentiable functions of the data's
minimum and maximum; given edges or a given range stay as they are. Active
``weights`` give active counts (sums of the weights in each bin), and
``density=True`` divides by the recorded bin widths. np.bincount with
active ``weights`` sums them bin by bin the same way (a scatter-add into
zeros, as np.add.at). np.histogramdd and np.histogram2d bin each
coordinate so, a sample counted where every coordinate lies in the range.
"""
import operator

import numpy as np

from .._opcodes import CompareKind
from .._active import Active
from ..errors import UnsupportedOperation
from .core import as_active, compare, gather, shape_of, tape_of
from .integers import current
from .views import ufunc_at


def _plain(v):
    return current(v) if isinstance(v, Active) else np.asarray(v, dtype=float)


def _edges(a, bins, range_):
    """The bin edges as NumPy makes them (active where they follow active data)."""
    if isinstance(bins, str):
        raise UnsupportedOperation(
            f"adsim: np.histogram with bins={bins!r} on active data is not supported (the "
            f"number of bins would follow the data); pass a number of bins or the edges")
    if np.ndim(bins) == 1:
        edges = bins if isinstance(bins, Active) else np.asarray(bins)
        if np.any(np.diff(_plain(edges)) < 0):
            raise ValueError("`bins` must increase monotonically, when an array")
        return edges
    if np.ndim(bins) != 0:
        raise ValueError("`bins` must be 1d, when an array")
    n = operator.index(bins)
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    if range_ is not None:
        first, last = range_
        if _plain(first) > _plain(last):
            raise ValueError("max must be larger than min in range parameter.")
    elif np.size(a) == 0:
        first, last = 0.0, 1.0
    else:
        first, last = np.min(a), np.max(a)
    if not (np.isfinite(first) and np.isfinite(last)):      # recorded tests
        raise ValueError(f"autodetected range of [{_plain(first)}, {_plain(last)}] is not "
                         f"finite")
    if first == last:                                        # a recorded branch
        first, last = first - 0.5, last + 0.5
    return np.linspace(first, last, n + 1)


def _guard_bins(a, edges, index, inside):
    """Record that each value ``inside`` stays in its bin ``index``:
    edges[k] <= a < edges[k + 1], the last bin closed; values outside the
    range stay outside, NaN stays NaN."""
    n = np.size(_plain(edges)) - 1
    last = index == n - 1
    values, plain_edges = _plain(a), _plain(edges)
    rows = np.flatnonzero(inside)
    below = np.flatnonzero(~inside & (values < plain_edges[0]))
    above = np.flatnonzero(~inside & (values > plain_edges[-1]))
    nan = np.flatnonzero(np.isnan(values))
    for kind, at, bound in (
            (CompareKind.CMP_GE, rows, index[rows]),
            (CompareKind.CMP_LT, rows[~last[rows]], index[rows[~last[rows]]] + 1),
            (CompareKind.CMP_LE, rows[last[rows]], index[rows[last[rows]]] + 1),
            (CompareKind.CMP_LT, below, np.zeros(below.size, dtype=int)),
            (CompareKind.CMP_GT, above, np.full(above.size, n))):
        if at.size == 0:
            continue
        held = gather(a, at) if isinstance(a, Active) else values[at]
        limits = gather(edges, bound) if isinstance(edges, Active) else plain_edges[bound]
        if isinstance(held, Active) or isinstance(limits, Active):
            compare(kind, held, limits)
    if nan.size and isinstance(a, Active):         # NaN is in no bin while it stays NaN
        compare(CompareKind.CMP_NE, gather(a, nan), gather(a, nan))


def _binned(a, edges):
    """(bin index, inside the range) of each value of ``a``, guarded."""
    values, plain_edges = _plain(a), _plain(edges)
    n = plain_edges.size - 1
    inside = (values >= plain_edges[0]) & (values <= plain_edges[-1])
    index = np.clip(np.searchsorted(plain_edges, values, side="right") - 1, 0, n - 1)
    _guard_bins(a, edges, index, inside)
    return index, inside


def histogram(a, bins=10, range=None, density=None, weights=None):
    a = np.ravel(a)
    edges = _edges(a, bins, range)
    n = _plain(edges).size - 1
    index, inside = _binned(a, edges)
    if weights is None:
        counts = np.bincount(index[inside], minlength=n)
    else:
        w = np.ravel(weights)
        if shape_of(w) != shape_of(a):
            raise ValueError("weights should have the same shape as a.")
        member = (np.arange(n)[:, None] == index[None, :]) & inside[None, :]
        counts = member.astype(float) @ w if isinstance(w, Active) else member @ _plain(w)
    if density:
        counts = counts / np.diff(edges) / np.sum(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """np.histogramdd: each coordinate binned as np.histogram bins it (its
    edges active where they follow active data), a sample counted in the
    bin of its coordinates where all lie in their ranges."""
    columns = _columns(sample)
    d = len(columns)
    per_axis = [bins] * d if np.ndim(bins) == 0 else list(bins)
    if len(per_axis) != d:
        raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    if range is not None and len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    edges = [_edges(c, b, None if range is None else range[i])
             for i, (c, b) in enumerate(zip(columns, per_axis))]
    shape = tuple(_plain(e).size - 1 for e in edges)
    binned = [_binned(c, e) for c, e in zip(columns, edges)]
    inside = np.logical_and.reduce([held for _, held in binned]) if d else np.zeros(0, bool)
    flat = np.ravel_multi_index(tuple(index[inside] for index, _ in binned), shape) \
        if d else np.zeros(0, int)
    if weights is None:
        counts = np.bincount(flat, minlength=int(np.prod(shape))).astype(float)
    else:
        w = np.ravel(weights)
        if shape_of(w) != (np.size(_plain(columns[0])) if d else 0,):
            raise ValueError("weights should have the same length as the sample.")
        rows = np.flatnonzero(inside)
        held = gather(w, rows) if isinstance(w, Active) else _plain(w)[rows]
        counts = bincount(flat, held, minlength=int(np.prod(shape)))
    counts = np.reshape(counts, shape)
    if density:
        total = np.sum(counts)
        for i, e in enumerate(edges):
            # (``range`` is NumPy's argument here)
            counts = counts / np.reshape(np.diff(e), [-1 if k == i else 1 for k in np.arange(d)])
        counts = counts / total
    return counts, edges


def _columns(sample):
    """The coordinates of np.histogramdd's samples: the columns of an (N, D)
    array, or the D arrays of a sequence."""
    if isinstance(sample, (list, tuple)):
        return [np.ravel(c) for c in sample]
    if len(shape_of(sample)) == 1:          # N samples of one coordinate, as NumPy reads them
        return [sample]
    if len(shape_of(sample)) != 2:
        raise ValueError("sample must be an (N, D) array or a sequence of D arrays")
    return [sample[:, i] for i in range(shape_of(sample)[1])]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """np.histogram2d: np.histogramdd of the samples (x, y), with NumPy's
    reading of ``bins`` (one count or edge array for both, or one each)."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        bins = [bins, bins]
    counts, edges = histogramdd([x, y], bins, range, density, weights)
    return counts, edges[0], edges[1]


def bincount(x, /, weights=None, minlength=0):
    """np.bincount: with active ``weights`` (plain non-negative integers
    ``x``), the sum of the weights falling in each bin."""
    if isinstance(x, Active):
        raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') "
                        "according to the rule 'safe' (np.bincount counts integers; the "
                        "active values given are floats)")
    if not isinstance(weights, Active):
        return np.bincount(x, weights, minlength)
    index = np.asarray(x)
    if index.ndim != 1 or shape_of(weights) != index.shape:
        raise ValueError("The weights and list don't have the same length."
                         if index.ndim == 1 else "object too deep for desired array")
    plain = np.bincount(index, minlength=minlength)       # NumPy's checks and length
    sums = as_active(tape_of(weights), np.zeros(plain.size))
    ufunc_at(operator.add, sums, index, weights)
    return sums


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """np.histogram's edges alone (``weights`` only matter to NumPy for
    string ``bins``, which are refused)."""
    return _edges(np.ravel(a), bins, range)
