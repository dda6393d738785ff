"""A plain local array given an active value by item assignment:
``T[1:-1] = Tn[1:-1] + kappa * dt / dx**2 * (...)`` where ``T`` started
from plain values (``T = np.exp(-x**2)``, ``u = u0.copy()``).

NumPy converts the value while executing the store, with
``Active.__array__`` (slices, masks, index arrays) or ``Active.__float__``
(one element); a plain array cannot hold an active value. When nothing but the
local name holds the plain array, binding that name to an active copy of
the array with the assignment recorded is indistinguishable from the store
(the same reasoning as adsim/_record/plain_targets.py's rule 2 for ``+=``).
The conditions, all checked before anything is recorded:

- the frame converting the value is the user's function (not a module, not
  a library) executing ``STORE_SUBSCR`` whose target is spelled
  ``name[key]`` with ``name`` one of its fast locals (not a closure cell)
  and ``key`` made of constants, slices, tuples, arithmetic, comparisons
  and names holding numbers, slices or plain NumPy arrays (it is evaluated
  again, so it must have no effects);
- the array is a writeable float64 ``np.ndarray`` owning its memory (not
  a view), the value is real and has exactly the shape of ``name[key]``
  (so the value is the whole right-hand side, not an item of a list NumPy
  is converting);
- the array's reference count equals that of an unaliased local in the
  same store, measured by making the same store (same shape, same key) on
  a fresh local (``_unaliased_count``), plus one for each view of it bound
  to other fast locals of the function (``left, right = u[:-1], u[1:]``
  in a time loop), each of which is held by those names alone (its count
  measured the same way, adsim/_record/local_views.py): any other name, attribute,
  container, closure or view adds a reference, and an error in the count
  only ever makes a refusal.

Then the local is rebound (``frame.f_locals`` written back into the frame:
PyFrame_LocalsToFast before Python 3.13, the write-through proxy from 3.13
on), each name holding a view to the same view of the active copy (its
elements' positions laid out as the plain view's, so it sees this store
and later writes as NumPy's view would), and NumPy finishes the store into
the old plain array, which nothing holds any more. Otherwise the caller's
refusal stands.
"""
import ast
import opcode
import sys
import threading

import numpy as np

from .callers import current_expression, forget_locals, _is_library
from .creation import routed
from .local_views import rebind, same_view, view_count, views_in
from .plain_targets import OTHER_DTYPES_STAY_PLAIN, _memory_held_by
from .._active import Active
from .._np import layout
from .._np.core import as_active, tape_of
from .._np.views import setitem
from .._np.integers import current
from ..errors import ActiveValueLeak

_STORE_SUBSCR = opcode.opmap["STORE_SUBSCR"]
_CO_OPTIMIZED = 0x1
_KEY_NODES = (ast.Name, ast.Constant, ast.Slice, ast.Tuple, ast.UnaryOp, ast.BinOp,
              ast.Compare, ast.Load, ast.unaryop, ast.operator, ast.cmpop)
_KEY_VALUES = (int, float, bool, slice, type(None), type(Ellipsis), np.ndarray, np.generic)
_state = threading.local()


class _Measured(Exception):
    """Carries the calibration store's reference count out of NumPy."""

    def __init__(self, count):
        super().__init__(count)
        self.count = count


def stored_into_plain(value):
    """The plain value NumPy may write, when the caller's store
    ``name[key] = value`` into a plain local array was replaced by binding
    ``name`` to an active copy holding the store. None when the caller is
    not such a store (its own error or guard follows); ActiveValueLeak
    saying which condition of the module docstring failed when it is one
    that cannot be replaced (nothing was changed). Called by
    ``Active.__array__`` and ``Active.__float__`` only (compiled, so they
    add no frame): the frame above this one is the one NumPy is storing
    for."""
    calibrating = getattr(_state, "calibrating", False)
    if not calibrating and (not routed() or not isinstance(value, Active) or
                            not tape_of(value).slot_is_varied(value.slot)):
        return None                     # constants convert under a guard (the caller's)
    frame = sys._getframe(1)
    node = _store_node(frame, calibrating)
    if node is None:
        return None
    code = frame.f_code
    if not isinstance(node.value, ast.Name) or node.value.id not in code.co_varnames or \
            node.value.id in code.co_cellvars:
        raise _refusal(node, value, "its array is not a local variable of the function (it "
                       "is an attribute, an item of a container, a global or a variable of "
                       "a closure), which adsim cannot replace by an active array")
    name = node.value.id
    array = frame.f_locals.get(name)
    count = sys.getrefcount(array)
    if calibrating:
        raise _Measured(count)
    try:
        return _replaced(frame, node, name, array, count, value)
    finally:
        forget_locals(frame)


