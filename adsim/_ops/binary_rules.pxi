# Generated from adsim/ops.py by `python -m adsim.ops`: do not edit.
# The value function and derivative rule of each binary op whose row gives
# them as expressions (the shared kernels are in binary.pxi).

# a + b: partials 1.0, 1.0; second 0.0, 0.0, 0.0
cdef double add_value(double a, double b) noexcept nogil:
    return a + b
cdef void add_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = 1.0
    d[1] = 1.0
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
register_binary(ADD, add_value, add_rule)

# a - b: partials 1.0, -1.0; second 0.0, 0.0, 0.0
cdef double sub_value(double a, double b) noexcept nogil:
    return a - b
cdef void sub_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = 1.0
    d[1] = -1.0
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
register_binary(SUB, sub_value, sub_rule)

# a * b: partials b, a; second 0.0, 1.0, 0.0
cdef double mul_value(double a, double b) noexcept nogil:
    return a * b
cdef void mul_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = b
    d[1] = a
    d[2] = 0.0
    d[3] = 1.0
    d[4] = 0.0
register_binary(MUL, mul_value, mul_rule)

# a / b: partials 1.0 / b, -y / b; second 0.0, -1.0 / (b * b), 2.0 * y / (b * b)
cdef double div_value(double a, double b) noexcept nogil:
    return a / b
cdef void div_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = 1.0 / b
    d[1] = -y / b
    if order > 1:
        d[2] = 0.0
        d[3] = -1.0 / (b * b)
        d[4] = 2.0 * y / (b * b)
register_binary(DIV, div_value, div_rule)

# pow(a, b): partials adsim_pow_da(a, b), y * adsim_pow_log(a, y); second adsim_pow_daa(a, b), adsim_pow_am1(a, b) * (1.0 + b * adsim_pow_log(a, y)), y * adsim_pow_log(a, y) * adsim_pow_log(a, y)
cdef double pow_value(double a, double b) noexcept nogil:
    return pow(a, b)
cdef void pow_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = adsim_pow_da(a, b)
    d[1] = y * adsim_pow_log(a, y)
    if order > 1:
        d[2] = adsim_pow_daa(a, b)
        d[3] = adsim_pow_am1(a, b) * (1.0 + b * adsim_pow_log(a, y))
        d[4] = y * adsim_pow_log(a, y) * adsim_pow_log(a, y)
register_binary(POW, pow_value, pow_rule)

# atan2(a, b): partials b / (a * a + b * b), -a / (a * a + b * b); second -2.0 * a * b / ((a * a + b * b) * (a * a + b * b)), (a * a - b * b) / ((a * a + b * b) * (a * a + b * b)), 2.0 * a * b / ((a * a + b * b) * (a * a + b * b))
cdef double arctan2_value(double a, double b) noexcept nogil:
    return atan2(a, b)
cdef void arctan2_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = b / (a * a + b * b)
    d[1] = -a / (a * a + b * b)
    if order > 1:
        d[2] = -2.0 * a * b / ((a * a + b * b) * (a * a + b * b))
        d[3] = (a * a - b * b) / ((a * a + b * b) * (a * a + b * b))
        d[4] = 2.0 * a * b / ((a * a + b * b) * (a * a + b * b))
register_binary(ARCTAN2, arctan2_value, arctan2_rule)

# hypot(a, b): partials adsim_hypot_d(a, y), adsim_hypot_d(b, y); second adsim_hypot_dd(b, y), adsim_hypot_dab(a, b, y), adsim_hypot_dd(a, y)
cdef double hypot_value(double a, double b) noexcept nogil:
    return hypot(a, b)
cdef void hypot_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = adsim_hypot_d(a, y)
    d[1] = adsim_hypot_d(b, y)
    if order > 1:
        d[2] = adsim_hypot_dd(b, y)
        d[3] = adsim_hypot_dab(a, b, y)
        d[4] = adsim_hypot_dd(a, y)
register_binary(HYPOT, hypot_value, hypot_rule)

# adsim_maximum(a, b): partials adsim_maximum_takes_a(a, b), 1.0 - adsim_maximum_takes_a(a, b); second 0.0, 0.0, 0.0
cdef double maximum_value(double a, double b) noexcept nogil:
    return adsim_maximum(a, b)
cdef void maximum_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = adsim_maximum_takes_a(a, b)
    d[1] = 1.0 - adsim_maximum_takes_a(a, b)
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
register_binary(MAXIMUM, maximum_value, maximum_rule)

# adsim_minimum(a, b): partials adsim_minimum_takes_a(a, b), 1.0 - adsim_minimum_takes_a(a, b); second 0.0, 0.0, 0.0
cdef double minimum_value(double a, double b) noexcept nogil:
    return adsim_minimum(a, b)
cdef void minimum_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = adsim_minimum_takes_a(a, b)
    d[1] = 1.0 - adsim_minimum_takes_a(a, b)
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
register_binary(MINIMUM, minimum_value, minimum_rule)

# adsim_logaddexp(a, b): partials adsim_logaddexp_da(a, b), adsim_logaddexp_da(b, a); second adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a), -adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a), adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)
cdef double logaddexp_value(double a, double b) noexcept nogil:
    return adsim_logaddexp(a, b)
cdef void logaddexp_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = adsim_logaddexp_da(a, b)
    d[1] = adsim_logaddexp_da(b, a)
    if order > 1:
        d[2] = adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)
        d[3] = -adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)
        d[4] = adsim_logaddexp_da(a, b) * adsim_logaddexp_da(b, a)
register_binary(LOGADDEXP, logaddexp_value, logaddexp_rule)

# adsim_logaddexp2(a, b): partials adsim_logaddexp2_da(a, b), adsim_logaddexp2_da(b, a); second LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a), -LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a), LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)
cdef double logaddexp2_value(double a, double b) noexcept nogil:
    return adsim_logaddexp2(a, b)
cdef void logaddexp2_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = adsim_logaddexp2_da(a, b)
    d[1] = adsim_logaddexp2_da(b, a)
    if order > 1:
        d[2] = LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)
        d[3] = -LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)
        d[4] = LN2 * adsim_logaddexp2_da(a, b) * adsim_logaddexp2_da(b, a)
register_binary(LOGADDEXP2, logaddexp2_value, logaddexp2_rule)
