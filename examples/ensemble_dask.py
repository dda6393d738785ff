"""Gradients of a checkpointed Lorenz misfit at 64 parameter sets on a Dask cluster.

The Lorenz system du/dt = (s (u2 - u1), u1 (r - u3) - u2, u1 u2 - b u3) is
integrated with RK4 steps of dt = 0.005 from u(0) = (1, 1, 1). The misfit of
parameters p = (s, r, b) against observations y_w of the state at the ends
of four assimilation windows is

    J(p) = sum_w |u(t_w; p) - y_w|^2,

each window one ``adsim.checkpoint_loop`` (one RK4 step recorded, replayed
in C along a Revolve schedule). The observations come from p* = (10, 28, 8/3).
An ensemble of 64 parameter sets drawn around p* (multi-start optimisation,
uncertainty quantification) needs 64 gradients: the tape is recorded once,
here, and ``adsim.parallel.map`` replays it on the cluster's workers. The
workers receive the tape as a tape file (scattered once to each) and chunks
of parameter sets; they never see this script's code.

The script checks itself: one member's gradient against central differences
of the plain misfit, and a few members against serial replays (bitwise).

Run::

    python examples/ensemble_dask.py                        # a local cluster, 2 worker processes
    python examples/ensemble_dask.py --scheduler tcp://host:8786   # an existing cluster
    python examples/ensemble_dask.py --threads              # no Dask: a thread pool
    python examples/ensemble_dask.py --members 8 --steps 200   # small and quick

Without dask.distributed installed (``pip install "adsim[distributed]"``) it
falls back to a thread pool. On an existing cluster the workers need adsim
(and NumPy) installed, nothing else.
"""
import argparse
import contextlib
import time

import numpy as np

import adsim as ad
from adsim import parallel

P_TRUE = np.array([10.0, 28.0, 8.0 / 3.0])
U0 = np.array([1.0, 1.0, 1.0])
DT = 0.005
WINDOWS = 4


def lorenz(u, p):
    return np.stack([p[0] * (u[1] - u[0]), u[0] * (p[1] - u[2]) - u[1], u[0] * u[1] - p[2] * u[2]])


def rk4_step(u, p):
    k1 = lorenz(u, p)
    k2 = lorenz(u + 0.5 * DT * k1, p)
    k3 = lorenz(u + 0.5 * DT * k2, p)
    k4 = lorenz(u + DT * k3, p)
    return u + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def window_ends(p, steps_per_window):
    """The state at the end of each window (one checkpointed loop per window)."""
    u, ends = U0, []
    for _ in range(WINDOWS):
        u = ad.checkpoint_loop(rk4_step, u, steps_per_window, args=(p,))
        ends.append(u)
    return ends


def make_misfit(steps_per_window):
    observations = [np.asarray(u) for u in window_ends(P_TRUE, steps_per_window)]

    def misfit(p):
        ends = window_ends(p, steps_per_window)
        return sum(np.sum((u - y) ** 2) for u, y in zip(ends, observations))
    return misfit


def ensemble(members, seed=0):
    """Parameter sets around the true ones (relative spread 5%)."""
    rng = np.random.default_rng(seed)
    return [P_TRUE * (1.0 + 0.05 * rng.standard_normal(3)) for _ in range(members)]


def central_differences(f, p, h=1e-6):
    g = np.zeros(p.size)
    for i in range(p.size):
        e = np.zeros(p.size)
        e[i] = h * max(1.0, abs(p[i]))
        g[i] = (f(p + e) - f(p - e)) / (2.0 * e[i])
    return g


@contextlib.contextmanager
def executor_for(args):
    """A Dask client (local cluster or ``--scheduler``), or None: a thread pool."""
    if args.threads:
        yield None, "a thread pool"
        return
    try:
        import distributed
    except ImportError:
        print("dask.distributed is not installed: using a thread pool instead "
              "(pip install 'adsim[distributed]')")
        yield None, "a thread pool"
        return
    with contextlib.ExitStack() as stack:
        if args.scheduler:
            client = stack.enter_context(distributed.Client(args.scheduler, timeout=60))
            where = f"the cluster at {args.scheduler}"
        else:
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=40))
            client = stack.enter_context(distributed.Client(cluster))
            where = f"a local cluster of {args.workers} worker processes"
        yield client, where


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler")
    ap.add_argument("--threads", action="store_true", help="a thread pool instead of Dask")
    ap.add_argument("--workers", type=int, default=2, help="workers of the local cluster")
    ap.add_argument("--members", type=int, default=64, help="parameter sets")
    ap.add_argument("--steps", type=int, default=2000, help="RK4 steps in all (4 windows)")
    args = ap.parse_args(argv)
    steps_per_window = max(1, args.steps // WINDOWS)
    misfit = make_misfit(steps_per_window)
    members = ensemble(args.members)

    tape = ad.record(misfit, members[0])
    fd = central_differences(misfit, members[0])
    fd_error = float(np.max(np.abs(tape.gradient(members[0]) - fd)) / np.max(np.abs(fd)))
    assert fd_error < 1e-5, f"gradient differs from central differences by {fd_error:.1e}"

    with executor_for(args) as (executor, where):
        started = time.perf_counter()
        results = parallel.map("value_and_gradient", tape, members, executor=executor)
        elapsed = time.perf_counter() - started
    checked = range(0, args.members, max(1, args.members // 4))
    started = time.perf_counter()
    for k in checked:
        value, gradient = tape.value_and_gradient(members[k])
        assert results[k][0] == value and np.array_equal(results[k][1], gradient), \
            f"member {k} differs from a serial replay"
    serial = (time.perf_counter() - started) / len(checked) * args.members
    values = np.array([v for v, _ in results])
    norms = np.array([np.linalg.norm(g) for _, g in results])
    print(f"{args.members} gradients of a {4 * steps_per_window}-step checkpointed Lorenz "
          f"misfit on {where}: {elapsed:.2f} s (serial, estimated from "
          f"{len(checked)} replays here: {serial:.2f} s)")
    print(f"tape file {len(ad.tapefile.dumps(tape)) / 1024:.1f} KiB, shipped once per worker")
    print(f"misfit: min {values.min():.3g}, median {np.median(values):.3g}, max "
          f"{values.max():.3g}; gradient norm median {np.median(norms):.3g}")
    print(f"member 0: gradient agrees with central differences to {fd_error:.1e}")
    return {"executor": "threads" if executor is None else "dask", "members": len(results),
            "fd_error": fd_error, "seconds": elapsed, "values": values}


if __name__ == "__main__":
    main()
