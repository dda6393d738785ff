"""Recording and replay costs of the tape.

Measures, on problems of ``benchmarks/problems.py``:

1. recording cost per scalar op (``adsim.record`` of the scalar-heavy
   recurrence, divided by the ops on its tape); goal <= 1 µs;
2. replay cost per scalar op of the same tape: zero-order (``tape.forward``)
   and reverse (``tape.gradient``: a keeping zero-order sweep plus the
   adjoint sweep); goal <= 0.05 µs each;
3. the whole call ``tape.gradient(x)`` on a five-op tape; goal: a few µs;
4. array code: ``tape.gradient`` against ``tape.forward`` of the same tape
   (goal: within 3x) and against autograd on the same function when
   installed;
5. tape bytes per recorded op from ``tape.stats()``; goal <= 40 bytes plus
   the values;
6. a first call: ``ad.grad(f)(x)`` of a small function never seen before
   (recorded, with the tape cache's checks) against autograd's
   ``grad(f)(x)``, which traces on every call; goal: cheaper than autograd.
   Timed interleaved with the explicit recording and the replays of a seen
   function;
7. a large environment: the likelihood of a Gaussian mixture fitted by EM,
   closing over its data and the fitted model object (whose ``fit`` draws
   from a new generator): inline ``ad.grad(f)(x)`` against a held
   ``g = ad.grad(f)`` (goal <= 2x), the bare replay, and a recording per call
   (``cache=False``, what the cache did when it gave up on such
   environments).

Run as ``python -m benchmarks recording [--quick]``.
"""
import gc
import itertools
import statistics
import sys
import time
import types

import numpy as np

import adsim as ad

from . import problems
from . import timing as T

AREA = "recording"
GOALS = {"record_per_op": 1e-6, "replay_per_op": 0.05e-6, "small_gradient": 5e-6,
         "reverse_over_forward": 3.0, "bytes_per_op": 40.0, "first_call_over_autograd": 1.0,
         "inline_over_held": 2.0}
ARRAY_CASES = [("rosenbrock", 100000, 1000), ("helmholtz", 1000, 50), ("rk4", 1000, 40),
               ("heat", 1000, 100)]


def _autograd():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None
    return autograd, anp


def per_op_costs(s):
    """Recording and replay per op on the scalar-heavy tape."""
    prob = problems.get("scalar_heavy")
    inst = prob.instance(prob.quick_sizes[0] if s.quick else prob.sizes[0])
    f, x = inst.function(), inst.x
    tape = ad.record(f, x)
    n_ops = len(tape)
    out = {"problem": prob.name, "n": inst.n, "n_ops": n_ops,
           "record": T.measure(lambda: ad.record(f, x), s, repeats=min(s.repeats, 5)).per(n_ops),
           "plain_numpy": T.measure(lambda: f(x), s, repeats=min(s.repeats, 5)).per(n_ops),
           "forward": T.measure(lambda: tape.forward(x), s).per(n_ops),
           "gradient": T.measure(lambda: tape.gradient(x), s).per(n_ops)}
    out["reverse_only_estimate"] = out["gradient"].median - out["forward"].median
    out["stats"] = tape.stats()
    return out


def small_call_costs(s):
    """The whole-call overhead of a five-op tape, and the compiled part of it."""
    prob = problems.get("small")
    inst = prob.instance(prob.sizes[0])
    f, x = inst.function(), inst.x
    tape = ad.record(f, x)
    grad = ad.grad(f)
    grad(x)
    seed = np.ones((1, 1))
    return {"problem": prob.name, "n": inst.n, "n_ops": len(tape),
            "tape.gradient": T.measure(lambda: tape.gradient(x), s),
            "tape.forward": T.measure(lambda: tape.forward(x), s),
            "ad.grad (cached tape)": T.measure(lambda: grad(x), s),
            "plain NumPy f": T.measure(lambda: f(x), s),
            # internals, for locating the overhead: the compiled sweeps with their
            # Cython wrappers (input copy-in, output copy-out), no Python shaping
            "compiled zero-order (tape._forward)": T.measure(lambda: tape._forward([x]), s),
            "compiled reverse (tape._adjoint)": T.measure(lambda: tape._adjoint([x], seed), s)}


