"""Values of one solve, derivatives of another (a *donor*).

BDF's default derivatives: BDF's values, Radau's derivatives. BDF's own
discrete tangent with held step sizes is not a derivative of the ODE's
solution where the solution turns fast (a fold of Van der Pol, a spike of
the Oregonator): BDF crosses these at low order on a grid sized for the
state, which does not resolve the tangent, and after the turn the error is
of the order of the derivative itself (docs/integrate.md, "BDF's default
derivatives"). Radau's held tangent, on its own grid at the same
tolerances, is right on the whole stiff test set
(``benchmarks/_stiff_set.py``). So by default an integration with
``method="BDF"`` is solved twice: by BDF for the values (SciPy's steps, the
numbers adsim's BDF computes with its derivatives held or followed, the
counts, the status, the events) and by Radau for the derivatives, and
each output is ``value + (donor - value(donor))``: the BDF value exactly
(``d - d`` is zero), the Radau derivative.

LSODA (``odeint``, ``solve_ivp(method="LSODA")``) takes its values from
SciPy and its derivatives from adsim's solve of the same problem by
:func:`donor_method`: Radau where LSODA switched to its stiff method, DOP853
where it kept its non-stiff one.
"""
import warnings

import numpy as np

from .._np.core import active_leaves
from .._np.elementwise import stop_gradient
from ..errors import UndefinedDerivative, UnsupportedOperation
from ._dense import JoinedSolution, recorded_values
from ._result import OdeResult

__all__ = ["takes_radau_derivatives", "bdf_with_radau_derivatives", "donor_method",
           "checked_donor", "with_derivatives_of", "with_donor_derivatives"]


def donor_method(stiff):
    """The method whose derivatives LSODA's values take: Radau where LSODA
    switched to its stiff method (BDF) anywhere in the recorded call, DOP853
    where it kept its non-stiff one (Adams)."""
    return "Radau" if stiff else "DOP853"


def checked_donor(donor, who, method):
    """``donor`` (a result), refused where its solve failed."""
    if not donor.success:
        raise UndefinedDerivative(
            f"adsim: {who}'s derivatives come from adsim's {method} solve of the same "
            f"problem at the same tolerances, which failed here ({donor.message}); loosen "
            f"the tolerances or keep the parameters where the solution exists")
    return donor


def takes_radau_derivatives(name, follow_steps):
    """Whether a call of method ``name`` takes its derivatives from Radau:
    BDF with the step sizes held (the default)."""
    return name == "BDF" and not follow_steps


def bdf_with_radau_derivatives(solve, t_eval):
    """The result of ``solve("BDF", t_eval, values_only=True)`` with the
    derivatives of ``solve("Radau", ...)`` at the same output times
    (``solve(method, t_eval, values_only=False)`` runs adsim's method)."""
    return with_donor_derivatives(solve("BDF", t_eval, values_only=True),
                                  lambda times: solve("Radau", times), t_eval, ("BDF", "Radau"))


def with_donor_derivatives(values, solve_donor, t_eval, names):
    """The result ``values`` with the derivatives of ``solve_donor(times)``
    (the donor's result at output times ``times``); ``names`` are the two
    methods (for messages).

    Without ``t_eval`` the outputs are at the values' steps, which the donor
    is given as its output times; where a terminal event ended the
    integration, the last of them is the event, whose time and state move
    with the parameters: their derivatives are those of the donor's event."""
    stop = getattr(values, "stopped_by", None)
    if t_eval is not None:
        return with_derivatives_of(values, _quietly(solve_donor, t_eval), names)
    if stop is None:
        # over an empty interval ([t0, t0]) no output times: the donor's ends, as the values'
        times = None if _empty_interval(values["t"]) else values["t"]
        return with_derivatives_of(values, _quietly(solve_donor, times), names)
    donor = OdeResult(_quietly(solve_donor, values["t"][:-1]))
    t_event, y_event = donor["t_events"][stop], donor["y_events"][stop]
    if np.shape(t_event)[0] == 0:
        _disagree(names, "the terminal event", f"found by {names[0]}, not by {names[1]}")
    donor["t"] = np.concatenate([values["t"][:-1], t_event[-1:]])
    donor["y"] = np.concatenate([donor["y"], y_event[-1:].T], axis=1)
    return with_derivatives_of(values, donor, names)


def _empty_interval(t):
    """Whether the output times ``t`` of an integration without ``t_eval``
    are those of an empty interval: its two ends, equal."""
    ends = recorded_values(t)
    return ends.shape == (2,) and ends[0] == ends[1]


def _quietly(solve_donor, t_eval):
    """The donor's solve, its warnings left out: the argument checks and
    ``fun`` warned as much in the solve whose values the user gets."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve_donor(t_eval)


def with_derivatives_of(values, donor, names=("BDF", "Radau")):
    """The result ``values`` with each output's derivative that of the same
    output of ``donor``; refuses where the two solves disagree on what the
    outputs are. ``names``: the two methods (for messages)."""
    def joined(value, donor_value, what):
        return _joined(value, donor_value, what, names)
    out = OdeResult(values)          # the counts stay unread
    out["t"] = joined(values["t"], donor["t"], "t")
    out["y"] = joined(values["y"], donor["y"], "y")
    if values.get("t_events") is not None:
        out["t_events"] = [joined(a, b, f"t_events[{i}]")
                           for i, (a, b) in enumerate(zip(values["t_events"],
                                                          donor["t_events"]))]
        out["y_events"] = [joined(a, b, f"y_events[{i}]")
                           for i, (a, b) in enumerate(zip(values["y_events"],
                                                          donor["y_events"]))]
    if values.get("sol") is not None:
        out["sol"] = JoinedSolution(values["sol"], donor["sol"],
                                    lambda a, b: joined(a, b, "sol(t)"))
    return out


def _disagree(names, what, how):
    values, donor = names
    raise UnsupportedOperation(
        f"adsim.integrate.solve_ivp: with method={values!r} the derivatives are those of a "
        f"{donor} solve at the same tolerances (docs/integrate.md), but the two solves "
        f"disagree here on {what} ({how}: an event found by one and not the other, or one "
        f"solve failed). Use method={donor!r}, or tighter tolerances")


def _joined(value, donor, what, names):
    """``value`` with the derivative of ``donor``."""
    if np.shape(value) != np.shape(donor):
        _disagree(names, f"the shape of {what}", f"{np.shape(value)} and {np.shape(donor)}")
    if not active_leaves([value, donor]):
        return value
    return stop_gradient(value) + (donor - stop_gradient(donor))
