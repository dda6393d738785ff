"""scipy.spatial.distance (pdist, cdist, squareform) and scipy.optimize's
Rosenbrock functions called unchanged on active arrays: every sweep against
SciPy's values and central differences, a minimization driven by adsim's
gradient, and clear errors for what is not recorded."""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.spatial.distance as ssd

import adsim as ad
from fdcheck import assert_close, check_tape

rng = np.random.default_rng(5)
X, Y = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
METRICS = ["euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski", "cosine",
           "correlation", "braycurtis"]


@pytest.mark.parametrize("metric", METRICS)
def test_pdist_and_cdist_every_sweep(metric):
    check_tape(lambda x: ssd.pdist(x, metric), [X], rtol=1e-6)
    check_tape(lambda x, y: ssd.cdist(x, y, metric=metric), [X, Y], rtol=1e-6)


CASES = {
    "minkowski p": (lambda x: ssd.pdist(x, "minkowski", p=3.0), [X]),
    "alias": (lambda x, y: ssd.cdist(x, y, "sqe"), [X, Y]),
    "callable metric": (lambda x, y: ssd.cdist(x, y, lambda u, v: np.sum(u * v) ** 2), [X, Y]),
    "squareform to matrix": (lambda x: ssd.squareform(ssd.pdist(x)), [X]),
    "squareform there and back": (lambda x: ssd.squareform(ssd.squareform(ssd.pdist(x))), [X]),
    "squareform force": (lambda v: ssd.squareform(v, force="tomatrix"), [np.arange(1.0, 7.0)]),
    "rosen": (lambda x: so.rosen(x), [X[:, 0]]),
    "rosen along the first axis": (lambda x: so.rosen(x), [X]),
    "rosen_der": (lambda x: so.rosen_der(x), [X[:, 0]]),
    "rosen_hess": (lambda x: so.rosen_hess(x), [X[:, 0]]),
    "rosen_hess_prod": (lambda x, p: so.rosen_hess_prod(x, p), [X[:, 0], X[:, 1]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6)


def test_rosenbrock_derivatives_agree_with_adsims():
    """rosen_der and rosen_hess are rosen's gradient and Hessian."""
    x = X[:, 0]
    assert_close(ad.grad(so.rosen)(x), so.rosen_der(x), rtol=1e-13, what="gradient")
    assert_close(ad.hessian(so.rosen)(x), so.rosen_hess(x), rtol=1e-13, what="Hessian")
    assert_close(ad.jacobian(so.rosen_der)(x), so.rosen_hess(x), rtol=1e-13, what="Jacobian")


def test_minimize_rosen_with_adsims_gradient_and_hessian_products():
    """The same iterates as with SciPy's own rosen_der and rosen_hess_prod."""
    x0 = np.array([-1.2, 1.0, 0.8])
    ours = so.minimize(so.rosen, x0, jac=ad.grad(so.rosen),
                       hessp=lambda x, p: ad.hvp(so.rosen, x, p), method="Newton-CG")
    theirs = so.minimize(so.rosen, x0, jac=so.rosen_der, hessp=so.rosen_hess_prod,
                         method="Newton-CG")
    assert ours.success and ours.nit == theirs.nit
    assert_close(ours.x, theirs.x, rtol=1e-10, what="minimizer")
    assert_close(ours.x, np.ones(3), rtol=1e-4, what="near the minimum")


def test_squareform_checks_as_scipy_does():
    M = ssd.squareform(ssd.pdist(X))
    with pytest.raises(ValueError, match="symmetric"):
        ad.grad(lambda m: np.sum(ssd.squareform(m)))(M + np.triu(np.ones((4, 4)), 1))
    with pytest.raises(ValueError, match="binomial coefficient"):
        ad.grad(lambda v: np.sum(ssd.squareform(v)))(np.ones(4))


@pytest.mark.parametrize("f, words", [
    (lambda x: ssd.pdist(x, "jensenshannon"), "metric='jensenshannon'"),
    (lambda x: ssd.pdist(x, "euclidean", w=np.ones(3)), r"\['w'\]"),
    (lambda x: ssd.pdist(x, out=np.zeros(6)), "out="),
])
def test_what_is_not_recorded_is_refused_by_name(f, words):
    with pytest.raises(ad.UnsupportedOperation, match=words):
        ad.grad(lambda x: np.sum(f(x)))(X)
