"""``abs``, ``maximum`` and ``minimum`` without branch records.

``np.abs`` and ``np.maximum`` on active arrays record the side each element
takes as a branch, so that a replay where a side differs records again. The
solvers apply them to whole states (the error scale ``max(|y|, |y_new|)``)
and to step-size factors, where some side changes at almost every step;
recording the step again each time would cost more than the step. Their
derivative rules read the side from the operands' values at every replay,
so without the branch record the derivatives are still those of the point
of evaluation (at a tie, the first operand's side).

:func:`frozen_at_or_below` makes the same kind of choice for a derivative
alone: a value whose derivative is dropped where it does not exceed a level.
"""
import numpy as np

from .._np.core import operand, shape_of, tape_of
from .._opcodes import Opcode as Op
from .._active import Active, record_binary_refs, record_unary

__all__ = ["magnitude", "larger", "smaller", "frozen_at_or_below"]


def magnitude(x):
    """``np.abs(x)``."""
    if isinstance(x, Active):
        return record_unary(x, int(Op.ABS))
    return np.abs(x)


def _elementwise(code, plain, a, b):
    if not isinstance(a, Active) and not isinstance(b, Active):
        return plain(a, b)
    tape = tape_of(a, b)
    shape = np.broadcast_shapes(shape_of(a), shape_of(b))
    ra, keep_a = operand(tape, a, shape)      # noqa: F841  (alive until recorded)
    rb, keep_b = operand(tape, b, shape)      # noqa: F841
    return record_binary_refs(tape, int(code), ra, rb, shape)


def larger(a, b):
    """``np.maximum(a, b)``."""
    return _elementwise(Op.MAXIMUM, np.maximum, a, b)


def smaller(a, b):
    """``np.minimum(a, b)``."""
    return _elementwise(Op.MINIMUM, np.minimum, a, b)


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
