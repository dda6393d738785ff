# Generic sweeps over the tape. Each walks the op stream once and hands every
# op to its family's kernel; no Python is called per op (CALLBACK ops aside,
# which take the GIL). Everything here is nogil: a replay that is worth it
# runs without the GIL (_replay.pxi). Kernels return 0, 1 when a branch
# record differs (s.err_op is then set), or -1 with an exception raised.

# The accessors of a sweep's arrays (vptr, tptr, aptr, dptr, ref_size, ...)
# and chain(), which every partial multiplies its seed through, are inline
# functions of _opcodes.pxd: the kernel modules compile them in as well.

# GCC does not turn the select of chain() into vector code while it assumes that
# floating-point operations may trap (-ftrapping-math, its default; clang's
# is the opposite). Nothing here traps or reads FP flags, so the module's
# functions are compiled without that assumption; results are unchanged
# (no reassociation or contraction is allowed by it).
cdef extern from *:
    """
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC optimize ("no-trapping-math")
    #endif
    """
    pass


# Work is counted in units of about one element touched (see Tape.mark_ticks;
# TICK_UNITS and SIGNAL_UNITS are in _sweeps.pxd).
cdef extern from "Python.h":
    int PyErr_CheckSignals() except -1

NO_SIGNAL_CHECKS = 0x7fffffffffffffff      # the budget of sweeps that never check


cdef int check_signals(Sweep* s, int64_t units) except -1 nogil:
    """Count ``units`` of work done; after SIGNAL_UNITS of them, let Python
    handle a pending Ctrl-C (a long replay stays interruptible)."""
    s.budget -= units
    if s.budget >= 0:
        return 0
    s.budget = SIGNAL_UNITS
    with gil:
        PyErr_CheckSignals()
    return 0


cdef inline bint scalar_elementwise(Sweep* s, int code, const int32_t* o) noexcept nogil:
    """A unary or binary op on one element (scalar code): handled inline."""
    return code < BINARY_END and s.slot_size[o[0]] == 1


cdef inline void scalar_value(Sweep* s, int code, const int32_t* o) noexcept nogil:
    if code < UNARY_END:
        vptr(s, o[0])[0] = UNARY_VALUE[code](vptr(s, o[1])[0], unary_param(s, o))
    else:
        vptr(s, o[0])[0] = BINARY_VALUE[code](vptr(s, o[1])[0], vptr(s, o[2])[0])


cdef inline void scalar_adjoint(Sweep* s, int code, const int32_t* o) noexcept nogil:
    cdef double d[5]
    cdef double* ay = aptr(s, o[0])
    cdef double* aa
    cdef double* ab
    cdef int j
    if code < UNARY_END:
        aa = aptr(s, o[1])
        if aa == NULL:
            return
        UNARY_RULE[code](vptr(s, o[1])[0], vptr(s, o[0])[0], unary_param(s, o), 1, d)
        for j in range(s.q):
            aa[j] += chain(d[0], ay[j])
        return
    aa = aptr(s, o[1])
    ab = aptr(s, o[2])
    BINARY_RULE[code](vptr(s, o[1])[0], vptr(s, o[2])[0], vptr(s, o[0])[0], 1, d)
    for j in range(s.q):
        if aa != NULL:
            aa[j] += chain(d[0], ay[j])
        if ab != NULL:
            ab[j] += chain(d[1], ay[j])


cdef int code_value(Sweep* s, int code, const int32_t* o, int64_t k) except -1 nogil:
    """Op k's values, given its code and operands (which a chunked sweep
    may have moved)."""
    if scalar_elementwise(s, code, o):
        scalar_value(s, code, o)
        return 0
    if code < UNARY_END:
        return unary_value(s, code, o)
    if code < BINARY_END:
        return binary_value(s, code, o)
    if code < BRANCH_END:
        return branch_value(s, code, o, k)
    if code < STRUCTURAL_END:
        if one_element_value(s, code, o):       # inline: scalar code
            return 0
        return structural_value(s, code, o)
    if code < LINALG_END:
        return linalg_value(s, code, o)
    return callback_value(s, code, o)


cdef int code_value_tangent(Sweep* s, int code, const int32_t* o, int64_t k) except -1 nogil:
    """Op k's values and then its tangents (a matrix product computes both in
    one pass over its matrix); 1 when a branch record differs."""
    if code == MATMUL:
        return linalg_value_tangent(s, o)
    if code_value(s, code, o, k):
        return 1
    return code_tangent(s, code, o)


