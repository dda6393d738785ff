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
# run's size are given views on [a, b) for the chunk (a shifted start and a
# size of b - a; see _sweeps.pxi), and restored after the run. Their tangents
# and adjoints keep their place, direction j of a view starting at j times
# the run's size, so any number of directions is chunked. This needs element
# i of every result to depend on element i of its operands only, so a run holds
#   - unary and binary ops (operands of the run's size, or of size 1),
#   - copies,
#   - strided gathers (a slice x[s:e:k]) whose source no op of the run writes,
#   - 2-d slices (rows of ``inner`` elements, such as P[1:-1, 2:] of a padded
#     grid) of a source of another size that no op of the run writes; the
#     chunks of such a run are then whole rows (RUN_ROW elements);
# and no branch records, scatters, reductions, callbacks or matrix products.

cdef enum:
    RUN_MIN_SIZE = 32768        # smaller runs fit the caches as they are
    RUN_CACHE_DOUBLES = 49152   # per chunk, over the run's slots (about 384 kB)
    RUN_CHUNK_MIN = 1024

# The fields of a run record (a row of the run table) are in _sweeps.pxd.

# The tables of a program without runs, shared (empty, so nothing is written
# into them): the tapes of small arrays, most first replays, skip making them.
_NO_RUNS = tuple(np.zeros(shape, dtype) for shape, dtype in (
    (0, np.int32), ((0, RUN_FIELDS), np.int32), (0, np.int32), (0, np.uint8), (0, np.int64)))
for _empty in _NO_RUNS:
    _empty.flags.writeable = False


cdef inline bint strided_gather(const int32_t* o, int64_t n) noexcept nogil:
    """A one-row strided GATHER: r[i] = a[start + i step]."""
    return o[4] != 0 and (o[5] <= 0 or o[5] == n)


cdef inline int64_t slice_rows(Sweep* s, const int32_t* o, int64_t n) noexcept nogil:
    """For a 2-d slice GATHER of n elements from a source of another size:
    its row length (the chunks must be whole rows); else 0."""
    if o[4] == 0 or o[5] <= 0 or o[5] >= n or n % o[5] != 0 or ref_size(s, o[1]) == n:
        return 0
    return o[5]


cdef bint rotation(Sweep* s, const int32_t* o, int64_t n) noexcept nogil:
    """An indexed GATHER rotating a source of its own size: r[j] = a[(j + k) mod n]."""
    cdef const int32_t* idx = s.ints + o[2]
    cdef int64_t j, k
    if o[4] != 0 or n < 1 or ref_size(s, o[1]) != n:
        return False
    k = idx[0]
    for j in range(n):
        if idx[j] != (j + k) % n:
            return False
    return True


cdef int64_t chunkable_size(Sweep* s, int64_t k) noexcept nogil:
    """The result size of op k if it may join a run, else -1 (sources of
    gathers are checked by the caller)."""
    cdef int code = s.code[k]
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int64_t n
    cdef int i
    if not CHUNKABLE[code] or s.flags[k] & FLAG_INPLACE or o[0] < 0:
        return -1
    n = s.slot_size[o[0]]
    if code == GATHER:
        if o[1] >= 0 and (strided_gather(o, n) or slice_rows(s, o, n) > 0):
            return n
        # a rotation (np.roll) only in runs no sweep splits into chunks, which
        # move the starts of strided gathers but not index lists
        return n if o[1] >= 0 and n <= RUN_CHUNK_MIN and rotation(s, o, n) else -1
    for i in range(1, 1 + ELEMENTWISE_OPERANDS[code]):     # of the result's size, or 1
        if ref_size(s, o[i]) != n and ref_size(s, o[i]) != 1:
            return -1
    return n


cdef inline int elementwise_operands(int code) noexcept nogil:
    """Operands after the result that are read element by element (GATHER
    reads its source by index)."""
    return ELEMENTWISE_OPERANDS[code]


