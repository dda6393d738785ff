"""Recorded control flow: comparisons and the sides of piecewise functions
are stored at recording and checked on every replay. A replay at a point
where an outcome differs raises BranchChanged naming the op; the functional
API then records again and returns the derivative of the new branch."""
import numpy as np
import pytest

import adsim
from adsim._opcodes import Opcode
from fdcheck import assert_close, fd_jacobian


def piecewise(x):
    if x[0] > 0:
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def piecewise_grad(x):
    return 2 * x if x[0] > 0 else np.cos(x)


def test_comparison_is_recorded():
    tape = adsim.record(piecewise, np.array([1.0, 2.0]))
    assert Opcode.COMPARE in tape.op_codes()
    assert Opcode.SIN not in tape.op_codes()     # only the branch taken is on the tape


def test_replay_on_the_same_branch():
    tape = adsim.record(piecewise, np.array([1.0, 2.0]))
    x = np.array([0.3, -4.0])
    assert tape.forward(x) == piecewise(x)
    assert_close(tape.gradient(x), piecewise_grad(x), 0, 0)


REPLAYS = {
    "forward": lambda t, x: t.forward(x),
    "gradient": lambda t, x: t.gradient(x),
    "value_and_gradient": lambda t, x: t.value_and_gradient(x),
    "jvp": lambda t, x: t.jvp(x, np.ones_like(x)),
    "jvp-vector": lambda t, x: t.jvp(x, np.ones(x.shape + (3,))),
    "vjp": lambda t, x: t.vjp(x, 1.0),
    "jacobian-forward": lambda t, x: t.jacobian(x, mode="forward"),
    "jacobian-reverse": lambda t, x: t.jacobian(x, mode="reverse"),
    "hvp": lambda t, x: t.hvp(x, np.ones_like(x)),
}


@pytest.mark.parametrize("replay", list(REPLAYS))
def test_every_replay_raises_branch_changed_naming_the_op(replay):
    tape = adsim.record(piecewise, np.array([1.0, 2.0]))
    position = int(np.nonzero(tape.op_codes() == Opcode.COMPARE)[0][0])
    with pytest.raises(adsim.BranchChanged) as info:
        REPLAYS[replay](tape, np.array([-1.0, 2.0]))
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.op_name == "COMPARE"
    assert err.op_index == position
    assert "COMPARE" in str(err) and f"op {position}" in str(err)
    # the tape is still good on its own branch
    x = np.array([2.0, -1.0])
    assert_close(REPLAYS["gradient"](tape, x), piecewise_grad(x), 0, 0)


def test_functional_api_records_again_on_a_branch_change():
    g = adsim.grad(piecewise)
    a, b = np.array([1.0, 2.0]), np.array([-1.0, 2.0])
    assert_close(g(a), piecewise_grad(a), 0, 0)
    assert g.tapes.recordings == 1
    assert_close(g(b), piecewise_grad(b), 0, 0)
    assert g.tapes.recordings == 2
    assert_close(g(b * 2), piecewise_grad(b * 2), 0, 0)     # the new tape is cached
    assert g.tapes.recordings == 2
    assert_close(g(a), piecewise_grad(a), 0, 0)
    assert g.tapes.recordings == 3


def test_one_shot_functions_record_again_on_a_branch_change():
    a, b = np.array([1.0, 2.0]), np.array([-1.0, 2.0])
    v = np.array([0.5, -1.0])
    f = lambda x: piecewise(x) * x  # noqa: E731
    for x in (a, b, a):
        J = fd_jacobian(f, [x])
        assert_close(adsim.jvp(f, x, v)[1], J @ v, 1e-8, 1e-9)
        assert_close(adsim.vjp(f, x, v)[1], J.T @ v, 1e-8, 1e-9)
        assert_close(adsim.jacobian(f)(x), J, 1e-8, 1e-9)
        H = np.diag([2.0, 2.0]) if x[0] > 0 else np.diag(-np.sin(x))
        assert_close(adsim.hvp(piecewise, x, v), H @ v, 1e-14, 1e-15)


