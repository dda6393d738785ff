"""``solve_ivp(method="LSODA")`` with active values: SciPy's numbers.

As for ``odeint`` (``_odeint.py``), the values are SciPy's own LSODA run on
recorded tapes of ``fun`` and the event functions (``_recorded_fun.py``),
again at every replay, recorded as ops whose inputs are stopped (they carry
no derivative); a tape file holds those tapes, so a loaded op replays what
this one does (a callable ``jac=`` is recorded too, as a
``RecordedDerivative``, and SciPy calls its tapes). The
derivatives are those of adsim's solve of the same problem
(``_bdf_derivatives.donor_method``: Radau where LSODA switched to its stiff
method in the recorded call, DOP853 where it did not), joined to them by
``with_donor_derivatives``.

Ops, all on one cached SciPy solve of the inputs ``(t0, tf, y0, t_eval,
params)``: the *layout* (status, number of outputs, of the dense
output's knots, of events per function, the counts), read as guarded
integers so that a replay whose layout differs records again; the *outputs*
(``t``, ``y``, event times and states, knots, in the recorded layout); and
for ``sol(t)`` one op per evaluation (the query time an input too).
"""
import hashlib
import json
import threading
import weakref

import numpy as np
from scipy.integrate import LSODA, solve_ivp as scipy_solve_ivp

from .._containers.tree import placed
from .._active import Active, wrap
from .._callback_rules import CallbackRules
from .._np.core import active_leaves, constant, tape_of
from .._np.elementwise import stop_gradient
from .._opcodes import Opcode as Op
from .._record.creation import suspended
from .._filefields import expect_keys
from .._tapefile_write import dumps
from .._validate import name_of
from ..errors import InvalidArgumentValue, TapeCopyError, UnsupportedOperation
from ._parameters import event_functions
from ._recorded_fun import (LSODA_TURNS, RecordedDerivative, RecordedFunction, decoded, encoded,
                            loaded_functions, saved_functions, shapes_field)
from ._rhs import real_array
from ._dense import FINISHED_RECORDING, SolutionCalls
from ._result import Count, OdeResult

