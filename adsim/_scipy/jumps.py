"""Where an integrand may jump at a point that moves with the parameters.

The Leibniz rule that differentiates ``quad`` integrates the integrand's
derivative in the parameters node by node. An integrand that jumps where
the variable meets a parameter (``np.where(x < p, f, g)``, ``np.heaviside(p
- x, 0)``, ``if x < p:``, ``np.floor(x * p)``) has, besides, a term for the
moving jump (its size times the speed of its position) that no node sees:
without it the derivative would be silently wrong. Such a jump can only
come from an op whose derivative is zero almost everywhere, a comparison
or a rounding, whose operands depend on both the variable and a parameter;
:func:`moving_jump` finds one on the integrand's tape. Kinks (``abs``,
``maximum``, ``clip``: continuous) and jumps at fixed points (``x <
0.5``) keep the Leibniz rule exact for first derivatives and pass; but
the integrand's derivative jumps at a moving kink, so second derivatives
(the Leibniz rule applied to that derivative) would miss the same kind of
term (d^2/dp^2 of int |x - p| dx is 2, where the rule gives 0):
:func:`moving_kink` finds such a kink for the second-order rules to refuse.
"""
from .._decoder import decode, refs

# ops whose result is piecewise constant in their operands
_STEPS = frozenset({"LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL",
                    "SIGN", "FLOOR", "CEIL", "TRUNC", "RINT", "ROUND", "FLOOR_DIVIDE"})
_VARIABLE, _PARAMETER = 1, 2


# ops continuous in their operands whose derivative jumps
_KINKS = frozenset({"ABS", "MAXIMUM", "MINIMUM"})


def moving_jump(tape):
    """The name of the first step op on ``tape`` (inputs: the variable, then
    the parameters) reading values that depend on both, or None."""
    return _reading_both(tape, _STEPS)


def moving_kink(tape):
    """The name of the first kink op (``abs``, ``maximum``, ``minimum``:
    ``np.clip`` and ``np.fmax`` record as these) on ``tape`` reading values
    that depend on both the variable and the parameters, or None."""
    return _reading_both(tape, _KINKS)


def _reading_both(tape, names):
    depends = {slot: (_VARIABLE if i == 0 else _PARAMETER)
               for i, slot in enumerate(tape.input_slots)}
    for _, op in zip(*decode(tape)):
        on = 0
        for _, ref in refs(op):
            if ref >= 0:
                on |= depends.get(ref, 0)
        if op.spec.name in names and on == _VARIABLE | _PARAMETER:
            return op.spec.name.lower()
        if op.result >= 0:
            depends[op.result] = on | (depends.get(op.result, 0) if op.spec.in_place else 0)
    return None
