"""Variable-order BDF (orders 1 to 5, NDF coefficients) with error control,
as SciPy's ``BDF``.

The history is kept as modified divided differences ``D`` (rows 0..order+2),
rescaled when the step size changes. One :meth:`BDF.attempt` is one
simplified Newton solve of the corrector followed by its decision: retry
with a fresh Jacobian (same step), halve the step after a Newton failure,
reject after the error estimate, or accept -- and, after ``order + 1``
steps of equal size, choose the order and the step size from the error
estimates of orders ``order - 1``, ``order`` and ``order + 1``.

References
----------
L. F. Shampine and M. W. Reichelt, "The MATLAB ODE suite", SIAM J. Sci.
Comput. 18(1), 1-22, 1997 (the NDF coefficients and the difference form).
E. Hairer and G. Wanner, *Solving Ordinary Differential Equations II*, 2nd
ed., Springer, 1996, sec. III.5 and IV.8.
"""
from collections import namedtuple

import numpy as np

from ._common import MAX_FACTOR, MIN_FACTOR, ImplicitStepper, along_times, min_step, norm
from ._piecewise import at_least, larger, magnitude, smaller
from ._rhs import FAILED, FINISHED, RUNNING, real_array

__all__ = ["BDF", "BDFState"]

MAX_ORDER = 5
NEWTON_MAXITER = 4
KAPPA = np.array([0, -0.1850, -1 / 9, -0.0823, -0.0415, 0])
GAMMA = np.hstack((0, np.cumsum(1 / np.arange(1, MAX_ORDER + 1))))
ALPHA = (1 - KAPPA) * GAMMA
ERROR_CONST = KAPPA * GAMMA + 1 / np.arange(1, MAX_ORDER + 2)

BDFState = namedtuple("BDFState", [
    "t", "y", "D", "order", "n_equal_steps", "h_abs", "J", "current_jac", "c_lu", "lu_valid",
    "t_try", "retry", "in_step", "t_old", "y_old", "status", "n_accepted", "nfev", "njev",
    "nlu"])
BDFState.__doc__ = """State of the BDF solver: the differences ``D`` of the
current ``order``, the number of steps taken with the current step size,
the step size ``h_abs`` of the next attempt, the Jacobian ``J``
(``current_jac``: evaluated in the current step), the coefficient ``c_lu``
the Newton matrix ``I - c J`` was formed with (``lu_valid``), the time of a
step to repeat with a fresh Jacobian (``t_try``, ``retry``), ``in_step``
while a step is being attempted, ``t_old`` and ``y_old`` the start of the
last accepted step, and the counts."""


def _compute_R(order, factor):
    """Matrix rescaling the differences for a step size ``factor`` times the old."""
    i = np.arange(1, order + 1)[:, None]
    j = np.arange(1, order + 1)
    block = (i - 1 - factor * j) / i
    left = np.zeros((order, 1))
    M = np.concatenate([np.ones((1, order + 1)), np.concatenate([left, block], axis=1)])
    return np.cumprod(M, axis=0)


def change_D(D, order, factor):
    """``D`` with its rows ``0..order`` rescaled for a step size times ``factor``."""
    RU = np.dot(_compute_R(order, factor), _compute_R(order, 1))
    head = np.dot(RU.T, D[:order + 1])
    return np.concatenate([head, D[order + 1:]])


