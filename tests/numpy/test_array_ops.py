"""Array operations: reductions, products, shape changes, indexing, in-place
assignment, joining, padding and the piecewise functions.

Every program runs on plain NumPy arrays too; ``check_tape`` compares the
recorded value with NumPy and every sweep with central differences (and
forward with reverse mode). Inputs come from ``distinct``: values well apart
and away from the kinks, so that max/min/abs/clip keep their branch under
the difference steps.
"""
import zlib

import numpy as np
import pytest

import adsim
from fdcheck import assert_close, check_tape, distinct

rng0 = np.random.default_rng(100)
A34 = rng0.standard_normal((3, 4))
A44 = rng0.standard_normal((4, 4)) + 4.0 * np.eye(4)
B42 = rng0.standard_normal((4, 2))
V4 = rng0.standard_normal(4)
MASK34 = rng0.uniform(size=(3, 4)) > 0.5

# name: (function, input shapes)
REDUCTIONS = {
    "sum": (lambda x: np.sum(x), [(3, 4)]),
    "sum-axis0": (lambda x: np.sum(x * x, axis=0), [(3, 4)]),
    "sum-axis-1-keepdims": (lambda x: np.sum(x ** 2, axis=-1, keepdims=True), [(3, 4)]),
    "sum-tuple-axis": (lambda x: np.sum(np.sin(x), axis=(0, 2)), [(2, 3, 2)]),
    "sum-tuple-keepdims": (lambda x: np.sum(x, axis=(0, 2), keepdims=True) ** 2, [(2, 3, 2)]),
    "sum-method": (lambda x: (x ** 2).sum(axis=1), [(3, 4)]),
    "mean": (lambda x: np.mean(x ** 2), [(3, 4)]),
    "mean-axis1": (lambda x: np.mean(np.exp(x), axis=1), [(3, 4)]),
    "mean-keepdims": (lambda x: x - np.mean(x, axis=0, keepdims=True), [(3, 4)]),
    "mean-method": (lambda x: x.mean(axis=0) ** 3, [(3, 4)]),
    "prod": (lambda x: np.prod(x), [(5,)]),
    "prod-axis0": (lambda x: np.prod(x, axis=0), [(3, 4)]),
    "prod-axis1-keepdims": (lambda x: np.prod(x, axis=1, keepdims=True), [(3, 4)]),
    "prod-none-keepdims": (lambda x: np.prod(x, keepdims=True), [(2, 3)]),
    "prod-method": (lambda x: x.prod(axis=-1), [(2, 3)]),
    "max": (lambda x: np.max(x), [(3, 4)]),
    "max-axis0": (lambda x: np.max(x, axis=0), [(3, 4)]),
    "max-axis1-keepdims": (lambda x: np.max(x, axis=1, keepdims=True) * x, [(3, 4)]),
    "max-tuple": (lambda x: np.max(x, axis=(0, 2)), [(2, 3, 2)]),
    "amax": (lambda x: np.amax(x ** 3, axis=-1), [(3, 4)]),
    "max-method": (lambda x: x.max(axis=0), [(3, 4)]),
    "min": (lambda x: np.min(x), [(3, 4)]),
    "min-axis1": (lambda x: np.min(x, axis=1), [(3, 4)]),
    "min-keepdims": (lambda x: np.min(x, axis=0, keepdims=True), [(3, 4)]),
    "min-method": (lambda x: x.min() * x, [(4,)]),
    "cumsum": (lambda x: np.cumsum(x ** 2), [(5,)]),
    "cumsum-2d-flat": (lambda x: np.cumsum(x), [(3, 4)]),
    "cumsum-axis0": (lambda x: np.cumsum(x, axis=0) ** 2, [(3, 4)]),
    "cumsum-axis1": (lambda x: np.cumsum(np.sin(x), axis=1), [(3, 4)]),
    "cumsum-method": (lambda x: x.cumsum(axis=-1), [(2, 3)]),
    "sum-empty-axis": (lambda x: np.sum(x, axis=()) ** 2, [(3,)]),
    "mean-tuple-axis": (lambda x: np.mean(x ** 2, axis=(0, 1)), [(2, 3, 2)]),
    "prod-tuple-axis": (lambda x: np.prod(x, axis=(0, 1)), [(2, 3, 2)]),
    "max-of-0d": (lambda x: np.max(x[0]) * np.sum(x[1]) * np.mean(x), [(3,)]),
    "add.reduce": (lambda x: np.add.reduce(x) ** 2, [(2, 3)]),
    "add.reduce-axis": (lambda x: np.add.reduce(x, axis=1, keepdims=True) * x, [(2, 3)]),
    "builtin-sum": (lambda x: sum(x) * 1.0, [(5,)]),
}

