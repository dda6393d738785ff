"""The NumPy and SciPy functions, and the argument patterns, that autograd's
own test suite exercises (its tests/test_numpy.py, test_systematic.py,
test_linalg.py, test_scipy.py, test_scalar_ops.py, test_binary_ops.py,
test_logic.py, test_list.py, test_tuple.py, test_dict.py, test_graphs.py and
test_wrappers.py), written again here as small programs in our style: one
row per function x argument pattern (the last tests: the idioms of the
graph, wrapper, logic and container tests), each row checked in every mode by
fdcheck.check_tape (values against NumPy, tangents and adjoints against
central differences, the dot-product test, dense Jacobians both ways,
Hessian-vector products against differences of the gradient) and replayed
at a moved point against a new recording.

Left out, as autograd's tests of its own machinery or of what NumPy no
longer has: complex-valued tests (test_complex.py; complex intermediates
are tested in test_complex_functions.py), autograd's own
`make_diagonal`, its generalised `scipy.signal.convolve` with `dot_axes`,
`np.msort` (removed from NumPy 2) and `np.row_stack` (deprecated: it is
`np.vstack`, which is here), the dtype of a
float32 input's gradient (adsim computes in float64), and tests that
autograd raises on assignment (adsim records writes).

Pass count of this checklist (368 rows): 365 at the branch point (6874e89),
where the rows of `ufunc.outer` (two) and `ldexp` were refused; 368 after
it. An outside audit had counted 83 % of autograd's real-valued tests
passing, before lists of active values, the index tricks and the last-mile
functions landed. autograd's own test files, run against adsim through a
small stand-in for autograd's API (outside the project), later passed 398 of
414 real-valued tests (96.1 %) of its older API and 210 of 222 (94.6 %) of
its newer one; what fails is autograd's own machinery (make_diagonal, its
generalised convolve, defgrad, float32 gradients), NumPy 2's changes,
different choices at kinks or for errors, uneven lists of plain numbers,
and finite differences of the tests' own that are off.
"""
import operator

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.signal as ssig
import scipy.special as ssp
import scipy.stats as sst

import adsim
from fdcheck import check_tape, distinct, flat, per_input

RNG = np.random.default_rng(1)
R = RNG.standard_normal


def D(*shape):
    """Values at least 0.08 apart and off the kinks: orders, maxima and
    clips keep their branches under the differences' steps."""
    return distinct(RNG, shape)


def _psd(n):
    m = R((n, n))
    return m @ m.T + n * np.eye(n)


def _sym(a):
    """The symmetric matrix made of a's lower triangle (autograd's tests
    symmetrize their inputs the same way before eigh and cholesky)."""
    low = np.tril(a)
    return (low + np.swapaxes(low, -1, -2)) / 2.0


def _gap(a):
    return np.sqrt(a ** 2 + 0.5)


MAT = R((4, 5))
VEC5 = R(5)
VEC4 = R(4)
CUBE = R((3, 4, 5))
SCALAR = np.asarray(0.7)
CONST = R((3, 2))
CONST34 = R((3, 4))
CONST44 = R((4, 4))
MASK = R((4, 5)) > 0
VEC10 = R(10)

