# Linear structural primitives: they move, repeat or add values and have
# no second derivative (their second-order rule is linear_soadjoint).
#
# COPY      [r, a]                      r = a (reshape, ravel, copy)
# FILL      [r, c]                      r = constant c (size of r, or 1)
# BROADCAST [r, a, outer, m, inner]     r[u, k, i] = a[u, i]      (adjoint: SUM)
# SUM       [r, a, outer, m, inner]     r[u, i] = sum_k a[u, k, i] (adjoint: BROADCAST)
# CUMSUM    [r, a, outer, m, inner]     r[u, k, i] = sum_{k' <= k} a[u, k', i]
# GATHER    [r, a, ioff, start, step, inner, outer_step]
#                                       r[j] = a[idx[j]], idx = ints[ioff:]; when step != 0
#                                       idx[j] = start + (j // inner) outer_step + (j % inner) step
#                                       (1-d and 2-d slices: no index loads)
# SCATTER   [r, v, ioff, m, start, step, inner, outer_step]
#                                       r[idx[j]] = v[j] in place (last write wins); when
#                                       step != 0 the indices are strided as for GATHER
# WHERE     [r, a, b, boff]             r[i] = a[i] if mask[i] else b[i]
# GATHER_AT [r, a, i, outer, m, inner]  r[u, j, t] = a[u, i[j], t]: the indices are the
#                                       values of slot i (integer data, held as floats),
#                                       read by every replay and checked there against
#                                       the axis of m (negative ones count from its end)
# SCATTER_AT [r, base, v, i, outer, m, inner, add]
#                                       r = base, then r[u, i[j], t] = v[u, j, t] for j in
#                                       order (the last write wins), or += for every j
#                                       when ``add`` (np.add.at); indices as GATHER_AT's
# SELECT    [r, m, a, b]                r[i] = a[i] if m[i] != 0 else b[i]: np.where on
#                                       boolean data, the mask read at replay
# ARGEXT_AT [r, a, outer, m, inner, want_min]
#                                       r[u, t] = the position k of the max (min) of
#                                       a[u, k, t] (the first; NaN wins, as in NumPy)
# SEARCH    [r, table, v, right]        r[j] = the number of table entries below v[j]
#                                       (right: not above), by NumPy's binary search
#                                       and ordering (NaN above everything)
#
# Compiled into adsim/_structural.pyx; the operand checks of these ops are in _ops/checks.pxi.

cdef inline int64_t position_on_axis(double v, int64_t m) noexcept nogil:
    """The position index value ``v`` picks on an axis of ``m`` elements
    (NumPy's rule for negative indices), or -1 when ``v`` is outside the
    axis or not an integer (NaN included)."""
    cdef int64_t k
    if not (v >= -<double>m and v < <double>m):
        return -1
    k = <int64_t>v
    if <double>k != v:
        return -1
    return k + m if k < 0 else k


cdef void gather_at_map(const int32_t* o, Sweep* s, double* dst, const double* src,
                        bint transpose) noexcept nogil:
    """dst = GATHER_AT(src), or dst += its transpose; an index outside the
    axis (never there after gather_at_value accepted it) moves nothing."""
    cdef const double* idx = vptr(s, o[2])
    cdef int64_t outer = o[3], m = o[4], inner = o[5], k = ref_size(s, o[2])
    cdef int64_t u, j, p, a_base, r_base
    for u in range(outer):
        for j in range(k):
            p = position_on_axis(idx[j], m)
            if p < 0:
                continue
            a_base = (u * m + p) * inner
            r_base = (u * k + j) * inner
            if transpose:
                add_into(dst + a_base, src + r_base, inner)
            else:
                copy_doubles(dst + r_base, src + a_base, inner)


cdef void argext_at_value(Sweep* s, const int32_t* o) noexcept nogil:
    cdef const double* a = vptr(s, o[1])
    cdef double* r = vptr(s, o[0])
    cdef int64_t outer = o[2], m = o[3], inner = o[4], u, t, k, best
    cdef bint want_min = o[5]
    cdef double v, bv
    for u in range(outer):
        for t in range(inner):
            best = 0
            bv = a[u * m * inner + t]
            for k in range(1, m):
                if bv != bv:                 # NaN wins
                    break
                v = a[(u * m + k) * inner + t]
                if v != v or (v < bv if want_min else v > bv):
                    bv = v
                    best = k
            r[u * inner + t] = <double>best


