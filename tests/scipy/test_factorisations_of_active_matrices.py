"""SciPy factorisations of matrices that depend on the inputs: the solves of
``scipy.sparse.linalg.splu(A)`` and ``factorized(A)`` for a sparse matrix
assembled from active values (spsolve's implicit-function rule, the
factorisation reused by the adjoint), and ``scipy.linalg.eig`` and
``eigvals`` (np.linalg.eig's rules, SciPy's result types). Values against
SciPy's, derivatives in every mode against differences
(fdcheck.check_tape), replays at moved points against new recordings."""
import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import adsim
from fdcheck import assert_close, check_tape

N = 6
RHS = np.sin(np.arange(1.0, N + 1))


def _conduction(k):
    """The stiffness matrix of a bar of N cells with conductivities k
    (N + 1 values, ends held at zero), assembled with diags as a finite
    volume code assembles it."""
    main = k[:-1] + k[1:]
    return sp.diags([-k[1:-1], main, -k[1:-1]], [-1, 0, 1], format="csc")


K = 1.0 + 0.3 * np.cos(np.arange(N + 1.0))


def heat_steps(k, steps=3, dt=0.1):
    """Implicit Euler steps u <- (I + dt A)^-1 u: one factorisation, reused."""
    solve = spla.splu(sp.identity(N, format="csc") + dt * _conduction(k)).solve
    u = RHS
    for _ in range(steps):
        u = solve(u)
    return u


