# The executor of checkpointed loops (adsim/checkpoint/driver.py sets it up).
#
# A loop's step is a small tape replayed once per step. LoopSteps holds, for
# one sweep through the loop, a Replay of each recorded variant of the step
# (or of the while loop's condition) with the loop's inputs loaded; LoopRun
# holds the current state, the snapshots and the adjoints, and executes the
# actions of a schedule (_schedules.pyx): advances are plain (or
# tangent) replays, a turn is a keeping replay and its adjoint (or
# second-order adjoint) sweep of one step. No Python runs per step. Python
# is called only to record a new variant of the step when every recorded
# one leaves its path at the current state (BranchChanged), to read and
# write snapshots kept on disk, and to report progress when asked to.
#
# Everything is per call: a sweep makes its own LoopSteps and LoopRun, and
# the Replays come from the step tapes' pools, so threads replaying one
# enclosing tape never share a buffer.
#
# The variants of one sweep share one work buffer (tangents, adjoints,
# adjoint tangents) and one value stack: one variant replays at a time, and
# a finished turn leaves its adjoints zero. Each variant keeps only its tape
# (program and value arena), so a memory budget holds several variants for
# the room one took with its own buffers (adsim/checkpoint/footprint.py,
# StepTapeBytes.idle). The buffer is laid out for the largest arena of the
# variants (each part at a fixed place, so that zeros left by one variant
# are zeros for the next); the loop inputs' tangents, which a variant's
# sweeps read from it, are written again when another variant's tangent
# sweep ran in between (LoopSteps.seeded_replay).
#
# States and snapshots are allocated through Python's raw allocator, so that
# tracemalloc counts them as it counts NumPy arrays.

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree


cdef double* new_state(int64_t width) except NULL:
    """Room for one state with its tangents (``width`` doubles)."""
    cdef double* p = <double*>PyMem_RawMalloc(<size_t>max(width, 1) * sizeof(double))
    if p == NULL:
        raise MemoryError(f"adsim: no memory for a loop state ({8 * width} bytes)")
    return p

# Which variant took each step (StepPath): a step whose branch differs from
# the last one's (an adaptive solver's rejected or re-tried step, BDF's
# order changes) is tried first with the variant that took it before, when
# an advance re-runs it from a snapshot and when its turn reverses it,
# instead of with each variant in turn until one holds (a failed try costs
# a sweep up to where the path leaves). One byte per step: the variant's
# serial (1..255; 0: not known), which PathHints gives each tape of a loop
# for as long as the loop lives. A sweep's first pass starts from the path
# the loop's last sweep took (PathHints.path): a replay at the same point,
# or near it, takes mostly the same steps, and where a step's variant
# changes from one step to the next (an accepted step, then a rejected one)
# the first pass would otherwise try the variant used last first.

ctypedef struct StepPath:
    uint8_t* serial                 # per step index
    int64_t cap


cdef int path_room(StepPath* path, int64_t k) except -1 nogil:
    """Room in ``path`` for step index ``k``, new entries unknown (0)."""
    cdef int64_t cap
    cdef uint8_t* p
    if k < path.cap:
        return 0
    cap = max(2 * path.cap, k + 1, <int64_t>1024)
    p = <uint8_t*>realloc(path.serial, <size_t>cap)
    if p == NULL:
        with gil:
            raise MemoryError(f"adsim: no memory for a loop's step path ({cap} bytes)")
    memset(p + path.cap, 0, <size_t>(cap - path.cap))
    path.serial, path.cap = p, cap
    return 0


cdef inline int path_note(StepPath* path, int64_t k, int serial) except -1 nogil:
    if k < 0:
        return 0
    path_room(path, k)
    path.serial[k] = <uint8_t>serial
    return 0


cdef inline int path_serial(const StepPath* path, int64_t k) noexcept nogil:
    return path.serial[k] if 0 <= k < path.cap else 0


cdef enum:
    MAX_HINTED_STEPS = 1 << 16      # longer loops keep no path between sweeps


cdef class PathHints:
    """A loop's step variants' serials, by tape, and the path its last sweep
    took (see above). Shared by the threads replaying the loop: the path is
    a hint, so whichever thread's comes last serves. Serials run to 255; a
    loop that recorded more variants than that gives them out anew (and
    forgets the path they named)."""
    cdef dict serials               # id(tape) -> serial
    cdef int given
    cdef bytes path

    def __cinit__(self):
        self.serials = {}

    cdef int serial_of(self, Tape t):
        cdef object s = self.serials.get(id(t))
        if s is None:
            if self.given == 255:
                self.serials = {}
                self.given = 0
                self.path = None
            self.given += 1
            s = self.given
            self.serials[id(t)] = s
        return s


# The sweeps of one step, shared by the executor's paths with the GIL
# (LoopSteps) and without it (_loop_while.pxi, _loop_reverse.pxi).

cdef inline int step_sweep(Sweep* s, int x0, int out, int64_t n_ops, int64_t units, double* z,
                           double* zt, int64_t n) except -2 nogil:
    """One step of the state z (and its tangents zt, unless NULL) by the
    sweep ``s`` of a step tape: 0, or 1 when it leaves its path (z
    unchanged)."""
    copy_doubles(vptr(s, x0), z, n)
    if zt != NULL:
        copy_doubles(tptr(s, x0), zt, s.p * n)
    if forward_sweep(s, n_ops, False, zt != NULL):
        return 1
    copy_doubles(z, vptr(s, out), n)
    if zt != NULL:
        copy_doubles(zt, tptr(s, out), s.p * n)
    check_signals(s, units)         # many short steps are a long replay too
    return 0


