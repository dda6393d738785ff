"""``solve_ivp(method="LSODA")`` with active values: SciPy's numbers.

As for ``odeint`` (``_odeint.py``), the values are SciPy's own LSODA run on
the plain values, again at every replay, recorded as ops whose inputs are
stopped (they carry no derivative); the derivatives are those of adsim's
solve of the same problem (``_bdf_derivatives.donor_method``: Radau where
LSODA switched to its stiff method in the recorded call, DOP853 where it
did not), joined to them by ``with_donor_derivatives``.

Ops, all on one cached SciPy solve of the inputs ``(t0, tf, y0, t_eval,
params)``: the *layout* (status, number of outputs, of the dense
output's knots, of events per function, the counts), read as guarded
integers so that a replay whose layout differs records again; the *outputs*
(``t``, ``y``, event times and states, knots, in the recorded layout); and
for ``sol(t)`` one op per evaluation (the query time an input too).
"""
import threading

import numpy as np
from scipy.integrate import LSODA, solve_ivp as scipy_solve_ivp

from .._active import Active, wrap
from .._callback_rules import CallbackRules
from .._np.core import active_leaves, constant, tape_of
from .._np.elementwise import stop_gradient
from .._opcodes import Opcode as Op
from .._record.creation import suspended
from ..errors import UnsupportedOperation
from ._dense import FINISHED_RECORDING, SolutionCalls
from ._result import Count, OdeResult

__all__ = ["lsoda_values", "LSODA_ONLY"]

# options of SciPy's LSODA that the donor methods do not take
LSODA_ONLY = ("min_step", "lband", "uband")


class _WatchedLSODA(LSODA):
    """SciPy's LSODA, its steps unchanged, noting whether any step used the
    stiff method (ODEPACK's MUSED, ``iwork[18]``, is 2 after a BDF step)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stiff = False

    def _step_impl(self):
        success, message = super()._step_impl()
        if success and self._lsoda_solver._integrator.iwork[18] == 2:
            self.stiff = True
        return success, message


class _Call:
    """The user's call on plain values: SciPy's ``solve_ivp`` with LSODA,
    the active positions of ``args`` filled with the parameters' values."""

    def __init__(self, fun, events, vectorized, args, positions, shapes, options, has_t_eval,
                 dense):
        self.fun, self.events, self.vectorized = fun, events, vectorized
        self.args, self.positions, self.shapes = args, positions, shapes
        self.options, self.has_t_eval, self.dense = options, has_t_eval, dense
        self._lock = threading.Lock()       # fun's lifted closure cells are set per call
        self._solved = (None, None)

    def solve(self, flat):
        """SciPy's result at the flat inputs ``(t0, tf, y0, t_eval or
        nothing, params...)``, the last one kept."""
        key = b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in flat)
        with self._lock:
            if self._solved[0] != key:
                self._solved = (key, self._run(flat))
            return self._solved[1]

    def _run(self, flat):
        t0, tf = float(np.ravel(flat[0])[0]), float(np.ravel(flat[1])[0])
        y0 = np.asarray(flat[2], dtype=float).reshape(-1)
        rest = list(flat[3:])
        t_eval = None
        if self.has_t_eval:
            t_eval = np.asarray(rest.pop(0), dtype=float)
        args = list(self.args)
        for i, shape, p in zip(self.positions, self.shapes, rest):
            p = np.asarray(p, dtype=float).reshape(shape)
            args[i] = p[()] if p.ndim == 0 else p    # plain 0-d values as NumPy scalars
        solvers = []

        class Watched(_WatchedLSODA):       # keeps the solver SciPy makes, to ask it
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                solvers.append(self)
        with suspended():          # SciPy's own solve, user code on plain arrays
            result = scipy_solve_ivp(self.fun, (t0, tf), y0, method=Watched, t_eval=t_eval,
                                     dense_output=self.dense, events=self.events,
                                     vectorized=self.vectorized, args=tuple(args),
                                     **self.options)
        result.stiff = solvers[0].stiff
        return result


def _layout(result):
    """Status, outputs, the dense output's knots (0 without), events per
    function, nfev, njev, nlu."""
    events = [len(t) for t in result.t_events] if result.t_events is not None else []
    knots = 0 if result.sol is None else len(result.sol.ts)
    return np.array([result.status, len(result.t), knots] + events +
                    [result.nfev, result.njev, result.nlu], dtype=float)


def _outputs(result):
    """``t``, ``y``, the event times and states, the dense output's knots, flat."""
    pieces = [result.t, result.y.T.ravel()]
    if result.t_events is not None:
        pieces += [a.ravel() for a in result.t_events] + [a.ravel() for a in result.y_events]
    if result.sol is not None:
        pieces.append(result.sol.ts)
    return np.concatenate(pieces).astype(float)


class _Piece(CallbackRules):
    """One op of a recorded LSODA call: ``piece(result, extra)`` of the
    SciPy solve at the op's first ``k`` inputs (``extra``: the others). Its
    inputs are stopped: it has no derivative rules."""

    name = "scipy.integrate.solve_ivp(method='LSODA')"
    not_saved = "its values are SciPy's LSODA run on `fun` again at every replay"

    def __init__(self, call, k, piece, size):
        self.call, self.k, self.piece, self.size = call, k, piece, size

    def value(self, args, context=None):
        out = np.asarray(self.piece(self.call.solve(args[:self.k]), args[self.k:]), dtype=float)
        if out.size != self.size:       # the layout op's guards come first
            raise UnsupportedOperation("adsim: LSODA's outputs changed their layout at a "
                                       "replay; record again")
        return out.reshape(-1)


