"""The solution of a constrained minimiser (adsim/_scipy/constrained.py) in
tape files: kind ``adsim.constrained_solution`` (written here, read by
adsim/_scipy/solver_files.py, above the minimisers it runs again).

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
A limit or constraint matrix that is active is a parameter of the solve
(a tape input of the op): the file names which (``data_parameters``), and
a loaded solve takes its value from there.
The multipliers and the KKT system (the Lagrangian's stationarity) are
computed from the same tapes, their ops recorded again
(:func:`adsim._scipy.implicit_file.transcribed`), in the recording
process and in one that loaded the file, so both replay bitwise alike.

Derivatives given as Python code (``jac=``, ``hess=``, ``fprime=``, a
constraint's ``jac``) are recorded and saved beside the functions, and
SciPy calls their tapes too; those SciPy calls with x and a vector
(``hessp=``, a NonlinearConstraint's ``hess(x, v)``) are recorded as
functions of ``(x, vector, *parameters)``, first at a vector of ones
(:func:`adsim._scipy.implicit_file.probe`). An objective returning its
gradient too (``jac=True``) is recorded as two functions, its value and
the gradient it returns, whose tapes SciPy is given as the pair. A
``callback`` is left out (adsim/_scipy/callbacks.py). Not saved, with
the reason: a custom method, a sparse constraint matrix whose values a
float64 one cannot hold (call_data.kept_sparse), and a function that
could not be recorded. A solve of any number of unknowns saves: the
reader counts its dense working arrays against the load's memory bound.
"""
import numpy as np

from .._nesting.nested import RecordingInner
from .._record.creation import suspended
from ..primitives import Application
from .call_data import encoded
from .implicit_file import described, probe, transcribed
from .solver_calls import _as_array

__all__ = ["ConstrainedApplication", "SavedConstrained", "paired", "saved_constrained"]

