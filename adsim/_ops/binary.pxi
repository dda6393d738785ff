# Binary elementwise primitives y = f(a, b). Each block gives the value and a
# rule writing d[0] = df/da, d[1] = df/db and, when order >= 2, the second
# partials d[2] = f_aa, d[3] = f_ab, d[4] = f_bb. Operands have the result's
# size or size 1 (a broadcast scalar, stride 0); a constant operand has no
# tangent or adjoint and its partials are never multiplied (no 0 * inf).
#
# Compiled into adsim/_sweeps.pyx; the operand checks of these ops are in _ops/checks.pxi.

ctypedef double (*binary_value_fn)(double a, double b) noexcept nogil
ctypedef void (*binary_rule_fn)(double a, double b, double y, int order, double* d) noexcept nogil

cdef binary_value_fn BINARY_VALUE[<int>BINARY_END]
cdef binary_rule_fn BINARY_RULE[<int>BINARY_END]

cdef void register_binary(int code, binary_value_fn value, binary_rule_fn rule):
    BINARY_VALUE[code] = value
    BINARY_RULE[code] = rule

# The ops whose rows in adsim/ops.py give value and partials as expressions
# (arithmetic, powers, arctan2, hypot, maximum, minimum, logaddexp): their blocks are
# generated from the rows, and the few helpers they call are in _elementwise.h.
cdef extern from "_elementwise.h":
    double adsim_pow_log(double a, double y) noexcept nogil
    double adsim_pow_am1(double a, double b) noexcept nogil
    double adsim_pow_da(double a, double b) noexcept nogil
    double adsim_pow_daa(double a, double b) noexcept nogil
    double adsim_hypot_d(double a, double y) noexcept nogil
    double adsim_hypot_dd(double c, double y) noexcept nogil
    double adsim_hypot_dab(double a, double b, double y) noexcept nogil
    double adsim_maximum(double a, double b) noexcept nogil
    double adsim_maximum_takes_a(double a, double b) noexcept nogil
    double adsim_minimum(double a, double b) noexcept nogil
    double adsim_minimum_takes_a(double a, double b) noexcept nogil
    double adsim_logaddexp(double a, double b) noexcept nogil
    double adsim_logaddexp_da(double a, double b) noexcept nogil
    double adsim_logaddexp2(double a, double b) noexcept nogil
    double adsim_logaddexp2_da(double a, double b) noexcept nogil

include "binary_rules.pxi"

# The ops written by hand: cases an expression does not state.

# NumPy's float floor division and remainder (its npy_divmod: the quotient
# from the exact fmod, snapped to an integer, so 0.5 // 0.1 is 4 and the
# remainder takes the sign of b). a // b has derivative zero; a % b has
# y_a = 1, y_b = -(a // b); fmod(a, b) has y_a = 1, y_b = -trunc(a / b).
cdef inline double numpy_divmod(double a, double b, double* modulus) noexcept nogil:
    cdef double mod = fmod(a, b), div, floordiv
    if b == 0.0:
        modulus[0] = mod
        return a / b
    div = (a - mod) / b
    if mod != 0.0:
        if (b < 0.0) != (mod < 0.0):
            mod += b
            div -= 1.0
    else:
        mod = copysign(0.0, b)
    if div != 0.0:
        floordiv = floor(div)
        if div - floordiv > 0.5:
            floordiv += 1.0
    else:
        floordiv = copysign(0.0, a / b)
    modulus[0] = mod
    return floordiv
cdef void zero_binary_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = 0.0
    d[1] = 0.0
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
# comparisons as values: 1.0 or 0.0 (NaN compares as in C: only != holds)
cdef double less_value(double a, double b) noexcept nogil:
    return 1.0 if a < b else 0.0
cdef double less_equal_value(double a, double b) noexcept nogil:
    return 1.0 if a <= b else 0.0
cdef double greater_value(double a, double b) noexcept nogil:
    return 1.0 if a > b else 0.0
cdef double greater_equal_value(double a, double b) noexcept nogil:
    return 1.0 if a >= b else 0.0
cdef double equal_value(double a, double b) noexcept nogil:
    return 1.0 if a == b else 0.0
cdef double not_equal_value(double a, double b) noexcept nogil:
    return 1.0 if a != b else 0.0