CASES = {
    "splu solve, reused": (heat_steps, [K]),
    "splu solve, active right-hand side too": (
        lambda k: spla.splu(_conduction(k)).solve(k[:N] ** 2), [K]),
    "splu solve transposed": (lambda k: spla.splu(_conduction(k) + sp.diags(
        k[1:] * np.arange(N), 1, shape=(N, N), format="csc")).solve(RHS, trans="T"), [K]),
    "splu solve of columns": (lambda k: spla.splu(_conduction(k)).solve(
        np.stack([RHS, RHS[::-1]], axis=1)).ravel(), [K]),
    "factorized": (lambda k: spla.factorized(_conduction(k))(RHS), [K]),
    "splu with permc_spec": (lambda k: spla.splu(_conduction(k), permc_spec="NATURAL").solve(
        RHS), [K]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_solves_of_a_factorised_active_matrix_in_every_mode(name):
    f, xs = CASES[name]
    check_tape(f, xs, value_rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_replay_at_a_moved_point_factorises_the_new_matrix(name):
    f, xs = CASES[name]
    tape = adsim.record(f, *xs)
    moved = [x * 1.3 for x in xs]
    w = np.cos(np.arange(np.size(f(*xs)))).reshape(np.shape(f(*xs)))
    value, g = tape.vjp(moved, w)
    assert_close(value, f(*moved), 1e-12, 1e-14)
    assert_close(g, adsim.vjp(f, tuple(moved), w)[1][0], 1e-11, 1e-13)


def test_splu_of_a_dense_active_matrix_converts_it_as_scipy_does():
    dense = _conduction(K).toarray()

    def f(k):
        return spla.splu(dense + np.diag(k[:N])).solve(RHS)
    with pytest.warns(sp.SparseEfficiencyWarning, match="converted its input to CSC"):
        g = adsim.jacobian(f)(K)
    want = -np.linalg.solve(dense + np.diag(K[:N]), np.diag(np.linalg.solve(
        dense + np.diag(K[:N]), RHS)))
    assert_close(g[:, :N], want, 1e-12, 1e-14)


def test_factors_of_an_active_matrix_are_refused_by_name():
    def uses_factors(k):
        return np.sum(spla.splu(_conduction(k)).U.diagonal())
    with pytest.raises(adsim.UnsupportedAttribute, match="`U` of splu"):
        adsim.grad(uses_factors)(K)
    with pytest.raises(adsim.UnsupportedOperation, match="incomplete factorisation"):
        adsim.grad(lambda k: np.sum(spla.spilu(_conduction(k)).solve(RHS)))(K)
    with pytest.raises(ValueError, match="square"):
        adsim.grad(lambda k: np.sum(spla.splu(sp.csc_matrix(_conduction(k))[:, :3]).solve(
            RHS)))(K)


A0 = np.array([[2.0, 0.3, -0.4, 0.1], [0.5, -1.0, 0.2, 0.0], [0.1, 0.7, 0.5, -0.3],
               [0.0, -0.2, 0.4, 1.5]])


def _parts(z):
    return np.concatenate([np.ravel(np.real(z)), np.ravel(np.imag(z))])


def test_scipy_eig_has_scipys_types_and_values():
    x = np.array([0.3, -0.2, 0.5, 0.1])
    for shift in (np.diag(x), 2.0 * np.outer(x, x[::-1]) - np.outer(x[::-1], x)):
        want_w, want_v = sla.eig(A0 + shift)

        def both(x, shift=shift):
            w, v = sla.eig(A0 + shift)
            assert w.dtype == want_w.dtype == complex and v.dtype == want_v.dtype
            return _parts(w), np.abs(v)
        w, v = both(adsim.value(x))
        tape_w = adsim.record(lambda x: both(x)[0], x).forward(x)
        assert_close(tape_w, _parts(want_w), 1e-12, 1e-14)
        assert_close(adsim.record(lambda x: both(x)[1], x).forward(x), np.abs(want_v), 1e-12,
                     1e-14)
    assert np.iscomplexobj(sla.eigvals(A0)) and not np.iscomplexobj(sla.eig(A0 + A0.T)[1])


EIG_CASES = {
    "eigvals, complex pair": (lambda x: _parts(sla.eigvals(A0 + np.outer(x, x[::-1]))),
                              np.array([0.3, -0.7, 0.5, 0.2])),
    "eig values and vector moduli": (lambda x: np.concatenate([
        _parts(sla.eig(A0 + np.diag(x))[0]), np.abs(sla.eig(A0 + np.diag(x))[1]).ravel()]),
        np.array([0.3, -0.2, 0.5, 0.1])),
    "eig right=False": (lambda x: np.real(sla.eig(A0 * x[0], right=False)), np.array([1.2])),
    "eigvals of a complex intermediate": (lambda x: np.abs(sla.eigvals(A0 + 1j * np.diag(x))),
                                          np.array([0.3, -0.2, 0.5, 0.1])),
}


@pytest.mark.parametrize("name", sorted(EIG_CASES))
def test_scipy_eig_in_every_mode(name):
    f, x = EIG_CASES[name]
    check_tape(f, [x], value_rtol=1e-12, value_atol=1e-14)


def test_a_stability_margin_from_scipy_eigvals():
    """The spectral abscissa of a predator-prey model linearised at its
    coexistence point, as a function of the interaction rates (a damped
    oscillation: the eigenvalues are a complex pair)."""
    def abscissa(p):
        a, b, c, d = p
        prey, predators = c / d, a / b                  # the coexistence point
        J = np.array([[a - b * predators - 0.2 * prey, -b * prey],
                      [d * predators, d * prey - c]])
        return np.max(np.real(sla.eigvals(J)))
    p = np.array([1.1, 0.4, 0.9, 0.3])
    g = adsim.grad(abscissa)(p)
    h = 1e-6
    fd = [(abscissa(p + h * e) - abscissa(p - h * e)) / (2 * h) for e in np.eye(4)]
    assert_close(g, fd, 1e-6, 1e-9)
    assert_close(adsim.jvp(abscissa, (p,), (np.ones(4),))[1], np.sum(fd), 1e-6, 1e-9)


def test_scipy_eig_refuses_what_it_does_not_differentiate():
    with pytest.raises(adsim.UndefinedDerivative, match="repeated"):
        adsim.grad(lambda x: np.sum(np.real(sla.eigvals(np.diag([x[0], x[0], 2.0])))))(
            np.array([1.0]))
    with pytest.raises(adsim.UnsupportedOperation, match="left"):
        adsim.grad(lambda x: np.sum(np.abs(sla.eig(A0 * x[0], left=True)[1])))(np.array([1.0]))
    with pytest.raises(adsim.UnsupportedOperation, match="b="):
        adsim.grad(lambda x: np.sum(np.real(sla.eigvals(A0 * x[0], np.eye(4)))))(np.array([1.0]))
