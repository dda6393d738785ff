# cython: language_level=3
"""Checkpoint schedules in compiled form, for the loop executor (_loops.pyx).

adsim/checkpoint/schedules.py, online.py and multistage.py define the
schedules (pure Python, tested on their own); the sources here produce the
same actions, one at a time, without Python per action: the binomial
reversal of Griewank (1992) with an explicit stack, the online schedule's
snapshot decisions and its reversal. tests/checkpoint/test_compiled_schedules.py
compares them action by action with the Python schedules.

An action is a kind (ACT_*, _schedules.pxd) and an integer argument (the
steps of an advance, the slot of a snapshot action).
"""
cimport numpy as cnp
import numpy as np
from libc.stdint cimport int64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memmove

from ._opcodes cimport grow

cnp.import_array()

ACTION_KINDS = {"Advance": ACT_ADVANCE, "TakeShot": ACT_TAKESHOT, "Restore": ACT_RESTORE,
                "FirstTurn": ACT_FIRSTTURN, "YouTurn": ACT_YOUTURN}

cdef int64_t BETA_CAP = (<int64_t>1) << 62      # binomials at least this are saturated to it


cdef int64_t gcd64(int64_t a, int64_t b) noexcept nogil:
    while b:
        a, b = b, a % b
    return a


cdef int64_t beta(int64_t snapshots, int64_t repetitions) noexcept nogil:
    """C(s + r, s), saturated at BETA_CAP; 0 when an argument is negative
    (schedules.py: _beta)."""
    cdef int64_t k, i, res = 1, f, g, ig
    if snapshots < 0 or repetitions < 0:
        return 0
    k = min(snapshots, repetitions)
    for i in range(1, k + 1):       # res = C(s + r - k + i, i), exact at every step
        f = snapshots + repetitions - k + i
        g = gcd64(res, i)
        ig = i // g                 # divides f, since res f / i is an integer
        f //= ig
        res //= g
        if f and res > BETA_CAP // f:
            return BETA_CAP
        res *= f
    return res


cdef int64_t repetition_count(int64_t n_steps, int64_t snapshots, int64_t upper) noexcept nogil:
    """Smallest r with beta(s, r) >= n (schedules.py: repetition_number);
    ``upper`` > 0 is a known upper bound."""
    cdef int64_t r, low, high, middle
    if n_steps <= 1:
        return 0
    if snapshots == 1:
        return n_steps - 1
    if snapshots >= n_steps - 1:
        return 1
    if upper > 0:
        r = upper
        while r > 1 and beta(snapshots, r - 1) >= n_steps:
            r -= 1
        return r
    high = 2
    while beta(snapshots, high) < n_steps:
        high *= 2
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        if beta(snapshots, middle) >= n_steps:
            high = middle
        else:
            low = middle
    return high


cdef int64_t reversal_cost(int64_t n_steps, int64_t snapshots) noexcept nogil:
    """Plain steps of the optimal reversal (schedules.py: binomial_cost)."""
    cdef int64_t r
    if n_steps <= 1:
        return 0
    if snapshots == 1:
        return n_steps * (n_steps - 1) // 2
    r = repetition_count(n_steps, snapshots, 0)
    return r * n_steps - beta(snapshots + 1, r - 1)


def _binomial_cost(int64_t n_steps, int64_t snapshots):
    """reversal_cost, for tests against schedules.binomial_cost."""
    return reversal_cost(n_steps, snapshots)


cdef class Actions:
    """A source of schedule actions: ``next`` gives the kind of the next
    action and sets its argument; ACT_END when there are no more. Iterating
    from Python gives (kind, argument) pairs (for tests)."""

    cdef int next(self, int64_t* arg) except -1:
        return ACT_END

    def __iter__(self):
        return self

    def __next__(self):
        cdef int64_t arg = 0
        cdef int kind = self.next(&arg)
        if kind == ACT_END:
            raise StopIteration
        return kind, arg


