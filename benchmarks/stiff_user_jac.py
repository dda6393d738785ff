"""Gradients through Radau and BDF with and without a user-given ``jac=``.

Robertson's kinetics on [0, 40], rtol = 1e-8, atol = 1e-10, the loss the
third species at the end, differentiated with respect to the log rate
constants by ``adsim.grad`` through ``scipy.integrate.solve_ivp`` (adsim's
interposition), in two forms a user writes:

* ``args``: ``fun(t, y, p)`` and ``jac(t, y, p)`` with ``args=(p,)``
  (``benchmarks/_stiff_set.py``); the function is pure, so ``adsim.grad``
  replays its cached tape at each new point;
* ``class``: a model object whose rate constants the loss sets on
  ``self.k`` before calling the solver with its bound methods ``rhs`` and
  ``jac``; the loss changes its own environment, so it is recorded again
  on every call (the tape cache's ``reuse_blocked_by`` says why), its
  integrations starting from the step variants of the last recording
  (adsim/integrate/_step_reuse.py);

each without ``t_eval`` (every accepted step an output: loops of up to 32
accepted steps) and with ``t_eval=[40]`` (the attempts one checkpointed
loop); the step variants are recorded once and replayed in C. Every call gets a new parameter vector; the cases are run
in turn, one call each per round, so that the machine's load falls on all
alike. Reported: median wall and CPU seconds per gradient over the rounds
after the first, and SciPy's forward solve with the same ``jac``.

    python -m benchmarks.stiff_user_jac [rounds]
"""
import sys
import time

import numpy as np
import scipy.integrate

import adsim

from ._stiff_set import robertson, robertson_jac

T_END = 40.0
TOLERANCES = dict(rtol=1e-8, atol=1e-10)
Y0 = [1.0, 0.0, 0.0]
P0 = np.log([0.04, 3e7, 1e4])


class Model:
    """Robertson's kinetics with the rate constants on the instance."""

    def __init__(self):
        self.k = np.exp(P0)

    def rhs(self, t, y):
        return robertson(t, y, np.log(self.k))

    def jac(self, t, y):
        return robertson_jac(t, y, np.log(self.k))


MODEL = Model()


def loss(form, method, with_jac, t_eval):
    if form == "args":
        def f(p):
            sol = scipy.integrate.solve_ivp(robertson, (0.0, T_END), Y0, method=method,
                                            args=(p,), jac=robertson_jac if with_jac else None,
                                            t_eval=t_eval, **TOLERANCES)
            return sol.y[2, -1]
        return f

    def f(p):
        MODEL.k = np.exp(p)
        sol = scipy.integrate.solve_ivp(MODEL.rhs, (0.0, T_END), Y0, method=method,
                                        jac=MODEL.jac if with_jac else None, t_eval=t_eval,
                                        **TOLERANCES)
        return sol.y[2, -1]
    return f


def main(rounds=7):
    cases = {}
    for form in ("args", "class"):
        for method in ("Radau", "BDF"):
            for t_eval in (None, [T_END]):
                for with_jac in (False, True):
                    name = (form, method, "every step" if t_eval is None else "t_eval=[40]",
                            "jac" if with_jac else "adsim's J")
                    cases[name] = adsim.grad(loss(form, method, with_jac, t_eval))
    for method in ("Radau", "BDF"):
        cases[("scipy forward", method, "", "jac")] = lambda p, m=method: \
            scipy.integrate.solve_ivp(robertson, (0.0, T_END), Y0, method=m, args=(p,),
                                      jac=robertson_jac, **TOLERANCES)
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for r in range(rounds + 1):
        p = P0 + 1e-3 * np.sin(np.arange(3) + r)
        for name, f in cases.items():
            t, c = time.perf_counter(), time.process_time()
            f(p)
            if r:
                wall[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
    print(f"{'form':14s} {'method':6s} {'outputs':12s} {'Jacobian':10s} "
          f"{'wall s':>8s} {'cpu s':>8s}")
    for name in cases:
        print(f"{name[0]:14s} {name[1]:6s} {name[2]:12s} {name[3]:10s} "
              f"{np.median(wall[name]):8.4f} {np.median(cpu[name]):8.4f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
