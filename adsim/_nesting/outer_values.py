"""Values a function reads from outside its arguments, as places that can be
swapped while it runs.

Code recorded on a tape of its own (a checkpointed step, the right-hand
side of ``solve_ivp``, a derivative taken inside a recording) must take the
active values it reads as inputs of that tape. Scientists pass parameters
in many ways besides arguments: a closure (``lambda t, y: -k * y``), an
object (``lambda t, y: model.rhs(t, y)``, a bound method ``model.rhs``
reading ``self.beta``, a callable object), or a module global. Each such
place is a :class:`Slot` -- a closure cell, an attribute of an object, an
entry of a module's globals -- that the caller fills with the tape's input
while the function runs and restores afterwards.

The search follows what the function can reach: its closure cells, the
globals its code names, the object a bound method is bound to, the
attributes of objects found there, and the functions found on the way (a
helper function reading a global), to a bounded depth. It is skipped
outright when no recording is in progress on this thread: then no value is
a recorded one.
"""
import dis
import functools
import types

import numpy as np

from .._record.creation import current_tape
from .._active import Active
from .._np.core import active_leaves
from .._transformed import Transformed, inner_function

__all__ = ["PlainReads", "Slot", "args_hold_recorded_objects", "object_holds",
           "object_holds_recorded_values",
           "outer_slots", "reads_recorded_values", "recording_in_progress"]

_MAX_DEPTH = 8
_MAX_ELEMENTS = 256     # longer containers are data, not a model's parts

# attribute and global values never searched: they hold no parameters of a model
_LEAF_TYPES = (types.ModuleType, type, np.ndarray, np.generic, str, bytes, int, float, complex,
               bool, type(None), range, slice)


def recording_in_progress():
    """Whether this thread records into a tape now (so that a value can be
    an active array of a recording in progress)."""
    return current_tape() is not None


class Slot:
    """A place holding a value a function reads: ``get``, ``set`` and
    ``describe`` (for messages). Two slots are the same place when their
    ``key`` is."""

    __slots__ = ("holder", "name", "kind")

    def __init__(self, kind, holder, name):
        self.kind = kind        # "cell", "attribute", "global", "partial" or "default"
        self.holder = holder
        self.name = name

    @property
    def key(self):
        return (self.kind, id(self.holder), self.name)

    def get(self):
        if self.kind == "cell":
            return self.holder.cell_contents
        if self.kind == "attribute":
            return getattr(self.holder, self.name)
        if self.kind == "partial":
            return _partial_bound(self.holder)[self.name]
        if self.kind == "default":
            return _defaults(self.holder)[self.name]
        return self.holder[self.name]

    def set(self, value):
        if self.kind == "cell":
            self.holder.cell_contents = value
        elif self.kind == "attribute":
            # past a __setattr__ that validates or a frozen dataclass: the
            # value is put back unchanged when the function returns
            object.__setattr__(self.holder, self.name, value)
        elif self.kind == "partial":
            # a partial's arguments are read-only attributes; its state is not
            func, args, keywords, namespace = self.holder.__reduce__()[2]
            args, keywords = list(args), dict(keywords or {})
            if isinstance(self.name, int):
                args[self.name] = value
            else:
                keywords[self.name] = value
            self.holder.__setstate__((func, tuple(args), keywords, namespace))
        elif self.kind == "default":
            if isinstance(self.name, int):
                defaults = list(self.holder.__defaults__)
                defaults[self.name] = value
                self.holder.__defaults__ = tuple(defaults)
            else:
                self.holder.__kwdefaults__ = {**self.holder.__kwdefaults__, self.name: value}
        else:
            self.holder[self.name] = value

    def describe(self):
        if self.kind == "cell":
            return "a value in its closure"
        if self.kind == "attribute":
            return f"attribute `{self.name}` of a {type(self.holder).__name__} object"
        if self.kind == "partial":
            return f"argument {self.name!r} bound by functools.partial"
        if self.kind == "default":
            return f"the default value of an argument of {getattr(self.holder, '__name__', '?')}"
        return f"global `{self.name}` of module {self.holder.get('__name__', '?')}"


def reads_recorded_values(f):
    """Whether ``f`` reads, from outside its arguments, an active array of a
    recording in progress or a container (dict, list, tuple) holding one."""
    if not recording_in_progress():
        return False
    return bool(outer_slots(f, _recorded_or_holding))


