"""NumPy's NaN-skipping functions on active arrays, written with recorded
ops: NaN elements (found by a recorded comparison) are replaced by the
neutral value of the reduction, so they get no derivative. nansum, nanmean,
nanprod, nanmax, nanmin, nanargmax, nanargmin, nanvar, nanstd, nancumsum,
nancumprod; the NaN-skipping quantiles live with the others in ordering.py.
An all-NaN slice gives NumPy's value and warning (ValueError for nanargmax,
nanargmin)."""
import warnings

import numpy as np

from .._opcodes import CompareKind
from .core import compare, reject_kwargs
from .elementwise import where as select     # (NumPy's reductions have a where= parameter)
from .numeric import cumprod
from .reductions import amax, amin, argmax, argmin, cumsum, sum as reduce_sum


def _nan(a):
    return compare(CompareKind.CMP_NE, a, a)


def _kept_count(a, axis, keepdims):
    return np.sum(~np.asarray(_nan(a)), axis=axis, keepdims=keepdims)


def _warn(message):
    warnings.warn(message, RuntimeWarning, stacklevel=4)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("nansum", out=out, initial=initial, where=where)
    return reduce_sum(select(_nan(a), 0.0, a), axis=axis, dtype=dtype,
                      keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    reject_kwargs("nanmean", out=out, where=where)
    count = _kept_count(a, axis, keepdims)
    if np.any(count == 0):
        _warn("Mean of empty slice")
    return nansum(a, axis=axis, dtype=dtype, keepdims=keepdims) / count


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("nanprod", out=out, initial=initial, where=where)
    return np.prod(select(_nan(a), 1.0, a), axis=axis, dtype=dtype,
                   keepdims=keepdims)


def _nan_extremum(a, axis, keepdims, pick, fill):
    missing = _nan(a)
    m = pick(select(missing, fill, a), axis=axis, keepdims=keepdims)
    all_nan = np.all(missing, axis=axis, keepdims=keepdims)
    if np.any(all_nan):
        _warn("All-NaN slice encountered")
        m = select(all_nan, np.nan, m)
    return m


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("nanmax", out=out, initial=initial, where=where)
    return _nan_extremum(a, axis, keepdims, amax, -np.inf)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    reject_kwargs("nanmin", out=out, initial=initial, where=where)
    return _nan_extremum(a, axis, keepdims, amin, np.inf)


def _nan_position(a, axis, pick, fill, keepdims):
    missing = _nan(a)
    if np.any(np.all(missing, axis=axis)):
        raise ValueError("All-NaN slice encountered")
    i = pick(select(missing, fill, a), axis=axis)
    return np.expand_dims(i, axis) if keepdims and axis is not None else i


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    reject_kwargs("nanargmax", out=out)
    return _nan_position(a, axis, argmax, -np.inf, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    reject_kwargs("nanargmin", out=out)
    return _nan_position(a, axis, argmin, np.inf, keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    reject_kwargs("nanvar", out=out, where=where, mean=mean)
    return _nanvar(a, axis, dtype, ddof if correction is None else correction, keepdims)[0]


def _nanvar(a, axis, dtype, ddof, keepdims):
    """(nanvar, a plain mask of its elements that are constants: one value
    counted, or none left after ddof)."""
    missing = _nan(a)
    count = _kept_count(a, axis, True)
    mean = nansum(a, axis=axis, dtype=dtype, keepdims=True) / np.maximum(count, 1)
    d = select(missing, 0.0, a - mean)
    if not keepdims:
        count = np.squeeze(count, axis=axis) if axis is not None else count.reshape(())
    dof = count - ddof
    total = reduce_sum(d * d, axis=axis, keepdims=keepdims)
    bad = dof <= 0
    constant = bad | (count == 1)
    if np.any(bad):
        _warn("Degrees of freedom <= 0 for slice.")
        return select(bad, np.nan, total / np.where(bad, 1.0, dof)), constant
    return total / dof, constant


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    reject_kwargs("nanstd", out=out, where=where, mean=mean)
    v, constant = _nanvar(a, axis, dtype, ddof if correction is None else correction, keepdims)
    if not np.any(constant):
        return np.sqrt(v)
    # one value counted: the variance is identically 0 (NaN with no degrees
    # of freedom left), and so is its derivative; sqrt's would be infinite,
    # so it sees a stand-in there
    return select(constant, v, np.sqrt(select(constant, 1.0, v)))


def nancumsum(a, axis=None, dtype=None, out=None):
    reject_kwargs("nancumsum", out=out)
    return cumsum(select(_nan(a), 0.0, a), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    reject_kwargs("nancumprod", out=out)
    return cumprod(select(_nan(a), 1.0, a), axis=axis, dtype=dtype)
