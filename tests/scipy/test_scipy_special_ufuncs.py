"""The scipy.special ufuncs of adsim/_scipy/ufuncs.py called unchanged:
every sweep (tangents, adjoints, Jacobians, Hessian-vector products)
against SciPy's values and central differences, at several shapes with
broadcasting; the special points of the rules (the poles of Gamma for
rgamma, z = 1 for spence, lambda = 0 for boxcox, the kink of huber); the
plain orders; and tape files of tapes that use them."""
import pickle

import numpy as np
import pytest
import scipy.special as sc

import adsim as ad
from fdcheck import assert_close, check_tape

X = np.array([0.6, 1.3, 2.2, 3.1])
M = np.array([[0.7, 1.9, 2.6], [1.1, 0.4, 3.3]])
ORDERS = np.array([[0.5], [2.0]])

CASES = {
    "y0": (lambda x: sc.y0(x), [X]),
    "y1": (lambda x: sc.y1(x), [M]),
    "yn orders": (lambda x: sc.yn(np.array([0, 1, 2, 3]), x), [X]),
    "yn broadcast": (lambda x: sc.yn(np.array([[1], [4]]), x), [X]),
    "yv": (lambda x: sc.yv(ORDERS, x), [X]),
    "k0 k1": (lambda x: sc.k0(x) * sc.k1(x), [M]),
    "k0e k1e": (lambda x: sc.k0e(x) + 2.0 * sc.k1e(x), [X]),
    "kv": (lambda x: sc.kv(ORDERS, x), [X]),
    "kve": (lambda x: sc.kve(1.5, x), [M]),
    "gammasgn": (lambda x: sc.gammasgn(x - 2.0) * x, [X]),
    "rgamma": (lambda x: sc.rgamma(x - 2.0), [M]),
    "rgamma at the poles of gamma": (lambda x: sc.rgamma(x),
                                     [np.array([0.0, -1.0, -2.0, 0.3, -0.4, 0.5])]),
    "loggamma": (lambda x: sc.loggamma(x), [X]),
    "erfcx": (lambda x: sc.erfcx(x - 1.0), [X]),
    "erfi": (lambda x: sc.erfi(x - 1.5), [X]),
    "dawsn": (lambda x: sc.dawsn(x - 1.0), [M]),
    "exp1": (lambda x: sc.exp1(x), [X]),
    "expi": (lambda x: sc.expi(x - 1.0), [X]),
    "expn": (lambda x: sc.expn(np.array([0, 1, 2, 5]), x), [X]),
    "spence near and at 1": (lambda z: sc.spence(z), [np.array([0.3, 0.95, 1.0, 1.02, 2.5])]),
    "owens_t": (lambda h, a: sc.owens_t(h, a), [X - 1.0, np.array([0.5, -1.0, 2.0, 0.3])]),
    "binom": (lambda n, k: sc.binom(n, k), [X + 3.0, X]),
    "binom broadcast": (lambda n, k: sc.binom(n, k), [np.array([[6.5], [9.0]]), X]),
    "boxcox near lambda 0": (lambda x, lam: sc.boxcox(x, lam),
                             [X, np.array([0.0, 0.02, -0.7, 1.5])]),
    "boxcox1p broadcast": (lambda x, lam: sc.boxcox1p(x, lam), [X, np.array([[0.0], [0.3]])]),
    "huber both sides": (lambda d, r: sc.huber(d, r), [np.array([1.0, 0.5, 2.0, 0.7]), X - 1.5]),
    "pseudo_huber": (lambda d, r: sc.pseudo_huber(d, r),
                     [np.array([1.0, 0.5, 2.0, 0.7]), X - 1.5]),
    "kl_div": (lambda x, y: sc.kl_div(x, y), [X, X[::-1]]),
    "rel_entr": (lambda x, y: sc.rel_entr(x, y), [M, np.array([0.5, 1.5, 2.0])]),
    "entr": (lambda x: sc.entr(x), [X]),
    "multigammaln": (lambda a: sc.multigammaln(a, 3), [X + 1.5]),
    "hyp2f1": (lambda x: sc.hyp2f1(1.5, np.array([[0.5], [-1.2]]), 2.5, x), [X / 4.0]),
    "hyp1f1": (lambda x: sc.hyp1f1(0.7, np.array([1.5, 2.0, 3.5, 0.4]), x), [X - 1.0]),
    "ellipk ellipe near and at 0": (lambda m: sc.ellipk(m) * sc.ellipe(m),
                                    [np.array([-0.6, -0.02, 0.0, 0.03, 0.4, 0.9])]),
    "exprel near and at 0": (lambda x: sc.exprel(x), [np.array([-2.0, -0.05, 0.0, 0.02, 1.5])]),
    "powm1": (lambda x, y: sc.powm1(x, y), [X, np.array([[0.5], [-1.5]])]),
    "cosm1": (lambda x: sc.cosm1(x), [M]),
    "softplus (written with NumPy)": (lambda x: sc.softplus(x - 2.0), [M]),
    "radian": (lambda d, m, s: sc.radian(d, m, s), [X * 30.0, X * 10.0, np.array(20.0)]),
    "numpy's functions": (lambda x: sc.expm1(x) + sc.log1p(x) + sc.cbrt(x) + sc.exp2(x), [M]),
    "voigt_profile": (lambda x, s, g: sc.voigt_profile(x, s, g),
                      [X - 2.0, np.array([[0.4], [1.7]]), X[::-1] / 2.0]),
    "voigt_profile near its Lorentzian and Gaussian limits": (
        lambda x, s, g: sc.voigt_profile(x, s, g),
        [X - 1.0, np.array([0.05, 0.6, 0.8, 1.2]), np.array([0.7, 0.05, 0.5, 0.2])]),
    "exact degree functions": (lambda x: sc.exp10(x / 3.0) + sc.cosdg(30.0 * x)
                               + sc.sindg(40.0 * x) + sc.tandg(10.0 * x) + sc.cotdg(10.0 * x), [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6, atol=1e-8)


def test_derivatives_at_special_points_equal_their_closed_forms():
    """rgamma at -n is 0 with derivative (-1)^n n!; spence'(1) = -1 and
    spence''(1) = 1/2; d boxcox / d lambda at 0 is log(x)^2 / 2; gammasgn
    has derivative 0; ellipk'(0) = pi/8, ellipe'(0) = -pi/8, exprel'(0) = 1/2."""
    n = np.array([0.0, -1.0, -2.0, -3.0])
    assert_close(ad.jvp(sc.rgamma, n, np.ones(4))[1], [1.0, -1.0, 2.0, -6.0], rtol=1e-12,
                 what="rgamma' at the poles of gamma")
    one = np.array(1.0)
    assert_close(ad.grad(sc.spence)(one), -1.0, rtol=1e-15, what="spence'(1)")
    assert_close(ad.hessian(sc.spence)(one), 0.5, rtol=1e-14, what="spence''(1)")
    x = np.array([0.5, 2.0])
    assert_close(ad.jvp(lambda lam: sc.boxcox(x, lam), np.zeros(2), np.ones(2))[1],
                 np.log(x) ** 2 / 2, rtol=1e-15, what="d boxcox / d lambda at 0")
    assert np.all(ad.jvp(sc.gammasgn, np.array([-1.5, 0.5]), np.ones(2))[1] == 0.0)
    zero = np.array(0.0)
    assert_close([ad.grad(sc.ellipk)(zero), ad.grad(sc.ellipe)(zero), ad.grad(sc.exprel)(zero)],
                 [np.pi / 8, -np.pi / 8, 0.5], rtol=1e-15, what="derivatives at 0")


def test_voigt_profile_at_sigma_0_is_the_lorentzians_with_its_curvature_in_sigma():
    """At sigma = 0 voigt_profile is the Lorentzian L(x) (SciPy's value), its
    derivatives in x and gamma are L's, in sigma 0, and its second
    derivative in sigma L'' (the heat equation: V = L + sigma^2 L'' / 2)."""
    x, g = 0.7, 0.4
    r = x * x + g * g
    f = lambda p: sc.voigt_profile(x, p[0], p[1])      # noqa: E731
    p = np.array([0.0, g])
    assert_close(ad.record(f, p).forward(p), g / (np.pi * r), rtol=1e-15, what="value")
    assert_close(ad.grad(f)(p), [0.0, (x * x - g * g) / (np.pi * r * r)], rtol=1e-14,
                 what="gradient")
    curvature = 2 * g * (3 * x * x - g * g) / (np.pi * r ** 3)
    assert_close(ad.hessian(f)(p)[0], [curvature, 0.0], rtol=1e-14, atol=1e-16,
                 what="second derivatives")
    small = 1e-4                     # one-sided: SciPy's profile is NaN for sigma < 0
    assert_close((f([2 * small, g]) - 2 * f([small, g]) + f(p)) / small ** 2, curvature,
                 rtol=1e-5, what="second difference")


def test_expm1_log1p_cbrt_exp2_are_numpys_recorded_ops():
    """SciPy's copies record NumPy's ops: the same tape as np.expm1 & co."""
    numpy_tape = ad.record(lambda x: np.expm1(x) + np.log1p(x) * np.cbrt(x) - np.exp2(x), X)
    scipy_tape = ad.record(lambda x: sc.expm1(x) + sc.log1p(x) * sc.cbrt(x) - sc.exp2(x), X)
    assert str(scipy_tape) == str(numpy_tape)


def test_sparsity_sees_them_as_elementwise():
    f = lambda x: sc.kv(1.5, x) + sc.erfcx(x) * sc.boxcox(x, 0.5)       # noqa: E731
    assert np.array_equal(ad.jacobian_sparsity(f, X).toarray(), np.eye(X.size, dtype=bool))


def test_tapes_with_them_pickle():
    f = lambda x: np.sum(sc.kv(1.5, x) * sc.rgamma(x) + sc.huber(1.0, x))      # noqa: E731
    tape = ad.record(f, X)
    loaded = pickle.loads(pickle.dumps(tape))
    assert loaded.gradient(X + 0.1).tobytes() == tape.gradient(X + 0.1).tobytes()


@pytest.mark.parametrize("f, words", [
    (lambda v: sc.kv(v, 2.0), "scipy.special.kv is not differentiated in its order v"),
    (lambda n: sc.yn(n, 2.0), "scipy.special.yn is not differentiated in its order n"),
    (lambda n: sc.expn(n, 2.0), "scipy.special.expn is not differentiated in its order n"),
    (lambda a: sc.hyp2f1(1.0, a, 2.0, 0.3), "hyp2f1 is not differentiated in its parameters"),
    (lambda a: sc.multigammaln(2.5, a[0]), "active dimension d"),
    (lambda n: sc.binom(n, 5.0), r"binom\(n, k\) is computed where n > -1"),
    (lambda a: sc.gammainc(a, 2.0), "argument 0 of `scipy.special.gammainc`"),
    (lambda a: sc.betainc(a, 2.0, 0.3), "argument 0 of `scipy.special.betainc`"),
])
def test_arguments_without_a_rule_are_refused_by_name(f, words):
    with pytest.raises(ad.UnsupportedOperation, match=words):
        ad.grad(lambda z: np.sum(f(z)))(np.array([2.0, 3.0]))


def test_plain_orders_made_in_the_function_are_accepted():
    """An order built from constants inside the function is no active input."""
    g = ad.grad(lambda x: np.sum(sc.kv(np.array([0.5, 1.5]), x)))(np.array([1.0, 2.0]))
    assert_close(g, -0.5 * (sc.kv([-0.5, 0.5], [1.0, 2.0]) + sc.kv([1.5, 2.5], [1.0, 2.0])),
                 rtol=1e-14, what="gradient")
