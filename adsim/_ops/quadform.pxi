# The quadratic form q = x^T C x of a constant square matrix C (k x k).
# QUADFORM [r, c, x, g, k, form] is made by the optimisation at finish from
# y = C @ x (or x @ C) whose only reader is a dot of y with the same x
# (_optimise.pxi, fuse_quadratic_forms). The value's pass over C also leaves
# the gradient g = (C + C^T) x in the op's own slot g (which no other op
# reads), so that the tangent and adjoint rules read g instead of C: a
# gradient reads C once, where the two products read it twice (A x
# forward, A^T ybar in reverse).
#   value:    y = C x (QF_TRANSPOSED: y = x C, the product the recording made),
#             q = x . y, g = y + (the other product) from the same pass over C;
#             g = 2 y when C is symmetric (QF_SYMMETRIC, checked exactly once),
#             y then read from C's upper triangle alone (half the memory)
#   tangent:  dq = g . dx
#   adjoint:  xbar += qbar g
#   second:   dxbar += dqbar g + qbar (C + C^T) dx   (one pass over C)
# A symmetric C's value is the recorded one to rounding (its sums are taken
# in another order than the recording's product). Every factor meets its
# seed through chain() (a zero factor contributes zero); the op is only made
# for a C of finite values.
#
# A batched program (adsim/_batch_rewrite.py) holds the forms of B members
# in one op: r of B values, x and g of k x B (element i of member b at
# i B + b), the products over the batch through BLAS.
#
# Compiled into adsim/_structural.pyx beside linalg.pxi, whose entry points
# hand it the op; its operand check is in _ops/checks.pxi.

cdef extern from "_matvec.h" nogil:
    void rows_dot_axpy "adsim_rows_dot_axpy"(int64_t k, const double* A, const double* x,
                                             double* y, double* z)
    void symmetric_rows_dot "adsim_symmetric_rows_dot"(int64_t k, const double* A,
                                                       const double* x, double* y)


cdef enum QuadformBits:
    QF_TRANSPOSED = 1       # the value is x . (x @ C)
    QF_SYMMETRIC = 2        # C == C^T exactly


cdef double* scratch(int64_t n, const char* what) except NULL nogil:
    cdef double* p = <double*>malloc(<size_t>max(n, 1) * sizeof(double))
    if p == NULL:
        no_memory(what, n * <int64_t>sizeof(double))
    return p


cdef inline void form_products(const double* C, int form, int64_t k, int64_t B,
                               const double* X, double* Y, bint other, double beta) noexcept nogil:
    """Y = M X + beta Y for X and Y of k x B: M the value's product (C, or C^T
    for QF_TRANSPOSED), or the other one when ``other``."""
    cdef bint transposed = (form & QF_TRANSPOSED) != 0
    product(transposed != other, False, <int>k, <int>B, <int>k, 1.0, C, X, beta, Y)


cdef int quadform_value(Sweep* s, const int32_t* o) except -1 nogil:
    cdef int64_t k = o[4], B = s.slot_size[o[0]], i, b
    cdef int form = o[5], kk = o[4], inc = 1
    cdef const double* C = vptr(s, o[1])
    cdef double* x = vptr(s, o[2])
    cdef double* g = vptr(s, o[3])
    cdef double* q = vptr(s, o[0])
    cdef double* other = NULL
    cdef double* X[2]
    X[0] = x
    X[1] = g
    if B > 1:                                   # a batch: y = M X, q_b = x_b . y_b
        form_products(C, form, k, B, x, g, False, 0.0)
        memset(q, 0, <size_t>B * sizeof(double))
        for i in range(k):
            for b in range(B):
                q[b] += x[i * B + b] * g[i * B + b]
        if not form & QF_SYMMETRIC:
            other = scratch(k * B, "a quadratic form")
            form_products(C, form, k, B, x, other, True, 0.0)
    elif form & QF_SYMMETRIC:                   # C x = x C, from half of C
        symmetric_rows_dot(k, C, x, g)
        q[0] = 1.0 * blas.ddot(&kk, x, &inc, g, &inc)
    else:                                       # both products in one pass over C
        other = scratch(k, "a quadratic form")
        if form & QF_TRANSPOSED:
            rows_dot_axpy(k, C, x, other, g)
        else:
            rows_dot_axpy(k, C, x, g, other)
        q[0] = 1.0 * blas.ddot(&kk, x, &inc, g, &inc)
    if other == NULL:
        for i in range(k * B):
            g[i] = g[i] + g[i]
    else:
        for i in range(k * B):
            g[i] += other[i]
        free(other)
    return 0


