"""Newton–Krylov solve of the 2-D Bratu problem with exact Jacobian-vector products.

The Bratu problem -Δu = λ exp(u) on the unit square, u = 0 on the boundary
(Bratu 1914; the MINPACK-2 test collection, Averick et al. 1991), on a
k × k grid of spacing h = 1/(k + 1) with the 5-point stencil, scaled by h²:

    F(u)_ij = u_{i-1,j} + u_{i+1,j} + u_{i,j-1} + u_{i,j+1} - 4 u_ij + h² λ exp(u_ij) = 0,

with λ = 6 (below the turning point λ* ≈ 6.81), from u = 0. Each Newton step
solves J(u) du = -F(u) by GMRES, which needs only products J v:

* **adsim**: J v from ``adsim.jvp(F, u, v)`` — one tangent sweep of F's
  tape, exact to rounding — wrapped in a ``scipy.sparse.linalg.LinearOperator``;
* **differences**: the same Newton loop with J v ≈ (F(u + εv) - F(u)) / ε;
* **SciPy**: ``scipy.optimize.newton_krylov``, whose Jacobian-vector products
  are also finite differences (with its own forcing terms and line search).

All three use the same preconditioner, the exact inverse of the 5-point
Laplacian by discrete sine transforms (a fast Poisson solver), so GMRES
needs a handful of iterations per Newton step. The script checks itself:
adsim's J v against central differences, all three converge to
max |F| < 1e-11, and the solutions agree.

Run: ``python examples/bratu_newton_krylov.py [--quick] [--grid 100,300]``.

References
----------
.. [1] D. A. Knoll, D. E. Keyes, "Jacobian-free Newton–Krylov methods: a
   survey of approaches and applications", J. Comput. Phys. 193, 2004.
.. [2] S. C. Eisenstat, H. F. Walker, "Choosing the forcing terms in an
   inexact Newton method", SIAM J. Sci. Comput. 17(1), 1996.
"""
import argparse
import time

import numpy as np
import scipy.fft
import scipy.optimize
from scipy.sparse.linalg import LinearOperator, gmres

import adsim as ad

LAMBDA = 6.0
F_TOL = 1e-11                  # max |F| at convergence
GRIDS, QUICK_GRIDS = (100, 300), (32,)


def bratu(u, lam=LAMBDA):
    """The scaled residual F(u) on a k × k grid; u is flat (k² values)."""
    k = int(round(np.sqrt(u.shape[0])))
    U = np.reshape(u, (k, k))
    P = np.pad(U, 1, mode="constant")
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * U
    return np.reshape(lap + (lam / (k + 1) ** 2) * np.exp(U), (k * k,))


def poisson_preconditioner(k):
    """The inverse of the 5-point Laplacian (zero boundary values) as a
    LinearOperator: the orthonormal DST-I diagonalises it."""
    s = np.sin(np.pi * np.arange(1, k + 1) / (2.0 * (k + 1))) ** 2
    eig = -4.0 * (s[:, None] + s[None, :])

    def solve(v):
        V = np.reshape(v, (k, k))
        W = scipy.fft.dstn(scipy.fft.dstn(V, type=1, norm="ortho") / eig, type=1, norm="ortho")
        return W.reshape(-1)
    return LinearOperator((k * k, k * k), matvec=solve, dtype=np.float64)


def adsim_jacobian(F, u):
    """J(u) as a LinearOperator whose products are tangent sweeps."""
    return LinearOperator((u.size, u.size), matvec=lambda v: ad.jvp(F, u, v)[1], dtype=np.float64)


def difference_jacobian(F, u, Fu):
    """J(u) v by one-sided differences, step as in SciPy's KrylovJacobian."""
    def matvec(v):
        nv = np.linalg.norm(v)
        if nv == 0.0:
            return np.zeros_like(u)
        eps = np.sqrt(np.finfo(float).eps) * max(1.0, np.linalg.norm(u)) / nv
        return (F(u + eps * v) - Fu) / eps
    return LinearOperator((u.size, u.size), matvec=matvec, dtype=np.float64)


