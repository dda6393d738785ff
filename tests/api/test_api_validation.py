"""Every entry point refuses what ``grad`` refuses, with the same typed
errors; empty arrays and zero directions give empty results; ``argnums``
follows Python's indexing; mistakes in user primitive rules name the
primitive and the rule."""
import numpy as np
import pytest

import adsim
from adsim.errors import (AdsimError, InvalidArgnums, InvalidArgumentValue, InvalidInput,
                          PrimitiveRuleError)
from adsim.testing import check_grads
from fdcheck import assert_close

X = np.array([0.5, 0.2, 0.1])


def F(z):
    return 2.0 * z * z


def f(z):
    return np.sum(z ** 3)


# entry point -> call taking (point, direction)
ENTRIES = {
    "grad": lambda x, d: adsim.grad(f)(x),
    "value_and_grad": lambda x, d: adsim.value_and_grad(f)(x),
    "jacobian": lambda x, d: adsim.jacobian(F)(x),
    "jvp": lambda x, d: adsim.jvp(F, x, d),
    "vjp": lambda x, d: adsim.vjp(F, x, d),
    "hessian": lambda x, d: adsim.hessian(f)(x),
    "hvp": lambda x, d: adsim.hvp(f, x, d),
    "grad_and_hvp": lambda x, d: adsim.grad_and_hvp(f, x, d),
    "hessp": lambda x, d: adsim.hessp(f)(x, d),
    "hvp_operator": lambda x, d: adsim.hvp_operator(f, x).matvec(d),
    "laplacian": lambda x, d: adsim.laplacian(f)(x),
    "record": lambda x, d: adsim.record(F, x),
    "check_grads": lambda x, d: check_grads(F, x),
    "jacobian_sparsity": lambda x, d: adsim.jacobian_sparsity(F, x),
    "hessian_sparsity": lambda x, d: adsim.hessian_sparsity(f, x),
    "sparse_jacobian": lambda x, d: adsim.sparse_jacobian(F, x),
    "sparse_jacobian_plan": lambda x, d: adsim.sparse_jacobian_plan(F, x),
    "sparse_hessian": lambda x, d: adsim.sparse_hessian(f, x),
    "sparse_hessian_plan": lambda x, d: adsim.sparse_hessian_plan(f, x),
}
WITH_DIRECTION = ("jvp", "vjp", "hvp", "grad_and_hvp", "hessp", "hvp_operator")

AWKWARD = {
    "complex": (np.array([1 + 1j, 2.0, 3.0]), "complex"),
    "complex-zero-imaginary": (np.array([1 + 0j, 2.0, 3.0]), "complex"),
    "None": (None, "None"),
    "object": (np.array([1.0, None, 2.0], dtype=object), "dtype object"),
    "datetime": (np.array(["2020-01-01"] * 3, dtype="datetime64[D]"), "dtype datetime64"),
    "str": (np.array(["a", "b", "c"]), "dtype <U1"),
    "bytes": (b"abc", "dtype |S3"),
}
# a ragged list of plain numbers ([[1.0], [1.0, 2.0]]) is a container of its
# items (tests/api/test_containers.py); where one array is needed:
RAGGED = [[1.0], [1.0, 2.0]]


@pytest.mark.parametrize(("entry", "awkward"), [(e, a) for e in ENTRIES for a in AWKWARD])
def test_awkward_points_raise_invalid_input(entry, awkward):
    value, words = AWKWARD[awkward]
    with pytest.raises(InvalidInput, match=words) as info:
        ENTRIES[entry](value, np.ones(3))
    assert isinstance(info.value, TypeError) and isinstance(info.value, AdsimError)


