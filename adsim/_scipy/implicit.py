"""The solution of a SciPy solver as a function of its parameters, by the
implicit function theorem.

A solver called on a function that reads active values (the parameters
``p``: in ``args``, a closure, an object, a global) returns ``x*(p)`` with
``F(x*(p), p) = 0``: the equations themselves for a root finder, the
gradient ``grad_x f`` of the objective for a minimiser, ``x - g(x, p)`` for
a fixed point. Differentiating that identity gives::

    F_x dx* + F_p dp = 0,   so   dx* = -F_x^{-1} F_p dp,   dp = -F_p^T F_x^{-T} dx*

``x*`` is one recorded op, an adsim primitive made per call
(adsim/primitives.py):

- value: SciPy's solver on the plain parameter values (adsim/_scipy/
  solver_calls.py), starting on replay from the previous solution (and,
  should that fail, from the program's own start); a solve that does not
  converge raises :class:`adsim.errors.SolverNotConverged`. After the first
  solve, a call that a tape file can hold runs on the recorded tapes of its
  function (adsim/_scipy/implicit_file.py);
- tangent and adjoint: one solve with ``F_x`` (or its transpose), ``F_p``
  from a tangent or adjoint sweep of a tape of ``F`` recorded at the
  solution (:class:`Equations`) or, for a minimiser, a second-order sweep of
  a tape of the objective (:class:`Stationarity`: ``F_x`` is its Hessian);
- second order: the adjoint rule run on active arrays, which the primitive
  machinery records (``F_x`` by a nested ``adsim.jacobian``), dense.

``F_x`` is factorised once per point, densely for up to
:data:`DENSE_UP_TO` unknowns; above that as a sparse matrix from adsim's
coloring plans (adsim/sparse/plan.py: the Jacobian of the equations, the
Hessian of an objective) factorised by ``splu``: a large discretised
system costs a few compressed sweeps and one sparse factorisation. Where
that sparse Jacobian would take more than :data:`KRYLOV_ABOVE_COLORS`
sweeps (a dense coupling), GMRES solves with ``F_x`` by one tangent or
adjoint sweep per iteration instead. A singular ``F_x`` raises
:class:`adsim.UndefinedDerivative`.

The derivative is that of the exact solution at the parameters; for the
point SciPy returned it is exact up to the solver's tolerance.
"""
import threading
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._active import Active
from .._nesting.nested import RecordingInner
from ..errors import (InvalidArgumentValue, SolverNotConverged,
                      UndefinedDerivative, UnsupportedOperation)
from ..api import grad, jacobian
from ..primitives import Primitive
from ..sparse.plan import SparseHessianPlan, SparseJacobianPlan

__all__ = ["DENSE_UP_TO", "Equations", "Stationarity", "ImplicitSolution"]

DENSE_UP_TO = 400
"""Unknowns up to which ``F_x`` is a dense matrix (above: sparse)."""

KRYLOV_ABOVE_COLORS = 40
"""Sweeps of a sparse Jacobian of the equations above which GMRES on sweeps replaces it."""

KRYLOV_RTOL = 1e-12


def _plain(a):
    return np.asarray(a, dtype=float)


class _Recorded:
    """A function of ``(x, *params)`` as its recorded tapes (one per branch
    path met, the one used last first): ``inner`` a RecordingInner (records
    ``function`` again where no tape's path holds) or, loaded from a tape
    file, a SavedInner (raises BranchChanged there)."""

    def __init__(self, function, inner=None):
        self.function = function
        self.inner = inner if inner is not None else RecordingInner(
            function, getattr(function, "__name__", "function"), "the function of a solve")

    def sweep(self, method, inputs, *seeds):
        """The tape method ``method`` ("_tangent", "_adjoint", "_soadjoint")
        at ``inputs`` with ``seeds``."""
        return self.inner.run(list(inputs), lambda tape, values: getattr(tape, method)(
            tape._inputs(values), *seeds))

    def forward(self, inputs):
        return self.inner.run(list(inputs), lambda tape, values: tape.forward(*values))


