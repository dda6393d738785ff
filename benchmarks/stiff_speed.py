"""Gradients through Radau and BDF against SciPy's forward solve, new parameters at each call.

For Robertson, HIRES, Pollution and the 2-D Brusselator (method of lines,
``jac_sparsity``) of the stiff test set (``benchmarks/_stiff_set.py``) at
rtol = 1e-6 with each problem's atol and loss ``sum(weights * sol.y)``:

* SciPy: ``scipy.integrate.solve_ivp`` (its finite-difference Jacobian;
  ``jac_sparsity`` for the Brusselator), the forward solve alone;
* adsim: ``adsim.grad`` of the loss with respect to ``(y0, p)`` through
  ``adsim.integrate.solve_ivp`` with the same options and default
  settings (BDF's derivatives are those of a Radau solve), its tape cached.

Every call of either gets the next of eight parameter vectors (the
problem's, each log parameter moved by about 1e-3), as in a fit: the
steps, orders and Newton counts differ from call to call, and a gradient
pays for step variants recorded again. The ratio is gradient / SciPy
forward (the issue's goal: at most 1 on the three kinetics problems, 1.5
on the method of lines). Times are medians with the min-max spread
(``benchmarks/timing.py``), and median CPU times, whose ratio is the more
reliable on a loaded machine.

diffrax (when installed; ``--no-peers`` leaves it out), on the three
kinetics problems: ``jax.jit(jax.grad(loss))`` with ``Kvaerno5`` (an
ESDIRK method of order 5 with a simplified Newton iteration, diffrax's
stiff solver, its root finder at the controller's tolerances),
``PIDController(rtol, atol, pcoeff=0.4, icoeff=0.3)`` with the same rtol
and per-component atol (a PI controller, the first of those diffrax's
documentation suggests for mildly stiff problems: with its default
I controller, ``pcoeff=0, icoeff=1``, diffrax rejects 40-55 % of its steps
here and takes 1.5-2.2 times as many, whose counts are reported too),
``SaveAt(ts=t_eval)`` and its default adjoint (recursive checkpointing), in
float64. The right-hand side is the test set's own function run with
``jax.numpy`` for ``np``. Compilation (the first call, wall and CPU time)
is measured apart from the calls after it, which get new parameters as
adsim's do, twice: with ``max_steps=4096`` (diffrax's default, or the next
power of two above the steps it takes) and with ``max_steps`` equal to the
most steps it takes at any of the points (the tightest bound: its
checkpointing then does least work). Its
gradient's error against the set's reference is reported beside adsim's.
The goal: adsim's gradient within 3x diffrax's.
"""
import math
import sys
import time
import types

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp

from . import _stiff_set as stiff
from . import timing as T

AREA = "stiff_speed"
CASES = ("robertson", "hires", "pollution", "brusselator2d")
METHODS = ("Radau", "BDF")
RTOL = 1e-6
POINTS = 8
GOALS = {"brusselator2d": 1.5}       # otherwise 1.0
PEER_CASES = ("robertson", "hires", "pollution")
DIFFRAX_GOAL = 3.0                   # adsim's gradient / diffrax's
DIFFRAX_MAX_STEPS = 4096             # diffrax's default max_steps
DIFFRAX_PI = dict(pcoeff=0.4, icoeff=0.3)


def _cycling(call, points):
    """``call(point)`` at the next of ``points`` each time."""
    state = {"k": 0}

    def next_call():
        state["k"] += 1
        return call(points[state["k"] % len(points)])
    return next_call


def _points(problem):
    """The parameter vectors of the calls, in turn."""
    rng = np.random.default_rng(7)
    return [problem.p + 1e-3 * rng.standard_normal(problem.p.shape) for _ in range(POINTS)]


def run_case(key, method, s):
    problem = stiff.problem_from_key(key)
    points = _points(problem)
    scipy_loss = problem.loss(scipy_solve_ivp, method, RTOL)
    grad = adsim.grad(problem.loss(solve_ivp, method, RTOL), argnums=(0, 1))
    grad(problem.y0, problem.p)                                 # records the tape
    scipy = T.measure(_cycling(lambda p: scipy_loss(problem.y0, p), points), s)
    gradient = T.measure(_cycling(lambda p: grad(problem.y0, p), points), s)
    return dict(problem=key, n=problem.n, method=method, scipy=scipy.as_dict(),
                gradient=gradient.as_dict(), ratio=gradient.median / scipy.median,
                cpu_ratio=gradient.cpu_median / scipy.cpu_median,
                goal=GOALS.get(problem.name, 1.0))


