"""Every argument of checkpoint_loop, checkpoint_while and the schedules fed
awkward values: each gives a clear adsim error of the right builtin type or
NumPy-like behaviour (empty states, zero steps), never a crash, a stall or a
silent wrong derivative."""
import time

import numpy as np
import pytest

import adsim
from adsim.errors import LoopDidNotStop
from snapshot_files import held_files
from adsim.checkpoint import (Advance, FirstTurn, Online, Restore, Revolve, TakeShot, TwoLevel,
                              YouTurn, parse_bytes)

X = np.linspace(0.1, 1.0, 6)
K = np.linspace(-0.5, 0.7, 6)


def step(u, k):
    return u + 0.1 * np.sin(k * u) * np.roll(u, 1)


def plain(u, k, n):
    for _ in range(n):
        u = step(u, k)
    return u


def loss(n=10, **options):
    def f(x, k):
        return np.sum(adsim.checkpoint_loop(step, x, n, args=(k,), **options) ** 2)
    return f


def gradients(f, *xs):
    return adsim.grad(f, argnums=tuple(range(len(xs))))(*xs)


def assert_close(got, want):
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


WANT = gradients(lambda x, k: np.sum(plain(x, k, 10) ** 2), X, K)

SCHEDULES = r"adsim\.Revolve\(n_steps, snapshots\).*adsim\.TwoLevel.*adsim\.Online"


@pytest.mark.parametrize(("options", "error", "match"), [
    (dict(schedule="revolve"), TypeError, f"schedule='revolve' is not a schedule.*{SCHEDULES}"),
    (dict(schedule=3), TypeError, "schedule=3 is not a schedule"),
    (dict(schedule=np.ones(3)), TypeError, "is not a schedule"),
    (dict(schedule=Revolve), TypeError, "schedule=Revolve is a class"),
    (dict(schedule=lambda n: "revolve"), TypeError, "schedule callable returned 'revolve'"),
    (dict(schedule=Revolve(9, 3)), ValueError, "schedule is for 9 steps, the loop has 10"),
    (dict(schedule=TwoLevel(10, 2, 3)), ValueError, "keeps 3 snapshots on disk; give snapshot_dir"),
    (dict(snapshots=0), ValueError, "snapshots must be >= 1"),
    (dict(snapshots=True), TypeError, "snapshots must be an integer"),
    (dict(snapshots=2.0), TypeError, "snapshots must be an integer"),
    (dict(memory_limit="1e10000000"), ValueError, "memory_limit='1e10000000'.*below 2\\*\\*63"),
    (dict(memory_limit=-5), ValueError, "memory_limit=-5.*>= 0"),
    (dict(memory_limit=float("nan")), ValueError, "memory_limit=nan.*finite"),
    (dict(memory_limit=float("inf")), ValueError, "memory_limit=inf.*finite"),
    (dict(memory_limit=0), ValueError, "memory_limit must be a positive number"),
    (dict(memory_limit="lots"), ValueError, "cannot read 'lots' as a size"),
    (dict(memory_limit=[1]), TypeError, "memory_limit=\\[1\\]"),
    (dict(memory_limit=True), TypeError, "memory_limit=True"),
    (dict(memory_limit=10), adsim.MemoryBudgetError, "smallest budget that works is \\d+ bytes"),
    (dict(snapshot_dir="somewhere"), ValueError, "give memory_limit= as well"),
    (dict(snapshot_dir=5, memory_limit="1MB"), TypeError, "snapshot_dir must be a directory path"),
    (dict(snapshot_dir=b"/tmp", memory_limit="1MB"), TypeError, "snapshot_dir must be"),
    (dict(progress="yes"), TypeError, "progress must be True, False, None or a callable"),
    (dict(stats=[]), TypeError, "stats must be a dict"),
])
def test_bad_options_raise_clear_errors(options, error, match):
    with pytest.raises(error, match=match) as caught:
        gradients(loss(**options), X, K)
    assert str(caught.value).startswith("adsim:") or "adsim:" in str(caught.value)


