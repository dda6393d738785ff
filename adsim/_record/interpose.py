"""Everything adsim changes in other modules, and the switch that turns it off.

Importing adsim changes nothing outside adsim. While a recording runs with
interposition on, adsim changes exactly three things outside itself:

1. **The** ``numpy`` **namespace, and names imported from it.** 23 names
   are bound to adsim's wrappers
   (adsim/_record/creation.py): ``array asarray asanyarray ascontiguousarray
   asfortranarray require fromiter zeros ones full empty zeros_like
   ones_like full_like empty_like eye identity arange linspace logspace
   geomspace r_ c_``.
   NumPy's override protocols do not reach array creation, so this is how
   ``np.array([a * x, b * y])`` and ``dy = np.zeros(n); dy[0] = ...`` in
   the recorded function's own code become recorded arrays. Other callers
   (other threads, NumPy, SciPy, adsim itself) get NumPy's result, except
   that ``r_`` and ``c_`` given active items take adsim's rule whoever
   calls them (NumPy's would fail on them). And every other name under
   which ``numpy``, ``numpy.linalg``, ``numpy.fft``,
   ``numpy.lib.stride_tricks`` and ``numpy.emath`` hold a function NumPy
   dispatches (``np.sum``, ``np.linalg.det``, ...) or a ufunc (``np.exp``,
   ``np.add``: a proxy, since ufuncs cannot be subclassed) is bound to a
   stand-in (adsim/_record/listed.py) that makes lists and tuples holding
   active values active arrays before calling NumPy's function or ufunc,
   whoever calls it: NumPy's dispatch does not look into lists
   (``np.sum([a, b])``, ``np.exp([a, b])``); ``np.frompyfunc`` makes such
   stand-ins of its ufuncs, and ``scipy.special``'s ufuncs are bound to
   stand-ins too (``scipy.special.gammaln([a, b])``).
   ``np.isscalar`` answers True for a 0-d active value, as NumPy does for
   the np.float64 it stands for (:func:`_scalar_test_wrappers`).
   In every other module (not NumPy's, SciPy's or adsim's) imported before
   the recording starts, a global name bound under NumPy's own name to one
   of those functions (``from numpy import zeros, array, sum``, as
   libraries write) is bound to the same wrapper, and back at the end
   unless the module rebound it meanwhile; a module is looked through once,
   when a recording first finds it imported (``__main__`` at every
   recording, since it may still be running its imports). Other names of
   them (``from numpy import array as arr``, a variable holding
   ``np.array``) are not rebound: adsim/_record/creation.py's
   ``bypassed_creation`` names the cause when active values reach one.
   The functions of ``math`` that adsim/_record/math_functions.py
   lists (``exp``, ``sqrt``, ``log``, ``atan2``, ``hypot``, ``erf``,
   ``fsum``, ...) are bound in ``math``, and in place of names imported
   from it under their own names (``from math import exp``), to stand-ins
   that record NumPy's function of an active number (``math``'s own
   function on plain ones), as the NumPy names are; so are those of
   ``cmath`` that adsim/_record/cmath_functions.py lists (``exp``,
   ``sqrt``, ``log``, ``phase``, ``rect``, ...), recording NumPy's complex
   functions.
   These NumPy methods have their code replaced as the SciPy functions of 2.
   are: ``np.vectorize.__call__``, whose NumPy code converts its arguments
   to plain arrays, so that a vectorized function (made before or during
   the recording) given active arguments maps over active elements
   (adsim/_np/mapped.py); ``np.poly1d.__init__``, so that a list of
   coefficients holding active values (``np.poly1d([a, b, c])``) becomes
   the active array NumPy's constructor keeps (adsim/_np/poly1d.py);
   ``np.ndenumerate.__init__``, whose NumPy code iterates a plain copy, so
   that it enumerates an active array's active elements
   (adsim/_np/ndenumerate.py); so do
   numpy.polynomial's ``*val`` functions, whose coefficients NumPy gives
   their own axes only for an ndarray x (adsim/_np/polynomial_series.py).
2. **The code of SciPy functions.** Each Python function listed in a rule
   table of adsim/_scipy (adsim/_scipy/hooks.py; ``scipy.linalg.solve``,
   ``scipy.special.logsumexp``, the methods of the ``scipy.stats``
   distribution classes, ...), in a SciPy module imported before the
   recording starts, has its ``__code__`` replaced by a trampoline (code
   holding the route to adsim's rule among its constants; defaults, keyword
   defaults and closure stay SciPy's). The function object stays the same, so every name of it reaches adsim's rule
   when an argument is active; other calls run SciPy's own code with its
   own defaults. While hooked, ``inspect.signature`` of such a function
   without ``__wrapped__`` shows ``(*args, **kwargs)``. With
   ``scipy.sparse``, its class ``_data_matrix`` (the base of CSR, CSC,
   COO, BSR and DIA) gets a ``data`` property storing plain values in the
   instance's ``__dict__`` as SciPy does, so that ``L.data = L.data * p``
   makes ``L`` a sparse matrix of active values (adsim/_scipy/sparse_data.py).

3. **The draw methods of NumPy's random generators.** The methods of
   ``np.random.Generator`` and ``np.random.RandomState`` that
   adsim/_np/draws.py differentiates (``normal``, ``uniform``,
   ``exponential``, ...) are replaced in the classes' type dicts (compiled
   classes: reached through ``gc.get_referents`` of the ``__dict__`` proxy,
   then ``PyType_Modified``; CPython only) by stand-ins that call NumPy's
   method unless a parameter is active on a thread recording with
   interposition on; and ``numpy.random``'s functions of those names
   (methods bound to NumPy's global RandomState) are bound to stand-ins as
   the names of 1. are.

All are made when the first recording with interposition on starts, in
any thread, and undone when the last one ends, also when the recorded
function raised: one lock, one count of such recordings over all threads
and nested recordings. A SciPy module imported during a recording is
hooked when the next recording starts; when adsim refused a call into it
in the recording that imported it, that recording is made once more
(``record_reaching``, adsim/_tapecache/cache.py).

**Less for code that reaches less.** A recording of the functional API
knows, from the tape cache's walk of the function's environment
(``Snapshot.reach``, adsim/_tapecache/purity.py; ``adsim.record`` walks for
the names alone, ``reach_of``, giving up past 200 values), the names the
code the function can run loads, when the walk saw all of that code and met
no SciPy or adsim object and no code importing or looking up by computed
names. Such a recording binds only the NumPy names (in the modules of 1.,
and imported from NumPy elsewhere) among those, and hooks no SciPy
function: code that never spells ``zeros`` cannot call ``np.zeros`` by that
name, and a function that cannot reach SciPy cannot hand it active values.
A recording that needs more (``cache=False``, adsim's own recordings of
steps and solvers, an environment the walk could not see) changes
everything, as above, also when another one changed less. A restricted
recording that fails is made again with everything changed
(``record_reaching``, adsim/_tapecache/cache.py): the walk cannot see code
that only exists at run time, such as the methods of an object unpickled
inside the function.

**The switch.** Interposition is on unless turned off:

- ``ADSIM_INTERPOSE=0`` in the environment when adsim is imported sets the
  default (``0``/``false``/``no``/``off`` or ``1``/``true``/``yes``/``on``;
  another value raises ``ValueError`` at import);
- ``adsim.set_interposition(enabled)`` sets the default for every thread
  and returns the previous default;
- ``with adsim.interposition(enabled):`` sets it for the calling thread
  only, inside the block (blocks nest; the innermost wins; other threads,
  including threads started inside the block, keep the default).

The setting is read when a recording starts (``grad``, ``record``, ``jvp``,
... and every nested or checkpointed recording inside them) and holds until
that recording ends; changing it inside a recorded function affects the
recordings started after the change only (a derivative taken inside a
recorded function is recorded again when the outer tape replays, with the
setting in force then). A recording started with
interposition off installs nothing, and its own calls see NumPy and SciPy
as they are even while another thread's recording has the changes in place
(the wrappers and trampolines step aside for it): ``np.zeros`` makes a plain
array, which refuses active values, and a SciPy function without a
NumPy-only implementation raises adsim's ``UnsupportedOperation`` on an
active argument. What works there: NumPy functions and ufuncs (NumPy's own
dispatch reaches adsim), ``np.stack``/``np.concatenate`` instead of
``np.array([...])`` and of lists holding active values only,
``np.zeros_like(x, shape=n)`` for a workspace, and the explicit namespace
``adsim.scipy`` for SciPy. Replays are unaffected: a
tape recorded either way replays the same.
"""
import ctypes
import gc
import os
import sys
import threading
import types

