"""The derivatives of the ODE programs of programs_ode_s14.py as the models
have them: central differences of the same programs run by SciPy at
``rtol = 1e-12`` (``atol`` scaled down with it, the explicit methods and LSODA
replaced by DOP853 and BDF by Radau, ``odeint`` by itself at that
tolerance), not the solvers' numbers at the programs' own tolerances.

``python tests/integrate/ode_s14_reference.py`` computes them (a few
minutes) and writes ode_s14_values.py, which the tests read."""
import contextlib
import pprint
import sys
import types
from pathlib import Path

import numpy as np
import scipy.integrate as si
from scipy.integrate import quad

TIGHT = 1e-12
_solve, _odeint = si.solve_ivp, si.odeint
_SUBSTITUTE = {"RK45": "DOP853", "RK23": "DOP853", "BDF": "Radau", "LSODA": "DOP853"}


def _tight_solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False,
                     events=None, vectorized=False, args=None, rtol=1e-3, atol=1e-6,
                     first_step=None, jac_sparsity=None, **options):
    method = getattr(method, "__name__", method)
    return _solve(fun, t_span, y0, method=_SUBSTITUTE.get(method, method), t_eval=t_eval,
                  dense_output=dense_output, events=events, vectorized=vectorized, args=args,
                  rtol=TIGHT, atol=np.asarray(atol) * (TIGHT / rtol), **options)


def _tight_odeint(func, y0, t, args=(), Dfun=None, rtol=1.49012e-8, atol=1.49012e-8, **options):
    return _odeint(func, y0, t, args=args, Dfun=Dfun, rtol=TIGHT,
                   atol=np.asarray(atol) * (TIGHT / rtol), mxstep=200000, **options)


@contextlib.contextmanager
def tight(module):
    """``module``'s ``solve_ivp``, ``odeint`` and ``integrate`` at TIGHT."""
    saved = module.solve_ivp, module.odeint, module.integrate
    module.solve_ivp, module.odeint = _tight_solve_ivp, _tight_odeint
    module.integrate = types.SimpleNamespace(solve_ivp=_tight_solve_ivp, odeint=_tight_odeint,
                                             Radau="Radau", BDF="BDF")
    try:
        yield
    finally:
        module.solve_ivp, module.odeint, module.integrate = saved


def _steps(x, h):
    return h * np.abs(x)            # relative: no parameter is zero, some are small (i0 = 1e-3)


def gradient(f, x, h=1e-3):
    """Fourth-order central differences, a step of ``h`` relative to each parameter."""
    x = np.asarray(x, dtype=float)
    out = []
    for e, s in zip(np.eye(x.size), _steps(x, h)):
        at = [f(x + k * s * e) for k in (1, -1, 2, -2)]
        out.append((8 * (at[0] - at[1]) - (at[2] - at[3])) / (12 * s))
    return np.array(out)


def hessian_vector(f, x, v, h=1e-3):
    """``H v``: fourth-order central differences along ``v`` (a step of
    ``h`` relative to the largest ratio of ``v`` to ``x``) of :func:`gradient`."""
    x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
    eps = h / np.max(np.abs(v) / np.abs(x))
    at = [gradient(f, x + k * eps * v, h) for k in (1, -1, 2, -2)]
    return (8 * (at[0] - at[1]) - (at[2] - at[3])) / (12 * eps)


def exact_auc(params):
    """auc_to_tlast of the model: the integral by quad, not the trapezoid over steps."""
    k, t_last = params

    def y(t):
        return 5.0 * np.exp(-k * (t + 0.1 * np.sin(t)))
    return quad(y, 0.0, t_last, epsabs=1e-14, epsrel=1e-14)[0] + y(t_last) / k


def compute(cases, module):
    """{name: {"x": gradient at x, "x2": at x2, "hvp": H v at x (where checked)}}."""
    out = {}
    for name, case in cases.items():
        model = exact_auc if case.f is module.auc_to_tlast else case.f
        with tight(module):
            entry = {"x": gradient(model, case.x), "x2": gradient(model, case.x2)}
            if case.hvp:
                entry["hvp"] = hessian_vector(model, case.x, case.v)
        out[name] = {k: v.tolist() for k, v in entry.items()}
        print(name, out[name], flush=True)
    return out


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(here), str(here.parent)]
    import programs_ode_s14
    from test_user_ode_programs_s14 import PROGRAMS
    values = compute(PROGRAMS, programs_ode_s14)
    x = np.array([np.log(0.04), np.log(1e4)])

    def concentrations(log_k12):
        k = np.array([np.exp(log_k12[0]), 3e7, np.exp(log_k12[1])])
        return programs_ode_s14.Reactor(k).run(programs_ode_s14.ROB_T).y[0]
    with tight(programs_ode_s14):   # rows: d c / d log k_j
        values["robertson concentrations"] = {"x": gradient(concentrations, x).tolist()}
        # DOP853: SciPy's Radau differences its Jacobian with the buffer it returned
        values["pendulum buffer"] = {"x": gradient(
            lambda p: programs_ode_s14.pendulum_with_buffer(p, "DOP853"),
            np.array([2.0, 0.3])).tolist()}
    (here / "ode_s14_values.py").write_text(
        '"""Written by ode_s14_reference.py: the models\' derivatives (see there)."""\n'
        "VALUES = " + pprint.pformat(values, width=100) + "\n")
