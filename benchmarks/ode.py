"""ODE adjoints with ``adsim.integrate.solve_ivp``: gradients against SciPy and other tools.

Problems (the steps of ``scipy.integrate.solve_ivp``):

* Lorenz-63 on [0, T] with rtol = 1e-8, atol = 1e-10, the loss
  ``sum(y(T)^2)`` differentiated with respect to y0 and (sigma, rho, beta);
  T gives about 10^3 and 10^4 steps (``--quick``: about 10^2 and 10^3).
* Lotka-Volterra with RK45, rtol = atol = 1e-9, 30 outputs (``t_eval`` on
  (0, 15]), the loss a weighted sum of squares of the outputs,
  differentiated with respect to the four rates and the two initial values.
  Its gradient is checked against forward sensitivities: SciPy's DOP853 at
  rtol = atol = 1e-12 on the ODE augmented by S' = f_y S + f_p (largest
  relative error over the six components).
* Robertson's stiff kinetics with BDF and Radau (rtol = 1e-6, atol = 1e-10,
  10 outputs on [0, 40]), differentiated with respect to the log rate
  constants and y0; SciPy's forward solve runs with its default
  (finite-difference) Jacobian, adsim's with the exact one.

Methods: SciPy's ``solve_ivp`` (the forward solve alone), adsim's
``solve_ivp`` on plain arrays (the same forward solve), and the gradient by
``adsim.value_and_grad`` with its cached tape (a replay: the loops re-run
their step tapes in C along the online checkpointing schedule). The ratio
gradient / SciPy forward is the cost of a gradient in forward solves.

Other tools (Lotka-Volterra and the shorter Lorenz-63 run, when installed;
``--no-peers`` leaves them out), the same loss and tolerances:

* diffrax: ``jax.jit(jax.grad(loss))`` with ``Dopri5``,
  ``PIDController(rtol, atol)``, ``SaveAt(ts=t_eval)`` and
  ``RecursiveCheckpointAdjoint()`` (its default checkpoints), timed after
  compilation, twice: with ``max_steps=4096`` (diffrax's default; the next
  power of two above the steps taken when that is too few) and with
  ``max_steps`` equal to the steps diffrax takes (the tightest bound: its
  checkpointing then does least work);
* torchdiffeq: ``odeint(..., method="dopri5")`` differentiated by
  back-propagation through the solver's operations (``torch.autograd``).

Memory: the gradient of a 1000-point method-of-lines Burgers equation
(``adsim.demo.rhs``: viscous Burgers, central differences, periodic)
integrated by ``solve_ivp`` with RK45 over [0, 240] (about 10^6 steps,
limited by stability; ``--quick``: [0, 0.25], about 10^3) with
``memory_limit="100MB"`` and as many snapshots as the budget holds. The
peak resident memory the first gradient call (recording and sweeps) adds
is measured in a fresh process as ``benchmarks/checkpoint_memory.py`` does
(Linux only).

Times are medians with the min–max spread (``benchmarks/timing.py``);
results go to ``benchmarks/results/ode.json`` and, in full runs, the
section of docs/benchmarks.md.
"""
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim as ad
from adsim.checkpoint import parse_bytes
from adsim.integrate import solve_ivp

from . import timing as T

AREA = "ode"
GRADIENT_GOAL = 1e-5            # Lotka-Volterra: largest relative error against the reference
STIFF_GRADIENT_GOAL = 1e-4      # Robertson: the same, for the log rate constants
DIFFRAX_MAX_STEPS = 4096        # diffrax's default max_steps
PDE_POINTS = 1000
PDE_MEMORY_LIMIT = "100MB"
PDE_T_END, PDE_QUICK_T_END = 240.0, 0.25     # about 10^6 and 10^3 RK45 steps


def lorenz(t, y, p):
    return [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]