import numpy as np

from . import cmath_functions, creation, listed, math_functions
from .stand_ins import named_like
from .._active import Active
from .._np import draws, mapped, ndenumerate, poly1d, polynomial_series
from .._np.complex import ComplexActive
from .._scipy import hooks, sparse_data
from ..errors import InvalidArgument

_ENVIRONMENT = "ADSIM_INTERPOSE"
_WORDS = {"1": True, "true": True, "yes": True, "on": True,
          "0": False, "false": False, "no": False, "off": False}


def _from_environment():
    text = os.environ.get(_ENVIRONMENT, "").strip()
    if not text:
        return True
    if text.lower() not in _WORDS:
        raise ValueError(f"adsim: {_ENVIRONMENT}={text!r} is neither on nor off: set it to 0 "
                         f"(explicit calls only) or 1 (the default)")
    return _WORDS[text.lower()]


_default = _from_environment()
_local = threading.local()          # .settings: this thread's interposition blocks


def _shown(value):
    """A short account of ``value`` for messages (arrays by shape and dtype)."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} ({value.dtype})"
    text = repr(value)
    return f"{text[:57] + '...' if len(text) > 60 else text} ({type(value).__name__})"


def _checked(enabled, where):
    if not isinstance(enabled, (bool, np.bool_)):
        raise InvalidArgument(f"adsim.{where}: enabled must be True or False, got "
                              f"{_shown(enabled)}")
    return bool(enabled)


def set_interposition(enabled):
    """Turn interposition on (``True``, the default) or off (``False``) for
    the recordings that start from now on, in every thread that is not
    inside a ``with adsim.interposition(...)`` block; returns the previous
    default.

    With interposition on, a recording puts adsim's wrappers of NumPy's
    creation functions (``np.zeros``, ``np.array``, ...) into ``numpy`` and
    routes the SciPy functions adsim has rules for, until it ends. With it
    off, nothing outside adsim is changed: write ``np.stack([...])`` and
    ``np.zeros_like(x, shape=n)`` in recorded code and call SciPy through
    ``adsim.scipy`` (docs/scipy.md). The environment variable
    ``ADSIM_INTERPOSE=0`` sets the same default at import."""
    global _default
    previous, _default = _default, _checked(enabled, "set_interposition")
    return previous


class interposition:
    """``with adsim.interposition(False):`` recordings started by this thread
    inside the block change nothing outside adsim (``True``: they do, whatever
    the default). Other threads are not affected; blocks nest.

    See :func:`adsim.set_interposition` for what interposition does."""

    __slots__ = ("enabled",)

    def __init__(self, enabled):
        self.enabled = _checked(enabled, "interposition")

    def __enter__(self):
        settings = getattr(_local, "settings", None)
        if settings is None:
            settings = _local.settings = []
        settings.append(self.enabled)
        return self

    def __exit__(self, *exc):
        _local.settings.pop()
        return False

    def __repr__(self):
        return f"adsim.interposition({self.enabled})"


def enabled():
    """This thread's setting now: its innermost ``interposition`` block, or
    the default."""
    settings = getattr(_local, "settings", None)
    return settings[-1] if settings else _default


# ---------------------------------------------------------------- installing

_lock = threading.Lock()
_count = 0              # recordings running with interposition on, over all threads
_originals = {}         # (module, name) -> NumPy's object, and
_wrappers = {}          # (module, name) -> adsim's wrapper: made at the first install
_wrapper_names = {}     # module -> {name: wrapper}, and
_original_names = {}    # module -> {name: NumPy's object}: the two above, per module
_SCIPY_MODULES = hooks.scipy_modules()
_SCIPY_MODULE_SET = frozenset(_SCIPY_MODULES)
_hooks = {}             # SciPy module -> its _ModuleHooks, made when first seen imported
_known = {}             # SciPy function (or NumPy method) -> its _Hook (installed or not)
_hooked = []            # the _ModuleHooks in place now (their modules: _hooked_modules)
_hooked_modules = set()
# NumPy's Python methods that convert active arguments, with adsim's rules:
# hooked as the SciPy functions are, for as long as the numpy namespace is changed
_NUMPY_METHODS = ((np.vectorize, "__call__", mapped.vectorize_call),
                  (np.poly1d, "__init__", poly1d.poly1d_init),
                  (np.poly1d, "__truediv__", poly1d.poly1d_truediv),
                  (np.ndenumerate, "__init__", ndenumerate.ndenumerate_init),
                  *polynomial_series.HOOKS)
_numpy_hooks = []       # their _ModuleHooks, made at the first install


class installed:
    """``with installed(on, names):`` one recording's share of interposition:
    when ``on``, adsim's changes (the module docstring) are in place until the
    last such share ends in any thread; when not, nothing happens.

    ``names``: None, or the names the recorded function's code (and all the
    code it can reach) loads, when that is known and SciPy is not among what
    it reaches (``Snapshot.reach``, adsim/_tapecache/purity.py). Only NumPy's
    functions of those names are then rebound, and SciPy's functions are left
    as they are (unless another recording running meanwhile changed them):
    code that never spells ``zeros`` cannot call ``np.zeros`` by that name,
    and changing a few hundred names costs more than a small recording."""

    __slots__ = ("on", "names")

    def __init__(self, on, names=None):
        self.on = on
        self.names = names

    def __enter__(self):
        global _count
        if self.on:
            with _lock:
                try:
                    _change_numpy(self.names)
                    if self.names is None:
                        _hook_scipy()
                except BaseException:
                    if _count == 0:         # nothing left half changed
                        _restore()
                    raise
                _count += 1
        return self

    def __exit__(self, *exc):
        global _count
        if self.on:
            with _lock:
                _count -= 1
                if _count == 0:
                    _restore()
        return False


_all_names = [False]    # every wrapped name is bound now (else those in _bound_names)
_bound_names = []       # (namespace, name, NumPy's object) bound one by one now
_by_name = {}           # name -> [(namespace, wrapper, NumPy's object)] over NumPy's modules


def _change_numpy(names):
    """Bind the wrapped NumPy names (``names``: only those; None: all) not
    bound yet, and the NumPy methods' hooks at the first share."""
    if not _wrappers:           # made once, while NumPy's own objects are in place
        _wrappers.update({(np, name): w for name, w in creation._wrappers().items()})
        _wrappers.update(listed.wrappers(taken=creation._wrappers().keys()))
        _wrappers.update(_legacy_draw_wrappers())
        _wrappers.update(_scalar_test_wrappers())
        _wrappers.update(math_functions.wrappers())
        _wrappers.update(cmath_functions.wrappers())
        _originals.update({key: w.__wrapped__ for key, w in _wrappers.items()})
        _by_module(_wrappers, _wrapper_names)
        _by_module(_originals, _original_names)
        for (module, name), wrapper in _wrappers.items():
            _by_name.setdefault(name, []).append((vars(module), wrapper, wrapper.__wrapped__))
        made = [_Hook(vars(cls)[name], rule) for cls, name, rule in _NUMPY_METHODS]
        _known.update({hook.function: hook for hook in made})
        _numpy_hooks.append(_ModuleHooks(made))
    if _count == 0:
        for made in _numpy_hooks:
            for function, trampoline in made.installs:
                function.__code__ = trampoline
    if not _draws_changed[0] and (names is None or not _DRAW_NAMES.isdisjoint(names)):
        _set_draw_methods(1)
    if _all_names[0]:
        return
    if names is None:
        # one dict update per module: a few hundred attribute stores one by one
        # would cost more than the recording of a small function
        for module, wrappers in _wrapper_names.items():
            vars(module).update(wrappers)
        _all_names[0] = True
        _bind_imported_names()
        return
    for name in names:
        for namespace, wrapper, original in _by_name.get(name, ()):
            if namespace.get(name) is not wrapper:
                namespace[name] = wrapper
                _bound_names.append((namespace, name, original))
    _bind_imported_names(names)


