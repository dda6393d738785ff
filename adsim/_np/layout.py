"""Memory layout of active arrays, after NumPy: C order, Fortran order, or
the order of a transpose.

A root's storage (its slot) always holds its elements in C order; its
layout lives in its position array (``Active._positions``), whose values are
the C-order positions and whose strides are those NumPy's array would have.
NumPy then decides from it what is a view and what a copy (a C-order reshape
of a Fortran-order array copies), and what ``ravel(order="K")``,
``flags`` and ``strides`` show. Roots are laid out in C order unless made
otherwise: by a creation function with ``order="F"``, by a copy that keeps
the layout (``np.copy``, ``np.array``, ``astype``), by an element-moving
function whose NumPy result is laid out otherwise (``A[:, [0, 2]]`` is in
Fortran order), or by an elementwise function of such arrays (NumPy's
ufuncs keep their operands' layout).
"""
from math import prod

import numpy as np

from .._active import Active, other_layout


def laid_out(out, template):
    """``out``, a root just recorded, laid out in memory as the plain array
    ``template`` of its shape (NumPy's own result, or its positions) is.
    A dense template's strides are kept exactly; a template with gaps (a
    view into a larger temporary) gives the dense layout of the same axis
    order."""
    if not other_layout(template) or out.base is not None:     # a view has its own
        return out
    index = np.empty_like(template, dtype=np.intp)
    index[...] = np.arange(out.size, dtype=np.intp).reshape(out.shape)
    out._lay_out(index)
    return out


def template(v):
    """A plain array laid out as ``v``: its positions if active, else itself."""
    return v._positions() if isinstance(v, Active) else np.asarray(v)


def elementwise(out, *operands):
    """``out``, just recorded as an elementwise function of ``operands``
    (active or plain), laid out as NumPy lays out a ufunc's result: in the
    operands' common axis order (``order="K"``)."""
    if any(other_layout(v) for v in operands):
        laid_out(out, _ufunc_result(operands))
    return out


def plain_elementwise(values, *operands):
    """``values`` (a plain array, the outcomes of a recorded comparison, say)
    laid out as NumPy lays out a ufunc's result of ``operands``."""
    if not any(other_layout(v) for v in operands):
        return values
    out = np.empty_like(_ufunc_result(operands), dtype=values.dtype)
    out[...] = values
    return out


def _ufunc_result(operands):
    """An empty array laid out as NumPy's ufuncs lay out their result of
    ``operands`` (NumPy's iterator picks the axis order, as in its ufuncs)."""
    plain = [template(v) for v in operands]
    if len(plain) == 1:
        return plain[0]
    return np.nditer(plain + [None], order="K", flags=["refs_ok", "zerosize_ok"],
                     op_dtypes=[None] * len(plain) + [np.intp]).operands[-1]


def in_order(out, order):
    """``out``, a root just recorded, laid out in C order (``order="C"``) or
    Fortran order (``"F"``): for NumPy functions that allocate their result
    so (np.select in C order; np.round of a Fortran-order array in Fortran
    order, of any other in C order)."""
    if isinstance(out, Active) and out.base is None and (order == "F" or other_layout(out)):
        index = np.empty(out.shape, dtype=np.intp, order=order)
        index[...] = np.arange(out.size, dtype=np.intp).reshape(out.shape)
        out._lay_out(index)
    return out


def reduced(out, a, axes, keepdims):
    """``out``, just recorded as a reduction of ``a`` over ``axes``, laid
    out as NumPy lays out the reduction of ``a`` (the remaining axes in
    ``a``'s order)."""
    if other_layout(a):
        laid_out(out, np.add.reduce(a._positions(), axis=axes, keepdims=keepdims))
    return out


def numbered(shape, start, like):
    """The integers ``start, start + 1, ...`` in C order over ``shape``, laid
    out in memory as ``like`` (an active array or a plain one) is: the
    stand-in NumPy moves in place of ``like`` when we ask it where the
    elements of a joined or moved array go, so that its result is laid out
    as NumPy's own would be."""
    values = np.arange(start, start + prod(shape), dtype=np.int64).reshape(shape)
    if like is None or not other_layout(like):
        return values
    out = np.empty_like(template(like), dtype=np.int64)
    out[...] = values
    return out
