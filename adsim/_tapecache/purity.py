"""Fingerprints of what a function reads besides its arguments.

The functional API replays a cached tape only if the function's environment
is what it was at recording. :class:`Snapshot` walks that environment --
defaults, closure cells, the globals its code loads (and, recursively, the
user functions, objects and containers reached from them) -- into a flat
list of tokens, keeping the bytes of the small arrays it meets and a content
digest of the larger ones (``_digest``: read at about memory speed, no
copy); ``matches`` walks it again and compares. Long lists, tuples and dicts
of numbers of one type count as one value, compared at C speed. Modules,
builtins and library (NumPy, SciPy, ...) functions and classes count by
identity only. Anything the walk cannot see into (a C object holding hidden
state, a structure of too many values or too deep) makes the snapshot
*blocked*: the function is then recorded on every call. Code that calls
something whose result depends on outside state (``default_rng()``, a
clock) blocks it too, unless it is a method of a user class that no code
met calls by name (a fitted model's ``fit``).
The random generators met on the way are listed for
:class:`adsim._tapecache.random_watch.RandomWatch`, and the names the code
met loads, unless SciPy can be called from there (``Snapshot.reach``): a
recording of such a function rebinds only NumPy's functions of those names
and leaves SciPy's as they are (adsim/_record/interpose.py).
"""
import enum
import functools
import random as _py_random
import sys
import threading
import types

import numpy as np

from ._digest import all_of_type, number_run
from .codeinfo import code_info
from .frozen_array import FrozenArray
from .._active import Active
from .._record.interpose import unhooked

MAX_VALUES = 10_000               # values visited per walk (10-20 ms)
REACH_VALUES = 200                # ... per walk for the names alone (reach_of)
_LONG = 64                        # items: longer runs of same-type numbers are one value
MAX_DEPTH = 16                    # nesting of containers and objects
MAX_ARRAY_BYTES = 4 * 2 ** 30     # array data read per walk (about a second)

_LIBRARY = frozenset({
    "builtins", "numpy", "scipy", "adsim", "math", "cmath", "functools", "itertools",
    "operator", "collections", "typing", "abc", "numbers", "copy", "warnings", "enum", "re",
    "string", "statistics", "decimal", "fractions", "dataclasses", "contextlib", "logging",
    "inspect", "types", "weakref", "threading", "_operator", "_functools", "_collections"})
_HEAPTYPE = 1 << 9
_C_FUNCTIONS = frozenset({"cython_function_or_method", "fused_cython_function",
                          "_ArrayFunctionDispatcher"})
_RANDOM_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
                 np.random.SeedSequence, _py_random.Random)
_IDENTITY_TYPES = (types.ModuleType, np.ufunc, np.dtype, enum.Enum, types.CodeType,
                   types.MemberDescriptorType, types.GetSetDescriptorType,
                   types.MethodDescriptorType, types.WrapperDescriptorType,
                   types.ClassMethodDescriptorType, type(threading.Lock()),
                   type(threading.RLock()), type(Ellipsis), type(NotImplemented))
_SKIP_IN_CLASS = frozenset({
    "__dict__", "__weakref__", "__module__", "__doc__", "__qualname__", "__annotations__",
    "__slots__", "__match_args__", "_abc_impl", "__dataclass_fields__", "__dataclass_params__",
    "__firstlineno__", "__static_attributes__", "__orig_bases__", "__parameters__", "__hash__"})


class ResultNeutral:
    """Base of the types holding nothing a result depends on (a cache of
    tapes): their instances are fingerprinted as one constant token, without
    a reference to them."""

    __slots__ = ()


# The code of adsim's closures that pass the active values their function
# reads from outside its arguments in as tape inputs (adsim/_nesting/nested.py
# ``_lifted``): in their cells an active value counts by its shape, as with
# ``Snapshot(parameters=True)``, since a tape of them takes it as an input.
# (Any other active value met there is either lifted too or raises
# MixedRecordings when the function is recorded.)
_LIFTING_CODES = set()


