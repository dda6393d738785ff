# Replays. A Tape is the recorded program, read-only once recording ends; a
# Replay holds what one replay writes: the value arena, the work buffer of
# tangents and adjoints (with the range known to hold zeros) and the value
# stack. Every sweep entry point of Tape runs
#
#     r = replay_setup(tape, xs, layout, dirs)   # a Replay from the tape's pool,
#     try:                                       # buffers laid out, inputs loaded
#         ... sweeps on r.s ...
#     finally:
#         replay_teardown(tape, r)               # back to the pool
#
# so threads replaying one tape never share buffers, and a thread replaying
# again reuses them (no allocation per call). Sweeps whose work is worth it
# run without the GIL (CALLBACK ops take it back for their Python rules), and
# a long one lets Python handle Ctrl-C every few milliseconds.

from cpython.pythread cimport PyThread_get_thread_ident
import threading

cdef enum:
    POOL_MAX = 8                    # idle replays a tape keeps
    GIL_RELEASE_UNITS = 8192        # sweeps estimated below this keep the GIL (releasing
                                    # it costs as much as about 20 elements of work)

cdef unsigned long MAIN_THREAD = threading.main_thread().ident   # only it handles signals


cdef class Replay:
    """Buffers of one replay of a tape (see the top of _replay.pxi). Made and
    kept by the tape; one thread uses it at a time."""

    def __dealloc__(self):
        if self.owns_val:
            free(self.val)
        if not self.work_lent:          # (a lent buffer: its loop may be freed first, by the GC)
            free(self.work)
        free(self.stack.data)
        free(self.own_sizes)
        free(self.own_off)


cdef Replay new_replay(Tape t):
    """A Replay of ``t``: its first borrows the recording arena (no replay
    reads a slot before writing it, but starting from the recorded values
    keeps replays and the recording bitwise alike); later ones, for
    concurrent calls, copy it."""
    cdef Replay r = Replay.__new__(Replay)
    r.context = SweepContext()
    if t.val == NULL:                   # a parked step variant (_loop_run.pxi, park_arena)
        t.val = <double*>calloc(<size_t>max(t.arena_size, 1), sizeof(double))
        if t.val == NULL:
            raise MemoryError(f"adsim: no memory for a replay's values ({8 * t.arena_size} bytes)")
        t.arena_cap = max(t.arena_size, 1)
    if not t.arena_lent:
        r.val = t.val
        t.arena_lent = True
    else:
        r.val = <double*>malloc(<size_t>max(t.arena_size, 1) * sizeof(double))
        if r.val == NULL:
            raise MemoryError(f"adsim: no memory for a replay's values ({8 * t.arena_size} bytes)")
        r.owns_val = True
        memcpy(r.val, t.val, <size_t>t.arena_size * sizeof(double))
    point_sweep(t, r)
    return r


cdef int fusion_tick(Tape t, int layout, int dirs) except -1:
    """Count a replay towards automatic fusion: when the count of its family
    of kernels (the layout, or VECTOR_TANGENTS) runs out, adsim/_fuse/policy.py
    decides (and re-arms the count or not). A tangent replay with p directions
    counts as p replays; adjoints in several directions have no fused kernels."""
    cdef int family = layout, i
    if dirs > 1:
        if layout != TANGENTS:
            return 0
        family = VECTOR_TANGENTS
    if t.fusion_countdown[family] < 0 or not t.chunked:
        return 0
    t.fusion_countdown[family] -= max(dirs, 1)
    if t.fusion_countdown[family] > 0:
        return 0
    t.fusion_countdown[family] = -1     # until the policy re-arms it
    if t._fusion_work() == 0:           # nothing large and elementwise: never
        for i in range(FUSION_FAMILIES):
            t.fusion_countdown[i] = -1
        return 0
    from ._fuse.policy import consider
    consider(t, family)
    return 0


cdef Replay replay_setup(Tape t, object xs, int layout, int dirs):
    """A Replay of ``t`` for one call, from the tape's pool: its sweep laid
    out for ``layout`` with ``dirs`` directions and the inputs ``xs`` loaded.
    Should this fail, the Replay is dropped, not returned."""
    cdef list arrays = input_arrays(t, xs)          # checked before a Replay is taken
    cdef Replay r = replay_taken(t, layout, dirs)
    load_inputs(t, r, arrays)
    return r


cdef Replay replay_setup_on(Tape t, object xs, int layout, int dirs, double* work,
                           int64_t cap):
    """replay_setup on a work buffer lent by the caller, of ``cap`` doubles
    and zero where a sweep accumulates (the step variants of a loop's sweep
    share one, adsim/_loop_run.pxi): the Replay's own work buffer and value
    stack are freed. The caller takes the buffer back (work = NULL) before
    the Replay is given back or dropped; should this fail, it is taken back
    here."""
    cdef list arrays = input_arrays(t, xs)
    cdef Replay r = replay_taken(t, layout, dirs, work, cap)
    try:
        load_inputs(t, r, arrays)
    except BaseException:
        r.work, r.work_cap, r.zero_lo, r.zero_hi, r.work_lent = NULL, 0, 0, 0, False
        raise
    return r