def interleaved(calls, s, batch=50):
    """{name: Timing} of each callable of ``calls``, measured in rounds: one
    batch of ``batch`` calls of each in turn per round (the garbage collector
    off), so a change of the machine's load hits all of them alike; medians
    over the rounds."""
    rounds = 8 if s.quick else 80
    samples = {name: [] for name in calls}
    for fn in calls.values():
        fn()
        fn()
    enabled = gc.isenabled()
    try:
        gc.disable()
        for _ in range(rounds):
            for name, fn in calls.items():
                c0, t0 = time.process_time(), time.perf_counter()
                for _ in range(batch):
                    fn()
                samples[name].append(((time.perf_counter() - t0) / batch,
                                      (time.process_time() - c0) / batch))
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    out = {}
    for name, pairs in samples.items():
        wall = [w for w, _ in pairs]
        out[name] = T.Timing(statistics.median(wall), min(wall), max(wall), rounds, batch,
                             statistics.median(c for _, c in pairs))
    return out


FIRST_CALL_AUTOGRAD = "autograd `grad(f)(x)` (traces every call)"
FIRST_CALL = "`ad.grad(f)(x)`, f's code never seen"
SAME_CODE = "`ad.grad(f)(x)`, a new f of code seen (a lambda in a loop)"
INLINE = "`ad.grad(f)(x)` inline, f seen (replay)"
HELD = "held `g = ad.grad(f)`, `g(x)` (replay)"


def _new_small_function():
    """A new function object at each call (no tape cached for it), as a
    lambda written inside a loop is: its code is the same each time."""
    def f(x):
        return np.sum(x * x)
    return f


_codes_made = itertools.count(1)


def _new_code(f):
    """``f`` as a function of a code object never seen before (another
    name: code objects are equal, and hashed, by content), so that no cache
    keyed by code (the tape cache's, the bytecode analysis') holds anything
    for it: what a first call of a function just written costs."""
    name = f"{f.__name__}_{next(_codes_made)}"
    code = f.__code__.replace(co_name=name, co_qualname=name)
    return types.FunctionType(code, f.__globals__, name, f.__defaults__, f.__closure__)


def first_call_costs(s):
    """A first recording against autograd's trace: ``sum(x * x)``, x of 5."""
    x = np.linspace(0.5, 1.5, 5)
    seen = _new_small_function()
    held = ad.grad(seen)
    calls = {}
    ag = _autograd() if s.peers else None
    if ag is not None:
        autograd, anp = ag
        assert np.allclose(autograd.grad(lambda z: anp.sum(z * z))(x), 2 * x)
        calls[FIRST_CALL_AUTOGRAD] = lambda: autograd.grad(lambda z: anp.sum(z * z))(x)
    assert np.allclose(ad.grad(_new_code(_new_small_function()))(x), 2 * x)
    calls[FIRST_CALL] = lambda: ad.grad(_new_code(_new_small_function()))(x)
    calls[SAME_CODE] = lambda: ad.grad(_new_small_function())(x)
    calls["`ad.record(f, x)`, f's code never seen"] = \
        lambda: ad.record(_new_code(_new_small_function()), x)
    calls[INLINE] = lambda: ad.grad(seen)(x)
    calls[HELD] = lambda: held(x)
    return {"n": x.size, "timings": interleaved(calls, s)}


