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
from scipy.integrate import odeint as scipy_odeint

from .._callback_rules import CallbackRules
from .._filefields import expect_keys
from .._record.creation import suspended
from .._validate import name_of
from ..errors import TapeCopyError, UndefinedDerivative
from ._recorded_fun import (LSODA_TURNS, RecordedDerivative, RecordedFunction, decoded, encoded,
                            loaded_functions, saved_functions, shapes_field)
from ._rhs import real_array

__all__ = ["OdeintOp", "Call", "FAILED"]

FAILED = ("adsim: scipy.integrate.odeint did not complete the integration here (see its "
          "ODEintWarning; full_output=True gives the details), so its output has no "
          "derivative. Raise mxstep=, loosen the tolerances, or keep the parameters where the "
          "solution exists")


class Call:
    """The user's call on plain values: SciPy's ``odeint`` on a recorded
    tape of the right-hand side ``rhs(t, y, *params)`` (``_recorded_fun.py``;
    ``params``: the values of the active arguments, at ``positions`` of
    ``args``), and ``rhs`` itself for the donor's solve. ``recorded``: a
    RecordedFunction (one loaded from a tape file has no ``func``);
    ``Dfun``: None, or a RecordedDerivative of the user's ``Dfun`` (made
    here from the callable, or loaded)."""

    def __init__(self, func, Dfun, args, positions, options, n, recorded=None):
        self.func = func
        self.name = name_of(func)       # the user's, in messages about self.rhs
        self.args, self.positions = args, positions
        self.options = options
        self.tfirst = bool(options["tfirst"])
        self.n = n
        self.recorded = recorded or RecordedFunction(
            lambda t, y, *params: real_array(self.rhs(t, y, *params), "func").reshape(-1),
            name_of(func), f"odeint of `{name_of(func)}`")
        self.Dfun = Dfun
        if callable(Dfun):
            def python(params):
                args = self._args(params)
                return (lambda t, y: Dfun(t, y, *args)) if self.tfirst else \
                    (lambda t, y: Dfun(y, t, *args))

            def D(t, y, *params):
                return real_array(python(params)(t, y), "Dfun")
            self.Dfun = RecordedDerivative(D, name_of(Dfun), f"the Dfun `{name_of(Dfun)}` of "
                                                             f"odeint of `{name_of(func)}`", python)

    def _args(self, params):
        """``args`` with ``params`` at the active positions; plain 0-d values
        as NumPy scalars, as the user's program passes numbers (arithmetic
        on 0-d arrays gives the same numbers, slower)."""
        full = list(self.args)
        for i, p in zip(self.positions, params):
            full[i] = p[()] if type(p) is np.ndarray and p.ndim == 0 else p
        return tuple(full)

    def solve(self, y0, t, params):
        """(Y, infodict, success) of SciPy's ``odeint`` at these values."""
        params = tuple(np.asarray(p, dtype=float) for p in params)
        options = dict(self.options, tfirst=True)     # the recorded function's order
        with LSODA_TURNS, suspended():     # SciPy's own odeint on the recorded function
            Dfun = None if self.Dfun is None else self.Dfun.plain(t[0], y0, params)
            Y, info = scipy_odeint(self.recorded.plain(params), y0, t, Dfun=Dfun,
                                   full_output=True, **options)
            self.recorded.recorded_once(t[0], y0, params)
        # SciPy's message where every time of t is t[0]: nothing to integrate, Y is y0
        return Y, info, info["message"] in ("Integration successful.",
                                            "Nothing was done; the integration time was 0.")

    def rhs(self, t, y, *params):
        args = self._args(params)
        return self.func(t, y, *args) if self.tfirst else self.func(y, t, *args)

    def file_state(self):
        """The call as a tape file describes it, and the tapes it owns."""
        if self.Dfun is not None and not self.Dfun.taped:
            raise TapeCopyError(
                f"adsim: the tape holds scipy.integrate.odeint with Dfun=, which tape files "
                f"cannot hold: {self.Dfun.why_not or 'it was not recorded'}; leave Dfun out "
                f"(LSODA estimates the Jacobian), write it with NumPy functions, or record the "
                f"function in the process that replays it")
        functions, tapes = saved_functions([self.recorded] + (
            [] if self.Dfun is None else [self.Dfun.function]))
        options = {k: encoded(v) for k, v in self.options.items()}
        return {"functions": functions, "n": self.n, "options": options}, tapes

    @classmethod
    def from_file_state(cls, state, tapes, shapes):
        """The Call a tape file describes; ``shapes``: the parameters'."""
        expect_keys(state, ("functions", "n", "options"))
        n, options = state["n"], state["options"]
        if type(n) is not int or n < 1 or not isinstance(options, dict) or \
                set(options) != set(_OPTIONS):
            raise ValueError(f"an odeint call is described by its state's size and the options "
                             f"{sorted(_OPTIONS)}")
        functions = state["functions"]
        # a second function is Dfun: its matrix as recorded (n by n; banded,
        # its diagonals by n), which SciPy checks
        derivative = isinstance(functions, list) and len(functions) == 2 and tapes and \
            len(tapes[-1].output_shape) == 2 and 1 <= tapes[-1].output_shape[0] <= 2 * n and \
            1 <= tapes[-1].output_shape[1] <= 2 * n
        outputs = [(n,)] + ([tuple(tapes[-1].output_shape)] if derivative else [])
        recorded, *Dfun = loaded_functions(
            functions, tapes, [(), (n,)] + list(shapes), outputs,
            lambda i, name: f"odeint of `{name}`" if i == 0 else f"the Dfun `{name}` of odeint")
        call = cls(None, None, (), [], {k: decoded(v) for k, v in options.items()}, n, recorded)
        if Dfun:
            call.Dfun = RecordedDerivative(None, Dfun[0].name, Dfun[0].what, None,
                                           Dfun[0].variants.tapes())
        return call


# odeint's options, as the call passes them to SciPy
_OPTIONS = ("col_deriv", "ml", "mu", "rtol", "atol", "tcrit", "h0", "hmax", "hmin", "ixpr",
            "mxstep", "mxhnil", "mxordn", "mxords", "printmessg", "tfirst")


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
