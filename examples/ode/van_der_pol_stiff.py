"""Gradients through SciPy's implicit solvers (Radau, BDF): Van der Pol with mu = 1000.

    x' = v,      v' = mu (1 - x^2) v - x,      x(0) = 2, v(0) = 0.

On the slow branches of the relaxation oscillation the Jacobian has an
eigenvalue near -mu (x^2 - 1), some -3000 at the start: an explicit method
would need steps below 1e-3, about 10^6 of them up to t = 1000, where the
implicit methods take a few hundred. The first jump (x from 1 to -2 in a
time of order 1/mu) comes near t = 807.

``adsim.integrate.solve_ivp(..., method="Radau")`` (or "BDF") runs SciPy's
steps with the exact Jacobian ``adsim.jacobian(fun)`` in the Newton
iterations; inside ``adsim.grad`` the reverse sweep goes back through every
Newton iteration, every linear solve (by a transposed solve) and the
Jacobian itself (second derivatives of ``fun``). The gradient of
``L = sum_j x(t_j)`` with respect to ``(mu, x0, v0)`` is compared with the
forward sensitivities of the exact solution (``sensitivity_reference.py``,
SciPy's Radau at a tight tolerance on the augmented system), component by
component: the components differ in scale by four orders.

The gradient is computed both ways docs/integrate.md describes ("Step
sizes held or followed"), and the two show where each fails:

* step sizes held (the default): before the first jump (``--quick``,
  outputs up to t = 300) all three derivatives agree with the exact ones to
  3e-5 or better, also the one with respect to ``v0``, which acts only through
  the initial transient onto the slow branch (it lasts about 1/(3 mu)).
  Across the jump Radau's are off by about 1e-3 at this tolerance (the
  jump's time moves with the parameters, the steps sized for it do not);
  BDF's are Radau's (BDF's own held tangent was wrong altogether here, so
  by default method="BDF" takes its derivatives from a Radau solve at the
  same tolerances, docs/integrate.md, "BDF's default derivatives");
* step sizes followed (``follow_steps=True``): the steps move with the
  jump, and the derivatives with respect to ``mu`` and ``x0`` agree to about
  the tolerance across it. The one with respect to ``v0`` does not (0.08
  to 0.3 for Radau, 1.6 for BDF, before the jump too): the steps sized for the
  transient follow ``v0`` through the controller, and that derivative is
  not the solution's.

The script checks the followed derivatives with respect to ``mu`` and
``x0``, and prints both.

Run: ``python examples/ode/van_der_pol_stiff.py [--quick] [--rtol 1e-7]``

References
----------
E. Hairer and G. Wanner, "Solving Ordinary Differential Equations II",
2nd ed., Springer, 1996, sec. IV.8 (Radau IIA) and IV.10 (Van der Pol).
L. F. Shampine and M. W. Reichelt, "The MATLAB ODE suite", SIAM J. Sci.
Comput. 18(1), 1-22, 1997 (the NDF/BDF method).
"""
import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from sensitivity_reference import chain, forward_sensitivities

THETA = np.array([1000.0, 2.0, 0.0])        # mu, x0, v0
METHODS = ("Radau", "BDF")


def van_der_pol(t, y, mu):
    return [y[1], mu[0] * (1.0 - y[0] ** 2) * y[1] - y[0]]


def van_der_pol_jacobian(t, y, mu):
    """For SciPy's own solve, so that it takes the steps adsim takes."""
    return np.array([[0.0, 1.0], [-2.0 * mu[0] * y[0] * y[1] - 1.0, mu[0] * (1.0 - y[0] ** 2)]])


def initial_state_and_parameters(theta):
    return theta[1:], theta[:1]


def loss_of(outputs):
    return np.sum(outputs[0])