cdef inline int turn_sweep(Sweep* s, int x0, int out, int64_t first, int64_t n_ops, double* z,
                           double* zt, double* w, double* wdot, int64_t n,
                           bint second) except -2 nogil:
    """The reverse sweep of one step from state z (with tangents zt in
    second-order sweeps), the output's adjoints w (and tangents wdot) seeded:
    0, or 1 when it leaves its path (nothing changed; the caller then takes
    the adjoints out, took_turn)."""
    cdef Reversal c
    copy_doubles(vptr(s, x0), z, n)
    if second:
        copy_doubles(tptr(s, x0), zt, s.p * n)
    c.first = first
    c.n_ops = n_ops
    c.out = out
    c.size = n
    c.w = w
    c.wdot = wdot if second else NULL
    c.y = c.ty = NULL
    if reverse_replay(s, &c, second):
        s.stack.top = 0
        return 1
    return 0


cdef inline void sum_into(double* total, double* part, int64_t n) noexcept nogil:
    """total += part, and part zeroed (the work buffer's adjoints stay zero)."""
    cdef int64_t i
    for i in range(n):
        total[i] += part[i]
        part[i] = 0.0


cdef class StepVariant:
    """One recorded variant of a step (or condition) tape in a run."""
    cdef Tape tape
    cdef int serial                 # 1..255 in its LoopSteps (StepPath); 0 past that
    cdef Replay replay              # None until the run first uses it
    cdef int x0                     # the state's slot (input 0) and the result's
    cdef int out
    cdef int64_t first              # where a reversal's forward sweep stops (fused final run)
    cdef bint outcome               # condition tapes: the outcome recorded
    cdef bint shared                # its Replay uses the LoopSteps' work buffer and stack

    def __dealloc__(self):
        # a sweep dropped without finish(): the Replay goes with it, and must
        # not free the buffers it borrowed (the LoopSteps frees them)
        if self.shared and self.replay is not None:
            detach(self.replay)