def _by_module(objects, out):
    """{module: {name: object}} from {(module, name): object}."""
    for (module, name), obj in objects.items():
        out.setdefault(module, {})[name] = obj


_LIBRARY_PACKAGES = ("numpy", "scipy", "adsim")
_imported = {}          # NumPy's name -> [(original, wrapper)] of the functions wrapped
_importers = {}         # module name -> (the names, [(its globals, name)]) bound to a wrapped
#                         original
_modules_seen = set()   # names of the modules looked through, and
_modules_count = [0]    # len(sys.modules) then
_imported_bound = []    # (globals, name, original, wrapper) rebound now


def _bind_imported_names(names=None):
    """``from numpy import zeros, array, sum``: bind each global name of a
    module (other than NumPy's, SciPy's and adsim's) that is bound, under
    NumPy's own name, to a function wrapped in ``numpy``, ``numpy.linalg``
    or ``numpy.fft`` to its wrapper (only the ``names`` given, if any).
    Modules are looked through once, when first seen (``__main__`` each
    time: it may still be running its imports)."""
    if not _imported:
        for (module, name), wrapper in _wrappers.items():
            _imported.setdefault(name, []).append((_originals[module, name], wrapper))
    if len(sys.modules) != _modules_count[0]:
        _modules_count[0] = len(sys.modules)
        for name, module in list(sys.modules.items()):
            if name not in _modules_seen:
                _modules_seen.add(name)
                _look_into(name, module)
    if "__main__" in sys.modules:
        _look_into("__main__", sys.modules["__main__"], names)
    for spelled, found in _importers.values():
        if names is not None and names.isdisjoint(spelled):
            continue
        for namespace, name in found:
            if names is not None and name not in names:
                continue
            bound = namespace.get(name)
            for original, wrapper in _imported[name]:
                if bound is original:
                    namespace[name] = wrapper
                    _imported_bound.append((namespace, name, original, wrapper))