# ---- diffrax ------------------------------------------------------------------------

def _with_jax_numpy(fun):
    """``fun`` (written with ``np``) run with ``jax.numpy`` as ``np``."""
    import jax.numpy as jnp
    return types.FunctionType(fun.__code__, {**fun.__globals__, "np": jnp}, fun.__name__,
                              fun.__defaults__, fun.__closure__)


def run_diffrax(key, s):
    """diffrax's ``jit(grad)`` of the problem's loss (module docstring), or
    ``{"skipped": why}``."""
    if not s.peers:
        return {"skipped": "--no-peers"}
    try:
        jax = T.jax_peer(s)
        diffrax = T.peer("diffrax")
    except T.Skip as why:
        return {"skipped": str(why)}
    import jax.numpy as jnp
    problem = stiff.problem_from_key(key)
    fun = _with_jax_numpy(problem.fun)
    term = diffrax.ODETerm(lambda t, y, p: jnp.stack(fun(t, y, p)))
    atol = jnp.asarray(problem.atol(RTOL))
    controller = diffrax.PIDController(rtol=RTOL, atol=atol, **DIFFRAX_PI)
    saveat = diffrax.SaveAt(ts=jnp.asarray(problem.t_eval))
    weights = jnp.asarray(problem.weights)
    (t0, t1), y0 = problem.t_span, jnp.asarray(problem.y0)
    points = [jnp.asarray(p) for p in _points(problem)]

    def solve(y0, p, max_steps, controller=controller):
        return diffrax.diffeqsolve(term, diffrax.Kvaerno5(), t0, t1, None, y0, args=p,
                                   saveat=saveat, stepsize_controller=controller,
                                   max_steps=max_steps)
    # the steps diffrax takes at each point (a forward solve needs no bound),
    # and at the problem's with its default controller
    counts = jax.jit(lambda y0, p: solve(y0, p, None).stats)
    stats = [counts(y0, p) for p in [jnp.asarray(problem.p)] + points]
    default = jax.jit(lambda y0, p: solve(y0, p, None, diffrax.PIDController(
        rtol=RTOL, atol=atol)).stats)(y0, jnp.asarray(problem.p))
    steps = max(int(st["num_steps"]) for st in stats)
    generous = DIFFRAX_MAX_STEPS if steps <= DIFFRAX_MAX_STEPS else 2 ** math.ceil(
        math.log2(steps))
    reference = stiff.reference_gradient(problem)
    rows = {}
    for name, max_steps in (("default", generous), ("tight", steps)):
        def loss(y0, p, max_steps=max_steps):
            return jnp.sum(weights * solve(y0, p, max_steps).ys.T)
        grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
        wall, cpu = time.perf_counter(), time.process_time()
        g_y0, g_p = jax.block_until_ready(grad(y0, problem.p))          # compiles
        compile_wall, compile_cpu = time.perf_counter() - wall, time.process_time() - cpu
        timing = T.measure(_cycling(lambda p: jax.block_until_ready(grad(y0, p)), points), s)
        rows[name] = dict(max_steps=max_steps, compile_seconds=compile_wall,
                          compile_cpu_seconds=compile_cpu, gradient=timing.as_dict(),
                          error=stiff.relative_error(stiff.gradient_vector(
                              problem, np.asarray(g_y0), np.asarray(g_p)), reference))
    return dict(problem=key, steps=steps, accepted=int(stats[0]["num_accepted_steps"]),
                rejected=int(stats[0]["num_rejected_steps"]),
                i_controller=[int(default["num_accepted_steps"]),
                              int(default["num_rejected_steps"])],
                version=diffrax.__version__, rows=rows)


