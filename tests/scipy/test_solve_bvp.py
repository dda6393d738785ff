"""scipy.integrate.solve_bvp with active parameters (adsim/_scipy/bvp.py):
SciPy's values, derivatives of the discrete solution on SciPy's mesh against
central differences of SciPy's own solve (on the same mesh) and the complex
step, forward against reverse, second order, replays at moved parameters
(a mesh chosen again raises BranchChanged; grad records again), unknown
parameters p, failed solves, and programs as users write them."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import adsim
from adsim.errors import BranchChanged, SolverNotConverged, UnsupportedOperation
from fdcheck import assert_close, assert_dot_equal, central, check_tape, complex_step


# ---- problems, written as users write them ---------------------------------------------

def bratu(lam, tol=1e-6, nodes=5):
    """y'' + lam exp(y) = 0, y(0) = y(1) = 0 (the lower branch)."""
    def fun(x, y):
        return np.vstack([y[1], -lam * np.exp(y[0])])

    def bc(ya, yb):
        return np.array([ya[0], yb[0]])
    x = np.linspace(0.0, 1.0, nodes)
    y = np.zeros((2, nodes), dtype=complex if np.iscomplexobj(lam) else float)
    return si.solve_bvp(fun, bc, x, y, tol=tol)


def mathieu(q, tol=1e-3):
    """SciPy's example: y'' + (k - 2 q cos 2x) y = 0, y'(0) = y'(pi) = 0,
    y(0) = 1; the eigenvalue k is the unknown parameter p."""
    def fun(x, y, p):
        return np.vstack((y[1], -(p[0] - 2 * q * np.cos(2 * x)) * y[0]))

    def bc(ya, yb, p):
        return np.array([ya[1], yb[1], ya[0] - 1])
    x = np.linspace(0, np.pi, 5)
    y = np.zeros((2, x.size))
    y[0, 1], y[0, 3] = 1, -1
    return si.solve_bvp(fun, bc, x, y, p=[6], tol=tol)


def reaction_diffusion(theta, tol=1e-6, nodes=11):
    """Steady state of u_t = D u'' - k u^2 with u(0) = 1, u'(1) = 0;
    theta = (D, k) read from a dict in a closure."""
    params = {"D": theta[0], "k": theta[1]}

    def fun(x, y):
        return np.vstack([y[1], params["k"] * y[0] ** 2 / params["D"]])

    def bc(ya, yb):
        return np.array([ya[0] - 1.0, yb[1]])
    x = np.linspace(0.0, 1.0, nodes)
    return si.solve_bvp(fun, bc, x, np.vstack([np.ones(nodes), np.zeros(nodes)]), tol=tol)


def beam(stiffness, load, nodes=6, length=1.0):
    """A cantilever: EI y'''' = q, y(0) = y'(0) = 0, y''(1) = y'''(1) = 0.
    The solution is a quartic, which the collocation reproduces exactly at
    the nodes (the tip deflects q / (8 EI)); at tol=1e-4 SciPy keeps the
    initial mesh for every load and stiffness."""
    def fun(x, y):
        return np.vstack([y[1], y[2], y[3], np.full_like(x, 1.0) * (load / stiffness)])

    def bc(ya, yb):
        return np.array([ya[0], ya[1], yb[2], yb[3]])
    x = np.linspace(0.0, 1.0, nodes) * length
    return si.solve_bvp(fun, bc, x, np.zeros((4, nodes)), tol=1e-4)


POINTS = np.array([0.05, 0.3, 0.55, 0.9])


def same_mesh_differences(solve, read, p, v, h):
    """Central differences of ``read(solve(p))`` along ``v``, having checked
    that SciPy ends on the same mesh at every point of the stencil (the
    derivative is that of the solution on the mesh; a mesh that moves with
    its ends: the same fractions of the interval)."""
    p = np.asarray(p, dtype=float)

    def fractions(x):
        return (x - x[0]) / (x[-1] - x[0])
    mesh = fractions(solve(p).x)
    for t in (-2, -1, 1, 2):
        moved = fractions(solve(p + t * h * v).x)
        assert moved.shape == mesh.shape and np.allclose(moved, mesh, rtol=0, atol=1e-13), \
            "the stencil changes the mesh"
    return central(lambda q: read(solve(q)), [p], [np.asarray(v, dtype=float)], h=h)


# ---- values ----------------------------------------------------------------------------

def test_values_are_scipys():
    want = bratu(1.0)
    tape = adsim.record(lambda lam: bratu(lam).y, 1.0)
    assert np.array_equal(tape.forward(1.0), want.y)
    yp = adsim.record(lambda lam: bratu(lam).yp, 1.0).forward(1.0)
    assert np.array_equal(yp, want.yp)
    at_points = adsim.record(lambda lam: bratu(lam).sol(POINTS), 1.0).forward(1.0)
    assert_close(at_points, want.sol(POINTS), 1e-14, 1e-15, "sol.sol")
    slopes = adsim.record(lambda lam: bratu(lam).sol(POINTS, 1), 1.0).forward(1.0)
    assert_close(slopes, want.sol(POINTS, 1), 1e-13, 1e-14, "sol.sol(x, 1)")


def test_the_result_keeps_scipys_plain_fields():
    def f(lam):
        sol = bratu(lam)
        assert sol.status == 0 and sol.success and isinstance(sol.niter, int)
        assert type(sol.x) is np.ndarray and isinstance(sol.y, adsim.Active)
        assert sol.p is None
        return np.sum(sol.y)
    adsim.grad(f)(1.0)


# ---- first derivatives -----------------------------------------------------------------

def test_bratu_gradient_against_differences_of_scipys_solve():
    def read(sol):
        return np.sum(sol.y[0] ** 2) + np.sum(sol.sol(POINTS)[0])

    def loss(lam):
        return read(bratu(lam))
    g = adsim.grad(loss)(1.0)
    want = same_mesh_differences(lambda q: bratu(q[()]), read, 1.0, 1.0, 1e-4)
    assert_close(g, want, 1e-8, 1e-10, "d loss / d lambda")


def test_bratu_jacobian_against_the_complex_step():
    # SciPy solves the complex problem on the same mesh: Im y / h is the
    # derivative of its discrete solution, to rounding
    J = adsim.jacobian(lambda lam: bratu(lam).y)(1.0)
    assert np.array_equal(bratu(1.0 + 1e-20j).x, bratu(1.0).x)
    want = complex_step(lambda lam: bratu(lam).y, [1.0], [1.0])
    assert_close(J, want, 1e-12, 1e-14, "dy / d lambda")
    at_points = adsim.jacobian(lambda lam: bratu(lam).sol(POINTS))(1.0)
    want = complex_step(lambda lam: bratu(lam).sol(POINTS), [1.0], [1.0])
    assert_close(at_points, want, 1e-12, 1e-14, "d sol(x) / d lambda")


def test_forward_and_reverse_agree_on_vector_outputs():
    theta = np.array([0.7, 2.0])
    v, w = np.array([0.3, -0.8]), np.random.default_rng(1).standard_normal((2, POINTS.size))

    def f(theta):
        return reaction_diffusion(theta).sol(POINTS)
    _, tangent = adsim.jvp(f, theta, v)
    _, pulled = adsim.vjp(f, theta, w)
    assert_dot_equal(float(np.sum(w * tangent)), float(pulled @ v), "<w, J v> = <J^T w, v>")
    want = same_mesh_differences(reaction_diffusion, lambda s: s.sol(POINTS), theta, v, 1e-4)
    assert_close(tangent, want, 1e-7, 1e-10, "J v")


def test_unknown_parameter_p_of_an_eigenvalue_problem():
    def eigenvalue(q):
        return mathieu(q).p[0]
    g = adsim.grad(eigenvalue)(5.0)
    want = same_mesh_differences(lambda q: mathieu(q[()]), lambda s: s.p[0], 5.0, 1.0, 1e-5)
    assert_close(g, want, 1e-7, 1e-10, "d k / d q")
    _, tangent = adsim.jvp(eigenvalue, 5.0, 1.0)
    assert_close(tangent, g, 1e-12, 1e-14, "jvp against grad")
    # the eigenfunction through the interpolant, p and y together
    mixed = adsim.grad(lambda q: mathieu(q).p[0] * np.sum(mathieu(q).sol(POINTS)[0]))(5.0)
    want = same_mesh_differences(lambda q: mathieu(q[()]),
                                 lambda s: s.p[0] * np.sum(s.sol(POINTS)[0]), 5.0, 1.0, 1e-5)
    assert_close(mixed, want, 1e-7, 1e-10, "d (k sum y) / d q")
    # second order (79 unknowns), against differences of the gradient on the same mesh
    mesh = mathieu(5.0).x
    assert all(np.array_equal(mathieu(5.0 + t).x, mesh) for t in (-2e-5, 2e-5))
    want = central(adsim.grad(eigenvalue), [np.array(5.0)], [np.array(1.0)], h=1e-5)
    assert_close(adsim.hvp(eigenvalue, 5.0, 1.0), want, 1e-6, 1e-9, "d2 k / d q2")
    assert_close(adsim.value(mathieu(5.0).p), mathieu(5.0).p, 0, 0, "p is SciPy's")


def test_beam_every_sweep_and_the_exact_tip_deflection():
    def deflection(params):
        sol = beam(params[0], params[1])
        return np.concatenate([sol.y[0], sol.sol(POINTS)[0]])
    check_tape(deflection, [np.array([2.0, 3.0])], value_rtol=1e-12, value_atol=1e-15)
    EI, q = 2.0, 3.0
    g = adsim.grad(lambda params: beam(params[0], params[1]).y[0, -1])(np.array([EI, q]))
    assert_close(g, [-q / (8 * EI ** 2), 1 / (8 * EI)], 1e-12, 1e-14, "d tip / d (EI, q)")


# ---- second order ----------------------------------------------------------------------

def test_hessian_vector_products_against_differences_of_the_gradient():
    # a tight tol: a replay's solve (SciPy's Newton) is as close to the
    # discrete solution as tol asks, and the gradient there as close
    theta, v, h = np.array([0.7, 2.0]), np.array([0.3, -0.8]), 1e-4

    def loss(theta):
        return np.sum(reaction_diffusion(theta).sol(POINTS)[0] ** 2)
    got = adsim.hvp(loss, theta, v)
    mesh = reaction_diffusion(theta).x
    assert all(np.array_equal(reaction_diffusion(theta + t * h * v).x, mesh) for t in (-2, 2))
    want = central(adsim.grad(loss), [theta], [v], h=h)
    assert_close(got, want, 1e-6, 1e-9, "hvp")


def test_second_order_of_a_large_mesh():
    def loss(lam):
        return np.sum(bratu(lam, tol=1e-8, nodes=250).y[0] ** 2)
    g = adsim.grad(loss)(1.0)          # 500 unknowns: sparse first derivatives
    want = same_mesh_differences(lambda q: bratu(q[()], tol=1e-8, nodes=250),
                                 lambda s: np.sum(s.y[0] ** 2), 1.0, 1.0, 1e-4)
    assert_close(g, want, 1e-8, 1e-10, "sparse path")
    # second order: the adjoint solve of the collocation equations is an
    # implicit solution too (it was refused above 400 unknowns)
    tape = adsim.record(loss, 1.0)
    hv = tape.hvp(1.0, 1.0)
    want = (tape.gradient(1.0 + 1e-4) - tape.gradient(1.0 - 1e-4)) / 2e-4
    assert_close(hv, want, 1e-6, 1e-10, "hvp on a large mesh")


# ---- replays and the mesh --------------------------------------------------------------

def test_replay_on_the_same_mesh_solves_again():
    tape = adsim.record(lambda params: beam(params[0], params[1]).y[0, -1], np.array([2.0, 3.0]))
    moved = np.array([2.5, 1.5])
    assert_close(tape.forward(moved), 1.5 / (8 * 2.5), 1e-12, 1e-15, "replayed tip")
    assert_close(tape.gradient(moved), [-1.5 / (8 * 2.5 ** 2), 1 / (8 * 2.5)], 1e-12, 1e-15,
                 "replayed gradient")


def test_a_replay_on_another_mesh_raises_and_grad_records_again():
    def eigenvalue(q):
        return mathieu(q).p[0]
    tape = adsim.record(eigenvalue, 5.0)
    assert mathieu(8.0).x.size != mathieu(5.0).x.size
    with pytest.raises(BranchChanged, match="solve_bvp chose another mesh"):
        tape.forward(8.0)
    adsim.grad(eigenvalue)(5.0)
    g = adsim.grad(eigenvalue)(8.0)           # the cached tape meets another mesh
    want = same_mesh_differences(lambda q: mathieu(q[()]), lambda s: s.p[0], 8.0, 1.0, 1e-5)
    assert_close(g, want, 1e-7, 1e-10, "gradient recorded again")
    assert_close(adsim.value_and_grad(eigenvalue)(8.0)[0], mathieu(8.0).p[0], 0, 0, "value")


# ---- an active mesh -------------------------------------------------------------------

def test_the_length_of_a_beam_through_its_mesh():
    # tip deflection q L^4 / (8 EI): first and second derivatives in L, exact
    EI, q, L = 2.0, 3.0, 1.3

    def tip(length):
        sol = beam(EI, q, nodes=11, length=length)
        assert isinstance(sol.x, adsim.Active)
        return sol.y[0, -1]
    assert_close(adsim.grad(tip)(L), q * L ** 3 / (2 * EI), 1e-12, 0, "d tip / d L")
    assert_close(adsim.hvp(tip, L, 1.0), 3 * q * L ** 2 / (2 * EI), 1e-10, 0, "d2 tip / d L2")
    tape = adsim.record(tip, L)
    assert_close(tape.gradient(1.1), q * 1.1 ** 3 / (2 * EI), 1e-12, 0, "replayed")


def test_an_active_mesh_against_differences_and_its_replays():
    def bratu_on(length, tol=1e-6):
        return si.solve_bvp(lambda x, y: np.vstack([y[1], -np.exp(y[0])]),
                            lambda ya, yb: np.array([ya[0], yb[0]]),
                            np.linspace(0.0, length, 5), np.zeros((2, 5)), tol=tol)

    def loss(length):
        sol = bratu_on(length)
        return np.sum(sol.y[0] ** 2) + np.sum(sol.sol(POINTS)[0]) + np.sum(sol.x)

    def read(sol):
        return np.sum(sol.y[0] ** 2) + np.sum(sol.sol(POINTS)[0]) + np.sum(sol.x)
    assert_close(adsim.record(loss, 1.0).forward(1.0), read(bratu_on(1.0)), 1e-13, 0, "value")
    want = same_mesh_differences(lambda q: bratu_on(q[()]), read, 1.0, 1.0, 1e-5)
    assert_close(adsim.grad(loss)(1.0), want, 1e-7, 1e-10, "d loss / d L")
    _, tangent = adsim.jvp(loss, 1.0, 1.0)
    assert_close(tangent, want, 1e-7, 1e-10, "jvp")
    tape = adsim.record(loss, 1.0)
    with pytest.raises(BranchChanged, match="another mesh"):
        tape.forward(1.5)
    want = same_mesh_differences(lambda q: bratu_on(q[()]), read, 1.5, 1.0, 1e-5)
    assert_close(adsim.grad(loss)(1.5), want, 1e-7, 1e-10, "recorded again")


def test_a_point_crossing_a_moving_node_raises_and_grad_records_again():
    def at_half(length):
        return beam(2.0, 3.0, nodes=11, length=length).sol(0.5)[0]
    tape = adsim.record(at_half, 1.3)        # 0.5 in [0.39, 0.52]
    assert_close(tape.forward(1.28), beam(2.0, 3.0, nodes=11, length=1.28).sol(0.5)[0],
                 1e-13, 0, "replayed in the same piece")
    with pytest.raises(BranchChanged):
        tape.forward(1.2)                    # 0.5 in [0.48, 0.6]
    want = same_mesh_differences(lambda q: beam(2.0, 3.0, nodes=11, length=q[()]),
                                 lambda s: s.sol(0.5)[0], 1.2, 1.0, 1e-5)
    assert_close(adsim.grad(at_half)(1.2), want, 1e-8, 1e-12, "recorded again")


# ---- what is refused -------------------------------------------------------------------

def test_a_failed_solve_gives_no_derivative():
    def loss(lam):
        sol = si.solve_bvp(lambda x, y: np.vstack([y[1], -lam * np.exp(y[0])]),
                           lambda a, b: np.array([a[0], b[0]]), np.linspace(0, 1, 5),
                           np.zeros((2, 5)), tol=1e-10, max_nodes=10)
        return np.sum(sol.y)
    with pytest.raises(SolverNotConverged, match="solve_bvp did not converge.*status 1"):
        adsim.grad(loss)(1.0)


def test_a_replay_where_the_solve_fails_raises():
    # beyond lambda* ~ 3.51 the Bratu problem has no solution
    tape = adsim.record(lambda lam: np.sum(bratu(lam, tol=1e-3).y), 1.0)
    with pytest.raises(SolverNotConverged, match="solve_bvp did not converge"), \
            np.errstate(over="ignore", invalid="ignore"):
        tape.forward(5.0)


def test_a_singular_term_is_refused():
    def singular(lam):
        return si.solve_bvp(lambda x, y: np.vstack([y[1], -lam * y[0]]),
                            lambda a, b: np.array([a[1], b[0]]), np.linspace(0, 1, 5),
                            np.ones((2, 5)), S=np.zeros((2, 2))).y
    with pytest.raises(UnsupportedOperation, match="singular term S"):
        adsim.jacobian(singular)(1.0)


def test_an_active_guess_alone_does_not_move_the_solution():
    def f(guess):
        sol = si.solve_bvp(lambda x, y: np.vstack([y[1], -np.exp(y[0])]),
                           lambda a, b: np.array([a[0], b[0]]), np.linspace(0, 1, 5),
                           np.vstack([guess * np.ones(5), np.zeros(5)]), tol=1e-6)
        assert not isinstance(sol.y, adsim.Active)
        return np.sum(sol.y) + 0.0 * guess
    assert adsim.grad(f)(0.1) == 0.0


# ---- programs as users write them ------------------------------------------------------

def test_bratu_loss_through_lambda_with_numpy_around_it():
    target = 0.1 * np.sin(np.pi * POINTS)

    def loss(lam):
        sol = bratu(lam)
        middle = sol.sol(0.5)[0]
        return np.mean((sol.sol(POINTS)[0] - target) ** 2) + 0.1 * middle ** 2

    def read(sol):
        return np.mean((sol.sol(POINTS)[0] - target) ** 2) + 0.1 * sol.sol(0.5)[0] ** 2
    for lam in (0.5, 2.0):
        want = same_mesh_differences(lambda q: bratu(q[()]), read, lam, 1.0, 1e-5)
        assert_close(adsim.grad(loss)(lam), want, 1e-7, 1e-11, f"lambda = {lam}")


def test_the_interpolant_at_points_that_move_with_the_parameter():
    def loss(lam):
        sol = bratu(lam)
        return np.sum(sol.sol(0.3 * lam * POINTS)[0] * sol.sol(0.2 * lam, 1)[1])

    def read(lam):
        sol = bratu(lam)
        return np.sum(sol.sol(0.3 * lam * POINTS)[0] * sol.sol(0.2 * lam, 1)[1])
    mesh = bratu(1.2).x
    assert all(np.array_equal(bratu(1.2 + t).x, mesh) for t in (-2e-5, 2e-5))
    want = central(read, [np.array(1.2)], [np.array(1.0)], h=1e-5)
    assert_close(adsim.grad(loss)(1.2), want, 1e-7, 1e-10, "points moving with lambda")


def test_fitting_a_reaction_rate_to_data():
    true = np.array([1.0, 2.0])
    observed = reaction_diffusion(true, tol=1e-8).sol(POINTS)[0]

    def misfit(log_k):
        theta = np.array([1.0, 0.0]) + np.array([0.0, 1.0]) * np.exp(log_k)
        return np.sum((reaction_diffusion(theta, tol=1e-8).sol(POINTS)[0] - observed) ** 2)
    value_and_grad = adsim.value_and_grad(misfit)
    fit = so.minimize(lambda z: value_and_grad(z[0]), x0=[0.0], jac=True, method="BFGS",
                      options={"gtol": 1e-12})
    assert fit.success or fit.fun < 1e-20
    assert_close(np.exp(fit.x[0]), true[1], 1e-5, 0, "fitted k")


def test_a_tape_holding_the_solve_saves_to_a_file():
    # (replays of saved tapes: tests/scipy/test_bvp_tapefiles.py)
    tape = adsim.record(lambda lam: np.sum(bratu(lam).y), 1.0)
    loaded = adsim.tapefile.loads(adsim.tapefile.dumps(tape))
    assert loaded.gradient(1.0).tobytes() == tape.gradient(1.0).tobytes()


def test_the_equations_are_the_ones_scipy_solves():
    # at SciPy's solution (tight tol) the collocation residual adsim writes
    # vanishes to rounding: the derivative is that of SciPy's own system
    from adsim._scipy.bvp import collocation_residual
    sol = mathieu(5.0, tol=1e-8)

    def fun(x, y, p):
        return np.vstack((y[1], -(p[0] - 2 * 5.0 * np.cos(2 * x)) * y[0]))

    def bc(ya, yb, p):
        return np.array([ya[1], yb[1], ya[0] - 1])
    r = collocation_residual(fun, bc, sol.x, sol.y, sol.p, ())
    assert r.size == sol.y.size + sol.p.size
    assert np.max(np.abs(r)) < 1e-12


def test_a_complex_problem_with_active_parameters_is_refused():
    with pytest.raises(UnsupportedOperation, match="complex domain"):
        adsim.grad(lambda lam: np.sum(np.real(si.solve_bvp(
            lambda x, y: np.vstack([y[1], -lam * y[0]]), lambda a, b: np.array([a[0], b[0] - 1]),
            np.linspace(0, 1, 5), np.zeros((2, 5), dtype=complex)).y)))(1.0)
