# Branch records: outcomes that fix the path through the user's code. They
# have no result slot and no derivative. While recording (the op is
# s.recording_op) they store the outcome; on replay they recompute it and report the first
# difference, so that a tape never returns another branch's derivative.
#
# COMPARE [-1, a, b, kind, boff, n]: outcome of a <kind> b for n elements,
#     stored as bytes at branches[boff:boff+n].
# ARGEXT  [-1, a, outer, m, inner, ioff, want_min]: flat index of the max (or
#     min) over the middle axis of a viewed as (outer, m, inner), stored at
#     ints[ioff:ioff+outer*inner]; GATHER ops read the same indices.
#
# Compiled into adsim/_sweeps.pyx; the operand checks of these ops are in _ops/checks.pxi.

cdef inline uint8_t compare_one(double a, double b, int kind) noexcept nogil:
    if kind == CMP_LT:
        return a < b
    if kind == CMP_LE:
        return a <= b
    if kind == CMP_GT:
        return a > b
    if kind == CMP_GE:
        return a >= b
    if kind == CMP_EQ:
        return a == b
    return a != b


cdef int compare_value(Sweep* s, const int32_t* o, bint recording) except -1 nogil:
    cdef double* a = vptr(s, o[1])
    cdef double* b = vptr(s, o[2])
    cdef int kind = o[3]
    cdef uint8_t* rec = s.branches + o[4]
    cdef int64_t n = o[5]
    cdef int64_t sa = stride_of(s, o[1], n), sb = stride_of(s, o[2], n)
    cdef int64_t i
    cdef uint8_t outcome
    for i in range(n):
        outcome = compare_one(a[i * sa], b[i * sb], kind)
        if recording:
            rec[i] = outcome
        elif rec[i] != outcome:
            return 1
    return 0


cdef int argext_value(Sweep* s, const int32_t* o, bint recording) except -1 nogil:
    cdef double* a = vptr(s, o[1])
    cdef int64_t outer = o[2], m = o[3], inner = o[4]
    cdef int32_t* rec = s.ints + o[5]
    cdef bint want_min = o[6]
    cdef int64_t u, i, k, base, best
    cdef double v, bv
    for u in range(outer):
        for i in range(inner):
            base = u * m * inner + i
            best = base
            bv = a[base]
            for k in range(1, m):
                if bv != bv:             # NaN wins, as in NumPy
                    break
                v = a[base + k * inner]
                if v != v or (v < bv if want_min else v > bv):
                    bv = v
                    best = base + k * inner
            if recording:
                rec[u * inner + i] = <int32_t>best
            elif rec[u * inner + i] != best:
                return 1
    return 0


cdef int branch_value(Sweep* s, int code, const int32_t* o, int64_t k) except -1 nogil:
    cdef bint recording = k == s.recording_op
    if code == COMPARE:
        return compare_value(s, o, recording)
    return argext_value(s, o, recording)
