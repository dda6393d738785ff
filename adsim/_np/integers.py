"""Integer-valued results of active values.

Float results — np.floor, np.ceil, np.trunc, np.rint, np.round, //, % and
np.fmod — are recorded ops (adsim/ops.py) that every replay computes again,
with NumPy's exact semantics; the rounding ops and // have derivative zero.

``astype(np.int64)`` (``astype(int)``) gives integer data that replays
compute again (recorded_arrays.py, conversions.as_integers). Other results
of integer type — int(), other integer dtypes, an active scalar used as an
index — are plain arrays (so they index, count and loop like NumPy's), and
the recording keeps a guard: the interval [lo, hi) that each element of x
must stay in for the result to be the same. A replay outside it raises
BranchChanged (the functional API then records again), so a guarded
constant is never stale; its derivative, zero, is exact almost everywhere.
"""
import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .._active import Active, record_unary
from ..errors import ActiveValueLeak, UnsupportedOperation
from .core import binary, record_compare, reject_kwargs, tape_of
from . import layout


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
    """floor/ceil/trunc/rint of an active array as a guarded plain array, for
    results of integer type (``astype(int)``, ``int(x)``): float results of
    the rounding functions are recorded ops instead."""
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


def formatted(x, spec):
    """``format(x, spec)`` (``f"{x:.3f}"``): the recorded value as text, for
    a value without a derivative (guarded, as ``frozen``). One with a
    derivative is refused: a number read back from the text would carry
    none, and a replay does not run the code that printed it."""
    _refuse_text(x, f"formatting with {spec!r}", f"f\"{{adsim.value(v):{spec}}}\"")
    return format(frozen(x, "")[()], spec)


def printed(func):
    """The rule of np.array2string, array_str and array_repr: NumPy's text
    of the recorded values of an array without a derivative, refused as
    ``formatted`` for one with a derivative."""
    def rule(a, *args, **kwargs):
        _refuse_text(a, f"np.{func.__name__}", f"np.{func.__name__}(adsim.value(v))")
        return func(frozen(a, ""), *args, **kwargs)
    return rule


def _refuse_text(x, what, offer):
    if tape_of(x).slot_is_varied(x.slot):
        raise ActiveValueLeak(
            f"adsim: {what} of an active value (shape {x.shape}) would turn a recorded value "
            f"into a constant, its text: a number read back from it would carry no "
            f"derivative. To print or log it, use its recorded value: {offer} (a replay does "
            f"not print again), or write {{v}} without a format spec, which shows the recorded "
            f"value")


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


# NumPy before 2.3 computes array ** e as reciprocal, ones, a copy or a square
# when e's __index__ gives -1, 0, 1 or 2, without e: an active exponent would
# lose its derivative. There (below pyproject.toml's floor, but installable
# without dependencies) an active value with a derivative is not an index.
_POWER_ASKS_FOR_AN_INDEX = tuple(int(p) for p in np.__version__.split(".")[:2]) < (2, 3)


def exact_index(x):
    """An active integral scalar used as an index: its value, guarded to stay
    exactly that integer (NumPy refuses a non-integral index, so a replay
    where it is one must not reuse the recorded index)."""
    if x.shape != ():
        raise TypeError(f"only integer scalar arrays can be converted to a scalar index (an "
                        f"active array of shape {x.shape})")
    v = current(x).reshape(())
    if v != np.floor(v):
        raise TypeError(f"only integer scalar arrays can be converted to a scalar index (an "
                        f"active array holding {v})")
    if _POWER_ASKS_FOR_AN_INDEX and tape_of(x).slot_is_varied(x.slot):
        raise TypeError(f"only integer scalar arrays can be converted to a scalar index (an "
                        f"active value {v} with a derivative, under NumPy {np.__version__}: "
                        f"NumPy before 2.3 also asks a power's exponent for its index, and an "
                        f"exponent taken as one would lose its derivative; int(x) gives a plain "
                        f"integer)")
    guard(x, v, _up(v))
    return int(v)


def floor_divide(a, b):
    """a // b: NumPy's floor quotient, recorded (derivative zero)."""
    return binary(Op.FLOOR_DIVIDE, a, b)


def remainder(a, b):
    """a % b with NumPy's sign convention, recorded: derivative 1 in a and
    -(a // b) in b."""
    return binary(Op.REMAINDER, a, b)


def fmod(a, b):
    return binary(Op.FMOD, a, b)


def around(a, decimals=0, out=None):
    """np.round: rint of a scaled by 10**decimals, as NumPy computes it."""
    reject_kwargs("round", out=out)
    if decimals == 0:
        return record_unary(a, int(Op.RINT))
    scale = 10.0 ** decimals
    fortran = layout.other_layout(a) and a.flags.f_contiguous       # NumPy allocates so
    return layout.in_order(record_unary(a * scale, int(Op.RINT)) / scale, "F" if fortran else "C")