CASES = {
    # -- test_numpy.py: products
    "dot mat vec": (lambda a, b: np.dot(a, b), [MAT, VEC5]),
    "dot mat mat": (lambda a, b: np.dot(a, b), [MAT, R((5, 3))]),
    "dot vec mat": (lambda a, b: np.dot(a, b), [VEC4, MAT]),
    "dot vec vec": (lambda a, b: np.dot(a, b), [VEC5, R(5)]),
    "dot mat float": (lambda a, b: np.dot(a, b), [MAT, SCALAR]),
    "dot float mat": (lambda a, b: np.dot(a, b), [SCALAR, MAT]),
    "dot vec float": (lambda a, b: np.dot(a, b), [VEC4, SCALAR]),
    "outer": (lambda a, b: np.outer(a, b), [VEC4, VEC5]),
    "tensordot axes=2 of scaled ones": (lambda x: np.tensordot(x * np.ones((2, 2)),
                                                              x * np.ones((2, 2)), 2), [SCALAR]),
    # reductions
    "max": (lambda a: np.max(a), [D(4, 5)]),
    "max axis": (lambda a: np.max(a, axis=1), [D(2, 3, 4)]),
    "max axis keepdims": (lambda a: np.max(a, axis=1, keepdims=True), [D(2, 3, 4)]),
    "min": (lambda a: np.min(a), [D(4, 5)]),
    "min axis": (lambda a: np.min(a, axis=1), [D(2, 3, 4)]),
    "min axis keepdims": (lambda a: np.min(a, axis=1, keepdims=True), [D(2, 3, 4)]),
    "sum axis tuple": (lambda a: np.sum(a, axis=(1, 2)), [CUBE]),
    "prod": (lambda a: np.prod(a), [R((2, 3)) ** 2 / 10.0 + 0.1]),
    "prod axis keepdims": (lambda a: np.prod(a, axis=0, keepdims=True), [R((2, 3)) ** 2 + 0.1]),
    "builtin sum of a list": (lambda a, b: sum([a, b]), [MAT, R((4, 5))]),
    "cumsum axis 0": (lambda a: np.cumsum(a, axis=0), [MAT]),
    "cumsum axis 1": (lambda a: np.cumsum(a, axis=1), [MAT]),
    "cumsum flat": (lambda a: np.cumsum(a), [MAT]),
    # shapes, flips, indexing
    "flipud": (np.flipud, [MAT]),
    "fliplr": (np.fliplr, [MAT]),
    "rot90": (np.rot90, [MAT]),
    "index ints": (lambda a: a[2, 0, 1], [CUBE]),
    "index reversed slice": (lambda a: a[::-1, 2:4, :], [CUBE]),
    "index list": (lambda a: a[[0, 1, 2], :, :], [CUBE]),
    "index mixed": (lambda a: a[2, 2:, [1, 3]], [CUBE]),
    "index fan-out": (lambda a: a[::-1, 1:3, :] + a[::-1, 2:4, :], [CUBE]),
    "index slice of slice": (lambda a: a[2:6][1:3], [R(7)]),
    "index repeated": (lambda a: np.sum(a[[0, 1, 0]]), [R(3)]),
    "dot of two slices": (lambda a: np.dot(a[:2], a[2:]), [VEC4]),
    "reshape method tuple": (lambda a: a.reshape((12, 5)), [CUBE]),
    "reshape method args": (lambda a: a.reshape(12, 5), [CUBE]),
    "reshape function": (lambda a: np.reshape(a, (12, 5)), [CUBE]),
    "ravel, flatten": (lambda a: a.ravel() * np.ravel(a) + a.flatten(), [CUBE]),
    "len": (lambda a: a * len(a), [CONST]),
    "transpose attribute": (lambda a: a.T, [MAT]),
    "squeeze": (lambda a: np.squeeze(a) + a.squeeze(), [R((5, 1, 4))]),
    "expand_dims": (lambda a: np.expand_dims(a, 2), [R((5, 1, 4))]),
    "roll": (lambda a: np.roll(a, 2, axis=1), [MAT]),
    "roll flat": (lambda a: np.roll(a, 3), [MAT]),
    "triu k": (lambda a: np.triu(a, k=2), [R((5, 5))]),
    "tril k": (lambda a: np.tril(a, k=2), [R((5, 5))]),
    "clip keywords": (lambda a: np.clip(a, a_min=0.1, a_max=1.1), [D(5, 5)]),
    "where": (lambda a, b: np.where(MASK, a, b), [MAT, R((4, 5))]),
    "diag of a matrix": (np.diag, [R((5, 5))]),
    "diagonal last axes": (lambda a: np.diagonal(a, axis1=-1, axis2=-2), [R((3, 4, 4))]),
    "trace offset wide": (lambda a: np.trace(a, offset=3), [R((4, 5))]),
    "trace offset tall": (lambda a: np.trace(a, offset=-2), [R((5, 4))]),
    "trace offset 4-d": (lambda a: np.trace(a, offset=1), [R((4, 5, 2, 3))]),
    "split first part": (lambda a: np.split(a, 2)[0], [R(10)]),
    "nan_to_num": (lambda a: np.sum(np.sin(np.nan_to_num(
        a + np.array([0.0, np.nan, np.inf, -np.inf])))), [VEC4]),
    "int64 of a column as indices": (lambda w: w[:, :-1][np.int64(
        adsim.value(w[:, -1]) * 0 + np.array([0.0, 1.0, 3.0, 1.0]))].sum(), [MAT]),
    "astype float64": (lambda a: np.sum(np.sin(a.astype("float64"))), [VEC4]),
    # joining
    "concatenate constant first": (lambda a: np.concatenate((CUBE, a)), [R((2, 4, 5))]),
    "concatenate around": (lambda a: np.concatenate((CUBE, a, CUBE)), [R((3, 4, 5))]),
    "concatenate axis keyword": (lambda a: np.concatenate((CUBE, a, CUBE), axis=1),
                                 [R((3, 4, 5))]),
    "concatenate axis positional": (lambda a: np.concatenate((CUBE, a, CUBE), 1),
                                    [R((3, 4, 5))]),
    "append to a list": (lambda a, b: np.append([a[0], a[1], a[2]], b), [R(3), SCALAR]),
    "append to an array": (lambda a, b: np.append(a, b), [R(3), SCALAR]),
    # arrays made of active values
    "array of scalars": (lambda x: np.array([x, x * 1.0, x + 2.5]), [SCALAR]),
    "array 2-d of scalars": (lambda x: np.array([[x, x * 1.0, x + 2.5],
                                                 [x ** 2, x, x / 2.0]]), [SCALAR]),
    "array of scalars, fan-out": (lambda x: (lambda A: A + A)(np.array([[x, x * 1.0],
                                                                       [x ** 2, x / 2.0]])),
                                  [SCALAR]),
    "array of a scalar": (lambda x: np.array(x), [SCALAR]),
    "array of arrays": (lambda a: np.array([a, a]), [CONST]),
    "array 2-d of arrays": (lambda a: np.array([[2 * a, a + 1], [a, a]]), [CONST]),
    "r_ one": (lambda a: np.r_[a], [CONST]),
    "r_ twice": (lambda a: np.r_[a, a], [CONST]),
    "r_ with a constant": (lambda a: np.r_[a, CONST, a], [CONST]),
    "r_ with a slice": (lambda a: np.r_[a, VEC10, 1:10], [R(10)]),
    "c_ with a constant": (lambda a: np.c_[a, CONST, a], [CONST]),
    "linspace 5": (lambda a, b: np.linspace(a, b, 5), [SCALAR, np.asarray(-3.4)]),
    "linspace 1": (lambda a, b: np.linspace(a, b, 1), [SCALAR, np.asarray(3.4)]),
    "linspace 0": (lambda a, b: np.append(np.linspace(a, b, 0), a * b), [SCALAR, np.asarray(3.4)]),
    "linspace equal ends": (lambda a, b: np.linspace(a, b, 5), [SCALAR, SCALAR]),
    # ties where the tied elements are the same value
    "max of equal values": (lambda x: np.max(np.array([x, x])), [np.asarray(1.0)]),
    "max axis of equal values": (lambda x: np.max(np.array([[x, x], [x, 0.5]]), axis=1),
                                 [np.asarray(-1.0)]),
    "min three-way equal": (lambda x: np.min(np.array([[x, x, x], [x, 0.5, 0.5],
                                                       [0.5, 0.5, 0.5], [x, x, 0.5]]), axis=0),
                            [np.asarray(1.0)]),
    "maximum of x and x": (lambda x: np.maximum(x, x), [np.asarray(1.0)]),
    "maximum of arrays of x": (lambda x: np.maximum(np.array([x, x, 0.5]),
                                                    np.array([[x, 0.5, x], [x, x, 0.5]])),
                               [np.asarray(2.0)]),
    # -- test_systematic.py: shapes and joins
    "transpose axes 021": (lambda a: np.transpose(a, [0, 2, 1]), [R((2, 3, 4))]),
    "transpose axes 201": (lambda a: np.transpose(a, (2, 0, 1)), [R((2, 3, 4))]),
    "transpose default": (np.transpose, [R((2, 3, 4))]),
    "repeat 0 times": (lambda a: np.concatenate([np.repeat(a, 0, axis=1), a], axis=1),
                       [R((2, 3, 4))]),
    "repeat flat": (lambda a: np.repeat(a, 2), [R((3, 1))]),
    "repeat axis 0": (lambda a: np.repeat(a, 2, axis=0), [R((3, 1))]),
    "diff n=2 axis 1": (lambda a: np.diff(a, n=2, axis=1), [R((5, 5, 5))]),
    "diff of one element": (lambda a: np.concatenate([np.diff(a, axis=0), a]), [R(1)]),
    "diff axis 1 of a column": (lambda a: np.concatenate([np.diff(a, axis=1), a], axis=1),
                                 [R((3, 1))]),
    "tile 4-d": (lambda a: np.tile(a, (1, 4, 1, 2)), [R((2, 1, 3, 1))]),
    "tile more reps than dims": (lambda a: np.tile(a, (3, 2, 1)), [R((1, 2))]),
    "tile an integer": (lambda a: np.tile(a, 2), [R(1)]),
    "kron": (np.kron, [R((3, 3)), R((2, 2))]),
    "inner scalars": (np.inner, [SCALAR, np.asarray(0.3)]),
    "inner 2-d": (np.inner, [R((2, 3)), R((4, 3))]),
    "inner 1-d 2-d": (np.inner, [R(3), R((4, 3))]),
    "dot 3-d 3-d": (np.dot, [R((2, 2, 3)), R((2, 3, 4))]),
    "dot scalar 3-d": (np.dot, [SCALAR, R((2, 3, 4))]),
    "matmul 1-d 3-d": (np.matmul, [R(3), R((2, 3, 4))]),
    "matmul 3-d 2-d": (np.matmul, [R((2, 2, 3)), R((3, 4))]),
    "matmul 1-d 1-d": (np.matmul, [R(3), R(3)]),
    "tensordot axes lists": (lambda a, b: np.tensordot(a, b, axes=[(1,), (0,)]),
                             [R((2, 3, 2)), R((3, 4, 2))]),
    "tensordot two axes swapped": (lambda a, b: np.tensordot(a, b, axes=[(1, 0), (2, 1)]),
                                   [R((2, 3, 4)), R((2, 2, 3, 4))]),
    "tensordot axes=1": (lambda a, b: np.tensordot(a, b, axes=1), [R((4, 2, 2)), R((2, 2, 4))]),
    "tensordot axes=0": (lambda a, b: np.tensordot(a, b, axes=0), [R(4), np.asarray(0.3)]),
    "tensordot negative axis": (lambda a, b: np.tensordot(a, b, axes=[[-1], [0]]),
                                [R((2, 6)), R((6, 3))]),
    "maximum broadcast": (lambda a: np.maximum(a[:4].reshape(1, 4), a[4:].reshape(3, 4)),
                          [D(16)]),
    "minimum broadcast": (lambda a: np.minimum(a[:12].reshape(3, 4), a[12:]), [D(13)]),
    "fmax broadcast": (lambda a: np.fmax(a[:1], a[1:].reshape(1, 4)), [D(5)]),
    "fmin broadcast": (lambda a: np.fmin(a[:12].reshape(3, 4), a[12:]), [D(16)]),
    "sort one": (np.sort, [R(1)]),
    "sort": (np.sort, [D(7)]),
    "partition kth 0": (lambda a: np.partition(a, 0), [D(7)]),
    "partition kth 3": (lambda a: np.partition(a, 3), [D(14)]),
    "partition kth 6": (lambda a: np.partition(a, 6), [D(7)]),
    "atleast_1d scalar": (np.atleast_1d, [SCALAR]),
    "atleast_2d 1-d": (np.atleast_2d, [R(7)]),
    "atleast_3d 2-d": (np.atleast_3d, [R((2, 4))]),
    "atleast_3d 4-d": (np.atleast_3d, [R((2, 4, 3, 5))]),
    "einsum transpose": (lambda a: np.einsum("ij->ji", a), [R((3, 4))]),
    "einsum matmul": (lambda a, b: np.einsum("ij,jk->ik", a, b), [R((2, 3)), R((3, 4))]),
    "einsum broadcast": (lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
                         [R((2, 2, 3)), R((3, 4))]),
    "einsum covsum": (lambda a, b: np.einsum("ijk,lji->lki", a, b), [R((3, 4, 4)), R((4, 4, 3))]),
    "einsum ellipsis lead": (lambda a, b: np.einsum("...jk,...lj->...lk", a, b),
                             [R((3, 4, 4)), R((4, 4))]),
    "einsum ellipsis only": (lambda a, b: np.einsum("...,...->...", a, b),
                             [R((3, 4, 4)), R((4, 4))]),
    "einsum ellipsis tail": (lambda a, b: np.einsum("jk...,lj...->lk...", a, b),
                             [R((3, 2, 4)), R((2, 3))]),
    "einsum ellipsis centre": (lambda a, b: np.einsum("j...k,lj...->lk...", a, b),
                               [R((2, 2, 2)), R((2, 2, 2))]),
    "einsum three operands": (lambda a, b, c: np.einsum("ijk,lji,lli->lki", a, b, c),
                              [R((3, 4, 4)), R((4, 4, 3)), R((4, 4, 3))]),
    "einsum operand lists": (lambda a, b: np.einsum(a, [Ellipsis, 0, 1], b, [Ellipsis, 1, 2],
                                                    [Ellipsis, 0, 2]), [R((2, 2, 3)), R((3, 4))]),
    "einsum operand list transpose": (lambda a: np.einsum(a, (0, 1), (1, 0)), [R((3, 4))]),
    "einsum operand lists, three": (lambda a, b, c: np.einsum(a, [0, 1, 2], b, [3, 1, 0], c,
                                                              [3, 3, 0], [3, 2, 0]),
                                    [R((3, 4, 4)), R((4, 4, 3)), R((4, 4, 3))]),
    "trace offset 3-d": (lambda a: np.trace(a, offset=-1), [R((3, 4, 5))]),
    "diag k": (lambda a: np.diag(a, k=-1), [R((5, 5))]),
    "diag of a vector k": (lambda a: np.diag(a, k=1), [R(5)]),
    "tril 3-d": (lambda a: np.tril(a, k=-1), [R((5, 5, 4))]),
    "triu 3-d": (lambda a: np.triu(a, k=1), [R((5, 5, 4))]),
    "swapaxes": (lambda a: np.swapaxes(a, 0, 2), [R((3, 4, 5))]),
    "rollaxis": (lambda a: np.rollaxis(a, 2, 1), [R((2, 3, 4))]),
    "rollaxis to the end": (lambda a: np.rollaxis(a, 0, 3), [R((2, 3, 4))]),
    "cross": (np.cross, [R((3, 3)), R((3, 3))]),
    "cross axisa axisb axisc": (lambda a, b: np.cross(a, b, axisa=0, axisb=1, axisc=0),
                                [R((3, 3)), R((3, 3))]),
    "cross axis": (lambda a, b: np.cross(a, b, axis=0), [R((3, 3)), R((3, 3))]),
    "vsplit": (lambda a: np.vsplit(a, [1, 2])[1], [R((4, 8))]),
    "hsplit": (lambda a: np.concatenate(np.hsplit(a, 4), axis=0), [R((4, 8))]),
    "dsplit": (lambda a: np.dsplit(a, 2)[1], [R((4, 4, 4))]),
    "split sections": (lambda a: np.split(a, [1, 2], axis=2)[2], [R((4, 4, 4))]),
    "split one": (lambda a: np.split(a, 1, axis=0)[0], [R(7)]),
    "array_split uneven": (lambda a: np.array_split(a, 3)[2], [R(7)]),
    "array_split sections": (lambda a: np.array_split(a, [3, 5], axis=1)[1], [R((7, 7))]),
    "concatenate a list": (lambda a, b: np.concatenate([a, b], axis=0), [R(1), R(3)]),
    "concatenate 3-d axis 2": (lambda a, b: np.concatenate((a, b), axis=2),
                               [R((2, 2, 2)), R((2, 2, 2))]),
    "vstack 1-d": (lambda a, b: np.vstack((a, b)), [R(2), R(2)]),
    "vstack one array": (np.vstack, [R((2, 3))]),
    "vstack 3-d": (lambda a, b: np.vstack((a, b)), [R((2, 3, 4)), R((5, 3, 4))]),
    "hstack 1-d": (lambda a, b: np.hstack((a, b)), [R(2), R(2)]),
    "hstack 3-d": (lambda a, b: np.hstack((a, b)), [R((2, 1, 4)), R((2, 5, 4))]),
    "stack axis 1": (lambda a, b: np.stack((a, b), axis=1), [R(2), R(2)]),
    "stack one": (lambda a: np.stack((a,)), [R(2)]),
    "column_stack 1-d": (lambda a, b: np.column_stack((a, b)), [R(2), R(2)]),
    "column_stack 2-d": (lambda a, b: np.column_stack((a, b)), [R((2, 2)), R((2, 2))]),
    "select": (lambda a, b: np.select([CONST34 > 0, CONST34 < -0.5], [a, b], default=1.1),
               [R((3, 4)), R((3, 4))]),
    # -- test_linalg.py
    "inv": (np.linalg.inv, [R((5, 5)) + 5.0 * np.eye(5)]),
    "inv 3-d": (np.linalg.inv, [R((3, 3, 3)) + 5.0 * np.eye(3)]),
    "inv 4-d": (np.linalg.inv, [R((2, 2, 3, 3)) + 5.0 * np.eye(3)]),
    "solve matrix": (lambda a: np.linalg.solve(a, np.arange(15.0).reshape(5, 3)),
                     [R((5, 5)) + 10.0 * np.eye(5)]),
    "solve vector": (lambda a: np.linalg.solve(a, np.arange(5.0)), [R((5, 5)) + 10.0 * np.eye(5)]),
    "solve right-hand side": (lambda b: np.linalg.solve(CONST44 + 4.0 * np.eye(4), b),
                              [R((4, 3))]),
    "solve stack": (lambda a, b: np.linalg.solve(a, b), [R((3, 4, 4)) + 5.0 * np.eye(4),
                                                         R((3, 4, 2))]),
    "det": (np.linalg.det, [R((5, 5))]),
    "det 3-d": (np.linalg.det, [R((3, 3, 3))]),
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], [R((5, 5))]),
    "slogdet of -A": (lambda a: np.linalg.slogdet(-a)[1], [R((5, 5))]),
    "slogdet 3-d": (lambda a: np.sum(np.linalg.slogdet(a)[1]),
                    [np.stack([_psd(4) for _ in range(3)])]),
    "norm vector": (np.linalg.norm, [R(6)]),
    "norm frobenius": (np.linalg.norm, [R((5, 4))]),
    "norm frobenius axis": (lambda a: np.linalg.norm(a, axis=(0, 1)), [R((4, 3, 2))]),
    "norm vector ord 3": (lambda a: np.linalg.norm(a, ord=3), [R(6)]),
    "norm vector ord 4": (lambda a: np.linalg.norm(a, ord=4), [R(6)]),
    "norm axis 1": (lambda a: np.linalg.norm(a, axis=1), [R((4, 3, 2))]),
    "norm nuclear": (lambda a: np.linalg.norm(a, ord="nuc"), [R((5, 4))]),
    "norm nuclear axis": (lambda a: np.linalg.norm(a, ord="nuc", axis=(0, 1)), [R((5, 4, 3))]),
    "norm 2 of a matrix": (lambda a: np.linalg.norm(a, ord=2), [R((5, 4))]),
    "eigh": (lambda a: (lambda w, v: np.sum(w) + np.sum(v ** 2 * np.arange(5.0)))(
        *np.linalg.eigh(_sym(a))), [_psd(5)]),
    "eigh upper": (lambda a: (lambda w, v: w + v[0] ** 2)(*np.linalg.eigh(_sym(a), "U")),
                   [_psd(4)]),
    "eigh stack": (lambda a: np.linalg.eigh(_sym(a))[0],
                   [np.stack([_psd(3) for _ in range(3)]).reshape(3, 3, 3)]),
    "eig of a real matrix": (lambda a: np.real(np.linalg.eigvals(a)), [_psd(4) + 0.2 * R((4, 4))]),
    "cholesky": (lambda a: np.linalg.cholesky(_sym(a)), [_psd(4)]),
    "cholesky stack": (lambda a: np.linalg.cholesky(_sym(a)), [np.stack([_psd(3), _psd(3)])]),
    "cholesky sample": (lambda a: np.linalg.norm(np.linalg.cholesky(_sym(a)) @ np.arange(4.0)),
                        [_psd(4)]),
    "svd wide": (lambda a: (lambda u, s, v: np.sum(np.abs(u)) + np.sum(s) + np.sum(np.abs(v)))(
        *np.linalg.svd(a, full_matrices=False)), [R((3, 5))]),
    "svd tall stack": (lambda a: (lambda u, s, v: np.sum(np.abs(u)) + np.sum(s) + np.sum(
        np.abs(v)))(*np.linalg.svd(a, full_matrices=False)), [R((2, 5, 3))]),
    "svd values": (lambda a: np.linalg.svd(a, compute_uv=False), [R((5, 3))]),
    "pinv": (np.linalg.pinv, [R((5, 3))]),
    "sqrtm": (lambda a: sla.sqrtm(_sym(a)), [_psd(4)]),
    "solve_triangular lower": (lambda a: sla.solve_triangular(a, np.arange(5.0), lower=True),
                               [R((5, 5)) + 10.0 * np.eye(5)]),
    "solve_triangular trans T": (lambda a: sla.solve_triangular(a, np.arange(5.0), trans="T"),
                                 [R((5, 5)) + 10.0 * np.eye(5)]),
    "solve_triangular trans 2": (lambda b: sla.solve_triangular(
        np.triu(CONST44) + 5.0 * np.eye(4), b, trans=2), [R((4, 3))]),
    "solve_triangular trans C lower": (lambda a: sla.solve_triangular(a, np.arange(5.0),
                                                                      trans="C", lower=True),
                                       [R((5, 5)) + 10.0 * np.eye(5)]),
    "solve_sylvester": (lambda a, b: sla.solve_sylvester(a, b, np.arange(9.0).reshape(3, 3)),
                        [_psd(3), _psd(3)]),
    "cho_solve": (lambda a: sla.cho_solve(sla.cho_factor(_sym(a)), np.arange(4.0)), [_psd(4)]),
    # -- test_scipy.py
    "norm.pdf": (lambda x, m, s: sst.norm.pdf(x, m, s), [R(4), R(4), R(4) ** 2 + 1.1]),
    "norm.cdf": (lambda x, m, s: sst.norm.cdf(x, m, s), [R(4), R(4), R(4) ** 2 + 1.1]),
    "norm.logpdf": (lambda x, m, s: sst.norm.logpdf(x, m, s), [R(4), R(4), R(4) ** 2 + 1.1]),
    "norm.logcdf": (lambda x, m, s: sst.norm.logcdf(x, m, s), [R(4), R(4), R(4) ** 2 + 1.1]),
    "norm.logpdf broadcast": (lambda x, m, s: sst.norm.logpdf(x, m, s),
                              [R((4, 3)), R((1, 3)), R((4, 1)) ** 2 + 1.1]),
    "norm.cdf broadcast": (lambda x, m, s: sst.norm.cdf(x, m, s),
                           [R((4, 3)), R((1, 3)), R((4, 1)) ** 2 + 1.1]),
    "t.pdf": (lambda x, df, m, s: sst.t.pdf(x, df, m, s),
              [R(4), R(4) ** 2 + 2.1, R(4), R(4) ** 2 + 2.1]),
    "t.logpdf broadcast": (lambda x, df, m, s: sst.t.logpdf(x, df, m, s),
                           [R((4, 3)), R((1, 3)) ** 2 + 2.1, R((4, 3)), R((4, 1)) ** 2 + 2.1]),
    "t.cdf": (lambda x, m: sst.t.cdf(x, 3.1, m, 2.0), [R(4), R(4)]),
    "t.logcdf": (lambda x, m: sst.t.logcdf(x, 3.1, m, 2.0), [R(4), R(4)]),
    "multivariate_normal.logpdf": (lambda x, m, c: sst.multivariate_normal.logpdf(x, m, _sym(c)),
                                   [R(4), R(4), _psd(4)]),
    "multivariate_normal.pdf": (lambda x, m, c: sst.multivariate_normal.pdf(x, m, _sym(c)),
                                [0.1 * R(3), 0.1 * R(3), _psd(3)]),
    "multivariate_normal.logpdf rows": (lambda x, m, c: sst.multivariate_normal.logpdf(
        x, m, _sym(c)), [R((5, 4)), R(4), _psd(4)]),
    "multivariate_normal.entropy": (lambda m, c: sst.multivariate_normal.entropy(m, _sym(c)),
                                    [R(4), _psd(4)]),
    "dirichlet.logpdf x": (lambda x: sst.dirichlet.logpdf(x / np.sum(x), [1.5, 2.0, 1.3, 1.8]),
                           [np.array([0.2, 0.3, 0.1, 0.4])]),
    "dirichlet.pdf alpha": (lambda a: sst.dirichlet.pdf(np.array([0.2, 0.3, 0.1, 0.4]), a),
                            [np.array([1.5, 2.0, 1.3, 1.8])]),
    "logsumexp": (lambda a: ssp.logsumexp(a), [R((3, 4))]),
    "logsumexp axis keepdims": (lambda a: ssp.logsumexp(a, axis=1, keepdims=True),
                                [R((4, 5, 6))]),
    "logsumexp b": (lambda a: ssp.logsumexp(a, axis=0, b=np.exp(CONST34)), [R((3, 4))]),
    "logsumexp of a scalar": (lambda a: ssp.logsumexp(a), [SCALAR]),
    "signal.convolve full": (lambda a, b: ssig.convolve(a, b, mode="full"), [R(5), R(3)]),
    "signal.convolve valid": (lambda a, b: ssig.convolve(a, b, mode="valid"), [R(6), R(4)]),
    "signal.convolve 2-d": (lambda a, b: ssig.convolve(a, b, mode="valid"),
                            [R((5, 4)), R((3, 2))]),
    "polygamma": (lambda a: ssp.polygamma(0, a), [R(4) ** 2 + 1.3]),
    "jn": (lambda a: ssp.jn(2, a), [R(4) ** 2 + 1.3]),
    "yn": (lambda a: ssp.yn(2, a), [R(4) ** 2 + 1.3]),
    "psi, digamma": (lambda a: ssp.psi(a) + ssp.digamma(a), [RNG.uniform(0.3, 2.0, 4)]),
    "gamma, rgamma": (lambda a: ssp.gamma(a) * ssp.rgamma(a + 0.5), [RNG.uniform(0.3, 2.0, 4)]),
    "gammaln, gammasgn": (lambda a: ssp.gammaln(a) + ssp.gammasgn(a), [RNG.uniform(0.3, 2.0, 4)]),
    "multigammaln": (lambda a: ssp.multigammaln(a, 3), [RNG.uniform(4.0, 5.0, (2, 3))]),
    "j0 j1 y0 y1": (lambda a: ssp.j0(a) + ssp.j1(a) * ssp.y0(a) - ssp.y1(a),
                    [RNG.uniform(0.2, 20.0, 4)]),
    "erf erfc": (lambda a: ssp.erf(a) * ssp.erfc(a), [RNG.uniform(-3.0, 3.0, 4)]),
    "erfinv": (ssp.erfinv, [RNG.uniform(-0.95, 0.95, 4)]),
    "erfcinv": (ssp.erfcinv, [RNG.uniform(0.05, 1.95, 4)]),
    "expit logit": (lambda a: ssp.expit(a) + ssp.logit(ssp.expit(a) * 0.5), [R(4)]),
    "beta.logpdf": (lambda x, a, b: sst.beta.logpdf(x, a, b),
                    [RNG.uniform(0.1, 0.9, 4), RNG.uniform(1.0, 3.0, 4), RNG.uniform(1.0, 3.0, 4)]),
    "gamma.logpdf": (lambda x, a, s: sst.gamma.logpdf(x, a, scale=s),
                     [RNG.uniform(0.5, 3.0, 4), RNG.uniform(1.0, 3.0, 4), RNG.uniform(0.5, 2.0, 4)]),
    "poisson.logpmf rate": (lambda m: sst.poisson.logpmf(np.array([0, 2, 3, 5]), m),
                            [RNG.uniform(1.0, 4.0, 4)]),
    "chi2.logpdf": (lambda x: sst.chi2.logpdf(x, 3.0), [RNG.uniform(0.5, 4.0, 4)]),
    "i0 i1 ive": (lambda a: ssp.i0(a) + ssp.i1(a) + ssp.ive(1.5, a), [RNG.uniform(0.2, 3.0, 4)]),
    "xlogy xlog1py": (lambda a, b: ssp.xlogy(a, b) + ssp.xlog1py(a, b),
                      [RNG.uniform(0.2, 3.0, 4), RNG.uniform(0.2, 3.0, 4)]),
    "softmax": (lambda a: ssp.softmax(a, axis=1), [R((3, 4))]),
    "log_softmax": (lambda a: ssp.log_softmax(a), [R(5)]),
    "betaln": (lambda a, b: ssp.betaln(a, b), [RNG.uniform(0.5, 3.0, 4), RNG.uniform(0.5, 3.0, 4)]),
    # -- test_binary_ops.py, test_scalar_ops.py: operators over shape pairs
    "power of a positive base": (lambda a, b: (np.abs(a) + 1.1) ** b, [R((3, 4)), R((1, 4))]),
    "power arg 0": (lambda a: np.power(a, 1.7), [RNG.uniform(1.0, 2.0, 4)]),
    "power arg 1": (lambda b: np.power(1.3, b), [RNG.uniform(0.0, 1.0, 4)]),
    "power of zero": (lambda b: np.power(0.0, b), [RNG.uniform(0.5, 1.0, 4)]),
    "divide with a gap": (lambda a, b: _gap(a) / _gap(b), [R(4), R((3, 4))]),
    "mod": (lambda a, b: _gap(a) % _gap(b), [RNG.uniform(-0.9, 0.9, (3, 4)),
                                             RNG.uniform(0.8, 1.2, (1, 4))]),
    "mod negative divisor": (lambda a, b: np.mod(a, b), [RNG.uniform(0.1, 0.9, 4),
                                                         RNG.uniform(-2.0, -1.1, 4)]),
    "remainder": (np.remainder, [RNG.uniform(-0.9, 0.9, 4), RNG.uniform(0.7, 1.9, 4)]),
    "true_divide negative": (np.true_divide, [R(4), RNG.uniform(-2.0, -0.3, 4)]),
    "add sub mul, scalar and matrix": (lambda a, b: a + b - a * b, [SCALAR, R((3, 4))]),
    "operators of a row and a matrix": (lambda a, b: operator.mul(a, b) - operator.sub(b, a),
                                        [R((1, 4)), R((3, 4))]),
    "logaddexp logaddexp2": (lambda a, b: np.logaddexp(a, b) + np.logaddexp2(a, b),
                             [R((3, 4)), R(4)]),
    "arctan2 hypot": (lambda a, b: np.arctan2(a, b) + np.hypot(a, b), [R(4), R(4)]),
    "reciprocal negative": (lambda a: np.reciprocal(a) + np.negative(a), [RNG.uniform(0.5, 1.0, 4)]),
    "sinc": (lambda a: 3.0 * np.sinc(a), [RNG.uniform(0.1, 10.0, 4)]),
    "abs sign at zero": (lambda a: 3.0 * np.abs(a) + np.sign(a), [np.array([1.1, -1.1])]),
    "ufunc outer": (lambda a, b: np.subtract.outer(a, b) * np.multiply.outer(a, b),
                    [R(3), R((2, 2))]),
    "ufunc outer of a list and a maximum": (lambda a: np.maximum.outer([0.0, 1.0], a),
                                            [D(4)]),
    "ldexp": (lambda a: np.ldexp(a, np.array([1, -2, 0, 5])), [R(4)]),
    # -- test_list.py, test_tuple.py: lists and tuples of active values
    "mean of a list": (lambda a, b: np.mean([a, b]), [SCALAR, np.asarray(-0.2)]),
    "sum of a list of arrays": (lambda a, b: np.sum([a, b], axis=0), [R(3), R(3)]),
    "list minus an array": (lambda a: [a[0], a[1]] - a, [R(2)]),
    "std of a list": (lambda a: np.std([a[0], a[1] ** 2, 3.0]), [R(2)]),
    "ravel of a list": (lambda a: np.ravel([a, 2 * a]), [R(3)]),
    "atleast_2d of a list": (lambda a: np.atleast_2d([a[0], a[1]]), [R(2)]),
}