cdef class LoopSteps:
    """Replays of a loop's step variants for one sweep (see the top of the file).

    ``tapes`` is the Python holder of the variants (adsim/checkpoint/steptape.py):
    its ``variants`` (tapes, last used first) and ``add_variant(z, inputs)``,
    which records one more at state ``z``. ``layout`` is the Replay layout of
    the sweep's turns (VALUES or TANGENTS when nothing is reversed), with
    ``dirs`` directions; ``in_dots`` the loop inputs' tangents (p, n_i) or None.
    """
    cdef object tapes
    cdef list inputs                # the loop inputs, flat float64
    cdef list in_dots
    cdef readonly int layout
    cdef readonly int dirs
    cdef int64_t size               # state elements
    cdef list variants              # StepVariant, in the order tried
    cdef readonly list sums         # per input: adjoints summed over the turns
    cdef readonly list dot_sums     # per input: adjoint tangents summed (second order)
    cdef bint is_condition
    cdef StepPath path              # which variant took each step (see StepPath)
    cdef int serials                # serials handed to variants so far (without hints)
    cdef PathHints hints            # serials and the last sweep's path, or None
    cdef readonly int64_t misses    # tries of a step variant that left its path
    cdef bint first_left            # run_released stopped where variants[0] left its path
    cdef double* work               # the work buffer the variants share (top of the file)
    cdef int64_t rows               # its rows of the arena: 0 (no derivatives), dirs, 2 dirs + 1
    cdef int64_t arena              # the arena elements each row has room for
    cdef DStack stack               # the value stack the variants share
    cdef StepVariant seeded         # whose input tangents the work buffer holds

    def __dealloc__(self):
        free(self.path.serial)
        free(self.work)
        free(self.stack.data)

    def __cinit__(self, tapes, list inputs, int layout, int dirs, int64_t size, list in_dots=None,
                  bint condition=False, PathHints hints=None):
        cdef int i
        cdef bytes last
        self.tapes = tapes
        self.hints = hints
        self.inputs = [np.ascontiguousarray(x, dtype=np.float64).reshape(-1) for x in inputs]
        self.layout = layout
        self.dirs = dirs
        self.size = size
        self.in_dots = in_dots
        self.is_condition = condition
        self.variants = []
        self.rows = 0 if condition or layout == VALUES else \
            2 * <int64_t>dirs + 1 if layout == SECOND_ORDER else dirs
        if layout == ADJOINTS:
            self.sums = [np.zeros((dirs, x.size)) for x in self.inputs]
        elif layout == SECOND_ORDER:
            self.sums = [np.zeros(x.size) for x in self.inputs]
            self.dot_sums = [np.zeros((dirs, x.size)) for x in self.inputs]
        self.sync()
        last = hints.path if hints is not None else None
        if last:
            path_room(&self.path, len(last) - 1)
            memcpy(self.path.serial, <const char*>last, <size_t>len(last))

    def keep_path(self, int64_t n_steps):
        """The path of steps 0 .. n_steps-1 (all taken by this sweep) for the
        loop's next sweep to start from."""
        if self.hints is not None and 0 < n_steps <= self.path.cap:
            self.hints.path = (<char*>self.path.serial)[:n_steps]

    cdef int sync(self) except -1:
        """Take the holder's variants (after a recording some may be gone)."""
        cdef dict known = {id(v.tape): v for v in self.variants}
        cdef list fresh = []
        cdef StepVariant v
        for tape in self.tapes.variants:
            v = known.pop(id(tape), None)
            fresh.append(self.new_variant(tape) if v is None else v)
        for v in known.values():
            self.release(v)
        self.variants = fresh
        self.share_room()
        return 0

    cdef int share_room(self) except -1:
        """Make the shared work buffer room for the largest arena of the
        variants, when none of them has a Replay yet (a variant added later
        with a larger arena gets buffers of its own: replay_of)."""
        cdef int64_t need = 0
        cdef StepVariant v
        cdef double* p
        if not self.rows:
            return 0
        for v in self.variants:
            if v.replay is not None:
                return 0
            need = max(need, v.tape.arena_size)
        for t in getattr(self.tapes, "parked_tapes", tuple)():     # (one may come back)
            need = max(need, (<Tape>t).arena_size)
        if need <= self.arena and self.work != NULL:
            return 0
        if need and self.rows > ((<int64_t>1) << 60) // need:
            raise MemoryError(f"adsim: {self.dirs} directions of {need} values do not fit "
                              f"in memory")
        p = <double*>calloc(<size_t>max(self.rows * need, 1), sizeof(double))
        if p == NULL:
            raise MemoryError(f"adsim: no memory for a loop step's work buffer "
                              f"({8 * self.rows * need} bytes)")
        free(self.work)
        self.work, self.arena = p, need
        self.seeded = None
        return 0

    cdef StepVariant new_variant(self, Tape t):
        cdef StepVariant v
        t.check_replayable()
        v = StepVariant.__new__(StepVariant)
        v.tape = t
        if self.hints is not None:
            v.serial = self.hints.serial_of(t)
        else:
            self.serials += 1
            v.serial = self.serials if self.serials <= 255 else 0
        v.x0 = t._input_slots[0]
        v.out = t.out_slot
        if self.is_condition:
            v.outcome = self.tapes.outcome(t)
        return v

    cdef Replay replay_of(self, StepVariant v):
        """The variant's Replay for this run: from its tape's pool, laid out
        for the sweep on the shared work buffer and stack (when it has room
        for the variant), the loop inputs (and their tangents) loaded."""
        cdef Tape t = v.tape
        cdef Replay r
        if v.replay is not None:
            return v.replay
        if t.slot_size[v.x0] != self.size or (t.slot_size[v.out] != self.size and
                                              not self.is_condition):
            raise ValueError(f"adsim: the loop step maps {t.slot_size[v.x0]} state values to "
                             f"{t.slot_size[v.out]}; expected {self.size}")
        v.shared = self.rows > 0 and t.arena_size <= self.arena
        xs = [np.zeros(self.size)] + self.inputs
        if v.shared:        # laid out on the shared buffer, known zero where sweeps accumulate
            r = replay_setup_on(t, xs, self.layout, self.dirs, self.work, self.rows * self.arena)
        else:
            r = replay_setup(t, xs, self.layout, self.dirs)
        try:
            if v.shared:
                self.attach(r)
            if self.layout == TANGENTS or self.layout == SECOND_ORDER:
                self.seed(v, r)
            v.first = fused_start(t, r)
        except BaseException:
            if v.shared:
                detach(r)
            replay_teardown(t, r)
            raise
        v.replay = r
        return r

    cdef int attach(self, Replay r) except -1:
        """Point the Replay's sweep at the shared work buffer and stack, each
        part of the buffer at its fixed place (``arena`` elements per row)."""
        cdef Sweep* s = &r.s
        cdef int64_t n = self.arena
        s.stack = &self.stack
        if self.layout == TANGENTS:
            s.tan = self.work
        elif self.layout == ADJOINTS:
            s.adj = self.work
        elif self.layout == SECOND_ORDER:
            s.tan = self.work
            s.adj = self.work + self.dirs * n
            s.adot = self.work + (self.dirs + 1) * n
        return 0

    cdef int seed(self, StepVariant v, Replay r) except -1:
        """The loop inputs' tangents (zero without in_dots) into the work buffer."""
        seed_tangents(v.tape, r, [None] + (self.in_dots if self.in_dots is not None
                                           else [None] * len(self.inputs)), self.dirs)
        if v.shared:
            self.seeded = v
        return 0

    cdef Replay seeded_replay(self, StepVariant v):
        """replay_of for a sweep with tangents: the inputs' tangents written
        again when another variant's tangent sweep ran on the shared buffer."""
        cdef Replay r = self.replay_of(v)
        if v.shared and self.seeded is not v:
            self.seed(v, r)
        return r

    cdef void release(self, StepVariant v):
        """Give the variant's Replay back to its tape, without the buffers
        of the sweep's derivatives: shared, they stay with the LoopSteps;
        its own (a variant larger than the shared buffer), they are freed,
        so that a variant between sweeps holds its tape only."""
        cdef Replay r = v.replay
        if r is None:
            return
        v.replay = None
        if self.seeded is v:
            self.seeded = None
        if v.shared:
            detach(r)
        elif self.rows:
            drop_buffers(r)
        replay_teardown(v.tape, r)

    def finish(self):
        """Return every Replay, and tell the holder which variant was used
        last (when that changed the order it holds)."""
        cdef StepVariant v
        cdef list order = [(<StepVariant>v).tape for v in self.variants]
        for v in self.variants:
            self.release(v)
        if not same_items(order, self.tapes.variants):
            self.tapes.used_order(order)

    cdef int record(self, double* z) except -1:
        """Python: record one more variant at state z (every variant left its
        path). The Replays are given back first: the holder may drop variants
        to stay within the memory budget, and nothing else may keep them."""
        cdef StepVariant v
        cdef int i
        state = copy_out(z, 0, self.size)
        for v in self.variants:
            self.release(v)
        v = None                        # (else it keeps the last variant, the one dropped first)
        self.variants = []
        recorded = self.tapes.add_variant(state, self.inputs)
        self.sync()
        # first the variant this call recorded: another thread replaying the
        # loop may have recorded one since, at its own state
        for i in range(len(self.variants)):
            if (<StepVariant>self.variants[i]).tape is recorded:
                self.promote(i)
                break
        return 0

    cdef int promote(self, int i):
        if i:
            self.variants.insert(0, self.variants.pop(i))
        return 0

    cdef int hinted(self, int64_t k):
        """The place in ``variants`` of the variant that took step ``k``
        before, or -1 (not known, or that variant was dropped)."""
        cdef int serial = path_serial(&self.path, k), i
        if serial:
            for i in range(len(self.variants)):
                if (<StepVariant>self.variants[i]).serial == serial:
                    return i
        return -1

    cdef int took(self, int64_t k, int i) except -1:
        """Variant i (of ``variants``) took step k: noted, and moved first."""
        path_note(&self.path, k, (<StepVariant>self.variants[i]).serial)
        return self.promote(i)

    # -- plain and tangent steps ----------------------------------------------

    cdef int try_forward(self, StepVariant v, double* z, double* zt) except -1:
        """Step z (and its tangents zt, unless NULL) with variant v: 0, or 1
        when the variant leaves its path at z (z unchanged)."""
        cdef Replay r = self.seeded_replay(v) if zt != NULL else self.replay_of(v)
        cdef Sweep* s = &r.s
        cdef int64_t n = self.size, n_ops = v.tape.n_ops, units = v.tape.work_units
        cdef int rc
        r.context.begin(&r.s, TANGENTS if zt != NULL else VALUES, s.p if zt != NULL else 0)
        if r.heavy:
            with nogil:
                rc = step_sweep(s, v.x0, v.out, n_ops, units, z, zt, n)
        else:
            rc = step_sweep(s, v.x0, v.out, n_ops, units, z, zt, n)
        return rc

    cdef int64_t run_released(self, double* z, double* zt, int64_t k, int64_t start) except -1:
        """Up to k steps (from step index ``start``) with the variant used
        last, the GIL released over the whole run (so threads replaying
        loops run in parallel) when its tape calls no Python (no CALLBACK
        ops, or only ones with compiled rules in a plain run); returns the
        steps taken: fewer when the variant leaves its path or the step path
        says another variant took the next step, 0 for a tape with Python
        rules."""
        self.first_left = False
        if k <= 0 or not self.variants:
            return 0
        cdef StepVariant v = <StepVariant>self.variants[0]
        cdef int64_t j
        for j in range(k):              # up to the first step another variant took before
            if path_serial(&self.path, start + j) not in (0, v.serial):
                k = j
                break
        if k == 0:
            return 0
        cdef bint tangents = zt != NULL
        if len(v.tape._callbacks) and tangents:      # (tangent rules are Python)
            return 0
        cdef Replay r = self.seeded_replay(v) if tangents else self.replay_of(v)
        cdef Sweep* s = &r.s
        cdef int64_t n = self.size, done = 0, n_ops = v.tape.n_ops
        cdef int64_t units = v.tape.work_units
        cdef int x0 = v.x0, out = v.out
        cdef int rc = 0
        r.context.begin(&r.s, TANGENTS if tangents else VALUES, s.p if tangents else 0)
        if r.context.n_python:
            return 0
        with nogil:
            while done < k:
                rc = step_sweep(s, x0, out, n_ops, units, z, zt, n)
                if rc:
                    break
                done += 1
        path_room(&self.path, start + done)
        if done and v.serial:
            memset(self.path.serial + start, v.serial, <size_t>done)
        if rc:
            self.misses += 1            # step() then tries the others only
            self.first_left = True
        return done

    cdef int step(self, double* z, double* zt, int64_t k=-1, bint first_left=False) except -1:
        """Step k (-1: not known) of the state (and tangents), with whichever
        variant holds: first the one that took it before; never the first
        of ``variants`` when ``first_left`` (it just left its path at z)."""
        cdef int i, h = self.hinted(k)
        if h >= 0 and not (first_left and h == 0):
            if not self.try_forward(<StepVariant>self.variants[h], z, zt):
                return self.took(k, h)
            self.misses += 1
        for i in range(len(self.variants)):
            if i != h and not (first_left and i == 0):
                if not self.try_forward(<StepVariant>self.variants[i], z, zt):
                    return self.took(k, i)
                self.misses += 1
        self.record(z)
        if self.try_forward(<StepVariant>self.variants[0], z, zt):
            raise RuntimeError("adsim: a step recorded at this state leaves its own path")
        return self.took(k, 0)

    cdef int decide(self, double* z) except -1:
        """A condition's outcome at z (condition tapes), recorded anew when
        no variant follows its path there."""
        cdef int i
        cdef StepVariant v
        cdef Replay r
        cdef int rc
        if self.tapes.python_only:        # a condition that could not be recorded
            return 1 if self.tapes.evaluate(copy_out(z, 0, self.size), self.inputs) else 0
        for i in range(len(self.variants)):
            v = <StepVariant>self.variants[i]
            r = self.replay_of(v)
            copy_doubles(vptr(&r.s, v.x0), z, self.size)
            r.context.begin(&r.s, VALUES, 0)
            rc = forward_sweep(&r.s, v.tape.n_ops, False, False)
            if not rc:
                self.promote(i)
                return 1 if v.outcome else 0
        self.record(z)
        if self.tapes.python_only:
            return self.decide(z)
        return 1 if (<StepVariant>self.variants[0]).outcome else 0

    # -- turns --------------------------------------------------------------

    cdef int try_turn(self, StepVariant v, double* z, double* zt, double* w,
                      double* wdot) except -1:
        """Reverse one step from z with variant v: the output adjoints w
        (and their tangents wdot) become the state's, the inputs' are summed.
        1 when the variant leaves its path (nothing changed)."""
        cdef Replay r = self.seeded_replay(v) if self.layout == SECOND_ORDER else \
            self.replay_of(v)
        cdef Sweep* s = &r.s
        cdef bint second = self.layout == SECOND_ORDER
        cdef int64_t n = self.size, n_ops = v.tape.n_ops
        cdef int rc
        r.context.begin(&r.s, self.layout, self.dirs)
        with nogil:                 # always: threads reversing loops share the cores
            rc = turn_sweep(s, v.x0, v.out, v.first, n_ops, z, zt, w, wdot, n, second)
        if rc:
            return 1
        return self.took_turn(v, s, w, wdot)

    cdef int took_turn(self, StepVariant v, Sweep* s, double* w, double* wdot) except -1:
        """After a step's adjoint sweep: the state's adjoints (and their
        tangents) to w (wdot), the inputs' added to their sums."""
        cdef Tape t = v.tape
        cdef bint second = self.layout == SECOND_ORDER
        cdef int64_t n = self.size
        cdef int i
        move_doubles(w, aptr(s, v.x0), (1 if second else s.q) * n)
        if second:
            move_doubles(wdot, dptr(s, v.x0), s.p * n)
        for i in range(len(self.inputs)):
            take_sum(self.sums[i], aptr(s, t._input_slots[1 + i]))
            if second:
                take_sum(self.dot_sums[i], dptr(s, t._input_slots[1 + i]))
        check_signals(s, t.work_units * 3)
        return 0

    cdef int turn(self, double* z, double* zt, double* w, double* wdot, int64_t k=-1) except -1:
        """Reverse step k (-1: not known) from z: first with the variant that
        took it before."""
        cdef int i, h = self.hinted(k)
        if h >= 0:
            if not self.try_turn(<StepVariant>self.variants[h], z, zt, w, wdot):
                return self.took(k, h)
            self.misses += 1
        for i in range(len(self.variants)):
            if i != h:
                if not self.try_turn(<StepVariant>self.variants[i], z, zt, w, wdot):
                    return self.took(k, i)
                self.misses += 1
        self.record(z)
        if self.try_turn(<StepVariant>self.variants[0], z, zt, w, wdot):
            raise RuntimeError("adsim: a step recorded at this state leaves its own path")
        return self.took(k, 0)

    # -- kept forward sweeps (_loop_kept.pxi) ------------------------------------

    cdef int step_kept(self, double* z, KeptForwards kept, int64_t index) except -1:
        """Step ``index`` from z as step() takes it, by a keeping forward
        sweep that ``kept`` keeps for the step's turn when it has room."""
        cdef int i, h = self.hinted(index)
        if h >= 0:
            if not self.try_kept(<StepVariant>self.variants[h], z, kept, index):
                return self.took(index, h)
            self.misses += 1
        for i in range(len(self.variants)):
            if i != h:
                if not self.try_kept(<StepVariant>self.variants[i], z, kept, index):
                    return self.took(index, i)
                self.misses += 1
        self.record(z)
        if self.try_kept(<StepVariant>self.variants[0], z, kept, index):
            raise RuntimeError("adsim: a step recorded at this state leaves its own path")
        return self.took(index, 0)

    cdef int try_kept(self, StepVariant v, double* z, KeptForwards kept,
                      int64_t index) except -1:
        """try_forward, by a keeping sweep kept in ``kept`` when it wants it."""
        cdef Tape t = v.tape
        cdef Replay r
        cdef Sweep* s
        cdef int rc
        r = self.replay_of(v) if kept.wants(index, t) else None
        if r is None or v.first != t.n_ops:
            # not kept, nor any later step; nor a tape whose final run fuses
            # its forward and reverse sweeps (a turn's own keeping sweep does)
            kept.stopped = True
            return self.try_forward(v, z, NULL)
        s = &r.s
        copy_doubles(vptr(s, v.x0), z, self.size)
        r.context.begin(&r.s, self.layout, self.dirs)
        s.stack.top = 0
        if r.heavy:
            with nogil:
                rc = forward_sweep(s, t.n_ops, True, False)
        else:
            rc = forward_sweep(s, t.n_ops, True, False)
        if not rc:
            copy_doubles(z, vptr(s, v.out), self.size)
            kept.add(t, s)
        s.stack.top = 0
        check_signals(s, t.work_units)
        return 1 if rc else 0

    cdef int turn_kept(self, KeptForwards kept, int64_t index, double* w) except -1:
        """Reverse kept step ``index``: its adjoint sweep alone, from what its
        keeping forward sweep left (first-order sweeps only)."""
        cdef Tape t = kept.tape_of(index)
        cdef StepVariant v = None, u
        cdef Replay r
        cdef Sweep* s
        for u in self.variants:
            if u.tape is t:
                v = u
                break
        cdef bint listed = v is not None
        if not listed:                  # dropped since: a Replay for this turn only
            v = self.new_variant(t)
        r = self.replay_of(v)
        s = &r.s
        kept.restore(index, s)
        r.context.begin(&r.s, self.layout, self.dirs)
        memcpy(aptr(s, v.out), w, <size_t>(s.q * self.size) * sizeof(double))
        with nogil:
            reverse_sweep(s, t.n_ops, False)
        self.took_turn(v, s, w, NULL)
        if not listed:
            self.release(v)
        return 0


