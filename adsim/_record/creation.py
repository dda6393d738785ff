"""Arrays created inside a recorded function: ``np.array([...])`` of active
pieces, and ``np.zeros``/``np.empty``/... that receive active values later.

NumPy's override protocols do not reach array creation (``np.array``,
``np.zeros``, ...) nor item assignment into a plain array, so the line every
ODE right-hand side has, ``return np.array([a * x, b * y])``, and the
workspace pattern ``dy = np.zeros(n); dy[0] = ...`` need a mechanism of
their own. This module makes wrappers of the creation functions below;
adsim/_record/interpose.py puts them in the ``numpy`` namespace while any thread
records with interposition on. In a thread that is not recording, in a
recording entered with interposition off, when called from library code
(NumPy, SciPy, adsim itself), or inside a user rule of a primitive, a
wrapper calls the original at once. Called from the recorded function's own
code, on a thread recording with interposition on:

- ``np.array``/``np.asarray``/``np.asanyarray``/``np.ascontiguousarray``/
  ``np.asfortranarray``/``np.require`` of (nested) sequences holding active
  values build an active array (a stack of the pieces); of an active array
  they return it, a view of it or a copy exactly where NumPy does
  (adsim/_np/conversions.py). ``np.fromiter`` of active scalars stacks them.
  ``np.array`` and ``np.fromiter`` of plain float data make a new array, so
  they return an active array of constants that active values can be
  written into (``y0 = np.array([1.0, 0.0]); y0[1] = p``); the others of
  plain data are NumPy's own (they may return their argument itself, which
  must stay the same object).
- ``np.arange`` with an active endpoint or step counts its values under a
  guard and makes them from the endpoints.
- ``np.linspace``/``np.logspace``/``np.geomspace`` of plain endpoints, and
  ``np.arange`` of plain float data, return an active array of constants
  as ``np.zeros`` does: a grid updated in place (``u += ...``, through
  named views ``inner = u[1:-1]``); with active endpoints, adsim's rule.
- ``np.zeros``/``np.ones``/``np.empty``/``np.full`` and their ``_like``
  forms, ``np.eye`` and ``np.identity``, with a float dtype, return an active
  array of constants, so active values can be written into it, laid out in
  memory as NumPy's (``order="F"``); ``np.empty`` is zero-filled.
- ``np.r_``/``np.c_`` with active items (adsim/_np/index_tricks.py):
  adsim's rule, whoever calls them, since NumPy's would fail on those
  items; otherwise NumPy's own. (The functions adsim dispatches, given
  active values inside lists, are adsim/_record/listed.py's.)

Only direct calls are affected: the calling line must spell the function's
name (``np.zeros(n)``, ``numpy.zeros(n)``, ``zeros(n)`` after ``from numpy
import zeros`` in a module imported before the recording, whose global name
adsim/_record/interpose.py rebinds, or inside the recording). Compiled code
that calls ``np.empty`` from inside another function (a random generator,
say) leaves no Python frame of its own, so the call is checked against the
source of the nearest Python frame: its current call must name the wrapped
function, or NumPy's original runs. Limits: calls through another name (``z = np.zeros;
z(n)``, ``from numpy import array as arr``, a function passed as an
argument) reach NumPy's own function, and ``bypassed_creation`` gives the
error that names the cause when active values reach one; code without
source gives plain arrays; integer and boolean dtypes stay plain. A complex
dtype (``np.zeros(n, complex)``) gives a complex active array of constants
(adsim/_np/complex.py), into which complex active values can be written.
"""
import ast
import itertools
import sys
import threading

import numpy as np

from .callers import called_expression, forget_locals
from .._np import array_likes, composed, conversions, core, joins, layout
from .._np.index_tricks import Concatenator
from .._active import Active
from .._np import complex as complex_
from .._np.complex import ComplexActive
from ..errors import UnsupportedOperation

