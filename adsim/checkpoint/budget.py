"""Memory budgets: byte sizes and the number of snapshots that fit.

A checkpointed loop needs, at its peak, the tape of one step plus its
snapshots: ``step_tape_nbytes + snapshots * state_nbytes`` bytes.
:func:`snapshots_for_budget` inverts this for a ``memory_limit``.
"""

import math
import re
from fractions import Fraction
from numbers import Integral, Real

from ..errors import MemoryBudgetError
from .schedules import _check_count

__all__ = ["parse_bytes", "format_bytes", "snapshots_for_budget"]

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

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*([A-Za-z]*)\s*")


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
        For text that is not a size, an unknown unit, or a negative or
        non-finite number.
    TypeError
        For other types (including ``bool``).

    Examples
    --------
    >>> parse_bytes("100MB"), parse_bytes("1.5 GiB"), parse_bytes(2048)
    (100000000, 1610612736, 2048)
    """
    if isinstance(size, bool):
        raise TypeError(f"a size must be a number or text, got {size!r}")
    if isinstance(size, Integral):
        return _non_negative(int(size), size)
    if isinstance(size, Real):
        if not math.isfinite(size):
            raise ValueError(f"a size must be finite, got {size!r}")
        return _non_negative(math.floor(size), size)
    if not isinstance(size, str):
        raise TypeError(f"a size must be a number or text, got {type(size).__name__}")
    match = _SIZE.fullmatch(size)
    unit = match.group(3).lower() if match else None
    if unit not in _UNITS:
        raise ValueError(
            f"cannot read {size!r} as a size; write a number with an optional unit "
            "B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of "
            "1024), for example '512MB' or '2 GiB'"
        )
    number = Fraction(match.group(1))
    if match.group(2):
        number *= Fraction(10) ** int(match.group(2))
    return math.floor(number * _UNITS[unit])


def _non_negative(count, given):
    if count < 0:
        raise ValueError(f"a size must be >= 0, got {given!r}")
    return count


def format_bytes(count):
    """Return a byte count as short text with a decimal unit (``"1.5 MB"``)."""
    for unit, factor in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= factor:
            return f"{count / factor:.3g} {unit}"
    return f"{count} B"


def _check_nbytes(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer number of bytes, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
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
