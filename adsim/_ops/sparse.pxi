# Sparse matrix products (scipy.sparse matrices and arrays times dense ones).
# SPMV [r, a, x, ioff, m, k, n, trans]: S is an m x k matrix stored as CSR, its
# m + 1 row pointers and nnz column indices in the index stream at ioff (the
# pattern, fixed at recording), its nnz values in operand a (a constant for
# a constant matrix, a slot for a matrix assembled from active values).
#   trans = 0:  r (m x n) = S x,   x (k x n), both row-major
#   trans = 1:  r (k x n) = S^T x, x (m x n): the transpose reads the same CSR
# Bilinear in (a, x), like MATMUL; with V(w, z)[p] = sum_j w[i_p, j] z[c_p, j]
# for the entry p at row i_p, column c_p (the product's derivative in the
# values, restricted to the pattern):
#   tangent:  dr = S(a) dx + S(da) x
#   adjoint:  xbar += S(a)^T rbar,  abar += V(rbar, x)   (trans: V(x, rbar))
#   second:   dxbar += S(a)^T drbar + S(da)^T rbar,  dabar += V(drbar, x) + V(rbar, dx)
#
# Compiled into adsim/_structural.pyx; the operand checks are in _ops/checks.pxi.

cdef inline const int32_t* spmv_rows(Sweep* s, const int32_t* o) noexcept nogil:
    return s.ints + o[3]


cdef inline const int32_t* spmv_cols(Sweep* s, const int32_t* o) noexcept nogil:
    return s.ints + o[3] + o[4] + 1


cdef void csr_product(const int32_t* ptr, const int32_t* col, const double* v, int64_t m,
                      int64_t k, int64_t n, bint trans, const double* x, double* y,
                      bint accumulate) noexcept nogil:
    """y (+)= S x (trans: S^T x) for the CSR matrix (ptr, col, v) of m rows and
    k columns, x and y row-major with n columns."""
    cdef int64_t i, p, j, c, rows_out = k if trans else m
    cdef double acc, vi, xi
    if trans:
        if not accumulate:
            memset(y, 0, <size_t>(rows_out * n) * sizeof(double))
        if n == 1:               # one vector: scatter each row's entries
            for i in range(m):
                xi = x[i]
                for p in range(ptr[i], ptr[i + 1]):
                    y[col[p]] += v[p] * xi
            return
        for i in range(m):
            for p in range(ptr[i], ptr[i + 1]):
                c = col[p] * n
                vi = v[p]
                for j in range(n):
                    y[c + j] += vi * x[i * n + j]
        return
    if n == 1:                   # the common case: one vector, one dot per row
        for i in range(m):
            acc = 0.0
            for p in range(ptr[i], ptr[i + 1]):
                acc += v[p] * x[col[p]]
            if accumulate:
                acc += y[i]
            y[i] = acc
        return
    if not accumulate:
        memset(y, 0, <size_t>(rows_out * n) * sizeof(double))
    for i in range(m):
        for p in range(ptr[i], ptr[i + 1]):
            c = col[p] * n
            vi = v[p]
            for j in range(n):
                y[i * n + j] += vi * x[c + j]


cdef void csr_values_adjoint(const int32_t* ptr, const int32_t* col, int64_t m, int64_t n,
                             bint trans, const double* w, const double* z,
                             double* out) noexcept nogil:
    """out[p] += sum_j w[i_p, j] z[c_p, j] (trans: w[c_p, j] z[i_p, j]): the
    derivative of <w, S z> (trans: <w, S^T z>) in the values of S."""
    cdef int64_t i, p, j, r, c
    cdef double acc
    for i in range(m):
        for p in range(ptr[i], ptr[i + 1]):
            r = (col[p] if trans else i) * n
            c = (i if trans else col[p]) * n
            acc = 0.0
            for j in range(n):
                acc += w[r + j] * z[c + j]
            out[p] += acc


cdef inline int64_t spmv_in_rows(const int32_t* o) noexcept nogil:
    """Rows of the op's x (n columns each)."""
    return o[4] if o[7] else o[5]


