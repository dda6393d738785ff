"""One call of a constrained minimiser as a problem: its objective and
constraint functions, each with the extra arguments it takes, and the
limits and matrices (``data``) that may be active (adsim/_scipy/constrained.py
differentiates the solution through the KKT conditions of this problem)."""
import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint

from .._active import Active
from .._np.core import active_leaves
from ..errors import InvalidArgumentValue
from .call_data import kept_sparse
from .solver_calls import _as_array

__all__ = ["ACTIVE_TOL", "Piece", "Problem", "describe_bounds", "describe_constraint"]

ACTIVE_TOL = 1e-6
"""Relative slack up to which an inequality counts as active at the solution."""


class Problem:
    """One call's objective and constraints: every function with the group
    of extra arguments it takes, and the limits and matrices (``data``)
    that may be active. ``arrange()`` lays them out as one tuple of extra
    arguments: the data first, then each group."""

    def __init__(self, fun, args, first_of):
        self.first_of = first_of
        self.groups = [args if isinstance(args, tuple) else (args,)]   # as SciPy wraps it
        self.functions = []          # (callable, group)
        self.names = {}              # index -> what a derivative given as code is
        self.data = []
        self.fun = self.function(fun, 0)
        self.pieces = []             # Piece
        self.hooks = {}              # where each given function goes back: name -> index
        # functions SciPy calls with x and a vector: index -> the function
        # whose values the vector matches (a constraint's hess: its
        # multipliers), or None (hessp: x itself)
        self.with_vector = {}
        self.tolerance = ACTIVE_TOL  # slack of an active inequality, violation allowed
        # a linear program's check that its solution is a nondegenerate vertex:
        # (solver, J_A, multipliers, which are inequalities, n) -> an error or None
        self.not_a_vertex = None

    def function(self, f, group, name=None):
        """Index of ``f`` (taking the extra arguments of ``group``); ``name``
        says which derivative it is, for messages."""
        self.functions.append((f, group))
        if name is not None:
            self.names[len(self.functions) - 1] = name
        return len(self.functions) - 1

    def datum(self, v):
        if not isinstance(v, Active) and active_leaves(v):
            v = _as_array(v)                 # a list holding active values: one array
        elif sp.issparse(v):                 # in the form a tape file keeps, if it can
            try:
                v = kept_sparse(v)
            except TypeError:
                pass                         # saving says why (adsim/_scipy/call_data.py)
        self.data.append(v)
        return len(self.data) - 1

    def group(self, args):
        args = args if isinstance(args, tuple) else (args,)
        self.groups.append(args)
        return len(self.groups) - 1

    def arrange(self):
        """(functions of ``(*xs, *all)``, ``all``)."""
        offsets, at = [], len(self.data)
        for g in self.groups:
            offsets.append((at, at + len(g)))
            at += len(g)
        every = tuple(self.data) + tuple(a for g in self.groups for a in g)
        count = len(every)

        def wrap(f, group):
            start, stop = offsets[group]

            def with_args(*a):
                cut = len(a) - count
                return f(*a[:cut], *a[cut:][start:stop])
            with_args.__name__ = getattr(f, "__name__", "function")
            return with_args
        return [wrap(f, g) for f, g in self.functions], every


class Piece:
    """One constraint, ``lb <= c(x) <= ub``: ``c`` a function (index), ``A @
    x`` (``A`` a data index) or ``x``; ``lb``, ``ub`` data indices;
    ``given`` rebuilds the object SciPy is given from the plain call."""

    def __init__(self, fun=None, matrix=None, lb=None, ub=None, given=None):
        self.fun, self.matrix, self.lb, self.ub, self.given = fun, matrix, lb, ub, given
        self.layout = None           # (equal, lower, upper) masks, from the first solution


def describe_constraint(problem, c):
    if isinstance(c, dict):
        kind = c.get("type")
        if kind not in ("eq", "ineq"):
            raise InvalidArgumentValue(
                f"adsim: a constraint's 'type' must be 'eq' or 'ineq', not {kind!r}")
        group = problem.group(c.get("args", ()))
        fun = problem.function(c["fun"], group)
        jac = problem.function(c["jac"], group, "a constraint's jac") \
            if callable(c.get("jac")) else None
        lb = problem.datum(0.0)
        ub = problem.datum(0.0 if kind == "eq" else np.inf)

        def given(bound, plain):
            out = dict(c, fun=bound[fun], args=())
            if jac is not None:
                out["jac"] = bound[jac]
            return out
        return Piece(fun=fun, lb=lb, ub=ub, given=given)
    if isinstance(c, NonlinearConstraint):
        alone = problem.group(())          # its functions take x alone
        fun = problem.function(c.fun, alone)
        jac = problem.function(c.jac, alone, "a NonlinearConstraint's jac") \
            if callable(c.jac) else None
        hess = problem.function(c.hess, alone, "a NonlinearConstraint's hess") \
            if callable(c.hess) else None
        if hess is not None:                # hess(x, v): of the multipliers too
            problem.with_vector[hess] = fun
        lb, ub = problem.datum(c.lb), problem.datum(c.ub)

        def given(bound, plain):
            return NonlinearConstraint(
                bound[fun], plain[lb], plain[ub], jac=c.jac if jac is None else bound[jac],
                hess=c.hess if hess is None else bound[hess], keep_feasible=c.keep_feasible,
                finite_diff_rel_step=c.finite_diff_rel_step,
                finite_diff_jac_sparsity=c.finite_diff_jac_sparsity)
        return Piece(fun=fun, lb=lb, ub=ub, given=given)
    if isinstance(c, LinearConstraint):
        matrix, lb, ub = problem.datum(c.A), problem.datum(c.lb), problem.datum(c.ub)

        def given(bound, plain):
            return LinearConstraint(plain[matrix], plain[lb], plain[ub], c.keep_feasible)
        return Piece(matrix=matrix, lb=lb, ub=ub, given=given)
    raise InvalidArgumentValue(
        f"adsim: a constraint of scipy.optimize.minimize must be a dict, a "
        f"NonlinearConstraint or a LinearConstraint, not {type(c).__name__}")


def describe_bounds(problem, bounds):
    if isinstance(bounds, Bounds):
        lb, ub = problem.datum(bounds.lb), problem.datum(bounds.ub)

        def given(bound, plain):
            return Bounds(plain[lb], plain[ub], bounds.keep_feasible)
    else:
        pairs = list(bounds)
        lb = problem.datum([-np.inf if lo is None else lo for lo, _ in pairs])
        ub = problem.datum([np.inf if hi is None else hi for _, hi in pairs])

        def given(bound, plain):         # the user's pairs, None kept
            return [(None if lo is None else plain[lb][i], None if hi is None else plain[ub][i])
                    for i, (lo, hi) in enumerate(pairs)]
    return Piece(lb=lb, ub=ub, given=given)