cdef class BinomialActions(Actions):
    """The binomial reversal of steps start .. stop-1 with the given slots
    (schedules.py: _binomial_reversal), optionally after TakeShot(slots[0])
    as Revolve and TwoLevel start. Memory: O(slots), whatever the length."""


    def __dealloc__(self):
        free(self.slots)
        free(self.stack)

    cdef int reset(self, int64_t start, int64_t stop, const int64_t* slots, int64_t n_slots,
                   bint first_turn, bint lead_shot) except -1:
        """Reverse steps start .. stop-1 with ``n_slots`` slots: ``slots``, or
        0 .. n_slots-1 when it is NULL (Revolve's, without an array of them)."""
        cdef int64_t c = 0
        n_slots = min(n_slots, stop - start + 1)  # more slots than steps change nothing
        free(self.slots)
        self.slots = NULL
        if slots != NULL:
            self.slots = <int64_t*>grow(NULL, &c, max(n_slots, 1), sizeof(int64_t))
            memcpy(self.slots, slots, <size_t>n_slots * sizeof(int64_t))
        self.n_slots = n_slots
        if self.stack == NULL:
            self.stack = <Reversal_item*>grow(NULL, &self.cap, 16, sizeof(Reversal_item))
        self.top = 0
        self.head = self.count = 0
        self.single_offset = -1
        self.turn = ACT_FIRSTTURN if first_turn else ACT_YOUTURN
        if lead_shot:
            self.emit(ACT_TAKESHOT, self.slot(0))
        if stop > start:
            self.push(start, stop, 0, 0)
        return 0

    cdef int64_t slot(self, int64_t depth) noexcept:
        return self.slots[depth] if self.slots != NULL else depth

    cdef void emit(self, int kind, int64_t arg) noexcept:
        cdef int i = (self.head + self.count) % 4
        self.queue_kind[i] = kind
        self.queue_arg[i] = arg
        self.count += 1

    cdef void emit_turn(self) noexcept:
        self.emit(self.turn, 0)
        self.turn = ACT_YOUTURN

    cdef int push(self, int64_t a, int64_t b, int64_t depth, int64_t bound) except -1:
        if self.top == self.cap:
            self.stack = <Reversal_item*>grow(self.stack, &self.cap, self.top + 1,
                                              sizeof(Reversal_item))
        self.stack[self.top].a = a
        self.stack[self.top].b = b
        self.stack[self.top].depth = depth
        self.stack[self.top].bound = bound
        self.top += 1
        return 0

    cdef int next(self, int64_t* arg) except -1:
        cdef int kind
        cdef int64_t m, c, r, j
        cdef Reversal_item item
        while True:
            if self.count:
                kind = self.queue_kind[self.head]
                arg[0] = self.queue_arg[self.head]
                self.head = (self.head + 1) % 4
                self.count -= 1
                return kind
            if self.single_offset >= 0:           # rerun from the one slot for every step
                self.emit(ACT_RESTORE, self.single_slot)
                if self.single_offset:
                    self.emit(ACT_ADVANCE, self.single_offset)
                self.emit(ACT_YOUTURN, 0)
                self.single_offset -= 1
                continue
            if self.top == 0:
                return ACT_END
            self.top -= 1
            item = self.stack[self.top]
            if item.b < 0:
                self.emit(ACT_RESTORE, self.slot(item.a))
                continue
            m = item.b - item.a
            if m == 1:
                self.emit_turn()
                continue
            c = self.n_slots - item.depth
            if c == 1:
                self.emit(ACT_ADVANCE, m - 1)
                self.emit_turn()
                self.single_offset = m - 2
                self.single_slot = self.slot(item.depth)
                continue
            r = repetition_count(m, c, item.bound)
            j = min(beta(c, r - 1), m - beta(c - 1, r - 1))      # schedules.py: _binomial_split
            self.emit(ACT_ADVANCE, j)
            self.push(item.a, item.a + j, item.depth, max(r - 1, 1))
            self.push(item.depth, -1, 0, 0)
            if m - j == 1:
                self.emit_turn()
            else:
                self.emit(ACT_TAKESHOT, self.slot(item.depth + 1))
                self.push(item.a + j, item.b, item.depth + 1, r)


