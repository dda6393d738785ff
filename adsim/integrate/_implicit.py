"""What the implicit methods share: the Jacobian of the right-hand side and
the linear solves of their Newton iterations.

The Jacobian ``f_y`` comes from SciPy's ``jac`` option (a function
``jac(t, y, *args)`` in NumPy, recorded like ``fun`` so every mode works
through it, or a constant matrix, dense or sparse), or from adsim, in one
of two representations chosen at the first evaluation:

* dense (``adsim.jacobian`` of ``fun``; inside a recording written out as
  ordinary ops, one reverse pass of ``fun`` per equation, for systems of at
  most :data:`TRANSCRIBED_MAX_SIZE` equations, and for larger ones a nested
  derivative, one op whose derivatives are second-order sweeps of ``fun``,
  one per equation), with the Newton matrices factored by LAPACK's dense
  LU (:class:`DenseLinear`);
* sparse (:class:`ColoredJacobian`: values on a fixed pattern by row
  coloring, derivatives by one second-order sweep per color), with SciPy's
  sparse LU (:class:`SparseLinear`). Used when ``jac_sparsity`` is given (its nonzeros
  are the pattern, as in SciPy), and otherwise for systems of at least
  :data:`SPARSE_MIN_SIZE` equations whose detected pattern (at ``t0, y0``)
  fills at most :data:`SPARSE_MAX_DENSITY` of the matrix.

SciPy factors a Newton matrix once and reuses the factors while the step
size and the Jacobian stay; here the matrix is rebuilt from the Jacobian and
the step size it was factored with (carried in the solver state), which
gives the same iteration, and both solvers keep its factors, keyed by the
exact matrix, for every solve with it: forward, tangent and the adjoint's
transposed solves (adsim/integrate/_newton_solve.py).

Hessian-vector products (``adsim.hvp``, ``adsim.hessian``, a ``jvp`` of a
``grad``) through adsim's Jacobian differentiate it once more: third
derivatives of ``fun``, recorded (adsim/_nesting/transcribe.py), one reverse
pass of ``fun`` per equation for the dense Jacobian and one per color for
the sparse one (adsim/integrate/_sparse_jacobian.py); the sparse Newton
solves' rules are written with the solves themselves, so they are recorded
like the dense ones, with the same kept factorisations. Where ``fun`` holds
an operation whose third derivative cannot be recorded (a primitive
without a vjp rule, a checkpointed loop), the error names ``fun`` and
``jac=``: a ``jac`` written in NumPy needs only its second derivatives.
"""
import numpy as np
import scipy.sparse as sp

from ..api import _any_active, jacobian
from .._nesting.nested import transcribed_derivative
from .._tapecache.cache import TapeCache
from .._np.integers import current
from .._active import Active
from .._scipy.sparse_active import ActiveSparse
from ..errors import MixedRecordings, UnsupportedOperation
from ._parameters import read_outside_arguments
from ._rhs import real_array
from ._dense_solve import DenseLinear
from ._sparse_jacobian import ColoredJacobian
from ._sparse_solve import SparseLinear

__all__ = ["JacobianSource", "SPARSE_MIN_SIZE", "SPARSE_MAX_DENSITY"]

SPARSE_MIN_SIZE = 100
"""Smallest system for which adsim's Jacobian may be sparse: below it dense
LU and a dense Jacobian cost little, and stay native ops of the tape."""

TRANSCRIBED_MAX_SIZE = 32
"""Largest system whose dense Jacobian a recorded step writes out as
ordinary ops (one reverse pass of ``fun`` per equation, recorded once per
step variant), so that replays and sweeps of the step run in C; a larger
one is one nested-derivative op, whose value and derivatives are sweeps of
``fun``'s tape called from the step's replay."""

SPARSE_MAX_DENSITY = 0.1
"""Largest fraction of nonzeros of a detected pattern that makes the
Jacobian sparse: denser matrices fill in under sparse LU."""

# named so: errors of the nested derivatives name the function and the
# alternative (third derivatives of fun that cannot be recorded)
_JACOBIAN_NAME = ("solve_ivp's fun (whose Jacobian Radau and BDF compute; Hessian-vector "
                  "products differentiate it twice more, and where that cannot be done, give "
                  "jac=, a NumPy function of t, y, *args)")