cdef inline int64_t spmv_out_rows(const int32_t* o) noexcept nogil:
    return o[5] if o[7] else o[4]


cdef int spmv_value(Sweep* s, const int32_t* o) except -1 nogil:
    csr_product(spmv_rows(s, o), spmv_cols(s, o), vptr(s, o[1]), o[4], o[5], o[6], o[7],
                vptr(s, o[2]), vptr(s, o[0]), False)
    return 0


cdef int spmv_tangent(Sweep* s, const int32_t* o) except -1 nogil:
    cdef const int32_t* ptr = spmv_rows(s, o)
    cdef const int32_t* col = spmv_cols(s, o)
    cdef int64_t m = o[4], k = o[5], n = o[6], d
    cdef int64_t xs = spmv_in_rows(o) * n, ys = spmv_out_rows(o) * n, nnz = ref_size(s, o[1])
    cdef double* ty = tptr(s, o[0])
    cdef double* ta = tptr(s, o[1])
    cdef double* tx = tptr(s, o[2])
    for d in range(s.p):
        if tx != NULL:
            csr_product(ptr, col, vptr(s, o[1]), m, k, n, o[7], tx + d * xs, ty + d * ys, False)
        else:
            memset(ty + d * ys, 0, <size_t>ys * sizeof(double))
        if ta != NULL:
            csr_product(ptr, col, ta + d * nnz, m, k, n, o[7], vptr(s, o[2]), ty + d * ys, True)
    return 0


cdef void spmv_adjoint_dirs(Sweep* s, const int32_t* o, const double* ay, double* aa,
                            double* ax, int dirs) noexcept nogil:
    """ax += S^T ay (trans: S ay) and aa += V(ay, x) for ``dirs`` directions."""
    cdef const int32_t* ptr = spmv_rows(s, o)
    cdef const int32_t* col = spmv_cols(s, o)
    cdef int64_t m = o[4], k = o[5], n = o[6], d
    cdef int64_t xs = spmv_in_rows(o) * n, ys = spmv_out_rows(o) * n, nnz = ref_size(s, o[1])
    for d in range(dirs):
        if ax != NULL:
            csr_product(ptr, col, vptr(s, o[1]), m, k, n, not o[7], ay + d * ys, ax + d * xs,
                        True)
        if aa != NULL:
            csr_values_adjoint(ptr, col, m, n, o[7], ay + d * ys, vptr(s, o[2]), aa + d * nnz)


cdef int spmv_adjoint(Sweep* s, const int32_t* o) except -1 nogil:
    spmv_adjoint_dirs(s, o, aptr(s, o[0]), aptr(s, o[1]), aptr(s, o[2]), s.q)
    return 0


cdef int spmv_soadjoint(Sweep* s, const int32_t* o) except -1 nogil:
    cdef const int32_t* ptr = spmv_rows(s, o)
    cdef const int32_t* col = spmv_cols(s, o)
    cdef int64_t m = o[4], k = o[5], n = o[6], d
    cdef int64_t xs = spmv_in_rows(o) * n, ys = spmv_out_rows(o) * n, nnz = ref_size(s, o[1])
    cdef double* ay = aptr(s, o[0])
    cdef double* ta = tptr(s, o[1])
    cdef double* tx = tptr(s, o[2])
    cdef double* da = dptr(s, o[1])
    cdef double* dx = dptr(s, o[2])
    spmv_adjoint_dirs(s, o, ay, aptr(s, o[1]), aptr(s, o[2]), 1)
    spmv_adjoint_dirs(s, o, dptr(s, o[0]), da, dx, s.p)
    for d in range(s.p):
        if dx != NULL and ta != NULL:       # S(da)^T rbar
            csr_product(ptr, col, ta + d * nnz, m, k, n, not o[7], ay, dx + d * xs, True)
        if da != NULL and tx != NULL:       # V(rbar, dx)
            csr_values_adjoint(ptr, col, m, n, o[7], ay, tx + d * xs, da + d * nnz)
    return 0
