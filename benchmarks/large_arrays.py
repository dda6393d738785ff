"""Large arrays: replays against the NumPy code they recorded and against JAX.

Problems (the fields simulations are made of):

* Rosenbrock (``problems.rosenbrock``, pure arithmetic on two slices) at
  n = 10^4, 10^5, 10^6;
* a 2-D reaction–diffusion residual on a k x k grid (5-point stencil through
  2-d slices, ``exp``, ``tanh``, a sum of squares) at k = 100, 316, 1000.

For each: the NumPy f; a copy of x (the memory bandwidth the machine gives
one core: the physical limit of a sweep that reads x and writes a gradient);
adsim's ``tape.forward``, ``tape.gradient`` and ``tape.hvp``, interpreted
(``adsim.set_fusion("never")``) and after ``tape.fuse()`` (what the default
policy does on its own once a tape's replays have paid for compiling: runs of elementwise ops compiled into one loop; the
fused results are checked against the interpreter's; ratios take the faster
of the two); and, when installed,
JAX ``jit`` of f, ``grad`` and a forward-over-reverse hvp. The gradient's
achieved bandwidth counts the 16 n bytes it must move (read x, write the
gradient).

Goals (issue "large arrays"): forward <= 1.0x NumPy f; gradient <= 1.0x and
hvp <= 1.5x JAX jit at n = 10^5 and 10^6.

Run as ``python -m benchmarks large_arrays [--quick]``.
"""
import sys

import numpy as np

import adsim as ad
from adsim.errors import NoCompiler

from . import problems
from . import timing as T

AREA = "large_arrays"
GOALS = {"forward_over_numpy": 1.0, "gradient_over_jax": 1.0, "hvp_over_jax": 1.5}


def reaction_diffusion(u, xp=np):
    k = int(round(u.size ** 0.5))
    U = u.reshape(k, k)
    lap = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4.0 * U[1:-1, 1:-1]
    r = 0.1 * lap + xp.exp(-U[1:-1, 1:-1]) - xp.tanh(U[1:-1, 1:-1])
    return xp.sum(r * r)


def rosenbrock(x, xp=np):
    return problems.rosenbrock(x, xp=xp)


CASES = [("Rosenbrock", rosenbrock, (10 ** 4, 10 ** 5, 10 ** 6), (10 ** 4, 10 ** 5)),
         ("reaction–diffusion", reaction_diffusion, (100 ** 2, 316 ** 2, 1000 ** 2),
          (100 ** 2, 316 ** 2))]


def _jax_methods(f, x, s):
    try:
        jax = T.jax_peer(s)
    except T.Skip as why:
        return {"skipped": str(why)}
    jnp = jax.numpy
    fj = jax.jit(lambda z: f(z, xp=jnp))
    gj = jax.jit(jax.grad(lambda z: f(z, xp=jnp)))
    hj = jax.jit(lambda z, v: jax.jvp(jax.grad(lambda w: f(w, xp=jnp)), (z,), (v,))[1])
    xj, vj = jnp.asarray(x), jnp.asarray(np.ones_like(x))
    return {"f": T.measure(lambda: fj(xj).block_until_ready(), s),
            "gradient": T.measure(lambda: gj(xj).block_until_ready(), s),
            "hvp": T.measure(lambda: hj(xj, vj).block_until_ready(), s)}


def one_case(name, f, n, s):
    x = np.random.default_rng(0).uniform(0.1, 1.0, n)
    v = np.ones(n)
    plain, fused = ad.record(f, x), ad.record(f, x)
    try:
        fusion = str(fused.fuse())
    except NoCompiler as why:
        fusion, fused = f"not fused: {why}", None
    row = {"problem": name, "n": n, "fusion": fusion,
           "numpy_f": T.measure(lambda: f(x), s),
           "copy": T.measure(lambda: x.copy(), s),
           "forward": T.measure(lambda: plain.forward(x), s),
           "gradient": T.measure(lambda: plain.gradient(x), s),
           "hvp": T.measure(lambda: plain.hvp(x, v), s)}
    if fused is not None:
        g, g_fused = plain.gradient(x), fused.gradient(x)
        error = np.max(np.abs(g - g_fused)) / np.max(np.abs(g))
        assert error <= 1e-11, f"fused gradient of {name} differs by {error:.2e}"
        h, h_fused = plain.hvp(x, v), fused.hvp(x, v)
        error_hvp = np.max(np.abs(h - h_fused)) / np.max(np.abs(h))
        assert error_hvp <= 1e-11, f"fused hvp of {name} differs by {error_hvp:.2e}"
        row |= {"fused_forward": T.measure(lambda: fused.forward(x), s),
                "fused_gradient": T.measure(lambda: fused.gradient(x), s),
                "fused_hvp": T.measure(lambda: fused.hvp(x, v), s),
                "fused_difference": float(max(error, error_hvp))}
    row["jax"] = _jax_methods(f, x, s) if s.peers else {"skipped": "--no-peers"}
    return row


