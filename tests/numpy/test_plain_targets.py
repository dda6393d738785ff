"""Plain arrays updated in place by active values, and NumPy's functions
reached through the names libraries import them by.

``state += dt * rhs(state, p)`` on a plain ``state`` gives an active array in
its place when nothing else holds it (adsim/_record/plain_targets.py);
constant operands (arrays made in the function from no input) write into it
as NumPy does; anything else is refused, never a silent wrong result: the
property test at the end runs random in-place programs with and without
other holders of the array against NumPy. ``from numpy import zeros,
array`` in a module imported before the recording reaches adsim's creation
wrappers (adsim/_record/interpose.py); another name of them is refused with
an error that says so (adsim/_record/creation.py).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import adsim as ad
import filters_by_name as lib
from adsim.testing import check_grads
from fdcheck import check_tape, fd_jacobian

# NumPy's own arange and linspace: spelled np.arange(...)/np.linspace(...) in a
# recorded function they make active arrays of constants, and these tests need
# arrays NumPy makes from plain data
plain_arange, plain_linspace = np.arange, np.linspace

X0 = np.array([1.0, 0.5, -0.3, 0.8])        # a plain initial state, made outside
P0 = np.array([[1.0, 0.2], [0.2, 0.5]])


def check_replay(f, p, p2):
    """The tape recorded at ``p`` replays ``f``'s value and Jacobian at ``p2``."""
    tape = ad.record(f, p)
    np.testing.assert_allclose(tape.forward(p2), f(p2), rtol=1e-12)
    want = fd_jacobian(f, [p2])
    np.testing.assert_allclose(np.reshape(tape.jacobian(p2), want.shape), want,
                               rtol=1e-7, atol=1e-9)


def check_everywhere(f, p, p2):
    check_tape(f, [p])
    check_replay(f, p, p2)
    check_grads(f, p, modes=("fwd", "rev"), order=2)


# ------------------------------------------------- a time loop from a plain state

@pytest.mark.parametrize("start", [
    lambda: X0.copy(),
    lambda: X0 * 1.0,
    lambda: plain_linspace(0.2, 1.1, 4),          # a view of a temporary nothing else holds
    lambda: np.asarray(X0.tolist()),
], ids=["copy", "product", "linspace", "asarray"])
def test_a_time_loop_from_a_plain_state(start):
    def damped(p):
        state = start()
        dt = 0.05
        for _ in range(6):
            state += dt * (-p[0] * state + p[1] * np.roll(state, 1))
            state *= 1.0 - dt * p[2]
        return state
    p = np.array([0.7, 0.3, 0.1])
    check_everywhere(damped, p, p * 1.1)


def test_every_augmented_operator():
    def f(p):
        y = X0 * 1.0
        y += p[0]
        y -= p[1] * X0
        y *= 1.0 + p[0]
        y /= 2.0 + p[1] ** 2
        z = X0 + 2.0
        z **= p[0]
        w = X0 + 3.0
        w //= 1.0 + 0.1 * p[1]          # piecewise constant: derivative zero
        v = X0 + 5.0
        v %= 2.0 + p[1]
        return y + z + w + v
    check_everywhere(f, np.array([0.4, 0.6]), np.array([0.45, 0.55]))


def test_a_broadcast_operand_and_a_fortran_array():
    def f(p):
        a = np.asfortranarray(np.outer(X0, X0))      # made by NumPy before it is updated
        a += p[0] * X0[:, None] + p[1]
        assert a.flags.f_contiguous
        return a
    check_everywhere(f, np.array([0.3, -0.2]), np.array([0.31, -0.25]))


def test_a_result_that_does_not_fit_the_array_is_numpys_error():
    def f(p):
        a = np.ones(2) * 1.0
        a += np.outer(p, p)
        return a
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        ad.grad(lambda p: np.sum(f(p)))(np.ones(2))


def test_a_target_held_as_an_attribute_or_a_list_item_only():
    """Python stores the result back into the attribute or the item."""
    class State:
        pass

    def f(p):
        s = State()
        s.vel = X0.copy()
        s.vel += p * X0
        items = [X0 * 2.0]
        items[0] -= p
        return s.vel * items[0]
    check_everywhere(f, np.array([0.2, 0.1, 0.4, 0.3]), np.array([0.25, 0.1, 0.3, 0.35]))


# ------------------------------------------------- constants made in the function

