"""Newton's method for the 2-D Bratu problem with sparse adsim Jacobians.

    lap(u) + lambda exp(u) = 0  on the unit square,  u = 0 on the boundary,

discretised with the 5-point Laplacian on a ``k x k`` interior grid (k^2
unknowns). The residual is plain NumPy. ``sparse_jacobian_plan`` records it
once with lambda as a second (not differentiated) argument; every Newton
step then takes the residual and the Jacobian from ONE compressed tangent
sweep (``plan.value_and_jacobian``: 5 directions for a 5-point stencil) and
solves ``J du = -F`` with ``scipy.sparse.linalg.spsolve``. A continuation in
lambda reuses the same plan: new parameter values are new tape inputs, not
new recordings.

The script checks itself: ``J v`` against central differences, quadratic
convergence of the residual, and a final residual below 1e-9. It also times
one Jacobian against SciPy's grouped finite differences.

Run: ``python examples/sparse/bratu_newton.py [--grid 200]`` (``--quick``: 30).

References
----------
.. [1] B. M. Averick, R. G. Carter, J. J. More and G.-L. Xue, "The MINPACK-2
   test problem collection", Argonne report ANL/MCS-P153-0692, 1992
   (the solid fuel ignition problem).
"""
import argparse
import time
import timeit

import numpy as np
from scipy.optimize._numdiff import approx_derivative, group_columns
from scipy.sparse.linalg import spsolve

from adsim.sparse.api import sparse_jacobian_plan


def bratu(u, lam):
    """Residual of the 5-point discretisation, scaled by h^2."""
    k = int(round(np.sqrt(u.shape[0])))
    h = 1.0 / (k + 1)
    U = u.reshape(k, k)
    P = np.pad(U, 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return (lap + (h * h * lam) * np.exp(U)).reshape(-1)


def newton(plan, u, lam, tol=1e-10, max_iter=20):
    """Newton iterations from ``u``; returns (u, residual norms, seconds in
    sweeps, seconds in spsolve)."""
    norms, sweep_time, solve_time = [], 0.0, 0.0
    for _ in range(max_iter):
        t0 = time.perf_counter()
        F, J = plan.value_and_jacobian(u, lam)
        t1 = time.perf_counter()
        norms.append(float(np.linalg.norm(F)))
        if norms[-1] < tol:
            sweep_time += t1 - t0
            break
        u = u + spsolve(J.tocsc(), -F)
        t2 = time.perf_counter()
        sweep_time += t1 - t0
        solve_time += t2 - t1
    return u, norms, sweep_time, solve_time


def check_jacobian(plan, u, lam, rng):
    J = plan(u, lam)
    v = rng.standard_normal(u.size)
    eps = 1e-6
    fd = (bratu(u + eps * v, lam) - bratu(u - eps * v, lam)) / (2 * eps)
    return np.linalg.norm(J @ v - fd) / np.linalg.norm(fd)


def run(grid=200, lambdas=(2.0, 4.0, 6.0), seed=0, verbose=True):
    """Continuation in lambda with Newton steps; returns a list of result
    rows. Raises AssertionError when a self-check fails."""
    rng = np.random.default_rng(seed)
    n = grid * grid
    u = np.zeros(n)
    t0 = time.perf_counter()
    plan = sparse_jacobian_plan(bratu, u, lambdas[0])
    setup = time.perf_counter() - t0
    error = check_jacobian(plan, rng.uniform(0, 1, n), 5.0, rng)
    assert error < 1e-7, f"J v differs from central differences by {error:.2e}"
    rows = []
    for lam in lambdas:
        u, norms, sweeps, solves = newton(plan, u, lam)
        assert norms[-1] < 1e-9, f"lambda={lam}: Newton stalled at |F| = {norms[-1]:.2e}"
        tail = [b / a ** 2 for a, b in zip(norms[:-1], norms[1:]) if 1e-13 < a < 1e-2]
        assert all(r < 1e3 for r in tail), f"lambda={lam}: not quadratic: {tail}"
        rows.append((lam, len(norms) - 1, norms, sweeps, solves, float(u.max())))
    assert plan.recordings == 1, "new lambda values must not need a new recording"

    def forward():
        return plan.tape.forward(u, lambdas[-1])
    F = lambda v: bratu(v, lambdas[-1])  # noqa: E731
    groups = (plan.pattern, group_columns(plan.pattern))
    timings = {}
    for name, fn in (("residual replay", forward), ("adsim Jacobian", lambda: plan(u, lambdas[-1])),
                     ("fd + grouping", lambda: approx_derivative(F, u, sparsity=groups))):
        number = max(1, int(0.02 / max(timeit.timeit(fn, number=1), 1e-7)))
        timings[name] = min(timeit.repeat(fn, number=number, repeat=5)) / number
    if verbose:
        print(f"{plan!r}\n  record + detect + color: {setup:.3f} s")
        print("\n| lambda | Newton steps | residual norms | sweeps (s) | spsolve (s) | max u |")
        print("|---:|---:|---|---:|---:|---:|")
        for lam, steps, norms, sweeps, solves, umax in rows:
            shown = ", ".join(f"{v:.1e}" for v in norms)
            print(f"| {lam:g} | {steps} | {shown} | {sweeps:.3f} | {solves:.3f} | {umax:.4f} |")
        base = timings["residual replay"]
        print("\n| one evaluation | seconds | / residual replay |")
        print("|---|---:|---:|")
        for name, seconds in timings.items():
            print(f"| {name} | {seconds:.5f} | {seconds / base:.1f} |")
        print(f"\nchecks passed: J v against central differences ({error:.1e}), quadratic "
              f"convergence, one recording for all lambdas ({plan.ncolors} colors)")
    return rows, timings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grid", type=int, default=200, help="interior points per side")
    parser.add_argument("--quick", action="store_true", help="a 30 x 30 grid")
    args = parser.parse_args(argv)
    run(30 if args.quick else args.grid)


if __name__ == "__main__":
    main()
