"""solve_ivp without ``t_eval``: every accepted step an output.

Robertson's kinetics (Radau and BDF, rtol 1e-6, atol 1e-10, over [0, 100])
and Lotka–Volterra (RK45, rtol 1e-8, over [0, 15]), loss ``sum(w * sol.y[:, -1])``
of the rate constants (or ``sum(w @ sol.sol(t))`` at ten times with
``dense_output=True``), without ``t_eval`` (every accepted step is an
output: inside a recording the steps' times and solutions travel in the
state of loops of up to 32 accepted steps, adsim/integrate/_carried.py) and with ``t_eval`` at the
end alone, against SciPy's forward solve. Every call gets new parameters
(moved by about ``spread``, 1e-3 by default: where the steps' branches or
their count change the tape is recorded again, as a user's loop of calls
would see; a smaller spread shows replays, a larger one recordings); the cases
run in turn, one call each per round. Reported: median wall seconds per
call over the rounds after the first, and the ratios to SciPy.

    python -m benchmarks.every_step [rounds] [spread]
"""
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim
from adsim.integrate import solve_ivp


def robertson(t, y, k1, k2, k3):
    return np.stack([-k1 * y[0] + k2 * y[1] * y[2],
                     k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2, k3 * y[1] ** 2])


def lotka_volterra(t, y, a, b):
    return np.stack([a * y[0] - b * y[0] * y[1], -y[1] + b * y[0] * y[1]])


PROBLEMS = {
    "Robertson Radau": (robertson, (0.0, 100.0), np.array([1.0, 0.0, 0.0]),
                        np.array([0.04, 1e4, 3e7]), dict(method="Radau", rtol=1e-6, atol=1e-10),
                        np.array([1.0, 1e4, 1.0])),
    "Robertson BDF": (robertson, (0.0, 100.0), np.array([1.0, 0.0, 0.0]),
                      np.array([0.04, 1e4, 3e7]), dict(method="BDF", rtol=1e-6, atol=1e-10),
                      np.array([1.0, 1e4, 1.0])),
    "Lotka-Volterra RK45": (lotka_volterra, (0.0, 15.0), np.array([1.0, 0.5]),
                            np.array([1.1, 0.4]), dict(method="RK45", rtol=1e-8, atol=1e-8),
                            np.array([1.0, 1.0])),
}


def main(rounds=7, spread=1e-3):
    rounds, spread = int(rounds), float(spread)
    cases = {}
    for name, (fun, span, y0, p0, options, w) in PROBLEMS.items():
        def loss(outputs, fun=fun, span=span, y0=y0, options=options, w=w):
            extra = {"every step": {}, "end": {"t_eval": [span[1]]},
                     "dense": {"dense_output": True}}[outputs]
            times = np.linspace(span[0], span[1], 12)[1:-1]

            def f(p):
                sol = solve_ivp(fun, span, y0, args=tuple(p), **options, **extra)
                if outputs == "dense":
                    return np.sum(w @ sol.sol(times))
                return np.sum(w * sol.y[:, -1])
            return f
        cases[name, "scipy forward"] = (p0, lambda p, fun=fun, span=span, y0=y0, o=options:
                                        scipy_solve_ivp(fun, span, y0, args=tuple(p), **o))
        cases[name, "gradient, every step"] = (p0, adsim.grad(loss("every step")))
        cases[name, "gradient, t_eval=[end]"] = (p0, adsim.grad(loss("end")))
        cases[name, "gradient, sol(t)"] = (p0, adsim.grad(loss("dense")))
    times = {key: [] for key in cases}
    rng = np.random.default_rng(5)
    for _ in range(rounds):
        scale = 1.0 + spread * rng.standard_normal()
        for key, (p0, call) in cases.items():
            p = p0 * scale
            start = time.perf_counter()
            call(p)
            times[key].append(time.perf_counter() - start)
    print(f"{'problem':22} {'case':24} {'median s':>10} {'/ SciPy':>8}")
    for name in PROBLEMS:
        base = np.median(times[name, "scipy forward"][1:])
        for case in ("scipy forward", "gradient, every step", "gradient, t_eval=[end]",
                     "gradient, sol(t)"):
            t = np.median(times[name, case][1:])
            print(f"{name:22} {case:24} {t:10.4f} {t / base:8.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
