"""Root finders of scipy.optimize differentiated through their solutions
(implicit function theorem): fsolve, root (every method), the scalar
root finders, newton, the large-scale nonlinear solvers and fixed_point,
called as users write them, with the parameters in args, a closure, an
object or a global."""
import numpy as np
import pytest
import scipy.optimize as so

import adsim
from adsim.errors import SolverNotConverged, UndefinedDerivative
from fdcheck import assert_close, central
from implicit_checks import check_solution_derivatives

P = np.array([1.0, 2.0])
V = np.array([0.3, -0.7])


def cubic(z, p):
    """z^3 + p z - 1 = 0, one real root per component for p > 0."""
    return z ** 3 + p * z - 1.0


def test_fsolve_with_args_every_check():
    def f(p):
        x = so.fsolve(cubic, np.ones(2), args=(p,), xtol=1e-13)
        return np.sum(x ** 2)
    check_solution_derivatives(f, P, V)


def test_the_solution_is_scipys_own_value():
    def f(p):
        x = so.fsolve(cubic, np.ones(2), args=(p,), xtol=1e-13)
        return x
    tape = adsim.record(f, P)
    want = so.fsolve(cubic, np.ones(2), args=(P,), xtol=1e-13)
    assert np.array_equal(tape.forward(P), want)


def test_fsolve_full_output_and_a_closure():
    def f(p):
        x, info, ier, message = so.fsolve(lambda z: cubic(z, p), np.ones(2), xtol=1e-13,
                                          full_output=True)
        assert ier == 1 and isinstance(info["nfev"], int)    # SciPy's plain values
        return np.sum(np.sin(x))
    check_solution_derivatives(f, P, V)


# methods that reach 1e-10 on this problem without warnings
@pytest.mark.parametrize("method, tol", [("hybr", 1e-13), ("lm", 1e-13), ("krylov", 1e-12),
                                         ("broyden1", 1e-11), ("anderson", 1e-11)])
def test_root_every_method_gives_the_same_derivative(method, tol):
    def f(p):
        res = so.root(cubic, np.full(2, 0.6), args=(p,), method=method, tol=tol)
        return np.sum(res.x ** 2)
    g = adsim.grad(f)(P)
    assert_close(g @ V, central(f, [P], [V], h=1e-4), 1e-5, 1e-7, method)


def test_root_with_jacobian_returned_with_the_function():
    def fun(z, p):
        return cubic(z, p), np.diag(3 * z ** 2 + p)

    def f(p):
        return np.sum(so.root(fun, np.ones(2), args=(p,), jac=True, tol=1e-13).x ** 3)
    check_solution_derivatives(f, P, V)


class Kinetics:
    """A bound method reading the rate constants from ``self``."""

    def __init__(self, k):
        self.k = k

    def rates(self, c):
        return np.array([1.0 - self.k[0] * c[0] - c[0] * c[1],
                         self.k[1] * c[0] * c[1] - c[1] + 0.1])


def test_parameters_read_from_an_object():
    def f(k):
        model = Kinetics(k)
        c = so.fsolve(model.rates, np.array([0.5, 0.5]), xtol=1e-13)
        return c[0] * c[1]
    check_solution_derivatives(f, np.array([0.8, 1.5]), V, moved=0.02)


SHIFT = None


def shifted(z):
    return z ** 3 + z - SHIFT


def test_parameters_read_from_a_global():
    def f(s):
        global SHIFT
        SHIFT = s
        try:
            return np.sum(so.fsolve(shifted, np.ones(2), xtol=1e-13))
        finally:
            SHIFT = None
    check_solution_derivatives(f, np.array([1.0, 3.0]), V, second_order=False)


def test_parameters_in_a_dict_in_args():
    def fun(z, params):
        return z ** 3 + params["a"] * z - params["b"]

    def f(p):
        return np.sum(so.fsolve(fun, np.ones(2), args=({"a": p[0], "b": p[1]},), xtol=1e-13))
    check_solution_derivatives(f, P, V)


