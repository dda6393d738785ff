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
"""
cimport numpy as cnp
import numpy as np
from libc.math cimport (fabs, sqrt, cbrt, exp, exp2, expm1, log, log2, log10, log1p,
                        sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh,
                        asinh, acosh, atanh, hypot, pow)
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
cimport scipy.linalg.cython_blas as blas

from .errors import BranchChanged

cnp.import_array()

cdef object FLOAT64 = np.dtype(np.float64)

include "_buffers.pxi"
include "_sweeps.pxi"
include "_chunks.pxi"
include "_ops/unary.pxi"
include "_ops/binary.pxi"
include "_ops/branch.pxi"
include "_ops/structural.pxi"
include "_ops/linalg.pxi"
include "_ops/callback.pxi"

OPCODE_NAMES = {int(op): op.name for op in Opcode if not op.name.endswith("_END")}

# slot states while recording (bits)
cdef enum:
    SLOT_WRITTEN = 1        # holds a value an op wrote
    SLOT_PINNED = 2         # an input or the output: never reused
    SLOT_NEEDED = 4         # its current value is read by some reverse sweep
    SLOT_VARIED = 8         # its value depends differentiably on the inputs

# which values the reverse sweeps of an op read (bits); see value_uses in
# each family file
cdef enum:
    USES_ARGS = 1
    USES_RESULT = 2

cdef uint8_t VALUE_USES[<int>CALLBACK_END]


cdef void init_value_uses():
    cdef int code
    for code in range(<int>CALLBACK_END):
        if code < UNARY_END:
            VALUE_USES[code] = unary_value_uses(code)
        elif code < BINARY_END:
            VALUE_USES[code] = binary_value_uses(code)
        elif code == MATMUL:
            VALUE_USES[code] = USES_ARGS
        elif code == CALLBACK:
            VALUE_USES[code] = USES_ARGS | USES_RESULT
        else:
            VALUE_USES[code] = 0   # branch records and linear structural ops

init_value_uses()


cdef class Tape:
    """A recorded NumPy computation, replayable in C for new inputs.

    Made by :func:`adsim.record`; see the user guide (docs/tape.md).
    """

    def __cinit__(self):
        self.chunked = True
        self.cap_ops = self.cap_opnd = self.cap_consts = self.cap_const_ids = 0
        self.cap_ints = self.cap_branches = self.cap_slots = self.arena_cap = 0
        self.code = <uint16_t*>grow(NULL, &self.cap_ops, 64, sizeof(uint16_t))
        cdef int64_t c = 0
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
        self.val = <double*>grow(NULL, &self.arena_cap, 256, sizeof(double))
        self.work = NULL
        self.work_cap = 0
        self.work_zero_lo = self.work_zero_hi = 0
        self.stack.data = NULL
        self.stack.top = self.stack.cap = self.stack.peak = 0
        self.free_slots = {}
        self.callbacks = []
        self.input_slots = []
        self.input_shapes = []
        self.output_slot = None
        self.output_shape = None
        self.recording = True
        self._cache = {}

    def __dealloc__(self):
        free(self.code); free(self.start); free(self.flags); free(self.opnd)
        free(self.consts); free(self.const_off); free(self.const_size)
        free(self.ints); free(self.branches)
        free(self.slot_off); free(self.slot_size); free(self.slot_state)
        free(self.val); free(self.work); free(self.stack.data)

    # ------------------------------------------------------------------
    # recording primitives (called by the front end in _active.pxi and
    # adsim/_numpy_api.py)

    cdef int new_slot(self, int64_t size) except -1:
        """A slot of ``size`` elements: a freed one if any (first one whose
        value no reverse sweep reads, so overwriting it saves nothing), else
        a new one at the end of the arena."""
        cdef list lists = self.free_slots.get(size)
        cdef int slot
        cdef int64_t c
        if lists is not None:
            if lists[0]:
                return lists[0].pop()
            if lists[1]:
                return lists[1].pop()
        if self.n_slots == self.cap_slots:
            c = self.cap_slots
            self.slot_off = <int64_t*>grow(self.slot_off, &c, self.n_slots + 1, sizeof(int64_t))
            c = self.cap_slots
            self.slot_size = <int64_t*>grow(self.slot_size, &c, self.n_slots + 1, sizeof(int64_t))
            self.slot_state = <uint8_t*>grow(self.slot_state, &self.cap_slots, self.n_slots + 1,
                                             sizeof(uint8_t))
        if self.arena_size + size > self.arena_cap:
            self.val = <double*>grow(self.val, &self.arena_cap, self.arena_size + size, sizeof(double))
        slot = <int>self.n_slots
        self.slot_off[slot] = self.arena_size
        self.slot_size[slot] = size
        self.slot_state[slot] = 0
        self.arena_size += size
        self.n_slots += 1
        return slot

    cdef void release(self, int slot):
        if not self.recording or self.slot_state[slot] & SLOT_PINNED:
            return
        lists = self.free_slots.get(self.slot_size[slot])
        if lists is None:
            lists = self.free_slots[self.slot_size[slot]] = [[], []]
        lists[1 if self.slot_state[slot] & SLOT_NEEDED else 0].append(slot)

    def pin(self, int slot):
        """Keep ``slot`` out of reuse (inputs and outputs)."""
        self.slot_state[slot] |= SLOT_PINNED

    cdef int64_t add_const_data(self, const double* data, int64_t n) except 0:
        cdef int64_t c
        if self.n_consts + n > self.cap_consts:
            self.consts = <double*>grow(self.consts, &self.cap_consts, self.n_consts + n, sizeof(double))
        if self.n_const_ids == self.cap_const_ids:
            c = self.cap_const_ids
            self.const_off = <int64_t*>grow(self.const_off, &c, self.n_const_ids + 1, sizeof(int64_t))
            self.const_size = <int64_t*>grow(self.const_size, &self.cap_const_ids,
                                             self.n_const_ids + 1, sizeof(int64_t))
        memcpy(self.consts + self.n_consts, data, <size_t>n * sizeof(double))
        self.const_off[self.n_const_ids] = self.n_consts
        self.const_size[self.n_const_ids] = n
        self.n_consts += n
        self.n_const_ids += 1
        return -self.n_const_ids          # ref of the new constant: -1 - id

    cdef int64_t add_ints(self, const int32_t* data, int64_t n) except -1:
        cdef int64_t off = self.n_ints
        if self.n_ints + n > self.cap_ints:
            self.ints = <int32_t*>grow(self.ints, &self.cap_ints, self.n_ints + n, sizeof(int32_t))
        if n:
            memcpy(self.ints + off, data, <size_t>n * sizeof(int32_t))
        self.n_ints += n
        return off

    cdef int64_t reserve_branches(self, int64_t n) except -1:
        cdef int64_t off = self.n_branches
        if self.n_branches + n > self.cap_branches:
            self.branches = <uint8_t*>grow(self.branches, &self.cap_branches, self.n_branches + n,
                                           sizeof(uint8_t))
        memset(self.branches + off, 0, <size_t>n)
        self.n_branches += n
        return off

    cdef int64_t append_op(self, int code, const int32_t* ops, int nops) except -1:
        """Append one op; its result slot is ops[0] (-1 for none)."""
        cdef int64_t k = self.n_ops, c
        cdef int r = ops[0]
        cdef uint8_t flag = 0
        if not self.recording:
            raise RuntimeError("adsim: this tape has finished recording; record a new one")
        if k == self.cap_ops:
            c = self.cap_ops
            self.start = <int32_t*>grow(self.start, &c, k + 1, sizeof(int32_t))
            c = self.cap_ops
            self.flags = <uint8_t*>grow(self.flags, &c, k + 1, sizeof(uint8_t))
            self.code = <uint16_t*>grow(self.code, &self.cap_ops, k + 1, sizeof(uint16_t))
        if self.n_opnd + nops > self.cap_opnd:
            self.opnd = <int32_t*>grow(self.opnd, &self.cap_opnd, self.n_opnd + nops, sizeof(int32_t))
        if self.n_opnd + nops > 2147483647:
            raise MemoryError("adsim: the tape passed 2**31 operands; checkpoint the loop "
                              "(adsim.checkpoint_loop) so one step is recorded, not all")
        memcpy(self.opnd + self.n_opnd, ops, <size_t>nops * sizeof(int32_t))
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
                    (SLOT_NEEDED if VALUE_USES[code] & USES_RESULT else 0) | \
                    self.operands_varied(code, ops)
        self.code[k] = <uint16_t>code
        self.start[k] = <int32_t>self.n_opnd
        self.flags[k] = flag
        self.n_opnd += nops
        self.n_ops += 1
        return k

    cdef uint8_t operands_varied(self, int code, const int32_t* ops):
        """SLOT_VARIED when an op's result depends differentiably on the
        inputs: some argument does, and the op passes derivatives on."""
        cdef int i, n_args = 2
        if code == STOP_GRADIENT or code == SIGN or code == FILL:
            return 0
        if code == CALLBACK:
            for i in range(ops[2]):
                if ops[3 + i] >= 0 and self.slot_state[ops[3 + i]] & SLOT_VARIED:
                    return SLOT_VARIED
            return 0
        if code < UNARY_END or (code >= COPY and code < STRUCTURAL_END and code != WHERE):
            n_args = 1
        for i in range(1, 1 + n_args):
            if ops[i] >= 0 and self.slot_state[ops[i]] & SLOT_VARIED:
                return SLOT_VARIED
        return 0

    def slot_is_varied(self, int slot):
        """Does the current value of ``slot`` depend differentiably on the inputs?"""
        if not 0 <= slot < self.n_slots:
            raise ValueError(f"adsim: slot {slot} does not exist on this tape")
        return bool(self.slot_state[slot] & SLOT_VARIED)

    cdef void mark_value_reads(self, int code, const int32_t* ops):
        """Flag the slots whose current values the reverse sweeps of this op read."""
        cdef int i
        if not VALUE_USES[code] & USES_ARGS:
            return
        if code == CALLBACK:
            for i in range(ops[2]):
                if ops[3 + i] >= 0:
                    self.slot_state[ops[3 + i]] |= SLOT_NEEDED
            return
        if ops[1] >= 0:
            self.slot_state[ops[1]] |= SLOT_NEEDED
        if (code >= ADD and code < BINARY_END) or code == MATMUL:
            if ops[2] >= 0:
                self.slot_state[ops[2]] |= SLOT_NEEDED

    cdef void fill_sweep(self, Sweep* s):
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
        s.stack = &self.stack
        s.err_op = -1
        s.callbacks = <void*>self.callbacks
        s.tape = <void*>self
        s.run_of = NULL
        s.runs = NULL
        s.run_refs = NULL
        s.run_shifted = NULL
        s.slot_shift = NULL
        s.slot_ld = NULL

    cdef int attach_runs(self, Sweep* s) except -1:
        """Let the sweeps take runs of elementwise ops chunk by chunk (_chunks.pxi);
        ``tape.chunked = False`` sweeps op by op, the reference for tests."""
        cdef cnp.ndarray run_of, table, refs, shifted, views
        if self.recording or not self.chunked:
            return 0
        found = self._cache.get("runs")
        if found is None or found[0] != self.n_ops:
            found = find_runs(self)
            self._cache["runs"] = found
        _, run_of, table, refs, shifted, views = found
        if cnp.PyArray_SIZE(table) == 0:
            return 0
        s.run_of = <int32_t*>cnp.PyArray_DATA(run_of)
        s.runs = <int32_t*>cnp.PyArray_DATA(table)
        s.run_refs = <int32_t*>cnp.PyArray_DATA(refs)
        s.run_shifted = <uint8_t*>cnp.PyArray_DATA(shifted)
        s.slot_shift = <int64_t*>cnp.PyArray_DATA(views)
        s.slot_ld = s.slot_shift + self.n_slots
        return 0

    cdef int execute_last(self) except -1:
        """Compute the value of the op just appended (recording runs the same
        C kernel as replay, so recorded and replayed values agree bitwise)."""
        cdef Sweep s
        self.fill_sweep(&s)
        op_value(&s, self.n_ops - 1)
        return 0

    cdef int64_t size_of(self, int ref):
        return self.slot_size[ref] if ref >= 0 else self.const_size[-ref - 1]

    # Python-level recording helpers for adsim/_numpy_api.py -------------

    def record_op(self, int code, int result_size, operands):
        """Append op ``code``; a new result slot of ``result_size`` elements is
        put first unless ``result_size < 0`` (no result, or operands[0] given
        when ``result_size == -2``). Returns the result slot (or -1)."""
        cdef list ops = list(operands)
        cdef int r = -1
        if result_size >= 0:
            r = self.new_slot(result_size)
            ops.insert(0, r)
        elif result_size == -1:
            ops.insert(0, -1)
        else:
            r = ops[0]
        cdef cnp.ndarray buf = np.asarray(ops, dtype=np.int32)
        self.append_op(code, <int32_t*>cnp.PyArray_DATA(buf), len(ops))
        self.execute_last()
        return r

    def const_ref(self, value):
        """Store a constant array; returns its (negative) ref. Equal constants
        recorded again (a padding constant in every step, say) share one copy."""
        cdef cnp.ndarray arr = np.ascontiguousarray(value, dtype=np.float64).reshape(-1)
        key = (arr.shape[0], arr.tobytes()) if arr.shape[0] <= 64 else \
            (arr.shape[0], hash(arr.tobytes()))
        ref = self._cache.get(key)
        if ref is not None and (arr.shape[0] <= 64 or np.array_equal(self.slot_value(ref), arr)):
            return ref
        ref = self.add_const_data(<double*>cnp.PyArray_DATA(arr), arr.shape[0])
        self._cache[key] = ref
        return ref

    def add_indices(self, idx):
        """Store int32 indices; returns their offset in the index stream."""
        cdef cnp.ndarray arr = np.ascontiguousarray(idx, dtype=np.int32).reshape(-1)
        return self.add_ints(<int32_t*>cnp.PyArray_DATA(arr), arr.shape[0])

    def add_branch_space(self, n):
        return self.reserve_branches(n)

    def set_branches(self, int64_t off, mask):
        cdef cnp.ndarray arr = np.ascontiguousarray(mask, dtype=np.uint8).reshape(-1)
        memcpy(self.branches + off, cnp.PyArray_DATA(arr), <size_t>arr.shape[0])

    def branch_outcome(self, int64_t off, int64_t n):
        """The recorded outcomes at ``off`` as a bool array."""
        out = np.empty(n, dtype=np.bool_)
        memcpy(cnp.PyArray_DATA(out), self.branches + off, <size_t>n)
        return out

    def index_record(self, int64_t off, int64_t n):
        out = np.empty(n, dtype=np.int32)
        memcpy(cnp.PyArray_DATA(out), self.ints + off, <size_t>n * sizeof(int32_t))
        return out

    def slot_value(self, int ref):
        """Copy of the current contents of a slot or constant (flat)."""
        cdef int64_t n = self.size_of(ref)
        out = np.empty(n, dtype=np.float64)
        cdef Sweep s
        self.fill_sweep(&s)
        memcpy(cnp.PyArray_DATA(out), vptr(&s, ref), <size_t>n * sizeof(double))
        return out

    def param_value(self, int64_t off):
        """The scalar parameter of a unary op (its position in the constants)."""
        return self.consts[off]

    @property
    def arena_elements(self):
        return self.arena_size

    def slot_size_of(self, int ref):
        return self.size_of(ref)

    def add_callback(self, obj):
        self.callbacks.append(obj)
        return len(self.callbacks) - 1

    def new_input(self, value):
        """A new pinned input slot holding ``value`` (float64, any shape)."""
        arr = np.asarray(value, dtype=np.float64, order="C")
        cdef int slot = self.new_slot(arr.size)
        self.slot_state[slot] = SLOT_PINNED | SLOT_WRITTEN | SLOT_VARIED
        self._write_slot(slot, arr)
        self.input_slots.append(slot)
        self.input_shapes.append(arr.shape)
        return slot

    def finish(self, int output_slot, tuple output_shape):
        """End recording with ``output_slot`` as the tape's output."""
        self.slot_state[output_slot] |= SLOT_PINNED
        self.output_slot = output_slot
        self.output_shape = output_shape
        self._output_template = np.empty(output_shape, dtype=np.bool_)   # its dims, for replays
        self.recording = False
        self.free_slots = {}


    def finish_failed(self):
        """End a recording whose function raised: the tape cannot be replayed."""
        self.recording = False
        self.free_slots = {}

    # ------------------------------------------------------------------
    # replay

    cdef int _write_slot(self, int slot, object arr) except -1:
        cdef cnp.ndarray a = np.ascontiguousarray(arr, dtype=np.float64).reshape(-1)
        assert a.shape[0] == self.slot_size[slot]
        memcpy(self.val + self.slot_off[slot], cnp.PyArray_DATA(a), <size_t>a.shape[0] * sizeof(double))
        return 0

    cdef double* work_buffer(self, int64_t n, int64_t zero_from=0) except NULL:
        """Scratch of n doubles for tangents/adjoints, kept between calls, zeroed
        from ``zero_from`` on (tangents are written by every op before they
        are read, so their part need not be)."""
        if n > self.work_cap:
            free(self.work)
            self.work = NULL
            self.work_cap = 0
            self.work_zero_lo = self.work_zero_hi = 0
            self.work = <double*>grow(NULL, &self.work_cap, max(n, 1), sizeof(double))
        if n > zero_from and not (self.work_zero_lo <= zero_from and n <= self.work_zero_hi):
            memset(self.work + zero_from, 0, <size_t>(n - zero_from) * sizeof(double))
        self.work_zero_lo = self.work_zero_hi = 0      # in use until a sweep finishes
        return self.work

    cdef void _clear_inputs(self, double* buf, int dirs):
        """Zero the input slots' part of an adjoint buffer. Every other slot's
        adjoint is cleared by the reverse sweep itself (after its op), so the
        whole buffer is then zero and the next sweep need not clear it."""
        cdef int slot
        for slot in self.input_slots:
            memset(buf + dirs * self.slot_off[slot], 0,
                   <size_t>(dirs * self.slot_size[slot]) * sizeof(double))

    def _check_recorded(self):
        if self.recording or self.output_slot is None:
            raise RuntimeError("adsim: this tape is still recording; replay it after adsim.record returns")

    def _inputs(self, xs):
        """Normalise ``xs`` to one float64 array per input, checking shapes."""
        self._check_recorded()
        n_in = len(self.input_slots)
        if not isinstance(xs, (tuple, list)) or (n_in == 1 and len(xs) != 1):
            xs = (xs,)
        if len(xs) != n_in:
            raise ValueError(f"adsim: the tape has {n_in} inputs but {len(xs)} were given")
        out = []
        for i, x in enumerate(xs):
            if type(x) is np.ndarray and (<cnp.ndarray>x).dtype is FLOAT64 and \
                    cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x) and x.shape == self.input_shapes[i]:
                out.append(x)          # the common case, without conversions
                continue
            arr = as_float_array(x, f"input {i}")
            if arr.shape != self.input_shapes[i]:
                raise ValueError(
                    f"adsim: input {i} has shape {arr.shape} but the tape was recorded for "
                    f"shape {self.input_shapes[i]}; record a new tape (adsim.record) for this "
                    f"shape, or use the functional API (adsim.grad, ...) which does so")
            out.append(arr)
        return out

    def _load(self, xs):
        """Copy the inputs (float64, C order, checked by _inputs) into their slots."""
        cdef int i, slot
        cdef cnp.ndarray arr
        for i in range(len(self.input_slots)):
            slot = self.input_slots[i]
            arr = xs[i]
            if not (arr.dtype is FLOAT64 and cnp.PyArray_IS_C_CONTIGUOUS(arr)
                    and cnp.PyArray_SIZE(arr) == self.slot_size[slot]):
                self._write_slot(slot, arr)
                continue
            memcpy(self.val + self.slot_off[slot], cnp.PyArray_DATA(arr),
                   <size_t>self.slot_size[slot] * sizeof(double))

    cdef raise_branch(self, Sweep* s):
        k = s.err_op
        name = OPCODE_NAMES.get(self.code[k], "?")
        raise BranchChanged(
            f"adsim: the replay left the recorded path at op {k} ({name}): a comparison, "
            f"abs/maximum/minimum/clip side or argmax index differs from the recording. "
            f"Record the tape again at this point (the functional API adsim.grad/jvp/... "
            f"does this automatically).", op_index=k, op_name=name)

    def _output_value(self):
        cdef int r = self.output_slot
        cdef cnp.ndarray out = cnp.PyArray_EMPTY(len(self.output_shape),
                                                 cnp.PyArray_DIMS(self._output_template),
                                                 cnp.NPY_FLOAT64, 0)
        memcpy(cnp.PyArray_DATA(out), self.val + self.slot_off[r],
               <size_t>self.slot_size[r] * sizeof(double))
        return out

    def _forward(self, xs):
        """Zero-order sweep. Sweeps that prepare a reverse sweep are part of
        _adjoint and _soadjoint."""
        cdef Sweep s
        self._load(xs)
        self.fill_sweep(&s)
        self.attach_runs(&s)
        self.stack.top = 0
        if forward_sweep(&s, self.n_ops, False, False):
            self.stack.top = 0
            self.raise_branch(&s)
        return self._output_value()

    def _adjoint(self, xs, W):
        """Reverse sweep with q adjoint directions ``W`` (q, output size), or
        one weight 1 when ``W`` is None (the gradient of a scalar output).
        Returns (output value, [per input (q, size)])."""
        cdef Sweep s
        cdef cnp.ndarray w
        cdef int q = 1 if W is None else W.shape[0]
        cdef int r = self.output_slot
        cdef int64_t i, first
        cdef int32_t fused
        self._load(xs)
        self.fill_sweep(&s)
        s.q = q
        s.adj = self.work_buffer(q * self.arena_size)
        self.attach_runs(&s)
        fused = run_into_output(&s, self.n_ops)
        first = s.runs[fused * RUN_FIELDS + RUN_FIRST] if fused >= 0 else self.n_ops
        self.stack.top = 0
        if forward_sweep(&s, first, True, False):
            self.stack.top = 0
            self.raise_branch(&s)
        if W is None:
            for i in range(self.slot_size[r]):
                aptr(&s, r)[i] = 1.0
        else:
            w = np.ascontiguousarray(W, dtype=np.float64)
            memcpy(aptr(&s, r), cnp.PyArray_DATA(w), <size_t>(q * self.slot_size[r]) * sizeof(double))
        if fused >= 0:
            run_and_reverse(&s, fused, False)
        y = self._output_value()
        reverse_sweep(&s, first, False)
        assert self.stack.top == 0
        out = [self._take_dirs(aptr(&s, slot), q, slot) for slot in self.input_slots]
        self.work_zero_lo, self.work_zero_hi = 0, q * self.arena_size
        return y, out

    cdef object _read_dirs(self, double* p, int dirs, int slot):
        return copy_out(p, dirs, self.slot_size[slot])

    cdef object _take_dirs(self, double* p, int dirs, int slot):
        """_read_dirs of an input's adjoints that also zeroes them, as the
        work buffer's adjoint part must be after a sweep (one pass, not two)."""
        cdef cnp.ndarray out = copy_out(NULL, dirs, self.slot_size[slot])
        move_doubles(<double*>cnp.PyArray_DATA(out), p, max(dirs, 1) * self.slot_size[slot])
        return out

    def _tangent(self, xs, V, bint keep=False):
        """Forward sweep with p tangent directions; V[i] is (p, size of input i)
        or None. Returns (output value, output tangents (p, output size))."""
        cdef Sweep s
        cdef int p = _directions_of(V)
        self._load(xs)
        self.fill_sweep(&s)
        s.p = p
        s.tan = self.work_buffer(p * self.arena_size, p * self.arena_size)
        self._seed(&s, V, p)
        self.attach_runs(&s)
        self.stack.top = 0
        if forward_sweep(&s, self.n_ops, keep, True):
            self.stack.top = 0
            self.raise_branch(&s)
        return self._output_value(), self._read_dirs(tptr(&s, self.output_slot), p, self.output_slot)

    cdef int _seed(self, Sweep* s, list V, int p) except -1:
        cdef cnp.ndarray v
        for slot, vi in zip(self.input_slots, V):
            if vi is None:
                memset(tptr(s, slot), 0, <size_t>(p * self.slot_size[slot]) * sizeof(double))
                continue
            if type(vi) is np.ndarray and (<cnp.ndarray>vi).dtype is FLOAT64 and \
                    cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>vi):
                v = vi
            else:
                v = np.ascontiguousarray(vi, dtype=np.float64)
            memcpy(tptr(s, slot), cnp.PyArray_DATA(v), <size_t>(p * self.slot_size[slot]) * sizeof(double))
        return 0

    def _soadjoint(self, xs, V, w, wdot=None, bint adjoints=True):
        """Second-order adjoint (reverse on forward). V as in _tangent, ``w`` the
        output adjoint and ``wdot`` (p, output size) its tangent (zero if None).
        Returns (value, output tangents, [adjoint per input], [adjoint
        tangents (p, size) per input]); the adjoints are None unless
        ``adjoints`` (an hvp alone need not copy the gradient out)."""
        cdef cnp.ndarray wd
        cdef Sweep s
        cdef int p = _directions_of(V)
        cdef int r = self.output_slot
        cdef int64_t first
        cdef cnp.ndarray wa
        if type(w) is np.ndarray and (<cnp.ndarray>w).dtype is FLOAT64 and \
                cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>w):
            wa = w
        else:
            wa = np.ascontiguousarray(w, dtype=np.float64)
        if cnp.PyArray_SIZE(wa) != self.slot_size[r]:
            raise ValueError(f"adsim: the output weight has {cnp.PyArray_SIZE(wa)} values, the "
                             f"output {self.slot_size[r]}")
        self._load(xs)
        first = self.second_order_forward(&s, p, V)
        memcpy(aptr(&s, r), cnp.PyArray_DATA(wa), <size_t>self.slot_size[r] * sizeof(double))
        if wdot is not None:
            wd = np.ascontiguousarray(wdot, dtype=np.float64)
            memcpy(dptr(&s, r), cnp.PyArray_DATA(wd), <size_t>(p * self.slot_size[r]) * sizeof(double))
        if first < self.n_ops:
            run_and_reverse(&s, s.run_of[first], True)
        y = self._output_value()
        ty = self._read_dirs(tptr(&s, r), p, r)
        reverse_sweep(&s, first, True)
        assert self.stack.top == 0
        adj = [self._take_dirs(aptr(&s, slot), 0, slot) for slot in self.input_slots] \
            if adjoints else None
        adot = [self._take_dirs(dptr(&s, slot), p, slot) for slot in self.input_slots]
        self.second_order_done(&s, not adjoints)
        return y, ty, adj, adot

    def _hvp_one(self, cnp.ndarray x, cnp.ndarray v):
        """H v for a tape of one input and a scalar output, one direction:
        ``_soadjoint`` without its general shaping. x and v are float64,
        C-ordered, of the input's shape (checked by the caller)."""
        cdef Sweep s
        cdef int slot = self.input_slots[0], r = self.output_slot
        cdef cnp.ndarray out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x),
                                                 cnp.NPY_FLOAT64, 0)
        memcpy(self.val + self.slot_off[slot], cnp.PyArray_DATA(x),
               <size_t>self.slot_size[slot] * sizeof(double))
        cdef int64_t first = self.second_order_forward(&s, 1, [v])
        aptr(&s, r)[0] = 1.0
        if first < self.n_ops:
            run_and_reverse(&s, s.run_of[first], True)
        reverse_sweep(&s, first, True)
        move_doubles(<double*>cnp.PyArray_DATA(out), dptr(&s, slot), self.slot_size[slot])
        self.second_order_done(&s, True)
        return out

    cdef int64_t second_order_forward(self, Sweep* s, int p, list V) except -1:
        """The tangent sweep that prepares a second-order adjoint sweep: the
        work buffer holds p tangents, one adjoint and p adjoint tangents per
        slot (the adjoint part zero). Inputs must be loaded. Returns where the
        sweep stopped: before a final run summed into the output, which
        run_and_reverse then sweeps forward and back (else the tape's end)."""
        cdef int64_t n = self.arena_size, first
        cdef int32_t fused
        cdef double* buf
        self.fill_sweep(s)
        s.p = p
        s.q = 1
        buf = self.work_buffer((2 * p + 1) * n, p * n)
        s.tan = buf
        s.adj = buf + p * n
        s.adot = buf + (p + 1) * n
        self._seed(s, V, p)
        self.attach_runs(s)
        fused = run_into_output(s, self.n_ops)
        first = s.runs[fused * RUN_FIELDS + RUN_FIRST] if fused >= 0 else self.n_ops
        self.stack.top = 0
        if forward_sweep(s, first, True, True):
            self.stack.top = 0
            self.raise_branch(s)
        return first

    cdef void second_order_done(self, Sweep* s, bint clear_adjoints):
        """After the second-order sweep, whose inputs' adjoint tangents were
        taken (_take_dirs): clear the inputs' adjoints unless they were taken
        too, so that the whole adjoint part of the work buffer is zero again."""
        if clear_adjoints:
            self._clear_inputs(s.adj, 1)
        self.work_zero_lo, self.work_zero_hi = s.p * self.arena_size, (2 * s.p + 1) * self.arena_size

    def _iterate(self, xs, int64_t n_steps):
        """Apply the tape ``n_steps`` times, feeding the output back into input
        0 (a loop body replayed in C). Returns (steps done, state): fewer than
        ``n_steps`` steps when step ``steps done`` left the recorded path,
        in which case ``state`` is the state before that step."""
        cdef Sweep s
        cdef int64_t k, size
        cdef int x0 = self.input_slots[0], r = self.output_slot
        self._check_recorded()
        size = self.slot_size[x0]
        if self.slot_size[r] != size:
            raise ValueError("adsim: a loop body must return a state of its input's size")
        self._load(xs)
        self.fill_sweep(&s)
        self.attach_runs(&s)
        cdef double* saved = <double*>malloc(max(size, 1) * sizeof(double))
        if saved == NULL:
            raise MemoryError()
        try:
            for k in range(n_steps):
                memcpy(saved, self.val + self.slot_off[x0], <size_t>size * sizeof(double))
                if forward_sweep(&s, self.n_ops, False, False):
                    memcpy(self.val + self.slot_off[x0], saved, <size_t>size * sizeof(double))
                    return k, self.slot_value(x0)
                if r != x0:
                    memcpy(self.val + self.slot_off[x0], self.val + self.slot_off[r],
                           <size_t>size * sizeof(double))
            return n_steps, self.slot_value(x0)
        finally:
            free(saved)

    # ------------------------------------------------------------------
    # inspection

    def __len__(self):
        return self.n_ops

    @property
    def n_inputs(self):
        return len(self.input_slots)

    def op_codes(self):
        """Opcodes of all ops, as a NumPy array."""
        out = np.empty(self.n_ops, dtype=np.uint16)
        if self.n_ops:
            memcpy(cnp.PyArray_DATA(out), self.code, <size_t>self.n_ops * sizeof(uint16_t))
        return out

    def op_operands(self, int64_t k):
        """Operands of op k as a list of ints (result slot first)."""
        cdef int64_t end = self.start[k + 1] if k + 1 < self.n_ops else self.n_opnd
        return [self.opnd[i] for i in range(self.start[k], end)]

    def op_flags(self, int64_t k):
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
            "value_stack_peak": self.stack.peak * sizeof(double),
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


cdef int _directions_of(list V) except -1:
    """The number of directions p of per-input (p, size) seeds (None: constant)."""
    for v in V:
        if v is not None:
            return v.shape[0]
    raise ValueError("adsim: no direction given for any input")


cdef object as_float_array(object x, str what):
    """``x`` as a float64 array; integers convert, complex and objects do not."""
    arr = np.asarray(x)
    if arr.dtype.kind in "biu":
        return arr.astype(np.float64, order="C")
    if arr.dtype.kind == "c":
        raise TypeError(f"adsim: {what} is complex ({arr.dtype}); adsim differentiates real "
                        f"float64 code: split it into real and imaginary parts")
    if arr.dtype.kind != "f":
        raise TypeError(f"adsim: {what} has dtype {arr.dtype}; pass a float64 array")
    return np.asarray(arr, dtype=np.float64, order="C")   # keeps 0-d arrays 0-d


def _as_float_array(x, what="input"):
    return as_float_array(x, what)


include "_active.pxi"
