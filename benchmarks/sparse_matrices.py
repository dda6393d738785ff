"""scipy.sparse in recorded functions: products with a constant matrix and
solves with an active right-hand side, against SciPy's own calls.

Problems: the 5-point Laplacian of an m x m grid (``scipy.sparse.kronsum``
of two 1-d second differences, CSR), n = m^2.

* ``L @ u`` at n = 10^5 and 10^6 (``--quick``: 10^4): SciPy's product;
  adsim's replay of the tape of ``lambda u: L @ u`` (``tape.forward``: one
  SPMV op reading u where it is and writing the array returned); the same per product
  inside a tape of ten products (no copies: the op's own cost); ``L.T @ u``
  against SciPy's (a CSC product); and the gradient of ``sum((L @ u)**2)``.
  Goal: replay within 1.2x of SciPy's product. For comparison, the replay
  copying u into the tape's buffer and the result out of it, as values
  replays did before they read and wrote in place
  (``adsim._tape.set_values_in_place(False)``).
* ``spsolve(-L, b)`` at n = 10^5 (``--quick``: 10^4): SciPy's solve (which
  factorises every call) against the gradient of ``sum(spsolve(-L, b)**2)``
  in b by ``adsim.value_and_grad``, its first call (recording: one
  factorisation, the forward and the adjoint solve) and its later calls (the
  cached tape: the stored factorisation solves forward and transposed).
  Goal: the gradient at most 2.5x the forward solve.

Times are medians with the min–max spread (``benchmarks/timing.py``);
results go to ``benchmarks/results/sparse_matrices.json`` and, in full
runs, the section of docs/benchmarks.md.
"""
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import adsim as ad
from adsim import _tape

from . import timing as T

AREA = "sparse_matrices"


def laplacian(m):
    second = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(m, m))
    return sp.kronsum(second, second, format="csr")


def _ten_products(L, u):
    for _ in range(10):
        u = L @ u
    return u


def _copying(replay):
    """``replay`` as values replays ran when they copied their inputs in and
    their output out."""
    def call():
        previous = _tape.set_values_in_place(False)
        try:
            return replay()
        finally:
            _tape.set_values_in_place(previous)
    return call


def in_turn(first, second, s):
    """Median over rounds of the time of ``second`` over that of ``first``,
    each round timing a few calls of one, then of the other: both meet the
    machine in the same state, which separate medians taken seconds apart
    do not promise on a shared machine."""
    rounds, calls = (7, 3) if s.quick else (61, 10)
    ratios = []
    for _ in range(rounds):
        spent = []
        for fn in (first, second):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            spent.append(time.perf_counter() - t0)
        ratios.append(spent[1] / spent[0])
    return float(np.median(ratios))


def products(m, s):
    L = 0.2 * laplacian(m)
    u = np.random.default_rng(0).standard_normal(m * m)
    once = ad.record(lambda x: L @ x, u)
    chain = ad.record(lambda x: _ten_products(L, x), u)
    transposed = ad.record(lambda x: L.T @ x, u)
    loss = ad.record(lambda x: np.sum((L @ x) ** 2), u)
    assert np.allclose(once.forward(u), L @ u, rtol=1e-14, atol=0.0)
    t = {"scipy": T.measure(lambda: L @ u, s),
         "replay": T.measure(lambda: once.forward(u), s),
         "replay_copying": T.measure(_copying(lambda: once.forward(u)), s),
         "scipy_ten": T.measure(lambda: _ten_products(L, u), s),
         "replay_ten": T.measure(lambda: chain.forward(u), s),
         "scipy_transposed": T.measure(lambda: L.T @ u, s),
         "replay_transposed": T.measure(lambda: transposed.forward(u), s),
         "gradient": T.measure(lambda: loss.gradient(u), s)}
    return {"n": m * m, "nnz": L.nnz, "timings": t,
            "replay_in_turn": in_turn(lambda: L @ u, lambda: once.forward(u), s)}


def solves(m, s):
    A = (-laplacian(m)).tocsc()
    b = np.random.default_rng(1).standard_normal(m * m)
    value_and_grad = ad.value_and_grad(lambda x: np.sum(spsolve(A, x) ** 2))
    start = time.perf_counter()
    value, _ = value_and_grad(b)
    first = time.perf_counter() - start
    assert np.isclose(value, np.sum(spsolve(A, b) ** 2), rtol=1e-10)
    slow = T.Settings(**{**s.__dict__, "repeats": min(s.repeats, 3), "warmup": 1})
    t = {"scipy_spsolve": T.measure(lambda: spsolve(A, b), slow),
         "gradient": T.measure(lambda: value_and_grad(b * 1.01), slow)}
    return {"n": m * m, "nnz": A.nnz, "first_gradient": first, "timings": t}


def run(s):
    sizes = (100,) if s.quick else (316, 1000)
    return {"products": [products(m, s) for m in sizes],
            "solves": [solves(100 if s.quick else 316, s)]}


def markdown(results, s, machine):
    rows = []
    for r in results["products"]:
        t = r["timings"]
        rows.append([f"{r['n']:,}", T.fmt_timing(t["scipy"]), T.fmt_timing(t["replay"]),
                     T.fmt_ratio(t["replay"].median / t["scipy"].median),
                     T.fmt_ratio(r["replay_in_turn"]),
                     T.fmt_ratio(t["replay_copying"].median / t["scipy"].median),
                     T.fmt_ratio(t["replay_ten"].median / t["scipy_ten"].median),
                     T.fmt_ratio(t["replay_transposed"].median / t["scipy_transposed"].median),
                     T.fmt_ratio(t["gradient"].median / t["scipy"].median)])
    solve_rows = []
    for r in results["solves"]:
        t = r["timings"]
        f = t["scipy_spsolve"].median
        solve_rows.append([f"{r['n']:,}", T.fmt_timing(t["scipy_spsolve"]),
                           T.fmt_time(r["first_gradient"]), T.fmt_ratio(r["first_gradient"] / f),
                           T.fmt_timing(t["gradient"]), T.fmt_ratio(t["gradient"].median / f)])
    return "\n".join([
        "## Sparse matrices\n", T.header(AREA, s, machine), "",
        "`L @ u` with the 5-point Laplacian (ratios to SciPy's own product; goal: replay "
        "<= 1.2). Timed in turn: the median over rounds of ten replays against ten of "
        "SciPy's products timed one after the other.", "",
        T.table(["n", "SciPy L @ u", "replay", "replay / SciPy", "same, timed in turn",
                 "replay copying u in and L u out / SciPy", "per product in a tape of ten",
                 "L.T @ u replay / SciPy", "gradient of sum((L u)^2) / SciPy L @ u"], rows), "",
        "Gradient of `sum(spsolve(-L, b)**2)` in b by `adsim.value_and_grad` (goal: <= 2.5 "
        "forward solves):", "",
        T.table(["n", "SciPy spsolve", "first gradient (records)", "/ spsolve",
                 "gradient (cached tape)", "/ spsolve"], solve_rows), ""])


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    raise SystemExit(main())
