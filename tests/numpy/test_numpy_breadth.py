"""NumPy functions and ndarray attributes added for breadth: each case's
value against NumPy's and its derivatives against central differences in
forward mode, reverse mode and Hessian-vector products (fdcheck.check_tape);
then the behaviours NumPy defines around them (views, warnings, in-place
methods, errors that say what to do)."""
import numpy as np
import pytest

import adsim as ad
from fdcheck import check_tape, distinct, fd_jacobian

RNG = np.random.default_rng(20)
V6 = distinct(RNG, (6,))                 # values 0.08 apart: orders and kinks stay put
V12 = distinct(RNG, (12,))
M34 = distinct(RNG, (3, 4))
CUBE = distinct(RNG, (2, 3, 4))
STACK = RNG.standard_normal((2, 3, 3))   # a stack of two 3x3 matrices
NANS = np.array([1.0, np.nan, 1.0, 1.0, np.nan, 1.0])
C32 = np.arange(6.0).reshape(3, 2)


def _spd(x):
    """A stack of symmetric positive definite matrices depending on x."""
    return x @ np.swapaxes(x, -1, -2) + 3.0 * np.eye(x.shape[-1])


CASES = {
    # products of N-d operands
    "dot N-d M-d": (lambda a: np.dot(a, np.arange(40.0).reshape(5, 4, 2) / 40), CUBE),
    "dot N-d 1-d": (lambda a: np.dot(a, a[0, 0]), CUBE),
    "dot 1-d N-d": (lambda a: np.dot(a[0, :, 0], a), CUBE),
    "inner N-d": (lambda a: np.inner(a, a[1]), CUBE),
    "inner scalar": (lambda a: np.inner(a[0, 0, 0], a[1]), CUBE),
    # quantiles over several axes, NaN-skipping ones
    "median tuple axis": (lambda a: np.median(a, axis=(0, 2)), CUBE),
    "median tuple keepdims": (lambda a: np.median(a, axis=(0, 2), keepdims=True), CUBE),
    "quantile tuple axis": (lambda a: np.quantile(a, [0.1, 0.75], axis=(1, 2)), CUBE),
    "percentile tuple keepdims": (lambda a: np.percentile(a, [[30.0], [80.0]], axis=(-1, 0),
                                                          keepdims=True), CUBE),
    "nanmedian": (lambda a: np.nanmedian(a * NANS, axis=1), V12.reshape(2, 6)),
    "nanquantile": (lambda a: np.nanquantile(a * NANS, [0.2, 0.9]), V6),
    "nanpercentile axis": (lambda a: np.nanpercentile((a.reshape(2, 6) * NANS).T, 40, axis=0),
                           V12),
    # reshapes in other orders
    "reshape F": (lambda a: a.reshape((4, 6), order="F") * np.arange(24.0).reshape(4, 6), CUBE),
    "reshape A": (lambda a: np.reshape(a.transpose(), (6, 4), order="A") ** 2, CUBE),
    "ravel F": (lambda a: np.ravel(a, order="F") * np.arange(24.0), CUBE),
    "ravel K": (lambda a: np.ravel(a.transpose(2, 0, 1), order="K") ** 2, CUBE),
    "flatten F": (lambda a: a.flatten("F")[::-1] * np.arange(24.0), CUBE),
    "reshape array shape": (lambda a: a.reshape(np.array([4, 6])) ** 2, CUBE),
    # new functions
    "ptp": (lambda a: np.ptp(a, axis=1) + np.ptp(a, axis=(0, 2), keepdims=True).ravel()[0], CUBE),
    "nanmax nanmin": (lambda a: np.nanmax(a * NANS) + np.nanmin(a.reshape(2, 3) * NANS.reshape(
        2, 3), axis=1), V6),
    "nanprod": (lambda a: np.nanprod(a * NANS) + np.nanprod(a.reshape(3, 2) * NANS.reshape(3, 2),
                                                            axis=0), V6),
    "nansum nanmean": (lambda a: np.nansum(a * NANS) + np.nanmean(a.reshape(2, 3) * NANS.reshape(
        2, 3), axis=1, keepdims=True), V6),
    "nanvar nanstd": (lambda a: np.concatenate([np.atleast_1d(np.nanvar(a[:6] * NANS)),
                                                np.nanstd(a.reshape(2, 6) * NANS, axis=1, ddof=1)]),
                      V12),
    "nanvar keepdims": (lambda a: np.nanvar(a.reshape(2, 6) * NANS, axis=(0, 1), keepdims=True),
                        V12),
    "nancumsum nancumprod": (lambda a: np.nancumsum(a * NANS) + np.nancumprod(a * NANS), V6),
    "nanargmax gather": (lambda a: a[np.nanargmax(a * NANS)] * a[np.nanargmin(a * NANS)], V6),
    "cov": (lambda a: np.cov(a.reshape(3, 4)), V12),
    "cov rowvar y ddof": (lambda a: np.cov(a.reshape(4, 3), a[:4] ** 2, rowvar=False, ddof=0), V12),
    "cov weights": (lambda a: np.cov(a.reshape(2, 6), fweights=[1, 2, 1, 3, 1, 1],
                                     aweights=a[:6] ** 2 + 0.5), V12),
    "cov of one variable": (lambda a: np.cov(a[:5]), V12),
    "vander": (lambda a: np.vander(a[:4]) + np.vander(a[:4], 4, increasing=True), V6),
    "vander N": (lambda a: np.vander(a, 3), V6),
    "polyval active list": (lambda a: np.polyval([a[0], 2.0, a[1]], 0.7)
                            + np.polyval([1.0, a[2]], a[3:]), V6),
    "piecewise": (lambda a: np.piecewise(a, [a < 0, a > 1.0], [lambda t: t ** 2, np.sin,
                                                                   lambda t: 3.0 * t]), V6),
    "piecewise values": (lambda a: np.piecewise(a, [a < 0], [-1.0, lambda t: t ** 3]), V6),
    "partition": (lambda a: np.partition(a, 3) * np.arange(6.0), V6),
    "partition axis": (lambda a: np.partition(a.reshape(3, 4), (1, 2), axis=1)
                       * np.arange(12.0).reshape(3, 4), V12),
    "argpartition gather": (lambda a: a[np.argpartition(a, 2)[:3]] ** 2, V6),
    "compress": (lambda a: np.compress([True, False, True], a.reshape(3, 4), axis=0), V12),
    "extract": (lambda a: np.extract(a > 0.3, a) ** 2, V6),
    "diagflat": (lambda a: np.diagflat(a[:3].reshape(3, 1), 1), V6),
    "dstack": (lambda a: np.dstack([a[:6].reshape(2, 3), a[6:].reshape(2, 3) ** 2]), V12),
    "block": (lambda a: np.block([[a[:4].reshape(2, 2), np.eye(2)], [a[4:8].reshape(2, 2),
                                                                     a[8:].reshape(2, 2)]]), V12),
    "insert delete resize": (lambda a: np.concatenate([np.insert(a, 2, [7.0, 8.0]),
                                                       np.delete(a, [0, 3]),
                                                       np.resize(a, 8)]), V6),
    "sliding_window_view": (lambda a: np.lib.stride_tricks.sliding_window_view(a, 3) ** 2, V6),
    "nan_to_num": (lambda a: np.nan_to_num(a * np.array([1, np.nan, np.inf, -np.inf, 1, 1]),
                                           posinf=5.0), V6),
    "copysign": (lambda a: np.copysign(a, [-1.0, 1.0, -0.0, 2.0, -3.0, 0.0])
                 + np.copysign(2.0, a) + np.copysign(a, a[::-1]), V6),
    "angle real": (lambda a: np.angle(a) + np.angle(a, deg=True) + a, V6),
    "i0": (lambda a: np.i0(a), V6),
    "real_if_close": (lambda a: np.real_if_close(a) ** 2, V6),
    "trim_zeros": (lambda a: np.concatenate([
        np.trim_zeros(a * [0.0, 1.0, 1.0, 0.0, 1.0, 0.0]), np.trim_zeros(a * [0.0, 1, 1, 1, 1, 1],
                                                                          "b"),
        np.trim_zeros((a.reshape(2, 3) * [[0.0, 0, 0], [0, 1, 1]]), axis=0).ravel()]), V6),
    "poly1d": (lambda a: np.poly1d(a[:3])(a[3:]) + np.poly1d([1.0, 2.0])(a[3:]), V6),
    "poly1d of a list": (lambda a: (np.poly1d([a[0], 1.0, a[1]]) * np.poly1d((a[2], a[3])))(a[3:])
                         + np.poly1d([a[4], 0.5]).deriv()(a[5])
                         + np.poly1d([a[0], 1.0], variable="s").integ()(a[:3]), V6),
    "nonzero count": (lambda a: a[np.nonzero(a > 0)] * np.count_nonzero(a > 0.5), V6),
    # stacked linear algebra (batch axes looped over the single-matrix rules)
    "stacked inv": (lambda x: np.linalg.inv(_spd(x)), STACK),
    "stacked solve vector": (lambda x: np.linalg.solve(_spd(x), np.array([1.0, 2.0, 3.0])), STACK),
    "stacked solve matrices": (lambda x: np.linalg.solve(_spd(x), x[..., :2]), STACK),
    "stacked solve broadcast": (lambda x: np.linalg.solve(_spd(x[0]), x), STACK),
    "stacked det slogdet": (lambda x: np.linalg.det(_spd(x)) + np.linalg.slogdet(_spd(x))[1]
                            * np.linalg.slogdet(x).sign, STACK),
    "stacked eigh": (lambda x: np.concatenate([np.linalg.eigh(_spd(x))[0].ravel(),
                                               (np.linalg.eigh(_spd(x))[1] ** 2).ravel()]), STACK),
    "stacked eigvalsh upper": (lambda x: np.linalg.eigvalsh(_spd(x) + np.triu(x), UPLO="U"),
                               STACK),
    "stacked cholesky": (lambda x: np.linalg.cholesky(_spd(x)), STACK),
    "stacked svd": (lambda x: np.linalg.svd(x)[1] + (np.linalg.svd(x)[0] ** 2).sum(-1)
                    + (np.linalg.svd(x)[2] ** 2).sum(-2), STACK),
    "stacked svd values": (lambda x: np.linalg.svd(x[..., :2, :], compute_uv=False), STACK),
    "stacked pinv": (lambda x: np.linalg.pinv(x[..., :2]), STACK),
    "stacked qr": (lambda x: np.linalg.qr(x).R ** 2 + np.linalg.qr(x).Q ** 2, STACK),
    "stacked matrix_power": (lambda x: np.linalg.matrix_power(x, 3)
                             + np.linalg.matrix_power(_spd(x), -1), STACK),
    "stacked norm 2 nuc": (lambda x: np.linalg.norm(x, 2, axis=(1, 2))
                           + np.linalg.norm(x, "nuc", axis=(-1, -2)), STACK),
    "norm -2 keepdims": (lambda x: np.linalg.norm(x, -2, axis=(0, 2), keepdims=True), STACK),
    # np.linalg: NumPy 2's names, multi_dot, tensors, cond
    "multi_dot": (lambda x: np.linalg.multi_dot([x[0, 0], x[0], x[1][:, :2], np.ones((2, 5))]),
                  STACK),
    "multi_dot plain factors": (lambda x: np.linalg.multi_dot([np.ones((2, 3)), np.eye(3), x[1],
                                                               np.ones((3, 4))]), STACK),
    "multi_dot three": (lambda x: np.linalg.multi_dot([x[0], x[1], x[0, :, 0]]), STACK),
    "tensorsolve": (lambda x: np.linalg.tensorsolve(_spd(x[0]).reshape(3, 3, 1), x[0, 0]), STACK),
    "tensorsolve axes": (lambda x: np.linalg.tensorsolve(_spd(x[0]).reshape(3, 1, 3), x[1, 0],
                                                         axes=(1,)), STACK),
    "tensorinv": (lambda x: np.linalg.tensorinv(_spd(x[0]).reshape(3, 1, 3), ind=2), STACK),
    "cond": (lambda x: np.linalg.cond(x) + np.linalg.cond(x, -2) + np.linalg.cond(x, "fro"),
             STACK),
    "cond 1": (lambda x: np.linalg.cond(x[0], 1) + np.linalg.cond(x[1], -np.inf), STACK),
}


