"""Newton–Krylov minimisation of the extended Rosenbrock function with SciPy.

The extended Rosenbrock function (Moré, Garbow and Hillstrom, ACM TOMS 7(1),
1981, problem 21) of n = 10^4 and 10^5 variables,

    f(x) = sum_{i=1}^{n/2} 100 (x_{2i} - x_{2i-1}^2)^2 + (1 - x_{2i-1})^2,

from the standard start (-1.2, 1, -1.2, 1, ...), minimised by
``scipy.optimize.minimize`` three ways:

* ``method="trust-krylov"`` (GLTR Lanczos trust-region subproblems) and
  ``method="Newton-CG"`` (truncated Newton), both with ``jac=ad.grad(f)`` and
  ``hessp=ad.hessp(f)``: each Krylov iteration is one Hessian-vector product,
  one tangent and one second-order adjoint sweep of f's tape (no Hessian is
  formed);
* ``method="L-BFGS-B"`` with ``jac=ad.grad(f)`` (first order).

It prints iterations, evaluations and time (in total and inside adsim's
derivative calls) per method and size, and plots f against iterations and
time. The script checks itself: gradient and Hessian-vector product against
central differences, and every method reaches x = (1, ..., 1).

Run: ``python examples/newton_krylov.py [--quick] [--sizes 10000,100000]
[--plot docs/figures/newton_krylov.png]`` (the full run writes the plot
there by default; ``--quick`` uses small n and plots only when asked).

References
----------
.. [1] J. Nocedal, S. J. Wright, *Numerical Optimization*, 2nd ed., Springer
   2006, chapters 7.1 (Newton-CG) and 7.2 (L-BFGS).
.. [2] N. I. M. Gould, S. Lucidi, M. Roma, Ph. L. Toint, "Solving the
   trust-region subproblem using the Lanczos method", SIAM J. Optim. 9(2), 1999.
"""
import argparse
import time
from pathlib import Path

import numpy as np
import scipy.optimize

import adsim as ad

SIZES, QUICK_SIZES = (10 ** 4, 10 ** 5), (100, 1000)
FIGURE = Path(__file__).resolve().parent.parent / "docs" / "figures" / "newton_krylov.png"
X_TOL = 1e-4                    # max |x - 1| at the solution


def rosenbrock(x):
    """Extended Rosenbrock: n/2 independent pairs (x_{2i-1}, x_{2i})."""
    odd, even = x[0::2], x[1::2]
    return np.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


