"""Where an active value came from, said in an error message: an input of
the recorded function, elements taken from one, or the recorded op that
computed it. Read from the tape being recorded, only when an error is
raised (a walk back over the ops, stopping at the value's origin)."""
import numpy as np

from .._decoder import decode_op
from .._opcodes import Opcode

# ops that only copy or move elements of their operand ``a``: followed back
_MOVES = frozenset({"COPY", "GATHER", "BROADCAST"})
_STEPS = 32             # moves followed at most


def _producer(tape, codes, slot, before):
    """The last op before ``before`` whose result is ``slot``, or None."""
    for k in range(before - 1, -1, -1):
        if tape.op_operands(k)[0] == slot:
            return k
    return None


def origin(x):
    """'input 0 of the recorded function', 'elements of input 1 ...',
    'the result of a recorded sin', or '' when not found."""
    tape, slot = x.tape, x.slot
    inputs = list(tape.input_slots)
    codes = tape.op_codes()
    k, moves = len(codes), []
    for _ in range(_STEPS):
        if slot in inputs:
            n = inputs.index(slot)
            which = f"input {n} of the recorded function"
            return _element(tape, moves, n, x.size) + which if moves else which
        k = _producer(tape, codes, slot, k)
        if k is None:
            return ""
        name = Opcode(int(codes[k])).name
        op = decode_op(int(codes[k]), tape.op_operands(k))
        if name not in _MOVES:
            return f"the result of a recorded {name.lower()} (op {k})"
        slot = op.a
        moves.append((name, op))
    return ""


def _element(tape, moves, n, size):
    """'element [i, j] of ' for one element gathered straight from input
    ``n``, else 'elements of '."""
    name, op = moves[-1]
    if size != 1 or len(moves) > 2 or name != "GATHER" or \
            any(m != "COPY" for m, _ in moves[:-1]):
        return "elements of "
    flat = int(tape.index_record(op.index_offset, 1)[0])
    shape = tape.input_shapes[n]
    index = ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) if shape else ""
    return f"element [{index}] of "
