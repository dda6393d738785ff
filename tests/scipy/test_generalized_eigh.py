"""scipy.linalg.eigh(a, b) and eigvalsh(a, b), the generalized symmetric-
definite eigenproblem, with a and/or b active, and subset_by_index (with or
without b): SciPy's values, derivatives in every mode against central
differences (fdcheck.check_tape, Hessian-vector products included),
replays at new points, and the refusals."""
import numpy as np
import pytest
import scipy.linalg as sl

import adsim
from adsim.errors import UndefinedDerivative, UnsupportedOperation
from fdcheck import check_tape

RNG = np.random.default_rng(6)
_G = RNG.standard_normal((3, 3))
A = _G + _G.T + np.diag([3.0, 0.0, -3.0])
_H = RNG.standard_normal((3, 3))
B = _H @ _H.T + 3.0 * np.eye(3)
X0 = np.array([0.3, 0.7, 1.2])

CASES = {
    "values, active a": lambda x: sl.eigh(A * x[0] + np.diag(x), B)[0],
    "vectors, active a": lambda x: sl.eigh(A * x[0] + np.diag(x), B)[1],
    "vectors, active b": lambda x: sl.eigh(A, B + np.outer(x, x))[1],
    "eigvalsh, active b": lambda x: sl.eigvalsh(A, B * x[0] + np.diag(x)),
    "both active, upper triangles": lambda x: sl.eigh(A + np.outer(x, x[::-1]), B * x[1],
                                                      lower=False)[1],
    "eigvals_only, triangles read": lambda x: sl.eigh(np.triu(A + np.outer(x, x)),
                                                      np.tril(B) * x[2], eigvals_only=True),
    # a mass-spring chain: K x = w^2 M x, stiffness and masses as parameters
    "vibration modes": lambda x: np.sqrt(sl.eigvalsh(
        np.diag(np.r_[x[0] + x[1], x[1] + x[2], x[2]]) - np.diag(np.r_[x[1], x[2]], 1)
        - np.diag(np.r_[x[1], x[2]], -1), np.diag(1.0 + x ** 2))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_derivatives(name):
    f = CASES[name]
    tape = check_tape(f, [X0], value_rtol=0.0, value_atol=0.0)       # SciPy's own values
    other = X0 + np.array([0.05, -0.03, 0.04])
    np.testing.assert_array_equal(tape.forward(other), f(other))
    np.testing.assert_allclose(tape.jacobian(other), adsim.record(f, other).jacobian(other),
                               rtol=1e-12, atol=1e-14)


def test_eigenvectors_are_b_orthonormal_and_their_derivatives_keep_it():
    def gram(x):
        X = sl.eigh(A * x[0] + np.diag(x), B + np.outer(x, x))[1]
        return X.T @ (B + np.outer(x, x)) @ X
    jac = adsim.jacobian(gram)(X0)
    np.testing.assert_allclose(jac, 0.0, atol=1e-12)


def test_repeated_eigenvalues_refuse_eigenvector_derivatives():
    f = lambda x: sl.eigh(np.diag([1.0, 1.0, 2.0]) * x[0], B)[1]     # noqa: E731
    g = lambda x: sl.eigh(np.eye(3) * x[0], np.eye(3))[1]             # noqa: E731
    with pytest.raises(UndefinedDerivative, match=r"scipy\.linalg\.eigh\(b=\.\.\.\)"):
        adsim.jacobian(g)(X0)
    adsim.jacobian(f)(X0)       # distinct generalized eigenvalues: fine


def test_other_problem_types_and_drivers_are_refused():
    with pytest.raises(UnsupportedOperation, match="type=2"):
        adsim.record(lambda x: sl.eigh(A * x[0], B, type=2)[0], X0)
    with pytest.raises(UnsupportedOperation, match="driver='gv'"):
        adsim.record(lambda x: sl.eigh(A * x[0], B, driver="gv")[0], X0)


def test_b_not_positive_definite_raises_scipys_error():
    with pytest.raises(np.linalg.LinAlgError):
        adsim.record(lambda x: sl.eigh(A * x[0], -B)[0], X0)


_G4 = RNG.standard_normal((4, 4))
A4 = _G4 + _G4.T + np.diag([3.0, 0.0, -3.0, 1.5])
_H4 = RNG.standard_normal((4, 4))
B4 = _H4 @ _H4.T + 3.0 * np.eye(4)
X4 = np.array([0.3, 0.7, 1.2, -0.4])

SUBSETS = {
    "pencil, values": lambda x: sl.eigh(A4 * x[0] + np.diag(x), B4, subset_by_index=[0, 1])[0],
    "pencil, vectors, active a": lambda x: sl.eigh(A4 * x[0] + np.diag(x), B4,
                                                   subset_by_index=[1, 2])[1],
    "pencil, first vector, active b": lambda x: sl.eigh(A4, B4 + np.outer(x, x),
                                                        subset_by_index=[0, 0])[1],
    "pencil, upper triangles": lambda x: sl.eigh(A4 + np.outer(x, x[::-1]), B4 * x[1],
                                                 lower=False, subset_by_index=[2, 3])[1],
    "one matrix, eigvalsh": lambda x: sl.eigvalsh(A4 * x[0] + np.diag(x), subset_by_index=[1, 3]),
    "one matrix, vectors": lambda x: sl.eigh(A4 * x[0] + np.diag(x), subset_by_index=[0, 1])[1],
}


@pytest.mark.parametrize("name", list(SUBSETS))
def test_subset_by_index(name):
    f = SUBSETS[name]
    # h: the eigenvectors' curvature needs a smaller step for differences of the gradient
    tape = check_tape(f, [X4], value_rtol=0.0, value_atol=0.0, h=2.5e-4)
    other = X4 + np.array([0.05, -0.03, 0.04, 0.02])
    np.testing.assert_array_equal(tape.forward(other), f(other))


def test_subset_by_index_out_of_range_raises_scipys_error():
    with pytest.raises(ValueError, match="indices"):
        adsim.record(lambda x: sl.eigh(A4 * x[0], B4, subset_by_index=[2, 4])[0], X4)


@pytest.mark.parametrize("seed", range(8))
def test_one_matrix_values_and_signs_are_scipys(seed):
    # SciPy's eigh (driver 'evr') and NumPy's (syevd) choose other eigenvector
    # signs for most matrices: an active matrix gets SciPy's, to the bit
    r = np.random.default_rng(seed)
    n = 2 + seed % 4
    G = r.standard_normal((n, n))
    a = G + G.T
    for f in (lambda m: sl.eigh(m)[1], lambda m: sl.eigh(m, lower=False)[1],
              lambda m: sl.eigh(m)[0], lambda m: sl.eigvalsh(m)):
        np.testing.assert_array_equal(adsim.record(f, a).forward(a), f(a))
    # SciPy's 'evr' signs can flip between nearby matrices: the derivatives are
    # checked on products invariant to a column's sign
    check_tape(lambda m: (lambda X: X * X[:1])(sl.eigh(m)[1]), [a], value_rtol=0.0,
               value_atol=0.0)


def test_one_matrix_tape_file_round_trip(tmp_path):
    import subprocess
    import sys
    a = A + np.diag([1.0, 2.0, 3.0])
    tape = adsim.record(lambda m: sl.eigh(m)[1], a)
    path = tmp_path / "eigh.tape"
    with open(path, "wb") as f:
        tape.save(f)
    code = ("import numpy as np, adsim.tapefile as tf; "
            f"t = tf.load(open({str(path)!r}, 'rb')); "
            f"a = np.array({a.tolist()!r}); print(repr(float(np.abs(t.jacobian(a)).sum())))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert float(out) == float(np.abs(tape.jacobian(a)).sum())