cdef Replay replay_taken(Tape t, int layout, int dirs, double* work=NULL, int64_t cap=0):
    """replay_setup without the inputs: the caller loads them (or reads them
    where they are, replay_whole_tape); on the lent ``work`` buffer unless
    NULL (replay_setup_on)."""
    cdef Replay r
    fusion_tick(t, layout, dirs)
    if t.n_idle:                        # one step under the GIL: no other thread gets it
        t.n_idle -= 1
        r = <Replay>t._pool[t.n_idle]
        t._pool[t.n_idle] = None
    else:
        r = new_replay(t)
    if r.chunked != t.chunked or (r.chunked and r.runs is not t._runs):
        point_sweep(t, r)               # chunking switched, or runs found anew for fusion
    r.s.fused = t.fused if r.chunked else NULL     # fused after this Replay was made, maybe
    r.s.err_op = -1
    r.stack.top = 0
    r.context.begin(&r.s, layout, dirs)
    if work == NULL:
        lay_out(t, r, layout, dirs)
        return r
    free(r.work)                        # (taken: no other thread has it now)
    free(r.stack.data)
    r.stack.data, r.stack.cap = NULL, 0
    r.work, r.work_cap, r.zero_lo, r.zero_hi, r.work_lent = work, cap, 0, cap, True
    try:
        lay_out(t, r, layout, dirs)
    except BaseException:
        r.work, r.work_cap, r.zero_lo, r.zero_hi, r.work_lent = NULL, 0, 0, 0, False
        raise
    return r


cdef void replay_teardown(Tape t, Replay r):
    """Give the Replay back to the tape's pool (idle Replays are the first
    n_idle entries of the list, which keeps its length: no reallocation)."""
    if r.stack.peak > t.stack_peak:
        t.stack_peak = r.stack.peak
    if r.context.kept:                  # the call's kept values go with it
        r.context.kept.clear()
    if t.n_idle < len(t._pool):
        t._pool[t.n_idle] = r
        t.n_idle += 1
    elif t.n_idle < POOL_MAX:
        t._pool.append(r)
        t.n_idle += 1


cdef int point_sweep(Tape t, Replay r) except -1:
    """Point the Replay's sweep at the program and its buffers (once: the
    program does not change), with chunked runs when the tape says so."""
    cdef Sweep* s = &r.s
    t.program_sweep(s)
    s.val = r.val
    s.stack = &r.stack
    s.context = <void*>r.context
    r.chunked = t.chunked
    if r.chunked:
        attach_runs(t, r)
    return 0


cdef int attach_runs(Tape t, Replay r) except -1:
    """Let the sweeps take runs of elementwise ops chunk by chunk
    (_chunks.pxi). A chunk rewrites slot sizes, constant offsets and view
    shifts, so the Replay sweeps its own copies of them."""
    cdef Sweep* s = &r.s
    cdef cnp.ndarray run_of, table, refs, shifted
    found = t.run_tables()
    _, run_of, table, refs, shifted, _ = found
    if cnp.PyArray_SIZE(table) == 0:
        r.runs = found
        return 0
    if r.runs is not found:
        if r.own_sizes == NULL:
            r.own_sizes = <int64_t*>malloc(<size_t>(t.n_slots + 2 * t.n_const_ids + 1) *
                                           sizeof(int64_t))
            if r.own_sizes == NULL:
                raise MemoryError("adsim: no memory for a replay's slot table")
        memcpy(r.own_sizes, t.slot_size, <size_t>t.n_slots * sizeof(int64_t))
        memcpy(r.own_sizes + t.n_slots, t.const_off, <size_t>t.n_const_ids * sizeof(int64_t))
        memcpy(r.own_sizes + t.n_slots + t.n_const_ids, t.const_size,
               <size_t>t.n_const_ids * sizeof(int64_t))
        r.views = np.array(found[5])
        r.runs = found
    s.slot_size = r.own_sizes
    s.const_off = r.own_sizes + t.n_slots
    s.const_size = r.own_sizes + t.n_slots + t.n_const_ids
    s.run_of = <int32_t*>cnp.PyArray_DATA(run_of)
    s.runs = <int32_t*>cnp.PyArray_DATA(table)
    s.run_refs = <int32_t*>cnp.PyArray_DATA(refs)
    s.run_shifted = <uint8_t*>cnp.PyArray_DATA(shifted)
    s.slot_shift = <int64_t*>cnp.PyArray_DATA(r.views)
    s.slot_ld = s.slot_shift + t.n_slots
    return 0


cdef int lay_out(Tape t, Replay r, int layout, int dirs) except -1:
    """Point the sweep's tangents, adjoints and adjoint tangents into the
    work buffer, direction-major per slot; the parts a sweep accumulates into
    are zero. Also decides whether the sweeps release the GIL and whether
    they check for Ctrl-C (only the main thread handles signals); the
    replay's context has bound the tape's compiled rules (replay_setup)."""
    cdef Sweep* s = &r.s
    cdef int64_t n = t.arena_size
    cdef int64_t arrays = 0 if layout == VALUES else 2 * <int64_t>dirs + 1 \
        if layout == SECOND_ORDER else dirs
    cdef double* buf
    if dirs < 0:
        raise ValueError(f"adsim: {dirs} directions")
    s.tan = s.adj = s.adot = NULL
    s.p = s.q = 0
    if n and arrays > ((<int64_t>1) << 60) // n:
        raise MemoryError(f"adsim: {dirs} directions of {n} values do not fit in memory")
    if layout == TANGENTS:                  # written by every op before they are read
        s.tan = claim_work(r, arrays * n, arrays * n)
        s.p = dirs
    elif layout == ADJOINTS:
        s.adj = claim_work(r, arrays * n, 0)
        s.q = dirs
    elif layout == SECOND_ORDER:
        buf = claim_work(r, arrays * n, dirs * n)
        s.tan = buf
        s.adj = buf + dirs * n
        s.adot = buf + (dirs + 1) * n
        s.p = dirs
        s.q = 1
    s.width = min(1 + arrays, <int64_t>1 << 20)      # (kept small: budgets multiply it)
    # (CALLBACK ops with compiled rules solve with LAPACK, work the units do
    # not count: their sweeps release the GIL whatever their size, so that
    # threads solving stiff problems share the cores)
    r.heavy = t.work_units >= GIL_RELEASE_UNITS // s.width or \
        (s.n_compiled > 0 and r.context.python_free())
    s.budget = SIGNAL_UNITS if PyThread_get_thread_ident() == MAIN_THREAD else NO_SIGNAL_CHECKS
    return 0


