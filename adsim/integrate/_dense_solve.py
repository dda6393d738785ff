"""Dense Newton solves of the implicit methods: LAPACK's LU (``getrf``,
``getrs``, complex for Radau's complex system, as SciPy's ``lu_factor``
and ``lu_solve``), the adjoints' transposed solves with the same factors.

The Jacobian is an n-by-n array. The forms and the rules are those of every
Newton solve (:mod:`adsim.integrate._newton_solve`). The factorisations and
solves are compiled (``adsim/_ops/dense_newton.pxi``): a step factors each
of its matrices once, and its Newton iterations, error estimate and their
tangent and adjoint rules share the factors; a replay computes each solve's
value and adjoint in C, without calling Python or holding the GIL (each
thread keeps its own factorisations).
"""
import weakref

import numpy as np

from .._callback import DenseFactors, DenseNewtonSolve
from .._tapecache.purity import ResultNeutral
from ..primitives import BuiltinFamily
from ._newton_solve import FORM_NAMES, KEPT_FACTORS, NewtonSolves

__all__ = ["DenseLinear"]


class _Factors(DenseFactors, ResultNeutral):
    """The kept factorisations, per thread: a cache, whose values are
    functions of their keys (fingerprints of recorded steps count it as a
    constant)."""

    __slots__ = ()


class _CompiledSolve(DenseNewtonSolve, ResultNeutral):
    """A solve's compiled rules: the primitive's own rules, in C."""

    __slots__ = ()


class DenseLinear(NewtonSolves):
    """The Newton solves of one problem of ``n`` equations with a dense Jacobian."""

    label = "dense"

    def __init__(self, n):
        self._identity = np.eye(n)
        self._lu = _Factors(n, KEPT_FACTORS)
        super().__init__(n)

    def adopt(self, prim, form, transposed):
        prim.compiled = _CompiledSolve(self._lu, form, transposed)
        return _SOLVES.adopt(prim, n=self.n, form=form, transposed=transposed)

    # ---- the storage --------------------------------------------------------------
    def matrix(self, data):
        """J from its values (an n-by-n array, or its flat values in an op)."""
        return np.reshape(data, (self.n, self.n))

    def identity(self):
        return self._identity

    def _solve(self, form, data, scalars, b, transposed):
        return self._lu.solution(form.name, transposed, data, scalars, b)

    def kept_factorisations(self):
        """How many factorisations the calling thread keeps now (each
        thread keeps its own)."""
        return self._lu.held

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
