"""A function's first recording changes only what its code can reach.

``adsim.grad(f)(x)`` walks f's environment before recording it (the tape
cache's purity snapshot); when that walk sees all the code f can run and no
SciPy in it, the recording rebinds only the NumPy names that code spells and
leaves SciPy's functions alone (adsim/_record/interpose.py). Everything else
-- SciPy reached through helpers, objects, containers, imports inside the
function, or an environment that changed since -- must still reach adsim's
SciPy rules, and every gradient must be right.
"""
import collections
import functools
import importlib

import numpy as np
import pytest
import scipy.special
import scipy.stats
from numpy import zeros

import adsim
from adsim._record import interpose
from adsim._tapecache.purity import Snapshot
from adsim.testing import check_grads


@pytest.fixture
def scipy_hooked(monkeypatch):
    """How many recordings hooked SciPy's functions."""
    calls = []
    original = interpose._hook_scipy
    monkeypatch.setattr(interpose, "_hook_scipy", lambda: (calls.append(1), original())[1])
    return calls


def _softmax_loss(scores):
    return np.mean(scipy.special.logsumexp(scores, axis=1) - scores[:, 0])


def test_a_numpy_only_energy_leaves_scipy_alone(scipy_hooked):
    def energy(x):                       # a fresh function: no tape cached for it
        return np.sum(x * x) + np.sum(np.sin(x))
    x = np.linspace(-1.0, 1.0, 5)
    assert np.allclose(adsim.grad(energy)(x), 2 * x + np.cos(x), rtol=1e-14)
    assert scipy_hooked == []
    assert Snapshot(energy).reach >= {"np", "sum", "sin"}


def test_heat_step_with_workspaces_binds_the_names_it_spells(scipy_hooked):
    """np.zeros spelled through the module and through `from numpy import
    zeros`: the names the code spells are rebound, so both workspaces take
    active values."""
    def step(u, dt=0.1):
        lap = np.zeros(len(u))
        lap[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:]
        flux = zeros(len(u))
        flux[:] = u ** 2
        return np.sum((u + dt * lap) ** 2) + 0.01 * np.sum(flux)
    u = np.cos(np.linspace(0.0, 3.0, 8))
    check_grads(step, u)
    assert scipy_hooked == []


def test_scipy_through_a_helper_in_a_closure(scipy_hooked):
    def make_loss(X):
        def loss(W):
            return _softmax_loss(X @ W)
        return loss
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(6, 3)), rng.normal(size=(3, 4))
    check_grads(make_loss(X), W)
    assert scipy_hooked


class Mixture:
    """A two-component Gaussian mixture; its method calls scipy.stats."""

    def __init__(self, data):
        self.data = data

    def negative_log_likelihood(self, params):
        mu, log_sigma = params[:2], params[2:]
        logp = scipy.stats.norm.logpdf(self.data[:, None], mu, np.exp(log_sigma))
        return -np.sum(np.logaddexp(logp[:, 0], logp[:, 1]) + np.log(0.5))


def test_scipy_through_a_model_method():
    data = np.array([-1.2, -0.8, -1.0, 0.9, 1.1, 1.3])
    model = Mixture(data)
    params = np.array([-1.0, 1.0, -0.5, -0.3])
    g = adsim.grad(model.negative_log_likelihood)(params)
    check_grads(model.negative_log_likelihood, params)
    assert np.all(np.isfinite(g))


def test_scipy_imported_inside_the_function():
    def log_partition(x):
        from scipy.special import logsumexp
        return logsumexp(x)
    x = np.array([0.3, -1.0, 2.0])
    assert np.allclose(adsim.grad(log_partition)(x), np.exp(x) / np.sum(np.exp(x)), rtol=1e-13)


def test_scipy_found_by_name_at_run_time():
    def log_partition(x):
        special = importlib.import_module("scipy.special")
        return special.logsumexp(x)
    x = np.array([0.3, -1.0, 2.0])
    assert np.allclose(adsim.grad(log_partition)(x), np.exp(x) / np.sum(np.exp(x)), rtol=1e-13)


_REDUCERS = {"lse": scipy.special.logsumexp, "sum": np.sum}


def test_scipy_held_in_a_dict_or_a_partial():
    def pooled(x):
        return _REDUCERS["lse"](x)
    scaled = functools.partial(scipy.special.logsumexp, b=2.0)

    def pooled_scaled(x):
        return scaled(x)
    x = np.array([0.3, -1.0, 2.0])
    softmax = np.exp(x) / np.sum(np.exp(x))
    assert np.allclose(adsim.grad(pooled)(x), softmax, rtol=1e-13)
    assert np.allclose(adsim.grad(pooled_scaled)(x), softmax, rtol=1e-13)


def _plain_pool(x):
    return np.log(np.sum(np.exp(x)))


_pool = _plain_pool


def test_a_helper_rebound_to_scipy_is_seen_at_the_next_call(scipy_hooked):
    """The names a tape's recording needed are part of its snapshot: after
    the global helper is rebound to SciPy's logsumexp, the next call records
    again, this time with SciPy hooked."""
    global _pool

    def objective(x):
        return _pool(x) + 0.5 * np.sum(x * x)
    x = np.array([0.3, -1.0, 2.0])
    expected = np.exp(x) / np.sum(np.exp(x)) + x
    g = adsim.grad(objective)
    assert np.allclose(g(x), expected, rtol=1e-13) and scipy_hooked == []
    try:
        _pool = scipy.special.logsumexp
        assert np.allclose(g(x), expected, rtol=1e-13)
        assert scipy_hooked and g.tapes.recordings == 2
    finally:
        _pool = _plain_pool


