"""Tapes of solve_bvp in tape files (kind adsim.bvp_solution): the solution
is one op holding the tapes of the collocation equations and of fun and bc
(one set per shape SciPy calls them with), on which SciPy runs after the
first solve in the recording process and in one that loaded it, so saved,
loaded and unpickled tapes replay bitwise like the original, on threads
and spawned processes too, with derivatives that agree with central
differences; a loaded solve on a mesh no tape holds raises BranchChanged,
as the original does where SciPy changes its mesh; Jacobians given as
Python code (fun_jac, bc_jac: tuples of arrays) are saved as tapes too;
altered descriptions raise TapeFileError."""
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from scipy.integrate import solve_bvp

import adsim
from adsim import parallel, tapefile
from adsim.errors import BranchChanged, TapeFileError
from tapefile_bytes import replace_section, section
from tapefile_replays import assert_same_replays, callback_kinds, copies

K = np.array([1.2, 0.4])
NEAR = [(K,), (K * (1 + 1e-6),), (K + np.array([0.01, -0.02]),)]
METHODS = ["forward", "gradient", "jvp", "vjp", "hvp"]


def bratu(k):
    """y'' = -k0 exp(y) + k1 x, y(0) = 0, y(1) = 0.1: the solution, its
    interpolant and its slopes."""
    sol = solve_bvp(lambda x, y: np.vstack([y[1], -k[0] * np.exp(y[0]) + k[1] * x]),
                    lambda ya, yb: np.array([ya[0], yb[0] - 0.1]),
                    np.linspace(0, 1, 5), np.zeros((2, 5)), tol=1e-6)
    return np.sum(sol.y[0] ** 2) + sol.sol(0.37)[0] + 0.1 * np.sum(sol.yp[1])


def eigen(a):
    """y'' = -(p a0)^2 y with y(0) = 0, y'(0) = a1, y(L) = 0, L = a2
    active (a moving mesh): the unknown p = pi / (a0 L)."""
    x = np.linspace(0, a[2], 5)
    y = np.vstack([np.sin(np.pi * x / a[2]), np.cos(np.pi * x / a[2])])
    sol = solve_bvp(lambda x, y, p: np.vstack([y[1], -(p[0] * a[0]) ** 2 * y[0]]),
                    lambda ya, yb, p: np.array([ya[0], ya[1] - a[1], yb[0]]),
                    x, adsim.value(y), p=[3.0], tol=1e-7)
    return sol.p[0] + np.sum(sol.y[1] ** 2) * 1e-2 + sol.sol(0.5)[0]


A = np.array([1.1, 0.9, 1.05])
EIGEN_NEAR = [(A,), (A * (1 + 1e-6),), (A + np.array([0.01, 0.02, 0.001]),)]


def test_tapes_of_solve_bvp_replay_bitwise_after_saving(tmp_path):
    tape = adsim.record(bratu, K)
    assert "adsim.bvp_solution" in callback_kinds(tape)
    assert_same_replays(tape, copies(tape, tmp_path), NEAR, methods=METHODS)


def test_unknown_parameters_and_a_moving_mesh_replay_bitwise():
    tape = adsim.record(eigen, A)       # (its hvp takes seconds: bratu's is checked)
    assert_same_replays(tape, copies(tape), EIGEN_NEAR, methods=METHODS[:4])


@pytest.mark.parametrize("f,points", [(bratu, NEAR), (eigen, EIGEN_NEAR)])
def test_derivatives_of_loaded_solves_match_differences(f, points):
    """Differences of the loaded tape's own values (on the held mesh) and
    of the program's (SciPy's solve: to its tolerance)."""
    loaded = tapefile.loads(tapefile.dumps(adsim.record(f, points[0][0])))
    for (p,) in (points[0], points[2]):
        g = loaded.gradient(p)
        h = 1e-5
        fd = [(loaded.forward(p + h * e) - loaded.forward(p - h * e)) / (2 * h)
              for e in np.eye(p.size)]
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g, adsim.grad(f)(p), rtol=1e-9, atol=1e-11)
        assert loaded.forward(p) == pytest.approx(f(p), rel=1e-6)


def test_second_derivatives_of_a_loaded_solve():
    tape = adsim.record(bratu, K)
    loaded = tapefile.loads(tapefile.dumps(tape))
    v = np.array([0.3, -0.7])
    h = 1e-4
    for (p,) in NEAR[::2]:
        hv = loaded.hvp(p, v)
        fd = (loaded.gradient(p + h * v) - loaded.gradient(p - h * v)) / (2 * h)
        np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-7)
        assert hv.tobytes() == tape.hvp(p, v).tobytes()


