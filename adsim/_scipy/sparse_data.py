"""``L.data = L.data * p``: active values assigned to the ``data`` of a
SciPy sparse matrix.

SciPy keeps ``data`` as a plain instance attribute, so the assignment
reaches no code of SciPy's or adsim's, and the matrix would carry an active
array into SciPy's compiled routines at its next use. While SciPy's
functions are hooked (adsim/_record/interpose.py), ``_data_matrix`` (the
base of CSR, CSC, COO, BSR and DIA matrices and arrays) has a ``data``
property that keeps plain values where SciPy does (the instance's
``__dict__``) and makes a matrix given active values the active sparse
matrix of its pattern (adsim/_scipy/sparse_active.py's ``adopt``), as
``A.data *= p`` does (adsim/_record/plain_targets.py).
"""
import numpy as np

from .._active import Active
from .._np.complex import ComplexActive
from ..errors import UnsupportedOperation


def _get(self):
    try:
        return vars(self)["data"]
    except KeyError:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'data'") \
            from None


def _set(self, values):
    if isinstance(values, (Active, ComplexActive)):
        from .._record.creation import routed
        if routed():
            _adopt(self, values)
            return
    vars(self)["data"] = values


def _delete(self):
    try:
        del vars(self)["data"]
    except KeyError:
        raise AttributeError("data") from None


def _adopt(matrix, values):
    from .sparse_active import adopt
    stored = vars(matrix).get("data")
    if isinstance(values, ComplexActive):
        raise UnsupportedOperation(
            f"adsim: `A.data = v` with complex active values v: sparse matrices of active "
            f"values hold real values only (a {matrix.format} matrix)")
    if stored is None or values.shape != np.shape(stored):
        raise ValueError(
            f"adsim: `A.data = v` gives the {matrix.format} matrix A (shape {matrix.shape}) "
            f"active values of shape {values.shape} for its stored entries of shape "
            f"{np.shape(stored) if stored is not None else None}: v must have one value per "
            f"stored entry, in A's storage order, as A.data has")
    adopt(matrix, values)


def _data_matrix():
    from scipy.sparse import _data
    return _data._data_matrix


_PROPERTY = property(_get, _set, _delete, "The stored values (SciPy's attribute; "
                     "active values make the matrix an active sparse matrix)")


def install():
    """Put the property on SciPy's class (hooks in place)."""
    _data_matrix().data = _PROPERTY


def remove():
    cls = _data_matrix()
    if vars(cls).get("data") is _PROPERTY:
        del cls.data
