# CALLBACK [r, cb, nargs, a_1 .. a_nargs]: an op whose rules live in Python,
# one call per op and sweep (user primitives, checkpointed loops), or whose
# value and adjoint are computed in C by a CompiledRules object the rules
# object carries as ``compiled`` (below; _ops/dense_newton.pxi). The rules
# callbacks[cb] must have, their arguments and what they return are defined
# once, in adsim/_callback_rules.py; the kernels below hand them flat float64
# copies and copy their results back, checked.
#
# Compiled into adsim/_callback.pyx; the operand checks of these ops are in _ops/checks.pxi.

cdef dict LAYOUT_NAMES = {RECORDING: "record", VALUES: "values", TANGENTS: "tangent",
                          ADJOINTS: "adjoint", SECOND_ORDER: "second_order"}


cdef class SweepContext:
    """What the rules of a CALLBACK op see of the replay that runs them: the
    kind of sweep (``sweep``: "record", "values", "tangent", "adjoint" or
    "second_order"), its number of ``directions``, and a place to ``keep``
    values from one rule to a later one of the same call (a loop's forward
    pass keeping snapshots for the reverse sweep that follows). A replay
    owns one and what is kept is dropped when its call ends, so threads
    never share it."""

    def __cinit__(self, sweep="record", int directions=0):
        # (a replay makes one at its first call: no generator for the common case)
        layout = RECORDING if sweep == "record" else \
            next((k for k, name in LAYOUT_NAMES.items() if name == sweep), None)
        if layout is None:
            raise ValueError(f"adsim: no sweep {sweep!r}; one of {sorted(LAYOUT_NAMES.values())}")
        self.layout = layout
        self.directions = directions
        self.kept = {}

    @property
    def sweep(self):
        return LAYOUT_NAMES[self.layout]

    def keep(self, owner, value):
        """Keep ``value`` for ``owner`` (an op's rules object) until the call ends."""
        self.kept[id(owner)] = (owner, value)

    def take(self, owner):
        """What ``owner`` kept in this call (removed), or None."""
        found = self.kept.pop(id(owner), None)
        return None if found is None else found[1]

    def __dealloc__(self):
        free(self.compiled)

    cdef int begin(self, Sweep* s, int layout, int directions) except -1:
        """A new call (or step) on ``s``: ``layout`` and ``directions`` of
        its sweeps; the compiled rules of the tape's CALLBACK ops bound to
        the calling thread (again only when the thread changed)."""
        if self.kept:
            self.kept.clear()
        self.layout = layout
        self.directions = directions
        if s.callbacks != NULL and (<object>s.callbacks is not self.bound_to or
                                    self.bound_thread != PyThread_get_thread_ident()):
            self.bind(<object>s.callbacks)
        s.compiled = <void*>self.compiled
        s.n_compiled = self.n_compiled
        return 0

    cdef int bind(self, object callbacks) except -1:
        cdef Py_ssize_t n = len(callbacks), i
        cdef CompiledOp* table = <CompiledOp*>realloc(self.compiled, max(n, 1) * sizeof(CompiledOp))
        cdef CompiledRules fast
        if table == NULL:
            raise MemoryError("adsim: no memory for a replay's table of compiled rules")
        self.compiled = table
        self.n_compiled = 0             # (until it is filled)
        self.owners = []
        self.n_python = 0
        for i in range(n):
            memset(&table[i], 0, sizeof(CompiledOp))
            fast = compiled_of(callbacks[i])
            if fast is not None:
                self.owners.append((fast, fast.bind(&table[i])))
            if table[i].value == NULL or table[i].adjoint == NULL:
                memset(&table[i], 0, sizeof(CompiledOp))
                self.n_python += 1
        self.n_compiled = <int32_t>n
        self.bound_to = callbacks
        self.bound_thread = PyThread_get_thread_ident()
        return 0

    cdef bint python_free(self) noexcept:
        """Whether the sweeps of this call run no Python rule: every CALLBACK
        op has compiled rules and the layout needs only values and adjoints."""
        return self.n_python == 0 and (self.layout == VALUES or self.layout == ADJOINTS)


cdef SweepContext context_of(Sweep* s):
    if s.context != NULL:
        return <SweepContext>s.context
    return SweepContext()          # recording: a call of its own


cdef object copy_out(const double* src, int64_t dirs, int64_t n):
    """A new (dirs, n) array (n if dirs is 0) holding src; left empty if src is NULL."""
    cdef cnp.ndarray out
    if dirs > 0:
        out = np.empty((dirs, n), dtype=np.float64)
    else:
        out = np.empty(n, dtype=np.float64)
    if src != NULL:
        memcpy(cnp.PyArray_DATA(out), src, <size_t>(max(dirs, 1) * n) * sizeof(double))
    return out


cdef void copy_in(double* dst, object src, int64_t count, bint accumulate) except *:
    cdef cnp.ndarray arr = np.ascontiguousarray(src, dtype=np.float64).reshape(-1)
    cdef double* p = <double*>cnp.PyArray_DATA(arr)
    cdef int64_t i
    if arr.shape[0] != count:
        raise ValueError(f"adsim: a primitive returned {arr.shape[0]} numbers where {count} were expected")
    if accumulate:
        for i in range(count):
            dst[i] += p[i]
    else:
        memcpy(dst, p, <size_t>count * sizeof(double))


cdef list callback_args(Sweep* s, const int32_t* o):
    return [copy_out(vptr(s, o[3 + i]), 0, ref_size(s, o[3 + i])) for i in range(o[2])]


