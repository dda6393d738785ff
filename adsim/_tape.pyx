# cython: language_level=3
"""The flat tape: compact buffers recorded from NumPy code, replayed in C.

Layout (after ADOL-C's operation/location/value tapes; Griewank & Walther,
*Evaluating Derivatives*, 2nd ed., SIAM 2008, ch. 6):

* ``code`` (uint16, one per op), ``start`` (int32, offset of the op's operands),
  ``flags`` (uint8, FLAG_PUSH / FLAG_INPLACE) and ``opnd`` (int32 operands:
  result slot first, then argument refs and small integer attributes);
* a constants stream (float64) addressed by negative refs ``-1 - id``;
* an index stream (int32: gather/scatter indices, argmax records) and a
  branch stream (uint8: comparison outcomes);
* a slot table (offset, size) into one float64 value arena. Slots freed by
  Python are reused, and a sweep that keeps values for the reverse pass pushes
  what an op overwrites onto a value stack, so the arena holds live values.

A Tape is this program, appended to while recording and read-only after
``finish``; every replay runs on a Replay of its own (_replay.pxi), so one
tape may be replayed by several threads at once. Every method reachable from
Python checks its arguments: no call can read or write outside the buffers.

This module owns the Tape (recording, slots, the checks of every family's
operands in ``_ops/checks.pxi``, inspection) and its replays (``_replay.pxi``:
``Replay`` and the entry points behind ``Tape._forward``, ``_adjoint``, ...).
Finishing a recording, the optimisation before replay and the program's
buffers in and out of tape files are above it, in adsim/_program.pyx: they
edit or copy a whole program through the Tape's C methods. The Tape and its replays
share one unit because each needs the other: the Tape's sweep methods run
replays, and every replay reads the Tape's buffers. The sweeps and kernels
they drive are below (adsim/_sweeps.pyx and the kernel modules), the loop
executor and the front end above.

_tape.pxd exposes the ``Tape`` and ``Replay`` classes with their C fields
and methods (the front end, adsim/_active.pyx, appends ops directly), and
what the loop executor (adsim/_loops.pyx) runs step tapes with:
``replay_setup``/``replay_teardown``, ``seed_tangents``, ``fused_start``,
``reverse_replay`` with its ``Reversal``, ``as_slot_array`` and the inline
``is_float64_array``.
"""
cimport numpy as cnp
from cpython.number cimport PyNumber_Index
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.stdint cimport intptr_t
from libc.string cimport memcpy, memset, memmove, memcmp

from ._opcodes cimport *
from ._callback cimport SweepContext, VALUES, TANGENTS, ADJOINTS, SECOND_ORDER, copy_out
from ._sweeps cimport (TICK_UNITS, SIGNAL_UNITS, NO_SIGNAL_CHECKS, RUN_FIRST, RUN_FIELDS,
                       check_signals, op_value, forward_sweep, reverse_sweep, runs_of,
                       run_into_output, run_and_reverse, fused_reverse, fused_sum,
                       fused_whole_tape)

from ._opcodes import OPCODE_NAMES
from ._array_kinds import refuse as refuse_subclass
from .errors import (BranchChanged, FinishedRecording, IndexOutOfBounds, InvalidArgumentValue,
                     InvalidInput, TapeCopyError, TapeNotRecorded, TapeOverflow)

cdef enum:
    _SMALL_OPS = 16     # operands record_op holds on the stack

cnp.import_array()

cdef object FLOAT64 = np.dtype(np.float64)
# why a tape's results depend on its inputs' memory layout (Tape.observe_layout)
LAYOUT_READ = ("the recorded function read the memory layout of its arrays (ravel(order='K'), "
               "flags, strides, or a write through a reshape or conversion that NumPy makes a "
               "view or a copy by layout), so its results hold only for inputs laid out as the recording's")

include "_ops/checks.pxi"
include "_replay.pxi"

# which values the reverse sweeps of an op read: reads_args and reads_result
# (_opcodes.pxd), from the op table's facts (_ops/facts.pxi)


# Checks of the recording helpers and of the operands of recorded ops
# (inline: they run for every op recorded).

cdef inline int need_recording(Tape t, str what) except -1:
    if not t.recording:
        raise FinishedRecording(f"adsim: cannot {what}: this tape has finished recording; "
                                f"record a new one")
    return 0


cdef inline int need_ref(Tape t, int64_t ref) except -1:
    if not -t.n_const_ids <= ref < t.n_slots:
        raise InvalidArgumentValue(f"adsim: {ref} is neither a slot (0 to {t.n_slots - 1}) nor a "
                                   f"constant (-1 to {-t.n_const_ids}) of this tape")
    return 0


cdef int malformed(int code, str why) except -1:
    """Refuse an op whose operands would make a kernel read or write outside
    the tape's buffers."""
    raise ValueError(f"adsim: cannot record a {OPCODE_NAMES.get(code, code)} op with {why}")


cdef int64_t product3(int64_t a, int64_t b, int64_t c) noexcept:
    """a b c for non-negative 32-bit factors, or -1 (a negative factor, or
    past 2**62)."""
    if a < 0 or b < 0 or c < 0:
        return -1
    if b and a > ((<int64_t>1) << 62) // b:
        return -1
    a *= b
    if c and a > ((<int64_t>1) << 62) // c:
        return -1
    return a * c


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object v, int* overflow) except? -1


cdef int32_t int32_operand(object value, int code) except? -1:
    """An operand as a 32-bit integer: a value past 32 bits is refused, not wrapped."""
    cdef int overflow = 0
    cdef long long c
    try:
        v = PyNumber_Index(value)
    except TypeError:
        raise TypeError(f"adsim: the operands of a {OPCODE_NAMES.get(code, code)} op must be "
                        f"integers, not {type(value).__name__}") from None
    c = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow or not -2147483648 <= c <= 2147483647:
        raise TapeOverflow(f"adsim: a {OPCODE_NAMES.get(code, code)} op has operand {v}, outside "
                           f"the tape's 32-bit range (an array of 2**31 or more elements?); "
                           f"split the array")
    return <int32_t>c


