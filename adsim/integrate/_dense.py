"""``sol`` of ``solve_ivp(..., dense_output=True)`` inside a recording: an
``OdeSolution`` whose interpolants are recorded ops.

SciPy's ``OdeSolution`` evaluates, at a time ``t``, the interpolant of the
step that contains it: a polynomial in ``t`` whose coefficients are the
step's stored stages (``RkDenseOutput``, ``Dop853DenseOutput``,
``RadauDenseOutput``, ``BdfDenseOutput``). adsim keeps the solver state of
every accepted step (views of the rows its loops carry, or of a loop per
step: ``Run.accepted_states``) and evaluates the method's own interpolant (the one that gives the ``t_eval`` outputs) on it,
so ``sol(t)`` is recorded like any other arithmetic: its derivatives with
respect to the parameters, ``y0`` and the query time are those of the numbers
computed (with the step sizes as ``solve_ivp`` treats them). Which step
contains ``t`` is a decision, recorded as comparisons of ``t`` with the
step's ends: a replay where another step contains it records again. Times
in several steps go to the method's ``dense_rows`` together (the steps'
states stacked as rows, one row per time), so a solution evaluated at the
times of hundreds of steps (a donor's outputs at BDF's steps) records a few
ops, not a set per step.

:class:`JoinedSolution` gives the values of one solution with the
derivatives of another (``method="BDF"`` by default, ``"LSODA"``): see
``_donor.py``.
"""
import weakref

import numpy as np

from .._active import Active
from .._np.core import active_leaves
from ..errors import UnsupportedOperation
from ._carried import StateRows
from ._flat import FlatView
from ._rhs import real_array

__all__ = ["SolutionCalls", "DenseSolution", "ConstantSolution", "JoinedSolution",
           "FINISHED_RECORDING", "plain_solution", "recorded_values"]

FINISHED_RECORDING = (
    "adsim.integrate.solve_ivp: this `sol` (dense_output=True) holds active values of a "
    "recording that has finished, so it cannot be evaluated any more (on a replay of the "
    "tape it would give the values of the recording). Call sol(t) inside the recorded "
    "function, and return what you need from it")


class SolutionCalls:
    """What every solution shares: SciPy's ``OdeSolution`` call on a scalar
    time (shape ``(n,)``) or a 1-d array of times (shape ``(n, len(t))``)."""

    # where set, what the values pass through (an integration that crossed a
    # kink of fun: first derivatives only, adsim/integrate/_kinks.py)
    marked = None

    def __call__(self, t):
        y = self._values(t)
        return y if self.marked is None or not isinstance(y, Active) else self.marked(y)

    def _values(self, t):
        if not isinstance(t, Active):
            if active_leaves(t):        # a list holding active times
                return self._values(np.stack([real_array(v, "t").reshape(()) for v in t]))
            t = np.asarray(t, dtype=float)
        if t.ndim == 0:
            return self._at(t if isinstance(t, Active) else t[()])
        if t.ndim != 1:
            raise ValueError("`t` must be a float or a 1-D array.")
        return self._at_many(t) if t.shape[0] else np.empty((self.n, 0))

    def _at_many(self, t):
        """The solution at the times of the 1-d array ``t``, shape ``(n, m)``."""
        return np.stack([self._at(t[i]) for i in range(t.shape[0])], axis=1)