def revolve_actions(int64_t n_steps, int64_t snapshots, slots=None):
    """The actions of Revolve(n_steps, snapshots), or of TwoLevel given
    ``slots``, its slot of each depth."""
    cdef cnp.ndarray arr
    cdef BinomialActions source = BinomialActions()
    if slots is None:
        source.reset(0, n_steps, NULL, min(snapshots, n_steps), True, n_steps > 1)
    else:
        arr = np.ascontiguousarray(slots, dtype=np.int64)
        source.reset(0, n_steps, <int64_t*>cnp.PyArray_DATA(arr), arr.shape[0], True,
                     n_steps > 1)
    return source


cdef class OnlineDecisions:
    """The snapshot decisions of Online(snapshots) (online.py: forward_step),
    one per step of a forward pass, and the positions and slots held."""


    def __cinit__(self, int64_t snapshots):
        if snapshots < 1:
            raise ValueError(f"snapshots must be >= 1, got {snapshots}")
        self.snapshots = snapshots

    def __dealloc__(self):
        free(self.positions)
        free(self.slots)
        free(self.prefix)
        free(self.best_q)
        free(self.best_at)

    cdef int store(self, int64_t step, int64_t slot) except -1 nogil:
        cdef int64_t c
        if self.k == self.cap:
            with gil:
                c = self.cap
                self.positions = <int64_t*>grow(self.positions, &c, self.k + 1, sizeof(int64_t))
                self.slots = <int64_t*>grow(self.slots, &self.cap, self.k + 1, sizeof(int64_t))
        self.positions[self.k] = step
        self.slots[self.k] = slot
        self.k += 1
        self.next_step = step + 1
        return 0

    cdef int64_t forward_step(self, int64_t step) except -2 nogil:
        """The slot to store state ``step`` in before running it, or -1
        (without the GIL: a while loop's steps run without it,
        _loop_while.pxi)."""
        cdef int64_t victim, slot
        if step == 0:
            self.k = 0
            self.unused = 1
            self.n_prefix = 0
            self.valid = 0
            self.store(0, 0)
            return 0
        if step != self.next_step:
            with gil:
                raise ValueError(f"forward_step expects step {self.next_step}, got {step}")
        if self.unused < self.snapshots:
            self.unused += 1
            self.store(step, self.unused - 1)
            return self.unused - 1
        victim = self.choose_victim(step)
        if victim < 0:
            self.next_step += 1
            return -1
        slot = self.slots[victim]
        memmove(self.positions + victim, self.positions + victim + 1,
                <size_t>(self.k - victim - 1) * sizeof(int64_t))
        memmove(self.slots + victim, self.slots + victim + 1,
                <size_t>(self.k - victim - 1) * sizeof(int64_t))
        self.k -= 1
        self.valid = min(self.valid, victim - 1)
        self.store(step, slot)
        return slot

    def decide(self, int64_t step):
        """forward_step from Python (tests): the slot, or None."""
        slot = self.forward_step(step)
        return None if slot < 0 else slot

    @property
    def held(self):
        """(positions, slots) of the states held."""
        return ([self.positions[i] for i in range(self.k)],
                [self.slots[i] for i in range(self.k)])

    cdef int64_t choose_victim(self, int64_t step) except -2 nogil:
        cdef int64_t last, grow_cost, best_change = 0, victim = -1, previous, change, inner, at
        last = step - self.positions[self.k - 1]
        grow_cost = (last + 1) * last // 2
        if self.k >= 2:
            previous = self.positions[self.k - 1] - self.positions[self.k - 2]
            change = reversal_cost(previous + last, 2) - reversal_cost(previous, 2) - grow_cost
            if change < best_change:
                best_change, victim = change, self.k - 1
        if self.k >= 3:
            inner = self.best_inner_change(&at)
            change = inner + reversal_cost(last, 2) - grow_cost
            if change < best_change:
                victim = at
        return victim

    cdef int64_t best_inner_change(self, int64_t* at) except? -1 nogil:
        """online.py: _best_inner_change, with its incremental prefix data."""
        cdef int64_t last_closed = self.k - 2, i, length, left, q, s = self.snapshots, c
        if self.cap_prefix < self.k:
            with gil:
                c = self.cap_prefix
                self.prefix = <int64_t*>grow(self.prefix, &c, self.k, sizeof(int64_t))
                c = self.cap_prefix
                self.best_q = <int64_t*>grow(self.best_q, &c, self.k, sizeof(int64_t))
                self.best_at = <int64_t*>grow(self.best_at, &self.cap_prefix, self.k,
                                              sizeof(int64_t))
        self.n_prefix = min(self.n_prefix, self.valid)
        for i in range(self.n_prefix, last_closed + 1):
            length = self.positions[i + 1] - self.positions[i]
            if i == 0:
                self.prefix[0] = 0
                self.best_at[0] = -1
                continue
            self.prefix[i] = self.prefix[i - 1] + reversal_cost(length, s - i + 1) - \
                reversal_cost(length, s - i)
            left = self.positions[i] - self.positions[i - 1]
            q = reversal_cost(left + length, s - i + 1) - reversal_cost(left, s - i + 1) - \
                reversal_cost(length, s - i) - self.prefix[i]
            if self.best_at[i - 1] < 0 or q <= self.best_q[i - 1]:
                self.best_q[i] = q
                self.best_at[i] = i
            else:
                self.best_q[i] = self.best_q[i - 1]
                self.best_at[i] = self.best_at[i - 1]
        self.n_prefix = last_closed + 1
        self.valid = last_closed + 1
        at[0] = self.best_at[last_closed]
        return self.best_q[last_closed] + self.prefix[last_closed]

    def reversal(self, int64_t n_steps, bint first_turn=True):
        """The actions reversing a loop stopped after ``n_steps`` steps
        (online.py: Online.reverse)."""
        return OnlineReversal(self, n_steps, first_turn)


