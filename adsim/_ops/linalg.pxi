# Matrix product C (m x n) = A (m x k) @ B (k x n), row-major, through BLAS.
# MATMUL [r, a, b, m, k, n]; vectors are m = 1 or n = 1, dot is m = n = 1,
# outer is k = 1. Bilinear: the second-order rule pairs each factor's
# tangent with the other's adjoint.
#   tangent:  dC = dA B + A dB
#   adjoint:  Abar += Cbar B^T,  Bbar += A^T Cbar
#   second:   dAbar += dCbar B^T + Cbar dB^T,  dBbar += dA^T Cbar + A^T dCbar
#
# SPMV, the product with a sparse matrix, has its kernels in _ops/sparse.pxi,
# QUADFORM, the quadratic form x^T C x, in _ops/quadform.pxi; the entry
# points below hand them there.
#
# Compiled into adsim/_structural.pyx; the operand checks of these ops are in _ops/checks.pxi.

# Matrix-vector products with several vectors stream the matrix once
# (adsim/_matvec.h says why).
cdef extern from "_matvec.h" nogil:
    void rows_dot "adsim_rows_dot"(int64_t m, int64_t k, const double* A, int D,
                                   double** X, double** Y, bint accumulate)
    void rows_axpy "adsim_rows_axpy"(int64_t m, int64_t k, const double* A, int D,
                                     double** X, double** Y, bint accumulate)


cdef enum MatvecKind:
    NOT_MATVEC = 0
    MAT_VEC = 1          # A (m x k) @ b (k): n == 1
    VEC_MAT = 2          # a (k) @ B (k x n): m == 1


cdef inline MatvecKind matvec_kind(int m, int k, int n) noexcept nogil:
    if k < 2:
        return NOT_MATVEC
    if n == 1 and m > 1:
        return MAT_VEC
    if m == 1 and n > 1:
        return VEC_MAT
    return NOT_MATVEC


cdef void matvec(MatvecKind kind, int m, int k, int n, const double* A, const double* B,
                 int D, double** X, double** Y, bint accumulate) noexcept nogil:
    """Y[d] (+)= A @ X[d] (MAT_VEC) or X[d] @ B (VEC_MAT): the product with the
    op's matrix operand, for D vectors in one pass."""
    if kind == MAT_VEC:
        rows_dot(m, k, A, D, X, Y, accumulate)
    else:
        rows_axpy(k, n, B, D, X, Y, accumulate)


cdef void matvec_transposed(MatvecKind kind, int m, int k, int n, const double* A,
                            const double* B, int D, double** X, double** Y) noexcept nogil:
    """Y[d] += A^T X[d] (MAT_VEC: the vector operand's adjoint) or
    B X[d] (VEC_MAT), for D vectors in one pass."""
    if kind == MAT_VEC:
        rows_axpy(m, k, A, D, X, Y, True)
    else:
        rows_dot(k, n, B, D, X, Y, True)


cdef void gemm_rm(bint trans_a, bint trans_b, int M, int N, int K, double alpha,
                  const double* A, const double* B, double beta, double* C) noexcept nogil:
    """C (M x N, row-major) = alpha op(A) op(B) + beta C, op(A) M x K.

    Row-major C is column-major C^T = op(B)^T op(A)^T, so BLAS gets B first.
    """
    cdef char ta = b'T' if trans_a else b'N'
    cdef char tb = b'T' if trans_b else b'N'
    cdef int lda = M if trans_a else K
    cdef int ldb = K if trans_b else N
    cdef int ldc = N
    if M == 0 or N == 0:
        return
    if K == 0:
        if beta == 0.0:
            memset(C, 0, <size_t>M * N * sizeof(double))
        return
    if lda < 1:
        lda = 1
    if ldb < 1:
        ldb = 1
    blas.dgemm(&tb, &ta, &N, &M, &K, &alpha, <double*>B, &ldb, <double*>A, &lda, &beta, C, &ldc)


