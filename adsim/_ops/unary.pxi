# Unary elementwise primitives. Each primitive is one block: its value
# y = f(x; c) and its rule, which writes d[0] = f'(x) and, when order >= 2,
# d[1] = f''(x), both given x and the computed y. Tangent, adjoint and
# second-order kernels below are shared; sparsity is elementwise (identity)
# and the Hessian class (LINEAR or NONLINEAR) is in adsim/ops.py.
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

# -x
cdef double neg_value(double x, double c) noexcept nogil:
    return -x
cdef void neg_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -1.0
    d[1] = 0.0
register_unary(NEG, neg_value, neg_rule)

# |x|; the side is fixed by a COMPARE recorded before it
cdef double abs_value(double x, double c) noexcept nogil:
    return fabs(x)
cdef void abs_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 if x >= 0.0 else -1.0
    d[1] = 0.0
register_unary(ABS, abs_value, abs_rule)

# sign(x): piecewise constant, zero derivative
cdef double sign_value(double x, double c) noexcept nogil:
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return x    # 0 stays 0, nan stays nan
cdef void sign_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(SIGN, sign_value, sign_rule)

# sqrt(x): y' = 1/(2y), y'' = -1/(4 x y)
cdef double sqrt_value(double x, double c) noexcept nogil:
    return sqrt(x)
cdef void sqrt_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.5 / y
    if order > 1:
        d[1] = -0.25 / (x * y)
register_unary(SQRT, sqrt_value, sqrt_rule)

# cbrt(x): y' = 1/(3 y^2), y'' = -2/(9 y^5)
cdef double cbrt_value(double x, double c) noexcept nogil:
    return cbrt(x)
cdef void cbrt_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (3.0 * y * y)
    if order > 1:
        d[1] = -2.0 / (9.0 * y * y * y * y * y)
register_unary(CBRT, cbrt_value, cbrt_rule)

# x^2
cdef double square_value(double x, double c) noexcept nogil:
    return x * x
cdef void square_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 2.0 * x
    d[1] = 2.0
register_unary(SQUARE, square_value, square_rule)

# 1/x: y' = -y^2, y'' = 2 y^3
cdef double reciprocal_value(double x, double c) noexcept nogil:
    return 1.0 / x
cdef void reciprocal_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -y * y
    d[1] = 2.0 * y * y * y
register_unary(RECIPROCAL, reciprocal_value, reciprocal_rule)

# e^x
cdef double exp_value(double x, double c) noexcept nogil:
    return exp(x)
cdef void exp_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = y
    d[1] = y
register_unary(EXP, exp_value, exp_rule)

# 2^x
cdef double exp2_value(double x, double c) noexcept nogil:
    return exp2(x)
cdef void exp2_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = y * LN2
    d[1] = y * LN2 * LN2
register_unary(EXP2, exp2_value, exp2_rule)

# e^x - 1
cdef double expm1_value(double x, double c) noexcept nogil:
    return expm1(x)
cdef void expm1_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = y + 1.0
    d[1] = y + 1.0
register_unary(EXPM1, expm1_value, expm1_rule)

# ln x
cdef double log_value(double x, double c) noexcept nogil:
    return log(x)
cdef void log_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / x
    d[1] = -1.0 / (x * x)
register_unary(LOG, log_value, log_rule)

# log2 x
cdef double log2_value(double x, double c) noexcept nogil:
    return log2(x)
cdef void log2_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (x * LN2)
    d[1] = -1.0 / (x * x * LN2)
register_unary(LOG2, log2_value, log2_rule)

# log10 x
cdef double log10_value(double x, double c) noexcept nogil:
    return log10(x)
cdef void log10_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (x * LN10)
    d[1] = -1.0 / (x * x * LN10)
register_unary(LOG10, log10_value, log10_rule)

# ln(1 + x)
cdef double log1p_value(double x, double c) noexcept nogil:
    return log1p(x)
cdef void log1p_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (1.0 + x)
    d[1] = -d[0] * d[0]
register_unary(LOG1P, log1p_value, log1p_rule)

# sin x
cdef double sin_value(double x, double c) noexcept nogil:
    return sin(x)
cdef void sin_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = cos(x)
    d[1] = -y
register_unary(SIN, sin_value, sin_rule)

# cos x
cdef double cos_value(double x, double c) noexcept nogil:
    return cos(x)
cdef void cos_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -sin(x)
    d[1] = -y
register_unary(COS, cos_value, cos_rule)

# tan x: y' = 1 + y^2, y'' = 2 y (1 + y^2)
cdef double tan_value(double x, double c) noexcept nogil:
    return tan(x)
cdef void tan_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 + y * y
    d[1] = 2.0 * y * d[0]
register_unary(TAN, tan_value, tan_rule)

# arcsin x: y' = (1 - x^2)^(-1/2), y'' = x (1 - x^2)^(-3/2)
cdef double arcsin_value(double x, double c) noexcept nogil:
    return asin(x)
cdef void arcsin_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    cdef double u = 1.0 - x * x
    d[0] = 1.0 / sqrt(u)
    if order > 1:
        d[1] = x * d[0] / u
register_unary(ARCSIN, arcsin_value, arcsin_rule)

# arccos x: the negative of arcsin's derivatives
cdef double arccos_value(double x, double c) noexcept nogil:
    return acos(x)
cdef void arccos_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    cdef double u = 1.0 - x * x
    d[0] = -1.0 / sqrt(u)
    if order > 1:
        d[1] = x * d[0] / u
register_unary(ARCCOS, arccos_value, arccos_rule)

# arctan x: y' = 1/(1 + x^2), y'' = -2x/(1 + x^2)^2
cdef double arctan_value(double x, double c) noexcept nogil:
    return atan(x)