if hasattr(np, "matvec"):            # NumPy >= 2.2: the array API's names
    CASES.update({
        "cumulative_sum prod": (lambda a: np.concatenate([
            np.cumulative_sum(a, include_initial=True),
            np.cumulative_prod(a.reshape(2, 3), axis=1).ravel()]), V6),
        "linalg.matmul outer vecdot": (lambda x: np.concatenate([
            np.linalg.matmul(x, x).ravel(), np.linalg.outer(x[0, 0], x[1, 1]).ravel(),
            np.linalg.vecdot(x, x[0]).ravel(), np.vecdot(x, x).ravel(),
            np.matvec(x, x[0, 0]).ravel(), np.vecmat(x[0, 0], x).ravel()]), STACK),
        "linalg.trace diagonal cross": (lambda x: np.concatenate([
            np.linalg.trace(x, offset=1), np.linalg.diagonal(x).ravel(),
            np.linalg.cross(x[0], x[1]).ravel(), np.linalg.matrix_transpose(x).ravel(),
            x.mT.ravel(), np.linalg.svdvals(x).ravel(), np.unstack(x, axis=1)[2].ravel()]),
            STACK),
        "linalg.vector_norm": (lambda x: np.concatenate([
            np.linalg.vector_norm(x, axis=(0, 2), ord=3, keepdims=True).ravel(),
            np.atleast_1d(np.linalg.vector_norm(x, ord=1)),
            np.linalg.vector_norm(x, axis=-1).ravel()]), STACK),
        "linalg.matrix_norm": (lambda x: np.linalg.matrix_norm(x, ord=np.inf)
                               + np.linalg.matrix_norm(x), STACK),
    })


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_derivatives_in_every_mode(name):
    f, x = CASES[name]
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x.copy()), rtol=1e-13, atol=1e-14)
    check_tape(f, [x], rtol=1e-6, atol=1e-7)


