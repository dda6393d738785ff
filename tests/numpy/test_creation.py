"""Arrays created inside recorded functions, written the way scientists write
them: ``np.array([...])`` of active pieces, workspaces from ``np.zeros``
written element by element, ``np.full`` of an active value, joins of lists
holding active scalars. Values against NumPy, gradients against central
differences and forward mode."""
import threading

import numpy as np
import pytest
import scipy.special

import adsim as ad
from fdcheck import fd_jacobian


def check(f, x):
    value, g = ad.value_and_grad(f)(x)
    assert np.isclose(value, f(x.copy()), rtol=1e-13)
    np.testing.assert_allclose(g, fd_jacobian(f, [x]).reshape(x.shape), rtol=1e-7, atol=1e-9)
    v = np.cos(np.arange(x.size) + 0.5).reshape(x.shape)
    _, t = ad.jvp(f, x, v)
    assert np.isclose(t, np.sum(g * v), rtol=1e-12)


def lorenz(t, y, sigma, rho, beta):
    x, yy, z = y
    return np.array([sigma * (yy - x), x * (rho - z) - yy, x * yy - beta * z])


def test_ode_right_hand_side_built_with_np_array():
    def loss(p):
        y = np.array([1.0, 1.0, 1.0])
        for k in range(20):
            y = y + 0.01 * lorenz(0.01 * k, y, *p)
        return np.sum(y ** 2)
    check(loss, np.array([10.0, 28.0, 8.0 / 3.0]))


def test_workspace_arrays_written_element_by_element():
    def f(x):
        dy = np.zeros(4)
        dy[0] = x[0] * x[1]
        dy[1:3] = np.sin(x[1:3])
        J = np.empty((2, 2))
        J[0, 0], J[0, 1], J[1, 0], J[1, 1] = x[0], x[1] ** 2, 1.0, x[2]
        w = np.ones_like(dy)
        w[-1] = x[3]
        A = np.eye(2)
        A[0, 1] = x[1]              # a Jacobian built from the identity
        J = J + A @ np.identity(2)
        return np.sum(dy ** 2) + np.sum(J @ x[:2]) + w @ dy
    check(f, np.array([0.3, 0.5, 0.7, 1.1]))


def test_nested_lists_full_and_joins_with_active_scalars():
    def f(x):
        M = np.array([[x[0], 2.0], [x[1] * x[2], np.exp(x[0])]])
        v = np.full(3, x[1])
        joined = np.concatenate([x, [x[0] ** 2, 1.0]])
        h = np.hstack([x[:1], 2.0, x[2]])
        return np.sum(M @ M) + v @ x + np.sum(joined ** 2) + np.prod(h)
    check(f, np.array([0.4, 0.9, 1.3]))


def test_asarray_of_an_active_array_is_itself_and_array_copies():
    def f(x):
        y = x * 2.0
        assert np.asarray(y) is y
        c = np.array(y)
        c *= 3.0               # a copy: y is unchanged
        return np.sum(y) + np.sum(c)
    check(f, np.array([1.0, 2.0]))


def test_integer_and_plain_creations_stay_plain():
    kinds = {}
    data = np.array([1.0, 2.0])

    def f(x):
        kinds["int zeros"] = type(np.zeros(3, dtype=int))
        kinds["int list"] = type(np.array([1, 2]))
        kinds["asarray of plain"] = np.asarray(data) is data      # NumPy's own: no copy
        kinds["int of active"] = np.array([x[0], x[1]], dtype=int).dtype
        kinds["library"] = type(scipy.special.softmax(data))      # its np.array calls
        return np.sum(x)
    ad.grad(f)(np.array([1.5, 2.5]))
    assert kinds == {"int zeros": np.ndarray, "int list": np.ndarray, "asarray of plain": True,
                     "int of active": np.dtype(int), "library": np.ndarray}


def test_np_array_of_plain_floats_is_a_workspace_for_active_values():
    def rhs(p):
        y0 = np.array([1.0, 0.0])               # initial state, one entry a parameter
        y0[1] = p[0]
        return np.sum(y0 * p)                   # p + p**2
    p = np.array([2.0])
    np.testing.assert_allclose(ad.grad(rhs)(p), 1.0 + 2.0 * p)
    np.testing.assert_allclose(ad.hessian(rhs)(p), [[2.0]])