def _look_into(module_name, module, names=None):
    """Note in ``_importers`` the module's global names (among ``names``, if
    given) bound to NumPy's functions of the same name."""
    namespace = getattr(module, "__dict__", None)
    if module_name.split(".", 1)[0] in _LIBRARY_PACKAGES or not isinstance(namespace, dict):
        return
    candidates = namespace.keys() & _imported.keys() if names is None else \
        [name for name in names if name in _imported and name in namespace]
    found = [(namespace, name) for name in candidates
             if any(namespace.get(name) is original for original, _ in _imported[name])]
    if found:
        _importers[module_name] = (frozenset(name for _, name in found), found)
    else:
        _importers.pop(module_name, None)


def scipy_imported_since(count):
    """Whether a SciPy module with rules is among the modules imported after
    ``sys.modules`` held ``count`` of them (dicts keep insertion order) and
    is not hooked: a recording that imported it started before it existed."""
    if len(sys.modules) <= count:
        return False
    names = list(sys.modules)[count:]
    return any(name in _SCIPY_MODULE_SET and name not in _hooked_modules for name in names)


def _hook_scipy():
    """Hook the SciPy modules with rules imported by now and not hooked yet."""
    for scipy_module in _SCIPY_MODULES:
        if scipy_module in _hooked_modules or scipy_module not in sys.modules:
            continue
        if scipy_module not in _hooks:
            _hooks[scipy_module] = _make_hooks(scipy_module)
        made = _hooks[scipy_module]
        for function, trampoline in made.installs:      # the hot loop of a recording's start
            function.__code__ = trampoline
        _hooked.append(made)
        _hooked_modules.add(scipy_module)
        if scipy_module == "scipy.sparse":
            sparse_data.install()