__all__ = ["lsoda_values", "LSODA_ONLY", "LsodaPiece"]

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
    """The user's call on plain values: SciPy's ``solve_ivp`` with LSODA on
    recorded tapes of ``fun`` and the event functions (``_recorded_fun.py``),
    the parameters (the active values among ``args``) their inputs.
    ``events``: RecordedFunctions with SciPy's ``terminal`` and ``direction``;
    ``jac``: None, or a RecordedDerivative of the user's callable
    ``jac(t, y, *args)``."""

    def __init__(self, rhs, events, listed, jac, n, shapes, options, has_t_eval, dense):
        self.rhs, self.events, self.listed, self.jac = rhs, events, listed, jac
        self.n, self.shapes = n, shapes
        self.options, self.has_t_eval, self.dense = options, has_t_eval, dense
        self._solved = (None, None)

    def solve(self, flat):
        """SciPy's result at the flat inputs ``(t0, tf, y0, t_eval or
        nothing, params...)``, the last one kept."""
        key = b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in flat)
        with LSODA_TURNS:
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
        params = tuple(np.array(p, dtype=float).reshape(s) for s, p in zip(self.shapes, rest))
        events = None
        if self.events:
            plain = []
            for e, (terminal, direction) in zip(self.events, self.listed):
                g = _scalar(e.plain(params))
                g.terminal, g.direction = terminal, direction
                plain.append(g)
            events = plain
        options = dict(self.options)
        if self.jac is not None:
            options["jac"] = self.jac.plain(t0, y0, params)
        solvers = []

        class Watched(_WatchedLSODA):       # keeps the solver SciPy makes, to ask it
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                solvers.append(self)
        with suspended():          # SciPy's own solve on the recorded functions
            result = scipy_solve_ivp(self.rhs.plain(params), (t0, tf), y0, method=Watched,
                                     t_eval=t_eval, dense_output=self.dense, events=events,
                                     **options)
            self.rhs.recorded_once(t0, y0, params)       # an empty interval calls no fun
        result.stiff = solvers[0].stiff
        return result

    def file_state(self):
        """The call as a tape file describes it, and the tapes it owns."""
        recorded = self.jac is not None
        if recorded and not self.jac.taped:
            raise TapeCopyError(
                f"adsim: the tape holds solve_ivp(method='LSODA') with a callable jac=, which "
                f"tape files cannot hold: {self.jac.why_not or 'it was not recorded'}; leave "
                f"jac out (LSODA estimates the Jacobian), write it with NumPy functions, or "
                f"record the function in the process that replays it")
        functions, tapes = saved_functions([self.rhs] + list(self.events) +
                                           ([self.jac.function] if recorded else []))
        options = {k: encoded(v) for k, v in self.options.items()}
        return {"functions": functions, "events": [list(e) for e in self.listed],
                "n": self.n, "shapes": [list(s) for s in self.shapes], "options": options,
                "t_eval": self.has_t_eval, "dense": self.dense, "recorded_jac": recorded}, tapes

    @classmethod
    def from_file_state(cls, state, tapes):
        """The call a tape file describes; the pieces of one call, each
        saved with its own copy of the tapes, share one loaded call (and
        so one solve per replay, as in memory)."""
        key = hashlib.sha256(json.dumps(state, sort_keys=True).encode() +
                             b"".join(dumps(t) for t in tapes)).digest()
        with _LOADING:
            call = _LOADED.get(key)
            if call is None:
                call = _LOADED[key] = cls._loaded(state, tapes)
            return call

    @classmethod
    def _loaded(cls, state, tapes):
        # files written before a callable jac= was saved have no "recorded_jac"
        expect_keys(state, ("functions", "events", "n", "shapes", "options", "t_eval", "dense")
                    + (("recorded_jac",) if "recorded_jac" in state else ()))
        n, shapes, listed = state["n"], shapes_field(state["shapes"]), state["events"]
        recorded = state.get("recorded_jac", False)
        if not isinstance(recorded, bool):
            raise ValueError("an LSODA call says whether its jac= is recorded with true or false")
        if type(n) is not int or n < 1 or not isinstance(listed, list) or not all(
                isinstance(e, list) and len(e) == 2 and type(e[1]) in (int, float)
                and (e[0] is None or type(e[0]) in (bool, int)) for e in listed):
            raise ValueError("an LSODA call is described by its state's size and its events' "
                             "terminal and direction")
        if not isinstance(state["t_eval"], bool) or not isinstance(state["dense"], bool) or \
                not isinstance(state["options"], dict):
            raise ValueError("an LSODA call is described by whether it has t_eval and a dense "
                             "output, and its options")

        def what(i, name):
            return (f"solve_ivp(method='LSODA') of `{name}`" if i == 0
                    else f"the LSODA event `{name}`" if i <= len(listed)
                    else f"the jac= `{name}` of solve_ivp(method='LSODA')")
        functions = loaded_functions(state["functions"], tapes, [(), (n,)] + shapes,
                                     [(n,)] + [()] * len(listed) + [(n, n)] * recorded, what)
        options = {k: decoded(v) for k, v in state["options"].items()}
        if "jac" in options:
            raise ValueError("an LSODA call's jac= is a recorded function, not an option")
        jac = None
        if recorded:
            taped = functions.pop()
            jac = RecordedDerivative(None, taped.name, taped.what, None,
                                     taped.variants.tapes())
        return cls(functions[0], functions[1:len(listed) + 1], [tuple(e) for e in listed], jac,
                   n, shapes, options, state["t_eval"], state["dense"])


# loaded calls by their description and tapes (see _Call.from_file_state)
_LOADED = weakref.WeakValueDictionary()
_LOADING = threading.Lock()


