# A loop's reversal without the GIL.
#
# LoopRun.execute runs a schedule's actions with the GIL held between the
# sweeps: one release and reacquisition per step and per turn. A solve_ivp
# loop reverses dozens of small steps (a few microseconds each), so two
# threads replaying one tape waited on each other at every step, and the
# handovers cost more CPU than the sweeps. Two paths here take whole runs of
# actions in one release:
#
# * kept_reversal: for a gradient, run_while keeps the keeping forward sweep
#   of each step (_loop_kept.pxi) while the blocks fit. When every step was
#   kept, no turn needs a state: each restores its step's block and runs the
#   adjoint sweep alone. The online schedule's Advance and Restore actions
#   would only recompute states no turn reads, so the schedule is skipped
#   and the turns taken from the last step down.
# * released_actions: any other reversal, when the step variants' sweeps run
#   no Python. Actions are fetched in batches under the GIL (the schedules
#   are C), then run without it: Advance by the variant that took each step
#   before (then the others, in the executor's order), memory snapshots, and
#   turns. An action that needs Python (a disk snapshot, a state no variant
#   follows, which records one, the first pass's outputs, a kept step) stops
#   the batch; execute() runs it under the GIL, as before, and goes on.
#
# The turns, the variants tried and their order, and the arithmetic are
# those of execute()'s own path, so results are bitwise the same; only the
# forward steps kept_reversal leaves out are gone.


ctypedef struct TurnVariant:        # a step variant, set up for sweeps without the GIL
    Sweep* s
    int64_t n_ops
    int64_t first                   # where a reversal's forward sweep stops (fused final run)
    int64_t arena                   # doubles of its value arena (a kept block starts with it)
    int64_t units                   # its work, for the Ctrl-C checks
    int x0                          # the state's slot
    int out                         # the result's slot
    int serial                      # its StepVariant.serial (StepPath)
    bint shared                     # on the LoopSteps' shared work buffer
    Py_ssize_t index                # its place in LoopSteps.variants when made ready
    double** inputs                 # the loop inputs' adjoints in its work buffer
    double** input_dots             # ... their tangents (second order)
    double** seeds                  # ... the inputs' tangents (second order)


cdef int restore_block(KeptForwards kept, int64_t index, Sweep* s, int64_t arena) except -1 nogil:
    """Put step ``index``'s kept arena and pushed values back into ``s`` (a
    sweep of its tape) and free its block (KeptForwards.restore, whose
    fused-table check the caller made)."""
    cdef int64_t top = kept.tops[index]
    cdef double* block = kept.blocks[index]
    s.stack.top = 0
    stack_reserve(s.stack, top)
    memcpy(s.val, block, <size_t>arena * sizeof(double))
    memcpy(s.stack.data, block + arena, <size_t>top * sizeof(double))
    s.stack.top = top
    if top > s.stack.peak:
        s.stack.peak = top
    PyMem_RawFree(block)
    kept.blocks[index] = NULL
    kept.bytes -= (arena + top) * <int64_t>sizeof(double)
    return 0


