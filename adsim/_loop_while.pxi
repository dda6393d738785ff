# A while loop's forward pass without the GIL.
#
# LoopRun.run_while decides the condition and takes each step with the GIL
# held between sweeps, and a step that does not follow the variant tried
# first is tried again with the next: one release of the GIL per variant
# tried. A stiff solve_ivp (Radau, BDF) takes its steps along many paths
# (Newton iterations, rejected steps, order changes), so a replay released
# and took back the GIL hundreds of times, and two threads replaying one
# tape waited on each other at every one. When neither the condition's
# variants nor the step's run Python, released_while runs the condition
# sweeps, the online schedule's snapshot decisions and memory snapshots,
# the search for the variant that follows its path, and the step itself
# (kept for its turn, as KeptForwards keeps it, while it has room), step
# after step, in one release. It stops at the end of the loop and at the
# step limit, and where a state follows no recorded variant: the executor
# then takes that step under the GIL (recording a variant) and run_while
# calls again. Snapshots on disk, and the first use of a slot beyond the
# snapshot table's room, take the GIL for their call. Everything runs in
# the order run_while runs it, so the results, the snapshots and the steps
# kept are the same; the variants are tried in its order, the one that held
# moved to the front, and the Python list takes that order after.


ctypedef struct ReadyVariant:       # a variant's Replay, set up for sweeps without the GIL
    Sweep* s
    int64_t n_ops
    int64_t first                   # where a reversal's forward sweep stops (fused final run)
    int64_t arena                   # doubles of its value arena
    int64_t units                   # its work, for the Ctrl-C checks
    int x0                          # the state's slot
    int out                         # the result's slot
    bint outcome                    # condition tapes: the outcome recorded
    bint callbacks                  # its tape has CALLBACK ops (compiled ones): never kept
    Py_ssize_t index                # its place in LoopSteps.variants when made ready
    int serial                      # its StepVariant.serial (the steps it takes are noted)


ctypedef struct KeptHere:           # steps kept without the GIL, for KeptForwards' lists
    Py_ssize_t* index               # per step: its variant's index in the ready table
    intptr_t* table                 # per step: the fused table its sweep had
    int64_t n
    int64_t cap


cdef bint made_ready(LoopSteps steps, ReadyVariant* ready) except -1:
    """Fill ``ready`` (room for every variant) with the variants' Replays;
    False when some variant runs Python rules (or there is none), whose
    sweeps need the GIL."""
    cdef StepVariant v
    cdef Replay r
    cdef Py_ssize_t i
    if not steps.variants:
        return False
    for i in range(len(steps.variants)):
        v = <StepVariant>steps.variants[i]
        r = steps.replay_of(v)
        r.context.begin(&r.s, VALUES, 0)
        if r.context.n_python:
            return False
        ready[i].s = &r.s
        ready[i].n_ops = v.tape.n_ops
        ready[i].first = v.first
        ready[i].arena = v.tape.arena_size
        ready[i].units = v.tape.work_units
        ready[i].x0 = v.x0
        ready[i].out = v.out
        ready[i].outcome = v.outcome
        ready[i].callbacks = len(v.tape._callbacks) > 0
        ready[i].index = i
        ready[i].serial = v.serial
    return True


cdef inline void to_front(ReadyVariant* ready, int i) noexcept nogil:
    cdef ReadyVariant held = ready[i]
    if i:
        memmove(ready + 1, ready, <size_t>i * sizeof(ReadyVariant))
        ready[0] = held


cdef inline void hinted_first(ReadyVariant* ready, int count, int serial) noexcept nogil:
    """The variant of serial ``serial`` (the one the loop's last sweep took
    here: StepPath) to the front, to be tried first."""
    cdef int i
    if serial:
        for i in range(1, count):
            if ready[i].serial == serial:
                to_front(ready, i)
                return


cdef int first_on_path(ReadyVariant* ready, int count, double* z, int64_t n) except -2 nogil:
    """The first variant whose plain sweep from state z follows its
    recorded path (moved to the front), as its place before (the number of
    variants that left their path first), or -1 when none does
    (LoopSteps.decide: the conditions)."""
    cdef int i
    for i in range(count):
        copy_doubles(vptr(ready[i].s, ready[i].x0), z, n)
        if forward_sweep(ready[i].s, ready[i].n_ops, False, False) == 0:
            to_front(ready, i)
            return i
    return -1


