# Strip-mined sweeps over runs of elementwise ops.
#
# Array code records long runs of elementwise ops over arrays larger than the
# caches (a residual, a loss, one stage of a time step). Op by op, every op
# streams its operands and result from memory, and a second-order sweep
# streams four arrays per slot (value, tangent, adjoint, its tangent). A run
# is instead swept in chunks of a few thousand elements: all of the run's ops
# on elements [a, b), then on the next chunk, so the intermediates of a chunk
# stay in cache. Reverse sweeps take the chunks in reverse order, so values
# pushed on the stack chunk by chunk come back in last-in first-out order.
#
# A chunk is swept by the ordinary kernels: the slots (and constants) of the
# run's size are given views on [a, b) by shifting their offsets and sizes
# for the chunk, and restored after the run. This needs element i of every
# result to depend on element i of its operands only, so a run holds
#   - unary and binary ops (operands of the run's size, or of size 1),
#   - copies, and
#   - strided gathers (a slice x[s:e:k]) whose source no op of the run writes;
# and no branch records, scatters, reductions, callbacks or matrix products.
#
# Several directions: a slot's p tangents (or q adjoints) are stored
# direction-major, [p][m]. The same shifted offsets then address chunk c at
# p * (offset + a_c), so during a run the slots use a chunk-major layout,
# [chunk][p][n_c], in which every chunk's views are again direction-major
# and the kernels run unchanged. Only the run's boundary slots (read before
# the run writes them, or read after it) hold data in the other layout:
# they are rearranged on entering and leaving the run (relayout). Pushed
# and popped stretches are raw memory, so they need no rearranging.

cdef enum:
    RUN_MIN_SIZE = 32768        # smaller runs fit the caches as they are
    RUN_CACHE_DOUBLES = 49152   # per chunk, over the run's slots (about 384 kB)
    RUN_CHUNK_MIN = 1024
    RELAYOUT_COST = 2           # ops per rearranged slot a run needs to be chunked with
                                # several directions (measured on the Bratu residual)

cdef enum:                      # fields of a run record (a row of the run table)
    RUN_FIRST = 0
    RUN_END = 1
    RUN_SIZE = 2
    RUN_CHUNK = 3
    RUN_REFS = 4                # where the run's slots, then its constant ids, start in run_refs
    RUN_N_SLOTS = 5
    RUN_N_CONSTS = 6
    RUN_N_IN = 7                # boundary slots after the constants: read before written,
    RUN_N_OUT = 8               # then those written and read after the run
    RUN_MULTI = 9               # 1: may be chunked with several directions
    RUN_FIELDS = 10


cdef inline bint strided_gather(const int32_t* o, int64_t n) noexcept nogil:
    """A one-row strided GATHER: r[i] = a[start + i step]."""
    return o[4] != 0 and (o[5] <= 0 or o[5] == n)


cdef int64_t chunkable_size(Sweep* s, int64_t k) noexcept nogil:
    """The result size of op k if it may join a run, else -1 (sources of
    gathers are checked by the caller)."""
    cdef int code = s.code[k]
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int64_t n
    if s.flags[k] & FLAG_INPLACE or o[0] < 0:
        return -1
    n = s.slot_size[o[0]]
    if code < UNARY_END:
        return n if ref_size(s, o[1]) == n else -1
    if code < BINARY_END:
        if (ref_size(s, o[1]) != n and ref_size(s, o[1]) != 1) or \
                (ref_size(s, o[2]) != n and ref_size(s, o[2]) != 1):
            return -1
        return n
    if code == COPY:
        return n if ref_size(s, o[1]) == n else -1
    if code == GATHER:
        return n if strided_gather(o, n) and o[1] >= 0 else -1
    return -1


cdef int elementwise_operands(int code) noexcept nogil:
    """Operands after the result that are read element by element."""
    if code < UNARY_END or code == COPY:
        return 1
    if code < BINARY_END:
        return 2
    return 0                # GATHER reads its source by index


