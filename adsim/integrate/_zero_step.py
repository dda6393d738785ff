"""The state at a time equal to the start time: ``y0``, with the flow's
derivatives in the two times.

An integration over an empty interval (``t_span = (t0, t0)``) takes no
step, and ``odeint`` may be asked for a time twice (``t = [0, 1, 1, 2]``)
or only for ``t0``. The state there is the one at the start, but it moves
with the times: ``d y(tf) / d tf = f(t0, y0) = -d y(tf) / d t0``. Holding
``y0`` would give zero for both. One classical Runge--Kutta step of size
``h = tf - t0`` (zero) gives ``y0`` exactly, and its Taylor series in ``h``
is the flow's up to ``h^4``, so first to fourth derivatives in the times
are the exact solution's (Hairer, Norsett & Wanner 1993, II.1)."""
import numpy as np

from .._active import Active
from ._dense import recorded_values

__all__ = ["flowed"]


def flowed(rhs, t0, y0, h, args):
    """``y0`` advanced by one classical RK4 step of ``rhs(t, y, args)`` of
    size ``h`` (whose value is zero; it may be active), or ``y0`` as it is
    when neither ``t0`` nor ``h`` is active (no derivative to carry) or
    ``rhs`` is not finite there (``0 * inf`` would change the value)."""
    if not isinstance(h, Active) and not isinstance(t0, Active):
        return y0
    k1 = rhs(t0, y0, args)
    if not np.all(np.isfinite(recorded_values(k1))):
        return y0
    half = 0.5 * h
    k2 = rhs(t0 + half, y0 + half * k1, args)
    k3 = rhs(t0 + half, y0 + half * k2, args)
    k4 = rhs(t0 + h, y0 + h * k3, args)
    return y0 + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
