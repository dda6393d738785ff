"""Gradient of the Helmholtz free energy: adsim against other methods.

The survey benchmark of Baydin et al. [1]_ (Section 4, Table 4, Figure 5):

    f(x) = R T sum_i x_i log(x_i / (1 - b'x))
           - x'Ax / (sqrt(8) b'x) log((1 + (1 + sqrt 2) b'x) / (1 + (1 - sqrt 2) b'x))

with R = T = 1 and the seeded data of ``problems.make_helmholtz``. At every
size n all methods get the same x, A and b, and every gradient is checked
against adsim's reverse mode (relative 2-norm error <= 1e-8; <= 1e-5 for
central differences, which are accurate only to about eps^(2/3)).

Methods: central differences (2n evaluations of the NumPy f), adsim forward
vector mode (``tape.jvp`` with the n unit directions), adsim reverse mode
(``tape.gradient`` on a recorded tape; ``ad.grad`` with its cached tape; a
new ``ad.grad`` per call, so recording included), and, when installed,
autograd, JAX (op by op and ``jax.jit``), PyTorch (CPU) and CasADi (MX).
Central differences and forward mode cost O(n) evaluations of f per gradient,
and CasADi's dense MX graph takes minutes to build at n = 10^4: these are
skipped above n = 1000 unless ``--full``.

Times are reported absolute, relative to the NumPy f at n = 1 (the survey's
normalisation), relative to the NumPy f at the same n, and relative to the
tape's own zero-order replay (``tape.forward``) at the same n.

Threads: one tape shared by two threads, each calling ``tape.gradient`` in a
loop, against one thread doing the same (n = 1000, BLAS limited to one
thread). Replays run on buffers of their own and release the GIL while their
compiled sweeps run, so the goal is a throughput ratio of at least 1.7 on two
free cores; the median ratio over the samples is reported with its spread.

References
----------
.. [1] A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind,
   "Automatic differentiation in machine learning: a survey", JMLR 18(153),
   2018.
"""
import os
import statistics
import sys
import threading
import time

import numpy as np

import adsim as ad
from adsim._tapecache.purity import MAX_ARRAY_BYTES

from . import problems
from . import timing as T

AREA = "helmholtz"
SLOW_ABOVE = 1000            # slow methods stop here unless --full
QUADRATIC = "O(n) evaluations of f per gradient"
TOLERANCE = {"ad": 1e-8, "fd": 1e-5}
THREAD_N = 1000              # size of the shared-tape thread measurement
THREAD_GOAL = 1.7            # throughput of two threads / one thread


class Method:
    """One way of computing f or its gradient at an instance.

    ``prepare(inst, settings)`` returns a callable of no arguments giving the value
    (kind "f") or the gradient as a NumPy array (kind "gradient"); it raises
    ``Skip`` with a reason when the method is not available.
    """

    def __init__(self, key, label, kind, prepare, peer=None, max_n=None, why_slow="",
                 check="ad"):
        self.key, self.label, self.kind, self.prepare, self.peer = key, label, kind, prepare, peer
        self.max_n, self.why_slow, self.check = max_n, why_slow, check




# ---- adsim and plain NumPy ---------------------------------------------------------

def _numpy_f(inst, s):
    f, x = inst.function(), inst.x
    return lambda: f(x)


def _tape_forward(inst, s):
    tape = ad.record(inst.function(), inst.x)
    x = inst.x
    return lambda: tape.forward(x)


def _central_differences(inst, s):
    f, x0 = inst.function(), inst.x
    steps = np.cbrt(np.finfo(float).eps) * np.maximum(np.abs(x0), 1e-8)

    def gradient():
        g = np.empty_like(x0)
        x = x0.copy()
        for i, h in enumerate(steps):
            x[i] = x0[i] + h
            fp = f(x)
            x[i] = x0[i] - h
            fm = f(x)
            x[i] = x0[i]
            g[i] = (fp - fm) / (2.0 * h)
        return g
    return gradient


