"""adsim calls a user function again after the call that handed it over has
returned: a replay at a new point records a checkpointed step again where
its path changes, a sweep records the rules of a derivative op. By then the
program may have changed what the function reads besides its arguments (a
dict of settings updated in place, a loop variable): such a call must
compute what the program's own call did, or raise UnsupportedOperation."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import adsim
from adsim.errors import BranchChanged, UnsupportedOperation
from fdcheck import assert_close


def _gradient_differences(f, x, h=1e-6):
    return np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(x.size) * h])


def _radau_reading_a_dict(later):
    # jac_sparsity: the step holds adsim's sparse Jacobian (its tapes), which
    # the walk of the step's environment cannot see into
    def f(p):
        settings = {"k": 1.0}
        sol = solve_ivp(lambda t, y: -settings["k"] * p[0] * y ** 3, (0, 1), [1.0, 2.0],
                        method="Radau", jac_sparsity=np.eye(2), rtol=1e-10, atol=1e-12)
        settings["k"] = later
        return p[1] + sol.y[0, -1] ** 2 + sol.y[1, -1]
    return f


def test_sparse_radau_step_recorded_again_after_its_settings_changed_is_refused():
    """A replay at a new point records the step again after the program set
    the dict to another value: the gradient was 0.3 % off, silently."""
    f = _radau_reading_a_dict(3.0)
    g = adsim.grad(f)
    x = np.array([0.7, 1.3])
    assert_close(g(x), _gradient_differences(f, x), rtol=1e-7, atol=1e-9, what="gradient")
    with pytest.raises(UnsupportedOperation, match="changed since the loop ran"):
        g(x * 1.03 + 0.01)


def test_sparse_radau_step_recorded_again_with_its_settings_unchanged():
    f = _radau_reading_a_dict(1.0)
    g = adsim.grad(f)
    x = np.array([0.7, 1.3])
    g(x)
    x2 = x * 1.03 + 0.01
    assert_close(g(x2), _gradient_differences(f, x2), rtol=1e-7, atol=1e-9, what="gradient")


def by_gmres_reading_a_dict(p):
    # the operator's products read a setting the program changes after the solve
    from scipy.sparse.linalg import LinearOperator, gmres
    settings = {"k": 3.0}
    A = LinearOperator((2, 2), dtype=float, matvec=lambda v: np.array(
        [(2 + settings["k"] * p[0]) * v[0] + v[1], v[0] + 3 * v[1]]))
    x, _ = gmres(A, np.array([1.0, p[1]]), rtol=1e-13, atol=0)
    settings["k"] = 1.0
    return x[0] ** 2 + x[1]


def test_krylov_solve_with_an_operator_uses_the_products_of_its_solve():
    """The rules (and replays solving again) called the operator's products
    after the program had changed the dict they read: the gradient came out
    0.5 % off and a replayed value 0.8 %, without an error."""
    f = by_gmres_reading_a_dict
    x = np.array([0.7, 1.3])
    assert_close(adsim.grad(f)(x), _gradient_differences(f, x), rtol=1e-7, atol=1e-9,
                 what="gradient")
    tape = adsim.record(f, x)
    x2 = x * 1.03 + 0.01
    assert_close(tape.forward(x2), f(x2), rtol=1e-10, atol=1e-12, what="replayed value")
    assert_close(tape.gradient(x2), _gradient_differences(f, x2), rtol=1e-7, atol=1e-9,
                 what="replayed gradient")
    h = 1e-5
    g = adsim.grad(f)
    want = np.array([(g(x + e) - g(x - e)) / (2 * h) for e in np.eye(2) * h]).T
    assert_close(adsim.hessian(f)(x), want, rtol=1e-5, atol=1e-8, what="Hessian")


def test_hessian_operators_made_in_a_loop_keep_their_settings():
    """An operator's products called f after the loop had set the dict f reads
    to its last value: every operator was the last one's Hessian."""
    settings = {"k": 0.0}

    def energy(x):
        return settings["k"] * np.sum(x ** 3) + np.sum(x) ** 2

    x, v = np.array([0.7, 1.3]), np.array([1.0, 2.0])
    operators, want = [], []
    for k in (2.0, 5.0):
        settings["k"] = k
        operators.append(adsim.hvp_operator(energy, x))
        want.append(6 * k * x * v + 2 * np.sum(v))
    for H, w in zip(operators, want):
        assert_close(H @ v, w, rtol=1e-13, atol=1e-13, what="H v")
        assert_close(H @ np.stack([v, 2 * v], axis=1), np.stack([w, 2 * w], axis=1),
                     rtol=1e-13, atol=1e-13, what="H V")


def _quad_with_a_branch(p):
    # the integrand branches on the parameter: a replay across 0.72 records it again
    from scipy.integrate import quad
    settings = {"k": 0.0}
    total = 0.0
    for i, k in enumerate((1.0, 3.0)):
        settings["k"] = k

        def g(t):
            if p[i] > 0.72:
                return np.sin(settings["k"] * p[i] * t)
            return np.cos(settings["k"] * p[i] * t)
        total = total + quad(g, 0, 1)[0] ** 2
    return total