cdef object runs_of(Sweep* program, int64_t n_ops, int64_t n_slots, int64_t min_size):
    """The runs of a program (a sweep from Tape.program_sweep) of at least
    ``min_size`` elements (0: RUN_MIN_SIZE, the size worth chunking; fused
    runs are worth it smaller): (run_of per op, run table, refs,
    shifted-source flag per op, the slot_shift and slot_ld arrays of the
    sweeps). Tape.run_tables and find_runs (adsim/_tape.pyx) compute them
    once per tape."""
    cdef Sweep s = program[0]
    cdef int64_t k, j, m, size, largest = 0
    cdef int code, i, ref
    cdef const int32_t* o
    if min_size <= 0:
        min_size = RUN_MIN_SIZE
    for k in range(n_slots):            # a run is as long as a slot it writes
        largest = max(largest, s.slot_size[k])
    if largest < min_size:
        return (n_ops,) + _NO_RUNS
    run_of = np.full(n_ops, -1, dtype=np.int32)
    shifted = np.zeros(n_ops, dtype=np.uint8)
    table, refs = [], []
    k = 0
    while k < n_ops:
        m = chunkable_size(&s, k)
        if m < min_size:
            k += 1
            continue
        written_here, sources, slots, consts = set(), set(), [], []
        row = 1
        j = k
        while j < n_ops and chunkable_size(&s, j) == m:
            code = s.code[j]
            o = s.opnd + s.start[j]
            if o[0] in sources or (code == GATHER and o[1] in written_here):
                break                     # a gather's source must not change in the run
            if code == GATHER and slice_rows(&s, o, m) > 0:
                if row != 1 and row != slice_rows(&s, o, m):
                    break                 # one row length per run
                row = slice_rows(&s, o, m)
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
            for i in range(k, j):
                run_of[i] = len(table)
                o = s.opnd + s.start[i]
                if s.code[i] == GATHER and o[1] in slots:
                    shifted[i] = 1
            chunk = max(RUN_CHUNK_MIN, RUN_CACHE_DOUBLES // (4 * max(len(slots), 1)))
            table.append((k, j, m, chunk, len(refs), len(slots), len(consts), row))
            refs.extend(slots)
            refs.extend(consts)
        k = max(j, k + 1)
    views = np.zeros(2 * n_slots if table else 0, dtype=np.int64)
    if not table:                   # scalar and small-array tapes keep no per-op arrays
        run_of, shifted = run_of[:0], shifted[:0]
    else:                           # per slot: view shift 0, then direction stride its size
        views[n_slots:] = [s.slot_size[i] for i in range(n_slots)]
    return (n_ops, run_of, np.array(table, dtype=np.int32).reshape(-1, RUN_FIELDS),
            np.array(refs, dtype=np.int32), shifted, views)


cdef inline bint several_directions(Sweep* s) noexcept nogil:
    return (s.tan != NULL and s.p > 1) or (s.adj != NULL and s.q > 1) or \
        (s.adot != NULL and s.p > 1)


cdef inline int32_t run_at(Sweep* s, int64_t k) noexcept nogil:
    """The run op k belongs to, or -1 (always -1 when chunking is off)."""
    return s.run_of[k] if s.run_of != NULL else -1


cdef void set_views(Sweep* s, const int32_t* run, int64_t* saved, int64_t a, int64_t n) noexcept nogil:
    """Point the run's slots and constants at elements [a, a + n) (a < 0:
    restore them; ``saved`` holds the constants' offsets)."""
    cdef const int32_t* refs = s.run_refs + run[RUN_REFS]
    cdef int i
    cdef int ns = run[RUN_N_SLOTS], nc = run[RUN_N_CONSTS]
    for i in range(ns):
        s.slot_shift[refs[i]] = a if a >= 0 else 0
        s.slot_size[refs[i]] = n if a >= 0 else run[RUN_SIZE]
    for i in range(nc):
        s.const_off[refs[ns + i]] = saved[i] + (a if a >= 0 else 0)
        s.const_size[refs[ns + i]] = n if a >= 0 else run[RUN_SIZE]


cdef int64_t* save_views(Sweep* s, const int32_t* run) except NULL nogil:
    cdef const int32_t* refs = s.run_refs + run[RUN_REFS]
    cdef int i, ns = run[RUN_N_SLOTS], nc = run[RUN_N_CONSTS]
    cdef int64_t* saved = <int64_t*>malloc((nc + 1) * sizeof(int64_t))
    if saved == NULL:
        no_memory("a run of elementwise ops", (nc + 1) * <int64_t>sizeof(int64_t))
        return NULL
    for i in range(nc):
        saved[i] = s.const_off[refs[ns + i]]
    return saved


cdef inline const int32_t* chunk_operands(Sweep* s, const int32_t* run, int64_t k, int64_t a,
                                          int64_t n, int32_t* local) noexcept nogil:
    """Operands of op k for the chunk [a, a + n): a gather's start moves to
    the chunk (less the shift of its source's view, if the source has one);
    a 2-d slice starts at the chunk's first row."""
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int i
    if s.code[k] != GATHER:
        return o
    for i in range(7):
        local[i] = o[i]
    if o[5] > 0 and o[5] != run[RUN_SIZE]:           # rows of o[5]; a, n whole rows
        local[3] = <int32_t>(o[3] + a // o[5] * o[6])
    else:
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
    cdef int64_t rows = run[RUN_SIZE] // run[RUN_ROW]
    cdef int64_t length = max(<int64_t>1, chunk_length(s, run) // run[RUN_ROW])
    return (rows + length - 1) // length


cdef inline void chunk_bounds(Sweep* s, const int32_t* run, int64_t c, int64_t* a,
                              int64_t* n) noexcept nogil:
    """Chunk c of a run: equal parts of whole rows, so that no chunk is tiny."""
    cdef int64_t rows = run[RUN_SIZE] // run[RUN_ROW]
    cdef int64_t parts = chunk_count(s, run)
    a[0] = rows * c // parts * run[RUN_ROW]
    n[0] = rows * (c + 1) // parts * run[RUN_ROW] - a[0]


cdef int chunk_forward(Sweep* s, const int32_t* run, int64_t a, int64_t n, bint keep,
                       bint tangents) except -1 nogil:
    """The run's ops on the chunk [a, a + n) (views set): values, tangents,
    and pushes of what they overwrite when ``keep``."""
    cdef int64_t k
    cdef int32_t local[7]
    for k in range(run[RUN_FIRST], run[RUN_END]):
        forward_step(s, k, chunk_operands(s, run, k, a, n, local), keep, tangents)
    return 0


cdef int chunk_reverse(Sweep* s, const int32_t* run, int64_t a, int64_t n,
                       bint second_order) except -1 nogil:
    """The run's ops on the chunk [a, a + n) in reverse: adjoints (and their
    tangents), clearing each result's adjoint and restoring pushed values."""
    cdef int64_t k
    cdef int32_t local[7]
    for k in range(run[RUN_END] - 1, run[RUN_FIRST] - 1, -1):
        reverse_step(s, k, chunk_operands(s, run, k, a, n, local), second_order)
    return 0


cdef inline int chunk_done(Sweep* s, const int32_t* run, int64_t n) except -1 nogil:
    """Count a chunk's work for the Ctrl-C checks."""
    return check_signals(s, n * (run[RUN_END] - run[RUN_FIRST]) * s.width)


cdef int run_forward(Sweep* s, int32_t r, bint keep, bint tangents) except -1 nogil:
    """Values (and tangents) of run r, chunk by chunk."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef int64_t* saved = save_views(s, run)
    cdef int64_t c, a, n
    try:
        for c in range(chunk_count(s, run)):
            chunk_bounds(s, run, c, &a, &n)
            set_views(s, run, saved, a, n)
            chunk_forward(s, run, a, n, keep, tangents)
            chunk_done(s, run, n)
    finally:
        set_views(s, run, saved, -1, 0)
        free(saved)
    return 0


cdef int run_reverse(Sweep* s, int32_t r, bint second_order) except -1 nogil:
    """Adjoints (and their tangents) of run r, chunks and ops in reverse."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef int64_t* saved = save_views(s, run)
    cdef int64_t c, a, n
    try:
        for c in range(chunk_count(s, run) - 1, -1, -1):
            chunk_bounds(s, run, c, &a, &n)
            set_views(s, run, saved, a, n)
            chunk_reverse(s, run, a, n, second_order)
            chunk_done(s, run, n)
    finally:
        set_views(s, run, saved, -1, 0)
        free(saved)
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
    if s.run_of == NULL or k < 1 or s.code[k] != SUM or (s.flags[k] & FLAG_PUSH):
        return -1
    r = s.run_of[k - 1]
    o = s.opnd + s.start[k]
    if r < 0 or s.runs[r * RUN_FIELDS + RUN_END] != k or o[2] != 1 or o[4] != 1:
        return -1
    last = s.opnd + s.start[k - 1]
    if o[1] != last[0] or o[3] != s.runs[r * RUN_FIELDS + RUN_SIZE] or s.slot_size[o[0]] != 1:
        return -1
    return r


cdef int run_and_reverse(Sweep* s, int32_t r, bint second_order) except -1 nogil:
    """Run r and the sum after it, forward and reverse chunk by chunk. The
    output's adjoints (and tangents of the adjoint) must be seeded; its value
    (and tangents) are written, bitwise as the sum op would (running sums)."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef const int32_t* so = s.opnd + s.start[run[RUN_END]]
    cdef int out = so[0], src = so[1]
    cdef int p = s.p if second_order else 0, q = s.q
    cdef int64_t ld = dir_stride(s, src), c, a, n, i, j
    cdef double total = 0.0
    cdef double* x
    cdef double* seeds = <double*>malloc(<size_t>(q + 2 * p) * sizeof(double))
    cdef double* w = seeds                  # the output's adjoints
    cdef double* wdot = seeds + q           # and their tangents
    cdef double* total_dot = seeds + q + p  # the output's tangents
    cdef int64_t* saved = NULL
    if seeds == NULL:
        return no_memory("a run of elementwise ops", (q + 2 * p) * <int64_t>sizeof(double))
    for j in range(q):              # the output's slot may hold a variable the run
        w[j] = aptr(s, out)[j]      # reads, whose adjoint starts at zero (as when
        aptr(s, out)[j] = 0.0       # the sum op is reversed on its own)
    for j in range(p):
        wdot[j] = dptr(s, out)[j]
        dptr(s, out)[j] = 0.0
        total_dot[j] = 0.0
    try:
        saved = save_views(s, run)
        for c in range(chunk_count(s, run)):
            chunk_bounds(s, run, c, &a, &n)
            set_views(s, run, saved, a, n)
            chunk_forward(s, run, a, n, True, second_order)
            x = vptr(s, src)
            for i in range(n):
                total += x[i]
            for j in range(q):
                x = aptr(s, src) + j * ld
                for i in range(n):
                    x[i] += w[j]
            for j in range(p):
                x = tptr(s, src) + j * ld
                for i in range(n):
                    total_dot[j] += x[i]
                x = dptr(s, src) + j * ld
                for i in range(n):
                    x[i] += wdot[j]
            chunk_reverse(s, run, a, n, second_order)
            chunk_done(s, run, 2 * n)
        vptr(s, out)[0] = total     # written last: the run may read the slot's old value
        for j in range(p):
            tptr(s, out)[j] = total_dot[j]
    finally:
        if saved != NULL:
            set_views(s, run, saved, -1, 0)
            free(saved)
        free(seeds)
    return 0


# ---- fused runs: a run compiled into one loop (adsim/_fuse/) ------------------
#
# A run may carry fused kernels, generated from its ops' rows and compiled
# for this processor: every intermediate stays in registers. The values and
# tangents kernels write what run_forward writes when nothing is kept (the
# last value, and tangent, of each slot the run writes); the gradient and
# second-order kernels replace run_and_reverse and write no slot at all
# (slots keep the values they had before the run, which is all a reverse
# sweep after it may read). Each takes one direction, except the vector
# tangents kernel (values and p tangent directions, nothing kept); adjoints
# in several directions stay with the interpreter.

cdef enum:
    FUSED_LOCAL_POINTERS = 128  # a run's pointers on the stack up to this many (32 refs)


cdef void fused_pointers(Sweep* s, const FusedRun* f, double** ptrs) noexcept nogil:
    """Values, tangents, adjoints and adjoint tangents of the kernel's refs
    (NULL where the sweep has none, and for constants), into ``ptrs``."""
    cdef int i, n = f.n_refs
    for i in range(n):
        ptrs[i] = vptr(s, f.refs[i])
        ptrs[n + i] = tptr(s, f.refs[i])
        ptrs[2 * n + i] = aptr(s, f.refs[i])
        ptrs[3 * n + i] = dptr(s, f.refs[i])


cdef int call_fused(Sweep* s, const FusedRun* f, fused_kernel kernel, const double* seeds,
                    double* outs) except -1 nogil:
    cdef double* local[FUSED_LOCAL_POINTERS]
    cdef double** ptrs = local
    cdef int n = f.n_refs
    if 4 * n > FUSED_LOCAL_POINTERS:        # (short steps call this often: no malloc)
        ptrs = <double**>malloc(<size_t>(4 * n) * sizeof(double*))
        if ptrs == NULL:
            return no_memory("a fused run", 4 * n * <int64_t>sizeof(double*))
    fused_pointers(s, f, ptrs)
    kernel(ptrs, ptrs + n, ptrs + 2 * n, ptrs + 3 * n, seeds, outs)
    if ptrs != local:
        free(ptrs)
    return 0


cdef inline int64_t run_work(Sweep* s, int32_t r) noexcept nogil:
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    return <int64_t>run[RUN_SIZE] * (run[RUN_END] - run[RUN_FIRST]) * s.width


cdef inline fused_kernel fused_reversal(Sweep* s, int32_t r, bint second_order) noexcept nogil:
    """The kernel that reverses run r in this sweep, or NULL: one adjoint
    direction (first order), or one adjoint and one tangent direction
    (second order). With one, the run's keeping forward saves what that
    kernel reads instead of what the interpreter's reverse rules read; the
    forward (with tangents exactly when second order) and the reverse of a
    sweep see the same layout, so they choose alike."""
    if s.fused == NULL or s.adj == NULL or s.q != 1:
        return NULL
    if not second_order and s.tan == NULL and s.adot == NULL:
        return s.fused[r].reverse
    if second_order and s.tan != NULL and s.adot != NULL and s.p == 1:
        return s.fused[r].reverse2
    return NULL


cdef bint fused_vector_forward(Sweep* s, int32_t r) except -1 nogil:
    """Run r's values and p directions of tangents by its fused kernel
    (nothing kept); False when it has none."""
    cdef const FusedRun* f = &s.fused[r]
    cdef double* local[FUSED_LOCAL_POINTERS]
    cdef double** ptrs = local
    cdef int n = f.n_refs
    if f.vtangents == NULL:
        return False
    if 4 * n > FUSED_LOCAL_POINTERS:
        ptrs = <double**>malloc(<size_t>(4 * n) * sizeof(double*))
        if ptrs == NULL:
            return no_memory("a fused run", 4 * n * <int64_t>sizeof(double*))
    fused_pointers(s, f, ptrs)
    f.vtangents(ptrs, ptrs + n, s.p)
    if ptrs != local:
        free(ptrs)
    check_signals(s, run_work(s, r))
    return True


cdef bint fused_forward(Sweep* s, int32_t r, bint keep, bint tangents) except -1 nogil:
    """Run r's values (and tangents) by its fused kernel; False when it has
    none for this sweep. A keeping forward first pushes the slots (and
    tangents) the fused reverse reads (FusedRun.saved)."""
    cdef fused_kernel kernel
    cdef const FusedRun* f
    cdef int i
    if s.fused == NULL:
        return False
    if tangents and s.p != 1:
        return not keep and fused_vector_forward(s, r)
    if keep and fused_reversal(s, r, tangents) == NULL:
        return False
    f = &s.fused[r]
    kernel = f.tangents if tangents else f.values
    if kernel == NULL:
        return False
    if keep:
        for i in range(f.n_saved):
            stack_push(s.stack, vptr(s, f.saved[i]), ref_size(s, f.saved[i]))
            if tangents:
                stack_push(s.stack, tptr(s, f.saved[i]), ref_size(s, f.saved[i]))
    call_fused(s, f, kernel, NULL, NULL)
    check_signals(s, run_work(s, r))
    return True


cdef bint fused_run_reverse(Sweep* s, int32_t r, bint second_order) except -1 nogil:
    """The adjoints (and their tangents) of run r by its fused kernel, after
    fused_forward kept it: the saved slots come back from the stack, which
    restores the values every reverse rule before the run reads, and the
    kernel sweeps the run forward and back from them. False when the run is
    not fused so."""
    cdef const FusedRun* f
    cdef fused_kernel kernel = fused_reversal(s, r, second_order)
    cdef int i
    if kernel == NULL:
        return False
    f = &s.fused[r]
    for i in range(f.n_saved - 1, -1, -1):
        if second_order:
            stack_pop(s.stack, tptr(s, f.saved[i]), ref_size(s, f.saved[i]))
        stack_pop(s.stack, vptr(s, f.saved[i]), ref_size(s, f.saved[i]))
    call_fused(s, f, kernel, NULL, NULL)
    check_signals(s, 2 * run_work(s, r))
    return True


cdef int fused_sum(Sweep* s, int32_t r) except -1 nogil:
    """Run r and the sum after it into the scalar output, by its fused sum
    kernel (which writes no slot: nothing after a value replay reads them)."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef int out = (s.opnd + s.start[run[RUN_END]])[0]
    cdef double outs[2]
    call_fused(s, &s.fused[r], s.fused[r].sum, NULL, outs)
    vptr(s, out)[0] = outs[0]
    check_signals(s, run_work(s, r))
    return 0


cdef bint fused_whole_tape(Sweep* s, int32_t r, bint second_order, const int32_t* inputs,
                           int n_inputs, double** caller, const double* seeds,
                           double* outs) except -1 nogil:
    """fused_reverse of run r when it is the whole tape (its first op is the
    tape's first): the inputs' values, tangents, adjoints and adjoint
    tangents are the caller's arrays (``caller``: n_inputs pointers of each,
    in that order), so the replay copies nothing in or out. The adjoints and
    adjoint tangents need not be zeroed: the kernel sets them (seeds[2]
    nonzero: ``fresh``), and those of inputs the run does not read are
    zeroed here. False when the run has no kernel for this sweep."""
    cdef const FusedRun* f = &s.fused[r]
    cdef fused_kernel kernel = f.second_order if second_order else f.gradient
    cdef double* local[FUSED_LOCAL_POINTERS]
    cdef double** ptrs = local
    cdef int i, k, n = f.n_refs
    cdef bint read
    if kernel == NULL or s.runs[r * RUN_FIELDS + RUN_FIRST] != 0:
        return False
    for i in range(n):
        for k in range(n_inputs):
            if f.refs[i] == inputs[k] and view_shift(s, inputs[k]) != 0:
                return False            # (a chunk's shifted view: never at a run's start)
    if 4 * n > FUSED_LOCAL_POINTERS:
        ptrs = <double**>malloc(<size_t>(4 * n) * sizeof(double*))
        if ptrs == NULL:
            return no_memory("a fused run", 4 * n * <int64_t>sizeof(double*))
    fused_pointers(s, f, ptrs)
    for k in range(n_inputs):
        read = False
        for i in range(n):
            if f.refs[i] == inputs[k]:
                read = True
                ptrs[i] = caller[k]
                ptrs[n + i] = caller[n_inputs + k]
                ptrs[2 * n + i] = caller[2 * n_inputs + k]
                ptrs[3 * n + i] = caller[3 * n_inputs + k]
        for i in range(2, 4):
            if not read and caller[i * n_inputs + k] != NULL:
                memset(caller[i * n_inputs + k], 0,
                       <size_t>s.slot_size[inputs[k]] * sizeof(double))
    kernel(ptrs, ptrs + n, ptrs + 2 * n, ptrs + 3 * n, seeds, outs)
    if ptrs != local:
        free(ptrs)
    return True


cdef bint fused_reverse(Sweep* s, int32_t r, bint second_order) except -1 nogil:
    """run_and_reverse of run r by its fused kernel, for one adjoint
    direction (with one tangent direction when ``second_order``); False
    when it has none for this sweep."""
    cdef const int32_t* run = s.runs + r * RUN_FIELDS
    cdef int out = (s.opnd + s.start[run[RUN_END]])[0]
    cdef fused_kernel kernel
    cdef double seeds[3]
    cdef double outs[2]
    if s.fused == NULL or (s.p != 1 if second_order else s.q != 1):
        return False
    kernel = s.fused[r].second_order if second_order else s.fused[r].gradient
    if kernel == NULL:
        return False
    seeds[0] = aptr(s, out)[0]      # the output's slot may hold a variable the run reads,
    aptr(s, out)[0] = 0.0           # whose adjoint starts at zero (as in run_and_reverse)
    seeds[1] = seeds[2] = 0.0       # (the adjoints are the work buffer's: added to)
    if second_order:
        seeds[1] = dptr(s, out)[0]
        dptr(s, out)[0] = 0.0
    call_fused(s, &s.fused[r], kernel, seeds, outs)
    vptr(s, out)[0] = outs[0]
    if second_order:
        tptr(s, out)[0] = outs[1]
    check_signals(s, 2 * run_work(s, r))
    return True