class _Factors:
    """``F_x`` factorised (dense LU, or sparse LU), solving with it or its
    transpose; refuses a singular matrix (no derivative there)."""

    def __init__(self, J, what):
        n = J.shape[0]
        self.sparse = sp.issparse(J)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            warnings.simplefilter("ignore", spla.MatrixRankWarning)
            try:
                if self.sparse:
                    self.lu = spla.splu(sp.csc_matrix(J))
                    diagonal = self.lu.U.diagonal()
                else:
                    self.lu = scipy.linalg.lu_factor(J, check_finite=False)
                    diagonal = np.diag(self.lu[0])
            except (RuntimeError, ValueError) as err:          # exactly singular
                raise _singular(what) from err
        size = np.max(np.abs(diagonal)) if n else 1.0
        if not np.all(np.isfinite(diagonal)) or \
                np.min(np.abs(diagonal), initial=np.inf) <= n * np.finfo(float).eps * size:
            raise _singular(what)

    def solve(self, b, transpose=False):
        if self.sparse:
            return self.lu.solve(b, trans="T" if transpose else "N")
        return scipy.linalg.lu_solve(self.lu, b, trans=1 if transpose else 0, check_finite=False)


class _Krylov:
    """``F_x`` as an operator when its sparse Jacobian would need many sweeps
    (a dense coupling: an integral term, a mean field): GMRES with one
    tangent sweep (``F_x v``) or adjoint sweep (``F_x^T w``) per iteration,
    to a relative residual of :data:`KRYLOV_RTOL`."""

    def __init__(self, equations, x, params):
        n = equations.n
        self.forward = spla.LinearOperator(
            (n, n), matvec=lambda v: equations.unknowns_tangent(x, params, v),
            rmatvec=lambda w: equations.unknowns_adjoint(x, params, w), dtype=float)
        self.what = equations.what

    def solve(self, b, transpose=False):
        operator = self.forward.T if transpose else self.forward
        if not np.any(b):
            return np.zeros_like(b)
        x, info = spla.gmres(operator, b, rtol=KRYLOV_RTOL, atol=0.0, restart=50,
                             maxiter=max(20, b.size // 10))
        if info != 0:
            raise UndefinedDerivative(
                f"adsim: the derivative of the solution of scipy.optimize.{self.what} needs a "
                f"linear solve with the Jacobian of its equations, which GMRES did not finish "
                f"(the Jacobian is nearly singular or badly conditioned there, and too dense "
                f"for a sparse factorisation). Rescale the equations, or keep the parameters "
                f"where the solution is well determined")
        return x


def _singular(what):
    return UndefinedDerivative(
        f"adsim: the solution found by {what} has no derivative with respect to the "
        f"parameters: the Jacobian of the equations with respect to the unknowns (for a "
        f"minimiser, the Hessian of the objective) is singular there, so the solution is not "
        f"locally unique (a double root, a flat direction of the objective, an equation that "
        f"does not depend on the unknowns). Change the problem so that the solution is "
        f"isolated (fix the free directions, add a regularisation)")


class Equations:
    """A root finder's equations ``F(x, *params)`` (n numbers for n
    unknowns): ``F_x`` by tangent sweeps (dense) or the coloring plan
    (sparse), ``F_p dp`` by a tangent sweep, ``F_p^T w`` by an adjoint sweep."""

    kind = "root"

    def __init__(self, residual, n, what, inner=None):
        self.residual, self.n, self.what = residual, n, what
        self.tape = _Recorded(self.F, inner)
        self._plan = None

    def F(self, x, *params):
        """The equations as a function adsim records (also on active arrays)."""
        out = self.residual(x, *params)
        if np.size(out) != self.n:
            raise InvalidArgumentValue(
                f"adsim: the function solved by {self.what} returned {np.size(out)} numbers for "
                f"{self.n} unknowns; the implicit function theorem needs as many equations as "
                f"unknowns")
        return np.reshape(out, (self.n,))

    def factors(self, x, params):
        """``F_x`` ready to solve with: dense or sparse LU, or GMRES on
        sweeps when the sparse Jacobian would take more than
        :data:`KRYLOV_ABOVE_COLORS` sweeps."""
        inputs = [x] + params
        if self.n <= DENSE_UP_TO:
            seeds = [np.eye(self.n)] + [np.zeros((self.n, p.size)) for p in params]
            return _Factors(self.tape.sweep("_tangent", inputs, seeds)[1].T, self.what)
        if self._plan is None:
            self._plan = SparseJacobianPlan(self.F, inputs, 0)
        if self._plan.ncolors > KRYLOV_ABOVE_COLORS:
            return _Krylov(self, x, params)
        return _Factors(self._plan(*inputs), self.what)

    def unknowns_tangent(self, x, params, v):
        """``F_x v``."""
        seeds = [np.reshape(v, (1, -1))] + [np.zeros((1, p.size)) for p in params]
        return self.tape.sweep("_tangent", [x] + params, seeds)[1][0]

    def unknowns_adjoint(self, x, params, w):
        """``F_x^T w``."""
        return self.tape.sweep("_adjoint", [x] + params, np.reshape(w, (1, -1)))[1][0][0]

    def parameter_tangent(self, x, params, dparams):
        seeds = [np.zeros((1, self.n))] + [np.reshape(d, (1, -1)) for d in dparams]
        return self.tape.sweep("_tangent", [x] + params, seeds)[1][0]

    def parameter_adjoint(self, x, params, weight):
        adjoints = self.tape.sweep("_adjoint", [x] + params, weight.reshape(1, -1))[1]
        return [a[0] for a in adjoints[1:]]


class Stationarity:
    """A minimiser's first-order conditions ``grad_x f(x, *params) = 0`` for
    a scalar objective ``f``: ``F_x`` (its Hessian) and ``F_p`` (the mixed
    second derivatives) from one second-order sweep of ``f``'s tape with the
    n unit directions of x (dense); above :data:`DENSE_UP_TO` unknowns, the
    Hessian by adsim's sparse Hessian plan and ``F_p dp``, ``F_p^T w`` by
    one second-order sweep each."""

    kind = "minimum"

    def __init__(self, objective, n, what, inner=None):
        self.objective, self.n, self.what = objective, n, what
        self.tape = _Recorded(self.f, inner)
        self._at = (None, None)
        self._plan = None

    def f(self, x, *params):
        out = self.objective(x, *params)
        if np.size(out) != 1:
            raise InvalidArgumentValue(
                f"adsim: the objective minimised by {self.what} returned {np.size(out)} "
                f"numbers; it must return one")
        return np.reshape(out, ())

    def F(self, x, *params):
        """The gradient of the objective, as a function adsim records."""
        return grad(self.f)(x, *params)

    def _second(self, x, params):
        key = _key([x] + params)
        if self._at[0] != key:
            seeds = [np.eye(self.n)] + [np.zeros((self.n, p.size)) for p in params]
            adots = self.tape.sweep("_soadjoint", [x] + params, seeds, np.ones(1))[3]
            self._at = (key, adots)
        return self._at[1]

    def _directional(self, x, params, seeds):
        """``d/dx_i`` and ``d/dp`` of ``grad f . v`` for one direction ``v``
        (``seeds``: one row per input)."""
        return self.tape.sweep("_soadjoint", [x] + params, seeds, np.ones(1))[3]

    def factors(self, x, params):
        """``F_x``, the Hessian, factorised (dense or sparse LU)."""
        if self.n <= DENSE_UP_TO:
            return _Factors(self._second(x, params)[0], self.what)
        if self._plan is None:
            self._plan = SparseHessianPlan(self.f, [x] + params, 0)
        return _Factors(self._plan(x, *params), self.what)

    def parameter_tangent(self, x, params, dparams):
        if self.n > DENSE_UP_TO:            # H_xp dp: the x part for v = (0, dp)
            seeds = [np.zeros((1, self.n))] + [np.reshape(d, (1, -1)) for d in dparams]
            return self._directional(x, params, seeds)[0][0]
        mixed = self._second(x, params)[1:]
        return sum((m @ np.ravel(d) for m, d in zip(mixed, dparams)), np.zeros(self.n))

    def parameter_adjoint(self, x, params, weight):
        if self.n > DENSE_UP_TO:            # H_px w: the p parts for v = (w, 0)
            seeds = [np.reshape(weight, (1, -1))] + [np.zeros((1, p.size)) for p in params]
            return [a[0] for a in self._directional(x, params, seeds)[1:]]
        return [m.T @ weight for m in self._second(x, params)[1:]]


def _key(arrays):
    return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in arrays)


class ImplicitSolution:
    """One differentiated solver call: ``system`` (:class:`Equations` or
    :class:`Stationarity`) and ``solve(x_start, plain params) -> x`` (flat;
    SciPy's solver, raising SolverNotConverged) make the primitive whose
    value is the solution and whose rules follow the module docstring."""

    def __init__(self, system, solve, x_start):
        self.system = system
        self.solve = solve
        self.what = system.what
        self._first = self._start = np.array(x_start, dtype=float).reshape(-1)
        self._lock = threading.Lock()
        self._solved_at = None              # the parameters of the latest solve
        self._factors = (None, None)
        self.saved = None                   # the call as a tape file holds it, or None
        self.primitive = _SolutionOp(self)

    @property
    def not_saved(self):
        """Why a tape file cannot hold the solve, or None (adsim/_scipy/implicit_file.py)."""
        if self.saved is None or self.saved.why_not is not None:
            why = "it runs the program's own function" if self.saved is None else \
                self.saved.why_not
            return f"the solution of a call of scipy.optimize.{self.what} ({why})"
        return None

    def __call__(self, params):
        return self.primitive(*params)

    def _value(self, *params):
        values = [_plain(p) for p in params]
        key = _key(values)
        with self._lock:
            if key == self._solved_at:        # the same parameters: the same solution
                return self._start.copy()
            try:
                x = self.solve(self._start, values)
            except SolverNotConverged:
                # a minimiser started at a minimum may stop at once (a line
                # search finding no decrease): start where the program did
                if self._start is self._first:
                    raise
                x = self.solve(self._first, values)
            self._start = np.array(x, dtype=float).reshape(-1)
            self._solved_at = key
        return self._start.copy()

    def _factorised(self, x, params):
        key = _key([x] + params)
        with self._lock:
            if self._factors[0] != key:
                self._factors = (key, self.system.factors(x, params))
            return self._factors[1]

    def _jvp(self, args, out, tangents):
        params = [_plain(a) for a in args]
        dparams = [np.zeros(p.shape) if t is None else t for p, t in zip(params, tangents)]
        factors = self._factorised(out, params)
        rhs = self.system.parameter_tangent(out, params, dparams)
        return -factors.solve(rhs)

    def _vjp(self, args, out, weight):
        if isinstance(out, Active) or any(isinstance(a, Active) for a in args) or \
                isinstance(weight, Active):
            return self._recorded_vjp(args, out, weight)
        params = [_plain(a) for a in args]
        lam = self._factorised(out, params).solve(np.ravel(weight), transpose=True)
        return tuple(-a.reshape(p.shape)
                     for a, p in zip(self.system.parameter_adjoint(out, params, lam), params))

    def _recorded_vjp(self, args, out, weight):
        """The adjoint rule on active arrays (second-order sweeps record it):
        ``F_x`` by a nested Jacobian, a dense solve, ``F_p^T lambda`` by a
        nested gradient. Loaded from a tape file, the function is its tapes'
        ops recorded again (adsim/_scipy/implicit_file.py)."""
        if self.system.n > DENSE_UP_TO:
            raise UnsupportedOperation(
                f"adsim: second derivatives (hvp, hessian, a derivative of a derivative) "
                f"through scipy.optimize.{self.what} are computed with a dense Jacobian of its "
                f"equations, for up to {DENSE_UP_TO} unknowns; this solve has "
                f"{self.system.n}. First derivatives (grad, jvp, vjp) work at any size")
        F = self.system.F
        J = jacobian(F, argnums=0)(out, *args)
        lam = np.linalg.solve(np.transpose(J), np.ravel(weight))
        pulled = grad(lambda *p: np.sum(lam * F(out, *p)), argnums=tuple(range(len(args))))(
            *args)
        return tuple(-g for g in pulled)


class _SolutionOp(Primitive):
    """The solution of one solver call as an op; a tape file holds it when
    ``solution.saved`` describes the call (adsim/_scipy/implicit_file.py)."""

    explains_recorded_rule = True

    def __init__(self, solution):
        self.solution = solution
        super().__init__(solution._value, jvp=solution._jvp, vjp=solution._vjp)
        self.name = f"scipy.optimize.{solution.what} (its solution)"

    @property
    def not_saved(self):
        return self.solution.not_saved

    def applied(self, in_shapes, out_shape, first_value):
        from .implicit_file import SolutionApplication
        # a constrained solve's description is its own (adsim/_scipy/constrained_file.py)
        cls = getattr(self.solution.saved, "application", SolutionApplication)
        return cls(self, in_shapes, out_shape, first_value=first_value)
