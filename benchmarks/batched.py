"""Batched replay: one tape at B points in one sweep against B separate replays.

Problems: the extended Rosenbrock chain (``problems.rosenbrock``) at
n = 1 000 and the 2-D reaction–diffusion residual of ``large_arrays`` on a
32 x 32 grid (n = 1 024), each at B = 64 points (``--quick``: B = 16).
For each: ``tape.gradient`` called once per point (the loop a user writes
for an ensemble or a parameter sweep) against ``tape.batched.gradient(X)``
with ``X`` of shape (B, n); the same for ``forward`` and ``hvp``. Both with
the interpreter and after ``tape.fuse()`` (the batched programs are fused
like the tape; a member's runs of about 1 000 elements are below the size
fusing takes, the batch's are not). Batched results are checked against
the loop's (relative difference <= 1e-12).

Goal (issue "large arrays"): the gradient at 64 points of a 1 000-element
function >= 4x faster than 64 separate replays.

Run as ``python -m benchmarks batched [--quick]``.
"""
import sys

import numpy as np

import adsim as ad
from adsim.errors import NoCompiler

from . import large_arrays, problems
from . import timing as T

AREA = "batched"
GOAL = 4.0                         # separate replays / batched, gradient at B = 64
CASES = [("Rosenbrock", problems.rosenbrock, 1000),
         ("reaction–diffusion", large_arrays.reaction_diffusion, 32 ** 2)]


def _difference(got, want):
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300))


def one_case(name, f, n, batch, fused, s):
    rng = np.random.default_rng(0)
    X = rng.uniform(0.1, 1.0, (batch, n))
    V = rng.standard_normal((batch, n))
    tape = ad.record(f, X[0])
    if fused:
        try:
            tape.fuse()
        except NoCompiler as why:
            return {"problem": name, "n": n, "batch": batch, "fused": True,
                    "skipped": f"not fused: {why}"}
    methods = {
        "forward": (lambda: [tape.forward(x) for x in X], lambda: tape.batched.forward(X)),
        "gradient": (lambda: [tape.gradient(x) for x in X], lambda: tape.batched.gradient(X)),
        "hvp": (lambda: [tape.hvp(x, v) for x, v in zip(X, V)],
                lambda: tape.batched.hvp(X, V)),
    }
    row = {"problem": name, "n": n, "batch": batch, "fused": fused,
           "native": tape.batched.is_native(batch)}
    for method, (separate, batched) in methods.items():
        error = _difference(batched(), np.stack([np.asarray(r) for r in separate()]))
        assert error <= 1e-12, f"batched {method} of {name} differs by {error:.2e}"
        row[method] = {"separate": T.measure(separate, s), "batched": T.measure(batched, s),
                       "difference": error}
    return row


def run(s):
    batch = 16 if s.quick else 64
    rows = [one_case(name, f, n, batch, fused, s)
            for name, f, n in CASES for fused in (False, True)]
    return {"goal": GOAL, "rows": rows}


def _ms(t):
    return f"{1e3 * t.median:.3g}"


def markdown(res, s, machine):
    lines = ["## Batched replay\n", T.header(AREA, s, machine), "",
             "Milliseconds (medians) for all B points: B separate replays (`tape.gradient(x)` "
             "in a loop) against one batched replay (`tape.batched.gradient(X)`); ratio = "
             f"separate / batched (goal for the gradient ≥ {res['goal']:g}). Fused: after "
             "`tape.fuse()`.", ""]
    rows = []
    for r in res["rows"]:
        if "skipped" in r:
            rows.append((r["problem"], f"{r['n']:,}", r["batch"], "yes", r["skipped"]) +
                        ("–",) * 6)
            continue
        cells = []
        for method in ("forward", "gradient", "hvp"):
            m = r[method]
            cells += [f"{_ms(m['separate'])} / {_ms(m['batched'])}",
                      f"{m['separate'].median / m['batched'].median:.2f}"]
        rows.append((r["problem"], f"{r['n']:,}", r["batch"], "yes" if r["fused"] else "no",
                     "yes" if r["native"] else "no (loop)", *cells))
    lines.append(T.table(["problem", "n", "B", "fused", "batched sweep", "forward ms",
                          "ratio", "gradient ms", "ratio", "hvp ms", "ratio"], rows))
    return "\n".join(lines) + "\n"


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
