"""np.histogramdd and np.histogram2d of active samples (before: refused as
functions without a rule): NumPy's counts, edges and densities, each
coordinate's bin guarded as np.histogram guards it, the edges and weighted
counts differentiated."""
import numpy as np
import pytest

import adsim
from fdcheck import differences

RNG = np.random.default_rng(7)
X, Y = RNG.uniform(0.0, 1.0, 20), RNG.uniform(0.0, 2.0, 20)
XY = np.concatenate([X, Y])
FORMS = {
    "counts": lambda x, y: np.histogram2d(x, y, bins=3),
    "bins each": lambda x, y: np.histogram2d(x, y, bins=[2, 4], weights=x * y),
    "edges given": lambda x, y: np.histogram2d(x, y, bins=[np.array([0.0, 0.3, 1.0]),
                                                           np.array([0.0, 1.0, 2.0])]),
    "range": lambda x, y: np.histogram2d(x, y, bins=2, range=[[0.1, 0.9], [0.5, 1.5]],
                                         weights=x ** 2),
    "density": lambda x, y: np.histogram2d(x, y, bins=3, density=True, weights=1.0 + y),
    "dd of a stack": lambda x, y: np.histogramdd(np.stack([x, y], axis=1), bins=(2, 3),
                                                 weights=x),
    "dd of a sequence": lambda x, y: np.histogramdd([x, y, x * y], bins=2, density=True),
}


def flat(result):
    counts, *edges = result
    if len(edges) == 1:             # histogramdd: (counts, [edges, ...])
        edges = edges[0]
    return np.concatenate([np.ravel(counts)] + [np.ravel(e) for e in edges])


@pytest.mark.parametrize("form", list(FORMS))
def test_numpys_values_and_the_derivatives(form):
    def f(z):
        return flat(FORMS[form](z[:20], z[20:]))
    tape = adsim.record(f, XY)
    np.testing.assert_allclose(tape.forward(XY), f(XY), rtol=1e-13)
    weights = np.linspace(0.5, 1.5, f(XY).size)

    def scalar(z):
        return np.sum(f(z) * weights)
    np.testing.assert_allclose(adsim.grad(scalar)(XY), differences(scalar, XY, 1e-7),
                               rtol=1e-5, atol=1e-6)


def test_a_replay_where_a_sample_changes_bin_records_again():
    def f(z):
        return np.sum(np.histogram2d(z[:20], z[20:], bins=3, weights=z[:20])[0] ** 2)
    tape = adsim.record(f, XY)
    moved = XY.copy()
    moved[0] += 0.5
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(moved)
    np.testing.assert_allclose(adsim.grad(f)(moved), differences(f, moved, 1e-7), rtol=1e-5)


def test_numpys_errors():
    with pytest.raises(ValueError, match="dimension of bins"):
        adsim.grad(lambda z: np.sum(np.histogramdd([z[:20], z[20:]], bins=[2, 2, 2])[0] * z[0]))(XY)
