"""The outcomes of the selections on the state in ``fun``, at any point.

``np.where(y > c, k1, k2)``, ``np.heaviside(y, 0.5)``, ``np.sign(y)`` and
``np.floor(y)`` are steps whose results are data that other ops read (a
mask, a factor), not recorded branches: a replay of ``fun``'s tape
computes them again without a word, and their values cannot be read back
from it (the tape reuses their slots). :func:`outcome_tape` writes the
tape again on a new recording, op by op (adsim/_nesting/transcribe.py,
which keeps every op's result), and returns the chosen steps' results as
the output of that recording: its replay is their outcomes at a new point,
compared with those at the last one by adsim/integrate/_switches.py.

The sides of the kinks on the state (``np.maximum``, ``np.minimum``,
``np.clip``, ``np.abs``) are outcomes too: ``maximum(a, b)`` records no
branch (its kernel takes the side of the values at every replay), so which
side each element takes, ``a >= b``, is computed on the same recording
(``a <= b`` for ``minimum``, ``x >= 0`` for ``abs``, the sides their
derivative rules take at a tie).
"""
import numpy as np

from .._active import Active
from .._nesting.transcribe import _Transcription
from .._np.core import as_active, binary
from .._opcodes import Opcode as Op
from .._record.recording import record
from ..primitives import Application

__all__ = ["outcome_on", "outcome_tape"]


def outcome_tape(tape, steps, point):
    """A tape of the same inputs as ``tape`` (recorded at ``point``: t, y,
    params) whose output is the flat results of its ops ``steps`` ((op
    index, quotient): for a remainder, "floor" or "trunc", its quotient
    instead; for a kink, "maximum", "minimum" or "abs", its side), one after
    another; None when ``tape`` holds calls it cannot
    write again op by op (a loop or solve inside ``fun``: its selections
    are then not seen)."""
    if any(not isinstance(cb, Application) for cb in tape.callbacks):
        return None

    def outcomes(*inputs):
        run = _Transcription(tape, list(inputs))
        return np.concatenate([_outcome(run, k, quotient) for k, quotient in steps])
    return record(outcomes, *point)


# the side a kink's derivative takes: its first operand where this holds
_SIDES = {"maximum": Op.GREATER_EQUAL, "minimum": Op.LESS_EQUAL, "abs": Op.GREATER_EQUAL}


def _outcome(run, k, quotient):
    v = run.result[k]
    if quotient in _SIDES:
        a, b = (run.read[k] + [0.0])[:2]       # abs(x): the side of x >= 0
        v = binary(_SIDES[quotient], a, b)
    elif quotient is not None:            # remainder(a, b): the step is in a / b's quotient
        a, b = run.read[k]
        v = (np.floor if quotient == "floor" else np.trunc)(a / b)
    return as_active(run.outer, v).reshape(-1)


def outcome_on(selections, t, y, params):
    """The output of the outcome tape ``selections`` at the points ``(t[b],
    y[:, b])`` written on the recording in progress (active when an input
    is, else None), its branches included: the ops that compute the
    outcomes alone (the recording of :func:`outcome_tape` kept no other),
    for all the points at once by the tape's batched program
    (adsim/_batch_rewrite.py), else point by point."""
    if not any(isinstance(v, Active) for v in (t, y, *params)):
        return None
    m = np.shape(t)[0]
    program = selections.batched.program(m)
    if program is not None:
        inputs = [t, y] + [np.multiply.outer(p, np.ones(m)) for p in params]
        return _Transcription(program, inputs).output
    return np.concatenate([_Transcription(selections, [t[b], y[:, b], *params]).output
                           for b in range(m)])
