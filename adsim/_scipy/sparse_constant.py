"""Calls of the ``scipy.sparse`` rules whose active values all lack a
derivative run SciPy's own code on their plain values.

A model builds its operators inside the recorded function from constants:
``np.ones(n)`` there is an active array whose slot has no derivative, so
``diags``, ``kron``, ``bmat``, ``spdiags``, ``dia_matrix``, ``A[i, j] = v``
or ``L * c`` would take adsim's rule and make an active sparse matrix that
``splu``, ``expm_multiply`` or an ``issparse`` check do not take. Every rule
of the table is wrapped once here (:func:`scipy_when_constant`): when no
argument has a derivative, the active ones are made plain under a guard (a
replay where they differ records again, as for any constant made in the
function) and SciPy's function runs, so what it returns is SciPy's own.
"""
import functools

import numpy as np
import scipy.sparse as sp

from .._active import Active
from .._np.core import tape_of
from .._np.integers import plain_if_constant
from .hooks import _resolve
from .sparse_active import ActiveSparse, ActiveSparseArray

__all__ = ["plain_arguments", "scipy_when_constant"]


def plain_arguments(arguments):
    """``arguments`` with every active array and every sparse matrix of
    active values made plain (guarded) when none has a derivative, else
    None. Lists, tuples and dicts are looked into."""
    leaves = []
    _mapped(arguments, 0, leaves.append)
    if any(_has_derivative(leaf) for leaf in leaves):
        return None                              # nothing guarded: the rule runs
    return _mapped(arguments, 0, _plain)


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


def scipy_when_constant(rule, module, path):
    """``rule`` (of SciPy's ``module.path``), except that a call whose active
    values all lack a derivative runs SciPy's function on their plain
    values. SciPy's function is looked up at the call: while recording its
    code is the trampoline, which sends a call without active values to
    SciPy's own code."""
    @functools.wraps(rule)
    def routed(*args, **kwargs):
        plain = plain_arguments((args, kwargs))
        if plain is None:
            return rule(*args, **kwargs)
        scipy_function = _resolve(module, path)
        return scipy_function(*plain[0], **plain[1])
    return routed