_LIBRARIES = ("numpy", "scipy", "adsim")
# library modules written in NumPy on their arguments whose creation calls are
# taken as user code's while the calling function holds active values
# (numpy.polynomial: as_series's np.array(c, ndmin=1), polyder's np.empty
# filled with active coefficients); on plain data they stay NumPy's
_AS_USER_CODE = ("numpy.polynomial.",)
_NUMPY_ARRAY = np.array
_state = threading.local()


def _stack():
    """This thread's recordings, innermost last: (tape, routed) each, where
    ``routed`` says whether calls of the user's code reach adsim through
    the functions adsim/_record/interpose.py changed (the recording's interposition
    setting); (None, False) inside a user rule of a primitive."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def current_tape():
    """The innermost tape this thread records into (None: not recording, or
    running a user rule of a primitive)."""
    stack = getattr(_state, "stack", None)
    return stack[-1][0] if stack else None


def routed():
    """Whether a call on this thread goes to adsim's rules through a changed
    NumPy or SciPy function: False inside a recording entered with
    interposition off (the original runs, as if nothing were changed), True
    in a thread that is not recording (active arguments still need a rule)."""
    stack = getattr(_state, "stack", None)
    return stack[-1][1] if stack else True


def interposition_hint():
    """The sentence errors about plain arrays add inside a recording entered
    with interposition off ("" elsewhere)."""
    stack = getattr(_state, "stack", None)
    if not stack or stack[-1][0] is None or stack[-1][1]:
        return ""
    return (" (Interposition is off in this recording (adsim.interposition(False), "
            "adsim.set_interposition(False) or ADSIM_INTERPOSE=0), so np.zeros(n) and "
            "np.array([...]) in it make plain arrays: use np.zeros_like(x, shape=(n,)) and "
            "np.stack([...]) there, or record with interposition on.)")


class recording:
    """``with recording(tape, routed):`` the creation functions of this
    thread's user code make arrays of ``tape`` (when ``routed``: the
    recording's interposition setting)."""

    __slots__ = ("entry",)

    def __init__(self, tape, routed):
        self.entry = (tape, routed)

    def __enter__(self):
        _stack().append(self.entry)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False


class suspended:
    """``with suspended():`` user code runs on plain arrays (primitive rules)."""

    def __enter__(self):
        _stack().append((None, False))
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False


def _user_tape(name, converts=False):
    """The tape for a creation call ``name(...)`` made directly by user code
    on a recording thread (or by a function of a module of
    :data:`_AS_USER_CODE` that ``converts`` active values or holds some),
    else None."""
    stack = getattr(_state, "stack", None)
    if not stack:
        return None
    tape, routed_here = stack[-1]
    if tape is None or not routed_here:
        return None
    frame = sys._getframe(2)
    caller = frame.f_globals.get("__name__", "")
    library = caller.split(".", 1)[0] in _LIBRARIES and not (
        caller.startswith(_AS_USER_CODE) and (converts or _holds_active(frame)))
    if library or _called_name(frame) != name:
        return None
    return tape


def _holds_active(frame):
    """Does the library function running in ``frame`` hold active values?"""
    try:
        return any(isinstance(v, (Active, ComplexActive)) or joins.holds_active(v)
                   for v in frame.f_locals.values())
    finally:
        forget_locals(frame)