def lifts_active_values(code):
    """Register ``code`` as that of a closure whose tapes take the active
    values its function reads as inputs (see ``_LIFTING_CODES``)."""
    _LIFTING_CODES.add(code)


class _Blocked(Exception):
    """The walk met something it cannot fingerprint (the message says what)."""


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_MISSING = _Marker("missing")
_NEUTRAL = _Marker("cache")
_EMPTY_CELL = _Marker("empty cell")
_REF = _Marker("ref")
_PARAMETER = _Marker("active value")


_library_modules = {}
_scipy_modules = {}
# SciPy itself, and adsim's own functions (which may hand active values to SciPy)
_REACHING = frozenset({"scipy", "adsim"})


def is_library(module):
    known = _library_modules.get(module)
    if known is None:
        known = isinstance(module, str) and module.partition(".")[0] in _LIBRARY
        if len(_library_modules) < 4096:
            _library_modules[module] = known
    return known


def _reaches_scipy(module):
    """Whether objects of ``module`` (a module name) may call SciPy's
    functions with the values they are given."""
    known = _scipy_modules.get(module)
    if known is None:
        known = isinstance(module, str) and module.partition(".")[0] in _REACHING
        if len(_scipy_modules) < 4096:
            _scipy_modules[module] = known
    return known


def _type_name(obj):
    t = obj if isinstance(obj, type) else type(obj)
    return f"{t.__module__}.{t.__qualname__}"


# containers adsim writes into (the stats= of checkpointed loops and solve_ivp),
# by id, with the object itself so a recycled id never matches: what they hold
# is an output of the sweeps, not an input the recording depends on
_OUTPUT_CHANNELS = {}
_OUTPUT = object()
_MAX_OUTPUT_CHANNELS = 1024


def output_channel(container):
    """Mark a dict or list that adsim's sweeps write into (``stats=``): tape
    caches do not record again when its contents change."""
    if type(container) in (dict, list):
        if len(_OUTPUT_CHANNELS) >= _MAX_OUTPUT_CHANNELS:
            _OUTPUT_CHANNELS.pop(next(iter(_OUTPUT_CHANNELS)))
        _OUTPUT_CHANNELS[id(container)] = container


