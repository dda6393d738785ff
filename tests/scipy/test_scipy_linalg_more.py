"""scipy.linalg's lu, norm, pinv, lstsq, solve_banded, solveh_banded, the structured matrices
(block_diag, toeplitz, circulant, hankel) and solve_sylvester, sqrtm, logm
called unchanged on active arrays: every sweep against SciPy's values and
central differences, the identities the factors satisfy, and clear errors
where adsim stops."""
import numpy as np
import pytest
import scipy.linalg as sla

import adsim as ad
from fdcheck import assert_close, check_tape

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 4)) + 4.0 * np.eye(4)
B = rng.standard_normal((3, 3)) + 3.0 * np.eye(3)
Q = rng.standard_normal((4, 3))
SPD = A @ A.T / 4.0 + np.eye(4)          # positive definite: real sqrtm and logm
C = np.array([0.5, -1.2, 2.0])
R = np.array([9.0, 0.7, -0.3, 1.4])

CASES = {
    "lu P L U": (lambda a: sum(np.sum(f * w) for f, w in zip(sla.lu(a), (1.0, 2.0, 3.0))),
                 [rng.standard_normal((4, 4))]),
    "lu factors": (lambda a: np.concatenate([sla.lu(a)[1], sla.lu(a)[2]]), [A]),
    "lu permute_l": (lambda a: sla.lu(a, permute_l=True)[0] @ np.ones(4), [A]),
    "lu p_indices": (lambda a: sla.lu(a, p_indices=True)[1], [A]),
    "norm": (lambda a: sla.norm(a), [A]),
    "norm orders": (lambda a: sla.norm(a, 1) + sla.norm(a, np.inf) + sla.norm(a[0], 3), [A]),
    "norm axis keepdims": (lambda a: sla.norm(a, axis=1, keepdims=True), [A]),
    "solve_banded": (lambda ab, b: sla.solve_banded((1, 2), ab, b),
                     [np.vstack([rng.standard_normal((2, 5)), 4.0 + rng.random((1, 5)),
                                 rng.standard_normal((1, 5))]), rng.standard_normal((5, 2))]),
    "solve_banded vector": (lambda ab, b: sla.solve_banded((1, 0), ab, b),
                            [np.array([[3.0, 2.5, 4.0], [0.5, -0.7, 0.0]]), C]),
    "solveh_banded upper": (lambda ab, b: sla.solveh_banded(ab, b),
                            [np.vstack([[0.0, 0.0, 0.3, -0.2, 0.1], [0.0, 0.5, -0.7, 0.4, 0.2],
                                        4.0 + rng.random((1, 5))]), rng.standard_normal((5, 2))]),
    "solveh_banded lower vector": (lambda ab, b: sla.solveh_banded(ab, b, lower=True),
                                   [np.array([[3.0, 2.5, 4.0], [0.5, -0.7, 0.0]]), C]),
    "block_diag": (lambda a, c: sla.block_diag(a, c, 2.0, np.ones((1, 2))), [B[:2], C]),
    "toeplitz": (lambda c, r: sla.toeplitz(c, r), [C, R]),
    "toeplitz symmetric": (lambda c: sla.toeplitz(c), [C]),
    "toeplitz batch": (lambda c, r: sla.toeplitz(c, r), [np.stack([C, C[::-1]]), R]),
    "circulant": (lambda c: sla.circulant(c), [R]),
    "circulant batch": (lambda c: sla.circulant(c), [np.stack([C, 2 * C])]),
    "hankel": (lambda c, r: sla.hankel(c, r), [C, R]),
    "hankel zeros": (lambda c: sla.hankel(c), [R]),
    "solve_sylvester": (lambda a, b, q: sla.solve_sylvester(a, b, q), [A, B, Q]),
    "solve_sylvester square": (lambda a: sla.solve_sylvester(a, a.T, np.eye(4)), [A]),
    "sqrtm": (lambda a: sla.sqrtm(a), [SPD]),
    "sqrtm nonsymmetric": (lambda a: sla.sqrtm(a), [A]),
    "logm": (lambda a: sla.logm(a), [SPD[:3, :3]]),
    "logm nonsymmetric": (lambda a: sla.logm(a), [B]),
    "pinv": (lambda q: sla.pinv(q), [Q]),
    "pinv rtol": (lambda a: sla.pinv(a, atol=0.0, rtol=1e-10), [A]),
    "lstsq": (lambda q, r: sla.lstsq(q, r)[0], [Q, R]),
    "lstsq residue of a vector": (lambda q, r: sla.lstsq(q, r)[1], [Q, R]),
    "lstsq columns": (lambda q, b: np.concatenate([sla.lstsq(q, b)[0].ravel(),
                                                   sla.lstsq(q, b, cond=1e-12)[1]]),
                      [Q, rng.standard_normal((4, 2))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_sweep(name):
    f, xs = CASES[name]
    check_tape(f, xs, rtol=1e-6, atol=1e-8, value_rtol=1e-10, value_atol=1e-13)


def test_the_factors_and_functions_satisfy_their_identities():
    """Values as SciPy returns them, and tangents of the identities
    P L U = A, sqrtm(A)^2 = A, expm(logm(A)) = A equal to dA."""
    E = rng.standard_normal((4, 4))
    for f in (lambda a: (lambda p, l, u: p @ l @ u)(*sla.lu(a)),
              lambda a: sla.sqrtm(a) @ sla.sqrtm(a), lambda a: sla.expm(sla.logm(a))):
        value, tangent = ad.jvp(f, SPD, E)
        assert_close(value, SPD, rtol=1e-12, atol=1e-12, what="identity")
        assert_close(tangent, E, rtol=1e-9, atol=1e-9, what="its tangent")
    got = ad.jvp(lambda a: sla.lu(a)[0], A, E)
    assert np.array_equal(got[0], sla.lu(A)[0]) and np.all(got[1] == 0.0)


def test_structured_matrices_have_sparse_jacobians():
    pattern = ad.jacobian_sparsity(lambda c: sla.toeplitz(c), C).toarray()
    want = np.zeros((9, 3), dtype=bool)
    for i in range(3):
        for j in range(3):
            want[3 * i + j, abs(i - j)] = True
    assert np.array_equal(pattern, want)


def test_solve_banded_reads_only_the_band():
    ab = np.array([[9.0, 0.5, -0.4], [3.0, 2.5, 4.0], [0.5, -0.7, 7.0]])    # 9 and 7 unused
    g = ad.grad(lambda m: np.sum(sla.solve_banded((1, 1), m, C)))(ab)
    assert g[0, 0] == 0.0 and g[2, 2] == 0.0 and np.all(g[1] != 0.0)


@pytest.mark.parametrize("lower", [False, True])
def test_solveh_banded_reads_only_the_stored_triangle_of_the_band(lower):
    """The corners outside the band get no derivative, and an entry off the
    diagonal counts for both a[i, j] and a[j, i]: against the dense solve."""
    ab = np.array([[3.0, 2.5, 4.0], [0.5, -0.7, 9.0]]) if lower else \
        np.array([[9.0, 0.5, -0.7], [3.0, 2.5, 4.0]])
    unused = (1, 2) if lower else (0, 0)
    g = ad.grad(lambda m: np.sum(sla.solveh_banded(m, C, lower=lower) ** 2))(ab)
    assert g[unused] == 0.0
    off = ab[0, 1:] if not lower else ab[1, :2]
    dense = lambda d, e: np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    diag = ab[1] if not lower else ab[0]
    gd = ad.grad(lambda d: np.sum(np.linalg.solve(dense(d, off), C) ** 2))(diag)
    ge = ad.grad(lambda e: np.sum(np.linalg.solve(dense(diag, e), C) ** 2))(off)
    assert_close(g[1] if not lower else g[0], gd, rtol=1e-12)
    assert_close(g[0, 1:] if not lower else g[1, :2], ge, rtol=1e-12)


def test_solveh_banded_refuses_what_is_not_positive_definite_as_scipy_does():
    ab = np.array([[0.0, 3.0, 3.0], [1.0, 1.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError):
        sla.solveh_banded(ab, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        ad.grad(lambda a: np.sum(sla.solveh_banded(a, np.ones(3))))(ab)


@pytest.mark.parametrize("f, error, words", [
    (lambda a: sla.sqrtm(np.diag([-1.0, 2.0]) + 0.0 * a[:2, :2]), ad.UnsupportedOperation,
     "complex"),
    (lambda a: sla.logm(a, disp=False), ad.UnsupportedOperation, "disp=False"),
    (lambda a: sla.lu(a[:3]), ad.UnsupportedOperation, r"scipy.linalg.lu of shape \(3, 4\)"),
    (lambda a: sla.solve_sylvester(a, a[:3, :3], a), ValueError, "does not match"),
    (lambda a: sla.block_diag(a[None]), ValueError, "dimension greater than 2"),
])
def test_what_adsim_does_not_record_is_refused_by_name(f, error, words):
    with pytest.raises(error, match=words):
        ad.grad(lambda a: np.sum(f(a)))(A)


def test_pinv_and_lstsq_take_scipys_layout():
    """scipy.linalg.pinv and lstsq on active arrays give SciPy's values in
    SciPy's layout (lstsq's residue of a vector b is a scalar; none for an
    underdetermined system), and refuse what their rules do not cover."""
    def parts(q, r):
        x, residue, rank, s = sla.lstsq(q, r)
        want = sla.lstsq(ad.value(q), ad.value(r))
        assert np.shape(residue) == np.shape(want[1]) == () and rank == want[2] == 3
        assert np.shape(sla.lstsq(q.T, r[:3])[1]) == (0,)
        return np.sum(sla.pinv(q)) + residue + np.sum(x) + np.sum(s)
    ad.grad(parts)(Q, R)
    assert_close(ad.record(parts, Q, R).forward(Q, R), parts(Q, R), 1e-12, 0.0, "value")
    with pytest.raises(ad.UnsupportedOperation, match="atol"):
        ad.grad(lambda q: np.sum(sla.pinv(q, atol=1e-3)))(Q)


def test_plain_calls_give_scipys_results_inside_a_recording():
    seen = {}

    def f(a):
        seen["toeplitz"] = sla.toeplitz(C, R)
        seen["sqrtm"] = sla.sqrtm(SPD)
        return np.sum(a)
    ad.grad(f)(C)
    assert np.array_equal(seen["toeplitz"], sla.toeplitz(C, R))
    assert np.array_equal(seen["sqrtm"], sla.sqrtm(SPD))


@pytest.mark.parametrize("name", ["expm", "cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm"])
def test_primary_matrix_functions_every_sweep(name):
    f = getattr(sla, name)
    check_tape(f, [0.3 * B], rtol=1e-6, atol=1e-8, value_rtol=1e-10, value_atol=1e-13)


def test_an_unsupported_option_is_named_by_its_shape_not_its_values():
    # the general generalised problem eig(a, b) is refused, b shown by its shape
    with pytest.raises(ad.UnsupportedOperation,
                       match=r"eigvals\(\.\.\., b=<array of shape \(4, 4\)>\) is not supported"):
        ad.grad(lambda x: np.sum(np.real(sla.eigvals(np.diag(x) + 0.1,
                                                     np.eye(4) * 2))))(np.ones(4))
