"""``solve_ivp`` of a complex state (``y0`` complex: a Schrödinger equation,
a field envelope) with active values, by the explicit Runge–Kutta methods.

The state of ``n`` complex components is integrated as ``2 n`` real
numbers, the real parts followed by the imaginary parts: ``fun``, ``jac``
and the events are called on the complex state made of them, and
``fun``'s complex derivative is split the same way. An explicit Runge–Kutta
step is linear with real coefficients, so it acts on the two halves as
SciPy's acts on the complex numbers; the error control takes the
modulus of each pair and the norm over the ``n`` complex components
(``pairs`` of :func:`adsim.integrate._common.state_norm`), as SciPy's does,
so the steps are SciPy's. The outputs (``y``, ``y_events``, ``sol(t)``)
are complex again.

Radau, BDF and LSODA are refused with a complex active state: their
Newton iterations on the real form are not SciPy's on the complex one.
"""
import numpy as np

from .._np.complex import ComplexActive
from .._np.core import active_leaves
from ..errors import UnsupportedOperation
from ._tableaux import EXPLICIT

__all__ = ["is_complex_state", "complex_solve"]


def is_complex_state(y0):
    """Whether ``y0`` is a complex state (a complex array, an active complex
    array, or a list holding complex numbers)."""
    if isinstance(y0, ComplexActive):
        return True
    if isinstance(y0, (list, tuple)):
        return any(is_complex_state(v) for v in y0)
    return not active_leaves(y0) and np.iscomplexobj(y0)


def _as_complex(y, n):
    return y[:n] + 1j * y[n:]


def _split(z):
    """A complex derivative (an array, an active array, a list of numbers)
    as its real parts followed by its imaginary parts."""
    if isinstance(z, (list, tuple)):
        z = np.stack([_complex_item(v) for v in z])
    return np.concatenate([np.real(z), np.imag(z)])


def _complex_item(v):
    return v if isinstance(v, ComplexActive) else np.asarray(v, dtype=complex) \
        if not active_leaves(v) else v + 0j


def _wrapped(f, n):
    def on_pairs(t, y, *args):
        return f(t, _as_complex(y, n), *args)
    for name in ("terminal", "direction"):
        if hasattr(f, name):
            setattr(on_pairs, name, getattr(f, name))
    return on_pairs


class ComplexSolution:
    """``sol`` of a complex state: SciPy's ``OdeSolution`` interface, its
    values complex."""

    def __init__(self, sol, n):
        self._sol, self._n = sol, n

    def __call__(self, t):
        return _as_complex(self._sol(t), self._n)

    def __getattr__(self, name):
        return getattr(self._sol, name)


def complex_solve(solve, name, fun, y0, events, options, follow_steps):
    """``solve(fun, y0, events, options, pairs)`` (adsim's solve of a real
    state) on the split state, its result made complex again."""
    if name not in EXPLICIT:
        raise UnsupportedOperation(
            f"adsim.integrate.solve_ivp: a complex y0 with active values is integrated by "
            f"the explicit methods (RK45, RK23, DOP853), not method={name!r}, whose Newton "
            f"iterations on the real and imaginary parts would not be SciPy's on the complex "
            f"state. Use an explicit method, or split y into its real and imaginary parts (a "
            f"state twice as long) and write fun for that state")
    if follow_steps:
        raise UnsupportedOperation(
            "adsim.integrate.solve_ivp: follow_steps=True with a complex y0 is not supported "
            "(its step sizes come from moduli that pass no derivative); leave it out")
    z0 = np.stack([_complex_item(v) for v in y0]) if isinstance(y0, (list, tuple)) else y0
    n = np.shape(z0)[0] if np.ndim(z0) == 1 else None
    if n is None:
        raise UnsupportedOperation(f"adsim.integrate.solve_ivp: `y0` must be 1-dimensional "
                                   f"(one value per equation), got shape {np.shape(z0)}")
    atol = options.get("atol")
    if atol is not None and np.ndim(atol) == 1:
        options = dict(options, atol=np.concatenate([atol, atol]))
    if events is not None:
        events = [_wrapped(e, n) for e in events] if isinstance(events, (list, tuple)) \
            else _wrapped(events, n)

    def split_fun(t, y, *args):
        return _split(fun(t, _as_complex(y, n), *args))
    result = solve(split_fun, _split(z0), events, options, n)
    result["y"] = _as_complex(result["y"], n)
    if result.get("y_events") is not None:
        result["y_events"] = [_as_complex(np.transpose(v), n).T if np.size(v) else
                              np.empty((0, n), dtype=complex) for v in result["y_events"]]
    if result.get("sol") is not None:
        result["sol"] = ComplexSolution(result["sol"], n)
    return result
