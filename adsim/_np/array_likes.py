"""Lists and tuples of active values where NumPy takes an array_like.

NumPy accepts a (nested) list or tuple wherever it documents a parameter as
array_like (``np.sum([a, b])``, ``np.dot([a, b], w)``, ``[a, b] - x``) and
turns it into an array with ``np.asarray``, which would make active values
plain numbers. adsim's dispatch (adsim/_numpy_api.py: functions, ufuncs and
operators; the wrappers of adsim/_record/listed.py send it the calls
NumPy's dispatch does not) converts such arguments first, by the functions
here, with ``np.array``'s semantics: one active array, the stack of the
pieces (adsim/_np/joins.py); the pieces' shapes must agree (a ragged list
raises NumPy's ``ValueError``), and plain numbers and arrays among them
become float64 constants, as NumPy promotes them beside float64 values.
A list or tuple without active values stays as it is (the rules take plain
numbers as NumPy does), unless it holds arrays: then NumPy's array of it
goes to the rule.

Which arguments are converted is decided by parameter, from the function's
signature (NumPy's documented one; its names are NumPy's own):

- a parameter named in ``ARRAY_LIKE`` is one array_like: converted whole;
- a parameter named in ``SEQUENCES`` (``np.stack(arrays)``,
  ``np.hstack(tup)``, ``np.select``'s ``choicelist``), and each argument of
  a variadic parameter named in ``VARIADIC`` (``*arys`` of
  ``np.atleast_2d``, ``*operands`` of ``np.einsum``, ``*xi`` of
  ``np.meshgrid``, ``*varargs`` of ``np.gradient``, ``*args`` of
  ``np.broadcast_arrays``), holds array_likes:
  each item is converted on its own (the subscript lists of ``np.einsum``
  hold no active values, so they stay lists);
- ``NOT_HERE`` lists the functions where such a name means something else,
  ``ALSO`` those where another name is an array_like of values;
- every other parameter is passed as given: axes, shapes, indices, counts,
  orders, masks and conditions, tolerances (``PLAIN`` names those NumPy
  documents as array_like, with the reason), so ``np.split(x, [1, 3])``,
  ``np.pad(x, [(1, 2)])`` and ``np.take(x, [i, j])`` are NumPy's.

Ufuncs take array_likes as every input of a call and of ``outer``, the
first of ``reduce``, ``accumulate`` and ``reduceat`` and the last of
``at``; operators as both operands. The tables are checked against NumPy's
docstrings by tests/numpy/test_lists_of_active_values.py.
"""
import inspect

import numpy as np

from .joins import from_pieces, holds_active

# parameter names NumPy gives an array_like of values (the values the
# result is computed from): converted whole
ARRAY_LIKE = frozenset({
    "a", "b", "x", "y", "x1", "x2", "z", "m", "v", "A", "f", "p", "val", "arr", "ary", "array",
    "values", "filt", "xp", "fp", "bins", "weights", "aweights", "prepend", "append",
    "to_begin", "to_end", "fill_value", "prototype", "src", "mean", "default", "a_min",
    "a_max", "min", "max", "start", "stop", "keys", "w", "base", "vals", "a1", "a2",
    "ar",                                   # np.unique's
    "c"})                                   # numpy.polynomial's coefficients

# parameters holding a sequence of array_likes: each item converted
SEQUENCES = frozenset({"arrays", "tup", "choicelist"})
VARIADIC = frozenset({"arys", "operands", "xi", "varargs", "args"})

# functions where a name of the tables means something else
NOT_HERE = {
    np.linalg.cond: {"p"},              # the order of the norm
    np.polyder: {"m"},                  # the order of the derivative
    np.polyint: {"m"},                  # the order of the antiderivative
    np.rollaxis: {"start"},             # an axis
    np.block: {"arrays"},               # nested lists laying out the blocks: np.block's own
    np.iscomplexobj: {"x"},             # any object: its type is asked, not its values
    np.isrealobj: {"x"},
    np.piecewise: {"args"},             # extra arguments of the user's functions
    np.apply_along_axis: {"args"},
}

# functions where a name the tables do not list is an array_like of values
ALSO = {
    np.emath.logn: {"n"},               # the base of the logarithm
    np.polydiv: {"u"},                  # the dividend's coefficients
}

# parameters NumPy documents as array_like that are passed as given, and why
PLAIN = {
    "q": "quantile levels, plain numbers",
    "where": "a mask", "condition": "a condition", "condlist": "conditions",
    "indices": "indices", "obj": "indices", "sorter": "indices", "ind": "indices",
    "mask": "a mask",
    "axes": "axes", "reps": "a shape", "pad_width": "widths",
    "rtol": "a tolerance", "atol": "a tolerance", "rcond": "a tolerance", "tol": "a tolerance",
    "sample": "np.histogramdd's coordinates, a sequence of arrays its rule reads one by one",
    "range": "the bins' bounds, read by the histogram rules",
    "nan": "a replacement number", "posinf": "a replacement number",
    "neginf": "a replacement number",
    "fweights": "integer frequency weights",
    "out": "an array written into",
}