cdef class OnlineReversal(Actions):
    """Online.reverse: the segments between held snapshots, last first, each
    a Restore of its snapshot and a binomial reversal with the free slots:
    those of later segments and the never used ones, smallest first."""


    def __cinit__(self, OnlineDecisions decided, int64_t n_steps, bint first_turn=True):
        cdef int64_t j, c = 0, c2 = 0, c3 = 0
        if n_steps < 1 or n_steps > decided.next_step:
            raise ValueError(f"reverse({n_steps}) after {decided.next_step} forward_step calls")
        self.seg_start = <int64_t*>grow(NULL, &c, max(decided.k, 1), sizeof(int64_t))
        self.seg_slot = <int64_t*>grow(NULL, &c2, max(decided.k, 1), sizeof(int64_t))
        self.heap = <int64_t*>grow(NULL, &c3, max(decided.k, 1), sizeof(int64_t))
        for j in range(decided.k):
            if decided.positions[j] < n_steps:
                self.seg_start[self.n_seg] = decided.positions[j]
                self.seg_slot[self.n_seg] = decided.slots[j]
                self.n_seg += 1
            else:                       # a snapshot past the end: its slot is free
                self.heap_push(decided.slots[j])
        self.n_steps = n_steps
        self.unused = decided.unused
        self.snapshots = decided.snapshots
        self.i = self.n_seg - 1
        self.restore_next = True
        self.first_turn = first_turn
        self.part = BinomialActions()

    def __dealloc__(self):
        free(self.seg_start)
        free(self.seg_slot)
        free(self.heap)

    cdef void heap_push(self, int64_t v) noexcept:
        cdef int64_t i = self.n_heap, parent
        self.n_heap += 1
        while i > 0:
            parent = (i - 1) // 2
            if self.heap[parent] <= v:
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = v

    cdef int64_t heap_pop(self) noexcept:
        cdef int64_t top = self.heap[0], v, i = 0, child
        self.n_heap -= 1
        v = self.heap[self.n_heap]
        while True:
            child = 2 * i + 1
            if child >= self.n_heap:
                break
            if child + 1 < self.n_heap and self.heap[child + 1] < self.heap[child]:
                child += 1
            if self.heap[child] >= v:
                break
            self.heap[i] = self.heap[child]
            i = child
        self.heap[i] = v
        return top

    cdef int start_segment(self) except -1:
        """The binomial reversal of segment i: its slot, then up to
        (its length) free slots, smallest first."""
        cdef int64_t start = self.seg_start[self.i], j, k, frontier, c = 0
        cdef int64_t stop = self.seg_start[self.i + 1] if self.i + 1 < self.n_seg else self.n_steps
        cdef int64_t want = min(stop - start, self.n_heap + (self.snapshots - self.unused))
        cdef int64_t* slots = <int64_t*>grow(NULL, &c, want + 1, sizeof(int64_t))
        k = 1
        slots[0] = self.seg_slot[self.i]
        while k <= want and self.n_heap:
            slots[k] = self.heap_pop()
            k += 1
        for j in range(1, k):           # the heap keeps them for earlier segments
            self.heap_push(slots[j])
        frontier = self.unused
        while k <= want and frontier < self.snapshots:
            slots[k] = frontier
            frontier += 1
            k += 1
        try:
            self.part.reset(start, stop, slots, k, self.first_turn and self.i == self.n_seg - 1,
                            False)
        finally:
            free(slots)
        return 0

    cdef int next(self, int64_t* arg) except -1:
        cdef int kind
        while self.i >= 0:
            if self.restore_next:
                self.restore_next = False
                self.start_segment()
                arg[0] = self.seg_slot[self.i]
                return ACT_RESTORE
            kind = self.part.next(arg)
            if kind != ACT_END:
                return kind
            self.heap_push(self.seg_slot[self.i])     # free for the segments before
            self.i -= 1
            self.restore_next = True
        return ACT_END