cdef int step_on_path(ReadyVariant* step, int count, double* z, int64_t n) except -2 nogil:
    """Step z by the first variant that follows its recorded path (moved to
    the front), as first_on_path places it; -1 (z unchanged) when none does."""
    cdef int i
    for i in range(count):
        if step_sweep(step[i].s, step[i].x0, step[i].out, step[i].n_ops, step[i].units, z, NULL,
                      n) == 0:
            to_front(step, i)
            return i
    return -1


cdef int keep_block(KeptForwards kept, const ReadyVariant* v, Sweep* s,
                    KeptHere* here) except -1 nogil:
    """KeptForwards.add without the GIL: the step's tape goes to its list later."""
    cdef int64_t top = s.stack.top, c
    cdef int64_t size = (v.arena + top) * <int64_t>sizeof(double)
    cdef double* block
    cdef void* p
    if kept.bytes + size > kept.allowance:
        kept.stopped = True
        return 0
    block = <double*>PyMem_RawMalloc(<size_t>max(size, 1))
    if block == NULL:
        kept.stopped = True
        return 0
    memcpy(block, s.val, <size_t>v.arena * sizeof(double))
    memcpy(block + v.arena, s.stack.data, <size_t>top * sizeof(double))
    if kept.n == kept.cap:
        c = kept.cap
        p = grow_to(kept.blocks, &c, kept.n + 1, sizeof(double*))
        if p == NULL:
            PyMem_RawFree(block)
            return no_memory("kept forward sweeps", (kept.n + 1) * 8)
        kept.blocks = <double**>p
        p = grow_to(kept.tops, &kept.cap, kept.n + 1, sizeof(int64_t))
        if p == NULL:
            PyMem_RawFree(block)
            return no_memory("kept forward sweeps", (kept.n + 1) * 8)
        kept.tops = <int64_t*>p
    if here.n == here.cap:
        c = here.cap
        p = grow_to(here.index, &c, here.n + 1, sizeof(Py_ssize_t))
        if p != NULL:
            here.index = <Py_ssize_t*>p
            p = grow_to(here.table, &here.cap, here.n + 1, sizeof(intptr_t))
        if p == NULL:
            PyMem_RawFree(block)
            return no_memory("kept forward sweeps", (here.n + 1) * 16)
        here.table = <intptr_t*>p
    kept.blocks[kept.n] = block
    kept.tops[kept.n] = top
    here.index[here.n] = v.index
    here.table[here.n] = <intptr_t>s.fused
    here.n += 1
    kept.n += 1
    kept.kept += 1
    kept.bytes += size
    return 0


cdef int kept_step(ReadyVariant* step, int n_step, double* z, int64_t n, KeptForwards kept,
                   int64_t index, KeptHere* here) except -2 nogil:
    """LoopSteps.step_kept without the GIL: step ``index`` from z, by a
    keeping sweep kept in ``kept`` while it wants it; the place of the
    variant that held (moved to the front), or -1 when no variant follows
    its path (z unchanged)."""
    cdef int i, rc
    cdef Sweep* s
    for i in range(n_step):
        s = step[i].s
        if kept.stopped or index != kept.n or step[i].callbacks or step[i].first != step[i].n_ops \
                or kept.bytes + step[i].arena * <int64_t>sizeof(double) > kept.allowance:
            kept.stopped = True            # (KeptForwards.wants; try_kept)
            if step_sweep(s, step[i].x0, step[i].out, step[i].n_ops, step[i].units, z, NULL,
                          n) == 0:
                to_front(step, i)
                return i
            continue
        copy_doubles(vptr(s, step[i].x0), z, n)
        s.stack.top = 0
        rc = forward_sweep(s, step[i].n_ops, True, False)
        if rc == 0:
            copy_doubles(z, vptr(s, step[i].out), n)
            keep_block(kept, &step[i], s, here)
        s.stack.top = 0
        check_signals(s, step[i].units)
        if rc == 0:
            to_front(step, i)
            return i
    return -1


cdef int take_shot_here(LoopRun run, int64_t slot) except -1 nogil:
    """LoopRun.take_shot without the GIL for a memory slot the table has
    room for; with it for the others."""
    cdef double* p
    if slot >= run.memory_slots or slot >= run.shot_cap:
        with gil:
            return run.take_shot(slot)
    if run.shots[slot] == NULL:
        p = <double*>PyMem_RawMalloc(<size_t>max(run.width, 1) * sizeof(double))
        if p == NULL:
            return no_memory("a loop state", 8 * run.width)
        run.shots[slot] = p
    memcpy(run.shots[slot], run.z, <size_t>run.width * sizeof(double))
    run.shot_at[slot] = run.current
    return 0