def _small_programs(xp):
    """Small functions of a few ops each, written for NumPy (``xp=np``) or
    autograd's wrapper (``xp=autograd.numpy``); each call makes a new
    function object, as a lambda written inside a loop does."""
    rng = np.random.default_rng(3)
    x_h, (A, b) = problems.make_helmholtz(50, rng)
    X, y = rng.standard_normal((40, 10)), (rng.uniform(size=40) < 0.5) * 1.0
    Z, t = rng.standard_normal((30, 4)), rng.standard_normal(30)

    def helmholtz():
        return lambda x: problems.helmholtz(x, A, b, xp=xp)

    def logistic():
        def loss(w):
            z = X @ w
            return xp.sum(xp.log(1.0 + xp.exp(-z)) + (1.0 - y) * z) / 40.0 + 0.01 * xp.sum(w * w)
        return loss

    def mlp():
        def loss(p):
            h = xp.tanh(Z @ xp.reshape(p[:32], (4, 8)) + p[32:40])
            r = h @ p[40:48] + p[48] - t
            return 0.5 * xp.mean(r * r)
        return loss

    return {"Helmholtz energy, n = 50": (helmholtz, x_h),
            "logistic loss, 10 parameters": (logistic, 0.1 * rng.standard_normal(10)),
            "MLP 4-8-1 loss, 49 parameters": (mlp, 0.3 * rng.standard_normal(49))}


def small_function_costs(s):
    """First calls and inline calls on small programs against autograd."""
    ag = _autograd() if s.peers else None
    mine = _small_programs(np)
    theirs = _small_programs(ag[1]) if ag is not None else {}
    out = {}
    for name, (make, x) in mine.items():
        seen = make()
        held = ad.grad(seen)
        calls = {}
        if ag is not None:
            make_ag = theirs[name][0]
            assert np.allclose(ag[0].grad(make_ag())(x), held(x))
            calls[FIRST_CALL_AUTOGRAD] = lambda make_ag=make_ag, x=x: ag[0].grad(make_ag())(x)
        calls[FIRST_CALL] = lambda make=make, x=x: ad.grad(_new_code(make()))(x)
        calls[INLINE] = lambda seen=seen, x=x: ad.grad(seen)(x)
        calls[HELD] = lambda held=held, x=x: held(x)
        out[name] = interleaved(calls, s, batch=10)
    return out


class FittedMixture:
    """A diagonal Gaussian mixture fitted by EM, as a user's model object:
    data, responsibilities and fit history kept as attributes."""

    def __init__(self, k=5, n_iter=20, seed=0):
        self.k, self.n_iter, self.seed = k, n_iter, seed

    def fit(self, X):
        k = self.k
        rng = np.random.default_rng(self.seed)      # (the walk sees `fit` is not called)
        means, log_var = X[rng.choice(len(X), k, replace=False)], np.zeros((k, X.shape[1]))
        self.X_, self.log_w_, self.history_ = X, np.full(k, -np.log(k)), []
        for _ in range(self.n_iter):
            lj = self.log_joint(means, log_var)
            norm = np.logaddexp.reduce(lj, axis=1)
            self.resp_ = np.exp(lj - norm[:, None])
            nk = self.resp_.sum(axis=0)
            means = self.resp_.T @ X / nk[:, None]
            log_var = np.log(self.resp_.T @ X ** 2 / nk[:, None] - means ** 2 + 1e-6)
            self.log_w_ = np.log(nk / len(X))
            self.history_.append(float(np.mean(norm)))
        self.means_, self.log_var_ = means, log_var
        return self

    def log_joint(self, means, log_var):
        diff = self.X_[:, None, :] - means[None]
        return (self.log_w_ - 0.5 * np.sum(log_var, axis=1)
                - 0.5 * np.sum(diff ** 2 / np.exp(log_var)[None], axis=2))

    def log_likelihood(self, means, log_var):
        lj = self.log_joint(means, log_var)
        m = np.max(lj, axis=1, keepdims=True)
        return np.sum(m[:, 0] + np.log(np.sum(np.exp(lj - m), axis=1)))


