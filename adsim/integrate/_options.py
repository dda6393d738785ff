"""Checks of ``solve_ivp``'s arguments, with SciPy's rules and messages
where SciPy has them, and clear adsim errors for what is not supported."""
import warnings

import numpy as np
import scipy.sparse as sp

from .._np.integers import current, plain_if_constant
from .._active import Active
from .._scipy.sparse_active import ActiveSparse
from .._validate import function, given
from ..errors import InvalidArgument, InvalidArgumentValue, InvalidInput, UnsupportedOperation
from ._common import EPS
from ._rhs import real_array

__all__ = ["check_fun", "check_method", "check_t_span", "check_y0", "check_args",
           "check_t_eval", "check_events", "check_stats", "check_tolerances", "check_max_step",
           "check_first_step", "check_sparsity", "warn_extraneous"]

SUPPORTED = ("RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA")
_WHERE = "adsim.integrate.solve_ivp"


def check_fun(fun):
    function(fun, "integrate.solve_ivp", "fun",
             "fun(t, y, *args) returning dy/dt, as for scipy.integrate.solve_ivp")


def check_method(method):
    """The method's name; SciPy's solver classes count as their names."""
    if isinstance(method, type):
        name = method.__name__
        if name in SUPPORTED and method.__module__.startswith("scipy.integrate"):
            return name
        raise UnsupportedOperation(
            f"adsim.integrate.solve_ivp: method={method.__name__} is a solver class; adsim "
            f"runs its own methods, chosen by name: one of {', '.join(SUPPORTED)}")
    if method in SUPPORTED:
        return method
    raise InvalidArgumentValue(f"{_WHERE}: `method` must be one of {', '.join(SUPPORTED)} "
                               f"(or SciPy's solver class of that name), got {given(method)}")


def _finite(t, what):
    """Refuse NaN or infinite times (plain or active, at their value now):
    an integration towards one would never end, an output at one is NaN."""
    if not np.all(np.isfinite(current(t) if isinstance(t, Active) else t)):
        raise InvalidArgumentValue(f"{_WHERE}: {what} must be finite, got "
                                   f"{given(current(t) if isinstance(t, Active) else t)}")


def _time(t, what):
    if isinstance(t, Active):
        if t.size != 1:
            raise InvalidArgumentValue(f"{_WHERE}: {what} must be a scalar, got shape "
                                       f"{t.shape}")
        _finite(t, what)
        return t.reshape(())
    value = np.asarray(t)
    if value.dtype.kind == "c":
        raise InvalidInput(f"adsim.integrate.solve_ivp: {what} is complex ({t!r}); times are "
                           f"real numbers")
    if value.dtype.kind not in "biuf" or value.size != 1:
        raise InvalidArgument(f"{_WHERE}: {what} must be a real number, got {given(t)}")
    _finite(value, what)
    return float(t)


def check_t_span(t_span):
    try:
        t0, tf = t_span
    except (TypeError, ValueError) as err:      # not a sequence, or not of two
        error = InvalidArgumentValue if isinstance(err, ValueError) else InvalidArgument
        raise error(f"{_WHERE}: t_span must be a pair (t0, tf) of real numbers, got "
                    f"{given(t_span)}") from None
    return _time(t0, "t_span[0]"), _time(tf, "t_span[1]")


def check_y0(y0, scipy_solves=False):
    """``y0`` as a 1-D array of finite values: real (converted to float64),
    or also complex when ``scipy_solves`` (SciPy's own solve, which accepts
    complex states: the array is checked and returned as given)."""
    if scipy_solves and not isinstance(y0, Active) and np.iscomplexobj(y0):
        state = np.asarray(y0)
        checked = state.real
    else:
        state = checked = real_array(y0, "y0")
    if checked.ndim != 1:
        raise InvalidArgumentValue(f"{_WHERE}: `y0` must be 1-dimensional (one value per "
                                   f"equation), got {given(y0)}")
    if not np.all(np.isfinite(state)):
        raise InvalidArgumentValue(f"{_WHERE}: All components of the initial state `y0` must "
                                   f"be finite, got {given(y0)}")
    return state


def check_args(args):
    if args is None:
        return ()
    try:
        return tuple(args)
    except TypeError:
        raise InvalidArgument(f"{_WHERE}: supplied 'args' cannot be unpacked, got {given(args)}. "
                              f"Please supply `args` as a tuple (e.g. `args=({args!r},)`)") from None


def check_events(events):
    """``events`` as None, one callable or a list or tuple of callables."""
    if events is None or callable(events) or isinstance(events, (list, tuple)) and all(
            callable(e) for e in events):
        return events
    bad = events if not isinstance(events, (list, tuple)) else \
        next(e for e in events if not callable(e))
    where = "" if bad is events else f" (item {list(events).index(bad)})"
    raise InvalidArgument(f"{_WHERE}: events must be a callable event(t, y, *args) or a list or "
                          f"tuple of them, got {given(bad)}{where}")


def check_stats(stats):
    """``stats`` as None or a list to receive one dict per checkpointed loop."""
    if stats is None or isinstance(stats, list):
        return stats
    raise InvalidArgument(f"{_WHERE}: stats must be a list (it receives one dict of work counts "
                          f"per checkpointed loop), got {given(stats)}; pass stats=[]")


