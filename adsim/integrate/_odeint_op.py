"""The values of one recorded call of ``odeint``: a CALLBACK op
(adsim/_callback_rules.py) with the arguments ``(y0, t, p_1, ..., p_r)``
(the parameters: the active values among ``args`` and in ``func``'s
closure) and the result ``Y`` (shape (len(t), len(y0)), flat): SciPy's
``odeint`` on the plain values, at every replay.

It has no derivative: ``odeint`` (``_odeint.py``) records it on stopped
inputs, so sweeps never run its derivative rules, and takes the derivatives
from a Radau solve of the same problem.
"""
import threading

import numpy as np

from .._callback_rules import CallbackRules
from ..errors import UndefinedDerivative

__all__ = ["OdeintOp", "FAILED"]

FAILED = ("adsim: scipy.integrate.odeint did not complete the integration here (see its "
          "ODEintWarning; full_output=True gives the details), so its output has no "
          "derivative. Raise mxstep=, loosen the tolerances, or keep the parameters where the "
          "solution exists")


class OdeintOp(CallbackRules):
    """SciPy's ``odeint`` of one recorded call; ``call`` (an
    ``_odeint.Call``) runs it on plain values. ``first`` is (the flat
    arguments, (Y, success)) of the recorded call."""

    name = "scipy.integrate.odeint"
    not_saved = "its values are SciPy's odeint run on `func` again at every replay"

    def __init__(self, call, n, m, param_shapes, first):
        self.call = call
        self.n, self.m = n, m
        self.shapes = [(n,), (m,)] + [tuple(s) for s in param_shapes]
        self._lock = threading.Lock()       # func's closure cells are set per call
        self._solved = (self._key(first[0]), first[1])   # the latest value

    @staticmethod
    def _key(flat):
        return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in flat)

    def value(self, args, context=None):
        with self._lock:
            key = self._key(args)
            if self._solved[0] != key:
                y0, t, *params = [np.asarray(a, dtype=float).reshape(s)
                                  for a, s in zip(args, self.shapes)]
                Y, _, success = self.call.solve(y0, t, params)
                self._solved = (key, (np.asarray(Y, dtype=float).reshape(self.m, self.n),
                                      success))
            Y, success = self._solved[1]
            if not success:
                raise UndefinedDerivative(FAILED)
            return Y.reshape(-1)
