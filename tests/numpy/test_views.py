"""NumPy view semantics on active arrays.

Basic indexing, reshapes and transposes give views that share storage with
their base; a write through any view is seen by the base and every other
view, in values and in every derivative mode. Each program here runs on plain
NumPy arrays too: values must agree with NumPy's, derivatives with central
differences of the NumPy program, and forward with reverse mode.
"""
import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
from fdcheck import fd_jacobian


def central_gradient(f, x):
    return fd_jacobian(f, [x]).reshape(x.shape)


def check_program(f, x, rtol=1e-6):
    """Value equals NumPy's; gradient equals central differences, also when
    replayed at a second point; jvp agrees with the gradient."""
    want = f(x.copy(order="K"))
    value, g = ad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, central_gradient(f, x), rtol=rtol, atol=1e-6)
    tape = ad.record(f, x)
    x2 = np.add(x, 0.1 * np.cos(np.arange(x.size)).reshape(x.shape), out=np.empty_like(x))
    np.testing.assert_allclose(tape.forward(x2), f(x2.copy(order="K")), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tape.gradient(x2), central_gradient(f, x2), rtol=rtol, atol=1e-6)
    v = np.sin(np.arange(x.size) + 1.0).reshape(x.shape)
    _, t = tape.jvp(x2, v)
    np.testing.assert_allclose(t, np.sum(tape.gradient(x2) * v), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- reproducers

def test_write_through_a_slice_view_reaches_the_base():
    def f(x):
        y = np.zeros_like(x)
        v = y[:2]
        v += x[:2]
        return np.sum(y)
    x = np.array([1.0, 2.0, 3.0])
    assert ad.grad(f)(x).tolist() == [1.0, 1.0, 0.0]
    assert ad.value_and_grad(f)(x)[0] == 3.0
    check_program(f, x)


@pytest.mark.parametrize("make_view", [
    lambda y: y.reshape(2, 3), lambda y: y.reshape(3, 2).T, lambda y: y.ravel(),
    lambda y: y[::-1], lambda y: y[1:][::2], lambda y: np.flip(y), lambda y: y[...],
    lambda y: y.view(), lambda y: y.real, lambda y: np.reshape(y, (6, 1))[:, 0],
    lambda y: np.expand_dims(y, 0)[0], lambda y: np.squeeze(y.reshape(1, 6)),
])
def test_writes_through_reshape_transpose_and_ravel_views(make_view):
    def f(x):
        y = x * 1.0
        v = make_view(y)
        v *= 2.0
        v[...] = v * np.sin(x[0])
        return np.sum(y * y) + np.sum(v)
    check_program(f, np.linspace(0.3, 1.4, 6))


def test_chained_view_writes_and_loops_over_rows():
    def f(x):
        A = np.zeros_like(x) + x
        A[1:3][0] = x[0] ** 2          # writes row 1 of A
        A[:, 1:][1, 2] = 5.0 * x[2, 2]  # writes A[1, 3]
        for row in A:
            row *= 2.0
        return np.sum(A * x)
    check_program(f, np.arange(1.0, 13.0).reshape(3, 4) / 7.0)


def test_reading_a_view_after_its_base_changed():
    def f(x):
        y = x.copy()
        head = y[:3]
        total = np.sum(head ** 2)      # read before the write
        y[1] = np.exp(x[4])
        y *= x
        return total + np.sum(head ** 3)   # read after both writes
    check_program(f, np.linspace(0.1, 0.9, 5))


def test_view_of_an_input_and_writes_into_the_input():
    def f(x):
        v = x[1:]
        x[0] = np.sin(x[1])
        v += x[0]
        return np.sum(x ** 2)
    check_program(f, np.array([0.5, 1.5, -0.5, 2.0]))


def test_fancy_indexing_copies_and_basic_indexing_views():
    def f(x):
        y = x * 1.0
        c = y[[0, 2]]          # a copy: writing it leaves y alone
        c *= 10.0
        w = y[0:3:2]           # a view of the same elements
        w *= 3.0
        return np.sum(y) + np.sum(c)
    check_program(f, np.array([1.0, 2.0, 3.0, 4.0]))


def test_ufunc_out_writes_into_an_active_array():
    def f(x):
        y = x.copy()
        np.multiply(y[:2], x[2], out=y[:2])
        np.sin(y, out=y)
        return np.sum(y)
    check_program(f, np.array([0.2, 0.7, 1.3]))


def test_inplace_operator_results_keep_identity():
    def f(x):
        y = x * 1.0
        z = y
        y += 1.0
        y **= 2
        y /= 3.0
        y -= x
        assert z is y
        return np.sum(z)
    check_program(f, np.array([0.2, 0.7, 1.3]))


def test_scalars_are_immutable_as_numpy_scalars_are():
    def f(x):
        s = np.sum(x)
        t = s
        s += x[0]              # rebinds s; t keeps the sum, as with NumPy scalars
        y = x[1] * 1.0
        y += x                 # a scalar plus an array: a new array
        return t * np.sum(y) + s
    check_program(f, np.array([0.5, 1.5, 2.5]))


def test_inplace_with_a_broadcast_result_that_does_not_fit_raises_like_numpy():
    def f(x):
        y = x[:1] * 1.0
        y += x[:, None]        # shape (3, 1) into shape (1,)
        return np.sum(y)
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        ad.grad(f)(np.ones(3))
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        f(np.ones(3))


@pytest.mark.parametrize("make_view", [np.diagonal, lambda y: np.broadcast_to(y[0], (3, 3))])
def test_read_only_views_refuse_writes_as_numpy_does(make_view):
    def f(x):
        v = make_view(x.reshape(3, 3) * 1.0)
        v[0] = 1.0
        return np.sum(v)
    x = np.arange(9.0)
    with pytest.raises(ValueError, match="read-only"):
        f(x.copy())
    with pytest.raises(ValueError, match="read-only"):
        ad.grad(f)(x)


def test_read_only_views_follow_their_base():
    def f(x):
        A = x.reshape(3, 3) * 1.0
        d = np.diagonal(A)
        b = np.broadcast_to(A[0], (2, 3))
        A[0, 0] = x[8] ** 2
        return np.sum(d * d) + np.sum(b ** 3)
    check_program(f, np.linspace(0.2, 1.0, 9))


@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy, np.copy,
                                       lambda a: a.copy(), lambda a: +a,
                                       lambda a: a.astype(np.float64), lambda a: a.flatten()])