def large_environment_costs(s):
    """Gradient of a fitted mixture's likelihood in its means and variances."""
    n, d, k = (5_000 if s.quick else 50_000), 4, 5
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) + 4.0 * rng.normal(size=(k, d))[rng.integers(0, k, n)]
    model = FittedMixture(k).fit(X)

    def nll(theta):
        half = theta.size // 2
        return -model.log_likelihood(theta[:half].reshape(k, d), theta[half:].reshape(k, d))
    theta = np.concatenate([model.means_.ravel(), model.log_var_.ravel()])
    held, tape, fresh = ad.grad(nll), ad.record(nll, theta), ad.grad(nll, cache=False)
    assert np.allclose(held(theta), tape.gradient(theta), rtol=1e-12)
    calls = {"`tape.gradient(x)` (no check)": lambda: tape.gradient(theta),
             "held `g = ad.grad(f)`, `g(x)`": lambda: held(theta),
             "`ad.grad(f)(x)` inline": lambda: ad.grad(nll)(theta),
             "recorded every call (`cache=False`)": lambda: fresh(theta)}
    timings = interleaved(calls, s, batch=2 if s.quick else 5)
    env = sum(a.nbytes for a in (X, model.resp_))
    return {"n": n, "env_mb": env / 2 ** 20, "recordings": held.tapes.recordings,
            "blocked": held.tapes.reuse_blocked_by, "timings": timings}


def array_costs(s):
    """Reverse replay against zero-order replay and against autograd."""
    ag = _autograd() if s.peers else None
    rows = []
    for name, n_full, n_quick in ARRAY_CASES:
        prob = problems.get(name)
        inst = prob.instance(n_quick if s.quick else n_full)
        f, x = inst.function(), inst.x
        tape = ad.record(f, x)
        g = tape.gradient(x)
        row = {"problem": name, "n": inst.n, "n_ops": len(tape),
               "numpy_f": T.measure(lambda: f(x), s),
               "forward": T.measure(lambda: tape.forward(x), s),
               "gradient": T.measure(lambda: tape.gradient(x), s),
               "stats": tape.stats()}
        if ag is not None:
            autograd, anp = ag
            agrad = autograd.grad(inst.function(anp))
            err = np.linalg.norm(agrad(x) - g) / max(np.linalg.norm(g), 1e-300)
            assert err < 1e-8, f"{name}: autograd and adsim gradients differ (relative {err:.2e})"
            row["autograd_gradient"] = T.measure(lambda: agrad(x), s)
        rows.append(row)
    return rows


def tape_sizes(per_op, arrays):
    """Bytes per op: the op stream alone (stats' tape_bytes_per_op), with the
    constants and index records added, and the values beside them."""
    def sizes(name, st):
        b, n = st["bytes"], max(st["n_ops"], 1)
        return {"tape": name, "n_ops": st["n_ops"], "op_stream_per_op": st["tape_bytes_per_op"],
                "with_constants_per_op": (b["opcodes"] + b["operands"] + b["branches"]
                                          + b["constants"] + b["indices"]) / n,
                "values_bytes": b["values"], "value_stack_peak_bytes": b["value_stack_peak"]}
    return [sizes(f"scalar_heavy n={per_op['n']}", per_op["stats"])] + [
        sizes(f"{r['problem']} n={r['n']}", r["stats"]) for r in arrays]


def run(s):
    per_op = per_op_costs(s)
    small = small_call_costs(s)
    arrays = array_costs(s)
    first = first_call_costs(s)
    first_small = small_function_costs(s)
    large = large_environment_costs(s)
    return {"goals": GOALS, "per_op": per_op, "small": small, "arrays": arrays, "first_call": first,
            "first_call_small_programs": first_small,
            "large_environment": large, "bytes": tape_sizes(per_op, arrays),
            "autograd": T.peer_versions()["autograd"] if s.peers else None}


def _mark(ok):
    return "yes" if ok else "**no**"


def _row(label, t, goal=None, goal_text=""):
    """Label, wall median (min–max), CPU median, goal, met on wall / CPU."""
    met = f"{_mark(t.median <= goal)} / {_mark(t.cpu_median <= goal)}" if goal else ""
    return (label, T.fmt_timing(t), T.fmt_time(t.cpu_median), goal_text, met)


HEADERS = ["median wall (min–max)", "median CPU", "goal", "met (wall / CPU)"]


