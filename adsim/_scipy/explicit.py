"""The explicit namespace ``adsim.scipy``, made from the rule tables.

``adsim.scipy.special.logsumexp``, ``adsim.scipy.linalg.solve``,
``adsim.scipy.stats.norm``, ... are SciPy's functions with adsim's rules,
reached by calling them rather than by changing SciPy (adsim/_record/interpose.py),
so they work with interposition off, and outside recordings as drop-in
replacements. Each module of adsim/scipy asks :func:`fill` for its names;
they come from the same tables the hooks are made from, so there is no
second list:

- a function of a ``HOOKS`` table (adsim/_scipy/hooks.py) becomes a function
  that runs the rule when the call takes it (:func:`hooks.chooser`: an active
  argument anywhere) and SciPy's function otherwise;
- a ``scipy.stats`` distribution that the rule module covers (its
  ``covers``: a row of distributions.py, or a multivariate distribution
  whose class has rules of its own) becomes an instance of
  a subclass whose hooked methods are routed the same way. SciPy's frozen
  distributions call the methods of a distribution of the same class, so
  ``adsim.scipy.stats.norm(loc, scale).logpdf(x)`` is routed too; a frozen
  object SciPy makes through a routed method (``multivariate_normal(m, C)``
  with plain arguments), and the distribution a multivariate frozen object
  delegates to, get the routed subclass of their class;
- a class a rule module lists in ``CLASSES`` (the interpolators of
  ``scipy.interpolate``) becomes its routed subclass, made the same way;
  a function's result that is a SciPy object (the spline
  ``make_interp_spline`` returns) gets the routed subclass of its class;
- a ``scipy.special`` ufunc with a rule (adsim/_np/special.py,
  adsim/_scipy/ufuncs.py) is SciPy's ufunc itself: NumPy hands active
  arguments to adsim; so is a public function whose private ufunc has one
  (``zeta``).

A name without a rule is not there: asking for it raises AttributeError
naming docs/scipy.md and SciPy's own function.
"""
import copy
import functools
import importlib
import threading
import types

import numpy as np

from . import hooks

_LOCK = threading.RLock()
_SUBCLASSES = {}          # SciPy class -> its routed subclass, or None (no hooked method)


def fill(namespace, scipy_module):
    """Put the explicit objects for ``scipy_module`` ("scipy.special") into
    the module dict ``namespace``; returns (``__all__``, ``__getattr__``)."""
    made = _made(scipy_module)
    namespace.update(made)
    return sorted(made), _missing(namespace["__name__"], scipy_module)


def _made(scipy_module):
    module = importlib.import_module(scipy_module)
    table = hooks.rules(scipy_module)
    out = {}
    for (where, path), rule in table.items():
        if where == scipy_module and "." not in path:
            function = hooks._resolve(where, path)
            if function is not None:            # (not in this SciPy version)
                out[path] = _function(rule, function, scipy_module)
    if any("." in path for _, path in table):   # methods: the objects of the module using them
        rule_module = hooks.rule_module(scipy_module)
        for name, obj in vars(module).items():
            if not name.startswith("_") and not isinstance(obj, type) and rule_module.covers(obj):
                cls = _subclass(type(obj), table, scipy_module)
                if cls is not None:
                    out[name] = _instance(obj, cls)
        for name in getattr(rule_module, "CLASSES", ()):     # classes users instantiate
            cls = _subclass(getattr(module, name), table, scipy_module)
            if cls is not None:
                out[name] = cls
    if scipy_module == "scipy.special":
        # a function with a rule of its own (spherical_jn, which converts its
        # argument before its private ufunc sees it) keeps it
        for name, obj in _special_ufuncs(module).items():
            out.setdefault(name, obj)
    return out


def _function(rule, function, scipy_module):
    choose = hooks.chooser(rule)
    table = hooks.rules(scipy_module)

    def explicit(*args, **kwargs):
        takes_rule, args, kwargs = choose(args, kwargs)
        out = rule(*args, **kwargs) if takes_rule else function(*args, **kwargs)
        return _routed_result(out, table, scipy_module)   # (a spline made by a function)
    functools.update_wrapper(explicit, function)
    explicit.__module__ = f"adsim.{scipy_module}"
    explicit.__qualname__ = function.__name__
    explicit.__doc__ = (f"{scipy_module}.{function.__name__} with adsim's rule on active "
                        f"arguments (SciPy's own function otherwise).\n\n"
                        f"{function.__doc__ or ''}")
    return explicit


# ---------------------------------------------------------------- scipy.stats

