"""Where ``fun``, ``jac`` and the event functions find their parameters.

The steps are recorded on tapes of their own, so every active value these
functions read becomes one of their extra arguments: parameters in dicts,
lists or tuples (in ``args`` or in a closure) travel as their arrays, and
active values read from closures, objects and globals are appended to
``args`` (docs/integrate.md, "Where `fun` finds its parameters")."""
from .._containers.container_args import gathered_inputs
from .._containers.matrix_args import holds_recorded_matrix
from .._nesting.outer_values import outer_slots, recording_in_progress
from .._scipy.sparse_active import ActiveSparse
from ..errors import UnsupportedOperation

__all__ = ["event_functions", "gathered", "reads_active_matrix"]


def event_functions(events):
    """The event functions of ``events`` (a callable, a sequence or None) as a list."""
    if events is None:
        return []
    if callable(events):
        return [events]
    return list(events) if isinstance(events, (list, tuple)) else []


def gathered(fun, jac, events, args):
    """``(fun, jac, events, args)`` with every parameter the functions read
    among ``args`` (``jac`` as given unless callable, ``events`` in the
    form given)."""
    listed = event_functions(events)
    lifted, args = gathered_inputs([fun] + ([jac] if callable(jac) else []) + listed, args)
    if callable(jac):
        jac = lifted[1]
    if listed:
        lifted_events = lifted[len(lifted) - len(listed):]
        events = lifted_events[0] if callable(events) else lifted_events
    return lifted[0], jac, events, args


def reads_active_matrix(functions, args):
    """Whether ``args`` (a tuple) or what ``functions`` read from outside
    their arguments hold a scipy.sparse matrix assembled from active values
    (``J = k * L``)."""
    if not recording_in_progress():
        return False
    if isinstance(args, tuple) and any(map(holds_recorded_matrix, args)):
        return True     # also in a dict, list or object of args
    return any(callable(f) and outer_slots(f, _is_active_matrix) for f in functions)


def _is_active_matrix(v):
    return isinstance(v, ActiveSparse)


def read_outside_arguments():
    """The error of ``fun`` (or ``jac``, or an event function) meeting an
    active value adsim did not pass it (the steps and Jacobians are
    recorded on tapes of their own, where such a value is another
    recording's): one read from a place the gathering does not search, or
    one ``fun`` kept from an earlier call."""
    return UnsupportedOperation(
        "adsim.integrate.solve_ivp: fun (or jac, or an event function) reads an active value "
        "that is not one of its arguments: from a place adsim does not search (it searches "
        "closures, module globals, functools.partial arguments and the attributes of objects, "
        "also in dicts, lists and tuples of up to 256 entries), or one it kept from an "
        "earlier call (an attribute or a cache set while it ran). The steps are recorded on "
        "tapes of their own, so pass such values through args=: fun(t, y, *args), and "
        "compute what depends on them in every call")
