"""The explicit namespace ``adsim.scipy`` (adsim/_scipy/explicit.py): every
SciPy case of the function table (tests/functable_cases.py), written with
``adsim.scipy`` instead of SciPy and recorded with interposition off, gives
the values and derivatives of the unchanged SciPy call recorded with
interposition on; every explicit function is exercised; plain calls are
SciPy's; a name without a rule is not there."""
import importlib
import types

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import adsim as ad
import adsim.scipy as asp
import adsim.scipy.spatial.distance  # noqa: F401
import functable_cases as table
from fdcheck import distinct
from functable_cases import name_of

MODULES = ("scipy.special", "scipy.linalg", "scipy.stats", "scipy.signal",
           "scipy.spatial.distance", "scipy.optimize", "scipy.integrate", "scipy.interpolate",
           "scipy.ndimage")
EXPLICIT = {m: importlib.import_module(f"adsim.{m}") for m in MODULES}
MVN_FROZEN = asp.stats.multivariate_normal(table.MVN_FROZEN.mean, table.MVN_FROZEN.cov)


def _replacements():
    """SciPy's modules and objects -> adsim.scipy's, by identity."""
    out = {id(importlib.import_module(m)): module for m, module in EXPLICIT.items()}
    out[id(table.MVN_FROZEN)] = MVN_FROZEN
    for m, module in EXPLICIT.items():
        scipy_module = importlib.import_module(m)
        for name in module.__all__:
            out[id(getattr(scipy_module, name))] = getattr(module, name)
    return out


REPLACE = _replacements()
SCIPY = types.SimpleNamespace(**{m.split(".")[1]: EXPLICIT[m] for m in MODULES
                                 if m.count(".") == 1})


def explicit(obj, depth=0):
    """``obj`` with the SciPy objects it uses (in its globals and closure,
    recursively) replaced by those of adsim.scipy."""
    if id(obj) in REPLACE:
        return REPLACE[id(obj)]
    if isinstance(obj, types.MethodType) and obj.__self__ is table.MVN_FROZEN:
        return getattr(MVN_FROZEN, obj.__name__)
    if not isinstance(obj, types.FunctionType) or depth > 4:
        return obj
    names = {k: REPLACE[id(v)] for k, v in obj.__globals__.items() if id(v) in REPLACE}
    names["scipy"] = SCIPY
    closure = obj.__closure__ and tuple(types.CellType(explicit(c.cell_contents, depth + 1))
                                        for c in obj.__closure__)
    return types.FunctionType(obj.__code__, {**obj.__globals__, **names}, obj.__name__,
                              obj.__defaults__, closure)


def _scipy_cases():
    for key, cases in table.CASES.items():
        name = name_of(key)
        # scipy.sparse is reached through the operators and constructors of its
        # classes, and scipy.fft through its backend's dispatch, which only
        # interposition takes over: adsim.scipy has no sparse or fft namespace
        # (docs/scipy.md, "Sparse matrices", "scipy.fft"); an OdeSolution made by
        # SciPy's own solve_ivp is SciPy's class, whose calls only interposition
        # routes (docs/integrate.md, dense output)
        if name.startswith("scipy.") and not name.startswith(("scipy.sparse", "scipy.fft",
                                                               "scipy.integrate._ivp")):
            for i, c in enumerate(cases):
                yield pytest.param(c, id=f"{name}[{c.label or i}]")


def _flat(out):
    return np.concatenate([np.ravel(o) for o in out]) if isinstance(out, tuple) else np.ravel(out)


@pytest.mark.parametrize("c", list(_scipy_cases()))
def test_explicit_calls_equal_the_hooked_ones(c):
    x = distinct(np.random.default_rng(7), c.shape, *c.domain)
    f = lambda v: _flat(c.f(v))                                        # noqa: E731
    g = explicit(c.f)
    assert g is not c.f or isinstance(c.f, np.ufunc)
    hooked = ad.jacobian(f)(x), f(x.copy())
    with ad.interposition(False):
        fx = lambda v: _flat(g(v))                                     # noqa: E731
        explicit_jacobian = ad.jacobian(fx)(x)
    np.testing.assert_array_equal(explicit_jacobian, hooked[0])
    np.testing.assert_array_equal(fx(x.copy()), hooked[1])


def test_every_explicit_function_has_a_case():
    """Each name of adsim.scipy that is not SciPy's own ufunc is met by a
    case above, as the SciPy function or distribution it stands for (so none
    escapes the comparison), by a refusal of the table, or by a value-only
    case compared elsewhere (fmin_cobyla: tests/scipy/test_implicit_constrained.py)."""
    met = set()
    for key in (*table.CASES, *table.REFUSED, *table.VALUE_ONLY):
        met |= {id(key), id(getattr(key, "__self__", None))}
        owner = getattr(key, "__qualname__", "").rsplit(".", 1)[0]      # a class's method
        met |= {id(cls) for m in EXPLICIT for cls in vars(importlib.import_module(m)).values()
                if isinstance(cls, type) and any(
                    k.__qualname__ == owner and k.__module__ == key.__module__
                    for k in cls.__mro__)}
    missing = []
    for m, module in EXPLICIT.items():
        for name in module.__all__:
            scipy_object = getattr(importlib.import_module(m), name)
            if getattr(module, name) is not scipy_object and id(scipy_object) not in met:
                missing.append(f"{m}.{name}")
    assert missing == []


