"""``scipy.optimize.linprog`` with active ``c``, ``A_ub``, ``b_ub``,
``A_eq``, ``b_eq`` or ``bounds``, differentiated through its optimal basis.

The problem ``min c.x`` subject to ``A_ub x <= b_ub``, ``A_eq x = b_eq``,
``lb <= x <= ub`` is described as a constrained minimiser's
(adsim/_scipy/constrained_problem.py): the objective ``c.x`` and, as
linear pieces, the rows of ``A_ub`` and ``A_eq`` and the bounds. SciPy's
solver (HiGHS) finds the solution x*; its active constraints are those of
the optimal basis: at a nondegenerate vertex exactly n of them, with
linearly independent rows J_A, all of them holding x* (x_B = B^{-1}(b -
N x_N) with x_N at its bounds), and with nonzero multipliers mu =
J_A^{-T} c. The KKT system of adsim/_scipy/constrained.py is then
``(c - J_A^T mu, -g_A(x)) = 0`` with the nonsingular matrix
``[[0, -J_A^T], [-J_A, 0]]``, so the implicit function theorem gives the
derivative of x* and mu: x* is linear in the limits, moves with A_ub and
A_eq, and does not move with c; ``fun = c.x*`` moves with all of them.

Refused, as :class:`~adsim.errors.UndefinedDerivative`: a degenerate vertex
(more constraints active than unknowns: x* is a kink of the limits), an
optimal face (fewer independent active constraints than unknowns, or an
active inequality with a zero multiplier: another basis is optimal too, x*
is not unique or jumps with c), an infeasible or unbounded problem and a
mixed-integer one (``integrality``). A replay whose basis differs from the
recording's raises BranchChanged (the functional API records again).
``x`` and ``fun`` of the result are active; the other fields (``slack``,
``con``, the marginals) are SciPy's plain values of the recorded call.
"""
import numpy as np

from .._active import Active
from ..errors import UndefinedDerivative, UnsupportedOperation
from .constrained_problem import Piece, Problem
from .solver_calls import _as_array, _with_x, plain_value

__all__ = ["linprog_problem"]

_LIMITS = ("c", "A_ub", "b_ub", "A_eq", "b_eq", "bounds")


def _cost(x, c):
    return np.dot(np.reshape(c, (-1,)), np.reshape(x, (-1,)))


def _leaves(v):
    """The entries of a nested sequence (or array) in C order, and its shape."""
    if isinstance(v, Active) or isinstance(v, np.ndarray):
        flat = v.reshape(-1)
        return [flat[i] for i in range(flat.shape[0])], tuple(v.shape)
    if isinstance(v, (list, tuple)):
        parts = [_leaves(item) for item in v]
        shapes = {shape for _, shape in parts}
        if len(shapes) > 1:
            raise ValueError("Invalid input for linprog: unable to interpret bounds, check "
                             "values and dimensions")
        inner = shapes.pop() if shapes else ()
        return [leaf for leaves, _ in parts for leaf in leaves], (len(v),) + inner
    return [v], ()


def bound_lists(bounds, n):
    """(lower, upper): ``n`` entries each, floats or active scalars, read
    as linprog reads ``bounds`` (None for no bound; one pair for all)."""
    if bounds is None or (isinstance(bounds, (list, tuple)) and len(bounds) == 0):
        bounds = (0, None)
    leaves, shape = _leaves(bounds)
    shape = (1,) * (2 - len(shape)) + shape if len(shape) < 2 else shape
    if shape == (n, 2):
        lower, upper = leaves[0::2], leaves[1::2]
    elif shape in ((1, 2), (2, 1)):
        lower, upper = leaves[:1] * n, leaves[1:] * n
    else:
        raise ValueError(f"Invalid input for linprog: unable to interpret bounds with this "
                         f"dimension tuple: {shape}.")

    def limit(v, none):
        if v is None or (not isinstance(v, Active) and np.isnan(float(v))):
            return none
        return v
    return [limit(v, -np.inf) for v in lower], [limit(v, np.inf) for v in upper]