cdef int quadform_tangent(Sweep* s, const int32_t* o) except -1 nogil:
    """dq = g . dx for the p directions: no pass over C."""
    cdef int64_t k = o[4], B = s.slot_size[o[0]], i, b
    cdef int d
    cdef double* tq = tptr(s, o[0])
    cdef double* tx = tptr(s, o[2])
    cdef const double* g = vptr(s, o[3])
    cdef const double* v
    cdef double* t
    if tq == NULL:
        return 0
    memset(tq, 0, <size_t>s.p * B * sizeof(double))
    if tx == NULL:
        return 0
    for d in range(s.p):
        v = tx + <int64_t>d * k * B
        t = tq + <int64_t>d * B
        for i in range(k):
            for b in range(B):
                t[b] += chain(g[i * B + b], v[i * B + b])
    return 0


cdef void add_scaled(double* out, const double* w, const double* v, int64_t k,
                     int64_t B) noexcept nogil:
    """out[i, b] += w[b] v[i, b] (k x B), each term through chain(); nothing
    for a member whose weight is zero."""
    cdef int64_t i, b
    if B == 1:
        if w[0] == 0.0:
            return
        for i in range(k):
            out[i] += chain(w[0], v[i])
        return
    for i in range(k):
        for b in range(B):
            if w[b] != 0.0:
                out[i * B + b] += chain(w[b], v[i * B + b])


cdef int quadform_adjoint(Sweep* s, const int32_t* o) except -1 nogil:
    """xbar += qbar g for the q directions: no pass over C."""
    cdef int64_t k = o[4], B = s.slot_size[o[0]]
    cdef int d
    cdef const double* aq = aptr(s, o[0])
    cdef double* ax = aptr(s, o[2])
    if ax == NULL:
        return 0
    for d in range(s.q):
        add_scaled(ax + <int64_t>d * k * B, aq + <int64_t>d * B, vptr(s, o[3]), k, B)
    return 0


cdef int quadform_soadjoint(Sweep* s, const int32_t* o) except -1 nogil:
    """xbar += qbar g; dxbar += dqbar g + qbar (C + C^T) dx (one pass over C
    for all p directions: two when C is not symmetric, and per direction in
    a batch)."""
    cdef int64_t k = o[4], B = s.slot_size[o[0]], i, n = k * B
    cdef int d, form = o[5]
    cdef const double* w = aptr(s, o[0])
    cdef const double* dq = dptr(s, o[0])
    cdef const double* g = vptr(s, o[3])
    cdef const double* C = vptr(s, o[1])
    cdef double* ax = aptr(s, o[2])
    cdef double* dx = dptr(s, o[2])
    cdef double* tx = tptr(s, o[2])
    cdef double* H
    cdef double** X
    cdef bint weighted = False
    if ax != NULL:
        add_scaled(ax, w, g, k, B)
    if dx == NULL:
        return 0
    for d in range(s.p):
        add_scaled(dx + d * n, dq + <int64_t>d * B, g, k, B)
    for i in range(B):
        weighted = weighted or w[i] != 0.0
    if not weighted or tx == NULL or s.p == 0:
        return 0
    H = scratch(s.p * n, "a quadratic form's second-order adjoint")
    if B == 1:
        X = pointer_pairs(s.p)
        fill_stack(X, NULL, tx, k, s.p)
        fill_stack(X + s.p, NULL, H, k, s.p)
        rows_dot(k, k, C, s.p, X, X + s.p, False)             # C dx
        if not form & QF_SYMMETRIC:
            rows_axpy(k, k, C, s.p, X, X + s.p, True)         # + C^T dx
        free(X)
    else:
        for d in range(s.p):
            form_products(C, 0, k, B, tx + d * n, H + d * n, False, 0.0)
            if not form & QF_SYMMETRIC:
                form_products(C, 0, k, B, tx + d * n, H + d * n, True, 1.0)
    if form & QF_SYMMETRIC:
        for i in range(s.p * n):
            H[i] = H[i] + H[i]
    for d in range(s.p):
        add_scaled(dx + d * n, w, H + d * n, k, B)
    free(H)
    return 0