@pytest.mark.parametrize("name", ["brentq", "brenth", "ridder", "bisect", "toms748"])
def test_bracketing_root_finders(name):
    def f(p):
        return getattr(so, name)(lambda z: z ** 3 + p[0] * z - p[1], 0.0, 3.0, xtol=1e-14)
    # z^3 + a z = b: dz/da = -z / (3 z^2 + a), dz/db = 1 / (3 z^2 + a); z = 1 at (1, 2)
    assert_close(adsim.grad(f)(P), [-0.25, 0.25], 1e-10, 1e-12, name)


def test_brentq_with_the_parameter_in_a_closure_user_program():
    """The temperature at which a vapour pressure reaches a target, as a
    function of the Antoine coefficients (brentq on the closure)."""
    def boiling_point(coefficients, pressure=101.325):
        A, B, C = coefficients

        def gap(T):
            return 10.0 ** (A - B / (C + T)) - pressure
        return so.brentq(gap, 50.0, 150.0, xtol=1e-13)
    abc = np.array([7.196, 1730.63, 233.426])      # water, T in degrees C, p in mmHg-ish
    check_solution_derivatives(boiling_point, abc, np.array([1e-3, 0.5, 0.1]),
                               rtol=1e-5, moved=np.array([1e-3, 0.2, 0.1]))


def test_root_scalar_and_newton():
    def by_root_scalar(p):
        return so.root_scalar(lambda z, a: z ** 3 + a[0] * z - a[1], args=(p,),
                              bracket=(0.0, 3.0), xtol=1e-14).root

    def by_newton(p):
        return so.newton(lambda z: z ** 3 + p[0] * z - p[1], 1.5,
                         fprime=lambda z: 3 * z ** 2 + p[0], tol=1e-14)
    for f in (by_root_scalar, by_newton):
        check_solution_derivatives(f, P, V, moved=0.01)


def test_newton_on_an_array_of_starts():
    def f(p):
        return np.sum(so.newton(lambda z: z ** 3 + p * z - 1.0, np.ones(2), tol=1e-14))
    check_solution_derivatives(f, P, V)


@pytest.mark.parametrize("name", [
    "newton_krylov",
    # anderson's own mixing solves become ill-conditioned near the root; on
    # NumPy before 2.3 SciPy's anderson breaks down there (0/0, then its own
    # "array must not contain infs or NaNs") before adsim is involved
    pytest.param("anderson", marks=[
        pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning"),
        pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.4.0",
                           reason="SciPy's anderson divides 0 by 0 on this problem with NumPy "
                                  "2.2.0 and 2.3.0 (it solves it with 2.4.6)")])])
def test_large_scale_solvers(name):
    def f(p):
        return np.sum(getattr(so, name)(lambda z: cubic(z, p), np.full(2, 0.6), f_tol=1e-12) ** 2)
    check_solution_derivatives(f, P, V, rtol=1e-5)


def test_fixed_point():
    def f(p):
        return np.sum(so.fixed_point(lambda z, a: np.cos(z) * a / 3, np.ones(2), args=(p,),
                                     xtol=1e-14) ** 2)
    check_solution_derivatives(f, P, V)


