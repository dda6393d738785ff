# Declarations of adsim/_active.pyx: the Active array of the recording front end.
from libc.stdint cimport int32_t, int64_t, uint32_t

from ._tape cimport Tape


cdef class Active:
    cdef readonly Tape tape
    cdef int _slot
    cdef readonly tuple shape
    cdef readonly int64_t size
    cdef Active _base           # the root whose storage this view shares, or None
    cdef object _index          # positions in the root (root: all of them, made lazily)
    cdef int64_t _version       # root: writes so far; view: the root's version it holds
    cdef readonly bint _shared_scalar  # x[k] of a 1-d array: a NumPy scalar, immutable and shared
    cdef bint _layout_sensitive  # root: NumPy's reshape of it (or that made it) is a view or
                                 # a copy depending on its layout; writing it reads the layout
    cdef dict _elements         # 1-d: the scalars x[k] recorded from this slot's contents
    cdef int _elements_slot     # ... the slot and its write count they were recorded from
    cdef uint32_t _elements_writes

    cdef int ref(self) except -1
    cdef Active _gather_one(self, int32_t k)