@pytest.mark.parametrize("entry", WITH_DIRECTION)
@pytest.mark.parametrize("awkward", list(AWKWARD))
def test_awkward_directions_raise_invalid_input(entry, awkward):
    value, words = AWKWARD[awkward]
    if entry == "hvp_operator" and awkward.startswith("complex"):
        # a real symmetric operator: H (a + ib) = H a + i H b, exactly
        v = np.array([1 + 2j, -1j, 0.5])
        got, want = adsim.hvp_operator(f, X).matvec(v), np.diag(6 * X) @ v
        assert np.array_equal(got.real, want.real) and np.array_equal(got.imag, want.imag)
        return
    if entry == "hvp_operator" and awkward in ("None", "bytes"):
        # not a vector of x's size: refused by the shape, as SciPy's LinearOperator would
        with pytest.raises(InvalidArgumentValue, match="x raveled"):
            ENTRIES[entry](X, value)
        return
    with pytest.raises(InvalidInput, match=words):
        ENTRIES[entry](X, value)


@pytest.mark.parametrize("entry", ["hessp", "hvp_operator", "laplacian"])
def test_ragged_points_where_one_array_is_needed(entry):
    with pytest.raises(InvalidInput, match="nested unevenly.*one array is needed"):
        ENTRIES[entry](RAGGED, np.ones(3))


@pytest.mark.parametrize("entry", WITH_DIRECTION)
def test_ragged_directions_for_an_array_point(entry):
    if entry == "hvp_operator":
        # SciPy's LinearOperator checks the shape before the operator sees the vector
        with pytest.raises(ValueError, match="inhomogeneous"):
            ENTRIES[entry](X, RAGGED)
        return
    with pytest.raises(InvalidInput, match="nested unevenly.*one array is needed"):
        ENTRIES[entry](X, RAGGED)


def test_complex_input_never_loses_its_imaginary_part():
    """The cases of the issue: these used to drop the imaginary part."""
    z = np.array([1.0 + 2.0j, 0.5])
    for call in (lambda: adsim.hessian(f)(z), lambda: adsim.hessp(f)(z, np.ones(2)),
                 lambda: adsim.laplacian(f)(z), lambda: adsim.hvp_operator(f, z),
                 lambda: adsim.hvp(f, X[:2], z), lambda: adsim.jvp(F, X[:2], z)):
        with pytest.raises(InvalidInput, match="complex"):
            call()


COMPLEX = np.ones(2) * 1j        # made outside the recording: a plain array


@pytest.mark.parametrize(("out", "words"), [
    (lambda z: COMPLEX, "return value of <lambda> is complex"),
    (lambda z: None, "return value of <lambda> is None"),
    (lambda z: np.array(["a"]), "return value of <lambda> has dtype <U1"),
])
def test_awkward_return_values_raise_invalid_input(out, words):
    for call in (lambda: adsim.record(out, X), lambda: adsim.grad(out)(X),
                 lambda: adsim.jvp(out, X, X)):
        with pytest.raises(InvalidInput, match=words):
            call()


# ------------------------------------------------------------------ empty arrays

EMPTY = np.zeros(0)


@pytest.mark.parametrize(("entry", "want"), [
    ("grad", (0,)), ("jacobian", (0, 0)), ("hessian", (0, 0)), ("hvp", (0,)),
    ("hessp", (0,)), ("hvp_operator", (0,)),
])
def test_empty_arrays_give_empty_results(entry, want):
    assert np.shape(ENTRIES[entry](EMPTY, EMPTY)) == want


