"""adsim demo: the gradient of the Helmholtz free energy (n = 50).

Run with ``python -m adsim.demo``. Records the function once, replays its
gradient in C, checks it against central differences and prints timings.
"""
import time

import numpy as np

import adsim as ad


def helmholtz(x, A, b, R=1.0, T=1.0):
    """Helmholtz free energy of a mixed fluid (Peng-Robinson), as in Baydin
    et al., JMLR 18(153), 2018, Table 4."""
    bx = b @ x
    s2 = np.sqrt(2.0)
    return (R * T * np.sum(x * np.log(x / (1.0 - bx)))
            - (x @ A @ x) / (np.sqrt(8.0) * bx) * np.log((1.0 + (1.0 + s2) * bx) / (1.0 + (1.0 - s2) * bx)))


def _median_time(fn, repeat=200):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(n=50, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A = 0.5 * (A + A.T)
    b = rng.uniform(0.1, 1.0, n) / n
    x = rng.uniform(0.1, 1.0, n)
    f = lambda z: helmholtz(z, A, b)  # noqa: E731

    tape = ad.record(f, x)
    g = tape.gradient(x)
    h = 1e-6
    fd = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(n)])
    err = np.max(np.abs(g - fd)) / np.max(np.abs(fd))
    t_f = _median_time(lambda: f(x))
    t_replay = _median_time(lambda: tape.forward(x))
    t_grad = _median_time(lambda: tape.gradient(x))
    print(f"Helmholtz free energy, n = {n}: f(x) = {f(x):.6f}")
    print(f"  tape: {len(tape)} ops, {tape.stats()['n_slots']} slots")
    print(f"  gradient vs central differences: max relative error {err:.2e}")
    print(f"  NumPy f:            {t_f * 1e6:8.1f} us")
    print(f"  tape.forward(x):    {t_replay * 1e6:8.1f} us")
    print(f"  tape.gradient(x):   {t_grad * 1e6:8.1f} us  ({t_grad / t_f:.2f} x NumPy f)")
    assert err < 1e-6, "gradient disagrees with finite differences"
    return err


if __name__ == "__main__":
    main()
