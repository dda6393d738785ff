"""Sparse Jacobians: compressed sweeps against dense and finite differences.

Problem: the 2-D Bratu residual of ``benchmarks/problems.py`` (5-point
Laplacian plus h^2 lambda exp(u) on a k x k grid, n = k^2 unknowns) at
n = 32^2 = 1024, 10^4 and 316^2 = 99856 (about 10^3, 10^4, 10^5);
``--quick``: n = 400 and 2500.

For each n:

* ``tape.forward``: zero-order replay of the residual (the unit of cost);
* adsim sparse Jacobian: ``plan(x, lam)`` of :func:`sparse_jacobian_plan`,
  one compressed vector-mode sweep plus recovery into CSR; goal
  time / replay <= ncolors + 3; interpreted (``adsim.set_fusion("never")``)
  and with the plan's tape fused (``plan.tape.fuse()``, as a plan evaluated
  many times ends up by the default policy; the compile time is reported as
  its setup);
* adsim dense Jacobian (``adsim.jacobian``, n forward directions) where its
  n x n result fits (n <= 10^4; skipped above unless ``--full``);
* SciPy finite differences with column grouping:
  ``scipy.optimize._numdiff.approx_derivative(F, x, sparsity=(P, groups))``
  with the groups computed once (their cost is reported apart);
* JAX + sparsejac (``jax.jit(sparsejac.jacfwd(F, sparsity))``, given our
  pattern) and CasADi (SX graph, ``casadi.jacobian``) when installed.
  Without sparsejac, JAX does what sparsejac does, written here: a column
  coloring of the pattern (adsim's, the same colors sparsejac's greedy
  coloring finds on a stencil), ``jax.jvp`` over the compressed seed matrix
  by ``jax.vmap``, the nonzeros gathered from the compressed product, all
  in one ``jax.jit``.

Head to head: the fused plan and JAX + sparsejac timed interleaved (rounds
of a batch of calls of each in turn, medians over the rounds), so that a
change of the machine's load hits both alike; skipped, saying so, without
sparsejac.

Every Jacobian is checked against adsim's sparse one (max abs difference
<= 1e-10 relative, 1e-5 for finite differences). At the largest n the
one-time costs are reported too: recording, pattern detection and coloring
(goal: detection + coloring under 1 s), and SciPy's grouping.

Run as ``python -m benchmarks sparse [--quick] [--full]``; prints a markdown
table and writes ``benchmarks/results/sparse.json``.
"""
import importlib.util
import os
import sys
import time

import numpy as np

import adsim as ad
from adsim.sparse.api import jacobian_sparsity, sparse_jacobian_plan

from . import problems
from . import timing as T
from .recording import interleaved

AREA = "sparse"
SIZES = (32, 100, 316)          # grid sides: n about 10^3, 10^4 and 10^5
QUICK_SIZES = (20, 50)
DENSE_MAX = 10_000              # dense Jacobians above this only with --full
LAMBDA = 6.0
GOALS = {"ratio_over_colors": 3.0, "detect_and_color_seconds": 1.0}
HEAD_TO_HEAD_ELEMENTS = 200_000         # calls per round: this many grid points in all


def residual(u, lam, xp=np):
    return problems.bratu2d(u, lam, xp=xp)


# ---- methods: each returns (callable giving a scipy sparse or dense J, setup seconds) ------

def _scipy_grouped(x, pattern, s):
    from scipy.optimize._numdiff import approx_derivative, group_columns
    t0 = time.perf_counter()
    groups = group_columns(pattern)
    setup = time.perf_counter() - t0

    def F(u):
        return residual(u, LAMBDA)
    return (lambda: approx_derivative(F, x, sparsity=(pattern, groups), method="2-point"),
            setup, int(groups.max()) + 1)


def _dense(x, pattern, s):
    if x.size > DENSE_MAX and not s.full:
        raise T.Skip(f"n x n = {x.size ** 2 * 8 / 2 ** 30:.0f} GiB dense result (--full runs it)")
    jac = ad.jacobian(residual)
    jac(x, LAMBDA)
    return (lambda: jac(x, LAMBDA)), 0.0, x.size


