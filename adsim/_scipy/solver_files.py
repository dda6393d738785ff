"""Reading the solutions of SciPy's solvers from tape files: kinds
``adsim.implicit_solution`` (root finders, fixed points, minimisers,
least squares, ``curve_fit``: adsim/_scipy/implicit_file.py) and
``adsim.constrained_solution`` (adsim/_scipy/constrained_file.py), and
``adsim.bvp_solution`` (adsim/_scipy/bvp_file.py reads it).

Those modules describe a call as a file holds it; reading one makes the
call again, on the tapes of its functions, so it needs the solvers
themselves (adsim/_scipy/solver_calls.py, constrained.py, curve_fit.py and
SciPy's own functions as optimize.py unwraps them), which sit above the
op that records a solution. The readers therefore live here, at the top,
and adsim/tapefile.py takes them from :data:`READERS`.
"""
import inspect

import numpy as np
import scipy.optimize
import scipy.sparse as sp

from .._active import Active
from .._filefields import expect_keys, shape_field, size_of
from .._nesting.nested import SavedInner
from .bound_parameters import markers, substituted
from .bvp_file import read_bvp
from .bvp_tapes import BvpApplication
from .call_data import decoded
from .constrained import CONSTRAINED, KKT
from .constrained_file import (ConstrainedApplication, SavedConstrained, _described_as,
                               _taped_indices, paired)
from .curve_fit import fit_spec, fitter
from .implicit import solution_to_rounding
from .implicit_file import (SavedCall, SolutionApplication, _KINDS, TAKE_A_VECTOR, _floats,
                            _read_arguments, taped_functions, transcribed)
from .optimize import _original
from .solution_op import ImplicitSolution
from .solver_calls import IMPLICIT, run_solver, within_bounds

__all__ = ["READERS"]


def read_solution(state, tapes):
    solvers = _solvers()
    # files written before derivatives given as Python code were saved have no "derivatives"
    expect_keys(state, ("solver", "arguments", "first", "start", "solved_at", "in_shapes",
                        "out_shape") + (("derivatives",) if "derivatives" in state else ()))
    solver, arguments = state["solver"], _read_arguments(state["arguments"])
    if solver not in solvers or \
            not isinstance(state["in_shapes"], list) or not tapes:
        raise ValueError(f"a solution is described by one of adsim's solvers "
                         f"({', '.join(sorted(solvers))}), its arguments and shapes, and "
                         f"owns the tapes of its function, not solver {solver!r}")
    original, signature, make_spec = solvers[solver]()
    try:
        spec = make_spec(arguments)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ValueError(f"the arguments of scipy.optimize.{solver} are not a call "
                         f"adsim differentiates ({type(err).__name__}: {err})") from err
    known = set(signature.parameters) - {spec.function, "args"}
    if spec.kind not in _KINDS or not set(arguments) <= known:
        raise ValueError(f"the arguments {sorted(arguments)} are not those of a root "
                         f"finder, fixed point, minimiser or least-squares solver "
                         f"scipy.optimize.{solver} ({sorted(known)})")
    in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
    out_shape = shape_field(state["out_shape"], "the output shape")
    if not all(0 <= m.index < len(in_shapes) for m in markers(arguments)):
        raise ValueError(f"the arguments of {solver} name parameters "
                         f"{sorted(m.index for m in markers(arguments))} of its "
                         f"{len(in_shapes)} (bounds that move with them)")
    n = size_of(spec.x_shape)
    if out_shape != (n,) or not in_shapes:
        raise ValueError(f"the solution of {solver} maps parameters to its {n} unknowns, not "
                         f"{in_shapes} to {out_shape}")
    inputs = [(n,)] + in_shapes
    tapes, derivatives = _derivatives_of(solver, spec, state.get("derivatives", []), tapes,
                                         inputs)
    output = {"minimum": (), "least_squares": tuple(tapes[0].output_shape)}.get(
        spec.kind, (n,))
    if len(output) != 1 and spec.kind == "least_squares":
        raise ValueError(f"the residuals of {solver} are a vector, not of shape {output}")
    for tape in tapes:
        if [tuple(s) for s in tape.input_shapes] != inputs or \
                tuple(tape.output_shape) != output:
            raise ValueError(f"a tape of the function of {solver} maps {tape.input_shapes} "
                             f"to {tape.output_shape}; the solve has (x, parameters) "
                             f"{inputs} and the function's output {output}")
    first, start = (_floats(state[k], n, f"the {k}") for k in ("first", "start"))
    solved_at = state["solved_at"]
    if solved_at is not None:
        solved_at = _floats(solved_at, sum(size_of(s) for s in in_shapes), "the parameters")
    inner = SavedInner(solver, 0, tapes, f"the solution of scipy.optimize.{solver}")
    system = _KINDS[spec.kind](transcribed(inner), n, solver, inner=inner)
    functions = taped_functions(spec, system, n, derivatives)
    x0_shape = np.shape(arguments[spec.start]) if spec.start else spec.x_shape
    takes_args = "args" in signature.parameters
    call = dict(arguments)

    # bounds that move with the parameters (adsim/_scipy/bound_parameters.py)
    moving = spec.start and "bounds" in call and bool(markers(call["bounds"]))

    def solve(x_start, values):
        this = substituted(call, values)
        # as in memory (solver_calls.differentiated_solve): a flagged solve from
        # the program's own start that stopped at a solution to rounding stands
        own_start = np.array_equal(np.ravel(x_start), np.ravel(start))
        if moving:
            x_start = within_bounds(solver, this["bounds"], x_start)
        return run_solver(solver, spec, original, this, x0_shape, functions(values),
                          takes_args, x_start,
                          near_solution=(lambda x: solution_to_rounding(
                              system, x, values, spec.near_rtol))
                          if own_start else None)[0].reshape(-1)
    solution = ImplicitSolution(system, solve, first)
    solution._start = start
    solution._solved_at = None if solved_at is None else solved_at.tobytes()
    solution.saved = SavedCall(solver, arguments, system, None, state["arguments"],
                               derivatives)
    solution.saved.recorded = True
    return SolutionApplication(solution.primitive, in_shapes, out_shape)