def _restore():
    if _draws_changed[0]:
        _set_draw_methods(0)
    if _all_names[0]:
        for module, names in _original_names.items():
            vars(module).update(names)
        _all_names[0] = False
    else:
        for namespace, name, original in _bound_names:
            namespace[name] = original
    _bound_names.clear()
    for made in _numpy_hooks:
        for function, code in made.removals:
            function.__code__ = code
    for namespace, name, original, wrapper in _imported_bound:
        if namespace.get(name) is wrapper:      # unless the module rebound it meanwhile
            namespace[name] = original
    _imported_bound.clear()
    for made in _hooked:
        for function, code in made.removals:
            function.__code__ = code
    if "scipy.sparse" in _hooked_modules:
        sparse_data.remove()
    _hooked.clear()
    _hooked_modules.clear()


# the draw methods of NumPy's compiled random generators: Generator and
# RandomState are compiled classes, whose methods no attribute store can
# change; their type dicts (behind the read-only ``__dict__`` proxy) can,
# followed by PyType_Modified (CPython's method cache). Where that dict cannot
# be reached, nothing is changed and draws with active parameters stay refused.
_DRAW_CLASSES = (np.random.Generator, np.random.RandomState)
_draw_methods = []      # (class, its dict, ({name: NumPy's method}, {name: adsim's stand-in}))
_draws_changed = [False]
# A recording whose code spells none of these names gets NumPy's own methods
# (changing them costs 5 us, a tenth of a small recording). A draw method it
# reaches under another name (``draw = rng.normal`` kept in a closure) then
# refuses active parameters with adsim's error, and the recording is made
# again with everything changed (``TapeCache._record``).
_DRAW_NAMES = frozenset(draws.supported())


