"""scipy.sparse.csgraph.laplacian of a dense graph of active weights
(adsim/_scipy/csgraph.py): SciPy's values in every option, derivatives in
every sweep, a graph-diffusion program through it; what stays SciPy's own
refuses by name."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import laplacian

import adsim
from fdcheck import assert_close, check_tape

RNG = np.random.default_rng(7)
W = RNG.uniform(0.2, 1.5, (4, 4))
W[0, 2] = W[2, 0] = 0.0


@pytest.mark.parametrize("options", [
    {}, {"normed": True}, {"use_out_degree": True}, {"symmetrized": True},
    {"normed": True, "use_out_degree": True, "symmetrized": True},
], ids=["plain", "normed", "out degree", "symmetrized", "all"])
def test_values_and_every_sweep(options):
    def f(w):
        lap, d = laplacian(w, return_diag=True, **options)
        return np.concatenate([lap.ravel(), d])
    value = adsim.record(f, W).forward(W)
    assert_close(value, f(W), rtol=1e-15, atol=0.0, what="SciPy's values")
    check_tape(f, [W], rtol=1e-7, atol=1e-9)


def test_an_isolated_node_of_the_normed_laplacian():
    """SciPy takes its degree as 1 and its diagonal entry as 0; the weights
    into it have derivatives, no NaN reaches them."""
    w = W.copy()
    w[:, 3] = 0.0
    w[3, :] = 0.0
    f = lambda x: laplacian(x, normed=True)
    assert_close(adsim.record(f, w).forward(w), f(w), rtol=1e-15, atol=0.0, what="values")
    g = adsim.grad(lambda x: np.sum(f(x) ** 2))(w)
    assert np.all(np.isfinite(g))


def test_graph_diffusion_through_the_laplacian():
    """Heat kernel smoothing on a weighted graph: (I + t L) u = f solved,
    a misfit of the smoothed signal; gradient in the edge weights."""
    signal = np.array([1.0, 0.0, 2.0, -1.0])

    def misfit(weights):
        L = laplacian(weights, symmetrized=True)
        u = np.linalg.solve(np.eye(4) + 0.5 * L, signal)
        return np.sum((u - 0.5) ** 2)
    check_tape(misfit, [np.triu(W, 1)], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f, words", [
    (lambda w: laplacian(sp.csr_array(w)), "dense array"),
    (lambda w: laplacian(w, form="function")(np.ones(4)), "form='array'"),
    (lambda w: laplacian(w, copy=False), "copy=True"),
])
def test_what_stays_scipys_is_refused_by_name(f, words):
    with pytest.raises(adsim.UnsupportedOperation, match=words):
        adsim.grad(lambda w: np.sum(f(w)))(W)