@pytest.mark.parametrize(("name", "f", "x0", "x1"), [
    ("less", lambda x: x[0] * 2 if x[0] < x[1] else x[1] * 3, [0.0, 1.0], [2.0, 1.0]),
    ("less_equal", lambda x: x[0] * 2 if x[0] <= 0.5 else x[1] * 3, [0.0, 1.0], [2.0, 1.0]),
    ("greater_equal", lambda x: x[0] * 2 if x[0] >= 0.5 else x[1] * 3, [1.0, 1.0], [0.0, 1.0]),
    ("reflected", lambda x: x[0] * 2 if 0.5 < x[0] else x[1] * 3, [1.0, 1.0], [0.0, 1.0]),
    ("np.greater", lambda x: x[0] * 2 if np.greater(x[0], 0.5) else x[1], [1.0, 1.0], [0.0, 1.0]),
    ("all", lambda x: np.sum(x) if np.all(x > 0) else np.sum(x ** 2), [1.0, 1.0], [1.0, -1.0]),
    ("mask", lambda x: np.sum(x[x > 0] ** 2), [1.0, -1.0], [1.0, 1.0]),
    ("abs", lambda x: np.sum(np.abs(x)), [1.0, -1.0], [-1.0, -1.0]),
    ("abs-builtin", lambda x: abs(x[0] - x[1]), [1.0, -1.0], [-1.0, 1.0]),
    ("builtin-max", lambda x: max(x[0], x[1]), [1.0, 2.0], [3.0, 2.0]),
])
def test_branch_change_detected(name, f, x0, x1):
    op = "COMPARE"
    x0, x1 = np.array(x0), np.array(x1)
    tape = adsim.record(f, x0)
    with pytest.raises(adsim.BranchChanged) as info:
        tape.gradient(x1)
    assert info.value.op_name == op
    assert adsim.ops.BY_CODE[int(tape.op_codes()[info.value.op_index])].name == op
    g = adsim.grad(f)
    for x in (x0, x1, x0):
        want = fd_jacobian(f, [x])[0]
        assert_close(g(x), want, 1e-9, 1e-10)
        assert_close(g(x + 0.01), fd_jacobian(f, [x + 0.01])[0], 1e-9, 1e-10)   # same branch
    assert g.tapes.recordings == 3


@pytest.mark.parametrize("op", ["==", "!="])
def test_equality_branches(op):
    """x == c holds on a set of measure zero, where differences are not
    valid: check against the derivative of the branch taken."""
    def f(x):
        hit = x[0] == 1.0 if op == "==" else x[0] != 1.0
        return x[0] * 2.0 if hit else x[1] * 3.0
    on, off = np.array([1.0, 1.0]), np.array([0.0, 1.0])
    first, second = (on, off) if op == "==" else (off, on)
    tape = adsim.record(f, first)
    assert_close(tape.gradient(first + [0.0, 5.0]), [2.0, 0.0], 0, 0)
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(second)
    g = adsim.grad(f)
    assert_close(g(first), [2.0, 0.0], 0, 0)
    assert_close(g(second), [0.0, 3.0], 0, 0)
    assert g.tapes.recordings == 2


def test_sign_needs_no_branch_record():
    """sign is piecewise constant: a replay across its jump recomputes the
    value, and the derivative is zero on both sides, so the tape stays valid."""
    f = lambda x: np.sum(np.sign(x - 0.5) * x ** 2)  # noqa: E731
    tape = adsim.record(f, np.array([1.0, 2.0]))
    x = np.array([0.2, 2.0])
    assert tape.forward(x) == f(x)
    assert_close(tape.gradient(x), [-0.4, 4.0], 1e-15, 0)


def test_same_outcome_at_new_point_does_not_raise():
    f = lambda x: np.sum(np.abs(x) * np.maximum(x, 0.5) + np.clip(x, -1, 1))  # noqa: E731
    tape = adsim.record(f, np.array([0.7, -0.2, 2.0]))
    x = np.array([0.9, -0.4, 3.0])
    assert_close(tape.forward(x), f(x), 1e-15, 0)
    assert_close(tape.gradient(x), fd_jacobian(f, [x])[0], 1e-9, 1e-10)


