"""np.linalg.eig and eigvals of general (non-symmetric) matrices: NumPy's
values and result types, derivatives of eigenvalues and of quantities that
do not depend on the eigenvectors' phases against differences in every
mode and on replay, the eigenvector gauge, and refusals at repeated
eigenvalues."""
import numpy as np
import pytest

import adsim
from fdcheck import assert_close, central, check_tape, complex_step

RNG = np.random.default_rng(25)


def parts(z):
    return np.concatenate([np.ravel(np.real(z)), np.ravel(np.imag(z))])


def projector(v):
    """v v^H for a unit vector: independent of v's phase."""
    return np.outer(v, np.conj(v))


# ---- values -------------------------------------------------------------------

def test_values_and_types_are_numpys():
    rotating = np.array([[0.5, -2.0, 0.1], [2.0, 0.3, 0.0], [0.2, 0.1, -1.0]])
    triangular = np.array([[1.0, 2.0, 0.5], [0.0, 3.0, 1.0], [0.0, 0.0, -2.0]])
    for a in (rotating, triangular, RNG.standard_normal((2, 4, 4))):
        w, V = np.linalg.eig(a)
        seen = {}

        def f(m):
            got = np.linalg.eig(m)
            seen["types"] = (got.eigenvalues.dtype, got.eigenvectors.dtype,
                             np.linalg.eigvals(m).dtype)
            return np.concatenate([parts(got.eigenvalues), parts(got[1]),
                                   parts(np.linalg.eigvals(m))])
        tape = adsim.record(f, a)
        assert seen["types"] == (w.dtype, V.dtype, w.dtype)
        assert np.array_equal(tape.forward(a), f(a))
        b = a + 0.01 * RNG.standard_normal(a.shape)       # a replay computes NumPy's values
        assert np.array_equal(tape.forward(b), f(b))


def test_a_stack_is_complex_when_one_matrix_has_a_complex_pair():
    a = np.stack([np.diag([1.0, 2.0]), np.array([[0.0, -1.0], [1.0, 0.0]])])

    def f(m):
        w = np.linalg.eigvals(m)
        assert w.dtype == np.complex128
        return parts(w)
    assert np.array_equal(adsim.record(f, a).forward(a), f(a))
    check_tape(f, [a])


# ---- derivatives ----------------------------------------------------------------

def test_eigenvalues_of_a_real_matrix_with_a_complex_pair():
    a = RNG.standard_normal((4, 4))
    assert np.iscomplexobj(np.linalg.eigvals(a))
    check_tape(lambda m: parts(np.linalg.eigvals(m)), [a], value_atol=1e-15)
    check_tape(lambda m: parts(np.linalg.eig(m).eigenvalues), [a], value_atol=1e-15)


def test_phase_free_functions_of_the_eigenvectors():
    a = RNG.standard_normal((3, 3))

    def shapes(m):
        w, V = np.linalg.eig(m)
        return np.concatenate([np.ravel(np.abs(V) ** 2), parts(projector(V[:, 1])),
                               parts(V @ np.diag(w) @ np.conj(V[:, 0]))])
    check_tape(shapes, [a], value_atol=1e-14)


def test_complex_matrices():
    b, c = RNG.standard_normal((2, 3, 3))

    def f(re, im):
        w, V = np.linalg.eig(re + 1j * im)
        return np.concatenate([parts(w), parts(projector(V[:, 2])),
                               parts(np.linalg.eigvals(re - 0.5j * im))])
    check_tape(f, [b, c], value_atol=1e-14)


def test_complex_step_agrees_where_the_eigenvalues_are_real():
    a = np.array([[1.0, 0.4, 0.0], [0.2, 2.5, 0.3], [0.1, 0.0, 4.0]])
    v = RNG.standard_normal(a.shape)
    _, jv = adsim.jvp(np.linalg.eigvals, (a,), (v,))
    assert_close(jv, complex_step(np.linalg.eigvals, [a], [v]), 1e-12, 1e-14)
    _, jv = adsim.jvp(lambda m: np.linalg.eig(m)[0], (a,), (v,))
    assert_close(jv, complex_step(lambda m: np.linalg.eig(m)[0], [a], [v]), 1e-12, 1e-14)


def test_eigenvector_tangents_follow_the_documented_gauge():
    """dv_k = dx_k - v_k Re(v_k^H dx_k), dX = V (F o (V^{-1} dA V)): the norm
    stays 1 (Re(v_k^H dv_k) = 0)."""
    a, da = RNG.standard_normal((2, 4, 4))
    w, V = np.linalg.eig(a)
    _, got = adsim.jvp(lambda m: parts(np.linalg.eig(m)[1]), (a,), (da,))
    got = got[:16].reshape(4, 4) + 1j * got[16:].reshape(4, 4)
    gaps = w[None, :] - w[:, None]
    F = np.where(np.eye(4, dtype=bool), 0.0, 1.0 / (gaps + np.eye(4)))
    dX = V @ (F * np.linalg.solve(V, da @ V))
    want = dX - V * np.real(np.sum(np.conj(V) * dX, axis=0))
    assert_close(parts(got), parts(want), 1e-12, 1e-13)
    assert_close(np.real(np.sum(np.conj(V) * got, axis=0)), np.zeros(4), 0, 1e-13)


def test_replay_at_new_points_matches_a_new_recording():
    def growth(p):
        a = np.array([[p[0], -p[1], 0.2], [p[1], p[0], 0.1], [0.3, 0.0, -p[2]]])
        w, V = np.linalg.eig(a)
        return np.max(np.real(w)) + np.sum(np.abs(V[:, 0]) ** 4)
    p = np.array([0.1, 2.0, 1.0])
    tape = adsim.record(growth, p)
    for q in (p * 1.05, p + np.array([0.2, -0.3, 0.1])):
        assert_close(tape.gradient(q), adsim.grad(growth)(q), 1e-12, 1e-14)
        e = np.eye(3)
        fd = np.array([central(growth, [q], [e[i]]) for i in range(3)])
        assert_close(tape.gradient(q), fd, 1e-7, 1e-9)