cdef int code_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if code < UNARY_END:
        return unary_tangent(s, code, o)
    if code < BINARY_END:
        return binary_tangent(s, code, o)
    if code < BRANCH_END:
        return 0
    if code < STRUCTURAL_END:
        return structural_tangent(s, code, o)
    if code < LINALG_END:
        return linalg_tangent(s, code, o)
    return callback_tangent(s, code, o)


cdef int code_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if scalar_elementwise(s, code, o):
        scalar_adjoint(s, code, o)
        return 0
    if code < UNARY_END:
        return unary_adjoint(s, code, o)
    if code < BINARY_END:
        return binary_adjoint(s, code, o)
    if code < BRANCH_END:
        return 0
    if code < STRUCTURAL_END:
        if one_element_adjoint(s, code, o):     # inline: scalar code
            return 0
        return structural_adjoint(s, code, o)
    if code < LINALG_END:
        return linalg_adjoint(s, code, o)
    return callback_adjoint(s, code, o)


cdef int code_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    if code < UNARY_END:
        return unary_soadjoint(s, code, o)
    if code < BINARY_END:
        return binary_soadjoint(s, code, o)
    if code < BRANCH_END:
        return 0
    if code < STRUCTURAL_END:
        return linear_soadjoint(s, code, o)
    if code < LINALG_END:
        return linalg_soadjoint(s, code, o)
    return callback_soadjoint(s, code, o)


cdef int linear_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    """Second-order adjoint of a linear op: its adjoint map applied to the
    adjoint (one direction) and to the adjoint tangents (p directions)."""
    cdef double* adj = s.adj
    cdef int q = s.q
    structural_adjoint(s, code, o)
    s.adj = s.adot
    s.q = s.p
    structural_adjoint(s, code, o)
    s.adj = adj
    s.q = q
    return 0


cdef inline int save_result(Sweep* s, int64_t k, bint with_tangents) except -1 nogil:
    """Push the values (and tangents) that op k is about to overwrite."""
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int r = o[0]
    cdef int64_t n = s.slot_size[r], ld = dir_stride(s, r)
    cdef int64_t j
    if s.flags[k] & FLAG_INPLACE:
        stack_push_indexed(s.stack, vptr(s, r), s.ints + o[2], o[3])
        if with_tangents:
            for j in range(s.p):
                stack_push_indexed(s.stack, tptr(s, r) + j * ld, s.ints + o[2], o[3])
        return 0
    stack_push(s.stack, vptr(s, r), n)
    if with_tangents:
        for j in range(s.p):
            stack_push(s.stack, tptr(s, r) + j * ld, n)
    return 0


cdef void restore_result(Sweep* s, int64_t k, bint with_tangents) noexcept nogil:
    """Pop what save_result pushed for op k, in reverse order."""
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int r = o[0]
    cdef int64_t n = s.slot_size[r], ld = dir_stride(s, r)
    cdef int64_t j
    if s.flags[k] & FLAG_INPLACE:
        if with_tangents:
            for j in range(s.p - 1, -1, -1):
                stack_pop_indexed(s.stack, tptr(s, r) + j * ld, s.ints + o[2], o[3])
        stack_pop_indexed(s.stack, vptr(s, r), s.ints + o[2], o[3])
        return
    if with_tangents:
        for j in range(s.p - 1, -1, -1):
            stack_pop(s.stack, tptr(s, r) + j * ld, n)
    stack_pop(s.stack, vptr(s, r), n)


cdef inline void clear_result_adjoint(Sweep* s, int64_t k, double* adj, int dirs) noexcept nogil:
    """After op k is reversed its result slot holds an earlier variable (or
    none): that variable's adjoint starts at zero. SCATTER clears its own part."""
    cdef const int32_t* o = s.opnd + s.start[k]
    cdef int r = o[0]
    cdef int64_t j, ld
    if r < 0 or (s.flags[k] & FLAG_INPLACE) or adj == NULL:
        return
    ld = dir_stride(s, r)
    for j in range(dirs):
        zero_doubles(adj + dirs * s.slot_off[r] + view_shift(s, r) + j * ld, s.slot_size[r])


cdef inline int forward_step(Sweep* s, int64_t k, const int32_t* o, bint keep,
                             bint tangents) except -1 nogil:
    """Op k forward (operands o, which a chunked sweep may have moved): its
    values and tangents, after pushing what it overwrites when ``keep``;
    1 when a branch record differs."""
    if keep and (s.flags[k] & FLAG_PUSH):
        save_result(s, k, tangents)
    if tangents:
        if s.flags[k] & FLAG_PASSIVE:
            return passive_value_tangent(s, k, o)
        return code_value_tangent(s, s.code[k], o, k)
    return code_value(s, s.code[k], o, k)


