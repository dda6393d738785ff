"""Sparse matrices of active values (``J = k * L``, adsim/_scipy/sparse_active.py)
read by code recorded on a tape of its own (the right-hand side of
``solve_ivp`` and ``odeint``): passed as their active entries and rebuilt,
on the same pattern, for the user's function, from ``args`` or from the
places it reads them (a closure cell, an attribute, a global)."""
from .._active import Active
from .._nesting.nested import closure_cells, distinct_slots, swapped, wrapped
from .._nesting.outer_values import recording_in_progress
from .._scipy.sparse_active import ActiveSparse

__all__ = ["lift_active_matrices"]


def _recorded_matrix(v):
    return isinstance(v, ActiveSparse) and isinstance(v.values, Active) and \
        v.values.tape.recording


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
    in_args = {i: a for i, a in enumerate(args) if _recorded_matrix(a)}
    cells = distinct_slots(closure_cells(f, _recorded_matrix) for f in functions
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
