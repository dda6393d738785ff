"""The solution of one SciPy solver call as an op of the tape: its value
(SciPy's solver on the plain parameters, warm-started from the previous
solution), its tangent and adjoint by the implicit function theorem
(adsim/_scipy/implicit.py: the equations and their linear algebra), its
second derivatives recorded from the adjoint rule on active arrays, and
the description a tape file holds of it (adsim/_scipy/implicit_file.py,
or for a constrained minimiser adsim/_scipy/constrained_file.py)."""
import threading

import numpy as np

from .._active import Active
from ..api import grad, jacobian
from ..errors import SolverNotConverged
from ..primitives import Primitive
from .implicit import DENSE_UP_TO, Equations, _key, qualified
from .implicit_file import SolutionApplication

__all__ = ["ImplicitSolution"]


def _plain(a):
    return np.asarray(a, dtype=float)


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
            return f"the solution of a call of {qualified(self.what)} ({why})"
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
        ``lambda = F_x^{-T} w``, then ``F_p^T lambda`` by a nested gradient.
        Up to :data:`DENSE_UP_TO` unknowns ``F_x`` is a nested Jacobian
        solved densely; above, ``lambda`` is itself an implicit solution (of
        the linear equations ``F_x^T lambda - w = 0`` in ``(x, p, w)``), so
        its derivatives take the sparse or Krylov path of the first order.
        Loaded from a tape file, the function is its tapes' ops recorded
        again; in the process that solved, the tapes recorded at the solve
        too (``taped_F``), so that the function is the one solved, not
        whatever its code reads now."""
        F = self.system.taped_F
        if self.system.n > DENSE_UP_TO:
            lam = self._adjoint_solution(out, args, weight)
        else:
            J = jacobian(F, argnums=0)(out, *args)
            lam = np.linalg.solve(np.transpose(J), np.ravel(weight))
        pulled = grad(lambda *p: np.sum(lam * F(out, *p)), argnums=tuple(range(len(args))))(
            *args)
        return tuple(-g for g in pulled)

    def _adjoint_solution(self, out, args, weight):
        """``F_x^{-T} w`` as the solution of ``G(lambda; x, p, w) = grad_x
        (lambda . F(x, p)) - w = 0``: its value by the factorisation of the
        first order, its derivatives by the implicit function theorem."""
        F, n = self.system.taped_F, self.system.n

        def weighted(x, lam, *params):
            return np.sum(lam * F(x, *params))

        def adjoint_equations(lam, x, *rest):
            return grad(weighted, argnums=0)(x, lam, *rest[:-1]) - np.ravel(rest[-1])

        def solve(start, values):
            x, params, w = values[0], list(values[1:-1]), values[-1]
            return self._factorised(x, params).solve(np.ravel(w), transpose=True)

        system = _AdjointEquations(adjoint_equations, n, f"{self.what} (its adjoint equations)",
                                   self)
        return ImplicitSolution(system, solve, np.zeros(n))([out, *args, weight])


class _AdjointEquations(Equations):
    """The equations of ``lambda = F_x^{-T} w``: their Jacobian in
    ``lambda`` is ``F_x^T``, so they solve with the factorisation of the
    solve they belong to (``solution``), transposed."""

    def __init__(self, residual, n, what, solution):
        super().__init__(residual, n, what)
        self.solution = solution

    def factors(self, lam, params):
        return _Transposed(self.solution._factorised(params[0], list(params[1:-1])))


class _Transposed:
    def __init__(self, factors):
        self.factors = factors

    def solve(self, b, transpose=False):
        return self.factors.solve(b, transpose=not transpose)


class _SolutionOp(Primitive):
    """The solution of one solver call as an op; a tape file holds it when
    ``solution.saved`` describes the call (adsim/_scipy/implicit_file.py)."""

    explains_recorded_rule = True

    def __init__(self, solution):
        self.solution = solution
        super().__init__(solution._value, jvp=solution._jvp, vjp=solution._vjp)
        self.name = f"{qualified(solution.what)} (its solution)"

    @property
    def not_saved(self):
        return self.solution.not_saved

    def applied(self, in_shapes, out_shape, first_value):
        # a constrained solve's description is its own (adsim/_scipy/constrained_file.py)
        cls = getattr(self.solution.saved, "application", SolutionApplication)
        return cls(self, in_shapes, out_shape, first_value=first_value)