def test_empty_arrays_in_every_mode():
    y, jv = adsim.jvp(F, EMPTY, EMPTY)                      # used to be SystemError
    assert y.shape == jv.shape == (0,)
    y, g = adsim.vjp(F, EMPTY, EMPTY)
    assert y.shape == g.shape == (0,)
    y, JV = adsim.jvp(F, np.zeros((2, 0)), np.zeros((2, 0, 3)))
    assert JV.shape == (2, 0, 3)
    y, (ga, gb) = adsim.vjp(lambda a, b: a * b, (EMPTY, EMPTY), np.zeros((0, 2)))
    assert ga.shape == gb.shape == (0, 2)
    assert adsim.laplacian(f)(EMPTY) == 0.0
    assert adsim.value_and_grad(f)(EMPTY) == (0.0, pytest.approx(EMPTY))
    g, hv = adsim.grad_and_hvp(f, EMPTY, EMPTY)
    assert g.shape == hv.shape == (0,)
    assert check_grads(F, EMPTY)
    with pytest.raises(ValueError, match="adsim: the tangents have shapes"):
        adsim.jvp(F, EMPTY, np.ones(3))                      # no sweep runs, still checked
    with pytest.raises(ValueError, match="adsim: the adjoint weights have shapes"):
        adsim.vjp(F, EMPTY, np.ones(3))


def test_zero_directions_give_empty_results():
    k0 = np.zeros((3, 0))
    y, JV = adsim.jvp(F, X, k0)
    assert_close(y, F(X), 0, 0)
    assert JV.shape == (3, 0)
    assert adsim.vjp(F, X, k0)[1].shape == (3, 0)
    assert adsim.hvp(f, X, k0).shape == (3, 0)
    g, HV = adsim.grad_and_hvp(f, X, k0)
    assert_close(g, 3 * X ** 2, 1e-15, 0)
    assert HV.shape == (3, 0)


# ----------------------------------------------------------------------- argnums

def two(a, b):
    return np.sum(a * b ** 2)


@pytest.mark.parametrize(("argnums", "want"), [
    (-1, "b"), (-2, "a"), ((0, -1), ("a", "b")), ((-1, 0), ("b", "a")), (np.int64(1), "b"),
])
def test_negative_argnums_count_from_the_end(argnums, want):
    a, b = X, X[::-1].copy()
    grads = {"a": b ** 2, "b": 2 * a * b}
    expected = tuple(grads[w] for w in want) if isinstance(want, tuple) else grads[want]
    for transform in (adsim.grad, lambda fn, argnums: adsim.jacobian(fn, argnums=argnums)):
        got = transform(two, argnums=argnums)(a, b)
        if isinstance(want, tuple):
            for g, e in zip(got, expected):
                assert_close(g, e, 1e-15, 0)
        else:
            assert_close(got, expected, 1e-15, 0)
    if isinstance(argnums, (int, np.integer)):
        H = adsim.hessian(lambda p, q: np.sum(p ** 3 * q), argnums=argnums)(a, b)
        assert_close(H, np.diag(6 * a * b) if want == "a" else np.zeros((3, 3)), 1e-15, 0)
        J = adsim.sparse_jacobian(lambda p, q: p * q ** 2, a, b, argnum=argnums).toarray()
        assert_close(J, np.diag(b ** 2 if want == "a" else 2 * a * b), 1e-15, 0)


@pytest.mark.parametrize(("argnums", "words"), [
    (2, "argnums=2 but two got 2 positional arguments"),
    (-3, "argnums=-3"),
    ((0, -2), "name positional argument 0 more than once"),
    ((1, 1), "more than once"),
])
def test_bad_argnums_at_call_time(argnums, words):
    for transform in (adsim.grad, adsim.value_and_grad, adsim.jacobian):
        with pytest.raises(InvalidArgnums, match=words) as info:
            transform(two, argnums=argnums)(X, X)
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("argnums", [True, "0", (), (0, 1.0), None])
def test_bad_argnums_types_at_transform_time(argnums):
    with pytest.raises(InvalidArgnums, match="argnums must be an int"):
        adsim.grad(two, argnums=argnums)


def test_sparse_argnum_is_checked_like_argnums():
    with pytest.raises(InvalidArgnums, match="argnum=-3"):
        adsim.sparse_jacobian(lambda p, q: p * q, X, X, argnum=-3)
    with pytest.raises(InvalidArgnums, match="one int"):
        adsim.jacobian_sparsity(lambda p, q: p * q, X, X, argnum=(0, 1))
    pattern = adsim.hessian_sparsity(lambda p, q: np.sum(p * q ** 2), X, X, argnum=-1)
    assert np.array_equal(pattern.toarray(), np.eye(3, dtype=bool))


