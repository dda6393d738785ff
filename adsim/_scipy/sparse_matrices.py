"""The operator methods of ``scipy.sparse`` matrices and of
``LinearOperator`` taken over while recording (adsim/_scipy/hooks.py): a
call with an active argument becomes one recorded sparse product
(adsim/_np/sparse_products.py) or, for a scale by an active scalar, an
active sparse matrix (adsim/_scipy/sparse_active.py).

SciPy's ``_spbase.__matmul__`` turns its operand into a plain array
(``np.asanyarray``) before Python could ask the operand's
``__rmatmul__``: the operator protocol cannot reach adsim for ``L @ u``,
so these methods are hooked like SciPy's functions.
"""
import numpy as np

from .._active import Active
from .._np.sparse_products import is_sparse_operand, matrix_times, product, unpacked
from .._record.creation import current_tape
from ..errors import UnsupportedOperation
from . import csgraph, sparse_active, sparse_formats
from .sparse_constant import scipy_when_constant


def _matmul(self, other):
    return product(self, other)


def _rmatmul(self, other):
    return product(other, self)


def _dot(self, other):
    """``A.dot(x)``: a scalar scales (an active scale makes an active sparse
    matrix), an array is a matrix product."""
    if np.ndim(other) == 0:
        return _scaled(self, other, "dot")
    return product(self, other)


def _spmatrix_mul(self, other):
    """``A * x`` of an ``spmatrix``: the matrix product (a scalar scales)."""
    if np.ndim(other) == 0:
        return _scaled(self, other, "*")
    return product(self, other)


def _spmatrix_rmul(self, other):
    if np.ndim(other) == 0:
        return _scaled(self, other, "*")
    return product(other, self)


def _scaled(matrix, scale, name):
    return sparse_active.scaled(matrix, scale, name)


def _elementwise(name):
    """``A * X`` of an ``sparray`` and ``A.multiply(X)``: elementwise, a sparse
    matrix of active values on A's pattern (a scalar scales)."""
    def multiply(self, other):
        if np.ndim(other) == 0:
            return _scaled(self, other, name)
        return sparse_active.as_active_sparse(self, name).multiply(other)
    multiply.__name__ = multiply.__qualname__ = f"elementwise_{name.strip('_')}"
    multiply.routes_also = sparse_active.involves_active_matrix
    return multiply


def _operator_matvec(self, x):
    """``op.matvec(x)``/``op.matmat(x)``/``op @ x`` of a LinearOperator: one
    sparse product for an operator of a sparse matrix; any other operator's
    own ``_matvec``/``_matmat`` (the user's code, recorded) on the active x."""
    if is_sparse_operand(self):
        return product(self, x)
    if np.ndim(x) == 0:
        raise UnsupportedOperation("adsim: a LinearOperator times an active scalar is not "
                                   "supported; scale the vector instead")
    return _own_rule(self, x, "_matvec", "_matmat")


def _operator_rmatvec(self, x):
    if is_sparse_operand(self):
        matrix, transposed = unpacked(self)
        return matrix_times(matrix, x, not transposed)
    return _own_rule(self, x, "_rmatvec", "_rmatmat")


def _own_rule(op, x, vector_rule, matrix_rule):
    """SciPy's LinearOperator.matvec/matmat without their conversion of the
    product to a plain array: the operator's own rule on x, shaped as SciPy
    shapes it."""
    inner = op.shape[1] if vector_rule == "_matvec" else op.shape[0]
    if np.ndim(x) not in (1, 2) or np.shape(x)[0] != inner:
        raise ValueError(f"adsim: a LinearOperator of shape {op.shape} times an array of "
                         f"shape {np.shape(x)}: dimension mismatch")
    if np.ndim(x) == 1 or np.shape(x)[1] == 1:
        y = _array(getattr(op, vector_rule)(x.reshape(-1)))
        return y.reshape(-1) if np.ndim(x) == 1 else y.reshape(-1, 1)
    return _array(getattr(op, matrix_rule)(x))


