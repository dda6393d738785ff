"""The right-hand side ``f(t, y, p)`` of an ODE recorded once as an adsim
tape, for the adjoint and sensitivity solves of ``odeint``
(adsim/integrate/_odeint_solves.py).

The tape's inputs are ``y`` (n), the parameters ``p`` (the active arguments
of the call, as one vector) and ``t`` (a scalar). Its replays, in
C, give what the solves need at any point ``(t, y, p)``:

- one adjoint sweep with weights ``W`` (q, n): ``f``, ``W f_y``, ``W f_t``
  and ``W f_p`` (the adjoint equation and its parameter quadrature);
- one tangent sweep with directions ``V`` (k, n) and ``P`` (k, parameters):
  ``f_y V + f_p P`` (the forward sensitivity equations);
- the Jacobians ``f_y`` and ``f_p``: an adjoint sweep with the n unit weights.

A replay at a point where a branch of ``f`` (an ``if``, ``np.where``,
``abs``) goes the other way raises ``BranchChanged``; ``f`` is then recorded
again there and the sweep repeated.
"""
import threading

import numpy as np

from .._record.recording import record
from ..errors import BranchChanged
from ._rhs import real_array

__all__ = ["RecordedField"]


class RecordedField:
    """``rhs(t, y, *params)`` (plain NumPy code returning ``dy/dt``, n
    numbers) as a tape; see the module docstring. The parameters, of
    ``shapes``, enter the tape as one flat vector (set by :meth:`at`), cut
    into their shapes inside the recording; the tape's inputs are
    ``(y, p, t)``, so that one adjoint sweep gives ``W f_y``, ``W f_p`` and
    ``W f_t`` as three arrays."""

    def __init__(self, rhs, n, shapes):
        self.rhs = rhs
        self.n = n
        self.shapes = [tuple(s) for s in shapes]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.n_params = sum(self.sizes)
        self.p = np.zeros(self.n_params)
        self.recordings = 0
        self._tape = None
        self._unit = np.eye(n)
        self._lock = threading.Lock()

    def at(self, params):
        """Replays at the parameter values ``params`` (one array per shape)
        from now on."""
        self.p = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in params]) \
            if params else np.zeros(0)

    def _record(self, t, y):
        """Record ``rhs`` at ``(t, y)`` and the current parameters."""
        n, shapes = self.n, self.shapes
        bounds = np.cumsum([0] + self.sizes)

        def field(y, p, t):
            params = [p[a:b].reshape(s) for a, b, s in zip(bounds[:-1], bounds[1:], shapes)]
            f = real_array(self.rhs(t, y, *params), "func(y, t)")
            return f if np.shape(f) == (n,) else np.reshape(f, (n,))
        field.__name__ = getattr(self.rhs, "__name__", "func")
        with self._lock:
            self._tape = record(field, np.array(y, dtype=float), self.p, np.array(t, dtype=float))
            self.recordings += 1
        return self._tape

    def _sweep(self, t, y, sweep, *seeds):
        """The tape method ``sweep`` ("_forward", "_adjoint", "_tangent")
        at ``(t, y)`` with ``seeds``: recording ``f`` first when there is no
        tape yet, and again where a branch changed."""
        tape = self._tape or self._record(t, y)
        inputs = [np.asarray(y, dtype=float), self.p, np.asarray(t, dtype=float)]
        try:
            return getattr(tape, sweep)(tape._inputs(inputs), *seeds)
        except BranchChanged:
            tape = self._record(t, y)
            return getattr(tape, sweep)(tape._inputs(inputs), *seeds)

    def value(self, t, y):
        """``f(t, y, p)``."""
        return self._sweep(t, y, "_forward").reshape(self.n)

    def adjoint(self, t, y, W):
        """``(f, W f_y, W f_p, W f_t)`` for weights ``W`` (q, n): shapes
        (n,), (q, n), (q, parameters) and (q, 1)."""
        f, (ay, ap, at) = self._sweep(t, y, "_adjoint", W)
        return f, ay, ap, at

    def tangent(self, t, y, V, P):
        """``(f, f_y V + f_p P)`` for directions ``V`` (k, n) of ``y`` and
        ``P`` (k, parameters) of the parameters: shapes (n,) and (k, n)."""
        return self._sweep(t, y, "_tangent", [V, P, np.zeros((V.shape[0], 1))])

    def jacobians(self, t, y):
        """``(f_y, f_p)``, shapes (n, n) and (n, parameters)."""
        _, fy, fp, _ = self.adjoint(t, y, self._unit)
        return fy, fp