def _scalar(f):
    """A plain event function of SciPy's: ``f(t, y)`` as a float."""
    def g(t, y):
        return float(f(t, y))
    return g


def recorded_call(fun, events, jac, vectorized, args, positions, shapes, n, options,
                  has_t_eval, dense):
    """The _Call of the user's (gathered) functions: ``fun`` and the event
    functions recorded as tapes of ``(t, y, *params)``, the parameters at
    ``positions`` of ``args``."""
    def full_args(params):
        return placed(args, positions, params)

    def G(t, y, *params):
        state = y[:, None] if vectorized else y
        return real_array(fun(t, state, *full_args(params)), "fun(t, y)").reshape(-1)
    listed = event_functions(events) if events is not None else []
    recorded = [RecordedFunction(_event_G(e, full_args), name_of(e),
                                 f"the LSODA event `{name_of(e)}`") for e in listed]
    terminal = [(_plain_flag(getattr(e, "terminal", None)), float(getattr(e, "direction", 0)))
                for e in listed]
    rhs = RecordedFunction(G, name_of(fun), f"solve_ivp(method='LSODA') of `{name_of(fun)}`")
    if jac is not None and not callable(jac):
        raise InvalidArgumentValue(
            f"adsim: solve_ivp(method='LSODA') takes jac= as a function jac(t, y, *args), as "
            f"SciPy's LSODA does (a matrix fails there too), not {type(jac).__name__}; for a "
            f"constant Jacobian J write jac=lambda t, y, *args: J")
    if callable(jac):
        def J(t, y, *params):
            return real_array(user_jac(t, y, *full_args(params)), "jac(t, y)").reshape(n, n)

        def python(params):
            args = full_args(params)
            return lambda t, y: user_jac(t, y, *args)
        user_jac = jac
        jac = RecordedDerivative(J, name_of(user_jac),
                                 f"the jac= of solve_ivp(method='LSODA') of `{name_of(fun)}`",
                                 python)
    return _Call(rhs, recorded, terminal, jac, n, shapes, options, has_t_eval, dense)


def _plain_flag(terminal):
    return None if terminal is None else (bool(terminal) if isinstance(terminal, (bool, np.bool_))
                                          else int(terminal))


def _event_G(event, full_args):
    def E(t, y, *params):
        return real_array(event(t, y, *full_args(params)), "event(t, y)").reshape(())
    return E


def _layout(result):
    """Status, outputs, the dense output's knots (0 without), events per
    function, nfev, njev, nlu."""
    events = [len(t) for t in result.t_events] if result.t_events is not None else []
    knots = 0 if result.sol is None else len(result.sol.ts)
    return np.array([result.status, len(result.t), knots] + events +
                    [result.nfev, result.njev, result.nlu], dtype=float)


def _outputs(result):
    """``t``, ``y``, the event times and states, the dense output's knots, flat."""
    # (SciPy gives lists for y when a terminal event ends it before t_eval's first time)
    pieces = [np.asarray(result.t, dtype=float), np.asarray(result.y, dtype=float).T.ravel()]
    if result.t_events is not None:
        pieces += [a.ravel() for a in result.t_events] + [a.ravel() for a in result.y_events]
    if result.sol is not None:
        pieces.append(result.sol.ts)
    return np.concatenate(pieces).astype(float)


def _sol(result, extra):
    return result.sol(float(extra[0][0]))


# the pieces of a solve an op gives (by the name a tape file knows them)
_PIECES = {"layout": lambda r, _: _layout(r), "outputs": lambda r, _: _outputs(r), "sol": _sol}


