"""What a Python function's bytecode reads, for the functional API's cache.

For one code object (and the code objects nested in it: lambdas,
comprehensions, inner functions) this finds the global names it loads, the
parameters it never reads, and calls that make its result depend on more
than its arguments and environment (random generators it creates, clocks,
files) or that read variables by name at run time (``locals()``, ``eval``).
The analysis is cached per code object.
"""
import dis
import threading
import types
from collections import OrderedDict

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08

# Names whose use lets code read its own parameters without a visible load.
_FRAME_NAMES = frozenset({"locals", "vars", "exec", "eval", "globals", "_getframe",
                          "currentframe", "f_locals", "f_back", "stack", "super"})
# Names whose use lets code read globals that no LOAD_GLOBAL names.
_DYNAMIC_GLOBAL_NAMES = frozenset({"exec", "eval", "globals"})
# Calls whose results are not fixed by the arguments and the environment:
# fresh random generators, clocks, files, user input.
_EXTERNAL_NAMES = frozenset({
    "default_rng", "SeedSequence", "RandomState", "Generator", "PCG64", "PCG64DXSM",
    "MT19937", "Philox", "SFC64", "SystemRandom", "urandom", "getrandom", "token_bytes",
    "token_hex", "token_urlsafe", "randbits", "uuid1", "uuid4", "time_ns", "perf_counter",
    "perf_counter_ns", "monotonic", "monotonic_ns", "process_time", "thread_time", "now",
    "utcnow", "today", "open", "input", "fromfile", "loadtxt", "genfromtxt", "load"})
# Names through which code finds modules and their functions at run time, where
# no walk of its environment sees them: ``__import__("scipy.special")``,
# ``sys.modules[...]``, ``getattr(module, name)``.
_LOOKUP_NAMES = frozenset({"__import__", "import_module", "modules", "getattr",
                           "__getattribute__", "attrgetter", "methodcaller", "__dict__", "eval",
                           "exec", "globals", "vars"})
_STORES = frozenset({"STORE_FAST", "STORE_DEREF", "STORE_FAST_STORE_FAST"})
_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})

_CACHE_SIZE = 4096         # code objects whose analysis is kept


class CodeInfo:
    """The facts about one code object the tape cache needs.

    Attributes
    ----------
    global_names : tuple of str
        Globals (or builtins) loaded by name, here or in nested code.
    unused : frozenset of str
        Parameters never read (empty when the code reads its frame or takes
        ``*args``/``**kwargs``).
    positional : tuple of str
        Names of the positional parameters, in order.
    external : str or None
        A name the code calls whose result depends on outside state (a new
        random generator, a clock, a file), or None.
    dynamic_globals : str or None
        ``eval``/``exec``/``globals`` if the code reads globals by computed
        names, else None.
    names : tuple of str
        Every name the code (or nested code) loads by name: globals and
        attributes (``config.k`` reads ``k`` of the module ``config``).
    imports : bool
        Whether the code imports a module or looks objects up by computed
        names (``import``, ``__import__``, ``getattr``, ``sys.modules``):
        it may call functions its environment does not hold.
    lookups : bool
        Whether the code finds attributes by computed names (``getattr``,
        ``vars``, ``__dict__``, ...): it may read any attribute of a module.
    imported : tuple of str
        The module names its ``import`` statements spell (``""`` for
        ``from . import x``; relative names without their dots).
    """

    __slots__ = ("global_names", "unused", "positional", "external", "dynamic_globals",
                 "names", "imports", "lookups", "imported")

    def __init__(self, code):
        globals_, reads, names, imported = {}, set(), set(), {}
        for c in _code_tree(code):
            names.update(c.co_names)
            reads.update(c.co_cellvars)        # captured by nested code
            if _varname is None:
                _scan_by_dis(c, globals_, reads, imported)
            else:
                _scan(c, globals_, reads, imported)
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        params = code.co_varnames[:n_pos + n_kw]
        opaque = code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS) or names & _FRAME_NAMES
        self.global_names = tuple(globals_)
        self.positional = code.co_varnames[:n_pos]
        self.unused = frozenset() if opaque else frozenset(p for p in params if p not in reads)
        self.external = min(names & _EXTERNAL_NAMES, default=None)
        self.dynamic_globals = min(names & _DYNAMIC_GLOBAL_NAMES, default=None)
        self.names = tuple(sorted(names))
        self.lookups = not names.isdisjoint(_LOOKUP_NAMES)
        self.imports = bool(imported) or self.lookups
        self.imported = tuple(imported)


