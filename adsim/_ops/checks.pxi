# The checks of recorded operands, one per op family: Tape.check_op refuses
# any op whose operands would make its kernel read or write outside the
# tape's buffers. The number of operands is checked before, against the
# op's row (OPERAND_COUNT, generated from adsim/ops.py). They read the Tape being recorded, so they are compiled
# with it (adsim/_tape.pyx); the kernels they guard, and the operand layouts
# they check, are in the family files named below.


# ---- unary (_ops/unary.pxi)

cdef int unary_check(Tape t, int code, const int32_t* o, int nops) except -1:
    """Operands a recording may give: [r, x, c_index], x of r's size,
    c_index a position in the constants (ops with a parameter) or -1."""
    need_slot(t, o[0])
    need_ref(t, o[1])
    if t.size_of(o[1]) != t.slot_size[o[0]]:
        return malformed(code, f"an argument of {t.size_of(o[1])} elements and a result of "
                               f"{t.slot_size[o[0]]}")
    if o[2] != -1 and not 0 <= o[2] < t.n_consts:
        return malformed(code, f"parameter index {o[2]} outside the {t.n_consts} constants")
    return 0


# ---- binary (_ops/binary.pxi)

cdef int binary_check(Tape t, int code, const int32_t* o, int nops) except -1:
    """Operands a recording may give: [r, a, b], a and b of r's size or of size 1."""
    cdef int64_t n
    cdef int i
    need_slot(t, o[0])
    n = t.slot_size[o[0]]
    for i in range(1, 3):
        need_ref(t, o[i])
        if t.size_of(o[i]) != n and t.size_of(o[i]) != 1:
            return malformed(code, f"an argument of {t.size_of(o[i])} elements and a result of {n}")
    return 0


# ---- branch (_ops/branch.pxi)

cdef int branch_check(Tape t, int code, const int32_t* o, int nops) except -1:
    """Operands a recording may give (see the layouts in _ops/branch.pxi); an ARGEXT's
    records must be fresh indices, not ones a gather or scatter reads."""
    cdef int64_t n, size
    cdef int i
    if o[0] != -1:
        return malformed(code, f"result {o[0]}; branch records have none (-1)")
    if code == COMPARE:
        n = o[5]
        for i in range(1, 3):
            need_ref(t, o[i])
            if t.size_of(o[i]) != n and t.size_of(o[i]) != 1:
                return malformed(code, f"an argument of {t.size_of(o[i])} elements for {n} outcomes")
        if not CMP_LT <= o[3] <= CMP_NE:
            return malformed(code, f"comparison kind {o[3]}")
        return t.check_range(o[4], n, t.n_branches, "branch")
    need_ref(t, o[1])
    size = product3(o[2], o[3], o[4])
    if size != t.size_of(o[1]):
        return malformed(code, f"an argument of {t.size_of(o[1])} elements viewed as "
                               f"{o[2]} x {o[3]} x {o[4]}")
    if o[3] == 0 and <int64_t>o[2] * o[4] != 0:
        return malformed(code, "an empty axis")
    if size > 2147483648:
        raise TapeOverflow(f"adsim: argmax/argmin over an array of {size} elements: its indices "
                           f"do not fit the tape's 32-bit index stream; split the array")
    if o[5] < t.ints_frozen:
        return malformed(code, f"index offset {o[5]}, which holds indices of a gather or scatter")
    return t.check_range(o[5], <int64_t>o[2] * o[4], t.n_ints, "index")


# ---- structural (_ops/structural.pxi)

cdef int strided_check(Tape t, int code, int64_t start, int64_t step, int64_t inner,
                       int64_t outer_step, int64_t rows, int64_t bound) except -1:
    """The positions start + u outer_step + i step (u < rows, i < inner) lie
    in [0, bound): the extremes are at the corners."""
    cdef int64_t lo = start, hi = start, du, di
    if rows <= 0 or inner <= 0:
        return 0
    if rows > 2147483647 or inner > 2147483647:
        raise TapeOverflow(f"adsim: a slice of {rows} x {inner} elements does not fit the tape's "
                           f"32-bit operands; split arrays of 2**31 or more elements")
    du = (rows - 1) * outer_step
    di = (inner - 1) * step
    lo += min(du, <int64_t>0) + min(di, <int64_t>0)
    hi += max(du, <int64_t>0) + max(di, <int64_t>0)
    if lo < 0 or hi >= bound:
        return malformed(code, f"strided positions {lo}..{hi} outside an array of {bound} elements")
    if hi > 2147483647:
        raise TapeOverflow(f"adsim: element position {hi} does not fit the tape's 32-bit "
                           f"operands; split arrays of 2**31 or more elements")
    return 0


