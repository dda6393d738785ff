"""The values of one recorded call of ``odeint``: a CALLBACK op
(adsim/_callback_rules.py) with the arguments ``(y0, t, p_1, ..., p_r)``
(the parameters: the active values among ``args`` and in ``func``'s
closure) and the result ``Y`` (shape (len(t), len(y0)), flat): SciPy's
``odeint`` on the plain values, at every replay.

It has no derivative: ``odeint`` (``_odeint.py``) records it on stopped
inputs, so sweeps never run its derivative rules, and takes the derivatives
from a Radau solve of the same problem.
"""
import numpy as np

from .._callback_rules import CallbackRules
from .._filefields import expect_keys
from ..errors import UndefinedDerivative
from ._recorded_fun import LSODA_TURNS, shapes_field

__all__ = ["OdeintOp", "FAILED"]

FAILED = ("adsim: scipy.integrate.odeint did not complete the integration here (see its "
          "ODEintWarning; full_output=True gives the details), so its output has no "
          "derivative. Raise mxstep=, loosen the tolerances, or keep the parameters where the "
          "solution exists")


class OdeintOp(CallbackRules):
    """SciPy's ``odeint`` of one recorded call; ``call`` (an
    ``_odeint.Call``) runs it on plain values. ``first`` is (the flat
    arguments, (Y, success)) of the recorded call, None when loaded."""

    name = "scipy.integrate.odeint"
    file_kind = "adsim.odeint"

    def __init__(self, call, n, m, param_shapes, first):
        self.call = call
        self.n, self.m = n, m
        self.shapes = [(n,), (m,)] + [tuple(s) for s in param_shapes]
        # the latest value (a loaded op has none)
        self._solved = (None, None) if first is None else (self._key(first[0]), first[1])

    def operand_sizes(self):
        return [int(np.prod(s)) for s in self.shapes], self.m * self.n

    def file_state(self):
        call, tapes = self.call.file_state()
        return {"call": call, "n": self.n, "m": self.m,
                "param_shapes": [list(s) for s in self.shapes[2:]]}, tapes

    @classmethod
    def from_file_state(cls, state, tapes):
        from ._odeint import Call          # the module that imports this one
        expect_keys(state, ("call", "n", "m", "param_shapes"))
        n, m = state["n"], state["m"]
        if type(n) is not int or type(m) is not int or n < 1 or m < 1:
            raise ValueError(f"odeint's output has len(t) by len(y0) values, not {m!r} by {n!r}")
        shapes = shapes_field(state["param_shapes"])
        call = Call.from_file_state(state["call"], tapes, shapes)
        if call.n != n:
            raise ValueError(f"odeint's call integrates {call.n} values, its output has {n}")
        return cls(call, n, m, shapes, None)

    @staticmethod
    def _key(flat):
        return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in flat)

    def value(self, args, context=None):
        with LSODA_TURNS:
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