def check_functional(f, x):
    """The functional API (which records again where a replay leaves the
    recorded path) against NumPy and central differences: the Jacobian in
    both modes and Hessian-vector products of w.f."""
    want = f(x.copy())
    J = fd_jacobian(f, [x]).reshape(np.shape(want) + x.shape)
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(ad.jacobian(f, mode=mode)(x), J, rtol=1e-6, atol=1e-7)
    w = np.cos(np.arange(np.size(want)) + 1.0).reshape(np.shape(want))
    v = np.sin(np.arange(x.size) + 2.0).reshape(x.shape)
    g = ad.grad(lambda z: np.sum(w * f(z)))
    h = 1e-4
    np.testing.assert_allclose(ad.hvp(lambda z: np.sum(w * f(z)), x, v),
                               (g(x + h * v) - g(x - h * v)) / (2 * h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ad.value_and_grad(lambda z: np.sum(w * f(z)))(x)[0],
                               np.sum(w * want), rtol=1e-13)


def test_corrcoef():
    """Its diagonal is 1 clipped as NumPy clips it, a kink at every point, so
    a replay elsewhere may take the other side: the functional API records
    again there."""
    check_functional(lambda a: np.corrcoef(a.reshape(3, 4)), V12)
    check_functional(lambda a: np.corrcoef(a[:6], a[6:] ** 2), V12)
    np.testing.assert_array_equal(ad.record(np.corrcoef, M34).forward(M34), np.corrcoef(M34))


# ---- functions that need the recording's creation wrappers: module-level
# functions (the wrappers act on code with source)

def _concatenations(x):
    return np.concatenate([np.r_[x, C32, x].ravel(), np.c_[x, C32, x ** 2].ravel(),
                           np.r_[x[0, 0], x.ravel(), 1:4, 0:1:3j, 7.0],
                           np.r_["0,2,0", x[:, 0], [1.0, x[0, 1]]].ravel(),
                           np.r_[x].ravel()])


def _constant_tables(x):
    xp = np.array([0.0, 0.5, 1.0, 1.5])          # constants made in the function
    fp = np.array([1.0, 2.0, 0.0, -1.0])
    i = np.searchsorted(np.array([0.0, 0.4, 0.9]), x)
    mask = np.array([1.0, 0.0, 1.0, 1.0])
    return np.concatenate([np.interp(x, xp, fp), np.interp(x, xp, fp, period=1.5),
                           x * i + np.digitize(x, np.array([0.2, 0.6])),
                           np.where(mask, x, -x)])


def _tables_that_depend_on_x(x):
    return np.searchsorted(np.concatenate([x, x - 5.0]), x)     # never sorted


@pytest.mark.parametrize("f, x", [(_concatenations, C32 / 7.0 + 0.1),
                                  (_constant_tables, np.array([0.13, 0.62, 0.84, 1.21]))])
def test_functions_of_constants_made_in_the_function(f, x):
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x.copy()), rtol=1e-13)
    check_tape(f, [x], rtol=1e-6, atol=1e-7)