cdef class TurnTable:
    """The step variants of a LoopSteps set up for sweeps without the GIL
    (TurnVariant each, in the order of ``variants``), with the sums the turns
    add the inputs' adjoints to and the inputs' tangents second-order turns
    seed. ``ready`` is False when some variant's sweeps need the GIL (Python
    rules; in second-order sweeps any CALLBACK op, whose tangent rules are
    Python)."""
    cdef TurnVariant* v
    cdef int count
    cdef int n_inputs
    cdef bint second
    cdef bint ready
    cdef double** pointers          # the variants' input pointers, 3 * n_inputs each
    cdef double** sums              # per input: where its adjoints are summed (and tangents)
    cdef double** dot_sums
    cdef int64_t* sizes             # per input: doubles of its adjoints' sum
    cdef int64_t* dot_sizes
    cdef double** seed_values       # per input: its tangents (NULL: zero)
    cdef int64_t* seed_sizes        # ... and their doubles
    cdef list held                  # the arrays seed_values point into
    cdef Sweep* seeded              # the shared variant whose input tangents the buffer holds

    def __dealloc__(self):
        free(self.v)
        free(self.pointers)
        free(self.sums)
        free(self.dot_sums)
        free(self.sizes)
        free(self.dot_sizes)
        free(self.seed_values)
        free(self.seed_sizes)

    cdef int fill(self, LoopSteps steps) except -1:
        cdef Py_ssize_t n_var = len(steps.variants), i
        cdef int k, n_in = len(steps.inputs)
        cdef StepVariant u
        cdef Replay r
        cdef Tape t
        cdef cnp.ndarray seed
        cdef bint tangents = steps.layout == TANGENTS or steps.layout == SECOND_ORDER
        cdef bint adjoints = steps.layout == ADJOINTS or steps.layout == SECOND_ORDER
        self.second = steps.layout == SECOND_ORDER
        self.count = <int>n_var
        self.n_inputs = n_in
        self.ready = False
        self.v = <TurnVariant*>calloc(max(n_var, 1), sizeof(TurnVariant))
        self.pointers = <double**>calloc(max(3 * n_var * n_in, 1), sizeof(double*))
        self.sums = <double**>calloc(max(n_in, 1), sizeof(double*))
        self.dot_sums = <double**>calloc(max(n_in, 1), sizeof(double*))
        self.sizes = <int64_t*>calloc(max(n_in, 1), sizeof(int64_t))
        self.dot_sizes = <int64_t*>calloc(max(n_in, 1), sizeof(int64_t))
        self.seed_values = <double**>calloc(max(n_in, 1), sizeof(double*))
        self.seed_sizes = <int64_t*>calloc(max(n_in, 1), sizeof(int64_t))
        self.held = []
        if self.v == NULL or self.pointers == NULL or self.sums == NULL or \
                self.dot_sums == NULL or self.sizes == NULL or self.dot_sizes == NULL or \
                self.seed_values == NULL or self.seed_sizes == NULL:
            raise MemoryError("adsim: no memory for a loop reversal's table of variants")
        for k in range(n_in):
            if adjoints:
                self.sums[k] = <double*>cnp.PyArray_DATA(<cnp.ndarray>steps.sums[k])
                self.sizes[k] = cnp.PyArray_SIZE(<cnp.ndarray>steps.sums[k])
            if self.second:
                self.dot_sums[k] = <double*>cnp.PyArray_DATA(<cnp.ndarray>steps.dot_sums[k])
                self.dot_sizes[k] = cnp.PyArray_SIZE(<cnp.ndarray>steps.dot_sums[k])
            if tangents:
                self.seed_sizes[k] = steps.dirs * cnp.PyArray_SIZE(<cnp.ndarray>steps.inputs[k])
                if steps.in_dots is not None and steps.in_dots[k] is not None:
                    seed = as_slot_array(steps.in_dots[k], self.seed_sizes[k],
                                         "a loop input's tangents")
                    self.held.append(seed)
                    self.seed_values[k] = <double*>cnp.PyArray_DATA(seed)
        for i in range(n_var):
            u = <StepVariant>steps.variants[i]
            t = u.tape
            if tangents and len(t._callbacks):
                return 0
            r = steps.seeded_replay(u) if tangents else steps.replay_of(u)
            r.context.begin(&r.s, steps.layout, steps.dirs)
            if r.context.n_python:
                return 0
            self.v[i].s = &r.s
            self.v[i].n_ops = t.n_ops
            self.v[i].first = u.first
            self.v[i].arena = t.arena_size
            self.v[i].units = t.work_units
            self.v[i].x0 = u.x0
            self.v[i].out = u.out
            self.v[i].serial = u.serial
            self.v[i].shared = u.shared
            self.v[i].index = i
            self.v[i].inputs = self.pointers + 3 * i * n_in
            self.v[i].input_dots = self.v[i].inputs + n_in
            self.v[i].seeds = self.v[i].inputs + 2 * n_in
            for k in range(n_in):
                self.v[i].inputs[k] = aptr(&r.s, t._input_slots[1 + k])
                if self.second:
                    self.v[i].input_dots[k] = dptr(&r.s, t._input_slots[1 + k])
                if tangents:
                    self.v[i].seeds[k] = tptr(&r.s, t._input_slots[1 + k])
            if steps.seeded is u:
                self.seeded = &r.s
        self.ready = n_var > 0
        return 0

    cdef int give_back(self, LoopSteps steps) except -1:
        """The variants' order (the one that held moved first) and the
        seeded variant, back to ``steps``."""
        cdef list before = steps.variants
        cdef int i
        steps.variants = [before[self.v[i].index] for i in range(self.count)]
        for i in range(self.count):
            self.v[i].index = i
        steps.seeded = None
        for i in range(self.count):
            if self.v[i].s == self.seeded:
                steps.seeded = <StepVariant>steps.variants[i]
        return 0


cdef TurnTable turn_table(LoopSteps steps):
    cdef TurnTable table = TurnTable.__new__(TurnTable)
    table.fill(steps)
    return table