# ---- user programs ----------------------------------------------------------------

def lotka_volterra_jacobian(p):
    """Jacobian of a predator-prey model with logistic prey growth at its
    coexistence equilibrium."""
    r, K, a, b, m = p
    x = m / b
    y = r * (1.0 - x / K) / a
    return np.array([[r - 2.0 * r * x / K - a * y, -a * x],
                     [b * y, b * x - m]])


def spectral_abscissa(p):
    """Growth rate of the slowest-decaying perturbation: stability margin."""
    return np.max(np.real(np.linalg.eigvals(lotka_volterra_jacobian(p))))


def test_stability_margin_of_a_predator_prey_equilibrium():
    p = np.array([1.0, 10.0, 0.5, 0.2, 0.6])
    assert np.iscomplexobj(np.linalg.eigvals(lotka_volterra_jacobian(p)))   # a spiral
    g = adsim.grad(spectral_abscissa)(p)
    e = np.eye(p.size)
    assert_close(g, [central(spectral_abscissa, [p], [e[i]]) for i in range(p.size)])
    # at a stable spiral the abscissa is half the trace: -r x / (2K)
    r, K, a, b, m = p
    x = m / b
    assert_close(spectral_abscissa(p), -r * x / (2 * K), 1e-12, 0)
    check_tape(spectral_abscissa, [p])


def damped_frequencies(masses, springs, damping):
    """Damped natural frequencies (rad/s) of a chain of masses fixed at one
    end, from the first-order system's eigenvalues, highest first."""
    n = masses.size
    K = np.diag(springs) + np.diag(np.append(springs[1:], 0.0))
    K -= np.diag(springs[1:], 1) + np.diag(springs[1:], -1)
    C = damping * K
    Minv = np.diag(1.0 / masses)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ C]])
    lam = np.linalg.eigvals(A)
    return np.sort(np.abs(lam.imag))[::-2]


def test_damped_oscillator_frequencies():
    k, c, mass = 4.0, 0.1, 1.5

    def one(p):
        return damped_frequencies(p[:1], p[1:2], p[2])[0]
    p = np.array([mass, k, c])
    damping = c * k                  # C = c K
    assert_close(one(p), np.sqrt(k / mass - (damping / (2 * mass)) ** 2), 1e-12, 0)
    g = adsim.grad(one)(p)
    e = np.eye(3)
    assert_close(g, [central(one, [p], [e[i]]) for i in range(3)])

    def chain(theta):
        return damped_frequencies(theta[:3], theta[3:6], theta[6])
    theta = np.array([1.0, 2.0, 1.5, 5.0, 3.0, 4.0, 0.02])
    check_tape(chain, [theta], order=2)


def test_crossing_to_real_eigenvalues_is_a_branch_replays_check():
    def decay(p):
        k, c = p
        lam = np.linalg.eigvals(np.array([[0.0, 1.0], [-k, -c]]))
        return np.sum(np.abs(lam.imag)) - np.max(np.real(lam))
    tape = adsim.record(decay, np.array([4.0, 1.0]))            # underdamped
    with pytest.raises(adsim.BranchChanged):
        tape.gradient(np.array([1.0, 3.0]))                     # overdamped
    assert_close(adsim.grad(decay)(np.array([1.0, 3.0])),
                 [1 / np.sqrt(5.0), 0.5 - 1.5 / np.sqrt(5.0)], 1e-12, 1e-14)


# ---- repeated eigenvalues ------------------------------------------------------------

def jordan(p):
    return np.array([[p[0], 1.0], [0.0, p[0]]]) * p[1]


@pytest.mark.parametrize("f", [
    lambda p: np.sum(np.real(np.linalg.eigvals(jordan(p)))),
    lambda p: np.sum(np.real(np.linalg.eig(jordan(p))[0])),
    lambda p: np.sum(np.abs(np.linalg.eig(jordan(p))[1])),
    lambda p: np.sum(np.linalg.eigvals(p[0] * np.eye(3) + p[1])),     # diagonalisable
    lambda p: np.sum(np.real(np.linalg.eigvals(                        # 3 x 3 Jordan block
        p[0] * np.eye(3) + np.diag([p[1], p[1]], 1)))),
], ids=["eigvals", "eig values", "eig vectors", "repeated diagonalisable", "jordan 3"])
def test_repeated_eigenvalues_have_no_derivative(f):
    p = np.array([1.0, 2.0])
    for derivative in (lambda: adsim.grad(f)(p), lambda: adsim.jvp(f, (p,), (np.ones(2),))):
        with pytest.raises(adsim.UndefinedDerivative, match="repeated"):
            derivative()


def test_close_but_well_conditioned_eigenvalues_are_differentiated():
    """Eigenvalues 1e-9 apart of a matrix close to normal are distinct far
    beyond their rounding errors: dλ = w^H dA v / (w^H v), from SciPy's left
    eigenvectors."""
    import scipy.linalg
    a = np.diag([1.0, 1.0 + 1e-9, 3.0])
    a[2, :2] = [0.3, -0.2]
    lam, left, right = scipy.linalg.eig(a, left=True)
    k = int(np.argmin(np.abs(lam - (1.0 + 1e-9))))
    w, v = left[:, k], right[:, k]
    want = np.real(np.outer(np.conj(w), v) / (np.conj(w) @ v))
    g = adsim.grad(lambda m: np.real(np.linalg.eigvals(m))[k])(a)
    assert_close(g, want, 1e-6, 1e-9)
