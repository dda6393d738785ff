"""The solution of a constrained minimiser (adsim/_scipy/constrained.py) in
tape files: kind ``adsim.constrained_solution``.

As for the unconstrained solvers (adsim/_scipy/implicit_file.py), the
call is saved when SciPy's minimiser runs, after the first solve, on
recorded tapes rather than the program's Python code: one tape set (a
variant per branch path met) for the objective and one for each
constraint function (the ``fun`` of a dict constraint or a
``NonlinearConstraint``, the functions of ``fmin_slsqp`` and
``fmin_cobyla``), each a function of ``(x, *parameters)``. The rest of the
call is data in the file: its keyword arguments with ``LinearConstraint``
and ``Bounds`` objects, limits and bound pairs (adsim/_scipy/call_data.py), the
layout of the constraint vector and the active set of the first solution.
The multipliers and the KKT system (the Lagrangian's stationarity) are
computed from the same tapes, their ops recorded again
(:func:`adsim._scipy.implicit_file.transcribed`), in the recording
process and in one that loaded the file, so both replay bitwise alike.

Not saved, with the reason: Python derivatives (``jac=``, ``hess=``, a
constraint's ``jac`` or ``hess``), a ``callback`` or a custom method,
limits or a constraint matrix that are active (they are then tape inputs
of no tape), a sparse constraint matrix, more than DENSE_UP_TO unknowns,
and a function that could not be recorded.
"""
import numpy as np

from .._filefields import expect_keys, shape_field, size_of
from .._nesting.nested import RecordingInner, SavedInner
from .._record.creation import suspended
from ..primitives import Application
from .call_data import decoded, encoded
from .implicit import DENSE_UP_TO, ImplicitSolution
from .implicit_file import _floats, described, transcribed
from .solver_calls import _as_array

__all__ = ["ConstrainedApplication", "SavedConstrained", "saved_constrained"]

def _without_parameters(arguments):
    """The call with the extra arguments of its functions dropped: the
    tapes hold them (as constants, or as tape inputs where active)."""
    out = dict(arguments)
    for key, empty in (("args", ()), ("consargs", None)):
        if key in out:
            out[key] = empty
    constraints = out.get("constraints")
    if isinstance(constraints, dict):
        out["constraints"] = dict(constraints, args=())
    elif isinstance(constraints, (list, tuple)):
        out["constraints"] = type(constraints)(
            dict(c, args=()) if isinstance(c, dict) else c for c in constraints)
    return out


# ---- the call in the recording process -----------------------------------------------

class SavedConstrained:
    """What a tape file keeps of one constrained call: ``arguments`` (JSON
    data), the tapes of each function (``inners``: function index ->
    RecordingInner or SavedInner), ``why_not`` (None, or why a file cannot
    hold it). ``taped`` once the functions hold at the first solution: from
    then on SciPy, the multipliers and the KKT system run on the tapes."""

    def __init__(self, solver, arguments, inners, why_not):
        self.solver, self.arguments, self.inners = solver, arguments, inners
        self.why_not = why_not
        self.recorded = False
        self.kkt = None

    @property
    def taped(self):
        return self.why_not is None and self.recorded

    @property
    def application(self):
        return ConstrainedApplication

    def record(self, x, values):
        """Record every function at the first solution ``x`` (once); one
        that cannot be recorded keeps the call on the program's code."""
        if self.recorded or self.why_not is not None:
            return
        try:
            with suspended():
                for inner in self.inners.values():
                    inner.run([x] + list(values), lambda tape, v: tape.forward(*v))
        except Exception as err:          # not recordable (non-NumPy code)
            why = str(err).split(". ")[0][:200]
            self.why_not = f"a function could not be recorded: {type(err).__name__}: {why}"
            return
        self.recorded = True

    def evaluate(self, i, x, values):
        """Function ``i`` at ``x`` on its tapes (on active arrays, their ops
        recorded again)."""
        return transcribed(self.inners[i])(np.reshape(x, (-1,)), *values)

    def bound(self, values):
        """The functions of ``x`` SciPy is given, by index, on the tapes."""
        def at(inner):
            def function(x):
                x = np.reshape(np.asarray(x, dtype=float), (-1,))
                return inner.run([x] + list(values), lambda tape, v: tape.forward(*v))
            return function
        return [at(self.inners[i]) for i in range(len(self.inners))]


