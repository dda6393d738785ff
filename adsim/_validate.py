"""Argument checks shared by every entry point (one source of the rules).

``real_array`` is what an input, a direction or a weight must be: real
numeric data, converted to float64. ``argnums`` / ``resolve_argnums`` give
``argnums`` Python's indexing rules. ``function`` is what every entry point
taking a function checks it with; ``flag`` and ``count`` check options.
Messages name the entry point, the argument, what was given (``given``)
and what is accepted.
"""
import functools
import inspect
import types
from operator import index

import numpy as np

from ._array_kinds import refuse as refuse_subclass
from ._containers.tree import is_container, uneven_numbers
from .errors import (InvalidArgnums, InvalidArgument, InvalidArgumentValue, InvalidInput,
                     NotCallable)

_FLOAT64 = np.dtype(np.float64)


def name_of(f):
    """A function's name for messages."""
    return getattr(f, "__name__", None) or type(f).__name__


def given(value):
    """``value`` as messages show what was given: a short repr and the type,
    arrays by shape and dtype."""
    if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
        return f"the function {name_of(value)}"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None and not isinstance(value, np.generic):
        return f"an array of shape {shape} ({dtype})"
    try:
        text = repr(value)
    except Exception:                   # a repr that fails says nothing more than the type
        return f"a {type(value).__name__} object"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


# entry points called at a point, which a caller used to autograd's
# hessian_vector_product(f) or make_jvp(f) may call with the function alone
_FUNCTION_ALONE = {
    "hvp": "for the function (x, v) -> H v (as SciPy's hessp= takes it), use adsim.hessp(f)",
    "grad_and_hvp": "for a function of the point, use adsim.hessp(f) and adsim.grad(f)",
    "jvp": "for a function of the point, write lambda x, v: adsim.jvp(f, x, v)",
    "vjp": "for a function of the point, write lambda x, w: adsim.vjp(f, x, w)",
}


def entry_point(fn):
    """``fn`` (a public function) with calls that do not fit its signature
    (too few or too many positional arguments, an unknown keyword) refused
    with :class:`adsim.errors.InvalidArgument` showing the signature. A
    TypeError raised inside ``fn``, or inside the user's function it calls,
    passes unchanged: only one raised before ``fn`` runs is a misfit."""
    form = f"adsim.{fn.__name__}{inspect.signature(fn)}"
    alone = _FUNCTION_ALONE.get(fn.__name__)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as err:
            if err.__traceback__.tb_next is not None:       # raised inside fn
                raise
            why = str(err).split("() ", 1)[-1]               # without Python's name of fn
            hint = f" ({alone})" if alone and len(args) == 1 and not kwargs else ""
            raise InvalidArgument(f"{form}: {why}; call it as its signature says{hint}") \
                from None
    return checked


def _where(entry):
    return f"adsim.{entry}: " if entry else "adsim: "


def function(f, entry, name="f", usage=""):
    """``f`` if it can be called; else :class:`adsim.errors.NotCallable`
    naming the entry point (``"grad"`` for adsim.grad), the argument ``name``, what was
    given and ``usage`` (how the entry point is called)."""
    if callable(f):
        return f
    raise NotCallable(f"{_where(entry)}{name} must be a callable (a function), got {given(f)}. "
                      f"Pass the function itself" + (f": {usage}" if usage else ""))


def flag(value, name, entry):
    """``value`` as a bool: True, False (or NumPy's bools); anything else
    raises :class:`adsim.errors.InvalidArgument` naming ``name``."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InvalidArgument(f"{_where(entry)}{name} must be True or False, got {given(value)}")


def count(value, name, entry=None, minimum=0, accepted=""):
    """``value`` as an int >= ``minimum``, with NumPy's rule for counts (no
    floats, no bools): :class:`adsim.errors.InvalidArgument` for another
    type, :class:`adsim.errors.InvalidArgumentValue` below ``minimum``.
    ``accepted`` (a sentence) adds what else to do."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            value = index(value)
        except TypeError:
            pass
        else:
            if value < minimum:
                raise InvalidArgumentValue(f"{_where(entry)}{name} must be >= {minimum}, got "
                                           f"{value}{accepted}")
            return value
    raise InvalidArgument(f"{_where(entry)}{name} must be an integer >= {minimum} (an int or "
                          f"a NumPy integer, not a float or a bool), got {given(value)}{accepted}")


