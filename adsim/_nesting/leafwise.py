"""jvp and vjp inside a recording for functions of containers: arguments,
tangents, weights and outputs that are containers (lists, tuples, dicts,
namedtuples of arrays) are taken leaf by leaf, as the functional API takes
them at the top level.

The nested derivatives (adsim/_nesting/nested.py) differentiate functions
of arrays returning one array; here ``f`` becomes such a function: it
takes the leaves of its arguments as separate arguments and returns its
output's leaves raveled into one flat array. The wrapper closes over the
structures only (never over active values, which would be read as
closure values of the recording).
"""
import numpy as np

from .._containers.tree import LEAF, check_same, flatten, is_container, split_flat, unflatten
from .._validate import name_of as _name
from .nested import nested_jvp, nested_vjp


def _structures(xs):
    """Per argument its treedef (None for an array) and its leaves, flat."""
    trees, leaves = [], []
    for x in xs:
        if is_container(x):
            ls, tree = flatten(x)
            trees.append((tree, len(ls)))
            leaves.extend(ls)
        else:
            trees.append(None)
            leaves.append(x)
    return trees, leaves


def _grouped(trees, leaves):
    """The arguments rebuilt from their leaves (``leaves`` in order)."""
    out, lo = [], 0
    for t in trees:
        if t is None:
            out.append(leaves[lo])
            lo += 1
        else:
            out.append(unflatten(t[0], leaves[lo:lo + t[1]]))
            lo += t[1]
    return out


def _raveled(y):
    """A container's leaves raveled into one array (an array: itself)."""
    if not is_container(y):
        return y
    ys = flatten(y)[0]
    return np.concatenate([np.ravel(leaf) for leaf in ys]) if ys else np.zeros(0)


def _on_leaves(f, trees):
    """``f`` as a function of its arguments' leaves, returning one array."""
    def on_leaves(*leaves):
        return _raveled(f(*_grouped(trees, leaves)))
    on_leaves.__name__ = _name(f)
    return on_leaves


def _leaves_like(trees, ds, what):
    """The leaves of the directions ``ds`` (one per argument), each checked
    to have its argument's structure."""
    out = []
    for i, (t, d) in enumerate(zip(trees, ds)):
        leaves, tree = flatten(d)
        check_same(tree, LEAF if t is None else t[0], f"{what} {i}", f"argument {i}")
        out.extend(leaves)
    return out


def _one_weight(ws, shapes):
    """The weights of an output's leaves as one flat weight (with the
    trailing axis of k weights, if any, which every leaf must carry)."""
    axes = tuple(np.shape(ws[0])[len(shapes[0]):]) if ws else ()
    if any(np.shape(w) != sh + axes for w, sh in zip(ws, shapes)):
        raise ValueError(f"adsim: adjoint weights of shapes {[np.shape(w) for w in ws]} for "
                         f"output leaves of shapes {shapes}; give each leaf's shape, or the same "
                         f"trailing axis of k weights to every one")
    if not ws:
        return np.zeros((0,) + axes)
    return np.concatenate([np.reshape(w, (-1,) + axes) for w in ws])


def _needs_leaves(xs, ds, y):
    return any(is_container(a) for a in xs) or any(is_container(d) for d in ds) or \
        is_container(y)


def jvp(f, xs, vs):
    """(f(*xs), J v) inside a recording, in the structure of f's output."""
    y = f(*xs)
    if not _needs_leaves(xs, vs, y):
        return nested_jvp(f, xs, vs, y)
    trees, leaves = _structures(xs)
    out = flatten(y) if is_container(y) else None
    _, t = nested_jvp(_on_leaves(f, trees), leaves,
                      _leaves_like(trees, vs, "tangent"), y)
    if out is None:
        return y, t
    shapes = [np.shape(leaf) for leaf in out[0]]
    return y, unflatten(out[1], split_flat(t, shapes, np.shape(t)[1:]))


def vjp(f, xs, w):
    """(f(*xs), w^T J) inside a recording: a tuple of one gradient per
    argument, each in its argument's structure."""
    y = f(*xs)
    if not _needs_leaves(xs, (w,), y):
        return nested_vjp(f, xs, w, y)
    trees, leaves = _structures(xs)
    out = flatten(y) if is_container(y) else None
    ws, tree = flatten(w)
    check_same(tree, LEAF if out is None else out[1], "adjoint weight", "output")
    if out is not None:
        w = _one_weight(ws, [np.shape(leaf) for leaf in out[0]])
    _, g = nested_vjp(_on_leaves(f, trees), leaves, w, _raveled(y))
    return y, tuple(_grouped(trees, list(g)))
