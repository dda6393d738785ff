# Declarations of adsim/_tape.pyx: the Tape (the recorded program) and the
# Replay (the buffers of one replay), with the replay functions the loop
# executor (adsim/_loops.pyx) and the front end (adsim/_active.pyx) call.
cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t

from ._opcodes cimport Sweep, DStack, FusedRun, OPERAND_COUNT, SLOT_OPERANDS
from ._callback cimport SweepContext

cdef enum:                            # families of fused kernels the fusion policy counts:
    VECTOR_TANGENTS = 4               # the replay layouts with one direction (VALUES ...
    FUSION_FAMILIES = 5               # SECOND_ORDER), then tangents in several directions

cdef enum:                            # the states of a slot (Tape.slot_state), bits
    SLOT_WRITTEN = 1        # holds a value an op wrote
    SLOT_PINNED = 2         # an input or the output: never reused
    SLOT_NEEDED = 4         # its current value is read by some reverse sweep
    SLOT_VARIED = 8         # its value depends differentiably on the inputs


cdef class Replay:
    """The state of one replay (_replay.pxi): value arena, work buffer, value stack."""
    cdef Sweep s                      # the sweep in progress
    cdef SweepContext context         # of its CALLBACK ops, for one call
    cdef double* val                  # value arena
    cdef bint owns_val                # False: the tape's recording arena, lent
    cdef double* work                 # tangents, adjoints, adjoint tangents
    cdef bint work_lent               # work is a loop's shared buffer (replay_setup_on):
                                      # its owner frees it, never this Replay
    cdef int64_t work_cap
    cdef int64_t zero_lo              # work[lo:hi] is known to hold zeros (a
    cdef int64_t zero_hi              # finished reverse sweep leaves its adjoints zero)
    cdef DStack stack                 # values saved for the reverse sweep
    cdef int64_t* own_sizes           # slot sizes, constant offsets, constant sizes:
    cdef object runs                  # copies that chunked runs rewrite, with the run tables
    cdef cnp.ndarray views            # own slot_shift / slot_ld of the chunked sweeps
    cdef bint heavy                   # sweeps release the GIL
    cdef int64_t* own_off             # slot offsets of values replays: the caller's inputs
                                      # and the returned output addressed from val (place_values)
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
    cdef list _input_layouts          # per input: its layout_key at recording
    cdef readonly bint layout_observed  # the program read its arrays' memory layout
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
    cdef object _fusion_runs_found    # the runs fusing compiles, until the first table
    cdef FusedRun* fused              # per run: fused kernels (adsim/_fuse/), or NULL
    cdef object _fused_keep           # what the fused kernels need alive (libraries, refs)
    cdef FusedRun** old_fused         # tables replaced by a later install (replays may read them)
    cdef int n_old_fused
    # automatic fusion (adsim/_fuse/policy.py): per family of kernels (the
    # replay layouts with one direction, then VECTOR_TANGENTS), replays left
    # before the policy is asked (-1: never again); the elementwise work of one replay
    cdef int64_t fusion_countdown[FUSION_FAMILIES]
    cdef bint fusion_armed[FUSION_FAMILIES]
    cdef double fusion_work
    cdef list _pool                   # idle Replays: the first n_idle entries (then None)
    cdef int n_idle
    cdef int64_t stack_peak           # largest value stack of any replay
    cdef cnp.ndarray _output_template # an empty array of the output's shape
    # values replays (place_values), planned at the first: the inputs read in
    # the caller's arrays, and whether the output is written into the array returned
    cdef bint values_planned
    cdef list _caller_inputs
    cdef bint output_handed

    cdef int new_slot(self, int64_t size) except -1
    cdef void release(self, int slot)
    cdef int64_t add_const_data(self, const double* data, int64_t n) except 0
    cdef int64_t add_const_values(self, const double* data, int64_t n) except -1
    cdef int64_t add_const_id(self, int64_t off, int64_t n) except 0
    cdef int64_t add_ints(self, const int32_t* data, int64_t n) except -1
    cdef int64_t reserve_branches(self, int64_t n) except -1
    cdef int64_t append_op(self, int code, const int32_t* ops, int nops) except -1
    cdef int check_op(self, int code, const int32_t* o, int nops) except -1
    cdef uint8_t write_flags(self, int code, const int32_t* ops)
    cdef void mark_value_reads(self, int code, const int32_t* ops)
    cdef uint8_t operands_varied(self, int code, const int32_t* ops)
    cdef void program_sweep(self, Sweep* s)
    cdef int execute_last(self) except -1
    cdef int64_t size_of(self, int ref)
    cdef int check_range(self, int64_t off, int64_t n, int64_t total, str stream) except -1
    cdef int check_indices(self, int64_t off, int64_t n, int64_t bound) except -1
    cdef int _write_slot(self, int slot, object arr) except -1
    cdef int add_input_slot(self, int slot, tuple shape, bint varied, object layout=*) except -1
    cdef void mark_ticks(self)
    cdef int check_replayable(self) except -1
    cdef int close_program(self, int64_t output_slot, tuple output_shape) except -1
    cdef void seal(self)
    cdef object run_tables(self)


