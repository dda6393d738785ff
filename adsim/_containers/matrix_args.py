"""Sparse matrices of active values (``J = k * L``, adsim/_scipy/sparse_active.py)
read by code recorded on a tape of its own (the right-hand side of
``solve_ivp`` and ``odeint``, an objective of ``minimize``, a checkpointed
step): passed as their active entries and rebuilt, on the same pattern, for
the user's function, from ``args`` or from the places it reads them (a
closure cell, an attribute, a global). A matrix inside a container or an
object of ``args`` reaches here as one of ``args`` or of those places, once
``adsim._containers.container_args`` has spread the container or bound the
object."""
from .._active import Active
from .._nesting.nested import closure_cells, distinct_slots, swapped, wrapped
from .._nesting.outer_values import object_holds, recording_in_progress
from .._scipy.sparse_active import ActiveSparse
from .tree import flatten

__all__ = ["holds_recorded_matrix", "lift_active_matrices", "matrix_or_holding", "recorded_matrix"]


def recorded_matrix(v):
    """Whether ``v`` is a sparse matrix of active values of a recording in progress."""
    return isinstance(v, ActiveSparse) and isinstance(v.values, Active) and \
        v.values.tape.recording


def matrix_or_holding(v):
    """Whether ``v`` is such a matrix or a dict, list or tuple holding one."""
    return recorded_matrix(v) or (isinstance(v, (dict, list, tuple)) and
                                  any(map(recorded_matrix, flatten(v)[0])))


def holds_recorded_matrix(a):
    """Whether ``a``, passed as an argument, is a sparse matrix of active
    values of a recording in progress, or holds one in a dict, list or
    tuple or in the attributes of an object (a dataclass of parameters)."""
    return matrix_or_holding(a) or object_holds(a, matrix_or_holding)


def _rebuilt(template, values):
    rows, cols = template.entries
    return template._like(rows, cols, values)


def lift_active_matrices(functions, args):
    """``functions`` (each taking ``args`` as its trailing arguments; None
    entries stay None) and ``args`` with each sparse matrix of active values
    among ``args`` replaced by its entries, and those of the matrices the
    functions read from outside their arguments appended: the functions
    returned rebuild the matrices before calling the originals."""
    args = tuple(args)
    if not recording_in_progress():
        return list(functions), args
    in_args = {i: a for i, a in enumerate(args) if recorded_matrix(a)}
    cells = distinct_slots(closure_cells(f, recorded_matrix) for f in functions
                           if f is not None)
    if not in_args and not cells:
        return list(functions), args
    templates = [cell.get() for cell in cells]
    n_args = len(args)
    n_cells = len(cells)

    def with_matrices(f, *a, **kwargs):
        head = len(a) - n_args - n_cells
        given = list(a[head:head + n_args])
        for i, template in in_args.items():
            given[i] = _rebuilt(template, given[i])
        with swapped(cells, [_rebuilt(template, values)
                             for template, values in zip(templates, a[head + n_args:])]):
            return f(*a[:head], *given, **kwargs)
    lifted = tuple(a.values if i in in_args else a for i, a in enumerate(args))
    return [wrapped(f, with_matrices) for f in functions], \
        lifted + tuple(t.values for t in templates)