def lotka_volterra(t, z, rates):
    x, y = z[0], z[1]
    return [rates[0] * x - rates[1] * x * y, rates[3] * x * y - rates[2] * y]


def robertson(t, y, k):
    return [-k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
            k[1] * y[1] ** 2]


# ---- the problems ---------------------------------------------------------------------

def _robertson_case(method):
    y0, log_k = np.array([1.0, 0.0, 0.0]), np.log([0.04, 3e7, 1e4])
    options = dict(method=method, t_eval=np.linspace(4.0, 40.0, 10), rtol=1e-6, atol=1e-10)

    def loss(y0, log_k):
        res = solve_ivp(robertson, (0.0, 40.0), y0, args=(np.exp(log_k),), **options)
        return np.sum(res.y[0] + 1e4 * res.y[1])
    return dict(name=f"Robertson, {method}", fun=robertson, t_span=(0.0, 40.0),
                point=(y0, log_k), options=options, loss=loss,
                args=lambda y0, log_k: (np.exp(log_k),), reference=_robertson_reference,
                compared=(1,), goal=STIFF_GRADIENT_GOAL)


def _robertson_reference(case):
    """d loss / d log k from forward sensitivities: the state and S =
    dy/dlog k (3 x 3) integrated together by SciPy's Radau at rtol 1e-10."""
    (y0, log_k), options = case["point"], case["options"]
    k = np.exp(log_k)

    def augmented(t, w):
        y, S = w[:3], w[3:].reshape(3, 3)
        jac = np.array([[-k[0], k[2] * y[2], k[2] * y[1]],
                        [k[0], -2 * k[1] * y[1] - k[2] * y[2], -k[2] * y[1]],
                        [0.0, 2 * k[1] * y[1], 0.0]])
        by_rate = np.array([[-y[0], 0.0, y[1] * y[2]],
                            [y[0], -y[1] ** 2, -y[1] * y[2]],
                            [0.0, y[1] ** 2, 0.0]]) * k          # d f / d log k
        return np.concatenate([robertson(t, y, k), (jac @ S + by_rate).ravel()])
    sol = scipy_solve_ivp(augmented, case["t_span"], np.concatenate([y0, np.zeros(9)]),
                          method="Radau", t_eval=options["t_eval"], rtol=1e-10, atol=1e-16)
    S = sol.y[3:].reshape(3, 3, -1)
    return None, np.einsum("i,ijt->j", np.array([1.0, 1e4, 0.0]), S)


def _squares_case(name, fun, t_span, point, t_eval, weights, rtol, atol, peers,
                  reference=None):
    """An explicit (RK45) problem whose loss is ``sum(weights * y(t_eval)**2)``,
    a function of ``point = (y0, p)`` with ``fun(t, y, p)``: the form the
    other tools are given too."""
    options = dict(t_eval=np.asarray(t_eval, dtype=float), rtol=rtol, atol=atol)

    def loss(y0, p):
        return np.sum(weights * solve_ivp(fun, t_span, y0, args=(p,), **options).y ** 2)
    return dict(name=name, fun=fun, t_span=t_span, point=point, options=options, loss=loss,
                args=lambda y0, p: (p,), weights=weights, peers=peers, reference=reference)


def _lorenz_case(t_end, peers):
    point = (np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8 / 3]))
    return _squares_case(f"Lorenz-63, T = {t_end:g}", lorenz, (0.0, t_end), point, [t_end],
                         np.ones((3, 1)), 1e-8, 1e-10, peers)


def _lotka_volterra_case():
    point = (np.array([10.0, 5.0]), np.array([1.0, 0.1, 1.5, 0.075]))
    return _squares_case("Lotka-Volterra, 30 outputs", lotka_volterra, (0.0, 15.0), point,
                         np.linspace(0.5, 15.0, 30), np.linspace(1.0, 2.0, 60).reshape(2, 30),
                         1e-9, 1e-9, peers=True, reference=_lotka_volterra_reference)


