"""A Krylov method's solves with a sparse matrix (or LinearOperator) A and
with its transpose, for the primitives of scipy.sparse.linalg's ``cg``,
``gmres``, ``bicgstab``, ``minres`` and ``lgmres``: constant A
(adsim/_scipy/sparse_solve.py) or A of active values
(adsim/_scipy/sparse_active_solve.py)."""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import SolverNotConverged, UnsupportedOperation

__all__ = ["KRYLOV", "LEAST_SQUARES", "SYMMETRIC", "Krylov", "LeastSquares"]

KRYLOV = {"cg": spla.cg, "gmres": spla.gmres, "bicgstab": spla.bicgstab,
          "minres": spla.minres, "lgmres": spla.lgmres}
SYMMETRIC = ("cg", "minres")          # methods that take A to be symmetric: A^T is A


class Krylov:
    """A Krylov method's solves: the value from the user's x0 (and with the
    user's callback), derivatives from zero; all with the user's
    preconditioner M (its transpose for the adjoint of a non-symmetric
    method, when M has one: a matrix, or a LinearOperator with rmatvec). A
    derivative solve that breaks down (info < 0: bicgstab on some right-hand
    sides) is done again by GMRES to the same tolerance: the derivative is
    A^-1 db whichever method finds it."""

    def __init__(self, matrix, method, options, x0=None, callback=None, M=None):
        self.matrix, self.method, self.options = matrix, method, options
        self.x0, self.callback = x0, callback
        self.M = M
        self.M_transposed = None if M is None or method in SYMMETRIC else transposed_operator(M)

    def solve(self, b, transposed, derivative=False):
        flipped = transposed and self.method not in SYMMETRIC
        A = self.matrix.T if flipped else self.matrix
        M = self.M_transposed if flipped else self.M
        b = np.asarray(b, dtype=float)
        if derivative and not np.any(b):        # a zero seed: the solution is zero
            return np.zeros_like(b)
        extra = {} if derivative else {"x0": self.x0, "callback": self.callback}
        try:
            x, info = KRYLOV[self.method](A, b, **self.options, **extra, M=M)
        except NotImplementedError as err:          # a LinearOperator without rmatvec
            raise UnsupportedOperation(
                f"adsim: the adjoint of scipy.sparse.linalg.{self.method} solves with A^T, "
                f"which this LinearOperator does not give ({err}); give it an rmatvec") from err
        if info < 0 and derivative:
            tolerances = {k: v for k, v in self.options.items() if k in ("rtol", "atol")}
            x, info = spla.gmres(A, b, restart=min(b.shape[0], 100), M=M, **tolerances)
        if info != 0:
            what = "did not converge" if info > 0 else "broke down"
            raise SolverNotConverged(
                f"adsim: scipy.sparse.linalg.{self.method} {what} (info = {info}) in "
                f"{_which_solve(transposed, derivative)} with options {self.options}; its "
                f"result has no derivative. Raise maxiter, "
                f"loosen rtol/atol or precondition the system")
        return x


LEAST_SQUARES = {"lsqr": spla.lsqr, "lsmr": spla.lsmr}
_NOT_SOLVED = {3: "the condition number of A exceeded conlim",
               6: "the condition number of A exceeded 1/eps",
               7: "the iteration limit was reached"}


class LeastSquares:
    """lsqr's and lsmr's solves: x = A^+ b, or (A^T A + damp^2 I)^-1 A^T b
    with ``damp``, linear in b. Its transpose is the same method on A^T with
    the same damp: the minimum-norm (damped) solution of A^T y = w is
    A (A^T A + damp^2 I)^-1 w. The value runs from the user's x0; the last
    value's full output is kept (``last``)."""

    def __init__(self, matrix, method, options, x0=None):
        self.matrix, self.method, self.options, self.x0 = matrix, method, options, x0
        self.last = None

    def solve(self, b, transposed, derivative=False):
        A = self.matrix.T if transposed else self.matrix
        b = np.asarray(b, dtype=float)
        if derivative and not np.any(b):
            return np.zeros(A.shape[1])
        out = LEAST_SQUARES[self.method](A, b, **self.options,
                                         **({} if derivative else {"x0": self.x0}))
        if out[1] in _NOT_SOLVED and not (out[1] == 7 and self._meets_tolerances(A, b, out[0])):
            raise SolverNotConverged(
                f"adsim: scipy.sparse.linalg.{self.method} stopped with istop = {out[1]} "
                f"({_NOT_SOLVED[out[1]]}) in {_which_solve(transposed, derivative)} with "
                f"options {self.options}; its result is not the solution and has no "
                f"derivative. Raise the iteration limit, or regularise with damp")
        if not (transposed or derivative):
            self.last = out
        return out[0]

    def _meets_tolerances(self, A, b, x):
        """Whether x passes the method's own stopping tests (a consistent
        system solved to btol and atol, or the normal equations to atol)
        though the iteration limit was hit first, as lsmr's default limit
        min(m, n) often is."""
        atol, btol, damp = (self.options.get(k) for k in ("atol", "btol", "damp"))
        r = b - A @ x
        normA, normr = spla.norm(A), np.linalg.norm(r)
        consistent = normr <= btol * np.linalg.norm(b) + atol * normA * np.linalg.norm(x)
        normal = np.linalg.norm(A.T @ r - damp ** 2 * x) <= atol * normA * max(normr, 1e-300)
        return consistent or normal


def transposed_operator(M):
    """M^T of a preconditioner, or None when it has none (the adjoint solve
    then runs without one)."""
    if sp.issparse(M) or isinstance(M, np.ndarray):
        return M.T
    if not isinstance(M, spla.LinearOperator):
        return None
    if hasattr(M, "_CustomLinearOperator__rmatvec_impl"):     # LinearOperator(shape, matvec=...)
        return M.T if M._CustomLinearOperator__rmatvec_impl is not None else None
    base = spla.LinearOperator
    overrides = type(M)._rmatvec is not base._rmatvec or type(M)._adjoint is not base._adjoint
    return M.T if overrides else None


def _which_solve(transposed, derivative):
    if transposed:
        return "an adjoint solve with the transpose"
    return "a tangent solve" if derivative else "the solve"
