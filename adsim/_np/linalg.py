"""``np.linalg.solve`` and ``np.linalg.norm`` on active arrays."""
import numpy as np

from ..errors import UnsupportedOperation
from ..primitives import primitive
from .elementwise import absolute
from .reductions import amax, sum as reduce_sum


def _solve_value(A, b):
    return np.linalg.solve(A, b)


def _solve_jvp(args, x, tangents):
    """dx = A^{-1} (db - dA x)."""
    A, b = args
    dA, db = tangents
    rhs = np.zeros_like(x) if db is None else db
    if dA is not None:
        rhs = rhs - dA @ x
    return np.linalg.solve(A, rhs)


def _solve_vjp(args, x, xbar):
    """bbar = A^{-T} xbar, Abar = -bbar x^T."""
    A, b = args
    bbar = np.linalg.solve(A.T, xbar)
    Abar = -np.outer(bbar, x) if x.ndim == 1 else -bbar @ x.T
    return Abar, bbar


_solve = primitive(_solve_value, jvp=_solve_jvp, vjp=_solve_vjp, name="linalg.solve")


def solve(a, b):
    if np.ndim(a) != 2 or np.ndim(b) not in (1, 2):
        raise UnsupportedOperation("adsim: np.linalg.solve on stacked matrices is not supported; "
                                   "loop over the stack")
    return _solve(a, b)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector 2-, 1- and inf-norms and the Frobenius norm."""
    if ord in (None, 2, "fro") and (axis is None or np.ndim(axis) == 0 or ord in (None, "fro")):
        if ord == 2 and axis is None and x.ndim == 2:
            raise UnsupportedOperation("adsim: the matrix 2-norm (largest singular value) is not "
                                       "recorded; use ord='fro' or compute it from an eigen-solver")
        return np.sqrt(reduce_sum(x * x, axis=axis, keepdims=keepdims))
    if ord == 1 and (axis is not None or x.ndim == 1):
        return reduce_sum(absolute(x), axis=axis, keepdims=keepdims)
    if ord in (np.inf, "inf") and (axis is not None or x.ndim == 1):
        return amax(absolute(x), axis=axis, keepdims=keepdims)
    raise UnsupportedOperation(f"adsim: np.linalg.norm with ord={ord!r}, axis={axis!r} is not "
                               f"supported; compute it from sums and abs")
