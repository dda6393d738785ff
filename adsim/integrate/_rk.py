"""Explicit Runge-Kutta pairs with error control (RK23, RK45, DOP853).

The solver's whole state -- time, solution, derivative, step size, the
stages of the last accepted step (for dense output), status and counts --
is one tuple of arrays, and :meth:`ExplicitRungeKutta.attempt` makes one
attempt from it: an accepted step, or a rejection that shrinks the step
size. Accept/reject, the step-size clamps and the final step onto the end
of the interval are plain ``if`` statements; inside a recording they are
comparisons recorded as branches, so a replay that decides otherwise is
recorded again (see docs/integrate.md).

Continuous kinks (``abs``, ``min``, ``max``) are recorded without branches
(:mod:`adsim.integrate._piecewise`), so the step's variants differ only in
these decisions. Step-size control, the error norms and the interpolants are those of
Hairer, Norsett & Wanner (1993), sec. II.4-II.6, as SciPy's ``solve_ivp``
implements them, so that both take the same steps.
"""
from collections import namedtuple

import numpy as np

from .._active import Active
from ._common import (MAX_FACTOR, MIN_FACTOR, SAFETY, Stepper, along_times, min_step, powers,
                      spacing_bound, stage_sums, state_magnitude, state_norm)
from ._piecewise import at_least, larger, magnitude, smaller
from ._rhs import FAILED, FINISHED, RUNNING, set_row

__all__ = ["ExplicitRungeKutta", "RKState"]

class RKState(namedtuple("RKState", ["t", "y", "h_abs", "t_old", "y_old", "K", "status",
                                      "rejected", "counts"])):
    """State of an explicit Runge-Kutta solver. ``h_abs`` is the step size
    the next attempt starts from; ``t_old``, ``y_old`` and ``K`` (the stages,
    with the derivative at the new point last) belong to the last accepted
    step; ``rejected`` is 1 after a rejected attempt of the current step;
    ``status`` is RUNNING, FINISHED or FAILED; ``counts`` holds the accepted
    steps and the evaluations of fun.

    What follows from these is not stored (a step updates fewer numbers):
    the derivative ``f`` at ``t`` is the last stage (at the start ``K`` holds
    ``f(t0)`` there), the last step ``h_previous`` is ``t - t_old`` (the
    same number), and the counts are ``n_accepted`` and ``nfev``."""

    __slots__ = ()

    @property
    def f(self):
        return self.K[-1]

    @property
    def h_previous(self):
        return self.t - self.t_old

    @property
    def n_accepted(self):
        return self.counts[0]

    @property
    def nfev(self):
        return self.counts[1]


