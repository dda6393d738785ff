"""Item assignment of active values into a plain local array
(adsim/_record/plain_stores.py): ``T[1:-1] = ...`` where ``T`` started from
plain values is the store itself when nothing else holds ``T``, in values
and in every mode; with any alias present the refusal stays, and the alias
never sees a value without its derivative."""
import numpy as np
import pytest

import adsim
from fdcheck import check_tape

# NumPy's own arange and linspace: spelled np.arange(...)/np.linspace(...) in a
# recorded function they make active arrays of constants, and these tests need
# arrays NumPy makes from plain data
plain_arange, plain_linspace = np.arange, np.linspace

X = np.array([0.7, -0.3, 1.1])
BASE = np.ones(3)                  # plain data: copies of it are plain arrays


def slices_of_a_plain_profile(p):
    u = np.cos(plain_linspace(0.0, 2.0, 6))            # plain: depends on no parameter
    u[1:4] = p * u[1:4]
    w = u.copy()                                     # now a copy of an active array
    return np.sum(u ** 2) + w[0]


def mask_and_integer_array_keys(p):
    u = plain_linspace(0.0, 1.0, 6) ** 2
    big = u > 0.3
    u[big] = np.sin(p[0]) * u[big]
    rows = np.array([0, 2])
    u[rows] = p[1:] ** 2
    return np.sum(u * plain_arange(6.0))


def rows_and_columns_of_a_plain_matrix(p):
    M = np.outer(np.ones(3), plain_linspace(1.0, 2.0, 3))
    M[0] = p * M[0]
    M[:, 2] = np.exp(p)
    return np.linalg.det(M + 3.0 * np.eye(3))


def a_plain_state_of_a_time_loop(p):
    T = np.exp(-plain_linspace(-1.0, 1.0, 8) ** 2)
    for _ in range(5):
        Tn = T.copy()
        T[1:-1] = Tn[1:-1] + 0.2 * p[0] * (Tn[2:] - 2 * Tn[1:-1] + Tn[:-2])
        T[0] = T[1]
        T[-1] = T[-2] * p[1]
    return np.sum(T ** 3)


def elements_of_a_copied_initial_state(p):
    y = BASE.copy()
    y[0] = p[0]                                      # NumPy converts by float()
    y[2] = p[1] * p[2]
    return np.sum(y ** 2) * y[1]


def augmented_stores_into_a_plain_state(p):
    u = np.sin(plain_linspace(0.0, 3.0, 6))
    u[1:-1] += 0.1 * p[0] * (u[2:] - 2 * u[1:-1] + u[:-2])    # a view of u, stored back
    u[u > 0.5] *= p[1]                                        # a copy, stored back
    u[0] -= p[2]
    return np.sum(u ** 2)


def a_gauss_seidel_sweep_over_a_plain_grid(p):
    T = plain_linspace(0.0, 1.0, 7) ** 2
    for _ in range(2):
        for i in range(1, 6):
            T[i] = 0.5 * (T[i - 1] + p[0] * T[i + 1]) + p[1]   # element stores
    return np.sum(T * p[2])


def a_store_then_an_update_of_another_plain_local(p):
    T = BASE.copy()
    S = BASE.copy()
    T[1:] = p[1:]                       # reads the frame's locals: none may stay held
    S += p
    return np.sum(T * S)


@pytest.mark.parametrize("f", [augmented_stores_into_a_plain_state,
                               a_store_then_an_update_of_another_plain_local,
                               a_gauss_seidel_sweep_over_a_plain_grid,
                               slices_of_a_plain_profile, mask_and_integer_array_keys,
                               rows_and_columns_of_a_plain_matrix,
                               a_plain_state_of_a_time_loop,
                               elements_of_a_copied_initial_state])
def test_a_store_into_an_unaliased_plain_local_is_differentiated(f):
    check_tape(f, [X])
    tape = adsim.record(f, X)
    moved = X + 0.01
    np.testing.assert_allclose(tape.gradient(moved), adsim.grad(f)(moved), rtol=1e-12)


def alias_by_name(p):
    u = BASE.copy()
    v = u
    u[:2] = p[:2]
    return np.sum(v)


def alias_by_view(p):
    u = np.append(BASE, 1.0)
    head = u[:2]
    u[2:] = p[:2]
    return np.sum(u) + np.sum(head)


class Holder:
    pass


def alias_by_attribute(p):
    h = Holder()
    u = h.u = BASE.copy()
    u[1:] = p[1:]
    return np.sum(h.u)


def alias_by_list(p):
    u = BASE.copy()
    kept = [u]
    u[1:] = p[1:]
    return np.sum(kept[0])


