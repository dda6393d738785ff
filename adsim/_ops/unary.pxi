# Unary elementwise primitives. Each primitive is one block: its value
# y = f(x; c) and its rule, which writes d[0] = f'(x) and, when order >= 2,
# d[1] = f''(x), both given x and the computed y; most blocks are generated
# from the expressions of their rows in adsim/ops.py (unary_rules.pxi).
# Tangent, adjoint and second-order kernels below are shared; sparsity is
# elementwise (identity) and the Hessian class is in the row.
#
# Compiled into adsim/_sweeps.pyx; the operand checks of these ops are in _ops/checks.pxi.

ctypedef double (*unary_value_fn)(double x, double c) noexcept nogil
ctypedef void (*unary_rule_fn)(double x, double y, double c, int order, double* d) noexcept nogil

cdef unary_value_fn UNARY_VALUE[<int>UNARY_END]
cdef unary_rule_fn UNARY_RULE[<int>UNARY_END]

cdef void register_unary(int code, unary_value_fn value, unary_rule_fn rule):
    UNARY_VALUE[code] = value
    UNARY_RULE[code] = rule

cdef double LN2 = log(2.0)
cdef double LN10 = log(10.0)

# The ops whose rows in adsim/ops.py give value, slope and curvature as
# expressions: their blocks are generated from the rows.
include "unary_rules.pxi"

# The ops written by hand: a value or rule with cases an expression does
# not state (the side of abs, exact zeros of powers at special parameters).
# Their C is in adsim/_elementwise.h, which the fused kernels include too.

cdef extern from "_elementwise.h":
    double adsim_abs_value(double x) noexcept nogil
    double adsim_abs_slope(double x) noexcept nogil
    double adsim_sign_value(double x) noexcept nogil
    double adsim_pow_c_value(double x, double c) noexcept nogil
    double adsim_pow_c_slope(double x, double c) noexcept nogil
    double adsim_pow_c_curvature(double x, double c) noexcept nogil
    double adsim_rpow_c_value(double x, double c) noexcept nogil
    double adsim_rpow_c_slope(double y, double c) noexcept nogil
    double adsim_rpow_c_curvature(double y, double c) noexcept nogil

# |x|; the side is fixed by a COMPARE recorded before it
cdef double abs_value(double x, double c) noexcept nogil:
    return adsim_abs_value(x)
cdef void abs_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = adsim_abs_slope(x)
    d[1] = 0.0
register_unary(ABS, abs_value, abs_rule)

# sign(x): piecewise constant, zero derivative
cdef double sign_value(double x, double c) noexcept nogil:
    return adsim_sign_value(x)
cdef void sign_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(SIGN, sign_value, sign_rule)

# x^c
cdef double pow_c_value(double x, double c) noexcept nogil:
    return adsim_pow_c_value(x, c)
cdef void pow_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = adsim_pow_c_slope(x, c)
    if order > 1:
        d[1] = adsim_pow_c_curvature(x, c)
register_unary(POW_C, pow_c_value, pow_c_rule)

# c^x
cdef double rpow_c_value(double x, double c) noexcept nogil:
    return adsim_rpow_c_value(x, c)
cdef void rpow_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = adsim_rpow_c_slope(y, c)
    d[1] = adsim_rpow_c_curvature(y, c)
register_unary(RPOW_C, rpow_c_value, rpow_c_rule)

# ---- kernels shared by all unary primitives: operands [r, x, c_index] ----

cdef inline bint has_constant_slope(int code) noexcept nogil:
    """The ops whose derivative does not depend on x (adsim/ops.py)."""
    return CONSTANT_SLOPE[code]


cdef inline bint constant_slope(int code, double c, double* slope) noexcept nogil:
    """True for the ops whose derivative does not depend on x (then *slope
    is it): their kernels skip the per-element rule call."""
    cdef double d[2]
    if has_constant_slope(code):
        UNARY_RULE[code](0.0, 0.0, c, 1, d)
        slope[0] = d[0]
        return True
    return False


cdef inline bint is_square(int code, double c) noexcept nogil:
    return code == SQUARE or (code == POW_C and c == 2.0)


cdef inline double unary_param(Sweep* s, const int32_t* o) noexcept nogil:
    return s.consts[o[2]] if o[2] >= 0 else 0.0


