"""``scipy.linalg``'s structured matrices from active entries: block_diag,
toeplitz, circulant, hankel, called unchanged (see hooks.py).

Each is a gather of its arguments by a plain index matrix (or a
concatenation with zero blocks), so its derivative is the matching scatter,
and sparse Jacobians see which entry goes where.
"""
import warnings

import numpy as np

from .arrays import array


def block_diag(*arrs):
    """The blocks on the diagonal (1-d blocks are rows, scalars 1 x 1), zeros
    elsewhere."""
    if arrs == ():
        arrs = ([],)
    blocks = [array(a, "scipy.linalg.block_diag") for a in arrs]
    bad = [k for k, a in enumerate(blocks) if np.ndim(a) > 2]
    if bad:
        raise ValueError(f"arguments in the following positions have dimension greater than 2: "
                         f"{bad}")
    blocks = [np.reshape(a, (1, -1)) if np.ndim(a) < 2 else a for a in blocks]
    widths = [np.shape(a)[1] for a in blocks]
    total = sum(widths)
    rows, start = [], 0
    for a, width in zip(blocks, widths):
        height = np.shape(a)[0]
        rows.append(np.concatenate([np.zeros((height, start)), a,
                                    np.zeros((height, total - start - width))], axis=1))
        start += width
    return np.concatenate(rows, axis=0)


def _last_axis_gather(values, index):
    """values[..., index] for a plain integer matrix ``index``."""
    return np.take(values, index, axis=-1)


def toeplitz(c, r=None):
    """T[..., i, j] = c[..., i - j] (i >= j), r[..., j - i] (i < j); batches of
    c and r broadcast (SciPy 1.17's batching); r defaults to c."""
    name = "scipy.linalg.toeplitz"
    c = np.reshape(array(c, name), (-1,)) if np.ndim(c) == 0 else array(c, name)
    r = c if r is None else array(r, name)
    r = np.reshape(r, (1,)) if np.ndim(r) == 0 else r
    batch = np.broadcast_shapes(np.shape(c)[:-1], np.shape(r)[:-1])
    c = np.broadcast_to(c, batch + np.shape(c)[-1:])
    r = np.broadcast_to(r, batch + np.shape(r)[-1:])
    m, n = np.shape(c)[-1], np.shape(r)[-1]
    values = np.concatenate([c[..., ::-1], r[..., 1:]], axis=-1)       # c reversed, then r[1:]
    i, j = np.indices((m, n))
    return _last_axis_gather(values, m - 1 - i + j)


def circulant(c):
    """C[..., i, j] = c[..., (i - j) mod n]."""
    c = array(c, "scipy.linalg.circulant")
    c = np.reshape(c, (1,)) if np.ndim(c) == 0 else c
    n = np.shape(c)[-1]
    i, j = np.indices((n, n))
    return _last_axis_gather(c, (i - j) % n)


def hankel(c, r=None):
    """H[i, j] = c[i + j] (i + j < m), r[i + j - m + 1] beyond; r defaults
    to zeros (multidimensional arguments are ravelled with SciPy's warning)."""
    name = "scipy.linalg.hankel"
    c = array(c, name)
    r = np.zeros(np.shape(c)) if r is None else array(r, name)
    if np.ndim(c) > 1 or np.ndim(r) > 1:
        warnings.warn("Beginning in SciPy 1.19, multidimensional input will be treated as a "
                      "batch, not `ravel`ed. To preserve the existing behavior and silence "
                      "this warning, `ravel` arguments before passing them to `hankel`.",
                      FutureWarning, stacklevel=2)
    c, r = np.reshape(c, (-1,)), np.reshape(r, (-1,))
    m, n = np.shape(c)[0], np.shape(r)[0]
    values = np.concatenate([c, r[1:]])
    i, j = np.indices((m, n))
    return _last_axis_gather(values, i + j)


HOOKS = {("scipy.linalg", f.__name__): f for f in (block_diag, toeplitz, circulant, hankel)}
