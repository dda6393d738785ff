"""Whether adsim's own checks of a value are recorded as branches.

A few rules test a value before using a formula that holds only away from
a point (the base of a complex power is not 0, |z| is not 0) and record the
test as a branch, so that a replay that meets the point records again.
Inside an integrand given to ``quad`` such a recorded comparison, of values
depending on both the variable and the parameters, is what its rule takes
for a jump that moves with the parameters (adsim/_scipy/jumps.py), and the
integral is refused, though the integrand does not switch there
(``np.sqrt(b**2 + s**2 * (u**2 + 1j*u))`` of a characteristic function,
``abs(H(1j * w)) ** 2`` of a transfer function). While ``quad`` records its
integrand, the tests read the values when it is recorded and are left off
the tape; a node meeting the point exactly then gives infinite or NaN
derivatives there, as real ``np.sqrt(x)`` does at 0.
"""
import contextlib
import threading

__all__ = ["recorded", "unrecorded"]

_state = threading.local()


def recorded():
    """Whether the checks are recorded here (everywhere but an integrand of quad)."""
    return not getattr(_state, "off", False)


@contextlib.contextmanager
def unrecorded():
    before = getattr(_state, "off", False)
    _state.off = True
    try:
        yield
    finally:
        _state.off = before
