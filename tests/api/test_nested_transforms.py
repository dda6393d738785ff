"""Every transformation inside a recording: jvp, vjp, hvp, hessian, hessp,
laplacian and has_aux nest like grad and jacobian (each is made of nested
derivatives), checked against central differences of the function they
are called in."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, check_tape, fd_jacobian

X = np.array([0.3, -0.5, 0.9])
F = lambda y: np.sum(np.sin(y) * y ** 2)  # noqa: E731
A = np.array([1.0, 2.0, 3.0])


def check_gradient(outer, x, rtol=1e-7, atol=1e-8):
    assert_close(adsim.grad(outer)(x), fd_jacobian(outer, [x])[0], rtol, atol)


@pytest.mark.parametrize("inner", [
    lambda z: adsim.hessian(lambda w, a: np.sum(a * w ** 4))(z, 2.0),
    lambda z: adsim.hvp(lambda w: np.sum(w ** 4), z, np.ones(3)),
    lambda z: adsim.hvp(lambda w: np.sum(w ** 4), z, np.stack([z, z ** 2], axis=-1)),
    lambda z: adsim.jvp(lambda w: w ** 2, z, z)[1],
    lambda z: adsim.jvp(lambda w: np.outer(w, w), z, np.stack([z, 1 + z], axis=-1))[1],
    lambda z: adsim.jvp(lambda u, w: u * np.sin(w), (z, z ** 2), (np.ones(3), z))[1],
    lambda z: adsim.vjp(lambda w: w ** 2, z, z)[1],
    lambda z: adsim.vjp(lambda u, w: u * np.sin(w), (z, 2 * z), np.ones(3))[1][1],
    lambda z: adsim.hessp(lambda w: np.sum(np.exp(w) * w))(z, z),
    lambda z: adsim.laplacian(lambda w: np.sum(np.cos(w) * w ** 3))(z),
    lambda z: adsim.grad_and_hvp(lambda w, c: np.sum(c * w ** 3), z, np.ones(3), 2.0)[1],
], ids=["hessian", "hvp", "hvp, 2 directions", "jvp", "jvp, 2 directions", "jvp, 2 arguments",
        "vjp", "vjp, 2 arguments", "hessp", "laplacian", "grad_and_hvp"])
def test_transforms_inside_a_recording(inner):
    check_gradient(lambda z: np.sum(inner(z) ** 2), X)


def test_elementwise_derivatives_by_vjp_to_third_order():
    egrad = lambda g: (lambda y: adsim.vjp(g, y, np.ones_like(y))[1])  # noqa: E731
    t = np.tanh(X)
    assert_close(egrad(egrad(np.tanh))(X), -2 * t * (1 - t ** 2), 1e-13, 1e-14)
    assert_close(egrad(egrad(egrad(np.tanh)))(X), (1 - t ** 2) * (6 * t ** 2 - 2), 1e-13, 1e-14)


def test_log_determinant_of_a_hessian_differentiated_by_its_parameters():
    def log_det(a):
        H = adsim.hessian(lambda y: np.sum(a * y ** 4) + np.sum(y ** 2) * a[0])(X)
        return np.linalg.slogdet(H)[1]
    check_gradient(log_det, A)


def test_jacobian_of_a_gradient_of_a_closure():
    outer = lambda a: np.sum(adsim.jacobian(adsim.grad(lambda w: np.sum(a * w ** 3)))(np.ones(3)))  # noqa: E731,E501
    assert_close(adsim.grad(outer)(A), np.full(3, 6.0), 1e-14, 1e-14)


def test_has_aux_passes_any_value_through():
    g = adsim.grad(lambda y: (np.sum(y ** 2), {"note": "fit", "y": 2 * y, "kind": object}),
                   has_aux=True)
    for x in (X, X + 1):
        grad, aux = g(x)
        assert_close(grad, 2 * x, 0, 0)
        assert aux["note"] == "fit" and aux["kind"] is object
        assert_close(aux["y"], 2 * x, 0, 0)
    assert adsim.grad(lambda y: (np.sum(y), "done"), has_aux=True)(X)[1] == "done"


def test_has_aux_inside_a_recording():
    def outer(a):
        g, aux = adsim.grad(lambda y: (np.sum(a * y ** 2), y[0] * a[1]), has_aux=True)(X)
        return np.sum(g * aux)
    check_gradient(outer, A)


def test_jacobian_modes_take_the_short_names_too():
    J = adsim.jacobian(lambda y: np.sin(y) * y[0], mode="reverse")(X)
    assert_close(adsim.jacobian(lambda y: np.sin(y) * y[0], mode="fwd")(X), J, 1e-14, 1e-15)
    assert_close(adsim.jacobian(lambda y: np.sin(y) * y[0], mode="rev")(X), J, 1e-14, 1e-15)


def test_several_directions_for_several_arguments_inside_a_recording():
    """A trailing axis of k directions (k equal to the argument size, where
    broadcasting would silently mix them up) gives one result per direction."""
    f = lambda u, w: u * np.sin(w)  # noqa: E731
    U, W = np.stack([X, 1 + X, X ** 2], axis=-1), np.stack([1 - X, X, 2 * X], axis=-1)

    def jvps(z):
        return adsim.jvp(f, (z, z ** 2), (U * z[:, None], W))[1]

    def vjps(z):
        return adsim.vjp(f, (z, 2 * z), U * z[:, None])[1][1]
    for outer, one in ((jvps, lambda z, j: adsim.jvp(f, (z, z ** 2), (U[:, j] * z, W[:, j]))[1]),
                       (vjps, lambda z, j: adsim.vjp(f, (z, 2 * z), U[:, j] * z)[1][1])):
        got = adsim.jacobian(outer)(X)
        want = np.stack([adsim.jacobian(lambda z: one(z, j))(X) for j in range(3)], axis=1)
        assert_close(got, want, 1e-13, 1e-14)
        assert_close(outer(X), np.stack([one(X, j) for j in range(3)], axis=-1), 1e-14, 1e-15)
    with pytest.raises(ValueError, match="trailing axis"):
        adsim.grad(lambda z: np.sum(adsim.jvp(f, (z, z), (U, X))[1]))(X)


def test_vjp_of_one_primal_in_a_tuple_has_the_same_structure_inside_a_recording():
    """vjp(f, (x,), w) gives a tuple of one gradient inside a recording as
    outside it (inside, it gave the bare gradient, so g[0] read its first
    row: a silent wrong result). Checked in every mode, the vjp map itself
    at second order."""
    f = lambda y: np.sin(y) * y[::-1] ** 2  # noqa: E731
    M = np.array([[0.3, -0.5], [0.9, 0.2], [-0.4, 1.1]])
    W = np.array([[1.0, -2.0], [0.5, 0.25], [-1.5, 3.0]])

    def pulled_back(m):
        _, g = adsim.vjp(f, (m,), W * m)
        assert type(g) is tuple and len(g) == 1
        return g[0]

    _, outside = adsim.vjp(f, (M,), W * M)
    assert type(outside) is tuple and outside[0].shape == M.shape
    assert_close(adsim.record(pulled_back, M).forward(M), outside[0], 1e-14, 1e-15)
    check_tape(pulled_back, [M])
    check_tape(lambda m: np.sum(pulled_back(m) ** 2), [M])


def _pair(p):
    """A function of a container returning a container (a dict and a tuple)."""
    return {"s": np.sin(p[0]) * p[1], "q": (np.sum(p[0] ** 2) * p[1][0], np.tanh(p[1]))}


def _flat(tree):
    if isinstance(tree, dict):
        return np.concatenate([_flat(tree[k]) for k in sorted(tree)])
    if isinstance(tree, (tuple, list)):
        return np.concatenate([_flat(t) for t in tree])
    return np.ravel(tree)


def test_jvp_and_vjp_of_containers_inside_a_recording():
    """Container arguments, tangents, weights and outputs nest as at the top
    level: each map (z -> J v, z -> J^T w, with v and w built from z) is
    checked in every mode against central differences, and its value
    against the top-level jvp and vjp."""
    Wd = {"s": np.array([1.0, -2.0, 0.5]), "q": (np.array(0.7), np.array([0.2, -0.4, 1.5]))}

    def pushed(z):
        _, t = adsim.jvp(_pair, ((z, z ** 2),), ((np.cos(z), z),))
        return _flat(t)

    def pulled(z):
        w = {"s": Wd["s"] * z, "q": (Wd["q"][0] * z[0], Wd["q"][1] + z)}
        _, g = adsim.vjp(_pair, ((z, 2 * z),), w)
        assert type(g) is tuple and type(g[0]) is tuple and len(g[0]) == 2
        return _flat(g)

    for inner, top in ((pushed, lambda z: _flat(adsim.jvp(_pair, ((z, z ** 2),),
                                                          ((np.cos(z), z),))[1])),
                       (pulled, lambda z: _flat(adsim.vjp(_pair, ((z, 2 * z),), {
                           "s": Wd["s"] * z, "q": (Wd["q"][0] * z[0], Wd["q"][1] + z)})[1]))):
        assert_close(adsim.record(inner, X).forward(X), top(X), 1e-14, 1e-15)
        check_tape(inner, [X])


def test_k_weights_for_a_container_output_inside_a_recording():
    W2 = np.stack([X, 1 - X], axis=-1)

    def pulled(z):
        w = {"s": W2 * z[:, None], "q": (np.array([1.0, -1.0]), W2)}
        return adsim.vjp(_pair, ((z, z),), w)[1][0][1]

    def one(z, j):
        w = {"s": W2[:, j] * z, "q": (np.array([1.0, -1.0])[j], W2[:, j])}
        return adsim.vjp(_pair, ((z, z),), w)[1][0][1]

    got = adsim.jacobian(pulled)(X)
    assert_close(got, np.stack([adsim.jacobian(lambda z: one(z, j))(X) for j in range(2)], 1),
                 1e-13, 1e-14)
    with pytest.raises(ValueError, match="trailing axis of k weights"):
        adsim.grad(lambda z: np.sum(adsim.vjp(_pair, ((z, z),), {
            "s": W2, "q": (np.array(1.0), z)})[1][0][0]))(X)
    with pytest.raises(adsim.InvalidInput, match="structure"):
        adsim.grad(lambda z: np.sum(adsim.jvp(_pair, ((z, z),), ((z,),))[1]["s"]))(X)