class _Walk:
    """One walk over an environment: the tokens, the random generators met,
    (first) the reason the function is impure, and whether SciPy was met."""

    __slots__ = ("tokens", "emit", "seen", "count", "nbytes", "freeze", "randoms", "impure",
                 "scipy", "names", "in_method", "deferred", "in_methods", "crossed", "lookups",
                 "parameters", "limit", "modules", "user_modules", "computed")

    def __init__(self, freeze, parameters=False, limit=MAX_VALUES):
        self.limit = limit
        self.tokens = []
        self.emit = self.tokens.append
        self.seen = {}
        self.count = 0
        self.nbytes = 0
        self.freeze = freeze
        self.randoms = []
        self.impure = None
        self.scipy = False          # met SciPy, adsim, or code that imports by name
        self.names = []             # CodeInfo.names of the user code met
        # Impure code met inside a method of a user class runs only if the method
        # is called, by its name: the reasons wait, with the method's name, for the
        # end of the walk (``impurity``). ``in_methods``: ids first met inside one,
        # with its name; met again from outside it (shared code), they make every
        # waiting reason count.
        self.in_method = None       # the class attribute being walked, if any
        self.deferred = []          # (method name, reason)
        self.in_methods = {}
        self.crossed = False
        self.lookups = False        # code met finds attributes by computed names
        self.parameters = parameters    # active values count by shape (see Snapshot)
        self.modules = set()        # (user module id, names) walked: cycles end
        self.user_modules = {}      # id: user module met, in order
        self.computed = False       # code met reads attributes by computed names

    def value(self, v, depth=0):
        self.count += 1
        if self.count > self.limit:
            raise _Blocked(f"its environment holds more than {self.limit} values")
        t = type(v)
        if t in _PLAIN:
            self.emit(t)
            self.emit(v)
            return
        if depth > MAX_DEPTH:
            raise _Blocked(f"its environment is nested more than {MAX_DEPTH} levels deep")
        if (t is dict or t is list) and _OUTPUT_CHANNELS.get(id(v)) is v:
            self.emit(_OUTPUT)              # written by adsim (stats=): not an input
            self.emit(id(v))
            return
        handler = _HANDLERS.get(t)
        if handler is not None:
            handler(self, v, depth)
        else:
            self.other(v, t, depth)

    def first_visit(self, v):
        """False (after a back-reference token) if ``v`` was met before."""
        key = id(v)
        index = self.seen.get(key)
        if index is not None:
            if key in self.in_methods and self.in_methods[key] != self.in_method:
                self.crossed = True
            self.emit(_REF)
            self.emit(index)
            return False
        self.seen[key] = len(self.seen)
        if self.in_method is not None:
            self.in_methods[key] = self.in_method
        return True

    def impurity(self):
        """Why the function is impure (None if it is not): code it runs calls
        something whose result depends on outside state. A method's code
        counts if some code met loads the method's name, or looks attributes
        up by computed names, or it was shared with code outside methods."""
        if self.impure is not None or not self.deferred:
            return self.impure
        loaded = frozenset().union(*self.names)
        for name, reason in self.deferred:
            if self.crossed or self.lookups or name in loaded:
                return reason
        return None

    # ---- values --------------------------------------------------------
    def float_(self, v, depth):
        self.emit(float)
        self.emit(v if v == v and v != 0.0 else v.hex())    # NaN and signed zeros exactly

    def complex_(self, v, depth):
        self.emit(complex)
        self.emit(v.real.hex())
        self.emit(v.imag.hex())

    def sequence(self, v, depth):
        if not self.first_visit(v):
            return
        self.emit(type(v))
        self.emit(len(v))
        if len(v) > _LONG and self.numbers(v):
            return
        for item in v:
            self.value(item, depth + 1)

    def numbers(self, v):
        """A long list or tuple of numbers of one type (a model's 3000 weights)
        as one token, at C speed: floats bit for bit (NaNs and signed zeros
        count), ints by value. False for anything else."""
        run = number_run(v)
        if run is None:
            return False
        self.emit(type(v[0]))
        self.emit(run)
        return True

    def mapping(self, v, depth):
        if not self.first_visit(v):
            return
        self.emit(type(v))
        self.emit(len(v))
        if len(v) > _LONG and self.named_numbers(v):
            return
        for key, item in list(v.items()):
            self.value(key, depth + 1)
            self.value(item, depth + 1)

    def named_numbers(self, v):
        """A long dict of parameters (string keys, numbers of one type) as
        one value, at C speed; False for anything else."""
        keys = tuple(v)
        if not all_of_type(keys, str):
            return False
        self.emit(keys)
        if self.numbers(list(v.values())):
            return True
        self.tokens.pop()
        return False

    def set_(self, v, depth):
        if not all(type(e) in _SCALARS for e in v):
            raise _Blocked("its environment holds a set of objects that are not plain scalars")
        self.emit(type(v))
        self.emit(frozenset((type(e), e) for e in v))

    def array(self, v, depth):
        if v.dtype.hasobject:
            self.object_array(v, depth)
            return
        self.nbytes += v.nbytes
        if self.nbytes > MAX_ARRAY_BYTES:
            raise _Blocked(f"its environment holds more than {MAX_ARRAY_BYTES // 2 ** 30} GB "
                           f"of array data (reading it would cost about a second per call)")
        self.emit(type(v))
        self.emit(FrozenArray(v) if self.freeze else v)
        if type(v) is not np.ndarray and getattr(v, "__dict__", None):
            self.value(v.__dict__, depth + 1)

    def object_array(self, v, depth):
        """An array of Python objects: its shape, then its elements in C
        order, each walked as a value (a long run of same-type numbers as one)."""
        if v.dtype != object:
            raise _Blocked("its environment holds a structured array with Python objects")
        if not self.first_visit(v):
            return
        self.emit(type(v))
        self.emit(v.shape)
        items = v.ravel().tolist() if v.ndim else [v[()]]
        if len(items) > _LONG and self.numbers(items):
            return
        for item in items:
            self.value(item, depth + 1)
        if type(v) is not np.ndarray and getattr(v, "__dict__", None):
            self.value(v.__dict__, depth + 1)

    def numpy_scalar(self, v, depth):
        self.emit(type(v))
        self.emit(v.tobytes())

    def identity(self, v, depth):
        self.emit(v)

    def module(self, m, depth):
        self.emit(m)
        if _reaches_scipy(m.__name__):
            self.scipy = True

    # ---- code ------------------------------------------------------------
    def function(self, fn, depth):
        library = is_library(fn.__module__)
        if library and _reaches_scipy(fn.__module__):
            self.scipy = True
        if library and fn.__closure__ is None:
            self.emit(fn)                   # a library function: its identity
            return
        if not self.first_visit(fn):
            return
        code, kwdefaults = unhooked(fn)        # SciPy's own, also while a recording routes it
        self.emit(types.FunctionType)
        self.emit(code)
        self.value(fn.__defaults__, depth + 1)
        self.value(kwdefaults, depth + 1)
        info = None if library else code_info(code)
        outer = self.parameters
        if code in _LIFTING_CODES:
            self.parameters = True
        try:
            for cell in fn.__closure__ or ():
                content = self.contents(cell, depth)
                if info is not None and content is not _EMPTY_CELL:
                    self.user_module(content, info.names, depth + 1)
        finally:
            self.parameters = outer
        if library:                         # a closure made by library code (an adsim
            return                          # transform of a user function): its cells
        if info.dynamic_globals:
            raise _Blocked(f"`{fn.__qualname__}` reads globals through "
                           f"{info.dynamic_globals}()")
        if "__import__" in info.global_names:       # a module no walk can name
            raise _Blocked(f"`{fn.__qualname__}` imports modules through __import__()")
        self.names.append(info.names)
        if info.lookups:
            self.computed = True
        if info.imports:
            self.scipy = True               # a module found by name while running
            self.lookups = True
            for module in _imported_modules(info.imported, fn.__globals__):
                self.user_module(module, info.names, depth + 1)
        if info.external:
            reason = (f"`{fn.__qualname__}` calls `{info.external}`, whose result depends "
                      f"on more than its arguments")
            if self.in_method is not None:
                self.deferred.append((self.in_method, reason))
            elif self.impure is None:
                self.impure = reason
        glob, builtins = fn.__globals__, fn.__builtins__
        for name in info.global_names:
            v = glob.get(name, _MISSING)
            if v is _MISSING:
                self.emit(builtins.get(name, _MISSING))
            elif type(v) is types.ModuleType and is_library(v.__name__):
                self.count += 1                 # `np`: what value() and module() do, at once
                self.emit(v)
                if _reaches_scipy(v.__name__):
                    self.scipy = True
            else:
                self.value(v, depth + 1)
                self.user_module(v, info.names, depth + 1)
        if fn.__dict__:
            self.value(fn.__dict__, depth + 1)

    def user_module(self, module, names, depth):
        """The attributes of a user module (a ``config`` or ``physics``
        module of the project) that the code may read by name: the module
        itself counts by identity, but these count by value, and so do
        those of its user submodules the code may read by name
        (``pkg.settings.k``)."""
        if type(module) is not types.ModuleType or is_library(module.__name__):
            return
        if depth > MAX_DEPTH:
            raise _Blocked(f"its environment is nested more than {MAX_DEPTH} levels deep")
        key = (id(module), names)
        if key in self.modules:
            return
        self.modules.add(key)
        self.user_modules.setdefault(id(module), module)
        attrs = module.__dict__
        for name in names:
            v = attrs.get(name, _MISSING)
            if v is not _MISSING and not name.startswith("__"):
                self.emit(name)
                self.value(v, depth)
                self.user_module(v, names, depth + 1)

    def finish(self):
        """After the walk: where code met reads attributes by computed names
        (``getattr(config, name)``), every attribute of each user module met
        counts, not only those loaded by name."""
        if not self.computed:
            return
        done = set()
        while len(done) < len(self.user_modules):
            key, module = next((k, m) for k, m in self.user_modules.items() if k not in done)
            done.add(key)
            self.user_module(module, tuple(n for n in list(module.__dict__)
                                           if not n.startswith("__")), 1)

    def method(self, m, depth):
        self.emit(types.MethodType)
        self.value(m.__func__, depth + 1)
        self.value(m.__self__, depth + 1)

    def builtin(self, fn, depth):
        owner = fn.__self__
        if _reaches_scipy(getattr(fn, "__module__", None)):
            self.scipy = True
        self.emit(fn if owner is None or isinstance(owner, types.ModuleType) else fn.__name__)
        if owner is not None and not isinstance(owner, types.ModuleType):
            self.value(owner, depth + 1)       # a method of an object: the object's state counts

    def partial(self, p, depth):
        self.emit(type(p))
        self.value(p.func, depth + 1)
        self.value(p.args, depth + 1)
        self.value(p.keywords, depth + 1)

    def wrapper(self, w, depth):               # staticmethod, classmethod
        self.emit(type(w))
        self.value(w.__func__, depth + 1)

    def property_(self, p, depth):
        self.emit(property)
        for fn in (p.fget, p.fset, p.fdel):
            self.value(fn, depth + 1)

    def class_(self, cls, depth):
        self.emit(cls)
        if _reaches_scipy(cls.__module__):
            self.scipy = True               # the class, or the type of an instance met
        if not cls.__flags__ & _HEAPTYPE or is_library(cls.__module__) \
                or not self.first_visit(cls):
            return
        # a user class: its attributes and methods count (class-level settings, helper
        # methods reading globals); descriptors it made for itself count by identity
        names = [n for n in cls.__dict__ if n not in _SKIP_IN_CLASS]
        self.emit(len(names))
        outer = self.in_method
        for n in names:
            self.emit(n)
            v = cls.__dict__[n]
            if outer is None and not (n.startswith("__") and n.endswith("__")):
                self.in_method = n          # called by this name, if at all
            try:
                self.value(v, depth + 1)
            except _Blocked:
                if type(v).__flags__ & _HEAPTYPE or not is_library(type(v).__module__):
                    raise
                self.emit(v)
            finally:
                self.in_method = outer
        for base in cls.__bases__:
            self.value(base, depth + 1)

    # ---- other objects -------------------------------------------------
    def other(self, v, t, depth):
        if _reaches_scipy(t.__module__):
            self.scipy = True               # an object of SciPy's (a dict subclass, say)
        if isinstance(v, _RANDOM_TYPES):
            self.randoms.append(v)
            self.emit(v)
        elif isinstance(v, ResultNeutral):
            self.emit(_NEUTRAL)
        elif self.parameters and isinstance(v, Active):
            self.emit(_PARAMETER)
            self.emit(tuple(v.shape))
        elif isinstance(v, type):
            self.class_(v, depth)
        elif isinstance(v, types.ModuleType):
            self.module(v, depth)
        elif isinstance(v, _IDENTITY_TYPES):
            self.emit(v)
        elif isinstance(v, (tuple, list)):
            self.sequence(v, depth)
            self._instance_dict(v, depth)
        elif isinstance(v, dict):
            self.mapping(v, depth)
            self.value(getattr(v, "default_factory", None), depth + 1)
            self._instance_dict(v, depth)
        elif isinstance(v, (set, frozenset)):
            self.set_(v, depth)
        elif t is types.CellType:               # a closure cell held apart: its contents
            self.cell(v, depth)
        elif isinstance(v, np.ndarray):
            self.array(v, depth)
        elif isinstance(v, np.generic):
            self.numpy_scalar(v, depth)
        elif isinstance(v, float):
            self.float_(float(v), depth)
        elif isinstance(v, (int, str, bytes)):
            self.emit(t)
            self.emit(v)
        elif t.__name__ in _C_FUNCTIONS and is_library(getattr(v, "__module__", None)):
            self.emit(v)                       # a compiled library function
        else:
            self.instance(v, t, depth)

    def cell(self, v, depth):
        """A closure cell held as a value (adsim keeps the cells of the
        closures it lifts into a loop's inputs): its contents count, as in
        a function's ``__closure__``."""
        self.emit(types.CellType)
        if self.first_visit(v):
            self.contents(v, depth)

    def contents(self, cell, depth):
        """Walk a closure cell's contents (or emit the empty-cell token);
        returns them (or the token)."""
        try:
            content = cell.cell_contents
        except ValueError:
            self.emit(_EMPTY_CELL)
            return _EMPTY_CELL
        self.value(content, depth + 1)
        return content

    def _instance_dict(self, v, depth):
        d = getattr(v, "__dict__", None)
        if d:
            self.value(d, depth + 1)

    def instance(self, v, t, depth):
        slots = _visible_state(t)
        if slots is None:
            raise _Blocked(f"its environment holds a {_type_name(v)} object, whose state adsim "
                           f"cannot see")
        if not self.first_visit(v):
            return
        self.value(t, depth + 1)
        self._instance_dict(v, depth)
        for s in slots:
            self.value(getattr(v, s, _MISSING), depth + 1)


