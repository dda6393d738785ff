# Declarations of adsim/_structural.pyx: the kernels of linear structural
# ops and of matrix products, called once per op by the sweeps.
from libc.stdint cimport int32_t, int64_t

from ._opcodes cimport Sweep, GATHER, SCATTER, vptr, aptr, dir_stride

cdef int structural_value(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int structural_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int structural_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil

cdef int linalg_value(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int linalg_value_tangent(Sweep* s, const int32_t* o) except -1 nogil
cdef int linalg_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int linalg_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int linalg_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil


# A GATHER or SCATTER of one element: scalar code reads and writes vectors
# element by element (x[0], the parts of np.stack). The sweeps run these
# inline before calling the kernels above (a call between modules would
# cost as much as the op); the kernels start with them too.

cdef inline int64_t single_element(Sweep* s, int code, const int32_t* o) noexcept nogil:
    """The element a GATHER of one element reads, or a SCATTER of one element
    writes (scalar code: x[0], the parts of np.stack); -1 for other ops,
    which take the general loops."""
    if code == GATHER and s.slot_size[o[0]] == 1:
        if o[4] == 0:
            return s.ints[o[2]]
        if o[5] <= 1:                    # one row of one element: start
            return o[3]
    elif code == SCATTER and o[3] == 1:
        if o[5] == 0:
            return s.ints[o[2]]
        if o[6] == 1:
            return o[4]
    return -1


cdef inline bint one_element_value(Sweep* s, int code, const int32_t* o) noexcept nogil:
    """The value of a one-element GATHER or SCATTER; False for other ops."""
    cdef int64_t one = single_element(s, code, o)
    if one < 0:
        return False
    if code == GATHER:
        vptr(s, o[0])[0] = vptr(s, o[1])[one]
    else:
        vptr(s, o[0])[one] = vptr(s, o[1])[0]
    return True


cdef inline bint one_element_adjoint(Sweep* s, int code, const int32_t* o) noexcept nogil:
    """The adjoint of a one-element GATHER or SCATTER; False for other ops."""
    cdef int64_t one = single_element(s, code, o)
    cdef double* ay
    cdef double* aa
    cdef int64_t ldy, lda, j
    if one < 0:
        return False
    ay = aptr(s, o[0])
    aa = aptr(s, o[1])
    ldy = dir_stride(s, o[0])
    lda = dir_stride(s, o[1])
    for j in range(s.q):
        if code == GATHER:
            if aa != NULL:
                aa[j * lda + one] += ay[j * ldy]
        else:
            if aa != NULL:
                aa[j * lda] += ay[j * ldy + one]
            ay[j * ldy + one] = 0.0
    return True