cdef class Tape:
    """A recorded NumPy computation, replayable in C for new inputs.

    Made by :func:`adsim.record`; see the user guide (docs/tape.md).
    """

    def __cinit__(self):
        cdef int64_t c = 0
        cdef int i
        self.chunked = True
        self.code = <uint16_t*>grow(NULL, &self.cap_ops, 64, sizeof(uint16_t))
        self.start = <int32_t*>grow(NULL, &c, self.cap_ops, sizeof(int32_t))
        c = 0
        self.flags = <uint8_t*>grow(NULL, &c, self.cap_ops, sizeof(uint8_t))
        self.opnd = <int32_t*>grow(NULL, &self.cap_opnd, 256, sizeof(int32_t))
        self.consts = <double*>grow(NULL, &self.cap_consts, 64, sizeof(double))
        self.const_off = <int64_t*>grow(NULL, &self.cap_const_ids, 16, sizeof(int64_t))
        c = 0
        self.const_size = <int64_t*>grow(NULL, &c, self.cap_const_ids, sizeof(int64_t))
        self.ints = <int32_t*>grow(NULL, &self.cap_ints, 64, sizeof(int32_t))
        self.branches = <uint8_t*>grow(NULL, &self.cap_branches, 64, sizeof(uint8_t))
        self.slot_off = <int64_t*>grow(NULL, &self.cap_slots, 64, sizeof(int64_t))
        c = 0
        self.slot_size = <int64_t*>grow(NULL, &c, self.cap_slots, sizeof(int64_t))
        c = 0
        self.slot_state = <uint8_t*>grow(NULL, &c, self.cap_slots, sizeof(uint8_t))
        c = 0
        self.slot_writes = <uint32_t*>grow(NULL, &c, self.cap_slots, sizeof(uint32_t))
        self.val = <double*>grow(NULL, &self.arena_cap, 256, sizeof(double))
        self.free_slots = {}
        self._const_keys = {}
        self._callbacks = []
        self._input_slots = []
        self._input_shapes = []
        self._input_varied = []
        self._input_layouts = []
        self._pool = []
        self.out_slot = -1
        self.recording = True
        self.fusion_work = -1.0                 # measured at the first replay
        for i in range(FUSION_FAMILIES):
            self.fusion_countdown[i] = 1

    def __dealloc__(self):
        cdef int i
        free(self.code); free(self.start); free(self.flags); free(self.opnd)
        free(self.consts); free(self.const_off); free(self.const_size)
        free(self.ints); free(self.branches)
        free(self.slot_off); free(self.slot_size); free(self.slot_state); free(self.slot_writes)
        free(self.val)          # a Replay that borrowed it never frees it
        free(self.fused)
        for i in range(self.n_old_fused):
            free(self.old_fused[i])
        free(self.old_fused)

    # pickle, copy.copy and copy.deepcopy go through the tape file format
    # (adsim/tapefile.py): data only, checked again when read back
    def __reduce__(self):
        from .tapefile import reduce_tape
        return reduce_tape(self)

    # ------------------------------------------------------------------
    # recording primitives (called by the front end in adsim/_active.pyx and
    # adsim/_numpy_api.py)

    cdef int new_slot(self, int64_t size) except -1:
        """A slot of ``size`` elements: a freed one if any (first one whose
        value no reverse sweep reads, so overwriting it saves nothing), else
        a new one at the end of the arena."""
        cdef list lists = self.free_slots.get(size)
        cdef int slot
        cdef int64_t c
        need_recording(self, "add a value")
        if size < 0:
            raise ValueError(f"adsim: a slot of {size} elements")
        if lists is not None:
            if lists[0]:
                return lists[0].pop()
            if lists[1]:
                return lists[1].pop()
        if self.n_slots >= 2147483647:
            raise TapeOverflow("adsim: the tape holds 2**31 - 1 slots; checkpoint the loop "
                               "(adsim.checkpoint_loop) so one step is recorded, not all")
        if self.n_slots == self.cap_slots:
            c = self.cap_slots
            self.slot_off = <int64_t*>grow(self.slot_off, &c, self.n_slots + 1, sizeof(int64_t))
            c = self.cap_slots
            self.slot_size = <int64_t*>grow(self.slot_size, &c, self.n_slots + 1, sizeof(int64_t))
            c = self.cap_slots
            self.slot_writes = <uint32_t*>grow(self.slot_writes, &c, self.n_slots + 1,
                                               sizeof(uint32_t))
            self.slot_state = <uint8_t*>grow(self.slot_state, &self.cap_slots, self.n_slots + 1,
                                             sizeof(uint8_t))
        if self.arena_size + size > self.arena_cap:
            self.val = <double*>grow(self.val, &self.arena_cap, self.arena_size + size, sizeof(double))
        slot = <int>self.n_slots
        self.slot_off[slot] = self.arena_size
        self.slot_size[slot] = size
        self.slot_state[slot] = 0
        self.slot_writes[slot] = 0
        self.arena_size += size
        self.n_slots += 1
        return slot

    cdef void release(self, int slot):
        if not self.recording or not 0 <= slot < self.n_slots or self.slot_state[slot] & SLOT_PINNED:
            return
        lists = self.free_slots.get(self.slot_size[slot])
        if lists is None:
            lists = self.free_slots[self.slot_size[slot]] = [[], []]
        lists[1 if self.slot_state[slot] & SLOT_NEEDED else 0].append(slot)

    def pin(self, int64_t slot):
        """Keep ``slot`` out of reuse (inputs and outputs)."""
        need_recording(self, "pin a slot")
        need_slot(self, slot)
        self.slot_state[slot] |= SLOT_PINNED

    cdef int64_t add_const_data(self, const double* data, int64_t n) except 0:
        """A new constant holding ``data[:n]``; returns its ref."""
        cdef int64_t off
        need_recording(self, "add a constant")
        if self.n_const_ids >= 2147483647:
            raise TapeOverflow("adsim: the tape holds 2**31 - 1 constants")
        off = self.add_const_values(data, n)
        return self.add_const_id(off, n)

    cdef int64_t add_const_values(self, const double* data, int64_t n) except -1:
        """Append ``data[:n]`` to the constants stream; returns their offset."""
        cdef int64_t off = self.n_consts
        need_recording(self, "add constants")
        if self.n_consts + n > self.cap_consts:
            self.consts = <double*>grow(self.consts, &self.cap_consts, self.n_consts + n, sizeof(double))
        if n:
            memcpy(self.consts + off, data, <size_t>n * sizeof(double))
        self.n_consts += n
        return off

    cdef int64_t add_const_id(self, int64_t off, int64_t n) except 0:
        """A constant made of the ``n`` stream values at ``off``; returns its ref."""
        cdef int64_t c
        need_recording(self, "add a constant")
        self.check_range(off, n, self.n_consts, "constants")
        if self.n_const_ids >= 2147483647:
            raise TapeOverflow("adsim: the tape holds 2**31 - 1 constants")
        if self.n_const_ids == self.cap_const_ids:
            c = self.cap_const_ids
            self.const_off = <int64_t*>grow(self.const_off, &c, self.n_const_ids + 1, sizeof(int64_t))
            self.const_size = <int64_t*>grow(self.const_size, &self.cap_const_ids,
                                             self.n_const_ids + 1, sizeof(int64_t))
        self.const_off[self.n_const_ids] = off
        self.const_size[self.n_const_ids] = n
        self.n_const_ids += 1
        return -self.n_const_ids          # ref of the new constant: -1 - id

    cdef int64_t add_ints(self, const int32_t* data, int64_t n) except -1:
        cdef int64_t off = self.n_ints
        need_recording(self, "add indices")
        if n < 0 or self.n_ints + n > 2147483647:
            raise TapeOverflow(f"adsim: the tape's index stream would pass 2**31 entries "
                               f"({self.n_ints} + {n}); checkpoint the loop "
                               f"(adsim.checkpoint_loop) so one step is recorded, not all")
        if self.n_ints + n > self.cap_ints:
            self.ints = <int32_t*>grow(self.ints, &self.cap_ints, self.n_ints + n, sizeof(int32_t))
        if n and data != NULL:           # NULL: the caller fills them
            memcpy(self.ints + off, data, <size_t>n * sizeof(int32_t))
        self.n_ints += n
        return off

    cdef int64_t reserve_branches(self, int64_t n) except -1:
        cdef int64_t off = self.n_branches
        need_recording(self, "add branch records")
        if n < 0 or self.n_branches + n > 2147483647:
            raise TapeOverflow(f"adsim: the tape's branch stream would pass 2**31 entries "
                               f"({self.n_branches} + {n})")
        if self.n_branches + n > self.cap_branches:
            self.branches = <uint8_t*>grow(self.branches, &self.cap_branches, self.n_branches + n,
                                           sizeof(uint8_t))
        memset(self.branches + off, 0, <size_t>n)
        self.n_branches += n
        return off

    cdef int64_t append_op(self, int code, const int32_t* ops, int nops) except -1:
        """Append one op; its result slot is ops[0] (-1 for none). Its
        operands are checked first (check_op)."""
        cdef int64_t k = self.n_ops, c
        cdef int r
        need_recording(self, "record an operation")
        self.check_op(code, ops, nops)
        r = ops[0]
        if k == self.cap_ops:
            c = self.cap_ops
            self.start = <int32_t*>grow(self.start, &c, k + 1, sizeof(int32_t))
            c = self.cap_ops
            self.flags = <uint8_t*>grow(self.flags, &c, k + 1, sizeof(uint8_t))
            self.code = <uint16_t*>grow(self.code, &self.cap_ops, k + 1, sizeof(uint16_t))
        if self.n_opnd + nops > 2147483647:
            raise TapeOverflow("adsim: the tape passed 2**31 operands; checkpoint the loop "
                               "(adsim.checkpoint_loop) so one step is recorded, not all")
        if self.n_opnd + nops > self.cap_opnd:
            self.opnd = <int32_t*>grow(self.opnd, &self.cap_opnd, self.n_opnd + nops, sizeof(int32_t))
        memcpy(self.opnd + self.n_opnd, ops, <size_t>nops * sizeof(int32_t))
        if r >= 0:
            self.slot_writes[r] += 1
        self.code[k] = <uint16_t>code
        self.start[k] = <int32_t>self.n_opnd
        self.flags[k] = self.write_flags(code, ops)
        self.n_opnd += nops
        self.n_ops += 1
        return k

    cdef uint8_t write_flags(self, int code, const int32_t* ops):
        """The flags of an op appended now (what it must save, whether it has
        a derivative), with the slot states it leaves."""
        cdef int r = ops[0]
        cdef uint8_t flag = 0
        self.mark_value_reads(code, ops)
        if r >= 0:
            if code == SCATTER:            # partial overwrite: saved if read in reverse
                flag = FLAG_INPLACE
                if self.slot_state[r] & SLOT_NEEDED:
                    flag |= FLAG_PUSH
                self.slot_state[r] |= SLOT_WRITTEN | self.operands_varied(code, ops)
            else:
                # the old contents of r must be saved only if a reverse sweep
                # reads them (a nonlinear op used them, or made them and needs
                # its own result); linear ops need no values at all
                if (self.slot_state[r] & SLOT_WRITTEN) and (self.slot_state[r] & SLOT_NEEDED):
                    flag = FLAG_PUSH
                self.slot_state[r] = (self.slot_state[r] & SLOT_PINNED) | SLOT_WRITTEN | \
                    (SLOT_NEEDED if reads_result(code) else 0) | \
                    self.operands_varied(code, ops)
            if not self.slot_state[r] & SLOT_VARIED:
                flag |= FLAG_PASSIVE       # no derivative: sweeps skip its rules
        if code == QUADFORM:               # it also writes its gradient slot (_ops/quadform.pxi)
            self.slot_state[ops[3]] |= SLOT_WRITTEN
        return flag

    cdef int check_op(self, int code, const int32_t* o, int nops) except -1:
        """Refuse operands a kernel could not run safely (each family file
        says what its ops take)."""
        if nops < 1:
            return malformed(code, "no operands")
        if 0 < code < CALLBACK_END and OPERAND_COUNT[code]:     # the row's layout
            if nops < OPERAND_COUNT[code] if VALUE_OPERANDS[code] & 1 else \
                    nops != OPERAND_COUNT[code]:
                return malformed(code, f"{nops} operands; its layout (adsim/ops.py) has "
                                       f"{OPERAND_COUNT[code]}")
        if 1 <= code < UNARY_END:
            return unary_check(self, code, o, nops)
        if ADD <= code < BINARY_END:
            return binary_check(self, code, o, nops)
        if COMPARE <= code < BRANCH_END:
            return branch_check(self, code, o, nops)
        if COPY <= code < STRUCTURAL_END:
            return structural_check(self, code, o, nops)
        if MATMUL <= code < LINALG_END:
            return linalg_check(self, code, o, nops)
        if code == CALLBACK:
            return callback_check(self, code, o, nops)
        raise ValueError(f"adsim: {code} is not an opcode")

    cdef uint8_t operands_varied(self, int code, const int32_t* ops):
        """SLOT_VARIED when an op's result depends differentiably on the
        inputs: some argument does, and the op passes derivatives on."""
        cdef int i
        cdef uint8_t values = VALUE_OPERANDS[code]      # positions of value operands (row)
        if NO_DERIVATIVE[code]:
            return 0
        if values & 1:                                  # the variadic ones
            for i in range(OPERAND_COUNT[code], OPERAND_COUNT[code] + ops[OPERAND_COUNT[code] - 1]):
                if ops[i] >= 0 and self.slot_state[ops[i]] & SLOT_VARIED:
                    return SLOT_VARIED
        for i in range(1, OPERAND_COUNT[code]):
            if values & (1 << i) and ops[i] >= 0 and self.slot_state[ops[i]] & SLOT_VARIED:
                return SLOT_VARIED
        return 0

    def slot_is_varied(self, int slot):
        """Does the current value of ``slot`` depend differentiably on the inputs?"""
        if not 0 <= slot < self.n_slots:
            raise InvalidArgumentValue(f"adsim: slot {slot} does not exist on this tape (its "
                                       f"slots are 0 to {self.n_slots - 1})")
        return bool(self.slot_state[slot] & SLOT_VARIED)

    cdef void mark_value_reads(self, int code, const int32_t* ops):
        """Flag the slots whose current values the reverse sweeps of this op
        read (READ_OPERANDS, from the row's ``reads``)."""
        cdef int i
        cdef uint8_t reads = READ_OPERANDS[code]
        if not reads or not self.operands_varied(code, ops):
            return                  # (a result without derivative: no reverse rule runs)
        if code == SPMV and ops[1] < 0:
            reads = 0               # a constant matrix: only the values' adjoint reads x
        if reads & 1:               # the variadic operands
            for i in range(OPERAND_COUNT[code], OPERAND_COUNT[code] + ops[OPERAND_COUNT[code] - 1]):
                if ops[i] >= 0:
                    self.slot_state[ops[i]] |= SLOT_NEEDED
        for i in range(1, OPERAND_COUNT[code]):
            if reads & (1 << i) and ops[i] >= 0:
                self.slot_state[ops[i]] |= SLOT_NEEDED

    cdef void program_sweep(self, Sweep* s):
        """A sweep over the program, with the recording arena and no buffers."""
        s.code = self.code
        s.start = self.start
        s.flags = self.flags
        s.opnd = self.opnd
        s.val = self.val
        s.tan = NULL
        s.adj = NULL
        s.adot = NULL
        s.p = 0
        s.q = 0
        s.slot_off = self.slot_off
        s.slot_size = self.slot_size
        s.consts = self.consts
        s.const_off = self.const_off
        s.const_size = self.const_size
        s.ints = self.ints
        s.branches = self.branches
        s.stack = NULL
        s.err_op = -1
        s.recording_op = -1
        s.budget = NO_SIGNAL_CHECKS
        s.width = 1
        s.callbacks = <void*>self._callbacks
        s.context = NULL
        s.compiled = NULL
        s.n_compiled = 0
        s.run_of = NULL
        s.runs = NULL
        s.run_refs = NULL
        s.run_shifted = NULL
        s.slot_shift = NULL
        s.slot_ld = NULL
        s.fused = NULL

    cdef int execute_last(self) except -1:
        """Compute the value of the op just appended (recording runs the same
        C kernel as replay, so recorded and replayed values agree bitwise)."""
        cdef Sweep s
        self.program_sweep(&s)
        s.recording_op = self.n_ops - 1
        op_value(&s, self.n_ops - 1)
        return 0

    cdef int64_t size_of(self, int ref):
        return self.slot_size[ref] if ref >= 0 else self.const_size[-ref - 1]

    cdef int check_range(self, int64_t off, int64_t n, int64_t total, str stream) except -1:
        if off < 0 or n < 0 or off > total - n:
            raise ValueError(f"adsim: entries {off} to {off + n} are outside the tape's {stream} "
                             f"stream of {total}")
        return 0

    cdef int check_indices(self, int64_t off, int64_t n, int64_t bound) except -1:
        """The n recorded indices at ``off`` index an array of ``bound`` elements."""
        cdef int64_t j
        self.check_range(off, n, self.n_ints, "index")
        for j in range(off, off + n):
            if not 0 <= self.ints[j] < bound:
                raise IndexError(f"adsim: recorded index {self.ints[j]} is out of bounds for "
                                 f"an array of {bound} elements")
        return 0

    # Python-level recording helpers for adsim/_numpy_api.py -------------

    def record_op(self, int code, int64_t result_size, operands):
        """Append op ``code``; a new result slot of ``result_size`` elements is
        put first unless ``result_size < 0`` (no result, or operands[0] given
        when ``result_size == -2``). Returns the result slot (or -1)."""
        cdef int r = -1, i
        cdef int first = 0 if result_size == -2 else 1
        need_recording(self, "record an operation")
        cdef list given = list(operands)
        if result_size < -2 or (result_size == -2 and not given):
            raise ValueError(f"adsim: result_size {result_size}: the result's size, -1 for "
                             f"no result or -2 for the slot in operands[0]")
        # the operands in C memory (no NumPy array: np.empty may be adsim's own
        # creation wrapper while a recording runs, a frame lookup per op)
        cdef int nops = len(given) + first
        cdef int32_t small[_SMALL_OPS]
        cdef int32_t* ops = small
        if nops > _SMALL_OPS:
            ops = <int32_t*>malloc(nops * sizeof(int32_t))
            if ops == NULL:
                raise MemoryError()
        try:
            for i in range(len(given)):
                ops[first + i] = int32_operand(given[i], code)
            if result_size >= 0:
                r = self.new_slot(result_size)
                ops[0] = r
            elif result_size == -1:
                ops[0] = -1
            else:
                r = ops[0]
            try:
                self.append_op(code, ops, nops)
            except BaseException:
                if result_size >= 0:
                    self.release(r)
                raise
        finally:
            if ops != small:
                free(ops)
        self.execute_last()
        return r

    def const_ref(self, value):
        """Store a constant array; returns its (negative) ref. Equal constants
        recorded again (a padding constant in every step, say) share one copy."""
        need_recording(self, "add a constant")
        cdef cnp.ndarray arr = np.ascontiguousarray(value, dtype=np.float64).reshape(-1)
        key = (arr.shape[0], arr.tobytes()) if arr.shape[0] <= 64 else \
            (arr.shape[0], hash(arr.tobytes()))
        ref = self._const_keys.get(key)
        if ref is not None and (arr.shape[0] <= 64 or np.array_equal(self.slot_value(ref), arr)):
            return ref
        ref = self.add_const_data(<double*>cnp.PyArray_DATA(arr), arr.shape[0])
        self._const_keys[key] = ref
        return ref

    def add_indices(self, idx, bint shared=False):
        """Store element indices (integers that fit 32 bits); returns their
        offset in the index stream. ``shared``: indices only ever read (a
        gather's or a scatter's) may share one copy with equal ones stored
        before, so that ops reading equal lists are equal ops (_optimise.pxi)."""
        cdef int64_t i, n, off
        cdef int64_t* src
        cdef cnp.ndarray wide
        need_recording(self, "add indices")
        cdef cnp.ndarray arr = np.asarray(idx)
        if cnp.PyArray_TYPE(arr) == cnp.NPY_INT64 and cnp.PyArray_IS_C_CONTIGUOUS(arr):
            wide = arr                                    # the usual case: no conversion
        elif cnp.PyArray_SIZE(arr) and arr.dtype.kind not in "biu":
            raise TypeError(f"adsim: element indices must be integers, not {arr.dtype}")
        else:
            wide = np.ascontiguousarray(arr, dtype=np.int64)
        n = cnp.PyArray_SIZE(wide)
        src = <int64_t*>cnp.PyArray_DATA(wide)
        for i in range(n):
            if not -2147483648 <= src[i] <= 2147483647:
                raise TapeOverflow(
                    f"adsim: element index {arr.reshape(-1)[i]} does not fit the tape's 32-bit "
                    f"index stream: arrays of 2**31 or more elements cannot be indexed element "
                    f"by element; split the array")
        if shared:
            key = ("indices", n, wide.tobytes())
            off = self._const_keys.get(key, -1)
            if off >= 0:
                return off
        off = self.add_ints(NULL, n)
        for i in range(n):
            self.ints[off + i] = <int32_t>src[i]
        if shared:
            self._const_keys[key] = off
        return off

    def add_branch_space(self, int64_t n):
        return self.reserve_branches(n)

    def set_branches(self, int64_t off, mask):
        """Store recorded outcomes (a where-mask) at ``off`` of the branch stream."""
        need_recording(self, "set branch records")
        cdef cnp.ndarray arr = np.ascontiguousarray(mask, dtype=np.bool_).reshape(-1).view(np.uint8)
        self.check_range(off, arr.shape[0], self.n_branches, "branch")
        memcpy(self.branches + off, cnp.PyArray_DATA(arr), <size_t>arr.shape[0])

    def add_callback(self, obj):
        need_recording(self, "add a callback")
        self._callbacks.append(obj)
        return len(self._callbacks) - 1

    def new_input(self, value, bint varied=True):
        """A new pinned input slot holding ``value`` (float64, any shape).
        ``varied=False``: an input that is never differentiated (data): what
        is computed from it alone has no derivative, so it may be frozen
        under guards and its ops skip their derivative rules."""
        need_recording(self, "add an input")
        arr = value if is_float64_array(value) and cnp.PyArray_IS_C_CONTIGUOUS(value) else \
            as_float_array(value, "an input")
        cdef int slot = self.new_slot(arr.size)
        self._write_slot(slot, arr)
        self.add_input_slot(slot, arr.shape, varied, layout_key(value))
        return slot

    cdef int add_input_slot(self, int slot, tuple shape, bint varied,
                            object layout=None) except -1:
        """Make ``slot`` (of ``shape``'s size) the next input: written, pinned,
        and differentiable when ``varied`` (recorded ops read these facts);
        ``layout``: the recorded array's layout_key."""
        self.slot_state[slot] = SLOT_PINNED | SLOT_WRITTEN | (SLOT_VARIED if varied else 0)
        self._input_slots.append(slot)
        self._input_shapes.append(shape)
        self._input_varied.append(varied)
        self._input_layouts.append(layout)
        return 0

    def observe_layout(self):
        """Note that the program read the memory layout of its arrays
        (``ravel(order="K")``, ``flags``, ``strides``, ...): a replay is then
        valid only on inputs laid out as the recording's were (_inputs)."""
        if self.recording:
            self.layout_observed = True

    cdef int _write_slot(self, int slot, object arr) except -1:
        cdef cnp.ndarray a = np.ascontiguousarray(arr, dtype=np.float64).reshape(-1)
        if a.shape[0] != self.slot_size[slot]:
            raise ValueError(f"adsim: {a.shape[0]} values for a slot of {self.slot_size[slot]}")
        memcpy(self.val + self.slot_off[slot], cnp.PyArray_DATA(a), <size_t>a.shape[0] * sizeof(double))
        return 0

    cdef int close_program(self, int64_t output_slot, tuple output_shape) except -1:
        """Set ``output_slot`` as the tape's output: the first half of
        finishing (adsim/_program.pyx, ``finish``), after which the program
        may be optimised and is then sealed."""
        need_recording(self, "finish it again")
        need_slot(self, output_slot)
        for d in output_shape:
            if type(d) is not int:             # NumPy integers, say
                output_shape = tuple([PyNumber_Index(e) for e in output_shape])
                break
        size = 1
        for d in output_shape:
            if d < 0:
                raise ValueError(f"adsim: output shape {output_shape} is not a shape")
            size = size * d
        if size != self.slot_size[output_slot]:
            raise ValueError(f"adsim: output shape {output_shape} for a slot of "
                             f"{self.slot_size[output_slot]} elements")
        self.slot_state[output_slot] |= SLOT_PINNED
        self.out_slot = <int>output_slot
        self.output_shape = output_shape
        self._output_template = np.empty(output_shape, dtype=np.bool_)   # its dims, for replays
        self._callbacks = tuple(self._callbacks)
        return 0

    cdef void seal(self):
        """End recording: from here on the program is read-only, and replays
        may run in any thread."""
        self.mark_ticks()
        self.recording = False
        self.free_slots = {}
        self._const_keys = {}

    def finish_failed(self):
        """End a recording whose function raised: the tape cannot be replayed."""
        if self.recording:
            self.recording = False
            self.failed = True
            self.free_slots = {}
            self._const_keys = {}

    cdef void mark_ticks(self):
        """Estimate the work of a sweep (elements touched; multiply-adds of a
        matrix product) and flag an op every TICK_UNITS of it: long sweeps
        check for Ctrl-C there, short ones never, and only large sweeps
        release the GIL (_replay.pxi)."""
        cdef int64_t k, units, since = 0
        cdef const int32_t* o
        self.work_units = 0
        for k in range(self.n_ops):
            o = self.opnd + self.start[k]
            units = 1
            if self.code[k] != CALLBACK:
                units += self.size_of(o[1]) + (self.slot_size[o[0]] if o[0] >= 0 else 0)
                if self.code[k] == MATMUL:
                    units += max(product3(o[3], o[4], o[5]), <int64_t>0)
                elif self.code[k] == SPMV:       # a multiply-add per stored entry and column
                    units += self.size_of(o[1]) * o[6]
            self.work_units += units
            since += units
            if since >= TICK_UNITS:
                self.flags[k] |= FLAG_TICK
                since = 0

    # ------------------------------------------------------------------
    # reading the recording

    @property
    def recording_failed(self):
        """True when the recorded function raised (the tape cannot be replayed)."""
        return self.failed

    @property
    def callbacks(self):
        """The Python objects of CALLBACK ops (a tuple once recording ends)."""
        return self._callbacks

    @property
    def input_slots(self):
        """The inputs' slots (a copy: changing it changes nothing)."""
        return list(self._input_slots)

    @property
    def input_shapes(self):
        """The inputs' shapes (a copy)."""
        return list(self._input_shapes)

    @property
    def output_slot(self):
        return None if self.out_slot < 0 else self.out_slot

    @property
    def n_inputs(self):
        return len(self._input_slots)

    @property
    def arena_elements(self):
        return self.arena_size

    @property
    def held_bytes(self):
        """Bytes the tape's buffers hold: ops, operands, constants, indices,
        branches, and the values of one replay (what keeping it costs)."""
        return (self.n_ops * (sizeof(uint16_t) + sizeof(int32_t) + sizeof(uint8_t)) +
                self.n_opnd * sizeof(int32_t) + self.n_consts * sizeof(double) +
                self.n_ints * sizeof(int32_t) + self.n_branches +
                self.arena_size * sizeof(double))

    def branch_outcome(self, int64_t off, int64_t n):
        """The recorded outcomes at ``off`` as a bool array."""
        self.check_range(off, n, self.n_branches, "branch")
        out = np.empty(n, dtype=np.bool_)
        memcpy(cnp.PyArray_DATA(out), self.branches + off, <size_t>n)     # bytes 0 or 1
        return out

    def index_record(self, int64_t off, int64_t n):
        self.check_range(off, n, self.n_ints, "index")
        out = np.empty(n, dtype=np.int32)
        memcpy(cnp.PyArray_DATA(out), self.ints + off, <size_t>n * sizeof(int32_t))
        return out

    def slot_value(self, int64_t ref):
        """Copy of a constant, or of a slot's value at the recording point (flat)."""
        need_ref(self, ref)
        cdef int64_t n = self.size_of(<int>ref)
        cdef Sweep s
        if ref >= 0 and self.val == NULL:   # a parked step variant: its values are given back
            return np.zeros(n)
        out = np.empty(n, dtype=np.float64)
        self.program_sweep(&s)
        memcpy(cnp.PyArray_DATA(out), vptr(&s, <int>ref), <size_t>n * sizeof(double))
        return out

    def param_value(self, int64_t off):
        """The scalar parameter of a unary op (its position in the constants)."""
        if not 0 <= off < self.n_consts:
            raise InvalidArgumentValue(f"adsim: {off} is not a position in the tape's "
                                       f"{self.n_consts} constants")
        return self.consts[off]

    def slot_size_of(self, int64_t ref):
        need_ref(self, ref)
        return self.size_of(<int>ref)

    def __len__(self):
        return self.n_ops

    def op_codes(self):
        """Opcodes of all ops, as a NumPy array."""
        out = np.empty(self.n_ops, dtype=np.uint16)
        if self.n_ops:
            memcpy(cnp.PyArray_DATA(out), self.code, <size_t>self.n_ops * sizeof(uint16_t))
        return out

    def op_operands(self, int64_t k):
        """Operands of op k as a list of ints (result slot first)."""
        if not 0 <= k < self.n_ops:
            raise IndexError(f"adsim: op {k} of a tape of {self.n_ops} ops")
        cdef int64_t end = self.start[k + 1] if k + 1 < self.n_ops else self.n_opnd
        return [self.opnd[i] for i in range(self.start[k], end)]

    def op_flags(self, int64_t k):
        if not 0 <= k < self.n_ops:
            raise IndexError(f"adsim: op {k} of a tape of {self.n_ops} ops")
        return self.flags[k]

    def stats(self):
        """Sizes of the tape: ops by opcode, slots and bytes of each buffer."""
        codes = self.op_codes()
        by_op = {OPCODE_NAMES[int(c)]: int(n) for c, n in zip(*np.unique(codes, return_counts=True))}
        nbytes = {
            "opcodes": self.n_ops * (sizeof(uint16_t) + sizeof(int32_t) + sizeof(uint8_t)),
            "operands": self.n_opnd * sizeof(int32_t),
            "constants": self.n_consts * sizeof(double),
            "indices": self.n_ints * sizeof(int32_t),
            "branches": self.n_branches,
            "slot_table": self.n_slots * 2 * sizeof(int64_t),
            "values": self.arena_size * sizeof(double),
            "value_stack_peak": self.stack_peak * sizeof(double),
        }
        return {
            "n_ops": int(self.n_ops),
            "ops": by_op,
            "n_slots": int(self.n_slots),
            "arena_elements": int(self.arena_size),
            "bytes": nbytes,
            "tape_bytes_per_op": (sum(nbytes[k] for k in ("opcodes", "operands", "branches"))
                                  / max(self.n_ops, 1)),
        }

    # ------------------------------------------------------------------
    # replay: each call runs on a Replay of its own (_replay.pxi)

    cdef int check_replayable(self) except -1:
        if self.failed:
            raise TapeNotRecorded("adsim: this tape's recording failed (the function raised); "
                                  "record it again with adsim.record(f, x)")
        if self.recording:
            raise TapeNotRecorded(
                "adsim: this tape has no finished recording: it is still recording (its "
                "function is running) or was made by calling Tape() directly, which gives an "
                "empty tape. Tapes are made by adsim.record(f, x); replay the tape it returns "
                "(tape.gradient(x), tape.forward(x), ...)")
        return 0

    def _check_recorded(self):
        self.check_replayable()

    cdef object run_tables(self):
        """The run tables of the chunked sweeps, found on first use. Two
        threads may both build them; the first stored is kept (they are
        equal) and never replaced, so a Replay may point into it."""
        if self._runs is None:
            found = find_runs(self)
            if self._runs is None:
                self._runs = found
        return self._runs

    def _fusion_runs(self):
        """The runs fusing compiles: found once from FUSED_RUN_MIN_SIZE
        elements on, they become the tape's runs with its first fused table
        (before it, replays keep the runs chunking found)."""
        self.check_replayable()
        if self.fused != NULL or not self.chunked:
            return self.run_tables() if self.chunked else None
        if self._fusion_runs_found is None:
            self._fusion_runs_found = find_runs(self, FUSED_RUN_MIN_SIZE)
        return self._fusion_runs_found

    def _install_fused(self, entries, keep):
        """Give runs fused kernels (adsim/_fuse/): ``entries`` is a list of
        (run index, {kind: address} for kinds among values, tangents,
        vtangents, reverse, reverse2, gradient, second_order, sum, int32 array of the refs they read,
        int32 array of the slots a keeping forward saves for the reverse kernel);
        ``keep`` holds what the addresses live in. The first table indexes
        the runs ``_fusion_runs`` found, which then replace the tape's (a
        replay under way keeps the runs it started with). A later install (more
        kinds) makes a new table: a replay takes the table when it starts and
        sweeps with it to the end, so replaced tables live as long as the tape."""
        cdef FusedRun* table
        cdef FusedRun** old
        cdef cnp.ndarray refs, saved
        cdef int64_t n_runs
        self.check_replayable()        # runs found mid-recording would miss later ops
        if not self.chunked or not entries:
            return 0
        runs = self._fusion_runs()
        n_runs = len(runs[2])
        table = <FusedRun*>calloc(max(n_runs, 1), sizeof(FusedRun))
        if table == NULL:
            raise MemoryError("adsim: no memory for the fused runs' table")
        kept = [keep]
        for run, kernels, refs_array, saved_array in entries:
            if not 0 <= run < n_runs:
                free(table)
                raise ValueError(f"adsim: no run {run} in this tape")
            refs = np.ascontiguousarray(refs_array, dtype=np.int32)
            saved = np.ascontiguousarray(saved_array, dtype=np.int32)
            kept += [refs, saved]
            table[run].values = <fused_kernel><intptr_t>kernels.get("values", 0)
            table[run].tangents = <fused_kernel><intptr_t>kernels.get("tangents", 0)
            table[run].vtangents = <fused_vector_kernel><intptr_t>kernels.get("vtangents", 0)
            table[run].reverse = <fused_kernel><intptr_t>kernels.get("reverse", 0)
            table[run].reverse2 = <fused_kernel><intptr_t>kernels.get("reverse2", 0)
            table[run].gradient = <fused_kernel><intptr_t>kernels.get("gradient", 0)
            table[run].second_order = <fused_kernel><intptr_t>kernels.get("second_order", 0)
            table[run].sum = <fused_kernel><intptr_t>kernels.get("sum", 0)
            table[run].refs = <int32_t*>cnp.PyArray_DATA(refs)
            table[run].n_refs = <int32_t>cnp.PyArray_SIZE(refs)
            table[run].saved = <int32_t*>cnp.PyArray_DATA(saved)
            table[run].n_saved = <int32_t>cnp.PyArray_SIZE(saved)
        self._runs = runs
        if self.fused != NULL:
            old = <FusedRun**>realloc(self.old_fused, (self.n_old_fused + 1) * sizeof(FusedRun*))
            if old == NULL:
                free(table)
                raise MemoryError("adsim: no memory for the fused runs' table")
            self.old_fused = old
            self.old_fused[self.n_old_fused] = self.fused
            self.n_old_fused += 1
        self._fused_keep = (self._fused_keep, kept)
        self.fused = table
        return len(entries)

    def _fusion_work(self):
        """Elements one replay's elementwise ops of fusable size write (0:
        none; fused kernels would not pay)."""
        if self.fusion_work < 0:
            self.fusion_work = elementwise_work(self, FUSED_RUN_MIN_SIZE)
        return self.fusion_work

    def _arm_fusion(self, int layout, int64_t replays):
        """Ask the fusion policy again after ``replays`` more replays laid
        out as ``layout`` (-1: never)."""
        if not 0 <= layout < FUSION_FAMILIES:
            raise ValueError(f"adsim: no family of fused kernels {layout}")
        self.fusion_countdown[layout] = replays
        self.fusion_armed[layout] = True

    def _fusion_armed(self, int layout):
        """Whether the policy set the count of ``layout`` before."""
        return bool(self.fusion_armed[layout]) if 0 <= layout < FUSION_FAMILIES else False

    def _run_table(self):
        """The tape's runs of elementwise ops, as the chunked sweeps take
        them: rows (first op, end op, size, chunk, refs offset, slots,
        constants, row length); empty when chunking is off."""
        self.check_replayable()
        return np.array(self.run_tables()[2]) if self.chunked else np.zeros((0, RUN_FIELDS), np.int32)

    def _inputs(self, xs):
        """Normalise ``xs`` to one float64 array per input, checking shapes."""
        cdef list ready = inputs_as_given(self, xs)
        if ready is not None:
            return ready
        self.check_replayable()
        n_in = len(self._input_slots)
        if not isinstance(xs, (tuple, list)) or (n_in == 1 and len(xs) != 1):
            xs = (xs,)
        if len(xs) != n_in:
            raise InvalidArgumentValue(f"adsim: the tape has {n_in} inputs but {len(xs)} were "
                                       f"given; pass one array per input: tape.gradient(x1, x2), "
                                       f"or x=(x1, x2) for jvp, vjp and hvp")
        out = []
        for i, x in enumerate(xs):
            if is_float64_array(x) and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x) and \
                    x.shape == self._input_shapes[i] and \
                    (not self.layout_observed or self._input_layouts[i] is None):
                out.append(x)          # the common case, without conversions
                continue
            arr = as_float_array(x, f"input {i}")
            if arr.shape != self._input_shapes[i]:
                raise InvalidArgumentValue(
                    f"adsim: input {i} has shape {arr.shape} but the tape was recorded for "
                    f"shape {self._input_shapes[i]}; record a new tape (adsim.record) for this "
                    f"shape, or use the functional API (adsim.grad, ...) which does so")
            if self.layout_observed and layout_key(x) != self._input_layouts[i]:
                raise BranchChanged(
                    f"adsim: input {i} is laid out in memory in {layout_name(layout_key(x))}, "
                    f"the recording's in {layout_name(self._input_layouts[i])}, and {LAYOUT_READ}; "
                    f"record a new tape for this layout, or use the functional API "
                    f"(adsim.grad, ...), which does so")
            out.append(arr)
        return out

    def _forward(self, xs):
        """Zero-order sweep: the output at the inputs ``xs`` (from _inputs)."""
        return replay_values(self, xs)

    def _forward_value(self, xs):
        """tape.forward in one call: the output at the arguments ``xs`` (as
        _inputs takes them), a float for a 0-d output."""
        cdef list ready = inputs_as_given(self, xs)
        y = replay_values(self, ready if ready is not None else self._inputs(xs))
        return float(y) if cnp.PyArray_NDIM(<cnp.ndarray>y) == 0 else y

    def gradient(self, *xs):
        """Gradient of a scalar output by one reverse sweep."""
        return self._value_and_gradient(xs, False)[1]

    def value_and_gradient(self, *xs):
        """(f(x), gradient) for a scalar output; a tuple of gradients for
        several inputs."""
        return self._value_and_gradient(xs, True)

    def _value_and_gradient(self, xs, bint want_value):
        """value_and_gradient at the arguments ``xs`` (as _inputs takes
        them), in one compiled call (a small tape's gradient costs about as
        much as the Python layers around it); without ``want_value`` the
        value may be NaN (a fused kernel skips it)."""
        cdef list arrays = inputs_as_given(self, xs)     # (the common case, in C)
        if arrays is None:
            arrays = self._inputs(xs)
        if self.out_slot < 0:
            self.check_replayable()
        if self.slot_size[self.out_slot] != 1:
            raise InvalidArgumentValue("adsim: the gradient needs a scalar output; this tape's "
                                       f"output has shape {self.output_shape}: use tape.vjp or "
                                       "tape.jacobian")
        y, adjoints = replay_adjoints(self, arrays, None, want_value, True)
        value = data_of(<cnp.ndarray>y)[0]
        if len(adjoints) == 1:
            return value, shaped_like(adjoints[0], arrays[0])
        return value, tuple([shaped_like(a, x) for a, x in zip(adjoints, arrays)])

    def _adjoint(self, xs, W, bint want_value=True):
        """Reverse sweep with q adjoint directions ``W`` (q, output size), or
        one weight 1 when ``W`` is None (the gradient of a scalar output).
        Returns (output value, [per input (q, size)]); without
        ``want_value`` the value may be NaN (a fused kernel skips it)."""
        return replay_adjoints(self, xs, W, want_value)

    def _tangent(self, xs, V, bint keep=False):
        """Forward sweep with p tangent directions; V[i] is (p, size of input i)
        or None. Returns (output value, output tangents (p, output size))."""
        return replay_tangents(self, xs, V, keep)

    def _tangent_gathered(self, xs, int argnum, colors, int p, positions, data,
                          bint value=True):
        """The tangent sweep of a compressed sparse Jacobian: p directions
        seeded by the column coloring ``colors`` (int64, -1 for none) of input
        ``argnum``, the other inputs constant, and the output tangents read at
        ``positions`` (flat in (p, output size); int32 or int64) into ``data``
        (float64, one element per position) instead of returned. Returns the
        output value (None unless ``value``)."""
        return replay_gathered_tangents(self, xs, argnum, colors, p, positions, data, value)

    def _soadjoint(self, xs, V, w, wdot=None, bint adjoints=True):
        """Second-order adjoint (reverse on forward). V as in _tangent, ``w`` the
        output adjoint and ``wdot`` (p, output size) its tangent (zero if None).
        Returns (value, output tangents, [adjoint per input], [adjoint
        tangents (p, size) per input]); the adjoints are None unless
        ``adjoints`` (an hvp alone need not copy the gradient out)."""
        return replay_second_order(self, xs, V, w, wdot, adjoints)

    def _hvp_one(self, x, v):
        """H v for a tape of one input and a scalar output, one direction:
        _soadjoint without its general shaping. x and v are arrays of the
        input's size."""
        return replay_hvp_one(self, x, v)

    def _iterate(self, xs, int64_t n_steps):
        """Apply the tape ``n_steps`` times, feeding the output back into input
        0 (a loop body replayed in C). Returns (steps done, state): fewer than
        ``n_steps`` steps when step ``steps done`` left the recorded path,
        in which case ``state`` is the state before that step."""
        return replay_iterate(self, xs, n_steps)


