"""Memory budgets: byte sizes, snapshot counts and the budget error.

:func:`parse_bytes` reads a ``memory_limit`` ("100MB") in bounded time;
:func:`snapshots_for_budget` is the simple model ``step_tape_nbytes +
snapshots * state_nbytes`` for users planning by hand. A checkpointed loop
counts more than that (its state copies, its slots in the enclosing tape):
see :mod:`adsim.checkpoint.footprint` and :mod:`adsim.checkpoint.planning`,
which raise :func:`budget_error`.
"""

from math import floor, isfinite
import re
from fractions import Fraction
from numbers import Integral, Real

from ..errors import InvalidArgument, InvalidArgumentValue, MemoryBudgetError
from .schedules import _check_count

__all__ = ["parse_bytes", "format_bytes", "snapshots_for_budget", "budget_error"]

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}

_SIZE = re.compile(r"\s*([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?\s*([A-Za-z]*)\s*")

# Sizes are byte counts of this machine's memory or disk: anything from
# 2**63 bytes (9.2 exabytes) on is a mistake, and refusing it early keeps
# text such as "1e10000000" from costing time.
MAX_BYTES = 2**63 - 1
_MAX_TEXT = 100


def parse_bytes(size):
    """Return a byte count given as a number or as text such as ``"100MB"``.

    Parameters
    ----------
    size : int, float or str
        A non-negative number of bytes, or a number followed by an optional
        unit: ``B``, decimal ``kB``, ``MB``, ``GB``, ``TB`` (powers of 1000)
        or binary ``KiB``, ``MiB``, ``GiB``, ``TiB`` (powers of 1024). Units
        ignore case; space between number and unit is allowed.

    Returns
    -------
    int
        The size in bytes, rounded down to a whole byte.

    Raises
    ------
    ValueError
        For text that is not a size, an unknown unit, a negative or
        non-finite number, or a size of 2**63 bytes or more.
    TypeError
        For other types (including ``bool``).

    Examples
    --------
    >>> parse_bytes("100MB"), parse_bytes("1.5 GiB"), parse_bytes(2048)
    (100000000, 1610612736, 2048)
    """
    if isinstance(size, bool):
        raise InvalidArgument(f"a size must be a number or text, got {size!r}")
    if isinstance(size, Integral):
        return _in_range(int(size), size)
    if isinstance(size, Real):
        if not isfinite(size):
            raise InvalidArgumentValue(f"a size must be finite, got {size!r}")
        if size < 0:
            raise InvalidArgumentValue(f"a size must be >= 0, got {size!r}")
        return _in_range(floor(size) if size < 2.0**64 else MAX_BYTES + 1, size)
    if not isinstance(size, str):
        raise InvalidArgument(f"a size must be a number or text, got {type(size).__name__}")
    match = _SIZE.fullmatch(size) if len(size) <= _MAX_TEXT else None
    unit = match.group(4).lower() if match else None
    if unit not in _UNITS or not (match.group(1) or match.group(2)):
        raise InvalidArgumentValue(
            f"cannot read {size[:_MAX_TEXT]!r} as a size; write a number with an optional "
            "unit B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of "
            "1024), for example '512MB' or '2 GiB'"
        )
    whole, fraction, exponent = match.group(1), match.group(2) or "", match.group(3)
    mantissa = int(whole + fraction or "0")
    # size = mantissa * 10**power * unit, with power bounded before it is used
    power = (int(exponent) if exponent else 0) - len(fraction)
    if mantissa == 0:
        return 0
    if len(str(mantissa)) + power > 20:          # >= 10**19 bytes before the unit
        return _in_range(MAX_BYTES + 1, size)
    if power < 0:
        if -power > len(str(mantissa)) + 14:     # below 1e-14 before a unit < 1e13
            return 0
        return _in_range(floor(Fraction(mantissa * _UNITS[unit], 10**-power)), size)
    return _in_range(mantissa * 10**power * _UNITS[unit], size)