WRITTEN = sorted(CASES)          # the rows below are generated: one replay test covers them

# test_systematic.py's statistics over every axis and keepdims
for _name, _f in (("sum", np.sum), ("mean", np.mean), ("var", np.var), ("std", np.std),
                  ("prod", np.prod), ("max", np.max), ("min", np.min)):
    for _axis in (None, 0, 1, -1):
        for _keep in (False, True):
            CASES[f"{_name} axis={_axis} keepdims={_keep}"] = (
                lambda a, f=_f, axis=_axis, keep=_keep: f(a, axis=axis, keepdims=keep),
                [D(3, 4) if _name in ("max", "min") else R((3, 4))])
for _ddof in (0, 1, 2):
    CASES[f"var ddof={_ddof} axis 1"] = (lambda a, d=_ddof: np.var(a, axis=1, ddof=d), [R((3, 4))])
    CASES[f"std ddof={_ddof} keepdims"] = (lambda a, d=_ddof: np.std(a, ddof=d, keepdims=True),
                                            [R((1, 3))])

# test_systematic.py's unary ufuncs, each on its domain
for _f, (_lo, _hi) in ((np.sin, (-2, 2)), (np.abs, (0.1, 4)), (np.absolute, (0.1, 4)),
                       (np.arccosh, (1.1, 4)), (np.arcsinh, (-0.9, 0.9)),
                       (np.arctanh, (-0.9, 0.9)), (np.ceil, (-1.4, 1.4)), (np.cos, (-2, 2)),
                       (np.cosh, (-2, 2)), (np.deg2rad, (-2, 2)), (np.degrees, (-2, 2)),
                       (np.exp, (-2, 2)), (np.exp2, (-2, 2)), (np.expm1, (-2, 2)),
                       (np.fabs, (0.1, 2)), (np.floor, (-1.4, 1.4)), (np.log, (0.2, 2)),
                       (np.log10, (0.2, 2)), (np.log1p, (0.2, 2)), (np.log2, (0.2, 2)),
                       (np.rad2deg, (-2, 2)), (np.radians, (-2, 2)), (np.sign, (0.1, 2)),
                       (np.sinh, (-2, 2)), (np.sqrt, (1, 3)), (np.square, (-2, 2)),
                       (np.tan, (-1.1, 1.1)), (np.tanh, (-2, 2)), (np.real, (-2, 2)),
                       (np.real_if_close, (-2, 2)), (np.imag, (-2, 2)), (np.conj, (-2, 2)),
                       (np.angle, (0.1, 2)), (np.arccos, (-0.9, 0.9)), (np.arcsin, (-0.9, 0.9)),
                       (np.arctan, (-2, 2))):
    CASES[f"ufunc {_f.__name__}"] = (lambda a, f=_f: 3.0 * f(a), [RNG.uniform(_lo, _hi, (2, 3))])


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_derivatives_in_every_mode(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6)


