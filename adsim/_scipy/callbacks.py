"""The ``callback`` of a differentiated solver call, watched.

A callback cannot move SciPy's iterates (it is shown copies of them), but
it can stop the solver: by raising StopIteration, or for trust-constr by
returning True. ``minimize`` reports most such stops as failures, but
COBYQA reports one as a success, ``fmin_tnc`` lets the StopIteration
escape, and ``fmin``, ``fmin_powell``, ``fmin_cg``, ``fmin_bfgs`` and
``fmin_cobyla`` return the point they stopped at as a converged one
(SciPy 1.17). That point is no solution: its derivative by the implicit
function theorem would be wrong. So adsim takes any stop a callback asks
for as a solve that did not converge (SolverNotConverged). A result adsim
differentiates is then never one a callback shaped, and a tape file,
which calls no Python, leaves the callback out: the loaded solve is the
original's without the callback's side effects (printing, logging).
"""
import functools

import numpy as np
from scipy.optimize import OptimizeResult

from ..errors import SolverNotConverged

__all__ = ["CallbackWatch"]


def _copied(value):
    """What a callback is shown: copies of the iterate, so it cannot move it."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, OptimizeResult):
        return OptimizeResult({k: v.copy() if isinstance(v, np.ndarray) else v
                               for k, v in value.items()})
    return value


class CallbackWatch:
    """One solve's callback: :meth:`watched` wraps it (keeping its
    signature, which SciPy inspects), :meth:`run` runs the solve and raises
    SolverNotConverged where the callback stopped it."""

    def __init__(self, solver):
        self.solver = solver
        self.stopped = False

    def watched(self, callback):
        if not callable(callback):
            return callback

        @functools.wraps(callback)
        def watched(*args, **kwargs):
            try:
                out = callback(*map(_copied, args),
                               **{k: _copied(v) for k, v in kwargs.items()})
            except StopIteration:
                self.stopped = True
                raise
            return out
        return watched

    def run(self, solve):
        """``solve()``; SolverNotConverged if the callback stopped it."""
        try:
            result = solve()
        except StopIteration:            # fmin_tnc and TNC let it escape
            if not self.stopped:
                raise
        if self.stopped:
            raise SolverNotConverged(
                f"adsim: the callback given to scipy.optimize.{self.solver} stopped it "
                f"(StopIteration) before it converged, so its point is no solution to "
                f"differentiate (SciPy returns such a point as a converged one for some "
                f"solvers). Stop the solver by its tolerances or iteration limits instead")
        return result