def test_a_constant_correction_keeps_the_array_plain_and_shared():
    """``vel -= np.mean(mass * vel, 0) / np.mean(mass)`` with ``mass`` made
    by np.ones in the function: NumPy writes into vel, which stays plain and
    is seen so by every holder; later updates by parameters replace it."""
    seen = {}

    def momentum_free(p):
        n = 4
        mass = 20 * np.ones((n, 1))
        vel = np.stack([X0, X0[::-1]], 1) * 1.0
        holders = [vel]
        vel -= np.mean(mass * vel, 0) / np.mean(mass)
        seen["plain"] = type(vel) is np.ndarray and holders[0] is vel
        del holders
        vel += p[0] * np.ones((n, 2))
        vel *= p[1]
        return vel
    p = np.array([0.3, 1.5])
    check_everywhere(momentum_free, p, p * 0.9)
    assert seen["plain"]
    want = np.stack([X0, X0[::-1]], 1) - np.mean(np.stack([X0, X0[::-1]], 1), 0)
    np.testing.assert_allclose(ad.record(momentum_free, p).forward(p), (want + p[0]) * p[1])


def test_a_small_n_body_integration_from_plain_positions_and_velocities():
    """Leapfrog steps of softened springs between four bodies, written as an
    N-body code is: plain state arrays, momentum removed first, in-place
    updates by forces that depend on the parameters (stiffness, softening)."""
    pos0 = np.array([[0.0, 0.0], [1.0, 0.1], [0.2, 1.1], [1.3, 0.9]])
    vel0 = np.array([[0.1, 0.0], [0.0, -0.1], [-0.05, 0.02], [0.0, 0.08]])

    def forces(pos, p):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = np.sum(d ** 2, axis=2) + p[1] ** 2
        return p[0] * np.sum(d / r2[:, :, None] ** 1.5, axis=1)

    def final_positions(p):
        n, dt = 4, 0.05
        mass = 20 * np.ones((n, 1))
        pos = pos0.copy()
        vel = vel0.copy()
        vel -= np.mean(mass * vel, 0) / np.mean(mass)
        for _ in range(5):
            vel += 0.5 * dt * forces(pos, p) / mass
            pos += dt * vel
            vel += 0.5 * dt * forces(pos, p) / mass
        return pos
    p = np.array([1.5, 0.3])
    check_everywhere(final_positions, p, np.array([1.4, 0.35]))


def test_a_constant_from_data_is_checked_on_replay():
    """A correction computed from a data argument (not differentiated) is
    written as a plain value under a guard: other data records again."""
    def f(p, data):
        out = X0 * 1.0
        out -= np.mean(np.ones(2) * data)
        return np.sum(out * p)
    p = np.array([1.0, 2.0, 3.0, 4.0])
    for data in (np.array([0.5, 1.5]), np.array([2.0, 4.0])):
        np.testing.assert_allclose(ad.grad(f)(p, data), X0 - np.mean(data))


# ------------------------------------------------- refusals

class _Holder:
    pass


def _second_name(a):
    return a


def _a_list(a):
    return [a]


def _an_attribute(a):
    h = _Holder()
    h.a = a
    return h


def _a_view(a):
    return a[1:]


def _a_dict(a):
    return {"a": a}


def _read(holder):
    return holder.a if isinstance(holder, _Holder) else holder["a"] if isinstance(holder, dict) \
        else holder[0] if isinstance(holder, list) else holder


def test_views_of_linspace_s_result_held_by_local_names():
    """NumPy's np.linspace (reached through another name, or by library
    code) returns a view of a temporary of its size, so views of its
    result hold that temporary: `u += ...` with `interior = u[1:-1]`
    refused ("memory other arrays share"); the views' names are rebound
    to the same views of the active result, as for an array that owns its
    memory."""
    def f(p):
        u = plain_linspace(0.0, 1.0, 7)
        interior, even = u[1:-1], u[::2]
        for _ in range(3):
            u += 0.1 * p[0] * np.cos(u)
            u[1:-1] += 0.05 * p[1] * (interior[1:].sum() - even[0])
        return np.sum(interior ** 2) + even.sum() + u[-1]
    x = np.array([0.7, 1.3])
    assert ad.record(f, x).forward(x) == pytest.approx(f(x), rel=1e-14)
    check_tape(f, [x])

    def held_in_a_list(p):
        u = plain_linspace(0.0, 1.0, 7)
        kept = [u[1:-1]]
        u += p[0]
        return kept[0].sum() + u.sum()
    with pytest.raises(ad.UnsupportedOperation, match="memory other arrays share"):
        ad.grad(held_in_a_list)(x)


@pytest.mark.parametrize("hold", [_second_name, _a_list, _an_attribute, _a_view, _a_dict])
@pytest.mark.parametrize("make", [lambda: X0 * 1.0, lambda: plain_linspace(0.2, 1.1, 4)],
                         ids=["owner", "view of a temporary"])
