"""Radau IIA of order 5 (three stages) with error control, as SciPy's ``Radau``.

One :meth:`Radau.attempt` is one simplified Newton solve of the collocation
system (Hairer & Wanner 1996, IV.8) followed by its decision: retry with a
fresh Jacobian, halve the step after a Newton failure, reject after the
error estimate, or accept. The solver state carries what SciPy keeps
between steps: the Jacobian, the step size the Newton matrices were
factored with (the matrices are rebuilt from both, see
:mod:`adsim.integrate._implicit`), the collocation values of the last step
(its interpolant predicts the next Newton start), the step-size history of
the predictive controller, and the counts.

References
----------
E. Hairer and G. Wanner, *Solving Ordinary Differential Equations II*, 2nd
ed., Springer, 1996, sec. IV.8 (implementation of implicit Runge-Kutta
methods, the transformation to a real and a complex system, and the
predictive step-size controller of Gustafsson).
"""
from collections import namedtuple

import numpy as np

from .._active import Active
from ._common import (EPS, MAX_FACTOR, MIN_FACTOR, ImplicitStepper, along_times, min_step,
                      stage_sums,
                      norm, powers)
from ._piecewise import at_least, frozen_at_or_below, larger, magnitude, smaller
from ._rhs import FAILED, FINISHED, RUNNING

__all__ = ["Radau", "RadauState"]

S6 = 6 ** 0.5
C = np.array([(4 - S6) / 10, (4 + S6) / 10, 1])           # collocation nodes
E = np.array([-13 - 7 * S6, -13 + 7 * S6, -1]) / 3        # embedded error weights
MU_REAL = 3 + 3 ** (2 / 3) - 3 ** (1 / 3)                 # real eigenvalue of inv(A)
MU_ALPHA = 3 + 0.5 * (3 ** (1 / 3) - 3 ** (2 / 3))        # complex pair alpha +- i beta
MU_BETA = -0.5 * (3 ** (5 / 6) + 3 ** (7 / 6))
# eigenvector transformation of inv(A), Hairer's RADAU5 constants
T = np.array([[0.09443876248897524, -0.14125529502095421, 0.03002919410514742],
              [0.25021312296533332, 0.20412935229379994, -0.38294211275726192],
              [1, 1, 0]])
TI = np.array([[4.17871859155190428, 0.32768282076106237, 0.52337644549944951],
               [-4.17871859155190428, -0.32768282076106237, 0.47662355450055044],
               [0.50287263494578682, -2.57192694985560522, 0.59603920482822492]])
P = np.array([[13 / 3 + 7 * S6 / 3, -23 / 3 - 22 * S6 / 3, 10 / 3 + 5 * S6],   # interpolant
              [13 / 3 - 7 * S6 / 3, -23 / 3 + 22 * S6 / 3, 10 / 3 - 5 * S6],
              [1 / 3, -8 / 3, 10 / 3]])
NEWTON_MAXITER = 6
ROUNDING_MARGIN = 100.0
"""An error estimate at most this many times its rounding level (see
:meth:`Radau._rounding_level`) is rounding noise: its value steers the
step size as in SciPy, its derivative counts as zero (where derivatives
follow the step sizes, ``follow_steps=True``; otherwise the step sizes
pass none anyway)."""

RadauState = namedtuple("RadauState", [
    "t", "y", "f", "h_abs", "h_start", "h_old", "error_old", "history", "use_history",
    "J", "current_jac", "h_lu", "lu_valid", "Z", "has_sol", "t_old", "y_old",
    "status", "in_step", "rejected", "n_accepted", "nfev", "njev", "nlu"])
RadauState.__doc__ = """State of the Radau solver. ``h_abs`` is the step size of
the next attempt; ``h_start`` the step size the current step started from;
``h_old``, ``error_old`` the last accepted step size and error norm
(``history``: they exist; ``use_history``: the current step uses them);
``J`` the Jacobian (``current_jac``: evaluated at the current point);
``h_lu`` the step the Newton matrices belong to (``lu_valid``); ``Z`` the
collocation values of the last accepted step from ``t_old``, ``y_old``
(``has_sol``: there is one); ``in_step`` and ``rejected`` the flags of a
step in progress; the rest are counts."""


