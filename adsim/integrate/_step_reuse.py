"""Recorded steps that a later recording of the same integration starts from.

A loss is recorded again when its parameters change the number of steps
(without ``t_eval`` that changes the output's shape) or when it sets
parameters on an object (``model.k = k``: its environment changed). Each
recording used to record its integration's step variants again, tens of
them for an implicit method, at hundreds of replays' cost each. The loops
of a new recording now start from the variants of the last recording of
the same integration (``LoopGroup.inherited``), as long as everything the
step tapes hold as constants is what it was:

* the functions (``fun``, ``jac``, the events) and all they read, and the
  arguments, by a :class:`~adsim._tapecache.purity.Snapshot` in which an
  active value counts by its shape alone (active values reach the steps
  as loop inputs, whatever object they are read from);
* the solver's settings (method, tolerances, step bounds, the events'
  directions, ...) and the kind and layout of the loops.

A snapshot that is blocked (an environment the walk cannot see into) or
that meets a random generator (a step drawing numbers would replay its
draws) keeps nothing, and neither does a call under a memory budget
(``memory_limit``, ``snapshots``: the variants held here would be memory
outside it). The last few setups are held, strongly (a loss recorded on
every call holds no tape between calls) and within a byte bound.
"""
import threading

import numpy as np

from .._active import Active
from .._np.core import shape_of
from .._tapecache.purity import Snapshot

__all__ = ["StepSetup", "clear_step_cache"]

KEPT_SETUPS = 32
KEPT_BYTES = 128 * 2 ** 20        # of step variants, in a reverse sweep, over all setups kept

_kept = []                  # [(settings, kind, snapshot, steps, condition)], newest last
_lock = threading.Lock()


def clear_step_cache():
    """Drop the step variants kept for later recordings of recent
    integrations (and the objects their functions read), as after a fit
    whose model will not be integrated again. Tapes the user holds keep
    their own variants; the next recording of a dropped setup records its
    steps from scratch, with the same results."""
    with _lock:
        _kept.clear()


class StepSetup:
    """One recorded ``solve_ivp`` call's setup: ``functions`` (as given,
    before their active values were gathered into ``args``), ``args`` and
    ``settings`` (a tuple of plain values: what else decides the steps)."""

    def __init__(self, functions, args, settings, budgeted=False):
        self.snapshot = Snapshot(functions, args, parameters=True)
        self.settings = settings
        self.kind = None
        self.usable = not budgeted and self.snapshot.blocked is None and \
            not self.snapshot.randoms and _UNEQUAL not in settings

    def inherit(self, group, label, state):
        """Before the call's first loop (of kind ``label``, from the solver
        state ``state``): give ``group`` the variants of the last recording
        of this setup, if one is held."""
        self.kind = (label, state._fields, tuple(tuple(shape_of(v)) for v in state))
        if not self.usable:
            return
        with _lock:
            for i in range(len(_kept) - 1, -1, -1):
                settings, kind, snapshot, steps, condition = _kept[i]
                if settings == self.settings and kind == self.kind and \
                        snapshot.same_as(self.snapshot):
                    group.inherited = (steps, condition)
                    _kept.append(_kept.pop(i))
                    return

    def keep(self, group):
        """After the call: hold its loops' variants for the next recording."""
        if not self.usable or self.kind is None or group.steps is None or \
                group.condition is None:
            return
        entry = (self.settings, self.kind, self.snapshot, group.steps, group.condition)
        with _lock:
            _kept[:] = [e for e in _kept if not (e[0] == self.settings and e[1] == self.kind
                                                 and e[2].same_as(self.snapshot))]
            _kept.append(entry)
            while len(_kept) > KEPT_SETUPS or (len(_kept) > 1 and sum(
                    e[3].variants_bytes("adjoint", 1) for e in _kept) > KEPT_BYTES):
                _kept.pop(0)


_UNEQUAL = object()


def settings_of(*values):
    """``values`` (numbers, arrays, strings, tuples of them, None) as a
    comparable tuple; an active value makes it one that no setup uses."""
    return tuple(_UNEQUAL if isinstance(v, Active) else
                 (v.dtype.str, v.shape, v.tobytes()) if isinstance(v, np.ndarray) else v
                 for v in values)