def test_integrand_recorded_again_after_its_settings_changed_is_refused():
    """A replay whose branches leave the integrand's tapes recorded it with the
    loop's last setting: the replayed value came out 13 % off, silently. The
    replay now leaves the program's path (BranchChanged), and adsim.grad
    records the program again there."""
    f = _quad_with_a_branch
    x, x2 = np.array([0.7, 1.3]), np.array([0.7, 1.3]) * 1.03 + 0.01
    tape = adsim.record(f, x)
    assert_close(tape.forward(x * 1.01), f(x * 1.01), rtol=1e-12, atol=1e-14,
                 what="replayed value on the recorded path")
    with pytest.raises(BranchChanged, match="no longer computes what it did"):
        tape.forward(x2)
    g = adsim.grad(f)
    g(x)
    assert_close(g(x2), _gradient_differences(f, x2), rtol=1e-6, atol=1e-9, what="gradient")


def _nested_jacobian_with_a_branch(p):
    settings = {"k": 0.0}
    total = 0.0
    for i, k in enumerate((1.0, 3.0)):
        settings["k"] = k

        def F(y):
            if y[0] > 0.72:
                return settings["k"] * y ** 3
            return settings["k"] * y ** 2 * 1.5
        total = total + np.sum(adsim.jacobian(F)(p * (i + 1)) ** 2)
    return total


def test_nested_derivative_recorded_again_after_its_settings_changed():
    """A replay leaving the path of a Jacobian taken inside the recording
    recorded its function with the loop's last setting: 5.5 % off, silently."""
    f = _nested_jacobian_with_a_branch
    x, x2 = np.array([0.7, 1.3]), np.array([0.7, 1.3]) * 1.03 + 0.01
    with pytest.raises(BranchChanged, match="no longer computes what it did"):
        adsim.record(f, x).forward(x2)
    g = adsim.grad(f)
    g(x)
    assert_close(g(x2), _gradient_differences(f, x2), rtol=1e-6, atol=1e-8, what="gradient")


def _while_with_a_python_condition(p, counter=None, tolerances=(0.5, 0.2)):
    from adsim.checkpoint import checkpoint_while
    settings = {"tol": 0.0}
    out = []
    for i, tol in enumerate(tolerances):
        settings["tol"] = tol

        def cond(z):
            if counter is not None:
                counter[0] += 1
            return float(z[1]) > settings["tol"]      # not recordable: called in Python
        out.append(checkpoint_while(cond, lambda z: np.array([z[0] + z[1] * p[i], z[1] * 0.7]),
                                    np.array([0.0, 1.0]))[0])
    return out[0] ** 2 + out[1]


def test_while_condition_called_in_sweeps_after_its_settings_changed():
    """A condition evaluated in Python ran again in every sweep with the loop's
    last setting: a forward-mode Jacobian 166 % off and replays 49 % off,
    without an error. Sweeps at the loop's own inputs now take its outcomes;
    elsewhere the change is refused."""
    f = _while_with_a_python_condition
    x = np.array([0.7, 1.3])
    want = _gradient_differences(f, x)
    assert_close(adsim.jacobian(f, mode="forward")(x), want, rtol=1e-7, atol=1e-9,
                 what="forward Jacobian")
    g = adsim.grad(f, cache=False)          # recorded anew at each point
    h = 1e-5
    hessian = np.array([(g(x + e) - g(x - e)) / (2 * h) for e in np.eye(2) * h]).T
    assert_close(adsim.hessian(f)(x), hessian, rtol=1e-6, atol=1e-9, what="Hessian")
    tape = adsim.record(f, x)
    with pytest.raises(UnsupportedOperation, match="condition"):
        tape.forward(x * 1.01)


def test_while_condition_keeping_a_call_counter_replays():
    """A change that leaves the outcomes as they were (a call counter the
    program's own calls move) passes."""
    counter = [0]
    x = np.array([0.7, 1.3])

    def f(p):
        return _while_with_a_python_condition(p, counter, tolerances=(0.3, 0.3))
    tape = adsim.record(f, x)
    x2 = x * 1.01
    want = _gradient_differences(f, x2)
    assert_close(tape.forward(x2), f(x2), rtol=1e-12, atol=1e-14, what="replayed value")
    assert_close(tape.gradient(x2), want, rtol=1e-7, atol=1e-9, what="replayed gradient")


def _bvp_reading_a_dict(p):
    # refined past 400 unknowns: F_x comes from a sparse Jacobian plan
    from scipy.integrate import solve_bvp
    settings = {"k": 3.0}
    sol = solve_bvp(lambda x, y: np.vstack([y[1], settings["k"] * p[0] * y[0]]),
                    lambda ya, yb: np.array([ya[0] - 1.0, yb[0] - 2.0]),
                    np.linspace(0, 1, 11), np.ones((2, 11)), tol=1e-10, max_nodes=100000)
    settings["k"] = 1.0
    return sol.sol(0.5)[0] + p[1]


def test_sparse_jacobian_of_a_solve_is_of_the_function_it_solved():
    """The sparse Jacobian plan of a large system recorded the equations when
    the reverse sweep first needed F_x, after the program had changed the
    dict they read: the gradient of a solve_bvp solution came out 5 % off."""
    f = _bvp_reading_a_dict
    x = np.array([0.7, 1.3])
    assert_close(adsim.grad(f)(x), _gradient_differences(f, x), rtol=1e-6, atol=1e-9,
                 what="gradient")
