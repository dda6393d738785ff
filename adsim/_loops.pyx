# cython: language_level=3
"""Checkpointed loops in C: the executor that replays a loop's step tapes
along a schedule's actions (_schedules.pyx: binomial reversal, online
decisions, Python schedules as action sources): ``_loop_run.pxi``, with
the outputs saved at chosen steps, ``_loop_outputs.pxi``, the kept forward
sweeps of a while loop's first pass, ``_loop_kept.pxi``, a while loop's
forward pass in one release of the GIL, ``_loop_while.pxi``, and
reversals in one release too, ``_loop_reverse.pxi``.
adsim/checkpoint/driver.py sets them up.

The executor drives step tapes through the replay functions of _tape.pxd and
the sweeps of _sweeps.pxd; no other compiled module uses this one, so it has
no .pxd. Its Python surface is in _loops.pyi.
"""
cimport numpy as cnp
import numpy as np
from libc.stdint cimport int32_t, int64_t, intptr_t, uint8_t, INT64_MAX
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memset

from ._opcodes cimport *
from ._callback cimport VALUES, TANGENTS, ADJOINTS, SECOND_ORDER, copy_out
from ._sweeps cimport forward_sweep, reverse_sweep, check_signals
from ._tape cimport (Tape, Replay, Reversal, replay_setup, replay_setup_on, replay_teardown,
                     seed_tangents,
                     fused_start, reverse_replay, as_slot_array, is_float64_array)
from ._schedules cimport (Actions, OnlineDecisions, ACT_END, ACT_ADVANCE, ACT_TAKESHOT,
                          ACT_RESTORE, ACT_FIRSTTURN, ACT_YOUTURN)
from .errors import LoopDidNotStop

cnp.import_array()

include "_loop_outputs.pxi"
include "_loop_kept.pxi"
include "_loop_run.pxi"
include "_loop_while.pxi"
include "_loop_reverse.pxi"