cdef void drop_buffers(Replay r) noexcept:
    """Free an idle Replay's own work buffer and value stack (a sweep that
    takes it again allocates them, or lends it shared ones)."""
    free(r.work)
    free(r.stack.data)
    r.work, r.work_cap, r.zero_lo, r.zero_hi = NULL, 0, 0, 0
    r.stack.data, r.stack.cap, r.stack.top = NULL, 0, 0


cdef void detach(Replay r) noexcept:
    """Give a Replay its own (empty) buffers back before it returns to the
    pool: the shared ones stay with the LoopSteps."""
    r.work, r.work_cap, r.zero_lo, r.zero_hi, r.work_lent = NULL, 0, 0, 0, False
    r.s.stack = &r.stack
    r.s.tan = r.s.adj = r.s.adot = NULL


def park_arena(Tape t):
    """Give the pages of a step tape's value arena back to the system and
    keep the tape (a variant a memory budget does not hold: replaying it
    again needs fresh pages, not a recording). Its idle Replays go with
    them. False, and nothing changes, while the Replay that borrows the
    arena is in use (another thread's sweep)."""
    cdef Py_ssize_t i
    cdef bint idle = not t.arena_lent
    for i in range(t.n_idle):
        if (<Replay>t._pool[i]).val == t.val:
            idle = True
    if not idle or t.recording:
        return False
    t._pool = []
    t.n_idle = 0
    t.arena_lent = False
    free(t.val)
    t.val = NULL                        # (the tape's next Replay allocates it again: new_replay)
    t.arena_cap = 0
    return True


