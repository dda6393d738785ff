# Optimisation of a finished recording, before any replay (docs/tape.md,
# "Optimisation before replay"). Tape.finish runs it once per tape:
#
# 1. common subexpressions: an op with the same opcode, the same attributes,
#    the same result size and operands holding the same values (the same
#    slot *versions*: slots are reused) as an earlier op whose result is
#    still in its slot is not needed. Later ops read that earlier result
#    instead; when its slot was reused before the repeat, the earlier
#    result moves to a new slot (merge_common says when). A COPY (what
#    ``reshape`` and ``ravel`` record) is the value it copies: its readers
#    read the source while that is in its slot, and an output that is a
#    copy becomes its source's slot. Values stay bitwise the same.
# 2. dead ops: one backward pass keeps the ops the output needs, and every
#    op with an effect of its own: branch records (COMPARE, ARGEXT: they
#    detect a new path), reads of recorded indices (GATHER_AT, SCATTER_AT:
#    they detect an index out of bounds, where NumPy raises) and CALLBACK
#    ops whose rules object does not declare itself ``pure``
#    (adsim/_callback_rules.py: checkpointed loops, ODE solves and user
#    primitives may do more than compute their result).
#
# 3. quadratic forms: a product y = C @ x (or x @ C) of a constant square C
#    whose value y only a dot with the same x reads (x @ y, y @ x, np.dot,
#    np.inner) becomes one QUADFORM op in the dot's place, which leaves the
#    gradient (C + C^T) x in a new slot of its own: a gradient then reads C
#    once instead of twice (_ops/quadform.pxi). Only for a C of finite
#    values; its exact symmetry is checked here, once.
#
# The kept ops are moved down in place and their flags derived again as
# recording derives them (append_op), as loading a tape file does: flags
# that pushed values only a removed op read go. The constants, index and
# branch streams stay as they are; slots stay too (a removed op leaves its
# slot unused), and a moved result adds one at the end of the arena.
#
# ADSIM_TAPE_OPTIMISE=0 at import (or set_optimise(False)) turns it off, for
# debugging: replays then run every recorded op.
import os

cdef bint optimise_tapes = os.environ.get("ADSIM_TAPE_OPTIMISE", "1") != "0"

# value ids: op k made value k; a slot's value before any op wrote it is
# UNWRITTEN + the slot
cdef int64_t UNWRITTEN = (<int64_t>1) << 40


def set_optimise(bint on):
    """Optimise tapes as they finish (True, the default) or not; returns the
    previous setting. For debugging and tests, as ADSIM_TAPE_OPTIMISE=0."""
    global optimise_tapes
    previous = optimise_tapes
    optimise_tapes = on
    return previous


cdef bint has_effect(Tape t, int code, const int32_t* o):
    """An op kept whether or not the output needs its result."""
    if o[0] < 0 or INDEX_OPERAND[code]:
        return True
    if code == CALLBACK:
        return getattr(t._callbacks[o[1]], "pure", False) is not True
    return False


cdef inline bint mergeable(Tape t, int code, const int32_t* o) noexcept:
    """Ops whose result is a function of their operands and attributes
    alone, written whole: the candidates for merging. Not ops on one
    element: looking one up costs recording more than the op costs a replay."""
    return o[0] >= 0 and t.slot_size[o[0]] > 1 and code != SCATTER and code != CALLBACK \
        and not INDEX_OPERAND[code]


cdef inline uint64_t key_hash(int code, const int64_t* key, int64_t n) noexcept:
    cdef uint64_t h = 1469598103934665603ULL ^ <uint64_t>code
    cdef int64_t i
    for i in range(n):
        h = (h ^ <uint64_t>key[i]) * 1099511628211ULL
        h ^= h >> 29
    return h


cdef enum:
    MOVE_REACH = 1 << 16        # a first result is moved only for a repeat this close


