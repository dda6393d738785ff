"""Writes into an active array's storage: the check that an array may be
written (NumPy's read-only views, the immutable scalars of indexing) and
the recorded write of values at element positions of a root. Indexed
assignment (views.py) and writes at integer data (recorded_indexing.py)
both end here."""
import numpy as np

from .._active import Active, mark_written
from .._opcodes import Opcode as Op
from .core import broadcast_to, constant, copy, shape_of, size_of, strided, tape_of


def check_writeable(a):
    if a._shared_scalar:
        raise TypeError("adsim: x[k] of a 1-d array is a NumPy scalar, which does not support "
                        "item assignment (NumPy's float64 does not either); write into x, or "
                        "make a 0-d array with np.array(x[k])")
    if not a._positions().flags.writeable:
        raise ValueError("assignment destination is read-only (adsim follows NumPy: this "
                         "view, e.g. from np.diagonal or np.broadcast_to, cannot be written; "
                         "write into a copy)")


def _same_elements(value, root, target):
    """Is ``value`` a view showing exactly the elements ``target`` of ``root``?
    (``y[a:b] += x`` assigns the view back to itself: nothing to write.)"""
    return isinstance(value, Active) and value.base is root and \
        value._positions().shape == np.shape(target) and np.array_equal(value._positions(), target)


def write_positions(root, target, value):
    """root.flat[target] = value (broadcast to target's shape); the
    overwritten part is saved on the value stack when a reverse sweep needs it."""
    tape = tape_of(root, value)
    tshape = np.shape(target)
    m = size_of(tshape)
    if m == 0 or _same_elements(value, root, target):
        return
    vshape = shape_of(value)
    if size_of(vshape) not in (1, m):
        vshape = np.broadcast_shapes(vshape, tshape)
    if isinstance(value, Active):
        if value.slot == root.slot:     # the root written into itself: NumPy reads a copy
            value = copy(value)
        v = value if value.size in (1, m) else broadcast_to(value, tshape)
        vref = v.slot
    else:
        arr = constant(value)
        if arr.size not in (1, m):
            arr = np.broadcast_to(arr, tshape)
        v, vref = None, tape.const_ref(arr)
    flat = np.asarray(target).reshape(-1)
    if isinstance(value, Active) and v.size == root.size and \
            np.array_equal(flat, np.arange(root.size)):
        tape.record_op(int(Op.COPY), -2, [root.slot, vref])        # the whole root, in order
    else:
        ioff = tape.add_indices(flat, shared=True)
        tape.record_op(int(Op.SCATTER), -2, [root.slot, vref, ioff, m] +
                       strided(np.asarray(target)))
    mark_written(root)