class ExplicitRungeKutta(Stepper):
    """One explicit pair (a :class:`~adsim.integrate._tableaux.ExplicitTableau`)
    for one problem: right-hand side, direction, tolerances, largest step."""

    State = RKState
    uses_jacobian = False

    def __init__(self, tableau, rhs, direction, rtol, atol, max_step):
        super().__init__(rhs, direction, rtol, atol, max_step)
        self.tableau = tableau
        self.dense_evaluations = tableau.dense_stages

    # ---- start -------------------------------------------------------------
    def start(self, t0, y0, t_bound, args, first_step):
        """The state at ``t0`` (two evaluations of the right-hand side when
        the first step is chosen, one otherwise)."""
        f0, h_abs, nfev = self.first_evaluation(t0, y0, t_bound, args, first_step,
                                                self.tableau.error_order)
        K = set_row(np.zeros((self.tableau.n_stages + 1, y0.shape[0])), -1, f0)
        return RKState(t=t0, y=y0, h_abs=h_abs, t_old=t0, y_old=y0, K=K, status=RUNNING,
                       rejected=0.0, counts=np.array([0.0, nfev]))

    # ---- one attempt ---------------------------------------------------------
    def attempt(self, s, t_bound, args):
        """One attempted step from state ``s``: ``(state, accepted)``.

        Called only while the integration runs, so ``t`` lies before
        ``t_bound``. Comparisons of signed differences with zero are
        written as comparisons of their terms (the same outcome in floating
        point), so that a recording holds one op for each."""
        d = self.direction
        t, y = s.t, s.y
        rejected = bool(s.rejected)
        h_abs = s.h_abs
        if not rejected and self.max_step < np.inf:     # a new step starts from a clamped size
            h_abs = smaller(h_abs, self.max_step)
        if h_abs < spacing_bound(t, t_bound, d):   # rare: near the smallest step, decided exactly
            smallest = min_step(t, d)
            if not rejected:
                h_abs = smaller(larger(s.h_abs, smallest), self.max_step)
            if h_abs < smallest:
                return s._replace(status=FAILED), False
        t_new = t + h_abs if d > 0 else t - h_abs
        if t_new > t_bound if d > 0 else t_new < t_bound:
            t_new = t_bound
        h = t_new - t
        h_abs = h if d > 0 else magnitude(h)     # h >= 0 forwards (t_new >= t)
        y_new, K = self._stages(t, y, s, h, args)
        scale = self.atol + larger(state_magnitude(y, self.pairs),
                                   state_magnitude(y_new, self.pairs)) * self.rtol
        error_norm = self._error_norm(K, h, scale)
        exponent = self.tableau.error_exponent
        if error_norm < 1:
            if error_norm == 0:
                factor = MAX_FACTOR
            else:
                factor = smaller(MAX_FACTOR, SAFETY * error_norm ** exponent)
            if rejected:               # no growth right after a rejection
                factor = smaller(1, factor)
            s = s._replace(t=t_new, y=y_new, h_abs=h_abs * self.controlled(factor), t_old=t, y_old=y, K=K,
                           counts=s.counts + (1.0, self.tableau.n_stages))
            # status (RUNNING) and rejected (0) stay as they are unless they change
            if rejected:
                s = s._replace(rejected=0.0)
            if t_new >= t_bound if d > 0 else t_new <= t_bound:
                s = s._replace(status=FINISHED)
            return s, True
        factor = at_least(MIN_FACTOR, SAFETY * error_norm ** exponent)
        return s._replace(h_abs=h_abs * self.controlled(factor), rejected=1.0,
                          counts=s.counts + (0.0, self.tableau.n_stages)), False

    def _stages(self, t, y, s, h, args):
        """(y_new, K): the propagated solution and the stage matrix, whose
        last row is the derivative at the new point (filled row by row, as SciPy
        does, so that plain runs combine the stages with the same BLAS calls).

        Recorded, the new stage matrix starts as one gather from the old
        one: its last row (``f``) first, then its other rows, each written
        over before a nonzero weight meets it (they are finite: the stages
        of an accepted step), where weights of zero read them meanwhile."""
        tab = self.tableau
        if isinstance(s.K, Active):
            K = s.K[[tab.n_stages] + list(range(1, tab.n_stages + 1))]
        else:
            K = set_row(np.zeros((tab.n_stages + 1, y.shape[0])), 0, s.f)
        for i in range(1, tab.n_stages):
            dy = combine(K, tab.A[i], i) * h
            K = self.rhs.into(K, i, self.rhs.time(t, tab.C[i], h), y + dy, args)
        y_new = y + h * combine(K, tab.B, tab.n_stages)
        K = self.rhs.into(K, -1, self.rhs.time(t, 1, h), y_new, args)
        return y_new, K

    def _error_norm(self, K, h, scale):
        tab = self.tableau
        if tab.E is not None:
            return state_norm(combine(K, tab.E, K.shape[0]) * h / scale, self.pairs)
        # DOP853: the 5th-order estimate, corrected by the 3rd-order one
        err5 = combine(K, tab.E5, K.shape[0]) / scale
        err3 = combine(K, tab.E3, K.shape[0]) / scale
        err5_norm_2 = np.linalg.norm(err5) ** 2
        err3_norm_2 = np.linalg.norm(err3) ** 2
        if err5_norm_2 == 0 and err3_norm_2 == 0:
            return 0.0
        denom = err5_norm_2 + 0.01 * err3_norm_2
        components = scale.shape[0] if self.pairs is None else self.pairs
        return magnitude(h) * err5_norm_2 / np.sqrt(denom * components)

    # ---- dense output ----------------------------------------------------------
    def dense(self, s, t, args):
        """The interpolant of the last accepted step at ``t`` (a time, or a
        1-d array of times: shape ``(n, m)``)."""
        tab = self.tableau
        h = s.t - s.t_old
        x = (t - s.t_old) / h
        if tab.P is not None:
            Q = np.dot(s.K.T, tab.P)
            return h * np.dot(Q, powers(x, Q.shape[1])) + along_times(s.y_old, t)
        F = self._dop853_coefficients(s, args)
        y = 0.0
        for i, coefficient in enumerate(reversed(F)):
            y = y + along_times(coefficient, t)
            y = y * x if i % 2 == 0 else y * (1 - x)
        return y + along_times(s.y_old, t)

    @property
    def dense_rows(self):
        """:meth:`Radau.dense_rows` for the methods whose interpolant is a
        polynomial of the stages (not DOP853's, which evaluates fun): None
        for DOP853."""
        return self._dense_rows if self.tableau.P is not None else None

    def _dense_rows(self, s, t):
        h = s.t - s.t_old
        x = (t - s.t_old) / h
        P = self.tableau.P
        return h * stage_sums(s.K, np.dot(P, powers(x, P.shape[1]))) + s.y_old.T

    def _dop853_coefficients(self, s, args):
        """DOP853's interpolant: three more stages, then seven coefficient rows."""
        tab = self.tableau
        h = s.h_previous
        rows = s.K.shape[0]
        K = set_row(np.zeros((rows + len(tab.C_extra), s.y.shape[0])), slice(0, rows), s.K)
        for i, (a, c) in enumerate(zip(tab.A_extra, tab.C_extra), start=rows):
            dy = combine(K, a, i) * h
            K = self.rhs.into(K, i, self.rhs.time(s.t_old, c, h), s.y_old + dy, args)
        f_old = s.K[0]
        delta_y = s.y - s.y_old
        rows = h * np.dot(tab.D, K)
        return [delta_y, h * f_old - delta_y, 2 * delta_y - h * (s.f + f_old)] + \
            [rows[i] for i in range(rows.shape[0])]

    # ---- counts ------------------------------------------------------------------
    def count_dense(self, s):
        """State ``s`` with the evaluations of one step's interpolant counted."""
        return s._replace(counts=s.counts + (0.0, self.dense_evaluations))

    def counts(self, s, dense_steps):
        """(nfev, njev, nlu) of a run ending in state ``s``; ``dense_steps()``
        is the number of distinct steps whose interpolant was used outside
        the loops (each costs DOP853 three more evaluations; counted only
        then, as it guards comparisons of step counts inside a recording);
        interpolants used inside a loop count in ``s.nfev``."""
        extra = self.tableau.dense_stages
        return (s.nfev + extra * dense_steps() if extra else s.nfev), 0, 0


def combine(K, weights, count):
    """The combination ``weights[:count] @ K[:count]`` of the first
    ``count`` stages. On plain arrays it is SciPy's BLAS call, so that
    plain runs are SciPy's bit for bit; recorded, it is one matrix product
    over the whole stage matrix, the weights of the stages beyond ``count``
    zero (those rows are still zero), with no slice or transpose recorded."""
    if not isinstance(K, Active):
        return np.dot(K[:count].T, weights[:count])
    padded = np.zeros(K.shape[0])
    padded[:count] = weights[:count]
    return np.dot(padded, K)