cdef inline bint nan_last_less(double a, double b) noexcept nogil:
    """a < b in NumPy's sort order, where NaN comes after every number."""
    return a < b or (b != b and a == a)


cdef void search_value(Sweep* s, const int32_t* o) noexcept nogil:
    cdef const double* table = vptr(s, o[1])
    cdef const double* v = vptr(s, o[2])
    cdef double* r = vptr(s, o[0])
    cdef int64_t n = ref_size(s, o[1]), k = ref_size(s, o[2]), j, lo, hi, mid
    cdef bint right = o[3]
    cdef double x
    for j in range(k):
        x = v[j]
        lo = 0
        hi = n
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if (not nan_last_less(x, table[mid])) if right else nan_last_less(table[mid], x):
                lo = mid + 1
            else:
                hi = mid
        r[j] = <double>lo


cdef bint indices_inside(Sweep* s, int ref, int64_t m) noexcept nogil:
    """Do the index values of ``ref`` all pick positions of an axis of m?"""
    cdef const double* idx = vptr(s, ref)
    cdef int64_t j
    for j in range(ref_size(s, ref)):
        if position_on_axis(idx[j], m) < 0:
            return False
    return True


cdef void scatter_at_map(const int32_t* o, Sweep* s, double* r, const double* base,
                         const double* v) noexcept nogil:
    """r = SCATTER_AT(base, v) (a NULL base or v counts as zeros)."""
    cdef const double* idx = vptr(s, o[3])
    cdef int64_t outer = o[4], m = o[5], inner = o[6], k = ref_size(s, o[3])
    cdef int64_t u, j, p, t, a_base, v_base
    cdef bint add = o[7]
    if base != NULL:
        copy_doubles(r, base, outer * m * inner)
    else:
        memset(r, 0, <size_t>(outer * m * inner) * sizeof(double))
    if add and v == NULL:
        return
    for u in range(outer):
        for j in range(k):
            p = position_on_axis(idx[j], m)
            if p < 0:
                continue
            a_base = (u * m + p) * inner
            v_base = (u * k + j) * inner
            if add:
                add_into(r + a_base, v + v_base, inner)
            elif v != NULL:
                copy_doubles(r + a_base, v + v_base, inner)
            else:
                memset(r + a_base, 0, <size_t>inner * sizeof(double))


cdef void scatter_at_transpose(const int32_t* o, Sweep* s, double* ar, double* ab,
                               double* av) noexcept nogil:
    """ab += the part of ar that base reaches, av += the part v reaches; ar,
    the result's adjoint, is consumed (its overwritten positions zeroed)."""
    cdef const double* idx = vptr(s, o[3])
    cdef int64_t outer = o[4], m = o[5], inner = o[6], k = ref_size(s, o[3])
    cdef int64_t u, j, p, t, a_base, v_base
    cdef bint add = o[7]
    for u in range(outer):
        for j in range(k - 1, -1, -1):         # the last write to a position wins
            p = position_on_axis(idx[j], m)
            if p < 0:
                continue
            a_base = (u * m + p) * inner
            v_base = (u * k + j) * inner
            if av != NULL:
                add_into(av + v_base, ar + a_base, inner)
            if not add:
                memset(ar + a_base, 0, <size_t>inner * sizeof(double))
    if ab != NULL:
        add_into(ab, ar, outer * m * inner)


cdef void select_into(double* r, const double* m, const double* a, const double* b,
                      int64_t n, int64_t sm, int64_t sa, int64_t sb) noexcept nogil:
    """r = m ? a : b; a NULL operand (a constant's tangent) counts as zero."""
    cdef int64_t i
    for i in range(n):
        if m[i * sm] != 0.0:
            r[i] = a[i * sa] if a != NULL else 0.0
        else:
            r[i] = b[i * sb] if b != NULL else 0.0


cdef int gather_at_value(Sweep* s, const int32_t* o) noexcept nogil:
    """The values of a GATHER_AT; 1 (the replay left the recorded path: NumPy
    would raise IndexError) when an index is outside the axis."""
    cdef const double* idx = vptr(s, o[2])
    cdef int64_t j
    for j in range(ref_size(s, o[2])):
        if position_on_axis(idx[j], o[4]) < 0:
            return 1
    gather_at_map(o, s, vptr(s, o[0]), vptr(s, o[1]), False)
    return 0