def test_copies_are_independent(duplicate):
    def f(x):
        y = x * 2.0
        c = duplicate(y)
        c *= x
        y[0] = 7.0
        return np.sum(y) + 3.0 * np.sum(c * c)
    check_program(f, np.array([0.3, 0.8, 1.1]))


def test_active_arrays_cannot_be_made_or_pickled_directly():
    import pickle
    with pytest.raises(TypeError, match="made by a recording"):
        ad.Active()
    with pytest.raises(TypeError, match="made by a recording"):
        ad.Active.__new__(ad.Active)

    def f(x):
        pickle.dumps(x)
        return np.sum(x)
    with pytest.raises(TypeError, match="cannot be pickled"):
        ad.grad(f)(np.ones(2))


def test_base_attribute_names_the_root():
    seen = {}

    def f(x):
        y = x * 1.0
        seen["view"] = y[1:].base is y
        seen["view of view"] = y[1:][::2].base is y
        seen["copy"] = y[[0, 1]].base is None
        seen["root"] = y.base is None
        return np.sum(y)
    ad.grad(f)(np.ones(4))
    assert seen == {"view": True, "view of view": True, "copy": True, "root": True}


# ------------------------------------------------------- random programs

SHAPE = (4, 5)


def _applicable(make, shape):
    """Does ``make`` work on an array of ``shape`` (no out-of-range index)?"""
    try:
        make(np.zeros(shape))
        return True
    except IndexError:
        return False


def _make_view(a, kind):
    """One way of taking a view (or, where NumPy copies, a copy) of ``a``."""
    def make(z):
        return _view_kinds(z, kind)
    return make(a) if _applicable(make, a.shape) else a[...]


