"""Plain arrays that NumPy asks to hold an active result: the ``out=`` of a
ufunc or function is a plain ndarray and an operand is active.

Time-loop codes start from a plain state and update it in place
(``state += dt * rhs(state, p)``). NumPy's ``ndarray.__iadd__`` calls
``np.add(state, rhs, out=(state,))``, which reaches adsim's dispatch with a
plain ``out``. Three outcomes, in this order:

1. **Constant operands.** When no active operand depends differentiably on
   the inputs (``vel -= np.mean(mass * vel, 0) / np.mean(mass)`` with
   ``mass = 20 * np.ones(n)`` made in the function), the operands are taken
   as plain values under a guard (adsim/_np/integers.py ``frozen``: a replay
   where they differ raises BranchChanged) and NumPy writes into ``out``
   itself, as it would without adsim; every holder of ``out`` sees it.
2. **A new active array takes the plain array's place.** Python rebinds the
   target of ``a += b`` to what ``__iadd__`` returns, so when nothing but
   that target holds the plain array, returning a new active array with the
   result is indistinguishable from writing into it. This needs all of:
   the call is an augmented assignment (the caller's instruction is an
   in-place ``BINARY_OP``; the explicit ``np.add(a, b, out=a)`` is not: its
   result is often discarded); ``out``'s memory is its own (it owns it, or
   views a temporary nothing else holds, as ``np.linspace`` returns; not
   ``x[1:] += b``, which writes into ``x``); it is float64 and writeable;
   and its reference count is exactly that of an unaliased target (the target's own
   reference, the interpreter's stack and the dispatch in between): any
   other name, attribute, list, closure or view (views hold their base) adds
   a reference. The unaliased count is measured once per process by the
   same call on arrays known to be unaliased, a local and an attribute,
   taking the smaller (``_unaliased_count``), with tracing off, so
   NumPy's and Python's own references along the way are counted as they
   are, whatever their versions. An error in the count only ever goes one
   way: a reference adsim did not expect makes a refusal, never a rebinding.
   Views of the target that other local names hold, and nothing else
   (``interior = u[1:-1]``; each adds one reference, its base), are
   allowed when the result is stored into a local name (``STORE_FAST``):
   those names are rebound to the same views of the active result
   (adsim/_record/local_views.py); for a target that views a temporary of
   its size (``np.linspace``'s result) such views hold the temporary, which
   then counts them.
3. Otherwise the refusal, saying which of the above did not hold and what
   to write instead; except for ``name[key] op= b`` on a plain local array
   (``_stored_back``), whose result Python stores back into ``name`` at
   once: the result is returned without writing into NumPy's ``name[key]``,
   and adsim/_record/plain_stores.py answers the store.
"""
import ast
import dis
import opcode
import sys
import threading

import numpy as np

from .callers import expression_at, forget_locals
from .local_views import rebind, same_view, view_count, views_in
from .._active import Active
from .._np import layout
from .._np.core import as_active, broadcast_to, copy, tape_of
from .._np.integers import frozen
from ..errors import UnsupportedOperation

_BINARY_OP = opcode.opmap.get("BINARY_OP")
_AUGMENTED = {i: symbol for i, (_, symbol) in enumerate(getattr(opcode, "_nb_ops", ()))
              if symbol.endswith("=") and symbol not in ("==", "!=", "<=", ">=")}
_DISPATCH = (("adsim._numpy_api", "_into_out"), ("adsim._numpy_api", "ufunc"))
_state = threading.local()


class _Measured(Exception):
    """Carries the reference count of the calibration's target out of the
    dispatch (raised before anything is recorded)."""

    def __init__(self, count):
        super().__init__(count)
        self.count = count


