# cython: language_level=3
"""A recorded program as a whole: finishing a recording (``finish``), the
optimisation before replay (``_optimise.pxi``) and the program's buffers
out to and in from tape files (``_tapefile.pxi``).

Each edits or copies a whole program through the C fields and methods of
the Tape (adsim/_tape.pxd), which records and replays it; nothing here runs
a replay. adsim/tape.py's ``Tape.finish`` and the tape-file reader and
writer (adsim/tapefile.py, _tapefile_write.py) call it. Its Python surface
is in _program.pyi.
"""
cimport numpy as cnp
from cpython.number cimport PyNumber_Index
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memmove, memset, memcmp

from ._opcodes cimport *
from ._tape cimport (Tape, need_slot, operand_count, refers, matrix_facts, SLOT_PINNED,
                     SLOT_VARIED, SLOT_WRITTEN)

from ._opcodes import OPCODE_NAMES
from .errors import TapeOverflow

cnp.import_array()


def finish(Tape t, int64_t output_slot, tuple output_shape, bint optimise=True):
    """End the recording of ``t`` with ``output_slot`` as its output. From
    here on the program is read-only, and replays may run in any thread.
    ``optimise``: merge repeated ops and remove those the output does not
    need (_optimise.pxi; unless turned off for debugging)."""
    t.close_program(output_slot, output_shape)
    check_gradient_slots(t)
    if optimise and optimise_tapes:
        optimise_program(t)
    t.seal()


include "_optimise.pxi"
include "_tapefile.pxi"