cdef object as_float_array(object x, str what):
    """``x`` as a float64 array; integers convert, complex and objects do not
    (:class:`adsim.errors.InvalidInput`, naming ``what``)."""
    if x is None:
        raise InvalidInput(f"adsim: {what} is None; pass a float64 array or a number")
    refuse_subclass(x, what)
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as err:       # ragged nested sequences
        raise InvalidInput(f"adsim: {what} is not an array of numbers ({err}); pass a "
                           f"float64 array") from err
    if arr.dtype.kind in "biu":
        return arr.astype(np.float64, order="C")
    if arr.dtype.kind == "c":
        raise InvalidInput(f"adsim: {what} is complex ({arr.dtype}); adsim differentiates real "
                           f"float64 code: split it into real and imaginary parts")
    if arr.dtype.kind != "f":
        raise InvalidInput(f"adsim: {what} has dtype {arr.dtype} (given a "
                           f"{type(x).__name__}); pass a float64 array")
    return np.asarray(arr, dtype=np.float64, order="C")   # keeps 0-d arrays 0-d


def layout_key(arr):
    """What NumPy's layout-following functions (ufunc results,
    ``ravel(order="K")``, ``empty_like``) see of an array's memory layout:
    None for C order (every array of fewer than two axes), else the strides
    of a dense array laid out as it is, with its F-contiguity (``order="A"``)."""
    if not isinstance(arr, np.ndarray) or arr.ndim < 2 or cnp.PyArray_IS_C_CONTIGUOUS(arr):
        return None
    dense = np.empty_like(arr, dtype=np.uint8)
    if cnp.PyArray_IS_C_CONTIGUOUS(dense):
        return None
    return (dense.strides, bool(arr.flags.f_contiguous))


