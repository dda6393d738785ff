"""Views of a plain local array held by other local names of the same
function, and rebinding a function's locals.

When adsim replaces a plain local array by an active one (an item store,
adsim/_record/plain_stores.py, or an augmented assignment,
adsim/_record/plain_targets.py), views of it that other local names hold
(``left, right = u[:-1], u[1:]`` in a time loop) would keep the old values.
Each such view holds the array only as its base (NumPy gives a view its
owner as base), so when nothing but local names holds the views, those
names are rebound to the same views of the active array and every name
sees what NumPy's would. Reference counts decide "nothing but local names":
a count that differs from the measured one only ever makes a refusal.
"""
import ctypes
import sys

import numpy as np

from .callers import forget_locals
from .._np.views import derived


def views_in(frame, name, array):
    """[(view, its names, its reference count)] for the plain views of
    ``array`` (NumPy gives each view its owner as base) bound to fast locals
    of ``frame`` other than ``name``; None when one is bound to a closure
    cell. A view that nothing else holds keeps ``array`` for its base alone
    (one reference each): the holders of those views see the store through
    active views of the replacement (``left, right = u[:-1], u[1:]`` in a
    time loop). Counted alike by :func:`view_count`."""
    code = frame.f_code
    # ``array`` may itself view a temporary of its size (np.linspace's
    # result): views of it then hold that temporary, and lie within ``array``
    owner = array.base if array.base is not None and type(array.base) is np.ndarray and \
        array.base.nbytes == array.nbytes else array
    bound = [(n, v) for n, v in frame.f_locals.items()
             if n != name and type(v) is np.ndarray and v is not array and
             (v.base is array or v.base is owner)]
    if any(n not in code.co_varnames or n in code.co_cellvars for n, _ in bound):
        return None
    views = {id(v): v for _, v in bound}
    names = {i: [n for n, v in bound if id(v) == i] for i in views}
    del bound                           # (no other reference to a view is left here)
    return [(views[i], names[i], sys.getrefcount(views[i]) - 1) for i in names]


_VIEW_COUNTS = []


def view_count(k):
    """The count :func:`views_in` gives for a view of the target held by
    ``k`` local names and nothing else: measured once, on one view held by
    one name and one held by two, with tracing off (a count that differs
    only ever makes a refusal)."""
    if not _VIEW_COUNTS:
        trace, profile = sys.gettrace(), sys.getprofile()
        sys.settrace(None)
        sys.setprofile(None)
        try:
            one, two = _views_of_a_local()
        finally:
            sys.settrace(trace)
            sys.setprofile(profile)
        _VIEW_COUNTS.extend([one - (two - one), two - one])
    base, per_name = _VIEW_COUNTS
    return base + per_name * k


def _views_of_a_local():
    target = np.zeros(4)
    left = target[:-1]
    right = target[1:]
    also = right
    counts = {names[0]: refs for _, names, refs in views_in(sys._getframe(), "target", target)}
    forget_locals(sys._getframe())
    del left, right, also
    return counts["left"], counts.get("right", counts.get("also"))


def same_view(replacement, array, view):
    """The active view of ``replacement`` (the active copy of ``array``,
    laid out in memory as it is) made of the elements the plain ``view`` of
    ``array`` shows, in its layout; None if its positions cannot be laid
    out so."""
    positions = replacement._positions()
    if positions.strides != array.strides or positions.itemsize != array.itemsize:
        return None
    offset = view.__array_interface__["data"][0] - array.__array_interface__["data"][0]
    if offset < 0 or offset % array.itemsize or view.dtype != array.dtype or \
            not (positions.flags.c_contiguous or positions.flags.f_contiguous):
        return None
    shown = np.lib.stride_tricks.as_strided(
        positions.reshape(-1, order="A")[offset // array.itemsize:],
        shape=view.shape, strides=view.strides)
    if not np.shares_memory(shown, positions):
        return None
    made = derived(replacement, shown)
    if not view.flags.writeable:         # np.broadcast_to's views, say
        made.setflags(write=False)
    return made


def rebind(frame, name, value):
    """Bind the fast local ``name`` of the running ``frame`` to ``value``."""
    if sys.version_info >= (3, 13):
        frame.f_locals[name] = value    # PEP 667: a write-through proxy
        return
    frame.f_locals[name] = value        # the frame's snapshot dict, written back:
    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
