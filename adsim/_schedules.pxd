# Declarations of adsim/_schedules.pyx: the compiled schedule actions the
# loop executor (_loops.pyx) takes one at a time.
from libc.stdint cimport int64_t

cdef enum:
    ACT_END = 0                     # no more actions
    ACT_ADVANCE = 1
    ACT_TAKESHOT = 2
    ACT_RESTORE = 3
    ACT_FIRSTTURN = 4
    ACT_YOUTURN = 5


ctypedef struct Reversal_item:      # one part of a binomial reversal, on its stack
    int64_t a                       # steps a .. b-1 to reverse; b < 0: restore depth a
    int64_t b
    int64_t depth
    int64_t bound                   # upper bound of its repetition number (0: none)

cdef class Actions:
    cdef int next(self, int64_t* arg) except -1

cdef class BinomialActions(Actions):
    cdef int64_t* slots             # slot of each nesting depth
    cdef int64_t n_slots
    cdef Reversal_item* stack
    cdef int64_t top, cap
    cdef int turn                   # the next turn's kind: FirstTurn once, then YouTurn
    cdef int queue_kind[4]          # actions of the current part, in order
    cdef int64_t queue_arg[4]
    cdef int head, count
    cdef int64_t single_offset      # a one-slot reversal in progress: its next offset (-1: none)
    cdef int64_t single_slot
    cdef int reset(self, int64_t start, int64_t stop, const int64_t* slots, int64_t n_slots,
                   bint first_turn, bint lead_shot) except -1
    cdef int64_t slot(self, int64_t depth) noexcept
    cdef void emit(self, int kind, int64_t arg) noexcept
    cdef void emit_turn(self) noexcept
    cdef int push(self, int64_t a, int64_t b, int64_t depth, int64_t bound) except -1
    cdef int next(self, int64_t* arg) except -1

cdef class OnlineDecisions:
    cdef readonly int64_t snapshots
    cdef int64_t* positions         # steps whose states are held, increasing
    cdef int64_t* slots             # their slots
    cdef int64_t k, cap             # entries held
    cdef int64_t unused             # slots unused .. snapshots - 1 were never used
    cdef readonly int64_t next_step
    cdef int64_t* prefix            # _best_inner_change's incremental data
    cdef int64_t* best_q
    cdef int64_t* best_at           # -1: none
    cdef int64_t n_prefix, cap_prefix
    cdef int64_t valid
    cdef int store(self, int64_t step, int64_t slot) except -1 nogil
    cdef int64_t forward_step(self, int64_t step) except -2 nogil
    cdef int64_t choose_victim(self, int64_t step) except -2 nogil
    cdef int64_t best_inner_change(self, int64_t* at) except? -1 nogil

cdef class OnlineReversal(Actions):
    cdef int64_t* seg_start
    cdef int64_t* seg_slot
    cdef int64_t n_seg, n_steps, i, unused, snapshots
    cdef int64_t* heap              # free slots below ``unused`` (a min-heap)
    cdef int64_t n_heap
    cdef BinomialActions part
    cdef bint restore_next, first_turn
    cdef void heap_push(self, int64_t v) noexcept
    cdef int64_t heap_pop(self) noexcept
    cdef int start_segment(self) except -1
    cdef int next(self, int64_t* arg) except -1

cdef class OnlineRun(Actions):
    cdef OnlineDecisions decided
    cdef int64_t n_steps, step, pending, shot
    cdef object reversal
    cdef int next(self, int64_t* arg) except -1

cdef class PythonActions(Actions):
    cdef object iterator
    cdef dict kinds
    cdef readonly int64_t number
    cdef int next(self, int64_t* arg) except -1
