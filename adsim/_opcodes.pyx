# cython: language_level=3
"""The lowest layer of the compiled core: what every other module reads.

Owns the opcodes (``Opcode``, ``CompareKind``, ``OpFlag``: the generated
enum lives in _opcodes.pxd, so Python sees one class of each, this
module's), the per-op facts generated from the op table (``_ops/facts.pxi``:
the values each op's reverse rules read, constant slopes, ops without
derivative), and the growable C buffers and value stack (``_buffers.pxi``).

_opcodes.pxd exposes the enums, the ``Sweep`` and ``DStack`` structs every
kernel reads and writes, the fact arrays (``VALUE_USES``, ``CONSTANT_SLOPE``,
``NO_DERIVATIVE``, filled when this module is imported) with
``reads_args``/``reads_result``, the buffer functions, and inline helpers
compiled into each module that cimports them: the value-stack pushes and
pops, ``copy_doubles``/``zero_doubles``, the accessors of a sweep's arrays
(``vptr``, ``tptr``, ``aptr``, ``dptr``, ...) and ``chain``.

The layers above, bottom up: _callback and _structural (kernels of CALLBACK
ops, and of structural ops and matrix products), _sweeps (the sweeps, chunked
runs and elementwise kernels), _tape (the Tape, its checks and its replays),
_loops (checkpointed loops and their schedules) and _active (the recording
front end).
"""
from libc.stdlib cimport realloc
from libc.string cimport memset

include "_ops/facts.pxi"
include "_buffers.pxi"

OPCODE_NAMES = {int(op): op.name for op in Opcode if not op.name.endswith("_END")}


cdef bint reads_args(int code) noexcept nogil:
    return (VALUE_USES[code] & USES_ARGS) != 0


cdef bint reads_result(int code) noexcept nogil:
    return (VALUE_USES[code] & USES_RESULT) != 0
