# Declarations of adsim/_callback.pyx: the kernels of CALLBACK ops and the
# SweepContext their Python rules see.
from libc.stdint cimport int32_t, int64_t

from ._opcodes cimport Sweep

cdef enum:                          # what the work buffer holds, per slot: the layout of a
    RECORDING = -1                  # replay (_replay.pxi); RECORDING: the call made while recording
    VALUES = 0                      # nothing: a zero-order sweep
    TANGENTS = 1                    # p tangents
    ADJOINTS = 2                    # q adjoints, zero before the reverse sweep
    SECOND_ORDER = 3                # p tangents, one adjoint, p adjoint tangents


cdef class SweepContext:
    """What the rules of CALLBACK ops see of the replay running them (_ops/callback.pxi)."""
    cdef public int layout            # VALUES, TANGENTS, ADJOINTS or SECOND_ORDER
    cdef public int directions        # tangent or adjoint directions of the sweep
    cdef dict kept                    # what rules keep between the sweeps of one call

    cdef void begin(self, int layout, int directions)


cdef class CompiledRules:
    """The value and adjoint of a CALLBACK op computed in C on the sweep's
    arrays: an op whose rules object has one as ``compiled`` skips its Python
    ``value`` and ``adjoint`` (_ops/callback.pxi). Called with the GIL held."""
    cdef int value(self, Sweep* s, const int32_t* o) except -1
    cdef int adjoint(self, Sweep* s, const int32_t* o) except -1


cdef int callback_value(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int callback_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int callback_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int callback_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil

# a new (dirs, n) array (n if dirs is 0) holding src (the loop executor's outputs)
cdef object copy_out(const double* src, int64_t dirs, int64_t n)