PRODUCTS = {
    "dot-vv": (lambda x, y: np.dot(x, y), [(4,), (4,)]),
    "dot-mv": (lambda x, y: np.dot(x, y), [(3, 4), (4,)]),
    "dot-vm": (lambda x, y: np.dot(x, y), [(3,), (3, 4)]),
    "dot-mm": (lambda x, y: np.dot(x, y), [(3, 4), (4, 2)]),
    "dot-scalar": (lambda x: np.dot(2.5, x), [(4,)]),
    "dot-method": (lambda x, y: x.dot(y), [(3, 4), (4,)]),
    "dot-const-left": (lambda x: np.dot(A34, x), [(4,)]),
    "dot-const-right": (lambda x: np.dot(x, A34), [(3,)]),
    "matmul-mm": (lambda x, y: np.matmul(x, y), [(3, 4), (4, 2)]),
    "matmul-op-mm": (lambda x, y: x @ y, [(3, 4), (4, 2)]),
    "matmul-op-mv": (lambda x, y: x @ y, [(3, 4), (4,)]),
    "matmul-op-vm": (lambda x, y: x @ y, [(3,), (3, 4)]),
    "matmul-op-vv": (lambda x, y: x @ y, [(4,), (4,)]),
    "matmul-const-left-m": (lambda x: A34 @ x, [(4, 2)]),
    "matmul-const-left-v": (lambda x: A34 @ x, [(4,)]),
    "matmul-const-right-m": (lambda x: x @ B42, [(3, 4)]),
    "matmul-const-right-v": (lambda x: x @ V4, [(3, 4)]),
    "matmul-self": (lambda x: x @ x.T, [(3, 4)]),
    "matmul-quadratic": (lambda x: x @ A44 @ x, [(4,)]),
    "outer": (lambda x, y: np.outer(x, y), [(3,), (4,)]),
    "outer-const": (lambda x: np.outer(x, V4) + np.outer(V4, x), [(4,)]),
    "outer-2d": (lambda x: np.outer(x, x), [(2, 2)]),
    "inner": (lambda x, y: np.inner(x, y), [(4,), (4,)]),
    "vdot": (lambda x, y: np.vdot(x, y), [(2, 3), (2, 3)]),
    "einsum-mv": (lambda x, y: np.einsum("ij,j->i", x, y), [(3, 4), (4,)]),
    "einsum-mm": (lambda x, y: np.einsum("ij,jk->ik", x, y), [(3, 4), (4, 2)]),
    "einsum-inner": (lambda x, y: np.einsum("i,i->", x, y), [(4,), (4,)]),
    "einsum-outer": (lambda x, y: np.einsum("i,j->ij", x, y), [(3,), (4,)]),
    "einsum-transpose": (lambda x: np.einsum("ij->ji", x) ** 2, [(3, 4)]),
    "einsum-trace": (lambda x: np.einsum("ii->", x) * np.einsum("ii->i", x), [(3, 3)]),
    "einsum-sum": (lambda x: np.einsum("ij->", x ** 2), [(3, 4)]),
    "einsum-rowdot": (lambda x, y: np.einsum("ij,ij->i", x, y), [(3, 4), (3, 4)]),
    "einsum-batched-mm": (lambda x, y: np.einsum("bij,bjk->bik", x, y), [(2, 3, 2), (2, 2, 3)]),
    "einsum-implicit": (lambda x, y: np.einsum("ij,jk", x, y), [(3, 4), (4, 2)]),
    "einsum-three": (lambda x, y, z: np.einsum("ij,jk,k->i", x, y, z), [(2, 3), (3, 4), (4,)]),
    "einsum-const": (lambda x: np.einsum("ij,jk->ik", A34, x), [(4, 2)]),
    "einsum-quadratic": (lambda x: np.einsum("i,ij,j->", x, A44, x), [(4,)]),
    "trace": (lambda x: np.trace(x @ x), [(3, 3)]),
    "matmul-column-row": (lambda x: x[:, None] @ x[None, :], [(3,)]),
    "outer-of-scalar": (lambda x: np.outer(x[0], x), [(3,)]),
    "einsum-ij,i->j": (lambda x: np.einsum("ij,i->j", x, x[:, 0]), [(3, 4)]),
    "einsum-ijk,jk->i": (lambda x: np.einsum("ijk,jk->i", x, x[0]), [(2, 3, 2)]),
    "einsum-i,i,i->": (lambda x: np.einsum("i,i,i->", x, x, x), [(4,)]),
    "einsum-ij,kj->ik": (lambda x, y: np.einsum("ij,kj->ik", x, y), [(2, 3), (4, 3)]),
    "einsum-full-contraction": (lambda x, y: np.einsum("ij,ij", x, y), [(2, 3), (2, 3)]),
    "trace-offset": (lambda x: np.trace(x, 1) * x, [(3, 3)]),
}