def _imported_modules(imported, globals_):
    """The loaded modules that ``import`` statements naming ``imported``
    (from code whose module globals are ``globals_``) may bind: each name
    absolute, and relative to the code's package and the packages above it
    (the statements' dots are not kept: a module too many is only walked)."""
    package = globals_.get("__package__") or ""
    parents = []
    while package:
        parents.append(package)
        package = package.rpartition(".")[0]
    modules = sys.modules
    for name in imported:
        candidates = [name] if name else []
        candidates += [f"{p}.{name}" if name else p for p in parents]
        for candidate in candidates:
            module = modules.get(candidate)
            if module is not None:
                yield module


_SCALARS = {type(None), bool, int, str, bytes, float}
_PLAIN = frozenset({type(None), bool, int, str, bytes})     # compared by type and ==
_HANDLERS = {
    float: _Walk.float_, complex: _Walk.complex_,
    tuple: _Walk.sequence, list: _Walk.sequence, dict: _Walk.mapping,
    set: _Walk.set_, frozenset: _Walk.set_, np.ndarray: _Walk.array,
    np.float64: _Walk.numpy_scalar, np.int64: _Walk.numpy_scalar,
    types.ModuleType: _Walk.module, np.ufunc: _Walk.identity, type: _Walk.class_,
    types.FunctionType: _Walk.function, types.MethodType: _Walk.method,
    types.BuiltinFunctionType: _Walk.builtin, staticmethod: _Walk.wrapper,
    classmethod: _Walk.wrapper, property: _Walk.property_, functools.partial: _Walk.partial,
}
_slots_of = {}