cdef inline void seed_variant(TurnTable table, TurnVariant* v) noexcept nogil:
    """LoopSteps.seeded_replay without the GIL: the inputs' tangents into a
    shared variant's part of the work buffer, unless it holds them."""
    cdef int k
    if not v.shared or table.seeded == v.s:
        return
    for k in range(table.n_inputs):
        if table.seed_values[k] != NULL:
            memcpy(v.seeds[k], table.seed_values[k], <size_t>table.seed_sizes[k] * sizeof(double))
        else:
            memset(v.seeds[k], 0, <size_t>table.seed_sizes[k] * sizeof(double))
    table.seeded = v.s


cdef inline void took_turn_here(TurnTable table, TurnVariant* v, int64_t n, double* w,
                                double* wdot) noexcept nogil:
    """LoopSteps.took_turn without the GIL."""
    cdef int k
    move_doubles(w, aptr(v.s, v.x0), (1 if table.second else v.s.q) * n)
    if table.second:
        move_doubles(wdot, dptr(v.s, v.x0), v.s.p * n)
    for k in range(table.n_inputs):
        sum_into(table.sums[k], v.inputs[k], table.sizes[k])
        if table.second:
            sum_into(table.dot_sums[k], v.input_dots[k], table.dot_sizes[k])


cdef int try_here(TurnTable table, int i, double* z, double* zt, double* w, double* wdot,
                  int64_t n) except -2 nogil:
    """LoopSteps.try_forward (w NULL) or try_turn without the GIL, with the
    variant in place i: 0, or 1 when it leaves its path (nothing changed)."""
    cdef TurnVariant* v = &table.v[i]
    if zt != NULL:
        seed_variant(table, v)
    if w == NULL:
        return step_sweep(v.s, v.x0, v.out, v.n_ops, v.units, z, zt, n)
    if turn_sweep(v.s, v.x0, v.out, v.first, v.n_ops, z, zt, w, wdot, n, table.second):
        return 1
    took_turn_here(table, v, n, w, wdot)
    check_signals(v.s, v.units * 3)
    return 0


cdef int take_here(TurnTable table, StepPath* path, int64_t* misses, int64_t k, double* z,
                   double* zt, double* w, double* wdot, int64_t n) except -2 nogil:
    """LoopSteps.step (w NULL) or turn without the GIL, for step k: the
    variant that took it before first, then the others in order; the one
    that holds is noted and moved first. 1 when none does (the executor
    records one, with the GIL)."""
    cdef int serial = path_serial(path, k), h = -1, i, j
    cdef TurnVariant held
    if serial:
        for i in range(table.count):
            if table.v[i].serial == serial:
                h = i
                break
    for j in range(-1, table.count):
        if (j < 0 and h < 0) or j == h:
            continue
        i = h if j < 0 else j
        if try_here(table, i, z, zt, w, wdot, n) == 0:
            path_note(path, k, table.v[i].serial)
            held = table.v[i]
            if i:
                memmove(table.v + 1, table.v, <size_t>i * sizeof(TurnVariant))
                table.v[0] = held
            return 0
        misses[0] += 1
    return 1


cdef enum:                          # why released_actions stopped
    BATCH_DONE = 0
    NEEDS_GIL = 1                   # the action at ``at`` runs under the GIL (not started)


ctypedef struct ActionBatch:        # actions fetched under the GIL, run without it
    int kind[64]
    int64_t arg[64]
    int n
    int at                          # the next one to run


cdef int fill_batch(Actions actions, ActionBatch* batch) except -1:
    """The schedule's next actions (up to 64) into ``batch``; none at its end."""
    cdef int64_t arg = 0
    cdef int kind
    batch.n = batch.at = 0
    while batch.n < 64:
        kind = actions.next(&arg)
        if kind == ACT_END:
            break
        batch.kind[batch.n] = kind
        batch.arg[batch.n] = arg
        batch.n += 1
    return 0


