"""The interpolating B-spline's coefficients as the solve of its banded
collocation system, one recorded op: O(n) per sweep, for any number of
data points.

The spline of degree k on SciPy's knots t through the data (x_i, y_i) with
derivative conditions at the ends has coefficients c solving A c = r: the
rows of A are the B-splines' derivatives of the conditions' orders at
x[0], their values at each x_i, and the derivatives at x[-1]; r holds the
conditions' values and y. A is banded (each row has at most k + 1
nonzeros). The op is linear in r: its value is a sparse LU solve, its
tangent a solve with A, its adjoint a solve with A^T, all with the one
factorisation; second derivatives are zero.

A tape file saves the knots, degree, points and condition orders (the
family's parameters), from which the op is made again.
"""
import numpy as np
import scipy.interpolate as si
from scipy.sparse import csr_array, vstack
from scipy.sparse.linalg import splu

from .._active import Active
from ..primitives import BuiltinFamily, primitive


def _derivative_row(t, k, at, order, first):
    """The B-splines' ``order``-th derivatives at the end ``at`` (the k + 1
    B-splines from index ``first`` are the nonzero ones there)."""
    n = len(t) - k - 1
    row = np.zeros(n)
    for j in range(first, first + k + 1):
        unit = np.zeros(n)
        unit[j] = 1.0
        row[j] = si.BSpline(t, unit, k)(at, nu=order)
    return csr_array(row[None, :])


def _system(x, t, k, left, right):
    """The collocation matrix A (sparse) for points x, knots t, degree k and
    the derivative orders ``left`` at x[0] and ``right`` at x[-1]."""
    n = len(t) - k - 1
    rows = [_derivative_row(t, k, x[0], m, 0) for m in left]
    rows.append(csr_array(si.BSpline.design_matrix(x, t, k)))
    rows += [_derivative_row(t, k, x[-1], m, n - k - 1) for m in right]
    return vstack(rows, format="csc")


def _collocation_solve(x, t, k, left, right):
    """c = A^-1 r for the system of these parameters (lists, as tape files
    save them)."""
    x, t = np.asarray(x, dtype=float), np.asarray(t, dtype=float)
    if x.ndim != 1 or t.ndim != 1 or type(k) is not int or k < 0 or \
            len(t) - k - 1 != len(x) + len(left) + len(right):
        raise ValueError("a collocation system needs as many conditions as coefficients")
    factors = splu(_system(x, t, k, [int(m) for m in left], [int(m) for m in right]))

    def value(r):
        return factors.solve(np.asarray(r, dtype=float))

    def jvp(args, out, tangents):
        return factors.solve(np.asarray(tangents[0], dtype=float))

    def vjp(args, out, w):
        return (factors.solve(np.asarray(w, dtype=float), trans="T"),)
    return primitive(value, jvp=jvp, vjp=vjp, linear=True,
                     name="scipy.interpolate.make_interp_spline")


_SOLVES = BuiltinFamily("scipy.interpolate.make_interp_spline", 1, _collocation_solve)


def conditions(bc_type):
    """(left, right) lists of (order, value) for ``make_interp_spline``'s
    ``bc_type``, or None where the coefficients are not such a solve
    (periodic)."""
    if bc_type is None or isinstance(bc_type, str) and bc_type == "not-a-knot":
        return [], []
    if isinstance(bc_type, str):
        alias = {"clamped": 1, "natural": 2}.get(bc_type)
        return None if alias is None else ([(alias, 0.0)], [(alias, 0.0)])
    left, right = bc_type
    return list(left or []), list(right or [])


def coefficients(x, t, k, y0, left, right):
    """The B-spline coefficients (len(t) - k - 1, *trailing) through the
    active data y0 (n, *trailing) with the derivative conditions ``left``
    and ``right`` ((order, value) pairs; values plain or active)."""
    trailing = np.shape(y0)[1:]
    flat = np.reshape(y0, (np.shape(y0)[0], -1))
    m = flat.shape[1]

    def values(side):
        return [np.reshape(np.broadcast_to(v if isinstance(v, Active) else
                                           np.asarray(v, dtype=float), trailing), (1, m))
                for _, v in side]
    r = np.concatenate(values(left) + [flat] + values(right), axis=0)
    solve = _SOLVES(x=[float(v) for v in x], t=[float(v) for v in t], k=int(k),
                    left=[int(o) for o, _ in left], right=[int(o) for o, _ in right])
    return np.reshape(solve(r), (-1,) + trailing)
