"""The user's right-hand side ``fun(t, y, *args)``, called as a solver needs
it, and the conversion of user values (arrays, or lists holding active
numbers) to float arrays."""
import inspect

import numpy as np

from .._tapecache.codeinfo import unused_parameters
from .._record.creation import current_tape
from .._np.complex import ComplexActive
from .._np.core import as_active
from .._np.joins import from_pieces, holds_active
from .._active import Active
from .._validate import given
from ..errors import InvalidArgument, InvalidArgumentValue, UnsupportedOperation

__all__ = ["RightHandSide", "real_array", "set_row", "RUNNING", "FINISHED", "FAILED"]

# solver status carried in a method's state (a float, so that it can be a loop state)
RUNNING, FINISHED, FAILED = 0.0, 1.0, -1.0


def real_array(x, what):
    """``np.asarray(x, dtype=float)`` that keeps active values recorded: an
    active array as it is, a (nested) list holding active numbers stacked."""
    if isinstance(x, Active):
        return x
    complex_active = isinstance(x, ComplexActive)
    if current_tape() is not None and not complex_active and holds_active(x):
        return from_pieces(x)
    if complex_active or np.iscomplexobj(x):
        raise UnsupportedOperation(
            f"adsim.integrate.solve_ivp: {what} is complex; adsim integrates real states. "
            f"Split y into its real and imaginary parts (a state twice as long) and write fun "
            f"for that state")
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise InvalidArgument(f"adsim.integrate.solve_ivp: {what} must hold real numbers, got "
                              f"{given(x) if arr.dtype.kind == 'O' else f'dtype {arr.dtype}'}")
    return arr.astype(float)


class RightHandSide:
    """``fun(t, y, *args)`` as a float vector of the state's length; inside a
    recording ``fun`` runs on active values and is recorded.

    ``reads_time`` is False when ``fun`` provably never reads ``t`` (its
    bytecode never loads it: an autonomous system); the stages of a step
    then pass no time, so that no stage times are recorded.

    A ``vectorized`` fun is called as SciPy calls it for a step: on the
    state as one column, shape (n, 1). (SciPy calls it on many columns only
    to difference its Jacobian, which adsim records instead.)"""

    def __init__(self, fun, n, vectorized=False):
        self.fun = _on_one_column(fun) if vectorized else fun
        self.n = n
        fun = inspect.unwrap(fun)       # the user's function (containers in args: container_args.py)
        code = getattr(fun, "__code__", None)
        self.reads_time = code is None or code.co_argcount == 0 or \
            code.co_varnames[0] not in unused_parameters(fun)

    def time(self, t, c, h):
        """The time ``t + c * h`` of a stage (``t + h`` for ``c = 1``, the
        same number), or None when ``fun`` never reads it."""
        if not self.reads_time:
            return None
        return t + h if c == 1 else t + c * h

    def __call__(self, t, y, args):
        try:
            f = self.fun(t, y, *args)
        except TypeError as err:
            _refuse_misfit(err, args)
            raise
        if isinstance(f, Active):
            # the caller keeps it while fun runs again: a buffer that fun fills and returns
            # (``buf[0] = ...; return buf``) would change under it (SciPy copies into its arrays)
            f = f.copy()
        return self._checked(f)

    def into(self, K, i, t, y, args):
        """``K`` with row ``i`` set to ``fun(t, y, *args)`` (a plain ``K``
        becomes active when the row is). A list of numbers, some active
        (``[y[1], -y[0]]``), is written into the row number by number, with
        no array stacked from it first."""
        try:
            f = self.fun(t, y, *args)
        except TypeError as err:
            _refuse_misfit(err, args)
            raise
        if isinstance(f, (list, tuple)) and len(f) == self.n and current_tape() is not None \
                and all(map(_is_number, f)) and any(isinstance(v, Active) for v in f):
            K = _active_like(K, next(v for v in f if isinstance(v, Active)))
            for j, v in enumerate(f):
                K[i, j] = v
            return K
        return set_row(K, i, self._checked(f))

    def _checked(self, f):
        f = real_array(f, "fun(t, y)")
        if f.shape != (self.n,):
            if f.size == self.n:
                return np.reshape(f, (self.n,))
            raise InvalidArgumentValue(f"adsim.integrate.solve_ivp: fun(t, y) returned shape "
                                       f"{tuple(f.shape)}; it must return the derivative of "
                                       f"y, shape ({self.n},)")
        return f


def _refuse_misfit(err, args):
    """``err``, raised calling ``fun(t, y, *args)``: when raised by the call
    itself (not inside fun), the call does not fit fun's signature, a
    mistake of the caller said as such."""
    if err.__traceback__.tb_next is None:
        raise InvalidArgument(
            f"adsim.integrate.solve_ivp: fun is called as fun(t, y, *args) with "
            f"{len(args)} extra argument{'' if len(args) == 1 else 's'} from args, and that "
            f"call fails: {err}. Give fun the parameters (t, y, ...) as "
            f"scipy.integrate.solve_ivp calls it") from None


def _on_one_column(fun):
    def column_fun(t, y, *args):
        return fun(t, y[:, None], *args)
    return column_fun


def _is_number(v):
    """An active scalar or a real Python/NumPy number."""
    if isinstance(v, Active):
        return v.shape == ()
    return isinstance(v, (int, float, np.integer, np.floating))


def _active_like(K, row):
    """``K``, recorded on ``row``'s tape when it is plain."""
    return K if isinstance(K, Active) else as_active(row.tape, K)


def set_row(K, i, row):
    """``K[i] = row``; a plain ``K`` becomes active when ``row`` is."""
    if isinstance(row, Active):
        K = _active_like(K, row)
    K[i] = row
    return K
