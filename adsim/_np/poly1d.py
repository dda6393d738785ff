"""np.poly1d's constructor given a list holding active values: hooked as
the SciPy functions are while a recording runs (adsim/_record/interpose.py),
since NumPy's code turns the list into a plain array itself."""
import numpy as np

from .joins import from_pieces, holds_active


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