def test_an_unsorted_table_with_a_derivative_is_refused_clearly():
    # sorted tables with a derivative: tests/numpy/test_search_active_table.py
    with pytest.raises(ad.UnsupportedOperation, match="np.searchsorted of an active array `a` that is not sorted"):
        ad.jacobian(_tables_that_depend_on_x)(np.array([0.1, 0.5]))


def test_constant_order_arguments_of_special_functions():
    import scipy.special as sc
    x = np.array([0.4, 1.1, 2.3])
    f = _special_with_constant_orders
    np.testing.assert_allclose(ad.grad(f)(x), fd_jacobian(f, [x]).ravel(), rtol=1e-7)
    assert np.isclose(f(x), np.sum(sc.jv([1.0, 2.0, 3.0], x)))


def _special_with_constant_orders(x):
    import scipy.special as sc
    return np.sum(sc.jv(np.array([1.0, 2.0, 3.0]), x))


# ---- NumPy's behaviour around the new functions -------------------------------

def test_dot_and_inner_shapes_are_numpys():
    a, b = np.ones((2, 3, 4)), np.ones((5, 4, 2))
    g = ad.grad(lambda a: np.sum(np.dot(a, b)))(a)
    np.testing.assert_allclose(g, np.full((2, 3, 4), 10.0))
    assert ad.record(lambda a: np.dot(a, b), a).output_shape == (2, 3, 5, 2)
    assert ad.record(lambda a: np.inner(a, b[:, :, 0]), a).output_shape == (2, 3, 5)
    with pytest.raises(ValueError, match="shape-mismatch"):
        ad.grad(lambda a: np.sum(np.dot(a, np.ones((5, 3, 2)))))(a)