# ------------------------------------------------------------- primitive rules

def _prim(value=np.sin, jvp=None, vjp=None, **kw):
    return adsim.primitive(value, jvp=jvp, vjp=vjp, name="mine", **kw)


@pytest.mark.parametrize(("prim", "call", "words"), [
    (_prim(value=lambda x: x * 1j), "grad", "value function of primitive `mine` returned complex"),
    (_prim(value=lambda x: None), "grad", "value function of primitive `mine` returned None"),
    (_prim(value=lambda x: (x, x)), "grad", "returned a tuple; a primitive has one output"),
    (_prim(value=lambda x: np.array(["a"] * x.size)), "grad", "returned a <U1 array"),
    (_prim(jvp=lambda a, o, t: None), "jvp", "jvp rule of primitive `mine` returned None"),
    (_prim(jvp=lambda a, o, t: np.cos(a[0]) * t[0] * 1j), "jvp", "jvp rule .* complex"),
    (_prim(jvp=lambda a, o, t: np.ones(5)), "jvp", "primitive returned 5 numbers where 3 were "
                                                   "expected: the jvp rule of primitive `mine`"),
    (_prim(vjp=lambda a, o, w: None), "grad", "vjp rule of primitive `mine` returned a NoneType"),
    (_prim(vjp=lambda a, o, w: np.cos(a[0]) * w), "grad", "return a tuple with one adjoint"),
    (_prim(vjp=lambda a, o, w: (w, w)), "grad", "returned 2 adjoints for 1 argument"),
    (_prim(vjp=lambda a, o, w: (np.ones(4),)), "grad", "for argument 0|argument 0 has shape"),
    (_prim(vjp=lambda a, o, w: (w * 1j,)), "grad", "vjp rule .* complex"),
    (_prim(vjp=lambda a, o, w: ("x",)), "grad", "vjp rule of primitive `mine` returned a <U1"),
])
def test_mistakes_in_primitive_rules_name_the_primitive_and_rule(prim, call, words):
    g = lambda z: np.sum(prim(z) ** 2)  # noqa: E731
    with pytest.raises(PrimitiveRuleError, match=words) as info:
        if call == "grad":
            adsim.grad(g)(X)
        else:
            adsim.jvp(g, X, np.ones(3))
    assert isinstance(info.value, ValueError)


def test_primitive_value_changing_shape_at_replay_is_refused():
    calls = []

    def value(x):
        calls.append(1)
        return np.sin(x) if len(calls) == 1 else np.sin(x)[:2]
    prim = _prim(value=value, vjp=lambda a, o, w: (np.cos(a[0]) * w,))
    tape = adsim.record(lambda z: np.sum(prim(z)), X)
    with pytest.raises(PrimitiveRuleError, match=r"returned shape \(2,\), the output has shape"):
        tape.gradient(X)


def test_primitive_rules_returning_none_and_zero_dimensional_adjoints():
    """None is a zero adjoint; a 0-d adjoint broadcasts (both as documented)."""
    scaled = adsim.primitive(lambda a, b: a * np.sum(b), name="scaled",
                             vjp=lambda args, o, w: (w * np.sum(args[1]), None))
    a, b = X, np.array([1.0, 2.0])
    assert_close(adsim.grad(lambda p: np.sum(scaled(p, b)))(a), np.full(3, 3.0), 0, 0)
    ones = adsim.primitive(lambda x: x * 0.0 + 1.0, name="ones", vjp=lambda a, o, w: (0.0,))
    assert_close(adsim.grad(lambda z: np.sum(ones(z) * z))(X), np.ones(3), 0, 0)
