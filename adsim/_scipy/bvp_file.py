"""Reading a ``solve_bvp`` solution from a tape file (kind
``adsim.bvp_solution``, written by adsim/_scipy/bvp_tapes.py; the format:
docs/tape-format.md). The reader checks the call's data and every tape's
shapes, and rebuilds the solve: SciPy's ``solve_bvp`` on the tapes of
``fun`` and ``bc`` from the program's mesh and guess, held to the recorded
mesh, differentiated through the tapes of the collocation equations."""
import numpy as np

from .._filefields import expect_keys, shape_field, size_of
from .._nesting.nested import SavedInner
from .bvp import WHAT, HeldMeshSolve, ScipyRun
from .bvp_tapes import PIECES, BvpApplication, SavedBvp, TapedFunction
from .implicit import Equations
from .implicit_file import _floats, transcribed
from .solution_op import ImplicitSolution

__all__ = ["read_bvp"]

_OPTIONS = {"tol": (int, float), "max_nodes": (int,), "verbose": (int,),
            "bc_tol": (int, float, type(None))}


def read_bvp(state, tapes):
    expect_keys(state, ("n", "m", "k", "x_start", "y_guess", "p_guess", "options", "mesh",
                        "initial_nodes", "recorded_at", "variants", "first", "start",
                        "solved_at", "in_shapes", "out_shape"))
    n, m, k = (_count(state[key], key) for key in ("n", "m", "k"))
    if n < 1 or m < 2:
        raise ValueError(f"a solution of {WHAT} has n >= 1 components on m >= 2 nodes, not "
                         f"n={n}, m={m}")
    size = n * m + k
    in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]] \
        if isinstance(state["in_shapes"], list) else []
    out_shape = shape_field(state["out_shape"], "the output shape")
    moving = state["initial_nodes"] is not None
    if out_shape != (size,) or not in_shapes or (moving and in_shapes[-1] != (m,)):
        raise ValueError(f"the solution of {WHAT} maps its parameters (then the mesh of {m} "
                         f"nodes, when it moves) to its {size} unknowns, not {in_shapes} to "
                         f"{out_shape}")
    params = in_shapes[:-1] if moving else in_shapes
    x_start = _floats(state["x_start"], _length(state["x_start"]), "the initial mesh")
    y_guess = _floats(_flat(state["y_guess"], n, x_start.size), n * x_start.size,
                      "the guess").reshape(n, x_start.size)
    p_guess = None if state["p_guess"] is None else _floats(state["p_guess"], k, "the guess of p")
    if (p_guess is None) != (k == 0):
        raise ValueError(f"a solve with {k} unknown parameters has a guess of them exactly "
                         f"when k > 0")
    mesh = _floats(state["mesh"], m, "the mesh")
    initial_nodes = None
    if moving:
        nodes = state["initial_nodes"]
        if not isinstance(nodes, list) or len(nodes) != x_start.size or \
                not all(type(i) is int and 0 <= i < m for i in nodes):
            raise ValueError(f"the initial nodes are {x_start.size} indices of the {m} nodes")
        initial_nodes = np.array(nodes, dtype=np.intp)
    options = state["options"]
    if not isinstance(options, dict) or set(options) != set(_OPTIONS) or any(
            type(options[key]) not in types for key, types in _OPTIONS.items()):
        raise ValueError(f"the options of {WHAT} are {sorted(_OPTIONS)}, numbers (bc_tol may "
                         f"be null), not {options!r}")
    recorded = _split(_floats(state["recorded_at"], sum(size_of(s) for s in in_shapes),
                              "the recorded parameters"), in_shapes)
    groups = _groups(state["variants"], tapes)
    residual = groups.pop("collocation")
    _check(residual, [[(size,)] + in_shapes], (size,), "collocation equations")
    p_shape = [(k,)] if k else []
    head = 2 + len(p_shape)

    def takes_x_y(s):           # fun and fun_jac: (x (mm,), y (n, mm)[, p], *params)
        return len(s) == head + len(params) and len(s[0]) == 1 and s[1] == (n, s[0][0]) \
            and s[2:] == p_shape + params

    def takes_ends(s):          # bc and bc_jac: (ya (n,), yb (n,)[, p], *params)
        return s == [(n,), (n,)] + p_shape + params
    outputs = {"fun": (takes_x_y, lambda s: (n, s[0][0])),
               "bc": (takes_ends, lambda s: (n + k,))}
    taped = {}
    for name, group in groups.items():
        pieces = PIECES[name](k) if name in PIECES else None
        takes, output = outputs[name.replace("_jac", "")]
        if pieces is not None:
            output = _joined_size(pieces)
        taped[name] = TapedFunction(name, None, _by_shapes(group, name, head, takes, output),
                                    pieces=pieces)
    first, start = (_floats(state[key], size, f"the {key}") for key in ("first", "start"))
    solved_at = state["solved_at"]
    if solved_at is not None:
        solved_at = _floats(solved_at, sum(size_of(s) for s in in_shapes), "the parameters")

    inner = SavedInner("collocation equations", 0, residual,
                       f"the collocation equations of {WHAT}")
    system = Equations(transcribed(inner), size, WHAT, inner=inner)
    saved = SavedBvp(taped,
                     {"x_start": x_start, "y_guess": y_guess, "p_guess": p_guess,
                      "options": options, "n": n, "m": m, "k": k, "mesh": mesh,
                      "initial_nodes": initial_nodes, "recorded_at": recorded})
    saved.recorded = True
    run = ScipyRun(y_guess, p_guess, options)
    solve = HeldMeshSolve(run, saved.functions_at, x_start, mesh, initial_nodes, recorded,
                          first, k > 0)
    solution = ImplicitSolution(system, solve, first)
    solution._start = start
    solution._solved_at = None if solved_at is None else solved_at.tobytes()
    solution.saved = saved
    return BvpApplication(solution.primitive, in_shapes, out_shape)