cdef void gemv_rm(bint trans_a, int M, int K, double alpha, const double* A, const double* x,
                  double beta, double* y) noexcept nogil:
    """y (M) = alpha op(A) x + beta y for row-major A, op(A) M x K (dgemv is
    several times faster than dgemm with one column)."""
    cdef char t = b'N' if trans_a else b'T'    # row-major A is column-major A^T
    cdef int rows = M if trans_a else K         # the column-major matrix is K x M (or M x K)
    cdef int cols = K if trans_a else M
    cdef int inc = 1
    if M == 0:
        return
    if K == 0:
        if beta == 0.0:
            memset(y, 0, <size_t>M * sizeof(double))
        return
    blas.dgemv(&t, &rows, &cols, &alpha, <double*>A, &rows, <double*>x, &inc, &beta, y, &inc)


cdef void outer(int M, int N, double alpha, const double* a, const double* b, double beta,
                double* C) noexcept nogil:
    """C (M x N) = alpha a b^T + beta C: a loop, where BLAS would cost more to call."""
    cdef const double* vec
    cdef int i, j
    cdef double ai
    if N == 1 or M == 1:                # a scaled vector (the adjoint of a dot): one loop
        ai = alpha * (b[0] if N == 1 else a[0])
        vec = a if N == 1 else b
        if beta == 0.0:
            for i in range(M * N):
                C[i] = ai * vec[i]
        else:
            for i in range(M * N):
                C[i] = beta * C[i] + ai * vec[i]
        return
    for i in range(M):
        ai = alpha * a[i]
        if beta == 0.0:
            for j in range(N):
                C[i * N + j] = ai * b[j]
        else:
            for j in range(N):
                C[i * N + j] = beta * C[i * N + j] + ai * b[j]


cdef void product(bint trans_a, bint trans_b, int M, int N, int K, double alpha,
                  const double* A, const double* B, double beta, double* C) noexcept nogil:
    """C = alpha op(A) op(B) + beta C, choosing dgemv/ddot for thin shapes and a
    plain loop for outer products (K = 1, as in the adjoint of a dot)."""
    cdef int inc = 1
    if K == 1:                          # op(A) is a column, op(B) a row: memory order is moot
        outer(M, N, alpha, A, B, beta, C)
    elif M == 1 and N == 1 and beta == 0.0 and K > 0:
        C[0] = alpha * blas.ddot(&K, <double*>A, &inc, <double*>B, &inc)
    elif N == 1:                                  # op(A) (M x K) times a vector
        gemv_rm(trans_a, M, K, alpha, A, B, beta, C)
    elif M == 1:                                  # a row vector times op(B): op(B)^T x
        gemv_rm(not trans_b, N, K, alpha, B, A, beta, C)
    else:
        gemm_rm(trans_a, trans_b, M, N, K, alpha, A, B, beta, C)


cdef void stacked_product(int dirs, bint trans_b, int m, int N, int K, const double* A,
                         const double* B, double beta, double* C) noexcept nogil:
    """C (dirs m x N) = A (dirs m x K) op(B) + beta C, the directions stacked as
    the rows of one product, or one product per direction when dirs m
    exceeds BLAS's int dimensions."""
    cdef int j
    if <int64_t>dirs * m <= 2147483647:
        product(False, trans_b, dirs * m, N, K, 1.0, A, B, beta, C)
        return
    for j in range(dirs):
        product(False, trans_b, m, N, K, 1.0, A + <int64_t>j * m * K, B, beta,
                C + <int64_t>j * m * N)


cdef inline int vector_operand(MatvecKind kind, const int32_t* o) noexcept nogil:
    return o[2] if kind == MAT_VEC else o[1]


cdef double** pointer_pairs(int D) except NULL nogil:
    """Room for D inputs X and D outputs Y (Y = X + D); free() it."""
    cdef double** X = <double**>malloc(2 * D * sizeof(double*))
    if X == NULL:
        no_memory("a matrix-vector product", 2 * D * <int64_t>sizeof(double*))
    return X


cdef void fill_stack(double** X, double* first, double* rest, int64_t size, int count) noexcept nogil:
    """X = [first, rest, rest + size, ...] (count after first; first may be skipped
    by passing NULL, then the list starts at rest)."""
    cdef int j, at = 0
    if first != NULL:
        X[0] = first
        at = 1
    for j in range(count):
        X[at + j] = rest + j * size