def written_into_plain(out, actives, compute, plain_call, operator_form):
    """The value of a NumPy call given the plain ndarray ``out`` as out= and
    the active arguments ``actives``: ``plain_call(values)`` makes NumPy's
    call with each active argument replaced by ``values[id(a)]`` (its plain
    value) and returns its result; ``compute()`` records the result without
    out=; ``operator_form``: the call has the form of an in-place operator's
    (``uf(out, b, out=(out,))``). Called by adsim/_numpy_api.py
    ``_into_out`` only (the frames between the caller and here are counted)."""
    count = sys.getrefcount(out)
    if getattr(_state, "calibrating", False):
        raise _Measured(count)
    if not actives:
        return plain_call({})
    tape = tape_of(*actives)
    if not any(tape.slot_is_varied(a.slot) for a in actives):
        return plain_call({id(a): frozen(a, "") for a in actives})
    symbol = _augmented_symbol(sys._getframe(1))
    if symbol is not None and not operator_form:        # `a @= b`: matmul with axes
        raise UnsupportedOperation(
            f"adsim: `{symbol}` writes an active result into a plain array (shape "
            f"{out.shape}), which cannot hold it, and only + - * / ** // % may replace it "
            f"by an active one. Write `a = a {symbol[:-1]} b`, or make `a` inside the "
            f"recorded function (np.zeros(n), or `a = np.array(a)` for a copy of a plain one)")
    views = _views_of_target(_user_frame(sys._getframe(1)), out) if symbol is not None else ()
    # a view of a view holds the owner (NumPy collapses the chain): views of
    # ``np.linspace``'s result hold its temporary base, not the result
    on_base = sum(1 for view, _, _ in views if out.base is not None and view.base is out.base)
    refusal = _refusal(out, symbol, count - (len(views) - on_base), tape, on_base)
    if refusal is not None and not _stored_back(_user_frame(sys._getframe(1)), out):
        raise refusal
    result = compute()
    if not isinstance(result, Active):
        result = as_active(tape, result)
    if result.shape != out.shape:
        if np.broadcast_shapes(result.shape, out.shape) != out.shape:
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't "
                             f"match the broadcast shape {result.shape}")
        result = broadcast_to(result, out.shape)
    if result.base is not None or any(result is a for a in actives):
        result = copy(result)
    result = layout.laid_out(result, out)
    if views:
        _rebind_views(_user_frame(sys._getframe(1)), views, result, out, symbol)
    if symbol is not None:
        _sparse_owner_made_active(_user_frame(sys._getframe(1)), out, result)
    return result


def _sparse_owner_made_active(frame, out, result):
    """``A.data *= p`` with ``A`` a SciPy sparse matrix whose ``data`` is
    ``out``: Python stores the active result as ``A.data``, where SciPy's
    compiled sparse routines would take it for a plain array; so ``A``
    becomes the active sparse matrix of its pattern with those values
    (adsim/_scipy/sparse_active.py), as SciPy's constructors given active
    values make, and every holder of ``A`` sees the new values."""
    if frame is None:
        return
    following = [i for i in dis.get_instructions(frame.f_code) if i.offset > frame.f_lasti][:2]
    if [i.opname for i in following] != ["SWAP", "STORE_ATTR"] or following[1].argval != "data":
        return
    node = expression_at(frame.f_code, following[1].offset)
    try:
        owner = _named_object(frame, node.value) if isinstance(node, ast.Attribute) else None
    finally:
        forget_locals(frame)
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None or not sparse.issparse(owner) or getattr(owner, "data", None) is not out:
        return
    from .._scipy.sparse_active import adopt
    adopt(owner, result)


def _named_object(frame, node):
    """The object a name or a chain of attributes of a name (``A``,
    ``self.A``) is bound to in ``frame``, or None."""
    if isinstance(node, ast.Name):
        for namespace in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in namespace:
                return namespace[node.id]
        return None
    if isinstance(node, ast.Attribute):
        owner = _named_object(frame, node.value)
        return None if owner is None else getattr(owner, node.attr, None)
    return None


