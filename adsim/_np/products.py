"""Products: matmul, dot, vdot, outer, trace, kron (stacked and N-d ones in einsum.py)."""
import numpy as np

from .._opcodes import Opcode as Op
from .._active import Active
from ..errors import UnsupportedOperation
from .core import as_active, binary, constant, new, reject_kwargs, shape_of, size_of, tape_of
from .reductions import sum
from .views import index_map, ravel


def _as_matrix_operand(tape, v):
    if isinstance(v, Active):
        return v, v.slot, v.shape
    arr = constant(v)
    return None, tape.const_ref(arr), arr.shape


def matmul(a, b, out=None):
    reject_kwargs("matmul", out=out)
    tape = tape_of(a, b)
    keep_a, ra, sa = _as_matrix_operand(tape, a)
    keep_b, rb, sb = _as_matrix_operand(tape, b)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError("adsim: matmul: input operand does not have enough dimensions")
    if len(sa) > 2 or len(sb) > 2:          # stacked products: adsim/_np/einsum.py
        raise UnsupportedOperation("adsim: internal 2-d matmul of stacked operands")
    m, k = (1, sa[0]) if len(sa) == 1 else sa
    k2, n = (sb[0], 1) if len(sb) == 1 else sb
    if k != k2:
        raise ValueError(f"adsim: matmul: shapes {sa} and {sb} are not aligned ({k} != {k2})")
    shape = (() if len(sa) == 1 else (m,)) + (() if len(sb) == 1 else (n,))
    return new(tape, Op.MATMUL, shape, [ra, rb, m, k, n])


def dot(a, b, out=None):
    if np.ndim(a) == 0 or np.ndim(b) == 0 or (isinstance(a, Active) and a.ndim == 0) \
            or (isinstance(b, Active) and b.ndim == 0):
        return binary(Op.MUL, a, b)
    return matmul(a, b, out=out)


def vdot(a, b):
    return matmul(ravel(as_active(tape_of(a, b), a)), ravel(as_active(tape_of(a, b), b)))


def outer(a, b, out=None):
    tape = tape_of(a, b)
    ka, ra, sa = _as_matrix_operand(tape, a)
    kb, rb, sb = _as_matrix_operand(tape, b)
    m, n = size_of(sa), size_of(sb)
    return new(tape, Op.MATMUL, (m, n), [ra, rb, m, 1, n])


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return sum(index_map(lambda idx: np.diagonal(idx, offset, axis1, axis2), [a]), axis=-1)


def kron(a, b):
    """Kronecker product with NumPy's N-d semantics: the operand of fewer
    dimensions gets leading axes of length 1; the result's axis k has length
    a.shape[k] * b.shape[k], the index of ``a`` varying slower. One product of
    interleaved broadcasts (a of shape (a0, 1, a1, 1, ...), b of shape
    (1, b0, 1, b1, ...)), reshaped."""
    sa, sb = shape_of(a), shape_of(b)
    ndim = max(len(sa), len(sb))
    sa, sb = (1,) * (ndim - len(sa)) + tuple(sa), (1,) * (ndim - len(sb)) + tuple(sb)
    pa = np.reshape(a, [d for n in sa for d in (n, 1)])
    pb = np.reshape(b, [d for n in sb for d in (1, n)])
    return np.reshape(pa * pb, [m * n for m, n in zip(sa, sb)])
