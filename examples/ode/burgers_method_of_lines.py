"""A method-of-lines PDE through ``solve_ivp`` (RK45) under a memory budget: Burgers' equation.

The 1-D viscous Burgers equation of ``python -m adsim.demo``, with a
spatially varying viscosity, periodic on [0, 1):

    u_t + (u^2 / 2)_x = (kappa(x) u_x)_x,

discretised by central differences on N points (``adsim.demo.rhs``) and
integrated by ``adsim.integrate.solve_ivp`` with SciPy's adaptive RK45, the
step size limited by the stiffness of the diffusion (explicit stability).
The loss compares u with observed profiles at a few output times; its
gradient with respect to the viscosity field and the initial condition (2N
parameters) is one reverse sweep through all the steps. With ``t_eval`` the
steps between output times are reversed by online checkpointing, and
``memory_limit=`` bounds what that adds to the sweep, whatever the number of
steps. The budget changes the schedule (how many snapshots, how many steps
run twice), never the result: the script checks that the gradient under
the budget equals the one with 4 snapshots per interval (three times the
recomputation), and the gradient against central differences of the solver
along a random direction.

A budget also holds the step's tapes: a step that takes another branch
(a rejected attempt, the last step clipped to an output time) is recorded
again and kept as a variant while the budget allows. A budget barely above
the smallest one keeps a single variant and records again at each change,
several times slower; give the budget room for a few step tapes. (On 128
points a step tape takes about 0.3 MB; with ``memory_limit="0.7MB"`` the
gradient takes ten times as long as with "2MB".)

The derivative holds the step sizes fixed (adsim's default). On 128 points
RK45's steps are limited by accuracy; on 256 points they sit at the
explicit stability limit of the diffusion, where the step-size sequence
reacts to perturbations of 1e-12 (the number of steps varies from one to the
next). There a derivative that followed the step sizes
(``follow_steps=True``) would vary wildly between neighbouring points (a
directional derivative of 5e2 at one point, -1e-1 at a point 1e-9 away);
held, it agrees with central differences of the solver to 1e-4.

``examples/ode/burgers_adjoint.py`` runs the same problem with a fixed-step
RK4 in ``adsim.checkpoint_loop``: with the number of steps known ahead, the
offline Revolve schedule, 10^5 steps in 100 MB.

Run: ``python examples/ode/burgers_method_of_lines.py [--quick] [--points 128]
[--t-end 1.0] [--memory-limit 2MB]``
"""
import argparse
import time

import numpy as np

import adsim
from adsim.demo import rhs, setup
from adsim.integrate import solve_ivp

N_OUTPUTS = 4
TOL = dict(rtol=1e-6, atol=1e-8)


def burgers(t, u, kappa, dx):
    return rhs(u, kappa, dx)


class Problem:
    """Grid, initial state, viscosity and observed profiles (a shifted sine
    travelling at speed 0.5) at ``N_OUTPUTS`` times on ``(0, t_end]``."""

    def __init__(self, points, t_end):
        self.x, self.dx, self.u0, self.kappa, _ = setup(points)
        self.times = np.linspace(t_end / N_OUTPUTS, t_end, N_OUTPUTS)
        self.observed = np.stack([np.sin(2 * np.pi * (self.x - 0.05 - 0.5 * t)) + 0.5
                                  for t in self.times], axis=1)

    def solve(self, kappa, u0, **checkpointing):
        return solve_ivp(burgers, (0.0, self.times[-1]), u0, t_eval=self.times,
                         args=(kappa, self.dx), **TOL, **checkpointing)

    def loss(self, **checkpointing):
        def loss(kappa, u0):
            u = self.solve(kappa, u0, **checkpointing).y
            return 0.5 * np.sum((u - self.observed) ** 2) * self.dx
        return loss


def smooth_random(x, rng, modes=5):
    """A random combination of the first Fourier modes on the grid ``x``."""
    k = np.arange(1, modes + 1)[:, None]
    a, b = rng.standard_normal((2, modes, 1))
    return np.sum(a * np.cos(2 * np.pi * k * x) + b * np.sin(2 * np.pi * k * x), axis=0)


