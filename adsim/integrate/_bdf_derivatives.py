"""BDF's default derivatives: BDF's values, Radau's derivatives.

BDF's own discrete tangent with held step sizes is not a derivative of the
ODE's solution where the solution turns fast (a fold of Van der Pol, a
spike of the Oregonator): BDF crosses these at low order on a grid sized for
the state, which does not resolve the tangent, and after the turn the
error is of the order of the derivative itself (docs/integrate.md, "BDF's
default derivatives"). Radau's held tangent, on its own grid at the same
tolerances, is right on the whole stiff test set
(``benchmarks/_stiff_set.py``). So by default an integration with
``method="BDF"`` is solved twice: by BDF for the values (SciPy's steps, the
numbers adsim's BDF computes with its derivatives held or followed, the
counts, the status, the events) and by Radau for the derivatives, and
each output is ``value + (donor - value(donor))``: the BDF value exactly
(``d - d`` is zero), the Radau derivative.
"""
import warnings

import numpy as np

from .._np.core import active_leaves
from .._np.elementwise import stop_gradient
from ..errors import UnsupportedOperation
from ._result import OdeResult

__all__ = ["takes_radau_derivatives", "bdf_with_radau_derivatives"]


def takes_radau_derivatives(name, follow_steps):
    """Whether a call of method ``name`` takes its derivatives from Radau:
    BDF with the step sizes held (the default)."""
    return name == "BDF" and not follow_steps


def bdf_with_radau_derivatives(solve, t_eval):
    """The result of ``solve("BDF", t_eval, values_only=True)`` with the
    derivatives of ``solve("Radau", ...)`` at the same output times
    (``solve(method, t_eval, values_only=False)`` runs adsim's method).

    Without ``t_eval`` the outputs are at BDF's steps, which the Radau solve
    is given as its output times; where a terminal event ended BDF's
    integration, the last of them is the event, whose time and state move
    with the parameters: their derivatives are those of Radau's event."""
    values = solve("BDF", t_eval, values_only=True)
    stop = getattr(values, "stopped_by", None)
    if t_eval is not None:
        return with_derivatives_of(values, _quietly(solve, t_eval))
    if stop is None:
        return with_derivatives_of(values, _quietly(solve, values["t"]))
    donor = OdeResult(_quietly(solve, values["t"][:-1]))
    t_event, y_event = donor["t_events"][stop], donor["y_events"][stop]
    if np.shape(t_event)[0] == 0:
        _disagree("the terminal event", "found by BDF, not by Radau")
    donor["t"] = np.concatenate([values["t"][:-1], t_event[-1:]])
    donor["y"] = np.concatenate([donor["y"], y_event[-1:].T], axis=1)
    return with_derivatives_of(values, donor)


def _quietly(solve, t_eval):
    """The Radau solve, its warnings left out: the argument checks and
    ``fun`` warned as much in BDF's solve, whose values the user gets."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve("Radau", t_eval)


def with_derivatives_of(values, donor):
    """The result ``values`` (BDF's) with each output's derivative that of
    the same output of ``donor`` (Radau's); refuses where the two solves
    disagree on what the outputs are."""
    out = OdeResult(values)          # the counts stay unread
    out["t"] = _joined(values["t"], donor["t"], "t")
    out["y"] = _joined(values["y"], donor["y"], "y")
    if values.get("t_events") is not None:
        out["t_events"] = [_joined(a, b, f"t_events[{i}]")
                           for i, (a, b) in enumerate(zip(values["t_events"],
                                                          donor["t_events"]))]
        out["y_events"] = [_joined(a, b, f"y_events[{i}]")
                           for i, (a, b) in enumerate(zip(values["y_events"],
                                                          donor["y_events"]))]
    return out


def _disagree(what, how):
    raise UnsupportedOperation(
        f"adsim.integrate.solve_ivp: with method='BDF' the derivatives are those of a Radau "
        f"solve at the same tolerances (BDF's own are not reliable across fast transitions), "
        f"but the two solves disagree here on {what} ({how}: an event found by one and not "
        f"the other, or one solve failed). Use method='Radau', or tighter tolerances")


def _joined(value, donor, what):
    """``value`` with the derivative of ``donor``."""
    if np.shape(value) != np.shape(donor):
        _disagree(f"the shape of {what}", f"{np.shape(value)} and {np.shape(donor)}")
    if not active_leaves([value, donor]):
        return value
    return stop_gradient(value) + (donor - stop_gradient(donor))
