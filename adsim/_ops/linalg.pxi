# Matrix product C (m x n) = A (m x k) @ B (k x n), row-major, through BLAS.
# MATMUL [r, a, b, m, k, n]; vectors are m = 1 or n = 1, dot is m = n = 1,
# outer is k = 1. Bilinear: the second-order rule pairs each factor's
# tangent with the other's adjoint.
#   tangent:  dC = dA B + A dB
#   adjoint:  Abar += Cbar B^T,  Bbar += A^T Cbar
#   second:   dAbar += dCbar B^T + Cbar dB^T,  dBbar += dA^T Cbar + A^T dCbar

cdef void gemm_rm(bint trans_a, bint trans_b, int M, int N, int K, double alpha,
                  const double* A, const double* B, double beta, double* C) noexcept:
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
                  double beta, double* y) noexcept:
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


cdef void product(bint trans_a, bint trans_b, int M, int N, int K, double alpha,
                  const double* A, const double* B, double beta, double* C) noexcept:
    """C = alpha op(A) op(B) + beta C, choosing dgemv/ddot for thin shapes."""
    cdef int inc = 1
    if M == 1 and N == 1 and beta == 0.0 and K > 0:
        C[0] = alpha * blas.ddot(&K, <double*>A, &inc, <double*>B, &inc)
    elif N == 1:                                  # op(A) (M x K) times a vector
        gemv_rm(trans_a, M, K, alpha, A, B, beta, C)
    elif M == 1:                                  # a row vector times op(B): op(B)^T x
        gemv_rm(not trans_b, N, K, alpha, B, A, beta, C)
    else:
        gemm_rm(trans_a, trans_b, M, N, K, alpha, A, B, beta, C)


cdef int linalg_value(Sweep* s, int code, const int32_t* o) except -1:
    product(False, False, o[3], o[5], o[4], 1.0, vptr(s, o[1]), vptr(s, o[2]), 0.0, vptr(s, o[0]))
    return 0


cdef int linalg_tangent(Sweep* s, int code, const int32_t* o) except -1:
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    cdef double* tC = tptr(s, o[0])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    if tA != NULL:      # all p directions of dA stacked: (p m) x k times B
        product(False, False, s.p * m, n, k, 1.0, tA, B, 0.0, tC)
    else:
        memset(tC, 0, <size_t>(s.p * m * n) * sizeof(double))
    if tB != NULL:
        for j in range(s.p):
            product(False, False, m, n, k, 1.0, A, tB + j * k * n, 1.0, tC + j * m * n)
    return 0


cdef void matmul_adjoint_dirs(Sweep* s, const int32_t* o, double* aC, double* aA,
                              double* aB, int dirs) noexcept:
    """Abar += Cbar B^T and Bbar += A^T Cbar for ``dirs`` stacked directions."""
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    if aA != NULL:
        product(False, True, dirs * m, k, n, 1.0, aC, B, 1.0, aA)
    if aB != NULL:
        for j in range(dirs):
            product(True, False, k, n, m, 1.0, A, aC + j * m * n, 1.0, aB + j * k * n)


cdef int linalg_adjoint(Sweep* s, int code, const int32_t* o) except -1:
    matmul_adjoint_dirs(s, o, aptr(s, o[0]), aptr(s, o[1]), aptr(s, o[2]), s.q)
    return 0


cdef int linalg_soadjoint(Sweep* s, int code, const int32_t* o) except -1:
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef double* aC = aptr(s, o[0])
    cdef double* aA = aptr(s, o[1])
    cdef double* aB = aptr(s, o[2])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    cdef double* dA = dptr(s, o[1])
    cdef double* dB = dptr(s, o[2])
    matmul_adjoint_dirs(s, o, aC, aA, aB, 1)
    matmul_adjoint_dirs(s, o, dptr(s, o[0]), dA, dB, s.p)
    for j in range(s.p):
        if dA != NULL and tB != NULL:       # Cbar dB^T
            product(False, True, m, k, n, 1.0, aC, tB + j * k * n, 1.0, dA + j * m * k)
        if dB != NULL and tA != NULL:       # dA^T Cbar
            product(True, False, k, n, m, 1.0, tA + j * m * k, aC, 1.0, dB + j * k * n)
    return 0