SHAPES = {
    "transpose": (lambda x: np.transpose(x) * A34.T, [(3, 4)]),
    "transpose-T": (lambda x: x.T ** 2, [(3, 4)]),
    "transpose-axes": (lambda x: np.transpose(x, (1, 0, 2)) ** 2, [(2, 3, 2)]),
    "transpose-method": (lambda x: x.transpose(2, 0, 1) * 1.5, [(2, 3, 2)]),
    "reshape": (lambda x: np.reshape(x ** 2, (4, 3)), [(3, 4)]),
    "reshape-minus1": (lambda x: np.reshape(x, (2, -1)) @ np.ones(6), [(3, 4)]),
    "reshape-method": (lambda x: x.reshape(6, 2) * x.reshape((6, 2)), [(3, 4)]),
    "ravel": (lambda x: np.ravel(np.sin(x)), [(3, 4)]),
    "ravel-method": (lambda x: x.ravel() * x.flatten(), [(2, 3)]),
    "squeeze": (lambda x: np.squeeze(x) ** 2, [(1, 4, 1)]),
    "squeeze-axis": (lambda x: np.squeeze(x, axis=0) ** 2, [(1, 4, 1)]),
    "expand_dims": (lambda x: np.expand_dims(x, 1) * x, [(3,)]),
    "broadcast_to": (lambda x: np.broadcast_to(x, (2, 3, 4)) * A34, [(3, 1)]),
    "flip": (lambda x: np.flip(x, axis=0) * x, [(3, 4)]),
    "roll": (lambda x: np.roll(x, 1) * x, [(5,)]),
    "swapaxes": (lambda x: np.swapaxes(x, 0, 1) @ x, [(3, 4)]),
    "repeat": (lambda x: np.repeat(x, 2) ** 2, [(3,)]),
    "tile": (lambda x: np.tile(x, 2) * np.arange(8.0), [(4,)]),
    "copy": (lambda x: np.copy(x) * x.copy(), [(4,)]),
    "atleast_2d": (lambda x: np.atleast_2d(x) ** 2, [(4,)]),
    "moveaxis": (lambda x: np.moveaxis(x, 0, -1) ** 2, [(2, 3, 2)]),
    "take": (lambda x: np.take(x, [2, 0]) ** 2, [(4,)]),
    "diagonal": (lambda x: np.diagonal(x) ** 2, [(3, 3)]),
    "rot90": (lambda x: np.rot90(x) * 2.0, [(2, 3)]),
    "transpose-reshape": (lambda x: x.T.reshape(-1) ** 2, [(3, 2)]),
    "repeat-axis": (lambda x: np.repeat(x, 2, axis=0) ** 2, [(2, 3)]),
    "tile-2d": (lambda x: np.tile(x, (2, 1)) ** 2, [(2, 3)]),
}

