"""Checkpoint schedules: the actions of a checkpointed loop and binomial reversal.

A checkpointed loop runs ``n`` steps forward and then their adjoints in
reverse order while holding only a few *snapshots* (stored states). A
schedule is a sequence of small action objects that a driver executes; the
schedule itself is pure integer logic and knows nothing of tapes or arrays.

Execution model
---------------
State ``k`` is the state *before* step ``k``; a loop of ``n`` steps has
steps ``0 .. n-1`` and states ``0 .. n``. The executor holds one current
state and its index ``current``; it starts with ``current == 0`` holding the
initial state. ``snapshots`` slots, numbered ``0 .. snapshots-1``, each hold
one (index, state) pair.

========================  ====================================================
action                    effect
========================  ====================================================
``Advance(k)``            run ``k`` plain (untaped) steps: ``current += k``
``TakeShot(i)``           store ``(current, state)`` in slot ``i``
``Restore(i)``            set ``(current, state)`` from slot ``i``
``FirstTurn()``           with ``current == n-1``: run step ``n-1`` taped and
                          its adjoint (seeded with the output adjoint); the
                          reverse position becomes ``n-1``
``YouTurn()``             with ``current == reverse_position - 1``: run that
                          step taped and its adjoint; ``reverse_position -= 1``
========================  ====================================================

The run is complete when the reverse position reaches ``0``. After a turn
the current state is spent: the next action is a ``Restore``.
:func:`simulate` executes a schedule on integers, checks every rule above and
counts the work, so any schedule (also one written for a driver's tests) can
be verified without a tape.
"""

from dataclasses import dataclass
from math import comb, isqrt

from .._validate import count, given
from ..errors import InvalidArgument

__all__ = [
    "Action",
    "Advance",
    "TakeShot",
    "Restore",
    "FirstTurn",
    "YouTurn",
    "Revolve",
    "ScheduleCounts",
    "simulate",
    "binomial_cost",
    "repetition_number",
]


class Action:
    """Base class of the schedule actions (for ``isinstance`` checks)."""


@dataclass(frozen=True)
class Advance(Action):
    """Run ``steps`` plain (untaped) steps forward: ``current += steps``."""

    steps: int


@dataclass(frozen=True)
class TakeShot(Action):
    """Store the current index and state in snapshot slot ``index``."""

    index: int


@dataclass(frozen=True)
class Restore(Action):
    """Make the index and state held in snapshot slot ``index`` current."""

    index: int


@dataclass(frozen=True)
class FirstTurn(Action):
    """Run the last step taped and its adjoint, seeded with the output adjoint."""


@dataclass(frozen=True)
class YouTurn(Action):
    """Run the step just before the reverse position taped and its adjoint."""


# ---------------------------------------------------------------------------
# Binomial arithmetic (Griewank 1992; Griewank & Walther 2000)
# ---------------------------------------------------------------------------


def _beta(snapshots, repetitions):
    """Number of steps reversible with ``snapshots`` slots and ``repetitions``.

    ``beta(s, r) = C(s + r, s)``: the largest loop that ``s`` slots (one of
    them holding the start state) reverse with every step run plainly at
    most ``r`` times. Zero when either argument is negative.
    """
    if snapshots < 0 or repetitions < 0:
        return 0
    return comb(snapshots + repetitions, snapshots)


def _loop_and_slots(n_steps, snapshots, entry):
    """``n_steps`` (>= 0) and ``snapshots`` (>= 1) checked; plain ints in
    range, as the schedules pass them, cost two comparisons."""
    if type(n_steps) is int and type(snapshots) is int and n_steps >= 0 and snapshots >= 1:
        return n_steps, snapshots
    return count(n_steps, "n_steps", entry, 0), count(snapshots, "snapshots", entry, 1)