def _record(tape, refs, rules):
    cb = tape.add_callback(rules)
    slot = tape.record_op(int(Op.CALLBACK), rules.size, [cb, len(refs)] + refs)
    return wrap(tape, slot, (rules.size,))


def _operands(tape, inputs, kept):
    """(refs, plain values) of the stopped ``inputs``; the stopped values
    are appended to ``kept``, which must hold them while ops read their
    slots (a slot Python frees is reused)."""
    refs, plain = [], []
    for a in inputs:
        if isinstance(a, Active):
            a = stop_gradient(a)
            kept.append(a)
            refs.append(a.slot)
            plain.append(np.array(tape.slot_value(a.slot)).reshape(a.shape))
        else:
            arr = constant(a)
            refs.append(tape.const_ref(arr))
            plain.append(arr)
    return refs, plain


def lsoda_values(fun, t0, tf, y0, t_eval, dense_output, events, vectorized, args, options):
    """The OdeResult of SciPy's LSODA at the values of the (checked,
    gathered) inputs, recorded without derivatives but for ``t`` (see
    :func:`_times`); ``stiff``: whether LSODA used its stiff method;
    ``stopped_by``: the terminal event that ended it, or None."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Active)]
    inputs = [t0, tf, y0] + ([t_eval] if t_eval is not None else []) + \
        [args[i] for i in positions]
    tape = tape_of(*active_leaves(inputs))
    kept = []
    refs, plain = _operands(tape, inputs, kept)
    n = y0.shape[0]
    shapes = [np.shape(a) for a in plain[len(plain) - len(positions):]]
    call = _Call(fun, events, vectorized, args, positions, shapes, options, t_eval is not None,
                 dense_output)
    first = call.solve(plain)
    layout = _layout(first)
    k = len(refs)
    guards = _record(tape, refs, _Piece(call, k, lambda r, _: _layout(r), layout.size))
    # guarded: a replay where they differ records again
    status, m, knots = int(guards[0]), int(guards[1]), int(guards[2])
    n_events = [int(guards[3 + i]) for i in range(layout.size - 6)]
    flat = _record(tape, refs, _Piece(call, k, lambda r, _: _outputs(r), _outputs(first).size))
    t_plain, at = flat[:m], m
    y = flat[at:at + n * m].reshape(m, n).T
    at += n * m
    t_events = y_events = None
    if first.t_events is not None:
        t_events, y_events = [], []
        for c in n_events:
            t_events.append(flat[at:at + c])
            at += c
        for c in n_events:
            y_events.append(flat[at:at + c * n].reshape(c, n))
            at += c * n
    ts = _times(flat[at:at + knots], t0, tf, status)
    t = t_eval[:m] if t_eval is not None else _times(t_plain, t0, tf, status)
    counts = [Count(lambda i=i: guards[layout.size - 3 + i]) for i in range(3)]
    result = OdeResult(t=t, y=y, sol=None, t_events=t_events, y_events=y_events,
                       nfev=counts[0], njev=counts[1], nlu=counts[2], status=status,
                       message=first.message, success=status >= 0)
    if dense_output:
        result["sol"] = LsodaSolution(tape, refs, kept, call, ts, first.sol.ascending, n)
    result.stiff = first.stiff
    result.stopped_by = _terminal(first, events) if status == 1 else None
    return result


def _times(t_plain, t0, tf, status):
    """LSODA's step times, with the derivatives of held steps: every step
    moves with ``t0``, the last one (on ``tf`` when the integration
    finished) with ``tf``."""
    if not active_leaves([t0, tf]) or t_plain.shape[0] < 2:
        return t_plain
    start = t0 - stop_gradient(t0)
    end = (tf - stop_gradient(tf)) if status == 0 else start
    return np.concatenate([t_plain[:-1] + start, t_plain[-1:] + end])


def _terminal(result, events):
    """The index of the terminal event that ended SciPy's integration."""
    listed = [events] if callable(events) else list(events)
    t_end = result.t_events
    for i, e in enumerate(listed):
        limit = getattr(e, "terminal", False)
        if limit and len(t_end[i]) >= int(limit) and t_end[i][-1] == result.t[-1]:
            return i
    return None


class LsodaSolution(SolutionCalls):
    """``sol`` of a recorded LSODA call: SciPy's ``OdeSolution`` evaluated
    at each (stopped) query time by an op, again at every replay."""

    def __init__(self, tape, refs, kept, call, ts, ascending, n):
        self.tape, self.refs, self.call, self.n = tape, refs, call, n
        self._kept = kept           # the stopped inputs whose slots refs name
        self.ts, self.n_segments = ts, ts.shape[0] - 1
        self.t_min, self.t_max = (ts[0], ts[-1]) if ascending else (ts[-1], ts[0])

    def _at(self, t):
        if not self.tape.recording:
            raise UnsupportedOperation(FINISHED_RECORDING)
        kept = []
        ref, _ = _operands(self.tape, [t], kept)
        rules = _Piece(self.call, len(self.refs),
                       lambda r, extra: r.sol(float(extra[0][0])), self.n)
        return _record(self.tape, self.refs + ref, rules)
