"""A plain local array given an active value by item assignment while
other local names hold views of it (adsim/_record/plain_stores.py): the
array and each view are rebound to an active copy and the same views of
it, so every name sees the store as NumPy's would; a view reachable in any
other way keeps the refusal. Values are checked against NumPy's (the same
function called on plain numbers) and derivatives against differences."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, central

# NumPy's own arange and linspace: spelled np.arange(...)/np.linspace(...) in a
# recorded function they make active arrays of constants, and these tests need
# arrays NumPy makes from plain data
plain_arange, plain_linspace = np.arange, np.linspace

HOLDERS = []


def _check(f, p):
    p = np.asarray(p, dtype=float)
    tape = adsim.record(f, p)
    assert_close(tape.forward(p), f(p), rtol=1e-15, atol=0.0, what="value")
    g = adsim.grad(f)(p)
    want = np.array([central(f, [p], [e], 1e-3) for e in np.eye(p.size)])
    assert_close(g, want, rtol=1e-8, atol=1e-12, what="gradient")
    p2 = p * 1.07
    assert_close(tape.forward(p2), f(p2), rtol=1e-14, atol=0.0, what="replayed value")


def _neighbours(p):
    u = np.cos(plain_arange(7.0))
    left, right = u[:-1], u[1:]
    for _ in range(3):
        flux = p[0] * left - p[1] * right ** 2
        u[1:-1] -= 0.1 * (flux[1:] - flux[:-1])
    return np.sum(left * right) + u[3]


def _reversed_and_strided(p):
    u = np.sin(plain_arange(8.0))
    rev = u[::-1]
    even = u[::2]
    u[2:5] = p[0] * u[1:4] + p[1]
    return np.sum(rev * plain_arange(8.0)) + np.sum(even ** 2)


def _transposed(p):
    a = np.outer(plain_arange(1.0, 4.0), plain_arange(1.0, 5.0))
    t = a.T
    col = a[:, 1]
    a[1, :] = p[0] * a[0, :] + p[1]
    return np.sum(t[1] * col) + np.sum(a * t.T)


def _two_names_one_view(p):
    u = np.exp(-plain_arange(6.0))
    inner = u[1:-1]
    same = inner
    u[2] = p[0] * p[1]
    return np.sum(same ** 2) + inner[1]


def _write_through_the_view_afterwards(p):
    u = np.ones(5)
    head = u[:2]
    u[3] = p[0]
    head[1] = p[1] ** 2          # after the rebinding: a write into the active view
    return np.sum(u * plain_arange(5.0))


@pytest.mark.parametrize("f", [_neighbours, _reversed_and_strided, _transposed,
                               _two_names_one_view, _write_through_the_view_afterwards])
def test_views_held_by_local_names_see_the_store(f):
    _check(f, [0.7, 0.3])


def _view_also_in_a_list(p):
    u = np.cos(plain_arange(5.0))
    left = u[:-1]
    kept = [left]
    u[1:-1] = p[0] * u[2:]
    return np.sum(kept[0]) + np.sum(u)


def _view_kept_by_a_global(p):
    u = np.cos(plain_arange(5.0))
    left = u[:-1]
    HOLDERS.append(left)
    u[1:-1] = p[0] * u[2:]
    return np.sum(left) + np.sum(u)


def _view_in_a_closure(p):
    u = np.cos(plain_arange(5.0))
    left = u[:-1]

    def first():
        return left[0]
    u[1:-1] = p[0] * u[2:]
    return first() + np.sum(u)


def _view_held_by_the_caller(p):
    u = np.cos(plain_arange(5.0))
    left = u[:-1]
    return _store_into(u, p) + np.sum(left)


def _store_into(u, p):
    u[1:-1] = p[0] * u[2:]
    return np.sum(u)


@pytest.mark.parametrize("f", [_view_also_in_a_list, _view_kept_by_a_global,
                               _view_in_a_closure, _view_held_by_the_caller])
def test_views_reachable_otherwise_keep_the_refusal(f):
    with pytest.raises(adsim.ActiveValueLeak, match="also reachable in another way|not a local"):
        adsim.grad(f)(np.array([0.7, 0.3]))
    HOLDERS.clear()


def _other_dtype_view(p):
    u = np.cos(plain_arange(5.0))
    bits = u.view(np.int64)
    u[1:-1] = p[0] * u[2:]
    return np.sum(u) + bits[0]


def test_a_view_of_another_dtype_keeps_the_refusal():
    with pytest.raises(adsim.ActiveValueLeak, match="cannot repeat on an active array"):
        adsim.grad(_other_dtype_view)(np.array([0.7, 0.3]))


def _read_only_broadcast(p):
    u = np.cos(plain_arange(4.0))
    wide = np.broadcast_to(u, (3, 4))
    u[1:3] = p
    return np.sum(wide * plain_arange(12.0).reshape(3, 4)), wide.flags.writeable


def test_a_read_only_view_stays_read_only():
    def f(p):
        total, writeable = _read_only_broadcast(p)
        assert not writeable
        return total
    _check(f, [0.7, 0.3])


# the same for an augmented assignment of the whole array (`u += ...`),
# adsim/_record/plain_targets.py: Python rebinds `u`, adsim the views' names

def _augmented_with_views(p):
    u = np.cos(plain_linspace(0.0, 3.0, 12))
    interior = u[1:-1]
    edges = u[::11]
    same = interior
    for _ in range(4):
        u += 0.1 * p[0] * np.roll(u, 1) - 0.05 * p[1] * u
        u *= 1.0 + 0.01 * p[1]
    return np.sum(interior ** 2) + np.sum(edges) + same[3]


def _augmented_then_write_through_the_view(p):
    u = np.ones(6)
    tail = u[3:]
    u -= p[0] * plain_arange(6.0)
    tail[0] = p[1]
    return np.sum(u ** 2)


@pytest.mark.parametrize("f", [_augmented_with_views, _augmented_then_write_through_the_view])
def test_augmented_assignment_with_views_held_by_local_names(f):
    _check(f, [0.7, 0.3])


def _augmented_view_also_in_a_dict(p):
    u = np.cos(plain_arange(5.0))
    inner = u[1:-1]
    kept = {"inner": inner}
    u += p[0]
    return np.sum(kept["inner"]) + np.sum(u)


def _augmented_other_dtype_view(p):
    u = np.cos(plain_arange(5.0))
    bits = u.view(np.int64)
    u += p[0]
    return np.sum(u) + bits[0]


@pytest.mark.parametrize("f, reason", [(_augmented_view_also_in_a_dict, "also reachable"),
                                       (_augmented_other_dtype_view, "another dtype")])
def test_augmented_assignment_with_views_held_otherwise_is_refused(f, reason):
    with pytest.raises(adsim.UnsupportedOperation, match=reason):
        adsim.grad(f)(np.array([0.7, 0.3]))


# ------------------------------------------- property: views never go unseen

from hypothesis import given, settings, strategies as st      # noqa: E402

VIEWS = [lambda u: u[1:], lambda u: u[::-1], lambda u: u[::3], lambda u: u.reshape(2, 4)[:, 1],
         lambda u: u.reshape(2, 4).T, lambda u: u[2:6][::2]]
HOLD = [None, lambda v: [v], lambda v: {"v": v}]
def run_views(program, use, hold, p):
    u = np.cos(plain_arange(8.0))
    a = VIEWS[use[0]](u) if len(use) > 0 else None
    b = VIEWS[use[1]](u) if len(use) > 1 else None
    c = a
    kept = None if HOLD[hold] is None else HOLD[hold](VIEWS[0](u))
    for kind, j in program:
        w = p[j % 2]
        if kind == 0:
            u[1:5] = w * u[2:6]
        elif kind == 1:
            u[3] = w
        elif kind == 2:
            u[::2] = w + u[1::2]
        else:
            u += w
    total = np.sum(u ** 2)
    for v in (a, b, c):
        if v is not None:
            total = total + np.sum(np.ravel(v) * plain_arange(1.0, np.size(v) + 1))
    if kept is not None:
        total = total + np.sum((kept[0] if isinstance(kept, list) else kept["v"]) ** 2)
    return total


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(program=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1)), min_size=1,
                        max_size=5),
       use=st.lists(st.integers(0, len(VIEWS) - 1), max_size=2),
       hold=st.integers(0, len(HOLD) - 1))
def test_random_stores_with_views_held_or_not(program, use, hold):
    """Refused exactly when a view is held by something other than local
    names; else NumPy's values (every view sees every store), derivatives
    that match differences, and replays."""
    p = np.array([0.7, -0.4])

    def f(q):
        return run_views(program, use, hold, q)
    try:
        tape = adsim.record(f, p)
    except (adsim.ActiveValueLeak, adsim.UnsupportedOperation):
        assert HOLD[hold] is not None, "refused views held by local names only"
        return
    assert HOLD[hold] is None, "replaced a plain array whose view another holder sees"
    # the terms are of order 1 and may cancel (a total of 0.027): rounding of
    # sums taken in another order is absolute, not relative to the total
    assert_close(tape.forward(p), f(p), rtol=1e-14, atol=1e-14, what="value")
    want = np.array([central(f, [p], [e], 1e-3) for e in np.eye(2)])
    assert_close(tape.gradient(p), want, rtol=1e-8, atol=1e-10, what="gradient")
    assert_close(tape.forward(p + 0.1), f(p + 0.1), rtol=1e-13, atol=1e-14, what="replay")
