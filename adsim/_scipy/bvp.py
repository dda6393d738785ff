"""``scipy.integrate.solve_bvp`` on functions of active parameters,
differentiated through its solution on the mesh SciPy chose.

SciPy's solver (Kierzenka and Shampine, "A BVP solver based on residual
control and the MATLAB PSE", ACM TOMS 27, 2001) finds, on a mesh ``x`` of m
nodes it refines itself, the values ``y`` (n by m) and the unknown
parameters ``p`` (k) solving the collocation equations of the 4th-order
Lobatto IIIA formula (Simpson's rule with the midpoint of the cubic
interpolant), one per interval ``[x_i, x_i+1]`` of width ``h_i``::

    y_mid = (y_i + y_i+1) / 2 - h_i / 8 (f_i+1 - f_i),   f_j = fun(x_j, y_j, p)
    y_i+1 - y_i - h_i / 6 (f_i + 4 fun(x_i + h_i / 2, y_mid, p) + f_i+1) = 0

and the boundary conditions ``bc(y_0, y_m-1, p) = 0``: n m + k equations in
n m + k unknowns. Here SciPy's own ``solve_bvp`` runs on the plain values of
the parameters (what ``fun`` and ``bc`` read from a closure, an object or a
global); these equations, written with recorded operations on its final
mesh, are the system whose solution adsim/_scipy/implicit.py differentiates
by the implicit function theorem (first derivatives in both modes; second
derivatives at any size, as for the optimize solvers).

The mesh is held: it is a discrete choice of the solver, so the derivative
is that of the discrete solution on the recorded mesh. A replay runs SciPy
again from the program's own mesh and guess and raises ``BranchChanged``
when it ends on another mesh (the functional API then records again). A
solve with ``status != 0`` raises ``SolverNotConverged``. ``sol.sol`` is the
cubic Hermite interpolant of ``y`` and ``yp`` as a ``PPoly`` with active
coefficients (adsim/_scipy/splines.py evaluates it).

An active initial mesh (``np.linspace(0, L, 5)`` with ``L`` active) is a
parameter too: SciPy only inserts nodes, each at a fraction of an interval
of the initial mesh, and those fractions are held, so the final mesh is an
affine function of the initial one; ``sol.x`` is then active and
``sol.sol`` a :class:`MovingMeshInterpolant`.
"""
import copy

import numpy as np
import scipy.integrate
import scipy.interpolate as si

from .._active import Active
from .._containers.container_args import lift_container_closures, spread_containers
from .._nesting.nested import lift_closures, reads_recorded_values
from .._np.core import active_leaves
from ..errors import BranchChanged, SolverNotConverged, UnsupportedOperation
from . import hooks
from .explicit import _subclass
from .implicit import Equations, _key
from .optimize import _original
from .piecewise import derivative_coefficients, piece
from .solution_op import ImplicitSolution
from .solver_calls import _Leak, _as_array, plain_value
from .bvp_tapes import PIECES, SavedBvp, TapedFunction, joined
from .splines import install

__all__ = ["solve_bvp"]

WHAT = "scipy.integrate.solve_bvp"

MESH_RTOL = 1e-12
"""Relative distance (to the interval) within which a replay's mesh is the recorded one."""


