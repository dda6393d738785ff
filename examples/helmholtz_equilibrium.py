"""Equilibrium of a mixed fluid: minimise the Helmholtz free energy.

The free energy of a mixture with amounts x (Baydin et al., JMLR 2018,
Section 4, after the Peng–Robinson equation of state), with R = T = 1:

    f(x) = R T sum_i x_i log(x_i / (1 - b'x))
           - x'Ax / (sqrt(8) b'x) log((1 + (1 + sqrt 2) b'x) / (1 + (1 - sqrt 2) b'x))

is minimised over x > 0 under mass balance E x = e: species i holds E[k, i]
atoms of element k, and the amount of each element is fixed. The first
element is in every species once, so sum(x) is fixed and b'x stays below 1
on the whole feasible set. ``scipy.optimize.minimize(method="trust-constr")``
gets the gradient from ``adsim.grad`` and Hessian-vector products from
``adsim.hessp`` (one tangent and one second-order adjoint sweep of the same
tape; no Hessian is formed).

The script checks itself: the constraint holds at the solution, adsim's
gradient and Hessian-vector product agree with central differences, and the
gradient at the solution is a combination of the constraint normals (KKT).

Run: ``python examples/helmholtz_equilibrium.py [--n 30] [--seed 0]``.
"""
import argparse
import math

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, minimize

import adsim as ad


def helmholtz(x, A, b, R=1.0, T=1.0):
    """The Helmholtz free energy of the mixture x (plain NumPy)."""
    bx = b @ x
    mix = R * T * np.sum(x * np.log(x / (1.0 - bx)))
    attraction = (x @ (A @ x)) / (math.sqrt(8.0) * bx)
    return mix - attraction * np.log((1.0 + (1.0 + math.sqrt(2.0)) * bx)
                                     / (1.0 + (1.0 - math.sqrt(2.0)) * bx))


def make_mixture(n, n_elements=3, seed=0):
    """Random symmetric A, covolumes b, element matrix E and a feasible x0.

    A = (M + M')/2 and b have entries uniform on (0, 1); E has one atom of
    element 0 in every species and 0-2 atoms of the others; x0 is uniform on
    (0.5, 1.5), scaled so that sum(x) = 0.9 / max(b), hence b'x <= 0.9 for
    every feasible x >= 0.
    """
    rng = np.random.default_rng(seed)
    M = rng.uniform(0.0, 1.0, (n, n))
    A = 0.5 * (M + M.T)
    b = rng.uniform(0.0, 1.0, n)
    E = rng.integers(0, 3, (n_elements, n)).astype(float)
    E[0] = 1.0
    x0 = rng.uniform(0.5, 1.5, n)
    x0 *= 0.9 / b.max() / x0.sum()
    return A, b, E, E @ x0, x0


def central_difference_gradient(f, x):
    steps = np.cbrt(np.finfo(float).eps) * np.maximum(np.abs(x), 1e-8)
    g = np.empty_like(x)
    for i, h in enumerate(steps):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2.0 * h)
    return g


def relative_error(got, want):
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def check_derivatives(grad, hessp, f, x, seed=0):
    """adsim's gradient and H v against central differences at x."""
    g = grad(x)
    g_fd = central_difference_gradient(f, x)
    assert relative_error(g, g_fd) < 1e-6, f"gradient vs differences: {relative_error(g, g_fd):.2e}"
    v = np.random.default_rng(seed).standard_normal(x.size)
    h = 1e-6 * np.min(x) / np.max(np.abs(v))       # stay inside x > 0
    hv_fd = (grad(x + h * v) - grad(x - h * v)) / (2.0 * h)
    hv = hessp(x, v)
    assert relative_error(hv, hv_fd) < 1e-5, f"H v vs differences: {relative_error(hv, hv_fd):.2e}"
    return relative_error(g, g_fd), relative_error(hv, hv_fd)


def solve(n=30, n_elements=3, seed=0, verbose=False):
    """Minimise f under E x = e, x > 0; returns a dict of results and checks."""
    A, b, E, e, x0 = make_mixture(n, n_elements, seed)

    def f(x):
        return helmholtz(x, A, b)

    grad = ad.grad(f)
    hessp = ad.hessp(f)
    checks_start = check_derivatives(grad, hessp, f, x0, seed)
    res = minimize(f, x0, method="trust-constr", jac=grad, hessp=hessp,
                   constraints=[LinearConstraint(E, e, e)],
                   bounds=Bounds(np.full(n, 1e-12), np.full(n, np.inf), keep_feasible=True),
                   options={"gtol": 1e-10, "xtol": 1e-14, "maxiter": 2000,
                            "verbose": 2 if verbose else 0})
    x = res.x
    balance = float(np.max(np.abs(E @ x - e)) / np.max(np.abs(e)))
    assert balance < 1e-9, f"mass balance violated: relative residual {balance:.2e}"
    assert np.all(x > 0) and b @ x < 1.0, "the solution left the domain of f"
    assert f(x) < f(x0), "no decrease of the free energy"
    checks_end = check_derivatives(grad, hessp, f, x, seed + 1)
    g = grad(x)
    lam, *_ = np.linalg.lstsq(E.T, g, rcond=None)      # KKT: g = E' lambda at a minimum
    kkt = relative_error(E.T @ lam, g)
    assert kkt < 1e-6, f"not stationary: gradient off the constraint normals by {kkt:.2e}"
    return {"x": x, "f0": float(f(x0)), "f": float(f(x)), "balance": balance, "kkt": kkt,
            "gradient_error": (checks_start[0], checks_end[0]),
            "hvp_error": (checks_start[1], checks_end[1]), "iterations": res.nit,
            "status": res.status, "message": res.message}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=30, help="number of species")
    p.add_argument("--elements", type=int, default=3, help="number of elements")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", action="store_true", help="print the optimiser's iterations")
    args = p.parse_args(argv)
    r = solve(args.n, args.elements, args.seed, args.verbose)
    print(f"n = {args.n} species, {args.elements} elements: f {r['f0']:.6f} -> {r['f']:.6f} "
          f"in {r['iterations']} iterations ({r['message']})")
    print(f"mass balance residual {r['balance']:.1e}, KKT residual {r['kkt']:.1e}")
    print("gradient vs central differences: {:.1e} (start), {:.1e} (solution)".format(
        *r["gradient_error"]))
    print("Hessian-vector product vs differences of the gradient: {:.1e}, {:.1e}".format(
        *r["hvp_error"]))
    return r


if __name__ == "__main__":
    main()
