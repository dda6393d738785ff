# Growable C buffers and the value stack. Buffers double when full so that
# appending is amortised O(1). The small inline ones (copy_doubles,
# zero_doubles, stack_push, stack_pop, stack_pop_indexed) are in _opcodes.pxd,
# so every module compiles them in. The sweeps run without the GIL: what
# they call here is nogil and reports failure by a return value, and the few
# errors are raised with the GIL taken back (no_memory).

cdef void* grow_to(void* ptr, int64_t* cap, int64_t need, size_t itemsize) noexcept nogil:
    """``ptr`` reallocated to hold at least ``need`` items, or NULL when
    there is no memory (``ptr`` and ``cap`` are then unchanged)."""
    cdef int64_t c = cap[0]
    cdef void* p
    if need <= c and ptr != NULL:
        return ptr
    if c < 16:
        c = 16
    while c < need:
        if c > (<int64_t>1 << 62) // <int64_t>itemsize:
            return NULL
        c *= 2
    p = realloc(ptr, <size_t>c * itemsize)
    if p == NULL:
        return NULL
    cap[0] = c
    return p


cdef void* grow(void* ptr, int64_t* cap, int64_t need, size_t itemsize) except NULL:
    """grow_to, raising MemoryError when there is no memory."""
    cdef void* p = grow_to(ptr, cap, need, itemsize)
    if p == NULL:
        raise MemoryError(f"adsim: cannot grow a tape buffer to {need * <int64_t>itemsize} bytes")
    return p


cdef int no_memory(const char* what, int64_t nbytes) except -1 nogil:
    """Raise MemoryError (taking the GIL): sweeps return -1 after calling this."""
    with gil:
        raise MemoryError(f"adsim: no memory for {what.decode()} ({nbytes} bytes)")


cdef void move_doubles(double* dst, double* src, int64_t n) noexcept nogil:
    """Copy src to dst and zero src, in one pass over src."""
    cdef int64_t i
    for i in range(n):
        dst[i] = src[i]
        src[i] = 0.0


cdef int stack_reserve(DStack* st, int64_t n) except -1 nogil:
    cdef double* p
    if st.top + n > st.cap:
        p = <double*>grow_to(st.data, &st.cap, st.top + n, sizeof(double))
        if p == NULL:
            return no_memory("the value stack", (st.top + n) * <int64_t>sizeof(double))
        st.data = p
    return 0


cdef int stack_push_indexed(DStack* st, const double* src, const int32_t* idx,
                            int64_t m) except -1 nogil:
    cdef int64_t j
    if st.top + m > st.cap:
        stack_reserve(st, m)
    for j in range(m):
        st.data[st.top + j] = src[idx[j]]
    st.top += m
    if st.top > st.peak:
        st.peak = st.top
    return 0