cdef double* claim_work(Replay r, int64_t size, int64_t zero_from) except NULL:
    """The work buffer, of ``size`` doubles at least, zeroed from
    ``zero_from`` on unless that part is known to hold zeros."""
    if size > r.work_cap or r.work == NULL:       # (NULL: a sweep of empty arrays)
        if not r.work_lent:
            free(r.work)
        r.work, r.work_lent = NULL, False
        r.work_cap = 0
        r.zero_lo = r.zero_hi = 0
        r.work = <double*>grow(NULL, &r.work_cap, max(size, 1), sizeof(double))
    if size > zero_from and not (r.zero_lo <= zero_from and size <= r.zero_hi):
        memset(r.work + zero_from, 0, <size_t>(size - zero_from) * sizeof(double))
    r.zero_lo = r.zero_hi = 0           # in use until a sweep finishes
    return r.work


cdef list inputs_as_given(Tape t, object xs):
    """_inputs' common case, checked in C: ``xs`` a tuple or list of C-ordered
    float64 arrays of the recorded shapes (a tape whose program did not read
    memory layouts); as a list, or None for _inputs to convert or refuse."""
    cdef int i, d, n_in = len(t._input_slots)
    cdef cnp.ndarray x
    cdef tuple shape
    if t.recording or t.failed or t.layout_observed:
        return None
    if type(xs) is not tuple and type(xs) is not list or len(xs) != n_in:
        return None
    for i in range(n_in):
        if not (is_float64_array(xs[i]) and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>xs[i])):
            return None
        x = <cnp.ndarray>xs[i]
        shape = <tuple>t._input_shapes[i]
        if cnp.PyArray_NDIM(x) != len(shape):
            return None
        for d in range(len(shape)):
            if cnp.PyArray_DIMS(x)[d] != <cnp.npy_intp>shape[d]:
                return None
    return list(xs)


cdef list input_arrays(Tape t, object xs):
    """``xs`` as a list of C-ordered float64 arrays of the inputs' sizes
    (_inputs gives this already; anything else is converted, or refused)."""
    cdef int i, slot
    cdef int n_in = len(t._input_slots)
    cdef bint ready = True
    t.check_replayable()
    if not isinstance(xs, list) or len(<list>xs) != n_in:
        if not isinstance(xs, tuple) or len(xs) != n_in:
            raise ValueError(f"adsim: the tape has {n_in} inputs; pass a list of {n_in} arrays")
        xs = list(xs)
    for i in range(n_in):
        x = (<list>xs)[i]
        slot = t._input_slots[i]
        if not (is_float64_array(x) and
                cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x) and
                cnp.PyArray_SIZE(<cnp.ndarray>x) == t.slot_size[slot]):
            ready = False
    if ready:
        return <list>xs
    return [as_slot_array((<list>xs)[i], t.slot_size[t._input_slots[i]], f"input {i}")
            for i in range(n_in)]


cdef void load_inputs(Tape t, Replay r, list arrays):
    """Copy the inputs (checked by input_arrays) into their slots."""
    cdef int i, slot
    for i in range(len(arrays)):
        slot = t._input_slots[i]
        memcpy(r.val + t.slot_off[slot], cnp.PyArray_DATA(<cnp.ndarray>arrays[i]),
               <size_t>t.slot_size[slot] * sizeof(double))


cdef cnp.ndarray as_slot_array(object x, int64_t size, str what):
    """``x`` as a C-ordered float64 array of ``size`` elements (checked: its
    data is copied into a slot)."""
    cdef cnp.ndarray arr
    if is_float64_array(x) and \
            cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x):
        arr = x
    else:
        arr = as_float_array(x, what)
    if cnp.PyArray_SIZE(arr) != size:
        raise ValueError(f"adsim: {what} has {cnp.PyArray_SIZE(arr)} elements where the tape "
                         f"holds {size}")
    return arr


cdef int seed_tangents(Tape t, Replay r, list V, int p) except -1:
    """The inputs' p tangents from V[i] (p, size of input i), or zero for None."""
    cdef cnp.ndarray v
    cdef int i, slot
    cdef int n_in = len(t._input_slots)
    if len(V) != n_in:
        raise ValueError(f"adsim: {len(V)} directions for {n_in} inputs")
    for i in range(n_in):
        slot = t._input_slots[i]
        if V[i] is None:
            memset(tptr(&r.s, slot), 0, <size_t>(p * t.slot_size[slot]) * sizeof(double))
            continue
        v = as_slot_array(V[i], p * t.slot_size[slot], f"direction {i}")
        memcpy(tptr(&r.s, slot), cnp.PyArray_DATA(v), <size_t>(p * t.slot_size[slot]) * sizeof(double))
    return 0


cdef int directions_of(list V) except -1:
    """The number of directions p of per-input (p, size) seeds (None: constant)."""
    cdef int64_t p
    for v in V:
        if v is not None:
            if np.ndim(v) != 2:
                raise ValueError(f"adsim: directions must be (p, size) arrays, not of shape "
                                 f"{np.shape(v)}")
            p = np.shape(v)[0]
            if p > 2147483647:
                raise TapeOverflow(f"adsim: {p} directions; at most 2**31 - 1 at once")
            return <int>p
    raise ValueError("adsim: no direction given for any input")


