"""Differentiable ODE solvers with SciPy's interface.

``adsim.integrate.solve_ivp`` takes the arguments of
``scipy.integrate.solve_ivp`` and returns its result; inside an adsim
recording its outputs carry derivatives (the discrete adjoint of the steps
taken), with memory bounded by checkpointing. See docs/integrate.md.
"""
from ._api import solve_ivp
from ._result import OdeResult

__all__ = ["solve_ivp", "OdeResult"]
