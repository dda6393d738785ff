"""Make the figures of docs/integrate.md.

    python docs/figures/make_integrate_figures.py [--quick] [--out DIR]

writes, into docs/figures/ (or ``--out``):

* ``integrate_gradient_error.png``: the relative error of adsim's gradient
  (the discrete adjoint of ``adsim.integrate.solve_ivp``) against the
  derivative of the exact ODE solution (forward sensitivities solved by
  SciPy at a tight tolerance), for rtol from 1e-3 to 1e-10: the
  Lotka-Volterra misfit with RK45 and DOP853 and the Robertson misfit with
  BDF and Radau, at the initial guesses of the fits in examples/ode/;
* ``integrate_checkpoint_cost.png``: CPU time and peak memory of a
  gradient through an RK45 integration of the Burgers method-of-lines
  system (examples/ode/burgers_method_of_lines.py on 512 points, rtol 1e-9,
  one output time: about 1400 steps) against the number of snapshots;
* ``lotka_volterra_fit.png``: data, initial guess and fit of
  examples/ode/lotka_volterra_fit.py.

The problems are the examples' own (examples/ode/ is put on ``sys.path``).
Peak memory is the resident high-water mark (Linux: reset through
/proc/self/clear_refs) of a replayed gradient above the resident memory
before it. The measured numbers are printed, for the text of
docs/integrate.md. ``--quick`` makes small versions of the figures (a test
runs it); the full run takes a few minutes.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "examples" / "ode"))
sys.path.insert(0, str(HERE.parent.parent))           # benchmarks/, for the memory probe

import adsim  # noqa: E402
import burgers_method_of_lines as burgers  # noqa: E402
from benchmarks.checkpoint_memory import _peak_of  # noqa: E402
import lotka_volterra_fit as lv  # noqa: E402
import robertson_fit as robertson  # noqa: E402
from sensitivity_reference import chain, forward_sensitivities, relative_error  # noqa: E402

RTOLS = np.logspace(-3, -10, 8)


# ---- (a) gradient error against rtol ---------------------------------------------

def lotka_volterra_series(rtols, quick):
    """Errors per method, and the uncertainty of the reference: its distance
    to one at a tighter tolerance (not computed in a quick run)."""
    obs = lv.observations(quick)
    reference = obs.reference_gradient(lv.GUESS)
    floor = None
    if not quick:
        y, S = forward_sensitivities(lv.lotka_volterra, (0.0, obs.times[-1]),
                                     lv.start_and_rates, lv.GUESS, obs.times, rtol=1e-13,
                                     atol=1e-13)
        floor = relative_error(chain(obs.misfit_of, y, S), reference)
    series = {}
    for method in ("RK45", "DOP853"):
        series[f"Lotka-Volterra, {method}"] = [
            relative_error(adsim.grad(obs.misfit(method=method, rtol=r, atol=r))(lv.GUESS),
                           reference)
            for r in rtols]
    return series, floor


def robertson_series(rtols, quick):
    obs = robertson.observations(quick)
    reference = obs.reference_gradient(robertson.GUESS)
    floor = None
    if not quick:
        y, S = forward_sensitivities(robertson.robertson, (0.0, obs.times[-1]),
                                     robertson.initial_state_and_rates, robertson.GUESS,
                                     obs.times, method="Radau", **robertson.tolerances(1e-11))
        floor = relative_error(chain(obs.misfit_of, y, S), reference)
    series = {f"Robertson, {method}": [
        relative_error(adsim.grad(obs.misfit(method, r))(robertson.GUESS), reference)
        for r in rtols] for method in robertson.METHODS}
    return series, floor


def gradient_error_figure(path, quick):
    import matplotlib.pyplot as plt
    rtols = RTOLS[1::4] if quick else RTOLS
    lv_series, lv_floor = lotka_volterra_series(rtols, quick)
    rob_series, rob_floor = robertson_series(rtols, quick)
    print("relative gradient error against forward sensitivities")
    print("  rtol                 " + "".join(f"{r:9.0e}" for r in rtols))
    for name, errors in {**lv_series, **rob_series}.items():
        print(f"  {name:20s} " + "".join(f"{e:9.1e}" for e in errors))
    if not quick:
        print(f"  reference uncertainty: Lotka-Volterra {lv_floor:.1e}, Robertson "
              f"{rob_floor:.1e}")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    styles = {"RK45": ("C0", "o-"), "DOP853": ("C0", "s--"), "BDF": ("C3", "o-"),
              "Radau": ("C3", "s--")}
    for name, errors in {**lv_series, **rob_series}.items():
        colour, style = styles[name.split(", ")[1]]
        ax.loglog(rtols, errors, style, color=colour, ms=4, label=name)
    ax.loglog(rtols, rtols, ":", color="grey", lw=1, label="error = rtol")
    if not quick:
        ax.axhline(max(lv_floor, rob_floor), color="grey", lw=0.8, ls="-.",
                   label="uncertainty of the references")
    ax.invert_xaxis()
    ax.set_xlabel("rtol of solve_ivp")
    ax.set_ylabel("relative error of the gradient")
    ax.set_title("Discrete adjoint of solve_ivp against forward sensitivities", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return {**lv_series, **rob_series}


# ---- (b) time and memory against snapshots ---------------------------------------

def peak_added(call):
    """CPU seconds ``call()`` takes and the bytes of resident memory it adds
    at its peak (measured as benchmarks/checkpoint_memory.py measures it)."""
    seconds = []

    def timed():
        t0 = time.process_time()
        call()
        seconds.append(time.process_time() - t0)
    peak, _ = _peak_of(timed)
    return seconds[0], peak


def checkpoint_cost(points, t_end, rtol, snapshot_counts):
    """Per snapshot count: CPU seconds (the best of two replays) and peak
    bytes of a gradient, plain step replays per step; the plain solve's
    seconds and evaluations, and the gradient's directional derivative
    against central differences."""
    problem = burgers.Problem(points, t_end)
    options = dict(t_eval=problem.times[-1:], rtol=rtol, atol=rtol / 100)
    observed = problem.observed[:, -1]

    def loss_with(**checkpointing):
        def loss(kappa, u0):
            u = burgers.solve_ivp(burgers.burgers, (0.0, t_end), u0, args=(kappa, problem.dx),
                                  **options, **checkpointing).y[:, -1]
            return 0.5 * np.sum((u - observed) ** 2) * problem.dx
        return loss
    t0 = time.process_time()
    sol = burgers.solve_ivp(burgers.burgers, (0.0, t_end), problem.u0,
                            args=(problem.kappa, problem.dx), **options)
    t_plain = time.process_time() - t0
    rows = []
    for s in snapshot_counts:
        stats = []
        value_and_grad = adsim.value_and_grad(loss_with(snapshots=s, stats=stats),
                                              argnums=(0, 1))
        _, gradient = value_and_grad(problem.kappa, problem.u0)        # records
        seconds, peak = peak_added(lambda: value_and_grad(problem.kappa, problem.u0))
        seconds = min(seconds, peak_added(lambda: value_and_grad(problem.kappa,
                                                                 problem.u0))[0])
        n = stats[0]["n_steps"]
        rows.append(dict(snapshots=s, seconds=seconds, peak=peak, steps=n,
                         factor=stats[0]["forward_steps"] / n))
    rng = np.random.default_rng(0)
    d_kappa = 0.1 * burgers.smooth_random(problem.x, rng) * problem.kappa
    d_u0 = 0.01 * burgers.smooth_random(problem.x, rng)
    loss, h = loss_with(), 1e-5
    fd = (loss(problem.kappa + h * d_kappa, problem.u0 + h * d_u0)
          - loss(problem.kappa - h * d_kappa, problem.u0 - h * d_u0)) / (2 * h)
    fd_error = abs(gradient[0] @ d_kappa + gradient[1] @ d_u0 - fd) / abs(fd)
    return rows, t_plain, sol.nfev, fd_error


def checkpoint_cost_figure(path, quick):
    import matplotlib.pyplot as plt
    # RK45's steps limited by accuracy, not by the stability of the diffusion
    # (the usual case for a method of lines integrated to a tolerance)
    points, t_end, rtol = (128, 0.5, 1e-6) if quick else (512, 0.5, 1e-9)
    counts = (4, 16, 64) if quick else (3, 4, 6, 8, 12, 16, 32, 64, 128, 256)
    rows, t_plain, nfev, fd_error = checkpoint_cost(points, t_end, rtol, counts)
    snapshot_bytes = (7 + 2) * points * 8       # RK45: 7 stage rows, y and y_old per snapshot
    print(f"Burgers, {points} points, RK45 (rtol {rtol:g}) on [0, {t_end:g}]: {rows[0]['steps']} "
          f"attempted steps, {nfev} evaluations, plain solve {t_plain:.2f} s CPU; gradient vs "
          f"central differences {fd_error:.1e}")
    print("  snapshots  CPU s  gradient/plain  replays/step  peak MB  snapshots MB")
    for r in rows:
        print(f"  {r['snapshots']:9d}  {r['seconds']:5.2f}  {r['seconds'] / t_plain:14.1f}  "
              f"{r['factor']:12.2f}  {r['peak'] / 1e6:7.1f}  "
              f"{r['snapshots'] * snapshot_bytes / 1e6:12.2f}")
    s = [r["snapshots"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    left.semilogx(s, [r["seconds"] for r in rows], "o-", color="C0", label="value and gradient")
    left.axhline(t_plain, color="grey", ls="--", lw=1, label="plain forward solve")
    left.set_xlabel("snapshots")
    left.set_ylabel("CPU seconds")
    left.set_ylim(0, None)
    twin = left.twinx()
    twin.semilogx(s, [r["factor"] for r in rows], "s:", color="C1", ms=4,
                  label="plain step replays per step")
    twin.set_ylabel("plain step replays per step", color="C1")
    twin.set_ylim(0, None)
    handles = left.get_legend_handles_labels()
    extra = twin.get_legend_handles_labels()
    left.legend(handles[0] + extra[0], handles[1] + extra[1], fontsize=7)
    left.set_title("time", fontsize=10)
    right.loglog(s, [r["peak"] / 1e6 for r in rows], "o-", color="C3",
                 label="peak memory added by the gradient")
    right.loglog(s, [x * snapshot_bytes / 1e6 for x in s], ":", color="grey",
                 label="the snapshots alone")
    for ax in (left, right):
        ax.set_xticks(s)
        ax.set_xticklabels([str(x) for x in s])
        ax.minorticks_off()
    right.set_xlabel("snapshots")
    right.set_ylabel("MB")
    right.legend(fontsize=7)
    right.set_title("memory", fontsize=10)
    fig.suptitle(f"Gradient through solve_ivp (RK45, Burgers on {points} points, "
                 f"{rows[0]['steps']} steps) against snapshots", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return rows, fd_error


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small versions, for a test")
    parser.add_argument("--out", default=str(HERE), help="directory of the PNG files")
    args = parser.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    errors = gradient_error_figure(out / "integrate_gradient_error.png", args.quick)
    rows, fd_error = checkpoint_cost_figure(out / "integrate_checkpoint_cost.png", args.quick)
    obs = lv.observations(args.quick)
    fit = lv.fit(obs)[0]
    lv.plot(obs, fit.x, out / "lotka_volterra_fit.png")
    print(f"wrote {out}/integrate_gradient_error.png, integrate_checkpoint_cost.png, "
          f"lotka_volterra_fit.png")
    return dict(errors=errors, rows=rows, fd_error=fd_error, fit=fit)


if __name__ == "__main__":
    main()
