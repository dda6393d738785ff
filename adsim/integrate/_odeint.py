"""``adsim.integrate.odeint``: SciPy's ``odeint`` (LSODA), differentiable.

A call that holds no active value is SciPy's ``odeint`` itself. A call with
active values in ``y0``, ``t``, ``args`` or ``func``'s closure gives SciPy's
numbers with the derivatives of adsim's own solve at the same tolerances (by
Radau where LSODA switched to its stiff method, DOP853 where it did not), as
``solve_ivp(method="BDF")`` does (``_bdf_derivatives.py``): the values are
one recorded op (``_odeint_op.py``: SciPy's ``odeint`` on a recorded tape
of ``func``, again at every replay; a tape file holds that tape) whose
inputs are stopped, so it carries no derivative,
and each output is ``values + (donor - value(donor))``. LSODA's own
derivative (a continuous adjoint or forward sensitivities integrated by
LSODA) was 0.2 off across Van der Pol's first jump at rtol 1e-7; adsim's
Radau is right on the whole stiff test set (docs/integrate.md).
"""
import numpy as np
from scipy.integrate import odeint as scipy_odeint

from .._active import Active, wrap
from .._containers.container_args import gathered_inputs
from ._parameters import reads_active_matrix
from .._nesting.nested import reads_recorded_values
from .._nesting.outer_values import args_hold_recorded_objects
from .._np.core import active_leaves, constant, tape_of
from .._np.elementwise import stop_gradient
from .._np.joins import from_pieces
from .._opcodes import Opcode as Op
from .._validate import function, given
from ..errors import (AdsimError, InvalidArgument, InvalidArgumentValue,
                      UndefinedDerivative,
                      UnsupportedOperation)
from ._bdf_derivatives import checked_donor, donor_method, with_derivatives_of
from ._dense import recorded_values
from ._odeint_op import FAILED, Call, OdeintOp
from ._rhs import RightHandSide
from ._zero_step import flowed

__all__ = ["odeint"]

# options that are numbers of the solver, not inputs of the solution
_PLAIN_OPTIONS = ("rtol", "atol", "tcrit", "h0", "hmax", "hmin")


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """Integrate ``dy/dt = func(y, t, *args)`` (``func(t, y, *args)`` with
    ``tfirst=True``) from ``y(t[0]) = y0`` as ``scipy.integrate.odeint``
    does, differentiably.

    The arguments and the result are SciPy's: ``y`` of shape
    ``(len(t), len(y0))`` with ``y[0] = y0``, and ``(y, infodict)`` with
    ``full_output=True`` (``infodict`` from SciPy, of the call recorded).
    The values are SciPy's ``odeint`` run on adsim's recording of ``func``
    (SciPy's own numbers to rounding), so a tape holding them is saved,
    pickled and mapped on processes like any other.

    Inside an adsim recording, ``y0``, ``t``, the arrays in ``args`` (also
    inside a dict, list or tuple there) and the arrays ``func`` reads from
    its closure may be active. The derivatives are those of adsim's own
    solve of the same problem at the call's tolerances (default 1.49e-8),
    step sizes held: ``solve_ivp(method="Radau")`` where LSODA switched to
    its stiff method in the recorded call, ``method="DOP853"`` where it did
    not; every mode, second derivatives included. ``Dfun``, ``col_deriv``,
    ``ml``, ``mu``, ``h0``, ``ixpr``, ``mxhnil``, ``printmessg``,
    ``tcrit``, ``hmax``, ``hmin``, ``mxordn``, ``mxords`` and ``mxstep``
    serve SciPy's solve only; ``Dfun`` is recorded like ``func`` (SciPy's
    LSODA calls its tapes, and a tape file holds them); one that cannot be
    recorded runs as the program's code and keeps the tape in its process
    (TapeCopyError on saving).

    Not supported (each raises an adsim error naming it): active
    ``rtol``, ``atol``, ``tcrit``, ``h0``, ``hmax``, ``hmin``; derivatives
    where SciPy's integration (or the derivatives' solve) failed. See
    docs/integrate.md.
    """
    options = dict(col_deriv=col_deriv, ml=ml, mu=mu, rtol=rtol, atol=atol, tcrit=tcrit, h0=h0,
                   hmax=hmax, hmin=hmin, ixpr=ixpr, mxstep=mxstep, mxhnil=mxhnil, mxordn=mxordn,
                   mxords=mxords, printmessg=printmessg, tfirst=tfirst)
    if y0 is None:                 # SciPy's odeint reads None as NaN and returns NaNs
        _check_arguments(func, Dfun, y0, t, args)
    if not _holds_active(func, Dfun, y0, t, args, options):
        try:
            return scipy_odeint(func, y0, t, args=args, Dfun=Dfun, full_output=full_output,
                                **options)
        except Exception as err:      # checked only now: valid calls pay nothing
            try:
                _check_arguments(func, Dfun, y0, t, args)
                _check_monotonic(t)
            except AdsimError as mistake:
                raise mistake from err
            raise
    _check_arguments(func, Dfun, y0, t, args)
    for name in _PLAIN_OPTIONS:
        if active_leaves(options[name]):
            raise UnsupportedOperation(
                f"adsim: odeint's {name}= is an option of the solver, not an input of the "
                f"solution, and cannot be active; pass its plain value adsim.value({name})")
    call, inputs, y0_shape = _call(func, Dfun, y0, t, args, options)
    tape, refs, plain = _operands([stop_gradient(a) for a in inputs])
    y0_plain, t_plain, params = plain[0], plain[1], plain[2:]
    _check_monotonic(t_plain)
    Y, info, success = call.solve(y0_plain.reshape(y0_shape), t_plain, params)
    if not success:
        raise UndefinedDerivative(FAILED)
    m, n = Y.shape
    op = OdeintOp(call, n, m, [p.shape for p in params], (plain, (Y, success)))
    cb = tape.add_callback(op)
    slot = tape.record_op(int(Op.CALLBACK), m * n, [cb, len(refs)] + refs)
    values = wrap(tape, slot, (m, n))
    stiff = bool(np.any(np.asarray(info.get("mused", ())) == 2))
    y = _with_derivatives_of_a_solve(values, call, inputs, donor_method(stiff))
    return (y, info) if full_output else y