def object_holds_recorded_values(obj):
    """Whether ``obj``, passed as an argument, is or holds in a dict, list
    or tuple an object (a dataclass of parameters; not an array or a
    function) whose attributes hold an active array of a recording in
    progress (``args=(p,)``, ``args=([species_a, species_b],)``)."""
    return object_holds(obj, _recorded_or_holding)


def object_holds(obj, wanted):
    """Whether ``obj``, passed as an argument, is or holds in a dict, list
    or tuple an object (not an array or a function) whose attributes hold
    a value ``wanted`` accepts."""
    if not recording_in_progress() or isinstance(
            obj, _LEAF_TYPES + (Active, types.FunctionType, types.MethodType, functools.partial)):
        return False
    found = {}
    if isinstance(obj, (dict, list, tuple)):
        _search_elements(obj, wanted, found, set(), 0)
    else:
        _search_object(obj, wanted, found, set(), 0)
    return bool(found)


def args_hold_recorded_objects(args):
    """Whether a solver's ``args`` (a tuple; anything else holds none) hold
    an object whose attributes hold active values (``args=(p,)`` with ``p``
    a dataclass of parameters)."""
    return isinstance(args, tuple) and any(map(object_holds_recorded_values, args))


class PlainReads:
    """The plain numbers, strings and arrays a function reads from a closure,
    a module global or an object's attribute, as they were when the program
    handed the function over (to a solver), so that the calls adsim makes of
    it later (second-order rules, replays solving again) see those values.

    Python reads such a place when the function runs: a function made in a
    loop (``for K in strikes: brentq(lambda s: price(s, K) - quote, ...)``)
    reads the loop's last ``K`` once the loop is over, although each solve
    the program made used its own ``K``. :meth:`frozen` wraps a function so
    that, once :meth:`hold` is called (after the solver returns; before,
    the program's own calls see its places as they are, a counter it
    keeps included), each call runs with the places rebound to the values
    taken here and puts back what they held after it. Places holding
    active values are not taken: they are lifted to inputs instead. An
    array changed in place rather than rebound is not seen."""

    def __init__(self, functions):
        self.taken = []
        keys = set()
        for f in functions:
            if f is None:
                continue
            for slot, v in outer_slots(f, _plain_data):
                if slot.kind in ("cell", "global", "attribute") and slot.key not in keys:
                    keys.add(slot.key)
                    self.taken.append((slot, v))
        self.held = False

    def hold(self):
        self.held = True

    def frozen(self, f):
        """``f`` running with the places as they were taken (once held)."""
        if not self.taken or f is None:
            return f

        @functools.wraps(f)
        def frozen(*args, **kwargs):
            if not self.held:
                return f(*args, **kwargs)
            moved = [(slot, slot.get(), v) for slot, v in self.taken if slot.get() is not v]
            for slot, _, then in moved:
                slot.set(then)
            try:
                return f(*args, **kwargs)
            finally:
                for slot, now, _ in moved:
                    slot.set(now)
        return frozen


def _plain_data(v):
    """A value a rebinding of its place would change under a function: a
    number, a string or a plain array (not an active one)."""
    return isinstance(v, (int, float, complex, str, np.ndarray, np.generic)) and \
        not isinstance(v, Active)


def _recorded_or_holding(v):
    if isinstance(v, Active):
        return v.tape.recording
    return isinstance(v, (dict, list, tuple)) and any(
        isinstance(leaf, Active) and leaf.tape.recording for leaf in active_leaves(v))


def outer_slots(f, wanted):
    """The places ``f`` can read that hold a value ``wanted`` accepts, with
    their values: ``[(slot, value)]``, each place once, in the order found
    (closure cells first, as before objects and globals were searched)."""
    found = {}
    _search_function(f, wanted, found, set(), 0)
    return list(found.values())