def _in_range(count, given):
    if count < 0:
        raise InvalidArgumentValue(f"a size must be >= 0, got {given!r}")
    if count > MAX_BYTES:
        raise InvalidArgumentValue(f"a size must be below 2**63 bytes (9.2 EB), got {given!r}; "
                                   "for no limit give None")
    return count


def format_bytes(count):
    """Return a byte count as short text with a decimal unit (``"1.5 MB"``)."""
    if isinstance(count, bool) or not isinstance(count, Real):
        raise InvalidArgument(f"adsim.checkpoint.format_bytes: count must be a number of bytes, "
                              f"got {count!r}")
    for unit, factor in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= factor:
            return f"{count / factor:.3g} {unit}"
    return f"{count} B"


def _check_nbytes(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidArgument(f"{name} must be an integer number of bytes, got {value!r}")
    if value < minimum:
        raise InvalidArgumentValue(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def snapshots_for_budget(memory_limit, state_nbytes, step_tape_nbytes, n_steps=None):
    """Number of snapshots that fit in ``memory_limit`` next to one step tape.

    Parameters
    ----------
    memory_limit : int, float or str
        The budget, as accepted by :func:`parse_bytes` (``"2GB"``).
    state_nbytes : int
        Bytes of one snapshot (the loop state), ``> 0``.
    step_tape_nbytes : int
        Bytes of the tape of one step while it is reversed, ``>= 0``.
    n_steps : int, optional
        Loop length; no more than ``n_steps`` snapshots are ever useful, so
        the result is capped there. ``None`` for a loop of unknown length.

    Returns
    -------
    int
        ``(memory_limit - step_tape_nbytes) // state_nbytes``, capped at
        ``n_steps``; at least 1.

    Raises
    ------
    MemoryBudgetError
        If the budget cannot hold the step tape plus one snapshot. The
        message gives that minimum and the ways out.

    Examples
    --------
    >>> snapshots_for_budget("1MB", state_nbytes=80_000, step_tape_nbytes=200_000)
    10
    """
    limit = parse_bytes(memory_limit)
    state_nbytes = _check_nbytes(state_nbytes, "state_nbytes", 1)
    step_tape_nbytes = _check_nbytes(step_tape_nbytes, "step_tape_nbytes", 0)
    minimum = step_tape_nbytes + state_nbytes
    if limit < minimum:
        raise MemoryBudgetError(
            f"memory_limit={limit} bytes ({format_bytes(limit)}) cannot hold the "
            f"tape of one step ({step_tape_nbytes} bytes) plus one snapshot of the "
            f"state ({state_nbytes} bytes); the smallest budget that works is "
            f"{minimum} bytes ({format_bytes(minimum)}). Raise memory_limit to at "
            "least that, give snapshot_dir= to keep snapshots on disk, or shorten "
            "the step (fewer operations per step or a smaller state)."
        )
    count = (limit - step_tape_nbytes) // state_nbytes
    if n_steps is not None:
        count = min(count, _check_count(n_steps, "n_steps", 1))
    return max(count, 1)


def budget_error(limit, purpose, parts, minimum, snapshot_dir_helps):
    """The :class:`MemoryBudgetError` of a sweep that cannot run within ``limit``.

    ``purpose`` says which sweep (e.g. "a Hessian-vector product through this
    checkpointed loop"), ``parts`` lists ``(what, bytes)`` of what it holds,
    and ``minimum`` is the smallest budget with which that sweep runs.
    """
    needs = ", ".join(f"{what} {nbytes} bytes" for what, nbytes in parts)
    ways = "Raise memory_limit to at least that"
    if snapshot_dir_helps:
        ways += ", give snapshot_dir= to keep snapshots on disk"
    return MemoryBudgetError(
        f"adsim: memory_limit={limit} bytes ({format_bytes(limit)}) is too small for {purpose}, "
        f"which holds {needs}; the smallest budget that works is {minimum} bytes "
        f"({format_bytes(minimum)}). {ways}, or shorten the step (fewer operations per step or "
        f"a smaller state)."
    )
