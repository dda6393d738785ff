"""Parameters in containers: a container of arrays as its leaves and a treedef.

Containers follow JAX's pytrees: ``tuple``, ``list``, ``dict`` (keys in
sorted order), namedtuples, and ``None`` (a node without leaves). Anything
else is a leaf. One exception keeps NumPy's reading of array_like data: a
list or tuple holding only plain numbers, nested at any depth as the rows of
an array (or empty), is one leaf, so ``grad(f)([1.0, 2.0])`` passes ``f`` an
array as it always did; a list or tuple that holds an array, an active
value, a dict, a namedtuple or ``None`` is a container, and so is one of
plain numbers nested unevenly (``([1, 2, 3], 4.0)``, autograd's way of
packing arguments), for which NumPy has no array: its items are read by
the same rule (``[1, 2, 3]`` one leaf, ``4.0`` another).
"""
import numbers

import numpy as np

from .._active import Active
from ..errors import InvalidInput


def placed(args, positions, values):
    """``args`` (a sequence) as a tuple with ``values`` at ``positions``: a
    function's arguments with some of them (its parameters, say) replaced."""
    full = list(args)
    for pos, v in zip(positions, values):
        full[pos] = v
    return tuple(full)

_NUMBER_TYPES = (numbers.Number, np.generic)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


_NOT_NUMBERS = object()     # _numbers_shape of a sequence holding something else
_UNEVEN = object()          # ... of plain numbers nested unevenly


def _numbers_shape(x):
    """The shape of the array NumPy reads from a list/tuple of plain numbers
    nested evenly; else _NOT_NUMBERS or _UNEVEN (the former wins)."""
    shapes = set()
    uneven = False
    for e in x:
        if type(e) is list or type(e) is tuple:
            shape = _numbers_shape(e)
            if shape is _NOT_NUMBERS:
                return _NOT_NUMBERS
            uneven = uneven or shape is _UNEVEN
            shapes.add(shape)
        elif not isinstance(e, _NUMBER_TYPES) or isinstance(e, Active):
            return _NOT_NUMBERS
        else:
            shapes.add(())
    if uneven or len(shapes) > 1:
        return _UNEVEN
    return (len(x),) + (shapes.pop() if shapes else ())


def uneven_numbers(x):
    """Whether ``x`` is a list/tuple of plain numbers nested unevenly (a
    container of its items, not array data)."""
    return (type(x) is list or type(x) is tuple) and _numbers_shape(x) is _UNEVEN


def is_container(x):
    """Whether ``x`` is a container node (not a leaf)."""
    if x is None or type(x) is dict or _is_namedtuple(x):
        return True
    return (type(x) is list or type(x) is tuple) and type(_numbers_shape(x)) is not tuple


class TreeDef:
    """The structure of a container: node kind, node data (sorted dict keys
    or the namedtuple class) and children. Hashable, so it can be part of a
    tape cache key; equal exactly when two containers have the same
    structure."""

    __slots__ = ("kind", "data", "children", "n_leaves", "_hash")

    def __init__(self, kind, data=None, children=()):
        self.kind, self.data, self.children = kind, data, tuple(children)
        self.n_leaves = 1 if kind == "leaf" else sum(c.n_leaves for c in self.children)
        self._hash = hash((kind, data, self.children))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self._hash == other._hash and self.kind == other.kind
                and self.data == other.data and self.children == other.children)

    @property
    def is_leaf(self):
        return self.kind == "leaf"

    def __repr__(self):
        if self.is_leaf:
            return "*"
        if self.kind == "none":
            return "None"
        if self.kind == "constant":
            return repr(self.data.value)
        inner = [repr(c) for c in self.children]
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.data, inner)) + "}"
        if self.kind == "namedtuple":
            return f"{self.data.__name__}(" + ", ".join(inner) + ")"
        if self.kind == "list":
            return "[" + ", ".join(inner) + "]"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"

    def paths(self):
        """Each leaf's place in the container, as indexing text ("[0][1]", "['W']")."""
        if self.is_leaf:
            return [""]
        if self.kind == "dict":
            keys = [f"[{k!r}]" for k in self.data]
        elif self.kind == "namedtuple":
            keys = [f".{name}" for name in self.data._fields]
        else:
            keys = [f"[{i}]" for i in range(len(self.children))]
        return [k + p for k, c in zip(keys, self.children) for p in c.paths()]


LEAF = TreeDef("leaf")
_NONE = TreeDef("none")