def _python_class(klass):
    """Whether ``klass`` is a class written in Python, whose instances keep
    their state in ``__dict__`` and ``__slots__``. Extension types made by
    PyType_FromSpec are heap types too (``array.array``): they add C fields
    (a larger basic size) without a ``__dict__``, ``__slots__`` or
    ``__weakref__`` of their own, which every Python class adding to its
    base's layout has."""
    if not klass.__flags__ & _HEAPTYPE:
        return False
    own = klass.__dict__
    return "__dict__" in own or "__slots__" in own or "__weakref__" in own or \
        klass.__basicsize__ == klass.__base__.__basicsize__


def _visible_state(t):
    """Slot names of instances of ``t`` if all their state is visible to
    Python (``__dict__`` and ``__slots__`` of Python classes), else None."""
    try:
        return _slots_of[t]
    except KeyError:
        pass
    slots = []
    for klass in t.__mro__[:-1]:               # all but object
        if not _python_class(klass) and klass is not BaseException and klass is not Exception:
            slots = None
            break
        own = klass.__dict__.get("__slots__", ())
        slots.extend([own] if isinstance(own, str) else
                     [s for s in own if s not in ("__dict__", "__weakref__")])
    result = None if slots is None else tuple(slots)
    if len(_slots_of) < 4096:
        _slots_of[t] = result
    return result


