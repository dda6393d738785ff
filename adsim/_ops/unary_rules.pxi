# Generated from adsim/ops.py by `python -m adsim.ops`: do not edit.
# The value function and derivative rule of each unary op whose row gives
# them as expressions (the shared kernels are in unary.pxi).

# -x: slope -1.0, curvature 0.0
cdef double neg_value(double x, double c) noexcept nogil:
    return -x
cdef void neg_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -1.0
    d[1] = 0.0
register_unary(NEG, neg_value, neg_rule)

# sqrt(x): slope 0.5 / y, curvature -0.25 / (x * y)
cdef double sqrt_value(double x, double c) noexcept nogil:
    return sqrt(x)
cdef void sqrt_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.5 / y
    if order > 1:
        d[1] = -0.25 / (x * y)
register_unary(SQRT, sqrt_value, sqrt_rule)

# cbrt(x): slope 1.0 / (3.0 * y * y), curvature -2.0 / (9.0 * y * y * y * y * y)
cdef double cbrt_value(double x, double c) noexcept nogil:
    return cbrt(x)
cdef void cbrt_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (3.0 * y * y)
    if order > 1:
        d[1] = -2.0 / (9.0 * y * y * y * y * y)
register_unary(CBRT, cbrt_value, cbrt_rule)

# x * x: slope 2.0 * x, curvature 2.0
cdef double square_value(double x, double c) noexcept nogil:
    return x * x
cdef void square_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 2.0 * x
    d[1] = 2.0
register_unary(SQUARE, square_value, square_rule)

# 1.0 / x: slope -y * y, curvature 2.0 * y * y * y
cdef double reciprocal_value(double x, double c) noexcept nogil:
    return 1.0 / x
cdef void reciprocal_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -y * y
    if order > 1:
        d[1] = 2.0 * y * y * y
register_unary(RECIPROCAL, reciprocal_value, reciprocal_rule)

# exp(x): slope y, curvature y
cdef double exp_value(double x, double c) noexcept nogil:
    return exp(x)
cdef void exp_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = y
    if order > 1:
        d[1] = y
register_unary(EXP, exp_value, exp_rule)

# exp2(x): slope y * LN2, curvature y * LN2 * LN2
cdef double exp2_value(double x, double c) noexcept nogil:
    return exp2(x)
cdef void exp2_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = y * LN2
    if order > 1:
        d[1] = y * LN2 * LN2
register_unary(EXP2, exp2_value, exp2_rule)

# expm1(x): slope y + 1.0, curvature y + 1.0
cdef double expm1_value(double x, double c) noexcept nogil:
    return expm1(x)
cdef void expm1_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = y + 1.0
    if order > 1:
        d[1] = y + 1.0
register_unary(EXPM1, expm1_value, expm1_rule)

# log(x): slope 1.0 / x, curvature -1.0 / (x * x)
cdef double log_value(double x, double c) noexcept nogil:
    return log(x)
cdef void log_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / x
    if order > 1:
        d[1] = -1.0 / (x * x)
register_unary(LOG, log_value, log_rule)

# log2(x): slope 1.0 / (x * LN2), curvature -1.0 / (x * x * LN2)
cdef double log2_value(double x, double c) noexcept nogil:
    return log2(x)
cdef void log2_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (x * LN2)
    if order > 1:
        d[1] = -1.0 / (x * x * LN2)
register_unary(LOG2, log2_value, log2_rule)

# log10(x): slope 1.0 / (x * LN10), curvature -1.0 / (x * x * LN10)
cdef double log10_value(double x, double c) noexcept nogil:
    return log10(x)
cdef void log10_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (x * LN10)
    if order > 1:
        d[1] = -1.0 / (x * x * LN10)
register_unary(LOG10, log10_value, log10_rule)

# log1p(x): slope 1.0 / (1.0 + x), curvature -1.0 / ((1.0 + x) * (1.0 + x))
cdef double log1p_value(double x, double c) noexcept nogil:
    return log1p(x)
cdef void log1p_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (1.0 + x)
    if order > 1:
        d[1] = -1.0 / ((1.0 + x) * (1.0 + x))
register_unary(LOG1P, log1p_value, log1p_rule)

# sin(x): slope cos(x), curvature -y
cdef double sin_value(double x, double c) noexcept nogil:
    return sin(x)
cdef void sin_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = cos(x)
    if order > 1:
        d[1] = -y
register_unary(SIN, sin_value, sin_rule)

# cos(x): slope -sin(x), curvature -y
cdef double cos_value(double x, double c) noexcept nogil:
    return cos(x)
cdef void cos_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -sin(x)
    if order > 1:
        d[1] = -y
register_unary(COS, cos_value, cos_rule)

# tan(x): slope 1.0 + y * y, curvature 2.0 * y * (1.0 + y * y)
cdef double tan_value(double x, double c) noexcept nogil:
    return tan(x)
cdef void tan_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 + y * y
    if order > 1:
        d[1] = 2.0 * y * (1.0 + y * y)
register_unary(TAN, tan_value, tan_rule)

# asin(x): slope 1.0 / sqrt(1.0 - x * x), curvature x / ((1.0 - x * x) * sqrt(1.0 - x * x))
cdef double arcsin_value(double x, double c) noexcept nogil:
    return asin(x)
cdef void arcsin_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / sqrt(1.0 - x * x)
    if order > 1:
        d[1] = x / ((1.0 - x * x) * sqrt(1.0 - x * x))
register_unary(ARCSIN, arcsin_value, arcsin_rule)