def _array(y):
    return y if isinstance(y, Active) else np.asarray(y)


def _python_operator_times_plain(args, kwargs):
    """A LinearOperator of Python code times a plain vector or matrix while
    recording: its rule may read active values (``matvec=lambda v: k * (L @
    v)``), whose product SciPy's conversion to an array would drop."""
    return current_tape() is not None and len(args) == 2 and type(args[1]) is np.ndarray \
        and not is_sparse_operand(args[0])


_operator_matvec.routes_also = _operator_rmatvec.routes_also = _python_operator_times_plain


def _operator_dtype(self):
    """``LinearOperator._init_dtype`` while recording: SciPy finds the dtype
    of an operator made without one by converting a product to an array,
    which for an operator of Python code reading active values
    (``LinearOperator(shape, matvec=lambda v: k * (L @ v))``) would drop
    the product's derivative. The dtype is the product's; the operator's
    products stay recorded."""
    if self.dtype is None:
        try:
            y = self._matvec(np.zeros(self.shape[-1], dtype=np.int8))
        except OverflowError:                   # as SciPy: a Python int too large for int8
            self.dtype = np.dtype(int)
        else:
            self.dtype = np.dtype(y.dtype) if isinstance(y, Active) else np.asarray(y).dtype


_operator_dtype.routes_when = lambda args, kwargs: current_tape() is not None


for _rule in (_matmul, _rmatmul, _dot, _spmatrix_mul, _spmatrix_rmul):
    _rule.routes_also = sparse_active.involves_active_matrix     # S @ A, A of active values

_RULES = {
    **sparse_active.HOOKS,
    **csgraph.HOOKS,
    **sparse_formats.HOOKS,
    ("scipy.sparse._base", "_spbase.__matmul__"): _matmul,
    ("scipy.sparse._base", "_spbase.__rmatmul__"): _rmatmul,
    ("scipy.sparse._base", "_spbase.dot"): _dot,
    ("scipy.sparse._coo", "_coo_base.dot"): _dot,
    ("scipy.sparse._matrix", "spmatrix.__mul__"): _spmatrix_mul,
    ("scipy.sparse._matrix", "spmatrix.__rmul__"): _spmatrix_rmul,
    ("scipy.sparse._base", "_spbase.__mul__"): _elementwise("__mul__"),
    ("scipy.sparse._base", "_spbase.__rmul__"): _elementwise("__rmul__"),
    ("scipy.sparse._base", "_spbase.multiply"): _elementwise("multiply"),
}

# a call without derivatives makes SciPy's own matrix (adsim/_scipy/sparse_constant.py)
HOOKS = {(module, path): scipy_when_constant(rule, module, path)
         for (module, path), rule in _RULES.items()}

# LinearOperators made by aslinearoperator of a sparse matrix (in the table of
# scipy.sparse.linalg, adsim/_scipy/sparse_solve.py, whose module defines them)
OPERATOR_HOOKS = {
    ("scipy.sparse.linalg._interface", "LinearOperator.matvec"): _operator_matvec,
    ("scipy.sparse.linalg._interface", "LinearOperator.matmat"): _operator_matvec,
    ("scipy.sparse.linalg._interface", "LinearOperator.dot"): _operator_matvec,
    ("scipy.sparse.linalg._interface", "LinearOperator.__matmul__"): _operator_matvec,
    ("scipy.sparse.linalg._interface", "LinearOperator.__mul__"): _operator_matvec,
    ("scipy.sparse.linalg._interface", "LinearOperator.rmatvec"): _operator_rmatvec,
    ("scipy.sparse.linalg._interface", "LinearOperator._init_dtype"): _operator_dtype,
}


def covers(obj):
    """No module-level objects of scipy.sparse take rules of their own (the
    explicit namespace asks)."""
    return False