def drop_idle_buffers(Tape t):
    """Free the work buffers and value stacks of the tape's idle Replays
    (a step tape just measured: the sweeps of a loop lend its Replays shared
    ones, so that a variant not replaying holds its tape only)."""
    cdef int i
    for i in range(t.n_idle):
        drop_buffers(<Replay>t._pool[i])


cdef bint same_items(list a, object b):
    """Do the lists hold the same objects in the same order?"""
    cdef Py_ssize_t i
    if len(a) != len(b):
        return False
    for i in range(len(a)):
        if a[i] is not b[i]:
            return False
    return True


cdef void take_sum(cnp.ndarray total, double* part) noexcept:
    """sum_into the array ``total``."""
    sum_into(<double*>cnp.PyArray_DATA(total), part, cnp.PyArray_SIZE(total))


cdef object in_place(object a, int64_t size, str what):
    """``a`` if the turns may update it in place: C-ordered float64 of ``size`` elements."""
    if not (is_float64_array(a) and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_SIZE(<cnp.ndarray>a) == size and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>a)):
        raise ValueError(f"adsim: {what} must be a writable C-ordered float64 array of {size} "
                         f"elements")
    return a


cdef str action_repr(int kind, int64_t arg):
    if kind == ACT_ADVANCE:
        return f"Advance(steps={arg})"
    if kind == ACT_TAKESHOT:
        return f"TakeShot(index={arg})"
    if kind == ACT_RESTORE:
        return f"Restore(index={arg})"
    return "FirstTurn()" if kind == ACT_FIRSTTURN else "YouTurn()"