def test_snapshot_dir_under_a_file_is_refused_at_the_call(tmp_path):
    a_file = tmp_path / "not-a-directory"
    a_file.write_text("")
    for path in (a_file, a_file / "below"):
        with pytest.raises(NotADirectoryError, match="snapshot_dir=.*is a file") as caught:
            gradients(loss(memory_limit="1MB", snapshot_dir=path), X, K)
        assert isinstance(caught.value, adsim.errors.SnapshotDirError)


@pytest.mark.parametrize(("n_steps", "error"), [
    (-1, ValueError), (2.5, TypeError), (3.0, TypeError), (True, TypeError), ("3", TypeError),
    (None, TypeError)])
def test_n_steps_follows_numpy_counts(n_steps, error):
    with pytest.raises(error, match="n_steps"):
        gradients(loss(n_steps), X, K)


def test_n_steps_numpy_integer_and_zero():
    assert_close(gradients(loss(np.int64(10)), X, K), WANT)
    g = gradients(loss(0), X, K)
    assert_close(g, (2 * X, np.zeros_like(K)))


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda x, k: adsim.checkpoint_loop(None, x, 3), TypeError, "step must be a callable"),
    (lambda x, k: adsim.checkpoint_loop(step, x, 3, args=k), TypeError, "args must be a tuple"),
    (lambda x, k: adsim.checkpoint_loop(step, ((x, x), x), 3, args=(k,)), TypeError,
     "nest no further"),
    (lambda x, k: adsim.checkpoint_loop(step, (), 3), ValueError, "empty tuple"),
    (lambda x, k: adsim.checkpoint_loop(step, np.array(["a"]), 3, args=(k,)), TypeError,
     "dtype <U1"),
    (lambda x, k: adsim.checkpoint_while(None, step, x, args=(k,)), TypeError,
     "cond must be a callable"),
    (lambda x, k: adsim.checkpoint_while(lambda u, k: False, step, x, args=(k,), max_steps=-1),
     ValueError, "max_steps must be >= 0"),
    (lambda x, k: adsim.checkpoint_while(lambda u, k: False, step, x, args=(k,), max_steps=1.5),
     TypeError, "max_steps must be an integer"),
    (lambda x, k: adsim.checkpoint_while(lambda u, k: True, step, x, args=(k,), max_steps=4),
     LoopDidNotStop, "max_steps=4"),
])
def test_bad_arguments_raise_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        adsim.grad(lambda x, k: np.sum(call(x, k)))(X, K)


def test_empty_states_are_returned_as_they_are():
    def f(x, k):
        empty = adsim.checkpoint_loop(step, x, 5, args=(k[:1],))
        pair = adsim.checkpoint_loop(lambda s, k: (s[0] * k[0], s[1] + 1), (x, x), 5, args=(k,))
        again = adsim.checkpoint_while(lambda u, k: True, step, x, args=(k,))
        assert empty.shape == x.shape and again.shape == x.shape
        assert [p.shape for p in pair] == [(0, 3), (0, 3)]
        return np.sum(empty) + np.sum(pair[0]) + np.sum(k * k)
    gx, gk = adsim.grad(f, argnums=(0, 1))(np.zeros((0, 3)), K)
    assert gx.shape == (0, 3)
    np.testing.assert_array_equal(gk, 2 * K)


def growing(u, k):
    return 1.1 * u + 0.01 * np.sin(k * u)


def while_loss(limit):
    def f(x, k):
        u = adsim.checkpoint_while(lambda u, k: u[0] < limit, growing, x, args=(k,), snapshots=3)
        return np.sum(u ** 3)
    return f


def identity_loss(x, k):
    return np.sum(x ** 3) + 0.0 * np.sum(k)