cdef cnp.ndarray new_output(Tape t):
    """An empty array of the output's shape."""
    return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(t._output_template),
                             cnp.PyArray_DIMS(t._output_template), cnp.NPY_FLOAT64, 0)


cdef object output_value(Tape t, Replay r):
    cdef cnp.ndarray y = new_output(t)
    memcpy(cnp.PyArray_DATA(y), r.val + r.s.slot_off[t.out_slot],
           <size_t>t.slot_size[t.out_slot] * sizeof(double))
    return y


# ---- values replays without copies: inputs read where the caller has them,
# the output written into the array returned. The sweep reaches slot k at
# val + slot_off[k]; a values replay points its sweep at offsets of its own
# (Replay.own_off) in which such a slot's offset leads out of the arena, to
# the caller's array or the new output (both float64, so 8-byte aligned, as
# the arena is: the distance is a whole number of doubles). Only the entries
# of the inputs and the output differ from the tape's, and each call sets
# them all. No aliasing follows: an input read in place is one no op writes,
# and the output is a new array for each call, which no later replay (in
# this thread or another) can reach.

cdef bint values_in_place = True


def set_values_in_place(bint on):
    """Values replays read their inputs in place and write the output into
    the array they return (True, the default), or copy both as the other
    replays do; returns the previous setting. For tests and benchmarks."""
    global values_in_place
    previous = values_in_place
    values_in_place = on
    return previous


cdef int plan_values(Tape t) except -1:
    """Once per tape: the inputs whose slot no op writes (read in the
    caller's array), and whether the output may be written into the array
    returned: the first op to touch its slot writes it whole without reading
    it, so no op reads what the slot held before the call (an input's slot,
    or one no op writes, holds values the sweep did not compute)."""
    cdef int64_t k, i
    cdef int code, out = t.out_slot
    cdef const int32_t* o
    cdef uint8_t* written = <uint8_t*>calloc(<size_t>max(t.n_slots, 1), 1)
    cdef int touched = 0                # 1: first touched by a whole write; -1: otherwise
    if written == NULL:
        raise MemoryError("adsim: no memory to plan a replay")
    for k in range(t.n_ops):
        code = t.code[k]
        o = t.opnd + t.start[k]
        if o[0] >= 0:
            written[o[0]] = 1
        if touched:
            continue
        for i in range(1, operand_count(t, k)):
            if refers(code, i) and o[i] == out:
                touched = -1
        if not touched and o[0] == out:
            touched = -1 if t.flags[k] & FLAG_INPLACE else 1
    t._caller_inputs = [i for i in range(len(t._input_slots))
                        if not written[<int>t._input_slots[i]]]
    free(written)
    t.output_handed = touched == 1 and out not in t._input_slots and t.slot_size[out] > 0
    t.values_planned = True
    return 0


cdef inline int64_t offset_to(Replay r, const void* data):
    """The offset from the Replay's arena to ``data`` (8-byte aligned), in doubles."""
    return (<intptr_t>data - <intptr_t>r.val) // <intptr_t>sizeof(double)


cdef cnp.ndarray place_values(Tape t, Replay r, list arrays):
    """load_inputs for a values replay: the inputs (checked by input_arrays)
    that no op writes are read where they are, the others copied into their
    slots; returns the output array the sweep writes into, or None (then
    output_value copies the output out)."""
    cdef int i, slot
    cdef cnp.ndarray x, y = None
    if not t.values_planned:
        plan_values(t)
    if not values_in_place or not t._caller_inputs and not t.output_handed:
        load_inputs(t, r, arrays)
        return None
    if r.own_off == NULL:
        r.own_off = <int64_t*>malloc(<size_t>max(t.n_slots, 1) * sizeof(int64_t))
        if r.own_off == NULL:
            raise MemoryError("adsim: no memory for a replay's slot offsets")
        memcpy(r.own_off, t.slot_off, <size_t>t.n_slots * sizeof(int64_t))
    for i in range(len(arrays)):
        slot = t._input_slots[i]
        r.own_off[slot] = t.slot_off[slot]
    for i in t._caller_inputs:
        x = <cnp.ndarray>arrays[i]
        if t.slot_size[t._input_slots[i]] and <intptr_t>cnp.PyArray_DATA(x) % sizeof(double) == 0:
            r.own_off[t._input_slots[i]] = offset_to(r, cnp.PyArray_DATA(x))
    for i in range(len(arrays)):
        slot = t._input_slots[i]
        if r.own_off[slot] == t.slot_off[slot]:
            memcpy(r.val + t.slot_off[slot], cnp.PyArray_DATA(<cnp.ndarray>arrays[i]),
                   <size_t>t.slot_size[slot] * sizeof(double))
    if t.output_handed:
        y = new_output(t)
        r.own_off[t.out_slot] = offset_to(r, cnp.PyArray_DATA(y))
    r.s.slot_off = r.own_off
    return y


cdef object read_dirs(Tape t, double* p, int dirs, int slot):
    return copy_out(p, dirs, t.slot_size[slot])