def repetition_number(n_steps, snapshots, upper=None):
    """Smallest ``r`` with ``beta(snapshots, r) >= n_steps``.

    Parameters
    ----------
    n_steps, snapshots : int
        Loop length (``>= 0``) and slot count (``>= 1``).
    upper : int, optional
        A known upper bound on the answer; the search then walks down from
        it, which costs one or two binomials in the nested calls of the
        binomial reversal.
    """
    n_steps, snapshots = _loop_and_slots(n_steps, snapshots, "checkpoint.repetition_number")
    if n_steps <= 1:
        return 0
    if snapshots == 1:
        return n_steps - 1
    if snapshots >= n_steps - 1:
        return 1
    if upper is not None:
        r = upper
        while r > 1 and _beta(snapshots, r - 1) >= n_steps:
            r -= 1
        return r
    if snapshots == 2:
        r = max(1, (isqrt(8 * n_steps + 1) - 3) // 2)
        while _beta(2, r) < n_steps:
            r += 1
        return r
    high = 2
    while _beta(snapshots, high) < n_steps:
        high *= 2
    low = high // 2  # beta(snapshots, low) < n_steps
    while high - low > 1:
        middle = (low + high) // 2
        if _beta(snapshots, middle) >= n_steps:
            high = middle
        else:
            low = middle
    return high


def binomial_cost(n_steps, snapshots):
    """Minimal plain step evaluations to reverse ``n_steps`` steps.

    With ``r = repetition_number(n_steps, snapshots)`` the optimum is
    ``r * n_steps - beta(snapshots + 1, r - 1)`` (Griewank 1992). The taped
    run of each step made by a turn is not counted; the start state is held
    in one of the ``snapshots`` slots.
    """
    n_steps, snapshots = _loop_and_slots(n_steps, snapshots, "checkpoint.binomial_cost")
    if n_steps <= 1:
        return 0
    if snapshots == 1:
        return n_steps * (n_steps - 1) // 2
    r = repetition_number(n_steps, snapshots)
    return r * n_steps - _beta(snapshots + 1, r - 1)


def _binomial_split(n_steps, snapshots, repetitions):
    """Steps to advance before taking the next snapshot (an optimal choice).

    For ``beta(c, r-1) < m <= beta(c, r)`` an advance ``j`` is optimal when the
    part left behind, ``j`` steps reversed later with ``c`` slots, needs
    repetition ``r - 1`` and the part ahead, ``m - j`` steps with ``c - 1``
    slots, needs repetition ``r``:
    ``beta(c, r-2) <= j <= beta(c, r-1)`` and
    ``beta(c-1, r-1) <= m - j <= beta(c-1, r)``. Both parts then meet their
    own minimum, and by Pascal's rule the sum meets ``binomial_cost(m, c)``.
    This returns the largest such ``j``.
    """
    c, r = snapshots, repetitions
    return min(_beta(c, r - 1), n_steps - _beta(c - 1, r - 1))


def _binomial_reversal(start, stop, slots, first_turn):
    """Yield the actions that reverse steps ``start .. stop-1`` optimally.

    Parameters
    ----------
    start, stop : int
        The steps to reverse. On entry ``current == start`` and, if more than
        one step is to be reversed, ``slots[0]`` already holds state
        ``start``.
    slots : sequence of int
        Slot indices this reversal may use; ``slots[d]`` holds the snapshot
        of nesting depth ``d``, so ``slots[1:]`` are overwritten freely.
    first_turn : bool
        Whether the first turn emitted is the loop's ``FirstTurn``.

    Notes
    -----
    The recursion of Griewank (1992) is run with an explicit stack, so the
    nesting depth of a long loop with few slots costs no Python recursion and
    actions are produced lazily, in O(1) amortized work each.
    """
    you_turn = YouTurn()
    turn = FirstTurn() if first_turn else you_turn
    n_slots = min(len(slots), stop - start + 1)    # more slots than steps change nothing
    restores = _ActionsOf(Restore, slots)
    shots = _ActionsOf(TakeShot, slots)
    # Items: (start, stop, depth, repetition bound) or a depth to restore.
    pending = [(start, stop, 0, None)]
    while pending:
        item = pending.pop()
        if type(item) is int:
            yield restores[item]
            continue
        a, b, depth, bound = item
        m = b - a
        if m == 1:
            yield turn
            turn = you_turn
            continue
        c = n_slots - depth
        if c == 1:
            yield from _single_slot_reversal(m, restores[depth], turn, you_turn)
            turn = you_turn
            continue
        r = repetition_number(m, c, bound)
        j = _binomial_split(m, c, r)
        yield Advance(j)
        pending.append((a, a + j, depth, max(r - 1, 1)))
        pending.append(depth)
        if m - j == 1:
            yield turn
            turn = you_turn
        else:
            yield shots[depth + 1]
            pending.append((a + j, b, depth + 1, r))


class _ActionsOf(dict):
    """``Restore``/``TakeShot`` actions of slot ``slots[depth]``, made when
    first used (a schedule with very many slots allocates only those used)."""

    def __init__(self, kind, slots):
        super().__init__()
        self.kind = kind
        self.slots = slots

    def __missing__(self, depth):
        action = self[depth] = self.kind(self.slots[depth])
        return action


def _single_slot_reversal(n_steps, restore, turn, you_turn):
    """Reverse ``n_steps`` steps from one slot: rerun from it for every step."""
    yield Advance(n_steps - 1)
    yield turn
    for offset in range(n_steps - 2, -1, -1):
        yield restore
        if offset:
            yield Advance(offset)
        yield you_turn


def _check_count(value, name, minimum, entry=None):
    """Return ``value`` as an int, raising if it is not an integer >= minimum
    (the message names ``entry``, the schedule or function checking it)."""
    return count(value, name, entry, minimum)


# ---------------------------------------------------------------------------
# Revolve
# ---------------------------------------------------------------------------


class Revolve:
    """Binomial checkpointing schedule for a loop of known length.

    Reverses ``n_steps`` steps with ``snapshots`` slots (one of them holds the
    initial state) using the fewest plain step evaluations possible,
    ``forward_steps = r * n - beta(s + 1, r - 1)`` where ``r`` is the
    :attr:`repetition_number`. Iterating yields the actions (see the module
    docstring for their meaning); iterating again yields the same sequence.

    Parameters
    ----------
    n_steps : int
        Number of loop steps, ``>= 1``.
    snapshots : int
        Number of snapshot slots, ``>= 1``, counting the one that holds the
        initial state. More than ``n_steps - 1`` slots give no further gain.

    Attributes
    ----------
    requires_n_steps : bool
        ``True``: the loop length must be known before the loop runs.

    Notes
    -----
    Slot ``d`` holds the snapshot of nesting depth ``d``: slot 0 the initial
    state, higher slots ever shorter-lived states. Each split advances by the
    largest optimal amount (see :func:`_binomial_split`).

    References
    ----------
    .. [1] A. Griewank, "Achieving logarithmic growth of temporal and spatial
       complexity in reverse automatic differentiation", Optimization Methods
       and Software 1(1), 35-54, 1992.
    .. [2] A. Griewank and A. Walther, "Algorithm 799: revolve: an
       implementation of checkpointing for the reverse or adjoint mode of
       computational differentiation", ACM TOMS 26(1), 19-45, 2000.

    Examples
    --------
    >>> schedule = Revolve(5, snapshots=2)
    >>> schedule.forward_steps, schedule.repetition_number
    (6, 2)
    >>> [type(action).__name__ for action in schedule][:3]
    ['TakeShot', 'Advance', 'TakeShot']
    """

    requires_n_steps = True

    def __init__(self, n_steps, snapshots):
        self._n_steps = _check_count(n_steps, "n_steps", 1, "Revolve")
        self._snapshots = _check_count(snapshots, "snapshots", 1, "Revolve")

    @property
    def n_steps(self):
        """Number of loop steps."""
        return self._n_steps

    @property
    def snapshots(self):
        """Number of snapshot slots, including the one of the initial state."""
        return self._snapshots

    @property
    def repetition_number(self):
        """Smallest ``r`` with ``C(snapshots + r, snapshots) >= n_steps``.

        No step is run plainly more than ``r`` times.
        """
        return repetition_number(self._n_steps, self._snapshots)

    @property
    def forward_steps(self):
        """Plain step evaluations (sum of all ``Advance`` steps).

        The taped evaluation of each step made by its turn is not counted.
        """
        return binomial_cost(self._n_steps, self._snapshots)

    def actions(self):
        """Return a fresh iterator over the actions."""
        return iter(self)

    def __iter__(self):
        slots = range(min(self._snapshots, self._n_steps))
        if self._n_steps > 1:
            yield TakeShot(0)
        yield from _binomial_reversal(0, self._n_steps, slots, True)

    def __repr__(self):
        return f"Revolve(n_steps={self._n_steps}, snapshots={self._snapshots})"


# ---------------------------------------------------------------------------
# Simulated execution
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleCounts:
    """Work done by a schedule, as counted by :func:`simulate`.

    Attributes
    ----------
    n_steps : int
        Loop length.
    forward_steps : int
        Plain step evaluations (sum of all ``Advance`` steps).
    turns : int
        Taped step + adjoint evaluations; equals ``n_steps``.
    shots, restores : int
        Number of ``TakeShot`` / ``Restore`` actions.
    shots_per_slot, restores_per_slot : tuple of int
        The same counts per slot index.
    slots_used : int
        Number of distinct slots written.
    max_repetitions : int
        Most plain evaluations of any single step.
    """

    n_steps: int
    forward_steps: int
    turns: int
    shots: int
    restores: int
    shots_per_slot: tuple
    restores_per_slot: tuple
    slots_used: int
    max_repetitions: int


class _Executor:
    """Integer-only executor for :func:`simulate`; raises on the first bad action."""

    def __init__(self, n_steps, snapshots):
        self.n_steps = n_steps
        self.snapshots = snapshots
        self.current = 0
        self.reverse_position = n_steps
        self.turned = False
        self.slots = [None] * snapshots
        self.shots = [0] * snapshots
        self.restores = [0] * snapshots
        self.forward_steps = 0
        # Difference array of how often each step is run plainly.
        self.runs = [0] * (n_steps + 1)

    def fail(self, position, action, reason):
        raise ValueError(f"action {position} ({action!r}) is illegal: {reason}")

    def need_current(self, position, action):
        if self.current is None:
            self.fail(position, action, "no current state after a turn; Restore first")

    def need_slot(self, position, action, slot):
        if not 0 <= slot < self.snapshots:
            self.fail(position, action, f"slot outside 0..{self.snapshots - 1}")

    def advance(self, position, action):
        self.need_current(position, action)
        steps = action.steps
        limit = self.reverse_position - 1 if self.turned else self.n_steps
        if steps < 1 or self.current + steps > limit:
            self.fail(
                position,
                action,
                f"from state {self.current} an advance must stay within "
                f"1..{limit - self.current} steps (limit state {limit})",
            )
        self.runs[self.current] += 1
        self.runs[self.current + steps] -= 1
        self.current += steps
        self.forward_steps += steps

    def take_shot(self, position, action):
        self.need_current(position, action)
        self.need_slot(position, action, action.index)
        self.slots[action.index] = self.current
        self.shots[action.index] += 1

    def restore(self, position, action):
        self.need_slot(position, action, action.index)
        held = self.slots[action.index]
        if held is None:
            self.fail(position, action, "the slot is empty")
        if held >= self.reverse_position:
            self.fail(position, action, f"state {held} is no longer needed")
        self.current = held
        self.restores[action.index] += 1

    def turn(self, position, action, first):
        if first == self.turned:
            self.fail(position, action, "FirstTurn must come first, and only once")
        self.need_current(position, action)
        if self.current != self.reverse_position - 1:
            self.fail(
                position,
                action,
                f"current state {self.current}, needs {self.reverse_position - 1}",
            )
        self.turned = True
        self.reverse_position -= 1
        self.current = None

    def run(self, actions):
        dispatch = {
            Advance: self.advance,
            TakeShot: self.take_shot,
            Restore: self.restore,
        }
        for position, action in enumerate(actions):
            if self.reverse_position == 0:
                self.fail(position, action, "it comes after the last turn")
            kind = type(action)
            if kind is FirstTurn or kind is YouTurn:
                self.turn(position, action, kind is FirstTurn)
            elif kind in dispatch:
                dispatch[kind](position, action)
            else:
                raise TypeError(f"action {position} is not a schedule action: {action!r}")
        if self.reverse_position != 0:
            raise ValueError(
                f"schedule ended with steps 0..{self.reverse_position - 1} not reversed"
            )

    def counts(self):
        repeats, running = 0, 0
        for delta in self.runs:
            running += delta
            repeats = max(repeats, running)
        return ScheduleCounts(
            n_steps=self.n_steps,
            forward_steps=self.forward_steps,
            turns=self.n_steps,
            shots=sum(self.shots),
            restores=sum(self.restores),
            shots_per_slot=tuple(self.shots),
            restores_per_slot=tuple(self.restores),
            slots_used=sum(1 for count in self.shots if count),
            max_repetitions=repeats,
        )


def simulate(actions, n_steps=None, snapshots=None):
    """Execute a schedule on integers, check every rule and count the work.

    Parameters
    ----------
    actions : iterable of Action
        A schedule (for example a :class:`Revolve`) or any action sequence.
    n_steps, snapshots : int, optional
        Loop length and slot count; taken from ``actions.n_steps`` and
        ``actions.snapshots`` when not given.

    Returns
    -------
    ScheduleCounts

    Raises
    ------
    ValueError
        At the first illegal action: an advance without a current state or
        past the point still to be reversed, a slot index out of range, a
        restore of an empty slot or of a state no longer needed, a turn out
        of order, actions after the last turn, or a schedule that stops
        before step 0 is reversed.
    """
    if (n_steps is None or snapshots is None) and not hasattr(actions, "n_steps"):
        raise InvalidArgument(f"adsim.checkpoint.simulate: actions is {given(actions)}, not a "
                              f"schedule (such as adsim.Revolve(n_steps, snapshots)); for a "
                              f"sequence of actions pass n_steps= and snapshots= too")
    if n_steps is None:
        n_steps = actions.n_steps
    if snapshots is None:
        snapshots = actions.snapshots
    n_steps = _check_count(n_steps, "n_steps", 1, "simulate")
    snapshots = _check_count(snapshots, "snapshots", 1, "simulate")
    executor = _Executor(n_steps, snapshots)
    executor.run(actions)
    return executor.counts()