def _jax_sparsejac(x, pattern, s):
    if s.threads == 1 and "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
    jax = T.peer("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    t0 = time.perf_counter()
    try:
        sparsejac = T.peer("sparsejac")
    except T.Skip:
        jac = _jax_compressed_jacfwd(jax, jnp, pattern)
    else:
        import jax.experimental.sparse as jsparse
        sparsity = jsparse.BCOO.from_scipy_sparse(pattern.astype(np.float64))
        jac = jax.jit(sparsejac.jacfwd(lambda u: residual(u, LAMBDA, xp=jnp), sparsity=sparsity))
    xj = jnp.asarray(x)
    jac(xj).block_until_ready()                    # compile
    setup = time.perf_counter() - t0

    def evaluate():
        return jac(xj).block_until_ready()
    return evaluate, setup, None


def _jax_compressed_jacfwd(jax, jnp, pattern):
    """What ``sparsejac.jacfwd`` does, for when it is not installed: one
    ``jvp`` per color of a column coloring, batched by ``vmap``, and the
    nonzeros read from the compressed product, jitted together. Returns a
    function of u giving the Jacobian as a scipy CSR array (the conversion
    is outside the timing: JAX's result is the array of nonzeros)."""
    from adsim.sparse.coloring import column_coloring
    coloring = column_coloring(pattern)
    coo = pattern.tocoo()
    rows, cols = np.asarray(coo.row), np.asarray(coo.col)
    seeds = jnp.asarray(coloring.seed().T)          # (colors, n)
    color_of_entry = jnp.asarray(coloring.colors[cols])

    @jax.jit
    def nonzeros(u):
        def directional(seed):
            return jax.jvp(lambda v: residual(v, LAMBDA, xp=jnp), (u,), (seed,))[1]
        compressed = jax.vmap(directional)(seeds)   # (colors, m)
        return compressed[color_of_entry, rows]

    return _CompressedJacobian(nonzeros, rows, cols, pattern.shape)


class _CompressedJacobian:
    """JAX's nonzeros by ``__call__`` (timed), as a CSR array by ``csr``."""

    def __init__(self, nonzeros, rows, cols, shape):
        self.nonzeros, self.rows, self.cols, self.shape = nonzeros, rows, cols, shape

    def __call__(self, u):
        return _Nonzeros(self.nonzeros(u), self)


class _Nonzeros:
    def __init__(self, data, jac):
        self.data, self.jac = data, jac

    def block_until_ready(self):
        self.data.block_until_ready()
        return self

    def csr(self):
        import scipy.sparse as sp
        return sp.csr_array((np.asarray(self.data), (self.jac.rows, self.jac.cols)),
                            shape=self.jac.shape)


def _casadi(x, pattern, s):
    ca = T.peer("casadi")
    n = x.size
    k = int(round(np.sqrt(n)))
    t0 = time.perf_counter()
    u = ca.SX.sym("u", n)
    U = ca.reshape(u, k, k)                # column-major: the transpose of NumPy's view,
    zr, zc = ca.SX.zeros(1, k), ca.SX.zeros(k, 1)   # harmless for a symmetric stencil
    up = ca.vertcat(zr, U[:-1, :])
    down = ca.vertcat(U[1:, :], zr)
    left = ca.horzcat(zc, U[:, :-1])
    right = ca.horzcat(U[:, 1:], zc)
    h = 1.0 / (k + 1)
    F = ca.reshape(up + down + left + right - 4.0 * U + (h * h * LAMBDA) * ca.exp(U), n, 1)
    jac = ca.Function("bratu_jacobian", [u], [ca.jacobian(F, u)])
    setup = time.perf_counter() - t0
    return (lambda: jac(x)), setup, None


_HAS_SPARSEJAC = importlib.util.find_spec("sparsejac") is not None
PEERS = [("scipy_fd_grouped", "SciPy finite differences, grouped", _scipy_grouped, None),
         ("adsim_dense", "adsim dense (`adsim.jacobian`)", _dense, None),
         ("jax_sparsejac", "JAX + sparsejac (jit, jacfwd)" if _HAS_SPARSEJAC else
          "JAX, jvp over the compressed seeds by vmap (jit; sparsejac's method, not installed)",
          _jax_sparsejac, "jax"),
         ("casadi", "CasADi (SX, jacobian)", _casadi, "casadi")]


def _as_csr(J, shape):
    import scipy.sparse as sp
    if isinstance(J, _Nonzeros):                   # JAX's compressed jvp
        J = J.csr()
    elif hasattr(J, "sparse"):                     # CasADi DM
        J = J.sparse()
    elif hasattr(J, "todense") and not sp.issparse(J):   # JAX BCOO
        J = sp.csr_array((np.asarray(J.data), np.asarray(J.indices).T), shape=J.shape)
    J = sp.csr_array(J) if sp.issparse(J) else sp.csr_array(np.asarray(J).reshape(shape))
    return J


def _difference(J, reference):
    diff = abs(_as_csr(J, reference.shape) - reference)
    return float(diff.max()) / max(float(abs(reference).max()), 1e-300)


# ---- running ----------------------------------------------------------------------------

def one_size(k, s):
    previous = ad.set_fusion("never")       # the interpreter first, then fused explicitly
    try:
        return _one_size(k, s)
    finally:
        ad.set_fusion(previous)


def _one_size(k, s):
    n = k * k
    prob = problems.get("bratu2d")
    x = prob.instance(n).x
    t0 = time.perf_counter()
    plan = sparse_jacobian_plan(residual, x, LAMBDA)
    setup = time.perf_counter() - t0
    reference = plan(x, LAMBDA)
    pattern = plan.pattern
    tape = plan.tape
    row = {"n": n, "grid": k, "nnz": int(pattern.nnz), "ncolors": plan.ncolors,
           "mode": plan.mode, "plan_setup": setup, "plan_timings": dict(plan.timings),
           "forward": T.measure(lambda: tape.forward(x, LAMBDA), s),
           "sparse": T.measure(lambda: plan(x, LAMBDA), s),
           "numpy_f": T.measure(lambda: residual(x, LAMBDA), s), "peers": {}}
    try:
        t0 = time.perf_counter()
        fusion = tape.fuse()
        row["fuse_setup"] = time.perf_counter() - t0
        row["fused_runs"] = f"{fusion.fused} of {fusion.runs}"
        error = _difference(plan(x, LAMBDA), reference)
        assert error <= 1e-12, f"the fused plan differs from the interpreted one by {error:.2e}"
        row["sparse_fused"] = T.measure(lambda: plan(x, LAMBDA), s)
        row["forward_fused"] = T.measure(lambda: tape.forward(x, LAMBDA), s)
    except ad.errors.NoCompiler as why:
        row["fused_skipped"] = str(why)
    t0 = time.perf_counter()                # the pattern alone: record + detect
    jacobian_sparsity(residual, x, LAMBDA)
    row["record_and_detect"] = time.perf_counter() - t0
    peer_calls = {}
    for key, label, make, peer in PEERS:
        if peer is not None and not s.peers:
            row["peers"][key] = {"label": label, "skipped": "--no-peers"}
            continue
        try:
            fn, peer_setup, directions = make(x, pattern, s)
        except T.Skip as why:
            row["peers"][key] = {"label": label, "skipped": str(why)}
            continue
        peer_calls[key] = fn
        error = _difference(fn(), reference)
        tolerance = 1e-5 if key == "scipy_fd_grouped" else 1e-10
        assert error <= tolerance, f"{label} differs from adsim's sparse Jacobian by {error:.2e}"
        repeats = 1 if key == "adsim_dense" else None
        row["peers"][key] = {"label": label, "time": T.measure(fn, s, repeats=repeats),
                             "setup": peer_setup, "directions": directions,
                             "max_relative_difference": error}
    row["head_to_head"] = _head_to_head(plan, x, peer_calls.get("jax_sparsejac"), row, s)
    return row


def _head_to_head(plan, x, jax_call, row, s):
    """The fused plan and JAX + sparsejac timed interleaved, or why not."""
    if "sparse_fused" not in row:
        return {"skipped": "no fused plan (no C compiler)"}
    if not s.peers:
        return {"skipped": "--no-peers"}
    if jax_call is None or not _HAS_SPARSEJAC:
        return {"skipped": "sparsejac not installed (the `bench` extra of pyproject.toml)"}
    batch = max(1, HEAD_TO_HEAD_ELEMENTS // x.size)
    timings = interleaved({"adsim": lambda: plan(x, LAMBDA), "jax": jax_call}, s, batch)
    return {"adsim": timings["adsim"], "jax": timings["jax"], "batch": batch}


def run(s):
    return {"goals": GOALS, "rows": [one_size(k, s) for k in (QUICK_SIZES if s.quick else SIZES)],
            "peers": T.peer_versions() | {"sparsejac": _version("sparsejac")}}


def _version(name):
    import importlib.metadata as md
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _mark(ok):
    return "yes" if ok else "**no**"


def markdown(res, s, machine):
    lines = ["## Sparse Jacobians\n", T.header(AREA, s, machine), "",
             "2-D Bratu residual (5-point stencil), `plan = sparse_jacobian_plan(F, x, lam)`; "
             "ratios are to the tape's zero-order replay `tape.forward` (goal for `plan(x)`: "
             "at most ncolors + 3).", ""]
    rows = []
    for r in res["rows"]:
        base = r["forward"].median
        goal = r["ncolors"] + GOALS["ratio_over_colors"]
        ratio = r["sparse"].median / base
        rows.append((f"n = {r['n']}", "NumPy residual", T.fmt_timing(r["numpy_f"]),
                     T.fmt_ratio(r["numpy_f"].median / base), "", ""))
        rows.append((f"n = {r['n']}", "`tape.forward` (replay)", T.fmt_timing(r["forward"]), "1",
                     "", ""))
        rows.append((f"n = {r['n']}", f"adsim sparse ({r['mode']}, {r['ncolors']} colors)",
                     T.fmt_timing(r["sparse"]), T.fmt_ratio(ratio),
                     f"≤ {goal:g}: {_mark(ratio <= goal)}", f"{r['plan_setup']:.3g} s"))
        if "sparse_fused" in r:
            rows.append((f"n = {r['n']}", f"`tape.forward`, fused ({r['fused_runs']} runs)",
                         T.fmt_timing(r["forward_fused"]),
                         T.fmt_ratio(r["forward_fused"].median / base), "", ""))
            fused_ratio = r["sparse_fused"].median / base
            rows.append((f"n = {r['n']}", "adsim sparse, fused (`plan.tape.fuse()`)",
                         T.fmt_timing(r["sparse_fused"]), T.fmt_ratio(fused_ratio),
                         f"≤ {goal:g}: {_mark(fused_ratio <= goal)}",
                         f"+ {r['fuse_setup']:.3g} s compiling"))
        elif "fused_skipped" in r:
            rows.append((f"n = {r['n']}", "adsim sparse, fused",
                         f"skipped: {r['fused_skipped']}", "–", "", ""))
        rows.append(_head_to_head_row(r))
        for key, p in r["peers"].items():
            if "skipped" in p:
                rows.append((f"n = {r['n']}", p["label"], f"skipped: {p['skipped']}", "–", "",
                             ""))
                continue
            extra = f" ({p['directions']} evaluations)" if p.get("directions") else ""
            rows.append((f"n = {r['n']}", p["label"] + extra, T.fmt_timing(p["time"]),
                         T.fmt_ratio(p["time"].median / base), "", f"{p['setup']:.3g} s"))
    lines.append(T.table(["size", "method", "time per Jacobian", "/ replay", "goal",
                          "one-time setup"], rows))
    last = res["rows"][-1]
    timings = last["plan_timings"]
    detect_color = timings["detect"] + timings["color"]
    lines += ["", f"One-time costs at n = {last['n']} ({last['nnz']} nonzeros): recording "
              f"{timings['record']:.3g} s, detection {timings['detect']:.3g} s, coloring "
              f"{timings['color']:.3g} s; detection + coloring {detect_color:.3g} s (goal < "
              f"{GOALS['detect_and_color_seconds']:g} s: {_mark(detect_color < 1.0)}); "
              f"`jacobian_sparsity` (record + detect) {last['record_and_detect']:.3g} s.", ""]
    return "\n".join(lines) + "\n"


def _head_to_head_row(r):
    label = "adsim plan, fused, against JAX + sparsejac (timed interleaved)"
    h = r["head_to_head"]
    if "skipped" in h:
        return (f"n = {r['n']}", label, f"skipped: {h['skipped']}", "–", "", "")
    ratio = h["adsim"].median / h["jax"].median
    verdict = f"{1 / ratio:.2g}× faster" if ratio < 1 else f"{ratio:.2g}× slower"
    return (f"n = {r['n']}", label,
            f"adsim {T.fmt_time(h['adsim'].median)}, JAX {T.fmt_time(h['jax'].median)}",
            T.fmt_ratio(ratio) + " (adsim / JAX)", f"faster than JAX: {_mark(ratio < 1)}",
            f"adsim {verdict}")


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
