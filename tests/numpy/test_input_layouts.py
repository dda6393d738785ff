"""Inputs laid out in memory other than in C order.

NumPy's result of ``f(x)`` can depend on how ``x`` is laid out: a ufunc's
result follows its operand's layout, ``ravel(order="K")`` reads memory
order, and a reshape is a view of a C-order array but a copy of a
Fortran-order one (so a write through it reaches ``x`` or not). adsim lays
each recorded input out as the given array is; a tape whose function read
the layout replays only inputs laid out as the recording's (BranchChanged
otherwise, and the functional API records again), and tapes whose function
did not read it replay any layout.
"""
import io

import numpy as np
import pytest

import adsim as ad

H = 1e-6
A = np.arange(1.0, 7.0).reshape(2, 3)
X = np.asfortranarray(np.cos(A))
W = np.sin(np.arange(6.0) + 0.5)


def numeric_gradient(f, x):
    """Central differences at points laid out as ``x`` is."""
    g = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        up, down = x.copy(order="K"), x.copy(order="K")
        up[i] += H
        down[i] -= H
        g[i] = (f(up) - f(down)) / (2 * H)
    return g


def memory_order(z):
    return (np.sin(z).ravel(order="K") * W).sum()


def any_order(z):
    return (np.sin(z).ravel(order="A") * W).sum()


def flattened(z):
    return (np.exp(z).flatten(order="K") * W).sum()


def reshape_any(z):
    return (np.reshape(z * z, (3, 2), order="A") * W.reshape(3, 2)).sum()


def write_through_reshape(z):
    y = z.reshape(-1)               # a view of a C-order z, a copy of a Fortran one
    y *= 2.0
    return (z ** 2 * A).sum() + (y * W).sum()


def write_into_base(z):
    y = np.tanh(z).reshape(3, 2)    # a view of the tanh result, or a copy
    t = y.copy()
    y[0, 0] = 3.0                   # reaches the result only through a view
    return (np.tanh(z) * A).sum() + (t * y).sum()


def write_into_contiguous_copy(z):
    y = z * 1.0                     # laid out as z
    c = np.ascontiguousarray(y)     # y itself if y is in C order, else a copy
    c *= 3.0
    return (y * y * A).sum()


def write_into_fortran_conversion(z):
    y = np.exp(z)
    f = np.asarray(y, order="F")
    f[0] = 0.5                      # reaches y only if y was in Fortran order
    return (y * A).sum()


def write_into_astype(z):
    y = np.sin(z)
    c = y.astype(np.float64, order="C", copy=False)
    c[:, 1] += 2.0 * z[:, 0]
    return (y ** 2 * A).sum()


def strides_branch(z):
    if z.strides[0] == 8:
        return (z ** 3).sum()
    return (z ** 2).sum()


def flags_branch(z):
    return (np.sin(z) if z.flags.f_contiguous else np.cos(z)).sum()


PROGRAMS = [memory_order, any_order, flattened, reshape_any, write_through_reshape,
            write_into_base, write_into_contiguous_copy, write_into_fortran_conversion,
            write_into_astype, strides_branch, flags_branch]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("layout", ["F", "C", "strided transpose"])
