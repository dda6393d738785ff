"""The outputs of an integration whose ``fun`` crossed a kink: first
derivatives only.

A kink of ``fun`` (``np.where(y > 0, a * y, b * y)``, ``max(y[0], 0.0)``,
``np.maximum(y, c)``, an upwind flux) crossed where the parameters move
the crossing leaves the solution's first derivatives those of the steps
(the kink's two sides agree on the value there), but not its second: the
crossing time's derivative times the jump of ``fun``'s derivative adds a
term no step sees (an hvp 6 % off differences of the gradient on a crossed
``np.where``; a Hessian of 0.38 where it is 0 on a crossed
``np.maximum(y, 0.495)``). The outputs pass through :func:`first_order_only`, an identity whose first-order rules
are exact and whose recorded adjoint rule -- what second-order sweeps
(hvp, hessian, a derivative of a derivative) differentiate -- raises.
adsim/integrate/_switches.py tells when: a comparison's outcome changed
between two points of the integration, or the side of ``np.maximum``,
``np.minimum`` (``np.clip``, ``np.fmax``) or ``np.abs`` where ``fun``'s
Jacobian jumps (``v * abs(v)``, whose Jacobian is continuous, has no such
term and keeps its second derivatives).
"""
import numpy as np

from .._active import Active
from ..errors import UnsupportedOperation
from ..primitives import BuiltinFamily, Primitive

__all__ = ["first_order_only"]


class _FirstOrderOnly(Primitive):
    explains_recorded_rule = True       # its refusal is the message


def _make(reason):
    if not isinstance(reason, str):
        raise ValueError("the reason for a first-order-only identity is a string")

    def value(y):
        return np.array(y, dtype=float)

    def jvp(args, out, tangents):
        return tangents[0]

    def vjp(args, out, adjoint):
        if isinstance(adjoint, Active) or any(isinstance(a, Active) for a in args):
            raise UnsupportedOperation(reason)
        return (adjoint,)
    return _FirstOrderOnly(value, jvp=jvp, vjp=vjp, name="adsim.integrate.first_order_only",
                           elementwise=True)


_FIRST_ORDER_ONLY = BuiltinFamily("adsim.integrate.first_order_only", 1, _make)


def first_order_only(y, reason):
    """``y`` (active) as the output of an op whose second-order sweeps raise
    UnsupportedOperation(``reason``)."""
    return _FIRST_ORDER_ONLY(reason=reason)(y)