def solve_bvp(fun, bc, x, y, p=None, S=None, fun_jac=None, bc_jac=None, tol=0.001,
              max_nodes=1000, verbose=0, bc_tol=None):
    _refuse_unsupported(S, tol, bc_tol, max_nodes)
    moving = isinstance(x, Active) or bool(active_leaves(x))
    x_start = np.asarray(plain_value(x), dtype=float)
    y_guess = np.asarray(plain_value(y))
    p_guess = None if p is None else np.asarray(plain_value(p), dtype=float)
    has_p = p_guess is not None and p_guess.size > 0
    k = p_guess.size if has_p else 0

    names = ["fun", "bc", "fun_jac", "bc_jac"]
    given = [fun, bc, fun_jac, bc_jac]
    callables = [f for f in given if callable(f)]
    lifted, args = spread_containers(callables, ())
    lifted, args = lift_container_closures(lifted, args)
    lifted, args = lift_closures(lifted, args)
    positions = [i for i, v in enumerate(args) if isinstance(v, Active)]
    functions = dict(zip([n for n, f in zip(names, given) if callable(f)], lifted))

    def with_params(values):
        full = list(args)
        for i, v in zip(positions, values):
            full[i] = v[()] if type(v) is np.ndarray and v.ndim == 0 else v
        return tuple(full)

    def python_functions(values):
        full = with_params(values)
        return {name: _bound_to(f, full) for name, f in functions.items()}

    run = ScipyRun(y_guess, p_guess, {"tol": tol, "max_nodes": max_nodes, "verbose": verbose,
                                      "bc_tol": bc_tol})
    recorded_values = [np.asarray(plain_value(args[i]), dtype=float) for i in positions]
    saved = _saved(functions, with_params, has_p, run, x_start)
    at_first = python_functions(recorded_values)
    result = run(saved.watched(at_first) if positions or moving else at_first, x_start)
    if not positions and not moving:      # nothing the solution depends on is active
        return result
    if np.iscomplexobj(result.y):
        raise UnsupportedOperation(
            f"adsim: {WHAT} in the complex domain (a complex guess y) is not differentiated "
            f"with respect to the values its functions read. Write the problem for the real "
            f"and imaginary parts as separate real components of y")
    _check_status(result)
    mesh = np.array(result.x, dtype=float)
    n, m = result.y.shape
    z0 = _unknowns(result.y, result.p if has_p else None)
    params = [args[i] for i in positions]
    initial_nodes = None
    if moving:          # the mesh as a parameter: the nodes SciPy added held where they are
        initial_nodes, mesh = held_mesh(_as_array(x), x_start, mesh)
        params.append(mesh)
        recorded_values.append(np.asarray(plain_value(mesh), dtype=float))

    def residual(z, *values):
        values, x_now = held_split(values, moving, mesh)
        yz = np.reshape(z[:n * m], (n, m))
        pz = z[n * m:] if has_p else None
        return collocation_residual(functions["fun"], functions["bc"], x_now, yz, pz,
                                    with_params(values))

    def functions_at(values):
        # SciPy runs on the recorded functions once they hold at the solution
        # (the first solve runs on the program's own), so a tape file
        # replays exactly what this process replays
        return saved.functions_at(values) if saved.recorded else python_functions(values)

    system = Equations(residual, n * m + k, WHAT)
    solve = HeldMeshSolve(run, functions_at, x_start, mesh, initial_nodes, recorded_values, z0,
                          has_p)
    saved.fields.update({"n": n, "m": m, "k": k, "mesh": np.asarray(plain_value(mesh)),
                         "initial_nodes": initial_nodes,
                         "recorded_at": np.concatenate([np.ravel(v) for v in recorded_values])})
    saved.record(recorded_values[:len(positions)], system, z0, recorded_values)
    solution = ImplicitSolution(system, solve, z0)
    solution.saved = saved
    z = solution(params)
    y_active = np.reshape(z[:n * m], (n, m))
    p_active = z[n * m:] if has_p else None
    out = copy.copy(result)
    out["y"] = y_active
    out["p"] = p_active if has_p else result.p
    yp = _derivative_values(functions["fun"], mesh, y_active, p_active, args)
    out["yp"] = yp
    if moving:
        out["x"] = mesh
        out["sol"] = MovingMeshInterpolant(mesh, hermite_coefficients(mesh, y_active, yp))
    else:
        out["sol"] = interpolant(mesh, y_active, yp, result.sol)
    return out


class ScipyRun:
    """SciPy's own ``solve_bvp`` from the program's guess, with its options,
    on given functions (the program's, or their tapes) and initial mesh."""

    def __init__(self, y_guess, p_guess, options):
        self.original = _original(scipy.integrate.solve_bvp)[0]
        self.y_guess, self.p_guess, self.options = y_guess, p_guess, options

    def __call__(self, functions, x_initial):
        leak = _Leak(WHAT)
        bound = {name: leak.watched(f) for name, f in functions.items()}
        return leak.run(lambda: self.original(
            bound["fun"], bound["bc"], x_initial, self.y_guess, p=self.p_guess, S=None,
            fun_jac=bound.get("fun_jac"), bc_jac=bound.get("bc_jac"), **self.options))


def held_split(values, moving, mesh):
    """(the functions' parameters, the mesh) of the solution's inputs: the
    mesh is the last of them when the initial mesh is active."""
    return (values[:-1], values[-1]) if moving else (values, mesh)