cdef int64_t merge_common(Tape t) except -1:
    """Point reads of repeated results at their first computation (step 1
    above); returns the number of operands changed. The repeated ops then
    have no readers and go with the dead ones.

    The first result is often gone from its slot when the repeat comes
    (Python freed the temporary and the slot was reused). It then moves to
    a new slot of its own, nothing else writes, and its readers so far with
    it, unless an in-place write reads it, the repeat is more than
    MOVE_REACH ops later, the new slots would pass the arena's size (plus
    MOVE_REACH elements, for small tapes), or the
    moves have looked through 8 times the tape's ops (the pass stays linear)."""
    cdef int64_t n = t.n_ops, k, i, j, m, h, nops, mask, changed = 0, v, c
    cdef int64_t table_size = 16, budget = t.arena_size + MOVE_REACH, cap_slots
    cdef int64_t scan_budget = 8 * n + MOVE_REACH     # ops the moves may look through, in all
    cdef int code, src, moved
    cdef int32_t* o
    cdef int32_t* om
    cdef int64_t* grown
    while table_size < 2 * n:
        table_size *= 2
    mask = table_size - 1
    cap_slots = t.n_slots + 16
    cdef int64_t* version = <int64_t*>malloc(cap_slots * sizeof(int64_t))
    cdef int64_t* same_as = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef uint8_t* read_in_place = <uint8_t*>calloc(max(n, 1), sizeof(uint8_t))
    cdef int64_t* key = <int64_t*>malloc(max(t.n_opnd, 1) * sizeof(int64_t))
    cdef int64_t* table = <int64_t*>malloc(table_size * sizeof(int64_t))
    if version == NULL or same_as == NULL or read_in_place == NULL or key == NULL or \
            table == NULL:
        free(version); free(same_as); free(read_in_place); free(key); free(table)
        raise MemoryError("adsim: no memory to optimise the tape")
    t.free_slots = {}                       # new slots go at the end, never into a freed one
    try:
        for i in range(t.n_slots):
            version[i] = UNWRITTEN + i
        for i in range(table_size):
            table[i] = -1
        for k in range(n):
            code = t.code[k]
            o = t.opnd + t.start[k]
            nops = operand_count(t, k)
            same_as[k] = -1
            # reads of a repeat go to the first result while it is in its slot
            # (not a QUADFORM's gradient slot, which it writes: its own)
            for i in range(1, nops):
                if not refers(code, i) or o[i] < 0 or code == QUADFORM and i == 3:
                    continue
                v = version[o[i]]
                c = same_as[v] if v < n and same_as[v] >= 0 else v
                if c != v:
                    src = slot_of(t, c)
                    if version[src] == c and src != o[0]:
                        o[i] = src
                        changed += 1
            if code == SCATTER and version[o[0]] < n:
                read_in_place[version[o[0]]] = 1
            if code == QUADFORM and version[o[3]] < n:      # it writes over that value
                read_in_place[version[o[3]]] = 1            # (its gradient): never moved
            # the op's key: its result size, then its operands as value ids
            # (refs: the first computation of the value), parameters as their
            # bits (each recorded op has its own), the rest as they are
            key[t.start[k]] = t.slot_size[o[0]] if o[0] >= 0 else -1
            for i in range(1, nops):
                if refers(code, i) and o[i] >= 0:
                    v = version[o[i]]
                    key[t.start[k] + i] = same_as[v] if v < n and same_as[v] >= 0 else v
                elif i == PARAM_OPERAND[code] and o[i] >= 0:     # the parameter's bits
                    memcpy(&key[t.start[k] + i], &t.consts[o[i]], sizeof(double))
                else:
                    key[t.start[k] + i] = o[i]
            if code == COPY and o[1] >= 0 and t.slot_size[o[1]] == t.slot_size[o[0]]:
                # a copy is the value it copies (a value that is no copy:
                # same_as holds none but such roots, so a reader's key names
                # the value it gets wherever it reads it). Never merged nor
                # moved: its readers that still read its slot are keyed by
                # the root, which a move would not redirect.
                same_as[k] = key[t.start[k] + 1]
            elif mergeable(t, code, o):
                h = <int64_t>(key_hash(code, key + t.start[k], nops) & <uint64_t>mask)
                while table[h] >= 0:
                    j = table[h]
                    if t.code[j] == code and operand_count(t, j) == nops and \
                            memcmp(key + t.start[j], key + t.start[k],
                                   nops * sizeof(int64_t)) == 0:
                        src = t.opnd[t.start[j]]
                        if version[src] != j and not read_in_place[j] and \
                                k - j <= MOVE_REACH and k - j <= scan_budget and \
                                t.slot_size[src] <= budget:
                            moved = t.new_slot(t.slot_size[src])     # j's result moves
                            budget -= t.slot_size[src]
                            scan_budget -= k - j
                            if moved >= cap_slots:
                                grown = <int64_t*>realloc(version, 2 * cap_slots * sizeof(int64_t))
                                if grown == NULL:
                                    raise MemoryError("adsim: no memory to optimise the tape")
                                version = grown
                                cap_slots = 2 * cap_slots
                            memset(t.val + t.slot_off[moved], 0,
                                   <size_t>t.slot_size[moved] * sizeof(double))
                            t.opnd[t.start[j]] = moved
                            version[moved] = j
                            for m in range(j + 1, k):
                                om = t.opnd + t.start[m]
                                for i in range(1, operand_count(t, m)):
                                    if refers(t.code[m], i) and om[i] >= 0 and \
                                            key[t.start[m] + i] == j:
                                        om[i] = moved
                                        changed += 1
                            src = moved
                        if version[src] == j:            # in its slot: k repeats it
                            same_as[k] = j
                        else:                            # gone: k takes its place
                            table[h] = k
                        break
                    h = (h + 1) & mask
                if table[h] < 0:
                    table[h] = k
            if o[0] >= 0:
                version[o[0]] = k
            if code == QUADFORM:            # its gradient slot holds no earlier value now
                version[o[3]] = k
        changed += output_from_copy(t, version, key)
    finally:
        free(version); free(same_as); free(read_in_place); free(key); free(table)
    return changed