def reach_of(f, extras=(), limit=REACH_VALUES):
    """``Snapshot(f, extras).reach`` without the snapshot: the names the user
    code ``f`` can run loads, or None (see :class:`Snapshot`), also when the
    environment holds more than ``limit`` values (a walk that long would
    cost more than the interposition it saves)."""
    walk = _Walk(freeze=False, limit=limit)
    try:
        walk.value(f)
        if extras:
            walk.value(extras)
    except (_Blocked, RecursionError):
        return None
    return None if walk.scipy else frozenset().union(*walk.names)


class Snapshot:
    """What a function (and the arguments listed in ``extras``) depended on
    at one moment. With ``parameters`` an active value counts by its shape
    alone (it is not blocked): for tapes that take the active values met as
    inputs, such as an integration's recorded steps (adsim.integrate).

    Attributes
    ----------
    blocked : str or None
        Why a tape recorded now may not be reused (None: it may be, as long
        as :meth:`matches` holds).
    randoms : list
        Random generators met in the environment (for :class:`RandomWatch`).
    reach : frozenset of str or None
        The names loaded by the user code the walk met (``np.zeros(n)``
        loads ``np`` and ``zeros``): all the code the function can run
        outside libraries. None when that is not known or SciPy is within
        reach: the environment holds a SciPy or adsim module, function,
        class or object, code that imports or looks up by computed names
        (``import``, ``getattr``), or something the walk could not see.
    """

    __slots__ = ("tokens", "blocked", "randoms", "reach", "parameters")

    def __init__(self, f, extras=(), parameters=False):
        self.parameters = parameters
        walk = _Walk(freeze=True, parameters=parameters)
        try:
            walk.value(f)
            if extras:
                walk.value(extras)
            walk.finish()
        except _Blocked as err:
            self.tokens, self.blocked, self.randoms, self.reach = None, str(err), [], None
            return
        except RecursionError:
            self.tokens, self.blocked, self.randoms = None, "its environment is too deep", []
            self.reach = None
            return
        self.tokens = walk.tokens
        self.randoms = walk.randoms
        self.blocked = walk.impurity()
        self.reach = None if walk.scipy else frozenset().union(*walk.names)

    @classmethod
    def unchecked(cls, reason):
        """A snapshot not taken (``reason`` says why): it never matches."""
        snapshot = cls.__new__(cls)
        snapshot.tokens, snapshot.blocked, snapshot.randoms, snapshot.reach = None, reason, [], None
        snapshot.parameters = False
        return snapshot

    def same_as(self, other):
        """Whether ``other``, a snapshot taken the same way, saw the same
        environment (token by token, without walking it again)."""
        if self.tokens is None or other.tokens is None or \
                self.parameters != other.parameters or len(self.tokens) != len(other.tokens):
            return False
        for s, c in zip(self.tokens, other.tokens):
            if s is c:
                continue
            if type(s) is FrozenArray:
                if type(c) is not FrozenArray or not s.same_as(c):
                    return False
            elif type(s) is not type(c) or s != c:
                return False
        return True

    def matches(self, f, extras=()):
        """Whether the environment of ``f`` (and ``extras``) is unchanged."""
        if self.tokens is None:
            return False
        walk = _Walk(freeze=False, parameters=self.parameters)
        try:
            walk.value(f)
            if extras:
                walk.value(extras)
            walk.finish()
        except (_Blocked, RecursionError):
            return False
        stored, current = self.tokens, walk.tokens
        if len(stored) != len(current):
            return False
        for s, c in zip(stored, current):
            if s is c:
                continue
            if type(s) is FrozenArray:
                if not s.matches(c):
                    return False
            elif type(s) is not type(c) or s != c:
                return False
        return True
