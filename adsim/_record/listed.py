"""NumPy functions called with active values inside lists or tuples only.

NumPy's dispatch looks at an argument, not into it: ``np.sum([a, b])``,
``np.mean(np.split(x, 3))`` or ``np.stack([[a, b], [c, d]])`` have no active
argument of their own, so NumPy would convert the lists itself and never
ask adsim. While a recording runs with interposition on,
adsim/_record/interpose.py binds each name under which ``numpy``,
``numpy.linalg``, ``numpy.fft`` and ``numpy.lib.stride_tricks`` hold a
function adsim dispatches (``FUNCTIONS`` of adsim/_numpy_api.py, ufuncs
aside) to a wrapper made here. A call whose arguments hold active values
inside a list or tuple goes to adsim's dispatch as NumPy's
``__array_function__`` protocol would send it (``array_function`` of
adsim/_numpy_api.py, which makes the array_like arguments active arrays by
adsim/_np/array_likes.py before the rule sees them); any other call goes
to NumPy's function as it is. This holds whoever calls (NumPy, SciPy, the
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

from .. import _numpy_api
from .._active import Active
from .._np import array_likes
from .creation import routed

_MODULES = (np, np.linalg, np.fft, np.lib.stride_tricks)


def _listed_wrapper(original):
    def call(*args, **kwargs):
        if array_likes.holds_listed_active(args, kwargs) and routed():
            return _numpy_api.array_function(original, _types(args, kwargs), args, kwargs)
        return original(*args, **kwargs)
    call.__wrapped__ = original
    call.__name__ = original.__name__
    call.__qualname__ = getattr(original, "__qualname__", original.__name__)
    call.__module__ = getattr(original, "__module__", None)
    call.__doc__ = original.__doc__
    return call


def _types(args, kwargs):
    """The types NumPy's dispatch would name: those of the arguments that
    implement ``__array_function__``, and Active (inside the lists)."""
    return tuple({Active, *(type(v) for v in (*args, *kwargs.values())
                            if hasattr(type(v), "__array_function__"))})


def _dispatched(obj):
    try:
        return obj in _numpy_api.FUNCTIONS and not isinstance(obj, np.ufunc)
    except TypeError:                           # unhashable
        return False


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