class SavedNamedTuple:
    """The node data of a namedtuple read from a tape file: its type name
    and field names, not its class (adsim/_containers/saved_trees.py). A
    namedtuple conforms to it when its class has the same names."""

    __slots__ = ("__name__", "_fields")

    def __init__(self, name, fields):
        self.__name__, self._fields = name, tuple(fields)

    def __hash__(self):
        return hash((SavedNamedTuple, self.__name__, self._fields))

    def __eq__(self, other):
        return isinstance(other, SavedNamedTuple) and \
            (self.__name__, self._fields) == (other.__name__, other._fields)

    def __repr__(self):
        return f"{self.__name__}({', '.join(self._fields)})"

    def accepts(self, cls):
        """Whether namedtuples of class ``cls`` have this type name and these fields."""
        return getattr(cls, "__name__", None) == self.__name__ and \
            tuple(getattr(cls, "_fields", ())) == self._fields


class _Constant:
    """A value kept in a treedef (a string in an auxiliary output): compared
    and hashed by identity, so any object can be one."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _is_data(leaf):
    """Whether a leaf is numeric data (an output of a tape), not an opaque value."""
    if isinstance(leaf, Active) or isinstance(leaf, _NUMBER_TYPES):
        return True
    try:
        return np.asarray(leaf).dtype.kind in "biuf"
    except Exception:                       # noqa: BLE001 (any object may refuse conversion)
        return False


def keep_constants(tree, leaves):
    """(tree, leaves) with every non-numeric leaf (a string, an object) moved
    into the treedef as a constant: an auxiliary output passes through."""
    it = iter(leaves)
    kept = []

    def walk(node):
        if node.is_leaf:
            leaf = next(it)
            if _is_data(leaf):
                kept.append(leaf)
                return node
            return TreeDef("constant", _Constant(leaf))
        if not node.children:
            return node
        return TreeDef(node.kind, node.data, [walk(c) for c in node.children])
    return walk(tree), kept


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError as err:
        raise InvalidInput(f"adsim: a dict of parameters needs keys that sort (its leaves are "
                           f"ordered by key, as JAX does); got keys {list(d)!r}") from err


def flatten(x):
    """(leaves, treedef) of ``x``; a leaf gives ([x], LEAF)."""
    leaves = []
    return leaves, _flatten(x, leaves)


def _flatten(x, leaves):
    if not is_container(x):
        leaves.append(x)
        return LEAF
    if x is None:
        return _NONE
    if type(x) is dict:
        keys = _sorted_keys(x)
        return TreeDef("dict", keys, [_flatten(x[k], leaves) for k in keys])
    if _is_namedtuple(x):
        return TreeDef("namedtuple", type(x), [_flatten(e, leaves) for e in x])
    return TreeDef(type(x).__name__, None, [_flatten(e, leaves) for e in x])


def unflatten(tree, leaves):
    """The container of structure ``tree`` holding ``leaves`` (in order)."""
    it = iter(leaves)
    out = _build(tree, it)
    assert next(it, None) is None, "more leaves than the structure holds"
    return out


def _build(tree, it):
    kind = tree.kind
    if kind == "leaf":
        return next(it)
    if kind == "none":
        return None
    if kind == "constant":
        return tree.data.value
    children = [_build(c, it) for c in tree.children]
    if kind == "dict":
        return dict(zip(tree.data, children))
    if kind == "namedtuple":
        return tree.data(*children)
    return children if kind == "list" else tuple(children)


def conforms(tree, expected):
    """Whether ``tree`` has the structure ``expected``: equal treedefs, where
    a namedtuple read from a tape file (:class:`SavedNamedTuple`) takes any
    namedtuple class of its type name and field names."""
    if tree == expected:
        return True
    if tree.kind != expected.kind or len(tree.children) != len(expected.children):
        return False
    if isinstance(expected.data, SavedNamedTuple):
        same = tree.kind == "namedtuple" and expected.data.accepts(tree.data)
    else:
        same = tree.data == expected.data
    return same and all(conforms(c, e) for c, e in zip(tree.children, expected.children))


def check_same(tree, expected, what, of):
    """Raise InvalidInput unless ``what`` (a container) has the structure of
    ``of`` (see :func:`conforms`)."""
    if not conforms(tree, expected):
        raise InvalidInput(f"adsim: the {what} has the structure {tree!r} but the {of} has "
                           f"{expected!r} (* marks an array); pass {what} with the same "
                           f"containers, keys and number of leaves")


def split_flat(flat, shapes, axes=()):
    """A flat array (total size, *axes) cut into pieces of the given shapes."""
    out, lo = [], 0
    for s in shapes:
        n = int(np.prod(s, dtype=np.int64))
        out.append(flat[lo:lo + n].reshape(tuple(s) + tuple(axes)))
        lo += n
    return out