def _scan(code, globals_, reads, imported):
    """Note the globals ``code`` loads, the locals it reads and the modules it
    imports (dicts as ordered sets), read from ``co_code`` directly where the
    interpreter offers what ``dis`` itself uses to name locals: about six
    times faster than ``dis`` for a small function (a first recording
    analyses every new code object)."""
    raw, names, extended = code.co_code, code.co_names, 0
    for i in range(0, len(raw), 2):
        op = raw[i]
        kind = _KINDS[op]
        if not kind:
            extended = 0
            continue
        arg = raw[i + 1] | extended
        if kind is _EXTENDED:
            extended = arg << 8
            continue
        extended = 0
        if kind is _READ:
            reads.add(_varname(code, arg))
        elif kind is _GLOBAL:
            globals_[names[arg >> _GLOBAL_SHIFT]] = None
        elif kind is _PAIRED_READ:          # two 4-bit local indices in one argument
            reads.add(_varname(code, arg >> 4))
            reads.add(_varname(code, arg & 15))
        elif kind is _NAME:
            globals_[names[arg]] = None
        else:                               # _IMPORT
            imported[names[arg]] = None


def _scan_by_dis(code, globals_, reads, imported):
    """:func:`_scan` through ``dis`` (an interpreter without the fast way)."""
    for ins in dis.get_instructions(code):
        kind = _KINDS[ins.opcode]
        if kind is _GLOBAL or kind is _NAME:
            globals_[ins.argval] = None
        elif kind is _IMPORT:
            imported[ins.argval] = None
        elif kind is _READ or kind is _PAIRED_READ:
            reads.update(_strings(ins.argval))


_varname = getattr(types.CodeType, "_varname_from_oparg", None)
_GLOBAL_SHIFT = 1       # LOAD_GLOBAL's argument holds the name's index shifted (3.11 on)
# what the scan does with each opcode (None: nothing)
_EXTENDED, _GLOBAL, _NAME, _IMPORT, _READ, _PAIRED_READ = "extended", "global", "name", \
    "import", "read", "paired read"
_PAIRED = frozenset({"LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"})


def _kind(op):
    name = dis.opname[op]
    if op == dis.EXTENDED_ARG:
        return _EXTENDED
    if name == "LOAD_GLOBAL":
        return _GLOBAL
    if name == "LOAD_NAME":
        return _NAME
    if name == "IMPORT_NAME":
        return _IMPORT
    if op in dis.haslocal or op in dis.hasfree:
        if name in _STORES:
            return None
        return _PAIRED_READ if name in _PAIRED else _READ
    return None


_KINDS = tuple(_kind(op) for op in range(256))


def _code_tree(code):
    stack = [code]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _strings(argval):
    if isinstance(argval, str):
        return (argval,)
    if isinstance(argval, tuple):
        return tuple(a for a in argval if isinstance(a, str))
    return ()


_infos = OrderedDict()
_lock = threading.Lock()


def code_info(code):
    """The (cached) :class:`CodeInfo` of a code object."""
    info = _infos.get(code)
    if info is None:
        info = CodeInfo(code)
        with _lock:
            _infos[code] = info
            if len(_infos) > _CACHE_SIZE:
                _infos.popitem(last=False)
    return info


def unused_parameters(f):
    """Names of ``f``'s parameters it provably never reads; empty unless
    ``f`` is a plain Python function."""
    if type(f) is not types.FunctionType:
        return frozenset()
    return code_info(f.__code__).unused
