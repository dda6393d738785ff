"""``abs`` without a branch record; ``maximum`` and ``minimum`` that leave
plain values plain.

``np.abs`` on active arrays records the sign of each element as a branch,
so that a replay where a sign differs records again. The solvers apply it
to whole states (the error scale ``max(|y|, |y_new|)``), where some sign
changes at almost every step; recording the step again each time would
cost more than the step. ABS's derivative rule reads the sign from the
operand's value at every replay, so without the branch record the
derivatives are still those of the point of evaluation. ``np.maximum`` and
``np.minimum`` record no branch in the core either (adsim/_np/core.py,
``binary``: the side is chosen from the values at every replay, a tie and
NaN in ``a`` going to ``a``): :func:`larger` and :func:`smaller` are that
rule, called directly.

:func:`frozen_at_or_below` makes the same kind of choice for a derivative
alone: a value whose derivative is dropped where it does not exceed a level.
"""
import numpy as np

from .._np.core import binary
from .._opcodes import Opcode as Op
from .._active import Active, record_unary

__all__ = ["magnitude", "larger", "smaller", "at_least", "frozen_at_or_below"]


def magnitude(x):
    """``np.abs(x)``."""
    if isinstance(x, Active):
        return record_unary(x, int(Op.ABS))
    return np.abs(x)


def larger(a, b):
    """``np.maximum(a, b)``."""
    if isinstance(a, Active) or isinstance(b, Active):
        return binary(Op.MAXIMUM, a, b)
    return np.maximum(a, b)


def smaller(a, b):
    """``np.minimum(a, b)``."""
    if isinstance(a, Active) or isinstance(b, Active):
        return binary(Op.MINIMUM, a, b)
    return np.minimum(a, b)


def at_least(low, x):
    """Python's ``max(low, x)`` for a constant ``low``, as SciPy's step-size
    controllers take it: ``x`` where it exceeds ``low``, else ``low``, NaN
    included (``np.maximum`` would give NaN). A NaN error estimate (a
    right-hand side that turned NaN) then shrinks the step by the smallest
    factor until the integration fails, as SciPy's does, instead of making
    the step size NaN and the integration run for ever."""
    if isinstance(x, Active):
        return np.where(x > low, x, low)
    return x if x > low else low


def frozen_at_or_below(x, level):
    """``x`` (a finite number), whose derivative is zero where ``x <= level``.

    The value is exactly ``x``; the side is read from the values at every
    replay (``sign(max(x - level, 0))``, a 0/1 factor of derivative zero),
    like the side of :func:`larger`, without a branch record.
    """
    if not isinstance(x, Active):
        return x
    fixed = record_unary(x, int(Op.STOP_GRADIENT))
    live = record_unary(larger(x - level, 0.0), int(Op.SIGN))
    return fixed + live * (x - fixed)
