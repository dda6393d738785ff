"""Parameters in containers (lists, tuples, dicts, namedtuples of arrays) as
arguments, directions, weights and return values of the functional API,
checked against central differences and the dot-product test."""
from collections import namedtuple

import numpy as np
import pytest

import adsim
from adsim._containers.tree import flatten, unflatten
from adsim.errors import InvalidInput, UnsupportedOperation
from adsim.testing import check_grads

H = 1e-5
TOL = dict(rtol=1e-7, atol=1e-9)
Pair = namedtuple("Pair", "scale shift")


# ---- an independent walk of the containers, for the references ----------------

def leaves(t):
    if t is None:
        return []
    if isinstance(t, dict):
        return [leaf for k in sorted(t) for leaf in leaves(t[k])]
    if isinstance(t, (tuple, list)):
        return [leaf for e in t for leaf in leaves(e)]
    return [np.asarray(t, dtype=float)]


def rebuild(like, values):
    it = iter(values)

    def build(t):
        if t is None:
            return None
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return type(t)(*[build(e) for e in t])
        if isinstance(t, (tuple, list)):
            return type(t)(build(e) for e in t)
        return next(it)
    return build(like)


def flat(t):
    ls = leaves(t)
    return np.concatenate([a.ravel() for a in ls]) if ls else np.zeros(0)


def moved(x, v, s):
    return rebuild(x, [a + s * d for a, d in zip(leaves(x), leaves(v))])


def central(f, x, v):
    """Directional derivative of f (any container output) along v, flat."""
    return (flat(f(moved(x, v, H))) - flat(f(moved(x, v, -H)))) / (2 * H)


def gradient_by_differences(f, x):
    """Each element of each leaf of x perturbed in turn: the gradient, flat."""
    return np.array([central(f, x, v)[0] for v in unit_directions(x)])


def unit_directions(x):
    """The unit vectors of the flat parameter space, each in x's structure."""
    shapes = [a.shape for a in leaves(x)]
    for e in np.eye(sum(a.size for a in leaves(x))):
        pieces = np.split(e, np.cumsum([int(np.prod(s)) for s in shapes])[:-1])
        yield rebuild(x, [q.reshape(s) for q, s in zip(pieces, shapes)])


