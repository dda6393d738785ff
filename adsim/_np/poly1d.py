"""np.poly1d's constructor given a list holding active values, and its
division with active coefficients: hooked as the SciPy functions are while
a recording runs (adsim/_record/interpose.py), since NumPy's code turns the
list (or the poly1d given to np.polydiv) into a plain array itself."""
import numpy as np

from .._active import Active
from .joins import from_pieces, holds_active
from .numeric import polydiv


def poly1d_init(self, c_or_r, r=False, variable=None):
    """``np.poly1d([a, b, c])`` with active values among the coefficients
    (or roots): NumPy's constructor given the active array of the list, as
    it is given an active array (NumPy's code would convert the list to a
    plain array itself)."""
    np.poly1d.__init__(self, from_pieces(c_or_r), r, variable)


def _listed_coefficients(args, kwargs):
    """Does the call hold its active coefficients inside a list or tuple?
    (An active array reaches NumPy's constructor, which keeps it.)"""
    c_or_r = args[1] if len(args) > 1 else kwargs.get("c_or_r")
    return isinstance(c_or_r, (list, tuple)) and holds_active(c_or_r)


poly1d_init.routes_when = _listed_coefficients


def poly1d_truediv(self, other):
    """``p / q`` of poly1ds: NumPy's (a scalar divides the coefficients, else
    the quotient and remainder poly1ds of np.polydiv), with adsim's polydiv
    given the poly1ds themselves (NumPy's dispatch would not look into them)."""
    if np.isscalar(other) or isinstance(other, Active) and other.shape == ():
        return np.poly1d(self.coeffs / other)
    return polydiv(self, other if isinstance(other, np.poly1d) else np.poly1d(other))


def _active_coefficients(args, kwargs):
    return any(isinstance(getattr(p, "coeffs", p), Active) for p in args)


poly1d_truediv.routes_when = _active_coefficients