def layout_name(key):
    """A layout_key in words."""
    if key is None:
        return "C order"
    if key[1]:
        return "Fortran order"
    return f"the axis order of strides {tuple(s * 8 for s in key[0])} (bytes of float64)"


def _as_float_array(x, what="input"):
    return as_float_array(x, what)



def find_runs(Tape tape, int64_t min_size=0):
    """The tape's runs of elementwise ops, as the chunked sweeps take them
    (_chunks.pxi), of at least ``min_size`` elements (0: the size from which
    chunking pays): (run_of per op, run table, refs, shifted-source flag per
    op, the slot_shift and slot_ld arrays of the sweeps)."""
    cdef Sweep s
    tape.program_sweep(&s)
    return runs_of(&s, tape.n_ops, tape.n_slots, min_size)


# Runs from this size on are fused (adsim/_fuse/): one loop instead of one per
# op pays off well below the size from which the interpreter chunks runs.
cdef enum:
    FUSED_RUN_MIN_SIZE = 256
FUSED_RUN_MIN = FUSED_RUN_MIN_SIZE


cdef double elementwise_work(Tape t, int64_t min_size):
    """Elements the unary and binary ops of at least ``min_size`` elements
    write in one replay: what fused kernels would speed up."""
    cdef double work = 0.0
    cdef int64_t k, size
    cdef int code
    for k in range(t.n_ops):
        code = t.code[k]
        if (0 < code < UNARY_END) or (ADD <= code < BINARY_END):     # ADD: the first binary op
            size = t.size_of(t.opnd[t.start[k]])
            if size >= min_size:
                work += <double>size
    return work

