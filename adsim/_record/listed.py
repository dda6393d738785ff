"""NumPy functions called with active values inside lists or tuples only.

NumPy's dispatch looks at an argument, not into it: ``np.sum([a, b])``,
``np.mean(np.split(x, 3))`` or ``np.stack([[a, b], [c, d]])`` have no active
argument of their own, so NumPy would convert the lists itself and never
ask adsim. While a recording runs with interposition on,
adsim/_record/interpose.py binds each name under which ``numpy``,
``numpy.linalg``, ``numpy.fft``, ``numpy.lib.stride_tricks`` and
``numpy.emath`` hold a
function NumPy dispatches by ``__array_function__`` (ufuncs aside) to a
wrapper made here. A call whose arguments hold active values inside a list
or tuple has its array_like arguments made active arrays
(adsim/_np/array_likes.py) and then goes to NumPy's function, whose
dispatch now sends it to adsim (and to adsim's error for a function
without a rule); any other call goes to NumPy's function as it is. This holds whoever calls (NumPy, SciPy, the
user), except in a recording entered with interposition off, where NumPy's
own function runs.

Names the creation wrappers of adsim/_record/creation.py own
(``zeros_like``, ...) keep those. Ufuncs are not wrapped: a ufunc cannot
be subclassed, so no stand-in could be one (``isinstance(f, np.ufunc)``,
``np.add.reduce``, identity checks in NumPy, SciPy and users' code), and
``np.exp([a, b])`` without an active operand of its own is refused with an
error naming the ufunc (adsim/_active.pyx, adsim/_record/callers.py).
"""
import numpy as np
import numpy.fft
import numpy.lib.stride_tricks
import numpy.linalg

from .._np import array_likes
from .creation import routed
from .stand_ins import named_like

_MODULES = (np, np.linalg, np.fft, np.lib.stride_tricks, np.emath)


def _listed_wrapper(original):
    def call(*args, **kwargs):
        if array_likes.holds_listed_active(args, kwargs) and routed():
            # with the lists made active arrays, NumPy's own dispatch sends
            # the call to adsim (Active.__array_function__)
            args, kwargs = array_likes.arguments(original, args, kwargs)
        return original(*args, **kwargs)
    return named_like(call, original)


def _dispatched(obj):
    """A function NumPy dispatches by ``__array_function__`` (it keeps its
    undispatched implementation as ``_implementation``); ufuncs are not
    wrapped (see the module docstring)."""
    return callable(obj) and hasattr(obj, "_implementation") and not isinstance(obj, np.ufunc)


def wrappers(taken):
    """{(module, name): wrapper} for the functions adsim dispatches, by the
    names NumPy's public modules give them now, except the ``numpy`` names
    in ``taken``."""
    made = {}
    for module in _MODULES:
        for name, obj in list(vars(module).items()):
            if _dispatched(obj) and not (module is np and name in taken):
                made[module, name] = _listed_wrapper(obj)
    return made
