"""SciPy functions written in Python, reached unchanged while adsim records.

``scipy.linalg.solve_triangular``, ``scipy.special.logsumexp`` or the methods
of ``scipy.stats.norm`` are plain Python functions: NumPy's override
protocols never see them, and their first line, ``np.asarray(x)``, would
turn an active argument into a plain array (which adsim refuses, naming the
function). Users hold these functions under any name (``from scipy.special
import logsumexp``, ``sla.solve_triangular``, the instance ``norm``), so
rebinding module attributes would miss most calls. Instead, while any
thread records, each function listed in a rule table has its *code*
replaced by a small trampoline: the function object stays the same (every
name reaches it), and a call with an active argument anywhere in its
arguments (nested lists, tuples and dicts included) goes to adsim's rule,
every other call to SciPy's original code. The trampoline keeps the
function's closure (it declares the same free variables) and finds its
route in the function's keyword defaults, next to SciPy's own; both are put
back when the last recording ends.

Reach: the functions of the tables in adsim/_scipy/ (see docs/scipy.md), in
SciPy modules imported before a recording starts. Other SciPy functions run
as they are: those written with NumPy functions adsim supports are recorded
through them; those that convert an active argument to a plain array raise
``UnsupportedOperation`` naming themselves. While hooked, ``inspect``
shows a hooked function's signature as ``(*args, **kwargs)`` unless it
carries ``__wrapped__``.
"""
import importlib
import sys
import threading
import types

from .._np.core import active_leaves
from ..primitives import make_on_demand

# SciPy module -> adsim module holding its rule table ``HOOKS``, a dict
# {(module, "function" or "Class.method"): rule}
_TABLES = {"scipy.linalg": "adsim._scipy.linalg", "scipy.special": "adsim._scipy.special",
           "scipy.stats": "adsim._scipy.stats", "scipy.signal": "adsim._scipy.signal",
           "scipy.spatial.distance": "adsim._scipy.distance",
           "scipy.optimize": "adsim._scipy.optimize", "scipy.integrate": "adsim._scipy.integrate"}
# the rule modules make primitives named after SciPy's functions
# ("scipy.linalg.expm"): a tape file naming one imports its module
for _module, _table in _TABLES.items():
    make_on_demand(f"{_module}.", lambda table=_table: importlib.import_module(table))
_lock = threading.Lock()
_users = {"count": 0}
_made = {}                # SciPy module -> its hooks, made when first seen imported
_known = {}               # function -> its _Hook (installed or not)
_installed = set()        # SciPy modules whose hooks are in place


class installed:
    """``with installed():`` the hooked SciPy functions route active calls to
    adsim (reference counted over threads and nested recordings)."""

    def __enter__(self):
        with _lock:
            _users["count"] += 1
            for scipy_module, table in _TABLES.items():
                if scipy_module in _installed or scipy_module not in sys.modules:
                    continue          # (a module imported meanwhile is hooked at the next one)
                if scipy_module not in _made:
                    _made[scipy_module] = _make_hooks(table)
                for hook in _made[scipy_module]:
                    hook.install()
                _installed.add(scipy_module)
        return self

    def __exit__(self, *exc):
        with _lock:
            _users["count"] -= 1
            if _users["count"] == 0:
                for scipy_module in _installed:
                    for hook in _made[scipy_module]:
                        hook.remove()
                _installed.clear()
        return False


def _make_hooks(table):
    hooks = []
    for (module, path), rule in importlib.import_module(table).HOOKS.items():
        function = _resolve(module, path)
        if function is not None:
            hooks.append(_Hook(function, rule))
            _known[function] = hooks[-1]
    return hooks


def _resolve(module, path):
    """The Python function at ``module.path``; None where this SciPy version
    has none (nothing to route then)."""
    obj = sys.modules.get(module) or importlib.import_module(module)
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, types.FunctionType) else None


class _Hook:
    """One hooked function: its original code and keyword defaults, and a
    copy of the original function the trampoline calls."""

    def __init__(self, function, rule):
        self.function = function
        self.code = function.__code__
        self.kwdefaults = function.__kwdefaults__
        original = types.FunctionType(self.code, function.__globals__, function.__name__,
                                      function.__defaults__, function.__closure__)
        original.__kwdefaults__ = None if self.kwdefaults is None else dict(self.kwdefaults)
        original.__qualname__ = function.__qualname__

        routes_also = getattr(rule, "routes_also", None)   # active values out of reach

        def route(args, kwargs):
            if active_leaves((args, kwargs)) or routes_also is not None and \
                    routes_also(args, kwargs):
                return rule(*args, **kwargs)
            return original(*args, **kwargs)
        self.routed_kwdefaults = {**(self.kwdefaults or {}), "_adsim_route": route}
        self.trampoline = _trampoline(self.code)

    def install(self):
        # extra keyword defaults first, then the code: every call sees a
        # consistent pair (SciPy's code ignores the extra default)
        self.function.__kwdefaults__ = self.routed_kwdefaults
        self.function.__code__ = self.trampoline

    def remove(self):
        self.function.__code__ = self.code
        self.function.__kwdefaults__ = self.kwdefaults


def unhooked(function):
    """(code, keyword defaults) of ``function`` as its library defines them,
    hooked or not (what fingerprints of a user's environment should see)."""
    hook = _known.get(function)
    if hook is None:
        return function.__code__, function.__kwdefaults__
    return hook.code, hook.kwdefaults


_TRAMPOLINES = {}


def _trampoline(code):
    """Code that calls its ``_adsim_route`` keyword default with the call's
    arguments, declaring the free variables of ``code`` (a function's
    closure must match its code's)."""
    if code not in _TRAMPOLINES:
        free = code.co_freevars
        declare = f"        nonlocal {', '.join(free)}\n" if free else ""
        source = (f"def factory({', '.join(free)}):\n"
                  f"    def {code.co_name}(*args, _adsim_route, **kwargs):\n"
                  f"{declare}"
                  f"        return _adsim_route(args, kwargs)\n"
                  f"    return {code.co_name}\n")
        namespace = {}
        exec(compile(source, f"<adsim route of {code.co_qualname}>", "exec"), namespace)
        trampoline = namespace["factory"](*free).__code__
        assert trampoline.co_freevars == free
        _TRAMPOLINES[code] = trampoline
    return _TRAMPOLINES[code]
