# Growable C buffers and the value stack. Buffers double when full so that
# appending is amortised O(1); nothing here calls Python except to raise.

cdef void* grow(void* ptr, int64_t* cap, int64_t need, size_t itemsize) except NULL:
    """Return ``ptr`` reallocated to hold at least ``need`` items."""
    cdef int64_t c = cap[0]
    cdef void* p
    if need <= c and ptr != NULL:
        return ptr
    if c < 16:
        c = 16
    while c < need:
        c *= 2
    p = realloc(ptr, <size_t>c * itemsize)
    if p == NULL:
        raise MemoryError(f"adsim: cannot grow a tape buffer to {c * itemsize} bytes")
    cap[0] = c
    return p


cdef inline void copy_doubles(double* dst, const double* src, int64_t n) noexcept nogil:
    """memcpy, without the call for the 1-element slots of scalar code."""
    cdef int64_t i
    if n <= 4:
        for i in range(n):
            dst[i] = src[i]
    else:
        memcpy(dst, src, <size_t>n * sizeof(double))


cdef inline void zero_doubles(double* dst, int64_t n) noexcept nogil:
    cdef int64_t i
    if n <= 4:
        for i in range(n):
            dst[i] = 0.0
    else:
        memset(dst, 0, <size_t>n * sizeof(double))


cdef void move_doubles(double* dst, double* src, int64_t n) noexcept nogil:
    """Copy src to dst and zero src, in one pass over src."""
    cdef int64_t i
    for i in range(n):
        dst[i] = src[i]
        src[i] = 0.0


cdef inline int stack_push(DStack* st, const double* src, int64_t n) except -1:
    if st.top + n > st.cap:
        st.data = <double*>grow(st.data, &st.cap, st.top + n, sizeof(double))
    copy_doubles(st.data + st.top, src, n)
    st.top += n
    if st.top > st.peak:
        st.peak = st.top
    return 0


cdef inline void stack_pop(DStack* st, double* dst, int64_t n) noexcept:
    st.top -= n
    copy_doubles(dst, st.data + st.top, n)


cdef int stack_push_indexed(DStack* st, const double* src, const int32_t* idx,
                            int64_t m) except -1:
    cdef int64_t j
    if st.top + m > st.cap:
        st.data = <double*>grow(st.data, &st.cap, st.top + m, sizeof(double))
    for j in range(m):
        st.data[st.top + j] = src[idx[j]]
    st.top += m
    if st.top > st.peak:
        st.peak = st.top
    return 0


cdef inline void stack_pop_indexed(DStack* st, double* dst, const int32_t* idx,
                                   int64_t m) noexcept:
    cdef int64_t j
    st.top -= m
    for j in range(m):
        dst[idx[j]] = st.data[st.top + j]