def same_structure(a, b):
    """Same containers, keys and leaf shapes (compared without adsim's code)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, dict):
        return type(b) is dict and sorted(a) == sorted(b) and all(
            same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(
            same_structure(p, q) for p, q in zip(a, b))
    return isinstance(b, np.ndarray) and np.shape(a) == b.shape


def random_like(x, rng):
    return rebuild(x, [rng.standard_normal(a.shape) for a in leaves(x)])


# ---- the functions ---------------------------------------------------------------

def mlp_params(rng, sizes=(3, 5, 4, 2)):
    return [(0.5 * rng.standard_normal((m, n)), 0.1 * rng.standard_normal(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_loss(params, X, y):
    h = X
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum((h - y) ** 2) / len(X)


def nested_loss(p):
    (W, b), rest = p["layers"][0], p["layers"][1]
    h = np.tanh(p["x"] @ W + b)
    return np.sum(np.sin(h) * rest[0]) * p["scale"] + np.sum(rest[1]["c"] ** 2)


def nested_params(rng):
    return {"x": rng.standard_normal(3), "scale": 1.5, "unused": None,
            "layers": [(rng.standard_normal((3, 4)), rng.standard_normal(4)),
                       [rng.standard_normal(4), {"c": rng.standard_normal(2)}]]}


# ---- gradients -------------------------------------------------------------------

def test_mlp_with_a_list_of_pairs_matches_central_differences_leaf_by_leaf():
    rng = np.random.default_rng(0)
    params, X, y = mlp_params(rng), rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    value, g = adsim.value_and_grad(mlp_loss)(params, X, y)
    assert same_structure(params, g) and isinstance(g[0], tuple)
    assert np.isclose(value, mlp_loss(params, X, y), rtol=1e-14)
    want = gradient_by_differences(lambda p: mlp_loss(p, X, y), params)
    np.testing.assert_allclose(flat(g), want, **TOL)


@pytest.mark.parametrize("make", [
    lambda rng: {"w": rng.standard_normal(3), "a": rng.standard_normal((2, 2)), "k": 0.7},
    nested_params,
    lambda rng: Pair(rng.standard_normal(3), (rng.standard_normal(3), 2.0)),
], ids=["dict", "nested", "namedtuple"])
def test_gradient_has_the_structure_of_the_argument(make):
    def loss(p):
        if isinstance(p, Pair):
            return np.sum(np.exp(p.scale * p.shift[0])) * p.shift[1]
        if "layers" in p:
            return nested_loss(p)
        return np.sum(np.cos(p["w"])) * p["k"] + np.sum(p["a"] @ p["a"]) * p["k"] ** 2
    p = make(np.random.default_rng(1))
    g = adsim.grad(loss)(p)
    assert same_structure(p, g)          # None stays None; Python floats get 0-d arrays
    np.testing.assert_allclose(flat(g), gradient_by_differences(loss, p), **TOL)


def test_several_container_arguments_and_argnums():
    rng = np.random.default_rng(2)
    a, b = {"u": rng.standard_normal(3)}, [rng.standard_normal(3), rng.standard_normal(3)]
    f = lambda p, q, s: np.sum(p["u"] * q[0] ** 2 + s * q[1])  # noqa: E731
    ga, gb = adsim.grad(f, argnums=(0, 1))(a, b, 3.0)
    np.testing.assert_allclose(ga["u"], b[0] ** 2, rtol=1e-15)
    np.testing.assert_allclose(gb[0], 2 * a["u"] * b[0], rtol=1e-15)
    np.testing.assert_allclose(gb[1], np.full(3, 3.0), rtol=1e-15)


def test_has_aux_returns_plain_aux_values_that_follow_new_inputs():
    def loss(p):
        r = p["w"] * 2.0 - 1.0
        return np.sum(r ** 2), {"residual": r, "norm": np.sqrt(np.sum(r ** 2)), "tag": 3}
    vg = adsim.value_and_grad(loss, has_aux=True)
    for w in (np.array([1.0, 2.0]), np.array([-0.5, 4.0])):      # the second call replays
        (value, aux), g = vg({"w": w})
        r = 2 * w - 1
        assert value == np.sum(r ** 2)
        assert type(aux["residual"]) is np.ndarray and np.array_equal(aux["residual"], r)
        assert np.isclose(aux["norm"], np.linalg.norm(r), rtol=1e-15) and aux["tag"] == 3
        np.testing.assert_allclose(g["w"], 4 * r, rtol=1e-15)
    assert vg.tapes.recordings == 1
    g, aux = adsim.grad(lambda x: (np.sum(x ** 3), x[0]), has_aux=True)(np.array([2.0, 1.0]))
    assert np.array_equal(g, [12.0, 3.0]) and aux == 2.0


def test_has_aux_needs_a_pair_with_a_scalar_loss():
    with pytest.raises(TypeError, match="pair"):
        adsim.grad(lambda x: np.sum(x), has_aux=True)(np.ones(2))
    with pytest.raises(ValueError, match="scalar loss"):
        adsim.grad(lambda x: (x, 1.0), has_aux=True)(np.ones(2))
    with pytest.raises(TypeError, match="has_aux=True"):
        adsim.grad(lambda x: (np.sum(x), x))(np.ones(2))


# ---- jvp, vjp, hvp, jacobian ---------------------------------------------------------

def two_outputs(p):
    W, b = p[0]
    return {"y": np.tanh(W @ p[1] + b), "s": np.sum(p[1] ** 3) * b[0]}


def test_jvp_and_vjp_on_containers_match_differences_and_each_other():
    rng = np.random.default_rng(3)
    x = [(rng.standard_normal((2, 3)), rng.standard_normal(2)), rng.standard_normal(3)]
    v = random_like(x, rng)
    y, jv = adsim.jvp(two_outputs, (x,), (v,))
    assert same_structure(two_outputs(x), y) and same_structure(y, jv)
    np.testing.assert_allclose(flat(y), flat(two_outputs(x)), rtol=1e-14)
    np.testing.assert_allclose(flat(jv), central(two_outputs, x, v), **TOL)
    w = random_like(y, rng)
    y2, (jtw,) = adsim.vjp(two_outputs, (x,), w)
    assert same_structure(x, jtw)
    np.testing.assert_allclose(flat(y2), flat(y), rtol=1e-14)
    assert np.isclose(flat(jtw) @ flat(v), flat(w) @ flat(jv), rtol=1e-12)       # dot-product test
    assert np.isclose(flat(jtw) @ flat(v), flat(w) @ central(two_outputs, x, v), rtol=1e-7)


def test_k_directions_and_weights_in_a_trailing_axis():
    rng = np.random.default_rng(4)
    x = {"a": rng.standard_normal(3), "b": rng.standard_normal(2)}
    f = lambda p: [p["a"] * p["b"][0], np.sum(p["b"] ** 2)]  # noqa: E731
    V = {"a": rng.standard_normal((3, 2)), "b": rng.standard_normal((2, 2))}
    _, JV = adsim.jvp(f, (x,), (V,))
    assert JV[0].shape == (3, 2) and JV[1].shape == (2,)
    for k in range(2):
        vk = {key: d[..., k] for key, d in V.items()}
        np.testing.assert_allclose(flat([JV[0][:, k], JV[1][k]]), central(f, x, vk), **TOL)
    W = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    _, (JTW,) = adsim.vjp(f, (x,), W)
    assert JTW["a"].shape == (3, 2)
    for k in range(2):
        _, (one,) = adsim.vjp(f, (x,), [W[0][:, k], W[1][k]])
        np.testing.assert_allclose(flat({n: d[..., k] for n, d in JTW.items()}), flat(one),
                                   rtol=1e-14)


def test_hvp_on_a_container_matches_differences_of_the_gradient():
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    params = mlp_params(rng, (3, 3, 2))
    v = random_like(params, rng)
    loss = lambda p: mlp_loss(p, X, y)  # noqa: E731
    hv = adsim.hvp(loss, params, v)
    assert same_structure(params, hv)
    g = adsim.grad(loss)
    want = (flat(g(moved(params, v, H))) - flat(g(moved(params, v, -H)))) / (2 * H)
    np.testing.assert_allclose(flat(hv), want, rtol=1e-6, atol=1e-8)
    g0, hv2 = adsim.grad_and_hvp(lambda p, s: loss(p) * s, params, v, 2.0)
    np.testing.assert_allclose(flat(hv2), 2 * flat(hv), rtol=1e-13)
    np.testing.assert_allclose(flat(g0), 2 * flat(g(params)), rtol=1e-13)


def test_hessian_of_a_container_has_blocks_of_leaf_by_leaf_shape():
    def f(p, c):
        return np.sum(p["a"] ** 3 * p["b"][0]) * c + p["b"][1] ** 2 * np.sum(np.sin(p["a"]))
    x = {"a": np.array([[1.0, 2.0, 0.5]]), "b": [np.array(3.0), 0.5]}
    hess = adsim.hessian(f)(x, 2.0)
    assert hess["a"]["a"].shape == (1, 3, 1, 3) and hess["a"]["b"][0].shape == (1, 3)
    assert hess["b"][0]["a"].shape == (1, 3) and hess["b"][1]["b"][1].shape == ()
    sizes = [a.size for a in leaves(x)]
    dense = np.vstack([np.hstack([np.reshape(block, (si, sj)) for block, sj in zip(
        leaves(row), sizes)]) for row, si in zip([hess["a"], hess["b"][0], hess["b"][1]], sizes)])
    g = lambda p: flat(adsim.grad(f)(p, 2.0))  # noqa: E731
    cols = np.array([(g(moved(x, v, H)) - g(moved(x, v, -H))) / (2 * H)
                     for v in unit_directions(x)]).T
    np.testing.assert_allclose(dense, cols, rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_container_output_and_input():
    rng = np.random.default_rng(6)
    x = [(rng.standard_normal((2, 3)), rng.standard_normal(2)), rng.standard_normal(3)]
    for mode in ("forward", "reverse"):
        J = adsim.jacobian(two_outputs, mode=mode)(x)
        assert set(J) == {"s", "y"}
        assert J["y"][0][0].shape == (2, 2, 3) and J["s"][1].shape == (3,)
        # column by column: J applied to each unit direction equals the differences
        cols = np.array([central(two_outputs, x, v) for v in unit_directions(x)]).T
        rows = {key: np.concatenate([a.reshape(np.size(two_outputs(x)[key]), -1)
                                     for a in leaves(J[key])], axis=1) for key in ("s", "y")}
        np.testing.assert_allclose(np.vstack([rows["s"], rows["y"]]), cols, **TOL)


def test_check_grads_on_containers_passes_and_catches_a_wrong_derivative():
    rng = np.random.default_rng(7)
    x = [(rng.standard_normal((2, 3)), rng.standard_normal(2)), rng.standard_normal(3)]
    assert check_grads(two_outputs, x, order=2)
    wrong = lambda p: {"y": p[1] * adsim.stop_gradient(p[1]), "s": np.sum(p[0][0])}  # noqa: E731
    with pytest.raises(AssertionError, match="differs"):
        check_grads(wrong, x)


# ---- structure errors and the cache ----------------------------------------------------

def test_a_direction_of_another_structure_is_refused_clearly():
    x = {"a": np.ones(2), "b": np.ones(3)}
    f = lambda p: p["a"] * np.sum(p["b"])  # noqa: E731
    with pytest.raises(InvalidInput, match=r"tangent 0 has the structure \{'a': \*\}.*"
                                           r"\{'a': \*, 'b': \*\}"):
        adsim.jvp(f, (x,), ({"a": np.ones(2)},))
    with pytest.raises(InvalidInput, match="direction has the structure"):
        adsim.hvp(lambda p: np.sum(f(p)), x, [np.ones(2), np.ones(3)])
    with pytest.raises(InvalidInput, match="adjoint weight has the structure"):
        adsim.vjp(lambda p: [p["a"], p["b"]], (x,), (np.ones(2), np.ones(3)))
    with pytest.raises(ValueError, match="adjoint weight"):
        adsim.vjp(lambda p: [p["a"], p["b"]], (x,), [np.ones(2), np.ones(2)])


def test_containers_where_one_array_is_needed_are_named():
    params = [np.ones(2), np.ones(3)]
    for call in (lambda: adsim.laplacian(lambda p: np.sum(p[0]))(params),
                 lambda: adsim.jvp(np.sin, np.ones(2), params)):
        with pytest.raises(InvalidInput, match="is a container") as info:
            call()
        assert "dtype object" not in str(info.value)
    with pytest.raises(InvalidInput, match=r"argument 0\['b'\] of <lambda> has dtype <U4"):
        adsim.grad(lambda p: np.sum(p["a"]))({"a": np.ones(2), "b": "text"})


def test_lists_of_numbers_stay_arrays():
    g = adsim.grad(lambda x: np.sum(x ** 2))([1.0, 2.0, 3.0])
    assert type(g) is np.ndarray and np.array_equal(g, [2.0, 4.0, 6.0])


def packed_loss(args):
    """autograd's tests pack arguments as ``([1, 2, 3], 4.0)``."""
    a, b = args
    return np.sum(np.sin(a) * a) * b + b ** 3


