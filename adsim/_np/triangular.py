"""Triangular solves, the building block of the factorizations' rules and of
scipy.linalg's solve_triangular, cho_solve and lu_solve.

``solve(T, B, lower, trans)`` is X = T^-1 B (or T^-T B), reading only the
triangle of T (its other entries have derivative zero). With
X = T^-1 B, dX = T^-1 (dB - dT X), so Bbar = T^-T Xbar and
Tbar = -tri(Bbar X^T) (tri keeps the triangle read); with X = T^-T B the
transposes swap (M. Giles, "An extended collection of matrix derivative
results for forward and reverse mode AD", 2008, sec. 2.3.1). The rules are
themselves triangular solves, so Hessian-vector products are exact.
"""
import numpy as np
import scipy.linalg

from ..primitives import primitive


def _tri(m, lower):
    return np.tril(m) if lower else np.triu(m)


def _make(lower, trans):
    def value(T, B):
        return scipy.linalg.solve_triangular(T, B, lower=lower, trans=int(trans),
                                             check_finite=False)

    def jvp(args, X, tangents):
        T, B = args
        dT, dB = tangents
        rhs = np.zeros_like(X) if dB is None else dB
        if dT is not None:
            dT = _tri(dT, lower)
            rhs = rhs - (dT.T if trans else dT) @ X
        return solve(T, rhs, lower, trans)

    def vjp(args, X, Xbar):
        T, B = args
        Bbar = solve(T, Xbar, lower, not trans)
        Tbar = -(X @ Bbar.T) if trans else -(Bbar @ X.T)
        return _tri(Tbar, lower), Bbar

    side = "lower" if lower else "upper"
    return primitive(value, jvp=jvp, vjp=vjp,
                     name=f"triangular solve ({side}{', transposed' if trans else ''})")


_SOLVES = {(lower, trans): _make(lower, trans) for lower in (False, True)
           for trans in (False, True)}


def solve(T, B, lower, trans=False):
    """T^-1 B (T^-T B with ``trans``) for a square T read as lower or upper
    triangular, and a 1-d or 2-d right-hand side B."""
    if np.ndim(B) == 1:
        return np.reshape(solve(T, np.reshape(B, (-1, 1)), lower, trans), (-1,))
    return _SOLVES[bool(lower), bool(trans)](T, B)
