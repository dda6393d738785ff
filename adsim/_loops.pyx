# cython: language_level=3
"""Checkpointed loops (provisional)."""
cimport numpy as cnp
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memmove, memset

from ._opcodes cimport *
from ._callback cimport VALUES, TANGENTS, ADJOINTS, SECOND_ORDER, copy_out
from ._sweeps cimport forward_sweep, reverse_sweep, check_signals
from ._tape cimport (Tape, Replay, Reversal, replay_setup, replay_teardown, seed_tangents,
                     fused_start, reverse_replay, as_slot_array, is_float64_array)

cnp.import_array()

include "_schedule_actions.pxi"
include "_loop_outputs.pxi"
include "_loop_kept.pxi"
include "_loop_run.pxi"