def _lotka_volterra_reference(case):
    """The loss's gradient from forward sensitivities: the state and
    S = dy/d(y0, rates) (2 x 6) integrated together by SciPy's DOP853."""
    (z0, rates), options = case["point"], case["options"]
    a, b, c, d = rates

    def augmented(t, w):
        x, y = w[0], w[1]
        S = w[2:].reshape(2, 6)
        f_y = np.array([[a - b * y, -b * x], [d * y, d * x - c]])
        f_p = np.array([[0.0, 0.0, x, -x * y, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, -y, x * y]])
        return np.concatenate([lotka_volterra(t, w[:2], rates), (f_y @ S + f_p).ravel()])
    start = np.concatenate([z0, np.hstack([np.eye(2), np.zeros((2, 4))]).ravel()])
    sol = scipy_solve_ivp(augmented, case["t_span"], start, method="DOP853",
                          t_eval=options["t_eval"], rtol=1e-12, atol=1e-12)
    y, S = sol.y[:2], sol.y[2:].reshape(2, 6, -1)
    g = np.einsum("it,ijt->j", 2.0 * case["weights"] * y, S)
    return g[:2], g[2:]


def _relative_error(got, reference, compared=(0, 1)):
    """Largest relative error over the parts ``compared`` of the point
    (0: the initial values, 1: the parameters)."""
    got = np.concatenate([np.ravel(got[i]) for i in compared])
    reference = np.concatenate([np.ravel(reference[i]) for i in compared])
    return float(np.max(np.abs(got - reference) / np.abs(reference)))


# ---- adsim and SciPy ----------------------------------------------------------------

def run_case(case, s):
    y0, p = case["point"]
    args = case["args"](y0, p)
    ref = scipy_solve_ivp(case["fun"], case["t_span"], y0, args=args, **case["options"])
    value_and_grad = ad.value_and_grad(case["loss"], argnums=(0, 1))
    value_and_grad(y0, p)                                   # records the tape
    timings = {
        "scipy_forward": T.measure(lambda: scipy_solve_ivp(case["fun"], case["t_span"], y0,
                                                           args=args, **case["options"]), s),
        "adsim_forward": T.measure(lambda: solve_ivp(case["fun"], case["t_span"], y0,
                                                     args=args, **case["options"]), s),
        "adsim_gradient": T.measure(lambda: value_and_grad(y0, p), s),
    }
    nfev = solve_ivp(case["fun"], case["t_span"], y0, args=args, **case["options"]).nfev
    result = dict(name=case["name"], nfev=nfev, scipy_nfev=ref.nfev,
                  recordings=value_and_grad.tapes.recordings,
                  timings={k: v.as_dict() for k, v in timings.items()},
                  ratio=timings["adsim_gradient"].median / timings["scipy_forward"].median,
                  per_evaluation=timings["adsim_gradient"].median / nfev)
    reference = case.get("reference")
    if reference is not None:
        result["reference"] = [None if g is None else g.tolist() for g in reference(case)]
        result["compared"] = list(case.get("compared", (0, 1)))
        result["goal"] = case.get("goal", GRADIENT_GOAL)
        result["gradient_error"] = _relative_error(value_and_grad(y0, p)[1],
                                                   result["reference"], result["compared"])
    if case.get("peers"):
        result["peers"] = {name: _peer(timer, case, s, result)
                           for name, timer in PEER_TIMERS.items()}
    return result


