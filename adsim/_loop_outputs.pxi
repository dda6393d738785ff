# States of a checkpointed loop at chosen step counts (checkpoint_loop's
# save_at): the executor (_loop_run.pxi) copies them out as its first pass
# goes through them, and adds their adjoints to the state's as its reverse
# sweep goes back through them, so a loss reading the loop at many times
# costs no Python per output.

cdef class LoopOutputs:
    """Rows ``row`` of the caller's arrays hold the state after ``index[row]``
    steps (with its tangents in tangent sweeps)."""
    cdef int64_t* at                # the step counts, ascending
    cdef int64_t* row               # ... and the row of each
    cdef int64_t k
    cdef int64_t width              # doubles of a captured state (values, then tangents)
    cdef readonly object values     # (k, width): the captured states
    cdef bint capturing             # until the first turn every state is passed once
    cdef object adjoints            # (k, rows * size) adjoints of the outputs, or None
    cdef object adjoint_tangents    # (k, p * size), second-order sweeps
    cdef int64_t pending            # outputs at + 0 .. pending-1 still to add in reverse

    def __cinit__(self, indices, int64_t width):
        cdef cnp.ndarray idx = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
        cdef cnp.ndarray order = np.argsort(idx, kind="stable").astype(np.int64)
        cdef int64_t i, c = 0, c2 = 0
        self.k = idx.shape[0]
        self.width = width
        self.at = <int64_t*>grow(NULL, &c, max(self.k, 1), sizeof(int64_t))
        self.row = <int64_t*>grow(NULL, &c2, max(self.k, 1), sizeof(int64_t))
        for i in range(self.k):
            self.row[i] = (<int64_t*>cnp.PyArray_DATA(order))[i]
            self.at[i] = (<int64_t*>cnp.PyArray_DATA(idx))[self.row[i]]
        self.values = np.zeros((self.k, width))
        self.capturing = True
        self.pending = self.k

    def __dealloc__(self):
        free(self.at)
        free(self.row)

    cdef int64_t first_at(self, int64_t index) noexcept:
        """The first position of ``index`` among the sorted step counts (k if none)."""
        cdef int64_t lo = 0, hi = self.k, mid
        while lo < hi:
            mid = (lo + hi) // 2
            if self.at[mid] < index:
                lo = mid + 1
            else:
                hi = mid
        return lo

    cdef int64_t next_at(self, int64_t index) noexcept:
        """The first step count to capture from ``index`` on (a huge number if none)."""
        cdef int64_t i = self.first_at(index)
        return self.at[i] if i < self.k else INT64_MAX

    cdef void capture(self, int64_t index, const double* z) noexcept:
        """The state after ``index`` steps is ``z``: copy it to its rows."""
        cdef int64_t i = self.first_at(index)
        cdef double* out = <double*>cnp.PyArray_DATA(<cnp.ndarray>self.values)
        while i < self.k and self.at[i] == index:
            copy_doubles(out + self.row[i] * self.width, z, self.width)
            i += 1

    def set_adjoints(self, adjoints, adjoint_tangents=None):
        """The outputs' adjoints (k, rows * size) and, in second-order sweeps,
        their tangents (k, p * size), added in reverse by ``add_adjoints``."""
        self.adjoints = np.ascontiguousarray(adjoints, dtype=np.float64)
        self.adjoint_tangents = None if adjoint_tangents is None else \
            np.ascontiguousarray(adjoint_tangents, dtype=np.float64)

    cdef void add_adjoints(self, int64_t index, double* w, int64_t nw, double* wdot,
                           int64_t nwdot) noexcept:
        """The reverse sweep is at the state after ``index`` steps, whose
        adjoints are w (and tangents wdot): add those of its outputs (once;
        the sweep goes back through the step counts in decreasing order)."""
        cdef int64_t j
        cdef double* a
        while self.pending and self.at[self.pending - 1] >= index:
            self.pending -= 1
            if self.at[self.pending] != index or self.adjoints is None:
                continue
            a = <double*>cnp.PyArray_DATA(<cnp.ndarray>self.adjoints) + self.row[self.pending] * nw
            for j in range(nw):
                w[j] += a[j]
            if wdot != NULL and self.adjoint_tangents is not None:
                a = <double*>cnp.PyArray_DATA(<cnp.ndarray>self.adjoint_tangents) + \
                    self.row[self.pending] * nwdot
                for j in range(nwdot):
                    wdot[j] += a[j]
