"""Giving freed memory back to the system, so that resident memory follows
what a checkpointed loop holds.

A loop under ``memory_limit`` drops step variants and records new ones
while it runs; their buffers are a few hundred kB to a few MB each. The GNU
C library serves blocks of that size from its heap once a freed block of
that size has raised its mmap threshold, and a freed block in the middle of
the heap stays resident until ``malloc_trim`` returns its whole pages. The
holes left by dropped variants (and by the buffers a recording outgrows
while it doubles them) then add to resident memory without being counted
anywhere. :func:`release_free_memory` returns them after such a drop;
elsewhere (other C libraries return large blocks themselves) it does
nothing.
"""
import ctypes
import ctypes.util

__all__ = ["release_free_memory"]


def _find_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _find_trim()


def release_free_memory():
    """Return the whole free pages of the C heap to the system (glibc's
    ``malloc_trim(0)``; nothing elsewhere). Costs about a system call per
    free block with whole pages: call it after freeing megabytes, not per
    step."""
    if _TRIM is not None:
        _TRIM(0)