def test_the_namespace_is_made_from_the_tables():
    from adsim._scipy import hooks
    for m in ("scipy.linalg", "scipy.signal", "scipy.spatial.distance", "scipy.optimize",
              "scipy.integrate"):
        want = {path for (where, path) in hooks.rules(m) if where == m and
                hooks._resolve(where, path) is not None}
        assert set(EXPLICIT[m].__all__) == want
    from adsim._scipy.distributions import CONTINUOUS, DISCRETE
    from adsim._scipy.stats_functions import HOOKS as SUMMARIES
    assert set(asp.stats.__all__) == set(CONTINUOUS) | set(DISCRETE) | {
        "multivariate_normal", "dirichlet", "gaussian_kde"} | {name for _, name in SUMMARIES}
    assert {"gammaln", "logsumexp", "softmax", "zeta", "kv"} <= set(asp.special.__all__)


def test_imports_and_names_without_a_rule():
    from adsim.scipy.special import gammaln, logsumexp
    import adsim.scipy.special as sp
    assert gammaln is scipy.special.gammaln and sp.logsumexp is logsumexp
    assert ad.scipy.linalg.cho_solve is asp.linalg.cho_solve
    for module, name in ((asp.special, "softplus"), (asp.linalg, "schur"), (asp.stats, "levy_stable"),
                         (asp.special, "no_such_function")):
        with pytest.raises(AttributeError, match="docs/scipy.md") as info:
            getattr(module, name)
        assert name in str(info.value)
    with pytest.raises(AttributeError):
        asp.no_such_module


def test_plain_calls_are_scipys():
    """Outside recordings, drop-in replacements: SciPy's values and types."""
    a = np.array([0.3, -1.2, 2.0])
    S = np.array([[2.0, 0.5], [0.5, 1.0]])
    assert asp.special.logsumexp(a) == scipy.special.logsumexp(a)
    assert type(asp.special.logsumexp(a)) is type(scipy.special.logsumexp(a))
    np.testing.assert_array_equal(asp.linalg.cho_solve(asp.linalg.cho_factor(S), a[:2]),
                                  scipy.linalg.cho_solve(scipy.linalg.cho_factor(S), a[:2]))
    np.testing.assert_array_equal(asp.stats.norm.logpdf(a, 0.5, 2.0),
                                  scipy.stats.norm.logpdf(a, 0.5, 2.0))
    np.testing.assert_array_equal(asp.stats.norm(0.5, 2.0).cdf(a), scipy.stats.norm(0.5, 2.0).cdf(a))
    assert asp.stats.norm.interval(0.9) == scipy.stats.norm.interval(0.9)
    assert isinstance(asp.stats.gamma, scipy.stats.rv_continuous)
    frozen = asp.stats.dirichlet(np.array([1.5, 2.0, 2.5]))
    point = np.array([0.2, 0.3, 0.5])
    assert frozen.logpdf(point) == scipy.stats.dirichlet(np.array([1.5, 2.0, 2.5])).logpdf(point)


def test_frozen_distributions_with_plain_parameters_route_active_points():
    """SciPy freezes plain parameters; the frozen object still routes an
    active point (norm through its distribution's class, dirichlet through
    the distribution it delegates to)."""
    alpha = np.array([1.5, 2.0, 2.5])
    with ad.interposition(False):
        g = ad.grad(lambda p: asp.stats.dirichlet(alpha).logpdf(p / np.sum(p)))(
            np.array([0.2, 0.3, 0.5]))
        h = ad.grad(lambda x: np.sum(asp.stats.norm(0.5, 2.0).logpdf(x)))(np.array([0.1, 0.4]))
    want = ad.grad(lambda p: scipy.stats.dirichlet(alpha).logpdf(p / np.sum(p)))(
        np.array([0.2, 0.3, 0.5]))
    np.testing.assert_array_equal(g, want)
    np.testing.assert_allclose(h, -(np.array([0.1, 0.4]) - 0.5) / 4.0, rtol=1e-14)


def test_explicit_distributions_pickle_and_copy():
    import copy
    import pickle
    for obj in (asp.stats.norm, asp.stats.norm(0.5, 2.0), asp.stats.dirichlet, MVN_FROZEN):
        for again in (pickle.loads(pickle.dumps(obj)), copy.copy(obj), copy.deepcopy(obj)):
            assert type(again) is type(obj)
    x = np.array([0.1, 0.4])
    again = pickle.loads(pickle.dumps(asp.stats.norm(0.5, 2.0)))
    with ad.interposition(False):
        g = ad.grad(lambda v: np.sum(again.logpdf(v)))(x)
    np.testing.assert_allclose(g, -(x - 0.5) / 4.0, rtol=1e-14)