cdef list per_input_arrays(Tape t, int dirs):
    """An uninitialised (dirs, size) array (size if dirs is 0) per input,
    views of one allocation: a fresh allocation of several megabytes per
    input is one the C allocator returns to the system when it is freed, so
    every call paid its page faults again (two inputs of 10^6 elements: a
    gradient took 5 ms instead of 1); one block of their total is reused."""
    cdef int slot
    cdef int64_t width = max(dirs, 1), at = 0, total = 0
    cdef list slots = t._input_slots, out = []
    if len(slots) == 1:
        return [copy_out(NULL, dirs, t.slot_size[slots[0]])]
    for slot in slots:
        total += width * t.slot_size[slot]
    block = copy_out(NULL, 0, total)
    for slot in slots:
        part = block[at:at + width * t.slot_size[slot]]
        out.append(part.reshape((dirs, t.slot_size[slot])) if dirs else part)
        at += width * t.slot_size[slot]
    return out


cdef object shaped_like(cnp.ndarray a, object x):
    """``a``, an input's flat adjoint, in the shape of the input ``x``:
    ``a`` itself where the shapes agree (a 1-D input; no view made)."""
    if cnp.PyArray_NDIM(<cnp.ndarray>x) == 1 and cnp.PyArray_NDIM(a) == 1:
        return a
    return a.reshape((<object>x).shape)


cdef list take_inputs_dirs(Tape t, Sweep* s, int dirs, bint adjoint_tangents):
    """The inputs' adjoints (or adjoint tangents) in ``dirs`` directions,
    moved out of the work buffer (which they leave zero, as it must be
    after a sweep: one pass, not two) into per_input_arrays."""
    cdef int slot, i = 0
    cdef list out = per_input_arrays(t, dirs)
    for slot in t._input_slots:
        move_doubles(data_of(out[i]), dptr(s, slot) if adjoint_tangents else aptr(s, slot),
                     max(dirs, 1) * t.slot_size[slot])
        i += 1
    return out


cdef void clear_inputs(Tape t, double* buf, int dirs):
    """Zero the input slots' part of an adjoint buffer. Every other slot's
    adjoint is cleared by the reverse sweep itself (after its op), so the
    whole buffer is then zero and the next sweep need not clear it."""
    cdef int slot
    for slot in t._input_slots:
        memset(buf + dirs * t.slot_off[slot], 0, <size_t>(dirs * t.slot_size[slot]) * sizeof(double))


# ---- sweeps of a Replay: without the GIL when heavy, BranchChanged on a new path

cdef int replay_forward(Tape t, Replay r, int64_t n_ops, bint keep, bint tangents) except -1:
    cdef int rc
    if r.heavy:
        with nogil:
            rc = forward_sweep(&r.s, n_ops, keep, tangents)
    else:
        rc = forward_sweep(&r.s, n_ops, keep, tangents)
    if rc:
        raise_branch(t, &r.s)
    return 0


cdef int raise_branch(Tape t, Sweep* s) except -1:
    k = s.err_op
    name = OPCODE_NAMES.get(t.code[k], "?")
    if INDEX_OPERAND[t.code[k]]:             # an index read at replay, out of bounds
        raise IndexOutOfBounds(
            f"adsim: at op {k} ({name}) an index computed by the replay is outside the "
            f"axis it indexes (NumPy would raise IndexError here). Record the tape again at "
            f"this point to see where (the functional API adsim.grad/jvp/... does this "
            f"automatically).", op_index=k, op_name=name)
    raise BranchChanged(
        f"adsim: the replay left the recorded path at op {k} ({name}): a comparison, "
        f"abs/maximum/minimum/clip side max/min position or guarded integer differs from the recording. "
        f"Record the tape again at this point (the functional API adsim.grad/jvp/... "
        f"does this automatically).", op_index=k, op_name=name)


cdef int64_t fused_start(Tape t, Replay r):
    """Where the forward sweep stops before a final run summed into the
    output, which run_and_reverse sweeps forward and back (else the end)."""
    cdef int32_t fused = run_into_output(&r.s, t.n_ops)
    return r.s.runs[fused * RUN_FIELDS + RUN_FIRST] if fused >= 0 else t.n_ops



cdef int reverse_replay(Sweep* s, Reversal* c, bint second_order) except -1 nogil:
    """A keeping forward sweep (with tangents when ``second_order``), the
    output's adjoints seeded, a fused final run swept forward and back, the
    output read, and the reverse sweep: all without Python, so that a large
    replay releases the GIL once. 1 when a branch record differs."""
    cdef int64_t i
    cdef int q = 1 if second_order else s.q
    if forward_sweep(s, c.first, True, second_order):
        return 1
    if c.w == NULL:
        for i in range(q * c.size):
            aptr(s, c.out)[i] = 1.0
    else:
        memcpy(aptr(s, c.out), c.w, <size_t>(q * c.size) * sizeof(double))
    if second_order and c.wdot != NULL:
        memcpy(dptr(s, c.out), c.wdot, <size_t>(s.p * c.size) * sizeof(double))
    if c.first < c.n_ops and not fused_reverse(s, s.run_of[c.first], second_order):
        run_and_reverse(s, s.run_of[c.first], second_order)
    if c.y != NULL:                         # before the reverse sweep restores values
        memcpy(c.y, vptr(s, c.out), <size_t>c.size * sizeof(double))
    if c.ty != NULL:
        memcpy(c.ty, tptr(s, c.out), <size_t>(s.p * c.size) * sizeof(double))
    reverse_sweep(s, c.first, second_order)
    return 0


cdef int replay_reverse(Tape t, Replay r, Reversal* c, bint second_order) except -1:
    """reverse_replay of ``r``, without the GIL when heavy; BranchChanged on a new path."""
    cdef int rc
    c.first = fused_start(t, r)
    c.n_ops = t.n_ops
    c.out = t.out_slot
    c.size = t.slot_size[t.out_slot]
    if r.heavy:
        with nogil:
            rc = reverse_replay(&r.s, c, second_order)
    else:
        rc = reverse_replay(&r.s, c, second_order)
    if rc:
        raise_branch(t, &r.s)
    assert r.stack.top == 0
    return 0


