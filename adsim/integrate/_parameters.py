"""Where ``fun``, ``jac`` and the event functions find their parameters.

The steps are recorded on tapes of their own, so every active value these
functions read becomes one of their extra arguments: parameters in dicts,
lists or tuples (in ``args`` or in a closure) travel as their arrays, and
active values read from closures, objects and globals are appended to
``args`` (docs/integrate.md, "Where `fun` finds its parameters")."""
from .._containers.container_args import gathered_inputs

__all__ = ["event_functions", "gathered"]


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
