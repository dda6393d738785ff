"""Lists and tuples of active values where NumPy takes an array_like
(adsim/_np/array_likes.py, adsim/_record/listed.py): each case against the
same computation written with np.stack (values, tangents and adjoints), the
two modes against each other, a few against finite differences, a property
test over random nested lists, user-style models; the parameters that are
not array_likes stay as given; what cannot be done raises clearly."""
import inspect
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from adsim import _numpy_api as api
from adsim._np import array_likes
from adsim.testing import check_grads

npsum = np.sum                  # names bound before any recording: NumPy's own
npmean = np.mean

X = np.array([0.3, 0.7, 1.1, 0.45])
W = np.array([[1.0, 2.0], [0.5, -1.0]])            # plain data made outside the functions
DATA = np.array([0.2, -0.4, 1.3, 0.8, 2.1])


def _rows(*rows):
    """np.stack of np.stack: the explicit form of a nested list."""
    return np.stack([np.stack(list(r)) for r in rows])


# (case, the computation with lists or tuples, the same with np.stack)
CASES = [
    ("sum of a comprehension", lambda x: np.sum([np.sin(t) * t for t in x]),
     lambda x: np.sum(np.stack([np.sin(t) * t for t in x]))),
    ("mean of two scalars", lambda x: np.mean([x[0], x[1]]),
     lambda x: np.mean(np.stack([x[0], x[1]]))),
    ("mean of arrays along an axis", lambda x: np.mean([x, x ** 2], axis=0),
     lambda x: np.mean(np.stack([x, x ** 2]), axis=0)),
    ("atleast_2d of a list of arrays", lambda x: np.atleast_2d([x, 2.0 * x]),
     lambda x: np.atleast_2d(np.stack([x, 2.0 * x]))),
    ("list of scalars minus an array", lambda x: [x[0], x[1], x[2], x[3]] - x[::-1],
     lambda x: np.stack([x[0], x[1], x[2], x[3]]) - x[::-1]),
    ("array minus a list made inside", lambda x: np.array([1.0, 2.0, 3.0, 4.0]) - [x[0], x[1],
                                                                                  x[2], x[3]],
     lambda x: np.array([1.0, 2.0, 3.0, 4.0]) - np.stack([x[0], x[1], x[2], x[3]])),
    ("std of a list", lambda x: np.std([x[0], x[1], x[2]]),
     lambda x: np.std(np.stack([x[0], x[1], x[2]]))),
    ("var of a tuple, ddof", lambda x: np.var((x[0], x[1], x[3]), ddof=1),
     lambda x: np.var(np.stack([x[0], x[1], x[3]]), ddof=1)),
    ("append of lists", lambda x: np.append([x[0], x[1]], [x[2]]),
     lambda x: np.append(np.stack([x[0], x[1]]), np.stack([x[2]]))),
    ("ravel of a nested list", lambda x: np.ravel([[x[0], x[1]], [x[2], x[3]]]),
     lambda x: np.ravel(_rows([x[0], x[1]], [x[2], x[3]]))),
    ("r_ with active items", lambda x: np.r_[x[0], x[1], 2.0, x[2:]],
     lambda x: np.concatenate([np.stack([x[0], x[1]]), np.ones(1) * 2.0, x[2:]])),
    ("c_ with active items", lambda x: np.c_[x, x ** 2],
     lambda x: np.stack([x, x ** 2], axis=1)),
    ("max of a list", lambda x: np.max([x[0], x[1]]),
     lambda x: np.max(np.stack([x[0], x[1]]))),
    ("min of a tuple", lambda x: np.min((x[3], x[1], x[2])),
     lambda x: np.min(np.stack([x[3], x[1], x[2]]))),
    ("dot of a list with plain data", lambda x: np.dot([x[0], x[1]], W),
     lambda x: np.dot(np.stack([x[0], x[1]]), W)),
    ("dot of a tuple with an active array", lambda x: np.dot((x[0], x[1]), x[2:]),
     lambda x: np.dot(np.stack([x[0], x[1]]), x[2:])),
    ("a nested list is a matrix", lambda x: np.linalg.det([[x[0], x[1]], [x[2], x[3]]]),
     lambda x: np.linalg.det(_rows([x[0], x[1]], [x[2], x[3]]))),
    ("stack of nested lists", lambda x: np.stack([[x[0], x[1]], [x[2], x[3]]], axis=1),
     lambda x: np.stack([np.stack([x[0], x[1]]), np.stack([x[2], x[3]])], axis=1)),
    ("concatenate of a list and an array", lambda x: np.concatenate([[x[0], x[1]], x[2:]]),
     lambda x: np.concatenate([np.stack([x[0], x[1]]), x[2:]])),
    ("vstack of tuples", lambda x: np.vstack(((x[0], x[1]), (x[2], x[3]))),
     lambda x: np.vstack([np.stack([x[0], x[1]]), np.stack([x[2], x[3]])])),
    ("ufunc with a list and an active operand", lambda x: np.add([x[0], x[1]], x[2:]),
     lambda x: np.add(np.stack([x[0], x[1]]), x[2:])),
    ("ufunc of a list and a number beside an active array",
     lambda x: np.maximum([x[0], 0.5], x[1:3]),
     lambda x: np.maximum(np.stack([x[0], 0.5 + 0.0 * x[0]]), x[1:3])),
    ("exp of a list made an array", lambda x: np.exp(np.array([x[0], x[1]])),
     lambda x: np.exp(np.stack([x[0], x[1]]))),
    ("mixture of active values, numbers and arrays",
     lambda x: np.sum([x[:2], [1.0, 2], np.array([0.5, x[3]])], axis=0),
     lambda x: np.sum(np.stack([x[:2], np.array([1.0, 2.0]),
                                np.stack([0.5 + 0.0 * x[3], x[3]])]), axis=0)),
    ("integers promote", lambda x: np.prod([x[0], 2, np.float64(1.5), True]),
     lambda x: np.prod(np.stack([x[0], 2.0 + 0.0 * x[0], 1.5 + 0.0 * x[0], 1.0 + 0.0 * x[0]]))),
    ("split fed back", lambda x: np.mean(np.split(x, 2), axis=1),
     lambda x: np.mean(np.stack(np.split(x, 2)), axis=1)),
    ("array_split fed to norm", lambda x: np.linalg.norm(np.array_split(x, 2), axis=1),
     lambda x: np.linalg.norm(np.stack(np.array_split(x, 2)), axis=1)),
    ("einsum operands", lambda x: np.einsum("i,ij->j", [x[0], x[1]], W),
     lambda x: np.einsum("i,ij->j", np.stack([x[0], x[1]]), W)),
    ("where chooses from a list", lambda x: np.where(x[:2] > 0.5, [x[2], x[3]], 0.0),
     lambda x: np.where(x[:2] > 0.5, np.stack([x[2], x[3]]), 0.0)),
    ("clip to active bounds", lambda x: np.clip([x[0], x[1]], 0.4, [x[2], 1.0]),
     lambda x: np.clip(np.stack([x[0], x[1]]), 0.4, np.stack([x[2], 1.0 + 0.0 * x[2]]))),
    ("weighted average", lambda x: np.average([x[0], x[1]], weights=[x[2], 1.0]),
     lambda x: np.average(np.stack([x[0], x[1]]), weights=np.stack([x[2], 1.0 + 0.0 * x[2]]))),
    ("interp of listed values", lambda x: np.interp(0.4, [0.0, 1.0], [x[0], x[1]]),
     lambda x: np.interp(0.4, [0.0, 1.0], np.stack([x[0], x[1]]))),
    ("solve with nested lists", lambda x: np.linalg.solve([[x[0], x[1]], [x[2], 2.0]],
                                                          [1.0, x[3]]),
     lambda x: np.linalg.solve(_rows([x[0], x[1]], [x[2], 2.0 + 0.0 * x[2]]),
                               np.stack([1.0 + 0.0 * x[3], x[3]]))),
    ("polyval of listed coefficients", lambda x: np.polyval([x[0], x[1], 1.0], x[2]),
     lambda x: np.polyval(np.stack([x[0], x[1], 1.0 + 0.0 * x[1]]), x[2])),
    ("cov of two variables", lambda x: np.cov([x, x ** 2]),
     lambda x: np.cov(np.stack([x, x ** 2]))),
    ("cumsum of a tuple", lambda x: np.cumsum((x[0], x[1], x[2])),
     lambda x: np.cumsum(np.stack([x[0], x[1], x[2]]))),
    ("sort of a list", lambda x: np.sort([x[3], x[0], x[1]]),
     lambda x: np.sort(np.stack([x[3], x[0], x[1]]))),
    ("fft of a list", lambda x: np.abs(np.fft.rfft([x[0], x[1], x[2], 0.0])),
     lambda x: np.abs(np.fft.rfft(np.stack([x[0], x[1], x[2], 0.0 * x[2]])))),
    ("matmul operator with a list", lambda x: [x[0], x[1]] @ x.reshape(2, 2),
     lambda x: np.stack([x[0], x[1]]) @ x.reshape(2, 2)),
    ("dot method", lambda x: x[:2].dot([x[2], x[3]]),
     lambda x: x[:2].dot(np.stack([x[2], x[3]]))),
    ("remainder operator", lambda x: x[:2] % [x[2], x[3]],
     lambda x: x[:2] % np.stack([x[2], x[3]])),
    ("comparison with a list", lambda x: np.where(x[:2] < [x[2], x[3]], x[:2], 0.0),
     lambda x: np.where(x[:2] < np.stack([x[2], x[3]]), x[:2], 0.0)),
    ("meshgrid of lists", lambda x: np.prod(np.meshgrid([x[0], x[1]], [x[2], 1.0]), axis=0),
     lambda x: np.prod(np.meshgrid(np.stack([x[0], x[1]]), np.stack([x[2], 1.0 + 0 * x[2]])),
                       axis=0)),
]