cdef int passive_value_tangent(Sweep* s, int64_t k, const int32_t* o) except -1 nogil:
    """Op k's values, and zero tangents for its result, which has no
    derivative (FLAG_PASSIVE): no rule runs, so no infinite partial (sqrt at
    0 of a constant) ever meets a zero."""
    cdef int r = o[0]
    cdef int64_t j, ld
    if code_value(s, s.code[k], o, k):
        return 1
    if r >= 0 and s.tan != NULL:
        ld = dir_stride(s, r)
        for j in range(s.p):
            zero_doubles(tptr(s, r) + j * ld, s.slot_size[r])
    return 0


cdef inline int reverse_step(Sweep* s, int64_t k, const int32_t* o, bint second_order) except -1 nogil:
    """Op k in reverse: its adjoints (and their tangents), then the result's
    adjoint cleared and the values it overwrote restored. An op whose result
    has no derivative (FLAG_PASSIVE) passes nothing back."""
    if second_order:
        if not (s.flags[k] & FLAG_PASSIVE):
            code_soadjoint(s, s.code[k], o)
        clear_result_adjoint(s, k, s.adj, 1)
        clear_result_adjoint(s, k, s.adot, s.p)
    else:
        if not (s.flags[k] & FLAG_PASSIVE):
            code_adjoint(s, s.code[k], o)
        clear_result_adjoint(s, k, s.adj, s.q)
    if s.flags[k] & FLAG_PUSH:
        restore_result(s, k, second_order)
    return 0


cdef inline int sweep_forward(Sweep* s, int64_t n_ops, bint keep, bint tangents) except -1 nogil:
    """Values, and p tangents when ``tangents``; with ``keep`` what ops
    overwrite goes to the stack. 1 when a branch record differs."""
    cdef int64_t k = 0
    cdef int32_t r
    while k < n_ops:
        r = run_at(s, k)
        if r >= 0:
            if not fused_forward(s, r, keep, tangents):
                run_forward(s, r, keep, tangents)
            k = s.runs[r * RUN_FIELDS + RUN_END]
            continue
        if forward_step(s, k, s.opnd + s.start[k], keep, tangents):
            s.err_op = k
            return 1
        if s.flags[k] & FLAG_TICK:
            check_signals(s, TICK_UNITS * s.width)
        k += 1
    return 0


cdef inline int sweep_reverse(Sweep* s, int64_t n_ops, bint second_order) except -1 nogil:
    """q adjoints, or with ``second_order`` one adjoint and its p tangents,
    after a keeping forward sweep; restores the values."""
    cdef int64_t k = n_ops - 1
    cdef int32_t r
    while k >= 0:
        r = run_at(s, k)
        if r >= 0:
            if not fused_run_reverse(s, r, second_order):
                run_reverse(s, r, second_order)
            k = s.runs[r * RUN_FIELDS + RUN_FIRST] - 1
            continue
        reverse_step(s, k, s.opnd + s.start[k], second_order)
        if s.flags[k] & FLAG_TICK:
            check_signals(s, TICK_UNITS * s.width)
        k -= 1
    return 0


# The sweeps other modules call, one function per kind of sweep: each is one
# of the loops above with its flags constant, so the compiler drops the
# branches that do not apply from the loop over the ops (a call from
# another module cannot pass it constants). forward_sweep and reverse_sweep
# in _sweeps.pxd pick one.

cdef int forward_values(Sweep* s, int64_t n_ops) except -1 nogil:
    return sweep_forward(s, n_ops, False, False)


cdef int forward_values_kept(Sweep* s, int64_t n_ops) except -1 nogil:
    return sweep_forward(s, n_ops, True, False)


cdef int forward_tangents(Sweep* s, int64_t n_ops) except -1 nogil:
    return sweep_forward(s, n_ops, False, True)


cdef int forward_tangents_kept(Sweep* s, int64_t n_ops) except -1 nogil:
    return sweep_forward(s, n_ops, True, True)


cdef int reverse_adjoints(Sweep* s, int64_t n_ops) except -1 nogil:
    return sweep_reverse(s, n_ops, False)


cdef int reverse_second_order(Sweep* s, int64_t n_ops) except -1 nogil:
    return sweep_reverse(s, n_ops, True)
