"""The solution of a root finder, fixed point, minimiser or least-squares
solver (adsim/_scipy/implicit.py) in tape files: what a call keeps so that
a tape file can hold it, and the callback class that writes it (kind
``adsim.implicit_solution``; reading it runs the solver again, so its
reader sits above the solvers, in adsim/_scipy/solver_files.py).

A call is saved when SciPy's solver is run, after the first solve, on the
recorded tapes of its function rather than the program's Python function:
the equations ``F(x, *params)`` of a root finder (of a fixed point,
``F = x - g``, and SciPy iterates ``x - F``), the objective of a minimiser,
the residual vector ``r(x, *params)`` of ``least_squares``, ``leastsq``
and ``curve_fit`` (whose objective ``0.5 |r|^2`` is then recorded from the
residual's tapes, :func:`residual_system`) (:class:`SavedCall`). Its tapes (one per branch path met) and the solver's
other arguments (numbers, strings, lists, dicts: JSON data) are what the
file holds; a loaded solution runs the same solver from the same warm
start on the same tapes, so it replays bitwise like the original, and
raises BranchChanged where the function takes a branch none of its tapes
recorded. Its second derivatives record the ops of those tapes again
(:func:`transcribed`) where the original records the function. The
derivatives a call gives as Python code (``jac=``, ``hess=``,
``fprime=``, ``Dfun=``: functions of x and the parameters; with
``jac=True``, the derivative the function returns with its value) are
recorded and saved the same way, and SciPy calls their tapes too; a
``hessp=`` or ``fhess_p=`` (of x and a vector, :data:`TAKE_A_VECTOR`) is
recorded as a function of ``(x, vector, *params)``. A ``callback`` is
left out (adsim/_scipy/callbacks.py: it cannot shape a result adsim
differentiates): a loaded solve runs without it. Not saved, with the
reason: arguments that are other Python code or objects other than data
(adsim/_scipy/call_data.py), a function that could not be recorded. A
solve of more than DENSE_UP_TO unknowns saves too: a loaded one's sparse
plans (adsim/_scipy/implicit.py) record the ops of its tapes again.
"""
import numpy as np

from .._filefields import json_data
from .._nesting.nested import RecordingInner
from .._record.creation import suspended
from .bound_parameters import substituted
from .call_data import decoded, encoded
from ..errors import TapeCopyError
from ..primitives import Application
from .implicit import Equations, Stationarity, transcribed

__all__ = ["TAKE_A_VECTOR", "SavedCall", "SolutionApplication", "probe", "residual_system",
           "saved_call", "taped_functions"]


def residual_system(residual, n, what, inner=None):
    """The first-order conditions of minimising ``0.5 |r|^2`` for the
    residual vector ``residual(x, *params)``: a :class:`Stationarity` whose
    objective is recorded from the residual's own tapes (``residuals``: a
    RecordingInner, or loaded, a SavedInner), which SciPy runs on and a
    tape file holds."""
    inner = inner if inner is not None else RecordingInner(
        residual, getattr(residual, "__name__", "residual"), "the residuals of a solve")
    residuals = transcribed(inner)
    system = Stationarity(lambda x, *v: 0.5 * np.sum(residuals(x, *v) ** 2), n, what)
    system.residuals = inner
    return system


def _function_inner(system):
    """The tapes of the function SciPy calls: the residuals' for least squares."""
    return getattr(system, "residuals", None) or system.tape.inner


_KINDS = {"root": Equations, "fixed_point": Equations, "minimum": Stationarity,
          "least_squares": residual_system}
_MAX_FLOATS = 1 << 24            # of a warm start or the parameters of the latest solve


