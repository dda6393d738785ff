"""NumPy's conversions and memory layouts inside recorded functions.

``np.asarray``, ``np.ascontiguousarray``, ``np.array(..., copy=...)`` and
their relatives return the array itself, a view or a copy exactly where
NumPy does, so a write into the result reaches the base exactly when it
does in NumPy; ``order="F"`` and transposes lay arrays out in memory as
NumPy does, which decides what ``ravel(order="K")`` gives and which
reshapes are views. Every program below runs on NumPy and on adsim: the
values, what each conversion returned (the array itself or not, shape,
contiguity, writeability) and the gradient against finite differences
must agree.
"""
import copy
import inspect

import numpy as np
import pytest
import scipy.special

import adsim as ad
from fdcheck import fd_jacobian

X = np.random.default_rng(7).uniform(0.5, 1.5, 24)
W = np.cos(np.arange(1.0, 25.0))


def observed(C):
    return (C.shape, bool(C.flags.c_contiguous), bool(C.flags.f_contiguous),
            bool(C.flags.writeable))


def check_like_numpy(f, x):
    """f(x, seen) on NumPy and recorded by adsim: what ``seen`` collects, the
    value and the gradient (against central differences) agree."""
    seen_np, seen_ad = [], []
    want = f(x.copy(), seen_np)
    value, g = ad.value_and_grad(lambda x: f(x, seen_ad))(x)
    assert seen_ad == seen_np
    assert np.isclose(value, want, rtol=1e-13)
    fd = fd_jacobian(lambda x: f(x, []), [x]).reshape(x.shape)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


def source_id(func):
    return inspect.getsource(func).strip().split(": ", 1)[1].rstrip(",")


# ------------------------------------------------------------------ conversions

CONVERSIONS = [
    lambda A: np.ascontiguousarray(A[:, 1]),
    lambda A: np.ascontiguousarray(A.T),
    lambda A: np.ascontiguousarray(A),
    lambda A: np.ascontiguousarray(A[0]),
    lambda A: np.asfortranarray(A),
    lambda A: np.asfortranarray(A.T),
    lambda A: np.asarray(A.T, order="C"),
    lambda A: np.asarray(A, order="F"),
    lambda A: np.asarray(A.T),
    lambda A: np.asarray(A.T, order="A"),
    lambda A: np.asarray(A, None, "K"),
    lambda A: np.asarray(A, copy=True),
    lambda A: np.asarray(A[:, ::2], copy=True),
    lambda A: np.asarray(A, dtype=float),
    lambda A: np.asarray(A, copy=False),
    lambda A: np.array(A, copy=False),
    lambda A: np.array(A, float, copy=False),
    lambda A: np.array(A.T, copy=None),
    lambda A: np.array(A.T),
    lambda A: np.array(A[:, ::2], copy=None),
    lambda A: np.array(A, ndmin=3),
    lambda A: np.array(A, ndmin=3, copy=None),
    lambda A: np.array(A[0], ndmin=2, copy=False),
    lambda A: np.array(A, order="F"),
    lambda A: np.array(A.T, order="C", copy=None),
    lambda A: np.asanyarray(A[:, ::2]),
    lambda A: np.asanyarray(A.T, order="C"),
    lambda A: np.require(A.T),
    lambda A: np.require(A.T, requirements="C"),
    lambda A: np.require(A, None, ["F", "W"]),
    lambda A: np.require(A[0], requirements="O"),
    lambda A: np.require(np.broadcast_to(A[0], (2, 3)), requirements="W"),
    lambda A: A.T.astype(float),
    lambda A: A.T.astype(float, copy=False),
    lambda A: A.T.astype(float, order="C", copy=False),
    lambda A: A.astype(np.float64, order="F"),
    lambda A: np.copy(A.T),
    lambda A: np.copy(A, order="F"),
    lambda A: A.T.copy(),
    lambda A: A.T.copy(order="K"),
    lambda A: A.copy(order="F"),
    lambda A: copy.copy(A.T),
    lambda A: A.T.flatten(order="K"),
    lambda A: np.asarray([A[0], A[1]]),
    lambda A: np.array([A[1], A[0]], order="F"),
    lambda A: np.array([A[0], A[1]], ndmin=3),
    lambda A: np.asfortranarray([A[0], A[1]]),
    lambda A: np.array((A[:, 0], A[:, 2]), copy=None),
]


@pytest.mark.parametrize("conv", [pytest.param(c, id=source_id(c)) for c in CONVERSIONS])
def test_conversion_is_itself_a_view_or_a_copy_as_in_numpy(conv):
    """C = conv(A), then a write into C: it reaches A exactly where C is A
    or a view of it in NumPy."""
    def f(x, seen):
        A = (x[:6] ** 2).reshape(2, 3)
        C = conv(A)
        seen.append((C is A, observed(C)))
        C.flat[0] = 3.0 * x[5]
        K = C.ravel(order="K")              # C's elements in memory order
        return np.sum(A * W[:6].reshape(2, 3)) + np.sum(np.sin(K) * W[:K.size])
    check_like_numpy(f, X[:6])


