# A while loop's plain forward pass without the GIL.
#
# LoopRun.run_while decides the condition and takes each step with the GIL
# held between sweeps, and a step that does not follow the variant tried
# first is tried again with the next: one release of the GIL per variant
# tried. A stiff solve_ivp (Radau, BDF) takes its steps along many paths
# (Newton iterations, rejected steps, order changes), so a replay released
# and took back the GIL hundreds of times, and two threads replaying one
# tape waited on each other at every one. When neither the condition's
# variants nor the step's run Python, released_while runs the condition
# sweeps, the search for the variant that follows its path and the step
# itself, step after step, in one release. It hands back to run_while (which
# holds the GIL for the rest) when a state follows no recorded variant (one
# is recorded there), when the condition is false, or at the step limit.
# The variants are tried in the order run_while tries them, the one that
# held moved to the front, and the Python list takes the same order after.


ctypedef struct ReadyVariant:       # a variant's Replay, set up for plain sweeps
    Sweep* s
    int64_t n_ops
    int64_t units                   # its work, for the Ctrl-C checks
    int x0                          # the state's slot
    int out                         # the result's slot
    bint outcome                    # condition tapes: the outcome recorded
    Py_ssize_t index                # its place in LoopSteps.variants when made ready


cdef bint made_ready(LoopSteps steps, ReadyVariant* ready) except -1:
    """Fill ``ready`` (room for every variant) with the variants' Replays
    laid out for plain sweeps; False when some variant runs Python rules (or
    there is none), whose sweeps need the GIL."""
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
        ready[i].units = v.tape.work_units
        ready[i].x0 = v.x0
        ready[i].out = v.out
        ready[i].outcome = v.outcome
        ready[i].index = i
    return True


cdef inline void to_front(ReadyVariant* ready, int i) noexcept nogil:
    cdef ReadyVariant held = ready[i]
    if i:
        memmove(ready + 1, ready, <size_t>i * sizeof(ReadyVariant))
        ready[0] = held


cdef int first_on_path(ReadyVariant* ready, int count, double* z, int64_t n) except -2 nogil:
    """The first variant whose plain sweep from state z follows its
    recorded path (moved to the front: 0), or -1 when none does."""
    cdef int i, rc
    for i in range(count):
        copy_doubles(vptr(ready[i].s, ready[i].x0), z, n)
        rc = forward_sweep(ready[i].s, ready[i].n_ops, False, False)
        if rc == 0:
            to_front(ready, i)
            return 0
    return -1


cdef int64_t steps_while(ReadyVariant* condition, int n_condition, ReadyVariant* step,
                         int n_step, double* z, int64_t n, int64_t limit) except -1 nogil:
    """Steps of z while the condition holds (at most ``limit``; no limit
    when negative); stops early where no variant follows its path."""
    cdef int64_t done = 0
    while limit < 0 or done < limit:
        if first_on_path(condition, n_condition, z, n) < 0 or not condition[0].outcome:
            break
        if first_on_path(step, n_step, z, n) < 0:
            break
        copy_doubles(z, vptr(step[0].s, step[0].out), n)
        done += 1
        check_signals(step[0].s, step[0].units)
    return done


cdef void take_order(LoopSteps steps, ReadyVariant* ready):
    """Reorder the Python list of variants as ``ready`` holds them."""
    cdef list before = steps.variants
    steps.variants = [before[ready[i].index] for i in range(len(before))]


cdef int64_t released_while(LoopSteps steps, LoopSteps condition, double* z,
                            int64_t limit) except -1:
    """Steps of a while loop's plain forward pass from z without the GIL
    (see the top of the file): the number taken, 0 when a variant runs
    Python. ``limit`` < 0: no limit."""
    cdef Py_ssize_t n_condition = len(condition.variants), n_step = len(steps.variants)
    cdef ReadyVariant* ready
    cdef int64_t done
    if condition.tapes.python_only or n_condition == 0 or n_step == 0 or limit == 0:
        return 0
    ready = <ReadyVariant*>malloc((n_condition + n_step) * sizeof(ReadyVariant))
    if ready == NULL:
        raise MemoryError("adsim: no memory for a while loop's table of variants")
    try:
        if not (made_ready(condition, ready) and made_ready(steps, ready + n_condition)):
            return 0
        with nogil:
            done = steps_while(ready, <int>n_condition, ready + n_condition, <int>n_step,
                               z, steps.size, limit)
        take_order(condition, ready)
        take_order(steps, ready + n_condition)
        return done
    finally:
        free(ready)