@pytest.mark.parametrize(("name", "f", "x0", "x1"), [
    ("maximum", lambda x: np.sum(np.maximum(x, 0.0)), [1.0, -1.0], [1.0, 1.0]),
    ("minimum", lambda x: np.minimum(x[0], x[1]), [1.0, 2.0], [3.0, 2.0]),
    ("clip-low", lambda x: np.sum(np.clip(x, -1.0, 1.0)), [0.5, 0.0], [-1.5, 0.0]),
    ("clip-high", lambda x: np.sum(np.clip(x, -1.0, 1.0)), [0.5, 0.0], [1.5, 0.0]),
    ("max-reduction", lambda x: np.max(x), [1.0, 2.0], [3.0, 2.0]),
    ("min-reduction", lambda x: np.min(x ** 2), [1.0, 2.0], [3.0, 2.0]),
    ("max-axis", lambda x: np.sum(np.max(np.reshape(x, (1, 2)), axis=1)), [1.0, 2.0], [3.0, 2.0]),
    ("max-rows", lambda x: np.sum(np.max(np.reshape(x, (2, 2)), axis=1) ** 2),
     [1.0, 2.0, 4.0, 3.0], [3.0, 2.0, 4.0, 5.0]),
    ("min-columns", lambda x: np.sum(np.sin(np.min(np.reshape(x, (2, 2)), axis=0))),
     [1.0, 2.0, 4.0, 3.0], [5.0, 2.0, 4.0, 1.0]),
    ("norm-inf", lambda x: np.linalg.norm(x, np.inf), [1.0, 2.0], [3.0, 2.0]),
    ("fmax", lambda x: np.sum(np.fmax(x[:2], x[2:]) ** 2), [1.0, 2.0, 0.5, 3.0],
     [1.0, 2.0, 1.5, 1.0]),
])
def test_extrema_follow_new_inputs_without_a_new_recording(name, f, x0, x1):
    """max/min reductions and maximum/minimum choose their element from the
    values at every replay: a replay where another element wins returns the
    derivative of the new winner, with no branch change and no recording."""
    x0, x1 = np.array(x0), np.array(x1)
    tape = adsim.record(f, x0)
    for x in (x1, x0, x1 + 0.01):
        want = fd_jacobian(f, [x])[0]
        assert_close(tape.gradient(x), want, 1e-9, 1e-10)
        assert tape.forward(x) == f(x)
        assert_close(adsim.jvp(f, x, np.ones_like(x))[1], want @ np.ones_like(x), 1e-9, 1e-10)
    g = adsim.grad(f)
    for x in (x0, x1, x0):
        assert_close(g(x), fd_jacobian(f, [x])[0], 1e-9, 1e-10)
    assert g.tapes.recordings == 1


def test_an_extremum_in_python_control_flow_is_still_a_branch():
    """``if np.max(x) > 0:`` compares the value: that comparison is recorded
    and checked, so the replay leaves the path where its outcome flips."""
    def f(x):
        m = np.max(x)
        return m * 2.0 if m > 0 else np.sum(x ** 2)
    tape = adsim.record(f, np.array([1.0, -2.0]))
    assert_close(tape.gradient(np.array([-1.0, 3.0])), [0.0, 2.0], 0, 0)    # new argmax, m > 0
    with pytest.raises(adsim.BranchChanged) as info:
        tape.gradient(np.array([-1.0, -3.0]))
    assert info.value.op_name == "COMPARE"
    g = adsim.grad(f)
    assert_close(g(np.array([-1.0, -3.0])), [-2.0, -6.0], 0, 0)


def test_nan_wins_the_maximum_at_replay():
    """A NaN wins the maximum in NumPy; replays follow NumPy's rule."""
    tape = adsim.record(np.max, np.array([1.0, 2.0, 0.0]))
    assert np.isnan(tape.forward(np.array([np.nan, 2.0, 0.0])))
    assert np.isnan(adsim.record(np.max, np.array([np.nan, 2.0])).forward(np.array([np.nan, 3.0])))
    rows = adsim.record(lambda x: np.max(x, axis=1), np.ones((2, 2)))
    got = rows.forward(np.array([[1.0, np.nan], [np.inf, -np.inf]]))
    assert np.isnan(got[0]) and got[1] == np.inf


def test_branch_changed_is_documented():
    assert issubclass(adsim.BranchChanged, RuntimeError)
    doc = adsim.BranchChanged.__doc__
    assert "record" in doc.lower()


@pytest.mark.parametrize("pick", [np.argmax, np.argmin])
def test_argmax_positions_are_recomputed_not_branches(pick):
    """argmax/argmin give integer data the replay computes again: indexing
    with them follows a new maximum without a branch change."""
    def f(x):
        return x[pick(x)] * 2.0 + np.sum(x[pick(np.reshape(x, (2, 2)), axis=0)] ** 2)

    tape = adsim.record(f, np.array([1.0, 2.0, 0.5, -1.0]))
    for x in (np.array([3.0, 2.0, 0.5, -1.0]), np.array([-2.0, 2.0, 4.5, 1.0])):
        assert tape.forward(x) == f(x)
        h = 1e-6
        fd = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(4)]
        np.testing.assert_allclose(tape.gradient(x), fd, rtol=1e-7, atol=1e-8)


def test_where_on_a_comparison_reads_its_mask_at_replay():
    """np.where(x > 0, a, b) is not a branch: the replay selects by the
    mask of the new point (the unselected side passes exactly zero)."""
    def f(x):
        return np.sum(np.where(x > 0, np.sqrt(x) * x, 2 * x))

    tape = adsim.record(f, np.array([1.0, -1.0]))
    for x in (np.array([-1.0, -1.0]), np.array([4.0, 9.0]), np.array([-2.0, 0.25])):
        with np.errstate(invalid="ignore"):          # NumPy evaluates sqrt on both sides
            assert tape.forward(x) == f(x)
        np.testing.assert_array_equal(tape.gradient(x),
                                      np.where(x > 0, 1.5 * np.sqrt(np.abs(x)), 2.0))