def test_values_and_gradients_follow_the_layout(f, layout):
    x = {"F": X, "C": np.ascontiguousarray(X),
         "strided transpose": np.cos(np.arange(1.0, 13.0).reshape(6, 2)).T[:, ::2]}[layout]
    value, g = ad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x.copy(order="K")), rel=1e-14)
    np.testing.assert_allclose(g, numeric_gradient(f, x), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_the_functional_api_records_again_when_the_layout_changes(f):
    grad = ad.grad(f)
    for x in [X, np.ascontiguousarray(X), X + 0.25, np.ascontiguousarray(X) - 0.25]:
        np.testing.assert_allclose(grad(x), numeric_gradient(f, x), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_a_tape_refuses_another_layout(f):
    for recorded, other in [(X, np.ascontiguousarray(X)), (np.ascontiguousarray(X), X)]:
        tape = ad.record(f, recorded)
        assert tape.layout_observed
        with pytest.raises(ad.BranchChanged, match="laid out in memory"):
            tape.gradient(other)
        with pytest.raises(ad.BranchChanged, match="laid out in memory"):
            tape.forward(other + 0.1)
        np.testing.assert_allclose(tape.gradient(recorded + 0.1),
                                   numeric_gradient(f, recorded + 0.1), rtol=1e-7, atol=1e-8)


def test_the_replay_of_a_fortran_order_recording_keeps_its_order():
    def f(z):
        return np.sin(z).ravel(order="K")
    tape = ad.record(f, X)
    np.testing.assert_array_equal(tape.forward(X + 1.0), f(X + 1.0))
    np.testing.assert_allclose(tape.jvp(X, np.asfortranarray(A))[1],
                               np.cos(X).ravel(order="K") * A.ravel(order="F"))


def test_tapes_that_do_not_read_the_layout_replay_any_layout():
    def f(z):
        y = z.reshape(3, 2)         # a view or a copy; nothing writes it
        return (np.sin(y) * W.reshape(3, 2)).sum() + (z.T @ z).trace()
    tape = ad.record(f, X)
    assert not tape.layout_observed
    for x in [X, np.ascontiguousarray(X), X[:, ::-1]]:
        np.testing.assert_allclose(tape.gradient(x), numeric_gradient(f, x),
                                   rtol=1e-7, atol=1e-8)
    buffer = io.BytesIO()
    tape.save(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(ad.load_tape(buffer).gradient(X), tape.gradient(X))


def test_a_one_dimensional_root_is_never_layout_sensitive():
    def f(z):
        y = z.reshape(2, 3)
        y[0] *= 2.0                 # always a view: z is 1-d
        return (z * W).sum()
    tape = ad.record(f, W.copy())
    assert not tape.layout_observed


def test_files_keep_the_layout_requirement_of_a_c_order_recording():
    tape = ad.record(write_through_reshape, np.ascontiguousarray(X))
    buffer = io.BytesIO()
    tape.save(buffer)
    buffer.seek(0)
    loaded = ad.load_tape(buffer)
    assert loaded.layout_observed
    np.testing.assert_array_equal(loaded.gradient(np.ascontiguousarray(X)),
                                  tape.gradient(np.ascontiguousarray(X)))
    with pytest.raises(ad.BranchChanged, match="Fortran order"):
        loaded.gradient(X)


# layouts made from values in C order
LAYOUTS = {"Fortran": lambda v: np.asfortranarray(v.reshape(4, 6)),
           "axes permuted": lambda v: np.transpose(np.ascontiguousarray(
               np.transpose(v.reshape(4, 3, 2), (2, 0, 1))), (1, 2, 0)),
           "a strided view": lambda v: np.asfortranarray(np.repeat(v.reshape(2, 12), 2, 0))[::2]}


def weighted_memory_order(z):
    return (np.sin(z).ravel(order="K") * np.cos(np.arange(z.size))).sum()


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_files_keep_a_recording_at_another_layout(name, tmp_path):
    # the file holds each input's layout: the loaded tape replays inputs laid
    # out alike, bitwise like the original, and refuses others as it does
    from fdcheck import assert_close
    from tapefile_replays import assert_same_replays, copies
    values = np.cos(np.arange(24.0))
    x, moved = LAYOUTS[name](values), LAYOUTS[name](values + 0.25)
    assert ad._tape.layout_key(x) is not None
    assert ad._tape.layout_key(moved) == ad._tape.layout_key(x)
    tape = ad.record(weighted_memory_order, x)
    copied = copies(tape, tmp_path)
    assert_same_replays(tape, copied, [(x,), (moved,)], methods=["forward", "gradient"])
    assert_close(copied[0].gradient(moved), numeric_gradient(weighted_memory_order, moved),
                 1e-7, 1e-8, "loaded gradient")
    for t in [tape] + copied:
        with pytest.raises(ad.BranchChanged, match="C order"):
            t.gradient(np.ascontiguousarray(x))


def test_an_altered_layout_in_a_file_is_refused():
    from tapefile_bytes import replace_section, section
    data = ad.tapefile.dumps(ad.record(memory_order, X))
    _, count, at = section(data, "OPTS")
    options = np.frombuffer(bytes(data[at:at + 8 * count]), "<i8").copy()
    assert list(options[:3]) == [1, 2, 1]              # chunked, layouts follow, input 0 ...
    for bad in ([1, 3], [1, 2, 1, 2, 1, 2], [1, 2, 1, 1, 99, 1], [1, 2, 1, 1, 1]):
        with pytest.raises(ad.TapeFileError, match="options section|layout"):
            ad.tapefile.loads(replace_section(data, "OPTS", np.array(bad, "<i8").tobytes()))


def test_batched_replays_check_each_member():
    tape = ad.record(memory_order, np.ascontiguousarray(X))
    points = np.stack([np.ascontiguousarray(X), np.ascontiguousarray(X) + 0.5])
    assert tape.batched.why_not_native() is not None
    np.testing.assert_allclose(tape.batched.gradient(points),
                               [numeric_gradient(memory_order, p) for p in points],
                               rtol=1e-7, atol=1e-8)