def _taped_indices(problem):
    return [problem.fun] + [p.fun for p in problem.pieces if p.fun is not None]


def saved_constrained(solver, arguments, problem, positions, python, n):
    """The :class:`SavedConstrained` of one call (``python(i, x, values)``:
    function ``i`` of ``problem`` in the program's code; ``positions``: the
    active values among the problem's extra arguments, its data first)."""
    def refused(why):
        return SavedConstrained(solver, None, {}, why)
    if n > DENSE_UP_TO:
        return refused(f"more than {DENSE_UP_TO} unknowns")
    if problem.first_of or len(problem.functions) != len(_taped_indices(problem)):
        return refused("it calls a derivative given as Python code (jac=, hess=, a "
                       "constraint's jac or hess, ...)")
    code = [k for k, v in arguments.items() if k in ("callback", "method") and callable(v)]
    if code:
        return refused(f"its argument {code[0]}= is Python code")
    if any(i < len(problem.data) for i in positions):
        return refused("its limits or a constraint's matrix are active arrays")
    try:
        data = encoded(_without_parameters(arguments), "its arguments")
    except TypeError as err:
        return refused(str(err))
    def function(i, shape):
        return lambda x, *v: np.reshape(_as_array(python(i, x, v)), shape)
    inners = {}
    for k, i in enumerate(_taped_indices(problem)):
        what = "the objective" if k == 0 else f"constraint function {k}"
        inners[i] = RecordingInner(function(i, () if k == 0 else (-1,)), what,
                                   f"{what} of scipy.optimize.{solver}")
    return SavedConstrained(solver, data, inners, None)


# ---- the file's description ----------------------------------------------------------

class ConstrainedApplication(Application):
    """One recorded constrained solution: the solver, its arguments, the
    tapes of its objective and constraint functions, the layout and active
    set of its constraints, the program's start, the warm start of the
    next solve and the parameters of the latest one. A loaded one solves on
    those tapes and raises BranchChanged where none holds."""

    file_kind = "adsim.constrained_solution"

    def file_state(self):
        solution = self.prim.solution
        if solution.not_saved is not None:
            return super().file_state()             # its TapeCopyError
        saved, kkt = solution.saved, solution.saved.kkt
        variants = [saved.inners[i].variants.tapes() for i in _taped_indices(kkt.problem)]
        state = described(self, lambda: {
            "solver": saved.solver, "arguments": saved.arguments,
            "variants": [len(v) for v in variants],
            "layout": [[m.tolist() for m in p.layout] for p in kkt.problem.pieces],
            "active": kkt.active.tolist(), "tolerance": float(kkt.problem.tolerance)}, solution)
        return state, [t for v in variants for t in v]

    @classmethod
    def from_file_state(cls, state, tapes):
        import scipy.optimize
        from .constrained import CONSTRAINED, KKT
        from .optimize import _original
        expect_keys(state, ("solver", "arguments", "variants", "layout", "active", "tolerance",
                            "first", "start", "solved_at", "in_shapes", "out_shape"))
        solver = state["solver"]
        if solver not in CONSTRAINED or not isinstance(state["arguments"], dict):
            raise ValueError(f"a constrained solution is described by one of adsim's "
                             f"constrained minimisers ({', '.join(sorted(CONSTRAINED))}) and "
                             f"its arguments, not solver {solver!r}")
        arguments = decoded(state["arguments"])
        original, signature = _original(getattr(scipy.optimize, solver))
        if not set(arguments) <= set(signature.parameters) - {"kwargs"}:
            raise ValueError(f"the arguments {sorted(arguments)} are not those of "
                             f"scipy.optimize.{solver}")
        try:
            problem, run, _, x_shape = CONSTRAINED[solver](arguments, original)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
            raise ValueError(f"the arguments of scipy.optimize.{solver} are not a call adsim "
                             f"differentiates ({type(err).__name__}: {err})") from err
        n = size_of(x_shape)
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]] \
            if isinstance(state["in_shapes"], list) else None
        if not in_shapes or n > DENSE_UP_TO:
            raise ValueError(f"the solution of {solver} has {n} unknowns (at most "
                             f"{DENSE_UP_TO}) and parameters, not {state['in_shapes']}")
        inners = _loaded_inners(solver, problem, state["variants"], tapes, [(n,)] + in_shapes)
        data = [np.asarray(d, dtype=float) for d in problem.data]
        sizes = _lay_out(problem, state["layout"], inners, data, n)
        active = state["active"]
        if not isinstance(active, list) or not all(type(a) is int for a in active) or \
                sorted(set(active)) != active or len(active) > n or \
                (active and not 0 <= active[0] <= active[-1] < sizes):
            raise ValueError(f"the active set is not increasing indices of the {sizes} "
                             f"constraints, at most {n} of them")
        out_shape = shape_field(state["out_shape"], "the output shape")
        if out_shape != (n + len(active),):
            raise ValueError(f"the solution of {solver} is {n} unknowns and {len(active)} "
                             f"multipliers, not of shape {out_shape}")
        tolerance = state["tolerance"]
        if type(tolerance) is not float or not 0.0 <= tolerance < 1.0:
            raise ValueError(f"the tolerance {tolerance!r} is not a float in [0, 1)")
        problem.tolerance = tolerance
        first = _floats(state["first"], n, "the first")
        start = _floats(state["start"], n + len(active), "the start")
        solved_at = state["solved_at"]
        if solved_at is not None:
            solved_at = _floats(solved_at, sum(size_of(s) for s in in_shapes), "the parameters")
        saved = SavedConstrained(solver, state["arguments"], inners, None)
        saved.recorded = True
        kkt = KKT(solver, problem, run, x_shape, saved.evaluate, saved.bound,
                  lambda values: data)
        kkt.active = np.array(active, dtype=np.intp)
        solution = ImplicitSolution(kkt.system(), kkt.solve, first)
        solution._start = start
        solution._solved_at = None if solved_at is None else solved_at.tobytes()
        kkt.solution, saved.kkt, solution.saved = solution, kkt, saved
        return cls(solution.primitive, in_shapes, out_shape)