# a list or tuple of plain numbers nested unevenly: NumPy has no array for it
# (ValueError: inhomogeneous shape), so it is a container of its items, each
# read by the same rule: [1, 2, 3] one array leaf, 4.0 a number leaf
UNEVEN = (([1, 2, 3], 4.0), [[1.0], [1.0, 2.0]], [1.5, [2.0, 3.0], [[4.0, 5.0]]],
          ([[1.0, 2.0], [3.0]], (0.5,)))


def uneven_loss(t):
    return sum(np.sum(np.cos(leaf) * (k + 1.0)) for k, leaf in enumerate(leaves(t))) * \
        np.sum(leaves(t)[0] ** 2)


def as_arrays(t):
    """The container adsim reads: lists of numbers nested evenly become arrays."""
    if isinstance(t, (list, tuple)) and not _even_numbers(t):
        return type(t)(as_arrays(e) for e in t)
    return np.asarray(t, dtype=float)


def _even_numbers(t):
    try:
        return np.asarray(t, dtype=float).dtype == float
    except ValueError:
        return False


@pytest.mark.parametrize("x", UNEVEN, ids=repr)
def test_uneven_lists_of_numbers_are_containers_of_their_items(x):
    reference = as_arrays(x)
    g = adsim.grad(uneven_loss)(x)
    assert same_structure(reference, g)
    np.testing.assert_allclose(flat(g), gradient_by_differences(uneven_loss, reference), **TOL)
    value, g2 = adsim.value_and_grad(uneven_loss)(x)
    assert value == pytest.approx(uneven_loss(reference), rel=1e-14)
    np.testing.assert_allclose(flat(g2), flat(g), rtol=0, atol=0)
    v = random_like(reference, np.random.default_rng(2))
    _, jv = adsim.jvp(uneven_loss, (x,), (v,))
    np.testing.assert_allclose(jv, flat(g) @ flat(v), rtol=1e-12)
    hv = adsim.hvp(uneven_loss, x, v)
    assert same_structure(reference, hv)
    np.testing.assert_allclose(flat(hv), central(lambda p: flat(adsim.grad(uneven_loss)(p)),
                                                 reference, v), rtol=1e-6, atol=1e-8)
    assert check_grads(uneven_loss, x)
    tape = adsim.record(uneven_loss, x)
    assert same_structure(reference, tape.gradient(x))


