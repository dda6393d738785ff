"""Krylov solves with a LinearOperator of Python code (``matvec``, and
``rmatvec`` for the adjoint) and an active right-hand side, in tape files.

The operator's products are recorded as tapes of ``v`` (one per branch path
met, adsim/_nesting/nested.py's RecordingInner), and SciPy's Krylov method
runs on :class:`TapedOperator`, whose products replay them, in the process
that recorded them and in one that loaded them: a tape file holds those
tapes, the method and its options (not the user's ``x0``, ``callback`` or
preconditioner, as for a constant sparse matrix: a loaded solve runs
without them, to the same tolerance). An operator whose products cannot be
recorded keeps running its own code, and its solve is not saved.
"""
import numpy as np
import scipy.sparse.linalg as spla

from .._filefields import expect_keys, json_data, shape_field
from .._nesting.nested import RecordingInner, SavedInner
from .._record.creation import suspended
from .._active import Active
from ..errors import TapeCopyError
from ..primitives import Application, Primitive
from .krylov import KRYLOV, transposed_operator

__all__ = ["OperatorSolveApplication", "TapedOperator", "taped_operator"]


class TapedOperator(spla.LinearOperator):
    """An n x n operator whose products replay the tapes of another's
    (``matvec``, ``rmatvec``: RecordingInner or SavedInner; rmatvec None
    when it has none)."""

    def __init__(self, n, matvec, rmatvec):
        super().__init__(np.float64, (n, n))
        self.n, self.matvec_tapes, self.rmatvec_tapes = n, matvec, rmatvec

    def _product(self, inner, v):
        v = np.asarray(v, dtype=float).reshape(self.n)
        return np.reshape(inner.run([v], lambda tape, xs: tape.forward(*xs)), (self.n,))

    def _matvec(self, v):
        return self._product(self.matvec_tapes, v)

    def _rmatvec(self, w):
        if self.rmatvec_tapes is None:
            raise NotImplementedError("rmatvec is not defined")
        return self._product(self.rmatvec_tapes, w)


def taped_operator(A, n):
    """A LinearOperator of Python code as a TapedOperator, its products
    recorded at ones(n); None when they cannot be recorded."""
    name = type(A).__name__
    matvec = RecordingInner(lambda v: A._matvec(v), f"{name}.matvec",
                            "a Krylov solve's LinearOperator")
    rmatvec = None if transposed_operator(A) is None else RecordingInner(
        lambda w: A._rmatvec(w), f"{name}.rmatvec", "a Krylov solve's LinearOperator")
    operator = TapedOperator(n, matvec, rmatvec)
    try:
        with suspended():
            operator._matvec(np.ones(n))
            if rmatvec is not None:
                operator._rmatvec(np.ones(n))
    except Exception:                   # not recordable (non-NumPy code): its own products
        return None
    return operator


def solve_rules(solver, prims, transposed):
    """(value, jvp, vjp) of b -> A^-1 b (A^-T b when ``transposed``) by
    ``solver``; the vjp of each is the other's solve, recorded as
    ``prims[not transposed]`` (higher orders) when its seed is active."""
    def value(b):
        return solver.solve(b, transposed)

    def jvp(args, out, tangents):
        return None if tangents[0] is None else solver.solve(tangents[0], transposed, True)

    def vjp(args, out, adjoint):
        if not isinstance(adjoint, Active):
            return (solver.solve(adjoint, not transposed, True),)
        return (prims[not transposed](adjoint),)
    return value, jvp, vjp


def operator_pair(solver, operator, method, options):
    """{False: A^-1, True: A^-T} of ``solver`` with the TapedOperator
    ``operator`` as OperatorSolve primitives (each the other's adjoint)."""
    prims = {}
    for transposed in (False, True):
        prims[transposed] = OperatorSolve(*solve_rules(solver, prims, transposed),
                                          f"scipy.sparse.linalg.{method}", operator, method,
                                          options, transposed)
    return prims


class OperatorSolve(Primitive):
    """x = A^-1 b (A^-T b when ``transposed``) of a Krylov ``method`` with
    ``options`` on a TapedOperator A (rules: solve_rules)."""

    def __init__(self, value, jvp, vjp, name, operator, method, options, transposed):
        super().__init__(value, jvp=jvp, vjp=vjp, linear=True)
        self.name = name
        self.operator, self.method, self.options = operator, method, options
        self.transposed = transposed

    def applied(self, in_shapes, out_shape, first_value):
        return OperatorSolveApplication(self, in_shapes, out_shape, first_value=first_value)


class OperatorSolveApplication(Application):
    """One recorded solve with a TapedOperator: a tape file saves the
    method, its options, the direction and the tapes of the operator's
    products (matvec's first); a loaded one solves on them and raises
    BranchChanged where none holds."""

    file_kind = "adsim.operator_solve"

    def file_state(self):
        prim = self.prim
        operator = prim.operator
        try:
            options = json_data(prim.options, "its options")
        except TypeError as err:
            raise TapeCopyError(f"adsim: the tape holds `{prim.name}` with a LinearOperator, "
                                f"which cannot be saved: {err}") from err
        matvecs = operator.matvec_tapes.variants.tapes()
        rmatvecs = [] if operator.rmatvec_tapes is None else \
            operator.rmatvec_tapes.variants.tapes()
        return {"method": prim.method, "options": options, "n": operator.n,
                "transposed": prim.transposed, "matvecs": len(matvecs),
                "rmatvec": operator.rmatvec_tapes is not None,
                "in_shapes": [list(s) for s in self.in_shapes],
                "out_shape": list(self.out_shape)}, matvecs + rmatvecs

    @classmethod
    def from_file_state(cls, state, tapes):
        from .krylov import Krylov
        expect_keys(state, ("method", "options", "n", "transposed", "matvecs", "rmatvec",
                            "in_shapes", "out_shape"))
        method, options, n, k = state["method"], state["options"], state["n"], state["matvecs"]
        if method not in KRYLOV or not isinstance(options, dict) or type(n) is not int or \
                n < 1 or type(k) is not int or not 0 < k <= len(tapes) or \
                type(state["transposed"]) is not bool or type(state["rmatvec"]) is not bool or \
                (k == len(tapes)) == state["rmatvec"]:
            raise ValueError("a Krylov solve with an operator is described by its method "
                             f"({', '.join(KRYLOV)}), options, size, direction and the counts of "
                             "its matvec and rmatvec tapes")
        in_shapes = [shape_field(s, "an argument shape") for s in state["in_shapes"]]
        out_shape = shape_field(state["out_shape"], "the output shape")
        if in_shapes != [(n,)] or out_shape != (n,):
            raise ValueError(f"a Krylov solve with an {n} x {n} operator maps a vector of "
                             f"{n} to one, not {in_shapes} to {out_shape}")
        for tape in tapes:
            if [tuple(s) for s in tape.input_shapes] != [(n,)] or \
                    int(np.prod(tape.output_shape)) != n:
                raise ValueError(f"a tape of the operator's products maps {tape.input_shapes} "
                                 f"to {tape.output_shape}, not a vector of {n} to one")
        what = "a Krylov solve's LinearOperator"
        operator = TapedOperator(n, SavedInner("matvec", 0, tapes[:k], what),
                                 SavedInner("rmatvec", 0, tapes[k:], what)
                                 if state["rmatvec"] else None)
        prims = operator_pair(Krylov(operator, method, options), operator, method, options)
        return cls(prims[state["transposed"]], in_shapes, out_shape)
