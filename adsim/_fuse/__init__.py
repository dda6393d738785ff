"""Fused runs: a run of elementwise ops compiled into one loop.

The chunked sweeps (``adsim/_chunks.pxi``) find a tape's runs of
elementwise ops over large arrays and sweep them op by op, chunk by chunk.
Here a run becomes C, generated from its ops' rows (``codegen.py``), in which
every intermediate stays in a register; the system's C compiler builds it for
this processor into a shared library kept in a cache keyed by its text
(``compiler.py``); ``fuse.py`` hands the kernels to the tape, whose sweeps
then call them instead of interpreting the run. Without a compiler, or for a
run holding an op with no fused form, the interpreter stays.
"""