def newton_gmres(F, u0, jacobian, M, max_newton=30):
    """Inexact Newton: GMRES to the forcing tolerance eta_k (Eisenstat and
    Walker's choice 2, with safeguard) on J du = -F. Returns u and counts."""
    u = u0.copy()
    r = F(u)
    norm0 = norm_old = np.linalg.norm(r)
    eta, newton, krylov = 0.1, 0, 0
    while np.max(np.abs(r)) > F_TOL and newton < max_newton:
        counter = []
        du, info = gmres(jacobian(F, u, r), -r, rtol=eta, atol=0.1 * F_TOL, restart=30,
                         maxiter=10, M=M, callback=counter.append, callback_type="pr_norm")
        krylov += len(counter)
        u = u + du
        r = F(u)
        newton += 1
        norm = np.linalg.norm(r)
        eta_next = 0.9 * (norm / norm_old) ** 2
        if 0.9 * eta ** 2 > 0.1:
            eta_next = max(eta_next, 0.9 * eta ** 2)
        eta = max(min(0.1, eta_next), 0.5 * F_TOL / max(norm, 1e-300))   # no over-solving
        norm_old = norm
    return u, {"newton": newton, "krylov": krylov, "residual0": norm0}


class Counted:
    """F with a count of its evaluations."""

    def __init__(self, F):
        self.F, self.calls = F, 0

    def __call__(self, u):
        self.calls += 1
        return self.F(u)


def solve_all(k):
    """The three solvers on a k × k grid: {name: result dict}."""
    u0 = np.zeros(k * k)
    M = poisson_preconditioner(k)
    results = {}
    for name, jac in (("adsim jvp + GMRES", lambda F, u, r: adsim_jacobian(F, u)),
                      ("differences + GMRES", difference_jacobian)):
        F = Counted(bratu)                 # adsim records F's tape on the first J v (timed)
        t0 = time.perf_counter()
        u, counts = newton_gmres(F, u0, jac, M)
        seconds = time.perf_counter() - t0
        results[name] = dict(u=u, seconds=seconds, newton=counts["newton"],
                             krylov=counts["krylov"], f_evals=F.calls)
    F = Counted(bratu)
    newton = []
    t0 = time.perf_counter()
    u = scipy.optimize.newton_krylov(F, u0, method="gmres", inner_M=M, f_tol=F_TOL,
                                     callback=lambda x, f: newton.append(1))
    results["scipy newton_krylov"] = dict(u=u, seconds=time.perf_counter() - t0,
                                          newton=len(newton), krylov=None, f_evals=F.calls)
    for r in results.values():
        res = bratu(r["u"])
        r["residual_max"], r["residual_2"] = float(np.max(np.abs(res))), float(np.linalg.norm(res))
    return results


def check_jvp(k=8, seed=0):
    """adsim's J v against central differences of F (relative error)."""
    rng = np.random.default_rng(seed)
    u, v = rng.uniform(0.0, 1.0, k * k), rng.standard_normal(k * k)
    h = 1e-6
    fd = (bratu(u + h * v) - bratu(u - h * v)) / (2.0 * h)
    jv = ad.jvp(bratu, u, v)[1]
    return float(np.linalg.norm(jv - fd) / np.linalg.norm(fd))


def report(k, results):
    lines = [f"\n2-D Bratu, λ = {LAMBDA}, {k} × {k} grid (n = {k * k})",
             f"{'method':24s} {'Newton':>6s} {'GMRES':>6s} {'F evals':>8s} {'time [s]':>9s} "
             f"{'max |F|':>9s} {'|F|_2':>9s}"]
    for name, r in results.items():
        krylov = "–" if r["krylov"] is None else str(r["krylov"])
        lines.append(f"{name:24s} {r['newton']:6d} {krylov:>6s} {r['f_evals']:8d} "
                     f"{r['seconds']:9.3f} {r['residual_max']:9.1e} {r['residual_2']:9.1e}")
    print("\n".join(lines))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=f"grid {QUICK_GRIDS} only")
    p.add_argument("--grid", type=lambda s: tuple(int(a) for a in s.split(",")), default=None,
                   help=f"comma-separated grid sizes k (default {GRIDS})")
    args = p.parse_args(argv)
    grids = args.grid or (QUICK_GRIDS if args.quick else GRIDS)
    err = check_jvp()
    print(f"adsim J v vs central differences: relative error {err:.1e}")
    assert err < 1e-8, err
    out = {}
    for k in grids:
        results = solve_all(k)
        report(k, results)
        ref = results["adsim jvp + GMRES"]["u"]
        for name, r in results.items():
            assert r["residual_max"] <= F_TOL, f"{name}: max |F| = {r['residual_max']:.1e}"
            assert np.max(np.abs(r["u"] - ref)) < 1e-8, f"{name} found another solution"
        assert np.all(ref > 0.0) and np.max(ref) < 2.0, "not the lower-branch solution"
        out[k] = results
    return out


if __name__ == "__main__":
    main()