cdef class OnlineRun(Actions):
    """Online(s).actions(n) for a loop of known length (a checkpoint_loop
    given schedule=Online(s)): the forward pass as TakeShot and Advance
    actions, then the reversal."""


    def __cinit__(self, int64_t snapshots, int64_t n_steps):
        self.decided = OnlineDecisions(snapshots)
        self.n_steps = n_steps
        self.shot = -1

    cdef int next(self, int64_t* arg) except -1:
        cdef int64_t slot
        if self.shot >= 0:
            arg[0] = self.shot
            self.shot = -1
            return ACT_TAKESHOT
        while self.step < self.n_steps:
            slot = self.decided.forward_step(self.step)
            self.step += 1
            if slot >= 0:
                if self.pending:
                    arg[0] = self.pending
                    self.pending = 1
                    self.shot = slot
                    return ACT_ADVANCE
                self.pending = 1
                arg[0] = slot
                return ACT_TAKESHOT
            self.pending += 1
        if self.pending:
            arg[0] = self.pending
            self.pending = 0
            return ACT_ADVANCE
        if self.reversal is None:
            self.reversal = OnlineReversal(self.decided, self.n_steps)
        return (<Actions>self.reversal).next(arg)


cdef class PythonActions(Actions):
    """Actions from a Python iterable of action objects (a schedule of the
    user's own), converted one by one; ``kinds`` maps the action classes to
    their kinds and the argument attribute."""


    def __cinit__(self, actions, dict kinds):
        self.iterator = iter(actions)
        self.kinds = kinds

    cdef int next(self, int64_t* arg) except -1:
        try:
            action = next(self.iterator)
        except StopIteration:
            return ACT_END
        found = self.kinds.get(type(action))
        if found is None:
            found = next((v for cls, v in self.kinds.items() if isinstance(action, cls)), None)
        if found is None:
            raise TypeError(f"adsim: schedule action {self.number} is not an action: {action!r}")
        self.number += 1
        kind, attribute = found
        arg[0] = getattr(action, attribute) if attribute else 0
        return kind
