"""Gradients through Radau and BDF against SciPy's forward solve, new parameters at each call.

For Robertson, HIRES, Pollution and the 2-D Brusselator (method of lines,
``jac_sparsity``) of the stiff test set (``benchmarks/_stiff_set.py``) at
rtol = 1e-6 with each problem's atol and loss ``sum(weights * sol.y)``:

* SciPy: ``scipy.integrate.solve_ivp`` (its finite-difference Jacobian;
  ``jac_sparsity`` for the Brusselator), the forward solve alone;
* adsim: ``adsim.grad`` of the loss with respect to ``(y0, p)`` through
  ``adsim.integrate.solve_ivp`` with the same options and default
  settings (BDF's derivatives are those of a Radau solve), its tape cached.

Every call of either gets the next of eight parameter vectors (the
problem's, each log parameter moved by about 1e-3), as in a fit: the
steps, orders and Newton counts differ from call to call, and a gradient
pays for step variants recorded again. The ratio is gradient / SciPy
forward (the issue's goal: at most 1 on the three kinetics problems, 1.5
on the method of lines). Times are medians with the min-max spread
(``benchmarks/timing.py``), and median CPU times, whose ratio is the more
reliable on a loaded machine.
"""
import sys

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp

from . import _stiff_set as stiff
from . import timing as T

AREA = "stiff_speed"
CASES = ("robertson", "hires", "pollution", "brusselator2d")
METHODS = ("Radau", "BDF")
RTOL = 1e-6
POINTS = 8
GOALS = {"brusselator2d": 1.5}       # otherwise 1.0


def _cycling(call, points):
    """``call(point)`` at the next of ``points`` each time."""
    state = {"k": 0}

    def next_call():
        state["k"] += 1
        return call(points[state["k"] % len(points)])
    return next_call


def run_case(key, method, s):
    problem = stiff.problem_from_key(key)
    rng = np.random.default_rng(7)
    points = [problem.p + 1e-3 * rng.standard_normal(problem.p.shape) for _ in range(POINTS)]
    scipy_loss = problem.loss(scipy_solve_ivp, method, RTOL)
    grad = adsim.grad(problem.loss(solve_ivp, method, RTOL), argnums=(0, 1))
    grad(problem.y0, problem.p)                                 # records the tape
    scipy = T.measure(_cycling(lambda p: scipy_loss(problem.y0, p), points), s)
    gradient = T.measure(_cycling(lambda p: grad(problem.y0, p), points), s)
    return dict(problem=key, n=problem.n, method=method, scipy=scipy.as_dict(),
                gradient=gradient.as_dict(), ratio=gradient.median / scipy.median,
                cpu_ratio=gradient.cpu_median / scipy.cpu_median,
                goal=GOALS.get(problem.name, 1.0))


def run(s):
    keys = CASES[:1] if s.quick else CASES
    return {"cases": [run_case(k, m, s) for k in keys for m in METHODS]}


def markdown(res, s, machine):
    rows = []
    for c in res["cases"]:
        rows.append([c["problem"], c["n"], c["method"], T.fmt_timing(T.Timing(**c["scipy"])),
                     T.fmt_timing(T.Timing(**c["gradient"])), T.fmt_ratio(c["ratio"]),
                     T.fmt_ratio(c["cpu_ratio"]),
                     f"≤ {c['goal']:g}: {'met' if c['ratio'] <= c['goal'] else 'not met'}"])
    return "\n".join([
        "## Stiff ODE gradients: Radau and BDF\n", T.header(AREA, s, machine), "",
        f"rtol = {RTOL:g}, new parameters at each call. SciPy: forward `solve_ivp` (its "
        "finite-difference Jacobian; `jac_sparsity` for the Brusselator); adsim: `adsim.grad` "
        "of the loss with its cached tape. Ratio: gradient / SciPy forward (wall-clock "
        "medians, and median CPU times).", "",
        T.table(["problem", "n", "method", "SciPy forward", "adsim gradient", "ratio",
                 "CPU ratio", "goal"], rows), ""])


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
