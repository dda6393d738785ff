"""Parameters in containers, passed as extra arguments to code recorded on a
tape of its own (a checkpointed step and its condition; the right-hand
side, Jacobian and events of ``solve_ivp``).

Such code takes its active values as separate arguments (loop inputs), so
an argument that is a dict, list or tuple holding active values is passed
as its leaves (in ``adsim._containers.tree`` order) and rebuilt for the user's
function, which sees the container it was given. An argument that is an
object holding them in its attributes (a dataclass of parameters) is bound
into the functions, where the search of their closures finds its attributes.
"""
from .._nesting.nested import closure_cells, distinct_slots, lift_closures, swapped, wrapped
from .._nesting.outer_values import object_holds, object_holds_recorded_values, \
    recording_in_progress
from .._np.core import active_leaves
from .._active import Active
from .._scipy.sparse_active import ActiveSparse
from .matrix_args import lift_active_matrices, matrix_or_holding, recorded_matrix
from .tree import flatten, unflatten

__all__ = ["bind_objects", "gathered_inputs", "spread_containers", "lift_container_closures"]


def gathered_inputs(functions, args):
    """``functions`` (each taking ``args`` as its trailing arguments; None
    entries stay None) and ``args`` with every active value the functions
    read as one of the trailing arguments, for code recorded on a tape of
    its own: sparse matrices of them passed as their entries, objects
    holding them bound, containers spread, and those read from closures,
    objects and globals lifted."""
    functions, args = bind_objects(functions, args)
    functions, args = spread_containers(functions, args)
    functions, args = lift_container_closures(functions, args)
    # after the containers are spread and the objects bound: the matrices
    # among their leaves and attributes are then arguments or closure places
    functions, args = lift_active_matrices(functions, args)
    return lift_closures(functions, args)


def _holds_active(a):
    """A container holding active values, or sparse matrices of active
    values of a recording in progress."""
    return not isinstance(a, (Active, ActiveSparse)) and (
        bool(active_leaves(a)) or any(map(recorded_matrix, flatten(a)[0])))


def _holds_recorded(a):
    """A container holding active values (or matrices of them) of a
    recording in progress."""
    return _holds_active(a) and (any(v.tape.recording for v in active_leaves(a)) or
                                 any(map(recorded_matrix, flatten(a)[0])))


def _rebuilt(pieces, values):
    """The arguments that ``pieces`` ((leaves, treedef or None for a plain
    argument) each) were flattened from, rebuilt from ``values``."""
    out, i = [], 0
    for leaves, tree in pieces:
        k = len(leaves)
        out.append(values[i] if tree is None else unflatten(tree, values[i:i + k]))
        i += k
    return out


def bind_objects(functions, args):
    """``functions`` (each taking ``args`` as its trailing arguments; None
    entries stay None) and ``args`` without the arguments that are objects
    holding active values of a recording in progress (or containers of
    such objects): the functions
    returned hold those objects in their closures and put them back in
    place, so ``lift_closures`` finds their attributes (``p.k`` of a
    dataclass ``p`` passed by ``args=(p,)``) and swaps them while the
    functions run."""
    args = tuple(args)
    # a container that also holds active arrays itself is spread instead: the
    # objects among its leaves are then found in the closure of the spread
    bound = {i: a for i, a in enumerate(args) if not _holds_active(a) and (
        object_holds_recorded_values(a) or object_holds(a, matrix_or_holding))}
    if not bound:
        return list(functions), args
    n_all, n_given = len(args), len(args) - len(bound)

    def with_objects(f, *a, **kwargs):
        given = iter(a[len(a) - n_given:])
        full = [bound[i] if i in bound else next(given) for i in range(n_all)]
        return f(*a[:len(a) - n_given], *full, **kwargs)
    return [wrapped(f, with_objects) for f in functions], \
        tuple(a for i, a in enumerate(args) if i not in bound)


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

    def with_containers(f, *a, **kwargs):
        return f(*a[:len(a) - n], *_rebuilt(pieces, a[len(a) - n:]), **kwargs)
    return [wrapped(f, with_containers) for f in functions], flat


def lift_container_closures(functions, args):
    """``functions`` and ``args`` with the containers holding active values
    that the functions read from their closures (``lambda t, y: f(t, y,
    params)`` with ``params`` a dict) passed as trailing arguments, leaf by
    leaf: while a function runs, each such cell holds the container rebuilt
    from the leaves passed, as ``adsim._nesting.nested.lift_closures`` does for
    single arrays."""
    if not recording_in_progress():
        return list(functions), tuple(args)
    cells = distinct_slots(closure_cells(f, _holds_recorded) for f in functions)
    if not cells:
        return list(functions), tuple(args)
    pieces = [flatten(cell.get()) for cell in cells]
    flat = tuple(leaf for leaves, _ in pieces for leaf in leaves)
    n = len(flat)

    def with_cells(f, *a, **kwargs):
        with swapped(cells, _rebuilt(pieces, a[len(a) - n:])):
            return f(*a[:len(a) - n], **kwargs)
    return [wrapped(f, with_cells) for f in functions], tuple(args) + flat

