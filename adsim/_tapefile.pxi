# The compiled side of tape files (adsim/tapefile.py writes and parses the
# bytes; docs/tape-format.md specifies them). A program goes out as copies
# of its buffers, and comes back into a fresh Tape through the recording
# primitives themselves: slots are laid out by new_slot (their offsets are
# never read from a file), constants are checked ranges of the constants
# stream (add_const_id), and every op goes
# through append_op, so the per-family checks of _ops/*.pxi refuse any
# operand, slot, index range or branch range a kernel could not run safely,
# and the op flags are derived exactly as when recording (a file's flags must
# agree). Nothing is replayed while loading.
from libc.stdlib cimport calloc

cdef int64_t MAX_ARENA = (<int64_t>1) << 48     # values a loaded program may claim, in all


cdef object buffer_copy(const void* src, int64_t n, object dtype):
    """A new 1-d array of ``n`` items of ``dtype`` copied from ``src``."""
    out = np.empty(n, dtype=dtype)
    if n:
        memcpy(cnp.PyArray_DATA(out), src, <size_t>(n * out.itemsize))
    return out


def program_buffers(Tape t):
    """Copies of a finished tape's program: its buffers and the facts a
    replay needs (inputs, output, chunking, whether it read its arrays'
    memory layout and, if so, each input's layout at recording: only inputs
    laid out alike replay)."""
    t.check_replayable()
    return {
        "code": buffer_copy(t.code, t.n_ops, np.uint16),
        "start": buffer_copy(t.start, t.n_ops, np.int32),
        "flags": buffer_copy(t.flags, t.n_ops, np.uint8),
        "opnd": buffer_copy(t.opnd, t.n_opnd, np.int32),
        "consts": buffer_copy(t.consts, t.n_consts, np.float64),
        "const_off": buffer_copy(t.const_off, t.n_const_ids, np.int64),
        "const_size": buffer_copy(t.const_size, t.n_const_ids, np.int64),
        "ints": buffer_copy(t.ints, t.n_ints, np.int32),
        "branches": buffer_copy(t.branches, t.n_branches, np.uint8),
        "slot_size": buffer_copy(t.slot_size, t.n_slots, np.int64),
        "input_slots": list(t._input_slots),
        "input_shapes": list(t._input_shapes),
        "input_varied": list(t._input_varied),
        "out_slot": t.out_slot,
        "output_shape": tuple(t.output_shape),
        "chunked": bool(t.chunked),
        "layout_observed": bool(t.layout_observed),
        "input_layouts": list(t._input_layouts),
    }


def load_program(Tape t, const uint16_t[::1] code, const int32_t[::1] start,
                 const uint8_t[::1] flags, const int32_t[::1] opnd, const double[::1] consts,
                 const int64_t[::1] const_off, const int64_t[::1] const_size,
                 const int32_t[::1] ints,
                 const uint8_t[::1] branches, const int64_t[::1] slot_size, list input_slots,
                 list input_shapes, list input_varied, int64_t out_slot, tuple output_shape,
                 callbacks, bint chunked, bint layout_observed=False,
                 list input_layouts=None):
    """Fill ``t``, a new and empty Tape, with a program read from a file,
    checking everything a replay will rely on; the tape is then finished. On
    any error (ValueError, TypeError, IndexError, OverflowError, MemoryError)
    the tape is left failed: it can never replay."""
    if not t.recording or t.n_ops or t.n_slots or t.n_const_ids or t.n_ints or t.n_branches \
            or t._input_slots or t._callbacks:
        raise ValueError("adsim: load_program fills a new, empty tape")
    try:
        load_slots(t, slot_size)
        load_streams(t, consts, const_off, const_size, ints, branches)
        load_inputs_of(t, input_slots, input_shapes, input_varied)
        t._callbacks = list(callbacks)
        load_ops(t, code, start, flags, opnd)
        finish(t, out_slot, output_shape, optimise=False)
        for k in range(t.n_ops):
            if t.flags[k] != flags[k]:
                raise ValueError(f"adsim: op {k} ({OPCODE_NAMES.get(t.code[k], t.code[k])}) has "
                                 f"flags {flags[k]} where its operands give {t.flags[k]}")
        if optimise_tapes:                  # a file written without optimising
            t.recording = True              # (the pass may add slots)
            try:
                changed = optimise_program(t)
            finally:
                t.recording = False
                t.free_slots = {}
            if changed:
                t.mark_ticks()
        zero_arena(t)
        t.chunked = chunked
        t.layout_observed = layout_observed
        if input_layouts is not None:           # each input's layout_key (None: C order)
            if len(input_layouts) != len(t._input_slots):
                raise ValueError(f"adsim: {len(input_layouts)} input layouts for "
                                 f"{len(t._input_slots)} inputs")
            t._input_layouts = list(input_layouts)
    except BaseException:
        t.finish_failed()
        raise