def test_quantiles_of_slices_with_nan_are_nan_as_in_numpy():
    x = np.array([0.3, np.nan, 2.0, 1.1])
    for f in (np.median, lambda v: np.quantile(v, 0.3), lambda v: np.percentile(v, [10, 90])):
        value, g = ad.value_and_grad(lambda v: np.sum(f(v)))(x)
        assert np.isnan(value) and np.isnan(np.sum(f(x)))


def test_all_nan_slices_warn_and_give_numpys_values():
    x = np.array([[np.nan, np.nan], [1.0, 2.0]])
    for name in ("nanmax", "nanmin", "nanmedian"):
        f = getattr(np, name)
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            want = f(x, axis=1)
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            got = ad.record(lambda v: f(v, axis=1), x).forward(x)
        np.testing.assert_array_equal(got, want)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = ad.record(lambda v: np.nanvar(v, axis=1, ddof=1), x).forward(x)
    assert np.isnan(got[0]) and got[1] == 0.5
    with pytest.raises(ValueError, match="All-NaN slice"):
        ad.grad(lambda v: v[0, np.nanargmax(v[0])])(x)


def test_nan_to_num_in_place_and_real_if_close_return_their_argument():
    def f(x):
        y = x * np.array([1.0, np.nan, np.inf])
        out = np.nan_to_num(y, copy=False, nan=-1.0)
        return np.sum(out * (out is y) * (np.real_if_close(y) is y))
    value, g = ad.value_and_grad(f)(np.array([2.0, 3.0, 4.0]))
    assert value == 2.0 - 1.0 + np.finfo(float).max
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0])


def test_reshape_in_fortran_order_is_a_view_where_numpys_is():
    def f(x):
        y = np.zeros(6)
        v = y.reshape(2, 3).T.reshape(-1, order="F")      # C order of y: a view
        v[1:3] += x[:2]
        w = y.reshape((3, 2), order="F")                  # a copy in NumPy
        w[0, 0] = 100.0
        return y * x
    x = np.array([0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x.copy()))
    check_tape(f, [x])
    with pytest.raises(ValueError, match="copy"):
        ad.grad(lambda x: np.sum(np.reshape(x.reshape(2, 3).T, -1, copy=False)))(x)