def _derivatives_of(solver, spec, listed, tapes, inputs):
    """The tapes of the function, and name -> the tapes (a SavedInner) of
    each derivative given as Python code, ``listed`` as ``[name, count]``
    after the function's tapes, each a function of ``inputs``."""
    if not isinstance(listed, list) or not all(
            isinstance(d, list) and len(d) == 2 and d[0] in spec.lifted and
            type(d[1]) is int and d[1] > 0 for d in listed) \
            or len({d[0] for d in listed}) != len(listed) or \
            sum(d[1] for d in listed) >= len(tapes):
        raise ValueError(f"the derivatives of {solver} are listed as [name, tapes] pairs of "
                         f"its arguments {sorted(spec.lifted)}, after "
                         f"the function's tapes, not {listed!r}")
    at = len(tapes) - sum(d[1] for d in listed)
    own, derivatives = tapes[:at], {}
    for name, count in listed:
        # a derivative of x and a vector (hessp=) takes the vector after x
        takes = inputs[:1] * 2 + inputs[1:] if name in TAKE_A_VECTOR else inputs
        for tape in tapes[at:at + count]:
            if [tuple(s) for s in tape.input_shapes] != takes:
                raise ValueError(f"a tape of the {name}= of {solver} takes "
                                 f"{tape.input_shapes}; it is a function of {takes} "
                                 f"(x{', vector' if name in TAKE_A_VECTOR else ''}, "
                                 f"parameters)")
        derivatives[name] = SavedInner(name, 0, tapes[at:at + count],
                                       f"the {name}= of scipy.optimize.{solver}")
        at += count
    return own, derivatives


def _solvers():
    """name -> () -> (SciPy's solver as run on the functions, the signature
    its arguments are bound to, the :class:`Spec` maker) for every solver a
    tape file may hold: IMPLICIT's, and curve_fit run on its residual
    (adsim/_scipy/curve_fit.py)."""

    def implicit(name):
        return lambda: _original(getattr(scipy.optimize, name)) + (IMPLICIT[name],)

    def curve_fit():
        fit = fitter(_original(scipy.optimize.curve_fit)[0])
        return fit, inspect.signature(fit), fit_spec
    return {**{name: implicit(name) for name in IMPLICIT}, "curve_fit": curve_fit}