def test_autograds_packed_arguments():
    """grad, jacobian and hessian of ``([1, 2, 3], 4.0)``: a tuple of an
    array and a number, as autograd's own tests pass them."""
    x = ([1, 2, 3], 4.0)
    a, b = np.array([1.0, 2.0, 3.0]), 4.0
    ga, gb = adsim.grad(packed_loss)(x)
    np.testing.assert_allclose(ga, (np.cos(a) * a + np.sin(a)) * b, rtol=1e-14)
    np.testing.assert_allclose(gb, np.sum(np.sin(a) * a) + 3 * b ** 2, rtol=1e-14)
    (Jaa, Jab), (Jba, Jbb) = adsim.hessian(packed_loss)(x)
    assert Jaa.shape == (3, 3) and Jab.shape == (3,) and Jba.shape == (3,) and Jbb.shape == ()
    np.testing.assert_allclose(Jbb, 6 * b, rtol=1e-14)
    np.testing.assert_allclose(Jab, np.cos(a) * a + np.sin(a), rtol=1e-14)
    (Ja, Jb), = [adsim.jacobian(lambda t: np.sin(t[0]) * t[1])(x)]
    np.testing.assert_allclose(Ja, np.diag(np.cos(a) * b), rtol=1e-14)
    np.testing.assert_allclose(Jb, np.sin(a), rtol=1e-14)
    y, (wa, wb) = adsim.vjp(lambda a, b: np.sin(a) * b, ([1, 2, 3], 4.0), np.ones(3))
    np.testing.assert_allclose(wa, np.cos(a) * b, rtol=1e-14)