INDEXING = {
    "int": (lambda x: x[1] * x[-1], [(5,)]),
    "slice": (lambda x: x[1:4] ** 2, [(5,)]),
    "slice-step": (lambda x: x[::2] * x[1::2][:3], [(6,)]),
    "slice-reverse": (lambda x: x[::-1] * x, [(5,)]),
    "int-array": (lambda x: x[[0, 2, 2, 4]] ** 2, [(5,)]),
    "int-array-ndarray": (lambda x: x[np.array([3, 0, 3])] * x[:3], [(5,)]),
    "negative-int-array": (lambda x: x[[-1, -2]] * x[0], [(5,)]),
    "bool-mask": (lambda x: x[np.array([True, False, True, True, False])] ** 2, [(5,)]),
    "bool-mask-2d": (lambda x: x[MASK34] * 2.0, [(3, 4)]),
    "row": (lambda x: x[1] * x[2], [(3, 4)]),
    "column": (lambda x: x[:, 1] ** 2, [(3, 4)]),
    "element-2d": (lambda x: x[1, 2] * x, [(3, 4)]),
    "block": (lambda x: x[1:, ::2] ** 2, [(3, 4)]),
    "fancy-2d": (lambda x: x[[0, 2], [1, 3]] * x[[1, 1], :][:, 0], [(3, 4)]),
    "newaxis": (lambda x: x[:, None] * x[None, :], [(3,)]),
    "ellipsis": (lambda x: x[..., 1] ** 2, [(2, 3, 2)]),
    "iterate": (lambda x: sum(r ** 2 for r in x), [(3, 2)]),
    "reverse-2d-slice": (lambda x: x[::-1, 1:] * x[:, :3], [(3, 4)]),
}


def _inplace_scatter(x):
    y = x * 1.0
    y[1] = x[0] ** 2
    y[2:4] += np.sin(x[:2])
    y[1] = y[1] * x[4]        # read, then overwrite the same element
    y[0] = 3.0                # a constant overwrites an active element
    y[1:3] = y[2:4]           # shift inside the same array
    y[[4, 0]] = x[[1, 2]] ** 3
    return y * x


def _recurrence(x):
    """Each element written from the previous one: the value stack must
    restore every overwritten value in the reverse sweep."""
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.size):
        y[i] = y[i - 1] * x[i] + np.sin(x[i - 1])
    for i in range(x.size - 1):
        y[i + 1] += 0.5 * y[i]
    return y


def _boundary(u):
    """Build an array from active pieces: P = zeros_like(u, shape=...), P[1:-1] = u."""
    n = u.size
    P = np.zeros_like(u, shape=(n + 2,))
    P[1:-1] = u
    P[0] = u[0] ** 2
    P[-1] = 1.0
    return P[2:] - 2.0 * P[1:-1] + P[:-2]


def _overwrite_whole(x):
    y = np.sin(x)
    z = y * x
    y = np.cos(x)             # the slot of the old y may be reused
    y[:] = y * z
    return y


def _setitem_2d(x):
    y = np.ones_like(x)
    y[0, :] = x[1] ** 2
    y[:, 1] += x[:, 0]
    y[MASK34] = x[MASK34] * 3.0
    y[2] = 0.5
    return y * x


def _full_like_active(x):
    y = np.full_like(x, x[0])
    y[1:] = x[1:] * y[1:]
    return y


def _duplicate_indices(x):
    """Repeated indices: the last write wins, and `+=` adds once, as in NumPy."""
    y = x * 1.0
    y[[0, 0]] = x[[1, 2]]
    y[[1, 1]] += x[[3, 4]] ** 2
    y[2:4] = x[0]
    return y * x


