"""The user's right-hand side ``fun(t, y, *args)``, called as a solver needs
it, and the conversion of user values (arrays, or lists holding active
numbers) to float arrays."""
import numpy as np

from .._creation import current_tape
from .._np.joins import from_pieces, holds_active
from .._tape import Active
from ..errors import UnsupportedOperation

__all__ = ["RightHandSide", "real_array", "RUNNING", "FINISHED", "FAILED"]

# solver status carried in a method's state (a float, so that it can be a loop state)
RUNNING, FINISHED, FAILED = 0.0, 1.0, -1.0


def real_array(x, what):
    """``np.asarray(x, dtype=float)`` that keeps active values recorded: an
    active array as it is, a (nested) list holding active numbers stacked."""
    if isinstance(x, Active):
        return x
    if current_tape() is not None and holds_active(x):
        return from_pieces(x)
    arr = np.asarray(x)
    if arr.dtype.kind == "c":
        raise UnsupportedOperation(
            f"adsim.integrate.solve_ivp: {what} is complex; adsim integrates real states. "
            f"Split y into its real and imaginary parts (a state twice as long) and write fun "
            f"for that state")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"adsim.integrate.solve_ivp: {what} must hold real numbers, got dtype "
                        f"{arr.dtype}")
    return arr.astype(float)


class RightHandSide:
    """``fun(t, y, *args)`` as a float vector of the state's length; inside a
    recording ``fun`` runs on active values and is recorded."""

    def __init__(self, fun, n):
        self.fun = fun
        self.n = n

    def __call__(self, t, y, args):
        f = real_array(self.fun(t, y, *args), "fun(t, y)")
        if f.shape != (self.n,):
            if f.size == self.n:
                return np.reshape(f, (self.n,))
            raise ValueError(f"adsim.integrate.solve_ivp: fun(t, y) returned shape "
                             f"{tuple(f.shape)}; it must return the derivative of y, shape "
                             f"({self.n},)")
        return f
