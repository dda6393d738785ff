"""The solution of a SciPy solver as a function of its parameters, by the
implicit function theorem.

A solver called on a function that reads active values (the parameters
``p``: in ``args``, a closure, an object, a global) returns ``x*(p)`` with
``F(x*(p), p) = 0``: the equations themselves for a root finder, the
gradient ``grad_x f`` of the objective for a minimiser, ``x - g(x, p)`` for
a fixed point. Differentiating that identity gives::

    F_x dx* + F_p dp = 0,   so   dx* = -F_x^{-1} F_p dp,   dp = -F_p^T F_x^{-T} dx*

``x*`` is one recorded op, an adsim primitive made per call
(adsim/_scipy/solution_op.py); this module holds the equations of each
kind of solve and the linear algebra of their derivatives:

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
  machinery records (``F_x`` by a nested ``adsim.jacobian``, dense; above
  :data:`DENSE_UP_TO` unknowns ``F_x^{-T} w`` as an implicit solution of
  its own, solved with the first order's factors transposed).

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
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._nesting.nested import RecordingInner
from ..api import grad
from ..errors import InvalidArgumentValue, UndefinedDerivative
from ..sparse.plan import SparseHessianPlan, SparseJacobianPlan

__all__ = ["DENSE_UP_TO", "Equations", "Stationarity", "qualified", "solution_to_rounding",
           "transcribed"]

DENSE_UP_TO = 400
"""Unknowns up to which ``F_x`` is a dense matrix (above: sparse)."""

KRYLOV_ABOVE_COLORS = 40
"""Sweeps of a sparse Jacobian of the equations above which GMRES on sweeps replaces it."""

KRYLOV_RTOL = 1e-12


def qualified(what):
    """The full name of a solver: ``what`` itself where it names its module
    (``scipy.integrate.solve_bvp``), else one of ``scipy.optimize``."""
    return what if "." in what else f"scipy.optimize.{what}"

NEAR_SOLUTION_RTOL = np.sqrt(np.finfo(float).eps)
"""How far (relative to the point) one Newton step from a point SciPy
flagged as not converged may reach for the point to count as a solution."""

NEAR_DIFFERENCED_MINIMUM_RTOL = 100 * NEAR_SOLUTION_RTOL
"""The same for a minimiser whose gradient SciPy takes by forward
differences (no ``jac``): their error, about sqrt(eps) (h f''/2 + f/h eps)
with h = sqrt(eps) |x|, keeps BFGS a Newton step of sqrt(eps) (1/2 +
|f| / (f'' |x|^2)) from the minimum, which is a few times sqrt(eps) for a
well-scaled objective and up to 100 times for one whose value is 100
times its curvature term; the derivative there is still closer than at
the default gtol=1e-5 of a solve SciPy calls successful."""


def transcribed(inner):
    """The function of ``inner`` (a RecordingInner, or a SavedInner loaded
    from a tape file) as its tapes: on plain arrays a replay, on active ones
    (the recorded adjoint rule of second-order sweeps) the ops of the
    variant that holds there, recorded again (adsim/_nesting/transcribe.py).
    The tapes are those recorded at the solve: what the function computed
    then, whatever its Python code reads now (a dict updated in place by the
    loop that called the solver). Where no variant holds, a RecordingInner
    records the function again."""
    from .._active import Active
    from .._nesting.transcribe import _Transcription
    from .arrays import now

    def function(*args):
        plain = [np.asarray(now(a), dtype=float) for a in args]
        value, tape = inner.run(plain, lambda tape, values: (tape.forward(*values), tape))
        if not any(isinstance(a, Active) for a in args):
            return value
        return _Transcription(tape, list(args)).output.reshape(tuple(tape.output_shape))
    return function


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
                f"adsim: the derivative of the solution of {qualified(self.what)} needs a "
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
                f"unknowns" + (". For a least-squares fit of more equations (root's method "
                               "'lm'), call scipy.optimize.least_squares or leastsq, "
                               "differentiated through J^T r = 0"
                               if np.size(out) > self.n else ""))
        return np.reshape(out, (self.n,))

    def taped_F(self, x, *params):
        """``F`` as its tapes recorded at the solve (:func:`transcribed`): what
        the rules recorded by second-order sweeps differentiate."""
        return transcribed(self.tape.inner)(x, *params)

    def factors(self, x, params):
        """``F_x`` ready to solve with: dense or sparse LU, or GMRES on
        sweeps when the sparse Jacobian would take more than
        :data:`KRYLOV_ABOVE_COLORS` sweeps."""
        inputs = [x] + params
        if self.n <= DENSE_UP_TO:
            seeds = [np.eye(self.n)] + [np.zeros((self.n, p.size)) for p in params]
            return _Factors(self.tape.sweep("_tangent", inputs, seeds)[1].T, self.what)
        if self._plan is None:      # (on the tapes of the solve: the program may have moved on)
            self._plan = SparseJacobianPlan(self.taped_F, inputs, 0)
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

    def taped_F(self, x, *params):
        """The gradient of the objective's tapes recorded at the solve
        (:func:`transcribed`)."""
        return grad(transcribed(self.tape.inner))(x, *params)

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
            self._plan = SparseHessianPlan(transcribed(self.tape.inner), [x] + params, 0)
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


def solution_to_rounding(system, x, params, rtol=NEAR_SOLUTION_RTOL):
    """Whether ``x``, where SciPy stopped short of its own test, is a
    solution of ``system`` up to rounding. SciPy's hybr stops with "no
    further improvement" or "not making good progress", BFGS with "precision
    loss", when rounding in the function keeps them from a tolerance tighter
    than it allows (a residual of one unit in the last place of a pressure
    of 4e6); the program, which reads ``x`` and not ``success``, goes on.
    Then one Newton step ``F_x^{-1} F(x)`` is within
    ``rtol`` (:data:`NEAR_SOLUTION_RTOL`, or :data:`NEAR_DIFFERENCED_MINIMUM_RTOL`
    for a minimiser on differenced gradients) of ``x``, and the derivative
    by the implicit function theorem at ``x`` is off by about as little; a
    point far from a solution, or where ``F_x`` is singular, is not one."""
    x = np.asarray(x, dtype=float).reshape(-1)
    if not np.all(np.isfinite(x)):
        return False
    try:
        with np.errstate(all="ignore"):
            step = system.factors(x, params).solve(np.asarray(system.F(x, *params), dtype=float))
    except UndefinedDerivative:
        return False
    return bool(np.all(np.isfinite(step))) and \
        np.linalg.norm(step) <= rtol * np.linalg.norm(x)


def _key(arrays):
    return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in arrays)