cdef int matvec_sweep(Sweep* s, const int32_t* o, MatvecKind kind, bint with_value) except -1 nogil:
    """Value (if asked) and p tangents of a matrix-vector product: the vector
    operand's value and tangents go through the matrix in one pass; the
    matrix operand's tangents add their own products."""
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef int vec = vector_operand(kind, o)
    cdef double* tvec = tptr(s, vec)
    cdef double* tC = tptr(s, o[0])
    cdef double* tmat = tptr(s, o[1] if kind == MAT_VEC else o[2])
    cdef int tangents = s.p if tvec != NULL else 0
    cdef int D = (1 if with_value else 0) + tangents
    cdef double** X
    if D > 0:
        X = pointer_pairs(D)
        fill_stack(X, vptr(s, vec) if with_value else NULL, tvec, k, tangents)
        fill_stack(X + D, vptr(s, o[0]) if with_value else NULL, tC, m * n, tangents)
        matvec(kind, m, k, n, vptr(s, o[1]), vptr(s, o[2]), D, X, X + D, False)
        free(X)
    if tC == NULL:
        return 0
    if tvec == NULL:
        memset(tC, 0, <size_t>s.p * m * n * sizeof(double))
    if tmat != NULL and kind == MAT_VEC:        # dA b for all directions: (p m) x k times b
        stacked_product(s.p, False, m, 1, k, tmat, vptr(s, o[2]), 1.0, tC)
    elif tmat != NULL:                          # a dB per direction
        for j in range(s.p):
            product(False, False, 1, n, k, 1.0, vptr(s, o[1]), tmat + <int64_t>j * k * n, 1.0, tC + j * n)
    return 0


# ---- products with an infinite or NaN factor --------------------------------------
# BLAS multiplies 0 * inf into NaN; the sweeps' rule is that a zero factor
# contributes zero (chain in _opcodes.pxd), so that forward and reverse mode
# agree (sqrt(x @ x) at x = 0: the infinite adjoint of sqrt meets x = 0; a
# zero tangent meets an infinite entry of A in A @ b). A product without
# NaN met no 0 * inf (any such term would have made its sum NaN), so BLAS's
# result is the rule's; only where a NaN appears is the product formed term
# by term through chain(). Tangents are set, not added to: a NaN in them
# is looked for afterwards (a pass over the result). Adjoints are added to
# arrays that may hold NaN already, so for each one adsim either checks the
# operands it is formed from (a seed that is not finite, or an operand
# that is not, is where 0 * inf can happen) or, when that array is smaller
# than those operands, keeps a copy of it to start again from.