class BDF(ImplicitStepper):
    """Variable-order BDF for one problem (the interface of
    :class:`ExplicitRungeKutta`: ``start``, ``attempt``, ``dense``, ``counts``)."""

    State = BDFState

    def start(self, t0, y0, t_bound, args, first_step):
        f0, h_abs, nfev = self.first_evaluation(t0, y0, t_bound, args, first_step, 1)
        J = self.jacobian(t0, y0, args)
        n = y0.shape[0]
        D = np.concatenate([y0[None, :], (f0 * h_abs * self.direction)[None, :],
                            np.zeros((MAX_ORDER + 1, n))])
        return BDFState(t=t0, y=y0, D=D, order=1.0, n_equal_steps=0.0, h_abs=h_abs, J=J,
                        current_jac=0.0, c_lu=1.0, lu_valid=0.0, t_try=t0, retry=0.0,
                        in_step=0.0, t_old=t0, y_old=y0, status=RUNNING, n_accepted=0.0,
                        nfev=float(nfev), njev=0.0 if self.jacobian.constant else 1.0, nlu=0.0)

    # ---- one attempt -----------------------------------------------------------
    def attempt(self, s, t_bound, args):
        d = self.direction
        t = s.t
        order = int(s.order)
        if s.retry:                      # the same step again, with the fresh Jacobian
            t_new = s.t_try
            s = s._replace(retry=0.0)
        else:
            s = self._new_step(s, order) if not s.in_step else s
            smallest = min_step(t, d)
            if s.h_abs < smallest:
                return s._replace(status=FAILED), False
            t_new = t + s.h_abs * d
            if d * (t_new - t_bound) > 0:
                t_new = t_bound
                s = s._replace(D=change_D(s.D, order, magnitude(t_new - t) / s.h_abs),
                               n_equal_steps=0.0, lu_valid=0.0)
        h = t_new - t
        h_abs = magnitude(h)
        y_predict = np.sum(s.D[:order + 1], axis=0)
        scale = self.atol + self.rtol * magnitude(y_predict)
        psi = np.dot(s.D[1:order + 1].T, GAMMA[1:order + 1]) / ALPHA[order]
        c = h / ALPHA[order]
        # the Newton matrix is formed for this step unless a valid one is kept:
        # a select by the 0/1 flag, without a branch (one tape for both cases)
        keep = s.lu_valid
        s = s._replace(c_lu=keep * s.c_lu + (1 - keep) * c, lu_valid=1.0, nlu=s.nlu + 1 - keep)
        converged, n_iter, y_new, dy = self._newton(s, t_new, y_predict, c, psi, scale, args)
        s = s._replace(nfev=s.nfev + n_iter, h_abs=h_abs)
        if not converged:
            if not s.current_jac:
                J = self.jacobian(t_new, y_predict, args)
                return s._replace(J=J, current_jac=1.0, lu_valid=0.0, njev=s.njev + 1,
                                  t_try=t_new, retry=1.0), False
            return s._replace(h_abs=0.5 * h_abs, D=change_D(s.D, order, 0.5),
                              n_equal_steps=0.0, lu_valid=0.0), False
        safety = 0.9 * (2 * NEWTON_MAXITER + 1) / (2 * NEWTON_MAXITER + n_iter)
        scale = self.atol + self.rtol * magnitude(y_new)
        error_norm = norm(ERROR_CONST[order] * dy / scale)
        if error_norm > 1:
            factor = self.controlled(at_least(MIN_FACTOR, safety * error_norm ** (-1 / (order + 1))))
            return s._replace(h_abs=h_abs * factor, D=change_D(s.D, order, factor),
                              n_equal_steps=0.0), False
        return self._accept(s, t_new, y_new, dy, order, error_norm, safety, scale, t_bound), True

    def _new_step(self, s, order):
        """Clamp the step size a new step starts from (rescaling the differences)."""
        smallest = min_step(s.t, self.direction)
        s = s._replace(in_step=1.0, current_jac=1.0 if self.jacobian.constant else 0.0)
        if s.h_abs > self.max_step:
            return s._replace(h_abs=self.max_step, n_equal_steps=0.0,
                              D=change_D(s.D, order, self.max_step / s.h_abs))
        if s.h_abs < smallest:
            return s._replace(h_abs=smallest, n_equal_steps=0.0,
                              D=change_D(s.D, order, smallest / s.h_abs))
        return s

    def _newton(self, s, t_new, y_predict, c, psi, scale, args):
        """Simplified Newton iterations of the corrector: (converged,
        iterations, y, correction)."""
        y, correction = y_predict, 0.0
        dy_norm_old = None
        converged = False
        for k in range(NEWTON_MAXITER):
            f = self.rhs(t_new, y, args)
            if not np.all(np.isfinite(f)):
                break
            dy = self.jacobian.linear.identity_minus(s.J, s.c_lu, c * f - psi - correction)
            dy_norm = norm(dy / scale)
            rate = None if dy_norm_old is None else dy_norm / dy_norm_old
            if rate is not None and (rate >= 1 or rate ** (NEWTON_MAXITER - k) / (1 - rate)
                                     * dy_norm > self.newton_tol):
                break
            y = y + dy
            correction = correction + dy
            if dy_norm == 0 or (rate is not None
                                and rate / (1 - rate) * dy_norm < self.newton_tol):
                converged = True
                break
            dy_norm_old = dy_norm
        return converged, k + 1, y, correction

    def _accept(self, s, t_new, y_new, dy, order, error_norm, safety, scale, t_bound):
        rows = [s.D[i] for i in range(MAX_ORDER + 3)]
        rows[order + 2] = dy - rows[order + 1]
        rows[order + 1] = dy
        for i in reversed(range(order + 1)):
            rows[i] = rows[i] + rows[i + 1]
        D = np.stack(rows)
        status = FINISHED if self.direction * (t_new - t_bound) >= 0 else RUNNING
        s = s._replace(t=t_new, y=y_new, D=D, n_equal_steps=s.n_equal_steps + 1, t_old=s.t,
                       y_old=s.y, status=status, in_step=0.0, n_accepted=s.n_accepted + 1)
        if s.n_equal_steps < order + 1:
            return s
        # choose the order and the step size from the neighbouring orders' estimates
        error_m_norm = norm(ERROR_CONST[order - 1] * D[order] / scale) if order > 1 else np.inf
        error_p_norm = (norm(ERROR_CONST[order + 1] * D[order + 2] / scale)
                        if order < MAX_ORDER else np.inf)
        error_norms = real_array([error_m_norm, error_norm, error_p_norm], "error norms")
        with np.errstate(divide="ignore"):
            factors = error_norms ** (-1 / np.arange(order, order + 3))
        order += int(np.argmax(factors)) - 1
        factor = self.controlled(smaller(MAX_FACTOR, safety * np.max(factors)))
        return s._replace(order=float(order), h_abs=s.h_abs * factor,
                          D=change_D(D, order, factor), n_equal_steps=0.0, lu_valid=0.0)

    # ---- dense output and counts -------------------------------------------------
    def dense(self, s, t, args):
        order = int(s.order)
        h = s.h_abs * self.direction
        t_shift = s.t - h * np.arange(order)
        denom = h * (1 + np.arange(order))
        if np.ndim(t) == 0:
            p = np.cumprod((t - t_shift) / denom)
        else:
            p = np.cumprod((t - t_shift[:, None]) / denom[:, None], axis=0)
        return np.dot(s.D[1:order + 1].T, p) + along_times(s.D[0], t)

    def dense_rows(self, s, t):
        """:meth:`Radau.dense_rows`: each step's differences up to its own
        order, the rows above it selected away (every order up to
        MAX_ORDER is computed, so a replay where the orders change needs no
        other ops)."""
        h = s.h_abs * self.direction
        p, y = 1.0, s.D[:, 0].T
        for i in range(MAX_ORDER):
            p = p * ((t - (s.t - h * i)) / (h * (1 + i)))
            y = y + np.where(i + 1 <= s.order, s.D[:, i + 1].T * p, 0.0)
        return y

    def counts(self, s, dense_steps):
        return s.nfev, s.njev, s.nlu