def test_uneven_lists_where_one_array_is_needed_say_what_they_are():
    for call in (lambda: adsim.laplacian(packed_loss)(([1, 2, 3], 4.0)),
                 lambda: adsim.hessp(packed_loss)(([1, 2, 3], 4.0), ([1, 0, 0], 1.0)),
                 lambda: adsim.jvp(np.sin, np.ones(2), [[1.0], [1.0, 2.0]])):
        with pytest.raises(InvalidInput, match="nested unevenly.*one array is needed"):
            call()
    with pytest.raises(InvalidInput, match=r"dtype <U1"):        # not numbers: refused
        adsim.grad(lambda p: np.sum(p[0]))(([1.0, 2.0], ["a", 1.0]))


def test_containers_of_active_values_inside_a_recording_are_refused_but_by_grad_jvp_vjp():
    inner = adsim.jacobian(lambda p: p[0] * p[1])
    with pytest.raises(UnsupportedOperation, match="container of active values"):
        adsim.grad(lambda x: np.sum(inner([x, x])))(np.ones(2))
    # grad: test_nested_container_gradients.py; jvp, vjp: test_nested_transforms.py


def test_the_cache_keys_on_the_structure():
    f = adsim.grad(lambda p: sum(np.sum(np.sin(a)) for a in leaves_of(p)))
    rng = np.random.default_rng(8)
    first = f([rng.standard_normal(2), rng.standard_normal(3)])
    again = f([np.zeros(2), np.ones(3)])                      # same structure and shapes
    assert f.tapes.recordings == 1 and np.allclose(again[1], np.cos(1.0), rtol=1e-15)
    assert same_structure(first, again)
    f((np.zeros(2), np.ones(3)))                              # a tuple, not a list
    f({"a": np.zeros(2), "b": np.ones(3)})                    # a dict of the same leaves
    f([np.zeros(2), np.ones(3), np.ones(1)])                  # one leaf more
    assert f.tapes.recordings == 4
    g = f({"a": np.ones(2), "b": np.ones(3)})
    assert f.tapes.recordings == 4 and np.allclose(g["a"], np.cos(1.0), rtol=1e-15)