def test_environments_the_walk_cannot_see_change_everything(scipy_hooked):
    """A deque (a C object whose contents the walk cannot read) in the
    environment: the reach is unknown, so the recording changes everything."""
    recent = collections.deque([0.5, 0.25], maxlen=2)

    def smoothed(x):
        return np.sum(x * x) * sum(recent)
    assert Snapshot(smoothed).reach is None
    assert np.allclose(adsim.grad(smoothed)(np.ones(3)), 1.5)
    assert scipy_hooked


def test_interposition_is_undone_after_a_restricted_recording():
    def f(x):
        return np.sum(x * x)
    originals = (np.zeros, np.sum, np.linalg.norm, scipy.special.logsumexp.__code__)
    adsim.grad(f)(np.ones(3))
    assert (np.zeros, np.sum, np.linalg.norm, scipy.special.logsumexp.__code__) == originals


MODEL_SOURCE = '''
import scipy.special

CALLS = []


class Classifier:
    """A fitted model as a library would keep it."""

    def __init__(self, weights):
        self.weights = weights

    def log_partition(self, x):
        CALLS.append(1)
        return scipy.special.logsumexp(self.weights * x)
'''


def test_code_that_exists_only_at_run_time_still_reaches_scipy(tmp_path, monkeypatch):
    """A model unpickled inside the function: its class is nowhere in the
    function's environment, so the walk cannot see that it calls SciPy. The
    first recording, restricted to what the walk saw, fails inside SciPy's
    own logsumexp; adsim records again with everything changed, gives the
    right gradient, and does not restrict this function again (its
    environment changes at every call, so it is recorded at every call)."""
    import pickle
    import sys
    (tmp_path / "fitted_model.py").write_text(MODEL_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import fitted_model
    weights = np.array([0.0, 1.0, 2.0])
    blob = pickle.dumps(fitted_model.Classifier(weights))
    monkeypatch.delitem(sys.modules, "fitted_model")
    fitted = []

    def log_partition(x):
        fitted.append(pickle.loads(blob))       # changes the environment: no tape reuse
        return fitted[-1].log_partition(x)
    x = np.array([0.1, 0.2, 0.3])
    p = np.exp(weights * x) / np.sum(np.exp(weights * x))
    assert Snapshot(log_partition).reach is not None       # the walk saw no SciPy
    assert np.allclose(adsim.grad(log_partition)(x), weights * p, rtol=1e-14)
    calls = sys.modules["fitted_model"].CALLS              # imported again by pickle
    assert len(calls) == 2                                   # restricted, then everything
    x2 = np.array([0.5, -0.2, 0.1])
    p2 = np.exp(weights * x2) / np.sum(np.exp(weights * x2))
    assert np.allclose(adsim.grad(log_partition)(x2), weights * p2, rtol=1e-14)
    assert len(calls) == 3                                   # not restricted again


def test_record_changes_only_what_the_function_reaches(scipy_hooked):
    """``adsim.record`` walks f's environment for the names alone
    (``reach_of``): a NumPy-only function leaves SciPy alone, and the
    workspaces it makes with the names it spells take active values."""
    def step(u, dt=0.1):
        lap = np.zeros(len(u))
        lap[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:]
        return np.sum((u + dt * lap) ** 2)
    u = np.cos(np.linspace(0.0, 3.0, 8))
    tape = adsim.record(step, u)
    assert scipy_hooked == []
    v = np.sin(np.linspace(0.0, 2.0, 8))
    assert np.isclose(tape.forward(v), step(v), rtol=1e-14)
    check_grads(step, v)
    assert np.allclose(tape.gradient(v), adsim.grad(step)(v), rtol=1e-14)


def test_record_walks_the_keyword_arguments_too(scipy_hooked):
    """An object passed as a keyword argument is part of what f can run:
    its method calls SciPy, so the recording hooks SciPy."""
    class Model:
        def __init__(self, weights):
            self.weights = weights

        def log_partition(self, x):
            return scipy.special.logsumexp(self.weights * x)

    def loss(x, model=None):
        return model.log_partition(x)
    weights = np.array([0.0, 1.0, 2.0])
    x = np.array([0.1, 0.2, 0.3])
    tape = adsim.record(loss, x, model=Model(weights))
    assert scipy_hooked
    p = np.exp(weights * x) / np.sum(np.exp(weights * x))
    assert np.allclose(tape.gradient(x), weights * p, rtol=1e-14)


def test_record_of_code_that_exists_only_at_run_time(tmp_path, monkeypatch):
    """As above for ``adsim.record``: restricted, refused inside SciPy,
    recorded again with everything changed; the tape is right."""
    import pickle
    import sys
    (tmp_path / "fitted_model_r.py").write_text(MODEL_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import fitted_model_r
    weights = np.array([0.0, 1.0, 2.0])
    blob = pickle.dumps(fitted_model_r.Classifier(weights))
    monkeypatch.delitem(sys.modules, "fitted_model_r")

    def log_partition(x):
        return pickle.loads(blob).log_partition(x)
    x = np.array([0.1, 0.2, 0.3])
    tape = adsim.record(log_partition, x)
    assert len(sys.modules["fitted_model_r"].CALLS) == 2     # restricted, then everything
    x2 = np.array([0.5, -0.2, 0.1])
    p2 = np.exp(weights * x2) / np.sum(np.exp(weights * x2))
    assert np.allclose(tape.gradient(x2), weights * p2, rtol=1e-14)