def test_reaction_diffusion_steady_state_by_newton_krylov():
    """u'' + k (1 - u) exp(-u) = 0 on (0, 1), u = a at the left end and 0
    at the right, 450 unknowns, preconditioned by the Laplacian as SciPy's
    docs do: the sparse path (coloring plan, sparse LU). The mean steady
    state as a function of the reaction rate and the boundary value."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    n = 450
    h = 1.0 / (n + 1)
    laplacian = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n), format="csc") / h ** 2
    preconditioner = spla.LinearOperator((n, n), matvec=spla.splu(laplacian).solve)

    def residual(u, k, left):
        padded = np.concatenate([left, u, np.zeros(1)])
        return (padded[:-2] - 2 * u + padded[2:]) / h ** 2 + k * (1 - u) * np.exp(-u)

    def mean_state(p):
        u = so.newton_krylov(lambda u: residual(u, p[0], p[1:2]), np.zeros(n), f_tol=1e-10,
                             inner_M=preconditioner)
        return np.mean(u)
    check_solution_derivatives(mean_state, np.array([5.0, 0.2]), V, rtol=1e-5,
                               second_order=False, moved=0.1)


def test_chemical_equilibrium_fitted_by_gradient():
    """Equilibrium concentrations of A + B <-> C (and C + B <-> D) by fsolve
    inside a least-squares fit of the two log equilibrium constants to
    measured C at several total amounts; the gradient drives the fit."""
    totals = np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 1.0], [0.5, 1.5]])

    def equilibrium(logK, a0, b0):
        K1, K2 = np.exp(logK[0]), np.exp(logK[1])

        def balance(x):          # x = log concentrations of A, B
            A, B = np.exp(x)
            C = K1 * A * B
            D = K2 * C * B
            return np.array([A + C + D - a0, B + C + 2 * D - b0])
        x = so.fsolve(balance, np.log([0.5 * a0, 0.5 * b0]), xtol=1e-12)
        A, B = np.exp(x)
        return K1 * A * B

    def loss(logK, measured):
        predicted = np.stack([equilibrium(logK, a0, b0) for a0, b0 in totals])
        return np.sum((predicted - measured) ** 2)

    truth = np.array([0.7, -0.4])
    measured = np.array([float(equilibrium(truth, a0, b0)) for a0, b0 in totals])
    start = np.array([0.0, 0.0])
    g = adsim.grad(loss)(start, measured)
    for i in range(2):
        e = np.eye(2)[i]
        assert_close(g[i], central(lambda k: loss(k, measured), [start], [e], h=1e-4), 1e-6,
                     1e-9, f"d loss / d logK[{i}]")
    fit = so.minimize(loss, start, args=(measured,), jac=adsim.grad(loss), method="BFGS",
                      options={"gtol": 1e-9})
    assert fit.success and np.allclose(fit.x, truth, atol=1e-5)


# ---- refusals ------------------------------------------------------------------

def test_an_unconverged_solve_raises():
    def f(p):
        return np.sum(so.fsolve(lambda z: z ** 2 + p, np.ones(2)))      # no real root
    with pytest.raises(SolverNotConverged, match="scipy.optimize.fsolve did not converge"):
        adsim.grad(f)(P)

    def g(p):
        return so.brentq(lambda z: z ** 3 - p[0], 0.0, 5.0, maxiter=3)
    with pytest.raises(SolverNotConverged, match="brentq did not converge"):
        adsim.grad(g)(P)

    def h(p):
        return np.sum(so.newton_krylov(lambda z: z ** 2 + p, np.ones(2), maxiter=5))
    with pytest.raises(SolverNotConverged, match="newton_krylov did not converge"):
        adsim.grad(h)(P)


def test_a_replay_where_the_solve_fails_raises():
    def f(p):
        return so.brentq(lambda z: z ** 3 - p[0], 0.0, 5.0)
    tape = adsim.record(f, np.array([8.0]))
    with pytest.raises(ValueError, match="different signs"):        # SciPy's own check
        tape.gradient(np.array([200.0]))


def test_a_singular_jacobian_at_the_solution_raises():
    def f(p):
        x = so.fsolve(lambda z: np.array([z[0] - p[0], 2 * z[0] - 2 * p[0]]), np.ones(2))
        return np.sum(x)
    with pytest.raises(UndefinedDerivative, match="singular"):
        adsim.grad(f)(P)


def test_more_equations_than_unknowns_is_refused_by_name():
    def f(p):
        return np.sum(so.root(lambda z: np.array([z[0] - p[0], z[0] - p[1], z[0]]), np.ones(1),
                              method="lm").x)
    with pytest.raises(adsim.InvalidArgumentValue, match="3 numbers for 1 unknowns.*"
                                                        "least_squares or leastsq"):
        adsim.grad(f)(P)


def test_the_fields_a_program_reads_of_a_root_move_with_the_parameters():
    """brentq's and newton's RootResults (full_output=True) hold the active
    root, root's ``fun`` the active residual and method 'lm''s ``cov_x``
    (J^T J)^-1 of the exact Jacobian: derivatives through them are those
    of the root, and a replay at new parameters gives their new values
    (they were the recorded call's plain values)."""
    def roots(p):
        _, by_brentq = so.brentq(cubic, 0.0, 2.0, args=(p[0],), xtol=1e-14, full_output=True)
        _, by_newton = so.newton(cubic, 1.0, args=(p[1],), tol=1e-14, full_output=True)
        sol = so.root(lambda z: cubic(z, p), np.ones(2), method="lm",
                      options={"xtol": 1e-14, "ftol": 1e-14})
        return by_brentq.root + by_newton.root ** 2 + sol.cov_x[0, 0] + sol.cov_x[1, 1] \
            + 1e6 * np.sum(sol.fun)

    def exact(p):
        z = np.array([so.brentq(cubic, 0.0, 2.0, args=(q,), xtol=1e-15) for q in p])
        return z[0] + z[1] ** 2 + np.sum(1.0 / (3 * z ** 2 + p) ** 2)

    tape = adsim.record(roots, P)
    for q in (P, P * np.array([1.1, 0.8])):
        want = np.array([central(exact, [q], [e], 1e-4) for e in np.eye(2)])
        assert_close(tape.gradient(q), want, 1e-7, 1e-8, "gradient through the results")
        assert_close(tape.forward(q), exact(q), 1e-7, 1e-8, "replayed value")


def test_an_active_start_alone_is_solved_on_its_plain_value():
    def f(p):
        return np.sum(so.fsolve(lambda z: z ** 3 + z - 2.0, p, xtol=1e-13) * p)
    # the root (1, 1) does not move with the start: d/dp sum(root * p) = root
    assert_close(adsim.grad(f)(np.array([0.5, 1.5])), [1.0, 1.0], 1e-10, 1e-12)


def test_tapes_of_a_solve_given_a_python_derivative_save_it(tmp_path):
    """(tests/scipy/test_implicit_tapefiles.py saves the others)"""
    def jac(z, p):
        return np.diag(3.0 * z ** 2 + p)
    tape = adsim.record(lambda p: np.sum(so.fsolve(cubic, np.ones(2), args=(p,),
                                                   fprime=jac)), P)
    tape.save(tmp_path / "solve.adt")
    loaded = adsim.load_tape(tmp_path / "solve.adt")
    for p in (P, P * 1.2):
        assert loaded.forward(p) == tape.forward(p)
        assert loaded.gradient(p).tobytes() == tape.gradient(p).tobytes()


LARGE = 450          # above implicit.DENSE_UP_TO: F_x sparse (coloring plan) or GMRES


def _large_root(p):
    s = np.linspace(0, 1, LARGE)
    z = so.fsolve(lambda z: z ** 3 + z + p[1] * np.roll(z, 1) - p[0] * s, np.zeros(LARGE),
                  xtol=1e-13)
    return np.sum(z ** 2) + z[7] * p[1]


def _large_minimum(p):
    s = np.linspace(0, 1, LARGE)
    d = np.diff(np.eye(LARGE), axis=0)

    def objective(z):
        return np.sum(0.25 * z ** 4 + 0.5 * z ** 2 - p[0] * s * z) + \
            0.5 * p[1] * np.sum((d @ z) ** 2)

    def gradient(z):
        return z ** 3 + z - p[0] * s + p[1] * (d.T @ (d @ z))
    z = so.minimize(objective, np.zeros(LARGE), jac=gradient, method="L-BFGS-B",
                    options={"gtol": 1e-12, "ftol": 1e-15}).x
    return np.sum(z ** 3) + z[3] * p[0]


@pytest.mark.parametrize("f", [_large_root, _large_minimum])
def test_second_derivatives_of_a_large_solve(f):
    """Above DENSE_UP_TO unknowns the adjoint solution lambda = F_x^-T w of
    the second-order rule is itself an implicit solution (of F_x^T lambda =
    w, solved with the first order's factorisation transposed), so hvp,
    hessian and forward-over-reverse work at any size (they were refused)."""
    from fdcheck import check_hvp
    x = np.array([1.0, 0.3])
    tape = adsim.record(f, x)
    check_hvp(tape, [x], np.ones(()), np.random.default_rng(0), k=2, rtol=1e-6, atol=1e-8)
    H = adsim.hessian(f)(x)
    np.testing.assert_allclose(H, H.T, rtol=1e-9)
    np.testing.assert_allclose(H @ np.array([1.0, 0.0]), tape.hvp([x], [np.array([1.0, 0.0])],
                                                                  np.ones(())), rtol=1e-6)
    _, jv = adsim.jvp(adsim.grad(f), (x,), (np.array([0.4, -0.7]),))
    np.testing.assert_allclose(jv, H @ np.array([0.4, -0.7]), rtol=1e-6)


class Rates:
    def __init__(self, k):
        self.k = k


def test_a_parameter_where_adsim_does_not_search_is_refused_by_name(capfd):
    def f(k):
        registry = [Rates(k)] + [None] * 300          # past the search's container limit
        return np.sum(so.fsolve(lambda z: z ** 3 + z - registry[0].k, np.ones(2)))
    with pytest.raises(adsim.UnsupportedOperation, match="from a place adsim does not search"):
        adsim.grad(f)(P)
    assert capfd.readouterr().err == ""


def test_a_large_densely_coupled_system_takes_gmres_on_sweeps():
    """450 unknowns coupled through their mean (a mean field): the sparse
    Jacobian would need a sweep per unknown, so the derivative's linear
    solves are GMRES on tangent and adjoint sweeps (the hvp's adjoint
    solve too, transposed)."""
    n = 450
    c = np.linspace(0.5, 1.5, n)

    def mean_field(p):
        def F(z):
            return z + 0.5 * np.tanh(np.mean(z)) + 0.1 * z ** 3 - p[0] * c - p[1]
        z = so.newton_krylov(F, np.zeros(n), f_tol=1e-13)
        return np.sum(z ** 2) / n
    check_solution_derivatives(mean_field, np.array([1.0, 0.2]), V, second_order=True,
                               moved=0.02)


def redlich_kwong(v, T, P, R=8.314, Tc=304.2, Pc=73.8e5):
    a = 0.42748 * R ** 2 * Tc ** 2.5 / Pc
    b = 0.08664 * R * Tc / Pc
    return R * T / (v - b) - a / (np.sqrt(T) * v * (v + b)) - P


def test_a_solve_flagged_unconverged_at_a_solution_to_rounding_is_differentiated():
    # at (320 K, 38e5 Pa) hybr stops with "not making good progress", its
    # residual one unit in the last place of the pressure: the program goes on
    # with sol.x, and so does adsim (one Newton step from it is ~1e-16 of it)
    def compressibility(TP):
        T, P = TP
        sol = so.root(redlich_kwong, 8.314 * T / P, args=(T, P), tol=1e-14)
        return P * sol.x[0] / (8.314 * T)
    TP = np.array([320.0, 38e5])
    T, P = TP
    assert not so.root(redlich_kwong, 8.314 * T / P, args=(T, P), tol=1e-14).success
    g = adsim.grad(compressibility)(TP)
    for i, h in enumerate([1e-2, 1e2]):
        e = np.zeros(2)
        e[i] = h
        assert_close(g[i], central(compressibility, [TP], [e], 1.0) / h, rtol=1e-6,
                     what="grad")
    _, jv = adsim.jvp(compressibility, (TP,), (np.array([1.0, 1e4]),))
    assert_close(jv, g @ [1.0, 1e4], rtol=1e-12, what="jvp")


def test_an_unconverged_solve_far_from_a_solution_still_raises():
    # the Newton-step test accepts rounding, not a stall: x^2 + p has no real
    # root, and its minimum of |F| is no solution
    def f(p):
        sol = so.root(lambda z, p: z ** 2 + p, np.array([0.7]), args=(p,))
        return sol.x[0]
    with pytest.raises(SolverNotConverged, match="scipy.optimize.root did not converge"):
        adsim.grad(f)(np.array(0.5))
