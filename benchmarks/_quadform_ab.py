"""Helmholtz gradients with and without the quadratic-form op, interleaved.

``x @ (A @ x)`` recorded as two matrix products reads A twice per gradient
(A x forward, A^T ybar in reverse); the optimisation at finish makes it one
QUADFORM op (adsim/_ops/quadform.pxi) that reads A once. This script times,
in one process and alternating sample by sample so that a busy machine
affects all alike: the NumPy f, ``tape.forward``, the gradient of a tape
recorded without optimisation (the two products) and with it (QUADFORM), and
JAX's jit-compiled gradient when JAX is installed. Medians of wall-clock and
process CPU time per call; BLAS and XLA on one thread. Not an area of
``python -m benchmarks`` (it writes no results file): run it by hand.

    python -m benchmarks._quadform_ab --sizes 1000,10000 --rounds 9
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_cpu_multi_thread_eigen=false").strip()

import numpy as np  # noqa: E402

import adsim as ad  # noqa: E402
from adsim import _program  # noqa: E402
from adsim._opcodes import Opcode  # noqa: E402

from . import problems  # noqa: E402


def _sample(fn, reps):
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps, (time.process_time() - c0) / reps


def variants(n, seed=0):
    x, (A, b) = problems.make_helmholtz(n, np.random.default_rng(seed))
    f = lambda y: problems.helmholtz(y, A, b)  # noqa: E731
    previous = _program.set_optimise(False)
    try:
        two_products = ad.record(f, x)
    finally:
        _program.set_optimise(previous)
    fused = ad.record(f, x)
    assert int(Opcode.QUADFORM) in [int(c) for c in fused.op_codes()]
    g_old, g_new = two_products.gradient(x), fused.gradient(x)
    assert np.linalg.norm(g_new - g_old) <= 1e-12 * np.linalg.norm(g_old)
    out = {"NumPy f": lambda: f(x), "tape.forward": lambda: fused.forward(x),
           "gradient, two products": lambda: two_products.gradient(x),
           "gradient, QUADFORM": lambda: fused.gradient(x)}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        g = jax.jit(jax.grad(lambda y, A, b: problems.helmholtz(y, A, b, xp=jnp)))
        xj, Aj, bj = jnp.asarray(x), jnp.asarray(A), jnp.asarray(b)
        assert np.allclose(np.asarray(g(xj, Aj, bj)), g_new, rtol=1e-8)
        out["JAX jit gradient"] = lambda: g(xj, Aj, bj).block_until_ready()
    except ImportError:
        pass
    return out


def measure(n, rounds, min_seconds):
    fns = variants(n)
    reps = {}
    for name, fn in fns.items():            # warm up, and calls per sample
        fn()
        fn()
        t = _sample(fn, 1)[0]
        reps[name] = max(1, int(min_seconds / max(t, 1e-9)))
    wall = {name: [] for name in fns}
    cpu = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            w, c = _sample(fn, reps[name])
            wall[name].append(w)
            cpu[name].append(c)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name]),
                   min(wall[name]), max(wall[name])) for name in fns}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--min-seconds", type=float, default=0.2)
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()}")
    for n in [int(s) for s in args.sizes.split(",")]:
        res = measure(n, args.rounds, args.min_seconds)
        f_wall, f_cpu = res["NumPy f"][:2]
        print(f"\nn = {n} (medians of {args.rounds} interleaved samples; load {os.getloadavg()})")
        unit, scale = ("ms", 1e3) if f_wall > 1e-3 else ("us", 1e6)
        print(f"| method | wall {unit} | min-max | CPU {unit} | wall / f | CPU / f |")
        print("|---|---|---|---|---|---|")
        for name, (w, c, lo, hi) in res.items():
            print(f"| {name} | {scale * w:.4g} | {scale * lo:.4g}-{scale * hi:.4g} | "
                  f"{scale * c:.4g} "
                  f"| {w / f_wall:.2f} | {c / f_cpu:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