def _stiff_mol_cases(s):
    """1-D Brusselator with diffusion by the method of lines (n = 500
    equations, ``--quick``: 200), Radau and BDF, rtol = 1e-6, atol = 1e-8,
    10 outputs on [0, 2], the loss ``sum(y**2)`` differentiated with respect
    to y0 and (a, b, alpha). SciPy's forward solve gets ``jac_sparsity``
    (grouped differences, sparse LU); adsim's Jacobian is sparse (its own
    choice for this size) or dense (the size threshold raised for the
    measurement: one equation per second-order sweep, dense LU)."""
    import scipy.sparse as sp
    from adsim.integrate import _implicit

    def brusselator(t, y, a, b, alpha):
        N = y.shape[0] // 2
        u, v = y[:N], y[N:]
        k = alpha * (N + 1) ** 2
        up = np.concatenate([np.ones(1), u, np.ones(1)])
        vp = np.concatenate([3 * np.ones(1), v, 3 * np.ones(1)])
        return np.concatenate([a + u * u * v - (b + 1) * u + k * (up[2:] - 2 * u + up[:-2]),
                               b * u - u * u * v + k * (vp[2:] - 2 * v + vp[:-2])])
    N = 100 if s.quick else 250
    x = np.arange(1, N + 1) / (N + 1)
    y0, p = np.concatenate([1 + np.sin(2 * np.pi * x), 3 * np.ones(N)]), np.array([1.0, 3.0, 0.02])
    tridiagonal = sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(N, N))
    pattern = sp.csc_array(sp.block_array([[tridiagonal, sp.eye_array(N)],
                                           [sp.eye_array(N), tridiagonal]]))
    results, threshold = [], _implicit.SPARSE_MIN_SIZE
    for method in ("BDF", "Radau"):
        options = dict(method=method, t_eval=np.linspace(0.2, 2.0, 10), rtol=1e-6, atol=1e-8)

        def loss(y0, p):
            res = solve_ivp(brusselator, (0.0, 2.0), y0, args=(p[0], p[1], p[2]), **options)
            return np.sum(res.y ** 2)
        def scipy_solve():
            return scipy_solve_ivp(brusselator, (0.0, 2.0), y0, args=tuple(p),
                                   jac_sparsity=pattern, **options)
        scipy_forward, scipy_nfev = T.measure(scipy_solve, s), scipy_solve().nfev
        for kind in ("sparse", "dense"):
            _implicit.SPARSE_MIN_SIZE = threshold if kind == "sparse" else 2 * N + 1
            try:
                value_and_grad = ad.value_and_grad(loss, argnums=(0, 1))
                value_and_grad(y0, p)                           # records the tape
                timings = {"scipy_forward": scipy_forward,
                           "adsim_forward": T.measure(lambda: solve_ivp(
                               brusselator, (0.0, 2.0), y0, args=tuple(p), **options), s),
                           "adsim_gradient": T.measure(lambda: value_and_grad(y0, p), s)}
                nfev = solve_ivp(brusselator, (0.0, 2.0), y0, args=tuple(p), **options).nfev
            finally:
                _implicit.SPARSE_MIN_SIZE = threshold
            results.append(dict(
                name=f"Brusselator MOL, n = {2 * N}, {method}: adsim {kind} Jacobian, SciPy "
                f"jac_sparsity", nfev=nfev, scipy_nfev=scipy_nfev,
                recordings=value_and_grad.tapes.recordings,
                timings={k: v.as_dict() for k, v in timings.items()},
                ratio=timings["adsim_gradient"].median / scipy_forward.median,
                per_evaluation=timings["adsim_gradient"].median / nfev))
    return results


# ---- other tools ------------------------------------------------------------------------

def _peer(timer, case, s, result):
    """One peer's rows, or the reason it did not run."""
    if not s.peers:
        return {"skipped": "--no-peers"}
    try:
        rows = timer(case, s)
    except T.Skip as why:
        return {"skipped": str(why)}
    for row in rows.values():
        row["ratio"] = result["timings"]["adsim_gradient"]["median"] / row["timing"]["median"]
        if "reference" in result:
            row["gradient_error"] = _relative_error(row.pop("gradient"), result["reference"],
                                                    result["compared"])
        else:
            row.pop("gradient")
    return rows