cdef inline int slot_of(Tape t, int64_t value) noexcept:
    """The slot value id ``value`` was written to (an op's result, or a
    slot's content before any op wrote it)."""
    return <int>(value - UNWRITTEN) if value >= UNWRITTEN else t.opnd[t.start[value]]


cdef int64_t output_from_copy(Tape t, const int64_t* version, const int64_t* key) except -1:
    """When the output is a copy (``reshape``, ``ravel``) of a value still
    in its slot at the end, that slot becomes the output and the copy goes
    with the dead ops; 1 when it did. Not an input's slot: a values replay
    returns the output's array, which must not be the caller's input."""
    cdef int64_t k = version[t.out_slot], value
    cdef int src
    if not 0 <= k < t.n_ops or t.code[k] != COPY or t.opnd[t.start[k] + 1] < 0:
        return 0
    value = key[t.start[k] + 1]
    src = slot_of(t, value)
    if version[src] != value or src in t._input_slots or \
            t.slot_size[src] != t.slot_size[t.out_slot]:
        return 0
    t.out_slot = src
    return 1


cdef int64_t remove_dead(Tape t) except -1:
    """Keep the ops the output or an effect needs, moved down in place (step
    2 above); returns the number removed."""
    cdef int64_t n = t.n_ops, k, i, nops, kept = 0, w_opnd = 0, first
    cdef int code, r
    cdef const int32_t* o
    cdef uint8_t* needed = <uint8_t*>calloc(max(t.n_slots, 1), sizeof(uint8_t))
    cdef uint8_t* keep = <uint8_t*>malloc(max(n, 1) * sizeof(uint8_t))
    if needed == NULL or keep == NULL:
        free(needed); free(keep)
        raise MemoryError("adsim: no memory to optimise the tape")
    needed[t.out_slot] = 1
    for k in range(n - 1, -1, -1):
        code = t.code[k]
        o = t.opnd + t.start[k]
        r = o[0]
        keep[k] = has_effect(t, code, o) or (r >= 0 and needed[r])
        if not keep[k]:
            continue
        if r >= 0 and code != SCATTER:      # a SCATTER keeps (reads) the rest of its slot
            needed[r] = 0
        for i in range(1, operand_count(t, k)):
            if refers(code, i) and o[i] >= 0:
                needed[o[i]] = 1
    for k in range(n):
        if not keep[k]:
            continue
        first = t.start[k]
        nops = operand_count(t, k)          # (reads start[k + 1]: not yet moved)
        memmove(t.opnd + w_opnd, t.opnd + first, <size_t>nops * sizeof(int32_t))
        t.code[kept] = t.code[k]
        t.start[kept] = <int32_t>w_opnd
        kept += 1
        w_opnd += nops
    free(needed); free(keep)
    t.n_ops = kept
    t.n_opnd = w_opnd
    if kept < n:
        renumber_callbacks(t)
    return n - kept