def _per_op_md(p):
    rows = [_row("recording (`adsim.record`)", p["record"], GOALS["record_per_op"], "≤ 1 µs"),
            _row("zero-order replay (`tape.forward`)", p["forward"], GOALS["replay_per_op"],
                 "≤ 0.05 µs"),
            _row("reverse replay (`tape.gradient`: keeping forward + adjoint sweep)",
                 p["gradient"], GOALS["replay_per_op"], "≤ 0.05 µs"),
            ("adjoint sweep alone (gradient − forward, wall)",
             T.fmt_time(p["reverse_only_estimate"]), "", "", ""),
            _row("plain NumPy run of the same code (no AD)", p["plain_numpy"])]
    return [f"### Per scalar op\n\nScalar-heavy recurrence (`problems.scalar_heavy`), "
            f"n = {p['n']}: {p['n_ops']} recorded ops.\n",
            T.table(["per recorded op"] + HEADERS, rows), ""]


def _small_md(sm):
    rows = []
    for key in ("tape.gradient", "tape.forward", "ad.grad (cached tape)", "plain NumPy f",
                "compiled zero-order (tape._forward)", "compiled reverse (tape._adjoint)"):
        label = f"`{key}`" if "(" not in key else key
        if key == "tape.gradient":
            rows.append(_row(label, sm[key], GOALS["small_gradient"], "a few µs (≤ 5 µs)"))
        else:
            rows.append(_row(label, sm[key]))
    return [f"### Call overhead of a small tape\n\n`sum(x**2) * log(sum(x))`, "
            f"x of size {sm['n']}, {sm['n_ops']} ops.\n", T.table(["call"] + HEADERS, rows), ""]


def _first_call_md(fc):
    t = fc["timings"]
    ag = t.get(FIRST_CALL_AUTOGRAD)
    rows = []
    for name, timing in t.items():
        ratio = timing.median / ag.median if ag else None
        goal = ""
        if name == FIRST_CALL and ag:
            goal = f"< autograd ({_mark(ratio < GOALS['first_call_over_autograd'])})"
        rows.append((name, T.fmt_timing(timing), T.fmt_time(timing.cpu_median),
                     T.fmt_ratio(ratio) if ratio else "–", goal))
    return [f"### First call against autograd\n\n`sum(x * x)`, x of size {fc['n']}: a new "
            f"function object per call, of a new code object (nothing cached for it) or of "
            f"the same code (a lambda in a loop: the tape of the last function of that code "
            f"is replayed when the environment matches), timed interleaved (rounds of "
            f"{next(iter(t.values())).number} calls of each; medians over "
            f"{next(iter(t.values())).repeats} rounds).\n",
            T.table(["call", "median wall (min–max)", "median CPU", "/ autograd", "goal"], rows),
            ""]


def _small_programs_md(programs):
    rows = []
    for name, t in programs.items():
        ag, held = t.get(FIRST_CALL_AUTOGRAD), t[HELD]
        first = t[FIRST_CALL].median / ag.median if ag else None
        inline = t[INLINE].median / held.median
        rows.append((name, T.fmt_time(ag.median) if ag else "–", T.fmt_time(t[FIRST_CALL].median),
                     T.fmt_ratio(first) if first else "–",
                     _mark(first < GOALS["first_call_over_autograd"]) if first else "–",
                     T.fmt_time(t[INLINE].median), T.fmt_time(held.median), T.fmt_ratio(inline),
                     _mark(inline <= GOALS["inline_over_held"])))
    return ["### First and inline calls of small programs\n\nMedian wall times, timed "
            "interleaved: autograd's `grad(f)(x)`, adsim's first call (a new function "
            "of new code), an inline `ad.grad(f)(x)` of a function seen before, a held "
            "`g = ad.grad(f)`.\n",
            T.table(["function", "autograd", "first call", "/ autograd", "< autograd",
                     "inline", "held", "inline / held", "≤ 2"], rows), ""]