def real_array(x, what):
    """``x`` as a float64 array; integers and booleans convert. Complex data,
    ``None``, ragged sequences and object, string or datetime arrays raise
    :class:`adsim.errors.InvalidInput` naming ``what``. So does a container
    of arrays (where one array is needed: the message says where containers
    are accepted)."""
    if type(x) is np.ndarray and x.dtype is _FLOAT64:
        return x
    if x is None:
        raise InvalidInput(f"adsim: {what} is None; pass a float64 array or a number")
    refuse_subclass(x, what)
    if is_container(x):
        kind = f"a {type(x).__name__} of plain numbers nested unevenly, which NumPy reads as " \
            f"no array, so it is a container of its items" if uneven_numbers(x) else \
            f"a container ({type(x).__name__} of arrays or containers)"
        raise InvalidInput(f"adsim: {what} is {kind}, where one array is needed; pass one "
                           f"float64 array. "
                           f"Containers (list, tuple, dict, namedtuple of arrays) are accepted "
                           f"as arguments, directions and return values by grad, value_and_grad, "
                           f"jvp, vjp, hvp, jacobian, hessian and adsim.testing.check_grads, "
                           f"and as arguments by adsim.record")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as err:       # ragged nested sequences
        raise InvalidInput(f"adsim: {what} is not an array of numbers ({err}); pass a "
                           f"float64 array") from err
    kind = arr.dtype.kind
    if kind in "biuf":
        return arr.astype(np.float64, copy=False)
    if kind == "c":
        raise InvalidInput(f"adsim: {what} is complex ({arr.dtype}); adsim differentiates real "
                           f"float64 code: split it into real and imaginary parts")
    if arr.dtype == object and arr.ndim == 0:
        raise InvalidInput(
            f"adsim: {what} is a {type(x).__name__} object, not numbers: adsim differentiates "
            f"with respect to float64 arrays and containers of them (list, tuple, dict, "
            f"namedtuple); pass its parameters as one of those (for a dataclass, "
            f"dataclasses.asdict(p)) and make the object inside the function")
    raise InvalidInput(f"adsim: {what} has dtype {arr.dtype}; pass a float64 array")


def _is_index(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def argnums(value):
    """``argnums`` checked for type: (tuple of ints, whether a single int was
    given). Ranges are checked per call by :func:`resolve_argnums`."""
    if _is_index(value):
        return (int(value),), True
    if isinstance(value, (tuple, list)) and value and all(_is_index(i) for i in value):
        return tuple(int(i) for i in value), False
    raise InvalidArgnums(f"adsim: argnums must be an int or a non-empty tuple of ints, "
                         f"not {value!r}")


def resolve_argnums(nums, n_args, name="the function", label="argnums"):
    """``nums`` as non-negative positions among ``n_args`` positional
    arguments, Python-style: negative values count from the end; out of range
    and repeated positions raise :class:`adsim.errors.InvalidArgnums`."""
    if len(nums) == 1 and 0 <= nums[0] < n_args:
        return nums
    out = []
    for i in nums:
        if not -n_args <= i < n_args:
            raise InvalidArgnums(f"adsim: {label}={i} but {name} got {n_args} positional "
                                 f"argument{'s' if n_args != 1 else ''}; {label} index the "
                                 f"positional arguments (negative values count from the end)")
        out.append(i % n_args)
    if len(set(out)) != len(out):
        twice = next(p for p in out if out.count(p) > 1)
        raise InvalidArgnums(f"adsim: {label} {tuple(nums)} name positional argument {twice} "
                             f"more than once; list each argument once")
    return tuple(out)
