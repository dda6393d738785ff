"""Derivatives through SciPy's solvers: the gradient of a solution against the solve.

Problem: the steady state of the 2-D Bratu problem of ``benchmarks/problems.py``
(5-point Laplacian plus h^2 lam exp(u) on a k x k grid, zero boundary) by
``scipy.optimize.newton_krylov`` from u = 0, at n = 10^4 unknowns (k = 100,
lam = 6; ``--quick``: k = 30); the output is the mean of the solution, and
its derivative in lam is taken by the implicit function theorem
(adsim/_scipy/implicit.py: the residual recorded at the solution, its
sparse Jacobian by the coloring plan, one sparse LU and one transposed
solve).

Timed:

* the forward solve alone: SciPy's ``newton_krylov`` on plain values (the
  unit of cost);
* ``adsim.grad`` of the whole function recorded afresh at every call: the
  same solve, run inside the recording, plus recording and the derivative;
  ``(gradient - forward) / forward`` is the cost of the derivative (goal
  <= 1.0: one linear solve against many Newton steps);
* ``tape.gradient`` of a recorded tape at a new lam each call: the solve
  again, started from the previous solution, and the derivative.

The gradient is reported beside central differences of the solve (they
agree to the solver's tolerance). Run as ``python -m benchmarks implicit [--quick]``.
"""
import sys
import time

import numpy as np
import scipy.optimize as so

import adsim as ad

from . import problems
from . import timing as T

AREA = "implicit"
SIDE, QUICK_SIDE = 100, 30
LAMBDA = 6.0
F_TOL = 1e-8
GOALS = {"derivative_over_forward": 1.0}


def mean_steady_state(lam, n):
    u = so.newton_krylov(lambda u: problems.bratu2d(u, lam), np.zeros(n), f_tol=F_TOL)
    return np.mean(u)


def one_size(k, s):
    n = k * k

    def fresh_gradient():          # a new function each call: no tape is reused
        return ad.grad(lambda lam: mean_steady_state(lam, n))(LAMBDA)
    tape = ad.record(lambda lam: mean_steady_state(lam, n), LAMBDA)
    points = iter(LAMBDA + 1e-3 * np.sin(np.arange(10 ** 6)))

    t0 = time.perf_counter()
    g = fresh_gradient()
    first = time.perf_counter() - t0
    h = 1e-4
    fd = (mean_steady_state(LAMBDA + h, n) - mean_steady_state(LAMBDA - h, n)) / (2 * h)
    return {"n": n, "gradient": float(g), "central_difference": float(fd),
            "relative_difference": abs(g - fd) / abs(fd), "first_gradient_seconds": first,
            "forward": T.measure(lambda: mean_steady_state(LAMBDA, n), s),
            "fresh_gradient": T.measure(fresh_gradient, s),
            "replayed_gradient": T.measure(lambda: tape.gradient(next(points)), s)}


def run(s):
    return {"goals": GOALS, "rows": [one_size(QUICK_SIDE if s.quick else SIDE, s)]}


def markdown(res, s, machine):
    lines = ["## Derivatives through SciPy's solvers\n", T.header(AREA, s, machine), "",
             "Mean steady state of the 2-D Bratu problem by `scipy.optimize.newton_krylov` "
             f"(lam = {LAMBDA:g}, f_tol = {F_TOL:g}), differentiated in lam by the implicit "
             "function theorem; ratios are to the forward solve alone.", ""]
    rows = []
    for r in res["rows"]:
        base = r["forward"].median
        extra = (r["fresh_gradient"].median - base) / base
        goal = GOALS["derivative_over_forward"]
        rows.append((f"n = {r['n']}", "forward solve (SciPy, plain values)",
                     T.fmt_timing(r["forward"]), "1", ""))
        rows.append((f"n = {r['n']}", "`adsim.grad`, recorded afresh (solve included)",
                     T.fmt_timing(r["fresh_gradient"]), T.fmt_ratio(r["fresh_gradient"].median
                                                                    / base),
                     f"derivative {extra:.2f} × forward, goal ≤ {goal:g}: "
                     f"{'met' if extra <= goal else 'not met'}"))
        rows.append((f"n = {r['n']}", "`tape.gradient` at a new lam (solve from the previous "
                     "solution included)", T.fmt_timing(r["replayed_gradient"]),
                     T.fmt_ratio(r["replayed_gradient"].median / base), ""))
    lines.append(T.table(["size", "what", "time", "/ forward", "goal"], rows))
    last = res["rows"][-1]
    lines += ["", f"Gradient {last['gradient']:.10g}, central differences "
              f"{last['central_difference']:.10g} (relative difference "
              f"{last['relative_difference']:.1e}); the first gradient, with adsim's one-time "
              f"set-up, took {last['first_gradient_seconds']:.3g} s.", ""]
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