_FUNCTIONS = ("collocation", "fun", "bc", "fun_jac", "bc_jac")


def _groups(listed, tapes):
    """name -> its tapes, from ``variants`` (``[name, count]`` in tape
    order: the collocation equations, fun and bc, then the Jacobians given)."""
    if not isinstance(listed, list) or not all(
            isinstance(e, list) and len(e) == 2 and e[0] in _FUNCTIONS and type(e[1]) is int
            and e[1] > 0 for e in listed) or \
            [e[0] for e in listed] != [f for f in _FUNCTIONS if f in {e[0] for e in listed}] \
            or [e[0] for e in listed][:3] != list(_FUNCTIONS[:3]) or \
            sum(e[1] for e in listed) != len(tapes):
        raise ValueError(f"the tapes of a solution of {WHAT} are listed as [name, count] of "
                         f"{list(_FUNCTIONS)} in that order (the first three always, each "
                         f"with at least one tape), not {listed!r} of {len(tapes)} tapes")
    groups, at = {}, 0
    for name, count in listed:
        groups[name] = tapes[at:at + count]
        at += count
    return groups


def _joined_size(pieces):
    """The output shape of a Jacobian's tapes, from its pieces' shapes."""
    return lambda s: (sum(size_of(p) for p in pieces([tuple(x) for x in s])[0]),)


def _count(value, what):
    if type(value) is not int or not 0 <= value <= 1 << 31:
        raise ValueError(f"{what} is a count, not {value!r}")
    return value


def _length(value):
    return len(value) if isinstance(value, list) else -1


def _flat(rows, n, m):
    """The guess ``y`` (n lists of m numbers) as one list, or ValueError."""
    if not isinstance(rows, list) or len(rows) != n or \
            not all(isinstance(r, list) and len(r) == m for r in rows):
        raise ValueError(f"the guess of {WHAT} is {n} lists of {m} numbers")
    return [v for r in rows for v in r]


def _split(flat, shapes):
    out, at = [], 0
    for s in shapes:
        out.append(flat[at:at + size_of(s)].reshape(s))
        at += size_of(s)
    return out


def _shapes(tape):
    return [tuple(s) for s in tape.input_shapes]


def _check(tapes, inputs, output, what):
    for tape in tapes:
        if _shapes(tape) not in inputs or tuple(tape.output_shape) != output:
            raise ValueError(f"a tape of the {what} of {WHAT} maps {tape.input_shapes} to "
                             f"{tape.output_shape}, not {inputs[0]} to {output}")


def _by_shapes(tapes, name, head, takes, output_of):
    """name's tapes as {shapes of SciPy's ``head`` arguments: SavedInner},
    each checked (``takes(input shapes)``, output ``output_of(input shapes)``)."""
    groups = {}
    for tape in tapes:
        shapes = _shapes(tape)
        if not takes(shapes) or tuple(tape.output_shape) != output_of(shapes):
            raise ValueError(f"a tape of the {name} of {WHAT} maps {tape.input_shapes} to "
                             f"{tape.output_shape}, which is not how SciPy calls {name}")
        groups.setdefault(tuple(shapes[:head]), []).append(tape)
    return {key: SavedInner(name, 0, group, f"the {name} of {WHAT}")
            for key, group in groups.items()}
