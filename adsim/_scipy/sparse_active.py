"""Sparse matrices assembled from active values (placeholder; see below)."""
from ..errors import UnsupportedOperation


def is_active_matrix(obj):
    return False


def scaled(matrix, scale, name):
    raise UnsupportedOperation(f"adsim: `{name}` of a scipy.sparse matrix and an active scalar "
                               f"is not supported yet")


def spsolve(A, b, permc_spec=None):
    raise UnsupportedOperation("adsim: spsolve with a matrix assembled from active values is "
                               "not supported yet")
