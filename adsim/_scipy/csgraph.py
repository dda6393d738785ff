"""``scipy.sparse.csgraph.laplacian`` of a dense graph of active weights,
called unchanged (see hooks.py; in the table of scipy.sparse): SciPy's
definition written with recorded operations. The degrees are the column
sums (row sums with ``use_out_degree``) of the graph without its diagonal;
L = D - W, or with ``normed`` I - D^-1/2 W D^-1/2 (an isolated node's
degree taken as 1 and its diagonal entry 0), as SciPy computes them.
"""
import numpy as np
from scipy.sparse import issparse

from .._active import Active
from ..errors import UnsupportedOperation

_NAME = "scipy.sparse.csgraph.laplacian"


def laplacian(csgraph, normed=False, return_diag=False, use_out_degree=False, *, copy=True,
              form="array", dtype=None, symmetrized=False):
    if issparse(csgraph) or not isinstance(csgraph, Active):
        raise UnsupportedOperation(
            f"adsim: {_NAME} is differentiated for a dense array of active weights; pass the "
            f"graph as one (W.toarray(), or np.array of the list)")
    if form != "array" or not copy or dtype not in (None, float, np.float64):
        raise UnsupportedOperation(
            f"adsim: {_NAME} of active weights takes form='array', copy=True and the float64 "
            f"dtype (given form={form!r}, copy={copy!r}, dtype={dtype!r}); apply the "
            f"Laplacian as a matrix product")
    if csgraph.ndim != 2 or csgraph.shape[0] != csgraph.shape[1]:
        raise ValueError("csgraph must be a square matrix or array")
    m = csgraph + 0.0
    if symmetrized:
        m = m + m.T
    diagonal = np.eye(m.shape[0], dtype=bool)
    m = np.where(diagonal, 0.0, m)
    w = m.sum(axis=1 if use_out_degree else 0)
    if normed:
        isolated = w == 0
        w = np.where(isolated, 1.0, np.sqrt(np.where(isolated, 1.0, w)))
        lap = np.where(diagonal, np.where(isolated, 0.0, 1.0), -(m / w / w[:, np.newaxis]))
    else:
        lap = np.where(diagonal, w, -m)
    return (lap, w) if return_diag else lap


HOOKS = {("scipy.sparse.csgraph._laplacian", "laplacian"): laplacian}
