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


cdef int linalg_value(Sweep* s, int code, const int32_t* o) except -1:
    gemm_rm(False, False, o[3], o[5], o[4], 1.0, vptr(s, o[1]), vptr(s, o[2]), 0.0, vptr(s, o[0]))
    return 0


cdef int linalg_tangent(Sweep* s, int code, const int32_t* o) except -1:
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    cdef double* tC = tptr(s, o[0])
    cdef double* tA = tptr(s, o[1])
    cdef double* tB = tptr(s, o[2])
    if tA != NULL:      # all p directions of dA stacked: (p m) x k times B
        gemm_rm(False, False, s.p * m, n, k, 1.0, tA, B, 0.0, tC)
    else:
        memset(tC, 0, <size_t>(s.p * m * n) * sizeof(double))
    if tB != NULL:
        for j in range(s.p):
            gemm_rm(False, False, m, n, k, 1.0, A, tB + j * k * n, 1.0, tC + j * m * n)
    return 0


cdef void matmul_adjoint_dirs(Sweep* s, const int32_t* o, double* aC, double* aA,
                              double* aB, int dirs) noexcept:
    """Abar += Cbar B^T and Bbar += A^T Cbar for ``dirs`` stacked directions."""
    cdef int m = o[3], k = o[4], n = o[5], j
    cdef double* A = vptr(s, o[1])
    cdef double* B = vptr(s, o[2])
    if aA != NULL:
        gemm_rm(False, True, dirs * m, k, n, 1.0, aC, B, 1.0, aA)
    if aB != NULL:
        for j in range(dirs):
            gemm_rm(True, False, k, n, m, 1.0, A, aC + j * m * n, 1.0, aB + j * k * n)


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
            gemm_rm(False, True, m, k, n, 1.0, aC, tB + j * k * n, 1.0, dA + j * m * k)
        if dB != NULL and tA != NULL:       # dA^T Cbar
            gemm_rm(True, False, k, n, m, 1.0, tA + j * m * k, aC, 1.0, dB + j * k * n)
    return 0