_SEQUENCE_TYPES = (list, tuple)
_ARRAY, _ITEMS = 1, 2           # how a parameter's argument is converted
_kinds = {}                     # function -> (positional kinds, variadic kind, keyword kinds)


def _table(func):
    """How each parameter of ``func`` is converted (None: not converted)."""
    if func not in _kinds:
        here = NOT_HERE.get(func, ())

        def kind(name):
            if name in here:
                return None
            if name in ARRAY_LIKE or name in ALSO.get(func, ()):
                return _ARRAY
            return _ITEMS if name in SEQUENCES else None
        positional, variadic, keyword = [], None, {}
        for p in _signature(func).parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                variadic = _ARRAY if p.name in VARIADIC and p.name not in here else None
            elif p.kind is not p.VAR_KEYWORD:
                if p.kind is not p.KEYWORD_ONLY:
                    positional.append(kind(p.name))
                if p.kind is not p.POSITIONAL_ONLY:
                    keyword[p.name] = kind(p.name)
        _kinds[func] = (tuple(positional), variadic, keyword)
    return _kinds[func]


def _signature(func):
    """NumPy's documented signature of ``func``; NumPy before 2.4 gives some
    compiled functions none, and their stand-ins are below."""
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        stand_in = _COMPILED.get(getattr(func, "__name__", None))
        return inspect.Signature() if stand_in is None else inspect.signature(stand_in)


def _dot(a, b, out=None):
    """np.dot's documented signature."""


def _inner(a, b, /):
    """np.inner's and np.vdot's."""


def _where(condition, x=None, y=None, /):
    """np.where's."""


def _concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """np.concatenate's."""


def _copyto(dst, src, casting="same_kind", where=True):
    """np.copyto's."""


def _empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """np.empty_like's."""


def _lexsort(keys, axis=-1):
    """np.lexsort's."""


def _bincount(x, /, weights=None, minlength=0):
    """np.bincount's."""


def _putmask(a, /, mask, values):
    """np.putmask's."""


_COMPILED = {"dot": _dot, "vdot": _inner, "inner": _inner, "where": _where,
             "concatenate": _concatenate, "concat": _concatenate, "copyto": _copyto,
             "empty_like": _empty_like, "lexsort": _lexsort, "bincount": _bincount,
             "putmask": _putmask}


def _convert(v, kind):
    if kind is None or not isinstance(v, _SEQUENCE_TYPES):
        return v
    if kind == _ITEMS:
        items = [_convert(o, _ARRAY) for o in v]
        if all(new is old for new, old in zip(items, v)):
            return v
        return items if isinstance(v, list) else tuple(items)
    if holds_active(v):
        return from_pieces(v)
    return np.asarray(v) if _holds_array(v) else v


def _holds_array(obj, depth=0):
    """Does the plain sequence ``obj`` hold arrays (which adsim's operands,
    numbers and arrays, do not take inside lists: NumPy's array of it goes
    instead)?"""
    return isinstance(obj, np.ndarray) or isinstance(obj, _SEQUENCE_TYPES) and depth < 32 and \
        any(_holds_array(o, depth + 1) for o in obj)


def arguments(func, args, kwargs):
    """(args, kwargs) of a call of the NumPy function ``func`` with its
    array_like arguments that hold active values inside lists or tuples
    made active arrays (the same objects when there is none)."""
    if not any(isinstance(v, _SEQUENCE_TYPES) for v in args) and \
            not any(isinstance(v, _SEQUENCE_TYPES) for v in kwargs.values()):
        return args, kwargs
    positional, variadic, keyword = _table(func)
    n = len(positional)
    args = tuple(_convert(v, positional[i] if i < n else variadic) for i, v in enumerate(args))
    kwargs = {k: _convert(v, keyword.get(k)) for k, v in kwargs.items()}
    return args, kwargs


def holds_listed_active(args, kwargs):
    """Does an argument hold active values inside a list or tuple (which
    NumPy's dispatch does not look into)?"""
    return any(isinstance(v, _SEQUENCE_TYPES) and holds_active(v)
               for v in (*args, *kwargs.values()))


_UFUNC_ARRAY_LIKES = {"__call__": slice(None), "outer": slice(None), "reduce": slice(0, 1),
                      "accumulate": slice(0, 1), "reduceat": slice(0, 1), "at": slice(2, 3)}


def ufunc_inputs(method, inputs):
    """The inputs of ``ufunc.method`` with its array_like inputs holding
    active values inside lists or tuples made active arrays."""
    which = range(len(inputs))[_UFUNC_ARRAY_LIKES.get(method, slice(0, 0))]
    if not any(isinstance(inputs[i], _SEQUENCE_TYPES) for i in which):
        return inputs
    return tuple(_convert(v, _ARRAY) if i in which else v for i, v in enumerate(inputs))


def operands(*values):
    """The operands of an operator (``+``, ``@``, ``<``, ...), each an
    array_like."""
    return tuple(_convert(v, _ARRAY) for v in values)