def start(n):
    return np.tile([-1.2, 1.0], n // 2)


class Timed:
    """A callable that counts its calls and the seconds spent in them."""

    def __init__(self, fn):
        self.fn, self.calls, self.seconds = fn, 0, 0.0

    def __call__(self, *args):
        t0 = time.perf_counter()
        try:
            return self.fn(*args)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - t0


METHODS = {                     # method: (uses hessp, options)
    "trust-krylov": (True, {"gtol": 1e-5}),
    "Newton-CG": (True, {"xtol": 1e-9}),
    "L-BFGS-B": (False, {"gtol": 1e-8, "ftol": 1e-15, "maxiter": 10000}),
}


def minimise(method, n):
    """One run: a dict of counts, times and the history of f."""
    uses_hessp, options = METHODS[method]
    fun, jac = Timed(rosenbrock), Timed(ad.grad(rosenbrock))
    hessp = Timed(ad.hessp(rosenbrock)) if uses_hessp else None
    history = []
    t0 = time.perf_counter()

    def callback(intermediate_result):
        history.append((time.perf_counter() - t0, float(intermediate_result.fun)))
    res = scipy.optimize.minimize(fun, start(n), jac=jac, hessp=hessp, method=method,
                                  options=options, callback=callback)
    seconds = time.perf_counter() - t0
    derivatives = jac.seconds + (hessp.seconds if hessp else 0.0)
    return dict(method=method, n=n, success=bool(res.success), message=str(res.message),
                iterations=int(res.nit), f_evals=fun.calls, grad_evals=jac.calls,
                hessp_calls=hessp.calls if hessp else 0, seconds=seconds,
                derivative_seconds=derivatives, f=float(res.fun),
                x_error=float(np.max(np.abs(res.x - 1.0))), history=history)


def check_derivatives(n=10, seed=0):
    """Relative errors of ad.grad against central differences of f, and of
    ad.hessp against central differences of ad.grad."""
    rng = np.random.default_rng(seed)
    x, v = start(n) + rng.uniform(-0.1, 0.1, n), rng.standard_normal(n)
    h = 1e-5
    g = ad.grad(rosenbrock)(x)
    fd_g = np.array([(rosenbrock(x + h * e) - rosenbrock(x - h * e)) / (2 * h) for e in np.eye(n)])
    fd_hv = (ad.grad(rosenbrock)(x + h * v) - ad.grad(rosenbrock)(x - h * v)) / (2 * h)
    hv = ad.hessp(rosenbrock)(x, v)
    return (float(np.linalg.norm(g - fd_g) / np.linalg.norm(fd_g)),
            float(np.linalg.norm(hv - fd_hv) / np.linalg.norm(fd_hv)))


def table(runs):
    head = (f"{'n':>7s} {'method':13s} {'iter':>5s} {'f evals':>7s} {'grads':>6s} {'H v':>6s} "
            f"{'time [s]':>9s} {'in adsim':>9s} {'f':>9s} {'max|x-1|':>9s}")
    lines = [head, "-" * len(head)]
    for r in runs:
        lines.append(f"{r['n']:7d} {r['method']:13s} {r['iterations']:5d} {r['f_evals']:7d} "
                     f"{r['grad_evals']:6d} {r['hessp_calls']:6d} {r['seconds']:9.3f} "
                     f"{r['derivative_seconds']:9.3f} {r['f']:9.1e} {r['x_error']:9.1e}")
    return "\n".join(lines)


def plot(runs, path):
    """f - f* (f* = 0) against iterations (left) and seconds (right)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    colours = {"trust-krylov": "C0", "Newton-CG": "C2", "L-BFGS-B": "C3"}
    sizes = sorted({r["n"] for r in runs})
    styles = dict(zip(sizes, ["-", "--", ":", "-."]))
    for r in runs:
        if not r["history"]:
            continue
        t, fx = np.array(r["history"]).T
        fx = np.maximum(fx, 1e-30)
        label = f"{r['method']}, n = {r['n']:,}"
        kw = dict(color=colours[r["method"]], ls=styles[r["n"]], label=label)
        axes[0].semilogy(np.arange(1, len(fx) + 1), fx, **kw)
        axes[1].loglog(t, fx, **kw)
    axes[0].set_xlabel("iteration")
    axes[1].set_xlabel("seconds since the start")
    for ax in axes:
        ax.set_ylabel("f(x_k)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Extended Rosenbrock: Newton–Krylov with adsim H·v vs L-BFGS-B")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help=f"n in {QUICK_SIZES}")
    p.add_argument("--sizes", type=lambda s: tuple(int(a) for a in s.split(",")), default=None,
                   help=f"comma-separated even sizes n (default {SIZES})")
    p.add_argument("--plot", default=None,
                   help=f"where to save the convergence plot (default {FIGURE} unless --quick)")
    args = p.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    g_err, hv_err = check_derivatives()
    print(f"ad.grad vs central differences: {g_err:.1e}; ad.hessp vs differences of the "
          f"gradient: {hv_err:.1e}")
    assert g_err < 1e-8 and hv_err < 1e-7, (g_err, hv_err)
    runs = []
    for n in sizes:
        for method in METHODS:
            r = minimise(method, n)
            runs.append(r)
            assert r["success"], f"{method}, n={n}: {r['message']}"
            assert r["x_error"] < X_TOL, f"{method}, n={n}: max |x - 1| = {r['x_error']:.1e}"
    print(table(runs))
    path = args.plot or (None if args.quick else FIGURE)
    if path:
        print(f"wrote {plot(runs, path)}")
    return runs


if __name__ == "__main__":
    main()
