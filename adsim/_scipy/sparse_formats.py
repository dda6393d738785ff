"""More ways to assemble a sparse matrix from active values
(adsim/_scipy/sparse_active.py has the matrix they make):

- ``dia_matrix((data, offsets), shape)``: ``data[t, j]`` at ``(j -
  offsets[t], j)``, as SciPy stores diagonals (by column);
- ``bsr_matrix((data, indices, indptr), shape)``: block ``b`` of block row
  ``i`` at rows ``i R .. i R + R - 1`` and columns ``indices[b] C ..``;
- ``lil_matrix``, ``dok_matrix`` (and their ``_array`` kinds, and any
  format SciPy lets one write into) written entry by entry, ``A[i, j] =
  v`` and ``A[i, j] += v`` with active ``v`` (a finite element assembly),
  and ``A.setdiag(v, k)`` as those writes:
  from the first active value the object is an :class:`ActiveAssembly`,
  holding its entries in a dict; it becomes a matrix of active values
  (one stack of the entries) where it is first used;
- ``bmat``, ``hstack``, ``vstack``, ``block_diag`` of such matrices, with
  constant sparse matrices, dense arrays and ``None`` blocks.
"""
import abc

import numpy as np
import scipy.sparse as sp

from .._active import Active
from .._np.core import active_leaves
from .._np.joins import from_pieces
from .sparse_active import (ActiveSparse, ActiveSparseArray, ActiveSparseMatrix, _concatenate,
                            _init, _kron_operand, _outer_keys, _picked, _plain_indices,
                            _unsupported)

__all__ = ["ActiveAssembly", "HOOKS"]


# ---- dia and bsr constructors ---------------------------------------------------------

def _dia_entries(arg1, shape):
    data, offsets = arg1
    if shape is None:
        raise _unsupported("dia_matrix of active values without shape=")
    m, n = (int(shape[0]), int(shape[1]))
    offsets = _plain_indices(offsets)
    data = data if isinstance(data, Active) else np.asarray(data, dtype=float)
    data = data.reshape(1, -1) if np.ndim(data) == 1 else data
    width = min(data.shape[1], n)
    rows, cols, picks = [], [], []
    for t, k in enumerate(offsets):
        j = np.arange(width)
        keep = (j - k >= 0) & (j - k < m)
        rows.append(j[keep] - k)
        cols.append(j[keep])
        picks.append(t * data.shape[1] + j[keep])
    picks = np.concatenate(picks) if picks else np.zeros(0, np.int64)
    return (np.concatenate(rows) if rows else picks, np.concatenate(cols) if cols else picks,
            data.reshape(-1)[picks], (m, n))


def _bsr_entries(arg1, shape, blocksize):
    data, indices, indptr = arg1
    indices, indptr = _plain_indices(indices), _plain_indices(indptr)
    data = data if isinstance(data, Active) else np.asarray(data, dtype=float)
    if np.ndim(data) != 3:
        raise _unsupported("bsr_matrix of active values whose data is not (blocks, R, C)")
    nblocks, R, C = data.shape
    if blocksize is not None and tuple(blocksize) != (R, C):
        raise ValueError(f"adsim: blocksize {tuple(blocksize)} differs from the blocks' "
                         f"shape {(R, C)}")
    block_rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    if shape is None:
        shape = ((indptr.size - 1) * R, (int(indices.max()) + 1 if indices.size else 0) * C)
    r, c = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    rows = (block_rows[:, None, None] * R + r[None]).reshape(-1)
    cols = (indices[:, None, None] * C + c[None]).reshape(-1)
    return rows, cols, data.reshape(-1), (int(shape[0]), int(shape[1]))


def _made_from(self, entries, format_name):
    rows, cols, values, shape = entries
    self.__class__ = ActiveSparseArray if isinstance(self, sp.sparray) else ActiveSparseMatrix
    self._setup(rows, cols, values, shape, format_name)


def _dia_init(self, arg1, shape=None, dtype=None, copy=False, **kwargs):
    if isinstance(arg1, tuple) and len(arg1) == 2 and not isinstance(arg1[1], tuple):
        return _made_from(self, _dia_entries(arg1, shape), "dia")
    return _init("dia", self, arg1, shape, dtype)


def _bsr_init(self, arg1, shape=None, dtype=None, copy=False, blocksize=None, **kwargs):
    if isinstance(arg1, tuple) and len(arg1) == 3:
        return _made_from(self, _bsr_entries(arg1, shape, blocksize), "bsr")
    return _init("bsr", self, arg1, shape, dtype)


# ---- entry by entry ------------------------------------------------------------------