def test_a_plain_array_held_elsewhere_is_refused(hold, make):
    kept = {}

    def f(p):
        a = make()
        kept["holder"] = hold(a)
        a += p
        return a
    with pytest.raises(ad.UnsupportedOperation, match="reachable in another way|memory other"):
        ad.jacobian(f)(np.ones(4))
    before = make()
    np.testing.assert_array_equal(np.ravel(_read(kept["holder"])),
                                  np.ravel(before[1:] if hold is _a_view else before))


@pytest.mark.parametrize("write", [
    lambda a, p: np.add(a, p, out=a),                  # its result is often dropped
    lambda a, p: a[1:].__iadd__(p[1:]),
    lambda a, p: a.T.__imul__(p),
], ids=["explicit out", "into a slice", "into a transpose"])
def test_writes_that_cannot_replace_the_array_are_refused(write):
    def f(p):
        a = X0 * 1.0
        write(a, p)
        return a
    with pytest.raises(ad.UnsupportedOperation, match="plain array"):
        ad.jacobian(f)(np.ones(4))


def test_item_assignment_into_a_plain_array_rebinds_or_is_refused():
    """NumPy converts the value itself (float()): an unaliased local takes an
    active copy holding the store (test_plain_stores.py); an aliased one is
    refused with what to do."""
    def f(p):
        a = X0 * 1.0
        a[1] = p[0]
        return a
    J = np.zeros((X0.size, 4))
    J[1, 0] = 1.0
    np.testing.assert_array_equal(ad.jacobian(f)(np.ones(4)), J)

    def aliased(p):
        a = X0 * 1.0
        b = a
        a[1] = p[0]
        return b
    with pytest.raises(ad.ActiveValueLeak, match="np.zeros_like"):
        ad.jacobian(aliased)(np.ones(4))


def test_a_matrix_product_in_place_is_refused_with_what_to_write():
    def f(p):
        a = P0.copy()
        a @= np.reshape(p, (2, 2))
        return a
    with pytest.raises(ad.UnsupportedOperation, match=r"`@=` .* Write `a = a @ b`"):
        ad.jacobian(f)(np.ones(4))


def test_a_closure_holding_the_array_is_refused():
    def f(p):
        a = X0 * 1.0

        def current():
            return a
        b = current()
        b += p
        return b + current()
    with pytest.raises(ad.UnsupportedOperation, match="reachable in another way"):
        ad.jacobian(f)(np.ones(4))


def test_an_integer_array_is_refused():
    def f(p):
        counts = plain_arange(4)
        counts += p
        return counts
    with pytest.raises(ad.UnsupportedOperation, match="dtype int64"):
        ad.jacobian(f)(np.ones(4))


# ------------------------------------------------- NumPy imported by name

def test_an_unscented_transform_of_a_library_that_imports_numpy_by_name():
    def cross_covariance(p):
        x = np.array([1.0, 2.0])
        P = np.array([[p[0], 0.1], [0.1, p[1]]])
        points, w = lib.sigma_points(x, P)
        f_points = points * p[2]
        h_points = f_points[:, :1] ** 2
        mean_f = np.sum(w[:, None] * f_points, 0)
        mean_h = np.sum(w[:, None] * h_points, 0)
        return lib.cross_covariance(f_points, h_points, mean_f, mean_h, w)
    p = np.array([0.5, 0.7, 1.3])
    check_everywhere(cross_covariance, p, np.array([0.55, 0.6, 1.2]))


def test_a_kalman_update_of_a_plain_covariance():
    def update(p):
        x, P = lib.kalman_update(np.array([0.0, 1.0]), P0.copy(), p[0], np.array([1.0, 0.5]),
                                 p[1])
        return np.concatenate([x, P.ravel()])
    check_everywhere(update, np.array([0.3, 0.2]), np.array([0.35, 0.25]))


def test_a_thin_film_stack_from_a_list_of_thicknesses():
    def transmission(p):
        phases = lib.layer_phases([p[0], 100.0, p[1]], 1.5, 500.0)
        return lib.transmitted(phases, p[2])
    p = np.array([50.0, 70.0, 0.01])
    check_everywhere(transmission, p, np.array([55.0, 65.0, 0.012]))


def test_names_are_rebound_only_while_recording():
    seen = {}

    def f(p):
        seen["during"] = lib.zeros is not np.zeros.__wrapped__
        return np.sum(lib.array([p[0], p[1]])) + lib.sum([p[0] ** 2, p[1]])
    ad.grad(f)(np.ones(2))
    assert seen["during"]
    assert lib.zeros is np.zeros and lib.array is np.array and lib.sum is np.sum
    np.testing.assert_allclose(ad.grad(f)(np.array([3.0, 1.0])), [7.0, 2.0])