def _type_dict(cls):
    found = [d for d in gc.get_referents(cls.__dict__) if type(d) is dict]
    if len(found) != 1 or any(name not in found[0] for name in draws.supported()):
        return None
    return found[0]


def _made_draw_methods():
    if sys.implementation.name != "cpython":
        return
    modified = ctypes.pythonapi.PyType_Modified
    modified.argtypes, modified.restype = [ctypes.py_object], None
    for cls in _DRAW_CLASSES:
        namespace = _type_dict(cls)
        if namespace is not None:
            originals = {name: namespace[name] for name in draws.supported()}
            stand_ins = {name: draws.method(m, creation.routed) for name, m in originals.items()}
            _draw_methods.append((cls, namespace, (originals, stand_ins)))


def _set_draw_methods(which):
    """Put adsim's stand-ins (``which`` 1) or NumPy's methods (0) in place:
    one dict update and one method-cache invalidation per class."""
    if not _draw_methods:
        _made_draw_methods()
    for cls, namespace, pair in _draw_methods:
        namespace.update(pair[which])
        ctypes.pythonapi.PyType_Modified(cls)
    _draws_changed[0] = bool(which)


def _scalar_test_wrappers():
    """{(numpy, "isscalar"): stand-in}: a 0-d active value answers as the
    NumPy scalar it stands for (``x[0]`` of a 1-d array, ``np.sum(x)``, a
    number given to ``grad``: np.float64 or float, for which NumPy says
    True); NumPy's own function would say False, and code branching on it
    (``if np.isscalar(T): ...``) would take another path than it does on
    plain values."""
    original = np.isscalar

    def isscalar(element):
        if isinstance(element, (Active, ComplexActive)) and creation.routed():
            return element.ndim == 0
        return original(element)
    return {(np, "isscalar"): named_like(isscalar, original)}


