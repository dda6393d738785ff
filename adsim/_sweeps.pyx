# cython: language_level=3
"""The sweeps: one pass over a program's ops, forward (values, tangents) or
reverse (adjoints, second-order adjoints), in C and without the GIL.

Owns the generic sweeps (``_sweeps.pxi``), the chunked sweeps over long runs
of elementwise ops (``_chunks.pxi``) and the elementwise kernels
(``_ops/unary.pxi``, ``_ops/binary.pxi``, ``_ops/branch.pxi``). Scalar code
runs one element per op, so these kernels stay in the module of the sweep
loop, where the compiler sees them; the kernels of structural ops, matrix
products (adsim/_structural.pyx) and CALLBACK ops (adsim/_callback.pyx)
move whole arrays or call Python, and are called across modules, once per
op (one-element gathers and scatters excepted: they are inline functions of
_structural.pxd). setup.py lets GCC inline more in this unit than it would
(its accessors of the sweep's arrays must stay inline).

_sweeps.pxd exposes what a replay (adsim/_tape.pyx) and the loop executor
(adsim/_loops.pyx) call: ``forward_sweep``, ``reverse_sweep`` (inline: they
pick one exported loop per kind of sweep, compiled with its flags constant),
``code_value``/``op_value`` (recording computes each op's value with the
replay's kernel), ``check_signals`` with the work units, and the run tables
(``runs_of``, ``run_into_output``, ``run_and_reverse``, the ``RUN_*``
fields). Operands are checked when recorded, by the Tape
(``_ops/checks.pxi``).
"""
from libc.math cimport (fabs, sqrt, cbrt, exp, exp2, expm1, log, log2, log10, log1p,
                        sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh,
                        asinh, acosh, atanh, hypot, pow, isfinite, isinf, floor, ceil, trunc,
                        rint, fmod, copysign)
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
import numpy as np

from ._opcodes cimport *
from ._callback cimport callback_value, callback_tangent, callback_adjoint, callback_soadjoint
from ._structural cimport (structural_value, structural_tangent, structural_adjoint,
                           one_element_value, one_element_adjoint, linalg_value,
                           linalg_value_tangent, linalg_tangent, linalg_adjoint,
                           linalg_soadjoint)

include "_sweeps.pxi"
include "_chunks.pxi"
include "_ops/unary.pxi"
include "_ops/binary.pxi"
include "_ops/branch.pxi"