cdef int renumber_callbacks(Tape t) except -1:
    """Drop the rules objects of removed CALLBACK ops: each remaining object
    is called by exactly one op, as tape files require."""
    cdef int64_t k
    cdef int32_t* o
    kept = []
    for k in range(t.n_ops):
        if t.code[k] == CALLBACK:
            o = t.opnd + t.start[k]
            kept.append(t._callbacks[o[1]])
            o[1] = len(kept) - 1
    t._callbacks = tuple(kept)
    return 0


cdef int derive_flags(Tape t) except -1:
    """The ops' flags as recording the kept ops alone would set them."""
    cdef int64_t k
    cdef int i
    memset(t.slot_state, 0, <size_t>t.n_slots)
    for i in range(len(t._input_slots)):
        t.slot_state[<int>t._input_slots[i]] = SLOT_PINNED | SLOT_WRITTEN | \
            (SLOT_VARIED if t._input_varied[i] else 0)
    t.slot_state[t.out_slot] |= SLOT_PINNED
    for k in range(t.n_ops):
        t.flags[k] = t.write_flags(t.code[k], t.opnd + t.start[k])
    return 0


cdef inline bint square_matvec(Tape t, int64_t j, int64_t* vector) noexcept:
    """Whether op j is C @ x or x @ C with a constant square C of at least 2 x 2
    and x in a slot; ``vector`` gets x's operand position (2 or 1)."""
    cdef const int32_t* o = t.opnd + t.start[j]
    if t.code[j] != MATMUL or o[4] < 2:
        return False
    if o[1] < 0 <= o[2] and o[3] == o[4] and o[5] == 1:
        vector[0] = 2
        return True
    if o[2] < 0 <= o[1] and o[3] == 1 and o[4] == o[5]:
        vector[0] = 1
        return True
    return False