def alias_by_closure(p):
    u = BASE.copy()

    def total():
        return np.sum(u)
    u[1:] = p[1:]
    return total()


PLAIN = np.ones(3)


def alias_by_a_global(p):
    u = PLAIN
    u[1:] = p[1:]
    return np.sum(u)


def an_element_of_an_aliased_array(p):
    u = BASE.copy()
    kept = {"u": u}
    u[0] = p[0]
    return np.sum(kept["u"])


def an_augmented_store_with_an_alias(p):
    u = BASE.copy()
    v = u
    u[1:] += p[1:]
    return np.sum(v)


def an_augmented_store_into_a_view(p):
    big = np.append(BASE, 1.0)
    u = big[1:]
    u[1:] += p[1:]
    return np.sum(big)


def a_key_with_effects(p):
    u = BASE.copy()
    u[plain_arange(2)] = p[:2]
    return np.sum(u)


def a_broadcast_store(p):
    u = np.stack([BASE, BASE])
    u[:, :] = p
    return np.sum(u)


@pytest.mark.parametrize("f", [alias_by_name, alias_by_attribute, alias_by_list,
                               alias_by_closure, alias_by_a_global,
                               an_element_of_an_aliased_array, an_augmented_store_with_an_alias,
                               an_augmented_store_into_a_view, a_key_with_effects,
                               a_broadcast_store])
def test_a_store_into_a_plain_array_held_elsewhere_is_refused(f):
    before = PLAIN.copy()
    with pytest.raises(adsim.errors.ActiveValueLeak, match="assignment into a plain array"):
        adsim.grad(f)(X)
    np.testing.assert_array_equal(PLAIN, before)


def test_float_of_an_active_value_stays_refused():
    with pytest.raises(adsim.errors.ActiveValueLeak, match="float()"):
        adsim.grad(lambda p: float(p[0]) * p[1])(X)


def test_with_interposition_off_the_refusal_stays():
    with adsim.interposition(False):
        with pytest.raises(adsim.errors.ActiveValueLeak):
            adsim.record(slices_of_a_plain_profile, X)


def an_attribute_stored_into(p):
    h = Holder()
    h.u = BASE.copy()
    h.u[1:] = p[1:]
    return np.sum(h.u)


def a_view_stored_into(p):
    u = BASE.copy()[1:]
    u[1:] = p[2:]
    return np.sum(u)


def unaliased_copy_of_data(p):
    u = BASE.copy()
    u[1:] = p[1:]
    return np.sum(u)


def a_list_stored_into(p):
    u = BASE.copy()
    u[1:] = [p[1], p[2] ** 2]           # NumPy converts the list item by item
    return np.sum(u)


def test_the_refused_stores_without_their_alias_are_differentiated():
    np.testing.assert_allclose(adsim.grad(unaliased_copy_of_data)(X), [0.0, 1.0, 1.0])


def test_a_view_held_by_a_local_name_sees_the_store():
    """``head = u[:2]`` holds ``u`` only as its base: both names are rebound
    (the view to the same view of the active copy; more in
    tests/numpy/test_plain_store_views.py)."""
    assert adsim.record(alias_by_view, X).forward(X) == alias_by_view(X)
    np.testing.assert_allclose(adsim.grad(alias_by_view)(X), [1.0, 1.0, 0.0])


@pytest.mark.parametrize("f, reason", [
    (alias_by_name, "also reachable in another way"),
    (an_element_of_an_aliased_array, r"`u\[0\] = ...`.*also reachable"),
    (alias_by_attribute, "also reachable in another way"),
    (an_attribute_stored_into, "not a local variable"),
    (a_view_stored_into, "shares its memory"),
    (alias_by_closure, "not a local variable"),
    (a_key_with_effects, "compute the index into a variable"),
    (a_broadcast_store, "np.broadcast_to"),
    (a_list_stored_into, r"a list of active values.*np\.array\(\[\.\.\.\]\)")])
def test_a_refusal_names_the_store_and_why(f, reason):
    with pytest.raises(adsim.errors.ActiveValueLeak, match=reason):
        adsim.grad(f)(X)


def test_active_arrays_are_no_sequences_to_numpy_yet_iterate_both_ways():
    """Active leaves Python's sequence slot empty, so that NumPy converts it
    by float() in `y[0] = p[0]`; iteration, reversed() and len() stay."""
    def weighted_reverse(x):
        return sum(v * (i + 1) for i, v in enumerate(reversed(x))) + len(x) * x[0]
    np.testing.assert_allclose(adsim.grad(weighted_reverse)(X), [3.0 + 3.0, 2.0, 1.0])
