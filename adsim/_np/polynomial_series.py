"""numpy.polynomial's evaluation functions at active points: ``polyval``,
``chebval``, ``legval``, ``hermval``, ``hermeval``, ``lagval`` and
``polyvalfromroots`` (so the series classes' ``__call__`` and the ``*grid``
functions too).

NumPy's code gives each coefficient its own axes for ``tensor=True`` only
when ``x`` is an ndarray (``isinstance(x, np.ndarray)``), which an active
array is not; it would broadcast the coefficients against x instead and
return another result (for 2-d coefficients, silently). The rule does what
NumPy does for an ndarray: x made an array (a list holding active values
stacked), the coefficients reshaped to ``c.shape + (1,) * x.ndim``, and
NumPy's function called with ``tensor=False``, which then evaluates as it
would have. The hooks are put in place with the others
(adsim/_record/interpose.py)."""
import numpy as np
import numpy.polynomial.chebyshev
import numpy.polynomial.hermite
import numpy.polynomial.hermite_e
import numpy.polynomial.laguerre
import numpy.polynomial.legendre
import numpy.polynomial.polynomial
import numpy.polynomial.polyutils as pu

from .._active import Active
from .complex import ComplexActive
from .joins import from_pieces, holds_active

_ACTIVE = (Active, ComplexActive)


def _array(v):
    """``v`` as NumPy's function would see it once converted."""
    if isinstance(v, _ACTIVE):
        return v
    if isinstance(v, (list, tuple)) and holds_active(v):
        return from_pieces(v)
    return np.asarray(v)


def _tensor_at_active_points(args, kwargs):
    """Is this a call with ``tensor`` true at active points (an active array,
    or a list or tuple holding active values)?"""
    x = args[0] if args else kwargs.get("x")
    tensor = args[2] if len(args) > 2 else kwargs.get("tensor", True)
    return bool(tensor) and (isinstance(x, _ACTIVE) or
                             (isinstance(x, (list, tuple)) and holds_active(x)))


def _evaluated(function):
    def rule(x, c, tensor=True):
        x, c = _array(x), np.atleast_1d(_array(c))
        return function(x, np.reshape(c, np.shape(c) + (1,) * np.ndim(x)), tensor=False)
    rule.routes_when = _tensor_at_active_points
    rule.__name__ = function.__name__
    return rule


_MODULES = {numpy.polynomial.polynomial: ("polyval", "polyvalfromroots"),
            numpy.polynomial.chebyshev: ("chebval",), numpy.polynomial.legendre: ("legval",),
            numpy.polynomial.hermite: ("hermval",), numpy.polynomial.hermite_e: ("hermeval",),
            numpy.polynomial.laguerre: ("lagval",)}

def _padded_sum(sign):
    """NumPy's ``_add`` (``_sub``): the shorter series added into (subtracted
    from) a copy of the longer one, then trailing zeros trimmed. NumPy adds
    in place into whichever copy is longer, a plain array when the active
    series is the shorter; here both are padded to one length instead (the
    entries past the shorter series are the longer one's, plus zero)."""
    def rule(c1, c2):
        c1, c2 = pu.as_series([c1, c2])
        n = max(np.size(c1), np.size(c2))
        return pu.trimseq(np.pad(c1, (0, n - np.size(c1))) +
                          sign * np.pad(c2, (0, n - np.size(c2))))
    rule.__name__ = "_add" if sign > 0 else "_sub"
    return rule


# (module, name, rule) of each hooked function, as interpose.py takes them
HOOKS = (*((module, name, _evaluated(getattr(module, name)))
           for module, names in _MODULES.items() for name in names),
         (pu, "_add", _padded_sum(1.0)), (pu, "_sub", _padded_sum(-1.0)))