def find_runs(Tape tape):
    """The tape's runs: (run_of per op, run table, refs, shifted-source flag
    per op). Computed once per tape length."""
    cdef Sweep s
    tape.fill_sweep(&s)
    cdef int64_t n_ops = tape.n_ops, k, j, m, size
    cdef int code, i, ref
    cdef const int32_t* o
    run_of = np.full(n_ops, -1, dtype=np.int32)
    shifted = np.zeros(n_ops, dtype=np.uint8)
    table, refs, written = [], [], []
    k = 0
    while k < n_ops:
        m = chunkable_size(&s, k)
        if m < RUN_MIN_SIZE:
            k += 1
            continue
        written_here, sources, slots, consts = set(), set(), [], []
        j = k
        while j < n_ops and chunkable_size(&s, j) == m:
            code = s.code[j]
            o = s.opnd + s.start[j]
            if o[0] in sources or (code == GATHER and o[1] in written_here):
                break                     # a gather's source must not change in the run
            if code == GATHER:
                sources.add(o[1])
            written_here.add(o[0])
            for i in range(1 + elementwise_operands(code)):
                ref = o[i]
                size = ref_size(&s, ref)
                if size != m:
                    continue
                if ref >= 0 and ref not in slots:
                    slots.append(ref)
                elif ref < 0 and -ref - 1 not in consts:
                    consts.append(-ref - 1)
            j += 1
        if j - k >= 2:
            multi = True
            for i in range(k, j):
                run_of[i] = len(table)
                o = s.opnd + s.start[i]
                if s.code[i] == GATHER and o[1] in slots:
                    shifted[i] = 1
                    multi = multi and o[4] == 1     # x[::-1] reads across chunks
            chunk = max(RUN_CHUNK_MIN, RUN_CACHE_DOUBLES // (4 * max(len(slots), 1)))
            live_in = _read_before_written(&s, k, j, slots)
            table.append([k, j, m, chunk, len(refs), len(slots), len(consts), len(live_in), 0,
                          int(multi)])
            refs.extend(slots)
            refs.extend(consts)
            refs.extend(live_in)
            written.append((len(table) - 1, [r for r in slots if r not in live_in]))
        k = max(j, k + 1)
    if not table:                   # scalar and small-array tapes keep no per-op arrays
        run_of, shifted = run_of[:0], shifted[:0]
    else:
        refs = _add_live_out(tape, table, refs, written)
    return (n_ops, run_of, np.array(table, dtype=np.int32).reshape(-1, RUN_FIELDS),
            np.array(refs, dtype=np.int32), shifted)


cdef list _read_before_written(Sweep* s, int64_t first, int64_t end, list slots):
    """The run's slots whose values (and tangents) come from before the run."""
    cdef int64_t k
    cdef int i
    cdef const int32_t* o
    found, written = [], set()
    for k in range(first, end):
        o = s.opnd + s.start[k]
        for i in range(1, 1 + elementwise_operands(s.code[k]) + (s.code[k] == GATHER)):
            if o[i] in slots and o[i] not in written and o[i] not in found:
                found.append(o[i])
        written.add(o[0])
    return found


def _slots_read(spec, ops, bint inplace):
    """Slots op ``ops`` (result first) reads: its "@" operands, and its
    result when it writes only part of it."""
    cdef Py_ssize_t last = len(spec.operands) - 1
    names = spec.operands
    if last >= 0 and names[last].endswith("..."):    # a variable number of slots
        names = names[:last] + (names[last],) * (len(ops) - last - 1)
    read = [v for name, v in zip(names, ops[1:]) if name.startswith("@") and v >= 0]
    if inplace and ops[0] >= 0:
        read.append(ops[0])
    return read


def _add_live_out(Tape tape, list table, list refs, list written):
    """Append to each run's boundary slots those it writes that a later op
    (or the tape's output) reads before overwriting: one backward pass."""
    from .ops import BY_CODE
    cdef int64_t k
    next_use = {tape.output_slot: True}     # slot -> its next reference reads it
    out = {}
    pending = sorted(written, key=lambda w: -table[w[0]][RUN_END])
    codes = tape.op_codes()
    flags = [tape.op_flags(k) for k in range(tape.n_ops)] if pending else []
    for k in range(tape.n_ops, -1, -1):
        while pending and table[pending[0][0]][RUN_END] == k:
            r, slots = pending.pop(0)
            out[r] = [slot for slot in slots if next_use.get(slot, False)]
        if k == 0 or not pending:
            break
        ops = tape.op_operands(k - 1)
        if ops[0] >= 0:
            next_use[ops[0]] = bool(flags[k - 1] & FLAG_INPLACE)
        for slot in _slots_read(BY_CODE[int(codes[k - 1])], ops, flags[k - 1] & FLAG_INPLACE):
            next_use[slot] = True
    merged = []
    for r, row in enumerate(table):
        start = len(merged)
        merged.extend(refs[row[RUN_REFS]:row[RUN_REFS] + row[RUN_N_SLOTS] + row[RUN_N_CONSTS]
                           + row[RUN_N_IN]])
        merged.extend(out.get(r, []))
        row[RUN_REFS] = start
        row[RUN_N_OUT] = len(out.get(r, []))
        # with several directions each boundary slot costs two or three rearranging
        # copies, each about what one op costs op by op: take only runs that gain
        moved = 2 * row[RUN_N_IN] + row[RUN_N_OUT]
        row[RUN_MULTI] = row[RUN_MULTI] and row[RUN_END] - row[RUN_FIRST] >= RELAYOUT_COST * moved
    return merged


cdef inline bint several_directions(Sweep* s) noexcept nogil:
    return (s.tan != NULL and s.p > 1) or (s.adj != NULL and s.q > 1) or \
        (s.adot != NULL and s.p > 1)


cdef inline int32_t run_at(Sweep* s, int64_t k) noexcept nogil:
    """The run op k belongs to, or -1 (always -1 when chunking is off, and
    for the runs that cannot be chunked with s's directions)."""
    cdef int32_t r
    if s.run_of == NULL:
        return -1
    r = s.run_of[k]
    if r >= 0 and several_directions(s) and not s.runs[r * RUN_FIELDS + RUN_MULTI]:
        return -1
    return r


cdef void set_views(Sweep* s, const int32_t* run, int64_t* saved, int64_t a, int64_t n) noexcept nogil:
    """Point the run's slots and constants at elements [a, a + n) (a < 0:
    restore them from ``saved``, of the run's size)."""
    cdef const int32_t* refs = s.run_refs + run[RUN_REFS]
    cdef int i
    cdef int ns = run[RUN_N_SLOTS], nc = run[RUN_N_CONSTS]
    for i in range(ns):
        s.slot_off[refs[i]] = saved[i] + (a if a >= 0 else 0)
        s.slot_size[refs[i]] = n if a >= 0 else run[RUN_SIZE]
    for i in range(nc):
        s.const_off[refs[ns + i]] = saved[ns + i] + (a if a >= 0 else 0)
        s.const_size[refs[ns + i]] = n if a >= 0 else run[RUN_SIZE]


cdef int64_t* save_views(Sweep* s, const int32_t* run) except NULL:
    cdef const int32_t* refs = s.run_refs + run[RUN_REFS]
    cdef int i, ns = run[RUN_N_SLOTS], nc = run[RUN_N_CONSTS]
    cdef int64_t* saved = <int64_t*>malloc((ns + nc + 1) * sizeof(int64_t))
    if saved == NULL:
        raise MemoryError("adsim: no memory to sweep a run of elementwise ops")
    for i in range(ns):
        saved[i] = s.slot_off[refs[i]]
    for i in range(nc):
        saved[ns + i] = s.const_off[refs[ns + i]]
    return saved


cdef inline const int32_t* chunk_operands(Sweep* s, int64_t k, int64_t a, int64_t n,
                                          int32_t* local) noexcept nogil:
    """Operands of op k for the chunk [a, a + n): a gather's start moves to
    the chunk (less the shift of its source's view, if the source has one)."""
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int i
    if s.code[k] != GATHER:
        return o
    for i in range(7):
        local[i] = o[i]
    local[3] = <int32_t>(o[3] + a * o[4] - (a if s.run_shifted[k] else 0))
    local[5] = <int32_t>n
    return local


cdef inline int64_t chunk_length(Sweep* s, const int32_t* run) noexcept nogil:
    """Elements per chunk: the run's own for one direction, fewer for several
    (the working set per element grows with the directions)."""
    cdef int64_t width = 1
    if not several_directions(s):
        return run[RUN_CHUNK]
    if s.tan != NULL:
        width += s.p
    if s.adj != NULL:
        width += s.q
    if s.adot != NULL:
        width += s.p
    return max(<int64_t>RUN_CHUNK_MIN, 4 * run[RUN_CHUNK] // width)


cdef inline int64_t chunk_count(Sweep* s, const int32_t* run) noexcept nogil:
    cdef int64_t length = chunk_length(s, run)
    return (run[RUN_SIZE] + length - 1) // length


cdef inline void chunk_bounds(Sweep* s, const int32_t* run, int64_t c, int64_t* a,
                              int64_t* n) noexcept nogil:
    """Chunk c of a run: equal parts, so that no chunk is tiny."""
    cdef int64_t m = run[RUN_SIZE]
    cdef int64_t parts = chunk_count(s, run)
    a[0] = m * c // parts
    n[0] = m * (c + 1) // parts - a[0]


cdef int relayout(Sweep* s, const int32_t* run, double* buf, int dirs, int first,
                  int count, bint to_chunks) except -1:
    """Rearrange the ``dirs`` directions of boundary slots first .. first +
    count - 1 (indices into the run's boundary list) of ``buf`` between
    direction-major [dirs][m] and chunk-major [chunk][dirs][n_c] (views unset)."""
    cdef const int32_t* slots = s.run_refs + run[RUN_REFS] + run[RUN_N_SLOTS] + run[RUN_N_CONSTS]
    cdef int64_t m = run[RUN_SIZE], c, a, n, j
    cdef int i
    cdef double* base
    cdef double* scratch
    if buf == NULL or dirs <= 1 or count <= 0:
        return 0
    scratch = (<Tape>s.tape).scratch_buffer(dirs * m)
    for i in range(first, first + count):
        base = buf + dirs * s.slot_off[slots[i]]
        memcpy(scratch, base, <size_t>(dirs * m) * sizeof(double))
        for c in range(chunk_count(s, run)):
            chunk_bounds(s, run, c, &a, &n)
            for j in range(dirs):
                if to_chunks:
                    memcpy(base + dirs * a + j * n, scratch + j * m + a, <size_t>n * sizeof(double))
                else:
                    memcpy(base + j * m + a, scratch + dirs * a + j * n, <size_t>n * sizeof(double))
    return 0


cdef int chunk_forward(Sweep* s, const int32_t* run, int64_t a, int64_t n, bint keep,
                       bint tangents) except -1:
    """The run's ops on the chunk [a, a + n) (views set): values, tangents,
    and pushes of what they overwrite when ``keep``."""
    cdef int64_t k
    cdef int32_t local[7]
    cdef const int32_t* o
    for k in range(run[RUN_FIRST], run[RUN_END]):
        o = chunk_operands(s, k, a, n, local)
        if keep and (s.flags[k] & FLAG_PUSH):
            save_result(s, k, tangents)
        if tangents:
            code_value_tangent(s, s.code[k], o, k)
        else:
            code_value(s, s.code[k], o, k)
    return 0


cdef int chunk_reverse(Sweep* s, const int32_t* run, int64_t a, int64_t n,
                       bint second_order) except -1:
    """The run's ops on the chunk [a, a + n) in reverse: adjoints (and their
    tangents), clearing each result's adjoint and restoring pushed values."""
    cdef int64_t k
    cdef int32_t local[7]
    cdef const int32_t* o
    for k in range(run[RUN_END] - 1, run[RUN_FIRST] - 1, -1):
        o = chunk_operands(s, k, a, n, local)
        if second_order:
            code_soadjoint(s, s.code[k], o)
            clear_result_adjoint(s, k, s.adj, 1)
            clear_result_adjoint(s, k, s.adot, s.p)
        else:
            code_adjoint(s, s.code[k], o)
            clear_result_adjoint(s, k, s.adj, s.q)
        if s.flags[k] & FLAG_PUSH:
            restore_result(s, k, second_order)
    return 0


cdef int run_forward(Sweep* s, int32_t r, bint keep, bint tangents) except -1:
    """Values (and tangents) of run r, chunk by chunk."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef int n_in = run[RUN_N_IN], n_boundary = run[RUN_N_IN] + run[RUN_N_OUT]
    cdef double* tan = s.tan if tangents else NULL
    cdef int64_t* saved
    cdef int64_t c, a, n
    relayout(s, run, tan, s.p, 0, n_in, True)
    saved = save_views(s, run)
    try:
        for c in range(chunk_count(s, run)):
            chunk_bounds(s, run, c, &a, &n)
            set_views(s, run, saved, a, n)
            chunk_forward(s, run, a, n, keep, tangents)
    finally:
        set_views(s, run, saved, -1, 0)
        free(saved)
    relayout(s, run, tan, s.p, 0, n_boundary, False)
    return 0


cdef int run_reverse(Sweep* s, int32_t r, bint second_order) except -1:
    """Adjoints (and their tangents) of run r, chunks and ops in reverse."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef int n_in = run[RUN_N_IN], n_boundary = run[RUN_N_IN] + run[RUN_N_OUT]
    cdef int64_t* saved
    cdef int64_t c, a, n
    if second_order:            # tangents are read again; the adjoint has one direction
        relayout(s, run, s.tan, s.p, 0, n_boundary, True)
        relayout(s, run, s.adot, s.p, 0, n_boundary, True)
    else:
        relayout(s, run, s.adj, s.q, 0, n_boundary, True)
    saved = save_views(s, run)
    try:
        for c in range(chunk_count(s, run) - 1, -1, -1):
            chunk_bounds(s, run, c, &a, &n)
            set_views(s, run, saved, a, n)
            chunk_reverse(s, run, a, n, second_order)
    finally:
        set_views(s, run, saved, -1, 0)
        free(saved)
    if second_order:
        relayout(s, run, s.tan, s.p, 0, n_in, False)
        relayout(s, run, s.adot, s.p, 0, n_in, False)
    else:
        relayout(s, run, s.adj, s.q, 0, n_in, False)
    return 0


# ---- a run that ends in the scalar output: f = sum(elementwise run) ----------
#
# Losses and energies are mostly this shape. The output's adjoint (and its
# tangent) is known before the run is swept, and the sum's reverse map only
# broadcasts it, so each chunk is reversed right after its forward, while
# its values, tangents and the values it pushed are still in cache: nothing
# of the run goes through memory, and the stack holds one chunk.

cdef int32_t run_into_output(Sweep* s, int64_t n_ops) noexcept nogil:
    """The run whose last result the tape's last op sums to the scalar
    output, or -1: then the sweeps take their ordinary course."""
    cdef int64_t k = n_ops - 1
    cdef const int32_t* o
    cdef const int32_t* last
    cdef int32_t r
    if s.run_of == NULL or k < 1 or s.code[k] != SUM or (s.flags[k] & FLAG_PUSH) or \
            several_directions(s):
        return -1
    r = s.run_of[k - 1]
    o = s.opnd + s.start[k]
    if r < 0 or s.runs[r * RUN_FIELDS + RUN_END] != k or o[2] != 1 or o[4] != 1:
        return -1
    last = s.opnd + s.start[k - 1]
    if o[1] != last[0] or o[3] != s.runs[r * RUN_FIELDS + RUN_SIZE] or s.slot_size[o[0]] != 1:
        return -1
    return r


cdef int run_and_reverse(Sweep* s, int32_t r, bint second_order) except -1:
    """Run r and the sum after it, forward and reverse chunk by chunk. The
    output's adjoint (and tangent of the adjoint) must be seeded; its value
    (and tangent) are written, bitwise as the sum op would (a running sum)."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef const int32_t* so = s.opnd + s.start[run[RUN_END]]
    cdef int out = so[0], src = so[1]
    cdef double w = aptr(s, out)[0]
    cdef double wdot = dptr(s, out)[0] if second_order else 0.0
    cdef double total = 0.0, total_dot = 0.0
    cdef int64_t* saved = save_views(s, run)
    cdef int64_t c, a, n, i
    cdef double* p
    aptr(s, out)[0] = 0.0           # the output's slot may hold a variable the run
    if second_order:                # reads, whose adjoint starts at zero (as when
        dptr(s, out)[0] = 0.0       # the sum op is reversed on its own)
    try:
        for c in range(chunk_count(s, run)):
            chunk_bounds(s, run, c, &a, &n)
            set_views(s, run, saved, a, n)
            chunk_forward(s, run, a, n, True, second_order)
            p = vptr(s, src)
            for i in range(n):
                total += p[i]
            p = aptr(s, src)
            for i in range(n):
                p[i] += w
            if second_order:
                p = tptr(s, src)
                for i in range(n):
                    total_dot += p[i]
                p = dptr(s, src)
                for i in range(n):
                    p[i] += wdot
            chunk_reverse(s, run, a, n, second_order)
    finally:
        set_views(s, run, saved, -1, 0)
        free(saved)
    vptr(s, out)[0] = total         # written last: the run may read the slot's old value
    if second_order:
        tptr(s, out)[0] = total_dot
    return 0
