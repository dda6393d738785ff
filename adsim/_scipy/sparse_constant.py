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

from .constant_arguments import plain_arguments
from .hooks import _resolve

__all__ = ["plain_arguments", "scipy_when_constant"]


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