class HeldMeshSolve:
    """The solution's ``solve(z_start, values)``: the first solution at the
    recorded parameters, elsewhere SciPy's solve from the program's own
    mesh and guess (``functions_at(params)``: its functions there), which
    must end on the recorded mesh."""

    def __init__(self, run, functions_at, x_start, mesh, initial_nodes, recorded_values, z0,
                 has_p):
        self.run, self.functions_at = run, functions_at
        self.x_start, self.mesh, self.initial_nodes = x_start, mesh, initial_nodes
        self.recorded_key, self.z0, self.has_p = _key(recorded_values), z0, has_p

    def __call__(self, z_start, values):
        if _key(values) == self.recorded_key:
            return self.z0.copy()
        moving = self.initial_nodes is not None
        params, x_now = held_split(values, moving, self.mesh)
        again = self.run(self.functions_at(params),
                         x_now[self.initial_nodes] if moving else self.x_start)
        _check_status(again)
        _check_mesh(x_now, again.x)
        return _unknowns(again.y, again.p if self.has_p else None)


def _saved(functions, with_params, has_p, run, x_start):
    """The :class:`SavedBvp` of a call: ``fun``, ``bc`` and the Jacobians
    given of ``(SciPy's arguments, *params)`` to record, and the call's
    plain data."""
    head = 3 if has_p else 2
    k = run.p_guess.size if has_p else 0

    def taped(name):
        f = functions[name]
        pieces = PIECES[name](k) if name in PIECES else None

        def of_params(*a):
            out = f(*a[:head], *with_params(a[head:]))
            if pieces is None:
                return _as_array(out)
            return joined(out, *pieces(tuple(np.shape(x) for x in a[:head])))
        of_params.__name__ = name
        return TapedFunction(name, of_params, pieces=pieces)
    fields = {"x_start": x_start, "y_guess": run.y_guess,
              "p_guess": run.p_guess if has_p else None,
              "options": run.options}
    return SavedBvp({name: taped(name) for name in functions}, fields)


def held_mesh(x_active, x_plain, final):
    """The indices of the initial nodes in SciPy's final mesh ``final`` and
    that mesh as a function of the active initial one: SciPy only inserts
    nodes, each at a fraction of an interval of the initial mesh that is
    held (the discrete choice), so a node is ``x[j] + t (x[j+1] - x[j])``."""
    initial = np.searchsorted(final, x_plain)
    assert np.array_equal(final[np.minimum(initial, final.size - 1)], x_plain), \
        "solve_bvp's final mesh holds its initial nodes"
    j = np.clip(np.searchsorted(x_plain, final, side="right") - 1, 0, x_plain.size - 2)
    t = (final - x_plain[j]) / (x_plain[j + 1] - x_plain[j])
    return initial, x_active[j] + t * (x_active[j + 1] - x_active[j])


def collocation_residual(fun, bc, x, y, p, extra):
    """The collocation equations of the module docstring on the mesh ``x``
    (n (m - 1) numbers, interval by interval) followed by the boundary
    conditions (n + k numbers), for ``y`` (n by m) and ``p`` (k, or None)."""
    f = _derivative_values(fun, x, y, p, extra)
    h = np.diff(x)
    y_mid = 0.5 * (y[:, 1:] + y[:, :-1]) - 0.125 * h * (f[:, 1:] - f[:, :-1])
    f_mid = _derivative_values(fun, x[:-1] + 0.5 * h, y_mid, p, extra)
    collocation = y[:, 1:] - y[:, :-1] - (h / 6.0) * (f[:, :-1] + 4.0 * f_mid + f[:, 1:])
    ends = bc(y[:, 0], y[:, -1], *(() if p is None else (p,)), *extra)
    return np.concatenate([np.ravel(collocation.T), np.ravel(_as_array(ends))])


def hermite_coefficients(x, y, yp):
    """PPoly's coefficients (4, m - 1, n) of the cubic Hermite interpolant
    of ``y`` (n by m) and its slopes ``yp`` at the nodes ``x``."""
    h = np.diff(x)
    slope = (y[:, 1:] - y[:, :-1]) / h
    f0, f1 = yp[:, :-1], yp[:, 1:]
    c = np.stack([(f0 + f1 - 2.0 * slope) / h ** 2, (3.0 * slope - 2.0 * f0 - f1) / h,
                  f0, y[:, :-1]])
    return np.transpose(c, (0, 2, 1))


def interpolant(x, y, yp, scipy_sol):
    """``sol.sol`` on a plain mesh: SciPy's PPoly (along axis 1) with the
    active coefficients in place of SciPy's; of PPoly's routed subclass
    (adsim/_scipy/explicit.py), so its calls reach the rules with
    interposition off too."""
    routed = _subclass(si.PPoly, hooks.rules("scipy.interpolate"), "scipy.interpolate")
    made = routed.construct_fast(np.zeros(np.shape(scipy_sol.c)), scipy_sol.x,
                                 scipy_sol.extrapolate, scipy_sol.axis)
    return install(made, hermite_coefficients(x, y, yp))