def _diffrax(case, s):
    jax = T.jax_peer(s)
    diffrax = T.peer("diffrax")
    import jax.numpy as jnp
    fun, (t0, t1) = case["fun"], case["t_span"]
    options, weights = case["options"], jnp.asarray(case["weights"])
    term = diffrax.ODETerm(lambda t, y, args: jnp.stack(fun(t, y, *args)))
    controller = diffrax.PIDController(rtol=options["rtol"], atol=options["atol"])
    saveat = diffrax.SaveAt(ts=jnp.asarray(options["t_eval"]))

    def solve(y0, p, max_steps):
        return diffrax.diffeqsolve(term, diffrax.Dopri5(), t0, t1, None, y0,
                                   args=case["args"](y0, p), saveat=saveat,
                                   stepsize_controller=controller, max_steps=max_steps,
                                   adjoint=diffrax.RecursiveCheckpointAdjoint())

    y0, p = (jnp.asarray(v) for v in case["point"])
    # the steps diffrax takes (a forward solve needs no bound it must plan for)
    steps = int(jax.jit(lambda y0, p: solve(y0, p, None).stats["num_steps"])(y0, p))
    generous = DIFFRAX_MAX_STEPS if steps <= DIFFRAX_MAX_STEPS else 2 ** math.ceil(
        math.log2(steps))
    rows = {}
    for key, max_steps in (("diffrax", generous), ("diffrax_tight", steps)):
        def loss(y0, p, max_steps=max_steps):
            return jnp.sum(weights * solve(y0, p, max_steps).ys.T ** 2)
        grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
        gradient = jax.block_until_ready(grad(y0, p))              # compiles
        timing = T.measure(lambda: jax.block_until_ready(grad(y0, p)), s)
        rows[key] = dict(timing=timing.as_dict(),
                         gradient=[np.asarray(g) for g in gradient], steps=steps,
                         max_steps=max_steps, version=diffrax.__version__)
    return rows


def _torchdiffeq(case, s):
    torch = T.peer("torch")
    torchdiffeq = T.peer("torchdiffeq")
    import importlib.metadata
    if s.threads > 0:
        torch.set_num_threads(s.threads)
    fun, (t0, _), options = case["fun"], case["t_span"], case["options"]
    times = torch.tensor(np.concatenate([[t0], options["t_eval"]]))   # t_eval[0] > t0
    weights = torch.tensor(case["weights"])
    point = [torch.tensor(v) for v in case["point"]]

    def gradient():
        y0, p = (v.clone().requires_grad_(True) for v in point)
        args = case["args"](y0, p)
        ys = torchdiffeq.odeint(lambda t, y: torch.stack(fun(t, y, *args)), y0, times,
                                rtol=options["rtol"], atol=options["atol"], method="dopri5")
        loss = torch.sum(weights * ys[1:].T ** 2)
        return torch.autograd.grad(loss, (y0, p))
    return {"torchdiffeq": dict(timing=T.measure(gradient, s).as_dict(),
                                gradient=[g.numpy() for g in gradient()],
                                version=importlib.metadata.version("torchdiffeq"))}


PEER_TIMERS = {"diffrax": _diffrax, "torchdiffeq": _torchdiffeq}
PEER_LABELS = {"diffrax": "diffrax `jit(grad)`, max_steps={max_steps}",
               "diffrax_tight": "diffrax `jit(grad)`, max_steps={max_steps} (= its steps)",
               "torchdiffeq": "torchdiffeq `odeint` + `autograd`"}


# ---- memory: a long method-of-lines integration -------------------------------------------

