"""Hessian-vector products: cost relative to evaluating f.

A Hessian-vector product by reverse on forward (one tangent sweep carrying
v, one second-order adjoint sweep) should cost a small multiple of f: the
usual bound is about 4–5 zero-order evaluations for scalar f (Griewank and
Walther [1]_, Section 5.4, or Christianson [2]_ for reverse on forward). The
goal here is ``tape.hvp`` / ``tape.forward`` <= 4.

Problems from ``benchmarks/problems.py``: the Helmholtz free energy at
n = 50 and 1000 and the extended Rosenbrock chain at n = 10^5 (``--quick``:
Helmholtz at n = 8 and 50, Rosenbrock at n = 1000). Each problem gets one
seeded point x and one direction v ~ N(0, 1), and every method's H v is
checked against adsim's (relative 2-norm error <= 1e-8).

Methods: the NumPy f; adsim's zero-order replay (``tape.forward``), gradient
(``tape.gradient``), ``tape.hvp``, ``tape.gradient_and_hvp``, ``ad.hvp`` (the
functional API with its cached tape) and ``tape.hvp`` with 8 directions at
once (time per direction); and, when installed, autograd's
``hessian_vector_product`` (reverse on reverse), JAX ``jit(jvp(grad(f)))``
(forward on reverse) and PyTorch double backward (reverse on reverse).

``--breakdown`` also times the compiled sweeps behind ``tape.hvp`` on
their own (forward, tangent, second-order adjoint) to show where the time
goes. Times are medians with the min–max spread (``benchmarks/timing.py``).
The markdown table is printed and the numbers written to
``benchmarks/results/hvp.json``; full runs also update the section of
docs/benchmarks.md (``--no-docs`` leaves it alone).

References
----------
.. [1] A. Griewank, A. Walther, *Evaluating Derivatives*, 2nd ed., SIAM
   2008, chapters 4–5.
.. [2] B. Christianson, "Automatic Hessians by reverse accumulation", IMA J.
   Numer. Anal. 12(2), 1992.
"""
import sys
import time

import numpy as np

import adsim as ad

from . import problems
from . import timing as T

AREA = "hvp"
GOAL = 4.0                           # tape.hvp / tape.forward
CASES = (("helmholtz", 50), ("helmholtz", 1000), ("rosenbrock", 10 ** 5))
QUICK_CASES = (("helmholtz", 8), ("helmholtz", 50), ("rosenbrock", 1000))
VECTOR_K = 8
TOLERANCE = 1e-8


# ---- methods: prepare(inst, v) -> callable of no arguments -----------------------

def _f_numpy(inst, v):
    f, x = inst.function(), inst.x
    return lambda: f(x)


def _recorded(inst):
    return ad.record(inst.function(), inst.x)


def _f_tape(inst, v):
    tape, x = _recorded(inst), inst.x
    return lambda: tape.forward(x)


def _gradient(inst, v):
    tape, x = _recorded(inst), inst.x
    return lambda: tape.gradient(x)


def _tape_hvp(inst, v):
    tape, x = _recorded(inst), inst.x
    return lambda: tape.hvp(x, v)


def _tape_gradient_and_hvp(inst, v):
    tape, x = _recorded(inst), inst.x
    return lambda: tape.gradient_and_hvp(x, v)[1]


def _api_hvp(inst, v):
    f, x = inst.function(), inst.x
    ad.hvp(f, x, v)
    return lambda: ad.hvp(f, x, v)


def _tape_hvp_vector(inst, v):
    tape, x = _recorded(inst), inst.x
    V = np.repeat(v[:, None], VECTOR_K, axis=1)
    return lambda: tape.hvp(x, V)[:, 0]


def _peer_params(inst, convert):
    return tuple(convert(p) for p in inst.params)


def _autograd(inst, v):
    autograd = T.peer("autograd")
    import autograd.numpy as anp
    hvp = autograd.hessian_vector_product(inst.function(anp))
    x = inst.x
    return lambda: hvp(x, v)