register_binary(LESS, less_value, zero_binary_rule)
register_binary(LESS_EQUAL, less_equal_value, zero_binary_rule)
register_binary(GREATER, greater_value, zero_binary_rule)
register_binary(GREATER_EQUAL, greater_equal_value, zero_binary_rule)
register_binary(EQUAL, equal_value, zero_binary_rule)
register_binary(NOT_EQUAL, not_equal_value, zero_binary_rule)

cdef double floor_divide_value(double a, double b) noexcept nogil:
    cdef double mod
    return numpy_divmod(a, b, &mod)
register_binary(FLOOR_DIVIDE, floor_divide_value, zero_binary_rule)
cdef double remainder_value(double a, double b) noexcept nogil:
    cdef double mod
    if b == 0.0:
        return fmod(a, b)
    numpy_divmod(a, b, &mod)
    return mod
cdef void remainder_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    cdef double mod
    d[0] = 1.0
    d[1] = -numpy_divmod(a, b, &mod)
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
register_binary(REMAINDER, remainder_value, remainder_rule)
cdef double fmod_value(double a, double b) noexcept nogil:
    return fmod(a, b)
cdef void fmod_rule(double a, double b, double y, int order, double* d) noexcept nogil:
    d[0] = 1.0
    d[1] = -rint((a - fmod(a, b)) / b)        # reads a and b only (not y)
    d[2] = 0.0
    d[3] = 0.0
    d[4] = 0.0
register_binary(FMOD, fmod_value, fmod_rule)


# ---- kernels shared by all binary primitives: operands [r, a, b] ----