def _broadcast_rows(x):
    y = np.zeros_like(x)
    y[1:3, :] = x[0]
    y[:, ::-1] += x * 2.0
    y[0] = y[0][::-1]
    return y * x


INPLACE = {
    "scatter": (_inplace_scatter, [(5,)]),
    "recurrence": (_recurrence, [(5,)]),
    "zeros_like-shape-then-assign": (_boundary, [(5,)]),
    "overwrite-whole": (_overwrite_whole, [(4,)]),
    "setitem-2d": (_setitem_2d, [(3, 4)]),
    "full_like-active": (_full_like_active, [(4,)]),
    "setitem-broadcast": (lambda x: _assign(np.zeros_like(x, shape=(2, 3)), np.s_[:, 1:], x), [(2,)]),
    "duplicate-indices": (_duplicate_indices, [(5,)]),
    "setitem-broadcast-row": (_broadcast_rows, [(3, 4)]),
}


def _assign(y, key, value):
    y[key] = value[:, None] if np.ndim(value) == 1 else value
    y[key] *= value[:, None] if np.ndim(value) == 1 else value
    return y


JOINING = {
    "concatenate": (lambda x, y: np.concatenate([x, y ** 2]), [(3,), (2,)]),
    "concatenate-const": (lambda x: np.concatenate([V4, x, V4[:1]]) * 2.0, [(3,)]),
    "concatenate-axis1": (lambda x, y: np.concatenate([x, y], axis=1) ** 2, [(2, 3), (2, 1)]),
    "concatenate-self": (lambda x: np.concatenate([x, x[::-1]]) * np.arange(8.0), [(4,)]),
    "stack": (lambda x, y: np.stack([x, y]) ** 2, [(3,), (3,)]),
    "stack-axis1": (lambda x: np.stack([x, 2.0 * x, V4[:3]], axis=1) ** 2, [(3,)]),
    "hstack": (lambda x, y: np.hstack([x, y, x]) ** 2, [(2,), (3,)]),
    "vstack": (lambda x, y: np.vstack([x, y]) @ np.ones(3), [(3,), (2, 3)]),
    "column_stack": (lambda x: np.column_stack([x, x ** 2]), [(3,)]),
    "pad": (lambda x: np.pad(x, 2) ** 2 + 1.0, [(3,)]),
    "pad-value": (lambda x: np.pad(x ** 2, (1, 2), constant_values=1.5), [(3,)]),
    "pad-2d": (lambda x: np.pad(x, ((1, 0), (0, 2))) * np.pad(x, 1)[1:, :], [(2, 3)]),
    "pad-edge": (lambda x: np.pad(x, 2, mode="edge") ** 2, [(3,)]),
    "pad-edge-2d": (lambda x: np.pad(x, ((0, 1), (2, 1)), mode="edge") ** 2, [(2, 3)]),
    "pad-reflect": (lambda x: np.pad(x, 2, mode="reflect") ** 2, [(4,)]),
    "diff": (lambda x: np.diff(x ** 2), [(5,)]),
    "diff-n2": (lambda x: np.diff(x, n=2) * x[:3], [(5,)]),
    "diff-axis0": (lambda x: np.diff(x, axis=0) ** 2, [(3, 4)]),
    "concatenate-axis-none": (lambda x: np.concatenate([x, x * 2.0], axis=None), [(2, 3)]),
    "stack-last-axis": (lambda x: np.stack([x, x ** 2], axis=-1), [(2, 3)]),
    "hstack-2d": (lambda x: np.hstack([x, x ** 2]), [(2, 3)]),
    "vstack-with-constant": (lambda x: np.vstack([x, x ** 2, np.ones(3)]), [(3,)]),
    "pad-wrap": (lambda x: np.pad(x, 1, mode="wrap") ** 2, [(3,)]),
}

