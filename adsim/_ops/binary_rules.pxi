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