def test_active_shape_assignment_is_numpys_in_place_reshape():
    def f(x):
        y = x * 2.0
        y.shape = (2, 3)
        v = y[1]
        v.shape = (3, 1)
        v[2, 0] = 7.0                  # a write through the view reaches y
        return y * x.reshape(2, 3)
    x = np.arange(1.0, 7.0)
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x.copy()))
    check_tape(f, [x])
    with pytest.raises(AttributeError, match="Incompatible shape"):
        ad.grad(lambda x: np.sum(setattr(t := x.reshape(2, 3).T, "shape", (6,)) or t))(x)


def test_active_flags_strides_and_views_follow_numpy():
    seen = {}

    def f(x):
        a = x.reshape(3, 4)
        b = a.T
        seen["flags"] = (a.flags.c_contiguous, b.flags.c_contiguous, b.flags.f_contiguous,
                         (x * 1.0).flags.owndata, b.flags.owndata,
                         np.broadcast_to(x, (2, 12)).flags.writeable)
        seen["strides"] = (a.strides, b.strides, x[::3].strides)
        y = x * 1.0
        y.setflags(write=False)
        with pytest.raises(ValueError, match="read-only"):
            y += 1.0
        return np.sum(b.mT * a)
    plain = np.arange(12.0)
    ad.grad(f)(plain)
    a = (plain * 1.0).reshape(3, 4)
    assert seen["flags"] == (True, False, True, True, False, False)
    assert seen["strides"] == (a.strides, a.T.strides, plain[::3].strides)


def test_active_methods_nonzero_partition_and_in_place_remainders():
    def f(x):
        y = x * 3.0
        y.partition(2)
        z = x * 1.0
        v = z[:3]
        v %= 0.7                      # in place through the view, as NumPy
        v //= 0.25
        u = x * np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
        return np.concatenate([y, z, u[u.nonzero()], y.argpartition(1)[:1] * 1.0,
                               y.compress([True, False, True, False, True, False])])
    x = np.array([0.9, -0.4, 0.1, 1.3, 0.2, -1.1])
    np.testing.assert_allclose(ad.record(f, x).forward(x), f(x.copy()))
    check_tape(f, [x], order=1)


def test_missing_ndarray_attributes_say_what_to_do():
    x = np.ones(3)
    for name, words in (("resize", "np.resize"), ("tobytes", "np.asarray(adsim.value(x))"),
                        ("put", "x.flat[indices] = values"), ("ctypes", "adsim.value"),
                        ("byteswap", "adsim.value")):
        with pytest.raises(ad.UnsupportedAttribute, match=f"`{name}`") as info:
            ad.grad(lambda x: getattr(x, name))(x)
        assert isinstance(info.value, AttributeError) and words in str(info.value)
    assert issubclass(ad.UnsupportedAttribute, ad.AdsimError) and "Fix" in \
        ad.UnsupportedAttribute.__doc__
    with pytest.raises(AttributeError, match="no attribute 'bogus'") as info:
        ad.grad(lambda x: x.bogus)(x)
    assert not isinstance(info.value, ad.UnsupportedAttribute)
    assert ad.grad(lambda x: np.sum(x) * (not hasattr(x, "__array_interface__")))(x)[0] == 1.0


def test_a_plain_arrays_dot_method_points_to_np_dot():
    A = np.ones((2, 3))
    with pytest.raises(ad.ActiveValueLeak, match=r"np.dot\(a, x\), or a @ x"):
        ad.grad(lambda x: np.sum(A.dot(x)))(np.ones(3))


def test_stacked_linear_algebra_of_empty_stacks_and_errors():
    empty = np.zeros((0, 3, 3))
    tape = ad.record(lambda x: np.linalg.inv(x + np.eye(3)), empty)
    assert tape.forward(empty).shape == (0, 3, 3)
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        ad.grad(lambda x: np.sum(np.linalg.inv(x)))(np.ones((2, 3, 2)))
    with pytest.raises(ad.UndefinedDerivative, match="singular"):
        ad.grad(lambda x: np.linalg.cond(x))(np.ones((2, 2)))