# odeint's tolerances when none are given (SciPy's documentation)
_DEFAULT_TOLERANCE = 1.49012e-8


def _with_derivatives_of_a_solve(values, call, inputs, method):
    """``values`` (odeint's, shape (len(t), n)) with the derivatives of
    adsim's solve of the same problem at the same tolerances by ``method``:
    Radau where LSODA switched to its stiff method (BDF) anywhere, DOP853
    where it stayed with its non-stiff one (Adams)."""
    from ._api import solve_ivp          # the module that imports this one
    y0, t, params = inputs[0], inputs[1], inputs[2:]
    o = call.options
    rtol = _DEFAULT_TOLERANCE if o["rtol"] is None else o["rtol"]
    atol = _DEFAULT_TOLERANCE if o["atol"] is None else o["atol"]
    # SciPy allows repeated times (solve_ivp's t_eval does not): the donor
    # solves at the first time of each run, and the others step from it
    t = t if isinstance(t, Active) else np.asarray(t, dtype=float)
    runs = _runs(recorded_values(t))
    firsts = [j for j, u in enumerate(runs) if u == j]
    if len(firsts) > 1:
        distinct = len(firsts) == len(runs)
        donor = solve_ivp(call.rhs, (t[0], t[-1]), y0, method=method,
                          t_eval=t if distinct else t[firsts], args=tuple(params), rtol=rtol,
                          atol=atol)
        checked_donor(donor, "odeint", method)
        if distinct:
            return with_derivatives_of({"t": t, "y": values.T}, donor, ("LSODA", method))["y"].T
        at_first = dict(zip(firsts, [donor["y"][:, k] for k in range(len(firsts))]))
    else:
        at_first = {0: y0}
    rhs = RightHandSide(call.rhs, y0.shape[0])
    y = [at_first[j] if u == j else flowed(rhs, t[u], at_first[u], t[j] - t[u], tuple(params))
         for j, u in enumerate(runs)]
    donor = {"t": t, "y": np.stack(y, axis=1)}
    return with_derivatives_of({"t": t, "y": values.T}, donor, ("LSODA", method))["y"].T