def _view_kinds(a, kind):
    if a.ndim == 2:
        return [lambda: a[1:3], lambda: a[:, ::2], lambda: a.T, lambda: a[::-1, 1:],
                lambda: a[1], lambda: a.reshape(-1), lambda: np.swapaxes(a, 0, 1),
                lambda: a[[0, -1]], lambda: np.flip(a, 1), lambda: a.ravel(order="K"),
                lambda: a.T.reshape(a.shape)][kind % 11]()
    return [lambda: a[1:], lambda: a[::-2], lambda: a[...], lambda: a.reshape(1, -1),
            lambda: a[[0, 0, -1]], lambda: np.flip(a)][kind % 6]()


def _key(a, kind):
    if a.ndim == 2:
        return [0, np.s_[1:], np.s_[:, -1], np.s_[...], (1, 2), np.s_[::2, 1::2]][kind % 6]
    return [0, np.s_[1:], np.s_[...], np.s_[::2], -1][kind % 5]


def run_program(program, x):
    """Execute ``program`` (a list of tuples) on ``x``; the same code serves
    plain arrays and active ones."""
    arrays = [x * 1.0]
    acc = 0.0
    for step in program:
        kind, i, j, k = step
        a = arrays[i % len(arrays)]
        if kind == "view":
            arrays.append(_make_view(a, j))
        elif kind == "iop":
            w = np.sin(x.flat[k % x.size])
            if j % 3 == 0:
                a += w
            elif j % 3 == 1:
                a *= 0.5 + w
            else:
                a -= a * w
        elif kind == "set":
            key = _key(a, j)
            if not _applicable(lambda z: z[key], a.shape):
                continue
            if k % 2:
                a[key] = x.flat[k % x.size] ** 2
            else:
                a[key] = np.cos(a[key]) + 1.0
        elif kind == "out" and a.size:
            np.multiply(a, 1.0 + 0.1 * (j % 4), out=a)
        elif kind == "read":
            acc = acc + np.sum(a * a) * 0.1
    return acc + sum(np.sum(a ** 2) for a in arrays[:1]) + np.sum(arrays[-1])


program_steps = st.lists(
    st.tuples(st.sampled_from(["view", "view", "iop", "set", "out", "read"]),
              st.integers(0, 20), st.integers(0, 20), st.integers(0, 40)),
    min_size=1, max_size=12)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(program=program_steps)
def test_random_view_programs_match_numpy(program):
    x = np.linspace(0.2, 1.1, SHAPE[0] * SHAPE[1]).reshape(SHAPE)
    check_program(lambda z: run_program(program, z), x)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(program=program_steps)
def test_random_view_programs_on_fortran_order_inputs_match_numpy(program):
    """The same on an input laid out in Fortran order: its copies and
    elementwise results follow its layout, so reshapes copy where they view a
    C-order array, and ravel(order="K") reads in Fortran order."""
    x = np.asfortranarray(np.linspace(0.2, 1.1, SHAPE[0] * SHAPE[1]).reshape(SHAPE))
    check_program(lambda z: run_program(program, z), x)


def test_empty_views_and_writes():
    def f(x):
        A = x.reshape(2, 3) * 1.0
        e = A[:, :0].reshape(-1)       # an empty view
        A[1:1] = 5.0                    # an empty write
        e *= 2.0
        return np.sum(A ** 2) + np.sum(e)
    check_program(f, np.linspace(0.1, 0.6, 6))


@pytest.mark.parametrize("write", [
    lambda a: a.__setitem__(slice(None, None, -1), a),
    lambda a: a.__setitem__([2, 0, 1, 3, 4, 5], a),
    lambda a: np.copyto(a[::-1], a),
    lambda a: a.reshape(2, 3).T.__setitem__(Ellipsis, a.reshape(3, 2)),
])
def test_an_array_written_into_an_overlapping_view_of_itself(write):
    """NumPy reads the source before writing (as if buffered)."""
    def f(x):
        a = x ** 2
        write(a)
        return a * np.arange(1.0, 7.0)
    x = np.linspace(0.5, 1.5, 6)
    want = f(x.copy())
    np.testing.assert_allclose(ad.record(f, x).forward(x), want, rtol=1e-15)
    J = ad.jacobian(f)(x)
    np.testing.assert_allclose(J, fd_jacobian(f, [x]).reshape(6, 6), rtol=1e-7, atol=1e-9)
