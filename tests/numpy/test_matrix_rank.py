"""np.linalg.matrix_rank of active matrices: NumPy's count of the singular
values above its tolerance, recorded as data (an integer every replay
computes again, derivative zero); int() of it is a recorded guard. Before,
it was refused as a function without a rule."""
import numpy as np
import pytest

import adsim
from fdcheck import differences

FULL = np.array([1.0, 2.0, 3.0, 2.0, 4.0, 6.0001, 1.0, 0.0, 1.0])
DEFICIENT = np.array([1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 1.0, 0.0, 1.0])     # row 2 = 2 row 1


def weighted(a):
    return np.sum(a ** 2) * np.linalg.matrix_rank(a.reshape(3, 3))


def test_the_rank_is_numpys_and_its_derivative_zero():
    for a in (FULL, DEFICIENT):
        assert adsim.record(weighted, a).forward(a) == weighted(a)
    np.testing.assert_allclose(adsim.grad(weighted)(FULL), differences(weighted, FULL, 1e-7),
                               rtol=1e-6)
    # where the rank drops, any move raises it again: the rank held, as at any step's edge
    np.testing.assert_allclose(adsim.grad(weighted)(DEFICIENT), 2 * 2 * DEFICIENT)
    z = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(adsim.jacobian(lambda z: z * np.linalg.matrix_rank(
        np.outer(z, z)))(z), np.eye(3))


def test_a_replay_computes_the_rank_again():
    tape = adsim.record(weighted, FULL)
    assert np.linalg.matrix_rank(DEFICIENT.reshape(3, 3)) == 2
    assert tape.forward(DEFICIENT) == weighted(DEFICIENT)
    np.testing.assert_allclose(tape.gradient(DEFICIENT), 4.0 * DEFICIENT)


def test_the_rank_as_a_python_int_is_guarded():
    def f(a):
        return sum(a[k] for k in range(int(np.linalg.matrix_rank(a.reshape(3, 3)))))
    tape = adsim.record(f, FULL)
    with pytest.raises(adsim.BranchChanged):
        tape.forward(DEFICIENT)
    np.testing.assert_array_equal(adsim.grad(f)(DEFICIENT), [1, 1, 0, 0, 0, 0, 0, 0, 0])


def test_numpys_arguments():
    a = FULL.reshape(3, 3)
    for kwargs in ({"tol": 0.5}, {"rtol": 0.1}, {"hermitian": True}):
        got = adsim.grad(lambda x: np.sum(x) * np.linalg.matrix_rank(
            (x.reshape(3, 3) @ x.reshape(3, 3).T), **kwargs))(FULL)
        np.testing.assert_array_equal(got, np.full(9, np.linalg.matrix_rank(a @ a.T, **kwargs)))
    with pytest.raises(ValueError, match="can't be both set"):
        adsim.grad(lambda x: np.sum(x) * np.linalg.matrix_rank(x.reshape(3, 3), tol=1.0,
                                                                rtol=1.0))(FULL)
