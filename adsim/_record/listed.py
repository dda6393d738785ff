"""NumPy functions and ufuncs called with active values inside lists or tuples only.

NumPy's dispatch looks at an argument, not into it: ``np.sum([a, b])``,
``np.exp([a, b])``, ``np.mean(np.split(x, 3))`` or ``np.stack([[a, b], [c,
d]])`` have no active argument of their own, so NumPy would convert the
lists itself (a ufunc before any override is asked) and never ask adsim.
While a recording runs with interposition on, adsim/_record/interpose.py
binds each name under which ``numpy``, ``numpy.linalg``, ``numpy.fft``,
``numpy.lib.stride_tricks`` and ``numpy.emath`` hold a function NumPy
dispatches by ``__array_function__``, or a ufunc, and those of
``scipy.special``'s ufuncs, to a stand-in made here.
A call whose arguments hold active values inside a list or tuple has its
array_like arguments made active arrays (adsim/_np/array_likes.py, the
same tables the dispatch uses) and then goes to NumPy's function or ufunc,
whose dispatch now sends it to adsim (and to adsim's error for a function
without a rule); any other call goes to NumPy's object as it is. This holds
whoever calls (NumPy, SciPy, the user), except in a recording entered with
interposition off, where NumPy's own object runs.

A ufunc cannot be subclassed, so its stand-in (:class:`ListedUfunc`) is a
proxy: its methods (``reduce``, ``accumulate``, ``reduceat``, ``outer``,
``at``) convert as its call does, every other attribute is the ufunc's,
it compares and hashes equal to the ufunc, and ``isinstance(np.exp,
np.ufunc)`` holds (its ``__class__``); only ``type(np.exp)`` and ``np.exp
is <the ufunc>`` tell them apart while a recording runs (adsim compares
ufuncs with ``==`` for that reason).

Names the creation wrappers of adsim/_record/creation.py own
(``zeros_like``, ...) keep those.
"""
import importlib

import numpy as np
import numpy.fft
import numpy.lib.stride_tricks
import numpy.linalg
import scipy.special

from .._np import array_likes
from .creation import routed
from .stand_ins import named_like

_MODULES = (np, np.linalg, np.fft, np.lib.stride_tricks, np.emath)
_UFUNC_MODULES = (scipy.special,)       # their ufuncs only: SciPy's Python functions are hooked


def _listed_wrapper(original):
    def call(*args, **kwargs):
        if not kwargs:
            for v in args:      # the common call, without lists, as directly as can be
                if type(v) is list or type(v) is tuple:
                    break
            else:
                return original(*args)
        if array_likes.holds_listed_active(args, kwargs) and routed():
            # with the lists made active arrays, NumPy's own dispatch sends
            # the call to adsim (Active.__array_function__)
            args, kwargs = array_likes.arguments(original, args, kwargs)
        return original(*args, **kwargs)
    return named_like(call, original)


class _UfuncDoc:
    """``__doc__``: the ufunc's on a stand-in, the class's own on the class."""

    def __init__(self, own):
        self.own = own

    def __get__(self, obj, cls=None):
        return self.own if obj is None else obj.__wrapped__.__doc__


class ListedUfunc:
    """A ufunc's stand-in (the module docstring): its calls and methods take
    lists and tuples holding active values as the arrays NumPy would make of
    them. Its ``__module__`` stays adsim's (the class's, which code asking
    ``type(obj).__module__`` reads)."""

    __slots__ = ("__wrapped__",)
    __doc__ = _UfuncDoc(__doc__)

    def __init__(self, uf):
        object.__setattr__(self, "__wrapped__", uf)

    @property
    def __class__(self):            # isinstance(np.exp, np.ufunc), as outside a recording
        return np.ufunc

    def _call(self, method, inputs, kwargs):
        target = self.__wrapped__ if method == "__call__" else getattr(self.__wrapped__, method)
        if array_likes.holds_listed_active(inputs, {}) and routed():
            # with the lists made active arrays, NumPy's own dispatch sends
            # the call to adsim (Active.__array_ufunc__)
            inputs = array_likes.ufunc_inputs(method, inputs)
        return target(*inputs, **kwargs)

    def __call__(self, *inputs, **kwargs):
        for v in inputs:                # the common call, without lists, as directly as can be
            if type(v) is list or type(v) is tuple:
                return self._call("__call__", inputs, kwargs)
        return self.__wrapped__(*inputs, **kwargs)

    def reduce(self, *inputs, **kwargs):
        return self._call("reduce", inputs, kwargs)

    def accumulate(self, *inputs, **kwargs):
        return self._call("accumulate", inputs, kwargs)

    def reduceat(self, *inputs, **kwargs):
        return self._call("reduceat", inputs, kwargs)

    def outer(self, *inputs, **kwargs):
        return self._call("outer", inputs, kwargs)

    def at(self, *inputs, **kwargs):
        return self._call("at", inputs, kwargs)

    def __getattr__(self, name):
        return getattr(self.__wrapped__, name)

    def __setattr__(self, name, value):
        setattr(self.__wrapped__, name, value)

    def __eq__(self, other):
        return self.__wrapped__ is getattr(other, "__wrapped__", other)

    def __hash__(self):
        return hash(self.__wrapped__)

    def __repr__(self):
        return repr(self.__wrapped__)

    def __reduce__(self):               # loaded as the library's ufunc of that name
        from .callers import ufunc_name
        module, _, name = ufunc_name(self.__wrapped__).rpartition(".")
        return library_ufunc, (module or "numpy", name)


def _frompyfunc_wrapper(original):
    """``np.frompyfunc`` whose ufunc, made while a recording runs, is a
    stand-in too: ``np.frompyfunc(f, 1, 1)([a, b])``."""
    def frompyfunc(*args, **kwargs):
        made = original(*args, **kwargs)
        return ListedUfunc(made) if routed() else made
    return named_like(frompyfunc, original)


def library_ufunc(module, name):
    """The object ``module`` (numpy, scipy.special) binds to ``name``: how a
    stand-in pickles."""
    return getattr(importlib.import_module(module), name)


def _dispatched(obj):
    """A function NumPy dispatches by ``__array_function__`` (it keeps its
    undispatched implementation as ``_implementation``)."""
    return callable(obj) and hasattr(obj, "_implementation")


def wrappers(taken):
    """{(module, name): stand-in} for the functions NumPy dispatches and the
    ufuncs, by the names NumPy's public modules give them now, except the
    ``numpy`` names in ``taken``."""
    made, proxies = {}, {}
    for module in _MODULES + _UFUNC_MODULES:
        for name, obj in list(vars(module).items()):
            if module is np and name in taken:
                continue
            if isinstance(obj, np.ufunc):       # one stand-in a ufunc: np.abs is np.absolute
                made[module, name] = proxies.setdefault(obj, ListedUfunc(obj))
            elif _dispatched(obj) and module in _MODULES:
                made[module, name] = _listed_wrapper(obj)
    made[np, "frompyfunc"] = _frompyfunc_wrapper(np.frompyfunc)
    return made