cdef int load_slots(Tape t, const int64_t[::1] slot_size) except -1:
    """Slots of the given sizes, laid out one after another as new_slot does."""
    cdef int64_t i, total = 0
    for i in range(slot_size.shape[0]):
        if not 0 <= slot_size[i] <= MAX_ARENA - total:
            raise ValueError(f"adsim: slot {i} of {slot_size[i]} values (the slots before it "
                             f"hold {total}; a program holds at most {MAX_ARENA})")
        total += slot_size[i]
        t.new_slot(slot_size[i])
    return 0


cdef int load_streams(Tape t, const double[::1] consts, const int64_t[::1] const_off,
                      const int64_t[::1] const_size, const int32_t[::1] ints,
                      const uint8_t[::1] branches) except -1:
    """The constants stream with its constants (each a range of it), indices
    and branch records."""
    cdef int64_t i, off, n
    if const_off.shape[0] != const_size.shape[0]:
        raise ValueError(f"adsim: {const_off.shape[0]} constant offsets for "
                         f"{const_size.shape[0]} sizes")
    t.add_const_values(&consts[0] if consts.shape[0] else NULL, consts.shape[0])
    for i in range(const_size.shape[0]):
        t.add_const_id(const_off[i], const_size[i])
    t.add_ints(&ints[0] if ints.shape[0] else NULL, ints.shape[0])
    n = branches.shape[0]
    off = t.reserve_branches(n)
    for i in range(n):
        if branches[i] > 1:
            raise ValueError(f"adsim: branch record {i} is {branches[i]}; outcomes are 0 or 1")
        t.branches[off + i] = branches[i]
    return 0


cdef int load_inputs_of(Tape t, list input_slots, list input_shapes,
                        list input_varied) except -1:
    """Distinct input slots, each of its shape's size, differentiated or not."""
    cdef int i
    if not len(input_slots) == len(input_shapes) == len(input_varied):
        raise ValueError(f"adsim: {len(input_slots)} input slots for {len(input_shapes)} shapes "
                         f"and {len(input_varied)} varied flags")
    seen = set()
    for i in range(len(input_slots)):
        slot = PyNumber_Index(input_slots[i])
        need_slot(t, slot)
        if slot in seen:
            raise ValueError(f"adsim: slot {slot} is input {i} and an earlier input")
        seen.add(slot)
        shape = tuple([PyNumber_Index(d) for d in input_shapes[i]])
        size = 1
        for d in shape:
            if d < 0:
                raise ValueError(f"adsim: input {i} has shape {shape}")
            size *= d
        if size != t.slot_size[slot]:
            raise ValueError(f"adsim: input {i} of shape {shape} in a slot of "
                             f"{t.slot_size[slot]} values")
        if type(input_varied[i]) is not bool:
            raise ValueError(f"adsim: input {i} is varied={input_varied[i]!r}, not True or False")
        t.add_input_slot(slot, shape, input_varied[i])
    return 0


cdef int load_ops(Tape t, const uint16_t[::1] code, const int32_t[::1] start,
                  const uint8_t[::1] flags, const int32_t[::1] opnd) except -1:
    """Append every op, in order, through append_op (which checks it)."""
    cdef int64_t k, end, n = code.shape[0], n_opnd = opnd.shape[0]
    if start.shape[0] != n or flags.shape[0] != n:
        raise ValueError(f"adsim: {n} opcodes with {start.shape[0]} operand offsets and "
                         f"{flags.shape[0]} flags")
    if n_opnd > 2147483647:
        raise TapeOverflow(f"adsim: {n_opnd} operands; a tape holds fewer than 2**31")
    if n == 0 and n_opnd:
        raise ValueError(f"adsim: {n_opnd} operands and no ops")
    if n and start[0] != 0:
        raise ValueError(f"adsim: the operands of op 0 start at {start[0]}, not 0")
    for k in range(n):
        end = start[k + 1] if k + 1 < n else n_opnd
        if not start[k] < end <= n_opnd:
            raise ValueError(f"adsim: op {k} has operands {start[k]} to {end} of {n_opnd}")
        try:
            t.append_op(code[k], &opnd[start[k]], <int>(end - start[k]))
        except (ValueError, IndexError, OverflowError) as err:
            raise type(err)(f"adsim: op {k}: {str(err).removeprefix('adsim: ')}") from err
    return 0


cdef int zero_arena(Tape t) except -1:
    """The recording arena of a loaded tape, which replays start from, holds
    zeros (calloc: pages are only touched when a replay writes them)."""
    cdef double* fresh = <double*>calloc(<size_t>max(t.arena_size, 1), sizeof(double))
    if fresh == NULL:
        raise MemoryError(f"adsim: no memory for the values of a loaded tape "
                          f"({8 * t.arena_size} bytes)")
    free(t.val)
    t.val = fresh
    t.arena_cap = max(t.arena_size, 1)
    return 0
