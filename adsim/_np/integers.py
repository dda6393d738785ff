"""Integer-valued results of active values: guarded constants.

floor, ceil, trunc, rint, //, int(), astype(int), indices: their results
are piecewise constant in x. They are returned as plain arrays (so they
index, count and loop like NumPy's) and the recording keeps a guard: the
interval [lo, hi) that each element of x must stay in for the result to be
the same. A replay outside it raises BranchChanged (the functional API then
records again), so a guarded constant is never stale; its derivative, zero,
is exact almost everywhere.
"""
import numpy as np

from .._tape import Active, CompareKind
from ..errors import UnsupportedOperation
from .core import compare, constant, record_compare, reject_kwargs, tape_of


def guard(x, lo, hi):
    """Record that every element of ``x`` lies in [lo, hi) (as it does now)."""
    tape = tape_of(x)
    record_compare(tape, CompareKind.CMP_GE, x.slot, tape.const_ref(lo), x.shape)
    record_compare(tape, CompareKind.CMP_LT, x.slot, tape.const_ref(hi), x.shape)
    if np.isnan(np.asarray(lo)).any():      # NaN fails both bounds whatever x is
        record_compare(tape, CompareKind.CMP_EQ, x.slot, x.slot, x.shape)


def current(x):
    """The value ``x`` holds now, as a plain array of its shape."""
    return tape_of(x).slot_value(x.slot).reshape(x.shape)


def _up(v):
    return np.nextafter(v, np.inf)


def rounded(x, how):
    """floor/ceil/trunc/rint of an active array: a guarded plain array."""
    v = current(x)
    with np.errstate(invalid="ignore"):
        if how == "floor":
            c = np.floor(v)
            lo, hi = c, np.maximum(c + 1.0, _up(c))
        elif how == "ceil":
            c = np.ceil(v)
            lo, hi = _up(c - 1.0), _up(c)
        elif how == "trunc":
            c = np.trunc(v)
            neg = v < 0
            lo = np.where(neg, _up(c - 1.0), c)
            hi = np.where(neg, _up(c), np.maximum(c + 1.0, _up(c)))
        elif how == "rint":
            c = np.rint(v)
            even = np.fmod(c, 2.0) == 0       # halves round to the even neighbour
            lo = np.where(even, c - 0.5, _up(c - 0.5))
            hi = np.where(even, _up(c + 0.5), c + 0.5)
        else:
            raise AssertionError(how)
    guard(x, lo, hi)
    return c


def frozen(x, what):
    """The current value of ``x`` as a plain array, guarded to stay equal on
    replay. Only for values with no derivative (adsim.value results and what
    is computed from them): freezing anything else would drop its derivative."""
    if tape_of(x).slot_is_varied(x.slot):
        x._leak(what)
    v = current(x)
    guard(x, v, _up(v))
    return v


def plain_if_constant(v):
    """``v`` as a plain array when it is an active array without a
    derivative (an np.array of constants made in the function, data): it
    may then go where only plain values can, under a guard; else ``v``."""
    if isinstance(v, Active) and not tape_of(v).slot_is_varied(v.slot):
        return frozen(v, "")
    return v


def plain_value(v, what):
    """``v`` where adsim needs a plain value (a table searched, an order):
    plain values pass, an active array without a derivative becomes plain
    (plain_if_constant), and one with a derivative raises, naming ``what``."""
    v = plain_if_constant(v)
    if isinstance(v, Active):
        raise UnsupportedOperation(
            f"adsim: {what} cannot be active: it depends on the inputs (an active array of "
            f"shape {v.shape}). Pass a plain array, or constants made in the recorded function "
            f"(adsim.value(x) if no derivative through it is wanted)")
    return v


def exact_index(x):
    """An active integral scalar used as an index: its value, guarded to stay
    exactly that integer (NumPy refuses a non-integral index, so a replay
    where it is one must not reuse the recorded index)."""
    v = current(x).reshape(())
    if x.shape != () or v != np.floor(v):
        raise TypeError(f"only integer scalar arrays can be converted to a scalar index (an "
                        f"active array of shape {x.shape} holding {v})")
    guard(x, v, _up(v))
    return int(v)


def as_integers(x, dtype=np.int64):
    """``x.astype(int)``: truncation, guarded."""
    return rounded(x, "trunc").astype(dtype)


def _finite_divisor(b, op):
    if not isinstance(b, Active) and not np.isfinite(constant(b)).all():
        raise UnsupportedOperation(f"adsim: `{op}` by a non-finite constant is not recorded; "
                                   f"use a finite divisor (or np.where to select the cases)")


def _value_of(v):
    return current(v) if isinstance(v, Active) else constant(v)


def _quotient(a, b, how):
    """NumPy's integer quotient of ``a`` by ``b`` ("floor" for // and %,
    "trunc" for fmod) as a plain array, and the remainder ``a - b q``
    recorded (derivative 1 in a, -q in b).

    The quotient is NumPy's own (from the exact fmod, so 0.5 // 0.1 is 4,
    not floor(0.5 / 0.1) = 5), and it is guarded through the remainder: q
    stays the quotient exactly while r stays in its range, 0 <= r sign(b) <
    |b| for floor (b keeping its sign), 0 <= r sign(a) < |b| for trunc."""
    va, vb = _value_of(a), _value_of(b)
    with np.errstate(all="ignore"):
        if how == "floor":
            q = np.floor_divide(va, vb)
            side = np.sign(vb)
        else:
            q = np.rint((va - np.fmod(va, vb)) / vb)
            side = np.where(np.signbit(va), -1.0, 1.0)
        magnitude = b * np.sign(vb)
    r = a - b * q
    t = r * side
    held = [np.all(compare(CompareKind.CMP_GE, t, 0.0)),
            np.all(compare(CompareKind.CMP_LT, t, magnitude))]
    if isinstance(b, Active):
        held.append(np.all(compare(CompareKind.CMP_GT, magnitude, 0.0)))
    if not all(held):       # rounding, a zero divisor or NaN: valid at this point only
        for v in (a, b):
            if isinstance(v, Active):
                x = current(v)
                guard(v, x, _up(x))
    return q, r


def floor_divide(a, b):
    _finite_divisor(b, "//")
    return _quotient(a, b, "floor")[0]


def remainder(a, b):
    """a % b = a - b q with q NumPy's floor quotient, guarded (NumPy's sign
    convention); the derivative is 1 in a and -q in b."""
    _finite_divisor(b, "%")
    return _quotient(a, b, "floor")[1]


def fmod(a, b):
    _finite_divisor(b, "fmod")
    return _quotient(a, b, "trunc")[1]


def around(a, decimals=0, out=None):
    reject_kwargs("round", out=out)
    if decimals == 0:
        return rounded(a, "rint")
    scale = 10.0 ** decimals
    return rounded(a * scale, "rint") / scale
