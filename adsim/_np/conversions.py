"""NumPy's conversions of an active array: ``np.array``, ``np.asarray``,
``np.asanyarray``, ``np.ascontiguousarray``, ``np.asfortranarray``,
``np.require`` and ``ndarray.astype`` (to float64, and to integers).

Each returns the array itself, a view of its storage, or a copy: NumPy
decides, asked the same conversion of the array's positions (see
adsim/_np/layout.py), so ``np.ascontiguousarray(A[:, 1])`` is a copy (a
write into it does not reach ``A``) and ``np.array(A, copy=False)`` is ``A``
itself; NumPy's own errors (``copy=False`` where a copy is needed) come
with them.
"""
import functools
import inspect

import numpy as np

from .integers import rounded
from .recorded_data import from_active
from .views import derived


@functools.cache
def _signature(func):
    return inspect.signature(func)


def keywords(func, obj, args, kwargs):
    """The arguments of the call ``func(obj, *args, **kwargs)`` after the
    array, all by name (Python's own error for arguments ``func`` does not
    take)."""
    bound = _signature(func).bind(obj, *args, **kwargs).arguments
    del bound[next(iter(bound))]
    return bound


def refuse_copy():
    """NumPy's own error for ``copy=False`` where a copy is needed (a list
    always needs one)."""
    np.asarray([0.0], copy=False)


def is_float64(dtype):
    return dtype is None or np.dtype(dtype) == np.float64


def convert(func, a, kwargs):
    """``func(a, **kwargs)`` for the conversion ``func`` of the active array
    ``a``, whose ``dtype`` argument (if any) is float64: ``a`` itself, a
    view of its storage, or a copy laid out as NumPy's. A 0-d root stands
    for a NumPy scalar (what indexing and reductions return), as in the
    in-place operators, so it converts as a scalar: to a new array."""
    positions = a._positions()
    scalar = a.ndim == 0 and a.base is None
    result = func(positions[()] if scalar else positions, **kwargs)
    out = a if result is positions else derived(a, result)
    if _identity_depends_on_layout(func, a, kwargs):
        a._mark_layout_sensitive()
        out._mark_layout_sensitive()
    return out


_ORDERING = frozenset({np.ascontiguousarray, np.asfortranarray, np.require})


def _identity_depends_on_layout(func, a, kwargs):
    """Whether the conversion may return ``a`` itself (or a view) for one
    memory layout of the arrays it came from and a copy for another: a
    conversion to an order that is allowed not to copy, of an array of two
    or more axes in a root of two or more (a write to either array then
    reads the layout: adsim/_active.pyx mark_written)."""
    if a.ndim < 2 or len(a._root().shape) < 2 or kwargs.get("copy", func is np.array):
        return False
    return func in _ORDERING or kwargs.get("order") in ("C", "F", "A")


def converted(func, a, kwargs, fresh=False):
    """``func(a, **kwargs)``. ``fresh``: ``a`` was just made from a list, so
    only ``order``, ``ndmin`` and the like still apply (no second copy), and
    ``copy=False`` fails as NumPy's does for a list."""
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    if fresh:
        if kwargs.get("copy") is False:
            refuse_copy()
        if "copy" in kwargs or func.__name__ == "array":
            kwargs["copy"] = None
    if is_float64(dtype):
        return convert(func, a, kwargs)
    if kwargs.get("copy") is False:
        refuse_copy()                           # another dtype is always a copy
    return convert(func, a, kwargs).astype(dtype)


def astype_float(a, order="K", copy=True):
    """``a.astype(float64, order=..., copy=...)``: ``a`` itself when no copy
    is asked for and ``a`` is laid out as ``order`` asks, else a copy."""
    return convert(lambda p, **kw: p.astype(np.intp, **kw), a, {"order": order, "copy": copy})


def as_integers(x, dtype=np.int64):
    """``x.astype(int)``: int64 data are recorded (integer data, see
    recorded_arrays); other integer types, and values outside the exact
    range of floats now, are a truncation under a guard."""
    if np.dtype(dtype) == np.int64:
        recorded = from_active(x)
        if recorded is not None:
            return recorded
    return rounded(x, "trunc").astype(dtype)