class DenseSolution(SolutionCalls):
    """The interpolants of adsim's accepted steps: ``ts`` (the step ends,
    the start first), ``states`` (the solver state after each step),
    ``method`` (whose ``dense(state, t, args)`` is the step's interpolant).
    ``ts``, ``t_min``, ``t_max`` (recorded values), ``n_segments`` as in
    SciPy."""

    event_end = False       # a terminal event ended the integration (_check_range)

    def __init__(self, method, ts, states, args, n):
        self.method, self.states, self.args, self.n = method, states, args, n
        stacked = isinstance(ts, (np.ndarray, Active))
        self._ts = ts if stacked else list(ts)      # (indexed by step)
        self._stacked = ts if stacked else None
        self._rows = None               # see _state_rows
        self.n_segments = len(states)
        self.ascending = method.direction > 0
        knots = recorded_values(ts).reshape(-1) if stacked else np.array([_plain(v) for v in ts])
        self._knots = knots if self.ascending else knots[::-1]
        ends = tuple(v if isinstance(v, Active) else np.float64(v)
                     for v in (self._ts[0], self._ts[-1]))
        self.t_min, self.t_max = ends if self.ascending else ends[::-1]

    @property
    def ts(self):
        """The step ends (recorded values), stacked when first read: a
        recording that never reads them does not stack hundreds of times."""
        if not _live(self._stacked if self._stacked is not None else self._ts):
            raise UnsupportedOperation(FINISHED_RECORDING)
        if self._stacked is None:
            self._stacked = real_array(self._ts, "t")
        return self._stacked

    def _check_live(self, t):
        """Refuse a solution whose recording has finished."""
        states = self.states
        first = states.blocks[0] if isinstance(states, StateRows) else \
            getattr(states[0], "_z", states[0])         # a state, or a view of a vector
        if not _live(first, t):
            raise UnsupportedOperation(FINISHED_RECORDING)
        if self.event_end:
            self._check_range(t)

    def _check_range(self, t):
        """Refuse a time beyond an end of the interval that moves with the
        parameters (a terminal event's time): SciPy extrapolates that step's
        polynomial, which the event cut short, and its derivative there is
        not the derivative of SciPy's values (a decay stopped at half its
        value, RK45: -0.258 against -0.180 by differences). Past a fixed end
        the extrapolation is the held steps' polynomial, differentiated as
        inside. Recorded as comparisons, so a replay that moves a time past
        the end raises BranchChanged."""
        if self.ascending:
            inside = bool(np.all(t <= self.t_max))
        else:
            inside = bool(np.all(self.t_min <= t))
        if not inside:
            values = np.atleast_1d(recorded_values(t) if isinstance(t, Active) else
                                   np.asarray(t, dtype=float))
            lo, hi = _plain(self.t_min), _plain(self.t_max)
            out = values[(values < lo) | (values > hi)]
            raise UnsupportedOperation(
                f"adsim: sol(t) at t = {out[0]:g}, outside the solution's interval [{lo:g}, "
                f"{hi:g}], whose end moves with the parameters (a terminal event): SciPy "
                f"extrapolates the step the event cut short, and the derivative of that "
                f"extrapolation is not the derivative of SciPy's values. Evaluate inside the "
                f"interval, or make the event non-terminal")

    def _at(self, t):
        self._check_live(t)
        return self.method.dense(self.states[self._segment(t)], t, self.args)

    def _at_many(self, t):
        """SciPy's evaluation at several times (``OdeSolution.__call__``):
        the times in ascending order, each run of times in one step given to
        that step's interpolant at once (one set of recorded operations per
        step, not per time), the columns put back in the order of ``t``."""
        self._check_live(t)
        values = recorded_values(t)
        order = np.argsort(values)
        in_order = bool(np.all(order == np.arange(order.shape[0])))
        t_sorted = t if in_order else t[order]
        segments = self._segments(values[order])
        ends = list(np.flatnonzero(np.diff(segments)) + 1) + [segments.shape[0]]
        self._guard(segments, t_sorted)
        rows = self._state_rows() if len(ends) > 1 else None
        if rows is not None:
            y = self.method.dense_rows(rows[0].rows(rows[1][segments]), t_sorted)
        else:
            columns, start = [], 0
            for end in ends:
                columns.append(self.method.dense(self.states[segments[start]],
                                                 t_sorted[start:end], self.args))
                start = end
            y = columns[0] if len(columns) == 1 else np.concatenate(columns, axis=1)
        if in_order:
            return y
        back = np.empty_like(order)
        back[order] = np.arange(order.shape[0])
        return y[:, back]

    def _state_rows(self):
        """(layout, the states stacked as rows) when the times of several
        steps are evaluated by one set of ops (the method's ``dense_rows``:
        the states are views of flat vectors, ``Run.accepted_states``), made
        once; else None (one interpolant per step)."""
        if self._rows is None:
            self._rows = False
            states = self.states
            if getattr(self.method, "dense_rows", None) is None:
                pass
            elif isinstance(states, StateRows):
                self._rows = (states.layout, states.rows())
            elif all(isinstance(s, FlatView) and s.pristine and
                     s._layout is states[0]._layout for s in states):
                self._rows = (states[0]._layout, np.stack([s._z for s in states]))
        return self._rows or None

    def _guard(self, segments, t):
        """Record that each of the times ``t`` (a 1-d array) lies in its
        step of ``segments`` (plain), as SciPy's search decides (the first
        and the last step also take the times beyond the ends): two
        comparisons of arrays."""
        ts = self.ts
        if not active_leaves([ts, t]):
            return
        last = self.n_segments - 1
        after = np.flatnonzero(segments > 0)           # the first step takes earlier times
        before = np.flatnonzero(segments < last)       # the last step takes later times
        inside = True
        if after.size:
            starts, later = ts[segments[after]], t[after]
            inside = bool(np.all(starts < later if self.ascending else later < starts))
        if before.size:
            ends, earlier = ts[segments[before] + 1], t[before]
            inside = bool(np.all(earlier <= ends if self.ascending else ends <= earlier)) \
                and inside
        assert inside, "the step chosen for an interpolated time does not contain it"

    def _segment(self, t):
        """SciPy's choice of step (``OdeSolution._call_single``), its
        comparisons recorded."""
        segment = int(self._segments(np.array([_plain(t)]))[0])
        self._guard(np.array([segment]), np.reshape(t, (1,)))
        return segment

    def _segments(self, values):
        """The step SciPy's search chooses for each of the plain times
        ``values``: a time at a step's end belongs to that step."""
        side = "left" if self.ascending else "right"
        k = np.clip(np.searchsorted(self._knots, values, side=side) - 1, 0, self.n_segments - 1)
        return k if self.ascending else self.n_segments - 1 - k


