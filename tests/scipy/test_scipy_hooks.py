"""How unchanged SciPy functions reach adsim's rules (adsim/_scipy/hooks.py):
every name of a hooked function is routed while a recording runs, plain
calls still run SciPy's own code (with its keyword defaults), nothing stays
changed after the recording (also when it fails), and concurrent threads,
recording or not, see the right behaviour."""
import inspect
import threading

import numpy as np
import pytest
import scipy.linalg
import scipy.special
from scipy.special import logsumexp

import adsim as ad
from fdcheck import assert_close
from paths import ROOT

X = np.array([0.3, -1.2, 2.0])
lse_alias = scipy.special.logsumexp


def _softmax_gradient(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@pytest.mark.parametrize("call", [
    lambda z: logsumexp(z),                      # bound by `from scipy.special import ...`
    lambda z: scipy.special.logsumexp(z),        # module attribute
    lambda z: lse_alias(z),                      # another name bound before recording
])
def test_every_name_of_a_hooked_function_is_routed(call):
    assert_close(ad.grad(call)(X), _softmax_gradient(X), rtol=1e-14, what="gradient")


def test_nothing_stays_changed_after_a_recording_even_a_failed_one():
    functions = [logsumexp, scipy.linalg.solve_triangular, scipy.linalg.eigh]
    before = [(f.__code__, f.__kwdefaults__, inspect.signature(f)) for f in functions]
    ad.grad(lambda z: logsumexp(z))(X)

    def failing(z):
        logsumexp(z)
        raise KeyError("inside the recording")
    with pytest.raises(KeyError):
        ad.grad(failing)(X)
    after = [(f.__code__, f.__kwdefaults__, inspect.signature(f)) for f in functions]
    assert after == before


def test_plain_calls_inside_a_recording_run_scipy_with_its_defaults():
    S = np.array([[2.0, 0.5], [0.5, 1.0]])
    seen = {}

    def f(z):
        seen["lse"] = logsumexp(np.arange(3.0))
        seen["eigh"] = scipy.linalg.eigh(S)[0]          # keyword-only defaults (lower=True)
        seen["inv"] = scipy.linalg.inv(S)               # keyword-only assume_a=None
        return np.sum(z)
    ad.grad(f)(X)
    assert type(seen["lse"]) is np.float64 and seen["lse"] == logsumexp(np.arange(3.0))
    assert np.array_equal(seen["eigh"], scipy.linalg.eigh(S)[0])
    assert np.array_equal(seen["inv"], scipy.linalg.inv(S))


def test_a_thread_that_does_not_record_gets_scipys_results_meanwhile():
    A = np.array([[0.1, 0.4], [-0.3, 0.2]])
    want = scipy.linalg.expm(A)
    got = {}

    def other():
        got["expm"] = scipy.linalg.expm(A)
        got["lse"] = logsumexp(X)

    def f(z):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        return logsumexp(z)
    ad.grad(f)(X)
    assert type(got["expm"]) is np.ndarray and np.array_equal(got["expm"], want)
    assert got["lse"] == logsumexp(X)


def test_overlapping_recordings_in_two_threads_keep_the_hooks():
    """The hooks stay until the last recording ends: thread A keeps using a
    hooked function after thread B's recording has finished."""
    b_done = threading.Event()
    results = {}

    def a_function(z):
        first = logsumexp(z)
        b_done.wait(10.0)
        return first + logsumexp(2.0 * z)

    def thread_b():
        results["b"] = ad.grad(lambda z: logsumexp(z))(X)
        b_done.set()

    def thread_a():
        results["a"] = ad.grad(a_function)(X)
    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_close(results["b"], _softmax_gradient(X), rtol=1e-14, what="thread B")
    assert_close(results["a"], _softmax_gradient(X) + 2.0 * _softmax_gradient(2.0 * X),
                 rtol=1e-14, what="thread A")
    assert logsumexp.__kwdefaults__ is None


def test_a_function_with_a_closure_is_hooked_and_restored():
    """scipy.linalg.solve_triangular is a batching wrapper (a closure): the
    route keeps its free variables."""
    f = scipy.linalg.solve_triangular
    assert f.__code__.co_freevars
    T = np.array([[2.0, 1.0], [0.0, 3.0]])
    g = ad.grad(lambda b: np.sum(f(T, b)))(np.ones(2))
    assert_close(g, np.linalg.solve(T.T, np.ones(2)), rtol=1e-14, what="gradient")
    assert np.array_equal(f(T, np.ones(2)), np.linalg.solve(T, np.ones(2)))


def test_tapes_are_reused_while_another_thread_records():
    """The tape cache fingerprints SciPy's own code of a hooked closure
    (solve_triangular), not the route another thread's recording put in."""
    T = np.array([[2.0, 1.0], [0.0, 3.0]])
    g = ad.grad(lambda x: np.sum(scipy.linalg.solve_triangular(T, x)))
    g(np.ones(2))
    inside, release = threading.Event(), threading.Event()

    def holder(z):
        inside.set()
        release.wait(10.0)
        return logsumexp(z)
    other = threading.Thread(target=lambda: ad.grad(holder)(X))
    other.start()
    inside.wait(10.0)
    for shift in (1.0, 2.0):
        g(np.ones(2) + shift)
    release.set()
    other.join()
    g(np.ones(2))
    assert g.tapes.recordings == 1


def test_every_hooked_function_of_every_table_is_restored():
    """All rule tables (linalg, special, stats, signal, spatial.distance,
    optimize): each listed SciPy function exists in this SciPy and has its
    own code and keyword defaults back after a recording."""
    import importlib

    import scipy.optimize  # noqa: F401  (modules imported before the recording are hooked)
    import scipy.signal  # noqa: F401
    import scipy.spatial.distance  # noqa: F401
    from adsim._scipy import hooks
    functions = []
    for table in hooks._TABLES.values():
        for module, path in importlib.import_module(table).HOOKS:
            function = hooks._resolve(module, path)
            assert function is not None, f"{module}.{path} is not a Python function here"
            functions.append(function)
    before = [(f.__code__, f.__kwdefaults__) for f in functions]
    ad.grad(lambda z: logsumexp(scipy.signal.convolve(z, [1.0, 2.0])))(X)
    assert [(f.__code__, f.__kwdefaults__) for f in functions] == before


def test_every_function_with_a_rule_is_documented():
    """docs/scipy.md names every hooked function, every scipy.special ufunc
    with a rule and every distribution of the table."""
    import importlib
    import re

    from adsim._np.special import _table as numpy_side_table
    from adsim._scipy import distributions, hooks
    from adsim._scipy.ufuncs import _same_as_numpy, _table
    page = (ROOT / "docs" / "scipy.md").read_text()
    names = {path.split(".")[-1] for table in hooks._TABLES.values()
             for _, path in importlib.import_module(table).HOOKS
             if not path.split(".")[-1].startswith("_")}
    names -= {"pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "pmf", "logpmf",
              "entropy", "mean", "var", "std", "stats", "moment", "rvs", "support", "nnlf", "fit",
              "expect"}
    names |= {u.__name__.lstrip("_") for u in (*_table(), *_same_as_numpy(), *numpy_side_table())}
    names |= set(distributions.CONTINUOUS) | set(distributions.DISCRETE)
    missing = sorted(n for n in names if not re.search(rf"`[^`]*\b{n}\b[^`]*`", page))
    assert not missing, f"docs/scipy.md does not name {missing}"