cdef inline int need_slot(Tape t, int64_t slot) except -1:
    if not 0 <= slot < t.n_slots:
        raise ValueError(f"adsim: {slot} is not a slot of this tape (0 to {t.n_slots - 1})")
    return 0


cdef inline int64_t operand_count(Tape t, int64_t k) noexcept:
    return (t.start[k + 1] if k + 1 < t.n_ops else t.n_opnd) - t.start[k]


cdef inline bint refers(int code, int i) noexcept:
    """Operand i (after the result) of an op ``code`` refers to a slot or a
    constant (its value, index data or mask is read)."""
    if i < OPERAND_COUNT[code]:
        return (SLOT_OPERANDS[code] >> i) & 1
    return SLOT_OPERANDS[code] & 1          # the variadic operands


cdef inline int matrix_facts(const double* C, int64_t k) noexcept nogil:
    """What QUADFORM needs to know of a square constant C (k x k, row-major,
    _ops/quadform.pxi): 1 when every entry is finite, plus 2 when C == C^T
    exactly (compared in tiles, so that the transposed reads stay in cache)."""
    cdef int64_t i, j, i0 = 0, j0, n = k * k
    for i in range(n):
        if not isfinite(C[i]):
            return 0
    while i0 < k:                       # tiles of 32 x 32 on and above the diagonal
        j0 = i0
        while j0 < k:
            for i in range(i0, min(i0 + 32, k)):
                for j in range(max(j0, i + 1), min(j0 + 32, k)):
                    if C[i * k + j] != C[j * k + i]:
                        return 1
            j0 += 32
        i0 += 32
    return 3


ctypedef struct Reversal:            # one reverse-mode replay (reverse_replay)
    int64_t first                   # where the forward sweep stops: a fused final run follows
    int64_t n_ops
    int out                         # the output slot, of ``size`` elements
    int64_t size
    const double* w                 # the output's adjoints (NULL: one weight 1 each)
    const double* wdot              # their tangents, p directions (second order; NULL: zero)
    double* y                       # the output's value is copied here (NULL: not wanted)
    double* ty                      # its p tangents (second order; NULL: not wanted)


# replays (_replay.pxi): every sweep entry point takes a Replay with
# replay_setup and gives it back with replay_teardown
cdef Replay replay_setup(Tape t, object xs, int layout, int dirs)
cdef Replay replay_setup_on(Tape t, object xs, int layout, int dirs, double* work, int64_t cap)
cdef void replay_teardown(Tape t, Replay r)
cdef int seed_tangents(Tape t, Replay r, list V, int p) except -1
cdef int64_t fused_start(Tape t, Replay r)
cdef int reverse_replay(Sweep* s, Reversal* c, bint second_order) except -1 nogil
cdef cnp.ndarray as_slot_array(object x, int64_t size, str what)


cdef inline bint is_float64_array(object x):
    """An exact ndarray of float64 in the machine's byte order (checked in C:
    no attribute lookups); a byte-swapped one is converted by the callers."""
    return type(x) is cnp.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT64 and \
        cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>x)