cdef int structural_check(Tape t, int code, const int32_t* o, int nops) except -1:
    """Operands a recording may give (the layouts in _ops/structural.pxi): sizes that agree,
    indices inside the arrays they index, masks inside the branch stream."""
    cdef int64_t n, size, inner
    cdef int i
    need_slot(t, o[0])
    need_ref(t, o[1])
    n = t.slot_size[o[0]]
    if code == SELECT:
        for i in range(1, 4):
            need_ref(t, o[i])
            if (t.size_of(o[i]) != n and t.size_of(o[i]) != 1) or o[0] == o[i]:
                return malformed(code, f"an operand of {t.size_of(o[i])} elements for a result "
                                       f"of {n} in slot {o[0]}")
        return 0
    if code == SCATTER_AT:
        need_ref(t, o[2])
        need_ref(t, o[3])
        size = product3(o[4], o[5], o[6])
        if size < 0 or n != size or t.size_of(o[1]) != size or \
                t.size_of(o[2]) != <int64_t>o[4] * o[6] * t.size_of(o[3]) or \
                o[0] == o[1] or o[0] == o[2] or o[0] == o[3] or not 0 <= o[7] <= 1:
            return malformed(code, f"a base of {t.size_of(o[1])} elements viewed as {o[4]} x "
                                   f"{o[5]} x {o[6]}, {t.size_of(o[2])} values for "
                                   f"{t.size_of(o[3])} indices and a result of {n} in slot {o[0]}")
        return 0
    if code == SEARCH:
        need_ref(t, o[2])
        if n != t.size_of(o[2]) or o[0] == o[1] or o[0] == o[2]:
            return malformed(code, f"{t.size_of(o[2])} values and a result of {n} in slot {o[0]}")
        return 0
    if code == ARGEXT_AT:
        size = product3(o[2], o[3], o[4])
        if size < 0 or t.size_of(o[1]) != size or n != <int64_t>o[2] * o[4] or \
                (o[3] == 0 and n != 0) or o[0] == o[1]:
            return malformed(code, f"an argument of {t.size_of(o[1])} elements viewed as "
                                   f"{o[2]} x {o[3]} x {o[4]} and a result of {n}")
        return 0
    if code == GATHER_AT:
        need_ref(t, o[2])
        size = product3(o[3], o[4], o[5])
        if size < 0 or t.size_of(o[1]) != size or \
                n != <int64_t>o[3] * o[5] * t.size_of(o[2]) or o[0] == o[1] or o[0] == o[2]:
            return malformed(code, f"an argument of {t.size_of(o[1])} elements viewed as "
                                   f"{o[3]} x {o[4]} x {o[5]}, {t.size_of(o[2])} indices and a "
                                   f"result of {n} in slot {o[0]}")
        return 0
    if code == COPY and t.size_of(o[1]) != n or \
            code == FILL and t.size_of(o[1]) != n and t.size_of(o[1]) != 1:
        return malformed(code, f"an argument of {t.size_of(o[1])} elements and a result of {n}")
    if code == BROADCAST or code == SUM or code == CUMSUM:
        size = product3(o[2], o[3], o[4])
        if size < 0 or t.size_of(o[1]) != (<int64_t>o[2] * o[4] if code == BROADCAST else size) \
                or n != (<int64_t>o[2] * o[4] if code == SUM else size):
            return malformed(code, f"an argument of {t.size_of(o[1])} and a result of {n} "
                                   f"elements for the view {o[2]} x {o[3]} x {o[4]}")
    elif code == WHERE:
        need_ref(t, o[2])
        if not (t.size_of(o[1]) == 1 or t.size_of(o[1]) == n) or \
                not (t.size_of(o[2]) == 1 or t.size_of(o[2]) == n):
            return malformed(code, f"arguments of {t.size_of(o[1])} and {t.size_of(o[2])} "
                                   f"elements and a result of {n}")
        t.check_range(o[3], n, t.n_branches, "branch")
    elif code == GATHER:
        if o[4] != 0:
            inner = o[5] if o[5] > 0 else n
            strided_check(t, code, o[3], o[4], inner, o[6], n // inner if inner else 0,
                          t.size_of(o[1]))
        else:
            t.check_indices(o[2], n, t.size_of(o[1]))
            t.ints_frozen = max(t.ints_frozen, <int64_t>o[2] + n)
    elif code == SCATTER:
        if o[3] < 0 or not (t.size_of(o[1]) == 1 or t.size_of(o[1]) == o[3]):
            return malformed(code, f"{t.size_of(o[1])} values for {o[3]} positions")
        t.check_indices(o[2], o[3], n)        # the value stack saves them by index
        if o[5] != 0:
            strided_check(t, code, o[4], o[5], o[6], o[7], o[3] // o[6] if o[6] > 0 else 0, n)
        t.ints_frozen = max(t.ints_frozen, <int64_t>o[2] + o[3])
    return 0


# ---- linalg (_ops/linalg.pxi)

cdef int linalg_check(Tape t, int code, const int32_t* o, int nops) except -1:
    """Operands a recording may give: [r, a, b, m, k, n] with a of m k, b of
    k n and r of m n elements, r distinct from a and b (BLAS writes r while
    reading them)."""
    if code == SPMV:
        return spmv_check(t, code, o)
    if code == QUADFORM:
        return quadform_check(t, code, o)
    need_slot(t, o[0])
    need_ref(t, o[1])
    need_ref(t, o[2])
    if o[3] < 0 or o[4] < 0 or o[5] < 0:
        return malformed(code, f"dimensions {o[3]} x {o[4]} x {o[5]}")
    if t.size_of(o[1]) != <int64_t>o[3] * o[4] or t.size_of(o[2]) != <int64_t>o[4] * o[5] \
            or t.slot_size[o[0]] != <int64_t>o[3] * o[5]:
        return malformed(code, f"operands of {t.size_of(o[1])}, {t.size_of(o[2])} and "
                               f"{t.slot_size[o[0]]} elements for {o[3]} x {o[4]} x {o[5]}")
    if o[0] == o[1] or o[0] == o[2]:
        return malformed(code, "a result that is also an argument")
    return 0


cdef int spmv_check(Tape t, int code, const int32_t* o) except -1:
    """[r, a, x, ioff, m, k, n, trans] (_ops/sparse.pxi): a CSR pattern in the
    index stream (row pointers from 0 up to the nnz values of a, never
    decreasing; column indices below k), x and r of the sizes the product
    takes, r distinct from a and x."""
    cdef int64_t m = o[4], k = o[5], n = o[6], nnz, i
    cdef const int32_t* ptr
    need_slot(t, o[0])
    need_ref(t, o[1])
    need_ref(t, o[2])
    if m < 0 or k < 0 or n < 0 or not 0 <= o[7] <= 1:
        return malformed(code, f"dimensions {m} x {k} x {n}, transpose flag {o[7]}")
    nnz = t.size_of(o[1])
    t.check_range(o[3], m + 1, t.n_ints, "index")
    ptr = t.ints + o[3]
    if ptr[0] != 0 or ptr[m] != nnz:
        return malformed(code, f"row pointers from {ptr[0]} to {ptr[m]} for {nnz} values")
    for i in range(m):
        if ptr[i + 1] < ptr[i]:
            return malformed(code, f"row pointers decreasing at row {i}")
    t.check_indices(<int64_t>o[3] + m + 1, nnz, k)
    if t.size_of(o[2]) != (m if o[7] else k) * n or \
            t.slot_size[o[0]] != (k if o[7] else m) * n:
        return malformed(code, f"an argument of {t.size_of(o[2])} and a result of "
                               f"{t.slot_size[o[0]]} elements for a {m} x {k} matrix "
                               f"{'transposed ' if o[7] else ''}times {n} columns")
    if o[0] == o[1] or o[0] == o[2]:
        return malformed(code, "a result that is also an argument")
    t.ints_frozen = max(t.ints_frozen, <int64_t>o[3] + m + 1 + nnz)
    return 0


cdef int quadform_check(Tape t, int code, const int32_t* o) except -1:
    """[r, c, x, g, k, form] (_ops/quadform.pxi): c a constant of k x k finite
    values, symmetric where form says so; r a slot of B values, x and g of k
    B, all three distinct; g no input and holding no value a reverse rule
    reads (the op's own store of its gradient, which it overwrites unsaved:
    write_flags marks it written; check_gradient_slots in _optimise.pxi
    checks that no other op reads it)."""
    cdef int64_t k = o[4], B
    cdef int facts
    need_slot(t, o[0])
    need_ref(t, o[1])
    need_slot(t, o[2])
    need_slot(t, o[3])
    B = t.slot_size[o[0]]
    if o[1] >= 0:
        return malformed(code, f"a matrix in slot {o[1]}; it takes a constant")
    if k < 1 or B < 1 or not 0 <= o[5] <= 3:
        return malformed(code, f"size {k}, {B} results, form {o[5]}")
    if t.size_of(o[1]) != k * k or t.slot_size[o[2]] != k * B or t.slot_size[o[3]] != k * B:
        return malformed(code, f"a matrix of {t.size_of(o[1])}, a vector of "
                               f"{t.slot_size[o[2]]} and a gradient of {t.slot_size[o[3]]} "
                               f"values for size {k} and {B} results")
    if o[0] == o[2] or o[0] == o[3] or o[2] == o[3]:
        return malformed(code, "a result, vector and gradient that are not three slots")
    if t.slot_state[o[3]] & (SLOT_NEEDED | SLOT_PINNED):
        return malformed(code, f"a gradient slot {o[3]} that is an input, the output or "
                               f"holds a value a derivative reads")
    facts = matrix_facts(t.consts + t.const_off[-o[1] - 1], k)
    if not facts & 1:
        return malformed(code, "a matrix with entries that are not finite")
    if o[5] & 2 and not facts & 2:
        return malformed(code, "a matrix said to be symmetric that is not")
    return 0


# ---- callback (_ops/callback.pxi)

cdef int callback_check(Tape t, int code, const int32_t* o, int nops) except -1:
    """Operands a recording may give: [r, cb, nargs, a_1 .. a_nargs], cb a
    registered callback."""
    cdef int i
    if nops < 3 or o[2] != nops - 3:
        return malformed(code, f"{nops} operands; it takes [result, callback, nargs, args...]")
    need_slot(t, o[0])
    if not 0 <= o[1] < len(t._callbacks):
        return malformed(code, f"callback {o[1]}; the tape has {len(t._callbacks)}")
    for i in range(o[2]):
        need_ref(t, o[3 + i])
    return 0