def _legacy_draw_wrappers():
    """{(numpy.random, name): stand-in} for the functions of NumPy's global
    RandomState (``np.random.normal`` is a method bound to it)."""
    made = {}
    owner = getattr(np.random.mtrand, "_rand", None)
    if type(owner) is not np.random.RandomState:
        return made
    for name in draws.supported():
        original = getattr(np.random, name, None)
        if getattr(original, "__self__", None) is owner:
            made[np.random, name] = draws.legacy_function(
                owner, vars(np.random.RandomState)[name], original, creation.routed)
    return made


class _ModuleHooks:
    """The hooks of one SciPy module, as the (function, code) pairs that
    install and remove them: one attribute store per function, no call."""

    __slots__ = ("installs", "removals")

    def __init__(self, made):
        self.installs = [(hook.function, hook.trampoline) for hook in made]
        self.removals = [(hook.function, hook.code) for hook in made]


def _make_hooks(scipy_module):
    made = []
    for (module, path), rule in hooks.rules(scipy_module).items():
        function = hooks._resolve(module, path)
        if function is not None:
            made.append(_Hook(function, rule))
            _known[function] = made[-1]
    return _ModuleHooks(made)


class _Hook:
    """One SciPy function (or NumPy method): its original code and keyword
    defaults, a copy of the original function, and the trampoline code that
    routes its calls."""

    def __init__(self, function, rule):
        self.function = function
        self.code = function.__code__
        self.kwdefaults = function.__kwdefaults__
        original = types.FunctionType(self.code, function.__globals__, function.__name__,
                                      function.__defaults__, function.__closure__)
        original.__kwdefaults__ = None if self.kwdefaults is None else dict(self.kwdefaults)
        original.__qualname__ = function.__qualname__
        choose = hooks.chooser(rule)
        routed = creation.routed

        def route(args, kwargs):
            if routed():
                takes_rule, args, kwargs = choose(args, kwargs)
                if takes_rule:
                    return rule(*args, **kwargs)
            return original(*args, **kwargs)
        # installed and removed by one store of __code__ (_ModuleHooks): every
        # call sees either SciPy's code or the trampoline, whole
        self.trampoline = _trampoline(self.code, route)


def unhooked(function):
    """(code, keyword defaults) of ``function`` as its library defines them,
    hooked or not (what fingerprints of a user's environment should see)."""
    hook = _known.get(function)
    if hook is None:
        return function.__code__, function.__kwdefaults__
    return hook.code, hook.kwdefaults


_ROUTE = "adsim: the route"        # placeholder constant of a trampoline's code
_TEMPLATES = {}


def _trampoline(code, route):
    """Code that calls ``route(args, kwargs)`` with the call's arguments. The
    route is one of its constants (a function's defaults and closure stay
    SciPy's), and it declares the free variables of ``code`` (a function's
    closure must match its code's)."""
    if code not in _TEMPLATES:
        free = code.co_freevars
        declare = f"        nonlocal {', '.join(free)}\n" if free else ""
        source = (f"def factory({', '.join(free)}):\n"
                  f"    def {code.co_name}(*args, **kwargs):\n"
                  f"{declare}"
                  f"        route = {_ROUTE!r}\n"
                  f"        return route(args, kwargs)\n"
                  f"    return {code.co_name}\n")
        namespace = {}
        exec(compile(source, f"<adsim route of {code.co_qualname}>", "exec"), namespace)
        template = namespace["factory"](*free).__code__
        assert template.co_freevars == free
        _TEMPLATES[code] = template
    template = _TEMPLATES[code]
    return template.replace(co_consts=tuple(
        route if type(c) is str and c == _ROUTE else c for c in template.co_consts))
