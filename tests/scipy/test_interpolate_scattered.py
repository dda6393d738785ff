"""griddata of active values at scattered stations, as a field model
calibrated to observations writes it: SciPy's values, derivatives against
central differences and the weights' closed form, replays at new values."""
import numpy as np
import pytest
from scipy.interpolate import griddata

import adsim
from adsim.errors import UnsupportedOperation
from adsim.testing import check_grads
from fdcheck import assert_close

RNG = np.random.default_rng(5)
STATIONS = RNG.random((14, 2))
SITES = np.vstack([RNG.random((5, 2)) * 0.8 + 0.1, [[1.3, 1.3]]])     # the last one outside


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_griddata_of_active_station_values(method):
    def misfit(level):
        field = griddata(STATIONS, np.exp(level), SITES, method=method, fill_value=0.25)
        return np.sum((field - 1.0) ** 2)

    level = np.sin(3.0 * STATIONS[:, 0]) * STATIONS[:, 1]
    assert_close(adsim.record(misfit, level).forward(level), misfit(level), 1e-13, 0.0,
                 "SciPy's value")
    check_grads(misfit, level)
    tape = adsim.record(misfit, level)
    assert_close(tape.gradient(level * 0.7), adsim.grad(misfit)(level * 0.7), 1e-12, 1e-14,
                 "replayed gradient")


def test_griddata_weights_are_barycentric_and_refusals():
    J = adsim.jacobian(lambda v: griddata(STATIONS, v, SITES[:5]))(np.zeros(14))
    assert_close(J.sum(axis=1), np.ones(5), 1e-12, 0.0, "weights sum to one")
    assert_close(J @ STATIONS, SITES[:5], 1e-12, 0.0, "linear functions reproduced")
    with pytest.raises(UnsupportedOperation, match="cubic"):
        adsim.grad(lambda v: np.sum(griddata(STATIONS, v, SITES[:5], method="cubic")))(
            np.ones(14))
    with pytest.raises(UnsupportedOperation, match="xi"):
        adsim.grad(lambda q: np.sum(griddata(STATIONS, np.ones(14), q.reshape(-1, 2))))(
            SITES[:2].ravel())


def test_rbf_surrogate_of_active_responses():
    """A radial-basis surrogate of simulated responses (two outputs, a
    smoothing and a local kernel too), fitted to targets at new sites."""
    from scipy.interpolate import RBFInterpolator

    def surrogate_misfit(responses):
        global_fit = RBFInterpolator(STATIONS, responses.reshape(14, 2))
        local_fit = RBFInterpolator(STATIONS, responses[:14], kernel="gaussian", epsilon=1.5,
                                    smoothing=1e-3, neighbors=6)
        return np.sum((global_fit(SITES) - 0.5) ** 2) + np.sum(local_fit(SITES[:3]) ** 3)

    r = np.cos(np.arange(28.0))
    assert_close(adsim.record(surrogate_misfit, r).forward(r), surrogate_misfit(r), 1e-12, 0.0,
                 "SciPy's value")
    check_grads(surrogate_misfit, r)
    with pytest.raises(UnsupportedOperation, match="x"):
        adsim.grad(lambda q: np.sum(RBFInterpolator(STATIONS, np.ones(14))(q.reshape(-1, 2))))(
            SITES[:2].ravel())