class MovingMeshInterpolant:
    """``sol.sol`` on an active mesh (PPoly's breaks are plain): the same
    cubic pieces, called as ``sol(x, nu=0)`` and extrapolating as SciPy's.
    The piece of each point is chosen on plain values and checked by a
    recorded comparison, so a replay where a point crosses a node raises
    BranchChanged (the functional API records again)."""

    def __init__(self, x, c):
        self.x, self.c = x, c

    def __call__(self, x, nu=0, extrapolate=None):
        if nu < 0 or extrapolate is False:
            raise UnsupportedOperation(
                f"adsim: the interpolant of {WHAT} on an active mesh is evaluated with nu >= 0 "
                f"and extrapolation (as SciPy's sol.sol is); for its antiderivative or values "
                f"without extrapolation, integrate or mask its values with NumPy")
        points = _as_array(x)
        flat = np.reshape(points, (-1,))
        breaks = self.x
        plain_breaks = np.asarray(plain_value(breaks), dtype=float)
        i = piece(plain_breaks, np.asarray(plain_value(flat), dtype=float))
        last = plain_breaks.size - 2
        above = (i == 0) | (flat >= breaks[i])
        below = (i == last) | (flat < breaks[np.minimum(i + 1, last + 1)])
        if not np.all(above & below):       # (an ``if``: the comparison is recorded)
            raise AssertionError("the piece of a point is chosen from its plain value")
        c = derivative_coefficients(self.c, nu)
        offset = np.reshape(flat - breaks[i], (-1, 1))
        ci = c[:, i]
        out = ci[0]
        for j in range(1, c.shape[0]):
            out = out * offset + ci[j]
        return np.moveaxis(np.reshape(out, np.shape(points) + (self.c.shape[2],)), -1, 0)


def _derivative_values(fun, x, y, p, extra):
    """``fun(x, y[, p])`` as an (n, m) array."""
    out = _as_array(fun(x, y, *(() if p is None else (p,)), *extra))
    return np.reshape(out, np.shape(y))


def _unknowns(y, p):
    yz = np.ravel(np.asarray(y, dtype=float))
    return yz if p is None else np.concatenate([yz, np.ravel(np.asarray(p, dtype=float))])


def _bound_to(f, extra):
    def bound(*a):
        return f(*a, *extra)
    bound.__name__ = getattr(f, "__name__", "function")
    return bound


def _check_status(result):
    if result.status != 0:
        raise SolverNotConverged(
            f"adsim: {WHAT} did not converge (status {result.status}: {result.message}), so "
            f"there is no solution to differentiate. Give it a better initial mesh or guess, a "
            f"larger max_nodes or a looser tol, or keep the parameters where the problem has a "
            f"solution")


def _check_mesh(recorded, mesh):
    """A replay's solve must end on the recorded mesh (the derivative holds it)."""
    mesh = np.asarray(mesh, dtype=float)
    same = mesh.shape == recorded.shape and np.all(
        np.abs(mesh - recorded) <= MESH_RTOL * np.abs(recorded[-1] - recorded[0]))
    if not same:
        raise BranchChanged(
            f"adsim: {WHAT} chose another mesh at these parameters ({mesh.size} nodes; the "
            f"recording's solve chose {recorded.size}): the recorded derivative is that of the "
            f"solution on the recorded mesh. Record again at this point (the functional API, "
            f"grad, jvp, ..., does so by itself)")


def _refuse_unsupported(S, tol, bc_tol, max_nodes):
    if S is not None:
        raise UnsupportedOperation(
            f"adsim: {WHAT} with a singular term S is not differentiated: its collocation "
            f"equations at the singular end are not written. Solve on plain values "
            f"(adsim.value) or move the left end off the singularity")
    for name, v in (("tol", tol), ("bc_tol", bc_tol), ("max_nodes", max_nodes)):
        if isinstance(v, Active) or active_leaves(v):
            raise UnsupportedOperation(
                f"adsim: {WHAT}'s {name} holds an active value; it sets the solver's discrete "
                f"choices, not the solution's equations. Pass a plain number (adsim.value)")


def _reads_active_values(args, kwargs):
    """Whether ``fun`` or ``bc`` (or their Jacobians) read active values
    from outside their arguments (a closure, an object, a global)."""
    candidates = list(args[:2]) + list(args[5:7]) + \
        [kwargs.get(k) for k in ("fun", "bc", "fun_jac", "bc_jac")]
    return any(callable(c) and reads_recorded_values(c) for c in candidates)


solve_bvp.routes_also = _reads_active_values