def _replaced(frame, node, name, array, count, value):
    """stored_into_plain's checks and replacement, given the target's name,
    the array it holds and its reference count."""
    if type(array) is np.ndarray and array.dtype != np.float64:
        raise _refusal(node, value, f"`{name}` is an array of dtype {array.dtype}: "
                       + OTHER_DTYPES_STAY_PLAIN)
    if type(array) is not np.ndarray or not array.flags.writeable:
        raise _refusal(node, value, f"`{name}` is a {type(array).__name__} of dtype "
                       f"{getattr(array, 'dtype', None)}; only writeable float64 NumPy "
                       f"arrays are replaced by active ones")
    if not _memory_held_by(array):
        raise _refusal(node, value, f"`{name}` shares its memory with other arrays (it is a "
                       f"view such as x[1:-1] or x.T, or views of it exist), which would "
                       f"keep the old values")
    key = _evaluated(node.slice, frame)
    if key is _REFUSED:
        raise _refusal(node, value, "its index is not made of constants, slices, arithmetic, "
                       "comparisons and names of numbers or plain arrays only, so adsim "
                       "cannot repeat it: compute the index into a variable first")
    if np.shape(array[key]) != value.shape:
        raise _refusal(node, value, f"the value's shape {value.shape} is not that of "
                       f"`{ast.unparse(node)}`, {np.shape(array[key])}: give it that shape "
                       f"(np.broadcast_to)" + (
                           "; if the value is a list of active values, NumPy converts its "
                           "items one by one: write np.array([...]) for it"
                           if value.ndim < np.ndim(array[key]) else ""))
    views = views_in(frame, name, array)
    if views is None or count != _unaliased_count(array.shape, key, value) + len(views) or \
            any(refs != view_count(len(names)) for _, names, refs in views):
        raise _refusal(node, value, f"`{name}` is also reachable in another way (another "
                       f"name, an attribute, a list or dict, a closure, or a view of it "
                       f"other than one held by local names of this function only), whose "
                       f"holders would keep the old values")
    replacement = layout.laid_out(as_active(tape_of(value), array.copy()), array)
    setitem(replacement, key, value)
    rebound = {name: replacement}
    for view, names, _ in views:
        active_view = same_view(replacement, array, view)
        if active_view is None:
            raise _refusal(node, value, f"`{names[0]}` is a view of `{name}` that adsim cannot "
                           f"repeat on an active array")
        rebound.update(dict.fromkeys(names, active_view))
    for local, new in rebound.items():
        rebind(frame, local, new)
        if frame.f_locals.get(local) is not new:        # (read back from the frame)
            raise _refusal(node, value, f"this Python did not let adsim rebind `{local}`")
    return current(value)


def _store_node(frame, calibrating):
    """The target ``a[key]`` (an ast.Subscript) of the store that the
    user's function running in ``frame`` is executing, or None."""
    module = frame.f_globals.get("__name__", "")
    code = frame.f_code
    if not calibrating and (module.split(".", 1)[0] == "adsim" or _is_library(module)):
        return None
    if not code.co_flags & _CO_OPTIMIZED or frame.f_lasti < 0 or \
            code.co_code[frame.f_lasti] != _STORE_SUBSCR:
        return None
    node = current_expression(frame)
    return node if isinstance(node, ast.Subscript) else None


def _refusal(node, value, reason):
    return ActiveValueLeak(
        f"adsim: `{ast.unparse(node)} = ...` is an assignment into a plain array of an active "
        f"value (shape {value.shape}), which a plain array cannot hold, and adsim cannot "
        f"bind the name to an active array instead: {reason}. Make an active array where "
        f"it is made (inside the recorded function np.zeros, np.empty and `a = np.array(a)` "
        f"take active values: `P = np.zeros_like(u, shape=(n,)); P[1:-1] = u`), or build "
        f"the new value without assigning into it (np.concatenate, np.pad, np.where)")


_REFUSED = object()


def _evaluated(node, frame):
    """The index ``node`` spells, evaluated in ``frame`` when it has no
    effects (its names hold numbers, slices and plain NumPy arrays, whose
    operators have none) and holds no active value; else _REFUSED."""
    if not all(isinstance(n, _KEY_NODES) for n in ast.walk(node)):
        return _REFUSED
    names = frame.f_locals
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            bound = names[n.id] if n.id in names else frame.f_globals.get(n.id, _REFUSED)
            if type(bound) not in _KEY_VALUES and not isinstance(bound, np.generic):
                return _REFUSED
    try:
        key = eval(compile(ast.Expression(node), "<index>", "eval"),   # noqa: S307 (names, constants, slices only)
                   frame.f_globals, frame.f_locals)
    except Exception:                   # noqa: BLE001 (NumPy's own store reports it)
        return _REFUSED
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(p, Active) or (isinstance(p, slice) and any(
            isinstance(b, Active) for b in (p.start, p.stop, p.step))) for p in parts):
        return _REFUSED
    return key


def _unaliased_count(shape, key, value):
    """The count ``stored_into_plain`` sees for an unaliased local array of
    ``shape`` stored into at ``key``, measured by the same store with this
    thread's tracing off; None when the measurement failed."""
    probe = as_active(tape_of(value), np.zeros(value.shape))
    trace, profile = sys.gettrace(), sys.getprofile()
    sys.settrace(None)
    sys.setprofile(None)
    _state.calibrating = True
    try:
        _calibration_store(shape, key, probe)
    except _Measured as measured:
        return measured.count
    except Exception:                   # noqa: BLE001 (no measurement: a refusal)
        return None
    finally:
        _state.calibrating = False
        sys.settrace(trace)
        sys.setprofile(profile)
    return None


def _calibration_store(shape, key, probe):
    target = np.zeros(shape)
    target[key] = probe                 # the user's store, on a local nothing else holds
