"""Parameters in containers, passed as extra arguments to code recorded on a
tape of its own (a checkpointed step and its condition; the right-hand
side, Jacobian and events of ``solve_ivp``).

Such code takes its active values as separate arguments (loop inputs), so
an argument that is a dict, list or tuple holding active values is passed
as its leaves (in ``adsim._tree`` order) and rebuilt for the user's
function, which sees the container it was given.
"""
import functools

from ._np.core import active_leaves
from ._tape import Active
from ._tree import flatten, unflatten

__all__ = ["spread_containers"]


def _holds_active(a):
    return not isinstance(a, Active) and bool(active_leaves(a))


def spread_containers(functions, args):
    """``functions`` (each taking ``args`` as its trailing arguments; None
    entries stay None) and ``args``, with each container argument holding
    active values replaced by its leaves; the functions returned rebuild the
    containers before calling the originals."""
    args = tuple(args)
    if not any(map(_holds_active, args)):
        return list(functions), args
    pieces = [flatten(a) if _holds_active(a) else ([a], None) for a in args]
    flat = tuple(leaf for leaves, _ in pieces for leaf in leaves)
    n = len(flat)

    def rebuilt(values):
        out, i = [], 0
        for leaves, tree in pieces:
            k = len(leaves)
            out.append(values[i] if tree is None else unflatten(tree, values[i:i + k]))
            i += k
        return out

    def wrap(f):
        if f is None:
            return None

        @functools.wraps(f)         # name, and attributes (an event's terminal)
        def with_containers(*a, **kwargs):
            return f(*a[:len(a) - n], *rebuilt(a[len(a) - n:]), **kwargs)
        return with_containers
    return [wrap(f) for f in functions], flat