class ActiveAssembly(ActiveSparse):
    """A matrix being written entry by entry: ``{(i, j): value}``; its
    entries, pattern and value vector are made when it is first used (and
    again after a later write)."""

    def _start(self, entries, shape, format_name):
        object.__setattr__(self, "_entries", entries)
        object.__setattr__(self, "_size", (int(shape[0]), int(shape[1])))
        object.__setattr__(self, "_built", None)
        object.__setattr__(self, "format", format_name)

    def _build(self):
        built = self.__dict__.get("_built")
        if built is None:
            keys = sorted(self._entries)
            rows = np.array([k[0] for k in keys], dtype=np.int64)
            cols = np.array([k[1] for k in keys], dtype=np.int64)
            pieces = [self._entries[k] for k in keys]
            values = from_pieces(pieces) if any(isinstance(p, Active) for p in pieces) else \
                np.array(pieces, dtype=float)
            matrix = ActiveSparse.made(rows, cols, values, self._size,
                                       isinstance(self, ActiveSparseArray), self.format)
            built = matrix.__dict__
            object.__setattr__(self, "_built", built)
        return built

    @property
    def _rows(self):
        return self._build()["_rows"]

    @property
    def _cols(self):
        return self._build()["_cols"]

    @property
    def _values(self):
        return self._build()["_values"]

    @property
    def _pattern(self):
        return self._build()["_pattern"]

    @property
    def _shape(self):
        return self._size

    def _index(self, key):
        if not (isinstance(key, tuple) and len(key) == 2
                and all(isinstance(k, (int, np.integer)) for k in key)):
            return None
        i, j = (int(k) for k in key)
        m, n = self._size
        if not (-m <= i < m and -n <= j < n):
            raise IndexError(f"adsim: index ({i}, {j}) out of range for shape {self._size}")
        return (i % m, j % n)

    def __setitem__(self, key, value):
        at = self._index(key)
        if at is None:
            self._write_block(key, value)
            return
        if np.ndim(value) != 0:
            raise ValueError(f"adsim: A[{key!r}] takes a scalar, not a value of shape "
                             f"{np.shape(value)}")
        self._entries[at] = value if isinstance(value, Active) else float(value)
        object.__setattr__(self, "_built", None)

    def _write_block(self, key, value):
        """``A[rows, cols] = value`` (a boundary row ``K[0, :] = 0``): each
        selected position takes its element of the value broadcast; a plain 0
        removes the entry."""
        rows_key, cols_key = _outer_keys(key)
        picked_r, picked_c = _picked(rows_key, self._size[0]), _picked(cols_key, self._size[1])
        grid = np.broadcast_to(value, (picked_r.size, picked_c.size))
        for a, i in enumerate(picked_r):
            for b, j in enumerate(picked_c):
                v = grid[a, b]
                if isinstance(v, Active):
                    self._entries[int(i), int(j)] = v
                elif float(v) != 0.0:
                    self._entries[int(i), int(j)] = float(v)
                else:
                    self._entries.pop((int(i), int(j)), None)
        object.__setattr__(self, "_built", None)

    def __getitem__(self, key):
        at = self._index(key)
        if at is None:
            return ActiveSparse.__getitem__(self, key)
        return self._entries.get(at, 0.0)

    def setdiag(self, values, k=0):
        _write_diagonal(self, values, k)


# SciPy's array classes derive from abc.ABC first, so an object of one can
# only become a class laid out the same way: the array kinds derive from
# abc.ABC and are registered as ActiveSparseArray (as sparse_active.py's is)
class _AssemblyMatrix(ActiveAssembly, ActiveSparseMatrix):
    pass


class _AssemblyArray(abc.ABC, ActiveAssembly):
    pass


class _DictAssemblyMatrix(ActiveAssembly, ActiveSparseMatrix, dict):
    """For ``dok_matrix``, a dict subclass (its class can only become another);
    kept empty as a dict, and ``values`` is the dict's (code walking
    containers calls it)."""
    values = dict.values


class _DictAssemblyArray(abc.ABC, ActiveAssembly, dict):
    values = dict.values


ActiveSparseArray.register(_AssemblyArray)
ActiveSparseArray.register(_DictAssemblyArray)


def _setitem(self, key, x):
    """SciPy's ``A[key] = x`` given an active ``x``: ``A`` becomes an
    ActiveAssembly holding its entries so far, then takes the entry."""
    coo = self.tocoo()
    entries = {(int(i), int(j)): float(v) for i, j, v in zip(coo.row, coo.col, coo.data)}
    format_name, shape = self.format, self.shape
    array = isinstance(self, sp.sparray)
    if isinstance(self, dict):
        dict.clear(self)
        kind = _DictAssemblyArray if array else _DictAssemblyMatrix
    else:
        kind = _AssemblyArray if array else _AssemblyMatrix
    self.__dict__.clear()
    self.__class__ = kind
    self._start(entries, shape, format_name)
    self[key] = x