NEEDS_A_COPY = [
    lambda A: np.array(A.T, order="C", copy=False),
    lambda A: np.asarray(A[:, 1], order="C", copy=False),
    lambda A: np.array([A[0], A[1]], copy=False),
    lambda A: np.asarray(A, dtype=int, copy=False),
    lambda A: np.require(A.T, requirements=["C", "F"]),
]


@pytest.mark.parametrize("conv", [pytest.param(c, id=source_id(c)) for c in NEEDS_A_COPY])
def test_copy_false_where_a_copy_is_needed_raises_numpys_error(conv):
    A = np.arange(1.0, 7.0).reshape(2, 3)
    with pytest.raises(ValueError) as expected:
        conv(A)
    with pytest.raises(ValueError) as got:
        ad.grad(lambda x: np.sum(conv(x.reshape(2, 3))))(A.ravel())
    assert str(got.value) == str(expected.value)


def test_ndmin_prepends_axes():
    def f(x, seen):
        B = np.array(x[:3], ndmin=2)
        C = np.array([[x[0]], [x[1]]], ndmin=3)
        seen.append((observed(B), observed(C)))
        return np.sum(B.T * np.array([[1.0, 2.0, 3.0]])) + \
            np.sum(C * np.arange(2.0).reshape(1, 2, 1))
    check_like_numpy(f, X[:3])


def test_astype_without_copy_is_the_array_itself():
    seen = []

    def f(x):
        y = x * 2.0
        seen.append(y.astype(float, copy=False) is y)
        seen.append(y.astype(np.float64) is y)
        return np.sum(y)
    ad.grad(f)(X[:3])
    assert seen == [True, False]


# ------------------------------------------------------------------ creation in Fortran order

def filled(Z):
    """Defined values in an np.empty array (NumPy's own hold whatever was in memory)."""
    Z[...] = 0.25
    return Z


CREATIONS = [
    lambda x: np.zeros((2, 3), order="F"),
    lambda x: np.zeros((2, 3)),
    lambda x: np.ones((2, 3), order="F"),
    lambda x: filled(np.empty((2, 3), order="F")),
    lambda x: np.full((2, 3), 0.5, order="F"),
    lambda x: np.full((2, 3), x[0], order="F"),
    lambda x: np.zeros_like(x.reshape(2, 3), order="F"),
    lambda x: np.zeros_like(x.reshape(3, 2).T),
    lambda x: np.ones_like(x.reshape(3, 2).T, order="C"),
    lambda x: np.full_like(x.reshape(3, 2).T, x[1]),
    lambda x: filled(np.empty_like(x.reshape(3, 2).T)),
    lambda x: filled(np.empty_like(np.ones((3, 2)).T)),
    lambda x: np.eye(2, 3, order="F"),
    lambda x: np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], order="F"),
]


@pytest.mark.parametrize("make", [pytest.param(m, id=source_id(m)) for m in CREATIONS])
def test_created_array_is_laid_out_as_numpy_lays_it_out(make):
    """Writes, a C-order reshape (a view only of a C-order array) and the
    memory order of ``ravel(order="K")``, as in NumPy."""
    def f(x, seen):
        Z = make(x)
        seen.append(observed(Z))
        Z[:, 1] = x[:2] ** 2
        v = Z.reshape(-1)
        v[0] = 3.0 * x[2]
        K = Z.ravel(order="K")
        return np.sum(np.sin(K) * W[:6]) + np.sum(Z * W[6:12].reshape(2, 3))
    check_like_numpy(f, X[:6])


# ------------------------------------------------------------------ layouts of results