def _called_name(frame):
    """The name of the function called by the call ``frame`` is executing,
    as its source spells it (``np.zeros(...)`` -> "zeros")."""
    func = called_expression(frame)
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def bypassed_creation(shape):
    """The error message for an active value (of ``shape``) that NumPy is
    converting to a plain array inside a call of one of the creation
    functions above made by user code through a name adsim did not rebind
    (a local alias, an argument, an attribute, a module imported during the
    recording), so NumPy's own function runs. None when the innermost frame
    outside adsim is not user code making such a call, and in a recording
    without interposition (interposition_hint says what to do there)."""
    if not routed():
        return None                 # interposition_hint() says what to do there
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".", 1)[0] == "adsim":
        frame = frame.f_back
    if frame is None or frame.f_globals.get("__name__", "").split(".", 1)[0] in _LIBRARIES:
        return None
    node = called_expression(frame)
    called = _bound_object(node, frame) if node is not None else None
    original = getattr(called, "__wrapped__", called)
    if not any(original is o for o in _ORIGINALS):
        return None
    spelled = ast.unparse(node)
    name = original.__name__
    return (f"adsim: `{spelled}(...)` called NumPy's np.{name} with an active value (shape "
            f"{shape}) inside it, and NumPy turns it into a plain number, which would drop its "
            f"derivative. adsim records np.{name} called through the numpy module "
            f"(`np.{name}(...)`) and through `{name}` imported from numpy in a module imported "
            f"before the recording started, not through another name: `{spelled}` here is "
            f"NumPy's function bound in a way adsim does not see (a variable or argument "
            f"holding it, an attribute, an alias such as `from numpy import {name} as ...`, or "
            f"a module imported while recording). Call np.{name}(...) here, or use "
            f"np.stack([...]) for a list of active values")


def _bound_object(node, frame):
    """The object the expression ``node`` (a name or a dotted name) is bound
    to in ``frame`` (its locals read too: for error messages only, since
    reading them makes the frame hold its locals), or None."""
    if isinstance(node, ast.Name):
        for namespace in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in namespace:
                return namespace[node.id]
        return None
    if isinstance(node, ast.Attribute):         # a module's or an instance's own attribute:
        attrs = getattr(_bound_object(node.value, frame), "__dict__", None)    # no code runs
        return attrs.get(node.attr) if isinstance(attrs, dict) else None
    return None


def _float_dtype(dtype):
    return dtype is None or np.dtype(dtype) == np.float64


def _array_wrapper(original):
    """np.array and the conversions after it (asarray, ascontiguousarray,
    require, ...) of active arrays and of lists holding active values."""
    def array(obj, *args, **kwargs):
        pieces = joins.holds_active(obj)
        makes_new = original is _NUMPY_ARRAY
        tape = _user_tape(original.__name__, converts=bool(pieces)) \
            if pieces or makes_new else None
        if tape is None or kwargs.get("like") is not None:
            return original(obj, *args, **kwargs)
        if not pieces:              # np.array of plain data: a new array, so a workspace
            return _as_workspace(original(obj, *args, **kwargs), tape, False)
        kwargs = conversions.keywords(_with_signature(original), obj, args, kwargs)
        if isinstance(obj, Active):
            return conversions.converted(original, obj, kwargs)
        made = joins.from_pieces(obj)
        if isinstance(made, ComplexActive):        # a new complex array of the pieces
            return _complex_made(made, kwargs)
        return conversions.converted(original, made, kwargs, fresh=True)
    return _named(array, original)


def _complex_made(made, kwargs):
    """np.array of a list holding complex active values: the complex array
    itself (``dtype`` complex or None, ``ndmin``); another dtype would drop
    the imaginary parts, which the complex array refuses."""
    dtype = kwargs.get("dtype")
    if kwargs.get("copy") is False:
        conversions.refuse_copy()
    if dtype is not None and np.dtype(dtype) != np.complex128:
        made = made.astype(dtype)
    missing = kwargs.get("ndmin", 0) - made.ndim
    return made.reshape((1,) * missing + made.shape) if missing > 0 else made


def _array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """The signature NumPy 2.2-2.3 documents for np.array."""


def _asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """The signature NumPy 2.2-2.3 documents for np.asarray and np.asanyarray."""


def _contiguous(a, dtype=None, *, like=None):
    """The signature NumPy 2.2-2.3 documents for np.ascontiguousarray and
    np.asfortranarray."""


