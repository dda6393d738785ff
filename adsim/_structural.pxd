# Declarations of adsim/_structural.pyx: the kernels of linear structural
# ops and of matrix products, called once per op by the sweeps.
from libc.stdint cimport int32_t

from ._opcodes cimport Sweep

cdef int structural_value(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int structural_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int structural_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil

cdef int linalg_value(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int linalg_value_tangent(Sweep* s, const int32_t* o) except -1 nogil
cdef int linalg_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int linalg_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int linalg_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil
