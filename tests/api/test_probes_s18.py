"""What a new (or hostile) user feeds adsim's public surface beyond the
other probes: byte-swapped arrays, np.matrix and masked arrays, a singular
matrix under slogdet, tape files given the wrong way, loop functions of the
wrong arity, and objects that cannot be pickled. Each gives NumPy's result
or a typed adsim error naming the argument, what was given and what is
accepted; never a silently different number."""
import pickle

import numpy as np
import pytest

import adsim
import adsim.parallel
import adsim.tapefile
from adsim.errors import (InvalidArgument, InvalidArgumentValue, InvalidInput, NotPicklable,
                          UndefinedDerivative, UnsupportedOperation)
from fdcheck import assert_close, central

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix

X = np.array([0.5, -0.3, 0.2])
SWAPPED = X.astype(X.dtype.newbyteorder())       # the same numbers, bytes in the other order


def f(x):
    return np.sum(np.sin(x) * x)


def df(x):
    return np.cos(x) * x + np.sin(x)


# ------------------------------------------------ arrays in the other byte order

@pytest.mark.parametrize("call", [
    lambda x: adsim.record(f, X).gradient(x),
    lambda x: adsim.record(f, x).gradient(X),
    lambda x: adsim.record(f, X).value_and_gradient(x)[1],
    lambda x: adsim.tapefile.loads(adsim.tapefile.dumps(adsim.record(f, X))).gradient(x),
    lambda x: adsim.record(f, X).batched.gradient(x[None])[0],
    lambda x: adsim.grad(f)(x),
    lambda x: np.diag(adsim.sparse_jacobian(lambda z: np.sin(z) * z, x).toarray()),
])
def test_byte_swapped_points_give_the_derivative_at_their_numbers(call):
    assert not SWAPPED.dtype.isnative
    assert_close(call(SWAPPED), df(X), 1e-15, 0)


def test_byte_swapped_directions_and_weights_are_read_as_numbers():
    tape = adsim.record(lambda z: np.sin(z) * z, X)
    assert_close(tape.jvp(X, SWAPPED)[1], df(X) * X, 1e-15, 0)
    assert_close(tape.vjp(X, SWAPPED)[1], df(X) * X, 1e-15, 0)
    assert_close(adsim.record(f, X).hvp(X, SWAPPED), adsim.hvp(f, X, X), 1e-15, 0)


# ----------------------------------------------------- np.matrix and masked arrays

MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.array(X, mask=[False, True, False])


@pytest.mark.parametrize("point, words", [(MATRIX, "np.matrix, whose \\* and \\*\\* are matrix"),
                                          (MASKED, "masked array, whose operations and "
                                                   "reductions skip")])
@pytest.mark.parametrize("call", [
    lambda p: adsim.grad(lambda z: np.sum(z * z))(p),
    lambda p: adsim.value_and_grad(lambda z: np.sum(z * z))(p),
    lambda p: adsim.jvp(lambda z: z * z, p, np.ones(np.shape(p))),
    lambda p: adsim.record(lambda z: np.sum(z * z), np.asarray(p)).forward(p),
    lambda p: adsim.record(lambda z: np.sum(z * z), p),
])
def test_matrix_and_masked_points_are_refused_not_computed_otherwise(point, words, call):
    """NumPy's sum(m * m) of a matrix is that of its matrix square, and of a
    masked array skips the masked entry: a plain array's would differ."""
    with pytest.raises(InvalidInput, match=words):
        call(point)


@pytest.mark.parametrize("f", [
    lambda x: np.sum(x.reshape(2, 2) * MATRIX),
    lambda x: np.sum(MATRIX * x.reshape(2, 2)),
    lambda x: np.sum(np.multiply(x.reshape(2, 2), MATRIX)),
    lambda x: np.sum(x * np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])),
    lambda x: np.dot(x, np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])),
])
def test_matrix_and_masked_constants_are_refused_inside_a_recording(f):
    x = np.array([0.5, 0.1, 0.2, 0.3])
    with pytest.raises(UnsupportedOperation, match="adsim records plain arrays"):
        adsim.grad(f)(x)
    f(x)                                                   # NumPy's own call still runs


def test_plain_arrays_beside_matrices_still_differentiate():
    x = np.array([0.5, 0.1, 0.2, 0.3])
    plain = np.asarray(MATRIX)
    g = adsim.grad(lambda z: np.sum(z.reshape(2, 2) @ plain))(x)
    for i, e in enumerate(np.eye(4)):
        assert_close(g[i], central(lambda z: np.sum(z.reshape(2, 2) @ plain), [x], [e]))


# ------------------------------------------------------- slogdet at a singular matrix

SINGULAR = np.array([1.0, 2.0, 2.0, 4.0])


def logabsdet(x):
    return np.linalg.slogdet(x.reshape(2, 2))[1]


@pytest.mark.parametrize("call", [
    lambda: adsim.grad(logabsdet)(SINGULAR),
    lambda: adsim.jvp(logabsdet, SINGULAR, np.ones(4)),
    lambda: adsim.record(logabsdet, SINGULAR).gradient(SINGULAR),
    lambda: adsim.hvp(logabsdet, SINGULAR, np.ones(4)),
])
def test_slogdet_has_no_derivative_at_a_singular_matrix_in_every_mode(call):
    with pytest.raises(UndefinedDerivative, match="slogdet of a singular matrix"):
        call()


def test_slogdet_of_a_regular_matrix_still_differentiates():
    x = np.array([2.0, 1.0, 0.5, 3.0])
    g = adsim.grad(logabsdet)(x)
    assert_close(g, np.linalg.inv(x.reshape(2, 2)).T.ravel(), 1e-14, 0)
    assert_close(adsim.jvp(logabsdet, x, np.ones(4))[1], np.sum(g), 1e-14, 0)


# ------------------------------------------------------------ tape files, given wrongly

@pytest.fixture(name="data")
def _data():
    return adsim.tapefile.dumps(adsim.record(f, X))


def test_a_directory_is_no_tape_file(tmp_path):
    with pytest.raises(InvalidArgumentValue, match=r"adsim.load_tape: file .* is a directory; "
                                                   r"give the path of a tape file"):
        adsim.load_tape(tmp_path)


def test_the_bytes_of_a_tape_file_are_no_path(data):
    with pytest.raises(InvalidArgumentValue, match=r"these hold a tape file's content; load "
                                                   r"them with adsim.tapefile.loads\(data\)"):
        adsim.load_tape(data)
    assert_close(adsim.tapefile.loads(data).gradient(X), df(X), 1e-15, 0)


@pytest.mark.parametrize("given, shown", [("abc", "str"), (None, "NoneType"),
                                          (np.zeros(3, np.uint8), "ndarray")])
def test_loads_of_something_else_than_bytes_names_what_it_takes(given, shown):
    with pytest.raises(InvalidArgument, match=rf"adsim.tapefile.loads: data must be the bytes of "
                                              rf"a tape file .*got an object of type {shown}"):
        adsim.tapefile.loads(given)


# ------------------------------------------------------------- options of entry points

def test_an_executor_that_is_not_one_names_the_accepted_kinds():
    tape = adsim.record(f, X)
    with pytest.raises(InvalidArgument, match=r"adsim.parallel: executor must be None .*"
                                              r"concurrent.futures.Executor .*got 'threads' "
                                              r"\(str\)"):
        adsim.parallel.map("gradient", tape, [X], executor="threads")


def test_disk_snapshots_without_a_directory_name_snapshot_dir():
    with pytest.raises(InvalidArgumentValue, match=r"keeps 1 snapshots on disk; give "
                                                   r"snapshot_dir= \(a directory for their "
                                                   r"files; it is None\)"):
        adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(
            np.sin, x, 5, schedule=adsim.TwoLevel(5, 1, 1))))(X)


def test_a_count_of_steps_beyond_64_bits_is_refused():
    with pytest.raises(InvalidArgumentValue, match=r"n_steps must be below 2\*\*63"):
        adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(np.sin, x, 2 ** 70)))(X)


# ------------------------------------------------ loop functions of the wrong arity

def scaled(s, k):
    return s * k


@pytest.mark.parametrize("call", [
    lambda: adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(scaled, x, 3)))(X),
    lambda: adsim.checkpoint_loop(scaled, X, 3),
    lambda: adsim.grad(lambda x: np.sum(adsim.checkpoint_while(
        lambda s: s[0] < 1.0, scaled, x)))(X),
    lambda: adsim.checkpoint_while(lambda s: s[0] < 1.0, scaled, X),
])
def test_a_step_called_without_its_arguments_names_the_call(call):
    with pytest.raises(InvalidArgument, match=r"the loop calls step as step\(state, \*args\) "
                                              r"with 0 extra arguments from args=.*missing 1 "
                                              r"required positional argument: 'k'.*args=\(...\)"):
        call()


def test_a_cond_called_with_too_many_arguments_names_the_call():
    with pytest.raises(InvalidArgument, match=r"the loop calls cond as cond\(state, \*args\) "
                                              r"with 1 extra argument from args="):
        adsim.grad(lambda x: np.sum(adsim.checkpoint_while(
            lambda s: s[0] < 1.0, scaled, x, args=(1.5,))))(X)


def test_a_type_error_inside_the_step_stays_the_users():
    def broken(s):
        return s * len(3)
    with pytest.raises(TypeError, match="has no len") as info:
        adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(broken, x, 3)))(X)
    assert not isinstance(info.value, InvalidArgument)
    assert_close(adsim.grad(lambda x: np.sum(adsim.checkpoint_loop(
        scaled, x, 3, args=(0.5,))))(X), np.full(3, 0.125), 1e-15, 0)


# ---------------------------------------------------------------------- pickling

def test_a_sparse_plan_is_not_picklable_and_says_what_to_send():
    for plan in (adsim.sparse_jacobian_plan(lambda z: z[1:] * z[:-1], X),
                 adsim.sparse_hessian_plan(lambda z: np.sum(z[1:] * z[:-1] ** 2), X)):
        with pytest.raises(NotPicklable, match=r"cannot be pickled: it lives in the process .*"
                                               r"function defined at module level"):
            pickle.dumps(plan)


def test_an_active_array_is_not_picklable():
    def f_pickling(x):
        pickle.dumps(x)
        return np.sum(x)
    with pytest.raises(NotPicklable, match="pickle adsim.value"):
        adsim.grad(f_pickling)(X)


def test_an_active_array_made_by_hand_says_how_they_are_made():
    for args in ((), (X,)):
        with pytest.raises(InvalidArgument, match=r"made by a recording .*adsim.grad\(f\)\(x\)"):
            adsim.Active(*args)


@pytest.mark.parametrize("shape", [(2, 3), (5,), (6, 2, 1), ()])
def test_hvp_operator_names_a_vector_that_is_not_x_raveled(shape):
    """The operator takes x raveled, as every LinearOperator takes vectors;
    an array of x's own shape (or any other size) is refused by name with
    the reshape to write, where SciPy said "dimension mismatch"."""
    x = np.arange(6.0).reshape(2, 3) + 1.0
    H = adsim.hvp_operator(lambda z: np.sum(z ** 3), x)
    for call in (H.dot, H.matvec, H.matmat, H.__matmul__):
        with pytest.raises(adsim.errors.InvalidArgumentValue, match="x raveled"):
            call(np.ones(shape))
    v = np.linspace(-1.0, 1.0, 6)
    assert np.allclose(H @ v, 6.0 * x.ravel() * v)
    V = np.stack([v, 2 * v], axis=1)
    assert np.allclose(H @ V, 6.0 * x.ravel()[:, None] * V)