class LsodaPiece(CallbackRules):
    """One op of a recorded LSODA call: the ``piece`` (of ``_PIECES``) of
    the SciPy solve at the op's first ``k`` inputs (``extra``: the others).
    Its inputs are stopped: it has no derivative rules. A tape file saves the
    call (the tapes of ``fun`` and the events that LSODA runs on) and the
    piece; a loaded op runs the same solve on the same tapes."""

    name = "scipy.integrate.solve_ivp(method='LSODA')"
    file_kind = "adsim.lsoda"

    def __init__(self, call, sizes, piece, size):
        self.call, self.sizes, self.piece, self.size = call, list(sizes), piece, size
        self.k = len(sizes) - (piece == "sol")     # the solve's inputs; sol's query time

    def operand_sizes(self):
        return self.sizes, self.size

    def value(self, args, context=None):
        result = self.call.solve(args[:self.k])
        out = np.asarray(_PIECES[self.piece](result, args[self.k:]), dtype=float)
        if out.size != self.size:       # the layout op's guards come first
            raise UnsupportedOperation("adsim: LSODA's outputs changed their layout at a "
                                       "replay; record again")
        return out.reshape(-1)

    def file_state(self):
        call, tapes = self.call.file_state()
        return {"call": call, "piece": self.piece, "sizes": self.sizes, "size": self.size}, tapes

    @classmethod
    def from_file_state(cls, state, tapes):
        expect_keys(state, ("call", "piece", "sizes", "size"))
        piece, sizes, size = state["piece"], state["sizes"], state["size"]
        call = _Call.from_file_state(state["call"], tapes)
        expected = [1, 1, call.n] + ([None] if call.has_t_eval else []) + \
            [int(np.prod(s)) for s in call.shapes] + ([1] if piece == "sol" else [])
        if piece not in _PIECES or type(size) is not int or size < 0 or \
                not isinstance(sizes, list) or len(sizes) != len(expected) or not all(
                    type(a) is int and a >= 0 and b in (None, a) for a, b in zip(sizes, expected)):
            raise ValueError(f"an LSODA op gives a piece {sorted(_PIECES)} of the solve at "
                             f"inputs of sizes {expected} (None: any), not {piece!r} at {sizes!r}")
        return cls(call, sizes, piece, size)


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
    options = dict(options)
    jac = options.pop("jac", None)
    call = recorded_call(fun, events, jac, vectorized, args, positions, shapes, n, options,
                         t_eval is not None, dense_output)
    first = call.solve(plain)
    layout = _layout(first)
    k = [int(np.size(a)) for a in plain]
    guards = _record(tape, refs, LsodaPiece(call, k, "layout", layout.size))
    # guarded: a replay where they differ records again
    status, m, knots = int(guards[0]), int(guards[1]), int(guards[2])
    n_events = [int(guards[3 + i]) for i in range(layout.size - 6)]
    flat = _record(tape, refs, LsodaPiece(call, k, "outputs", _outputs(first).size))
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
        result["sol"] = LsodaSolution(tape, refs, kept, call, ts, first.sol.ascending, n, k)
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
        # reaching its count ends the integration (t holds t_eval's times, not the end)
        if limit and len(t_end[i]) >= int(limit):
            return i
    return None


class LsodaSolution(SolutionCalls):
    """``sol`` of a recorded LSODA call: SciPy's ``OdeSolution`` evaluated
    at each (stopped) query time by an op, again at every replay."""

    def __init__(self, tape, refs, kept, call, ts, ascending, n, sizes):
        self.tape, self.refs, self.call, self.n, self.sizes = tape, refs, call, n, sizes
        self._kept = kept           # the stopped inputs whose slots refs name
        self.ts, self.n_segments = ts, ts.shape[0] - 1
        self.t_min, self.t_max = (ts[0], ts[-1]) if ascending else (ts[-1], ts[0])

    def _at(self, t):
        if not self.tape.recording:
            raise UnsupportedOperation(FINISHED_RECORDING)
        kept = []
        ref, _ = _operands(self.tape, [t], kept)
        rules = LsodaPiece(self.call, self.sizes + [1], "sol", self.n)
        return _record(self.tape, self.refs + ref, rules)