def test_creation_is_scoped_to_the_recording_thread():
    """Another thread's np.zeros stays plain while this thread records."""
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def other():
        inside.wait(5)
        seen["other thread"] = type(np.zeros(2))
        outside.set()

    def f(x):
        inside.set()
        outside.wait(5)
        seen["recording thread"] = type(np.zeros(2))
        return np.sum(x)
    t = threading.Thread(target=other)
    t.start()
    ad.grad(f)(np.ones(2))
    t.join(5)
    assert seen == {"other thread": np.ndarray, "recording thread": ad.Active}
    assert not hasattr(np.zeros, "__wrapped__")        # originals restored afterwards


def test_primitive_rules_run_on_plain_arrays():
    seen = []

    def value(x):
        seen.append(type(np.zeros(1)))
        return x ** 2

    square = ad.primitive(value, jvp=lambda a, o, t: 2 * a[0] * t[0],
                          vjp=lambda a, o, w: (2 * a[0] * w,))
    g = ad.grad(lambda x: np.sum(square(x)))(np.array([1.0, 3.0]))
    np.testing.assert_allclose(g, [2.0, 6.0])
    assert seen and all(t is np.ndarray for t in seen)


def test_ragged_pieces_raise_like_numpy():
    with pytest.raises(ValueError, match="inhomogeneous"):
        ad.grad(lambda x: np.sum(np.array([x[0], x[:2]])))(np.ones(3))


def test_compiled_library_code_calling_creation_functions_gets_plain_arrays():
    """np.random's compiled generators call np.empty from C: no Python frame
    of theirs exists, so the call site's source decides (it names another
    function here), and NumPy's own arrays come back."""
    seen = {}

    def f(x):
        noise = np.random.default_rng(0).standard_normal(x.shape)
        seen["noise"] = type(noise)
        return np.sum(x * noise)
    g = ad.grad(f)(np.ones(3))
    np.testing.assert_allclose(g, np.random.default_rng(0).standard_normal(3))
    assert seen["noise"] is np.ndarray


def test_code_without_source_is_told_what_to_use_instead():
    namespace = {"np": np}
    exec(compile("def f(x):\n    return np.sum(np.asarray([x[0], x[1] ** 2]))\n",
                 "<typed at a prompt>", "exec"), namespace)
    with pytest.raises(ad.ActiveValueLeak, match="no source file"):
        ad.grad(namespace["f"])(np.ones(2))


def test_fromiter_of_active_scalars_stacks_them():
    def f(x):
        squares = np.fromiter((xi ** 2 for xi in x), dtype=float)
        first = np.fromiter((np.sin(xi) for xi in x), float, count=2)
        plain = np.fromiter(range(3), dtype=float)      # a workspace, as np.array's
        plain[0] = x[0]
        return np.sum(squares * np.arange(1.0, 4.0)) + np.prod(first) + np.sum(plain * x)
    check(f, np.array([0.4, 0.9, 1.3]))


def test_fromiter_errors_are_numpys():
    x = np.array([0.4, 0.9, 1.3])
    with pytest.raises(ValueError) as expected:
        np.fromiter((xi for xi in x), dtype=float, count=5)
    with pytest.raises(ValueError) as got:
        ad.grad(lambda x: np.sum(np.fromiter((xi for xi in x), dtype=float, count=5)))(x)
    assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match="setting an array element with a sequence.*np.stack"):
        ad.grad(lambda x: np.sum(np.fromiter((x[i:i + 1] for i in range(3)), dtype=float)))(x)


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(3, 3), (4, 3)]), ("ii", [(2, 3)]), ("ij,k", [(3, 3, 3), (3,)]),
    ("...i,...i", [(2, 3), (4, 3)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (5, 2)])])
def test_einsum_with_operands_that_do_not_fit_raises_numpys_error(subscripts, shapes):
    def operands(x):
        return [x[:int(np.prod(s))].reshape(s) for s in shapes]
    x = np.linspace(0.5, 2.0, 27)
    with pytest.raises(ValueError) as expected:
        np.einsum(subscripts, *operands(x))
    with pytest.raises(ValueError) as got:
        ad.grad(lambda x: np.sum(np.einsum(subscripts, *operands(x))))(x)
    assert str(got.value) == str(expected.value)
