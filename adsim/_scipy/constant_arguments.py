"""Active values without a derivative among the arguments of a SciPy call,
made plain.

Arrays made inside the recorded function from plain data (a grid by
``np.linspace``, ``np.ones(n)``, a matrix filled from constants) are
active arrays of constants, so that active values can be written into
them later; their slots carry no derivative. Given to SciPy they stand for
the plain values they hold: adsim/_scipy/hooks.py makes them plain (under
a guard: a replay where one differs, as when it is computed from a data
argument, records again) before it chooses between adsim's rule and
SciPy's own code, so ``simpson(y, x=np.linspace(0, 1, n))`` takes x as
sample points, ``solve_ivp(..., t_eval=np.linspace(0, 1, 9))`` as output
times, and a call whose active values all lack a derivative is SciPy's own.
Lists, tuples, named tuples and dicts are looked into; sparse matrices of
active values (adsim/_scipy/sparse_active.py) are made SciPy's when their
values lack a derivative.
"""
import numpy as np
import scipy.sparse as sp

from .._active import Active
from .._np.core import tape_of
from .._np.integers import plain_if_constant
from .sparse_active import ActiveSparse, ActiveSparseArray


def plain_arguments(arguments):
    """``arguments`` with every active array and every sparse matrix of
    active values made plain (guarded) when none has a derivative, else
    None. Lists, tuples and dicts are looked into."""
    leaves = []
    _mapped(arguments, 0, leaves.append)
    if any(_has_derivative(leaf) for leaf in leaves):
        return None                              # nothing guarded: the rule runs
    return _mapped(arguments, 0, _plain)


def constants_made_plain(arguments):
    """``arguments`` with each active array and sparse matrix of active
    values that has no derivative made plain (guarded), the others as they
    are; None when there is none to make plain."""
    leaves = []
    _mapped(arguments, 0, leaves.append)
    if all(_has_derivative(leaf) for leaf in leaves):
        return None
    return _mapped(arguments, 0, lambda leaf: leaf if _has_derivative(leaf) else _plain(leaf))


def _mapped(obj, depth, leaf):
    """``obj`` with ``leaf`` applied to each active array and sparse matrix
    of active values in it."""
    if isinstance(obj, (Active, ActiveSparse)):
        return leaf(obj)
    if depth >= 8:
        return obj
    if type(obj) in (list, tuple):
        return type(obj)(_mapped(o, depth + 1, leaf) for o in obj)
    if isinstance(obj, tuple) and hasattr(obj, "_make"):        # a named tuple
        return obj._make(_mapped(o, depth + 1, leaf) for o in obj)
    if type(obj) is dict:
        return {k: _mapped(v, depth + 1, leaf) for k, v in obj.items()}
    return obj


def _has_derivative(leaf):
    values = leaf._values if isinstance(leaf, ActiveSparse) else leaf
    return isinstance(values, Active) and tape_of(values).slot_is_varied(values.slot)


def _plain(leaf):
    if isinstance(leaf, ActiveSparse):
        return _scipy_matrix(leaf)
    value = plain_if_constant(leaf)
    # a 0-d active array stands for NumPy's scalar (x[0], np.sum(x)): SciPy
    # tells scalars by np.isscalar
    return value[()] if value.ndim == 0 else value


def _scipy_matrix(matrix):
    """SciPy's matrix (or array) of the same entries, kind and format."""
    values = matrix._values
    values = plain_if_constant(values) if isinstance(values, Active) else values
    rows, cols = matrix._rows, matrix._cols
    kind = sp.coo_array if isinstance(matrix, ActiveSparseArray) else sp.coo_matrix
    return kind((np.asarray(values, dtype=float), (rows, cols)),
                shape=matrix.shape).asformat(matrix.format)
