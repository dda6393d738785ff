"""ODE adjoints with ``adsim.integrate.solve_ivp``: gradient cost against SciPy's forward solve.

Problems (the steps of ``scipy.integrate.solve_ivp``):

* Lorenz-63 on [0, T] with rtol = 1e-8, atol = 1e-10, the loss
  ``sum(y(T)^2)`` differentiated with respect to y0 and (sigma, rho, beta);
  T gives about 10^3 and 10^4 steps (``--quick``: about 10^2 and 10^3).
* Lotka-Volterra with rtol = atol = 1e-9, 30 outputs (``t_eval``), the loss a
  weighted sum of squares of the outputs, differentiated with respect to
  the four rates and the two initial values.
* Robertson's stiff kinetics with BDF and Radau (rtol = 1e-6, atol = 1e-10,
  10 outputs on [0, 40]), differentiated with respect to the log rate
  constants and y0; SciPy's forward solve runs with its default
  (finite-difference) Jacobian, adsim's with the exact one.

Methods: SciPy's ``solve_ivp`` (the forward solve alone), adsim's
``solve_ivp`` on plain arrays (the same forward solve), and the gradient by
``adsim.value_and_grad`` with its cached tape (a replay: the loops re-run
their step tapes in C along the online checkpointing schedule). The ratio
gradient / SciPy forward is the cost of a gradient in forward solves.
Times are medians with the min–max spread (``benchmarks/timing.py``);
results go to ``benchmarks/results/ode.json`` and, in full runs, the
section of docs/benchmarks.md.
"""
import sys

import numpy as np
from scipy.integrate import solve_ivp as scipy_solve_ivp

import adsim as ad
from adsim.integrate import solve_ivp

from . import timing as T

AREA = "ode"


def lorenz(t, y, p):
    return [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]


def lotka_volterra(t, z, rates):
    x, y = z[0], z[1]
    return [rates[0] * x - rates[1] * x * y, rates[3] * x * y - rates[2] * y]


def robertson(t, y, k):
    return [-k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
            k[1] * y[1] ** 2]


def _robertson_case(method):
    y0, log_k = np.array([1.0, 0.0, 0.0]), np.log([0.04, 3e7, 1e4])
    options = dict(method=method, t_eval=np.linspace(4.0, 40.0, 10), rtol=1e-6, atol=1e-10)

    def loss(y0, log_k):
        res = solve_ivp(robertson, (0.0, 40.0), y0, args=(np.exp(log_k),), **options)
        return np.sum(res.y[0] + 1e4 * res.y[1])
    return dict(name=f"Robertson, {method}", fun=robertson, t_span=(0.0, 40.0),
                point=(y0, log_k), options=options, loss=loss,
                args=lambda y0, log_k: (np.exp(log_k),))


def _lorenz_case(t_end):
    y0, p = np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8 / 3])
    options = dict(t_eval=[t_end], rtol=1e-8, atol=1e-10)

    def loss(y0, p):
        return np.sum(solve_ivp(lorenz, (0.0, t_end), y0, args=(p,), **options).y ** 2)
    return dict(name=f"Lorenz-63, T = {t_end:g}", fun=lorenz, t_span=(0.0, t_end),
                point=(y0, p), options=options, loss=loss, args=lambda y0, p: (p,))


def _lotka_volterra_case():
    rates, z0 = np.array([1.0, 0.1, 1.5, 0.075]), np.array([10.0, 5.0])
    t_eval = np.linspace(0.5, 15.0, 30)
    weights = np.linspace(1.0, 2.0, 60).reshape(2, 30)
    options = dict(t_eval=t_eval, rtol=1e-9, atol=1e-9)

    def loss(z0, rates):
        res = solve_ivp(lotka_volterra, (0.0, 15.0), z0, args=(rates,), **options)
        return np.sum(weights * res.y ** 2)
    return dict(name="Lotka-Volterra, 30 outputs", fun=lotka_volterra, t_span=(0.0, 15.0),
                point=(z0, rates), options=options, loss=loss, args=lambda z0, r: (r,))


def run_case(case, s):
    y0, p = case["point"]
    args = case["args"](y0, p)
    ref = scipy_solve_ivp(case["fun"], case["t_span"], y0, args=args, **case["options"])
    value_and_grad = ad.value_and_grad(case["loss"], argnums=(0, 1))
    value_and_grad(y0, p)                                   # records the tape
    timings = {
        "scipy_forward": T.measure(lambda: scipy_solve_ivp(case["fun"], case["t_span"], y0,
                                                           args=args, **case["options"]), s),
        "adsim_forward": T.measure(lambda: solve_ivp(case["fun"], case["t_span"], y0,
                                                     args=args, **case["options"]), s),
        "adsim_gradient": T.measure(lambda: value_and_grad(y0, p), s),
    }
    nfev = solve_ivp(case["fun"], case["t_span"], y0, args=args, **case["options"]).nfev
    return dict(name=case["name"], nfev=nfev, scipy_nfev=ref.nfev,
                recordings=value_and_grad.tapes.recordings,
                timings={k: v.as_dict() for k, v in timings.items()},
                ratio=timings["adsim_gradient"].median / timings["scipy_forward"].median,
                per_evaluation=timings["adsim_gradient"].median / nfev)