cdef inline double* data_of(cnp.ndarray a):
    return NULL if a is None else <double*>cnp.PyArray_DATA(a)


cdef enum:
    WHOLE_TAPE_INPUTS = 8               # inputs the direct path below takes

cdef bint replay_whole_tape(Tape t, Replay r, list values, list tangents, list adjoints,
                            list adjoint_tangents, bint second_order, const double* seeds,
                            double* outs) except -1:
    """A tape that is one fused run summed into its scalar output (a whole
    objective of elementwise NumPy) replayed by that run's gradient (or
    second-order) kernel straight from and into the caller's arrays: the
    inputs are not copied into their slots nor their adjoints out of the work
    buffer, which at a million elements costs more than the kernel. The lists
    hold an array (or None) per input; adjoints and adjoint tangents need not
    be zeroed (``seeds[2]`` nonzero: the kernel sets them; see
    fused_whole_tape). False, having done nothing, when the tape is not such
    a run."""
    cdef int32_t run
    cdef int i, n_in = len(values)
    cdef int32_t inputs[WHOLE_TAPE_INPUTS]
    cdef double* caller[4 * WHOLE_TAPE_INPUTS]
    cdef bint done
    run = whole_tape_run(t, r, second_order)
    if run < 0 or n_in > WHOLE_TAPE_INPUTS:
        return False
    for i in range(n_in):
        inputs[i] = t._input_slots[i]
        caller[i] = data_of(values[i])
        caller[n_in + i] = data_of(tangents[i]) if tangents is not None else NULL
        caller[2 * n_in + i] = data_of(adjoints[i])
        caller[3 * n_in + i] = data_of(adjoint_tangents[i]) if adjoint_tangents is not None \
            else NULL
    if r.heavy:
        with nogil:
            done = fused_whole_tape(&r.s, run, second_order, inputs, n_in, caller, seeds, outs)
    else:
        done = fused_whole_tape(&r.s, run, second_order, inputs, n_in, caller, seeds, outs)
    if done:                    # the work buffer was not touched: as zero as lay_out left it
        if second_order:
            r.zero_lo, r.zero_hi = r.s.p * t.arena_size, (2 * r.s.p + 1) * t.arena_size
        else:
            r.zero_lo, r.zero_hi = 0, r.s.q * t.arena_size
    return done


cdef int32_t whole_tape_run(Tape t, Replay r, bint second_order):
    """The fused run that, with the sum after it, is the whole tape, when it
    has the kernel the sweep needs; else -1."""
    cdef int32_t run
    if r.s.fused == NULL:
        return -1
    run = run_into_output(&r.s, t.n_ops)
    if run < 0 or r.s.runs[run * RUN_FIELDS + RUN_FIRST] != 0:
        return -1
    if (r.s.fused[run].second_order if second_order else r.s.fused[run].gradient) == NULL:
        return -1
    return run


cdef cnp.ndarray empty_like_slot(Tape t, int slot, int dirs):
    """copy_out's array for ``slot``, not initialised (a whole-tape kernel
    sets every element)."""
    cdef cnp.npy_intp dims[2]
    dims[0] = dirs
    dims[1] = t.slot_size[slot]
    if dirs > 0:
        return cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT64, 0)
    return cnp.PyArray_EMPTY(1, dims + 1, cnp.NPY_FLOAT64, 0)


# ---- the entry points of Tape (_forward, _adjoint, ...): setup, sweeps, teardown

cdef object replay_values(Tape t, object xs):
    cdef list arrays = input_arrays(t, xs)
    cdef Replay r = replay_taken(t, VALUES, 0)
    cdef cnp.ndarray y
    cdef int32_t summed
    cdef int64_t first = t.n_ops
    try:
        y = place_values(t, r, arrays)
        summed = run_into_output(&r.s, t.n_ops)
        if summed >= 0 and r.s.fused != NULL and r.s.fused[summed].sum != NULL:
            first = r.s.runs[summed * RUN_FIELDS + RUN_FIRST]       # a fused final sum
        replay_forward(t, r, first, False, False)
        if first < t.n_ops:
            fused_sum(&r.s, summed)
        return output_value(t, r) if y is None else y
    finally:
        r.s.slot_off = t.slot_off        # other replays address the arena alone
        replay_teardown(t, r)


cdef tuple replay_adjoints(Tape t, object xs, object W, bint want_value, bint flat=False):
    """(output value, [per input (q, size)]), or with ``flat`` (a gradient:
    W None) [per input (size,)]."""
    cdef int slot
    cdef int64_t q, size
    cdef cnp.ndarray w = None, y
    cdef Reversal c
    cdef Replay r
    cdef list arrays
    cdef double seeds[3]
    cdef double outs[2]
    t.check_replayable()
    size = t.slot_size[t.out_slot]
    if W is None:
        q = 1
    else:
        w = np.ascontiguousarray(W, dtype=np.float64)
        if w.ndim != 2 or w.shape[1] != size or w.shape[0] > 2147483647:
            raise ValueError(f"adsim: adjoint weights of shape {np.shape(W)}; expected (q, {size})")
        q = w.shape[0]
    cdef int shape_dirs = 0 if flat and W is None else <int>q
    arrays = input_arrays(t, xs)
    r = replay_taken(t, ADJOINTS, <int>q)
    try:
        y = new_output(t)
        if q == 1 and whole_tape_run(t, r, False) >= 0:
            adjoints = per_input_arrays(t, shape_dirs)
            seeds[0] = 1.0 if w is None else data_of(w)[0]
            seeds[1], seeds[2] = 0.0, 1.0
            # outs NULL: the kernel skips the output's value (see codegen "novalue")
            if replay_whole_tape(t, r, arrays, None, adjoints, None, False, seeds,
                                 outs if want_value else NULL):
                data_of(y)[0] = outs[0] if want_value else float("nan")
                return y, adjoints
        load_inputs(t, r, arrays)
        c.w = data_of(w)
        c.wdot = NULL
        c.y = data_of(y)
        c.ty = NULL
        replay_reverse(t, r, &c, False)
        adjoints = take_inputs_dirs(t, &r.s, shape_dirs, False)
        r.zero_lo, r.zero_hi = 0, q * t.arena_size        # the reverse sweep left them zero
        return y, adjoints
    finally:
        replay_teardown(t, r)


