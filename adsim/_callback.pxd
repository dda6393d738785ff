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


# A CALLBACK op's rules in C, bound for one thread: the sweeps call them
# without the GIL (_ops/callback.pxi). ``rules`` are the rules' constants,
# owned by their CompiledRules object; ``scratch`` what the rules may write
# (a cache of factorisations), the calling thread's own.
ctypedef int (*compiled_rule)(const void* rules, void* scratch, Sweep* s,
                              const int32_t* o) except -1 nogil

ctypedef struct CompiledOp:
    compiled_rule value             # NULL: the op's rules are Python
    compiled_rule adjoint
    const void* rules               # the rules' constants
    void* scratch                   # the bound thread's scratch


cdef class SweepContext:
    """What the rules of CALLBACK ops see of the replay running them (_ops/callback.pxi),
    and the compiled rules of its tape's CALLBACK ops, bound to the thread running it."""
    cdef public int layout            # VALUES, TANGENTS, ADJOINTS or SECOND_ORDER
    cdef public int directions        # tangent or adjoint directions of the sweep
    cdef dict kept                    # what rules keep between the sweeps of one call
    cdef CompiledOp* compiled         # per callback of the tape: its rules in C, or NULL
    cdef int32_t n_compiled           # entries of compiled
    cdef int n_python                 # callbacks whose rules are Python
    cdef object bound_to              # the callbacks list compiled was made from
    cdef unsigned long bound_thread   # the thread whose scratch compiled holds
    cdef list owners                  # keeps the bound rules and scratch alive

    cdef int begin(self, Sweep* s, int layout, int directions) except -1
    cdef int bind(self, object callbacks) except -1
    cdef bint python_free(self) noexcept


cdef class CompiledRules:
    """The value and adjoint of a CALLBACK op computed in C on the sweep's
    arrays, without the GIL: an op whose rules object has one as
    ``compiled`` skips its Python ``value`` and ``adjoint``
    (_ops/callback.pxi). ``bind`` fills a CompiledOp for the calling thread
    (GIL held) and returns what must stay alive while it is used."""
    cdef object bind(self, CompiledOp* op)


cdef int callback_value(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int callback_tangent(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int callback_adjoint(Sweep* s, int code, const int32_t* o) except -1 nogil
cdef int callback_soadjoint(Sweep* s, int code, const int32_t* o) except -1 nogil

# a new (dirs, n) array (n if dirs is 0) holding src (the loop executor's outputs)
cdef object copy_out(const double* src, int64_t dirs, int64_t n)