class Radau(ImplicitStepper):
    """Radau IIA(5) for one problem (see :class:`ExplicitRungeKutta` for the
    common interface: ``start``, ``attempt``, ``dense``, ``counts``)."""

    State = RadauState
    order = 5

    def start(self, t0, y0, t_bound, args, first_step):
        f0, h_abs, nfev = self.first_evaluation(t0, y0, t_bound, args, first_step, 3)
        J = self.jacobian(t0, y0, args)
        n = y0.shape[0]
        return RadauState(t=t0, y=y0, f=f0, h_abs=h_abs, h_start=h_abs, h_old=1.0, error_old=1.0,
                          history=0.0, use_history=0.0, J=J, current_jac=1.0, h_lu=1.0,
                          lu_valid=0.0, Z=np.zeros((3, n)), has_sol=0.0, t_old=t0, y_old=y0,
                          status=RUNNING, in_step=0.0, rejected=0.0, n_accepted=0.0,
                          nfev=float(nfev), njev=0.0 if self.jacobian.constant else 1.0, nlu=0.0)

    # ---- one attempt ---------------------------------------------------------
    def attempt(self, s, t_bound, args):
        d = self.direction
        t, y = s.t, s.y
        smallest = min_step(t, d)
        h_abs = s.h_abs
        if not s.in_step:             # a new step: clamp, and forget the history if clamped
            h_start, use_history = s.h_abs, s.history
            if h_abs > self.max_step:
                h_abs, use_history = self.max_step, 0.0
            elif h_abs < smallest:
                h_abs, use_history = smallest, 0.0
            s = s._replace(h_start=h_start, use_history=use_history, in_step=1.0)
        if h_abs < smallest:
            return s._replace(status=FAILED), False
        h_try = h_abs              # a retry with a fresh Jacobian repeats this step exactly
        t_new = t + h_abs * d
        if d * (t_new - t_bound) > 0:
            t_new = t_bound
        h = t_new - t
        h_abs = magnitude(h)
        Z0 = self._predict(s, t, y, h) if s.has_sol else np.zeros((3, y.shape[0]))
        # new Newton matrices for this step size unless valid ones are kept: a
        # select by the 0/1 flag, without a branch (one tape for both cases)
        keep = s.lu_valid
        s = s._replace(h_lu=keep * s.h_lu + (1 - keep) * h, lu_valid=1.0,
                       nlu=s.nlu + 2 * (1 - keep))
        converged, n_iter, Z, rate = self._newton(s, t, y, h, Z0, args)
        s = s._replace(nfev=s.nfev + 3 * n_iter)
        if not converged:
            if not s.current_jac and not self.jacobian.constant:
                J = self.jacobian(t, y, args)
                return s._replace(h_abs=h_try, J=J, current_jac=1.0, lu_valid=0.0,
                                  njev=s.njev + 1), False
            return s._replace(h_abs=0.5 * h_abs, lu_valid=0.0), False
        y_new = y + Z[-1]
        ZE = np.dot(Z.T, E) / h
        solve = self.jacobian.linear.shifted
        f = s.f
        error = solve(s.J, MU_REAL / s.h_lu, f + ZE)
        scale = self.atol + larger(magnitude(y), magnitude(y_new)) * self.rtol
        error_norm = norm(error / scale)
        safety = 0.9 * (2 * NEWTON_MAXITER + 1) / (2 * NEWTON_MAXITER + n_iter)
        if s.rejected and error_norm > 1:     # a better estimate after a rejection
            f = self.rhs(t, y + error, args)
            error = solve(s.J, MU_REAL / s.h_lu, f + ZE)
            error_norm = norm(error / scale)
            s = s._replace(nfev=s.nfev + 1)
        if error_norm > 1:
            factor = self._predict_factor(s, h_abs, error_norm)
            h_abs = h_abs * self.controlled(at_least(MIN_FACTOR, safety * factor))
            return s._replace(h_abs=h_abs, lu_valid=0.0, rejected=1.0), False
        if isinstance(error_norm, Active):
            error_norm = frozen_at_or_below(
                error_norm, self._rounding_level(f, Z, h_abs, s.h_lu, scale))
        return self._accept(s, t_new, y_new, h_abs, Z, error_norm, safety, n_iter, rate,
                            t_bound, args), True

    def _accept(self, s, t_new, y_new, h_abs, Z, error_norm, safety, n_iter, rate, t_bound,
                args):
        recompute_jac = not self.jacobian.constant and n_iter > 2 and rate > 1e-3
        if error_norm == 0:
            factor = MAX_FACTOR
        else:
            factor = self.controlled(
                smaller(MAX_FACTOR, safety * self._predict_factor(s, h_abs, error_norm)))
        lu_valid = s.lu_valid
        if not recompute_jac and factor < 1.2:
            factor = 1.0
        else:
            lu_valid = 0.0
        f_new = self.rhs(t_new, y_new, args)
        J, njev, current_jac = s.J, s.njev, 0.0
        if recompute_jac:
            J, njev, current_jac = self.jacobian(t_new, y_new, args), njev + 1, 1.0
        elif self.jacobian.constant:
            current_jac = s.current_jac
        d = self.direction
        status = FINISHED if d * (t_new - t_bound) >= 0 else RUNNING
        return RadauState(
            t=t_new, y=y_new, f=f_new, h_abs=h_abs * factor, h_start=s.h_start, h_old=s.h_start,
            error_old=error_norm, history=1.0, use_history=s.use_history, J=J,
            current_jac=current_jac, h_lu=s.h_lu, lu_valid=lu_valid, Z=Z, has_sol=1.0,
            t_old=s.t, y_old=s.y, status=status, in_step=0.0, rejected=0.0,
            n_accepted=s.n_accepted + 1, nfev=s.nfev + 1, njev=njev, nlu=s.nlu)

    def _rounding_level(self, f, Z, h_abs, h_lu, scale):
        """:data:`ROUNDING_MARGIN` times the rounding error of an error
        estimate, in the error norm.

        The estimate solves ``(MU_REAL / h_lu) I - J`` for ``f + Z^T E / h``,
        two nearly opposite vectors when the step's local error is small;
        their rounding, ``EPS (|f| + |Z^T| |E| / h)``, is carried through
        the solve as through its non-stiff part (a factor ``h_lu / MU_REAL``).
        Below that level the estimate's value (and with it the next step
        sizes, as in SciPy) is set by rounding, and its derivative is the
        derivative of rounding errors: large, and not even linear in the
        direction of differentiation. The first step of Robertson's kinetics
        from (1, 0, 0) has an error norm of 3e-19 whose derivative came out
        as -6e3 per unit of log k1; the predictive controller
        (:meth:`_predict_factor`, through ``error_old``) carried it into
        every later step size, and the gradient was off by 1e-2.
        """
        rounding = EPS * (magnitude(f) + np.dot(magnitude(Z).T, np.abs(E)) / h_abs) \
            * (magnitude(h_lu) / MU_REAL)
        return ROUNDING_MARGIN * norm(rounding / scale)

    def _predict_factor(self, s, h_abs, error_norm):
        """Gustafsson's predictive factor (Hairer & Wanner IV.8, (8.25))."""
        if not s.use_history or error_norm == 0:
            multiplier = 1.0
        else:
            multiplier = h_abs / s.h_old * (s.error_old / error_norm) ** 0.25
        return smaller(1.0, multiplier) * error_norm ** -0.25

    def _newton(self, s, t, y, h, Z0, args):
        """Simplified Newton iterations on the transformed collocation system:
        (converged, iterations, Z, rate)."""
        W = np.dot(TI, Z0)
        Z = Z0
        ch = h * C
        dW_norm_old = rate = None
        converged = False
        scale = self.atol + magnitude(y) * self.rtol
        alpha, beta = MU_ALPHA / s.h_lu, MU_BETA / s.h_lu
        linear = self.jacobian.linear
        for k in range(NEWTON_MAXITER):
            F = np.stack([self.rhs(t + ch[i], y + Z[i], args) for i in range(3)])
            if not np.all(np.isfinite(F)):
                break
            f_real = np.dot(F.T, TI[0]) - MU_REAL / h * W[0]
            mr, mi = MU_ALPHA / h, MU_BETA / h
            f_re = np.dot(F.T, TI[1]) - (mr * W[1] - mi * W[2])
            f_im = np.dot(F.T, TI[2]) - (mr * W[2] + mi * W[1])
            dW_real = linear.shifted(s.J, MU_REAL / s.h_lu, f_real)
            dW_re, dW_im = linear.shifted_complex(s.J, alpha, beta, f_re, f_im)
            dW = np.stack([dW_real, dW_re, dW_im])
            dW_norm = norm(dW / scale)
            if dW_norm_old is not None:
                rate = dW_norm / dW_norm_old
            if rate is not None and (rate >= 1 or
                                     rate ** (NEWTON_MAXITER - k) / (1 - rate) * dW_norm
                                     > self.newton_tol):
                break
            W = W + dW
            Z = np.dot(T, W)
            if dW_norm == 0 or (rate is not None
                                and rate / (1 - rate) * dW_norm < self.newton_tol):
                converged = True
                break
            dW_norm_old = dW_norm
        return converged, k + 1, Z, rate

    def _predict(self, s, t, y, h):
        """Newton start: the last step's interpolant at the new nodes, minus y."""
        x = (t + h * C - s.t_old) / (t - s.t_old)
        p = np.cumprod(np.tile(x, (3, 1)), axis=0)
        return (np.dot(np.dot(s.Z.T, P), p) + s.y_old[:, None]).T - y

    # ---- dense output and counts --------------------------------------------------
    def dense(self, s, t, args):
        x = (t - s.t_old) / (s.t - s.t_old)
        return np.dot(np.dot(s.Z.T, P), powers(x, 3)) + along_times(s.y_old, t)

    def dense_rows(self, s, t):
        """The interpolants of m steps (``s``: their states, FlatRows) at one
        time each (``t``, shape ``(m,)``): shape ``(n, m)``."""
        x = (t - s.t_old) / (s.t - s.t_old)
        return stage_sums(s.Z, np.dot(P, powers(x, 3))) + s.y_old.T

    def counts(self, s, dense_steps):
        return s.nfev, s.njev, s.nlu