class SavedCall:
    """A solver call as a tape file keeps it: ``solver``, its other
    ``arguments`` (plain values) and ``written``, the same as JSON data
    (:func:`written_arguments`), ``derivatives`` (the tapes of the
    derivatives given as Python code, ``jac=``, ``fprime=``, ``hess=``: name
    -> RecordingInner, or loaded, SavedInner) and ``why_not`` (None, or why
    a file cannot hold it). ``recorded``: the functions' tapes hold at the
    first solution, from where on SciPy runs on the tapes."""

    def __init__(self, solver, arguments, system, why_not, written=None, derivatives=None):
        self.solver, self.arguments, self.system = solver, arguments, system
        self.why_not, self.written = why_not, written
        self.derivatives = derivatives or {}
        self.recorded = False

    def record(self, x, values):
        """Record the function at the first solution ``x`` and at the ends
        of a bracket (a bracketing solver evaluates them at every solve, so
        their branches are recorded too); one that cannot be recorded keeps
        running as the program's function, not saved."""
        points = [x] + _bracket_ends(substituted(self.arguments, values))
        inners = [("its function", _function_inner(self.system), False)] + \
            [(f"its {name}=", inner, name in TAKE_A_VECTOR)
             for name, inner in self.derivatives.items()]
        which = inners[0][0]
        try:
            with suspended():
                for point in points:
                    point = np.reshape(np.asarray(point, dtype=float), -1)
                    for which, inner, with_vector in inners:
                        head = [point, probe(point.size)] if with_vector else [point]
                        inner.run(head + list(values), lambda tape, v: tape.forward(*v))
        except Exception as err:          # not recordable (non-NumPy code)
            why = str(err).split(". ")[0][:200]
            self.why_not = f"{which} could not be recorded: {type(err).__name__}: {why}"
            return
        self.recorded = True


def _bracket_ends(arguments):
    """The ends of the bracket of a scalar root finder's call: ``a`` and
    ``b`` of brentq and its kin, ``bracket`` of root_scalar."""
    bracket = [arguments.get("a"), arguments.get("b")]
    if any(p is None for p in bracket):
        given = arguments.get("bracket")
        bracket = [] if given is None else list(np.ravel(np.asarray(given, dtype=object)))
    # (an end that moves with the parameters is a 0-d array, bound_parameters.py)
    return [float(p) for p in bracket if (isinstance(p, (int, float, np.integer, np.floating))
                                          or (isinstance(p, np.ndarray) and p.ndim == 0
                                              and p.dtype.kind in "iuf"))
            and not isinstance(p, bool) and np.isfinite(p)]


TAKE_A_VECTOR = frozenset({"hessp", "fhess_p"})
"""Derivatives SciPy calls with x and a vector (``hessp(x, p)``): their
tapes take ``(x, vector, *params)``."""


def probe(size):
    """The vector a derivative of x and a vector is first recorded at (SciPy
    calls its tapes with its own vectors from then on: one that leaves the
    recorded path is recorded again where the program's code is at hand)."""
    return np.ones(size)


def saved_call(solver, spec, call, names, system, derivatives):
    """The :class:`SavedCall` of one call (``call``: SciPy's arguments, with
    the functions at ``names``: the function, then the derivatives given as
    Python code, ``derivatives``: name -> that function of ``(x_flat,
    *params)``)."""
    if spec.kind not in _KINDS:
        return SavedCall(solver, None, system, f"a {spec.kind.replace('_', ' ')} problem of "
                                               f"{solver}: only root finders, fixed points, "
                                               f"minimisers and least-squares solvers are "
                                               f"saved")
    # the callback is left out: it cannot shape a result adsim differentiates
    # (adsim/_scipy/callbacks.py), and a loaded solve calls no Python
    rest = {k: v for k, v in call.items() if k not in names and k not in ("args", "callback")}
    code = [k for k, v in rest.items() if callable(v)]
    if code:
        return SavedCall(solver, None, system, f"its argument {code[0]}= is Python code")
    try:
        written = written_arguments(rest)
    except TypeError as err:
        return SavedCall(solver, None, system, str(err))
    # (with jac=True, "jac" is the derivative fun returns with its value: SciPy
    # is then given the two apart, which its memoised pair gives too)
    recorded = {name: RecordingInner(f, name, f"the {name}= of scipy.optimize.{solver}")
                for name, f in derivatives.items()}
    return SavedCall(solver, rest, system, None, written, recorded)


