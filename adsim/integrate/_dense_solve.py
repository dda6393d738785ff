"""Dense Newton solves of the implicit methods: LAPACK's LU (``getrf``,
``getrs``, complex for Radau's complex system, as SciPy's ``lu_factor``
and ``lu_solve``), the adjoints' transposed solves with the same factors.

The Jacobian is an n-by-n array. The forms, the kept factorisations and
the rules are those of every Newton solve
(:mod:`adsim.integrate._newton_solve`): a step factors each of its
matrices once, and its Newton iterations, error estimate and their tangent
and adjoint rules share the factors, where a solve by ``np.linalg.solve``
would factor again at each call.
"""
import weakref

import numpy as np
from scipy.linalg import lapack

from ..primitives import BuiltinFamily
from ._newton_solve import FORM_NAMES, SINGULAR, NewtonSolves

__all__ = ["DenseLinear"]


class DenseLinear(NewtonSolves):
    """The Newton solves of one problem of ``n`` equations with a dense Jacobian."""

    label = "dense"

    def __init__(self, n):
        self._identity = np.eye(n)
        super().__init__(n)

    def adopt(self, prim, form, transposed):
        return _SOLVES.adopt(prim, n=self.n, form=form, transposed=transposed)

    # ---- the storage --------------------------------------------------------------
    def matrix(self, data):
        """J from its values (an n-by-n array, or its flat values in an op)."""
        return np.reshape(data, (self.n, self.n))

    def identity(self):
        return self._identity

    @staticmethod
    def factorised(A, is_complex):
        """LAPACK's LU of ``A``, or :data:`SINGULAR` for a matrix that is
        singular or not finite."""
        if not np.all(np.isfinite(A)):
            return SINGULAR
        getrf = lapack.zgetrf if is_complex else lapack.dgetrf
        lu, piv, info = getrf(A)
        if info != 0:                  # info > 0: an exactly zero pivot
            return SINGULAR
        return lu, piv

    @staticmethod
    def solve_factored(lu, b, transposed):
        is_complex = np.iscomplexobj(b)
        getrs = lapack.zgetrs if is_complex else lapack.dgetrs
        x, _ = getrs(lu[0], lu[1], b, trans=(2 if is_complex else 1) if transposed else 0)
        return x

    @staticmethod
    def times(J, v, transposed):
        """``J v`` (``J^T v``); recorded when the values are active."""
        return (J.T if transposed else J) @ v

    @staticmethod
    def pair(u, v):
        """``u_i v_j``: the adjoint of J in ``u^T J v``."""
        return np.outer(u, v)


# ---- tape files -----------------------------------------------------------------------

_LOADED = weakref.WeakValueDictionary()     # n -> DenseLinear of the tapes loaded


def _solve_of(n, form, transposed):
    """A dense Newton solve of a tape file; the solves of one size share one
    DenseLinear, and so its factorisations, as in the recording."""
    if type(n) is not int or n < 1 or form not in FORM_NAMES or type(transposed) is not bool:
        raise ValueError(f"a dense Newton solve of n={n!r}, form {form!r}, "
                         f"transposed={transposed!r}")
    linear = _LOADED.get(n)
    if linear is None:
        linear = _LOADED.setdefault(n, DenseLinear(n))
    return linear._solves[FORM_NAMES[form], transposed]


_SOLVES = BuiltinFamily("solve_ivp.dense_newton_solve", 1, _solve_of)
