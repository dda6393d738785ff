"""Regularised curve fitting with ``scipy.optimize.least_squares`` and a
sparse adsim Jacobian.

A positive signal lambda(t) is observed with noise at n points; its log
``p = log(lambda)`` is estimated by penalised nonlinear least squares

    r(p) = [ (exp(p_i) - y_i) / sigma ,  sqrt(beta) (p_{i-1} - 2 p_i + p_{i+1}) ]

(n data residuals and n - 2 smoothness residuals). The Jacobian is banded:
a diagonal block over a tridiagonal one, 3 colors for any n. The residual is
plain NumPy; ``sparse_jacobian_plan`` gives ``jac`` for ``least_squares``
(method "trf" with the LSMR trust-region solver, which needs only products
with the sparse Jacobian).

The script checks itself: the adsim fit and a fit with SciPy's grouped
finite differences (``jac_sparsity``) reach the same cost and solution, the
first-order optimality ``J^T r`` vanishes, and ``J v`` matches central
differences. It prints both fits' timings.

Run: ``python examples/sparse/least_squares_fit.py [--points 20000]``
(``--quick``: 500 points).

References
----------
.. [1] P. H. C. Eilers, "A perfect smoother", Analytical Chemistry 75(14),
   3631-3636, 2003 (difference penalties for smoothing).
"""
import argparse
import time
import timeit

import numpy as np
from scipy.optimize import least_squares
from scipy.optimize._numdiff import approx_derivative, group_columns

from adsim.sparse.api import sparse_jacobian_plan


def make_data(n, rng, sigma=0.05):
    t = np.linspace(0.0, 1.0, n)
    truth = np.exp(np.sin(6 * np.pi * t) * np.exp(-t) - 0.5 * t)
    return t, truth, truth + sigma * rng.standard_normal(n)


def residuals(p, y, sigma, beta):
    misfit = (np.exp(p) - y) / sigma
    smooth = np.sqrt(beta) * (p[:-2] - 2.0 * p[1:-1] + p[2:])
    return np.concatenate([misfit, smooth])


def _best(fn, repeat=5):
    """Seconds per call of ``fn``, the best of a few samples."""
    number = max(1, int(0.02 / max(timeit.timeit(fn, number=1), 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def fit(jac_options, p0, args):
    t0 = time.perf_counter()
    result = least_squares(residuals, p0, args=args, method="trf", tr_solver="lsmr",
                           tr_options={"atol": 1e-12, "btol": 1e-12},
                           xtol=1e-12, ftol=1e-12, gtol=1e-10, **jac_options)
    return result, time.perf_counter() - t0


def run(points=20000, beta=None, seed=0, verbose=True):
    """Fit with adsim and with finite differences; returns the results.
    Raises AssertionError when a self-check fails."""
    rng = np.random.default_rng(seed)
    sigma = 0.05
    beta = (points / 50.0) ** 4 / points if beta is None else beta
    t, truth, y = make_data(points, rng, sigma)
    args = (y, sigma, beta)
    p0 = np.log(np.maximum(y, 0.05))
    t0 = time.perf_counter()
    plan = sparse_jacobian_plan(residuals, p0, *args)
    setup = time.perf_counter() - t0
    assert plan.ncolors == 3, plan

    v = rng.standard_normal(points)
    fd = (residuals(p0 + 1e-6 * v, *args) - residuals(p0 - 1e-6 * v, *args)) / 2e-6
    error = np.linalg.norm(plan(p0, *args) @ v - fd) / np.linalg.norm(fd)
    assert error < 1e-7, f"J v differs from central differences by {error:.2e}"

    ours, ours_time = fit({"jac": plan}, p0, args)
    theirs, theirs_time = fit({"jac_sparsity": plan.pattern}, p0, args)
    groups = (plan.pattern, group_columns(plan.pattern))
    one = {"adsim jac": _best(lambda: plan(p0, *args)),
           "fd jac_sparsity": _best(lambda: approx_derivative(residuals, p0, sparsity=groups,
                                                              args=args))}
    assert ours.success and theirs.success
    assert abs(ours.cost - theirs.cost) <= 1e-6 * ours.cost, (ours.cost, theirs.cost)
    gradient = plan(ours.x, *args).T @ ours.fun
    assert np.abs(gradient).max() <= 1e-6 * (1.0 + ours.cost), np.abs(gradient).max()
    gap = np.abs(np.exp(ours.x) - np.exp(theirs.x)).max()
    assert gap < 1e-4, f"the two fits differ by {gap:.1e}"
    rms = float(np.sqrt(np.mean((np.exp(ours.x) - truth) ** 2)))
    assert rms < sigma, f"the fit is further from the truth ({rms:.3f}) than the noise"
    assert plan.recordings == 1

    rows = [("adsim jac", ours_time, one["adsim jac"], ours.nfev, ours.njev, ours.cost),
            ("fd jac_sparsity", theirs_time, one["fd jac_sparsity"], theirs.nfev, theirs.njev,
             theirs.cost)]
    if verbose:
        print(f"{plan!r}\n  record + detect + color: {setup:.3f} s")
        print(f"\n{points} points, beta = {beta:.3g}; rms error against the truth {rms:.4f} "
              f"(noise {sigma})\n")
        print("| Jacobian | least_squares (s) | one Jacobian (s) | nfev | njev | cost |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, seconds, one_jac, nfev, njev, cost in rows:
            print(f"| {name} | {seconds:.2f} | {one_jac:.5f} | {nfev} | {njev} | {cost:.6f} |")
        print("\n(least_squares time is mostly LSMR iterations, the same for both)")
        print(f"\nchecks passed: J v against central differences ({error:.1e}), same optimum as "
              f"finite differences, |J^T r| = {np.abs(gradient).max():.1e}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=20000)
    parser.add_argument("--quick", action="store_true", help="500 points")
    args = parser.parse_args(argv)
    run(500 if args.quick else args.points)


if __name__ == "__main__":
    main()
