"""What the implicit methods share: the Jacobian of the right-hand side and
the linear solves of their Newton iterations.

The Jacobian ``f_y`` comes from adsim (``adsim.jacobian`` of ``fun``; inside
a recording a nested derivative, recorded as one op whose derivatives are
second-order sweeps of ``fun``; Hessian-vector products through it would
need third derivatives and are refused), or from the user's ``jac`` as in
SciPy (recorded like ``fun``, so every mode works through it).
The Newton matrices ``c I - J`` are solved with ``np.linalg.solve``, whose
recorded rule solves the transposed system for the adjoint. SciPy factors a
matrix once and reuses the factors while the step size and the Jacobian
stay; here the matrix is rebuilt from the Jacobian and the step size it
was factored with (carried in the solver state), which gives the same
iteration, and each solve factors again.
"""
import numpy as np

from ..api import jacobian
from .._tape import Active
from ._rhs import real_array

__all__ = ["JacobianSource", "solve_shifted", "solve_shifted_complex", "solve_identity_minus"]


class JacobianSource:
    """``J = f_y(t, y)`` for a method: from adsim, or from SciPy's ``jac``
    option (a callable ``jac(t, y, *args)`` or a constant matrix, which is
    then never recomputed)."""

    def __init__(self, rhs, jac, n):
        self.rhs = rhs
        self.n = n
        self.constant = jac is not None and not callable(jac)
        self.user = jac if callable(jac) else None
        self.matrix = None
        if self.constant:
            self.matrix = self._checked(real_array(jac, "jac"))
        elif jac is None:
            self._adsim = jacobian(self._fun_of_y)

    def _fun_of_y(self, y, t, *args):
        return self.rhs(t, y, args)
    # named so: Hessian-vector products through the nested derivative (third
    # derivatives of fun) are refused with this name in the message
    _fun_of_y.__name__ = ("solve_ivp's fun, whose Jacobian the implicit methods compute; for "
                          "Hessian-vector products give jac= (a NumPy function of t, y, *args)")

    def __call__(self, t, y, args):
        if self.constant:
            return self.matrix
        if self.user is not None:
            return self._checked(real_array(self.user(t, y, *args), "jac(t, y)"))
        time = t if isinstance(t, Active) else np.asarray(t, dtype=float)
        return self._adsim(y, time, *args)

    def _checked(self, J):
        if tuple(J.shape) != (self.n, self.n):
            raise ValueError(f"`jac` is expected to have shape {(self.n, self.n)}, but actually "
                             f"has {tuple(J.shape)}.")
        return J


def solve_shifted(J, c, b):
    """``(c I - J)^{-1} b``."""
    return np.linalg.solve(c * np.eye(J.shape[0]) - J, b)


def solve_identity_minus(J, c, b):
    """``(I - c J)^{-1} b``."""
    return np.linalg.solve(np.eye(J.shape[0]) - c * J, b)


def solve_shifted_complex(J, alpha, beta, b_re, b_im):
    """Real and imaginary parts of ``((alpha + i beta) I - J)^{-1} (b_re + i b_im)``,
    solved as the real system of twice the size (adsim records no complex numbers)::

        [alpha I - J,  -beta I ] [x_re]   [b_re]
        [ beta I,    alpha I - J] [x_im] = [b_im]
    """
    n = J.shape[0]
    eye = np.eye(n)
    A = alpha * eye - J
    B = beta * eye
    M = np.concatenate([np.concatenate([A, -B], axis=1), np.concatenate([B, A], axis=1)])
    x = np.linalg.solve(M, np.concatenate([b_re, b_im]))
    return x[:n], x[n:]