def _loaded_inners(solver, problem, variants, tapes, inputs):
    """The tapes of each function (objective first), checked against the
    problem the arguments describe."""
    indices = _taped_indices(problem)
    if len(problem.functions) != len(indices) or not isinstance(variants, list) or \
            len(variants) != len(indices) or not all(type(v) is int and v > 0 for v in variants) \
            or sum(variants) != len(tapes):
        raise ValueError(f"the call of {solver} has {len(indices)} functions, each with its "
                         f"tapes, not {variants!r} of {len(tapes)} tapes")
    inners, at = {}, 0
    for k, (i, count) in enumerate(zip(indices, variants)):
        for tape in tapes[at:at + count]:
            if [tuple(s) for s in tape.input_shapes] != inputs or \
                    (k == 0 and tuple(tape.output_shape) != ()):
                raise ValueError(f"a tape of function {k} of {solver} maps {tape.input_shapes} "
                                 f"to {tape.output_shape}; the solve has (x, parameters) "
                                 f"{inputs}, and the objective's value is a number")
        what = "the objective" if k == 0 else f"constraint function {k}"
        inners[i] = SavedInner(what, 0, tapes[at:at + count],
                               f"{what} of scipy.optimize.{solver}")
        at += count
    return inners


def _lay_out(problem, layout, inners, data, n):
    """Each piece's (equal, lower, upper) masks from the file, checked
    against the size of its constraint; the size of the constraint vector."""
    if not isinstance(layout, list) or len(layout) != len(problem.pieces):
        raise ValueError(f"the layout is not one entry per constraint "
                         f"({len(problem.pieces)})")
    total = 0
    for piece, masks in zip(problem.pieces, layout):
        if piece.fun is not None:
            size = {size_of(t.output_shape) for t in inners[piece.fun].variants.tapes()}
        elif piece.matrix is not None:
            size = {np.shape(np.atleast_2d(data[piece.matrix]))[0]}
        else:
            size = {n}
        if len(size) != 1 or not isinstance(masks, list) or len(masks) != 3 or \
                any(not isinstance(m, list) or len(m) != min(size) or
                    not all(type(b) is bool for b in m) for m in masks):
            raise ValueError(f"a constraint's layout is three lists of {sorted(size)} booleans")
        piece.layout = tuple(np.array(m, dtype=bool) for m in masks)
        total += sum(int(np.count_nonzero(m)) for m in piece.layout)
    return total
