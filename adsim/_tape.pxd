# Shared declarations of the compiled core: opcodes, buffers, sweep state.
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t

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
    BINARY_END = 82
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
    LINALG_END = 161
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
    int32_t* run_of         # run of each op or -1 (_chunks.pxi); NULL: no chunking
    int32_t* runs           # run table, RUN_FIELDS per run
    int32_t* run_refs       # slots and constant ids of each run
    uint8_t* run_shifted    # per op: a gather whose source has a view in its run
    int64_t* slot_shift     # per slot: first element of its view in a run, or NULL
    int64_t* slot_ld        # per slot: distance between its directions, or NULL


cdef class SweepContext:
    """What the rules of CALLBACK ops see of the replay running them (_ops/callback.pxi)."""
    cdef public int layout            # VALUES, TANGENTS, ADJOINTS or SECOND_ORDER (_replay.pxi)
    cdef public int directions        # tangent or adjoint directions of the sweep
    cdef dict kept                    # what rules keep between the sweeps of one call

    cdef void begin(self, int layout, int directions)


cdef class Replay:
    """The state of one replay (_replay.pxi): value arena, work buffer, value stack."""
    cdef Sweep s                      # the sweep in progress
    cdef SweepContext context         # of its CALLBACK ops, for one call
    cdef double* val                  # value arena
    cdef bint owns_val                # False: the tape's recording arena, lent
    cdef double* work                 # tangents, adjoints, adjoint tangents
    cdef int64_t work_cap
    cdef int64_t zero_lo              # work[lo:hi] is known to hold zeros (a
    cdef int64_t zero_hi              # finished reverse sweep leaves its adjoints zero)
    cdef DStack stack                 # values saved for the reverse sweep
    cdef int64_t* own_sizes           # slot sizes, constant offsets, constant sizes:
    cdef object runs                  # copies that chunked runs rewrite, with the run tables
    cdef cnp.ndarray views            # own slot_shift / slot_ld of the chunked sweeps
    cdef bint heavy                   # sweeps release the GIL
    cdef bint chunked                 # the sweep is pointed at the run tables


cdef class Tape:
    # the recorded program: appended while recording, read-only afterwards
    cdef uint16_t* code
    cdef int32_t* start
    cdef uint8_t* flags
    cdef int64_t n_ops
    cdef int64_t cap_ops
    cdef int32_t* opnd
    cdef int64_t n_opnd
    cdef int64_t cap_opnd
    cdef double* consts
    cdef int64_t n_consts
    cdef int64_t cap_consts
    cdef int64_t* const_off
    cdef int64_t* const_size
    cdef int64_t n_const_ids
    cdef int64_t cap_const_ids
    cdef int32_t* ints
    cdef int64_t n_ints
    cdef int64_t cap_ints
    cdef int64_t ints_frozen          # ints below this are read by gathers/scatters: argext may not write them
    cdef uint8_t* branches
    cdef int64_t n_branches
    cdef int64_t cap_branches
    cdef int64_t* slot_off
    cdef int64_t* slot_size
    cdef uint8_t* slot_state          # recording: 0 never written, 1 written, 2 pinned
    cdef uint32_t* slot_writes        # recording: ops that wrote each slot (element caches check it)
    cdef int64_t n_slots
    cdef int64_t cap_slots
    cdef object _callbacks            # Python objects of CALLBACK ops: a list, a tuple once finished
    cdef list _input_slots
    cdef list _input_shapes
    cdef list _input_varied           # per input: differentiated (True) or data (False)
    cdef int out_slot                 # output slot, -1 until finished
    cdef readonly object output_shape
    cdef readonly bint recording
    cdef bint failed                  # the recorded function raised
    cdef int64_t work_units           # estimated work of one zero-order sweep (set at finish)
    # the recording arena: values at the recording point (lent to the first replay)
    cdef double* val
    cdef int64_t arena_size
    cdef int64_t arena_cap
    cdef bint arena_lent
    cdef dict free_slots              # size -> list of free slot ids (recording only)
    cdef dict _const_keys             # constants recorded so far, for sharing (recording only)
    # replays
    cdef public bint chunked          # sweep long elementwise runs chunk by chunk (_chunks.pxi)
    cdef object _runs                 # the run tables (find_runs), built on first use
    cdef list _pool                   # idle Replays: the first n_idle entries (then None)
    cdef int n_idle
    cdef int64_t stack_peak           # largest value stack of any replay
    cdef cnp.ndarray _output_template # an empty array of the output's shape

    cdef int new_slot(self, int64_t size) except -1
    cdef void release(self, int slot)
    cdef int64_t add_const_data(self, const double* data, int64_t n) except 0
    cdef int64_t add_const_values(self, const double* data, int64_t n) except -1
    cdef int64_t add_const_id(self, int64_t off, int64_t n) except 0
    cdef int64_t add_ints(self, const int32_t* data, int64_t n) except -1
    cdef int64_t reserve_branches(self, int64_t n) except -1
    cdef int64_t append_op(self, int code, const int32_t* ops, int nops) except -1
    cdef int check_op(self, int code, const int32_t* o, int nops) except -1
    cdef void mark_value_reads(self, int code, const int32_t* ops)
    cdef uint8_t operands_varied(self, int code, const int32_t* ops)
    cdef void program_sweep(self, Sweep* s)
    cdef int execute_last(self) except -1
    cdef int64_t size_of(self, int ref)
    cdef int check_range(self, int64_t off, int64_t n, int64_t total, str stream) except -1
    cdef int check_indices(self, int64_t off, int64_t n, int64_t bound) except -1
    cdef int _write_slot(self, int slot, object arr) except -1
    cdef int add_input_slot(self, int slot, tuple shape, bint varied) except -1
    cdef void mark_ticks(self)
    cdef int check_replayable(self) except -1
    cdef object run_tables(self)
