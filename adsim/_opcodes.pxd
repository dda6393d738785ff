# Declarations of adsim/_opcodes.pyx, the lowest layer of the compiled core:
# the opcodes, the Sweep every kernel reads and writes, the per-op facts
# generated from the op table, growable buffers and the value stack, and the
# inline accessors of a sweep's arrays (which every kernel module compiles in).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy, memset

# Opcodes. Families occupy ranges so sweeps dispatch on the family and each
# family file dispatches on the opcode. The numbers are generated from the op
# table, adsim/ops.py (python -m adsim.ops); tests/test_ops_table.py fails
# when this block differs from what the table generates.
cpdef enum Opcode:
    # BEGIN opcodes generated from adsim/ops.py (python -m adsim.ops)
    # unary elementwise, one scalar parameter (_ops/unary.pxi)
    NEG = 1
    ABS = 2
    SIGN = 3
    SQRT = 4
    CBRT = 5
    SQUARE = 6
    RECIPROCAL = 7
    EXP = 8
    EXP2 = 9
    EXPM1 = 10
    LOG = 11
    LOG2 = 12
    LOG10 = 13
    LOG1P = 14
    SIN = 15
    COS = 16
    TAN = 17
    ARCSIN = 18
    ARCCOS = 19
    ARCTAN = 20
    SINH = 21
    COSH = 22
    TANH = 23
    ARCSINH = 24
    ARCCOSH = 25
    ARCTANH = 26
    ADD_C = 27
    MUL_C = 28
    RSUB_C = 29
    RDIV_C = 30
    POW_C = 31
    RPOW_C = 32
    STOP_GRADIENT = 33
    FLOOR = 34
    CEIL = 35
    TRUNC = 36
    RINT = 37
    UNARY_END = 38
    # binary elementwise, operands of equal size or size 1 (_ops/binary.pxi)
    ADD = 64
    SUB = 65
    MUL = 66
    DIV = 67
    POW = 68
    ARCTAN2 = 69
    HYPOT = 70
    MAXIMUM = 71
    MINIMUM = 72
    FLOOR_DIVIDE = 73
    REMAINDER = 74
    FMOD = 75
    LESS = 76
    LESS_EQUAL = 77
    GREATER = 78
    GREATER_EQUAL = 79
    EQUAL = 80
    NOT_EQUAL = 81
    LOGADDEXP = 82
    LOGADDEXP2 = 83
    BINARY_END = 84
    # branch records: no result, checked on replay (_ops/branch.pxi)
    COMPARE = 96
    ARGEXT = 97
    BRANCH_END = 98
    # linear structural ops (_ops/structural.pxi)
    COPY = 128
    FILL = 129
    BROADCAST = 130
    SUM = 131
    CUMSUM = 132
    GATHER = 133
    SCATTER = 134
    WHERE = 135
    GATHER_AT = 136
    SCATTER_AT = 137
    SELECT = 138
    ARGEXT_AT = 139
    SEARCH = 140
    STRUCTURAL_END = 141
    # linear algebra (_ops/linalg.pxi)
    MATMUL = 160
    SPMV = 161
    QUADFORM = 162
    LINALG_END = 163
    # user primitives and loops: one Python call per op (_ops/callback.pxi)
    CALLBACK = 192
    CALLBACK_END = 193
    # END opcodes

# comparison kinds of COMPARE
cpdef enum CompareKind:
    CMP_LT = 0
    CMP_LE = 1
    CMP_GT = 2
    CMP_GE = 3
    CMP_EQ = 4
    CMP_NE = 5

# per-op flags
cpdef enum OpFlag:
    FLAG_PUSH = 1           # the result overwrites a value the reverse sweep needs
    FLAG_INPLACE = 2        # the op writes part of an existing slot (SCATTER)
    FLAG_TICK = 4           # set at finish every TICK_UNITS of work: sweeps may check for Ctrl-C here
    FLAG_PASSIVE = 8        # the result has no derivative (constants, stop-gradients): no rules run

ctypedef struct DStack:     # value stack of overwritten values
    double* data            # contents
    int64_t top             # number of doubles held
    int64_t cap             # capacity in doubles
    int64_t peak            # largest top seen

# A fused kernel (adsim/_fuse/): one run of elementwise ops compiled into one
# loop. V, T, A, D hold the values, tangents, adjoints and adjoint tangents of
# the run's refs (FusedRun.refs); seeds are the output's adjoint, its
# tangent and (gradient, second_order) whether the adjoints of the run's
# inputs are fresh arrays the kernel sets rather than adds to; outs receive
# the output's value and tangent (see codegen.py).
ctypedef void (*fused_kernel)(double** V, double** T, double** A, double** D,
                              const double* seeds, double* outs) noexcept nogil

# A fused kernel of p tangent directions (vector mode): V and T as above.
ctypedef void (*fused_vector_kernel)(double** V, double** T, int64_t p) noexcept nogil