cdef int64_t fuse_quadratic_forms(Tape t) except -1:
    """Step 3 above; returns the number of dots made QUADFORM. Their products
    then have no reader and go with the dead ops."""
    cdef int64_t n = t.n_ops, k, i, j, side, vec, made = 0
    cdef int code, facts, kk, g, xslot
    cdef int32_t* o
    cdef const int32_t* oj
    for k in range(n):                  # most tapes have no product: one cheap look
        if t.code[k] == MATMUL:
            break
    else:
        return 0
    cdef int64_t* version = <int64_t*>malloc(max(t.n_slots, 1) * sizeof(int64_t))
    cdef int64_t* readers = <int64_t*>calloc(n, sizeof(int64_t))
    cdef int64_t* read = <int64_t*>malloc(2 * n * sizeof(int64_t))    # MATMUL ops: a, b values
    if version == NULL or readers == NULL or read == NULL:
        free(version); free(readers); free(read)
        raise MemoryError("adsim: no memory to optimise the tape")
    try:
        for i in range(t.n_slots):
            version[i] = UNWRITTEN + i
        for k in range(n):          # who reads each op's result
            code = t.code[k]
            o = t.opnd + t.start[k]
            for i in range(1, operand_count(t, k)):
                if refers(code, i) and o[i] >= 0 and version[o[i]] < n:
                    readers[version[o[i]]] += 1
            if code == SCATTER and version[o[0]] < n:       # it keeps the rest of its slot
                readers[version[o[0]]] += 1
            if code == MATMUL:
                read[2 * k] = version[o[1]] if o[1] >= 0 else -1
                read[2 * k + 1] = version[o[2]] if o[2] >= 0 else -1
            if o[0] >= 0:
                version[o[0]] = k
            if code == QUADFORM:
                version[o[3]] = k
        if version[t.out_slot] < n:
            readers[version[t.out_slot]] += 1
        for k in range(n):
            o = t.opnd + t.start[k]
            if t.code[k] != MATMUL or o[3] != 1 or o[5] != 1 or o[4] < 2 or o[1] < 0 or o[2] < 0:
                continue
            for side in range(2):               # y @ x or x @ y
                j = read[2 * k + side]
                if not (0 <= j < k and readers[j] == 1 and square_matvec(t, j, &vec)):
                    continue
                oj = t.opnd + t.start[j]
                if read[2 * j + vec - 1] != read[2 * k + 1 - side] or oj[4] != o[4]:
                    continue                    # not the same x
                facts = matrix_facts(t.consts + t.const_off[-oj[3 - vec] - 1], oj[4])
                if not facts & 1:
                    continue
                kk = oj[4]
                g = t.new_slot(kk)
                memset(t.val + t.slot_off[g], 0, <size_t>kk * sizeof(double))
                xslot = o[2 - side]
                o[1] = oj[3 - vec]              # [r, c, x, g, k, form]
                o[2] = xslot
                o[3] = g
                o[4] = kk
                o[5] = (1 if vec == 1 else 0) | (2 if facts & 2 else 0)
                t.code[k] = QUADFORM
                readers[j] = 0
                made += 1
                break
    finally:
        free(version); free(readers); free(read)
    return made


cdef int check_gradient_slots(Tape t) except -1:
    """No op but its QUADFORM reads the gradient a QUADFORM op leaves in its
    slot g, and the output is no such slot: the op's own store, whose
    derivatives no sweep tracks (quadform_check in _ops/checks.pxi checks
    the rest). For programs given op by op (tape files, batched programs);
    the ones step 3 makes hold by construction."""
    cdef int64_t k, i
    cdef int code
    cdef const int32_t* o
    for k in range(t.n_ops):
        if t.code[k] == QUADFORM:
            break
    else:
        return 0
    held = set()
    for k in range(t.n_ops):
        code = t.code[k]
        o = t.opnd + t.start[k]
        for i in range(1, operand_count(t, k)):
            if refers(code, i) and o[i] in held and not (code == QUADFORM and i == 3):
                raise ValueError(f"adsim: op {k} ({OPCODE_NAMES.get(code, code)}) reads slot "
                                 f"{o[i]}, where a QUADFORM op keeps its gradient")
        if o[0] in held:
            if code == SCATTER:
                raise ValueError(f"adsim: op {k} (SCATTER) writes into slot {o[0]}, where a "
                                 f"QUADFORM op keeps its gradient")
            held.discard(o[0])
        if code == QUADFORM:
            held.add(o[3])
    if t.out_slot in held:
        raise ValueError(f"adsim: the output is slot {t.out_slot}, where a QUADFORM op keeps "
                         f"its gradient")
    return 0


cdef bint optimise_program(Tape t) except -1:
    """Steps 1 to 3 on a tape whose output is set; True when the program
    changed (its flags are then derived again, without ticks)."""
    cdef int64_t merged = merge_common(t)
    cdef int64_t fused = fuse_quadratic_forms(t)
    cdef int64_t removed = remove_dead(t)
    if merged or fused or removed:
        derive_flags(t)
    return merged > 0 or fused > 0 or removed > 0
