"""The refusal of a library function (SciPy's, the outermost on the stack)
that turned an active array into a plain one: an active argument of it,
or, when none of its arguments is active, the value a function it calls
returned (an integrand reading a closure), which says what to use instead."""
import inspect

from .._np.core import active_leaves, tape_of
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
    """{name: value} of the arguments ``frame``'s function was called with,
    as they stand now, its ``*args`` spread (named by position) and its
    ``**kwargs`` spread (by keyword): the entry may be a wrapper."""
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:n])
    star = code.co_varnames[n] if code.co_flags & inspect.CO_VARARGS else None
    n += star is not None
    keywords = code.co_varnames[n] if code.co_flags & inspect.CO_VARKEYWORDS else None
    local = frame.f_locals
    found = {name: local[name] for name in names if name in local}
    if star in local:
        found.update({f"{star}[{i}]": v for i, v in enumerate(local[star])})
    if keywords in local:
        found.update(local[keywords])
    forget_locals(frame)
    return found


def _varied(values):
    """Whether ``values`` hold an active array with a derivative (arrays made
    in the recorded function, ``np.ones(n)``, are active without one)."""
    return any(tape_of(v).slot_is_varied(v.slot) for v in active_leaves(values))


def _callbacks(arguments):
    """{name: function} of the functions among ``arguments`` (the library
    calls them), named by their argument or, given by position to a
    wrapper, by their own name; not the object a method is called on."""
    return {name if name.isidentifier() else getattr(f, "__name__", name): f
            for name, f in arguments.items()
            if name not in ("self", "cls") and callable(f) and not isinstance(f, type)}


def _sparse_matrices(arguments, callbacks):
    """Where the call holds a scipy.sparse matrix of active values: the
    arguments holding one (in a container or an object too), and the
    functions reading one from outside their arguments ("" if none)."""
    from .._containers.matrix_args import holds_recorded_matrix, matrix_or_holding
    from .._nesting.outer_values import outer_slots
    where = [f"argument `{name}`" for name, v in arguments.items()
             if not callable(v) and holds_recorded_matrix(v)]
    where += [f"read by `{name}`" for name, f in callbacks.items()
              if outer_slots(f, matrix_or_holding)]
    return ", ".join(where)


def library_leak_message(entry, shape):
    """The message for ``entry`` (``scipy.integrate.tanhsinh``) turning an
    active array of ``shape`` into a plain NumPy array."""
    from .._scipy.hooks import has_rule         # adsim/_scipy sits above this layer
    frame = entry_frame()
    arguments = _arguments(frame) if frame is not None else {}
    callbacks = _callbacks(arguments)
    if frame is None or _varied(list(arguments.values())) or not callbacks:
        return (f"adsim: cannot differentiate `{entry}`: it turns its active argument (shape "
                f"{shape}) into a plain NumPy array, which would drop its derivative. Write it "
                f"with the NumPy functions adsim supports (docs/numpy.md), register a primitive "
                f"with adsim.primitive, or call it on adsim.value(x) if no derivative is wanted")
    which = ", ".join(f"`{name}`" for name in callbacks)
    matrices = _sparse_matrices(arguments, callbacks)
    if matrices:
        return (f"adsim: cannot differentiate `{entry}` given a scipy.sparse matrix of active "
                f"values ({matrices}): adsim takes such a matrix, as an argument or where the "
                f"function reads it, in solve_ivp, odeint, minimize and checkpoint_loop, not "
                f"in `{entry}`. Pass its active factor instead (k for k * L) and write "
                f"k * (L @ y) in the function, or pass the matrix dense (A.toarray())")
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