def _runs(t):
    """For each time of ``t`` (plain, monotonic) the index of the first
    time of its run of equal times."""
    runs = [0] * t.shape[0]
    for j in range(1, t.shape[0]):
        runs[j] = runs[j - 1] if t[j] == t[j - 1] else j
    return runs


_WHERE = "adsim.integrate.odeint"


def _check_arguments(func, Dfun, y0, t, args):
    """SciPy's rules for odeint's arguments, checked before SciPy (or
    adsim's solve) sees them, with adsim's errors naming the argument."""
    function(func, "integrate.odeint", "func",
             "func(y, t, *args) returning dy/dt, as for scipy.integrate.odeint")
    if Dfun is not None and not callable(Dfun):
        raise InvalidArgument(f"{_WHERE}: Dfun must be None or a callable Dfun(y, t, *args) "
                              f"returning the Jacobian of func, got {given(Dfun)}")
    if not isinstance(args, tuple):
        raise InvalidArgument(f"{_WHERE}: extra arguments must be in a tuple, got "
                              f"{given(args)}; pass args=(a,) for one")
    _check_numbers(y0, "y0", "a number or a 1-D array (the initial state)", (0, 1))
    _check_numbers(t, "t", "a 1-D array (the output times, t[0] the initial time)", (1,))


def _check_numbers(x, name, accepted, ndims):
    """``x`` holds real numbers and has one of the numbers of dimensions
    ``ndims`` (an active array or a list holding active numbers counts by
    its shape)."""
    if isinstance(x, Active):
        ndim, kind = x.ndim, "f"
    elif active_leaves(x):
        return                      # stacked by _array, whose errors name the values
    else:
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError):     # a ragged sequence
            arr = np.asarray(None)
        ndim, kind = arr.ndim, arr.dtype.kind
    if kind not in "biuf":
        raise InvalidArgument(f"{_WHERE}: {name} must be {accepted} of real numbers, got "
                              f"{given(x)}")
    if ndim not in ndims:
        raise InvalidArgumentValue(f"{_WHERE}: {name} must be {accepted}, got {ndim} "
                                   f"dimensions ({given(x)})")


def _check_monotonic(t):
    """SciPy's rule for the output times ``t`` (plain, 1-D)."""
    steps = np.diff(t)
    if not (np.all(steps >= 0) or np.all(steps <= 0)):
        raise InvalidArgumentValue(f"{_WHERE}: the values in t must be monotonically "
                                   f"increasing or monotonically decreasing; repeated values "
                                   f"are allowed. Got {given(t)}")


def _holds_active(func, Dfun, y0, t, args, options):
    return bool(active_leaves([y0, t, args, [options[k] for k in _PLAIN_OPTIONS]])) or \
        args_hold_recorded_objects(args) or reads_active_matrix((func, Dfun), args) or \
        any(callable(f) and reads_recorded_values(f) for f in (func, Dfun))


def _call(func, Dfun, y0, t, args, options):
    """The Call, the op's inputs (y0 flat, t, and the active values among
    the arguments: containers spread, closures lifted) and y0's shape."""
    functions = [func] + ([Dfun] if callable(Dfun) else [])
    functions, args = gathered_inputs(functions, args)
    positions = [i for i, a in enumerate(args) if isinstance(a, Active)]
    y0 = _array(y0)
    shape = np.shape(y0) if not isinstance(y0, Active) else y0.shape
    y0 = y0.reshape(-1) if isinstance(y0, Active) else np.ravel(y0)
    t = _array(t)
    call = Call(functions[0], functions[1] if len(functions) > 1 else Dfun, args, positions,
                options, y0.shape[0])
    return call, [y0, t] + [args[i] for i in positions], shape


def _array(x):
    """An active array, a list holding active numbers stacked, or a plain value as it is."""
    if isinstance(x, Active) or not active_leaves(x):
        return x
    return from_pieces(x)


def _operands(inputs):
    """(the recording, the operand refs, the plain values) of the op's inputs."""
    tape = tape_of(*[a for a in inputs if isinstance(a, Active)])
    refs, plain = [], []
    for a in inputs:
        if isinstance(a, Active):
            ref, shape = a.slot, a.shape
        else:
            arr = constant(a)
            ref, shape = tape.const_ref(arr), arr.shape
        refs.append(ref)
        plain.append(np.array(tape.slot_value(ref)).reshape(shape))
    return tape, refs, plain
