# cython: language_level=3
"""Kernels of the linear structural ops (copies, broadcasts, sums, gathers,
scatters, selections: ``_ops/structural.pxi``) and of matrix products
(``_ops/linalg.pxi``, through BLAS and adsim/_matvec.h; products with sparse
matrices: ``_ops/sparse.pxi``; quadratic forms: ``_ops/quadform.pxi``).

_structural.pxd exposes their value, tangent and adjoint kernels
(``structural_*``, ``linalg_*``), which the sweeps (adsim/_sweeps.pyx) call
once per op: an op here moves or multiplies whole arrays, so the call
between modules costs little next to its work. The exception is scalar
code, which reads and writes vectors one element at a time: the one-element
GATHER and SCATTER are inline functions of _structural.pxd
(``one_element_value``, ``one_element_adjoint``), which the sweeps run
without a call. The elementwise kernels, which scalar code runs one element
per op, stay in _sweeps beside the sweep loop. Operands are checked when
recorded, by the Tape (``_ops/checks.pxi``).
"""
from libc.math cimport isfinite, isnan
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
cimport scipy.linalg.cython_blas as blas

from ._opcodes cimport *

# As in _sweeps.pyx: compiled without assuming that floating-point
# operations may trap, so GCC vectorises chain() (results are unchanged).
cdef extern from *:
    """
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC optimize ("no-trapping-math")
    #endif
    """
    pass

include "_ops/structural.pxi"
include "_ops/sparse.pxi"
include "_ops/linalg.pxi"
include "_ops/quadform.pxi"