def _adsim_error(key, method):
    """adsim's gradient at the problem's parameters against the set's reference."""
    problem = stiff.problem_from_key(key)
    g_y0, g_p = adsim.grad(problem.loss(solve_ivp, method, RTOL), argnums=(0, 1))(
        problem.y0, problem.p)
    return stiff.relative_error(stiff.gradient_vector(problem, g_y0, g_p),
                                stiff.reference_gradient(problem))


def run(s):
    keys = CASES[:1] if s.quick else CASES
    cases = [run_case(k, m, s) for k in keys for m in METHODS]
    peers = [k for k in PEER_CASES if k in keys]
    diffrax = {k: run_diffrax(k, s) for k in peers}
    for c in cases:
        entry = diffrax.get(c["problem"])
        if entry is None or "skipped" in entry:
            continue
        c["error"] = _adsim_error(c["problem"], c["method"])
        for name, row in entry["rows"].items():
            c[f"diffrax_{name}_ratio"] = c["gradient"]["median"] / row["gradient"]["median"]
            c[f"diffrax_{name}_cpu_ratio"] = \
                c["gradient"]["cpu_median"] / row["gradient"]["cpu_median"]
    return {"cases": cases, "diffrax": diffrax}


def markdown(res, s, machine):
    rows = []
    for c in res["cases"]:
        rows.append([c["problem"], c["n"], c["method"], T.fmt_timing(T.Timing(**c["scipy"])),
                     T.fmt_timing(T.Timing(**c["gradient"])), T.fmt_ratio(c["ratio"]),
                     T.fmt_ratio(c["cpu_ratio"]),
                     f"≤ {c['goal']:g}: {'met' if c['ratio'] <= c['goal'] else 'not met'}"])
    lines = [
        "## Stiff ODE gradients: Radau and BDF\n", T.header(AREA, s, machine), "",
        f"rtol = {RTOL:g}, new parameters at each call. SciPy: forward `solve_ivp` (its "
        "finite-difference Jacobian; `jac_sparsity` for the Brusselator); adsim: `adsim.grad` "
        "of the loss with its cached tape. Ratio: gradient / SciPy forward (wall-clock "
        "medians, and median CPU times).", "",
        T.table(["problem", "n", "method", "SciPy forward", "adsim gradient", "ratio",
                 "CPU ratio", "goal"], rows), ""]
    return "\n".join(lines + _diffrax_lines(res))


def _diffrax_lines(res):
    entries = res.get("diffrax", {})
    if not entries:
        return []
    lines = ["diffrax `jax.jit(jax.grad(loss))`, `Kvaerno5`, `PIDController` at the same rtol "
             f"and atol with {DIFFRAX_PI['pcoeff']:g}, {DIFFRAX_PI['icoeff']:g} (a PI "
             "controller), float64, new parameters at each call, timed after compilation "
             "(compile: the first call). Steps: accepted + rejected at the problem's "
             "parameters (in brackets: with diffrax's default I controller). adsim / diffrax: "
             f"adsim's gradient time over diffrax's (goal ≤ {DIFFRAX_GOAL:g}). Error: against "
             "the stiff set's reference gradient.", ""]
    rows = []
    for key, entry in entries.items():
        if "skipped" in entry:
            rows.append([key, f"skipped: {entry['skipped']}", "", "", "", "", ""])
            continue
        for name, row in entry["rows"].items():
            ours = [c for c in res["cases"] if c["problem"] == key]
            ratios = ", ".join(
                f"{c['method']} {c[f'diffrax_{name}_ratio']:.3g} "
                f"(CPU {c[f'diffrax_{name}_cpu_ratio']:.3g})" for c in ours)
            errors = ", ".join(f"{c['method']} {c['error']:.1e}" for c in ours)
            i_accepted, i_rejected = entry["i_controller"]
            rows.append([key, f"{entry['accepted']} + {entry['rejected']} ({i_accepted} + "
                         f"{i_rejected}), max_steps={row['max_steps']}",
                         f"{row['compile_seconds']:.1f} s ({row['compile_cpu_seconds']:.1f} s CPU)",
                         T.fmt_timing(T.Timing(**row["gradient"])), f"{row['error']:.1e}",
                         ratios, errors])
    return lines + [T.table(["problem", "diffrax steps", "compile", "diffrax gradient",
                             "diffrax error", "adsim / diffrax", "adsim error"], rows), ""]


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
