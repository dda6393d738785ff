"""The refusal of a library function (SciPy's, the outermost on the stack)
that turned an active array into a plain one: an active argument of it,
or, when none of its arguments is active, the value a function it calls
returned (an integrand reading a closure), which says what to use instead."""
import inspect

from .._np.core import active_leaves
from .callers import entry_frame, forget_locals

__all__ = ["library_leak_message"]

# what to use instead, per package, when a function's active value reaches a
# SciPy function adsim has no rule for
_INSTEAD = {"scipy.integrate.": "scipy.integrate.quad or quad_vec for an integral, which adsim "
                                "differentiates in the values the integrand reads",
            "scipy.differentiate.": "adsim.grad, adsim.jvp or adsim.jacobian of the function "
                                    "itself, which can be differentiated again",
            "scipy.optimize.": "scipy.optimize.minimize, root or brentq, which adsim "
                               "differentiates in the values the function reads"}


def _arguments(frame):
    """{name: value} of the arguments ``frame``'s function was called with
    (its ``*args`` and ``**kwargs`` too), as they stand now."""
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    local = frame.f_locals
    found = {name: local[name] for name in code.co_varnames[:n] if name in local}
    forget_locals(frame)
    return found


def _callbacks(arguments):
    """How the functions among ``arguments`` (the library calls them) are
    named: by their argument, or by their own name when they come in
    ``*args`` or ``**kwargs``."""
    names = []
    for name, v in arguments.items():
        if name in ("self", "cls"):         # the object a method is called on
            continue
        if callable(v) and not isinstance(v, type):
            names.append(name)
        elif isinstance(v, (tuple, dict)):
            names += [getattr(f, "__name__", type(f).__name__)
                      for f in (v.values() if isinstance(v, dict) else v)
                      if callable(f) and not isinstance(f, type)]
    return names


def library_leak_message(entry, shape):
    """The message for ``entry`` (``scipy.integrate.tanhsinh``) turning an
    active array of ``shape`` into a plain NumPy array."""
    from .._scipy.hooks import has_rule         # adsim/_scipy sits above this layer
    frame = entry_frame()
    arguments = _arguments(frame) if frame is not None else {}
    callbacks = _callbacks(arguments)
    if frame is None or active_leaves(list(arguments.values())) or not callbacks:
        return (f"adsim: cannot differentiate `{entry}`: it turns its active argument (shape "
                f"{shape}) into a plain NumPy array, which would drop its derivative. Write it "
                f"with the NumPy functions adsim supports (docs/numpy.md), register a primitive "
                f"with adsim.primitive, or call it on adsim.value(x) if no derivative is wanted")
    which = ", ".join(f"`{name}`" for name in callbacks)
    head = (f"adsim: cannot differentiate `{entry}`: no argument of it has a derivative, but a "
            f"function it calls ({which}) returned an active value (shape {shape}), one that "
            f"function reads from outside its arguments (a closure, an object, a global), and "
            f"`{entry}` turned it into a plain NumPy array, which would drop its derivative. ")
    if has_rule(entry):
        return head + (f"adsim differentiates `{entry}`, but did not find that value where it "
                       f"searches (closures, module globals, functools.partial arguments and "
                       f"the attributes of objects, also in dicts, lists and tuples of up to 256 "
                       f"entries): pass such values through the call's args=")
    instead = next((v for k, v in _INSTEAD.items() if entry.startswith(k)), None)
    return head + (f"adsim has no rule for `{entry}`: " +
                   (f"use {instead}, or " if instead else "") +
                   f"register a primitive with adsim.primitive that computes it with its "
                   f"derivative, or let the function read plain values (adsim.value(k)) if no "
                   f"derivative is wanted")
