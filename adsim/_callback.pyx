# cython: language_level=3
"""Kernels of CALLBACK ops: user primitives and checkpointed loops, whose
rules are Python (one call per op and sweep, under the GIL), and rules
compiled in C (called without the GIL).

Owns ``SweepContext`` (what those rules see of the replay running them) and
the CALLBACK kernels (``_ops/callback.pxi``). _callback.pxd exposes
``SweepContext``, the replay layouts (``VALUES``, ``TANGENTS``,
``ADJOINTS``, ``SECOND_ORDER``, and ``RECORDING`` for the call made while
recording) and ``callback_value``/``_tangent``/``_adjoint``/``_soadjoint``,
which the sweeps (adsim/_sweeps.pyx) call once per CALLBACK op, and
``CompiledRules``: rules of a CALLBACK op in C, which those kernels call
without Python and without the GIL, bound per thread by the replay's
``SweepContext`` (the dense Newton solves of ``solve_ivp``,
``_ops/dense_newton.pxi``). Their
operands are checked when recorded, by the Tape (``_ops/checks.pxi``).
"""
cimport numpy as cnp
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset
from cpython.pythread cimport PyThread_get_thread_ident

from ._opcodes cimport Sweep, ref_size, vptr, tptr, aptr, dptr

cnp.import_array()

include "_ops/callback.pxi"
include "_ops/dense_newton.pxi"