def leaves_of(p):
    return list(p.values()) if isinstance(p, dict) else list(p)


def _record_loss(p, x):
    h = np.tanh(p["layers"][0][0] @ x + p["layers"][0][1])
    return np.sum((p["layers"][1][0] @ h + p["layers"][1][1]) ** 2) + p["scale"] * np.sum(x ** 2)


def _record_params(seed):
    rng = np.random.default_rng(seed)
    return {"layers": [(rng.standard_normal((3, 2)), rng.standard_normal(3)),
                       (rng.standard_normal((1, 3)), rng.standard_normal(1))],
            "scale": np.array(0.3)}


def _leaves_close(a, b):
    la, lb = flatten(a)[0], flatten(b)[0]
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-13)


def test_record_takes_containers_and_answers_in_their_structure():
    p, x = _record_params(0), np.array([0.4, -0.8])
    tape = adsim.record(_record_loss, p, x)
    p2, x2 = _record_params(1), np.array([-0.1, 0.6])        # a replay at a new point
    np.testing.assert_allclose(tape.forward(p2, x2), _record_loss(p2, x2), rtol=1e-14)
    _leaves_close(tape.gradient(p2, x2), adsim.grad(_record_loss, argnums=(0, 1))(p2, x2))
    v = (_record_params(2), np.array([1.0, 0.5]))
    y, t = tape.jvp((p2, x2), v)
    _, t_ref = adsim.jvp(_record_loss, (p2, x2), v)
    np.testing.assert_allclose(t, t_ref, rtol=1e-12)
    _leaves_close(tape.vjp((p2, x2), 1.0)[1], tape.gradient(p2, x2))
    hv = tape.hvp((p2, x2), v)
    for a, b in zip(flatten(hv)[0], flatten(_hvp_by_differences(p2, x2, v))[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    J = tape.jacobian(p2, x2)
    _leaves_close(J, tape.gradient(p2, x2))


def _hvp_by_differences(p, x, v, h=1e-6):
    g = adsim.grad(_record_loss, argnums=(0, 1))
    flat, tree = flatten((p, x))
    dirs = flatten(v)[0]
    plus = g(*unflatten(tree, [a + h * d for a, d in zip(flat, dirs)]))
    minus = g(*unflatten(tree, [a - h * d for a, d in zip(flat, dirs)]))
    out = [(a - b) / (2 * h) for a, b in zip(flatten(plus)[0], flatten(minus)[0])]
    return unflatten(flatten(plus)[1], out)


def test_a_recorded_container_of_another_structure_is_refused():
    p, x = _record_params(0), np.array([0.4, -0.8])
    tape = adsim.record(_record_loss, p, x)
    q = dict(p)
    del q["scale"]
    with pytest.raises(InvalidInput, match="structure"):
        tape.gradient(q, x)
    with pytest.raises(ValueError, match="2 arguments"):
        tape.gradient(p)