cdef void linear_map(int code, const int32_t* o, Sweep* s, double* dst, const double* src) noexcept nogil:
    """dst = L(src) for the one-input linear ops."""
    cdef int64_t outer, m, inner, u, k, i, base, n
    cdef const int32_t* idx
    cdef double acc
    if code == GATHER_AT:
        gather_at_map(o, s, dst, src, False)
    elif code == COPY:
        copy_doubles(dst, src, ref_size(s, o[0]))
    elif code == GATHER:
        n = ref_size(s, o[0])
        if o[4] != 0:
            inner = o[5] if o[5] > 0 else n
            for u in range(n // inner if inner else 0):
                base = o[3] + u * o[6]
                if o[4] == 1:
                    copy_doubles(dst + u * inner, src + base, inner)
                else:
                    for i in range(inner):
                        dst[u * inner + i] = src[base + i * o[4]]
        else:
            idx = s.ints + o[2]
            for i in range(n):
                dst[i] = src[idx[i]]
    else:
        outer = o[2]
        m = o[3]
        inner = o[4]
        if code == BROADCAST:
            for u in range(outer):
                for k in range(m):
                    memcpy(dst + (u * m + k) * inner, src + u * inner, <size_t>inner * sizeof(double))
        elif code == SUM and inner == 1:      # contiguous rows: a plain running sum
            for u in range(outer):
                acc = 0.0
                for k in range(m):
                    acc += src[u * m + k]
                dst[u] = acc
        elif code == SUM:           # rows added in turn: unit stride, each total in the
            for u in range(outer):  # order of the running sum above (bitwise alike)
                for i in range(inner):
                    dst[u * inner + i] = 0.0
                for k in range(m):
                    add_into(dst + u * inner, src + (u * m + k) * inner, inner)
        elif code == CUMSUM:        # row k = row k - 1 + a's row k (in place too)
            for u in range(outer):
                base = u * m * inner
                for k in range(m):
                    for i in range(inner):
                        dst[base + k * inner + i] = (dst[base + (k - 1) * inner + i] if k
                                                     else 0.0) + src[base + k * inner + i]


cdef inline void add_into(double* dst, const double* src, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        dst[i] += src[i]


cdef void linear_map_transpose(int code, const int32_t* o, Sweep* s, double* dst, const double* src) noexcept nogil:
    """dst += L^T(src): the adjoint of linear_map."""
    cdef int64_t outer, m, inner, u, k, i, base, n
    cdef const int32_t* idx
    cdef double acc
    if code == GATHER_AT:
        gather_at_map(o, s, dst, src, True)
    elif code == COPY:
        add_into(dst, src, ref_size(s, o[0]))
    elif code == GATHER:
        n = ref_size(s, o[0])
        if o[4] != 0:
            inner = o[5] if o[5] > 0 else n
            for u in range(n // inner if inner else 0):
                base = o[3] + u * o[6]
                if o[4] == 1:                   # contiguous: a loop the compiler vectorises
                    add_into(dst + base, src + u * inner, inner)
                else:
                    for i in range(inner):
                        dst[base + i * o[4]] += src[u * inner + i]
        else:
            idx = s.ints + o[2]
            for i in range(n):
                dst[idx[i]] += src[i]
    else:
        outer = o[2]
        m = o[3]
        inner = o[4]
        if code == BROADCAST:
            for u in range(outer):
                for k in range(m):
                    base = (u * m + k) * inner
                    for i in range(inner):
                        dst[u * inner + i] += src[base + i]
        elif code == SUM and inner == 1:
            for u in range(outer):
                for k in range(m):
                    dst[u * m + k] += src[u]
        elif code == SUM:
            for u in range(outer):
                for k in range(m):
                    base = (u * m + k) * inner
                    for i in range(inner):
                        dst[base + i] += src[u * inner + i]
        elif code == CUMSUM:
            for u in range(outer):
                for i in range(inner):
                    acc = 0.0
                    base = u * m * inner + i
                    for k in range(m - 1, -1, -1):
                        acc += src[base + k * inner]
                        dst[base + k * inner] += acc


cdef void fill_value(double* dst, const double* src, int64_t n, int64_t n_src) noexcept nogil:
    cdef int64_t i
    if n_src == n:
        copy_doubles(dst, src, n)
    else:
        for i in range(n):
            dst[i] = src[0]


cdef void scatter_into(double* r, const double* v, const int32_t* o, const int32_t* ints,
                       int64_t sv) noexcept nogil:
    """r[idx[j]] = v[j * sv] (zero when v is NULL) for the m indices of a SCATTER."""
    cdef int64_t j, u, i, base, k
    cdef int64_t m = o[3], start = o[4], step = o[5], inner = o[6], outer = o[7]
    cdef const int32_t* idx = ints + o[2]
    if step != 0:                  # a slice: rows of progressions, no index loads
        for u in range(m // inner if inner else 0):
            base = start + u * outer
            if step == 1 and sv == 1 and v != NULL and \
                    (r + base + inner <= v + u * inner or v + u * inner + inner <= r + base):
                # contiguous rows apart (np.pad, slice assignment): a block copy
                memcpy(r + base, v + u * inner, <size_t>inner * sizeof(double))
                continue
            for i in range(inner):
                k = u * inner + i
                r[base + i * step] = v[k * sv] if v != NULL else 0.0
        return
    if v == NULL:
        for j in range(m):
            r[idx[j]] = 0.0
    else:
        for j in range(m):
            r[idx[j]] = v[j * sv]


cdef void where_into(double* r, const double* a, const double* b, const uint8_t* mask,
                     int64_t n, int64_t sa, int64_t sb) noexcept nogil:
    """r = mask ? a : b; a NULL operand (a constant's tangent) counts as zero."""
    cdef int64_t i
    for i in range(n):
        if mask[i]:
            r[i] = a[i * sa] if a != NULL else 0.0
        else:
            r[i] = b[i * sb] if b != NULL else 0.0


# A GATHER or SCATTER of one element (scalar code) is handled by the inline
# one_element_value and one_element_adjoint of _structural.pxd, which the
# sweeps run before calling these kernels; the kernels start with them too.

cdef int structural_value(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef int64_t n = ref_size(s, o[0])
    if one_element_value(s, code, o):
        return 0
    if code == FILL:
        fill_value(vptr(s, o[0]), vptr(s, o[1]), n, ref_size(s, o[1]))
    elif code == GATHER_AT:
        return gather_at_value(s, o)
    elif code == SELECT:
        select_into(vptr(s, o[0]), vptr(s, o[1]), vptr(s, o[2]), vptr(s, o[3]), n,
                    stride_of(s, o[1], n), stride_of(s, o[2], n), stride_of(s, o[3], n))
    elif code == SCATTER_AT:
        if not indices_inside(s, o[3], o[5]):
            return 1                     # NumPy would raise IndexError: off the path
        scatter_at_map(o, s, vptr(s, o[0]), vptr(s, o[1]), vptr(s, o[2]))
    elif code == ARGEXT_AT:
        argext_at_value(s, o)
    elif code == SEARCH:
        search_value(s, o)
    elif code == SCATTER:
        scatter_into(vptr(s, o[0]), vptr(s, o[1]), o, s.ints, stride_of(s, o[1], o[3]))
    elif code == WHERE:
        where_into(vptr(s, o[0]), vptr(s, o[1]), vptr(s, o[2]), s.branches + o[3], n,
                   stride_of(s, o[1], n), stride_of(s, o[2], n))
    else:
        linear_map(code, o, s, vptr(s, o[0]), vptr(s, o[1]))
    return 0


cdef int structural_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef int64_t n = ref_size(s, o[0])
    cdef double* ty = tptr(s, o[0])
    cdef double* ta = tptr(s, o[1])
    cdef double* tb
    cdef int64_t ldy = dir_stride(s, o[0]), lda = dir_stride(s, o[1]), ldb, j
    if code == SELECT:
        ta = tptr(s, o[2])
        tb = tptr(s, o[3])
        lda = dir_stride(s, o[2])
        ldb = dir_stride(s, o[3])
        for j in range(s.p):
            select_into(ty + j * ldy, vptr(s, o[1]), ta + j * lda if ta != NULL else NULL,
                        tb + j * ldb if tb != NULL else NULL, n, stride_of(s, o[1], n),
                        stride_of(s, o[2], n), stride_of(s, o[3], n))
        return 0
    if code == SCATTER_AT:
        tb = tptr(s, o[2])
        ldb = dir_stride(s, o[2])
        for j in range(s.p):
            scatter_at_map(o, s, ty + j * ldy, ta + j * lda if ta != NULL else NULL,
                           tb + j * ldb if tb != NULL else NULL)
        return 0
    if code == FILL or (ta == NULL and code != WHERE):
        if code == SCATTER:
            for j in range(s.p):
                scatter_into(ty + j * ldy, NULL, o, s.ints, 0)
        else:
            for j in range(s.p):
                memset(ty + j * ldy, 0, <size_t>n * sizeof(double))
    elif code == SCATTER:
        for j in range(s.p):
            scatter_into(ty + j * ldy, ta + j * lda, o, s.ints, stride_of(s, o[1], o[3]))
    elif code == WHERE:
        tb = tptr(s, o[2])
        ldb = dir_stride(s, o[2])
        for j in range(s.p):
            where_into(ty + j * ldy, ta + j * lda if ta != NULL else NULL,
                       tb + j * ldb if tb != NULL else NULL, s.branches + o[3], n,
                       stride_of(s, o[1], n), stride_of(s, o[2], n))
    else:
        for j in range(s.p):
            linear_map(code, o, s, ty + j * ldy, ta + j * lda)
    return 0


cdef int structural_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef int64_t n = ref_size(s, o[0])
    cdef double* ay = aptr(s, o[0])
    cdef double* aa = aptr(s, o[1])
    cdef double* ab
    cdef int64_t ldy = dir_stride(s, o[0]), lda = dir_stride(s, o[1])
    cdef int64_t ldb, j, i, sa, sb, sm, m, u, k, base
    cdef const int32_t* idx
    cdef const uint8_t* mask
    cdef const double* mv
    if one_element_adjoint(s, code, o):
        return 0
    if code == FILL:
        return 0
    if code == SELECT:
        aa = aptr(s, o[2])
        ab = aptr(s, o[3])
        lda = dir_stride(s, o[2])
        ldb = dir_stride(s, o[3])
        mv = vptr(s, o[1])
        sm = stride_of(s, o[1], n)
        sa = stride_of(s, o[2], n)
        sb = stride_of(s, o[3], n)
        for j in range(s.q):
            for i in range(n):
                if mv[i * sm] != 0.0:
                    if aa != NULL:
                        aa[j * lda + i * sa] += ay[j * ldy + i]
                elif ab != NULL:
                    ab[j * ldb + i * sb] += ay[j * ldy + i]
        return 0
    if code == SCATTER_AT:
        ab = aptr(s, o[2])
        ldb = dir_stride(s, o[2])
        for j in range(s.q):
            scatter_at_transpose(o, s, ay + j * ldy, aa + j * lda if aa != NULL else NULL,
                                 ab + j * ldb if ab != NULL else NULL)
        return 0
    if code == SCATTER:
        idx = s.ints + o[2]
        m = o[3]
        sa = stride_of(s, o[1], m)
        if o[5] != 0:                       # strided: distinct indices, any order
            for j in range(s.q):
                for u in range(m // o[6] if o[6] else 0):
                    base = o[4] + u * o[7]
                    for k in range(o[6]):
                        i = u * o[6] + k
                        if aa != NULL:
                            aa[j * lda + i * sa] += ay[j * ldy + base + k * o[5]]
                        ay[j * ldy + base + k * o[5]] = 0.0
            return 0
        for j in range(s.q):
            for i in range(m - 1, -1, -1):     # the last write to an index wins
                if aa != NULL:
                    aa[j * lda + i * sa] += ay[j * ldy + idx[i]]
                ay[j * ldy + idx[i]] = 0.0
        return 0
    if code == WHERE:
        ab = aptr(s, o[2])
        ldb = dir_stride(s, o[2])
        mask = s.branches + o[3]
        sa = stride_of(s, o[1], n)
        sb = stride_of(s, o[2], n)
        for j in range(s.q):
            for i in range(n):
                if mask[i]:
                    if aa != NULL:
                        aa[j * lda + i * sa] += ay[j * ldy + i]
                elif ab != NULL:
                    ab[j * ldb + i * sb] += ay[j * ldy + i]
        return 0
    if aa == NULL:
        return 0
    for j in range(s.q):
        linear_map_transpose(code, o, s, aa + j * lda, ay + j * ldy)
    return 0
