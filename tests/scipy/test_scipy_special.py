"""scipy.special's Python-level functions called unchanged on active arrays:
logsumexp (axis, b, keepdims, return_sign), softmax, log_softmax,
polygamma. Every sweep against SciPy's values and central differences,
tangents against the complex step, infinite entries, and user-style models."""
import numpy as np
import pytest
import scipy.special as sc
from scipy.special import log_softmax, logsumexp, softmax

import adsim as ad
from fdcheck import assert_close, check_tape, complex_step, fd_jacobian

X = np.array([0.3, -1.2, 2.0, 0.7, -0.4, 1.1])
M = X.reshape(2, 3)

CASES = {
    "logsumexp": (lambda x: logsumexp(x), [X]),
    "logsumexp axis": (lambda m: logsumexp(m, axis=0), [M]),
    "logsumexp axis tuple keepdims": (lambda x: logsumexp(x.reshape(1, 2, 3), axis=(0, 2),
                                                          keepdims=True), [X]),
    "logsumexp b": (lambda m, w: logsumexp(m, axis=1, b=w), [M, np.array([0.5, 2.0, 1.5])]),
    "logsumexp b zero": (lambda x: logsumexp(x, b=np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])), [X]),
    "logsumexp return_sign": (lambda m: logsumexp(m, axis=1, b=np.array([1.0, -3.0, 0.5]),
                                                  return_sign=True)[0], [M]),
    "logsumexp list": (lambda x: logsumexp([x[0], 2.0 * x[1], 0.5]), [X]),
    "softmax": (lambda x: softmax(x), [X]),
    "softmax axis": (lambda m: softmax(m, axis=1), [M]),
    "log_softmax": (lambda x: log_softmax(x), [X]),
    "log_softmax axis": (lambda m: log_softmax(m, axis=0), [M]),
    "polygamma": (lambda x: sc.polygamma(1, x + 2.0) + sc.polygamma(0, x + 3.0), [X]),
    "polygamma orders": (lambda x: sc.polygamma(np.array([0, 1, 2, 3, 1, 0]), x + 2.0), [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_function_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs)


@pytest.mark.parametrize("f", [
    lambda x: logsumexp(x.reshape(2, 3), axis=1, b=np.array([0.5, 2.0, 1.5])),
    lambda x: softmax(x.reshape(2, 3), axis=0),
    lambda x: log_softmax(x),
])
def test_tangents_against_the_complex_step(f):
    v = np.cos(np.arange(X.size))
    assert_close(ad.jvp(f, X, v)[1], complex_step(f, [X], [v]), rtol=1e-13, atol=1e-14,
                 what="tangent vs complex step")


def test_logsumexp_signs_and_infinite_entries():
    """The sign SciPy returns, and -inf entries (log-space zeros) that add
    nothing and get derivative zero, also when every entry is -inf."""
    x = np.array([0.5, -np.inf, 1.0])
    value, g = ad.value_and_grad(lambda z: logsumexp(z))(x)
    assert value == logsumexp(x)
    assert_close(g, [np.exp(0.5 - value), 0.0, np.exp(1.0 - value)], rtol=1e-14, what="grad")
    signs = []

    def signed(z):
        out, sign = logsumexp(z, b=np.array([1.0, -2.0]), return_sign=True)
        signs.append(float(ad.value(sign)))
        return out
    ad.grad(signed)(np.array([0.1, 0.2]))
    assert signs == [logsumexp(np.array([0.1, 0.2]), b=[1.0, -2.0], return_sign=True)[1]]
    value, g = ad.value_and_grad(lambda z: logsumexp(z + np.array([-np.inf, -np.inf])))(
        np.zeros(2))
    assert value == -np.inf and np.all(g == 0.0)


def test_an_active_weight_of_zero_keeps_its_derivative():
    """d logsumexp(a, b) / d b_i = exp(a_i - lse) also where b_i = 0 (the
    value leaves the term out; the function is smooth in b_i there)."""
    w = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    f = lambda v: logsumexp(X, b=v)                   # noqa: E731
    g = ad.grad(f)(w)
    assert_close(g, np.exp(X - logsumexp(X, b=w)), rtol=1e-14, what="gradient in b")
    assert_close(g, fd_jacobian(f, [w]).reshape(-1), rtol=1e-8, what="against differences")


def test_an_active_order_of_polygamma_is_refused():
    with pytest.raises(ad.UnsupportedOperation, match="cannot be active"):
        ad.grad(lambda n: np.sum(sc.polygamma(n, 2.0)))(np.array([1.0]))


def test_gaussian_mixture_log_likelihood():
    """log p(x) = logsumexp over components of log w_k + log N(x; mu_k, s_k),
    in the means, log-scales and mixing logits."""
    data = np.array([-1.3, -0.2, 0.4, 1.7, 2.2])

    def log_likelihood(params):
        logits, mu, log_s = params[:3], params[3:6], params[6:]
        log_w = log_softmax(logits)
        z = (data[:, None] - mu) / np.exp(log_s)
        comp = log_w - 0.5 * z ** 2 - log_s - 0.5 * np.log(2.0 * np.pi)
        return np.sum(logsumexp(comp, axis=1))
    p = np.array([0.1, -0.3, 0.2, -1.0, 0.3, 1.8, -0.2, 0.1, -0.5])
    assert_close(ad.grad(log_likelihood)(p), fd_jacobian(log_likelihood, [p]).reshape(-1),
                 rtol=1e-7, what="gradient")
    check_tape(log_likelihood, [p])


def test_softmax_cross_entropy():
    labels = np.array([2, 0])

    def loss(W):
        logits = np.array([[1.0, 0.5], [-0.3, 2.0]]) @ W
        return -np.sum(log_softmax(logits, axis=1)[np.arange(2), labels])
    W = np.array([[0.2, -0.1, 0.4], [0.3, 0.1, -0.2]])
    check_tape(loss, [W])


def test_xlogy_keeps_its_mixed_second_derivative_where_x_is_zero():
    for f, y, slope in ((sc.xlogy, 2.0, 0.5), (sc.xlog1py, 1.0, 0.5)):
        H = ad.hessian(lambda z: f(z[0], z[1]))(np.array([0.0, y]))
        np.testing.assert_allclose(H, [[0.0, slope], [slope, 0.0]], atol=1e-15)