def _without_parameters(arguments):
    """The call with the extra arguments of its functions dropped: the
    tapes hold them (as constants, or as tape inputs where active); and
    without its callback, which cannot shape a result adsim differentiates
    (adsim/_scipy/callbacks.py) and which a loaded solve does not call."""
    out = {k: v for k, v in arguments.items() if k != "callback"}
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
    hold it), ``vectors`` (the functions of x and a vector: the problem's
    ``with_vector``), ``paired`` (None, or with ``jac=True`` the indices
    of the objective's value and of the gradient it returns, :func:`paired`).
    ``taped`` once the functions hold at the first solution: from then on
    SciPy, the multipliers and the KKT system run on the tapes."""

    def __init__(self, solver, arguments, inners, why_not, vectors=None, paired=None):
        self.solver, self.arguments, self.inners = solver, arguments, inners
        self.why_not = why_not
        self.vectors = vectors or {}
        self.paired = paired
        # for each limit or matrix (the problem's data): None where the file's
        # arguments hold it, else the parameter of the solve that is its value
        self.data_parameters = []
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
        outputs, inner = {}, None
        try:
            with suspended():
                for i, inner in self.inners.items():     # constraints before their hess
                    head = [x]
                    if i in self.vectors:
                        of = self.vectors[i]
                        head.append(probe(x.size if of is None else np.size(outputs[of])))
                    outputs[i] = inner.run(head + list(values), lambda tape, v: tape.forward(*v))
        except Exception as err:          # not recordable (non-NumPy code)
            why = str(err).split(". ")[0][:200]
            self.why_not = f"a function could not be recorded ({inner.name}): " \
                f"{type(err).__name__}: {why}"
            return
        self.recorded = True

    def evaluate(self, i, x, values):
        """Function ``i`` at ``x`` on its tapes (on active arrays, their ops
        recorded again); an objective returning its gradient too gives
        ``(value, None)``, as its value is all the KKT system takes."""
        out = transcribed(self.inners[i])(np.reshape(x, (-1,)), *values)
        return (out, None) if self.paired is not None and i == self.paired[0] else out

    def bound(self, values):
        """The functions of ``x`` (and a vector, for those of ``vectors``)
        SciPy is given, by index, on the tapes."""
        def at(inner):
            def function(x, *vector):
                head = [np.reshape(np.asarray(v, dtype=float), (-1,)) for v in (x,) + vector]
                return inner.run(head + list(values), lambda tape, v: tape.forward(*v))
            return function
        out = {i: at(inner) for i, inner in self.inners.items()}
        if self.paired is not None:       # jac=True: SciPy is given the pair
            fun, gradient = self.paired
            value, derivative = out[fun], out.pop(gradient)
            out[fun] = lambda x: (value(x), derivative(x))
        return [out[i] for i in range(len(out))]


def paired(problem):
    """With ``jac=True``, (the objective's index, the index of the gradient
    it returns, recorded apart: one past the problem's functions), else None."""
    return (problem.fun, len(problem.functions)) if problem.first_of else None


def _taped_indices(problem):
    """The functions a file holds tapes of: the objective, the constraint
    functions, then the derivatives given as Python code (``jac=``,
    ``hess=``, a constraint's ``jac``), in the order the call gives them,
    and last the gradient a ``jac=True`` objective returns."""
    constraints = [p.fun for p in problem.pieces if p.fun is not None]
    rest = [i for i in range(len(problem.functions)) if i != problem.fun and i not in constraints]
    return [problem.fun] + constraints + rest + ([paired(problem)[1]] if problem.first_of else [])


def _described_as(problem, k, i):
    """(what function ``i``, the ``k``-th taped, is; the shape its values
    are given to SciPy in, or None: as the function returns them)."""
    constraints = sum(p.fun is not None for p in problem.pieces)
    if k == 0:
        return "the objective", ()
    if k <= constraints:
        return f"constraint function {k}", (-1,)
    if problem.first_of and i == paired(problem)[1]:
        return "the gradient the objective returns (jac=True)", None
    return f"derivative {k - constraints}, {problem.names.get(i, 'given as Python code')}", \
        None


def saved_constrained(solver, arguments, problem, positions, python, n):
    """The :class:`SavedConstrained` of one call (``python(i, x, values)``:
    function ``i`` of ``problem`` in the program's code; ``positions``: the
    active values among the problem's extra arguments, its data first: a
    limit or matrix that is active is a parameter of the solve, which the
    file names, and its value when recorded stands in the arguments)."""
    def refused(why):
        return SavedConstrained(solver, None, {}, why)
    if callable(arguments.get("method")):
        return refused("its argument method= is Python code")
    try:
        # active values: the start, and limits and matrices, which the
        # parameters give a loaded solve (data_parameters)
        data = encoded(_without_parameters(arguments), "its arguments", plain=True)
    except TypeError as err:
        return refused(str(err))
    def function(i, shape):
        if problem.first_of and i == problem.fun:      # (value, gradient): apart
            return lambda x, *v: np.reshape(_as_array(python(i, x, v)[0]), shape)
        if problem.first_of and i == paired(problem)[1]:
            return lambda x, *v: _as_array(python(problem.fun, x, v)[1])
        if i in problem.with_vector:
            return lambda x, vector, *v: _as_array(python(i, x, v, (vector,)))
        if shape is None:
            return lambda x, *v: _as_array(python(i, x, v))
        return lambda x, *v: np.reshape(_as_array(python(i, x, v)), shape)
    inners = {}
    for k, i in enumerate(_taped_indices(problem)):
        what, shape = _described_as(problem, k, i)
        inners[i] = RecordingInner(function(i, shape), what, f"{what} of scipy.optimize.{solver}")
    saved = SavedConstrained(solver, data, inners, None, problem.with_vector, paired(problem))
    saved.data_parameters = [positions.index(d) if d in positions else None
                             for d in range(len(problem.data))]
    return saved


# ---- the file's description ----------------------------------------------------------

class ConstrainedApplication(Application):
    """One recorded constrained solution: the solver, its arguments, the
    tapes of its objective and constraint functions, the layout and active
    set of its constraints, the program's start, the warm start of the
    next solve and the parameters of the latest one. A loaded one solves on
    those tapes and raises BranchChanged where none holds."""

    file_kind = "adsim.constrained_solution"
    # read above the solvers it runs again (adsim/_scipy/solver_files.py)
    from_file_state = None

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
            "active": kkt.active.tolist(), "tolerance": float(kkt.problem.tolerance),
            "data_parameters": saved.data_parameters}, solution)
        return state, [t for v in variants for t in v]
