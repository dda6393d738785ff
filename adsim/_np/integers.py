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
import dis
import sys

import numpy as np

from .._opcodes import CompareKind, Opcode as Op
from .._active import Active, record_unary
from ..errors import UnsupportedOperation
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
    """``format(x, spec)`` (``f"{loss:.4f}"``): NumPy's text of the recorded
    value (a float64 for a 0-d array; a 1-element array is refused by
    NumPy's own error, as are integer presentation types). Display only:
    no guard, so a replay neither prints again nor checks the text. The
    number parsed back from the text itself (``float(f"{x:.6f}")``, a
    rounding written so) is ``float(x)``'s (:class:`_Text`)."""
    v = current(x)
    return _Text(format(v[()] if not x.shape else v, spec), x)


class _Text(str):
    """The text of an active value. ``float()`` and ``int()`` of it are
    those of the value (an error for one with a derivative, which the
    number would drop; a guarded constant for one without), not a constant
    a replay would return unchanged. Text made from it (a slice, a
    concatenation) is plain text."""

    def __new__(cls, text, source):
        made = super().__new__(cls, text)
        made.source = source
        return made

    def __float__(self):
        frozen(self.source, f"float() of its text {str.__str__(self)!r}")
        return float(str.__str__(self))

    def __int__(self):
        frozen(self.source, f"int() of its text {str.__str__(self)!r}")
        return int(str.__str__(self))

    def __reduce__(self):           # pickled (or copied) as the plain text
        return (str, (str.__str__(self),))


def printed(func):
    """The rule of np.array2string, array_str and array_repr: NumPy's text
    of the recorded values, display only as ``formatted``."""
    def rule(a, *args, **kwargs):
        return func(current(a), *args, **kwargs)
    return rule


# Python's %-formatting ("%.3f" % loss) asks its operand for float() (int()
# for %d, an index for %x %o %c) from the binary operation `%` itself: the
# one place where such a conversion makes text (an active value's `%` with a
# number is its own recorded op and converts nothing)
def _percent_instructions():
    ops = set()
    for text in ("a % b", "a %= b"):
        for ins in dis.get_instructions(compile(text, "", "exec")):
            if ins.opname == "BINARY_OP":
                ops.add((ins.opcode, ins.arg))
    return frozenset(ops)


_PERCENT = _percent_instructions()
_CODES = {}         # code object -> its bytecode (co_code makes a copy at each read)


def percent_number(x, kind):
    """The number that ``"%.3f" % x`` (kind float), ``"%d" % x`` (int) or
    ``"%x" % x`` (index) formats, when the code calling the conversion is
    executing ``%``; else None. NumPy's number from the recorded value,
    display only as ``formatted``; an index is refused as NumPy's float64
    refuses it. Call it directly from the conversion (a compiled method
    adds no frame)."""
    frame = sys._getframe(1)
    code = _CODES.get(frame.f_code)
    if code is None:
        if len(_CODES) > 4096:
            _CODES.clear()
        code = _CODES[frame.f_code] = frame.f_code.co_code
    at = frame.f_lasti
    if (code[at], code[at + 1]) not in _PERCENT:
        return None
    v = current(x)
    if kind is int or kind is float:
        return kind(v)              # NumPy's error for an array of more than 0 dimensions
    raise TypeError(f"%x format: an integer is required, not an active float64 value (shape "
                    f"{x.shape})")


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