cdef void arctan_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (1.0 + x * x)
    d[1] = -2.0 * x * d[0] * d[0]
register_unary(ARCTAN, arctan_value, arctan_rule)

# sinh x
cdef double sinh_value(double x, double c) noexcept nogil:
    return sinh(x)
cdef void sinh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = cosh(x)
    d[1] = y
register_unary(SINH, sinh_value, sinh_rule)

# cosh x
cdef double cosh_value(double x, double c) noexcept nogil:
    return cosh(x)
cdef void cosh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = sinh(x)
    d[1] = y
register_unary(COSH, cosh_value, cosh_rule)

# tanh x: y' = 1 - y^2, y'' = -2 y (1 - y^2)
cdef double tanh_value(double x, double c) noexcept nogil:
    return tanh(x)
cdef void tanh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 - y * y
    d[1] = -2.0 * y * d[0]
register_unary(TANH, tanh_value, tanh_rule)

# arcsinh x: y' = (1 + x^2)^(-1/2), y'' = -x (1 + x^2)^(-3/2)
cdef double arcsinh_value(double x, double c) noexcept nogil:
    return asinh(x)
cdef void arcsinh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    cdef double u = 1.0 + x * x
    d[0] = 1.0 / sqrt(u)
    if order > 1:
        d[1] = -x * d[0] / u
register_unary(ARCSINH, arcsinh_value, arcsinh_rule)

# arccosh x: y' = (x^2 - 1)^(-1/2), y'' = -x (x^2 - 1)^(-3/2)
cdef double arccosh_value(double x, double c) noexcept nogil:
    return acosh(x)
cdef void arccosh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    cdef double u = x * x - 1.0
    d[0] = 1.0 / sqrt(u)
    if order > 1:
        d[1] = -x * d[0] / u
register_unary(ARCCOSH, arccosh_value, arccosh_rule)

# arctanh x: y' = 1/(1 - x^2), y'' = 2x/(1 - x^2)^2
cdef double arctanh_value(double x, double c) noexcept nogil:
    return atanh(x)
cdef void arctanh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (1.0 - x * x)
    d[1] = 2.0 * x * d[0] * d[0]
register_unary(ARCTANH, arctanh_value, arctanh_rule)

# x + c
cdef double add_c_value(double x, double c) noexcept nogil:
    return x + c
cdef void add_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0
    d[1] = 0.0
register_unary(ADD_C, add_c_value, add_c_rule)

# x * c
cdef double mul_c_value(double x, double c) noexcept nogil:
    return x * c
cdef void mul_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = c
    d[1] = 0.0
register_unary(MUL_C, mul_c_value, mul_c_rule)

# c - x
cdef double rsub_c_value(double x, double c) noexcept nogil:
    return c - x
cdef void rsub_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -1.0
    d[1] = 0.0
register_unary(RSUB_C, rsub_c_value, rsub_c_rule)

# c / x: y' = -y/x, y'' = 2y/x^2
cdef double rdiv_c_value(double x, double c) noexcept nogil:
    return c / x
cdef void rdiv_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -y / x
    d[1] = 2.0 * y / (x * x)
register_unary(RDIV_C, rdiv_c_value, rdiv_c_rule)

# x^c: y' = c x^(c-1), y'' = c (c-1) x^(c-2); exact zeros for c in {0, 1}
cdef double pow_c_value(double x, double c) noexcept nogil:
    if c == 2.0:
        return x * x
    return pow(x, c)
cdef void pow_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    if c == 0.0:
        d[0] = 0.0
        d[1] = 0.0
    elif c == 1.0:
        d[0] = 1.0
        d[1] = 0.0
    elif c == 2.0:
        d[0] = 2.0 * x
        d[1] = 2.0
    else:
        d[0] = c * pow(x, c - 1.0)
        if order > 1:
            d[1] = c * (c - 1.0) * pow(x, c - 2.0)
register_unary(POW_C, pow_c_value, pow_c_rule)

# c^x: y' = y ln c, y'' = y (ln c)^2; taken as 0 where y = 0 (as POW does:
# 0^x for x > 0 and inf^x for x < 0 are constant there, not 0 * inf = NaN)
cdef double rpow_c_value(double x, double c) noexcept nogil:
    return pow(c, x)
cdef void rpow_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    cdef double lc = log(c) if y != 0.0 else 0.0
    d[0] = y * lc
    d[1] = y * lc * lc
register_unary(RPOW_C, rpow_c_value, rpow_c_rule)

# stop_gradient(x): the value follows x on replay, the derivative is zero
cdef double stop_gradient_value(double x, double c) noexcept nogil:
    return x
cdef void stop_gradient_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(STOP_GRADIENT, stop_gradient_value, stop_gradient_rule)


# floor, ceil, trunc, rint: piecewise constant, zero derivative (no guard:
# every replay rounds the new values)
cdef void zero_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
cdef double floor_value(double x, double c) noexcept nogil:
    return floor(x)
register_unary(FLOOR, floor_value, zero_rule)
cdef double ceil_value(double x, double c) noexcept nogil:
    return ceil(x)
register_unary(CEIL, ceil_value, zero_rule)
cdef double trunc_value(double x, double c) noexcept nogil:
    return trunc(x)
register_unary(TRUNC, trunc_value, zero_rule)
cdef double rint_value(double x, double c) noexcept nogil:
    return rint(x)              # halves to even, as NumPy (the default rounding mode)
register_unary(RINT, rint_value, zero_rule)


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


cdef inline double scaled(double slope, double seed) noexcept nogil:
    """slope * seed for a constant slope: chain() only when the slope is not
    finite (a finite slope times 0 is 0 already; the test is loop-invariant,
    so the compiler keeps the plain loop for the usual case)."""
    return slope * seed if isfinite(slope) else chain(slope, seed)


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