def pde_child(t_end):
    """In a fresh process: the gradient of the Burgers loss through
    ``solve_ivp`` on [0, t_end] under ``PDE_MEMORY_LIMIT``, with the peak
    resident memory it adds (recording and sweeps)."""
    from adsim.demo import rhs, setup

    from .checkpoint_memory import _peak_of
    x, dx, u0, kappa, _ = setup(PDE_POINTS)
    u_obs = np.sin(2 * np.pi * (x - 0.05)) + 0.5

    def burgers(t, u, kappa):
        return rhs(u, kappa, dx)

    def gradient_call(t_end, stats):
        def loss(kappa, u0):
            # snapshots: per interval between output times (one here), capped
            # by memory_limit; solve_ivp keeps 20 unless told more
            res = solve_ivp(burgers, (0.0, t_end), u0, t_eval=[t_end], args=(kappa,),
                            memory_limit=PDE_MEMORY_LIMIT, snapshots=10 ** 9, stats=stats)
            return 0.5 * np.sum((res.y[:, -1] - u_obs) ** 2) * dx
        return lambda: ad.value_and_grad(loss, argnums=(0, 1))(kappa, u0)

    gradient_call(0.01, [])()                # imports and first-call costs
    stats = []
    t0, c0 = time.perf_counter(), time.process_time()
    peak, (value, (g_kappa, g_u0)) = _peak_of(gradient_call(t_end, stats))
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    loop = stats[0]
    return dict(t_end=t_end, points=PDE_POINTS, memory_limit=PDE_MEMORY_LIMIT, seconds=seconds,
                cpu_seconds=cpu_seconds, peak_added=peak, n_steps=loop["n_steps"], snapshots=loop["snapshots"],
                forward_steps=loop["forward_steps"], taped_steps=loop["taped_steps"],
                value=float(value), gradient_norm=float(np.linalg.norm(
                    np.concatenate([g_kappa, g_u0]))))