@pytest.mark.parametrize("name", WRITTEN)
def test_a_tape_replays_at_a_moved_point_as_a_new_recording(name):
    f, xs = CASES[name]
    tape = adsim.record(f, *xs)
    rng = np.random.default_rng(7)
    moved = [x + 1e-4 * rng.standard_normal(np.shape(x)) for x in xs]   # same branches
    w = rng.standard_normal(np.shape(f(*xs)))
    value, adjoint = tape.vjp(moved, w)
    fresh_value, fresh_adjoint = adsim.vjp(f, tuple(moved), w)
    np.testing.assert_allclose(value, f(*moved), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(flat(per_input(adjoint, len(xs))), flat(fresh_adjoint),
                               rtol=1e-10, atol=1e-12)


def test_the_idioms_of_the_graph_wrapper_logic_and_container_tests():
    """Derivatives of derivatives (a third one, a gradient taken inside the
    recorded function over a closure), the wrappers (hessian, hvp of a
    matrix input, vjp, jacobian, value_and_grad), comparisons and logic
    without derivative, and lists, tuples and dicts of parameters."""
    def fanout(x):
        return np.sin(np.sin(x) + np.sin(x))
    third = adsim.grad(adsim.grad(adsim.grad(fanout)))(0.4)
    c, s = np.cos(0.4), np.sin(0.4)
    u = 2.0 * s                                          # fanout = sin(u), u' = 2c
    want = -np.cos(u) * (2 * c) ** 3 - 3 * np.sin(u) * (2 * c) * (-2 * s) + np.cos(u) * (-2 * c)
    np.testing.assert_allclose(third, want, rtol=1e-12)
    np.testing.assert_allclose(adsim.grad(lambda x: x * adsim.grad(lambda y: x * y)(2.0))(1.5),
                               3.0, rtol=1e-15)
    H = np.arange(16.0).reshape(4, 4) / 7.0
    np.testing.assert_allclose(adsim.hessian(lambda x: x @ H @ x)(VEC4), H + H.T, rtol=1e-14)
    A, V = R((3, 2)), R((3, 2))
    np.testing.assert_allclose(adsim.hvp(lambda a: np.sum(np.sin(a)), A, V), -np.sin(A) * V,
                               rtol=1e-14)
    J = adsim.jacobian(lambda a: np.roll(np.sin(a), 1))(A)
    _, (g,) = adsim.vjp(lambda a: np.roll(np.sin(a), 1), (A,), V)
    np.testing.assert_allclose(g, np.tensordot(V, J, axes=2), rtol=1e-14)
    value, g = adsim.value_and_grad(lambda x: 3.0 * x ** 3.2)(1.7)
    np.testing.assert_allclose([value, g], [3.0 * 1.7 ** 3.2, 9.6 * 1.7 ** 2.2], rtol=1e-14)
    for compare in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                    operator.ne):
        np.testing.assert_array_equal(adsim.grad(lambda x, y, c=compare: np.sum(c(x, y)) + 0.0)(
            VEC4, VEC4[::-1]), np.zeros(4))
    g = adsim.grad(lambda x: np.sum(np.where(np.logical_and(x > 0, ~(x > 1)), x ** 2, 0.0)))(VEC4)
    np.testing.assert_allclose(g, np.where((VEC4 > 0) & (VEC4 <= 1), 2 * VEC4, 0.0))
    params = {"w": [VEC4, (1.5, VEC5)], "b": 0.5}
    g = adsim.grad(lambda p: p["b"] * np.sum(p["w"][0] * p["w"][1][0]) + np.sum(
        np.sin(p["w"][1][1])))(params)
    np.testing.assert_allclose(g["w"][0], 0.5 * 1.5 * np.ones(4), rtol=1e-15)
    np.testing.assert_allclose(g["w"][1][0], 0.5 * np.sum(VEC4), rtol=1e-14)
    np.testing.assert_allclose(g["w"][1][1], np.cos(VEC5), rtol=1e-15)
    np.testing.assert_allclose(g["b"], 1.5 * np.sum(VEC4), rtol=1e-14)
