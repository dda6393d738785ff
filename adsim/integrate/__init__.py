"""Differentiable ODE solvers with SciPy's interface.

``adsim.integrate.solve_ivp`` takes the arguments of
``scipy.integrate.solve_ivp`` and returns its result; inside an adsim
recording its outputs carry derivatives (the discrete adjoint of the steps
taken), with memory bounded by checkpointing. ``adsim.integrate.odeint``
takes those of ``scipy.integrate.odeint`` and returns SciPy's values; its
derivatives are those of the exact solution, to about the tolerance
(continuous adjoint, forward sensitivities). See docs/integrate.md.
"""
from ._api import solve_ivp
from ._odeint import odeint
from ._result import OdeResult

__all__ = ["solve_ivp", "odeint", "OdeResult"]