def _adsim_forward(inst, s):
    tape = ad.record(inst.function(), inst.x)
    x, directions = inst.x, np.eye(inst.n)
    return lambda: tape.jvp(x, directions)[1]


def _adsim_tape_gradient(inst, s):
    tape = ad.record(inst.function(), inst.x)
    x = inst.x
    return lambda: tape.gradient(x)


def _adsim_grad_cached(inst, s):
    g, x = ad.grad(inst.function()), inst.x
    g(x)
    return lambda: g(x)


def _adsim_grad_recording(inst, s):
    f, x = inst.function(), inst.x
    return lambda: ad.grad(f)(x)


# ---- other tools ------------------------------------------------------------------



def _autograd(inst, s):
    autograd = T.peer("autograd")
    import autograd.numpy as anp
    g, x = autograd.grad(inst.function(anp)), inst.x
    return lambda: g(x)


def _jax_setup(inst, jit, threads):
    if threads == 1 and "jax" not in sys.modules:   # XLA reads its flags when it starts
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
    jax = T.peer("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    # A and b are arguments, not closed-over constants: jit would fold an n x n
    # constant into the compiled program (seconds of compilation at n = 10^4)
    g = jax.grad(lambda x, A, b: problems.helmholtz(x, A, b, xp=jnp))
    if jit:
        g = jax.jit(g)
    x, A, b = jnp.asarray(inst.x), *(jnp.asarray(p) for p in inst.params)
    return lambda: np.asarray(g(x, A, b).block_until_ready())


def _jax(inst, s):
    return _jax_setup(inst, False, s.threads)


def _jax_jit(inst, s):
    return _jax_setup(inst, True, s.threads)


def _torch(inst, s):
    torch = T.peer("torch")
    if s.threads > 0:
        torch.set_num_threads(s.threads)
    A, b = (torch.from_numpy(p) for p in inst.params)
    x = torch.tensor(inst.x, dtype=torch.float64, requires_grad=True)

    def gradient():
        y = problems.helmholtz(x, A, b, xp=torch)
        return torch.autograd.grad(y, x)[0].numpy()
    return gradient


def _casadi(inst, s):
    ca = T.peer("casadi")
    n = inst.n
    x, A, b = ca.MX.sym("x", n), ca.MX.sym("A", n, n), ca.MX.sym("b", n)
    bx = ca.dot(b, x)
    mix = ca.sum1(x * ca.log(x / (1.0 - bx)))
    attraction = ca.dot(x, ca.mtimes(A, x)) / (problems.SQRT8 * bx)
    f = mix - attraction * ca.log((1.0 + (1.0 + problems.SQRT2) * bx)
                                  / (1.0 + (1.0 - problems.SQRT2) * bx))
    g = ca.Function("grad_helmholtz", [x, A, b], [ca.gradient(f, x)])
    x0, A0, b0 = inst.x, *(ca.DM(p) for p in inst.params)
    return lambda: np.asarray(g(x0, A0, b0)).reshape(-1)


METHODS = [
    Method("f_numpy", "f: plain NumPy", "f", _numpy_f),
    Method("f_tape", "f: tape.forward (zero-order replay)", "f", _tape_forward),
    Method("central_differences", "central differences (2n f)", "gradient",
           _central_differences, max_n=SLOW_ABOVE, why_slow=QUADRATIC, check="fd"),
    Method("adsim_forward", "adsim forward, vector mode (tape.jvp, n directions)", "gradient",
           _adsim_forward, max_n=SLOW_ABOVE, why_slow=QUADRATIC),
    Method("adsim_tape_gradient", "adsim reverse (tape.gradient)", "gradient",
           _adsim_tape_gradient),
    Method("adsim_grad", "adsim reverse (ad.grad, cached tape)", "gradient", _adsim_grad_cached),
    Method("adsim_grad_recording", "adsim reverse with recording (new ad.grad each call)",
           "gradient", _adsim_grad_recording),
    Method("autograd", "autograd", "gradient", _autograd, peer="autograd"),
    Method("jax", "JAX (op by op)", "gradient", _jax, peer="jax"),
    Method("jax_jit", "JAX (jax.jit)", "gradient", _jax_jit, peer="jax"),
    Method("torch", "PyTorch (CPU)", "gradient", _torch, peer="torch"),
    Method("casadi", "CasADi (MX)", "gradient", _casadi, peer="casadi", max_n=SLOW_ABOVE,
           why_slow="CasADi's dense MX product and the DM copy of A take minutes at n = 10^4"),
]


# ---- running ------------------------------------------------------------------------

def _check(method, g, ref, n):
    err = float(np.linalg.norm(g - ref) / max(np.linalg.norm(ref), 1e-300))
    tol = TOLERANCE[method.check]
    assert np.shape(g) == np.shape(ref) and err <= tol, (
        f"helmholtz n={n}: {method.label} disagrees with adsim reverse mode: relative error "
        f"{err:.3e} > {tol:g}")
    return err


def run_size(n, s, methods, seed=0, smallest=None):
    """All methods at one n: {key: {"timing", "first_call", "error"} or {"skipped": why}}."""
    inst = problems.get("helmholtz").instance(n, seed)
    ref = ad.record(inst.function(), inst.x).gradient(inst.x)
    out = {}
    for m in methods:
        if m.peer and not s.peers:
            out[m.key] = {"skipped": "peers not requested (--no-peers)"}
            continue
        if m.key == "jax" and s.quick and n != smallest:
            out[m.key] = {"skipped": "quick run: op-by-op JAX compiles every primitive for each "
                                     "new shape (seconds); measured at the first size only"}
            continue
        if m.max_n is not None and n > m.max_n and not s.full:
            out[m.key] = {"skipped": f"{m.why_slow}: skipped above n = {m.max_n} "
                                     f"(run with --full)"}
            continue
        try:
            t0 = time.perf_counter()
            fn = m.prepare(inst, s)
            result = fn()
            first_call = time.perf_counter() - t0
        except T.Skip as why:
            out[m.key] = {"skipped": str(why)}
            continue
        entry = {"first_call": first_call}
        if m.kind == "gradient":
            entry["error"] = _check(m, np.asarray(result, dtype=float).reshape(-1), ref, n)
        entry["timing"] = T.measure(fn, s)
        out[m.key] = entry
        del fn
    return out


def _threads_wall(calls, n_threads, per_thread):
    """Wall time for ``n_threads`` threads each running ``calls()`` ``per_thread``
    times, from a common start (thread start-up is not timed)."""
    start = threading.Barrier(n_threads + 1)

    def work():
        start.wait()
        for _ in range(per_thread):
            calls()
    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def thread_throughput(s, n=THREAD_N, n_threads=2, seed=0):
    """Throughput of ``n_threads`` threads replaying one tape (``tape.gradient``)
    relative to one thread: per sample, one thread makes k calls, then each
    of ``n_threads`` threads makes k calls at once; the ratio is
    n_threads * t_one / t_all."""
    inst = problems.get("helmholtz").instance(n, seed)
    tape = ad.record(inst.function(), inst.x)
    x = inst.x
    ref = tape.gradient(x)

    def calls():
        tape.gradient(x)
    per_call = T.measure(calls, s).median
    k = max(10, int(max(4 * s.target, 0.05) / per_call))   # samples of 0.05 s at least
    ratios, one, many = [], [], []
    for _ in range(max(3, s.repeats)):
        one.append(_threads_wall(calls, 1, k))
        many.append(_threads_wall(calls, n_threads, k))
        ratios.append(n_threads * one[-1] / many[-1])
    assert np.array_equal(tape.gradient(x), ref)
    return {"n": n, "threads": n_threads, "calls_per_thread": k, "method": "tape.gradient",
            "one_thread_per_call": statistics.median(one) / k,
            "all_threads_per_call": statistics.median(many) / (n_threads * k),
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
            "ratio_max": max(ratios), "goal": THREAD_GOAL}


def run(s, sizes=None):
    prob = problems.get("helmholtz")
    sizes = sizes or (prob.quick_sizes if s.quick else prob.sizes)
    results = {}
    for n in sizes:
        t0 = time.perf_counter()
        results[n] = run_size(n, s, METHODS, smallest=sizes[0])
        print(f"helmholtz n={n}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    threads = thread_throughput(s)
    print(f"helmholtz threads: {threads['threads']} threads on one tape, n={threads['n']}: "
          f"throughput x{threads['ratio_median']:.2f}", file=sys.stderr, flush=True)
    return {"sizes": list(sizes), "data": prob.data, "methods": {m.key: m.label for m in METHODS},
            "by_size": results, "threads": threads}


# ---- reporting --------------------------------------------------------------------

def _median(res, n, key):
    e = res["by_size"][n].get(key, {})
    return e["timing"].median if "timing" in e else None


def _ratio_table(res, value):
    """Rows of methods, columns of n; ``value(n, key)`` gives a cell."""
    rows = []
    for key, label in res["methods"].items():
        cells = [value(n, key) for n in res["sizes"]]
        if all(c == "–" for c in cells):
            continue
        rows.append([label] + cells)
    return T.table(["method"] + [f"n={n}" for n in res["sizes"]], rows)


def _skips(res):
    notes = {}
    for n in res["sizes"]:
        for key, e in res["by_size"][n].items():
            if "skipped" in e:
                notes.setdefault((res["methods"][key], e["skipped"]), []).append(n)
    return [f"- {label}: {why} (n = {', '.join(map(str, ns))})."
            for (label, why), ns in notes.items()]


def markdown(res, s, machine, figure=None):
    sizes = res["sizes"]
    base = _median(res, sizes[0], "f_numpy")

    def cell(n, key, denom):
        t, d = _median(res, n, key), denom(n)
        return "–" if t is None or not d else T.fmt_ratio(t / d)
    lines = ["## Helmholtz free energy\n", T.header(AREA, s, machine), "",
             "f(x) = RT Σ xᵢ log(xᵢ / (1 − bᵀx)) − xᵀAx / (√8 bᵀx) · "
             "log((1 + (1 + √2) bᵀx) / (1 + (1 − √2) bᵀx)), R = T = 1 (Baydin et al., JMLR 2018, "
             f"Table 4 / Figure 5). Data, seed 0: {res['data']} Every gradient is checked "
             "against adsim's reverse mode (relative error ≤ 1e-8, central differences ≤ 1e-5).\n"]
    if figure:
        lines += [f"![Helmholtz gradient cost]({figure})\n"]
    lines += ["### Time per call (median)\n",
              _ratio_table(res, lambda n, k: T.fmt_time(_median(res, n, k)) if _median(res, n, k)
                           else "–"), "",
              f"### Relative to the NumPy f at n = {sizes[0]}\n",
              _ratio_table(res, lambda n, k: cell(n, k, lambda _: base)), "",
              "### Relative to the NumPy f at the same n\n",
              _ratio_table(res, lambda n, k: cell(n, k, lambda m: _median(res, m, "f_numpy"))), "",
              "### Relative to the tape's zero-order replay (tape.forward) at the same n\n",
              _ratio_table(res, lambda n, k: cell(n, k, lambda m: _median(res, m, "f_tape"))), ""]
    lines += ["`ad.grad` reuses its tape after checking that the function's environment is "
              "unchanged: the matrix A in the closure is read once per call for its content "
              "digest (about memory speed), which at large n costs about as much as one "
              "`tape.gradient`."]
    uncached = [n for n in sizes if 8 * n * n > MAX_ARRAY_BYTES]
    if uncached:
        lines[-1] += (f" Above {MAX_ARRAY_BYTES // 2**30} GB of array data it records again "
                      f"(`reuse_blocked_by` says why): at n = {', '.join(map(str, uncached))} "
                      f"the row \"ad.grad, cached tape\" records the tape at every call.")
    lines[-1] += "\n"
    skips = _skips(res)
    if skips:
        lines += ["Not measured:\n"] + skips
    if "threads" in res:
        lines += ["", _threads_markdown(res["threads"])]
    return "\n".join(lines) + "\n"


def _threads_markdown(th):
    ok = "yes" if th["ratio_median"] >= th["goal"] else "no"
    return "\n".join([
        f"### Threads sharing one tape (n = {th['n']})\n",
        f"{th['threads']} threads each call `{th['method']}` {th['calls_per_thread']} times on one "
        f"tape at once, against one thread alone (BLAS limited to one thread). Throughput ratio "
        f"= {th['threads']} × (time of one thread) / (time of all threads).\n",
        T.table(["time per call, one thread", f"time per call, {th['threads']} threads",
                 "throughput ratio (median, min–max)", f"goal ≥ {th['goal']}"],
                [[T.fmt_time(th["one_thread_per_call"]), T.fmt_time(th["all_threads_per_call"]),
                  f"{th['ratio_median']:.2f} ({th['ratio_min']:.2f}–{th['ratio_max']:.2f})", ok]]),
    ])


def _marker(key):
    return "o" if key.startswith("adsim") else "s" if key.startswith("f_") else "^"


def figure(res, path):
    """Log-log plot like the survey's Figure 5: cost relative to f at n = 1
    (left) and to f at the same n (right). Returns the path, or None without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    sizes = res["sizes"]
    base = _median(res, sizes[0], "f_numpy")
    fig, axes = plt.subplots(1, 2, figsize=(12, 6.2))
    colors = plt.get_cmap("tab10").colors + ("#e6ab02", "#1b9e77")
    fixed = {"f_numpy": "black", "f_tape": "0.55"}
    for i, (key, label) in enumerate(res["methods"].items()):
        pts = [(n, _median(res, n, key), _median(res, n, "f_numpy")) for n in sizes]
        pts = [p for p in pts if p[1] is not None]
        if not pts:
            continue
        style = dict(color=fixed.get(key, colors[i % len(colors)]), ms=4, label=label,
                     ls="-" if key.startswith(("adsim", "f_")) else "--",
                     marker=_marker(key),
                     lw=2.2 if key.startswith("f_") else 1.4)
        ns = [p[0] for p in pts]
        axes[0].loglog(ns, [p[1] / base for p in pts], **style)
        axes[1].loglog(ns, [p[1] / p[2] for p in pts], **style)
    axes[0].set_title(f"time / time of NumPy f at n = {sizes[0]}")
    axes[1].set_title("time / time of NumPy f at the same n")
    for ax in axes:
        ax.set_xlabel("n")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    p = T.parser(AREA, __doc__.splitlines()[0])
    p.add_argument("--sizes", type=lambda v: [int(a) for a in v.split(",")], default=None,
                   help="comma-separated sizes n (default: the registry's)")
    args = p.parse_args(argv)
    s = T.settings_from(args, AREA)
    machine = T.machine_info(T.limit_threads(s))
    res = run(s, args.sizes)
    fig = figure(res, s.figures_dir / "helmholtz.png") if s.figures_dir else None
    rel = None
    if fig is not None:
        rel = ("figures/helmholtz.png" if s.write_docs else str(fig))
    md = markdown(res, s, machine, rel)
    print(md)
    print(f"wrote {T.write_json(AREA, s, machine, res)}" + (f" and {fig}" if fig else ""))
    if s.write_docs:
        print(f"updated {T.update_docs(AREA, md, s)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