# NumPy gives its compiled conversions a signature from 2.4 on
_DOCUMENTED = {"array": _array, "asarray": _asarray, "asanyarray": _asarray,
               "ascontiguousarray": _contiguous, "asfortranarray": _contiguous}


def _with_signature(original):
    """``original``, or a stand-in with its documented signature where NumPy
    gives it none."""
    if getattr(original, "__text_signature__", "") is None:
        return _DOCUMENTED.get(original.__name__, original)
    return original


def _as_workspace(out, tape, empty, complex_too=False):
    """A float64 array just made by NumPy, as an active array of ``tape``
    laid out in memory as ``out`` is (``order="F"``); with ``complex_too``, a
    complex128 one (np.zeros(n, complex)) as a complex active array of
    constants (np.array of complex data stays NumPy's)."""
    if isinstance(out, Active) or out.dtype not in (np.float64, np.complex128):
        return out
    if out.dtype == np.complex128:
        if not complex_too:
            return out
        return complex_.workspace(np.zeros_like(out) if empty else out, tape)
    return layout.laid_out(core.as_active(tape, np.zeros_like(out) if empty else out), out)


def _filled_wrapper(original, empty=False):
    def filled(*args, **kwargs):
        tape = _user_tape(original.__name__)
        out = original(*args, **kwargs)
        return out if tape is None else _as_workspace(out, tape, empty, complex_too=True)
    return _named(filled, original)


def _full_wrapper(original):
    def full(shape, fill_value, *args, **kwargs):
        tape = _user_tape(original.__name__)
        dtype = kwargs.get("dtype", args[0] if args else None)
        if tape is not None and isinstance(fill_value, Active) and _float_dtype(dtype):
            like = original(shape, 0.0, *args, **kwargs)        # NumPy's shape and layout
            return layout.laid_out(core.copy(core.broadcast_to(fill_value, like.shape), "C"),
                                   like)
        out = original(shape, fill_value, *args, **kwargs)
        return out if tape is None else _as_workspace(out, tape, False, complex_too=True)
    return _named(full, original)


def _full_like_wrapper(original):
    """np.full_like of a plain prototype with an active fill value: the
    value broadcast into NumPy's array (its shape, dtype and layout), when
    that is float64; NumPy's own fills with ``copyto``, which a plain
    array refuses."""
    def full_like(a, fill_value, *args, **kwargs):
        tape = _user_tape(original.__name__)
        if tape is not None and isinstance(fill_value, Active) and \
                not isinstance(a, (Active, ComplexActive)):     # (an active one: joins.py)
            like = original(a, 0.0, *args, **kwargs)
            if like.dtype == np.float64:
                return layout.laid_out(core.copy(core.broadcast_to(fill_value, like.shape), "C"),
                                       like)
            raise UnsupportedOperation(
                f"adsim: np.full_like of a plain {like.dtype} array with an active fill value: "
                f"adsim fills float64 arrays only; pass dtype=float (or a float prototype), or "
                f"np.full(shape, value.astype(...)) for integer data")
        out = original(a, fill_value, *args, **kwargs)
        return out if tape is None else _as_workspace(out, tape, False, complex_too=True)
    return _named(full_like, original)


def _arange_wrapper(original):
    def arange(*args, **kwargs):
        tape = _user_tape(original.__name__)
        if tape is None:
            return original(*args, **kwargs)
        if any(isinstance(a, Active) for a in args + tuple(kwargs.values())):
            return composed.arange(*args, **kwargs)
        return _as_workspace(original(*args, **kwargs), tape, False)
    return _named(arange, original)