cdef int released_actions(LoopRun run, TurnTable table, ActionBatch* batch, StepPath* path,
                          int64_t* misses, bint reporting) except -1 nogil:
    """Run the batch's actions from ``at`` as execute() would (see the top of
    the file); NEEDS_GIL at the first one that needs Python, which an
    Advance stopped part way leaves with the steps still to take."""
    cdef int kind
    cdef int64_t arg, limit, total = run.n_steps, at
    cdef int64_t n = run.size
    cdef double* zt = run.z + n if run.tangents else NULL
    while batch.at < batch.n:
        kind = batch.kind[batch.at]
        arg = batch.arg[batch.at]
        if kind == ACT_ADVANCE:
            limit = run.position - 1 if run.position < total else total
            if run.current < 0 or not 1 <= arg <= limit - run.current or \
                    (run.outputs is not None and run.outputs.capturing):
                return NEEDS_GIL
            while arg:
                if take_here(table, path, misses, run.current, run.z, zt, NULL, NULL, n):
                    batch.arg[batch.at] = arg
                    return NEEDS_GIL
                run.current += 1
                run.forward_steps += 1
                arg -= 1
        elif kind == ACT_TAKESHOT:
            if run.current < 0 or not 0 <= arg < run.n_slots:
                return NEEDS_GIL
            take_shot_here(run, arg)
        elif kind == ACT_RESTORE:
            if not 0 <= arg < run.memory_slots or arg >= run.shot_cap or run.shot_at[arg] < 0:
                return NEEDS_GIL                    # (on disk, or illegal)
            memcpy(run.z, run.shots[arg], <size_t>run.width * sizeof(double))
            run.current = run.shot_at[arg]
        else:
            if run.current != run.position - 1 or \
                    (kind == ACT_FIRSTTURN) != (run.position == total) or run.w == NULL:
                return NEEDS_GIL
            if run.kept is not None and run.kept.n > run.position - 1 and \
                    run.kept.blocks[run.position - 1] != NULL:
                return NEEDS_GIL
            if run.outputs is not None:
                with gil:
                    run.outputs.capturing = False
                    run.add_output_adjoints(run.position)
            if take_here(table, path, misses, run.position - 1, run.z, zt, run.w, run.wdot, n):
                return NEEDS_GIL
            run.position = run.current
            run.current = -1
            run.taped_steps += 1
            if reporting and ((total - run.position) % run.every == 0 or run.position == 0):
                with gil:
                    run.report(total - run.position, total)
        run.number += 1
        batch.at += 1
    return BATCH_DONE


cdef int kept_turns(LoopRun run, KeptForwards kept, LoopOutputs outputs, bint reporting,
                    TurnTable table, const int* which) except -1 nogil:
    """Reverse steps position-1 .. 0, step k by ``table.v[which[k]]`` from
    its kept block: the state's adjoints stay in run.w, the inputs' are
    added to the sums; outputs' adjoints and progress reports (``reporting``)
    as execute() makes them."""
    cdef int64_t k, n = run.size, total = run.n_steps
    cdef TurnVariant* v
    while run.position > 0:
        k = run.position - 1
        if outputs is not None and outputs.pending and outputs.at[outputs.pending - 1] >= run.position:
            with gil:
                run.add_output_adjoints(run.position)
        v = &table.v[which[k]]
        restore_block(kept, k, v.s, v.arena)
        memcpy(aptr(v.s, v.out), run.w, <size_t>(v.s.q * n) * sizeof(double))
        reverse_sweep(v.s, v.n_ops, False)
        took_turn_here(table, v, n, run.w, NULL)
        check_signals(v.s, v.units * 3)
        run.position = k
        run.current = -1
        run.taped_steps += 1
        if reporting and ((total - k) % run.every == 0 or k == 0):
            with gil:
                run.report(total - k, total)
    return 0


cdef bint kept_reversal(LoopRun run) except -1:
    """Reverse every step of a while loop whose first pass kept them all (see
    the top of the file), the schedule unused; False, and nothing done, when
    some step was not kept or a variant's sweeps need the GIL (execute()
    then runs the schedule)."""
    cdef KeptForwards kept = run.kept
    cdef LoopSteps steps = run.steps
    cdef int64_t n_steps = run.n_steps, k
    cdef Py_ssize_t i
    cdef TurnTable table
    cdef int* which = NULL
    cdef dict place = {}
    if kept is None or steps.layout != ADJOINTS or run.w == NULL or n_steps == 0 or \
            kept.n != n_steps or run.position != n_steps or run.current != n_steps or \
            not steps.variants:
        return False
    for k in range(n_steps):
        if kept.blocks[k] == NULL:
            return False
    for i in range(len(steps.variants)):
        place[id((<StepVariant>steps.variants[i]).tape)] = i
    which = <int*>malloc(n_steps * sizeof(int))
    if which == NULL:
        raise MemoryError("adsim: no memory for a loop reversal's table of steps")
    try:
        for k in range(n_steps):
            i = place.get(id(kept.tapes[k]), -1)
            if i < 0:                   # dropped since it was kept: execute() makes its Replay
                return False
            which[k] = <int>i
        table = turn_table(steps)
        if not table.ready:
            return False
        for k in range(n_steps):
            if <intptr_t>table.v[which[k]].s.fused != kept.tables[k]:
                return False            # (fused by another thread since: the schedule's turns raise)
        if run.outputs is not None:     # every state was passed: no more captures
            run.outputs.capturing = False
        try:
            with nogil:
                kept_turns(run, kept, run.outputs, run.report is not None, table, which)
        finally:
            for k in range(run.position, n_steps):
                kept.tapes[k] = None    # (restore_block freed their blocks)
        return True
    finally:
        free(which)