class _SciPyInterpolants:
    """SciPy's interpolants of a plain solution as the ``method`` of a
    :class:`DenseSolution` whose states are those interpolants."""

    def __init__(self, ascending):
        self.direction = 1.0 if ascending else -1.0

    @staticmethod
    def dense(interpolant, t, args):
        return interpolant._call_impl(t)


def plain_solution(solution):
    """A SciPy ``OdeSolution`` (plain numbers) as a :class:`DenseSolution`,
    to be evaluated at active times; made once per solution (it holds only
    plain values), not at every call."""
    found = _PLAIN_SOLUTIONS.get(solution)
    if found is None:
        first = solution.interpolants[0]
        n = np.shape(first(first.t_old))[0]
        found = DenseSolution(_SciPyInterpolants(solution.ascending), list(solution.ts),
                              list(solution.interpolants), (), n)
        _PLAIN_SOLUTIONS[solution] = found
    return found


_PLAIN_SOLUTIONS = weakref.WeakKeyDictionary()


class ConstantSolution(SolutionCalls):
    """An integration over an empty interval: ``y0`` at every time."""

    def __init__(self, t0, y0):
        self.y0, self.n = y0, y0.shape[0]
        self.ts = real_array([t0, t0], "t")
        self.t_min = self.t_max = t0
        self.n_segments = 1

    def _at(self, t):
        return self.y0 + 0.0 * t if isinstance(t, Active) else self.y0


class JoinedSolution(SolutionCalls):
    """The values of ``values`` (a solution) with the derivatives of
    ``donor``; ``join(value, donor)`` joins one evaluation."""

    def __init__(self, values, donor, join):
        self.values, self.donor, self.join = values, donor, join
        self.n = values.n
        for name in ("ts", "t_min", "t_max", "n_segments"):
            setattr(self, name, getattr(values, name))

    def _at(self, t):
        return self.join(self.values._at(t), self.donor._at(t))

    def _at_many(self, t):
        return self.join(self.values._at_many(t), self.donor._at_many(t))


def recorded_values(v):
    """The values of ``v`` (active: as recorded), a plain float array."""
    if isinstance(v, Active):
        return np.asarray(v.tape.slot_value(v.slot)).reshape(v.shape)
    return np.asarray(v, dtype=float)


def _plain(v):
    return float(recorded_values(v))


def _live(*values):
    """Whether the active values among ``values`` (if any) belong to a
    recording that is still running."""
    return all(a.tape.recording for a in active_leaves(list(values)))