def run_pde(s):
    if not os.path.exists("/proc/self/clear_refs"):
        return {"skipped": "peak memory is measured through /proc/self/clear_refs (Linux)"}
    t_end = PDE_QUICK_T_END if s.quick else PDE_T_END
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(T.ROOT), os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", f"benchmarks.{AREA}", "--pde-child", repr(t_end)]
    out = subprocess.run(cmd, cwd=T.ROOT, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


# ---- the area --------------------------------------------------------------------------

def run(s):
    ends = (1.0, 10.0) if s.quick else (10.0, 100.0)
    cases = [_lorenz_case(ends[0], peers=True), _lorenz_case(ends[1], peers=False),
             _lotka_volterra_case()] + [_robertson_case(m) for m in ("BDF", "Radau")]
    return {"cases": [run_case(c, s) for c in cases] + _stiff_mol_cases(s), "pde": run_pde(s)}


def _peer_rows(c):
    rows = []
    for tool, entry in c.get("peers", {}).items():
        if "skipped" in entry:
            rows.append([c["name"], tool, f"skipped: {entry['skipped']}", "", "–", ""])
            continue
        for key, row in entry.items():
            error = row.get("gradient_error")
            rows.append([c["name"], PEER_LABELS[key].format(**row), row.get("steps", ""),
                         T.fmt_timing(T.Timing(**row["timing"])), T.fmt_ratio(row["ratio"]),
                         "" if error is None else f"{error:.1e}"])
    return rows


def _goals(c):
    """The goals of a case with a reference, judged on this run's medians
    (Robertson: the gradient's accuracy in the log rate constants only)."""
    error, goal, lines = c["gradient_error"], c.get("goal", GRADIENT_GOAL), []
    part = "" if c.get("compared", [0, 1]) == [0, 1] else " (log rate constants)"
    lines.append(f"- gradient{part} within {goal:g} of the forward-sensitivity reference: "
                 f"largest relative error {error:.1e} "
                 f"({'met' if error <= goal else 'not met'})")
    if not c.get("peers"):
        return lines
    lines.append(f"- faster than SciPy's forward `solve_ivp`: gradient / SciPy forward "
                 f"{c['ratio']:.3g} ({'met' if c['ratio'] < 1 else 'not met'})")
    entry = c.get("peers", {}).get("diffrax", {})
    if "skipped" in entry or not entry:
        lines.append(f"- faster than diffrax `jit(grad)`: not measured "
                     f"({entry.get('skipped', 'no peers')})")
    for key, row in ({} if "skipped" in entry else entry).items():
        lines.append(f"- faster than {PEER_LABELS[key].format(**row)}: adsim / diffrax "
                     f"{row['ratio']:.3g} ({'met' if row['ratio'] < 1 else 'not met'})")
    return lines


def _pde_lines(pde):
    if "skipped" in pde:
        return [f"Memory: skipped ({pde['skipped']})."]
    added = pde["peak_added"] / 1e6
    limit = parse_bytes(pde["memory_limit"]) / 1e6
    return [
        f"Memory: gradient of the {pde['points']}-point Burgers loss through `solve_ivp` (RK45) "
        f"on [0, {pde['t_end']:g}] with `memory_limit=\"{pde['memory_limit']}\"`: "
        f"{pde['n_steps']} steps (attempts), {pde['snapshots']} snapshots, "
        f"{pde['forward_steps']} plain step replays ({pde['forward_steps'] / pde['n_steps']:.2f} "
        f"per step) and {pde['taped_steps']} reversed; first call (recording and sweeps) "
        f"{pde['seconds']:.1f} s ({pde['cpu_seconds']:.1f} s CPU); peak resident memory added "
        f"{added:.1f} MB "
        f"({'within' if added <= limit else 'above'} {limit:g} MB)."]


def markdown(res, s, machine):
    rows, peers, goals = [], [], []
    for c in res["cases"]:
        t = {k: T.Timing(**v) for k, v in c["timings"].items()}
        error = c.get("gradient_error")
        rows.append([c["name"], c["nfev"], T.fmt_timing(t["scipy_forward"]),
                     T.fmt_timing(t["adsim_forward"]), T.fmt_timing(t["adsim_gradient"]),
                     T.fmt_ratio(c["ratio"]), T.fmt_time(c["per_evaluation"]),
                     "" if error is None else f"{error:.1e}"])
        peers += _peer_rows(c)
        if error is not None:
            goals += [f"Goals, {c['name']}:"] + _goals(c)
    lines = [
        "## ODE adjoints: `adsim.integrate.solve_ivp`\n", T.header(AREA, s, machine), "",
        "The steps of `scipy.integrate.solve_ivp` (Robertson: SciPy with its default "
        "finite-difference Jacobian, adsim with the exact one); the gradient is "
        "`adsim.value_and_grad` of the loss with its cached tape. Ratio: gradient / SciPy "
        "forward solve. Error: largest relative error of the gradient against forward "
        "sensitivities.", "",
        T.table(["problem", "fun evaluations", "SciPy forward", "adsim forward (plain)",
                 "adsim value and gradient", "ratio", "gradient per evaluation", "error"], rows),
        ""]
    if peers:
        lines += ["Other tools, the same loss and tolerances (Dopri5, the pair of RK45), "
                  "gradients timed after compilation. Ratio: adsim's gradient / the tool's.", "",
                  T.table(["problem", "tool", "steps", "gradient", "adsim / tool", "error"],
                          peers), ""]
    lines += goals + [""] + _pde_lines(res["pde"]) + [""]
    return "\n".join(lines)


def main(argv=None):
    p = T.parser(AREA, __doc__.splitlines()[0])
    p.add_argument("--pde-child", type=float, default=None, help=__import__("argparse").SUPPRESS)
    args = p.parse_args(argv)
    if args.pde_child is not None:           # the fresh process of run_pde
        print(json.dumps(pde_child(args.pde_child)))
        return 0
    settings = T.settings_from(args, AREA)
    machine = T.machine_info(T.limit_threads(settings))
    results = run(settings)
    return T.report(AREA, settings, machine, results, markdown(results, settings, machine))


if __name__ == "__main__":
    sys.exit(main())
