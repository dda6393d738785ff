"""Discrete adjoint of Dormand-Prince (RK45, DOP853) against SciPy's forward sensitivities.

The Brusselator, a two-species reaction with a limit cycle for B > 1 + A^2,

    x' = A + x^2 y - (B + 1) x,      y' = B x - x^2 y,

integrated by ``adsim.integrate.solve_ivp`` with the adaptive Dormand-Prince
pairs of SciPy: RK45 (5(4), Shampine's interpolant) and DOP853 (8(5,3)).
The loss ``L = sum_j (x(t_j)^2 + y(t_j)^2) / 2`` over the output times is
differentiated with respect to ``theta = (A, B, x0, y0)`` by one reverse
sweep: the discrete adjoint of the steps SciPy takes, with their
accept/reject decisions and their sizes (the step-size controller steers
the steps and passes no derivative).

Two references, two meanings:

* central differences of the same adaptive solver: they also differentiate
  its step-size control, which the adjoint holds fixed, so the two agree to
  about the tolerance;
* the forward sensitivity equations ``S' = f_y S + f_p``, integrated with
  the state by ``scipy.integrate.solve_ivp`` (DOP853, rtol 1e-12): the
  derivative of the exact ODE solution. The adjoint differs from it by the
  integration error, and converges to it as rtol shrinks.

Run: ``python examples/ode/brusselator_adjoint.py [--quick] [--rtol 1e-8]``

References
----------
J. R. Dormand and P. J. Prince, "A family of embedded Runge-Kutta formulae",
J. Comput. Appl. Math. 6(1), 19-26, 1980.
E. Hairer, S. P. Norsett and G. Wanner, "Solving Ordinary Differential
Equations I", 2nd ed., Springer, 1993, sec. II.4-II.6 (the Brusselator,
step-size control, dense output).
"""
import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp
from sensitivity_reference import (central_differences, chain, forward_sensitivities,
                                   relative_error)

THETA = np.array([1.0, 3.0, 1.5, 3.0])       # A, B, x0, y0
NAMES = ("A", "B", "x0", "y0")
METHODS = ("RK45", "DOP853")


def brusselator(t, y, p):
    x, v = y[0], y[1]
    x2v = x * x * v
    return [p[0] + x2v - (p[1] + 1.0) * x, p[1] * x - x2v]


def initial_state_and_parameters(theta):
    return theta[2:], theta[:2]


def loss_of(outputs):
    return 0.5 * np.sum(outputs ** 2)


class Setup:
    """Output times on ``(0, t_end]`` and the loss of ``theta`` for a method
    and tolerance."""

    def __init__(self, t_end=20.0, n_out=40):
        self.t_end = t_end
        self.times = np.linspace(t_end / n_out, t_end, n_out)

    def solve(self, theta, method, rtol, solver=solve_ivp):
        y0, p = initial_state_and_parameters(theta)
        return solver(brusselator, (0.0, self.t_end), y0, method=method, t_eval=self.times,
                      args=(p,), rtol=rtol, atol=rtol)

    def loss(self, method, rtol):
        return lambda theta: loss_of(self.solve(theta, method, rtol).y)

    def reference_gradient(self, theta):
        y, S = forward_sensitivities(brusselator, (0.0, self.t_end),
                                     initial_state_and_parameters, theta, self.times)
        return chain(loss_of, y, S)


def compare(setup, method, rtol, reference, verbose=True):
    """Gradient by adsim vs the references; times against SciPy's forward solve."""
    value_and_grad = adsim.value_and_grad(setup.loss(method, rtol))
    value_and_grad(THETA)                                   # records the tape
    t0 = time.perf_counter()
    _, g = value_and_grad(THETA)
    t_grad = time.perf_counter() - t0
    t0 = time.perf_counter()
    nfev = setup.solve(THETA, method, rtol, solver=scipy_solve_ivp).nfev
    t_scipy = time.perf_counter() - t0
    fd = central_differences(setup.loss(method, rtol), THETA)
    out = dict(method=method, rtol=rtol, gradient=g, nfev=nfev, t_grad=t_grad,
               t_scipy=t_scipy, fd_error=relative_error(g, fd),
               sens_error=relative_error(g, reference))
    if verbose:
        print(f"  {method:6s} rtol = atol = {rtol:.0e}: {nfev} evaluations; value and gradient "
              f"{1e3 * t_grad:.1f} ms, SciPy's forward solve {1e3 * t_scipy:.1f} ms")
        print(f"         dL/d(A, B, x0, y0) = {np.array2string(g, precision=8)}")
        print(f"         relative error vs central differences of the solver "
              f"{out['fd_error']:.1e}, vs forward sensitivities {out['sens_error']:.1e}")
    return out


def run(quick=False, rtol=1e-8, verbose=True):
    setup = Setup(10.0, 20) if quick else Setup()
    sweep_rtols = (1e-5, 1e-8) if quick else (1e-5, 1e-7, 1e-9, 1e-11)
    t0 = time.perf_counter()
    reference = setup.reference_gradient(THETA)
    t_ref = time.perf_counter() - t0
    if verbose:
        print(f"Brusselator on [0, {setup.t_end:g}], {setup.times.size} outputs, "
              f"L = sum of (x^2 + y^2) / 2 at the outputs")
        print(f"  forward sensitivities (SciPy DOP853, rtol 1e-12, {t_ref:.2f} s): "
              f"{np.array2string(reference, precision=8)}")
    results = [compare(setup, method, rtol, reference, verbose) for method in METHODS]
    sweep = {method: [relative_error(adsim.grad(setup.loss(method, r))(THETA), reference)
                      for r in sweep_rtols] for method in METHODS}
    if verbose:
        print("  relative error vs forward sensitivities as rtol = atol shrinks:")
        print("    rtol    " + "".join(f"{r:>9.0e}" for r in sweep_rtols))
        for method, errors in sweep.items():
            print(f"    {method:7s} " + "".join(f"{e:9.1e}" for e in errors))
    return dict(results=results, reference=reference, sweep_rtols=sweep_rtols, sweep=sweep)


def check(out):
    for r in out["results"]:
        # differences of the solver also differentiate its step-size control,
        # which the adjoint holds fixed (docs/integrate.md): both lie within
        # about the tolerance of the exact derivative (RK45 at 1e-8: 2.2e-6)
        assert r["fd_error"] < 1e3 * r["rtol"], \
            f"{r['method']}: adjoint disagrees with central differences"
        assert r["sens_error"] < 1e3 * r["rtol"], \
            f"{r['method']}: adjoint far from the forward sensitivities"
    for method, errors in out["sweep"].items():
        assert all(b < a / 10 for a, b in zip(errors, errors[1:])), \
            f"{method}: the error does not shrink with the tolerance"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a shorter run, for tests")
    parser.add_argument("--rtol", type=float, default=1e-8, help="rtol (= atol) of the solver")
    args = parser.parse_args(argv)
    out = run(quick=args.quick, rtol=args.rtol)
    check(out)
    return out


if __name__ == "__main__":
    main()
