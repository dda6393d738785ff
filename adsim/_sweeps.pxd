# Declarations of adsim/_sweeps.pyx: the sweeps over a program, the chunked
# runs they take, and the elementwise kernels they call inline.
from libc.stdint cimport int32_t, int64_t

from ._opcodes cimport Sweep

# Work is counted in units of about one element touched (see Tape.mark_ticks).
cdef enum:
    TICK_UNITS = 65536              # work between two ops flagged FLAG_TICK
    SIGNAL_UNITS = 4194304          # work between two checks for Ctrl-C (a few ms)

cdef int64_t NO_SIGNAL_CHECKS       # the budget of sweeps that never check

cdef enum:                          # fields of a run record (a row of the run table, _chunks.pxi)
    RUN_FIRST = 0
    RUN_END = 1
    RUN_SIZE = 2
    RUN_CHUNK = 3
    RUN_REFS = 4                    # where the run's slots, then its constant ids, start in run_refs
    RUN_N_SLOTS = 5
    RUN_N_CONSTS = 6
    RUN_ROW = 7                     # chunks are multiples of this (the rows of 2-d slices)
    RUN_FIELDS = 8

cdef int check_signals(Sweep* s, int64_t units) except -1 nogil

# one op (recording computes each op's value with it, as replays do)
cdef int code_value(Sweep* s, int code, const int32_t* o, int64_t k) except -1 nogil

cdef inline int op_value(Sweep* s, int64_t k) except -1 nogil:
    return code_value(s, s.code[k], s.opnd + s.start[k], k)

# whole sweeps: 0, 1 when a branch record differs (s.err_op set), -1 raised.
# One function per kind of sweep (its flags constant inside the loop);
# forward_sweep and reverse_sweep pick one.
cdef int forward_values(Sweep* s, int64_t n_ops) except -1 nogil
cdef int forward_values_kept(Sweep* s, int64_t n_ops) except -1 nogil
cdef int forward_tangents(Sweep* s, int64_t n_ops) except -1 nogil
cdef int forward_tangents_kept(Sweep* s, int64_t n_ops) except -1 nogil
cdef int reverse_adjoints(Sweep* s, int64_t n_ops) except -1 nogil
cdef int reverse_second_order(Sweep* s, int64_t n_ops) except -1 nogil


cdef inline int forward_sweep(Sweep* s, int64_t n_ops, bint keep, bint tangents) except -1 nogil:
    """Values, and p tangents when ``tangents``; with ``keep`` what ops
    overwrite goes to the stack. 1 when a branch record differs."""
    if tangents:
        return forward_tangents_kept(s, n_ops) if keep else forward_tangents(s, n_ops)
    return forward_values_kept(s, n_ops) if keep else forward_values(s, n_ops)


cdef inline int reverse_sweep(Sweep* s, int64_t n_ops, bint second_order) except -1 nogil:
    """q adjoints, or with ``second_order`` one adjoint and its p tangents,
    after a keeping forward sweep; restores the values."""
    return reverse_second_order(s, n_ops) if second_order else reverse_adjoints(s, n_ops)

# chunked runs of elementwise ops
cdef object runs_of(Sweep* program, int64_t n_ops, int64_t n_slots, int64_t min_size)
cdef int32_t run_into_output(Sweep* s, int64_t n_ops) noexcept nogil
cdef int run_and_reverse(Sweep* s, int32_t r, bint second_order) except -1 nogil
cdef bint fused_reverse(Sweep* s, int32_t r, bint second_order) except -1 nogil
cdef bint fused_whole_tape(Sweep* s, int32_t r, bint second_order, const int32_t* inputs,
                           int n_inputs, double** caller, const double* seeds,
                           double* outs) except -1 nogil
cdef int fused_sum(Sweep* s, int32_t r) except -1 nogil