def _tangents(f, v, w):
    """(value, J v, J^T w) of ``f`` at X."""
    value, jv = ad.jvp(f, (X,), (v,))
    value2, (jtw,) = ad.vjp(f, (X,), w)
    np.testing.assert_array_equal(value, value2)
    return np.asarray(value), np.asarray(jv), jtw


@pytest.mark.parametrize("listed, stacked", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_lists_give_what_the_stack_gives(listed, stacked):
    rng = np.random.default_rng(0)
    v = rng.standard_normal(X.shape)
    shape = np.shape(stacked(X.copy()))
    w = rng.standard_normal(shape)
    value, jv, jtw = _tangents(listed, v, w)
    want_value, want_jv, want_jtw = _tangents(stacked, v, w)
    np.testing.assert_allclose(value, want_value, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(value, np.asarray(listed(X.copy())), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jv, want_jv, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(jtw, want_jtw, rtol=1e-13, atol=1e-14)
    # forward and reverse mode agree: <w, J v> = <J^T w, v>
    np.testing.assert_allclose(np.sum(w * jv), np.sum(jtw * v), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("case", ["sum of a comprehension", "a nested list is a matrix",
                                  "mixture of active values, numbers and arrays",
                                  "solve with nested lists", "split fed back"])
def test_lists_against_finite_differences(case):
    listed = dict((c[0], c[1]) for c in CASES)[case]
    check_grads(listed, X, modes=("fwd", "rev"))


def test_tuples_work_as_lists():
    g_list = ad.grad(lambda x: np.sum([x[0] * x[1], x[2]]))(X)
    g_tuple = ad.grad(lambda x: np.sum((x[0] * x[1], x[2])))(X)
    np.testing.assert_array_equal(g_list, g_tuple)
    np.testing.assert_array_equal(g_list, [X[1], X[0], 1.0, 0.0])


# ---- user-style models ------------------------------------------------------

def norm_logpdf(y, mu, s):
    return -0.5 * ((y - mu) / s) ** 2 - np.log(s) - 0.5 * np.log(2.0 * np.pi)


def test_a_log_density_summed_over_a_list():
    def loglik(theta):
        mu, s = theta[0], np.exp(theta[1])
        return np.sum([norm_logpdf(y, mu, s) for y in DATA])

    theta = np.array([0.4, -0.2])
    value, g = ad.value_and_grad(loglik)(theta)
    mu, s = theta[0], np.exp(theta[1])
    z = (DATA - mu) / s
    np.testing.assert_allclose(value, np.sum(norm_logpdf(DATA, mu, s)), rtol=1e-14)
    np.testing.assert_allclose(g, [np.sum(z / s), np.sum(z ** 2 - 1.0)], rtol=1e-13)
    check_grads(loglik, theta, order=2)


def test_a_banded_matrix_assembled_row_by_row_from_lists():
    """``A[i, i-1:i+2] = [a, b, c]``: a list (or tuple) of active values
    assigned into an array is the array NumPy makes of it."""
    def boundary_value_problem(p):
        n = 6
        A = np.zeros((n, n))
        A[0] = (1.0, 0.0, 0.0, 0.0, 0.0, p[2])
        for i in range(1, n - 1):
            A[i, i - 1:i + 2] = [p[0], -2 * p[0] - p[1], p[0]]
        A[-1, -2:] = [-p[0], 1.0 + p[0]]
        return np.linalg.solve(A, np.linspace(0.0, 1.0, n))

    p = np.array([1.3, 0.2, 0.1])
    A = np.zeros((6, 6))
    A[0, [0, 5]] = 1.0, p[2]
    for i in range(1, 5):
        A[i, i - 1:i + 2] = p[0], -2 * p[0] - p[1], p[0]
    A[5, 4:] = -p[0], 1.0 + p[0]
    np.testing.assert_allclose(ad.record(boundary_value_problem, p).forward(p),
                               np.linalg.solve(A, np.linspace(0.0, 1.0, 6)), rtol=1e-14)
    check_grads(boundary_value_problem, p, order=2)


def test_mixture_weights_from_a_list():
    densities = np.exp(-0.5 * (DATA[:, None] - np.array([-1.0, 0.0, 2.0])) ** 2)

    def mixture(p):
        w1, w2 = p[0], p[1]
        w = np.array([w1, w2, 1 - w1 - w2])
        return np.sum(np.log(densities @ w)) + np.sum(np.log(np.dot(densities, [w1, w2,
                                                                                1 - w1 - w2])))
    p = np.array([0.2, 0.5])
    value, g = ad.value_and_grad(mixture)(p)
    mix = densities @ np.array([p[0], p[1], 1 - p[0] - p[1]])
    np.testing.assert_allclose(value, 2 * np.sum(np.log(mix)), rtol=1e-14)
    d = densities[:, :2] - densities[:, 2:]
    np.testing.assert_allclose(g, 2 * np.sum(d / mix[:, None], axis=0), rtol=1e-13)
    check_grads(mixture, p)


# ---- a property: random nested lists ----------------------------------------

def _leaf(x, spec):
    """A scalar piece: an active value, or a plain number."""
    kind, i, c = spec
    return x[i] * c if kind == "active" else c


def _piece(x, spec):
    """A piece of length 2: an active slice, a plain array, or a list of scalar pieces."""
    kind, detail = spec
    if kind == "slice":
        i, c = detail
        return x[i:i + 2] * c
    if kind == "plain":
        return np.asarray(detail, dtype=float)
    return [_leaf(x, s) for s in detail]


def _stacked(x, recipe):
    rows, specs = recipe
    if not rows:
        return np.stack([_leaf(x, s) + 0.0 * x[0] for s in specs])
    return np.stack([np.stack([_leaf(x, s) + 0.0 * x[0] for s in p[1]])
                     if p[0] == "list" else _piece(x, p) + 0.0 * x[0] for p in specs])


def _listed(x, recipe, as_tuple):
    rows, specs = recipe
    seq = tuple if as_tuple else list
    if not rows:
        return seq(_leaf(x, s) for s in specs)
    return seq(seq(_piece(x, p)) if p[0] == "list" else _piece(x, p) for p in specs)


_LEAF = st.tuples(st.sampled_from(["active", "plain"]), st.integers(0, 3),
                  st.floats(-2.0, 2.0).filter(lambda c: abs(c) > 0.1))
_PIECE = st.one_of(
    st.tuples(st.just("slice"), st.tuples(st.integers(0, 2), st.floats(0.5, 2.0))),
    st.tuples(st.just("plain"), st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=2)),
    st.tuples(st.just("list"), st.lists(_LEAF, min_size=2, max_size=2)))
_RECIPES = st.one_of(st.tuples(st.just(False), st.lists(_LEAF, min_size=1, max_size=4)),
                     st.tuples(st.just(True), st.lists(_PIECE, min_size=1, max_size=3)))
_FUNCTIONS = {          # of the nested list ``a`` and the active input ``x``
    "sum": lambda a, x: np.sum(a), "mean": lambda a, x: np.mean(a),
    "max": lambda a, x: np.max(a), "norm": lambda a, x: np.linalg.norm(a),
    "ravel": lambda a, x: np.ravel(a) @ np.ravel(a), "cumsum": lambda a, x: np.cumsum(a)[-1],
    "std": lambda a, x: np.std(a), "exp of add": lambda a, x: np.sum(np.exp(np.add(a, x[0]))),
    "subtract": lambda a, x: np.sum((a - x[1]) ** 2),
    "dot": lambda a, x: np.sum(np.dot(a, x[:np.shape(a)[-1]])),
}


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(recipe=_RECIPES, name=st.sampled_from(sorted(_FUNCTIONS)), as_tuple=st.booleans())
def test_random_nested_lists_give_what_the_stack_gives(recipe, name, as_tuple):
    func = _FUNCTIONS[name]

    def listed(x):
        return func(_listed(x, recipe, as_tuple), x) + 0.0 * x[0]

    def stacked(x):
        return func(_stacked(x, recipe), x) + 0.0 * x[0]
    value, g = ad.value_and_grad(listed)(X)
    want_value, want_g = ad.value_and_grad(stacked)(X)
    np.testing.assert_allclose(value, want_value, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(g, want_g, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(value, listed(X.copy()), rtol=1e-13, atol=1e-14)


# ---- which arguments are array_likes ----------------------------------------

# NumPy's functions, bound here: inside a recording the names in ``numpy`` are adsim's wrappers
PLAIN_ARGUMENTS = [
    (np.split, lambda x, a, b: ((x, [a, b]), {})), (np.pad, lambda x, a, b: ((x, [(a, b)]), {})),
    (np.take, lambda x, a, b: ((x, [a]), {})), (np.reshape, lambda x, a, b: ((x, (a, b)), {})),
    (np.transpose, lambda x, a, b: ((x, (a,)), {})), (np.block, lambda x, a, b: (([[a, b]],), {})),
    (np.quantile, lambda x, a, b: ((x, [a, b]), {})),
    (np.sum, lambda x, a, b: ((x,), {"axis": (a,)})),
    (np.einsum, lambda x, a, b: ((x, [0], x, [0]), {})),
    (np.linalg.cond, lambda x, a, b: ((x, [a]), {})),
    (np.rollaxis, lambda x, a, b: ((x, 0, [a]), {})),
    (np.select, lambda x, a, b: (([a > 0], [x]), {})),
]
SUM, CONCATENATE = np.sum, np.concatenate


def test_arguments_that_are_not_array_likes_stay_as_given():
    seen = []

    def f(x):
        a, b = x[0], x[1]
        for func, arguments in PLAIN_ARGUMENTS:
            args, kwargs = arguments(x, a, b)
            new_args, new_kwargs = array_likes.arguments(func, args, kwargs)
            seen.append((func.__name__, all(n is o for n, o in zip(new_args, args)) and
                         all(new_kwargs[k] is kwargs[k] for k in kwargs)))
        new_args, _ = array_likes.arguments(SUM, ([a, b],), {"axis": 0})
        seen.append(("sum", isinstance(new_args[0], ad.Active) and new_args[0].shape == (2,)))
        new_args, _ = array_likes.arguments(CONCATENATE, ([[a, b], x],), {})
        seen.append(("concatenate", isinstance(new_args[0][0], ad.Active) and
                     new_args[0][1] is x))
        return np.sum(x)
    ad.grad(f)(X)
    assert len(seen) == len(PLAIN_ARGUMENTS) + 2
    assert [name for name, ok in seen if not ok] == []


def test_split_indices_and_pad_widths_are_numpys():
    def f(x):
        first, rest = np.split(x, [1])
        return np.sum(np.pad(rest, [(1, 2)]) ** 2) + first[0] + np.sum(np.take(x, [0, 2]))
    g = ad.grad(f)(X)
    np.testing.assert_allclose(g, [2.0, 2 * X[1], 2 * X[2] + 1.0, 2 * X[3]])


def _documented_types(func):
    """{parameter: the type NumPy's docstring gives it}."""
    doc = inspect.getdoc(func) or ""
    m = re.search(r"^Parameters\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.S | re.M)
    found = {}
    for line in (m.group(1).splitlines() if m else []):
        entry = re.match(r"^(\*{0,2}[A-Za-z_][\w, *]*?)\s*:\s*(.+)$", line)
        if entry:
            for name in entry.group(1).split(","):
                found[name.strip().lstrip("*")] = entry.group(2)
    return found


def _converted(func, name):
    positional, variadic, keyword = array_likes._table(func)
    params = array_likes._signature(func).parameters
    if params[name].kind is inspect.Parameter.VAR_POSITIONAL:
        return variadic is not None
    return keyword.get(name) is not None or (
        params[name].kind is inspect.Parameter.POSITIONAL_ONLY and
        positional[list(params).index(name)] is not None)


def test_the_table_follows_numpys_documentation():
    """Every parameter converted is documented as array-like data, and every
    parameter NumPy documents as array_like is converted or named in PLAIN
    (or in NOT_HERE for its function)."""
    checked, wrong = 0, []
    for func in api.FUNCTIONS:
        if isinstance(func, np.ufunc):
            continue
        documented = _documented_types(func)
        for name in array_likes._signature(func).parameters:
            kind = documented.get(name)
            if kind is None:
                continue
            checked += 1
            if _converted(func, name):
                if not re.search(r"array|sequence|list|scalar|ndarray|float", kind):
                    wrong.append(("converted", func.__name__, name, kind))
            elif re.search(r"array.like", kind) and name not in array_likes.PLAIN and \
                    name not in array_likes.NOT_HERE.get(func, ()):
                wrong.append(("not converted", func.__name__, name, kind))
    assert not wrong
    assert checked > 300


def test_stand_in_signatures_match_numpys_own():
    for name, stand_in in array_likes._COMPILED.items():
        try:
            own = inspect.signature(getattr(np, name))
        except (TypeError, ValueError):             # NumPy before 2.4: nothing to compare
            continue
        assert list(own.parameters) == list(inspect.signature(stand_in).parameters), name


# ---- what is refused, and how ----------------------------------------------

@pytest.mark.parametrize("ragged", [
    lambda x: np.sum([x[:2], x[0]]),
    lambda x: np.mean([[x[0], x[1]], [x[2]]]),
    lambda x: np.dot([x[:2], x[:3]], np.ones(3)),
    lambda x: np.add([x[:2], x[0]], x[:2]),
    lambda x: [x[:2], x[:3]] - x[0],
], ids=["sum", "mean", "dot", "ufunc", "operator"])
def test_ragged_lists_raise_numpys_value_error(ragged):
    with pytest.raises(ValueError, match="inhomogeneous"):
        ragged(X.copy())                # NumPy's own
    with pytest.raises(ValueError, match="inhomogeneous"):
        ad.grad(lambda x: np.sum(ragged(x)))(X)


EXP, ADD = np.exp, np.add      # taken before any recording: NumPy's own ufuncs


def test_a_ufunc_under_another_name_without_an_active_operand_is_named():
    with pytest.raises(ad.UnsupportedOperation,
                       match=r"`numpy.exp` received active values inside a Python list"):
        ad.grad(lambda x: np.sum(EXP([x[0], x[1]])))(X)
    with pytest.raises(ad.UnsupportedOperation, match=r"`numpy.add` received"):
        ad.grad(lambda x: np.sum(ADD([x[0], x[1]], 1.0)))(X)


def test_a_list_and_plain_data_in_an_operator_are_named():
    def f(x):
        residuals = [x[0] ** 2, x[1]]
        return np.sum(residuals - W[0])
    with pytest.raises(ad.UnsupportedOperation, match=r"the operator `-` received active"):
        ad.grad(f)(X)


def test_names_bound_before_recording_and_interposition_off_say_so():
    with pytest.raises(ad.UnsupportedOperation, match=r"`numpy.mean` received active values.*"
                                                      r"from numpy import sum"):
        ad.grad(lambda x: npmean([x[0], x[1]]))(X)
    # NumPy's own sum reduces a list by np.add.reduce, looked up in numpy: adsim's stand-in
    np.testing.assert_allclose(ad.grad(lambda x: npsum([x[0], x[1] ** 2]))(X),
                               [1.0, 2 * X[1], 0.0, 0.0])
    with ad.interposition(False):
        with pytest.raises(ad.UnsupportedOperation, match="Interposition is off"):
            ad.grad(lambda x: np.sum([x[0], x[1]]))(X)
        # calls NumPy hands to adsim convert their lists either way
        g = ad.grad(lambda x: np.dot([x[0], x[1]], x[2:]) + np.sum(np.add([x[0], 1.0], x[:2])))(X)
    np.testing.assert_allclose(g, [X[2] + 2.0, X[3] + 1.0, X[0], X[1]])


DET = np.linalg.det


def test_the_wrappers_are_in_place_only_while_recording():
    seen = {}

    def f(x):
        seen["sum"] = np.sum is not SUM and np.sum.__wrapped__ is SUM
        seen["det"] = np.linalg.det is not DET and np.linalg.det.__wrapped__ is DET
        seen["exp"] = isinstance(np.exp, np.ufunc)
        seen["plain"] = np.sum([1.0, 2.0]) == 3.0 and type(np.sum(DATA)) is np.float64
        return np.sum([x[0], x[1]])
    ad.grad(f)(X)
    assert seen == {"sum": True, "det": True, "exp": True, "plain": True}
    assert np.sum is SUM and np.linalg.det is DET


def test_a_function_without_a_rule_still_names_itself():
    with pytest.raises(ad.UnsupportedOperation, match="cannot differentiate `numpy.sort_complex`"):
        ad.grad(lambda x: np.sum(np.sort_complex([x[0], x[1]]).real))(X)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["row", "other", "plain", "element"]),
                          st.integers(0, 4)), min_size=2, max_size=12))
def test_views_of_one_array_joined_with_other_pieces(pieces):
    """Rows and elements of one 2-d array (views of one root, joined as that
    root with one scatter), in any order and repeated, beside rows of
    another array and plain rows: values and gradients those of NumPy and
    of finite differences."""
    def f(x):
        A = x[:15].reshape(5, 3)
        B = np.sin(x[15:]).reshape(5, 3)
        rows = []
        for kind, i in pieces:
            if kind == "row":
                rows.append(A[i])
            elif kind == "other":
                rows.append(B[i] * 2.0)
            elif kind == "plain":
                rows.append(W[0, 0] * np.arange(3.0) + i)
            else:                   # three elements of A's column i % 3, as a row
                rows.append(np.array([A[0, i % 3], A[i, i % 3], A[4, i % 3]]))
        return np.sum(np.array(rows) ** 3) + np.sum(np.concatenate(rows) * DATA[0])
    x = np.random.default_rng(len(pieces)).uniform(-1.0, 1.0, 30)
    check_grads(f, x, modes=("rev",), order=1)
    assert np.isclose(ad.record(f, x).forward(x), f(x), rtol=1e-13)


def test_rows_of_one_array_stack_as_one_scatter():
    """np.array of many rows of one array records as many ops as of two
    rows: the rows are views of one root, gathered from it together."""
    def stacked(k):
        def f(x):
            A = x.reshape(50, 4)
            return np.sum(np.array([A[i % 50] for i in range(k)]) ** 2)
        return f
    x = np.linspace(0.1, 2.0, 200)
    assert len(ad.record(stacked(2), x)) == len(ad.record(stacked(300), x))
    tape = ad.record(stacked(300), x)
    want = 2 * x.reshape(50, 4) * np.bincount(np.arange(300) % 50, minlength=50)[:, None]
    np.testing.assert_allclose(tape.gradient(x), want.ravel(), rtol=1e-14)
