"""The one decoder of recorded programs: each op of a finished tape as a
named tuple whose fields are its operands, named as in its row of
adsim/ops.py (``result`` first).

Sparsity, higher-order transcription, the tape listing, tape files and the
tests read ops only through :func:`decode`, so an op's layout is written
once, in its row. A variadic op (CALLBACK) gathers its trailing operands in
one tuple field. The tuples still index by position (``op[1]`` is the first
operand after the result) for the variadic-free ops.
"""
from collections import namedtuple

from .ops import TABLE


def _layout(spec):
    names = ["result"] + [o.name for o in spec.operands]
    layout = namedtuple(spec.name.title().replace("_", ""), names)
    layout.spec = spec
    return layout


LAYOUTS = {spec.code: _layout(spec) for spec in TABLE}


def decode_op(code, operands):
    """The named tuple of one op from its opcode and its flat operand list."""
    layout = LAYOUTS[code]
    spec = layout.spec
    if spec.variadic:
        fixed = spec.n_operands
        return layout(*operands[:fixed], tuple(operands[fixed:]))
    if len(operands) != spec.n_operands:
        raise ValueError(f"adsim: a {spec.name} op with {len(operands)} operands; its layout "
                         f"has {spec.n_operands}")
    return layout(*operands)


def decode(tape):
    """(codes, ops): the opcode and the named tuple of every op of ``tape``."""
    codes = [int(c) for c in tape.op_codes()]
    return codes, [decode_op(code, tape.op_operands(k)) for k, code in enumerate(codes)]


def refs(op):
    """(name, ref) of the slot and constant operands an op reads, in order
    (variadic ones included); the result is not among them."""
    out = []
    for operand in op.spec.operands:
        if operand.is_ref:
            value = getattr(op, operand.name)
            out += [(operand.name, r) for r in value] if operand.variadic else \
                [(operand.name, value)]
    return out
