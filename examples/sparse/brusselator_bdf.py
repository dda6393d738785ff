"""Stiff 2-D Brusselator with SciPy's BDF and a sparse adsim Jacobian.

The reaction-diffusion system of Hairer & Wanner (BRUSS-2D) on the periodic
unit square, ``N x N`` grid points per species (2 N^2 unknowns):

    u_t = 1 + u^2 v - 4.4 u + alpha lap(u) + f(x, y, t)
    v_t = 3.4 u - u^2 v     + alpha lap(v)

with alpha = 0.1, the 5-point Laplacian, and a forcing f = 5 in the disc of
radius 0.1 around (0.3, 0.6) switched on at t = 1.1. The right-hand side is
plain NumPy; ``sparse_jacobian_plan`` records it once, detects the pattern
(two coupled 5-point stencils), colors it and returns ``jac(t, y)`` for
``solve_ivp``: each call is one compressed tangent sweep. The switch
``t >= 1.1`` is boolean data that every replay computes again, so crossing
it needs no new recording (``plan.recordings`` stays 1).

The script compares BDF with the adsim Jacobian against BDF with SciPy's
finite-difference Jacobian, with ``jac_sparsity`` (grouped differences) on
the full grid and also without it (dense differences and a dense LU) on a
small grid, and times one Jacobian evaluation of each. It checks itself:
``J v`` against central differences, and the final states of the solvers
against each other.

Run: ``python examples/sparse/brusselator_bdf.py [--grid 100] [--t-end 1.5]``
(2 * 100^2 = 20000 unknowns; ``--quick`` for a small grid).

References
----------
.. [1] E. Hairer and G. Wanner, *Solving Ordinary Differential Equations II*,
   2nd ed., Springer, 1996, section IV.10 (the BRUSS-2D problem).
"""
import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize._numdiff import approx_derivative, group_columns

from adsim.sparse.api import sparse_jacobian_plan

ALPHA = 0.1


def brusselator(N):
    """``(rhs(t, y), y0)`` on an ``N x N`` periodic grid; y = [u, v] flattened."""
    h = 1.0 / N
    s = np.arange(N) * h
    X, Y = np.meshgrid(s, s, indexing="ij")
    spot = 5.0 * ((X - 0.3) ** 2 + (Y - 0.6) ** 2 <= 0.1 ** 2)
    c = ALPHA / (h * h)

    def lap(w):
        return np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1) - 4 * w

    def rhs(t, y):
        u = y[:N * N].reshape(N, N)
        v = y[N * N:].reshape(N, N)
        uuv = u * u * v
        du = 1.0 + uuv - 4.4 * u + c * lap(u) + spot * (t >= 1.1)
        dv = 3.4 * u - uuv + c * lap(v)
        return np.concatenate([du.reshape(-1), dv.reshape(-1)])

    y0 = np.concatenate([(22.0 * Y * (1 - Y) ** 1.5).reshape(-1),
                         (27.0 * X * (1 - X) ** 1.5).reshape(-1)])
    return rhs, y0


def check_jacobian(rhs, jac, t, y, rng, k=3):
    """Largest relative error of ``J v`` against central differences."""
    J = jac(t, y)
    worst = 0.0
    for _ in range(k):
        v = rng.standard_normal(y.size)
        eps = 1e-6
        fd = (rhs(t, y + eps * v) - rhs(t, y - eps * v)) / (2 * eps)
        worst = max(worst, np.linalg.norm(J @ v - fd) / np.linalg.norm(fd))
    return worst


def timed(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def solve(rhs, y0, t_end, rtol, **options):
    t0 = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, t_end), y0, method="BDF", rtol=rtol, atol=rtol * 1e-2, **options)
    seconds = time.perf_counter() - t0
    if not sol.success:
        raise RuntimeError(f"BDF failed: {sol.message}")
    return sol, seconds


def compare(N, t_end, rtol, dense, rng):
    """Solve on an N x N grid with each Jacobian; returns (rows, plan, solutions)."""
    rhs, y0 = brusselator(N)
    t0 = time.perf_counter()
    plan = sparse_jacobian_plan(rhs, 0.0, y0, argnum=1)
    setup = time.perf_counter() - t0
    jac = plan.as_ivp_jac()
    error = check_jacobian(rhs, jac, 0.5, y0, rng)
    assert error < 1e-6, f"J v differs from central differences by {error:.2e}"

    def F(y):
        return rhs(0.5, y)
    groups = (plan.pattern, group_columns(plan.pattern))        # grouped once, as BDF does
    jac_times = {"adsim": timed(lambda: jac(0.5, y0))[0],
                 "fd+sparsity": timed(lambda: approx_derivative(
                     F, y0, sparsity=groups, method="2-point"))[0]}
    if dense:
        jac_times["fd dense"] = timed(lambda: approx_derivative(F, y0, method="2-point"),
                                      repeat=1)[0]
    runs = {"adsim": dict(jac=jac), "fd+sparsity": dict(jac_sparsity=plan.pattern)}
    if dense:
        runs["fd dense"] = {}
    rows, solutions = [], {}
    for name, options in runs.items():
        sol, seconds = solve(rhs, y0, t_end, rtol, **options)
        solutions[name] = sol
        rows.append((N, 2 * N * N, name, seconds, jac_times[name], sol.njev, sol.nlu, sol.nfev))
    reference = solutions["fd+sparsity"].y[:, -1]
    for name, sol in solutions.items():
        gap = np.abs(sol.y[:, -1] - reference).max() / np.abs(reference).max()
        assert gap < 50 * rtol, f"{name}: final state differs by {gap:.2e} (relative)"
    assert plan.recordings == 1, "the forcing switch at t = 1.1 is computed by the replay"
    return rows, plan, setup


def run(grid=100, dense_grid=24, t_end=1.5, rtol=1e-4, seed=0, verbose=True):
    """Run the comparison; returns the table rows. Raises AssertionError if a
    self-check fails."""
    rng = np.random.default_rng(seed)
    rows, plan, setup = compare(grid, t_end, rtol, dense=False, rng=rng)
    if dense_grid:
        small, _, _ = compare(dense_grid, t_end, rtol, dense=True, rng=rng)
        rows = small + rows
    if verbose:
        print(f"plan on the {grid} x {grid} grid: {plan!r}")
        print(f"  record + detect + color: {setup:.3f} s "
              f"({', '.join(f'{k} {v:.3f} s' for k, v in plan.timings.items())}), "
              f"recorded {plan.recordings} time(s) (the forcing switch is replayed)")
        print()
        print("| grid | unknowns | Jacobian | BDF time (s) | one Jacobian (s) | njev | nlu "
              "| nfev |")
        print("|---:|---:|---|---:|---:|---:|---:|---:|")
        for N, n, name, seconds, jac_time, njev, nlu, nfev in rows:
            print(f"| {N} | {n} | {name} | {seconds:.2f} | {jac_time:.4f} | {njev} | {nlu} "
                  f"| {nfev} |")
        print("\nchecks passed: J v against central differences, final states agree")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grid", type=int, default=100, help="grid points per side")
    parser.add_argument("--dense-grid", type=int, default=24,
                        help="grid of the run that also tries dense finite differences (0: skip)")
    parser.add_argument("--t-end", type=float, default=1.5)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--quick", action="store_true", help="small grids")
    args = parser.parse_args(argv)
    if args.quick:
        args.grid, args.dense_grid = 20, 10
    run(args.grid, args.dense_grid, args.t_end, args.rtol)


if __name__ == "__main__":
    main()