cdef class LoopRun:
    """The state of one sweep through a checkpointed loop: the current state
    (with its tangents in second-order sweeps), the snapshots, the adjoints,
    and the position in the schedule. Slots below ``memory_slots`` are kept
    here; the others on ``disk`` (a DiskStore, slot i as its slot i -
    memory_slots), called from here."""
    cdef LoopSteps steps
    cdef int64_t size
    cdef int64_t width              # doubles of a state with its tangents
    cdef double* z                  # current state, then its p tangents
    cdef bint tangents
    cdef readonly int64_t n_steps
    cdef readonly int64_t position  # steps position .. n_steps-1 are reversed
    cdef readonly int64_t current   # index of the current state; -1: none (a turn spent it)
    cdef object w_arr               # adjoints of the current output (updated in place)
    cdef object wdot_arr
    cdef double* w
    cdef double* wdot
    cdef double** shots             # memory snapshots by slot (NULL: never taken)
    cdef int64_t* shot_at           # their state index, -1 when empty
    cdef int64_t shot_cap
    cdef readonly int64_t n_slots
    cdef int64_t memory_slots
    cdef object disk
    cdef dict disk_at               # state index of each disk snapshot, by slot
    cdef int64_t number             # actions executed
    cdef int held                   # a turn held back by execute(until_turn=True)
    cdef readonly int64_t forward_steps
    cdef readonly int64_t taped_steps
    cdef object report              # report(done, total) after turns, or None
    cdef int64_t every              # ... every this many turns (and at the last)
    cdef LoopOutputs outputs        # states at chosen step counts (save_at), or None
    cdef KeptForwards kept          # kept forward sweeps of the first steps, or None

    def __cinit__(self, LoopSteps steps, int64_t n_steps, state, tangents=None,
                  int64_t n_slots=0, int64_t memory_slots=0, disk=None, report=None,
                  int64_t every=1):
        self.steps = steps
        self.size = steps.size
        self.tangents = tangents is not None
        self.width = self.size * (1 + (steps.dirs if self.tangents else 0))
        self.z = new_state(self.width)
        self.set_state(state, tangents)
        self.n_steps = self.position = n_steps
        self.n_slots = n_slots
        self.memory_slots = memory_slots
        self.disk = disk
        self.disk_at = {}
        self.report = report
        self.every = max(every, 1)
        self.held = ACT_END

    def __dealloc__(self):
        cdef int64_t i
        PyMem_RawFree(self.z)
        if self.shots != NULL:
            for i in range(self.shot_cap):
                PyMem_RawFree(self.shots[i])
        free(self.shots)
        free(self.shot_at)

    def close(self):
        """Free the snapshots and give the Replays back."""
        cdef int64_t i
        if self.shots != NULL:
            for i in range(self.shot_cap):
                PyMem_RawFree(self.shots[i])
                self.shots[i] = NULL
                self.shot_at[i] = -1
        if self.kept is not None:
            self.kept.close()
        if self.n_steps <= MAX_HINTED_STEPS:
            self.steps.keep_path(self.n_steps)
        self.steps.finish()

    def set_adjoints(self, adjoint, adjoint_tangents=None, outputs=None, output_tangents=None):
        """The adjoints of the loop's final state (q, size), or in second-order
        sweeps its adjoint (size) and their tangents (p, size): C-ordered
        float64 arrays that the turns update in place. ``outputs`` (and
        ``output_tangents``) are those of the states of ``set_outputs``, one
        row each, added as the sweep goes back through them."""
        cdef bint second = self.steps.layout == SECOND_ORDER
        cdef int64_t rows = 1 if second else self.steps.dirs
        if self.steps.layout != ADJOINTS and not second:
            raise ValueError("adsim: this sweep reverses no steps")
        self.w_arr = in_place(adjoint, rows * self.size, "the loop output's adjoints")
        self.w = <double*>cnp.PyArray_DATA(<cnp.ndarray>self.w_arr)
        if second:
            self.wdot_arr = in_place(adjoint_tangents, self.steps.dirs * self.size,
                                     "the loop output's adjoint tangents")
            self.wdot = <double*>cnp.PyArray_DATA(<cnp.ndarray>self.wdot_arr)
        if self.outputs is not None:
            if np.shape(outputs) != (self.outputs.k, rows * self.size) or (second and np.shape(
                    output_tangents) != (self.outputs.k, self.steps.dirs * self.size)):
                raise ValueError(f"adsim: adjoints of {self.outputs.k} saved states expected")
            self.outputs.set_adjoints(outputs, output_tangents)

    def set_outputs(self, indices):
        """Copy out the states (and tangents) after ``indices`` steps as the
        first pass goes through them; returns the LoopOutputs, whose
        ``values`` hold them (k, width)."""
        self.outputs = LoopOutputs(indices, self.width)
        if self.current == 0:
            self.outputs.capture(0, self.z)
        return self.outputs

    cdef void add_output_adjoints(self, int64_t index):
        cdef bint second = self.steps.layout == SECOND_ORDER
        if self.outputs is not None:
            self.outputs.add_adjoints(index, self.w, (1 if second else self.steps.dirs) * self.size,
                                      self.wdot, self.steps.dirs * self.size if second else 0)

    def set_report(self, report, int64_t every=1):
        """Call ``report(steps reversed, n_steps)`` after every ``every``-th turn and the last."""
        self.report = report
        self.every = max(every, 1)

    cdef int set_state(self, state, tangents) except -1:
        cdef cnp.ndarray a = as_slot_array(state, self.size, "the loop state")
        memcpy(self.z, cnp.PyArray_DATA(a), <size_t>self.size * sizeof(double))
        if self.tangents:
            a = as_slot_array(tangents, self.width - self.size, "the loop state's tangents")
            memcpy(self.z + self.size, cnp.PyArray_DATA(a),
                   <size_t>(self.width - self.size) * sizeof(double))
        self.current = 0
        return 0

    def state(self):
        """The current state and its tangents (p, size) (None without)."""
        if self.current < 0:
            raise RuntimeError("adsim: no current state")
        return (copy_out(self.z, 0, self.size),
                copy_out(self.z + self.size, self.steps.dirs, self.size) if self.tangents else None)

    def advance(self, int64_t k):
        """Run k steps from the current state (no schedule)."""
        self.run_steps(k)
        self.current += k

    def after(self, int64_t k):
        """The state (and tangents) k steps after the current one, which stays."""
        cdef double* saved = new_state(self.width)
        memcpy(saved, self.z, <size_t>self.width * sizeof(double))
        try:
            self.run_steps(k)
            return self.state()
        finally:
            memcpy(self.z, saved, <size_t>self.width * sizeof(double))
            PyMem_RawFree(saved)

    cdef int run_steps(self, int64_t k) except -1:
        cdef int64_t i = 0
        cdef double* zt = self.z + self.size if self.tangents else NULL
        cdef bint capture = self.outputs is not None and self.outputs.capturing
        cdef int64_t run, done
        while i < k:
            run = k - i                 # runs of the last variant without the GIL,
            if capture:                 # up to the next state to capture
                run = min(run, self.outputs.next_at(self.current + i + 1) - self.current - i)
            done = self.steps.run_released(self.z, zt, run, self.current + i)
            if done < run:              # left its path, or Python rules: one step as it comes
                self.steps.step(self.z, zt, self.current + i + done, self.steps.first_left)
                done += 1
            i += done
            if capture:
                self.outputs.capture(self.current + i, self.z)
        return 0

    def run_while(self, LoopSteps condition, OnlineDecisions online=None, object max_steps=None,
                  KeptForwards kept=None):
        """Steps while the condition holds at the current state, taking the
        online schedule's snapshots and keeping the first steps' forward
        sweeps in ``kept`` (if given; adjoint sweeps); returns the number of
        steps."""
        cdef int64_t k = 0, slot, limit = -1 if max_steps is None else max_steps
        cdef double* zt = self.z + self.size if self.tangents else NULL
        cdef int64_t taken
        cdef bint released = True             # steps without the GIL (_loop_while.pxi)
        while True:
            if released:
                taken = released_while(self, condition, online, kept, k,
                                       limit - k if limit >= 0 else -1)
                released = taken >= 0
                k += max(taken, 0)
            if not condition.decide(self.z):
                break
            if limit >= 0 and k >= limit:
                raise LoopDidNotStop(f"adsim: checkpoint_while did not stop within max_steps="
                                     f"{limit} steps; raise max_steps or check cond")
            if online is not None:
                slot = online.forward_step(k)
                if slot >= 0:
                    self.current = k
                    self.take_shot(slot)
            if kept is not None:
                self.steps.step_kept(self.z, kept, k)
            else:
                self.steps.step(self.z, zt, k)
            k += 1
        self.kept = kept
        self.n_steps = self.position = self.current = k
        if k <= MAX_HINTED_STEPS:
            self.steps.keep_path(k)
        return k

    # -- snapshots ------------------------------------------------------------

    cdef int take_shot(self, int64_t slot) except -1:
        cdef int64_t c, old
        if slot >= self.memory_slots:
            self.disk.put(slot - self.memory_slots, (copy_out(self.z, 0, self.width),))
            self.disk_at[slot] = self.current
            return 0
        if slot >= self.shot_cap:
            old = c = self.shot_cap
            self.shots = <double**>grow(self.shots, &c, slot + 1, sizeof(double*))
            self.shot_at = <int64_t*>grow(self.shot_at, &self.shot_cap, slot + 1, sizeof(int64_t))
            for c in range(old, self.shot_cap):
                self.shots[c] = NULL
                self.shot_at[c] = -1
        if self.shots[slot] == NULL:
            self.shots[slot] = new_state(self.width)
        memcpy(self.shots[slot], self.z, <size_t>self.width * sizeof(double))
        self.shot_at[slot] = self.current
        return 0

    cdef int64_t restore(self, int64_t slot) except -2:
        """Make snapshot ``slot`` current; its state index, or -1 when empty."""
        cdef cnp.ndarray a
        if slot >= self.memory_slots:
            if slot not in self.disk_at:
                return -1
            got = self.disk.get(slot - self.memory_slots)
            a = as_slot_array(got[0], self.width, "a snapshot read from disk")
            memcpy(self.z, cnp.PyArray_DATA(a), <size_t>self.width * sizeof(double))
            return self.disk_at[slot]
        if slot >= self.shot_cap or self.shot_at[slot] < 0:
            return -1
        memcpy(self.z, self.shots[slot], <size_t>self.width * sizeof(double))
        return self.shot_at[slot]

    # -- schedules ------------------------------------------------------------

    def execute(self, Actions actions, bint until_turn=False):
        """Execute ``actions``; with ``until_turn`` stop before the first turn
        (a later call with the same actions resumes there). Returns whether
        it stopped before a turn. Actions that would reverse the wrong steps
        raise (a schedule of the user's own is checked as it runs). Runs of
        actions go without the GIL where the step variants allow
        (_loop_reverse.pxi)."""
        cdef int kind
        cdef int64_t arg = 0
        cdef TurnTable table = None
        cdef ActionBatch batch
        batch.n = batch.at = 0
        if not until_turn and self.held == ACT_END and kept_reversal(self):
            self.add_output_adjoints(0)     # (every step kept: no schedule)
            return False
        if not until_turn and self.steps.layout in (ADJOINTS, SECOND_ORDER):
            table = turn_table(self.steps)
        while True:
            if self.held != ACT_END:
                kind, self.held = self.held, ACT_END
            elif table is not None and table.ready:
                if batch.at == batch.n:
                    fill_batch(actions, &batch)
                    if batch.n == 0:
                        break
                try:
                    with nogil:
                        released_actions(self, table, &batch, &self.steps.path,
                                         &self.steps.misses, self.report is not None)
                finally:
                    table.give_back(self.steps)
                if batch.at == batch.n:
                    continue
                kind, arg = batch.kind[batch.at], batch.arg[batch.at]
                batch.at += 1
                self.number += 1
                self.act(kind, arg, False)
                table = turn_table(self.steps)      # (a step recorded: the variants changed)
                continue
            else:
                kind = actions.next(&arg)
                if kind == ACT_END:
                    break
                self.number += 1
            if self.act(kind, arg, until_turn):
                return True
        if self.position != 0 and not until_turn:
            raise ValueError(f"adsim: the schedule ended with steps 0..{self.position - 1} not "
                             f"reversed; check it with adsim.checkpoint.simulate")
        if self.w != NULL:
            self.add_output_adjoints(0)
        return False

    cdef bint act(self, int kind, int64_t arg, bint until_turn) except -1:
        """One action of the schedule, with the GIL; True when ``until_turn``
        holds it back (a turn)."""
        cdef int64_t limit, at
        cdef double* zt = self.z + self.size if self.tangents else NULL
        cdef int64_t total = self.n_steps
        if kind == ACT_ADVANCE:
            limit = self.position - 1 if self.position < total else total
            if self.current < 0 or not 1 <= arg <= limit - self.current:
                self.illegal(kind, arg)
            self.run_steps(arg)
            self.current += arg
            self.forward_steps += arg
        elif kind == ACT_TAKESHOT:
            if self.current < 0 or not 0 <= arg < self.n_slots:
                self.illegal(kind, arg)
            self.take_shot(arg)
        elif kind == ACT_RESTORE:
            at = self.restore(arg) if 0 <= arg < self.n_slots else -1
            if at < 0:
                self.illegal(kind, arg, "the slot holds no snapshot")
            self.current = at
        else:
            if self.current != self.position - 1 or \
                    (kind == ACT_FIRSTTURN) != (self.position == total):
                self.illegal(kind, arg)
            if until_turn:
                self.held = kind
                return True
            if self.w == NULL:
                raise ValueError("adsim: set_adjoints before reversing steps")
            if self.outputs is not None:      # every state was passed: no more captures
                self.outputs.capturing = False
                self.add_output_adjoints(self.position)
            if self.kept is not None and self.kept.tape_of(self.position - 1) is not None:
                self.steps.turn_kept(self.kept, self.position - 1, self.w)
            else:
                self.steps.turn(self.z, zt, self.w, self.wdot, self.position - 1)
            self.position = self.current
            self.current = -1
            self.taped_steps += 1
            if self.report is not None and ((total - self.position) % self.every == 0
                                            or self.position == 0):
                self.report(total - self.position, total)
        return False

    cdef int illegal(self, int kind, int64_t arg, str why=None) except -1:
        if why is None:
            why = "no current state (a turn spent it; Restore first)" if self.current < 0 else \
                f"the current state is {self.current}"
        raise ValueError(f"adsim: schedule action {self.number - 1} ({action_repr(kind, arg)}) is "
                         f"illegal: {why}, and steps {self.position}.. are reversed; check the "
                         f"schedule with adsim.checkpoint.simulate")
