"""Sparse Jacobians, Hessians and patterns w.r.t. an argument that is a
container of arrays (a list, tuple or dict, nested), as adsim.jacobian and
adsim.hessian take them: one csr_array per leaf (per pair of leaves for a
Hessian), nested as the dense results nest their blocks, checked against
the dense derivatives, finite differences and replays at new points."""
import collections

import numpy as np
import pytest
import scipy.sparse as sp

import adsim
from adsim.errors import InvalidArgumentValue
from tests.fdcheck import fd_jacobian

RNG = np.random.default_rng(24)
Params = collections.namedtuple("Params", "u v")


def residual(u, v, c):
    """A banded coupling of two fields (a stencil in u, a diagonal in v)."""
    return np.concatenate([np.diff(u, 2) + np.exp(u[1:-1]) * v[1:-1],
                           v * np.sin(u) - c * v ** 2])


def objective(u, v):
    return np.sum(np.diff(u) ** 2 * v[1:]) + np.sum(np.exp(u) * v) + np.sum(v ** 3)


def _pack(kind, u, v):
    return {"list": [u, v], "tuple": (u, v), "dict": {"v": v, "u": u},
            "nested": {"u": u, "rest": [v]}, "namedtuple": Params(u, v)}[kind]


def _unpack(kind, p):
    if kind == "dict":
        return p["u"], p["v"]
    if kind == "nested":
        return p["u"], p["rest"][0]
    return p[0], p[1]


def _blocks(kind, result):
    """(block of u, block of v) from a result nested like the argument."""
    if kind == "dict":
        return result["u"], result["v"]
    if kind == "nested":
        return result["u"], result["rest"][0]
    return result[0], result[1]


def _point(n=7):
    return RNG.uniform(0.2, 1.0, n), RNG.uniform(0.5, 1.5, n)


KINDS = ["list", "tuple", "dict", "nested", "namedtuple"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["auto", "forward", "reverse", "bidirectional"])
def test_jacobian_of_a_container_matches_dense_and_differences(kind, mode):
    def F(p, c):
        return residual(*_unpack(kind, p), c)
    u, v = _point()
    c = np.array(0.3)
    p = _pack(kind, u, v)
    plan = adsim.sparse_jacobian_plan(F, p, c, mode=mode)
    J = plan(p, c)
    assert type(J) is type(p)
    Ju, Jv = _blocks(kind, J)
    assert isinstance(Ju, sp.csr_array) and Ju.shape == (12, 7) and Jv.shape == (12, 7)
    dense = _blocks(kind, adsim.jacobian(F)(p, c))
    np.testing.assert_allclose(Ju.toarray(), dense[0], rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(Jv.toarray(), dense[1], rtol=1e-13, atol=1e-14)
    fd = fd_jacobian(lambda u, v: residual(u, v, c), [u, v])
    np.testing.assert_allclose(np.hstack([Ju.toarray(), Jv.toarray()]), fd, rtol=1e-7, atol=1e-8)
    # a replay at a new point: one sweep of the same tape, no new recording
    u2, v2 = _point()
    p2 = _pack(kind, u2, v2)
    y, J2 = plan.value_and_jacobian(p2, np.array(0.7))
    np.testing.assert_allclose(y, residual(u2, v2, 0.7), rtol=1e-14)
    dense2 = _blocks(kind, adsim.jacobian(F)(p2, np.array(0.7)))
    for got, want in zip(_blocks(kind, J2), dense2):
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-13, atol=1e-14)
    assert plan.recordings == 1
    # the one-shot entry point and the pattern take the same argument
    for got, want in zip(_blocks(kind, adsim.sparse_jacobian(F, p, c, mode=mode)), (Ju, Jv)):
        np.testing.assert_array_equal(got.toarray(), want.toarray())
    for got, want in zip(_blocks(kind, adsim.jacobian_sparsity(F, p, c)), dense):
        np.testing.assert_array_equal(got.toarray(), want != 0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["auto", "star", "acyclic"])