def _subclass(cls, table, scipy_module="scipy.stats"):
    """``cls`` with the methods that have a rule in ``table`` (of
    ``scipy_module``) routed (made once), or None where it has none."""
    if cls not in _SUBCLASSES:
        with _LOCK:
            if cls not in _SUBCLASSES:
                _SUBCLASSES[cls] = _make_subclass(cls, table, scipy_module)
    return _SUBCLASSES[cls]


def _make_subclass(cls, table, scipy_module):
    names = {path.rsplit(".", 1)[1] for _, path in table if "." in path}
    methods = {}
    for name in names:
        for klass in cls.__mro__:                  # the method Python would call
            if name in vars(klass):
                rule = table.get((klass.__module__, f"{klass.__qualname__}.{name}"))
                original = vars(klass)[name]
                if rule is not None and isinstance(original, types.FunctionType):
                    methods[name] = _method(rule, original, table, scipy_module)
                elif rule is not None and isinstance(original, property):     # spl.c
                    methods[name] = property(_method(rule, original.fget, table, scipy_module),
                                             original.fset, original.fdel, original.__doc__)
                break
    if not methods:
        return None
    return type(cls.__name__, (cls,), {
        **methods, "__module__": f"adsim.{scipy_module}", "__reduce__": _reduce,
        "_adsim_rules_of": scipy_module,
        "__doc__": f"{cls.__module__}.{cls.__qualname__} with adsim's rules on active "
                   f"arguments in {', '.join(sorted(methods))}."})


def _reduce(self):
    """Pickled (and copied) as SciPy's object of the base class, routed again
    when loaded."""
    return _routed_again, (type(self).__bases__[0], self.__getstate__(), self._adsim_rules_of)


def _routed_again(base, state, scipy_module):
    """An object of ``base`` with the ``state`` of ``__getstate__`` (a dict,
    or a pair (dict, slots) for classes with ``__slots__``), routed."""
    plain = object.__new__(base)
    if hasattr(base, "__setstate__"):          # the class's own (scipy.stats)
        plain.__setstate__(state)
    else:
        attributes, slots = state if isinstance(state, tuple) else (state, None)
        plain.__dict__.update(attributes or {})
        for name, value in (slots or {}).items():
            setattr(plain, name, value)
    plain.__class__ = _subclass(base, hooks.rules(scipy_module), scipy_module)
    return plain


def _method(rule, original, table, scipy_module):
    choose = hooks.chooser(rule)

    def method(self, *args, **kwargs):
        takes_rule, args, kwargs = choose((self,) + args, kwargs)
        if takes_rule:
            return rule(*args, **kwargs)
        return _routed_result(original(*args, **kwargs), table, scipy_module)
    functools.update_wrapper(method, original)
    return method


def _instance(obj, cls):
    """A copy of SciPy's distribution ``obj`` of the routed class ``cls``."""
    twin = copy.copy(obj)
    twin.__class__ = cls
    return twin


def _routed_result(out, table, scipy_module):
    """An object SciPy's code made in a routed method (a frozen
    distribution), and the distribution it delegates to, routed too."""
    for obj in (out, getattr(out, "_dist", None)):
        if type(obj).__module__.startswith("scipy."):
            cls = _subclass(type(obj), table, scipy_module)
            if cls is not None:
                obj.__class__ = cls
    return out


# ---------------------------------------------------------------- scipy.special ufuncs

def _special_ufuncs(module):
    """The public ufuncs of scipy.special with a rule, and the public
    functions named after a private one with a rule (``zeta`` for its
    ``_zeta``), as SciPy has them."""
    from .._np.special import special_ufunc
    from .ufuncs import scipy_ufunc

    def has_rule(u):
        return special_ufunc(u) is not None or scipy_ufunc(u) is not None
    out = {}
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, np.ufunc) and has_rule(obj):
            out[name] = obj
    for obj in list(vars(module).values()) + list(vars(module._ufuncs).values()):
        if isinstance(obj, np.ufunc) and obj.__name__.startswith("_") and has_rule(obj):
            public = getattr(module, obj.__name__.lstrip("_"), None)
            if isinstance(public, types.FunctionType):
                out[public.__name__] = public
    return out


# ---------------------------------------------------------------- names without a rule

def _missing(module_name, scipy_module):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        module = importlib.import_module(scipy_module)
        where = (f"call {scipy_module}.{name} itself: written with NumPy functions it is "
                 f"recorded through them, otherwise it raises UnsupportedOperation naming "
                 f"itself on an active argument; or call it on adsim.value(x)"
                 if hasattr(module, name) else f"{scipy_module} has no {name!r} either")
        raise AttributeError(
            f"module {module_name!r} has no attribute {name!r}: adsim has no rule for "
            f"{scipy_module}.{name} (docs/scipy.md lists the functions with rules, "
            f"{module_name}.__all__ holds them); {where}")
    return __getattr__
