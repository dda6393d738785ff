"""Differentiable ODE solvers with SciPy's interface.

``adsim.integrate.solve_ivp`` takes the arguments of
``scipy.integrate.solve_ivp`` and returns its result; inside an adsim
recording its outputs carry derivatives (the discrete adjoint of the steps
taken, or with ``method="LSODA"`` SciPy's values and the derivatives of a
Radau or DOP853 solve), with memory bounded by checkpointing; with
``dense_output=True`` its ``sol`` is an active ``OdeSolution``.
``adsim.integrate.odeint``
takes those of ``scipy.integrate.odeint`` and returns SciPy's values; its
derivatives are those of adsim's solve of the same problem, to about the
tolerance those of the exact solution. See docs/integrate.md.
"""
from ._api import solve_ivp
from ._odeint import odeint
from ._result import OdeResult
from ._step_reuse import clear_step_cache

__all__ = ["solve_ivp", "odeint", "OdeResult", "clear_step_cache"]