cdef int binary_value(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* a = vptr(s, o[1])
    cdef double* b = vptr(s, o[2])
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t sa = stride_of(s, o[1], n), sb = stride_of(s, o[2], n)
    cdef int64_t i
    cdef binary_value_fn f = BINARY_VALUE[code]
    if code == ADD and sa == 1 and sb == 1:
        for i in range(n):
            y[i] = a[i] + b[i]
    elif code == SUB and sa == 1 and sb == 1:
        for i in range(n):
            y[i] = a[i] - b[i]
    elif code == MUL and sa == 1 and sb == 1:
        for i in range(n):
            y[i] = a[i] * b[i]
    elif code == DIV and sa == 1 and sb == 1:
        for i in range(n):
            y[i] = a[i] / b[i]
    else:
        for i in range(n):
            y[i] = f(a[i * sa], b[i * sb])
    return 0


cdef inline double div_tangent(double ta, double tb, double b, double y) noexcept nogil:
    """(ta - y tb) / b, the tangent of a / b: zero for zero tangents (b may be 0).
    At an infinite b the partial 1/b is 0 and passes nothing of ta, not even
    an infinity or NaN (the rule's chain(1 / b, ta) + chain(-y / b, tb))."""
    cdef double t
    if isinf(b):
        return chain(-y / b, tb)
    t = ta - chain(y, tb)
    return t / b if t != 0.0 else 0.0


cdef bint binary_tangent_fast(int code, double* ty, const double* ta, const double* tb,
                              const double* a, const double* b, const double* y,
                              int64_t n, int64_t ld, int p) noexcept nogil:
    """Unit-stride loops for the common ops, so the compiler vectorises them;
    the same partials as the rules above. Operands and result have n
    elements and directions ld apart. Returns False if not handled."""
    cdef int64_t i, j
    if ta == NULL or tb == NULL:
        return binary_tangent_one_active(code, ty, ta, tb, a, b, y, n, ld, p)
    for j in range(p):
        if code == ADD:
            for i in range(n):
                ty[j * ld + i] = ta[j * ld + i] + tb[j * ld + i]
        elif code == SUB:
            for i in range(n):
                ty[j * ld + i] = ta[j * ld + i] - tb[j * ld + i]
        elif code == MUL:
            for i in range(n):
                ty[j * ld + i] = chain(b[i], ta[j * ld + i]) + chain(a[i], tb[j * ld + i])
        elif code == DIV:
            for i in range(n):
                ty[j * ld + i] = div_tangent(ta[j * ld + i], tb[j * ld + i], b[i], y[i])
        else:
            return False
    return True


cdef bint binary_tangent_one_active(int code, double* ty, const double* ta, const double* tb,
                                    const double* a, const double* b, const double* y,
                                    int64_t n, int64_t ld, int p) noexcept nogil:
    """Unit-stride tangents when one operand is a constant (its tangent NULL)."""
    cdef int64_t i, j
    for j in range(p):
        if code == ADD:
            for i in range(n):
                ty[j * ld + i] = ta[j * ld + i] if ta != NULL else tb[j * ld + i]
        elif code == SUB:
            for i in range(n):
                ty[j * ld + i] = ta[j * ld + i] if ta != NULL else -tb[j * ld + i]
        elif code == MUL:
            if ta != NULL:
                for i in range(n):
                    ty[j * ld + i] = chain(b[i], ta[j * ld + i])
            else:
                for i in range(n):
                    ty[j * ld + i] = chain(a[i], tb[j * ld + i])
        elif code == DIV and ta != NULL:
            for i in range(n):
                ty[j * ld + i] = div_tangent(ta[j * ld + i], 0.0, b[i], y[i])
        else:
            return False
    return True


cdef bint binary_adjoint_fast(int code, const double* ay, double* aa, double* ab,
                              const double* a, const double* b, const double* y,
                              int64_t n, int64_t ld, int q) noexcept nogil:
    """Unit-stride adjoint loops for the common ops (see binary_tangent_fast)."""
    cdef int64_t i, j
    cdef double g
    if aa == NULL or ab == NULL:
        if code == MUL and aa != NULL:         # active * constant
            for j in range(q):
                for i in range(n):
                    aa[j * ld + i] += chain(b[i], ay[j * ld + i])
            return True
        if code == MUL and ab != NULL:
            for j in range(q):
                for i in range(n):
                    ab[j * ld + i] += chain(a[i], ay[j * ld + i])
            return True
        return False
    for j in range(q):
        if code == ADD:
            for i in range(n):
                aa[j * ld + i] += ay[j * ld + i]
                ab[j * ld + i] += ay[j * ld + i]
        elif code == SUB:
            for i in range(n):
                aa[j * ld + i] += ay[j * ld + i]
                ab[j * ld + i] -= ay[j * ld + i]
        elif code == MUL:
            for i in range(n):
                aa[j * ld + i] += chain(b[i], ay[j * ld + i])
                ab[j * ld + i] += chain(a[i], ay[j * ld + i])
        elif code == DIV:
            for i in range(n):
                g = ay[j * ld + i] / b[i] if ay[j * ld + i] != 0.0 else 0.0
                if isinf(b[i]):         # the partial 1/b is 0 (see div_tangent)
                    ab[j * ld + i] += chain(-y[i] / b[i], ay[j * ld + i])
                else:
                    aa[j * ld + i] += g
                    ab[j * ld + i] -= chain(y[i], g)
        else:
            return False
    return True


cdef int binary_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* a = vptr(s, o[1])
    cdef double* b = vptr(s, o[2])
    cdef double* ty = tptr(s, o[0])
    cdef double* ta = tptr(s, o[1])
    cdef double* tb = tptr(s, o[2])
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t ldy = dir_stride(s, o[0]), lda = dir_stride(s, o[1]), ldb = dir_stride(s, o[2])
    cdef int64_t sa = stride_of(s, o[1], n), sb = stride_of(s, o[2], n)
    cdef int64_t i, j
    cdef double t
    cdef double d[5]
    cdef binary_rule_fn rule = BINARY_RULE[code]
    if sa == 1 and sb == 1 and binary_tangent_fast(code, ty, ta, tb, a, b, y, n, ldy, s.p):
        return 0
    for i in range(n):
        rule(a[i * sa], b[i * sb], y[i], 1, d)
        for j in range(s.p):
            t = 0.0
            if ta != NULL:
                t += chain(d[0], ta[j * lda + i * sa])
            if tb != NULL:
                t += chain(d[1], tb[j * ldb + i * sb])
            ty[j * ldy + i] = t
    return 0


cdef int binary_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* a = vptr(s, o[1])
    cdef double* b = vptr(s, o[2])
    cdef double* ay = aptr(s, o[0])
    cdef double* aa = aptr(s, o[1])
    cdef double* ab = aptr(s, o[2])
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t ldy = dir_stride(s, o[0]), lda = dir_stride(s, o[1]), ldb = dir_stride(s, o[2])
    cdef int64_t sa = stride_of(s, o[1], n), sb = stride_of(s, o[2], n)
    cdef int64_t i, j
    cdef double g
    cdef double d[5]
    cdef binary_rule_fn rule = BINARY_RULE[code]
    if sa == 1 and sb == 1 and binary_adjoint_fast(code, ay, aa, ab, a, b, y, n, ldy, s.q):
        return 0
    for i in range(n):
        rule(a[i * sa], b[i * sb], y[i], 1, d)
        for j in range(s.q):
            g = ay[j * ldy + i]
            if aa != NULL:
                aa[j * lda + i * sa] += chain(d[0], g)
            if ab != NULL:
                ab[j * ldb + i * sb] += chain(d[1], g)
    return 0


cdef bint binary_soadjoint_fast(int code, Sweep* s, const int32_t* o, int64_t n) noexcept nogil:
    """Unit-stride second-order adjoints of +, - and * of two active operands."""
    cdef double* a = vptr(s, o[1])
    cdef double* b = vptr(s, o[2])
    cdef double* ay = aptr(s, o[0])
    cdef double* aa = aptr(s, o[1])
    cdef double* ab = aptr(s, o[2])
    cdef double* dy = dptr(s, o[0])
    cdef double* da = dptr(s, o[1])
    cdef double* db = dptr(s, o[2])
    cdef double* ta = tptr(s, o[1])
    cdef double* tb = tptr(s, o[2])
    cdef double sign = -1.0 if code == SUB else 1.0
    cdef int64_t ld = dir_stride(s, o[0])
    cdef int64_t i, j
    if aa == NULL or ab == NULL or not (code == ADD or code == SUB or code == MUL):
        return False
    if code == MUL:
        for i in range(n):
            aa[i] += chain(b[i], ay[i])
            ab[i] += chain(a[i], ay[i])
        for j in range(s.p):
            for i in range(n):
                da[j * ld + i] += chain(b[i], dy[j * ld + i]) + chain(tb[j * ld + i], ay[i])
                db[j * ld + i] += chain(a[i], dy[j * ld + i]) + chain(ta[j * ld + i], ay[i])
        return True
    for i in range(n):
        aa[i] += ay[i]
        ab[i] += sign * ay[i]
    for j in range(s.p):
        for i in range(n):
            da[j * ld + i] += dy[j * ld + i]
            db[j * ld + i] += sign * dy[j * ld + i]
    return True


cdef int binary_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef double* y = vptr(s, o[0])
    cdef double* a = vptr(s, o[1])
    cdef double* b = vptr(s, o[2])
    cdef double* ay = aptr(s, o[0])
    cdef double* aa = aptr(s, o[1])
    cdef double* ab = aptr(s, o[2])
    cdef double* dy = dptr(s, o[0])
    cdef double* da = dptr(s, o[1])
    cdef double* db = dptr(s, o[2])
    cdef double* ta = tptr(s, o[1])
    cdef double* tb = tptr(s, o[2])
    cdef int64_t n = ref_size(s, o[0])
    cdef int64_t ldy = dir_stride(s, o[0]), lda = dir_stride(s, o[1]), ldb = dir_stride(s, o[2])
    cdef int64_t sa = stride_of(s, o[1], n), sb = stride_of(s, o[2], n)
    cdef int64_t i, j
    cdef double g, gd, ha, hb, taj, tbj
    cdef double d[5]
    cdef binary_rule_fn rule = BINARY_RULE[code]
    if sa == 1 and sb == 1 and binary_soadjoint_fast(code, s, o, n):
        return 0
    for i in range(n):
        rule(a[i * sa], b[i * sb], y[i], 2, d)
        g = ay[i]
        if aa != NULL:
            aa[i * sa] += chain(d[0], g)
        if ab != NULL:
            ab[i * sb] += chain(d[1], g)
        for j in range(s.p):
            gd = dy[j * ldy + i]
            ha = 0.0
            hb = 0.0
            if g != 0.0:
                if ta != NULL:
                    taj = ta[j * lda + i * sa]
                    ha += chain(d[2], taj)
                    hb += chain(d[3], taj)
                if tb != NULL:
                    tbj = tb[j * ldb + i * sb]
                    ha += chain(d[3], tbj)
                    hb += chain(d[4], tbj)
            if da != NULL:
                da[j * lda + i * sa] += chain(d[0], gd) + chain(ha, g)
            if db != NULL:
                db[j * ldb + i * sb] += chain(d[1], gd) + chain(hb, g)
    return 0