class JacobianSource:
    """``J = f_y(t, y)`` for a method, and the solves with it (``linear``):
    from adsim, dense or sparse, or from SciPy's ``jac`` option (a callable
    ``jac(t, y, *args)`` or a constant matrix, which is then never
    recomputed). ``sparsity`` is ``jac_sparsity`` as a CSC pattern, or None."""

    def __init__(self, rhs, jac, n, sparsity=None):
        self.n = n
        self.constant = jac is not None and not callable(jac)
        self.user = jac if callable(jac) else None
        self.matrix = None
        self.linear = None              # chosen at the first evaluation for adsim's J
        self.sparse = None
        if isinstance(jac, ActiveSparse):
            raise UnsupportedOperation(
                "adsim: solve_ivp's jac= is a scipy.sparse matrix assembled from active values, "
                "which adsim's sparse Newton solves do not take; pass it dense (jac=J.toarray()), "
                "or leave jac out and pass jac_sparsity=J: adsim then computes fun's sparse "
                "Jacobian itself")
        if self.constant and sp.issparse(jac):
            self.matrix = self._sparse_constant(jac)
        elif self.constant:
            self.matrix = self._checked(real_array(jac, "jac"))
            self.linear = DenseLinear(n)
        elif self.user is not None:
            self.linear = DenseLinear(n)
        else:
            fun_of_y = _fun_of_y(rhs)
            self._fun_of_y = fun_of_y
            self._dense = jacobian(fun_of_y)
            self._transcribed = TapeCache()
            self._colored = ColoredJacobian(fun_of_y, "sparse derivative of " + _JACOBIAN_NAME)
            if sparsity is not None:
                self._use_sparse(sparsity, warn_outside=False)

    def _sparse_constant(self, jac):
        J = sp.csc_matrix(jac, dtype=float)
        self._checked(J)
        J.sort_indices()
        self.linear = SparseLinear(J)
        return J.data.copy()

    def _use_sparse(self, pattern, warn_outside):
        self._colored.use_pattern(pattern, warn_outside)
        self.sparse = self._colored
        self.linear = SparseLinear(self._colored.P)

    def _choose(self, t, y, args):
        """Dense or sparse adsim Jacobian, from the pattern at the first point."""
        self.linear = DenseLinear(self.n)
        if self.n < SPARSE_MIN_SIZE:
            return
        plain = [_plain(a) for a in (y, t) + tuple(args)]
        pattern = self._colored.detect(*plain)
        if pattern.nnz <= SPARSE_MAX_DENSITY * self.n * self.n:
            self._use_sparse(pattern, warn_outside=True)

    def __call__(self, t, y, args):
        if self.constant:
            return self.matrix
        if self.user is not None:
            J = self.user(t, y, *args)
            if sp.issparse(J) or isinstance(J, ActiveSparse):     # (plain or of active values)
                raise UnsupportedOperation(
                    "adsim.integrate.solve_ivp: jac returned a scipy.sparse matrix; adsim "
                    "records jac like fun, so it must return a dense array written with "
                    "NumPy. Or leave jac out: adsim then computes the exact Jacobian itself, "
                    "sparse by coloring for large systems (jac_sparsity= gives the pattern)")
            return self._checked(real_array(J, "jac(t, y)"))
        time = t if isinstance(t, Active) else np.asarray(t, dtype=float)
        if self.linear is None:
            self._choose(time, y, args)
        if self.sparse is not None:
            return self.sparse(y, time, *args)
        full = (y, time) + tuple(args)
        if self.n <= TRANSCRIBED_MAX_SIZE and _any_active(full, self._fun_of_y):
            try:
                return transcribed_derivative(self._fun_of_y, full, {}, 0, self._transcribed)
            except MixedRecordings as error:
                raise read_outside_arguments() from error
        return self._dense(*full)

    def _checked(self, J):
        if tuple(J.shape) != (self.n, self.n):
            raise ValueError(f"`jac` is expected to have shape {(self.n, self.n)}, but actually "
                             f"has {tuple(J.shape)}.")
        return J


def _fun_of_y(rhs):
    """``fun`` as a function of ``y`` first, whose derivative is ``f_y`` (a
    closure over ``rhs`` alone: the tape caches check what it reads)."""
    def fun_of_y(y, t, *args):
        return rhs(t, y, args)
    fun_of_y.__name__ = _JACOBIAN_NAME
    return fun_of_y


def _plain(a):
    """The value an argument holds now, without derivatives (for detection)."""
    if isinstance(a, Active):
        return current(a)
    if type(a) in (list, tuple):
        return type(a)(_plain(e) for e in a)
    return a