# acos(x): slope -1.0 / sqrt(1.0 - x * x), curvature -x / ((1.0 - x * x) * sqrt(1.0 - x * x))
cdef double arccos_value(double x, double c) noexcept nogil:
    return acos(x)
cdef void arccos_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -1.0 / sqrt(1.0 - x * x)
    if order > 1:
        d[1] = -x / ((1.0 - x * x) * sqrt(1.0 - x * x))
register_unary(ARCCOS, arccos_value, arccos_rule)

# atan(x): slope 1.0 / (1.0 + x * x), curvature -2.0 * x / ((1.0 + x * x) * (1.0 + x * x))
cdef double arctan_value(double x, double c) noexcept nogil:
    return atan(x)
cdef void arctan_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (1.0 + x * x)
    if order > 1:
        d[1] = -2.0 * x / ((1.0 + x * x) * (1.0 + x * x))
register_unary(ARCTAN, arctan_value, arctan_rule)

# sinh(x): slope cosh(x), curvature y
cdef double sinh_value(double x, double c) noexcept nogil:
    return sinh(x)
cdef void sinh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = cosh(x)
    if order > 1:
        d[1] = y
register_unary(SINH, sinh_value, sinh_rule)

# cosh(x): slope sinh(x), curvature y
cdef double cosh_value(double x, double c) noexcept nogil:
    return cosh(x)
cdef void cosh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = sinh(x)
    if order > 1:
        d[1] = y
register_unary(COSH, cosh_value, cosh_rule)

# tanh(x): slope 1.0 - y * y, curvature -2.0 * y * (1.0 - y * y)
cdef double tanh_value(double x, double c) noexcept nogil:
    return tanh(x)
cdef void tanh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 - y * y
    if order > 1:
        d[1] = -2.0 * y * (1.0 - y * y)
register_unary(TANH, tanh_value, tanh_rule)

# asinh(x): slope 1.0 / sqrt(1.0 + x * x), curvature -x / ((1.0 + x * x) * sqrt(1.0 + x * x))
cdef double arcsinh_value(double x, double c) noexcept nogil:
    return asinh(x)
cdef void arcsinh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / sqrt(1.0 + x * x)
    if order > 1:
        d[1] = -x / ((1.0 + x * x) * sqrt(1.0 + x * x))
register_unary(ARCSINH, arcsinh_value, arcsinh_rule)

# acosh(x): slope 1.0 / sqrt(x * x - 1.0), curvature -x / ((x * x - 1.0) * sqrt(x * x - 1.0))
cdef double arccosh_value(double x, double c) noexcept nogil:
    return acosh(x)
cdef void arccosh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / sqrt(x * x - 1.0)
    if order > 1:
        d[1] = -x / ((x * x - 1.0) * sqrt(x * x - 1.0))
register_unary(ARCCOSH, arccosh_value, arccosh_rule)

# atanh(x): slope 1.0 / (1.0 - x * x), curvature 2.0 * x / ((1.0 - x * x) * (1.0 - x * x))
cdef double arctanh_value(double x, double c) noexcept nogil:
    return atanh(x)
cdef void arctanh_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0 / (1.0 - x * x)
    if order > 1:
        d[1] = 2.0 * x / ((1.0 - x * x) * (1.0 - x * x))
register_unary(ARCTANH, arctanh_value, arctanh_rule)

# x + c: slope 1.0, curvature 0.0
cdef double add_c_value(double x, double c) noexcept nogil:
    return x + c
cdef void add_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 1.0
    d[1] = 0.0
register_unary(ADD_C, add_c_value, add_c_rule)

# x * c: slope c, curvature 0.0
cdef double mul_c_value(double x, double c) noexcept nogil:
    return x * c
cdef void mul_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = c
    d[1] = 0.0
register_unary(MUL_C, mul_c_value, mul_c_rule)

# c - x: slope -1.0, curvature 0.0
cdef double rsub_c_value(double x, double c) noexcept nogil:
    return c - x
cdef void rsub_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -1.0
    d[1] = 0.0
register_unary(RSUB_C, rsub_c_value, rsub_c_rule)

# c / x: slope -y / x, curvature 2.0 * y / (x * x)
cdef double rdiv_c_value(double x, double c) noexcept nogil:
    return c / x
cdef void rdiv_c_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = -y / x
    if order > 1:
        d[1] = 2.0 * y / (x * x)
register_unary(RDIV_C, rdiv_c_value, rdiv_c_rule)

# x: slope 0.0, curvature 0.0
cdef double stop_gradient_value(double x, double c) noexcept nogil:
    return x
cdef void stop_gradient_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(STOP_GRADIENT, stop_gradient_value, stop_gradient_rule)

# floor(x): slope 0.0, curvature 0.0
cdef double floor_value(double x, double c) noexcept nogil:
    return floor(x)
cdef void floor_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(FLOOR, floor_value, floor_rule)

# ceil(x): slope 0.0, curvature 0.0
cdef double ceil_value(double x, double c) noexcept nogil:
    return ceil(x)
cdef void ceil_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(CEIL, ceil_value, ceil_rule)

# trunc(x): slope 0.0, curvature 0.0
cdef double trunc_value(double x, double c) noexcept nogil:
    return trunc(x)
cdef void trunc_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(TRUNC, trunc_value, trunc_rule)

# rint(x): slope 0.0, curvature 0.0
cdef double rint_value(double x, double c) noexcept nogil:
    return rint(x)
cdef void rint_rule(double x, double y, double c, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
register_unary(RINT, rint_value, rint_rule)
