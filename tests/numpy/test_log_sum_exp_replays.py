"""Log-sum-exp written by hand, ``m = np.max(z); m + log(sum(exp(z - m)))``,
inside optimisation loops: the maximum moves to another element as the
parameters change, and the recorded tape follows it at replay (one
recording for the whole loop), with values and derivatives those of a fresh
recording at every point and of finite differences."""
import numpy as np
import pytest
from scipy import optimize

import adsim
from fdcheck import assert_close, central

RNG = np.random.default_rng(24)

# softmax regression: 60 points in 2-d, 3 classes
FEATURES = np.column_stack([RNG.standard_normal((60, 2)), np.ones(60)])
LABELS = RNG.integers(0, 3, 60)

# a two-component 1-d Gaussian mixture
DATA = np.concatenate([RNG.normal(-1.5, 0.6, 70), RNG.normal(2.0, 1.0, 50)])


def softmax_loss(w):
    logits = FEATURES @ np.reshape(w, (3, 3))
    m = np.max(logits, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    return np.mean(lse - logits[np.arange(60), LABELS]) + 0.01 * np.sum(w * w)


def mixture_nll(theta):
    means, log_sd, logit = theta[:2], theta[2:4], theta[4]
    log_w = np.array([0.0, 0.0]) + np.stack([logit, -logit]) * 0.5
    log_w = log_w - np.log(np.sum(np.exp(log_w)))
    z = (DATA[:, None] - means) / np.exp(log_sd)
    terms = log_w - log_sd - 0.5 * z * z - 0.5 * np.log(2 * np.pi)
    m = np.max(terms, axis=1)                       # the component nearest each point
    return -np.sum(m + np.log(np.sum(np.exp(terms - m[:, None]), axis=1)))


def scalar_lse(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def test_softmax_regression_by_gradient_descent_records_once():
    g = adsim.grad(softmax_loss)
    w = np.zeros(9)
    w[[0, 4, 8]] = [3.0, -3.0, 1.0]          # a start whose row maxima change as it learns
    rows = [np.argmax(FEATURES @ w.reshape(3, 3), axis=1)]
    for step in range(60):
        grad = g(w)
        if step % 20 == 0:
            fresh = adsim.record(softmax_loss, w)
            assert_close(grad, fresh.gradient(w), 1e-14, 1e-16)
            for i in (0, 4, 7):
                e = np.eye(9)[i]
                assert_close(grad[i], central(softmax_loss, [w], [e]), 1e-7, 1e-9)
        w = w - 0.5 * grad
        rows.append(np.argmax(FEATURES @ w.reshape(3, 3), axis=1))
    assert (rows[0] != rows[-1]).sum() > 5                  # the maxima did move
    assert g.tapes.recordings == 1
    assert_close(softmax_loss(w), adsim.record(softmax_loss, w).forward(w), 1e-15, 0)


def test_mixture_fit_with_bfgs_records_once_and_matches_differences():
    theta0 = np.array([0.5, 0.0, 0.3, 0.3, 0.0])         # both means near the middle
    g = adsim.grad(mixture_nll)
    fit = optimize.minimize(mixture_nll, theta0, jac=g, method="BFGS")
    assert fit.success
    assert_close(np.sort(fit.x[:2]), [-1.5, 2.0], 0.3, 0.3)
    assert g.tapes.recordings == 1
    tape = adsim.record(mixture_nll, theta0)
    for theta in (theta0, fit.x, 0.5 * (theta0 + fit.x)):
        grad = tape.gradient(theta)
        assert_close(grad, adsim.record(mixture_nll, theta).gradient(theta), 1e-13, 1e-12)
        for i, e in enumerate(np.eye(5)):
            assert_close(grad[i], central(mixture_nll, [theta], [e]), 1e-7, 1e-7)
        v = np.linspace(-1.0, 1.0, 5)
        assert_close(adsim.jvp(mixture_nll, theta, v)[1], grad @ v, 1e-12, 1e-12)
        hv = adsim.hvp(mixture_nll, theta, v)
        h = 1e-5
        assert_close(hv, (tape.gradient(theta + h * v) - tape.gradient(theta - h * v)) / (2 * h),
                     1e-5, 1e-5)


@pytest.mark.parametrize("z1", [np.array([3.0, 0.5, -1.0]), np.array([0.0, 4.0, 1.0]),
                                np.array([-2.0, -2.5, 6.0]), np.array([1e3, 0.0, 1e3 - 1.0])])
def test_the_scalar_idiom_replays_at_any_argmax(z1):
    """The tape recorded where element 1 is largest replays where any other
    is (even at 1000, where exp(z) overflows without the shift)."""
    tape = adsim.record(scalar_lse, np.array([0.0, 1.0, 0.5]))
    softmax = np.exp(z1 - np.max(z1)) / np.sum(np.exp(z1 - np.max(z1)))
    assert_close(tape.forward(z1), np.logaddexp.reduce(z1), 1e-15, 0)
    assert_close(tape.gradient(z1), softmax, 1e-15, 1e-300)
    v = np.array([1.0, -1.0, 0.5])
    assert_close(tape.hvp(z1, v), softmax * v - softmax * (softmax @ v), 1e-14, 1e-16)