def test_names_are_restored_after_an_error_and_one_rebound_meanwhile_is_kept():
    def mine(a, b):
        return np.sum(a * b)

    def f(p):
        lib.dot = mine
        raise RuntimeError("stopped inside the recording")
    try:
        with pytest.raises(RuntimeError, match="stopped inside"):
            ad.grad(f)(np.ones(2))
        assert lib.dot is mine and lib.zeros is np.zeros and lib.outer is np.outer
    finally:
        lib.dot = np.dot


def test_numpy_under_another_module_name():
    import numpy as jnp

    def f(p):
        y = jnp.zeros(3)
        y[1:] = p
        return jnp.array([y[0] + 1.0, y[1] * y[2]])
    check_everywhere(f, np.array([0.5, 2.0]), np.array([0.4, 2.5]))


TO_ARRAY = np.array         # bound before the recording, under another name


def test_creation_through_another_name_names_the_cause():
    def f(p, to_array):
        return np.sum(to_array([p[0], 2.0 * p[1]]))
    with pytest.raises(ad.UnsupportedOperation, match=r"`to_array\(\.\.\.\)` called NumPy's "
                                                      r"np.array .* np.array\(\.\.\.\) here"):
        ad.grad(f)(np.ones(2), TO_ARRAY)
    with pytest.raises(ad.UnsupportedOperation, match=r"`TO_ARRAY\(\.\.\.\)` called"):
        ad.grad(lambda p: np.sum(TO_ARRAY([p[0], p[1]])))(np.ones(2))


# ------------------------------------------------- property: aliases never go unseen

ALIASES = [None, _second_name, _a_list, _an_attribute, _a_view, _a_dict]
STARTS = [lambda: X0 * 1.0, lambda: plain_linspace(0.2, 1.1, 4), lambda: X0[::-1].copy()]


def run_updates(program, p, start, alias):
    """Update a plain array in place by constants and by ``p``, with another
    holder of it present until a "drop" step; read the array and the holder
    at the end (the same code serves plain and active p)."""
    a = STARTS[start]()
    holder = None if ALIASES[alias] is None else ALIASES[alias](a)
    seen = 0.0
    for kind, j in program:
        c = np.mean(np.ones(4) * (j + 1.0))            # made in the function: a constant
        w = p[j % 4]
        if kind == "drop":
            if holder is not None:
                seen = seen + np.sum(np.ravel(_read(holder)) ** 2)
            holder = None
        elif kind == "const":
            a -= c * 0.1
        elif kind == "add":
            a += w * X0
        elif kind == "mul":
            a *= 1.0 + 0.1 * w
        else:
            a /= 2.0 + w * w
    if holder is not None:
        seen = seen + np.sum(np.ravel(_read(holder)) ** 2)
    return np.sum(a * a) + seen


def must_refuse(program, alias, start):
    """Whether an update by p meets the plain array while another holder is
    still there (a view held by a local name alone is not one: it is
    rebound to the same view of the active array,
    adsim/_record/local_views.py; also when the array is np.linspace's
    view of a temporary, whose views hold that temporary)."""
    held = ALIASES[alias] is not None and ALIASES[alias] is not _a_view
    for kind, _ in program:
        if kind == "drop":
            held = False
        elif kind != "const":
            return held
    return False


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(program=st.lists(st.tuples(st.sampled_from(["const", "add", "mul", "div", "drop"]),
                                  st.integers(0, 7)), min_size=1, max_size=7),
       start=st.integers(0, len(STARTS) - 1), alias=st.integers(0, len(ALIASES) - 1))
def test_random_updates_with_and_without_other_holders(program, start, alias):
    """Refused exactly when another holder would see the difference; else
    NumPy's values, and derivatives that match differences and replay."""
    p = np.array([0.3, -0.4, 0.5, 0.2])

    def f(q):
        return run_updates(program, q, start, alias)
    try:
        value, g = ad.value_and_grad(f)(p)
    except ad.UnsupportedOperation:
        assert must_refuse(program, alias, start), "refused an array nothing else holds"
        return
    assert not must_refuse(program, alias, start), "replaced a plain array another holder sees"
    np.testing.assert_allclose(value, f(p), rtol=1e-13)
    np.testing.assert_allclose(g, fd_jacobian(f, [p]).reshape(4), rtol=1e-7, atol=1e-9)
    check_replay(f, p, p + 0.05)
