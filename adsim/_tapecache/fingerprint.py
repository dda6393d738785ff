"""Fingerprints of primitives, stored with their names in tape files.

A name alone does not identify a primitive: a function that makes
primitives (for a permutation, a tolerance, ...) makes several under one
name, and two lambdas of one function share a qualified name. So a tape file
stores, besides the name, a SHA-256 of what the primitive computes with:
its flags; the code of its value, jvp and vjp functions; the values they
capture (closures, defaults, ``functools.partial`` arguments: exactly, array
contents included); and the module-level values their code reads (arrays
and numbers exactly, functions recursively, modules and classes by name,
other objects by their type). Where functions were defined (module and
qualified name) is left out, so a module imported under another name still
matches. Loading uses only a primitive of the same name and fingerprint.

Captured values that cannot be identified (an arbitrary object in a
closure) make the primitive unsaveable rather than ambiguous. Bytecode is
part of the fingerprint, so a tape loads with the same Python version.
Non-Python callables (NumPy dispatchers, builtins) are identified by module
and qualified name when they can be imported back that way, ufuncs by their
name and loops.
"""
import functools
import hashlib
import sys
import types

import numpy as np

_MAX_DEPTH = 40


def fingerprint(prim):
    """The hex SHA-256 fingerprint of ``prim``; TypeError saying what in its
    rules cannot be identified."""
    return hashlib.sha256(repr(_Describer().primitive(prim, 0)).encode()).hexdigest()


class _Describer:
    """Turns an object into nested tuples of plain values (see the module
    docstring); ``strict`` objects are captured state, which must be
    identified exactly."""

    def __init__(self):
        self.active = set()           # ids being described (cycles through globals)

    def primitive(self, prim, depth):
        self.active.add(id(prim))
        try:
            rules = tuple(self(f, depth + 1, True) for f in (prim.value, prim.jvp, prim.vjp))
        finally:
            self.active.discard(id(prim))
        return ("primitive", prim.name, bool(prim.linear), bool(prim.elementwise),
                tuple(prim.nondiff_argnums), rules)

    def __call__(self, obj, depth, strict):
        if depth > _MAX_DEPTH:
            raise TypeError("its rules reach values nested too deeply to identify")
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            return (type(obj).__name__, repr(obj))
        if isinstance(obj, np.generic):
            return ("scalar", obj.dtype.str, obj.tobytes())
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                raise TypeError("its rules capture an array of Python objects")
            data = hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()
            return ("array", obj.dtype.str, obj.shape, data)
        if isinstance(obj, np.ufunc):            # SciPy's have no module: name and loops
            return ("ufunc", obj.__name__, obj.nin, obj.nout, tuple(obj.types))
        if isinstance(obj, (types.ModuleType, type)):
            return ("name", getattr(obj, "__module__", None), getattr(obj, "__qualname__",
                                                                      obj.__name__))
        if id(obj) in self.active:
            return ("cycle", getattr(obj, "__qualname__", None) or getattr(obj, "name", None))
        self.active.add(id(obj))
        try:
            return self._compound(obj, depth + 1, strict)
        finally:
            self.active.discard(id(obj))

    def _compound(self, obj, depth, strict):
        if isinstance(obj, (tuple, list)):
            return (type(obj).__name__, tuple(self(x, depth, strict) for x in obj))
        if isinstance(obj, (set, frozenset)):
            return ("set", tuple(sorted(repr(self(x, depth, strict)) for x in obj)))
        if isinstance(obj, dict):
            return ("dict", tuple(sorted((repr(self(k, depth, strict)), self(v, depth, strict))
                                         for k, v in obj.items())))
        if getattr(type(obj), "fingerprinted_by_rules", False):      # an adsim primitive
            return self.primitive(obj, depth)
        if isinstance(obj, types.FunctionType):
            return self._function(obj, depth)
        if isinstance(obj, functools.partial):
            return ("partial", self(obj.func, depth, True), self(obj.args, depth, True),
                    self(obj.keywords, depth, True))
        if isinstance(obj, types.MethodType):
            return ("method", self(obj.__func__, depth, strict), self(obj.__self__, depth, strict))
        named = _by_reference(obj)
        if named is not None:
            return ("ref",) + named
        if strict:
            raise TypeError(f"its rules capture a {type(obj).__module__}."
                            f"{type(obj).__qualname__} object, which cannot be identified")
        return ("object", type(obj).__module__, type(obj).__qualname__)

    def _function(self, f, depth):
        code = f.__code__
        cells = tuple(self(_cell(c), depth, True) for c in (f.__closure__ or ()))
        read = sorted(n for n in _global_names(code) if n in f.__globals__)
        globals_ = tuple((n, self(f.__globals__[n], depth, False)) for n in read)
        return ("function", _code(code), self(f.__defaults__, depth, True),
                self(f.__kwdefaults__, depth, True), cells, globals_)


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:                # a variable not yet bound
        return None


def _code(code):
    return ("code", code.co_code, tuple(_const(c) for c in code.co_consts), code.co_names,
            code.co_argcount, code.co_kwonlyargcount)


def _const(c):
    """A constant of compiled code, the same in every process (the order of a
    frozenset's elements depends on string hashing)."""
    if isinstance(c, types.CodeType):
        return _code(c)
    if isinstance(c, (frozenset, set)):
        return ("set", tuple(sorted(repr(_const(x)) for x in c)))
    if isinstance(c, tuple):
        return ("tuple", tuple(_const(x) for x in c))
    return repr(c)


def _global_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _by_reference(obj):
    """(module, qualified name) when importing that name gives ``obj`` back."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or module not in sys.modules:
        return None
    found = sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return (module, qualname) if found is obj else None