cdef tuple replay_tangents(Tape t, object xs, object V, bint keep):
    cdef list dirs = list(V)
    cdef int p = directions_of(dirs)
    cdef Replay r = replay_setup(t, xs, TANGENTS, p)
    try:
        seed_tangents(t, r, dirs, p)
        replay_forward(t, r, t.n_ops, keep, True)
        return output_value(t, r), read_dirs(t, tptr(&r.s, t.out_slot), p, t.out_slot)
    finally:
        replay_teardown(t, r)


cdef int seed_colors(Tape t, Replay r, int argnum, cnp.ndarray colors, int p) except -1:
    """The inputs' p tangents of a column coloring: direction d of input
    ``argnum`` is 1 at the elements of color d (none at color -1), every
    other input's tangents are zero (writing the seeds from the colors reads
    n integers, not the p * n doubles of a seed matrix)."""
    cdef int i, slot
    cdef int64_t j, size, c
    cdef double* tangents
    cdef const int64_t* color = <const int64_t*>cnp.PyArray_DATA(colors)
    cdef bint valid = True
    for i in range(len(t._input_slots)):
        slot = t._input_slots[i]
        memset(tptr(&r.s, slot), 0, <size_t>(p * t.slot_size[slot]) * sizeof(double))
    slot = t._input_slots[argnum]
    size = t.slot_size[slot]
    tangents = tptr(&r.s, slot)
    for j in range(size):
        c = color[j]
        if c >= 0:
            valid &= c < p
            if valid:
                tangents[c * size + j] = 1.0
        else:
            valid &= c == -1
    if not valid:
        raise ValueError(f"adsim: colors must be -1 or below the {p} directions")
    return 0


cdef object replay_gathered_tangents(Tape t, object xs, int argnum, cnp.ndarray colors, int p,
                                     cnp.ndarray positions, cnp.ndarray data, bint value):
    """replay_tangents for a compressed Jacobian: the tangent sweep seeded by
    the column coloring ``colors`` of input ``argnum`` (seed_colors), then
    ``data[k]`` receives the output's tangents at flat position
    ``positions[k]`` of their (p, output size) array, read where the sweep
    left them (no copy of the p tangents out of the work buffer, no array of
    them). Returns the output's value, or None unless ``value``."""
    cdef int64_t k, n = cnp.PyArray_SIZE(positions)
    cdef uint64_t at, limit, outside = 0
    cdef double* out
    cdef const double* tangents
    cdef const int32_t* at32 = NULL
    cdef const int64_t* at64 = NULL
    if not 0 <= argnum < len(t._input_slots):
        raise ValueError(f"adsim: input {argnum} of a tape of {len(t._input_slots)} inputs")
    if p < 1:
        raise ValueError(f"adsim: {p} directions")
    if not (cnp.PyArray_TYPE(colors) == cnp.NPY_INT64 and cnp.PyArray_IS_C_CONTIGUOUS(colors)
            and cnp.PyArray_SIZE(colors) == t.slot_size[t._input_slots[argnum]]):
        raise ValueError(f"adsim: colors must be a C-ordered int64 array of input {argnum}'s "
                         f"{t.slot_size[t._input_slots[argnum]]} elements")
    if not (is_float64_array(data) and cnp.PyArray_IS_C_CONTIGUOUS(data) and
            cnp.PyArray_ISWRITEABLE(data) and cnp.PyArray_SIZE(data) == n):
        raise ValueError(f"adsim: the gathered tangents go to a writeable C-ordered float64 "
                         f"array of {n} elements")
    if not cnp.PyArray_IS_C_CONTIGUOUS(positions):
        raise ValueError("adsim: positions must be C-ordered")
    if cnp.PyArray_TYPE(positions) == cnp.NPY_INT32:
        at32 = <const int32_t*>cnp.PyArray_DATA(positions)
    elif cnp.PyArray_TYPE(positions) == cnp.NPY_INT64:
        at64 = <const int64_t*>cnp.PyArray_DATA(positions)
    else:
        raise TypeError(f"adsim: positions must be int32 or int64, not {positions.dtype}")
    cdef Replay r = replay_setup(t, xs, TANGENTS, p)
    try:
        seed_colors(t, r, argnum, colors, p)
        replay_forward(t, r, t.n_ops, False, True)
        tangents = tptr(&r.s, t.out_slot)
        limit = <uint64_t>p * <uint64_t>t.slot_size[t.out_slot]
        out = <double*>cnp.PyArray_DATA(data)
        if n and not limit:
            raise IndexError("adsim: positions in an output without tangents")
        # an unsigned compare checks both ends of the range; a position
        # outside reads element 0 (a select, no branch) and raises after
        with nogil:
            if at32 != NULL:
                for k in range(n):
                    at = <uint64_t><int64_t>at32[k]
                    outside |= at >= limit
                    out[k] = tangents[at if at < limit else 0]
            else:
                for k in range(n):
                    at = <uint64_t>at64[k]
                    outside |= at >= limit
                    out[k] = tangents[at if at < limit else 0]
        if outside:
            raise IndexError(f"adsim: a position outside the {limit} output tangents")
        return output_value(t, r) if value else None
    finally:
        replay_teardown(t, r)