cdef int unary_value(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* x = vptr(s, o[1])
    cdef double c = unary_param(s, o)
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t i
    cdef unary_value_fn f = UNARY_VALUE[code]
    if code == MUL_C:                  # unit-stride loops the compiler vectorises
        for i in range(n):
            y[i] = x[i] * c
    elif code == ADD_C:
        for i in range(n):
            y[i] = x[i] + c
    elif code == NEG:
        for i in range(n):
            y[i] = -x[i]
    elif code == RSUB_C:
        for i in range(n):
            y[i] = c - x[i]
    elif code == SQUARE or (code == POW_C and c == 2.0):
        for i in range(n):
            y[i] = x[i] * x[i]
    elif code == POW_C and c == 3.0:
        for i in range(n):
            y[i] = x[i] * x[i] * x[i]
    else:
        for i in range(n):
            y[i] = f(x[i], c)
    return 0


cdef int unary_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* x = vptr(s, o[1])
    cdef double* ty = tptr(s, o[0])
    cdef double* tx = tptr(s, o[1])
    cdef double c = unary_param(s, o)
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t ldy = dir_stride(s, o[0]), ldx = dir_stride(s, o[1])
    cdef int64_t i, j
    cdef double d[2]
    cdef unary_rule_fn rule = UNARY_RULE[code]
    cdef double slope
    if tx == NULL:
        for j in range(s.p):
            memset(ty + j * ldy, 0, <size_t>n * sizeof(double))
        return 0
    if constant_slope(code, c, &slope):
        for j in range(s.p):
            for i in range(n):
                ty[j * ldy + i] = scaled(slope, tx[j * ldx + i])
        return 0
    if is_square(code, c):
        for j in range(s.p):
            for i in range(n):
                ty[j * ldy + i] = chain(2.0 * x[i], tx[j * ldx + i])
        return 0
    for i in range(n):
        rule(x[i], y[i], c, 1, d)
        for j in range(s.p):
            ty[j * ldy + i] = chain(d[0], tx[j * ldx + i])
    return 0


cdef int unary_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* x = vptr(s, o[1])
    cdef double* ay = aptr(s, o[0])
    cdef double* ax = aptr(s, o[1])
    cdef double c = unary_param(s, o)
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t ldy = dir_stride(s, o[0]), ldx = dir_stride(s, o[1])
    cdef int64_t i, j
    cdef double d[2]
    cdef unary_rule_fn rule = UNARY_RULE[code]
    if ax == NULL:
        return 0
    cdef double slope
    if constant_slope(code, c, &slope):
        for j in range(s.q):
            for i in range(n):
                ax[j * ldx + i] += scaled(slope, ay[j * ldy + i])
        return 0
    if is_square(code, c):                     # 2x, without a call per element
        for j in range(s.q):
            for i in range(n):
                ax[j * ldx + i] += chain(2.0 * x[i], ay[j * ldy + i])
        return 0
    for i in range(n):
        rule(x[i], y[i], c, 1, d)
        for j in range(s.q):
            ax[j * ldx + i] += chain(d[0], ay[j * ldy + i])
    return 0


cdef int unary_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* x = vptr(s, o[1])
    cdef double* ay = aptr(s, o[0])
    cdef double* ax = aptr(s, o[1])
    cdef double* dy = dptr(s, o[0])
    cdef double* dx = dptr(s, o[1])
    cdef double* tx = tptr(s, o[1])
    cdef double c = unary_param(s, o)
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t ldy = dir_stride(s, o[0]), ldx = dir_stride(s, o[1])
    cdef int64_t i, j
    cdef double d[2]
    cdef unary_rule_fn rule = UNARY_RULE[code]
    if ax == NULL:
        return 0
    cdef double h, slope
    if constant_slope(code, c, &slope):        # linear: no second-derivative term
        for i in range(n):
            ax[i] += scaled(slope, ay[i])
        for j in range(s.p):
            for i in range(n):
                dx[j * ldx + i] += scaled(slope, dy[j * ldy + i])
        return 0
    if is_square(code, c):
        for i in range(n):
            ax[i] += chain(2.0 * x[i], ay[i])
        for j in range(s.p):
            for i in range(n):
                dx[j * ldx + i] += chain(2.0 * x[i], dy[j * ldy + i]) + \
                    chain(2.0 * tx[j * ldx + i], ay[i])
        return 0
    for i in range(n):
        rule(x[i], y[i], c, 2, d)
        ax[i] += chain(d[0], ay[i])
        h = chain(d[1], ay[i])                  # the curvature term, zero with the adjoint
        for j in range(s.p):
            dx[j * ldx + i] += chain(d[0], dy[j * ldy + i]) + chain(tx[j * ldx + i], h)
    return 0