LAID_OUT = {
    "transpose": lambda x: (x * 1.0).reshape(4, 6).T,
    "Fortran": lambda x: np.asfortranarray((x * 1.0).reshape(4, 6)),
    "fancy": lambda x: (x * 1.0).reshape(4, 6)[:, [0, 2, 3]],
    "strided": lambda x: (x * 1.0).reshape(4, 6)[:, ::2],
    "3-d": lambda x: (x * 1.0).reshape(2, 3, 4).transpose(2, 0, 1),
}
RESULTS = {
    "neg": lambda a: -a, "sin": np.sin, "times 2": lambda a: a * 2.0, "a + a": lambda a: a + a,
    "+ row": lambda a: a + np.arange(a.shape[-1]), "+ C const": lambda a: a + np.ones(a.shape),
    "+ F const": lambda a: a + np.asfortranarray(np.ones(a.shape)),
    "where": lambda a: np.where(a > 1.0, a, 0.0), "clip": lambda a: np.clip(a, 0.9, 1.2),
    "abs": np.abs, "maximum": lambda a: np.maximum(a, 1.0), "cumsum": lambda a: np.cumsum(a, 0),
    "cumprod": lambda a: np.cumprod(a, 0), "sort": lambda a: np.sort(a, 0),
    "partition": lambda a: np.partition(a, 1, axis=0), "sum": lambda a: a.sum(1),
    "mean keepdims": lambda a: np.mean(a, 0, keepdims=True) * a,
    "diff": lambda a: np.diff(a, axis=0),
    "concatenate": lambda a: np.concatenate([a, a]), "stack": lambda a: np.stack([a, a], axis=-1),
    "roll": lambda a: np.roll(a, 1, 0), "copy": np.copy, "positive": lambda a: +a,
    "matmul": lambda a: a @ np.ones((a.shape[-1], 3)),
    "select": lambda a: np.select([a > 1.0], [a]),
    "gradient": lambda a: np.gradient(a, axis=1),
    "cross": lambda a: np.cross(a[..., :3], np.ones(3)),
    "gammaln": scipy.special.gammaln, "xlogy": lambda a: scipy.special.xlogy(a, a),
    "maximum.accumulate": lambda a: np.maximum.accumulate(a, axis=0),
    "softmax": lambda a: scipy.special.softmax(a, axis=0),
    "einsum view": lambda a: np.einsum("...ij->...ji", a),
    "einsum product": lambda a: np.einsum("...j,jk->...k", a, np.ones((a.shape[-1], 2))),
    "einsum sum": lambda a: np.einsum("i...->...", a),
}


@pytest.mark.parametrize("result", RESULTS)
@pytest.mark.parametrize("kind", LAID_OUT)
def test_results_are_laid_out_as_numpys(kind, result):
    """A result of an array laid out otherwise than in C order: its memory
    order (ravel "K"), and which reshape and ascontiguousarray are views."""
    def f(x, seen):
        r = RESULTS[result](LAID_OUT[kind](x))
        seen.append(observed(r))
        K = r.ravel(order="K")[:5]
        K = np.sum(K * np.arange(1.0, K.size + 1.0))
        v = r.reshape(-1)
        v[0] = 7.0 * x[0]
        c = np.ascontiguousarray(r)
        c[..., 0] = 3.0
        return K + np.sum(np.sin(r) * np.arange(r.size).reshape(r.shape))
    check_like_numpy(f, X)


@pytest.mark.parametrize("kind", LAID_OUT)
def test_round_is_laid_out_as_numpys(kind):
    """np.round(a, 2) is made in Fortran order for a Fortran-order array,
    else in C order (values only: its derivative is zero where it exists)."""
    def f(x, seen):
        r = np.round(LAID_OUT[kind](x), 2)
        seen.append(observed(r))
        v = r.reshape(-1)
        v[0] = 7.0
        return np.sum(r.ravel(order="K")[:5] * np.arange(1.0, 6.0)) + np.sum(r * r)
    seen_np, seen_ad = [], []
    want = f(X.copy(), seen_np)
    assert np.isclose(ad.value_and_grad(lambda x: f(x, seen_ad))(X)[0], want, rtol=1e-13)
    assert seen_ad == seen_np


def test_einsum_diagonal_is_a_writeable_view():
    """np.einsum('ii->i', A) is a view of A's diagonal that can be written, as NumPy's."""
    def f(x, seen):
        A = (x[:9] * 1.0).reshape(3, 3)
        d = np.einsum("ii->i", A)
        seen.append(observed(d))
        d[1] = x[0] ** 2
        A[0, 0] = 3.0 * x[1]
        return np.sum(A * np.arange(9.0).reshape(3, 3)) + np.sum(d * np.array([1.0, 2.0, 3.0]))
    check_like_numpy(f, X[:9])


def test_diag_of_a_matrix_is_a_read_only_view():
    """np.diag(A) sees later writes into A, as NumPy's (a view, not a copy)."""
    def f(x, seen):
        A = (x[:9] * 1.0).reshape(3, 3)
        d = np.diag(A, 1)
        seen.append(observed(d))
        A[0, 1] = x[0] ** 2
        return np.sum(d * np.array([1.0, 2.0]))
    check_like_numpy(f, X[:9])


def test_a_scalar_converts_to_a_new_array():
    """x[0] and np.sum(x) are NumPy scalars: np.asarray and its relatives
    make new arrays of them (copy=False raises), so writes into those leave
    the scalar alone."""
    def f(x, seen):
        s = x[0] * 1.0
        a = np.asarray(s)
        a[...] = 5.0
        t = np.sum(x)
        b = np.ascontiguousarray(t)
        b[0] = 7.0 * x[1]
        seen.append((observed(a), observed(b)))
        return s * 2.0 + t * b[0]
    check_like_numpy(f, X[:3])
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        ad.grad(lambda x: np.array(x[0], copy=False))(X[:3])
