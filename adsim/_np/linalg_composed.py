"""``np.linalg`` functions written with other recorded functions, so their
derivatives are those of the composition: NumPy 2's array-API names
(matmul, outer, vecdot, trace, diagonal, cross, matrix_transpose,
vector_norm, matrix_norm, svdvals), multi_dot (in NumPy's cheapest order),
tensorsolve, tensorinv and matrix_rank (cond is spectral_norms.py's)."""
from math import inf, prod

import numpy as np

from .._active import Active
from ..errors import UnsupportedOperation
from . import composed, einsum, linalg, products
from .core import axes_of, float64_only, shape_of
from .decompositions import svd
from .views import index_map


def matmul(x1, x2, /):
    return einsum.matmul(x1, x2)


def outer(x1, x2, /):
    n1, n2 = len(shape_of(x1)), len(shape_of(x2))
    if n1 != 1 or n2 != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={n1} and "
                         f"x2.ndim={n2}.")
    return products.outer(x1, x2)


def _core_dims(name, signature, *shapes):
    """NumPy's checks of a gufunc's core dimensions (the trailing axes named
    in ``signature``) on the operands' shapes: each has enough axes, and axes
    of one name have one size (broadcasting would otherwise hide a mismatch)."""
    cores = [[c for c in core.split(",") if c] for core in
             signature.split("->")[0].strip("()").split("),(")]
    seen = {}
    for k, (names, shape) in enumerate(zip(cores, shapes)):
        if len(shape) < len(names):
            raise ValueError(f"{name}: Input operand {k} does not have enough dimensions (has "
                             f"{len(shape)}, gufunc core with signature {signature} requires "
                             f"{len(names)})")
        for i, (c, d) in enumerate(zip(names, shape[len(shape) - len(names):])):
            if seen.setdefault(c, d) != d:
                raise ValueError(f"{name}: Input operand {k} has a mismatch in its core dimension "
                                 f"{i}, with gufunc signature {signature} (size {d} is different "
                                 f"from {seen[c]})")


def vecdot(x1, x2, /, *, axis=-1):
    """Sums of products along ``axis`` of each operand (real arrays: no
    conjugate); the other axes broadcast."""
    if axis != -1 and shape_of(x1) and shape_of(x2):
        x1, x2 = np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)
    _core_dims("vecdot", "(n),(n)->()", shape_of(x1), shape_of(x2))
    return np.sum(x1 * x2, axis=-1)


def matvec(x1, x2, /):
    _core_dims("matvec", "(m,n),(n)->(m)", shape_of(x1), shape_of(x2))
    return einsum.einsum("...ij,...j->...i", x1, x2)


def vecmat(x1, x2, /):
    _core_dims("vecmat", "(n),(n,m)->(m)", shape_of(x1), shape_of(x2))
    return einsum.einsum("...i,...ij->...j", x1, x2)


def trace(x, /, *, offset=0, dtype=None):
    float64_only("linalg.trace", dtype)
    return products.trace(x, offset, -2, -1)


def diagonal(x, /, *, offset=0):
    return index_map(lambda idx: np.diagonal(idx, offset, -2, -1), [x])


def matrix_transpose(x, /):
    if len(shape_of(x)) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return np.swapaxes(x, -1, -2)


def cross(x1, x2, /, *, axis=-1):
    n1, n2 = shape_of(x1)[axis], shape_of(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"are {n1} and {n2} dimensional instead.")
    return composed.cross(x1, x2, axis=axis)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """A vector norm over ``axis`` (None: all elements; a tuple: those axes
    taken together)."""
    shape = shape_of(x)
    axes = axes_of(axis if axis is None or isinstance(axis, tuple) else (axis,), len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    flat = np.reshape(np.transpose(x, axes + rest),
                      (prod(shape[i] for i in axes),) + tuple(shape[i] for i in rest))
    result = linalg.vector_norm_along(flat, ord, 0, False)
    if keepdims:
        result = np.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def svdvals(x, /):
    return svd(x, compute_uv=False)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """NumPy's count of the singular values above the tolerance (by default
    the largest times max(M, N) eps), the comparisons recorded as data: an
    integer that every replay computes again, whose derivative is zero
    (``int()`` of it, or a branch on it, is a recorded guard).
    hermitian=True counts the eigenvalues' magnitudes (of the lower
    triangle, as NumPy's)."""
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    shape = shape_of(A)
    if len(shape) < 2:
        return int(not np.all(A == 0))
    S = np.abs(np.linalg.eigvalsh(A)) if hermitian else svd(A, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = max(shape[-2:]) * np.finfo(float).eps
        else:
            rtol = _trailing_axis(rtol)
        tol = np.max(S, axis=-1, keepdims=True) * rtol
    else:
        tol = _trailing_axis(tol)
    return np.count_nonzero(S > tol, axis=-1)


def _trailing_axis(v):
    """``asarray(v)[..., newaxis]`` of a plain or active tolerance."""
    return (v if isinstance(v, Active) else np.asarray(v))[..., None]


def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices in NumPy's order (the cheapest,
    as NumPy finds it), so values agree to the last bit; a first or last
    1-d operand is a row or column vector."""
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if out is not None:
        raise UnsupportedOperation("adsim: np.linalg.multi_dot(..., out=...) is not recorded; "
                                   "assign the result instead")
    if n == 2:
        return np.dot(arrays[0], arrays[1])
    first, last = len(shape_of(arrays[0])), len(shape_of(arrays[-1]))
    chain = list(arrays)
    if first == 1:
        chain[0] = np.reshape(chain[0], (1, -1))
    if last == 1:
        chain[-1] = np.reshape(chain[-1], (-1, 1))
    if any(len(shape_of(a)) != 2 for a in chain):
        raise np.linalg.LinAlgError("multi_dot: the arrays between the first and the last must "
                                    "be two-dimensional")
    split = _chain_order([shape_of(a) for a in chain])

    def product(i, j):
        if i == j:
            return chain[i]
        k = split[i][j]
        return np.dot(product(i, k), product(k + 1, j))     # plain factors stay plain
    result = product(0, n - 1)
    if first == 1 and last == 1:
        return result[0, 0]
    return np.ravel(result) if first == 1 or last == 1 else result


def _chain_order(shapes):
    """split[i][j]: where the cheapest product of matrices i..j splits
    (the first such split, as NumPy takes it)."""
    n = len(shapes)
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b: a solve of ``a`` reshaped square."""
    sa, nb = shape_of(a), len(shape_of(b))
    if axes is not None:                # NumPy's reordering: axes must be in range(a.ndim)
        order = list(range(len(sa)))
        for k in axes:
            order.remove(k)
            order.insert(len(sa), k)
        a, sa = np.transpose(a, order), tuple(sa[k] for k in order)
    unknown = sa[nb:]
    n = prod(unknown)
    if prod(sa) != n * n:
        raise np.linalg.LinAlgError("Input arrays must satisfy the requirement "
                                    "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return np.reshape(linalg.solve(np.reshape(a, (n, n)), np.ravel(b)), unknown)


def tensorinv(a, ind=2):
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    shape = shape_of(a)
    n = prod(shape[ind:])
    return np.reshape(linalg.inv(np.reshape(a, (n, -1))), shape[ind:] + shape[:ind])
