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
import types

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
from .core import as_active, tape_of
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


def _division(c1, c2):
    """The two series of a division, and its result where NumPy's is
    immediate (a divisor longer than the dividend, or a constant one),
    else None; a zero leading coefficient raises as NumPy does."""
    c1, c2 = pu.as_series([c1, c2])
    if c2[-1] == 0:
        raise ZeroDivisionError("polynomial division by zero")
    if np.size(c1) < np.size(c2):
        return c1, c2, (c1[:1] * 0, c1)
    if np.size(c2) == 1:
        return c1, c2, (c1 / c2[-1], c1[:1] * 0)
    return c1, c2, None


def _power_series_div(c1, c2):
    """numpy.polynomial.polynomial.polydiv: NumPy's steps (the divisor scaled
    by its leading coefficient, the dividend's entries updated from the
    top), on an active copy of the dividend: NumPy updates its own copy in
    place, a plain array when only the divisor is active."""
    c1, c2, done = _division(c1, c2)
    if done is not None:
        return done
    n1, n2 = np.size(c1), np.size(c2)
    scale = c2[-1]
    c2 = c2[:-1] / scale
    c1 = as_active(tape_of(c1, c2), c1) * 1.0
    i, j = n1 - n2, n1 - 1
    while i >= 0:
        c1[i:j] -= c2 * c1[j]
        i, j = i - 1, j - 1
    return c1[j + 1:] / scale, pu.trimseq(c1[:j + 1])


def _series_div(mul_f, c1, c2):
    """polyutils._div (chebdiv, legdiv, ... and the classes' ``//``, ``%``):
    NumPy's steps, the quotient's coefficients stacked where NumPy writes
    them into an ``np.empty`` array of its own (plain, whatever the
    operands)."""
    c1, c2, done = _division(c1, c2)
    if done is not None:
        return done
    n1, n2 = np.size(c1), np.size(c2)
    quotient, rem = [None] * (n1 - n2 + 1), c1
    for i in range(n1 - n2, -1, -1):
        p = mul_f([0] * i + [1], c2)
        q = rem[-1] / p[-1]
        rem = rem[:-1] - q * p[:-1]
        quotient[i] = q
    return np.stack(quotient), pu.trimseq(rem)


# chebyshev's division of z-series, as NumPy defines it (its code, taken at
# import, before any hook replaces it)
_zseries_div = types.FunctionType(numpy.polynomial.chebyshev._zseries_div.__code__,
                                  vars(numpy.polynomial.chebyshev), "_zseries_div")


def _active_zseries_div(z1, z2):
    """chebdiv's ``_zseries_div``, NumPy's code on an active dividend (it
    updates its copy of the dividend in place: a plain copy when only the
    divisor is active)."""
    return _zseries_div(as_active(tape_of(z1, z2), z1), z2)


# (module, name, rule) of each hooked function, as interpose.py takes them
HOOKS = (*((module, name, _evaluated(getattr(module, name)))
           for module, names in _MODULES.items() for name in names),
         (pu, "_add", _padded_sum(1.0)), (pu, "_sub", _padded_sum(-1.0)),
         (numpy.polynomial.polynomial, "polydiv", _power_series_div),
         (pu, "_div", _series_div),
         (numpy.polynomial.chebyshev, "_zseries_div", _active_zseries_div))