def _jax(inst, v):
    jax = T.peer("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    params = _peer_params(inst, jnp.asarray)
    f = inst.problem.f
    grad = jax.grad(lambda x: f(x, *params, xp=jnp))
    hvp = jax.jit(lambda x, v: jax.jvp(grad, (x,), (v,))[1])
    x, vj = jnp.asarray(inst.x), jnp.asarray(v)
    return lambda: np.asarray(hvp(x, vj).block_until_ready())


def _torch(inst, v):
    torch = T.peer("torch")
    params = _peer_params(inst, torch.from_numpy)
    f = inst.problem.f
    x = torch.tensor(inst.x, dtype=torch.float64, requires_grad=True)
    vt = torch.from_numpy(v)

    def hvp():
        (g,) = torch.autograd.grad(f(x, *params, xp=torch), x, create_graph=True)
        (hv,) = torch.autograd.grad(g, x, grad_outputs=vt)
        return hv.numpy()
    return hvp


METHODS = [  # key, label, kind, prepare, peer
    ("f_numpy", "f: plain NumPy", "f", _f_numpy, None),
    ("f_tape", "f: tape.forward (zero-order replay)", "f", _f_tape, None),
    ("gradient", "adsim tape.gradient", "gradient", _gradient, None),
    ("tape_hvp", "adsim tape.hvp", "hvp", _tape_hvp, None),
    ("tape_gradient_and_hvp", "adsim tape.gradient_and_hvp", "hvp", _tape_gradient_and_hvp, None),
    ("api_hvp", "adsim ad.hvp (cached tape)", "hvp", _api_hvp, None),
    ("tape_hvp_vector", f"adsim tape.hvp, {VECTOR_K} directions (per direction)", "hvp",
     _tape_hvp_vector, None),
    ("autograd", "autograd hessian_vector_product", "hvp", _autograd, "autograd"),
    ("jax_jit", "JAX jit(jvp(grad(f)))", "hvp", _jax, "jax"),
    ("torch", "PyTorch double backward (CPU)", "hvp", _torch, "torch"),
]
PER_CALL = {"tape_hvp_vector": VECTOR_K}


# ---- running -------------------------------------------------------------------

def run_case(name, n, s, seed=0):
    """All methods on one problem instance."""
    inst = problems.get(name).instance(n, seed)
    v = np.random.default_rng(seed + 1).standard_normal(n)
    ref = _recorded(inst).hvp(inst.x, v)
    out = {}
    for key, label, kind, prepare, peer in METHODS:
        if peer and not s.peers:
            out[key] = {"skipped": "peers not requested (--no-peers)"}
            continue
        try:
            t0 = time.perf_counter()
            fn = prepare(inst, v)
            result = fn()
            first = time.perf_counter() - t0
        except T.Skip as why:
            out[key] = {"skipped": str(why)}
            continue
        entry = {"first_call": first}
        if kind == "hvp":
            hv = np.asarray(result, dtype=float).reshape(-1)
            err = float(np.linalg.norm(hv - ref) / max(np.linalg.norm(ref), 1e-300))
            assert err <= TOLERANCE, f"{name} n={n}: {label} differs from adsim's H v by {err:.2e}"
            entry["error"] = err
        timing = T.measure(fn, s)
        entry["timing"] = timing.per(PER_CALL[key]) if key in PER_CALL else timing
        out[key] = entry
        del fn
    return out


def run(s, cases=None, with_breakdown=False):
    cases = cases or (QUICK_CASES if s.quick else CASES)
    results = []
    for name, n in cases:
        t0 = time.perf_counter()
        results.append({"problem": name, "n": n, "methods": run_case(name, n, s)})
        if with_breakdown:
            results[-1]["breakdown"] = breakdown(name, n, s)
        print(f"hvp {name} n={n}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return {"goal": GOAL, "labels": {key: label for key, label, *_ in METHODS}, "cases": results}


def breakdown(name, n, s, seed=0):
    """Where ``tape.hvp`` spends its time: the compiled sweeps called directly
    (private methods of the tape, no argument shaping) against the public
    call. ``second_order`` is the second-order adjoint sweep alone (the
    difference of the two sweep calls), ``python`` the shaping around them."""
    inst = problems.get(name).instance(n, seed)
    tape, x = _recorded(inst), inst.x
    xs = tape._inputs(x)
    V = np.random.default_rng(seed + 1).standard_normal((1, n))
    w = np.ones(tuple(tape.output_shape))
    t = {"forward_sweep": T.measure(lambda: tape._forward(xs), s),
         "tangent_sweep_keeping": T.measure(lambda: tape._tangent(xs, [V], True), s),
         "tangent_and_second_order_sweeps": T.measure(lambda: tape._soadjoint(xs, [V], w), s),
         "tape_hvp": T.measure(lambda: tape.hvp(x, V[0]), s)}
    med = {k: v.median for k, v in t.items()}
    return {"timings": t, "arena_elements": tape.arena_elements, "ops": len(tape),
            "second_order": med["tangent_and_second_order_sweeps"] - med["tangent_sweep_keeping"],
            "python": med["tape_hvp"] - med["tangent_and_second_order_sweeps"]}


def breakdown_markdown(res):
    rows = []
    for c in res["cases"]:
        b = c.get("breakdown")
        if not b:
            continue
        f = b["timings"]["forward_sweep"].median
        rows.append([f"{c['problem']} n={c['n']}", b["ops"], b["arena_elements"], T.fmt_time(f)]
                    + [T.fmt_ratio(b["timings"][k].median / f) for k in
                       ("tangent_sweep_keeping", "tangent_and_second_order_sweeps", "tape_hvp")]
                    + [T.fmt_ratio(b["second_order"] / f), T.fmt_ratio(b["python"] / f)])
    if not rows:
        return ""
    return ("### Where tape.hvp spends its time (multiples of the bare forward sweep)\n\n"
            + T.table(["case", "ops", "arena doubles", "forward sweep", "tangent (keeping)",
                       "tangent + second order", "tape.hvp", "second-order sweep alone",
                       "Python shaping"], rows) + "\n")


# ---- reporting --------------------------------------------------------------------

def _median(case, key):
    e = case["methods"].get(key, {})
    return e["timing"].median if "timing" in e else None


def ratio(case, key, base):
    t, b = _median(case, key), _median(case, base)
    return None if t is None or not b else t / b


def markdown(res, s, machine):
    cases = res["cases"]
    heads = [f"{c['problem']} n={c['n']}" for c in cases]

    def rows(cell):
        out = []
        for key, label in res["labels"].items():
            cells = [cell(c, key) for c in cases]
            if any(x != "–" for x in cells):
                out.append([label] + cells)
        return out

    def timing_cell(c, key):
        e = c["methods"].get(key, {})
        return T.fmt_timing(e["timing"]) if "timing" in e else "–"
    verdict = ", ".join(f"{h}: {T.fmt_ratio(ratio(c, 'tape_hvp', 'f_tape'))}"
                        for h, c in zip(heads, cases))
    lines = ["## Hessian-vector products\n", T.header(AREA, s, machine), "",
             "H v by reverse on forward (one tangent and one second-order adjoint sweep). "
             f"Goal: `tape.hvp` / `tape.forward` ≤ {GOAL:g}; measured: {verdict}. Every H v "
             f"agrees with adsim's to a relative error ≤ {TOLERANCE:g}.\n",
             "### Time per call: median (min–max)\n",
             T.table(["method"] + heads, rows(timing_cell)), "",
             "### Relative to the tape's zero-order replay (tape.forward)\n",
             T.table(["method"] + heads, rows(lambda c, k: T.fmt_ratio(ratio(c, k, "f_tape")))), "",
             "### Relative to the plain NumPy f\n",
             T.table(["method"] + heads,
                     rows(lambda c, k: T.fmt_ratio(ratio(c, k, "f_numpy")))), ""]
    skips = sorted({f"- {res['labels'][k]}: {e['skipped']}." for c in cases
                    for k, e in c["methods"].items() if "skipped" in e})
    if skips:
        lines += ["Not measured:\n"] + skips
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = T.parser(AREA, __doc__.splitlines()[0])
    p.add_argument("--breakdown", action="store_true",
                   help="also time the compiled sweeps of tape.hvp separately")
    args = p.parse_args(argv)
    s = T.settings_from(args, AREA)
    machine = T.machine_info()
    res = run(s, with_breakdown=args.breakdown)
    return T.report(AREA, s, machine, res, markdown(res, s, machine) + "\n" + breakdown_markdown(res))


if __name__ == "__main__":
    sys.exit(main())