def _views_of_target(frame, out):
    """The views of ``out`` that other local names of ``frame`` hold, when
    the augmented assignment ``frame`` executes stores its result into a
    local name bound to ``out`` (``u += ...``) and those names alone hold
    them (adsim/_record/local_views.py): Python rebinds ``u`` to the active
    result, and adsim rebinds the views' names to the same views of it.
    () when there are none or they cannot be rebound (the count then
    refuses)."""
    if frame is None:
        return ()
    following = [i for i in dis.get_instructions(frame.f_code) if i.offset > frame.f_lasti][:1]
    if not following or following[0].opname != "STORE_FAST":
        return ()
    name = following[0].argval
    try:
        if frame.f_locals.get(name) is not out:
            return ()
        views = views_in(frame, name, out)
    finally:
        forget_locals(frame)
    if not views or any(refs != view_count(len(names)) for _, names, refs in views):
        return ()
    return views


def _rebind_views(frame, views, result, out, symbol):
    made = {}
    for view, names, _ in views:
        active_view = same_view(result, out, view)
        if active_view is None:
            raise UnsupportedOperation(
                f"adsim: `{symbol}` writes an active result into a plain array (shape "
                f"{out.shape}) of which `{names[0]}` is a view that adsim cannot repeat on an "
                f"active array (another dtype). Write `a = a {symbol[:-1]} ...` (a new array), "
                f"or make the array inside the recorded function (np.zeros(n), or "
                f"`a = np.array(a)` for a copy of a plain one)")
        made.update(dict.fromkeys(names, active_view))
    try:
        for name, active_view in made.items():
            rebind(frame, name, active_view)
    finally:
        forget_locals(frame)


def _user_frame(frame):
    """The frame that called the ufunc, seen from ``_into_out``'s frame
    (None if the frames between are not the dispatch's)."""
    for module, function in _DISPATCH:
        if frame is None or frame.f_globals.get("__name__") != module or \
                frame.f_code.co_name != function:
            return None
        frame = frame.f_back
    return frame


def _augmented_symbol(frame):
    """``+=`` when the frame that called the ufunc, seen from
    ``_into_out``'s frame, is executing an augmented assignment; else None."""
    frame = _user_frame(frame)
    if frame is None or _BINARY_OP is None:
        return None
    code, at = frame.f_code.co_code, frame.f_lasti
    if not 0 <= at < len(code) - 1 or code[at] != _BINARY_OP:
        return None
    return _AUGMENTED.get(code[at + 1])


_STORED_BACK = ["SWAP", "SWAP", "STORE_SUBSCR"]


def _stored_back(frame, out):
    """Whether the augmented assignment ``frame`` executes is
    ``name[key] op= b`` with ``name`` a plain float64 local array and ``out``
    NumPy's ``name[key]`` (a view of its memory, or the copy an index
    array gives): Python then stores the result back by ``STORE_SUBSCR``,
    which adsim/_record/plain_stores.py answers (the name bound to an active
    copy holding the store, or a refusal), so ``out`` itself need not hold
    the result and may be replaced whoever shares its memory."""
    if frame is None:
        return False
    code = frame.f_code
    following = [i for i in dis.get_instructions(code) if i.offset > frame.f_lasti][:3]
    if [i.opname for i in following] != _STORED_BACK:
        return False
    node = expression_at(code, following[-1].offset)
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name) or \
            node.value.id not in code.co_varnames or node.value.id in code.co_cellvars:
        return False
    array = frame.f_locals.get(node.value.id)
    forget_locals(frame)
    if type(array) is not np.ndarray or array.dtype != np.float64:
        return False
    if out.base is None:                # the copy of an index array or mask
        return out.flags.owndata
    return np.shares_memory(out, array)


OTHER_DTYPES_STAY_PLAIN = (
    "adsim records float64 values only, so an array of another dtype stays plain, also one "
    "made inside the recorded function (np.zeros(n, dtype=np.float32)): make it float64 "
    "(leave dtype out, or dtype=float)")