ctypedef struct FusedRun:  # the fused kernels of one run (one direction each), or NULLs
    fused_kernel values     # the last value of every slot the run writes
    fused_kernel tangents   # ... with their tangents
    fused_vector_kernel vtangents   # ... with p directions of tangents
    fused_kernel reverse    # the run's adjoints (one direction), after a keeping forward
    fused_kernel reverse2   # ... with their tangents (one direction: second order)
    fused_kernel gradient   # the run and the sum after it into the output, forward and reverse
    fused_kernel second_order   # ... with tangents and adjoint tangents
    fused_kernel sum        # the run and the sum after it into the output: values only, no slot written
    int32_t* refs           # the slots and constants the kernels read and write, in order
    int32_t n_refs
    int32_t* saved          # the slots a keeping forward pushes for the reverse kernel
    int32_t n_saved

ctypedef struct Sweep:      # everything a kernel reads or writes
    uint16_t* code          # opcode per op
    int32_t* start          # operand offset per op
    uint8_t* flags          # OpFlag bits per op
    int32_t* opnd           # operand stream
    double* val             # value arena
    double* tan             # tangents: p directions per slot, direction-major
    double* adj             # adjoints: q directions per slot
    double* adot            # tangents of adjoints (second order): p directions
    int p                   # tangent directions
    int q                   # adjoint directions
    int64_t* slot_off       # arena offset per slot
    int64_t* slot_size      # elements per slot
    double* consts          # constants stream
    int64_t* const_off      # offset per constant id
    int64_t* const_size     # elements per constant id
    int32_t* ints           # index stream (gather/scatter indices, argext records)
    uint8_t* branches       # comparison outcomes
    DStack* stack           # overwritten values (and tangents)
    int64_t err_op          # op at which a replay left the recorded path
    int64_t recording_op    # the op being recorded (its branch ops store outcomes), else -1
    int64_t budget          # work left before the next check for Ctrl-C
    int64_t width           # arrays per slot a sweep touches (1 + directions), for the budget
    void* callbacks         # borrowed list or tuple of Python objects for CALLBACK ops
    void* context           # borrowed SweepContext of the replay (NULL while recording)
    void* compiled          # per callback: its CompiledOp (_callback.pxd), bound by the context; or NULL
    int32_t n_compiled      # entries of compiled
    int32_t* run_of         # run of each op or -1 (_chunks.pxi); NULL: no chunking
    int32_t* runs           # run table, RUN_FIELDS per run
    int32_t* run_refs       # slots and constant ids of each run
    uint8_t* run_shifted    # per op: a gather whose source has a view in its run
    int64_t* slot_shift     # per slot: first element of its view in a run, or NULL
    int64_t* slot_ld        # per slot: distance between its directions, or NULL
    FusedRun* fused         # per run: its fused kernels (adsim/_fuse/), or NULL


# ---- per-op facts (_ops/facts.pxi, generated from adsim/ops.py) ----------------
# filled when adsim._opcodes is imported; bits of VALUE_USES: reads_args and
# reads_result say which (USES_ARGS and USES_RESULT stay in the generated file)

# BEGIN per-op facts generated from adsim/ops.py (python -m adsim.ops)
cdef uint8_t VALUE_USES[<int>CALLBACK_END]    # the reverse rules read the arguments (USES_ARGS), the result (USES_RESULT)
cdef uint8_t CONSTANT_SLOPE[<int>CALLBACK_END]    # unary: the derivative does not depend on x
cdef uint8_t NO_DERIVATIVE[<int>CALLBACK_END]    # the result has derivative zero (no reverse rule runs)
cdef uint8_t OPERAND_COUNT[<int>CALLBACK_END]    # operands with the result (a variadic op: before the variadic ones)
cdef uint8_t VALUE_OPERANDS[<int>CALLBACK_END]    # bit i: operand i is a value slot (bit 0: the variadic operands)
cdef uint8_t SLOT_OPERANDS[<int>CALLBACK_END]    # bit i: operand i refers to a slot or constant (value, index or mask; bit 0: the variadic operands)
cdef uint8_t READ_OPERANDS[<int>CALLBACK_END]    # bit i: the reverse rules read operand i's values (bit 0: the variadic ones)
cdef uint8_t PARAM_OPERAND[<int>CALLBACK_END]    # the position of the scalar parameter (a position in the constants), or 0
cdef uint8_t INDEX_OPERAND[<int>CALLBACK_END]    # the position of the operand of index data read at replay, or 0
cdef uint8_t CHUNKABLE[<int>CALLBACK_END]    # may run chunk by chunk inside a run of elementwise ops
cdef uint8_t ELEMENTWISE_OPERANDS[<int>CALLBACK_END]    # operands after the result a chunked run reads element by element
# END per-op facts

cdef bint reads_args(int code) noexcept nogil      # the reverse rules of code read its arguments
cdef bint reads_result(int code) noexcept nogil    # ... and its result


# ---- growable buffers and the value stack (_buffers.pxi) -----------------------