def test_hessian_of_a_container_matches_dense_and_differences(kind, method):
    def f(p):
        return objective(*_unpack(kind, p))
    u, v = _point()
    p = _pack(kind, u, v)
    plan = adsim.sparse_hessian_plan(f, p, method=method)
    H = plan(p)
    assert type(H) is type(p)
    dense = adsim.hessian(f)(p)
    full = np.block([[b.toarray() for b in _blocks(kind, row)] for row in _blocks(kind, H)])
    want = np.block([[np.asarray(b) for b in _blocks(kind, row)] for row in _blocks(kind, dense)])
    np.testing.assert_allclose(full, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(full, full.T, rtol=0, atol=0)
    grad = adsim.grad(lambda u, v: objective(u, v), argnums=(0, 1))
    fd = fd_jacobian(lambda u, v: np.concatenate(grad(u, v)), [u, v])
    np.testing.assert_allclose(full, fd, rtol=1e-6, atol=1e-7)
    pattern = adsim.hessian_sparsity(f, p)
    np.testing.assert_array_equal(
        np.block([[b.toarray() for b in _blocks(kind, row)] for row in _blocks(kind, pattern)]),
        want != 0)
    # a replay: value, gradient (one flat piece per leaf) and Hessian
    u2, v2 = _point()
    y, g, H2 = plan.value_gradient_hessian(_pack(kind, u2, v2))
    assert y == pytest.approx(objective(u2, v2), rel=1e-14)
    for got, want in zip(_blocks(kind, g), grad(u2, v2)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    want2 = adsim.hessian(lambda uv: objective(*uv))((u2, v2))
    np.testing.assert_allclose(
        np.block([[b.toarray() for b in _blocks(kind, row)] for row in _blocks(kind, H2)]),
        np.block([[np.asarray(b) for b in row] for row in want2]), rtol=1e-12, atol=1e-13)
    assert plan.recordings == 1


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_single_array_after_a_container_is_its_own_input(mode):
    """argnum=1 names the array after a dict of two arrays: its tape input
    is the third, and the result a plain csr_array."""
    def F(p, x):
        return p["a"] * np.sin(x) + p["b"] * np.roll(x, 1)
    p = {"a": RNG.uniform(1, 2, 5), "b": RNG.uniform(1, 2, 5)}
    x = RNG.uniform(0, 1, 5)
    J = adsim.sparse_jacobian(F, p, x, argnum=1, mode=mode)
    assert isinstance(J, sp.csr_array)
    np.testing.assert_allclose(J.toarray(), adsim.jacobian(F, argnums=1)(p, x), rtol=1e-14)
    np.testing.assert_allclose(J.toarray(), fd_jacobian(lambda x: F(p, x), [x]), rtol=1e-7,
                               atol=1e-8)
    pattern = adsim.jacobian_sparsity(F, p, x, argnum=1)
    np.testing.assert_array_equal(pattern.toarray(), J.toarray() != 0)
    H = adsim.sparse_hessian(lambda p, x: np.sum(F(p, x) ** 2), p, x, argnum=-1)
    np.testing.assert_allclose(
        H.toarray(), adsim.hessian(lambda p, x: np.sum(F(p, x) ** 2), argnums=1)(p, x),
        rtol=1e-12, atol=1e-13)


def test_a_branch_change_records_again_with_the_container():
    def F(p):
        a, b = p["a"], p["b"]
        return a * b if np.sum(a) > 0 else np.cumsum(a) * b
    p = {"a": np.ones(4), "b": np.arange(1.0, 5.0)}
    plan = adsim.sparse_jacobian_plan(F, p)
    q = {"a": -np.ones(4), "b": np.arange(2.0, 6.0)}
    J = plan(q)
    assert plan.recordings == 2
    dense = adsim.jacobian(F)(q)
    for k in "ab":
        np.testing.assert_allclose(J[k].toarray(), dense[k], rtol=1e-14)


def test_a_replay_with_another_structure_is_refused():
    def F(p):
        return p["a"] * p["b"]
    plan = adsim.sparse_jacobian_plan(F, {"a": np.ones(3), "b": np.ones(3)})
    with pytest.raises((TypeError, ValueError), match="structure|keys|recorded"):
        plan({"a": np.ones(3), "c": np.ones(3)})


def test_an_argument_without_arrays_is_refused_by_name():
    with pytest.raises(InvalidArgumentValue, match="holds no arrays"):
        adsim.sparse_jacobian(lambda p, x: x * 2.0, {}, np.ones(3))


def test_several_argnums_point_to_a_container():
    from adsim.errors import InvalidArgnums
    with pytest.raises(InvalidArgnums, match="pass them in one container argument"):
        adsim.sparse_jacobian(lambda a, b: a * b, np.ones(2), np.ones(2), argnum=(0, 1))


def test_argument_errors_name_what_was_given_and_what_is_accepted():
    from adsim.errors import InvalidArgnums, InvalidArgument
    F = lambda x: np.diff(x) ** 2                                   # noqa: E731
    x = np.ones(4)
    with pytest.raises(InvalidArgnums, match=r"argnum must be one int .* got '0' \(str\)"):
        adsim.sparse_jacobian(F, x, argnum="0")
    with pytest.raises(InvalidArgumentValue, match=r"recorded with 1 argument of shapes "
                                                   r"\[\(4,\)\] but 2 were given"):
        adsim.sparse_jacobian_plan(F, x)(x, x)
    with pytest.raises(InvalidArgument, match="returned a tuple; a tape has one output"):
        adsim.sparse_jacobian(lambda x: (x, x), x)