cdef int64_t steps_while(LoopRun run, ReadyVariant* condition, int n_condition,
                         ReadyVariant* step, int n_step, TurnTable tangent_steps,
                         OnlineDecisions online, KeptForwards kept, KeptHere* here, int64_t k,
                         int64_t limit, bint* stuck, StepPath* path,
                         int64_t* misses) except -1 nogil:
    """run_while's steps from step ``k`` while the condition holds (at most
    ``limit``; no limit when negative), each step's variant noted in
    ``path`` and the variants that left their path first counted in
    ``misses``; with tangents, the steps by ``tangent_steps``
    (_loop_reverse.pxi). ``stuck``: it stopped at a step no variant
    follows, its snapshot taken (the executor takes the step)."""
    cdef int64_t done = 0, slot, n = run.size
    cdef double* z = run.z
    cdef int rc
    while limit < 0 or done < limit:
        if first_on_path(condition, n_condition, z, n) < 0 or not condition[0].outcome:
            break
        if online is not None:
            slot = online.forward_step(k + done)
            if slot >= 0:
                run.current = k + done
                take_shot_here(run, slot)
        if tangent_steps is not None:
            if take_here(tangent_steps, path, misses, k + done, z, z + n, NULL, NULL, n):
                stuck[0] = True
                break
            done += 1
            continue
        hinted_first(step, n_step, path_serial(path, k + done))
        if kept is not None:
            rc = kept_step(step, n_step, z, n, kept, k + done, here)
        else:
            rc = step_on_path(step, n_step, z, n)
        if rc < 0:                      # (the executor's step() counts its tries)
            stuck[0] = True
            break
        misses[0] += rc
        path_note(path, k + done, step[0].serial)      # (the variant that held is first)
        done += 1
    return done


cdef void take_order(LoopSteps steps, ReadyVariant* ready):
    """Reorder the Python list of variants as ``ready`` holds them."""
    cdef list before = steps.variants
    steps.variants = [before[ready[i].index] for i in range(len(before))]


cdef int64_t released_while(LoopRun run, LoopSteps condition, OnlineDecisions online,
                            KeptForwards kept, int64_t k, int64_t limit) except -2:
    """Steps of run_while from step ``k`` without the GIL (see the top of
    the file): the number taken, -1 when a variant runs Python (the caller
    runs the loop as before). ``limit`` < 0: no limit. A state with
    tangents is stepped by a TurnTable (_loop_reverse.pxi)."""
    cdef LoopSteps steps = run.steps
    cdef Py_ssize_t n_condition = len(condition.variants), n_step = len(steps.variants), i
    cdef ReadyVariant* ready
    cdef KeptHere here
    cdef int64_t done = 0
    cdef bint stuck = False
    cdef TurnTable tangent_steps = None
    cdef double* zt = run.z + run.size if run.tangents else NULL
    if condition.tapes.python_only or n_condition == 0 or n_step == 0:
        return -1
    if run.tangents:
        tangent_steps = turn_table(steps)
        if not tangent_steps.ready:
            return -1
    if limit == 0:
        return 0
    ready = <ReadyVariant*>malloc((n_condition + n_step) * sizeof(ReadyVariant))
    if ready == NULL:
        raise MemoryError("adsim: no memory for a while loop's table of variants")
    memset(&here, 0, sizeof(KeptHere))
    try:
        if not (made_ready(condition, ready) and made_ready(steps, ready + n_condition)):
            return -1
        try:
            with nogil:
                done = steps_while(run, ready, <int>n_condition, ready + n_condition,
                                   <int>n_step, tangent_steps, online, kept, &here, k, limit,
                                   &stuck, &steps.path, &steps.misses)
        finally:                        # the kept steps' tapes, in order (tape_of reads them)
            for i in range(here.n):
                kept.tapes.append((<StepVariant>steps.variants[here.index[i]]).tape)
                kept.tables.append(here.table[i])
            if tangent_steps is not None:
                tangent_steps.give_back(steps)
        take_order(condition, ready)
        if tangent_steps is None:
            take_order(steps, ready + n_condition)
    finally:
        free(ready)
        free(here.index)
        free(here.table)
    if stuck:                           # a variant is recorded there, as run_while would
        if kept is not None:
            steps.step_kept(run.z, kept, k + done)
        else:
            steps.step(run.z, zt, k + done)
        done += 1
    return done