def test_while_loop_of_zero_steps_is_the_identity_in_every_mode():
    """cond false at the start: the value and derivatives of the identity."""
    f = while_loss(0.0)                       # X[0] > 0: no step ever runs
    v = np.cos(np.arange(6.0))
    assert_close(gradients(f, X, K), gradients(identity_loss, X, K))
    np.testing.assert_allclose(adsim.jvp(lambda y: f(y, K), X, v)[1],
                               adsim.jvp(lambda y: identity_loss(y, K), X, v)[1], rtol=1e-12)
    np.testing.assert_allclose(adsim.hvp(f, X, v, K), adsim.hvp(identity_loss, X, v, K),
                               rtol=1e-12)


def test_cached_while_tape_at_a_point_where_no_step_runs():
    g = adsim.grad(while_loss(0.3), argnums=(0, 1))
    g(X, K)                                   # recorded where steps run (X[0] < 0.3)
    assert_close(g(X + 1.0, K), gradients(identity_loss, X + 1.0, K))


def test_online_schedule_in_checkpoint_loop():
    stats = {}
    assert_close(gradients(loss(schedule=Online(3), stats=stats), X, K), WANT)
    assert stats["forward_steps"] == Online(3).forward_steps_for(10)


def test_explicit_two_level_schedule_uses_snapshot_dir(tmp_path):
    seen = []
    f = loss(schedule=TwoLevel(10, 1, 3), snapshot_dir=tmp_path,
             progress=lambda done, total: seen.append(held_files(tmp_path)))
    assert_close(gradients(f, X, K), WANT)
    assert max(seen) > 0 and list(tmp_path.iterdir()) == []


class Script:
    """A schedule object of the user's own: a fixed list of actions."""

    def __init__(self, n_steps, snapshots, actions):
        self.n_steps, self.snapshots, self._actions = n_steps, snapshots, actions

    def __iter__(self):
        return iter(self._actions)


def test_own_schedule_object_runs_and_wrong_one_raises():
    assert_close(gradients(loss(schedule=Script(10, 3, list(Revolve(10, 3)))), X, K), WANT)
    # skips reversing step 8: would be a silently wrong gradient
    skipping = [TakeShot(0), Advance(9), FirstTurn(), Restore(0), Advance(7), YouTurn()]
    with pytest.raises(ValueError, match="action 5 \\(YouTurn\\(\\)\\) is illegal"):
        gradients(loss(schedule=Script(10, 1, skipping)), X, K)
    short = list(Revolve(10, 3))[:-3]
    with pytest.raises(ValueError, match="ended with steps 0..\\d+ not reversed"):
        gradients(loss(schedule=Script(10, 3, short)), X, K)
    with pytest.raises(TypeError, match="is not an action"):
        gradients(loss(schedule=Script(10, 3, ["advance"])), X, K)


def test_absurd_snapshot_counts():
    started = time.perf_counter()
    assert_close(gradients(loss(snapshots=10**9), X, K), WANT)
    assert Online(10**9).forward_steps_for(1000) == 1000
    assert len(list(Online(10**9).actions(300))) > 300
    assert Revolve(10**6, 10**9).forward_steps == 10**6 - 1
    assert TwoLevel(100, 10**9, 5).forward_steps == 99
    f = lambda x, k: np.sum(adsim.checkpoint_while(                 # noqa: E731
        lambda u, k: u[0] < 1.0, lambda u, k: u * 1.05, x, args=(k,), snapshots=10**9))
    assert np.all(np.isfinite(adsim.grad(f)(X, K)))
    assert time.perf_counter() - started < 10
    with pytest.raises(ValueError, match="at most 10000000 are supported"):
        TwoLevel(10**8, 10**9, 1)


@pytest.mark.parametrize(("text", "expected"), [
    ("1e10000000", ValueError), ("9.3e18", ValueError), ("1" * 200, ValueError),
    ("1e-10000000", 0), ("0e99999999", 0), ("9.2e18", 9_200_000_000_000_000_000),
    ("1e-3KiB", 1)])
def test_parse_bytes_takes_bounded_time(text, expected):
    started = time.perf_counter()
    if isinstance(expected, int):
        assert parse_bytes(text) == expected
    else:
        with pytest.raises(expected):
            parse_bytes(text)
    assert time.perf_counter() - started < 0.05
