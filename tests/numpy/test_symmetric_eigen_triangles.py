"""np.linalg.eigh and eigvalsh read one triangle of their matrix (UPLO). The
values on active matrices are NumPy's to the last bit for either triangle --
eigenvector signs included, which depend on the triangle LAPACK reads -- and
the derivatives are those of the triangle read, in every mode and on replay."""
import numpy as np
import pytest

import adsim
from fdcheck import check_tape

RNG = np.random.default_rng(7)


def stiffness_upper(k):
    """A spring chain's stiffness matrix assembled into its upper triangle
    only, as codes that hand it to a symmetric solver often do."""
    n = k.size - 1
    K = np.zeros((n, n))
    for i in range(n):
        K[i, i] = k[i] + k[i + 1]
        if i + 1 < n:
            K[i, i + 1] = -k[i + 1]
    return K


def lowest_mode(k, uplo):
    w, V = np.linalg.eigh(stiffness_upper(k), UPLO=uplo)
    shape = V[:, 0] * np.sign(V[0, 0])       # the mode's sign fixed by its first entry
    return np.concatenate([w[:2], shape])


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_values_are_numpys_for_either_triangle(uplo):
    a = RNG.standard_normal((5, 5))                  # not symmetric: the triangle matters
    tape_w = adsim.record(lambda m: np.linalg.eigh(m, uplo)[0], a)
    tape_v = adsim.record(lambda m: np.linalg.eigh(m, uplo)[1], a)
    tape_s = adsim.record(lambda m: np.linalg.eigvalsh(m, UPLO=uplo), a)
    w, V = np.linalg.eigh(a, uplo)
    assert np.array_equal(tape_w.forward(a), w)
    assert np.array_equal(tape_v.forward(a), V)
    assert np.array_equal(tape_s.forward(a), np.linalg.eigvalsh(a, uplo))
    b = a + 0.01 * RNG.standard_normal(a.shape)      # a replay computes NumPy's values too
    assert np.array_equal(tape_v.forward(b), np.linalg.eigh(b, uplo)[1])


def test_a_stack_of_matrices_read_from_the_upper_triangle():
    a = RNG.standard_normal((2, 4, 4))
    got = adsim.record(lambda m: np.linalg.eigh(m, "U")[1], a).forward(a)
    assert np.array_equal(got, np.linalg.eigh(a, "U")[1])


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_spring_chain_modes_in_every_mode(uplo):
    k = np.array([1.0, 2.0, 1.5, 3.0, 2.5])
    check_tape(lambda k: lowest_mode(k, uplo), [k])
    _, J = adsim.jvp(lambda k: lowest_mode(k, uplo), (k,), (np.ones_like(k),))
    assert np.all(np.isfinite(J))


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_only_the_triangle_read_has_a_derivative(uplo):
    a = RNG.standard_normal((4, 4))
    g = adsim.grad(lambda m: np.sum(np.linalg.eigvalsh(m, uplo) ** 3))(a)
    unread = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(unread == 0.0)
    check_tape(lambda m: np.linalg.eigh(m, uplo)[0] ** 2, [a])


def test_replay_at_a_new_point_matches_a_new_recording():
    k = np.array([1.0, 2.0, 1.5, 3.0, 2.5])
    f = lambda k: np.sum(lowest_mode(k, "U") ** 2)     # noqa: E731
    tape = adsim.record(f, k)
    k2 = k * 1.1
    np.testing.assert_allclose(tape.gradient(k2), adsim.grad(f)(k2), rtol=1e-12, atol=1e-14)