PIECEWISE = {
    "clip": (lambda x: np.clip(x, -0.5, 0.5) * x, [(3, 4)]),
    "clip-min-only": (lambda x: np.clip(x, 0.0, None) ** 2, [(6,)]),
    "clip-max-only": (lambda x: np.clip(x, None, 0.5) ** 2, [(6,)]),
    "clip-array-bounds": (lambda x: np.clip(x, -A34 ** 2 - 0.5, 0.5) * x, [(3, 4)]),
    "clip-method": (lambda x: x.clip(-1.0, 1.0) * x, [(6,)]),
    "where": (lambda x: np.where(x > 0, x ** 2, -x), [(3, 4)]),
    "where-const": (lambda x: np.where(x < 0.5, 2.0, np.sin(x)), [(6,)]),
    "where-const-array": (lambda x: np.where(MASK34, A34, x ** 3), [(3, 4)]),
    "where-broadcast": (lambda x, y: np.where(x > 0, x, y), [(3, 4), (4,)]),
    "abs": (lambda x: np.abs(x) * x, [(6,)]),
    "abs-builtin": (lambda x: abs(x) ** 3, [(6,)]),
    "fabs": (lambda x: np.fabs(x) * 2.0, [(6,)]),
    "maximum": (lambda x, y: np.maximum(x, y) ** 2, [(6,), (6,)]),
    "maximum-scalar": (lambda x: np.maximum(x, 0.0) * x, [(6,)]),
    "maximum-broadcast": (lambda x, y: np.maximum(x, y), [(3, 4), (3, 1)]),
    "minimum": (lambda x, y: np.minimum(x, y) * x, [(6,), (6,)]),
    "minimum-const": (lambda x: np.minimum(0.5, x), [(6,)]),
    "sign": (lambda x: np.sign(x) * x ** 2, [(6,)]),
    "stop_gradient": (lambda x: adsim.stop_gradient(np.zeros(6)) + x ** 2, [(6,)]),
    "clip-array-bounds-both": (lambda x: np.clip(x, np.full(6, -0.5), np.full(6, 0.5)) * x, [(6,)]),
    "maximum-reflected": (lambda x: np.maximum(0.5, x) * x, [(6,)]),
    "isnan-where": (lambda x: np.where(np.isnan(x), 0.0, x ** 2), [(4,)]),
    "power-negative-base": (lambda x: np.power(x, np.array([2.0, 3.0, 4.0, 1.0, 0.0])) + x ** 3, [(5,)]),
    "power-numpy-scalars": (lambda x: x ** np.int64(3) + np.float64(2.0) ** x, [(5,)]),
}

LINALG = {
    "solve-vector": (lambda A, b: np.linalg.solve(A, b), [(4, 4), (4,)]),
    "solve-matrix": (lambda A, B: np.linalg.solve(A, B), [(4, 4), (4, 2)]),
    "solve-const-A": (lambda b: np.linalg.solve(A44, b) ** 2, [(4,)]),
    "solve-const-b": (lambda A: np.linalg.solve(A, V4), [(4, 4)]),
    "norm": (lambda x: np.linalg.norm(x), [(5,)]),
    "norm-fro": (lambda x: np.linalg.norm(x, "fro"), [(3, 4)]),
    "norm-matrix-default": (lambda x: np.linalg.norm(x), [(3, 4)]),
    "norm-axis": (lambda x: np.linalg.norm(x, axis=1), [(3, 4)]),
    "norm-axis-keepdims": (lambda x: x / np.linalg.norm(x, axis=0, keepdims=True), [(3, 4)]),
    "norm-1": (lambda x: np.linalg.norm(x, 1), [(5,)]),
    "norm-inf": (lambda x: np.linalg.norm(x, np.inf), [(5,)]),
    "norm-2": (lambda x: np.linalg.norm(x, 2), [(5,)]),
    "solve-active-system-matrix-rhs": (
        lambda x: np.linalg.solve(3.0 * np.eye(3) + np.outer(x, x), np.stack([x, x ** 2], axis=1)),
        [(3,)]),
    "norm-axis-tuple": (lambda x: np.linalg.norm(x, axis=(0, 1)), [(3, 4)]),
    "norm-keepdims": (lambda x: np.linalg.norm(x, keepdims=True), [(3, 4)]),
    "norm-1-axis": (lambda x: np.linalg.norm(x, 1, axis=0), [(3, 4)]),
}