def directional_check(problem, g_kappa, g_u0, seed=0, h=1e-5):
    """Relative difference of the adjoint's directional derivative and central
    differences of the solver along a random smooth direction."""
    rng = np.random.default_rng(seed)
    d_kappa = 0.1 * smooth_random(problem.x, rng) * problem.kappa
    d_u0 = 0.01 * smooth_random(problem.x, rng)
    loss = problem.loss()
    fd = (loss(problem.kappa + h * d_kappa, problem.u0 + h * d_u0)
          - loss(problem.kappa - h * d_kappa, problem.u0 - h * d_u0)) / (2 * h)
    ad = g_kappa @ d_kappa + g_u0 @ d_u0
    return abs(ad - fd) / abs(fd)


def run(points=128, t_end=1.0, memory_limit="2MB", verbose=True):
    problem = Problem(points, t_end)
    stats = []
    budgeted = adsim.value_and_grad(problem.loss(memory_limit=memory_limit, stats=stats),
                                    argnums=(0, 1))
    t0 = time.perf_counter()
    value, (g_kappa, g_u0) = budgeted(problem.kappa, problem.u0)
    t_grad = time.perf_counter() - t0
    t0 = time.perf_counter()
    sol = problem.solve(problem.kappa, problem.u0)
    t_plain = time.perf_counter() - t0
    few = adsim.value_and_grad(problem.loss(snapshots=4), argnums=(0, 1))
    _, (r_kappa, r_u0) = few(problem.kappa, problem.u0)
    budget_difference = max(np.max(np.abs(g_kappa - r_kappa)) / np.max(np.abs(r_kappa)),
                            np.max(np.abs(g_u0 - r_u0)) / np.max(np.abs(r_u0)))
    fd_error = directional_check(problem, g_kappa, g_u0)
    steps = sum(s["n_steps"] for s in stats)
    replays = sum(s["forward_steps"] for s in stats)
    out = dict(points=points, nfev=sol.nfev, steps=steps, replays=replays,
               snapshots=[s["snapshots"] for s in stats], t_grad=t_grad, t_plain=t_plain,
               budget_difference=budget_difference, fd_error=fd_error, g_kappa=g_kappa,
               g_u0=g_u0, loss=value)
    if verbose:
        print(f"Burgers, {points} points, RK45 (rtol {TOL['rtol']:g}, atol {TOL['atol']:g}) on "
              f"[0, {t_end:g}], {N_OUTPUTS} output times, memory_limit={memory_limit}")
        print(f"  {steps} attempted steps ({sol.nfev} evaluations); snapshots per checkpointed "
              f"loop {out['snapshots']}; {replays} plain step replays (recomputation factor "
              f"{replays / steps:.2f})")
        print(f"  loss {value:.6e}; value and gradient w.r.t. kappa ({points}) and u0 ({points}) "
              f"{t_grad:.2f} s (first call, recording included); plain forward solve "
              f"{t_plain:.2f} s")
        print(f"  gradient under the budget vs with 4 snapshots per interval: relative difference "
              f"{budget_difference:.1e}")
        print(f"  directional derivative vs central differences of the solver: relative "
              f"difference {fd_error:.1e}")
    return out


def check(out):
    assert out["budget_difference"] < 1e-12, "the memory budget changed the gradient"
    # central differences of the solver also differentiate its step-size
    # control, which the adjoint holds fixed (docs/integrate.md, "Step sizes
    # held or followed"): each is within about 100 rtol of the exact
    # derivative, and so of the other (3.2e-5 at rtol 1e-6 here)
    assert out["fd_error"] < 100 * TOL["rtol"], "adjoint disagrees with central differences"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid, for tests")
    parser.add_argument("--points", type=int, default=128)
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--memory-limit", default="2MB")
    args = parser.parse_args(argv)
    if args.quick:
        out = run(points=64, t_end=0.3, memory_limit="1MB")
    else:
        out = run(points=args.points, t_end=args.t_end, memory_limit=args.memory_limit)
    check(out)
    return out


if __name__ == "__main__":
    main()