def _write_diagonal(matrix, values, k=0):
    """SciPy's ``setdiag``: the entries (i, i + k) along the diagonal take
    ``values`` in order (a scalar everywhere; a shorter vector sets the
    first ones), one write each."""
    m, n = matrix.shape
    k = int(k)
    length = max(0, min(m + min(k, 0), n - max(k, 0)))
    if np.ndim(values) == 0:
        values = [values] * length
    elif np.ndim(values) != 1:
        raise ValueError(f"adsim: setdiag takes a scalar or a vector, not shape "
                         f"{np.shape(values)}")
    for t in range(min(length, np.shape(values)[0])):
        i = t + max(-k, 0)
        matrix[i, i + k] = values[t]


def _setdiag(self, values, k=0):
    """``A.setdiag(v, k)`` with active ``v``: written entry by entry."""
    _write_diagonal(self, values, k)


def _value_is_active(args, kwargs):
    return len(args) > 2 and bool(active_leaves(args[2]))


# ---- blocks ----------------------------------------------------------------------------

def _holds_active_matrix(v, depth=0):
    if isinstance(v, ActiveSparse):
        return True
    if depth < 3 and isinstance(v, (list, tuple)):
        return any(_holds_active_matrix(item, depth + 1) for item in v)
    return False


def _routes_blocks(args, kwargs):
    return _holds_active_matrix(args) or _holds_active_matrix(list(kwargs.values()))


def bmat(blocks, format=None, dtype=None):
    """SciPy's bmat: block (I, J) at the row offset of the block rows above
    and the column offset of the block columns to its left; a block row or
    column of ``None`` only is refused, as SciPy refuses it."""
    grid = [list(row) for row in blocks]
    like_array = any(isinstance(b, (sp.sparray, ActiveSparseArray)) for row in grid for b in row)
    parts = [[None if b is None else _kron_operand(b) for b in row] for row in grid]
    heights = [_one_size([b.shape[0] for b in row if b is not None], f"block row {i}")
               for i, row in enumerate(parts)]
    widths = [_one_size([row[j].shape[1] for row in parts if row[j] is not None],
                        f"block column {j}") for j in range(len(parts[0]) if parts else 0)]
    row_at, col_at = np.cumsum([0] + heights), np.cumsum([0] + widths)
    rows, cols, values = [], [], None
    for i, row in enumerate(parts):
        for j, b in enumerate(row):
            if b is None:
                continue
            rows.append(b._rows + row_at[i])
            cols.append(b._cols + col_at[j])
            values = b._values if values is None else _concatenate(values, b._values)
    if values is None:
        values = np.zeros(0)
    return ActiveSparse.made(np.concatenate(rows) if rows else np.zeros(0, np.int64),
                             np.concatenate(cols) if cols else np.zeros(0, np.int64), values,
                             (int(row_at[-1]), int(col_at[-1])), like_array, format or "coo")


def _one_size(sizes, what):
    if not sizes:
        raise ValueError(f"adsim: bmat: {what} holds only None blocks; its size is unknown")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"adsim: bmat: the blocks of {what} have different sizes {sizes}")
    return int(sizes[0])


def hstack(blocks, format=None, dtype=None):
    return bmat([list(blocks)], format, dtype)


def vstack(blocks, format=None, dtype=None):
    return bmat([[b] for b in blocks], format, dtype)


def block_diag(mats, format=None, dtype=None):
    mats = list(mats)
    return bmat([[m if i == j else None for j in range(len(mats))] for i, m in enumerate(mats)],
                format, dtype)


for _rule in (bmat, hstack, vstack, block_diag):
    _rule.routes_also = _routes_blocks
for _rule, _owner in ((_dia_init, "_dia_base"), (_bsr_init, "_bsr_base")):
    _rule.__name__, _rule.__qualname__ = "__init__", f"{_owner}.__init__"
_setitem.__name__ = "__setitem__"
_setitem.routes_also = _value_is_active
_setdiag.__name__, _setdiag.__qualname__ = "setdiag", "_spbase.setdiag"

HOOKS = {
    ("scipy.sparse._dia", "_dia_base.__init__"): _dia_init,
    ("scipy.sparse._bsr", "_bsr_base.__init__"): _bsr_init,
    ("scipy.sparse._lil", "_lil_base.__setitem__"): _setitem,
    ("scipy.sparse._index", "IndexMixin.__setitem__"): _setitem,
    ("scipy.sparse._base", "_spbase.setdiag"): _setdiag,
    ("scipy.sparse._construct", "bmat"): bmat,
    ("scipy.sparse._construct", "hstack"): hstack,
    ("scipy.sparse._construct", "vstack"): vstack,
    ("scipy.sparse._construct", "block_diag"): block_diag,
}