def _search_function(f, wanted, found, seen, depth):
    f = inner_function(f)           # adsim.grad(g) and the like: the closure that runs
    if not isinstance(f, (types.FunctionType, types.MethodType, functools.partial)):
        if callable(f) and not isinstance(f, _LEAF_TYPES + (types.BuiltinFunctionType,)):
            _search_object(f, wanted, found, seen, depth)       # a callable object
        return
    if id(f) in seen or depth > _MAX_DEPTH:
        return
    seen.add(id(f))
    if isinstance(f, functools.partial):
        _search_function(f.func, wanted, found, seen, depth + 1)
        for name, v in _partial_bound(f).items():
            _consider(Slot("partial", f, name), v, wanted, found, seen, depth)
        return
    if isinstance(f, types.MethodType):
        _search_function(f.__func__, wanted, found, seen, depth + 1)
        _search_object(f.__self__, wanted, found, seen, depth + 1)
        return
    # values bound as defaults (``lambda s, K=K, quote=quote: ...``, the idiom that fixes
    # a loop's values in a function made in it): read by the calls that omit them
    for key, v in _defaults(f).items():
        _consider(Slot("default", f, key), v, wanted, found, seen, depth)
    for cell in f.__closure__ or ():
        try:
            v = cell.cell_contents
        except ValueError:          # an empty cell (a name assigned later)
            continue
        _consider(Slot("cell", cell, None), v, wanted, found, seen, depth)
    if _is_adsim(f):
        return                      # adsim's module globals hold no recorded values
    names = _global_names(f.__code__)
    module_globals = f.__globals__
    for name in names:
        if name in module_globals:
            _consider(Slot("global", module_globals, name), module_globals[name], wanted, found,
                      seen, depth)


def _consider(slot, v, wanted, found, seen, depth):
    if isinstance(v, (types.FunctionType, types.MethodType, functools.partial, Transformed)):
        _search_function(v, wanted, found, seen, depth + 1)     # a partial held in a closure
    elif wanted(v):
        found.setdefault(slot.key, (slot, v))
    elif isinstance(v, (dict, list, tuple)):
        _search_elements(v, wanted, found, seen, depth + 1)
    elif not isinstance(v, _LEAF_TYPES + (Active,)):
        _search_object(v, wanted, found, seen, depth + 1)


def _search_elements(container, wanted, found, seen, depth):
    """Objects and functions held in a dict, list or tuple (a model's list
    of species, each with its rate): their attributes are places; the
    container's own entries are not (a container holding active values
    is itself a place, lifted leaf by leaf)."""
    if id(container) in seen or depth > _MAX_DEPTH or len(container) > _MAX_ELEMENTS:
        return
    seen.add(id(container))
    for v in (container.values() if isinstance(container, dict) else container):
        if isinstance(v, (types.FunctionType, types.MethodType, functools.partial)):
            _search_function(v, wanted, found, seen, depth + 1)
        elif isinstance(v, (dict, list, tuple)):
            _search_elements(v, wanted, found, seen, depth + 1)
        elif not isinstance(v, _LEAF_TYPES + (Active, Transformed)):
            _search_object(v, wanted, found, seen, depth + 1)


def _search_object(obj, wanted, found, seen, depth):
    """The attributes of an instance (its ``__dict__`` and ``__slots__``),
    and, for a callable object, its ``__call__``. adsim's own objects are
    not searched: code that hands a user's function to them has lifted
    what that function reads already, and passes it on as arguments."""
    if id(obj) in seen or depth > _MAX_DEPTH or _is_adsim(type(obj)):
        return
    seen.add(id(obj))
    for name, v in _attributes(obj):
        _consider(Slot("attribute", obj, name), v, wanted, found, seen, depth)
    call = getattr(type(obj), "__call__", None)
    if isinstance(call, types.FunctionType):
        _search_function(call, wanted, found, seen, depth + 1)


def _is_adsim(f):
    module = getattr(f, "__module__", None) or ""
    return module == "adsim" or module.startswith("adsim.")


def _defaults(f):
    """A function's default values: by position among its parameters that
    have one, and by name for keyword-only ones."""
    out = dict(enumerate(f.__defaults__ or ()))
    out.update(f.__kwdefaults__ or {})
    return out


def _partial_bound(p):
    """The arguments a ``functools.partial`` binds: positions and keywords."""
    bound = dict(enumerate(p.args))
    bound.update(p.keywords)
    return bound


def _attributes(obj):
    out = list(getattr(obj, "__dict__", {}).items())
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if isinstance(name, str) and hasattr(obj, name) and not name.startswith("__"):
                out.append((name, getattr(obj, name)))
    return out


@functools.lru_cache(maxsize=4096)
def _global_names(code):
    """The names ``code`` (and the code of functions and comprehensions
    defined in it) looks up as globals: attribute names, which share
    ``co_names``, are not among them."""
    names = []
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            name = instruction.argval
            if name not in names:
                names.append(name)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(n for n in _global_names(const) if n not in names)
    return tuple(names)
