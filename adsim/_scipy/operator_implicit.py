"""A Krylov solve whose LinearOperator's products read active values.

Newton–Krylov codes solve for each step with an operator of Python code
whose products are Hessian or Jacobian products at the current iterate
(``cg(LinearOperator((n, n), matvec=lambda v: adsim.hvp(energy, u, v)),
-g)``), so the matrix depends on the parameters as the right-hand side
does. The solution x solves F(x, p) = A(p) x - b(p) = 0, linear in x, and
is differentiated by the implicit function theorem as a root finder's is
(adsim/_scipy/implicit.py, solution_op.py): F_x = A from tangent sweeps of
the recorded products, dx = -A^-1 (dA x - db). The values the products
read from closures, objects and globals are found as for SciPy's solvers
(adsim/_nesting/outer_values.py) and are parameters of the solve; SciPy's
method runs on their plain values (warm-started from the previous solution
on replays), and its accuracy is the derivative's. Such a solve is not
saved in tape files.
"""
import numpy as np
import scipy.sparse.linalg as spla

from .._active import Active
from .._containers.container_args import gathered_inputs
from .._nesting.outer_values import PlainReads
from .._record.creation import suspended
from ..errors import SolverNotConverged
from .implicit import Equations
from .krylov import KRYLOV
from .solution_op import ImplicitSolution

__all__ = ["operator_solve"]


def operator_solve(A, b, method, options, x0=None, callback=None, M=None):
    """(x, 0) of ``scipy.sparse.linalg.<method>(A, b, ...)``, x active."""
    n = int(np.shape(b)[0])
    what = f"scipy.sparse.linalg.{method}"

    def residual(x, rhs):
        return np.reshape(A._matvec(x), (n,)) - rhs

    # later calls see the plain values the products read as this solve does (a
    # Newton loop rebinds its iterate): adsim/_nesting/outer_values.py
    reads = PlainReads([residual])
    (f,), args = gathered_inputs([reads.frozen(residual)], (b,))
    positions = [i for i, v in enumerate(args) if isinstance(v, Active)]

    def full(values):
        out = list(args)
        for i, v in zip(positions, values):
            out[i] = v
        return tuple(out)

    system = Equations(lambda x, *params: f(x, *full(params)), n, what)
    first = [True]

    def solve(x_start, values):
        values = [np.asarray(v, dtype=float) for v in values]
        plain = full(values)
        zero = np.zeros(n)

        def product(v):
            v = np.asarray(v, dtype=float).reshape(n)
            if first[0]:
                return f(v, zero, *plain[1:])
            # later solves (replays) run on the residual's tapes recorded at the
            # first: the products may read a dict or array the program has
            # updated in place since, which PlainReads cannot restore
            return system.tape.forward([v] + values) + np.asarray(plain[0], dtype=float)
        with suspended():
            operator = spla.LinearOperator((n, n), dtype=float, matvec=product)
            extra = {"callback": callback} if first[0] and callback is not None else {}
            x, info = KRYLOV[method](operator, np.asarray(plain[0], dtype=float),
                                     x0=x_start, M=M, **options, **extra)
        if first[0]:
            with suspended():       # the tapes the rules (and later solves) use
                system.tape.forward([np.asarray(x, dtype=float).reshape(n)] + values)
        first[0] = False
        if info != 0:
            raise SolverNotConverged(
                f"adsim: {what} with a LinearOperator of active values "
                f"{'did not converge' if info > 0 else 'broke down'} (info = {info}) with "
                f"options {options}; its result has no derivative. Raise maxiter, loosen "
                f"rtol/atol or precondition the system")
        return x

    start = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(n)
    solution = ImplicitSolution(system, solve, start)
    x = solution([args[i] for i in positions])
    reads.hold()
    return x, 0