def test_a_loaded_solve_on_another_mesh_raises_branch_changed():
    """Far away, SciPy refines the mesh: the original raises BranchChanged
    (the functional API records again), and so does the loaded tape."""
    tape = adsim.record(bratu, K)
    loaded = tapefile.loads(tapefile.dumps(tape))
    far = np.array([3.2, 4.0])
    for t in (tape, loaded):
        with pytest.raises(BranchChanged):
            t.forward(far)
    assert adsim.grad(bratu)(far).shape == (2,)


def test_solve_bvp_maps_on_threads_and_spawned_processes():
    points = [p for (p,) in NEAR]
    tape = adsim.record(bratu, K)
    want = [tape.gradient(p).tobytes() for p in points]
    with ThreadPoolExecutor(2) as pool:
        got = parallel.map("gradient", adsim.record(bratu, K), points * 3, executor=pool,
                           chunk_size=1)
    assert [g.tobytes() for g in got] == want * 3
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        got = parallel.map("gradient", adsim.record(bratu, K), points, executor=pool,
                           chunk_size=2)
    assert [np.asarray(g).tobytes() for g in got] == want


def eigen_with_jacobians(a):
    """``eigen`` on a fixed mesh with fun_jac and bc_jac given (SciPy calls
    them; their tapes are saved, each a tuple of arrays)."""
    x = np.linspace(0, 1, 5)
    y = np.vstack([np.sin(np.pi * x), np.pi * np.cos(np.pi * x)])

    def fun_jac(x, y, p):
        zero, one = np.zeros_like(x), np.ones_like(x)
        df_dy = np.array([[zero, one], [-(p[0] * a[0]) ** 2 * one, zero]])
        df_dp = np.array([[zero], [-2.0 * p[0] * a[0] ** 2 * y[0]]])
        return df_dy, df_dp

    def bc_jac(ya, yb, p):
        return (np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]),
                np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]]), np.zeros((3, 1)))
    sol = solve_bvp(lambda x, y, p: np.vstack([y[1], -(p[0] * a[0]) ** 2 * y[0]]),
                    lambda ya, yb, p: np.array([ya[0], ya[1] - a[1], yb[0]]),
                    x, y, p=[3.0], fun_jac=fun_jac, bc_jac=bc_jac, tol=1e-7)
    return sol.p[0] + np.sum(sol.y[1] ** 2) * 1e-2


def test_jacobians_given_as_python_code_are_saved_as_tapes():
    tape = adsim.record(eigen_with_jacobians, A[:2])
    points = [(A[:2],), (A[:2] * (1 + 1e-6),), (A[:2] + np.array([0.01, 0.02]),)]
    assert_same_replays(tape, copies(tape), points, methods=METHODS[:4])
    data = tapefile.dumps(tape)
    assert [name for name, _ in _bvp_state(data)["variants"]] == \
        ["collocation", "fun", "bc", "fun_jac", "bc_jac"]
    loaded = tapefile.loads(data)
    for (p,) in points[::2]:
        np.testing.assert_allclose(loaded.gradient(p), adsim.grad(eigen_with_jacobians)(p),
                                   rtol=1e-9, atol=1e-11)


def _calls(data):
    _, count, at = section(data, "CALL")
    return json.loads(bytes(data[at:at + count]).decode())


def _bvp_state(data):
    return next(c["state"] for c in _calls(data) if c["kind"] == "adsim.bvp_solution")


def _altered(data, change):
    calls = _calls(data)
    for c in calls:
        if c["kind"] == "adsim.bvp_solution":
            change(c["state"])
    return replace_section(data, "CALL", json.dumps(calls).encode())


@pytest.mark.parametrize("change", [
    lambda s: s.update(n=3), lambda s: s.update(m=1),
    lambda s: s.update(variants=[["collocation", 1], ["fun", 1]]),
    lambda s: s["variants"].reverse(),
    lambda s: s["options"].update(tol="tight"), lambda s: s.update(y_guess=[[0.0]]),
    lambda s: s.update(initial_nodes=[0, 99]), lambda s: s.update(recorded_at=[1.0]),
    lambda s: s.pop("mesh")])
def test_altered_descriptions_raise_tape_file_error(change):
    data = tapefile.dumps(adsim.record(bratu, K))
    with pytest.raises(TapeFileError):
        tapefile.loads(_altered(data, change))