def _refusal(out, symbol, count, tape, on_base=0):
    """None when a new active array may take the place of ``out``, the
    target of the augmented assignment ``symbol`` (``on_base``: the local
    views of it that hold its base); else the error to raise."""
    if symbol is None:
        return UnsupportedOperation(
            "adsim: a NumPy call with out= given a plain array writes an active result into "
            "it, which a plain array cannot hold; assign the result instead (`a = np.add(a, "
            "b)`), or make `a` inside the recorded function (np.zeros(n), np.array(a)), "
            "where arrays take active values")
    fix = (f"Write `a = a {symbol[:-1]} ...` (a new array), or make the array inside the "
           f"recorded function (np.zeros(n), or `a = np.array(a)` for a copy of a plain one), "
           f"where arrays take active values in place")
    if out.dtype != np.float64:         # the cause, whether or not out is a view
        return UnsupportedOperation(
            f"adsim: `{symbol}` writes an active result into a plain array of dtype "
            f"{out.dtype} (shape {out.shape}); {OTHER_DTYPES_STAY_PLAIN}, or write "
            f"`a = a {symbol[:-1]} ...` (a new array)")
    if not _memory_held_by(out, on_base):
        if out.base is not None:        # `a = a + ...` would no longer write into the base
            fix = ("Make the array it views take active values where it is made (np.zeros(n) or "
                   "np.linspace(0, 1, n) spelled so in the recorded function, or `u = np.array("
                   "...)` around a plain array, e.g. `u = np.array(u0)`), so that its views are "
                   "active; `a = a + ...` would leave the array it views unchanged")
        return UnsupportedOperation(
            f"adsim: `{symbol}` writes an active result into a plain array (shape {out.shape}) "
            f"whose memory other arrays share (it is a view such as x[1:-1] or x.T, or other "
            f"views of its memory exist): a plain array cannot hold active values, and the "
            f"array it shares memory with cannot be replaced. " + fix)
    if not out.flags.writeable:
        return ValueError("output array is read-only")
    if count != _unaliased_count(tape):
        return UnsupportedOperation(
            f"adsim: `{symbol}` writes an active result into a plain array (shape "
            f"{out.shape}) that is also reachable in another way (another name, an "
            f"attribute, a list or dict, a closure, or a view of it): a plain array cannot "
            f"hold active values, and replacing it by an active one would leave the other "
            f"holders with the old values. " + fix)
    return None


def _memory_held_by(out, views=0):
    """Is ``out``'s memory reachable through ``out`` alone (and ``views``
    local views of it, which adsim rebinds)? It owns it, or its base (NumPy
    collapses chains of views to the owner: ``np.linspace`` returns a view
    of a temporary) is an ndarray that owns it and that only ``out`` (and
    those views) hold."""
    base = out.base
    if base is None:
        return out.flags.owndata
    # references to base: out's, this frame's local, getrefcount's argument
    return type(base) is np.ndarray and base.base is None and base.flags.owndata and \
        sys.getrefcount(base) == 3 + views


_UNALIASED = []


def _unaliased_count(tape):
    """The reference count ``written_into_plain`` sees for the target of an
    augmented assignment that nothing else holds (measured on first use, with
    a constant of the recording ``tape`` as operand; None if the measurement
    failed, which makes every case a refusal)."""
    if not _UNALIASED:
        _UNALIASED.append(_measure(as_active(tape, 0.0)))
    return _UNALIASED[0]


def _measure(operand):
    """The count, measured with this thread's tracing off (a debugger
    reading the frame's locals would hold one more reference)."""
    trace, profile = sys.gettrace(), sys.getprofile()
    sys.settrace(None)
    sys.setprofile(None)
    _state.calibrating = True
    try:
        return _count_in_place_target(operand)
    finally:
        _state.calibrating = False
        sys.settrace(trace)
        sys.setprofile(profile)


class _Box:
    __slots__ = ("target",)


def _count_in_place_target(operand):
    """The smaller of the counts of two unaliased targets, a local name and
    an attribute (the same on the interpreters adsim supports; a reference
    that some tool added to one of them only raises that one)."""
    counts = []
    for update in (_update_local, _update_attribute):
        try:
            update(operand)
        except _Measured as measured:
            counts.append(measured.count)
        except Exception:               # noqa: BLE001 (no measurement: every case refuses)
            return None
    return min(counts) if len(counts) == 2 else None


def _update_local(operand):
    target = np.zeros(())
    target += operand                   # the same call as the user's, on an unaliased target


def _update_attribute(operand):
    box = _Box()
    box.target = np.zeros(())
    box.target += operand