cdef tuple replay_second_order(Tape t, object xs, object V, object w, object wdot,
                               bint adjoints):
    cdef list dirs = list(V)
    cdef int p = directions_of(dirs)
    cdef int64_t size = t.slot_size[t.out_slot]
    cdef cnp.ndarray wa = as_slot_array(w, size, "the output weight")
    cdef cnp.ndarray wd = None if wdot is None else as_slot_array(wdot, p * size,
                                                                  "the output weight's tangent")
    cdef cnp.ndarray y, ty
    cdef Reversal c
    cdef Replay r = replay_setup(t, xs, SECOND_ORDER, p)
    cdef Sweep* s = &r.s
    try:
        seed_tangents(t, r, dirs, p)
        y = new_output(t)
        ty = copy_out(NULL, p, size)
        c.w = data_of(wa)
        c.wdot = data_of(wd)
        c.y = data_of(y)
        c.ty = data_of(ty)
        replay_reverse(t, r, &c, True)
        adj = take_inputs_dirs(t, s, 0, False) if adjoints else None
        adot = take_inputs_dirs(t, s, p, True)
        second_order_done(t, r, not adjoints)
        return y, ty, adj, adot
    finally:
        replay_teardown(t, r)


cdef object replay_hvp_one(Tape t, object x, object v):
    """The second-order sweeps above for one input, a scalar output and one
    direction, without their general shaping (the common hvp)."""
    cdef int slot
    cdef cnp.ndarray va, hv
    cdef Reversal c
    cdef Replay r
    cdef list arrays
    cdef double seeds[3]
    cdef double outs[2]
    t.check_replayable()
    if len(t._input_slots) != 1 or t.slot_size[t.out_slot] != 1:
        raise ValueError("adsim: _hvp_one needs a tape of one input and a scalar output")
    slot = t._input_slots[0]
    va = as_slot_array(v, t.slot_size[slot], "the direction")
    arrays = input_arrays(t, [x])
    r = replay_taken(t, SECOND_ORDER, 1)
    try:
        if whole_tape_run(t, r, True) >= 0:
            hv = empty_like_slot(t, slot, 0).reshape(np.shape(va))
            seeds[0], seeds[1], seeds[2] = 1.0, 0.0, 1.0
            # (no array for the gradient: the kernel skips writing it)
            if replay_whole_tape(t, r, arrays, [va], [None], [hv], True, seeds, outs):
                return hv
        load_inputs(t, r, arrays)
        memcpy(tptr(&r.s, slot), cnp.PyArray_DATA(va), <size_t>t.slot_size[slot] * sizeof(double))
        c.w = c.wdot = c.y = c.ty = NULL        # weight 1; nothing of the output read
        replay_reverse(t, r, &c, True)
        hv = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(va), cnp.PyArray_DIMS(va), cnp.NPY_FLOAT64, 0)
        move_doubles(<double*>cnp.PyArray_DATA(hv), dptr(&r.s, slot), t.slot_size[slot])
        second_order_done(t, r, True)
        return hv
    finally:
        replay_teardown(t, r)


cdef void second_order_done(Tape t, Replay r, bint clear_adjoints):
    """After the second-order sweep, whose inputs' adjoint tangents were
    taken (take_inputs_dirs): clear the inputs' adjoints unless they were taken
    too, so that the whole adjoint part of the work buffer is zero again."""
    if clear_adjoints:
        clear_inputs(t, r.s.adj, 1)
    r.zero_lo, r.zero_hi = r.s.p * t.arena_size, (2 * r.s.p + 1) * t.arena_size


cdef tuple replay_iterate(Tape t, object xs, int64_t n_steps):
    cdef int64_t k, size
    cdef int x0, out, rc
    cdef double* saved = NULL
    cdef Replay r
    t.check_replayable()
    if n_steps < 0:
        raise ValueError(f"adsim: {n_steps} steps")
    x0 = t._input_slots[0] if t._input_slots else -1
    out = t.out_slot
    if x0 < 0 or t.slot_size[out] != t.slot_size[x0]:
        raise ValueError("adsim: a loop body must return a state of its first input's size")
    size = t.slot_size[x0]
    r = replay_setup(t, xs, VALUES, 0)
    try:
        saved = <double*>malloc(<size_t>max(size, 1) * sizeof(double))
        if saved == NULL:
            raise MemoryError(f"adsim: no memory for a loop state ({8 * size} bytes)")
        for k in range(n_steps):
            memcpy(saved, r.val + t.slot_off[x0], <size_t>size * sizeof(double))
            if r.heavy:
                with nogil:
                    rc = forward_sweep(&r.s, t.n_ops, False, False)
            else:
                rc = forward_sweep(&r.s, t.n_ops, False, False)
            if rc:
                memcpy(r.val + t.slot_off[x0], saved, <size_t>size * sizeof(double))
                return k, copy_out(r.val + t.slot_off[x0], 0, size)
            if out != x0:
                memcpy(r.val + t.slot_off[x0], r.val + t.slot_off[out], <size_t>size * sizeof(double))
            check_signals(&r.s, t.work_units)       # many short steps are a long replay too
        return n_steps, copy_out(r.val + t.slot_off[x0], 0, size)
    finally:
        free(saved)
        replay_teardown(t, r)