def _grid_wrapper(original):
    """np.linspace/np.logspace/np.geomspace: NumPy's array of plain
    endpoints, made by user code, is a new float array, so it becomes an
    active array of constants as np.zeros's does (a grid updated in place,
    its named views); active endpoints take adsim's rule through NumPy's
    dispatch, lists holding active values the conversion every dispatched
    function's wrapper makes (adsim/_record/listed.py)."""
    def grid(*args, **kwargs):
        if array_likes.holds_listed_active(args, kwargs) and routed():
            args, kwargs = array_likes.arguments(original, args, kwargs)
        tape = _user_tape(original.__name__)
        out = original(*args, **kwargs)
        if tape is None:
            return out
        if isinstance(out, tuple):              # linspace's retstep=True: (samples, step)
            return (_as_workspace(out[0], tape, False),) + out[1:]
        return _as_workspace(out, tape, False)
    return _named(grid, original)


def _fromiter_wrapper(original):
    """np.fromiter of active scalars (``(xi ** 2 for xi in x)``): the items
    are taken from the iterator and stacked, as np.array of their list."""
    def fromiter(iter, dtype, count=-1, *, like=None):
        tape = _user_tape(original.__name__)
        if tape is None or like is not None:
            return original(iter, dtype, count, like=like)
        items = list(itertools.islice(iter, count) if count >= 0 else iter)
        if not joins.holds_active(items):
            return _as_workspace(original(items, dtype, count), tape, False)
        if 0 <= count and len(items) < count:
            raise ValueError(f"iterator too short: Expected {count} but iterator had only "
                             f"{len(items)} items.")
        shaped = [np.shape(v) for v in items if np.shape(v) != ()]
        if shaped:
            raise ValueError(f"setting an array element with a sequence. (np.fromiter takes "
                             f"scalars; an item has shape {shaped[0]}: use np.array or "
                             f"np.stack of the items)")
        return conversions.converted(_NUMPY_ARRAY, joins.from_pieces(items), {"dtype": dtype},
                                     fresh=True)
    return _named(fromiter, original)


class _RoutedConcatenator(Concatenator):
    """``np.r_``/``np.c_`` with adsim's rule for active items, except in a
    recording entered with interposition off (NumPy's own there)."""

    def __getitem__(self, key):
        if not routed():
            return self.__wrapped__[key]
        return super().__getitem__(key)


def _named(wrapper, original):
    wrapper.__wrapped__ = original
    wrapper.__name__ = original.__name__
    wrapper.__doc__ = original.__doc__
    return wrapper


def _wrappers():
    """adsim's stand-ins for NumPy's creation functions, by the name each
    takes in ``numpy`` (made from the objects bound there now); installed
    and removed by adsim/_record/interpose.py."""
    return {
        "array": _array_wrapper(np.array),
        "asarray": _array_wrapper(np.asarray),
        "asanyarray": _array_wrapper(np.asanyarray),
        "ascontiguousarray": _array_wrapper(np.ascontiguousarray),
        "asfortranarray": _array_wrapper(np.asfortranarray),
        "require": _array_wrapper(np.require),
        "fromiter": _fromiter_wrapper(np.fromiter),
        "zeros": _filled_wrapper(np.zeros),
        "ones": _filled_wrapper(np.ones),
        "full": _full_wrapper(np.full),
        "empty": _filled_wrapper(np.empty, empty=True),
        "zeros_like": _filled_wrapper(np.zeros_like),
        "ones_like": _filled_wrapper(np.ones_like),
        "full_like": _full_like_wrapper(np.full_like),
        "empty_like": _filled_wrapper(np.empty_like, empty=True),
        "eye": _filled_wrapper(np.eye),
        "identity": _filled_wrapper(np.identity),
        "arange": _arange_wrapper(np.arange),
        "linspace": _grid_wrapper(np.linspace),
        "logspace": _grid_wrapper(np.logspace),
        "geomspace": _grid_wrapper(np.geomspace),
        "r_": _RoutedConcatenator(np.r_),
        "c_": _RoutedConcatenator(np.c_),
    }


# NumPy's creation functions the wrappers stand in for (made at import, while
# NumPy's own objects are in place)
_ORIGINALS = tuple(w.__wrapped__ for w in _wrappers().values() if callable(w))