cdef void* grow_to(void* ptr, int64_t* cap, int64_t need, size_t itemsize) noexcept nogil
cdef void* grow(void* ptr, int64_t* cap, int64_t need, size_t itemsize) except NULL
cdef int no_memory(const char* what, int64_t nbytes) except -1 nogil
cdef void move_doubles(double* dst, double* src, int64_t n) noexcept nogil
cdef int stack_reserve(DStack* st, int64_t n) except -1 nogil
cdef int stack_push_indexed(DStack* st, const double* src, const int32_t* idx,
                            int64_t m) except -1 nogil


cdef inline void copy_doubles(double* dst, const double* src, int64_t n) noexcept nogil:
    """memcpy, without the call for the 1-element slots of scalar code."""
    cdef int64_t i
    if n <= 4:
        for i in range(n):
            dst[i] = src[i]
    else:
        memcpy(dst, src, <size_t>n * sizeof(double))


cdef inline void zero_doubles(double* dst, int64_t n) noexcept nogil:
    cdef int64_t i
    if n <= 4:
        for i in range(n):
            dst[i] = 0.0
    else:
        memset(dst, 0, <size_t>n * sizeof(double))


cdef inline int stack_push(DStack* st, const double* src, int64_t n) except -1 nogil:
    if st.top + n > st.cap:
        stack_reserve(st, n)
    copy_doubles(st.data + st.top, src, n)
    st.top += n
    if st.top > st.peak:
        st.peak = st.top
    return 0


cdef inline void stack_pop(DStack* st, double* dst, int64_t n) noexcept nogil:
    st.top -= n
    copy_doubles(dst, st.data + st.top, n)


cdef inline void stack_pop_indexed(DStack* st, double* dst, const int32_t* idx,
                                   int64_t m) noexcept nogil:
    cdef int64_t j
    st.top -= m
    for j in range(m):
        dst[idx[j]] = st.data[st.top + j]


# ---- a sweep's arrays, as the kernels see them ---------------------------------

cdef inline int64_t ref_size(Sweep* s, int ref) noexcept nogil:
    return s.slot_size[ref] if ref >= 0 else s.const_size[-ref - 1]

# Inside a chunked run (_chunks.pxi) a slot of the run is a view on elements
# [a, a + n) of its m elements: slot_size is n, slot_shift a, and slot_ld m,
# the distance between its directions (tangents and adjoints are stored
# direction-major, [p][m]). Elsewhere shift is 0 and ld the slot's size.

cdef inline int64_t view_shift(Sweep* s, int ref) noexcept nogil:
    return s.slot_shift[ref] if s.slot_shift != NULL else 0

cdef inline int64_t dir_stride(Sweep* s, int ref) noexcept nogil:
    """Elements between two directions of ``ref``'s tangents or adjoints."""
    if ref >= 0 and s.slot_ld != NULL:
        return s.slot_ld[ref]
    return ref_size(s, ref)

cdef inline double* vptr(Sweep* s, int ref) noexcept nogil:
    if ref >= 0:
        return s.val + s.slot_off[ref] + view_shift(s, ref)
    return s.consts + s.const_off[-ref - 1]

cdef inline double* tptr(Sweep* s, int ref) noexcept nogil:
    """Tangents of ``ref`` (p directions), NULL for constants."""
    if ref < 0 or s.tan == NULL:
        return NULL
    return s.tan + s.p * s.slot_off[ref] + view_shift(s, ref)

cdef inline double* aptr(Sweep* s, int ref) noexcept nogil:
    """Adjoints of ``ref`` (q directions), NULL for constants."""
    if ref < 0 or s.adj == NULL:
        return NULL
    return s.adj + s.q * s.slot_off[ref] + view_shift(s, ref)

cdef inline double* dptr(Sweep* s, int ref) noexcept nogil:
    """Tangents of the adjoints of ``ref`` (p directions), NULL for constants."""
    if ref < 0 or s.adot == NULL:
        return NULL
    return s.adot + s.p * s.slot_off[ref] + view_shift(s, ref)

cdef inline int64_t stride_of(Sweep* s, int ref, int64_t n) noexcept nogil:
    """1 for an operand of the result's size, 0 for a broadcast scalar."""
    return 0 if ref_size(s, ref) == 1 and n != 1 else 1


# A zero factor makes a zero contribution, whichever side it is on. The
# adjoint of a branch that np.where did not select is zero, but its partials
# may be infinite or NaN (sqrt, log, arcsin, powers and divisions outside
# their domain): 0 * NaN would turn the whole gradient into NaN although the
# branch contributes nothing. The same holds for a zero tangent times an
# infinite partial (d sqrt(x) at 0 along a direction that does not move x).
# And forward and reverse mode meet the same factors in opposite orders:
# for sqrt(sum(x**2)) at x = 0 forward multiplies the infinite partial of
# sqrt by the zero tangent 2x*v, reverse multiplies the zero partial 2x by
# the infinite adjoint of sqrt. Only a rule symmetric in the two factors
# gives both modes the same answer (here the zero subgradient of the norm,
# and 0 for a partial 1/inf = 0 behind an overflow). So every partial
# multiplies its seed through chain().

cdef extern from "_elementwise.h":
    double chain(double partial, double seed) noexcept nogil   # partial * seed; 0 if either is 0
    double scaled(double slope, double seed) noexcept nogil    # chain() for a constant slope