def _stiff_mol_cases(s):
    """1-D Brusselator with diffusion by the method of lines (n = 500
    equations, ``--quick``: 200), Radau and BDF, rtol = 1e-6, atol = 1e-8,
    10 outputs on [0, 2], the loss ``sum(y**2)`` differentiated with respect
    to y0 and (a, b, alpha). SciPy's forward solve gets ``jac_sparsity``
    (grouped differences, sparse LU); adsim's Jacobian is sparse (its own
    choice for this size) or dense (the size threshold raised for the
    measurement: one equation per second-order sweep, dense LU)."""
    import scipy.sparse as sp
    from adsim.integrate import _implicit

    def brusselator(t, y, a, b, alpha):
        N = y.shape[0] // 2
        u, v = y[:N], y[N:]
        k = alpha * (N + 1) ** 2
        up = np.concatenate([np.ones(1), u, np.ones(1)])
        vp = np.concatenate([3 * np.ones(1), v, 3 * np.ones(1)])
        return np.concatenate([a + u * u * v - (b + 1) * u + k * (up[2:] - 2 * u + up[:-2]),
                               b * u - u * u * v + k * (vp[2:] - 2 * v + vp[:-2])])
    N = 100 if s.quick else 250
    x = np.arange(1, N + 1) / (N + 1)
    y0, p = np.concatenate([1 + np.sin(2 * np.pi * x), 3 * np.ones(N)]), np.array([1.0, 3.0, 0.02])
    tridiagonal = sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(N, N))
    pattern = sp.csc_array(sp.block_array([[tridiagonal, sp.eye_array(N)],
                                           [sp.eye_array(N), tridiagonal]]))
    results, threshold = [], _implicit.SPARSE_MIN_SIZE
    for method in ("BDF", "Radau"):
        options = dict(method=method, t_eval=np.linspace(0.2, 2.0, 10), rtol=1e-6, atol=1e-8)

        def loss(y0, p):
            res = solve_ivp(brusselator, (0.0, 2.0), y0, args=(p[0], p[1], p[2]), **options)
            return np.sum(res.y ** 2)
        def scipy_solve():
            return scipy_solve_ivp(brusselator, (0.0, 2.0), y0, args=tuple(p),
                                   jac_sparsity=pattern, **options)
        scipy_forward, scipy_nfev = T.measure(scipy_solve, s), scipy_solve().nfev
        for kind in ("sparse", "dense"):
            _implicit.SPARSE_MIN_SIZE = threshold if kind == "sparse" else 2 * N + 1
            try:
                value_and_grad = ad.value_and_grad(loss, argnums=(0, 1))
                value_and_grad(y0, p)                           # records the tape
                timings = {"scipy_forward": scipy_forward,
                           "adsim_forward": T.measure(lambda: solve_ivp(
                               brusselator, (0.0, 2.0), y0, args=tuple(p), **options), s),
                           "adsim_gradient": T.measure(lambda: value_and_grad(y0, p), s)}
                nfev = solve_ivp(brusselator, (0.0, 2.0), y0, args=tuple(p), **options).nfev
            finally:
                _implicit.SPARSE_MIN_SIZE = threshold
            results.append(dict(
                name=f"Brusselator MOL, n = {2 * N}, {method}: adsim {kind} Jacobian, SciPy "
                f"jac_sparsity", nfev=nfev, scipy_nfev=scipy_nfev,
                recordings=value_and_grad.tapes.recordings,
                timings={k: v.as_dict() for k, v in timings.items()},
                ratio=timings["adsim_gradient"].median / scipy_forward.median,
                per_evaluation=timings["adsim_gradient"].median / nfev))
    return results


def run(s):
    ends = (1.0, 10.0) if s.quick else (10.0, 100.0)
    cases = [_lorenz_case(t) for t in ends] + [_lotka_volterra_case()] + \
        [_robertson_case(m) for m in ("BDF", "Radau")]
    return {"cases": [run_case(c, s) for c in cases] + _stiff_mol_cases(s),
            "peers": "diffrax and torchdiffeq are "
            "not timed here yet"}


def markdown(res, s, machine):
    rows = []
    for c in res["cases"]:
        t = {k: T.Timing(**v) for k, v in c["timings"].items()}
        rows.append([c["name"], c["nfev"], T.fmt_timing(t["scipy_forward"]),
                     T.fmt_timing(t["adsim_forward"]), T.fmt_timing(t["adsim_gradient"]),
                     T.fmt_ratio(c["ratio"]), T.fmt_time(c["per_evaluation"])])
    return "\n".join([
        "## ODE adjoints: `adsim.integrate.solve_ivp`\n", T.header(AREA, s, machine), "",
        "The steps of `scipy.integrate.solve_ivp` (Robertson: SciPy with its default "
        "finite-difference Jacobian, adsim with the exact one); the gradient is "
        "`adsim.value_and_grad` of the loss with its cached tape. Ratio: gradient / SciPy "
        "forward solve.", "",
        T.table(["problem", "fun evaluations", "SciPy forward", "adsim forward (plain)",
                 "adsim value and gradient", "ratio", "gradient per evaluation"], rows), ""])


def main(argv=None):
    return T.area_main(AREA, __doc__.splitlines()[0], run, markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
