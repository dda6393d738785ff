"""Hessian-vector products through Radau and BDF with a sparse Jacobian, against the gradient.

The 2-D Brusselator of the stiff test set (``benchmarks/_stiff_set.py``)
on a ``size`` x ``size`` grid (``2 size^2`` states) over ``[0, t_end]``,
with ``jac_sparsity``, at rtol = 1e-6 and the set's atol and loss
``L(p) = sum(weights * sol.y)`` of the log parameters ``p``:

* ``gradient``: ``adsim.grad(L)``, its tape cached;
* ``hvp``: ``adsim.hvp(L, p, v)`` (the gradient comes with it), its tape
  cached; through the sparse Jacobian it takes third derivatives of
  ``fun``: one reverse pass of ``fun`` per row color written out as ops,
  differentiated by second-order sweeps (adsim/integrate/_sparse_jacobian.py);
* SciPy's forward ``solve_ivp`` with the same ``jac_sparsity``, for scale.

Every call gets a new parameter vector (each log parameter moved by about
1e-3) and a new direction; the cases run in turn, one call each per
round, so that the machine's load falls on all alike. Reported: median
wall and CPU seconds per call over the rounds after the first, and the
ratio hvp / gradient.

    python -m benchmarks.stiff_hvp [size] [t_end] [rounds]
"""
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp

from . import _stiff_set as stiff

RTOL = 1e-6
METHODS = ("Radau", "BDF")


def main(size=8, t_end=3.0, rounds=5):
    size, t_end, rounds = int(size), float(t_end), int(rounds)
    problem = stiff._brusselator(size, t_end)
    options = problem.options(RTOL)
    y0 = problem.y0

    def loss(method):
        def f(p):
            sol = solve_ivp(problem.fun, problem.t_span, y0, method=method, args=(p,),
                            **options)
            return np.sum(problem.weights * sol.y)
        return f

    cases = {}
    for method in METHODS:
        f = loss(method)
        cases[method, "scipy forward"] = lambda p, v, m=method: scipy_solve_ivp(
            problem.fun, problem.t_span, y0, method=m, args=(p,), **options)
        cases[method, "gradient"] = lambda p, v, g=adsim.grad(f): g(p)
        cases[method, "hvp"] = lambda p, v, f=f: adsim.hvp(f, p, v)
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    rng = np.random.default_rng(3)
    for r in range(rounds + 1):
        p = problem.p + 1e-3 * rng.standard_normal(3)
        v = rng.standard_normal(3)
        for name, call in cases.items():
            t, c = time.perf_counter(), time.process_time()
            call(p, v)
            if r:                                   # the first round records the tapes
                wall[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
    print(f"2-D Brusselator, {problem.n} states, [0, {t_end:g}], rtol {RTOL:g}, "
          f"jac_sparsity; median of {rounds} calls at new points")
    print(f"{'method':6s} {'call':14s} {'wall s':>8s} {'cpu s':>8s}")
    for name in cases:
        print(f"{name[0]:6s} {name[1]:14s} {np.median(wall[name]):8.3f} "
              f"{np.median(cpu[name]):8.3f}")
    for method in METHODS:
        print(f"{method}: hvp / gradient = "
              f"{np.median(wall[method, 'hvp']) / np.median(wall[method, 'gradient']):.1f} "
              f"(wall), {np.median(cpu[method, 'hvp']) / np.median(cpu[method, 'gradient']):.1f}"
              f" (cpu)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
