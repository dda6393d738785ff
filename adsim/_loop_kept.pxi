# Kept forward sweeps of a while loop's first steps (adsim/_loop_run.pxi).
#
# A turn reverses one step: a keeping forward sweep from the step's state,
# then the adjoint sweep. For the steps of a while loop's first pass the
# keeping sweep can run right away instead of a plain one, and what it
# leaves behind (the value arena at its end and the values it pushed) be
# kept until the step's turn, which then runs the adjoint sweep alone. That
# saves one forward sweep per step where memory is plentiful (a short
# integration with small states); the schedule, its snapshots and its step
# counts are those of the loop without it.


cdef class KeptForwards:
    """Per step 0 .. n-1: the step's tape, and one block with the value
    arena at the end of its keeping forward sweep followed by the ``tops[i]``
    values the sweep pushed. Steps are kept from the first one on while
    their blocks fit in ``allowance`` bytes; a turn takes its block and
    frees it."""
    cdef list tapes
    cdef list tables                    # per step: the fused table its sweep had (an address)
    cdef double** blocks
    cdef int64_t* tops
    cdef int64_t n
    cdef int64_t cap
    cdef readonly int64_t bytes         # held now
    cdef readonly int64_t allowance
    cdef readonly int64_t kept          # steps kept so far
    cdef bint stopped                   # a step was not kept: no later one is

    def __cinit__(self, int64_t allowance):
        self.tapes = []
        self.tables = []
        self.allowance = allowance

    def __dealloc__(self):
        self.close()

    def close(self):
        cdef int64_t i
        if self.blocks != NULL:
            for i in range(self.n):
                PyMem_RawFree(self.blocks[i])
        free(self.blocks)
        free(self.tops)
        self.blocks = NULL
        self.tops = NULL
        self.n = self.cap = self.bytes = 0
        self.tapes = []
        self.tables = []
        self.stopped = True

    cdef bint wants(self, int64_t index, Tape t) noexcept:
        """Should step ``index`` be kept, as the next one, with tape ``t``?
        Not after a step that was not, nor a step whose tape runs Python
        rules (their kept values live in the Python context)."""
        return not self.stopped and index == self.n and not len(t._callbacks) and \
            self.bytes + t.arena_size * <int64_t>sizeof(double) <= self.allowance

    cdef int add(self, Tape t, Sweep* s) except -1:
        """Keep the sweep ``s`` of ``t`` just run forward, keeping (the next
        step), or stop keeping if its block does not fit."""
        cdef int64_t top = s.stack.top, c
        cdef int64_t size = (t.arena_size + top) * <int64_t>sizeof(double)
        cdef double* block
        if self.bytes + size > self.allowance:
            self.stopped = True
            return 0
        block = <double*>PyMem_RawMalloc(<size_t>max(size, 1))
        if block == NULL:
            self.stopped = True
            return 0
        memcpy(block, s.val, <size_t>t.arena_size * sizeof(double))
        memcpy(block + t.arena_size, s.stack.data, <size_t>top * sizeof(double))
        if self.n == self.cap:
            c = self.cap
            self.blocks = <double**>grow(self.blocks, &c, self.n + 1, sizeof(double*))
            self.tops = <int64_t*>grow(self.tops, &self.cap, self.n + 1, sizeof(int64_t))
        self.blocks[self.n] = block
        self.tops[self.n] = top
        self.tapes.append(t)
        self.tables.append(<intptr_t>s.fused)
        self.n += 1
        self.kept += 1
        self.bytes += size
        return 0

    cdef Tape tape_of(self, int64_t index):
        """The tape of kept step ``index``, or None when it was not kept."""
        if 0 <= index < self.n and self.blocks[index] != NULL:
            return <Tape>self.tapes[index]
        return None

    cdef int restore(self, int64_t index, Sweep* s) except -1:
        """Put step ``index``'s arena and pushed values back into ``s`` (a
        sweep of its tape), and free them: its turn runs next."""
        cdef Tape t = <Tape>self.tapes[index]
        if <intptr_t>s.fused != self.tables[index]:
            # what the keeping sweep pushed is what its own kernels reverse
            raise RuntimeError("adsim: another thread fused this loop's step tape between a "
                               "step's forward and reverse sweeps; call again (the tape is "
                               "fused now)")
        restore_block(self, index, s, t.arena_size)
        self.tapes[index] = None
        return 0
