"""Argument structures in tape files: the ``ARGS`` section of
docs/tape-format.md, which lets a loaded tape take the containers it was
recorded with.

A structure is JSON data: ``"*"`` an array, ``null`` None,
``{"list": [...]}``, ``{"tuple": [...]}``, ``{"dict": [[key, structure],
...]}`` (keys are strings or integers, in sorted order) and
``{"namedtuple": name, "fields": [...], "items": [...]}``. A namedtuple is
saved by its type name and field names, never by its class (that would be
code to import): a loaded tape takes any namedtuple of that name and those
fields, and returns results in the class of the arguments it is given.
"""
from .tree import LEAF, SavedNamedTuple, TreeDef
from ..errors import TapeCopyError

_SEQUENCES = ("list", "tuple")


# ---- writing ----------------------------------------------------------------------

def structures_data(trees):
    """The JSON data of argument structures (one treedef per argument).
    TapeCopyError for what a file cannot name."""
    return [_node_data(tree, f"argument {i}") for i, tree in enumerate(trees)]


def _node_data(tree, where):
    kind = tree.kind
    if kind == "leaf":
        return "*"
    if kind == "none":
        return None
    children = [_node_data(c, f"{where}{p}") for c, p in zip(tree.children, _paths(tree))]
    if kind in _SEQUENCES:
        return {kind: children}
    if kind == "dict":
        for key in tree.data:
            if type(key) not in (str, int):
                raise TapeCopyError(f"adsim: the tape was recorded with a dict whose key {key!r} "
                                    f"({type(key).__name__}, in {where}) a tape file cannot "
                                    f"hold; tape files keep dict keys that are strings or "
                                    f"integers: use such keys, or pass the arrays in a list")
        return {"dict": [[key, c] for key, c in zip(tree.data, children)]}
    if kind == "namedtuple":
        name, fields = _namedtuple_names(tree.data, len(children), where)
        return {"namedtuple": name, "fields": fields, "items": children}
    raise TapeCopyError(f"adsim: the tape was recorded with a container {tree!r} (in {where}) "
                        f"that a tape file cannot hold")


def _paths(tree):
    """Where each child of a node is, for messages (one per child)."""
    if tree.kind == "dict":
        return [f"[{k!r}]" for k in tree.data]
    fields = getattr(tree.data, "_fields", None) if tree.kind == "namedtuple" else None
    if isinstance(fields, tuple) and len(fields) == len(tree.children):
        return [f".{f}" for f in fields]
    return [f"[{i}]" for i in range(len(tree.children))]


def _namedtuple_names(cls, n_items, where):
    """(type name, field names) of a namedtuple class, as a file names it."""
    name, fields = getattr(cls, "__name__", None), getattr(cls, "_fields", None)
    if not (isinstance(name, str) and name.isidentifier() and isinstance(fields, tuple)
            and len(fields) == n_items and all(isinstance(f, str) and f.isidentifier()
                                               for f in fields)
            and len(set(fields)) == len(fields)):
        raise TapeCopyError(f"adsim: the tape was recorded with the namedtuple "
                            f"{getattr(cls, '__qualname__', cls)!r} (in {where}), which a tape "
                            f"file cannot name: tape files keep a namedtuple by its type name and "
                            f"field names, which must be distinct identifiers, one per item. "
                            f"Pass the arrays in a dict or a tuple")
    return name, list(fields)


# ---- reading ----------------------------------------------------------------------

def structures_from_data(data, n_inputs):
    """Treedefs from the JSON data of argument structures, checked: the
    structures hold ``n_inputs`` arrays in all."""
    if not isinstance(data, list):
        raise ValueError("the argument structures are not a list")
    trees = [_node(item) for item in data]
    leaves = sum(t.n_leaves for t in trees)
    if leaves != n_inputs:
        raise ValueError(f"the argument structures hold {leaves} arrays for {n_inputs} inputs")
    return trees


def _node(item):
    if item == "*":
        return LEAF
    if item is None:
        return TreeDef("none")
    if not isinstance(item, dict) or not item:
        raise ValueError(f"an argument structure holds {_short(item)}")
    kind = next(iter(item))
    if kind in _SEQUENCES and len(item) == 1 and isinstance(item[kind], list):
        return TreeDef(kind, None, [_node(c) for c in item[kind]])
    if kind == "dict" and len(item) == 1 and isinstance(item["dict"], list):
        return _dict_node(item["dict"])
    if set(item) == {"namedtuple", "fields", "items"}:
        return _namedtuple_node(item)
    raise ValueError(f"an argument structure holds {_short(item)}")


def _dict_node(pairs):
    if not all(isinstance(p, list) and len(p) == 2 and type(p[0]) in (str, int) for p in pairs):
        raise ValueError("a dict structure is not a list of [key, structure] pairs with string "
                         "or integer keys")
    keys = [p[0] for p in pairs]
    try:
        ordered = sorted(set(keys)) == keys
    except TypeError:               # strings and integers together: a dict adsim cannot order
        ordered = False
    if not ordered:
        raise ValueError(f"the keys of a dict structure are not distinct and sorted: "
                         f"{_short(keys)}")
    return TreeDef("dict", tuple(keys), [_node(p[1]) for p in pairs])


def _namedtuple_node(item):
    name, fields, items = item["namedtuple"], item["fields"], item["items"]
    if not (isinstance(name, str) and name.isidentifier() and isinstance(fields, list)
            and isinstance(items, list) and len(fields) == len(items)
            and all(isinstance(f, str) and f.isidentifier() for f in fields)
            and len(set(fields)) == len(fields)):
        raise ValueError(f"a namedtuple structure is not a type name with distinct field names, "
                         f"one per item: {_short(item)}")
    return TreeDef("namedtuple", SavedNamedTuple(name, tuple(fields)),
                   [_node(c) for c in items])


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
