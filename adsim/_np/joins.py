"""Arrays from several pieces (concatenate, stack, block, append, insert,
np.array of a list) and constant arrays shaped like an active one
(zeros_like, ...)."""
import numpy as np

from .._active import Active
from . import complex as complex_
from .complex import ComplexActive
from .core import as_active, broadcast_to, constant, copy, float64_only, shape_of, tape_of
from . import layout
from .views import index_map


def sequence_function(func):
    def joined(arrays, *args, **kwargs):
        float64_only(func.__name__, kwargs.get("dtype"))   # positions would not be cast
        arrays = [piece(a) for a in arrays]
        return index_map(lambda *idx: func(idx, *args, **kwargs), arrays)
    return joined


def piece(a):
    """A piece of a joined array: active, or a plain array (a list holding
    active values, such as ``[s]``, becomes active)."""
    if isinstance(a, (list, tuple)):
        return from_pieces(a)
    return a


def holds_active(obj, depth=0):
    """Does ``obj`` (an array, or nested lists and tuples) hold active values
    (real ones, or complex ones inside the lists)?"""
    if isinstance(obj, Active):
        return True
    if isinstance(obj, (list, tuple)) and depth < 32:
        return any(isinstance(o, ComplexActive) or holds_active(o, depth + 1) for o in obj)
    return False


def from_pieces(obj):
    """np.array(obj) for nested sequences holding active values: an active
    array stacked from the pieces (plain data alone stays a plain array); a
    complex one when a piece is complex (a complex active value, or complex
    data beside active values), stacked part by part."""
    if isinstance(obj, (Active, ComplexActive)):
        return obj
    if isinstance(obj, (list, tuple)) and holds_active(obj):
        if holds_complex(obj):
            re, im = from_pieces(parts_of(obj, 0)), from_pieces(parts_of(obj, 1))
            return complex_.make(re, im, shape_of(re))
        return stack_pieces([from_pieces(o) for o in obj])
    return constant(np.asarray(obj) if isinstance(obj, (list, tuple)) else obj)


def holds_complex(obj, depth=0):
    if isinstance(obj, (list, tuple)) and depth < 32:
        return any(holds_complex(o, depth + 1) for o in obj)
    return not isinstance(obj, Active) and complex_.is_complex(obj)


def parts_of(obj, k):
    """The nest of real (k = 0) or imaginary (k = 1) parts of ``obj``'s leaves."""
    if isinstance(obj, (list, tuple)):
        return [parts_of(o, k) for o in obj]
    if isinstance(obj, ComplexActive):
        return obj.imag if k else obj.real
    if isinstance(obj, Active):
        return np.zeros(obj.shape) if k else obj
    part = np.imag(obj) if k else np.real(obj)
    return np.asarray(part, dtype=float) if np.iscomplexobj(obj) else part


def stack_pieces(pieces):
    """np.array of a list of pieces, some active: they are stacked."""
    pieces = [p if isinstance(p, Active) else constant(p) for p in pieces]
    shapes = {shape_of(p) for p in pieces}
    if len(shapes) > 1:
        raise ValueError(f"setting an array element with a sequence. The requested array has "
                         f"an inhomogeneous shape: pieces of shapes {sorted(shapes)}")
    return index_map(lambda *idx: np.stack(idx), pieces)


def _other_dtype(dtype):
    return dtype is not None and np.dtype(dtype) != np.float64


def _filled(a, value, shape, dtype=None, order="K"):
    """np.full_like(a, value, ...): NumPy's own, of the plain array laid out
    as ``a`` is, made active when float64."""
    out = np.full_like(layout.template(a), value, dtype=dtype if _other_dtype(dtype) else
                       np.float64, order=order, shape=shape)
    if _other_dtype(dtype):         # a plain array: its values do not depend on ``a``
        return out
    return layout.laid_out(as_active(tape_of(a), out), out)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return _filled(a, 0.0, shape, dtype, order)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return _filled(a, 1.0, shape, dtype, order)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    if isinstance(fill_value, Active):
        like = np.empty_like(layout.template(a), dtype=np.float64, order=order, shape=shape)
        out = layout.laid_out(copy(broadcast_to(fill_value, like.shape), "C"), like)
        return out.astype(dtype) if _other_dtype(dtype) else out
    return _filled(a, fill_value, shape, dtype, order)


def append(arr, values, axis=None):
    if axis is None:
        arr, values = _flat(arr), _flat(values)
        axis = 0
    return sequence_function(np.concatenate)([arr, values], axis=axis)


def insert(arr, obj, values, axis=None):
    """np.insert: either the array or the inserted values may be active."""
    return index_map(lambda a, v: np.insert(a, obj, v, axis=axis), [piece(arr), piece(values)])


def _flat(a):
    a = piece(a)
    return a.reshape(-1) if isinstance(a, Active) else np.ravel(constant(a))


def block(arrays):
    """np.block: the nested lists of pieces laid out by NumPy's own block,
    applied to their element positions."""
    leaves = []

    def template(obj):
        if isinstance(obj, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                            "np.block does not allow implicit conversion from tuple to ndarray.")
        if isinstance(obj, list):
            return [template(o) for o in obj]
        leaves.append(obj)
        return None

    layout = template(arrays)

    def rebuilt(shape, pieces):
        return [rebuilt(o, pieces) for o in shape] if isinstance(shape, list) else next(pieces)
    return index_map(lambda *idx: np.block(rebuilt(layout, iter(idx))), leaves)