cdef bint all_finite(const double* x, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if not isfinite(x[i]):
            return False
    return True


cdef bint any_nan(const double* x, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if isnan(x[i]):
            return True
    return False


cdef bint overlap(const double* P, int64_t np_, const double* Q, int64_t nq) noexcept nogil:
    """Whether two adjoint arrays share memory (x @ x, x[:-1] @ x[1:])."""
    return P != NULL and Q != NULL and P < Q + nq and Q < P + np_


cdef double* guard_target(double* T, int64_t size, const double* X, int64_t nx,
                          const double* Y, int64_t ny, bint shared,
                          bint* termwise) noexcept nogil:
    """Before products add into the adjoint T (``size`` elements) from the
    operands X and Y (either NULL; the finite seeds are not counted): the
    cheaper of two guards. Either X and Y are checked now (``termwise`` set
    when one is not finite) or T is copied, to be checked by restored()
    after the products (the copy is returned). A T that shares memory with
    the other operand's adjoint (``shared``) is never copied: putting one
    back would undo the other's products."""
    termwise[0] = False
    if T == NULL:
        return NULL
    cdef double* saved = NULL
    # a copy costs about three passes over T (copy, scan, and the malloc's
    # first touch), a check one pass over the operands
    if not shared and (0 if X == NULL else nx) + (0 if Y == NULL else ny) > 3 * size:
        saved = <double*>malloc(<size_t>max(size, 1) * sizeof(double))
    if saved == NULL:
        termwise[0] = not ((X == NULL or all_finite(X, nx)) and (Y == NULL or all_finite(Y, ny)))
        return NULL
    memcpy(saved, T, <size_t>size * sizeof(double))
    return saved


cdef bint restored(double* T, double* saved, int64_t size) noexcept nogil:
    """Whether the products left a NaN in T, then put back as it was before
    them (from guard_target's copy, which is freed)."""
    if saved == NULL:
        return False
    cdef bint bad = any_nan(T, size)
    if bad:
        memcpy(T, saved, <size_t>size * sizeof(double))
    free(saved)
    return bad


cdef void termwise_tangent(Sweep* s, const int32_t* o) noexcept nogil:
    """dC = dA B + A dB for the p directions, each term through chain()."""
    cdef int m = o[3], k = o[4], n = o[5], i, l, j, d
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    cdef double* tC = tptr(s, o[0])
    cdef double acc
    for d in range(s.p):
        for i in range(m):
            for j in range(n):
                acc = 0.0
                for l in range(k):
                    if tA != NULL:
                        acc += chain(tA[<int64_t>d * m * k + i * k + l], B[l * n + j])
                    if tB != NULL:
                        acc += chain(A[i * k + l], tB[<int64_t>d * k * n + l * n + j])
                tC[<int64_t>d * m * n + i * n + j] = acc


cdef void termwise_cross(Sweep* s, const int32_t* o, double* dA, double* dB) noexcept nogil:
    """The second-order cross terms dAbar += Cbar dB^T and dBbar += dA^T Cbar,
    each term through chain()."""
    cdef int m = o[3], k = o[4], n = o[5], i, l, j, d
    cdef double* aC = aptr(s, o[0])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    cdef double acc
    for d in range(s.p):
        if dA != NULL and tB != NULL:
            for i in range(m):
                for l in range(k):
                    acc = 0.0
                    for j in range(n):
                        acc += chain(aC[i * n + j], tB[<int64_t>d * k * n + l * n + j])
                    dA[<int64_t>d * m * k + i * k + l] += acc
        if dB != NULL and tA != NULL:
            for l in range(k):
                for j in range(n):
                    acc = 0.0
                    for i in range(m):
                        acc += chain(tA[<int64_t>d * m * k + i * k + l], aC[i * n + j])
                    dB[<int64_t>d * k * n + l * n + j] += acc

cdef void termwise_adjoint(Sweep* s, const int32_t* o, double* aC, double* aA, double* aB,
                           int dirs) noexcept nogil:
    """Abar += Cbar B^T and Bbar += A^T Cbar, each term through chain()."""
    cdef int m = o[3], k = o[4], n = o[5], i, l, j, d
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    cdef double* C
    cdef double acc
    for d in range(dirs):
        C = aC + <int64_t>d * m * n
        if aA != NULL:
            for i in range(m):
                for l in range(k):
                    acc = 0.0
                    for j in range(n):
                        acc += chain(B[l * n + j], C[i * n + j])
                    aA[<int64_t>d * m * k + i * k + l] += acc
        if aB != NULL:
            for l in range(k):
                for j in range(n):
                    acc = 0.0
                    for i in range(m):
                        acc += chain(A[i * k + l], C[i * n + j])
                    aB[<int64_t>d * k * n + l * n + j] += acc


cdef int linalg_value(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if code == QUADFORM:
        return quadform_value(s, o)
    if code == SPMV:
        return spmv_value(s, o)
    cdef MatvecKind kind = matvec_kind(o[3], o[4], o[5])
    if kind != NOT_MATVEC:
        return matvec_value_only(s, o, kind)
    product(False, False, o[3], o[5], o[4], 1.0, vptr(s, o[1]), vptr(s, o[2]), 0.0, vptr(s, o[0]))
    return 0


cdef int matvec_value_only(Sweep* s, const int32_t* o, MatvecKind kind) except -1 nogil:
    cdef double* X[2]
    X[0] = vptr(s, vector_operand(kind, o))
    X[1] = vptr(s, o[0])
    matvec(kind, o[3], o[4], o[5], vptr(s, o[1]), vptr(s, o[2]), 1, X, X + 1, False)
    return 0


cdef int linalg_value_tangent(Sweep* s, const int32_t* o) except -1 nogil:
    """Value and tangents together: one pass over a matrix for both."""
    cdef MatvecKind kind = matvec_kind(o[3], o[4], o[5])
    if kind == NOT_MATVEC:
        linalg_value(s, MATMUL, o)
        return linalg_tangent(s, MATMUL, o)
    matvec_sweep(s, o, kind, True)
    tangent_rule(s, o)
    return 0


cdef void tangent_rule(Sweep* s, const int32_t* o) noexcept nogil:
    """The products' tangents again term by term where they came out NaN."""
    cdef double* tC = tptr(s, o[0])
    if tC != NULL and any_nan(tC, <int64_t>s.p * o[3] * o[5]):
        termwise_tangent(s, o)


cdef int linalg_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if code == QUADFORM:
        return quadform_tangent(s, o)
    if code == SPMV:
        return spmv_tangent(s, o)
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef MatvecKind kind = matvec_kind(m, k, n)
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    cdef double* tC = tptr(s, o[0])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    if kind != NOT_MATVEC:
        matvec_sweep(s, o, kind, False)
        tangent_rule(s, o)
        return 0
    if tA != NULL:      # all p directions of dA stacked: (p m) x k times B
        stacked_product(s.p, False, m, n, k, tA, B, 0.0, tC)
    else:
        memset(tC, 0, <size_t>s.p * m * n * sizeof(double))
    if tB != NULL:
        for j in range(s.p):
            product(False, False, m, n, k, 1.0, A, tB + <int64_t>j * k * n, 1.0, tC + <int64_t>j * m * n)
    tangent_rule(s, o)
    return 0


cdef int matvec_vector_adjoints(Sweep* s, const int32_t* o, MatvecKind kind, double* aC,
                                double* dC, int dirs, double* avec, double* dvec) except -1 nogil:
    """The vector operand's adjoints avec += M^T aC (one set of ``dirs`` weights)
    and, when dC is given, dvec += M^T dC (p directions): one matrix pass."""
    cdef int m = o[3], k = o[4], n = o[5]
    cdef int more = s.p if dC != NULL else 0
    cdef int D = dirs + more
    cdef double** X = pointer_pairs(D)
    fill_stack(X, NULL, aC, m * n, dirs)
    fill_stack(X + dirs, NULL, dC, m * n, more)
    fill_stack(X + D, NULL, avec, k, dirs)
    fill_stack(X + D + dirs, NULL, dvec, k, more)
    matvec_transposed(kind, m, k, n, vptr(s, o[1]), vptr(s, o[2]), D, X, X + D)
    free(X)
    return 0


cdef void matmul_adjoint_dirs(Sweep* s, const int32_t* o, double* aC, double* aA,
                              double* aB, int dirs, bint vector_part) noexcept nogil:
    """Abar += Cbar B^T and Bbar += A^T Cbar for ``dirs`` stacked directions.
    For matrix-vector products the vector operand's part is left to
    matvec_vector_adjoints unless ``vector_part``."""
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef MatvecKind kind = matvec_kind(m, k, n)
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    if aA != NULL and kind != VEC_MAT:
        stacked_product(dirs, True, m, k, n, aC, B, 1.0, aA)
    if aB != NULL and kind != MAT_VEC:
        for j in range(dirs):
            product(True, False, k, n, m, 1.0, A, aC + <int64_t>j * m * n, 1.0, aB + <int64_t>j * k * n)
    if kind == NOT_MATVEC or not vector_part:
        return
    cdef double* avec = aB if kind == MAT_VEC else aA
    if avec != NULL:
        matvec_vector_adjoints(s, o, kind, aC, NULL, dirs, avec, NULL)


cdef int linalg_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if code == QUADFORM:
        return quadform_adjoint(s, o)
    if code == SPMV:
        return spmv_adjoint(s, o)
    cdef int m = o[3], k = o[4], n = o[5]
    cdef double* aC = aptr(s, o[0])
    cdef double* aA = aptr(s, o[1])
    cdef double* aB = aptr(s, o[2])
    if not all_finite(aC, <int64_t>s.q * m * n):
        termwise_adjoint(s, o, aC, aA, aB, s.q)
        return 0
    cdef int64_t nA = <int64_t>s.q * m * k, nB = <int64_t>s.q * k * n
    cdef bint wA, wB
    cdef bint shared = overlap(aA, nA, aB, nB)
    cdef double* sA = guard_target(aA, nA, vptr(s, o[2]), <int64_t>k * n, NULL, 0, shared, &wA)
    cdef double* sB = guard_target(aB, nB, vptr(s, o[1]), <int64_t>m * k, NULL, 0, shared, &wB)
    if shared and (wA or wB):           # term by term for both, into the one array
        termwise_adjoint(s, o, aC, aA, aB, s.q)
        return 0
    matmul_adjoint_dirs(s, o, aC, NULL if wA else aA, NULL if wB else aB, s.q, True)
    if restored(aA, sA, nA) or wA:
        termwise_adjoint(s, o, aC, aA, NULL, s.q)
    if restored(aB, sB, nB) or wB:
        termwise_adjoint(s, o, aC, NULL, aB, s.q)
    return 0


cdef int linalg_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if code == QUADFORM:
        return quadform_soadjoint(s, o)
    if code == SPMV:
        return spmv_soadjoint(s, o)
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef MatvecKind kind = matvec_kind(m, k, n)
    cdef double* aC = aptr(s, o[0])
    cdef double* dC = dptr(s, o[0])
    cdef double* aA = aptr(s, o[1])
    cdef double* aB = aptr(s, o[2])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    cdef double* dA = dptr(s, o[1])
    cdef double* dB = dptr(s, o[2])
    cdef int64_t nA = <int64_t>m * k, nB = <int64_t>k * n
    if not (all_finite(aC, <int64_t>m * n) and all_finite(dC, <int64_t>s.p * m * n)):
        termwise_second_order(s, o, aA, aB, dA, dB)
        return 0
    cdef bint w[4]
    cdef bint shared = overlap(aA, nA, aB, nB) or overlap(dA, s.p * nA, dB, s.p * nB)
    cdef double* sA = guard_target(aA, nA, vptr(s, o[2]), nB, NULL, 0, shared, w)
    cdef double* sB = guard_target(aB, nB, vptr(s, o[1]), nA, NULL, 0, shared, w + 1)
    cdef double* sdA = guard_target(dA, s.p * nA, vptr(s, o[2]), nB, tB, s.p * nB, shared, w + 2)
    cdef double* sdB = guard_target(dB, s.p * nB, vptr(s, o[1]), nA, tA, s.p * nA, shared, w + 3)
    if w[0] or w[1] or w[2] or w[3]:            # a non-finite operand: all term by term
        free(sA); free(sB); free(sdA); free(sdB)
        termwise_second_order(s, o, aA, aB, dA, dB)
        return 0
    matmul_adjoint_dirs(s, o, aC, aA, aB, 1, False)
    matmul_adjoint_dirs(s, o, dC, dA, dB, s.p, False)
    if kind == MAT_VEC and aB != NULL:          # adjoint and its tangents in one pass
        matvec_vector_adjoints(s, o, kind, aC, dC, 1, aB, dB)
    elif kind == VEC_MAT and aA != NULL:
        matvec_vector_adjoints(s, o, kind, aC, dC, 1, aA, dA)
    for j in range(s.p):
        if dA != NULL and tB != NULL:       # Cbar dB^T
            product(False, True, m, k, n, 1.0, aC, tB + <int64_t>j * k * n, 1.0, dA + <int64_t>j * m * k)
        if dB != NULL and tA != NULL:       # dA^T Cbar
            product(True, False, k, n, m, 1.0, tA + <int64_t>j * m * k, aC, 1.0, dB + <int64_t>j * k * n)
    if restored(aA, sA, nA):
        termwise_adjoint(s, o, aC, aA, NULL, 1)
    if restored(aB, sB, nB):
        termwise_adjoint(s, o, aC, NULL, aB, 1)
    if restored(dA, sdA, s.p * nA):
        termwise_adjoint(s, o, dC, dA, NULL, s.p)
        termwise_cross(s, o, dA, NULL)
    if restored(dB, sdB, s.p * nB):
        termwise_adjoint(s, o, dC, NULL, dB, s.p)
        termwise_cross(s, o, NULL, dB)
    return 0


cdef void termwise_second_order(Sweep* s, const int32_t* o, double* aA, double* aB,
                                double* dA, double* dB) noexcept nogil:
    """The second-order adjoint sweep's terms, each through chain()."""
    termwise_adjoint(s, o, aptr(s, o[0]), aA, aB, 1)
    termwise_adjoint(s, o, dptr(s, o[0]), dA, dB, s.p)
    termwise_cross(s, o, dA, dB)