def _not_a_vertex(solver, JA, mu, inequality, n):
    """The error for an LP solution that is not a nondegenerate vertex
    (None for one that is)."""
    count = JA.shape[0]
    if count > n:
        return UndefinedDerivative(
            f"adsim: the solution of scipy.optimize.{solver} is a degenerate vertex: "
            f"{count} constraints are active for {n} unknowns, so the solution is a kink of "
            f"the limits and has no derivative there. Move the limits off this point, or "
            f"remove the redundant constraints")
    size = 1.0 + np.max(np.abs(JA), initial=0.0)
    if count < n or np.linalg.matrix_rank(JA, tol=1e-10 * size * n) < n:
        return UndefinedDerivative(
            f"adsim: the solution of scipy.optimize.{solver} is not a vertex of the feasible "
            f"set (fewer than {n} independent constraints are active): the cost is "
            f"orthogonal to an optimal edge or face, the solutions are not unique and "
            f"the one returned has no derivative. Change the cost so that one vertex is "
            f"optimal")
    if np.any(inequality & (np.abs(mu) <= 1e-9 * (1.0 + np.max(np.abs(mu), initial=0.0)))):
        return UndefinedDerivative(
            f"adsim: at the solution of scipy.optimize.{solver} an active inequality has a "
            f"zero multiplier (dual degenerate: another basis is optimal too), so the "
            f"solution jumps with the cost and its derivative is undefined there. Change the "
            f"cost so that one vertex is optimal")
    return None


def linprog_problem(a, original):
    """The problem, runner, answer and shape of one ``linprog`` call (the
    shape of the describers of adsim/_scipy/constrained.py)."""
    integrality = a.get("integrality")
    if integrality is not None and np.any(np.asarray(plain_value(integrality)) != 0):
        raise UnsupportedOperation(
            "adsim: scipy.optimize.linprog with integrality= solves a mixed-integer problem, "
            "whose solution is piecewise constant in the limits (no useful derivative); "
            "differentiate the continuous relaxation, or call it on adsim.value(...)")
    c = a["c"]
    c = c if isinstance(c, Active) else _as_array(c)     # a list of active values: stacked
    n = int(np.size(plain_value(c)))
    problem = Problem(_cost, (c,), False)
    problem.not_a_vertex = _not_a_vertex
    cost = problem.datum(c)                      # SciPy's c, the objective's argument too
    given = {}
    if a.get("A_ub") is not None:
        given["A_ub"], given["b_ub"] = problem.datum(a["A_ub"]), problem.datum(a.get("b_ub"))
        problem.pieces.append(Piece(matrix=given["A_ub"], lb=problem.datum(-np.inf),
                                    ub=given["b_ub"]))
    if a.get("A_eq") is not None:
        given["A_eq"], given["b_eq"] = problem.datum(a["A_eq"]), problem.datum(a.get("b_eq"))
        problem.pieces.append(Piece(matrix=given["A_eq"], lb=given["b_eq"], ub=given["b_eq"]))
    lower, upper = bound_lists(a.get("bounds", (0, None)), n)
    bounds = Piece(lb=problem.datum(lower), ub=problem.datum(upper))
    problem.pieces.append(bounds)

    def run(bound, plain, x_start):
        call = {k: plain_value(v) for k, v in a.items() if k not in _LIMITS}
        call.update({k: plain[i] for k, i in given.items()}, c=plain[cost],
                    bounds=np.column_stack([np.broadcast_to(plain[bounds.lb], (n,)),
                                            np.broadcast_to(plain[bounds.ub], (n,))]))
        res = original(**call)
        if res.status in (2, 3):
            raise UndefinedDerivative(
                f"adsim: scipy.optimize.linprog reports the problem "
                f"{'infeasible' if res.status == 2 else 'unbounded'} (status {res.status}: "
                f"{res.message}), so there is no solution to differentiate. Keep the "
                f"parameters where the problem has a bounded optimum")
        return res, res.x, res.status == 0, res.message
    return problem, run, _with_x, (n,)
