"""scipy.special ufuncs on active arrays: values, derivatives against central
differences, forward against reverse mode, Hessian-vector products against
differences of the gradient, and elementwise sparsity."""
import numpy as np
import pytest
import scipy.special as sc

import adsim as ad
from fdcheck import fd_jacobian

X = np.array([0.3, 0.7, 1.2, 2.5])
P = np.array([0.1, 0.35, 0.6, 0.9])        # probabilities
CASES = {
    "gammaln": (lambda x: sc.gammaln(x), X),
    "gamma": (lambda x: sc.gamma(x), X),
    "digamma": (lambda x: sc.digamma(x), X),
    "psi": (lambda x: sc.psi(x), X),
    "beta": (lambda x: sc.beta(x, x[::-1] + 0.5), X),
    "betaln": (lambda x: sc.betaln(x, 2.0), X),
    "erf erfc": (lambda x: sc.erf(x) * sc.erfc(0.5 * x), X),
    "erfinv": (lambda p: sc.erfinv(2.0 * p - 1.0), P),
    "erfcinv": (lambda p: sc.erfcinv(p), P),
    "expit logit": (lambda x: sc.expit(x) + sc.logit(P) * x + sc.log_expit(-x), X),
    "logit": (lambda p: sc.logit(p), P),
    "xlogy": (lambda x: sc.xlogy(x, x[::-1]) + sc.xlog1py(x, 0.5 * x), X),
    "entr": (lambda x: sc.entr(x) + sc.rel_entr(x, x[::-1]), X),
    "ndtr": (lambda x: sc.ndtr(x) + sc.log_ndtr(-3.0 * x), X),
    "ndtri": (lambda p: sc.ndtri(p), P),
    "bessel j": (lambda x: sc.j0(x) * sc.j1(x) + sc.jv(2, x), X),
    "bessel i": (lambda x: sc.i0(x) + sc.i1(x) * sc.iv(3, x), X),
    "bessel scaled": (lambda x: sc.i0e(x - 1.0) + sc.i1e(x) + sc.ive(2, x), X),
    "hurwitz zeta": (lambda x: sc.zeta(3.0, x), X),
    "gammainc gammaincc": (lambda x: sc.gammainc(2.5, x) + sc.gammaincc(X, 2.0 * x), X),
    "gammaincinv": (lambda p: sc.gammaincinv(2.5, p) + sc.gammainccinv(X, p), P),
    "betainc betaincc": (lambda p: sc.betainc(2.0, 3.5, p) * sc.betaincc(X, 1.5, p), P),
    "betaincinv": (lambda p: sc.betaincinv(X, 1.5, p), P),
    "stdtr stdtrit": (lambda x: sc.stdtr(3.5, x - 1.0) + sc.stdtrit(X + 1.0, x / 3.0), X),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_function(name):
    f, x = CASES[name]
    want = f(x.copy())
    J = ad.jacobian(f)(x)
    np.testing.assert_allclose(ad.jvp(f, x, np.ones_like(x))[0], want, rtol=1e-14)
    np.testing.assert_allclose(J, fd_jacobian(f, [x]).reshape(J.shape), rtol=1e-6, atol=1e-9)
    w = np.sin(np.arange(x.size) + 1.0)
    v = np.cos(np.arange(x.size) + 2.0)
    assert np.isclose(w @ ad.jvp(f, x, v)[1], ad.vjp(f, x, w)[1] @ v, rtol=1e-12)
    g = ad.grad(lambda z: w @ f(z))
    h = 1e-5
    np.testing.assert_allclose(ad.hvp(lambda z: w @ f(z), x, v),
                               (g(x + h * v) - g(x - h * v)) / (2 * h), rtol=1e-5, atol=1e-7)


def test_special_functions_are_elementwise_for_sparsity():
    f = lambda x: sc.gammaln(x) + sc.erf(x[::-1])          # noqa: E731
    pattern = ad.jacobian_sparsity(f, X).toarray()
    assert np.array_equal(pattern, np.eye(4, dtype=bool) | np.eye(4, dtype=bool)[::-1])


def test_unsupported_special_function_is_named_with_its_module():
    with pytest.raises(ad.UnsupportedOperation, match="scipy.special.zetac"):
        ad.grad(lambda x: np.sum(sc.zetac(x)))(P)


def test_an_active_order_is_refused():
    with pytest.raises(ad.UnsupportedOperation, match="cannot be active"):
        ad.grad(lambda x: np.sum(sc.jv(x, 2.0)))(X)
