"""Bounds of an unconstrained solve (``least_squares``, ``curve_fit``,
``minimize_scalar``, ``fmin_l_bfgs_b``, ``fmin_tnc``, a ``minimize``
method that ignores them...) and brackets (``brentq`` and its kin,
``root_scalar``, ``minimize_scalar``) that read active values.

Where such a solve is differentiated through its first-order conditions
(adsim/_scipy/solver_calls.py) the solution lies off its bounds, so it
does not move with them, but each replay must give SciPy the bounds at
its own parameters, and check the solution against those: frozen at the
recording, a bound that has moved past the solution would go unseen (a
silent wrong result; a bracket frozen so finds a root where the
program's own bracket holds none, or another root). So each active value
in the bounds or a bracket is one more
parameter of the solution op, whose equations ignore it (its derivative
is zero, off the bounds), and the call holds a :class:`Parameter` in its
place, which :func:`substituted` fills in at each solve. A tape file
writes the call with those markers (``{"parameter": k}``,
adsim/_scipy/call_data.py).

Options that read active values (``tol=1e-8 * p[1]``, ``options={"gtol":
...}``, a bracketing solver's ``xtol``) are handled alike
(adsim/_scipy/solver_calls.py): they move where SciPy stops, so frozen at
the recording a replay would solve to another tolerance than the program
asks for at its point.
"""
import numpy as np
from scipy.optimize import Bounds

from .._active import Active

__all__ = ["MOVING", "Parameter", "markers", "parametrised", "substituted"]

MOVING = ("bounds", "a", "b", "bracket")
"""The arguments of a solve that may read active values the solution does
not move with, but SciPy must be given at each solve's own values: bounds
(the solution lies off them) and brackets (the root or minimum lies
inside them; brentq and its kin's ``a`` and ``b``, ``root_scalar``'s and
``minimize_scalar``'s ``bracket``)."""


class Parameter:
    """Stands in a call for the solution op's argument ``index``."""

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"Parameter({self.index})"


class _BoundsOf:
    """A ``Bounds`` whose limits hold :class:`Parameter` markers."""

    def __init__(self, lb, ub, keep_feasible):
        self.lb, self.ub, self.keep_feasible = lb, ub, keep_feasible


def parametrised(value, first):
    """(``value`` with each active array in it replaced by a Parameter
    numbered from ``first`` on, those active arrays in that order)."""
    leaves = []

    def walk(v):
        if isinstance(v, Active):
            leaves.append(v)
            return Parameter(first + len(leaves) - 1)
        if isinstance(v, Bounds):
            return _BoundsOf(walk(v.lb), walk(v.ub), v.keep_feasible)
        if type(v) in (list, tuple):
            return type(v)(walk(item) for item in v)
        if type(v) is dict:                  # options={"gtol": ...}
            return {k: walk(item) for k, item in v.items()}
        return v
    return walk(value), leaves


def substituted(value, values):
    """``value`` (a call's arguments, or part of them) with each Parameter
    replaced by the plain array ``values[index]``; the same object where
    it holds none."""
    if isinstance(value, Parameter):
        return np.asarray(values[value.index], dtype=float)
    if isinstance(value, _BoundsOf):
        return Bounds(substituted(value.lb, values), substituted(value.ub, values),
                      value.keep_feasible)
    if isinstance(value, dict):
        return {k: substituted(v, values) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(substituted(item, values) for item in value)
    return value


def markers(value):
    """The Parameter markers in ``value`` (decoded arguments)."""
    if isinstance(value, Parameter):
        return [value]
    if isinstance(value, _BoundsOf):
        return markers(value.lb) + markers(value.ub)
    if isinstance(value, dict):
        return [m for v in value.values() for m in markers(v)]
    if type(value) in (list, tuple):
        return [m for item in value for m in markers(item)]
    return []
