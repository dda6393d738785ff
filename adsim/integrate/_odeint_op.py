"""One recorded call of ``odeint``: a CALLBACK op (adsim/_callback_rules.py)
with the arguments ``(y0, t, p_1, ..., p_r)`` (the parameters: the active
values among ``args`` and in ``func``'s closure) and the result ``Y``
(shape (len(t), len(y0)), flat).

- value: SciPy's ``odeint`` on the plain values (SciPy's numbers);
- tangent: the forward sensitivity equations;
- adjoint: the continuous adjoint (adsim/integrate/_odeint_solves.py);
- second-order: refused, naming ``adsim.integrate.solve_ivp``.

The derivative rules refuse a point where SciPy's own integration failed
(there is no solution to differentiate).
"""
import threading

import numpy as np

from .._callback_rules import CallbackRules
from .._record.creation import suspended
from ..errors import UndefinedDerivative, UnsupportedOperation
from ._field import RecordedField
from ._odeint_solves import adjoint_solve, groups, sensitivity_solve, trajectory

__all__ = ["OdeintOp"]

SECOND_ORDER = (
    "adsim: second derivatives (Hessian-vector products, a derivative of a derivative) through "
    "scipy.integrate.odeint are not computed: its derivatives are solutions of adjoint and "
    "sensitivity equations integrated to odeint's tolerance, which adsim does not "
    "differentiate again. For second derivatives integrate with adsim.integrate.solve_ivp("
    "lambda t, y, *args: func(y, t, *args), (t[0], t[-1]), y0, t_eval=t, args=args, "
    "method='Radau', rtol=..., atol=...) (solve_ivp's y is odeint's transposed), "
    "differentiable to every order")


class OdeintOp(CallbackRules):
    """The rules of one recorded ``odeint`` call; ``call`` (an
    ``_odeint.Call``) runs SciPy's ``odeint`` and the right-hand side on
    plain values. ``varied`` says which of ``y0`` and ``t`` are active;
    ``first`` is (the flat arguments, (Y, success)) of the recorded call."""

    name = "scipy.integrate.odeint"

    def __init__(self, call, n, m, param_shapes, varied, first):
        self.call = call
        self.n, self.m = n, m
        self.shapes = [(n,), (m,)] + [tuple(s) for s in param_shapes]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.times_varied = varied[1]
        self.field = None
        # one rule at a time: the rules share the recorded field, the caches
        # below, and func's closure cells (set to the values of each call)
        self._lock = threading.RLock()
        # (arguments, (Y, success)) of the latest value: first the one computed while recording
        self._solved = (self._key(first[0]), first[1])
        self._path = (None, None)      # (arguments, Trajectory) of the latest adjoint

    def _split(self, flat):
        y0, t, *params = [np.asarray(a, dtype=float).reshape(s)
                          for a, s in zip(flat, self.shapes)]
        return y0, t, params

    @staticmethod
    def _key(flat):
        return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in flat)

    # ---- value ---------------------------------------------------------------------
    def _solve(self, flat):
        key = self._key(flat)
        if self._solved[0] != key:
            y0, t, params = self._split(flat)
            Y, _, success = self.call.solve(y0, t, params)
            self._solved = (key, (np.asarray(Y, dtype=float).reshape(self.m, self.n), success))
        return self._solved[1]

    def value(self, args, context=None):
        with self._lock:
            return self._solve(args)[0].reshape(-1)

    # ---- derivatives -------------------------------------------------------------
    def _prepared(self, flat):
        """(y0, t, params, Y) at ``flat``, the field set to these parameters;
        refuses a point where SciPy's integration failed."""
        Y, success = self._solve(flat)
        if not success:
            raise UndefinedDerivative(
                "adsim: scipy.integrate.odeint did not complete the integration here (see "
                "its ODEintWarning; full_output=True gives the details), so its output has no "
                "derivative. Raise mxstep=, loosen the tolerances, or keep the parameters "
                "where the solution exists")
        y0, t, params = self._split(flat)
        if self.field is None:
            self.field = RecordedField(self.call.rhs, self.n, self.shapes[2:])
        self.field.at(params)
        return y0, t, params, Y

    def tangent(self, args, result, tangents, context=None):
        with self._lock, suspended():
            return self._tangent(args, tangents)

    def _tangent(self, args, tangents):
        y0, t, params, Y = self._prepared(args)
        k = next((d.shape[0] for d in tangents if d is not None), 1)
        full = np.concatenate([np.zeros((k, s)) if d is None else d.reshape(k, s)
                               for d, s in zip(tangents, self.sizes)], axis=1)
        out = np.zeros((k, self.m * self.n))
        scale = np.max(np.abs(full), axis=1)
        live = scale > 0                    # a zero direction has a zero tangent
        if live.any():
            D = full[live] / scale[live, None]
            found = np.empty((D.shape[0], self.m * self.n))
            for g in groups(D.shape[0], self.n, fixed=self.n):
                dy0, dt, dp = np.split(D[g], [self.n, self.n + self.m], axis=1)
                found[g] = sensitivity_solve(self.field, t, Y, dy0, dt, dp,
                                             self.call.settings).reshape(-1, self.m * self.n)
            out[live] = found * scale[live, None]
        return out

    def _trajectory(self, args, y0, t, params):
        key = self._key(args)
        if self._path[0] != key:
            self._path = (key, trajectory(self.call.plain_rhs(params), self.field, y0, t[0],
                                          t[-1], self.call.settings))
        return self._path[1]

    def adjoint(self, args, result, adjoint, context=None):
        with self._lock, suspended():
            return self._adjoint(args, adjoint)

    def _adjoint(self, args, adjoint):
        y0, t, params, Y = self._prepared(args)
        q = adjoint.shape[0]
        P = self.field.n_params
        out_y0, out_t, out_p = np.zeros((q, self.n)), np.zeros((q, self.m)), np.zeros((q, P))
        scale = np.max(np.abs(adjoint), axis=1)
        live = scale > 0
        if live.any():
            W = adjoint[live].reshape(-1, self.m, self.n) / scale[live, None, None]
            found = [np.empty((W.shape[0], size)) for size in (self.n, self.m, P)]
            moves = self.m > 1 and t[-1] != t[0]
            path = self._trajectory(args, y0, t, params) if moves else None
            for g in groups(W.shape[0], self.n + P):
                for into, got in zip(found, adjoint_solve(self.field, path, t, Y, W[g],
                                                          self.call.settings,
                                                          self.times_varied)):
                    into[g] = got
            s = scale[live, None]
            out_y0[live], out_t[live], out_p[live] = (f * s for f in found)
        pieces = np.split(out_p, np.cumsum(self.sizes[2:])[:-1], axis=1) if P else []
        return [out_y0, out_t if self.times_varied else None] + pieces

    def soadjoint(self, args, result, tangents, adjoint, adjoint_tangents, context=None):
        raise UnsupportedOperation(SECOND_ORDER)