def written_arguments(arguments):
    """A call's arguments as a file writes them: plain JSON data, or where
    that cannot hold them (a limit that is infinite, a ``Bounds``),
    ``{"encoded": ...}`` in the marked form of adsim/_scipy/call_data.py."""
    try:
        return json_data(arguments, "its arguments")
    except TypeError as err:
        try:
            return {"encoded": encoded(arguments, "its arguments")}
        except TypeError:
            raise err from None


def _read_arguments(written):
    """The arguments :func:`written_arguments` wrote (a dict), or ValueError."""
    if isinstance(written, dict) and set(written) == {"encoded"}:
        written = decoded(written["encoded"])
    if not isinstance(written, dict):
        raise ValueError(f"a solve's arguments are a dict, not {type(written).__name__}")
    return written


def taped_functions(spec, system, n, derivatives):
    """values -> {the function's name: the function of x alone that SciPy
    calls, replaying the tapes of the equations (shaped as x, as SciPy
    passes it), of the objective (a number) or of the residuals (a vector)
    at the parameters ``values``; and the same for each of ``derivatives``
    (name -> its tapes; of x and the vector for :data:`TAKE_A_VECTOR`),
    shaped as it was recorded}."""
    shape = {"minimum": (), "least_squares": (-1,)}.get(spec.kind, spec.x_shape)
    inner = _function_inner(system)

    def replay(tapes, x, values, *vector):
        x = np.reshape(np.asarray(x, dtype=float), (n,))
        vector = [np.reshape(np.asarray(v, dtype=float), (n,)) for v in vector]
        return x, tapes.run([x, *vector] + list(values), lambda tape, v: tape.forward(*v))

    def at(values):
        def f(x):
            x, out = replay(inner, x, values)
            # a fixed point's tapes are of F = x - g(x): SciPy iterates g
            return np.reshape(x - out if spec.kind == "fixed_point" else out, shape)
        functions = {name: (lambda x, *vector, tapes=tapes: replay(tapes, x, values, *vector)[1])
                     for name, tapes in derivatives.items()}
        return {spec.function: f, **functions}
    return at


def described(application, fields, solution):
    """The file state of a recorded solution: ``fields`` and the solve's
    starts (the program's, the warm start of the next solve, the parameters
    of the latest one) and shapes, all as JSON data; TapeCopyError for a
    number that is not finite."""
    with solution._lock:
        start, first, solved_at = solution._start, solution._first, solution._solved_at
    try:
        return {**fields(),
                "first": json_data(first, "the start"),
                "start": json_data(start, "the warm start"),
                "solved_at": None if solved_at is None else
                json_data(np.frombuffer(solved_at, dtype=float), "the parameters"),
                "in_shapes": [list(s) for s in application.in_shapes],
                "out_shape": list(application.out_shape)}
    except TypeError as err:                    # a number that is not finite
        raise TapeCopyError(f"adsim: the tape holds `{application.prim.name}`, which tape files "
                            f"cannot hold: {err}") from err


class SolutionApplication(Application):
    """One recorded solution. A tape file saves the solver, its arguments,
    the tapes of its function, the program's start, the warm start of the
    next solve and the parameters of the latest one; a loaded one solves on
    those tapes and raises BranchChanged where none holds."""

    file_kind = "adsim.implicit_solution"
    # read above the solvers it runs again (adsim/_scipy/solver_files.py)
    from_file_state = None

    def file_state(self):
        solution = self.prim.solution
        if solution.not_saved is not None:
            return super().file_state()             # its TapeCopyError
        saved = solution.saved
        derivatives = {name: inner.variants.tapes() for name, inner in saved.derivatives.items()}
        state = described(self, lambda: {
            "solver": saved.solver, "arguments": saved.written,
            "derivatives": [[name, len(tapes)] for name, tapes in derivatives.items()]}, solution)
        return state, _function_inner(saved.system).variants.tapes() + \
            [t for tapes in derivatives.values() for t in tapes]


def _floats(value, n, what):
    if not isinstance(value, list) or len(value) != n or n > _MAX_FLOATS or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{what} is not a list of {n} numbers")
    return np.array(value, dtype=float)

