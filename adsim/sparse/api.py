"""Public entry points for sparse derivatives (re-exported by :mod:`adsim`).

Patterns::

    jacobian_sparsity(F, x)        # boolean CSR, output size x x.size
    hessian_sparsity(f, x)         # boolean symmetric CSR, x.size x x.size

Values::

    plan = sparse_jacobian_plan(F, x)   # record, detect, color once
    J = plan(x_new)                     # one compressed sweep -> CSR
    H = sparse_hessian(f, x)            # star/acyclic coloring + one second-order sweep

See docs/sparse.md.
"""
import functools

import numpy as np

from adsim import _validate
from adsim._record.recording import record
from adsim.errors import InvalidArgnums, InvalidArgument, InvalidArgumentValue
from adsim.sparse import plan as _plan
from adsim.sparse.arguments import Argument
from adsim.sparse.orderings import ORDERINGS
from adsim.sparse.pattern import hessian_pattern, jacobian_pattern
from adsim.sparse.plan import SparseHessianPlan, SparseJacobianPlan

__all__ = ["SparseHessianPlan", "SparseJacobianPlan", "hessian_pattern", "hessian_sparsity",
           "jacobian_pattern", "jacobian_sparsity", "sparse_hessian", "sparse_hessian_plan",
           "sparse_jacobian", "sparse_jacobian_plan"]


def _argnum(f, args, argnum):
    """``argnum`` as a position among ``args`` (Python indexing: negative
    values count from the end)."""
    if not isinstance(argnum, (int, np.integer)) or isinstance(argnum, (bool, np.bool_)):
        several = isinstance(argnum, (tuple, list))
        raise InvalidArgnums(
            f"adsim: argnum must be one int (the derivative is taken with respect to one "
            f"argument), got {_validate.given(argnum)}" +
            (". For several arrays, pass them in one container argument (a tuple or dict): "
             "the result comes back in blocks nested the same way" if several else ""))
    return _validate.resolve_argnums((int(argnum),), len(args), _validate.name_of(f),
                                     "argnum")[0]


def _function(f, entry):
    what = "scalar f(*args)" if "hessian" in entry else "F(*args) returning one array"
    _validate.function(f, entry, "f" if "hessian" in entry else "F",
                       f"adsim.{entry}({'f' if 'hessian' in entry else 'F'}, x) with {what}")


def _orders(orders, entry):
    """``orders`` checked: a tuple or list of ordering names (or explicit
    permutations, checked when used)."""
    if isinstance(orders, (tuple, list)) and orders:
        for item in orders:
            if isinstance(item, str) and item not in ORDERINGS:
                raise InvalidArgumentValue(f"adsim.{entry}: orders holds the unknown ordering "
                                           f"{item!r}; the orderings are {ORDERINGS}")
        return orders
    raise InvalidArgument(f"adsim.{entry}: orders must be a non-empty tuple or list of ordering "
                          f"names from {ORDERINGS} (or explicit permutations), got "
                          f"{_validate.given(orders)}" +
                          (f"; for one ordering write orders=({orders!r},)"
                           if isinstance(orders, str) else ""))


def _with_argnum(entry):
    """``entry`` (a function of ``(f, *args, argnum=...)``) with ``f``
    checked and ``argnum`` resolved first."""
    @functools.wraps(entry)
    def checked(f, *args, argnum=0, **options):
        _function(f, entry.__name__)
        if "orders" in options:
            _orders(options["orders"], entry.__name__)
        return entry(f, *args, argnum=_argnum(f, args, argnum), **options)
    return checked


sparse_jacobian_plan = _with_argnum(_plan.sparse_jacobian_plan)
sparse_jacobian = _with_argnum(_plan.sparse_jacobian)
sparse_hessian_plan = _with_argnum(_plan.sparse_hessian_plan)
sparse_hessian = _with_argnum(_plan.sparse_hessian)


def jacobian_sparsity(F, *args, argnum=0):
    """Sparsity pattern of the Jacobian of ``F(*args)`` w.r.t. ``args[argnum]``.

    ``F`` is recorded once at ``args``; the pattern holds for the control path
    taken there (see :func:`adsim.sparse.pattern.jacobian_pattern`).

    Returns
    -------
    scipy.sparse.csr_array
        Boolean, (output size) x (``args[argnum].size``); for an argument
        that is a container of arrays (a dict, list or tuple), the container
        holding one such pattern per array, as :func:`sparse_jacobian` gives
        its values.

    Examples
    --------
    >>> import numpy as np
    >>> jacobian_sparsity(lambda x: np.diff(x) ** 2, np.ones(4)).toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    _function(F, "jacobian_sparsity")
    tape = record(F, *args)
    argument = Argument(tape, _argnum(F, args, argnum))
    pattern = jacobian_pattern(tape, argument.inputs)
    return argument.cutter(pattern)(pattern)


def hessian_sparsity(f, *args, argnum=0):
    """Sparsity pattern of the Hessian of scalar ``f(*args)`` w.r.t.
    ``args[argnum]``, by nonlinear-interaction propagation.

    Returns
    -------
    scipy.sparse.csr_array
        Boolean, symmetric, ``args[argnum].size`` squared; for an argument
        that is a container of arrays, blocks ``P[i][j]`` nested in its
        structure, as :func:`sparse_hessian` gives its values.

    Examples
    --------
    >>> import numpy as np
    >>> hessian_sparsity(lambda x: np.sum(x[:-1] * x[1:]), np.ones(3)).toarray().astype(int)
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]])
    """
    _function(f, "hessian_sparsity")
    tape = record(f, *args)
    argument = Argument(tape, _argnum(f, args, argnum))
    pattern = hessian_pattern(tape, argument.inputs)
    return argument.cutter(pattern, square=True)(pattern)