def check_t_eval(t_eval, t0, tf):
    """``t_eval`` as a 1-D array (active or plain), within ``t_span`` and
    sorted in the direction of integration."""
    t_eval = real_array(t_eval, "t_eval")
    if t_eval.ndim != 1:
        raise InvalidArgumentValue(f"{_WHERE}: `t_eval` must be 1-dimensional (the output "
                                   f"times), got shape {t_eval.shape}")
    _finite(t_eval, "t_eval")
    if np.any(t_eval < min(t0, tf)) or np.any(t_eval > max(t0, tf)):
        raise InvalidArgumentValue(f"{_WHERE}: Values in `t_eval` are not within `t_span`.")
    d = np.diff(t_eval)
    if (tf > t0 and np.any(d <= 0)) or (tf < t0 and np.any(d >= 0)):
        raise InvalidArgumentValue(f"{_WHERE}: Values in `t_eval` are not properly sorted.")
    return t_eval


def _plain(value, name, accepted="a real number"):
    """An option as a plain value: constants made in the recorded function
    pass (as plain arrays); a value that depends on the inputs is refused,
    and so is anything but real numbers (``accepted`` says what is)."""
    value = plain_if_constant(value)
    if isinstance(value, Active):
        raise UnsupportedOperation(
            f"adsim.integrate.solve_ivp: {name} is active; tolerances and step bounds are "
            f"options, not differentiable inputs: pass plain numbers")
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError):         # a ragged sequence
        kind = "O"
    if kind not in "biuf" or (accepted == "a real number" and np.ndim(value) != 0):
        raise InvalidArgument(f"{_WHERE}: {name} must be {accepted}, got {given(value)}")
    return value


def check_tolerances(rtol, atol, n):
    tolerance = f"a real number or an array of {n} (one per component of y)"
    rtol, atol = _plain(rtol, "rtol", tolerance), _plain(atol, "atol", tolerance)
    if np.any(np.asarray(rtol) < 100 * EPS):
        warnings.warn(f"At least one element of `rtol` is too small. Setting "
                      f"`rtol = np.maximum(rtol, {100 * EPS})`.", stacklevel=4)
        rtol = np.maximum(rtol, 100 * EPS)
    if not (np.all(np.isfinite(rtol)) and np.all(np.isfinite(atol))):    # steps never accepted
        raise InvalidArgumentValue(f"{_WHERE}: rtol and atol must be finite, got rtol="
                                   f"{given(rtol)}, atol={given(atol)}")
    atol = np.asarray(atol, dtype=float)
    if atol.ndim > 0 and atol.shape != (n,):
        raise InvalidArgumentValue(f"{_WHERE}: `atol` has wrong shape.")
    if np.any(atol < 0):
        raise InvalidArgumentValue(f"{_WHERE}: `atol` must be positive.")
    return rtol, (float(atol) if atol.ndim == 0 else atol)


def check_max_step(max_step):
    max_step = _plain(max_step, "max_step")
    if max_step <= 0:
        raise InvalidArgumentValue(f"{_WHERE}: `max_step` must be positive.")
    return max_step


def check_first_step(first_step, t0, tf):
    if first_step is None:
        return None
    first_step = _plain(first_step, "first_step")
    if first_step <= 0:
        raise InvalidArgumentValue(f"{_WHERE}: `first_step` must be positive.")
    if first_step > abs(tf - t0):
        raise InvalidArgumentValue(f"{_WHERE}: `first_step` exceeds bounds.")
    return first_step


def check_sparsity(sparsity, n):
    """``jac_sparsity`` as SciPy reads it: an n-by-n array or sparse matrix
    whose nonzero entries mark where the Jacobian may be nonzero. Returns a
    boolean CSC pattern, or None."""
    if sparsity is None:
        return None
    if isinstance(sparsity, Active):
        raise UnsupportedOperation(
            "adsim.integrate.solve_ivp: jac_sparsity is active; it is a pattern (where the "
            "Jacobian may be nonzero), not a differentiable input: pass a plain array or "
            "sparse matrix")
    if isinstance(sparsity, ActiveSparse):     # J itself (jac_sparsity=a * A): its entries
        rows, cols = sparsity.entries
        sparsity = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=sparsity.shape)
    elif not sp.issparse(sparsity):
        sparsity = np.asarray(sparsity)
        if sparsity.dtype.kind not in "biufc":
            raise InvalidArgument(f"adsim.integrate.solve_ivp: jac_sparsity must hold numbers or "
                            f"booleans (nonzero where the Jacobian may be nonzero), got dtype "
                            f"{sparsity.dtype}")
    if tuple(np.shape(sparsity)) != (n, n):
        raise InvalidArgumentValue(f"{_WHERE}: `jac_sparsity` is expected to have shape "
                                   f"{(n, n)}, but actually has "
                         f"{tuple(np.shape(sparsity))}.")
    pattern = sp.csc_matrix(sparsity)
    pattern.eliminate_zeros()
    return sp.csc_matrix(pattern, dtype=bool)


def warn_extraneous(extraneous):
    """SciPy's warning for options the chosen method does not use."""
    if extraneous:
        warnings.warn("The following arguments have no effect for a chosen solver: "
                      + ", ".join(f"`{x}`" for x in extraneous) + ".", stacklevel=3)