def _large_environment_md(le):
    t = le["timings"]
    held = t["held `g = ad.grad(f)`, `g(x)`"]
    rows = []
    for name, timing in t.items():
        ratio = timing.median / held.median
        goal = f"≤ 2 ({_mark(ratio <= GOALS['inline_over_held'])})" if "inline" in name else ""
        rows.append((name, T.fmt_timing(timing), T.fmt_time(timing.cpu_median),
                     T.fmt_ratio(ratio), goal))
    return [f"### A large environment: a fitted model's likelihood\n\nThe log-likelihood of a "
            f"Gaussian mixture fitted by EM (`FittedMixture`, {le['n']} points), as a function "
            f"of its means and log-variances, closing over the data and the model object "
            f"({le['env_mb']:.1f} MB of arrays; its `fit` draws from a new generator but is "
            f"not called). Cached tape kept: {'yes' if le['blocked'] is None else le['blocked']}"
            f" ({le['recordings']} recording). Timed interleaved.\n",
            T.table(["call", "median wall (min–max)", "median CPU", "/ held", "goal"], rows), ""]


def _arrays_md(res):
    rows = []
    for r in res["arrays"]:
        ratio = r["gradient"].median / r["forward"].median
        cpu_ratio = r["gradient"].cpu_median / r["forward"].cpu_median
        agr = r.get("autograd_gradient")
        rows.append((f"{r['problem']} n={r['n']} ({r['n_ops']} ops)",
                     T.fmt_time(r["numpy_f"].median), T.fmt_time(r["forward"].median),
                     T.fmt_time(r["gradient"].median),
                     f"{T.fmt_ratio(ratio)} ({_mark(ratio <= GOALS['reverse_over_forward'])})",
                     T.fmt_ratio(cpu_ratio),
                     T.fmt_ratio(r["gradient"].median / r["numpy_f"].median),
                     T.fmt_time(agr.median) if agr else "not installed",
                     T.fmt_ratio(agr.median / r["numpy_f"].median) if agr else "–",
                     T.fmt_ratio(agr.median / r["gradient"].median) if agr else "–"))
    return ["### Array code: reverse against zero-order replay\n\nSame tape; `gradient / "
            "forward` is the goal ratio (≤ 3), from wall medians and from CPU medians. autograd "
            "runs the same function through `autograd.numpy`"
            + ("" if res["autograd"] else " (not installed: skipped)") + ".\n",
            T.table(["problem", "NumPy f", "tape.forward", "tape.gradient", "gradient / forward",
                     "same, CPU", "gradient / NumPy f", "autograd grad", "autograd / NumPy f",
                     "autograd / adsim"], rows), ""]


def _sizes_md(sizes):
    rows = [(b["tape"], b["n_ops"], f"{b['op_stream_per_op']:.1f}",
             f"{b['with_constants_per_op']:.1f}",
             _mark(b["with_constants_per_op"] <= GOALS["bytes_per_op"]) if i == 0 else "n/a",
             b["values_bytes"], b["value_stack_peak_bytes"]) for i, b in enumerate(sizes)]
    return ["### Tape size\n\nBytes per recorded op from `tape.stats()`: the op stream "
            "(opcode, operand offset, flags, operands, branch records: `tape_bytes_per_op`), "
            "then with the constant stream and index records added. Values (the slot arena and "
            "the peak of the value stack during `tape.gradient`) are listed apart; the goal is "
            "≤ 40 bytes per op plus the values.\n",
            T.table(["tape", "ops", "op stream B/op", "+ constants, indices B/op",
                     "≤ 40 B/op (scalar tape)", "values B", "value stack peak B"], rows), "",
            "The goal applies to the scalar tape; on array tapes the constant stream holds the "
            "problem's data (the matrix A of Helmholtz, boundary and target vectors) and the "
            "index stream the gather indices of slicing, padding and differencing, so their "
            "per-op figures grow with n."]


def markdown(res, s, machine):
    lines = ["## Recording and replay\n", T.header(AREA, s, machine), ""]
    lines += _per_op_md(res["per_op"]) + _small_md(res["small"]) + _arrays_md(res)
    lines += _first_call_md(res["first_call"])
    if "first_call_small_programs" in res:
        lines += _small_programs_md(res["first_call_small_programs"])
    if "large_environment" in res:
        lines += _large_environment_md(res["large_environment"])
    lines += _sizes_md(res["bytes"])
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