def run(s):
    rows = []
    previous = ad.set_fusion("never")       # the interpreter's rows stay interpreted
    try:
        for name, f, sizes, quick in CASES:
            rows += [one_case(name, f, n, s) for n in (quick if s.quick else sizes)]
    finally:
        ad.set_fusion(previous)
    return {"goals": GOALS, "rows": rows, "peers": T.peer_versions()}


def _ms(t):
    return "–" if t is None else f"{1e3 * t.median:.3g}"


def markdown(res, s, machine):
    lines = ["## Large arrays\n", T.header(AREA, s, machine), "",
             "Milliseconds (medians). Ratios: `forward` / NumPy f (goal ≤ "
             f"{GOALS['forward_over_numpy']:g}); gradient and hvp / JAX jit (goals ≤ "
             f"{GOALS['gradient_over_jax']:g} and ≤ {GOALS['hvp_over_jax']:g}). "
             "Fused: after `tape.fuse()`. Bandwidth: the 16 n bytes a gradient must move "
             "per second, against a copy of x (the same 16 n bytes). CPU time: of the "
             "process, over all its threads (JAX's XLA runs its large loops on every "
             "core even with one thread asked for; adsim's replay runs on one).", ""]
    rows = []
    for r in res["rows"]:
        jax = r["jax"]
        has_jax = "skipped" not in jax
        fused_f, fused_g, fused_h = r.get("fused_forward"), r.get("fused_gradient"), \
            r.get("fused_hvp")
        best_g = min(r["gradient"].median, fused_g.median if fused_g else np.inf)
        best_h = min(r["hvp"].median, fused_h.median if fused_h else np.inf)
        best_f = min(r["forward"].median, fused_f.median if fused_f else np.inf)
        # CPU time: XLA runs large fused loops on every core even when asked
        # for one thread (its Eigen flag does not reach them); adsim uses one
        best_g_cpu = min(r["gradient"].cpu_median,
                         fused_g.cpu_median if fused_g else np.inf)
        bandwidth = f"{16 * r['n'] / best_g / 1e9:.3g} / {16 * r['n'] / r['copy'].median / 1e9:.3g}"
        rows.append((r["problem"], f"{r['n']:,}", _ms(r["numpy_f"]), _ms(r["forward"]),
                     _ms(fused_f), T.fmt_ratio(best_f / r["numpy_f"].median),
                     _ms(r["gradient"]), _ms(fused_g), _ms(r["hvp"]), _ms(fused_h),
                     _ms(jax.get("f")), _ms(jax.get("gradient")), _ms(jax.get("hvp")),
                     T.fmt_ratio(best_g / jax["gradient"].median) if has_jax else "–",
                     T.fmt_ratio(best_g_cpu / jax["gradient"].cpu_median) if has_jax else "–",
                     T.fmt_ratio(best_h / jax["hvp"].median) if has_jax else "–",
                     bandwidth))
    lines.append(T.table(["problem", "n", "NumPy f", "forward", "fused forward", "forward / f",
                          "gradient", "fused gradient", "hvp", "fused hvp", "JAX f", "JAX grad",
                          "JAX hvp",
                          "gradient / JAX", "same, CPU time", "hvp / JAX",
                          "GB/s gradient / copy"], rows))
    skipped = {r["jax"]["skipped"] for r in res["rows"] if "skipped" in r["jax"]}
    if skipped:
        lines += ["", f"JAX: {'; '.join(sorted(skipped))}."]
    lines += ["", "Fusion: " + "; ".join(f"{r['problem']} n = {r['n']:,}: "
                                          f"{r['fusion'].splitlines()[0]}" for r in res["rows"])]
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