GROUPS = {"reductions": REDUCTIONS, "products": PRODUCTS, "shapes": SHAPES,
          "indexing": INDEXING, "inplace": INPLACE, "joining": JOINING,
          "piecewise": PIECEWISE, "linalg": LINALG}


def _inputs(group, name, shapes, seed):
    rng = np.random.default_rng(seed)
    xs = [distinct(rng, s) for s in shapes]
    if group == "linalg" and name.startswith("solve") and shapes[0] == (4, 4):
        xs[0] = xs[0] + 5.0 * np.eye(4)          # well conditioned
    return xs


def _params():
    for group, table in GROUPS.items():
        for name in table:
            yield pytest.param(group, name, id=f"{group}-{name}")


@pytest.mark.parametrize(("group", "name"), list(_params()))
def test_array_op(group, name):
    f, shapes = GROUPS[group][name]
    seed = zlib.crc32(f"{group}-{name}".encode())
    xs = _inputs(group, name, shapes, seed)
    check_tape(f, xs, seed=seed + 1)


def test_inplace_on_an_input():
    """Writing into the function's own argument: the overwritten input
    element gets adjoint zero, the rest follow the chain rule."""
    def f(x):
        x[0] = x[1] ** 2
        return np.sum(x * x)
    x0 = np.array([0.3, -0.7, 1.1])
    g = adsim.grad(f)(x0.copy())
    # f = x1^4 + x1^2 + x2^2
    assert_close(g, [0.0, 4 * x0[1] ** 3 + 2 * x0[1], 2 * x0[2]], 1e-14, 1e-15)
    tape = adsim.record(f, x0.copy())
    x1 = np.array([5.0, 0.2, -0.4])
    assert_close(tape.gradient(x1), [0.0, 4 * 0.2 ** 3 + 2 * 0.2, -0.8], 1e-14, 1e-15)
    assert_close(tape.forward(x1), 0.2 ** 4 + 0.2 ** 2 + 0.16, 1e-14, 0)


def test_recurrence_replays_match_rerecording():
    """The value stack restores every overwrite: replays at new points give
    the same gradients as fresh recordings there."""
    rng = np.random.default_rng(7)
    f = lambda x: np.sum(_recurrence(x) ** 2)  # noqa: E731
    tape = adsim.record(f, rng.standard_normal(6))
    for _ in range(3):
        x = rng.standard_normal(6)
        assert_close(tape.gradient(x), adsim.record(f, x).gradient(x), 1e-14, 1e-14)
        assert_close(tape.hvp(x, np.ones(6)), adsim.record(f, x).hvp(x, np.ones(6)), 1e-14, 1e-14)


def test_prod_with_zero_has_exact_derivative():
    x = np.array([0.0, 2.0, 3.0])
    assert_close(adsim.grad(np.prod)(x), [6.0, 0.0, 0.0], 0, 0)


def test_sum_of_python_list_of_actives():
    """Python's sum over rows starts at int 0 (0 + Active)."""
    x = np.arange(6.0).reshape(3, 2)
    assert_close(adsim.jacobian(lambda z: sum(z))(x), np.stack([np.eye(2)] * 3, axis=1), 0, 0)


def test_empty_results_in_every_sweep():
    """Series too short for what a script asks of them give size-0 outputs
    (the differences of one sample, the readings above a threshold none
    reaches) and size-0 inputs (no extra weights): every sweep of the tape,
    the dense Jacobians included, checked against differences."""
    one_sample = np.array([1.5])
    check_tape(lambda x: np.diff(x) ** 2, [one_sample])
    readings = np.array([0.2, 0.4, 0.3])
    check_tape(lambda x: np.exp(x[x > 10.0]), [readings])
    tape = check_tape(lambda x, w: np.sum(w) + x ** 2, [readings, np.zeros(0)])
    assert tape.jacobian(readings, np.zeros(0), mode="reverse")[1].shape == (3, 0)