def read_constrained(state, tapes):
    # files written before active limits were saved have no "data_parameters"
    expect_keys(state, ("solver", "arguments", "variants", "layout", "active", "tolerance",
                        "first", "start", "solved_at", "in_shapes", "out_shape") +
                (("data_parameters",) if "data_parameters" in state else ()))
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
    if not in_shapes:
        raise ValueError(f"the solution of {solver} has {n} unknowns and parameters, not "
                         f"{state['in_shapes']}")
    inners = _loaded_inners(solver, problem, state["variants"], tapes, [(n,)] + in_shapes)
    data = [d if sp.issparse(d) else np.asarray(d, dtype=float) for d in problem.data]
    data_parameters = _data_parameters(solver, state.get("data_parameters"), data, in_shapes)
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
    saved = SavedConstrained(solver, state["arguments"], inners, None, problem.with_vector,
                             paired(problem))
    saved.recorded = True
    saved.data_parameters = data_parameters

    def data_at(values):
        """The limits and matrices, those that are parameters at ``values``
        (as the recording process holds them, adsim/_scipy/constrained.py)."""
        out = list(data)
        for d, k in enumerate(data_parameters):
            if k is not None:
                out[d] = values[k] if isinstance(values[k], Active) else \
                    np.asarray(values[k], dtype=float)
        return out
    kkt = KKT(solver, problem, run, x_shape, saved.evaluate, saved.bound, data_at)
    kkt.active = np.array(active, dtype=np.intp)
    solution = ImplicitSolution(kkt.system(), kkt.solve, first)
    solution._start = start
    solution._solved_at = None if solved_at is None else solved_at.tobytes()
    kkt.solution, saved.kkt, solution.saved = solution, kkt, saved
    app = ConstrainedApplication(solution.primitive, in_shapes, out_shape)
    # each solve finds its active set and multipliers from the dense Jacobian
    # of the objective and the constraints (adsim/_scipy/constrained.py,
    # _active_set: n unit seeds, (1 + constraints) x n values): counted
    # against the load's memory bound, as the file's size does not bound n^2
    app.working_bytes = 8 * (n * n + (1 + sizes) * n)
    return app




def _data_parameters(solver, listed, data, in_shapes):
    """For each limit or matrix of the call, None or the index of the
    parameter that is its value (``listed``, checked: distinct parameters
    of the limit's shape); all None where the file names none."""
    if listed is None:
        return [None] * len(data)
    if not isinstance(listed, list) or len(listed) != len(data) or not all(
            k is None or (type(k) is int and 0 <= k < len(in_shapes) and
                          tuple(in_shapes[k]) == np.shape(d)) for k, d in zip(listed, data)) \
            or len({k for k in listed if k is not None}) != sum(k is not None for k in listed):
        raise ValueError(f"the limits and matrices of {solver} are {len(data)} entries, each "
                         f"null or the index of a distinct parameter of its shape (of "
                         f"{[list(s) for s in in_shapes]}), not {listed!r}")
    return listed


def _loaded_inners(solver, problem, variants, tapes, inputs):
    """The tapes of each function (objective first), checked against the
    problem the arguments describe."""
    indices = _taped_indices(problem)
    if not isinstance(variants, list) or \
            len(variants) != len(indices) or not all(type(v) is int and v > 0 for v in variants) \
            or sum(variants) != len(tapes):
        raise ValueError(f"the call of {solver} has {len(indices)} functions, each with its "
                         f"tapes, not {variants!r} of {len(tapes)} tapes")
    inners, at = {}, 0
    for k, (i, count) in enumerate(zip(indices, variants)):
        takes = inputs
        if i in problem.with_vector:        # (x, vector, parameters), after its constraint
            of = problem.with_vector[i]
            takes = inputs[:1] + [inputs[0] if of is None else _output_of(inners[of])] + \
                inputs[1:]
        for tape in tapes[at:at + count]:
            if [tuple(s) for s in tape.input_shapes] != takes or \
                    (k == 0 and tuple(tape.output_shape) != ()):
                takes_what = "x, a vector" if takes is not inputs else "x"
                raise ValueError(f"a tape of function {k} of {solver} maps {tape.input_shapes} "
                                 f"to {tape.output_shape}; that function takes {takes} "
                                 f"({takes_what} and the parameters), and the objective's "
                                 f"value is a number")
        what = _described_as(problem, k, i)[0]
        inners[i] = SavedInner(what, 0, tapes[at:at + count],
                               f"{what} of scipy.optimize.{solver}")
        at += count
    return inners


def _output_of(inner):
    """The flat size of a constraint function's values, as its tapes agree
    (the vector its hess takes), as a shape."""
    sizes = {size_of(t.output_shape) for t in inner.variants.tapes()}
    if len(sizes) != 1:
        raise ValueError(f"the tapes of {inner.what} give values of sizes {sorted(sizes)}")
    return (sizes.pop(),)


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
            matrix = data[piece.matrix]
            size = {(matrix if sp.issparse(matrix) else np.atleast_2d(matrix)).shape[0]}
        else:
            size = {n}
        if len(size) != 1 or not isinstance(masks, list) or len(masks) != 3 or \
                any(not isinstance(m, list) or len(m) != min(size) or
                    not all(type(b) is bool for b in m) for m in masks):
            raise ValueError(f"a constraint's layout is three lists of {sorted(size)} booleans")
        piece.layout = tuple(np.array(m, dtype=bool) for m in masks)
        total += sum(int(np.count_nonzero(m)) for m in piece.layout)
    return total


# file kind -> the function reading a callback of that kind
READERS = {SolutionApplication.file_kind: read_solution,
           ConstrainedApplication.file_kind: read_constrained,
           BvpApplication.file_kind: read_bvp}