class Setup:
    def __init__(self, times, rtol):
        self.times = np.asarray(times, dtype=float)
        self.tolerances = dict(rtol=rtol, atol=rtol * 1e-2)

    def solve(self, theta, method, solver=solve_ivp, **options):
        y0, mu = initial_state_and_parameters(theta)
        return solver(van_der_pol, (0.0, self.times[-1]), y0, method=method, t_eval=self.times,
                      args=(mu,), **self.tolerances, **options)

    def loss(self, method, follow_steps=False):
        return lambda theta: loss_of(self.solve(theta, method, follow_steps=follow_steps).y)

    @property
    def reference_rtol(self):
        return min(1e-9, self.tolerances["rtol"] / 100)

    def reference_gradient(self, theta):
        rtol = self.reference_rtol
        y, S = forward_sensitivities(van_der_pol, (0.0, self.times[-1]),
                                     initial_state_and_parameters, theta, self.times,
                                     method="Radau", rtol=rtol, atol=rtol / 10)
        return chain(loss_of, y, S)


def compare(setup, method, reference, verbose=True):
    held = adsim.grad(setup.loss(method))(THETA)
    value_and_grad = adsim.value_and_grad(setup.loss(method, follow_steps=True))
    t0 = time.perf_counter()
    value_and_grad(THETA)
    t_record = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, g = value_and_grad(THETA)
    t_grad = time.perf_counter() - t0
    sol = setup.solve(THETA, method)
    t0 = time.perf_counter()
    scipy_sol = setup.solve(THETA, method, solver=scipy_solve_ivp, jac=van_der_pol_jacobian)
    t_scipy = time.perf_counter() - t0
    counts = (sol.nfev, sol.njev, sol.nlu)
    out = dict(method=method, gradient=g, errors=np.abs(g - reference) / np.abs(reference),
               held_errors=np.abs(held - reference) / np.abs(reference),
               counts=counts, scipy_counts=(scipy_sol.nfev, scipy_sol.njev, scipy_sol.nlu),
               output_error=float(np.max(np.abs(sol.y - scipy_sol.y))), t_record=t_record,
               t_grad=t_grad, t_scipy=t_scipy)
    if verbose:
        print(f"  {method:5s} nfev {counts[0]}, njev {counts[1]}, nlu {counts[2]} (SciPy with the "
              f"exact jac: {out['scipy_counts']}; outputs differ by {out['output_error']:.0e})")
        print(f"        value and gradient {1e3 * t_grad:.0f} ms (first call, recording: "
              f"{1e3 * t_record:.0f} ms); SciPy's forward solve {1e3 * t_scipy:.0f} ms")
        print(f"        dL/d(mu, x0, v0), step sizes followed: "
              f"{np.array2string(g, precision=8)}, relative errors {_short(out['errors'])}")
        print(f"                          step sizes held:     "
              f"{np.array2string(held, precision=8)}, relative errors "
              f"{_short(out['held_errors'])}")
    return out


def _short(errors):
    return "[" + " ".join(f"{e:.1e}" for e in errors) + "]"


def run(quick=False, rtol=1e-7, verbose=True):
    times = (100.0, 200.0, 300.0) if quick else (250.0, 500.0, 750.0, 1000.0)
    setup = Setup(times, rtol)
    t0 = time.perf_counter()
    reference = setup.reference_gradient(THETA)
    t_ref = time.perf_counter() - t0
    if verbose:
        print(f"Van der Pol, mu = {THETA[0]:g}, L = sum of x at t = {times}, "
              f"rtol = {rtol:g}, atol = {rtol * 1e-2:g}")
        print(f"  forward sensitivities (SciPy Radau, rtol {setup.reference_rtol:g}, "
              f"{t_ref:.1f} s): {np.array2string(reference, precision=8)}")
    results = [compare(setup, method, reference, verbose) for method in METHODS]
    return dict(results=results, reference=reference, rtol=rtol)


def check(out):
    for r in out["results"]:
        assert np.all(r["errors"][:2] < 1e3 * out["rtol"]), \
            f"{r['method']}: dL/d(mu, x0) far from the forward sensitivities"
        assert r["counts"] == r["scipy_counts"], f"{r['method']}: not SciPy's steps"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a shorter run, for tests")
    parser.add_argument("--rtol", type=float, default=1e-7, help="rtol of the solvers")
    args = parser.parse_args(argv)
    out = run(quick=args.quick, rtol=args.rtol)
    check(out)
    return out


if __name__ == "__main__":
    main()