cdef list callback_tangents(Sweep* s, const int32_t* o):
    cdef list out = []
    cdef int i
    for i in range(o[2]):
        t = tptr(s, o[3 + i])
        out.append(None if t == NULL else copy_out(t, s.p, ref_size(s, o[3 + i])))
    return out


cdef tuple per_argument(object results, const int32_t* o, str rule):
    """A rule's results, one per argument (checked: the sweeps index them)."""
    out = tuple(results)
    if len(out) != o[2]:
        raise ValueError(f"adsim: a primitive's {rule} rule returned {len(out)} results for "
                         f"{o[2]} arguments; return one per argument (None for no derivative)")
    return out


cdef object callback_of(Sweep* s, const int32_t* o):
    cbs = <object>s.callbacks
    if not 0 <= o[1] < len(cbs):
        raise IndexError(f"adsim: the tape has no callback {o[1]}")
    return cbs[o[1]]


cdef class CompiledRules:
    """Base of rules computed in C (adsim/_callback.pxd): a subclass
    overrides ``bind``."""

    cdef object bind(self, CompiledOp* op):
        raise NotImplementedError(f"adsim: {type(self).__name__} has no compiled rules")


cdef inline CompiledRules compiled_of(object cb):
    """The rules in C of a CALLBACK op's rules object, or None."""
    fast = getattr(cb, "compiled", None)
    return fast if isinstance(fast, CompiledRules) else None


cdef inline const CompiledOp* compiled_op(Sweep* s, const int32_t* o) noexcept nogil:
    """The op's rules in C, bound to this thread by the replay, or NULL."""
    cdef const CompiledOp* c
    if s.compiled == NULL or not 0 <= o[1] < s.n_compiled:
        return NULL
    c = (<const CompiledOp*>s.compiled) + o[1]
    return c if c.value != NULL else NULL


# Python rules take the GIL for their call (a sweep that released it
# elsewhere keeps running without it); compiled rules run without it. A
# sweep without a bound table (the call made while recording) binds the
# compiled rules for that one call. Rules that bind only one of value and
# adjoint run their Python rules for both, as SweepContext.bind counts them.

cdef int callback_value(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef const CompiledOp* c = compiled_op(s, o)
    if c != NULL:
        return c.value(c.rules, c.scratch, s, o)
    with gil:
        value_with_gil(s, o)
    return 0


cdef int value_with_gil(Sweep* s, const int32_t* o) except -1:
    cdef CompiledOp op
    cb = callback_of(s, o)
    cdef CompiledRules fast = compiled_of(cb)
    if fast is not None:
        memset(&op, 0, sizeof(CompiledOp))
        alive = fast.bind(&op)
        if op.value != NULL and op.adjoint != NULL:
            return op.value(op.rules, op.scratch, s, o)
    copy_in(vptr(s, o[0]), cb.value(callback_args(s, o), context_of(s)), ref_size(s, o[0]), False)
    return 0


cdef int callback_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef int64_t n = ref_size(s, o[0])
    with gil:
        cb = callback_of(s, o)
        result = copy_out(vptr(s, o[0]), 0, n)
        out = cb.tangent(callback_args(s, o), result, callback_tangents(s, o), context_of(s))
        copy_in(tptr(s, o[0]), out, s.p * n, False)
    return 0


cdef int callback_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef const CompiledOp* c = compiled_op(s, o)
    if c != NULL:
        return c.adjoint(c.rules, c.scratch, s, o)
    with gil:
        adjoint_with_gil(s, o)
    return 0


cdef int adjoint_with_gil(Sweep* s, const int32_t* o) except -1:
    cdef int64_t n = ref_size(s, o[0])
    cdef int i
    cdef CompiledOp op
    cb = callback_of(s, o)
    cdef CompiledRules fast = compiled_of(cb)
    if fast is not None:
        memset(&op, 0, sizeof(CompiledOp))
        alive = fast.bind(&op)
        if op.value != NULL and op.adjoint != NULL:
            return op.adjoint(op.rules, op.scratch, s, o)
    result = copy_out(vptr(s, o[0]), 0, n)
    adjs = per_argument(cb.adjoint(callback_args(s, o), result, copy_out(aptr(s, o[0]), s.q, n),
                                   context_of(s)), o, "adjoint")
    for i in range(o[2]):
        if adjs[i] is not None and o[3 + i] >= 0:
            copy_in(aptr(s, o[3 + i]), adjs[i], s.q * ref_size(s, o[3 + i]), True)
    return 0


cdef int callback_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil:
    cdef int64_t n = ref_size(s, o[0])
    cdef int i
    with gil:
        cb = callback_of(s, o)
        result = copy_out(vptr(s, o[0]), 0, n)
        adjs, adots = cb.soadjoint(callback_args(s, o), result, callback_tangents(s, o),
                                   copy_out(aptr(s, o[0]), 0, n), copy_out(dptr(s, o[0]), s.p, n),
                                   context_of(s))
        adjs = per_argument(adjs, o, "second-order adjoint")
        adots = per_argument(adots, o, "second-order adjoint")
        for i in range(o[2]):
            if o[3 + i] < 0:
                continue
            if adjs[i] is not None:
                copy_in(aptr(s, o[3 + i]), adjs[i], ref_size(s, o[3 + i]), True)
            if adots[i] is not None:
                copy_in(dptr(s, o[3 + i]), adots[i], s.p * ref_size(s, o[3 + i]), True)
    return 0
